"""DPO on Trinity 0.6 / verl 0.8 (session 85, dpoverl08): verl 0.8's mini-batch assertion, the actor's pair advice
only where it changes the size, and the nearest train batch that splits where the batch rule leaves no plan."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_dpowrite_s83 import ACTOR_SIZE, _dpo
from test_fragcheck7_s83 import _current
from test_tokbudget_s72 import CATALOG, Cli

from solver.query import REFUSED_CONFIG_CODES, ConfigProblemCode
from solver.rules import (
    DPO_PAIR_BATCH_WORDS,
    batch_split_violation,
    dividing_batch_words,
    nearest_dividing_batches,
)
from solver.trinity import trinity_config_problems
from solver.trinity.checks import forward_unread_keys

LEGACY = ("DPO with dynamic batch sizes off in the actor's update: {where} as the trainer starts that its micro-batch "
          f"per GPU, 4 sequences ({ACTOR_SIZE} 2 doubled for DPO), divides its mini-batch per GPU, "
          "buffer.train_batch_size 24 over the 8 data-parallel ranks (trainer GPUs 8 / SP 1) = 3, which it does not: "
          "the trainer fails there; make buffer.train_batch_size a multiple of 32 (8 ranks x 4; the nearest to 24: 32)")
ON_08 = ("DPO with dynamic batch sizes off in the actor's update: Trinity 0.6 on verl 0.8 or later, which doubles "
         "nothing, asserts at the actor's first update (workers/engine/utils.py:91-93 in verl 0.8.0, :125-127 in 0.9.0 "
         "and 0.9.1) that its micro-batch "
         f"per GPU, 2 sequences ({ACTOR_SIZE} 2), divides its mini-batch per GPU, buffer.train_batch_size 24 over the "
         "8 data-parallel ranks (trainer GPUs 8 / SP 1) = 3, which it does not: the trainer fails there; make "
         "buffer.train_batch_size a multiple of 16 (8 ranks x 2; the nearest to 24: 16 or 32)")


def _said(current: dict[str, Any], prefix: str) -> list[tuple[str, str]]:
    """(code, words) of each line of `current` whose code starts with `prefix`."""
    return [(code, words) for code, words in zip(current["config_problem_codes"], current["config_problems"],
                                                 strict=True) if code.startswith(prefix)]


def _batch(size: int | None, batch: int) -> dict[str, Any]:
    """`_dpo`'s config (8 trainer GPUs, dynamic batch sizes off), the actor's size `size`, the train batch `batch`."""
    config = _dpo(size)
    config["buffer"]["train_batch_size"] = batch
    return config


@pytest.mark.parametrize(("options", "where"), [
    ((), "Trinity 0.5, and 0.6 on verl before 0.8, assert"),
    (("--trinity-version", "0.6"), "Trinity 0.6 on verl before 0.8 asserts")])
def test_verl_08_asserts_the_written_size_divides_the_mini_batch_per_gpu(tmp_path: Path, cli: Cli,
                                                                         options: tuple[str, ...], where: str):
    """Trinity 0.6.0 on verl 0.8 sets ``ppo_mini_batch_size`` to the train batch (``trainer/verl/config.py:285``) and
    doubles nothing; verl 0.8.0 divides it by the ranks (``workers/engine_workers.py:258-261``) and asserts that the
    size as written divides each GPU's share (``workers/engine/utils.py:91-93``). Before: not judged, and the config,
    which fails on every verl line (24 / 8 = 3, split by the doubled 4 and the written 2), was not refused."""
    current = _current(tmp_path, cli, _batch(2, 24), *options)
    assert _said(current, "dpo-mini-batch-split") == [("dpo-mini-batch-split-refused", LEGACY.format(where=where)),
                                                      ("dpo-mini-batch-split-refused", ON_08)]
    assert current["refused"]


def test_verl_08_line_only_where_its_figures_trip_it_and_its_release_runs_it(tmp_path: Path, cli: Cli):
    """16 / 8 = 2 per GPU: the doubled 4 before verl 0.8 splits it, the written 2 on verl 0.8 does not, so the config
    runs there (not refused); Trinity 0.5 never runs verl 0.8's engine (``trainer/trainer.py:371-382`` in 0.6.0 picks
    the line, 0.5.1 has only ``trainer/verl``); a size left unset verl 0.8 refuses first (``micro-batch-unset``)."""
    assert [code for code, _ in _said(_current(tmp_path, cli, _batch(2, 16)), "dpo-mini-batch-split")] == [
        "dpo-mini-batch-split"]
    assert [code for code, _ in _said(_current(tmp_path, cli, _batch(2, 24), "--trinity-version", "0.5"),
                                      "dpo-mini-batch-split")] == ["dpo-mini-batch-split-refused"]
    assert all("verl 0.8 or later, which doubles nothing" not in words
               for _, words in _said(_current(tmp_path, cli, _batch(None, 24)), "dpo-mini-batch-split"))
    # 32 / 8 = 4: 2 and its double divide it
    assert _said(_current(tmp_path, cli, _batch(2, 32)), "dpo-mini-batch-split") == []


SPLIT_ANY = ("Dynamic batch sizes off in the actor's update: {where} as the trainer starts, and 0.6 on verl 0.8 or later at "
             "the actor's first update (workers/engine/utils.py:91-93 in verl 0.8.0, :125-127 in 0.9.0 and 0.9.1) that "
             f"its micro-batch per GPU, 3 sequences ({ACTOR_SIZE} 3), divides its mini-batch per GPU, "
             "buffer.train_batch_size 64 over the 8 data-parallel ranks (trainer GPUs 8 / SP 1) = 8, which it does not: "
             "the trainer fails there; make buffer.train_batch_size a multiple of 24 (8 ranks x 3; the nearest to 64: "
             "72)")


@pytest.mark.parametrize(("version", "where"), [
    (None, "Trinity 0.5, and 0.6 on verl before 0.8, assert"), ("0.6", "Trinity 0.6 on verl before 0.8 asserts")])
def test_another_algorithm_is_judged_against_the_mini_batch_too(version: str | None, where: str):
    """verl 0.8's engine asserts the micro-batch divides the mini-batch for every algorithm (Trinity 0.6.0's
    ``_update_actor``, ``trainer/verl/trainer.py:794-808``, hands it the train batch whatever the algorithm), as the
    legacy worker does as the trainer starts (``verl_legacy/fsdp_workers.py:255-266``, DPO or not): before
    (roles87), a GRPO config with the actor's 3 and 64 / 8 = 8 per GPU got no line and was not refused. Without
    DPO nothing is doubled, so one line says both verl lines; the 2 that `_dpo` writes divides 8."""
    def split(size: int, **trainer: Any) -> list[tuple[str, str]]:
        return [(problem.code, problem.words) for problem in trinity_config_problems(
            _dpo(size, algorithm="grpo", **trainer), CATALOG.model("8B"), 8, version=version, train_batch_size=64)
            if "mini-batch-split" in problem.code]

    assert split(3) == [("mini-batch-split-refused", SPLIT_ANY.format(where=where))]
    assert ConfigProblemCode.MINI_BATCH_SPLIT_REFUSED in REFUSED_CONFIG_CODES
    assert split(2) == []
    # the deprecated size for the whole batch, 24 over the 8 ranks: 3 before verl 0.8, which refuses it (said
    # elsewhere), so a verl line runs it: not refused
    deprecated = {"trainer_config": {"actor_rollout_ref": {"actor": {"ppo_micro_batch_size": 24}}}}
    assert [code for code, _ in split(2, **deprecated)] == ["mini-batch-split"]


FORWARD_SPLIT = ("Dynamic batch sizes off in {role}: Trinity 0.6 on verl 0.8 or later asserts at {first} "
                 "(workers/engine/utils.py:91-93 in verl 0.8.0, :125-127 in 0.9.0 and 0.9.1) that its micro-batch per "
                 "GPU, 3 sequences (trainer.trainer_config.actor_rollout_ref.{key}.log_prob_micro_batch_size_per_gpu 3), "
                 "divides the rows each GPU takes, buffer.train_batch_size 64 over the 8 data-parallel ranks (trainer "
                 "GPUs 8 / SP 1) = 8, which it does not: the trainer fails there; make buffer.train_batch_size a "
                 "multiple of 24 (8 ranks x 3; the nearest to 64: 72)")


def test_the_log_prob_forward_is_judged_against_the_rows_each_gpu_takes_on_verl_08():
    """verl 0.8's engine asserts in every pass, its forwards too (``infer_batch``, ``workers/engine_workers.py:392`` in
    0.8.0), that the micro-batch size divides the rows each GPU takes: the ref's forward with its own size, or with
    LoRA (``ref_in_actor``, Trinity 0.6.0 ``trainer/verl/trainer.py:252``) the actor's with the rollout's. Before
    (roles87b), a GRPO config with the ref's 3 and 64 / 8 = 8 rows per GPU got no line. Never refused: verl before 0.8
    cuts a forward with ``data.split``, no assertion (verl 0.7.1 ``workers/actor/dp_actor.py:470``)."""
    def split(ref: int, version: str | None = None, algorithm: str = "grpo", **config: Any) -> list[tuple[str, str]]:
        roles = {"ref": {"log_prob_micro_batch_size_per_gpu": ref}, "rollout": {"log_prob_micro_batch_size_per_gpu": 3}}
        mapping = _dpo(2, algorithm=algorithm, trainer_config={"actor_rollout_ref": {
            "actor": {"ppo_micro_batch_size_per_gpu": 2}, **roles}})
        mapping["model"].update(config)
        return [(problem.code, problem.words) for problem in trinity_config_problems(
            mapping, CATALOG.model("8B"), 8, version=version, train_batch_size=64) if "mini-batch-split" in problem.code]

    ref = FORWARD_SPLIT.format(role="the ref's forward", first="the ref's first forward", key="ref")
    assert split(3) == split(3, "0.6") == split(3, algorithm="dpo") == [("mini-batch-split", ref)]
    assert split(2) == split(3, "0.5") == split(3, algorithm="asymre") == []  # divides; no verl 0.8; no ref
    # LoRA: the actor without its adapter gives the ref's log-probs, with the rollout's 3 (the ref's 2 unread)
    assert split(2, lora_configs=[{"lora_rank": 8}]) == [("mini-batch-split", FORWARD_SPLIT.format(
        role="the actor's forward for the ref's log-probs (LoRA, model.lora_configs)",
        first="that forward's first step", key="rollout"))]
    assert split(3, lora_configs=[{"lora_rank": 0}]) == [("mini-batch-split", ref)]  # no adapter on verl 0.8


def _forward_split(ref: int = 2, version: str | None = None, algorithm_type: str = "grpo", sp: int = 1,
                   **config: Any) -> list[tuple[str, str]]:
    """(code, words) of each ``mini-batch-split`` line of `_dpo`'s config trained by `algorithm_type` (the ref's size
    `ref`, the rollout's 3), at the trainer's SP `sp`, with `config`'s top-level sections over those, for `version`."""
    mapping = _dpo(2, algorithm=algorithm_type, ulysses_sequence_parallel_size=sp, trainer_config={"actor_rollout_ref": {
        "actor": {"ppo_micro_batch_size_per_gpu": 2}, "ref": {"log_prob_micro_batch_size_per_gpu": ref},
        "rollout": {"log_prob_micro_batch_size_per_gpu": 3}}})
    for section, keys in config.items():
        mapping.setdefault(section, {}).update(keys)
    return [(problem.code, problem.words) for problem in trinity_config_problems(
        mapping, CATALOG.model("8B"), 8, version=version, train_batch_size=64) if "mini-batch-split" in problem.code]


