"""Words a user reads, said once and plainly (session 68, helper words6): a length past a config.json's shorter
length key nests no parentheses in its row; a fragment's YaRN factor says why beside the key and the header what to
do, once (the offload lines' ``save_hf_checkpoint`` on an H20 plan: test_smallslips6_s68.py); a documented plan over
the memory model's estimate says why; an estimate's evidence row does not repeat the memory row's figures; the docs'
calibrate examples name no file as a folder of docs/examples is named."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from conftest import qwen3_8b_checkpoint
from test_validwords_s67 import deepest_parentheses

ROOT = Path(__file__).resolve().parent.parent
CHECK = "check the model's quality at this length"

Cli = Callable[..., tuple[int, str, str]]


def row(out: str, label: str) -> str:
    """The summary row `label`, its wrapped lines joined."""
    lines = out.splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith(f"{label} "))
    end = next((index for index in range(start + 1, len(lines)) if not lines[index].startswith(" ")), len(lines))
    return " ".join(" ".join(lines[start:end]).split())


def test_a_length_past_a_shorter_length_key_nests_no_parentheses_in_its_row(cli: Cli, tmp_path: Path):
    folder = qwen3_8b_checkpoint(tmp_path / "short-key", seq_length=8192)
    status, out, err = cli("--model-config", str(folder), "--gpu", "h100", "--gpus", "4", "--len", "16k")
    shown = row(out, "max_model_len")
    assert (status, err) == (0, "")
    assert shown == ("max_model_len 16384 (vLLM's rollout refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set, "
                     "past the 8192 it derives from the model's config: its seq_length of 8192, the smallest of its "
                     "length keys)")
    assert deepest_parentheses(shown) == 1


def test_a_fragment_says_what_to_do_past_the_validated_length_once(cli: Cli):
    flags = ("--model", "8B", "--gpu", "h20", "--gpus", "8", "--len", "200000")
    status, out, _ = cli(*flags, "--emit", "trinity")
    flat = " ".join(out.split())
    assert status == 0 and flat.count(CHECK) == 1
    assert f", past the validated 131072\n# ({CHECK}, or plan --len 131072)\n" in out
    assert ("    # max_model_len / 40960; longer than YaRN is validated for (Qwen's model cards validate a factor\n"
            "    # of 4 over 32768 positions: 131072 tokens)\n    factor: 4.8828125\n") in out
    # the caution said alone (JSON) keeps what to do
    status, out, _ = cli(*flags, "--json")
    [caution] = [words for words in json.loads(out)[0]["plans"][0]["cautions"] if words.startswith("YaRN factor")]
    assert status == 0 and caution.endswith(f"): {CHECK}")


def test_a_documented_plan_over_the_estimate_says_why_and_keeps_the_number(cli: Cli):
    flags = ("--model", "8B", "--gpu", "a100-80gb", "--gpus", "4", "--maximize", "len")
    status, out, _ = cli(*flags, "--json")
    plan = json.loads(out)[0]["plans"][0]
    assert status == 0 and plan["evidence"] == "documented" and plan["headroom_gb"] < 0
    status, out, _ = cli(*flags)
    assert status == 0 and row(out, "memory") == (
        f"memory {plan['memory_gb']:.1f} GiB per GPU predicted, {-plan['headroom_gb']:.1f} GiB over what it may take "
        "(memory model, which errs on the safe side; the table, a measurement, says it trains)")


def test_an_estimate_s_evidence_row_leaves_the_figures_to_the_memory_row(cli: Cli):
    status, out, _ = cli("--model", "14B", "--gpu", "h100", "--len", "65536", "--json")
    plan = json.loads(out)[0]["plans"][0]
    figures = f"{plan['memory_gb']:.1f} GiB per GPU"
    assert status == 0 and plan["evidence"] == "estimated"
    status, out, _ = cli("--model", "14B", "--gpu", "h100", "--len", "65536")
    assert status == 0 and row(out, "evidence") == (
        "evidence estimated: the memory model's prediction (below; docs/memory.md in rft-solver's source gives its "
        "accuracy on held-out cells at margin 0.01); beyond its calibration: 8 GPUs (calibrated up to 6), SP=8 "
        "(calibrated up to SP=4)")
    assert row(out, "memory").startswith(f"memory {figures} predicted, ") and out.count(figures) == 1
    # the fragment, which has no memory row, keeps them in its evidence
    status, out, _ = cli("--model", "14B", "--gpu", "h100", "--len", "65536", "--emit", "trinity")
    assert status == 0 and f"# evidence: estimated: the memory model predicts {figures}, " in out


def test_the_docs_name_no_memory_model_file_as_an_example_folder_is_named():
    folders = {path.name for path in (ROOT / "docs" / "examples").iterdir() if path.is_dir()}
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    written = {match for doc in docs
               for match in re.findall(r"--(?:out|memory-model) ([\w./-]+)\.yaml", doc.read_text(encoding="utf-8"))}
    assert "my-fit" in written and not {Path(name).name for name in written} & folders
