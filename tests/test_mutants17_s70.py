"""s70 mutants17: the one-GPU caution beside plans that rows and reasons name on one GPU (the native row, the tables'
best row, an extrapolated estimate in a reason, a --no-estimate reason's tables plan), and null caution codes read
back; each kills a mutant the suite let live (table: /work/keep/review-s70-mutants17-table.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import yaml

import solver
from solver.results import SINGLE_GPU_CAUTION_SHORT, PurchaseResult

Cli = Callable[..., tuple[int, str, str]]

HF_CONFIGS = Path(__file__).parent / "data" / "hf-configs"


def _dynamic_llama_1b(tmp_path: Path) -> Path:
    """Llama-3.2-1B's config with a dynamic RoPE scaling of its own and a native context of 24576 tokens (made up):
    one A100 trains it past that with Offload, and without Offload at 24576, where the guide cautions one GPU."""
    config = json.loads((HF_CONFIGS / "Llama-3.2-1B.json").read_text(encoding="utf-8"))
    config.update(rope_scaling={"type": "dynamic", "factor": 2.0}, max_position_embeddings=24576)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def _x64_cells(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    """A made-up 64 GB GPU, X64, whose only table is for one GPU, with Qwen3-4B's `rows`."""
    cells = {"gpu": "X64", "memory_gb": 64, "source": "made-up cells",
             "tables": [{"gpus": 1, "section": "1 x X64", "models": ["Qwen3-4B"], "rows": rows}]}
    path = tmp_path / "cells.yaml"
    path.write_text(yaml.safe_dump(cells), encoding="utf-8")
    return path


def test_the_native_row_says_the_one_gpu_caution_of_its_cheaper_plan_on_one_gpu(cli: Cli, tmp_path: Path):
    # The longest on one A100 is Env + Offload past the native 24576; at 24576 Env alone trains, on one GPU too.
    status, out, _ = cli("--model-config", str(_dynamic_llama_1b(tmp_path)), "--gpu", "a100", "--gpus", "1",
                         "--maximize", "len")
    assert status == 0 and (
        f"native at 24576, the cheapest plan is Env on 1 GPU (estimated, extrapolated; {SINGLE_GPU_CAUTION_SHORT}; "
        "0.50x the relative step time): --len 24576") in " ".join(out.split())


def test_a_reason_names_an_extrapolated_plan_on_one_gpu_with_both_words(cli: Cli, tmp_path: Path):
    # The plan's evidence label ("estimated, extrapolated"), not its evidence alone, then the caution.
    status, out, _ = cli("--model-config", str(_dynamic_llama_1b(tmp_path)), "--gpu", "a100", "--gpus", "1",
                         "--len", "131072")
    assert status == 1 and (
        "the longest is 35840 on the 1024-token grid (Env + Offload on 1 GPU, estimated, extrapolated; "
        f"{SINGLE_GPU_CAUTION_SHORT})") in " ".join(out.split())


def test_the_tables_best_row_says_the_one_gpu_caution_of_its_plan_on_one_gpu(cli: Cli, tmp_path: Path):
    # Estimated Env on two X64s costs less than the table's Env + Offload on one, which the row names.
    cells = _x64_cells(tmp_path, [{"max_model_len": 8192, "cells": {"Qwen3-4B": "Env + Offload"}}])
    status, out, _ = cli("--model", "4B", "--gpu", "x64", "--cells", str(cells), "--gpus", "2", "--len", "8192")
    assert status == 0 and (
        f"tables' best Env + Offload on 1 GPU at 8192 (documented; {SINGLE_GPU_CAUTION_SHORT}; 4.00x the relative "
        "step time), if you prefer the tables' evidence to the memory model's") in " ".join(out.split())


def test_a_no_estimate_reason_keeps_the_code_of_its_tables_plan_beside_an_estimated_one(cli: Cli, tmp_path: Path):
    # The tables' longest is on one GPU (cautioned); the estimated plan the reason adds is on two (no caution).
    cells = _x64_cells(tmp_path, [{"max_model_len": 8192, "cells": {"Qwen3-4B": "Env + Offload"}},
                                  {"max_model_len": 16384, "cells": {"Qwen3-4B": "-"}}])
    status, out, _ = cli("--model", "4B", "--gpu", "x64", "--cells", str(cells), "--gpus", "2", "--len", "12288",
                         "--no-estimate", "--json")
    (answer,) = json.loads(out)
    assert (status, answer["reason"], answer["reason_caution_codes"]) == (1, (
        "12288 tokens is beyond what the tables allow for Qwen3-4B on X64 within 2 GPUs: the longest is 8192 (Env + "
        f"Offload on 1 GPU, documented; {SINGLE_GPU_CAUTION_SHORT}); the memory model estimates a plan, Env + SP=2 on "
        "2 GPUs at 12288 tokens: drop --no-estimate"), ["single-gpu-advised-against"])


def test_null_caution_codes_read_back_beside_no_reason_say_none():
    # null is what the key's schema allows for "none": it needs no reason to say it.
    (planned,) = solver.plan("8B", gpu="a100-80gb", budget_gpus=2, max_model_len=8192)
    read = solver.Answer.model_validate({**planned.as_json(), "reason_caution_codes": None})
    assert (read.reason, read.reason_caution_codes, read.as_json()) == (None, None, planned.as_json())


