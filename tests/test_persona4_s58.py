"""A platform admin's walkthrough of `solve cluster` (session 58): `--minimize nodes` out of time names the limit
to raise; a fragment without model.model_path is told to set it; --emit-dir names configs of no job; a pool's
GPU memory in MiB or with its unit, and its GPU as `type`, are told the field."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest
import yaml
from cluster_api import place
from ortools.sat.python import cp_model
from rich.console import Console

import solver.cluster.search
from solver.cluster import least_time_limit_to_search_s
from solver.render.cluster import cluster_view
from solver.results import UnplacedCode
from solver.tables import TableError, load_catalog, load_fleet

CATALOG = load_catalog()
FLEET = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
         "jobs": [{"name": "a", "model": "0.6B", "max_model_len": 8192},
                  {"name": "b", "model": "4B", "max_model_len": 8192}]}


def _fleet(tmp_path: Path):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(FLEET), encoding="utf-8")
    return load_fleet(path, CATALOG)


@pytest.mark.parametrize(("failed", "interrupted", "status_line", "named"), [
    (cp_model.UNKNOWN, False,
     "status: unknown (time ran out before the search's first placement; raise --time-limit)", True),
    (cp_model.UNKNOWN, True, "status: unknown", False)])
def test_every_job_or_none_out_of_time_names_the_time_limit_to_raise(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failed: int, interrupted: bool, status_line: str,
        named: bool):
    # --minimize nodes with its first stage out of time before a placement (no greedy one stands in): the status
    # said only "unknown", and each job "no placement found within the time limit", with no word of what to do, where
    # the greedy placement of the default objective names --time-limit and how long working out the ways took.
    def no_first_placement(start, built, stages, interrupt, *args):
        interrupt.caught = interrupted
        return solver.cluster.search._Staged(start, first_failed=failed)

    monkeypatch.setattr(solver.cluster.search, "solve_stages", no_first_placement)
    fleet = _fleet(tmp_path)
    result = place(fleet, catalog=CATALOG, minimize="nodes")
    assert result.status == "unknown"
    assert (result.least_time_limit_s == least_time_limit_to_search_s(result.planning_s, result.building_s)) is named
    console = Console(width=400, record=True, file=io.StringIO())
    console.print(cluster_view(result, fleet, minimize_nodes=True))
    lines = console.export_text().splitlines()
    assert lines[0] == status_line
    assert lines[1].startswith("working out the jobs' ways to run took ") is named
    assert lines[1].endswith(f"a --time-limit above {math.ceil(result.least_time_limit_s or 0)} s leaves the search "
                             "time after them") is named
    if not interrupted:
        assert {(u.reason, u.reason_code) for u in result.unplaced} == {
            ("no placement found within the time limit (raise --time-limit)", UnplacedCode.TIME_LIMIT)}


def test_every_job_or_none_proven_not_to_fit_names_no_time_limit(tmp_path: Path):
    # Where CP-SAT proves that the jobs do not fit, the time limit is not why: the status names none.
    instance = {**FLEET, "jobs": [{"name": f"j{i}", "model": "14B", "max_model_len": 65536, "rollout_gpus": 4}
                                  for i in range(3)]}
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(instance), encoding="utf-8")
    fleet = load_fleet(path, CATALOG)
    result = place(fleet, catalog=CATALOG, minimize="nodes")
    assert (result.status, result.least_time_limit_s) == ("infeasible", None)
    console = Console(width=400, record=True, file=io.StringIO())
    console.print(cluster_view(result, fleet, minimize_nodes=True))
    assert console.export_text().splitlines()[0] == "status: infeasible"


def test_a_fragment_emit_dir_wrote_checked_as_it_is_is_told_to_set_model_path(cli, tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch):
    # The admin checks a job's config as --emit-dir wrote it: the fragment leaves model.model_path to the user's
    # config, and the error said only "missing model.model_path", with no word of what to give or why it is missing.
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({**FLEET, "jobs": [{"name": "b", "model": "4B", "max_model_len": 8192,
                                                        "rollout_gpus": 2}]}), encoding="utf-8")
    status, _, _ = cli("cluster", str(fleet), "--emit-dir", str(tmp_path / "out"))
    assert status == 0
    fragment = tmp_path / "out" / "b.yaml"
    status, out, err = cli("--from-config", str(fragment), "--check", "--gpu", "A100-80GB")
    assert (status, out) == (2, "")
    assert err == (f"solve: error: --from-config {fragment}: missing model.model_path: set it to the model, by its "
                   "Hugging Face name (organisation/model) or a local checkpoint's folder (a fragment that --out or "
                   "solve cluster --emit-dir wrote leaves it to your config: check the config you merge the fragment "
                   "into)\n")
    # Given the model, as the hint says, the fragment is checked.
    fragment.write_text("model:\n  model_path: Qwen/Qwen3-4B\n" + fragment.read_text(encoding="utf-8").replace(
        "model:\n", "", 1), encoding="utf-8")
    # As its header's check says, --critic none: its plan counted no critic, which the fragment's lack of an
    # algorithm_type (Trinity's default, PPO) would count (s74).
    status, out, err = cli("--from-config", str(fragment), "--check", "--gpu", "A100-80GB", "--critic", "none")
    assert status == 0 and err == ""
    assert out.splitlines()[1] == (f"{fragment.name} runs vanilla on 6 trainer GPUs at 8192 tokens (Env off, "
                                   "PYTORCH_CUDA_ALLOC_CONF unset in this shell): it trains (documented: the A100-80GB "
                                   "table for 6")
    # Without it, PPO's critic is counted resident: 7.49 GiB of its states on each GPU beside the actor's (less their
    # gradients, freed after its own update: s74; 9.99 with them), 44.09 GiB of the 71.28 usable (solve memory
    # --model 4B --gpu a100 --gpus 6 --len 8192 --critic resident), which no table vouches for: it still trains, by
    # estimate.
    status, out, err = cli("--from-config", str(fragment), "--check", "--gpu", "A100-80GB", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["trains"], current["plan"]["evidence"], current["plan"]["critic"]) == (
        0, True, "estimated", "resident"), err
    assert (current["plan"]["memory_gb"], current["plan"]["headroom_gb"]) == (44.09, round(71.28 - 44.0884, 2))


def test_emit_dir_names_the_configs_of_jobs_the_file_no_longer_has(cli, tmp_path: Path):
    # The admin renames a job and reruns into the same folder: the old name's config stayed, unmentioned, beside
    # this run's, to be started with them by a `for f in out/*.yaml` loop. Now a note names it (and the cluster file
    # itself, in that folder, is no job's config: not named).
    out = tmp_path / "out"
    fleet = out / "fleet.yaml"
    out.mkdir()
    fleet.write_text(yaml.safe_dump(FLEET), encoding="utf-8")
    status, _, err = cli("cluster", str(fleet), "--emit-dir", str(out))
    assert status == 0 and "also holds" not in err
    renamed = {**FLEET, "jobs": [{**FLEET["jobs"][0], "name": "a-v2"}, FLEET["jobs"][1]]}
    fleet.write_text(yaml.safe_dump(renamed), encoding="utf-8")
    (out / "notes.txt").write_text("not a config", encoding="utf-8")
    status, _, err = cli("cluster", str(fleet), "--emit-dir", str(out))
    assert status == 0
    assert f"solve cluster: note: {out} also holds a.yaml, named for no job of {fleet} (from an earlier run, of a " \
           "job since renamed or removed?): left in place; start only the configs this run wrote\n" in err
    assert sorted(path.name for path in out.iterdir()) == ["a-v2.yaml", "a.yaml", "b.yaml", "fleet.yaml", "notes.txt"]
    for name in ("c", "d", "e", "f"):
        (out / f"{name}.yaml").write_text("x: 1\n", encoding="utf-8")
    status, _, err = cli("cluster", str(fleet), "--emit-dir", str(out))
    assert f"note: {out} also holds a.yaml, c.yaml, d.yaml, e.yaml and 1 more file, named for no job" in err


@pytest.mark.parametrize(("field", "value", "hint"), [
    ("gpu_memory_gb", 81559, ("must be at most 4096, got 81559 (no GPU has 81559 GB; if it is nvidia-smi's total in "
                              "MiB, 79.6 GiB, give gpu_memory_mib: 81559)")),
    ("gpu_memory_gb", "48GB", ("must be a whole number, got '48GB' (GB as sold, as a number: 48 for 48 GB; "
                               "nvidia-smi's total in MiB goes in gpu_memory_mib)")),
    ("gpu_memory_mib", "81559 MiB", ("must be a whole number, got '81559 MiB' (nvidia-smi's total in MiB, as a "
                                     "number: 81559)")),
    ("gpu_memory_gb", 4097 * 1024, f"must be at most 4096, got {4097 * 1024}"),  # beyond any GPU's MiB: no hint
    ("gpu_memory_gb", "48", ("must be a whole number, got '48' (quoted, YAML reads it as text: write it without "
                             "quotes)")),
])
def test_a_pools_gpu_memory_written_as_nvidia_smi_shows_it_says_where_it_goes(
        tmp_path: Path, field: str, value: object, hint: str):
    # The admin copies nvidia-smi's total (81559 MiB) into gpu_memory_gb, or writes the unit: the error said only
    # "must be at most 16384" or "must be a whole number", where --gpu-memory and the API name the MiB field.
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [{"name": "lab", "gpu": "RTX-PRO-5000", field: value, "nodes": 1,
                                               "gpus_per_node": 8}], "jobs": FLEET["jobs"]}), encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_fleet(path, CATALOG)
    assert str(caught.value) == f"{path}: line 10: pool lab, {field}: {hint}"


def test_a_pools_gpu_given_as_its_type_is_told_the_field(tmp_path: Path):
    # `type: H100`, as an inventory lists a node's GPUs: the error named no field for it, and the gpu it lacks too.
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [{"name": "h100", "type": "H100", "nodes": 1, "gpus_per_node": 8}],
                                    "jobs": FLEET["jobs"]}), encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_fleet(path, CATALOG)
    assert str(caught.value) == (f"{path}: line 12: pool h100: unknown field 'type' (did you mean gpu? fields: name, "
                                 "gpu, nodes, gpus_per_node, host_ram_gb, gpu_memory_gb, gpu_memory_mib, "
                                 "gpu_interconnect, node_interconnect, down)")


@pytest.mark.parametrize(("job", "said"), [
    # A priority written as a word: the error named no range and no meaning.
    ({"priority": "high"}, ("line 5: job a, priority: must be a whole number from 1 to 1000000, got 'high' (a weight: "
                            "the placement places the most total priority)")),
    # A pool named in another case (pool names differ in more than case, so the one meant is plain).
    ({"pool": "A100"}, "job a, pool: no pool named 'A100' (did you mean a100? pools: a100)"),
    ({"pool": "h100"}, "job a, pool: no pool named 'h100' (pools: a100)"),
])
def test_a_jobs_priority_as_a_word_and_its_pool_in_another_case_are_told_what_to_write(
        tmp_path: Path, job: dict[str, object], said: str):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": FLEET["pools"], "jobs": [{**FLEET["jobs"][0], **job}]}),
                    encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_fleet(path, CATALOG)
    assert str(caught.value) == f"{path}: {said}"
