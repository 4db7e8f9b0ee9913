"""Review of session 77's merges (session 77): ``solve --dpo`` refuses what Trinity's DPO never runs (a PPO critic, and
no reference model without LoRA: ``DPOAlgorithm``'s ``use_critic`` false, ``use_reference`` true,
``algorithm/algorithm.py:263-267`` in 0.6.0), with one line and exit 2, writing no file; the fragment's comment on
``trainer.use_dynamic_bsz`` names the actor's DPO pair of 2 where it writes one; the padded caution says that
``--dpo`` counts the pair too."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_padbound_s71 import INTERNLM2, Cli

from solver.rules import ONE_SEQUENCE_WIDER_WORDS

COMMON = ("--model-config", str(INTERNLM2), "--gpu", "h100", "--len", "8k", "--dpo")


NO_CRITIC = "--dpo trains no PPO critic (Trinity's dpo algorithm uses none): drop --critic {}"
NO_REFERENCE = ("--dpo without LoRA builds a reference model (Trinity's dpo algorithm uses one): drop --no-reference, "
                "or give --lora-rank")
PADDED = "off, with one sequence per micro-batch (the micro-batch sizes of 1 below), as the caution says"
PAIRED = ("off, with one sequence per micro-batch (the micro-batch sizes of 1 below; the actor's 2 holds one DPO pair, "
          "as its comment says), as the caution says")


@pytest.mark.parametrize(("flags", "error"), [
    (("--critic", "resident"), NO_CRITIC.format("resident")),
    (("--critic", "reloaded", "--emit", "trinity"), NO_CRITIC.format("reloaded")),
    (("--no-reference",), NO_REFERENCE),
])
def test_dpo_refuses_what_trinitys_dpo_never_runs(cli: Cli, tmp_path: Path, flags: tuple[str, ...],
                                                    error: str) -> None:
    """One line on stderr naming the flag to drop, exit 2, no output and no --out file."""
    out = tmp_path / "fragment.yaml"
    assert cli(*COMMON, *flags, "--out", str(out)) == (2, "", f"solve: error: {error}\n")
    assert not out.exists()


@pytest.mark.parametrize("flags", [("--critic", "none"), ("--no-reference", "--lora-rank", "8"), ("--reference",)])
def test_dpo_takes_what_trinitys_dpo_runs(cli: Cli, flags: tuple[str, ...]) -> None:
    """No critic counted, a LoRA run's reference model left out (the actor without its adapter stands in), or the
    reference model counted: all planned."""
    status, out, err = cli(*COMMON, *flags, "--emit", "trinity")
    assert (status, err) == (0, "")
    assert "ppo_micro_batch_size_per_gpu: 2" in out


def _dynamic_batch_comment(out: str) -> str:
    lines = out.splitlines()
    at = lines.index("  use_dynamic_bsz: false")
    start = max(index for index in range(at) if not lines[index].startswith("  #")) + 1
    return " ".join(line.removeprefix("  # ") for line in lines[start:at])


@pytest.mark.parametrize(("flags", "comment"), [
    ((), PAIRED), (("--trinity-version", "0.6"), PAIRED), (("--trinity-version", "0.5"), PADDED)])
def test_the_trainers_dynamic_batch_comment_names_the_actors_pair(cli: Cli, flags: tuple[str, ...],
                                                                   comment: str) -> None:
    """Where the fragment writes the actor's micro-batch size 2 for DPO's pair, the comment on the trainer's
    use_dynamic_bsz no longer says every size below is 1; for 0.5, which writes 1 (Trinity doubles it), it does."""
    status, out, err = cli(*COMMON, *flags, "--emit", "trinity")
    assert (status, err) == (0, "")
    assert _dynamic_batch_comment(out) == comment
    assert ("ppo_micro_batch_size_per_gpu: 2" in out) == ("the actor's 2" in comment)


def test_without_dpo_the_comment_is_as_before(cli: Cli) -> None:
    status, out, err = cli(*COMMON[:-1], "--emit", "trinity")
    assert (status, err) == (0, "")
    assert _dynamic_batch_comment(out) == PADDED


def test_the_padded_caution_says_dpo_counts_the_pair() -> None:
    assert ONE_SEQUENCE_WIDER_WORDS.endswith(
        "which the estimate counts where the plans are made for DPO (a config of algorithm_type dpo, or solve --dpo)")
