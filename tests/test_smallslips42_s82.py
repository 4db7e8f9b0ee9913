"""Small slips this session's reviews found (session 82, smallslips42). (1) ``lora-excluded-adapted`` beside a
config's own LoRA (``--lora-exclude``) said to give ``--lora-targets``, which plans an adapter the config does not
train (``--write`` keeps ``model.lora_configs``): the fix now names the config's key, as YAML takes the regex. (2) A
critic that merges the actor's budget in (``critic: {<<: *b}``) read the actor's raised 32768 in ``--write``'s copy,
though the note said its 16384 was kept: the kept value is written as the critic's own key. (3) ``--check`` said
nothing of a response (or prompt) limit set alone that is not below the length, which ``--write`` refuses: a ``but:``
line, ``prompt-or-response-at-length``. (4) The map legend's unmarked cautions name their cells where they are 3 or
fewer, by the map's own labels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_criticbudget_s82 import BASE, CRITIC, KEPT, Cli, _fixed_point, _write
from test_loraexclude2_s82 import CAUTION, MOE_MLP, OTHERS, first_plan, own_config
from test_rolebudget_s81 import ACTOR
from test_smallslips41_s82 import RESPONSE_ALONE as PPO_RESPONSE_ALONE

import solver
from solver.query import ConfigAdapter
from solver.results import CautionCode, GpuMap

# (1) the fix beside a config's own LoRA names its key

OWN_KEY_FIX = "give model.lora_configs[0].target_modules .*\\.(q_proj|k_proj|v_proj|o_proj), which adapts the other "
VERL_05 = ("model:\n  model_path: Qwen/Qwen3-30B-A3B\n  max_model_len: 16384\nalgorithm: {algorithm_type: grpo}\n"
           "cluster: {node_num: 2, gpu_per_node: 8}\n"
           "explorer: {rollout_model: {engine_num: 8, tensor_parallel_size: 1}}\n"
           "trainer:\n  trainer_config:\n    actor_rollout_ref:\n      model: {lora_rank: 16}\n")
"""Qwen3-30B-A3B with verl before 0.8's own LoRA at rank 16 (all-linear), which Trinity 0.5 trains."""


def test_beside_a_configs_own_lora_the_fix_names_its_key(cli: Cli, tmp_path: Path) -> None:
    status, out, err = cli("--from-config", own_config(tmp_path), "--gpu", "h100", "--lora-exclude", MOE_MLP, "--json")
    # before: "give --lora-targets '.*\.(q_proj|k_proj|v_proj|o_proj)'", which --write leaves out of the copy
    assert (status, err) == (0, "")
    assert first_plan(out)["cautions"][0] == CAUTION.format(
        excluded=MOE_MLP, option="--lora-exclude", targets="model.lora_configs[0].target_modules", regex=OTHERS)


