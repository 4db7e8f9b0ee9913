"""persona52's DPO and GRPO with LoRA on Trinity 0.5.2 (s78): ``--lora-rank`` beside a config's own LoRA says the rank
the verdict counts (0: full fine-tuning's) in place of the config's, not the config's rank "unless --lora-rank gives
another"; a count written ``0x20`` (hexadecimal) or as a product the option refuses gets no "write the product" hint."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.api import answer_query, config_query, with_config_verdicts
from solver.trinity import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]

DPO_LORA = """\
mode: train
algorithm:
  algorithm_type: dpo
model:
  model_path: ${oc.env:TRINITY_MODEL_PATH,Qwen/Qwen3-8B}
  max_prompt_tokens: 1792
  max_response_tokens: 2304
  max_model_len: 8192
  lora_configs:
    - name: dpo
      lora_rank: 32
      lora_alpha: 64
cluster:
  node_num: 1
  gpu_per_node: 8
buffer:
  train_batch_size: 64
  trainer_input:
    experience_buffer:
      name: human_like_dpo
      storage_type: file
      path: ${oc.env:DPO_DATA,HumanLLMs/Human-Like-DPO-Dataset}
"""
HEAD = ("with LoRA (model.lora_configs) the trainer holds gradients and optimizer states for the adapter alone")
OWN = (f"{HEAD}: the verdict and the plans count LoRA rank 32's states (the frozen base's fp32 weights and the "
       "adapter's on every linear layer but the output projection, unless --lora-rank gives another), and the tables, "
       "which measured full fine-tuning, vouch for it by inference and refute nothing")


def _lora_line(cli: Cli, config: Path, *flags: str) -> tuple[int, str]:
    status, out, _ = cli("--from-config", str(config), "--gpu", "A100-80GB", "--trinity-version", "0.5.2", "--json",
                         *flags)
    assert status == 0
    (answer,) = json.loads(out)
    (line,) = [words for code, words in zip(answer["current"]["config_problem_codes"],
                                            answer["current"]["config_problems"], strict=True)
               if code == "lora-counted-as-full"]
    return answer["lora_rank"], line


def test_lora_rank_flag_beside_a_configs_lora_says_the_rank_counted(cli: Cli, tmp_path: Path):
    # Before: "count LoRA rank 32's states (... unless --lora-rank gives another)" with --lora-rank 16 or 0 given,
    # while the plans counted rank 16, or full fine-tuning.
    config = tmp_path / "dpo.yaml"
    config.write_text(DPO_LORA)
    assert _lora_line(cli, config) == (32, OWN)
    assert _lora_line(cli, config, "--lora-rank", "16") == (16, (
        f"{HEAD}: --lora-rank 16 counts LoRA rank 16's states (the frozen base's fp32 weights and the adapter's on "
        "every linear layer but the output projection), in place of the config's own LoRA rank 32's, and the tables, "
        "which measured full fine-tuning, vouch for it by inference and refute nothing"))
    assert _lora_line(cli, config, "--lora-rank", "0") == (0, (
        f"{HEAD}, but --lora-rank 0 counts full fine-tuning's, as the tables measured, in place of the config's own "
        "LoRA rank 32's: a LoRA run needs less memory than shown"))
    assert _lora_line(cli, config, "--lora-rank", "32") == (32, OWN)  # the config's own rank: its own line


def test_lora_rank_flag_beside_a_lora_counted_as_full_says_the_rank_counted(cli: Cli, tmp_path: Path):
    # A regex that adapts the embeddings is counted as full fine-tuning; --lora-rank 64 counts rank 64 in its place.
    config = tmp_path / "embed.yaml"
    targets = "lora_alpha: 64\n      target_modules: '.*(embed_tokens|q_proj)'"
    config.write_text(DPO_LORA.replace("lora_alpha: 64", targets))
    assert _lora_line(cli, config, "--lora-rank", "64") == (64, (
        f"{HEAD}: --lora-rank 64 counts LoRA rank 64's states (the frozen base's fp32 weights and the adapter's on "
        "every linear layer but the output projection), in place of full fine-tuning's, as the config's LoRA is "
        "counted (its target_modules '.*(embed_tokens|q_proj)' matches model.embed_tokens, which all-linear leaves "
        "out and rft-solver does not count), and the tables, which measured full fine-tuning, vouch for it by "
        "inference and refute nothing"))


def test_api_lora_rank_beside_a_configs_lora_is_named_as_its_keyword():
    catalog = solver.load_catalog()
    config = read_trinity_config(DPO_LORA, "dpo.yaml", {}, "0.5")
    query = config_query(catalog, config, gpu="a100", trinity_version="0.5.2", lora_rank=16)
    (answer,) = with_config_verdicts(answer_query(query, catalog), query, catalog, config, DPO_LORA, "dpo.yaml",
                                     dict(os.environ), "0.5")
    assert answer.current is not None
    assert [words for words in answer.current.config_problems if words.startswith(HEAD)] == [(
        f"{HEAD}: lora_rank=16 counts LoRA rank 16's states (the frozen base's fp32 weights and the adapter's on every "
        "linear layer but the output projection), in place of the config's own LoRA rank 32's, and the tables, which "
        "measured full fine-tuning, vouch for it by inference and refute nothing")]


@pytest.mark.parametrize(("flag", "value", "hint"), [
    ("--lora-rank", "0x20", ""),  # hexadecimal 32, not 0 x 20: before, "(write the product: 0)"
    ("--lora-rank", "300x300", ""),  # 90000, past the rank's 65536: no product to write
    ("--lora-rank", "2x8", " (write the product: 16)"),
    ("--gpus", "2x8", " (write the product: 16)"),
    # a count with a GPU type (s88): before, 2x4090 was told "(write the product: 8180)" and a100 nothing
    ("--gpus", "2x4090", (" (a count and a GPU type, 2 RTX-4090-24GB GPUs: give the count alone, 2, and the GPU type "
                          "to --gpu: --gpu 4090)")),
    ("--gpus", "8xA100", (" (a count and a GPU type, 8 A100-80GB GPUs: give the count alone, 8, and the GPU type to "
                          "--gpu: --gpu A100)")),
    ("--gpus", "a100", " (a GPU type, A100-80GB: give it to --gpu, and a count here)"),
])
def test_a_product_hint_only_for_a_product_the_option_takes(cli: Cli, flag: str, value: str, hint: str):
    status, out, err = cli("--model", "8B", "--gpu", "A100-80GB", "--len", "8k", flag, value)
    least = 0 if flag == "--lora-rank" else 1
    assert (status, out, err.splitlines()[-1]) == (2, "", (
        f"solve: error: argument {flag}: expected a whole number from {least} to 65536, got '{value}'{hint}"))


@pytest.mark.parametrize(("value", "hint"), [
    ("2x8", " (2 nodes of 8 GPUs: give a node's 8 here, and the trainer's GPUs in all, 16, to --gpus)"),
    ("2x32", ""),  # no node of 32: nothing to give here
])
def test_nodes_times_their_gpus_for_node_gpus_is_told_the_node_s_gpus_not_the_product(cli: Cli, value: str,
                                                                                      hint: str):
    # s89: --node-gpus 2x8 was told "(write the product: 16)", a node of 16 where two nodes of 8 were meant
    status, out, err = cli("--model", "8B", "--gpu", "A100-80GB", "--len", "8k", "--node-gpus", value)
    assert (status, out, err.splitlines()[-1]) == (2, "", (
        f"solve: error: argument --node-gpus: expected a whole number from 1 to 16, got '{value}'{hint}"))


def test_the_dpo_mode_note_cites_the_lines_of_0_5_2_too(cli: Cli):
    # Trinity 0.5.2 refuses DPO in mode both at trinity/algorithm/algorithm.py:248 (elif config.mode in ["both",
    # "explore"]) and requires buffer.train_batch_size for dpo at trinity/common/config_validator.py:877; before, a
    # fragment written for 0.5.2 cited 0.6.0's lines alone.
    status, out, _ = cli("--model", "8B", "--gpu", "A100-80GB", "--gpus", "8", "--len", "8k", "--dpo", "--lora-rank",
                         "32", "--trinity-version", "0.5.2", "--emit", "trinity")
    note = " ".join(line[2:] for line in out.splitlines() if line.startswith("# "))
    assert status == 0
    assert ("(it refuses mode both: trinity/algorithm/algorithm.py:291 in 0.6.0, :248 in 0.5.2) and requires "
            "buffer.train_batch_size in every mode (trinity/common/config_validator.py:966 in 0.6.0, :877 in 0.5.2)"
            ) in note
