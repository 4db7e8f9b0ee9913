"""Session 80, maplora: ``solve map`` counts what ``solve`` counts. It took --lora-rank, --reference, --critic and
--trinity-version but not --lora-targets or --dpo (``--lora-targets is an option of solve and solve memory, not of
solve map``), and `solver.map_plans` no ``lora_targets`` or ``dpo``; nor did its cells count a query's targets (no
map path took `Query.counted_catalog`). It now takes both through the options' helpers and `make_query`, counts the
adapter on the targets' modules in each cell, names them in the title (``LoRA rank 64 on q_proj,v_proj``, ``DPO``)
and in the JSON (``lora_target_modules``, ``dpo``), refuses what ``solve`` refuses in the same words, and refuses
--from-config, saying what to give instead."""

from __future__ import annotations

import json

import pytest
from test_json import jsonschema_errors
from test_padbound_s71 import INTERNLM2, Cli

import solver
from solver.cli.maps import MAP_WITHOUT_CONFIG
from solver.tables import QueryError, load_catalog
from solver.tables.model_config import load_model_config

LORA_MAP = ("map", "--gpu", "h100", "--model", "8B", "--lora-rank", "64", "--host-ram", "72", "--budgets", "1,2,4,8",
            "--trinity-version", "0.6")
"""Qwen3-8B at LoRA rank 64 on H100s, 72 GiB of host memory per node: Offload's need is 72.6 GiB with the adapter on
all-linear's modules, 71.4 GiB on q_proj,v_proj's, so the targets decide whether the cells may offload. Under Trinity
0.6, which loads the untied model on rank 0 alone on H100s: with no release named every rank of the node loads it
(s84), 30.5 GiB each, and no cell beyond 2 GPUs fits in 72 GiB."""
QV = ("--lora-targets", "q_proj,v_proj")
QV_PATTERN = r".*\.(q_proj|v_proj)"


def _row(out: str) -> str:
    """The one model row of a text map."""
    (row,) = [line for line in out.splitlines() if line.startswith("│ Qwen3-8B")]
    return row


def test_the_targets_move_the_maps_cells_and_its_title_names_them(cli: Cli):
    status, out, err = cli(*LORA_MAP)
    assert (status, err) == (0, "")
    assert out.splitlines()[0] == ("H100-80GB: longest context per model and GPU budget, LoRA rank 64, Trinity 0.6, "
                                   "host memory 72 GiB per node")
    assert _row(out) == "│ Qwen3-8B │ 13k E@1~† │ 37k E+SP2@2~ │ 86k E+SP4@4~ │ 186k E+SP8@8~!^ │"
    status, out, err = cli(*LORA_MAP, *QV)
    assert (status, err) == (0, "")
    assert out.splitlines()[0] == ("H100-80GB: longest context per model and GPU budget, LoRA rank 64 on "
                                   "q_proj,v_proj, Trinity 0.6, host memory 72 GiB per node")
    assert _row(out) == "│ Qwen3-8B │ 25k E+O@1~† │ 49k E+O+SP2@2~ │ 99k E+O+SP4@4~ │ 198k E+O+SP8@8~!^ │"


def test_the_json_gives_the_targets_and_each_cell_counted_on_them(cli: Cli):
    (all_linear,) = json.loads(cli(*LORA_MAP, "--json")[1])
    (qv,) = json.loads(cli(*LORA_MAP, *QV, "--json")[1])
    assert "lora_target_modules" not in all_linear and qv["lora_target_modules"] == QV_PATTERN
    assert [(cell["max_model_len"], cell["offload"], cell["host_memory_gb"], cell.get("lora_target_modules"))
            for cell in all_linear["rows"][0]["plans"]] == [
        (13312, False, 31.2, None), (37888, False, 31.2, None), (88064, False, 31.2, None),
        (190464, False, 31.2, None)]
    assert [(cell["max_model_len"], cell["offload"], cell["host_memory_gb"], cell["lora_target_modules"])
            for cell in qv["rows"][0]["plans"]] == [
        (25600, True, 71.4, QV_PATTERN), (50176, True, 71.4, QV_PATTERN), (101376, True, 71.4, QV_PATTERN),
        (202752, True, 71.4, QV_PATTERN)]
    assert jsonschema_errors("map", [qv]) == []


@pytest.mark.parametrize(("targets", "lengths"), [(None, (13312, 190464)), ("q_proj,v_proj", (25600, 202752))])
def test_each_cell_is_solves_answer_with_the_same_targets(targets: str | None, lengths: tuple[int, int]):
    (gpu_map,) = solver.map_plans("8B", gpu="h100", budgets=[1, 8], lora_rank=64, lora_targets=targets,
                                  host_ram_gb=72.0, trinity_version="0.6")
    for budget, cell, length in zip((1, 8), gpu_map.rows[0].plans, lengths, strict=True):
        (answer,) = solver.plan("8B", gpu="h100", budget_gpus=budget, objective="max_len", lora_rank=64,
                                lora_targets=targets, host_ram_gb=72.0, trinity_version="0.6")
        assert cell is not None and cell == answer.plans[0].model_copy(update={"unused_gpus": cell.unused_gpus})
        assert cell.max_model_len == length


def test_a_by_length_maps_cells_count_the_smaller_adapter():
    """Where the cheapest setting is the same, its memory is less on q_proj,v_proj: 4096 tokens on one GPU with Env,
    49.03 GiB on all-linear's modules, 46.82 on q_proj,v_proj's."""
    maps = [solver.map_plans("8B", gpu="h100", by="len", budgets=[1], lora_rank=64, lora_targets=targets)[0]
            for targets in (None, "q_proj,v_proj")]
    first = [gpu_map.rows[0] for gpu_map in maps]
    assert [row.max_model_len for row in first] == [4096, 4096]
    assert [(plan.env, plan.offload, round(plan.memory_gb, 2)) for row in first for plan in row.plans if plan] == [
        (True, False, 49.03), (True, False, 46.82)]
    assert [gpu_map.lora_target_modules for gpu_map in maps] == [None, QV_PATTERN]


