"""Options that several ``solve`` commands share: --trinity-version, --gpu-memory and --gpu-interconnect, --cells,
--token-budget, --train-batch-size, --host-ram, --reference/--no-reference, --margin, --memory-model,
--estimate/--no-estimate, --weights, --workers and --node-gpus."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from solver.cli.argtypes import (
    gpu_memory,
    host_memory,
    margin_fraction,
    node_gpus_count,
    path_argument,
    planner_token_budget,
    token_budget_mode,
    trinity_version,
    whole_number,
)
from solver.cli.atomic import errors_named_by
from solver.cli.output import print_note
from solver.cli.parser import OnceFlag, refuse_twice
from solver.tables import (
    CRITIC_CHOICES,
    DEFAULT_MARGIN,
    INTERCONNECTS,
    MAX_LORA_RANK,
    MAX_NODE_GPUS,
    MAX_TRAIN_BATCH,
    MAX_WORKERS,
    NODE_GPUS,
    SMALL_CARD_GIB,
    either,
    shown_number,
)

if TYPE_CHECKING:
    from solver.tables import MemoryModel, Model, Weights

_Loaded = TypeVar("_Loaded")

MODEL_CONFIG_HELP = "a local Hugging Face config.json (or the checkpoint folder holding it)"
"""The start of ``--model-config``'s help in every command that takes it: a folder is read as its config.json."""
MODEL_NAMES = "Qwen3-4B, 4B, qwen3-4b, ..."
"""What a command's --model help says of the names: the catalogue's, short, or in any case."""
SP_RULES_HELP = "it divides the trainer GPUs and the attention heads, and SP and the KV heads divide one another"
"""The rules an SP degree keeps, in the help of the commands that take ``--sp`` (docs/cli.md's option reference has
them all): the heads' rules are the ones users of models with few KV heads (Qwen3-30B-A3B's 4) miss."""


def add_trinity_version_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup, made: str,
                               default: str, read: bool = False) -> None:
    """--trinity-version, for the commands that write Trinity configs (`made`: the options that write them;
    `read`: --from-config's config is read as that release's too)."""
    reads = "read --from-config's config as, and " if read else ""
    parser.set_defaults(trinity_release=None)
    parser.add_argument("--trinity-version", metavar="V", action=_TrinityRelease,
                        help=f"the Trinity-RFT release to {reads}write for ({made}) and count as: 0.5, 0.6 or one "
                             f"of theirs, 0.5.1 (default: {default})")


def add_counted_release_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
                               planned: bool = False) -> None:
    """--trinity-version for ``solve memory`` and ``solve map`` (`planned`), which write no config: the release whose
    memory they count (and, for the map's plans, whose train batch rule they keep to), kept as given
    (``trinity_release``) for its patch; docs/cli.md's option reference says what each release changes."""
    parser.set_defaults(trinity_release=None)
    batch = ", and keep its train batch rule" if planned else ""
    parser.add_argument("--trinity-version", metavar="V", action=_TrinityRelease,
                        help=f"the Trinity-RFT release to count the memory as{batch}: 0.5 or 0.6, or one of theirs "
                             "(0.5.1); default: 0.6's counts")


class _TrinityRelease(argparse.Action):
    """--trinity-version: its minor version as ``trinity_version`` (`solver.cli.argtypes.trinity_version`), and the
    release as given as ``trinity_release``, whose patch may decide how transformers holds a mixture of experts'
    routed experts (`solver.tables.counted_expert_layout`: 0.5.1's)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        refuse_twice(self, parser, namespace)
        try:
            setattr(namespace, self.dest, trinity_version(values))
        except argparse.ArgumentTypeError as error:
            raise argparse.ArgumentError(self, str(error)) from None
        namespace.trinity_release = values


GPU_NAMES = "a100, a100-40g, h20, h100, ...; an unknown name lists all"
"""What a command's --gpu help says of the names (a100 is the 80 GB A100 the tables measured: docs/cli.md)."""


HOST_RAM_UNITS = "GiB: 512, 512G, 2TB or free -m's 64214MiB"
"""What --host-ram's help says of its units (`read_host_ram`; docs/cli.md has every form), for the commands that
take it."""


def add_own_gpu_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup, listed: bool = False,
                        planned: bool = True) -> None:
    """--gpu-memory and --gpu-interconnect, which describe a GPU type of your own, for the commands that plan or
    estimate a GPU type (`listed`: one of --gpu's list; not `planned`: one setting estimated, solve memory's, whose
    estimate is the same over any link: no cost weighs SP, and no caution asks for an unstated interconnect)."""
    lacked = " (of a list's names, the one it lacks)" if listed else ""
    unstated = "an SP plan cautioned" if planned else "no caution"
    parser.add_argument("--gpu-memory", metavar="SIZE", type=gpu_memory,
                        help=f"the memory of --gpu NAME, a GPU type the catalogue lacks{lacked}: GB as sold (64) "
                        "or nvidia-smi's total (65536MiB); its plans are estimates")
    parser.add_argument("--gpu-interconnect", metavar="LINK", choices=INTERCONNECTS,
                        help=f"with --gpu-memory: the link between a node's GPUs, {either(INTERCONNECTS)} "
                        f"(default: not stated, {unstated})")


