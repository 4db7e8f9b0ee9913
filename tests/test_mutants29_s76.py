"""Tests that kill the mutants mutants29 (session 76) found alive in the code merged after 03:05: the mixture of
experts' LoRA caution and ``target_modules`` refusals (lorarest5), FSDP's largest gathered layer (persona45), an
auxiliary model's misspelt keys, a release's host need and smaller asks past a pool of no nodes (smallslips22), the
check line's --model and --model-config and a pool's rows in node order (smallslips23)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from test_clusterbuy_s60 import fleet_file
from test_lorarest5_s76 import FIX, MOE_NAMES, MOE_UNSAVED, _answer, _coded, _config
from test_mutants12_s67 import ROLLOUT_FLEET
from test_persona45_s76 import DEEPSEEK_V2_LITE
from test_smallslips22_s76 import EXPLORER_LINE, _with_keys

import solver
from solver.memory import largest_layer_parameters
from solver.tables import load_catalog
from solver.trinity import load_config_mapping, trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]
MOE = "Qwen3-30B-A3B"


COUNTED_FULL = ("with model.lora_configs refused (lora-configs-refused says why), the verdict and the plans count "
                "full fine-tuning, which holds more than a LoRA run: fix model.lora_configs and plan again to count "
                "the LoRA run, or remove it to train every parameter")
"""The line that says what a config's verdict and plans count where Trinity refuses its LoRA configs (s80)."""


@pytest.mark.parametrize("entry", [
    "{target_modules: all-linear}",  # no lora_rank: Trinity's default rank trains LoRA
    "{lora_rank: 16, path: /ckpt/adapter, target_modules: '.*norm'}",  # a loaded adapter: its targets are not used
    "{lora_rank: 16, target_modules: '.*mlp\\.gate'}",  # the router: no module of a dense model, taken on this one
])
def test_lora_on_a_mixture_of_experts_is_cautioned_whatever_its_targets_say_elsewhere(tmp_path: Path, cli: Cli,
                                                                                      entry: str) -> None:
    status, current = _answer(tmp_path, cli, _config(f"  lora_configs: [{entry}]\n", MOE))
    assert (status, current["refused"]) == (0, False)
    # a new adapter's regex: the short name PEFT makes of it, adapted in every layer (peftgap_s77)
    made = ("; peft made that set of '.*mlp\\.gate': gate, which it adapts in every layer, whatever layers the "
            "regular expression names")
    assert _coded(current, "lora-moe-config-unsaved") == [
        MOE_UNSAVED.replace("split)", f"split{made})") if "mlp" in entry else MOE_UNSAVED]


def test_two_lora_configs_on_a_mixture_of_experts_are_refused_alone(tmp_path: Path, cli: Cli) -> None:
    status, current = _answer(tmp_path, cli, _config("  lora_configs: [{lora_rank: 16}, {lora_rank: 8}]\n", MOE),
                              "--check")
    assert (status, current["config_problem_codes"]) == (1, ["lora-configs-refused", "lora-counted-as-full"])


def _refusal(subject: str, why: str, fix: str = FIX) -> str:
    """The refusal on Qwen3-30B-A3B's own names (peftgap_s77: the config's reading gave a dense model's too)."""
    return (f"model.lora_configs[0].{subject}, on {MOE} (a mixture of experts), {why}: peft matches it whole "
            f"(re.fullmatch) against each module's full name ({MOE_NAMES}), {fix}")


UNSUPPORTED = ("which PEFT cannot adapt (\"Target module ... is not supported\": it adapts linear layers and "
               "embeddings alone)")