RECOMPUTE = {"role": "the actor's recompute of the old log-probs (algorithm.bypass_old_logprobs false)",
             "first": "that recompute's first step", "key": "rollout"}


def test_the_recompute_of_the_old_log_probs_is_judged_on_verl_08():
    """recompute88: with ``algorithm.bypass_old_logprobs`` false Trinity 0.6.0 has the actor recompute the old
    log-probs each step (``trainer/verl/trainer.py:517``), with the rollout's micro-batch size
    (``workers/engine_workers.py:564`` in verl 0.8.0), which verl's engine asserts divides the rows each GPU takes.
    Before, the key was unread and the rollout's 3 against 64 / 8 = 8 rows per GPU got no line. True (the default)
    runs none; verl before 0.8 asserts nothing in a forward; where LoRA's ref forward takes the same size, the
    recompute, which runs first, is the one line."""
    off = {"algorithm": {"bypass_old_logprobs": False}}
    line = ("mini-batch-split", FORWARD_SPLIT.format(**RECOMPUTE))
    assert _forward_split(**off) == _forward_split(None, "0.6", "sft", **off) == [line]
    assert _forward_split() == _forward_split(algorithm={"bypass_old_logprobs": True}) == []
    assert _forward_split(version="0.5", **off) == []
    assert _forward_split(model={"lora_configs": [{"lora_rank": 8}]}, **off) == [line]
    # the ref's own 3 too: each its own line, in the order they run
    assert [words.split(":")[0] for _, words in _forward_split(3, **off)] == [
        f"Dynamic batch sizes off in {RECOMPUTE['role']}", "Dynamic batch sizes off in the ref's forward"]


