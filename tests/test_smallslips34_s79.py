"""Small slips (s79, smallslips34): a ``--lora-targets`` regex one transformers' names alone take, cautioned under a
release that runs either (``lora-targets-one-transformers``, as a config's is), and its apply comment; a list item
that names nothing said by its list's field once (``pool a100, down item 1``); ``solve cluster``'s purchase printed
before a second Ctrl-C during its notes said to stand."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
import yaml
from test_clustercli_s79 import SMALLER_ASKS, buy_module
from test_smallslips24_s77 import Cli

import solver
import solver.cli.cluster
from solver.tables import TableError
from solver.tables.inputs import TrinityFields
from solver.tables.loaders import load_validated

POOL = {"name": "a100", "gpu": "A100-80GB", "nodes": 5, "gpus_per_node": 8}
JOBS = [{"name": "small", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 1}]


@pytest.mark.parametrize(("down", "where"), [
    ([-1], "pool a100, down item 1: must be at least 0, got -1"),
    ([0, "x"], "pool a100, down item 2: must be a whole number, got 'x'"),
])
def test_a_list_of_plain_values_names_its_field_once(tmp_path: Path, down: list[object], where: str):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [{**POOL, "down": down}], "jobs": JOBS}), encoding="utf-8")
    with pytest.raises(TableError) as raised:
        solver.load_fleet(path)
    assert str(raised.value) == f"{path}: {where}"


def test_an_item_of_a_labelled_list_and_a_section_list_keep_their_words(tmp_path: Path):
    path = tmp_path / "fleet.yaml"  # a named list's item that names nothing: its list's words, as before
    path.write_text(yaml.safe_dump({"pools": [{**POOL, "name": None}], "jobs": JOBS}), encoding="utf-8")
    with pytest.raises(TableError, match=r": pools item 1, name: must be text, got null"):
        solver.load_fleet(path)
    fields = tmp_path / "trinity-fields.yaml"  # a section's list of names: "model item 2", not "model, model item 2"
    fields.write_text(yaml.safe_dump({"releases": {"0.6.0": {"sections": {"model": ["a", 1]}, "open": {},
                                                             "null": []}}}), encoding="utf-8")
    with pytest.raises(TableError) as raised:
        load_validated(TrinityFields, fields)
    assert str(raised.value) == (f"{fields}: releases, 0.6.0, sections, model item 2: must be text, got 1 (YAML reads "
                                 "it, unquoted, as a number: quote it to keep it as text)")


@pytest.mark.usefixtures("python_ctrl_c")  # Python's own Ctrl-C handler, also in a suite run with Ctrl-C ignored
def test_a_second_ctrl_c_in_an_interrupted_purchases_notes_leaves_it_standing(cli: Cli,
                                                                              monkeypatch: pytest.MonkeyPatch):
    # a Ctrl-C stops the widening; a second, held while the purchase's notes print, stops nothing: the purchase is
    # printed and the last line says it stands (before: "solve cluster: interrupted" alone, exit 130)
    grown, noted = buy_module.grown_placements, solver.cli.cluster._note_what_was_read

    def ctrl_c_while_widening(*args: object) -> object:
        if args[-1] is not None:  # widened: stopped; placed again unwidened, as it was
            signal.raise_signal(signal.SIGINT)
        return grown(*args)

    def ctrl_c_in_the_notes(*args: object) -> None:
        signal.raise_signal(signal.SIGINT)  # held until the notes are done
        noted(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(buy_module, "grown_placements", ctrl_c_while_widening)
    monkeypatch.setattr(solver.cli.cluster, "_note_what_was_read", ctrl_c_in_the_notes)
    status, out, err = cli("cluster", str(SMALLER_ASKS), "--buy")
    assert (status, err) == (130, "solve cluster: interrupted: the best purchase found so far is above\n")
    assert out.splitlines()[0] == "status: optimal; to place every job, buy 8 GPUs (1 node), proven the fewest"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Python's own handler is back
