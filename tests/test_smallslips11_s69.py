"""Small slips left by session 69's reviews (helper smallslips11): a placement whose search never ran says so (a
required job's ways cut short by the time limit); the cost line's ``(best with ...)`` names the host memory and the
train batch where a row beside it shows a better plan without them; a GPU name with a count (``a100x4``) is told to
give the count apart in ``solve tables``, a cluster file, and the API, each in its own words."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

import solver
from solver.tables import load_catalog, load_fleet

Cli = Callable[..., tuple[int, str, str]]

CATALOG = load_catalog()

TWO_REQUIRED = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
                "jobs": [{"name": name, "model": "Qwen3-4B", "max_model_len": 4096, "required": name != "c"}
                         for name in ("a", "b", "c")]}
"""Three small jobs, a and b required: at 0.01 s the count of the planner's questions ends after a's ways."""

NEVER_RAN = ("status: unknown: time ran out working out the jobs' ways to run, so the search for a placement never ran "
             "(raise --time-limit)")


def _write(tmp_path: Path, fleet: dict) -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(fleet), encoding="utf-8")
    return path


@pytest.mark.parametrize("options", [(), ("--minimize", "nodes")])
def test_a_placement_whose_required_jobs_ways_were_cut_short_says_its_search_never_ran(
        cli: Cli, tmp_path: Path, options: tuple[str, ...]):
    # The status line said only "status: unknown", as if the search had run and found nothing.
    status, out, err = cli("cluster", str(_write(tmp_path, TWO_REQUIRED)), "--time-limit", "0.01", *options)
    assert (status, err, out.splitlines()[0]) == (1, "", NEVER_RAN)
    # "raise --time-limit" once, on the status line; the line under it, the limit that would likely do
    assert " ".join(out.split()).startswith(
        f"{NEVER_RAN} the time limit cut working out the jobs' ways short: b, c got none (the jobs of more priority "
        "are asked first), so no placement was found (--time-limit 1 would likely work them all out) ")
    placed = json.loads(cli("cluster", str(_write(tmp_path, TWO_REQUIRED)), "--time-limit", "0.01", "--json",
                            *options)[1])
    assert (placed["status"], placed["placements"], placed["ways_cut_short"]) == ("unknown", [], ["b", "c"])


def test_a_placement_whose_jobs_not_required_were_cut_short_searched(tmp_path: Path):
    fleet = load_fleet(_write(tmp_path, {**TWO_REQUIRED, "jobs": TWO_REQUIRED["jobs"][:1] + [
        {**job, "required": False} for job in TWO_REQUIRED["jobs"][1:]]}), CATALOG)
    result = solver.place(fleet, catalog=CATALOG, time_limit_s=0.01)
    assert (result.status, [p.job for p in result.placements], result.ways_cut_short, result.search_never_ran) == (
        "feasible", ["a"], ("b", "c"), False)
    text = solver.cluster_text(result, fleet)
    assert text.splitlines()[0] == (
        "status: feasible; placed priority (of 3): 1, bound 1 on the jobs whose ways were worked out")
    cut = solver.place(fleet, catalog=CATALOG, time_limit_s=0.01, minimize="nodes")
    assert cut.search_never_ran and solver.cluster_text(cut, fleet).splitlines()[0] == (
        "status: unknown: time ran out working out the jobs' ways to run, so the search for a placement never ran "
        "(raise time_limit_s)")


def _row(out: str, label: str) -> str:
    """The summary row of `out` that starts with `label`, its value only (its first line)."""
    [row] = [line[len(label):].strip() for line in out.splitlines() if line.startswith(f"{label} ")]
    return row


A100_8B = ("--model", "8B", "--gpu", "a100")
V051 = ("--trinity-version", "0.5.1")


@pytest.mark.parametrize(("argv", "best"), [
    # A batch that 3 ranks divide runs Env + SP=2 on 6 GPUs (the other batch row): the plan is best within 256.
    (("--gpus", "6", "--len", "32768", "--train-batch-size", "256"), "best with --train-batch-size 256"),
    # A batch the best plan's ranks divide shows no other plan: best, as without it.
    (("--gpus", "6", "--len", "32768", "--train-batch-size", "96"), "best"),
    # More host memory reaches 102400 tokens (the host limit row): the plan is best within 96 GiB, pins first. (Trinity
    # 0.5.1 loads this untied model on rank 0 alone, 50.9 GiB; on every rank, as no release named counts, no plan
    # fits 96 GiB.)
    (("--maximize", "len", "--gpus", "6", "--host-ram", "96", *V051), "best with --host-ram 96 GiB"),
    (("--maximize", "len", "--gpus", "6", "--host-ram", "96", "--sp", "4", *V051),
     "best with --sp 4 and --host-ram 96 GiB"),
    (("--maximize", "len", "--gpus", "6", "--host-ram", "96", "--train-batch-size", "256", *V051),
     "best with --host-ram 96 GiB"),
    # The host memory the best plan fits in costs nothing: best, as without it (47.9 GiB on 0.5.1).
    (("--len", "32k", "--host-ram", "96", *V051), "best"),
])
def test_the_cost_line_names_the_limits_a_better_plan_beside_it_lifts(cli: Cli, argv: tuple[str, ...], best: str):
    status, out, _ = cli(*A100_8B, *argv)
    assert status == 0 and _row(out, "cost").endswith(f" relative step time ({best})")


def test_the_apis_cost_line_names_the_batch_as_its_keyword():
    answers = solver.plan(model="8B", gpu="A100-80GB", budget_gpus=6, max_model_len=32768, train_batch_size=256)
    assert _row(solver.answers_text(answers), "cost") == "0.325 relative step time (best with train_batch_size=256)"


def test_a_configs_batch_is_named_in_words_on_the_cost_line(cli: Cli, tmp_path: Path):
    config = {"algorithm": {"algorithm_type": "grpo"}, "model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 32768},
              "cluster": {"node_num": 1, "gpu_per_node": 8}, "buffer": {"train_batch_size": 256},
              "explorer": {"rollout_model": {"engine_num": 2}}}
    path = _write(tmp_path, config)
    status, out, _ = cli("--from-config", str(path), "--gpu", "a100", "--total-gpus", "8")
    assert status == 0 and _row(out, "cost") == "0.325 relative step time (best with a train batch of 256)"


COUNT_IN_NAME = "gives {} A100-80GB GPUs in one name: give the GPU type and the count{} apart: {}"


def test_solve_tables_tells_a_gpu_name_with_a_count_to_give_it_apart(cli: Cli):
    # It said "unknown GPU 'a100x4'; accepted: ...", as solve, map and memory did before smallslips10.
    assert cli("tables", "--gpu", "a100x4") == (2, "", "solve tables: error: --gpu 'a100x4' " + COUNT_IN_NAME.format(
        4, "", "--gpu a100 --gpus 4") + "\n")


def test_a_cluster_files_pool_with_a_count_in_its_gpu_is_told_the_fields(cli: Cli, tmp_path: Path):
    pools = [{"name": "a100", "gpu": "a100x8", "nodes": 1, "gpus_per_node": 8}]
    path = _write(tmp_path, {**TWO_REQUIRED, "pools": pools})
    refused = f"{path}: pool a100, gpu: 'a100x8' " + COUNT_IN_NAME.format(8, " per node", "gpu: a100, gpus_per_node: 8")
    assert cli("cluster", str(path)) == (2, "", f"solve cluster: error: {refused}\n")
    with pytest.raises(solver.TableError) as raised:
        load_fleet(path, CATALOG)
    assert str(raised.value) == refused


@pytest.mark.parametrize("gpu", ["a100x8", "8x a100"])
def test_a_pool_without_gpus_per_node_whose_gpu_has_the_count_is_told_where_it_goes(cli: Cli, tmp_path: Path, gpu: str):
    # persona90a: it said only "missing field 'gpus_per_node' (fields: ...)", the count written in the gpu unseen.
    path = _write(tmp_path, {**TWO_REQUIRED, "pools": [{"name": "a100", "gpu": gpu, "nodes": 1}]})
    refused = (f"{path}: line 15: pool a100: missing field 'gpus_per_node': gpu {gpu!r} "
               + COUNT_IN_NAME.format(8, " per node", "gpu: a100, gpus_per_node: 8"))
    assert cli("cluster", str(path)) == (2, "", f"solve cluster: error: {refused}\n")


@pytest.mark.parametrize("pool", [5, "a100x8"])
def test_a_pool_that_is_no_mapping_is_told_so_not_a_crash(cli: Cli, tmp_path: Path, pool: object):
    # lastread90: the count-in-name check looked for gpus_per_node in any pool: 5 raised TypeError, exit 70
    path = _write(tmp_path, {**TWO_REQUIRED, "pools": [pool]})
    refused = f"{path}: line 15: pools item 1: must be a mapping, got {pool!r}"
    assert cli("cluster", str(path)) == (2, "", f"solve cluster: error: {refused}\n")


@pytest.mark.parametrize(("call", "error"), [
    (lambda: solver.plan(model="4B", gpu="a100x4"),
     "gpu='a100x4' " + COUNT_IN_NAME.format(4, "", "gpu='a100', budget_gpus=4")),
    (lambda: solver.plan(model="4B", gpu=["h20", "4xA100"]),
     "gpu='4xA100' " + COUNT_IN_NAME.format(4, "", "gpu=['h20', 'A100'], budget_gpus=4")),
    (lambda: solver.map_plans(model="4B", gpu="a100*4"),
     "gpu='a100*4' " + COUNT_IN_NAME.format(4, "", "gpu='a100', gpus_up_to=4")),
    (lambda: solver.estimate_memory(model="4B", gpu="a100:4", gpus=4, max_model_len=4096, sp=1, env=False,
                                    offload=False),
     "gpu='a100:4' " + COUNT_IN_NAME.format(4, "", "gpu='a100', gpus=4")),
    (lambda: solver.place(solver.Fleet(pools=(solver.Pool(name="p", gpu="a100x8", nodes=1, gpus_per_node=8),),
                                       jobs=(solver.Job(name="a", model="4B", max_model_len=4096),))),
     "pool p: gpu='a100x8' " + COUNT_IN_NAME.format(8, " per node", "gpu='a100', gpus_per_node=8")),
])
def test_the_api_tells_a_gpu_name_with_a_count_to_give_it_apart(call: Callable[[], object], error: str):
    with pytest.raises(solver.QueryError) as raised:
        call()
    assert str(raised.value) == error


def test_a_name_the_catalogue_has_or_a_count_of_no_gpu_type_is_read_as_before(cli: Cli):
    assert solver.plan(model="4B", gpu="MI300X", max_model_len=4096)[0].gpu == "MI300X"  # an x, no count
    status, _, err = cli("tables", "--gpu", "zz9x4")
    assert (status, err.startswith("solve tables: error: unknown GPU 'zz9x4'; accepted: ")) == (2, True)
