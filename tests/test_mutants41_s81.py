"""Mutation pass over session 81's merges (helper mutants41): each test here kills a mutant that the merges' own tests
left alive (named in its comment), asserting what the code does: the keys ``--json``'s ``config_keys_changed`` names
as removed (none for a null the config gives; in a mapping an alias repeats, one at each path), and the smallest
token cap a capped refusal names (``ceil(L / SP)``, the best-ranked plan at it)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_cluster import reference_checked

import solver
import solver.maps
from solver.api import placement_configs
from solver.tables import QueryError
from solver.tables.model_config import load_model_config
from solver.trinity.checks import trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]
CATALOG = solver.load_catalog()
CONFIGS = Path(__file__).resolve().parent / "data" / "hf-configs"
HEAD = """\
algorithm: {algorithm_type: grpo, repeat_times: 8}
buffer: {batch_size: 96}
cluster: {node_num: 1, gpu_per_node: 8}
"""


def _keys_changed(cli: Cli, tmp_path: Path, text: str, *options: str) -> list[dict[str, Any]]:
    """``solve --from-config --json``'s ``config_keys_changed`` for the config `text` on H100s."""
    config = tmp_path / "c.yaml"
    config.write_text(text, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", *options, "--json")
    assert status == 0
    (answer,) = json.loads(out)
    return list(answer["config_keys_changed"])


def test_a_null_the_config_gives_is_not_named_as_removed(cli: Cli, tmp_path: Path) -> None:
    # J-4 (`_keys_removed`, now `_differences`, without `old is not None`): the config's own null, left null, was
    # named as removed
    text = HEAD + ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384, custom_chat_template: null}\n"
                   "explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1}}\n")
    assert _keys_changed(cli, tmp_path, text) == [
        {"key": "trainer.ulysses_sequence_parallel_size", "config_value": None, "plan_value": 2},
        {"key": "trainer.max_token_len_per_gpu", "config_value": None, "plan_value": 16384}]


def test_a_removed_key_of_a_mapping_an_alias_repeats_is_named_at_each_path(cli: Cli, tmp_path: Path) -> None:
    # J-6 (`_keys_removed` entering a mapping each time an alias repeats it) named 0.5's removal of
    # trainer.param_offload twice; named once then, the alias's path (explorer.dummy) was left out, which a script
    # applying the list to the config as read keeps (aliaskeys_s82): each path is named, the alias's with its anchor's
    text = HEAD + ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}\n"
                   "trainer: &t\n  param_offload: false\n  ulysses_sequence_parallel_size: 2\n"
                   "explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1}, dummy: *t}\n")
    assert _keys_changed(cli, tmp_path, text, "--trinity-version", "0.5") == [
        {"key": "trainer.max_token_len_per_gpu", "config_value": None, "plan_value": 16384},
        {"key": "explorer.dummy.max_token_len_per_gpu", "config_value": None, "plan_value": 16384,
         "written_at": "trainer.max_token_len_per_gpu"},
        {"key": "trainer.param_offload", "config_value": False, "plan_value": None, "removed": True},
        {"key": "explorer.dummy.param_offload", "config_value": False, "plan_value": None, "removed": True,
         "written_at": "trainer.param_offload"}]


def _raised(model: str, gpu: str, length: int, gpus: int, cap: int) -> tuple[int, int, str, int, float]:
    """The plan a capped refusal offers (`token_budget_cap_raised`): its GPUs, SP, setting, budget and cost."""
    (answer,) = solver.plan(model, gpu=gpu, max_model_len=length, budget_gpus=gpus, token_budget=cap)
    assert answer.best is None and answer.token_budget_cap_raised is not None
    raised = answer.token_budget_cap_raised
    return raised.gpus, raised.sp, raised.setting.label, raised.max_token_len_per_gpu, raised.cost


def test_the_smallest_cap_holds_a_length_sp_does_not_divide() -> None:
    # J-9 (`minimize_token_cap` with floor(L / SP)): 65535 tokens at SP=4 named a cap of 16383, which holds no sequence
    assert _raised("8B", "h20", 65535, 4, 8192) == (4, 4, "Env + SP=4", 16384, 0.32825)


def test_the_smallest_cap_comes_before_a_cheaper_plan_at_a_higher_one() -> None:
    # J-10 (`minimize_token_cap` minimising cap + rank): at 100 tokens the caps of SP=4 and SP=8 differ by 12 alone,
    # and the cheaper SP=4 plan (cost 0.1625) was named at a cap of 25, not the smallest, 13
    assert _raised("8B", "h20", 100, 8, 12) == (8, 8, "SP=8", 13, 0.2125)


