"""Notes on stderr after a ``solve`` command's answer: --gpu-memory as sold, --cells elsewhere (or of a GPU type by its
memory as sold, with a row off the 1024-token grid or with a cell outside the order cells are read in), a short
--len (or a cluster file's job length) or one in thousands that cuts a power of two (131k), a config.json one
term off a tabled model's shape, with multi-token prediction layers (not counted) or with output_router_logits (not
counted), or whose class computes every expert (Llama 4), or that vLLM refuses to build (read for a trainer alone),
or whose YaRN factor the plan replaces, a
pool's GPU type or --gpu named without its memory where the catalogue has it with other memory too, or naming the
PCIe cards of a GPU type the catalogue has as SXM boards, or GPU types that share a budget without --gpus that some
of them would not get alone."""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING

from solver.cli.catalogs import given_gpus
from solver.cli.output import print_note
from solver.cli.parser import one_typo_apart
from solver.tables import (
    HOST_RAM_UNITS,
    SMALL_HOST_RAM_GIB,
    counted,
    cut_thousands_note,
    named_jobs,
    power_of_two_cut,
    says_nvl,
    says_pcie,
    short_length_note,
    small_host_ram_note,
    thousands_of_tokens,
)

if TYPE_CHECKING:
    from solver.query import TrinityConfig
    from solver.results import Answer
    from solver.tables import Catalog, Fleet, GpuType, Model


def note_memory_as_sold(args: argparse.Namespace, prog: str) -> None:
    """A note on stderr where --gpu-memory gives GB as sold (``24``, ``24G`` or ``24GB``, each named as the last, the
    unit it is read in), which the memory model takes as GiB and which borrows no other GPU type's tables (the
    driver's figure does): a card of HBM or of GDDR with ECC may report less, and nvidia-smi's total is exact."""
    memory = getattr(args, "gpu_memory", None)
    if memory is not None and memory[1] is None:
        print_note(
            f"{prog}: note: --gpu-memory {memory[0]}GB is taken as {memory[0]} GiB, and as sold it borrows no other "
            f"GPU type's tables ({memory[0]}GiB or nvidia-smi's total would, where a GPU type's driver reports as "
            "much); a card may report less than it is sold with, of HBM (an H100 80GB: 79.6 GiB) or of GDDR with "
            "ECC (an L40S 48GB: 45.0 GiB), so give nvidia-smi's total where you have it (--gpu-memory 81559MiB for "
            "an H100 80GB, 46068MiB for an L40S)")


def note_gpu_name_meant(args: argparse.Namespace, prog: str) -> None:
    """A note on stderr where --gpu NAME --gpu-memory SIZE describes a GPU type whose name is one slip away
    (`solver.cli.parser.one_typo_apart`) from the catalogue's name or alias of the GPU type it was likely meant to be
    (`_gpu_name_slipped`, as for a --cells file's GPU type: ``H880`` of 80 GB, H800-80GB): a typo makes a GPU type
    of its own, silently. Not refused, as a card of one's own may be so named; and not for a name of one's own that
    holds a catalogue name (``desk-4090``, ``my-h100-pcie``, as the notes on --gpu-memory suggest). Where the one
    meant is an AMD card (``m1300x``: MI300X), --gpu-interconnect states none and the name does not say AMD's
    (``mi300`` does), the note says so: only such a name or ``infinity-fabric`` makes a GPU type of one's own AMD's
    (`solver.tables.described_gpu_type`), which its Env plans are cautioned as, so it gets no ROCm caution."""
    memory = getattr(args, "gpu_memory", None)
    if memory is None:
        return
    from solver.tables import described_gpu_type, load_catalog
    for name in given_gpus(getattr(args, "gpu", None)):
        own = described_gpu_type(name, *memory)
        meant = _gpu_name_slipped(name, own.memory_gb)
        if meant is None:
            continue
        amd = load_catalog().gpu(meant).rocm and not own.rocm and getattr(args, "gpu_interconnect", None) is None
        print_note(f"{prog}: note: --gpu {name} is not a GPU type of the catalogue, so --gpu-memory makes one of "
                   f"its own (did you mean {meant}?)" + (
                       ", planned as a GPU of no stated vendor, with no ROCm caution: for an AMD card give "
                       "--gpu-interconnect infinity-fabric" if amd else ""))


