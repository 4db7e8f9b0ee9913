"""Small slips (s78, helper smallslips29): a fragment made without an ``environ`` names apart the keys it left unread
for a ``${oc.env:VAR}`` without a default (Trinity fails to load such a config where VAR is unset), not among the
defaults taken; a running job that stops on a node its pool no longer has says so (``stop_reason``, ``node-gone``),
as one that moves; the jobs a move line names together read ``each``; Ctrl-C once ``solve cluster``'s search is over
leaves the placement whole and its exit status the placement's, as its JSON's ``"interrupted": false`` says;
``no-room`` where host memory was rounded proves the most priority of the rounded needs alone, as docs/json.md says."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from test_cluster import ONE_NODE, round_host_memory_always, solved
from test_smallslips24_s77 import TWO_NODES, Cli, _lowered, _write

import solver
import solver.cli.cluster
from solver.render.cluster import _current_reasons
from solver.tables import load_catalog
from solver.trinity import trinity_fragment
from solver.trinity.fragment import defaults_taken_note

CATALOG = load_catalog()
QWEN3_8B = CATALOG.model("Qwen3-8B")


def _joined_comments(text: str) -> str:
    """The fragment's header paragraphs, their wrapped lines joined (each paragraph between ``#`` lines)."""
    return " ".join(line for line in text.splitlines() if line.startswith("#")).replace(" # ", " ")


def test_a_key_reading_a_variable_without_a_default_is_said_left_unread_not_taken_at_a_default():
    # Before: "took their defaults (DYN)", though ${oc.env:DYN} has none: it failed to resolve, and the key was unread.
    answer = solver.plan("Qwen3-8B", gpu="h100", budget_gpus=8, max_model_len=32768)[0]
    assert answer.best is not None
    layout = {"trainer": {"use_dynamic_bsz": "${oc.env:DYN}"}, "algorithm": {"algorithm_type": "${oc.env:ALGO,grpo}"}}
    made = _joined_comments(trinity_fragment(answer.best, QWEN3_8B, layout=layout))
    assert ("# No environ given: layout's ${oc.env:...} took their defaults (ALGO), as the keys here read them;"
            in made)
    assert ("shell). The keys here leave trainer.use_dynamic_bsz unread, as its ${oc.env:DYN} has no "
            "default; Trinity fails to load the config where trinity run starts without DYN set (OmegaConf resolves "
            "every value as Trinity loads it: trinity/common/config.py:1059 in 0.6.0): where it is set, pass that "
            "environment as environ (environ=os.environ in that shell).") in made
    assert "(DYN)" not in made and "(ALGO, DYN)" not in made
    alone = _joined_comments(trinity_fragment(answer.best, QWEN3_8B, layout={"trainer": layout["trainer"]}))
    assert "took their defaults" not in alone
    assert "# No environ given: the keys here leave trainer.use_dynamic_bsz unread, as its ${oc.env:DYN}" in alone
    read = trinity_fragment(answer.best, QWEN3_8B, layout=layout, environ={"DYN": "false"})
    assert "No environ given" not in read and "use_dynamic_bsz: true" in read  # read where it is set


def test_the_note_words_several_keys_and_variables_and_none():
    assert defaults_taken_note([], [("trainer.a", "A"), ("trainer.b", "B"), ("trainer.c", "A")]) == [(
        "# No environ given: the keys here leave trainer.a (${oc.env:A}), trainer.b (${oc.env:B}) and trainer.c "
        "(${oc.env:A}) unread, as their ${oc.env:...} have no default; Trinity fails to load the config where trinity "
        "run starts without A and B set (OmegaConf resolves every value as Trinity loads it: "
        "trinity/common/config.py:1059 in 0.6.0): where they are set, pass that environment as environ "
        "(environ=os.environ in that shell).")]
    assert defaults_taken_note([]) == []


