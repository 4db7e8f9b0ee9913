"""Session 63, mutants6: tests that kill the hand mutants of session 62's code (review s62's changes: --check's vLLM
refusals, OptionNames, --buy's notes, required jobs' words, nodes given, trainer nodes, the host memory note) that
the session's own test files let live. Each asserts an exact answer, word or exit status."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from test_api import in_api_words
from test_clusterwords_s62 import LONG_JOB_FLEET
from test_llamalen_s62 import CONFIG as LLAMA
from test_ropecheck_s62 import CHECK, CONFIG, REFUSED

import solver
from solver.cli import main
from solver.trinity.fragment import wrapped_comments


@pytest.fixture(autouse=True)
def _no_long_length_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    # The refusals read the variable from this shell, as vLLM does: a developer's own setting must not pass them.
    monkeypatch.delenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", raising=False)


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "grpo32b.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _current(cli, tmp_path: Path, text: str) -> tuple[int, dict]:
    status, out, _ = cli("--from-config", str(_config(tmp_path, text)), *CHECK, "--json")
    return status, json.loads(out)[0]["current"]


def test_an_engine_type_that_starts_with_vllm_is_a_vllm_rollout_that_refuses(cli, tmp_path: Path):
    # vllm_async (Trinity's older default) starts vLLM too: the length past the native context is refused.
    status, current = _current(cli, tmp_path, CONFIG.replace("engine_type: vllm", "engine_type: vllm_async"))
    assert (status, current["refused"], current["config_problem_codes"]) == (1, True, ["rope-scaling-missing-refused"])
    assert " ".join(current["config_problems"][0].split()) == REFUSED.removeprefix("refused: ")


def test_a_rollout_model_with_its_own_rope_scaling_is_no_refusal(cli, tmp_path: Path):
    # The rollout model takes model.rope_scaling only where it sets none of its own (Trinity's set_if_none); its own
    # differs from the trainer's (s66: a line of its own).
    own = CONFIG.replace("enable_prefix_caching: false}", "enable_prefix_caching: false, rope_scaling: {rope_type: "
                         "yarn, factor: 1.6, original_max_position_embeddings: 40960}}")
    status, current = _current(cli, tmp_path, own)
    assert (status, current["refused"], current["config_problem_codes"]) == (
        0, False, ["rope-scaling-missing", "rollout-rope-scaling-differs"])


def test_a_scaling_other_than_yarn_that_falls_short_is_a_but_line_not_the_yarn_refusal(cli, tmp_path: Path):
    # rope-scaling-short-refused is YaRN's (vLLM derives factor x original_max_position_embeddings for it); a linear
    # scaling is wrong twice over (its type, its reach), as but: lines (given its base, which 0.6's trainer needs).
    linear = CONFIG.replace("  max_model_len: 65536\n", "  max_model_len: 65536\n  rope_scaling: {rope_type: linear, "
                            "factor: 1.2, original_max_position_embeddings: 40960, rope_theta: 1000000}\n")
    status, current = _current(cli, tmp_path, linear)
    assert (status, current["refused"]) == (0, False)
    assert current["config_problem_codes"] == ["rope-scaling-wrong", "rope-scaling-wrong"]
    assert current["config_problems"][1].startswith("model.rope_scaling (factor 1.2 over 40960) covers 49152 tokens, "
                                                    "fewer than max_model_len 65536: set it")


def test_a_second_write_replaces_the_check_command_that_sets_two_variables(cli, tmp_path: Path):
    # Llama 3.1 past its native context with Env: the check command sets vLLM's long-length variable and Env's. A
    # second --write onto the written file recognises that line as its own and writes one command, not two.
    config, first, second = _config(tmp_path, LLAMA), tmp_path / "first.yaml", tmp_path / "second.yaml"
    for source, written in ((config, first), (first, second)):
        status, _, _ = cli("--from-config", str(source), "--gpu", "h800", "--trinity-version", "0.6",
                           "--write", str(written))
        assert status == 0
    commands = [line for line in second.read_text(encoding="utf-8").splitlines() if "solve --from-config" in line]
    assert commands == [(f"  #   VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
                         f"solve --from-config {second} --check --gpu H800-80GB --trinity-version 0.6")]


def test_the_fragment_header_says_what_to_do_about_a_length_past_the_validated_one(cli):
    status, out, _ = cli("--model", "qwen3-8b", "--gpu", "h800", "--len", "160k", "--emit", "trinity")
    assert status == 0
    assert out.splitlines()[1:3] == [
        "# plan: Env + Offload + SP=8 on 8 H800-80GB trainer GPUs, max_model_len 163840, past the validated",
        "# 131072 (check the model's quality at this length, or plan --len 131072)"]


CROWDED = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}], "jobs": [
    {"name": name, "model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 4} for name in ("a", "b", "c")]}
"""test_required_s62's three jobs of 5 GPUs at the fewest on one node of 8, none marked required in the file."""
BOX = {"name": "box", "gpu": "RTX-4090", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 80}
"""test_required_s62's node of 8 RTX 4090s with 80 GiB of host memory."""


