"""Session 77, persona49: teams pinned to Trinity 0.5.1 (transformers 4) and 0.5.2 planning a mixture of experts. A
plan made with ``--trinity-version 0.5.1`` counts Mixtral's routed experts as 0.5.1's transformers lays them out
(separate ``nn.Linear``, each sharded over every GPU); what is made from it keeps that release: the fragment's host
memory (198.8 GiB a node where whole experts need 270.8) and the command it prints to check a config
(``--trinity-version 0.5.1``, not 0.5, by which the check would count whole experts and find no plan), in ``solve
--emit trinity``, ``solve cluster --emit-dir`` (which refused the placement at exit 2 before) and the API's
``trinity_config``, whose ``version=`` counts the experts as the release it names and names it in its refusal."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.query import QueryError
from solver.tables import counted_release

Cli = Callable[..., tuple[int, str, str]]

MIXTRAL_CONFIG = Path(__file__).parent / "data" / "hf-configs" / "Mixtral-8x7B-v0.1.json"
MIXTRAL = solver.load_model_config(MIXTRAL_CONFIG)
CATALOG = solver.load_catalog().with_model(MIXTRAL)
# Mixtral-8x7B on 32 A100s, 8 a node, no Offload, Trinity 0.5's bf16 reference pinned: 270.8 GiB of host memory a
# node with whole experts (0.5, 0.5.0, 0.5.2), 72 GiB less with 0.5.1's separate ones, shown rounded up: 198.8
# (test_moerelease_s77); 0.6 pins no reference shards in bf16 but in fp32: 367.5. Those count the model loaded on rank
# 0 alone, as 0.5.1 loads the untied Mixtral (verl's rule); 0.5.2, 0.5 without its patch, and 0.6 on A100s load it on
# every rank (s84): 8 x 46.7B x 4 bytes = 1391.9 GiB more than 174.0, 1416.7 and 1585.4.
SEPARATE_HOST = "198.8 GiB per node while the model loads (rank 0 loading the model)"
CHECK = (f"solve --from-config CONFIG --check --gpu A100-80GB --model-config {MIXTRAL_CONFIG} --host-ram 250 "
         "--critic none --trinity-version 0.5.1")


@pytest.mark.parametrize(("version", "experts", "release"), [
    (None, "fused", None), (None, "separate", None), ("0.5", "fused", "0.5"), ("0.5", "separate", "0.5.1"),
    ("0.6", "fused", "0.6"), ("0.6", "separate", "0.6"),
])
def test_the_release_named_is_the_patch_that_lays_the_experts_out_as_counted(version: str | None, experts: str,
                                                                             release: str | None) -> None:
    assert counted_release(version, experts) == release  # type: ignore[arg-type]


def _emitted(cli: Cli, release: str) -> tuple[int, str, str]:
    return cli("--model-config", str(MIXTRAL_CONFIG), "--gpu", "a100-80gb", "--gpus", "32", "--exact", "--len",
               "16k", "--no-offload", "--host-ram", "250", "--trinity-version", release, "--emit", "trinity")


@pytest.mark.parametrize("release", ["0.5.1", "v0.5.1"])
def test_the_fragment_of_a_0_5_1_plan_keeps_its_host_memory_and_release(cli: Cli, release: str) -> None:
    status, out, err = _emitted(cli, release)
    assert status == 0, err
    assert f"# host memory: {SEPARATE_HOST}, within\n# --host-ram 250 GiB\n" in out  # was 270.8, "within" 250
    assert f"#   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True {CHECK}\n" in out  # was --trinity-version 0.5


def test_the_check_command_the_fragment_prints_finds_the_plan_it_was_made_from(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "mixtral.yaml"
    config.write_text("algorithm: {algorithm_type: grpo, repeat_times: 8}\n"
                      "buffer: {batch_size: 32, train_batch_size: 256}\n"
                      "model: {model_path: mistralai/Mixtral-8x7B-v0.1, max_model_len: 16384}\n"
                      "cluster: {node_num: 4, gpu_per_node: 8}\nmode: train\n", encoding="utf-8")
    checked = ("--from-config", str(config), "--check", "--gpu", "A100-80GB", "--model-config", str(MIXTRAL_CONFIG),
               "--host-ram", "250", "--critic", "none")
    status, out, err = cli(*checked, "--trinity-version", "0.5.1")
    assert status == 0, err
    assert "cheapest plan for 16384 tokens on exactly 32 GPUs: optimal" in out
    assert f"host memory    {SEPARATE_HOST}, within --host-ram 250 GiB" in out
    # 0.5's fused experts as verl 0.7 places them (fusedpad, s80): an even share, the same plan, given the host memory
    # of 0.5 without its patch loading the model on every rank (s84: 1416.7 GiB, more than 250); 0.6's whole experts
    # need Offload, its fp32 blocks by rows: none.
    more_host = tuple("1500" if arg == "250" else arg for arg in checked)  # --host-ram 1500
    status, out, err = cli(*more_host, "--trinity-version", "0.5")
    assert status == 0, err
    assert "cheapest plan for 16384 tokens on exactly 32 GPUs: optimal" in out
    assert ("host memory    1416.7 GiB per node while the model loads (every rank loading the model), within --host-ram "
            "1500 GiB") in out
    status, out, err = cli(*checked, "--trinity-version", "0.6")
    assert (status, "on exactly 32 GPUs: infeasible" in out) == (1, True), err


def test_a_cluster_emits_a_0_5_1_placement_as_it_placed_it(cli: Cli, tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: a100s, gpu: a100-80gb, nodes: 4, gpus_per_node: 8, host_ram_gb: 250}\n"
                     f"jobs:\n  - {{name: mix, model_config: {MIXTRAL_CONFIG}, max_model_len: 16384}}\n",
                     encoding="utf-8")
    status, _, err = cli("cluster", str(fleet), "--trinity-version", "0.5.1", "--emit-dir", str(tmp_path / "out"))
    assert status == 0, err  # was 2: "job mix's plan needs 270.8 GiB of host memory per node under Trinity 0.5"
    fragment = (tmp_path / "out" / "mix.yaml").read_text(encoding="utf-8")
    assert f"# host memory: {SEPARATE_HOST}, within the\n# pool's host_ram_gb of 250 GiB\n" in fragment
    assert f"#   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True {CHECK}\n" in fragment


def _planned(release: str) -> solver.Answer:
    return solver.plan(MIXTRAL.name, gpu="a100-80gb", budget_gpus=32, exact=True, max_model_len=16384, offload=False,
                       host_ram_gb=250.0, trinity_version=release, catalog=CATALOG)[0]


@pytest.mark.parametrize("version", [None, "0.5.1", "v0.5.1"])
def test_the_apis_fragment_of_a_0_5_1_answer_keeps_its_release(version: str | None) -> None:
    fragment = solver.trinity_config(_planned("0.5.1"), CATALOG, version=version)
    assert f"# host memory: {SEPARATE_HOST}, within\n# host_ram_gb of 250 GiB\n" in fragment
    # Mixtral is a model of one's own here: --model-config MODEL_CONFIG, its config.json to put there (s77)
    assert ("solve --from-config CONFIG --check --gpu A100-80GB --model-config MODEL_CONFIG --host-ram 250 --critic "
            "none --trinity-version 0.5.1\n") in fragment


@pytest.mark.parametrize("version", ["0.5", "0.5.2", " 0.5.0", "0.6.0"])
def test_another_release_named_counts_and_names_its_own_layout(version: str) -> None:
    # A release whose transformers may fuse the experts: whole experts, which the plan's 58.8 GiB a GPU did not count
    # (123.6 there, test_solve_memory_counts_the_release_as_solve_does), refused since planjson (s78); the host
    # memory's refusal (270.8 GiB, more than the 250 planned within) came first before.
    shown = version.strip()
    with pytest.raises(QueryError) as raised:
        solver.trinity_config(_planned("0.5.1"), CATALOG, version=version)
    # 0.6 holds them whole; a 0.5 release may (versionnone, s79: "holds" for each before)
    held = ("which holds Mixtral-8x7B-v0.1's routed experts otherwise, whole on its transformers 5" if shown == "0.6.0"
            else "which may hold Mixtral-8x7B-v0.1's routed experts otherwise, whole on transformers 5")
    assert str(raised.value) == (
        "the answer's plan was counted for Trinity 0.5.1 (routed experts counted separate, as Trinity 0.5.1's "
        f"transformers 4 holds them): its memory figures do not hold for Trinity {shown}, {held}; plan it again "
        f"with trinity_version='{shown}', or leave version out to write it for Trinity 0.5.1")


def test_placement_configs_keep_the_placed_release() -> None:
    fleet = solver.Fleet.model_validate({
        "pools": [{"name": "a100s", "gpu": "a100-80gb", "nodes": 4, "gpus_per_node": 8, "host_ram_gb": 250}],
        "jobs": [{"name": "mix", "model": MIXTRAL.name, "max_model_len": 16384}]})
    result = solver.place(fleet, catalog=CATALOG, trinity_version="0.5.1")
    assert [placement.job for placement in result.placements] == ["mix"]
    fragment = solver.placement_configs(result, fleet, CATALOG)["mix"]
    assert f"# host memory: {SEPARATE_HOST}, within the\n# pool's host_ram_gb of 250 GiB\n" in fragment
    assert fragment.count("--trinity-version 0.5.1\n") == 1
    with pytest.raises(QueryError, match=r"^job mix's plan was counted for Trinity 0\.5\.1 \(.*: its memory figures "
                                         r"do not hold for Trinity 0\.5\.2, "):
        solver.placement_configs(result, fleet, CATALOG, version="0.5.2")


MEMORY = ("memory", "--model-config", str(MIXTRAL_CONFIG), "--gpu", "a100-80gb", "--gpus", "32", "--len", "16k",
          "--env")


def test_solve_memory_counts_the_release_as_solve_does(cli: Cli) -> None:
    # solve --trinity-version 0.5.1 plans Env on these 32 GPUs at 58.8 GiB (test_moerelease_s77); solve memory had
    # no --trinity-version: it counted whole experts (123.6 GiB, no fit) and 0.6's host memory (367.5 GiB) for all.
    # 0.5's reference blocks as verl 0.7 places them, whole experts or separate: 198.8 (pinnedplace, s79); its fused
    # experts placed so too, an even share on the GPUs, as 0.5.1's (fusedpad, s80). 0.5 without its patch and 0.5.2
    # load the model on every rank (s84): 1416.7.
    for release, host in (("0.5.1", "198.8 GiB"), ("0.5", "1416.7 GiB"), ("0.5.2", "1416.7 GiB")):
        status, out, err = cli(*MEMORY, "--trinity-version", release)
        assert status == 0, err
        assert out.startswith("Mixtral-8x7B-v0.1 (46.7B parameters, 12.9B active) on 32 x A100-80GB (80.0 GiB), Env, "
                              f"Trinity {release}, 16384 tokens (32768 per GPU), margin 0.01\n")
        assert "│ states        │ 22.38 │" in out and "│ total         │ 58.82 │" in out
        assert f"host memory: {host} per node while the model loads (verl reads it" in out
    for release in (None, "0.6.0"):
        status, out, _ = cli(*MEMORY, *(("--trinity-version", release) if release else ()))
        assert status == 1  # does not fit: whole experts
        assert "│ states        │  87.21 │" in out and "│ total         │ 123.65 │" in out
        assert "host memory: 1585.4 GiB per node while the model loads" in out  # every rank loading on A100s (s84)
        assert out.rstrip().endswith(f"--gpus 32 --len 16384{f' --trinity-version {release}' if release else ''}")


def test_solve_memory_json_echoes_the_release_as_given(cli: Cli) -> None:
    status, out, err = cli(*MEMORY, "--trinity-version", "v0.5.1", "--json")
    assert status == 0, err
    answer = solver.MemoryAnswer.model_validate_json(out)
    assert (answer.trinity_version, answer.total_gib, answer.host_memory_gib) == ("v0.5.1", 58.8202, 198.8)
    status, out, _ = cli(*MEMORY, "--json")
    assert solver.MemoryAnswer.model_validate_json(out).trinity_version is None


@pytest.mark.parametrize("release", ["0.4", "0.5.x", "1", ""])
def test_solve_memory_refuses_a_release_as_solve_does(cli: Cli, release: str) -> None:
    status, _, err = cli(*MEMORY, "--trinity-version", release)
    known = " (rft-solver knows the rules of these releases alone)" if release == "0.4" else ""
    assert (status, err.splitlines()[-1]) == (2, (
        "solve memory: error: argument --trinity-version: takes 0.5, 0.5.0, 0.5.1, 0.5.2, 0.6 or 0.6.0 (or a tag of "
        f"one, v0.5.2), got {release!r}{known}"))


def test_the_api_estimate_counts_the_release_and_its_text_plans_with_it() -> None:
    separate = solver.estimate_memory(MIXTRAL.name, "a100-80gb", 32, 16384, env=True, catalog=CATALOG,
                                      trinity_version="0.5.1")
    placed = solver.estimate_memory(MIXTRAL.name, "a100-80gb", 32, 16384, env=True, catalog=CATALOG,
                                    trinity_version="0.5.2")
    fused = solver.estimate_memory(MIXTRAL.name, "a100-80gb", 32, 16384, env=True, catalog=CATALOG,
                                   trinity_version="0.6")
    assert (separate.trains, placed.trains, fused.trains) == (True, True, False)
    # 21.7477 GiB of states before calibration under 0.5.1 and 0.5.2 (its fused experts as verl 0.7 places them,
    # fusedpad s80), 84.7477 under 0.6 (test_moerelease_s77), its coefficient 1.0290 after.
    assert (round(separate.terms.states, 4), round(placed.terms.states, 4), round(fused.terms.states, 4)) == (
        22.3785, 22.3785, 87.2060)
    text = solver.memory_text(solver.memory_answer(MIXTRAL.name, "a100-80gb", 32, 16384, env=True, catalog=CATALOG,
                                                   trinity_version="0.6"), CATALOG)
    assert ('solver.plan("Mixtral-8x7B-v0.1", gpu="A100-80GB", budget_gpus=32, max_model_len=16384, '
            'trinity_version="0.6", catalog=catalog)') in text
    with pytest.raises(QueryError, match=r"^trinity_version takes 0\.5, 0\.5\.0, 0\.5\.1, 0\.5\.2, 0\.6 or "
                                         r"0\.6\.0 \(or a tag of one, v0\.5\.2\), got '0\.5\.x'$"):
        solver.estimate_memory("8B", "a100", 8, 8192, trinity_version="0.5.x")


def test_write_keeps_the_releases_host_memory_and_check(cli: Cli, tmp_path: Path) -> None:
    # With Offload, Mixtral's 32 trainer GPUs on 4 of 5 nodes: 248.3 GiB a node with 0.5.1's separate experts, as the
    # answer says; the written file said 570.8 (whole experts) and checked with --trinity-version 0.5.
    config, written = tmp_path / "mixtral.yaml", tmp_path / "written.yaml"
    config.write_text("algorithm: {algorithm_type: grpo, repeat_times: 8}\nbuffer: {batch_size: 32}\n"
                      "model: {model_path: mistralai/Mixtral-8x7B-v0.1, max_model_len: 16384}\n"
                      "cluster: {node_num: 5, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4, "
                      "tensor_parallel_size: 2}}\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "a100-80gb", "--model-config", str(MIXTRAL_CONFIG),
                           "--trinity-version", "0.5.1", "--offload", "--write", str(written))
    assert status == 0, err
    host = "248.3 GiB for Offload (at start-up, rank 0 loading the model; 210.8 while"  # the moments: s82
    assert f"host memory    {host} training), per node the trainer runs on (4 of 5: the other holds only" in out
    text = written.read_text(encoding="utf-8")
    assert (f"  # host memory: {host}\n  #   training), per node the trainer runs on (4 of 5: the other holds only its "
            "rollout)") in text
    assert f"--model-config {MIXTRAL_CONFIG} --trinity-version 0.5.1\n" in text
