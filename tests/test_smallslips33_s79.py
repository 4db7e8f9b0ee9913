"""Slips the reviews left in s79: ``--lora-targets`` beside a config whose own ``target_modules`` adapt more (which
what is made of the plan keeps) is refused by ``--emit trinity``, ``--out`` and ``--json``'s ``apply`` as ``--write``
refuses it, and the apply lines say it first (`solver.trinity.lora_unkept`); room kept's solve shares the
answer's time limit; `Plan.cautions_coded` and `TargetMatch.beyond_all_linear`, one helper each for what was written
twice; ``solve cluster``'s unplaced jobs grouped by reason and training; ``--buy``'s hint names a long ``--required``
list as ``JOBS``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from test_deadlines_s80 import FakeClock
from test_review79b_s79 import CONFIG, QV
from test_smallslips31_s79 import AT_32K

import solver
from solver.results import CautionCode, Plan
from solver.tables.peft_match import peft_target_match

Cli = Callable[..., tuple[int, str, str]]
A100 = ("--gpu", "A100-80GB")


def _config(tmp_path: Path, targets: str = QV) -> Path:
    path = tmp_path / "grpo.yaml"
    path.write_text(CONFIG % targets, encoding="utf-8")
    return path


def _unkept(config: Path, kept_by: str) -> str:
    return (f"--from-config {config}: the plan counted its LoRA adapter on '.*\\.q_proj' (18,874,368 parameters), but "
            f"the config's own target_modules (model.lora_configs), which {kept_by}, adapt 30,670,848: plan on them "
            "(leave --lora-targets out), or set them to '.*\\.q_proj' first")


# (1) Before: --emit trinity printed a fragment without model.lora_configs (the config's q and v adapter stays) for a
# plan that counted q alone, with exit 0; --json's apply and the apply lines the same; --write alone refused it.

def test_emit_and_out_refuse_targets_that_count_fewer_parameters_than_the_configs_own(cli: Cli,
                                                                                      tmp_path: Path) -> None:
    config, fragment = _config(tmp_path), tmp_path / "fragment.yaml"
    status, out, err = cli("--from-config", str(config), *A100, "--lora-targets", "q_proj", "--emit", "trinity")
    assert (status, out, err) == (2, "", f"solve: error: {_unkept(config, '--emit trinity keeps')}\n")
    status, out, err = cli("--from-config", str(config), *A100, "--lora-targets", "q_proj", "--out", str(fragment))
    assert (status, out, fragment.exists()) == (2, "", False)
    assert err == f"solve: error: {_unkept(config, '--out keeps')}\n"
    # targets that count as many parameters or more still make a fragment, which keeps the config's adapter
    status, out, _ = cli("--from-config", str(config), *A100, "--lora-targets", "q_proj,k_proj,v_proj", "--emit",
                         "trinity")
    assert status == 0 and "--lora-targets q_proj,k_proj,v_proj --critic none" in out and "lora_configs" not in out


def test_json_leaves_the_apply_out_and_says_why(cli: Cli, tmp_path: Path) -> None:
    config = _config(tmp_path)
    status, out, _ = cli("--from-config", str(config), *A100, "--lora-targets", "q_proj", "--json")
    (answer,) = json.loads(out)
    assert status == 0 and "apply" not in answer
    assert answer["apply_left_out"] == _unkept(config, "--emit trinity keeps")
    _, out, _ = cli("--from-config", str(config), *A100, "--lora-targets", "q_proj,k_proj,v_proj", "--json")
    (answer,) = json.loads(out)
    assert "apply_left_out" not in answer and answer["apply"]["config"]["model"] == {"max_model_len": 16384}


def test_the_apply_lines_say_it_first(cli: Cli, tmp_path: Path) -> None:
    config = _config(tmp_path)
    status, out, _ = cli("--from-config", str(config), *A100, "--lora-targets", "q_proj", "--top", "1")
    lines = out.splitlines()
    (at,) = [index for index, line in enumerate(lines) if line.startswith("apply ")]
    # no --write offered: it would refuse the plan
    assert status == 0 and lines[at] == "apply          the lines below (dotted keys; --emit trinity writes YAML)"
    assert lines[at + 1] == f"# {_unkept(config, 'these lines keep')}"
    _, out, _ = cli("--from-config", str(config), *A100, "--lora-targets", "q_proj,k_proj,v_proj", "--top", "1")
    assert "these lines keep" not in out and "--write FILE writes a copy of grpo.yaml with the plan applied" in out


# (2) Before: room kept's solve had the query's whole time limit of its own, after the ranking's: up to twice it.

def _room_kept_clock(monkeypatch: pytest.MonkeyPatch, after_ranking_s: float) -> FakeClock:
    """A clock that stands still (`FakeClock`), moved on by `after_ranking_s` once the answer's ranking and the
    questions before room kept's are done: the seconds each solve after that was given, and the questions asked."""
    clock = FakeClock(monkeypatch)
    clock.advance_after(monkeypatch, "_with_lowered_fewer", after_ranking_s)
    return clock


