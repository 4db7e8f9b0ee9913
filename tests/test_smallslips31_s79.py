"""Slips persona54 (s79) met planning Qwen3-14B and Qwen3-30B-A3B GRPO runs on 4 H20s: a best plan on thin headroom
gets the cheapest plan that keeps the room its caution asks for (a second solve at the caution's margin:
``Answer.room_kept``, a ``more room`` row, a note under the ranked plans), where the ranking by cost alone left it
out; the ``--minimize gpus`` ``fewer GPUs`` row carries its plan's thin-headroom caution; on a mixture of experts
whose LoRA config PEFT converts, the verdict leaves out the dense model's ``lora-targets-saved-split``; and
``--write``'s check command leaves out ``--lora-rank`` where the config's own adapter is of the plan's rank. (s89) The
other rows showing a second plan (fewer nodes, more room, for rollout, other batch, unpinned) and --explain's
lower_token_budget line carry the cautions that plan has and the best plan lacks, as the fewer-GPUs row does."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from test_persona54_s79 import CONFIG
from test_smallslips7_s68 import _row

import solver
from solver.results import BESIDE_CAUTION_CODES

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
        f"(estimated, extrapolated); caution: {THIN}") and _row(out, "fewer GPUs").endswith(
        # short: the best plan's own host caution (on 4 GPUs) tells how to check it (s89: short89)
        "; caution: Offload needs 681.1 GiB of host memory per node, more than the 128 GiB assumed (unchecked: "
        "--host-ram)")


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


# Each other line that shows a second plan beside the best one ends with the cautions that plan carries and the best
# does not (Plan.cautions_beside, as the fewer-GPUs row's; s89). Before: none of them, so a user taking that plan was
# not told its Offload needs more host memory than a node is assumed to have, or that its length is past YaRN's
# validated one.
HOST_6 = ("; caution: Offload needs 1086.3 GiB of host memory per node (181.1 GiB per trainer GPU; at start-up, every "
          "rank loading the model; 775.2 while training), more than the 768 GiB assumed for its 6 trainer GPUs there")
# Where the answer shows a full host caution already (the best plan's own row), a row says its own short (short89):
# the need and what it exceeds, the advice on checking it left to the full one.
SHORT_6 = ("; caution: Offload needs 1086.3 GiB of host memory per node, more than the 768 GiB assumed (unchecked: "
           "--host-ram)")


def _beside(out: str, label: str) -> str:
    """The cautions a summary row's second plan ends with: from its first ``; caution: ``."""
    row = _row(out, label)
    return row[row.index("; caution: "):]


def test_the_fewer_nodes_row_carries_its_plans_host_caution(cli: Cli) -> None:
    status, out, _ = cli("--model", "32B", "--gpu", "h20", "--gpus", "8", "--rollout-gpus", "2", "--len", "32768",
                         "--json")
    (answer,) = json.loads(out)
    fewer, best = answer["fewer_nodes"], answer["plans"][0]
    # JSON carried it already: the 6-GPU plan's host caution, another than the best plan's own (on 8 GPUs).
    (host,) = [words for words, code in zip(fewer["cautions"], fewer["caution_codes"], strict=True)
               if code == "host-memory-unchecked"]
    assert status == 0 and host not in best["cautions"]
    out = cli("--model", "32B", "--gpu", "h20", "--gpus", "8", "--rollout-gpus", "2", "--len", "32768")[1]
    assert _row(out, "fewer nodes").endswith(f"(estimated, extrapolated): --gpus 6{SHORT_6}")
    assert host.startswith(HOST_6.removeprefix("; caution: "))


def test_the_more_room_and_for_rollout_rows_carry_their_plans_host_caution(cli: Cli) -> None:
    # The best plan's own host caution is another (1060.3 GiB while the model loads, no Offload): each row says its own.
    status, out, _ = cli("--model", "30B-A3B", "--gpu", "h20", "--gpus", "8", "--len", "65536")
    assert status == 0 and "caution        the trainer needs 1060.3 GiB of host memory per node" in out
    assert _beside(out, "more room") == (
        "; caution: Offload needs 1211.5 GiB of host memory per node, more than the 1024 GiB assumed (unchecked: "
        "--host-ram)")
    assert _beside(out, "for rollout") == (
        "; caution: Offload needs 757.1 GiB of host memory per node, more than the 512 GiB assumed (unchecked: "
        "--host-ram)")
    # Before (short89): each row repeated, word for word, the advice the best plan's own caution row gives.
    assert out.count("what a node can spare for the trainer") == 1


