"""Tests that kill mutants of session 52's new code which its own tests let live (/work/keep/review-s52-mutday.md):
`MemoryAnswer` reading its JSON back, Qwen2-MoE's shared expert and the MoE config checks, a map without rows, the
console's layout and escaped bytes, folders another run made, and widening's node limits."""

from __future__ import annotations

import io
import json
import os
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

import solver.cli.atomic
import solver.cli.cluster
import solver.cli.examples
from solver.cli.output import escaped_line, new_console, on_terminal
from solver.memory import JSON_GIB_SLACK, MemoryAnswer, weight_shapes
from solver.render import json_schema
from solver.results import GpuMap
from solver.tables import TableError, load_model_config
from solver.tables.schema import MoE

HF_CONFIGS = Path(__file__).parent / "data" / "hf-configs"

FAR = {"total_gib": 50.0, "usable_gib": 60.0, "step_gib": 20.0, "step_usable_gib": 40.0, "host_memory_gib": 100.0,
       "host_ram_gib": 200.0}
"""An answer's figures with every comparison its verdicts rest on far from its limit: the activations have 10 GiB of
room, the optimizer step 20, the host 100."""


@pytest.fixture
def answer_json(cli) -> Any:
    """`solve memory --json`'s answer with the figures of `FAR` and the changes given, as its JSON prints it."""
    printed = json.loads(cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "2", "--len", "8k",
                             "--json")[1])
    answer = MemoryAnswer.model_validate(printed)

    def with_figures(**changes: float) -> dict[str, Any]:
        return answer.model_copy(update={**FAR, "tables": None, **changes}).model_dump(mode="json")

    return with_figures


@pytest.mark.parametrize(("changes", "verdict"), [
    ({"usable_gib": 50.0001}, "fits"),  # the activations' room: 0.0001 GiB
    ({"step_usable_gib": 20.0001}, "step_fits"),  # the optimizer step's
    ({"step_usable_gib": 30.0001}, "step_binds"),  # the step's room 0.0001 more than the activations': which binds
    ({"host_memory_gib": 99.95, "host_ram_gib": 100.0001}, "host_fits"),  # as host_fits reads it: 100.0 GiB
])
def test_a_verdict_at_each_limit_the_json_cannot_tell_reads_back_either_way(answer_json, changes: dict, verdict: str):
    # Each comparison a verdict rests on, within the JSON's rounding (JSON_GIB_SLACK) of its limit, alone: a flipped
    # yes or no of that verdict may be the rounding's, so it is read back (with the verdict the figures give), not
    # refused; a verdict that does not rest on that comparison is still refused flipped.
    printed = answer_json(**changes)
    flipped = {**printed, verdict: not printed[verdict]}
    assert getattr(MemoryAnswer.model_validate(flipped), verdict) is printed[verdict]
    for other in ("fits", "host_fits"):
        if other != verdict and not (verdict == "step_fits" and other == "fits"):  # fits rests on the step's room
            with pytest.raises(ValidationError, match=f"{other} is {not printed[other]!r}, but the other fields say "
                                                      f"{printed[other]!r}"):
                MemoryAnswer.model_validate({**printed, other: not printed[other]})


@pytest.mark.parametrize("changes", [
    {"usable_gib": 50.0003}, {"step_usable_gib": 20.0003}, {"step_usable_gib": 30.0003},
    {"host_memory_gib": 99.95, "host_ram_gib": 100.0003}, {},
])
def test_a_verdict_beyond_the_jsons_rounding_of_every_limit_is_refused_flipped(answer_json, changes: dict):
    printed = answer_json(**changes)
    with pytest.raises(ValidationError, match=f"fits is {not printed['fits']!r}, but the other fields say "
                                              f"{printed['fits']!r}"):
        MemoryAnswer.model_validate({**printed, "fits": not printed["fits"]})


def test_a_yes_or_no_verdict_given_as_a_number_is_refused_even_at_a_limit(answer_json):
    far, at_limit = answer_json(), answer_json(usable_gib=50.0001)
    assert (far["fits"], at_limit["fits"]) == (True, True)
    for printed in (far, at_limit):
        with pytest.raises(ValidationError, match="fits is 1, but the other fields say True"):
            MemoryAnswer.model_validate({**printed, "fits": 1})