def test_room_kept_ends_within_the_answers_time_limit(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _room_kept_clock(monkeypatch, after_ranking_s=9.5)  # of --time-limit 10: half a second left
    status, out, _ = cli(*AT_32K, "--json")
    assert status == 0 and json.loads(out)[0]["room_kept"]["margin"] == 0.04
    assert [query.margin for query in clock.asked] == [0.04] and clock.given == [0.5]  # room kept's one solve


def test_a_tiny_time_limit_holds_for_room_kept_too(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    # --time-limit 0.2, of which the ranking is taken to have taken 0.15 s: 0.05 s for room kept's solve, not 0.2 s
    # more
    clock = _room_kept_clock(monkeypatch, after_ranking_s=0.15)
    status, out, _ = cli(*AT_32K, "--time-limit", "0.2", "--json")
    assert status == 0 and json.loads(out)[0]["room_kept"]["margin"] == 0.04
    assert [query.margin for query in clock.asked] == [0.04] and clock.given == [pytest.approx(0.05)]


def test_room_kept_is_not_asked_once_the_time_limit_has_passed(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _room_kept_clock(monkeypatch, after_ranking_s=10.0)
    status, out, _ = cli(*AT_32K, "--json")
    (answer,) = json.loads(out)
    assert status == 0 and "thin-headroom" in answer["plans"][0]["caution_codes"]
    assert "room_kept" not in answer and (clock.asked, clock.given) == ([], [])


# (3) One helper for the cautions of one code (the fewer GPUs row, the patch's note, the LoRA MoE caution said once).

def test_cautions_coded() -> None:
    plan = solver.plan("Qwen3-30B-A3B", gpu="H20", budget_gpus=4, max_model_len=32768)[0].best
    assert plan is not None and plan.caution_codes == (CautionCode.THIN_HEADROOM, CautionCode.HOST_MEMORY_UNCHECKED)
    assert plan.cautions_coded(CautionCode.THIN_HEADROOM) == plan.cautions[:1]
    assert plan.cautions_coded(CautionCode.PADDED_MICRO_BATCHES) == ()
    # a plan from JSON made before codes has none to pick (the fewer GPUs row zipped strictly: a ValueError)
    old = Plan.model_validate({**plan.model_dump(mode="json"), "caution_codes": []})
    assert old.cautions and old.cautions_coded(CautionCode.THIN_HEADROOM) == ()


# (4) --lora-targets' check and a config's target_modules' check share what all-linear leaves out.

def test_beyond_all_linear() -> None:
    assert peft_target_match(".*(norm|lm_head)").beyond_all_linear == ("lm_head", "model.norm")
    assert peft_target_match(".*\\.(q_proj|embed_tokens)").beyond_all_linear == ("model.embed_tokens",)
    assert peft_target_match("all-linear").beyond_all_linear == ()


def test_each_check_keeps_its_words(cli: Cli, tmp_path: Path) -> None:
    status, _, err = cli("--model", "8B", *A100, "--lora-rank", "8", "--lora-targets", ".*(norm|lm_head)")
    assert status == 2 and err == (
        "solve: error: --lora-targets '.*(norm|lm_head)' matches lm_head, model.norm of Qwen3-8B, which all-linear "
        "leaves out and rft-solver does not count: give all-linear (Trinity's default: every linear layer but the "
        "output projection), module names separated by commas (q_proj,v_proj) or a regular expression that PEFT "
        "matches whole module names with (.*\\.(q_proj|v_proj))\n")
    config = _config(tmp_path, ".*(lm_head|q_proj)")
    status, out, _ = cli("--from-config", str(config), *A100, "--top", "1")
    assert status == 0 and ("(its target_modules '.*(lm_head|q_proj)' matches lm_head, which all-linear leaves out and "
                            "rft-solver does not count)") in " ".join(out.split())


# (5) Before: one row, its training cell "LoRA 16, no ref; LoRA 64, no ref; full, ref; LoRA 16, no ref; ..." for 20
# jobs, by position against the jobs cell.

def _fleet(tmp_path: Path, jobs: int, required: int = 0) -> Path:
    path = tmp_path / "fleet.yaml"
    lines = ["pools:", "  - {name: a100, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}", "jobs:"]
    for index in range(jobs):
        lora = (", lora_rank: 16", ", lora_rank: 64", "")[index % 3]
        must = ", required: true" if index < required else ""
        lines.append(f"  - {{name: j{index:02d}, model: Qwen3-8B, max_model_len: 32768, rollout_gpus: 4{lora}{must}}}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_unplaced_jobs_are_grouped_by_what_they_train(cli: Cli, tmp_path: Path) -> None:
    status, out, _ = cli("cluster", str(_fleet(tmp_path, 9)), "--minimize", "nodes")
    lines = [line for line in out.splitlines() if line.startswith("│")]
    rows = [[cell.strip() for cell in line.strip("│").split("│")] for line in lines]
    rows = [row for row in rows if row[0]]  # not a reason's wrapped lines
    assert status == 1 and [row[:2] for row in rows] == [
        ["j00, j03, j06", "LoRA 16, no ref"], ["j01, j04, j07", "LoRA 64, no ref"], ["j02, j05, j08", "full, ref"]]
    assert rows[0][2].startswith("the jobs do not all fit the fleet together") and rows[1][2] == rows[2][2] == ""


# (6) Before: "--buy --required j01,j02,...,j15" in one argument of 15 names.

def test_the_buy_hint_names_a_long_required_list_as_jobs(cli: Cli, tmp_path: Path) -> None:
    fleet = _fleet(tmp_path, 9, required=1)
    status, _, err = cli("cluster", str(fleet))
    assert status == 1 and err.endswith(
        "--buy --required all names the fewest GPUs, then nodes, to add to the pools (and the jobs no number of nodes "
        "runs)\n")  # s81: every job but j00, which is required already: all of them
    fleet = _fleet(tmp_path, 5, required=1)  # four others: the command, whole
    status, _, err = cli("cluster", str(fleet))
    assert status == 1 and err.endswith(
        f"solve cluster {fleet} --buy --required j01,j02,j03,j04 names the fewest GPUs, then nodes, to add to the "
        "pools (and the jobs no number of nodes runs)\n")
