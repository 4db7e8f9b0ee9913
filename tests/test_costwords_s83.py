"""One way of saying the cost ratio, and small words (session 83, costwords). (1) The summary's ``validated`` and
``tables' best`` rows and the cluster's note on solve's best said ``N.NNx the cost`` where every other line says
``N.NNx the relative step time`` (`cost_ratio_words`, docs/planner.md's cost model): they all say the latter now. (2)
An explanation that ran out of time (``incomplete``) said what is missing but not what to do: it names the longer
limit that shows it, as ``undecided`` does. (3) A longest length's plan fills the memory up to the safety margin, so
its room to spare rounds to ``0.0 GiB`` (Qwen3-32B on two nodes of 8 H800s: 0.02 GiB): no rounding slip, the margin
keeps 0.74 GiB beside it. A plan's ``margin_gb`` gives what the margin keeps, and the words name it where the room
rounds to nothing, so that the plan is not read as on the edge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_clusterplans_s81 import LORA_BESIDE_FULL

import solver
from solver.render.phrases import cost_ratio_words

H800_LONGEST = ("--model", "32B", "--gpu", "h800", "--gpus", "16", "--maximize", "len", "--node-gpus", "8")
"""Persona 64's question: the longest context of Qwen3-32B on two nodes of 8 H800s."""


def _joined(out: str) -> str:
    return " ".join(out.split())


def test_the_validated_row_words_its_cost_ratio_as_the_relative_step_time(cli):
    status, out, _ = cli("--model", "8B", "--gpu", "mi300x", "--gpus", "8", "--maximize", "len")
    assert status == 0 and ("validated at 131072 (the longest YaRN is validated for), the cheapest plan is Env + SP=4 "
                            "on 8 GPUs (estimated, extrapolated; 0.38x the relative step time): --len 131072"
                            ) in _joined(out)
    assert "x the cost" not in out


def test_the_tables_best_row_says_the_tables_measured_the_default_budget_a_lowered_plan_lowers(cli):
    # s89: with --token-budget auto, 8B at 8k on 2 A100s is Env + SP=2 at 4096 tokens per GPU, a setting the table
    # (Env + Offload) says ran out of memory: at the default budget, which the row now says the plan lowers.
    status, out, _ = cli("--model", "8B", "--gpu", "a100", "--len", "8k", "--gpus", "2", "--token-budget", "auto")
    assert status == 0 and "plan Env + SP=2 on 2 of 2 GPUs" in _joined(out)
    assert ("tables' best Env + Offload on 2 GPUs at 8192 (documented; 1.82x the relative step time), if you prefer "
            "the tables' evidence to the memory model's; the tables measured Trinity's default token budget alone, "
            "which this plan lowers (a setting they say ran out of memory did so at the default)") in _joined(out)


def test_the_tables_best_row_words_its_cost_ratio_as_the_relative_step_time(cli):
    flags = ("--model", "8B", "--gpu", "a100", "--len", "65536", "--gpus", "8")
    status, out, _ = cli(*flags)
    assert status == 0 and ("tables' best Env + Offload + SP=4 on 8 GPUs at 65536 (inferred; 2.00x the relative step "
                            "time), if you prefer the tables' evidence to the memory model's") in _joined(out)
    assert "x the cost" not in out
    (answer,) = solver.plan("8B", gpu="a100", max_model_len=65536, budget_gpus=8)
    assert answer.measured is not None and answer.best is not None
    assert cost_ratio_words(answer.measured, answer.best) == "2.00x the relative step time"  # the one helper's words
    status, out, _ = cli(*flags, "--json")
    (shown,) = json.loads(out)
    assert status == 0 and round(shown["measured"]["cost"] / shown["plans"][0]["cost"], 2) == 2.0


