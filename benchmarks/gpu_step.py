"""Measure a verl-like actor step's peak GPU memory on a real GPU and set it beside the memory model's prediction.

Three steps (the middle one on a machine with a CUDA GPU, PyTorch and transformers; the others where rft-solver is
installed):

    python benchmarks/gpu_step.py cases --gpu H200-141GB --out cases.json   # shapes and predictions, from the package
    python benchmarks/gpu_step.py measure cases.json --out measured.jsonl  # on the GPU: torch and transformers only
    python benchmarks/gpu_step.py report cases.json measured.jsonl          # one table: predicted against measured

The step is built from transformers' Qwen3 code and PyTorch's FSDP2 the way verl's FSDP actor runs it (verl itself
and flash-attn are not needed): fp32 parameters sharded by ``fully_shard`` with bf16 compute and fp32 gradient
reduction, gradient checkpointing (``use_reentrant=False``), AdamW's moments made before the step is measured, one
packed sequence of ``T`` tokens (remove padding) through scaled-dot-product attention, the log-probabilities by a
fused cross entropy that, like flash-attn's, keeps no fp32 copy of the logits (``inplace_backward`` off, since the
entropy is computed: verl's dp_actor), verl's ``entropy_from_logits`` on the bf16 logits (run eagerly, or compiled
with ``torch.compile(dynamic=True)`` as verl's actor does unless ``use_torch_compile`` is off), and the
policy-gradient loss. Each case runs in a fresh process (the allocator setting ``PYTORCH_CUDA_ALLOC_CONF`` is read at start-up); a
case that runs out of memory is recorded as such. It is one GPU (SP 1): Ulysses' buffers and FSDP's sharding over
several GPUs are not measured.

The ``verl`` and ``verl-env`` sets run the loss closer to verl's dp_actor (``VERL_ACTOR_SETS``): the forward,
log-probabilities and entropy under ``torch.autocast`` (bf16), the entropy compiled, nothing outside autograd
holding the logits during the backward (verl's ``_forward_micro_batch`` returns only the log-probabilities and
entropy; the other sets keep the logits in a variable through it, 2 bytes a logit more at the backward's peak), the
log-probabilities a few rows at a time (``VERL_ROWS``: flash-attn's kernel keeps no fp32 rows at all) and the
gradient clipped before AdamW's step.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from functools import cache
from pathlib import Path
from typing import Any

ENV_SETTING = "expandable_segments:True"
GIB = 1024**3
CASE_SECONDS = 150
"""How long one case may run before it is recorded as timed out."""
HARNESS_ROWS = 4096
"""Rows of logits the log-probabilities take at a time in fp32 (every set but ``verl``)."""
VERL_ROWS = 512
"""Rows at a time in the ``verl`` set: 0.3 GiB of fp32 a block at Qwen3's vocabulary, against 2.3 GiB."""
VERL_ACTOR_SETS = frozenset({"verl", "verl-env"})
"""The sets whose cases run the loss as verl's dp_actor does (see the module's docstring)."""
Entropy = bool | str
"""How the step computes the entropy with its gradient: not (False), eagerly (True) or ``"compiled"``."""
CASE_SETS: dict[str, tuple[tuple[str, int, bool, Entropy], ...]] = {
    "main": (
        *((model, tokens, True, True) for model, lengths in (
            ("Qwen3-0.6B", (8192, 32768, 65536)), ("Qwen3-1.7B", (8192, 32768, 65536)),
            ("Qwen3-4B", (8192, 16384, 32768))) for tokens in lengths),
        ("Qwen3-1.7B", 32768, False, True), ("Qwen3-4B", 32768, False, True),
        ("Qwen3-1.7B", 32768, True, False),
        ("Qwen3-8B", 4096, True, True),
    ),
    "no-entropy": tuple((model, tokens, True, False) for model, lengths in (
        ("Qwen3-0.6B", (8192, 32768, 49152)), ("Qwen3-1.7B", (8192, 16384)), ("Qwen3-4B", (8192, 32768)))
        for tokens in lengths),
    "compiled": tuple((model, tokens, True, "compiled") for model, lengths in (
        ("Qwen3-0.6B", (8192, 32768, 65536)), ("Qwen3-1.7B", (8192, 32768)), ("Qwen3-4B", (8192, 32768)))
        for tokens in lengths),
    "env": tuple((model, tokens, env, False) for model, tokens in (("Qwen3-0.6B", 49152), ("Qwen3-1.7B", 32768),
                                                                   ("Qwen3-4B", 32768)) for env in (True, False)),
    "verl": tuple((model, tokens, True, "compiled") for model, lengths in (
        ("Qwen3-0.6B", (8192, 32768, 65536)), ("Qwen3-1.7B", (8192, 32768, 65536)), ("Qwen3-4B", (8192, 32768)))
        for tokens in lengths),
    "verl-env": tuple((model, tokens, False, "compiled") for model, tokens in (
        ("Qwen3-0.6B", 65536), ("Qwen3-1.7B", 32768), ("Qwen3-4B", 32768))),
}
"""The cases of each set: (model, tokens per GPU, Env, `Entropy`). "main": every model the GPU holds at three lengths
with the entropy run eagerly (verl computes it whenever the loss has an entropy term: Trinity's always), two without
Env, one without the entropy, and Qwen3-8B, whose optimizer step the memory model puts past one H200's memory;
"no-entropy": the per-token growth without the entropy; "compiled": with the entropy compiled, as verl runs it;
"env": the allocator's reserve beyond what is allocated, with Env and without, the cache of the set-up emptied first (the `main` and `no-entropy` sets' reserved figures include it); "verl": the `main` set's lengths
with the loss run as verl's dp_actor runs it (`VERL_ACTOR_SETS`); "verl-env": that loss without Env, at the `verl`
set's longest lengths."""


