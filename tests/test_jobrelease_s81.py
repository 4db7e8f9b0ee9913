"""Each cluster job under its own Trinity release (s81, helper jobrelease): a job's ``trinity_version`` key, checked as
``--trinity-version`` is; a running job read from ``--current`` keeps the release its plan names; each job's ways
counted under its own release (its own, else its plan's, else the run's), named in the tables' ``Trinity`` column
and each placement's ``plan.trinity_version``; a job whose file release differs from the one it runs on moves
(``release-changed``); the stderr note only where a plan names no release."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cluster import reference_checked
from test_smallslips24_s77 import Cli

import solver
from solver.cluster.options import job_options
from solver.render.cluster import RELEASE_NOTE
from solver.tables import Job, Pool

POOL = "  - {name: h100, gpu: h100, gpus_per_node: 6, nodes: 2, host_ram_gb: 700}\n"
"""Two nodes of 6 H100s, 700 GiB of host memory each: Qwen3-30B-A3B at 8192 needs Offload there. 0.5.2 loads the
untied model on every rank (113.6 GiB each), 0.6 on rank 0 alone on H100s (s84; before, both on rank 0): on 6 GPUs
0.5.2 needs 855.8 GiB (517.3 while training), 0.6 899.0 (its fp32 reference), both more than 700, so each takes 4 GPUs,
0.5.2 at 681.4 (every rank loading), 0.6 at 681.1."""


def _fleet(tmp_path: Path, old: str = ", trinity_version: 0.5.2", new: str = ", trinity_version: 0.6",
           name: str = "fleet.yaml") -> Path:
    path = tmp_path / name
    path.write_text(f"pools:\n{POOL}jobs:\n"
                    f"  - {{name: old, model: Qwen3-30B-A3B, max_model_len: 8192{old}}}\n"
                    f"  - {{name: new, model: Qwen3-30B-A3B, max_model_len: 8192{new}}}\n", encoding="utf-8")
    return path


def _placed(out: str) -> dict[str, tuple[object, ...]]:
    """Each placement of a ``solve cluster --json`` by job: its nodes, trainer GPUs, host memory per node, release,
    routed experts' layout, ``current`` and move code."""
    return {p["job"]: (p["nodes"], p["trainer_gpus"], p["host_memory_gb"], p["plan"]["trinity_version"],
                       p["plan"]["expert_layout"], p.get("current"), p.get("move_reason_code"))
            for p in json.loads(out)["placements"]}


def test_a_mixed_fleet_counts_each_job_under_its_own_release(cli: Cli, tmp_path: Path) -> None:
    fleet = _fleet(tmp_path)
    for release in (None, "0.6", "0.5.1"):  # the run's names neither job's
        status, out, err = cli("cluster", str(fleet), "--json", *(("--trinity-version", release) if release else ()))
        assert status == 0, err
        reference_checked(fleet, out, trinity_version=release)  # each job's plans counted for its own release
        assert _placed(out) == {"old": ([1], 4, 681.4, "0.5.2", "either", None, None),
                                "new": ([0], 4, 681.1, "0.6", "fused", None, None)}
    # Under one release for both, as before: both as the one
    plain = _fleet(tmp_path, old="", new="", name="plain.yaml")
    for release, (gpus, host, layout) in {"0.5.2": (4, 681.4, "either"), "0.6": (4, 681.1, "fused")}.items():
        status, out, _ = cli("cluster", str(plain), "--json", "--trinity-version", release)
        assert status == 0
        reference_checked(plain, out, trinity_version=release)  # both counted for the run's release
        assert {job: placed[1:5] for job, placed in _placed(out).items()} == {
            "old": (gpus, host, release, layout), "new": (gpus, host, release, layout)}


