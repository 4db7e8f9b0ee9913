"""Slips persona54 (s79) met planning Qwen3-14B and Qwen3-30B-A3B GRPO runs on 4 H20s: a best plan on thin headroom
gets the cheapest plan that keeps the room its caution asks for (a second solve at the caution's margin:
``Answer.room_kept``, a ``more room`` row, a note under the ranked plans), where the ranking by cost alone left it
out; the ``--minimize gpus`` ``fewer GPUs`` row carries its plan's thin-headroom caution; on a mixture of experts
whose LoRA config PEFT converts, the verdict leaves out the dense model's ``lora-targets-saved-split``; and
``--write``'s check command leaves out ``--lora-rank`` where the config's own adapter is of the plan's rank."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from test_persona54_s79 import CONFIG
from test_smallslips7_s68 import _row

import solver

Cli = Callable[..., tuple[int, str, str]]

AT_32K = ("--model", "30B-A3B", "--gpu", "h20", "--gpus", "4", "--len", "32768")
MORE_ROOM = ("--margin 0.04 keeps the room its caution asks for: Env + Offload + SP=2 on 4 GPUs, 32768 tokens, 1.10x "
             "the relative step time (estimated, extrapolated; 47.8 GiB per GPU predicted, 37.4 GiB to spare, held to "
             "that margin)")
THIN = ("0.4 GiB to spare where the estimate extrapolates, and its error there is unmeasured (its gathered layers may "
        "take 1.5 GiB more than the fit counts (large layers): docs/memory.md in rft-solver's source); --margin 0.04 "
        "keeps 2.7 GiB more to spare than the default 0.01 here, or measure a step first")
REGEX = "      target_modules: '.*\\.(q_proj|k_proj|v_proj|o_proj)'"


def test_a_plan_on_thin_headroom_gets_the_cheapest_plan_with_the_room_its_caution_asks_for(cli: Cli) -> None:
    # Before: the ranking listed Env + Offload at SP=1 alone (87.5 GiB, 0.4 GiB to spare) on 4, 3, 2 and 1 GPUs; SP=2
    # on 4 (47.8 GiB, 1.10x the cost) is no cheaper, on no fewer GPUs, and so ranked out. --margin 0.04 picks it.
    status, out, _ = cli(*AT_32K, "--top", "5", "--json")
    (answer,) = json.loads(out)
    best, kept = answer["plans"][0], answer["room_kept"]
    assert status == 0 and [(plan["gpus"], plan["sp"]) for plan in answer["plans"]] == [(4, 1), (3, 1), (2, 1), (1, 1)]
    assert (best["headroom_gb"], best["caution_codes"]) == (0.38, ["thin-headroom", "host-memory-unchecked"])
    plan = kept["plan"]
    assert (kept["margin"], plan["gpus"], plan["env"], plan["offload"], plan["sp"], plan["max_model_len"],
            plan["memory_gb"], plan["headroom_gb"], plan["caution_codes"]) == (
        0.04, 4, True, True, 2, 32768, 47.78, 37.41, ["host-memory-unchecked"])
    # the same plan as --margin 0.04 gives, CP-SAT's, not a filter of the ranked plans
    status, out, _ = cli(*AT_32K, "--margin", "0.04", "--json")
    (roomy,) = json.loads(out)
    assert roomy["plans"][0] == plan and "room_kept" not in roomy
    assert solver.Answer.model_validate(answer).room_kept == solver.RoomKept(
        margin=0.04, plan=solver.Plan.model_validate(plan))


def test_the_summary_and_the_ranking_say_it(cli: Cli) -> None:
    status, out, _ = cli(*AT_32K, "--top", "5")
    assert status == 0 and _row(out, "more room") == MORE_ROOM
    words = " ".join(out.split())
    assert f"#1 has thin headroom: {MORE_ROOM} 4 plans of the 5 asked for" in words
    _, out, _ = cli(*AT_32K)  # the single answer too
    assert _row(out, "more room") == MORE_ROOM and "ranked plans" not in out


def test_no_plan_with_that_room_is_said(cli: Cli) -> None:
    # Qwen3-30B-A3B at 65536 on 1 H20 trains with a lowered budget alone, 0.4 GiB to spare; at --margin 0.04 nothing
    # trains it on one.
    status, out, _ = cli("--model", "30B-A3B", "--gpu", "h20", "--gpus", "1", "--len", "65536", "--token-budget",
                         "auto")
    assert status == 0 and _row(out, "more room") == (
        "--margin 0.04, which keeps the room its caution asks for, leaves no plan for 65536 tokens within 1 GPU: "
        "measure a step first")
    _, out, _ = cli("--model", "30B-A3B", "--gpu", "h20", "--gpus", "1", "--len", "65536", "--token-budget", "auto",
                    "--json")
    assert json.loads(out)[0]["room_kept"] == {"margin": 0.04, "plan": None}


def test_a_plan_with_room_asks_nothing_more(cli: Cli) -> None:
    _, out, _ = cli("--model", "14B", "--gpu", "h20", "--gpus", "4", "--len", "32768", "--json")
    (answer,) = json.loads(out)
    assert "thin-headroom" not in answer["plans"][0]["caution_codes"] and "room_kept" not in answer


def test_the_fewer_gpus_hint_carries_its_thin_headroom(cli: Cli) -> None:
    # Before: "... with a lowered max_token_len_per_gpu of 65536 (estimated, extrapolated)", 0.38 GiB to spare unsaid.
    status, out, _ = cli("--model", "30B-A3B", "--gpu", "h20", "--minimize", "gpus", "--len", "65536")
    # The host memory its Offload needs past the node's assumed 128 GiB follows, as the plan's own row says (s89).
    assert status == 0 and _row(out, "fewer GPUs").startswith(
        "--token-budget auto trains it on 1 GPU (3 fewer): Env + Offload with a lowered max_token_len_per_gpu of 65536 "
        f"(estimated, extrapolated); caution: {THIN}; caution: Offload needs 681.1 GiB of host memory per node, more "
        "than the 128 GiB assumed for its one trainer GPU there")


def _codes(cli: Cli, tmp_path: Path, model: str) -> list[str]:
    config = tmp_path / "grpo.yaml"
    config.write_text((CONFIG % REGEX).replace("Qwen/Qwen3-14B", model))
    _, out, _ = cli("--from-config", str(config), "--check", "--gpu", "h20", "--json")
    return list(json.loads(out)[0]["current"]["config_problem_codes"])


def test_a_converted_mixture_of_experts_gets_no_saved_split_line(cli: Cli, tmp_path: Path) -> None:
    # Before: lora-targets-saved-split too, whose words say it is a dense model's, not this one's.
    assert _codes(cli, tmp_path, "Qwen/Qwen3-30B-A3B") == ["lora-moe-config-unsaved", "lora-counted-as-full"]
    assert _codes(cli, tmp_path, "Qwen/Qwen3-14B") == ["lora-counted-as-full", "lora-targets-saved-split"]


def _check_line(cli: Cli, tmp_path: Path, config_text: str, *flags: str) -> str:
    config, written = tmp_path / "grpo.yaml", tmp_path / "out.yaml"
    config.write_text(config_text)
    status, _, _ = cli("--from-config", str(config), "--gpu", "h20", "--write", str(written), *flags)
    assert status == 0
    (line,) = [line for line in written.read_text().splitlines() if "solve --from-config" in line]
    return line.strip().split(" solve ", 1)[1]


def test_the_write_check_command_leaves_out_the_configs_own_lora_rank(cli: Cli, tmp_path: Path) -> None:
    # Before: "... --check --gpu H20-96GB --lora-rank 64", the rank the config's model.lora_configs sets.
    with_lora = CONFIG % REGEX
    assert _check_line(cli, tmp_path, with_lora) == f"--from-config {tmp_path / 'out.yaml'} --check --gpu H20-96GB"
    assert _check_line(cli, tmp_path, with_lora, "--lora-rank", "64") == (
        f"--from-config {tmp_path / 'out.yaml'} --check --gpu H20-96GB")
    # a config without LoRA, planned with --lora-rank 64: the command keeps it
    plain = with_lora.replace("  lora_configs:\n    - lora_rank: 64\n      lora_alpha: 128\n" + REGEX + "\n", "")
    assert "lora" not in plain.replace("math-64k-lora", "")
    assert _check_line(cli, tmp_path, plain, "--lora-rank", "64") == (
        f"--from-config {tmp_path / 'out.yaml'} --check --gpu H20-96GB --lora-rank 64")
