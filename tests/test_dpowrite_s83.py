"""DPO's pair in ``--write`` for a model trained with remove padding, and DPO configs beside ``--rollout-gpus`` (session
83). With dynamic batch sizes off in the actor's update (which ``--write`` keeps for DPO), verl cuts each GPU's
mini-batch into micro-batches of the actor's micro-batch size per GPU in rows, in order, and Trinity's DPO loss pairs
a micro-batch's rows: ``--write`` (and the fragment) writes the release's one pair (2; 1 for Trinity 0.5, which
doubles it), a note says that no one size fits both verl lines, and the plans stay at Trinity's default budget, a
pair's tokens (``--token-budget`` refused: the actor reads none). An odd size is ``dpo-pair-split``. A DPO config read
with ``--from-config`` refuses ``--rollout-gpus N`` as ``--dpo`` does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import in_train_mode
from test_release05b_s77 import DPO_DATASET_NOTE, _unwrapped
from test_tokbudget_s72 import ARR, CATALOG, Cli, _config
from test_trinity import vanilla_plan

from solver.api import answer_query, config_query
from solver.query import QueryError
from solver.trinity import patched_trinity_config, read_trinity_config, trinity_config_problems
from solver.trinity.plan_keys import keys_for_plan

ACTOR_SIZE = f"{ARR}.actor.ppo_micro_batch_size_per_gpu"
NOTE = ("solve: note: {name} trains DPO with dynamic batch sizes off in the actor's update, so what is made from it "
        f"writes {ACTOR_SIZE} 2, one pair, a chosen and a rejected sequence, as Trinity 0.6 on verl 0.8 or later "
        "needs; but no one size fits both verl lines: before verl 0.8 ({before}) Trinity doubles it to 4 sequences, "
        "two pairs, so there write 1{writer}\n")
SPLIT = (f"{ACTOR_SIZE} is {{size}} for DPO with dynamic batch sizes off: Trinity 0.6 on verl 0.8 or later does not "
         "double it, as Trinity on verl before 0.8 does, and Trinity's DPO loss takes a micro-batch's rows in pairs, a "
         "chosen and a rejected sequence: {split}; it runs, but is not DPO: on verl 0.8 or later set it to {even}, an "
         "even size (on verl before 0.8, Trinity doubles what is written)")
SPLIT_WORDS = {1: ("each micro-batch holds one sequence, so the loss finds no rejected one: it sums the empty half to "
                   "0 and trains every sequence, the rejected ones too, as a chosen one"),
               3: ("each micro-batch holds 3 sequences, which splits a pair over two micro-batches, and the loss takes "
                   "the next one's rows the other way round, its rejected sequences as chosen")}
UNREAD = ("solve: error: {option}: the config trains DPO with dynamic batch sizes off in the actor's update, which "
          "reads no token budget: each micro-batch holds one pair, a chosen and a rejected sequence, which the plans "
          "count at Trinity's default budget, ceil(2 x max_model_len / SP) tokens per GPU: leave --token-budget out\n")
ROLLOUT = ("solve: error: the config's algorithm.algorithm_type dpo with --rollout-gpus {n}: Trinity trains DPO on a "
           "dataset in mode train alone, with no explorer to use them (it refuses mode both): drop --rollout-gpus, or "
           "give 0\n")
PLAN = ("--gpu", "h100", "--gpus", "8")


def _dpo(size: int | None = 3, algorithm: str = "dpo", **trainer: Any) -> dict[str, Any]:
    """Qwen3-8B (trained with remove padding) at 8192 tokens on 8 trainer GPUs (`_config`: dynamic batch sizes off,
    a trainer budget of 12000), trained by `algorithm`, the actor's micro-batch size per GPU `size` (None: unset),
    with `trainer`'s keys over those; DPO in mode train, the one Trinity trains it on a dataset in."""
    config = _config({"actor": {} if size is None else {"ppo_micro_batch_size_per_gpu": size}})
    config["trainer"].update(trainer)
    config["algorithm"]["algorithm_type"] = algorithm
    config["buffer"]["train_batch_size"] = 64
    return in_train_mode(config) if algorithm == "dpo" else config


