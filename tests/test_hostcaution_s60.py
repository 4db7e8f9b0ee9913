"""What a workstation user meets about host memory (session 60): --host-ram as free -m, free -g, free -h and
/proc/meminfo print it (a bare MiB figure of a 32-48 GB node was taken as 32-48 TB, and every plan fit)."""

from __future__ import annotations

import json

import pytest

import solver
from solver.results import (
    CautionCode,
    HostRamAssumed,
    short_host_need,
    unchecked_host_bound,
    unchecked_host_need,
)
from solver.rules import COMMAND_OPTIONS

USAGE = "usage: solve [options] (--help lists them)"
ASK = ("--model", "0.6B", "--gpu", "h100", "--gpus", "1", "--len", "4k", "--json")


@pytest.mark.parametrize(("given", "gib"), [
    ("64214MiB", 62.7), ("64214 MiB", 62.7), ("64214M", 62.7), ("64214Mi", 62.7), ("64214mb", 62.7),  # free -m's
    ("31958MiB", 31.2),  # a 32 GB node's free -m total
    ("65849636kB", 62.7), ("65849636 kB", 62.7), ("65849636KiB", 62.7),  # /proc/meminfo's MemTotal (KiB)
    ("62", 62), ("31", 31),  # free -g's (GiB, as written)
    ("62Gi", 62), ("1.5Ti", 1536), ("62G", 62),  # free -h's, and older procps's
    ("4096", 4096),  # the most a bare number is taken as
])
def test_host_ram_as_free_and_meminfo_print_it_with_its_unit_is_read_right(cli, given: str, gib: float):
    status, out, err = cli(*ASK, "--host-ram", given)
    [answer] = json.loads(out)
    assert (status, err, answer["host_ram_gb"]) == (0, "", gib)


@pytest.mark.parametrize(("given", "readings"), [
    # free -m's total of a 32 GB and of a 48 GB node: taken as 32 and 48 TB before
    ("31958", "31958MiB if it is free -m's total (31.2 GiB) or 31958GB if it is GB"),
    ("48000", "48000MiB if it is free -m's total (46.8 GiB) or 48000GB if it is GB"),
    ("49152", "49152MiB if it is free -m's total (48.0 GiB) or 49152GB if it is GB"),
    ("4097", "4097MiB if it is free -m's total (4.0 GiB) or 4097GB if it is GB"),
    ("64214", "64214MiB if it is free -m's total (62.7 GiB)"),  # past 48 TB as GB
    # /proc/meminfo's MemTotal (kB) of a 64 GB node, and of a 32 GB one (which free -m's MiB could be too)
    ("65849636", "65849636kB if it is /proc/meminfo's MemTotal (62.7 GiB)"),
    ("32849636", ("32849636MiB if it is free -m's total (32079.7 GiB) or 32849636kB if it is /proc/meminfo's "
                  "MemTotal (31.3 GiB)")),
])
def test_a_bare_number_past_4096_is_refused_naming_the_unit_of_each_reading(cli, given: str, readings: str):
    status, out, err = cli(*ASK, "--host-ram", given)
    assert (status, out) == (2, "")
    assert err.splitlines() == [USAGE, (f"solve: error: argument --host-ram: a number without a unit is GB up to "
                                        f"4096, got {given}: give its unit, {readings}")]


@pytest.mark.parametrize("given", ["64k", "64214 M B", "62 GiB RAM"])
def test_host_ram_in_no_form_it_takes_is_refused_naming_the_forms(cli, given: str):
    status, out, err = cli(*ASK, "--host-ram", given)
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] == (
        "solve: error: argument --host-ram: expected 512, 512GB, 512GiB, 2TB, 503Gi (free -h), 515870MiB (free -m) "
        f"or 528280000kB (/proc/meminfo), got '{given}'")