def _gpu_name_slipped(name: str, memory_gb: int) -> str | None:
    """The catalogue's GPU type that `name`, a GPU type of one's own of `memory_gb` as sold (--gpu NAME --gpu-memory
    SIZE, a --cells file's), was likely meant to be (`Catalog.meant_gpu_type`), where `name` is one slip
    (`one_typo_apart`) from its name or an alias (``H880`` of 80 GB: H800-80GB; ``H10O``: H100-80GB); None for a
    name of one's own that holds a catalogue name (``desk-4090``, ``my-h100-pcie``), or a memory size alone."""
    from solver.tables import QueryError, load_catalog
    from solver.tables.text import normalise
    shipped = load_catalog()
    meant = shipped.meant_gpu_type(name, memory_gb)
    try:
        known = shipped.gpu(meant) if meant is not None else None  # "H20-96GB or GH200-96GB": no one slip
    except QueryError:
        return None
    slipped = known is not None and any(one_typo_apart(normalise(name), normalise(known_name))
                                        for known_name in (known.name, *known.aliases))
    return meant if slipped else None


def note_near_tabled_shape(prog: str, catalog: Catalog, added: str, jobs: Sequence[str] = ()) -> None:
    """A note on stderr where the model a config.json added (`added`, its name in `catalog`; "" for none) has a
    tabled model's shape but for one term (`Catalog.near_tabled_shape`), as a fine-tuned checkpoint whose vocabulary
    was resized does: its plans are estimates, which would otherwise not say why that model's cells are not used.
    `jobs`: the cluster jobs that give it (by model_config), which the note names."""
    if not added or (near := catalog.near_tabled_shape(catalog.model(added))) is None:
        return
    print_note(f"{prog}: note: {added}{_of_jobs(jobs)} has {near}, so no table's cells stand for it and its plans are "
               "estimates (the memory a trainer needs depends on the shape); a checkpoint of that model's very "
               "shape would take its cells")


def note_uncounted_mtp_layers(prog: str, catalog: Catalog, added: str, jobs: Sequence[str] = ()) -> None:
    """A note on stderr where the model a config.json added (`added`, its name in `catalog`; "" for none) declares
    multi-token prediction layers (`Model.uncounted_mtp_layers`), which its counts leave out. `jobs`: the cluster
    jobs that give it."""
    if not added or not (layers := catalog.model(added).uncounted_mtp_layers):
        return
    print_note(f"{prog}: note: {added}{_of_jobs(jobs)} declares {counted(layers, 'multi-token prediction layer')} "
               "(num_nextn_predict_layers), not counted: transformers' class does not load their weights, so "
               "verl's FSDP trainer holds none of them (verl's Megatron trainer with model.mtp.enable would)")


def note_untyped_rope_scaling(prog: str, catalog: Catalog, added: str, jobs: Sequence[str] = ()) -> None:
    """A note on stderr where the model a config.json added (`added`, its name in `catalog`; "" for none) gives a RoPE
    scaling of no type (`Model.untyped_rope_scaling`): read as none, as transformers 5 builds it. `jobs`: the cluster
    jobs that give it."""
    if not added or (scaling := (model := catalog.model(added)).untyped_rope_scaling) is None:
        return
    print_note(f"{prog}: note: {added}{_of_jobs(jobs)}: {scaling} names no rope_type (nor type): transformers 5 builds "
               "it as no scaling (plain RoPE, warning of the keys it leaves unused), so rft-solver reads no scaling "
               f"and a native context of {model.native_context} tokens (transformers 4.57, Trinity 0.5.1's, refuses "
               "it: rope_type missing); if the checkpoint was trained with a scaling, add its rope_type")


def note_router_logits_output(prog: str, catalog: Catalog, added: str, jobs: Sequence[str] = ()) -> None:
    """A note on stderr where the model a config.json added (`added`, its name in `catalog`; "" for none) sets
    ``output_router_logits`` (`Model.router_logits_output`): what it takes through the forward, which the estimate
    does not count (`router_logits_bytes`). `jobs`: the cluster jobs that give it."""
    from solver.memory import router_logits_bytes
    if not added or not (model := catalog.model(added)).router_logits_output:
        return
    kept, one_hot = router_logits_bytes(model)
    print_note(f"{prog}: note: {added}{_of_jobs(jobs)} sets output_router_logits, not counted: transformers then keeps "
               "every expert layer's router logits, and a load-balancing loss's softmax, until the model's forward "
               f"returns (up to {kept / 1024:.1f} KiB a token; transformers 5.12's loss also one-hots all layers' "
               f"choices at once, {one_hot / 1024:.1f} KiB a token more for a moment), and verl's loss does not use "
               "that loss and frees them before the backward, whose peak the estimate is; set it false, as Qwen's "
               "configs do, to spare the forward that memory")


