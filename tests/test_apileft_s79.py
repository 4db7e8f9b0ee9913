"""API and CLI rough edges (s79, helper apileft): a `Fleet` or `Catalog` built from lists passes ``mypy --strict``
and holds tuples; GPU types answered together without a budget share one, which ``solve`` notes where some would get
another alone; a check command's files stay as given, and its header says where to run it where one is relative; a
refused RoPE scaling has no base judged (refused implies removed)."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path

import pydantic
import pytest
from test_phi3rope_s78 import LACKS_06, YARN, _phimoe, _problems
from test_smallslips24_s77 import Cli

import solver

ROOT = Path(__file__).parents[1]
MODEL_CONFIG = ROOT / "tests" / "data" / "model-config" / "config.json"
USER_CONFIG = ROOT / "tests" / "data" / "trinity" / "user-config.yaml"
SHARED_BUDGET = ("solve: note: without --gpus, the GPU types answered share one budget of 6 GPUs, the largest count of "
                 "A100-80GB's tables; alone, H100-80GB would get 8: give --gpus N for another budget")
RELATIVE_HEADER = ("# To check your config once these keys are in it (CONFIG: its file; its relative paths from the\n"
                   "# directory these keys were made in), as this plan was made:\n")
ABSOLUTE_HEADER = "# To check your config once these keys are in it (CONFIG: its file), as this plan was made:\n"


MYPY_USER_FILE = ("from pathlib import Path\n"
                  "import solver\n"
                  "pool = solver.Pool(name='a', gpu='h100', nodes=1, gpus_per_node=8)\n"
                  "jobs = [solver.Job(name='j', model='4B', max_model_len=8192)]\n"
                  "fleet = solver.Fleet(pools=[pool], jobs=jobs, model_config_of=[('j', Path('c.json'))])\n"
                  "shipped = solver.load_catalog()\n"
                  "catalog = solver.Catalog(models=list(shipped.models), gpu_types=[*shipped.gpu_types])\n"
                  "held: tuple[solver.Pool, ...] = fleet.pools\n"
                  "models: tuple[solver.Model, ...] = catalog.models + shipped.models\n"
                  "solver.Fleet(pools=[1], jobs=jobs)\n"
                  "listed: list[solver.Job] = fleet.jobs\n")
"""A user's file building a `Fleet` and a `Catalog` from lists (conftest's `mypy_strict` checks it)."""


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_fleet_and_catalog_built_from_lists_pass_mypy_strict(mypy_strict: dict[str, list[str]]):
    # Before: "Argument "pools" to "Fleet" has incompatible type "list[Pool]"; expected "tuple[Pool, ...]"", and so
    # for jobs, model_config_of and Catalog's models and gpu_types. What the model holds stays a tuple (the last
    # line's error), and an item of another type is still refused (the line before it).
    assert mypy_strict["test_apileft_s79_user.py"] == [
        'test_apileft_s79_user.py:10: error: List item 0 has incompatible type "int"; expected "Pool"  [list-item]',
        ('test_apileft_s79_user.py:11: error: Incompatible types in assignment (expression has type '
         '"tuple[Job, ...]", variable has type "list[Job]")  [assignment]')]


def test_fleet_and_catalog_built_from_lists_hold_tuples():
    pool = solver.Pool(name="a", gpu="h100", nodes=1, gpus_per_node=8)
    job = solver.Job(name="j", model="4B", max_model_len=8192)
    fleet = solver.Fleet(pools=[pool], jobs=[job], model_config_of=[("j", Path("c.json"))])
    shipped = solver.load_catalog()
    catalog = solver.Catalog(models=list(shipped.models), gpu_types=list(shipped.gpu_types))
    assert (fleet.pools, fleet.jobs, fleet.models, fleet.model_config_of) == (
        (pool,), (job,), (), (("j", Path("c.json")),))
    assert fleet == solver.Fleet(pools=(pool,), jobs=(job,), model_config_of=(("j", Path("c.json")),))
    assert hash(fleet) == hash(solver.Fleet(pools=(pool,), jobs=(job,), model_config_of=(("j", Path("c.json")),)))
    assert (type(catalog.models), type(catalog.gpu_types), catalog.without_bf16) == (tuple, tuple, ())
    assert catalog == shipped.model_copy(update={"without_bf16": ()})
    with pytest.raises(ValueError, match="pools\n  Input should be a valid tuple"):
        solver.Fleet(pools="ab", jobs=[job])  # type: ignore[arg-type]  # a string is no sequence of pools


def test_gpu_types_answered_without_a_budget_share_one_and_say_so(cli: Cli):
    # The API and the command give both GPU types the A100's 6 (one budget for them all, as docs/api.md says); the
    # command notes on stderr that the H100 alone would get 8.
    api = [(answer.gpu, answer.budget_gpus) for answer in solver.plan("4B", gpu=["a100", "h100"], max_model_len=32768)]
    status, out, err = cli("--model", "4B", "--gpu", "a100,h100", "--len", "32768", "--json")
    assert (status, [(answer["gpu"], answer["budget_gpus"]) for answer in json.loads(out)]) == (0, api)
    assert api == [("A100-80GB", 6), ("H100-80GB", 6)]
    assert err.splitlines()[-1] == SHARED_BUDGET
    assert [answer.budget_gpus for answer in solver.plan("4B", gpu="h100", max_model_len=32768)] == [8]


@pytest.mark.parametrize("argv", [
    ("--gpu", "h100,h200"),  # neither has tables: 8 each alone, 8 together
    ("--gpu", "a100,h20"),  # both 6
    ("--gpu", "a100,h100", "--gpus", "6"),  # a budget given
    ("--gpu", "a100,h100", "--total-gpus", "8", "--rollout-gpus", "2"),
    ("--gpu", "a100,h100", "--minimize", "gpus"),  # any count up to 64, the same for each
])
def test_no_shared_budget_note_where_each_gets_its_own_or_one_is_given(cli: Cli, argv: tuple[str, ...]):
    status, _, err = cli("--model", "4B", "--len", "32768", "--json", *argv)
    assert (status, "share one budget" in err) == (0, False)


def test_emitted_check_command_keeps_relative_paths_and_says_where_to_run_it(cli: Cli, monkeypatch: pytest.MonkeyPatch):
    # As given, as the JSON's paths are (docs/json.md, Paths, as given): relative ones say where to run the command.
    monkeypatch.chdir(MODEL_CONFIG.parents[1])
    argv = ("--gpu", "h100", "--len", "32768", "--emit", "trinity")
    status, out, _ = cli("--model-config", "model-config/config.json", *argv)
    assert (status, RELATIVE_HEADER in out, "--model-config model-config/config.json --critic none\n" in out) == (
        0, True, True)
    status, out, _ = cli("--model-config", str(MODEL_CONFIG), *argv)
    assert (status, ABSOLUTE_HEADER in out, f"--model-config {MODEL_CONFIG} --critic none\n" in out) == (0, True, True)
    status, out, _ = cli("--model", "4B", "--cells", "cells/h800.yaml", *argv)  # --cells alike
    assert (status, RELATIVE_HEADER in out) == (0, True)


def test_api_fragment_with_a_relative_model_config_says_where_to_run_its_check(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(MODEL_CONFIG.parents[1])
    catalog = solver.load_catalog().with_model(solver.load_model_config("model-config"))
    (answer,) = solver.plan("Qwen2.5-7B-Instruct", gpu="h100", max_model_len=32768, budget_gpus=8, catalog=catalog)
    relative = solver.trinity_config(answer, catalog, model_config="model-config")
    absolute = solver.trinity_config(answer, catalog, model_config=MODEL_CONFIG)
    assert (RELATIVE_HEADER in relative, "--model-config model-config --critic none\n" in relative) == (True, True)
    assert (ABSOLUTE_HEADER in absolute, RELATIVE_HEADER in absolute) == (True, False)


def test_write_note_says_where_to_run_its_check_and_is_replaced_by_the_next(cli: Cli, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.yaml").write_text(USER_CONFIG.read_text(encoding="utf-8"), encoding="utf-8")
    argv = ("--gpu", "h100", "--len", "32768", "--model", "0.6B")
    assert cli("--from-config", "mine.yaml", "--write", "written.yaml", *argv)[0] == 0
    lines = (tmp_path / "written.yaml").read_text(encoding="utf-8").splitlines()
    at = lines.index("  # To check this file as its plan was made (its relative paths from the directory it was "
                     "written in):")
    assert lines[at + 1].startswith("  #   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve --from-config "
                                    "written.yaml --check --gpu H100-80GB ")
    # Written again, by absolute paths: the earlier note (of the new words) is gone, the new one has no such words.
    assert cli("--from-config", str(tmp_path / "written.yaml"), "--write", str(tmp_path / "again.yaml"), *argv)[0] == 0
    again = (tmp_path / "again.yaml").read_text(encoding="utf-8")
    assert [line for line in again.splitlines() if "To check" in line] == [
        "  # To check this file as its plan was made:"]


def test_cluster_emit_dir_check_names_the_job_model_config_as_joined_and_says_where_to_run_it(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fleet").mkdir()
    (tmp_path / "fleet" / "config.json").write_text(MODEL_CONFIG.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "fleet" / "cluster.yaml").write_text(
        "pools:\n  - {name: p, gpu: h100, nodes: 1, gpus_per_node: 8}\n"
        "jobs:\n  - {name: j, model_config: config.json, max_model_len: 16384}\n", encoding="utf-8")
    assert cli("cluster", "fleet/cluster.yaml", "--emit-dir", "out")[0] == 0
    written = (tmp_path / "out" / "j.yaml").read_text(encoding="utf-8")
    assert (RELATIVE_HEADER in written, "--model-config fleet/config.json --critic none\n" in written) == (True, True)


def test_a_refused_rope_scaling_has_no_base_judged(tmp_path: Path):
    # Refused (its trainer fails on it) is removed too: its refusal alone, no rope-theta-missing-refused for the
    # mapping's base on 0.6 (_check_mapped_theta judges only a scaling that stays).
    assert _problems(_phimoe(tmp_path), YARN, 16384, version="0.6") == [
        ("rope-scaling-unbuilt-refused", f"model.rope_scaling: rope_type yarn on PhiMoE-4k {LACKS_06}")]


def test_a_job_and_plan_read_a_length_alike_and_refuse_one_in_the_same_words():
    # Job(max_model_len="64k") was taken where plan(max_model_len="64k") was refused (apiwords87): one parser for both.
    catalog = solver.load_catalog()
    for written in ("64k", " 64 K "):
        assert solver.Job(name="j", model="4B", max_model_len=written).max_model_len == 65536  # type: ignore[arg-type]
        assert solver.make_query(catalog, model="4B", gpu="h100", max_model_len=written,  # type: ignore[arg-type]
                                 budget_gpus=2).max_model_len == 65536
    words = "must be a whole number{}, got '64kb' (tokens, or thousands of 1024: 32768 or 32k)"
    with pytest.raises(solver.QueryError) as planned:
        solver.plan("4B", gpu="h100", max_model_len="64kb", budget_gpus=2)  # type: ignore[arg-type]
    assert str(planned.value) == "max_model_len " + words.format(" or None")
    fleet = solver.load_fleet(ROOT / "docs" / "examples" / "fleet.yaml")
    changed = fleet.model_copy(update={"jobs": (fleet.jobs[0].model_copy(update={"max_model_len": "64kb"}),
                                                *fleet.jobs[1:])})
    with pytest.raises(solver.QueryError) as placed:
        solver.place(changed)
    assert str(placed.value) == f"fleet: job {fleet.jobs[0].name}, max_model_len: " + words.format("")


def test_a_job_built_in_python_is_refused_a_length_in_the_words_a_cluster_file_s_is(tmp_path: Path):
    # Job(max_model_len="abc") said pydantic's "Input should be a valid integer" where load_fleet (and place) name the
    # forms a length takes (apifold87): the model's own validator says them, in the words plan's refusal has.
    words = "must be a whole number, got 'abc' (tokens, or thousands of 1024: 32768 or 32k)"
    with pytest.raises(pydantic.ValidationError) as built:
        solver.Job(name="j", model="4B", max_model_len="abc")  # type: ignore[arg-type]
    assert [(error["msg"], error["type"]) for error in built.value.errors()] == [(words, "int_type")]
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text((ROOT / "docs" / "examples" / "fleet.yaml").read_text(encoding="utf-8").replace(
        "max_model_len: 32768", "max_model_len: abc", 1), encoding="utf-8")
    with pytest.raises(solver.TableError) as loaded:
        solver.load_fleet(fleet)
    assert str(loaded.value) == f"{fleet}: line 15: job math-4b, max_model_len: {words}"
    # a range's ends alike; a number in quotes, in Python, is told the number to pass, as plan(max_model_len=) is
    with pytest.raises(pydantic.ValidationError) as ranged:
        solver.Job(name="j", model="4B", max_model_len={"at_least": "32768"})  # type: ignore[arg-type]
    quoted = "must be a whole number, got '32768' (a str: pass 32768)"
    assert [error["msg"] for error in ranged.value.errors()] == [quoted]


@pytest.mark.parametrize(("build", "field", "words"), [
    (lambda: solver.Job(name="j", model="4B", max_model_len=4096, priority=0), "priority", "must be above 0, got 0"),
    (lambda: solver.Job(name="j", model="4B", max_model_len=4096, priority="high"), "priority",
     "must be a whole number, got 'high'"),
    (lambda: solver.Job(name="j", model="4B", max_model_len=4096, rollout_gpus=-2), "rollout_gpus",
     "must be at least 0, got -2"),
    (lambda: solver.Job(name="j", model=3, max_model_len=4096), "model", "must be text, got 3"),
    (lambda: solver.Pool(name="p", gpu="h100", nodes=-1, gpus_per_node=8), "nodes", "must be at least 0, got -1"),
    (lambda: solver.Pool(name="p", gpu="h100", nodes=2.0, gpus_per_node=8), "nodes",
     "must be a whole number, got 2.0 (a float: pass 2)"),
    (lambda: solver.Pool(name="p", gpu="h100", nodes=1, gpus_per_node=0), "gpus_per_node", "must be above 0, got 0"),
    # a validator's own words, a field's or the model's cross-field check, without pydantic's "Value error, " (hints88)
    (lambda: solver.Pool(name=" p", gpu="h100", nodes=1, gpus_per_node=8), "name",
     "must not start or end with a space (output does not show it), got ' p'"),
    (lambda: solver.Job(name="j", model="4B", max_model_len=4096, dpo=True, critic="resident"), None,
     "dpo true trains no PPO critic (Trinity's dpo algorithm uses none): drop critic resident"),
    (lambda: solver.Job(name="j", model="", max_model_len=4096), "model", "must not be empty, got ''"),  # mutants48
    (lambda: solver.Job(name="j", model="4B", max_model_len=4096, critic="x"), "critic",
     "must be 'none', 'resident', 'offloaded' or 'reloaded', got 'x'"),
])
def test_a_job_s_or_pool_s_other_fields_built_in_python_are_refused_in_a_file_s_words(build: Callable[[], object],
                                                                                      field: str | None,
                                                                                      words: str) -> None:
    # s88: fields other than lengths said pydantic's "Input should be greater than 0": now, as lengths, the field, what
    # was given and what is taken, in the words a cluster file's reader says them (PLAIN_PROBLEMS), its type kept
    with pytest.raises(pydantic.ValidationError) as built:
        build()
    assert [(error["loc"], error["msg"]) for error in built.value.errors()] == [((field,) if field else (), words)]


@pytest.mark.parametrize(("length", "words"), [
    (0, "must be above 0, got 0"), ("0k", "must be above 0, got '0k'"), (-5, "must be above 0, got -5"),
    (10**9, "must be at most 16777216, got 1000000000"), ({"at_least": 0}, "must be above 0, got 0")])
def test_a_job_built_in_python_is_refused_a_length_out_of_bounds_in_a_cluster_file_s_words(length: object,
                                                                                           words: str) -> None:
    # s87: Job(max_model_len=0) said pydantic's "Input should be greater than 0" where a cluster file says "must be
    # above 0, got 0": one wording (BOUND_PROBLEMS) for both, the error's type kept for the file's reader
    with pytest.raises(pydantic.ValidationError) as built:
        solver.Job(name="j", model="4B", max_model_len=length)  # type: ignore[arg-type]
    assert [error["msg"] for error in built.value.errors()] == [words]
    fleet = solver.load_fleet(ROOT / "docs" / "examples" / "fleet.yaml")
    changed = fleet.model_copy(update={"jobs": (fleet.jobs[0].model_copy(update={"max_model_len": length}),
                                                *fleet.jobs[1:])})
    with pytest.raises(solver.QueryError) as placed:
        solver.place(changed)
    at = ", at_least" if isinstance(length, dict) else ""
    assert str(placed.value) == f"fleet: job {fleet.jobs[0].name}, max_model_len{at}: {words}"
