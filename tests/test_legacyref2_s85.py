"""A ref SP that Trinity 0.6's legacy path (or no release named) refuses is said to be refused, not sized (session 85,
legacyref2); LoRA's pass in the ref's stead counted on 0.6's legacy path.

Trinity 0.6.0 on verl before 0.8 (``trinity/trainer/trainer.py:371`` ``is_verl_legacy``) builds its legacy
``veRLConfig`` and runs ``synchronize_config`` as it loads the config (``common/config_validator.py:1287-1300``). That
takes the ref's own ``ulysses_sequence_parallel_size`` over the trainer's (``trainer/verl_legacy/verl_config.py:574``,
``:577``) and checks it with ``_check_parallel_config`` (``:578``, defined at ``:405``), the same code as 0.5.2's
(``trainer/verl/verl_config.py:399``, diffed line for line): a ``ValueError`` where SP does not divide the trainer GPUs
(``:423``), where the data-parallel ranks (GPUs / SP) do not divide ``buffer.train_batch_size`` (``:430``), or where SP
does not divide the model's attention heads (``:447``); the critic's SP alike (``:609``). The worker itself,
``verl_legacy/fsdp_workers.py``, checks nothing of the ref's SP: it builds the Ulysses groups from the actor's alone
(``:158-167``). Trinity 0.6 on verl 0.8 or later freezes the ref's SP and budget to the trainer's (``FROZEN_KEYS``,
``trainer/verl/config.py:723-724``), so there the ref runs at the trainer's SP: one ``role-sp-differs`` line says both.

LoRA: 0.6.0's legacy worker gives the ref's log-probs from the actor without its adapter (``compute_ref_log_prob``,
``verl_legacy/fsdp_workers.py:1048-1051``), in ``compute_log_prob`` at the actor's SP with the ref's budget
(``config_source = self.config.ref``, ``:1006-1009``), a budget raised at the ref's own SP
(``_adjust_token_len_if_needed``, ``verl_legacy/verl_config.py:586``): the code of 0.5.2's ``fsdp_workers.py:911-990``
(one comment and an ``empty_cache`` apart), so 0.6's legacy path runs that pass as 0.5 does."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_legacyref_s85 import _current, _lines

from solver.query import ConfigProblem, ConfigProblemCode
from solver.tables import load_catalog
from solver.trinity.checks import TrainBatch, legacy_sp_refusals, refused_sp_roles

REF_SP = "trainer.trainer_config.actor_rollout_ref.ref.ulysses_sequence_parallel_size"
HEAD = ("algorithm: {{algorithm_type: {algorithm}}}\nmodel: {{model_path: Qwen/Qwen3-8B, max_model_len: 8192}}\n"
        "cluster: {{node_num: 1, gpu_per_node: 8}}\nexplorer: {{rollout_model: {{engine_num: {engines}}}}}\n"
        "buffer: {{train_batch_size: {batch}}}\ntrainer:\n  ulysses_sequence_parallel_size: 2\n")
"""Qwen3-8B (32 attention heads) at 8192 tokens on 8 - `engines` trainer GPUs at the trainer's SP 2, a train batch of
`batch`; YAML lines under ``trainer`` follow."""


def _config(ref_sp: int, *, engines: int = 4, batch: int = 64, algorithm: str = "grpo") -> str:
    """A config whose ref sets its own SP `ref_sp`."""
    return HEAD.format(algorithm=algorithm, engines=engines, batch=batch) + (
        f"  trainer_config:\n    actor_rollout_ref:\n      ref: {{ulysses_sequence_parallel_size: {ref_sp}}}\n")


RELEASES = [(("--trinity-version", "0.6"), "Trinity 0.6 on verl before 0.8"), ((), "Trinity with verl before 0.8")]
"""The options naming Trinity 0.6, or no release, and the words naming its legacy path."""


@pytest.mark.parametrize(("ref_sp", "engines", "batch", "why"), [
    (3, 4, 64, "SP=3 does not divide 4 GPUs"),  # :423, checked first (SP 3 fits no heads of 32 either)
    (3, 2, 96, "SP=3 does not divide its 32 attention heads of Qwen3-8B"),  # :447, on 6 GPUs
    (1, 4, 6, ("the train batch of 6 (buffer.train_batch_size) must split evenly over the data-parallel ranks, and "
               "4 (4 GPUs / SP=1) do not divide it")),  # :430 (the actor's 2 ranks divide it)
])
@pytest.mark.parametrize(("options", "who"), RELEASES)
def test_06_and_no_release_refuse_a_ref_sp_the_legacy_check_refuses(cli, tmp_path: Path, ref_sp: int, engines: int,
                                                                    batch: int, why: str, options: tuple[str, ...],
                                                                    who: str):
    # Before: "Trinity with verl before 0.8 runs that role's forward at SP 3 ... within the actor's SP groups", and a
    # token-budget-above-verdict line sizing its micro-batches at SP 3 (8192 x 3 / 2 = 12288 tokens per GPU).
    current = _current(cli, tmp_path, _config(ref_sp, engines=engines, batch=batch), *options)
    assert _lines(current) == [("role-sp-differs", (
        f"{REF_SP} {ref_sp} is not trainer.ulysses_sequence_parallel_size 2: {who} checks the ref's SP as the actor's "
        f"and refuses the config ({why}); Trinity 0.6 on verl 0.8 or later runs the ref at SP 2; the verdict is at SP "
        "2: set them alike (--write does)"))]
    assert current["refused"] is False  # verl 0.8 or later runs it


ACTOR_SP = "trainer.trainer_config.actor_rollout_ref.actor.ulysses_sequence_parallel_size"


@pytest.mark.parametrize(("actor_sp", "batch", "why", "options", "who"), [
    (3, 64, "SP=3 does not divide 4 GPUs", *RELEASES[0]),  # :423 through :555
    (1, 6, ("the train batch of 6 (buffer.train_batch_size) must split evenly over the data-parallel ranks, and 4 "
            "(4 GPUs / SP=1) do not divide it"), *RELEASES[1]),  # :430 (the trainer's 2 ranks divide it)
])
def test_06_and_no_release_refuse_an_actor_sp_the_legacy_check_refuses(cli, tmp_path: Path, actor_sp: int,
                                                                       batch: int, why: str,
                                                                       options: tuple[str, ...], who: str):
    # 0.6.0's synchronize_config takes the actor's own SP over the trainer's (verl_legacy/verl_config.py:554) and
    # checks it as the ref's (:555). Before (roles86): "Trinity with verl before 0.8 runs that role at SP 3 (with the
    # trainer's token budget), Trinity 0.6 on verl 0.8 or later at SP 2", whatever the check refuses.
    text = HEAD.format(algorithm="grpo", engines=4, batch=batch) + (
        f"  trainer_config:\n    actor_rollout_ref:\n      actor: {{ulysses_sequence_parallel_size: {actor_sp}}}\n")
    current = _current(cli, tmp_path, text, *options)
    assert (current["refused"], _lines(current)) == (False, [("role-sp-differs", (
        f"{ACTOR_SP} {actor_sp} is not trainer.ulysses_sequence_parallel_size 2: {who} checks the actor's SP and "
        f"refuses the config ({why}); Trinity 0.6 on verl 0.8 or later runs the actor at SP 2; the verdict is at SP 2: "
        "set them alike (--write does)"))])


@pytest.mark.parametrize(("options", "who"), RELEASES)
def test_a_ref_sp_the_legacy_check_takes_is_still_sized(cli, tmp_path: Path, options: tuple[str, ...], who: str):
    # SP 4 divides the 4 GPUs and the 32 heads, and its 1 rank any batch: as test_legacyref_s85 has it. Its line names
    # the release's legacy path as the refusals do (before, roles87: "Trinity with verl before 0.8" under 0.6 too).
    lines = _lines(_current(cli, tmp_path, _config(4, batch=6), *options))
    assert [code for code, _ in lines] == ["role-sp-differs", "token-budget-above-verdict"]
    assert lines[0][1] == (
        f"{REF_SP} 4 is not trainer.ulysses_sequence_parallel_size 2: {who} runs that role's forward at SP 4 (with the "
        "trainer's token budget) within the actor's SP groups, Trinity 0.6 on verl 0.8 or later at SP 2; the verdict "
        "is at SP 2: set them alike (--write does)")


def test_05_neither_sizes_nor_runs_a_ref_sp_it_refuses(cli, tmp_path: Path):
    # Before: 0.5's refusal lines, then its reading's "Trinity 0.5 runs that role's forward at SP 3 within the
    # actor's SP groups" and the ref's micro-batches sized at SP 3 (12288 tokens per GPU): as the critic's, a refused
    # SP now runs nowhere.
    current = _current(cli, tmp_path, _config(3), "--trinity-version", "0.5")
    own = ", and Trinity 0.5 checks the ref's SP as the actor's: it refuses the config"
    assert (current["refused"], _lines(current)) == (True, [
        ("sp-divides-gpus", f"{REF_SP}: SP=3 does not divide 4 GPUs (the trainer's){own}"),
        ("sp-model-heads", f"{REF_SP}: SP=3 does not divide its 32 attention heads of Qwen3-8B{own}")])


WHOLE_AT_SP_1 = ("  use_dynamic_bsz: false\n  trainer_config:\n    actor_rollout_ref:\n"
                 "      actor: {ppo_micro_batch_size_per_gpu: 1}\n"
                 "      rollout: {log_prob_micro_batch_size_per_gpu: 1}\n"
                 "      ref: {ulysses_sequence_parallel_size: 1, log_prob_micro_batch_size_per_gpu: 2}\n")
"""Under ``trainer``: dynamic batch sizes off, the ref at its own SP 1 with 2 sequences per micro-batch."""


def test_a_refused_ref_sp_1_takes_no_whole_micro_batches(cli, tmp_path: Path):
    # At SP 1 verl 0.7 slices none of the ref's micro-batches, 2 x 8192 tokens per GPU (test_legacyref_s85); with a
    # batch of 6 its 4 ranks are refused, so no line counts them (before: "runs it at the ref's own SP 1").
    counted = "runs it at the ref's own SP 1, slicing none of its micro-batches"
    for batch, sized in ((8, True), (6, False)):
        text = HEAD.format(algorithm="grpo", engines=4, batch=batch) + WHOLE_AT_SP_1
        lines = _lines(_current(cli, tmp_path, text, "--trinity-version", "0.6"))
        assert any(counted in words for _, words in lines) is sized
    refused = lines
    # on verl 0.8 the ref runs at the trainer's SP 2: 6 / 2 ranks = 3 rows per GPU, which its 2 does not divide
    # (roles87b: verl 0.8's engine asserts it in the ref's forward)
    assert [code for code, _ in refused] == ["role-sp-differs", "mini-batch-split", "dynamic-batch-off"]
    assert "the ref's forward" in refused[1][1] and "= 3, which it does not" in refused[1][1]
    assert "refuses the config (the train batch of 6" in refused[0][1]


def test_legacy_sp_refusals_follow_the_checks_order():
    model = load_catalog().model("8B")
    batch = TrainBatch(6, "buffer.train_batch_size")
    gpus = ConfigProblem(ConfigProblemCode.SP_DIVIDES_GPUS, "SP=3 does not divide 4 GPUs")
    heads = ConfigProblem(ConfigProblemCode.SP_MODEL_HEADS, "SP=3 does not divide its 32 attention heads of Qwen3-8B")
    # the batch is checked only where SP divides the GPUs (:423 raises first), the heads whatever they are
    assert legacy_sp_refusals(model, 4, 3, batch) == [gpus, heads]
    assert legacy_sp_refusals(model, 4, 3, batch, heads=False) == [gpus]
    assert [code for code, _ in legacy_sp_refusals(model, 4, 1, batch)] == [ConfigProblemCode.BATCH_DIVIDES]
    assert legacy_sp_refusals(model, 4, 1) == legacy_sp_refusals(model, 4, 4, batch) == []
    assert legacy_sp_refusals(model, 0, 2, batch) == []  # GPUs not known: nothing of them, nor of the batch


def test_refused_sp_roles_by_release():
    model = load_catalog().model("8B")
    mapping = {"trainer": {"ulysses_sequence_parallel_size": 2, "trainer_config": {
        "actor_rollout_ref": {"ref": {"ulysses_sequence_parallel_size": 1}}}}}
    for version in ("0.5", "0.6", None):
        assert refused_sp_roles(mapping, model, 4, version=version, train_batch_size=6) == {"ref"}
        assert refused_sp_roles(mapping, model, 4, version=version, train_batch_size=8) == set()
    # 0.5 gives the trainer's SP to a ref that sets none and checks it; 0.6 freezes it there on verl 0.8 or later,
    # and with verl before 0.8 it is the trainer's own, whose refusal is the verdict's rule, not the ref's
    trainer_3 = {"trainer": {"ulysses_sequence_parallel_size": 3, "trainer_config": {
        "actor_rollout_ref": {"actor": {"ulysses_sequence_parallel_size": 2}}}}}
    assert refused_sp_roles(trainer_3, model, 4, version="0.5") == {"ref"}
    # 0.6 on verl before 0.8 checks the actor's own SP 2 (:555), which 4 GPUs, the heads and any batch of 2 take
    assert refused_sp_roles(trainer_3, model, 4, version="0.6") == set()


@pytest.mark.parametrize(("section", "line"), [
    # The critic's SP goes through the same check (:609): before, 0.6's line checked the GPUs and the heads alone and
    # counted the critic's update at SP 1 (critic_sps [1, 2]) where its 4 ranks do not divide a batch of 6.
    ("{ulysses_sequence_parallel_size: 1}", (
        "trainer.trainer_config.critic.ulysses_sequence_parallel_size 1 is not trainer.ulysses_sequence_parallel_size "
        "2: Trinity 0.6 on verl before 0.8 checks the critic's SP as the actor's and refuses the config (the train "
        "batch of 6 (buffer.train_batch_size) must split evenly over the data-parallel ranks, and 4 (4 GPUs / SP=1) do "
        "not divide it); Trinity 0.6 on verl 0.8 or later ignores the key and runs the critic at SP 2; the verdict and "
        "the plans count the critic at SP 2: set them alike (--write does)")),
    # verl 0.8.0's critic update asserts that its engine's ranks divide its mini-batch, the train batch
    # (workers/engine_workers.py:258; Trinity 0.6 freezes critic.ppo_mini_batch_size to it, trainer/verl/config.py:458):
    # before (roles86), the line said verl 0.8 runs the critic at SP 1 and the verdict counted it there, as above.
    ("{fsdp: {ulysses_sequence_parallel_size: 1}}", (
        "trainer.trainer_config.critic.fsdp.ulysses_sequence_parallel_size 1 is not "
        "trainer.ulysses_sequence_parallel_size 2: Trinity 0.6 on verl 0.8 or later takes SP 1, its engine's over the "
        "trainer's (checking it against nothing), where the train batch of 6 (buffer.train_batch_size) must split "
        "evenly over the data-parallel ranks, and 4 (4 GPUs / SP=1) do not divide it, which verl asserts at the "
        "critic's first update (verl 0.8.0 workers/engine_workers.py:258): it fails there; a train batch that 4 "
        "data-parallel ranks divide (the nearest to 6: 4 or 8) runs it, and with verl before 0.8 no release reads it; "
        "the verdict and the plans count the critic at SP 2: set them alike (--write does)")),
])
def test_06_runs_no_critic_sp_its_ranks_do_not_divide_the_batch_at(cli, tmp_path: Path, section: str, line: str):
    text = HEAD.format(algorithm="ppo", engines=4, batch=6) + f"  trainer_config:\n    critic: {section}\n"
    current = _current(cli, tmp_path, text, "--trinity-version", "0.6")
    # the other verl line runs the critic at the trainer's SP 2, the only one counted
    assert (current["refused"], current["critic_sps"], _lines(current)[0]) == (False, [], ("role-sp-differs", line))
    assert _current(cli, tmp_path, text.replace("batch_size: 6", "batch_size: 8"), "--trinity-version", "0.6")[
        "critic_sps"] == [1, 2]


LORA = ("algorithm: {algorithm_type: grpo}\n"
        "model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768, lora_configs: [{lora_rank: 32}]}\n"
        "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\ntrainer:\n"
        "  ulysses_sequence_parallel_size: 2\n  trainer_config:\n    actor_rollout_ref:\n"
        "      ref: {ulysses_sequence_parallel_size: 4, log_prob_max_token_len_per_gpu: 4096}\n")
"""LoRA at the actor's SP 2, the ref's own SP 4 and budget 4096, raised at SP 4 to 8192: 16384 tokens at SP 2."""
PASS = ("8192 x the actor's SP 2 = 16384 tokens hold no sequence of 32768, and with LoRA the actor's log-prob pass "
        "gives the ref's log-probs at the actor's SP with the ref's budget, so verl stops at the first step whose "
        "batch holds a sequence longer than that")
FIX = "; set the ref's SP to the actor's (--write does), or its budget to at least ceil(32768 / 2) = 16384"
BUDGET = "trainer.trainer_config.actor_rollout_ref.ref.log_prob_max_token_len_per_gpu 4096"
ON_08 = "; Trinity 0.6 on verl 0.8 or later sets the ref's SP and budget to the trainer's"
PADDED = " or is padded wider than that, to its longest prompt plus its longest response (0.5.0 and 0.5.1)"
RAISED_050 = " (0.5.0 to ceil(2 x 32768 / 4) = 16384, which holds one at the actor's SP)"


@pytest.mark.parametrize(("options", "line"), [
    (("--trinity-version", "0.6"), (
        f"{BUDGET}, which Trinity 0.6 on verl before 0.8 raises at the ref's SP 4 to ceil(32768 / 4) = 8192: {PASS}"
        f"{ON_08}{FIX}")),
    ((), (f"{BUDGET}, which Trinity with verl before 0.8 raises at the ref's SP 4 to ceil(32768 / 4) = 8192"
          f"{RAISED_050}: {PASS} (Trinity 0.5.2 and 0.6){PADDED}{ON_08}{FIX}")),
    (("--trinity-version", "0.5"), (f"{BUDGET}, which Trinity 0.5 raises at the ref's SP 4 to ceil(32768 / 4) = 8192"
                                    f"{RAISED_050}: {PASS} (Trinity 0.5.2){PADDED}{FIX}")),
])
def test_lora_gives_the_refs_log_probs_at_the_actors_sp_on_06s_legacy_path_too(cli, tmp_path: Path,
                                                                               options: tuple[str, ...], line: str):
    # Before: the line for 0.5 alone (lora_ref_sp 0.5-only); 0.6's legacy worker runs the same pass.
    passes = [words for code, words in _lines(_current(cli, tmp_path, LORA, *options))
              if code == "token-budget-below-length" and "log-prob pass" in words]
    assert passes == [line]
    # A ref SP the legacy check refuses: no pass runs at it, so none is judged (SP 3 on 4 GPUs).
    refused = _current(cli, tmp_path, LORA.replace("size: 4,", "size: 3,"), *options)
    assert not any("log-prob pass" in words for words in refused["config_problems"])