def _fleet_file(instance: dict, tmp_path: Path) -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(instance), encoding="utf-8")
    return path


def test_required_on_the_command_line_is_named_first_in_the_buy_note(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]):
    # On two nodes, the file marks c required; --required a adds a. The note's --buy keeps a required and adds those
    # left out (b). (Where the file marks none, --buy alone buys for every job: test_fleetweek_s69.)
    crowded = {"pools": [{**CROWDED["pools"][0], "nodes": 2}],
               "jobs": [*CROWDED["jobs"][:2], {**CROWDED["jobs"][2], "required": True}]}
    path = _fleet_file(crowded, tmp_path)
    assert main(["cluster", str(path), "--required", "a"]) == 1
    assert capsys.readouterr().err == (
        f"solve cluster: note: to place the jobs left out too: solve cluster {path} --buy --required a,b names the "
        "fewest GPUs, then nodes, to add to the pools (and the jobs no number of nodes runs)\n")


def test_the_buy_note_beside_a_required_job_placed_names_the_job_more_nodes_may_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    # r (required) is placed on the box; mid (Qwen3-8B at 8192) has no way on one box, and 2 boxes train it (on
    # Trinity 0.5.1, which loads the untied model on rank 0 alone: on every rank, no release named, 80 GiB holds none).
    instance = {"pools": [BOX], "jobs": [{"name": "r", "model": "Qwen3-0.6B", "max_model_len": 4096, "required": True},
                                         {"name": "mid", "model": "Qwen3-8B", "max_model_len": 8192,
                                          "trinity_version": "0.5.1"}]}
    path = _fleet_file(instance, tmp_path)
    assert main(["cluster", str(path)]) == 1
    assert capsys.readouterr().err == (
        f"solve cluster: note: mid: no way to run on the pools' nodes as they are, but more nodes may give it a way to "
        f"run: solve cluster {path} --buy --required mid names the "
        "fewest GPUs, then nodes, to add to the pools (and the jobs no "
        "number of nodes runs)\n")