def test_the_clusters_note_on_solves_best_words_its_cost_ratio_as_the_relative_step_time(cli, tmp_path: Path):
    path = tmp_path / "fleet.yaml"
    path.write_text(LORA_BESIDE_FULL, encoding="utf-8")
    status, out, _ = cli("cluster", str(path))
    assert status == 0 and (
        "lora-agent-8b: solve's best on its 2 trainer GPUs at 32768 is Env + SP=2 (estimated; 0.50x the relative "
        "step time; 65.8 GiB per GPU predicted, 7.8 GiB to spare); placed on the tables' Env + Offload + SP=2 "
        "(inferred), as the cluster takes the tables' plans first") in _joined(out)
    assert "x the cost" not in out
    status, out, _ = cli("cluster", str(path), "--json")
    (placed,) = [placement for placement in json.loads(out)["placements"] if placement["job"] == "lora-agent-8b"]
    assert status == 0 and (placed["solve_best"]["cost"], placed["plan"]["cost"]) == (0.5555, 1.111)


INCOMPLETE = ("435 of the questions behind this explanation ran out of time (--time-limit 5 s for the whole "
              "explanation): what they would have shown is missing above; a longer --time-limit shows it")


@pytest.mark.wall_clock  # about the wall clock: sets the explanation's own
@pytest.mark.parametrize("json_out", [False, True])
def test_an_incomplete_explanation_names_the_longer_limit_that_shows_what_is_missing(
        cli, monkeypatch: pytest.MonkeyPatch, json_out: bool):
    clock = iter([0.0])  # the explanation's deadline is set at 0 s; every later look at the clock is long past it
    monkeypatch.setattr("solver.explain.monotonic", lambda: next(clock, 1e9))
    flags = ("--model", "4B", "--gpu", "a100", "--gpus", "6", "--exact", "--maximize", "len", "--no-estimate",
             "--explain", "--time-limit", "5")
    status, out, _ = cli(*flags, *(["--json"] if json_out else []))
    if json_out:
        (answer,) = json.loads(out)
        assert status == 0 and answer["explanation"][-1] == {"rule": "incomplete", "detail": INCOMPLETE}
    else:
        assert status == 0 and f"incomplete {INCOMPLETE}" in _joined(out)


def test_a_longest_lengths_plan_at_no_room_to_spare_names_what_the_margin_keeps(cli):
    status, out, _ = cli(*H800_LONGEST)
    assert status == 0 and ("memory 73.2 GiB per GPU predicted, 0.0 GiB to spare beyond the 0.7 GiB the safety margin "
                            "keeps (memory model)") in _joined(out)
    # The room kept at the margin its caution names is 0.1 GiB: shown as it is, without the margin's words.
    assert ("1.00x the relative step time (estimated, extrapolated; 70.2 GiB per GPU predicted, 0.1 GiB to spare, "
            "held to that margin)") in _joined(out)
    status, out, _ = cli(*H800_LONGEST, "--json")
    (answer,) = json.loads(out)
    best = answer["plans"][0]
    # No rounding slip: 0.02 GiB to spare, beside the 0.74 GiB that margin 0.01 keeps of the 73.95 usable with Env.
    assert status == 0 and (answer["margin"], best["max_model_len"], best["memory_gb"], best["headroom_gb"],
                            best["margin_gb"], best["headroom_at_step"]) == (0.01, 158720, 73.19, 0.02, 0.74, False)
    kept = answer["room_kept"]
    assert (kept["margin"], kept["plan"]["headroom_gb"], kept["plan"]["margin_gb"]) == (0.05, 0.06, 3.7)


def test_a_plan_with_room_to_spare_says_it_alone_and_gives_its_margin_in_json(cli):
    status, out, _ = cli("--model", "8B", "--gpus", "4", "--len", "32768", "--gpu", "a100")
    assert status == 0 and "memory 61.1 GiB per GPU predicted, 10.2 GiB to spare (memory model)" in _joined(out)
    status, out, _ = cli("--model", "8B", "--gpus", "4", "--len", "32768", "--gpu", "a100", "--json")
    best = json.loads(out)[0]["plans"][0]
    # A documented plan's figures at the memory model's own margin, 0.01 of the A100's 72.3 GiB usable without Env.
    assert status == 0 and (best["evidence"], best["headroom_gb"], best["margin_gb"]) == ("documented", 10.21, 0.72)


