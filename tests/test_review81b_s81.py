"""Review of s81's middle merges (helper review81b): a running job whose file names the minor release it runs a patch
of (``0.5`` on ``0.5.1``) is counted for the patch it runs; a plan naming a release rft-solver does not know
(``0.7``) is judged by the run's release with the note, not refused with a line that names no file; a job's own
release named in the tables where the run's is another."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_jobrelease_s81 import _fleet, _placed
from test_smallslips24_s77 import Cli

from solver.render.cluster import RELEASE_NOTE
from solver.tables import release_name


@pytest.mark.parametrize(("value", "named"), [
    ("0.7", None), ("0.4", None), ("v0.7", None), ("0.5.3", None), ("0.5", "0.5"), ("v0.5.1", "0.5.1"),
    ("0.6.0+cu121", "0.6.0")])
def test_release_name_names_no_release_rft_solver_does_not_know(value: str, named: str | None) -> None:
    assert release_name(value) == named


def _current(cli: Cli, tmp_path: Path, release: str) -> Path:
    """A placement of two Qwen3-30B-A3B jobs made with ``--trinity-version release``, as ``--current`` reads it."""
    _, out, _ = cli("cluster", str(_fleet(tmp_path, old="", new="", name="plain.yaml")), "--trinity-version", release,
                    "--json")
    current = tmp_path / f"now-{release}.json"
    current.write_text(out, encoding="utf-8")
    return current


def test_a_file_minor_release_counts_the_patch_the_job_runs(cli: Cli, tmp_path: Path) -> None:
    # Running on 0.5.1 (transformers 4: routed experts separate); the file says 0.5, of which 0.5.1 is a patch: the
    # job stays and is counted for 0.5.1, as it runs, not for 0.5's larger of both transformers' layouts
    current = _current(cli, tmp_path, "0.5.1")
    minor = _fleet(tmp_path, old=", trinity_version: 0.5", new=", trinity_version: v0.5", name="minor.yaml")
    status, out, err = cli("cluster", str(minor), "--current", str(current), "--json")
    assert (status, err) == (0, "")
    assert _placed(out) == {"old": ([0], 6, 517.3, "0.5.1", "separate", "stays", None),
                            "new": ([1], 6, 517.3, "0.5.1", "separate", "stays", None)}
    # A patch in the file beside a plan of the minor release: the file's patch, the more precise
    patch = _fleet(tmp_path, old=", trinity_version: 0.5.1", new="", name="patch.yaml")
    status, out, err = cli("cluster", str(patch), "--current", str(_current(cli, tmp_path, "0.5")), "--json")
    assert (status, err) == (0, "")
    assert {job: placed[3:6] for job, placed in _placed(out).items()} == {
        "old": ("0.5.1", "separate", "stays"), "new": ("0.5", "either", "stays")}
    # Another patch than the one it runs on: a restart on it
    other = _fleet(tmp_path, old=", trinity_version: 0.5.2", new="", name="other.yaml")
    status, out, _ = cli("cluster", str(other), "--current", str(current), "--json")
    assert status == 0
    assert {job: placed[3:] for job, placed in _placed(out).items()} == {
        "old": ("0.5.2", "either", "moves", "release-changed"), "new": ("0.5.1", "separate", "stays", None)}


def test_a_plan_of_a_release_rft_solver_does_not_know_is_judged_by_the_runs(cli: Cli, tmp_path: Path) -> None:
    # Before: refused, exit 2, "solve cluster: error: trinity_version takes ..." naming neither file nor job
    placed = json.loads(_current(cli, tmp_path, "0.5.2").read_text(encoding="utf-8"))
    for placement in placed["placements"]:
        placement["plan"]["trinity_version"] = "0.7"
    current = tmp_path / "later.json"
    current.write_text(json.dumps(placed), encoding="utf-8")
    plain = tmp_path / "plain.yaml"
    status, out, err = cli("cluster", str(plain), "--current", str(current), "--json")
    assert status == 0
    # Judged by this run's release (none named): every rank loads the untied model at start-up (113.6 GiB each), so
    # 4 GPUs would need 757.1 GiB at start-up, above the 700 the pool has; 2 need 681.1, as while training
    assert {job: p[1:6] for job, p in _placed(out).items()} == {"old": (2, 681.1, None, "fused", "moves"),
                                                                "new": (2, 681.1, None, "fused", "moves")}
    assert " ".join(err.split()) == (
        f"solve cluster: note: --current {current} runs old, new on plans counted for Trinity 0.7, this run for no "
        "Trinity release named (0.6's counts): whether they stay is judged by this run's release, not the one they "
        "run on; rft-solver knows no rules of Trinity 0.7, which trinity_version refuses (it takes 0.5, 0.5.0, "
        "0.5.1, 0.5.2, 0.6 or 0.6.0 (or a tag of one, v0.5.2)): to judge them by their own release, run them on one "
        f"of those and give it as their trinity_version in {plain}")


def test_jobs_of_one_release_of_their_own_name_it_in_the_tables(cli: Cli, tmp_path: Path) -> None:
    # Both jobs 0.5.2 by their own key, the run naming none (0.6's counts): before, no Trinity column, the table
    # saying nothing of the release its figures (4 GPUs, 681.4 GiB: 0.5.2 loads the model on every rank,
    # test_jobrelease_s81's POOL) are counted for
    fleet = _fleet(tmp_path, new=", trinity_version: v0.5.2", name="same.yaml")
    status, out, _ = cli("cluster", str(fleet))
    rows = {line.split("│")[3].strip(): (line.split("│")[4].strip(), line.split("│")[7].strip())
            for line in out.splitlines() if line.startswith("│")}
    assert status == 0 and rows == {"old": ("4", "0.5.2"), "new": ("4", "0.5.2")}
    assert " ".join(RELEASE_NOTE.split()) in " ".join(out.split())
    # The run's own release for jobs that name none: no column, as before
    status, out, _ = cli("cluster", str(_fleet(tmp_path, old="", new="", name="plain.yaml")), "--trinity-version",
                         "0.5.2")
    assert status == 0 and "┃ Trinity" not in out and "Trinity: " not in out