def test_an_unreadable_bypass_old_logprobs_leaves_the_verdict_unknown(tmp_path: Path, cli: Cli):
    """recompute88: ``algorithm.bypass_old_logprobs`` from an unset variable, where its recompute would fail on its
    rows, is among ``unread_keys`` (whether the config trains is unknown), not where the recompute would run."""
    def config(rollout: int) -> dict[str, Any]:
        unread = _dpo(2, algorithm="grpo", trainer_config={"actor_rollout_ref": {
            "actor": {"ppo_micro_batch_size_per_gpu": 2}, "ref": {"log_prob_micro_batch_size_per_gpu": 2},
            "rollout": {"log_prob_micro_batch_size_per_gpu": rollout}}})
        unread["algorithm"]["bypass_old_logprobs"] = "${oc.env:RECOMPUTE88_BYPASS}"
        return unread

    current = _current(tmp_path, cli, config(3), "--trinity-version", "0.6")
    assert current["unread_keys"] == ["algorithm.bypass_old_logprobs"]
    # wording88: the key decides whether the recompute, which would fail on its rows, runs, not any tokens per GPU
    assert ("whether it trains is unknown: whether it runs the actor's recompute of the old log-probs, whose "
            "micro-batch size does not divide the rows each GPU takes (a verl assertion fails), depends on "
            "algorithm.bypass_old_logprobs, which cannot be read here (set it as the run will, and judge again)"
            ) in current["verdict"]
    assert forward_unread_keys(config(3), CATALOG.model("8B"), 8, train_batch_size=64) == (
        "algorithm.bypass_old_logprobs",)
    assert forward_unread_keys(config(2), CATALOG.model("8B"), 8, train_batch_size=64) == ()
    assert forward_unread_keys(config(3), CATALOG.model("8B"), 8, version="0.5", train_batch_size=64) == ()


ENGINE_SP = "trainer.trainer_config.actor_rollout_ref.{role}.fsdp_config.ulysses_sequence_parallel_size"