def write_cases(gpu: str, case_set: str, out: Path) -> None:
    """Write the model shapes of `case_set`'s cases and the memory model's prediction for each (rft-solver's API)
    to `out`."""
    from solver.api import memory_answer
    from solver.tables import load_catalog

    catalog = load_catalog()
    cases = []
    for name, tokens, env, entropy in CASE_SETS[case_set]:
        model = catalog.model(name)
        answer = memory_answer(name, gpu, 1, tokens // 2, env=env, catalog=catalog)
        cases.append({
            "model": model.name, "tokens": tokens, "env": env, "entropy": entropy,
            **({"actor": "verl"} if case_set in VERL_ACTOR_SETS else {}),
            "shape": {"vocab_size": model.vocab_size, "hidden_size": model.hidden_size,
                      "intermediate_size": model.intermediate_size, "num_hidden_layers": model.num_layers,
                      "num_attention_heads": model.num_attention_heads,
                      "num_key_value_heads": model.num_key_value_heads, "head_dim": model.head_dim,
                      "tie_word_embeddings": model.tied_embeddings},
            "predicted": {"terms": answer.terms.model_dump(), "total_gib": answer.total_gib,
                          "step_gib": answer.step_gib, "usable_gib": answer.usable_gib,
                          "memory_gib": answer.memory_gib, "fits": answer.fits},
        })
    out.write_text(json.dumps({"gpu": gpu, "cases": cases}, indent=1) + "\n")


def measure_all(cases_path: Path, out: Path, device: str, only: int | None) -> None:
    """Run each case of `cases_path` in a fresh process, appending one JSON line per case to `out` as it ends."""
    cases = json.loads(cases_path.read_text())["cases"]
    for index, case in enumerate(cases):
        if only is not None and index != only:
            continue
        environment = dict(os.environ)
        environment.pop("PYTORCH_CUDA_ALLOC_CONF", None)
        if case["env"]:
            environment["PYTORCH_CUDA_ALLOC_CONF"] = ENV_SETTING
        started = time.perf_counter()
        try:
            done = subprocess.run([sys.executable, __file__, "one", json.dumps(case), "--device", device],
                                  env=environment, capture_output=True, text=True, timeout=CASE_SECONDS, check=False)
        except subprocess.TimeoutExpired:
            record: dict[str, Any] = {"error": [f"timed out after {CASE_SECONDS} s"]}
        else:
            lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
            record = json.loads(lines[-1]) if lines else {"error": done.stderr.strip().splitlines()[-3:]}
        record.update(model=case["model"], tokens=case["tokens"], env=case["env"], entropy=case["entropy"],
                      **({"actor": case["actor"]} if "actor" in case else {}),
                      wall_s=round(time.perf_counter() - started, 1))
        with out.open("a") as stream:
            stream.write(json.dumps(record) + "\n")
        print(json.dumps(record), flush=True)


def measure_one(case: dict[str, Any], device_name: str) -> dict[str, Any]:
    """One actor step of `case` in this process: the states held before it, the peak of the forward, loss and
    backward, the optimizer step's peak, and what the process holds outside PyTorch's allocator (CUDA context)."""
    import torch
    import torch.distributed as dist
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    from transformers import Qwen3Config, Qwen3ForCausalLM

    device = torch.device(device_name)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    import transformers

    backend = "nccl" if device.type == "cuda" else "gloo"
    dist.init_process_group(backend, rank=0, world_size=1)
    shape = case["shape"]
    config = Qwen3Config(**shape, max_position_embeddings=max(40960, case["tokens"]), rope_theta=1e6,
                         attn_implementation="sdpa", use_cache=False)
    torch.manual_seed(0)
    with device:
        model = Qwen3ForCausalLM(config).float()
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for layer in model.model.layers:
        fully_shard(layer, mp_policy=policy)
    fully_shard(model, mp_policy=policy)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-6, weight_decay=0.01)
    for parameter in model.parameters():
        parameter.grad = torch.zeros_like(parameter)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if device.type == "cuda":
        torch.cuda.empty_cache()
    parameters = sum(parameter.numel() for parameter in model.parameters())
    tokens = case["tokens"]
    input_ids = torch.randint(0, shape["vocab_size"], (1, tokens), device=device)
    position_ids = torch.arange(tokens, device=device).unsqueeze(0)
    advantages = torch.randn(tokens, device=device)
    cuda = device.type == "cuda"
    verl_actor = case.get("actor") == "verl"
    rows = VERL_ROWS if verl_actor else HARNESS_ROWS

    def allocated() -> int:
        return torch.cuda.memory_allocated(device) if cuda else 0

    def peaks() -> tuple[int, int]:
        if not cuda:
            return 0, 0
        torch.cuda.synchronize(device)
        return torch.cuda.max_memory_allocated(device), torch.cuda.max_memory_reserved(device)

    def reset() -> None:
        if cuda:
            torch.cuda.synchronize(device)
            torch.cuda.reset_peak_memory_stats(device)

    states = allocated()
    reset()
    started = time.perf_counter()
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=verl_actor):
        logits = model(input_ids=input_ids, position_ids=position_ids).logits.squeeze(0)
        forward_peak, _ = peaks()
        logits.div_(1.0)
        labels = torch.roll(input_ids.squeeze(0), shifts=-1)
        log_probs = fused_log_probs().apply(logits, labels, rows)
        entropy = None
        if case["entropy"]:
            entropy_of = torch.compile(entropy_from_logits, dynamic=True) if case["entropy"] == "compiled" else \
                entropy_from_logits
            entropy = entropy_of(logits)
    loss = -(log_probs * advantages).mean()
    if entropy is not None:
        loss = loss - 1e-3 * entropy.mean()
    loss_peak, _ = peaks()
    held_through_backward = [] if verl_actor else [logits, log_probs]
    del logits, log_probs, entropy
    loss.backward()
    held_through_backward.clear()
    del loss
    step_peak_allocated, step_peak_reserved = peaks()
    seconds = time.perf_counter() - started
    with_gradients = allocated()
    reset()
    if verl_actor:
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    optimizer_peak, optimizer_reserved = peaks()
    free, total = torch.cuda.mem_get_info(device) if cuda else (0, 0)
    outside = (total - free) - torch.cuda.memory_reserved(device) if cuda else 0
    dist.destroy_process_group()
    return {"parameters": parameters, "states_gib": states / GIB, "with_gradients_gib": with_gradients / GIB,
            "forward_peak_gib": forward_peak / GIB, "loss_peak_gib": loss_peak / GIB,
            "peak_allocated_gib": step_peak_allocated / GIB, "peak_reserved_gib": step_peak_reserved / GIB,
            "optimizer_peak_gib": optimizer_peak / GIB, "optimizer_reserved_gib": optimizer_reserved / GIB,
            "outside_allocator_gib": outside / GIB, "total_gib": total / GIB, "step_s": round(seconds, 2),
            "device": torch.cuda.get_device_name(device) if cuda else "cpu", "torch": torch.__version__,
            "transformers": transformers.__version__}


