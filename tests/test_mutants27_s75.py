"""Mutation pass over session 75's code (helper mutants27, s75): tests that kill the mutants its own tests left alive
(a placement's memory model source, the LoRA slots a config's rollout engine holds, ...). Each asserts what the
command or function does, exactly."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from test_criticreasons_s75 import A100_8, _current, _fleet, _job, _placed
from test_lorarest3_s75 import _config as _lorarest3_config
from test_lorarest3_s75 import _lines as _lorarest3_lines
from test_ropeeight_s75 import _written as _ropeeight_written

import solver
import solver.cli.atomic
import solver.cluster.search
from solver.api import rollout_memory_problem
from solver.cli.atomic import write_all_atomically
from solver.cluster.options import Option, Planner, job_options
from solver.cluster.placements import IdleRoom
from solver.query import VllmRollout
from solver.tables import Fleet, load_catalog, load_fleet, load_weights
from solver.trinity import read_trinity_config

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"
CATALOG = load_catalog()

Cli = Callable[..., tuple[int, str, str]]


def test_place_with_a_memory_model_object_names_it_as_its_source() -> None:
    fitted = solver.calibrate_memory_model([str(EXAMPLES / "my-cells.yaml")], with_tables=True).memory_model
    placed = solver.place(str(EXAMPLES / "fleet.yaml"), memory=fitted, time_limit_s=5)
    assert placed.memory_model_source == fitted.own_source == "calibrated on my-cells.yaml and the documented tables"
    assert solver.place(str(EXAMPLES / "fleet.yaml"), time_limit_s=5).memory_model_source is None


def _engine_problem(max_loras: int) -> str | None:
    # Qwen3-8B at 38000 tokens on a 4090 (20.6 GiB for vLLM): 20.48 GiB without LoRA; rank 16's slot is 0.09 GiB.
    engine = VllmRollout(1, None, 2, 38000, lora_rank=16, max_loras=max_loras)
    problem = rollout_memory_problem(engine, CATALOG.model("Qwen3-8B"), CATALOG.gpu("RTX-4090-24GB"), 8, 38000)
    return None if problem is None else problem.words


def test_the_rollout_engine_check_counts_every_lora_slot_the_config_gives() -> None:
    assert _engine_problem(1) is None  # one slot of rank 16 holds
    four, eight = _engine_problem(4), _engine_problem(8)
    assert four is not None and "vLLM's LoRA slots (0.4 GiB)" in four and "(3.8 + 0.2 + 1.3 GiB of 20.6)" in four
    assert eight is not None and "vLLM's LoRA slots (0.7 GiB)" in eight and "(3.8 + 0.4 + 1.3 GiB of 20.6)" in eight


@pytest.mark.usefixtures("python_ctrl_c")  # Python's own Ctrl-C handler, also in a suite run with Ctrl-C ignored
def test_a_ctrl_c_while_two_files_are_staged_comes_once_both_are_in_place(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # write_all_atomically holds Ctrl-C itself (solve --out with --write, a command's examples): the first file's
    # Ctrl-C comes as KeyboardInterrupt once both files are renamed into place, and no temporary file is left.
    staged = solver.cli.atomic._staged

    def ctrl_c_at_the_first(path: Path, text: str) -> tuple[str, Path]:
        if path.name == "a.yaml":
            signal.raise_signal(signal.SIGINT)
        return staged(path, text)

    monkeypatch.setattr(solver.cli.atomic, "_staged", ctrl_c_at_the_first)
    with pytest.raises(KeyboardInterrupt):
        write_all_atomically({tmp_path / "a.yaml": "a\n", tmp_path / "b.yaml": "b\n"})
    assert sorted((path.name, path.read_text(encoding="utf-8")) for path in tmp_path.iterdir()) == [
        ("a.yaml", "a\n"), ("b.yaml", "b\n")]


def _room_fleet(tmp_path: Path) -> tuple[Planner, Fleet, list[Option], list[Option]]:
    """A node of 8 H20s with 96 GiB of host memory, and the ways of Qwen3-8B at 32768 tokens (job 0: 4 GPUs need
    71.2 GiB of host memory, 6 need 72.0, on Trinity 0.6, which loads it on rank 0 alone on an H20: on every rank, no
    release named, 96 GiB holds none of its ways) and of Qwen3-4B at 8192 (job 1: 1 GPU needs 36.2 GiB)."""
    path = tmp_path / "room.yaml"
    h20 = {"name": "h20", "gpu": "H20-96GB", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 96}
    path.write_text(yaml.safe_dump({"pools": [h20], "jobs": [
        {"name": "j", "model": "Qwen3-8B", "max_model_len": 32768, "trinity_version": "0.6"},
        {"name": "other", "model": "Qwen3-4B", "max_model_len": 8192}]}), encoding="utf-8")
    fleet = load_fleet(path)
    planner = Planner(CATALOG, load_weights(), "auto")
    return planner, fleet, job_options(planner, fleet, 0), job_options(planner, fleet, 1)


def test_the_idle_room_holds_a_way_only_where_its_node_has_the_host_memory_too(tmp_path: Path) -> None:
    planner, fleet, ways, others = _room_fleet(tmp_path)
    four, one = ways[0], others[0]
    assert (four.size, four.plan.gpus, one.size, one.plan.gpus) == (4, 4, 1, 1)
    assert [planner.host_tenths(fleet.jobs[0], four.plan), planner.host_tenths(fleet.jobs[1], one.plan)] == [712, 362]
    assert IdleRoom(planner, fleet, {}).room_for(four, fleet.jobs[0]) == (0,)
    # Beside the other job on 1 GPU: 7 idle GPUs, but 96.0 - 36.2 = 59.8 GiB of host memory, short of 71.2.
    beside = IdleRoom(planner, fleet, {1: (one, [0])})
    assert (beside.gpus, beside.host) == ([[7]], [[598]])
    assert beside.room_for(four, fleet.jobs[0]) == ()


def test_a_job_kept_in_its_pool_says_nothing_of_a_cheaper_way_in_that_same_pool(cli: Cli, tmp_path: Path) -> None:
    # Qwen3-4B at 16384 runs on 4 of a node's 8 A100s (cost 0.25); the pool's other node, idle, holds its 8-GPU way
    # (0.125). With --no-widen nothing grows: staying in its own pool forgoes no other pool's room, so it says nothing.
    both = _fleet(tmp_path, _job("a", "Qwen3-4B", 16384), _job("b", "Qwen3-8B", 16384), pools=[A100_8], name="both")
    running = _placed(cli, both)
    assert [(p["job"], p["nodes"], p["trainer_gpus"]) for p in json.loads(running.read_text())["placements"]] == [
        ("a", [0], 4), ("b", [0], 4)]
    alone = _fleet(tmp_path, _job("a", "Qwen3-4B", 16384), pools=[{**A100_8, "nodes": 2}], name="alone")
    assert _current(cli, alone, running, "--no-widen")[0] == [("a", "stays", 4, None, None)]


def test_a_running_job_whose_training_changed_is_placed_afresh_where_it_costs_least(cli: Cli, tmp_path: Path) -> None:
    # Qwen3-8B at 32768 runs on a node of 4 A100s (cost 0.325); the file now asks LoRA rank 32 or an offloaded critic:
    # no way keeps it as it runs, so it moves, to the idle H20 node where it costs least, not onto its own GPUs.
    a100 = {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 4}
    h20 = {"name": "h20", "gpu": "H20-96GB", "nodes": 1, "gpus_per_node": 4}
    job = _job("j", "Qwen3-8B", 32768)
    running = _placed(cli, _fleet(tmp_path, job, pools=[a100], name="a100-only"))
    # The offloaded critic's work costs 2 beside the actor's 1 (session 76's critic term: docs/planner.md).
    for training, cost in (({"lora_rank": 32}, 0.27775), ({"critic": "offloaded"}, 0.83325)):
        changed = _fleet(tmp_path, {**job, **training}, pools=[a100, h20], name="changed")
        placed = json.loads(cli("cluster", str(changed), "--current", str(running), "--json")[1])["placements"]
        assert [(p["pool"], p["current"], p["plan"]["cost"], p.get("move_reason_code")) for p in placed] == [
            ("h20", "moves", cost, "training-changed")]


def test_a_cheaper_way_in_another_pool_is_said_only_where_it_beats_the_wider_way_too(cli: Cli, tmp_path: Path) -> None:
    # Qwen3-4B at 16384 kept on 4 of a node's 8 A100s (cost 0.25); the 4 idle GPUs beside it would grow it to 8
    # (0.125). An idle node of 8 H100s runs it for 0.1263: less than its own way, but not than the wider one, so the
    # stay names the wider way alone.
    both = _fleet(tmp_path, _job("a", "Qwen3-4B", 16384), _job("b", "Qwen3-8B", 16384), pools=[A100_8], name="both")
    running = _placed(cli, both)
    h100 = {"name": "h100", "gpu": "H100-80GB", "nodes": 1, "gpus_per_node": 8}
    alone = _fleet(tmp_path, _job("a", "Qwen3-4B", 16384), pools=[A100_8, h100], name="alone")
    assert _current(cli, alone, running)[0] == [("a", "stays", 4, "count-kept", (
        "its trainer GPU count is kept as it runs (4 trainer GPUs); the 4 idle GPUs beside it on its node would grow "
        "it to 8 trainer GPUs (vanilla, cost 0.125, not 0.25), which would restart it"))]


def test_a_kept_job_in_a_placement_whose_widening_ctrl_c_stopped_forgoes_no_wider_way(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # As test_criticreasons_s75's count-kept case, but Ctrl-C comes as the placement widens: it stands as placed, not
    # widened, so the job kept on its 4 GPUs says nothing of what widening would grow it to.
    both = _fleet(tmp_path, _job("a", "Qwen3-4B", 16384), _job("b", "Qwen3-8B", 16384), pools=[A100_8], name="both")
    running = _placed(cli, both)
    alone = _fleet(tmp_path, _job("a", "Qwen3-4B", 16384), pools=[A100_8], name="alone")
    assert _current(cli, alone, running)[0][0][3] == "count-kept"  # whole, it says what widening forgoes

    def ctrl_c(*args: object, **keywords: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(solver.cluster.search, "widen_jobs", ctrl_c)
    result = solver.place(alone, current=running)
    assert [(p.job, p.current, p.trainer_gpus, p.widened_from, p.stay_reason_code, p.stay_reason)
            for p in result.placements] == [("a", "stays", 4, None, None, None)]
    assert result.interrupted


def test_keys_trinity_05_lacks_are_said_once_not_again_as_no_such_key(cli: Cli, tmp_path: Path) -> None:
    # For Trinity 0.5, explorer.rollout_model.data_parallel_size (0.6's) is said as unknown-key-refused, and a null
    # model.external_model (0.5.2's) as typed-null-refused: neither again as a key some 0.5 release lacks.
    text = (Path(__file__).resolve().parent / "data" / "trinity" / "user-config.yaml").read_text(encoding="utf-8")
    text = text.replace("  rollout_model:\n", "  rollout_model:\n    data_parallel_size: 1\n", 1)
    config = tmp_path / "config.yaml"
    config.write_text(text.replace("model:\n", "model:\n  external_model: null\n", 1), encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100", "--trinity-version", "0.5", "--json")
    assert status == 0 and json.loads(out)[0]["current"]["config_problem_codes"] == [
        "rope-scaling-unneeded", "unresolved-value", "unknown-key-refused", "typed-null-refused"]


@pytest.mark.parametrize(("arguments", "slots"), [
    ("{max_loras: 1024}", 1024), ("{max_loras: 1}", 1), ("{max_loras: true}", 1), ("{max_loras: 0}", None),
    ("{max_loras: 1025}", 1024), ("{max_lora_rank: true}", 1)])
def test_extra_engine_args_lora_keys_are_read_as_whole_numbers_in_range(arguments: str, slots: int | None) -> None:
    # A max_loras from 1 to 1024 counts that many slots, more counted at 1024 (a lower bound), YAML's true as vLLM's
    # pydantic reads it (1: smallslips21's TypeAdapters); 0, which vLLM refuses, leaves the rollout engine's memory
    # unchecked (None: its own line says why).
    text = _lorarest3_config(rollout=f"    enable_lora: true\n    extra_engine_args: {arguments}\n")
    engine = read_trinity_config(text, "trinity.yaml", {}).vllm_rollout
    assert (None if engine is None else engine.max_loras) == slots


def test_a_lora_config_without_a_path_is_refused_for_its_rank_not_its_targets_where_that_cannot_be_read() -> None:
    # lora_rank 0 without a path: the dummy adapter's rank is refused, whatever its targets; a rank that is no
    # number has its own line, and the targets (matching no module) are not judged on it.
    zero = _lorarest3_lines(_lorarest3_config("  lora_configs: [{lora_rank: 0}]\n"))
    assert zero == [("lora-configs-refused", (
        "model.lora_configs[0].lora_rank 0 without a path: Trinity makes a dummy adapter of that rank, which peft "
        "refuses (\"`r` should be a positive integer value\") before the trainer starts: give a rank above 0 for LoRA, "
        "or drop model.lora_configs for no LoRA"))]
    unread = _lorarest3_config("  lora_configs: [{lora_rank: abc, target_modules: 'nothing'}]\n")
    assert [code for code, _ in _lorarest3_lines(unread)] == ["lora-counted-as-full", "lora-rank-not-a-number-refused"]


def test_a_misspelt_extra_engine_args_is_said_with_the_key_it_means(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "trinity.yaml"
    config.write_text(_lorarest3_config(rollout="    extra_engine_arg: {max_loras: 2}\n"), encoding="utf-8")
    current = json.loads(cli("--from-config", str(config), "--gpu", "h100", "--json")[1])[0]["current"]
    assert (current["config_problem_codes"], current["config_problems"]) == (["misspelt-key-refused"], [(
        "explorer.rollout_model.extra_engine_arg: did you mean extra_engine_args? That key is unset, and read as "
        "such; Trinity refuses the config (it knows no such key)")])


@pytest.mark.parametrize("targets", ["all-linear", "All-Linear"])
def test_a_new_adapter_on_all_linear_written_out_is_not_refused(targets: str) -> None:
    # all-linear is PEFT's word (in any case), not a regular expression that matches no module.
    lines = _lorarest3_lines(_lorarest3_config(f"  lora_configs: [{{lora_rank: 16, target_modules: {targets}}}]\n"))
    assert [code for code, _ in lines] == ["lora-counted-as-full"]


def test_a_comment_after_an_anchored_list_entry_stays_where_a_later_entry_is_its_alias(
        cli: Cli, tmp_path: Path) -> None:
    # The list ending explorer holds an alias of its first entry: the trainer section appended at the end takes no
    # comment through it from the anchor's block, which keeps its own.
    comment = "# a comment after the anchored entry\n"
    text = ("mode: both\nalgorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-4B\n"
            "  max_model_len: 16384\ncluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n  rollout_model:\n"
            "    engine_num: 4\n"
            f"  auxiliary_models:\n  - &judge\n    model_path: Qwen/Qwen3-0.6B\n{comment}  - *judge\n")
    written = _ropeeight_written(cli, tmp_path, text)
    assert written.endswith(f"  - &judge\n    model_path: Qwen/Qwen3-0.6B\n{comment}  - *judge\ntrainer:\n"
                            "  ulysses_sequence_parallel_size: 1\n  max_token_len_per_gpu: 32768\n")
