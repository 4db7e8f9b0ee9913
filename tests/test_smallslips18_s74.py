"""What s73's reviews left, settled by helper smallslips18 (session 74): the SP-over-PCIe caution's SP=1 question
asked once per distinct question within a query, not once per plan; `Planner.undecided` derived from the questions
it records; a cluster file's names read as written (``name: 010`` is ``010``); ``--write`` warning of a rollout
engine that cannot hold the model as the check refuses it; a null rollout ``gpu_memory_utilization``, ``dtype`` or
``enable_expert_parallel`` refused as Trinity's typed config refuses it; a Phi-3's bad top-level
``partial_rotary_factor`` named as that key; and, from s73's render diff, ``memory_text``'s ``solver.plan`` call
carrying the reference model as ``solve memory``'s command carries ``--no-reference``, and ``catalog=`` for a model
of your own, as docs/api.md said it did."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from config_cases import config_lines, with_key, written
from test_cluster import CATALOG
from test_nulls_s58 import _refused
from test_rolloutfit_s73 import QWEN3_14B_TP1, _config
from test_slidingkv_s71 import _refusal, _written
from test_vllmrest_s73 import _phi3

import solver
import solver.solve
from solver.cluster.options import Planner
from solver.solve import WorkBudget, work_budget
from solver.tables import JobTraining, QueryError, load_catalog, load_model_config, load_weights

Cli = Callable[..., tuple[int, str, str]]

def _pcie_caution(sp: int, fits: bool | str) -> str:
    """The SP-over-PCIe caution of a plan with SP `sp` on RTX 4090s at 8192 tokens, where a plan without SP `fits`
    there or not, or fits with a lowered token budget alone (``lowered``)."""
    words = (f"SP={sp} on RTX-4090-24GB cards, which reach one another over PCIe: Ulysses' all-to-all crosses it, or "
             "host memory where the cards cannot reach one another directly, in every layer; the cost weighs that "
             "above NVLink's by a ranking weight, not a measured time")
    if fits == "lowered":
        return (f"{words}, and no plan without SP fits 8192 tokens here at Trinity's default token budget, but one "
                "with a lowered budget does (--sp 1 with --token-budget auto): it may train faster, so time a step of "
                "each")
    return (f"{words}, so a plan without SP that fits (--sp 1) may train faster: time a step of each" if fits else
            f"{words}, and no plan without SP fits 8192 tokens here: SP over PCIe is what trains this length, so time "
            "a step before a long run")


def _sp_one_questions(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The SP=1 questions `answer_for` is asked from now on (the SP-over-PCIe caution's: the queries here pin no
    SP 1 of their own)."""
    asked: list[Any] = []
    answer_for = solver.solve.answer_for

    def counted(catalog: Any, query: Any, gpu: str, *args: Any, **kwargs: Any) -> Any:
        if query.sp == 1:
            asked.append(query)
        return answer_for(catalog, query, gpu, *args, **kwargs)

    monkeypatch.setattr(solver.solve, "answer_for", counted)
    return asked


@pytest.mark.parametrize(("argv", "plans", "lowered"), [
    # Qwen3-4B at 8192 tokens: no plan without SP fits at Trinity's default budget, one with a lowered budget does
    # (s93: the caution said SP is what trains it). (s88: the plan without Offload is cautioned too: its 8 ranks load
    # the model, more than a workstation's 64 GiB.)
    (("--model", "4B", "--len", "8192"), [(8, 4, ["host-memory-unchecked"], _pcie_caution(4, "lowered")),
                                          (6, 2, ["host-memory-unchecked", "uneven-data-parallel"],
                                           _pcie_caution(2, "lowered")),
                                          (4, 2, ["host-memory-unchecked"], _pcie_caution(2, "lowered")),
                                          (2, 2, ["host-memory-unchecked"], _pcie_caution(2, "lowered"))], True),
    # Qwen3-1.7B at 4096 tokens, SP 2 pinned: SP 1 fits, and the caution names it.
    (("--model", "1.7B", "--len", "4096", "--sp", "2"), [(8, 2, [], _pcie_caution(2, True)),
                                                         (6, 2, ["uneven-data-parallel"], _pcie_caution(2, True)),
                                                         (4, 2, [], _pcie_caution(2, True)),
                                                         (2, 2, ["thin-headroom"], _pcie_caution(2, True))], False),
])
def test_top_5_on_pcie_cards_asks_each_sp_1_question_once(cli: Cli, monkeypatch: pytest.MonkeyPatch,
                                                          argv: tuple[str, ...], plans: list[Any], lowered: bool):
    asked = _sp_one_questions(monkeypatch)
    status, out, _ = cli(*argv, "--gpu", "4090", "--gpus", "8", "--top", "5", "--json")
    found = json.loads(out)[0]["plans"]
    assert status == 0
    # As before (one SP=1 solve per plan: 5): the plans and their cautions, word for word.
    assert [(plan["gpus"], plan["sp"], plan["caution_codes"], plan["cautions"][-1]) for plan in found] == [
        (gpus, sp, [*codes, "sp-over-pcie"], words) for gpus, sp, codes, words in plans]
    # Two distinct questions: the query's at its length, and the rollout-kept plan's (6 trainer GPUs, 2 rollout); each
    # with --token-budget auto too where it has no plan at the default budget.
    assert len(asked) == len(set(asked)) == (4 if lowered else 2)
    assert sorted((question.budget_gpus, question.rollout_gpus, question.token_budget) for question in asked) == [
        *([(6, 2, "auto")] if lowered else []), (6, 2, "default"), *([(8, None, "auto")] if lowered else []),
        (8, None, "default")]