def test_verl_08_runs_the_actor_and_the_ref_at_their_engines_sp_beside_a_trainer_sp_of_1():
    """recompute88: Trinity 0.6.0 deep-merges a role's ``fsdp_config.ulysses_sequence_parallel_size`` over the
    trainer's (no ``FROZEN_KEYS``, ``trainer/verl/config.py:514``), and verl 0.8's ``FSDPActorConfig`` runs the
    role's engine there unless the role's own SP, frozen to the trainer's, is above 1 (``workers/config/actor.py:320``
    in verl 0.8.0). Before, the key was unread: at engine SP 2 on 8 GPUs the ref's 16 and the actor's 16 were judged
    against 64 / 8 = 8 rows per GPU, not 64 / 4 = 16, and no line said where the roles run."""
    def split(sp: int = 1, **roles: int) -> list[tuple[str, str]]:
        engines = {role: {"fsdp_config": {"ulysses_sequence_parallel_size": engine}} for role, engine in roles.items()}
        mapping = _dpo(16, algorithm="grpo", ulysses_sequence_parallel_size=sp, trainer_config={"actor_rollout_ref": {
            "actor": {"ppo_micro_batch_size_per_gpu": 16, **engines.get("actor", {})},
            "ref": {"log_prob_micro_batch_size_per_gpu": 16, **engines.get("ref", {})},
            "rollout": {"log_prob_micro_batch_size_per_gpu": 1}}})
        return [(problem.code, problem.words.split(":")[0]) for problem in trinity_config_problems(
            mapping, CATALOG.model("8B"), 8, version="0.6", train_batch_size=64)
            if "mini-batch-split" in problem.code or problem.code == "role-sp-differs"]

    update, ref = "Dynamic batch sizes off in the actor's update", "Dynamic batch sizes off in the ref's forward"
    assert split() == [("mini-batch-split-refused", update), ("mini-batch-split", ref)]
    # the ref at SP 2: 16 rows per GPU; the actor at SP 2 too: verl 0.8 splits nothing, verl before 0.8 still does
    differs = "{} 2 is not trainer.ulysses_sequence_parallel_size 1"
    assert split(ref=2, actor=2) == [("role-sp-differs", differs.format(ENGINE_SP.format(role="actor"))),
                                     ("role-sp-differs", differs.format(ENGINE_SP.format(role="ref"))),
                                     ("mini-batch-split", update)]
    # beside a trainer SP above 1 verl runs the role at the trainer's: 64 / 4 = 16 rows either way
    assert [code for code, _ in split(2, ref=4)] == ["role-sp-differs"]
    full = [problem.words for problem in trinity_config_problems(
        _dpo(2, algorithm="grpo", ulysses_sequence_parallel_size=2, trainer_config={"actor_rollout_ref": {
            "ref": {"fsdp_config": {"ulysses_sequence_parallel_size": 4}}}}), CATALOG.model("8B"), 8, version="0.6")
            if problem.code == "role-sp-differs"]
    assert full == [(f"{ENGINE_SP.format(role='ref')} 4 is not trainer.ulysses_sequence_parallel_size 2: Trinity 0.6 "
                     "on verl 0.8 or later runs the ref at SP 2 all the same (verl puts the role's own SP, which "
                     "Trinity sets to the trainer's, over its engine's where above 1: workers/config/actor.py:320-321 "
                     "in verl 0.8.0, :328-329 in 0.9.1), and with verl before 0.8 Trinity 0.6 drops it; the verdict "
                     "is at SP 2: set them alike (solver.trinity.patch_trinity_config does)")]


def test_an_engine_sp_verl_08_fails_at_is_said_where_it_fails():
    """recompute88: the ref's engine at SP 3 on 8 GPUs, whose Ulysses mesh leaves 2 out (verl 0.8.0
    ``workers/engine/fsdp/transformer_impl.py:226``); the actor's at SP 16, which does not divide them either, then at SP
    64 on 64 GPUs, which Qwen3-8B's 32 attention heads do not allow (verl's Ulysses patch asserts it,
    ``models/transformers/monkey_patch.py:338``); without a
    release the line says that Trinity 0.5 refuses the key. Never refused: verl before 0.8 drops it."""
    def lines(gpus: int, version: str | None, **roles: int) -> list[tuple[str, str]]:
        mapping = _dpo(2, algorithm="grpo", trainer_config={"actor_rollout_ref": {
            role: {"fsdp_config": {"ulysses_sequence_parallel_size": engine}} for role, engine in roles.items()}})
        return [(problem.code, problem.words.split(", and with verl before 0.8 ")[1].split(";")[0]
                 if problem.code == "role-sp-differs" else "") for problem in trinity_config_problems(
            mapping, CATALOG.model("8B"), gpus, version=version) if problem.code.startswith("role-sp")]

    assert lines(8, "0.6", ref=3) == [("role-sp-differs", "Trinity 0.6 drops it")]
    refuses_05 = "Trinity 0.6 drops it (and Trinity 0.5 refuses it: its FSDPConfig has no such key)"
    assert lines(8, None, ref=3) == [("role-sp-differs", refuses_05)]
    mapping = _dpo(2, algorithm="grpo", trainer_config={"actor_rollout_ref": {
        "ref": {"fsdp_config": {"ulysses_sequence_parallel_size": 3}},
        "actor": {"fsdp_config": {"ulysses_sequence_parallel_size": 16}}}})
    words = [problem.words for problem in trinity_config_problems(mapping, CATALOG.model("8B"), 8, version="0.6")
             if problem.code == "role-sp-differs"]
    assert ", where SP=16 does not divide 8 GPUs" in words[0]
    assert ("runs the ref at SP 3, its engine's over the trainer's 1 (checking it against nothing), where SP=3 does "
            "not divide 8 GPUs: its engine's SP mesh holds 6 of them and it fails as it starts on the 2 left out") in (
        words[1])
    mapping["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["fsdp_config"] = {
        "ulysses_sequence_parallel_size": 64}
    heads = [problem.words for problem in trinity_config_problems(mapping, CATALOG.model("8B"), 64, version="0.6")
             if problem.code == "role-sp-differs"]
    assert (", where SP=64 does not divide its 32 attention heads of Qwen3-8B, which verl asserts as it loads the "
            "model: it fails there, and with verl before 0.8") in heads[0]