def _written(tmp_path: Path, cli: Cli, config: dict[str, Any], *options: str) -> tuple[int, str, dict[str, Any]]:
    """(exit status, stderr, the written copy read back) of ``--write`` on `config` with `options`."""
    path, out_path = tmp_path / "c.yaml", tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    status, _, err = cli("--from-config", str(path), *PLAN, "--write", str(out_path), *options)
    return status, err, yaml.safe_load(out_path.read_text(encoding="utf-8")) if status == 0 else {}


def _actor(written: dict[str, Any]) -> dict[str, Any]:
    """The written copy's actor section."""
    return written["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]


@pytest.mark.parametrize(("size", "version", "pair"), [(3, None, 2), (None, None, 2), (1, "0.6", 2), (4, "0.6", 2),
                                                       (3, "0.5", 1), (2, "0.5", 1)])
def test_write_sets_the_actors_pair_for_dpo_with_dynamic_batch_sizes_off(tmp_path: Path, cli: Cli, size: int | None,
                                                                         version: str | None, pair: int):
    options = ("--trinity-version", version) if version else ()
    status, err, written = _written(tmp_path, cli, _dpo(size), *options)
    assert status == 0
    assert (_actor(written)["ppo_micro_batch_size_per_gpu"], written["trainer"]["use_dynamic_bsz"]) == (pair, False)
    assert "dpo-pair-split" not in err and "takes a micro-batch's rows in pairs" not in err
    note = NOTE.format(name=tmp_path / "c.yaml", before="Trinity 0.6 on verl 0.7" if version else
                       "Trinity 0.5, 0.6 on verl 0.7", writer="" if version else " (--trinity-version 0.5 does)")
    assert (note in err) == (version != "0.5")
    # the plan counts one pair's tokens, Trinity's default: 2 x 8192 at SP 1, whatever the config's own 12000
    assert written["trainer"]["max_token_len_per_gpu"] == 16384


def test_the_pair_is_written_where_only_trinity_05_runs_the_actor_without_dynamic_batch_sizes(tmp_path: Path,
                                                                                              cli: Cli):
    # the trainer's on, the actor's own off: Trinity 0.5 reads the actor's; 0.6 sets it to the trainer's (on)
    config = _dpo(3, use_dynamic_bsz=True)
    config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["use_dynamic_bsz"] = False
    assert _actor(_written(tmp_path, cli, config, "--trinity-version", "0.5")[2])["ppo_micro_batch_size_per_gpu"] == 1
    # 0.6 runs it with the trainer's on, which --write now turns off (roles87), the pair with it
    assert _actor(_written(tmp_path, cli, config, "--trinity-version", "0.6")[2])["ppo_micro_batch_size_per_gpu"] == 2
    assert _actor(_written(tmp_path, cli, config)[2])["ppo_micro_batch_size_per_gpu"] == 2  # 0.5 may run it


@pytest.mark.parametrize(("algorithm", "dynamic"), [("dpo", True), ("dpo", None), ("grpo", False)])
def test_write_turns_dpos_dynamic_batch_sizes_off_as_the_plan_counts_its_pair(tmp_path: Path, cli: Cli,
                                                                              algorithm: str, dynamic: bool | None):
    config = _dpo(3, algorithm, use_dynamic_bsz=dynamic)
    if dynamic is None:
        del config["trainer"]["use_dynamic_bsz"]
    status, err, written = _written(tmp_path, cli, config)
    # Before (roles87): DPO with dynamic batch sizes on kept them, its pairs split (dpo-pair-dynamic, warned), and
    # the plan counted the config's 12000 tokens per GPU, which a copy set off reads no more. Now --write turns them
    # off with the actor's one pair and the plan counts the pair, Trinity's default 16384, as without a config;
    # GRPO's are turned back on, its budget kept.
    dpo = algorithm == "dpo"
    assert (status, _actor(written)["ppo_micro_batch_size_per_gpu"]) == (0, 2 if dpo else 3)
    assert written["trainer"]["use_dynamic_bsz"] is not dpo
    assert written["trainer"]["max_token_len_per_gpu"] == 16384 or not dpo
    assert ("writes " + ACTOR_SIZE in err, "for DPO: the actor's update then cuts" in err) == (dpo, False)


def test_the_fragment_of_a_dpo_config_keeps_its_dynamic_batch_sizes_off_and_holds_a_pair(tmp_path: Path, cli: Cli):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(_dpo(3)), encoding="utf-8")
    status, out, err = cli("--from-config", str(path), *PLAN, "--emit", "trinity")
    fragment = yaml.safe_load(out)
    # before s83 the fragment turned the trainer's back on: the plan counted no pair (Answer.dpo_pairs is None); it
    # now says off itself (roles87), as a DPO config's with them on
    assert (status, fragment["trainer"]["use_dynamic_bsz"]) == (0, False)
    assert _actor(fragment) == {"ppo_micro_batch_size_per_gpu": 2}
    assert ("# 2 for DPO: one pair, a chosen and a rejected sequence, as Trinity 0.6 on verl 0.8 or later\n"
            "        # trains it (with 1 its DPO loss finds no rejected sequence)") in out
    assert err.startswith(NOTE.format(name=path, before="Trinity 0.5, 0.6 on verl 0.7",
                                      writer=" (--trinity-version 0.5 does)"))