def test_a_job_without_room_keeps_the_codes_of_its_reason_for_the_pool_it_has_no_way_in(cli: Cli, tmp_path: Path):
    # m has a way in q, which b (more priority) holds, and none in p, whose reason names a plan on one GPU, cautioned.
    fleet = {"pools": [{"name": "p", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 16},
                       {"name": "q", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 1}],
             "jobs": [{"name": name, "model": "14B", "max_model_len": 8192, "rollout_gpus": 0, "priority": priority}
                      for name, priority in (("b", 2), ("m", 1))]}
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(fleet), encoding="utf-8")
    status, out, _ = cli("cluster", str(path), "--no-estimate", "--json")
    (unplaced,) = json.loads(out)["unplaced"]
    assert (status, unplaced["job"], unplaced["reason_code"], unplaced["reason_caution_codes"]) == (
        1, "m", "no-room", ["single-gpu-advised-against"])
    assert unplaced["reason"].startswith("no room left in q (it needs at least 1 GPU of one node) after the jobs")
    assert ("on nodes with more host memory, Env + Offload on 1 GPU trains it (8192 tokens; "
            f"{SINGLE_GPU_CAUTION_SHORT})") in unplaced["reason"]


def test_the_longest_without_the_pins_on_one_gpu_says_the_caution_with_its_code():
    # Qwen3-4B within one A100 with Offload refused: no plan at any length; without the pin, Env + Offload on 1 GPU.
    (answer,) = solver.plan("4B", gpu="a100-80gb", budget_gpus=1, objective="max_len", offload=False)
    assert (answer.reason_caution_codes, answer.reason) == (
        ("single-gpu-advised-against",),
        ("nothing in the tables and the memory model's estimates for Qwen3-4B on A100-80GB within 1 GPU trains with "
         "offload=False (without offload=False the longest is 28672: Env + Offload on 1 GPU, documented; "
         f"{SINGLE_GPU_CAUTION_SHORT})"))


def test_a_no_estimate_pool_reason_keeps_the_code_of_the_estimated_plan_it_names(cli: Cli, tmp_path: Path):
    # No host memory limit: the estimates' plan on one GPU is named with a drop --no-estimate, cautioned.
    fleet = {"pools": [{"name": "p", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
             "jobs": [{"name": "k", "model": "32B", "max_model_len": 16384, "rollout_gpus": 0}]}
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(fleet), encoding="utf-8")
    status, out, _ = cli("cluster", str(path), "--no-estimate", "--json")
    (unplaced,) = json.loads(out)["unplaced"]
    assert (status, unplaced["reason"], unplaced["reason_caution_codes"]) == (1, (
        "p: the tables have no Qwen3-32B on A100-80GB (the memory model estimates a plan, Env + Offload on 1 GPU at "
        f"16384 tokens ({SINGLE_GPU_CAUTION_SHORT}): drop --no-estimate)"), ["single-gpu-advised-against"])


def test_a_purchase_whose_search_never_ran_leaves_raise_the_limit_to_its_status_line(cli: Cli, tmp_path: Path):
    # At 0.01 s the pinned jobs' ways are cut short and no search runs (`searched` false): the status line says raise
    # time_limit_s, the cut-short line not again; JSON made before the key (`searched` null) keeps both as they were.
    fleet = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8},
                       {"name": "h20", "gpu": "H20-96GB", "nodes": 0, "gpus_per_node": 8}],
             "jobs": [{"name": "small", "model": "Qwen3-4B", "max_model_len": 32768, "rollout_gpus": 2},
                      *({"name": name, "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 2, "pool": "h20"}
                        for name in ("pinned", "pinned2"))]}
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(fleet), encoding="utf-8")
    bought = json.loads(cli("cluster", str(path), "--buy", "--time-limit", "0.01", "--json")[1])
    cut = ("the time limit cut working out the jobs' ways short: pinned, pinned2 got none (the jobs of more priority "
           "are asked first), so no purchase places them")
    fresh = " ".join(solver.cluster_text(PurchaseResult.model_validate(bought), path).split())
    assert fresh.startswith("status: unknown: time ran out working out the jobs' ways to run, so the search for a "
                            f"purchase never ran (raise time_limit_s) {cut}")
    assert f"{cut} (raise" not in fresh
    older = PurchaseResult.model_validate({key: value for key, value in bought.items()
                                           if key not in ("searched", "ways_time_limit_s")})
    assert f"{cut} (raise time_limit_s)" in " ".join(solver.cluster_text(older, path).split())


def test_a_reason_the_time_limit_left_unasked_has_words_for_several_jobs(cli: Cli, tmp_path: Path):
    # At 0.01 s x's ways are worked out (none) but not why; for several jobs given it, the words say "each".
    fleet = {"pools": [{"name": "a", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
             "jobs": [{"name": "x", "model": "32B", "max_model_len": 262144, "rollout_gpus": 0}]}
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(fleet), encoding="utf-8")
    (unplaced,) = json.loads(cli("cluster", str(path), "--time-limit", "0.01", "--json")[1])["unplaced"]
    unasked = "(why was not worked out within the time limit; raise --time-limit)"
    assert (unplaced["reason"], unplaced["reason_for_several"]) == (
        f"no way to run in any pool it may use {unasked}", f"no way to run in any pool each may use {unasked}")