def test_the_sp_1_answers_are_the_querys_own(monkeypatch: pytest.MonkeyPatch):
    asked = _sp_one_questions(monkeypatch)
    for _ in range(2):  # the second query asks its questions again: nothing is kept between queries
        solver.plan("4B", gpu="4090", budget_gpus=8, max_model_len=8192, top=5)
    assert len(asked) == 8 and len(set(asked)) == 4  # each at the default budget and with --token-budget auto
    assert solver.solve._SP_ONE_FITS.get() is None  # outside a query, none is held


def test_planners_undecided_counts_the_questions_it_records():
    planner = Planner(CATALOG, load_weights(), "auto")
    question = ("H20-96GB", "Qwen3-32B", 8, 131072, 8, "auto", None, None, JobTraining())
    with work_budget(WorkBudget(0.0)):  # no deterministic time left: the solve stops undecided
        assert planner.best(*question) is None and planner.best(*question) is None  # asked once, given twice
    assert (planner.undecided, planner.undecided_given, planner.asked) == (1, 2, 1)
    assert planner.undecided_keys == {(*question, None, None, None)}  # and no Env, margin or SP pinned
    with pytest.raises(AttributeError):
        planner.undecided = 0  # type: ignore[misc]  # derived: nothing to set apart from the questions


FLEET = """\
pools:
  - {name: 010, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}
jobs:
  - &job {name: 010, model: 0.6B, max_model_len: 8192, pool: 010}
  - {<<: *job, name: 1.50}
  - {name: 2024-01-01, model: 0.6B, max_model_len: 8192, pool: 010}
"""


