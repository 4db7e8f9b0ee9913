"""docs/trinity.md's table of what differs between Trinity releases, row by row against the code that counts, checks
or writes each difference (releasediff, s85): each release column's cell is what the code's own constant or function
gives for that release (`REFERENCE_BYTES`, `model_loading`, `first_even_dim_release`, `counted_expert_layout`,
`counted_batch_divisor`, `DPO_PAIR_SIZES`, `lora_moe_unsaved_words`, `mapped_theta_words`, the release field tables),
or what the config checks say of a small config read for that release, so that the table cannot drift silently."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from solver.api import _BudgetVerdict, _critic_budgets, _critic_counted_at, _token_budget_problems
from solver.memory import REFERENCE_BYTES, first_even_dim_release
from solver.query import ConfigProblemCode, QueryError, TrinityConfig
from solver.rules import COMMAND_OPTIONS, DPO_PAIR_SIZES, lora_moe_unsaved_words, mapped_theta_words
from solver.tables import (
    LOADING_RANKS,
    builds_reference_anyway,
    counted_batch_divisor,
    counted_expert_layout,
    load_catalog,
    load_trinity_fields,
    model_loading,
    release_counts,
    releases_agree,
    trinity_release,
)
from solver.tables.bounds import KNOWN_RELEASE_NAMES
from solver.tables.schema import PACKED_WITHOUT_MASK_CODE
from solver.trinity import read_trinity_config, trinity_config_problems
from solver.trinity.checks import _releases_of
from solver.trinity.plan_keys import _trainer_offload_flags
from solver.trinity.reader import trainer_strategy

Cli = Callable[..., tuple[int, str, str]]
ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "trinity.md").read_text(encoding="utf-8")
HEADER = "| What differs | none named | 0.5 | 0.5.0 | 0.5.1 | 0.5.2 | 0.6.0 | What `solve` does |"
RELEASES: tuple[str | None, ...] = (None, "0.5", "0.5.0", "0.5.1", "0.5.2", "0.6.0")
"""The table's release columns, as `trinity_release` takes them (None: none named)."""
ROWS = ("verl line", "reference model", "--no-reference", "model loading", "pinned blocks", "routed experts", "train batch",
        "roles' own SP", "offload flags", "trainer strategy", "DPO micro-batch", "LoRA on a MoE", "YaRN's base",
        "algorithms", "trainer_config keys", "raised token budget")
CATALOG = load_catalog()
DENSE, MOE = CATALOG.model("Qwen3-8B"), CATALOG.model("Qwen3-30B-A3B")
FIELDS = load_trinity_fields().releases


def release_table() -> dict[str, dict[str | None, str]]:
    """The table's cells by row name (its bold first cell) and release column."""
    rows = PAGE[PAGE.index(HEADER):].split("\n\n", 1)[0].splitlines()[2:]
    table: dict[str, dict[str | None, str]] = {}
    for row in rows:
        cells = [cell.strip() for cell in row.strip().strip("|").split(" | ")]
        assert len(cells) == len(RELEASES) + 2, row
        table[cells[0].strip("*")] = dict(zip(RELEASES, cells[1:-1], strict=True))
    return table


TABLE = release_table()


def cell(row: str, release: str | None) -> str:
    """The table's cell of `row` for `release`."""
    return TABLE[row][release]


def assert_cell_opens(row: str, release: str | None, words: str, then: str) -> None:
    """Assert that the table's cell of `row` for `release` is `words`, or `words` then `then` and more (a pin, a
    source line)."""
    said = cell(row, release)
    assert said == words or said.startswith(f"{words}{then}"), said


def minor(release: str | None) -> Any:
    """The minor version whose rules the checks take for `release` (`trinity_release`)."""
    return trinity_release("trinity_version", release)


def test_the_table_has_each_row_and_a_column_for_each_release_but_06_which_counts_as_060():
    assert tuple(TABLE) == ROWS
    assert [release or "none named" for release in RELEASES] == HEADER.split(" | ")[1:-1]
    assert set(KNOWN_RELEASE_NAMES) - set(RELEASES) == {"0.6"}
    assert release_counts("0.6")[:3] == release_counts("0.6.0")[:3]
    assert all(model_loading("0.6", None, capability) == model_loading("0.6.0", None, capability)
               for capability in ("8.0", "9.0"))