LORA_REF = "LoRA, model.lora_configs: the actor's engine without its adapter gives the ref's log-probs"


@pytest.mark.parametrize(("algorithm", "lora", "why"), [
    ("sft", False, "algorithm_type sft uses no ref model"),
    ("grpo", True, LORA_REF)])
def test_the_ref_engine_sp_line_says_no_ref_runs_where_verl_08_builds_none(algorithm: str, lora: bool, why: str):
    """refsp88: SFT uses no ref, and under LoRA verl 0.8 gives the ref's log-probs from the actor (``ref_in_actor``):
    the ref's engine SP runs nothing there. Before, the line said verl 0.8 runs the ref at SP 4."""
    mapping = _dpo(2, algorithm=algorithm, trainer_config={"actor_rollout_ref": {
        "ref": {"fsdp_config": {"ulysses_sequence_parallel_size": 4}}}})
    if lora:
        mapping["model"]["lora_configs"] = [{"lora_rank": 16}]
    words = [problem.words for problem in trinity_config_problems(mapping, CATALOG.model("8B"), 8, version="0.6")
             if problem.code == "role-sp-differs"]
    assert words == [(f"{ENGINE_SP.format(role='ref')} 4 is not trainer.ulysses_sequence_parallel_size 1: Trinity 0.6 "
                      f"on verl 0.8 or later builds no ref engine, so nothing reads it ({why}), and with verl before "
                      "0.8 Trinity 0.6 drops it; the verdict is at SP 1: set them alike "
                      "(solver.trinity.patch_trinity_config does)")]


def test_the_actor_engine_sp_line_is_about_the_actors_engine_where_no_ref_runs():
    # mutants49: only the ref's line says no ref engine is built; the actor's engine runs at its SP under SFT too
    mapping = _dpo(2, algorithm="sft", trainer_config={"actor_rollout_ref": {
        "actor": {"fsdp_config": {"ulysses_sequence_parallel_size": 4}}}})
    [words] = [problem.words for problem in trinity_config_problems(mapping, CATALOG.model("8B"), 8, version="0.6")
               if problem.code == "role-sp-differs"]
    assert words.startswith(f"{ENGINE_SP.format(role='actor')} 4 is not trainer.ulysses_sequence_parallel_size 1: "
                            "Trinity 0.6 on verl 0.8 or later runs the actor at SP 4") and "no ref" not in words


DYNAMIC_FIX = "it runs, but is not DPO: set trainer.use_dynamic_bsz to false (--write does)"


@pytest.mark.parametrize(("size", "version", "advice"), [
    (1, "0.5.1", ""),
    (3, "0.5.1", f", and for {ACTOR_SIZE} set it to 1, one pair, a chosen and a rejected sequence, once doubled"),
    (1, "0.6", (f", and for {ACTOR_SIZE} set it to 2, one pair, a chosen and a rejected sequence, on verl 0.8 or "
                "later (its 1 is one pair before 0.8, which Trinity doubles)")),
    (2, None, (f", and for {ACTOR_SIZE} set it to 1 before verl 0.8, which Trinity doubles to one pair (its 2 is one "
               "pair on verl 0.8 or later)")),
    (3, "0.6", (f", and for {ACTOR_SIZE} set it to 2, one pair, a chosen and a rejected sequence, on verl 0.8 or "
                "later, and to 1 before 0.8, which Trinity doubles to one pair"))])
def test_dynamic_dpo_advises_the_actors_size_only_where_it_changes_it(tmp_path: Path, cli: Cli, size: int,
                                                                      version: str | None, advice: str):
    """``dpo-pair-dynamic``'s fix named the actor's pair size even where it already was one (``set it to 1`` for a
    1 under 0.5.1, whose 0.5 line doubles it: ``trainer/verl_legacy/verl_config.py:685-688`` in 0.6.0, the same
    doubling in 0.5.1's ``trainer/verl/verl_config.py``); now only what changes it."""
    config = _batch(size, 64)
    config["trainer"]["use_dynamic_bsz"] = True
    options = ("--trinity-version", version) if version else ()
    ((_, words),) = _said(_current(tmp_path, cli, config, *options), "dpo-pair-dynamic")
    assert words.endswith(DYNAMIC_FIX + advice)


