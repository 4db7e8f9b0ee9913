"""Keeping a token budget (session 80, keepbudget): a Trinity config whose own budget is below Trinity's default caps
every plan's ``max_token_len_per_gpu`` at it (`Query.token_budget_cap`), so the planner lowers budgets where they do
not fit but never raises the config's (persona57's GRPO of Qwen3-8B with LoRA on 4 H20s trained as written with 15.7
GiB to spare, and was told to raise 32768 to 51200 with 0.7 to spare: ``--token-budget auto`` still does that);
``--token-budget N`` (``token_budget=N``) asks for such a cap, which the CP-SAT model keeps as ``L <= N x SP`` (a
micro-batch of N tokens per GPU holds a sequence over the SP group). The 8 x A100-40GB case keeps its plan: SP=2 at a
lowered 23552 costs 0.5555 against SP=4's 0.6565 at the default 16384, and the room SP=4 has comes from its 16384
tokens per GPU, which SP=2 holds at the same memory for less (``token_budget=16384``): no micro-batch term would move
it (SP=2's lowered budget takes fewer micro-batches per step than SP=4's default)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import solver
from solver.api import answer_query, config_query
from solver.results import Answer
from solver.tables import QueryError, load_catalog
from solver.trinity import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]
CATALOG = load_catalog()
ROOT = Path(__file__).resolve().parent.parent
INTERNLM2 = ROOT / "tests" / "data" / "hf-configs" / "internlm2-7b.json"
CONFIG = """\
algorithm:
  algorithm_type: grpo
model:
  model_path: {model}
  max_model_len: 32768
{lora}cluster:
  node_num: 1
  gpu_per_node: {gpus}
explorer:
  rollout_model:
    engine_num: {engines}
    tensor_parallel_size: 1
trainer:
  trainer_config:
    actor_rollout_ref:
      actor:
        use_dynamic_bsz: true
        ppo_max_token_len_per_gpu: 32768
      ref:
        log_prob_max_token_len_per_gpu: 32768
"""
LORA = """\
  lora_configs:
    - lora_rank: 32
      lora_alpha: 64
      target_modules: ".*\\\\.(q_proj|k_proj|v_proj|o_proj)"
"""
H20_CONFIG = CONFIG.format(model="Qwen/Qwen3-8B", lora=LORA, gpus=4, engines=2)
"""persona57's: 2 rollout and 2 trainer H20s, LoRA on attention, every role at 32768 tokens per GPU (SP 1)."""
A100_CONFIG = CONFIG.format(model="Qwen/Qwen2.5-7B", lora="", gpus=8, engines=4)
"""persona57's 8 x A100-40GB node: 4 rollout and 4 trainer GPUs, full fine-tuning at 32768 tokens per GPU."""


ROLES_CAP = ("the config's own trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu and "
             "trainer.trainer_config.actor_rollout_ref.ref.log_prob_max_token_len_per_gpu")
"""Where `CONFIG`'s cap comes from (`solver.results.Answer.token_budget_cap_source`): its actor's and its ref's own
budgets, which set it (rolebudget2_s81: it said ``the config's own max_token_len_per_gpu``, which `CONFIG` leaves
unset)."""


def _answer(text: str, gpu: str, **options: Any) -> Answer:
    config = read_trinity_config(text, "grpo.yaml", {}, None)
    (answer,) = answer_query(config_query(CATALOG, config, gpu=gpu, top=3, **options), CATALOG)
    return answer


def _plans(answer: Answer) -> list[tuple[int, str, int, int | None, float, float]]:
    return [(plan.gpus, plan.setting.label, plan.max_token_len_per_gpu, plan.token_budget_cap, plan.cost,
             round(plan.memory_gb or 0, 1)) for plan in answer.plans]


def test_a_config_that_trains_as_written_keeps_its_budget() -> None:
    kept = _answer(H20_CONFIG, "h20")
    assert _plans(kept) == [(2, "Env", 32768, 32768, 0.505, 63.1),
                            (2, "Env + Offload + SP=2", 32768, None, 1.111, 48.7)]
    assert kept.best is not None and round(kept.best.headroom_gb or 0, 1) == 24.8
    # before: the config's lowered budget turned --token-budget auto on, which raised it to the most that fits
    raised = _answer(H20_CONFIG, "h20", token_budget="auto")
    assert _plans(raised)[0] == (2, "Env", 51200, None, 0.505, 87.2)
    assert raised.best is not None and round(raised.best.headroom_gb or 0, 1) == 0.7


LONG_06 = (CONFIG.format(model="Qwen/Qwen3-8B", lora="", gpus=8, engines=2).replace("32768", "16384")
           .replace("max_model_len: 16384", "max_model_len: 65536")
           .replace("      actor:\n", "      actor:\n        ulysses_sequence_parallel_size: 2\n"))
