"""One time limit for a whole answer, and a release's words (s80): ``solve``'s questions asked first (without the pins,
with the most host memory) and its ranking end by the answer's deadline, as its further questions do (smallslips35);
a field whose question was asked first is filled from that answer past the deadline too; an Offload fragment's comment
names the Trinity release its plan was counted under (0.5.1), as its check command does; a plan JSON's post-release
is written as its release, and a refusal says how it read a local build."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

import solver
import solver.clock
import solver.solve
from solver.results import Plan
from solver.tables import MAX_HOST_RAM_GB, QueryError, TrinityVersion, release_words
from solver.trinity import patch_trinity_config, trinity_fragment

Cli = Callable[..., tuple[int, str, str]]
CONFIG = ("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 4096\ncluster:\n  node_num: 1\n  gpu_per_node: 8\n"
          "mode: train\ntrainer:\n  trainer_config:\n    actor_rollout_ref:\n      actor:\n"
          "        fsdp_config: {param_offload: false}\n")
"""A Trinity config of Qwen3-8B on 8 trainer GPUs (mode train: no rollout), its actor's offload off."""
PINNED = ("--model", "8B", "--gpu", "A100-80GB", "--gpus", "6", "--len", "32k", "--json")
VERL_LOADING = ("--trinity-version", "0.5.1")
"""With --host-ram 96: Trinity 0.5.1 keeps verl's loading, rank 0 alone for this untied model, so that plans fit; with
no release named every rank loads it (on A100s 0.6 does too), past 96 GiB."""


class FakeClock:
    """A clock that stands still but where a test moves it (`advance_after`, or `now` itself), as `solver.solve` and
    `solver.clock` read it; the seconds each CP-SAT solve of the planner was given once it has moved (`given`), and
    the questions asked then (`asked`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = 1000.0
        self.moved = False
        self.given: list[float] = []
        self.asked: list[Any] = []
        monkeypatch.setattr(solver.solve, "time", SimpleNamespace(monotonic=lambda: self.now))
        monkeypatch.setattr(solver.clock, "seconds_left", lambda deadline: deadline - self.now)
        solved, answer_for = solver.solve._solved, solver.solve.answer_for

        def spied_solved(cp_solver: Any, model: Any) -> Any:
            status = solved(cp_solver, model)
            if self.moved:
                self.given.append(cp_solver.parameters.max_time_in_seconds)
            return status

        def spied_answer_for(catalog: Any, query: Any, gpu: str, **kwargs: Any) -> Any:
            if self.moved:
                self.asked.append(query)
            return answer_for(catalog, query, gpu, **kwargs)

        monkeypatch.setattr(solver.solve, "_solved", spied_solved)
        monkeypatch.setattr(solver.solve, "answer_for", spied_answer_for)

    def advance_after(self, monkeypatch: pytest.MonkeyPatch, name: str, seconds: float) -> None:
        """Move the clock on by `seconds` once `solver.solve`'s function `name` returns."""
        function = getattr(solver.solve, name)

        def moved(*args: Any, **kwargs: Any) -> Any:
            result = function(*args, **kwargs)
            self.now += seconds
            self.moved = True
            return result

        monkeypatch.setattr(solver.solve, name, moved)


# (1) Before: the questions asked first (without the pins, with the most host memory) had a whole --time-limit each,
# and the ranking a whole one of its own after them: a pinned plain solve could run three times --time-limit.

