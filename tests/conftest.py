"""Shared test fixtures (`cli`: the command in-process; `solve_script`: the installed console script; `standard_input`:
what /dev/stdin reads in the test; `coloured_screen`: stdout as a terminal in colour shows it; `edited_a100_tables`: a
catalogue with edited A100 tables; `solver_parameters`: the CP-SAT parameters of the solvers the planner makes;
`answers_left_open`: answers a time limit left open;
`unwrapped_fragments`: the Trinity fragments made, before their comments are wrapped; `shipped_tables_kept`: what a test
writes into the shipped tables is removed; `mypy_strict`: ``mypy --strict`` over the package and the tests' user files,
run once; and, for every test, no allocator variable set, nor vLLM's long-length one, and no deadline that passes, the
planner's nor the cluster commands', unless marked ``wall_clock``), every placement made in-process checked by the
cluster reference (`reference_problems`), and helpers (`made_up_table`, `qwen3_8b_checkpoint`,
`fragment_comment`), each pytest-xdist worker rewriting the asserts of its share of the test files for all workers
(`pytest_collection`), and the hypothesis profiles: ``ci`` (the default: the same examples on every run) and ``explore``
(``HYPOTHESIS_PROFILE=explore``: new ones)."""

from __future__ import annotations

import copy
import io
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _pytest.assertion import rewrite
from hypothesis import settings
from rich.console import Console

import solver.cli.maps
import solver.cli.memory
import solver.cli.output
import solver.clock
import solver.cluster
import solver.cluster.options
import solver.render
import solver.solve
from solver.cli import main
from solver.render.layout import forget_coded_styles
from solver.results import ALLOC_CONF_VARIABLES, LONG_LENGTH_VARIABLE, PurchaseResult
from solver.tables import Catalog, load_catalog, shipped_tables_directory

# Property tests draw the same examples on every run (CI stays reproducible); HYPOTHESIS_PROFILE=explore draws
# new ones each run, to look for more.
settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The commands lay out their output as on a pipe that names no width, whatever terminal runs the suite: pytest-xdist's
# workers start with COLUMNS=80 and LINES set (a test that wants a width sets its own). The subprocesses the tests start
# inherit this too.
for _terminal_size in ("COLUMNS", "LINES"):
    os.environ.pop(_terminal_size, None)


PYTEST_REWRITING = ("assertstate_key", "get_cache_dir", "PYC_TAIL", "_read_pyc", "_rewrite_test", "_write_pyc")
"""What `pytest_collection` uses of pytest's assert rewriting (pytest 8 and 9 have them)."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """Each pytest-xdist worker first rewrites the asserts of its share of the test files asked for (the n-th of
    every count) and writes them where pytest keeps rewritten modules (``__pycache__``, read back whatever
    PYTHONDONTWRITEBYTECODE says): every worker's collection then reads the others' shares back, rewriting only
    what they have not written yet, instead of each worker rewriting every file (most of a worker's collection
    time); one written by an earlier run, of the same source, is kept. pytest's own functions read, rewrite and
    write them, and it reads each back only where its source is the same; without them (another pytest), or
    without workers, collection is pytest's own."""
    worker, count = os.environ.get("PYTEST_XDIST_WORKER", ""), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if count < 2 or not worker.startswith("gw") or not all(hasattr(rewrite, name) for name in PYTEST_REWRITING):
        return
    state = session.config.stash.get(rewrite.assertstate_key, None)
    if state is None or session.config.getoption("assertmode") != "rewrite":
        return
    asked = {Path(session.config.invocation_params.dir, arg.split("::")[0]).resolve() for arg in session.config.args}
    files = sorted(path for path in Path(__file__).resolve().parent.glob("test_*.py")
                   if any(path == given or given in path.parents for given in asked))
    for path in files[int(worker[2:]) % count::count]:
        rewritten = rewrite.get_cache_dir(path) / f"{path.stem}{rewrite.PYC_TAIL}"
        if rewrite._read_pyc(path, rewritten) is not None:  # written already, of this source
            continue
        try:
            rewritten.parent.mkdir(parents=True, exist_ok=True)
            source, code = rewrite._rewrite_test(path, session.config)
        except (OSError, SyntaxError):  # a folder it may not write (nor does pytest), or a file collection reports
            continue
        rewrite._write_pyc(state, code, source, rewritten)


