"""Session 80's splitnote: a plan's own ``target_modules`` regex (``--lora-targets``), which Trinity saves into each
checkpoint as its single characters, cautioned wherever the plan writes it, once (the LoRA key's comment in the apply
lines and the fragment, ``--write``'s note, the caution code ``lora-targets-saved-split``), in the words of the
config check of the same code (one check: ``solver.rules.saved_split``), on a mixture of experts as its transformers
saves it; a config whose LoRA configs Trinity refuses says in one line that the plans count full fine-tuning; a
plan inferred from a cell of its own setting says it "runs that same setting", not that it "includes" it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import solver
from solver.rules import saved_split

Cli = Callable[..., tuple[int, str, str]]
PLAN = ("--model", "Qwen/Qwen3-8B", "--gpu", "h20", "--total-gpus", "4", "--rollout-gpus", "2", "--len", "32768",
        "--lora-rank", "32")
QKVO = r".*\.(q_proj|k_proj|v_proj|o_proj)"
SPLIT = (f"target_modules '{QKVO}' is a regular expression, which Trinity writes into each checkpoint's "
         "lora_adapter/adapter_config.json as its single characters (['.', '*', '\\\\', '(', ...]){models}: this run "
         "is unaffected (vLLM loads the adapter by its tensors' names), but PEFT reads those characters as module-name "
         "endings, so loading that adapter with PEFT (a later run's model.lora_configs[0].path, or "
         "PeftModel.from_pretrained) fails: {fix}, which Trinity saves as module names, or write the regular "
         "expression back into the saved adapter_config.json before you load it")
PLAN_SPLIT = SPLIT.format(models="", fix="plan for all-linear instead")
CONFIG = """\
algorithm:
  algorithm_type: grpo
model:
  model_path: Qwen/Qwen3-8B
  max_model_len: 32768
{lora}cluster:
  node_num: 1
  gpu_per_node: 4
explorer:
  rollout_model:
    engine_num: 2
    tensor_parallel_size: 1
"""


def _best(cli: Cli, *flags: str) -> dict[str, Any]:
    status, out, err = cli(*flags, "--json")
    assert status == 0, err
    answer = json.loads(out)
    return dict((answer[0] if isinstance(answer, list) else answer)["plans"][0])


# (1) the plan's own regex, cautioned once wherever it is written.

def test_the_check_is_a_string_regex_other_than_all_linear() -> None:
    assert [saved_split(targets) for targets in (QKVO, "q_proj", None, "all-linear", "ALL-Linear", ["q_proj"], "(",
                                                 7)] == [True, True, False, False, False, False, False, False]


def test_a_plan_on_lora_targets_carries_the_caution_as_data(cli: Cli) -> None:
    plan = _best(cli, *PLAN, "--lora-targets", "q_proj,k_proj,v_proj,o_proj")
    assert (plan["caution_codes"], plan["cautions"]) == (["lora-targets-saved-split"], [PLAN_SPLIT])
    assert _best(cli, *PLAN)["caution_codes"] == []  # all-linear, which Trinity saves as module names


def test_the_fragment_says_it_once_in_the_lora_keys_comment(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "fragment.yaml"
    status, _, err = cli(*PLAN, "--lora-targets", "q_proj,k_proj,v_proj,o_proj", "--out", str(out))
    assert status == 0, err
    lines = out.read_text().splitlines()
    at = lines.index(f"  lora_configs: [{{lora_rank: 32, target_modules: '{QKVO}'}}]")
    start = max(index for index in range(at) if not lines[index].startswith("  #"))
    comment = " ".join(line.removeprefix("  # ") for line in lines[start + 1:at])
    assert comment == (f"a new adapter on target_modules '{QKVO}', as planned; with LoRA Trinity builds no reference "
                       f"model; but {PLAN_SPLIT}")
    assert out.read_text().count("as its single characters") == 1  # not in the header's cautions too


def test_the_apply_lines_say_it_once(cli: Cli) -> None:
    status, out, _ = cli(*PLAN, "--lora-targets", "q_proj,k_proj,v_proj,o_proj")
    assert status == 0
    pointed = "; but see the caution above on how Trinity saves its config:\n"  # its row (smallslips37)
    assert f"{pointed}model.lora_configs: [{{lora_rank: 32, target_modules: '{QKVO}'}}]\n" in out
    assert out.count("as its single characters") == 1 and "\ncaution        target_modules '" in out


def test_write_notes_it_once_and_a_second_write_keeps_it_once(cli: Cli, tmp_path: Path) -> None:
    config, written, again = tmp_path / "grpo.yaml", tmp_path / "lora.yaml", tmp_path / "again.yaml"
    config.write_text(CONFIG.format(lora=""))
    flags = ("--gpu", "h20", "--lora-rank", "32", "--lora-targets", "q_proj,k_proj,v_proj,o_proj")
    assert cli("--from-config", str(config), *flags, "--write", str(written))[0] == 0
    assert f"\n  # caution: {PLAN_SPLIT}\n" in _unwrapped(written.read_text())
    assert _unwrapped(written.read_text()).count("as its single characters") == 1
    assert cli("--from-config", str(written), *flags, "--write", str(again))[0] == 0
    assert _unwrapped(again.read_text()).count("as its single characters") == 1


def _unwrapped(text: str) -> str:
    """A written config's comment paragraphs on one line each (their continuation lines, "  #   ...", joined)."""
    return re.sub(r"\n +# {3}", " ", text)