def test_the_headroom_reads_back_within_twice_the_rounding_and_as_a_whole_number(answer_json):
    # The headroom (10 GiB: the activations') rests on two rounded figures: read back within 2 * JSON_GIB_SLACK of
    # the figures' either way, refused beyond; a whole number is a number; true is not 1.
    printed = answer_json()
    assert printed["headroom_gib"] == 10.0
    for given in (10, 10 + 1.5 * JSON_GIB_SLACK, 10 - 1.5 * JSON_GIB_SLACK):
        assert MemoryAnswer.model_validate({**printed, "headroom_gib": given}).headroom_gib == 10.0
    for given in (10 + 2.5 * JSON_GIB_SLACK, 10 - 2.5 * JSON_GIB_SLACK):
        with pytest.raises(ValidationError, match=f"headroom_gib is {given!r}, but the other fields say 10.0"):
            MemoryAnswer.model_validate({**printed, "headroom_gib": given})
    one = answer_json(usable_gib=51.0)
    with pytest.raises(ValidationError, match="headroom_gib is True, but the other fields say 1.0"):
        MemoryAnswer.model_validate({**one, "headroom_gib": True})


def test_a_qwen2_moe_shared_experts_weights_are_laid_out_as_transformers_holds_them():
    # Qwen2MoeSparseMoeBlock's shared expert in each of the 24 layers: gate_proj and up_proj (5632 rows of 2048),
    # down_proj (2048 rows of 5632), and shared_expert_gate (1 row of 2048); FSDP2 shards each by its rows.
    model = load_model_config(HF_CONFIGS / "Qwen1.5-MoE-A2.7B.json")
    assert weight_shapes(model)[-3:] == ((5632, 2048, 48), (2048, 5632, 24), (1, 2048, 24))


def test_a_map_without_rows_is_read_as_its_schema_reads_it(cli):
    # Neither the type nor the schema asks for a row: a map with none reads back, by model or by length.
    [by_length] = json.loads(cli("map", "--gpu", "h100", "--model", "8B", "--by", "len", "--gpus-up-to", "1",
                                 "--json")[1])
    [by_model] = json.loads(cli("map", "--gpu", "h100", "--model", "8B", "--gpus-up-to", "1", "--json")[1])
    empty = [{**by_model, "rows": []}, {**by_length, "rows": []}]
    assert list(Draft202012Validator(json.loads(json_schema("map"))).iter_errors(empty)) == []
    assert [GpuMap.model_validate(gpu_map).rows for gpu_map in empty] == [(), ()]


def test_each_byte_python_holds_as_a_surrogate_is_written_as_that_byte_and_no_other_character():
    # os.fsdecode's surrogateescape holds the bytes 0x80 to 0xff as U+DC80 to U+DCFF; a lone surrogate beside them
    # (U+DC7F, U+DD00) is no byte of a name, and is written as Python writes it.
    line = "".join(chr(code) for code in (0xDC7F, 0xDC80, 0xDCE9, 0xDCFF, 0xDD00))
    assert escaped_line(f"caf{line}") == "caf\\udc7f\\x80\\xe9\\xff\\udd00"


class _FailingStream(io.StringIO):
    """A stream whose `isatty` raises `error`, as a closed (ValueError) or broken (OSError) one's does."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error

    def isatty(self) -> bool:
        raise self.error


@pytest.mark.parametrize("error", [ValueError("I/O operation on closed file"), OSError(9, "Bad file descriptor")])
def test_stdout_that_cannot_say_whether_it_is_a_terminal_is_laid_out_as_a_pipe(
        monkeypatch: pytest.MonkeyPatch, error: Exception):
    # FORCE_COLOR has rich take any stream for a terminal; the layout asks the stream itself, which cannot answer.
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(sys, "stdout", _FailingStream(error))
    console = new_console(200)
    assert (console.is_terminal, on_terminal(console), console.width) == (True, False, 200)


def _qwen1_5_moe(tmp_path: Path, **changes: object) -> Path:
    """Qwen1.5-MoE-A2.7B's published config with `changes` (None: the key removed), written in `tmp_path`."""
    config = json.loads((HF_CONFIGS / "Qwen1.5-MoE-A2.7B.json").read_text(encoding="utf-8"))
    config.update(changes)
    path = tmp_path / "config.json"
    path.write_text(json.dumps({key: value for key, value in config.items() if value is not None}), encoding="utf-8")
    return path


