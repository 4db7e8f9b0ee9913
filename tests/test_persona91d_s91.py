"""An ML platform engineer planning GRPO on Llama-3.1-70B and Qwen2.5-32B over 2 to 4 nodes of 8 H100s joined by
InfiniBand, with 2 TB of host memory a node (persona91d, s91): the link between nodes, given as an option or as
--gpu-interconnect's value, is told that no option takes it (the cost assumes InfiniBand or RoCE; a cluster pool's
node_interconnect states it), not the --gpu-interconnect a typo away; docs/memory.md's Llama-3.1-70B figure on two
nodes says it is rank 0's load (Trinity 0.6), where every rank's, with no release named, is past a node of 2 TB; a
cluster job that names no trinity_version, left out by a pool's host memory, is told the release that places it,
and none where no release does."""

import json
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEMORY_PAGE = " ".join((ROOT / "docs" / "memory.md").read_text(encoding="utf-8").split())
CLUSTER_PAGE = " ".join((ROOT / "docs" / "cluster.md").read_text(encoding="utf-8").split())
Cli = Callable[..., tuple[int, str, str]]

NODE_LINK = ("the link between nodes is no option: the cost takes a trainer's nodes as joined by InfiniBand or RoCE, "
             "and solve cluster reads it from a pool's node_interconnect")


def test_a_link_between_nodes_is_told_that_no_option_takes_it_not_the_gpu_interconnect(cli: Cli, tmp_path: Path):
    # The cluster file's own field name, as an option: no command takes it (solve cluster's pools state it).
    for command in ((), ("memory", "--model", "8B", "--gpu", "h100", "--gpus", "16", "--len", "8k"),
                    ("cluster", str(tmp_path / "fleet.yaml"))):
        status, _, err = cli(*command, "--node-interconnect", "infiniband")
        assert status == 2 and NODE_LINK in err and "did you mean --gpu-interconnect" not in err, command
    status, _, err = cli("--model", "8B", "--network", "ib")
    assert status == 2 and NODE_LINK in err
    # As --gpu-interconnect's value (a node's GPUs' link): refused, with what each link is.
    for link in ("infiniband", "IB", "roce", "ethernet"):
        status, _, err = cli("--model", "8B", "--gpu", "h100", "--gpu-interconnect", link)
        assert status == 2 and len(err.strip().splitlines()) == 2 and (
            "--gpu-interconnect (a pool's gpu_interconnect) is the link between a node's GPUs; " + NODE_LINK) in err
    # Another tool's name of a GPU link keeps its guess.
    _, _, err = cli("--model", "8B", "--gpu", "h100", "--gpu-interconnect", "xgmi")
    assert "did you mean 'infinity-fabric'?" in err and NODE_LINK not in err


def test_the_70b_host_figure_on_two_nodes_names_the_release_whose_rank_0_alone_loads_it(cli: Cli):
    assert ("Llama-3.1-70B on two nodes of 8 H100s without Offload, where rank 0 alone loads the model (Trinity 0.6): "
            "the load alone is 263 GiB of one node's host memory for a moment at start-up, 409 with the reference "
            "model's shards. With no release named, every rank loads it: 2249 GiB a node, past a node of 2 TB.") in (
        MEMORY_PAGE)
    question = ("memory", "--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", "16", "--len", "32k", "--sp", "8",
                "--env")
    _, out, _ = cli(*question, "--trinity-version", "0.6", "--host-ram", "2TB")
    assert "host memory: 409.4 GiB per node while the model loads" in out
    assert "here rank 0 loading the model), within --host-ram 2048 GiB" in " ".join(out.split())
    _, out, _ = cli(*question, "--trinity-version", "0.6", "--host-ram", "2TB", "--no-reference")
    assert "host memory: 262.9 GiB per node while the model loads" in out
    _, out, _ = cli(*question, "--host-ram", "2TB")
    assert ("host memory: 2249.1 GiB per node while the model loads (verl reads it in fp32 before FSDP shards it, beside "
            "the reference model's pinned shards; here every rank loading the model); more than --host-ram 2048 GiB: "
            "it does not train there") in " ".join(out.split())


def test_a_job_the_host_memory_leaves_out_is_told_the_trinity_version_that_places_it(cli: Cli, tmp_path: Path):
    # Llama-3.1-70B beside 8 rollout GPUs on nodes of 2 TB: with no release named, every rank loads the model (2688.6
    # GiB a node with Offload); Trinity 0.6 loads it on rank 0 alone on H100s, and 8 trainer GPUs fit in 1404.7.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools: [{name: h100, gpu: H100-80GB, nodes: 2, gpus_per_node: 8, host_ram_gb: 2TB}]\n"
                     "jobs: [{name: llama, model: Llama-3.1-70B, max_model_len: 32768, rollout_gpus: 8}]\n",
                     encoding="utf-8")
    assert ("`with the job's trinity_version 0.6.0 (or the run's --trinity-version 0.6.0), 8 would, with Env + "
            "Offload + SP=4, in 1404.7 GiB of host memory per node`") in CLUSTER_PAGE
    status, out, _ = cli("cluster", str(fleet))
    assert status == 1 and ("more than the pool's host_ram_gb of 2048 GiB; with the job's trinity_version 0.6.0 (or "
                            "the run's --trinity-version 0.6.0), 8 would, with Env + Offload + SP=4, in 1404.7 GiB of "
                            "host memory per node)") in (
        " ".join(out.replace("│", " ").split()))
    # Named, the job's release is the count: no other is offered.
    fleet.write_text(fleet.read_text(encoding="utf-8").replace("rollout_gpus: 8}", "rollout_gpus: 8, "
                                                               "trinity_version: '0.5.2'}"), encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet))
    assert status == 1 and "trinity_version 0.6.0" not in out and "host_ram_gb of 2048 GiB" in " ".join(
        out.replace("│", " ").split())


def test_a_job_no_release_places_is_told_no_trinity_version(cli: Cli, tmp_path: Path):
    # s91 (coverage91): Qwen3-1.7B ties its embeddings, so on A100s (compute capability 8.0) every release loads it on
    # every rank (59.9 GiB a node for 8 trainer GPUs, past 48): no trinity_version is offered (on H100s Trinity 0.6
    # loads it on rank 0 alone, 15.0 GiB, and is, as for Llama-3.1-70B above).
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools: [{name: a, gpu: A100-80GB, nodes: 2, gpus_per_node: 8, host_ram_gb: 48}]\n"
                     "jobs: [{name: j, model: Qwen3-1.7B, max_model_len: 32768, rollout_gpus: 8}]\n", encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--json")
    [unplaced] = json.loads(out)["unplaced"]
    assert status == 1 and ("no trainer GPU count that trains it (2 at the fewest) has a layout on its 2 nodes of 8 GPUs "
                            "(8 would, with SP=2, but it needs 59.9 GiB of host memory per node while the model loads, "
                            "more than the pool's host_ram_gb of 48 GiB); with rollout_gpus: 6 or fewer") in (
        unplaced["reason"])