@cache
def fused_log_probs() -> Any:
    """The autograd function `FusedLogProbs` (made on first use, so that the cases and report steps need no torch)."""
    import torch

    class FusedLogProbs(torch.autograd.Function):
        """Log-probabilities of `labels` under bf16 `logits`, computed `rows` rows at a time in fp32, as
        flash-attn's cross entropy does: no fp32 copy of the whole logits, a bf16 gradient the logits' size."""

        @staticmethod
        def forward(ctx: Any, logits: Any, labels: Any, rows: int) -> Any:
            lse = torch.empty(logits.shape[0], dtype=torch.float32, device=logits.device)
            for start in range(0, logits.shape[0], rows):
                lse[start:start + rows] = torch.logsumexp(logits[start:start + rows].float(), dim=-1)
            picked = logits.gather(1, labels.unsqueeze(1)).squeeze(1).float()
            ctx.save_for_backward(logits, labels, lse)
            ctx.rows = rows
            return picked - lse

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            logits, labels, lse = ctx.saved_tensors
            gradient = torch.empty_like(logits)
            for start in range(0, logits.shape[0], ctx.rows):
                span = slice(start, start + ctx.rows)
                probabilities = torch.exp(logits[span].float() - lse[span].unsqueeze(1))
                block = -grad[span].unsqueeze(1) * probabilities
                block.scatter_add_(1, labels[span].unsqueeze(1), grad[span].unsqueeze(1))
                gradient[span] = block.to(logits.dtype)
            return gradient, None, None

    return FusedLogProbs


