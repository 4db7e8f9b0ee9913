"""The host memory counts the reference model only where the run builds one (session 72). Trinity 0.6 on verl 0.8 or
later builds it for an algorithm whose ``use_reference`` is true (GRPO, with a KL term or without), not for SFT, and
never with ``model.lora_configs`` (``trainer/verl/trainer.py:252`` to ``:258`` in 0.6.0); Trinity 0.5 (verl 0.7's
``need_reference_policy``) is counted as 0.5.0 and 0.5.1 build it, whatever the algorithm, unless LoRA is on (0.5.2's
verl 0.7.1 builds it only for a KL term, s91). Without a config it is counted
(``--no-reference`` leaves it out). Figures: Qwen3-8B on a node of 8, the hand counts of `test_hostref_s71`, with the
model loaded on every rank (s84: no release named, 0.5 without its patch, or 0.6 with FSDP1, as these configs' ``fsdp``)
where not said otherwise: `EVERY_RANK_LOAD_GIB`."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from cluster_reference import best_value, check_placements, value_of
from conftest import DATASET_PATH
from test_cluster import solved
from test_hostref_s71 import ADAM_GIB, BF16_PINNED_GIB, FP32_PINNED_GIB, LOAD_GIB

from solver.api import answer_query, config_query, estimate_memory, place, plan
from solver.memory import host_memory_gib
from solver.results import Plan
from solver.tables import ModelLoading, QueryError, load_catalog
from solver.trinity import patch_trinity_config, read_trinity_config, trinity_config_problems, trinity_fragment

CATALOG = load_catalog()
QWEN3_8B = CATALOG.model("Qwen3-8B")
EVERY_RANK_LOAD_GIB = 8 * LOAD_GIB
"""Qwen3-8B's fp32 load on each of a node's 8 ranks (docs/memory.md, "Which ranks load the model"): 244.11 GiB."""


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
             f"  trainer_input: {{experience_buffer: {{path: {DATASET_PATH}}}}}",
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


UNBUILT_REF = ("algorithm.kl_loss_fn is none and kl_penalty_fn none (unset: every algorithm's default): with no KL "
               "term {builds} no reference model (verl 0.7.1's need_reference_policy, trainer/ppo/utils.py:76), yet "
               "algorithm_type grpo uses one, so the first training step fails asking the ref worker never built for "
               "its log-probs ({where}); {others}: remove the key for the algorithm's default, k2 (kl_loss_fn_args: "
               "{{kl_coef: 0}} keeps its loss without the term)")


def _unbuilt_ref_lines(text: str, version: str | None = None, batch_divisor: str | None = None) -> list[str]:
    """The ``ref-not-built`` lines of the config `text` on its 8 GPUs, judged for `version` (`batch_divisor` as
    `trinity_config_problems` takes it: ``gpus`` for 0.5.0 and 0.5.1)."""
    found = trinity_config_problems(yaml.safe_load(text), QWEN3_8B, 8, version=version,  # type: ignore[arg-type]
                                    batch_divisor=batch_divisor)  # type: ignore[arg-type]
    return [problem.words for problem in found if problem.code.value == "ref-not-built"]


def test_a_run_with_no_kl_term_on_a_release_that_then_builds_no_ref_is_cautioned() -> None:
    # checks92: Trinity 0.5.2 (and 0.6 on verl before 0.8) hand verl 0.7.1 use_kl_loss false for kl_loss_fn none, whose
    # need_reference_policy then builds no ref, while the trainer still asks a ref worker for GRPO's ref log-probs
    # (`use_reference`) at the first step: a caution, as 0.5.0, 0.5.1 and verl 0.8 build one.
    assert _unbuilt_ref_lines(GRPO_NO_KL, "0.5") == [UNBUILT_REF.format(
        builds="Trinity 0.5.2 builds", where="trainer/verl/verl_trainer.py:544 in 0.5.2",
        others="0.5.0 and 0.5.1 (verl 0.7.0) build one")]
    assert _unbuilt_ref_lines(GRPO_NO_KL, "0.6") == [UNBUILT_REF.format(
        builds="Trinity 0.6 on verl before 0.8 builds", where="verl_legacy/verl_trainer.py:572 in 0.6.0",
        others="on verl 0.8 or later it builds one")]
    assert len(_unbuilt_ref_lines(GRPO_NO_KL)) == 1
    # docstruth92: 0.5.0 and 0.5.1 (the release named: `batch_divisor` gpus) build one, so no line for them, where it
    # said 0.5.2 fails and to remove the key; 0.5.2's own is the bare 0.5's line
    assert _unbuilt_ref_lines(GRPO_NO_KL, "0.5", "gpus") == []
    assert _unbuilt_ref_lines(GRPO_NO_KL, "0.5", "ranks") == _unbuilt_ref_lines(GRPO_NO_KL, "0.5")
    # A KL term, LoRA on verl before 0.8 (the actor stands in) or an algorithm with no ref (SFT), or DPO, whose
    # check_config turns kl_loss_fn none into k2: nothing.
    kl_penalty = GRPO_NO_KL.replace("  kl_loss_fn: none", "  kl_loss_fn: none\n  kl_penalty_fn: k1")
    legacy_lora = "  trainer_config:\n    actor_rollout_ref:\n      model:\n        lora_rank: 8"
    no_kl = [_config(algorithm, "none", lora=lora, trainer=trainer) for algorithm, lora, trainer in (
        ("grpo", "  lora_configs:\n  - lora_rank: 16", ""), ("grpo", "", legacy_lora), ("sft", "", ""),
        ("dpo", "", ""))]
    assert [_unbuilt_ref_lines(text) for text in (GRPO_KL, kl_penalty, *no_kl)] == [[]] * 6
    # mutants56: kl_loss_fn unset is the algorithm's default, k2 (PPO's too, unset), and a KL penalty or LoRA key
    # that cannot be read here (an unset variable) decides nothing: no line either
    unread = [GRPO_NO_KL.replace("  kl_loss_fn: none", "  kl_loss_fn: none\n  kl_penalty_fn: ${oc.env:UNSET_KL_92}"),
              _config("grpo", "none", lora="  lora_configs: ${oc.env:UNSET_LORA_92}")]
    assert [_unbuilt_ref_lines(text) for text in (_config("grpo"), _config(None), *unread)] == [[]] * 4
    # mutants58: with algorithm_type unset, Trinity's PPO, which uses a ref too: the line names it so
    (unset,) = _unbuilt_ref_lines(_config(None, "none"), "0.6")
    assert "yet algorithm_type ppo (unset) uses one, so the first training step fails" in unset


@pytest.mark.parametrize(("version", "offload", "loading", "with_reference", "without"), [
    # rank 0 alone loading (0.6 with FSDP2 on an H100, say): with Offload training's need is the larger
    (None, False, "rank-0", LOAD_GIB + FP32_PINNED_GIB, LOAD_GIB),
    ("0.5", False, "rank-0", LOAD_GIB + BF16_PINNED_GIB, LOAD_GIB),
    (None, True, "rank-0", 3 * FP32_PINNED_GIB + ADAM_GIB, 2 * FP32_PINNED_GIB + ADAM_GIB),
    ("0.5", True, "rank-0", 2 * FP32_PINNED_GIB + BF16_PINNED_GIB + ADAM_GIB, 2 * FP32_PINNED_GIB + ADAM_GIB),
    # every rank loading (the default): the load beside the pinned shards (with Offload the actor's too) is the larger
    (None, False, "every-rank", EVERY_RANK_LOAD_GIB + FP32_PINNED_GIB, EVERY_RANK_LOAD_GIB),
    ("0.5", False, "every-rank", EVERY_RANK_LOAD_GIB + BF16_PINNED_GIB, EVERY_RANK_LOAD_GIB),
    (None, True, "every-rank", EVERY_RANK_LOAD_GIB + 2 * FP32_PINNED_GIB, EVERY_RANK_LOAD_GIB + FP32_PINNED_GIB),
    ("0.5", True, "every-rank", EVERY_RANK_LOAD_GIB + FP32_PINNED_GIB + BF16_PINNED_GIB,
     EVERY_RANK_LOAD_GIB + FP32_PINNED_GIB),
])
def test_the_host_need_holds_the_reference_model_s_shards_only_where_counted(
        version: str | None, offload: bool, loading: ModelLoading, with_reference: float, without: float) -> None:
    assert host_memory_gib(QWEN3_8B, 8, 8, offload, version, loading=loading) == pytest.approx(with_reference,
                                                                                               rel=1e-12)
    assert host_memory_gib(QWEN3_8B, 8, 8, offload, version, reference=False, loading=loading) == pytest.approx(
        without, rel=1e-12)


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
    # Every rank loads: no release named, 0.5 without its patch, 0.6 with the configs' FSDP1 (without Offload).
    counted, counted_05, left_out = (_shown(EVERY_RANK_LOAD_GIB + FP32_PINNED_GIB),
                                     _shown(EVERY_RANK_LOAD_GIB + BF16_PINNED_GIB), _shown(EVERY_RANK_LOAD_GIB))
    assert (counted, counted_05, left_out) == (284.8, 264.5, 244.2)
    assert _need(GRPO_KL) == _need(GRPO_NO_KL) == (True, counted, True)
    assert _need(SFT, "0.6") == (False, left_out, False)
    assert _need(SFT, "0.5") == (True, counted_05, True)
    assert _need(SFT) == (True, counted, True)  # no release: 0.5 would build one
    assert _need(LORA_CONFIGS) == (False, 245.5, False)  # 8 loads of 30.68 (the adapter too): test_lorahost_s73
    # The keyword overrides the config either way.
    assert _need(SFT, "0.6", reference_model=True) == (True, counted, True)
    assert _need(GRPO_KL, reference_model=False) == (False, left_out, False)


def test_the_api_counts_it_without_a_config_unless_told_not_to() -> None:
    def need(**keywords: object) -> tuple[bool, float | None]:
        (answer,) = plan("8B", gpu="h100", max_model_len=8192, budget_gpus=8, exact=True, offload=True, **keywords)
        assert answer.best is not None
        return answer.reference_model, answer.best.host_memory_gb

    # No release named: every rank loads, the load beside the pinned shards outweighs training's need.
    assert need() == (True, _shown(EVERY_RANK_LOAD_GIB + 2 * FP32_PINNED_GIB)) == (True, 325.4)
    assert need(reference_model=False) == (False, _shown(EVERY_RANK_LOAD_GIB + FP32_PINNED_GIB)) == (False, 284.8)
    with pytest.raises(QueryError, match="reference_model must be"):
        plan("8B", gpu="h100", max_model_len=8192, reference_model="no")


def _offload_plan(reference_model: bool = True) -> Plan:
    """The best plan for Qwen3-8B with Offload on 8 H100s at 8192 tokens, made for no Trinity release."""
    (answer,) = plan("8B", gpu="h100", max_model_len=8192, budget_gpus=8, exact=True, offload=True,
                     reference_model=reference_model)
    assert answer.best is not None
    return answer.best


def test_a_config_written_for_0_5_says_0_5_s_host_need() -> None:
    # The plan, made for no release, carries every rank's load beside fp32 reference shards; the patch and the
    # fragment for 0.5 (every rank too, without its patch) say 0.5's (bf16 ones), for 0.6 0.6's (rank 0 alone loads
    # on H100s with Offload's FSDP2: training's need is the larger); a plan that counted no reference model says none.
    best = _offload_plan()
    assert best.host_memory_gb == _shown(EVERY_RANK_LOAD_GIB + 2 * FP32_PINNED_GIB) == 325.4
    for_05 = _shown(EVERY_RANK_LOAD_GIB + FP32_PINNED_GIB + BF16_PINNED_GIB)
    assert for_05 == 305.1
    assert _shown(3 * FP32_PINNED_GIB + ADAM_GIB) == 183.0

    def noted(text: str) -> str:
        match = re.search(r"# host memory: [^;]*", text)
        assert match is not None
        return match[0]

    note = "# host memory: {} GiB per node for Offload"
    loading = " (at start-up, every rank loading the model"
    patched = {version: noted(patch_trinity_config(GRPO_KL, best, QWEN3_8B, version=version))
               for version in (None, "0.6", "0.5")}
    assert patched == {None: note.format(325.4) + loading, "0.6": note.format(183.0),
                       "0.5": note.format(for_05) + loading}
    assert noted(trinity_fragment(best, QWEN3_8B, version="0.5")) == note.format(for_05) + loading
    assert noted(trinity_fragment(best, QWEN3_8B)) == note.format(325.4) + loading
    alone = _offload_plan(reference_model=False)
    none = note.format(_shown(EVERY_RANK_LOAD_GIB + FP32_PINNED_GIB)) + " (no reference model"
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
    # 250 GiB holds every rank's load alone (244.2: these configs' FSDP1 loads on every rank under 0.6), not the load
    # beside the reference model's shards (284.8; 264.5 on 0.5).
    check = ("--gpu", "h100", "--host-ram", "250", "--no-offload", "--check")
    code, out, err = cli("--from-config", str(sft), *check, "--trinity-version", "0.6", "--json")
    (answer,) = json.loads(out)
    assert (code, err, answer["reference_model"], answer["current"]["trains"]) == (0, "", False, True)
    assert answer["plans"][0]["host_memory_gb"] == 244.2 and answer["plans"][0]["reference_model"] is False
    code, out, _ = cli("--from-config", str(sft), *check, "--trinity-version", "0.5", "--json")
    (answer,) = json.loads(out)
    assert (code, answer["reference_model"], answer["current"]["trains"],
            answer["current"]["host_memory_needed"]) == (1, True, False, 264.5)
    code, out, _ = cli("--from-config", str(grpo), *check, "--json")
    assert code == 1 and json.loads(out)[0]["current"]["host_memory_needed"] == 284.8
    code, out, err = cli("--from-config", str(grpo), *check, "--no-reference", "--json")
    assert (code, err, json.loads(out)[0]["reference_model"]) == (0, "", False)
    code, out, err = cli("--from-config", str(sft), *check, "--trinity-version", "0.6", "--reference")
    assert code == 1 and err == ""
    # Without a config: counted, unless --no-reference; the plan's host memory line says where none is.
    code, out, _ = cli("--model", "8B", "--gpu", "h100", "--gpus", "8", "--exact", "--len", "8192", "--no-offload",
                       "--host-ram", "512", "--no-reference")
    assert code == 0 and ("244.2 GiB per node while the model loads (no reference model; every rank loading the model), "
                          "within --host-ram 512 GiB") in " ".join(out.split())
    code, out, err = cli("--model", "8B", "--len", "8192", "--no-reference", "--reference")
    assert (code, out, err.splitlines()[-1]) == (
        2, "", "solve: error: --no-reference and --reference contradict each other: give one of them")
    assert "Traceback" not in err


def test_the_cluster_reference_counts_a_job_that_builds_no_reference_model(tmp_path: Path):
    # Qwen3-8B on a node of 8 A100s with 200 GiB of host memory, every rank loading it (no release named): a job with
    # `reference_model: false` pins no reference shards, so 6 trainer GPUs fit (183.1 GiB; cost 1/6: 1667), the
    # reference's optimum, which `place` reaches unwidened, its placement checked by the reference (conftest's
    # `_placements_checked`). Checked as if the job built one, the placement is wrong: with the reference model's fp32
    # shards those 6 GPUs need 224.6 GiB.
    pool = {"name": "p", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 200}
    job = {"name": "j", "model": "Qwen3-8B", "max_model_len": 4096, "rollout_gpus": 0}
    without = {"pools": [pool], "jobs": [{**job, "reference_model": False}]}
    result = solved(without, tmp_path, widen=False)
    [placed] = result["placements"]
    assert (placed["trainer_gpus"], placed["plan"]["host_memory_gb"], placed["plan"]["reference_model"]) == (
        6, 183.1, False)
    assert value_of(CATALOG, without, result) == best_value(CATALOG, without, estimates=True) == (1, 0, 1667)
    problems = check_placements(CATALOG, {"pools": [pool], "jobs": [job]}, result, estimates=True)
    assert problems[0] == "job 'j': plan: loading the model needs 224.6 GiB of host memory per node, more than " \
        "--host-ram 200" and len(problems) == 2 and "'reference_model': False" in problems[1], problems


def test_no_reference_model_is_refused_where_the_release_builds_one_whatever_the_algorithm(
        tmp_path: Path, cli: Callable[..., tuple[int, str, str]]) -> None:
    # s91: Trinity 0.5.0 and 0.5.1 (verl 0.7.0, whose need_reference_policy asks the role map, which always holds
    # RefPolicy) build a reference model without LoRA whatever the algorithm, so a need without it counts too little;
    # 0.5 alone may be one of them. 0.5.2 (verl 0.7.1) builds one only where a KL term reads it: taken, as with LoRA;
    # but a GRPO-family run (use_reference true) without one fails there (the check's ref-not-built), which the advice
    # to name 0.5.2 said nothing of (smalls92b): it names the algorithms it holds for.
    why = ("Trinity 0.5.0 and 0.5.1 (verl 0.7.0) build a reference model whatever the algorithm, but with LoRA: drop "
           "{0}, or name 0.5.2 if the run is on it with an algorithm that uses none (use_reference false, as SFT's) "
           "and no KL term (kl_loss_fn and kl_penalty_fn none), for which its verl 0.7.1 builds none (an algorithm "
           "that uses one, as GRPO's, then fails at its first step asking the ref never built for its log-probs: "
           "keep the reference, or LoRA, whose actor stands in)")
    for command, release in (("solve", "0.5.1"), ("solve memory", "v0.5")):
        argv = ("--model", "8B", "--gpu", "a100", "--gpus", "8", "--len", "32k", "--no-reference")
        code, out, err = cli(*command.split()[1:], *argv, "--trinity-version", release)
        assert (code, out, err.splitlines()[-1]) == (2, "", f"{command}: error: --no-reference with --trinity-version "
                                                     f"{release.lstrip('v')}: " + why.format("--no-reference"))
        assert "Traceback" not in err
    with pytest.raises(QueryError) as refused:
        plan("8B", gpu="a100", max_model_len="32k", reference_model=False, trinity_version="0.5.0")
    assert str(refused.value) == 'reference_model=False with trinity_version="0.5.0": ' + why.format(
        "reference_model=False")
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(json.dumps({"pools": [{"name": "p", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
                                 "jobs": [{"name": "j", "model": "Qwen3-8B", "max_model_len": 4096,
                                           "reference_model": False, "trinity_version": "0.5.1"}]}))
    code, out, err = cli("cluster", str(fleet))
    assert (code, out, err) == (2, "", "solve cluster: error: the job's reference_model false with the job's "
                                "trinity_version 0.5.1: " + why.format("the job's reference_model false") + "\n")
    # cluster93c: a job that names no release of its own is told the run's option, which gives it (before: "the
    # job's trinity_version 0.5.1", a key it does not name); its own key wins over the run's.
    fleet.write_text(fleet.read_text().replace(', "trinity_version": "0.5.1"', ""))
    code, out, err = cli("cluster", str(fleet), "--trinity-version", "0.5.1")
    assert (code, out, err) == (2, "", "solve cluster: error: the job's reference_model false with --trinity-version "
                                "0.5.1: " + why.format("the job's reference_model false") + "\n")
    with pytest.raises(QueryError) as refused:
        place(fleet, trinity_version="0.5.0")
    assert str(refused.value) == ('the job\'s reference_model false with trinity_version="0.5.0": '
                                  + why.format("the job's reference_model false"))
    for release, lora_rank in (("0.5.2", 0), ("0.5.1", 16)):
        estimate = estimate_memory("8B", "a100", 8, "32k", sp=2, env=True, offload=False, reference_model=False,
                                   trinity_version=release, lora_rank=lora_rank)
        assert not estimate.reference_model
