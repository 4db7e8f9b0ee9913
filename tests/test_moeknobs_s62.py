"""MoE knobs a user can see and switch (session 62): the cost weights' ``offload_moe_scaling`` (false: Offload's weight
is not multiplied by a mixture of experts' parameters held per parameter active)."""

from __future__ import annotations

import json
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest
import reference
import yaml

import solver
from solver.model import cost_ranks, exact_cost
from solver.tables import Weights, load_weights

CATALOG = solver.load_catalog()
MOE_RATIO = Fraction(23828125, 2594461)
"""Qwen3-30B-A3B's parameters held per parameter active (30.5B / 3.32B, test_moecost_s61)."""
REVIEW = ("--model", "30B-A3B", "--gpu", "h100", "--gpus", "16", "--maximize", "len", "--top", "5")
"""s61's review command: the longest context of Qwen3-30B-A3B within 16 H100s, five ranked plans."""
REVIEW_PLANS = [(16, True, True, 8, 210944), (8, True, True, 8, 210944), (16, True, False, 8, 118784),
                (8, True, True, 4, 105472), (4, True, True, 4, 105472)]
"""Its five plans (GPUs, Env, Offload, SP, length): ranked by length first, the same with the scaling on or off."""
Cli = Callable[..., tuple[int, str, str]]


def _weights_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "weights.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _flat_or_scaled(gpus: int, env: bool, offload: bool, sp: int, ratio: Fraction) -> float:
    """The shipped weights' cost by hand, with Offload's weight 1 multiplied by `ratio`."""
    return float(Fraction(1, gpus) * (1 + ratio * offload) * (1 + Fraction(1, 10) * (sp - 1))
                 * (1 + Fraction(1, 100) * env))


def _review(cli: Cli, *more: str) -> list[tuple[int, bool, bool, int, int, float]]:
    status, out, err = cli(*REVIEW, *more, "--json")
    assert (status, err) == (0, "")
    [answer] = json.loads(out)
    return [(p["gpus"], p["env"], p["offload"], p["sp"], p["max_model_len"], p["cost"]) for p in answer["plans"]]


def test_the_shipped_weights_scale_and_so_does_a_file_that_leaves_the_key_out(tmp_path: Path):
    assert load_weights() == Weights(offload=1.0, sp=0.1, env=0.01, offload_moe_scaling=True)
    shipped = yaml.safe_load((Path(solver.tables.shipped_tables_directory()) / "costs.yaml").read_text())
    assert shipped == {"offload": 1.0, "sp": 0.1, "env": 0.01, "offload_moe_scaling": True}
    assert load_weights(_weights_file(tmp_path, "offload: 1.0\nsp: 0.1\nenv: 0.01\n")).offload_moe_scaling is True
    assert Weights(offload=1.0, sp=0.1, env=0.01).offload_moe_scaling is True


def test_scaling_off_prices_the_reviews_moe_offload_as_a_dense_models(cli: Cli, tmp_path: Path):
    off = _weights_file(tmp_path, "offload: 1.0\nsp: 0.1\nenv: 0.01\noffload_moe_scaling: false\n")
    plans = _review(cli, "--weights", str(off))
    assert [plan[:5] for plan in plans] == REVIEW_PLANS
    assert [plan[5] for plan in plans] == [_flat_or_scaled(*plan[:4], Fraction(1)) for plan in REVIEW_PLANS]
    assert [plan[5] for plan in plans] == [0.214625, 0.42925, 0.1073125, 0.32825, 0.6565]
    status, out, _ = cli(*REVIEW, "--weights", str(off))
    rows = [line for line in out.splitlines() if line.startswith(("│ 1 ", "│ 3 "))]
    assert status == 0 and "0.2146 (best)" in rows[0] and "0.1073 (0.50x #1)" in rows[1]


def test_scaling_on_written_out_is_the_default(cli: Cli, tmp_path: Path):
    on = _weights_file(tmp_path, "offload: 1.0\nsp: 0.1\nenv: 0.01\noffload_moe_scaling: true\n")
    plans = _review(cli, "--weights", str(on))
    assert plans == _review(cli)
    assert [plan[:5] for plan in plans] == REVIEW_PLANS
    assert [plan[5] for plan in plans] == [_flat_or_scaled(*plan[:4], MOE_RATIO) for plan in REVIEW_PLANS]
    assert plans[0][5] == pytest.approx(1.0928951177624178, rel=1e-15)


