"""Mutation pass over session 78's DPO, RoPE, cluster and release merges (mutants35): each test kills a mutant that
the merges' own tests left alive. A fragment made without ``environ`` names every variable its layout took at its
default, in the order read; `config_query`'s LoRA rank, given, decides whether a DPO config may build no reference
model; the smaller card's note asks the smaller card's tables with LoRA and a critic as given; a LoRA plan counted
fused does not hold for 0.5.2, whose adapter is transformers 4's, and its experts words name that adapter; a factor
RoPE scaling at the native context itself is unneeded and removed by --write; a Phi-3's refused scaling is its
refusal alone, and none where its legacy type cannot be read; solve cluster's pool notes the experts' layout only
for a release named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_dpoleft_s78 import DPO_CONFIG, PADDED, _joined_comments
from test_phi3rope_s78 import _phimoe
from test_planjson_s78 import MIXTRAL_LIKE, SEPARATE
from test_ropeleft_s78 import _problems
from test_ropetype_s77 import _phi3_4k

import solver
from solver.api import config_query
from solver.memory import counts_hold_for
from solver.rules import Setting, smaller_card_note, smaller_card_vouching
from solver.tables import QueryError, load_model_config
from solver.trinity import read_trinity_config, trinity_config_problems, trinity_fragment

CATALOG = solver.load_catalog()


def test_the_defaults_taken_note_names_each_variable_taken_in_the_order_read():
    # mutant: the note named the first variable alone
    answer = solver.plan("Qwen3-8B", gpu="h100", budget_gpus=8, max_model_len=32768)[0]
    assert answer.best is not None
    layout = {"trainer": {"use_dynamic_bsz": "${oc.env:DYN,false}"}, "model": {"max_model_len": "${oc.env:LEN,32768}"}}
    comments = _joined_comments(trinity_fragment(answer.best, CATALOG.model("Qwen3-8B"), layout=layout))
    assert "# No environ given: layout's ${oc.env:...} took their defaults (LEN, DYN), as the keys here read them;" in (
        comments)


def test_a_lora_rank_given_lets_a_dpo_config_build_no_reference_model():
    # mutant: the refusal read the config's LoRA rank (none) in place of the one given
    config = read_trinity_config(DPO_CONFIG.format(mode="train", node=8), "dpo.yaml", {})
    assert (config.dpo, config.lora_rank) == (True, 0)
    query = config_query(PADDED, config, reference_model=False, lora_rank=32)
    assert (query.dpo, query.lora_rank, query.reference_model) == (True, 32, False)


def test_the_smaller_card_note_asks_the_smaller_cards_tables_with_lora_and_a_critic_as_given():
    # mutants: smaller_card_note dropped lora= (a documented cell in place of an inferred one) or critic= (a cell)
    big = CATALOG.with_gpu_types([solver.described_gpu_type("big", memory_mib=102400)])
    model, sp2 = CATALOG.model("Qwen3-8B"), Setting(env=False, offload=False, sp=2)
    lora = smaller_card_note(big, "big", model, 2, sp2, 16384, tables=None, estimate_fits=False, lora=True)
    assert lora is not None and (lora.evidence, lora.source.gpu) == ("inferred", "H20-96GB")
    assert lora == smaller_card_vouching(big, "big", model, 2, sp2, 16384, lora=True)
    assert smaller_card_note(big, "big", model, 2, sp2, 16384, tables=None, estimate_fits=False, critic=True) is None


def test_a_lora_plan_counted_fused_is_refused_for_a_release_whose_adapter_is_larger():
    # mutant: counts_hold_for compared the states' layouts alone, not the LoRA adapter's parameters. Qwen1.5-MoE under
    # 0.5.2 (either) holds its states fused, as 0.6 does, but its adapter is transformers 4's, 511,227,648 parameters
    # at rank 32 in place of 31,851,264 (test_release05a_s77), so a plan counted for 0.6 does not hold.
    model = solver.load_model_config(Path(__file__).parent / "data" / "hf-configs" / "Qwen1.5-MoE-A2.7B.json")
    assert counts_hold_for(model, 32, "fused", "either") is False
    assert counts_hold_for(model, 0, "fused", "either") is True  # no adapter: the states alone, fused in both
    catalog = CATALOG.with_model(model)
    (answer,) = solver.plan(model.name, gpu="h100", budget_gpus=8, max_model_len=8192, lora_rank=32, catalog=catalog)
    with pytest.raises(QueryError) as raised:
        solver.trinity_config(answer, catalog, version="0.5.2")
    assert str(raised.value).startswith(
        "the answer's plan was counted for no Trinity release (0.6's; routed experts counted whole, as transformers 5 "
        "holds them): its memory figures do not hold for Trinity 0.5.2, ")


def test_a_factor_scaling_at_the_native_context_itself_is_unneeded():
    # mutant: unneeded only below the native context (length < native): 40960 on Qwen3-8B is within it
    problems = _problems(CATALOG.model("Qwen3-8B"), {"rope_type": "linear", "factor": 2.0}, 40960, "train",
                         model_path="Qwen/Qwen3-8B")
    assert problems == [("rope-scaling-unneeded", (
        "model.rope_scaling: max_model_len 40960 is within Qwen3-8B's native context of 40960: a linear RoPE scaling "
        "is not needed there (it stretches the positions the model was trained on); remove it"))]


@pytest.mark.parametrize("rope", [{"rope_type": "linear"}, {"type": "dynamic"}, {"rope_type": "yarn"}])
@pytest.mark.parametrize("length", [2048, 16384])
def test_a_refused_factor_scaling_without_its_factor_is_its_refusal_alone(tmp_path: Path, rope: dict[str, str],
                                                                          length: int):
    # mutant: in mode train (no rollout's vLLM) a refused scaling was judged as built too: a rope-scaling-wrong line
    # on its missing factor beside the refusal, which removing it fixes (a PhiMoE's, which its trainer fails on, since
    # phi3rope built a Phi-3's as given)
    assert [code for code, _ in _problems(_phimoe(tmp_path), rope, length, "train")] == [
        "rope-scaling-unbuilt-refused"]


@pytest.mark.parametrize("mode", ["train", "both"])
def test_a_refused_scaling_whose_legacy_type_cannot_be_read_is_judged_no_further(tmp_path: Path, mode: str):
    # mutant: _type_refuses_rope refused it though its type cannot be read (in mode train, where no vLLM reads it)
    model = load_model_config(_phi3_4k(tmp_path))
    rope = {"rope_type": "linear", "factor": 4.0, "type": "${oc.env:NOPE}"}
    mapping = {"mode": mode, "model": {"model_path": "/nowhere/model", "max_model_len": 16384, "rope_scaling": rope},
               **({"explorer": {"rollout_model": {"engine_num": 4}}} if mode == "both" else {})}
    problems = trinity_config_problems(mapping, model, 8, version="0.6")
    assert [(problem.code.value, problem.words) for problem in problems] == [("unresolved-value", (
        "cannot check model.rope_scaling.type: environment variable NOPE is not set and '${oc.env:NOPE}' has no "
        "default: set NOPE as trinity run will have it (Trinity fails to load the config without it), or give it a "
        "default (${oc.env:NOPE,DEFAULT})"))]


def test_write_removes_a_scaling_at_the_native_context_itself(cli, tmp_path: Path):
    # mutant: _stale_rope kept a scaling where the length equals the native context (max_model_len < native)
    config, written = tmp_path / "trinity.yaml", tmp_path / "written.yaml"
    config.write_text("mode: train\nmodel:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 40960\n"
                      "  rope_scaling: {rope_type: linear, factor: 2.0}\nalgorithm: {algorithm_type: grpo}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nbuffer: {train_batch_size: 64, batch_size: 8}\n",
                      encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--write", str(written))
    assert status == 0, err
    text = written.read_text(encoding="utf-8")
    assert "max_model_len: 40960" in text and "rope_scaling" not in text


def test_a_lora_plans_experts_words_name_the_adapter_counted_as_transformers_4_makes_it():
    # mutant: the plan's experts_counted was worded without its LoRA rank, so without the adapter's layout
    model = solver.load_model_config(Path(__file__).parent / "data" / "hf-configs" / "Qwen1.5-MoE-A2.7B.json")
    (answer,) = solver.plan(model.name, gpu="h100", budget_gpus=8, max_model_len=8192, lora_rank=32,
                            trinity_version="0.5.2", catalog=CATALOG.with_model(model))
    assert answer.best is not None
    assert (answer.best.trinity_version, answer.best.expert_layout, answer.best.experts_counted) == (
        "0.5.2", "either", ("routed experts counted at the larger of Trinity 0.5's two layouts, 3-D as transformers "
                            "5 holds them or separate as transformers 4 does, each as verl 0.7 places it; its LoRA "
                            "adapter as transformers 4 makes them, the larger"))


def test_solve_cluster_notes_no_experts_layout_where_no_release_was_named(cli, tmp_path: Path):
    # mutant: the pool's note on how a mixture of experts counted its routed experts came without --trinity-version
    mixtral_like, fleet = tmp_path / "mixtral-like", tmp_path / "fleet.yaml"
    mixtral_like.mkdir()
    (mixtral_like / "config.json").write_text(json.dumps(MIXTRAL_LIKE), encoding="utf-8")
    # 200 GiB a node: with no release named each of a node's 8 ranks loads the untied model (s84), 166.6 GiB there;
    # 60 held 0.6's and 0.5.1's rank 0 alone.
    fleet.write_text("pools:\n  - {name: h100s, gpu: h100, nodes: 2, gpus_per_node: 8, host_ram_gb: 200}\n"
                     f"jobs:\n  - {{name: mix, model_config: {mixtral_like}, max_model_len: 8192, "
                     "rollout_gpus: 0}\n", encoding="utf-8")
    status, out, err = cli("cluster", str(fleet))
    assert status == 0, err
    assert "routed experts counted" not in out
    status, out, err = cli("cluster", str(fleet), "--trinity-version", "0.5.1")
    assert (status, f"\nmix: {SEPARATE}\n" in out) == (0, True), err
