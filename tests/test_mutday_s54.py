"""Session 54's mutation tests: each pins a behaviour of the day's new lines that a mutant of them changed and no other
test noticed (the refused verdict, the rollout engines, the critic's and the ref's Trinity 0.5 checks, calibration's
warnings, maps)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from conftest import PADDED_051

from solver.query import ROLE_TOKEN_BUDGETS, TrinityConfig, role_budgets
from solver.results import RolloutEngines
from solver.tables import load_catalog
from solver.trinity import trinity_config_problems

ACTOR, REF, ROLLOUT = (".".join(path) for path in ROLE_TOKEN_BUDGETS)

Q14B_65K = ("algorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-14B\n  max_model_len: 65536\n"
            "  rope_scaling: {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960}\n"
            "cluster: {node_num: 1, gpu_per_node: 8}\n"
            "explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 2}}\n"
            "trainer:\n  trainer_strategy: fsdp2\n  ulysses_sequence_parallel_size: 4\n  trainer_config:\n"
            "    actor_rollout_ref:\n"
            "      actor: {fsdp_config: {param_offload: true, optimizer_offload: true, offload_policy: true}}\n"
            "      ref: {fsdp_config: {param_offload: true}}\n")
"""Qwen3-14B at 65536 tokens with Offload + SP=4 on 4 H20s without Env: it fits by estimate (cost 0.65), and the best
plan, with Env, costs a hair more (test_cli_trinity's verdict on a no-Env estimate)."""
OVERLONG = "  max_prompt_tokens: 4096\n  max_response_tokens: 65536\n"
"""A prompt and a response over the 65536 tokens, which Trinity refuses to load."""


def refused_14b(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`Q14B_65K` with `OVERLONG`: a config that fits in memory by estimate but that Trinity refuses."""
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    config = tmp_path / "trinity.yaml"
    config.write_text(Q14B_65K.replace("  rope_scaling", OVERLONG + "  rope_scaling"), encoding="utf-8")
    return config


def test_a_refused_config_that_fits_by_a_no_env_estimate_still_says_why_the_best_plan_costs_more(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    status, out, _ = cli("--from-config", str(refused_14b(tmp_path, monkeypatch)), "--gpu", "h20")
    said = " ".join(out.split())
    assert status == 0 and (
        "trinity.yaml runs Offload + SP=4 on 4 trainer GPUs at 65536 tokens (Env off, "
        "PYTORCH_CUDA_ALLOC_CONF unset in this shell): it fits in memory (estimated: the memory model predicts 59.5 "
        "GiB per GPU, 25.6 GiB to spare), but the config as written is refused (the problem that refuses it says "
        "why). The "
        "planner did not rank these settings: its estimates keep Env on (--no-env estimates without it). The plan "
        "below adds Env: its cost is higher (0.6565 against 0.65) by Env's ranking weight alone, not step time. "
        "refused: model.max_prompt_tokens 4096 + model.max_response_tokens 65536 = 69632, above "
        "model.max_model_len 65536") in said


def test_the_verdict_on_a_refused_config_that_fits_is_yellow_and_one_that_trains_without_problems_green(
        cli, coloured_screen, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    refused = refused_14b(tmp_path, monkeypatch)
    cli("--from-config", str(refused), "--gpu", "h20")
    clean = tmp_path / "clean.yaml"  # GRPO (no critic), Env on: no but: line at all
    clean.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\nalgorithm: {algorithm_type: grpo}\n"
                     "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 2}}\n"
                     "buffer: {batch_size: 32, train_batch_size: 96}\n", encoding="utf-8")
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    cli("--from-config", str(clean), "--gpu", "a100")
    verdicts = [line.split(": ", 1)[0].split(" runs ")[0] for line in coloured_screen.getvalue().splitlines()
                if " runs " in line and ".yaml runs " in line]
    assert verdicts == ["\x1b[33mtrinity.yaml", "\x1b[32mclean.yaml"]


def test_rollout_engines_fit_where_weights_and_one_sequence_take_exactly_half_of_the_room_and_have_a_positive_size():
    half = RolloutEngines(size=1, weights_gib=20.0, kv_cache_gib=10.0, room_gib=60.0, largest=False)
    assert half.fits and not half.model_copy(update={"kv_cache_gib": 10.5}).fits
    with pytest.raises(ValueError, match="size"):
        RolloutEngines(size=0, weights_gib=20.0, kv_cache_gib=10.0, room_gib=60.0, largest=False)


def test_trinity_05_raises_the_actors_and_the_refs_budgets_below_one_sequence_and_an_unset_rollout_takes_the_actors():
    both = {ACTOR: 32768, REF: 32768}
    # The actor's and the ref's, taken from a trainer's below their raise, are raised (budget90: the ref's was
    # not, though every release raises it, _adjust_token_len_if_needed); a rollout that sets its own keeps it.
    assert role_budgets(8192, {ROLLOUT: 10000}, both) == {ACTOR: 32768, REF: 32768, ROLLOUT: 10000}
    assert role_budgets(8192, {}, both) == {ACTOR: 32768, REF: 32768, ROLLOUT: 32768}
    # Each at its own raise (the ref's at its own SP); only the roles given are raised.
    assert role_budgets(8192, {REF: 4000}, {ACTOR: 32768, REF: 65536}) == {ACTOR: 32768, REF: 65536, ROLLOUT: 32768}
    assert role_budgets(8192, {}, {ACTOR: 32768}) == {ACTOR: 32768, REF: 8192, ROLLOUT: 32768}
    # raise05: one below the raise that holds a sequence is raised too (0.5.0's required_min is 2L); one at it is not.
    assert role_budgets(24576, {}, both) == {ACTOR: 32768, REF: 32768, ROLLOUT: 32768}
    assert role_budgets(32768, {}, both) == {ACTOR: 32768, REF: 32768, ROLLOUT: 32768}
    assert role_budgets(16384, {}, {ACTOR: 16384, REF: 16384}) == {ACTOR: 16384, REF: 16384, ROLLOUT: 16384}
    assert role_budgets(8192, {}) == {ACTOR: 8192, REF: 8192, ROLLOUT: 8192}


def test_the_budget_in_effect_under_trinity_05_counts_the_actors_raise_beside_a_rollouts_own_budget():
    config = TrinityConfig(model="Qwen3-8B", max_model_len=16384, max_token_len_per_gpu=8192,
                           role_token_budgets=((ROLLOUT, 10000),), version="0.5", old_log_prob_recompute=True)
    assert config.raised_actor_budget(16384) == 32768
    assert config.budget_in_effect(16384) == 32768  # the actor's, raised to 0.5.0's ceil(2L/SP)
    assert config.model_copy(update={"version": "0.6"}).budget_in_effect(16384) == 10000
    # checks90: where no old log-prob recompute runs (bypass_mode true, the default), the rollout's is read by none
    assert config.model_copy(update={"version": "0.6", "old_log_prob_recompute": False}).budget_in_effect(16384) == 8192
    assert config.model_copy(update={"version": None}).raised_actor_budget(16384) is None


def test_trinity_05_runs_a_ref_without_an_sp_of_its_own_at_the_trainers_and_judges_its_forward_in_the_actors_groups(
        cli, tmp_path: Path):
    # The actor sets SP 2, which Trinity 0.5 runs the trainer at; the ref sets none and takes the trainer's 4 (not the
    # actor's), so its 32768-token micro-batches over the actor's groups of 2 take 65536 tokens per GPU.
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\ntrainer:\n"
                      "  ulysses_sequence_parallel_size: 4\n  max_token_len_per_gpu: 32768\n  trainer_config:\n"
                      "    actor_rollout_ref:\n      actor: {ulysses_sequence_parallel_size: 2}\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--json", "--trinity-version", "0.5")
    current = json.loads(out)[0]["current"]
    assert (status, current["config_problem_codes"]) == (0, ["role-sp-differs", "token-budget-above-verdict"])
    assert current["config_problems"][1] == (
        "trainer.max_token_len_per_gpu 32768, which the ref takes, at the ref's SP 4: each of the ref's micro-batches "
        "holds 32768 x 4 tokens, but Trinity 0.5 runs its forward in the actor's SP groups of 2 GPUs, so each GPU "
        "takes 32768 x 4 / 2 = 65536 tokens there, more than the verdict's 32768: set the ref's SP to the actor's "
        "(--write does)")


def test_trinity_05_checks_a_trainer_sp_given_to_both_the_ref_and_the_critic_once_naming_both(cli, tmp_path: Path):
    # PPO (Trinity's default algorithm) trains a critic; the actor sets SP 2, so the trainer's 4 goes to the ref and
    # the critic alone, and 4 does not divide the 6 trainer GPUs: one line for both, and the config is refused (so
    # no line sizes the ref's micro-batches at SP 4: test_legacyref2_s85).
    config = tmp_path / "trinity.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 2}}\ntrainer:\n"
                      "  ulysses_sequence_parallel_size: 4\n  trainer_config:\n    actor_rollout_ref:\n"
                      "      actor: {ulysses_sequence_parallel_size: 2}\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--json", "--trinity-version", "0.5")
    current = json.loads(out)[0]["current"]
    assert (status, current["refused"], current["config_problem_codes"]) == (0, True, [
        "sp-divides-gpus", "role-sp-differs", "critic-trained", "token-budget-below-verdict"])  # raise05: the fill,
    # 16384 at the trainer's SP 4, 0.5.0 raises at the actor's SP 2 to 32768, the default, which a 0.5 verdict counts
    assert current["config_problems"][0] == (
        "trainer.ulysses_sequence_parallel_size: SP=4 does not divide 6 GPUs (the trainer's), and Trinity 0.5 gives it "
        "to the ref and the critic, whose SPs it checks as the actor's: it refuses the config")


def test_the_critics_keys_that_the_checks_read_are_known_and_a_misspelling_of_each_is_named(cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    text = ("algorithm: {algorithm_type: grpo}\n"
            "model: {model_path: Qwen/Qwen3-8B, critic_model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
            "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\ntrainer:\n"
            "  trainer_config:\n    critic: {ulysses_sequence_parallel_size: 1, ppo_max_token_len_per_gpu: 65536}\n")
    config.write_text(text, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--json", "--trinity-version", "0.5")
    assert (status, json.loads(out)[0]["current"]["config_problems"]) == (0, [])
    config.write_text(text.replace("critic_model_path", "critic_model_pth").replace(
        "ulysses_sequence_parallel_size: 1", "ulysses_sequence_parallel_sz: 1"), encoding="utf-8")
    codes, words = trinity_05_problems(cli, config)
    assert codes == ["misspelt-key-refused", "misspelt-key-refused"]  # 0.5 refuses a misspelt key anywhere
    assert [line.split(", and read as such")[0] for line in words] == [
        "model.critic_model_pth: did you mean critic_model_path? That key is unset",
        ("trainer.trainer_config.critic.ulysses_sequence_parallel_sz: did you mean ulysses_sequence_parallel_size? "
         "That key is unset")]
    config.write_text(text.replace("    critic:", "    critc:"), encoding="utf-8")  # the section itself misspelt
    codes, words = trinity_05_problems(cli, config)
    assert codes == ["misspelt-key-refused"] and words[0].startswith(
        "trainer.trainer_config.critc: did you mean critic? That key is unset")


SP3_ROLES = ("model: {{model_path: Qwen/Qwen3-8B, critic_model_path: {critic}, max_model_len: 32768}}\n"
             "cluster: {{node_num: 1, gpu_per_node: 8}}\nexplorer: {{rollout_model: {{engine_num: 2}}}}\ntrainer:\n"
             "  trainer_config:\n    actor_rollout_ref:\n      ref: {{ulysses_sequence_parallel_size: {ref_sp}}}\n"
             "    critic: {{ulysses_sequence_parallel_size: 3}}\n")
"""PPO on 6 trainer GPUs of Qwen3-8B (32 heads), the critic at SP 3 (which divides the GPUs, not the heads), the
ref at `ref_sp`, the critic's model `critic`."""


def trinity_05_problems(cli, config: Path) -> tuple[list[str], list[str]]:
    """The verdict's problem codes and words on `config` with --trinity-version 0.5 on A100-80GBs."""
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--json", "--trinity-version", "0.5")
    assert status == 0
    current = json.loads(out)[0]["current"]
    return current["config_problem_codes"], current["config_problems"]


@pytest.mark.parametrize("critic", ["Qwen/Qwen3-8B", "''"])
def test_trinity_05_checks_the_critics_sp_against_the_heads_where_its_model_is_the_actors(
        cli, tmp_path: Path, critic: str):
    config = tmp_path / "trinity.yaml"
    config.write_text(SP3_ROLES.format(critic=critic, ref_sp=1), encoding="utf-8")
    codes, words = trinity_05_problems(cli, config)
    assert (codes, words[0]) == (["sp-model-heads", "critic-trained"], (
        "trainer.trainer_config.critic.ulysses_sequence_parallel_size: SP=3 does not divide its 32 attention heads of "
        "Qwen3-8B, and Trinity 0.5 checks the critic's SP as the actor's: it refuses the config"))


def test_trinity_05_checks_the_refs_sp_against_the_heads_whatever_the_critics_model(cli, tmp_path: Path):
    # The critic's model is another (its heads unknown here): its SP 3 is not held to Qwen3-8B's heads (only said to
    # differ from the actor's, s83's criticsp); the ref's is.
    config = tmp_path / "trinity.yaml"
    config.write_text(SP3_ROLES.format(critic="Qwen/Qwen3-4B", ref_sp=3), encoding="utf-8")
    codes, words = trinity_05_problems(cli, config)
    assert "heads" not in words[1].split(": --write keeps it")[0]
    assert (codes, words[0]) == (["sp-model-heads", "role-sp-differs", "ref-sp-ungrouped-refused", "critic-trained"], (
        "trainer.trainer_config.actor_rollout_ref.ref.ulysses_sequence_parallel_size: SP=3 does not divide its 32 "
        "attention heads of Qwen3-8B, and Trinity 0.5 checks the ref's SP as the actor's: it refuses the config"))


def test_trinity_05_does_not_check_the_trainers_sp_again_where_the_actor_runs_at_it(cli, tmp_path: Path):
    # SP 4 on 6 trainer GPUs is the verdict's broken rule, the actor's; the ref and the critic take it, no second line.
    config = tmp_path / "trinity.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 2}}\n"
                      "trainer: {ulysses_sequence_parallel_size: 4}\n", encoding="utf-8")
    assert trinity_05_problems(cli, config)[0] == ["critic-trained"]
    problems = trinity_config_problems(yaml.safe_load("trainer: {ulysses_sequence_parallel_size: 4}\n"),
                                       load_catalog().model("Qwen3-8B"), 6, version="0.5")
    assert [(problem.code.value, problem.words) for problem in problems] == [
        ("sp-divides-gpus", "trainer.ulysses_sequence_parallel_size: SP=4 does not divide 6 GPUs (the trainer's)")]


def test_a_trainer_budget_below_one_sequence_is_judged_at_the_actors_sp_and_at_the_sp_the_ref_and_critic_take(
        cli, tmp_path: Path):
    # PPO; the actor sets SP 2, the trainer 4, which the ref and the critic take with the trainer's 6000 tokens.
    config = tmp_path / "trinity.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\ntrainer:\n"
                      "  ulysses_sequence_parallel_size: 4\n  max_token_len_per_gpu: 6000\n  trainer_config:\n"
                      "    actor_rollout_ref:\n      actor: {ulysses_sequence_parallel_size: 2}\n", encoding="utf-8")
    codes, words = trinity_05_problems(cli, config)
    roles = " (the ref's and the critic's, which set no budget of their own)"
    assert codes[:4] == ["token-budget-below-length"] * 4 and words[:4] == [
        ("trainer.max_token_len_per_gpu 6000 x SP 2 is below model.max_model_len 32768: Trinity 0.5 raises it to "
         "ceil(32768 / 2) = 16384 (Trinity 0.5.0 to its default, ceil(2 x 32768 / 2) = 32768)"),
        PADDED_051.format(budget="trainer.max_token_len_per_gpu", least=16384, sp=2, tokens=32768),
        (f"trainer.max_token_len_per_gpu 6000 x SP 4{roles} is "
         "below model.max_model_len 32768: Trinity 0.5 raises the ref's and the critic's to ceil(32768 / 4) = 8192 "
         "(Trinity 0.5.0 to its default, ceil(2 x 32768 / 4) = 16384)"),
        PADDED_051.format(budget=f"trainer.max_token_len_per_gpu{roles}", least=8192, sp=4, tokens=32768)]
    out = cli("--from-config", str(config), "--gpu", "a100-80g", "--json", "--trinity-version", "0.6")[1]
    assert json.loads(out)[0]["current"]["config_problems"][0] == (
        "trainer.max_token_len_per_gpu 6000 x SP 4 is below model.max_model_len 32768: verl 0.8 or later stops at the "
        "first sequence longer than that, and Trinity 0.6 on verl before 0.8 raises it to ceil(32768 / 4) = 8192")


