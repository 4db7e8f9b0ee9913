"""Batch keys the verdict on a config counts with dynamic batch sizes off (session 74). DPO: Trinity on verl before 0.8
doubles the actor's and the ref's micro-batch sizes per GPU (a chosen and a rejected sequence per example; the unset
rollout's is filled from the doubled actor's), so the verdict and the plans count twice the sequences. A deprecated
size for the whole batch (the actor's ``ppo_micro_batch_size``, the ref's ``log_prob_micro_batch_size``) is counted as
Trinity's verl workers take it, over the data-parallel ranks (floored), and refused below them (0 per GPU). Trinity
0.5 runs the ref at its own SP: at SP 1 verl slices none of its micro-batches, so each GPU takes them whole; above 1
they are sliced over the actor's SP groups, so they count at the actor's SP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import in_train_mode
from test_tokbudget_s72 import ARR, CATALOG, Cli, _config, _verdict
from test_trinity import vanilla_plan

from solver.api import config_query
from solver.trinity import read_trinity_config, trinity_config_problems
from solver.trinity.checks import fsdp_state_groups
from solver.trinity.keys import DEPRECATED_MICRO_BATCH_SIZES
from solver.trinity.plan_keys import keys_for_plan

ACTOR, REF, ROLLOUT = (f"{ARR}.{key}" for key in (
    "actor.ppo_max_token_len_per_gpu", "ref.log_prob_max_token_len_per_gpu", "rollout.log_prob_max_token_len_per_gpu"))
DOUBLED = ("the micro-batch size per GPU, 1 where unset, doubled: Trinity on verl before 0.8 doubles the actor's and "
           "the ref's for DPO, a chosen and a rejected sequence per example")
ABOVE = ("more than Trinity's default ceil(2 x 8192 / {sp}) = {default}, which the tables measured: more tokens per "
         "GPU than the verdict assumes; set the micro-batch sizes to 1, or turn dynamic batch sizes on")
DPO_FIX = (" (for DPO the actor's 1 is one pair before verl 0.8, where Trinity doubles it, and on verl 0.8 or later "
           "needs 2, dpo-pair-split: no size fits both lines; dynamic batch sizes on would split its pairs, "
           "dpo-pair-dynamic)")
ONE_SEQUENCE = ("dynamic batch sizes off: verl reads no token budget and fills each micro-batch with 1 sequence (the "
                "micro-batch size per GPU, 1 where unset), up to 1 x ceil(8192 / {sp}) = {tokens} tokens per GPU, "
                "below Trinity's default ceil(2 x 8192 / {sp}) = {default}, which the tables measured: the verdict is "
                "at {tokens} tokens per GPU")


def _dpo(roles: dict[str, Any] | None = None, **trainer: Any) -> dict[str, Any]:
    """`_config`'s (Qwen3-8B at 8192 on 8 GPUs, dynamic batch sizes off) for DPO, which needs a train batch."""
    config = _config(roles, **trainer)
    config["algorithm"]["algorithm_type"] = "dpo"
    config["buffer"]["train_batch_size"] = 64
    return config


def _counted(config: dict[str, Any], version: str | None = None) -> tuple[tuple[tuple[str, int], ...], dict[str, str]]:
    """The sequences per micro-batch the reader counts for `config`, and the words on where they come from."""
    read = read_trinity_config(yaml.safe_dump(config), "c.yaml", {}, version)  # type: ignore[arg-type]
    return read.micro_batch_sequences, dict(read.micro_batch_sources)


def test_dpo_counts_two_sequences_per_micro_batch_where_grpo_counts_one():
    # GRPO: one sequence of 8192 per micro-batch, below the default 16384: the verdict is at 8192
    assert _verdict(_config()) == (8192, [("lowered-token-budget", ONE_SEQUENCE.format(sp=1, tokens=8192,
                                                                                       default=16384))])
    # DPO: Trinity doubles each size to 2, 2 x 8192 = 16384, the default: the verdict is at it, with nothing to say
    assert _counted(_dpo()) == (((ACTOR, 2), (REF, 2), (ROLLOUT, 2)), {ACTOR: DOUBLED, REF: DOUBLED, ROLLOUT: DOUBLED})
    assert _verdict(_dpo()) == (None, [])
    assert _verdict(_dpo(), estimate="never") == (None, [])


@pytest.mark.parametrize("version", ["0.5", "0.6", None])
def test_dpos_unset_ref_and_rollout_sizes_are_said_only_where_a_release_fails_on_them(version: str | None):
    # checks93b: left unset with dynamic batch sizes off, Trinity 0.5 and 0.6 on verl 0.7 give them 1 (DPO runs), and
    # 0.6 on verl 0.8 hands verl none (trainer/verl/config.py:358, :400 in 0.6.0), which refuses them as the trainer
    # starts: quiet with 0.5; a but: line naming verl 0.8 alone with 0.6 (it installs verl 0.7.1 or later), not refused
    found = trinity_config_problems(in_train_mode(_dpo({"actor": {"ppo_micro_batch_size_per_gpu": 2}})),
                                    CATALOG.model("8B"), 8, version=version)  # type: ignore[arg-type]
    lines = [(problem.code.value, problem.words) for problem in found if problem.code.value.startswith("micro")]
    assert lines == ([] if version == "0.5" else [("micro-batch-unset", (
        f"{key} is not set: Trinity 0.6 on verl 0.8 or later hands verl none, which then refuses dynamic batch sizes "
        "off as the trainer starts: set it to 1 (solver.trinity.patch_trinity_config does)"))
        for key in (f"{ARR}.{role}.log_prob_micro_batch_size_per_gpu" for role in ("ref", "rollout"))])


def test_dpo_doubles_the_sizes_written_and_the_rollouts_filled_from_the_actors():
    sizes = {"actor": {"ppo_micro_batch_size_per_gpu": 2}, "ref": {"log_prob_micro_batch_size_per_gpu": 3}}
    assert _counted(_dpo(sizes))[0] == ((ACTOR, 4), (REF, 6), (ROLLOUT, 4))
    # the rollout's own size is not doubled (Trinity doubles the actor's and the ref's alone)
    own = {**sizes, "rollout": {"log_prob_micro_batch_size_per_gpu": 1}}
    assert _counted(_dpo(own)) == (((ACTOR, 4), (REF, 6), (ROLLOUT, 1)), {ACTOR: DOUBLED, REF: DOUBLED})
    assert _verdict(_dpo(own)) == (None, [("token-budget-above-verdict", (
        f"dynamic batch sizes off: verl reads no token budget and fills each micro-batch with 6 sequences ({DOUBLED}), "
        f"up to 6 x ceil(8192 / 1) = 49152 tokens per GPU, {ABOVE.format(sp=1, default=16384)}"
        .replace(", or turn dynamic batch sizes on", DPO_FIX)))])  # on, its pairs would split: test_dpopairs_s82


