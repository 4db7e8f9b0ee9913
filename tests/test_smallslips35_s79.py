"""Slips left by smallslips33 in s79: a --lora-rank below a --from-config config's own adapter's, which what is made of
the plan keeps, is refused by ``--emit trinity``, ``--out``, ``--json``'s ``apply`` and the apply lines as fewer
``--lora-targets`` parameters are, through one count of the adapter's parameters (`solver.trinity.adapter_unkept`), and
by the API's ``trinity_config`` and ``trinity_settings`` for a ``config_query`` answer; ``solve``'s further questions
(measured, unpinned, rollout kept, ...) end by the answer's deadline, as room kept's does."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from test_deadlines_s80 import FakeClock
from test_review79b_s79 import CONFIG, QV

import solver
from solver.api import answer_query, config_query
from solver.tables import QueryError, load_catalog
from solver.trinity import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]
A100 = ("--gpu", "A100-80GB")


def _config(tmp_path: Path, targets: str = "all-linear") -> Path:
    path = tmp_path / "grpo.yaml"
    path.write_text(CONFIG % targets, encoding="utf-8")
    return path


def _lower_rank(name: object, kept_by: str, option: str = "--lora-rank") -> str:
    return (f"{name}: the plan counted its LoRA adapter at rank 16 (43,646,976 parameters), but the config's own "
            f"(model.lora_configs), at rank 64, which {kept_by}, adapts 174,587,904: plan at its rank (leave {option} "
            "out), or set its lora_rank to 16 first")


# (1) Before: --emit trinity printed a fragment without model.lora_configs (the config's rank-64 adapter stays) for a
# plan that counted rank 16, with exit 0; --out, --json's apply and the apply lines the same; --write alone refused it.

def test_emit_and_out_refuse_a_lower_rank_than_the_configs_own(cli: Cli, tmp_path: Path) -> None:
    config, fragment = _config(tmp_path), tmp_path / "fragment.yaml"
    status, out, err = cli("--from-config", str(config), *A100, "--lora-rank", "16", "--emit", "trinity")
    refused = _lower_rank(f"--from-config {config}", "--emit trinity keeps")
    assert (status, out, err) == (2, "", f"solve: error: {refused}\n")
    status, out, err = cli("--from-config", str(config), *A100, "--lora-rank", "16", "--out", str(fragment))
    assert (status, out, fragment.exists()) == (2, "", False)
    assert err == f"solve: error: {_lower_rank(f'--from-config {config}', '--out keeps')}\n"
    # a higher rank counts more than the config's adapter holds (an over-count): the fragment is made, as before
    status, out, _ = cli("--from-config", str(config), *A100, "--lora-rank", "128", "--emit", "trinity")
    assert status == 0 and "--lora-rank 128 --critic none" in out and "lora_configs" not in out


def test_json_and_the_apply_lines_say_it(cli: Cli, tmp_path: Path) -> None:
    config = _config(tmp_path)
    status, out, _ = cli("--from-config", str(config), *A100, "--lora-rank", "16", "--json")
    (answer,) = json.loads(out)
    assert status == 0 and "apply" not in answer
    assert answer["apply_left_out"] == _lower_rank(f"--from-config {config}", "--emit trinity keeps")
    _, out, _ = cli("--from-config", str(config), *A100, "--lora-rank", "16", "--top", "1")
    lines = out.splitlines()
    (at,) = [index for index, line in enumerate(lines) if line.startswith("apply ")]
    assert lines[at + 1] == f"# {_lower_rank(f'--from-config {config}', 'these lines keep')}"


def test_rank_and_targets_are_weighed_together(cli: Cli, tmp_path: Path) -> None:
    # the config's q and v adapter at rank 64 (30,670,848 parameters): --lora-rank 16 --lora-targets all-linear counts
    # all-linear's at rank 16, 43,646,976, more (made as before); rank 8 counts 21,823,488, fewer (refused, naming
    # both). (--lora-rank alone counts the config's own q and v since adapterkeep_s80, not all-linear's.)
    config = _config(tmp_path, QV)
    every = ("--lora-targets", "all-linear", "--emit", "trinity")
    status, out, _ = cli("--from-config", str(config), *A100, "--lora-rank", "16", *every)
    assert status == 0 and "--lora-targets all-linear --lora-rank 16 --critic none" in out
    status, _, err = cli("--from-config", str(config), *A100, "--lora-rank", "8", *every)
    assert status == 2 and err == (
        f"solve: error: --from-config {config}: the plan counted its LoRA adapter at rank 8 on all-linear (21,823,488 "
        "parameters), but the config's own (model.lora_configs), at rank 64 on '.*\\.(q_proj|v_proj)', which --emit "
        "trinity keeps, adapts 30,670,848: plan on it (leave --lora-rank and --lora-targets out), or set its "
        "lora_rank to 8 and its target_modules to all-linear first\n")


# (2) Before: the API's trinity_config and trinity_settings made the fragment for such a plan.

def test_the_api_refuses_it_too(tmp_path: Path) -> None:
    catalog = load_catalog()
    config = read_trinity_config(_config(tmp_path).read_text(encoding="utf-8"), "grpo.yaml", {})
    (answer,) = answer_query(config_query(catalog, config, gpu="A100-80GB", lora_rank=16), catalog)
    for made in (solver.trinity_config, solver.trinity_settings):
        with pytest.raises(QueryError) as raised:
            made(answer)
        assert str(raised.value) == _lower_rank("config", f"{made.__name__} keeps", "lora_rank")
    (higher,) = answer_query(config_query(catalog, config, gpu="A100-80GB", lora_rank=128), catalog)
    assert "max_model_len: 16384" in solver.trinity_config(higher)
    assert "lora_configs" not in solver.trinity_settings(higher).config.get("model", {})


# (3) Before: each further question (measured, fewer nodes, rollout kept, unpinned, ...) had a whole time limit of its
# own after the ranking's: a plain solve could run several times --time-limit.

PINNED = ("--model", "8B", *A100, "--len", "32k", "--gpus", "8", "--no-env", "--json")


def _further_clock(monkeypatch: pytest.MonkeyPatch, after_ranking_s: float) -> FakeClock:
    """A clock that stands still (`FakeClock`), moved on by `after_ranking_s` once the answer's ranking (the solve
    given the questions asked first) is done: the seconds each solve after it was given, and the questions asked."""
    clock = FakeClock(monkeypatch)
    clock.advance_after(monkeypatch, "_with_asked_first", after_ranking_s)
    return clock


FURTHER = ("measured", "rollout_kept", "unpinned", "room_kept")


def test_the_further_questions_end_within_the_answers_time_limit(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _further_clock(monkeypatch, after_ranking_s=9.0)  # of --time-limit 10: a second left
    status, out, _ = cli(*PINNED)
    assert status == 0 and [field for field in FURTHER if field in json.loads(out)[0]] == list(FURTHER)
    # measured's, rollout kept's, unpinned's and room kept's questions, one solve each, all given the second left
    assert (len(clock.asked), clock.given) == (4, [1.0] * 4)


def test_none_is_asked_once_the_time_limit_has_passed(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    _, out, _ = cli(*PINNED)
    assert [field for field in FURTHER if field in json.loads(out)[0]] == list(FURTHER)
    clock = _further_clock(monkeypatch, after_ranking_s=10.0)
    status, out, _ = cli(*PINNED)
    (answer,) = json.loads(out)
    assert status == 0 and answer["plans"] and (clock.asked, clock.given) == ([], [])
    assert [field for field in FURTHER if field in answer] == []