def test_solve_memory_reads_free_m_with_its_unit_and_refuses_it_bare(cli):
    flags = ("memory", "--model", "8B", "--gpu", "h100", "--gpus", "1", "--len", "4k", "--offload")
    status, out, _ = cli(*flags, "--host-ram", "31958MiB", "--json")
    assert (status, json.loads(out)["host_ram_gib"]) == (1, 31.2)  # Offload needs 183.0 GiB
    status, _, err = cli(*flags, "--host-ram", "31958")
    assert (status, err.splitlines()[-1]) == (2, (
        "solve memory: error: argument --host-ram: a number without a unit is GB up to 4096, got 31958: give its "
        "unit, 31958MiB if it is free -m's total (31.2 GiB) or 31958GB if it is GB"))


SERVERS = "128 GiB per GPU, as servers commonly have: a DGX A100's 1 TB for 8"
HOST_CAUTION = (
    f"Offload needs 351.6 GiB of host memory per node, more than the 128 GiB assumed for its one trainer GPU there "
    f"({SERVERS}; --node-gpus counts all of a node's GPUs), and nothing checks it: give --host-ram what a node can "
    "spare for the trainer (free -g's total less what the OS, Ray and the rollout take) to check it; --trinity-version "
    "counts a release's own, less where verl 0.7 builds the reference model in bf16 and places the pinned blocks (0.5)")
"""s87: it ends with the hint that 0.5, whose reference model is bf16, counts less (`lower_host_count_hint`)."""
RTX_4090_14B = ("--gpu", "rtx-4090", "--gpus", "1", "--model", "14B", "--len", "4096")
L40S_14B = ("--gpu", "l40s", "--gpus", "1", "--model", "14B", "--len", "4096")  # a card sold in servers


def test_an_offload_plan_past_a_servers_host_memory_per_gpu_is_cautioned_without_host_ram(cli):
    # A workstation of 64-128 GB read "311.3 GiB ... not checked" for one RTX 4090 and trusted the plan: the
    # trainer died. A card sold in servers is held to their 128 GiB per GPU (an RTX 4090 to a workstation's 64 GiB:
    # test_hostws_s61.py).
    status, out, err = cli(*L40S_14B)
    assert (status, err) == (0, "")
    lines = out.splitlines()
    caution = lines.index(next(line for line in lines if line.startswith("caution        Offload needs ")))
    assert " ".join(" ".join(lines[caution:caution + 4]).split()) == f"caution {HOST_CAUTION}"
    assert ("host memory 351.6 GiB per node for Offload; not checked: --host-ram not given; --trinity-version "
            "counts") in " ".join(out.split())
    status, out, _ = cli(*L40S_14B, "--json")
    [best, *_] = json.loads(out)[0]["plans"]
    assert (status, best["host_memory_gb"], best["cautions"][0], best["caution_codes"]) == (
        0, 351.6, HOST_CAUTION, ["host-memory-unchecked", "single-gpu-advised-against"])


def test_one_l40s_is_cautioned_from_qwen3_8b_up():
    # One L40S's Offload (a card sold in servers): Qwen3-4B's 93.4 GiB is within 128 GiB, Qwen3-8B's 183.0 GiB is not.
    needs = {model: solver.plan(model, gpu="l40s", budget_gpus=1, max_model_len=4096)[0].best
             for model in ("4B", "8B")}
    assert [(plan.offload, plan.host_memory_gb, plan.caution_codes) for plan in needs.values()] == [
        (True, 93.4, (CautionCode.SINGLE_GPU_ADVISED_AGAINST,)),
        (True, 183.0, (CautionCode.HOST_MEMORY_UNCHECKED, CautionCode.SINGLE_GPU_ADVISED_AGAINST))]
    assert needs["8B"].cautions[0].startswith(
        "Offload needs 183.0 GiB of host memory per node, more than the 128 GiB assumed for its one trainer GPU")


