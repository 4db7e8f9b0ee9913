"""LoRA and the reference model where the run builds none (session 73): the explanation's host memory words
(``--explain``), a cluster job's written Trinity config (``solve cluster --emit-dir``: ``model.lora_configs``) and the
cluster's text tables, which mark a LoRA job and one without a reference model."""

from __future__ import annotations

import json
from collections.abc import Callable

PLANNER = ("--no-estimate", "--explain", "--json")


def _explanation(cli: Callable[..., tuple[int, str, str]], status: int, *argv: str) -> list[tuple[str, str]]:
    """The planner's explanation (rule, detail) for `argv`, which exits with `status` (1: no plan) and says nothing on
    stderr."""
    code, out, err = cli(*argv, *PLANNER)
    assert (code, err) == (status, "")
    [answer] = json.loads(out)
    return [(reason["rule"], reason["detail"]) for reason in answer["explanation"]]


def test_a_lora_run_s_host_memory_limit_names_no_reference_model(cli: Callable[..., tuple[int, str, str]]) -> None:
    # LoRA builds no reference model (Trinity takes the actor without its adapter): the load alone is too much for
    # 16 GiB, and the words leave out the reference model's pinned shards it said were there.
    reasons = _explanation(cli, 1, "--gpu", "h20", "--model", "8B", "--len", "4096", "--gpus", "8", "--exact", "--sp",
                           "8", "--no-env", "--no-offload", "--host-ram", "16", "--lora-rank", "16")
    assert [detail for rule, detail in reasons if rule in ("limit", "host_ram")] == [
        ("no plan passes this rule: host memory (--host-ram 16 GiB is too little for Offload, or for the model while "
         "it loads; no reference model)"),
        ("loading the model needs more host memory (verl reads it in fp32 before FSDP shards it; no reference model) "
         "than --host-ram 16 GiB (on 8 GPUs)")]


def test_offload_s_host_memory_reason_without_a_reference_model_names_the_actor_alone(
        cli: Callable[..., tuple[int, str, str]]) -> None:
    # Without a reference model Offload still needs more than 40 GiB on 1 and 2 GPUs (30.0 GiB loads without it).
    reasons = _explanation(cli, 0, "--gpu", "A100-80GB", "--model", "4B", "--maximize", "len", "--gpus", "2",
                           "--host-ram", "40", "--no-reference")
    offload = ("Offload needs more host memory (the actor's states, or the model while it loads beside the actor's "
               "pinned shards, whichever is more; no reference model) than --host-ram 40 GiB (on {})")
    assert [detail for rule, detail in reasons if rule == "host_ram"] == [offload.format(on) for on in ("1 GPU",
                                                                                                        "2 GPUs")]
