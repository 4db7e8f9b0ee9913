"""Mutation testing of session 74's code (helper mutants25): each test kills a hand-made mutant that the suite left
alive (its id in the comment: the lead's report keeps the table). Exact behaviour throughout: the critic's readings
per release, the rollout's LoRA rank and the LoRA key every release turns on, the deprecated batch sizes."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from cluster_api import place
from test_coverage13_s74 import SMALL_QWEN3, _bought, _host_bound_fleet
from test_ropeseven_s74 import QWEN3_8B, _phi_partial
from test_tokbudget_s72 import ARR, _config

from solver.api import plan
from solver.cluster.buy import PURCHASE_CHOICE_SHARE
from solver.memory import GIB, rollout_engine, shown_host_need, vllm_lora_widths
from solver.tables import load_catalog, load_fleet, load_trinity_fields
from solver.tables.model_config import load_model_config
from solver.trinity import read_trinity_config
from solver.trinity.plan_keys import for_release
from solver.trinity.reader import load_config_mapping

Cli = Callable[..., tuple[int, str, str]]
buy_module = importlib.import_module("solver.cluster.buy")  # `solver.cluster.buy` the name is the function

CONFIG = ("cluster: {node_num: 1, gpu_per_node: 8}\n"
          "explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1}}\n"
          "model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
          "trainer:\n  ulysses_sequence_parallel_size: 4\n")
"""PPO (Trinity's default) of Qwen3-8B on 4 trainer GPUs beside 4 rollout GPUs (test_criticconfig2_s74's)."""
OWN = "  trainer_config:\n    critic:\n      model:\n        fsdp_config: {%s}\n"
BOTH = "  trainer_config:\n    critic:\n      model:\n        fsdp_config: {%s}\n      fsdp: {%s}\n"
ALL = "param_offload: true, optimizer_offload: true, offload_policy: true"


def critic_note(text: str, version: str | None) -> tuple[str | None, str]:
    """The critic a config's flags hold as `version` reads them, and its note."""
    config = read_trinity_config(text, "run.yaml", {}, version)  # type: ignore[arg-type]
    (note,) = [words for words, code in zip(config.notes, config.note_codes, strict=True)
               if code.value == "critic-trained"]
    return config.critic, note


@pytest.mark.parametrize("flag", ["param_offload", "optimizer_offload"])
@pytest.mark.parametrize("version", ["0.5", "0.6", None])
def test_one_of_the_two_reload_flags_alone_leaves_the_critic_resident(flag: str, version: str | None):
    # K3 (`or` for `and`), K4 (param_offload alone): both flags reload its states, one alone keeps them resident
    assert critic_note(CONFIG + OWN % f"{flag}: true", version)[0] == "resident"


def test_verl_08s_reading_holds_the_engines_flags_under_the_trainers_strategy_not_the_critics_own():
    # The critic's own strategy fsdp2 (read by verl before 0.8: offloaded), the trainer's fsdp (verl 0.8 runs the
    # critic at it: offload_policy ignored, reloaded): the reading that holds more on the GPUs, reloaded, counts.
    # K10 (the engine's flags under the critic's own strategy: offloaded), K11 (offloaded above reloaded).
    text = ("  trainer_strategy: fsdp\n" + BOTH.replace("      model:", "      strategy: fsdp2\n      model:")
            % (ALL, ALL))
    assert critic_note(CONFIG + text, "0.5")[0] == "offloaded"
    critic, note = critic_note(CONFIG + text, "0.6")
    assert critic == "reloaded"
    assert ("count its states by the more held on the GPUs of two readings, verl before 0.8's of its own "
            "critic.model.fsdp_config (offloaded) and verl 0.8 or later's of critic.fsdp, else the trainer's "
            "(reloaded): reloaded (") in note


def test_two_readings_that_agree_are_said_together_not_weighed():
    # K13: both releases' flags offload it: the note names both readings as one hold (persona40), not the more held
    critic, note = critic_note(CONFIG + BOTH % (ALL, ALL), "0.6")
    assert critic == "offloaded"
    assert ("count its states as both readings hold them, verl before 0.8's of its own critic.model.fsdp_config and "
            "verl 0.8 or later's of critic.fsdp, else the trainer's: offloaded (") in note
    assert "two readings" not in note