def test_llama_70b_offload_on_8_gpus_is_cautioned_for_its_tb_a_node():
    # With no release named each of the 8 ranks loads the untied model in fp32 at start-up (s84): 7 x 262.8 GiB more
    # than rank 0 alone, 2688.6 where it was 1404.7 (training's need, the larger then).
    (answer,) = solver.plan("Llama-3.1-70B", gpu="h100", budget_gpus=8, max_model_len=4096,
                            option_names=COMMAND_OPTIONS)
    assert (answer.best.gpus, answer.best.offload, answer.best.host_memory_gb, answer.best.caution_codes) == (
        8, True, 2688.6, (CautionCode.FAR_BEYOND_CALIBRATION, CautionCode.HOST_MEMORY_UNCHECKED))
    assert answer.best.cautions[1] == (
        "Offload needs 2688.6 GiB of host memory per node (336.1 GiB per trainer GPU; at start-up, every rank loading "
        "the model; 1404.7 while training), more than the 1024 GiB assumed "
        f"for its 8 trainer GPUs there ({SERVERS}; --node-gpus counts all of a node's GPUs), and nothing checks it: "
        "give --host-ram what a node can spare for the trainer (free -g's total less what the OS, Ray and the rollout "
        "take) to check it; --trinity-version counts a release's own, less where rank 0 alone loads the model (0.6, "
        "0.5.1 and 0.5.0) or verl 0.7 builds the reference model in bf16 and places the pinned blocks (0.5)")


def test_the_readmes_main_job_gets_no_host_memory_caution(cli):
    # 102.2 GiB for 4 trainer GPUs, 25.6 GiB each: what a data-centre node holds.
    status, out, _ = cli("--maximize", "len", "--gpus", "6", "--model", "4B", "--gpu", "a100", "--json")
    [best, *_] = json.loads(out)[0]["plans"]
    assert (status, best["gpus"], best["offload"], best["host_memory_gb"], best["cautions"]) == (
        0, 4, True, 102.2, [])


def test_the_host_memory_caution_filters_no_plan_and_host_ram_silences_it(cli):
    # A caution, not a constraint: the same plans without --host-ram as with one that holds them all.
    _, unchecked, _ = cli(*RTX_4090_14B, "--top", "5", "--json")
    _, checked, _ = cli(*RTX_4090_14B, "--top", "5", "--host-ram", "1TB", "--json")
    fields = ("gpus", "env", "offload", "sp", "max_model_len", "host_memory_gb")
    without, within = json.loads(unchecked)[0]["plans"], json.loads(checked)[0]["plans"]
    assert [[plan[key] for key in fields] for plan in without] == [[plan[key] for key in fields] for plan in within]
    assert [plan["caution_codes"] for plan in without] == [
        ["host-memory-unchecked", "single-gpu-advised-against"] if plan["offload"]
        else ["single-gpu-advised-against"] for plan in without]
    assert all(plan["caution_codes"] == ["single-gpu-advised-against"] for plan in within)


