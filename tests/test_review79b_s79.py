"""Review79b (s79) of the session's later merges: a LoRA regex past Python's own limits (``a{99999999999}``, groups
nested thousands deep) is refused as no regular expression, in one line, where it crashed (exit 70) in
``--lora-targets`` and in a config's ``target_modules`` alike (`solver.tables.peft_match.peft_regex`);
``--lora-targets`` beside ``--from-config`` is what the verdict's LoRA line names and what the check command
carries, not the config's own ``target_modules``, which the config keeps, and ``--write`` refuses targets that hold
fewer adapter parameters than those; `fragment_for`'s ``placed_on`` must be printable; `PeftModuleNames` holds no
flag solver/ no longer reads."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.query import QueryError, given_lora_targets
from solver.rules import API_OPTIONS, COMMAND_OPTIONS
from solver.tables import load_catalog
from solver.tables.peft_match import peft_regex
from solver.tables.peft_names import PeftModuleNames

Cli = Callable[..., tuple[int, str, str]]
CATALOG = load_catalog()
FORMS = ("give all-linear (Trinity's default: every linear layer but the output projection), module names separated "
         "by commas (q_proj,v_proj) or a regular expression that PEFT matches whole module names with "
         "(.*\\.(q_proj|v_proj))")
BIG = "a{99999999999}"
CONFIG = """model:
  model_path: Qwen/Qwen3-8B
  max_model_len: 16384
  lora_configs:
    - name: mine
      lora_rank: 64
      lora_alpha: 128
      target_modules: '%s'
algorithm:
  algorithm_type: grpo
cluster:
  node_num: 1
  gpu_per_node: 8
buffer:
  batch_size: 98
