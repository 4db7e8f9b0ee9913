"""Token budgets only where verl reads one (session 72). A pass with dynamic batch sizes off fills each micro-batch with
its micro-batch size in sequences and reads no budget: the verdict on a config counts those sequences' tokens (as a
model trained one sequence per micro-batch is counted), for the CLI and the API alike, and no line compares the budget
keys that no pass reads. Each role is judged by its own dynamic batch key where the release reads it (Trinity 0.5's
critic and rollout keys). A null micro-batch size that Trinity types ``int`` is reported for any model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from solver.api import answer_query, config_query, with_config_verdicts
from solver.tables import load_catalog
from solver.trinity import read_trinity_config, trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]
ARR = "trainer.trainer_config.actor_rollout_ref"
CRITIC = "trainer.trainer_config.critic"
CATALOG = load_catalog()
OFF = "dynamic batch sizes off"
ONE_SEQUENCE = (f"{OFF}: verl reads no token budget and fills each micro-batch with 1 sequence (the micro-batch size "
                "per GPU, 1 where unset), up to 1 x ceil(8192 / 1) = 8192 tokens per GPU, below Trinity's default "
                "ceil(2 x 8192 / 1) = 16384, which the tables measured")
FOUR_SEQUENCES = ("verl reads no token budget{there} and fills each micro-batch with 4 sequences ({largest}micro-batch "
                  "size per GPU, 1 where unset), up to 4 x ceil(8192 / 1) = 32768 tokens per GPU, more than Trinity's "
                  "default ceil(2 x 8192 / 1) = 16384, which the tables measured: more tokens per GPU than the verdict "
                  "assumes; set the micro-batch sizes to 1, or turn dynamic batch sizes on")


def _config(roles: dict[str, Any] | None = None, **trainer: Any) -> dict[str, Any]:
    """Qwen3-8B at 8192 tokens on 8 trainer GPUs, dynamic batch sizes off and a trainer budget of 12000 unless
    `trainer` says otherwise, with the roles' keys `roles`."""
    return {"model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 8192}, "cluster": {"gpu_per_node": 8},
            "explorer": {"rollout_model": {"engine_num": 0}}, "buffer": {"batch_size": 64},
            "algorithm": {"algorithm_type": "grpo"},
            "trainer": {"use_dynamic_bsz": False, "max_token_len_per_gpu": 12000,
                        "trainer_config": {"actor_rollout_ref": roles or {}}, **trainer}}


def _verdict(config: dict[str, Any], version: str | None = None, estimate: str = "auto") -> tuple[Any, list[tuple]]:
    """The budget the verdict on `config` is at on an H100 (None: Trinity's default), and its budget lines."""
    text = yaml.safe_dump(config)
    read = read_trinity_config(text, "c.yaml", {}, version)  # type: ignore[arg-type]
    query = config_query(CATALOG, read, gpu="H100", estimate=estimate)  # type: ignore[arg-type]
    current = with_config_verdicts(answer_query(query, CATALOG), query, CATALOG, read, text, "c.yaml", {},
                                   version)[0].current  # type: ignore[arg-type]
    assert current is not None
    said = zip(current.config_problem_codes, current.config_problems, strict=True)
    lines = [(code.value, words) for code, words in said if "budget" in code.value]
    return current.max_token_len_per_gpu, lines


def test_with_dynamic_batch_sizes_off_the_verdict_counts_one_sequence_not_the_budget():
    # trainer.max_token_len_per_gpu 12000 is read by no pass: no line on it; the verdict is at one sequence's tokens
    assert _verdict(_config()) == (8192, [
        ("lowered-token-budget", f"{ONE_SEQUENCE}: the verdict is at 8192 tokens per GPU")])
    # estimates off: the verdict stays at the default the tables measured, which is cautious
    assert _verdict(_config(), estimate="never") == (None, [("token-budget-below-verdict", (
        f"{ONE_SEQUENCE}: fewer tokens per GPU than the verdict assumes (so it is cautious; with estimates off the "
        "verdict is at what the tables measured)"))])


def test_micro_batches_of_more_sequences_than_the_default_holds_are_said():
    four = {"actor": {"ppo_micro_batch_size_per_gpu": 4}}  # the rollout's, unset, takes the actor's
    assert _verdict(_config(four)) == (None, [("token-budget-above-verdict", f"{OFF}: " + FOUR_SEQUENCES.format(
        there="", largest="the largest "))])
    # two sequences of 8192 at SP 1 are the default, 16384: nothing to say
    assert _verdict(_config({"actor": {"ppo_micro_batch_size_per_gpu": 2}})) == (None, [])


