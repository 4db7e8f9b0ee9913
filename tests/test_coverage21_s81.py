"""Session 81, coverage21: the lines and branches s81 changed in solver/ that no related test ran. (a) An unknown model
whose name no path can have (a component over 255 bytes: ``Path.is_dir`` raises ENAMETOOLONG, which it does not ignore)
gets the plain ``--model-config PATH`` hint, no traceback (`own_model_option`). (b) A config's ``exclude_modules`` under
Trinity 0.5 on a regex that transformers 4's names alone take: the one-transformers caution, and no
``lora-excluded-adapted`` line, as PEFT fails on transformers 5's names before it adapts anything. (c) An exclusion that
leaves one of the routed experts' fused halves: the ``exclude_modules`` key is refused, saying what the regex alone
adapts. (d) verl before 0.8's ``target_modules`` a number: no adapter checked (verl makes no text of it), counted as
full fine-tuning. (e) A purchase's JSON made before ``fewest_gpus`` and ``fleet_gpus`` reads back, and its status line
says no figure behind the bound. (f) ``config_keys_changed``'s removed keys: in a mapping an alias repeats, a removed
key is named at each path, the alias's with the anchor's place (``written_at``; named once before aliaskeys_s82)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from test_clusterbuy_s60 import FOUR_JOBS, fleet_file

import solver
from solver.query import ConfigProblemCode
from solver.render import purchase_view
from solver.render.layout import view_text
from solver.tables import load_fleet, own_model_option
from solver.trinity import read_trinity_config, trinity_config_problems
from solver.trinity.checks import lora_targets_problem
from solver.trinity.patch import config_key_changes

Cli = Callable[..., tuple[int, str, str]]
CATALOG = solver.load_catalog()
QWEN3_8B = "model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 16384\n"


def _problems(model: str, config: dict[str, Any], version: str | None = None,
              experts: str = "fused") -> list[tuple[str, str]]:
    problems = trinity_config_problems(config, CATALOG.model(model), 8, version=version,  # type: ignore[arg-type]
                                       experts=experts)  # type: ignore[arg-type]
    return [(problem.code.value, problem.words) for problem in problems]


def _lora(lora: dict[str, Any]) -> dict[str, Any]:
    return {"model": {"model_path": "x", "max_model_len": 8192, "lora_configs": [lora]}}


# (a) A name no path can have.

def test_an_unknown_model_whose_name_is_too_long_for_a_path_gets_the_plain_hint(cli: Cli) -> None:
    name = "a" * 300
    status, out, err = cli("memory", "--model", name, "--gpu", "h100", "--gpus", "1", "--len", "16384")
    assert (status, out) == (2, "")
    assert err.startswith("solve memory: error: unknown model '") and err.count("\n") == 1
    assert err.endswith("; or, for a model of your own, its Hugging Face config.json: --model-config PATH\n")
    assert own_model_option(name, Path(name), "--model-config ", "--model", "default") == "default"


# (b) An exclusion under 0.5 on a regex transformers 4's names alone take.

def test_an_exclusion_on_a_regex_transformers_5_refuses_is_no_excluded_adapted_line() -> None:
    targets, excluded = ".*\\.experts\\.\\d+\\.gate_proj", ".*layers\\.0\\..*"
    problems = _problems("Qwen3-30B-A3B", _lora({"lora_rank": 16, "target_modules": targets,
                                                 "exclude_modules": excluded}), "0.5", "either")
    assert [code for code, _ in problems] == ["lora-targets-one-transformers"]
    assert problems[0][1].startswith(
        "model.lora_configs[0].target_modules '.*\\.experts\\.\\d+\\.gate_proj', on Qwen3-30B-A3B (a mixture of "
        "experts), is taken on transformers 4's module names (")
    assert problems[0][1].endswith(
        "and the run fails as Trinity makes the adapter where it has transformers 5: run it with transformers 4 "
        "(Trinity 0.5.1 pins it): no regular expression adapts the same modules on transformers 5's names")
    # where transformers 5's names take the regex, the exclusion's words are checked: the experts adapted all the same
    taken = _problems("Qwen3-30B-A3B", _lora({"lora_rank": 16, "target_modules": ".*\\.experts\\..*_proj",
                                              "exclude_modules": excluded}), "0.5", "either")
    assert [code for code, _ in taken] == ["lora-excluded-adapted", "lora-moe-config-unsaved"]


# (c) An exclusion that leaves one fused half.

def test_an_exclusion_that_leaves_a_fused_half_alone_is_the_exclusions_refusal() -> None:
    problem = lora_targets_problem(".*\\.experts\\.(gate|up)_proj", ".*\\.experts\\.up_proj",
                                   CATALOG.model("Qwen3-30B-A3B"))
    assert problem is not None and problem.code is ConfigProblemCode.LORA_CONFIGS_REFUSED
    assert problem.words.startswith(
        "model.lora_configs[0].exclude_modules '.*\\.experts\\.up_proj', on Qwen3-30B-A3B (a mixture of experts), "
        "leaves what target_modules '.*\\.experts\\.(gate|up)_proj' adapts so that it matches the routed experts' "
        "gate_proj without their up_proj, which PEFT fuses into gate_up_proj (\"Cannot convert PEFT target(s) ... "
        "because they are fused\"): peft matches it whole")
    assert problem.words.endswith("and Trinity fails as it makes the adapter: exclude fewer, or remove it")
    assert lora_targets_problem(".*\\.experts\\.(gate|up)_proj", None, CATALOG.model("Qwen3-30B-A3B")) is None


# (d) verl before 0.8's target_modules a number.

def test_verls_own_target_modules_a_number_is_counted_as_full_and_checked_as_text() -> None:
    # Trinity 0.5's typed ActorModel.target_modules makes text of it as model.lora_configs' (loraexclude2, s82)
    verl = {"model": {"model_path": "x", "max_model_len": 8192}, "trainer": {"trainer_config": {
        "actor_rollout_ref": {"model": {"lora_rank": 8, "target_modules": 5}}}}}
    assert [code for code, _ in _problems("Qwen3-8B", verl, "0.5", "either")
            if code.startswith("lora-configs")] == ["lora-configs-refused"]
    text = (QWEN3_8B + "trainer:\n  trainer_config:\n    actor_rollout_ref:\n      model:\n        lora_rank: 8\n"
            "        target_modules: 5\n")
    config = read_trinity_config(text, "t.yaml", {}, version="0.5")
    assert config.lora_rank == 0
    assert ("with LoRA (trainer.trainer_config.actor_rollout_ref.model.lora_rank) the trainer holds gradients and "
            "optimizer states for the adapter alone, but the verdict and the plans count full fine-tuning's, as the "
            "tables measured (its target_modules '5' matches no module)") in (
        " ".join(config.notes))
    # Trinity's typed LoRA config makes text of it: "5", which is checked (and matches no module)
    lora = _problems("Qwen3-8B", _lora({"lora_rank": 8, "target_modules": 5}), "0.5", "either")
    assert [code for code, _ in lora if code.startswith("lora-configs")] == ["lora-configs-refused"]


# (e) A purchase's JSON from before its fewest_gpus.

def test_a_purchase_read_from_json_without_its_fewest_gpus_says_no_figure(tmp_path: Path) -> None:
    path = fleet_file(FOUR_JOBS, tmp_path)
    result, fleet = solver.buy_nodes(path, required=["a", "c", "d"]), load_fleet(path)
    assert (result.status, result.gpus, result.fewest_gpus, result.fleet_gpus) == ("optimal", 8, 17, 16)
    status = "status: optimal; to place the required jobs (a, c, d), buy 8 GPUs (1 node), proven the fewest"
    assert " ".join(view_text(purchase_view(result, fleet), 1000).splitlines()[0].split()) == (
        f"{status} (at their fewest they take 17 GPUs, 1 more than the fleet's 16; the other 7 bought are for the "
        "pools they may use and their layouts (GPUs and host memory) to pack into the nodes)")
    older = json.loads(result.model_dump_json())
    del older["fewest_gpus"], older["fleet_gpus"]
    read_back = solver.PurchaseResult.model_validate_json(json.dumps(older))
    assert (read_back.fewest_gpus, read_back.fleet_gpus) == (None, None)
    assert view_text(purchase_view(read_back, fleet), 1000).splitlines()[0].rstrip() == status


# (f) A mapping an alias repeats, a removed key in it named at each path.

def test_a_key_removed_from_a_mapping_an_alias_repeats_is_named_at_each_path() -> None:
    best, model = solver.plan("Qwen3-8B", gpu="H100", budget_gpus=8, max_model_len=16384)[0].best, CATALOG.model("8B")
    assert best is not None
    yarn = "  rope_scaling: {rope_type: yarn, factor: 4.0, original_max_position_embeddings: 32768}\n"
    shared = "shared: &shared {enable_thinking: false}\n" + QWEN3_8B + yarn + "  custom_chat_template_kwargs: *shared\n"
    assert [key.key for key in config_key_changes(shared, best, model) if key.removed] == ["model.rope_scaling"]
    aliased = "base: &m\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 16384\n" + yarn + "model: *m\n"
    # each path the alias repeats it at named (aliaskeys_s82), the alias's with the anchor's place
    assert [(key.key, key.written_at) for key in config_key_changes(aliased, best, model) if key.removed] == [
        ("base.rope_scaling", None), ("model.rope_scaling", "base.rope_scaling")]
