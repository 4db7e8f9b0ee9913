"""The argument parser of every ``solve`` command: a one-line usage on errors, options given once."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import itertools
import re
import shlex
import sys
import unicodedata
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, get_args

from solver.cli.argtypes import output_path
from solver.cli.output import escaped_line
from solver.cli.status import BAD_INPUT
from solver.tables import (
    CHOICES_MEANT,
    CRITIC_CHOICES_MEANT,
    INTERCONNECTS_BY_OTHER_NAMES,
    MAX_GPUS,
    NODE_GPUS,
    NODE_INTERCONNECTS_BY_OTHER_NAMES,
    NodeInterconnect,
    QueryError,
    and_joined,
    brief,
    choice_meant,
    counted,
    cut,
    either,
    folded_choice,
    interconnect_meant,
    thousands_of_tokens,
)

if TYPE_CHECKING:
    from _typeshed import SupportsWrite


MEANT = {
    **dict.fromkeys(("--max-model-len", "--max-len", "--maxlen", "--length", "--max-length", "--seq-len",
                     "--seqlen", "--sequence-length", "--context", "--context-len", "--context-length", "--ctx",
                     "--tokens", "--max-seq-len", "--max-seq-length", "--max-sequence-length", "--seq-length",
                     "--model-max-length", "--cutoff-len"), ("--len",)),
    **dict.fromkeys(("--num-gpus", "--num-gpu", "--gpu-count", "--gpu-num", "--max-gpus", "--trainer-gpus",
                     "--world-size", "--num-processes", "--nproc", "--nprocs"), ("--gpus", "--gpus-up-to")),
    "--gpus": ("--gpus-up-to",),
    **dict.fromkeys(("--gpu-type", "--gpu-name", "--device"), ("--gpu",)),
    **dict.fromkeys(("--gpus-per-node", "--gpu-per-node", "--nproc-per-node", "--n-gpus-per-node"), ("--node-gpus",)),
    **dict.fromkeys(("--ulysses", "--ulysses-sp", "--ulysses-sequence-parallel-size", "--sequence-parallel",
                     "--sp-size"), ("--sp",)),
    **dict.fromkeys(("--max-token-len-per-gpu", "--ppo-max-token-len-per-gpu", "--log-prob-max-token-len-per-gpu"),
                    ("--token-budget",)),
    **dict.fromkeys(("--param-offload", "--optimizer-offload", "--offload-policy", "--fsdp-offload", "--offload-param",
                     "--offload-optimizer", "--offload-param-device", "--offload-optimizer-device"), ("--offload",)),
    "--expandable-segments": ("--env",),
    **dict.fromkeys(("--documented", "--tables-only", "--only-tables", "--measured-only", "--no-memory-model",
                     "--evidence"), ("--no-estimate",)),
    **dict.fromkeys(("--model-name", "--model-path", "--model-name-or-path", "--models"), ("--model",)),
    **dict.fromkeys(("--trinity", "--emit-trinity", "--yaml", "--yml"), ("--emit trinity", "--emit-dir")),
    **dict.fromkeys(("--release", "--trinity-release"), ("--trinity-version",)),
    "--emit": ("--emit-dir",),
    "--out": ("--emit-dir", "--svg"),  # solve's and solve calibrate's file, where solve cluster and solve map write
    "--write": ("--emit-dir",),
    **dict.fromkeys(("--output", "--output-file", "-o"), ("--out", "--emit-dir", "--svg")),
    **dict.fromkeys(("--config", "--trinity-config"), ("--from-config",)),
    **dict.fromkeys(("--host-memory", "--cpu-memory", "--ram", "--cpu-ram", "--system-ram", "--system-memory",
                     "--host-mem", "--mem"), ("--host-ram",)),  # Slurm's --mem: a node's host memory
    **dict.fromkeys(("--vram", "--gpu-ram", "--gpu-mem-gb", "--gpu-memory-gb", "--memory-per-gpu"), ("--gpu-memory",)),
    **dict.fromkeys(("--format", "--output-format", "--json-output"), ("--json",)),
    **dict.fromkeys(("--rollout", "--rollout-gpu", "--vllm-gpus"), ("--rollout-gpus",)),
    "--batch-size": ("--train-batch-size",),
    **dict.fromkeys(("--threads", "--num-threads", "--num-workers", "--num-search-workers"), ("--workers",)),
    **dict.fromkeys(("--ppo", "--use-critic", "--with-critic"), ("--critic",)),  # not --dpo, a typo away from --ppo
    **dict.fromkeys(("--lora", "--lora-r", "--lora-dim", "--rank"), ("--lora-rank",)),
    "-v": ("--version",),  # -V, as options are matched in lower case
    "-m": ("--model",),
    **dict.fromkeys(("--min-gpus", "--fewest-gpus"), ("--minimize gpus",)),
    **dict.fromkeys(("--longest", "--longest-context", "--max-context"), ("--maximize len",)),
    "--budget-gpus": ("--gpus", "--gpus-up-to"),  # the Python API's keywords (solver.plan's, solver.map_plans')
    "--reference-model": ("--reference",),
    "--lora-exclude-modules": ("--lora-exclude",),
}
"""Options by other tools' names (Trinity's max_model_len, torchrun's nproc_per_node, accelerate's num_processes and
DeepSpeed's offload_optimizer_device, CP-SAT's num_workers, TRL's max_seq_length, Megatron's seq_length, Slurm's
mem), by the Python API's keywords (budget_gpus) or another command's, hyphens for underscores, and the options they
mean, in order: an unknown option is told the first of them the command has (one given with a value, --minimize
gpus, where the command's takes that value)."""

OPTION_CHOICES_MEANT = {"critic": CRITIC_CHOICES_MEANT}
"""Choices by other words for them that one option takes in its own sense, by its dest, hyphens for underscores, with
the choice they mean, before `CHOICES_MEANT`'s (``--critic cpu``: 'offloaded', its states in host memory; ``--critic
gpu``, ``--critic true``: 'resident', on the GPUs; where ``--minimize gpu`` means 'gpus')."""

OUTPUT_OPTIONS = ("--output", "--output-file", "-o", "--format", "--output-format")
"""Other tools' options for where, or in what format, output goes: given a format's name (`FORMATS_MEANT`), they mean
that format's option, not --out (which writes a fragment to a file of that name) nor --json (``--format yaml``)."""

FORMATS_MEANT = {"json": ("--json",), **dict.fromkeys(("yaml", "yml", "trinity"), ("--emit trinity", "--emit-dir"))}
"""Output formats by name, and the options that give them, in order: ``--output json`` is told the first of them the
command has."""

ALGORITHM_OPTIONS = ("--algorithm", "--algorithm-type", "--algo")
"""Options naming the RL algorithm (Trinity's algorithm.algorithm_type): given one by name (`ALGORITHMS_MEANT`), they
mean the option that plans for it."""

ALGORITHMS_MEANT = {"ppo": ("--critic",), "dpo": ("--dpo",)}
"""Algorithms by name, and the options that plan for them: ``--algorithm ppo`` is told --critic (its critic's
states), ``--algorithm dpo`` --dpo."""

GROUP_SIZE_WORDS = ("a prompt's rollouts count only in the train batch: --train-batch-size B, the experiences per step "
                    "(buffer.batch_size x algorithm.repeat_times)")
"""What verl's rollout.n, Trinity's repeat_times and TRL's num_generations (not --rollout-gpus) are told."""
MICRO_BATCH_WORDS = ("Trinity packs micro-batches by tokens (trainer.use_dynamic_bsz, its default): --token-budget N "
                     "caps max_token_len_per_gpu")
"""What verl's and TRL's micro-batch sizes are told."""

ROLLOUT_UTILIZATION_WORDS = ("vLLM's share of a rollout GPU is the rollout's own setting, "
                             "explorer.rollout_model.gpu_memory_utilization: rft-solver plans the trainer's GPUs")
"""What vLLM's --gpu-memory-utilization is told (not the --gpu-memory a typo away, the memory of a GPU type of one's
own)."""

VERL_RELEASE_WORDS = ("rft-solver takes no verl release: a line that holds on one verl line alone says which (before "
                      "0.8, or 0.8 or later); --trinity-version V names Trinity's release")
"""What an option naming verl's release is told (Trinity 0.6 runs on verl 0.7 or later, whose lines differ)."""

PRECISION_WORDS = ("rft-solver counts verl's mixed precision whatever a checkpoint's torch_dtype: the actor's weights "
                   "in fp32 (Trinity's model_dtype), with fp32 gradients and Adam moments for those it trains, and "
                   "bf16 activations and logits")
"""What an option of another tool's numeric precision (--dtype, --bf16) is told: a config.json's ``torch_dtype`` is
not read (docs/memory.md, A model the catalogue lacks)."""

SEED_WORDS = ("the command takes no seed: CP-SAT's is fixed (the Python API's seed= sets it), and a proven answer "
              "(optimal) is the same on every run; one a time limit cut short may differ with the machine's load, "
              "--workers or the OR-Tools version (solve cluster's, with one worker, only where it says the wall clock "
              "stopped a step)")
"""What a seed is told: which answers repeat (docs/concepts.md, docs/cluster.md's Determinism)."""

ALGORITHM_WORDS = ("without these options rft-solver counts a run as GRPO trains it: the actor and a reference model "
                   "(none with --lora-rank), no critic; --critic WHERE adds PPO's critic, --dpo DPO and --no-reference "
                   "a run without a reference model (SFT on Trinity 0.6, with --rollout-gpus 0: no rollout)")
"""What an algorithm option is told where its value names no option of `ALGORITHMS_MEANT` (``--algorithm grpo``)."""

CRITIC_MODEL_WORDS = ("rft-solver counts a PPO critic as the actor's model (--model), a value head for its output "
                      "projection: --critic says where its states are held")
"""What a critic's model given by name is told (``--critic-model Qwen3-14B``, ``--critic 8B``): rft-solver sizes no
critic of another model (a config's ``model.critic_model_path`` is counted at ``model.model_path``'s size)."""

OBJECTIVE_WORDS = ("the objective is a flag here: --maximize len, --minimize gpus or --minimize gpu-hours, and "
                   "without one the cheapest plan (the Python API's objective=)")
"""What the Python API's objective keyword, given as an option, is told."""

NODE_LINK_WORDS = ("the link between nodes is no option: the cost takes a trainer's nodes as joined by InfiniBand or "
                   "RoCE, and solve cluster reads it from a pool's node_interconnect")
"""What a link between nodes given on the command line (``--node-interconnect infiniband``, ``--gpu-interconnect
infiniband``) is told: no command takes it, and --gpu-interconnect is the link between a node's GPUs."""
GPU_LINK_WORDS = "--gpu-interconnect (a pool's gpu_interconnect) is the link between a node's GPUs"
"""What --gpu-interconnect states, said beside `NODE_LINK_WORDS`."""

COUNTS_NOTHING = {
    "--seed": (None, SEED_WORDS),
    "--objective": ("--maximize", OBJECTIVE_WORDS),
    **dict.fromkeys((*ALGORITHM_OPTIONS, "--sft", "--grpo"), ("--critic", ALGORITHM_WORDS)),
    "--lora-alpha": ("--lora-rank", "LoRA's alpha changes no memory: --lora-rank is what counts"),
    **dict.fromkeys(("--critic-model", "--critic-model-path", "--critic-path"), ("--critic", CRITIC_MODEL_WORDS)),
    **dict.fromkeys(("--dtype", "--torch-dtype", "--model-dtype", "--precision", "--mixed-precision", "--bf16",
                     "--bfloat16", "--fp16", "--float16", "--half", "--fp32", "--float32"), (None, PRECISION_WORDS)),
    **dict.fromkeys(("--verl-version", "--verl"), ("--trinity-version", VERL_RELEASE_WORDS)),
    **dict.fromkeys(("--rollout-n", "--repeat-times", "--n-samples", "--num-generations", "--group-size"),
                    ("--train-batch-size", GROUP_SIZE_WORDS)),
    **dict.fromkeys(("--micro-batch-size", "--ppo-micro-batch-size", "--ppo-micro-batch-size-per-gpu",
                     "--log-prob-micro-batch-size-per-gpu", "--per-device-train-batch-size",
                     "--gradient-accumulation-steps"),
                    ("--token-budget", MICRO_BATCH_WORDS)),
    "--gpu-memory-utilization": (None, ROLLOUT_UTILIZATION_WORDS),
    **dict.fromkeys(("--max-prompt-length", "--max-response-length", "--max-prompt-tokens", "--max-response-tokens"),
                    ("--len", "--len L is the prompt and the response together: Trinity's model.max_model_len")),
    **dict.fromkeys(("--node-interconnect", "--nodes-interconnect", "--inter-node", "--internode", "--network",
                     "--fabric", "--infiniband", "--ib", "--roce"), (None, f"{NODE_LINK_WORDS}; {GPU_LINK_WORDS}")),
    **dict.fromkeys(("--use-dynamic-bsz", "--gradient-checkpointing", "--enable-gradient-checkpointing",
                     "--use-remove-padding", "--remove-padding"),
                    (None, ("rft-solver plans with Trinity's defaults on: dynamic batch sizes, gradient checkpointing "
                            "and remove padding (dynamic batch sizes off for DPO, whose pairs they split, and with "
                            "remove padding for a model of its own attention code, InternLM2's); solve --from-config "
                            "says where a config turns one off"))),
}
"""Options of training scripts that rft-solver does not take (as nothing it counts, or counted in another option),
with the option of this command the words point to (None: none) and the words an unknown one is told: verl's
rollout.n, micro-batch sizes (accelerate's gradient accumulation too) and release, Trinity's repeat_times and
max_response_tokens, TRL's num_generations, a numeric precision, vLLM's memory share, the link between nodes (a
cluster file's node_interconnect, where --gpu-interconnect, a typo away, is a node's GPUs'), and an algorithm given as
a flag (--sft, --grpo: --ppo and --dpo are guessed as the options that count them)."""


def one_typo_apart(written: str, name: str) -> bool:
    """Whether `written` is `name` with one typo: a character changed, left out, added, or swapped with the next
    (--lenght, --legth for --length); not two (--nodes is not --models)."""
    if abs(len(written) - len(name)) > 1 or written == name:
        return False
    shorter = min(len(written), len(name))
    start = next((at for at in range(shorter) if written[at] != name[at]), shorter)  # the first character that differs
    rest, other_rest = written[start:], name[start:]
    swapped = rest[:2][::-1] == other_rest[:2] and rest[2:] == other_rest[2:]
    return swapped or rest[1:] == other_rest[1:] or rest[1:] == other_rest or rest == other_rest[1:]


def _options_named(argv: Sequence[str]) -> Iterator[tuple[str, str]]:
    """Each word of `argv` before ``--`` (after it, none is an option), with the option it names: the word up to an
    ``=`` (``--len=8k``: ``--len``)."""
    for word in itertools.takewhile(lambda word: word != "--", argv):
        yield word, word.split("=", 1)[0]


def _options_valued(argv: Sequence[str]) -> Iterator[tuple[str, str]]:
    """Each option `_options_named` names in `argv`, with the value it would take: after its ``=``, else the next
    word ("" at the end)."""
    for at, (word, option) in enumerate(_options_named(argv)):
        yield option, word[len(option) + 1:] if word != option else argv[at + 1] if at + 1 < len(argv) else ""


RELEASE_WORD = re.compile(r"v?\d+\.\d+(\.\d+)?\S*")
"""A word that names a release (``0.6``, ``v0.5.1``): given to an unknown ``--trinity``, it means --trinity-version."""


FILE_SUFFIXES = (".yaml", ".yml", ".json")
"""The ends of the names of the files rft-solver reads: a stray word with one names a file, given without its option."""

NAMED_VALUES = {"FILE": "a file name", "PATH": "a file or folder name", "DIR": "a folder name"}
"""What an option's value names, by its metavar: said where the option is given without one (``--write``)."""

VALUES_BY_OTHER_NAMES = {
    **{("gpu_interconnect", other): interconnect_meant(other) for other in INTERCONNECTS_BY_OTHER_NAMES},
    **{("gpu_interconnect", node_link): f"{GPU_LINK_WORDS}; {NODE_LINK_WORDS}"
       for node_link in (*get_args(NodeInterconnect), *NODE_INTERCONNECTS_BY_OTHER_NAMES)},
}
"""Values by another tool's name (``--gpu-interconnect xgmi``, as rocm-smi --showtopo prints the link), with the
value they mean, and a link between nodes given as a node's GPUs' (``--gpu-interconnect infiniband``), with what each
link is: every command's `Parser.elsewhere` holds them."""

NODE_COUNTS = ("--nodes", "--node", "--nnodes", "--num-nodes", "--node-num", "--node-count", "--num-machines")
"""Options that count nodes (torchrun's --nnodes, accelerate's --num_machines, Trinity's node_num), which a command
that counts the trainer's GPUs (--gpus, on nodes of --node-gpus) answers with that count."""

TRAINER = "the trainer rft-solver plans, verl's FSDP,"
"""How the words of `OTHER_PARALLELISMS` name the trainer."""

OTHER_PARALLELISMS = {
    **dict.fromkeys(("--tp", "--tp-size", "--tensor-parallel", "--tensor-parallel-size",
                     "--tensor-model-parallel-size"),
                    (f"{TRAINER} has no tensor parallelism: Ulysses SP splits each sequence over{{--sp| --sp S}} GPUs "
                     "instead; the rollout's tensor parallelism is its own, "
                     "explorer.rollout_model.tensor_parallel_size")),
    **dict.fromkeys(("--pp", "--pp-size", "--pipeline-parallel", "--pipeline-parallel-size",
                     "--pipeline-model-parallel-size"),
                    f"{TRAINER} has no pipeline parallelism: FSDP shards every layer over the trainer GPUs"
                    "{--gpus| (--gpus N)}"),
    **dict.fromkeys(("--ep", "--ep-size", "--expert-parallel", "--expert-parallel-size",
                     "--expert-model-parallel-size", "--expert-tensor-parallel-size", "--etp"),
                    f"{TRAINER} has no expert parallelism: FSDP shards the experts over the trainer GPUs"
                    "{--gpus| (--gpus N)} like every other weight; the rollout's expert parallelism is its own, "
                    "explorer.rollout_model.enable_expert_parallel"),
    **dict.fromkeys(("--dp", "--dp-size", "--data-parallel", "--data-parallel-size"),
                    "the data-parallel ranks are not given: they are the trainer GPUs over the SP degree"
                    "{--sp| (--gpus N, --sp S)}"),
    **dict.fromkeys(("--cp", "--cp-size", "--context-parallel", "--context-parallel-size"),
                    f"{TRAINER} splits a long sequence over GPUs by Ulysses SP{{--sp|: --sp S}}"),
    **dict.fromkeys(("--zero", "--zero2", "--zero3", "--zero-3", "--zero-stage", "--fsdp", "--fsdp2", "--deepspeed"),
                    f"{TRAINER} always shards the parameters, gradients and optimizer states over the trainer GPUs, "
                    "as ZeRO-3 does; Offload moves them to host memory{--offload| (--offload)}"),
    **dict.fromkeys(("--strategy", "--trainer-strategy", "--actor-strategy"),
                    f"{TRAINER} is Trinity's trainer_strategy fsdp or fsdp2, and a plan with Offload"
                    "{--offload| (--offload)} sets fsdp2, which CPU offload needs; a megatron trainer is not planned"),
}
"""Options of other trainers' parallelisms (Megatron's, vLLM's, DeepSpeed's), with what verl's FSDP trainer, which
rft-solver plans, does instead: said by every command, in place of a guess a typo away that means something else
(--tp: --top; --dp: --dpo, DPO training; --pp: --ppo's --critic; --fsdp: --sp), which no command makes. A part in
braces, ``{--sp| --sp S}``, names an option: its words after ``|`` said where the command has it (solve, solve
memory), left out where the command chooses that itself (solve map, solve cluster: `_parallelism_words`)."""

OPTION_PART = re.compile(r"\{(--[a-z-]+)\|([^}]*)\}")
"""A part of `OTHER_PARALLELISMS`' words that names an option: the option, then the words said where a command has
it."""


COLOUR_OPTIONS = ("--color", "--colour", "--colors", "--colours", "--no-color", "--no-colour", "--no-colors",
                  "--no-colours", "--monochrome")
"""Other tools' options for colour (``ls --color=never``, ``--no-color``): rft-solver takes it from the environment."""
COLOUR_HINT = (" (colour follows the environment, not an option: NO_COLOR=1 turns a terminal's off, and FORCE_COLOR=1 "
               "turns it on in a pipe, which otherwise gets none)")
"""The guess for one of `COLOUR_OPTIONS`."""


OTHER_NAMES = frozenset({*MEANT, *COUNTS_NOTHING, *OTHER_PARALLELISMS, *COLOUR_OPTIONS, *NODE_COUNTS, *OUTPUT_OPTIONS,
                         *ALGORITHM_OPTIONS})
"""The names of other tools' options that the hints know (beside a parser's `Parser.in_file`), each read as it is:
--nodes and --node-interconnect start with ``no``, but are no --no-des (`Parser._spelled`)."""


class Parser(argparse.ArgumentParser):
    """argparse with a one-line usage on errors: the problem, not the whole synopsis; options only by their whole
    names (argparse's prefixes made `solve cluster --emit trinity` write the configs into ./trinity, as --emit-dir)."""

    def __init__(self, *args: Any, elsewhere: dict[tuple[str, str], str] | None = None,
                 in_file: dict[str, str] | None = None, instead: dict[str, str] | None = None,
                 several: dict[str, str] | None = None,
                 interrupted_early: Callable[[argparse.Namespace], None] | None = None, **kwargs: Any) -> None:
        """argparse's; `elsewhere` maps an option's destination and a value it refuses to where that value is
        taken (``solve --minimize nodes``: solve cluster's; ``--minimize len``: --maximize len), said after the
        accepted values; `in_file` maps another command's option to the field of this command's file that gives it
        (``solve cluster --host-ram``: a pool's host_ram_gb), and `instead` to what to run for what it asks (``solve
        memory --from-config``: solve's verdict), each said where that option is refused; `several` maps an option
        of one value to what to run for several (solve's --model: solve map --model, the list in place of ``{}``),
        said where a second value follows the first, each naming one (``--model 8B 14B``, not ``--model qwen3 8b``);
        `interrupted_early` says on stderr what Ctrl-C leaves once the arguments are read, before the command runs
        (solve cluster: nothing placed), in place of the bare ``interrupted``."""
        super().__init__(*args, **{"allow_abbrev": False, **kwargs})
        self.elsewhere = {**VALUES_BY_OTHER_NAMES, **(elsewhere or {})}
        self.in_file = in_file or {}
        self.instead = instead or {}
        self.several = several or {}
        self.interrupted_early = interrupted_early
        self.others: Callable[[], dict[str, Collection[str]]] = dict
        """The options of the other commands, by their names (``solve``: its options), made only for an option this
        command lacks: one of them given here is named as theirs (`_refuse_others_option`)."""
        # A negative number in any form (-1k, -1e-9, -5GB) is a value to refuse as such, not an unknown option.
        self._negative_number_matcher = re.compile(r"^-\.?\d")
        # An option that takes a value takes it once (its argument groups share this registry).
        self.register("action", None, _Once)
        self.register("action", "store", _Once)
        self._quiet = False
        """Whether an error raises `_QuietError` rather than ending the run (`_positional_missing`'s parse)."""

    def parse_known_args(self, *args: Any, **kwargs: Any) -> Any:
        """argparse's, without the bookkeeping of `_Once` in the namespace."""
        namespace, rest = super().parse_known_args(*args, **kwargs)
        namespace.__dict__.pop("_given_once", None)
        return namespace, rest

    def parse_args(self, args: Iterable[str] | None = None, namespace: Any = None) -> Any:
        """argparse's, with the unrecognized arguments cut as `cut` cuts (argparse names them all), and the option
        the first unknown one most likely meant (--maximise: --maximize), or the option that took the word before it
        (`_took_one_word`); an unrecognized argument is named before a required option that is missing."""
        argv = sys.argv[1:] if args is None else list(args)
        self._refuse_one_hyphen(argv)
        self._refuse_others_option(argv)
        self._refuse_together(argv)
        self._refuse_flag_value(argv)
        helped = not {"-h", "--help"}.isdisjoint(argv)  # --help prints the required options' usage as required
        if not helped:
            self._refuse_beside_version(argv)
        required = [] if helped else [action for action in self._actions if action.required and action.option_strings]
        with _not_required(required):  # checked last: --max-model-len's guess (--len) before "--len is required"
            parsed, rest = self.parse_known_args(argv, namespace)
        if rest and rest != ["--"]:  # a last ``--`` ends the options (POSIX): none follows, no word is left
            rest, missing = self._positional_given_back(argv, rest, parsed)
            options = [option for word, option in _options_named(rest) if word.startswith("-")]  # -V too: --version
            close = [hint for option in options if (hint := self._option_hint(option))]
            meant_value = (self._meant_by_value(rest, OUTPUT_OPTIONS, FORMATS_MEANT)
                           or self._meant_by_value(rest, ALGORITHM_OPTIONS, ALGORITHMS_MEANT)
                           or self._release_meant(rest))
            if meant_value:
                close.insert(0, f" (did you mean {meant_value}?)")
            elif formats := self._formats_hint(rest):
                close.insert(0, formats)
            if not rest[0].startswith("-") and (command := self._command_named(rest[0])):
                close.insert(0, f" (did you mean {command}?)")  # ``solve --gpu h100 memory``: the command first
            after_options = f" (after --, no word is an option, and {self.prog} takes none there)"
            guess = (close[0] if close else after_options if rest[0] == "--" else self._counted_in_gpus(rest, parsed)
                     or self.file_hint(rest[0]) or self._took_one_word(argv, rest[0]) or self.option_word_hint(rest[0])
                     or self.value_hint(rest[0]))
            self.error(f"unrecognized arguments: {cut(' '.join(rest))}{guess}{missing}")
        if any(getattr(parsed, action.dest) is action.default for action in required):
            self.parse_known_args(argv, namespace)  # argparse's own error, naming every option missing
        return parsed

    def _positional_given_back(self, argv: list[str], rest: list[str],
                               parsed: argparse.Namespace) -> tuple[list[str], str]:
        """`rest`, the unrecognized arguments, with the word argparse read as this command's positional argument given
        back to the unknown option before it, whose value it is (``solve cluster --format yaml``: FILE.yaml read as
        'yaml'), where that word names no file (no ``.yaml``, ``.yml`` or ``.json`` name); then a word of `rest` that
        does is the positional's, and leaves `rest` (``--format yaml fleet.yaml``), or else, for a positional that
        is required, the note that it is missing, for the error to end with. `rest` and "" where argparse read no
        such word."""
        positionals = {str(getattr(parsed, action.dest)): action for action in self._actions
                       if not action.option_strings and getattr(parsed, action.dest, None) is not None}
        for at, word in enumerate(argv[:-1]):
            taken = argv[at + 1]
            if word in rest and word.startswith("-") and "=" not in word and taken in positionals and not (
                    taken.lower().endswith(FILE_SUFFIXES)):
                given = rest[:rest.index(word) + 1] + [taken] + rest[rest.index(word) + 1:]
                named = next((stray for stray in given if stray.lower().endswith(FILE_SUFFIXES)), None)
                if named is not None:
                    given.remove(named)
                if named is not None or not positionals[taken].required:
                    return given, ""
                metavar = positionals[taken].metavar
                return given, f"; {metavar} is missing ({brief(taken)}, after {word}, was read as {metavar})"
        return rest, ""

    def _option_hint(self, option: str) -> str:
        """The guess for an unknown `option`: where it is the opposite of a flag of this command (--no-json,
        --widen for --no-widen, --without-tables for --with-tables) or of --help or --version (--no-help), however
        written (`_spelled`: --nojson, --no_json), that leaving it out is the default (the flag's name would be its
        opposite's meaning); where it is a flag of this command written another way (--nowiden, --No_Widen:
        --no-widen), that flag; else the command it names, or the option it most likely means; else, where it is
        another tool's name (`MEANT`) for an option whose value this command's file gives, or one no command has
        (`in_file`: solve cluster's --host-memory or Slurm's --mem, for --host-ram; its --pool), that file's field,
        or else where another command has the option it names (solve map's --max-model-len: solve's --len), whose
        it is; "" where none is."""
        spelled = self._spelled(option)
        pointed_to, words = COUNTS_NOTHING.get(spelled, ("", ""))
        if words and (pointed_to is None or pointed_to in self._option_string_actions):
            return f" ({words})"
        if spelled in OTHER_PARALLELISMS:
            return f" ({self._parallelism_words(OTHER_PARALLELISMS[spelled])})"
        if spelled in COLOUR_OPTIONS:
            return COLOUR_HINT
        opposite = _opposite(spelled)
        takes_no_value = getattr(self._option_string_actions.get(opposite), "nargs", None) == 0  # --help's too
        if option.startswith("--") and takes_no_value and self._flag(spelled) is None:
            return f" (the default is without {opposite}: leave {option} out)"
        if option.startswith("--") and self._flag(spelled) is not None:
            return f" (did you mean {spelled}?)"
        meant = self._command_named(option) or self._meant(option, typos=option.startswith("--"))
        if meant:
            return f" (did you mean {meant}?)"
        field = next((self.in_file[name] for name in (spelled, *MEANT.get(spelled, ())) if name in self.in_file), None)
        if field:
            return f" (the file gives it: {field})"
        return next((f" (that is {meant}, an option of {and_joined(owners)}, not of {self.prog}"
                     f"{f': {self.instead[meant]}' if meant in self.instead else ''})"
                     for meant in MEANT.get(spelled, ()) if (owners := self._owners(meant))), "")

    def _spelled(self, option: str) -> str:
        """`option` as this command's options are spelled: in lower case, with hyphens for underscores, and a hyphen
        after a leading ``no`` or ``without`` (--nojson, --No_Json: --no-json; --withouttables: --without-tables),
        but for a name known as it is (this command's options, its file's, `OTHER_NAMES`: --Node_GPUs is --node-gpus,
        not --no-de-gpus)."""
        spelled = option.lower().replace("_", "-")
        if spelled in self._option_string_actions or spelled in self.in_file or spelled in OTHER_NAMES:
            return spelled
        for off in ("--without", "--no"):
            if spelled.startswith(off) and not spelled.startswith(off + "-"):
                return off + "-" + spelled.removeprefix(off)
        return spelled

    def _parallelism_words(self, words: str) -> str:
        """`words` of `OTHER_PARALLELISMS`, with each part that names an option said where this command has it and
        left out where it does not (solve map and solve cluster choose the SP degree, Offload and the GPUs)."""
        return OPTION_PART.sub(lambda part: part[2] if part[1] in self._option_string_actions else "", words)

    def _owners(self, option: str) -> list[str]:
        """The other commands that have `option`, an option this command lacks."""
        if option in self._option_string_actions:
            return []
        return [command for command, options in self.others().items() if option in options]

    def _meant_by_value(self, rest: list[str], named: tuple[str, ...],
                        meanings: Mapping[str, tuple[str, ...]]) -> str | None:
        """The option that gives what the value of an unknown option of another tool names (`named`: an output
        option, `OUTPUT_OPTIONS`, given a format, ``--output json`` or ``-o=yaml``, `FORMATS_MEANT`; an algorithm
        option, `ALGORITHM_OPTIONS`, given one, ``--algorithm ppo``, `ALGORITHMS_MEANT`), where this command has
        one; else None."""
        for option, value in _options_valued(rest):
            if self._spelled(option) in named:
                meant = self._meant_by(value.lower(), self._option_string_actions, meanings)
                if meant:
                    return meant[0]
        return None

    def _formats_hint(self, rest: list[str]) -> str:
        """Where another tool's format option is given a format this command does not write (``solve tables --format
        yaml``, ``--output-format csv``, or ``--output yaml``, `FORMATS_MEANT`'s) and the command has --json, the
        formats it writes and their options; "" otherwise."""
        options = self._option_string_actions
        for option, value in _options_valued(rest):
            spelled = self._spelled(option)
            formatted = spelled in ("--format", "--output-format") or value.lower() in FORMATS_MEANT
            if spelled in OUTPUT_OPTIONS and formatted and value and "--json" in options:
                formats = ["text, the default", "JSON with --json",
                           *(["a Trinity config with --emit trinity"] if "--emit" in options else [])]
                return f" (the formats of {self.prog}: {', '.join(formats[:-1])}, or {formats[-1]})"
        return ""

    def _release_meant(self, rest: list[str]) -> str | None:
        """--trinity-version, where this command has it and an unknown ``--trinity`` is given a release (``--trinity
        0.6``), not the --emit trinity its name alone means (`MEANT`); else None."""
        if "--trinity-version" not in self._option_string_actions:
            return None
        named = any(option.lower() == "--trinity" and RELEASE_WORD.fullmatch(value)
                    for option, value in _options_valued(rest))
        return "--trinity-version" if named else None

    def _flag(self, option: str) -> argparse.Action | None:
        """The action of this command's `option` where it is a flag, which takes no value (--json, --env, --no-widen;
        not --help nor --version); None otherwise."""
        action = self._option_string_actions.get(option)
        return action if action is not None and action.nargs == 0 and action.dest not in ("help", "version") else None

    def _flag_forms(self, flag: str) -> str:
        """How to give the flag `flag`: with its opposite where this command has both (--env or --no-env), else
        alone or not at all."""
        pair = [name for name in (flag, _opposite(flag)) if name in self._option_string_actions]
        return " or ".join(sorted(pair, key=len)) if len(pair) == 2 else f"{flag}, or leave it out"

    def _meant(self, option: str, typos: bool = True) -> str | None:
        """The option of this command that the unknown `option` most likely means: the same with hyphens for
        underscores (--train_batch_size), the first of `MEANT`'s for it that this command has (--max-model-len:
        --len; solve map's --gpus: --gpus-up-to), or with `typos`, one a typo away (--maximise: --maximize) or the one
        it starts (--max: --maximize; options are taken by their whole names alone; not --node, which counts nodes;
        a name of `MEANT`'s, which means what it names, only by whole words: --trinity, --trinity-version, but Slurm's
        --mem, a node's host memory, not --memory-model), else the option meant by a name of `MEANT`'s a typo away
        (--lenght, for --length: --len); None where none is."""
        known = [name for name in self._option_string_actions if name.startswith("--")]
        spelled = option.lower().replace("_", "-")
        named = [spelled] if spelled in known else self._meant_by(spelled, known) or self._joined_to_value(spelled)
        start = f"{spelled}-" if spelled in MEANT else spelled
        started = [name for name in known
                   if len(spelled) > 3 and spelled not in NODE_COUNTS and name.startswith(start)]
        close = (difflib.get_close_matches(option, known, n=1, cutoff=0.8) or started[:1 if len(started) == 1 else 0]
                 if typos else [])
        other_names = [name for name in MEANT if typos and name.startswith("--") and one_typo_apart(spelled, name)]
        return next(iter(named or close or [meant for name in other_names for meant in self._meant_by(name, known)]),
                    None)

    def _meant_by(self, name: str, known: Collection[str],
                  meanings: Mapping[str, tuple[str, ...]] = MEANT) -> list[str]:
        """The options of `known` that `meanings` (`MEANT`: another tool's option) says `name` means, in its order;
        one given with a value (--minimize gpus) only where this command's option takes it."""
        return [meant for meant in meanings.get(name, ()) if meant.split()[0] in known and self._takes(meant)]

    def _takes(self, meant: str) -> bool:
        """Whether this command's option takes the value `meant` gives it (``--minimize gpus``: solve's, not solve
        cluster's, whose choice is nodes); true for an option `meant` gives no value, or one of any value."""
        option, _, value = meant.partition(" ")
        choices = getattr(self._option_string_actions.get(option), "choices", None)
        return not value or choices is None or value in choices

    def _joined_to_value(self, spelled: str) -> list[str]:
        """The option of this command and the value of its choices that `spelled` joins with a hyphen
        (--maximize-len: --maximize len), as one guess; none where it joins none."""
        return [f"{option} {value}" for option, action in self._option_string_actions.items()
                for value in action.choices or () if spelled == f"{option}-{value}"][:1]

    def _command_named(self, option: str) -> str | None:
        """The other command an unknown `option` or stray word names (``solve --memory`` or ``solve --gpu h100
        memory``: the command ``solve memory``, which comes first; ``solve map --cluster``: ``solve cluster``, a
        command of its own), in the words of a guess; None where it names none."""
        name = option.removeprefix("--").lower()
        command = next((prog for prog in self.others() if prog.split()[1:] == [name]), None)
        where = "which comes first" if len(self.prog.split()) == 1 else f"not an option of {self.prog}"
        return None if command is None else f"the command {command}, {where}: {command} [options]"

    def _counted_in_gpus(self, rest: list[str], parsed: argparse.Namespace) -> str:
        """Where an unrecognized argument counts nodes (`NODE_COUNTS`: ``--nodes 2``) and this command counts trainer
        GPUs on nodes of --node-gpus: that, with the --gpus that count of nodes holds (``--gpus 16 for 2 nodes of
        8``); "" otherwise."""
        if not {"--gpus", "--node-gpus"} <= self._option_string_actions.keys():
            return ""
        for at, word in enumerate(rest):
            option, given, value = word.partition("=")
            if self._spelled(option) in NODE_COUNTS:
                value = value if given else next(iter(rest[at + 1:at + 2]), "")
                nodes = int(value) if value.isascii() and value.isdigit() and int(value) > 0 else 2
                node_gpus = getattr(parsed, "node_gpus", None) or NODE_GPUS
                held = f"{counted(nodes, 'node')} of {node_gpus} GPUs"
                gpus = (f"--gpus {nodes * node_gpus} for {held}" if nodes * node_gpus <= MAX_GPUS
                        else f"{held} are more than --gpus takes (at most {MAX_GPUS})")
                return (f" ({self.prog} counts the trainer's GPUs, not nodes: {gpus}; --node-gpus N for nodes of "
                        "another size)")
        return ""

    def file_hint(self, stray: str) -> str:
        """Where `stray`, an unrecognized word and no option, names a file (``solve calibrate cells.yaml``: a YAML or
        JSON file's name), the options of this command that read one, as a file is given; "" otherwise, and for a
        command that takes a file or folder without an option, but for a JSON file beside it where the command reads
        a placement (``solve cluster fleet.yaml now.json``: ``--current PLACEMENT.json``), and for a second YAML file
        where the command reads one (``solve cluster a.yaml b.yaml``: the second is not read)."""
        positional = [action.metavar for action in self._actions if not action.option_strings]
        if stray.startswith("-") or not stray.lower().endswith(FILE_SUFFIXES):
            return ""
        if positional:
            placement = [f"{action.option_strings[0]} {action.metavar}" for action in self._actions
                         if action.metavar == "PLACEMENT.json"]
            if placement and stray.lower().endswith(".json"):
                return f" (a placement is named after its option: {placement[0]})"
            if str(positional[0]).lower().endswith(FILE_SUFFIXES) and not stray.lower().endswith(".json"):
                return f" ({self.prog} reads one {positional[0]}: join the files in one, or run it once for each)"
            return ""
        options = [f"{action.option_strings[0]} {action.metavar}" for action in self._actions
                   if action.metavar in ("FILE", "PATH") and action.type is not output_path]
        return f" (a file is named after its option: {either(options)})" if options else ""

    def program_name_hint(self, stray: str) -> str:
        """Where `stray`, an unrecognized first word, is the program's own name given again (``solve solve --model
        4B``, ``python -m solver solve ...``, ``python -m solver solver ...``): to drop it; "" otherwise."""
        own = self.prog.split()[0]
        return (f" (the program's own name, given again: drop it, and {own} reads the words after it)"
                if stray in (own, __name__.partition(".")[0]) else "")

    def option_word_hint(self, stray: str) -> str:
        """Where `stray`, an unrecognized word, is the name of an option of this command without its hyphens (``solve
        map help``, ``solve tables json``): that option; "" otherwise."""
        return f" (did you mean the option --{stray}?)" if f"--{stray}" in self._option_string_actions else ""

    def value_hint(self, stray: str) -> str:
        """Where `stray`, an unrecognized word and no option, is a value of an option this command takes, given
        without it (``solve 8b 32k``, ``solve memory 8B``): a guess naming that option with it, for a model's name
        (--model), a GPU type's (--gpu) or a length of 1024 tokens or more (--len: ``32k``); "" otherwise."""
        if stray.startswith("-"):
            return ""
        tokens = thousands_of_tokens(stray)
        options = self._option_string_actions
        if "--len" in options and isinstance(tokens, int) and tokens >= 1024:
            return f" (did you mean --len {stray}?)"
        from solver.tables import load_catalog  # the models' validation: for a stray word alone
        catalog = load_catalog()
        for option, find in (("--model", catalog.model), ("--gpu", catalog.gpu)):
            if option in options:
                with contextlib.suppress(QueryError):
                    find(stray)
                    return f" (did you mean {option} {stray}?)"
        return ""

    def _refuse_one_hyphen(self, argv: list[str]) -> None:
        """A usage error for the first option in `argv` written with one hyphen (``-model 8B``, ``-help``), naming it
        with two: argparse names ``-model`` with no guess, and takes ``-help`` as -h given the value 'elp'."""
        for word, option in _options_named(argv):
            if len(option) > 2 and option[0] == "-" and option[1] != "-":  # no option is a number (-2): no guess
                meant = self._meant("-" + option, typos=False)
                if meant:
                    self.error(f"unrecognized arguments: {word} (did you mean {meant}?)")

    def _refuse_beside_version(self, argv: list[str]) -> None:
        """A usage error for --version given with other arguments (``solve --version extra``), naming them: argparse
        prints the version as it reads the option, whatever comes with it."""
        at = next((at for at, (_, option) in enumerate(_options_named(argv)) if option == "--version"), None)
        if "--version" in self._option_string_actions and len(argv) > 1 and at is not None:
            self.error(f"--version prints the version alone, not with {cut(' '.join(argv[:at] + argv[at + 1:]))}")

    def _refuse_others_option(self, argv: list[str]) -> None:
        """A usage error for the first option in `argv` that this command lacks and another takes (``solve memory
        --explain``: solve's): before argparse's checks, whose "arguments are required" would hide it."""
        for _, option in _options_named(argv):
            owners = self._owners(option) if option.startswith("--") else []
            if owners:
                names = and_joined(owners)
                meant = self._meant(option, typos=False)
                field, instead = self.in_file.get(option), self.instead.get(option)
                self.error(f"{option} is an option of {names}, not of {self.prog}"
                           f"{f' (did you mean {meant}?)' if meant else ''}"
                           f"{f' (the file gives it: {field})' if field else ''}{f': {instead}' if instead else ''}"
                           f"{self._positional_missing(argv)}")

    def _positional_missing(self, argv: list[str]) -> str:
        """The note that this command's required positional argument is missing, where none is given (``solve
        cluster --host-ram``: ``; FILE.yaml is missing``) or argparse would read the value of an option it lacks as it
        (``solve cluster --host-ram 1TB``: ``; FILE.yaml is missing ('1TB', after --host-ram, was read as
        FILE.yaml)``, as `_positional_given_back` says it for an unknown option); "" where it would not, or the
        arguments parse no further (--help or --version among them, or another error)."""
        if not {"-h", "--help", "--version"}.isdisjoint(argv):
            return ""
        required = [action for action in self._actions if action.required]
        self._quiet = True
        try:
            with _not_required(required):
                parsed, rest = self.parse_known_args(argv)
        except _QuietError:
            return ""
        finally:
            self._quiet = False
        absent = [action.metavar for action in required if not action.option_strings
                  and getattr(parsed, action.dest, None) is None]
        return f"; {absent[0]} is missing" if absent else self._positional_given_back(argv, rest, parsed)[1]

    def _refuse_together(self, argv: list[str]) -> None:
        """A usage error for the first two of this command's options in `argv` that do not go together, in the order
        given: an on/off pair (``--env --no-env``, ``--estimate --no-estimate``), which contradict each other, or two
        of a mutually exclusive group (``--maximize len --minimize gpus``), which exclude each other (argparse says
        'not allowed with argument'); neither is the user's answer, nor the last."""
        given = [option for _, option in _options_named(argv) if option in self._option_string_actions]
        for at, option in enumerate(given):
            for other in given[at + 1:]:
                if other == _opposite(option):
                    self.error(f"{option} and {other} contradict each other: give one of them")
                if self._excluded(option, other):
                    self.error(f"{option} and {other} exclude each other: give one of them")

    def _excluded(self, option: str, other: str) -> bool:
        """Whether `option` and `other`, options of this command, are two of one mutually exclusive group."""
        actions = {self._option_string_actions[option], self._option_string_actions[other]}
        return len(actions) == 2 and any(actions <= set(group._group_actions)
                                         for group in self._mutually_exclusive_groups)

    def _refuse_flag_value(self, argv: list[str]) -> None:
        """A usage error for the first flag of this command given a value with ``=`` (``--env=true``, ``--json=no``),
        saying how to give it, as for a value after it (`_took_one_word`); argparse says it ignored the value."""
        for word, option in _options_named(argv):
            if word != option and self._flag(option) is not None:
                self.error(f"{option} takes no value, got {brief(word[len(option) + 1:])}: {self._flag_forms(option)}")

    def _took_one_word(self, argv: list[str], stray: str) -> str:
        """Where `stray`, the first unrecognized word and no option, follows an option's value (``--model qwen3
        8b``, ``--len 32k tokens``, ``--model=qwen3 8b``), a note that the option took the one word before it; or
        follows a flag (``--json yes``), that the flag takes no value (an unknown option after one, ``--json --seed
        3``, is no value of it); where the option takes several values and `stray` is another of them (``--gpu a100
        h100``), that they are separated by commas, or, where it repeats one the option took (``--gpu a100 a100``),
        that one is enough."""
        for at, word in enumerate(argv[1:], start=1):
            before = argv[at - 1]
            option, _, value = before.partition("=") if before.startswith("--") and "=" in before else (
                argv[at - 2] if at >= 2 else "", "", before)
            action = self._option_string_actions.get(option)
            if word == stray and not stray.startswith("-") and action is not None and action.nargs is None:
                if self._another_of_several(action, option, value, stray):
                    if stray.casefold() in {name.strip().casefold() for name in value.split(",")}:
                        return f" ({option} took {brief(value)}, which names {brief(stray)} already: one is enough)"
                    return f" ({option} took {brief(value)}: several are separated by commas, {option} {value},{stray})"
                if option in self.several and all(self.value_hint(name) == f" (did you mean {option} {name}?)"
                                                  for name in (value.rstrip(","), stray)):  # not qwen3 8b
                    listed = ",".join(name.strip() for name in f"{value},{stray}".split(",") if name.strip())
                    several = self.several[option].format(listed)
                    return f" ({option} took {brief(value)}, and {self.prog} takes one; {several})"
                return f" ({option} took {brief(value)}: an option's value is one word; quote one with spaces)"
            if word == stray and not stray.startswith("-") and self._flag(before) is not None:
                return f" ({before} takes no value: {self._flag_forms(before)})"
        return ""

    def _another_of_several(self, action: argparse.Action, option: str, value: str, stray: str) -> bool:
        """Whether `option` (its `action`) takes several values separated by commas (solve's --gpu, solve map's
        --model and --budgets) and `stray`, the word after its `value`, is another of them: a number, which such an
        option takes checked (--budgets), or a name the guess for a stray word (`value_hint`) gives this option."""
        try:
            several = action.type(f"{value},{stray}") if callable(action.type) else None
        except (argparse.ArgumentTypeError, ValueError):
            return False
        numbers = isinstance(several, tuple) and all(isinstance(item, int) for item in several)
        return numbers or (isinstance(several, tuple)
                           and self.value_hint(stray) == f" (did you mean {option} {stray}?)")

    def _match_argument(self, action: argparse.Action, arg_strings_pattern: str) -> int:
        """argparse's, with the accepted values where an option with choices is given without one (``--emit``:
        'trinity'), or what its value names where it takes a file or folder (``--write``: a file name, as
        `NAMED_VALUES` says); argparse says only that it expected one argument."""
        try:
            return super()._match_argument(action, arg_strings_pattern)
        except argparse.ArgumentError as error:
            named = NAMED_VALUES.get(str(action.metavar))
            if action.nargs is not None or (action.choices is None and named is None):
                raise
            if action.choices is None:
                raise argparse.ArgumentError(
                    action, f"expected {named} ({action.option_strings[0]} {action.metavar})") from error
            accepted = ", ".join(map(repr, action.choices))
            raise argparse.ArgumentError(action, f"expected one argument (choose from {accepted})") from error

    def _get_value(self, action: argparse.Action, arg_string: str) -> Any:
        """argparse's, with a value of an option with choices taken in any case (``--gpu-interconnect PCIe``,
        ``--by Len``: 'pcie', 'len'), as the names of GPU types and models are."""
        value = super()._get_value(action, arg_string)
        return folded_choice(value, action.choices) if action.choices is not None else value

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """argparse's, with the invalid choice shown as `brief` shows it (argparse shows it whole), and where
        another option or command takes it (`elsewhere`), or else the choice another word for it means
        (`OPTION_CHOICES_MEANT`: ``--critic cpu``, 'offloaded'; `CHOICES_MEANT`: ``--maximize context``, 'len'), or
        where --critic is given a model (`_critic_model_hint`) how rft-solver sizes the critic, or where --emit is
        given a file's name (`_output_file_hint`) --out, or
        where another takes that choice (``--minimize context``: --maximize len), or else the choice it most likely
        meant (`choice_meant`, as the API guesses: ``--minimize gpu``, 'gpus'), or else where another takes the value
        it most likely meant (``--minimize length``: --maximize len)."""
        if action.choices is not None and value not in action.choices:
            accepted = ", ".join(map(repr, action.choices))
            written = str(value).lower()
            other_words = {**CHOICES_MEANT, **OPTION_CHOICES_MEANT.get(action.dest, {})}
            meant = other_words.get(written.replace("_", "-"))
            guess = choice_meant(value, action.choices, other_words)
            guessed = f"did you mean {guess!r}?" if guess else None
            taken_elsewhere = {other: hint for (dest, other), hint in self.elsewhere.items() if dest == action.dest}
            near = difflib.get_close_matches(written, taken_elsewhere, n=1)
            hint = (taken_elsewhere.get(written) or _critic_model_hint(action.dest, written)
                    or self._output_file_hint(action, str(value))
                    or (guessed if guess == meant else None) or taken_elsewhere.get(str(meant)) or guessed
                    or (taken_elsewhere[near[0]] if near else None))
            raise argparse.ArgumentError(action, f"invalid choice: {brief(value)} (choose from {accepted})"
                                                 f"{f'; {hint}' if hint else ''}")

    def _output_file_hint(self, action: argparse.Action, value: str) -> str | None:
        """Where `value`, refused by `action` (``--emit trinity.yaml``), names a file and this command has --out to
        write one: that option with it; None otherwise (`action`'s choices are what it prints, not where)."""
        out = self._option_string_actions.get("--out")
        if action.dest != "emit" or out is None or not value.lower().endswith(FILE_SUFFIXES):
            return None
        return f"did you mean --out {value}? (--emit trinity prints the plan as Trinity YAML; --out FILE writes it)"

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        """argparse's, but a write to standard output that fails raises (argparse ignores it): a reader gone before
        a --help longer than the pipe's buffer is read (``solve --help | true`` on a narrow terminal) is then told
        apart from one that read it all, as for any other output."""
        if message and file is sys.stdout:
            file.write(message)
        else:
            super()._print_message(message, file)

    def error(self, message: str) -> NoReturn:
        """A one-line usage and the one-line error, exit status 2 (argparse prints its whole usage); the error's
        control characters escaped (`escaped_line`: an unrecognized argument is shown as given), and a word of it
        typed in full-width characters named with its ASCII (`full_width_note`); raised as `_QuietError` where the
        parser is quiet."""
        if self._quiet:
            raise _QuietError(message)
        self.exit(BAD_INPUT, f"usage: {self.prog} [options] (--help lists them)\n"
                             f"{self.prog}: error: {escaped_line(message + full_width_note(message))}\n")


def _critic_model_hint(dest: str, value: str) -> str | None:
    """Where --critic (`dest` ``critic``) is given a model's name (`value`, one the catalogue knows: ``8B``,
    ``Qwen/Qwen3-14B``), how rft-solver sizes a critic (`CRITIC_MODEL_WORDS`); None otherwise. The catalogue is
    loaded only here, on that refusal (a usage error loads no models: tests/test_lazycli_s67.py)."""
    from solver.tables import load_catalog

    if dest != "critic":
        return None
    try:
        load_catalog().model(value)
    except QueryError:
        return None
    return CRITIC_MODEL_WORDS


def _opposite(option: str) -> str:
    """The option whose name says the opposite of `option`'s: --env's --no-env, --no-widen's --widen,
    --with-tables' --without-tables."""
    for on, off in (("--with-", "--without-"), ("--", "--no-")):
        if option.startswith(off):
            return on + option.removeprefix(off)
    return ("--without-" + option.removeprefix("--with-") if option.startswith("--with-")
            else "--no-" + option.removeprefix("--"))


FULL_WIDTH_WORD = re.compile(r"[^\s']*[\uff01-\uff5e][^\s']*")
"""A word with a full-width form of an ASCII character (U+FF01 to U+FF5E: ３２ｋ, －－json, the comma ，), as a Chinese,
Japanese or Korean input method types them."""


def full_width_note(message: str) -> str:
    """Where `message` quotes a word typed with full-width characters (``--len ３２ｋ``), which look like ASCII but are
    no number or option: that word in ASCII, to type instead; "" otherwise."""
    word = FULL_WIDTH_WORD.search(message)
    if word is None:
        return ""
    return (f"; {brief(word[0])} is typed in full-width characters (an input method's): type it in ASCII, "
            f"{brief(unicodedata.normalize('NFKC', word[0]))}")


class _QuietError(Exception):
    """A usage error of a parse made only to read the arguments (`Parser._positional_missing`), said by no one."""


@contextlib.contextmanager
def _not_required(actions: list[argparse.Action]) -> Iterator[None]:
    """`actions` taken as not required while the block runs."""
    for action in actions:
        action.required = False
    try:
        yield
    finally:
        for action in actions:
            action.required = True


class KeptLinesFormatter(argparse.HelpFormatter):
    """argparse's help, its description and epilog filled to the width as argparse fills them, but for indented
    lines, kept as written: a command in an example, whole on its line."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        """Each paragraph (unindented lines, up to an indented or empty one) filled as argparse fills text, each
        indented line as it is."""
        paragraphs: list[str] = []
        for line in text.splitlines():
            if line and not line.startswith(" ") and paragraphs and paragraphs[-1][:1] not in ("", " "):
                paragraphs[-1] += " " + line
            else:
                paragraphs.append(line)
        fill = super()._fill_text
        return "\n".join(line if line[:1] in ("", " ") else fill(line, width, indent) for line in paragraphs)


class _Once(argparse.Action):
    """Store an option's value, refusing a second one: given twice, ``--gpu a100 --gpu h20`` would
    otherwise answer for the H20 alone, silently."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        earlier = getattr(namespace, self.dest, None)
        both = (f"{option_string} {shlex.quote(','.join(dict.fromkeys(str(value) for value in (*earlier, *values))))}"
                if option_string and isinstance(earlier, tuple) and isinstance(values, tuple) else None)
        refuse_twice(self, parser, namespace, both)
        setattr(namespace, self.dest, values)


class OnceFlag(argparse.BooleanOptionalAction):
    """``--flag`` / ``--no-flag``, refusing a second one: ``--env --env`` (``--env --no-env``, which would pin the
    last silently, `Parser` refuses first as a contradiction)."""

    def __init__(self, *args: Any, help: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, help=help, **kwargs)
        self.help = help  # as written: Python 3.10's adds " (default: False)" where the help already says it

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        refuse_twice(self, parser, namespace)
        super().__call__(parser, namespace, values, option_string)


def refuse_twice(action: argparse.Action, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 both: str | None = None) -> None:
    """A usage error when `action`'s option was given before (bookkeeping in the namespace, which
    `Parser.parse_known_args` removes); for an option that takes a list, `both`: the one option that gives both
    lists (``--required a,b`` for ``--required a --required b``)."""
    given = namespace.__dict__.setdefault("_given_once", set())
    if action.option_strings and action.dest in given:
        parser.error(f"argument {'/'.join(action.option_strings)}: given twice: give it once"
                     f"{f', both lists in one: {both}' if both else ''}")
    given.add(action.dest)