def test_a_pass_off_beside_passes_that_read_a_budget_is_judged_alone():
    # Trinity 0.5: the actor's own key off, the trainer's on; the ref still reads trainer.max_token_len_per_gpu
    # (checks90: the rollout's takes the actor's key, but its pass, the old log-prob recompute, runs only with
    # rollout_correction.bypass_mode false, true by default: counted only then)
    roles = {"actor": {"use_dynamic_bsz": False, "ppo_micro_batch_size_per_gpu": 4}}
    below = ("token-budget-below-verdict", (  # raise05: which 0.5.0 raises, as the verdict counts
        "trainer.max_token_len_per_gpu 12000 is below Trinity's default ceil(2 x 8192 / 1) = 16384, which the tables "
        "measured: Trinity 0.5.0 raises it to 16384, the verdict's budget (any budget below twice the length over its "
        "role's SP), as the verdict counts; 0.5.1 and 0.5.2 keep it, fewer tokens per GPU than the verdict assumes "
        "(so it is cautious; each step takes more micro-batches)"))
    for bypass, passes in ((None, "the actor's training"),
                           (False, "the actor's training and the actor's log-prob recompute")):
        config = _config(roles, use_dynamic_bsz=True)
        if bypass is not None:
            config["trainer"]["trainer_config"]["algorithm"] = {"rollout_correction": {"bypass_mode": bypass}}
        assert _verdict(config, "0.5") == (None, [below, ("token-budget-above-verdict", (
            f"{OFF} for {passes}: " + FOUR_SEQUENCES.format(there=" there", largest="the ")))])
    # Trinity 0.6 sets the actor's key to the trainer's: every pass reads the budget, which the verdict is at
    assert _verdict(_config(roles, use_dynamic_bsz=True), "0.6")[0] == 12000


def test_the_check_says_what_the_api_says(cli: Cli, tmp_path: Path):
    path = tmp_path / "trinity.yaml"
    path.write_text(yaml.safe_dump(_config()))
    status, out, err = cli("--from-config", str(path), "--gpu", "h100", "--check")
    assert (status, err) == (0, "")
    assert f"but: {ONE_SEQUENCE}: the verdict is at 8192 tokens per GPU plan " in _unwrapped(out)
    assert "12000" not in out


def _unwrapped(out: str) -> str:
    """The command's output on one line, its words one space apart."""
    return " ".join(out.split())


CRITIC_AND_ROLLOUT = {"model": {"max_model_len": 4096}, "algorithm": {"algorithm_type": "ppo"}, "trainer": {
    "use_dynamic_bsz": False, "max_token_len_per_gpu": 1000, "trainer_config": {
        "critic": {"use_dynamic_bsz": True, "ppo_max_token_len_per_gpu": 1000},
        "actor_rollout_ref": {"rollout": {"log_prob_use_dynamic_bsz": True, "log_prob_max_token_len_per_gpu": 2000}},
        "algorithm": {"rollout_correction": {"bypass_mode": False}}}}}
"""The trainer's dynamic batch sizes off, the critic's and the rollout's own on, each with a budget of its own; the
rollout's read by the old log-prob recompute, which runs with ``rollout_correction.bypass_mode`` false."""


def _budget_keys(config: dict[str, Any], version: str | None) -> list[str]:
    """The keys of the ``token-budget-below-length`` lines on `config` for Qwen3-8B on 4 GPUs."""
    found = trinity_config_problems(config, CATALOG.model("Qwen3-8B"), 4, version=version)  # type: ignore[arg-type]
    return [problem.words.split(" ")[0] for problem in found if problem.code.value == "token-budget-below-length"]


@pytest.mark.parametrize(("version", "keys"), [
    # Trinity 0.5 reads the critic's and the rollout's own keys; the trainer's budget is taken by no pass that reads
    ("0.5", [f"{ARR}.rollout.log_prob_max_token_len_per_gpu", *[f"{CRITIC}.ppo_max_token_len_per_gpu"] * 2]),
    # Trinity 0.6 sets the critic's to the trainer's; on verl before 0.8 the rollout's own still counts
    ("0.6", [f"{ARR}.rollout.log_prob_max_token_len_per_gpu"]),
])
def test_each_roles_budget_is_judged_by_its_own_dynamic_batch_key(version: str, keys: list[str]):
    assert _budget_keys(CRITIC_AND_ROLLOUT, version) == keys
    # bypass90: with bypass_mode true, Trinity's default, no recompute runs, and nothing reads the rollout's budget
    config = yaml.safe_load(yaml.safe_dump(CRITIC_AND_ROLLOUT))
    del config["trainer"]["trainer_config"]["algorithm"]
    assert _budget_keys(config, version) == [key for key in keys if ".rollout." not in key]