def test_a_job_beyond_reach_in_one_pool_and_with_no_plan_at_all_in_another_gets_no_beyond_any_nodes_note(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    # On the h800 pool more nodes would not reach 600000 tokens, even with the auto token budget (more_nodes_reach
    # false; 300000 they reach with it); on the box nothing trains
    # Qwen3-32B at all, a reason more_nodes_reach does not weigh (null): the note needs false in every pool.
    instance = {"pools": [BOX, {"name": "h800", "gpu": "H800-80GB", "nodes": 1, "gpus_per_node": 8}],
                "jobs": [{"name": "long", "model": "Qwen3-32B", "max_model_len": 600000}]}
    path = _fleet_file(instance, tmp_path)
    assert main(["cluster", str(path), "--json"]) == 1
    [unplaced] = json.loads(capsys.readouterr().out)["unplaced"]
    assert [(pool["plan_reason_code"], pool["more_nodes_reach"]) for pool in unplaced["pools"]] == [
        ("nothing-trains", None), ("length-beyond-reach", False)]
    # The pool's node size is no limit to lift: none of its counts trains it, even with more host memory (the pool's
    # host_ram_gb, hardware, is not named among what is dropped).
    assert unplaced["reason"].startswith(
        "box: nothing in the tables and the memory model's estimates for Qwen3-32B on RTX-4090-24GB within 8 GPUs "
        "trains with 80 GiB of host memory per node (the pool's host_ram_gb); no count of nodes of 8 GPUs (the pool's "
        "gpus_per_node) trains it, even with more host memory than the pool's 80 GiB and with --token-budget auto: "
        "an SP group stays within one node, so SP=8 at most; h800: ")
    assert main(["cluster", str(path)]) == 1
    assert capsys.readouterr().err == ""


def test_two_jobs_no_number_of_nodes_trains_are_named_together_in_the_plural(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    # (vast on Trinity 0.5.1, rank 0 loading: on every rank, no release named, the box's host memory trains none.)
    instance = {"pools": [BOX], "jobs": [{"name": "huge", "model": "Qwen3-4B", "max_model_len": 9000000},
                                         {"name": "vast", "model": "Qwen3-8B", "max_model_len": 9000000,
                                          "trinity_version": "0.5.1"}]}
    assert main(["cluster", str(_fleet_file(instance, tmp_path))]) == 1
    assert capsys.readouterr().err == (
        "solve cluster: note: huge, vast: no number of nodes trains their max_model_len in any pool they may use, so "
        "--buy would not place them either: a shorter max_model_len, or another GPU type, may\n")


def test_a_pool_that_leaves_the_trainer_exactly_the_gpus_the_planner_weighs_names_no_pool_bound(tmp_path: Path):
    # 9 nodes of 8, 8 of them rollout GPUs: 64 for the trainer, the most the planner weighs; the reason names that
    # bound once ("within 64 GPUs"), not the pool's too. (On Trinity 0.6, which loads the model on rank 0 alone on an
    # H800: on every rank, no release named, 8 x 262.8 GiB, nothing fits 2048 GiB.)
    path = tmp_path / "fleet.yaml"
    path.write_text(LONG_JOB_FLEET.replace("nodes: 10", "nodes: 9").replace(
        "rollout_gpus: 8}", "rollout_gpus: 8, trinity_version: '0.6'}"), encoding="utf-8")
    [unplaced] = solver.place(path).unplaced
    assert unplaced.reason.startswith(
        "h800 (beside 8 rollout GPUs): 262144 tokens is beyond what the tables and the memory model's estimates allow "
        "for Llama-3.1-70B on H800-80GB within 64 GPUs with 2048 GiB of host memory per node")


def _small_job(name: str, rollout_gpus: int, **fields: object) -> dict:
    """Qwen3-0.6B at 4096 tokens: a trainer of 1 GPU and `rollout_gpus` beside it fill `rollout_gpus + 1` of a node."""
    return {"name": name, "model": "Qwen3-0.6B", "max_model_len": 4096, "rollout_gpus": rollout_gpus, **fields}


def test_a_room_held_by_two_required_jobs_says_they_are_required(tmp_path: Path):
    # One node of 8: r and s (required, 4 GPUs each) fill it; x (8 GPUs) is left out, and the room is theirs.
    instance = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
                "jobs": [_small_job("r", 3, required=True), _small_job("s", 3, required=True), _small_job("x", 7)]}
    result = solver.place(_fleet_file(instance, tmp_path), widen=False)
    assert sorted(placed.job for placed in result.placements) == ["r", "s"]
    assert [(entry.job, entry.reason.split("; ", 1)[1]) for entry in result.unplaced] == [
        ("x", ("r, s (required) leave too little room for it, even with every other job taken out: no priority "
               "places it, more nodes would (solver.buy_nodes)"))]


def test_a_room_only_a_required_job_holds_blames_it_alone(tmp_path: Path):
    # cluster92: r (required, 4 GPUs) and b (3) share the one node; x (6 GPUs, priority 5) is left out. Taking b out
    # leaves 4 GPUs, fewer than x's 6: b was named beside r as holding its room, though no priority places x.
    instance = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
                "jobs": [_small_job("r", 3, required=True), _small_job("b", 2), _small_job("x", 5, priority=5)]}
    result = solver.place(_fleet_file(instance, tmp_path), widen=False)
    assert sorted(placed.job for placed in result.placements) == ["b", "r"]
    assert [(entry.job, entry.reason.split("; ", 1)[1]) for entry in result.unplaced] == [
        ("x", ("r (required) leaves too little room for it, even with every other job taken out: no priority places "
               "it, more nodes would (solver.buy_nodes)"))]


