"""Calibration that holds the optimizer step of a setting that trained to its share, as the fit check does; names
given as a list (path forms too, and GPU types of your own) refused; a GPU name as near two catalogue names suggests
both; and a config's own RoPE scaling that the plan replaces is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import solver
from solver.calibrate import GAP
from solver.tables import load_catalog

MISTRAL_7B = {
    "architectures": ["MistralForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
    "max_position_embeddings": 32768, "model_type": "mistral", "num_attention_heads": 32, "num_hidden_layers": 32,
    "num_key_value_heads": 8, "rope_theta": 1000000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "vocab_size": 32768,
}
"""Mistral-7B-v0.3's config.json, as far as the planner reads it (7.25B parameters)."""


def mistral_cells(tmp_path: Path) -> tuple[Path, Path]:
    """A Mistral-7B config and three plausible cells of it on 4 L40S, which pulled the fixed overhead so far up
    (11.2 GiB) that the optimizer step of both cells that trained no longer fit: (config, cells file)."""
    config = tmp_path / "mistral" / "config.json"
    config.parent.mkdir()
    config.write_text(json.dumps(MISTRAL_7B), encoding="utf-8")
    cells = tmp_path / "mistral-cells.yaml"
    cells.write_text("gpu: L40S-48GB\nmemory_gb: 48\nsource: our L40S\ntables:\n  - gpus: 4\n    section: 4 x L40S\n"
                     "    models: [mistral]\n    rows:\n"
                     "      - {max_model_len: 8192, cells: {mistral: Env + SP=2}}\n"
                     "      - {max_model_len: 16384, cells: {mistral: Env + SP=4}}\n"
                     "      - {max_model_len: 32768, cells: {mistral: Env + Offload + SP=4}}\n", encoding="utf-8")
    return config, cells


def test_a_fit_keeps_the_optimizer_step_of_the_settings_that_trained_within_its_share(cli, tmp_path: Path):
    config, cells = mistral_cells(tmp_path)
    fitted = tmp_path / "fitted.yaml"
    status, _, err = cli("calibrate", "--cells", str(cells), "--model-config", str(config.parent), "--with-tables",
                         "--out", str(fitted))
    assert status == 0
    # Only the cell of Offload (whose step runs on the CPU) is left predicted the other way, by its negative evidence;
    # before, the two that trained were too, their optimizer step 44.9 GiB of the 44.1 it may take.
    assert ("the fit predicts 1 of your 3 cells the other way: mistral on 4 x L40S-48GB at 32768, cell "
            "'Env + Offload + SP=4': Env + Offload + SP=2 ran out of memory there, predicted 29.8 GiB of 43.2 usable"
            ) in err
    for length, sp in (("8192", "2"), ("16384", "4")):
        status, out, _ = cli("memory", "--model-config", str(config.parent), "--gpu", "L40S-48GB", "--gpus", "4",
                             "--len", length, "--sp", sp, "--env", "--memory-model", str(fitted), "--margin", "0",
                             "--json")
        verdict = json.loads(out)
        assert (status, verdict["fits"], verdict["step_fits"], verdict["step_binds"]) == (0, True, True, True)
        # the step held to the fit's gap below its share, as the activations' peak of a setting that trained is
        assert verdict["headroom_gib"] == pytest.approx(GAP * verdict["memory_gib"], abs=1e-3)


def test_a_list_of_model_paths_is_refused_as_a_list_of_names(cli):
    # The path form takes the last "/" part, which ran past the comma: Qwen3-14B was planned, without a word.
    listed = ("solve: error: model 'Qwen/Qwen3-8B,Qwen/Qwen3-14B' lists 2 (Qwen3-8B, Qwen3-14B) where one is asked "
              "for: give one, and ask for each in turn; solve map --model Qwen/Qwen3-8B,Qwen/Qwen3-14B compares "
              "several: the longest context of each per GPU budget\n")
    assert cli("--model", "Qwen/Qwen3-8B,Qwen/Qwen3-14B", "--len", "8k") == (2, "", listed)
    assert cli("--model", "Qwen/Qwen3-8B,14B", "--len", "8k")[::2] == (2, listed.replace("Qwen/Qwen3-14B", "14B"))
    # One path is one model, as before.
    assert cli("--model", "Qwen/Qwen3-14B", "--len", "8k", "--gpu", "a100")[0] == 0


def test_a_list_of_gpu_types_is_not_a_gpu_type_of_your_own(cli):
    listed = ("solve: error: GPU 'a100-40g,h100' lists 2 (A100-40GB, H100-80GB) where one is asked for: give one, "
              "and ask for each in turn\n")
    known = ("solve: error: --gpu a100-40g,h100 names A100-40GB (40.0 GiB), H100-80GB (79.6 GiB), GPU types whose "
             "memory is each known: drop --gpu-memory, or give your GPU type a name of its own\n")
    assert cli("--gpu", "a100-40g,h100", "--gpu-memory", "64", "--model", "8B", "--len", "8k") == (2, "", known)
    assert cli("memory", "--gpu", "a100-40g,h100", "--gpu-memory", "64", "--model", "8B", "--gpus", "2", "--len",
               "8k") == (2, "", listed.replace("solve:", "solve memory:"))
    with pytest.raises(solver.QueryError, match="lists 2 .* where one is asked for"):
        load_catalog().with_gpu_types([solver.described_gpu_type("a100-40g,h100", 64)])


