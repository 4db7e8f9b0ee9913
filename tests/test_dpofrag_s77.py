"""DPO's pair, read one way (session 77). An interpolated ``algorithm_type`` is read in this shell's environment by the
plans (`Query.dpo`) and by all that is made for them: the fragment (``--emit``, ``--json``'s ``apply``, the API's
``trinity_settings``) writes the pair the plans counted (``Answer.dpo_pairs``), as ``--write`` and the apply lines do;
the API's patch gives ``--write``'s note as data (``PatchedConfig.dpo_note``); the check says what DPO's actor size 2
means on each verl line (``dpo-pair-doubled``); ``--explain`` words a pair; ``--dpo`` counts one without a config."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_dpomicro_s76 import ACTOR_SIZE, NOTE, _dpo, example_with_algorithm
from test_ownbudget_s72 import _problems
from test_padbound_s71 import INTERNLM2, Cli
from test_review76_s76 import _actor_size, _interpolated

import solver
from solver.api import answer_query, config_query
from solver.query import make_query
from solver.tables import load_catalog
from solver.tables.model_config import load_model_config
from solver.trinity import patched_config_problems, patched_trinity_config, read_trinity_config
from solver.trinity.checks import trinity_config_problems
from solver.trinity.reader import load_config_mapping

COMMON = ("--model-config", str(INTERNLM2), "--gpu", "h100")
DOUBLED = (f"{ACTOR_SIZE} is 2 for DPO with dynamic batch sizes off: one pair, a chosen and a rejected sequence, on "
           "Trinity 0.6 with verl 0.8 or later; but {before} doubles it to 4 sequences, two pairs, padded to the "
           "longest, which the token budget does not bound: there set it to 1 (Trinity 0.6 takes the verl line of the "
           "verl installed beside it: pip show verl)")


def _json_actor(answer: dict) -> int:
    return int(answer["apply"]["config"]["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"][
        "ppo_micro_batch_size_per_gpu"])


@pytest.mark.parametrize(("default", "algo", "size"), [("grpo", "dpo", 2), ("dpo", "grpo", 1)])
def test_the_fragment_reads_an_interpolated_algorithm_as_the_plans_do(cli: Cli, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      default: str, algo: str, size: int):
    """``algorithm_type: ${oc.env:ALGO,<default>}`` with ALGO set: the plans count a pair where ALGO is dpo, and the
    fragment and ``--json``'s apply write the actor's size for what they counted (they read the default before)."""
    monkeypatch.setenv("ALGO", algo)
    given = _interpolated(tmp_path, default)
    status, out, err = cli("--from-config", str(given), *COMMON, "--emit", "trinity")
    note = NOTE.format(path=given, before="Trinity 0.5, 0.6 on verl 0.7", option=" (--trinity-version 0.5 does)")
    assert (status, _actor_size(out), note in err.splitlines()) == (0, size, size == 2)
    status, out, _ = cli("--from-config", str(given), *COMMON, "--json")
    answer = json.loads(out)[0]
    assert (status, answer.get("dpo_pairs"), _json_actor(answer)) == (0, True if size == 2 else None, size)


def test_the_apis_fragment_of_a_dpo_answer_writes_the_pair():
    """`solver.trinity_settings` and `solver.trinity_config` of an answer that counted a pair write the actor's 2 (they
    wrote 1: no config given)."""
    model = load_model_config(INTERNLM2)
    catalog = load_catalog().with_model(model)
    query = make_query(catalog, model=model.name, gpu="h100", max_model_len=32768, budget_gpus=8)
    sizes = []
    for dpo in (False, True):
        answer = answer_query(query.model_copy(update={"dpo": dpo}), catalog)[0]
        actor = solver.trinity_settings(answer, catalog).config["trainer"]["trainer_config"]["actor_rollout_ref"]
        sizes.append((answer.dpo_pairs, actor["actor"]["ppo_micro_batch_size_per_gpu"],
                      _actor_size(solver.trinity_config(answer, catalog))))
    assert sizes == [(None, 1, 1), (True, 2, 2)]


@pytest.mark.parametrize(("algorithm", "version", "before"), [
    ("dpo", None, "Trinity 0.5, 0.6 on verl 0.7"), ("dpo", "0.6", "Trinity 0.6 on verl 0.7"), ("dpo", "0.5", None),
    ("grpo", None, None)])
def test_the_apis_patch_gives_writes_note_as_data(tmp_path: Path, algorithm: str, version: str | None,
                                                  before: str | None):
    """`PatchedConfig.dpo_note`: the note ``--write`` prints, in the API's words; its problems leave out the check's
    ``dpo-pair-doubled`` line, which the note says."""
    model = load_model_config(INTERNLM2)
    catalog = load_catalog().with_model(model)
    text = example_with_algorithm(tmp_path, algorithm).read_text()
    query = config_query(catalog, read_trinity_config(text, "dpo.yaml", {}), model=model.name, gpu="h100")
    plan = answer_query(query, catalog)[0].best
    assert plan is not None
    patched = patched_trinity_config(text, plan, model, name="dpo.yaml", version=version)
    note = None if before is None else NOTE.format(
        path="dpo.yaml", before=before, option="" if version else ' (version="0.5" does)').removeprefix("solve: note: ")
    checked = trinity_config_problems(load_config_mapping(patched.text, "dpo.yaml"), model, plan.gpus, version=version)
    assert (patched.dpo_note, _actor_size(patched.text), [problem.code.value for problem in checked]) == (
        note, 2 if note else 1, ["dpo-pair-doubled"] if note else [])
    assert patched_config_problems(text, patched, plan, model, name="dpo.yaml", version=version) == []


@pytest.mark.parametrize(("version", "before"), [
    (None, "Trinity 0.5, and 0.6 on verl before 0.8,"), ("0.6", "Trinity 0.6 on verl before 0.8")])
def test_dpos_actor_size_2_is_told_what_it_holds_on_each_verl_line(version: str | None, before: str):
    assert _problems(_dpo(2, version), version) == [("dpo-pair-doubled", DOUBLED.format(before=before))]


def test_check_of_a_written_dpo_config_says_what_2_means(cli: Cli, tmp_path: Path):
    """``--check`` of the copy ``--write`` wrote for DPO, with no --trinity-version: a ``but:`` line (it said
    nothing), which refuses nothing: the unset train batch does (exit 1)."""
    written = tmp_path / "written.yaml"
    given = example_with_algorithm(tmp_path, "dpo")
    assert cli("--from-config", str(given), *COMMON, "--write", str(written))[0] == 0
    status, out, _ = cli("--from-config", str(written), *COMMON, "--check", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["config_problem_codes"], current["config_problems"][0], current["refused"]) == (
        1, ["dpo-pair-doubled", "train-batch-required"],
        DOUBLED.format(before="Trinity 0.5, and 0.6 on verl before 0.8,"), True)


def test_the_apply_lines_write_dpos_pair_as_the_fragment_does(cli: Cli, tmp_path: Path):
    status, out, _ = cli("--from-config", str(example_with_algorithm(tmp_path, "dpo")), *COMMON)
    lines = out.splitlines()
    at = lines.index("trainer.use_dynamic_bsz: false")
    assert (status, lines[at + 1:at + 3]) == (0, [(
        "# DPO's actor: one pair, a chosen and a rejected sequence, on verl 0.8 or later (before 0.8 Trinity doubles "
        "it: write 1 there)"), f"{ACTOR_SIZE}: 2"])


@pytest.mark.parametrize(("version", "actor"), [("0.6", 2), ("0.5", 1)])
def test_the_apply_lines_of_dpo_on_qwen3_turn_dynamic_batch_sizes_off_as_the_fragment_does(
        cli: Cli, version: str, actor: int):
    """``--dpo`` on a model of unpadded micro-batches (Qwen3): the apply lines, what a user pastes, hold the keys that
    keep DPO's pairs whole, which the fragment and --write set (Trinity's default, on, would split them)."""
    flags = ("--model", "4B", "--gpu", "h20", "--len", "16384", "--gpus", "2", "--dpo", "--trinity-version", version)
    status, out, _ = cli(*flags)
    lines = out.splitlines()
    at = lines.index("trainer.use_dynamic_bsz: false")
    assert (status, [line for line in lines[at + 1:lines.index("", at)] if not line.startswith("#")]) == (0, [
        f"{ACTOR_SIZE}: {actor}", f"{ACTOR_SIZE.replace('actor.ppo', 'ref.log_prob')}: 1",
        f"{ACTOR_SIZE.replace('actor.ppo', 'rollout.log_prob')}: 1"])


def test_explain_words_the_pair_it_counts(cli: Cli):
    """``--explain``'s shorter-length and no-count reasons say what a padded DPO micro-batch holds: a pair."""
    words = {}
    for flags in ((), ("--dpo",)):
        status, out, _ = cli(*COMMON, "--len", "200000", "--gpus", "2", "--explain", "--json", *flags)
        reasons = {reason["rule"]: reason["detail"] for reason in json.loads(out)[0]["explanation"]}
        found = re.findall(r"(?:which is|200000 tokens,) (one [^(]+?) per micro-batch \(dynamic",
                           f"{reasons['fewer_tokens']} {reasons['more_gpus']}")
        words[flags] = (status, found)
    assert words == {(): (1, ["one sequence", "one sequence"]), ("--dpo",): (1, ["one DPO pair", "one DPO pair"])}


