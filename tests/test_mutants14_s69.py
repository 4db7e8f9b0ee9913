"""Mutation testing of s68's later merges (mutants14): the behaviours their tests let change. Of moeuser: a dense
model's shards hold no expert padding. Of smallslips6: a GPU type without tables whose estimates fit nothing names
the larger GPU types' tables that cap them; the API says the length to plan past the validated one as its keyword.
Of deadcode6: a fit that moves no multiplier says so; --gpu-interconnect's help lists its values as a choice. Of
trinitymaint: a 0.5 fragment without Offload carries no comment on Offload's flags. Of smallslips7: the ranking's
note names every ranked plan on one GPU; the host limit's, the lowered budget's and the fewer nodes' plans on one
A100 carry the guide's caution; a length on a row that trains quotes no '-'; oc.decode's hint quotes the whole
number SP stands for."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from option_reference import option_reference
from test_smallslips7_s68 import REFUSED, SHORT, _row, _words

import solver
import solver.calibrate
from solver.calibrate import calibrate
from solver.memory import ADAM_STEP_BYTES, GIB, PRIOR, Setting, expert_padding, features, optimizer_step_states_gib
from solver.tables import load_catalog
from solver.trinity import patch_trinity_config

Cli = Callable[..., tuple[int, str, str]]
TRINITY_DATA = Path(__file__).parent / "data" / "trinity"


def test_a_dense_models_shards_hold_no_expert_padding():
    # Qwen3-8B has no experts: its states on 3 GPUs are an even third of 16 bytes a parameter, not a byte more.
    model = load_catalog().model("8B")
    parameters = model.parameters_b * 1e9
    assert expert_padding(model, 3) == 0.0
    assert features(model, 3, Setting(env=True), 8192)["states"] == 16 * parameters / 3 / GIB
    assert optimizer_step_states_gib(model, 3) == pytest.approx((16 + ADAM_STEP_BYTES) * parameters / 3 / GIB,
                                                                rel=1e-13)


def test_a_gpu_type_without_tables_names_the_larger_tables_that_cap_its_estimates(cli: Cli):
    # 8 GiB hold no 1024 tokens of Qwen3-8B; the A100's and H20's tables, on GPUs of more memory, cap the estimates.
    status, out, err = cli("--gpu", "x", "--gpu-memory", "8GiB", "--model", "8B", "--gpus", "1", "--maximize", "len",
                           "--json")
    [answer] = json.loads(out)
    assert (status, err, answer["status"], answer["reason_code"]) == (1, "", "infeasible", "no-table-for-model")
    assert answer["reason"] == (
        "the tables have no Qwen3-8B on x, and the memory model estimates that nothing fits (not even 1024 tokens) "
        "within what the A100-80GB and H20-96GB tables allow (their GPUs have at least this one's memory); more "
        "trainer GPUs have a plan: Env + Offload + SP=2 on 2 GPUs at 1024 tokens (estimated, extrapolated)")


def test_a_fit_that_moves_no_multiplier_says_so(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # A fit that leaves every multiplier at its first-principles 1 (the fit here replaced by PRIOR) names none moved.
    monkeypatch.setattr(solver.calibrate, "calibrate", lambda evidence: (PRIOR, calibrate(evidence)[1]))
    cells, fitted = tmp_path / "cells.yaml", tmp_path / "fit.yaml"
    cells.write_text("gpu: H100-80GB\nmemory_gb: 80\nsource: our node\ntables:\n  - gpus: 8\n    section: 8 x H100\n"
                     "    models: [Qwen3-0.6B]\n    rows:\n"
                     "      - {max_model_len: 4096, cells: {Qwen3-0.6B: vanilla}}\n", encoding="utf-8")
    status, out, err = cli("calibrate", "--cells", str(cells), "--out", str(fitted))
    # its one vanilla cell says nothing ran out of memory: that note alone (persona91c)
    assert status == 0 and err.count("\n") == 1
    assert err.startswith("solve calibrate: note: none of your cells says a setting ran out of memory")
    assert out.splitlines()[1] == "the fit moved no multiplier from first principles"


def test_a_05_fragment_without_offload_has_no_comment_on_offloads_flags(cli: Cli):
    # The config's actor param_offload: false is kept off under trainer_config; nothing there is Offload's to note.
    status, out, err = cli("--from-config", str(TRINITY_DATA / "user-config.yaml"), "--gpu", "a100-80gb",
                           "--no-offload", "--trinity-version", "0.5", "--emit", "trinity")
    lines = out.splitlines()
    start = lines.index("  trainer_config:")
    assert (status, err) == (0, "")
    assert lines[start - 1] == "  max_token_len_per_gpu: 8192  # ceil(2 * 4096 / 1), Trinity's default, written out"
    assert "param_offload: false" in lines[start + 4] and "written for Trinity 0.5" not in out


def test_the_rankings_note_names_each_plan_on_one_gpu(cli: Cli):
    # Qwen3-0.6B's longest lengths on one A100: #1 at 28672 and #2 at 24576 carry the guide's caution (more than 20K
    # tokens), #3 at 20480 does not.
    status, out, _ = cli("--gpu", "a100-80gb", "--model", "0.6B", "--gpus", "1", "--maximize", "len", "--top", "6")
    assert status == 0
    assert [line for line in out.splitlines() if line.startswith("#") and "advises more GPUs" in line] == [
        "#1, #2: one trainer GPU: Trinity-RFT's guide strongly advises more GPUs"]


def test_a_length_on_a_row_that_trains_quotes_no_dash(cli: Cli):
    # The A100 table for 1 GPU says 'Env + Offload' for Qwen3-8B at 24576 ('-' from the next row, 28672): --no-offload
    # leaves no plan there, and no line reads that row as '-' or as cells that ran out of memory.
    status, out, _ = cli("--gpu", "a100-80gb", "--model", "8B", "--len", "24576", "--gpus", "1", "--no-offload",
                         "--explain", "--json")
    [answer] = json.loads(out)
    assert status == 1
    assert [reason["rule"] for reason in answer["explanation"]] == ["limit", "more_gpus", "without_pins"]


def test_the_side_rows_plans_on_one_a100_carry_the_guides_caution(cli: Cli):
    # Qwen3-4B at 28672 tokens on the fewest A100s: 64 GiB of host memory keeps Env + Offload off its one GPU; at
    # 32768, a lowered token budget trains it on one; on nodes of 2 beside 1 rollout GPU, one node holds both.
    status, out, _ = cli("--gpu", "a100-80gb", "--model", "4B", "--len", "28672", "--minimize", "gpus",
                         "--host-ram", "64")
    assert status == 0 and _row(out, "host limit") == (
        "with 93.4 GiB of host memory per node, the best plan is Env + Offload on 1 GPU, cost 2.02 "
        f"(documented; {SHORT}): --host-ram 64 GiB costs 1 GPU")
    status, out, _ = cli("--gpu", "a100-80gb", "--model", "4B", "--len", "32768", "--minimize", "gpus")
    assert status == 0 and _row(out, "fewer GPUs") == (
        "--token-budget auto trains it on 1 GPU (1 fewer): Env + Offload with a lowered max_token_len_per_gpu of 56320 "
        f"(estimated; {SHORT})")
    status, out, _ = cli("--gpu", "a100-80gb", "--model", "4B", "--len", "28672", "--total-gpus", "4",
                         "--rollout-gpus", "1", "--node-gpus", "2")
    assert status == 0 and _row(out, "fewer nodes") == (
        "1 node of 2 GPUs instead of 2 nodes: Env + Offload on 1 trainer + 1 rollout GPUs, 28672 tokens, 3.64x the "
        f"relative step time (documented; {SHORT}): --total-gpus 2")


def test_the_api_names_the_length_to_plan_past_the_validated_one_as_its_keyword():
    # Qwen3-8B's longest length on 64 H200s, 367616, is past the validated 131072: the answer's text and a patched
    # config say to plan max_model_len=131072, as the API takes it.
    (answer,) = solver.plan("8B", gpu="h200", objective="max_len", budget_gpus=64)
    assert answer.best is not None and answer.best.max_model_len == 367616
    note = "max_model_len past the validated 131072: check the model's quality at this length, or plan"
    assert f"\n# {note} max_model_len=131072\n" in solver.answers_text([answer])
    # a cluster that gives the plan's 64 trainer GPUs: 9 nodes of 8, less 8 engines of one GPU, and the plan's model
    # (the patch keeps both)
    config = (TRINITY_DATA / "user-config.yaml").read_text(encoding="utf-8").replace(
        "  node_num: 1\n", "  node_num: 9\n").replace("    engine_num: 2\n", "    engine_num: 8\n").replace(
        "Qwen/Qwen3-0.6B}", "Qwen/Qwen3-8B}")
    written = patch_trinity_config(config, answer.best, load_catalog().model(answer.model))
    assert f"  # {note}\n  #   max_model_len=131072\n" in written


def test_oc_decodes_hint_in_the_sp_field_quotes_the_whole_number():
    # Trinity types ulysses_sequence_parallel_size int: "2.0" decodes to the float it refuses; the hint says "2".
    words = ("trainer.ulysses_sequence_parallel_size: '${oc.decode:2.0}': OmegaConf's oc.decode takes text or null, "
             f'not 2.0 (quote it: "2"){REFUSED}')
    assert _words("trainer", "{ulysses_sequence_parallel_size: '${oc.decode:2.0}'}") == [words]


def test_the_gpu_interconnect_help_lists_its_values_as_a_choice(cli: Cli, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("COLUMNS", "1000")  # one line an option
    status, out, _ = cli("--help")
    assert status == 0 and ("--gpu-interconnect LINK with --gpu-memory: the link between a node's GPUs, nvlink, "
                            "infinity-fabric or pcie (default: not stated") in " ".join(out.split())
    assert ("how that GPU type's GPUs in a node reach one another: nvlink, infinity-fabric (AMD's, whose Env plans are "
            "cautioned as ROCm's) or pcie (SP's all-to-all") in option_reference()  # in full (session 93)