def test_the_host_memory_caution_is_for_needs_past_128_gib_per_trainer_gpu_on_the_node():
    # The node's size not given (None): its trainer GPUs alone count (test_smallslips12_s70.py: a size given).
    server = solver.load_catalog().gpu("a100")
    assert unchecked_host_need(128.0, server, 1, None, True, "--host-ram") is None
    assert unchecked_host_need(1024.0, server, 8, None, True, "--host-ram") is None  # a DGX A100's 1 TB for its 8
    assert unchecked_host_need(1024.1, server, 8, None, True, "--host-ram").startswith(
        "Offload needs 1024.1 GiB of host memory per node (128.1 GiB per trainer GPU)")  # rounded up: past 128
    assert unchecked_host_need(128.1, server, 1, None, True, "--host-ram").startswith(
        "Offload needs 128.1 GiB of host memory")
    # s88: without Offload too: its start-up load, or a critic's states held in host memory (no ranks named)
    assert unchecked_host_need(128.0, server, 1, None, False, "--host-ram") is None
    assert unchecked_host_need(300.0, server, 1, None, False, "--host-ram").startswith(
        "the trainer needs 300.0 GiB of host memory per node while the model loads (every rank loading the model), "
        "more than the 128 GiB assumed for its one trainer GPU there")
    assert unchecked_host_need(300.0, server, 1, None, False, "--host-ram", critic="offloaded").startswith(
        "the trainer needs 300.0 GiB of host memory per node for the critic's offloaded states, more than the 128 GiB")
    assert unchecked_host_need(300.0, server, 1, None, True, None) is None  # host memory given: plans held to it
    assert "give the pool's host_ram_gb what a node can spare" in unchecked_host_need(
        300.0, server, 1, None, True, "the pool's host_ram_gb")
    # the bound the caution names, which its short form is built from (hostfield90): the node's assumed GiB, the source
    assert unchecked_host_bound(1024.1, server, 8, None, "--host-ram") == HostRamAssumed(gb=1024, source="--host-ram")
    assert unchecked_host_bound(1024.1, server, 2, 16, "host_ram_gb") is None  # a node of 16 GPUs: 2048 GiB
    assert unchecked_host_bound(2048.1, server, 2, 16, "host_ram_gb") == HostRamAssumed(gb=2048, source="host_ram_gb")
    assert unchecked_host_bound(1024.0, server, 8, None, "--host-ram") is None
    assert unchecked_host_bound(1024.1, server, 8, None, None) is None
    assert short_host_need(300.0, False, "offloaded", HostRamAssumed(gb=128, source="the pool's host_ram_gb")) == (
        "the trainer needs 300.0 GiB of host memory per node for the critic's offloaded states, more than the 128 GiB "
        "assumed (unchecked: the pool's host_ram_gb)")


def test_solve_memory_cautions_a_large_offload_need_without_host_ram(cli):
    flags = ("memory", "--model", "8B", "--gpu", "l40s", "--gpus", "1", "--len", "4k", "--offload", "--env")
    status, out, _ = cli(*flags, "--json")
    estimate = json.loads(out)
    assert (status, estimate["host_memory_gib"], estimate["caution_codes"]) == (
        0, 183.0, ["host-memory-unchecked", "single-gpu-advised-against"])
    status, out, _ = cli(*flags)
    assert status == 0 and ("caution: Offload needs 183.0 GiB of host memory per node, more than the 128 GiB assumed "
                            "for its one trainer GPU there") in out
    status, out, _ = cli(*flags, "--host-ram", "256", "--json")
    assert (status, json.loads(out)["caution_codes"]) == (0, ["single-gpu-advised-against"])
    status, out, _ = cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "4k", "--offload",
                         "--json")  # 8 GPUs on the node: their share of it is within 128 GiB each
    assert (status, json.loads(out)["caution_codes"]) == (0, [])


def test_a_cluster_placement_is_cautioned_on_a_pool_without_host_ram_gb(cli, tmp_path):
    # Llama-3.1-70B on 5 of a DGX's H100s: 2046.6 GiB (each of the 5 ranks loading it with no release named, s84; 1624.4
    # with rank 0 alone), more than the node's 8 GPUs are assumed to have (the pool gives its size); Qwen3-8B on 3
    # needs no Offload.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: dgx, gpu: h100, nodes: 1, gpus_per_node: 8}\n"
                     "jobs:\n  - {name: small, model: 8B, max_model_len: 4096}\n"
                     "  - {name: big, model: Llama-3.1-70B, max_model_len: 4096}\n")
    status, out, _ = cli("cluster", str(fleet), "--json")
    placed = {placement["job"]: placement["plan"] for placement in json.loads(out)["placements"]}
    assert (status, placed["big"]["gpus"], placed["big"]["host_memory_gb"], placed["big"]["caution_codes"]) == (
        0, 5, 2046.6, ["far-beyond-calibration", "host-memory-unchecked", "uneven-data-parallel"])
    assert placed["big"]["cautions"][1].startswith(
        f"Offload needs 2046.6 GiB of host memory per node (at start-up, every rank loading the model; 1624.4 while "
        f"training), more than the 1024 GiB assumed for a node of 8 GPUs "
        f"({SERVERS}), and nothing checks it: give the pool's host_ram_gb what")
    # s87: the hint names the job's key, not the planner's --trinity-version alone (cluster93c: the run's after it,
    # which gives every job that names none its release)
    assert placed["big"]["cautions"][1].endswith(
        "to check it; the job's trinity_version (or the run's --trinity-version) counts a release's own, less where "
        "rank 0 alone loads the model (0.6, 0.5.1 and 0.5.0) or verl 0.7 builds the reference model in bf16 and places "
        "the pinned blocks (0.5)")
    assert placed["small"]["caution_codes"] == ["uneven-data-parallel"]