def test_the_trainers_budget_is_judged_where_a_pass_that_reads_one_takes_it():
    config = yaml.safe_load(yaml.safe_dump(CRITIC_AND_ROLLOUT))
    del config["trainer"]["trainer_config"]["critic"]["ppo_max_token_len_per_gpu"]  # the critic takes the trainer's
    assert _budget_keys(config, "0.5")[0] == "trainer.max_token_len_per_gpu"
    # every pass sets a budget of its own: with Trinity 0.5 none takes the trainer's, and with dynamic batch sizes
    # on Trinity 0.6 on verl 0.8 or later gives every pass the trainer's
    own = {"ppo_max_token_len_per_gpu": 4096}
    config["trainer"]["trainer_config"] = {"critic": own, "actor_rollout_ref": {
        "actor": own, "ref": {"log_prob_max_token_len_per_gpu": 4096},
        "rollout": {"log_prob_max_token_len_per_gpu": 4096}}}
    config["trainer"]["use_dynamic_bsz"] = True
    assert (_budget_keys(config, "0.5"), _budget_keys(config, "0.6")[:1]) == ([], ["trainer.max_token_len_per_gpu"])


NULL_05 = "Trinity 0.5's typed config refuses it as it loads the config (OmegaConf's int field)"
NULL_06_ON = ("Trinity 0.6 fails on it as the trainer starts with verl before 0.8 (its typed config refuses it), and "
              "on verl 0.8 or later reads no micro-batch size with dynamic batch sizes on: remove the key for "
              "Trinity's default (1), or write 1")
NULL_06_OFF = ("Trinity 0.6 fails on it as the trainer starts: with verl before 0.8 its typed config refuses it, and "
               "verl 0.8 or later, left with none, refuses dynamic batch sizes off")


@pytest.mark.parametrize(("version", "dynamic", "line"), [
    ("0.5", True, ("micro-batch-unset-refused", f"{NULL_05}: remove the key for Trinity's default (1), or write 1")),
    (None, True, ("micro-batch-unset", f"{NULL_05}; {NULL_06_ON}")),
    ("0.6", True, ("micro-batch-unset", NULL_06_ON)),
    (None, False, ("micro-batch-unset-refused", f"{NULL_05}; {NULL_06_OFF}: set it to 1")),
])
def test_a_null_size_trinity_types_int_is_reported_for_an_ordinary_model(
        version: str | None, dynamic: bool, line: tuple[str, str]):
    config = {"model": {"max_model_len": 4096}, "algorithm": {"algorithm_type": "grpo"}, "trainer": {
        "use_dynamic_bsz": dynamic, "trainer_config": {"actor_rollout_ref": {"ref": {
            "log_prob_micro_batch_size_per_gpu": None}}}}}
    found = trinity_config_problems(config, CATALOG.model("Qwen3-8B"), 4, version=version)  # type: ignore[arg-type]
    code, words = line
    assert [(problem.code.value, problem.words) for problem in found if "micro-batch" in problem.code.value] == [
        (code, f"{ARR}.ref.log_prob_micro_batch_size_per_gpu is null: {words}")]


def test_check_exits_1_on_a_null_size_trinity_0_5_refuses(cli: Cli, tmp_path: Path):
    config = _config({"actor": {"ppo_micro_batch_size_per_gpu": None}}, use_dynamic_bsz=True)
    path = tmp_path / "trinity.yaml"
    path.write_text(yaml.safe_dump(config))
    flags = ("--from-config", str(path), "--gpu", "h100", "--check")
    status, out, err = cli(*flags, "--trinity-version", "0.5")
    assert (status, err) == (1, "")
    assert (f"refused: {ARR}.actor.ppo_micro_batch_size_per_gpu is null: {NULL_05}: remove the key for Trinity's "
            "default (1), or write 1") in _unwrapped(out)
    status, out, err = cli(*flags, "--trinity-version", "0.6")
    null_line = f"but: {ARR}.actor.ppo_micro_batch_size_per_gpu is null: {NULL_06_ON}"
    assert (status, err, null_line in _unwrapped(out)) == (0, "", True)
