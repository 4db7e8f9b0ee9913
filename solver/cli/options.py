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
    HOST_NEED_WORDS,
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
SP_RULES_HELP = ("it must divide the trainer GPUs and the attention heads, SP and the KV heads must divide one "
                 "another, and a trainer that spans nodes keeps each SP group in one node (a --model-config model "
                 "that runs its checkpoint's own code, its auto_map, takes SP=1 only)")
"""The rules an SP degree keeps (Trinity's and verl's, and rft-solver's node rule), in the help of the commands
that take ``--sp``: the heads' rules are the ones users of models with few KV heads (Qwen3-30B-A3B's 4) miss."""
LOADING_HELP = ("; the host memory counts the model loading at start-up on the ranks the release loads it on: 0.5.0 "
                "and 0.5.1 rank 0 (every rank for tied embeddings), 0.5.2 every rank, 0.6 rank 0 with FSDP2 on a GPU "
                "of compute capability 9 or more, else every rank; with none named every rank, the most any loads")
"""How --trinity-version changes the ranks the host memory need counts loading the model
(`solver.tables.model_loading`), in the option's help."""


def add_trinity_version_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup, made: str,
                               default: str, read: bool = False) -> None:
    """--trinity-version, for the commands that write Trinity configs (`made`: the options that write them;
    `read`: --from-config's config is read as that release's too)."""
    reads = "the config's release (with 0.6 an unset trainer_strategy is fsdp2), and " if read else ""
    parser.set_defaults(trinity_release=None)
    parser.add_argument("--trinity-version", metavar="V", action=_TrinityRelease,
                        help=f"{reads}the Trinity-RFT release to write for ({made}): 0.5 or 0.6 (or a release of "
                             "either, 0.5.0 to 0.5.2 or 0.6.0: as pip show trinity-rft prints it); "
                             "0.6 gets the offload flags "
                             "under trainer too (with verl before 0.8 it takes those), 0.5 the roles' only (it "
                             f"refuses the others); default: {default}. The plans count the memory as the release "
                             "holds it: 0.5 the reference model's host shards in bf16, 0.6 (and by default) in fp32; "
                             "0.5.1 a mixture of experts' routed experts each sharded over every GPU, by its "
                             "transformers 4, the other 0.5 releases the larger of that and transformers 5's fused "
                             f"tensors, each as verl 0.7 places it{LOADING_HELP}")


def add_counted_release_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
                               planned: bool = False) -> None:
    """--trinity-version for ``solve memory`` and ``solve map`` (`planned`), which write no config: the release whose
    memory they count (and, for the map's plans, whose train batch rule they keep to), kept as given
    (``trinity_release``) for its patch."""
    parser.set_defaults(trinity_release=None)
    batch = (" with --train-batch-size, 0.5.0 and 0.5.1 need the trainer GPUs to divide it, 0.5.2 and 0.6 the "
             "data-parallel ranks alone;" if planned else "")
    parser.add_argument("--trinity-version", metavar="V", action=_TrinityRelease,
                        help=f"the Trinity-RFT release to {'plan' if planned else 'count the memory'} for, as solve "
                             "takes it (0.5, 0.6, 0.5.1): 0.5.1's transformers 4 shards a mixture of experts' routed "
                             "experts each over every GPU, the other 0.5 releases the larger of that and transformers "
                             "5's fused tensors, each as verl 0.7 places it, 0.6 whole; 0.5 pins the reference "
                             "model's host "
                             f"shards in bf16, 0.6 in fp32;{batch} default: 0.6's counts{LOADING_HELP}")


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


GPU_NAMES = ("a100: the 80 GB A100 the tables measured; a100-40g: the 40 GB one; h20, h100, ...; an unknown name "
             "lists all")
"""What a command's --gpu help says of the names: the short form a100 names one of two A100s (as a cluster pool's
``gpu: A100`` note says)."""


HOST_RAM_UNITS = ("GiB: 512, 512G, 512GB and 512GiB are each 512 GiB (RAM is sold in binary GB), 2TB is 2048 "
                  "GiB, free -m's 64214MiB is 62.7 GiB (a bare number past 4096 is refused)")
"""What --host-ram's help says of its units (`read_host_ram`), for the commands that take it."""


