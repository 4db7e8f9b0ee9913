"""A PPO critic's update counted at the SP a config gives it (session 84, criticspmem).

``--from-config``'s verdict counted the critic at the trainer's SP, where Trinity with verl before 0.8 runs it at
``trainer.trainer_config.critic.ulysses_sequence_parallel_size`` (raising its token budget to ``ceil(L/SP)``) and 0.6
on verl 0.8 or later at ``critic.fsdp.ulysses_sequence_parallel_size``: Qwen3-8B at 131072 tokens on 8 H20s at SP 4
with Env and its own budget 32768 "trained" (the critic's update 50.2 GiB at SP 4), while its critic at SP 1 takes
131072 tokens per GPU, 103.9 GiB of 87.9 usable. The verdict on the config as written now counts the critic's update at
each SP the release may run it at (``current.critic_sps``) and takes the larger need; the ``role-sp-differs`` lines
say so, and how much. (At Trinity's default budget, 65536, the actor alone takes 119.5 GiB there: no change to show.)"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from test_criticbudget_s82 import BASE

import solver
from solver.memory import (
    CRITIC_PASS_TERMS,
    actor_held_at_critic_pass,
    breakdown,
    calibrated_terms,
    critic_states_gib,
    token_floor_gib,
)
from solver.tables import Coefficients, CriticStates
from solver.tables.loaders import load_memory_model
from solver.tables.schema import Setting

Cli = Callable[..., tuple[int, str, str]]
CONFIG = BASE.replace("max_prompt_tokens: 2048, max_response_tokens: 30720, max_model_len: 32768}", (
    "max_prompt_tokens: 4096, max_response_tokens: 126976, max_model_len: 131072,\n        rope_scaling: "
    "{rope_type: yarn, factor: 3.2, original_max_position_embeddings: 40960, rope_theta: 1000000}}")).replace(
    "node_num: 1", "node_num: 2").replace("engine_num: 2", "engine_num: 8").replace(
    "ulysses_sequence_parallel_size: 2", "ulysses_sequence_parallel_size: 4")
"""test_criticbudget_s82's PPO on Qwen3-8B at 131072 tokens, 8 trainer H20s at SP 4 (8 rollout GPUs; Env, the
critic resident), its own budget 32768 = ``ceil(131072 / 4)``, the least that holds a sequence at SP 4."""
SP_1 = "    critic: {ulysses_sequence_parallel_size: 1}\n"
"""The critic's own SP 1: Trinity with verl before 0.8 raises its budget to ``ceil(131072 / 1) = 131072``."""
SP_KEY = "trainer.trainer_config.critic.ulysses_sequence_parallel_size"


@pytest.fixture(autouse=True)
def _env_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")


def _current(cli: Cli, tmp_path: Path, text: str, *options: str) -> tuple[int, dict[str, object]]:
    """``--check --json``'s exit status and ``current`` for `text` on H20s with `options`."""
    (tmp_path / "c.yaml").write_text(text)
    status, out, err = cli("--from-config", str(tmp_path / "c.yaml"), "--gpu", "h20", "--check", "--json", *options)
    assert status in (0, 1), err
    return status, dict(json.loads(out)[0]["current"])


def _sp_lines(current: dict[str, object]) -> list[str]:
    """The ``role-sp-differs`` lines of `current`."""
    pairs = zip(current["config_problem_codes"], current["config_problems"], strict=True)  # type: ignore[call-overload]
    return [words for code, words in pairs if code == "role-sp-differs"]


def _memory() -> tuple[solver.Catalog, Coefficients]:
    """The catalogue and the memory model's coefficients."""
    return solver.load_catalog(), load_memory_model().coefficients


