"""Small slips (session 73): a trainer-budget line with dynamic batch sizes off says what verl 0.8 or later does
then; a config of an own-code model asks the token budget its plans are judged at; the apply block leaves a config's
own ``trainer.save_hf_checkpoint`` as --write does, and the length row names a kept YaRN's factor; docs/memory.md
gives the host memory figures the command does."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from test_padbound_s71 import EXAMPLE, INTERNLM2, Cli

from solver.tables import load_catalog
from solver.trinity import trinity_config_problems

CATALOG = load_catalog()


def _trainer_budget_line(version: str | None) -> str:
    """The first ``token-budget-below-length`` line on a Qwen3-8B config on 4 GPUs whose trainer's dynamic batch sizes
    are off, its ref's own on, and whose trainer budget, which the ref takes, holds no sequence of 4096."""
    config = {"model": {"max_model_len": 4096}, "algorithm": {"algorithm_type": "grpo"}, "trainer": {
        "use_dynamic_bsz": False, "max_token_len_per_gpu": 1000, "trainer_config": {
            "actor_rollout_ref": {"ref": {"log_prob_use_dynamic_bsz": True}}}}}
    found = trinity_config_problems(config, CATALOG.model("Qwen3-8B"), 4, version=version)  # type: ignore[arg-type]
    return next(problem.words for problem in found if problem.code.value == "token-budget-below-length")


def test_a_trainer_budget_with_dynamic_batch_sizes_off_is_said_as_verl_0_8_reads_none():
    below = "trainer.max_token_len_per_gpu 1000 x SP 1 is below model.max_model_len 4096: "
    assert _trainer_budget_line(None) == (
        f"{below}Trinity with verl before 0.8 raises it to ceil(4096 / 1) = 4096 (Trinity 0.5.0 to its default, "
        "ceil(2 x 4096 / 1) = 8192), and Trinity 0.6 on verl 0.8 or later reads no token budget with dynamic batch "
        "sizes off")
    assert _trainer_budget_line("0.6") == (
        f"{below}Trinity 0.6 on verl before 0.8 raises it to ceil(4096 / 1) = 4096, and on verl 0.8 or later reads no "
        "token budget with dynamic batch sizes off")


def test_an_own_code_model_with_dynamic_batch_sizes_off_asks_the_default_budget(cli: Cli, tmp_path: Path):
    config: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text())
    config["trainer"].update(use_dynamic_bsz=False, use_remove_padding=False)
    given = tmp_path / "off.yaml"
    given.write_text(yaml.safe_dump(config))
    status, out, err = cli("--from-config", str(given), "--model-config", str(INTERNLM2), "--gpu", "h100", "--json")
    assert status == 0, err
    # one sequence per micro-batch lowers no budget of a model whose plans read none: the query is at the default
    answer = json.loads(out)[0]
    assert (answer["token_budget"], answer["current"]["max_token_len_per_gpu"]) == ("default", None)


def test_the_apply_block_leaves_a_configs_own_checkpoint_as_write_does(cli: Cli, tmp_path: Path):
    config: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text())
    config["trainer"]["save_hf_checkpoint"] = "last"
    given, written = tmp_path / "ckpt.yaml", tmp_path / "written.yaml"
    given.write_text(yaml.safe_dump(config))
    flags = ("--from-config", str(given), "--gpu", "h100", "--offload")
    status, out, err = cli(*flags, "--write", str(written))
    assert status == 0, err
    assert yaml.safe_load(written.read_text())["trainer"]["save_hf_checkpoint"] == "last"
    kept = ("# trainer.save_hf_checkpoint: ckpt.yaml's stays, as --write keeps it: the plan's never, as in the A100 "
            "offload measurements of Trinity-RFT's guide, is for a config without one")
    status, view, err = cli(*flags)
    assert status == 0, err
    for lines in (out.splitlines(), view.splitlines()):
        assert [line for line in lines if "save_hf_checkpoint" in line] == [kept]
    # a config without one gets the plan's, as --write writes it
    del config["trainer"]["save_hf_checkpoint"]
    given.write_text(yaml.safe_dump(config))
    status, view, err = cli(*flags)
    assert status == 0, err
    lines = view.splitlines()
    assert lines[lines.index("trainer.save_hf_checkpoint: never") - 1] == (
        "# as in the A100 offload measurements of Trinity-RFT's guide:")


def test_the_apply_block_gives_the_plans_checkpoint_where_the_config_has_it_already(cli: Cli, tmp_path: Path):
    # s88: a config that says never, as the plan does, was told its own "stays" and that the plan's never "is for a
    # config without one", as if the two differed
    config: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text())
    config["trainer"]["save_hf_checkpoint"] = "never"
    given = tmp_path / "never.yaml"
    given.write_text(yaml.safe_dump(config))
    status, view, err = cli("--from-config", str(given), "--gpu", "h100", "--offload")
    assert status == 0, err
    lines = view.splitlines()
    assert [line for line in lines if "save_hf_checkpoint" in line] == ["trainer.save_hf_checkpoint: never"]
    assert lines[lines.index("trainer.save_hf_checkpoint: never") - 1] == (
        "# as in the A100 offload measurements of Trinity-RFT's guide:")


def cards_view(cli: Cli, tmp_path: Path, factor: object, original: object, **sections: object) -> tuple[str, str]:
    """`--from-config`'s view on H200s of ``cards.yaml``, a Qwen3-4B config at 131072 tokens with its own YaRN of
    `factor` over `original` (and `sections` more): its ``max_model_len`` row, and the whole of it."""
    config = {**sections, "model": {"model_path": "Qwen/Qwen3-4B", "max_model_len": 131072, "rope_scaling": {
        "rope_type": "yarn", "factor": factor, "original_max_position_embeddings": original}},
        "cluster": {"node_num": 1, "gpu_per_node": 8}, "explorer": {"rollout_model": {"engine_num": 4}}}
    given = tmp_path / "cards.yaml"
    given.write_text(yaml.safe_dump(config))
    status, out, err = cli("--from-config", str(given), "--gpu", "h200")
    assert status == 0, err
    [row] = [line for line in out.splitlines() if line.startswith("max_model_len ")]
    return row, out


def test_the_length_row_names_the_kept_yarns_factor_as_the_config_writes_it(cli: Cli, tmp_path: Path):
    assert cards_view(cli, tmp_path, 4, 32768)[0] == (
        "max_model_len  131072 (YaRN rope scaling, cards.yaml's factor 4 over 32768, which stays)")


def test_memory_md_gives_the_reference_models_host_memory_as_the_command_does(cli: Cli):
    shown = []
    for flag in ("--reference", "--no-reference"):
        # Trinity 0.6 on H100s: rank 0 loading the model, as the page's figures are (it says so)
        status, out, err = cli("--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "32768", "--host-ram", "1000",
                               "--no-offload", flag, "--trinity-version", "0.6")
        assert status == 0, err
        shown.append(re.findall(r"^host memory +([0-9.]+) GiB per node while the model loads", out, re.MULTILINE))
    [[whole], [load]] = shown
    page = " ".join((Path(__file__).parent.parent / "docs" / "memory.md").read_text(encoding="utf-8").split())
    reference = f"{float(whole) - float(load):.1f}"
    assert (f"Qwen3-8B on a node of 8 GPUs: without Offload {whole} GiB ({load} for the load, as `--no-reference` "
            f"shows it, and {reference} for the reference model's fp32 shards, which the load's 4 bytes a parameter "
            f"would make {load} too: the rounding)") in page
