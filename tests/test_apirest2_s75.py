"""The API's and the scripts' loose ends (session 75): `buy_nodes` takes `current` and refuses it as `solve cluster
--buy --current` is; a bad `current` is a `QueryError` built in code and a `TableError` read from a file, as a fleet
is; `--out` refuses a ``.json`` name (it writes YAML; --json prints to stdout); `solve memory --json` writes
`host_ram_gib` without its ``.0``; a Trinity key the --trinity-version's releases lack is refused (or, lacked by some
of them, cautioned), naming the releases that have it; and Ctrl-C during --emit-dir leaves no configs without their
placement."""

from __future__ import annotations

import errno
import json
import os
import signal
from pathlib import Path

import pytest
import yaml
from test_keepplaced_s70 import JOBS, _write
from test_persona39_s74 import CONFIG_8K

import solver
import solver.cli.atomic
from solver.query import ConfigProblem
from solver.query import ConfigProblemCode as C
from solver.tables import load_catalog
from solver.trinity import trinity_config_problems

FLEET = Path(__file__).parent.parent / "docs" / "examples" / "fleet.yaml"
BUY_WITH_CURRENT = ("buy_nodes with current: buy_nodes weighs no running jobs; call solver.place(current=...) on the "
                    "fleet with the nodes it names added")


def test_buy_nodes_refuses_current_as_the_command_refuses_buy_with_current(tmp_path: Path) -> None:
    fleet = _write(tmp_path / "now.yaml", JOBS)
    now = solver.place(fleet)
    saved = tmp_path / "now.json"
    saved.write_text(now.model_dump_json(), encoding="utf-8")
    for current in (now, saved, str(saved)):
        with pytest.raises(solver.QueryError) as refused:
            solver.buy_nodes(fleet, current=current)
        assert str(refused.value) == BUY_WITH_CURRENT
    assert solver.buy_nodes(fleet, current=None) == solver.buy_nodes(fleet)


def test_a_bad_current_is_a_query_error_in_code_and_a_table_error_in_a_file(tmp_path: Path) -> None:
    # As a fleet: one built (or changed) in code is a QueryError naming the keyword, a file a TableError naming it.
    fleet = _write(tmp_path / "now.yaml", JOBS)
    now = solver.place(fleet)
    twice = now.model_copy(update={"placements": (*now.placements, now.placements[0])})
    with pytest.raises(solver.QueryError) as refused:
        solver.place(fleet, current=twice)
    assert (type(refused.value), str(refused.value)) == (solver.QueryError, "current: job p06-a is placed twice")
    saved = tmp_path / "now.json"
    saved.write_text(json.dumps({**json.loads(now.model_dump_json()), "schema_version": 2}), encoding="utf-8")
    with pytest.raises(solver.TableError) as refused:
        solver.place(fleet, current=saved)
    assert str(refused.value) == (f"{saved}: schema_version is 2: this release of rft-solver reads 1 (place the fleet "
                                  "again with this release's solve cluster --json)")


@pytest.mark.parametrize(("flags", "name"), [
    (("--model", "4B", "--gpu", "a100", "--len", "8k", "--gpus", "2", "--json"), "p.json"),
    (("--model", "4B", "--gpu", "a100", "--len", "8k", "--gpus", "2"), "p.JSON"),
    (("calibrate", "--json"), "m.json")])
def test_out_refuses_a_json_name_it_would_fill_with_yaml(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         flags: tuple[str, ...], name: str) -> None:
    monkeypatch.chdir(tmp_path)
    command = "solve calibrate" if flags[0] == "calibrate" else "solve"
    assert cli(*flags, "--out", name) == (2, "", (
        f"{command}: error: --out {name}: --out writes YAML, not JSON: name the file .yaml (--json prints the JSON on "
        f"standard output: redirect that, > {name})\n"))
    assert list(tmp_path.iterdir()) == []