@pytest.mark.parametrize("version", [(), ("--trinity-version", "0.6")])
def test_a_critic_at_its_own_sp_1_no_longer_fits(cli: Cli, tmp_path: Path, version: tuple[str, ...]) -> None:
    status, current = _current(cli, tmp_path, CONFIG + SP_1, *version)
    # before: trains (estimated: 75.0 GiB for the actor's pass and 50.2 for the critic's own update at SP 4)
    assert (status, current["trains"], current["plan"], current["critic_sps"]) == (1, False, None, [1, 4])
    assert current["predicted"] == [75.0, 87.9]
    assert current["predicted_critic_pass"] == [103.86, 87.85]
    assert ("says it trains (the memory model predicts 75.0 GiB per GPU, of 87.9 usable, but 103.86 GiB at the PPO "
            "critic's own update, more than the 87.85 usable)") in str(current["verdict"])
    (line,) = _sp_lines(current)
    assert line.startswith(f"{SP_KEY} 1 is not ")
    assert ("the verdict and its plan count the critic's update at the one of SP 1 and SP 4 that needs the most (SP "
            "1, 103.9 GiB per H20-96GB GPU, of 87.9 usable), its token budget raised to hold a sequence there, and "
            "the planner's plans at SP 4: set them alike (--write does)") in line


def test_with_trinity_05_the_budget_counts_as_050_raises_it_and_the_critic_at_sp_1(cli: Cli, tmp_path: Path) -> None:
    # raise05: the config's 32768 x SP 4 holds one 131072-token sequence, not two: Trinity 0.5.0 raises it to its
    # default, 65536, where the H20 table for 4 GPUs says '-' (the actor alone takes 119.5 GiB there), so the 0.5
    # verdict is the table's; the critic, run at its own SP 1 alone, is still counted there. raise91: its budget as
    # 0.5.0 raises it there too, the trainer's 32768 it takes to ceil(2 x 131072 / 1) = 262144 (before: one sequence,
    # 131072 tokens, 103.9 GiB)
    status, current = _current(cli, tmp_path, CONFIG + SP_1, "--trinity-version", "0.5")
    assert (status, current["trains"], current["plan"], current["critic_sps"]) == (1, False, None, [1])
    assert (current["predicted"], current["max_token_len_per_gpu"]) == (None, None)
    assert "the H20-96GB table for 4 GPUs says '-' at 133120, so Env + SP=4 ran out" in str(current["verdict"])
    (line,) = _sp_lines(current)
    assert line.endswith("Trinity 0.5 runs the critic at SP 1, raising its token budget to hold a sequence there "
                         "(0.5.0 two); the verdict and its plan count the critic's update at SP 1 (177.6 GiB per "
                         "H20-96GB GPU, of 87.9 usable), its token budget raised as Trinity 0.5.0 raises it, to hold "
                         "two sequences there, and the planner's plans at SP 4: set them alike (--write does)")
    catalog, coefficients = _memory()
    raised = breakdown(catalog.model("Qwen3-8B"), catalog.gpu("h20").memory_gib, 8, Setting(env=True, sp=4), 131072,
                       coefficients, 0.0, 32768, critic="resident", critic_sp=1, critic_raised=262144)
    assert round(raised.critic_pass_gib, 1) == 177.6
    # with the critic's dynamic batch sizes off verl reads no budget of its: one sequence there, as before; raise91c:
    # the words say so (before: "its token budget raised to hold a sequence there", though nothing reads one)
    off = SP_1.replace("size: 1}", "size: 1, use_dynamic_bsz: false, ppo_micro_batch_size_per_gpu: 1}")
    (line,) = _sp_lines(_current(cli, tmp_path, CONFIG + off, "--trinity-version", "0.5")[1])
    assert ("the verdict and its plan count the critic's update at SP 1 (103.9 GiB per H20-96GB GPU, of 87.9 usable), "
            "one sequence per micro-batch there (its passes read no token budget), and the planner's plans at "
            "SP 4") in line


def test_the_figure_is_the_breakdowns_terms_at_sp_1_and_131072_tokens() -> None:
    catalog, coefficients = _memory()
    model, memory = catalog.model("Qwen3-8B"), catalog.gpu("h20").memory_gib
    counted = breakdown(model, memory, 8, Setting(env=True, sp=4), 131072, coefficients, 0.0, 32768,
                        critic="resident", critic_sp=1)
    terms = calibrated_terms(model, 8, Setting(env=True, sp=1), 131072, coefficients)
    actor = terms["states"] * actor_held_at_critic_pass(model, 8)  # 15.70 x 12/16 = 11.77
    others = sum(terms[term] for term in CRITIC_PASS_TERMS if term not in ("states", "checkpoints", "recompute"))
    per_token = max(terms["checkpoints"] + terms["recompute"], token_floor_gib(model, 131072, logits=False))  # 73.75
    critic = critic_states_gib(model, 8)  # 16 bytes x 7.57e9 / 8 GPUs = 14.10 GiB
    assert (round(actor, 2), round(others, 2), round(per_token, 2), round(critic, 2)) == (11.77, 4.23, 73.75, 14.1)
    assert counted.critic_pass_gib == pytest.approx(actor + others + per_token + critic, abs=1e-9)
    figures = (round(counted.critic_pass_gib, 1), counted.tokens_per_gpu, round(counted.total_gib, 1))
    assert figures == (103.9, 32768, 75.0)
    assert not counted.fits and counted.critic_pass_binds