"""
QV = ".*\\.(q_proj|v_proj)"
HEAD = ("with LoRA (model.lora_configs) the trainer holds gradients and optimizer states for the adapter alone: ")
TAIL = ", and the tables, which measured full fine-tuning, vouch for it by inference and refute nothing"


def _config(tmp_path: Path, targets: str) -> Path:
    path = tmp_path / "grpo.yaml"
    path.write_text(CONFIG % targets, encoding="utf-8")
    return path


def _lora_line(out: str) -> str:
    words = " ".join(out.split())
    (line,) = re.findall(r"but: (with LoRA \(model\.lora_configs\).*?refute nothing)", words)
    return line


# (1) Before: OverflowError's traceback, "internal error", exit 70, for both.

def test_a_regex_past_pythons_limits_is_no_regular_expression() -> None:
    for pattern, why in ((BIG, "the repetition number is too large"),
                         ("(" * 5000 + ")" * 5000, "maximum recursion depth exceeded")):
        with pytest.raises(re.error, match=why):
            peft_regex(pattern)
    assert peft_regex(QV).fullmatch("model.layers.0.self_attn.v_proj")


def test_the_option_refuses_it_in_one_line(cli: Cli) -> None:
    status, out, err = cli("--model", "Qwen3-8B", "--gpu", "A100-80GB", "--len", "8k", "--lora-rank", "8",
                           "--lora-targets", BIG)
    assert (status, out) == (2, "")
    assert err == (f"solve: error: --lora-targets '{BIG}' is no regular expression (the repetition number is too "
                   f"large): {FORMS}\n")
    status, _, err = cli("memory", "--model", "Qwen3-8B", "--gpu", "A100-80GB", "--gpus", "1", "--len", "8k",
                         "--lora-rank", "8", "--lora-targets", BIG)
    assert status == 2 and err.startswith(f"solve memory: error: --lora-targets '{BIG}' is no regular expression")


def test_a_long_value_is_cut_in_the_refusal() -> None:
    model = CATALOG.model("Qwen3-8B")
    with pytest.raises(QueryError) as raised:
        given_lora_targets("(" * 5000 + ")" * 5000, 8, model, "fused", API_OPTIONS)
    assert str(raised.value).startswith(f"lora_targets '{'(' * 57}...' is no regular expression (maximum recursion")
    assert len(str(raised.value)) < 400


def test_a_configs_target_modules_past_the_limits_is_refused(cli: Cli, tmp_path: Path) -> None:
    status, out, err = cli("--from-config", str(_config(tmp_path, BIG)), "--gpu", "A100-80GB", "--top", "1")
    assert status == 0 and "Traceback" not in err
    assert (f"refused: model.lora_configs[0].target_modules '{BIG}' is no regular expression (the repetition number "
            "is too large): peft matches it whole") in " ".join(out.split())


# (2) --lora-targets beside a config with LoRA of its own. Before: the verdict's line said the config's q and v were
# counted ("its target_modules '.*\.(q_proj|v_proj)' matches q_proj and v_proj alone, on which alone its adapter is
# counted") while the verdict and the plans counted q_proj alone; the check command left --lora-targets out, so it
# judged the kept q and v adapter, not the plan's.

def test_the_verdict_names_the_targets_it_counts(cli: Cli, tmp_path: Path) -> None:
    config = str(_config(tmp_path, QV))
    status, out, _ = cli("--from-config", config, "--gpu", "A100-80GB", "--top", "1", "--lora-targets", "q_proj")
    assert status == 0 and _lora_line(out) == (
        f"{HEAD}--lora-targets '.*\\.q_proj' counts LoRA rank 64's states (the frozen base's fp32 weights and the "
        f"adapter's on q_proj alone), in place of the config's own LoRA rank 64's on its target_modules{TAIL}")
    _, out, _ = cli("--from-config", config, "--gpu", "A100-80GB", "--top", "1", "--lora-targets", "all-linear")
    assert _lora_line(out) == (
        f"{HEAD}--lora-targets 'all-linear' counts LoRA rank 64's states (the frozen base's fp32 weights and the "
        "adapter's on every linear layer but the output projection), in place of the config's own LoRA rank 64's on "
        f"its target_modules{TAIL}")
    _, out, _ = cli("--from-config", config, "--gpu", "A100-80GB", "--top", "1", "--lora-rank", "16",
                    "--lora-targets", "q_proj,k_proj")
    assert _lora_line(out) == (
        f"{HEAD}--lora-rank 16 and --lora-targets '.*\\.(q_proj|k_proj)' count LoRA rank 16's states (the frozen "
        "base's fp32 weights and the adapter's on q_proj and k_proj alone), in place of the config's own LoRA rank "
        f"64's on its target_modules{TAIL}")
    # another rank alone counts the config's own targets, which it keeps (since adapterkeep_s80: all-linear's before)
    _, out, _ = cli("--from-config", config, "--gpu", "A100-80GB", "--top", "1", "--lora-rank", "16")
    assert _lora_line(out) == (
        f"{HEAD}--lora-rank 16 counts LoRA rank 16's states (the frozen base's fp32 weights and the adapter's on "
        f"q_proj and v_proj alone), in place of the config's own LoRA rank 64's{TAIL}")
    _, out, _ = cli("--from-config", config, "--gpu", "A100-80GB", "--top", "1", "--lora-targets", "q_proj,v_proj")
    assert _lora_line(out) == (
        f"{HEAD}the verdict and the plans count LoRA rank 64's states (the frozen base's fp32 weights and the "
        "adapter's, unless --lora-rank gives another; its target_modules '.*\\.(q_proj|v_proj)' matches q_proj and "
        f"v_proj alone, on which alone its adapter is counted){TAIL}")


def test_the_check_command_carries_the_targets(cli: Cli, tmp_path: Path) -> None:
    config, written = _config(tmp_path, QV), tmp_path / "out.yaml"
    # (targets that adapt more than the config's own: fewer, --emit refuses as --write does, test_smallslips33_s79)
    status, out, _ = cli("--from-config", str(config), "--gpu", "A100-80GB", "--lora-targets", "q_proj,k_proj,v_proj",
                         "--emit", "trinity")
    (line,) = [line for line in out.splitlines() if " solve --from-config" in line]
    assert status == 0 and line.split(" solve ", 1)[1] == (
        "--from-config CONFIG --check --gpu A100-80GB --lora-targets q_proj,k_proj,v_proj --critic none")  # rank 64's
    assert "lora_configs" not in out  # the config keeps its own adapter
    status, _, _ = cli("--from-config", str(config), "--gpu", "A100-80GB", "--lora-targets", "all-linear", "--write",
                       str(written))
    (line,) = [line for line in written.read_text().splitlines() if " solve --from-config" in line]
    assert status == 0 and line.split(" solve ", 1)[1] == (
        f"--from-config {written} --check --gpu A100-80GB --lora-targets all-linear")
    assert "target_modules: '.*\\.(q_proj|v_proj)'" in written.read_text()  # kept: all-linear's plan holds more
    # without --lora-targets, none (the config's own targets are read from it)
    status, out, _ = cli("--from-config", str(config), "--gpu", "A100-80GB", "--emit", "trinity")
    assert status == 0 and "--lora-targets" not in out


def test_the_options_keyword_names_it_for_the_api() -> None:
    model = CATALOG.model("Qwen3-8B")
    with pytest.raises(QueryError, match=r"^lora_targets 'a\{99999999999\}' is no regular expression"):
        given_lora_targets(BIG, 8, model, "fused", API_OPTIONS)
    with pytest.raises(QueryError, match=r"^--lora-targets 'a\{99999999999\}' is no regular expression"):
        given_lora_targets(BIG, 8, model, "fused", COMMAND_OPTIONS)


# (3) Fields solver/ stopped reading when planlora counted all-linear's adapter module by module.

def test_the_module_names_hold_no_unread_flag() -> None:
    assert PeftModuleNames._fields == ("model_type", "adapted", "others", "router", "fused", "separate_experts",
                                       "assumed", "expert_count")


def test_write_refuses_targets_that_count_fewer_parameters_than_the_configs_own(cli: Cli, tmp_path: Path) -> None:
    # As it refuses another rank: the written config keeps its q and v adapter, which the plan on q alone undercounts.
    config, written = _config(tmp_path, QV), tmp_path / "out.yaml"
    status, out, err = cli("--from-config", str(config), "--gpu", "A100-80GB", "--lora-targets", "q_proj", "--write",
                           str(written))
    assert (status, out, written.exists()) == (2, "", False)
    assert err == (f"solve: error: --from-config {config}: the plan counted its LoRA adapter on '.*\\.q_proj' "
                   "(18,874,368 parameters), but the config's own target_modules (model.lora_configs), which --write "
                   "keeps, adapt 30,670,848: plan on them (leave --lora-targets out), or set them to '.*\\.q_proj' "
                   "first\n")
    status, _, _ = cli("--from-config", str(config), "--gpu", "A100-80GB", "--lora-targets", "q_proj,v_proj",
                       "--write", str(written))
    assert status == 0 and written.exists()


# (4) fragment_for's placed_on (persona55) goes on a header comment line: a line break would end the comment and write
# YAML of its own. Before: "# placed on x" then "model: {max_model_len: 1}" as a key of the fragment.

def test_a_placed_on_with_a_line_break_is_refused() -> None:
    from solver.api import _answer_keys
    from solver.trinity import fragment_for

    answer = solver.plan("Qwen3-4B", gpu="A100-80GB", budget_gpus=4, max_model_len=32768, rollout_gpus=2)[0]
    _, keys = _answer_keys("trinity_config", answer, None, None)
    with pytest.raises(QueryError) as raised:
        fragment_for(keys, gpu="A100-80GB", placed_on="x\nmodel: {max_model_len: 1}")
    assert str(raised.value) == ("placed_on must be a printable string or None, got 'x\\nmodel: {max_model_len: "
                                 "1}'")
    with pytest.raises(QueryError) as raised:  # mutants47: running_now goes on a header line too
        fragment_for(keys, gpu="A100-80GB", running_now="x\ny: 1")
    assert str(raised.value) == "running_now must be a printable string or None, got 'x\\ny: 1'"
    assert "# placed on node 2 of pool a100 (GPUs 0-1)" in fragment_for(
        keys, gpu="A100-80GB", placed_on="node 2 of pool a100 (GPUs 0-1)")[0].splitlines()
