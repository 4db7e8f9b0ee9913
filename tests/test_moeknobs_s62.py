"""MoE knobs a user can see and switch (session 62): the cost weights' ``offload_moe_scaling`` (false: Offload's weight
is not multiplied by a mixture of experts' parameters held per parameter active), and the note on stderr that tells a
Llama 4 user why its recompute and layer peak count every expert."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest
import reference
import yaml
from test_llama4_experts_s61 import MAVERICK, SCOUT

import solver
from solver.model import cost_ranks, exact_cost
from solver.tables import Weights, load_weights

CATALOG = solver.load_catalog()
A100 = CATALOG.gpu("A100-80GB")
DOCS = Path(__file__).parent.parent / "docs"
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
    assert load_weights() == Weights(offload=1.0, sp=0.1, env=0.01, offload_moe_scaling=True, sp_pcie_factor=3.0,
                                     critic=1.0)
    shipped = yaml.safe_load((Path(solver.tables.shipped_tables_directory()) / "costs.yaml").read_text())
    assert shipped == {"offload": 1.0, "sp": 0.1, "env": 0.01, "offload_moe_scaling": True, "sp_pcie_factor": 3.0,
                       "critic": 1.0}
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
            combination = (gpus, env, offload, sp)
            assert exact_cost(weights, model.held_per_active, "nvlink", combination) == expected, model.name
            assert reference.exact_cost(weights, model, A100, gpus, bool(env), bool(offload), sp) == expected, (
                model.name)
    # Off, a mixture of experts' ranks are a dense model's.
    off = Weights(offload=1.0, sp=0.1, env=0.01, offload_moe_scaling=False)
    on = Weights(offload=1.0, sp=0.1, env=0.01)
    counts = (1, 2, 4, 8, 16)
    assert (cost_ranks(counts, "cheapest", off, MOE_RATIO, "nvlink")
            == cost_ranks(counts, "cheapest", on, Fraction(1), "nvlink"))


def test_scaling_off_gives_the_cluster_placement_a_flat_offload_weight(tmp_path: Path):
    # s61's 24 H100s: scaled, the MoE takes 16 GPUs without Offload and the 32B 8 with it (test_moecost_s61); with
    # Offload's weight flat, 16 GPUs without it save the 32B more, as before s61.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({
        "pools": [{"name": "h100", "gpu": "H100-80GB", "nodes": 3, "gpus_per_node": 8}],
        "jobs": [{"name": "moe", "model": "Qwen3-30B-A3B", "max_model_len": 32768, "rollout_gpus": 0},
                 {"name": "dense", "model": "Qwen3-32B", "max_model_len": 65536, "rollout_gpus": 0}]}),
                     encoding="utf-8")
    result = solver.place(fleet, weights=Weights(offload=1.0, sp=0.1, env=0.01, offload_moe_scaling=False))
    placed = {p.job: (p.trainer_gpus, p.plan.offload, p.plan.sp, p.plan.cost) for p in result.placements}
    assert placed == {"moe": (8, True, 2, _flat_or_scaled(8, True, True, 2, Fraction(1))),
                      "dense": (16, False, 8, _flat_or_scaled(16, True, False, 8, Fraction(1)))}
    assert placed["moe"][3] == 0.27775 and placed["dense"][3] == 0.1073125


@pytest.mark.parametrize(("value", "shown"), [
    ("2", "got 2"),
    ("'yes'", "got 'yes' (quoted, YAML reads it as text: write it without quotes)"),
    ("null", "got null"),
    ("[true]", "got [true]"),
])
def test_a_bad_offload_moe_scaling_exits_2_in_one_line(cli: Cli, tmp_path: Path, value: str, shown: str):
    path = _weights_file(tmp_path, f"offload: 1.0\nsp: 0.1\nenv: 0.01\noffload_moe_scaling: {value}\n")
    assert cli(*REVIEW, "--weights", str(path)) == (
        2, "", f"solve: error: --weights {path}: offload_moe_scaling: must be true or false, {shown}\n")


def test_a_misspelt_key_is_named_with_the_fields(cli: Cli, tmp_path: Path):
    path = _weights_file(tmp_path, "offload: 1.0\nsp: 0.1\nenv: 0.01\noffload_moe_scalin: false\n")
    assert cli(*REVIEW, "--weights", str(path)) == (
        2, "", (f"solve: error: --weights {path}: unknown field 'offload_moe_scalin' (did you mean "
                "offload_moe_scaling? fields: offload, sp, env, offload_moe_scaling, sp_pcie_factor, critic)\n"))


# --- the Llama 4 note ---------------------------------------------------------------------------------------------

SCOUT_NOTE = ("note: scout passes every token through all 16 of its experts in transformers (Llama 4's Llama4TextMoe, "
              "which verl loads as it is, weights the 15 its router did not choose by 0), so its recompute counts a "
              "feed-forward width of 139264, where routing 1 expert would count 16384, and one expert layer's peak "
              "2.09 MiB a token, where routing would hold 0.39; Offload's cost counts its parameters as all active "
              "(r = 1)")
"""Scout's note: 16 x 8192 + 8192 wide against 8192 + 8192; its layer peak 2187264 bytes a token (2.09 MiB) against
405504 routed (0.39 MiB), test_llama4_experts_s61's hand arithmetic."""


