"""`solver.api.config_query` for a config whose ``model.model_path`` names a model the catalogue lacks (a fine-tune
of a catalogue model, say) says how to give it before the long list of those accepted, as ``--from-config`` does:
`model=` a catalogue model of its shape, or its config.json in a `catalog=`."""

from __future__ import annotations

import pytest

import solver
from solver.api import config_query
from solver.trinity import read_trinity_config

FINE_TUNE = "model:\n  model_path: acme/Qwen3-8B-math-sft\n  max_model_len: 16384\ncluster:\n  gpu_per_node: 8\n"


def test_an_unknown_model_of_a_config_says_how_to_give_it() -> None:
    catalog = solver.load_catalog()
    config = read_trinity_config(FINE_TUNE, "sft.yaml", {})
    with pytest.raises(solver.QueryError) as refused:
        config_query(catalog, config, gpu="h100")
    said = str(refused.value)
    assert said.startswith(
        "model.model_path: unknown model 'Qwen3-8B-math-sft' (did you mean Qwen3-8B?): give model=M (a catalogue "
        "model of its shape, such as the one it was fine-tuned from), or its Hugging Face config.json: "
        "solver.load_model_config(PATH), with catalog=solver.load_catalog().with_model(that); accepted: "
        "Qwen3-0.6B/1.7B/8B/14B(-Base), ")
    assert "\n" not in said and said.count("accepted:") == 1
    (answer,) = solver.api.answer_query(config_query(catalog, config, gpu="h100", model="8B"), catalog)
    assert answer.model == "Qwen3-8B" and answer.best is not None