def note_every_expert_computed(prog: str, catalog: Catalog, added: str, jobs: Sequence[str] = ()) -> None:
    """A note on stderr where the model a config.json added (`added`, its name in `catalog`; "" for none) is one whose
    transformers class computes every expert for every token (`MoE.computes_every_expert`: Llama 4's), which makes
    its recompute and one expert layer's peak far larger than routing would, and its Offload cost a dense model's.
    `jobs`: the cluster jobs that give it."""
    from solver.memory import layer_peak_bytes
    if not added or (moe := (model := catalog.model(added)).moe) is None or not moe.computes_every_expert:
        return
    routed_moe = moe.model_copy(update={"computes_every_expert": False})
    routed = model.model_copy(update={"moe": routed_moe})
    print_note(f"{prog}: note: {added}{_of_jobs(jobs)} passes every token through all {moe.experts} of its experts in "
               f"transformers (Llama 4's Llama4TextMoe, which verl loads as it is, weights the "
               f"{moe.experts - moe.active_experts} its router did not choose by 0), so its recompute counts a "
               f"feed-forward width of {moe.routed_width}, where routing {counted(moe.active_experts, 'expert')} would "
               f"count {routed_moe.routed_width}, and one expert layer's peak "
               f"{layer_peak_bytes(model) / 2**20:.2f} MiB a token, where routing would hold "
               f"{layer_peak_bytes(routed) / 2**20:.2f}; Offload's cost counts its parameters as all active (r = 1)")


def note_vllm_refusal(prog: str, catalog: Catalog, added: str, jobs: Sequence[str] = ()) -> None:
    """A note on stderr where the model a config.json added (`added`, its name in `catalog`; "" for none) is one vLLM
    refuses to build, read for a trainer alone (`Model.vllm_refusal`): planned all the same, since no vLLM rollout
    starts here. `jobs`: the cluster jobs that give it."""
    if not added or (refusal := catalog.model(added).vllm_refusal) is None:
        return
    print_note(f"{prog}: note: {added}{_of_jobs(jobs)}: {refusal}; planned all the same, as no vLLM rollout starts "
               "here (no rollout GPUs), and the trainer's memory does not depend on it")


def note_check_without_gpu(prog: str, config_name: str, gpus: Sequence[str]) -> None:
    """A note on stderr where ``--check`` judged `config_name` with no --gpu: on which GPU types (`gpus`), since a
    Trinity config names none and its verdict on another GPU type may differ (`check_without_gpu_note`)."""
    from solver.rules import COMMAND_OPTIONS, check_without_gpu_note

    print_note(f"{prog}: note: {check_without_gpu_note(config_name, gpus, COMMAND_OPTIONS)}")


def note_config_nodes_outgrown(prog: str, config_name: str, config: TrinityConfig, answers: Sequence[Answer]) -> None:
    """A note on stderr where --gpus gives the trainer of a --from-config more GPUs than the config's cluster holds
    beside its rollout: the config's GPUs and nodes, and the most nodes a best plan takes with its rollout (and
    --total-gpus in place of --gpus, which `solve` refuses together, to plan within the config's GPUs)."""
    from solver.api import config_nodes_note
    from solver.rules import COMMAND_OPTIONS

    plans = [answer.plans[0] for answer in answers if answer.plans]
    largest = max(plans, key=lambda plan: plan.nodes or plan.trainer_nodes or 1, default=None)
    note = None if largest is None else config_nodes_note(config_name, config, largest, COMMAND_OPTIONS)
    if note is not None:
        print_note(f"{prog}: note: {note}")


def note_critic_not_trained(prog: str, config_name: str, config: TrinityConfig, critic: str | None) -> None:
    """A note on stderr where --critic counts a PPO critic (`critic`) beside a --from-config config whose algorithm
    trains none (an SFT, GRPO or DPO run's: `TrinityConfig.critic` None; DPO's is refused before): the verdict and
    the plans count one all the same, which that run never builds."""
    if config.critic is None and critic is not None and critic != "none":
        print_note(f"{prog}: note: {config_name}'s algorithm.algorithm_type trains no PPO critic (ppo, Trinity's "
                   f"default, alone trains one), but --critic {critic} counts one beside the actor all the same, "
                   "in the verdict and the plans; leave --critic out to judge the run as the config trains it")