def test_a_trinity_fragment_carries_the_host_memory_caution(cli):
    status, out, _ = cli("--gpu", "l40s", "--gpus", "1", "--model", "8B", "--len", "4k", "--emit", "trinity")
    assert status == 0 and (
        "# caution: Offload needs 183.0 GiB of host memory per node, more than the 128 GiB assumed for its\n"
        "# one trainer GPU there (128 GiB per GPU, as servers commonly have: a DGX A100's 1 TB for 8;\n") in out


LOAD_PAST_NODE = (
    "the trainer needs 1116.4 GiB of host memory per node while the model loads (139.6 GiB per trainer GPU; every rank "
    "loading the model), more than the 1024 GiB assumed for its 8 trainer GPUs there (128 GiB per GPU, as servers "
    "commonly have: a DGX A100's 1 TB for 8; --node-gpus counts all of a node's GPUs), and nothing checks it: give "
    "--host-ram what a node can spare for the trainer (free -g's total less what the OS, Ray and the rollout take) to "
    "check it; --trinity-version counts a release's own, less where rank 0 alone loads the model (0.6, 0.5.1 and "
    "0.5.0) or verl 0.7 builds the reference model in bf16 and places the pinned blocks (0.5)")
"""s88: Qwen3-32B on 8 H200s at 128k tokens without Offload: every rank loading it in fp32 at start-up, past the
node."""


def test_a_plan_without_offload_is_cautioned_where_its_start_up_load_is_past_the_node():
    # s88: before, no caution and host_memory_gb null, though the start-up load passed the 1024 GiB assumed (the API's
    # answer is solve --json's: one code path).
    [answer] = solver.plan("32B", gpu="h200", budget_gpus=8, max_model_len="128k")
    best = answer.plans[0]
    assert (best.offload, best.sp, best.host_memory_gb, best.host_training_gb) == (False, 8, 1116.4, None)
    assert [(code.value, words) for code, words in zip(best.caution_codes, best.cautions)
            if code == CautionCode.HOST_MEMORY_UNCHECKED] == [("host-memory-unchecked", LOAD_PAST_NODE.replace(
                "--node-gpus", "node_gpus").replace("--host-ram", "host_ram_gb").replace("--trinity-version",
                                                                                         "trinity_version"))]


def test_solve_memory_without_offload_cautions_a_start_up_load_past_the_node(cli):
    flags = ("memory", "--model", "32B", "--gpu", "h200", "--gpus", "8", "--len", "128k", "--sp", "8", "--env")
    status, out, _ = cli(*flags, "--json")
    estimate = json.loads(out)
    assert (status, estimate["host_memory_gib"], estimate["caution_codes"], estimate["cautions"]) == (
        0, 1116.4, ["host-memory-unchecked"], [LOAD_PAST_NODE])
    status, out, _ = cli(*flags, "--node-gpus", "16", "--json")  # the node's 16 GPUs are assumed 2048 GiB
    assert (status, json.loads(out)["caution_codes"]) == (0, [])
    status, out, _ = cli(*flags, "--host-ram", "1200", "--json")
    assert (status, json.loads(out)["caution_codes"]) == (0, [])