@pytest.fixture(autouse=True)
def _no_allocator_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts without the allocator variables (`ALLOC_CONF_VARIABLES`: PYTORCH_CUDA_ALLOC_CONF,
    PYTORCH_HIP_ALLOC_CONF, PYTORCH_ALLOC_CONF) a GPU machine's shell may export: a config's Env is read from them
    (tests that want one set it); nor with VLLM_ALLOW_LONG_MAX_MODEL_LEN, which a config's vLLM rollout reads."""
    for variable in (*ALLOC_CONF_VARIABLES, LONG_LENGTH_VARIABLE[0]):
        monkeypatch.delenv(variable, raising=False)


@pytest.fixture(autouse=True)
def _no_wall_clock(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """For every test, no deadline passes (`solver.clock.seconds_left` reads infinity; CP-SAT's solves get no
    wall-clock limit): the planner's solves end on their proofs (neither the query's time limit nor a call's
    deadline_s ends them, nor an explanation's questions), the cluster commands' steps on the limits that are the same
    on every run (CP-SAT's deterministic time, a `work_budget`, the counts of the planner's questions), so that a test
    of exact answers gets the same ones on a loaded machine. The seconds an answer reports are the real ones. A test
    marked ``wall_clock`` (one about the time limit, deadline_s, Ctrl-C or `wall_clock_stopped`) keeps the real
    clock."""
    if request.node.get_closest_marker("wall_clock") is None:
        monkeypatch.setattr(solver.clock, "seconds_left", lambda deadline: math.inf)


@pytest.fixture(autouse=True)
def _placements_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every placement made in-process (``solve cluster``, `solver.place`; ``--buy``, `solver.buy_nodes`: on the pools
    with the nodes bought) is checked by the tests' independent reference, `cluster_reference.check_placements`
    (validity: plans, layouts, nodes, host memory), where the reference counts what was asked (`reference_problems`);
    a placement it finds wrong fails the test."""
    placed, bought = solver.cluster.place, solver.cluster.buy

    def checked(fleet: Any, planner: Any, **options: Any) -> Any:
        result = placed(fleet, planner, **options)
        problems = reference_problems(fleet, planner, result, options.get("minimize") == "nodes")
        assert not problems, f"the reference finds the placement wrong: {problems}"
        return result

    def checked_purchase(fleet: Any, planner: Any, **options: Any) -> Any:
        result = bought(fleet, planner, **options)
        problems = reference_problems(fleet, planner, result, False)
        assert not problems, f"the reference finds the purchase's placement wrong: {problems}"
        return result

    monkeypatch.setattr(solver.cluster, "place", checked)
    monkeypatch.setattr(solver.cluster, "buy", checked_purchase)


def reference_problems(fleet: Any, planner: Any, result: Any, minimize_nodes: bool) -> list[str] | None:
    """What `cluster_reference.check_placements` finds wrong with `result`, a placement of `fleet` by `planner`'s
    options (or a purchase's, a `PurchaseResult`: its placement on the pools with the nodes it buys, every job it does
    not place left out), with the planner's margin and memory model (one's own, calibrated, too); None where the
    reference does not count what was asked: estimates alone (``--estimate``, whose plans the tables caution rather
    than vouch for or refute, a tier the reference does not enumerate), or a job that
    `cluster_reference.fleet_instance` leaves out."""
    from cluster_reference import check_placements, fleet_instance  # the reference, imported where a placement is made

    instance = fleet_instance(planner.catalog, fleet)
    if instance is None or planner.estimate == "only":
        return None
    answer = json.loads(result.model_dump_json())
    if isinstance(result, PurchaseResult):  # the pools as bought (as they are where it found no purchase)
        after = {pool["pool"]: pool["nodes_after"] for pool in answer["pools"]}
        instance["pools"] = [{**pool, "nodes": after.get(pool["name"], pool["nodes"])} for pool in instance["pools"]]
        placed = {entry["job"] for entry in answer["placements"]}
        answer = {"placements": answer["placements"],
                  "unplaced": [{"job": job["name"]} for job in instance["jobs"] if job["name"] not in placed]}
    # A result that places no job (none found, or none exists: every job must be placed, or a required one cannot) lists
    # every job once, left out; `minimize_nodes` asks that of a placement found.
    return check_placements(planner.catalog, instance, answer,
                            minimize_nodes=minimize_nodes and bool(result.placements),
                            estimates=planner.estimate == "auto",
                            token_budget=planner.token_budget, trinity_version=planner.trinity_release,
                            weights=planner.weights, margin=planner.margin, memory=planner.memory)


ONE_TABLE = ("give each table once: write the two as one table, naming both tables' models, each row a cell for every "
             "model (a length one table lacks: measure it for the other's models, or leave that row out), in one file "
             "under one source")
"""How a second cells file's table for a GPU type and count that an earlier file has is refused: how to combine them."""

