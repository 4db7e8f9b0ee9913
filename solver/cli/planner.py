"""``solve [options]``: the planner's command line."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from functools import partial
from math import ceil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from solver import __version__
from solver.cli.argtypes import (
    gpu_names,
    model_name,
    output_path,
    path_argument,
    positive_seconds,
    token_count,
    whole_number,
)
from solver.cli.catalogs import CommandCatalog, catalog_with, catalogue_model, check_model_flags
from solver.cli.notes import (
    note_adapter_beside,
    note_added_model,
    note_cells_elsewhere,
    note_check_without_gpu,
    note_config_nodes_outgrown,
    note_critic_not_trained,
    note_gpu_variant,
    note_replaced_yarn_factor,
    note_shared_budget,
)
from solver.cli.options import (
    GPU_NAMES,
    MODEL_CONFIG_HELP,
    MODEL_NAMES,
    REFERENCE_DEFAULT,
    SP_RULES_HELP,
    add_cells_option,
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
    add_trinity_version_option,
    add_weights_option,
    add_workers_option,
    memory_model_option,
    model_config_option,
    option_file,
    weights_option,
)
from solver.cli.output import escaped_line, print_note, print_view
from solver.cli.parser import KeptLinesFormatter, OnceFlag, Parser
from solver.cli.paths import OUTPUT_FLAGS, file_name_shown, refuse_overwriting
from solver.cli.status import NO_PLAN, STATUSES_AFTER_BAD_INPUT
from solver.cli.trinity_options import (
    check_planner_config,
    hand_applied_keys,
    local_config_json,
    read_config_file,
    read_config_text,
    with_apply,
    write_refused,
    write_trinity,
)
from solver.tables import MAX_ESTIMATED_GPUS, MAX_GPUS, MAX_TOP, NODE_GPUS, QueryError, counted, counted_critic

if TYPE_CHECKING:
    from solver.cli.trinity_options import Fragment
    from solver.query import Objective, Query, TrinityConfig
    from solver.render.summary import ConfigApplied
    from solver.results import Answer
    from solver.tables import Catalog, GpuType, Model


MINIMIZED: dict[str | None, Objective] = {"gpus": "min_gpus", "gpu-hours": "min_gpu_hours"}
"""The objective each choice of --minimize asks for."""

MODELS_COMPARED = "solve map --model {} compares several: the longest context of each per GPU budget"
"""What ``solve`` says of several models given to --model (``8B,14B``, or ``8B 14B``), the list in place of ``{}``."""


def build_parser() -> Parser:
    """The planner's argument parser: ``solve [options]``, its options in groups in the order a user needs them."""
    parser = Parser(
        prog="solve",
        description="Plan trainer GPUs for Trinity-RFT: Env, FSDP2 Offload and Ulysses SP, from the "
        "documented feasibility tables, solved with OR-Tools CP-SAT.",
        epilog="Examples:\n"
        "  solve --model 8B --gpu h100 --gpus 8 --len 64k          the cheapest plan for 64k tokens on 8 H100s\n"
        "  solve --model 8B --gpu h100 --gpus 8 --maximize len     the longest context within 8 H100s\n"
        "  solve --model 32B --gpu h100 --len 32k --minimize gpus  will Qwen3-32B fit: the fewest H100s for it\n"
        "  solve --from-config docs/examples/trinity.yaml --gpu h100 --check\n"
        "                      does this Trinity config train on H100s? (exit 1: no; solve examples writes it)\n"
        "\n"
        "A cost is a relative step time: compare it within one GPU type; a model or GPU type without tables is "
        "estimated, and the answer says so. Other commands: solve tables, solve map, "
        "solve cluster, solve memory, solve calibrate, solve examples; each has --help. Every option in full: "
        "docs/cli.md in rft-solver's source (Option reference). "
        "Exit status: 0 every answer has a plan, 1 some answer has none (or --check found the config's settings not "
        f"shown to train), 2 bad input, {STATUSES_AFTER_BAD_INPUT}.",
        elsewhere={("minimize", "nodes"): "the fewest nodes for many jobs: solve cluster FLEET.yaml --minimize nodes",
                   ("maximize", "gpus"): "did you mean --minimize gpus (the fewest trainer GPUs for --len)?",
                   ("minimize", "len"): ("did you mean --maximize len (the longest context within --gpus or "
                                         "--total-gpus)?"),
                   ("emit", "json"): "did you mean --json?",
                   **dict.fromkeys((("emit", "yaml"), ("emit", "yml")),
                                   "did you mean 'trinity'? (--emit trinity prints the plan as Trinity YAML)"),
                   **dict.fromkeys((("minimize", "cost"), ("minimize", "time"), ("maximize", "speed"),
                                    ("maximize", "throughput")),
                                   "the cheapest plan (the shortest step time) is what solve answers without "
                                   "--minimize or --maximize: --len L; the fewest GPU-hours (GPUs x cost): "
                                   "--minimize gpu-hours")},
        several={"--model": MODELS_COMPARED},
        formatter_class=KeptLinesFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    question = parser.add_argument_group("the question")
    question.add_argument("--model", metavar="M", type=model_name,
                          help=f"model: {MODEL_NAMES} (default: --from-config's; a model of your own: "
                          "--model-config)")
    question.add_argument("--gpu", metavar="G", type=gpu_names,
                          help=f"GPU type ({GPU_NAMES}), or several, a100,h100: an answer for each (default: each "
                          "one with tables)")
    question.add_argument("--gpus", metavar="N",
                          type=whole_number(1, MAX_GPUS, "one budget: solve map --budgets {} answers for several"),
                          help="trainer GPUs to use at most, rollout GPUs not counted (default: the most the tables "
                          f"measured, else {NODE_GPUS}; with --minimize, up to {MAX_ESTIMATED_GPUS})")
    question.add_argument("--total-gpus", metavar="T", type=whole_number(1, MAX_GPUS),
                          help="all your GPUs, trainer and rollout: the trainer's budget is T less --rollout-gpus "
                          "(in place of --gpus)")
    question.add_argument("--len", metavar="L", type=token_count, dest="max_model_len",
                          help="max_model_len in tokens (32768 or 32k)")
    goal = question.add_mutually_exclusive_group()
    goal.add_argument("--maximize", choices=["len"], help="the longest context within --gpus or --total-gpus")
    goal.add_argument("--minimize", choices=["gpus", "gpu-hours"],
                      help="the fewest trainer GPUs for --len (gpus), or the fewest GPUs x cost (gpu-hours)")
    question.add_argument("--exact", action="store_true", help="the trainer uses exactly the budget's GPUs: --gpus, "
                          "or --total-gpus less --rollout-gpus")
    question.add_argument("--rollout-gpus", metavar="R", type=whole_number(0, MAX_GPUS),
                          help="R rollout GPUs beside the trainer, which the plan leaves room for (0: none, mode "
                          "train)")
    pins = parser.add_argument_group("pins (default: the planner's choice)")
    pins.add_argument("--sp", metavar="S", type=whole_number(1, MAX_GPUS),
                      help=f"pin the Ulysses SP degree: {SP_RULES_HELP}")
    pins.add_argument("--env", action=OnceFlag, help="pin Env (expandable_segments) on/off")
    pins.add_argument("--offload", action=OnceFlag, help="pin FSDP2 CPU Offload on/off")
    training = parser.add_argument_group("training setup (default: GRPO, full fine-tuning, or --from-config's)")
    add_token_budget_option(training, from_config=True)
    add_train_batch_option(training, from_config=True)
    add_critic_option(training, "none, or --from-config's PPO critic")
    add_dpo_option(training, "not DPO, or as --from-config's algorithm_type says")
    add_reference_option(training, f"as --from-config says, else {REFERENCE_DEFAULT}")
    add_lora_option(training, "--from-config's LoRA, else full fine-tuning")
    add_lora_targets_option(training, "--from-config's target_modules, else all-linear", written=True)
    add_trinity_version_option(training, "--emit, --out, --write", "write both, count 0.6's", read=True)
    hardware = parser.add_argument_group("hardware and memory model")
    add_node_gpus_option(hardware, from_config=True)
    add_host_ram_option(hardware)
    add_own_gpu_options(hardware, listed=True)
    add_estimate_options(hardware)
    add_memory_model_options(hardware)
    add_cells_option(hardware)
    hardware.add_argument("--model-config", metavar="PATH", type=path_argument("file or folder to read"),
                          help=f"{MODEL_CONFIG_HELP}, for a model the catalogue lacks")
    add_weights_option(hardware)
    trinity = parser.add_argument_group("a Trinity config")
    trinity.add_argument("--from-config", metavar="FILE", type=path_argument("file to read"),
                         help="read model, max_model_len and trainer GPUs from a Trinity config, and say whether its "
                         "settings train (options override it)")
    trinity.add_argument("--check", action="store_true",
                         help="with --from-config: exit 1 also where its settings are not shown to train, or "
                         "Trinity refuses it (for CI)")
    trinity.add_argument("--write", metavar="FILE", type=output_path,
                         help="with --from-config: write a copy of the config with the best plan applied")
    output = parser.add_argument_group("output")
    output.add_argument("--top", metavar="K", type=whole_number(1, MAX_TOP), default=1,
                        help=f"the K best plans, best first (default 1, at most {MAX_TOP})")
    output.add_argument("--explain", action="store_true",
                        help="say why: the rule that rules out each cheaper plan, or what stops any plan")
    output.add_argument("--json", action="store_true", help="print a JSON array, one answer per GPU type")
    output.add_argument("--emit", choices=["trinity"], help="print the best plan as a Trinity YAML fragment")
    output.add_argument("--out", metavar="FILE", type=output_path, help="write that fragment to FILE")
    search = parser.add_argument_group("solver")
    search.add_argument("--time-limit", metavar="SECONDS", type=positive_seconds, default=10.0,
                        help="seconds per answer, for all its solves together (default 10)")
    add_workers_option(search, "a proven answer does not depend on it")
    return parser


def _check_trinity_flags(args: argparse.Namespace) -> None:
    """`QueryError` for Trinity flags that do not go together, or go without the flag they need."""
    if args.emit and args.json:
        raise QueryError("--emit trinity prints YAML: drop --json (its apply carries the same settings) or --emit")
    if args.write and not args.from_config:
        raise QueryError("--write patches the config of --from-config FILE: give it, or write the plan's keys to a "
                         "new file with --out FILE")
    if args.write and args.total_gpus is not None:
        raise QueryError("--write keeps the config's cluster, which gives the trainer's and the rollout's GPUs: drop "
                         "--total-gpus (or write a fragment with its own cluster with --out FILE)")
    if args.check and not args.from_config:
        raise QueryError("--check judges the config of --from-config FILE: give it (a plan asked by flags alone has "
                         "no config to judge)")
    if args.dpo and args.from_config:
        raise QueryError("--from-config's algorithm.algorithm_type says whether the run trains DPO (dpo): drop --dpo")
    if args.emit and (args.top > 1 or args.explain):
        raise QueryError("--emit trinity prints the best plan's YAML alone: drop --top and --explain (for another "
                         "of --top's plans, pin its settings: --gpus N --exact --sp S, --env or --no-env, --offload or "
                         "--no-offload)")
    check_model_flags(args, "--model M (e.g. 4B), --model-config PATH or --from-config FILE",
                      given=args.from_config is not None)


def run_planner(args: argparse.Namespace) -> int:
    """``solve``: answer the planning question for each GPU type asked about (--from-config's text read once as
    Trinity reads it, however many of the steps below read it: `parsing_once`)."""
    from solver.tables import parsing_once
    with parsing_once():
        return _answer(args)


def _answer(args: argparse.Namespace) -> int:
    """`run_planner`'s work: check the flags, read the config, plan, print the answers and their notes: those on
    the input (--gpu, --cells, --model-config ...) before those on the files made and written."""
    from solver.api import answer_query, check_judged_length, config_answers
    from solver.results import check_passes
    from solver.rules import COMMAND_OPTIONS
    _check_trinity_flags(args)
    config_text, config = option_file("--from-config", partial(read_config_file, version=args.trinity_version,
                                                               asked_gpu=partial(_one_asked_gpu, args)),
                                      args.from_config) or ("", None)
    catalog, added, cells = _planner_catalog(args, config)
    if args.model is not None:
        catalogue_model(catalog, args.model, listed=MODELS_COMPARED,  # an unknown name: how to give one's own
                        every="solve map, without --model, maps each model the GPU type's tables document")
    objective: Objective = "max_len" if args.maximize else MINIMIZED.get(args.minimize, "cheapest")
    if config is not None:
        check_planner_config(args, catalog, added, config, objective)
        if args.check:
            check_judged_length(config, args.max_model_len, file_name_shown(args.from_config), "--check",
                                COMMAND_OPTIONS)
    query = _planner_query(args, catalog, added, config, objective)
    catalog = query.counted_catalog(catalog)  # the config's LoRA adapter counted on its regex's modules
    refused = config is not None and write_refused(args, objective, catalog, config, config_text, query.lora_rank)
    if config is None:
        answers = answer_query(query, catalog, explain=args.explain)
    else:  # the verdict's fixes name --write only where the summary offers it
        if refused:
            config = read_config_text(config_text, args.from_config, args.trinity_version, write_offered=False)
        answers = config_answers(query, catalog, config, config_text, file_name_shown(args.from_config), os.environ,
                                 args.trinity_version, explain=args.explain, write_offered=not refused)
    fragments, written_notes = write_trinity(args, answers, catalog, catalog.model(query.model), config_text,
                                             query.node_gpus, config)
    if args.json:  # each best plan's settings, as --emit writes them
        answers = with_apply(args, answers, catalog, catalog.model(query.model), config_text, query.node_gpus, config)
    config_keys = hand_applied_keys(args, answers, catalog.model(query.model), config_text)
    write_unoffered = args.write is not None or refused
    _print_planner(args, answers, fragments, query, catalog, cells, config_keys, write_unoffered)
    note_added_model("solve", catalog, added)
    if args.from_config is None:  # else the config's own LoRA, if any, is counted
        note_adapter_beside("solve", args.model_config, args.lora_rank, args.lora_targets)
    note_replaced_yarn_factor("solve", catalog.model(query.model), (
        answer.plans[0].rope_scaling_factor for answer in answers
        if answer.plans and answer.plans[0].rope_scaling_factor is not None))
    if args.gpus is None and args.total_gpus is None and not query.open_budget and (
            config is None or config.trainer_gpus is None):  # the budget make_query defaults to
        note_shared_budget("solve", catalog, query.gpus, query.budget_gpus)
    if config is not None:
        note_critic_not_trained("solve", file_name_shown(args.from_config), config, args.critic)
    if config is not None and args.gpus is not None:
        note_config_nodes_outgrown("solve", file_name_shown(args.from_config), config, answers)
    if args.check and args.gpu is None:
        note_check_without_gpu("solve", file_name_shown(args.from_config), [answer.gpu for answer in answers])
    for note in written_notes:  # after the notes on the input
        print_note(note)
    passes = check_passes(answers) if args.check else all(answer.plans for answer in answers)
    return 0 if passes else NO_PLAN


def _one_asked_gpu(args: argparse.Namespace) -> GpuType | None:
    """The GPU type --gpu names (with --gpu-memory, the one it describes), where it names one the catalogue has or
    they describe; None otherwise (none, several, or a name refused, which the planner then refuses itself)."""
    from solver.query import asked_gpus
    try:
        catalog = catalog_with(None, args.gpu, args.gpu_memory, interconnect=args.gpu_interconnect).catalog
        gpus = asked_gpus(catalog, args.gpu) if args.gpu is not None else ()
    except QueryError:
        return None
    return catalog.gpu(gpus[0]) if len(gpus) == 1 else None


def _planner_catalog(args: argparse.Namespace, config: TrinityConfig | None) -> CommandCatalog:
    """The catalogue to plan with (--model-config's model, or the local one the config names, added; --gpu
    --gpu-memory and --cells), the added model's name and the --cells files' GPU types; refuses an output over the
    config's config.json."""
    from solver.api import local_config_model
    from solver.query import MODEL_PATH_KEY
    from solver.rules import COMMAND_OPTIONS
    from solver.tables import load_catalog
    local = local_config_json(config)
    if local is not None:  # an input, read or not: no output may overwrite it
        for name in OUTPUT_FLAGS:
            if getattr(args, name, None) is not None:
                refuse_overwriting(name, getattr(args, name), [(f"the config.json that {MODEL_PATH_KEY} names", local)])
    rollout_gpus = args.rollout_gpus if args.rollout_gpus is not None or config is None else config.rollout_gpus
    vllm_rollout = rollout_gpus != 0  # none: a trainer alone, which what only vLLM refuses does not stop
    if args.model_config is not None:
        described: Model | None = model_config_option(args.model_config, vllm_rollout=vllm_rollout)
    elif local is not None and config is not None and args.model is None:
        described = local_config_model(config, load_catalog(), vllm_rollout=vllm_rollout, option_names=COMMAND_OPTIONS)
    else:
        described = None
    return catalog_with(described, args.gpu, args.gpu_memory, args.cells or (), interconnect=args.gpu_interconnect,
                        every="leave --gpu out for an answer on each GPU type with tables")


def _planner_query(args: argparse.Namespace, catalog: Catalog, added: str, config: TrinityConfig | None,
                   objective: Objective) -> Query:
    """The query the options (and --from-config's config) ask; `QueryError` where --out or --write would have
    more than one GPU type's plan."""
    from solver.api import config_query
    from solver.query import check_dpo_budget_unread, check_vllm_lora_rank, make_query
    from solver.rules import COMMAND_OPTIONS
    asked = {"model": args.model or added or None, "gpu": args.gpu, "objective": objective, "budget_gpus": args.gpus,
             "exact": args.exact, "max_model_len": args.max_model_len, "sp": args.sp, "env": args.env,
             "offload": args.offload, "top": args.top, "weights": weights_option(args.weights),
             "time_limit_s": args.time_limit, "workers": args.workers, "estimate": args.estimate_mode,
             "memory": memory_model_option(args.memory_model, "solve"), "margin": args.margin,
             "host_ram_gb": args.host_ram, "rollout_gpus": args.rollout_gpus, "total_gpus": args.total_gpus,
             "train_batch_size": args.train_batch_size,
             "trinity_version": args.trinity_release, "critic": args.critic}  # --model-config describes the model

    if config is None:
        query = make_query(catalog, **{**asked, "model": asked["model"] or "", "critic": counted_critic(args.critic)},
                           token_budget=args.token_budget or "default", node_gpus=args.node_gpus,
                           reference_model=args.reference, lora_rank=args.lora_rank or 0,
                           dpo=args.dpo, lora_targets=args.lora_targets, lora_exclude_modules=args.lora_exclude,
                           option_names=COMMAND_OPTIONS)
        check_dpo_budget_unread(args.token_budget, None, catalog.model(query.model), COMMAND_OPTIONS, dpo=query.dpo)
        check_vllm_lora_rank(query.lora_rank, query.rollout_gpus, COMMAND_OPTIONS)  # config_query's checks it too
    else:  # --write plans for the config's own GPU count, whatever the objective
        pinned: dict[str, Any] = {"exact": None} if not (args.exact or args.write) else {
            "exact": True, "exact_source": "--exact" if args.exact else "--write (the config's cluster)"}
        query = config_query(catalog, config, **{**asked, **pinned}, token_budget=args.token_budget,
                             node_gpus=args.node_gpus, reference_model=args.reference, lora_rank=args.lora_rank,
                             lora_targets=args.lora_targets, lora_exclude_modules=args.lora_exclude,
                             option_names=COMMAND_OPTIONS)
    given = [flag for flag, value in (("--out", args.out), ("--write", args.write)) if value]
    if given and len(query.gpus) > 1:
        raise QueryError(f"{' and '.join(given)} {'take' if len(given) > 1 else 'takes'} one plan: choose one GPU type "
                         f"with --gpu ({' or '.join(query.gpus)}, the ones this answer covers, or any other of the "
                         "catalogue)")
    return query


def _print_planner(args: argparse.Namespace, answers: tuple[Answer, ...], fragments: Sequence[Fragment | None],
                   query: Query, catalog: Catalog, cells: Sequence[tuple[Path, GpuType]],
                   config_keys: Mapping[str, ConfigApplied], write_unoffered: bool) -> None:
    """Print the answers: the Trinity fragments (--emit), JSON (--json) or the view (with, per GPU type, what its
    apply lines say of the --from-config, `config_keys`, and, unless `write_unoffered` (written already, or --write
    would refuse these options), that --write applies the plan to a copy), with the --cells optimism note on stderr,
    a line for each file written and the --cells notes (`note_cells_elsewhere`)."""
    from solver.render import answers_json, answers_view
    if cells and (note := _optimism_note([gpu_type for _, gpu_type in cells], catalog, answers, query)):
        print_note(note)
    if args.emit:
        sys.stdout.write("---\n".join(made[0] for made in fragments if made is not None))
    elif args.json:
        sys.stdout.write(answers_json(answers) + "\n")
    else:
        view = answers_view(answers, query, catalog, args.trinity_version, write_unoffered=write_unoffered,
                            config_keys=config_keys)
        console = print_view(view, "solve")
        for written in (args.out, args.write):
            if written is not None and answers[0].plans:
                console.print(escaped_line(f"wrote {written}"))
    note_cells_elsewhere("solve", cells, catalog, args.gpu)
    note_gpu_variant("solve", catalog, args.gpu)


def _optimism_note(mine: Sequence[GpuType], catalog: Catalog, answers: Sequence[Answer], query: Query) -> str | None:
    """Where an answer's best plan is an estimate for a GPU type and model that cells of yours measured (of that
    GPU type, or of one with its memory), and some of them ran out of memory with Env where the memory model
    predicts a fit: that (its estimates near those cells may be optimistic too), and the margin under which it
    agrees with them; None otherwise. Your cells are `mine`, as the --cells files gave them: the catalogue has
    merged them with the shipped ones."""
    from solver.calibrate import observations, optimistic

    estimated = {(answer.gpu, answer.model) for answer in answers if answer.best and answer.best.evidence == "estimated"}

    def near(gpu: str, model: str) -> bool:  # cells of the GPU type, or of one whose tables it borrows
        return any(model == name and (gpu == planned or catalog.gpu(gpu).memory_mib is not None
                                      and catalog.gpu(gpu).memory_mib == catalog.gpu(planned).memory_mib)
                   for planned, name in estimated)

    estimable = (seen for seen in observations(catalog, lambda gpu, _, model: near(gpu, model), mine)
                 if seen.setting.env or query.env is False)  # estimates turn Env on unless --no-env
    # each held to the margin the answers' estimates on its memory are held to (more on a small card)
    wrong = sorted(((found, query.margin_on(seen.memory_gib)) for seen in estimable for found in
                    optimistic((seen,), query.memory.coefficients, query.margin_on(seen.memory_gib))),
                   key=lambda item: item[0][1] - item[0][2])
    if not wrong:
        return None
    seen, total, usable = wrong[0][0]
    # usable is proportional to 1 - margin: the least margin (in hundredths) under which each predicted peak exceeds it
    margin = ceil(100 * max(1 - (1 - held) * total / usable for (_, total, usable), held in wrong) + 1e-9) / 100
    return (f"solve: note: your cells say {counted(len(wrong), 'setting')} ran out of memory where the memory model "
            f"predicts a fit ({seen.setting.label} on {counted(seen.gpus, seen.gpu + ' GPU')} for {seen.model.name} at "
            f"{seen.max_model_len}: {total:.1f} GiB predicted of {usable:.1f} usable), so its estimates near them may be "
            f"optimistic too: with --margin {margin:g} it predicts that each of them runs out")