def test_dpo_halves_the_length_of_a_model_trained_one_padded_sequence_per_micro_batch(cli: Cli):
    mapped = ("map", "--model-config", str(INTERNLM2), "--gpu", "h100", "--budgets", "1,8", "--json")
    (plain,) = json.loads(cli(*mapped)[1])
    status, out, err = cli(*mapped, "--dpo")
    assert (status, err) == (0, "")
    (dpo,) = json.loads(out)
    assert "dpo" not in plain and dpo["dpo"] is True
    assert [(cell["max_model_len"], cell["dpo"]) for cell in plain["rows"][0]["plans"]] == [(79872, False)] * 2
    assert [(cell["max_model_len"], cell["dpo"]) for cell in dpo["rows"][0]["plans"]] == [(39936, True)] * 2
    assert cli(*mapped[:-1], "--dpo")[1].splitlines()[0] == (
        "H100-80GB: longest context per model and GPU budget, DPO")


def test_dpo_changes_no_cell_of_a_catalogue_model_and_the_title_still_says_it():
    """Qwen3-8B packs its sequences (no padded micro-batch): a DPO run's cells are the same, marked dpo."""
    plain, dpo = (solver.map_plans("8B", gpu="h100", budgets=[1, 8], dpo=flag)[0] for flag in (False, True))
    assert [plan.model_copy(update={"dpo": False}) for plan in dpo.rows[0].plans] == list(plain.rows[0].plans)
    assert [plan.max_model_len for plan in dpo.rows[0].plans if plan] == [24576, 202752]
    assert solver.map_text((dpo,)).splitlines()[0] == "H100-80GB: longest context per model and GPU budget, DPO"


@pytest.mark.parametrize("given", [
    ("--dpo", "--critic", "resident"),
    ("--dpo", "--no-reference"),
    ("--lora-targets", "q_proj,v_proj"),
    ("--lora-rank", "8", "--lora-targets", ""),
    ("--lora-rank", "8", "--lora-targets", "qkv_proj"),
    ("--lora-rank", "8", "--lora-targets", "lm_head"),
    ("--lora-rank", "8", "--lora-targets", "(q_proj"),
])
def test_the_map_refuses_what_solve_refuses_in_the_same_words(cli: Cli, given: tuple[str, ...]):
    status, out, err = cli("map", "--model", "8B", "--gpu", "h100", "--budgets", "8", *given)
    assert (status, out) == (2, "") and err.startswith("solve map: error: --") and err.count("\n") == 1
    solve_status, _, solve_err = cli("--model", "8B", "--gpu", "h100", "--gpus", "8", *given)
    assert (solve_status, solve_err.removeprefix("solve: error: ")) == (2, err.removeprefix("solve map: error: "))


def test_targets_one_mapped_model_lacks_are_refused_naming_that_model(cli: Cli):
    """The router, mlp.gate, is Qwen3-30B-A3B's (mapped first, it is counted) and no module of Qwen3-8B's."""
    status, out, err = cli("map", "--model", "30B-A3B,8B", "--gpu", "h100", "--budgets", "8", "--lora-rank", "8",
                           "--lora-targets", r".*mlp\.gate")
    assert (status, out) == (2, "")
    assert err.startswith(r"solve map: error: --lora-targets '.*mlp\.gate' matches no module of Qwen3-8B (")
    # checked on every row before any solve (targets without --lora-exclude too), naming the row that counts them
    assert err.endswith("; of the map's 2 models, they are counted on Qwen3-30B-A3B alone: map those "
                        "(--model Qwen3-30B-A3B)\n")


def test_from_config_is_refused_saying_what_to_give_instead(cli: Cli):
    status, out, err = cli("map", "--model", "8B", "--from-config", "trinity.yaml")
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] == ("solve map: error: --from-config is an option of solve, not of solve map: "
                                    f"{MAP_WITHOUT_CONFIG}")
    assert "--lora-targets, --lora-exclude, --dpo" in MAP_WITHOUT_CONFIG


def test_map_plans_takes_the_keywords_in_the_apis_words():
    with pytest.raises(QueryError) as refused:
        solver.map_plans("8B", gpu="h100", budgets=[8], dpo="yes")  # type: ignore[arg-type]
    assert str(refused.value) == "dpo must be True or False, got 'yes'"
    with pytest.raises(QueryError) as refused:
        solver.map_plans("8B", gpu="h100", budgets=[8], lora_targets="q_proj")
    assert str(refused.value) == ("lora_targets 'q_proj' without LoRA: the targets are a LoRA adapter's; give a "
                                  "lora_rank above 0")
    with pytest.raises(QueryError) as refused:
        solver.map_plans("8B", gpu="h100", budgets=[8], dpo=True, critic="resident")
    assert str(refused.value) == ("dpo=True trains no PPO critic (Trinity's dpo algorithm uses none): drop "
                                  "critic='resident'")
    padded = load_catalog().with_model(load_model_config(INTERNLM2))
    (gpu_map,) = solver.map_plans("internlm2-7b", gpu="h100", budgets=[8], dpo=True, lora_rank=16,
                                  lora_targets=r".*\.q_proj", catalog=padded)
    assert (gpu_map.dpo, gpu_map.lora_target_modules) == (True, r".*\.q_proj")
    assert solver.map_text((gpu_map,)).splitlines()[0] == (
        r"H100-80GB: longest context per model and GPU budget, LoRA rank 16 on q_proj, DPO")
