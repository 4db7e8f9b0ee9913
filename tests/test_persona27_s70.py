"""Hand-checked words of s70's persona27: why a table for another GPU count speaks for an Offload setting, and what
the tables let a setting train past the memory model's longest length."""
from __future__ import annotations

import json

from solver.rules import SourceCell, fewer_reasons


def test_with_offload_a_table_for_more_gpus_speaks_since_each_gpu_holds_as_much():
    # With Offload the states are on the CPU: on 4 GPUs each holds what it holds on 6, not more. Without Offload the
    # clauses stay as they were: on fewer GPUs each holds more; a table for fewer speaks through Offload.
    six = SourceCell(model="Qwen3-4B", gpus=6, max_model_len=71680, setting="-")
    two = SourceCell(model="Qwen3-4B", gpus=2, max_model_len=61440, setting="-")
    assert fewer_reasons(six, 4, offload=True) == (
        "with Offload it holds as much per GPU on 4 GPUs as on 6 (the states are on the CPU)",)
    assert fewer_reasons(six, 4, offload=False) == ("on 4 GPUs each holds more",)
    assert fewer_reasons(two, 4, offload=True) == (
        "with Offload it holds as much per GPU on 4 GPUs as on 2 (the states are on the CPU)",)
    assert fewer_reasons(two, 4, offload=False) == (
        "it ran out with Offload too, which holds as much per GPU on 4 GPUs as on 2 (the states are on the CPU)",
        "without Offload each GPU holds more")
    assert fewer_reasons(six, 6, offload=True) == ()


def test_solve_memory_says_an_offload_setting_holds_as_much_on_fewer_gpus(cli):
    # Env + Offload + SP=2 on 4 H20s at 65536 for Qwen3-4B: the table for 6 says '-' at 71680. The memory model
    # gives the same 85.93 GiB on 4 GPUs as on 6 (no states on the GPU), which the words now say.
    status, out, _ = cli("memory", "--model", "4B", "--gpu", "h20", "--gpus", "4", "--len", "65536", "--sp", "2",
                         "--env", "--offload")
    assert status == 1 and (
        " tables: it runs out of memory (the H20-96GB table for 6 GPUs says '-' at 71680: the source's cells read as "
        "the first setting that trained in their order, '-' where none did, so this setting, or one that includes it, "
        "ran out of memory there, and with Offload it holds as much per GPU on 4 GPUs as on 6 (the states are on the "
        "CPU)); where the memory model disagrees, the table, a measurement, decides to find a setting that trains,"
    ) in " ".join(out.split())
    totals = [json.loads(cli("memory", "--model", "4B", "--gpu", "h20", "--gpus", gpus, "--len", "65536", "--sp", "2",
                             "--env", "--offload", "--json")[1])["total_gib"] for gpus in ("4", "6")]
    assert totals == [85.9338, 85.9338]


def test_the_longest_length_says_the_tables_let_the_setting_train_at_least_to_the_next_length(cli):
    # Qwen3-8B, SP=2, on 2 H20s: the memory model fits 11264 tokens; the table's 'SP=2' at 12288 vouches for the next
    # length, and its 'SP=2' at 16384 (the tables line, asked there) for more: 12288 is a bound, not the limit.
    status, out, _ = cli("memory", "--model", "8B", "--gpu", "h20", "--gpus", "2", "--len", "16384", "--sp", "2",
                         "--no-env")
    words = " ".join(out.split())
    assert status == 0 and (
        "longest length the memory model fits with this setting: 11264 tokens (on a 1024-token grid); the tables let "
        "it train at least to 12288 (documented: the H20-96GB table for 2 GPUs says 'SP=2' at 12288), and they decide "
        "host memory:") in words
    assert "tables: it trains (documented: the H20-96GB table for 2 GPUs says 'SP=2' at 16384)" in words