@pytest.mark.parametrize(("batch", "divisor", "nearest"), [
    (37, 16, (32,)), (40, 16, (32, 48)), (9, 16, (16,)), (63, 6, (60, 66)), (256, 3, (255,)), (5, 2, (4, 6)),
    (1, 8, (8,))])
def test_nearest_dividing_batches(batch: int, divisor: int, nearest: tuple[int, ...]):
    assert nearest_dividing_batches(batch, divisor) == nearest


def test_dividing_batch_words_name_the_nearest_batch():
    assert dividing_batch_words(16, 1, False, 37) == (
        "a train batch that 16 data-parallel ranks divide (the nearest to 37: 32)")
    assert dividing_batch_words(6, 2, True, 63) == (
        "a train batch that 6 trainer GPUs divide (the nearest to 63: 60 or 66)")
    assert dividing_batch_words(6, 2, False) == "a train batch that 3 data-parallel ranks divide"
    # DPO's pairs (dpobatch92): twice the ranks, and with 0.5.0 / 0.5.1's GPUs rule both
    assert dividing_batch_words(8, 2, False, 36, pairs=True) == (
        "a train batch that 8 divides (DPO's pairs: 2 x 4 data-parallel ranks; the nearest to 36: 32 or 40)")
    assert dividing_batch_words(8, 1, True, 72, pairs=True) == (
        "a train batch that 16 divides (DPO's pairs: 2 x 8 data-parallel ranks, and the 8 trainer GPUs; the nearest "
        "to 72: 64 or 80)")
    assert dividing_batch_words(6, 2, True, pairs=True) == (
        "a train batch that 6 divides (DPO's pairs: 2 x 3 data-parallel ranks, and the 6 trainer GPUs)")


def test_batch_split_violation_in_pairs_names_twice_the_ranks():
    # coverage92: a DPO batch of 6 on 6 GPUs at SP=1 (6 ranks divide it, 12 pair rows do not), as a cluster job's
    # reason says it; at SP=2 (2 x 3 ranks) it splits
    assert batch_split_violation(6, 6, 1, "the job's train_batch_size") is None
    assert batch_split_violation(6, 6, 2, pairs=True) is None
    assert batch_split_violation(6, 6, 1, "the job's train_batch_size", pairs=True) == (
        "the train batch of 6 (the job's train_batch_size) must split evenly into DPO's pairs over the data-parallel "
        "ranks, and 12 (DPO's pairs: 2 x 6 data-parallel ranks, 6 GPUs / SP=1) do not divide it: "
        + DPO_PAIR_BATCH_WORDS)


def test_write_without_a_plan_for_the_batch_names_the_nearest_that_splits(tmp_path: Path, cli: Cli):
    """A batch of 37 on 16 trainer GPUs: no SP of Qwen3-8B's leaves ranks that divide it (verl 0.8.0's engine asserts
    ``mini_batch_size % dp``, ``workers/engine_workers.py:258``), so no plan, and ``--write`` writes nothing and sets
    no batch (docs/trinity.md, "What it does not set"); the reason now names the batch to set, 32, not only the rule:
    for DPO, one twice the ranks divide (dpobatch92), each rank's share in whole micro-batches of one pair."""
    config = _batch(2, 37)
    config["cluster"]["node_num"] = 2
    path, out_path = tmp_path / "c.yaml", tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    status, out, err = cli("--from-config", str(path), "--gpu", "h100", "--gpus", "16", "--write", str(out_path))
    assert status == 1 and not out_path.exists()
    assert f"solve: note: no plan, so {out_path} is not written" in err
    assert ("a train batch that 32 divides (DPO's pairs: 2 x 16 data-parallel ranks; the nearest to 37: 32) lets Env "
            "on 16 GPUs train it" in " ".join(out.split()))


def test_json_md_says_the_refused_code_comes_with_0_6_too():
    # json.md's row said dpo-mini-batch-split-refused came with --trinity-version 0.5 alone, where the test above has it
    # without one and with 0.6 (both verl lines split the mini-batch)
    page = (Path(__file__).resolve().parent.parent / "docs" / "json.md").read_text(encoding="utf-8")
    row = next(line for line in page.splitlines() if line.startswith("| `dpo-mini-batch-split-refused` |"))
    assert "with 0.6 or none where Trinity 0.6 on verl 0.8 or later fails on the size as written too" in row