def test_a_cluster_plan_without_offload_is_cautioned_on_a_pool_without_host_ram_gb(cli, tmp_path):
    # s88: as solve's (the pool gives the node's size, so the words name it and no share per trainer GPU)
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: dgx, gpu: h200, nodes: 1, gpus_per_node: 8}\n"
                     "jobs:\n  - {name: big, model: 32B, max_model_len: 131072, rollout_gpus: 0}\n")
    status, out, _ = cli("cluster", str(fleet), "--json")
    [placed] = json.loads(out)["placements"]
    assert (status, placed["plan"]["offload"], placed["plan"]["host_memory_gb"], placed["plan"]["cautions"]) == (
        0, False, 1116.4, [
            "the trainer needs 1116.4 GiB of host memory per node while the model loads (every rank loading the "
            f"model), more than the 1024 GiB assumed for a node of 8 GPUs ({SERVERS}), and nothing checks it: give "
            "the pool's host_ram_gb what" + LOAD_PAST_NODE.split("give --host-ram what", 1)[1].replace(
                "--trinity-version", "the job's trinity_version (or the run's --trinity-version)")])


def test_a_plan_without_offload_on_part_of_a_node_of_unknown_size_and_with_a_critic_is_cautioned_in_its_words():
    # mutants49: without --node-gpus the node is assumed to have its trainer GPUs' 128 GiB each (6 here: 768 GiB, not
    # a default node's 1024), and a PPO critic's offloaded states are named as what the need is for
    [answer] = solver.plan("32B", gpu="h200", budget_gpus=6, max_model_len="4k", offload=False)
    best = answer.plans[0]
    assert (best.offload, best.gpus, best.host_memory_gb) == (False, 6, 909.3)
    assert next(words for code, words in zip(best.caution_codes, best.cautions)
                if code == CautionCode.HOST_MEMORY_UNCHECKED).startswith(
        "the trainer needs 909.3 GiB of host memory per node while the model loads (151.6 GiB per trainer GPU; every "
        "rank loading the model), more than the 768 GiB assumed for its 6 trainer GPUs there")
    [answer] = solver.plan("32B", gpu="h200", budget_gpus=8, max_model_len="128k", critic="offloaded")
    best = answer.plans[0]
    assert next(words for code, words in zip(best.caution_codes, best.cautions)
                if code == CautionCode.HOST_MEMORY_UNCHECKED).startswith(
        "the trainer needs 1116.4 GiB of host memory per node for the critic's offloaded states (139.6 GiB per trainer "
        "GPU; at start-up, every rank loading the model; 651.7 while training), more than the 1024 GiB assumed")


OFFLOAD_14B_ON_2 = ("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-14B, max_model_len: 8192}\n"
                    "cluster: {node_num: 1, gpu_per_node: 2}\nexplorer: {rollout_model: {engine_num: 0}}\ntrainer:\n"
                    "  trainer_strategy: fsdp2\n  trainer_config:\n    actor_rollout_ref:\n      actor:\n"
                    "        fsdp_config: {param_offload: true, optimizer_offload: true, offload_policy: true}\n")
"""s89: a Trinity config of Qwen3-14B with Offload on its node's 2 GPUs, whose 351.6 GiB of host memory per node is
past the 256 GiB such a node is assumed to have."""


def test_a_configs_verdict_carries_its_own_host_memory_caution_and_host_ram_judges_it(cli, tmp_path):
    # host89: the verdict said "it trains" with no word of its own layout's host memory, past the node's assumed 256
    # GiB (only the best plan's caution, below it, said one). Nothing gives the node's memory: --check passes.
    config = tmp_path / "trinity.yaml"
    config.write_text(OFFLOAD_14B_ON_2, encoding="utf-8")
    asked = ("--from-config", str(config), "--gpu", "h100", "--json")
    status, out, _ = cli(*asked, "--check")
    [answer] = json.loads(out)
    current = answer["current"]
    caution = ("Offload needs 351.6 GiB of host memory per node, more than the 256 GiB assumed for a node of 2 GPUs "
               f"({SERVERS}), and nothing checks it: give --host-ram what a node can spare")
    assert (status, current["trains"], current["plan"]["offload"], current["plan"]["caution_codes"][0]) == (
        0, True, True, "host-memory-unchecked")
    assert current["plan"]["cautions"][0].startswith(caution)
    assert f"it trains (estimated: the memory model predicts 31.6 GiB per GPU, 39.4 GiB to spare). {caution}" in (
        current["verdict"])
    # With --host-ram short of it, the host memory rules the settings out and --check fails; within it, no caution.
    status, out, _ = cli(*asked, "--check", "--host-ram", "256")
    current = json.loads(out)[0]["current"]
    assert (status, current["trains"], current["host_memory_needed"]) == (1, False, 351.6)
    status, out, _ = cli(*asked, "--check", "--host-ram", "512")
    current = json.loads(out)[0]["current"]
    assert (status, current["trains"], current["plan"]["caution_codes"]) == (0, True, [])
    assert "host memory" not in current["verdict"]
    # A config refused for another reason (a value that resolves to nothing) still says its layout's host caution.
    config.write_text("name: ${no_such_key}\n" + OFFLOAD_14B_ON_2, encoding="utf-8")
    status, out, _ = cli(*asked, "--check")
    current = json.loads(out)[0]["current"]
    assert (status, current["refused"]) == (1, True) and f"). {caution}" in (
        current["verdict"])