def entropy_from_logits(logits: Any) -> Any:
    """verl's ``entropy_from_logits`` (verl/utils/torch_functional.py): the softmax in the logits' dtype."""
    import torch

    probabilities = torch.nn.functional.softmax(logits, dim=-1)
    return torch.logsumexp(logits, dim=-1) - torch.sum(probabilities * logits, dim=-1)


def report(folder: Path) -> None:
    """Print, for each case set measured in `folder` (`<set>-cases.json` and `<set>-measured.jsonl`), the predicted
    peak against the measured one, and each model's growth per token between its lengths, predicted and measured."""
    from rich.console import Console
    from rich.table import Table

    rows = [(case_set, case, record) for case_set in CASE_SETS if (folder / f"{case_set}-cases.json").exists()
            for case, record in _measured_cases(folder, case_set)]
    gpu = json.loads((folder / f"{rows[0][0]}-cases.json").read_text())["gpu"] if rows else folder.name
    peaks = Table(title=f"verl-like actor step on one {gpu}: the memory model's peak against the measured, GiB")
    for column in ("set", "model", "tokens", "Env", "entropy", "predicted", "measured", "measured / predicted",
                   "reserved", "optimizer step predicted", "optimizer step measured"):
        peaks.add_column(column, justify="left" if column in ("set", "model") else "right")
    for case_set, case, record in rows:
        predicted = case["predicted"]
        named = (case_set, case["model"], str(case["tokens"]), _yes(case["env"]), _entropy_words(case["entropy"]),
                 f"{predicted['total_gib']:.1f}")
        if record is None or "error" in record:
            outcome = "not run" if record is None else "out of memory" if "OutOfMemory" in str(record) else "failed"
            peaks.add_row(*named, outcome, "", "", f"{predicted['step_gib']:.1f}", "")
            continue
        outside = record["outside_allocator_gib"]
        peak = record["peak_allocated_gib"] + outside
        peaks.add_row(*named, f"{peak:.1f}", f"{peak / predicted['total_gib']:.2f}",
                      f"{record['peak_reserved_gib'] + outside:.1f}", f"{predicted['step_gib']:.1f}",
                      f"{record['optimizer_peak_gib'] + outside:.1f}")
    console = Console(width=170)
    console.print(peaks)
    console.print(_growth_table(rows))