def test_the_plan_at_the_smallest_cap_is_the_best_ranked() -> None:
    # J-11 (`minimize_token_cap` without the rank): at the cap of 513 the solver's first plan, Offload + SP=8 at
    # 0.425, was named for the cheapest, SP=8 at 0.2125
    assert _raised("8B", "h20", 4097, 8, 512) == (8, 8, "SP=8", 513, 0.2125)


def _lora_problems(mapping: dict[str, Any], model: str, version: str | None, experts: str) -> list[tuple[str, str]]:
    """The LoRA problems (but the mixture of experts' unsaved-config caution) of the config `mapping` on `model`."""
    problems = trinity_config_problems({"model": {"model_path": "x", "max_model_len": 8192}, **mapping},
                                       CATALOG.model(model), 8, version=version,  # type: ignore[arg-type]
                                       experts=experts)  # type: ignore[arg-type]
    return [(problem.code.value, problem.words) for problem in problems
            if problem.code.value.startswith("lora") and problem.code.value != "lora-moe-config-unsaved"]


def test_a_number_as_verls_own_target_modules_is_judged_as_its_text() -> None:
    # L-7 (`new_adapter`): Trinity 0.5's own typed ActorModel.target_modules (Optional[str]) makes text of verl's 5
    # as it merges trainer.trainer_config (loraexclude2, s82; before, verl's key was taken as untyped and not judged)
    verl = {"trainer": {"trainer_config": {"actor_rollout_ref": {"model": {"lora_rank": 8, "target_modules": 5}}}}}
    assert [(code, words[:75]) for code, words in _lora_problems(verl, "Qwen3-8B", "0.5", "either")] == [
        ("lora-configs-refused", "trainer.trainer_config.actor_rollout_ref.model.target_modules '5', on Qwen3")]


def test_an_exclude_modules_list_makes_no_new_adapter_to_judge() -> None:
    # L-8 (`new_adapter` refusing only an int exclude_modules): a list went on to the regex checks (a TypeError)
    lora = {"model": {"model_path": "x", "max_model_len": 8192,
                      "lora_configs": [{"lora_rank": 16, "exclude_modules": [".*\\.mlp\\..*"]}]}}
    assert _lora_problems(lora, "Qwen3-30B-A3B", None, "fused") == []


def test_all_linear_in_any_case_is_named_all_linear() -> None:
    # L-9 (`new_adapter` keeping the word as written): the refusal named target_modules 'All-Linear'
    lora = {"model": {"model_path": "x", "max_model_len": 8192,
                      "lora_configs": [{"lora_rank": 16, "target_modules": "All-Linear", "exclude_modules": ".*"}]}}
    ((code, words),) = _lora_problems(lora, "Qwen3-8B", None, "fused")
    assert code == "lora-configs-refused" and words.startswith(
        "model.lora_configs[0].exclude_modules '.*', on Qwen3-8B (a dense model), leaves out every module "
        "target_modules 'all-linear' matches (")


def test_a_shared_expert_is_in_every_expert_layer() -> None:
    # L-17 (`Model.module_layers` taking only ``experts`` for an expert's): Qwen1.5-MoE's shared expert and its gate,
    # in every layer (all expert layers), were put in its dense layers, of which it has none
    model = load_model_config(CONFIGS / "Qwen1.5-MoE-A2.7B.json")
    names = model.peft_names
    shared = [name for name in names.adapted if "shared_expert" in name]
    assert shared == ["mlp.shared_expert.gate_proj", "mlp.shared_expert.up_proj", "mlp.shared_expert.down_proj",
                      "mlp.shared_expert_gate"]
    assert {model.module_layers(name, names) for name in shared} == {tuple(range(24))}


def test_an_exclusion_beside_targets_one_transformers_takes_is_a_but_line_too() -> None:
    # L-21 (`_check_lora_targets` judging exclusions only where the targets raise no problem): beside the caution on
    # targets transformers 4's names refuse, the exclusion of layer 0, which transformers 5 adapts all the same, was
    # not said
    experts = ".*mlp\\.experts\\.(gate_proj|up_proj|down_proj)"
    lora = {"model": {"model_path": "x", "max_model_len": 8192, "lora_configs": [
        {"lora_rank": 16, "target_modules": experts, "exclude_modules": ".*layers\\.0\\..*"}]}}
    problems = _lora_problems(lora, "Qwen3-30B-A3B", "0.5", "either")
    assert [code for code, _ in problems] == ["lora-targets-one-transformers", "lora-excluded-adapted"]
    assert problems[1][1].startswith(
        "model.lora_configs[0].exclude_modules '.*layers\\.0\\..*' matches Qwen3-30B-A3B's routed experts "
        "(mlp.experts.gate_proj, mlp.experts.up_proj, mlp.experts.down_proj), but target_modules "
        f"'{experts}' adapts them all the same, in every layer, on transformers 5 (Trinity 0.5.0's and 0.5.2's, "
        "where they run on it)")