@pytest.mark.parametrize("release", RELEASES)
def test_the_verl_line_is_verl_07_where_the_placement_is_verl_07s_and_060_picks_by_is_verl_legacy(release):
    said = cell("verl line", release)
    if release is None:
        assert said == "any: the larger count"
    elif first_even_dim_release(minor(release)) and release != "0.5":
        version = re.fullmatch(r"verl (0\.7\.\d)", said)
        assert version, said
        code = PACKED_WITHOUT_MASK_CODE["0.5"]  # where each 0.5 patch's verl packs, naming the verl it pins
        if release == "0.5.2":
            assert f"in {version[1]}, 0.5.2's" in code
        else:
            assert code.startswith(f"verl {version[1]} ") and "which Trinity 0.5.0 and 0.5.1 pin" in code
    elif release == "0.5":
        assert said == "verl 0.7.0 or 0.7.1"
    else:
        assert not first_even_dim_release(minor(release)) and FIELDS["0.6.0"].verl_legacy is not None
        assert "`is_verl_legacy`" in said and "before 0.8" in said and "from 0.8" in said


@pytest.mark.parametrize("release", RELEASES)
def test_no_reference_is_refused_where_the_release_may_build_one_whatever_the_algorithm(release):
    said = cell("--no-reference", release)
    assert said.startswith("refused" if builds_reference_anyway(release) else "taken"), said


@pytest.mark.parametrize("release", RELEASES)
def test_the_reference_models_bytes_are_reference_bytes(release):
    held = REFERENCE_BYTES[minor(release) or "0.6"]
    assert cell("reference model", release) == f"{ {2: 'bf16', 4: 'fp32'}[held]}, {held} bytes a parameter"


@pytest.mark.parametrize("release", RELEASES)
def test_the_ranks_loading_the_model_are_model_loadings(release):
    hopper, ampere = model_loading(release, None, "9.0"), model_loading(release, None, "8.0")
    expected = LOADING_RANKS[hopper] if hopper == ampere else (
        f"{LOADING_RANKS[hopper]} on compute capability 9 or more with FSDP2, else {LOADING_RANKS[ampere]}")
    assert cell("model loading", release) == expected
    assert model_loading(release, "fsdp", "9.0") == ampere  # FSDP1 loads as below 9


@pytest.mark.parametrize("release", RELEASES)
def test_the_pinned_blocks_are_placed_as_first_even_dim_release_says(release):
    placed = first_even_dim_release(minor(release))
    assert cell("pinned blocks", release) == ("as verl 0.7 places them" if placed else "by rows")


@pytest.mark.parametrize("release", RELEASES)
def test_the_routed_experts_are_counted_expert_layouts(release):
    words = {"fused": "fused (transformers 5)", "separate": "separate (transformers 4)",
             "either": "either (transformers 4 or 5)"}[counted_expert_layout(release)]
    assert_cell_opens("routed experts", release, words, ": `transformers")


@pytest.mark.parametrize("release", RELEASES)
def test_the_train_batch_rule_is_counted_batch_divisors(release):
    words = {"ranks": "the data-parallel ranks", "gpus": "the trainer GPUs",
             "unsure": "the ranks; a caution where the GPUs do not divide it"}[counted_batch_divisor(release)]
    assert_cell_opens("train batch", release, words, " (`")


ROLES_OWN_SP = {"model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 32768}, "cluster": {"gpu_per_node": 8},
                "mode": "train", "buffer": {"train_batch_size": 64},
                "trainer": {"ulysses_sequence_parallel_size": 2, "trainer_config": {
                    "critic": {"ulysses_sequence_parallel_size": 16},
                    "actor_rollout_ref": {"actor": {"ulysses_sequence_parallel_size": 4}}}}}
"""A config whose actor sets an SP of 4 of its own over the trainer's 2, and whose critic one of 16, which the 8
trainer GPUs do not divide."""


def yaml_text(mapping: dict[str, Any]) -> str:
    """`mapping` as the text of a config file: JSON, which YAML reads."""
    return json.dumps(mapping)


