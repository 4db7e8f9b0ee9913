"""Batch keys of the critic and of DPO (session 75). A trained critic's ``ppo_micro_batch_size`` (deprecated, for the
whole batch) without ``forward_micro_batch_size``: the critic worker of Trinity 0.5, and of 0.6 on verl before 0.8,
divides both by the data-parallel ranks as it starts and fails on the unset one (``None //= ranks``), with dynamic
batch sizes on or off; Trinity 0.6 on verl 0.8 or later gives it 1. The critic's forward size per GPU left unset with
dynamic batch sizes off fails verl 0.7's first value forward for any model, not only a padded one. DPO with dynamic
batch sizes off on verl 0.8 or later: Trinity doubles no size, and its loss pairs each micro-batch's rows, so an odd
actor size splits the pairs (``dpo-pair-split``, a line that refuses nothing: the run is not DPO, but runs). Session
87 (critic87): Trinity 0.6 on verl 0.8 or later cuts a trained critic's passes by its engine's sizes
(``critic.fsdp``) alone, failing where they are unset; the critic's micro-batch against its rows on each verl line.
Session 87 (criticdyn87): the engine's own ``critic.fsdp.use_dynamic_bsz: true`` packs those passes by tokens, needing
no size; the engine's sizes are unread keys as the critic's own; a critic under a Megatron trainer is not judged.
Session 88 (roles88): a critic's own ``critic.strategy`` other than FSDP's under an FSDP trainer fails as the critic
starts before verl 0.8 (refused with Trinity 0.5); the engine's own flag is judged as a role's own (on for any model,
off for a padded one, ``--write`` sets it so), off beside the trainer's on it cuts the critic's passes on verl 0.8 by
the engine's sizes, and unreadable it is an unread key where it decides a micro-batch's sequences. Session 88
(critic88): a padded model's critic's own ``critic.use_dynamic_bsz`` on, which Trinity 0.5 reads, is
``micro-batch-unbounded``; the engine's ``use_remove_padding`` reaches no pass (verl's worker puts the trainer's over
it); a critic's micro-batches of more sequences than the verdict's budget holds fail ``--check``. Session 88
(checks88): a critic's own ``critic.use_dynamic_bsz`` off, for any other model, is ``dynamic-batch-off`` where Trinity
0.5 reads it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import in_train_mode
from test_padbound_s71 import INTERNLM2, WHY, _internlm2_plan
from test_tokbudget_s72 import ARR, CATALOG, CRITIC, Cli, _config

from solver.query import REFUSED_CONFIG_CODES, ConfigProblemCode
from solver.rules import ONE_SEQUENCE_WIDER_WORDS
from solver.tables.model_config import load_model_config
from solver.trinity import read_trinity_config, trinity_config_problems
from solver.trinity.plan_keys import keys_for_plan

WHOLE, FORWARD_WHOLE = f"{CRITIC}.ppo_micro_batch_size", f"{CRITIC}.forward_micro_batch_size"
FORWARD = f"{CRITIC}.forward_micro_batch_size_per_gpu"
ACTOR_SIZE = f"{ARR}.actor.ppo_micro_batch_size_per_gpu"
GIVEN_ON_08 = "; Trinity 0.6 on verl 0.8 or later gives it 1"
FAILS = {
    None: ("micro-batch-unset", "the critic worker of Trinity 0.5, and of 0.6 on verl before 0.8,", GIVEN_ON_08),
    "0.5": ("micro-batch-unset-refused", "Trinity 0.5's critic worker", ""),
    "0.6": ("micro-batch-unset", "Trinity 0.6's critic worker on verl before 0.8", GIVEN_ON_08),
}
"""By release asked for: the code of the line on a critic's whole-batch size without its forward's, whose worker
fails, and what it says on verl 0.8 or later."""
ENGINE = {"fsdp": {"micro_batch_size_per_gpu": 1, "infer_micro_batch_size_per_gpu": 1}}
"""The critic's engine's sizes, which Trinity 0.6 on verl 0.8 or later cuts its passes by (critic87: unset, it fails)."""
ENGINE_SIZES = [f"{CRITIC}.fsdp.micro_batch_size_per_gpu", f"{CRITIC}.fsdp.infer_micro_batch_size_per_gpu"]
ENGINE_DYN = f"{CRITIC}.fsdp.use_dynamic_bsz"
ENGINE_SCOPE = ("for the critic's passes on Trinity 0.6 with verl 0.8 or later only: 0.6 on verl before 0.8 drops the "
                "section")


def _problems(config: dict[str, Any], version: str | None = None, prefix: tuple[str, ...] = ("micro-batch", "dpo"),
              batch: int | None = None) -> list[tuple[str, str]]:
    """(code, words) of `config`'s problems for Qwen3-8B on 8 trainer GPUs (a train `batch`, where given) whose code
    starts with one of `prefix`."""
    found = trinity_config_problems(config, CATALOG.model("8B"), 8, version=version,  # type: ignore[arg-type]
                                    train_batch_size=batch)
    return [(problem.code.value, problem.words) for problem in found if problem.code.value.startswith(prefix)]


def _ppo(critic: dict[str, Any], **trainer: Any) -> dict[str, Any]:
    """`_config`'s (Qwen3-8B at 8192 on 8 GPUs, dynamic batch sizes off unless `trainer` says otherwise) for PPO, whose
    critic section is `critic`."""
    config = _config(**trainer)
    config["algorithm"]["algorithm_type"] = "ppo"
    config["trainer"]["trainer_config"]["critic"] = critic
    return config


def _dpo(size: Any = 1, **trainer: Any) -> dict[str, Any]:
    """`_config`'s for DPO, with the actor's micro-batch size per GPU `size` (None: unset), the ref's and the rollout's
    log-prob sizes 1 (unset, verl 0.8 refuses them with dynamic batch sizes off: s83's review83a, its own tests), in
    mode train, the one Trinity trains DPO on a dataset in."""
    config = _config({"actor": {} if size is None else {"ppo_micro_batch_size_per_gpu": size},
                      **{role: {"log_prob_micro_batch_size_per_gpu": 1} for role in ("ref", "rollout")}}, **trainer)
    config["algorithm"]["algorithm_type"] = "dpo"
    config["buffer"]["train_batch_size"] = 64
    return in_train_mode(config)


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
@pytest.mark.parametrize("dynamic", [True, False])
def test_a_critics_whole_batch_size_without_its_forwards_fails_as_the_critic_starts(version: str | None,
                                                                                    dynamic: bool):
    code, who, on_08 = FAILS[version]
    critic = {"ppo_micro_batch_size": 8, "forward_micro_batch_size_per_gpu": 1, **ENGINE}
    assert _problems(_ppo(critic, use_dynamic_bsz=dynamic), version, ("micro-batch-unset",)) == [(code, (
        f"{FORWARD_WHOLE} is not set beside {WHOLE} 8: {who} divides both by the data-parallel ranks as it starts and "
        f"fails on the one without a value (None //= ranks, a TypeError){on_08}: add {FORWARD_WHOLE} (verl's own "
        f"config gives it ppo_micro_batch_size's value, 8), or remove {WHOLE}"))]
    # written null: the same, said so
    nulled = _problems(_ppo({**critic, "forward_micro_batch_size": None}, use_dynamic_bsz=dynamic), version,
                       ("micro-batch-unset",))
    assert [(found, words.split(" beside")[0]) for found, words in nulled] == [(code, f"{FORWARD_WHOLE} is null")]
    # set, the worker divides both; no whole-batch size, it divides neither; no critic trained, nothing read
    assert _problems(_ppo({**critic, "forward_micro_batch_size": 8}, use_dynamic_bsz=dynamic), version,
                     ("micro-batch-unset",)) == []
    assert _problems(_ppo({"forward_micro_batch_size_per_gpu": 1, **ENGINE}, use_dynamic_bsz=dynamic), version) == []
    grpo = _ppo(critic, use_dynamic_bsz=dynamic)
    grpo["algorithm"]["algorithm_type"] = "grpo"
    assert _problems(grpo, version) == []


@pytest.mark.parametrize(("version", "code", "gives"), [
    (None, "micro-batch-unset", "Trinity 0.5, and 0.6 on verl before 0.8, give"),
    ("0.5", "micro-batch-unset-refused", "Trinity 0.5 gives"),
    ("0.6", "micro-batch-unset", "Trinity 0.6 on verl before 0.8 gives")])
def test_a_critics_forward_size_unset_with_dynamic_batch_sizes_off_is_said_for_any_model(
        version: str | None, code: str, gives: str):
    line = (code, (f"{FORWARD} is not set: {gives} the critic's value forward none, by which verl cannot split a "
                   "batch, so it fails: set it to 1, or turn dynamic batch sizes on"))
    # the critic's engine sized, as verl 0.8 or later needs (critic87)
    assert _problems(_ppo({**ENGINE}), version) == [line]
    assert _problems(_ppo({"forward_micro_batch_size_per_gpu": None, **ENGINE}), version) == [
        (line[0], line[1].replace("is not set", "is null"))]
    assert _problems(_ppo({"forward_micro_batch_size_per_gpu": 1, **ENGINE}), version) == []
    # dynamic batch sizes on: verl's value forward splits by the token budget
    assert _problems(_ppo({}, use_dynamic_bsz=True), version) == []
    # the whole-batch sizes set: the worker replaces the forward's size per GPU, so only its own line
    assert _problems(_ppo({"ppo_micro_batch_size": 8, "forward_micro_batch_size": 8, **ENGINE}), version) == []


def test_a_critics_own_dynamic_batch_sizes_count_where_the_release_reads_them():
    # Trinity 0.5 takes the critic's own key over the trainer's; Trinity 0.6 gives it the trainer's, off
    own_on = _ppo({"use_dynamic_bsz": True, **ENGINE})
    assert _problems(own_on, "0.5") == []
    assert [code for code, _ in _problems(own_on, "0.6")] == ["micro-batch-unset"]
    assert _problems(own_on) == []  # not off on every release: Trinity 0.5 runs it on


def test_dpo_with_an_odd_actor_size_and_dynamic_batch_sizes_off_splits_its_pairs():
    head = (f"{ACTOR_SIZE} is {{size}} for DPO with dynamic batch sizes off: Trinity 0.6 on verl 0.8 or later does not "
            "double it, as Trinity on verl before 0.8 does, and Trinity's DPO loss takes a micro-batch's rows in "
            "pairs, a chosen and a rejected sequence: ")
    tail = ("; it runs, but is not DPO: on verl 0.8 or later set it to {even}, an even size (on verl before 0.8, "
            "Trinity doubles what is written)")
    one = ("dpo-pair-split", head.format(size=1) + (
        "each micro-batch holds one sequence, so the loss finds no rejected one: it sums the empty half to 0 and "
        "trains every sequence, the rejected ones too, as a chosen one") + tail.format(even=2))
    assert _problems(_dpo(1)) == _problems(_dpo(1), "0.6") == [one]
    assert _problems(_dpo(3), "0.6") == [("dpo-pair-split", head.format(size=3) + (
        "each micro-batch holds 3 sequences, which splits a pair over two micro-batches, and the loss takes the next "
        "one's rows the other way round, its rejected sequences as chosen") + tail.format(even=4))]
    # Trinity 0.5 (verl before 0.8) doubles the size; an even size keeps whole pairs; dynamic batch sizes on read none
    # (and split pairs their own way: dpo-pair-dynamic, tests/test_dpopairs_s82.py)
    assert _problems(_dpo(1), "0.5") == _problems(_dpo(2)) == []
    assert [code for code, _ in _problems(_dpo(1, use_dynamic_bsz=True), "0.6")] == ["dpo-pair-dynamic"]
    # unset: no pair to split, but verl 0.8 or later is handed none, which it refuses with dynamic batch sizes off
    # (s83's review83a: micro-batch-unset, which names the pair to set)
    assert [code for code, _ in _problems(_dpo(None), "0.6")] == ["micro-batch-unset"]
    grpo = _dpo(1)
    grpo["algorithm"]["algorithm_type"] = "grpo"
    assert _problems(grpo) == []


def test_the_padded_caution_names_what_dpo_needs_and_a_code_that_exists():
    assert ("for DPO a micro-batch holds two sequences, a chosen and a rejected one, which Trinity's DPO loss takes as "
            "a pair (before verl 0.8 Trinity doubles the size to 2; on verl 0.8 or later the actor's must be written "
            "2: with 1 the loss finds no rejected sequence, dpo-pair-split)") in ONE_SEQUENCE_WIDER_WORDS
    assert ConfigProblemCode("dpo-pair-split") is ConfigProblemCode.DPO_PAIR_SPLIT
    assert ConfigProblemCode.DPO_PAIR_SPLIT not in REFUSED_CONFIG_CODES


def test_check_exits_1_on_the_critics_missing_forward_size_with_trinity_0_5_alone(cli: Cli, tmp_path: Path):
    path = tmp_path / "trinity.yaml"
    path.write_text(yaml.safe_dump(_ppo({"ppo_micro_batch_size": 8}, use_dynamic_bsz=True)))
    lead = f"{FORWARD_WHOLE} is not set beside {WHOLE} 8"
    for version, status, head in ((("--trinity-version", "0.5"), 1, "refused:"), ((), 0, "but:")):
        code, out, err = cli("--from-config", str(path), "--gpu", "h100", "--check", *version)
        said = [line.split(":", 1)[0].strip() for line in out.splitlines() if lead in line]
        assert (code, err, said) == (status, "", [head.rstrip(":")])
    # DPO's split pairs refuse nothing: a but: line, exit 0
    path.write_text(yaml.safe_dump(_dpo(1)))
    code, out, err = cli("--from-config", str(path), "--gpu", "h100", "--check")
    assert (code, err, f"but: {ACTOR_SIZE} is 1 for DPO" in out) == (0, "", True)


ENGINE_UNSET = ("Trinity 0.6 on verl 0.8 or later builds the critic's engine from trainer.trainer_config.critic.fsdp and "
                "copies neither of the critic's own micro-batch sizes into it, so with dynamic batch sizes off verl cuts "
                "the critic's passes by none and fails at its first {first} (force_group_size * None: "
                "workers/engine/utils.py:91-93 in verl 0.8.0, :125-127 in 0.9.0 and 0.9.1): set {them} to 1, or turn "
                "dynamic batch sizes on")


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_a_critics_engine_left_without_sizes_fails_on_verl_0_8(version: str | None):
    # critic87: Trinity 0.6 on verl 0.8 builds the critic's engine from critic.fsdp and never fills its sizes from the
    # critic's own; with dynamic batch sizes off the first value forward multiplies by None. Trinity 0.5 reads the
    # critic's own sizes (and refuses critic.fsdp), so no line there.
    sized = {"ppo_micro_batch_size_per_gpu": 1, "forward_micro_batch_size_per_gpu": 1}
    leave = "; Trinity 0.5 refuses trainer.trainer_config.critic.fsdp, so leave it out there" if version is None else ""
    both = [("micro-batch-unset", f"{' and '.join(ENGINE_SIZES)} are not set: "
             + ENGINE_UNSET.format(first="value forward", them="them") + leave)]
    assert _problems(_ppo(sized), version) == ([] if version == "0.5" else both)
    # the update's alone unset fails at the critic's first update; both set, none; dynamic batch sizes on, none
    update_only = _ppo({**sized, "fsdp": {"infer_micro_batch_size_per_gpu": 1}})
    assert _problems(update_only, version) == ([] if version == "0.5" else [("micro-batch-unset", (
        f"{ENGINE_SIZES[0]} is not set: " + ENGINE_UNSET.format(first="update", them="it") + leave))])
    assert _problems(_ppo({**sized, **ENGINE}), version) == []
    assert _problems(_ppo(sized, use_dynamic_bsz=True), version) == []
    # the critic's forward unset fails verl before 0.8: with the engine unsized too, no verl runs the config
    forward_unset = _problems(_ppo({"ppo_micro_batch_size_per_gpu": 1}), version)
    assert [code for code, _ in forward_unset] == (["micro-batch-unset-refused"] + ([] if version == "0.5" else
                                                                                    ["micro-batch-unset"]))
    assert forward_unset[0][1].endswith(("" if version == "0.5" else
                                         "; on verl 0.8 or later the critic's engine has no micro-batch size to cut its "
                                         "passes by (below), so the config runs on no verl")
                                        + ": set it to 1, or turn dynamic batch sizes on")


SPLIT = ("Dynamic batch sizes off in the critic's {role}: {where} that its micro-batch per GPU, 3 sequences ({source}), "
         "divides {rows}, buffer.train_batch_size 64 over the {ranks} data-parallel ranks (trainer GPUs 8 / SP {sp}) = "
         "{per_gpu}, which it does not: the trainer fails there; make buffer.train_batch_size a multiple of {times} "
         "({ranks} ranks x 3; the nearest to 64: {nearest})")
LEGACY = {None: "Trinity 0.5, and 0.6 on verl before 0.8, assert", "0.5": "Trinity 0.5 asserts",
          "0.6": "Trinity 0.6 on verl before 0.8 asserts"}
ENGINE_ASSERTS = ("Trinity 0.6 on verl 0.8 or later asserts at {first} (workers/engine/utils.py:91-93 in verl 0.8.0, "
                  ":125-127 in 0.9.0 and 0.9.1)")


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_a_critics_micro_batch_that_does_not_divide_its_rows_is_said_per_verl_line(version: str | None):
    # critic87: before verl 0.8 the critic worker asserts as it starts that its micro-batch divides its mini-batch
    # per GPU, the train batch over the ranks at the critic's own SP; on verl 0.8 its engine asserts its own sizes
    own = f"{CRITIC}.ppo_micro_batch_size_per_gpu 3"
    legacy = SPLIT.format(role="update", where=f"{LEGACY[version]} as the trainer starts", source=own,
                          rows="its mini-batch per GPU", ranks=4, sp=2, per_gpu=16, times=12, nearest=60)
    critic = {"ppo_micro_batch_size_per_gpu": 3, "forward_micro_batch_size_per_gpu": 1,
              "ulysses_sequence_parallel_size": 2, **ENGINE}
    # the engine's sizes of 1 divide every batch: only verl before 0.8 fails, so refused only with 0.5
    assert _problems(_ppo(critic), version, ("mini-batch",), 64) == [
        ("mini-batch-split-refused" if version == "0.5" else "mini-batch-split", legacy)]
    # the engine's value forward of 3 splits too (at the trainer's SP 1, the engine's): no verl runs it
    infer = {**critic, "fsdp": {"micro_batch_size_per_gpu": 1, "infer_micro_batch_size_per_gpu": 3}}
    forward = ("mini-batch-split", SPLIT.format(
        role="value forward", where=ENGINE_ASSERTS.format(first="its first value forward"),
        source=f"{ENGINE_SIZES[1]} 3", rows="the rows each GPU takes", ranks=8, sp=1, per_gpu=8, times=24, nearest=72))
    assert _problems(_ppo(infer), version, ("mini-batch",), 64) == (
        [("mini-batch-split-refused", legacy)] if version == "0.5" else [
            ("mini-batch-split-refused", legacy + ("; on verl 0.8 or later its engine's micro-batch fails the critic "
                                                   "too (below), so the config runs on no verl")), forward])
    # the same micro-batch on the same ranks on both lines: one line says both
    same = {**critic, "ulysses_sequence_parallel_size": 1, "fsdp": {"micro_batch_size_per_gpu": 3,
                                                                    "infer_micro_batch_size_per_gpu": 1}}
    where = LEGACY[version] + " as the trainer starts" + ("" if version == "0.5" else (
        ", and 0.6 on verl 0.8 or later at the critic's first update (workers/engine/utils.py:91-93 in verl 0.8.0, "
        ":125-127 in 0.9.0 and 0.9.1)"))
    source = own + ("" if version == "0.5" else f"; on verl 0.8 or later {ENGINE_SIZES[0]} 3")
    assert _problems(_ppo(same), version, ("mini-batch",), 64) == [("mini-batch-split-refused", SPLIT.format(
        role="update", where=where, source=source, rows="its mini-batch per GPU", ranks=8, sp=1, per_gpu=8,
        times=24, nearest=72))]
    # a batch the micro-batches divide, dynamic batch sizes on, or no critic trained: nothing
    assert _problems(_ppo(infer), version, ("mini-batch",), 48) == []
    assert _problems(_ppo(infer, use_dynamic_bsz=True), version, ("mini-batch",), 64) == []
    grpo = _ppo(infer)
    grpo["algorithm"]["algorithm_type"] = "grpo"
    assert _problems(grpo, version, ("mini-batch",), 64) == []


@pytest.mark.parametrize("version", [None, "0.6"])
def test_a_critics_engine_with_its_own_dynamic_batch_sizes_on_needs_no_sizes(version: str | None):
    # criticdyn87: critic.fsdp.use_dynamic_bsz is no frozen key, so Trinity 0.6 deep-merges it over the trainer's and
    # the critic's worker hands it to each pass (verl 0.8.0 workers/engine_workers.py:336, :390): true, verl packs the
    # critic's passes by tokens and reads neither engine size; false, it cuts them by those sizes, as unset
    sized = {"ppo_micro_batch_size_per_gpu": 1, "forward_micro_batch_size_per_gpu": 1}
    assert _problems(_ppo({**sized, "fsdp": {"use_dynamic_bsz": True}}), version) == []
    off = _problems(_ppo({**sized, "fsdp": {"use_dynamic_bsz": False}}), version)
    assert [(code, words.split(":")[0]) for code, words in off] == [
        ("micro-batch-unset", f"{' and '.join(ENGINE_SIZES)} are not set")]
    # an engine size that splits its rows is read by no pass there: only verl before 0.8's line, not refused
    split = {**sized, "ppo_micro_batch_size_per_gpu": 3, "fsdp": {"use_dynamic_bsz": True,
                                                                  "infer_micro_batch_size_per_gpu": 3}}
    assert [code for code, _ in _problems(_ppo(split), version, ("mini-batch",), 64)] == ["mini-batch-split"]
    # the critic's forward unset fails verl before 0.8 alone: verl 0.8 runs the engine by tokens, so not refused
    forward_unset = _problems(_ppo({"ppo_micro_batch_size_per_gpu": 1, "fsdp": {"use_dynamic_bsz": True}}), version)
    assert [code for code, _ in forward_unset] == ["micro-batch-unset"]


@pytest.mark.parametrize(("engine", "trainer", "unread"), [
    ("micro_batch_size_per_gpu: '${oc.env:MB}'", "use_dynamic_bsz: false", [ENGINE_SIZES[0]]),
    ("infer_micro_batch_size_per_gpu: '${oc.env:MB}'", "use_dynamic_bsz: false", [ENGINE_SIZES[1]]),
    ("micro_batch_size_per_gpu: '${oc.env:MB}'", "use_dynamic_bsz: true", []),  # read by no pass
    # the trainer's flag decides where the engine's micro-batch holds 2 sequences, as the critic's own
    ("micro_batch_size_per_gpu: 2", "use_dynamic_bsz: '${oc.env:DYN}'", ["trainer.use_dynamic_bsz"]),
    ("micro_batch_size_per_gpu: 1", "use_dynamic_bsz: '${oc.env:DYN}'", []),
    # roles88: the engine's own flag decides on verl 0.8 whether its 2 sequences share a micro-batch, the trainer's on
    # or off; off beside the trainer's on, the engine's sizes are read there
    ("micro_batch_size_per_gpu: 2, use_dynamic_bsz: '${oc.env:DYN}'", "use_dynamic_bsz: true", [f"{ENGINE_DYN}"]),
    ("micro_batch_size_per_gpu: 2, use_dynamic_bsz: '${oc.env:DYN}'", "use_dynamic_bsz: false", [f"{ENGINE_DYN}"]),
    ("micro_batch_size_per_gpu: 1, use_dynamic_bsz: '${oc.env:DYN}'", "use_dynamic_bsz: true", []),
    ("micro_batch_size_per_gpu: '${oc.env:MB}', use_dynamic_bsz: false", "use_dynamic_bsz: true", [ENGINE_SIZES[0]]),
])
def test_a_critics_engine_sizes_that_cannot_be_read_are_unread_keys_as_its_own(engine: str, trainer: str,
                                                                               unread: list[str]):
    # criticdyn87: Trinity 0.6 on verl 0.8 cuts the critic's passes by its engine's sizes alone, so they decide the
    # sequences a critic micro-batch holds as the critic's own do (test_trinity's critic unread keys)
    text = ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
            "algorithm: {algorithm_type: ppo}\n"
            f"trainer: {{{trainer}, trainer_config: {{critic: {{forward_micro_batch_size_per_gpu: 1, "
            f"fsdp: {{{engine}}}}}}}}}\n")
    assert list(read_trinity_config(text, "trinity.yaml", {}).memory_unread) == unread
    # Trinity 0.5 refuses the engine's section: none of its keys is read, nor does its size decide the flag's part
    assert list(read_trinity_config(text, "trinity.yaml", {}, "0.5").memory_unread) == []


def test_a_critic_under_a_megatron_trainer_is_not_judged_as_an_fsdp_one():
    # criticdyn87: Trinity runs the critic at the trainer's strategy (on verl 0.8 critic.strategy is frozen to it and
    # critic.fsdp dropped for critic.megatron): its micro-batches are said not judged, not judged as FSDP's
    config = _ppo({"ppo_micro_batch_size_per_gpu": 3})
    config["trainer"]["trainer_strategy"] = "megatron"
    assert _problems(config, prefix=("micro-batch", "mini-batch", "not-fsdp"), batch=64) == [("not-fsdp-strategy", (
        "trainer.trainer_strategy is megatron: Trinity runs the PPO critic at it too (on verl 0.8 or later its engine "
        "is critic.megatron, critic.fsdp dropped), so its micro-batch sizes and its engine's are not judged: "
        "rft-solver's critic checks are FSDP's"))]
    config["algorithm"]["algorithm_type"] = "grpo"
    assert _problems(config, prefix=("not-fsdp",)) == []


def test_a_critics_split_is_judged_at_the_engines_own_sp_and_the_critics_deprecated_size():
    # mutants47: the engine's own SP, a batch the engine's ranks do not divide, an engine left unsized, the critic's
    # deprecated whole size, and the same micro-batch on other ranks, each said as verl runs it
    base = {"ppo_micro_batch_size_per_gpu": 3, "forward_micro_batch_size_per_gpu": 1,
            "ulysses_sequence_parallel_size": 2}
    own = f"{CRITIC}.ppo_micro_batch_size_per_gpu 3"
    legacy = SPLIT.format(role="update", where=f"{LEGACY['0.6']} as the trainer starts", source=own,
                          rows="its mini-batch per GPU", ranks=4, sp=2, per_gpu=16, times=12, nearest=60)
    engine_fails = ("; on verl 0.8 or later its engine's micro-batch fails the critic too (below), so the config runs "
                    "on no verl")
    # the engine at its own SP 2: 4 ranks of 16 rows, not the trainer's 8 of 8
    at_sp_2 = {**base, "fsdp": {"micro_batch_size_per_gpu": 1, "infer_micro_batch_size_per_gpu": 3,
                                "ulysses_sequence_parallel_size": 2}}
    assert _problems(_ppo(at_sp_2), "0.6", ("mini-batch",), 64) == [
        ("mini-batch-split-refused", legacy + engine_fails), ("mini-batch-split", SPLIT.format(
            role="value forward", where=ENGINE_ASSERTS.format(first="its first value forward"),
            source=f"{ENGINE_SIZES[1]} 3", rows="the rows each GPU takes", ranks=4, sp=2, per_gpu=16, times=12,
            nearest=60))]
    # 60 over the engine's 8 ranks is no whole number of rows (said elsewhere); 60 / 4 = 15 the critic's 3 divides
    infer = {**base, "fsdp": {"micro_batch_size_per_gpu": 1, "infer_micro_batch_size_per_gpu": 3}}
    assert _problems(_ppo(infer), "0.6", ("mini-batch",), 60) == []
    # the engine left unsized fails verl 0.8 too: refused
    assert _problems(_ppo(base), "0.6", ("mini-batch",), 64) == [("mini-batch-split-refused", legacy + (
        "; on verl 0.8 or later the critic's engine has no micro-batch size to cut its passes by (below), so the "
        "config runs on no verl"))]
    # the deprecated whole size, 12 over the 4 ranks: 3
    deprecated = {"ppo_micro_batch_size": 12, "forward_micro_batch_size_per_gpu": 1,
                  "ulysses_sequence_parallel_size": 2, **ENGINE}
    assert _problems(_ppo(deprecated), "0.5", ("mini-batch",), 64) == [("mini-batch-split-refused", SPLIT.format(
        role="update", where=f"{LEGACY['0.5']} as the trainer starts", source=f"{WHOLE} 12 over them",
        rows="its mini-batch per GPU", ranks=4, sp=2, per_gpu=16, times=12, nearest=60))]
    # the engine's update size is the critic's 3, but on the engine's 8 ranks, not the critic's 4: two lines
    same_size = {**base, "fsdp": {"micro_batch_size_per_gpu": 3, "infer_micro_batch_size_per_gpu": 1}}
    assert _problems(_ppo(same_size), "0.6", ("mini-batch",), 64) == [
        ("mini-batch-split-refused", legacy + engine_fails), ("mini-batch-split", SPLIT.format(
            role="update", where=ENGINE_ASSERTS.format(first="the critic's first update"),
            source=f"{ENGINE_SIZES[0]} 3", rows="its mini-batch per GPU", ranks=8, sp=1, per_gpu=8, times=24,
            nearest=72))]


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_a_critics_own_strategy_other_than_fsdps_under_an_fsdp_trainer_fails_before_verl_0_8(version: str | None):
    # roles88: before verl 0.8 Trinity takes critic.strategy over the trainer's, and the trainer's FSDP CriticWorker
    # raises "Unknown strategy megatron" as the critic starts (0.6.0 verl_legacy/fsdp_workers.py:1593, 0.5.2
    # trainer/verl/fsdp_workers.py:1474); Trinity 0.6 on verl 0.8 ignores the frozen key: refused with 0.5 alone
    config = _ppo({"strategy": "megatron", **ENGINE}, use_dynamic_bsz=True, trainer_strategy="fsdp2")
    who = {None: "the critic worker of Trinity 0.5, and of 0.6 on verl before 0.8,",
           "0.5": "Trinity 0.5's critic worker", "0.6": "Trinity 0.6's critic worker on verl before 0.8"}[version]
    on_08 = ("; Trinity 0.6 on verl 0.8 or later ignores the key, running the critic at the trainer's strategy"
             if version != "0.5" else "")
    code = "not-fsdp-critic-strategy-refused" if version == "0.5" else "not-fsdp-critic-strategy"
    assert _problems(config, version, ("not-fsdp",)) == [(code, (
        f"{CRITIC}.strategy is 'megatron' under an FSDP trainer (trainer.trainer_strategy 'fsdp2'): {who} builds an "
        f"fsdp or fsdp2 critic alone (it is the FSDP trainer's) and fails as the critic starts (NotImplementedError: "
        f"Unknown strategy megatron){on_08}: remove it (the critic then runs at the trainer's strategy), or write "
        "fsdp or fsdp2"))]
    assert (ConfigProblemCode(code) in REFUSED_CONFIG_CODES) is (version == "0.5")  # --check exits 1 on 0.5 alone
    unset = json_copy(config)  # the trainer's strategy unset: what each release takes then
    del unset["trainer"]["trainer_strategy"]
    assert _problems(unset, version, ("not-fsdp",))[0][1].startswith(
        f"{CRITIC}.strategy is 'megatron' under an FSDP trainer (trainer.trainer_strategy unset: "
        f"{'Trinity 0.5 takes fsdp' if version == '0.5' else 'Trinity before 0.6 takes fsdp; 0.6, fsdp2'}): {who} ")
    # an FSDP strategy, LoRA (Trinity resets the critic's to fsdp), no critic trained: nothing; a Megatron trainer:
    # the trainer's own line alone
    for fsdp in ("fsdp", "fsdp2"):
        assert _problems(_ppo({"strategy": fsdp, **ENGINE}, use_dynamic_bsz=True), version, ("not-fsdp",)) == []
    lora = json_copy(config)
    lora["model"]["lora_configs"] = [{"lora_rank": 8}]
    grpo = json_copy(config)
    grpo["algorithm"]["algorithm_type"] = "grpo"
    assert _problems(lora, version, ("not-fsdp",)) == _problems(grpo, version, ("not-fsdp",)) == []
    config["trainer"]["trainer_strategy"] = "megatron"
    assert [code for code, _ in _problems(config, version, ("not-fsdp",))] == ["not-fsdp-strategy"]


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_a_trainer_strategy_trinity_has_no_workers_for_fails_before_verl_0_8(version: str | None):
    # review92a: FSDP2 got the not-fsdp-strategy line alone, but the trainer before verl 0.8 gives it to the actor and
    # raises NotImplementedError for anything but fsdp, fsdp2 and megatron (0.6.0 verl_legacy/verl_trainer.py:221-234,
    # 0.5.2 trainer/verl/verl_trainer.py:218-231); verl 0.8 builds Megatron's at its defaults: refused with 0.5 alone
    config = _config(use_dynamic_bsz=True, trainer_strategy="FSDP2")
    who = {None: "Trinity 0.5, and 0.6 on verl before 0.8,", "0.5": "Trinity 0.5",
           "0.6": "Trinity 0.6 on verl before 0.8"}[version]
    on_08 = ("; Trinity 0.6 on verl 0.8 or later takes it as no FSDP strategy and builds a Megatron trainer at verl's "
             "defaults, dropping the roles' fsdp_config" if version != "0.5" else "")
    code = "unknown-strategy-refused" if version == "0.5" else "unknown-strategy"
    assert _problems(config, version, ("unknown-strategy",)) == [(code, (
        f"trainer.trainer_strategy is 'FSDP2': with {who} the trainer has workers for fsdp, fsdp2 or megatron alone, "
        f"as written, and fails as it starts (NotImplementedError){on_08}: write fsdp, fsdp2 or megatron (lower "
        "case)"))]
    assert (ConfigProblemCode(code) in REFUSED_CONFIG_CODES) is (version == "0.5")
    # LoRA (Trinity resets the actor's strategy to fsdp): none; the actor's own strategy, which verl before 0.8 takes
    # over the trainer's: verl 0.8's line alone (checks93: 0.8 ignores the actor's key, FROZEN_KEYS)
    lora, own = json_copy(config), json_copy(config)
    lora["model"]["lora_configs"] = [{"lora_rank": 8}]
    own["trainer"]["trainer_config"]["actor_rollout_ref"].setdefault("actor", {})["strategy"] = "fsdp2"
    assert _problems(lora, version, ("unknown-strategy",)) == []
    assert _problems(own, version, ("unknown-strategy",)) == ([] if version == "0.5" else [("unknown-strategy", (
        "trainer.trainer_strategy is 'FSDP2': Trinity 0.6 on verl 0.8 or later takes it as no FSDP strategy and builds "
        f"a Megatron trainer at verl's defaults, dropping the roles' fsdp_config (verl before 0.8 takes {ARR}.actor."
        "strategy over it, which 0.8 ignores): write fsdp, fsdp2 or megatron (lower case)"))])
    # mutants58: each strategy it has workers for, megatron too, as written: none
    for strategy in ("fsdp", "fsdp2", "megatron"):
        config["trainer"]["trainer_strategy"] = strategy
        assert _problems(config, version, ("unknown-strategy",)) == []


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
@pytest.mark.parametrize("strategy", ["fsdpp", "FSDP2", "Megatron"])
def test_an_actor_strategy_trinity_has_no_workers_for_fails_before_verl_0_8(version: str | None, strategy: str):
    # checks93: verl before 0.8 takes actor.strategy over the trainer's (set_if_none, 0.6.0
    # verl_legacy/verl_config.py:552) and starts the workers by it (verl_trainer.py:221-234): NotImplementedError for
    # any other than fsdp, fsdp2 or megatron; Trinity 0.6 on verl 0.8 ignores the key (FROZEN_KEYS): refused with 0.5
    config = _config(use_dynamic_bsz=True, trainer_strategy="fsdp2")
    config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"] = {"strategy": strategy}
    who = {None: "Trinity 0.5, and 0.6 on verl before 0.8,", "0.5": "Trinity 0.5",
           "0.6": "Trinity 0.6 on verl before 0.8"}[version]
    on_08 = ("; Trinity 0.6 on verl 0.8 or later ignores the key, running the actor at trainer.trainer_strategy"
             if version != "0.5" else "")
    code = "unknown-strategy-refused" if version == "0.5" else "unknown-strategy"
    assert _problems(config, version, ("unknown-strategy",)) == [(code, (
        f"{ARR}.actor.strategy is '{strategy}': with {who} the trainer takes it over trainer.trainer_strategy and has "
        f"workers for fsdp, fsdp2 or megatron alone, as written, and fails as it starts (NotImplementedError){on_08}: "
        "write fsdp, fsdp2 or megatron (lower case), or remove it"))]
    # the trainer's own typo too: the actor's line (verl before 0.8), then verl 0.8's on the trainer's
    config["trainer"]["trainer_strategy"] = "fsdp3"
    assert [found for found, _ in _problems(config, version, ("unknown-strategy",))] == (
        [code] if version == "0.5" else [code, "unknown-strategy"])
    # LoRA resets it to fsdp before verl 0.8; a strategy Trinity has workers for: nothing
    config["model"]["lora_configs"] = [{"lora_rank": 8}]
    assert _problems(config, version, ("unknown-strategy",)) == []
    for known in ("fsdp", "fsdp2", "megatron"):
        fine = _config(use_dynamic_bsz=True, trainer_strategy="fsdp2")
        fine["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"] = {"strategy": known}
        assert _problems(fine, version, ("unknown-strategy",)) == []


@pytest.mark.parametrize(("algorithm", "key", "given", "fix"), [
    ("ppo", f"{CRITIC}.model.path", "/mnt/ckpt/critic-1.7b", (
        "model.critic_model_path (model.model_path where that is unset) as it loads the config, with every release "
        "and verl version, so the critic is built from 'Qwen/Qwen3-8B': set model.critic_model_path: "
        "/mnt/ckpt/critic-1.7b")),
    ("grpo", "trainer.trainer_config.actor_rollout_ref.model.path", "/mnt/ckpt/other", (
        "model.model_path as it loads the config, with every release and verl version, so the actor and the ref are "
        "built from 'Qwen/Qwen3-8B': set model.model_path: /mnt/ckpt/other"))])
def test_a_model_path_under_trainer_config_that_trinity_overwrites_is_cautioned(algorithm: str, key: str, given: str,
                                                                                fix: str):
    # review92a: Trinity sets the critic's model.path from model.critic_model_path (0.6.0
    # verl_legacy/verl_config.py:595; on verl 0.8 trainer/verl/trainer.py:347) and the actor's from
    # model.model_path: the key set there is ignored
    config = _config(use_dynamic_bsz=True)
    config["algorithm"]["algorithm_type"] = algorithm
    role, _ = key.removeprefix("trainer.trainer_config.").rsplit(".model.", 1)
    section = config["trainer"]["trainer_config"]
    for name in role.split("."):
        section = section.setdefault(name, {})
    section["model"] = {"path": given}
    words = f"{key} is '{given}', but Trinity sets it from {fix} in its place, and remove this key"
    for version in (None, "0.5", "0.6"):
        assert _problems(config, version, ("model-path",)) == [("model-path-overwritten", words)]
    section["model"]["path"] = "Qwen/Qwen3-8B"  # what Trinity sets it to: nothing to say
    assert _problems(config, None, ("model-path",)) == []
    # mutants57: with model.model_path unset too it is still overwritten; a critic of a run that trains none is none.
    # smalls92d: the role is then built from Trinity's typed default, model_path: str = "" (0.6.0
    # common/config.py:462, 0.5.2 :457), which names no model, not from "null"
    section["model"]["path"] = given
    del config["model"]["model_path"]
    empty = "an empty path, which names no model (model.model_path is unset or empty: Trinity's default is '')"
    assert _problems(config, None, ("model-path",)) == [
        ("model-path-overwritten", words.replace("'Qwen/Qwen3-8B'", empty))]
    config["algorithm"]["algorithm_type"] = "grpo"
    assert [code for code, _ in _problems(config, None, ("model-path",))] == (["model-path-overwritten"]
                                                                              if algorithm == "grpo" else [])


def test_a_critic_tokenizer_path_that_trinity_overwrites_is_cautioned():
    # smalls92e: Trinity sets critic.model.tokenizer_path from model.critic_model_path too (0.6.0
    # verl_legacy/verl_config.py:596, 0.5.2 trainer/verl/verl_config.py:588; on verl 0.8 the critic's HFModelConfig
    # takes its tokenizer from that model path): the key set there is ignored, and no other key sets it
    config = _config(use_dynamic_bsz=True)
    config["algorithm"]["algorithm_type"] = "ppo"
    model = config["trainer"]["trainer_config"].setdefault("critic", {}).setdefault("model", {})
    model["tokenizer_path"] = "/mnt/tok"
    words = (f"{CRITIC}.model.tokenizer_path is '/mnt/tok', but Trinity sets it from model.critic_model_path "
             "(model.model_path where that is unset) as it loads the config, with every release and verl version, "
             "so the critic's tokenizer is read from {}: remove this key (Trinity reads the critic's tokenizer from "
             "the critic's model path alone)")
    for version in (None, "0.5", "0.6"):
        assert _problems(config, version, ("model-path",)) == [
            ("model-path-overwritten", words.format("'Qwen/Qwen3-8B'"))]
    config["model"]["critic_model_path"] = "/mnt/tok"  # what Trinity sets it to: nothing to say
    assert _problems(config, None, ("model-path",)) == []
    config["model"]["critic_model_path"] = "/mnt/critic"
    assert _problems(config, None, ("model-path",)) == [("model-path-overwritten", words.format("'/mnt/critic'"))]
    config["algorithm"]["algorithm_type"] = "grpo"  # a run that trains no critic: none
    assert _problems(config, None, ("model-path",)) == []

def json_copy(config: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of `config` (plain YAML data)."""
    return yaml.safe_load(yaml.safe_dump(config))


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_a_critics_engine_flag_is_judged_as_a_roles_own_for_any_model(version: str | None):
    # roles88: on verl 0.8 critic.fsdp.use_dynamic_bsz runs the critic's passes as a role's own flag runs its own:
    # off, a line for any model (Trinity 0.5 refuses the section: no line); true for a padded model, which pads each
    # micro-batch, micro-batch-unbounded, as the actor's own
    sized = {"ppo_micro_batch_size_per_gpu": 1, "forward_micro_batch_size_per_gpu": 1}
    off = _problems(_ppo({**sized, "fsdp": {**ENGINE["fsdp"], "use_dynamic_bsz": False}}, use_dynamic_bsz=True),
                    version, ("dynamic-batch",))
    assert off == ([] if version == "0.5" else [("dynamic-batch-off", (
        f"{ENGINE_DYN} is false: verl then ignores the token budget (max_token_len_per_gpu), which the tables "
        f"measured and the plan sets, and fills micro-batches by sequence count: set it to true ({ENGINE_SCOPE})"))])
    padded = {"trainer": {"use_dynamic_bsz": False, "use_remove_padding": False, "trainer_config": {
        "actor_rollout_ref": {"model": {"use_remove_padding": False}, "actor": {"ppo_micro_batch_size_per_gpu": 1},
                              "ref": {"log_prob_micro_batch_size_per_gpu": 1},
                              "rollout": {"log_prob_micro_batch_size_per_gpu": 1}},
        "critic": {**sized, "fsdp": {**ENGINE["fsdp"], "use_dynamic_bsz": True}}}}}
    found = trinity_config_problems(padded, load_model_config(INTERNLM2), 8, version=version)  # type: ignore[arg-type]
    assert [(problem.code.value, problem.words) for problem in found if "batch" in problem.code.value] == (
        [] if version == "0.5" else [("micro-batch-unbounded", f"{ENGINE_DYN} is true: {WHY} ({ENGINE_SCOPE})")])
    # --write sets it as it says: off for the padded model, back on for another (0.5 refuses the section)
    plan, internlm2 = _internlm2_plan(version=version)
    written = [{key.path: key.value for key in keys_for_plan(plan, model, config, version=version)}.get(ENGINE_PATH)
               for model, config in ((internlm2, padded),
                                     (CATALOG.model("8B"), _ppo({"fsdp": {"use_dynamic_bsz": False}})))]
    assert written == ([None, None] if version == "0.5" else [False, True])


ENGINE_PATH = tuple(ENGINE_DYN.split("."))


@pytest.mark.parametrize("version", [None, "0.6"])
def test_a_critics_engine_off_beside_the_trainers_on_cuts_its_passes_by_the_engines_sizes(version: str | None):
    # roles88: Trinity 0.6 on verl 0.8 deep-merges critic.fsdp.use_dynamic_bsz false over the trainer's true, so verl
    # cuts the critic's passes by the engine's sizes: unset, it fails there; one that splits its rows asserts
    unsized = _problems(_ppo({"fsdp": {"use_dynamic_bsz": False}}, use_dynamic_bsz=True), version)
    assert [(code, words.split(":")[0]) for code, words in unsized] == [
        ("micro-batch-unset", f"{' and '.join(ENGINE_SIZES)} are not set")]
    engine = {"use_dynamic_bsz": False, "micro_batch_size_per_gpu": 1, "infer_micro_batch_size_per_gpu": 3}
    split = _ppo({"fsdp": engine}, use_dynamic_bsz=True)
    assert _problems(split, version, ("mini-batch",), 64) == [("mini-batch-split", SPLIT.format(
        role="value forward", where=ENGINE_ASSERTS.format(first="its first value forward"),
        source=f"{ENGINE_SIZES[1]} 3", rows="the rows each GPU takes", ranks=8, sp=1, per_gpu=8, times=24,
        nearest=72))]
    # the engine's own flag unset takes the trainer's, on: nothing
    assert _problems(_ppo({}, use_dynamic_bsz=True), version, ("micro-batch", "mini-batch"), 64) == []


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_a_padded_models_critics_own_dynamic_flag_on_is_unbounded_where_trinity_05_reads_it(version: str | None):
    # critic88: Trinity 0.5 packs a critic's passes by its own critic.use_dynamic_bsz over the trainer's off, so for a
    # padded model it is micro-batch-unbounded as the actor's own is, and --write sets it false; Trinity 0.6 sets it
    # to the trainer's (verl_legacy/verl_config.py:704, FROZEN_KEYS on verl 0.8): no line, nothing written
    sized = {"ppo_micro_batch_size_per_gpu": 1, "forward_micro_batch_size_per_gpu": 1, "use_dynamic_bsz": True}
    padded = {"algorithm": {"algorithm_type": "ppo"}, "trainer": {"use_dynamic_bsz": False, "trainer_config": {
        "actor_rollout_ref": {"model": {"use_remove_padding": False}, "actor": {"ppo_micro_batch_size_per_gpu": 1},
                              "ref": {"log_prob_micro_batch_size_per_gpu": 1},
                              "rollout": {"log_prob_micro_batch_size_per_gpu": 1}},
        "critic": {**sized, "model": {"use_remove_padding": False}, **({} if version == "0.5" else ENGINE)}}}}
    if version != "0.5":
        padded["trainer"]["use_remove_padding"] = False
    found = trinity_config_problems(padded, load_model_config(INTERNLM2), 8, version=version)  # type: ignore[arg-type]
    own = "on Trinity before 0.6 only: Trinity 0.6 sets it to trainer.use_dynamic_bsz whatever the verl"
    assert [(problem.code.value, problem.words) for problem in found] == (
        [] if version == "0.6" else [("micro-batch-unbounded", f"{CRITIC}.use_dynamic_bsz is true: {WHY} ({own})")])
    plan, internlm2 = _internlm2_plan(version=version)
    written = {key.path: key.value for key in keys_for_plan(plan, internlm2, padded, version=version)}
    assert written.get((*CRITIC.split("."), "use_dynamic_bsz"), "unset") == ("unset" if version == "0.6" else False)
    # the critic engine's own remove padding reaches no pass on verl 0.8 (its worker puts the model config's, the
    # trainer's, over it): true there is no line, and --write leaves it
    if version != "0.5":
        padded["trainer"]["trainer_config"]["critic"]["fsdp"] = {**ENGINE["fsdp"], "use_remove_padding": True}
        again = trinity_config_problems(padded, load_model_config(INTERNLM2), 8, version=version)  # type: ignore[arg-type]
        assert again == found
        assert (*CRITIC.split("."), "fsdp", "use_remove_padding") not in {
            key.path for key in keys_for_plan(plan, internlm2, padded, version=version)}


PPO_IN_ROWS = ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\nalgorithm: {algorithm_type: ppo}\n"
               "cluster: {node_num: 1, gpu_per_node: 8}\nbuffer: {batch_size: 64, train_batch_size: 64}\n"
               "explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 2}}\n"
               "trainer:\n  use_dynamic_bsz: false\n  trainer_config:\n"
               "    actor_rollout_ref: {actor: {ppo_micro_batch_size_per_gpu: 1}, ref: "
               "{log_prob_micro_batch_size_per_gpu: 1}, rollout: {log_prob_micro_batch_size_per_gpu: 1}}\n"
               "    critic: {ppo_micro_batch_size_per_gpu: 4, forward_micro_batch_size_per_gpu: 1, "
               "fsdp: {micro_batch_size_per_gpu: 2, infer_micro_batch_size_per_gpu: 1}}\n")