MYPY_USER_FILE = "MYPY_USER_FILE"
"""The name of a test module's user file for `mypy_strict`: Python source that uses the package as a user's code does,
checked as ``<module>_user.py``."""

MYPY_WAIT_S = 300
"""How long a pytest-xdist worker waits for the one that runs `mypy_strict`'s check before the test fails."""


@pytest.fixture(autouse=True)
def _styles_coded_afresh() -> None:
    """Every test's consoles code their styles afresh (`forget_coded_styles`): rich keeps a style's ANSI codes from
    its first rendering, in the colour system of whichever console in the process printed it first."""
    forget_coded_styles()


@pytest.fixture(scope="session")
def mypy_strict(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """``mypy --strict`` under the project's configuration, run once per test session (once for all pytest-xdist
    workers) over the package and the user file (`MYPY_USER_FILE`) of each test module whose tests ask for this: each
    file's findings, ``solver`` holding those of every file of the package, ``<module>_user.py`` those of a module's
    user file (each line named by the file's name alone). The run checked every file and ended in its summary."""
    modules = {item.module.__name__: item.module for item in request.session.items
               if "mypy_strict" in getattr(item, "fixturenames", ())}
    sources = {f"{name}_user.py": getattr(module, MYPY_USER_FILE) for name, module in sorted(modules.items())
               if hasattr(module, MYPY_USER_FILE)}
    # The workers' temporary folders share a parent (a folder of this session alone); without xdist, the session's own.
    shared = tmp_path_factory.getbasetemp()
    shared = shared.parent if os.environ.get("PYTEST_XDIST_WORKER") else shared
    answer = shared / "mypy-strict.json"
    try:
        os.close(os.open(shared / "mypy-strict.lock", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:  # another worker runs it: its findings
        waited = 0.0
        while not answer.exists():
            assert waited < MYPY_WAIT_S, f"no {answer} after {MYPY_WAIT_S} s"
            time.sleep(0.1)
            waited += 0.1
        run, by_file = json.loads(answer.read_text(encoding="utf-8"))
        assert run[:3] == run[3:], run
        return dict(by_file)
    users = shared / "mypy-users"
    users.mkdir()
    for name, source in sources.items():
        (users / name).write_text(source, encoding="utf-8")
    root = Path(__file__).parents[1]
    # mypy's own cache (the checkout's .mypy_cache, as `mypy solver` keeps it): only what changed since is checked anew.
    result = subprocess.run([sys.executable, "-m", "mypy", "--strict", "solver",
                             *(str(users / name) for name in sources)], cwd=root, capture_output=True, text=True,
                            timeout=MYPY_WAIT_S, check=False)
    *lines, summary = result.stdout.splitlines() or [""]
    by_file: dict[str, list[str]] = {"solver": [], **{name: [] for name in sources}}
    for line in lines:
        path, _, rest = line.partition(":")
        name = "solver" if Path(path).parts[0] == "solver" else Path(path).name
        by_file[name].append(line if name == "solver" else f"{name}:{rest}")
    errors = sum(": error: " in line for line in lines)
    checked = len(list((root / "solver").rglob("*.py"))) + len(sources)
    files = sum(any(": error: " in line for line in found) for found in by_file.values())
    expected = (f"Found {errors} error{'s' * (errors != 1)} in {files} file{'s' * (files != 1)} (checked {checked} "
                f"source files)" if errors else f"Success: no issues found in {checked} source files")
    run = [result.returncode, result.stderr, summary, int(errors > 0), "", expected]
    (shared / "mypy-strict.part").write_text(json.dumps([run, by_file]), encoding="utf-8")
    (shared / "mypy-strict.part").replace(answer)  # whole, for the workers that wait for it
    assert run[:3] == run[3:], result.stdout
    return by_file


@pytest.fixture
def solve_script() -> Path:
    """The installed ``solve`` console script of the interpreter running the tests."""
    script = Path(sys.executable).parent / ("solve.exe" if os.name == "nt" else "solve")
    assert script.exists(), f"no console script beside {sys.executable}: pip install the package first"
    return script


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Run ``solve`` in-process through its entry point: ``cli("tables", "--json")`` gives
    (exit status, stdout, stderr), counting argparse's exits (usage errors, --help) as statuses."""

    def run(*argv: str) -> tuple[int, str, str]:
        try:
            status = main(list(argv))
        except SystemExit as exit_:
            status = int(exit_.code or 0)
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run


@pytest.fixture
def standard_input() -> Iterator[Callable[[str | int], None]]:
    """A function that puts `given` on the test process's descriptor 0, which ``/dev/stdin`` opens, for the rest of the
    test: text through a pipe, as ``printf ... | solve`` gives it (at most a pipe's buffer, 64 KiB), or an open file's
    descriptor, as ``solve ... < FILE`` does. Descriptor 0 is put back after the test."""
    saved = os.dup(0)

    def give(given: str | int) -> None:
        if isinstance(given, str):
            reader, writer = os.pipe()
            assert os.write(writer, given.encode("utf-8")) == len(given.encode("utf-8"))
            os.close(writer)
        else:
            reader = os.dup(given)
        os.dup2(reader, 0)
        os.close(reader)

    yield give
    os.dup2(saved, 0)
    os.close(saved)


@pytest.fixture
def coloured_screen(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """What the commands print on stdout while the test runs, as a 200-column terminal of 8 colours shows it (the
    styles as ANSI codes: red ``\\x1b[31m``, green ``\\x1b[32m``, yellow ``\\x1b[33m``)."""
    screen = io.StringIO()

    def coloured(width: int = 160) -> Console:
        return Console(width=200, force_terminal=True, color_system="standard", file=screen,
                       **solver.render.PLAIN_TEXT)

    for command in (solver.cli.output, solver.cli.memory, solver.cli.maps):  # those that make their consoles
        monkeypatch.setattr(command, "new_console", coloured)
    return screen


@pytest.fixture
def solver_parameters(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The CP-SAT parameters of every solver the planner makes while the test runs, in order (the solvers as
    they are)."""
    made, parameters = solver.solve.new_solver, []

    def recorded(query: Any) -> Any:
        found = made(query)
        parameters.append(found.parameters)
        return found

    monkeypatch.setattr(solver.solve, "new_solver", recorded)
    return parameters


@pytest.fixture
def answers_left_open(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[Any], bool], str], None]:
    """A function that makes the planner's answers to the questions `which` picks (a `Query`) take the `status`
    given, ``feasible`` or ``unknown``, as a time limit that left them open would (their plans as solved)."""
    def left_open(which: Callable[[Any], bool], status: str) -> None:
        answer_for = solver.solve.answer_for

        def answered(catalog: Any, query: Any, gpu: str, *args: Any, **kwargs: Any) -> Any:
            found = answer_for(catalog, query, gpu, *args, **kwargs)
            return found.model_copy(update={"status": status}) if which(query) else found

        monkeypatch.setattr(solver.solve, "answer_for", answered)

    return left_open


@pytest.fixture
def unwrapped_fragments(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each Trinity fragment made while the test runs (by the command or the API), in order, as it is before its
    comments are wrapped (`solver.trinity.fragment.wrapped_comments`' text); the fragments made are as they are."""
    import solver.trinity.fragment  # loads ruamel: only for the tests that ask

    wrap, made = solver.trinity.fragment.wrapped_comments, []

    def recorded(text: str) -> str:
        made.append(text)
        return wrap(text)

    monkeypatch.setattr(solver.trinity.fragment, "wrapped_comments", recorded)
    return made


@pytest.fixture
def shipped_tables_kept() -> Iterator[Path]:
    """The shipped tables' folder; a file or folder a test (one whose refusal failed) wrote there is removed after
    it, so that the test fails alone and not every test after it (a YAML file there loads as a GPU's tables)."""
    tables = shipped_tables_directory()
    before = set(tables.rglob("*"))
    yield tables
    for path in sorted(set(tables.rglob("*")) - before, reverse=True):  # a folder's contents before the folder
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


@pytest.fixture
def edited_a100_tables(tmp_path: Path) -> Callable[[Callable[[str], str]], Catalog]:
    """A catalogue from a copy of the shipped tables whose A100 file `edit` rewrites (a made-up cell or
    table): ``edited_a100_tables(lambda text: text + more)``."""

    def load(edit: Callable[[str], str]) -> Catalog:
        tables = tmp_path / "tables"
        shutil.copytree(shipped_tables_directory(), tables)
        path = tables / "feasibility" / "a100-80gb.yaml"
        path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
        return load_catalog(tables)

    return load


def fragment_comment(words: str, indent: str = "") -> str:
    """A comment of `words` at `indent` as a Trinity fragment writes it: its lines, each with its line break, wrapped
    at 100 columns (`solver.trinity.fragment.wrapped_comments`, whose wrap test_wrap_s66 checks)."""
    from solver.trinity.fragment import wrapped_comments

    return wrapped_comments(f"{indent}# {words}")


def mode_line(algorithm: str) -> str:
    """The ``mode: train`` line a test config of `algorithm` needs where Trinity trains it in that mode alone (SFT, DPO:
    `solver.trinity.checks.TRAIN_MODE_ALGORITHMS`, refused as ``algorithm-mode-refused`` in another), else none."""
    from solver.trinity.checks import TRAIN_MODE_ALGORITHMS

    return "mode: train\n" if algorithm in TRAIN_MODE_ALGORITHMS else ""


DATASET_PATH = "/data/train.jsonl"
"""The dataset a test config in mode train names: Trinity refuses SFT and DPO there without one
(``trainer-input-missing``)."""
TRAINER_INPUT = {"trainer_input": {"experience_buffer": {"path": DATASET_PATH}}}
"""The ``buffer`` keys that name `DATASET_PATH` as the trainer's input."""


def in_train_mode(config: dict[str, Any]) -> dict[str, Any]:
    """The Trinity config `config` in mode train, its ``buffer`` naming its dataset (`TRAINER_INPUT`), as Trinity
    trains SFT and DPO; a copy of its own, so that a test editing it edits no other test's."""
    return {**config, "mode": "train", "buffer": {**config.get("buffer", {}), **copy.deepcopy(TRAINER_INPUT)}}


def train_mode_text(algorithm: str, text: str) -> str:
    """The Trinity config `text` as `algorithm` needs it where Trinity trains it on a dataset in mode train alone
    (`mode_line`): that line on top and the dataset (`TRAINER_INPUT`) in its ``buffer`` section (one in flow style on
    one line, a block indented by two, or a new one); else `text` as it is."""
    if not mode_line(algorithm):
        return text
    dataset = f"trainer_input: {{experience_buffer: {{path: {DATASET_PATH}}}}}"
    for pattern, replacement in ((r"^buffer: \{", f"buffer: {{{dataset}, "),
                                 (r"^buffer:\n", f"buffer:\n  {dataset}\n")):
        given, found = re.subn(pattern, replacement, text, count=1, flags=re.MULTILINE)
        if found:
            return mode_line(algorithm) + given
    return f"{mode_line(algorithm)}{text}buffer: {{{dataset}}}\n"


def made_up_table(gpus: int, model: str, max_model_len: int, setting: str) -> str:
    """A table file's entry for one made-up table of one row and one cell, to append to a GPU type's file."""
    return (f"  - gpus: {gpus}\n    section: made up\n    models: [{model}]\n"
            f"    rows:\n      - {{max_model_len: {max_model_len}, cells: {{{model}: {setting}}}}}\n")


def qwen3_8b_checkpoint(folder: Path, **config: object) -> Path:
    """A local checkpoint folder holding a Qwen3-8B-shaped config.json (with `config` on top)."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({
        "model_type": "qwen3", "hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 36, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936, "max_position_embeddings": 40960,
        **config}), encoding="utf-8")
    return folder


PADDED_051 = ("{budget} as Trinity 0.5.1 raises it, {least} x SP {sp} = {tokens} tokens, holds every sequence, but its "
              "verl stops at the first step whose batch is padded wider, to its longest prompt plus its longest "
              "response, which may come from two sequences (a multi-turn workflow, model.enable_prompt_truncation "
              "off, or a rollout max_tokens above max_response_tokens)")
"""The line after one on a budget Trinity raised to ``ceil(L / SP)`` (`budget`, at `sp`): Trinity 0.5.1's verl (0.7.0)
checks each batch's padded width, which two sequences may make wider than that (``raised_budget_stop_words``)."""


def config_lines(cli: Callable[..., tuple[int, str, str]], tmp_path: Path, text: str, flags: tuple[str, ...],
                 prefix: str) -> tuple[list[tuple[str, str]], bool, int]:
    """The (code, words) of `--from-config`'s lines whose code starts with `prefix` on H100 80GB, for a Trinity config
    of `text` (written to `tmp_path`), whether it is refused, and the exit status of the same with `--check`."""
    config = tmp_path / "trinity.yaml"
    config.write_text(text, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--json", *flags)
    assert status == 0
    current = json.loads(out)[0]["current"]
    lines = [(code, words) for code, words in zip(current["config_problem_codes"], current["config_problems"],
                                                  strict=True) if code.startswith(prefix)]
    return lines, current["refused"], cli("--from-config", str(config), "--gpu", "h100", "--check", *flags)[0]


_SHARED_ANSWERS: dict[tuple[object, ...], tuple[Catalog, Any]] = {}
_SHARED_DATA: dict[tuple[object, ...], tuple[Catalog, Any]] = {}


def planner_answers_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cluster planners' solves (`answer_for`) and prepared data (`prepare_inputs`) worked out once per test
    process, for the rest of the test: each planner still counts each question new to it in `asked`, and gets the
    answer its own solve would (no deadline passes in a test: each solve ends on its proof, so a way's plan is the
    same whatever the planner's time limit), without solving it again. Keyed by the catalogue itself (by identity,
    kept alive beside the answer so that no other catalogue takes its id). Not for a test of the deterministic time
    or work the solves spend: an answer given again spends none (a solve on a `work_budget` is solved afresh)."""
    solved, prepared = solver.cluster.options.answer_for, solver.cluster.options.prepare_inputs

    def answer_for(catalog: Catalog, query: Any, gpu: str, **options: Any) -> Any:
        if solver.solve._WORK_BUDGET.get() is not None:  # a solve on a work budget may end undecided: its own
            return solved(catalog, query, gpu, **options)
        explained = options.get("explained", True)  # a way's plan (`Planner.best`) is asked unexplained
        key = (id(catalog), query if explained else query.model_copy(update={"time_limit_s": 10.0}), gpu, explained)
        if key not in _SHARED_ANSWERS:
            _SHARED_ANSWERS[key] = catalog, solved(catalog, query, gpu, **options)
        return _SHARED_ANSWERS[key][1]

    def prepare_inputs(catalog: Catalog, inputs: Any) -> Any:
        key = (id(catalog), inputs)
        if key not in _SHARED_DATA:
            _SHARED_DATA[key] = catalog, prepared(catalog, inputs)
        return _SHARED_DATA[key][1]

    monkeypatch.setattr(solver.cluster.options, "answer_for", answer_for)
    monkeypatch.setattr(solver.cluster.options, "prepare_inputs", prepare_inputs)


SET_HANDLER = signal.signal
"""`signal.signal` itself, which tests replace (`monkeypatch`) while `python_ctrl_c` may still have to put a handler
back."""


@pytest.fixture
def python_ctrl_c() -> Iterator[None]:
    """Python's own Ctrl-C handler for the test, as a terminal's run has it, also where the suite runs with Ctrl-C
    ignored (a script's background job)."""
    previous = SET_HANDLER(signal.SIGINT, signal.default_int_handler)
    yield
    SET_HANDLER(signal.SIGINT, previous)
