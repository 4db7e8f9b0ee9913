"""Session 80, fragcheck4: configs written at main's head (``--emit trinity``, ``--write``, ``solve cluster
--emit-dir``, the API's fragments read back from JSON) loaded by Trinity 0.5.1's, 0.5.2's and 0.6.0's own config code,
and the PEFT adapter Trinity then builds from their ``model.lora_configs`` (``create_dummy_lora``, ``fsdp_workers``:
``LoraConfig(task_type=CAUSAL_LM, r, lora_alpha, target_modules, exclude_modules, bias='none')``) built with peft
0.21.2 on the model made on the meta device, under transformers 5.12.1 and 4.57.6 (outside the tests: no Trinity or
PEFT import here). Every config loaded; each ``lora_configs`` entry held Trinity's ``LoRAConfig`` fields alone, typed
as it types them, and PEFT's adapter held the parameters rft-solver counts, pinned here."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

import solver
from solver.memory import lora_parameters
from solver.tables import ExpertLayout
from solver.tables.peft_names import LoraTargets
from solver.trinity import trinity_fragment

Cli = Callable[..., tuple[int, str, str]]

CATALOG = solver.load_catalog()
LORA_FIELDS = {"name": str, "path": str, "base_model_name": str, "lora_rank": int, "lora_alpha": int,
               "lora_dtype": str, "target_modules": str, "exclude_modules": str}
"""Trinity's ``LoRAConfig`` (``common/config.py``, the same fields in 0.5.1, 0.5.2 and 0.6.0) less ``is_dummy``, which
Trinity sets: each field's type (``Optional[str]`` for ``name``, ``path``, ``base_model_name``, ``exclude_modules``)."""


def _lora_configs(text: str) -> list[dict[str, object]]:
    """The ``model.lora_configs`` of a written config or fragment, each entry's fields checked against
    `LORA_FIELDS`."""
    entries = yaml.safe_load(text)["model"]["lora_configs"]
    for entry in entries:
        assert {key: isinstance(value, LORA_FIELDS[key]) for key, value in entry.items()} == dict.fromkeys(entry, True)
    return list(entries)


def test_a_stray_comma_is_written_as_the_regex_trinity_takes(cli: Cli) -> None:
    status, out, _ = cli("--model", "8B", "--gpu", "h100", "--gpus", "4", "--len", "16k", "--lora-rank", "64",
                         "--lora-targets", "q_proj,", "--trinity-version", "0.6", "--emit", "trinity")
    assert (status, _lora_configs(out)) == (0, [{"lora_rank": 64, "target_modules": ".*\\.q_proj"}])


def test_a_cluster_jobs_targets_and_exclusions_are_written_as_trinity_fields(cli: Cli, tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: h100, gpu: H100, nodes: 1, gpus_per_node: 8, host_ram_gb: 2048}\njobs:\n"
                     "  - {name: qv, model: 8B, max_model_len: 16k, rollout_gpus: 2, lora_rank: 64,"
                     " lora_targets: 'q_proj,v_proj', lora_exclude_modules: '.*\\.v_proj'}\n")
    status, _, _ = cli("cluster", str(fleet), "--time-limit", "10", "--trinity-version", "0.5.2",
                       "--emit-dir", str(tmp_path / "emit"))
    assert (status, _lora_configs((tmp_path / "emit" / "qv.yaml").read_text())) == (0, [
        {"lora_rank": 64, "target_modules": ".*\\.(q_proj|v_proj)", "exclude_modules": ".*\\.v_proj"}])


def test_a_fragment_read_back_from_json_writes_the_same_trinity_fields() -> None:
    (answer,) = solver.plan("Qwen3-30B-A3B", gpu="h100", budget_gpus=4, max_model_len=16384, lora_rank=64,
                            lora_targets="q_proj,", trinity_version="0.5.1", rollout_gpus=2)
    read_back = solver.Answer.model_validate_json(json.dumps(answer.as_json()))
    assert read_back.best is not None
    fragment = trinity_fragment(read_back.best, CATALOG.model(read_back.model), 2, gpu=read_back.gpu)
    assert _lora_configs(fragment) == [{"lora_rank": 64, "target_modules": ".*\\.q_proj"}]


