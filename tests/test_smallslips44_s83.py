"""Small slips (s83, smallslips44): Ctrl-C while solve's best is asked, once the placement (purchase) is worked out,
leaves it whole, --emit-dir's configs written, and exits with 130 saying what was skipped; ..."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import in_train_mode
from test_solvebest_s82 import FLEET  # three LoRA jobs whose solve's best is asked, one on solve's pick

import solver
from solver.cluster.options import Planner
from solver.tables import QueryError

Cli = Callable[..., tuple[int, str, str]]
ROOT = Path(__file__).resolve().parent.parent


def _ctrl_c_at_third_solve_best(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Ctrl-C as solve's best is asked the third time (lora-c's question); the jobs asked, in order."""
    solve_best, calls = Planner.solve_best, []

    def interrupted(planner: Planner, *args: Any) -> Any:
        calls.append(args[1].name)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return solve_best(planner, *args)

    monkeypatch.setattr(Planner, "solve_best", interrupted)
    return calls


def test_ctrl_c_while_solve_best_is_asked_writes_the_configs_and_exits_130(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET, encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--json")
    whole = json.loads(out)  # without Ctrl-C: every question asked
    calls = _ctrl_c_at_third_solve_best(monkeypatch)
    status, out, err = cli("cluster", str(fleet), "--json", "--emit-dir", str(tmp_path / "configs"))
    answer = json.loads(out)
    assert status == 130 and calls == ["lora-a", "lora-b", "lora-c"]
    assert sorted(path.name for path in (tmp_path / "configs").iterdir()) == [
        "full-8b.yaml", "lora-a.yaml", "lora-b.yaml", "lora-c.yaml"]
    assert [placed["config_file"] for placed in answer["placements"]] == [
        str(tmp_path / "configs" / f"{placed['job']}.yaml") for placed in answer["placements"]]
    assert (answer["interrupted"], answer["solve_best_unasked"], answer["status"]) == (False, 2, "optimal")
    assert [{key: value for key, value in placed.items() if key not in ("solve_best", "config_file")}
            for placed in answer["placements"]] == [
        {key: value for key, value in placed.items() if key not in ("solve_best", "config_file")}
        for placed in whole["placements"]]
    assert err.splitlines()[-1] == (
        "solve cluster: interrupted once the placement was worked out: the placement above is whole (its configs too); "
        "solve's best was not asked for 2 jobs placed on the tables' plans")
    assert "no configs written" not in err and "may not be the best" not in err


def test_ctrl_c_while_solve_best_is_asked_after_a_purchase_exits_130_with_it_whole(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET, encoding="utf-8")
    calls = _ctrl_c_at_third_solve_best(monkeypatch)
    status, out, err = cli("cluster", str(fleet), "--buy", "--json")
    answer = json.loads(out)
    assert status == 130 and len(calls) == 3
    assert (answer["interrupted"], answer["solve_best_unasked"], answer["status"]) == (False, 2, "optimal")
    assert err.splitlines()[-1] == (
        "solve cluster: interrupted once the purchase was worked out: the purchase above is whole; solve's best was "
        "not asked for 2 jobs placed on the tables' plans")


def _statuses_cli_md_gives_every_command() -> list[int]:
    """The exit statuses docs/cli.md's words give every command: 130, 143 and 141, then 70 for a defect."""
    text = " ".join((ROOT / "docs/cli.md").read_text(encoding="utf-8").split())
    sentence = "exits with " + text.split("Every command exits with ", 1)[1].split(" a script does not take", 1)[0]
    return [int(number) for number in re.findall(r"(?:exits with|\),|and) (\d+)(?: when|,)", sentence)]


@pytest.mark.parametrize("command", [[], ["tables"], ["map"], ["cluster"], ["memory"], ["calibrate"], ["examples"]])
def test_every_commands_help_lists_the_statuses_cli_md_gives(cli: Cli, command: list[str]):
    assert _statuses_cli_md_gives_every_command() == [130, 143, 141, 70]
    status, out, _ = cli(*command, "--help")
    statuses = " ".join(out.split()).rsplit("Exit status: ", 1)[1]
    assert status == 0 and ", 2 bad input" in statuses and statuses.endswith(
        ", 74 a full disk, 130 Ctrl-C, 143 a request to end (SIGTERM), 141 a reader gone (| head), 70 an internal "
        "error.")


# (3) solve --dpo without a config: Trinity's default, dynamic batch sizes on, splits DPO's pairs (dpo-pair-dynamic),
# so the keys turn them off and hold the actor's one pair, as --write keeps a DPO config's; the plans then count
# Trinity's default budget, a pair's tokens, and a budget of one's own is refused (the actor reads none).
DPO_PLAN = ("--model", "Qwen3-8B", "--gpu", "h100", "--gpus", "8", "--len", "8k", "--dpo")
DPO_OFF = ("  # off for DPO: the actor's micro-batch then holds the size below in rows, whole pairs; on, it is\n"
           "  # cut by tokens and its pairs split (the plan counts one pair's tokens)\n"
           "  use_dynamic_bsz: false\n")


@pytest.mark.parametrize(("version", "pair"), [(None, 2), ("0.6", 2), ("0.5", 1)])
def test_a_dpo_fragment_without_a_config_turns_dynamic_batch_sizes_off_and_holds_a_pair(
        cli: Cli, version: str | None, pair: int):
    status, out, _ = cli(*DPO_PLAN, "--emit", "trinity", *(("--trinity-version", version) if version else ()))
    fragment = yaml.safe_load(out)
    # before s83 neither key was written: Trinity's default (on) split the pairs
    assert status == 0 and DPO_OFF in out
    assert fragment["trainer"]["use_dynamic_bsz"] is False
    assert fragment["trainer"]["max_token_len_per_gpu"] == 16384  # a pair of 8192, Trinity's default
    # and the ref's and the rollout's log-prob micro-batch 1, which verl 0.8 needs with dynamic batch sizes off
    # (review83a's rule for --write, met by the fragment too)
    assert fragment["trainer"]["trainer_config"] == {"actor_rollout_ref": {
        "actor": {"ppo_micro_batch_size_per_gpu": pair}, "ref": {"log_prob_micro_batch_size_per_gpu": 1},
        "rollout": {"log_prob_micro_batch_size_per_gpu": 1}}}


def test_a_dpo_fragment_merged_into_a_config_draws_no_dpo_pair_dynamic(cli: Cli, tmp_path: Path):
    path = _dpo_config_from_fragment(cli, tmp_path)
    status, out, _ = cli("--from-config", str(path), "--check", "--gpu", "h100", "--trinity-version", "0.6", "--json")
    problems = json.loads(out)[0]["current"]["config_problem_codes"]
    # the pair doubled before verl 0.8 alone is said (dpo-doubled-above-verdict, (4) below), nothing else: it passes
    assert status == 0 and problems == ["dpo-doubled-above-verdict"]


@pytest.mark.parametrize("budget", ["8192", "auto"])
def test_a_token_budget_is_refused_beside_dpo_whose_actor_reads_none(cli: Cli, budget: str):
    refusal = (f"--token-budget {budget}: --dpo runs with dynamic batch sizes off in the actor's update, as its "
               "Trinity keys write (on, they split DPO's pairs), which reads no token budget: each micro-batch holds "
               "one pair, a chosen and a rejected sequence, which the plans count at Trinity's default budget, "
               "ceil(2 x max_model_len / SP) tokens per GPU: leave --token-budget out\n")
    assert cli(*DPO_PLAN, "--token-budget", budget) == (2, "", f"solve: error: {refusal}")
    assert cli("map", "--gpu", "h100", "--model", "Qwen3-8B", "--dpo", "--token-budget", budget) == (
        2, "", f"solve map: error: {refusal}")
    with pytest.raises(QueryError, match=rf"^token_budget='?{budget}'?: dpo=True runs with dynamic batch sizes off"):
        solver.plan("Qwen3-8B", gpu="h100", budget_gpus=8, max_model_len=8192, dpo=True,
                    token_budget=int(budget) if budget.isdigit() else budget)


LONG_DPO = """\
pools:
  - {name: h100, gpu: H100-80GB, nodes: 1, gpus_per_node: 2}
jobs:
  - {name: d, model: Qwen3-8B, max_model_len: 64k, dpo: true, rollout_gpus: 0}
"""


def test_a_dpo_job_keeps_trinitys_default_budget_under_token_budget_auto(cli: Cli, tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(LONG_DPO, encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--token-budget", "auto", "--json")
    answer = json.loads(out)
    # before s83 it was placed on a lowered budget of 50176 tokens, which its config's actor, in rows, never reads
    assert (status, answer["placements"], [unplaced["job"] for unplaced in answer["unplaced"]]) == (1, [], ["d"])
    assert "--token-budget auto trains" not in answer["unplaced"][0]["reason"]
    status, _, err = cli("cluster", str(fleet))
    assert status == 1 and "--token-budget auto" not in err  # not told to run again with it


# (4) --check of such a config (the actor's pair 2, dynamic batch sizes off) with no release named, or 0.6: the pair
# is 4 sequences only where Trinity on verl before 0.8 doubles it; the line says it as that split. (s87: a problem of
# one verl line only, dpo-doubled-above-verdict, so --check passes: rft-solver's own DPO config passes its own check;
# above the budget on every line, token-budget-above-verdict, it fails.)
SPLIT_ABOVE = (
    "dynamic batch sizes off: verl reads no token budget and fills each micro-batch with 4 sequences (the micro-batch "
    "size per GPU, 1 where unset, doubled: Trinity on verl before 0.8 doubles the actor's and the ref's for DPO, a "
    "chosen and a rejected sequence per example), up to 4 x ceil(8192 / 1) = 32768 tokens per GPU, more than "
    "Trinity's default ceil(2 x 8192 / 1) = 16384, which the tables measured, {before}: more tokens per GPU than the "
    "verdict assumes there; Trinity 0.6 with verl 0.8 or later doubles nothing: 2 sequences, up to 16384 tokens per "
    "GPU, within it. No micro-batch size fits both verl lines: on verl before 0.8 write the doubled sizes halved (the "
    "actor's 1, one pair once doubled, which on verl 0.8 or later splits its pairs, dpo-pair-split)")


def _dpo_config_from_fragment(cli: Cli, tmp_path: Path, *options: str) -> Path:
    """`solve --dpo`'s fragment with `options` (the actor's 2, or 1 for Trinity 0.5; dynamic batch sizes off) made a
    whole DPO config."""
    status, out, _ = cli(*DPO_PLAN, "--rollout-gpus", "0", "--train-batch-size", "64", "--emit", "trinity", *options)
    assert status == 0
    config = yaml.safe_load(out)
    config["model"]["model_path"] = "Qwen/Qwen3-8B"
    config["algorithm"] = {"algorithm_type": "dpo"}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(in_train_mode(config)), encoding="utf-8")
    return path


def _checked(cli: Cli, path: Path, *options: str) -> tuple[int, dict[str, Any]]:
    """(exit status, ``current``) of ``--check --json`` on the config at `path` on H100s with `options`."""
    status, out, _ = cli("--from-config", str(path), "--check", "--gpu", "h100", "--json", *options)
    return status, json.loads(out)[0]["current"]


@pytest.mark.parametrize(("version", "before"), [
    (None, "on Trinity 0.5, and on 0.6 with verl before 0.8"), ("0.6", "on Trinity 0.6 with verl before 0.8"),
    ("0.5", None)])
def test_rft_solvers_own_dpo_config_passes_its_own_check(cli: Cli, tmp_path: Path, version: str | None,
                                                         before: str | None):
    options = ("--trinity-version", version) if version else ()
    path = _dpo_config_from_fragment(cli, tmp_path, *options)
    written = tmp_path / "w.yaml"
    assert cli("--from-config", str(path), "--gpu", "h100", "--write", str(written), *options)[0] == 0
    for made in (path, written):  # the fragment made a config, and --write's copy of it
        status, current = _checked(cli, made, *options)
        assert (status, current["trains"]) == (0, True)
        # 0.5 writes the actor's 1, doubled to one pair: within the budget
        assert current["config_problems"] == ([] if before is None else [SPLIT_ABOVE.format(before=before)])
        assert current["config_problem_codes"] == ([] if before is None else ["dpo-doubled-above-verdict"])


def test_a_pair_above_the_budget_on_verl_08_too_keeps_its_line(cli: Cli, tmp_path: Path):
    # the actor's 4, two pairs on verl 0.8 or later too: no split to say, and --check fails on every release
    path = _dpo_config_from_fragment(cli, tmp_path)
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["ppo_micro_batch_size_per_gpu"] = 4
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    for options in ((), ("--trinity-version", "0.6"), ("--trinity-version", "0.5")):
        status, current = _checked(cli, path, *options)
        assert (status, current["trains"], current["config_problem_codes"]) == (
            1, False, ["token-budget-above-verdict"]), options
    (line,) = _checked(cli, path)[1]["config_problems"]
    assert line.startswith(
        "dynamic batch sizes off: verl reads no token budget and fills each micro-batch with 8 sequences")
    assert line.endswith("more tokens per GPU than the verdict assumes; set the micro-batch sizes to 1 (for DPO the "
                         "actor's 1 is one pair before verl 0.8, where Trinity doubles it, and on verl 0.8 or later "
                         "needs 2, dpo-pair-split: no size fits both lines; dynamic batch sizes on would split its "
                         "pairs, dpo-pair-dynamic)")


# (5) Trinity on verl before 0.8 asserts, as the trainer starts, that the actor's micro-batch per GPU (doubled for DPO)
# divides its mini-batch per GPU, the train batch over the data-parallel ranks (0.6.0 verl_legacy/fsdp_workers.py:
# 239-266, 0.5.2 trainer/verl/fsdp_workers.py:223-250): 24 over 8 ranks is 3, which 2 x 2 = 4 does not divide.
MINI_SPLIT = ("DPO with dynamic batch sizes off in the actor's update: {where} as the trainer starts that its "
              "micro-batch per GPU, {micro} sequences ({source}), divides its mini-batch per GPU, "
              "buffer.train_batch_size {batch} over the 8 data-parallel ranks (trainer GPUs 8 / SP 1) = {mini}, which "
              "it does not: the trainer fails there; make buffer.train_batch_size a multiple of {multiple} (8 ranks x "
              "{micro}; the nearest to {batch}: {nearest})")
ACTOR_SIZE = "trainer.trainer_config.actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu"


def _with(path: Path, batch: int, actor: dict[str, int]) -> Path:
    """The config at `path` with train batch `batch` and the actor's keys `actor` (in place of its own)."""
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    config["buffer"]["train_batch_size"] = batch
    config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"] = actor
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _mini_batch_lines(cli: Cli, path: Path, *options: str) -> tuple[list[str], list[str], bool]:
    status, out, _ = cli("--from-config", str(path), "--check", "--gpu", "h100", "--json", *options)
    current = json.loads(out)[0]["current"]
    assert status in (0, 1)
    pairs = [(code, line) for code, line in zip(current["config_problem_codes"], current["config_problems"],
                                                strict=True) if code.startswith("dpo-mini-batch-split")]
    return [code for code, _ in pairs], [line for _, line in pairs], current["refused"]


@pytest.mark.parametrize(("version", "where", "code", "refused"), [
    (None, "Trinity 0.5, and 0.6 on verl before 0.8, assert", "dpo-mini-batch-split", False),
    ("0.6", "Trinity 0.6 on verl before 0.8 asserts", "dpo-mini-batch-split", False),
    ("0.5", "Trinity 0.5 asserts", "dpo-mini-batch-split-refused", True)])
def test_check_says_where_the_doubled_dpo_micro_batch_splits_the_mini_batch(
        cli: Cli, tmp_path: Path, version: str | None, where: str, code: str, refused: bool):
    # 16 / 8 = 2 per GPU: the doubled 4 splits it, the 2 that verl 0.8 or later takes as written does not
    path = _with(_dpo_config_from_fragment(cli, tmp_path), 16, {"ppo_micro_batch_size_per_gpu": 2})
    line = MINI_SPLIT.format(where=where, micro=4, source=f"{ACTOR_SIZE} 2 doubled for DPO", batch=16, mini=2,
                             multiple=32, nearest=32)
    assert _mini_batch_lines(cli, path, *(("--trinity-version", version) if version else ())) == (
        [code], [line], refused)


def test_the_dpo_mini_batch_is_said_only_where_the_micro_batch_does_not_divide_it(cli: Cli, tmp_path: Path):
    path = _dpo_config_from_fragment(cli, tmp_path)
    assert _mini_batch_lines(cli, _with(path, 32, {"ppo_micro_batch_size_per_gpu": 2}))[0] == []  # 4 per GPU: 4
    assert _mini_batch_lines(cli, _with(path, 48, {"ppo_micro_batch_size_per_gpu": 1}))[0] == []  # 6 per GPU: 2
    # unset: 1, doubled to 2, which 3 per GPU splits
    _, (line,), _ = _mini_batch_lines(cli, _with(path, 24, {}))
    assert line == MINI_SPLIT.format(where="Trinity 0.5, and 0.6 on verl before 0.8, assert", micro=2,
                                     source=f"{ACTOR_SIZE} 1 (unset: 1) doubled for DPO", batch=24, mini=3,
                                     multiple=16, nearest="16 or 32")
    # the deprecated whole-batch size over the ranks in its place, not doubled: 16 / 8 = 2, which 3 per GPU splits
    _, (line,), _ = _mini_batch_lines(cli, _with(path, 24, {"ppo_micro_batch_size": 16}))
    assert line == MINI_SPLIT.format(where="Trinity 0.5, and 0.6 on verl before 0.8, assert", micro=2,
                                     source="trainer.trainer_config.actor_rollout_ref.actor.ppo_micro_batch_size 16 "
                                     "over them", batch=24, mini=3, multiple=16, nearest="16 or 32")
    # with dynamic batch sizes on, verl cuts by tokens: not asserted (dpo-pair-dynamic says what that does)
    config = yaml.safe_load(_with(path, 24, {"ppo_micro_batch_size_per_gpu": 2}).read_text(encoding="utf-8"))
    config["trainer"]["use_dynamic_bsz"] = True
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    assert _mini_batch_lines(cli, path)[0] == []