def test_the_actor_and_ref_forward_lines_only_where_their_release_and_batch_trip_them():
    """mutants47: the actor's own dynamic batch sizes on run Trinity 0.5 (which reads them) but not 0.6 (which sets the
    trainer's): its split is not refused. The ref's forward is not judged on a batch its ranks do not divide, with
    dynamic batch sizes on, or beside the ref's deprecated size for the whole batch (each said elsewhere)."""
    def split(batch: int = 64, actor: dict[str, Any] | None = None, ref: dict[str, Any] | None = None,
              **trainer: Any) -> list[tuple[str, str]]:
        mapping = _dpo(2, algorithm="grpo", trainer_config={"actor_rollout_ref": {
            "actor": actor or {"ppo_micro_batch_size_per_gpu": 2},
            "ref": ref or {"log_prob_micro_batch_size_per_gpu": 3},
            "rollout": {"log_prob_micro_batch_size_per_gpu": 1}}}, **trainer)
        return [(problem.code, problem.words) for problem in trinity_config_problems(
            mapping, CATALOG.model("8B"), 8, train_batch_size=batch) if "mini-batch-split" in problem.code]

    ran_by_05 = {"ppo_micro_batch_size_per_gpu": 3, "use_dynamic_bsz": True}
    assert split(actor=ran_by_05, ref={"log_prob_micro_batch_size_per_gpu": 1}) == [
        ("mini-batch-split", SPLIT_ANY.format(where="Trinity 0.6 on verl before 0.8 asserts"))]
    assert [words.split(":")[0] for _, words in split(60)] == ["Dynamic batch sizes off in the actor's update"]
    assert split(use_dynamic_bsz=True) == []
    assert split(ref={"log_prob_micro_batch_size_per_gpu": 3, "log_prob_micro_batch_size": 24}) == []


def test_engine_sps_are_read_as_verl_runs_them_and_an_unread_bypass_decides_nothing_a_failing_forward_said():
    """mutants48: under a Megatron trainer, which drops ``fsdp_config``, the roles' engine SPs are neither said nor
    judged at (the ref's 16 against 64 / 8 rows, not 64 / 4); an actor engine SP whose ranks do not divide the batch
    fails at the actor's first update, the ref's (which updates nothing) not; an unreadable
    ``algorithm.bypass_old_logprobs`` decides nothing where LoRA's ref forward fails on the same size first."""
    def problems(mapping: dict[str, Any], batch: int = 64) -> list[tuple[str, str]]:
        return [(problem.code, problem.words) for problem in trinity_config_problems(
            mapping, CATALOG.model("8B"), 8, version="0.6", train_batch_size=batch)
            if "mini-batch-split" in problem.code or problem.code == "role-sp-differs"]

    engines = {"fsdp_config": {"ulysses_sequence_parallel_size": 2}}
    megatron = _dpo(16, algorithm="grpo", trainer_strategy="megatron", trainer_config={"actor_rollout_ref": {
        "actor": {"ppo_micro_batch_size_per_gpu": 16, **engines}, "ref": {"log_prob_micro_batch_size_per_gpu": 16,
                                                                          **engines},
        "rollout": {"log_prob_micro_batch_size_per_gpu": 1}}})
    assert [(code, words.split(":")[0]) for code, words in problems(megatron)] == [
        ("mini-batch-split-refused", "Dynamic batch sizes off in the actor's update"),
        ("mini-batch-split", "Dynamic batch sizes off in the ref's forward")]
    lines = {role: problems(_dpo(2, algorithm="grpo", trainer_config={"actor_rollout_ref": {role: engines}}), 6)
             for role in ("actor", "ref")}
    assert [code for code, _ in lines["actor"] + lines["ref"]] == ["role-sp-differs", "role-sp-differs"]
    assert ("(checking it against nothing), where the train batch of 6 (buffer.train_batch_size) must split evenly "
            "over the data-parallel ranks, and 4 (8 GPUs / SP=2) do not divide it, which verl asserts at the actor's "
            "first update (verl 0.8.0 workers/engine_workers.py:258): it fails there;") in lines["actor"][0][1]
    assert "(checking it against nothing), and with verl before 0.8 Trinity 0.6 drops it;" in lines["ref"][0][1]
    # the actor's 3 splits 8 rows per GPU before verl 0.8 and 16 at its engine's SP 2 on verl 0.8: a line for each
    both = _dpo(3, algorithm="grpo", trainer_config={"actor_rollout_ref": {
        "actor": {"ppo_micro_batch_size_per_gpu": 3, **engines}, "ref": {"log_prob_micro_batch_size_per_gpu": 1},
        "rollout": {"log_prob_micro_batch_size_per_gpu": 1}}})
    assert [(code, words.split(", which it does not")[0].split(" over the ")[1]) for code, words in problems(both)
            if code.startswith("mini")] == [
        ("mini-batch-split-refused", "8 data-parallel ranks (trainer GPUs 8 / SP 1) = 8"),
        ("mini-batch-split-refused", "4 data-parallel ranks (trainer GPUs 8 / SP 2) = 16")]
    lora = _dpo(2, algorithm="grpo", trainer_config={"actor_rollout_ref": {
        "actor": {"ppo_micro_batch_size_per_gpu": 2}, "ref": {"log_prob_micro_batch_size_per_gpu": 2},
        "rollout": {"log_prob_micro_batch_size_per_gpu": 3}}})
    lora["algorithm"]["bypass_old_logprobs"] = "${oc.env:RECOMPUTE88_BYPASS}"
    lora["model"]["lora_configs"] = [{"lora_rank": 8}]
    assert forward_unread_keys(lora, CATALOG.model("8B"), 8, train_batch_size=64) == ()
    assert [words.split(":")[0] for _, words in problems(lora)] == [
        "Dynamic batch sizes off in the actor's forward for the ref's log-probs (LoRA, model.lora_configs)"]