def test_dpo_with_dynamic_batch_sizes_on_is_bounded_by_the_token_budget():
    config = _dpo({"actor": {"ppo_micro_batch_size_per_gpu": 4}}, use_dynamic_bsz=True)
    assert _counted(config, "0.6") == ((), {})
    assert _verdict(config, "0.6") == _verdict(_config({"actor": {"ppo_micro_batch_size_per_gpu": 4}},
                                                       use_dynamic_bsz=True), "0.6")
    # rowsflag88: where Trinity 0.6's legacy trainer recomputes the old log-probs (bypass_mode false), the rollout's
    # flag, unset beside the actor's, is none there, which runs that pass in rows of the doubled 8
    config["trainer"]["trainer_config"]["algorithm"] = {"rollout_correction": {"bypass_mode": False}}
    assert _counted(config, "0.6") == (((ROLLOUT, 8),), {ROLLOUT: DOUBLED})


def test_the_plans_made_from_a_dpo_config_count_its_two_sequences():
    def budget_mode(config: dict[str, Any]) -> str:
        read = read_trinity_config(yaml.safe_dump(config), "c.yaml", {})
        return config_query(CATALOG, read, gpu="H100").token_budget
    # one sequence lowers the budget below the default, so the plans may too; DPO's two take the default
    assert (budget_mode(_config()), budget_mode(_dpo())) == ("auto", "default")


