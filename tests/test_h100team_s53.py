"""Session 53's review as a team with two nodes of 8 H100s (1 TB of host memory each): what it found and fixed."""

from __future__ import annotations

MEMORY_32B_16 = ("memory", "--model", "32B", "--gpu", "h100", "--gpus", "16", "--len", "65536", "--sp", "8", "--env")


def test_solve_memory_verdict_names_the_gpus_where_the_host_memory_rules_the_setting_out(cli):
    # Qwen3-32B with Env + SP=8 on two nodes of 8 H100s fits the GPUs (7.57 GiB to spare), but loading it takes
    # 122.1 GiB of a node's host memory: with --host-ram 100 it does not train, and the verdict must not read
    # "fits" bare above the host line that says so.
    status, out, _ = cli(*MEMORY_32B_16, "--host-ram", "100")
    flat = " ".join(out.split())
    assert status == 1
    assert "fits the GPUs' memory (the host memory below rules it out): 7.57 GiB to spare of the usable memory" in flat
    assert ("122.1 GiB per node while the model loads (verl reads it in fp32 before FSDP shards it); more than "
            "--host-ram 100: it does not train there") in flat
    # Where the host memory holds it, or is not given, the verdict is the plain one.
    for host in (("--host-ram", "1024"), ()):
        status, out, _ = cli(*MEMORY_32B_16, *host)
        flat = " ".join(out.split())
        assert status == 0 and "fits: 7.57 GiB to spare of the usable memory" in flat and "rules it out" not in flat
