"""Tests that kill the mutants of session 73's code that its tests let live (helper mutants24, s74): a critic's own
update against the usable memory and the other peaks (Breakdown's verdicts, and the JSON's limits read back), ..."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_clusterwhy_s73 import Cli, _duo_on_two_gpus, _raised, undecided_for
from test_movereason_s72 import _moves
from test_ropesix_s73 import _problems
from test_tokbudget_s72 import _verdict

from solver.api import memory_answer
from solver.memory import (
    GIB,
    Breakdown,
    MemoryAnswer,
    Terms,
    critic_parameters,
    critic_states_gib,
    rollout_engine,
    shown_host_need,
)
from solver.tables import TableError, load_catalog
from solver.tables.model_config import load_model_config, vllm_rope_problem
from solver.trinity import trinity_config_problems

TERMS = Terms(states=40.0, gathered=2.0, checkpoints=3.0, logits=2.0, recompute=1.0, sp_buffers=1.0,
              fragmentation=0.0, overhead=1.0)
"""Terms of 50 GiB, for breakdowns whose peaks the tests set."""
HF_CONFIGS = Path(__file__).parent / "data" / "hf-configs"


def _breakdown(**figures: float) -> Breakdown:
    """A breakdown of an 80 GiB GPU with the peaks `figures` give: 73 GiB usable, 77 for the optimizer step."""
    return Breakdown(terms=TERMS, **{"total_gib": 50.0, "usable_gib": 73.0, "memory_gib": 80.0, "tokens_per_gpu": 8192,
                                     "step_usable_gib": 77.0, **figures})


def test_a_critics_update_of_exactly_the_usable_memory_fits():
    # M1: the update's peak may take all of the usable memory, as the actor's may.
    full = _breakdown(critic_pass_gib=73.0)
    assert (full.critic_pass_fits, full.fits, full.headroom_gib) == (True, True, 0.0)
    assert (_breakdown(critic_pass_gib=73.5).critic_pass_fits, _breakdown(critic_pass_gib=73.5).fits) == (False, False)


def test_a_critics_update_as_tight_as_the_activations_does_not_bind():
    # M6: a room no smaller than the activations' leaves headroom_gib theirs, not the critic's.
    assert _breakdown(critic_pass_gib=50.0).critic_pass_binds is False
    assert _breakdown(critic_pass_gib=50.5).critic_pass_binds is True


def test_where_the_optimizer_step_binds_the_critics_update_does_not():
    # M5: the step's room (7 GiB) is the least; the critic's update (13) is less than the activations' (23), but
    # headroom_at_critic_pass says the tightest peak, one at most.
    both = _breakdown(step_gib=70.0, critic_pass_gib=60.0)
    assert (both.step_binds, both.critic_pass_binds, both.headroom_gib) == (True, False, 7.0)
    alone = _breakdown(step_gib=60.0, critic_pass_gib=60.0)
    assert (alone.step_binds, alone.critic_pass_binds, alone.headroom_gib) == (False, True, 13.0)


def _raw(critic: str | None) -> dict[str, Any]:
    """Qwen3-8B's solve memory --json on 4 A100-80GB at 32768 tokens, SP=4 with Env, without Offload."""
    answer = memory_answer("Qwen3-8B", "A100-80GB", 4, 32768, sp=4, env=True,
                           critic=critic)  # type: ignore[arg-type]
    return dict(json.loads(answer.model_dump_json()))


def test_a_step_whose_room_is_the_usable_memory_without_a_critic_is_no_limit():
    # M3: without a critic the only other room is the activations' (23 GiB); a step whose room is the usable memory
    # itself is nowhere near it, so a step_binds that says otherwise is refused.
    raw = {key: value for key, value in _raw(None).items()
           if key not in ("fits", "headroom_gib", "step_fits", "trains")}
    raw["step_gib"] = raw["step_usable_gib"] - raw["usable_gib"]
    assert MemoryAnswer.model_validate({**raw, "step_binds": False}).step_binds is False
    with pytest.raises(ValueError, match="step_binds is True, but the other fields say False"):
        MemoryAnswer.model_validate({**raw, "step_binds": True})


