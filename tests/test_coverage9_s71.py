"""Session 71's changes to solver/ that no test ran (coverage9): the least priority's solve that its work does not
prove (the words fall back to a priority that places the job), and a per-layer-type RoPE scaling with a layer type
whose scaling is null (skipped, as vLLM skips it), or neither an object nor null (refused, naming its layer type)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from ortools.sat.python import cp_model
from test_clusterkeep2_s71 import A100_NODES, FOUR_AND_ONE

import solver.cluster.reasons
from solver.tables import TableError, load_model_config
from solver.tables.text import brief

Cli = Callable[..., tuple[int, str, str]]
HF_CONFIGS = Path(__file__).parent / "data" / "hf-configs"


def test_a_least_priority_its_work_does_not_prove_is_a_priority_that_places_it(cli: Cli, tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch):
    # Some work, far too little to prove the most the other jobs hold with x placed (3 is proven with the default
    # share): the solve runs and stops unproven, and the words say the holders' priority plus one, which surely
    # places it; the wall clock stopped nothing.
    statuses: list[Any] = []
    checked = solver.cluster.reasons.checked

    def recorded(cp_solver: cp_model.CpSolver, model: cp_model.CpModel, status: Any) -> Any:
        statuses.append(checked(cp_solver, model, status))
        return statuses[-1]

    monkeypatch.setattr(solver.cluster.reasons, "checked", recorded)
    monkeypatch.setattr(solver.cluster.reasons, "LEAST_PRIORITY_SHARE", 1e-9)
    path = tmp_path / "least.yaml"
    path.write_text(yaml.safe_dump({"pools": [{**A100_NODES, "host_ram_gb": None}], "jobs": FOUR_AND_ONE}),
                    encoding="utf-8")
    status, out, _ = cli("cluster", str(path), "--json")
    result = json.loads(out)
    assert (status, result["objective"], result["wall_clock_stopped"]) == (1, 8, [])
    assert len(statuses) == 1 and statuses[0] != cp_model.OPTIMAL
    assert result["unplaced"][0]["reason"].endswith("a, b (priority 4 together) hold the room it needs: priority 5 "
                                                    "would place it")


def test_a_layer_type_with_a_null_rope_scaling_is_skipped(tmp_path: Path):
    # transformers 5's per-layer-type scalings (Gemma-3's): a null one is not checked (it has no rope_type to check),
    # nor counted in vLLM's length, which takes the full-attention layers' linear x2 over 40960 positions.
    config = json.loads((HF_CONFIGS / "Qwen3-8B.json").read_text(encoding="utf-8"))
    config["rope_parameters"] = {"full_attention": {"rope_type": "linear", "factor": 2.0}, "sliding_attention": None}
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    model = load_model_config(tmp_path / "config.json")
    assert (model.rope_scaling, model.native_context, model.vllm_context) == ("linear", 40960, 81920)


@pytest.mark.parametrize("sliding", ["x", 2.0, ["yarn"]])
def test_a_layer_type_whose_rope_scaling_is_no_object_is_refused_in_one_line(tmp_path: Path, sliding: object):
    # A layer type's scaling is an object or null, as the whole scaling is: anything else names its layer type.
    config = json.loads((HF_CONFIGS / "Qwen3-8B.json").read_text(encoding="utf-8"))
    config["rope_parameters"] = {"full_attention": {"rope_type": "linear", "factor": 2.0}, "sliding_attention": sliding}
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(TableError) as raised:
        load_model_config(tmp_path / "config.json")
    assert str(raised.value) == (f"{tmp_path / 'config.json'}: rope_parameters.sliding_attention: expected an object "
                                 f"such as {{\"rope_type\": \"yarn\", ...}} or null, got {brief(sliding)}")


def test_a_full_attention_scaling_transformers_refuses_is_refused_as_the_models_own(tmp_path: Path):
    # The full-attention layers' scaling is the model's: a rope_type transformers refuses is refused as the whole
    # scaling's would be.
    config = json.loads((HF_CONFIGS / "Qwen3-8B.json").read_text(encoding="utf-8"))
    config["rope_parameters"] = {"full_attention": {"rope_type": "stretchy", "factor": 2.0}, "sliding_attention": None}
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(TableError, match=r"rope_parameters.*'stretchy'"):
        load_model_config(tmp_path / "config.json")
