"""What a pipeline that reads the commands' JSON and writes their files needs: every schema's top-level object says
its `schema_version` and the `rft_solver_version` that printed it (and the schemas require them); a full disk exits
74, which a pipeline may retry, where bad input exits 2; and `--check --json` says in `current.verdict`, in the text's
words, why it exits 1 where the answer's own status is optimal and its reason null."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

import solver
import solver.cli.atomic
from solver.render import JSON_SCHEMA_TYPES, json_schema
from solver.results import PURCHASE_SCHEMA_VERSION, SCHEMA_VERSION, Answer, GpuMap

ROOT = Path(__file__).resolve().parent.parent
FLEET = "docs/examples/fleet.yaml"
CONFIG = "docs/examples/trinity.yaml"


def _top_objects(printed: Any) -> list[dict[str, Any]]:
    """The top-level objects of a command's JSON: each element of an array (`solve`, `solve map`), else the one."""
    return printed if isinstance(printed, list) else [printed]


@pytest.mark.parametrize(("command", "argv"), [
    ("solve", ("--model", "4B", "--len", "8k", "--gpus", "2")),
    ("solve", ("--from-config", CONFIG, "--gpu", "a100", "--check")),
    ("map", ("map", "--gpu", "h100", "--model", "8B", "--gpus-up-to", "1")),
    ("memory", ("memory", "--model", "4B", "--gpu", "a100", "--gpus", "2", "--len", "8k")),
    ("cluster", ("cluster", FLEET)),
    ("calibrate", ("calibrate",)),
], ids=["solve", "check", "map", "memory", "cluster", "calibrate"])
def test_every_json_output_says_its_schema_version_and_the_release_that_printed_it(
        cli, monkeypatch: pytest.MonkeyPatch, command: str, argv: tuple[str, ...]):
    monkeypatch.chdir(ROOT)
    _, out, _ = cli(*argv, "--json")
    printed = json.loads(out)
    assert [(each["schema_version"], each["rft_solver_version"]) for each in _top_objects(printed)] == [
        (1, solver.__version__)] * len(_top_objects(printed))
    assert list(_top_objects(printed)[0])[-2:] == ["schema_version", "rft_solver_version"] or command in (
        "memory", "calibrate")  # there the verdicts (`poor_fit`) the object derives come last, as before
    validator = Draft202012Validator(json.loads(json_schema(command)))
    assert list(validator.iter_errors(printed)) == []
    for each in _top_objects(printed):  # another version, or none, is not this schema's JSON
        each["schema_version"] = 2
    assert [error.message for error in validator.iter_errors(printed)][:1] == ["1 was expected"]
    for each in _top_objects(printed):
        del each["schema_version"]
    assert [error.message for error in validator.iter_errors(printed)][:1] == [
        "'schema_version' is a required property"]


