"""Mutation testing of session 77's later merges (mutants32): moerelease's expert layout by release, peftgap's LoRA
targets judged on the model, review77's DPO refusals (no survivor), ropetype's RoPE advice per model type and
lorasep's adapter by layout. Each test kills mutants the merges' own tests left alive: the host memory, the
node-sharing figure, a critic's update and the nearest estimate under Trinity 0.5.1's separate experts; the checks'
gate on a LoRA config's rank, type and exclusion; PEFT's short names and their exclusion; a Phi-3's kept non-YaRN
scaling, its summary row and its one caution; a Llama 3.1 given YaRN; a length vLLM derives exactly."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from command_words import make_query
from test_peftgap_s77 import _deepseek
from test_ropetype_s77 import _phi3_4k

import solver
from solver.cluster.options import Planner
from solver.explain import _Words
from solver.memory import (
    STATE_BYTES,
    critic_pass_gib,
    host_critic_gib,
    host_memory_gib,
    lora_states_bytes,
    token_features,
)
from solver.model import prepare
from solver.results import length_cautions, own_scaling_words
from solver.tables import Job, Model, Setting, counted_expert_layout, load_catalog, load_weights
from solver.tables.bounds import ExpertLayout, trinity_release
from solver.tables.model_config import load_model_config
from solver.tables.peft_match import QWEN3_MOE, converted_target_names, peft_target_match
from solver.tables.peft_names import PEFT_NAMES_BY_MODEL_TYPE
from solver.tables.rope_types import ROPE_BY_MODEL_TYPE, RopeAdvice, rope_advice
from solver.tables.text import QueryError
from solver.trinity import load_config_mapping, read_trinity_config, trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]
CONFIGS = Path(__file__).parent / "data" / "hf-configs"
MIXTRAL_CONFIG = CONFIGS / "Mixtral-8x7B-v0.1.json"
MIXTRAL = load_model_config(MIXTRAL_CONFIG)
CATALOG = load_catalog()
QWEN3_8B = CATALOG.model("Qwen3-8B")


# moerelease: the release as written, its patch read whole


def test_a_release_trinity_refuses_counts_fused_and_a_two_digit_patch_is_read() -> None:
    # "0.5.1x" is no release (trinity_release refuses it): it counts fused, though it starts as 0.5.1 does.
    with pytest.raises(QueryError):
        trinity_release("--trinity-version", "0.5.1x")
    assert counted_expert_layout("0.5.1x") == "fused"
    # 0.5.10 is not 0.5.1 (release05a): a patch rft-solver does not know is refused (smallslips30, s78: it was read
    # as 0.5, either layout), and counts fused.
    with pytest.raises(QueryError, match="got '0.5.10' "):
        trinity_release("--trinity-version", "0.5.10")
    assert counted_expert_layout("0.5.10") == "fused"


def test_the_node_sharing_host_figure_follows_the_planners_layout() -> None:
    # Planner.host_tenths (what jobs sharing a node must hold together): Qwen3-30B-A3B on 6 GPUs without Offload,
    # 0.6's fp32 reference pinned by rows: whole experts, 22 of 128 on the fullest GPU, 337.6 GiB; separate, 265.6.
    # Under 0.5 (a bf16 reference as verl 0.7 places it, pinnedplace s79) 171.7 either way. Each with the model
    # loaded on rank 0 alone (a plan's `model_loading`, as 0.6 on H100s loads it, s84), on 6 GPUs without Offload.
    job = Job(name="q", model="Qwen3-30B-A3B", max_model_len=8192)
    plan = solver.plan("30B-A3B", gpu="h100", max_model_len=8192, trinity_version="0.6")[0].plans[0]
    assert plan.model_loading == "rank-0"
    plan = plan.model_copy(update={"gpus": 6, "offload": False})
    tenths = {(version, layout): Planner(CATALOG, load_weights(), "auto", trinity_version=version,
                                         expert_layout=layout).host_tenths(job, plan)
              for version in ("0.6", "0.5") for layout in ("fused", "separate")}
    assert tenths == {("0.6", "fused"): 3376, ("0.6", "separate"): 2656, ("0.5", "fused"): 1717,
                      ("0.5", "separate"): 1717}


def test_offloads_host_memory_and_an_offloaded_critic_follow_the_layout() -> None:
    # Mixtral on 32 GPUs, 8 to a node, Offload, no reference: the actor's pinned shards (parameters, gradients) hold
    # 1 of 8 expert rows each where fused (rounded up to a power of two), an even share where separate. The model
    # loaded on rank 0 alone (as 0.6 loads it on H100s; every rank, the default, adds 7 x 174.0 GiB, s84).
    def host(lora_rank: int, layout: ExpertLayout) -> float:
        return host_memory_gib(MIXTRAL, 32, 8, True, "0.6", False, lora_rank, None, layout, loading="rank-0")

    assert host(0, "fused") == pytest.approx(473.99899, abs=1e-4)
    assert host(0, "separate") == pytest.approx(223.48561, abs=1e-4)
    # with LoRA rank 8: the frozen base's shards, and the adapter's share (8 experts' own under separate)
    assert host(8, "fused") == pytest.approx(368.49781, abs=1e-4)
    assert host(8, "separate") == pytest.approx(224.21659, abs=1e-4)
    # an offloaded critic's states on a node, as full fine-tuning's Offload holds them
    assert host_critic_gib(MIXTRAL, 32, 8, "offloaded", "fused") == pytest.approx(472.66874, abs=1e-4)
    assert host_critic_gib(MIXTRAL, 32, 8, "offloaded", "separate") == pytest.approx(185.47704, abs=1e-4)


def test_a_plans_offloaded_critic_on_the_host_follows_the_release(cli: Cli) -> None:
    argv = ("--model-config", str(MIXTRAL_CONFIG), "--gpu", "a100-80gb", "--gpus", "32", "--exact", "--len", "16k",
            "--critic", "offloaded", "--json")
    figures = {}
    for release in ("0.5.1", "0.5", "0.6"):
        status, out, _ = cli(*argv, "--trinity-version", release)
        [plan] = json.loads(out)[0]["plans"]
        figures[release] = (status, plan["gpus"], plan["host_critic_gb"])
    # 0.5's as verl 0.7 places its blocks, whole experts or separate (pinnedplace, s79); 0.6's by rows, whole.
    assert figures == {"0.5.1": (0, 32, 185.47), "0.5": (0, 32, 185.47), "0.6": (0, 32, 472.67)}


def test_a_plan_of_the_lifted_host_memory_question_is_kept_only_where_the_releases_need_fits(cli: Cli) -> None:
    # Qwen2-57B-A14B with LoRA rank 8 and Offload on 6 of 8 GPUs: under 0.5.1 each expert's own adapter makes the
    # node's need 512.2 GiB, more than whole experts' 509.6 (their fused adapter, 0.5's count before release05a);
    # 0.5 takes either layout and counts the larger adapter (release05a), and, without its patch, the model loaded on
    # each of the 6 ranks where 0.5.1 loads the untied model on rank 0 alone (s84: 5 x 214.9 GiB more, 1586.9). On
    # nodes of 511 GiB no plan fits under either: the best plan on nodes with the most host memory, asked first, is
    # not the answer.
    argv = ("--model-config", str(CONFIGS / "Qwen2-57B-A14B.json"), "--gpu", "h100", "--gpus", "6", "--exact",
            "--offload", "--lora-rank", "8", "--len", "8k", "--node-gpus", "8", "--json")
    needs = {}
    for release in ("0.5.1", "0.5"):
        status, out, _ = cli(*argv, "--trinity-version", release)
        [plan] = json.loads(out)[0]["plans"]
        needs[release] = (status, plan["host_memory_gb"])
    assert needs == {"0.5.1": (0, 512.2), "0.5": (0, 1586.9)}
    for release in ("0.5.1", "0.5"):
        status, out, _ = cli(*argv, "--trinity-version", release, "--host-ram", "511")
        answer = json.loads(out)[0]
        assert (status, answer["status"], answer["plans"]) == (1, "infeasible", [])


def test_the_actor_held_beside_a_critics_update_follows_the_layout() -> None:
    # LoRA rank 8 on Mixtral, 32 GPUs: the actor's states less the adapter's gradients stay while the critic updates,
    # the share held (4 of 4 bytes for the frozen base, 12 of 16 for the adapter) weighed by the layout's base and
    # adapter: separate holds an even share of the base and each expert's own adapter.
    setting = Setting(env=True, offload=False, sp=1)
    terms = token_features(MIXTRAL, 32, setting, 8192, 8, "separate")
    held = (lora_states_bytes(MIXTRAL, 32, 8, 12, "separate") / lora_states_bytes(MIXTRAL, 32, 8, STATE_BYTES,
                                                                                  "separate"))
    assert held == pytest.approx(0.9974334, abs=1e-7)
    fused_held = lora_states_bytes(MIXTRAL, 32, 8, 12) / lora_states_bytes(MIXTRAL, 32, 8, STATE_BYTES)
    assert fused_held == pytest.approx(0.9990158, abs=1e-7)
    # the same terms, the critic's states offloaded (none in the update): only the actor's held share differs
    separate = critic_pass_gib(MIXTRAL, 32, 8192, terms, "offloaded", 8, "separate")
    fused = critic_pass_gib(MIXTRAL, 32, 8192, terms, "offloaded", 8, "fused")
    assert separate - fused == pytest.approx(terms["states"] * (held - fused_held), abs=1e-9)
    assert separate != fused


def test_the_nearest_estimate_weighs_the_releases_layout() -> None:
    # Qwen3-30B-A3B at 256k on 6 A100s: Env on 6 GPUs under 0.5.1 holds an even share of the experts, and so under 0.5,
    # whose fused experts verl 0.7 places by their 1536 and 768 (fusedpad, s80); under 0.6 the fullest GPU holds 22 of
    # 128 (2.25 GiB more states: `test_the_states_per_gpu_follow_the_releases_layout`).
    nearest = {}
    for release in ("0.5.1", "0.5", "0.6"):
        query = make_query(CATALOG, gpu="a100", model="30B-A3B", max_model_len=262144, budget_gpus=6,
                           trinity_version=release)
        words = _Words(prepare(CATALOG, "A100-80GB", query), query, CATALOG)
        nearest[release] = words.nearest_over([(6, 1, 0, 1)], 262144, lambda combination: True)
    even = " (the nearest, Env on 6 GPUs: the memory model predicts 732.5 GiB of 73.5 usable, 658.9 GiB over)"
    assert nearest == {"0.5.1": even, "0.5": even,
                       "0.6": " (the nearest, Env on 6 GPUs: the memory model predicts 734.8 GiB of 73.5 usable, "
                              "661.3 GiB over)"}


# peftgap: what the checks judge of a LoRA config, and PEFT's short names


def _lora_problems(lora: str, model: Model = QWEN3_8B) -> tuple[list[str], list[str]]:
    """The LoRA codes of the checks and of the config reading for a config of one LoRA config `lora`."""
    text = f"model:\n  model_path: /models/m\n  lora_configs: [{lora}]\n"
    checked = trinity_config_problems(load_config_mapping(text, "trinity.yaml"), model, 4)
    read = read_trinity_config(text, "trinity.yaml", {})
    return ([f"{problem.code.value}: {problem.words}" for problem in checked if problem.code.value.startswith("lora")],
            [code.value for code in read.note_codes if code.value.startswith("lora")])


@pytest.mark.parametrize(("lora", "refusal"), [
    ("{lora_rank: 0, target_modules: '.*nothing'}", "lora-configs-refused"),  # no adapter: the rank is refused
    ("{lora_rank: 8.5, target_modules: '.*nothing'}", "lora-rank-not-a-number-refused"),
    ("{lora_rank: 8, target_modules: [q_proj, v_proj]}", "lora-configs-refused"),  # a list: Trinity's typed config
])
def test_a_config_the_reading_refuses_gets_no_target_refusal_from_the_checks(lora: str, refusal: str) -> None:
    checked, read = _lora_problems(lora)
    assert (checked, refusal in read) == ([], True)


@pytest.mark.parametrize("targets", ["5", "1.5"])
def test_a_number_target_is_the_text_trinity_makes_of_it_in_the_reading_too(targets: str) -> None:
    checked, read = _lora_problems(f"{{lora_rank: 8, target_modules: {targets}}}")
    assert [words.split(", on ")[0] for words in checked] == [
        f"lora-configs-refused: model.lora_configs[0].target_modules '{targets}'"]
    assert read == ["lora-counted-as-full", "lora-targets-saved-split"]


@pytest.mark.parametrize(("lora", "subject"), [
    # all-linear less an exclusion of everything: PEFT's "All modules were excluded"
    ("{lora_rank: 8, target_modules: all-linear, exclude_modules: '.*'}",
     ("model.lora_configs[0].exclude_modules '.*', on Qwen3-8B (a dense model), leaves out every module "
      "target_modules 'all-linear' matches (\"All modules were excluded\")")),
    # a target that matches nothing, excluded or not: the target is at fault, not the exclusion
    ("{lora_rank: 8, target_modules: '.*nothing', exclude_modules: '.*v_proj'}",
     "model.lora_configs[0].target_modules '.*nothing', on Qwen3-8B (a dense model), matches no module"),
    # a target matching a norm, which PEFT cannot adapt: the target again
    ("{lora_rank: 8, target_modules: '.*norm', exclude_modules: '.*v_proj'}",
     ("model.lora_configs[0].target_modules '.*norm', on Qwen3-8B (a dense model), matches model.norm, which PEFT "
      "cannot adapt")),
])
def test_the_refusal_names_the_key_at_fault(lora: str, subject: str) -> None:
    checked, _ = _lora_problems(lora)
    assert len(checked) == 1 and checked[0].startswith(f"lora-configs-refused: {subject}")


def test_peft_leaves_out_the_names_its_exclusion_matches_whole() -> None:
    # exclude_modules 'v_proj' matches no module's full name whole: PEFT keeps v_proj among the short names.
    assert converted_target_names(".*\\.(q|v)_proj", "v_proj", QWEN3_MOE) == ("q_proj", "v_proj")
    assert converted_target_names(".*\\.(q|v)_proj", ".*\\.v_proj", QWEN3_MOE) == ("q_proj",)
    # a regex PEFT matches whole: self_attn.q_proj is no full name
    assert converted_target_names("self_attn\\.q_proj", None, QWEN3_MOE) == ()


def test_a_routed_experts_short_names_adapt_the_routed_experts_alone() -> None:
    # DeepSeek-V2: the routed experts' gate_proj, up_proj and down_proj share their short names with the dense
    # layers' MLP and the shared experts', which a regex naming mlp.experts alone does not adapt.
    names = PEFT_NAMES_BY_MODEL_TYPE["deepseek_v2"]
    assert peft_target_match(".*mlp\\.experts\\..*_proj", None, names).linears == (
        "experts.gate_proj", "experts.up_proj", "experts.down_proj")


def test_any_q_lora_rank_makes_the_low_rank_query(tmp_path: Path) -> None:
    adapted = _deepseek(tmp_path, 1).peft_names.adapted
    assert ("self_attn.q_a_proj" in adapted, "self_attn.q_proj" in adapted) == (True, False)


# ropetype


def test_every_type_whose_module_names_are_read_has_its_rope_read() -> None:
    assert {model_type for model_type in PEFT_NAMES_BY_MODEL_TYPE if model_type not in ROPE_BY_MODEL_TYPE} == set()
    assert rope_advice("deepseek_v3", None) == RopeAdvice("yarn", ROPE_BY_MODEL_TYPE["deepseek_v3"], assumed=False)


def test_a_phi3_past_its_native_context_and_a_shorter_length_key_gets_one_caution(tmp_path: Path) -> None:
    path = _phi3_4k(tmp_path)
    path.write_text(json.dumps(json.loads(path.read_text(encoding="utf-8")) | {"seq_length": 2048}),
                    encoding="utf-8")
    model = load_model_config(path)
    cautions = length_cautions(model, 16384)
    assert len(cautions) == 1 and cautions[0].startswith("beyond the native 4096 with no RoPE scaling to reach it")
    assert cautions[0].endswith("vLLM's rollout refuses it, past the 2048 it derives from the model's config, unless "
                                "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set; past 4096, transformers' trainer rotates by "
                                "plain RoPE at positions the model was not trained on, and vLLM's rollout reads past "
                                "the end of its rotary cache of 4096 positions (positions past it lead to nan, vLLM "
                                "warns): it samples those tokens with no rotation the trainer computes")


def test_a_length_vllm_derives_exactly_is_taken(tmp_path: Path) -> None:
    # Llama-2-7B with a linear scaling of 2 of its own: vLLM derives 2 x 4096 = 8192, and takes 8192 itself.
    config = json.loads((CONFIGS / "Llama-2-7b-hf.json").read_text(encoding="utf-8"))
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config | {"rope_scaling": {"type": "linear", "factor": 2.0}}), encoding="utf-8")
    assert own_scaling_words(load_model_config(path), 8192) == (
        "beyond the native 4096, which Llama-2-7b-hf's own linear RoPE scaling provides: no YaRN written; vLLM's "
        "rollout takes it: the longest length it derives from the model's config is 8192; check the model handles it")


def _trinity(tmp_path: Path, model_path: str, rope: str) -> Path:
    config = tmp_path / "trinity.yaml"
    config.write_text(f"model:\n  model_path: {model_path}\n  max_model_len: 16384\n  rope_scaling: {rope}\n"
                      "algorithm: {algorithm_type: grpo}\ncluster:\n  node_num: 1\n  gpu_per_node: 8\n"
                      "explorer:\n  rollout_model:\n    engine_num: 4\n", encoding="utf-8")
    return config


def test_a_yarn_on_a_model_with_its_own_scaling_is_not_called_a_type_without_yarn(cli: Cli, tmp_path: Path) -> None:
    config = _trinity(tmp_path, "/nowhere/Llama-3.1-8B",
                      "{rope_type: yarn, factor: 4.0, original_max_position_embeddings: 4096}")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["config_problem_codes"]) == (1, ["rope-scaling-replaces-own", "rope-theta-dropped"])


def test_write_keeps_a_phi3s_scaling_that_is_no_yarn(cli: Cli, tmp_path: Path) -> None:
    # (a dynamic one, which Phi-3's config class refuses as it does YaRN, goes since ropeleft: test_ropeleft_s78)
    config = _trinity(tmp_path, "/nowhere/Phi-3-mini-4k-instruct", "{rope_type: default}")
    written = tmp_path / "written.yaml"
    status, _, err = cli("--from-config", str(config), "--model-config", str(_phi3_4k(tmp_path)), "--gpu", "h100",
                         "--write", str(written))
    assert status == 0, err
    assert "  rope_scaling: {rope_type: default}\n" in written.read_text(encoding="utf-8")


def test_the_summary_row_says_a_phi3_has_no_scaling_to_reach_its_length(cli: Cli, tmp_path: Path) -> None:
    status, out, _ = cli("--model-config", str(_phi3_4k(tmp_path)), "--gpu", "h100", "--gpus", "4", "--len", "16k")
    assert status == 0
    assert ("max_model_len 16384, past the native 4096, with no RoPE scaling to reach it (no YaRN written for "
            "model_type phi3: Phi-3's checkpoints reach past their native context by LongRoPE") in " ".join(out.split())