def test_the_api_takes_the_key_and_answers_as_the_command(cli: Cli, tmp_path: Path):
    off = Weights(offload=1.0, sp=0.1, env=0.01, offload_moe_scaling=False)
    [answer] = solver.plan("30B-A3B", gpu="h100", budget_gpus=16, objective="max_len", top=5, weights=off)
    assert [plan.cost for plan in answer.plans] == [0.214625, 0.42925, 0.1073125, 0.32825, 0.6565]
    # A dense model's costs do not depend on it.
    dense = {scaling: [plan.cost for plan in solver.plan("8B", gpu="h100", budget_gpus=16, objective="max_len", top=5,
                                                         weights=Weights(offload=0.5, sp=0.1, env=0.0,
                                                                         offload_moe_scaling=scaling))[0].plans]
             for scaling in (True, False)}
    assert dense[True] == dense[False] and len(dense[True]) == 5


@pytest.mark.parametrize("scaling", [True, False])
def test_the_solver_and_the_reference_price_every_model_alike(scaling: bool):
    weights = Weights(offload=0.7, sp=0.1, env=0.01, offload_moe_scaling=scaling)
    for model in CATALOG.models:
        r = model.held_per_active if scaling else Fraction(1)
        for gpus, env, offload, sp in ((1, 0, 1, 1), (8, 1, 1, 4), (16, 1, 0, 8)):
            expected = (Fraction(1, gpus) * (1 + Fraction(7, 10) * r * offload) * (1 + Fraction(1, 10) * (sp - 1))
                        * (1 + Fraction(1, 100) * env))
            assert exact_cost(weights, model.held_per_active, (gpus, env, offload, sp)) == expected, model.name
            assert reference.exact_cost(weights, model, gpus, bool(env), bool(offload), sp) == expected, model.name
    # Off, a mixture of experts' ranks are a dense model's.
    off = Weights(offload=1.0, sp=0.1, env=0.01, offload_moe_scaling=False)
    on = Weights(offload=1.0, sp=0.1, env=0.01)
    counts = (1, 2, 4, 8, 16)
    assert cost_ranks(counts, "cheapest", off, MOE_RATIO) == cost_ranks(counts, "cheapest", on, Fraction(1))


def test_scaling_off_gives_the_cluster_placement_a_flat_offload_weight(tmp_path: Path):
    # s61's 24 H100s: scaled, the MoE takes 16 GPUs without Offload and the 32B 8 with it (test_moecost_s61); with
    # Offload's weight flat, 16 GPUs without it save the 32B more, as before s61.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({
        "pools": [{"name": "h100", "gpu": "H100-80GB", "nodes": 3, "gpus_per_node": 8}],
        "jobs": [{"name": "moe", "model": "Qwen3-30B-A3B", "max_model_len": 32768, "rollout_gpus": 0},
                 {"name": "dense", "model": "Qwen3-32B", "max_model_len": 65536, "rollout_gpus": 0}]}), encoding="utf-8")
    result = solver.place(fleet, weights=Weights(offload=1.0, sp=0.1, env=0.01, offload_moe_scaling=False))
    placed = {p.job: (p.trainer_gpus, p.plan.offload, p.plan.sp, p.plan.cost) for p in result.placements}
    assert placed == {"moe": (8, True, 2, _flat_or_scaled(8, True, True, 2, Fraction(1))),
                      "dense": (16, False, 8, _flat_or_scaled(16, True, False, 8, Fraction(1)))}
    assert placed["moe"][3] == 0.27775 and placed["dense"][3] == 0.1073125


@pytest.mark.parametrize(("value", "shown"), [
    ("2", "got 2"),
    ("'yes'", "got 'yes' (quoted, YAML reads it as text: write it without quotes)"),
    ("null", "got None"),
    ("[true]", "got [True]"),
])
def test_a_bad_offload_moe_scaling_exits_2_in_one_line(cli: Cli, tmp_path: Path, value: str, shown: str):
    path = _weights_file(tmp_path, f"offload: 1.0\nsp: 0.1\nenv: 0.01\noffload_moe_scaling: {value}\n")
    assert cli(*REVIEW, "--weights", str(path)) == (
        2, "", f"solve: error: --weights {path}: offload_moe_scaling: must be true or false, {shown}\n")


def test_a_misspelt_key_is_named_with_the_fields(cli: Cli, tmp_path: Path):
    path = _weights_file(tmp_path, "offload: 1.0\nsp: 0.1\nenv: 0.01\noffload_moe_scalin: false\n")
    assert cli(*REVIEW, "--weights", str(path)) == (
        2, "", (f"solve: error: --weights {path}: unknown field 'offload_moe_scalin' (did you mean "
                "offload_moe_scaling? fields: offload, sp, env, offload_moe_scaling)\n"))