def test_the_margins_words_follow_the_room_as_it_rounds():
    (answer,) = solver.plan("32B", gpu="h800", budget_gpus=16, objective="max_len", node_gpus=8)
    best = answer.best
    assert best is not None and round(best.headroom_gb, 2) == 0.02 and round(best.margin_gb, 2) == 0.74
    kept = " beyond the 0.7 GiB the safety margin keeps"
    assert best.room_words == f"0.0 GiB to spare{kept}"
    assert best.model_copy(update={"headroom_gb": 0.049}).room_words == f"0.0 GiB to spare{kept}"
    assert best.model_copy(update={"headroom_gb": 0.05}).room_words == "0.1 GiB to spare"  # rounds to something
    assert best.model_copy(update={"headroom_gb": -0.01}).room_words == "less than 0.1 GiB over what it may take"
    assert best.model_copy(update={"margin_gb": 0.0}).room_words == "0.0 GiB to spare"  # at margin 0, none kept
    assert best.model_copy(update={"headroom_at_step": True}).room_words == (
        f"0.0 GiB to spare{kept} at the optimizer step's peak, the tighter one")


def test_memory_md_quotes_the_margins_words_as_solve_prints_them(cli):
    docs = _joined((Path(__file__).parent.parent / "docs" / "memory.md").read_text(encoding="utf-8"))
    said = "41.3 GiB per GPU predicted, 0.0 GiB to spare beyond the 0.4 GiB the safety margin keeps"
    assert f"on four L40Ss at `--margin 0.01`: `{said}`)" in docs
    status, out, _ = cli("--model", "0.6B", "--gpu", "l40s", "--gpus", "4", "--maximize", "len", "--margin", "0.01")
    assert status == 0 and f"memory {said} (memory model)" in _joined(out)


def test_the_tables_best_row_under_fewest_gpu_hours_says_the_gpu_hours_it_ranks_by(cli):
    # s91 (persona91b): the best plan by GPU-hours is an estimate on 8 GPUs; the tables' best, on 4, is 4x its step
    # time but only 2x its GPU-hours, the figure the question ranks by: the row said the step time alone.
    status, out, _ = cli("--model", "8B", "--gpu", "a100", "--len", "65536", "--gpus", "8", "--minimize", "gpu-hours")
    assert status == 0 and "plan Env + SP=4 on 8 of 8 GPUs" in _joined(out)
    assert ("tables' best Env + Offload + SP=4 on 4 GPUs at 65536 (documented; 2.00x the GPU-hours, 4.00x the "
            "relative step time), if you prefer the tables' evidence to the memory model's") in _joined(out)
    # s91 (purchase91): the for rollout row, which compares the same plan with the best, says the GPU-hours too
    assert ("for rollout --total-gpus 8 --rollout-gpus 4 keeps 4 of the 8 for it: Env + Offload + SP=4 on 4 trainer "
            "GPUs, 65536 tokens, 2.00x the GPU-hours, 4.00x the relative step time (documented)") in _joined(out)


def test_the_other_batch_row_under_fewest_gpu_hours_says_the_gpu_hours_it_ranks_by(cli):
    # s91 (purchase91): a batch of 100 that 3 ranks do not divide leaves 8 GPUs the best; the plan on 6 takes as many
    # GPU-hours, which the row said nothing of (1.33x the relative step time alone, as if it cost a third more).
    status, out, _ = cli("--model", "8B", "--len", "40960", "--minimize", "gpu-hours", "--gpu", "h20",
                         "--train-batch-size", "100")
    assert status == 0 and "plan Env + SP=2 on 8 GPUs" in _joined(out)
    assert ("other batch with a train batch that 3 data-parallel ranks divide: Env + SP=2 on 6 GPUs, 2 GPUs fewer, "
            "1.00x the GPU-hours, 1.33x the relative step time (documented)") in _joined(out)