def test_each_jobs_ways_carry_their_own_figures(tmp_path: Path) -> None:
    # The CP-SAT model takes each way's GPUs and host memory as its job's planner question gave them: the same model
    # and length give two jobs of two releases other host figures on 4 GPUs, and on 6, where neither fits in 700
    fleet = solver.load_fleet(_fleet(tmp_path))
    planner = solver.api._fleet_and_planner(  # type: ignore[attr-defined]
        fleet, weights=None, workers=1, memory=None, margin=None, catalog=None, progress=None, estimate="auto",
        token_budget="default", time_limit_s=10.0, seed=0, trinity_version=None, required=None,
        option_names=solver.rules.API_OPTIONS)[1]
    on_four = {fleet.jobs[index].name: [(option.plan.gpus, option.host_tenths, option.plan.trinity_version,
                                         option.plan.model_loading)
                                        for option in job_options(planner, fleet, index) if option.plan.gpus == 4]
               for index in range(2)}
    assert on_four == {"old": [(4, 6814, "0.5.2", "every-rank")], "new": [(4, 6811, "0.6", "rank-0")]}
    for index, tenths in ((1, 8990), (0, 8558)):  # 0.6's 899.0 GiB and 0.5.2's 855.8 on 6: no way there
        options = job_options(planner, fleet, index)
        [four] = [option.plan for option in options if option.plan.gpus == 4]
        assert planner.host_tenths(fleet.jobs[index], four.model_copy(update={"gpus": 6})) == tenths
        assert all(option.plan.gpus != 6 for option in options)


def test_the_tables_name_each_jobs_release_where_they_mix(cli: Cli, tmp_path: Path) -> None:
    status, out, _ = cli("cluster", str(_fleet(tmp_path)))
    rows = {line.split("│")[3].strip(): line.split("│")[7].strip() for line in out.splitlines()
            if line.startswith("│")}
    assert status == 0 and rows == {"new": "0.6", "old": "0.5.2"}
    assert " ".join(RELEASE_NOTE.split()) in " ".join(out.split())
    assert RELEASE_NOTE == ("Trinity: the release the job's plans are counted for (its trinity_version; else, where "
                            "it runs now, the one its plan names; else the run's)")
    status, out, _ = cli("cluster", str(_fleet(tmp_path, old="", new="", name="same.yaml")), "--trinity-version",
                         "0.5.2")
    assert status == 0 and "┃ Trinity" not in out and "Trinity: " not in out  # the run's release for all: no column


def test_a_running_job_keeps_the_release_its_plan_names(cli: Cli, tmp_path: Path) -> None:
    plain = _fleet(tmp_path, old="", new="")
    _, out, _ = cli("cluster", str(plain), "--trinity-version", "0.5.2", "--json")
    current = tmp_path / "now.json"
    current.write_text(out, encoding="utf-8")
    # Re-planned without a release: before, both were judged by no release's counts and moved (every rank loading
    # the model, s84: to 2 GPUs at 681.1 GiB, test_a_plan_naming_no_release_is_judged_by_the_runs_with_the_note)
    status, out, err = cli("cluster", str(plain), "--current", str(current), "--json")
    assert status == 0 and "note:" not in err
    assert _placed(out) == {"old": ([0], 4, 681.4, "0.5.2", "either", "stays", None),
                            "new": ([1], 4, 681.4, "0.5.2", "either", "stays", None)}
    # The file's own release, another than the one it runs on: a restart on it
    moved = _fleet(tmp_path, old=", trinity_version: 0.6", new="", name="moved.yaml")
    status, out, err = cli("cluster", str(moved), "--current", str(current), "--json")
    assert status == 0 and "note:" not in err
    assert _placed(out) == {"old": ([0], 4, 681.1, "0.6", "fused", "moves", "release-changed"),
                            "new": ([1], 4, 681.4, "0.5.2", "either", "stays", None)}
    (old,) = [p for p in json.loads(out)["placements"] if p["job"] == "old"]
    assert old["move_reason"] == "the file asks trinity_version 0.6 now; it runs on Trinity 0.5.2"
    status, text, _ = cli("cluster", str(moved), "--current", str(current))
    assert ("moves: old: it runs on node 0 of pool h100 (GPUs 0-3) now, "
            "and restarts as placed: the file asks trinity_version 0.6 "
            "now; it runs on Trinity 0.5.2") in text.splitlines()
    # 0.5 and 0.5.2 agree: no restart, the job counted for the 0.5.2 it runs on (review81b: was the file's 0.5)
    agreeing = _fleet(tmp_path, old=", trinity_version: 0.5", new="", name="agreeing.yaml")
    status, out, _ = cli("cluster", str(agreeing), "--current", str(current), "--json")
    assert status == 0
    assert {job: (placed[3], placed[5]) for job, placed in _placed(out).items()} == {
        "old": ("0.5.2", "stays"), "new": ("0.5.2", "stays")}