def _config(folder: Path, config: dict[str, object]) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def test_solve_memory_notes_why_scouts_recompute_and_peak_are_large(cli: Cli, tmp_path: Path):
    folder = _config(tmp_path / "scout", SCOUT)
    status, _, err = cli("memory", "--model-config", str(folder), "--gpu", "h200", "--gpus", "16", "--len", "8192",
                         "--sp", "8", "--env")
    assert status == 0 and err == f"solve memory: {SCOUT_NOTE}\n"


def test_the_note_comes_with_json_too_and_names_mavericks_figures(cli: Cli, tmp_path: Path):
    folder = _config(tmp_path / "scout", SCOUT)
    status, out, err = cli("--model-config", str(folder), "--gpu", "h200", "--gpus", "16", "--len", "8k", "--json")
    assert status == 0 and json.loads(out)[0]["model"] == "scout" and err == f"solve: {SCOUT_NOTE}\n"
    maverick = _config(tmp_path / "maverick", MAVERICK)
    _, _, err = cli("--model-config", str(maverick), "--gpu", "h200", "--gpus", "16", "--len", "8k", "--json")
    # 128 x 8192 + 8192 wide; its layer peak 15491072 bytes a token (14.77 MiB), routed 405504 (0.39).
    assert ("all 128 of its experts" in err and "weights the 127 its router" in err
            and "feed-forward width of 1056768, where routing 1 expert would count 16384" in err
            and "peak 14.77 MiB a token, where routing would hold 0.39;" in err)


def test_a_cluster_job_of_llama4_gets_the_note_and_a_routed_moe_none(cli: Cli, tmp_path: Path):
    folder = _config(tmp_path / "scout", SCOUT)
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({
        "pools": [{"name": "h200", "gpu": "H200", "nodes": 2, "gpus_per_node": 8}],
        "jobs": [{"name": "l4", "model_config": str(folder), "max_model_len": 8192}]}),
        encoding="utf-8")
    _, _, err = cli("cluster", str(fleet), "--json")
    assert f"solve cluster: {SCOUT_NOTE.replace('scout passes', 'scout (job l4) passes')}\n" in err
    a3b = Path(__file__).parent / "data" / "hf-configs" / "Qwen3-30B-A3B.json"
    routed = _config(tmp_path / "a3b", json.loads(a3b.read_text(encoding="utf-8")))
    status, out, err = cli("memory", "--model-config", str(routed), "--gpu", "h100", "--gpus", "8", "--len", "8192",
                           "--json")
    assert (status, json.loads(out)["model"], err) == (1, "a3b", "")  # no note (and no fit without Offload)


def test_the_memory_doc_quotes_the_note_as_it_reads():
    text = re.sub(r"\s+", " ", (DOCS / "memory.md").read_text(encoding="utf-8"))
    assert f"`solve memory: {SCOUT_NOTE}`" in text
    planner = re.sub(r"\s+", " ", (DOCS / "planner.md").read_text(encoding="utf-8"))
    assert "`offload_moe_scaling: false` turns that off" in planner and "#1 costs 0.2146 in place of 1.0929" in planner
