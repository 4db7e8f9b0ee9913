"""Estimates on more than one node say so: the beyond-calibration phrase and code ``more-nodes`` (the calibration's
flat overhead counts NCCL's memory as on one node), and a thin-headroom caution that names that overhead, the same in
`solve`, `solve memory`, `solve map` and `solve cluster`, in text and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.memory import beyond_calibration
from solver.results import BeyondCode, MarginRoom, known_errors, thin_headroom, trainer_spans_nodes_caution
from solver.tables import Setting, load_catalog, load_memory_model

LENGTH = 339968
"""Qwen3-14B's longest on H200s within any budget of 8 GPUs or more: Env + Offload + SP=8, 0.22 GiB to spare."""
COMMON = ["140 GiB GPUs (calibrated on 80 to 96 GiB)"]
TAIL = ["SP=8 (calibrated up to SP=4)", "84992 tokens per GPU (calibrated on fits of up to 73728)"]
BEYOND = {
    8: (COMMON + ["8 GPUs (calibrated up to 6)"] + TAIL,
        ["other-gpu-memory", "more-gpus", "larger-sp", "more-tokens-per-gpu"]),
    16: (COMMON + ["16 GPUs (calibrated up to 6)", "2 nodes (NCCL's memory calibrated on one node)"] + TAIL,
         ["other-gpu-memory", "more-gpus", "more-nodes", "larger-sp", "more-tokens-per-gpu"]),
    32: (COMMON + ["32 GPUs (calibrated up to 6)", "4 nodes (NCCL's memory calibrated on one node)"] + TAIL,
         ["other-gpu-memory", "more-gpus", "more-nodes", "larger-sp", "more-tokens-per-gpu"]),
}
"""What an estimate of that plan on 8 (one node), 16 (two) and 32 GPUs (four) lies beyond: words and codes."""
THIN = ("0.2 GiB to spare where the estimate extrapolates, and its error there is unmeasured (its flat overhead for "
        "the CUDA context and NCCL does not grow {}: docs/memory.md in rft-solver's source); --margin 0.02 keeps "
        "1.3 GiB more to spare than the default 0.01 here, or measure a step first")
WHERE = {8: "with more GPUs than calibrated", 16: "across nodes", 32: "across nodes"}


def flat(text: str) -> str:
    """`text` with its line wrapping undone."""
    return " ".join(text.split())


@pytest.mark.parametrize("gpus", [8, 16, 32])
def test_solve_and_solve_memory_say_the_nodes_and_name_the_nccl_overhead_in_text_and_json(cli, gpus: int):
    words, codes = BEYOND[gpus]
    thin = THIN.format(WHERE[gpus])
    status, out, _ = cli("--maximize", "len", "--gpus", str(gpus), "--model", "14B", "--gpu", "h200", "--json")
    plan = json.loads(out)[0]["plans"][0]
    assert status == 0 and (plan["gpus"], plan["sp"], plan["offload"], plan["max_model_len"]) == (gpus, 8, True, LENGTH)
    assert (plan["beyond_calibration"], plan["beyond_calibration_codes"]) == (words, codes)
    assert plan["caution_codes"] == ["past-validated-length", "thin-headroom"] and plan["cautions"][1] == thin
    status, out, _ = cli("--maximize", "len", "--gpus", str(gpus), "--model", "14B", "--gpu", "h200")
    assert status == 0 and f"beyond its calibration: {', '.join(words)}" in flat(out) and f"caution {thin}" in flat(out)
    # solve memory on the same plan: the same words, codes and cautions.
    memory = ["memory", "--model", "14B", "--gpu", "h200", "--gpus", str(gpus), "--len", str(LENGTH), "--sp", "8",
              "--env", "--offload"]
    status, out, _ = cli(*memory, "--json")
    estimate = json.loads(out)
    assert status == 0 and (estimate["beyond_calibration"], estimate["beyond_calibration_codes"]) == (words, codes)
    assert (estimate["cautions"], estimate["caution_codes"]) == (plan["cautions"], plan["caution_codes"])
    status, out, _ = cli(*memory)
    assert status == 0 and f"caution: {thin}" in flat(out)
    assert f"beyond the memory model's calibration: {', '.join(words)}; the prediction extrapolates" in flat(out)