REF_KEY = "trainer.trainer_config.actor_rollout_ref.ref.log_prob_max_token_len_per_gpu"


@pytest.mark.parametrize(("actor_sp", "ref_sp", "budget", "code", "line"), [
    # SP 3 is refused (the 4 GPUs, the heads): no ref runs at it, so none is sized there (test_legacyref2_s85); the
    # ref's own budget is compared as 0.5.0 raises it at the actor's SP (raise05).
    (2, 3, 32767, "token-budget-below-verdict", (
        f"{REF_KEY} 32767 is below Trinity's default ceil(2 x 32768 / 2) = 32768, which the tables measured: Trinity "
        "0.5.0 raises it to 32768, the verdict's budget (any budget below twice the length over its role's SP), as the "
        "verdict counts; 0.5.1 and 0.5.2 keep it, fewer tokens per GPU than the verdict assumes (so it is cautious; "
        "each step takes more micro-batches)")),
    # A budget that holds one sequence exactly at the ref's SP (8192 x 4 = 32768) is judged; fewer tokens: cautious.
    (2, 4, 8192, "token-budget-below-verdict", (
        f"{REF_KEY} 8192, at the ref's SP 4: each of the ref's micro-batches holds 8192 x 4 tokens, but Trinity 0.5 "
        "runs its forward in the actor's SP groups of 2 GPUs, so each GPU takes 8192 x 4 / 2 = 16384 tokens there, "
        "fewer than the verdict's 32768 (so it is cautious): set the ref's SP to the actor's (--write does)")),
    # An actor at SP 1 builds no SP groups: the ref's budget is compared as it is.
    (1, 2, 32768, "token-budget-below-verdict", (
        f"{REF_KEY} 32768 is below Trinity's default ceil(2 x 32768 / 1) = 65536, which the tables measured: fewer "
        "tokens per GPU than the verdict assumes (so it is cautious; each step takes more micro-batches)")),
])
def test_trinity_05_judges_a_ref_above_the_actors_sp_per_gpu_of_the_actors_groups(
        cli, tmp_path: Path, actor_sp: int, ref_sp: int, budget: int, code: str, line: str):
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\ntrainer:\n"
                      f"  ulysses_sequence_parallel_size: {actor_sp}\n  trainer_config:\n    actor_rollout_ref:\n"
                      f"      ref: {{ulysses_sequence_parallel_size: {ref_sp}, "
                      f"log_prob_max_token_len_per_gpu: {budget}}}\n", encoding="utf-8")
    codes, words = trinity_05_problems(cli, config)
    assert (codes[-1], words[-1]) == (code, line)