ROLLOUT = ("cluster: {node_num: 1, gpu_per_node: 8}\n"
           "explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1%s}}\n"
           "model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192%s}\n"
           "algorithm: {algorithm_type: grpo}\n")
REFUSED_LORA = ", lora_configs: [{lora_rank: 64, target_modules: [q_proj]}]"
"""A LoRA config Trinity refuses as it loads the config (a list of target modules), so it starts no LoRA."""


@pytest.mark.parametrize(("rollout", "model", "rank"), [
    ("", REFUSED_LORA, 0), (", enable_lora: true", REFUSED_LORA, 16), ("", ", lora_configs: [{lora_rank: 64}]", 64)])
def test_a_refused_lora_config_gives_the_rollout_no_lora_rank(rollout: str, model: str, rank: int):
    # K16: the refused LoRA config's rank 64 is not the rollout's (enable_lora alone gives vLLM's default, 16)
    for version in ("0.5", "0.6", None):
        read = read_trinity_config(ROLLOUT % (rollout, model), "r.yaml", {}, version)  # type: ignore[arg-type]
        assert read.vllm_rollout is not None and read.vllm_rollout.lora_rank == rank


@pytest.mark.parametrize(("version", "key"), [("0.5", "trainer.trainer_config.actor_rollout_ref.model.lora_rank"),
                                              ("0.6", None), (None, None)])
def test_verl_before_08s_lora_rank_turns_lora_on_for_every_release_with_05_alone(version: str | None,
                                                                                 key: str | None):
    # K19 (every release), K20 (0.5 or no release): Trinity 0.6 on verl 0.8 ignores lora_rank, so a config that
    # may run there builds a reference model
    text = (ROLLOUT % ("", "") + "trainer:\n  trainer_config:\n    actor_rollout_ref:\n      model: {lora_rank: 16}\n")
    read = read_trinity_config(text, "r.yaml", {}, version)  # type: ignore[arg-type]
    assert read.lora_key == key


def test_a_deprecated_size_below_the_ranks_counts_one_sequence():
    # B5 (0 per GPU counted): refused, and counted as 1
    read = read_trinity_config(yaml.safe_dump(_config({"actor": {"ppo_micro_batch_size": 4}})), "c.yaml", {})
    assert dict(read.micro_batch_sequences)[f"{ARR}.actor.ppo_max_token_len_per_gpu"] == 1


def test_a_plan_for_another_release_keeps_its_critics_host_memory():
    # P8: for_release's host memory need counts the plan's critic (offloaded: its states in host memory). Planned for
    # Trinity 0.5.1, whose verl rule loads the untied Qwen3-8B on rank 0 alone, and restated for 0.6, which loads it
    # on rank 0 alone on H100s: the critic's states outweigh the load (every rank's, counted with no release named
    # or for 0.5 without its patch, would be the figure: 284.8 and 264.5 GiB).
    catalog = load_catalog()
    model = catalog.model("Qwen3-8B")
    (answer,) = plan("Qwen3-8B", gpu="h100", budget_gpus=8, max_model_len=8192, critic="offloaded", host_ram_gb=1000,
                     trinity_version="0.5.1")
    best = answer.best
    # Trinity 0.5's reference shards (bf16) differ from 0.6's (fp32): 151.8 with the critic's states, 50.9 without
    assert best is not None and (best.gpus, best.trainer_nodes, best.critic, best.host_memory_gb) == (
        8, 1, "offloaded", 151.8)
    assert for_release(best, model, "0.6").host_memory_gb == 172.1
    assert shown_host_need(model, 8, 8, best.offload, "0.5", best.reference_model, 0, None, loading="rank-0") == 50.9


