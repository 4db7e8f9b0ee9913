"""``solve map``: maps of what fits over GPU budgets."""

from __future__ import annotations

import argparse
import io
import sys

from solver.cli.argtypes import (
    comma_names,
    gpu_names,
    output_path,
    path_argument,
    positive_seconds,
    whole_number,
    whole_numbers,
)
from solver.cli.atomic import write_atomically
from solver.cli.catalogs import catalog_with, catalogue_model, check_model_flags
from solver.cli.notes import note_adapter_beside, note_added_model, note_cells_elsewhere, note_gpu_variant
from solver.cli.options import (
    GPU_NAMES,
    MODEL_CONFIG_HELP,
    add_cells_option,
    add_counted_release_option,
    add_critic_option,
    add_dpo_option,
    add_estimate_options,
    add_host_ram_option,
    add_lora_option,
    add_lora_targets_option,
    add_memory_model_options,
    add_node_gpus_option,
    add_own_gpu_options,
    add_reference_option,
    add_token_budget_option,
    add_train_batch_option,
    add_weights_option,
    add_workers_option,
    memory_model_option,
    model_config_option,
    weights_option,
)
from solver.cli.output import escaped_line, new_console, on_terminal, piped_columns, print_note
from solver.cli.parser import Parser
from solver.cli.status import STATUSES_AFTER_BAD_INPUT
from solver.tables import (
    MAX_ESTIMATED_GPUS,
    counted_critic,
    path_text,
)

TRAINER_BUDGETS = ("the map's budgets count trainer GPUs alone: give --gpus-up-to (or --budgets) the trainer's "
                   "share, the total less the rollout's, or ask solve --total-gpus T --rollout-gpus R")
"""Where ``solve map`` sends a user who gives it solve's rollout options: its budgets are the trainer's alone."""
MAP_WITHOUT_CONFIG = ("a map plans every budget (and with --by len every length) afresh, not a config's cluster and "
                      "length: give what its run trains as options (--model or --model-config, --lora-rank, "
                      "--lora-targets, --lora-exclude, --dpo, --critic, --no-reference, --trinity-version, "
                      "--train-batch-size), or ask solve --from-config FILE for the config's own plan")
"""Why ``solve map`` takes no Trinity config (``--from-config``, solve's), and what to give it instead."""


def build_map_parser() -> Parser:
    """The argument parser for ``solve map``."""
    parser = Parser(prog="solve map", description="Maps of what fits: the longest context per model and GPU "
                    "budget, or (--by len) the cheapest setting per length and budget.",
                    instead={**dict.fromkeys(("--rollout-gpus", "--total-gpus"), TRAINER_BUDGETS),
                             "--from-config": MAP_WITHOUT_CONFIG,
                             "--len": ("a map finds the longest context of each model per GPU budget, or with --by len "
                                       "the cheapest setting of one model per length and budget")},
                    epilog="Exit status: 0 the maps are printed, 1 a cell's solve ran out of time (nothing is "
                    f"printed), 2 bad input, {STATUSES_AFTER_BAD_INPUT}.")
    parser.add_argument("--gpu", metavar="G", type=gpu_names,
                        help=f"GPU type ({GPU_NAMES}), or several, a100,h100: a map for each (default: each with "
                        "tables)")
    parser.add_argument("--model", metavar="M", type=comma_names("a model", "32B,8B"),
                        help="only these models, comma-separated (32B,8B), or with --by len the one mapped (needed "
                        "there); default: those the GPU type's tables document, else those any tables document")
    budgets = parser.add_mutually_exclusive_group()
    budgets.add_argument("--gpus-up-to", metavar="N", type=whole_number(1, MAX_ESTIMATED_GPUS),
                         help="GPU budgets 1 to N (default 8); budgets with the same plans may share a column "
                         "(--json has every budget)")
    budgets.add_argument("--budgets", metavar="N,N...", type=whole_numbers(1, MAX_ESTIMATED_GPUS, "8,16,32"),
                         help="only these GPU budgets, comma-separated (1,2,4,8,16), in place of 1 to --gpus-up-to "
                         "N")
    parser.add_argument("--by", choices=["model", "len"], default="model", help="rows: models (default) or lengths")
    parser.add_argument("--svg", metavar="FILE", type=output_path, help="also save the map as SVG")
    parser.add_argument("--json", action="store_true",
                        help="print the maps as JSON: per GPU type, each row's best plan at each budget (null: none)")
    parser.add_argument("--model-config", metavar="PATH", type=path_argument("file or folder to read"),
                        help=f"{MODEL_CONFIG_HELP}, for a model the catalogue lacks (as --model)")
    parser.add_argument("--time-limit", metavar="SECONDS", type=positive_seconds, default=10.0,
                        help="seconds the solver may take per cell (default 10, as solve's per answer)")
    add_workers_option(parser)
    add_weights_option(parser)
    add_estimate_options(parser)
    add_token_budget_option(parser, caps=True)
    add_train_batch_option(parser)
    add_host_ram_option(parser)
    add_lora_option(parser, "full fine-tuning")
    add_lora_targets_option(parser, "all-linear")
    add_reference_option(parser)
    add_critic_option(parser, "none")
    add_dpo_option(parser, "not DPO")
    add_counted_release_option(parser, planned=True)
    add_node_gpus_option(parser)
    parser.set_defaults(node_gpus=None)  # 8 where not given, as solve's; given, the Offload caution counts them all
    add_own_gpu_options(parser, listed=True)
    add_cells_option(parser)
    add_memory_model_options(parser)
    return parser


