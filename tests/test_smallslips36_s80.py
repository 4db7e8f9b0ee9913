"""Slips left by session 80's first merges (smallslips36): the time-limit tests of room kept and the further questions
run on a clock that stands still (`test_deadlines_s80.FakeClock`, in test_smallslips33_s79 and test_smallslips35_s79);
the experts line of a plan counted under Trinity 0.5, 0.5.0 or 0.5.2 no longer says its routed experts were counted
"whole" (verl 0.7 places the fused tensors by a dimension the GPUs divide); such a plan counts the larger of the two
layouts on each GPU count, as `either` promises, in the states and the pinned host blocks; and ``solve map`` checks
``--lora-targets`` on all its models before it solves any, naming those it counts them on."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_release05a_s77 import SCOUT, SMALL, _read

import solver
import solver.maps
from solver.memory import expert_layout_words, expert_padding, host_memory_gib, pinned_rounding
from solver.tables import QueryError, load_model_config

Cli = Callable[..., tuple[int, str, str]]
CONFIGS = Path(__file__).parent / "data" / "hf-configs"
QWEN15_MOE = load_model_config(CONFIGS / "Qwen1.5-MoE-A2.7B.json")
TWO_LAYOUTS = ("routed experts counted at the larger of Trinity 0.5's two layouts, 3-D as transformers 5 holds them "
               "or separate as transformers 4 does, each as verl 0.7 places it")


# (2) Before: "routed experts counted whole, as transformers 5 holds them, the larger of Trinity 0.5's two layouts",
# and under 0.5.1 for Llama 4 "routed experts counted whole, 3-D parameters in Trinity 0.5.1's transformers 4 too";
# verl 0.7 places each 3-D tensor by a dimension the GPUs divide, so the experts are not whole on each GPU.

def test_the_experts_line_of_a_0_5_release_names_no_whole_experts(tmp_path: Path) -> None:
    assert expert_layout_words(QWEN15_MOE, "either") == TWO_LAYOUTS
    assert expert_layout_words(QWEN15_MOE, "either", 16) == (
        f"{TWO_LAYOUTS}; its LoRA adapter as transformers 4 makes them, the larger")
    granite = _read(tmp_path, {**SMALL, "model_type": "granitemoe"})  # 3-D under transformers 4 too
    assert expert_layout_words(granite, "either") == (
        "routed experts counted 3-D, as transformers 4 and 5 hold them and Trinity 0.5's verl 0.7 places them")
    (tmp_path / "scout").mkdir()
    assert expert_layout_words(_read(tmp_path / "scout", SCOUT), "separate") == (
        "routed experts counted 3-D, as Trinity 0.5.1's transformers 4 holds them too and its verl 0.7 places them")
    # 0.6 and no release named count them by rows, whole experts on each GPU: those words stay
    assert expert_layout_words(QWEN15_MOE, "fused") == "routed experts counted whole, as transformers 5 holds them"


def test_solve_memory_says_it(cli: Cli) -> None:
    status, out, _ = cli("memory", "--model-config", str(CONFIGS / "Qwen1.5-MoE-A2.7B.json"), "--gpu", "h100",
                         "--gpus", "6", "--len", "8192", "--trinity-version", "0.5.2", "--json")
    assert status == 0 and f"a mixture of experts (calibrated on dense models; {TWO_LAYOUTS})" in out
    assert "counted whole" not in out


# (3) Before: `either` counted transformers 5's fused tensors as verl 0.7 places them alone, "the larger states";
# Qwen1.5-MoE's 60 separate experts of 1408 x 2048 pad more wherever the GPUs divide 60 but neither 1408 nor 2048.

SEPARATE_PADS_MORE = (3, 5, 6, 10, 12, 15, 20, 30, 60)


def _padded(rows: int, columns: int, count: int, gpus: int, others: tuple[int, ...] = ()) -> float:
    """Derived here: the parameters the fullest GPU holds past an even share of `count` tensors of `rows` x `columns`
    (x `others`), placed as verl 0.7 does: none where the GPUs divide a dimension, else by rows, rounded up."""
    size = columns * (others[0] if others else 1)
    if any(dim % gpus == 0 for dim in (rows, columns, *others)):
        return 0.0
    return (-(-rows // gpus) - rows / gpus) * size * count


def test_either_pads_as_the_larger_layout_on_every_gpu_count() -> None:
    # Qwen1.5-MoE: 24 expert layers of 60 experts, width 1408 on a hidden 2048. Fused: gate_up 60 x 2816 x 2048,
    # down 60 x 2048 x 1408; separate: each expert's w1 and w3 1408 x 2048, its w2 2048 x 1408.
    more = []
    for gpus in range(1, 61):
        fused = _padded(60, 2816, 24, gpus, (2048,)) + _padded(60, 2048, 24, gpus, (1408,))
        separate = 2 * _padded(1408, 2048, 60 * 24, gpus) + _padded(2048, 1408, 60 * 24, gpus)
        assert expert_padding(QWEN15_MOE, gpus, "separate") == pytest.approx(separate)
        assert expert_padding(QWEN15_MOE, gpus, "either") == pytest.approx(max(fused, separate))
        more += [gpus] if separate > fused else []
    assert tuple(more) == SEPARATE_PADS_MORE


def test_the_six_gpu_figures() -> None:
    # 60 experts' w2 (2048 rows) and w1, w3 (1408 rows) in 24 layers, each 2048 x 1408 weight placed by its rows,
    # which 6 divide neither: 2050 and 1410 rows a GPU. Before: 0, the fused tensors' placement (6 divide 2816).
    assert expert_padding(QWEN15_MOE, 6, "either") == expert_padding(QWEN15_MOE, 6, "separate") == 3_317_760
    assert expert_padding(QWEN15_MOE, 6, "fused") == 0  # 0.6's by rows: 6 divide 60
    assert expert_padding(QWEN15_MOE, 7, "either") == pytest.approx(88_979_163.43, abs=0.01)  # the fused pad more
    assert expert_padding(QWEN15_MOE, 7, "separate") == pytest.approx(5_924_571.43, abs=0.01)


def test_solve_memory_counts_0_5_2s_states_as_0_5_1s_on_six_gpus(cli: Cli) -> None:
    def states(version: str) -> tuple[float, float]:
        status, out, _ = cli("memory", "--model-config", str(CONFIGS / "Qwen1.5-MoE-A2.7B.json"), "--gpu", "h100",
                             "--gpus", "6", "--len", "8192", "--trinity-version", version, "--json")
        assert status == 0
        answer = json.loads(out)
        return answer["terms"]["states"], answer["total_gib"]

    # before: 0.5.2 36.5846 and 65.3202 GiB, the fused tensors' (0.6's here too)
    assert states("0.5.2") == states("0.5.1") == (36.6355, 65.371)
    assert states("0.6") == (36.5846, 65.3202)


def test_either_pins_the_larger_blocks(tmp_path: Path) -> None:
    # A Qwen2-MoE of Qwen1.5-MoE's shape but experts of width 1024: on 15 GPUs, which divide none of their dimensions,
    # its separate weights (1024 x 2048 and 2048 x 1024, 69 and 137 rows a GPU) pin 1.82 times their bytes in blocks
    # of a power of two, the fused tensors (4 of 60 experts a GPU) 1.10.
    config = json.loads((CONFIGS / "Qwen1.5-MoE-A2.7B.json").read_text(encoding="utf-8"))
    (tmp_path / "config.json").write_text(json.dumps({**config, "moe_intermediate_size": 1024}), encoding="utf-8")
    model = load_model_config(tmp_path)
    separate, fused = (pinned_rounding(model, 15, 4, 0, layout, True) for layout in ("separate", "fused"))
    assert (round(separate, 4), round(fused, 4)) == (1.8213, 1.0952)
    assert pinned_rounding(model, 15, 4, 0, "either", True) == separate  # before: fused's
    # (rank 0 alone loading the model, so that training's pinned blocks decide: 15 ranks' loads would outweigh them)
    need = {layout: round(host_memory_gib(model, 15, 15, version="0.5", experts=layout, loading="rank-0"), 1)
            for layout in ("either", "separate", "fused")}
    assert need == {"either": 266.5, "separate": 266.5, "fused": 192.7}  # before: either 192.7


# (4) Before: a map over several models solved the rows before the first model --lora-targets match nothing of, then
# refused naming that model alone.

MAP = ("map", "--gpu", "h100", "--lora-rank", "16", "--lora-targets", "gate", "--gpus-up-to", "2")
NO_GATE = ("--lora-targets 'gate' matches no module of Qwen3-8B (model.layers.N.self_attn.{q,k,v,o}_proj, "
           "model.layers.N.mlp.{gate,up,down}_proj, model.embed_tokens and lm_head): give all-linear (Trinity's "
           "default: every linear layer but the output projection), module names separated by commas (q_proj,v_proj) "
           r"or a regular expression that PEFT matches whole module names with (.*\.(q_proj|v_proj))")


def _no_solve(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    solved: list[Any] = []
    monkeypatch.setattr(solver.maps, "best_plan", lambda *args, **kwargs: solved.append(args))
    return solved


def test_a_map_names_the_models_its_targets_are_counted_on(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    solved = _no_solve(monkeypatch)
    status, out, err = cli(*MAP, "--model", "8B,30B-A3B,30B-A3B-Base")
    assert (status, out, solved) == (2, "", [])  # refused before any row is solved
    assert err == (f"solve map: error: {NO_GATE}; of the map's 3 models, they are counted on Qwen3-30B-A3B, "
                   "Qwen3-30B-A3B-Base alone: map those (--model Qwen3-30B-A3B,Qwen3-30B-A3B-Base)\n")
    with pytest.raises(QueryError) as raised:
        solver.map_plans(["30B-A3B", "8B"], gpu="h100", lora_rank=16, lora_targets="gate", gpus_up_to=2)
    assert str(raised.value) == (f"lora_targets{NO_GATE.removeprefix('--lora-targets')}; of the map's 2 models, they "
                                 "are counted on Qwen3-30B-A3B alone: map those (model=['Qwen3-30B-A3B'])")


def test_a_map_whose_models_all_refuse_them_says_so(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    solved = _no_solve(monkeypatch)
    status, _, err = cli(*MAP, "--model", "8B,4B")
    assert (status, solved) == (2, [])
    assert err == f"solve map: error: {NO_GATE}; the map's other model refuses them too\n"
    # one model, or a refusal alike on every row (no LoRA rank): the refusal as it was
    status, _, err = cli(*MAP, "--model", "8B")
    assert (status, err) == (2, f"solve map: error: {NO_GATE}\n")
    status, _, err = cli("map", "--gpu", "h100", "--lora-targets", "gate")
    assert (status, err) == (2, ("solve map: error: --lora-targets 'gate' without LoRA: the targets are a LoRA "
                                 "adapter's; give a --lora-rank above 0\n"))


def test_targets_every_model_takes_map_as_before(cli: Cli) -> None:
    status, out, _ = cli("map", "--gpu", "h100", "--model", "8B,30B-A3B", "--lora-rank", "16", "--lora-targets",
                         "q_proj", "--gpus-up-to", "1", "--json")
    (gpu_map,) = json.loads(out)
    assert status == 0 and [row["model"] for row in gpu_map["rows"]] == ["Qwen3-8B", "Qwen3-30B-A3B"]
