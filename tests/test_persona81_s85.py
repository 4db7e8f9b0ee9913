"""An ML engineer on L40S and RTX 4090 boxes, with Qwen2.5, Llama 3.1 and a Qwen3-4B fine-tune (s85's persona81):
the options their other tools (TRL, Megatron, LLaMA-Factory, Slurm) name a length and a node's host memory by."""

from __future__ import annotations

import pytest

ASKED = ("--model", "Qwen2.5-7B-Instruct", "--gpu", "l40s", "--len", "32k")


@pytest.mark.parametrize("written", ["--max-seq-len", "--max-seq-length", "--max_seq_length", "--seq-length",
                                     "--max-sequence-length", "--model-max-length", "--cutoff-len"])
@pytest.mark.parametrize("command", [(), ("memory", "--gpus", "8")])
def test_another_tools_sequence_length_is_told_len(cli, written: str, command: tuple[str, ...]):
    # TRL's max_seq_length, Megatron's --seq-length, HF's model_max_length, LLaMA-Factory's cutoff_len were told
    # nothing.
    prog = " ".join(("solve", *command[:1]))
    assert cli(*command, *ASKED, written, "16k") == (2, "", (
        f"usage: {prog} [options] (--help lists them)\n"
        f"{prog}: error: unrecognized arguments: {written} 16k (did you mean --len?)\n"))


@pytest.mark.parametrize("command", [(), ("memory", "--gpus", "8")])
def test_slurms_mem_is_told_host_ram_not_the_memory_model_file(cli, command: tuple[str, ...]):
    # Slurm's --mem (a node's host memory) was told "did you mean --memory-model?", an option that takes a file.
    prog = " ".join(("solve", *command[:1]))
    assert cli(*command, *ASKED, "--mem", "256G") == (2, "", (
        f"usage: {prog} [options] (--help lists them)\n"
        f"{prog}: error: unrecognized arguments: --mem 256G (did you mean --host-ram?)\n"))


def test_slurms_mem_to_solve_cluster_gets_no_guess_of_the_memory_model(cli):
    # solve cluster takes host memory from a pool's host_ram_gb; the prefix guess --memory-model was wrong (that field
    # is named, as for --host-ram: session 85, smallslips48).
    assert cli("cluster", "fleet.yaml", "--mem", "256G") == (2, "", (
        "usage: solve cluster [options] (--help lists them)\n"
        "solve cluster: error: unrecognized arguments: --mem 256G (the file gives it: a pool's host_ram_gb)\n"))


def test_a_name_of_another_tool_still_guesses_the_option_it_starts_by_whole_words(cli):
    # --trinity (solve's --emit trinity) is the start of solve memory's --trinity-version, word for word.
    assert cli("memory", "--gpus", "8", *ASKED, "--trinity")[2].endswith(
        "solve memory: error: unrecognized arguments: --trinity (did you mean --trinity-version?)\n")


@pytest.mark.parametrize("written", ["--documented", "--tables-only", "--evidence documented"])
def test_asking_for_the_tables_alone_is_told_no_estimate(cli, written: str):
    # A maintainer auditing the tables asks for the tables alone (s89's persona89c): it was told nothing.
    assert cli(*ASKED, "--gpus", "2", *written.split()) == (2, "", (
        "usage: solve [options] (--help lists them)\n"
        f"solve: error: unrecognized arguments: {written} (did you mean --no-estimate?)\n"))