def note_shared_budget(prog: str, catalog: Catalog, gpus: Sequence[str], budget: int) -> None:
    """A note on stderr where `budget`, the one the GPU types `gpus` got without --gpus (`default_budget_gpus`: one
    for them all), is not the one some of them would get alone: which tables it came from, and what those would
    get."""
    from solver.query import default_budget_gpus
    alone = [(gpu, default_budget_gpus(catalog, (gpu,))) for gpu in gpus]
    if all(own == budget for _, own in alone):
        return
    tabled = [gpu for gpu in gpus if budget in catalog.tabled_counts(gpu)]
    print_note(f"{prog}: note: without --gpus, the GPU types answered share one budget of {budget} GPUs, the largest "
               f"count of {' and '.join(tabled)}'s tables; alone, "
               + ", ".join(f"{gpu} would get {own}" for gpu, own in alone if own != budget)
               + ": give --gpus N for another budget")


def note_replaced_yarn_factor(prog: str, model: Model, factors: Iterable[float]) -> None:
    """A note on stderr where a config.json's own YaRN factor (`Model.config_yarn_factor`) differs from the
    `factors` the best plans write in its place: Trinity sets the factor from the length, and the written lines
    replace the config's."""
    written = sorted({factor for factor in factors if factor != model.config_yarn_factor})
    if model.config_yarn_factor is None or not written:
        return
    print_note(f"{prog}: note: {model.name}'s config.json gives YaRN factor {model.config_yarn_factor!r} "
               f"(rope_scaling); the plan uses factor {' and '.join(repr(factor) for factor in written)} in its place, "
               f"from the length (max_model_len / {model.native_context}), as Trinity sets it, and the rope_scaling "
               "it writes replaces the config's")


def _of_jobs(jobs: Sequence[str]) -> str:
    """The cluster jobs that give a model, in words after its name: `` (job a)``, `` (jobs a, b)``; "" for none."""
    return f" ({'job' if len(jobs) == 1 else 'jobs'} {named_jobs(jobs)})" if jobs else ""


def note_added_model(prog: str, catalog: Catalog, added: str, jobs: Sequence[str] = ()) -> None:
    """The notes on the model a config.json added (`note_near_tabled_shape`, `note_uncounted_mtp_layers`,
    `note_untyped_rope_scaling`, `note_router_logits_output`, `note_every_expert_computed`, `note_vllm_refusal`)."""
    note_vllm_refusal(prog, catalog, added, jobs)
    note_near_tabled_shape(prog, catalog, added, jobs)
    note_uncounted_mtp_layers(prog, catalog, added, jobs)
    note_untyped_rope_scaling(prog, catalog, added, jobs)
    note_router_logits_output(prog, catalog, added, jobs)
    note_every_expert_computed(prog, catalog, added, jobs)


def note_adapter_beside(prog: str, model_config: Path | None, lora_rank: int | None, lora_targets: str | None) -> None:
    """A note on stderr where --model-config's folder (`model_config`) holds a LoRA adapter's adapter_config.json
    beside config.json (`adapter_beside`) whose rank and target_modules --lora-rank and --lora-targets (`lora_rank`,
    `lora_targets`, as given) do not give: --model-config reads the model's shape alone, so the flags that count it."""
    if model_config is None or (adapter := _adapter_unread(model_config, lora_rank, lora_targets)) is None:
        return
    rank, targets = adapter
    flags = ["--lora-rank", str(rank), *(["--lora-targets", targets] if targets is not None else [])]
    print_note(f"{prog}: note: --model-config {model_config}: {_adapter_words(rank, targets)}, give "
               f"{shlex.join(flags)}")


def note_adapters_of_jobs(prog: str, fleet: Fleet) -> None:
    """`note_adapter_beside` for a cluster file's jobs: for each config.json that jobs give by model_config
    (`Fleet.model_config_of`) with a LoRA adapter's adapter_config.json beside it, the jobs whose lora_rank and
    lora_targets do not give its rank and target_modules, and those keys, valued as the file writes them."""
    from solver.tables.text import yaml_flow_text
    jobs = {job.name: job for job in fleet.jobs}
    unread: dict[tuple[Path, tuple[int, str | None]], list[str]] = {}
    for name, file in fleet.model_config_of:
        job = jobs[name]
        if (adapter := _adapter_unread(file, job.lora_rank, job.lora_targets)) is not None:
            unread.setdefault((file, adapter), []).append(name)
    for (file, (rank, targets)), names in unread.items():
        keys = f"lora_rank: {rank}" + (f", lora_targets: {yaml_flow_text(targets)}" if targets is not None else "")
        print_note(f"{prog}: note: model_config {file}{_of_jobs(names)}: {_adapter_words(rank, targets)}, give "
                   f"{'each job' if len(names) > 1 else 'the job'} {keys}")