@pytest.mark.parametrize("size", [1, 3])
def test_check_says_an_odd_actor_size_splits_dpos_pairs(tmp_path: Path, cli: Cli, size: int):
    path, config = tmp_path / "c.yaml", _dpo(size)
    config["buffer"]["train_batch_size"] = 48  # 6 per GPU, which 1, 3 and their doubles divide: no mini-batch line
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    status, out, err = cli("--from-config", str(path), "--check", *PLAN, "--json")
    current = json.loads(out)[0]["current"]
    # 3 doubled before verl 0.8 is 6 sequences, past the verdict's budget: --check fails there (s87)
    assert (status, err) == (1 if "token-budget-above-verdict" in current["config_problem_codes"] else 0, "")
    said = dict(zip(current["config_problem_codes"], current["config_problems"], strict=True))
    assert said["dpo-pair-split"] == SPLIT.format(size=size, split=SPLIT_WORDS[size], even=size + 1)
    # Trinity 0.5 doubles it: whole pairs
    status, out, _ = cli("--from-config", str(path), "--check", *PLAN, "--json", "--trinity-version", "0.5")
    assert "dpo-pair-split" not in json.loads(out)[0]["current"]["config_problem_codes"]


@pytest.mark.parametrize("budget", ["8192", "auto", "32768"])
def test_a_token_budget_is_refused_for_a_dpo_config_whose_actor_reads_none(tmp_path: Path, cli: Cli, budget: str):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(_dpo(2)), encoding="utf-8")
    assert cli("--from-config", str(path), *PLAN, "--token-budget", budget) == (
        2, "", UNREAD.format(option=f"--token-budget {budget}"))
    assert cli("--from-config", str(path), *PLAN, "--token-budget", "default")[0] == 0
    # with dynamic batch sizes on the actor reads one, but --write turns them off (on, they split its pairs), so the
    # plans count the pair at the default as well: refused too (before, roles87: a cap of 8192 taken)
    path.write_text(yaml.safe_dump(_dpo(2, use_dynamic_bsz=True)), encoding="utf-8")
    assert cli("--from-config", str(path), *PLAN, "--token-budget", budget) == (2, "", UNREAD.format(
        option=f"--token-budget {budget}").replace(" with dynamic batch sizes off in the actor's update", (
            ", and what is made from it runs the actor's update with dynamic batch sizes off (on, they split its "
            "pairs)")))


def test_the_api_refuses_a_token_budget_and_rollout_gpus_beside_such_a_dpo_config():
    read = read_trinity_config(yaml.safe_dump(_dpo(2)), "c.yaml", {})
    assert read.dpo_update_in_rows
    with pytest.raises(QueryError, match=r"^token_budget=8192: the config trains DPO with dynamic batch sizes off in "
                                         r"the actor's update, which reads no token budget: .*: leave token_budget "
                                         "out$"):
        config_query(CATALOG, read, gpu="H100", token_budget=8192)
    with pytest.raises(QueryError, match=r"^the config's algorithm.algorithm_type dpo with rollout_gpus=2: Trinity "
                                         r"trains DPO on a dataset in mode train alone, .*: drop rollout_gpus, or "
                                         "give 0$"):
        config_query(CATALOG, read, gpu="H100", rollout_gpus=2)
    assert config_query(CATALOG, read, gpu="H100", rollout_gpus=0).dpo
    on = read_trinity_config(yaml.safe_dump(_dpo(2, use_dynamic_bsz=True)), "c.yaml", {})
    assert not on.dpo_update_in_rows
    with pytest.raises(QueryError, match=r"^token_budget=8192: the config trains DPO, and what is made from it runs "
                                         r"the actor's update with dynamic batch sizes off \(on, they split its "
                                         r"pairs\)"):
        config_query(CATALOG, on, gpu="H100", token_budget=8192)
    assert config_query(CATALOG, on, gpu="H100").token_budget_cap is None


