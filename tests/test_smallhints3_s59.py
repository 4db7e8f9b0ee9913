"""Small traps a user met (session 59): free -m's MiB given as --host-ram GB, Ollama's model tags, a cells file's
nvidia-smi MiB as memory_gb, and the --explain row that said nothing goes longer without the GPU budget."""

from __future__ import annotations

from pathlib import Path

import pytest

import solver
from solver.tables import load_catalog

CATALOG = load_catalog()
USAGE = "usage: solve [options] (--help lists them)"


@pytest.mark.parametrize(("free_m", "gib", "kb_reading"), [
    ("515870", "503.7", ""), ("64214", "62.7", ""),
    ("2063512", "2015.1", (" or 2063512kB if it is /proc/meminfo's MemTotal (1.9 GiB)")),
    ("1031900", "1007.7", "")])
def test_free_m_total_given_as_host_ram_gb_is_refused_with_both_readings(cli, free_m: str, gib: str, kb_reading: str):
    # A 512 GB node's free -m total was taken as 515870 GB: every plan fit, silently.
    status, out, err = cli("--model", "14B", "--gpu", "h100", "--len", "32k", "--host-ram", free_m)
    assert (status, out) == (2, "")
    assert err.splitlines() == [USAGE, (
        f"solve: error: argument --host-ram: a number without a unit is GB up to 4096, got {free_m}: give its unit, "
        f"{free_m}MiB if it is free -m's total ({gib} GiB){kb_reading}")]
    with pytest.raises(solver.QueryError) as caught:
        solver.plan("14B", gpu="h100", max_model_len=32768, host_ram_gb=float(free_m))
    assert str(caught.value) == (
        f"host_ram_gb must be above 0 and at most 49152 GB, got {free_m} (no node has {free_m} GB; if it is free -m's "
        f"total in MiB, {gib} GiB, give host_ram_gb={gib})")
    # Qwen3-4B at 16384 tokens (on one or two GPUs, 36.2 or 51.1 GiB) fits 64 GB's 62.7 GiB; Qwen3-14B (122.9 up) not.
    status, out, err = cli("--model", "4B", "--gpu", "h100", "--len", "16k", "--host-ram", gib)
    assert (status, err) == (0, "") and f"within --host-ram {gib} GiB" in out


@pytest.mark.parametrize("given", ["48TB", "49152GB", "2TB", "1024", "4096"])
def test_the_largest_nodes_host_memory_is_still_taken(cli, given: str):
    # The most one system is sold with (48 TB, HPE's Superdome Flex) is the bound, included.
    status, out, err = cli("--model", "14B", "--gpu", "h100", "--len", "32k", "--host-ram", given)
    assert (status, err) == (0, "") and "--host-ram" in out


@pytest.mark.parametrize("given", ["49153GB", "49TB", "1e9"])
def test_host_ram_past_the_bound_with_a_unit_or_past_any_mib_figure_gets_no_mib_hint(cli, given: str):
    # A unit written is a unit meant; past 48 TiB in MiB, no node's free -m total either.
    status, _, err = cli("--model", "14B", "--gpu", "h100", "--len", "32k", "--host-ram", given)
    assert (status, err.splitlines()[-1]) == (2, ("solve: error: argument --host-ram: must be above 0 and at most "
                                                  f"49152 GB, got {given}"))


def test_a_cells_files_nvidia_smi_mib_as_memory_gb_is_refused_with_the_mib_hint(cli, tmp_path: Path):
    # A 16 GB card's 16376 MiB as memory_gb: refused (past 4096 GB), and now told it reads as MiB, as --gpu-memory is.
    cells = tmp_path / "cells.yaml"
    cells.write_text(Path("docs/examples/my-cells.yaml").read_text(encoding="utf-8").replace(
        "gpu: H100-80GB", "gpu: Mine-16G").replace("memory_gb: 80", "memory_gb: 16376"), encoding="utf-8")
    status, out, err = cli("--cells", str(cells), "--model", "8B", "--gpu", "mine-16g", "--len", "8k")
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] == (f"solve: error: --cells {cells}: line 8: memory_gb: must be at most 4096, got "
                                    "16376 (no GPU has 16376 GB; if it is nvidia-smi's total in MiB, 16.0 GiB, give "
                                    "memory_mib: 16376)")