def add_own_gpu_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup, listed: bool = False,
                        planned: bool = True) -> None:
    """--gpu-memory and --gpu-interconnect, which describe a GPU type of your own, for the commands that plan or
    estimate a GPU type (`listed`: one of --gpu's list; not `planned`: one setting estimated, solve memory's, whose
    estimate is the same over any link: no cost weighs SP, and no caution asks for an unstated interconnect)."""
    lacked = " (of a list's names, the one it lacks)" if listed else ""
    links = ("(infinity-fabric: AMD's, whose Env plans are cautioned as ROCm's; pcie: SP's all-to-all then crosses "
             "PCIe: the cost weighs SP sp_pcie_factor times, and an SP plan is cautioned); default: not stated, SP "
             "weighed as on NVLink, and an SP plan cautioned to state it") if planned else (
        "(infinity-fabric: AMD's, whose Env settings are cautioned as ROCm's; pcie: SP's all-to-all then crosses PCIe, "
        "and an SP setting is cautioned); default: not stated, no caution (the estimate is the same over any link)")
    parser.add_argument("--gpu-memory", metavar="SIZE", type=gpu_memory,
                        help=f"the memory of --gpu NAME, a GPU type the catalogue lacks{lacked}: GB as sold (64, "
                        "64G, 64GB), taken as 64 GiB, as --host-ram takes GB; or the driver's figure, exactly: "
                        "nvidia-smi's total (65536MiB) or GiB (64GiB: 65536 MiB; 79.19GiB, torch's total capacity); "
                        "its plans are estimates, unless the "
                        "driver's figure is that of a GPU type with tables (81920MiB or 80GiB: the A100-80GB's), "
                        "whose plans it then gets")
    parser.add_argument("--gpu-interconnect", metavar="LINK", choices=INTERCONNECTS,
                        help="with --gpu-memory: how that GPU type's GPUs in a node reach one another: "
                        f"{either(INTERCONNECTS)} {links}")


def add_cells_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """--cells, for the commands that plan or estimate with tables."""
    parser.add_argument("--cells", metavar="FILE", type=path_argument("file to read"), action="append",
                        help="cells you measured, a GPU table file in the tables' format (as solve calibrate "
                        "--cells; repeatable): tables of their GPU type, which vouch for plans as the source's do")


def add_token_budget_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
                            from_config: bool = False, caps: bool = False) -> None:
    """--token-budget, for the commands that plan (`from_config`: the one that also reads a Trinity config; `caps`:
    one that also takes a cap, N, as that one does)."""
    default = "default, unless --from-config's config sets a lower one, which is then N" if from_config else "default"
    caps = caps or from_config
    raised = "; where N leaves no plan for the length, the answer names the smallest N that does" if from_config else ""
    tokens = ("; or N (32768 or 32k): as auto, but no plan takes more than N tokens per GPU, and each holds a "
              f"sequence at N (ceil(L / SP) <= N){raised}") if caps else ""
    parser.add_argument("--token-budget", metavar="MODE|N" if caps else "MODE",
                        type=planner_token_budget if caps else token_budget_mode,
                        help="trainer.max_token_len_per_gpu: Trinity's default, ceil(2 x L / SP), for every plan "
                        f"({default}); or auto: an estimated plan that "
                        "does not fit at the default takes the most tokens per GPU the memory model fits, at least "
                        f"ceil(L / SP) (more micro-batches: slower steps, which the cost does not count){tokens}")


def add_train_batch_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
                           from_config: bool = False) -> None:
    """--train-batch-size, for the commands that plan (`from_config`: the one that also reads a Trinity config)."""
    default = " (default: --from-config's, else not checked)" if from_config else ""
    parser.add_argument("--train-batch-size", metavar="N", type=whole_number(1, MAX_TRAIN_BATCH),
                        help="experiences per training step (Trinity's buffer.train_batch_size, by default batch_size "
                             "x repeat_times): only trainers whose data-parallel ranks (GPUs / SP) divide it, as "
                             "Trinity requires, or with --trinity-version 0.5.0 and 0.5.1 the trainer GPUs themselves"
                             f"{default}")


PLANS_HOST_RAM = f"it rules out plans that do not fit there ({HOST_NEED_WORDS})"
"""What --host-ram does for the commands that plan (`add_host_ram_option`'s default)."""


def add_host_ram_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
                        judged: str = PLANS_HOST_RAM) -> None:
    """--host-ram, for the commands that plan, or with `judged`, what it does for one that judges one setting (`solve
    memory`)."""
    parser.add_argument("--host-ram", metavar="GiB", type=host_memory,
                        help=f"host memory per node the trainer can have, in {HOST_RAM_UNITS}; {judged}; the OS, Ray, "
                        "the data loader and the rollout are not counted: leave room for them (default: not checked)")


REFERENCE_DEFAULT = "counted but with --lora-rank"
"""Whether a command without a Trinity config counts the reference model (`add_reference_option`)."""