@pytest.mark.parametrize("release", RELEASES)
def test_the_roles_own_sp_is_what_the_config_checks_read_and_say(release):
    codes = [problem.code.value for problem in trinity_config_problems(ROLES_OWN_SP, DENSE, 8, version=minor(release))]
    sp = read_trinity_config(yaml_text(ROLES_OWN_SP), "c.yaml", {}, version=minor(release)).sp
    expected = ("the actor's own" if sp == 4 else "the trainer's") + (
        "; refused (`sp-divides-gpus`)" if "sp-divides-gpus" in codes else "") + (
        "; `role-sp-differs`" if "role-sp-differs" in codes else "")
    assert cell("roles' own SP", release) == expected


TRAINER_FLAGS = {"model": {"model_path": "Qwen/Qwen3-8B"}, "cluster": {"gpu_per_node": 8},
                 "trainer": {"trainer_strategy": "fsdp2", "param_offload": True}}
"""A config with one of Trinity 0.6's offload flags under ``trainer``."""
ACTOR_POLICY = {"model": {"model_path": "Qwen/Qwen3-8B"}, "cluster": {"gpu_per_node": 8},
                "trainer": {"trainer_strategy": "fsdp2", "trainer_config": {"actor_rollout_ref": {"actor": {
                    "fsdp_config": {"offload_policy": True, "param_offload": True, "optimizer_offload": True}}}}}}
"""A config that turns Offload on in the actor's flags alone."""


@pytest.mark.parametrize("release", RELEASES)
def test_the_trainers_offload_flags_are_refused_written_and_read_as_the_release_does(release):
    version = minor(release)
    refused = "trainer-offload-keys-refused" in [
        problem.code.value for problem in trinity_config_problems(TRAINER_FLAGS, DENSE, 8, version=version)]
    written = _trainer_offload_flags(SimpleNamespace(offload=True), None, version, "--trinity-version 0.5")
    fragment = "left out" if not written else "written, with a comment" if written[0].comment else "written"
    offload = read_trinity_config(yaml_text(ACTOR_POLICY), "c.yaml", {}, version=version).offload
    expected = (f"refused (`trainer-offload-keys-refused`); {fragment}" if refused
                else f"{fragment}; an actor's alone counted {'on' if offload else 'off'}")
    assert cell("offload flags", release) == expected


@pytest.mark.parametrize("release", RELEASES)
def test_the_unset_trainer_strategy_is_trainer_strategys(release):
    with_06_keys, without = (trainer_strategy(None, config, minor(release)) for config in (TRAINER_FLAGS, ACTOR_POLICY))
    expected = (with_06_keys if with_06_keys == without
                else f"{with_06_keys} where the config has 0.6's keys, else {without}")
    assert cell("trainer strategy", release) == expected


@pytest.mark.parametrize("release", RELEASES)
def test_the_dpo_pairs_micro_batch_is_dpo_pair_sizes(release):
    assert cell("DPO micro-batch", release) == str(DPO_PAIR_SIZES[minor(release) == "0.5"])


@pytest.mark.parametrize("release", RELEASES)
def test_lora_on_a_moe_is_cautioned_where_lora_moe_unsaved_words_says(release):
    words = lora_moe_unsaved_words(MOE, minor(release), counted_expert_layout(release))
    assert cell("LoRA on a MoE", release) == ("none" if words is None else "adapter config saved cut short")


def test_lora_on_a_moe_is_refused_with_06_alone_and_not_in_mode_train():
    config = {"model": {"model_path": "Qwen/Qwen3-30B-A3B", "max_model_len": 32768,
                        "lora_configs": [{"name": "a", "lora_rank": 32}]},
              "cluster": {"gpu_per_node": 8}, "buffer": {"train_batch_size": 64}}

    def codes(version: Any, mode: str | None = None) -> list[str]:
        mapping = config | ({"mode": mode} if mode else {})
        return [problem.code.value for problem in trinity_config_problems(
            mapping, MOE, 8, version=version, experts=counted_expert_layout(version))]

    assert "lora-moe-config-unsaved-refused" in codes("0.6")
    assert "lora-moe-config-unsaved" in codes("0.6", "train") and "lora-moe-config-unsaved" in codes(None)
    assert "lora-moe-config-unsaved" in codes("0.5")
    assert "refused with 0.6 unless mode `train`" in PAGE[PAGE.index("| **LoRA on a MoE**"):].split("\n", 1)[0]