def test_the_other_batch_row_carries_its_plans_host_caution(cli: Cli) -> None:
    status, out, _ = cli("--model", "32B", "--gpu", "h20", "--gpus", "6", "--train-batch-size", "4", "--len", "32768")
    assert status == 0 and _beside(out, "other batch") == SHORT_6


def test_the_unpinned_row_carries_its_plans_length_caution(cli: Cli) -> None:
    # Without --no-offload the longest plan reaches 203776 tokens, past the 131072 YaRN is validated for; 157696 is not.
    status, out, _ = cli("--model", "8B", "--gpu", "a100-80gb", "--gpus", "8", "--no-offload", "--maximize", "len")
    assert status == 0 and _beside(out, "unpinned") == (
        "; caution: YaRN factor 4.975 at 203776 tokens: longer than YaRN is validated for (Qwen's model cards validate "
        "a factor of 4 over 32768 positions: 131072 tokens): check the model's quality at this length")


def test_the_explained_lower_token_budget_line_carries_its_plans_cautions(cli: Cli) -> None:
    status, out, _ = cli("--model", "30B-A3B", "--gpu", "h20", "--minimize", "gpus", "--len", "65536", "--explain",
                         "--json")
    (answer,) = json.loads(out)
    (line,) = [reason["detail"] for reason in answer["explanation"] if reason["rule"] == "lower_token_budget"]
    fewer = answer["token_budget_auto"]
    assert status == 0 and fewer["caution_codes"] == ["thin-headroom", "host-memory-unchecked"]
    assert line.endswith("".join(f"; caution: {caution}" for caution in fewer["cautions"]))


def test_a_host_caution_beside_a_best_plan_without_one_is_full_on_the_first_row_alone() -> None:
    # Trinity 0.6 loads the model on rank 0 alone: the best plan (Env + SP=8, no Offload) needs no caution on host memory
    # and its rollout-keeping plan does. The first row that needs it says it in full; a row below it, short (short89).
    (answer,) = solver.plan("30B-A3B", gpu="h20", budget_gpus=8, max_model_len=65536, trinity_version="0.6")
    best, kept = answer.plans[0], answer.rollout_kept
    assert kept is not None and kept.plan is not None
    other = kept.plan
    (host,) = other.cautions_coded(solver.CautionCode.HOST_MEMORY_UNCHECKED)
    assert not best.cautions_coded(solver.CautionCode.HOST_MEMORY_UNCHECKED) and "and nothing checks it: give" in host
    assert other.cautions_beside(best, ()) == other.cautions_beside(best) == f"; caution: {host}"
    # Beside no best plan (an --explain line where none fits: cautions90), all of them, the host caution short below a
    # line with it in full. Before: best was required, and those lines said none.
    assert other.cautions_beside(None) == "".join(
        f"; caution: {words}" for words, code in zip(other.cautions, other.caution_codes, strict=True)
        if code in BESIDE_CAUTION_CODES)
    assert f"; caution: {host}" in other.cautions_beside(None, ())
    assert other.cautions_beside(None, (other,)) == other.cautions_beside(None).replace(
        f"; caution: {host}", other.cautions_beside(best, (other,)))
    assert other.cautions_beside(best, (other,)) == (
        "; caution: Offload needs 681.1 GiB of host memory per node, more than the 512 GiB assumed (unchecked: "
        "host_ram_gb)")  # the API's keyword, as the full caution names it
    # Built from the bound the caution was made with (the node's assumed 512 GiB, host_ram_gb), not read back from
    # its words (hostfield90): reworded, it is as short. Before: a regex on the words, whole where they did not match.
    reworded = other.model_copy(update={"cautions": tuple(
        "Offload: host memory past a node's, unchecked" if words == host else words for words in other.cautions)})
    assert reworded.cautions_beside(best, (other,)) == other.cautions_beside(best, (other,))
    # The plan keeps that bound (host_ram_assumed, in its JSON too): rebuilt, it says the caution as short, and an
    # answer rebuilt from its JSON shows the text solve shows (hostfield90b). Before: the bound a private attribute,
    # lost, the rebuilt rows saying it whole.
    rebuilt = solver.Plan.model_validate(other.model_dump())
    assert rebuilt == other and rebuilt.host_ram_assumed == solver.HostRamAssumed(gb=512, source="host_ram_gb")
    assert rebuilt.cautions_beside(best, (other,)) == other.cautions_beside(best, (other,))
    (shown,) = solver.plan("30B-A3B", gpu="h20", budget_gpus=8, max_model_len=65536)  # 2 rows short, beside a full one
    text = solver.answers_text([shown])
    assert text.count("(unchecked: host_ram_gb)") == 2
    assert solver.answers_text([solver.Answer.model_validate_json(shown.model_dump_json())], shown.query) == text
