"""``solve memory``: one trainer GPU's predicted peak memory."""

from __future__ import annotations

import argparse
import shlex
import sys

from solver.cli.argtypes import gpu_name, model_name, path_argument, token_count, tokens_per_gpu, whole_number
from solver.cli.catalogs import catalog_with, catalogue_model, check_model_flags
from solver.cli.notes import note_adapter_beside, note_added_model, note_cells_elsewhere, note_gpu_variant
from solver.cli.options import (
    GPU_NAMES,
    MODEL_CONFIG_HELP,
    MODEL_NAMES,
    SP_RULES_HELP,
    add_cells_option,
    add_counted_release_option,
    add_critic_option,
    add_dpo_option,
    add_host_ram_option,
    add_lora_option,
    add_lora_targets_option,
    add_memory_model_options,
    add_node_gpus_option,
    add_own_gpu_options,
    add_reference_option,
    memory_model_option,
    model_config_option,
)
from solver.cli.output import new_console
from solver.cli.parser import OnceFlag, Parser
from solver.cli.status import NO_PLAN, STATUSES_AFTER_BAD_INPUT
from solver.tables import MAX_GPUS, counted_critic, host_ram_argument, path_text, shown_number

CONFIG_VERDICT = ("for a Trinity config's own settings, solve --from-config FILE --gpu G gives the planner's verdict "
                  "on them (whether they train, and why) and its best plan")
"""Where ``solve memory`` sends a user with a Trinity config: solve's verdict on it (its help, and the error for
--from-config, which is solve's)."""


def build_memory_parser() -> Parser:
    """The argument parser for ``solve memory``."""
    parser = Parser(prog="solve memory",
                    description=("Predicted peak memory of one trainer GPU, term by term (each term: docs/memory.md in "
                                 "rft-solver's source, The model), and whether it fits, for "
                                 f"the setting its options give; {CONFIG_VERDICT}."),
                    instead={"--from-config": CONFIG_VERDICT},
                    epilog="Exit status: 0 the setting trains, 1 it does not (a table says it ran out of memory, "
                    "the prediction exceeds the GPU's memory where no table says it trains, or the host memory it "
                    f"needs exceeds --host-ram), 2 bad input, {STATUSES_AFTER_BAD_INPUT}.")
    parser.add_argument("--model", metavar="M", type=model_name, help=f"model: {MODEL_NAMES} (or --model-config)")
    parser.add_argument("--model-config", metavar="PATH", type=path_argument("file or folder to read"),
                        help=f"{MODEL_CONFIG_HELP}, for a model the catalogue lacks (in place of --model)")
    add_cells_option(parser)
    parser.add_argument("--gpu", metavar="G", type=gpu_name, required=True,
                        help=f"GPU type ({GPU_NAMES}); one: to compare several, solve --gpu a100,h100")
    parser.add_argument("--gpus", metavar="N",
                        type=whole_number(1, MAX_GPUS, "one count: run solve memory once for each of {}"),
                        required=True, help="trainer GPUs")
    parser.add_argument("--len", metavar="L", type=token_count, required=True, dest="max_model_len",
                        help="max_model_len in tokens (32768 or 32k)")
    parser.add_argument("--sp", metavar="S", type=whole_number(1, MAX_GPUS), default=1,
                        help=f"Ulysses SP degree (default 1): {SP_RULES_HELP}")
    parser.add_argument("--token-budget", metavar="T", type=tokens_per_gpu,
                        help="trainer.max_token_len_per_gpu of your own (default: Trinity's, ceil(2 x L / S), which "
                        "the tables measured; at least ceil(L / S)); the tables speak where their tokens per GPU decide")
    parser.add_argument("--env", action=OnceFlag, default=False,
                        help="with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, or without (the default)")
    parser.add_argument("--offload", action=OnceFlag, default=False,
                        help="with FSDP2 CPU offload, or without (the default)")
    add_lora_option(parser, "full fine-tuning")
    add_lora_targets_option(parser, "all-linear")
    add_reference_option(parser)
    add_critic_option(parser, "none, the tables' runs")
    add_dpo_option(parser, "not DPO")
    add_node_gpus_option(parser)
    parser.set_defaults(node_gpus=None)  # 8 where not given; given, the Offload caution counts a node's GPUs
    add_counted_release_option(parser)
    add_host_ram_option(parser, "it says whether what the setting holds there fits")
    add_own_gpu_options(parser, planned=False)
    add_memory_model_options(parser)
    parser.add_argument("--json", action="store_true", help="print the breakdown as JSON")
    return parser


