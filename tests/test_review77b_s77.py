"""Session 77's review of its later merges (review77b): a plan made for Trinity 0.5.1, whose transformers 4 holds a
mixture of experts' routed experts separate (`solver.tables.counted_expert_layout`), keeps that layout where its
fragment, --write's note and the cluster's configs count its host memory for the minor version 0.5 they are written
for (`Plan.expert_layout`, `solver.trinity.plan_keys.for_release`), and their check command names 0.5.1
(`solver.tables.counted_release`): before, they counted 0.5's whole experts, a larger figure than the plan was held
to, and ``solve cluster --trinity-version 0.5.1 --emit-dir`` refused the placement it had just made."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from test_peftgap_s77 import _trinity
from test_ropetype_s77 import _phi3_4k, phi3_untrained

import solver
from solver.memory import shown_host_need
from solver.query import ConfigProblemCode
from solver.tables import counted_release, load_catalog
from solver.trinity import patch_trinity_config
from solver.trinity.checks import lora_targets_problem

Cli = Callable[..., tuple[int, str, str]]

MIXTRAL_CONFIG = Path(__file__).parent / "data" / "hf-configs" / "Mixtral-8x7B-v0.1.json"
QWEN3_30B_A3B = ("--model", "30B-A3B", "--gpu", "h100", "--gpus", "6", "--exact", "--offload", "--len", "8192",
                 "--host-ram", "700")
# Qwen3-30B-A3B with Offload on 6 H100s, one node: 517.3 GiB of host memory with 0.5.1's separate experts, and with
# 0.5's whole ones, as verl 0.7 places their blocks (pinnedplace, s79: 787.0 by rows, each GPU's 22 of 128 experts).
SEPARATE_HOST = "host memory: 517.3 GiB per node for Offload, within --host-ram 700 GiB"


@pytest.mark.parametrize(("version", "experts", "written"), [
    ("0.5", "separate", "0.5.1"), ("0.5", "fused", "0.5"), ("0.6", "fused", "0.6"), ("0.6", "separate", "0.6"),
    (None, "fused", None), (None, "separate", None),
])
def test_the_release_written_names_the_patch_that_holds_the_experts_separate(
        version: str | None, experts: str, written: str | None) -> None:
    assert counted_release(version, experts) == written  # type: ignore[arg-type]


def test_the_fragment_of_a_0_5_1_plan_counts_its_separate_experts(cli: Cli) -> None:
    status, out, err = cli(*QWEN3_30B_A3B, "--trinity-version", "0.5.1")
    assert status == 0, err
    assert "host memory    517.3 GiB per node for Offload, within --host-ram 700 GiB" in out
    status, out, err = cli(*QWEN3_30B_A3B, "--trinity-version", "0.5.1", "--emit", "trinity")
    assert status == 0, err
    assert f"# {SEPARATE_HOST}\n" in out  # was 787.0, "within --host-ram 700 GiB"
    assert out.count("--trinity-version 0.5.1\n") == 1 and "--trinity-version 0.5\n" not in out
    # 0.5 allows transformers 5: whole experts, whose blocks verl 0.7 places by their 1536 and 768 (which 6 divide):
    # as much host memory while training, its fragment named for 0.5. But 0.5 named alone may be 0.5.2, which loads
    # the model on every rank: 6 x 4 bytes x 30.5e9 beside the pinned shards at start-up, past 700 GiB.
    status, out, err = cli(*QWEN3_30B_A3B, "--trinity-version", "0.5", "--emit", "trinity")
    assert status == 1 and ("without --host-ram, Env + Offload on 6 GPUs trains it (8192 tokens), and with Offload it "
                            "needs 855.8 GiB of host memory per node") in err
    status, out, err = cli(*QWEN3_30B_A3B[:-1], "900", "--trinity-version", "0.5", "--emit", "trinity")
    assert status == 0, err
    assert ("# host memory: 855.8 GiB per node for Offload (at start-up, every rank loading the model; 517.3\n"
            "# while training), within --host-ram 900 GiB\n") in out and out.count("--trinity-version 0.5\n") == 1


def test_the_api_fragment_and_patch_count_the_plans_layout_for_0_5_alone() -> None:
    answer = solver.plan("Qwen3-30B-A3B", gpu="h100", budget_gpus=6, max_model_len=8192, exact=True, offload=True,
                         host_ram_gb=700.0, trinity_version="0.5.1")[0]
    assert answer.best is not None and answer.best.expert_layout == "separate"
    assert answer.best.host_memory_gb == 517.3
    assert "# host memory: 517.3 GiB per node for Offload, within host_ram_gb of 700 GiB\n" in solver.trinity_config(
        answer)
    assert "# host memory: 517.3 GiB" in solver.trinity_config(answer, version="0.5.1")
    # For 0.6, transformers 5's whole experts: the plan's figure under that release, not 0.5.1's.
    model = load_catalog().model("Qwen3-30B-A3B")
    fused_06 = shown_host_need(model, 6, 6, True, "0.6", True, 0, None, "fused")
    assert fused_06 > 700
    with pytest.raises(solver.QueryError, match=r"^the answer's plan was counted for Trinity 0\.5\.1 \(routed experts "
                                                r"counted separate, .*: its memory figures do not hold for Trinity "
                                                r"0\.6, "):  # its host memory refused before planjson (s78)
        solver.trinity_config(answer, version="0.6")
    patched = patch_trinity_config("model:\n  model_path: Qwen/Qwen3-30B-A3B\n", answer.best, model, version="0.5",
                                   host_ram_gb=700.0)
    assert "# host memory: 517.3 GiB per node for Offload, within host_ram_gb of 700 GiB" in patched


def test_a_cluster_placed_under_0_5_1_writes_its_configs(cli: Cli, tmp_path: Path) -> None:
    # Mixtral on 32 A100s, 8 a node: 198.8 GiB of host memory a node under 0.5.1, 270.8 with 0.5's whole experts,
    # past the pool's 250: the configs once refused the placement just made ("plan it again with
    # trinity_version='0.5'"), exit 2.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: a100s, gpu: a100-80gb, nodes: 4, gpus_per_node: 8, host_ram_gb: 250}\n"
                     f"jobs:\n  - {{name: mix, model_config: {MIXTRAL_CONFIG}, max_model_len: 16384}}\n",
                     encoding="utf-8")
    status, _, err = cli("cluster", str(fleet), "--trinity-version", "0.5.1", "--emit-dir", str(tmp_path / "out"))
    assert status == 0, err
    (config,) = (tmp_path / "out").iterdir()
    text = config.read_text(encoding="utf-8")
    # 0.5.1 keeps verl's rule: rank 0 alone loads this untied model, which the line now says.
    assert ("# host memory: 198.8 GiB per node while the model loads (rank 0 loading the model), within the\n"
            "# pool's host_ram_gb of 250 GiB\n") in text
    assert text.count(" --trinity-version 0.5.1\n") == 1


EMPTY_TARGETS_REFUSED = (
    "model.lora_configs[0].target_modules '', on Qwen3-8B (a dense model), matches no module: peft matches it whole "
    "(re.fullmatch) against each module's full name (model.layers.N.self_attn.{q,k,v,o}_proj, "
    "model.layers.N.mlp.{gate,up,down}_proj, model.embed_tokens and lm_head), and Trinity fails as it makes the "
    "adapter: give all-linear, or a regular expression that matches whole names, such as .*\\.(q_proj|v_proj)")
"""An empty ``target_modules``: Trinity passes it to PEFT's ``LoraConfig`` as it is (``utils/lora_utils.py:35`` in
0.6.0), which matches it whole against no name and raises "No `target_modules` passed but also no `target_parameters`
found" (``tuners/tuners_utils.py:1058`` in peft 0.21.2); it is no ``all-linear``, as it was taken before."""


