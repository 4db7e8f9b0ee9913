"""Review of session 78's merges (review78): the loraleft x v4names merge dropped Hunyuan-MoE's shared expert
(``mlp.shared_mlp.{gate,up,down}_proj``, ``nn.Linear`` under transformers 4.57.6's ``HunYuanMoEV1MLP``, adapted
there since PEFT converts nothing) from transformers 4's names, so a 0.5.1 config whose ``target_modules`` names it
was refused as matching no module. (Its second finding, a Phi-3's factor scaling within the native context as its
refusal alone, gave way to phi3rope's runs, which build it as given: tests/test_phi3rope_s78.py.)"""

from __future__ import annotations

import json
from pathlib import Path

from test_loraleft_s78 import MOE

import solver
from solver.tables.peft_match import TargetMatch, peft_target_match, shown_module_names
from solver.tables.peft_names import PEFT_NAMES_BY_MODEL_TYPE, SEPARATE_NAMES_BY_MODEL_TYPE
from solver.trinity.checks import lora_targets_problem

SHARED = ".*shared_mlp\\..*_proj"


def _hunyuan(tmp_path: Path) -> solver.Model:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(MOE["hunyuan_v1_moe"]), encoding="utf-8")
    return solver.load_model_config(folder)


def test_transformers_4_names_hold_hunyuans_shared_expert_as_adapted_linears():
    separate = SEPARATE_NAMES_BY_MODEL_TYPE["hunyuan_v1_moe"]
    assert separate.adapted == (
        "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate.wg",
        "mlp.experts.E.gate_proj", "mlp.experts.E.up_proj", "mlp.experts.E.down_proj", "mlp.shared_mlp.gate_proj",
        "mlp.shared_mlp.up_proj", "mlp.shared_mlp.down_proj")
    fused = PEFT_NAMES_BY_MODEL_TYPE["hunyuan_v1_moe"]  # transformers 5: among the others, as loraleft found
    assert fused.others[-3:] == ("mlp.shared_mlp.gate_proj", "mlp.shared_mlp.up_proj", "mlp.shared_mlp.down_proj")


def test_a_regex_naming_hunyuans_shared_expert_is_taken_under_transformers_4(tmp_path: Path):
    # Before, under 0.5.1's names it matched no module, and the checks said Trinity fails as it makes the adapter.
    model = _hunyuan(tmp_path)
    names = model.peft_names_of("separate")
    assert peft_target_match(SHARED, None, names) == TargetMatch(
        ("shared_mlp.gate_proj", "shared_mlp.up_proj", "shared_mlp.down_proj"), (), None)
    assert [lora_targets_problem(SHARED, None, model, layout) for layout in ("separate", "either", "fused")] == [
        None, None, None]
    assert shown_module_names(names) == (
        "model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.gate.wg, "
        "model.layers.N.mlp.experts.E.{gate,up,down}_proj, model.layers.N.mlp.shared_mlp.{gate,up,down}_proj, "
        "model.embed_tokens and lm_head")
