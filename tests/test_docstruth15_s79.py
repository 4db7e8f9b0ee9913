"""The docs' claims on session 79's changes, held to the code (docstruth15): memory.md's `--lora-targets` command (it
lacked the --gpu, --gpus and --len that `solve memory` requires); `--lora-targets` refused where PEFT refuses the
targets, as a config's `target_modules` is (memory.md's Mixtral `.*\\.w1` that 0.6 refuses, trinity.md's Qwen3-MoE
`.*gate_proj`: they were counted and written into a fragment its own check refuses); `--from-config --lora-rank`'s
apply lines over a config without LoRA (cli.md: they add `model.lora_configs`, which they left out); api.md's
`trinity_config(version=...)`, which names the version given, not the plan's own patch; cli.md's pre-release refusal
and planner.md's shared budget note, word for word."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

import solver

Cli = Callable[..., tuple[int, str, str]]

ROOT = Path(__file__).resolve().parent.parent
MIXTRAL = str(ROOT / "tests" / "data" / "hf-configs" / "Mixtral-8x7B-v0.1.json")
TRINITY_EXAMPLE = ROOT / "docs" / "examples" / "trinity.yaml"


def _page(name: str) -> str:
    """A docs page (README.md or docs/NAME), its lines joined by single spaces."""
    path = ROOT / name if name == "README.md" else ROOT / "docs" / name
    return " ".join(path.read_text(encoding="utf-8").split())


def test_memory_pages_lora_targets_command_runs_and_gives_the_figures_it_quotes(cli: Cli):
    quoted = re.search(r"\(`solve memory (--model 8B [^`]*--lora-targets q_proj,v_proj --json)`: `lora_parameters` "
                       r"(\d+), `lora_target_modules` `([^`]+)`, `total_gib` ([\d.]+)\)", _page("memory.md"))
    assert quoted is not None
    status, out, _ = cli("memory", *shlex.split(quoted[1]))
    estimate = json.loads(out)
    assert status == 0
    assert (estimate["lora_parameters"], estimate["lora_target_modules"]) == (int(quoted[2]), quoted[3])
    assert f"{estimate['total_gib']:.2f}" == quoted[4]


FUSED_HALF = ("matches the routed experts' {alone} without their {other}, which PEFT fuses into gate_up_proj "
              "(\"Cannot convert PEFT target(s) ... because they are fused\"): give all-linear")


@pytest.mark.parametrize(("model", "targets", "release", "alone", "other"), [
    (("--model-config", MIXTRAL), ".*\\.w1", "0.6", "w1", "w3"),
    (("--model-config", MIXTRAL), ".*\\.w1", None, "w1", "w3"),
    (("--model", "30B-A3B"), ".*gate_proj", "0.6", "gate_proj", "up_proj"),
])
def test_lora_targets_that_peft_refuses_on_the_releases_names_are_refused(
        cli: Cli, model: tuple[str, str], targets: str, release: str | None, alone: str, other: str):
    version = () if release is None else ("--trinity-version", release)
    name = "Mixtral-8x7B-v0.1" if model[0] == "--model-config" else "Qwen3-30B-A3B"
    for command in (("memory",), ()):
        status, _, err = cli(*command, *model, "--gpu", "h200", "--gpus", "8", "--len", "4096", "--lora-rank", "16",
                             "--lora-targets", targets, *version)
        said = f"--lora-targets '{targets}', on {name}, {FUSED_HALF.format(alone=alone, other=other)}"
        assert (status, err.splitlines()[-1].split(": error: ", 1)[1][:len(said)]) == (2, said)


def test_the_api_refuses_them_in_its_keywords_words():
    with pytest.raises(solver.QueryError) as caught:
        solver.estimate_memory("30B-A3B", "h200", 8, 4096, lora_rank=16, lora_targets=".*gate_proj")
    said = f"lora_targets '.*gate_proj', on Qwen3-30B-A3B, {FUSED_HALF.format(alone='gate_proj', other='up_proj')}"
    assert str(caught.value)[:len(said)] == said


@pytest.mark.parametrize(("release", "parameters"), [("0.5.1", 75_497_472), ("0.5.2", 134_217_728)])
def test_a_fused_half_is_taken_where_a_transformers_of_the_release_takes_it(cli: Cli, release: str, parameters: int):
    # memory.md: under 0.5.1 (transformers 4) each expert's w1 at rank 16, 16 x (4096 + 14336) x 8 x 32; 0.5.2 takes
    # either transformers, which a config's check cautions of (lora-targets-one-transformers): the larger counted
    status, out, _ = cli("memory", "--model-config", MIXTRAL, "--gpu", "h200", "--gpus", "8", "--len", "4096",
                         "--lora-rank", "16", "--lora-targets", ".*\\.w1", "--trinity-version", release, "--json")
    assert (status, json.loads(out)["lora_parameters"]) == (0, parameters)
    if release == "0.5.1":
        assert "16 x (4096 + 14336) x 8 x 32 = 75,497,472 parameters" in _page("memory.md")


def test_from_config_lora_rank_apply_lines_add_the_adapter_to_a_config_without_lora(cli: Cli, tmp_path: Path):
    assert ("a config without LoRA gets `model.lora_configs: [{lora_rank: R}]` (`--emit trinity`, the apply lines, "
            "`--write`)") in _page("cli.md")
    status, out, _ = cli("--from-config", str(TRINITY_EXAMPLE), "--gpu", "a100", "--lora-rank", "8",
                         "--lora-targets", "q_proj,v_proj")
    assert status == 0
    assert "\nmodel.lora_configs: [{lora_rank: 8, target_modules: '.*\\.(q_proj|v_proj)'}]\n" in out
    own = tmp_path / "own.yaml"  # a config's own LoRA stays: no line would replace it
    own.write_text(TRINITY_EXAMPLE.read_text(encoding="utf-8").replace(
        "  max_model_len: 32768  # prompt + response\n",
        "  max_model_len: 32768  # prompt + response\n  lora_configs: [{lora_rank: 16}]\n"), encoding="utf-8")
    status, out, _ = cli("--from-config", str(own), "--gpu", "a100")
    assert status == 0 and "\nmodel.lora_configs:" not in out and "LoRA rank 16's states" in out


def test_trinity_config_names_the_version_given_not_the_plans_patch():
    assert ("`0.5.0` for `\"0.5.0\"` (a `version` given is the release it names: `version=\"0.5\"` names `0.5`, where "
            "the plan was made for `\"0.5.0\"` too)") in _page("api.md")
    (answer,) = solver.plan("8B", gpu="h100", max_model_len=8192, budget_gpus=2, trinity_version="0.5.0")

    def check_line(version: str | None) -> str:
        return next(line for line in solver.trinity_config(answer, version=version).splitlines()
                    if "solve --from-config" in line)

    assert check_line(None).endswith(" --trinity-version 0.5.0")
    assert check_line("0.5").endswith(" --trinity-version 0.5")


def test_cli_pages_pre_release_refusal_is_the_one_printed(cli: Cli):
    quoted = re.search(r"`(solve: error: argument --trinity-version: [^`]*got '0\.6\.0rc1'[^`]*)`", _page("cli.md"))
    assert quoted is not None
    status, _, err = cli("--model", "8B", "--gpu", "h100", "--gpus", "2", "--len", "8192",
                         "--trinity-version", "0.6.0rc1")
    assert (status, err.splitlines()[-1]) == (2, quoted[1])


def test_planner_pages_shared_budget_note_is_the_one_printed(cli: Cli):
    quoted = re.search(r"\(`(solve: note: without --gpus, the GPU types answered share [^`]*)`\)", _page("planner.md"))
    assert quoted is not None
    status, _, err = cli("--model", "8B", "--gpu", "a100,h100", "--len", "8192")
    assert status == 0 and quoted[1] in err.splitlines()
