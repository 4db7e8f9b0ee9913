"""A cluster job's ``lora_exclude_modules`` (s80, helper clusterexclude): PEFT's ``exclude_modules`` beside its
``lora_targets``, read and refused by `solver.query.given_lora_targets` as a Trinity config's is by solve, its adapter
counted on what is left (host memory, placements), written by --emit-dir as ``solve --emit trinity`` writes a config's,
a change of it a change of training under --current; and every figure and caution of a job counting its own adapter
(`Planner.job_catalog`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.api import config_query
from solver.cluster.options import Planner
from solver.render.cluster import training_words
from solver.tables import Job, load_catalog, load_weights
from solver.tables.peft_names import LoraTargets
from solver.trinity import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]
VERL_LOADING = ("--trinity-version", "0.5.1")
"""Trinity 0.5.1, which loads the untied Qwen3-8B on rank 0 alone (verl's rule), for the host figures below: with no
release named every rank of an A100 node loads it (s84), 30.5 GiB more a GPU (q's 71.8 GiB on 2 GPUs is 102.5). With
LoRA there is no reference model, whose bf16 under 0.5 would count otherwise."""
LESS_V = ", lora_exclude_modules: '.*\\.v_proj'"
TRINITY = ("algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
           "buffer: {batch_size: 16, train_batch_size: 64}\nmodel:\n  model_path: Qwen/Qwen3-8B\n"
           "  max_model_len: 8192\n"
           "  lora_configs: [{lora_rank: 256, target_modules: '.*\\.(q_proj|v_proj)', %s}]\n"
           "explorer:\n  rollout_model: {engine_num: 2, tensor_parallel_size: 1}\n")
"""A Trinity config of Qwen3-8B with LoRA 256 on q_proj,v_proj, and an exclude_modules (`%s`)."""


def job(name: str, length: int | str = 8192, more: str = "", rank: int = 256, targets: str | None = "q_proj,v_proj"
        ) -> str:
    """A LoRA job of Qwen3-8B with 2 rollout GPUs, adapting `targets` (None: all-linear), and `more` fields."""
    given = "" if targets is None else f', lora_targets: "{targets}"'
    return (f"{{name: {name}, model: Qwen3-8B, max_model_len: {length}, rollout_gpus: 2, lora_rank: {rank}{given}"
            f"{more}}}")


def fleet_file(folder: Path, pool: str, *jobs: str, name: str = "fleet.yaml") -> Path:
    """A cluster file of one A100 pool (`pool`: its fields after the GPU's) and `jobs`."""
    path = folder / name
    path.write_text(f"pools:\n  - {{name: a100, gpu: A100-80GB, {pool}}}\njobs:\n"
                    + "".join(f"  - {job}\n" for job in jobs))
    return path


def test_a_jobs_host_need_counts_its_adapter_less_its_exclusions_as_solve_counts_a_configs(
        cli: Cli, tmp_path: Path) -> None:
    # q_proj,v_proj less .*\.v_proj adapts q_proj alone: 71.8 GiB per node, as solve counts a config with those keys
    # and --lora-targets q_proj (q_proj,v_proj: 72.1, test_clusterlora_s79); all-linear less the MLP's 73.0, not
    # all-linear's 76.8.
    path = fleet_file(tmp_path, "gpus_per_node: 8, nodes: 1, host_ram_gb: 1000", job("q", more=LESS_V),
                      job("mlp", more=", lora_exclude_modules: '.*\\.mlp\\..*'", targets=None))
    status, out, _ = cli("cluster", str(path), "--time-limit", "10", "--json", *VERL_LOADING)
    placed = {job["job"]: job for job in json.loads(out)["placements"]}
    assert status == 0
    assert {name: (job["host_memory_gb"], job["plan"]["lora_target_modules"], job["plan"]["lora_exclude_modules"])
            for name, job in placed.items()} == {
        "q": (71.8, ".*\\.(q_proj|v_proj)", ".*\\.v_proj"), "mlp": (73.0, "all-linear", ".*\\.mlp\\..*")}
    config = tmp_path / "trinity.yaml"
    config.write_text(TRINITY % "exclude_modules: '.*\\.v_proj'")
    for given in (("--from-config", str(config)), ("--model", "Qwen3-8B", "--len", "8192", "--lora-rank", "256",
                                                   "--lora-targets", "q_proj")):
        status, out, _ = cli(*given, "--gpu", "A100-80GB", "--gpus", "2", "--exact", "--rollout-gpus", "2",
                             "--offload", "--env", "--host-ram", "1000", "--json", *VERL_LOADING)
        assert (status, json.loads(out)[0]["plans"][0]["host_memory_gb"]) == (0, 71.8)


def test_the_exclusions_place_a_job_on_one_node_where_its_targets_alone_take_two(cli: Cli, tmp_path: Path) -> None:
    # Nodes of 4 GPUs and 72 GiB of host memory: q's Offload needs 71.8 GiB, and fits; qv's 72.1 does not, so qv
    # trains without Offload on two whole nodes; all-linear's (76.8) finds no room left.
    path = fleet_file(tmp_path, "gpus_per_node: 4, nodes: 3, host_ram_gb: 72", job("q", "{at_least: 8192}", LESS_V),
                      job("qv", "{at_least: 8192}"), job("al", "{at_least: 8192}", targets=None))
    status, out, _ = cli("cluster", str(path), "--time-limit", "10", "--json", *VERL_LOADING)
    result = json.loads(out)
    assert status == 1  # al is left out
    assert {job["job"]: (job["nodes"], job["trainer_gpus"], job["plan"]["offload"], job["plan"]["sp"],
                         job["plan"]["max_model_len"], job["host_memory_gb"]) for job in result["placements"]} == {
        "q": ([2], 2, True, 2, 51200, 71.8), "qv": ([0, 1], 4, False, 4, 51200, 31.0)}
    # al, of equal priority and last in the file, is left out in a tie (s82).
    assert [(job["job"], job["reason_code"]) for job in result["unplaced"]] == [("al", "priority-tie")]
    status, out, _ = cli("cluster", str(path), "--time-limit", "10", *VERL_LOADING)
    assert status == 1
    assert "    training       LoRA 256 on q_proj,v_proj less v_proj, no ref\n" in out
    assert ("less EXCLUDED: less the modules its lora_exclude_modules (an exclude_modules regex) matches"
            in " ".join(out.split()))


def test_the_emitted_config_writes_the_exclusions_as_solve_emits_a_configs(cli: Cli, tmp_path: Path) -> None:
    path = fleet_file(tmp_path, "gpus_per_node: 8, nodes: 1", job("q", more=LESS_V, rank=16),
                      job("mlp", more=", lora_exclude_modules: '.*\\.mlp\\..*'", rank=16, targets=None))
    status, _, _ = cli("cluster", str(path), "--time-limit", "10", "--emit-dir", str(tmp_path / "emit"))
    written = {name: (tmp_path / "emit" / f"{name}.yaml").read_text() for name in ("q", "mlp")}
    assert status == 0
    assert ("  # a new adapter on target_modules '.*\\.(q_proj|v_proj)' less exclude_modules '.*\\.v_proj', as\n"
            "  # planned; with LoRA Trinity builds no reference model; but target_modules '.*\\.(q_proj|v_proj)'\n"
            ) in written["q"]
    assert ("  # adapter_config.json before you load it\n"
            "  lora_configs: [{lora_rank: 16, target_modules: '.*\\.(q_proj|v_proj)', "
            "exclude_modules: '.*\\.v_proj'}]\n"
            ) in written["q"]
    assert ("  lora_configs: [{lora_rank: 16, target_modules: all-linear, exclude_modules: '.*\\.mlp\\..*'}]\n"
            in written["mlp"])


def test_a_change_of_exclusions_moves_the_job_under_current(cli: Cli, tmp_path: Path) -> None:
    running = fleet_file(tmp_path, "gpus_per_node: 8, nodes: 1", job("q", more=LESS_V, rank=16))
    _, now, _ = cli("cluster", str(running), "--time-limit", "10", "--json")
    (tmp_path / "now.json").write_text(now)
    asked = {"same": LESS_V, "other": ", lora_exclude_modules: '.*\\.q_proj'", "none": ""}
    moves = {}
    for name, excluded in asked.items():
        path = fleet_file(tmp_path, "gpus_per_node: 8, nodes: 1", job("q", more=excluded, rank=16),
                          name=f"{name}.yaml")
        status, out, _ = cli("cluster", str(path), "--time-limit", "10", "--current", str(tmp_path / "now.json"),
                             "--json")
        (placed,) = json.loads(out)["placements"]
        moves[name] = (status, placed["current"], placed.get("move_reason_code"), placed.get("move_reason"))
    assert moves == {
        "same": (0, "stays", None, None),
        "other": (0, "moves", "training-changed", ("the file asks lora_exclude_modules .*\\.q_proj now; it runs with "
                                                   "exclude_modules .*\\.v_proj")),
        "none": (0, "moves", "training-changed", ("the file asks lora_exclude_modules none now; it runs with "
                                                  "exclude_modules .*\\.v_proj"))}


@pytest.mark.parametrize(("excluded", "error"), [
    ("'('", ("lora_exclude_modules '(' is no regular expression (missing ), unterminated subpattern at position 0): "
             "give a regular expression that matches whole names, such as .*\\.v_proj, or remove it")),
    ("'.*'", ("lora_exclude_modules '.*', on Qwen3-8B, leaves out every module lora_targets 'q_proj,v_proj' matches "
              "(\"All modules were excluded\"): exclude fewer, or remove it")),
    ("'.*_proj'", ("lora_exclude_modules '.*_proj', on Qwen3-8B, leaves out every module lora_targets 'q_proj,v_proj' "
                   "matches (\"No modules were targeted for adaptation\"): exclude fewer, or remove it")),
])
def test_exclusions_solve_refuses_in_a_config_are_refused_in_one_line(cli: Cli, tmp_path: Path, excluded: str,
                                                                      error: str) -> None:
    path = fleet_file(tmp_path, "gpus_per_node: 8, nodes: 1",
                      job("qv", more=f", lora_exclude_modules: {excluded}", rank=16))
    assert cli("cluster", str(path), "--time-limit", "5") == (
        2, "", f"solve cluster: error: {path}: job qv: {error}\n")


def test_a_config_with_those_exclusions_is_refused_by_solve_too(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "trinity.yaml"
    config.write_text(TRINITY % "exclude_modules: '.*'")
    status, out, _ = cli("--from-config", str(config), "--gpu", "A100-80GB", "--check", "--json")
    problems = dict(zip(json.loads(out)[0]["current"]["config_problem_codes"],
                        json.loads(out)[0]["current"]["config_problems"], strict=True))
    assert status == 1 and problems["lora-configs-refused"].startswith(
        "model.lora_configs[0].exclude_modules '.*', on Qwen3-8B (a dense model), leaves out every module "
        "target_modules '.*\\.(q_proj|v_proj)' matches (\"All modules were excluded\")")


def test_exclusions_without_a_rank_or_as_a_list_are_refused(cli: Cli, tmp_path: Path) -> None:
    unranked = "{name: qv, model: Qwen3-8B, max_model_len: 8192, lora_exclude_modules: %s}"
    path = fleet_file(tmp_path, "gpus_per_node: 8, nodes: 1", unranked % "'.*\\.v_proj'")
    assert cli("cluster", str(path), "--time-limit", "5") == (
        2, "", (f"solve cluster: error: {path}: job qv: lora_exclude_modules '.*\\.v_proj' without LoRA: the "
                "exclusions are a LoRA adapter's; give a lora_rank above 0\n"))
    path = fleet_file(tmp_path, "gpus_per_node: 8, nodes: 1", unranked % "[v_proj]")
    assert cli("cluster", str(path), "--time-limit", "5") == (
        2, "", f"solve cluster: error: {path}: line 4: job qv, lora_exclude_modules: must be text, got ['v_proj']\n")


def test_an_unplaced_job_says_its_exclusions(cli: Cli, tmp_path: Path) -> None:
    path = fleet_file(tmp_path, "gpus_per_node: 4, nodes: 1", job("al", more=", priority: 3", targets=None),
                      job("q", more=LESS_V))
    status, out, _ = cli("cluster", str(path), "--time-limit", "10", "--json")
    assert (status, [(job["job"], job["lora_target_modules"], job["lora_exclude_modules"])
                     for job in json.loads(out)["unplaced"]]) == (1, [("q", ".*\\.(q_proj|v_proj)", ".*\\.v_proj")])
    status, out, _ = cli("cluster", str(path), "--time-limit", "10")
    assert status == 1 and "│ q   │ LoRA 256 on q_proj,v_proj less v_proj, no ref │ no room left in a100" in out


def test_the_training_column_says_the_exclusions_briefly() -> None:
    assert (training_words(16, None, None, lora_targets="all-linear", lora_excluded=".*\\.mlp\\..*"),
            training_words(16, None, None, lora_targets=".*\\.(q_proj|v_proj)",
                           lora_excluded=".*\\.layers\\.(0|1|2|3|4|5)\\..*")) == (
        "LoRA 16 on all-linear less .*\\.mlp\\..*, no ref",
        "LoRA 16 on q_proj,v_proj less .*\\.layers\\.(0|1|2|3|..., no ref")


def test_a_jobs_figures_and_cautions_count_its_own_adapter() -> None:
    # One model per job (Planner.job_catalog): its host need, the thin-headroom stretch's margin and the tables
    # caution read the model counting its adapter on its targets less its exclusions, as its plans do.
    planner = Planner(load_catalog(), load_weights(), "auto")
    job = Job(name="q", model="Qwen3-8B", max_model_len=8192, lora_rank=256, lora_targets="q_proj,v_proj",
              lora_exclude_modules=".*\\.v_proj", trinity_version="0.5.1")  # VERL_LOADING
    assert planner.job_model(job).lora_targets == LoraTargets(".*\\.(q_proj|v_proj)", ".*\\.v_proj")
    assert planner.job_catalog(job).model("Qwen3-8B") == planner.job_model(job)
    assert planner.job_model(job.model_copy(update={"lora_exclude_modules": None})).lora_targets == LoraTargets(
        ".*\\.(q_proj|v_proj)")
    [plan] = solver.plan("Qwen3-8B", gpu="A100-80GB", budget_gpus=2, exact=True, max_model_len=8192, lora_rank=256,
                         lora_targets="q_proj", offload=True, trinity_version="0.5.1")[0].plans
    assert (plan.gpus, plan.offload, plan.model_loading) == (2, True, "rank-0")
    assert planner.host_tenths(job, plan) == 718  # 71.8 GiB, as the placement's figure


def test_a_job_built_in_code_takes_its_exclusions() -> None:
    pool = solver.Pool(name="a100", gpu="A100-80GB", gpus_per_node=8, nodes=1)
    job = solver.Job(name="q", model="Qwen3-8B", max_model_len=8192, rollout_gpus=2, lora_rank=16,
                     lora_exclude_modules=".*\\.mlp\\..*")
    result = solver.place(solver.Fleet(pools=(pool,), jobs=(job,)), time_limit_s=10)
    assert [(placed.job, placed.plan.lora_target_modules, placed.plan.lora_exclude_modules)
            for placed in result.placements] == [("q", "all-linear", ".*\\.mlp\\..*")]
    with pytest.raises(solver.QueryError) as refused:
        solver.place(solver.Fleet(pools=(pool,), jobs=(job.model_copy(update={"lora_exclude_modules": ".*"}),)),
                     time_limit_s=10)
    assert str(refused.value) == ("job q: lora_exclude_modules '.*', on Qwen3-8B, leaves out every module all-linear "
                                  "matches (\"All modules were excluded\"): exclude fewer, or remove it")


def test_config_query_takes_exclusions_as_it_takes_targets_in_place_of_the_configs() -> None:
    # make_query's keyword, which config_query takes as it takes each: given, it overrides the config's exclusions,
    # left out of the config's own targets where lora_targets is not given (review80a: all-linear's before), as
    # lora_targets= alone drops its exclusions.
    config = read_trinity_config(TRINITY % "exclude_modules: '.*\\.v_proj'", "trinity.yaml", {})
    catalog = load_catalog()
    assert config_query(catalog, config, gpu="a100").lora_targets == LoraTargets(".*\\.(q_proj|v_proj)", ".*\\.v_proj")
    assert config_query(catalog, config, gpu="a100", lora_exclude_modules=".*\\.q_proj").lora_targets == LoraTargets(
        ".*\\.(q_proj|v_proj)", ".*\\.q_proj")
    assert config_query(catalog, config, gpu="a100", lora_targets="q_proj").lora_targets == LoraTargets(".*\\.q_proj")