def test_at_sp_2_the_figure_is_unchanged_at_the_default_budget_and_fits_at_32768(cli: Cli, tmp_path: Path) -> None:
    catalog, coefficients = _memory()
    model, memory, setting = catalog.model("Qwen3-8B"), catalog.gpu("h20").memory_gib, Setting(env=True, sp=4)
    plain = breakdown(model, memory, 8, setting, 131072, coefficients, critic="resident")
    at_2 = breakdown(model, memory, 8, setting, 131072, coefficients, critic="resident",
                     critic_sp=2)
    # 65536 = ceil(131072 / 2): the budget holds a sequence at SP 2, so the critic's tokens are the actor's
    assert at_2 == plain and round(plain.critic_pass_gib, 1) == 70.2
    status, current = _current(cli, tmp_path, CONFIG + SP_1.replace("size: 1", "size: 2"))
    # at 32768 its budget is raised to 65536 = ceil(131072 / 2): 70.2 GiB, which fits
    assert (status, current["trains"], current["critic_sps"]) == (0, True, [2, 4])
    (line,) = _sp_lines(current)
    assert "(SP 2, 70.2 GiB per H20-96GB GPU, of 87.9 usable)" in line


def test_with_estimates_off_the_critic_at_its_own_sp_is_said_counted_at_the_trainers(cli: Cli, tmp_path: Path) -> None:
    # s91 (coverage91): with --no-estimate nothing estimates the critic's update at its own SP 1; the verdict (the
    # tables') and the plans count it at the trainer's SP 4, and its line says so, not "the one that needs the most"
    status, current = _current(cli, tmp_path, CONFIG + SP_1, "--no-estimate")
    assert (status, current["trains"], current["critic_sps"], current["predicted"]) == (1, False, [1, 4], None)
    (line,) = _sp_lines(current)
    assert line.endswith("Trinity 0.6 on verl 0.8 or later ignores the key and runs the critic at SP 4; the verdict "
                         "and the plans count the critic at SP 4: set them alike (--write does)")


@pytest.mark.parametrize("critic", ["", "    critic: {ulysses_sequence_parallel_size: 4}\n"])
def test_a_config_without_its_own_critic_sp_is_judged_as_before(cli: Cli, tmp_path: Path, critic: str) -> None:
    # before and now (main's words): it trains, the critic counted at SP 4
    status, current = _current(cli, tmp_path, CONFIG + critic)
    assert (status, current["trains"], current["critic_sps"], _sp_lines(current)) == (0, True, [], [])
    assert "predicts 75.0 GiB per GPU for the actor's pass and 50.2 for the critic's own update" in str(
        current["verdict"])


@pytest.mark.parametrize(("setting", "lora_rank", "critic"), [
    (Setting(env=True, sp=4), 0, "resident"), (Setting(offload=True, sp=2), 0, "reloaded"),
    (Setting(env=True, sp=8), 32, "offloaded")])
def test_the_critic_at_the_trainers_sp_is_bit_identical(setting: Setting, lora_rank: int,
                                                        critic: CriticStates) -> None:
    catalog, coefficients = _memory()
    model, memory = catalog.model("Qwen3-8B"), catalog.gpu("h20").memory_gib
    plain = breakdown(model, memory, 8, setting, 65536, coefficients, lora_rank=lora_rank,
                      critic=critic)
    assert breakdown(model, memory, 8, setting, 65536, coefficients, lora_rank=lora_rank,
                     critic=critic, critic_sp=setting.sp) == plain