def test_svg_refuses_a_json_name_it_would_fill_with_an_image(cli, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # solve map --json --svg map.json wrote the SVG image into map.json (s89), where --out p.json is refused
    monkeypatch.chdir(tmp_path)
    assert cli("map", "--gpu", "a100", "--model", "4B", "--json", "--svg", "map.json") == (2, "", (
        "solve map: error: --svg map.json: --svg writes an SVG image, not JSON: name the file .svg (--json prints the "
        "JSON on standard output: redirect that, > map.json)\n"))
    assert list(tmp_path.iterdir()) == []


def test_out_with_json_writes_its_yaml_and_prints_the_json(cli, tmp_path: Path) -> None:
    target = tmp_path / "p.yaml"
    status, out, _ = cli("--model", "4B", "--gpu", "a100", "--len", "8k", "--gpus", "2", "--json", "--out", str(target))
    assert (status, json.loads(out)[0]["plans"][0]["max_model_len"]) == (0, 8192)
    assert yaml.safe_load(target.read_text(encoding="utf-8"))["model"]["max_model_len"] == 8192


@pytest.mark.parametrize(("given", "written", "trains"), [("256", "256", 0), ("62.5", "62.5", 1), ("2TB", "2048", 0)])
def test_memory_json_writes_host_ram_gib_as_solve_json_writes_host_ram_gb(cli, given: str, written: str,
                                                                          trains: int) -> None:
    # Trinity 0.6: rank 0 alone loads the model on H100s, 183.0 GiB (every rank's 325.4 would not fit 256)
    status, out, _ = cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "32k", "--sp", "8",
                         "--env", "--offload", "--host-ram", given, "--trinity-version", "0.6", "--json")
    assert status == trains and f'\n  "host_ram_gib": {written},\n' in out  # 62.5 GiB: the host memory does not fit
    answer = solver.MemoryAnswer.model_validate_json(out)
    assert answer.host_ram_gib == float(written) and answer.model_dump_json(indent=2) + "\n" == out


MODEL = load_catalog().model("8B")
PAD = CONFIG_8K.replace("  batch_size: 96\n", "  batch_size: 96\n  pad_token_id: 0\n")  # 0.5.0's alone
BYPASS = CONFIG_8K.replace("  repeat_times: 8\n", "  repeat_times: 8\n  bypass_old_logprobs: true\n")  # 0.6.0's
SELECTOR = CONFIG_8K.replace("  batch_size: 96\n", "  batch_size: 96\n  explorer_input:\n    taskset:\n"
                             "      data_selector: {selector_type: sequential}\n")  # 0.5.2's and 0.6.0's


def _key_lines(text: str, version: str | None) -> list[ConfigProblem]:
    """The problems of `text` (on 6 trainer GPUs) that say a key is lacked."""
    problems = trinity_config_problems(yaml.safe_load(text), MODEL, 6, version=version)  # type: ignore[arg-type]
    return [problem for problem in problems if problem.code in (C.NO_SUCH_KEY_REFUSED, C.UNKNOWN_KEY)]


def test_a_key_only_another_release_has_is_refused_naming_it() -> None:
    assert _key_lines(PAD, "0.6") == [ConfigProblem(C.NO_SUCH_KEY_REFUSED, (
        "buffer.pad_token_id: Trinity 0.6 has no such key there, so it refuses the config (it knows no such key): "
        "remove it, or run a release that has it (Trinity 0.5.0)"))]
    assert _key_lines(BYPASS, "0.5") == [ConfigProblem(C.NO_SUCH_KEY_REFUSED, (
        "algorithm.bypass_old_logprobs: Trinity 0.5 has no such key there, so it refuses the config (it knows no such "
        "key): remove it, or run a release that has it (Trinity 0.6.0)"))]
    for text, version in ((PAD, None), (BYPASS, None), (BYPASS, "0.6"), (SELECTOR, None), (SELECTOR, "0.6")):
        assert _key_lines(text, version) == []


def test_a_key_some_releases_of_the_version_lack_is_cautioned_naming_both() -> None:
    assert _key_lines(PAD, "0.5") == [ConfigProblem(C.UNKNOWN_KEY, (
        "buffer.pad_token_id: Trinity 0.5.1 and 0.5.2 have no such key there (0.5.0 has it), so they refuse the config "
        "as they load it: with those, remove it"))]
    assert _key_lines(SELECTOR, "0.5") == [ConfigProblem(C.UNKNOWN_KEY, (
        "buffer.explorer_input.taskset.data_selector: Trinity 0.5.0 and 0.5.1 have no such key there (0.5.2 has it), "
        "so they refuse the config as they load it: with those, remove it"))]


