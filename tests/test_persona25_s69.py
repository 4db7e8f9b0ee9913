"""What a newcomer to RL fine-tuning reads first (session 69's review of README.md and docs/guide.md from the docs
alone): the words that explain cost, evidence, cautions and GPU-hours, each checked against what `solve` prints."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SINGLE_GPU_CODE = "single-gpu-advised-against"


def flat(path: Path) -> str:
    """The page at `path` with its line breaks read as spaces, as a reader reads a paragraph."""
    return " ".join(path.read_text(encoding="utf-8").split())


def only_answer(cli: Callable[..., tuple[int, str, str]], *argv: str) -> dict[str, Any]:
    """The one answer `solve ... --json` gives for `argv` (exit status 0)."""
    status, out, _ = cli(*argv, "--json")
    (answer,) = json.loads(out)
    assert status == 0
    return dict(answer)


def test_the_readme_says_a_cost_of_1_is_vanilla_on_one_gpu(cli: Callable[..., tuple[int, str, str]]):
    (plan, *_) = only_answer(cli, "--model", "0.6B", "--len", "4096", "--gpus", "1", "--gpu", "A100-80GB")["plans"]
    assert (plan["gpus"], plan["env"], plan["offload"], plan["sp"], plan["cost"]) == (1, False, False, 1, 1.0)
    assert ("`cost` is a relative step time (1 is the same model's vanilla step on one GPU; lower is faster)."
            in flat(ROOT / "README.md"))


def test_the_guides_gpu_hours_are_the_rankings_gpus_times_cost(cli: Callable[..., tuple[int, str, str]]):
    # the guide's `--top 4` example (Qwen3-4B, 32k, 4 H20s): the fewest GPUs take the most GPU-hours
    plans = only_answer(cli, "--model", "4B", "--len", "32k", "--gpus", "4", "--gpu", "h20", "--top", "4")["plans"]
    rows = [(plan["gpus"], plan["env"], plan["offload"], plan["sp"], round(plan["gpus"] * plan["cost"], 4))
            for plan in plans]
    assert rows == [(4, False, False, 2, 1.1), (2, False, False, 2, 1.1), (1, True, True, 1, 2.02)]
    assert ("GPU-hours are GPUs x cost: in the [ranking below](#ranked-alternatives), SP=2 on 4 or on 2 H20s both "
            "come to 1.1, Env + Offload on one H20 to 2.02") in flat(ROOT / "docs" / "guide.md")


@pytest.mark.parametrize(("model", "length", "gpu", "cautioned"), [
    ("4B", "16384", "A100-80GB", True),  # a model of 4B or more
    ("1.7B", "20480", "A100-80GB", False),  # a smaller model at 20K tokens
    ("1.7B", "24576", "A100-80GB", True),  # past 20K tokens
    ("4B", "16384", "H100-80GB", True),  # 80 GB too
    ("4B", "16384", "H20-96GB", False),  # more than 80 GB
])
def test_the_guides_one_gpu_caution_is_the_rule_solve_applies(
        cli: Callable[..., tuple[int, str, str]], model: str, length: str, gpu: str, cautioned: bool):
    (plan, *_) = only_answer(cli, "--model", model, "--len", length, "--gpus", "1", "--gpu", gpu)["plans"]
    assert plan["gpus"] == 1 and (SINGLE_GPU_CODE in plan["caution_codes"]) == cautioned
    assert ("one trainer GPU of 80 GB or less (an A100 80GB, an H100) for a model of 4B or more or past 20K tokens, "
            "which Trinity-RFT's guide strongly advises against") in flat(ROOT / "docs" / "guide.md")


@pytest.mark.parametrize(("alloc_conf", "runs"), [(None, "runs vanilla"), ("expandable_segments:True", "runs Env")])
def test_the_shown_from_config_verdict_assumes_the_allocator_variable_unset(
        cli: Callable[..., tuple[int, str, str]], monkeypatch: pytest.MonkeyPatch, alloc_conf: str | None, runs: str):
    monkeypatch.chdir(ROOT)
    if alloc_conf is None:
        monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    else:
        monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", alloc_conf)
    status, out, _ = cli("--from-config", "docs/examples/trinity.yaml", "--gpu", "h20")
    assert status == 0 and f"trinity.yaml {runs} on 6 trainer GPUs" in out
    index = flat(ROOT / "docs" / "index.md")
    assert "with `PYTORCH_CUDA_ALLOC_CONF` unset (`--from-config` reads Env from it)" in index


def test_the_guides_refit_example_plans_what_the_cells_do_not_cover(
        cli: Callable[..., tuple[int, str, str]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    # "Your own measurements", step 3: the fit estimates a model the cells lack, within its calibration on 8 GPUs
    monkeypatch.chdir(ROOT)
    fit = tmp_path / "my-fit.yaml"
    cells = ("--cells", "docs/examples/my-cells.yaml")
    status, _, _ = cli("calibrate", *cells, "--with-tables", "--out", str(fit))
    assert status == 0
    ask = ("--model", "4B", "--gpu", "h100", "--gpus", "8", "--len", "96k", *cells)
    (shipped,) = only_answer(cli, *ask)["plans"][:1]
    (fitted,) = only_answer(cli, *ask, "--memory-model", str(fit))["plans"][:1]
    assert (shipped["evidence"], shipped["beyond_calibration_codes"]) == ("estimated", ["more-gpus"])
    assert (fitted["evidence"], fitted["beyond_calibration_codes"]) == ("estimated", [])
    guide = flat(ROOT / "docs" / "guide.md")
    assert f"solve {' '.join(ask)} --memory-model my-fit.yaml" in guide
    assert "Here the fit estimates Qwen3-4B, which the cells lack, on 8 GPUs no longer beyond its calibration." in guide
