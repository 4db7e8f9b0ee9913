"""Lines s78 changed that its tests and those of its changed functions did not run (coverage18, session 78): the
empty environment a layout is read in without an ``environ`` (`NoEnvironment`) as a mapping; a ``${oc.env:VAR}``
without a default read in an ``environ`` that is given but lacks VAR (the key left out, no header note); a
Hunyuan-MoE-like router named otherwise than ``mlp.gate`` matched as any module, not as PEFT's mapped ``gate``; every
transformers 4 name set of a mixture of experts naming its routed experts by index (`_separate`'s count)."""

from __future__ import annotations

import pytest

import solver
from solver.tables import load_catalog
from solver.tables.peft_match import peft_target_match
from solver.tables.peft_names import (
    EXPERT_INDEX,
    PEFT_EXPERTS,
    PEFT_NAMES_BY_MODEL_TYPE,
    SEPARATE_NAMES_BY_MODEL_TYPE,
    separate_module_names,
)
from solver.trinity import trinity_fragment
from solver.trinity.interpolation import NoEnvironment, VariableUnset

CATALOG = load_catalog()
QWEN3_8B = CATALOG.model("Qwen3-8B")


def test_no_environment_is_an_empty_mapping_that_notes_the_defaults_taken():
    environ = NoEnvironment()
    assert (len(environ), list(environ), dict(environ), "HOME" in environ) == (0, [], {}, False)
    with pytest.raises(KeyError, match="HOME"):
        environ["HOME"]
    assert (environ.get("ALGO", "grpo"), environ.get("DYN"), environ.get("ALGO", "ppo")) == ("grpo", None, "ppo")
    assert list(environ.taken) == ["ALGO", "DYN"]  # in the order first read, once each
    environ.left_unread("trainer.use_dynamic_bsz", VariableUnset("unset", "DYN"))
    environ.left_unread("trainer.use_dynamic_bsz", VariableUnset("unset", "OTHER"))  # the first variable kept
    assert environ.unread == {"trainer.use_dynamic_bsz": "DYN"}
    assert len(environ) == 0  # noting changes no content


def test_a_variable_without_a_default_unset_in_a_given_environ_leaves_its_key_out_without_the_header_note():
    # plan_keys' read: a VariableUnset in an environ given (not NoEnvironment) is noted nowhere; the key is read as
    # unknown (read_or_none), so the fragment writes nothing of it, as where the layout lacks the key.
    answer = solver.plan("Qwen3-8B", gpu="h100", budget_gpus=8, max_model_len=32768)[0]
    assert answer.best is not None
    layout = {"trainer": {"use_dynamic_bsz": "${oc.env:DYN}"}}
    given = trinity_fragment(answer.best, QWEN3_8B, layout=layout, environ={})
    assert "No environ given" not in given and "DYN" not in given and "use_dynamic_bsz" not in given
    assert given == trinity_fragment(answer.best, QWEN3_8B, layout={"trainer": {}}, environ={})
    read = trinity_fragment(answer.best, QWEN3_8B, layout=layout, environ={"DYN": "false"})
    assert "  use_dynamic_bsz: true" in read  # where it is set it is read, and set right
    unset = trinity_fragment(answer.best, QWEN3_8B, layout=layout)  # none given: the header names the key
    assert "No environ given: the keys here leave trainer.use_dynamic_bsz unread" in " ".join(unset.splitlines())


def test_a_router_named_otherwise_than_mlp_gate_is_matched_as_any_module_not_as_peft_maps_gate():
    # PEFT maps the short names `gate` and the experts' v4 names to parameters; Hunyuan-MoE's router mlp.gate.wg ends in
    # `wg`, which it does not map: a regex naming it adapts every module whose name ends in wg (here one more made up).
    hunyuan = PEFT_NAMES_BY_MODEL_TYPE["hunyuan_v1_moe"]
    assert (hunyuan.router, bool(hunyuan.fused)) == ("mlp.gate.wg", True)
    names = hunyuan._replace(adapted=(*hunyuan.adapted, "mlp.extra.wg"))
    assert peft_target_match(r".*\.mlp\.gate\.wg", None, names).linears == ("gate.wg", "extra.wg")
    assert peft_target_match(r".*\.mlp\.gate\.wg", None, hunyuan).linears == ("gate.wg",)
    assert peft_target_match(r".*\.mlp\.extra\.wg", None, names).linears == ("gate.wg", "extra.wg")


def test_transformers_4s_names_of_a_mixture_of_experts_name_its_experts_by_index():
    # _separate counts PEFT_EXPERTS routed experts for each type it makes names of (all mixtures of experts); StableLM's
    # names, which differ only in its attention's modules, count none, and keep none given.
    counted = {model_type: names.expert_count for model_type, names in SEPARATE_NAMES_BY_MODEL_TYPE.items()}
    assert counted == {model_type: 0 if model_type == "stablelm" else PEFT_EXPERTS for model_type in counted}
    for names in SEPARATE_NAMES_BY_MODEL_TYPE.values():
        assert any(f".{EXPERT_INDEX}." in name for name in names.adapted) == (names.expert_count > 0)
    assert separate_module_names(PEFT_NAMES_BY_MODEL_TYPE["mixtral"], 16).expert_count == 16
    assert separate_module_names(PEFT_NAMES_BY_MODEL_TYPE["stablelm"], 16).expert_count == 0