def _adapter_unread(model_config: Path, lora_rank: int | None,
                    lora_targets: str | None) -> tuple[int, str | None] | None:
    """The rank and target_modules of the LoRA adapter beside `model_config`'s config.json (`adapter_beside`) where
    the LoRA rank and targets given (`lora_rank`, `lora_targets`, as given: None or 0 for none) do not give them;
    else None."""
    from solver.tables import adapter_beside
    from solver.tables.peft_match import ALL_LINEAR
    adapter = adapter_beside(model_config)
    if adapter is None:
        return None
    rank, targets = adapter
    if lora_rank == rank and (targets is None or (lora_targets or ALL_LINEAR) == targets):
        return None
    return adapter


def _adapter_words(rank: int, targets: str | None) -> str:
    """Why the LoRA adapter of `rank` and `targets` beside a model's config.json is not counted, in words, up to
    what counts it: ``the LoRA adapter beside ... is not read, only the model's shape: to count it``."""
    return (f"the LoRA adapter beside its config.json (adapter_config.json: r {rank}"
            f"{f', target_modules {targets}' if targets else ''}) is not read, only the model's shape: to count it")


def note_added_models_of_jobs(prog: str, catalog: Catalog, fleet: Fleet) -> None:
    """`note_added_model` for each model that a cluster file's jobs give by model_config, with those jobs."""
    for model in fleet.models:
        note_added_model(prog, catalog, model.name, [job.name for job in fleet.jobs if job.model == model.name])


def note_cells_elsewhere(prog: str, cells: Sequence[tuple[Path, GpuType]], catalog: Catalog,
                         gpu: str | Sequence[str] | None = None) -> None:
    """Notes on stderr for --cells files (each with the GPU type it gave, as `catalog_with` read it) that may not be
    what was meant: one for a GPU type the catalogue lacks whose name is one slip from one it has
    (`_gpu_name_slipped`, as for --gpu NAME --gpu-memory SIZE: a typo makes a GPU type of its own, silently; not where
    --gpu names it), and one for each GPU type --gpu (`gpu`: a name or names, of `catalog`) asks for that the file's
    tables do not speak for (neither it nor one with its driver-reported memory): with less memory they are not used;
    with more, only their cells that say a setting ran out of memory are (`larger_gpu_types`); one for a GPU type of
    its own given by its memory as sold (`memory_gb` alone), as `note_memory_as_sold`; one for a catalogue GPU type
    whose NVLink the file's name for it denies (`pcie_board_words`: ``gpu: H800-PCIe-80GB``); one for rows off the
    1024-token grid (`note_rows_off_grid`); and one for cells outside the order they are read in
    (`note_cells_off_order`)."""
    named = dict.fromkeys(catalog.gpu(name).name for name in given_gpus(gpu))
    asked = [catalog.with_same_memory(name) for name in named]
    for path, gpu_type in cells:
        meant = _gpu_name_slipped(gpu_type.name, gpu_type.memory_gb)
        if meant is not None and all(each.gpu_types[0].name != gpu_type.name for each in asked):
            print_note(
                f"{prog}: note: {path}: {gpu_type.name} is not a GPU type of the catalogue, so its cells make one of "
                f"their own (did you mean {meant}?)")
        elif gpu_type.memory_mib is None:  # a GPU type of its own, by memory as sold (as --gpu-memory 96 is)
            print_note(
                f"{prog}: note: {path}: {gpu_type.name}'s memory_gb {gpu_type.memory_gb} is taken as "
                f"{gpu_type.memory_gb} GiB; a card reports less (an H100 80GB: 81559 MiB, 79.6 GiB), so add its "
                f"memory_mib ({'amd' if gpu_type.rocm else 'nvidia'}-smi's total) where you have it")
        if words := pcie_board_words(catalog, gpu_type.written_name, (
                f"gpu: {{name}}, memory_gb: {gpu_type.memory_gb}, memory_mib: {{mib}}, interconnect: pcie, "
                "interconnect_source: where it is stated ({mib}: the SXM board's total; give nvidia-smi's)")):
            print_note(f"{prog}: note: {path}: gpu {words}")
        note_rows_off_grid(prog, path, gpu_type)
        note_cells_off_order(prog, path, gpu_type, catalog)
        for each in asked:
            if any(gpu_type.name == speaking.name for speaking in each.gpu_types):
                continue
            own = each.gpu_types[0]
            used = ("only those that say a setting ran out of memory count here (it does with less memory too)"
                    if gpu_type.memory_gib >= own.memory_gib else "they are not used here")
            print_note(
                f"{prog}: note: {path}: its cells are for {gpu_type.name} ({gpu_type.memory_gib:.1f} GiB), not for "
                f"{own.name} ({own.memory_gib:.1f} GiB) or a GPU type of its driver-reported memory: {used}")