def test_the_fewer_gpus_row_carries_its_plans_host_memory_caution(cli):
    # host89: --minimize gpus named the plan on fewer GPUs a lowered budget gives with its thin-headroom caution alone,
    # though it needs more host memory than its node is assumed to have (Qwen3-235B-A22B's on 1 H20: 5235 GiB). Here
    # Qwen3-8B's Offload on 1 H20, 183.0 GiB, past 128; on 2 GPUs, the best plan, within 256.
    flags = ("--model", "8B", "--gpu", "h20", "--minimize", "gpus", "--len", "32k", "--gpus", "8")
    status, out, _ = cli(*flags)
    words = " ".join(out.split())
    assert status == 0 and (
        "fewer GPUs --token-budget auto trains it on 1 GPU (1 fewer): Env + Offload with a lowered "
        "max_token_len_per_gpu of 57344 (estimated); caution: Offload needs 183.0 GiB of host memory per node, more "
        "than the 128 GiB assumed for its one trainer GPU there") in words
    assert words.count("Offload needs") == 1  # the best plan's 2 GPUs are assumed 256 GiB: no caution of its own
    # With --host-ram short of the plan on fewer GPUs, the solver offers none: the host memory is a constraint there
    # (Qwen3-1.7B at 40960 tokens on A100s: SP=2 on 2 GPUs loads 21.4 GiB; Env + Offload on 1, 38.6).
    lowered = ("--model", "1.7B", "--gpu", "a100-80g", "--minimize", "gpus", "--len", "40k", "--gpus", "8", "--json")
    offered = {host_ram: json.loads(cli(*lowered, "--host-ram", host_ram)[1])[0] for host_ram in ("64", "32")}
    assert [(answer["plans"][0]["gpus"], answer["plans"][0]["host_memory_gb"],
             (fewer := answer.get("token_budget_auto")) and (fewer["gpus"], fewer["host_memory_gb"]))
            for answer in offered.values()] == [(2, 21.4, (1, 38.6)), (2, 21.4, None)]


def test_a_configs_own_layout_as_the_best_plan_says_its_host_memory_caution_once(cli, tmp_path, monkeypatch):
    # s89: with Env on, the config's Env + Offload on 2 GPUs is the best plan: the caution the verdict says (host89)
    # was its caution row again. The text says it once, in the verdict (the JSON's plans keep their cautions).
    config = tmp_path / "trinity.yaml"
    config.write_text(OFFLOAD_14B_ON_2, encoding="utf-8")
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100")
    words = " ".join(out.split())
    assert status == 0 and "runs Env + Offload on 2 trainer GPUs" in words and "plan Env + Offload on 2 of 2" in words
    assert words.count("Offload needs 351.6 GiB of host memory per node") == 1 and "caution" not in words
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF")  # Env off: the plan adds it, another layout, with its own row
    assert " ".join(cli("--from-config", str(config), "--gpu", "h100")[1].split()).count("Offload needs 351.6") == 2