@pytest.mark.parametrize(("pattern", "excluded", "said"), [
    # An exclusion that leaves what the target matches is no reason: the target's own refusal is.
    (".*norm", ".*q_proj", _refusal("target_modules '.*norm'", f"matches model.norm, {UNSUPPORTED}")),
    (".*mlp\\.experts", ".*q_proj", _refusal("target_modules '.*mlp\\.experts'",
                                             f"matches model.layers.N.mlp.experts, {UNSUPPORTED}")),
    # The router alone, which the exclusion leaves out: it matches a mixture of experts' module, not a dense one's.
    (".*mlp\\.gate", ".*gate", _refusal(
        "exclude_modules '.*gate'", ("leaves out every module target_modules '.*mlp\\.gate' matches (\"No modules were "
                                     "targeted for adaptation\")"), "and Trinity fails as it makes the adapter: "
        "exclude fewer, or remove it")),
])
def test_a_refused_target_with_an_exclusion_names_the_right_reason(tmp_path: Path, cli: Cli, pattern: str,
                                                                   excluded: str, said: str) -> None:
    lora = f"  lora_configs: [{{lora_rank: 16, target_modules: '{pattern}', exclude_modules: '{excluded}'}}]\n"
    status, current = _answer(tmp_path, cli, _config(lora, MOE), "--check")
    assert (status, current["config_problem_codes"], current["config_problems"]) == (
        1, ["lora-configs-refused", "lora-counted-as-full"], [said, COUNTED_FULL])


def _deepseek(tmp_path: Path, **changed: int) -> solver.Model:
    (tmp_path / "config.json").write_text(json.dumps({**DEEPSEEK_V2_LITE, **changed}))
    return solver.load_model_config(tmp_path)


ATTENTION = 2048 * 16 * 192 + 2048 * 576 + 512 + 512 * 16 * 256 + 16 * 128 * 2048 + 2 * 2048
EXPERT_LAYER = ATTENTION + 64 * (3 * 2048 * 1408 + 2048) + 3 * 2048 * 2 * 1408
"""DeepSeek-V2-Lite's expert layer (test_persona45_s76)."""


def test_the_largest_layer_is_the_expert_layer_with_several_dense_layers(tmp_path: Path) -> None:
    # Three dense layers (DeepSeek-V3's first_k_dense_replace): each one's shortfall is added back, not one's.
    model = _deepseek(tmp_path, first_k_dense_replace=3)
    assert largest_layer_parameters(model) == pytest.approx(EXPERT_LAYER + 2048 / 27)


def test_a_dense_layer_wider_than_an_expert_layer_never_lowers_the_count_below_the_mean(tmp_path: Path) -> None:
    model = _deepseek(tmp_path, intermediate_size=200_000)
    mean = (model.parameters_b * 1e9 - 2 * 102400 * 2048) / 27
    assert largest_layer_parameters(model) >= mean


def test_a_second_auxiliary_models_misspelt_key_is_looked_for_too() -> None:
    config = _with_keys("  auxiliary_models:\n  - model_path: /models/judge\n  - model_path: /models/critic\n"
                        "    tensor_paralel_size: 2\n", EXPLORER_LINE)
    said = [(problem.code.value, problem.words) for problem in trinity_config_problems(
        load_config_mapping(config, "config.yaml"), load_catalog().model("Qwen3-0.6B"), 6, version="0.6",
        environ={"FACTOR": "4"}) if "paralel" in problem.words]
    assert said == [("misspelt-key-refused", (
        "explorer.auxiliary_models[1].tensor_paralel_size: did you mean tensor_parallel_size? That key is unset, and "
        "read as such; Trinity refuses the config (it knows no such key)"))]


def test_a_fragment_for_another_release_is_judged_by_the_planners_rule_to_the_tenth() -> None:
    # Under 0.6 the plan made for 0.5.1 needs 71.2 GiB per node: a node of 71.0 GiB does not hold it, one of 71.2 does.
    # (Both load the untied Qwen3-8B on rank 0 alone on H100s, 0.5.1 by verl's rule; 0.5 without its patch loads it
    # on every rank, 264.5 GiB: s84.)
    for host_ram, holds in ((71.0, False), (71.2, True)):
        (answer,) = solver.plan("Qwen3-8B", gpu="h100", budget_gpus=8, max_model_len=32768, host_ram_gb=host_ram,
                                trinity_version="0.5.1")
        if holds:
            header = " ".join(line.removeprefix("# ") for line in solver.trinity_config(answer, version="0.6").split(
                "\n"))
            assert (f"host memory: 71.2 GiB per node while the model loads (rank 0 loading the model), within "
                    f"host_ram_gb of {host_ram:g} GiB ") in header
        else:
            with pytest.raises(solver.QueryError, match="needs 71.2 GiB of host memory per node under Trinity 0.6"):
                solver.trinity_config(answer, version="0.6")


