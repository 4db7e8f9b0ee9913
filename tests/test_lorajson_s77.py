"""LoRA on a mixture of experts whose adapter config PEFT converts, as data (lorajson, session 77): a plan's
``lora-moe-config-unsaved`` caution code in ``solve --json``, ``solve cluster --json`` and the API's answers, its words
the LoRA key comment's, worded per Trinity release (0.6.0 requires transformers 5.12.1 or later; 0.5.0 allows
transformers 5, 0.5.2 up to 5.3.0, 0.5.1 pins it below 5)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import fragment_comment

import solver
from solver.results import CautionCode
from solver.rules import transformers_5_words

Cli = Callable[..., tuple[int, str, str]]
HF_CONFIGS = Path(__file__).parent / "data" / "hf-configs"
CODE = "lora-moe-config-unsaved"
WHEN_06 = "with transformers 5 (Trinity 0.6 requires 5.12.1 or later)"
WHEN_05 = ("with transformers 5 (Trinity 0.5.0 allows it, 0.5.2 up to 5.3.0; 0.5.1 pins transformers below 5, where "
           "PEFT converts nothing and the adapter's config is saved whole)")
UNSAVED = (" PEFT makes the adapter's target_parameters a set, which Trinity's _save_lora cannot write as JSON, so the "
           "explorer's vLLM fails to reload the adapter at the first weight sync: {on_4}train {model} without LoRA, or "
           "patch _save_lora to write target_parameters as a list")
ON_4 = ("run it on transformers 4 (Trinity 0.5.2's vllm extra installs it: vLLM 0.17.0 to 0.19.0 require transformers "
        "below 5), ")  # under 0.5 alone (smallslips37)
LORA_WORDS = ("a new adapter on all-linear (Trinity's default target_modules), as planned; with LoRA Trinity builds no "
              "reference model; but ")
QWEN_MOE = ("--model", "30B-A3B", "--gpu", "h100", "--gpus", "8", "--len", "32k")


def _unsaved(model: str, when: str = WHEN_06) -> str:
    return UNSAVED.format(model=model, on_4=ON_4 if when == WHEN_05 else "")


def _caution(model: str, when: str = WHEN_06) -> str:
    return f"LoRA on {model}, a mixture of experts: {when}" + _unsaved(model, when)


def _coded(plan: dict[str, list[str]]) -> list[str]:
    return [words for words, code in zip(plan["cautions"], plan["caution_codes"], strict=True) if code == CODE]


def test_transformers_5_words_are_exact_per_release() -> None:
    assert transformers_5_words("0.6") == transformers_5_words(None) == WHEN_06
    assert transformers_5_words("0.5") == WHEN_05


def test_solve_json_carries_the_code_on_every_lora_plan_of_qwen3_moe(cli: Cli) -> None:
    # Was caution_codes [] on the plan: only the apply lines' and the fragment's comments said it.
    status, out, err = cli(*QWEN_MOE, "--lora-rank", "64", "--json")
    assert (status, err) == (0, "")
    answer = json.loads(out)[0]
    # (s88: beside the host memory's: every rank loading the model at start-up, past the 1024 GiB assumed)
    assert answer["plans"][0]["caution_codes"] == ["host-memory-unchecked", CODE]
    assert _coded(answer["plans"][0]) == [_caution("Qwen3-30B-A3B")]
    assert answer["rollout_kept"]["plan"]["caution_codes"] == ["thin-headroom", "host-memory-unchecked", CODE]
    assert _coded(answer["rollout_kept"]["plan"]) == [_caution("Qwen3-30B-A3B")]


@pytest.mark.parametrize("release", ["0.5", "0.5.2"])  # not 0.5.1, on transformers 4 (test_release05a_s77)
def test_trinity_05_words_name_the_releases_that_run_transformers_5(cli: Cli, release: str) -> None:
    status, out, err = cli(*QWEN_MOE, "--lora-rank", "64", "--trinity-version", release, "--json")
    assert (status, err) == (0, "")
    assert _coded(json.loads(out)[0]["plans"][0]) == [_caution("Qwen3-30B-A3B", WHEN_05)]
    status, out, err = cli(*QWEN_MOE, "--lora-rank", "64", "--trinity-version", release, "--emit", "trinity")
    assert (status, err) == (0, "")
    words = LORA_WORDS + WHEN_05 + _unsaved("Qwen3-30B-A3B", WHEN_05)
    assert fragment_comment(words, "  ") + "  lora_configs: [{lora_rank: 64}]\n" in out
    assert out.count("PEFT makes the adapter's target_parameters a set") == 1  # not in the header's cautions too


def test_the_text_says_the_caution_once_beside_the_lora_line(cli: Cli) -> None:
    status, out, err = cli(*QWEN_MOE, "--lora-rank", "64")
    assert (status, err) == (0, "")
    assert " ".join(out.split()).count("PEFT makes the adapter's target_parameters a set") == 1
    # in a caution row (smallslips37: was the apply line's comment alone), which the comment points to
    assert " ".join(out.split()).count("caution LoRA on Qwen3-30B-A3B, a mixture of experts") == 1
    assert ("# " + LORA_WORDS + "see the caution above on how Trinity saves its config:\n"
            "model.lora_configs: [{lora_rank: 64}]\n") in out


@pytest.mark.parametrize(("model", "codes"), [
    (("--model-config", str(HF_CONFIGS / "Mixtral-8x7B-v0.1.json"), "--lora-rank", "16"), [CODE]),
    (("--model-config", str(HF_CONFIGS / "Qwen1.5-MoE-A2.7B.json"), "--lora-rank", "16"), []),  # saved whole
    (("--model-config", str(HF_CONFIGS / "Mistral-7B-v0.3.json"), "--lora-rank", "16"), []),  # a dense model
    (("--model", "30B-A3B"), []),  # full fine-tuning
])
def test_the_code_only_where_lora_trains_a_converted_mixture_of_experts(cli: Cli, model: tuple[str, ...],
                                                                        codes: list[str]) -> None:
    status, out, err = cli(*model, "--gpu", "h100", "--gpus", "8", "--len", "8k", "--json")
    assert (status, err) == (0, "")
    plan = json.loads(out)[0]["plans"][0]
    assert [code for code in plan["caution_codes"] if code == CODE] == codes
    if codes:
        assert _coded(plan) == [_caution("Mixtral-8x7B-v0.1")]


def test_a_configs_own_lora_gives_the_plan_the_code_and_the_text_says_it_once(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                      "model:\n  model_path: Qwen/Qwen3-30B-A3B\n  max_model_len: 8192\n"
                      "  lora_configs: [{lora_rank: 16}]\n"
                      "explorer:\n  rollout_model:\n    engine_num: 2\n    tensor_parallel_size: 1\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--trinity-version", "0.5", "--json")
    assert (status, err) == (0, "")
    answer = json.loads(out)[0]
    assert [_coded(plan) for plan in (answer["plans"][0], answer["current"]["plan"])] == [
        [_caution("Qwen3-30B-A3B", WHEN_05)]] * 2
    problems = dict(zip(answer["current"]["config_problem_codes"], answer["current"]["config_problems"], strict=True))
    assert (f"model.lora_configs trains LoRA on Qwen3-30B-A3B, a mixture of experts: {WHEN_05} peft 0.21.2 makes the "
            "adapter's target_parameters a set for the routed experts, ") in problems[CODE]
    status, out, err = cli("--from-config", str(config), "--gpu", "h100")
    assert (status, err) == (0, "")
    assert " ".join(out.split()).count("makes the adapter's target_parameters a set") == 1  # the config's check


def test_solve_cluster_json_and_text_carry_it_for_the_mixtral_job_alone(cli: Cli, tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: h100s, gpu: h100, nodes: 1, gpus_per_node: 8}\njobs:\n"
                     f"  - {{name: mix, model_config: {HF_CONFIGS / 'Mixtral-8x7B-v0.1.json'}, max_model_len: 16384, "
                     "lora_rank: 32}\n  - {name: dense, model: Qwen3-8B, max_model_len: 8192, lora_rank: 16}\n",
                     encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--json")
    assert (status, err) == (0, "")
    plans = {placement["job"]: placement["plan"] for placement in json.loads(out)["placements"]}
    assert (plans["mix"]["caution_codes"], plans["dense"]["caution_codes"]) == (["thin-headroom", CODE], [])
    assert _coded(plans["mix"]) == [_caution("Mixtral-8x7B-v0.1")]
    status, out, err = cli("cluster", str(fleet), "--emit-dir", str(tmp_path / "emit"), "--trinity-version", "0.5")
    assert (status, err) == (0, "")
    assert " ".join(out.split()).count(f"caution: mix: {_caution('Mixtral-8x7B-v0.1', WHEN_05)}") == 1
    written = (tmp_path / "emit" / "mix.yaml").read_text(encoding="utf-8")
    words = LORA_WORDS + WHEN_05 + _unsaved("Mixtral-8x7B-v0.1", WHEN_05)
    assert fragment_comment(words, "  ") + "  lora_configs: [{lora_rank: 32}]\n" in written
    assert written.count("PEFT makes the adapter's target_parameters a set") == 1


def test_the_api_answer_carries_the_code_and_its_fragment_says_it_once() -> None:
    (answer,) = solver.plan("30B-A3B", gpu="h100", budget_gpus=8, max_model_len=32768, lora_rank=64,
                            trinity_version="0.5.2")
    assert answer.best is not None
    # (s88: beside the host memory's: 0.5.2's every rank loading the model at start-up, past the 1024 GiB assumed)
    assert answer.best.caution_codes == (CautionCode.HOST_MEMORY_UNCHECKED, CautionCode.LORA_MOE_CONFIG_UNSAVED)
    assert answer.best.cautions[1:] == (_caution("Qwen3-30B-A3B", WHEN_05),)
    assert answer.as_json()["plans"][0]["caution_codes"] == ["host-memory-unchecked", CODE]
    assert solver.trinity_config(answer).count("PEFT makes the adapter's target_parameters a set") == 1
    (full,) = solver.plan("30B-A3B", gpu="h100", budget_gpus=8, max_model_len=32768)
    assert full.best is not None and CautionCode.LORA_MOE_CONFIG_UNSAVED not in full.best.caution_codes