@pytest.mark.parametrize("cluster", [True, False])
def test_a_dpo_config_refuses_rollout_gpus_as_dpo_does(tmp_path: Path, cli: Cli, cluster: bool):
    config = _dpo(2)
    if not cluster:  # no cluster: the config gives no GPUs, so no mismatch to refuse before s83
        del config["cluster"]
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    assert cli("--from-config", str(path), *PLAN, "--rollout-gpus", "2") == (2, "", ROLLOUT.format(n=2))
    assert cli("--from-config", str(path), *PLAN, "--rollout-gpus", "0")[0] == 0
    # as --dpo is refused: the same reason
    assert cli("--dpo", "--model", "8B", "--len", "8192", *PLAN, "--rollout-gpus", "2")[2] == (
        ROLLOUT.format(n=2).replace("the config's algorithm.algorithm_type dpo", "--dpo"))
    # GRPO's config (in Trinity's default mode, both) takes them where it gives no cluster
    config["algorithm"]["algorithm_type"] = "grpo"
    del config["mode"]
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    assert cli("--from-config", str(path), *PLAN, "--rollout-gpus", "2")[0] == (0 if not cluster else 2)


def test_write_leaves_a_dpo_configs_mode_both_and_warns_that_trinity_refuses_the_copy(tmp_path: Path, cli: Cli):
    # Before s90 no line said that Trinity refuses DPO in mode both (DPOAlgorithm.check_config, algorithm.py:291 in
    # 0.6.0): --check passed such a config, and --write's copy, which keeps its mode, with it. mode: train is a plan of
    # its own (the trainer takes the rollout's GPUs) and needs the dataset as the trainer's input, which the copy
    # cannot name: --write leaves the mode, and its warning on the copy says to set it.
    # (unset, Trinity's default, alike: test_algorelease_s82's test_sft_outside_mode_train_is_refused)
    config = {**_dpo(2), "mode": "both"}  # engine_num 0: no rollout engine, but mode both all the same
    status, err, written = _written(tmp_path, cli, config)
    assert (status, written["mode"]) == (0, "both")
    assert (f"solve: warning: {tmp_path / 'w.yaml'}: mode both: Trinity refuses algorithm_type dpo in mode both "
            "and explore as it loads the config (trinity/algorithm/algorithm.py:291 in 0.6.0, :248 in 0.5.0 to "
            "0.5.2): set mode: train, with the dataset as buffer.trainer_input.experience_buffer") in err


def test_the_plans_count_a_pair_where_a_lowered_budget_is_read_by_another_pass_alone(tmp_path: Path, cli: Cli):
    # Trinity 0.5: the actor's own key off (its pair in rows), the trainer's on with 8000, which the ref reads: the
    # plans stay at the default, 16384, a pair's tokens; GRPO's are capped (8192, the least at 8192 tokens)
    path = tmp_path / "c.yaml"
    for algorithm, budget in (("dpo", 16384), ("grpo", 8192)):
        config = _dpo(1, algorithm, use_dynamic_bsz=True, max_token_len_per_gpu=8000)
        config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["use_dynamic_bsz"] = False
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        status, out, _ = cli("--from-config", str(path), *PLAN, "--json", "--trinity-version", "0.5")
        assert (status, json.loads(out)[0]["plans"][0]["max_token_len_per_gpu"]) == (0, budget)


