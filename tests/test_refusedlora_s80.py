"""Session 80's refusedlora: a config's ``model.lora_configs`` that Trinity refuses counts one way wherever it is
counted, full fine-tuning with the ``lora-counted-as-full`` line: two LoRA configs (Trinity 0.5.1 and 0.6.0 raise
"Only one lora adapter is supported for now." as they validate the config: the rank 32 counted before was the unset
rank's; the first's is the rank it writes), an ``exclude_modules`` that is a list or no regex (rank 16 counted
before), and targets PEFT refuses on the model's names, which the config read alone does not know
(``.*\\.mlp\\.gate``, a Qwen3-MoE's router, and ``exclude_modules: '.*'`` on Qwen3-8B: a ZeroDivisionError
before); the verdict, the plans and their JSON, ``--write``'s check command and note, and the fragment's check command
agree. An ``exclude_modules`` that is a number is the text Trinity's typed config makes of it, which excludes
nothing: LoRA counted."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_splitnote_s80 import REFUSED_LINE

from solver.trinity import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]
CONFIG = """\
algorithm:
  algorithm_type: grpo
model:
  model_path: Qwen/Qwen3-8B
  max_model_len: 32768
  lora_configs: {lora}
cluster:
  node_num: 1
  gpu_per_node: 4
explorer:
  rollout_model:
    engine_num: 2
    tensor_parallel_size: 1
