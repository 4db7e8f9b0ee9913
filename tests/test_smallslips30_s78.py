"""Small slips (s78, helper smallslips30): Ctrl-C once ``solve cluster``'s search is over (the reasons asked again, or
the running jobs marked) keeps the placement found, as docs/cli.md says; ``--trinity-version`` and
``trinity_version`` take only the releases rft-solver knows."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from test_smallslips24_s77 import Cli

import solver
import solver.cluster.search

FLEET = Path(__file__).parent.parent / "docs" / "examples" / "fleet.yaml"
PLACED = ["math-4b", "code-8b", "chat-14b", "probe-0.6b"]


@pytest.mark.usefixtures("python_ctrl_c")  # Python's own Ctrl-C handler, also in a suite run with Ctrl-C ignored
def test_ctrl_c_while_the_reasons_are_asked_again_keeps_the_placement(cli: Cli, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: Ctrl-C in the reasons stopped them, and again as they were asked again: no JSON, exit 130.
    reasons = solver.cluster.search.unplaced_reasons
    asked = []

    def ctrl_c_in_the_reasons(*args: object, **keywords: object) -> object:
        asked.append(1)
        signal.raise_signal(signal.SIGINT)  # the first stops them; the second, as they are asked again, is held
        return reasons(*args, **keywords)  # type: ignore[arg-type]

    monkeypatch.setattr(solver.cluster.search, "unplaced_reasons", ctrl_c_in_the_reasons)
    folder = tmp_path / "configs"
    status, out, err = cli("cluster", str(FLEET), "--emit-dir", str(folder), "--json")
    placement = json.loads(out)
    assert (status, len(asked), placement["interrupted"], [placed["job"] for placed in placement["placements"]]) == (
        130, 2, True, PLACED)
    assert err.splitlines()[-2:] == [
        f"solve cluster: interrupted: no configs written to {folder} (the placement may not be the best)",
        "solve cluster: interrupted: the best placement found so far is above"]
    assert not folder.exists()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Python's own handler is back


@pytest.mark.usefixtures("python_ctrl_c")
def test_ctrl_c_while_the_running_jobs_are_marked_keeps_the_placement_marked(cli: Cli, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: Ctrl-C in with_current (the stays/moves/starts of --current) gave no JSON and exit 130.
    current = tmp_path / "now.json"
    current.write_text(cli("cluster", str(FLEET), "--json")[1])
    marked = solver.cluster.search.with_current
    asked = []

    def ctrl_c_while_marking(*args: object, **keywords: object) -> solver.ClusterResult:
        asked.append(1)
        signal.raise_signal(signal.SIGINT)  # the first stops the marking; the second, as it is marked again, is held
        return marked(*args, **keywords)  # type: ignore[arg-type]

    monkeypatch.setattr(solver.cluster.search, "with_current", ctrl_c_while_marking)
    status, out, err = cli("cluster", str(FLEET), "--current", str(current), "--json")
    placement = json.loads(out)
    assert (status, len(asked), placement["interrupted"]) == (130, 2, True)
    assert [(placed["job"], placed["current"]) for placed in placement["placements"]] == [
        (job, "stays") for job in PLACED]
    assert err.splitlines()[-1] == "solve cluster: interrupted: the best placement found so far is above"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