def test_a_fragment_for_another_release_without_a_host_limit_is_made() -> None:
    # (0.5.1 and 0.6 load the untied Qwen3-8B on rank 0 alone on H100s: training's need is the larger)
    (answer,) = solver.plan("Qwen3-8B", gpu="h100", budget_gpus=8, max_model_len=32768, trinity_version="0.5.1",
                            offload=True)
    assert answer.best is not None and answer.best.offload
    assert "# host memory: 183.0 GiB per node for Offload; not checked: host_ram_gb not given" in (
        solver.trinity_config(answer, version="0.6").splitlines())


def test_smaller_asks_leave_out_a_pool_now_of_no_nodes(tmp_path: Path) -> None:
    # test_mutants12_s67's fleet with a pool out of service besides: no idle room there to fit a smaller ask in.
    fleet = {**ROLLOUT_FLEET, "pools": [*ROLLOUT_FLEET["pools"],
                                        {"name": "down", "gpu": "H20-96GB", "nodes": 0, "gpus_per_node": 8}]}
    (found,) = solver.place(fleet_file(fleet, tmp_path)).unplaced
    assert found.job == "j2" and found.reason.endswith(
        "; with rollout_gpus 0 (not 2; its explorer on GPUs outside the fleet) it would fit in node 0's 2 idle GPUs in "
        "pair (a trainer of 2 GPUs)")


def test_emit_trinity_from_a_config_of_an_unknown_model_path_checks_with_its_model(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("model:\n  model_path: /ckpt/my-finetune\n  max_model_len: 8192\nalgorithm:\n  algorithm_type: "
                      "grpo\ncluster:\n  node_num: 1\n  gpu_per_node: 8\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--model", "8B", "--gpu", "h100", "--emit", "trinity")
    assert status == 0 and ("#   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve --from-config CONFIG --check "
                            "--gpu H100-80GB --model 8B --critic none") in out.splitlines()


def test_cluster_table_rows_and_memory_notes_follow_the_nodes_not_the_names(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "ds.json").write_text((Path(__file__).parent / "data" / "hf-configs" / "DeepSeek-V2-Lite.json")
                                      .read_text(encoding="utf-8"), encoding="utf-8")
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: a, gpu: A100-80GB, nodes: 2, gpus_per_node: 8}\njobs:\n"
                     "  - {name: zz, model_config: ds.json, max_model_len: 8192, priority: 2}\n"
                     "  - {name: aa, model_config: ds.json, max_model_len: 8192}\n", encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet))
    rows = [line.split("│")[1:4] for line in out.splitlines() if line.startswith("│")]
    assert status == 0 and [[cell.strip() for cell in row] for row in rows] == [["0", "all", "zz"],
                                                                                ["1", "all", "aa"]]
    notes = [line for line in out.splitlines() if "(memory model)" in line]
    assert notes == [f"{job}: 49.7 GiB per GPU predicted, 23.9 GiB to spare (memory model)" for job in ("zz", "aa")]


def test_emit_dir_names_the_file_each_job_gave_for_its_model(cli: Cli, tmp_path: Path) -> None:
    # Two copies of one config.json (the model's name from the file's: ds): Fleet.model_config_of keeps each job's.
    for folder in ("m1", "m2"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "ds.json").write_text((Path(__file__).parent / "data" / "hf-configs" /
                                                    "DeepSeek-V2-Lite.json").read_text(encoding="utf-8"),
                                                   encoding="utf-8")
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: a, gpu: h100, nodes: 2, gpus_per_node: 8}\njobs:\n"
                     "  - {name: one, model_config: m1/ds.json, max_model_len: 8192}\n"
                     "  - {name: two, model_config: m2/ds.json, max_model_len: 8192}\n", encoding="utf-8")
    status, _, _ = cli("cluster", str(fleet), "--emit-dir", str(tmp_path / "out"))
    assert status == 0
    for job, folder in (("one", "m1"), ("two", "m2")):
        text = (tmp_path / "out" / f"{job}.yaml").read_text(encoding="utf-8")
        assert (f"#   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve --from-config CONFIG --check --gpu "
                f"H100-80GB --model-config {tmp_path}/{folder}/ds.json --critic none") in text.splitlines()
