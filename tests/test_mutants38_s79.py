"""Tests killing the surviving mutants of session 79's merges (helper mutants38, session 79): rowpad's padding of a
mixture of experts with dense layers counted on its expert layers alone; smallslips31's room kept left out where
its solve is undecided, and said for the longest context; persona55's jobs gone named only in pools the file has;
planlora's LoRA targets of names and a regex read as a regex, and a config's exclude_modules counted and named;
ropecheck's mlp_only_layers refusing a boolean; apileft's shared budget the largest of every GPU type's tables,
noted with a config that gives no trainer GPUs; the check commands' relative paths, and --minimize gpus with
--exact refused as such without a budget; clustercli's interrupted purchase not called whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_apileft_s79 import SHARED_BUDGET, USER_CONFIG
from test_clustercli_s79 import SMALLER_ASKS
from test_persona55_s79 import FLEET, _fleet_file, _placement_json
from test_ropecheck_s79 import _qwen3_moe
from test_smallslips24_s77 import Cli
from test_smallslips34_s79 import ctrl_c_in_widening_then_in_the_notes

import solver
import solver.cli.cluster
import solver.solve
from solver.memory import expert_padding, lora_parameters
from solver.query import given_lora_targets
from solver.render.phrases import room_kept_words
from solver.rules import COMMAND_OPTIONS, lora_configs_words
from solver.tables import QueryError, TableError, current_jobs_gone, load_catalog, load_model_config
from solver.tables.peft_names import LoraTargets
from solver.trinity import patch_trinity_config
from solver.trinity.fragment import names_relative_path
from solver.trinity.patch import CHECK_PLACEHOLDER

DATA = Path(__file__).parent / "data" / "hf-configs"
DEEPSEEK_V2_LITE = load_model_config(DATA / "DeepSeek-V2-Lite.json")


def test_expert_padding_counts_the_expert_layers_alone() -> None:
    # mutant R-12: the padding counted on all 27 layers, though DeepSeek-V2-Lite's first is dense (first_k_dense_replace
    # 1). 64 experts of 1408 x 2048 on 6 GPUs: fused, 64 rows pad to 66, 2 rows of 3 x 1408 x 2048 in each of the 26
    # expert layers; separate, gate and up (1408 rows, 2048 columns: 6 divides neither) pad 2 rows, down (2048 rows,
    # 1408 columns) 4, each expert's in each of the 26.
    model = DEEPSEEK_V2_LITE
    assert (model.num_layers, model.moe is not None and model.moe.dense_layers) == (27, 1)
    assert expert_padding(model, 6) == 2 * 3 * 1408 * 2048 * 26 / 6 == 74_973_184
    assert expert_padding(model, 6, "separate") == (2 * 2048 * 2 + 4 * 1408) * 64 * 26 / 6 == 3_833_856


def _thin_at_64k() -> solver.Answer:
    """Qwen3-30B-A3B at 65536 on 1 H20: a best plan on thin headroom (a lowered budget, 0.4 GiB to spare) that nothing
    trains at --margin 0.04."""
    (answer,) = solver.plan("Qwen3-30B-A3B", gpu="H20", budget_gpus=1, max_model_len=65536, token_budget="auto")
    return answer


def test_room_kept_is_left_out_where_its_solve_is_undecided(monkeypatch: pytest.MonkeyPatch) -> None:
    # mutant S-3: an undecided solve at the caution's margin taken as "no plan keeps that room"
    answer = _thin_at_64k()
    assert answer.room_kept == solver.RoomKept(margin=0.04, plan=None)
    answer_for = solver.solve.answer_for

    def undecided_at_the_margin(catalog: Any, query: Any, *given: Any, **named: Any) -> solver.Answer:
        found = answer_for(catalog, query, *given, **named)
        return found.model_copy(update={"status": "unknown", "plans": ()}) if query.margin == 0.04 else found

    monkeypatch.setattr(solver.solve, "answer_for", undecided_at_the_margin)
    answer = _thin_at_64k()
    assert answer.best is not None and "thin-headroom" in answer.best.caution_codes and answer.room_kept is None


def test_no_plan_with_that_room_for_the_longest_context_says_at_any_length() -> None:
    # mutant S-6: "for 65536 tokens" said where the answer looked for the longest context, not a length
    answer = _thin_at_64k()
    assert answer.best is not None
    longest = answer.model_copy(update={"objective": "max_len"})
    assert room_kept_words(longest, answer.best, COMMAND_OPTIONS) == (
        "--margin 0.04, which keeps the room its caution asks for, leaves no plan at any length within 1 GPU: "
        "measure a step first")
    assert room_kept_words(answer, answer.best, COMMAND_OPTIONS) == (
        "--margin 0.04, which keeps the room its caution asks for, leaves no plan for 65536 tokens within 1 GPU: "
        "measure a step first")


def test_a_job_gone_from_a_pool_gone_too_is_no_job_gone(cli: Cli, tmp_path: Path) -> None:
    # mutant P-7: a running job whose pool the file lacks too named as running in a pool whose GPUs are taken as free
    now = _placement_json(cli, _fleet_file(tmp_path))
    pools = [{**FLEET["pools"][0], "name": "a100-new"}]
    jobs = [{**job, "name": "mid-2"} if job["name"] == "mid" else job for job in FLEET["jobs"]]
    path = tmp_path / "moved.yaml"
    path.write_text(yaml.safe_dump({**FLEET, "pools": pools, "jobs": jobs}), encoding="utf-8")
    assert current_jobs_gone(now, solver.load_fleet(path)) == ()
    path.write_text(yaml.safe_dump({**FLEET, "jobs": jobs}), encoding="utf-8")  # the pool kept: the job is gone
    assert [(gone.pool, gone.job) for gone in current_jobs_gone(now, solver.load_fleet(path))] == [("a100", "mid")]


QWEN3_8B = load_catalog().model("Qwen3-8B")


def test_lora_targets_of_names_and_a_regex_are_a_regex_whole() -> None:
    # mutant L-2: a list with one module name in it read as names, its regex among them made a name's alternative
    assert given_lora_targets("q_proj, v_proj", 8, QWEN3_8B, "fused", COMMAND_OPTIONS) == LoraTargets(
        ".*\\.(q_proj|v_proj)")
    with pytest.raises(QueryError) as refused:
        given_lora_targets("q_proj,.*\\.v_proj", 8, QWEN3_8B, "fused", COMMAND_OPTIONS)
    assert str(refused.value).startswith("--lora-targets 'q_proj,.*\\.v_proj' matches no module of Qwen3-8B ("
                                         "model.layers.N.self_attn.{q,k,v,o}_proj, ")


QV_LESS_V = LoraTargets(".*\\.(q_proj|v_proj)", ".*\\.v_proj")
"""A config's target_modules on the query and value projections, its exclude_modules taking the value's out."""


def test_an_exclude_modules_leaves_its_modules_out_of_the_adapter_counted() -> None:
    # mutant L-11: the adapter counted on target_modules' matches, exclude_modules ignored. Qwen3-8B's q_proj,
    # 4096 -> 4096, at rank 8 in 36 layers: 8 x 8192 x 36; its v_proj (4096 -> 1024) would add 8 x 5120 x 36.
    catalog = load_catalog()
    excluded = catalog.with_lora_targets("Qwen3-8B", QV_LESS_V).model("Qwen3-8B")
    both = catalog.with_lora_targets("Qwen3-8B", LoraTargets(QV_LESS_V.pattern)).model("Qwen3-8B")
    assert lora_parameters(excluded, 8) == 8 * 8192 * 36 == 2_359_296
    assert lora_parameters(both, 8) == 8 * (8192 + 5120) * 36


def test_the_lora_configs_comment_names_the_exclude_modules() -> None:
    # mutant L-13: the comment naming target_modules alone, though the written config excludes some of them
    words, split = lora_configs_words(QWEN3_8B, "0.6", "fused", QV_LESS_V).split("; but ")
    assert words == ("a new adapter on target_modules '.*\\.(q_proj|v_proj)' less exclude_modules '.*\\.v_proj', as "
                     "planned; with LoRA Trinity builds no reference model")
    # s80: lora-targets-saved-split
    assert split.startswith("target_modules '.*\\.(q_proj|v_proj)' is a regular expression, which Trinity writes")


def test_mlp_only_layers_of_a_boolean_is_refused(tmp_path: Path) -> None:
    # mutant O-14: true taken as layer 1 (a bool is an int), the layer then counted dense
    moe = _qwen3_moe(tmp_path, mlp_only_layers=[1]).moe
    assert moe is not None and moe.dense_layers == 1
    with pytest.raises(TableError, match=r"config\.json: mlp_only_layers: expected a list of layer indices, got "
                                         r"\[true\]$"):
        _qwen3_moe(tmp_path, mlp_only_layers=[True])


def test_the_shared_budget_is_the_largest_of_every_gpu_types_tables_whatever_their_order() -> None:
    # mutant A-1: the first GPU type's tables alone, H100-80GB's none: one node's 8 for both, not the A100's 6
    answers = solver.plan("4B", gpu=["h100", "a100"], max_model_len=32768)
    assert sorted((answer.gpu, answer.budget_gpus) for answer in answers) == [("A100-80GB", 6), ("H100-80GB", 6)]


CONFIG_4B = """\
project: p
name: n
mode: both
algorithm:
  algorithm_type: grpo
  repeat_times: 8
