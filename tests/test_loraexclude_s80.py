"""Session 80, loraexclude: ``--lora-exclude REGEX`` on the command line. A cluster job and the API could leave
modules out of a LoRA adapter (PEFT's ``exclude_modules``), but ``solve``, ``solve memory`` and ``solve map`` had no
flag for it. The three take it now through `add_lora_targets_option`, passed as ``lora_exclude_modules``: counted
(Qwen3-8B at rank 64 on all-linear less ``.*\\.mlp\\..*`` holds 61,341,696 adapter parameters, not all-linear's
174,587,904), refused as the API refuses it (naming the flag), shown where the targets are (plan lines, map titles,
``--json``'s ``lora_exclude_modules``), written as ``exclude_modules`` by the fragment, and carried by the check
commands and ``solve memory``'s ``solve`` hint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from option_reference import option_reference
from test_json import jsonschema_errors
from test_padbound_s71 import Cli

import solver
from solver.tables import QueryError

MLP = r".*\.mlp\..*"
LESS_MLP = ("--lora-rank", "64", "--lora-exclude", MLP)
ONE_H100 = ("--model", "8B", "--gpu", "h100", "--len", "25600", "--gpus", "1", "--host-ram", "72")
"""Qwen3-8B at 25600 tokens on one H100, 72 GiB of host memory: only Offload fits, whose host need is 72.6 GiB with
the adapter on all-linear's modules and 71.6 GiB without the MLP's, so the exclusions decide whether it plans."""
TRINITY = ("algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
           "buffer: {batch_size: 16, train_batch_size: 64}\nmodel:\n  model_path: Qwen/Qwen3-8B\n"
           "  max_model_len: 8192\n  lora_configs: [{lora_rank: 64, target_modules: %s}]\n"
           "explorer:\n  rollout_model: {engine_num: 4, tensor_parallel_size: 1}\n")
"""A Trinity config of Qwen3-8B with its own LoRA adapter at rank 64 (`%s`: its target_modules), 4 trainer GPUs."""
FRAGMENT_LORA = ("  # a new adapter on target_modules 'all-linear' less exclude_modules '.*\\.mlp\\..*', as planned;\n"
                 "  # with LoRA Trinity builds no reference model\n"
                 "  lora_configs: [{lora_rank: 64, target_modules: all-linear, exclude_modules: '.*\\.mlp\\..*'}]\n")


def test_solve_counts_the_adapter_less_the_exclusions_and_its_plan_says_them(cli: Cli) -> None:
    status, out, err = cli(*ONE_H100, "--lora-rank", "64", "--json")
    assert (status, json.loads(out)[0]["status"]) == (1, "infeasible")  # all-linear's Offload needs 72.6 GiB
    status, out, err = cli(*ONE_H100, *LESS_MLP, "--json")
    (plan,) = json.loads(out)[0]["plans"]
    assert (status, err) == (0, "")
    assert (plan["max_model_len"], plan["env"], plan["offload"], plan["host_memory_gb"], plan["lora_target_modules"],
            plan["lora_exclude_modules"]) == (25600, True, True, 71.6, "all-linear", MLP)
    assert jsonschema_errors("solve", json.loads(out)) == []
    status, out, _ = cli(*ONE_H100, *LESS_MLP)
    assert status == 0
    assert ("# a new adapter on target_modules 'all-linear' less exclude_modules '.*\\.mlp\\..*', as planned; with "
            "LoRA Trinity builds no reference model:\nmodel.lora_configs: [{lora_rank: 64, target_modules: all-linear, "
            "exclude_modules: '.*\\.mlp\\..*'}]\n") in out


def test_the_fragment_and_out_write_the_exclusions_and_its_check_reads_them_back(cli: Cli, tmp_path: Path) -> None:
    status, emitted, _ = cli(*ONE_H100, *LESS_MLP, "--emit", "trinity")
    assert status == 0 and FRAGMENT_LORA in emitted
    fragment = tmp_path / "fragment.yaml"
    status, _, _ = cli(*ONE_H100, *LESS_MLP, "--out", str(fragment))
    assert (status, fragment.read_text()) == (0, emitted)
    # the config the fragment makes counts the same adapter when read back: 71.6 GiB of host memory
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\nbuffer: {batch_size: 16}\n" + emitted.replace(
        "model:\n", "model:\n  model_path: Qwen/Qwen3-8B\n", 1))
    status, out, _ = cli("--from-config", str(config), "--gpu", "H100-80GB", "--gpus", "1", "--exact", "--host-ram",
                         "72", "--json")
    (plan,) = json.loads(out)[0]["plans"]
    assert (status, plan["max_model_len"], plan["offload"], plan["host_memory_gb"], plan["lora_target_modules"],
            plan["lora_exclude_modules"]) == (0, 25600, True, 71.6, "all-linear", MLP)


def test_solve_memory_counts_them_and_its_planner_hint_carries_them(cli: Cli) -> None:
    asked = ("memory", "--model", "8B", "--gpu", "h100", "--gpus", "1", "--len", "16384", "--env")
    figures = {}
    for name, given in (("all-linear", ("--lora-rank", "64")), ("less", LESS_MLP)):
        status, out, _ = cli(*asked, *given, "--json")
        answer = json.loads(out)
        figures[name] = (status, answer["lora_parameters"], answer["lora_target_modules"],
                         answer["lora_exclude_modules"], answer["total_gib"], answer["host_memory_gib"])
    assert figures == {"all-linear": (1, 174587904, None, None, 81.1953, 31.2),
                       "less": (1, 61341696, "all-linear", MLP, 79.4588, 30.8)}
    status, out, _ = cli(*asked[:-2], "65536", *LESS_MLP)
    assert status == 1
    words = " ".join(out.split())
    assert ("61,341,696 adapter parameters on every linear layer but the output projection less those exclude_modules "
            "'.*\\.mlp\\..*' matches (16 bytes each") in words
    assert out.splitlines()[-1] == ("  solve --model 8B --gpu h100 --gpus 1 --len 65536 --lora-rank 64 --lora-exclude "
                                    "'.*\\.mlp\\..*'")


def test_solve_map_counts_them_and_its_title_and_json_say_them(cli: Cli) -> None:
    # Trinity 0.6 on H100s loads the model on rank 0 alone: with no release named every rank would, past 72 GiB.
    asked = ("map", "--gpu", "h100", "--model", "8B", "--host-ram", "72", "--budgets", "1,2,4,8", "--trinity-version",
             "0.6", *LESS_MLP)
    status, out, err = cli(*asked)
    assert (status, err) == (0, "")
    assert out.splitlines()[0] == ("H100-80GB: longest context per model and GPU budget, LoRA rank 64 on all-linear "
                                   "less .*\\.mlp\\..*, Trinity 0.6, host memory 72 GiB per node")
    # all-linear's cells (test_maplora_s80) are 13k E@1 to 186k: its Offload needs 72.6 GiB
    assert "│ Qwen3-8B │ 25k E+O@1~† │ 49k E+O+SP2@2~ │ 99k E+O+SP4@4~ │ 198k E+O+SP8@8~!^ │" in out
    status, out, _ = cli(*asked, "--json")
    (mapped,) = json.loads(out)
    assert (status, mapped["lora_target_modules"], mapped["lora_exclude_modules"]) == (0, "all-linear", MLP)
    assert [(cell["max_model_len"], cell["offload"], cell["host_memory_gb"], cell["lora_exclude_modules"])
            for cell in mapped["rows"][0]["plans"]] == [
        (25600, True, 71.6, MLP), (50176, True, 71.6, MLP), (101376, True, 71.6, MLP), (202752, True, 71.6, MLP)]
    assert jsonschema_errors("map", [mapped]) == []
    (unexcluded,) = json.loads(cli(*asked[:-2], "--json")[1])
    assert "lora_exclude_modules" not in unexcluded


@pytest.mark.parametrize("command", [
    ("--model", "8B", "--gpu", "h100", "--len", "16384"),
    ("memory", "--model", "8B", "--gpu", "h100", "--gpus", "1", "--len", "16384"),
    ("map", "--gpu", "h100", "--model", "8B", "--budgets", "1"),
])
@pytest.mark.parametrize(("given", "error"), [
    ((), ("--lora-exclude '.*\\.mlp\\..*' without LoRA: the exclusions are a LoRA adapter's; give a --lora-rank "
          "above 0")),
    (("--lora-rank", "64", "--lora-exclude", "("),
     ("--lora-exclude '(' is no regular expression (missing ), unterminated subpattern at position 0): give a "
      "regular expression that matches whole names, such as .*\\.v_proj, or remove it")),
    (("--lora-rank", "64", "--lora-exclude", ".*"),
     ("--lora-exclude '.*', on Qwen3-8B, leaves out every module all-linear matches (\"All modules were "
      "excluded\"): exclude fewer, or remove it")),
    (("--lora-rank", "64", "--lora-targets", "q_proj", "--lora-exclude", ".*_proj"),
     ("--lora-exclude '.*_proj', on Qwen3-8B, leaves out every module --lora-targets 'q_proj' matches (\"No "
      "modules were targeted for adaptation\"): exclude fewer, or remove it")),
])
def test_each_command_refuses_what_the_api_refuses_in_one_line(cli: Cli, command: tuple[str, ...],
                                                               given: tuple[str, ...], error: str) -> None:
    given = given or ("--lora-exclude", MLP)
    prog = "solve" if command[0].startswith("--") else f"solve {command[0]}"
    assert cli(*command, *given) == (2, "", f"{prog}: error: {error}\n")


def test_the_api_names_its_keyword_where_the_command_names_its_flag() -> None:
    with pytest.raises(QueryError) as refused:
        solver.memory_answer("8B", "h100", 1, 16384, lora_exclude_modules=MLP)
    assert str(refused.value) == ("lora_exclude_modules '.*\\.mlp\\..*' without LoRA: the exclusions are a LoRA "
                                  "adapter's; give a lora_rank above 0")
    (answer,) = solver.plan("8B", gpu="h100", budget_gpus=1, max_model_len=25600, host_ram_gb=72.0, lora_rank=64,
                            lora_exclude_modules=MLP)
    assert answer.best is not None and (answer.best.host_memory_gb, answer.best.lora_exclude_modules) == (71.6, MLP)


def test_from_config_it_leaves_modules_out_of_the_configs_own_targets(cli: Cli, tmp_path: Path) -> None:
    # the exclusions are taken from the config's own target_modules (q_proj, v_proj), as config_query takes them
    # (review80a): the MLP exclusion leaves the config's q/v adapter whole, so nothing under-counts it
    config = tmp_path / "trinity.yaml"
    config.write_text(TRINITY % "'.*\\.(q_proj|v_proj)'")
    status, out, _ = cli("--from-config", str(config), "--gpu", "A100-80GB", "--lora-exclude", MLP, "--emit",
                         "trinity")
    assert status == 0 and "lora_configs" not in out  # the config keeps its own adapter
    assert ("#   solve --from-config CONFIG --check --gpu A100-80GB --lora-exclude '.*\\.mlp\\..*' --critic "
            "none\n") in out
    status, out, _ = cli("--from-config", str(config), "--gpu", "A100-80GB", "--lora-exclude", MLP, "--json")
    (plan,) = json.loads(out)[0]["plans"]
    assert (status, plan["lora_target_modules"], plan["lora_exclude_modules"]) == (0, ".*\\.(q_proj|v_proj)", MLP)


def test_exclusions_that_under_count_the_configs_own_adapter_are_refused_by_write(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "trinity.yaml"
    config.write_text(TRINITY % "all-linear")
    written = tmp_path / "out.yaml"
    assert cli("--from-config", str(config), "--gpu", "A100-80GB", "--lora-exclude", MLP, "--write",
               str(written)) == (2, "", (
        f"solve: error: --from-config {config}: the plan counted its LoRA adapter on 'all-linear' less "
        "exclude_modules '.*\\.mlp\\..*' (61,341,696 parameters), but the config's own target_modules "
        "(model.lora_configs), which --write keeps, adapt 174,587,904: plan on them (leave --lora-targets and "
        "--lora-exclude out), or set them to 'all-linear' and exclude_modules to '.*\\.mlp\\..*' first\n"))
    assert not written.exists()


@pytest.mark.parametrize("command", [(), ("memory",), ("map",)])
def test_each_commands_help_gives_the_flag(cli: Cli, command: tuple[str, ...]) -> None:
    # --help says it short (session 93), docs/cli.md's option reference in full
    status, out, _ = cli(*command, "--help")
    words = " ".join(out.split())
    assert status == 0
    own = ", or --from-config's where --lora-targets is not given" if command == () else ""
    assert ("--lora-exclude REGEX with --lora-rank: a regex of the modules to leave out, as exclude_modules "
            f"(default: none{own})") in words
    assert ("--lora-exclude REGEX: with --lora-rank: a regular expression of the modules the adapter leaves out of "
            "those --lora-targets gives (or all-linear's, or a --from-config config's own target_modules)"
            ) in option_reference()
    assert "solve's fragment writes it as exclude_modules" in option_reference()
