"""Session 67, words: wording and width slips users saw. Llama 3.1 past its native context named "native 131072"
twice in its ``max_model_len`` row; a map past one node reached 134 columns on a pipe without ``COLUMNS`` (it now
shows fewer of its doubling budgets within 120, or the width given); an MI300X's thin-headroom caution named CUDA and
NCCL; ``solve --version extra`` printed the version and exited 0, and ``-V`` got no guess; a fleet's ``model: ８Ｂ``
got no full-width note; a tab in a user's YAML got PyYAML's words."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from test_mapwidth_s64 import _header, _tables

import solver
import solver.cli.maps
from solver.render import PLAIN_TEXT
from solver.results import BeyondCode, known_errors

Cli = Callable[..., tuple[int, str, str]]
WRAP = "\n               "
"""Where the summary wraps a row onto its next line."""

LLAMA_3_1_8B_CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
    "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 128256,
    "max_position_embeddings": 131072, "rope_theta": 500000.0, "tie_word_embeddings": False,
    "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"}}
TRINITY_CONFIG = """\
project: grpo-llama
name: run-160k
mode: both
algorithm: {{algorithm_type: grpo, repeat_times: 8}}
model:
  model_path: {checkpoint}
  max_model_len: 163840
  max_prompt_tokens: 4096
  max_response_tokens: 159744
cluster: {{node_num: 4, gpu_per_node: 8}}
buffer: {{total_epochs: 1, batch_size: 32, train_batch_size: 256}}
explorer:
  rollout_model: {{engine_type: vllm, engine_num: 2, tensor_parallel_size: 8}}
trainer:
  trainer_type: verl
  trainer_strategy: fsdp2
  ulysses_sequence_parallel_size: 8