def add_reference_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
                         default: str = REFERENCE_DEFAULT) -> None:
    """--reference/--no-reference, for the commands that count a node's host memory need (`default`: what counts
    without either; --from-config decides it: `solver.query.TrinityConfig.reference_model`)."""
    parser.add_argument("--reference", action=OnceFlag,
                        help="whether the run builds a reference model, whose pinned shards the host memory need "
                        "counts: --no-reference for one that builds none (SFT on Trinity 0.6 or 0.5.2; refused with "
                        "--trinity-version 0.5.0, 0.5.1 or 0.5, which may build one whatever the algorithm; LoRA: "
                        f"refused with --lora-rank, as no release builds one); default: {default}")


def add_lora_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup, default: str) -> None:
    """--lora-rank, for the commands that estimate a setting or plan (`default`: what counts without it)."""
    parser.add_argument("--lora-rank", metavar="RANK", type=whole_number(0, MAX_LORA_RANK),
                        help="count a LoRA run's states at rank RANK on every linear layer but the output projection "
                        "(Trinity's default target_modules): the frozen base's fp32 weights and the adapter's "
                        "weights, gradients and Adam moments; the tables, which measured full fine-tuning, then vouch "
                        f"by inference and refute nothing; 0 for full fine-tuning (default: {default})")


def add_lora_targets_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup, default: str,
                            written: bool = False) -> None:
    """--lora-targets and --lora-exclude, for the commands that count a LoRA run's adapter on one setting or plan
    (`default`: the modules counted without them; `written`: the command writes a fragment, which writes them);
    `solver.query.given_lora_targets` reads them, once the model is known."""
    from solver.tables.peft_match import LORA_TARGETS_FORMS  # not solver.query: --help loads no models

    parser.add_argument("--lora-targets", metavar="TARGETS",
                        help="with --lora-rank: the modules the adapter is counted on, as Trinity's "
                        f"model.lora_configs[0].target_modules names them: {LORA_TARGETS_FORMS.replace('%', '%%')}; "
                        f"{'a fragment writes them as target_modules; ' if written else ''}refused where they match "
                        "no module of the model, match one all-linear leaves out, or are refused by PEFT on the "
                        "release's module names "
                        f"(default: {default})")
    own = (", or a --from-config config's own target_modules", "a fragment writes it as exclude_modules; ",
           ", a --from-config config's exclude_modules where --lora-targets is not given") if written else ("", "", "")
    parser.add_argument("--lora-exclude", metavar="REGEX",
                        help="with --lora-rank: a regular expression of the modules the adapter leaves out of those "
                        f"--lora-targets gives (or all-linear's{own[0]}), as Trinity's "
                        "model.lora_configs[0].exclude_modules, which PEFT matches whole module names with "
                        f"(.*\\.mlp\\..*: every MLP layer); {own[1]}refused where it is empty, no regular expression "
                        f"or leaves out every module (default: none{own[2]})")


def add_critic_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup, default: str) -> None:
    """--critic, for the commands that estimate a setting or plan (`default`: what counts without it)."""
    parser.add_argument("--critic", metavar="WHERE", choices=CRITIC_CHOICES,
                        help="count a PPO critic trained beside the actor on the same GPUs (Trinity's ppo), its fp32 "
                        "states 16 bytes per parameter: WHERE is resident (on the GPUs), offloaded (in host memory: "
                        "its own offload_policy) or reloaded (in host memory, back on the GPUs for its own update: "
                        "param_offload and optimizer_offload without offload_policy), or none to count none; the "
                        "tables, which measured the actor alone, then vouch for "
                        f"nothing and refute as before (default: {default})")


def add_dpo_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup, default: str, writes: str = "") -> None:
    """--dpo, for the commands that estimate a setting or plan (`default`: what counts without it; `writes`: what the
    option writes, where the command writes a config, for every model)."""
    parser.add_argument("--dpo", action="store_true",
                        help=f"the run trains DPO: {writes}for a model trained one padded sequence per micro-batch (of "
                        "--model-config, running its own modeling code), count a pair per micro-batch, a chosen and a "
                        "rejected sequence (another model's estimates are as without it); refused with a PPO critic, "
                        f"and without LoRA with --no-reference (default: {default})")


def add_memory_model_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """--margin and --memory-model, for the commands that estimate."""
    parser.add_argument("--margin", metavar="F", type=margin_fraction,
                        help="safety margin of estimates, a fraction of usable memory (0.03) or a percentage (3%%); "
                        f"default: the memory model's ({DEFAULT_MARGIN} for the shipped one), more on cards of at most "
                        f"{SMALL_CARD_GIB:g} GiB, to cover the GiB their estimates run low")
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
                        help="cost weights YAML (offload, sp, env, offload_moe_scaling, sp_pcie_factor, critic; "
                        "default: the shipped costs.yaml)")


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
                        help=f"GPUs per node, at most {MAX_NODE_GPUS} (default: {default}): a trainer on more takes "
                        "whole nodes and keeps each SP group in one node")
