"""Session 82, deadlinewords: words and checks at the edges of maps, reasons and cluster files.

- An explanation's ``undecided`` reason past the call's ``deadline_s`` (`solver.plan`'s, `answer_query`'s), which may be
  what cut the search short, names it as what to give more of (``a longer deadline_s (and time_limit_s, where that
  came first) decides it``), in the caller's words, and so do the lines `answers_text` writes under such an answer
  (`Answer.deadline_passed`); without a deadline, the time limit alone, as before.
- A map's margin, host memory, node size, train batch, workers and memory model are refused once, before any cell's
  query (`check_run_options`), not at its first cell: before the rows' own refusals too.
- A cluster file's ``model`` or ``model_config`` that a message gives back as the file's value (``model_config:
  PATH``) is written as YAML reads it back (`yaml_flow_text`): ``model_config: '#ckpt'``, not a comment."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from command_words import make_query
from conftest import qwen3_8b_checkpoint
from ortools.sat.python import cp_model
from test_persona60_s81 import ACCEPTED, FLEET, Cli, _checkpoint

import solver
import solver.maps
import solver.solve as solve_module
from solver.explain import explain
from solver.rules import API_OPTIONS, COMMAND_OPTIONS
from solver.solve import plan
from solver.tables import QueryError, load_catalog
from solver.tables.text import yaml_flow_text

CATALOG = load_catalog()
UNDECIDED = ("the search ran out of time ({limit}) before it found a plan or proved that none exists: nothing is known "
             "to rule one out; {longer} decides it")


def _timed_out(option_names: Any) -> tuple[Any, Any]:
    """A query (its words `option_names`'s) and its answer, made ``unknown`` as a search the time ran out of."""
    query = make_query(CATALOG, gpu="a100", model="14B", max_model_len=32768, budget_gpus=4,
                       option_names=option_names)
    (answer,) = plan(query, CATALOG)
    return query, answer.model_copy(update={"status": "unknown", "plans": ()})


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
@pytest.mark.parametrize(("names", "limit", "longer"), [
    (COMMAND_OPTIONS, "--time-limit 10 s", "--time-limit"),
    (API_OPTIONS, "time_limit_s=10", "time_limit_s")], ids=["command", "api"])
def test_an_undecided_reason_names_the_deadline_it_passed(names: Any, limit: str, longer: str) -> None:
    query, timed_out = _timed_out(names)
    (reason,) = explain(CATALOG, query, timed_out)
    assert (reason.rule, reason.detail) == ("undecided", UNDECIDED.format(limit=limit, longer=f"a longer {longer}"))
    cut = timed_out.model_copy(update={"deadline_passed": True})  # passed as it was given: it may have cut it short
    for deadline in (None, 1e-9, 600):  # (review82b) the answer's deadline_passed, whatever the deadline is now
        with solve_module.call_deadline(deadline):
            assert [reason.detail for reason in explain(CATALOG, query, cut)] == [UNDECIDED.format(
                limit=f"{limit}, or the call's deadline_s, which came first",
                longer=f"a longer deadline_s (and {longer}, where that came first)")]
            assert [reason.detail for reason in explain(CATALOG, query, timed_out)] == [
                UNDECIDED.format(limit=limit, longer=f"a longer {longer}")]


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_a_plan_call_cut_by_its_deadline_says_a_longer_deadline_s_in_its_explanation(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Every solve left open (as one a 1e-6 s deadline cut short would be, whatever the machine's speed).
    monkeypatch.setattr(cp_model.CpSolver, "solve", lambda self, model, callback=None: cp_model.UNKNOWN)
    (answer,) = solver.plan("14B", gpu="a100", max_model_len=32768, budget_gpus=4, explain=True, deadline_s=1e-6)
    assert (answer.status, answer.reason) == (
        "unknown", "no plan found within the time limit of 10 s, or the call's deadline_s, which came first")
    assert [(reason.rule, reason.detail) for reason in answer.explanation] == [("undecided", UNDECIDED.format(
        limit="time_limit_s=10, or the call's deadline_s, which came first",
        longer="a longer deadline_s (and time_limit_s, where that came first)"))]
    assert answer.deadline_passed
    # Without the explanation, the line under the reason says the same.
    (answer,) = solver.plan("14B", gpu="a100", max_model_len=32768, budget_gpus=4, deadline_s=1e-6)
    assert answer.deadline_passed and solver.answers_text([answer]).splitlines()[1:3] == [
        "no plan found within the time limit of 10 s, or the call's deadline_s, which came first",
        ("a longer deadline_s (and time_limit_s, where that came first) lets the search find a plan or prove that "
         "none exists")]


def test_a_deadline_not_reached_leaves_the_time_limits_words() -> None:
    (answer,) = solver.plan("14B", gpu="a100", max_model_len=32768, budget_gpus=4, deadline_s=600)
    assert not answer.deadline_passed
    unknown = answer.model_copy(update={"status": "unknown", "plans": (), "reason": "no plan found within the time "
                                        "limit of 10 s"})
    assert solver.answers_text([unknown]).splitlines()[2] == (
        "a longer time_limit_s lets the search find a plan or prove that none exists")


@pytest.mark.parametrize(("deadline_passed", "longer"), [
    (False, "a longer time_limit_s"), (True, "a longer deadline_s (and time_limit_s, where that came first)")])
def test_the_lines_under_plans_the_search_did_not_prove_name_what_cut_it(deadline_passed: bool, longer: str) -> None:
    (answer,) = solver.plan("14B", gpu="a100", max_model_len=32768, budget_gpus=4, top=3)
    assert len(answer.plans) == 2  # of the 3 asked for: a search cut short may find more
    cut = answer.model_copy(update={"status": "feasible", "deadline_passed": deadline_passed})
    lines = solver.answers_text([cut]).splitlines()
    assert f"2 plans of the 3 asked for: the time limit stopped the search; {longer} may find more, and better ones" \
        in lines
    one = cut.model_copy(update={"plans": cut.plans[:1], "query": cut.query.model_copy(update={"top": 1})})
    assert (f"the time limit stopped the search before it proved this plan the best: {longer} may find better ones"
            in solver.answers_text([one]).splitlines())


@pytest.fixture
def cells(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The map's cells' queries and solves, recorded as they are asked (none is answered: the test fails then)."""
    asked: list[Any] = []

    def made(*args: Any, **kwargs: Any) -> None:
        asked.append(("query", kwargs))
        raise AssertionError("a cell's query was made before the refusal")

    def solved(*args: Any, **kwargs: Any) -> None:
        asked.append(("solve", args))
        raise AssertionError("a solve ran before the refusal")

    monkeypatch.setattr(solver.maps, "make_query", made)
    monkeypatch.setattr(solver.maps, "best_plan", solved)
    monkeypatch.setattr(solve_module, "_solved", solved)
    return asked


@pytest.mark.parametrize(("keywords", "message"), [
    ({"host_ram_gb": 0.0}, "host_ram_gb must be above 0 and at most 49152 GB, got 0"),
    ({"host_ram_gb": "48"}, "host_ram_gb must be a number or None, got '48' (GB per node as a number: 2048 for 2 TB)"),
    ({"margin": 1.5}, "margin is a fraction from 0 to below 1, got 1.5 (as a percentage, 1.5% is 0.015)"),
    ({"node_gpus": 0}, "node_gpus must be a whole number from 1 to 16, got 0"),
    ({"train_batch_size": 0}, "train_batch_size must be a whole number from 1 to 16777216, got 0"),
    ({"workers": 0}, "workers must be a whole number from 1 to 1024, got 0"),
    ({"memory": "mm.yaml"},
     "memory must be a MemoryModel or None, got 'mm.yaml' (a path: pass solver.load_memory_model('mm.yaml'))"),
], ids=["host-ram", "host-ram-text", "margin", "nodes", "train-batch", "workers", "memory"])
def test_a_maps_run_options_are_refused_before_any_cell(cells: list[Any], keywords: dict[str, Any],
                                                        message: str) -> None:
    with pytest.raises(QueryError) as refused:
        solver.map_plans(["8B", "4B"], gpu=["h100", "a100"], gpus_up_to=2, **keywords)
    assert (str(refused.value), cells) == (message, [])


def test_a_bad_host_ram_is_refused_before_the_rows_own_refusals(cells: list[Any]) -> None:
    # The rows' LoRA targets refused on both models, but the host memory every cell shares is named first, as solve
    # names it first (before, the map's first cell named it, once check_rows had refused the targets).
    keywords = {"lora_rank": 8, "lora_targets": "xyz", "host_ram_gb": -1.0}
    for call in (lambda: solver.map_plans(["8B", "4B"], gpu="h100", **keywords),
                 lambda: solver.plan("8B", gpu="h100", max_model_len=8192, **keywords)):
        with pytest.raises(QueryError, match="^host_ram_gb must be above 0 and at most 49152 GB, got -1$"):
            call()
    assert cells == []


@pytest.mark.parametrize("host_ram", ["0", "50TB"])
def test_solve_map_with_a_bad_host_ram_exits_2_with_no_solve(cli: Cli, cells: list[Any], host_ram: str) -> None:
    status, out, err = cli("map", "--model", "8B", "--gpu", "h100", "--host-ram", host_ram)
    assert (status, out, cells) == (2, "", [])
    assert err.endswith(f"solve map: error: argument --host-ram: must be above 0 and at most 49152 GB, got "
                        f"{host_ram}\n")


@pytest.mark.parametrize(("text", "written"), [
    ("ckpt/step-100", "ckpt/step-100"), ("#ckpt", "'#ckpt'"), ("a: b", "'a: b'"), ("*ckpt", "'*ckpt'"),
    ("&ckpt", "'&ckpt'"), ("!ckpt", "'!ckpt'"), ("it's", "it's"), ('"q"', "'\"q\"'"), ("x #y", "'x #y'"),
    ("true", "'true'"), ("8", "'8'"), ("a,b", "'a,b'"), ("- x", "'- x'"), ("", "''")])
def test_yaml_flow_text_is_read_back_as_the_text(text: str, written: str) -> None:
    assert yaml_flow_text(text) == written
    assert yaml.safe_load(f"{{model_config: {written}}}") == {"model_config": text}
    assert yaml.safe_load(f"model_config: {written}") == {"model_config": text}


@pytest.mark.parametrize(("folder", "written"), [
    ("#ckpt", "'#ckpt'"), ("a: b", "'a: b'"), ("*ckpt", "'*ckpt'"), ("true", "'true'"), ("step-100", "step-100")])
def test_a_fleet_jobs_checkpoint_model_is_told_model_config_as_yaml_reads_it(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: str, written: str) -> None:
    monkeypatch.chdir(tmp_path)
    _checkpoint(tmp_path / "fleets" / folder)
    (tmp_path / "fleets" / "fleet.yaml").write_text(FLEET.replace("MODEL", repr(folder)), encoding="utf-8")
    status, out, err = cli("cluster", "fleets/fleet.yaml")
    assert (status, out) == (2, "")
    assert err == (f"solve cluster: error: fleets/fleet.yaml: job grpo7b, model: unknown model {folder!r}; {ACCEPTED}"
                   f"model_config: {written} (the folder holds one; model reads no file)\n")
    # The line the message gives, pasted into the job, plans the checkpoint.
    given = re.search(r"(model_config: .*) \(the folder", err).group(1)  # type: ignore[union-attr]
    (tmp_path / "fleets" / "fleet.yaml").write_text(FLEET.replace("model: MODEL", given), encoding="utf-8")
    status, out, _ = cli("cluster", "fleets/fleet.yaml", "--json")
    assert status == 0 and '"model": "Mistral-7B-v0.1"' in out


def test_two_model_configs_that_name_one_model_are_named_as_the_file_gives_them(cli: Cli, tmp_path: Path) -> None:
    qwen3_8b_checkpoint(tmp_path / "#first", _name_or_path="mine")
    qwen3_8b_checkpoint(tmp_path / "a: b", _name_or_path="mine", hidden_size=5120)
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: h100s, gpu: h100, gpus_per_node: 8, nodes: 1}\njobs:\n"
                     "  - {name: one, model_config: '#first', max_model_len: 8192}\n"
                     "  - {name: two, model_config: 'a: b', max_model_len: 8192}\n", encoding="utf-8")
    status, out, err = cli("cluster", str(fleet))
    assert (status, out) == (2, "")
    assert err == (f"solve cluster: error: {fleet}: job two, model_config: 'a: b' names its model 'mine', as job one's "
                   "does, but the two differ in shape: give the folders or _name_or_path different names\n")
