"""Review of s80's LoRA merges (review80b). (1) ``solve --from-config C --lora-exclude R``, where the exclusions
leave the config's own adapter's modules as they are, said ``--lora-targets '<the config's regex>' and --lora-exclude
R count ..., in place of the config's own``: a flag never given, and no change; the LoRA note now names only the
flags that change the config's adapter (`lora_targets_given`) and, where the counted modules and rank are the
config's own (`adapts_the_same`), says so. ``--lora-targets all-linear --lora-exclude R`` named ``--lora-exclude``
alone. (2) The check command of that answer read back from JSON (``solver.trinity_config``) added
``--lora-targets '<the config's regex>'``, which the command's own did not. (3) Exclusions refused for what they do
named a ``--lora-targets`` never given (the config's own regex beside ``--lora-exclude`` alone; ``all-linear`` beside
an exclusion that leaves a routed expert's fused half alone, whose fix said to give all-linear); they are named as
what was given now. Trinity writes ``exclude_modules``, typed a string, whole into each checkpoint's
``adapter_config.json`` (``_save_lora`` turns ``target_modules`` alone into a list: ``trainer/verl/workers.py:177`` in
0.6.0, ``trainer/verl/fsdp_workers.py:977`` in 0.5.1), so ``lora-targets-saved-split`` rightly says nothing of it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.query import lora_targets_given
from solver.tables import QueryError
from solver.tables.peft_match import QWEN3, QWEN3_MOE, adapts_the_same
from solver.tables.peft_names import LoraTargets

Cli = Callable[..., tuple[int, str, str]]
QV, MLP = ".*\\.(q_proj|v_proj)", ".*\\.mlp\\..*"
CONFIG = ("algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
          "buffer: {batch_size: 16, train_batch_size: 64}\nmodel:\n  model_path: Qwen/Qwen3-8B\n"
          "  max_model_len: 8192\n  lora_configs: [{lora_rank: 64, target_modules: '.*\\.(q_proj|v_proj)'}]\n"
          "explorer:\n  rollout_model: {engine_num: 4, tensor_parallel_size: 1}\n")
"""Qwen3-8B with its own LoRA adapter at rank 64 on q_proj and v_proj, 4 trainer GPUs."""
HEAD = ("with LoRA (model.lora_configs) the trainer holds gradients and optimizer states for the adapter alone: ")
TAIL = ", and the tables, which measured full fine-tuning, vouch for it by inference and refute nothing"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "qv.yaml"
    path.write_text(CONFIG)
    return path


def _note(cli: Cli, config: Path, *flags: str) -> str:
    """The LoRA note (lora-counted-as-full) of `config`'s verdict with `flags`, from its JSON."""
    status, out, err = cli("--from-config", str(config), "--gpu", "A100-80GB", *flags, "--json")
    assert (status, err) == (0, "")
    (answer,) = json.loads(out)
    codes, problems = answer["current"]["config_problem_codes"], answer["current"]["config_problems"]
    return str(problems[codes.index("lora-counted-as-full")])


def test_exclusions_that_leave_the_configs_modules_name_the_flag_and_no_change(cli: Cli, config: Path) -> None:
    assert _note(cli, config, "--lora-exclude", MLP) == (
        f"{HEAD}--lora-exclude '.*\\.mlp\\..*' counts LoRA rank 64's states (the frozen base's fp32 weights and the "
        f"adapter's on q_proj and v_proj alone), the config's own adapter's, as its target_modules adapt the same "
        f"modules{TAIL}")
    # another regex of the same modules, likewise; another rank on them: in place of the rank alone
    assert _note(cli, config, "--lora-targets", ".*\\.(v_proj|q_proj)") == (
        f"{HEAD}--lora-targets '.*\\.(v_proj|q_proj)' counts LoRA rank 64's states (the frozen base's fp32 weights "
        f"and the adapter's on q_proj and v_proj alone), the config's own adapter's, as its target_modules adapt the "
        f"same modules{TAIL}")
    assert _note(cli, config, "--lora-rank", "16", "--lora-exclude", MLP) == (
        f"{HEAD}--lora-rank 16 and --lora-exclude '.*\\.mlp\\..*' count LoRA rank 16's states (the frozen base's fp32 "
        f"weights and the adapter's on q_proj and v_proj alone), in place of the config's own LoRA rank 64's{TAIL}")


