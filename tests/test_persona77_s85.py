"""An SRE wrapping ``solve`` in CI and cron jobs (persona77, s85): files read from standard input, and the files of two
options that are one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import qwen3_8b_checkpoint
from test_smallslips24_s77 import Cli

FLEET = """pools:
  - {name: h100, gpu: H100, nodes: 1, gpus_per_node: 8}
jobs:
  - {name: tuned, model_config: ckpt/config.json, max_model_len: 16384}
"""
TRINITY_CONFIG = "model: {model_path: Qwen/Qwen3-4B, max_model_len: 4096}\ncluster: {node_num: 1, gpu_per_node: 8}\n"


def solve(cli: Cli, standard_input: Callable[[str], None], monkeypatch: pytest.MonkeyPatch, folder: Path, *argv: str,
          given: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``solve argv`` run in-process in `folder` with `given` on its standard input
    (descriptor 0, which /dev/stdin opens), through a pipe."""
    monkeypatch.chdir(folder)
    standard_input(given)
    return cli(*argv)


needs_dev_stdin = pytest.mark.skipif(not Path("/dev/stdin").exists(), reason="no /dev/stdin on this system")


@needs_dev_stdin
@pytest.mark.parametrize("fleet", ["/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"])
def test_a_fleet_on_standard_input_names_model_configs_from_the_working_directory(
        cli: Cli, standard_input: Callable[[str], None], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fleet: str):
    if not Path(fleet).exists():
        pytest.skip(f"no {fleet} on this system")
    qwen3_8b_checkpoint(tmp_path / "ckpt", _name_or_path="acme/tuned-8b")
    status, out, err = solve(cli, standard_input, monkeypatch, tmp_path, "cluster", fleet, "--json", given=FLEET)
    assert status == 0, err
    assert json.loads(out)["placements"][0]["job"] == "tuned"


