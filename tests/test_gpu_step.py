"""`benchmarks/gpu_step.py`: the recorded H200 measurements against the memory model (the committed cases are the
package's own predictions, every measurement is of a case, the report shows each), and, where PyTorch is installed,
the step itself on the CPU."""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from benchmark_modules import BENCHMARKS, load_benchmark

from solver.tables import load_memory_model

GPU_STEP = load_benchmark("gpu_step")
H200 = BENCHMARKS / "gpu" / "h200"
TINY_SHAPE = {"vocab_size": 512, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "tie_word_embeddings": True}


@pytest.mark.parametrize("case_set", sorted(GPU_STEP.CASE_SETS))
def test_committed_cases_are_the_memory_models_predictions(case_set: str, tmp_path: Path) -> None:
    written = tmp_path / "cases.json"
    GPU_STEP.write_cases("H200-141GB", case_set, written)
    assert json.loads(written.read_text()) == json.loads((H200 / f"{case_set}-cases.json").read_text())


MEASURED_SETS = sorted(path.name.removesuffix("-measured.jsonl") for path in H200.glob("*-measured.jsonl"))


def test_every_case_set_is_measured() -> None:
    assert MEASURED_SETS == sorted(GPU_STEP.CASE_SETS)


@pytest.mark.parametrize("case_set", sorted(GPU_STEP.VERL_ACTOR_SETS))
def test_the_loss_run_as_verl_runs_it_fits_the_models_prediction_and_default_margin(case_set: str) -> None:
    margin = load_memory_model().margin
    records = {GPU_STEP._case_key(json.loads(line)): json.loads(line)
               for line in (H200 / f"{case_set}-measured.jsonl").read_text().splitlines()}
    for case in json.loads((H200 / f"{case_set}-cases.json").read_text())["cases"]:
        record = records[GPU_STEP._case_key(case)]
        measured = record["peak_allocated_gib"] + record["outside_allocator_gib"]
        predicted = case["predicted"]
        assert 0.8 * predicted["total_gib"] < measured <= predicted["total_gib"] + margin * predicted["usable_gib"]


@pytest.mark.parametrize("case_set", sorted(GPU_STEP.CASE_SETS))
def test_only_the_verl_sets_cases_run_the_loss_as_verl_does(case_set: str) -> None:
    cases = json.loads((H200 / f"{case_set}-cases.json").read_text())["cases"]
    assert {case.get("actor") for case in cases} == ({"verl"} if case_set.startswith("verl") else {None})


@pytest.mark.parametrize("case_set", MEASURED_SETS)
def test_every_measurement_is_of_a_case_on_an_h200(case_set: str) -> None:
    cases = {GPU_STEP._case_key(case) for case in json.loads((H200 / f"{case_set}-cases.json").read_text())["cases"]}
    records = [json.loads(line) for line in (H200 / f"{case_set}-measured.jsonl").read_text().splitlines()]
    assert {GPU_STEP._case_key(record) for record in records} == cases
    for record in records:
        if "error" in record:
            assert "torch.OutOfMemoryError: CUDA out of memory" in record["error"][-1]
        else:
            versions = (record["device"], record["torch"], record["transformers"])
            assert versions == ("NVIDIA H200", "2.11.0+cu130", "5.17.0")


def _report(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *folder: str) -> str:
    """What `benchmarks/gpu_step.py report [folder]` prints, run in-process through the script's `main`."""
    monkeypatch.setattr(sys, "argv", [str(BENCHMARKS / "gpu_step.py"), "report", *folder])
    GPU_STEP.main()
    return capsys.readouterr().out


def test_report_shows_each_case_its_outcome_and_each_models_growth(capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    shown = _report(capsys, monkeypatch)
    rows = [line for line in shown.splitlines() if line.startswith("│")]
    cases = sum(len(tuples) for tuples in GPU_STEP.CASE_SETS.values())
    growths = [row for row in rows if " to " in row]
    assert len(rows) == cases + len(growths) and len(growths) == 12
    memory_errors = [row for row in rows if "out of memory" in row]
    assert [row.split("│")[2].strip() for row in memory_errors] == ["Qwen3-0.6B", "Qwen3-1.7B", "Qwen3-8B"]
    assert "not run" not in shown


def test_a_set_not_yet_measured_reads_not_run(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    GPU_STEP.write_cases("H200-141GB", "env", tmp_path / "env-cases.json")
    shown = _report(capsys, monkeypatch, str(tmp_path))
    assert shown.count("not run") == len(GPU_STEP.CASE_SETS["env"])


def test_the_fused_log_probabilities_and_their_gradient_are_log_softmaxs() -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    logits = torch.randn(5000, 300).to(torch.bfloat16).requires_grad_()
    labels = torch.randint(0, 300, (5000,))
    weights = torch.randn(5000)
    fused = GPU_STEP.fused_log_probs().apply(logits, labels, GPU_STEP.HARNESS_ROWS)
    (fused * weights).sum().backward()
    fused_gradient, logits.grad = logits.grad, None
    plain = torch.log_softmax(logits.float(), dim=-1).gather(1, labels.unsqueeze(1)).squeeze(1)
    (plain * weights).sum().backward()
    assert (fused - plain).abs().max().item() < 1e-5
    assert (fused_gradient.float() - logits.grad.float()).abs().max().item() < 1e-4


@pytest.mark.parametrize(("entropy", "actor"), [(True, None), ("compiled", None), ("compiled", "verl")])
def test_a_step_runs_on_the_cpu_and_is_recorded(entropy: bool | str, actor: str | None, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    case = {"model": "tiny", "tokens": 256, "env": True, "entropy": entropy, "shape": TINY_SHAPE, "predicted": {},
            **({"actor": actor} if actor else {})}
    (tmp_path / "cases.json").write_text(json.dumps({"gpu": "cpu", "cases": [case]}))
    GPU_STEP.measure_all(tmp_path / "cases.json", tmp_path / "measured.jsonl", "cpu", None)
    record = json.loads((tmp_path / "measured.jsonl").read_text())
    shown = (record["model"], record["tokens"], record["entropy"], record.get("actor"), record["device"],
             record["parameters"])
    assert shown == ("tiny", 256, entropy, actor, "cpu", 106880)


@pytest.mark.parametrize(("actor", "released"), [(None, False), ("verl", True)])
def test_only_the_verl_loss_lets_go_of_the_logits_during_the_backward(actor: str | None, released: bool,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from torch.multiprocessing.reductions import StorageWeakRef

    released_by_backward = []
    backward = torch.Tensor.backward

    def watching_backward(loss: Any, *arguments: Any, **keywords: Any) -> None:
        logits = next(thing for thing in gc.get_objects()
                      if isinstance(thing, torch.Tensor) and tuple(thing.shape) == (256, 512))
        storage = StorageWeakRef(logits.untyped_storage())
        del logits
        backward(loss, *arguments, **keywords)
        released_by_backward.append(storage.expired())

    monkeypatch.setattr(torch.Tensor, "backward", watching_backward)
    case = {"model": "tiny", "tokens": 256, "env": True, "entropy": False, "shape": TINY_SHAPE,
            **({"actor": actor} if actor else {})}
    GPU_STEP.measure_one(case, "cpu")
    assert released_by_backward == [released]