def test_verls_own_lora_under_05_is_named_by_its_key(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "verl.yaml"
    config.write_text(VERL_05, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--trinity-version", "0.5",
                         "--lora-exclude", MOE_MLP, "--json")
    plan = first_plan(out)
    assert (status, plan["caution_codes"][0]) == (0, "lora-excluded-adapted")
    assert plan["cautions"][0].endswith(
        "give trainer.trainer_config.actor_rollout_ref.model.target_modules .*\\.(q_proj|k_proj|v_proj|o_proj), "
        "which adapts the other modules alone")


def test_the_fix_followed_in_the_config_leaves_no_caution(cli: Cli, tmp_path: Path) -> None:
    fixed = own_config(tmp_path, ", target_modules: .*\\.(q_proj|k_proj|v_proj|o_proj)")  # as the words give it
    status, out, _ = cli("--from-config", fixed, "--gpu", "h100", "--lora-exclude", MOE_MLP, "--json")
    assert (status, first_plan(out)["caution_codes"]) == (0, ["lora-moe-config-unsaved"])


def test_an_adapter_the_config_loads_keeps_the_option(cli: Cli, tmp_path: Path) -> None:
    # its targets are its own file's, which no key of the config changes: --lora-targets, as without the config
    loaded = tmp_path / "own.yaml"
    loaded.write_text(Path(own_config(tmp_path)).read_text().replace("{lora_rank: 16}", "{path: /ckpt/adapter}"))
    status, out, _ = cli("--from-config", str(loaded), "--gpu", "h100", "--lora-rank", "16", "--lora-exclude", MOE_MLP,
                         "--json")
    plan = first_plan(out)
    assert (status, plan["config_adapter"]["rank"]) == (0, 0)
    assert plan["cautions"][0] == CAUTION.format(excluded=MOE_MLP, option="--lora-exclude", targets="--lora-targets",
                                                 regex=f"'{OTHERS}'")


def test_a_config_adapters_targets_key() -> None:
    assert ConfigAdapter(key="model.lora_configs", rank=16).targets_key == "model.lora_configs[0].target_modules"
    assert ConfigAdapter(key="trainer.trainer_config.actor_rollout_ref.model.lora_rank", rank=8).targets_key == (
        "trainer.trainer_config.actor_rollout_ref.model.target_modules")
    assert ConfigAdapter(key="model.lora_configs", rank=0).targets_key is None


# (2) a kept budget a merge brings in

MERGED = BASE + ("    actor_rollout_ref:\n      actor: &b {ppo_max_token_len_per_gpu: 16384}\n"
                 "      ref: {log_prob_max_token_len_per_gpu: 16384}\n"
                 "    critic: {<<: *b}\n")
"""`BASE` (PPO, Qwen3-8B at 32768 on H20s, SP 2) whose roles take 16384, the critic merging the actor's in: under
``--token-budget default`` the actor's and the ref's are raised to 32768, the critic's 16384 kept."""


def _trainer_config(written: str) -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load(written)["trainer"]["trainer_config"]
    return config


def test_a_kept_critic_budget_a_merge_brings_in_stays_its_own(cli: Cli, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    written, notes = _write(cli, tmp_path, MERGED, "--token-budget", "default")
    config = _trainer_config(written)
    # before: the copy's critic read the actor's 32768 through the merge, the note saying 16384 was kept
    assert config["actor_rollout_ref"]["actor"] == {"ppo_max_token_len_per_gpu": 32768}
    assert config["critic"]["ppo_max_token_len_per_gpu"] == 16384
    assert "      actor: &b {ppo_max_token_len_per_gpu: 32768}\n" in written
    assert "    critic: {<<: *b, ppo_max_token_len_per_gpu: 16384, model: " in written
    assert f"NOTE {ACTOR} 16384 raised to the plan's 32768" in notes
    assert f"NOTE {CRITIC} 16384 {KEPT}\n" in notes
    assert "anchor" not in notes  # before: "the patch's changes in it (...) reach them too", of the critic alone
    _fixed_point(cli, tmp_path, monkeypatch, written)


def test_a_merge_the_change_reaches_is_left_as_it_is(cli: Cli, tmp_path: Path) -> None:
    # the actor's own kept too: nothing changes in the anchor's mapping, and the critic merges it in as before
    text = MERGED.replace("      ref: {log_prob_max_token_len_per_gpu: 16384}\n", "")
    written, notes = _write(cli, tmp_path, text, "--token-budget", "default")
    assert _trainer_config(written)["critic"]["ppo_max_token_len_per_gpu"] == 16384
    assert "    critic: {<<: *b, model: " in written
    # GRPO trains no critic: no budget of its is kept, and the change reaches its keys (the warning says so)
    grpo = MERGED.replace("algorithm_type: ppo", "algorithm_type: grpo")
    written, notes = _write(cli, tmp_path, grpo, "--token-budget", "default")
    assert _trainer_config(written)["critic"] == {"ppo_max_token_len_per_gpu": 32768}
    assert ("trainer.trainer_config.actor_rollout_ref.actor is the anchor &b, which other keys repeat (*b): the "
            "patch's changes in it (ppo_max_token_len_per_gpu to 32768, ...) reach them too") in notes


# (3) --check on a limit set alone

RESPONSE_ALONE = PPO_RESPONSE_ALONE.replace(
    "trainer: {trainer_type: verl}", "trainer: {trainer_type: verl, ulysses_sequence_parallel_size: 2}"
) + "algorithm: {algorithm_type: grpo}\n"
"""smallslips41's Qwen3-8B config of ``max_response_tokens: 30000`` alone at 32768 tokens, trained by GRPO at SP 2
(it trains on 6 H100s with Env)."""


@pytest.fixture
def _env_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")

def _check(cli: Cli, tmp_path: Path, text: str, *options: str) -> tuple[int, dict[str, Any]]:
    """``--check --json`` of `text` on H100s with `options`: its status and its ``current``."""
    config = tmp_path / "c.yaml"
    config.write_text(text)
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json", *options)
    (answer,) = json.loads(out)
    return status, answer["current"]


def _at_length(current: dict[str, Any]) -> list[str]:
    """`current`'s ``prompt-or-response-at-length`` lines."""
    return [words for code, words in zip(current["config_problem_codes"], current["config_problems"], strict=True)
            if code == "prompt-or-response-at-length"]


@pytest.mark.usefixtures("_env_on")
def test_check_says_a_response_limit_alone_not_below_the_length(cli: Cli, tmp_path: Path) -> None:
    status, current = _check(cli, tmp_path, RESPONSE_ALONE, "--len", "16384")
    # before: no line, though --write refuses it (smallslips41); now a but: line, no refusal
    assert (status, current["refused"], current["trains"]) == (0, False, True)
    assert _at_length(current) == [
        ("model.max_response_tokens 30000 is not below --len's 16384, and model.max_prompt_tokens is unset: Trinity "
         "lowers it to 16383 and leaves max_prompt_tokens 1 token, to which every prompt is truncated "
         "(model.enable_prompt_truncation, on by default): lower it below 16384")]


@pytest.mark.usefixtures("_env_on")
def test_check_says_a_prompt_limit_alone_at_the_configs_length(cli: Cli, tmp_path: Path) -> None:
    text = RESPONSE_ALONE.replace("max_response_tokens: 30000", "max_prompt_tokens: 32768")
    status, current = _check(cli, tmp_path, text)
    assert (status, _at_length(current)) == (0, [
        ("model.max_prompt_tokens 32768 is not below model.max_model_len 32768, and model.max_response_tokens is "
         "unset: Trinity lowers it to 32767 and leaves max_response_tokens 1 token, at which the rollout stops every "
         "response: lower it below 32768")])


@pytest.mark.parametrize("text", [RESPONSE_ALONE, RESPONSE_ALONE.replace("30000", "32767"),
                                  RESPONSE_ALONE.replace("  max_response_tokens: 30000\n",
                                                         "  max_prompt_tokens: 32768\n  max_response_tokens: 1\n")],
                         ids=["below", "one-below", "both-set"])
@pytest.mark.usefixtures("_env_on")
def test_no_line_below_the_length_nor_for_both_limits(cli: Cli, tmp_path: Path, text: str) -> None:
    status, current = _check(cli, tmp_path, text)
    both = "max_prompt_tokens" in text  # 32768 + 1 over the length: refused as such, and no more
    assert (status, _at_length(current), current["refused"]) == (1 if both else 0, [], both)
    assert ("prompt-response-over-length" in current["config_problem_codes"]) == both


# (4) the map legend names a few unmarked cells


def test_a_one_row_map_names_its_cells_by_their_columns(cli: Cli) -> None:
    status, out, _ = cli("map", "--gpu", "h100", "--model", "Qwen3-30B-A3B", "--lora-rank", "16", "--budgets", "8")
    assert status == 0
    assert out.endswith("\nother cautions, unmarked (their words: --json): thin-headroom (1 cell: ≤8)\n")
    status, out, _ = cli("map", "--gpu", "l40s", "--model", "8B")  # more than 3 cells each: counted alone
    assert status == 0 and out.endswith(
        "\nother cautions, unmarked (their words: --json): thin-headroom (5 cells), sp-over-pcie (7 cells)\n")


def test_a_map_of_rows_names_each_cells_row_then_its_column(cli: Cli) -> None:
    status, out, _ = cli("map", "--gpu", "l40s", "--model", "8B", "--by", "len")
    assert status == 0 and out.endswith(
        "\nother cautions, unmarked (their words: --json): thin-headroom (3 cells: 4096 ≤5; 28672 ≤8; 57344 ≤8), "
        "uneven-data-parallel (18 cells), sp-over-pcie (69 cells)\n")


@pytest.fixture(scope="module")
def four_cells() -> GpuMap:
    (gpu_map,) = solver.map_plans("8B", gpu="h100", budgets=[1, 2, 4, 8])
    return gpu_map


@pytest.mark.parametrize(("marked", "said"), [
    (3, "interconnect-not-stated (3 cells: ≤1, ≤2, ≤4)"), (4, "interconnect-not-stated (4 cells)")])
def test_three_cells_are_named_and_four_counted(four_cells: GpuMap, marked: int, said: str) -> None:
    (row,) = four_cells.rows
    plans = tuple(None if plan is None else plan.model_copy(update={  # the code on the first `marked` cells alone
        "caution_codes": (CautionCode.INTERCONNECT_NOT_STATED,) if at < marked else (),
        "cautions": ("words",) if at < marked else ()}) for at, plan in enumerate(row.plans))
    shown = four_cells.model_copy(update={"rows": (row.model_copy(update={"plans": plans}),)})
    legend = solver.map_text([shown], width=400)
    assert legend.endswith(f"\nother cautions, unmarked (their words: the GpuMap): {said}\n")