@pytest.mark.parametrize("version", [None, "0.5"])
def test_the_apis_patch_gives_the_pairs_note_for_a_model_trained_with_remove_padding(version: str | None):
    text = yaml.safe_dump(_dpo(3))
    query = config_query(CATALOG, read_trinity_config(text, "dpo.yaml", {}), gpu="H100")
    plan = answer_query(query, CATALOG)[0].best
    assert plan is not None
    patched = patched_trinity_config(text, plan, CATALOG.model("8B"), name="dpo.yaml", version=version)
    note = None if version else NOTE.format(name="dpo.yaml", before="Trinity 0.5, 0.6 on verl 0.7",
                                            writer=' (version="0.5" does)').removeprefix("solve: note: ")[:-1]
    assert patched.dpo_note == note
    assert _actor(yaml.safe_load(patched.text))["ppo_micro_batch_size_per_gpu"] == (1 if version else 2)


def test_an_unreadable_dynamic_batch_size_key_is_not_called_unset_for_dpo():
    # trainer.use_dynamic_bsz: ${oc.env:DYN} with DYN unset: the dpo-pair-dynamic line said it "is not set", beside the
    # verdict's "cannot be read here" (s87 lastread87)
    config = _dpo(2, use_dynamic_bsz="${oc.env:DYN}")
    (words,) = [problem.words for problem in trinity_config_problems(config, CATALOG.model("8B"), 8, environ={})
                if problem.code == "dpo-pair-dynamic"]
    assert words.startswith("trainer.use_dynamic_bsz is unreadable here, so may be true (Trinity's default) for DPO: ")


def test_write_sets_no_rollout_flag_for_dpo_its_recompute_runs_in_rows_of_one(tmp_path: Path, cli: Cli):
    # checks89 (mutants49's p1): Trinity 0.6's legacy trainer recomputes the old log-probs for DPO too where
    # bypass_mode is false (verl_legacy/verl_trainer.py:527-546, for every algorithm), at the rollout's flag and size;
    # --write writes the rollout's size 1 for DPO's rows, within the pair the verdict counts, so no flag is needed
    config = _dpo(2, use_dynamic_bsz=True)
    config["trainer"]["trainer_config"]["algorithm"] = {"rollout_correction": {"bypass_mode": False}}
    status, err, written = _written(tmp_path, cli, config)
    rollout = written["trainer"]["trainer_config"]["actor_rollout_ref"]["rollout"]
    assert (status, rollout) == (0, {"log_prob_micro_batch_size_per_gpu": 1}), err
    code, out, _ = cli("--from-config", str(tmp_path / "w.yaml"), *PLAN, "--check", "--json")
    current = json.loads(out)[0]["current"]
    assert (code, current["trains"], current["config_problem_codes"]) == (0, True, ["dpo-doubled-above-verdict"])


@pytest.mark.parametrize(("own", "written"), [(True, [(False, True)]), (0, []), (None, [(False, True)])])
def test_write_turns_the_actors_own_flag_off_for_dpo_only_where_it_is_on(own: Any, written: list[tuple[bool, bool]]):
    # mutants52: an actor's flag already off as Trinity reads it (0) was rewritten false; one unset is not added
    config = _dpo(2)
    if own is not None:
        config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["use_dynamic_bsz"] = own
    keys = keys_for_plan(vanilla_plan(), CATALOG.model("4B"), config)
    assert [(key.value, key.existing_only) for key in keys
            if key.path == (*ARR.split("."), "actor", "use_dynamic_bsz")] == written
    assert [key.value for key in keys if key.path == ("trainer", "use_dynamic_bsz")] == [False]


@pytest.mark.parametrize(("path", "noted"), [("/data/train.jsonl", False), ("", True)])
def test_the_dataset_note_is_said_only_where_the_config_names_no_dataset(tmp_path: Path, cli: Cli, path: str,
                                                                         noted: bool):
    # fewest91: a DPO config of mode both, its dataset's path set, planned with --rollout-gpus 0 (keys that write mode
    # train) said to set that path too; an empty one Trinity refuses as unset (trainer-input-missing), so it is said.
    config = {key: value for key, value in _dpo(2).items() if key != "mode"}
    config["buffer"]["trainer_input"]["experience_buffer"]["path"] = path
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    status, out, _ = cli("--from-config", str(tmp_path / "c.yaml"), *PLAN, "--rollout-gpus", "0", "--emit", "trinity")
    assert status == 0 and "\nmode: train  # Trinity trains DPO on a dataset in mode train alone" in out
    assert (DPO_DATASET_NOTE.removeprefix("# ") in _unwrapped(out)) is noted