def test_flags_that_change_the_modules_are_each_named(cli: Cli, config: Path) -> None:
    assert _note(cli, config, "--lora-exclude", ".*\\.q_proj") == (
        f"{HEAD}--lora-exclude '.*\\.q_proj' counts LoRA rank 64's states (the frozen base's fp32 weights and the "
        f"adapter's on v_proj alone), in place of the config's own LoRA rank 64's on its target_modules{TAIL}")
    # before: --lora-exclude alone, as if the exclusions were taken from the config's own q/v
    assert _note(cli, config, "--lora-targets", "all-linear", "--lora-exclude", ".*\\.q_proj") == (
        f"{HEAD}--lora-targets 'all-linear' and --lora-exclude '.*\\.q_proj' count LoRA rank 64's states (the frozen "
        "base's fp32 weights and the adapter's on k_proj, v_proj, o_proj, gate_proj, up_proj and down_proj alone), in "
        f"place of the config's own LoRA rank 64's on its target_modules{TAIL}")


def test_the_check_command_read_back_from_json_is_the_commands_own(cli: Cli, config: Path) -> None:
    flags = ("--from-config", str(config), "--gpu", "A100-80GB", "--lora-exclude", MLP)
    status, emitted, _ = cli(*flags, "--emit", "trinity")
    check = "#   solve --from-config CONFIG --check --gpu A100-80GB --lora-exclude '.*\\.mlp\\..*' --critic none\n"
    assert status == 0 and check in emitted
    status, out, _ = cli(*flags, "--json")
    fragment = solver.trinity_config(solver.Answer.model_validate(json.loads(out)[0]))
    assert check in fragment  # before: with --lora-targets '.*\.(q_proj|v_proj)' too
    # targets given with exclusions keep both, the regex alone drops the config's exclusions: both given
    status, out, _ = cli("--from-config", str(config), "--gpu", "A100-80GB", "--lora-targets", "all-linear",
                         "--lora-exclude", MLP, "--json")
    fragment = solver.trinity_config(solver.Answer.model_validate(json.loads(out)[0]))
    assert ("#   solve --from-config CONFIG --check --gpu A100-80GB --lora-targets all-linear --lora-exclude "
            "'.*\\.mlp\\..*' --critic none\n") in fragment


def test_the_flags_given_for_each_change_of_targets() -> None:
    own = LoraTargets(QV)
    assert [lora_targets_given(own, counted) for counted in (
        LoraTargets(QV), LoraTargets(QV, MLP), LoraTargets(".*\\.q_proj"), None, LoraTargets("all-linear", MLP))] == [
        (None, None), (None, MLP), (".*\\.q_proj", None), ("all-linear", None), ("all-linear", MLP)]
    # a config's own exclusions: dropped only by a regex given alone; replaced by other exclusions alone
    excluding = LoraTargets("all-linear", MLP)
    assert [lora_targets_given(excluding, counted) for counted in (
        None, LoraTargets("all-linear", ".*\\.q_proj"), LoraTargets(QV, MLP))] == [
        ("all-linear", None), (None, ".*\\.q_proj"), (QV, MLP)]
    assert lora_targets_given(None, LoraTargets("all-linear", MLP)) == (None, MLP)


def test_adapts_the_same_compares_modules_and_routed_experts() -> None:
    assert adapts_the_same((QV, None), (QV, MLP), QWEN3)
    assert adapts_the_same(("all-linear", None), (".*_proj", None), QWEN3)
    assert not adapts_the_same((QV, None), (QV, ".*\\.q_proj"), QWEN3)
    # transformers 4's routed experts: four of 128 adapted is not all of them
    separate = solver.load_catalog().model("Qwen3-30B-A3B").peft_names_of("separate")
    assert not adapts_the_same((".*experts\\.\\d+\\.up_proj", None), (".*experts\\.[0-3]\\.up_proj", None), separate)
    assert adapts_the_same(("all-linear", None), ("all-linear", ".*\\.lm_head"), QWEN3_MOE)


def test_exclusions_refused_name_the_configs_targets_not_a_flag(cli: Cli, config: Path) -> None:
    status, out, err = cli("--from-config", str(config), "--gpu", "A100-80GB", "--lora-exclude", ".*_proj")
    assert (status, out, err) == (2, "", (
        "solve: error: --lora-exclude '.*_proj', on Qwen3-8B, leaves out every module the config's target_modules "
        "'.*\\.(q_proj|v_proj)' matches (\"No modules were targeted for adaptation\"): exclude fewer, or remove it\n"))