def test_a_key_below_one_a_release_lacks_is_refused_where_every_release_lacks_one_of_them() -> None:
    # 0.5.0 and 0.5.1 lack data_selector, 0.5.2 and 0.6.0 its bogus key: every release refuses the config (said once).
    bogus = SELECTOR.replace("{selector_type: sequential}", "{selector_type: sequential, bogus: 1}")
    refused = ConfigProblem(C.NO_SUCH_KEY_REFUSED, (
        "buffer.explorer_input.taskset.data_selector.bogus: no release of Trinity (0.5.0 to 0.6.0) has this key there, "
        "so Trinity refuses the config (it knows no such key): remove it, or move it where Trinity reads it"))
    assert _key_lines(bogus, None) == _key_lines(bogus, "0.5") == _key_lines(bogus, "0.6") == [refused]


def test_the_check_exits_1_on_a_key_the_version_lacks(cli, tmp_path: Path) -> None:
    config = tmp_path / "trinity.yaml"
    config.write_text(PAD, encoding="utf-8")
    outcomes = {}
    for version in ("0.5", "0.6"):
        status, out, _ = cli("--from-config", str(config), "--check", "--gpu", "h20", "--trinity-version", version,
                             "--json")
        current = json.loads(out)[0]["current"]
        outcomes[version] = (status, current["refused"], current["config_problem_codes"])
    assert outcomes == {"0.5": (0, False, ["unknown-key"]), "0.6": (1, True, ["no-such-key-refused"])}


def test_a_write_failing_between_configs_writes_none_and_removes_the_folder(cli, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # A disk filling after the first config: none is written, nor the folder made for them (the lead's s75 review: an
    # interrupt cannot stop the write, Ctrl-C being held until it is done: the next test).
    synced = os.fsync
    asked: list[int] = []

    def failing_after_the_first(descriptor: int) -> None:
        asked.append(descriptor)
        if len(asked) > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        synced(descriptor)

    monkeypatch.setattr(solver.cli.atomic.os, "fsync", failing_after_the_first)
    folder = tmp_path / "configs"
    status, out, err = cli("cluster", str(FLEET), "--emit-dir", str(folder))
    assert (status, out, len(asked)) == (74, "", 2)  # EX_IOERR: the disk, not the input
    assert err == f"solve cluster: error: --emit-dir {folder / 'code-8b.yaml'}: cannot write: No space left on device\n"
    assert list(tmp_path.iterdir()) == []  # no config, no temporary file, no folder


@pytest.mark.usefixtures("python_ctrl_c")  # Python's own Ctrl-C handler, also in a suite run with Ctrl-C ignored
def test_ctrl_c_while_the_configs_are_written_comes_once_the_placement_naming_them_is_printed(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    staged = solver.cli.atomic._staged

    def ctrl_c_at_the_first(path: Path, text: str) -> tuple[str, Path]:
        if path.name == "math-4b.yaml":
            signal.raise_signal(signal.SIGINT)  # held while the configs are written
        return staged(path, text)

    monkeypatch.setattr(solver.cli.atomic, "_staged", ctrl_c_at_the_first)
    folder = tmp_path / "configs"
    status, out, err = cli("cluster", str(FLEET), "--emit-dir", str(folder), "--json")
    names = ["math-4b.yaml", "code-8b.yaml", "chat-14b.yaml", "probe-0.6b.yaml"]
    # after the placement's notes; whole, with its configs: its own status, as its "interrupted": false says
    # (smallslips29, s78: it was 130 and "solve cluster: interrupted", beside that false)
    assert (status, err.splitlines()[-1], json.loads(out)["interrupted"]) == (
        0, ("solve cluster: Ctrl-C came once the placement was worked out: the placement above is whole (its "
            "configs too)"), False)
    assert sorted(path.name for path in folder.iterdir()) == sorted(names)
    assert [placement["config_file"] for placement in json.loads(out)["placements"]] == [
        str(folder / name) for name in names]