def test_planning_from_the_written_config_says_the_same_words(cli: Cli, tmp_path: Path) -> None:
    # The config's own line (its key, the models it is said for, its fix) around the plan's words: one check.
    config = tmp_path / "grpo.yaml"
    config.write_text(CONFIG.format(lora=f"  lora_configs: [{{lora_rank: 32, target_modules: '{QKVO}'}}]\n"))
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--json")
    assert status == 0
    current = json.loads(out)[0]["current"]
    lines = dict(zip(current["config_problem_codes"], current["config_problems"], strict=True))
    converted = ("on a mixture of experts whose config PEFT converts, it turns it into module names before the save, "
                 "and lora-moe-config-unsaved says what fails")
    assert lines["lora-targets-saved-split"] == "model.lora_configs[0]." + SPLIT.format(
        models=f" on a dense model ({converted})", fix="give all-linear")


@pytest.mark.parametrize(("version", "codes"), [
    ("0.6", ["lora-moe-config-unsaved"]),  # transformers 5 turns the regex into names; the save fails whole
    ("0.5", ["lora-moe-config-unsaved", "lora-targets-saved-split"]),
    ("0.5.1", ["lora-targets-saved-split"]),  # transformers 4: PEFT converts nothing
])
def test_on_a_mixture_of_experts_as_its_transformers_saves_it(cli: Cli, version: str, codes: list[str]) -> None:
    plan = _best(cli, "--model", "Qwen/Qwen3-30B-A3B", "--gpu", "h20", "--gpus", "8", "--len", "8192", "--lora-rank",
                 "32", "--lora-targets", "q_proj,k_proj,v_proj,o_proj", "--trinity-version", version)
    assert plan["caution_codes"] == codes
    split = dict(zip(plan["caution_codes"], plan["cautions"], strict=True)).get("lora-targets-saved-split")
    assert split == {"0.6": None, "0.5.1": PLAN_SPLIT, "0.5": SPLIT.format(models=(
        " with transformers 4 (Trinity 0.5.1's; 0.5.0 and 0.5.2 take 4 or 5), where PEFT converts nothing (with "
        "transformers 5, PEFT turns it into module names before the save, and lora-moe-config-unsaved says what "
        "fails)"), fix="plan for all-linear instead")}[version]


@pytest.mark.parametrize(("version", "codes"), [
    ("0.6", ["lora-moe-config-unsaved-refused", "lora-counted-as-full"]),  # refused under 0.6: test_release06b_s83
    ("0.5", ["lora-moe-config-unsaved", "lora-counted-as-full", "lora-targets-saved-split"]),  # before: no split line
    ("0.5.1", ["lora-counted-as-full", "lora-targets-saved-split"]),
])
def test_a_configs_own_regex_on_a_mixture_of_experts_by_the_same_check(cli: Cli, tmp_path: Path, version: str,
                                                                       codes: list[str]) -> None:
    config = tmp_path / "grpo.yaml"
    config.write_text(CONFIG.format(lora=f"  lora_configs: [{{lora_rank: 32, target_modules: '{QKVO}'}}]\n").replace(
        "Qwen/Qwen3-8B", "Qwen/Qwen3-30B-A3B").replace("gpu_per_node: 4", "gpu_per_node: 8"))
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--trinity-version", version, "--json")
    assert (status, json.loads(out)[0]["current"]["config_problem_codes"]) == (0, codes)


# (2) a config whose LoRA Trinity refuses: one line on what the plans count.

REFUSED_LINE = ("with model.lora_configs refused (lora-configs-refused says why), the verdict and the plans count full "
                "fine-tuning, which holds more than a LoRA run: fix model.lora_configs and plan again to count the "
                "LoRA run, or remove it to train every parameter")


@pytest.mark.parametrize("targets", ["[q_proj, k_proj, v_proj, o_proj]", "'q_proj,k_proj,v_proj,o_proj'"])
def test_a_refused_lora_config_says_the_plans_count_full_fine_tuning(cli: Cli, tmp_path: Path, targets: str) -> None:
    config = tmp_path / "grpo.yaml"
    config.write_text(CONFIG.format(lora=f"  lora_configs: [{{lora_rank: 32, target_modules: {targets}}}]\n"))
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--json")
    answer = json.loads(out)[0]
    assert (status, answer["plans"][0]["lora_rank"]) == (0, 0)
    current = answer["current"]
    assert current["config_problem_codes"] == ["lora-configs-refused", "lora-counted-as-full"]
    assert current["config_problems"][1] == REFUSED_LINE
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--explain")
    assert status == 0
    assert " ".join(out.split()).count(REFUSED_LINE) == 1
    # --lora-rank counts a LoRA run: no such line
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--lora-rank", "32", "--json")
    assert "lora-counted-as-full" not in json.loads(out)[0]["current"]["config_problem_codes"]


# (3) the evidence words where the cell is the plan's own setting.

def test_an_inferred_plan_of_the_cells_own_setting_runs_it() -> None:
    (lora,) = solver.plan("14B", gpu="h20", budget_gpus=4, max_model_len=32768, exact=True, lora_rank=32,
                          estimate="never")
    assert lora.best is not None and lora.best.evidence_text("H20-96GB") == (
        "inferred: the H20-96GB table for 4 GPUs says 'SP=4' at 32768 for full fine-tuning, which holds more than "
        "this LoRA run (rank 32), and this plan runs that same setting")
    (shorter,) = solver.plan("8B", gpu="a100", budget_gpus=4, max_model_len=28672, exact=True, sp=4)
    assert shorter.best is not None and shorter.best.evidence_text("A100-80GB") == (
        "inferred: the A100-80GB table for 4 GPUs says 'SP=4' at 32768, and this plan runs that same setting at "
        "fewer tokens")