def test_a_step_as_tight_as_the_critics_update_reads_back_either_way():
    # M9: the step's room equal to the reloaded critic's update's (which the JSON rounds alike) is at a limit: its
    # step_binds may print either way.
    raw = {key: value for key, value in _raw("reloaded").items()
           if key not in ("fits", "headroom_gib", "step_fits", "trains")}
    raw["step_gib"] = raw["step_usable_gib"] - (raw["usable_gib"] - raw["critic_pass_gib"])
    assert [MemoryAnswer.model_validate({**raw, "step_binds": given}).step_binds for given in (True, False)] == [
        False, False]
    raw["step_gib"] -= 0.01  # a room 0.01 GiB more: not at the limit, and not the tighter
    with pytest.raises(ValueError, match="step_binds is True, but the other fields say False"):
        MemoryAnswer.model_validate({**raw, "step_binds": True})


def test_a_mixture_of_experts_critic_holds_whole_experts_on_each_gpu():
    # M14: Qwen3-30B-A3B's critic on 6 GPUs: the fullest holds 22 of each expert layer's 128 routed experts (FSDP2
    # shards them whole), and a sixth of the rest.
    model = load_catalog().model("Qwen3-30B-A3B")
    routed = model.routed_expert_parameters
    per_gpu = (critic_parameters(model) - routed) / 6 + routed * 22 / 128
    assert critic_states_gib(model, 6) == pytest.approx(16 * per_gpu / GIB, rel=1e-12)
    assert critic_states_gib(model, 8) == pytest.approx(16 * critic_parameters(model) / 8 / GIB, rel=1e-12)


def test_vllm_builds_no_llama3_scaling_without_its_original_length():
    # R2: vLLM 0.19.1's Llama3RotaryEmbedding reads original_max_position_embeddings from the mapping it is handed.
    given = {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}
    assert vllm_rope_problem("llama3", given) == (
        "missing original_max_position_embeddings: vLLM 0.19.1 refuses rope_type llama3 without it")
    assert vllm_rope_problem("llama3", {**given, "original_max_position_embeddings": 8192}) is None


def test_the_first_key_missing_is_named():
    # R4: of several missing keys, the first the type needs, in vLLM's order.
    assert vllm_rope_problem("longrope", {"original_max_position_embeddings": 4096}) == (
        "missing short_factor: vLLM 0.19.1 refuses rope_type longrope without it")
    assert vllm_rope_problem("xdrope", {}) == "missing alpha: vLLM 0.19.1 refuses rope_type xdrope without it"


def _config_json(tmp_path: Path, name: str, **keys: object) -> Path:
    """tests/data/hf-configs' config.json of `name` with `keys` set (None: removed), written under `tmp_path`."""
    config = json.loads((HF_CONFIGS / f"{name}.json").read_text(encoding="utf-8")) | keys
    path = tmp_path / "config.json"
    path.write_text(json.dumps({key: value for key, value in config.items() if value is not None}), encoding="utf-8")
    return path


def test_rope_theta_is_read_before_the_older_rotary_emb_base(tmp_path: Path):
    # R7: Llama 3.2's base of 500000 beside a rotary_emb_base of 1000000, which vLLM reads only without rope_theta.
    assert load_model_config(_config_json(tmp_path, "Llama-3.2-3B", rotary_emb_base=1e6)).vllm_rope_theta_lost == (
        5e5, 1e4)
    assert load_model_config(_config_json(tmp_path, "Llama-3.2-3B", rope_theta=None, rotary_emb_base=2e5)
                             ).vllm_rope_theta_lost == (2e5, 1e4)


def test_rope_parameters_per_layer_type_are_not_judged(tmp_path: Path):
    # R8: transformers 5's mapping per layer type has no one base to lose; a Qwen3 config of it is left unjudged
    # (not read as the fallback 10000 against vLLM's Qwen3 default of 1000000).
    per_type = {kind: {"rope_type": "default", "rope_theta": 1e6} for kind in ("full_attention", "sliding_attention")}
    path = _config_json(tmp_path, "Qwen3-8B", rope_theta=None, rope_scaling=None, rope_parameters=per_type)
    assert load_model_config(path).vllm_rope_theta_lost is None


def test_a_base_of_zero_is_refused(tmp_path: Path):
    # R9: no positive number.
    path = _config_json(tmp_path, "Qwen3-8B", rope_theta=0)
    with pytest.raises(TableError) as raised:
        load_model_config(path)
    assert str(raised.value) == f"{path}: rope_theta: expected a positive number such as 1000000, got 0"