def test_a_users_own_partial_rotary_factor_in_the_rope_scaling_is_kept(cli: Cli, tmp_path: Path):
    # Y4: the model's 0.75 is written only where the mapping lacks one; the user's own 0.5 stays (StableLM's type: a
    # Phi-3 is advised no YaRN, and --write removes a given one, tests/test_ropetype_s77.py)
    model = _phi_partial(tmp_path, model_type="stablelm")
    config, written = tmp_path / "trinity.yaml", tmp_path / "written.yaml"
    config.write_text("model:\n  model_path: /nowhere/Phi-partial\n  max_model_len: 8192\n  rope_scaling: {rope_type: "
                      "yarn, factor: 2.0, original_max_position_embeddings: 4096, partial_rotary_factor: 0.5}\n"
                      "cluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 4\n",
                      encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--model-config", str(model), "--gpu", "h200", "--write",
                         str(written))
    assert status == 0, err
    assert load_config_mapping(written.read_text(encoding="utf-8"), "w")["model"]["rope_scaling"] == {
        "rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 4096, "partial_rotary_factor": 0.5,
        "rope_theta": 10000}  # the model's own, added (ropetheta, s78)


HF = Path(__file__).parent / "data" / "hf-configs"


def test_vllm_lora_widths_of_mixtures_of_experts_by_hand():
    # Qwen3-30B-A3B at TP 8: 32 query heads of 128 (4096 / 8 = 512 per GPU), 4 KV heads, at least one per GPU
    # (128 wide, not 4 x 128 / 8: L6), its router (L9: no shared expert, so no gate; L10), 128 experts of 768 in
    # each of 48 layers, gate and up 96 per GPU (L11)
    qwen3 = load_catalog().model("Qwen3-30B-A3B")
    assert vllm_lora_widths(qwen3, 8) == (
        (151936, 2048, 1), (2048, 151936, 1), (2048, 512, 48), (2048, 128, 96), (512, 2048, 48), (2048, 128, 48),
        (2048, 96, 2 * 128 * 48), (96, 2048, 128 * 48))
    # Qwen1.5-MoE-A2.7B at TP 2: a shared expert of 5632 with its gate (2048 -> 1), 60 routed experts of 1408
    qwen15 = load_model_config(HF / "Qwen1.5-MoE-A2.7B.json")
    assert vllm_lora_widths(qwen15, 2) == (
        (151936, 2048, 1), (2048, 151936, 1), (2048, 1024, 24), (2048, 1024, 48), (1024, 2048, 24), (2048, 60, 24),
        (2048, 1, 24), (2048, 704, 2 * 60 * 24), (704, 2048, 60 * 24), (2048, 2816, 48), (2816, 2048, 24))
    # DeepSeek-V2-Lite at TP 2: its latent attention's projections whole, no norm (one column: L15), 26 sparse
    # layers of 64 experts and a shared expert of 2816, and its one dense layer's MLP of 10944 (L12)
    deepseek = load_model_config(HF / "DeepSeek-V2-Lite.json")
    assert vllm_lora_widths(deepseek, 2) == (
        (102400, 2048, 1), (2048, 102400, 1), (2048, 3072, 27), (2048, 576, 27), (512, 4096, 27), (2048, 2048, 27),
        (2048, 64, 26), (2048, 704, 2 * 64 * 26), (704, 2048, 64 * 26), (2048, 1408, 52), (1408, 2048, 26),
        (2048, 5472, 2), (5472, 2048, 1))


def test_a_float32_engine_holds_its_lora_slots_in_float32():
    # L14: vLLM's lora_dtype auto is the weights' dtype: 16 x 3040000 x 4 bytes + the punica wrapper's 56 x 2048
    engine = rollout_engine(load_catalog().model("Qwen3-8B"), 80.0, 1, 8192, largest=False, value_bytes=4,
                            lora_rank=16)
    assert engine.lora_gib is not None and engine.lora_gib * GIB == 16 * 3_040_000 * 4 + 56 * 2048 == 194_674_688