def test_trinity_05_judges_the_trainers_budget_at_the_refs_sp_only_where_the_ref_sets_none_of_its_own(
        cli, tmp_path: Path):
    # 6000 x SP 2 holds no sequence (the actor's line); the ref at SP 4 has its own 8192, so 6000 x 4 is no line.
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\ntrainer:\n"
                      "  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 6000\n  trainer_config:\n"
                      "    actor_rollout_ref:\n"
                      "      ref: {ulysses_sequence_parallel_size: 4, log_prob_max_token_len_per_gpu: 8192}\n",
                      encoding="utf-8")
    codes, words = trinity_05_problems(cli, config)
    assert codes == ["token-budget-below-length"] * 2 + ["role-sp-differs", "token-budget-below-verdict"]
    assert words[0].startswith("trainer.max_token_len_per_gpu 6000 x SP 2 is below model.max_model_len 32768")


ROLES_AT_SP2 = ("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
                "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\ntrainer:\n"
                "  ulysses_sequence_parallel_size: 2\n  trainer_config:\n    actor_rollout_ref:\n")
"""GRPO for Qwen3-8B at 32768 tokens on 4 trainer GPUs at SP 2; a role's own keys follow."""


@pytest.mark.parametrize(("role", "codes", "first"), [
    # A ref below the actor's SP: no line on the actor's groups (its budget is the verdict's).
    ("ref: {ulysses_sequence_parallel_size: 1, log_prob_max_token_len_per_gpu: 32768}", ["role-sp-differs"],
     "trainer.trainer_config.actor_rollout_ref.ref.ulysses_sequence_parallel_size 1 is not"),
    # A ref budget that holds no sequence at the ref's SP: the line that says so, none on the actor's groups.
    ("ref: {ulysses_sequence_parallel_size: 4, log_prob_max_token_len_per_gpu: 4096}",
     ["token-budget-below-length", "token-budget-below-length", "role-sp-differs"],
     (f"{REF_KEY} 4096 x SP 4 (the ref's) is below model.max_model_len 32768: Trinity 0.5 raises it to "
      "ceil(32768 / 4) = 8192 (Trinity 0.5.0 to its default, ceil(2 x 32768 / 4) = 16384)")),
    # The rollout's, which Trinity 0.5 never raises, in 0.5's words, where the recompute that reads it runs.
    ("rollout: {log_prob_max_token_len_per_gpu: 8192}\n    algorithm: {rollout_correction: {bypass_mode: false}}",
     ["token-budget-below-length"],
     ("trainer.trainer_config.actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu 8192 x SP 2 is below "
      "model.max_model_len 32768: Trinity 0.5 never raises it, and in the actor's log-prob recompute its verl (before "
      "0.8) stops at the first step whose batch holds a sequence longer than that (Trinity 0.5.2) or is padded wider "
      "than that, to its longest prompt plus its longest response (0.5.0 and 0.5.1)")),
])
def test_trinity_05_words_on_a_roles_own_sp_and_budget(cli, tmp_path: Path, role: str, codes: list[str],
                                                       first: str):
    config = tmp_path / "trinity.yaml"
    config.write_text(f"{ROLES_AT_SP2}      {role}\n", encoding="utf-8")
    found, words = trinity_05_problems(cli, config)
    assert found == codes and words[0].startswith(first)