def test_a_critic_of_another_model_is_counted_at_its_own_sp(cli: Cli, tmp_path: Path) -> None:
    # its heads are unknown, so no release refuses its SP for them: counted at SP 1 as a critic of Qwen3-8B's shape
    text = (CONFIG + SP_1).replace("max_model_len: 131072,",
                                   "max_model_len: 131072, critic_model_path: /models/critic,")
    status, current = _current(cli, tmp_path, text)
    assert (status, current["trains"], current["critic_sps"]) == (1, False, [1, 4])
    assert current["predicted_critic_pass"] == [103.86, 87.85]
    (line,) = _sp_lines(current)
    assert line.endswith("(SP 1, 103.9 GiB per H20-96GB GPU, of 87.9 usable), its token budget raised to hold a "
                         "sequence there, and the planner's plans at SP 4: --write keeps it: the critic is "
                         "model.critic_model_path's, whose heads rft-solver does not know")


def test_a_critic_sp_the_release_refuses_is_not_counted(cli: Cli, tmp_path: Path) -> None:
    # SP 3 does not divide 8 GPUs: Trinity with verl before 0.8 refuses the config, 0.6 on verl 0.8 runs it at SP 4
    status, current = _current(cli, tmp_path, CONFIG + SP_1.replace("size: 1", "size: 3"), "--trinity-version", "0.6")
    assert (status, current["trains"], current["critic_sps"]) == (0, True, [])
    (line,) = _sp_lines(current)
    assert line.endswith("the verdict and the plans count the critic at SP 4: set them alike (--write does)")


def test_with_05_a_critic_at_the_trainers_sp_is_counted_at_050s_raise_of_the_budget_it_takes(
        cli: Cli, tmp_path: Path) -> None:
    # raise91b: the other passes run with dynamic batch sizes off (trainer.use_dynamic_bsz false), one sequence each,
    # so the 0.5 verdict is at 32768; the critic turns them back on and takes the trainer's 32768, which 0.5.0 raises
    # at its SP 4 to ceil(2 x 131072 / 4) = 65536 (common/verl_config.py:595). Its states over groups of 4 GPUs,
    # offloaded but for its update: before, counted at 32768 (64.3 GiB) it trained at margin 0.1
    status, current = _current(cli, tmp_path, RAISED_OFF + GROUPED_CRITIC, "--trinity-version", "0.5", "--margin",
                               "0.1")
    assert (status, current["trains"], current["critic_sps"]) == (1, False, [])
    assert (current["predicted"], current["predicted_critic_pass"]) == ([64.4, 79.9], [84.31, 79.87])
    assert _raised_lines(current) == [(
        "the critic's passes read trainer.max_token_len_per_gpu 32768 at the trainer's SP (it sets no training budget "
        "of its own), which Trinity 0.5.0 raises to ceil(2 x 131072 / 4) = 65536 at the critic's SP (0.5.1 and 0.5.2 "
        "keep it; the most is counted), above the verdict's 32768 tokens per GPU: the verdict counts the critic's own "
        "update there (at 65536, 84.3 GiB per H20-96GB GPU, of 79.9 usable)")]
    # its passes with dynamic batch sizes off read no budget: counted at the verdict's, no line
    rows = GROUPED_CRITIC.replace("use_dynamic_bsz: true",
                                  "use_dynamic_bsz: false, forward_micro_batch_size_per_gpu: 1")
    status, current = _current(cli, tmp_path, RAISED_OFF + rows, "--trinity-version", "0.5", "--margin", "0.1")
    assert (status, current["trains"]) == (0, True)
    assert "critic-budget-raised" not in current["config_problem_codes"]  # type: ignore[operator]


def _raised_lines(current: dict[str, object]) -> list[str]:
    """The ``critic-budget-raised`` lines of `current`."""
    pairs = zip(current["config_problem_codes"], current["config_problems"], strict=True)  # type: ignore[call-overload]
    return [words for code, words in pairs if code == "critic-budget-raised"]


RAISED_OFF = CONFIG.replace("  max_token_len_per_gpu: 32768",
                            "  max_token_len_per_gpu: 32768\n  use_dynamic_bsz: false")