def test_a_placed_lora_jobs_rollout_engines_hold_its_lora_slots(tmp_path: Path):
    # L18: solve cluster's rollout engines for a LoRA job at its rank: Qwen3-8B's at TP 1, rank 16, 97394688 bytes
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: a, gpu: H100, nodes: 1, gpus_per_node: 8}\njobs:\n"
                     "  - {name: lora, model: Qwen3-8B, max_model_len: 8192, lora_rank: 16, rollout_gpus: 2}\n",
                     encoding="utf-8")
    (placement,) = place(load_fleet(fleet, load_catalog())).placements
    engines = placement.rollout_engines
    assert engines is not None and (placement.rollout_gpus, engines.size) == (2, 1)
    assert engines.lora_gib is not None and engines.lora_gib * GIB == 97_394_688


def test_a_key_that_is_no_text_is_lacked_named_as_yaml_writes_it():
    # N4: YAML reads `1:` as an integer key, which no typed section has: Trinity's merge refuses it ("Key '1' not in
    # 'Explorer'"), so it is lacked too, named as text (the lead's fix after coverage14)
    every = tuple(load_trinity_fields().releases)
    assert load_trinity_fields().lacking({"explorer": {1: "x", "no_such": 2}}) == {
        ("explorer", "1"): every, ("explorer", "no_such"): every}


def _stopped(tmp_path: Path, gpu: str, nodes: int, model: str, at_least: int) -> tuple[int, bool | None]:
    """The length of the one at_least job placed on a pool of `nodes` nodes of 8 `gpu`s, and its
    `stopped_at_validated`."""
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({
        "pools": [{"name": "p", "gpu": gpu, "nodes": nodes, "gpus_per_node": 8}],
        "jobs": [{"name": "j", "model": model, "max_model_len": {"at_least": at_least}, "rollout_gpus": 0}]}),
        encoding="utf-8")
    (placement,) = place(load_fleet(fleet, load_catalog())).placements
    return placement.plan.max_model_len, placement.stopped_at_validated


def test_a_job_that_asks_at_least_the_validated_length_is_said_to_stop_there(tmp_path: Path):
    # V2: Qwen3-30B-A3B on 16 H20s reaches past 131072 (test_clusterrest_s74); a job asking at least that stops there
    # too, at the validated length, though a plan reaches further (persona50 s78: said so since, where it was not)
    assert _stopped(tmp_path, "H20-96GB", 2, "Qwen3-30B-A3B", 131072) == (131072, True)
    # A least above the validated length is the job's own: it stops at no validated length
    assert _stopped(tmp_path, "H20-96GB", 2, "Qwen3-30B-A3B", 132096) == (132096, None)


def test_a_stretch_onto_thin_headroom_stopped_at_the_validated_length_says_so(tmp_path: Path):
    # V5: Qwen3-14B on 8 H200s: its plan at 131072 has thin headroom, so the stretch is restated with room to spare
    # (Env's longest, at the roomy margin), which again stops at the validated length
    assert _stopped(tmp_path, "H200", 1, "Qwen3-14B", 32768) == (131072, True)


def _staged_budgets(monkeypatch: pytest.MonkeyPatch) -> list[tuple[float, float]]:
    """The deterministic budget each of `buy`'s staged solves is given, and what it spent, in order."""
    calls: list[tuple[float, float]] = []
    solve_stages = buy_module.solve_stages

    def recorded(*args: Any) -> Any:
        staged = solve_stages(*args)
        calls.append((args[5], staged.spent))
        return staged

    monkeypatch.setattr(buy_module, "solve_stages", recorded)
    return calls


def _verl_loading(fleet: dict[str, Any]) -> dict[str, Any]:
    """`fleet` with each job under Trinity 0.5.1, whose verl rule loads an untied model (Qwen3-8B) on rank 0 alone
    (s84: with no release named every rank loads it, and the eight jobs' first bound rounds no pool, so nothing is
    asked again); its reference shards in bf16 make the needs smaller than before s84's count (fp32 ones, rank 0),
    and the purchases a node fewer. The nodes keep test_clusterrest_s74's 128 GB: test_coverage13_s74's default of
    192 GB is sized for every rank loading; under 0.5.1 the eight jobs' purchase there is rounded (feasible, not the
    unrounded optimum U5 asks again) and the twelve fit on 2 nodes."""
    for job in fleet["jobs"]:
        job["trinity_version"] = "0.5.1"
    return fleet