def test_two_required_jobs_that_fit_nowhere_are_named_in_the_plural(tmp_path: Path):
    too_long = {"model": "Qwen3-0.6B", "max_model_len": 9000000}  # no GPU count reaches it
    instance = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
                "jobs": [{"name": "must", **too_long, "required": True}, {"name": "also", **too_long, "required": True},
                         _small_job("fine", 3)]}
    result = solver.place(_fleet_file(instance, tmp_path))
    assert (result.status, result.placements) == ("infeasible", ())
    assert [(entry.job, entry.reason_code) for entry in result.unplaced] == [
        ("must", "no-way-to-run"), ("also", "no-way-to-run"), ("fine", "another-job-fits-nowhere")]
    assert result.unplaced[2].reason == ("the required jobs must, also fit nowhere, and a placement places every "
                                         "required job or none")


def test_no_plan_on_the_nodes_given_under_no_estimate_is_said_once_with_no_estimate_lifted(cli):
    # --no-estimate: the tables' nearest plan finds none on nodes of 2, and the estimates' (`_with_estimated_plan`)
    # none either; the words are the estimates' search's, once, naming --no-estimate among the limits lifted.
    status, out, _ = cli("--model", "4B", "--gpu", "a100", "--len", "900k", "--gpus", "2", "--node-gpus", "2",
                         "--no-estimate", "--json")
    (answer,) = json.loads(out)
    assert (status, answer["reason_code"]) == (1, "length-beyond-reach")
    assert answer["reason"] == (
        "921600 tokens is beyond what the tables allow for Qwen3-4B on A100-80GB within 2 GPUs: the longest is 51200 "
        "(Env + Offload + SP=2 on 2 GPUs, documented); no count of nodes of 2 GPUs (--node-gpus) trains it, even "
        "without --no-estimate and with --token-budget auto: an SP group stays within one node, so SP=2 at most")


def test_the_emit_dir_notes_name_the_commands_flag_and_the_apis_configs_its_keyword(cli, tmp_path: Path,
                                                                                    unwrapped_fragments: list[str]):
    # A placed plan with Offload gets Trinity 0.6's flags under trainer, and their comment names how to leave them
    # out: --emit-dir (the command) by its flag, placement_configs (the API) by its keyword.
    instance = {"pools": [{"name": "h800", "gpu": "H800-80GB", "nodes": 1, "gpus_per_node": 8}],
                "jobs": [{"name": "long", "model": "Qwen3-8B", "max_model_len": 163840, "rollout_gpus": 0}]}
    path = _fleet_file(instance, tmp_path)
    assert cli("cluster", str(path), "--emit-dir", str(tmp_path / "configs"))[0] == 0
    written = (tmp_path / "configs" / "long.yaml").read_text(encoding="utf-8")
    [unwrapped] = unwrapped_fragments  # the words swapped before the wrap (in_api_words): their lengths differ
    # clusterrelease91: both name the length by the job's key (it was --len, which solve cluster does not take)
    assert written == wrapped_comments(unwrapped) and "or plan with the job's max_model_len 131072)" in unwrapped
    assert "(0.5 refuses them: --trinity-version 0.5 leaves them out)" in written
    [api] = solver.placement_configs(solver.place(path), path).values()
    assert api == in_api_words(unwrapped)


def test_no_plan_on_the_nodes_given_names_the_batch_and_the_rollout_among_the_limits_lifted(cli):
    status, out, _ = cli("--model", "4B", "--gpu", "a100-80g", "--len", "900k", "--gpus", "2", "--node-gpus", "2",
                         "--rollout-gpus", "1", "--train-batch-size", "3", "--json")
    (answer,) = json.loads(out)
    assert (status, answer["reason_code"]) == (1, "length-beyond-reach")
    assert ("; no count of nodes of 2 GPUs (--node-gpus) trains it, even without --train-batch-size 3 --rollout-gpus 1 "
            "and with --token-budget auto: an SP group stays within one node, so SP=2 at most; ") in answer["reason"]


