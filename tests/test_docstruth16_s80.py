"""The docs' claims on what session 80 changed, checked against the code (s80, helper docstruth16): memory.md's
padding table of the fused experts as each release places them and the GPU counts where Qwen1.5-MoE's separate
experts pad more, Mixtral-8x7B on 32 A100s without Offload under each release, and the commands that take
``--lora-targets`` and ``--lora-exclude`` as cli.md names them."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from solver.cli.maps import build_map_parser
from solver.cli.memory import build_memory_parser
from solver.cli.planner import build_parser
from solver.memory import expert_padding
from solver.tables import load_catalog, load_model_config

Cli = Callable[..., tuple[int, str, str]]
ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "tests" / "data" / "hf-configs"
MEMORY_PAGE = (ROOT / "docs" / "memory.md").read_text(encoding="utf-8")
MODELS = {"Qwen3-30B-A3B": load_catalog().model("Qwen3-30B-A3B"),
          "Mixtral-8x7B": load_model_config(CONFIGS / "Mixtral-8x7B-v0.1.json"),
          "Qwen1.5-MoE-A2.7B": load_model_config(CONFIGS / "Qwen1.5-MoE-A2.7B.json"),
          "Qwen2-57B-A14B": load_model_config(CONFIGS / "Qwen2-57B-A14B.json"),
          "DeepSeek-V2-Lite": load_model_config(CONFIGS / "DeepSeek-V2-Lite.json")}
COLUMNS = ((6, "fused"), (6, "either"), (6, "separate"), (8, "fused"), (8, "either"), (8, "separate"))
"""memory.md's padding table's columns: GPUs and the layout its releases count (0.6 and none named: by rows;
0.5, 0.5.0, 0.5.2: the larger of the two layouts as verl 0.7 places them; 0.5.1: transformers 4's)."""


def padding_table() -> dict[str, list[str]]:
    """memory.md's table of the padding, parameters on the fullest GPU: the cells of each model's row."""
    header = MEMORY_PAGE.index("| model | 6 GPUs: 0.6, none named | 0.5, 0.5.0, 0.5.2 | 0.5.1 | 8 GPUs:")
    rows = MEMORY_PAGE[header:].split("\n\n", 1)[0].splitlines()[2:]
    return {cells[0]: cells[1:] for cells in ([cell.strip() for cell in row.strip().strip("|").split("|")]
                                              for row in rows)}


def test_the_padding_table_is_what_expert_padding_counts() -> None:
    # Qwen1.5-MoE's 0.5 cell on 6 GPUs read 0: 0.5, 0.5.0 and 0.5.2 count the larger layout, its separate experts'
    # 3,317,760 there (6 divides its 60 experts but neither 1408 nor 2048).
    table = padding_table()
    assert list(table) == list(MODELS)
    assert {name: [f"{expert_padding(model, gpus, layout):,.0f}" for gpus, layout in COLUMNS]
            for name, model in MODELS.items()} == table
    assert table["Qwen1.5-MoE-A2.7B"][1] == "3,317,760"


def test_where_qwen15_moes_separate_experts_pad_more_than_its_fused_tensors() -> None:
    model = MODELS["Qwen1.5-MoE-A2.7B"]
    # 0.5's count (either) is the larger of the fused tensors' and the separate experts' padding, as placed
    separate_more = [gpus for gpus in range(1, 65)
                     if expert_padding(model, gpus, "either") == expert_padding(model, gpus, "separate") > 0]
    assert separate_more == [3, 5, 6, 10, 12, 15, 20, 30, 60, 61]
    words = " ".join(MEMORY_PAGE.split())
    assert ("separate experts pad more on 3, 5, 6, 10, 12, 15, 20, 30 or 60 GPUs, whose 60 experts they divide but "
            "neither 1408 nor 2048, and on 61 (3,317,760 parameters more on the fullest of 6 GPUs, none fused)"
            ) in words
    assert expert_padding(model, 6, "separate") == 3_317_760 and expert_padding(model, 6, "fused") == 0
    # "its fused tensors on 7, 9 and every other count that divides none of 60, 2816 and 2048 but 61"
    fused_more = [gpus for gpus in range(1, 65) if expert_padding(model, gpus, "either") > expert_padding(
        model, gpus, "separate")]
    assert fused_more == [gpus for gpus in range(1, 65)
                          if gpus != 61 and all(size % gpus for size in (60, 2816, 2048))]
    assert fused_more[:2] == [7, 9]


@pytest.mark.parametrize(("release", "planned"), [("0.5", True), ("0.5.1", True), ("0.5.2", True), ("0.6", False)])
def test_mixtral_on_32_a100s_without_offload_under_each_release(cli: Cli, release: str, planned: bool) -> None:
    # memory.md: "`solve --gpus 32 --no-offload` plans it on A100s under every 0.5 release, not 0.6, which takes
    # Offload" (it said `solve --gpus 32`, which 0.6 plans with Offload).
    assert "`solve --gpus 32 --no-offload` plans it on A100s\n  under every 0.5 release, not 0.6" in MEMORY_PAGE
    status, out, err = cli("--model-config", str(CONFIGS / "Mixtral-8x7B-v0.1.json"), "--gpu", "a100", "--gpus", "32",
                           "--len", "32k", "--no-offload", "--trinity-version", release, "--json")
    (answer,) = json.loads(out)
    assert (status, bool(answer["plans"])) == ((0, True) if planned else (1, False)), err
    if not planned:
        assert "(without --no-offload: Env + Offload on 32 GPUs trains it" in answer["reason"]


def test_the_commands_cli_md_names_for_the_lora_targets_and_exclusions_take_them() -> None:
    page = " ".join((ROOT / "docs" / "cli.md").read_text(encoding="utf-8").split())
    parsers = {"solve": build_parser(), "solve memory": build_memory_parser(), "solve map": build_map_parser()}
    for option in ("--lora-targets", "--lora-exclude"):
        named = re.search(rf"`{option} [A-Z]+` \(([^;]*); the API's", page)
        assert named is not None, option
        assert named.group(1) == "`solve`, `solve memory` and `solve map`, with `--lora-rank`", option
        assert all(option in {flag for action in parser._actions for flag in action.option_strings}
                   for parser in parsers.values()), option