def test_the_ranking_ends_by_the_deadline_the_question_without_the_pins_started(
        cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    # --sp 4: the question without the pins (Env + SP=2 on 6) does not answer the pinned one, whose ranking solves;
    # 6 s of the 10 pass in the first: the ranking's solves get the 4 s left (10 s before; the clock stands still)
    clock = FakeClock(monkeypatch)
    clock.advance_after(monkeypatch, "_unpinned_first", 6.0)
    status, _, _ = cli(*PINNED, "--sp", "4")
    assert status == 0 and clock.given and set(clock.given) == {4.0}
    assert [query.sp for query in clock.asked] == [4]  # the ranking's (its plan, documented, leaves 2 GPUs free)


def test_the_host_limit_is_not_asked_first_once_the_deadline_has_passed(
        cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    # the whole 10 s pass in the question without the pins: the question with the most host memory is not asked
    # (before, with a whole time limit of its own), nor any further question; the ranking's solves get CP-SAT's
    # least, a millisecond
    clock = FakeClock(monkeypatch)
    clock.advance_after(monkeypatch, "_unpinned_first", 10.0)
    cli(*PINNED, "--sp", "4", "--host-ram", "96", *VERL_LOADING)
    assert [query.host_ram_gb for query in clock.asked] == [96]  # the ranking alone
    assert clock.given and set(clock.given) == {0.001}
    assert MAX_HOST_RAM_GB not in [query.host_ram_gb for query in clock.asked]


# (2) Before: unpinned (and more_host_ram) was skipped past the deadline, though the question asked first had
# answered it already.

def test_the_fields_asked_first_are_kept_past_the_deadline(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    # --sp 2 --host-ram 96: both questions asked first have the pinned answer's best plan, so no solve follows them;
    # the whole 10 s pass in them: the further questions (rollout kept's) are not asked, unpinned and more_host_ram
    # are the answers in hand
    clock = FakeClock(monkeypatch)
    clock.advance_after(monkeypatch, "_asked_first", 10.0)
    status, out, _ = cli(*PINNED, "--sp", "2", "--host-ram", "96", *VERL_LOADING)
    (answer,) = json.loads(out)
    assert (status, answer["status"], clock.given, [query.sp for query in clock.asked]) == (0, "optimal", [], [2])
    fields = (answer["plans"][0], answer["unpinned"], answer["more_host_ram"])  # Env + SP=2 on 6 GPUs: no cost
    assert [(plan["gpus"], plan["env"], plan["sp"]) for plan in fields] == [(6, True, 2)] * 3
    assert "rollout_kept" not in answer


# (3) Before: an Offload fragment of a plan counted under Trinity 0.5.1 (or 0.5.0) said `written for Trinity 0.5
# (version="0.5")`, while its check command named 0.5.1.

QWEN3_8B = solver.load_catalog().model("Qwen3-8B")
OFFLOAD_8B = {"gpu": "h100", "budget_gpus": 8, "max_model_len": 32768, "offload": True}


def _offload_plan(trinity_version: str | None) -> Plan:
    (answer,) = solver.plan("Qwen3-8B", trinity_version=trinity_version, **OFFLOAD_8B)  # type: ignore[arg-type]
    assert answer.best is not None
    return answer.best


def _written_for_line(text: str) -> str:
    (line,) = [line.strip() for line in text.splitlines() if "written for Trinity" in line]
    return line


@pytest.mark.parametrize(("counted", "version", "named"), [
    ("0.5.1", None, "0.5.1"), ("0.5.1", "0.5", "0.5.1"), ("0.5.0", None, "0.5.0"), ("0.5.1.post1", None, "0.5.1"),
    ("0.5", None, "0.5"), (None, "0.5", "0.5")])
def test_the_offload_comment_names_the_release_the_plan_was_counted_under(
        counted: str | None, version: TrinityVersion | None, named: str) -> None:
    fragment = trinity_fragment(_offload_plan(counted), QWEN3_8B, version=version)
    assert _written_for_line(fragment).startswith(f'# written for Trinity {named} (version="{named}"), which refuses ')
    checked = trinity_fragment(_offload_plan(counted), QWEN3_8B, version=version, check=("--gpu", "H100-80GB"))
    assert checked.count(f" --check --gpu H100-80GB --critic none --trinity-version {named}\n") == 1


def test_the_commands_comment_names_it_too(cli: Cli) -> None:
    status, out, _ = cli("--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "32k", "--offload",
                         "--trinity-version", "v0.5.1.post1", "--emit", "trinity")
    assert status == 0 and _written_for_line(out) == (
        "# written for Trinity 0.5.1 (--trinity-version 0.5.1), which refuses these flags under trainer")
    assert out.count(" --trinity-version 0.5.1\n") == 1


def test_writing_a_config_twice_leaves_one_note() -> None:
    # --write's note finds its own paragraph (naming 0.5.1 now) and writes it once
    plan = _offload_plan("0.5.1")
    once = patch_trinity_config(CONFIG, plan, QWEN3_8B)
    assert once.count("# written for Trinity 0.5.1 (version=\"0.5.1\")") == 1
    assert patch_trinity_config(once, plan, QWEN3_8B) == once


# (4) Post-releases and local builds read as their release: a plan's JSON naming one (by hand, or before it was named
# back as its release) has its check command name the release; refusals say how a version given was read.

@pytest.mark.parametrize(("value", "words"), [("0.6.0+cu121", "0.6.0+cu121 (read as 0.6.0)"), ("0.5.1", "0.5.1"),
                                              ("v0.5.2", "v0.5.2"), (" 0.6.0.post1 ", "0.6.0.post1 (read as 0.6.0)"),
                                              ("0.6.1", "0.6.1"), ("0.5", "0.5")])
def test_release_words(value: str, words: str) -> None:
    assert release_words(value) == words


def test_a_plan_json_naming_a_post_release_writes_its_release() -> None:
    (answer,) = solver.plan("Qwen3-8B", trinity_version="0.5.1", **OFFLOAD_8B)  # type: ignore[arg-type]
    text = answer.model_dump_json().replace('"trinity_version":"0.5.1"', '"trinity_version":"0.5.1.post1"')
    read_back = solver.Answer.model_validate_json(text)
    assert read_back.best is not None and read_back.best.trinity_version == "0.5.1.post1"
    fragment = solver.trinity_config(read_back)  # before: --trinity-version 0.5.1.post1 in its check command
    assert fragment.count(" --critic none --trinity-version 0.5.1\n") == 1
    assert _written_for_line(fragment).startswith('# written for Trinity 0.5.1 (version="0.5.1")')


def test_a_refusal_says_how_it_read_a_local_build() -> None:
    (answer,) = solver.plan("Qwen3-30B-A3B", gpu="h100", budget_gpus=8, max_model_len=8192,
                            trinity_version="0.5.1.post1")
    with pytest.raises(QueryError) as raised:
        solver.trinity_config(answer, version="0.6.0+cu121")
    assert str(raised.value) == (
        "the answer's plan was counted for Trinity 0.5.1 (routed experts counted separate, as Trinity 0.5.1's "
        "transformers 4 holds them): its memory figures do not hold for Trinity 0.6.0+cu121 (read as 0.6.0), which "
        "holds Qwen3-30B-A3B's routed experts otherwise, whole on its transformers 5; plan it again with "
        "trinity_version='0.6.0+cu121', or leave version out to write it for Trinity 0.5.1")