@pytest.mark.parametrize("release", RELEASES)
def test_yarns_base_is_written_where_mapped_theta_words_says(release):
    words = mapped_theta_words(release)
    assert cell("YaRN's base", release) == ("not needed" if words is None else "needs `rope_theta` in `rope_scaling`")


@pytest.mark.parametrize("release", RELEASES)
def test_the_algorithms_are_the_releases_field_tables(release):
    said = cell("algorithms", release)
    if release is None:
        assert said == "any release's"
    elif release == "0.5":
        patches = _releases_of(load_trinity_fields(), "0.5")
        assert said == f"{patches[0]}'s to {patches[-1]}'s"
    else:
        names = list(FIELDS)
        before = set(FIELDS[names[names.index(release) - 1]].algorithms) if names.index(release) else set()
        added = sorted(set(FIELDS[release].algorithms) - before) if before else []
        assert said == f"{len(FIELDS[release].algorithms)}" + (f": {', '.join(added)}" if added else "")


@pytest.mark.parametrize(("algorithm", "version", "code"), [
    ("dapo", "0.5", "unknown-algorithm-refused"), ("dapo", None, "unknown-algorithm"), ("dapo", "0.6", None),
    ("jsd", "0.5", "unknown-algorithm")])
def test_an_algorithm_a_release_lacks_is_refused_or_said_as_the_notes_say(algorithm: str, version: Any,
                                                                          code: str | None):
    config = {"model": {"model_path": "Qwen/Qwen3-8B"}, "cluster": {"gpu_per_node": 8},
              "algorithm": {"algorithm_type": algorithm}}
    codes = [problem.code.value for problem in trinity_config_problems(config, DENSE, 8, version=version)]
    assert [found for found in codes if found.startswith("unknown-algorithm")] == ([code] if code else [])


@pytest.mark.parametrize("release", RELEASES)
def test_the_trainer_config_keys_are_merged_or_built_as_the_field_tables_say(release):
    said = cell("trainer_config keys", release)
    patches = list(FIELDS) if release is None else _releases_of(load_trinity_fields(), minor(release)) if (
        release == "0.5") else [release]
    ways = {"merged: one it lacks refused" if FIELDS[patch].verl_merged is not None else "built: one it lacks dropped"
            for patch in patches}
    assert said == (ways.pop() if len(ways) == 1 else "both, in one `but:` line")


OWN_RAISES = {"0.5.0": 2, "0.5.1": 1, "0.5.2": 1, "0.6.0": 1}
"""What each release raises an actor budget below a sequence to, in `max_model_len`s (`_adjust_token_len_if_needed`'s
`required_min`: `max_model_len * 2` in 0.5.0, `max_model_len` in 0.5.1, 0.5.2 and 0.6.0's `verl_legacy`)."""
RAISE_WORDS = {2: "ceil(2L/SP)", 1: "ceil(L/SP)"}


@pytest.mark.parametrize("release", RELEASES)
def test_the_raised_token_budget_is_each_releases_own_raise_and_the_raised_actor_budget_counted(release):
    length, sp = 32768, 2
    raised = TrinityConfig(model="Qwen3-8B", sp=sp, version=minor(release)).raised_actor_budget(length)
    counted = "not counted" if raised is None else {math.ceil(times * length / sp): words
                                                    for times, words in RAISE_WORDS.items()}[raised]
    if raised is not None:  # the most any patch of the minor version gives
        patches = [times for patch, times in OWN_RAISES.items() if minor(patch) == minor(release)]
        assert raised == math.ceil(max(patches) * length / sp)
    own = RAISE_WORDS[OWN_RAISES[release]] if release in OWN_RAISES else counted
    expected = (counted if own == counted else f"{own} before verl 0.8; {counted}" if raised is None
                else f"{own}, counted as {counted}")
    assert cell("raised token budget", release) == expected


ACTOR_BUDGET, REF_BUDGET = (f"trainer.trainer_config.actor_rollout_ref.{role}" for role in (
    "actor.ppo_max_token_len_per_gpu", "ref.log_prob_max_token_len_per_gpu"))
CRITIC_BUDGET = "trainer.trainer_config.critic.ppo_max_token_len_per_gpu"


