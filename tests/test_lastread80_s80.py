"""Session 80's last read (lastread80): the LoRA options named one way (`OptionNames.lora_options`) wherever a
message names them, for the command's flags and the API's keywords; a config's adapted layers grouped by
`consecutive_runs`; the `either` release's two layouts taken from `LAYOUTS_TAKEN` alone."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

import solver
from solver.memory import adapter_experts, lora_parameters
from solver.rules import API_OPTIONS, COMMAND_OPTIONS, one_transformers_taken
from solver.tables import LAYOUTS_TAKEN
from solver.tables.peft_match import adapted_brief
from solver.trinity.config import _layers_words

CATALOG = solver.load_catalog()
QWEN3_8B = CATALOG.model("8B")


def test_the_lora_options_are_named_as_each_caller_writes_them() -> None:
    assert COMMAND_OPTIONS.lora_options == ("--lora-rank", "--lora-targets", "--lora-exclude")
    assert API_OPTIONS.lora_options == ("lora_rank", "lora_targets", "lora_exclude_modules")


def test_exclusions_without_lora_name_the_keywords_to_the_api() -> None:
    with pytest.raises(solver.QueryError) as error:
        solver.estimate_memory("8B", "h20", 4, 8192, lora_exclude_modules=r".*v_proj")
    assert str(error.value) == ("lora_exclude_modules '.*v_proj' without LoRA: the exclusions are a LoRA adapter's; "
                                "give a lora_rank above 0")


def test_exclusions_without_lora_name_the_flags_to_the_command(cli: Callable[..., tuple[int, str, str]]) -> None:
    status, out, err = cli("memory", "--model", "8B", "--gpu", "h20", "--gpus", "4", "--len", "8192",
                           "--lora-exclude", r".*v_proj")
    assert (status, out) == (2, "")
    assert err == ("solve memory: error: --lora-exclude '.*v_proj' without LoRA: the exclusions are a LoRA adapter's; "
                   "give a --lora-rank above 0\n")


def test_dpo_without_reference_names_the_rank_option_each_way(cli: Callable[..., tuple[int, str, str]]) -> None:
    with pytest.raises(solver.QueryError) as error:
        solver.plan("8B", gpu="h20", max_model_len=8192, dpo=True, reference_model=False)
    assert str(error.value) == ("dpo=True without LoRA builds a reference model (Trinity's dpo algorithm uses one): "
                                "drop reference_model=False, or give lora_rank")
    status, _, err = cli("--model", "8B", "--gpu", "h20", "--len", "8192", "--dpo", "--no-reference")
    assert status == 2
    assert err == ("solve: error: --dpo without LoRA builds a reference model (Trinity's dpo algorithm uses one): "
                   "drop --no-reference, or give --lora-rank\n")


def test_a_rank_vllm_refuses_is_named_as_the_keyword() -> None:
    with pytest.raises(solver.QueryError) as error:
        solver.plan("8B", gpu="h20", max_model_len=8192, lora_rank=7, rollout_gpus=2)
    assert str(error.value).startswith("lora_rank=7, which Trinity gives the rollout's vLLM as its max_lora_rank: ")
    assert str(error.value).endswith(": give one of those, or rollout_gpus=0 for a trainer alone")


@pytest.mark.parametrize(("pattern", "excluded", "words"), [
    (r".*layers\.(0|2|4|5|6|7)\..*q_proj", None, " in layers 0, 2 and 4-7"),
    (r".*layers\.5\..*q_proj", None, " in layer 5"),
    (r".*layers\.([1-9]|[12][0-9]|3[0-5])\..*q_proj", None, " in layers 1-35"),
    (r".*q_proj", r".*layers\.(1|3)\..*", " in layers 0, 2 and 4-35"),
    (r".*q_proj", None, ""),
])
def test_a_configs_adapted_layers_are_grouped_in_runs(pattern: str, excluded: str | None, words: str) -> None:
    assert QWEN3_8B.num_layers == 36
    assert _layers_words(pattern, excluded, QWEN3_8B.peft_names_of("fused"), QWEN3_8B) == words
    assert _layers_words(pattern, excluded, QWEN3_8B.peft_names_of("fused"), None) == ""


def test_the_either_release_weighs_both_layouts_of_layouts_taken() -> None:
    assert LAYOUTS_TAKEN["either"] == ("fused", "separate")
    model = CATALOG.model("Qwen3-30B-A3B")  # PEFT converts its experts on transformers 5: fused adapts more
    assert lora_parameters(model, 1, "fused") > lora_parameters(model, 1, "separate")
    assert adapter_experts(model, "either") == "fused"
    assert adapter_experts(model, "separate") == "separate"
    assert one_transformers_taken(r".*q_proj", None, QWEN3_8B, "either") is None


def test_a_maps_exclusions_are_checked_on_every_row_before_any_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    # the targets alone are taken on both rows; less --lora-exclude, Qwen3-8B keeps none of them (before: refused by
    # its own row's query, after the 30B row's solves, with no word of the row that counts them)
    def no_solve(*_: object, **__: object) -> None:
        raise AssertionError("a map refused on a row solved before refusing")

    monkeypatch.setattr("solver.maps.best_plan", no_solve)
    with pytest.raises(solver.QueryError) as error:
        solver.map_plans(gpu="h100", model=["30B-A3B", "8B"], lora_rank=16, lora_targets=r".*\.(q_proj|gate)",
                         lora_exclude_modules=r".*q_proj")
    assert str(error.value) == (
        "lora_exclude_modules '.*q_proj', on Qwen3-8B, leaves out every module lora_targets '.*\\.(q_proj|gate)' "
        "matches (\"No modules were targeted for adaptation\"): exclude fewer, or remove it; of the map's 2 models, "
        "they are counted on Qwen3-30B-A3B alone: map those (model=['Qwen3-30B-A3B'])")


def test_a_maps_exclusions_alone_refused_on_every_row_say_so(cli: Callable[..., tuple[int, str, str]]) -> None:
    status, out, err = cli("map", "--model", "8B,30B-A3B", "--gpu", "h100", "--lora-rank", "16", "--lora-targets",
                           r".*\.(q_proj|experts\..*)", "--lora-exclude", ".*q_proj")
    assert (status, out) == (2, "")
    assert err.startswith("solve map: error: --lora-exclude '.*q_proj', on Qwen3-8B, leaves out every module "
                          "--lora-targets '.*\\.(q_proj|experts\\..*)' matches")
    # Qwen3-30B-A3B refuses the targets (its experts' act_fn): no row counts them, where before the map was sent to
    # Qwen3-8B alone, which refuses them too
    assert err.endswith("exclude fewer, or remove it; the map's other model refuses them too\n")


def test_a_left_out_jobs_reason_names_its_adapters_exclusions(tmp_path: Path) -> None:
    # as the cluster table's training column and the map's title say it (adapted_brief); before: "on all-linear"
    pools = [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 2, "host_ram_gb": 100}]
    job = {"name": "big", "model": "Qwen3-8B", "max_model_len": 65536, "lora_rank": 256,
           "lora_exclude_modules": r".*\.v_proj"}
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump({"pools": pools, "jobs": [job]}))
    (unplaced,) = solver.place(tmp_path / "cluster.yaml").unplaced
    assert unplaced.reason.startswith(
        "a100, with its LoRA adapter on all-linear less v_proj counted: 65536 tokens is beyond what the tables and the "
        "memory model's estimates allow for Qwen3-8B on A100-80GB within 2 GPUs")


def test_an_adapter_is_worded_one_way() -> None:
    assert adapted_brief(None, None) == ""
    assert adapted_brief(r".*\.(q_proj|v_proj)", None) == " on q_proj,v_proj"
    assert adapted_brief("all-linear", r".*\.layers\.0\..*") == " on all-linear less .*\\.layers\\.0\\..*"
    assert adapted_brief(None, r".*\.v_proj") == " less v_proj"