def test_a_qwen2_moe_config_without_tie_word_embeddings_reads_untied_as_transformers_does(tmp_path: Path):
    # Qwen2MoeConfig's default is false: the same 14.32B parameters as the published config, which says so.
    published = load_model_config(HF_CONFIGS / "Qwen1.5-MoE-A2.7B.json")
    untold = load_model_config(_qwen1_5_moe(tmp_path, tie_word_embeddings=None))
    assert (untold.tied_embeddings, round(untold.parameters_b, 2)) == (False, 14.32)
    assert untold.shape == published.shape


@pytest.mark.parametrize(("changes", "message"), [
    # A qwen2_moe config's other shared-expert key is not its layout: refused, though its own is counted.
    ({"n_shared_experts": 2}, "n_shared_experts 2: shared experts beside the routed ones, which would go uncounted"),
    # Each other key of a count of routed experts is compared with the one read.
    ({"n_routed_experts": 64}, r"num_experts 60 and n_routed_experts 64: two counts of routed experts; give one$"),
    ({"moe_num_experts": 64}, r"num_experts 60 and moe_num_experts 64: two counts of routed experts; give one$"),
    # Its intermediate_size (5632) is no expert's width: without moe_intermediate_size, refused.
    ({"moe_intermediate_size": None}, r"missing moe_intermediate_size: a qwen2_moe config gives each expert's width"),
    # Without a count, the first of the mixture of experts' keys given is named (a model type rft-solver does not
    # know: llama's class is dense, reading none of them, so a llama config is counted dense whatever it carries).
    ({"num_experts": None, "model_type": "custom_moe"}, r"num_experts_per_tok 4 but no count of routed experts"),
])
def test_a_qwen2_moe_config_with_keys_it_does_not_read_is_refused(tmp_path: Path, changes: dict, message: str):
    with pytest.raises(TableError, match=message):
        load_model_config(_qwen1_5_moe(tmp_path, **changes))


def test_a_mixture_of_experts_shape_gives_a_shared_experts_width_only_where_there_is_one():
    # Qwen3-30B-A3B's experts: count, active, width; Qwen1.5-MoE's with its shared expert's width after them.
    routed, shared = (load_model_config(HF_CONFIGS / name).shape[8]
                      for name in ("Qwen3-30B-A3B.json", "Qwen1.5-MoE-A2.7B.json"))
    assert (routed, shared) == ((128, 8, 768), (60, 4, 1408, 5632))


@pytest.mark.parametrize("width", [-1, "1024", 1024.0, True])
def test_a_shared_experts_width_is_a_whole_number_of_zero_or_more(width: object):
    with pytest.raises(ValidationError, match="shared_expert_intermediate_size"):
        MoE(experts=8, active_experts=2, moe_intermediate_size=64, shared_expert_intermediate_size=width)


def test_a_terminal_the_environment_says_is_none_is_not_laid_out_as_one(monkeypatch: pytest.MonkeyPatch):
    # TTY_COMPATIBLE=0 on a terminal (a pty's): rich from 14 takes it for no terminal, and so does the layout (rich
    # 13 does not read the variable: a terminal there, both ways).
    monkeypatch.setenv("TTY_COMPATIBLE", "0")
    primary, secondary = os.openpty()
    with open(secondary, "w", encoding="utf-8") as terminal, open(primary, "rb"):
        monkeypatch.setattr(sys, "stdout", terminal)
        console = new_console()
        assert terminal.isatty() and on_terminal(console) is console.is_terminal
        assert console.is_terminal is (int(version("rich").split(".")[0]) < 14)