def test_a_fleet_in_a_file_still_names_model_configs_from_its_own_folder(
        cli: Cli, standard_input: Callable[[str], None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    qwen3_8b_checkpoint(tmp_path / "fleets" / "ckpt", _name_or_path="acme/tuned-8b")
    (tmp_path / "fleets" / "fleet.yaml").write_text(FLEET, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    status, out, err = cli("cluster", "fleets/fleet.yaml", "--json")
    assert status == 0, err
    assert json.loads(out)["placements"][0]["job"] == "tuned"
    status, _, err = solve(cli, standard_input, monkeypatch, tmp_path / "fleets", "cluster", "/dev/stdin", "--json",
                           given=FLEET.replace("ckpt/", "gone/"))
    assert (status, err.splitlines()) == (2, [(
        "solve cluster: error: /dev/stdin: job tuned, model_config: gone/config.json: cannot read: No such file or "
        "directory")])


@needs_dev_stdin
@pytest.mark.parametrize(("argv", "given", "named"), [
    (["--from-config", "/dev/stdin", "--cells", "/dev/stdin", "--gpu", "h100"], TRINITY_CONFIG,
     "--from-config /dev/stdin and --cells /dev/stdin"),
    (["cluster", "/dev/stdin", "--current", "/dev/fd/0"], FLEET, "the cluster file /dev/stdin and --current /dev/fd/0"),
    (["--model-config", "/dev/stdin", "--weights", "/dev/stdin", "--len", "8k"], "{}",
     "--weights /dev/stdin and --model-config /dev/stdin"),
])
def test_two_options_reading_standard_input_are_refused_before_either_reads_it(
        cli: Cli, standard_input: Callable[[str], None], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        argv: list[str], given: str, named: str):
    status, out, err = solve(cli, standard_input, monkeypatch, tmp_path, *argv, given=given)
    command = "solve cluster" if argv[0] == "cluster" else "solve"
    assert (status, out, err.splitlines()) == (2, "", [(
        f"{command}: error: {named} name one file: each reads a file of its own kind, and standard input "
        "is read once: give each its own file")])


def test_two_options_naming_one_file_are_refused(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "trinity.yaml").write_text(TRINITY_CONFIG, encoding="utf-8")
    (tmp_path / "link.yaml").symlink_to("trinity.yaml")
    monkeypatch.chdir(tmp_path)
    status, _, err = cli("--from-config", "trinity.yaml", "--cells", "link.yaml", "--gpu", "h100")
    assert (status, err.splitlines()) == (2, [(
        "solve: error: --from-config trinity.yaml and --cells link.yaml name one file: each reads a file of "
        "its own kind: give each its own file")])


@pytest.mark.parametrize(("argv", "written"), [
    (["--model", "4B", "--len", "32k", "--no-color"], "--no-color"),
    (["--model", "4B", "--len", "32k", "--color", "never"], "--color never"),
    (["map", "--color=never"], "--color=never"),
    (["tables", "--nocolour"], "--nocolour"),
])
def test_a_colour_option_of_another_tool_is_told_the_environment_variables(cli: Cli, argv: list[str], written: str):
    status, out, err = cli(*argv)
    command = f"solve {argv[0]}" if argv[0] in ("map", "tables") else "solve"
    assert (status, out, err.splitlines()[-1]) == (2, "", (
        f"{command}: error: unrecognized arguments: {written} (colour follows the environment, not an option: "
        "NO_COLOR=1 turns a terminal's off, and FORCE_COLOR=1 turns it on in a pipe, which otherwise gets none)"))


@pytest.mark.parametrize(("given", "meant"), [("500ms", ": 500ms is 0.5 seconds, give 0.5"),
                                              ("2 milliseconds", ": 2 milliseconds is 0.002 seconds, give 0.002"),
                                              ("10sec", ": 10sec is 10 seconds, give 10"),
                                              ("30 Seconds", ": 30 Seconds is 30 seconds, give 30"),
                                              ("2min", ": 2min is 120 seconds, give 120"),
                                              ("0.0000001ms", ""), ("0sec", "")])
def test_a_time_limit_in_another_unit_is_refused_with_the_seconds_meant(cli: Cli, given: str, meant: str):
    # A cron job's 500ms or 10sec (systemd's units) was refused without the seconds, as minutes and hours were not.
    status, out, err = cli("--model", "8B", "--time-limit", given)
    assert (status, out, err.splitlines()[-1]) == (
        2, "", f"solve: error: argument --time-limit: expected a number of seconds (10 or 10s), got {given!r}{meant}")


@pytest.mark.parametrize(("argv", "error"), [
    (["--model", "4B", "--len", "8k", "-o", "plan.yaml"],
     "solve: error: unrecognized arguments: -o plan.yaml (did you mean --out?)"),
    (["--model", "4B", "--len", "8k", "-o=plan.yaml"],
     "solve: error: unrecognized arguments: -o=plan.yaml (did you mean --out?)"),
    (["--model", "4B", "--len", "8k", "-o", "json"],
     "solve: error: unrecognized arguments: -o json (did you mean --json?)"),
    (["cluster", "fleet.yaml", "--output", "configs"],
     "solve cluster: error: unrecognized arguments: --output configs (did you mean --emit-dir?)"),
    (["map", "-o", "map.svg"], "solve map: error: unrecognized arguments: -o map.svg (did you mean --svg?)"),
    (["cluster", "fleet.yaml", "--out", "configs"],
     ("solve cluster: error: --out is an option of solve and solve calibrate, not of solve cluster (did you mean "
      "--emit-dir?)")),
    (["cluster", "fleet.yaml", "--write", "j.yaml"],
     "solve cluster: error: --write is an option of solve, not of solve cluster (did you mean --emit-dir?)"),
    (["map", "--out", "map.svg"],
     "solve map: error: --out is an option of solve and solve calibrate, not of solve map (did you mean --svg?)"),
    (["memory", "--out", "m.yaml"],
     "solve memory: error: --out is an option of solve and solve calibrate, not of solve memory"),
])
def test_another_tools_output_option_is_told_the_commands_own(cli: Cli, argv: list[str], error: str):
    # docs/cli.md said -o given a file name meant --out, which no guess said; solve cluster and solve map, which write
    # files too, named no option of their own for --out, --write, --output or -o.
    status, out, err = cli(*argv)
    assert (status, out, err.splitlines()[-1]) == (2, "", error)


def test_emit_dir_leaves_an_earlier_runs_config_and_names_only_its_own(cli: Cli, tmp_path: Path):
    # docs/cluster.md now says so: a cron job that deploys every file of DIR would deploy a job no longer placed.
    fleet = tmp_path / "fleet.yaml"
    jobs = "  - {name: a, model: 4B, max_model_len: 8192, rollout_gpus: 0}\n"
    fleet.write_text("pools: [{name: p, gpu: H100, nodes: 1, gpus_per_node: 8}]\njobs:\n" + jobs
                     + jobs.replace("name: a", "name: b"), encoding="utf-8")
    configs = tmp_path / "configs"
    assert cli("cluster", str(fleet), "--emit-dir", str(configs))[0] == 0
    fleet.write_text(fleet.read_text(encoding="utf-8").replace(jobs.replace("name: a", "name: b"), ""),
                     encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--emit-dir", str(configs))
    assert (status, [line for line in out.splitlines() if line.startswith("wrote")]) == (0, [f"wrote {configs}/a.yaml"])
    assert sorted(path.name for path in configs.iterdir()) == ["a.yaml", "b.yaml"]


@needs_dev_stdin
@pytest.mark.parametrize(("argv", "error"), [
    (["cluster", "/dev/stdin"], ("solve cluster: error: /dev/stdin: cannot read: No such file or directory "
                                 "(standard input is closed: the command was started with <&-; give the file by its "
                                 "name, or < FILE)")),
    (["--from-config", "/dev/fd/0", "--gpu", "h100"], ("solve: error: --from-config /dev/fd/0: cannot read: No such "
                                                       "file or directory (standard input is closed: the command was "
                                                       "started with <&-; give the file by its name, or < FILE)")),
    (["cluster", "/dev/fd/9"], ("solve cluster: error: /dev/fd/9: cannot read: No such file or directory (the "
                                "command was started without that stream open)")),
])
def test_a_closed_standard_input_is_said_to_be_closed(tmp_path: Path, argv: list[str], error: str):
    # A script that closes standard input (<&-) was told /dev/stdin had no such file or directory. In a process of its
    # own: started with descriptor 0 closed.
    ran = subprocess.run([sys.executable, "-m", "solver", *argv], stdin=None, cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, check=False, preexec_fn=lambda: os.close(0))
    assert (ran.returncode, ran.stdout, ran.stderr.splitlines()) == (2, "", [error])