def test_no_but_line_on_a_mixture_of_experts_whose_names_are_assumed(tmp_path: Path) -> None:
    # L-23 (`excluded_adapted_words` without its check of assumed names): Qwen3-30B-A3B's shape under a model_type
    # rft-solver has not read got a lora-excluded-adapted line on names it only assumes
    config = json.loads((CONFIGS / "Qwen3-30B-A3B.json").read_text(encoding="utf-8"))
    config.update(model_type="foo_moe", architectures=["FooMoeForCausalLM"])
    path = tmp_path / "foo.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    model = load_model_config(path)
    assert model.peft_names.assumed and model.moe is not None
    lora = [{"lora_rank": 16, "exclude_modules": ".*\\.mlp\\..*"}]
    problems = trinity_config_problems({"model": {"model_path": "x", "max_model_len": 8192, "lora_configs": lora}},
                                       model, 8)
    assert [problem.code.value for problem in problems if problem.code.value.startswith("lora")] == []


def test_a_job_placed_on_an_estimate_names_no_solve_best(cli: Cli, tmp_path: Path) -> None:
    # C-2 (`Planner.solve_best` without its check of the placed plan's evidence): a job placed on H100s, which no table
    # documents, got its own estimate named as solve's cheaper one
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: h100, gpu: H100-80GB, nodes: 2, gpus_per_node: 4, host_ram_gb: 1024}\n"
                     "jobs:\n  - {name: lora-long, model: Qwen3-8B, max_model_len: 96k, rollout_gpus: 2, "
                     "lora_rank: 64}\n", encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--json")
    (placed,) = json.loads(out)["placements"]
    assert status == 0 and (placed["job"], placed["plan"]["evidence"], placed["plan"]["gpus"]) == (
        "lora-long", "estimated", 4)
    assert "solve_best" not in placed


def test_a_running_jobs_release_beside_the_runs_is_named_in_the_tables(cli: Cli, tmp_path: Path) -> None:
    # R-9 (`_named_releases` asking for more than two releases): old runs on its 0.5.1 plan, new starts under the run's
    # (none named): the table lost its Trinity column, though its figures (6 and 2 GPUs) are of two releases
    pool = "  - {name: h100, gpu: h100, gpus_per_node: 6, nodes: 2, host_ram_gb: 700}\n"
    fleet = tmp_path / "plain.yaml"
    fleet.write_text(f"pools:\n{pool}jobs:\n  - {{name: old, model: Qwen3-30B-A3B, max_model_len: 8192}}\n"
                     "  - {name: new, model: Qwen3-30B-A3B, max_model_len: 8192}\n", encoding="utf-8")
    now = reference_checked(fleet, cli("cluster", str(fleet), "--trinity-version", "0.5.1", "--json")[1],
                            trinity_version="0.5.1")
    now["placements"] = [placement for placement in now["placements"] if placement["job"] == "old"]
    current = tmp_path / "now.json"
    current.write_text(json.dumps(now), encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--current", str(current))
    cells = [[cell.strip() for cell in line.split("│")[1:-1]] for line in out.splitlines() if line.startswith("│")]
    # (s84: new, none named, loads the model on every rank: Offload on 2 GPUs, 681.1 GiB; on 4 it needs 757.1, more
    # than the 700 of a node)
    assert status == 0 and [(row[2], row[3], row[6], row[-1]) for row in cells] == [
        ("old", "6", "0.5.1", "stays"), ("new", "2", "none", "starts")]


def test_an_unplaced_jobs_own_release_names_no_release_in_the_placed_tables(cli: Cli, tmp_path: Path) -> None:
    # R-10 (`_named_releases` asking any job of the fleet, placed or not): big, 0.5.2 by its own key and left out (its
    # Offload needs more host memory than 100 GiB: exit 1), gave the table of small, of the run's release alone, a
    # Trinity column
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: h100, gpu: h100, gpus_per_node: 2, nodes: 1, host_ram_gb: 100}\njobs:\n"
                     "  - {name: small, model: Qwen3-0.6B, max_model_len: 8192}\n"
                     "  - {name: big, model: Qwen3-30B-A3B, max_model_len: 8192, trinity_version: 0.5.2}\n",
                     encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet))
    table = out[:out.index("unplaced jobs: 1 of 2")]
    assert status == 1 and "┃ plan ┃ max_model_len ┃" in table and "Trinity" not in table


