"""Coverage of session 77's changed lines (helper coverage17): every line and branch s77 changed in solver/ is run by
the s77 tests and those of the functions and messages it changed; what they left untried is `plan_settings`' and
`trinity_fragment`'s own ``dpo`` argument (the CLI and the answer's API pass it, no test passed it directly): the
pair the plan counted decides DPO's actor size over what ``layout`` trains, and a value of another kind is refused.
Their conditional expressions' arms too, but `shown_module_names`' for a module that is the layer's own (no block),
which no type has: removed, and the table held to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_dpomicro_s76 import example_with_algorithm
from test_padbound_s71 import INTERNLM2
from test_review76_s76 import _actor_size

from solver.api import answer_query
from solver.query import make_query
from solver.results import Plan
from solver.tables import QueryError, load_catalog
from solver.tables.model_config import load_model_config
from solver.tables.peft_match import shown_module_names
from solver.tables.peft_names import PEFT_NAMES_BY_MODEL_TYPE
from solver.trinity import plan_settings, trinity_fragment
from solver.trinity.reader import load_config_mapping

MODEL = load_model_config(INTERNLM2)


@pytest.fixture(scope="module")
def plan() -> Plan:
    """InternLM2-7B's (a padded model's) best plan on 8 H100s at 32768 tokens, planned without DPO."""
    catalog = load_catalog().with_model(MODEL)
    best = answer_query(make_query(catalog, model=MODEL.name, gpu="h100", max_model_len=32768, budget_gpus=8),
                        catalog)[0].best
    assert best is not None
    return best


@pytest.mark.parametrize(("dpo", "algorithm", "size"), [
    (None, None, 1), (None, "grpo", 1), (None, "dpo", 2),  # None: as the layout trains
    (True, None, 2), (True, "grpo", 2), (True, "dpo", 2),  # the plan counted a pair: one pair, whatever the layout
    (False, None, 1), (False, "grpo", 1)])  # it counted none: one sequence (a DPO layout refuses it: smallslips27)
def test_dpo_decides_the_actor_size_over_the_layout(tmp_path: Path, plan: Plan, dpo: bool | None,
                                                    algorithm: str | None, size: int):
    """`plan_settings`' actor ``ppo_micro_batch_size_per_gpu`` and `trinity_fragment`'s, alike: 2 (one DPO pair) where
    `dpo` is True, 1 where False (a layout that trains DPO refuses it), and with None 2 only where the layout trains DPO
    (as before the argument)."""
    layout: Any = None if algorithm is None else load_config_mapping(
        example_with_algorithm(tmp_path, algorithm).read_text(), f"{algorithm}.yaml")
    settings = plan_settings(plan, MODEL, layout=layout, dpo=dpo)
    actor = settings.config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]
    assert (actor["ppo_micro_batch_size_per_gpu"],
            _actor_size(trinity_fragment(plan, MODEL, layout=layout, dpo=dpo))) == (size, size)


@pytest.mark.parametrize(("value", "shown"), [("yes", "'yes'"), (1, "1")])
def test_a_dpo_of_another_kind_is_refused(plan: Plan, value: object, shown: str):
    """``dpo`` takes a bool or None (`checked_settings_arguments`): a str or an int is refused naming the values."""
    for make in (plan_settings, trinity_fragment):
        with pytest.raises(QueryError) as refused:
            make(plan, MODEL, dpo=value)
        assert str(refused.value) == f"dpo must be True, False or None, got {shown}"


def test_every_adapted_module_is_under_a_block():
    """`shown_module_names` writes ``model.layers.N.<block>.<leaves>``: every type's modules that ``all-linear`` adapts
    are under a block of the layer (``self_attn``, ``mlp``, ``block_sparse_moe.experts``), none the layer's own."""
    bare = {names.model_type: [name for name in names.adapted if "." not in name]
            for names in PEFT_NAMES_BY_MODEL_TYPE.values()}
    assert {model_type: names for model_type, names in bare.items() if names} == {}
    assert shown_module_names(PEFT_NAMES_BY_MODEL_TYPE["llama"]) == (
        "model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.{gate,up,down}_proj, model.embed_tokens and "
        "lm_head")