"""


# --- 1. the max_model_len row past Llama 3.1's native context -------------------------------------------------------

def test_a_llama_3_1_checkpoint_past_its_native_context_names_it_once_in_the_length_row(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", raising=False)
    checkpoint = tmp_path / "Llama-3.1-8B-Instruct"
    checkpoint.mkdir()
    (checkpoint / "config.json").write_text(json.dumps(LLAMA_3_1_8B_CONFIG), encoding="utf-8")
    config = tmp_path / "grpo-llama.yaml"
    config.write_text(TRINITY_CONFIG.format(checkpoint=checkpoint), encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h800", "--check")
    row = next(line for line in out.replace(WRAP, " ").splitlines() if line.startswith("max_model_len "))
    assert (status, err) == (1, "")  # refused: vLLM takes no more than 131072 without the variable
    assert row == ("max_model_len  163840, past the native 131072, which Llama-3.1-8B's own llama3 RoPE scaling "
                   "provides (no YaRN written; vLLM's rollout refuses it, past the 131072 it derives from the model's "
                   "config, unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set; check the model handles it)")


def test_the_caution_alone_still_names_the_native_context(cli: Cli) -> None:
    # Where no row names it first (JSON's cautions, a cluster's caution lines), the caution says "beyond the native".
    status, out, _ = cli("--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--len", "200000", "--json")
    [caution] = json.loads(out)[0]["plans"][0]["cautions"]
    assert status == 0 and caution.startswith("beyond the native 131072, which Llama-3.1-8B's own llama3 RoPE "
                                              "scaling provides: no YaRN written; ")


# --- 2. a map past one node within 120 columns on a pipe without COLUMNS --------------------------------------------

LONG_NAMES = ("map", "--gpu", "h100", "--model", "Qwen3-30B-A3B-Thinking-2507,Llama-3.1-70B", "--gpus-up-to", "64")
FOUR = ["≤8-15 GPUs", "≤16-23 GPUs", "≤32-39 GPUs", "≤64 GPUs"]


def test_a_map_past_one_node_fits_120_columns_on_a_pipe_without_columns(
        cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: five columns, 4-7 to 64, 129 wide (the 27-character name, cells of 16 to 17).
    monkeypatch.delenv("COLUMNS", raising=False)
    status, out, _ = cli(*LONG_NAMES)
    [table] = _tables(out)
    assert status == 0 and _header(table) == FOUR and max(map(len, table)) == 110
    assert ("budgets 1 to 7, 24 to 31 and 40 to 63: columns left out (--budgets maps them; --json has every budget)"
            in out.splitlines())


@pytest.mark.parametrize(("columns", "header"), [
    ("200", ["≤4-7 GPUs", *FOUR]),  # room for all five
    ("80", FOUR[-2:]),  # the fewest, two
], ids=["wide", "narrow"])
def test_columns_on_a_pipe_sets_the_width_a_map_past_one_node_fits(
        cli: Cli, monkeypatch: pytest.MonkeyPatch, columns: str, header: list[str]) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    status, out, _ = cli(*LONG_NAMES)
    [table] = _tables(out)
    assert status == 0 and _header(table) == header and max(map(len, table)) <= int(columns)
    maps = solver.map_plans(["Qwen3-30B-A3B-Thinking-2507", "Llama-3.1-70B"], gpu="h100", gpus_up_to=64)
    assert _tables(solver.map_text(maps, width=int(columns))) == [table]  # the API's, as the pipe's at that width


def test_a_terminal_gets_the_columns_that_fit_it_and_the_svg_all_five(
        cli: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Before: a terminal of 120 got five columns, 132 wide, and the note that the maps need 132 columns.
    screen = io.StringIO()
    monkeypatch.setattr(solver.cli.maps, "new_console", lambda width=160: Console(
        width=120, force_terminal=True, file=screen, **PLAIN_TEXT))
    svg = tmp_path / "map.svg"
    status, _, err = cli(*LONG_NAMES, "--svg", str(svg))
    [table] = _tables(re.sub(r"\x1b\[[0-9;]*m", "", screen.getvalue()))
    assert (status, err) == (0, "") and _header(table) == FOUR
    assert "≤4-7&#160;GPUs" in svg.read_text(encoding="utf-8")  # the SVG is the same whatever the width


# --- 3. ROCm's words in the thin-headroom caution -------------------------------------------------------------------

def test_an_mi300x_thin_headroom_caution_names_hip_and_rccl(cli: Cli) -> None:
    status, out, _ = cli("--gpu", "mi300x", "--gpus", "16", "--model", "8B", "--maximize", "len")
    shown = out.replace(WRAP, " ")
    caution = next(line for line in shown.splitlines()  # the plan's own row (a second plan's row may carry one too)
                   if line.startswith("caution") and "where the estimate extrapolates" in line)
    assert status == 0 and caution == (
        "caution        0.1 GiB to spare where the estimate extrapolates, and its error there is unmeasured (its flat "
        "overhead for the HIP context and RCCL does not grow across nodes: docs/memory.md in rft-solver's source); "
        "--margin 0.02 keeps 1.8 GiB more to spare than the default 0.01 here, or measure a step first")
    assert "2 nodes (RCCL's memory calibrated on one node)" in shown
    assert "NCCL" not in shown and "CUDA context" not in shown  # PYTORCH_CUDA_ALLOC_CONF is ROCm's PyTorch's too


def test_an_nvidia_gpu_keeps_cuda_and_nccl() -> None:
    assert known_errors(False, [BeyondCode.MORE_GPUS]) == (
        "its flat overhead for the CUDA context and NCCL does not grow with more GPUs than calibrated")
    assert known_errors(False, [BeyondCode.MORE_GPUS], rocm=True) == (
        "its flat overhead for the HIP context and RCCL does not grow with more GPUs than calibrated")


# --- 4. --version with more, and -V ---------------------------------------------------------------------------------

USAGE = "usage: solve [options] (--help lists them)\n"


@pytest.mark.parametrize(("argv", "error"), [
    (["--version", "extra"], "--version prints the version alone, not with extra"),
    (["--model", "8B", "--version"], "--version prints the version alone, not with --model 8B"),
    (["-V"], "unrecognized arguments: -V (did you mean --version?)"),
    (["-v"], "unrecognized arguments: -v (did you mean --version?)"),
], ids=["extra", "option", "-V", "-v"])
def test_version_beside_more_is_a_usage_error_and_v_is_told_version(cli: Cli, argv: list[str], error: str) -> None:
    assert cli(*argv) == (2, "", f"{USAGE}solve: error: {error}\n")


def test_version_alone_prints_it_and_help_still_wins(cli: Cli) -> None:
    assert cli("--version") == (0, f"solve {solver.__version__}\n", "")
    status, out, _ = cli("--help", "--version")
    assert status == 0 and out.startswith("usage: solve")


# --- 5. a fleet's value typed in full-width characters --------------------------------------------------------------

FLEET = """\
pools:
  - {{name: h20, gpu: H20-96GB, nodes: 1, gpus_per_node: 8}}
jobs:
  - {{name: code, model: {model}, max_model_len: {length}}}