@pytest.mark.parametrize(("name", "meant"), [
    ("L40-S", "L40S-48GB"), ("l40-s-48gb", "L40S-48GB"), ("a100-40-g", "A100-40GB"), ("h100-nvl94gb", "H100-NVL-94GB"),
    ("L40-X", "L40-48GB"), ("l-40", "L40-48GB"), ("a1000", "A100-80GB"), ("h20-141gb", None),
])
def test_a_gpu_name_that_is_a_catalogue_name_but_for_its_hyphens_is_taken_for_that_one(name: str, meant: str | None):
    # L40-S extends L40-48GB's alias l40 by a part, but it is L40S-48GB's l40s with a hyphen more: the nearer.
    assert load_catalog().meant_gpu_type(name) == meant


def test_gpu_l40_s_suggests_the_l40s(cli, tmp_path: Path):
    status, _, err = cli("--gpu", "L40-S", "--model", "8B", "--len", "8k")
    assert status == 2 and err.startswith("solve: error: unknown GPU 'L40-S' (did you mean L40S-48GB?); accepted: ")
    config, cells = mistral_cells(tmp_path)
    cells.write_text(cells.read_text(encoding="utf-8").replace("L40S-48GB", "L40-S"), encoding="utf-8")
    status, _, err = cli("calibrate", "--cells", str(cells), "--model-config", str(config.parent))
    assert status == 0 and (f"solve calibrate: note: {cells}: L40-S is not a GPU type of the catalogue, so its cells "
                            "make one of their own (did you mean L40S-48GB?)") in err


QWEN25_YARN = {
    "architectures": ["Qwen2ForCausalLM"], "hidden_size": 5120, "intermediate_size": 13824,
    "max_position_embeddings": 32768, "model_type": "qwen2", "num_attention_heads": 40, "num_hidden_layers": 48,
    "num_key_value_heads": 8,
    "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"},
    "tie_word_embeddings": False, "torch_dtype": "bfloat16", "vocab_size": 152064,
    "_name_or_path": "Qwen/Qwen2.5-14B-Instruct",
}
"""Qwen2.5-14B-Instruct's config.json with the YaRN its model card adds for long contexts (factor 4)."""


def test_a_plan_that_replaces_a_configs_own_yarn_factor_says_so(cli, tmp_path: Path):
    config = tmp_path / "qwen25" / "config.json"
    config.parent.mkdir()
    config.write_text(json.dumps(QWEN25_YARN), encoding="utf-8")
    assert solver.load_model_config(config).config_yarn_factor == 4.0
    status, out, err = cli("--model-config", str(config.parent), "--len", "64k", "--gpu", "a100")
    assert status == 0 and ("model.rope_scaling: {rope_type: yarn, factor: 2.0, original_max_position_embeddings: "
                            "32768, rope_theta: 10000}") in out  # the fixture gives no rope_theta: 10000
    assert err == ("solve: note: --gpu 'a100' is taken as A100-80GB; nodes of A100-40GB need that name (the memory "
                   "decides the plans)\n"
                   "solve: note: Qwen2.5-14B-Instruct's config.json gives YaRN factor 4.0 (rope_scaling); the plan "
                   "uses factor 2.0 in its place, from the length (max_model_len / 32768), as Trinity sets it, and the "
                   "rope_scaling it writes replaces the config's\n")
    # The same factor as the config's (131072 tokens), or none (within the native 32768): no note.
    for length in ("128k", "16k"):
        status, _, err = cli("--model-config", str(config.parent), "--len", length, "--gpu", "h20", "--gpus", "8",
                             "--json")
        assert status == 0 and "YaRN factor" not in err
    # A factor beside a plain RoPE ("default") is no YaRN factor: none to replace.
    config.write_text(json.dumps({**QWEN25_YARN, "rope_scaling": {"rope_type": "default", "factor": 4.0}}),
                      encoding="utf-8")
    assert (solver.load_model_config(config).rope_scaling, solver.load_model_config(config).config_yarn_factor) == (
        None, None)
    # A config without YaRN of its own gets none either.
    config.write_text(json.dumps({key: value for key, value in QWEN25_YARN.items() if key != "rope_scaling"}),
                      encoding="utf-8")
    assert solver.load_model_config(config).config_yarn_factor is None
    status, _, err = cli("--model-config", str(config.parent), "--len", "64k", "--gpu", "h20")
    assert status == 0 and "YaRN factor" not in err


def test_a_cluster_plan_that_replaces_a_configs_own_yarn_factor_says_so(cli, tmp_path: Path):
    config = tmp_path / "qwen25" / "config.json"
    config.parent.mkdir()
    config.write_text(json.dumps(QWEN25_YARN), encoding="utf-8")
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: a, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}\njobs:\n"
                     f"  - {{name: long, model_config: {config.parent}, max_model_len: 65536}}\n", encoding="utf-8")
    status, out, err = cli("cluster", str(fleet))
    assert status == 0 and "long" in out
    assert ("solve cluster: note: Qwen2.5-14B-Instruct's config.json gives YaRN factor 4.0 (rope_scaling); the plan "
            "uses factor 2.0 in its place, from the length (max_model_len / 32768), as Trinity sets it, and the "
            "rope_scaling it writes replaces the config's\n") in err
    # At 131072 tokens the plan's factor is the config's: no note, nor for another model's job beside it, whose plan
    # has a factor of its own (Qwen3-8B's 1.6 at 65536 tokens).
    fleet.write_text(fleet.read_text(encoding="utf-8").replace("65536", "131072").replace(
        "A100-80GB, nodes: 1", "H20-96GB, nodes: 2") + "  - {name: other, model: Qwen3-8B, max_model_len: 65536}\n",
        encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--json")
    placements = json.loads(out)["placements"]
    factors = {placement["job"]: placement["plan"]["rope_scaling_factor"] for placement in placements}
    assert (status, factors) == (0, {"long": 4.0, "other": 1.6})
    assert "YaRN factor" not in err