@pytest.mark.parametrize("version", ["0.5", "0.6", None])
def test_the_verdict_counts_the_refs_raise_as_the_actors_and_the_cap_the_least_any_patch_gives(version):
    # budget90: every release raises the ref's and the critic's budgets as the actor's (_adjust_token_len_if_needed
    # for all three), but the budget in effect counted the actor's raise alone
    length, sp = 32768, 2
    most = max(times for patch, times in OWN_RAISES.items() if minor(patch) == "0.5")  # 0.5.0's
    config = TrinityConfig(model="Qwen3-8B", max_model_len=length, sp=sp, version=version,
                           role_token_budgets=((ACTOR_BUDGET, 16384), (REF_BUDGET, 8000)))
    # the actor's 16384 holds a sequence at SP 2, the ref's 8000 none: 0.5 counts both as 0.5.0 raises them (raise05:
    # any budget below ceil(2L/SP), the actor's too)
    assert config.budget_in_effect(length) == (math.ceil(most * length / sp) if version == "0.5" else 16384)
    assert config.budget_in_effect_keys(length) == ((ACTOR_BUDGET, REF_BUDGET) if version == "0.5" else (ACTOR_BUDGET,))
    # mutants53: the ref's raised to the actor's own budget sets nothing: the actor's key alone sets it
    tied = config.model_copy(update={"ref_sp": 1, "role_token_budgets": ((ACTOR_BUDGET, most * length),
                                                                         (REF_BUDGET, 8000))})
    assert tied.budget_in_effect_keys(length) == (ACTOR_BUDGET,)
    at_sp1 = config.model_copy(update={"ref_sp": 1})  # the ref at an SP of its own, 1: raised there
    assert at_sp1.budget_in_effect(length) == (most * length if version == "0.5" else 16384)
    assert config.model_copy(update={"ref_forward_runs": False}).budget_in_effect(length) == (
        math.ceil(most * length / sp) if version == "0.5" else 16384)
    # a plan's cap: the actor's raise, the least any release (any 0.5 patch with 0.5) gives, at the actor's SP
    assert config.budget_in_effect(length, planned=True) == 16384
    below = config.model_copy(update={"role_token_budgets": ((ACTOR_BUDGET, 8000), (REF_BUDGET, 8000))})
    assert below.budget_in_effect(length, planned=True) == math.ceil(length / sp) == 16384
    assert below.budget_in_effect(length) == (math.ceil(most * length / sp) if version == "0.5" else 8000)
    # mutants53: a ref budget that holds no sequence at the ref's SP (4, over the actor's 2) gets no line on the
    # actor's SP groups, raised or not: its token-budget-below-length line says how each release raises it
    ref_below = config.model_copy(update={"ref_sp": 4, "role_token_budgets": ((ACTOR_BUDGET, 16384),
                                                                              (REF_BUDGET, 4000))})
    ref_below_verdict = _BudgetVerdict(ref_below, length, ref_below.budget_in_effect(length), COMMAND_OPTIONS)
    assert [problem.code.value for problem in _token_budget_problems(ref_below_verdict, (), None)] == [
        "lowered-token-budget"] + (["token-budget-below-verdict"] if version == "0.5" else [])  # raise05: the actor's 16384, 0.5.0 raises
    assert config.raised_critic_budget(length, 1) == (most * length if version == "0.5" else length)