@pytest.mark.parametrize(("tag", "meant"), [
    ("qwen3:32b", "Qwen3-32B"), ("llama3.1:8b", "Llama-3.1-8B"), ("qwen2.5:7b", "Qwen2.5-7B"),
    ("qwen3:0.6b", "Qwen3-0.6B"), ("qwen3:32b-q4_K_M", "Qwen3-32B"), ("llama3.1:70b", "Llama-3.1-70B")])
def test_an_ollama_tag_is_refused_with_the_model_it_names_as_a_guess(cli, tag: str, meant: str):
    # Ollama's tags got no guess, while qwen8b did: still refused (a guess is no answer), but with the name to give.
    status, out, err = cli("--model", tag, "--gpu", "h100", "--len", "32k")
    assert (status, out) == (2, "")
    assert err.startswith(f"solve: error: unknown model '{tag}' (did you mean {meant}?); accepted: ")
    with pytest.raises(solver.QueryError) as caught:
        CATALOG.model(tag)
    assert str(caught.value).startswith(f"unknown model '{tag}' (did you mean {meant}?); accepted: ")


@pytest.mark.parametrize("tag", ["qwen3:latest", "qwen3:4b-instruct-2507-fp16"])
def test_an_ollama_tag_that_names_no_one_model_gets_no_guess(cli, tag: str):
    # qwen3:latest names no size; the fp16 build extends both Qwen3-4B and Qwen3-4B-Instruct-2507.
    status, _, err = cli("--model", tag, "--gpu", "h100", "--len", "32k")
    assert status == 2 and err.startswith(f"solve: error: unknown model '{tag}'; accepted: ")


def _longest_row(cli, *flags: str) -> str:
    """The ``longest_documented`` row of a --maximize len --explain answer, its continuation joined."""
    status, out, _ = cli(*flags, "--maximize", "len", "--explain")
    assert status == 0
    row = out.split("\nlongest_documented", 1)[1]
    return " ".join(row.split())


def test_the_longest_row_names_the_budget_it_holds_within(cli):
    # On one RTX 4090 the row said nothing for Qwen3-14B goes beyond 5120 tokens, while 2 GPUs reach 11264 (at
    # --margin 0.01, the margin these figures were written for: the card's default is test_smallmargin_s61's).
    one = _longest_row(cli, "--model", "14B", "--gpu", "4090", "--gpus", "1", "--margin", "0.01")
    assert one == ("nothing for Qwen3-14B on RTX-4090-24GB within 1 GPU, in the tables and the memory model's "
                   "estimates, goes beyond 5120 tokens on the 1024-token grid")
    two = _longest_row(cli, "--model", "14B", "--gpu", "4090", "--gpus", "2", "--margin", "0.01")
    assert two.startswith("nothing for Qwen3-14B on RTX-4090-24GB within 2 GPUs, in the tables and the memory model's "
                          "estimates, goes beyond 11264 tokens")


def test_the_longest_row_names_only_the_evidence_the_query_uses():
    # With --no-estimate it spoke of the memory model's estimates too, which were off.
    (answer,) = solver.plan("8B", gpu="h100", objective="max_len", budget_gpus=8, estimate="never", explain=True,
                            catalog=CATALOG.with_cells(Path("docs/examples/my-cells.yaml")))
    assert [reason.detail for reason in answer.explanation if reason.rule == "longest_documented"] == [
        "nothing for Qwen3-8B on H100-80GB within 8 GPUs, in the tables, goes beyond 131072 tokens"]