def test_trinity_05_says_no_word_of_trinity_06_on_a_role_budget_that_writes_out_what_trinity_gives_it(
        cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    config.write_text(f"{ROLES_AT_SP2}      ref: {{log_prob_max_token_len_per_gpu: 32768}}\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--json", "--trinity-version", "0.5",
                         "--len", "16k")
    assert (status, json.loads(out)[0]["current"]["config_problems"]) == (0, [
        (f"{REF_KEY} 32768: what Trinity gives it unset at the config's own 32768 tokens, so read as unset at 16384 "
         "tokens too (the verdict is at 16384 tokens per GPU); as written, Trinity keeps 32768 there, more tokens per "
         "GPU than the verdict assumes; applying the plan leaves it at its budget")])


def test_a_gpu_name_as_close_to_a_refused_gpu_type_as_to_a_catalogue_one_is_no_guess():
    catalog = load_catalog()
    # RTX-6000 extends to RTX-6000-Ada but also ends Quadro-RTX-6000, a GPU type without bf16: no guess.
    assert catalog.meant_gpu_type("RTX-6000") is None
    assert (catalog.meant_gpu_type("A1OO-80GB"), catalog.meant_gpu_type("h1000")) == ("A100-80GB", "H100-80GB")
    assert catalog.meant_gpu_type("a100") is None  # the catalogue's own (an alias)