def _measured_cases(folder: Path, case_set: str) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Each case of `case_set` in `folder` with its measured record (None where it was not measured)."""
    cases = json.loads((folder / f"{case_set}-cases.json").read_text())["cases"]
    measured_path = folder / f"{case_set}-measured.jsonl"
    lines = measured_path.read_text().splitlines() if measured_path.exists() else []
    measured = {_case_key(record): record for record in map(json.loads, lines)}
    return [(case, measured.get(_case_key(case))) for case in cases]


def _case_key(case: dict[str, Any]) -> tuple[str, int, bool, Entropy]:
    return case["model"], case["tokens"], case["env"], case["entropy"]


def _growth_table(rows: list[tuple[str, dict[str, Any], dict[str, Any] | None]]) -> Any:
    """Each model's growth per token between its shortest and longest measured length (per set, Env and entropy),
    predicted and measured (the allocated peak), in MB per token."""
    from rich.table import Table

    groups: dict[tuple[str, str, bool, Entropy], list[tuple[int, float, float]]] = {}
    for case_set, case, record in rows:
        if record is not None and "error" not in record:
            key = (case_set, case["model"], case["env"], case["entropy"])
            groups.setdefault(key, []).append((case["tokens"], case["predicted"]["total_gib"],
                                               record["peak_allocated_gib"]))
    table = Table(title="growth per token between a model's lengths, MB (1e6 bytes) per token")
    for column in ("set", "model", "Env", "entropy", "tokens", "predicted", "measured", "measured / predicted"):
        table.add_column(column, justify="left" if column in ("set", "model") else "right")
    for (case_set, model, env, entropy), points in groups.items():
        if len(points) < 2:
            continue
        (short, predicted_short, measured_short), (long, predicted_long, measured_long) = min(points), max(points)
        predicted = (predicted_long - predicted_short) * GIB / (long - short) / 1e6
        measured = (measured_long - measured_short) * GIB / (long - short) / 1e6
        table.add_row(case_set, model, _yes(env), _entropy_words(entropy), f"{short} to {long}", f"{predicted:.3f}",
                      f"{measured:.3f}", f"{measured / predicted:.2f}")
    return table


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _entropy_words(entropy: Entropy) -> str:
    return "compiled" if entropy == "compiled" else "eager" if entropy else "no"


def main() -> None:
    """The command line: `cases`, `measure`, `report` (and `one`, a single case, which `measure` runs)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    cases = commands.add_parser("cases")
    cases.add_argument("--gpu", default="H200-141GB")
    cases.add_argument("--set", choices=sorted(CASE_SETS), default="main", dest="case_set")
    cases.add_argument("--out", type=Path, required=True)
    measure = commands.add_parser("measure")
    measure.add_argument("cases", type=Path)
    measure.add_argument("--out", type=Path, required=True)
    measure.add_argument("--device", default="cuda:0")
    measure.add_argument("--only", type=int, help="run only the case at this index")
    one = commands.add_parser("one")
    one.add_argument("case")
    one.add_argument("--device", default="cuda:0")
    shown = commands.add_parser("report")
    shown.add_argument("folder", type=Path, nargs="?", default=Path(__file__).parent / "gpu" / "h200")
    arguments = parser.parse_args()
    if arguments.command == "cases":
        write_cases(arguments.gpu, arguments.case_set, arguments.out)
    elif arguments.command == "measure":
        measure_all(arguments.cases, arguments.out, arguments.device, arguments.only)
    elif arguments.command == "one":
        print(json.dumps(measure_one(json.loads(arguments.case), arguments.device)))
    else:
        report(arguments.folder)


if __name__ == "__main__":
    main()
