"""The API keeps a Trinity config's own LoRA adapter (session 78): an answer to `config_query` of a config that sets
LoRA (`Query.config_lora`) gets a fragment and settings (`trinity_config`, `trinity_settings`) without
``model.lora_configs``, which a merge would put in place of the config's adapter (its ``target_modules``, ``name``,
``lora_alpha``), as ``solve --from-config``'s ``--emit trinity`` and ``--json``'s ``apply`` write none; a plan of
``lora_rank=`` alone, or of a config without LoRA, still writes the LoRA config that turns it on."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import yaml

import solver
from solver.api import answer_query, config_query, estimate_memory
from solver.memory import adapted_shapes, lora_parameters
from solver.tables import load_catalog
from solver.tables.model_config import load_model_config
from solver.tables.peft_names import LoraTargets
from solver.trinity import plan_settings, read_trinity_config, trinity_fragment

CATALOG = load_catalog()
HF_CONFIGS = Path(__file__).parent / "data" / "hf-configs"
UNREAD_CONFIGS = ("Phi-3-vision-128k-instruct", "Qwen2-VL-7B-Instruct", "Qwen-7B", "Nemotron-H-8B-Base-8K")
"""The test config.json files rft-solver refuses (multimodal, the first Qwen's, a hybrid)."""
QV_LORA = """model:
  model_path: Qwen/Qwen3-8B
  max_model_len: 16384
  lora_configs:
    - name: mine
      lora_rank: 64
      lora_alpha: 128
      target_modules: '.*\\.(q_proj|v_proj)'
cluster:
  node_num: 1
  gpu_per_node: 8
buffer:
  batch_size: 96
algorithm:
  algorithm_type: grpo
  repeat_times: 8
explorer:
  rollout_model:
    engine_num: 2
    tensor_parallel_size: 1
"""
NO_LORA = QV_LORA.replace("""  lora_configs:
    - name: mine
      lora_rank: 64
      lora_alpha: 128
      target_modules: '.*\\.(q_proj|v_proj)'
""", "")


def _api_answer(text: str, **keywords: object) -> solver.Answer:
    """The API's answer on an A100-80GB for the config `text`, read for Trinity 0.5.2."""
    config = read_trinity_config(text, "config.yaml", {}, "0.5")
    query = config_query(CATALOG, config, gpu="A100-80GB", trinity_version="0.5.2",
                         **keywords)  # type: ignore[arg-type]
    (answer,) = answer_query(query, CATALOG)
    return answer


def _cli_keys(cli: Callable[..., tuple[int, str, str]], tmp_path: Path, text: str) -> tuple[dict[str, object], str]:
    """``solve --from-config``'s ``--json`` ``apply`` keys and ``--emit trinity`` fragment for the config `text`."""
    path = tmp_path / "config.yaml"
    path.write_text(text)
    flags = ("--from-config", str(path), "--gpu", "A100-80GB", "--trinity-version", "0.5.2")
    status, out, err = cli(*flags, "--json")
    assert status == 0, err
    apply = json.loads(out)[0]["apply"]["config"]
    status, fragment, err = cli(*flags, "--emit", "trinity")
    assert status == 0, err
    return apply, fragment


def test_config_lora_kept_as_the_command_keeps_it(cli: Callable[..., tuple[int, str, str]], tmp_path: Path) -> None:
    answer = _api_answer(QV_LORA)
    assert answer.query is not None and answer.query.config_lora and answer.best is not None
    assert answer.best.lora_rank == 64
    settings = solver.trinity_settings(answer, version="0.5.2").config
    fragment = yaml.safe_load(solver.trinity_config(answer, version="0.5.2"))
    apply, emitted = _cli_keys(cli, tmp_path, QV_LORA)
    assert settings["model"] == fragment["model"] == apply["model"] == yaml.safe_load(emitted)["model"] == {
        "max_model_len": 16384}
    assert "lora_configs" not in solver.trinity_config(answer, version="0.5.2")


def test_lora_rank_over_a_config_lora_kept(cli: Callable[..., tuple[int, str, str]], tmp_path: Path) -> None:
    # rank 128 (rank 32 on the config's q and v, which it keeps since adapterkeep_s80, counts fewer parameters than
    # its rank-64 adapter: refused)
    answer = _api_answer(QV_LORA, lora_rank=128)
    assert answer.best is not None and answer.best.lora_rank == 128
    path = tmp_path / "config.yaml"
    path.write_text(QV_LORA)
    status, out, err = cli("--from-config", str(path), "--gpu", "A100-80GB", "--trinity-version", "0.5.2",
                           "--lora-rank", "128", "--json")
    assert status == 0, err
    assert solver.trinity_settings(answer).config["model"] == json.loads(out)[0]["apply"]["config"]["model"] == {
        "max_model_len": 16384}


def test_new_lora_written_without_a_config_lora() -> None:
    answer = _api_answer(NO_LORA, lora_rank=32)
    assert answer.query is not None and not answer.query.config_lora
    assert solver.trinity_settings(answer).config["model"] == {"max_model_len": 16384, "lora_configs": [
        {"lora_rank": 32}]}
    (planned,) = solver.plan("Qwen3-8B", gpu="A100-80GB", max_model_len=16384, budget_gpus=6, lora_rank=64,
                             rollout_gpus=2)
    assert solver.trinity_settings(planned).config["model"]["lora_configs"] == [{"lora_rank": 64}]


# The adapter of a target_modules regex is counted on the modules it adapts, where the model is known (--from-config,
# --check, config_query): through peft_target_match on the release's module names and adapted_shapes, one count.

QV = LoraTargets(".*\\.(q_proj|v_proj)")
EXPERTS_V4 = LoraTargets(".*mlp\\.experts\\.\\d+\\.(gate_proj|up_proj|down_proj)")
"""Qwen3-30B-A3B's routed experts by transformers 4's names (each expert an nn.ModuleList entry), Trinity 0.5.1's."""
EXPERTS_V5 = LoraTargets(".*mlp\\.experts\\.(gate_proj|up_proj|down_proj)")
"""The same by the v4 names PEFT converts transformers 5's fused experts with (Trinity 0.6's)."""


def _targeted(name: str, targets: LoraTargets | None) -> solver.Model:
    return CATALOG.with_lora_targets(name, targets).model(name)


def test_qwen3_8b_q_and_v_at_rank_64() -> None:
    # 64 x (4096 + 4096 (q_proj) + 4096 + 1024 (v_proj)) x 36 layers; all-linear's seven: 174,587,904
    assert 64 * (4096 + 4096 + 4096 + 1024) * 36 == 30_670_848
    assert lora_parameters(_targeted("Qwen3-8B", QV), 64) == 30_670_848
    assert lora_parameters(_targeted("Qwen3-8B", None), 64) == lora_parameters(CATALOG.model("Qwen3-8B"), 64) == (
        174_587_904)
    assert adapted_shapes(_targeted("Qwen3-8B", QV)) == ((4096, 4096, 36), (1024, 4096, 36))


def test_qwen3_30b_a3b_experts_alone_under_each_release() -> None:
    model_v4, model_v5 = _targeted("Qwen3-30B-A3B", EXPERTS_V4), _targeted("Qwen3-30B-A3B", EXPERTS_V5)
    # 0.5.1 (transformers 4): each of 128 experts' gate, up (768 x 2048) and down (2048 x 768) in 48 layers:
    # 64 x 3 x (768 + 2048) x 128 x 48
    assert lora_parameters(model_v4, 64, "separate") == 64 * 3 * 2816 * 128 * 48 == 3_321_888_768
    # 0.6 (transformers 5): PEFT's fused gate_up_proj (1536 x 2048) at twice the rank and down_proj, per expert:
    # 64 x (2 x (1536 + 2048) + (2048 + 768)) x 128 x 48
    assert lora_parameters(model_v5, 64, "fused") == 64 * (2 * 3584 + 2816) * 128 * 48 == 3_925_868_544
    # each regex matches no module of the other release's names; 0.5 (either) counts the larger
    assert (lora_parameters(model_v4, 64, "fused"), lora_parameters(model_v5, 64, "separate")) == (0, 0)
    assert lora_parameters(model_v4, 64, "either") == 3_321_888_768
    # all-linear's besides: the attention and the router, 64 x (6144 + 2560 + 2560 + 6144 + 2176) x 48 = 60,162,048
    assert lora_parameters(CATALOG.model("Qwen3-30B-A3B"), 64, "fused") == 3_925_868_544 + 60_162_048


def test_all_linear_by_module_names_is_the_structural_count() -> None:
    # every catalogue model and test config.json, each release layout: the regex all-linear counts module by module
    # exactly what adapted_shapes counts of all-linear's layout (so that a regex's count rests on the same shapes)
    models = [*CATALOG.models, *(load_model_config(path) for path in sorted(HF_CONFIGS.glob("*.json"))
                                 if path.stem not in UNREAD_CONFIGS)]
    assert len(models) >= 40
    for model in models:
        every = model.model_copy(update={"lora_targets": LoraTargets("all-linear")})
        for layout in ("fused", "separate", "either"):
            assert lora_parameters(every, 1, layout) == lora_parameters(model, 1, layout), (model.name, layout)


def test_the_config_gives_the_targets() -> None:
    config = read_trinity_config(QV_LORA, "config.yaml", {}, "0.5")
    assert (config.lora_rank, config.lora_targets) == (64, QV)
    excluded = QV_LORA.replace("target_modules: '.*\\.(q_proj|v_proj)'", "exclude_modules: '.*mlp.*'")
    assert read_trinity_config(excluded, "config.yaml", {}).lora_targets == LoraTargets("all-linear", ".*mlp.*")
    every = QV_LORA.replace("'.*\\.(q_proj|v_proj)'", "ALL-LINEAR")
    assert read_trinity_config(every, "config.yaml", {}).lora_targets is None
    query = config_query(CATALOG, read_trinity_config(QV_LORA, "config.yaml", {}), gpu="A100-80GB")
    assert query.lora_targets == QV
    assert config_query(CATALOG, read_trinity_config(QV_LORA, "config.yaml", {}), gpu="A100-80GB",
                        lora_rank=32).lora_targets == QV  # another rank: the config's targets, which it keeps
    # the config's own rank, as a fragment's check command gives it (--lora-rank 64): the config's adapter still
    assert config_query(CATALOG, read_trinity_config(QV_LORA, "config.yaml", {}), gpu="A100-80GB",
                        lora_rank=64).lora_targets == QV


def test_the_plans_count_the_regexs_adapter(cli: Callable[..., tuple[int, str, str]], tmp_path: Path) -> None:
    # Qwen3-8B, Env on 6 A100-80GB at 16384, rank 64: 52.43 GiB on q and v alone, 52.80 on all-linear's seven
    every = QV_LORA.replace("      target_modules: '.*\\.(q_proj|v_proj)'\n", "")
    answer, all_linear = _api_answer(QV_LORA), _api_answer(every)
    assert answer.best is not None and all_linear.best is not None
    assert (round(answer.best.memory_gb, 2), round(all_linear.best.memory_gb, 2)) == (52.43, 52.8)
    estimate = estimate_memory("Qwen3-8B", "A100-80GB", 6, 16384, sp=1, env=True, lora_rank=64,
                               trinity_version="0.5.2", catalog=CATALOG.with_lora_targets("Qwen3-8B", QV))
    assert round(estimate.total_gib, 2) == 52.43
    path = tmp_path / "config.yaml"
    path.write_text(QV_LORA)
    status, out, err = cli("--from-config", str(path), "--gpu", "A100-80GB", "--trinity-version", "0.5.2", "--check",
                           "--json")
    assert status == 0, err
    assert json.loads(out)[0]["plans"][0]["memory_gb"] == 52.43
    status, out, err = cli("--from-config", str(path), "--gpu", "A100-80GB", "--trinity-version", "0.5.2", "--check",
                           "--lora-rank", "64", "--json")  # as the fragment's check command gives it
    assert status == 0, err
    assert json.loads(out)[0]["plans"][0]["memory_gb"] == 52.43


def test_plan_settings_and_the_fragment_take_config_lora() -> None:
    (planned,) = solver.plan("Qwen3-8B", gpu="A100-80GB", max_model_len=16384, budget_gpus=6, lora_rank=64)
    assert planned.best is not None
    model = CATALOG.model("Qwen3-8B")
    assert plan_settings(planned.best, model).config["model"] == {"max_model_len": 16384,
                                                                  "lora_configs": [{"lora_rank": 64}]}
    assert plan_settings(planned.best, model, config_lora=True).config["model"] == {"max_model_len": 16384}
    assert "lora_configs" in trinity_fragment(planned.best, model)
    assert "lora_configs" not in trinity_fragment(planned.best, model, config_lora=True)