def test_buy_asked_again_gives_the_purchases_choice_what_both_questions_left(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch):
    # U5: test_clusterrest_s74's eight jobs, asked again on the tighter bound (2 nodes under 0.5.1, none rounded): the
    # choice among the purchases of as few GPUs and nodes gets its share of the budget less what both questions spent
    calls = _staged_budgets(monkeypatch)
    purchase = _bought(tmp_path, _verl_loading(_host_bound_fleet(0, SMALL_QWEN3 * 2, 128)))
    assert (purchase["status"], purchase["nodes"], purchase["host_rounded"]) == ("optimal", 2, [])
    (budget, first), (again, second), (choice, _) = calls[:3]
    assert again == budget - first
    assert choice == pytest.approx((budget - first - second) * PURCHASE_CHOICE_SHARE, rel=1e-12, abs=0)


def test_buy_asks_no_question_again_where_the_tighter_bound_rounds_as_many_pools(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch):
    # U3: twelve jobs, the bound's 12 nodes and the purchase's 4 both round pool p: the purchase is not asked again,
    # its choice gets its share of what the one question left
    calls = _staged_budgets(monkeypatch)
    purchase = _bought(tmp_path, _verl_loading(_host_bound_fleet(0, SMALL_QWEN3 * 3, 128)))
    assert (purchase["status"], purchase["nodes"], purchase["host_rounded"]) == ("feasible", 4, ["p"])
    (budget, first), (choice, _) = calls[:2]
    assert choice == pytest.approx((budget - first) * PURCHASE_CHOICE_SHARE, rel=1e-12, abs=0)


GLM4_MOE = {"model_type": "glm4_moe", "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 1024,
            "n_shared_experts": 0, "first_k_dense_replace": 0}
"""A GLM-4 mixture of experts in test_ropeseven_s74's Phi-3 config.json, whose vLLM class puts back its 0.5."""


@pytest.mark.parametrize(("share", "lost"), [(0.5, None), (None, None), (1.0, (1.0, 0.5))])
def test_glm4_moes_class_rotates_half_its_heads_without_a_share(tmp_path: Path, share: float | None,
                                                                lost: tuple[float, float] | None):
    # RP3: glm4_moe's vLLM class defaults to 0.5, as glm4's
    path = _phi_partial(tmp_path, partial_rotary_factor=share, **GLM4_MOE)
    assert load_model_config(path).vllm_partial_rotary_lost == lost


def test_a_catalogue_models_config_json_gives_its_own_rotated_share(tmp_path: Path):
    # RP6: a config.json under a catalogue name keeps the share vLLM would lose, as it keeps the RoPE base
    config = json.loads(QWEN3_8B.read_text(encoding="utf-8")) | {"_name_or_path": "Qwen3-8B",
                                                                 "partial_rotary_factor": 0.5}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    catalog = load_catalog()
    assert catalog.model("Qwen3-8B").vllm_partial_rotary_lost is None
    assert catalog.with_model(load_model_config(path)).model("Qwen3-8B").vllm_partial_rotary_lost == (0.5, 1.0)


def test_each_length_of_a_max_len_answer_asks_its_own_sp_1_question():
    # S3: Qwen3-4B at SP 2 on 8 RTX 4090s, the longest first: no plan without SP fits 13312 tokens (but with a lowered
    # budget), one fits 7168
    (answer,) = plan("4B", gpu="4090", budget_gpus=8, objective="max_len", top=20, sp=2)
    said = [(found.gpus, found.max_model_len, found.cautions[-1].split("not a measured time, ")[-1])
            for found in answer.plans]
    assert said[3:5] == [
        (2, 13312, ("and no plan without SP fits 13312 tokens here at Trinity's default token budget, but one with "
                    "a lowered budget does (sp=1 with token_budget=\"auto\"): it may train faster, so time a step of "
                    "each")),
        (8, 7168, "so a plan without SP that fits (sp=1) may train faster: time a step of each")]