def add_cells_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """--cells, for the commands that plan or estimate with tables."""
    parser.add_argument("--cells", metavar="FILE", type=path_argument("file to read"), action="append",
                        help="cells you measured, a GPU table file in the tables' format (repeatable): they vouch "
                        "for plans as the source's do")


def add_token_budget_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
                            from_config: bool = False, caps: bool = False) -> None:
    """--token-budget, for the commands that plan (`from_config`: the one that also reads a Trinity config; `caps`:
    one that also takes a cap, N, as that one does)."""
    default = "default, or --from-config's lower one" if from_config else "default"
    cap = "; N (32k): no plan takes more than N" if caps or from_config else ""
    parser.add_argument("--token-budget", metavar="MODE|N" if caps or from_config else "MODE",
                        type=planner_token_budget if caps or from_config else token_budget_mode,
                        help="trainer.max_token_len_per_gpu: ceil(2 x L / SP), Trinity's "
                        f"({default}); auto: fewer where an estimated plan needs it{cap}")


def add_train_batch_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
                           from_config: bool = False) -> None:
    """--train-batch-size, for the commands that plan (`from_config`: the one that also reads a Trinity config)."""
    default = "--from-config's, else not checked" if from_config else "not checked"
    parser.add_argument("--train-batch-size", metavar="N", type=whole_number(1, MAX_TRAIN_BATCH),
                        help="experiences per training step: only trainers whose data-parallel ranks (GPUs / SP) "
                             f"divide it; 0.5.0 and 0.5.1: the trainer GPUs (default: {default})")


PLANS_HOST_RAM = "it rules out plans that do not fit there"
"""What --host-ram does for the commands that plan (`add_host_ram_option`'s default)."""


def add_host_ram_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
                        judged: str = PLANS_HOST_RAM) -> None:
    """--host-ram, for the commands that plan, or with `judged`, what it does for one that judges one setting (`solve
    memory`)."""
    parser.add_argument("--host-ram", metavar="GiB", type=host_memory,
                        help=f"host memory per node for the trainer, in {HOST_RAM_UNITS}; {judged} (default: not "
                        "checked)")


REFERENCE_DEFAULT = "one, none with --lora-rank"
"""Whether a command without a Trinity config counts the reference model (`add_reference_option`)."""


def add_reference_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
                         default: str = REFERENCE_DEFAULT) -> None:
    """--reference/--no-reference, for the commands that count a node's host memory need (`default`: what counts
    without either; --from-config decides it: `solver.query.TrinityConfig.reference_model`)."""
    parser.add_argument("--reference", action=OnceFlag,
                        help=f"whether the run builds a reference model, whose shards take host memory (default: "
                        f"{default})")


def add_lora_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup, default: str) -> None:
    """--lora-rank, for the commands that estimate a setting or plan (`default`: what counts without it)."""
    parser.add_argument("--lora-rank", metavar="RANK", type=whole_number(0, MAX_LORA_RANK),
                        help=f"count a LoRA run at rank RANK; 0 for full fine-tuning (default: {default})")


def add_lora_targets_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup, default: str,
                            written: bool = False) -> None:
    """--lora-targets and --lora-exclude, for the commands that count a LoRA run's adapter on one setting or plan
    (`default`: the modules counted without them; `written`: the command writes a fragment, which writes them);
    `solver.query.given_lora_targets` reads them, once the model is known."""
    parser.add_argument("--lora-targets", metavar="TARGETS",
                        help="with --lora-rank: the adapter's modules, as target_modules: all-linear, q_proj,v_proj "
                        f"or a regex (default: {default})")
    own = ", or --from-config's where --lora-targets is not given" if written else ""
    parser.add_argument("--lora-exclude", metavar="REGEX",
                        help=f"with --lora-rank: a regex of the modules to leave out, as exclude_modules (default: "
                        f"none{own})")


def add_critic_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup, default: str) -> None:
    """--critic, for the commands that estimate a setting or plan (`default`: what counts without it)."""
    parser.add_argument("--critic", metavar="WHERE", choices=CRITIC_CHOICES,
                        help=f"count a PPO critic on the actor's GPUs, its states resident, offloaded or reloaded, or "
                        f"none (default: {default})")


def add_dpo_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup, default: str) -> None:
    """--dpo, for the commands that estimate a setting or plan (`default`: what counts without it)."""
    parser.add_argument("--dpo", action="store_true",
                        help=f"the run trains DPO, on pairs of a chosen and a rejected sequence (default: {default})")