@pytest.mark.parametrize(("sp", "size", "sequences"), [(1, 32, 4), (2, 32, 8), (4, 6, 3), (1, 12, 1)])
def test_a_deprecated_whole_batch_size_counts_over_the_data_parallel_ranks(sp: int, size: int, sequences: int):
    config = _config({"actor": {"ppo_micro_batch_size": size}}, ulysses_sequence_parallel_size=sp)
    words = (f"{ARR}.actor.ppo_micro_batch_size {size}, a deprecated size for the whole batch, over {8 // sp} "
             "data-parallel ranks, trainer GPUs / SP, as verl before 0.8 takes it")
    assert _counted(config) == (((ACTOR, sequences), (REF, 1), (ROLLOUT, 1)), {ACTOR: words})
    tokens, default = sequences * -(-8192 // sp), -(-2 * 8192 // sp)
    what = (f"dynamic batch sizes off: verl reads no token budget and fills each micro-batch with {sequences} "
            f"sequence{'s' if sequences > 1 else ''} ({words}), up to {sequences} x ceil(8192 / {sp}) = {tokens} "
            "tokens per GPU")
    if sequences > 1:  # 32768, 32768 and 6144 tokens per GPU, above the defaults 16384, 8192 and 4096
        assert _verdict(config) == (None, [("token-budget-above-verdict",
                                            f"{what}, {ABOVE.format(sp=sp, default=default)}")])
    else:  # 12 over 8 ranks, floored to 1: one sequence, 8192, below the default 16384
        assert _verdict(config) == (8192, [("lowered-token-budget", (
            f"{what}, below Trinity's default ceil(2 x 8192 / 1) = 16384, which the tables measured: the verdict is at "
            "8192 tokens per GPU"))])


def test_a_deprecated_size_replaces_the_dpo_doubled_one_and_counts_whole_without_trainer_gpus():
    config = _dpo({"actor": {"ppo_micro_batch_size": 32}, "ref": {"log_prob_micro_batch_size": 8}})
    sequences, sources = _counted(config)
    assert sequences == ((ACTOR, 4), (REF, 1), (ROLLOUT, 2))  # the rollout's from the doubled per-GPU size, 2
    assert sources[ROLLOUT] == DOUBLED
    assert sources[REF] == (f"{ARR}.ref.log_prob_micro_batch_size 8, a deprecated size for the whole batch, over 8 "
                            "data-parallel ranks, trainer GPUs / SP, as verl before 0.8 takes it")
    del config["cluster"]
    assert _counted(config) == (((ACTOR, 32), (REF, 8), (ROLLOUT, 2)), {
        ACTOR: f"{ARR}.actor.ppo_micro_batch_size 32, a deprecated size for the whole batch, counted whole: the config "
               "gives no trainer GPUs to divide it by",
        REF: f"{ARR}.ref.log_prob_micro_batch_size 8, a deprecated size for the whole batch, counted whole: the config "
             "gives no trainer GPUs to divide it by",
        ROLLOUT: DOUBLED})


def _refused(config: dict[str, Any], version: str | None = None) -> list[tuple[str, str]]:
    """The ``micro-batch-unset-refused`` lines of `config` for Qwen3-8B on its 8 trainer GPUs."""
    found = trinity_config_problems(config, CATALOG.model("8B"), 8, version=version)  # type: ignore[arg-type]
    return [(problem.code.value, problem.words) for problem in found
            if problem.code.value == "micro-batch-unset-refused"]


def test_a_deprecated_size_below_the_data_parallel_ranks_is_refused():
    roles = {"actor": {"ppo_micro_batch_size": 4}, "ref": {"log_prob_micro_batch_size": 3}}
    words = ("{key} is {size}, a deprecated size for the whole batch, below the {ranks} data-parallel ranks (trainer "
             "GPUs 8 / SP {sp}): verl before 0.8 divides it by them to 0 sequences per GPU, on which the trainer "
             "fails, and verl 0.8 or later refuses it: remove it, and set {per_gpu} instead")
    assert _refused(_config(roles)) == [
        ("micro-batch-unset-refused", words.format(key=f"{ARR}.actor.ppo_micro_batch_size", size=4, ranks=8, sp=1,
                                                   per_gpu="ppo_micro_batch_size_per_gpu")),
        ("micro-batch-unset-refused", words.format(key=f"{ARR}.ref.log_prob_micro_batch_size", size=3, ranks=8, sp=1,
                                                   per_gpu="log_prob_micro_batch_size_per_gpu"))]
    # at SP 2, 4 ranks: the actor's 4 gives 1 per GPU, the ref's 3 still 0
    assert [line for _, line in _refused(_config(roles, ulysses_sequence_parallel_size=2))] == [words.format(
        key=f"{ARR}.ref.log_prob_micro_batch_size", size=3, ranks=4, sp=2, per_gpu="log_prob_micro_batch_size_per_gpu")]
    # a size the ranks do not divide is floored, which verl takes; dynamic batch sizes on read no size
    assert _refused(_config({"actor": {"ppo_micro_batch_size": 12}})) == []
    assert _refused(_config(roles, use_dynamic_bsz=True), "0.6") == []


def test_check_exits_1_on_a_deprecated_size_below_the_ranks(cli: Cli, tmp_path: Path):
    path = tmp_path / "trinity.yaml"
    for size, status in ((4, 1), (8, 0)):
        path.write_text(yaml.safe_dump(_config({"actor": {"ppo_micro_batch_size": size}})))
        code, out, err = cli("--from-config", str(path), "--gpu", "h100", "--check")
        assert (code, err, "ppo_micro_batch_size is 4, a deprecated size" in out) == (status, "", status == 1)


def _ref_sp(ref_sp: int, ref_size: int = 1) -> dict[str, Any]:
    """`_config`'s at the trainer's SP 2, with the ref's own SP `ref_sp` and micro-batch size `ref_size`."""
    ref = {"ulysses_sequence_parallel_size": ref_sp, "log_prob_micro_batch_size_per_gpu": ref_size}
    return _config({"ref": ref}, ulysses_sequence_parallel_size=2)


def test_trinity_0_5_counts_the_refs_pass_at_its_own_sp_1_whole_and_above_1_at_the_actors():
    at_actor = (4096, [("lowered-token-budget", ONE_SEQUENCE.format(sp=2, tokens=4096, default=8192))])
    assert _verdict(_config(ulysses_sequence_parallel_size=2), "0.5") == at_actor
    # ref SP 4: verl pads the ref's micro-batch to 4 and slices it over the actor's SP groups of 2: 1 x 4096
    assert _verdict(_ref_sp(4), "0.5") == at_actor
    # ref SP 1: verl slices nothing, so each GPU takes the ref's whole sequence, 8192, the default at SP 2
    assert _verdict(_ref_sp(1), "0.5") == (None, [])
    assert _verdict(_ref_sp(1, ref_size=2), "0.5") == (None, [("token-budget-above-verdict", (
        "dynamic batch sizes off: verl reads no token budget and fills each micro-batch with 2 sequences (the largest "
        "micro-batch size per GPU, 1 where unset), up to 2 x ceil(8192 / 1) = 16384 tokens per GPU (the ref's forward: "
        "Trinity 0.5 runs it at the ref's own SP 1, slicing none of its micro-batches), "
        f"{ABOVE.format(sp=2, default=8192)}"))])
    # Trinity 0.6 on verl 0.8 or later runs the ref at the trainer's SP, but on verl before 0.8 at its own SP 1, as
    # 0.5 does (verl_legacy/fsdp_workers.py:158-180 builds the groups from the actor's SP): counted there, the most
    assert _verdict(_ref_sp(1), "0.6") == (None, [])


# checks89: Trinity doubles DPO's per-GPU size as it loads the config, then its actor worker puts the deprecated
# whole-batch size over the ranks in its place, doubled by nothing (0.6.0 trainer/verl_legacy/fsdp_workers.py:247-253)
PAIR_SPLIT = (f"{ARR}.actor.ppo_micro_batch_size is {{size}} for DPO with dynamic batch sizes off: a deprecated size "
              "for the whole batch, which {who} takes over the per-GPU size (trainer/verl_legacy/"
              "fsdp_workers.py:247-253 in Trinity 0.6.0), after doubling that one for DPO, and does not double: {size} "
              "over the 8 data-parallel "
              "ranks (trainer GPUs 8 / SP 1) = {taken}, and Trinity's DPO loss takes a micro-batch's rows in pairs, a "
              "chosen and a rejected sequence: {split}; it runs, but is not DPO: remove it, or set it to null, read as "
              "unset (solver.trinity.patch_trinity_config does)")
ONE_ROW = ("each micro-batch holds one sequence, so the loss finds no rejected one: it sums the empty half to 0 and "
           "trains every sequence, the rejected ones too, as a chosen one")


def _pair_lines(config: dict[str, Any], version: str | None = None) -> list[tuple[str, str]]:
    """(code, words) of `config`'s ``dpo-pair-split`` and ``micro-batch-deprecated-size`` lines on its 8 GPUs."""
    found = trinity_config_problems(config, CATALOG.model("8B"), 8, version=version)  # type: ignore[arg-type]
    return [(problem.code.value, problem.words) for problem in found
            if problem.code.value in ("dpo-pair-split", "micro-batch-deprecated-size")]


def test_a_dpo_deprecated_size_of_an_odd_quotient_splits_pairs_before_verl_0_8():
    one = PAIR_SPLIT.format(size=8, taken="1 sequence per micro-batch", split=ONE_ROW,
                            who="Trinity with verl before 0.8")
    assert [line for line in _pair_lines(_dpo({"actor": {"ppo_micro_batch_size": 8}})) if line[0][0] == "d"] == [
        ("dpo-pair-split", one)]
    three = _pair_lines(_dpo({"actor": {"ppo_micro_batch_size": 24}}), "0.5")
    assert three == [("dpo-pair-split", PAIR_SPLIT.format(
        size=24, taken="3 sequences per micro-batch", who="Trinity 0.5", split=(
            "each micro-batch holds 3 sequences, which splits a pair over two micro-batches, and the loss takes the "
            "next one's rows the other way round, its rejected sequences as chosen")))]
    # one pair per GPU (16 over 8), GRPO, or dynamic batch sizes on (dpo-pair-dynamic's): no such line
    assert _pair_lines(_dpo({"actor": {"ppo_micro_batch_size": 16}}), "0.5") == []
    assert _pair_lines(_config({"actor": {"ppo_micro_batch_size": 8}}), "0.5") == []
    assert _pair_lines(_dpo({"actor": {"ppo_micro_batch_size": 8}}, use_dynamic_bsz=True), "0.6") == []


def test_verl_0_8_refuses_a_deprecated_size_beside_the_per_gpu_one_for_every_model():
    # verl 0.8.0 ActorConfig.__post_init__ (workers/config/actor.py:199-205) raises whatever the model: Qwen3's too
    roles = {"actor": {"ppo_micro_batch_size": 16, "ppo_micro_batch_size_per_gpu": 1}}
    line = (f"{ARR}.actor.ppo_micro_batch_size is 16: a deprecated size for the whole batch, which verl before 0.8 "
            "takes over the per-GPU size, 16 over the 8 data-parallel ranks (trainer GPUs 8 / SP 1) = 2 sequences per "
            "micro-batch, as the verdict counts; but verl 0.8 or later refuses it beside the per-GPU size as the "
            "trainer starts (a ValueError: both set): remove it, or set it to null, read as unset "
            "(solver.trinity.patch_trinity_config does)")
    assert _pair_lines(_config(roles)) == _pair_lines(_config(roles), "0.6") == [("micro-batch-deprecated-size", line)]
    # Trinity 0.5's verl runs it; dynamic batch sizes on, verl 0.8 checks neither size
    assert _pair_lines(_config(roles), "0.5") == _pair_lines(_config(roles, use_dynamic_bsz=True), "0.6") == []


def test_verl_0_8_refuses_a_deprecated_size_of_a_role_whose_own_flag_is_on_before_0_8():
    # checks89b: Trinity 0.6 on verl 0.8 gives every role the trainer's flag, off (trainer/verl/config.py:288, :359),
    # so the ref's own log_prob_use_dynamic_bsz (read before 0.8 only) does not spare its size verl 0.8's refusal
    for role, size, own in (("ref", "log_prob_micro_batch_size", "log_prob_use_dynamic_bsz"),
                            ("actor", "ppo_micro_batch_size", "use_dynamic_bsz")):
        roles = {role: {size: 16, f"{size}_per_gpu": 1, own: True}}
        line = (f"{ARR}.{role}.{size} is 16: a deprecated size for the whole batch, which verl 0.8 or later refuses "
                "beside the per-GPU size as the trainer starts (a ValueError: both set), as Trinity 0.6 gives the role "
                f"there trainer.use_dynamic_bsz, false, over {ARR}.{role}.{own}, true (which before verl 0.8, where it "
                "counts, reads neither size): remove it, or set it to null, read as unset "
                "(solver.trinity.patch_trinity_config does)")
        assert _pair_lines(_config(roles)) == [("micro-batch-deprecated-size", line)], role
        # Trinity 0.5 reads the role's own flag, on: neither size is read
        assert _pair_lines(_config(roles), "0.5") == []
    # Trinity 0.6 sets the actor's to the trainer's on verl before 0.8 too, which takes the size over the per-GPU one
    before = f"{ARR}.actor.ppo_micro_batch_size is 16: a deprecated size for the whole batch, which verl before 0.8"
    assert _pair_lines(_config(roles), "0.6")[0][1].startswith(before)
    # the ref's own flag, on, spares it no more where the release is 0.6 (verl 0.8 or later may run it); one that
    # OmegaConf's bool field refuses gets its wrong-type line alone, not words saying it is true
    ref = {"ref": {"log_prob_micro_batch_size": 16, "log_prob_micro_batch_size_per_gpu": 1,
                   "log_prob_use_dynamic_bsz": True}}
    assert _pair_lines(_config(ref), "0.6") == _pair_lines(_config(ref)) != []
    ref["ref"]["log_prob_use_dynamic_bsz"] = "maybe"
    assert _pair_lines(_config(ref)) == []


def test_write_nulls_a_deprecated_size_for_any_model(cli: Cli, tmp_path: Path):
    path, written = tmp_path / "trinity.yaml", tmp_path / "out.yaml"
    path.write_text(yaml.safe_dump(_dpo({"actor": {"ppo_micro_batch_size": 8}})))
    code, _, err = cli("--from-config", str(path), "--gpu", "h100", "--write", str(written))
    actor = yaml.safe_load(written.read_text())["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]
    assert (code, actor) == (0, {"ppo_micro_batch_size": None, "ppo_micro_batch_size_per_gpu": 2}), err
    found = trinity_config_problems(yaml.safe_load(written.read_text()), CATALOG.model("8B"), 8)
    assert [problem.code.value for problem in found if "deprecated" in problem.words] == []


def test_an_unreadable_bypass_mode_is_an_unread_key_where_the_recompute_would_run_in_rows(cli: Cli, tmp_path: Path):
    # Trinity 0.6's legacy trainer recomputes the old log-probs with bypass_mode false, in rows of the actor's 4
    # (the rollout's flag left none), past the verdict's budget: unreadable, whether the config trains is unknown
    config = _config({"actor": {"ppo_micro_batch_size_per_gpu": 4}}, use_dynamic_bsz=True)
    config["trainer"]["trainer_config"]["algorithm"] = {"rollout_correction": {"bypass_mode": "${oc.env:BYPASS}"}}
    path = tmp_path / "trinity.yaml"
    path.write_text(yaml.safe_dump(config))
    key = "trainer.trainer_config.algorithm.rollout_correction.bypass_mode"
    read = read_trinity_config(path.read_text(), "c.yaml", {})
    assert (read.memory_unread, read_trinity_config(path.read_text(), "c.yaml", {}, "0.5").memory_unread) == (
        (key,), ())
    assert read_trinity_config(path.read_text(), "c.yaml", {"BYPASS": "true"}).memory_unread == ()
    code, out, _ = cli("--from-config", str(path), "--gpu", "h100", "--check", "--json")
    assert (code, json.loads(out)[0]["current"]["unread_keys"]) == (1, [key])
    # the actor's 1: the recompute's rows hold what the verdict counts, so nothing rests on the key
    config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["ppo_micro_batch_size_per_gpu"] = 1
    assert read_trinity_config(yaml.safe_dump(config), "c.yaml", {}).memory_unread == ()
    # the actor's 4 with dynamic batch sizes off: the recompute counted in rows already, so nothing rests on it either
    config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["ppo_micro_batch_size_per_gpu"] = 4
    config["trainer"]["use_dynamic_bsz"] = False
    assert read_trinity_config(yaml.safe_dump(config), "c.yaml", {}).memory_unread == ()
    # not a boolean: Trinity 0.6's legacy trainer types it bool (verl_legacy/verl_config.py:340) as it starts
    # (verl_trainer.py:198, OmegaConf.structured), said so (checks89b)
    config["trainer"]["trainer_config"]["algorithm"]["rollout_correction"]["bypass_mode"] = "maybe"
    found = trinity_config_problems(config, CATALOG.model("8B"), 8, version="0.6")  # type: ignore[arg-type]
    assert [(problem.code.value, problem.words) for problem in found if key in problem.words] == [
        ("wrong-type", (f"{key} must be true or false, got 'maybe': Trinity 0.6 on verl before 0.8 keeps it as "
                        "written, which its trainer's typed config (OmegaConf's bool field) refuses as the trainer "
                        "starts, and on verl 0.8 or later ignores it; the notes that read it are not judged"))]
    # checks90: the flags no check judges are said so too, in the same words (non_boolean_flag_words): one verl 0.8
    # hands as written, its value read by Python's truth, and one that Trinity 0.6 sets to the trainer's
    config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["entropy_checkpointing"] = "maybe"
    config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["fsdp_config"] = {"param_offload": []}
    found = trinity_config_problems(config, CATALOG.model("8B"), 8, version="0.6")  # type: ignore[arg-type]
    kept = ("Trinity 0.6 on verl before 0.8 keeps it as written, which its trainer's typed config (OmegaConf's bool "
            "field) refuses as the trainer starts")
    assert [problem.words for problem in found if "entropy_checkpointing" in problem.words
            or "param_offload" in problem.words] == [
        (f"{ARR}.actor.entropy_checkpointing must be true or false, got 'maybe': {kept}, and on verl 0.8 or "
         "later hands it to verl as written, which reads it as true (Python's truth of it); the notes that read it "
         "are not judged"),
        (f"{ARR}.actor.fsdp_config.param_offload must be true or false, got []: Trinity 0.6 on verl before 0.8 "
         "sets it to trainer.param_offload, and on verl 0.8 or later hands it to verl as written, which reads it as "
         "false (Python's truth of it); the notes that read it are not judged")]


# fsdp89: a role's fsdp_size below the trainer GPUs shards its states over groups of it (hybrid sharding), which the
# verdict did not read; one the GPUs do not divide Trinity refuses before verl 0.8 (verl_legacy/verl_config.py:458)
FSDP = f"{ARR}.{{role}}.fsdp_config.fsdp_size"
CRITIC_FSDP = "trainer.trainer_config.critic.model.fsdp_config.fsdp_size"
FIX = "set it to -1, every GPU (solver.trinity.patch_trinity_config does)"
HYBRID = ("{key} is {size}: {who} shards {held} over groups of {size} of the 8 trainer GPUs and keeps a copy in "
          "each of the {groups} groups (hybrid sharding), so each GPU holds {groups} times the share a shard over all "
          "8 holds{counted}; " + FIX)
COUNTED = ": the verdict counts them so, as a run on {size} GPUs holds them, by the memory model{need}"
PINNED = "verl keeps them in pinned host memory (CPUOffload), so each node holds more of them than counted, the GPUs' "
REF_TOO = "; {before} shards its ref's weights so too, and " + PINNED + "memory as counted"
TRINITY_REFUSES = ("{who} refuses the config as it loads it (\"The number of GPUs (8) must be divisible by "
                   "`{role}.fsdp_config.fsdp_size` (3). Please change `{role}.fsdp_config.fsdp_size` in verl config to "
                   "a reasonable value.\")")
MESH = "create_device_mesh, workers/engine/fsdp/utils.py:52-57 in verl 0.8.0"


def _fsdp_lines(config: dict[str, Any], version: str | None = None) -> list[tuple[str, str]]:
    """(code, words) of `config`'s ``fsdp-size`` lines on its 8 GPUs."""
    found = trinity_config_problems(config, CATALOG.model("8B"), 8, version=version)  # type: ignore[arg-type]
    return [(problem.code.value, problem.words) for problem in found if problem.code.value.startswith("fsdp-size")]


def _sized(role: str, size: Any) -> dict[str, Any]:
    """`_config`'s (GRPO, which uses a ref) with `role`'s fsdp_size `size`."""
    return _config({role: {"fsdp_config": {"fsdp_size": size}}})


def test_an_fsdp_size_below_the_gpus_is_hybrid_sharding_and_one_they_do_not_divide_is_refused():
    actor, ref = FSDP.format(role="actor"), FSDP.format(role="ref")
    # the actor's shards its states (and, before verl 0.8, its ref's weights, which stay on the host) over groups of 4
    hybrid = HYBRID.format(key=actor, size=4, who="verl", held="the actor's states", groups=2, counted=COUNTED.format(
        size=4, need="") + REF_TOO.format(before="{before}"))
    assert _fsdp_lines(_sized("actor", 4)) == [("fsdp-size-hybrid", hybrid.format(
        before="Trinity with verl before 0.8"))]
    assert _fsdp_lines(_sized("actor", 4), "0.5") == [("fsdp-size-hybrid", hybrid.format(before="Trinity 0.5"))]
    # every GPU: the default -1, another below 1 (Trinity reads it as the GPUs), or at least the GPUs
    for size in (-1, -2, 8, 16):
        assert _fsdp_lines(_sized("actor", size)) == []
    # 0: verl 0.8's engine divides by it, where Trinity before verl 0.8 (0.5 alone here) reads it as every GPU
    assert _fsdp_lines(_sized("actor", 0), "0.5") == []
    assert _fsdp_lines(_sized("actor", 0), "0.6") == [("fsdp-size-mesh", (
        f"{actor} is 0: verl 0.8 or later divides the GPUs by it as it builds the actor's device mesh ({MESH}), a "
        f"ZeroDivisionError as the trainer starts; Trinity 0.6 on verl before 0.8 reads it as every GPU: {FIX}"))]
    # 3 does not divide 8: every verl line fails on it, refused
    assert _fsdp_lines(_sized("actor", 3)) == [("fsdp-size-mesh-refused", (
        f"{actor} is 3: {TRINITY_REFUSES.format(who='Trinity with verl before 0.8', role='actor')}; and verl 0.8 or "
        f"later builds the actor's device mesh of 2 x 3 = 6 of the 8 ranks ({MESH}), leaving 2 out, and fails as the "
        f"trainer starts: {FIX}"))]
    assert _fsdp_lines(_sized("actor", 3), "0.5") == [("fsdp-size-mesh-refused", (
        f"{actor} is 3: {TRINITY_REFUSES.format(who='Trinity 0.5', role='actor')}: {FIX}"))]
    # the ref's: before verl 0.8 only checked (the actor's sizes its mesh), on verl 0.8 its engine's mesh
    assert _fsdp_lines(_sized("ref", 4), "0.5") == []
    assert _fsdp_lines(_sized("ref", 4)) == [("fsdp-size-hybrid", HYBRID.format(
        key=ref, size=4, who="verl 0.8 or later", held="the ref's weights", groups=2,
        counted="; " + PINNED + "memory as counted"))]
    # the critic's where none is trained (GRPO): checked before verl 0.8 alone
    grpo = _config()
    grpo["trainer"]["trainer_config"]["critic"] = {"model": {"fsdp_config": {"fsdp_size": 3}}}
    refusal = TRINITY_REFUSES.format(who="Trinity with verl before 0.8", role="critic")
    assert _fsdp_lines(grpo) == [("fsdp-size-mesh", (
        f"{CRITIC_FSDP} is 3: {refusal}; verl 0.8 or later does not read it: {FIX}"))]
    assert [code for code, _ in _fsdp_lines(grpo, "0.5")] == ["fsdp-size-mesh-refused"]


def test_an_fsdp_size_no_line_meshes_by_or_not_a_whole_number_gets_no_fsdp_line():
    """A size the GPUs divide (4) or 0 on a role whose mesh no verl line sizes by it is not hybrid sharding nor a
    ZeroDivisionError: the critic's where none is trained (GRPO), the ref's with an algorithm that runs no ref (raft);
    one not a whole number (4.5) is left to the type checks."""
    for size in (4, 0):
        grpo = _config()
        grpo["trainer"]["trainer_config"]["critic"] = {"model": {"fsdp_config": {"fsdp_size": size}}}
        no_ref = _sized("ref", size)
        no_ref["algorithm"]["algorithm_type"] = "raft"
        assert _fsdp_lines(grpo) == _fsdp_lines(no_ref) == [], size
    assert _fsdp_lines(_sized("actor", 4.5)) == []


@pytest.mark.parametrize("sizes", [(4, "${oc.env:FSDP}", 3), (3, "${oc.env:FSDP}", 4), ("${oc.env:FSDP}", 4, 3)])
def test_the_fsdp_size_lines_come_in_their_keys_order_an_unreadable_one_among_them(sizes: tuple[Any, ...]):
    # checks93b: the hybrid and mesh lines were said once every key was read, so after the unresolved-value line of a
    # later key (the ref's, or the critic's): now each in its key's order (actor, ref, critic), as the keys are written
    config = _config({role: {"fsdp_config": {"fsdp_size": size}} for role, size in zip(("actor", "ref"), sizes)})
    config["algorithm"]["algorithm_type"] = "ppo"
    config["trainer"]["trainer_config"]["critic"] = {"model": {"fsdp_config": {"fsdp_size": sizes[2]}}}
    found = trinity_config_problems(config, CATALOG.model("8B"), 8)  # type: ignore[arg-type]
    keys = (FSDP.format(role="actor"), FSDP.format(role="ref"), CRITIC_FSDP)
    said = [(problem.code.value, next(at for at, key in enumerate(keys) if key in problem.words))
            for problem in found if any(key in problem.words for key in keys)]
    assert [at for _, at in said] == [0, 1, 2]
    assert said[sizes.index("${oc.env:FSDP}")][0] == "unresolved-value"
    assert sorted(code.removesuffix("-refused") for code, _ in said) == [  # the 4 hybrid, the 3 a mesh line
        "fsdp-size-hybrid", "fsdp-size-mesh", "unresolved-value"]


def test_the_hybrid_lines_kept_for_the_verdict_come_in_their_keys_order():
    # mutants59: the lines are put in place last key first (each at where its key's lines end); the hybrid ones kept
    # for the verdict (its unread keys with --host-ram, the lines it words again) stay in the keys' order all the same
    config = _config({"actor": {"fsdp_config": {"fsdp_size": 4}}, "ref": {"fsdp_config": {"fsdp_size": 2}}})
    config["algorithm"]["algorithm_type"] = "ppo"
    config["trainer"]["trainer_config"]["critic"] = {"model": {"fsdp_config": {"fsdp_size": 4}}}
    groups = fsdp_state_groups(config, 8)
    assert [(line.role, line.size) for line in groups.lines] == [("actor", 4), ("ref", 2), ("critic", 4)]
    assert (groups.actor, groups.critic) == (4, 4)


def _hybrid_check(cli: Cli, path: Path, config: dict[str, Any], *flags: str) -> tuple[int, dict[str, Any], list[str]]:
    """``--check``'s exit code on an H100 for `config` (written to `path`), its ``current`` and its
    ``fsdp-size-hybrid`` lines."""
    path.write_text(yaml.safe_dump(config))
    code, out, _ = cli("--from-config", str(path), "--gpu", "h100", "--check", "--json", *flags)
    current = json.loads(out)[0]["current"]
    return code, current, [words for code, words in zip(current["config_problem_codes"], current["config_problems"])
                           if code == "fsdp-size-hybrid"]


def _ppo(sizes: dict[str, int]) -> dict[str, Any]:
    """`_config`'s with dynamic batch sizes on, trained by PPO, with the actor's or the critic's fsdp_size `sizes`."""
    config = _config({"actor": {"fsdp_config": {"fsdp_size": sizes["actor"]}}} if "actor" in sizes else None,
                     use_dynamic_bsz=True)
    config["algorithm"]["algorithm_type"] = "ppo"
    if "critic" in sizes:
        config["trainer"]["trainer_config"]["critic"] = {"model": {"fsdp_config": {"fsdp_size": sizes["critic"]}}}
    return config


def test_check_judges_hybrid_sharding_by_the_memory_model_and_write_sets_minus_1_whose_copy_passes(cli: Cli,
                                                                                                   tmp_path: Path):
    # fsdp90: a GPU holds the states of a group of 4 of the 8 as a run on 4 does: the memory model's 53.7 GiB fits (it
    # trains, estimated), a group of 2's 85.1 does not (the verdict names it); unknown with the host memory checked
    # (each node's share is not counted) or with estimates off (no table measured the groups)
    path, written = tmp_path / "trinity.yaml", tmp_path / "out.yaml"
    config = _config({"actor": {"fsdp_config": {"fsdp_size": 4}}}, use_dynamic_bsz=True)
    key = FSDP.format(role="actor")
    code, current, (line,) = _hybrid_check(cli, path, config)
    assert (code, current["trains"], current["unread_keys"], current["plan"] is None) == (0, True, [], False)
    assert COUNTED.format(size=4, need=" (53.7 GiB per H100-80GB GPU, of 71.0 usable; 39.1 at the optimizer step, of "
                                       "77.3)") in line
    # hybridplan91: the verdict's plan counts the states over the groups too (its figures were over all 8: 38.0 GiB
    # beside the line's 53.7), and the line that fits so advises no -1 (the plans below still set it)
    plan = current["plan"]
    assert (round(plan["memory_gb"], 1), round(plan["memory_gb"] + plan["headroom_gb"], 1)) == (53.7, 71.0)
    assert ("it trains (estimated: the memory model predicts 53.7 GiB per GPU, 17.3 GiB to spare; beyond its "
            "calibration: 8 GPUs (calibrated up to 6)). With the states a hybrid fsdp_size groups, it fits by the "
            "memory model's estimate alone, whose figures count them over their groups, as its fsdp-size-hybrid line "
            "does (a plan sets the key to -1 and counts them over every trainer GPU).") in current["verdict"]
    assert line.endswith("each node holds more of them than counted, the GPUs' memory as counted"), line
    assert current["states_grouped"] is True  # in the JSON, so settings read back from it say that sentence again
    config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["fsdp_config"]["fsdp_size"] = 2
    code, current, (line,) = _hybrid_check(cli, path, config)
    assert (code, current["trains"], current["unread_keys"], current["predicted"]) == (1, False, [], [85.1, 71.0])
    assert COUNTED.format(size=2, need=" (85.1 GiB per H100-80GB GPU, of 71.0 usable; 77.3 at the optimizer step, of "
                                       "77.3)") in line
    assert "(the memory model predicts 85.1 GiB per GPU, of 71.0 usable)" in current["verdict"]
    assert current["states_grouped"] is True  # counted over the groups too where that does not fit
    assert line.endswith(f"; {FIX.replace('solver.trinity.patch_trinity_config', '--write')}")  # it does not fit
    for flags in (("--host-ram", "2000"), ("--no-estimate",)):
        code, current, (line,) = _hybrid_check(cli, path, config, *flags)
        assert (code, current["trains"], current["unread_keys"]) == (1, False, [key]), flags
        assert current["verdict"].split(": ", 2)[1:] == ["whether it trains is unknown", (
            f"{key} shards the states over groups of fewer GPUs, which this verdict counts only by the memory "
            "model's estimate, on the GPUs alone (set -1, every GPU, and judge again). "
            + ("The best plan follows." if flags[0] == "--host-ram" else "No plan trains either (the reason follows).")
        )]
        assert (": only the memory model would count them so, as a run on 2 GPUs holds them, on the GPUs, and whether "
                "it trains is unknown here (the verdict says why); ") in line
        assert line.endswith("set it to -1, every GPU (--write does)"), flags  # unknown: advised
    code, _, err = cli("--from-config", str(path), "--gpu", "h100", "--write", str(written))
    actor = yaml.safe_load(written.read_text())["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]
    assert (code, actor["fsdp_config"]) == (0, {"fsdp_size": -1}), err
    assert cli("--from-config", str(written), "--gpu", "h100", "--check")[0] == 0
    # an fsdp_size that cannot be read here decides the share too, on a line that sizes a mesh by it: unread
    config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["fsdp_config"]["fsdp_size"] = "${oc.env:FSDP}"
    assert fsdp_state_groups(config, 8).unread == (FSDP.format(role="actor"),)
    assert fsdp_state_groups(config, 8, environ={"FSDP": "-1"}).unread == ()
    path.write_text(yaml.safe_dump(config).replace("oc.env:FSDP", "oc.env:RFT_SOLVER_UNSET_89"))
    code, out, _ = cli("--from-config", str(path), "--gpu", "h100", "--check", "--json")
    assert (code, json.loads(out)[0]["current"]["verdict"].split(": ", 2)[2]) == (1, (
        f"the share of the states each GPU holds depends on {FSDP.format(role='actor')}, which cannot be read here "
        "(set it as the run will, and judge again). The best plan follows."))
    assert fsdp_state_groups(_config({"ref": {"fsdp_config": {"fsdp_size": "${oc.env:FSDP}"}}}), 8,
                             version="0.5").unread == ()


def test_check_counts_the_critics_hybrid_fsdp_size_on_its_own_states_and_not_with_critic_none(cli: Cli,
                                                                                              tmp_path: Path):
    # fsdp90: PPO's critic (resident by its flags) with its states over groups of 4, the actor's over all 8: 59.1 GiB a
    # GPU, fits; --critic none counts no critic, so its key decides nothing there; the actor's over 4 and the critic's
    # over 2: 96.0, which does not fit
    path = tmp_path / "trinity.yaml"
    critic = CRITIC_FSDP
    code, current, (line,) = _hybrid_check(cli, path, _ppo({"critic": 4}))
    assert (code, current["trains"], current["unread_keys"]) == (0, True, [])
    assert line.startswith(f"{critic} is 4: Trinity with verl before 0.8 shards the critic's states over groups of 4")
    assert line.endswith(COUNTED.format(size=4, need=" (59.1 GiB per H100-80GB GPU, of 71.0 usable; 47.7 at the "
                                                     "optimizer step, of 77.3)"))  # fits so: no -1 advised
    assert round(current["plan"]["memory_gb"], 1) == 59.1  # the plan's figures with the critic's states so too
    code, current, (line,) = _hybrid_check(cli, path, _ppo({"critic": 4}), "--critic", "none")
    assert (code, current["trains"], current["unread_keys"]) == (0, True, [])
    assert line.endswith("instead: the verdict and the plans count no critic (--critic none leaves it out); set it "
                         "to -1, every GPU (--write does)")
    assert "With the states a hybrid fsdp_size groups" not in current["verdict"]  # none counted over groups
    # mutants53: nor does it make the verdict unknown with the host memory checked or with estimates off
    for flags in (("--host-ram", "2000"), ("--no-estimate",)):
        code, current, _ = _hybrid_check(cli, path, _ppo({"critic": 4}), "--critic", "none", *flags)
        assert (code, current["trains"], current["unread_keys"]) == ((0, True, []) if flags[0] == "--host-ram"
                                                                     else (1, False, [])), flags
    code, current, lines = _hybrid_check(cli, path, _ppo({"actor": 4, "critic": 2}))
    assert (code, current["trains"], current["unread_keys"], current["predicted"]) == (1, False, [], [96.0, 71.0])
    assert [line.split(": ", 1)[0] for line in lines] == [f"{FSDP.format(role='actor')} is 4", f"{critic} is 2"]
    assert all(" (96.0 GiB per H100-80GB GPU, of 71.0 usable; 94.4 at the optimizer step, of 77.3)" in line
               for line in lines)


def test_hybrid_keys_left_unread_are_each_named_once_and_the_critics_not_with_critic_none(cli: Cli, tmp_path: Path):
    # lastread90: with the host memory checked and estimates off, each key was named twice; with estimates off and
    # --critic none, the critic's key made the verdict unknown beside the actor's, though no critic is counted
    path, actor = tmp_path / "trinity.yaml", FSDP.format(role="actor")
    for flags, unread in ((("--host-ram", "2000", "--no-estimate"), [actor, CRITIC_FSDP]),
                          (("--no-estimate", "--critic", "none"), [actor])):
        code, current, _ = _hybrid_check(cli, path, _ppo({"actor": 2, "critic": 4}), *flags)
        assert (code, current["trains"], current["unread_keys"]) == (1, False, unread), flags


def test_a_roles_states_are_counted_over_its_smallest_group_and_the_ref_only_where_it_runs():
    # mutants53: the critic's two keys (verl before 0.8's and 0.8's engine's) shard over the smaller group whichever
    # comes first; the actor's group holds a ref's weights too only where the algorithm runs a ref (not raft), which
    # its line says (they stay in host memory: no GPU's group changes). hybriddata90: each line's data (key, size,
    # role) builds its words as the checks say them
    critic, engine = CRITIC_FSDP, "trainer.trainer_config.critic.fsdp.fsdp_size"
    # hybridplan91: each verl line reads one of them and ignores the other (verl_legacy/fsdp_workers.py:1283 in
    # Trinity 0.6.0 the model's; its trainer/verl/trainer.py:363 the engine's, critic.fsdp), as each line says; the
    # one whose group is larger says the verdict counts them over the other's, the fewer
    ignored = {critic: f"; verl 0.8 or later ignores it and reads {engine} instead",
               engine: f"; Trinity with verl before 0.8 ignores it and reads {critic} instead"}
    for sizes in ((2, 4), (4, 2)):
        config = _ppo({"critic": sizes[0]})
        config["trainer"]["trainer_config"]["critic"]["fsdp"] = {"fsdp_size": sizes[1]}
        groups = fsdp_state_groups(config, 8)
        assert (groups.actor, groups.critic, [(line.key, line.size, line.role) for line in groups.lines]) == (
            8, 2, [(critic, sizes[0], "critic"), (engine, sizes[1], "critic")]), sizes
        assert [line.words() for line in groups.lines] == [words for _, words in _fsdp_lines(config)], sizes
        assert [line.words().split("over all 8 holds", 1)[1] for line in groups.lines] == [
            ignored[line.key] + (", which shards them over groups of 2, fewer (each line the release may run must "
                                 "fit)" if line.size == 4 else "") + COUNTED.format(size=2, need="") + "; " + FIX
            for line in groups.lines], sizes
    # Trinity 0.5 reads the model's alone (it refuses critic.fsdp): nothing ignored, counted over its own group
    config["trainer"]["trainer_config"]["critic"]["fsdp"] = {"fsdp_size": 2}
    (line,) = fsdp_state_groups(config, 8, version="0.5").lines
    assert (line.key, line.counted_size, "ignores" in line.words()) == (critic, 4, False)
    actor = FSDP.format(role="actor")
    raft = _sized("actor", 4)
    raft["algorithm"]["algorithm_type"] = "raft"
    for config, role, actor_group, ref_too in ((_sized("actor", 4), "actor", 4, True), (raft, "actor", 4, False),
                                               (_sized("ref", 4), "ref", 8, False)):
        groups = fsdp_state_groups(config, 8)
        assert (groups.actor, groups.critic, [line.role for line in groups.lines]) == (actor_group, 8, [role])
        assert [line.words() for line in groups.lines] == [words for _, words in _fsdp_lines(config)]
        assert ("shards its ref's weights so too" in groups.lines[0].words()) is ref_too, role
    assert _fsdp_lines(raft) == [("fsdp-size-hybrid", HYBRID.format(
        key=actor, size=4, who="verl", held="the actor's states", groups=2,
        counted=COUNTED.format(size=4, need="")))]


@pytest.mark.parametrize(("algorithm", "nulled"), [("ppo", True), ("grpo", False), ("dpo", False)])
def test_write_nulls_the_critics_deprecated_size_only_where_the_algorithm_trains_a_critic(algorithm: str,
                                                                                          nulled: bool):
    # mutants52: the critic's deprecated size went null in a config whose algorithm builds no critic to read it
    critic_size = next(path for path in DEPRECATED_MICRO_BATCH_SIZES if path[-2] == "critic")
    keys = keys_for_plan(vanilla_plan(), CATALOG.model("4B"), {"algorithm": {"algorithm_type": algorithm}})
    assert [(key.value, key.existing_only) for key in keys if key.path == critic_size] == (
        [(None, True)] if nulled else [])


def test_a_flag_quoted_false_that_verl_08_takes_as_written_is_said_to_read_true_there():
    # checks90: OmegaConf's bool field reads 'false' (quoted) as false, but Trinity 0.6 on verl 0.8 hands the key to
    # verl untyped (hydra, no field typed), which reads the text as true; not where 0.6 sets the key itself or 0.5 runs
    config = _config({"actor": {"entropy_checkpointing": "false", "use_dynamic_bsz": "false"}})
    mapping = yaml.safe_load(yaml.safe_dump(config))
    said = [(version, problem.words) for version in (None, "0.5")
            for problem in trinity_config_problems(mapping, CATALOG.model("8B"), 8, version=version)  # type: ignore
            if problem.code.value == "wrong-type"]
    assert said == [(None, (f"{ARR}.actor.entropy_checkpointing is the text 'false', which OmegaConf's bool field "
                            "reads as false, but Trinity 0.6 on verl 0.8 or later hands it to verl as written, which "
                            "reads it as true (Python's truth of text): write false, unquoted"))]


def test_write_leaves_an_fsdp_size_that_shards_over_every_gpu_already():
    # persona92a: --write set a role's fsdp_size to -1 wherever a config had one, so 8 on an 8-GPU trainer (every
    # GPU already, as verl reads a size of at least the GPUs) became -1 and the apply block listed it as a change;
    # only one from 0 to below the plan's GPUs (4 here) shards over fewer, and is set to -1
    roles = {"actor": {"fsdp_config": {"fsdp_size": 4}}, "ref": {"fsdp_config": {"fsdp_size": "8"}}}
    critic = {"model": {"fsdp_config": {"fsdp_size": -2}}, "fsdp": {"fsdp_size": 2}}
    config = {"algorithm": {"algorithm_type": "ppo"},
              "trainer": {"trainer_config": {"actor_rollout_ref": roles, "critic": critic}}}
    set_sizes = [".".join(key.path) for key in keys_for_plan(vanilla_plan(), CATALOG.model("4B"), config)
                 if key.path[-1] == "fsdp_size"]
    assert set_sizes == ["trainer.trainer_config.critic.fsdp.fsdp_size"]
    for size in (0, 3):
        roles["actor"]["fsdp_config"]["fsdp_size"] = size
        assert [key.value for key in keys_for_plan(vanilla_plan(), CATALOG.model("4B"), config)
                if key.path == (*ARR.split("."), "actor", "fsdp_config", "fsdp_size")] == [-1], size