@pytest.mark.parametrize(("model", "rank", "targets", "layout", "peft"), [
    # (model, rank, target_modules less exclude_modules, the release's layout, peft 0.21.2's adapter parameters)
    ("Qwen3-8B", 64, (".*\\.q_proj", None), "fused", 18_874_368),
    ("Qwen3-8B", 64, (".*\\.(q_proj|v_proj)", ".*\\.v_proj"), "fused", 18_874_368),
    ("Qwen3-8B", 32, None, "fused", 87_293_952),
    ("Qwen3-4B", 16, (".*\\.q_proj", None), "fused", 3_833_856),
    ("Qwen3-14B", 32, ("all-linear", ".*\\.mlp\\..*"), "fused", 41_943_040),
    ("Qwen3-30B-A3B", 64, None, "fused", 3_986_030_592),
    ("Qwen3-30B-A3B", 64, (".*\\.(q_proj|k_proj|v_proj|o_proj)", ".*\\.k_proj"), "fused", 45_613_056),
    ("Qwen3-30B-A3B", 64, (".*\\.(q_proj|v_proj)", None), "fused", 26_738_688),
    # all-linear's router and routed experts under transformers 5: parameters PEFT adapts whatever it excludes
    ("Qwen3-30B-A3B", 16, ("all-linear", ".*\\.mlp\\..*"), "fused", 996_507_648),
    ("Qwen3-30B-A3B", 16, ("all-linear", ".*"), "fused", 983_138_304),
    ("Qwen3-30B-A3B", 16, ("all-linear", ".*\\.mlp\\..*"), "separate", 13_369_344),  # transformers 4's modules
    ("Qwen3-30B-A3B", 16, (".*experts\\.[0-3]\\..*_proj", None), "separate", 25_952_256),
    ("Qwen3-30B-A3B", 64, (".*\\.q_proj", None), "separate", 18_874_368),
    ("Qwen3-30B-A3B", 64, None, "separate", 3_382_050_816),
    ("Qwen3-30B-A3B", 32, (".*\\.(q_proj|k_proj|v_proj|o_proj)", ".*\\.(k_proj|v_proj)"), "separate", 18_874_368),
])
def test_the_adapter_counted_holds_the_parameters_peft_makes(model: str, rank: int, targets: tuple[str, str | None]
                                                             | None, layout: ExpertLayout, peft: int) -> None:
    counted = CATALOG.with_lora_targets(model, None if targets is None else LoraTargets(*targets)).model(model)
    assert lora_parameters(counted, rank, layout) == peft


def test_all_linear_less_every_module_still_adapts_a_converted_mixture_of_experts(cli: Cli) -> None:
    # peft 0.21.2 adds all-linear's router and routed experts as parameters, which exclude_modules does not reach:
    # 983,138,304 parameters at rank 16 under transformers 5, where transformers 4's modules are all excluded.
    runs = {version: cli("--model", "30B-A3B", "--gpu", "h100", "--gpus", "4", "--len", "16k", "--lora-rank", "16",
                         "--lora-exclude", ".*", "--trinity-version", version, "--emit", "trinity")
            for version in ("0.6", "0.5.1")}
    assert (runs["0.6"][0], _lora_configs(runs["0.6"][1])) == (0, [
        {"lora_rank": 16, "target_modules": "all-linear", "exclude_modules": ".*"}])
    refusal = ("solve: error: --lora-exclude '.*', on Qwen3-30B-A3B, leaves out every module all-linear matches "
               "(\"All modules were excluded\"): exclude fewer, or remove it\n")
    assert runs["0.5.1"][0::2] == (2, refusal)