"""CONFIG with the trainer's dynamic batch sizes off: every pass but a critic that turns them back on reads no budget,
so the 0.5 verdict is at one sequence, 32768 tokens per GPU."""
GROUPED_CRITIC = ("    critic: {use_dynamic_bsz: true, model: {fsdp_config: {fsdp_size: 4, param_offload: true, "
                  "optimizer_offload: true}}}\n")
"""The critic's dynamic batch sizes on, its states over groups of 4 GPUs, offloaded but for its own update."""


@pytest.mark.parametrize(("budget", "tokens", "said", "need"), [
    ("", 65536, (" 65536 at the trainer's SP (it sets no training budget of its own), Trinity's fill of the unset "
                 "key (ceil(2 x 131072 / 4)),"), "84.3 GiB per H20-96GB GPU, of 88.7 usable"),
    ("100000", 100000, " 100000 at the trainer's SP (it sets no training budget of its own)",
     "105.4 GiB per H20-96GB GPU, of 88.7 usable")])
def test_with_05_the_trainers_budget_the_critic_reads_is_counted_at_the_more_of_it_and_050s_raise(
        cli: Cli, tmp_path: Path, budget: str, tokens: int, said: str, need: str) -> None:
    # raise91c: the trainer's budget unset (Trinity's fill, 65536) or 100000, at or above 0.5.0's raise: the critic
    # reads it as it is, above the verdict's 32768. Before, counted at 32768 (64.3 GiB) both trained, with no line
    text = RAISED_OFF.replace("  max_token_len_per_gpu: 32768\n", f"  max_token_len_per_gpu: {budget}\n" if budget
                              else "")
    status, current = _current(cli, tmp_path, text + GROUPED_CRITIC, "--trinity-version", "0.5", "--margin", "0")
    assert _raised_lines(current) == [(
        f"the critic's passes read trainer.max_token_len_per_gpu{said} above the verdict's 32768 tokens per GPU: the "
        f"verdict counts the critic's own update there (at {tokens}, {need})")]
    assert (status, current["trains"]) == ((0, True) if tokens == 65536 else (1, False))
    if tokens == 100000:
        assert current["predicted_critic_pass"] == [105.4, 88.74]
    else:  # raise91c: the verdict's sentence gives the critic's figure it counts (before: 64.3, 24.3 GiB to spare)
        assert ("predicts 64.4 GiB per GPU for the actor's pass and 84.3 for the critic's own update, 4.4 GiB to "
                "spare at the critic's own update, the tighter peak") in str(current["verdict"])
        assert current["plan"]["critic_pass_gb"] == 84.31  # type: ignore[index]


def test_with_dynamic_batch_sizes_on_a_trainers_budget_above_the_default_is_counted_where_the_critic_reads_it(
        cli: Cli, tmp_path: Path) -> None:
    # checks92: PPO on Qwen3-8B at 8192 tokens on 8 H100s, every pass reading a budget, the trainer's 32768 above the
    # default ceil(2 x 8192 / 1) = 16384: a line of its own, the verdict at the default and not vouched for. A
    # critic with no budget of its own takes the trainer's (set_if_none, trainer/verl/verl_config.py:599-601 in
    # 0.5.2; frozen to it on verl 0.8, trainer/verl/config.py:462 in 0.6.0), yet was counted at the verdict's 16384
    # (with Env, 39.3 GiB): now at 32768, as it runs, with the critic-budget-raised line that says so.
    (tmp_path / "c.yaml").write_text(
        "algorithm: {algorithm_type: ppo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\n"
        "cluster: {node_num: 1, gpu_per_node: 8}\nmode: train\nbuffer: {train_batch_size: 64}\n"
        "trainer: {trainer_strategy: fsdp, max_token_len_per_gpu: 32768}\n")
    status, out, _ = cli("--from-config", str(tmp_path / "c.yaml"), "--gpu", "h100", "--check", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["trains"], current["unread_keys"]) == (1, False, [])
    assert _raised_lines(current) == [(
        "the critic's passes read trainer.max_token_len_per_gpu 32768 at the trainer's SP (it sets no training budget "
        "of its own) above the verdict's 16384 tokens per GPU: the verdict counts the critic's own update there (at "
        "32768, 48.5 GiB per H100-80GB GPU, of 73.2 usable)")]
    assert "51.9 GiB per GPU for the actor's pass and 48.5 for the critic's own update" in current["verdict"]


