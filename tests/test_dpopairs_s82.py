"""DPO pairs under dynamic batch sizes, and DPO cluster jobs' rollout GPUs (session 82). With dynamic batch sizes on in
the actor's update, verl cuts each GPU's mini-batch into micro-batches balanced by sequence length, which splits a
pair's chosen and rejected sequences, while Trinity's DPO loss takes a micro-batch's even rows as chosen and its odd
ones as rejected: ``--check`` says so (``dpo-pair-dynamic``, a caution: it runs, but is not DPO) wherever the actor's
update may run with them on, and no longer tells a DPO config to turn the trainer's or actor's key back on
(``dynamic-batch-off``). A cluster job with ``dpo: true`` and ``rollout_gpus`` above 0 is refused: Trinity trains DPO
on a dataset in mode train alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import in_train_mode
from test_tokbudget_s72 import ARR, CATALOG, Cli, _config

import solver
from solver.query import REFUSED_CONFIG_CODES, ConfigProblemCode
from solver.trinity import trinity_config_problems

ACTOR_SIZE = f"{ARR}.actor.ppo_micro_batch_size_per_gpu"
API_DOES = " (solver.trinity.patch_trinity_config does)"
"""How the API's words say its patch turns DPO's dynamic batch sizes off (``--write``'s: `` (--write does)``)."""
DYNAMIC = ("{key} is {shown} for DPO: the actor's update then cuts each GPU's mini-batch into micro-batches balanced "
           "by sequence length (Trinity 0.5.2 trainer/verl/dp_actor.py:108-119 through its rearrange_micro_batches, "
           "trainer/verl/utils.py:308; 0.6.0 trainer/verl_legacy/dp_actor.py:486-497, and on verl 0.8 or later "
           "verl's prepare_micro_batches, workers/engine/utils.py:74-86 in verl 0.8.0, :108-120 in 0.9.0 and 0.9.1), "
           "which puts a pair's chosen and rejected sequences in different micro-batches wherever a mini-batch takes "
           "more than one, and Trinity's DPO loss takes a micro-batch's even rows as chosen and its odd ones as rejected "
           "(algorithm/policy_loss_fn/dpo_loss.py:30-33): it runs, but is not DPO: set trainer.use_dynamic_bsz to "
           f"false{API_DOES}, and for {ACTOR_SIZE} ")
# the actor's 2 is one pair on verl 0.8 or later already: only the size before 0.8 is said (dpoverl08, s85)
PAIR = {None: "set it to 1 before verl 0.8, which Trinity doubles to one pair (its 2 is one pair on verl 0.8 or later)",
        "0.5": "set it to 1, one pair, a chosen and a rejected sequence, once doubled"}
PAIR["0.6"] = PAIR[None]
UNSET = "not set, so true (Trinity's default)"


def _dpo(algorithm: str = "dpo", **trainer: Any) -> dict[str, Any]:
    """Qwen3-8B at 8192 tokens on 8 trainer GPUs (`_config`), trained by `algorithm`, with `trainer`'s keys (the
    trainer's dynamic batch sizes unset unless given), the actor's micro-batch size per GPU 2; DPO in mode train, the
    one Trinity trains it in."""
    config = _config({"actor": {"ppo_micro_batch_size_per_gpu": 2}})
    del config["trainer"]["use_dynamic_bsz"]
    config["trainer"].update(trainer)
    config["algorithm"]["algorithm_type"] = algorithm
    config["buffer"]["train_batch_size"] = 64
    return in_train_mode(config) if algorithm == "dpo" else config


def _lines(config: dict[str, Any], version: str | None, prefix: tuple[str, ...] = ("dpo", "dynamic")) -> list[tuple]:
    """(code, words) of `config`'s problems for Qwen3-8B on 8 trainer GPUs whose code starts with one of `prefix`."""
    found = trinity_config_problems(config, CATALOG.model("8B"), 8, version=version)  # type: ignore[arg-type]
    return [(problem.code.value, problem.words) for problem in found if problem.code.value.startswith(prefix)]


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_dpo_with_dynamic_batch_sizes_on_is_told_its_pairs_split(version: str | None):
    line = DYNAMIC.format(key="trainer.use_dynamic_bsz", shown=UNSET) + PAIR[version]
    assert _lines(_dpo(), version) == [("dpo-pair-dynamic", line)]
    said_true = DYNAMIC.format(key="trainer.use_dynamic_bsz", shown="true") + PAIR[version]
    assert _lines(_dpo(use_dynamic_bsz=True), version) == [("dpo-pair-dynamic", said_true)]
    assert ConfigProblemCode("dpo-pair-dynamic") not in REFUSED_CONFIG_CODES


def test_the_actors_own_key_is_named_where_trinity_05_reads_it():
    # trainer off, the actor's own on: Trinity 0.5 takes the actor's; Trinity 0.6 sets it to the trainer's (off)
    config = _dpo(use_dynamic_bsz=False)
    config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["use_dynamic_bsz"] = True
    actor_key = f"{ARR}.actor.use_dynamic_bsz"
    assert _lines(config, "0.5") == [("dpo-pair-dynamic", DYNAMIC.format(key=actor_key, shown="true") + PAIR["0.5"])]
    assert _lines(config, None) == [("dpo-pair-dynamic", DYNAMIC.format(key=actor_key, shown="true") + PAIR[None])]
    assert _lines(config, "0.6") == []


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_dpo_with_dynamic_batch_sizes_off_is_not_told_to_turn_them_back_on(version: str | None):
    # off keeps the actor's pairs whole: neither dpo-pair-dynamic nor dynamic-batch-off (size 2 is even: no split)
    assert _lines(_dpo(use_dynamic_bsz=False), version) == []
    # GRPO is still told to turn them on (the token budget the plan sets is read only with them)
    assert [code for code, _ in _lines(_dpo("grpo", use_dynamic_bsz=False), version)] == ["dynamic-batch-off"]
    assert _lines(_dpo("grpo"), version) == []
    # the ref's own key off is still said for DPO: its log-probs are restored to the batch's order, no pairs there
    config = _dpo(use_dynamic_bsz=False)
    config["trainer"]["trainer_config"]["actor_rollout_ref"]["ref"] = {"log_prob_use_dynamic_bsz": False}
    ref_off = f"{ARR}.ref.log_prob_use_dynamic_bsz is false"
    assert [words.split(":")[0] for _, words in _lines(config, version)] == [ref_off]


def test_check_says_it_for_a_dpo_config_and_exits_0(tmp_path: Path, cli: Cli):
    path = tmp_path / "dpo.yaml"
    path.write_text(yaml.safe_dump(_dpo()), encoding="utf-8")
    status, out, err = cli("--from-config", str(path), "--check", "--gpu", "h100", "--gpus", "8", "--json")
    assert (status, err) == (0, "")
    current = json.loads(out)[0]["current"]
    said = dict(zip(current["config_problem_codes"], current["config_problems"], strict=True))
    assert said["dpo-pair-dynamic"] == (DYNAMIC.format(key="trainer.use_dynamic_bsz", shown=UNSET)
                                        + PAIR[None]).replace(API_DOES, " (--write does)")


FLEET = """pools:
  - {{name: h100, gpu: h100, nodes: 1, gpus_per_node: 8}}
jobs:
  - {{name: pairs, model: Qwen3-4B, max_model_len: 8192, dpo: true{extra}}}
"""


def test_a_dpo_job_with_rollout_gpus_is_refused_in_one_line(tmp_path: Path, cli: Cli):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET.format(extra=", rollout_gpus: 2"), encoding="utf-8")
    assert cli("cluster", str(fleet)) == (2, "", (
        f"solve cluster: error: {fleet}: line 4: job pairs: dpo true with rollout_gpus 2: Trinity trains DPO on a "
        "dataset in mode train alone, with no explorer to use them (it refuses mode both): drop rollout_gpus, or "
        "give 0\n"))
    fleet.write_text(FLEET.format(extra=", rollout_gpus: 0"), encoding="utf-8")
    assert cli("cluster", str(fleet))[0] == 0
    with pytest.raises(ValueError, match=r"dpo true with rollout_gpus 1: Trinity trains DPO on a dataset in mode "
                       "train alone"):
        solver.Job(name="a", model="Qwen3-4B", max_model_len=8192, dpo=True, rollout_gpus=1)
    assert solver.Job(name="a", model="Qwen3-4B", max_model_len=8192, rollout_gpus=1).rollout_gpus == 1


@pytest.mark.parametrize(("algorithm", "written"), [("dpo", False), ("grpo", True)])
def test_write_leaves_a_dpo_configs_dynamic_batch_sizes_off(tmp_path: Path, cli: Cli, algorithm: str, written: bool):
    config = _dpo(algorithm, use_dynamic_bsz=False)
    config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["use_dynamic_bsz"] = False
    path, out_path = tmp_path / "c.yaml", tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    status, _, err = cli("--from-config", str(path), "--gpu", "h100", "--gpus", "8", "--write", str(out_path))
    assert status == 0
    trainer = yaml.safe_load(out_path.read_text(encoding="utf-8"))["trainer"]
    actor = trainer["trainer_config"]["actor_rollout_ref"]["actor"]
    assert (trainer["use_dynamic_bsz"], actor["use_dynamic_bsz"]) == (written, written)
    # off, DPO's written copy is told nothing of its pairs; GRPO's is told nothing of DPO
    assert "for DPO: the actor's update then cuts" not in err