@pytest.mark.parametrize("version", ["0.5", "0.6", None])
def test_a_budget_holding_one_sequence_but_not_two_counts_as_raised_to_two_with_05(version):
    # raise05: 0.5.0's _adjust_token_len_if_needed raises a budget wherever budget x SP is below required_min =
    # max_model_len * 2 (common/verl_config.py:466-469), to ceil(2L/SP), for the actor, the ref and the critic alike;
    # 0.5.1, 0.5.2 and 0.6.0's (required_min = max_model_len) only one that holds no sequence. The 0.5 verdict counted
    # 24576 at 16384 tokens and SP 1, which 0.5.0 runs at 32768.
    length = 16384
    config = TrinityConfig(model="Qwen3-8B", max_model_len=length, sp=1, version=version,
                           role_token_budgets=((ACTOR_BUDGET, 24576), (REF_BUDGET, 24576)))
    assert config.budget_in_effect(length) == (32768 if version == "0.5" else 24576)
    assert config.raised_critic_budget(length, 1) == (32768 if version == "0.5" else 16384)
    assert config.budget_in_effect(length, planned=True) == 24576  # a plan's cap: 0.5's least raise, as before
    # the critic at SP 1 beside an actor at SP 2, whose default is the verdict's 16384
    critic = config.model_copy(update={"sp": 2, "role_token_budgets": (),
                                       "critic_token_budgets": ((CRITIC_BUDGET, 24576),)})
    verdict = _BudgetVerdict(critic, length, None, COMMAND_OPTIONS)
    count = _critic_counted_at(verdict, 1, False)
    (line,) = [problem.words for problem in _token_budget_problems(verdict, _critic_budgets(verdict, count), count)]
    raised = (", which Trinity 0.5.0 raises to ceil(2 x 16384 / 1) = 32768 at the critic's SP (0.5.1 and 0.5.2 keep "
              "it; the most is counted),")
    # raise91c: as 0.5.0 raises it, the verdict counts it there (critic-budget-raised), as it runs
    assert line == (f"{CRITIC_BUDGET} 24576{raised} is above the verdict's 16384 tokens per GPU: the verdict counts "
                    "the critic's own update there; --write sets it to the plan's" if version == "0.5" else
                    f"{CRITIC_BUDGET} 24576 is above the verdict's 16384 tokens per GPU: on verl before 0.8 the "
                    "critic's own update takes 24576 tokens per GPU, where the memory model counts it at the "
                    "verdict's 16384; --write sets it to the plan's")


@pytest.mark.parametrize(("version", "critic_sp", "raised"), [
    ("0.5", 2, (", which Trinity 0.5.0 raises to ceil(2 x 32768 / 2) = 32768 at the critic's SP (0.5.1 and 0.5.2 to "
                "ceil(32768 / 2) = 16384; the most is counted),")),
    ("0.6", 2, None), (None, 2, None),
    ("0.6", 1, ", which Trinity 0.6 on verl before 0.8 raises to ceil(32768 / 1) = 32768 at the critic's SP,"),
    (None, 1, (", which Trinity with verl before 0.8 raises to ceil(32768 / 1) = 32768 at the critic's SP (Trinity "
               "0.5.0 to ceil(2 x 32768 / 1) = 65536),"))])
def test_a_critic_budget_below_a_sequence_counts_as_raised_above_the_verdict(version, critic_sp, raised):
    # budget90: the critic's 8000 holds no 32768-token sequence; as raised it may take more than the verdict's 16384
    config = TrinityConfig(model="Qwen3-8B", max_model_len=32768, sp=2, version=version, max_token_len_per_gpu=16384,
                           critic_token_budgets=((CRITIC_BUDGET, 8000),
                                                 ("trainer.trainer_config.critic.forward_max_token_len_per_gpu", 8000)))
    verdict = _BudgetVerdict(config, 32768, 16384, COMMAND_OPTIONS)
    count = _critic_counted_at(verdict, critic_sp, False)
    lines = [problem.words for problem in _token_budget_problems(verdict, _critic_budgets(verdict, count), count)
             if problem.code == ConfigProblemCode.CRITIC_BUDGET_RAISED]  # the forward's is never raised
    # critic90: its budget as raised (32768 in each case), named; raise91c: counted there, as the critic's own SP's
    # count raises it (before: critic-budget-above-verdict, "counts it at the verdict's 16384")
    assert lines == ([] if raised is None else [(
        f"{CRITIC_BUDGET} 8000{raised} is above the verdict's 16384 tokens per GPU: the verdict counts the critic's "
        "own update there; --write sets it to the plan's")])


def test_the_releases_taken_and_refused_and_a_running_jobs_restart_are_as_the_notes_say(cli: Cli):
    for refused in ("0.5.3", "0.6.1", "0.6.0rc1"):
        with pytest.raises(QueryError):
            trinity_release("trinity_version", refused)
    assert trinity_release("trinity_version", "v0.5.2") == "0.5"
    assert not releases_agree("0.5.1", "0.5.2") and releases_agree("0.5", "0.5.2")
    status, out, err = cli("--model", "8B", "--gpus", "8", "--gpu", "a100", "--trinity-version", "0.5.3")
    assert (status, out) == (2, "") and "takes 0.5, 0.5.0, 0.5.1, 0.5.2, 0.6 or 0.6.0" in err