def test_a_config_jsons_yarn_is_read_as_yarn_but_for_phi3(tmp_path: Path):
    # R13: Phi-3's config class alone reads yarn as longrope; a Qwen3's YaRN re-derives its length from its original
    # 32768 positions (not max_position_embeddings' 40960), which vLLM scales by its factor.
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
    model = load_model_config(_config_json(tmp_path, "Qwen3-8B", rope_scaling=yarn))
    assert (model.native_context, model.config_yarn_factor, model.vllm_context) == (32768, 4.0, 131072)


@pytest.mark.parametrize("offload", [True, False])
def test_a_resident_critic_takes_no_host_memory(offload: bool):
    # M27: its states stay on the GPUs; only an offloaded or reloaded one's are in host memory. The model loaded on
    # rank 0 alone (as 0.6 on H100s loads it): where every rank loads it (s84, the default) the 8 ranks' load at
    # start-up, 244.1 GiB, is more than training holds with the critic, and hides it.
    model = load_catalog().model("Qwen3-8B")
    alone = shown_host_need(model, 8, offload=offload, loading="rank-0")
    assert shown_host_need(model, 8, offload=offload, critic="resident", loading="rank-0") == alone
    assert shown_host_need(model, 8, offload=offload, critic="offloaded", loading="rank-0") > alone


@pytest.mark.parametrize("value_bytes", [2, 4])
def test_a_latent_attention_engines_cache_takes_the_weights_dtype(value_bytes: int):
    # M37: DeepSeek-V2-Lite's latent (512) and RoPE key (64) per layer (27) and token, in bf16 or float32 as vLLM's
    # kv_cache_dtype auto caches them, whole on each GPU.
    model = load_model_config(HF_CONFIGS / "DeepSeek-V2-Lite.json")
    engine = rollout_engine(model, 80.0, 2, 4096, largest=True, value_bytes=value_bytes)
    assert engine.kv_cache_gib == value_bytes * (512 + 64) * 27 * 4096 / GIB