"""persona89a's long.yaml, in short: 65536 tokens, the actor at SP 2 (the trainer at 1), its and the ref's budgets
16384, which hold no sequence there: Trinity 0.6 raises the actor's to ceil(65536 / 2) before verl 0.8 and ignores
both from 0.8, where the plan's trainer.max_token_len_per_gpu runs."""


@pytest.mark.parametrize(("version", "length", "cap", "source"), [
    ("0.6", 65536, 32768, ("the config's own trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu "
                           "(raised to hold a sequence at the actor's SP, as Trinity 0.6 runs it on verl before 0.8; "
                           "on 0.8 or later it runs the plan's trainer.max_token_len_per_gpu)")),
    ("0.6", 32768, 16384, ROLES_CAP),  # it holds one at the actor's SP 2: kept as written
    # release89b: with no release the cap was 16384, though every release runs at least ceil(65536 / 2) there
    (None, 65536, 32768, (
        "the config's own trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu (raised to hold a "
        "sequence at the actor's SP, the least any release runs it at: Trinity 0.5.1, 0.5.2 and 0.6 on verl before 0.8 "
        "raise it so, 0.5.0 to its default, and 0.6 on verl 0.8 or later runs the plan's "
        "trainer.max_token_len_per_gpu)")),
    (None, 32768, 16384, ROLES_CAP),
    # 0.5 runs the trainer at the actor's SP; the cap is the least any 0.5 release raises it to, 0.5.1's and 0.5.2's
    # (budget90: it was 0.5.0's, its default, which left no cap, so a plan might raise what 0.5.1 and 0.5.2 run)
    ("0.5", 65536, 32768, (
        "the config's own trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu (raised to hold a "
        "sequence at the actor's SP, the least any 0.5 release runs it at: Trinity 0.5.1 and 0.5.2 raise it so, 0.5.0 "
        "to its default)"))])
def test_trinity_06s_cap_is_the_actors_budget_as_verl_before_08_raises_it(version: str | None, length: int,
                                                                          cap: int | None, source: str | None) -> None:
    # release89: the cap was 16384 on 0.6, so no plan trained 65536 tokens, though both verl lines run more
    config = read_trinity_config(LONG_06.replace("max_model_len: 65536", f"max_model_len: {length}"), "long.yaml",
                                 {}, version)
    query = config_query(CATALOG, config, gpu="A100-80GB")
    assert (query.token_budget_cap, query.token_budget_cap_source) == (cap, source)


def test_a_cap_below_the_configs_budget_changes_the_plan_not_the_verdict_on_the_config(cli: Cli,
                                                                                       tmp_path: Path) -> None:
    assert _plans(_answer(H20_CONFIG, "h20", token_budget=16384)) == [
        (2, "Env + SP=2", 16384, 16384, 0.5555, 42.4), (2, "Env + Offload + SP=2", 16384, 16384, 1.111, 26.5)]
    config = tmp_path / "grpo.yaml"
    config.write_text(H20_CONFIG)
    status, out, err = cli("--from-config", str(config), "--gpu", "h20", "--token-budget", "16384")
    assert status == 0, err
    said = " ".join(out.split())
    assert ("grpo.yaml runs vanilla on 2 trainer GPUs at 32768 tokens (Env off, PYTORCH_CUDA_ALLOC_CONF unset in this "
            "shell): it trains (estimated: the memory model predicts 69.4 GiB per GPU, 15.7 GiB to spare).") in said


def test_the_a100_40gb_node_keeps_sp2_at_a_lowered_budget() -> None:
    kept = _answer(A100_CONFIG, "a100-40gb")
    assert _plans(kept) == [(4, "Env + Offload + SP=2", 23552, None, 0.5555, 35.1)]
    assert _plans(_answer(A100_CONFIG, "a100-40gb", token_budget="auto")) == _plans(kept)  # before: the same plan
    assert _plans(_answer(A100_CONFIG, "a100-40gb", sp=4)) == [(4, "Env + Offload + SP=4", 16384, None, 0.6565, 25.8)]
    # SP=4's room is its 16384 tokens per GPU, which SP=2 holds at the same memory for less
    assert _plans(_answer(A100_CONFIG, "a100-40gb", token_budget=16384)) == [
        (4, "Env + Offload + SP=2", 16384, 16384, 0.5555, 25.8)]