NO_REGEX = ("lora_targets '(' is no regular expression (missing ), unterminated subpattern at position 0): give "
            "all-linear (Trinity's default: every linear layer but the output projection), module names separated by "
            "commas (q_proj,v_proj) or a regular expression that PEFT matches whole module names with "
            "(.*\\.(q_proj|v_proj))")
MATCHES_NONE = ("lora_targets '.*\\.nothing' matches no module of Qwen3-8B (model.layers.N.self_attn.{q,k,v,o}_proj, "
                "model.layers.N.mlp.{gate,up,down}_proj, model.embed_tokens and lm_head): give all-linear (Trinity's "
                "default: every linear layer but the output projection), module names separated by commas "
                "(q_proj,v_proj) or a regular expression that PEFT matches whole module names with "
                "(.*\\.(q_proj|v_proj))")


@pytest.mark.parametrize(("rows", "targets", "message"), [
    (["8B", "4B"], "(", NO_REGEX),  # M-8: a refusal alike on every row said "the map's other model refuses them too"
    (None, "(", NO_REGEX),  # M-7: without models, the GPU's mapped models were not checked before the cells
    (["8B", "4B"], ".*\\.nothing", MATCHES_NONE + "; the map's other model refuses them too"),  # M-9: "1 other models"
    (["8B", "4B", "14B"], ".*\\.nothing", MATCHES_NONE + "; the map's 2 other models refuse them too")],
    ids=["alike", "gpus-models", "two", "three"])
def test_targets_every_row_refuses_are_refused_once_before_any_cell(
        monkeypatch: pytest.MonkeyPatch, rows: list[str] | None, targets: str, message: str) -> None:
    def made(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a cell's query was made before the refusal")

    monkeypatch.setattr(solver.maps, "make_query", made)
    with pytest.raises(QueryError) as refused:
        solver.map_plans(rows, gpu="h100", gpus_up_to=2, lora_targets=targets, lora_rank=16)
    assert str(refused.value) == message


def test_a_fragment_written_for_the_version_asked_names_that_option(tmp_path: Path) -> None:
    # N-4 (`_Placed.own_release` whatever `version` is): with version="0.5.2" over the job's own 0.5.2, the comment
    # named the job's key, not the option that wrote it
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: h100, gpu: h100, gpus_per_node: 6, nodes: 2, host_ram_gb: 700}\njobs:\n"
                     "  - {name: old, model: Qwen3-30B-A3B, max_model_len: 8192, trinity_version: 0.5.2}\n"
                     "  - {name: new, model: Qwen3-30B-A3B, max_model_len: 8192}\n", encoding="utf-8")
    result = solver.place(fleet)
    reference_checked(fleet, result.model_dump_json())  # old counted for its own 0.5.2, new for none named
    for version, named in ((None, "the job's trinity_version 0.5.2"), ("0.5.2", 'version="0.5.2"')):
        fragment = " ".join(line.strip(" #") for line in placement_configs(result, fleet, version=version)[
            "old"].splitlines())
        assert f"written for Trinity 0.5.2 ({named}), which refuses these flags under trainer itself" in fragment


RELEASE_07 = ("trinity_version takes 0.5, 0.5.0, 0.5.1, 0.5.2, 0.6 or 0.6.0 (or a tag of one, v0.5.2), got '0.7' "
              "(rft-solver knows the rules of these releases alone)")
REFERENCE_WITH_LORA = ("reference_model=True with lora_rank=16: no Trinity release builds a reference model for a LoRA "
                       "run (the actor with its adapter disabled gives the ref's log-probs); give "
                       "reference_model=False, or leave it out")


@pytest.mark.parametrize(("keywords", "message"), [
    ({"trinity_version": "0.7"}, RELEASE_07),  # M-3 (`check_run_options` without its release check): at a cell
    ({"reference_model": True, "lora_rank": 16}, REFERENCE_WITH_LORA)],  # M-4 (without its LoRA check): likewise
    ids=["release", "reference-with-lora"])
def test_a_maps_release_and_reference_are_refused_before_any_cell(
        monkeypatch: pytest.MonkeyPatch, keywords: dict[str, Any], message: str) -> None:
    def made(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a cell's query was made before the refusal")

    monkeypatch.setattr(solver.maps, "make_query", made)
    with pytest.raises(QueryError) as refused:
        solver.map_plans(["8B", "4B"], gpu="h100", gpus_up_to=2, **keywords)
    assert str(refused.value) == message