"""
TWO = "[{lora_rank: 16}, {lora_rank: 8}]"
GATE = r"[{lora_rank: 16, target_modules: '.*\.mlp\.gate'}]"
REFUSED = {
    "two": (TWO, ('model.lora_configs holds 2 LoRA configs: Trinity refuses more than one ("Only one lora adapter is '
            'supported"): give it one LoRA config, or drop it for no LoRA'), 0),
    "exclude-list": ("[{lora_rank: 16, exclude_modules: [q_proj]}]",
                     ("model.lora_configs[0].exclude_modules ['q_proj'] is a list: Trinity's LoRA config takes a "
                      "string, so its typed config refuses it when it loads the config: give one regular expression "
                      "that peft matches whole module names with (.*\\.(q_proj|v_proj)), or remove it"), 0),
    "exclude-no-regex": ("[{lora_rank: 16, exclude_modules: '('}]",
                         ("model.lora_configs[0].exclude_modules '(' is no regular expression (missing ), unterminated "
                          "subpattern at position 0): peft matches it whole (re.fullmatch) against each module's full "
                          "name, and Trinity fails as it makes the adapter: give a regular expression that matches "
                          "whole names, such as .*\\.v_proj, or remove it"), 0),
    # the reading alone counts rank 16 (names PEFT takes: a Qwen3-MoE's router; some type's), the model refuses it
    "router-on-dense": (GATE, ("model.lora_configs[0].target_modules '.*\\.mlp\\.gate', on Qwen3-8B (a dense model), "
                        "matches no module"), 16),
    "exclude-all": ("[{lora_rank: 16, exclude_modules: '.*'}]", ("model.lora_configs[0].exclude_modules '.*', on "
                    "Qwen3-8B (a dense model), leaves out every module target_modules 'all-linear' matches"), 16),
}


def _config(tmp_path: Path, lora: str, name: str = "grpo.yaml", model: str = "Qwen/Qwen3-8B") -> Path:
    config = tmp_path / name
    config.write_text(CONFIG.format(lora=lora).replace("Qwen/Qwen3-8B", model))
    return config


def _answer(cli: Cli, config: Path, *flags: str) -> dict[str, Any]:
    status, out, err = cli("--from-config", str(config), "--gpu", "h20", *flags, "--json")
    assert status == 0, err
    return dict(json.loads(out)[0])


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_refused_lora_config_counts_full_fine_tuning_with_its_line(cli: Cli, tmp_path: Path, case: str) -> None:
    lora, refusal, read_alone = REFUSED[case]
    config = _config(tmp_path, lora)
    assert read_trinity_config(config.read_text(), "grpo.yaml", {}).lora_rank == read_alone
    answer = _answer(cli, config)
    plan, current = answer["plans"][0], answer["current"]
    assert (plan["lora_rank"], plan["lora_target_modules"], plan["config_lora"]) == (0, None, True)
    assert plan["config_adapter"] == {"key": "model.lora_configs", "rank": 0, "target_modules": None,
                                      "exclude_modules": None}
    assert current["config_problem_codes"] == ["lora-configs-refused", "lora-counted-as-full"]
    assert current["config_problems"][0].startswith(refusal)
    assert current["config_problems"][1] == REFUSED_LINE


def test_the_router_regex_on_a_mixture_of_experts_counts_its_lora(cli: Cli, tmp_path: Path) -> None:
    # the same config on Qwen3-30B-A3B, whose router PEFT takes: LoRA rank 16 counted on it, no refusal
    config = _config(tmp_path, GATE, model="Qwen/Qwen3-30B-A3B").read_text().replace("gpu_per_node: 4",
                                                                                     "gpu_per_node: 8")
    (tmp_path / "moe.yaml").write_text(config)
    answer = _answer(cli, tmp_path / "moe.yaml")
    assert (answer["plans"][0]["lora_rank"], answer["plans"][0]["lora_target_modules"]) == (16, r".*\.mlp\.gate")
    assert "lora-configs-refused" not in answer["current"]["config_problem_codes"]


@pytest.mark.parametrize("excluded", ["7", "true"])
def test_an_exclude_modules_that_is_no_string_excludes_nothing(cli: Cli, tmp_path: Path, excluded: str) -> None:
    # Trinity's typed config makes "7" or "True" of it, which matches no module name: all-linear at rank 16
    answer = _answer(cli, _config(tmp_path, f"[{{lora_rank: 16, exclude_modules: {excluded}}}]"))
    assert (answer["plans"][0]["lora_rank"], answer["plans"][0]["lora_target_modules"]) == (16, None)
    assert answer["current"]["config_problem_codes"] == ["lora-counted-as-full"]
    assert "count LoRA rank 16's states" in answer["current"]["config_problems"][0]


@pytest.mark.parametrize("case", ["two", "router-on-dense"])
def test_write_and_the_fragment_count_it_as_the_plans_do(cli: Cli, tmp_path: Path, case: str) -> None:
    config, written, fragment = _config(tmp_path, REFUSED[case][0]), tmp_path / "w.yaml", tmp_path / "f.yaml"
    status, _, err = cli("--from-config", str(config), "--gpu", "h20", "--write", str(written))
    assert status == 0, err
    # the check command counts the written config as the plans did (full fine-tuning): no --lora-rank 0 to say so
    assert f"solve --from-config {written} --check --gpu H20-96GB\n" in written.read_text()
    assert ("grpo.yaml sets LoRA (model.lora_configs), which --write keeps as written, though Trinity refuses it so "
            "(its refused line, lora-configs-refused, says why): the plan counted full fine-tuning, which holds more "
            "than a LoRA run; fix model.lora_configs and plan again to count the LoRA run, or remove it to train "
            "every parameter") in " ".join(err.split())
    assert cli("--from-config", str(config), "--gpu", "h20", "--out", str(fragment))[0] == 0
    assert "solve --from-config CONFIG --check --gpu H20-96GB --critic none\n" in fragment.read_text()


@pytest.mark.parametrize("case", ["two", "router-on-dense", "exclude-no-regex"])
def test_write_at_a_lora_rank_of_its_own_says_the_config_needs_fixing(cli: Cli, tmp_path: Path, case: str) -> None:
    # two LoRA configs were refused as training rank 32 (the unset rank's); the router regex's check command
    # counted full fine-tuning without --lora-rank 16
    config, written = _config(tmp_path, REFUSED[case][0]), tmp_path / "w.yaml"
    status, _, err = cli("--from-config", str(config), "--gpu", "h20", "--lora-rank", "16", "--write", str(written))
    assert status == 0, err
    assert f"solve --from-config {written} --check --gpu H20-96GB --lora-rank 16\n" in written.read_text()
    assert ("grpo.yaml sets LoRA (model.lora_configs), which --write keeps as written, though Trinity refuses it so "
            "(its refused line, lora-configs-refused, says why): the plan counted LoRA rank 16 (--lora-rank 16); fix "
            "model.lora_configs to one LoRA config of that rank that Trinity takes, or the run fails"
            ) in " ".join(err.split())


def test_two_lora_configs_write_the_first_ones_rank(cli: Cli, tmp_path: Path) -> None:
    # the rank Trinity's trainer would read is the first's (lora_configs[0]), not the unset rank 32
    config, written = _config(tmp_path, "[{lora_rank: 8}, {lora_rank: 16}]"), tmp_path / "w.yaml"
    status, _, err = cli("--from-config", str(config), "--gpu", "h20", "--lora-rank", "16", "--write", str(written))
    assert (status, err) == (2, (
        f"solve: error: --from-config {config}: the plan counted LoRA rank 16, but model.lora_configs trains rank 8, "
        "which --write keeps (its lora_alpha scales the adapter by its rank): plan at rank 8 (--lora-rank 8, or "
        "leave it out), or set model.lora_configs's rank to 16 first\n"))
    assert not written.exists()