def test_dpo_without_a_config_counts_the_pair_and_writes_it(cli: Cli):
    """``--dpo``: the plans made without a config count DPO's pair (``dpo_pairs``), and the fragment writes it."""
    found = {}
    for flags in ((), ("--dpo",)):
        status, out, _ = cli(*COMMON, "--len", "32768", "--gpus", "8", "--json", *flags)
        answer = json.loads(out)[0]
        plan = answer["plans"][0]
        found[flags] = (status, answer.get("dpo_pairs"), plan["offload"], plan["memory_gb"], _json_actor(answer))
    assert found == {(): (0, None, False, 46.75, 1), ("--dpo",): (0, True, True, 60.14, 2)}


def test_dpo_beside_a_config_is_refused(cli: Cli, tmp_path: Path):
    status, out, err = cli("--from-config", str(example_with_algorithm(tmp_path, "grpo")), *COMMON, "--dpo")
    assert (status, out, err) == (2, "", (
        "solve: error: --from-config's algorithm.algorithm_type says whether the run trains DPO (dpo): drop --dpo\n"))


def test_a_dpo_plan_restated_at_its_own_budget_keeps_the_pairs_words():
    """`at_token_budget` (a config's verdict at its own budget, a cluster's plans restated at its margin) words the
    padded model's caution for the query's DPO pair, as the plan does: it said "that sequence", half what it counts."""
    from solver.solve import at_token_budget

    model = load_model_config(INTERNLM2)
    catalog = load_catalog().with_model(model)
    query = make_query(catalog, model=model.name, gpu="h100", max_model_len=32768, budget_gpus=8, dpo=True)
    answer = answer_query(query, catalog)[0]
    plan = answer.best
    assert plan is not None and any("the DPO pair" in caution for caution in plan.cautions)
    assert at_token_budget(catalog, query, answer.gpu, plan, plan.max_token_len_per_gpu).cautions == plan.cautions