def test_a_dpo_batch_twice_the_ranks_do_not_divide_moves_the_plan_or_leaves_none(cli: Cli):
    """dpobatch92: 72 on 8 H100s at SP 1 (9 per rank) splits the actor's one-pair micro-batch on every release (0.5's
    1 doubled, 0.6's 2 on verl 0.8), which the planner planned anyway; now SP 2 (4 ranks, 18 each), and pinned to SP 1
    on exactly 8, no plan, the reason naming the batch and why; 80 (10 per rank) keeps SP 1."""
    asked = ("--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "8k", "--dpo")
    status, out, _ = cli(*asked, "--train-batch-size", "72")
    shown = " ".join(out.split())  # the other batch row says the pairs' rule (mutants56)
    assert status == 0 and "plan Env + SP=2 on 8 of 8 GPUs " in shown and ("other batch with a train batch that 16 "
                                                                           "divides (DPO's pairs: 2 x 8 data-parallel "
                                                                           "ranks): Env on 8 GPUs") in shown
    status, out, _ = cli(*asked, "--train-batch-size", "72", "--exact", "--sp", "1", "--explain")
    shown = " ".join(out.split())  # and the explanation's rule (mutants56)
    assert status == 1 and ("a train batch that 16 divides (DPO's pairs: 2 x 8 data-parallel ranks; the nearest to "
                            "72: 64 or 80) lets Env on 8 GPUs train it") in shown
    assert ("twice the data-parallel ranks (DPO's pairs: 2 x trainer GPUs / SP; each data-parallel rank's share of "
            "the batch must divide by the actor's micro-batch of one pair") in shown
    # the nearest plan beyond the limits takes a batch in the pairs too (mutants56): SP=4 on 8 GPUs, 2 ranks, so 4
    status, out, _ = cli("--model", "4B", "--gpu", "a100-40g", "--len", "16384", "--gpus", "8", "--sp", "4", "--exact",
                         "--train-batch-size", "5", "--no-estimate", "--dpo")
    assert status == 1 and ("Env + SP=4 on 8 GPUs at 16384 tokens: drop --no-estimate and take a train batch that 4 "
                            "divides (DPO's pairs: 2 x 2 data-parallel ranks; the nearest to 5: 4)"
                            ) in " ".join(out.split())
    status, out, _ = cli(*asked, "--train-batch-size", "80", "--exact", "--sp", "1", "--json")
    assert status == 0 and [(p["gpus"], p["sp"]) for p in json.loads(out)[0]["plans"]] == [(8, 1)]


@pytest.mark.parametrize(("batch", "refused"), [(72, True), (80, False)])
def test_check_and_the_planner_agree_on_a_dpo_batch(tmp_path: Path, cli: Cli, batch: int, refused: bool):
    """The config's 8 GPUs at SP 1 with the actor's 1 (doubled to 2 on 0.5): ``--check`` refuses 72 (9 per rank) as the
    planner does, whose plan for it moves to SP 2; 80 (10 per rank) both take, the plan at the config's SP 1."""
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(_batch(1, batch)), encoding="utf-8")
    _, out, _ = cli("--from-config", str(path), "--gpu", "h100", "--gpus", "8", "--check", "--json",
                    "--trinity-version", "0.5")
    (answer,) = json.loads(out)
    split = [code for code in answer["current"]["config_problem_codes"] if code.startswith("dpo-mini-batch-split")]
    assert split == (["dpo-mini-batch-split-refused"] if refused else [])
    assert answer["plans"][0]["sp"] == (2 if refused else 1)


@pytest.mark.parametrize(("options", "verdict"), [
    ((), "it trains (estimated"), (("--trinity-version", "0.5"), "it fits in memory (estimated")])
def test_the_verdict_judges_a_dpo_config_by_its_own_sizes_not_the_plans_pairs(
        tmp_path: Path, cli: Cli, options: tuple[str, ...], verdict: str):
    """mutants58: 72 on the config's 8 GPUs at SP 1 splits over its ranks (9 each) but not in the plans' pairs (16):
    the verdict judges the config's own sizes (its dpo-mini-batch-split line says what fails), so it is at the config's
    SP 1 with the memory it needs, not ruled out as no plan of the pairs' rule; the plan moves to SP 2."""
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(_batch(1, 72)), encoding="utf-8")
    _, out, _ = cli("--from-config", str(path), "--gpu", "h100", "--gpus", "8", "--check", "--json", *options)
    (answer,) = json.loads(out)
    current = answer["current"]
    assert (current["gpus"], current["sp"], current["trains"], answer["plans"][0]["sp"]) == (8, 1, True, 2)
    assert f"at 8192 tokens (Env off, PYTORCH_CUDA_ALLOC_CONF unset in this shell): {verdict}" in current["verdict"]
    assert [code for code in current["config_problem_codes"] if code.startswith("dpo-mini-batch-split")] == [
        "dpo-mini-batch-split" + ("-refused" if options else "")]