def test_a_config_without_a_node_size_lets_a_refusal_name_a_plan_on_nodes_of_16(cli, tmp_path: Path):
    # No cluster.gpu_per_node: the node size is the default 8, not the config's, so the nearest plan may take nodes
    # of 16 (SP=16 reaches 131072 tokens of Llama-3.1-70B on L40Ss, as nodes of 8 cannot).
    config = _config(tmp_path, ("project: p\nname: n\nmode: both\nalgorithm: {algorithm_type: grpo}\nmodel:\n"
                                "  model_path: /mnt/models/Llama-3.1-70B-Instruct\n  max_model_len: 131072\n"
                                "trainer:\n  trainer_type: verl\n"))
    status, out, _ = cli("--from-config", str(config), "--gpu", "l40s", "--gpus", "16", "--token-budget", "auto",
                         "--json")
    (answer,) = json.loads(out)
    assert (status, answer["reason_code"]) == (1, "length-beyond-reach")
    assert answer["reason"].endswith(
        "; on nodes of 16 GPUs (--node-gpus), 131072 tokens trains: Env + Offload + SP=16 on 16 GPUs with a lowered "
        "max_token_len_per_gpu of 13312 (estimated, extrapolated)")


def test_the_apply_lines_say_what_to_do_about_a_length_past_the_validated_one(cli):
    status, out, _ = cli("--model", "qwen3-8b", "--gpu", "h800", "--len", "160k")
    assert status == 0
    assert ("# max_model_len past the validated 131072: check the model's quality at this length, or plan --len "
            "131072") in out.splitlines()


def test_a_map_marks_a_length_past_the_native_context_on_the_models_own_scaling(cli):
    # Llama 3.1's llama3 scaling takes it past 131072 with no YaRN factor; the map marks it as past what is known.
    status, out, _ = cli("map", "--model", "llama-3.1-8b", "--gpu", "h800")
    assert status == 0
    assert "│ 230k E+O+SP8@8~!^ │" in out
    assert "^ past the native context on the model's own RoPE scaling (quality untested)" in " ".join(out.split())


def test_write_keeps_a_users_own_host_memory_comment_that_is_not_above_trainer_strategy(cli, tmp_path: Path):
    # --write removes its own earlier note, the one just above trainer.trainer_strategy; a comment of the user's that
    # reads like it elsewhere stays.
    mine = "  # host memory: 512 GiB a node on our cluster for Offload runs\n"
    config = _config(tmp_path, CONFIG.replace("  trainer_type: verl\n", mine + "  trainer_type: verl\n"))
    written = tmp_path / "written.yaml"
    status, _, _ = cli("--from-config", str(config), "--gpu", "h800", "--trinity-version", "0.6", "--write",
                       str(written))
    assert status == 0
    assert mine + "  trainer_type: verl\n" in written.read_text(encoding="utf-8")


def test_a_pool_below_the_tables_smallest_count_is_told_more_nodes_may_run_the_job(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    # The test cells give 8 H800s alone; under --no-estimate a pool of 2 is below the tables' smallest count
    # (budget-below-smallest-count), which more of the pool's nodes lift: the --buy note names the job.
    cells = Path(__file__).parent / "data" / "cells" / "h800.yaml"
    instance = {"pools": [{"name": "pair", "gpu": "h800", "nodes": 1, "gpus_per_node": 2}],
                "jobs": [{"name": "long-14b", "model": "14B", "max_model_len": 131072}]}
    path = _fleet_file(instance, tmp_path)
    assert main(["cluster", str(path), "--cells", str(cells), "--no-estimate", "--json"]) == 1
    [unplaced] = json.loads(capsys.readouterr().out)["unplaced"]
    assert [pool["plan_reason_code"] for pool in unplaced["pools"]] == ["budget-below-smallest-count"]
    assert main(["cluster", str(path), "--cells", str(cells), "--no-estimate"]) == 1
    assert capsys.readouterr().err.endswith(
        f"solve cluster: note: long-14b: no way to run on the pools' nodes as they are, but more nodes may give it a "
        f"way to run: solve cluster {path} --buy --cells {cells} --no-estimate names the "
        "fewest GPUs, then nodes, to add to the pools (and the jobs no number of "
        "nodes runs)\n")