def add_memory_model_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """--margin and --memory-model, for the commands that estimate."""
    parser.add_argument("--margin", metavar="F", type=margin_fraction,
                        help="estimates' safety margin, a fraction of usable memory (0.03) or a percentage (3%%) "
                        f"(default: the memory model's, {DEFAULT_MARGIN}; more on cards of {SMALL_CARD_GIB:g} GiB or "
                        "less)")
    parser.add_argument("--memory-model", metavar="FILE", type=path_argument("file to read"),
                        help="coefficients from `solve calibrate --out` (default: the shipped memory-model.yaml)")


def option_file(flag: str, load: Callable[[Path], _Loaded], path: Path | None) -> _Loaded | None:
    """The file at `path` that option `flag` names, read by `load` (None without one); its errors name the option
    (`errors_named_by`)."""
    if path is None:
        return None
    with errors_named_by(flag):
        return load(path)


def memory_model_option(path: Path | None, prog: str) -> MemoryModel | None:
    """The --memory-model file's memory model (None without one); its errors name the option. Where its fit is one
    that `solve calibrate` warned of (`implausible`), a warning on stderr says so, naming the command (`prog`): the
    plans it estimates say only that it is the file's, and their room to spare may be more than the GPUs have."""
    from solver.rules import COMMAND_OPTIONS
    from solver.tables import load_memory_model
    memory = option_file("--memory-model", partial(load_memory_model, file_readers=COMMAND_OPTIONS.file_readers),
                         path)
    if memory is None:
        return None
    from solver.calibrate import implausible  # only for a file
    if odd := implausible(memory.coefficients):
        print_note(f"{prog}: warning: --memory-model {path}: {'; '.join(odd)}, as solve calibrate warned when it "
                   "fitted it: estimates from it may not hold (fit it on more cells, or with --with-tables)")
    return memory


def model_config_option(path: Path | None, *, vllm_rollout: bool = True) -> Model | None:
    """The --model-config file's model (None without one); its errors name the option. `vllm_rollout`: as
    `load_model_config` takes it (False for a trainer alone)."""
    from solver.rules import COMMAND_OPTIONS
    from solver.tables import load_model_config
    return option_file("--model-config", partial(load_model_config, vllm_rollout=vllm_rollout,
                                                 file_readers=COMMAND_OPTIONS.file_readers), path)


def weights_option(path: Path | None) -> Weights | None:
    """The --weights file's cost weights (None without one); its errors name the option."""
    from solver.rules import COMMAND_OPTIONS
    from solver.tables import load_weights
    return option_file("--weights", partial(load_weights, file_readers=COMMAND_OPTIONS.file_readers), path)


def add_estimate_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """--estimate and --no-estimate (one at most; neither: ``auto``, the tables first, estimates past them), for the
    commands that plan."""
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--estimate", action="store_const", const="only", default="auto", dest="estimate_mode",
                      help="plans from the memory model alone, ignoring the tables (to compare)")
    mode.add_argument("--no-estimate", action="store_const", const="never", default="auto", dest="estimate_mode",
                      help="no estimates: only documented and inferred plans (by default, estimates where no "
                      "table's cell vouches)")


def planning_check_options(args: argparse.Namespace) -> tuple[str, ...]:
    """The options of `args` that `solve --from-config CONFIG --check` needs to judge a config as these plans were
    made (`solver.trinity.check_flags`' `options`): the --cells files, --memory-model, --margin and --estimate or
    --no-estimate given."""
    return (*(flag for path in args.cells or () for flag in ("--cells", str(path))),
            *(("--memory-model", str(args.memory_model)) if args.memory_model is not None else ()),
            *(("--margin", shown_number(args.margin)) if args.margin is not None else ()),
            *{"only": ("--estimate",), "never": ("--no-estimate",), "auto": ()}[args.estimate_mode])


def add_weights_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """--weights, for the commands that plan."""
    parser.add_argument("--weights", metavar="FILE", type=path_argument("file to read"),
                        help="cost weights YAML (default: the shipped costs.yaml)")


def add_workers_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
                       answers: str = "answers do not depend on it") -> None:
    """--workers, for the commands that solve (`answers`: what depends on it)."""
    parser.add_argument("--workers", metavar="W", type=whole_number(1, MAX_WORKERS), default=1,
                        help=f"CP-SAT search workers (default 1, at most {MAX_WORKERS}): {answers}")


def add_node_gpus_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
                         from_config: bool = False) -> None:
    """--node-gpus, for the commands that plan (`from_config`: the one that also reads a Trinity config, whose
    cluster.gpu_per_node is the default; otherwise 8)."""
    default = f"--from-config's cluster.gpu_per_node, else {NODE_GPUS}" if from_config else str(NODE_GPUS)
    parser.add_argument("--node-gpus", metavar="N", type=node_gpus_count,
                        default=None if from_config else NODE_GPUS,
                        help=f"GPUs per node, at most {MAX_NODE_GPUS} (default: {default})")
