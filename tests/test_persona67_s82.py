"""A cluster table's Trinity column note (s82, helper persona67): it says what ``none`` means only where a row of the
table shows ``none`` (a job counted for no release); a one-job fleet on four nodes of 8 H200s whose job names 0.6,
Qwen3-235B-A22B's planning case, showed ``none: none named (0.6's counts)`` under a column that read ``0.6`` alone."""

from __future__ import annotations

import re
from pathlib import Path

from test_smallslips24_s77 import Cli

from solver.render.cluster import RELEASE_NOTE, UNNAMED_RELEASE_NOTE

POOL = "  - {name: h100, gpu: h100, gpus_per_node: 6, nodes: 2, host_ram_gb: 700}\n"
"""Two nodes of 6 H100s with 700 GiB of host memory each (tests/test_jobrelease_s81.py's pool)."""


def _fleet(tmp_path: Path, *releases: str) -> Path:
    """A fleet of one Qwen3-30B-A3B job at 8192 tokens per release given (``""``: a job that names none)."""
    path = tmp_path / "fleet.yaml"
    jobs = "".join(f"  - {{name: job{index}, model: Qwen3-30B-A3B, max_model_len: 8192"
                   f"{f', trinity_version: {release}' if release else ''}}}\n"
                   for index, release in enumerate(releases))
    path.write_text(f"pools:\n{POOL}jobs:\n{jobs}", encoding="utf-8")
    return path


def _note(out: str) -> str:
    """The line under the pool's table that starts ``Trinity:``, unwrapped, up to the per-job lines that follow it."""
    joined = " ".join(out.split())
    start = joined.index("Trinity: ")
    after = re.compile(r" job\d: ").search(joined, start)
    assert after is not None
    return joined[start:after.start()]


def _releases(out: str) -> dict[str, str]:
    """Each placed job's Trinity column."""
    return {line.split("│")[3].strip(): line.split("│")[7].strip() for line in out.splitlines()
            if line.startswith("│")}


def test_a_column_of_named_releases_says_nothing_of_none(cli: Cli, tmp_path: Path) -> None:
    status, out, _ = cli("cluster", str(_fleet(tmp_path, "0.6")))
    assert status == 0 and _releases(out) == {"job0": "0.6"}
    assert _note(out) == ("Trinity: the release the job's plans are counted for (its trinity_version; else, where it "
                          "runs now, the one its plan names; else the run's)")
    assert "none named" not in out


def test_a_column_that_shows_none_says_what_it_means(cli: Cli, tmp_path: Path) -> None:
    status, out, _ = cli("cluster", str(_fleet(tmp_path, "0.5.2", "")))
    assert status == 0 and _releases(out) == {"job0": "0.5.2", "job1": "none"}
    assert _note(out) == RELEASE_NOTE + UNNAMED_RELEASE_NOTE
    assert UNNAMED_RELEASE_NOTE == "; none: none named (0.6's counts)"