def run_map(args: argparse.Namespace) -> int:
    """``solve map``: heatmaps of the planner's answers over GPU budgets."""
    from rich.console import Console, Group

    from solver.api import map_plans
    from solver.render import PLAIN_TEXT, UNBOUNDED_WIDTH, fitting_budgets, map_json, map_views, maps_width, piped_maps
    from solver.rules import COMMAND_OPTIONS
    check_model_flags(args, "--model M or --model-config PATH", given=True)  # one at most: a map may have none
    catalog, added, cells = catalog_with(model_config_option(args.model_config),
                                         args.gpu, args.gpu_memory, args.cells or (),
                                         interconnect=args.gpu_interconnect, count_option="--gpus-up-to",
                                         every="leave --gpu out for a map of each GPU type with tables")
    memory, weights = memory_model_option(args.memory_model, "solve map"), weights_option(args.weights)
    every = "" if args.by == "len" else "leave --model out to map each model the GPU type's tables document"
    asked = list(dict.fromkeys(catalogue_model(catalog, name, every=every).name for name in args.model)) \
        if args.model is not None else [added] if added else None
    gpu_maps = map_plans(asked, gpu=args.gpu, by=args.by, gpus_up_to=args.gpus_up_to, budgets=args.budgets,
                         weights=weights, estimate=args.estimate_mode, margin=args.margin,
                         token_budget=args.token_budget or "default", host_ram_gb=args.host_ram,
                         node_gpus=args.node_gpus, train_batch_size=args.train_batch_size,
                         memory=memory, time_limit_s=args.time_limit, workers=args.workers, catalog=catalog,
                         option_names=COMMAND_OPTIONS, lora_rank=args.lora_rank or 0, reference_model=args.reference,
                         critic=counted_critic(args.critic), trinity_version=args.trinity_release, dpo=args.dpo,
                         lora_targets=args.lora_targets, lora_exclude_modules=args.lora_exclude)
    if args.weights:  # the maps echo the file as given, as map_plans does a path (read once, above)
        gpu_maps = tuple(gpu_map.model_copy(update={"weights": path_text(args.weights)}) for gpu_map in gpu_maps)
    screen = new_console()
    # A map wider than the terminal (or than COLUMNS, on a pipe) joins adjacent budgets whose cells are all the
    # same into one column; past one node it shows fewer of its doubling budgets. Every column stays readable: a
    # file or pipe gets the tables whole (without COLUMNS, a map within a node at its full width, as before, one past
    # a node within PAST_NODE_WIDTH), and a terminal still too narrow a note (rich would squeeze the columns empty),
    # and cells that fold before their GPU count.
    width = screen.width if on_terminal(screen) else piped_columns()
    shown = map_views(gpu_maps, width=width)
    needed = maps_width(shown)
    if not on_terminal(screen):
        screen = new_console(max(needed, screen.width) if width is None else width)
    elif needed > screen.width and not args.json:
        # the budgets named are those whose columns fit the terminal (none for budgets the caller listed)
        fitting = None if args.budgets else fitting_budgets(gpu_maps, screen.width)
        fewer = "" if fitting is None else f" map fewer budgets (--budgets {','.join(map(str, fitting))}),"
        print_note(f"solve map: note: the maps need {needed} columns and the terminal has {screen.width}: widen it, "
                   f"pipe the output (| less -S),{fewer} or save it with --svg FILE; --json has every cell")
        shown = map_views(gpu_maps, narrow=True, width=width)
    if args.svg:  # written first: a file that cannot be written is bad input, with nothing printed
        whole = map_views(gpu_maps, width=UNBOUNDED_WIDTH)  # whatever the width: every column a map may show
        recorder = Console(record=True, width=max(maps_width(whole), 80), file=io.StringIO(), **PLAIN_TEXT)
        for view in whole:
            recorder.print(view)
        write_atomically(args.svg, recorder.export_svg(title="rft-solver map"), "--svg")
    if args.json:
        sys.stdout.write(map_json(gpu_maps) + "\n")
    else:
        if on_terminal(screen):
            screen.print(Group(*shown))
        else:  # a line wider than the width (a table's) is whole
            screen.print(piped_maps(shown), crop=False)
        if args.svg:  # as solve's --out and --write
            screen.print(escaped_line(f"wrote {args.svg}"))
    note_cells_elsewhere("solve map", cells, catalog, args.gpu)
    note_gpu_variant("solve map", catalog, args.gpu)
    note_added_model("solve map", catalog, added)
    note_adapter_beside("solve map", args.model_config, args.lora_rank, args.lora_targets)
    return 0