ONE_JOB_FLEET = """\
pools:
  - {name: a100, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}
jobs:
  - {name: math-4b, model: 4B, max_model_len: 8192, rollout_gpus: 2}
"""


def _made_meanwhile_and_the_write_fails(monkeypatch: pytest.MonkeyPatch, module: object) -> None:
    """Another run makes each missing folder between the command's look and its mkdir; then the write fails."""
    make_folder = Path.mkdir

    def made_first_by_another_run(folder: Path, *args: object, **kwargs: object) -> None:
        if not folder.exists():
            make_folder(folder)
        make_folder(folder, *args, **kwargs)

    def full_disk(*_: object) -> None:
        raise solver.cli.atomic.WriteFailed("cannot write: No space left on device")

    monkeypatch.setattr(Path, "mkdir", made_first_by_another_run)
    monkeypatch.setattr(module, "write_all_atomically", full_disk)


def test_an_emit_dir_another_run_made_stays_when_the_write_fails(cli, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch):
    # The folder is the other run's: only a folder this run made is removed after a failed write.
    (tmp_path / "fleet.yaml").write_text(ONE_JOB_FLEET, encoding="utf-8")
    _made_meanwhile_and_the_write_fails(monkeypatch, solver.cli.cluster)
    status, out, err = cli("cluster", str(tmp_path / "fleet.yaml"), "--emit-dir", str(tmp_path / "configs"))
    assert (status, out, err) == (74, "", "solve cluster: error: cannot write: No space left on device\n")
    assert (tmp_path / "configs").is_dir()


def test_an_examples_folder_another_run_made_stays_when_the_write_fails(cli, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    _made_meanwhile_and_the_write_fails(monkeypatch, solver.cli.examples)
    assert cli("examples", "mine/inner") == (74, "", "solve examples: error: cannot write: No space left on device\n")
    assert sorted(path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*")) == [
        "mine", "mine/inner", "mine/inner/linear-model", "mine/inner/my-model"]


def _widened(cli, tmp_path: Path, pool: str, jobs: list[str]) -> list[tuple[str, int, int | None, float]]:
    """(job, trainer GPUs, GPUs widened from, host memory) of each placement of `solve cluster` on one node."""
    (tmp_path / "fleet.yaml").write_text("pools:\n  - {name: a100, gpu: A100-80GB, nodes: 1, " + pool + "}\njobs:\n"
                                         + "".join(f"  - {job}\n" for job in jobs), encoding="utf-8")
    status, out, _ = cli("cluster", str(tmp_path / "fleet.yaml"), "--json")
    assert status == 0
    return [(p["job"], p["trainer_gpus"], p["widened_from"], p["host_memory_gb"])
            for p in json.loads(out)["placements"]]


def test_widening_fills_a_node_s_gpus_and_host_memory_exactly_and_no_further(cli, tmp_path: Path):
    # Two Qwen3-0.6B jobs at 8192 take 6 A100s each by the tables; 8 + 8 GPUs fit a node of 16, not one of 15.
    small = ["{name: a, model: 0.6B, max_model_len: 8192}", "{name: b, model: 0.6B, max_model_len: 8192}"]
    assert [row[1:3] for row in _widened(cli, tmp_path, "gpus_per_node: 16", small)] == [(8, 6), (8, 6)]
    assert sorted(row[1:3] for row in _widened(cli, tmp_path, "gpus_per_node: 15", small)) == [(6, None), (8, 6)]
    # Qwen3-4B and 0.6B both grown to 8 of 16 GPUs need 141.0 + 20.8 = 161.8 GiB of host memory as they load (the
    # reference model's fp32 shards beside each): 161.7 holds one (the 0.6B job on its 6 GPUs loads in 16.4).
    mixed = ["{name: a, model: 4B, max_model_len: 8192}", small[1]]
    assert _widened(cli, tmp_path, "gpus_per_node: 16, host_ram_gb: 161.8", mixed) == [
        ("a", 8, 6, 141.0), ("b", 8, 6, 20.8)]
    assert _widened(cli, tmp_path, "gpus_per_node: 16, host_ram_gb: 161.7", mixed) == [
        ("a", 8, 6, 141.0), ("b", 6, None, 16.4)]