def note_rows_off_grid(prog: str, path: Path, gpu_type: GpuType) -> None:
    """A note on stderr where a --cells file's rows (`gpu_type`'s tables, read from `path`) give a length that is not a
    multiple of `GRID` (the source's rows all are, and ``--len 64k`` asks for one): a row speaks for its length and the
    shorter ones down to the row before, so a row at 65000 says nothing of 65536 (64k), which a typo there would hide.
    Named: the first such row, and how many more."""
    from solver.memory import GRID
    off = [(table.gpus, row.max_model_len) for table in gpu_type.tables for row in table.rows
           if row.max_model_len % GRID]
    if off:
        gpus, length = off[0]
        above = (length // GRID + 1) * GRID
        more = f" (and {counted(len(off) - 1, 'more row')})" if len(off) > 1 else ""
        print_note(
            f"{prog}: note: {path}: table gpus={gpus}, row max_model_len={length}{more} is not a multiple of {GRID} "
            f"tokens: a row speaks for its length and the shorter ones down to the row before, so not for {above} "
            f"({above // GRID}k) above it; check the row for a typo")


def note_cells_off_order(prog: str, path: Path, gpu_type: GpuType, catalog: Catalog) -> None:
    """A note on stderr where a --cells file's cells (`gpu_type`'s tables, read from `path`, their models of `catalog`)
    name a setting outside the order cells are read in (`tried_settings`): Offload without Env, or an SP degree whose
    groups span nodes of `NODE_GPUS`. Such a cell says that it trained, and nothing of the settings before it (a
    user who measured SP=16 across two nodes of 8 had tried Env + SP=8 first); and an SP group across nodes vouches
    for no plan on nodes of 8, rft-solver's default. Named: the first such cell, and how many more."""
    from solver.rules import tried_settings
    from solver.tables.bounds import NODE_GPUS
    off = [(table.gpus, row.max_model_len, name, setting) for table in gpu_type.tables for row in table.rows
           for name, setting in row.cells
           if setting is not None and setting not in tried_settings(catalog.model(name), table.gpus)]
    if off:
        gpus, length, name, setting = off[0]
        nodes = "a pool's gpus_per_node is" if prog == "solve cluster" else "--node-gpus gives nodes of"
        why = (f"SP={setting.sp} puts each SP group across nodes of {NODE_GPUS} GPUs, and rft-solver plans it only "
               f"where {nodes} {setting.sp} or more"
               if gpus > NODE_GPUS and NODE_GPUS % setting.sp else "the order tries Offload with Env only")
        more = f" (and {counted(len(off) - 1, 'more cell')})" if len(off) > 1 else ""
        print_note(
            f"{prog}: note: {path}: table gpus={gpus}, row max_model_len={length}, {name}: '{setting.label}'{more} is "
            f"outside the order cells are read in ({why}): it counts as a setting that trained, not as saying that "
            "the settings before it ran out of memory")


def note_short_length(args: argparse.Namespace, prog: str) -> None:
    """A note on stderr where --len, or a --token-budget of tokens, is a few hundred tokens at most: ``--len 32`` is 32
    tokens, likely meant as 32k."""
    length = getattr(args, "max_model_len", None)
    if length is not None:
        _note_if_short(prog, "--len", length, lambda thousands: f"--len {thousands}k")
    budget = getattr(args, "token_budget", None)
    if isinstance(budget, int):  # not a mode (auto, default)
        _note_if_short(prog, "--token-budget", budget, lambda thousands: f"--token-budget {thousands}k")


def note_thousands_meant(args: argparse.Namespace, prog: str, argv: Sequence[str]) -> None:
    """A note on stderr where --len is N thousands of 1024, written so in `argv` (not in digits), and N thousand is a
    power of two of tokens, cut: ``--len 131k`` is 134144 tokens, likely meant as 131072, which is 128k."""
    length = getattr(args, "max_model_len", None)
    values = (word.partition("=")[2] if word.startswith("-") else word for word in argv)
    in_thousands = any(value.strip().lower().endswith("k") and thousands_of_tokens(value) == length for value in values)
    if length is not None and in_thousands:
        from solver.rules import COMMAND_OPTIONS  # pydantic's: not for a usage error

        _print_note(prog, cut_thousands_note(f"--len {length // 1024}k", length, COMMAND_OPTIONS.thousands_written))


def note_thousands_of_job_lengths(fleet: Fleet, prog: str) -> None:
    """A note on stderr for each job of a cluster file whose max_model_len (or its ``at_least``) is N thousands of
    1024 where N thousand is a power of two of tokens, cut, as `note_thousands_meant` for --len: ``131k`` is 134144
    tokens, likely meant as 131072, which is 128k. The fleet keeps no length as written: one given in digits
    (``134144``) is noted too, in words that say no more than its tokens."""
    for job in fleet.jobs:
        at_least = not isinstance(job.max_model_len, int)
        length = job.asked_max_model_len
        meant = power_of_two_cut(length)
        if meant is not None:
            field = "max_model_len at_least" if at_least else "max_model_len"
            print_note(f"{prog}: note: job {job.name}: {field} is {length} tokens, {length // 1024}k (k is 1024); "
                       f"for {meant} tokens write {'at_least' if at_least else 'max_model_len'}: {meant // 1024}k")


def note_short_job_lengths(fleet: Fleet, prog: str) -> None:
    """A note on stderr for each job of a cluster file whose max_model_len (or its ``at_least``) is a few hundred
    tokens at most, as `note_short_length` for --len."""
    for job in fleet.jobs:
        if isinstance(job.max_model_len, int):
            _note_if_short(prog, f"job {job.name}: max_model_len", job.max_model_len,
                           lambda thousands: f"max_model_len: {thousands}k")
        else:
            _note_if_short(prog, f"job {job.name}: max_model_len at_least", job.max_model_len.at_least,
                           lambda thousands: f"at_least: {thousands}k")


def _note_if_short(prog: str, given: str, length: int, written: Callable[[int], str]) -> None:
    """Where `length` tokens (`given`, in words) may have been meant as thousands (`short_length_note`), a note on
    stderr that says so, `written` saying how to write that many thousands (``--len 64k``)."""
    _print_note(prog, short_length_note(given, length, written))


def note_small_host_ram(args: argparse.Namespace, prog: str, argv: Sequence[str]) -> None:
    """A note on stderr where --host-ram is below `SMALL_HOST_RAM_GIB`: ``--host-ram 256MB`` is 0.2 GiB, likely meant
    as 256 GB (the figure as written in `argv`, a unit up)."""
    host_ram = getattr(args, "host_ram", None)
    if host_ram is not None and host_ram < SMALL_HOST_RAM_GIB:
        from solver.rules import COMMAND_OPTIONS  # pydantic's: not for a usage error

        given = [after for before, after in pairwise(argv) if before == "--host-ram"]
        given += [word.removeprefix("--host-ram=") for word in argv if word.startswith("--host-ram=")]
        _print_note(prog, small_host_ram_note("--host-ram", host_ram, COMMAND_OPTIONS.host_ram_written,
                                              HOST_RAM_UNITS, given[-1] if given else ""))


def note_small_pool_host_ram(fleet: Fleet, prog: str) -> None:
    """A note on stderr for each pool of a cluster file whose host_ram_gb is below `SMALL_HOST_RAM_GIB`, as
    `note_small_host_ram` for --host-ram."""
    for note in fleet.small_host_ram_notes:
        _print_note(prog, note)


def _print_note(prog: str, note: str | None) -> None:
    """`note` on stderr after `prog`'s name, where there is one."""
    if note is not None:
        print_note(f"{prog}: note: {note}")


def _without_memory(name: str) -> str:
    """A GPU type's name without the memory at its end (A100-40GB and A100-80GB: A100)."""
    return re.sub(r"-\d+GB$", "", name)


def gpu_variant_words(catalog: Catalog, written: str, tables: bool = False, pool: str | None = None) -> str | None:
    """Where a GPU type's name as given (`written`) names no memory and the catalogue has that GPU with other memory
    too (``A100``: the A100-80GB, whose tables the source measured, not the A100-40GB), in words: ``'A100' is taken
    as A100-80GB; nodes of A100-40GB need that name (the memory decides the plans)``, or for the tables shown
    (`tables`), that they are the one's and what answers for the other, which has none, or where the name of the
    `pool` it is given for says the other's memory (``a100-40``), that it does, and what to write; None otherwise.
    40 GB A100s planned as 80 GB ones would run out of memory."""
    taken = catalog.gpu(written)
    others = [other for other in catalog.gpu_types
              if other.name != taken.name and _without_memory(other.name) == _without_memory(taken.name)]
    if not others or f"{taken.memory_gb:g}" in written:
        return None
    said = [other for other in others if pool is not None and re.search(rf"(?<!\d){other.memory_gb:g}(?!\d)", pool)]
    if said:
        return (f"{written!r} is taken as {taken.name}, though the pool's name says {said[0].memory_gb:g}: for nodes "
                f"of {said[0].name} write gpu: {said[0].name} (the memory decides the plans)")
    names = [other.name for other in others]
    if tables:  # `solve tables --gpu A100-40GB` is refused: no tables of its own
        return (f"{written!r} is taken as {taken.name}, whose tables these are; nodes of {' or '.join(names)} have "
                f"none: solve map --gpu {names[0]} maps what the planner answers for them")
    return (f"{written!r} is taken as {taken.name}; nodes of {' or '.join(names)} need that name (the memory decides "
            "the plans)")


def pcie_board_words(catalog: Catalog, written: str, own_type: str) -> str | None:
    """Where a GPU name as given (`written`) says PCIe (`says_pcie`: ``h100-pcie``, nvidia-smi's ``NVIDIA H100 PCIe``)
    or an NVL board (`says_nvl`: ``h200 nvl``, ``h200nvl``, ``NVIDIA H200 NVL``: PCIe cards that NVLink bridges join
    in groups of 2 or 4, with PCIe between the groups, as NVIDIA's H200 NVL product brief gives them) and is taken as
    a catalogue GPU type whose GPUs reach one another over NVLink (the H100-80GB, its SXM boards'), in words, ending
    with how to give such cards as a GPU type of your own (`own_type`: a format of its ``name`` and ``mib``, the SXM
    board's, as the command or the file takes them); None otherwise. Weighed as over NVLink, such cards' SP plans
    would cost less than they do, with no caution."""
    taken = catalog.gpu(written)
    nvl = says_nvl(written) and not says_nvl(taken.name)
    if not (nvl or says_pcie(written) and not says_pcie(taken.name)) or taken.interconnect != "nvlink":
        return None
    own = own_type.format(name=f"my-{_without_memory(taken.name).lower()}-{'nvl' if nvl else 'pcie'}",
                          mib=taken.memory_mib)
    cards = ("NVL cards are PCIe cards that NVLink bridges join in groups (the H200 NVL's: of 2 or 4), with PCIe "
             "between the groups, so an SP group past a bridge's runs over PCIe: for that, give them as" if nvl else
             "PCIe cards, which NVLink bridges join in pairs at most, are")
    return (f"{written!r} is taken as {taken.name}, whose GPUs reach one another over NVLink (its SXM boards'), as "
            f"SP's cost weighs them; {cards} a GPU type of your own, which weighs SP over PCIe and cautions it: {own}")


def note_gpu_variant(prog: str, catalog: Catalog, gpu: str | Sequence[str] | None, tables: bool = False) -> None:
    """A note on stderr for each name of --gpu (`gpu`: a name or names, of `catalog`) that names a GPU the catalogue
    has with other memory too (`gpu_variant_words`; `tables`: for the tables shown), or its PCIe cards
    (`pcie_board_words`), as a cluster pool's GPU type gets (`note_gpu_variants_of_pools`)."""
    own_type = ("--gpu {name} --gpu-memory {mib}MiB --gpu-interconnect pcie ({mib}: the SXM board's total; give "
                "nvidia-smi's)")
    for name in dict.fromkeys(given_gpus(gpu)):
        for words in (gpu_variant_words(catalog, name, tables), pcie_board_words(catalog, name, own_type)):
            if words:
                print_note(f"{prog}: note: --gpu {words}")


def note_gpu_variants_of_pools(prog: str, catalog: Catalog, fleet: Fleet, written: dict[str, str]) -> None:
    """A note on stderr for each pool whose GPU type, as the file wrote it (`written`, by pool name), names a GPU the
    catalogue has with other memory too (`gpu_variant_words`, which names a pool whose name says the other's memory),
    or its PCIe cards (`pcie_board_words`), unless the pool gives its memory."""
    own_type = ("gpu: {name}, gpu_memory_mib: {mib}, gpu_interconnect: pcie ({mib}: the SXM board's total; give "
                "nvidia-smi's)")
    for pool in fleet.pools:
        if pool.gpu_memory_gb is not None or pool.gpu_memory_mib is not None:
            continue
        for words in (gpu_variant_words(catalog, written[pool.name], pool=pool.name),
                      pcie_board_words(catalog, written[pool.name], own_type)):
            if words:
                print_note(f"{prog}: note: pool {pool.name}: gpu {words}")