def test_a_cluster_files_names_are_the_text_as_written(cli: Cli, tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET, encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--json")
    result = json.loads(out)
    assert (status, err) == (0, "")
    assert [(placement["job"], placement["pool"]) for placement in result["placements"]] == [
        ("010", "010"), ("1.50", "010"), ("2024-01-01", "010")]  # not 8, 1.5 and a date
    status, text, _ = cli("cluster", str(fleet))
    assert status == 0 and "pool 010: 1 x 8 A100-80GB" in text and "│ 1.50 " in text


def test_a_cluster_files_null_name_is_still_refused(cli: Cli, tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET.replace("name: 1.50", "name: ~"), encoding="utf-8")
    assert cli("cluster", str(fleet)) == (2, "", (
        f"solve cluster: error: {fleet}: line 5: jobs item 2, name: must be text, got null (YAML reads an empty value, "
        "or ~ or null unquoted, as null: give the text, in quotes to keep ~ or null)\n"))


def test_write_warns_of_the_rollout_engine_the_check_refuses_once(cli: Cli, tmp_path: Path):
    config = _config(tmp_path, "Qwen3-14B", "engine_num: 4, tensor_parallel_size: 1")
    out = tmp_path / "out.yaml"
    status, _, err = cli("--from-config", str(config), "--gpu", "4090", "--write", str(out))
    assert status == 0
    assert [line for line in err.splitlines() if line.startswith("solve: warning:")] == [
        f"solve: warning: {out}: {QWEN3_14B_TP1}"]
    # The check of the file written says the same.
    status, check, _ = cli("--from-config", str(out), "--gpu", "4090", "--json", "--check")
    current = json.loads(check)[0]["current"]
    assert (status, current["config_problems"], current["config_problem_codes"]) == (
        1, [QWEN3_14B_TP1], ["rollout-engine-memory-refused"])


@pytest.mark.parametrize(("key", "field_type", "kind"), [
    ("explorer.rollout_model.gpu_memory_utilization", "float", "a number"),
    ("explorer.rollout_model.dtype", "str", "text"),
    ("explorer.rollout_model.enable_expert_parallel", "bool", "true or false"),
])
def test_a_null_rollout_engine_key_is_refused_as_trinity_refuses_it(cli: Cli, tmp_path: Path, key: str,
                                                                    field_type: str, kind: str):
    # Each typed so in InferenceModelConfig (trinity/common/config.py:537, :538, :525 in 0.6.0); before, read as unset.
    lines, refused, check = config_lines(cli, written(tmp_path, with_key(key, None)), f"{key} is null")
    assert (lines, refused, check) == ([("typed-null-refused", (
        f"{key} is null, not {kind}: Trinity's typed config (OmegaConf's {field_type} field) refuses it, with every "
        f"Trinity release and verl version: remove the key for Trinity's default, or write {kind}"))], True, 1)


def test_an_auxiliary_models_null_dtype_is_refused_as_the_rollout_models(cli: Cli, tmp_path: Path):
    # Three rollout engines and the auxiliary model's one leave the trainer its 4 GPUs, as BASE's 4 engines do.
    config = with_key("explorer.auxiliary_models", [{"engine_num": 1, "dtype": None}],
                      with_key("explorer.rollout_model.engine_num", 3))
    key = "explorer.auxiliary_models[0].dtype"
    lines, refused, check = config_lines(cli, written(tmp_path, config), f"{key} is null")
    assert (lines, refused, check) == (_refused(key, "str"), True, 1)


@pytest.mark.parametrize(("config", "refusal"), [
    ({**_phi3(), "partial_rotary_factor": "half"}, "partial_rotary_factor: expected a number, got 'half'"),
    ({**_phi3(), "partial_rotary_factor": None}, "partial_rotary_factor: expected a number, got null"),
    (_phi3(partial_rotary_factor="half"), "rope_scaling: partial_rotary_factor: expected a number, got 'half'"),
])
def test_a_phi3s_bad_partial_rotary_factor_is_named_where_it_is(tmp_path: Path, config: dict[str, object],
                                                                refusal: str):
    assert _refusal(tmp_path, config) == refusal


@pytest.mark.parametrize(("asked", "carried"), [
    ({"reference_model": False}, ", reference_model=False"),  # the command's --no-reference
    # LoRA builds none (a reference model with it is refused): False is the default there, not carried
    ({"lora_rank": 16, "reference_model": False}, ", lora_rank=16"),
    ({"lora_rank": 16}, ", lora_rank=16"),
    ({}, ""),
])
def test_memory_texts_planner_call_carries_the_reference_model_as_the_command_does(asked: dict[str, Any],
                                                                                   carried: str):
    # s73's render diff: solve memory's planner command carried --no-reference, the API's solver.plan call did not,
    # so it planned with the reference model's host memory the answer left out.
    answer = solver.memory_answer("8B", gpu="A100-80GB", gpus=4, max_model_len=65536, offload=True, **asked)
    assert not answer.trains
    assert solver.memory_text(answer).splitlines()[-1] == (
        f'  solver.plan("Qwen3-8B", gpu="A100-80GB", budget_gpus=4, max_model_len=65536{carried})')


def test_memory_texts_planner_call_names_the_catalogue_of_a_model_of_your_own(tmp_path: Path):
    # docs/api.md said the call carries your catalog= for a model or GPU type of your own; it did not, and without it
    # the call is refused: the shipped catalogue lacks the model.
    model = load_model_config(_written(tmp_path, _phi3()))
    catalog = load_catalog().with_models((model,))
    answer = solver.memory_answer(model.name, gpu="A100-80GB", gpus=1, max_model_len=131072, catalog=catalog)
    call = solver.memory_text(answer, catalog).splitlines()[-1].strip()
    assert not answer.trains and call == (
        'solver.plan("Phi-3-mini-128k-instruct", gpu="A100-80GB", budget_gpus=1, max_model_len=131072, '
        "catalog=catalog)")
    with pytest.raises(QueryError):
        solver.plan(model.name, gpu="A100-80GB", budget_gpus=1, max_model_len=131072)
    assert solver.plan(model.name, gpu="A100-80GB", budget_gpus=1, max_model_len=131072, catalog=catalog)
    # Where the shipped catalogue has both, none is named, whatever catalogue is passed.
    shipped = solver.memory_answer("8B", gpu="A100-80GB", gpus=4, max_model_len=65536, offload=True)
    assert "catalog" not in solver.memory_text(shipped, load_catalog()).splitlines()[-1]