def run_memory(args: argparse.Namespace) -> int:
    """``solve memory``: one GPU's predicted peak memory and the verdict; exit 1 when it does not fit."""
    from solver.api import memory_answer
    from solver.render import memory_json, memory_label, memory_view
    from solver.rules import COMMAND_OPTIONS
    from solver.tables import load_memory_model

    check_model_flags(args, "--model M (e.g. 4B) or --model-config PATH")
    catalog, added, cells = catalog_with(model_config_option(args.model_config),
                                         args.gpu, args.gpu_memory, args.cells or (),
                                         interconnect=args.gpu_interconnect)
    model = catalogue_model(catalog, args.model or added)
    gpu = catalog.gpu(args.gpu)
    memory_model = memory_model_option(args.memory_model, "solve memory") or load_memory_model()
    result = memory_answer(model.name, gpu.name, args.gpus, args.max_model_len, sp=args.sp, env=args.env,
                           offload=args.offload, margin=args.margin, node_gpus=args.node_gpus, catalog=catalog,
                           memory=memory_model, max_token_len_per_gpu=args.token_budget, host_ram_gb=args.host_ram,
                           option_names=COMMAND_OPTIONS, lora_rank=args.lora_rank or 0,
                           reference_model=args.reference, critic=counted_critic(args.critic), dpo=args.dpo,
                           trinity_version=args.trinity_release, lora_targets=args.lora_targets,
                           lora_exclude_modules=args.lora_exclude)
    if args.memory_model:  # the answer echoes the file as given, as memory_answer does a path (read once, above)
        result = result.model_copy(update={"memory_model": path_text(args.memory_model)})
    if args.json:
        sys.stdout.write(memory_json(result) + "\n")
    else:
        label = memory_label(result, model.moe is not None)
        new_console().print(memory_view(result, label, gpu.name, model.name, args.gpus, args.offload,
                                        planner_command(args), own_budget=args.token_budget is not None,
                                        catalog=catalog),
                            crop=False)
    note_cells_elsewhere("solve memory", cells, catalog, args.gpu)
    note_gpu_variant("solve memory", catalog, args.gpu)
    note_added_model("solve memory", catalog, added)
    note_adapter_beside("solve memory", args.model_config, args.lora_rank, args.lora_targets)
    return 0 if result.trains else NO_PLAN


def planner_command(args: argparse.Namespace) -> str:
    """The ``solve`` command that looks for a setting that trains where the one `args` gives ``solve memory`` does
    not: the same model, GPU (with its memory and interconnect, of your own), GPUs (as a budget), length and memory
    options (and --lora-rank, --lora-targets, --lora-exclude, --reference or --no-reference, --critic, --dpo and
    --trinity-version as given), without --sp, --env, --offload and --token-budget, which the planner tries for
    itself."""
    gigabytes, mebibytes = args.gpu_memory or (None, None)
    words = [
        *(["--model", args.model] if args.model else ["--model-config", str(args.model_config)]),
        *(word for path in args.cells or () for word in ("--cells", str(path))),
        "--gpu", args.gpu, "--gpus", str(args.gpus), "--len", str(args.max_model_len),
        *(["--gpu-memory", str(gigabytes) if gigabytes is not None else f"{mebibytes}MiB"] if args.gpu_memory else []),
        *(["--gpu-interconnect", args.gpu_interconnect] if args.gpu_interconnect else []),
        *(["--node-gpus", str(args.node_gpus)] if args.node_gpus is not None else []),
        *(["--host-ram", host_ram_argument(args.host_ram)] if args.host_ram is not None else []),
        *(["--margin", shown_number(args.margin)] if args.margin is not None else []),
        *(["--memory-model", str(args.memory_model)] if args.memory_model else []),
        *(["--lora-rank", str(args.lora_rank)] if args.lora_rank else []),
        *(["--lora-targets", args.lora_targets] if args.lora_targets is not None else []),
        *(["--lora-exclude", args.lora_exclude] if args.lora_exclude is not None else []),
        *([] if args.reference is None else ["--reference" if args.reference else "--no-reference"]),
        *(["--critic", args.critic] if counted_critic(args.critic) else []),
        *(["--dpo"] if args.dpo else []),
        *(["--trinity-version", args.trinity_release] if args.trinity_release is not None else []),
    ]
    return shlex.join(["solve", *words])