@pytest.mark.parametrize("critic_sp", [4, 2])
def test_with_05_a_critics_own_budget_050_raises_above_the_verdict_is_counted_there(
        cli: Cli, tmp_path: Path, critic_sp: int) -> None:
    # raise91c: its own 40000, which 0.5.0 raises at its SP to ceil(2 x 131072 / SP), was said above the verdict
    # (critic-budget-above-verdict, "counts it at the verdict's") yet not counted there, and the config not vouched
    # for (exit 1); now it is counted at the raise, as a critic that takes the trainer's budget is
    own = GROUPED_CRITIC.replace("use_dynamic_bsz: true,", "use_dynamic_bsz: true, ppo_max_token_len_per_gpu: 40000,")
    if critic_sp == 4:  # at the trainer's SP, whose other passes read none: 65536, 84.3 GiB, which fits
        status, current = _current(cli, tmp_path, RAISED_OFF + own, "--trinity-version", "0.5", "--margin", "0")
        assert (status, current["trains"], current["critic_sps"]) == (0, True, [])
        tokens, judged, kept, need = 65536, 32768, "keep it", "84.3 GiB per H20-96GB GPU, of 88.7 usable"
        assert current["plan"]["critic_pass_gb"] == 84.31  # type: ignore[index]
    else:  # at its own SP 2, beside the actor's 65536: ceil(2 x 131072 / 2) = 131072, as its SP line counts it (the
        # H20 table for 4 GPUs says the actor's Env + SP=4 ran out of memory)
        at_2 = own.replace("critic: {", "critic: {ulysses_sequence_parallel_size: 2, ")
        status, current = _current(cli, tmp_path, CONFIG + at_2, "--trinity-version", "0.5", "--margin", "0")
        assert (status, current["trains"], current["critic_sps"]) == (1, False, [2])
        tokens, judged, kept = 131072, 65536, "to ceil(131072 / 2) = 65536"
        need = "124.4 GiB per H20-96GB GPU, of 88.7 usable"
    assert "critic-budget-above-verdict" not in current["config_problem_codes"]  # type: ignore[operator]
    assert _raised_lines(current) == [(
        f"trainer.trainer_config.critic.ppo_max_token_len_per_gpu 40000, which Trinity 0.5.0 raises to ceil(2 x 131072 "
        f"/ {critic_sp}) = {tokens} at the critic's SP (0.5.1 and 0.5.2 {kept}; the most is counted), is above the "
        f"verdict's {judged} tokens per GPU: the verdict counts the critic's own update there (at {tokens}, {need}); "
        "--write sets it to the plan's")]


def test_a_critic_reading_the_trainers_budget_above_the_verdict_is_counted_there_raised_or_not(
        cli: Cli, tmp_path: Path) -> None:
    # mutants55: the passes but the critic's count-filled (the 0.5 verdict at 32768), the critic reading the trainer's
    # 65536, Trinity's default, which no release raises: counted at 65536 (it said "trains", its update at 32768)
    off, critic = RAISED_OFF.replace("len_per_gpu: 32768", "len_per_gpu: 65536"), GROUPED_CRITIC
    status, current = _current(cli, tmp_path, off + critic, "--trinity-version", "0.5", "--margin", "0.1")
    assert (status, current["trains"], current["predicted_critic_pass"]) == (1, False, [84.31, 79.87])
    assert _raised_lines(current) == [(
        "the critic's passes read trainer.max_token_len_per_gpu 65536 at the trainer's SP (it sets no training budget "
        "of its own) above the verdict's 32768 tokens per GPU: the verdict counts the critic's own update there (at "
        "65536, 84.3 GiB per H20-96GB GPU, of 79.9 usable)")]
    # a critic with a budget of its own, or at an SP of its own, reads not the trainer's: no line of the trainer's
    # budget (its own 32768, which 0.5.0 raises, has a line of its own: raise91c's test above)
    for own in ("ppo_max_token_len_per_gpu: 32768, ", "ulysses_sequence_parallel_size: 2, "):
        _, current = _current(cli, tmp_path, off + critic.replace("use_dynamic_bsz: true, ", f"use_dynamic_bsz: "
                                                                  f"true, {own}"), "--trinity-version", "0.5")
        assert not [words for words in _raised_lines(current) if "trainer.max_token_len_per_gpu" in words]