model:
  model_path: Qwen/Qwen3-4B
  max_prompt_tokens: 2048
  max_response_tokens: 30720
  max_model_len: 32768
"""
"""A Trinity config that gives no trainer GPUs (no cluster section): the budget is make_query's default."""


def test_a_config_giving_no_trainer_gpus_notes_the_shared_budget(cli: Cli, tmp_path: Path) -> None:
    # mutant A-5: the note left out wherever --from-config is given, though this config leaves the budget to the default
    path = tmp_path / "config.yaml"
    path.write_text(CONFIG_4B, encoding="utf-8")
    status, _, err = cli("--from-config", str(path), "--gpu", "a100,h100", "--json")
    assert status == 0 and err.splitlines()[-1] == SHARED_BUDGET


def test_a_check_command_names_a_relative_path_by_each_file_option_but_the_placeholder() -> None:
    # mutants A-7 (the MODEL_CONFIG placeholder taken for a relative path) and A-8 (--memory-model's path unread)
    assert names_relative_path(("--gpu", "H100-80GB", "--memory-model", "memory.yaml")) is True
    assert names_relative_path(("--gpu", "H100-80GB", "--memory-model", "/abs/memory.yaml")) is False
    assert names_relative_path(("--model-config", "MODEL_CONFIG", "--critic", "none")) is False
    assert names_relative_path(("--model-config", "MODEL_CONFIG"), "mine.yaml") is True