def test_writes_dpo_batch_words_agree_with_the_plans_rule(cli: Cli, tmp_path: Path):
    """A DPO config's batch of 48 on 8 trainer GPUs (SP 1) splits in pairs over the ranks (16), as the plan keeps it:
    ``--write`` writes the actor's 2 (verl 0.8 or later) and its note says to write 1 before 0.8, which Trinity doubles
    to a pair; so it warns of nothing on the batch (it said to make it a multiple of 32, the 2 doubled to 4, the size
    the note rules out). The written file's check judges the 2 as written, doubled before verl 0.8: it says so."""
    given = example_with_algorithm(tmp_path, "dpo")
    text = given.read_text().replace("gpu_per_node: 6", "gpu_per_node: 8").replace(
        "batch_size: 96", "batch_size: 96\n  train_batch_size: 48")
    text = text.replace("max_model_len: 32768", "max_model_len: 8192")
    given.write_text(text.replace("max_response_tokens: 30720", "max_response_tokens: 6144"))
    written = tmp_path / "written.yaml"
    status, _, err = cli("--from-config", str(given), "--gpu", "A100-80GB", "--write", str(written))
    assert status == 0 and "ppo_micro_batch_size_per_gpu 2, one pair" in err and "so there write 1" in err
    assert "warning" not in err and _actor_size(written.read_text()) == 2
    status, out, _ = cli("--from-config", str(written), "--gpu", "A100-80GB", "--check", "--json")
    assert json.loads(out)[0]["current"]["config_problem_codes"] == ["dpo-mini-batch-split",
                                                                     "dpo-doubled-above-verdict"]


def test_a_dpo_answers_plan_for_another_batch_words_its_cautions_for_the_pair():
    """The plan a batch of its own gets (`Answer.other_batch`, 8 GPUs where 6 keeps 3) words the padded model's caution
    for the query's DPO pair, as the best plan does (mutants57: other_batch's cautions were worded without it)."""
    model = load_model_config(INTERNLM2)
    catalog = load_catalog().with_model(model)
    query = make_query(catalog, model=model.name, gpu="h100", max_model_len=32768, budget_gpus=8, dpo=True,
                       train_batch_size=6)
    answer = answer_query(query, catalog)[0]
    assert answer.best is not None and answer.other_batch is not None
    assert (answer.best.gpus, answer.other_batch.gpus) == (3, 8)
    assert any("the DPO pair" in caution for caution in answer.other_batch.cautions)