@pytest.mark.parametrize("budget", [200000, 131072])
def test_a_critics_own_budget_above_050s_raise_at_its_own_sp_is_said_counted_at_the_raise(
        cli: Cli, tmp_path: Path, budget: int) -> None:
    # lastread91: its own 200000, above 0.5.0's raise at its SP 2 (131072), is not counted (the verdict counts its
    # update at that raise, `_critic_tokens`), yet its critic-budget-above-verdict line said it was counted "at the
    # verdict's 65536"; at the raise, 131072, which the verdict counts, it had that line too
    own = GROUPED_CRITIC.replace("use_dynamic_bsz: true,",
                                 f"use_dynamic_bsz: true, ppo_max_token_len_per_gpu: {budget},")
    at_2 = own.replace("critic: {", "critic: {ulysses_sequence_parallel_size: 2, ")
    status, current = _current(cli, tmp_path, CONFIG + at_2, "--trinity-version", "0.5", "--margin", "0")
    assert (status, current["trains"], current["critic_sps"], _raised_lines(current)) == (1, False, [2], [])
    pairs = zip(current["config_problem_codes"], current["config_problems"], strict=True)  # type: ignore[call-overload]
    said = [] if budget == 131072 else [(
        "trainer.trainer_config.critic.ppo_max_token_len_per_gpu 200000 is above the verdict's 65536 tokens per GPU: "
        "on verl before 0.8 the critic's own update takes 200000 tokens per GPU, where the memory model counts it at "
        "131072, the raise of a smaller budget at the critic's SP 2 (at 200000, 166.6 GiB per H20-96GB GPU, of 88.7 "
        "usable); --write sets it to the plan's")]
    assert [words for code, words in pairs if code == "critic-budget-above-verdict"] == said


def test_a_critic_reading_the_trainers_budget_at_the_verdicts_is_no_line(cli: Cli, tmp_path: Path) -> None:
    # smalls91b (mutant a2 of mutants55): with 0.5 the trainer's 65536, 0.5.0's raise ceil(2 x 131072 / 4) itself, is
    # the verdict's budget too (it runs out of memory there, by the tables): the critic reads no more than the verdict
    # counts, so no line says it is above it
    status, current = _current(cli, tmp_path, CONFIG.replace("max_token_len_per_gpu: 32768", "max_token_len_per_gpu: "
                                                             "65536"), "--trinity-version", "0.5", "--margin", "0.1")
    assert (status, current["trains"]) == (1, False)
    assert _raised_lines(current) == []


def test_a_critics_one_sequence_at_its_own_sp_at_the_verdicts_budget_is_counted_as_the_verdicts(
        cli: Cli, tmp_path: Path) -> None:
    # mutants59: at its own SP 2 one sequence of 131072 tokens is 65536 per GPU, the verdict's budget itself: counted
    # there, named as the verdict's (not as one sequence at the critic's SP, which holds no more)
    critic = GROUPED_CRITIC.replace("use_dynamic_bsz: true,", (
        "use_dynamic_bsz: false, ppo_micro_batch_size_per_gpu: 2, ulysses_sequence_parallel_size: 2,"))
    _, current = _current(cli, tmp_path, CONFIG + critic, "--trinity-version", "0.5", "--margin", "0")
    pairs = zip(current["config_problem_codes"], current["config_problems"], strict=True)  # type: ignore[call-overload]
    line = ("the critic's passes run with dynamic batch sizes off: verl reads no token budget there and fills each "
            "micro-batch with 2 sequences (the largest of its micro-batch sizes), up to 2 x ceil(131072 / 2) = 131072 "
            "tokens per GPU, more than the verdict's 65536, where the memory model counts its own update: set its "
            "micro-batch sizes to 1, or turn dynamic batch sizes on")
    assert (current["critic_sps"], [words for code, words in pairs if code == "critic-budget-above-verdict"]) == (
        [2], [line])