def test_an_empty_target_modules_is_refused_not_read_as_all_linear(cli: Cli, tmp_path: Path) -> None:
    model = load_catalog().model("Qwen3-8B")
    problem = lora_targets_problem("", None, model)
    assert problem is not None
    assert (problem.code, problem.words) == (ConfigProblemCode.LORA_CONFIGS_REFUSED, EMPTY_TARGETS_REFUSED)
    assert lora_targets_problem(None, None, model) is None  # unset: Trinity's all-linear
    config = _trinity(tmp_path, "Qwen/Qwen3-8B", "{lora_rank: 16, target_modules: ''}")
    status, out, err = cli("--from-config", str(config), "--check", "--gpu", "h100", "--json")
    assert (status, err) == (1, "")
    current = json.loads(out)[0]["current"]
    assert EMPTY_TARGETS_REFUSED in current["config_problems"]
    assert "lora-configs-refused" in current["config_problem_codes"]


VLLM_HANDED = "as Trinity hands vLLM the mapping as the model's rope_parameters, past transformers' filling-in"
BEFORE_012 = ("(with vLLM 0.12 or later, every one 0.5.2 takes; a vLLM before 0.12, as 0.5.0 also takes, fills it in)")


@pytest.mark.parametrize(("rope", "named", "lacks", "refused"), [
    ("{rope_type: yarn, factor: 4.0}", "rope_type", (
        "model.rope_scaling: missing original_max_position_embeddings: vLLM 0.19.1 refuses rope_type yarn without it, "
        f"and fails as it starts, {VLLM_HANDED}; add original_max_position_embeddings: 4096"),
     "rope-scaling-unbuilt-refused"),
    ("{type: yarn, factor: 4.0, original_max_position_embeddings: 4096}", "type", (
        "model.rope_scaling names its type in type alone ('yarn'): the rollout's vLLM reads rope_type and fails as it "
        f"starts (KeyError 'rope_type'), {VLLM_HANDED}; add rope_type: yarn"), "rope-type-missing-refused"),
])
@pytest.mark.parametrize("release", ["0.5", "0.6"])
def test_a_yarn_given_to_phi3_is_cautioned_and_told_the_key_vllm_needs(
        cli: Cli, tmp_path: Path, rope: str, named: str, lacks: str, refused: str, release: str) -> None:
    # A YaRN without original_max_position_embeddings, or named by type alone, was told to add the key, which led to
    # the Phi-3 refusal (review77b); phi3rope (s78): the trainer and vLLM build a Phi-3's yarn as given (a caution),
    # so the key vLLM needs is asked for again, refused on 0.6 and a but: line on 0.5 as for any model.
    model = _phi3_4k(tmp_path)
    config, written = tmp_path / "trinity.yaml", tmp_path / "written.yaml"
    config.write_text("model:\n  model_path: /nowhere/Phi-3-mini-4k-instruct\n  max_model_len: 16384\n"
                      f"  rope_scaling: {rope}\n"
                      "algorithm: {algorithm_type: grpo}\ncluster:\n  node_num: 1\n  gpu_per_node: 8\n"
                      "explorer:\n  rollout_model:\n    engine_num: 4\n", encoding="utf-8")
    argv = ("--model-config", str(model), "--gpu", "h100", "--trinity-version", release)
    status, out, _ = cli("--from-config", str(config), *argv, "--check", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["config_problem_codes"]) == (
        (0, ["rope-scaling-untrained", "rope-scaling-wrong"]) if release == "0.5" else
        (1, ["rope-scaling-untrained", refused]))
    assert current["config_problems"] == [phi3_untrained(f"{named} yarn"),
                                          f"{lacks} {BEFORE_012}" if release == "0.5" else lacks]
    status, _, err = cli("--from-config", str(config), *argv, "--write", str(written))
    assert status == 0, err
    assert "rope_scaling" not in written.read_text(encoding="utf-8")