def test_the_command_says_whose_budget_a_plan_keeps(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "grpo.yaml"
    config.write_text(H20_CONFIG)
    status, out, err = cli("--from-config", str(config), "--gpu", "h20", "--top", "2")
    assert status == 0, err
    # the cap is the actor's and the ref's own 32768 (the trainer's is unset): named so (`ROLES_CAP`)
    said = " ".join(out.split())
    assert (f"token budget max_token_len_per_gpu = 32768 (capped by {ROLES_CAP}, below Trinity's "
            "default, ceil(2 x 32768 / SP 1) = 65536;") in said
    assert "ppo_max_token_len_per_gpu: 51200" not in out
    assert ("* trainer.max_token_len_per_gpu below Trinity's default ceil(2 x L / SP): capped by "
            f"{ROLES_CAP}, or less") in said
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--emit", "trinity")
    assert status == 0
    # its fragment names the one source too (lorarule_s81: it named either)
    comments = " ".join(line.strip().removeprefix("# ") for line in out.splitlines() if line.strip().startswith("#"))
    assert (f"below Trinity's default ceil(2 * 32768 / 1): capped by {ROLES_CAP}; at least ceil(32768 "
            "/ 1)") in comments
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--token-budget", "auto")
    assert status == 0 and "trainer.max_token_len_per_gpu: 51200\n" in out


def test_token_budget_n_plans_within_n_tokens_per_gpu(cli: Cli) -> None:
    status, out, err = cli("--model", "8B", "--gpu", "h20", "--len", "32768", "--token-budget", "8k")
    assert status == 0, err
    assert "plan           SP=4 on 4 of 6 GPUs (2 left for rollout)\n" in out
    assert "trainer.max_token_len_per_gpu: 8192\n" in out
    (capped,) = solver.plan("8B", gpu="h20", max_model_len=32768, token_budget=8192)
    (free,) = solver.plan("8B", gpu="h20", max_model_len=32768)
    assert capped.best is not None and free.best is not None
    assert (capped.best.gpus, capped.best.sp, capped.best.max_token_len_per_gpu, capped.best.token_budget_cap,
            capped.best.cost, capped.best.evidence) == (4, 4, 8192, 8192, 0.325, "inferred")
    assert (free.best.gpus, free.best.sp, free.best.max_token_len_per_gpu, free.best.token_budget_cap) == (
        6, 2, 32768, None)


def test_the_longest_length_holds_a_sequence_at_the_cap() -> None:
    (capped,) = solver.plan("8B", gpu="h20", budget_gpus=2, objective="max_len", token_budget=16384)
    assert capped.best is not None
    assert (capped.best.setting.label, capped.best.max_model_len, capped.best.max_token_len_per_gpu,
            capped.best.evidence) == ("Env + Offload + SP=2", 32768, 16384, "documented")
    (free,) = solver.plan("8B", gpu="h20", budget_gpus=2, objective="max_len")
    assert free.best is not None and free.best.max_model_len == 61440


@pytest.mark.parametrize(("given", "error"), [
    ("0", "solve: error: argument --token-budget: must be a whole number of tokens from 1 to 16777216, got 0\n"),
    ("abc", ("solve: error: argument --token-budget: takes default, auto or the most tokens per GPU (a whole number: "
             "32768 or 32k), got 'abc'\n")),
])
def test_a_bad_token_budget_is_one_line(cli: Cli, given: str, error: str) -> None:
    status, out, err = cli("--model", "8B", "--gpu", "h20", "--len", "32768", "--token-budget", given)
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] + "\n" == error


@pytest.mark.parametrize(("given", "error"), [
    (0, "token_budget must be a whole number from 1 to 16777216, got 0"),
    (True, ("token_budget takes default, auto or the most tokens per GPU (a whole number from 1 to 16777216), got "
            "True")),
    ("32kb", ("token_budget takes default, auto or the most tokens per GPU (a whole number from 1 to 16777216), got "
              "'32kb'")),  # 32k is read, as --token-budget 32k
])
def test_the_api_refuses_a_bad_token_budget(given: object, error: str) -> None:
    with pytest.raises(QueryError) as raised:
        solver.plan("8B", gpu="h20", max_model_len=32768, token_budget=given)  # type: ignore[arg-type]
    assert str(raised.value) == error


def test_a_cap_on_a_model_that_reads_no_budget_is_refused(cli: Cli) -> None:
    status, _, err = cli("--model-config", str(INTERNLM2), "--gpu", "h20", "--len", "32768",
                         "--token-budget", "16384")
    assert status == 2
    assert err.splitlines()[-1].endswith(
        "--token-budget 16384: internlm2-7b trains one padded sequence per micro-batch, which reads no token budget: "
        "leave --token-budget out")


def test_the_cluster_takes_modes_alone(cli: Cli) -> None:
    # review80c: solve map takes a cap too (tests/test_review80c_s80.py); solve cluster's budget is every job's
    status, _, err = cli("cluster", "--token-budget", "16384", "fleet.yaml")
    assert status == 2
    assert "argument --token-budget: takes default or auto, got '16384'" in err
