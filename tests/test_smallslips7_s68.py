"""What the s68 table and Trinity reviews left: a cheapest plan's --explain quotes the '-' rows, a plan on one A100
shown beside the headline one carries the guide's caution, --write for Trinity 0.5 notes what 0.6 needs for Offload,
and oc.decode's hint in an int field quotes the whole number."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from solver.tables import load_catalog
from solver.trinity import load_config_mapping, trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]


def _no_setting(cli: Cli, *flags: str) -> list[str]:
    status, out, _ = cli(*flags, "--explain", "--json")
    assert status == 1
    return [reason["detail"] for reason in json.loads(out)[0]["explanation"] if reason["rule"] == "no_setting"]


def test_a_cheapest_plan_at_a_dash_cell_quotes_the_dash_of_each_budget_count(cli: Cli):
    # tablereader's Q36: 1 GPU's table ends in '-' rows before 71680, 2 GPUs' row for 71680 says '-'.
    assert _no_setting(cli, "--gpu", "a100-80gb", "--model", "8B", "--len", "71680", "--gpus", "2") == [
        ("the A100-80GB table for 1 GPU says '-' for Qwen3-8B from 28672 tokens to 32768, where its rows end: "
         "nothing trained there"),
        "the A100-80GB table for 2 GPUs says '-' for Qwen3-8B from 61440 tokens on: nothing trained there"]
    # Q37: one count, whose row for 28672 is the first '-'.
    assert _no_setting(cli, "--gpu", "a100-80gb", "--model", "14B", "--len", "28672", "--gpus", "1") == [
        "the A100-80GB table for 1 GPU says '-' for Qwen3-14B from 28672 tokens on: nothing trained there"]


def test_the_fewest_gpus_past_every_table_quotes_no_dash(cli: Cli):
    # --minimize gpus weighs counts up to 64: the small tables' '-' rows are not what stops 200000 tokens.
    assert _no_setting(cli, "--gpu", "a100-80gb", "--model", "14B", "--len", "200000", "--minimize", "gpus") == []


def _row(out: str, label: str) -> str:
    """A summary row's words, its wrapped lines (indented past the labels) joined."""
    lines = out.splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith(label))
    rest = [line.strip() for line in itertools.takewhile(lambda line: line.startswith(" "), lines[start + 1:])]
    return " ".join([lines[start].removeprefix(label).strip(), *rest])


SHORT = "one trainer GPU: Trinity-RFT's guide strongly advises more GPUs"


def test_a_ranked_plan_on_one_a100_carries_the_guides_caution_in_short(cli: Cli):
    # tablereader's Q27: #2 is Env + Offload for Qwen3-4B on one A100 80GB; #1, on two, has no such caution.
    status, out, _ = cli("--gpu", "a100-80gb", "--model", "4B", "--len", "28672", "--gpus", "2", "--top", "3")
    assert status == 0
    assert [line for line in out.splitlines() if line.startswith("#") and SHORT in line] == [f"#2: {SHORT}"]


def test_a_for_rollout_plan_on_one_a100_carries_the_guides_caution_in_short(cli: Cli):
    # tablereader's Q8: keeping 1 of 2 A100s for the rollout leaves Qwen3-8B one trainer GPU.
    status, out, _ = cli("--gpu", "a100-80gb", "--model", "8B", "--len", "20480", "--gpus", "2")
    assert status == 0
    # its Offload's host memory need past the node's assumed 128 GiB follows, as its plan carries it (s89)
    assert _row(out, "for rollout").startswith(
        "--total-gpus 2 --rollout-gpus 1 keeps 1 of the 2 for it: Env + Offload on 1 trainer GPU, 20480 tokens, 2.00x "
        f"the relative step time (documented; {SHORT}); caution: Offload needs 183.0 GiB of host memory per node, more "
        "than the 128 GiB assumed for its one trainer GPU there")
    assert not any(line.startswith("caution") for line in out.splitlines())  # the headline plan, on two GPUs, has none


CONFIG = ("algorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: 4096\n"
          "cluster: {node_num: 1, gpu_per_node: 6}\nexplorer: {rollout_model: {engine_num: 2}}\n"
          "trainer:\n  save_interval: 10\n")
"""Qwen3-4B on 4 of 6 A100s beside 2 rollout GPUs: its longest length is Env + Offload + SP=4 (documented)."""

FOR_05 = ["  # written for Trinity 0.5 (--trinity-version 0.5), which refuses the offload flags under trainer",
          "  #   itself; Trinity 0.6 on verl before 0.8 replaces the roles' offload flags with",
          "  #   trainer.param_offload, optimizer_offload and offload_policy (false where unset): there, set",
          "  #   those to true too"]
"""--write's note on an Offload plan for Trinity 0.5, the fragment's comment on its flags (review-s68-trinitymaint)."""


def _written(cli: Cli, source: Path, target: Path, *release: str) -> list[str]:
    status, _, _ = cli("--from-config", str(source), "--gpu", "a100-80gb", "--maximize", "len", *release,
                       "--write", str(target))
    assert status == 0
    return target.read_text(encoding="utf-8").splitlines()


def test_write_for_trinity_05_with_offload_notes_what_06_needs_once(cli: Cli, tmp_path: Path):
    source = tmp_path / "trinity.yaml"
    source.write_text(CONFIG, encoding="utf-8")
    lines = _written(cli, source, tmp_path / "for05.yaml", "--trinity-version", "0.5")
    assert lines[3:7] == FOR_05 and lines[7] == "  # To check this file as its plan was made:"
    assert "  param_offload: true" not in lines  # 0.5 refuses the flags under trainer itself
    # Written again for 0.5, the note stays one; for no release, the flags under trainer say it instead.
    again = _written(cli, tmp_path / "for05.yaml", tmp_path / "again.yaml", "--trinity-version", "0.5")
    assert [again[index:index + 4] == FOR_05 for index in range(len(again))].count(True) == 1
    unnamed = _written(cli, tmp_path / "for05.yaml", tmp_path / "any.yaml")
    assert FOR_05[0] not in unnamed and "  param_offload: true" in unnamed


QWEN = "model: {model_path: Qwen/Qwen3-8B}\ncluster: {node_num: 1}\n"
REFUSED = "; every Trinity release refuses the config as it loads it (OmegaConf resolves each value then)"


def _words(key: str, value: str) -> list[str]:
    mapping = load_config_mapping(f"{QWEN}{key}: {value}\n", "trinity.yaml")
    return [problem.words for problem in trinity_config_problems(mapping, load_catalog().model("8B"), 8)]


@pytest.mark.parametrize(("value", "hint"), [
    ("8.0", ' (quote it: "8")'),  # quoted as written, "8.0" decodes to the float the int field refuses
    ("1e3", ' (quote it: "1000")'),
    ("8", ' (quote it: "8")'),
    ("8.5", ""), ("true", ""),  # no text decodes to a whole number for these
])
def test_oc_decodes_hint_in_an_int_field_quotes_the_whole_number(value: str, hint: str):
    assert _words("buffer", f"{{batch_size: '${{oc.decode:{value}}}'}}") == [(  # the value as written: 1e3, true
        f"buffer.batch_size: '${{oc.decode:{value}}}': OmegaConf's oc.decode takes text or null, not {value}{hint}"
        f"{REFUSED}")]


def test_oc_decodes_hint_in_a_text_field_quotes_the_number_as_written():
    assert _words("mode", "'${oc.decode:8.0}'") == [
        f"mode: '${{oc.decode:8.0}}': OmegaConf's oc.decode takes text or null, not 8.0 (quote it: \"8.0\"){REFUSED}"]
