"""Tests for session 57's persona review: a comma-separated list where one GPU type or model is asked (as `solve map
--model` takes several) is told so, not guessed at as a typo (`a100-40g,h100` was asked 'did you mean A100-80GB?');
`solver.map_plans([])` and `solve map --model ''` name no model, and are refused rather than mapping the default
models; a cell `solve calibrate` names as predicted the other way because of its optimizer step says so, not only its
activations' peak, which fits."""

from __future__ import annotations

import json

import pytest

import solver
from solver.calibrate import Observation, mispredicted
from solver.tables import Setting


@pytest.mark.parametrize(("argv", "message"), [
    (("--gpu", "a100-40g", "--model", "8B,14B", "--len", "8k"),  # solve and solve map take GPU types' lists
     ("solve: error: model '8B,14B' lists 2 (Qwen3-8B, Qwen3-14B) where one is asked for: give one, and ask for "
      "each in turn; solve map --model 8B,14B compares several: the longest context of each per GPU budget\n")),
    (("memory", "--gpu", "a100-40g", "--model", "8B,14B", "--gpus", "2", "--len", "8k"),
     ("solve memory: error: model '8B,14B' lists 2 (Qwen3-8B, Qwen3-14B) where one is asked for: give one, and "
      "ask for each in turn\n")),
    (("tables", "--gpu", "a100-40g, h100"),
     ("solve tables: error: GPU 'a100-40g, h100' lists 2 (A100-40GB, H100-80GB) where one is asked for: give one, "
      "and ask for each in turn; without --gpu, the tables for every GPU type\n")),
])
def test_a_list_where_one_name_is_asked_is_told_so(cli, argv: tuple[str, ...], message: str):
    assert cli(*argv) == (2, "", message)


def test_a_list_with_a_typo_in_it_is_an_unknown_name():
    with pytest.raises(solver.QueryError, match=r"^unknown GPU 'a100-40g,h1000' \(did you mean A100-80GB\?\); "
                                                r"accepted: A100-40GB/80GB, "):
        solver.plan("8B", gpu="a100-40g,h1000", max_model_len=8192)


def test_the_api_tells_a_list_of_models_where_it_asks_for_one():
    with pytest.raises(solver.QueryError) as raised:
        solver.plan("8B,14B", max_model_len=8192)
    assert str(raised.value) == ("model '8B,14B' lists 2 (Qwen3-8B, Qwen3-14B) where one is asked for: give one, and "
                                 "ask for each in turn")


@pytest.mark.parametrize("empty", [[], ()])
def test_an_empty_list_of_models_is_refused_by_map_plans(empty: list[str] | tuple[str, ...]):
    with pytest.raises(solver.QueryError) as raised:
        solver.map_plans(empty, gpu="h100", gpus_up_to=2)
    assert str(raised.value) == ("model: an empty list names no model: give one or more names, or None for the "
                                 "models the tables document")


def test_an_empty_model_for_solve_map_is_an_empty_name(cli):
    status, out, err = cli("map", "--gpu", "h100", "--gpus-up-to", "2", "--model", "")
    assert (status, out) == (2, "") and err.endswith("solve map: error: argument --model: an empty name in '': give a "
                                                     "model, or several separated by commas (32B,8B)\n")


def test_solve_map_without_a_model_maps_the_tables_models(cli):
    status, out, _ = cli("map", "--gpu", "h100", "--gpus-up-to", "2", "--json")
    (gpu_map,) = json.loads(out)
    assert (status, [row["model"] for row in gpu_map["rows"]]) == (
        0, ["Qwen3-0.6B", "Qwen3-1.7B", "Qwen3-4B", "Qwen3-8B", "Qwen3-14B"])


def test_a_cell_the_optimizer_step_mispredicts_says_so():
    # Qwen3-14B with Env on 2 GPUs of 140 GiB at 1024 tokens: the activations' peak fits (121.8 of 130.0 GiB), the
    # optimizer step does not (138.5 of the 137.2 it may take), so the cell that trained is predicted not to
    step_bound = Observation(gpu="H200-141GB", model=solver.load_catalog().model("14B"), memory_gib=140.0, gpus=2,
                             setting=Setting(env=True, offload=False, sp=1), max_model_len=1024, fits=True)
    assert mispredicted([step_bound], solver.load_memory_model().coefficients) == [
        ("Qwen3-14B on 2 x H200-141GB at 1024, cell 'Env': Env trained there, predicted 121.8 GiB of 130.0 usable, "
         "and its optimizer step 138.5 GiB of the 137.2 it may take")]


def test_a_cell_the_peak_mispredicts_names_the_peak_alone():
    ran_out = Observation(gpu="H200-141GB", model=solver.load_catalog().model("8B"), memory_gib=140.0, gpus=2,
                          setting=Setting(env=True, offload=False, sp=1), max_model_len=1024, fits=False)
    (words,) = mispredicted([ran_out], solver.load_memory_model().coefficients)
    assert words.startswith("Qwen3-8B on 2 x H200-141GB at 1024, cell '-': Env ran out of memory there, predicted ")
    assert words.endswith(" usable") and "optimizer step" not in words