def test_a_job_that_stops_on_a_node_its_pool_no_longer_has_names_the_node(cli: Cli, tmp_path: Path):
    # Before: only the no-room reason, "│ small (stops) │ no room left in a100 ...", never that node 1 is gone.
    current, down = _lowered(cli, tmp_path, small_priority=1)
    status, out, _ = cli("cluster", str(down), "--current", str(current), "--json")
    (small,) = json.loads(out)["unplaced"]
    assert (status, small["job"], small["current"], small["reason_code"]) == (1, "small", "stops", "no-room")
    assert (small["stop_reason_code"], small["stop_reason"]) == (
        "node-gone", "node 1 of pool a100, where it runs, is no longer in the pool (nodes: 1)")
    lines = cli("cluster", str(down), "--current", str(current))[1].splitlines()
    assert lines[-1] == "stops: small: node 1 of pool a100, where it runs, is no longer in the pool (nodes: 1)"
    placed = json.loads(cli("cluster", str(down), "--json")[1])["unplaced"]  # without --current: nothing stops
    # small, after big in the file, is the one a tie of priority leaves out (s82; big before, on cost).
    assert [(left["job"], "current" in left, "stop_reason" in left) for left in placed] == [("small", False, False)]


def test_jobs_given_the_same_words_share_a_line_each():
    # Before: "moves: a, b, c: GPUs 6 and 7 of pool h20, where it runs, are ...", "it" of three jobs.
    gone = "GPUs 6 and 7 of pool h20, where it runs, are no longer in the pool (gpus_per_node: 6)"
    lines = [line.plain for line in _current_reasons(
        [("moves", gone, "a"), ("moves", None, "d"), ("moves", gone, "b"), ("moves", gone, "c"),
         ("stays", "kept", "e")])]
    assert lines == [f"moves: a, b, c, each: {gone}", "stays: e: kept"]


@pytest.mark.usefixtures("python_ctrl_c")  # Python's own Ctrl-C handler, also in a suite run with Ctrl-C ignored
def test_ctrl_c_once_the_placement_is_printed_leaves_its_exit_status(cli: Cli, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch):
    # Before: exit 130 and "solve cluster: interrupted" after a whole placement whose JSON said "interrupted": false.
    noted = solver.cli.cluster._note_what_was_read

    def ctrl_c_in_the_notes(*args: object) -> None:
        signal.raise_signal(signal.SIGINT)  # held until the notes are done: then it stops nothing
        noted(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(solver.cli.cluster, "_note_what_was_read", ctrl_c_in_the_notes)
    status, out, err = cli("cluster", str(_write(tmp_path / "two.yaml", TWO_NODES)), "--json")
    assert (status, json.loads(out)["interrupted"], len(json.loads(out)["placements"])) == (0, False, 2)
    assert err.splitlines()[-1] == ("solve cluster: Ctrl-C came once the placement was worked out: the placement "
                                    "above is whole")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Python's own handler is back


def test_no_room_where_host_memory_was_rounded_is_proven_of_the_rounded_needs_alone(tmp_path: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch):
    # docs/json.md said no-room's placement was "proven best" even where the status is feasible for host memory
    # rounded: with the exact needs, the job left out for no-room is placed (test_cluster's fleet, on nodes of 400 GiB
    # where it had 360: with no release named every rank loads the untied 14B and 8B (s84), whose Offload on 4 GPUs
    # needs 381.1 and 203.4 GiB, 4B's 102.2 as before; rounded, each counts as 381.1 and no two share a node).
    instance = {"pools": [{**ONE_NODE, "nodes": 2, "host_ram_gb": 400}], "jobs": [
        {"name": "big", "model": "14B", "max_model_len": 61440, "priority": 3},
        {"name": "mid", "model": "8B", "max_model_len": 61440, "priority": 2},
        {"name": "small", "model": "4B", "max_model_len": 102400, "priority": 2}]}
    (tmp_path / "exact").mkdir()
    (tmp_path / "rounded").mkdir()
    exact = solved(instance, tmp_path / "exact")
    round_host_memory_always(monkeypatch)
    rounded = solved(instance, tmp_path / "rounded")
    assert (exact["status"], [left["job"] for left in exact["unplaced"]]) == ("optimal", [])
    assert (rounded["status"], rounded["host_rounded"], rounded["objective"], rounded["bound"]) == (
        "feasible", ["a100"], 5, 5)
    assert [(left["job"], left["reason_code"]) for left in rounded["unplaced"]] == [("small", "no-room")]
    assert "least that places it" not in rounded["unplaced"][0]["reason"]
    row = next(line for line in (Path(__file__).parent.parent / "docs" / "json.md").read_text(
        encoding="utf-8").splitlines() if line.startswith("| `no-room` | the job has a way to run in some pool"))
    assert "proven best" not in row and "a placement with the exact host needs may have room for it" in row