"""PPO on Qwen3-8B at 8192 tokens, 4 trainer GPUs, dynamic batch sizes off: the actor's passes one sequence each (the
verdict at 8192 tokens per GPU), the critic's update 4 before verl 0.8 and 2 on verl 0.8 or later (its engine's)."""


def test_a_critics_micro_batches_of_more_tokens_than_the_verdicts_fail_the_check(cli, tmp_path: Path):
    # critic88: with dynamic batch sizes off a critic's micro-batch takes its size in sequences, as a role's does; the
    # memory model counts its update at the verdict's budget, so more is a critic-budget-above-verdict line (the
    # largest over the verl lines) and --check fails (it passed: the critic's sizes were counted in unread_keys alone)
    config = tmp_path / "ppo.yaml"
    config.write_text(PPO_IN_ROWS, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json")
    current = json.loads(out)[0]["current"]
    line = ("the critic's passes run with dynamic batch sizes off: verl reads no token budget there and fills each "
            "micro-batch with 4 sequences (the largest of its micro-batch sizes), up to 4 x ceil(8192 / 1) = 32768 "
            "tokens per GPU, more than the verdict's 8192, where the memory model counts its own update: set its "
            "micro-batch sizes to 1, or turn dynamic batch sizes on")
    assert (status, current["trains"], current["max_token_len_per_gpu"]) == (1, False, 8192)
    assert [words for words, code in zip(current["config_problems"], current["config_problem_codes"], strict=True)
            if code == "critic-budget-above-verdict"] == [line]
    # on verl 0.8 alone (the engine's 2) it is 2 sequences; one each fits the verdict
    config.write_text(PPO_IN_ROWS.replace("ppo_micro_batch_size_per_gpu: 4", "ppo_micro_batch_size_per_gpu: 1"),
                      encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--check")
    assert status == 1 and "with 2 sequences (the largest of its micro-batch sizes), up to 2 x" in " ".join(out.split())
    config.write_text(PPO_IN_ROWS.replace("per_gpu: 4", "per_gpu: 1").replace("per_gpu: 2", "per_gpu: 1"),
                      encoding="utf-8")
    assert cli("--from-config", str(config), "--gpu", "h100", "--check")[0] == 0


def test_a_critics_engine_off_is_judged_beside_the_trainers_on_for_a_padded_model_and_read_as_the_releases_do():
    # mutants48: a padded model's critic engine off beside the trainer's on is cut by the engine's sizes on verl 0.8
    # (unset: the line, whatever the trainer's flag); the critic's own micro-batch, read before verl 0.8 alone, splits
    # nothing there with the trainer's on; Trinity 0.5 reads no engine flag, so it is no unread key there
    sized = {"ppo_micro_batch_size_per_gpu": 1, "forward_micro_batch_size_per_gpu": 1}
    padded = {"algorithm": {"algorithm_type": "ppo"}, "trainer": {
        "use_dynamic_bsz": True, "use_remove_padding": False, "trainer_config": {
            "actor_rollout_ref": {"model": {"use_remove_padding": False}},
            "critic": {**sized, "fsdp": {"use_dynamic_bsz": False}}}}}
    unset = [(problem.code.value, problem.words.split(":")[0], problem.words.endswith(
        ": set them to 1 (solver.trinity.patch_trinity_config does)")) for problem in trinity_config_problems(
        padded, load_model_config(INTERNLM2), 8, version="0.6") if problem.code.value == "micro-batch-unset"]
    assert unset == [("micro-batch-unset", f"{' and '.join(ENGINE_SIZES)} are not set", True)]
    engine = {"use_dynamic_bsz": False, "micro_batch_size_per_gpu": 1, "infer_micro_batch_size_per_gpu": 1}
    assert _problems(_ppo({"ppo_micro_batch_size_per_gpu": 3, "fsdp": engine}, use_dynamic_bsz=True), None,
                     ("mini-batch",), 64) == []
    text = ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
            "algorithm: {algorithm_type: ppo}\ntrainer: {use_dynamic_bsz: '${oc.env:DYN}', trainer_config: {critic: {"
            "ppo_micro_batch_size_per_gpu: 2, fsdp: {micro_batch_size_per_gpu: 2, "
            "use_dynamic_bsz: '${oc.env:DYN}'}}}}\n")
    assert [read_trinity_config(text, "trinity.yaml", {}, version).memory_unread for version in (None, "0.5")] == [
        ("trainer.use_dynamic_bsz", ENGINE_DYN), ("trainer.use_dynamic_bsz",)]


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_a_critics_own_dynamic_flag_off_is_dynamic_batch_off_where_trinity_05_reads_it(version: str | None):
    # checks88: Trinity 0.5 runs a trained critic's passes by its own critic.use_dynamic_bsz, so off beside the
    # trainer's on is dynamic-batch-off as the actor's own is (it got none), and --write turns it back on; Trinity 0.6
    # sets it to the trainer's: no line, nothing written
    config = _ppo({"use_dynamic_bsz": False, "forward_micro_batch_size_per_gpu": 1, **ENGINE}, use_dynamic_bsz=True)
    own = "on Trinity before 0.6 only: Trinity 0.6 sets it to trainer.use_dynamic_bsz whatever the verl"
    assert _problems(config, version, ("dynamic-batch",)) == ([] if version == "0.6" else [("dynamic-batch-off", (
        f"{CRITIC}.use_dynamic_bsz is false: verl then ignores the token budget (max_token_len_per_gpu), which the "
        f"tables measured and the plan sets, and fills micro-batches by sequence count: set it to true ({own})"))])
    plan, _ = _internlm2_plan(version=version)
    written = {key.path: key.value for key in keys_for_plan(plan, CATALOG.model("8B"), config, version=version)}
    assert written.get((*CRITIC.split("."), "use_dynamic_bsz"), "unset") == ("unset" if version == "0.6" else True)


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_a_critics_deprecated_size_below_its_ranks_fails_its_worker_before_verl_0_8(version: str | None):
    # checks89: the worker divides it by the ranks to 0 and asserts mini-batch % 0 (0.6.0
    # trainer/verl_legacy/fsdp_workers.py:1318-1331); verl 0.8 cuts the critic's passes by its engine's sizes
    code, who, _ = FAILS[version]
    on_08 = "" if version == "0.5" else ("; Trinity 0.6 on verl 0.8 or later cuts the critic's passes by its engine's "
                                         "sizes instead")
    line = (code, (f"{WHOLE} is 4, a deprecated size for the whole batch, below the 8 data-parallel ranks (trainer "
                   f"GPUs 8 / SP 1): {who} divides it by them to 0 sequences per GPU with dynamic batch sizes off and "
                   "fails on that as it starts (its mini-batch % 0, trainer/verl_legacy/fsdp_workers.py:1318-1331 in "
                   f"0.6.0){on_08}: remove it (solver.trinity.patch_trinity_config does), and set "
                   "ppo_micro_batch_size_per_gpu instead"))
    critic = {"ppo_micro_batch_size": 4, "forward_micro_batch_size": 4, **ENGINE}
    assert _problems(_ppo(critic), version) == [line]
    # 8 over 8 ranks, one per GPU, or dynamic batch sizes on (no assertion): no line
    assert _problems(_ppo({**critic, "ppo_micro_batch_size": 8}), version) == []
    assert _problems(_ppo(critic, use_dynamic_bsz=True), version) == []