"""
FULL_WIDTH = "is typed in full-width characters (an input method's): type it in ASCII,"


@pytest.mark.parametrize(("model", "length", "error", "ascii"), [
    ("８Ｂ", "32768", "job code, model: unknown model '８Ｂ'; accepted: ", "'８Ｂ' {} '8B'"),
    ("8B", "６５５３６", "line 4: job code, max_model_len: must be a whole number, got '６５５３６' ", "'６５５３６' {} '65536'"),
], ids=["model", "length"])
def test_a_fleet_value_typed_in_full_width_characters_is_named_in_ascii(
        cli: Cli, tmp_path: Path, model: str, length: str, error: str, ascii: str) -> None:
    # Before: the error alone, though --model ８Ｂ's names it in ASCII.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET.format(model=model, length=length), encoding="utf-8")
    status, out, err = cli("cluster", str(fleet))
    assert (status, out) == (2, "") and err.startswith(f"solve cluster: error: {fleet}: {error}")
    assert err.endswith(f"; {ascii.format(FULL_WIDTH)}\n") and err.count("\n") == 1


# --- 6. a tab in a user's YAML --------------------------------------------------------------------------------------

TAB_LINE = "tabs are not allowed for indentation in YAML; use spaces"


def test_a_fleet_indented_with_a_tab_is_one_line_naming_its_line(cli: Cli, tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - name: h20\n    gpu: H20-96GB\n\tnodes: 1\njobs: []\n", encoding="utf-8")
    assert cli("cluster", str(fleet)) == (2, "", f"solve cluster: error: {fleet}: line 4: {TAB_LINE}\n")


def test_a_trinity_config_indented_with_a_tab_is_one_line_naming_its_line(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text("model:\n\tmax_model_len: 8192\n", encoding="utf-8")
    assert cli("--from-config", str(config), "--gpu", "h100") == (
        2, "", f"solve: error: --from-config {config}: line 2: {TAB_LINE}\n")


@pytest.mark.parametrize(("command", "text", "said"), [
    # persona88b: a pool's `nodes: 6, down: [3]`, flow style's comma on a block line, got the reader's words alone.
    (("cluster",), "pools:\n  - name: h20\n    gpu: H20-96GB\n    nodes: 6, down: [3]\njobs: []\n",
     ("solve cluster: error: {file}: line 4: fields nodes and down on one line, joined by a comma, which separates "
      "fields only inside {{...}}: give each field its own line, or write the whole entry in braces, {{name: ..., "
      "...}}")),
    # s88: a Trinity config's `node_num: 1, gpu_per_node: 8` too; braces round the mapping's own first field.
    (("--gpu", "h100", "--from-config"), "mode: both\ncluster:\n  node_num: 1, gpu_per_node: 8\n",
     ("solve: error: --from-config {file}: line 3: fields node_num and gpu_per_node on one line, joined by a comma, "
      "which separates fields only inside {{...}}: give each field its own line, or write the whole entry in braces, "
      "{{node_num: ..., ...}}")),
    # wording88: a mapping as a field's value on the field's own line got the reader's words alone.
    (("--gpu", "h100", "--from-config"), "mode: both\nmodel: model_path: /m/Qwen3-8B, max_model_len: 8192\n",
     ("solve: error: --from-config {file}: line 2: field model_path in the value of model, on its line: a mapping as "
      "a field's value goes inside {{...}} there, model: {{model_path: ..., ...}}, or each of its fields on its own "
      "line below model, indented (text with ': ' in it goes in quotes)")),
    (("cluster",), "pools:\n  - a: gpu: h100, nodes: 2\njobs: []\n",
     ("solve cluster: error: {file}: line 2: field gpu in the value of a, on its line: a mapping as a field's value "
      "goes inside {{...}} there, a: {{gpu: ..., ...}}, or each of its fields on its own line below a, indented "
      "(text with ': ' in it goes in quotes)")),
])
def test_two_fields_on_a_block_line_are_told_the_comma_joins_them_only_in_braces(
        cli: Cli, tmp_path: Path, command: tuple[str, ...], text: str, said: str) -> None:
    given = tmp_path / "given.yaml"
    given.write_text(text, encoding="utf-8")
    assert cli(*command, str(given)) == (2, "", said.format(file=given) + "\n")


def test_another_yaml_error_keeps_the_readers_words(cli: Cli, tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools: [\n", encoding="utf-8")
    status, _, err = cli("cluster", str(fleet))
    assert status == 2 and err.startswith(f"solve cluster: error: {fleet}: at the end of the file: malformed YAML: ")