def test_a_patched_configs_check_note_on_the_placeholder_names_no_relative_path() -> None:
    # mutant A-9: CONFIG, the placeholder for the patched file's path, taken for a relative path
    (answer,) = solver.plan("0.6B", gpu="h100", max_model_len=32768, budget_gpus=6, exact=True)
    best, model, text = answer.best, load_catalog().model(answer.model), USER_CONFIG.read_text(encoding="utf-8")
    assert best is not None

    def check_lines(path: str = CHECK_PLACEHOLDER) -> list[str]:  # the default: no path given
        patched = patch_trinity_config(text, best, model, check=("--gpu", "H100-80GB"), path=path)
        return [line for line in patched.splitlines() if "To check" in line]

    assert check_lines() == ["  # To check this file (CONFIG: its path) as its plan was made:"]
    assert check_lines(path="mine.yaml") == [
        "  # To check this file as its plan was made (its relative paths from the directory it was written in):"]


def test_minimize_gpus_with_exact_is_refused_as_such_without_a_budget(cli: Cli) -> None:
    # mutant A-10: "--exact needs --gpus N, ..." asked for, though --minimize gpus refuses --exact with any budget
    status, out, err = cli("--model", "4B", "--gpu", "h100", "--len", "32768", "--minimize", "gpus", "--exact")
    assert (status, out, err) == (2, "", "solve: error: --minimize gpus chooses the GPU count: drop --exact\n")


@pytest.mark.usefixtures("python_ctrl_c")  # Python's own Ctrl-C handler, also in a suite run with Ctrl-C ignored
def test_ctrl_c_held_after_an_interrupted_purchase_does_not_call_it_whole(cli: Cli,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # mutant C-4: "the purchase above is whole" of a purchase whose widening a Ctrl-C stopped; the second Ctrl-C,
    # held during its notes, stops nothing: the purchase printed stands, the best found so far (smallslips34)
    ctrl_c_in_widening_then_in_the_notes(monkeypatch)
    status, out, err = cli("cluster", str(SMALLER_ASKS), "--buy", "--json")
    assert (status, json.loads(out)["interrupted"], err) == (
        130, True, "solve cluster: interrupted: the best purchase found so far is above\n")