def test_the_before_and_after_commands_figures_are_the_ones_the_words_give():
    words = PAGE[PAGE.index("Moving a run from 0.5.1 to 0.6.0"):]
    shown = words.split("```")[1:4:2]
    command = "\n$ solve --model 8B --gpus 8 --gpu a100 --len 32k --host-ram 1TB --trinity-version"
    assert shown[0].startswith(f"{command} 0.5.1\n") and shown[1].startswith(f"{command} 0.6\n")
    assert "host memory    50.9 GiB per node" in shown[0] and "host memory    284.8 GiB per node" in shown[1]
    assert "grows from\n50.9 GiB to 284.8 GiB" in words


@pytest.mark.parametrize(("version", "ref_sp", "on_050", "said"), [
    ("0.5", 4, 16384, False), (None, 4, 16384, False), (None, None, 32768, True), ("0.6", None, 32768, False)])
def test_050_raises_a_lowered_budget_back_only_where_a_pass_reads_it(version, ref_sp, on_050, said):
    # raise91: 0.5.0's _adjust_token_len_if_needed raises every role's budget below ceil(2L/SP), dynamic batch sizes
    # on or off (common/verl_config.py:542, :564, :595), but a pass with them off reads none (dp_actor.py:103). The
    # actor's and the rollout's passes here hold one sequence, 16384 tokens, below the default 32768; the ref reads
    # the trainer's 16384: at its own SP 4 it holds two sequences, so 0.5.0 raises nothing that a pass reads and
    # "0.5.0 raises it back" was false (with 0.5, whose verdict counts 0.5.0's raise, always); at SP 2 0.5.0 raises it
    rollout = "trainer.trainer_config.actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu"
    config = TrinityConfig(model="Qwen3-8B", max_model_len=32768, sp=2, version=version, max_token_len_per_gpu=16384,
                           ref_sp=ref_sp, micro_batch_sequences=((ACTOR_BUDGET, 1), (rollout, 1)))
    assert config.budget_in_effect(32768) == 16384
    assert config.budget_in_effect_on_050(32768) == on_050  # 0.6 raises nothing of 0.5.0's: no line
    (line,) = [problem.words for problem in _token_budget_problems(
                   _BudgetVerdict(config, 32768, 16384, COMMAND_OPTIONS), (), None)
               if problem.code == ConfigProblemCode.LOWERED_TOKEN_BUDGET]
    assert line.endswith("the verdict is at 16384 tokens per GPU (each step takes more micro-batches)"
                         + ("; Trinity 0.5.0 raises it back to the default: use 0.5.1 or later" if said else ""))


def test_with_no_release_050_is_said_to_raise_back_no_budget_its_role_flags_leave_unread():
    # raise91b: with no release named, the actor's and the ref's own dynamic batch size flags off beside the trainer's
    # on run them in rows on 0.5 (which reads the roles' own flags) and at the trainer's 16384 on 0.6 with verl 0.8 or
    # later (which gives each role the trainer's): 0.5.0 raises their budgets to 32768, but no pass of theirs reads one
    # there (each holds one sequence, 16384), so "0.5.0 raises it back" was false (before: 32768 on 0.5.0)
    roles = ("    actor_rollout_ref:\n      actor: {use_dynamic_bsz: false}\n"
             "      ref: {log_prob_use_dynamic_bsz: false}\n")
    config = read_trinity_config(
        "model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "algorithm: {algorithm_type: grpo}\ntrainer:\n  ulysses_sequence_parallel_size: 2\n"
        f"  max_token_len_per_gpu: 16384\n  trainer_config:\n{roles}", "c.yaml", {})
    assert (config.micro_batch_sequences, config.budget_in_effect(32768)) == ((), 16384)
    assert config.budget_in_effect_on_050(32768) == 16384
    (line,) = [problem.words for problem in _token_budget_problems(
                   _BudgetVerdict(config, 32768, 16384, COMMAND_OPTIONS), (), None)
               if problem.code == ConfigProblemCode.LOWERED_TOKEN_BUDGET]
    assert line.endswith("the verdict is at 16384 tokens per GPU (each step takes more micro-batches)")