def test_solve_map_and_solve_cluster_give_the_plan_the_words_solve_gives_it(cli, tmp_path: Path):
    status, out, _ = cli("map", "--gpu", "h200", "--model", "14B", "--gpus-up-to", "32", "--json")
    cells = json.loads(out)[0]["rows"][0]["plans"]
    assert status == 0
    for nodes in (1, 2, 4):
        gpus = 8 * nodes
        _, out, _ = cli("--maximize", "len", "--gpus", str(gpus), "--model", "14B", "--gpu", "h200", "--json")
        plan = json.loads(out)[0]["plans"][0]
        fields = ("gpus", "max_model_len", "beyond_calibration", "beyond_calibration_codes", "cautions",
                  "caution_codes")
        assert {key: cells[gpus - 1][key] for key in fields} == {key: plan[key] for key in fields}
        assert cells[gpus - 1]["beyond_calibration_codes"] == BEYOND[gpus][1]
        fleet = tmp_path / f"fleet{nodes}.yaml"
        fleet.write_text(f"pools: [{{name: h200, gpu: H200-141GB, nodes: {nodes}, gpus_per_node: 8}}]\n"
                         f"jobs: [{{name: long-14b, model: 14B, max_model_len: {LENGTH}, rollout_gpus: 0}}]\n",
                         encoding="utf-8")
        status, out, _ = cli("cluster", str(fleet), "--json")
        placed = json.loads(out)["placements"][0]["plan"]
        # and, across nodes no fast fabric is said to join, the caution on that (s73), which solve cannot know of
        spans = trainer_spans_nodes_caution(nodes, None)
        solved = {key: plan[key] for key in fields} if spans is None else {
            **plan, "cautions": [*plan["cautions"], spans.words], "caution_codes": [*plan["caution_codes"], spans.code]}
        assert status == 0 and {key: placed[key] for key in fields} == {key: solved[key] for key in fields}
        status, out, _ = cli("cluster", str(fleet))
        assert status == 0 and f"caution: long-14b: {THIN.format(WHERE[gpus])}" in flat(out)


def test_more_nodes_counts_the_nodes_of_the_given_size_whatever_the_gpu_count_the_calibration_saw():
    # 4 GPUs are within the shipped fit's 6, but on nodes of 2 they span 2 nodes; on nodes of 4 or 8, one.
    calibrated, fourteen = load_memory_model().fit.range, load_catalog().model("14B")
    nodes = (BeyondCode.MORE_NODES, "2 nodes (NCCL's memory calibrated on one node)")
    assert beyond_calibration(calibrated, fourteen, 80.0, 4, Setting(sp=2), 40960, 2) == (nodes,)
    assert beyond_calibration(calibrated, fourteen, 80.0, 4, Setting(sp=2), 40960, 4) == ()
    assert beyond_calibration(calibrated, fourteen, 80.0, 4, Setting(sp=2), 40960, 8) == ()


KEPT = ", which the default margin here keeps"  # session 61: a small card's default margin keeps it


def test_the_thin_caution_names_the_reason_the_codes_give():
    larger = "for much larger models it runs optimistic by about a GiB and more"
    across = "its flat overhead for the CUDA context and NCCL does not grow across nodes"
    small = f"on cards of at most 48 GiB, as this one, it runs optimistic by about a GiB{KEPT}"
    codes = BeyondCode
    assert known_errors(False, [codes.OTHER_GPU_MEMORY]) == (
        "no error of known direction is expected here, and none is measured")
    assert known_errors(False, [codes.OTHER_GPU_MEMORY, codes.LARGER_MODEL]) == (
        "for much larger models it runs optimistic by about a GiB and more")
    assert known_errors(False, [codes.MORE_GPUS, codes.MORE_NODES]) == across
    assert known_errors(False, [codes.LARGER_MODEL, codes.MORE_GPUS]) == (
        f"its flat overhead for the CUDA context and NCCL does not grow with more GPUs than calibrated; {larger}")
    assert known_errors(True, [codes.MORE_NODES]) == f"{small}; {across}"
    assert known_errors(True, [codes.OTHER_GPU_MEMORY]) == small
    # A small card names much larger models only for one of them (a Qwen3-1.7B on a 4090 is not).
    assert known_errors(True, [codes.OTHER_GPU_MEMORY, codes.LARGER_MODEL]) == (
        f"{small}, and more for much larger models")
    # The caution takes the reason from the codes; without them (JSON from before codes) the general one.
    room = MarginRoom(0.01, 0.01, 130.0)
    assert across in thin_headroom(0.2, ["4 nodes (NCCL's memory calibrated on one node)"], 140.4, room,
                                   [codes.MORE_NODES])
    assert "on much smaller cards" in thin_headroom(0.2, ["4 nodes (NCCL's memory calibrated on one node)"], 140.4,
                                                    room, [])