def test_cluster_buy_json_says_its_schema_version_too(cli, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(ROOT)
    status, out, _ = cli("cluster", "docs/examples/required.yaml", "--buy", "--json")
    bought = json.loads(out)
    assert (status, bought["nodes"], bought["schema_version"], bought["rft_solver_version"]) == (
        0, 1, PURCHASE_SCHEMA_VERSION, solver.__version__)  # 2 since its pools' nodes_bought (s80)
    assert list(Draft202012Validator(json.loads(json_schema("cluster-buy"))).iter_errors(bought)) == []


@pytest.mark.parametrize("command", list(JSON_SCHEMA_TYPES))
def test_every_schema_requires_the_versions_at_the_top(command: str):
    schema = json.loads(json_schema(command))
    top = schema["$defs"][schema["items"]["$ref"].rsplit("/", 1)[1]] if schema["type"] == "array" else schema
    assert {name: top["properties"][name].get("const") for name in ("schema_version", "rft_solver_version")} == {
        "schema_version": PURCHASE_SCHEMA_VERSION if command == "cluster-buy" else SCHEMA_VERSION,
        "rft_solver_version": None}
    assert {"schema_version", "rft_solver_version"} <= set(top["required"])


def test_json_read_back_takes_the_versions_or_none_and_refuses_another_schema_version():
    (answer,) = solver.plan("4B", gpu="a100", max_model_len=8192, budget_gpus=2)
    printed = answer.as_json()
    older = {key: value for key, value in printed.items() if key not in ("schema_version", "rft_solver_version")}
    assert Answer.model_validate(printed).as_json() == Answer.model_validate(older).as_json() == printed
    with pytest.raises(ValidationError, match="schema_version is 2: this release of rft-solver reads 1"):
        Answer.model_validate({**printed, "schema_version": 2})
    (gpu_map,) = solver.map_plans("8B", gpu="h100", gpus_up_to=1)
    printed = gpu_map.model_dump(mode="json")
    assert GpuMap.model_validate_json(json.dumps(printed)).model_dump(mode="json") == printed


def _write_fails_with(monkeypatch: pytest.MonkeyPatch, number: int) -> None:
    """Every file the commands write fails as it is synced, with the OS error `number`."""
    def failing(descriptor: int) -> None:
        raise OSError(number, os.strerror(number))

    monkeypatch.setattr(solver.cli.atomic.os, "fsync", failing)


@pytest.mark.parametrize(("number", "status"), [
    (errno.ENOSPC, 74), (errno.EDQUOT, 74), (errno.EIO, 74),  # the disk: retry once there is room
    (errno.EACCES, 2), (errno.EROFS, 2),  # the place named: retrying does not change it
], ids=["ENOSPC", "EDQUOT", "EIO", "EACCES", "EROFS"])
def test_a_file_that_cannot_be_written_exits_74_for_the_disk_and_2_for_the_place(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, number: int, status: int):
    target = tmp_path / "fragment.yaml"
    target.write_text("old\n", encoding="utf-8")
    _write_fails_with(monkeypatch, number)
    words = os.strerror(number)
    assert cli("--model", "4B", "--len", "8k", "--gpus", "2", "--gpu", "h100", "--emit", "trinity", "--out",
               str(target)) == (status, "", f"solve: error: --out {target}: cannot write: {words}\n")
    assert [(path.name, path.read_text(encoding="utf-8")) for path in tmp_path.iterdir()] == [
        ("fragment.yaml", "old\n")]  # as it was, and no temporary file left


def test_a_folder_that_cannot_be_made_on_a_full_disk_exits_74(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    def full(self: Path, *args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "mkdir", full)
    assert cli("examples", str(tmp_path / "mine")) == (
        74, "", f"solve examples: error: {tmp_path / 'mine'}: cannot make the folder: No space left on device\n")


def test_a_refused_place_to_write_stays_bad_input(cli, tmp_path: Path):
    # Checked before any work, as before: no such folder is the command line's to fix.
    target = tmp_path / "none" / "fragment.yaml"
    assert cli("--model", "4B", "--len", "8k", "--gpus", "2", "--gpu", "h100", "--emit", "trinity", "--out",
               str(target)) == (2, "", f"solve: error: --out {target}: cannot write: {target.parent} does not exist\n")


def _text_verdict(out: str, config: str) -> str:
    """The verdict line of `solve --from-config`'s text (wrapped on the pipe's width), its words on one line: from the
    line that starts with the config's name to the next that starts the plan or a problem."""
    lines = out.splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith(config))
    end = next(index for index in range(start + 1, len(lines))
               if lines[index].startswith(("plan ", "  but:", "  refused:")))
    return " ".join(" ".join(lines[start:end]).split())


@pytest.mark.parametrize(("flags", "trains", "refused"), [
    (("--gpu", "a100"), False, False),  # vanilla ran out of memory: exit 1, though the answer is optimal
    (("--gpu", "a100", "--len", "48k"), False, True),  # and refused: no rope_scaling past the native context
    (("--gpu", "h200"), True, False),  # trains (by estimate): exit 0
], ids=["does-not-train", "refused", "trains"])
def test_check_json_says_why_it_fails_in_the_texts_words(cli, monkeypatch: pytest.MonkeyPatch,
                                                         flags: tuple[str, ...], trains: bool, refused: bool):
    monkeypatch.chdir(ROOT)
    status, out, _ = cli("--from-config", CONFIG, "--check", *flags, "--json")
    (answer,) = json.loads(out)
    current = answer["current"]
    assert (status, answer["status"], answer["reason"], current["trains"], current["refused"]) == (
        0 if trains and not refused else 1, "optimal", None, trains, refused)
    text_status, text, _ = cli("--from-config", CONFIG, "--check", *flags)
    assert (text_status, _text_verdict(text, "trinity.yaml")) == (status, current["verdict"])
    assert "\n" not in current["verdict"] and ("it trains" in current["verdict"]) == trains
    assert ("The config judged at this length is refused too" in current["verdict"]) == refused