FUSED = ("on Qwen3-30B-A3B, matches the routed experts' gate_proj without their up_proj, which PEFT fuses into "
         "gate_up_proj (\"Cannot convert PEFT target(s) ... because they are fused\"): exclude fewer, or remove it")


def test_exclusions_that_leave_a_fused_half_alone_are_refused_as_theirs(cli: Cli, tmp_path: Path) -> None:
    moe = ("--model", "30B-A3B", "--gpu", "h100", "--gpus", "8", "--len", "8192", "--lora-rank", "8",
           "--trinity-version", "0.6")
    status, out, err = cli(*moe, "--lora-targets", ".*\\.(gate|up)_proj", "--lora-exclude", ".*\\.up_proj")
    assert (status, out, err) == (2, "", (
        f"solve: error: --lora-targets '.*\\.(gate|up)_proj' less --lora-exclude '.*\\.up_proj', {FUSED}\n"))
    # all-linear's routed experts are converted to target_parameters whatever exclude_modules says (fragcheck4, built
    # with PEFT 0.21.2 under transformers 5): all-linear less '.*\.up_proj' adapts them whole, so it is taken, on
    # the command line, in the API and in a config alike
    assert cli(*moe, "--lora-exclude", ".*\\.up_proj")[0] == 0
    (answer,) = solver.plan("30B-A3B", gpu="h100", budget_gpus=8, max_model_len=8192, lora_rank=8,
                            trinity_version="0.6", lora_exclude_modules=".*\\.up_proj")
    assert answer.plans and answer.plans[0].lora_exclude_modules == ".*\\.up_proj"
    path = tmp_path / "moe.yaml"
    path.write_text(CONFIG.replace("Qwen/Qwen3-8B", "Qwen/Qwen3-30B-A3B").replace(
        "target_modules: '.*\\.(q_proj|v_proj)'", "target_modules: all-linear, exclude_modules: '.*\\.up_proj'"))
    status, out, _ = cli("--from-config", str(path), "--gpu", "H100-80GB", "--trinity-version", "0.6", "--json")
    assert status == 0 and "lora-configs-refused" not in json.loads(out)[0]["current"]["config_problem_codes"]


def test_exclusions_alone_are_not_cautioned_as_saved_split(cli: Cli) -> None:
    base = ("--model", "8B", "--gpu", "h100", "--len", "8192", "--gpus", "4", "--lora-rank", "64", "--json")
    status, out, _ = cli(*base, "--lora-exclude", MLP)
    assert (status, json.loads(out)[0]["plans"][0]["caution_codes"]) == (0, [])
    status, out, _ = cli(*base, "--lora-targets", ".*\\.q_proj")
    assert (status, json.loads(out)[0]["plans"][0]["caution_codes"]) == (0, ["lora-targets-saved-split"])


def test_config_query_names_the_configs_targets_unless_a_source_is_given(config: Path) -> None:
    from solver.api import config_query
    from solver.trinity import read_trinity_config

    read = read_trinity_config(CONFIG, str(config), {})
    for source, words in ((None, "the config's target_modules"), ("my targets", "my targets")):
        with pytest.raises(QueryError) as raised:
            config_query(solver.load_catalog(), read, gpu="A100-80GB", lora_exclude_modules=".*_proj",
                         lora_targets_source=source)
        assert str(raised.value) == (
            f"lora_exclude_modules '.*_proj', on Qwen3-8B, leaves out every module {words} '.*\\.(q_proj|v_proj)' "
            "matches (\"No modules were targeted for adaptation\"): exclude fewer, or remove it")


@pytest.mark.parametrize("command", [("--len", "8192"), ("memory", "--gpus", "4", "--len", "8192"), ("map",)])
def test_empty_exclusions_are_refused_as_a_cluster_jobs_are(cli: Cli, command: tuple[str, ...]) -> None:
    # PEFT leaves nothing out for an empty exclude_modules (falsy): before, the plan said "less exclude_modules ''"
    name = "solve" if command[0] == "--len" else f"solve {command[0]}"
    status, out, err = cli(*command, "--model", "8B", "--gpu", "h100", "--lora-rank", "64",
                           "--lora-exclude", " ")
    assert (status, out, err) == (2, "", (f"{name}: error: --lora-exclude is empty: give a regular expression "
                                          "that matches whole names, such as .*\\.v_proj, or remove it\n"))
    with pytest.raises(QueryError, match="^lora_exclude_modules is empty: give a regular expression"):
        solver.plan("8B", gpu="h100", max_model_len=8192, lora_rank=64, lora_exclude_modules="")