def test_a_plan_naming_no_release_is_judged_by_the_runs_with_the_note(cli: Cli, tmp_path: Path) -> None:
    plain = _fleet(tmp_path, old="", new="")
    _, out, _ = cli("cluster", str(plain), "--trinity-version", "0.5.2", "--json")
    placed = json.loads(out)
    for placement in placed["placements"]:  # a placement made before plans named their release
        del placement["plan"]["trinity_version"]
    current = tmp_path / "old.json"
    current.write_text(json.dumps(placed), encoding="utf-8")
    status, out, err = cli("cluster", str(plain), "--current", str(current), "--json")
    # judged under none named, 0.6's counts with every rank loading the model (s84: 757.1 GiB on 4 GPUs, so 2, where
    # training's 681.1 is the need), as before: they move
    assert status == 0 and "note:" not in err
    assert {job: p[1:6] for job, p in _placed(out).items()} == {"old": (2, 681.1, None, "fused", "moves"),
                                                                "new": (2, 681.1, None, "fused", "moves")}
    status, out, err = cli("cluster", str(plain), "--current", str(current), "--json", "--trinity-version", "0.5.2")
    assert status == 0
    assert {job: p[5] for job, p in _placed(out).items()} == {"old": "stays", "new": "stays"}
    assert (f"solve cluster: note: --current {current} runs old, new on plans counted for no Trinity release "
            "named (0.6's counts), this run for Trinity 0.5.2 (--trinity-version 0.5.2): whether they stay is "
            "judged by this run's release, not the one they run on; give them the release they run on as "
            f"trinity_version in {plain} (or run again without --trinity-version to judge them as they run)"
            ) in " ".join(err.split())
    # The file naming their release: judged by it, no note
    named = _fleet(tmp_path, old=", trinity_version: 0.5.2", new=", trinity_version: 0.5.2", name="named.yaml")
    status, out, err = cli("cluster", str(named), "--current", str(current), "--json")
    assert status == 0 and "note:" not in err
    assert {job: p[5] for job, p in _placed(out).items()} == {"old": "stays", "new": "stays"}


def test_each_emit_dir_config_is_written_for_its_jobs_release(cli: Cli, tmp_path: Path) -> None:
    status, _, err = cli("cluster", str(_fleet(tmp_path)), "--emit-dir", str(tmp_path / "out"),
                         "--trinity-version", "0.5.1")
    assert status == 0, err
    for job, release in (("old", "0.5.2"), ("new", "0.6")):
        text = (tmp_path / "out" / f"{job}.yaml").read_text(encoding="utf-8")
        assert f"--host-ram 700 --critic none --trinity-version {release}\n" in text


@pytest.mark.parametrize(("written", "words"), [
    ("0.7", "got '0.7' (rft-solver knows the rules of these releases alone)"),
    ("0.50", "got '0.50' (rft-solver knows the rules of these releases alone)"),
    ("'0.6.0rc1'", ("got '0.6.0rc1' (a pre-release of 0.6.0, whose rules may differ from that release's: "
                    "rft-solver knows the rules of these releases alone)")),
    ("''", "got ''")])
def test_a_release_rft_solver_does_not_know_is_refused(cli: Cli, tmp_path: Path, written: str, words: str) -> None:
    fleet = _fleet(tmp_path, old=f", trinity_version: {written}")
    status, out, err = cli("cluster", str(fleet))
    assert (status, out) == (2, "")
    assert err == (f"solve cluster: error: {fleet}: line 4: job old, trinity_version: takes 0.5, 0.5.0, 0.5.1, 0.5.2, "
                   f"0.6 or 0.6.0 (or a tag of one, v0.5.2), {words}\n")


def test_a_release_that_is_no_text_is_refused(cli: Cli, tmp_path: Path) -> None:
    fleet = _fleet(tmp_path, old=", trinity_version: [0.5]")
    refusal = f"solve cluster: error: {fleet}: line 4: job old, trinity_version: must be text, got [0.5]\n"
    assert cli("cluster", str(fleet)) == (2, "", refusal)


def test_a_fleet_built_in_code_names_its_jobs_releases_as_the_file_does() -> None:
    fleet = solver.Fleet(pools=(Pool(name="h100", gpu="h100", gpus_per_node=6, nodes=2, host_ram_gb=700),),
                         jobs=(Job(name="old", model="Qwen3-30B-A3B", max_model_len=8192, trinity_version="v0.5.2"),
                               Job(name="new", model="Qwen3-30B-A3B", max_model_len=8192)))
    result = solver.place(fleet, trinity_version="0.6")
    assert {p.job: (p.trainer_gpus, p.plan.trinity_version) for p in result.placements} == {
        "old": (4, "0.5.2"), "new": (4, "0.6")}
