"""Session 67, mutants11: tests that kill mutants of session 67's first merges which their tests let live (the table
is in /work/keep/review-s67-mutants11-table.md): --check's count of 0 and of 1 GPU a node, ``true`` for vLLM's
long-length variable, the rollout model's RoPE scaling (its ``type`` unresolved, its type ``???``, one in place of a
model's own, a factor whose length is no whole number), a model's length with no rollout keys of its own; a path
ending in NUL, a tab's column, a config.json whose YAML reading fails (a date past its month's end), a --no-env pin
whose estimate ranks cheaper than an estimate, one's own GPU type named PCIe over NVLink, a one-dash typo; and the
question without the pins: unproven, undecided, and not an exact count's fewer GPUs question."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from command_words import make_query
from test_pincost_s66 import _row

from solver.query import Query
from solver.solve import _Asked, _Nearby, _unpinned_first, answer_for
from solver.tables import QueryError, given_path, load_catalog
from solver.trinity import trinity_config_problems
from solver.trinity.keys import ConfigError
from solver.trinity.reader import load_config_mapping

Cli = Callable[..., tuple[int, str, str]]
CATALOG = load_catalog()

QWEN = {"model_path": "Qwen/Qwen3-8B"}
YARN = {"rope_type": "yarn", "factor": 1.2, "original_max_position_embeddings": 40960}
LONG = "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set before Ray starts; set it (and check that the model handles this length)"
DIFFERS = ("rollout-rope-scaling-differs", (
    "explorer.rollout_model.rope_scaling ({'factor': 1.2, 'original_max_position_embeddings': 40960...) is not what "
    "the trainer takes (no model.rope_scaling): the rollout's vLLM samples at other positions than the trainer trains "
    "at; remove it (Trinity gives the rollout model.rope_scaling)"))


def _problems(mapping: dict[str, Any], model: str = "8B", gpus: int = 8,
              environ: dict[str, str] | None = None) -> list[tuple[str, str]]:
    problems = trinity_config_problems(mapping, CATALOG.model(model), gpus, environ=environ)
    return [(problem.code.value, problem.words) for problem in problems]


@pytest.mark.parametrize("count", [0, "0"])
def test_a_node_of_no_gpus_is_out_of_range_not_a_wrong_type(count: Any) -> None:
    # 0 is a whole number OmegaConf's int field takes: the range is what is wrong
    assert _problems({"model": QWEN, "cluster": {"gpu_per_node": count}}) == [
        ("value-out-of-range", "cluster.gpu_per_node must be a whole number of at least 1, got 0")]


def test_a_node_of_one_gpu_is_in_range() -> None:
    assert _problems({"model": QWEN, "cluster": {"gpu_per_node": 1}}, gpus=1) == []


@pytest.mark.parametrize("allowed", ["true", " TRUE ", "1 "])
def test_vllms_long_length_variable_set_to_true_in_any_case_lets_the_rollout_take_its_length(allowed: str) -> None:
    environ = {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": allowed}
    own = {"model": {**QWEN, "max_model_len": 32768}, "explorer": {"rollout_model": {"max_model_len": 65536}}}
    assert _problems(own, environ=environ) == []
    assert [code for code, _ in _problems({"model": {**QWEN, "max_model_len": 65536}}, environ=environ)] == [
        "rope-scaling-missing"]  # not refused: vLLM takes the length


def test_a_models_length_without_rollout_keys_of_its_own_is_said_once_by_the_models_line() -> None:
    assert [code for code, _ in _problems({"model": {**QWEN, "max_model_len": 65536}})] == [
        "rope-scaling-missing-refused"]


def test_a_rollout_rope_scalings_legacy_type_that_cannot_resolve_is_refused() -> None:
    rope = {**YARN, "type": "${nothing.here}"}
    mapping = {"model": {**QWEN, "max_model_len": 32768},
               "explorer": {"rollout_model": {"max_model_len": 45000, "rope_scaling": rope}}}
    assert _problems(mapping) == [DIFFERS, (
        "unresolved-value-refused", ("explorer.rollout_model.rope_scaling.type: cannot resolve '${nothing.here}': the "
                                     "config has no nothing; every Trinity release refuses the config as it loads it "
                                     "(OmegaConf resolves each value then)"))]


def test_a_rollout_rope_scaling_whose_type_is_missing_judges_no_length() -> None:
    mapping = {"model": {**QWEN, "max_model_len": 65536},
               "explorer": {"rollout_model": {"rope_scaling": {**YARN, "rope_type": "???"}}}}
    assert [code for code, _ in _problems(mapping)] == ["rope-scaling-missing", "unresolved-value-refused"]


def test_a_rollout_rope_scaling_in_place_of_the_models_own_says_so() -> None:
    rope = {"rope_type": "yarn", "factor": 1.2, "original_max_position_embeddings": 131072}
    mapping = {"model": {"model_path": "meta-llama/Llama-3.1-8B", "max_model_len": 8192},
               "explorer": {"rollout_model": {"max_model_len": 200000, "rope_scaling": rope}}}
    assert _problems(mapping, model="llama3.1-8b")[1] == (
        "rollout-length-refused", ("explorer.rollout_model.max_model_len 200000 is beyond the 157286.4 that the "
                                   "rollout's vLLM derives from the explorer.rollout_model.rope_scaling given as its "
                                   "longest length, which it takes in place of Llama-3.1-8B's own llama3: the "
                                   f"rollout's vLLM refuses it unless {LONG}, or lower "
                                   "explorer.rollout_model.max_model_len to 157286"))


def test_a_longest_length_that_is_no_whole_number_is_lowered_to_the_whole_number_below() -> None:
    mapping = {"model": {**QWEN, "max_model_len": 32768},
               "explorer": {"rollout_model": {"max_model_len": 65536, "rope_scaling": {**YARN, "factor": 1.23}}}}
    assert _problems(mapping)[1] == (
        "rollout-length-refused", ("explorer.rollout_model.max_model_len 65536 is beyond the 50380.8 that the "
                                   "rollout's vLLM derives from the explorer.rollout_model.rope_scaling given as its "
                                   f"longest length: the rollout's vLLM refuses it unless {LONG}, or lower "
                                   "explorer.rollout_model.max_model_len to 50380"))


def test_a_path_ending_in_a_nul_character_is_refused_in_one_line() -> None:
    with pytest.raises(QueryError) as caught:
        given_path("cells", "cells.yaml\0")
    assert str(caught.value) == ("cells must be a path the file system can name, got 'cells.yaml\\x00': a NUL "
                                 "character, which no file name holds")


@pytest.mark.parametrize(("text", "column"), [("model: \tx\n", 8), ("a: [1,\t2]\n", 7)])
def test_a_tab_after_a_colon_or_comma_is_named_at_its_column_from_1(text: str, column: int) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config_mapping(text, "trinity.yaml")
    assert str(caught.value) == (f"trinity.yaml: line 1: a tab (column {column}) where the YAML reader takes only "
                                 "spaces; use spaces")


def test_a_config_json_whose_yaml_reading_fails_on_a_value_is_refused_as_not_json(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text("hidden_size: 2001-02-30\n", encoding="utf-8")  # YAML reads a date, past February's end
    assert cli("--model-config", str(path), "--gpu", "h100", "--len", "8k") == (
        2, "", f"solve: error: --model-config {path}: not JSON: Expecting value (line 1)\n")


def test_a_no_env_pin_whose_estimate_ranks_cheaper_than_an_estimate_costs_no_step_time(cli: Cli) -> None:
    # both plans estimated (no table speaks for an MI300X): no 'but this plan is estimated'
    status, out, _ = cli("--model", "Qwen3-8B", "--gpu", "MI300X", "--len", "32k", "--minimize", "gpus", "--no-env")
    assert (status, _row(out, "unpinned")) == (0, [(
        "without --no-env, the best plan is Env + Offload on 1 GPU, cost 2.02 (estimated, extrapolated): the pin costs "
        "no relative step time (0.99x)")])


def test_no_pcie_note_for_a_gpu_type_of_ones_own_named_pcie_over_nvlink(cli: Cli) -> None:
    # its name says PCIe, and the user said how its GPUs reach one another: nothing to tell
    assert cli("--model", "8B", "--gpu", "my-h100-pcie", "--gpu-memory", "81559MiB", "--gpu-interconnect", "nvlink",
               "--gpus", "4", "--len", "8k")[::2] == (0, "")


def test_an_unproven_answer_without_the_pins_is_not_taken_for_the_pinned_one() -> None:
    # the question without the pins, answered 'feasible' (a time limit left it unproven) with a plan that has the pin
    # but is not the pinned question's best: the pinned question is solved, not answered from it
    query = _query_with_pin(sp=2)
    asked = _unpinned_first(CATALOG, query, "A100-80GB")
    assert asked is not None
    second = answer_for(CATALOG, query.model_copy(update={"top": 2}), "A100-80GB", explained=False).plans[1]
    unproven = asked.answer.model_copy(update={"status": "feasible", "plans": (second,)})
    answer = answer_for(CATALOG, query, "A100-80GB", asked=(_Asked(asked.query, unproven),))
    assert answer.model_dump(exclude={"wall_time_s"}) == answer_for(CATALOG, query, "A100-80GB").model_dump(
        exclude={"wall_time_s"})
    assert answer.status == "optimal" and answer.plans[0] != second


def _query_with_pin(**pins: Any) -> Query:
    """Qwen3-8B at 32768 tokens within 6 A100s, the cheapest plan, with `pins`."""
    return make_query(CATALOG, gpu="A100-80GB", model="Qwen3-8B", objective="cheapest", budget_gpus=6,
                      max_model_len=32768, **pins)


def test_a_one_dash_word_is_told_only_an_option_it_spells_not_a_typos_guess(cli: Cli) -> None:
    # -json spells --json with one dash; -exat is no option's spelling, and typos are guessed for -- words alone
    assert cli("--model", "8B", "--gpu", "h100", "--len", "8k", "-json")[::2] == (
        2, ("usage: solve [options] (--help lists them)\nsolve: error: unrecognized arguments: -json (did you mean "
            "--json?)\n"))
    assert cli("--model", "8B", "--gpu", "h100", "--len", "8k", "-exat")[::2] == (
        2, "usage: solve [options] (--help lists them)\nsolve: error: unrecognized arguments: -exat\n")


def test_an_exact_counts_fewer_gpus_keep_the_pins_not_the_answer_without_them(cli: Cli) -> None:
    # the question without the pins (SP=4 on 4 trains 65536 tokens) is not the fewer GPUs' question, which keeps SP=2
    assert cli("--model", "Qwen3-14B", "--gpu", "A100-80GB", "--gpus", "6", "--exact", "--len", "64k", "--sp", "2") == (
        1, ("A100-80GB · Qwen3-14B · cheapest plan for 65536 tokens on exactly 6 GPUs: infeasible\nno plan: 65536 "
            "tokens is beyond what the tables and the memory model's estimates allow for Qwen3-14B on A100-80GB on "
            "exactly 6 GPUs with --sp 2: the longest is\n40960 (Env + Offload + SP=2 on 6 GPUs, documented); "
            "--token-budget auto trains 65536 tokens: Env + Offload + SP=2 on 6 GPUs with max_token_len_per_gpu = "
            "40960\n(estimated)\n--explain says why, rule by rule, and names plans beyond these limits where there "
            "are any\n\n"), "")


def test_a_reason_that_takes_an_undecided_answer_without_the_pins_leaves_it_unsolved() -> None:
    # the question without the pins, left open by a time limit ('unknown'): its alternative is not solved
    query = make_query(CATALOG, gpu="H20-96GB", model="Qwen3-14B", objective="cheapest", budget_gpus=4,
                       max_model_len=131072, sp=4)
    asked = _unpinned_first(CATALOG, query, "H20-96GB")
    assert asked is not None
    nearby = _Nearby(CATALOG, query, "H20-96GB", (_Asked(asked.query, asked.answer.model_copy(
        update={"status": "unknown"})),))
    assert nearby.plan("without_pins") is None
    assert "without_pins" not in nearby.solved().solved
    decided = _Nearby(CATALOG, query, "H20-96GB", (asked,))
    assert decided.plan("without_pins") is None and "without_pins" in decided.solved().solved


@pytest.mark.parametrize(("columns", "first"), [("104", "≤1 GPU"), ("103", "≤2-3 GPUs")])
def test_a_map_past_one_node_exactly_as_wide_as_columns_keeps_its_five_columns(
        cli: Cli, monkeypatch: pytest.MonkeyPatch, columns: str, first: str) -> None:
    # H100's map to 16 GPUs is 104 columns wide with all five budget columns (its 1-GPU cells marked †): at 104 it
    # fits, at 103 one goes
    monkeypatch.setenv("COLUMNS", columns)
    status, out, _ = cli("map", "--gpu", "h100", "--gpus-up-to", "16")
    header = out.splitlines()[2]
    assert (status, header.split("┃")[2].strip(), len(header) <= int(columns)) == (0, first, True)


def test_solve_memory_on_mi300x_names_hip_and_rccl(cli: Cli) -> None:
    # at its longest length on two nodes: the thin-headroom caution and the more-nodes evidence of `solve memory`
    status, out, _ = cli("memory", "--gpu", "mi300x", "--gpus", "16", "--model", "8B", "--len", "409600", "--sp", "8",
                         "--json")
    estimate = json.loads(out)
    assert (status, estimate["cautions"][1]) == (0, (
        "0.0 GiB to spare where the estimate extrapolates, and its error there is unmeasured (its flat overhead for "
        "the HIP context and RCCL does not grow across nodes: docs/memory.md in rft-solver's source); --margin 0.02 "
        "keeps 1.7 GiB more to spare than the default 0.01 here, or measure a step first"))
    assert "2 nodes (RCCL's memory calibrated on one node)" in estimate["beyond_calibration"]