def test_a_jobs_own_undecided_solve_leaves_its_move_unproven(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # C7, C9: duo's (Qwen3-4B) own solves run out of time: that no way runs it on its 2 GPUs is not proven.
    undecided_for(monkeypatch, "Qwen3-4B")
    result, text = _duo_on_two_gpus(cli, tmp_path)
    why = "the placement is not proven best (raise --time-limit)"
    duo = result["placements"][1]
    assert (duo["job"], duo["current"], duo["move_reason_code"], duo["move_reason"]) == (
        "duo", "moves", "move-unproven", why)
    assert f"moves: duo: it runs on node 1 of pool a100 (GPUs 0-1) now, and restarts as placed: {why}" in (
        text.splitlines())


def _qwen3_8b_at_32k(trainer_sp: int, roles: dict[str, Any]) -> dict[str, Any]:
    """Qwen3-8B at 32768 tokens on a node of 8 GPUs, 4 of them the rollout's, the trainer's SP `trainer_sp`, the
    roles' keys `roles`, dynamic batch sizes on but where a role turns its own off."""
    return {"model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 32768}, "algorithm": {"algorithm_type": "grpo"},
            "cluster": {"node_num": 1, "gpu_per_node": 8}, "explorer": {"rollout_model": {"engine_num": 4}},
            "trainer": {"ulysses_sequence_parallel_size": trainer_sp, "trainer_config": {"actor_rollout_ref": roles}}}


def test_a_ref_that_reads_no_budget_is_not_said_to_take_it_over_the_actors_groups():
    # D16: Trinity 0.5's ref at SP 4 over the actor's SP 2 takes its budget x 4 / 2 per GPU, but with its dynamic batch
    # sizes off it reads no budget: its micro-batches of 2 sequences, 2 x ceil(32768 / 2) = 32768 tokens per GPU, are
    # the verdict's, and its budget of 32768 is read nowhere (not 32768 x 4 / 2 = 65536 per GPU).
    ref = {"ulysses_sequence_parallel_size": 4, "log_prob_max_token_len_per_gpu": 32768}
    assert [code for code, _ in _verdict(_qwen3_8b_at_32k(2, {"ref": ref}), "0.5")[1]] == ["token-budget-above-verdict"]
    off = {**ref, "log_prob_use_dynamic_bsz": False, "log_prob_micro_batch_size_per_gpu": 2}
    assert _verdict(_qwen3_8b_at_32k(2, {"ref": off}), "0.5") == (None, [])


def test_an_actor_that_reads_no_budget_is_not_raised_from_the_trainers_fill():
    # D17: Trinity 0.5 fills the unset trainer budget at the trainer's SP 4 (16384), which holds no sequence at the
    # actor's SP 1; with the actor's dynamic batch sizes off nothing reads it for the actor: no line on its raise.
    # raise91: nor "Trinity 0.5.0 raises it back": the verdict at 0.5 counts 0.5.0's raise, which no pass reads here
    actor = {"ulysses_sequence_parallel_size": 1}
    assert [code for code, _ in _verdict(_qwen3_8b_at_32k(4, {"actor": actor}), "0.5")[1]] == [
        "token-budget-below-verdict", "token-budget-below-length"]
    assert _verdict(_qwen3_8b_at_32k(4, {"actor": {**actor, "use_dynamic_bsz": False}}), "0.5") == (32768, [(
        "lowered-token-budget", ("the token budget in effect, 32768 (the most any role takes), is below Trinity's "
                                 "default ceil(2 x 32768 / 1) = 65536, which the tables measured: the verdict is at "
                                 "32768 tokens per GPU (each step takes more micro-batches)"))])


def _trainer_dynamic_off_line(roles: dict[str, Any], critic: dict[str, Any] | None = None,
                              bypass_mode: bool | None = None) -> str:
    """Trinity 0.5's ``dynamic-batch-off`` line on ``trainer.use_dynamic_bsz`` of a GRPO config of Qwen3-8B (no critic
    trained) on 4 GPUs, the trainer's dynamic batch sizes off and its budget 8192, with the roles' keys `roles`, the
    critic's `critic` and ``rollout_correction.bypass_mode`` `bypass_mode` (None: unset)."""
    sections = {"actor_rollout_ref": roles, **({"critic": critic} if critic else {}),
                **({} if bypass_mode is None else {"algorithm": {"rollout_correction": {"bypass_mode": bypass_mode}}})}
    config = {"model": {"max_model_len": 4096}, "algorithm": {"algorithm_type": "grpo"}, "trainer": {
        "use_dynamic_bsz": False, "max_token_len_per_gpu": 8192, "trainer_config": sections}}
    found = trinity_config_problems(config, load_catalog().model("Qwen3-8B"), 4, version="0.5")
    [line] = [problem.words for problem in found if problem.code.value == "dynamic-batch-off"]
    return line


DYNAMIC_OFF = ("trainer.use_dynamic_bsz is false: verl then ignores the token budget (max_token_len_per_gpu), which "
               "the tables measured and the plan sets, and fills micro-batches by sequence count: set it to true")


def test_a_rollout_pass_on_takes_the_actors_budget_before_the_trainers():
    # K2: the log-prob recompute turns dynamic batching back on; it takes the actor's budget where set, so no pass
    # reads the trainer's. It runs only with rollout_correction.bypass_mode false (bypass90: true, the default, runs
    # none, so no pass reads the trainer's either).
    rollout = {"rollout": {"log_prob_use_dynamic_bsz": True}}
    assert _trainer_dynamic_off_line({**rollout, "actor": {"ppo_max_token_len_per_gpu": 8192}}, None,
                                     False) == DYNAMIC_OFF
    assert _trainer_dynamic_off_line(rollout) == DYNAMIC_OFF
    assert _trainer_dynamic_off_line(rollout, None, False) == (
        "trainer.use_dynamic_bsz is false: verl then fills micro-batches by sequence count, ignoring the token budget "
        "(max_token_len_per_gpu), which the tables measured and the plan sets, in every pass but the rollout's "
        "(Trinity 0.5), whose own key turns dynamic batch sizes back on and which takes this budget, setting none of "
        "its own: set it to true")


def test_a_critics_key_counts_only_where_the_algorithm_trains_one():
    # K3: GRPO trains no critic: its use_dynamic_bsz turns no pass back on.
    assert _trainer_dynamic_off_line({}, critic={"use_dynamic_bsz": True}) == DYNAMIC_OFF


def test_a_yarn_without_its_original_length_beside_the_models_own_scaling_is_told_to_add_it():
    # K13: the native positions to add are named only for a model without a RoPE scaling of its own (Qwen3-8B: its
    # 40960); Llama 3.1's own llama3 scaling leaves which to give open.
    yarn = {"max_model_len": 131072, "rope_scaling": {"rope_type": "yarn", "factor": 4.0}}
    unbuilt = ("model.rope_scaling: missing original_max_position_embeddings: vLLM 0.19.1 refuses rope_type yarn "
               "without it, and fails as it starts, as Trinity hands vLLM the mapping as the model's rope_parameters, "
               "past transformers' filling-in; ")
    assert ("rope-scaling-unbuilt-refused", unbuilt + "add it") in _problems("llama-3.1-8b", yarn, "0.6")
    assert ("rope-scaling-unbuilt-refused", unbuilt + "add original_max_position_embeddings: 40960") in _problems(
        "8B", yarn, "0.6")


def test_gemma_3s_scaling_of_a_type_alone_is_not_refused():
    # K10, K11: vLLM reads no Gemma 3 scaling for its length (vllm_skips_rope_factor): a type given in type alone is
    # no KeyError there, and the mapping is read as vLLM's default type, which needs no key.
    model = load_model_config(HF_CONFIGS / "gemma-3-1b-pt.json")
    mapping = {"model": {"model_path": "x", "max_model_len": 32768, "rope_scaling": {"type": "yarn", "factor": 8.0}}}
    assert [problem.code.value for problem in trinity_config_problems(mapping, model, 8, version="0.6")] == [
        "rope-scaling-unneeded", "rope-theta-dropped"]


def test_a_base_that_is_no_whole_number_is_given_as_it_is(tmp_path: Path):
    # K19: Llama 3.2's base written as 500000.5 is lost alike, and named as written.
    model = load_model_config(_config_json(tmp_path, "Llama-3.2-3B", rope_theta=500000.5))
    rope = {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192}
    mapping = {"model": {"model_path": "x", "max_model_len": 8192, "rope_scaling": rope}}
    [(missing, said), (code, words)] = [(problem.code.value, problem.words)
                                        for problem in trinity_config_problems(mapping, model, 8, version="0.6")]
    # 0.6's trainer needs it in the mapping too (ropetheta, s78), named as written
    assert missing == "rope-theta-missing-refused" and said.endswith("add rope_theta: 500000.5 to it (as "
                                                                     "solver.trinity.patch_trinity_config does)")
    assert code == "rope-theta-dropped"
    assert words.endswith("rotates at base 10000, not the model's 500000.5, silently (Trinity hands vLLM the mapping "
                          "as the model's rope_parameters, past transformers' filling-in); set model.rope_theta: "
                          "500000.5")


def test_a_rollout_scaling_with_a_missing_value_is_judged_no_further():
    # K20: the ??? is refused as Trinity loads the config; vLLM's rule is not applied to the rest.
    assert _problems("8B", {"max_model_len": 8192}, "0.6", explorer={
        "rollout_model": {"rope_scaling": {"rope_type": "yarn", "factor": "???"}}}) == [("unresolved-value-refused", (
            "explorer.rollout_model.rope_scaling.factor is ???, a value missing: every Trinity release refuses the "
            "config as it loads it (explorer.rollout_model.rope_scaling is no typed section, so the merge keeps the "
            "??? and OmegaConf.to_object raises on it); give it a value, or remove the key"))]


@pytest.mark.parametrize(("version", "older"), [
    ("0.5", " (on Trinity 0.5 with a vLLM before 0.12, as 0.5.0 also takes, vLLM refuses the two as it starts)"),
    ("0.6", "")])
def test_two_types_are_refused_by_older_vllm_on_trinity_05(version: str, older: str):
    # K22
    rope = {"rope_type": "yarn", "type": "linear", "factor": 4.0, "original_max_position_embeddings": 32768}
    assert _problems("8B", {"max_model_len": 131072, "rope_scaling": rope}, version)[0] == ("rope-scaling-wrong", (
        "model.rope_scaling names its type twice, rope_type 'yarn' and type 'linear': a vLLM rollout takes rope_type "
        f"alone{older}; remove type, or give it rope_type's value"))


def test_another_jobs_undecided_ways_leave_a_move_for_priority_unproven(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # C11: p06-a's (Qwen3-0.6B) solves run out of time: a placement over ways not all decided may keep one more
    # running job, so q14-a's move for c8-b is not proven (the stays stage proves it over every job's ways).
    undecided_for(monkeypatch, "Qwen3-0.6B")
    result, _ = _raised(cli, tmp_path)
    assert [move for move in _moves(json.dumps(result)) if move[1] == "moves"] == [
        ("q14-a", "moves", "move-unproven",
         "the placement is not proven best (raise --time-limit); its GPUs now run c8-b (priority 3)")]
