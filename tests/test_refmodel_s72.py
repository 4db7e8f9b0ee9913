"""The host memory counts the reference model only where the run builds one (session 72). Trinity 0.6 on verl 0.8 or
later builds it for an algorithm whose ``use_reference`` is true (GRPO, with a KL term or without), not for SFT, and
never with ``model.lora_configs`` (``trainer/verl/trainer.py:252`` to ``:258`` in 0.6.0); Trinity 0.5 (verl 0.7's
``need_reference_policy``) builds it whatever the algorithm, unless LoRA is on. Without a config it is counted
(``--no-reference`` leaves it out). Figures: Qwen3-8B on a node of 8, the hand counts of `test_hostref_s71`."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from test_hostref_s71 import ADAM_GIB, BF16_PINNED_GIB, FP32_PINNED_GIB, LOAD_GIB

from solver.api import answer_query, config_query, plan
from solver.memory import host_memory_gib
from solver.results import Plan
from solver.tables import QueryError, load_catalog
from solver.trinity import patch_trinity_config, read_trinity_config, trinity_fragment

CATALOG = load_catalog()
QWEN3_8B = CATALOG.model("Qwen3-8B")


def _shown(need_gib: float) -> float:
    """A need as rft-solver shows it: rounded up to a tenth of a GiB (by hand, not `shown_host_gib`)."""
    tenths = need_gib * 10
    return (int(tenths) + (tenths > int(tenths))) / 10


def _config(algorithm: str | None = "grpo", kl_loss_fn: str | None = None, lora: str = "", trainer: str = "") -> str:
    """A Trinity config training Qwen3-8B on one node of 8 GPUs (mode train: no rollout GPUs) at 8192 tokens, with
    `algorithm` (None: unset, Trinity's PPO), its ``kl_loss_fn`` where given, `lora` lines under ``model`` and
    `trainer` lines under ``trainer``."""
    lines = ["model:", "  model_path: Qwen/Qwen3-8B", "  max_model_len: 8192", *([lora] if lora else []),
             "cluster:", "  node_num: 1", "  gpu_per_node: 8", "mode: train", "buffer:", "  train_batch_size: 64",
             "trainer:", "  trainer_strategy: fsdp", *([trainer] if trainer else [])]
    if algorithm is not None or kl_loss_fn is not None:
        lines += ["algorithm:", *([f"  algorithm_type: {algorithm}"] if algorithm else []),
                  *([f"  kl_loss_fn: {kl_loss_fn}"] if kl_loss_fn else [])]
    return "\n".join(lines) + "\n"


GRPO_KL = _config("grpo", "k2")
GRPO_NO_KL = _config("grpo", "none")
SFT = _config("sft")
LORA_CONFIGS = _config("grpo", lora="  lora_configs:\n  - lora_rank: 16")
LEGACY_LORA = _config("grpo", trainer="  trainer_config:\n    actor_rollout_ref:\n      model:\n        lora_rank: 8")


@pytest.mark.parametrize(("text", "built"), [
    # (no release: either release builds one, 0.6, 0.5)
    (GRPO_KL, (True, True, True)),
    (GRPO_NO_KL, (True, True, True)),  # no KL term, but GRPO uses the reference model: Trinity builds it
    (_config(None), (True, True, True)),  # Trinity's default algorithm, PPO, uses one
    (SFT, (True, False, True)),  # 0.5 builds it whatever the algorithm
    (_config("dapo"), (True, False, True)),
    (LORA_CONFIGS, (False, False, False)),  # the actor without its adapter stands in
    (LEGACY_LORA, (True, True, False)),  # a key Trinity 0.6 on verl 0.8 ignores (FROZEN_KEYS)
])
def test_a_config_says_whether_trinity_builds_a_reference_model(text: str, built: tuple[bool, ...]) -> None:
    assert tuple(read_trinity_config(text, "c.yaml", {}, version).reference_model
                 for version in (None, "0.6", "0.5")) == built


@pytest.mark.parametrize(("version", "offload", "with_reference", "without"), [
    (None, False, LOAD_GIB + FP32_PINNED_GIB, LOAD_GIB),
    ("0.5", False, LOAD_GIB + BF16_PINNED_GIB, LOAD_GIB),
    (None, True, 3 * FP32_PINNED_GIB + ADAM_GIB, 2 * FP32_PINNED_GIB + ADAM_GIB),
    ("0.5", True, 2 * FP32_PINNED_GIB + BF16_PINNED_GIB + ADAM_GIB, 2 * FP32_PINNED_GIB + ADAM_GIB),
])
def test_the_host_need_holds_the_reference_model_s_shards_only_where_counted(
        version: str | None, offload: bool, with_reference: float, without: float) -> None:
    assert host_memory_gib(QWEN3_8B, 8, 8, offload, version) == pytest.approx(with_reference, rel=1e-12)
    assert host_memory_gib(QWEN3_8B, 8, 8, offload, version, reference=False) == pytest.approx(without, rel=1e-12)


def _need(text: str, version: str | None = None, **keywords: object) -> tuple[bool, float | None, bool]:
    """The best plan's (Qwen3-8B on the config's 8 H100s, without Offload, host memory given) whether the answer
    counted the reference model, the host need, and whether the plan says it counted it."""
    config = read_trinity_config(text, "c.yaml", {}, version)
    query = config_query(CATALOG, config, gpu="h100", offload=False, host_ram_gb=512.0, trinity_version=version,
                         **keywords)
    (answer,) = answer_query(query, CATALOG)
    assert answer.best is not None
    return answer.reference_model, answer.best.host_memory_gb, answer.best.reference_model


def test_a_config_s_plans_count_the_reference_model_where_it_builds_one() -> None:
    counted, counted_05, left_out = _shown(LOAD_GIB + FP32_PINNED_GIB), _shown(LOAD_GIB + BF16_PINNED_GIB), _shown(
        LOAD_GIB)
    assert (counted, counted_05, left_out) == (71.2, 50.9, 30.6)
    assert _need(GRPO_KL) == _need(GRPO_NO_KL) == (True, counted, True)
    assert _need(SFT, "0.6") == (False, left_out, False)
    assert _need(SFT, "0.5") == (True, counted_05, True)
    assert _need(SFT) == (True, counted, True)  # no release: 0.5 would build one
    assert _need(LORA_CONFIGS) == (False, 30.7, False)  # the load holds the adapter too: test_lorahost_s73
    # The keyword overrides the config either way.
    assert _need(SFT, "0.6", reference_model=True) == (True, counted, True)
    assert _need(GRPO_KL, reference_model=False) == (False, left_out, False)


def test_the_api_counts_it_without_a_config_unless_told_not_to() -> None:
    def need(**keywords: object) -> tuple[bool, float | None]:
        (answer,) = plan("8B", gpu="h100", max_model_len=8192, budget_gpus=8, exact=True, offload=True, **keywords)
        assert answer.best is not None
        return answer.reference_model, answer.best.host_memory_gb

    assert need() == (True, _shown(3 * FP32_PINNED_GIB + ADAM_GIB)) == (True, 183.0)
    assert need(reference_model=False) == (False, _shown(2 * FP32_PINNED_GIB + ADAM_GIB)) == (False, 142.3)
    with pytest.raises(QueryError, match="reference_model must be"):
        plan("8B", gpu="h100", max_model_len=8192, reference_model="no")


def _offload_plan(reference_model: bool = True) -> Plan:
    """The best plan for Qwen3-8B with Offload on 8 H100s at 8192 tokens, made for no Trinity release."""
    (answer,) = plan("8B", gpu="h100", max_model_len=8192, budget_gpus=8, exact=True, offload=True,
                     reference_model=reference_model)
    assert answer.best is not None
    return answer.best


def test_a_config_written_for_0_5_says_0_5_s_host_need() -> None:
    # The plan, made for no release, carries 0.6's figure (fp32 reference shards); the patch and the fragment for 0.5
    # say 0.5's (bf16 ones), for 0.6 0.6's; a plan that counted no reference model says none in either.
    best = _offload_plan()
    assert best.host_memory_gb == _shown(3 * FP32_PINNED_GIB + ADAM_GIB) == 183.0
    for_05 = _shown(2 * FP32_PINNED_GIB + BF16_PINNED_GIB + ADAM_GIB)
    assert for_05 == 162.6

    def noted(text: str) -> str:
        match = re.search(r"# host memory: [^;,]*", text)
        assert match is not None
        return match[0]

    note = "# host memory: {} GiB per node for Offload"
    patched = {version: noted(patch_trinity_config(GRPO_KL, best, QWEN3_8B, version=version))
               for version in (None, "0.6", "0.5")}
    assert patched == {None: note.format(183.0), "0.6": note.format(183.0), "0.5": note.format(for_05)}
    assert noted(trinity_fragment(best, QWEN3_8B, version="0.5")) == note.format(for_05)
    assert noted(trinity_fragment(best, QWEN3_8B)) == note.format(183.0)
    alone = _offload_plan(reference_model=False)
    none = note.format(_shown(2 * FP32_PINNED_GIB + ADAM_GIB)) + " (no reference model)"
    assert noted(patch_trinity_config(GRPO_KL, alone, QWEN3_8B, version="0.5")) == noted(
        patch_trinity_config(GRPO_KL, alone, QWEN3_8B)) == none
    # The header's command checks a config as the plan was made: without the reference model where it counted none.
    checked = {plan_.reference_model: trinity_fragment(plan_, QWEN3_8B, host_ram_gb=512.0, check=("--gpu", "h100"))
               for plan_ in (best, alone)}
    # (and, as the plan counted no critic, without the PPO one a fragment's lack of algorithm_type means: s74)
    assert "--gpu h100 --host-ram 512 --no-reference --critic none\n" in checked[False]
    assert "--gpu h100 --host-ram 512 --critic none\n" in checked[True] and "--no-reference" not in checked[True]


def test_the_command_follows_the_config_and_the_flag(tmp_path: Path, cli: Callable[..., tuple[int, str, str]]) -> None:
    sft = tmp_path / "sft.yaml"
    sft.write_text(SFT, encoding="utf-8")
    grpo = tmp_path / "grpo.yaml"
    grpo.write_text(GRPO_KL, encoding="utf-8")
    # 40 GiB holds the load alone (30.6), not the load beside the reference model's shards (71.2; 50.9 on 0.5).
    check = ("--gpu", "h100", "--host-ram", "40", "--no-offload", "--check")
    code, out, err = cli("--from-config", str(sft), *check, "--trinity-version", "0.6", "--json")
    (answer,) = json.loads(out)
    assert (code, err, answer["reference_model"], answer["current"]["trains"]) == (0, "", False, True)
    assert answer["plans"][0]["host_memory_gb"] == 30.6 and answer["plans"][0]["reference_model"] is False
    code, out, _ = cli("--from-config", str(sft), *check, "--trinity-version", "0.5", "--json")
    (answer,) = json.loads(out)
    assert (code, answer["reference_model"], answer["current"]["trains"],
            answer["current"]["host_memory_needed"]) == (1, True, False, 50.9)
    code, out, _ = cli("--from-config", str(grpo), *check, "--json")
    assert code == 1 and json.loads(out)[0]["current"]["host_memory_needed"] == 71.2
    code, out, err = cli("--from-config", str(grpo), *check, "--no-reference", "--json")
    assert (code, err, json.loads(out)[0]["reference_model"]) == (0, "", False)
    code, out, err = cli("--from-config", str(sft), *check, "--trinity-version", "0.6", "--reference")
    assert code == 1 and err == ""
    # Without a config: counted, unless --no-reference; the plan's host memory line says where none is.
    code, out, _ = cli("--model", "8B", "--gpu", "h100", "--gpus", "8", "--exact", "--len", "8192", "--no-offload",
                       "--host-ram", "512", "--no-reference")
    assert code == 0 and "30.6 GiB per node while the model loads (no reference model), within --host-ram 512 GiB" \
        in " ".join(out.split())
    code, out, err = cli("--model", "8B", "--len", "8192", "--no-reference", "--reference")
    assert (code, out, err.splitlines()[-1]) == (
        2, "", "solve: error: --no-reference and --reference contradict each other: give one of them")
    assert "Traceback" not in err
