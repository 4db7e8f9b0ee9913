"""trinity_fragment: a plan as a Trinity YAML fragment (nested mappings, with comments), checked against Trinity's
rules before it is returned."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from pathlib import PurePath
from typing import Any

import yaml as pyyaml

from solver.query import ROLE_MICRO_BATCH_SIZES, TRAIN_BATCH_KEY, check_host_ram, check_node_gpus
from solver.results import (
    ENV_EXPORT,
    ENV_VARIABLE,
    LONG_LENGTH_VARIABLE,
    NO_ROPE_SCALING,
    CautionCode,
    Plan,
    RunsAt,
    SettingsArguments,
    TrinitySettings,
    check_or_plan_words,
    env_when,
    index_range,
    length_cautions,
    past_validated_words,
    plan_environment,
    rocm_env_caution,
    rocm_env_note,
    vllm_length_words,
    vllm_no_limit,
)
from solver.rules import (
    API_OPTIONS,
    COMMAND_OPTIONS,
    MODEL_CONFIG_PLACEHOLDER,
    OptionNames,
    batch_divisor_of,
    least_token_budget,
    nearest_dividing_batches,
    one_sequence_per_micro_batch,
    whole_nodes_violation,
)
from solver.tables import (
    NO_CRITIC,
    Fleet,
    Model,
    QueryError,
    TrinityVersion,
    and_joined,
    brief,
    check_types,
    counted,
    counted_release,
    host_ram_argument,
)
from solver.trinity.interpolation import dotted
from solver.trinity.keys import (
    LORA_CONFIGS,
    TRAINER_INPUT_LINES,
    TRAINER_INPUT_PATH,
    value_at,
    written_for_05_comment,
    yaml_flow,
    yarn_trainer_words,
)
from solver.trinity.plan_keys import (
    COMMENT_WIDTH,
    PlanKey,
    caution_comment,
    check_gpu_name,
    comment_paragraph,
    evidence_comment,
    host_memory_comment,
)
from solver.trinity.settings import checked_settings_arguments, fragment_keys, keys_leave_mode

_FAST_SAFE_LOADER = getattr(pyyaml, "CSafeLoader", pyyaml.SafeLoader)
"""PyYAML's safe loader, in C where libyaml is there: it re-reads every fragment made, for the check."""

_PARAGRAPH_LINE = re.compile(r"( *)# (\S.*)")
"""A comment line of a fragment that is a paragraph of words (not a command to paste, which its text starts with two
spaces: ``#   export ...``), its indentation and its words."""
_KEY_COMMENT_LINE = re.compile(r"( *)([^#\s][^#]*?)  # (.*)")
"""A key's line of a fragment with an end-of-line comment: its indentation, the key and its value, the comment."""


def wrapped_comments(text: str) -> str:
    """`text`, a fragment whose comment paragraphs are each on one line, with each comment line past `COMMENT_WIDTH`
    wrapped at it (`comment_paragraph`), its further lines at its indentation after their ``# ``; a key's end-of-line
    comment that takes the key's line past that width goes on lines of its own just above the key, at its indentation.
    A command to paste (a comment whose text starts with two spaces) stays whole on its line: it pastes as one."""
    lines: list[str] = []
    for line in text.splitlines():
        if len(line) <= COMMENT_WIDTH:
            lines.append(line)
        elif paragraph := _PARAGRAPH_LINE.fullmatch(line):
            lines += _comment_lines(paragraph[2], paragraph[1])
        elif keyed := _KEY_COMMENT_LINE.fullmatch(line):
            lines += [*_comment_lines(keyed[3], keyed[1]), keyed[1] + keyed[2]]
        else:  # a command to paste, or a key's line without a comment
            lines.append(line)
    return "".join(f"{line}\n" for line in lines)


def _comment_lines(words: str, indent: str) -> list[str]:
    """`words` as comment lines at `indent`, wrapped at `COMMENT_WIDTH` (`comment_paragraph`)."""
    return [f"{indent}# {part}" for part in comment_paragraph(words, len(indent))]


def _emit(keys: Iterable[PlanKey], section_comments: Mapping[tuple[str, ...], str]) -> list[str]:
    """Nested block YAML for `keys` (which must come grouped by their parent paths)."""
    lines: list[str] = []
    opened: tuple[str, ...] = ()
    seen: set[tuple[str, ...]] = set()
    for key in keys:
        parent = key.path[:-1]
        common = 0
        while common < min(len(opened), len(parent)) and opened[common] == parent[common]:
            common += 1
        for depth in range(common, len(parent)):
            prefix = parent[: depth + 1]
            if prefix in seen:
                raise ValueError(f"keys under {'.'.join(prefix)} are not grouped together")
            seen.add(prefix)
            comment = section_comments.get(prefix)
            lines.append("  " * depth + f"{parent[depth]}:" + (f"  # {comment}" if comment else ""))
        opened = parent
        line = "  " * len(parent) + f"{key.path[-1]}: {yaml_flow(key.value)}"
        lines.append(line + (f"  # {key.comment}" if key.comment else ""))
    return lines


@dataclass(frozen=True)
class _FragmentOptions:
    """`trinity_fragment`'s arguments that its header reads (its docstring says what each does)."""

    rollout_gpus: int | None
    gpu: str | None
    nodes: int
    shared_gpus: tuple[int, ...] | None
    version: TrinityVersion | None
    rocm: bool
    train_batch_size: int | None
    node_gpus: int | None
    host_ram_gb: float | None
    host_ram_source: str
    option_names: OptionNames
    check_flags: tuple[str, ...] | None
    check_environment: tuple[tuple[str, str], ...]
    dpo_mode_unset: bool = False
    dpo_mode_train: bool = False
    """Whether the keys write ``mode: train`` for DPO beside no config that names its dataset: the header says the
    dataset's path it then needs (`DPO_DATASET_NOTE`)."""
    defaults_taken: tuple[str, ...] = ()
    """The environment variables whose ``${oc.env:VAR,default}`` in the layout took their defaults, no `environ` given
    (`NoEnvironment`): the header says so (`defaults_taken_note`)."""
    left_unread: tuple[tuple[str, str], ...] = ()
    """The layout's keys left unread, no `environ` given, as each reads a ``${oc.env:VAR}`` without a default, and
    that variable: the header says so too."""
    placed_on: str | None = None
    """Where a cluster placement put the job (`placed_on_words`), which the header says under the plan; None: no
    placement's fragment."""
    running_now: str | None = None
    """What the placement does with the job as the fleet runs it now (`running_now_words`: it stays, moves or starts),
    which the header says under where it was placed; None: no placement's fragment, or none made with ``--current``."""
    config_lora_rank: int = 0
    """The LoRA rank the config planned from counts itself (`solver.trinity.TrinityConfig.lora_rank`), which the
    header's check command then gives no ``--lora-rank`` for (`check_command`); 0: none, or no config."""


def check_flags(gpu: str, own_memory: tuple[int, int | None] | None = None,
                options: Iterable[str] = ()) -> tuple[str, ...]:
    """The options ``solve --from-config CONFIG --check`` needs, besides those a fragment's header adds itself (host
    memory, Trinity release), to check a config as its plan was made: ``--gpu`` with the GPU type's name, with
    ``--gpu-memory`` for a GPU type of your own (`own_memory`: its GB as sold and its driver's MiB, which is given
    where known), then `options` (the planning's ``--cells``, ``--memory-model``, ``--margin``, ...)."""
    memory = () if own_memory is None else (
        "--gpu-memory", f"{own_memory[1]}MiB" if own_memory[1] is not None else str(own_memory[0]))
    return ("--gpu", gpu, *memory, *options)


_FILE_OPTIONS = frozenset({"--cells", "--memory-model", "--model-config"})
"""The options of a check command (`check_flags`' `options`) that name a file, as the planning was given it."""


def names_relative_path(flags: Iterable[str], *files: str) -> bool:
    """Whether a check command's `flags` (`check_flags`) name a file by a relative path (the value of one of
    `_FILE_OPTIONS`, but `MODEL_CONFIG_PLACEHOLDER`), or one of `files` (the config it checks) is one: the paths are
    written as given, which the command reads from the directory it runs in, so that a saved command says where to
    run it."""
    named = [value for flag, value in pairwise(flags) if flag in _FILE_OPTIONS and value != MODEL_CONFIG_PLACEHOLDER]
    return any(not PurePath(path).is_absolute() for path in (*named, *files))


def check_command(plan: Plan, model: Model, flags: tuple[str, ...], host_ram_gb: float | None,
                  version: TrinityVersion | None, config: str = "CONFIG",
                  environment: tuple[tuple[str, str], ...] = (), critic_trained: bool = True,
                  config_lora_rank: int = 0) -> str:
    """The command that checks the Trinity config at `config` as `plan` was made for `model`: ``solve --from-config
    CONFIG --check`` with `flags` (`check_flags`), the host memory the plan was held to (`host_ram_gb`; with
    ``--no-reference`` where the plan counted no reference model, `Plan.reference_model`), the LoRA rank whose states it
    counted (`Plan.lora_rank`, ``--lora-rank``, where it counted one other than `config_lora_rank`, what the config
    counts itself: `config_counted_lora_rank`), ``--critic none`` where it counted no critic but
    the config's algorithm trains one (`critic_trained`; a fragment has no ``algorithm_type``: Trinity's default, PPO),
    and ``--critic`` with the plan's where it counted one that the algorithm does not train (where both have one, the
    critic's keys the plan writes say where, `Plan.critic`), the Trinity release (`version`; the plan's own where of
    that minor version, `Plan.trinity_version`: 0.5.0, 0.5.1; else 0.5.1 where the plan counted its routed experts as
    0.5.1 lays them out, `Plan.expert_layout`), the environment variables the config's keys read as the plan was made
    (`environment`, `solver.trinity.check_environment`: ``NGPUS=12``, which the check's config reads as the plan's did;
    a value that is no number or flag, or whose variable's name looks private, as the shell's own: `_carried`), and
    Env's variable set as the Env note says (and vLLM's long-length one as its note says, past the longest length vLLM
    derives, `Model.vllm_longest_as_written`); shell-quoted, to paste as it is. `QueryError` unless `flags`, `config`
    and the variables' names are printable text (a comment's words: a line break would end it)."""
    if not _printable((*flags, config)):
        raise QueryError(f"the check command's options and file must be printable strings, got "
                         f"{brief((*flags, config))}")
    for name, _ in environment:
        if not _printable((name,)):
            raise QueryError(f"the config reads the environment variable {brief(name)}, whose name the command that "
                             "checks it as it was planned cannot hold on a comment's line")
    held = () if host_ram_gb is None else (
        "--host-ram", host_ram_argument(host_ram_gb), *(() if plan.reference_model else ("--no-reference",)))
    lora = ("--lora-rank", str(plan.lora_rank)) if plan.lora_rank != config_lora_rank else ()
    critic = (("--critic", NO_CRITIC) if plan.critic is None and critic_trained
              else ("--critic", plan.critic) if plan.critic is not None and not critic_trained else ())
    release = counted_release(version, plan.expert_layout, plan.trinity_version)
    options = [*flags, *held, *lora, *critic, *(("--trinity-version", release) if release is not None else ())]
    variables = {**{name: _carried(name, value) for name, value in environment}, **plan_environment(plan, model)}
    return f"{_assignments(variables)}solve --from-config {shlex.quote(config)} --check {shlex.join(options)}"


_SHELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""A name the shell sets in an assignment before a command (``NAME=value solve ...``)."""

_SHOWN_VALUE = re.compile(r"[ \t]*(?:[+-]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][+-]?[0-9]+)?"
                          r"|(?i:true|false|null))[ \t]*")
"""A value the check command writes as it is: a number or a flag (the counts, lengths and switches the verdict
judges), never a secret (not an address, ``10.0.0.1``)."""

_PRIVATE_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|PRIVATE|AUTH", re.IGNORECASE)
"""Words in a variable's name that say its value is private (``HF_TOKEN``, ``WANDB_API_KEY``, ``DB_PASSWORD``)."""


def _carried(name: str, value: str) -> str | None:
    """How the check command carries the variable `name`, set to `value` as the plan was made: `value` itself, where
    it is a number or a flag (`_SHOWN_VALUE`: what the verdict judges, so a shell without it judges the same numbers)
    and `name` does not look private (`_PRIVATE_NAME`); else None, the shell's own value, not written: a path, a model
    id, a token (`_assignments` writes ``NAME="${NAME:?}"``, which stops the command where the shell lacks it)."""
    return value if _SHOWN_VALUE.fullmatch(value) and not _PRIVATE_NAME.search(name) else None


def _assignments(variables: Mapping[str, str | None]) -> str:
    """The words before a command that set `variables` for it: ``NAME=value`` each (the value shell-quoted), and
    ``NAME="${NAME:?}"`` for one given None (the shell's own value, which it must have: the shell stops the command
    where it is unset or empty), after ``env`` where a name is none the shell's assignment takes (``MY-VAR``: one of
    those given None is left out, and ``env`` passes the shell's on, as no shell can expand it); nothing for none."""
    written = {name: value for name, value in variables.items() if value is not None or _SHELL_NAME.fullmatch(name)}
    plain = all(_SHELL_NAME.fullmatch(name) for name in written)
    words = [f'{name}="${{{name}:?}}"' if value is None else f"{name}={shlex.quote(value)}" if plain
             else shlex.quote(f"{name}={value}") for name, value in written.items()]
    return ("" if plain else "env ") + "".join(f"{word} " for word in words)


def _printable(texts: tuple[object, ...]) -> bool:
    """Whether each of `texts` is a string a comment line can hold (no line break, no control character)."""
    return all(isinstance(text, str) and text.isprintable() for text in texts)


def _check_lines(plan: Plan, model: Model, options: _FragmentOptions) -> list[str]:
    """The header's command that checks a config with this fragment merged in, as its plan was made (`check_command`),
    saying what its placeholders stand for (CONFIG, and `MODEL_CONFIG_PLACEHOLDER` where it gives ``--model-config``
    that) and, where it names a file by a relative path (`names_relative_path`), where to run it: none without
    `check_flags`."""
    if options.check_flags is None:
        return []
    command = check_command(plan, model, options.check_flags, options.host_ram_gb, options.version,
                            environment=options.check_environment, config_lora_rank=options.config_lora_rank)
    flags = options.check_flags
    own = any(flag == "--model-config" and value == MODEL_CONFIG_PLACEHOLDER for flag, value in pairwise(flags))
    model_config = f"; {MODEL_CONFIG_PLACEHOLDER}: your model's config.json" if own else ""
    relative = "; its relative paths from the directory these keys were made in" if names_relative_path(flags) else ""
    placeholders = f"CONFIG: its file{model_config}{relative}"
    return [f"# To check your config once these keys are in it ({placeholders}), as this plan was made:",
            f"#   {command}"]


def _header(plan: Plan, model: Model, options: _FragmentOptions, environment: Mapping[str, str],
            keys: Sequence[PlanKey]) -> list[str]:
    """The fragment's comment lines, each paragraph on one line (`wrapped_comments` wraps them) and each command to
    paste on one of its own: the plan, its evidence, host memory and cautions (but those its `keys`' comments say),
    what to keep the prompt and response
    within, and a note for each that applies: the train batch, a length past the native context on the model's own
    RoPE scaling, YaRN, a trainer on whole nodes, GPUs shared on a node, Env (and ROCm's variable), in mode train
    without a train batch, that Trinity requires one, for DPO without ``mode: train`` among the keys, the keys
    Trinity's DPO needs (`DPO_MODE_NOTE`), for DPO with it, the dataset's path (`DPO_DATASET_NOTE`), and the layout's
    interpolations taken at their defaults (`defaults_taken_note`)."""
    node_gpus, shared_gpus = options.node_gpus, options.shared_gpus
    several = (options.nodes > 1 if options.rollout_gpus is not None
               else bool(node_gpus and plan.gpus > node_gpus))  # nodes, for Env
    notes = [
        _long_length_note(model, plan.max_model_len)
        if LONG_LENGTH_VARIABLE[0] in environment or model.beyond_native_on_own_scaling(plan.max_model_len)
        or model.beyond_native_no_yarn(plan.max_model_len) else [],
        [f"# {yarn_trainer_words(not plan.without_rollout)}."]
        if plan.rope_scaling_factor is not None and options.version != "0.5" else [],
        _whole_nodes_note(plan.gpus, node_gpus)  # where no cluster section says it
        if options.rollout_gpus is None and node_gpus is not None and plan.gpus > node_gpus else [],
        _shared_gpus_note(shared_gpus, environment) if shared_gpus else [],
        _env_note(several, options.rocm, options.option_names) if ENV_VARIABLE[0] in environment else [],
        TRAIN_BATCH_NOTE if options.rollout_gpus == 0 and options.train_batch_size is None else [],
        DPO_MODE_NOTE if options.dpo_mode_unset else [],
        DPO_DATASET_NOTE if options.dpo_mode_train else [],
        defaults_taken_note(options.defaults_taken, options.left_unread),
    ]
    return [*_plan_lines(plan, model, options, keys), *(line for note in notes if note for line in ("#", *note))]


def _plan_lines(plan: Plan, model: Model, options: _FragmentOptions, keys: Sequence[PlanKey]) -> list[str]:
    """The header's first lines: the plan, its evidence, host memory and cautions (but LoRA's on a mixture of experts
    and on a regex saved split where `keys` write the LoRA config, whose comment says them), what to keep the prompt
    and response within, and the
    train batch the plan was made for."""
    gpu, rollout_gpus, train_batch_size = options.gpu, options.rollout_gpus, options.train_batch_size
    on = f" {gpu}" if gpu else ""
    left = f" ({rollout_gpus} for rollout)" if rollout_gpus else ""
    trainer = f"{plan.gpus}{on} trainer GPU{'s' if plan.gpus != 1 else ''}{left}"
    host = host_memory_comment(plan, model, options.version, options.nodes, rollout_gpus or 0,
                               host_ram_gb=options.host_ram_gb, host_ram_source=options.host_ram_source)
    lines = [
        f"# Trinity-RFT settings generated by rft-solver for {model.name}",
        (f"# plan: {plan.setting.label} on {trainer}, max_model_len {plan.max_model_len}"
         f"{_past_validated(plan, model, options.option_names)}"),
        *([f"# placed on {options.placed_on}"] if options.placed_on is not None else []),
        *([f"# now: {options.running_now}"] if options.running_now is not None else []),
        f"# {evidence_comment(plan, model, gpu)}",
        *([f"# {host}"] if host is not None else []),
        "# Merge these keys into your Trinity config; model.model_path and everything else stay yours.",
        *_check_lines(plan, model, options),
        f"# Keep model.max_prompt_tokens + max_response_tokens within {plan.max_model_len}:",
        "# Trinity refuses more, and less leaves part of the length unused.",
    ]
    # The plan's cautions that the fragment says nowhere else (its length's are beside rope_scaling or below, ROCm's
    # beside the Env export).
    said = {*length_cautions(model, plan.max_model_len), *map(rocm_env_caution, (COMMAND_OPTIONS, API_OPTIONS))}
    if any(key.path == LORA_CONFIGS for key in keys):
        said |= {*plan.cautions_coded(CautionCode.LORA_MOE_CONFIG_UNSAVED, CautionCode.LORA_TARGETS_SAVED_SPLIT)}
    lines += [f"# {caution_comment(caution)}" for caution in plan.cautions if caution not in said]
    if train_batch_size is not None:
        lines += _train_batch_lines(train_batch_size, plan.gpus // plan.sp, _dpo_actor_pair(plan, keys))
    return lines


def _dpo_actor_pair(plan: Plan, keys: Sequence[PlanKey]) -> int | None:
    """The actor's micro-batch size per GPU that `keys` write for a DPO `plan` (its pair: `DPO_PAIR_SIZES`), or None
    where they write none (not DPO, or dynamic batch sizes left on)."""
    sizes = [key.value for key in keys if key.path == ROLE_MICRO_BATCH_SIZES[0]]
    return sizes[0] if plan.dpo and sizes else None


def _train_batch_lines(train_batch_size: int, ranks: int, dpo_pair: int | None) -> list[str]:
    """The header's note on the train batch the plan was made for: its `ranks` (data-parallel ranks) divide it; for DPO,
    whose actor's micro-batch per GPU `dpo_pair` holds one pair, 2 sequences, on the verl line it is written for (1,
    which Trinity doubles before verl 0.8; 2 on verl 0.8 or later, where 1 is to be written before 0.8), and which
    Trinity asserts divides each rank's share of the batch (``dpo-mini-batch-split``), twice the ranks, as the plan
    keeps it (`solver.rules.batch_divisor_of`'s `pairs`), with the nearest where the batch is not one; none where any
    batch splits (one rank, no DPO pair)."""
    multiple = batch_divisor_of(ranks, 1, pairs=dpo_pair is not None)
    if multiple == 1:
        return []
    planned = (f"# Planned for a train batch of {train_batch_size} (buffer.train_batch_size, by default batch_size x "
               f"repeat_times), which its {ranks} data-parallel ranks (trainer GPUs / SP) divide")
    if dpo_pair is None:
        return [f"{planned}: keep your batch a multiple of {ranks}."]
    held = ("the actor's 1, doubled by Trinity before verl 0.8" if dpo_pair == 1 else
            "the actor's 2 on verl 0.8 or later; before 0.8 write 1 there, which Trinity doubles")
    words = (f"{planned}; DPO's micro-batch below, one pair, 2 sequences per GPU ({held}), must divide each rank's "
             f"share too: keep your batch a multiple of {multiple}.")
    if train_batch_size % multiple:
        nearest = " or ".join(map(str, nearest_dividing_batches(train_batch_size, multiple)))
        words += f" {train_batch_size} is not one (the nearest: {nearest}): the trainer fails as it starts."
    return [words]


TRAIN_BATCH_NOTE = [
    (f"# mode train: Trinity requires {TRAIN_BATCH_KEY} (experiences per step; in mode both it defaults to "
     "buffer.batch_size x algorithm.repeat_times) and refuses the config without it: set it in your config, or plan "
     "with --train-batch-size N (an API query's or a cluster job's train_batch_size), which writes it here."),
]
"""The header note of a fragment in mode train (``--rollout-gpus 0``) made without a train batch to write."""
DPO_MODE_NOTE = [
    (f"# DPO: Trinity trains it on a dataset in mode train alone (it refuses mode both: "
     f"trinity/algorithm/algorithm.py:291 in 0.6.0, :248 in 0.5.2) and requires {TRAIN_BATCH_KEY} in every mode "
     f"(trinity/common/config_validator.py:966 in 0.6.0, :877 in 0.5.2): set mode: train and {TRAIN_BATCH_KEY} in "
     "your config, or plan with --rollout-gpus 0 --train-batch-size N (an API query's rollout_gpus=0 and "
     "train_batch_size), which writes both here."),
]
"""The header note of a DPO fragment (a plan that counted DPO's pairs) whose keys do not write ``mode: train``:
made without ``--rollout-gpus 0``, it leaves the config's mode (``both`` by default), which Trinity's DPO refuses."""
DPO_DATASET_NOTE = [
    (f"# DPO in mode train: Trinity trains on the dataset at {dotted(TRAINER_INPUT_PATH)} and refuses the config "
     f"without it (trinity/algorithm/algorithm.py{TRAINER_INPUT_LINES['dpo']}): set it in your config to your "
     "dataset of preference pairs, which these keys cannot name."),
]
"""The header note of a DPO fragment whose keys write ``mode: train`` (``--rollout-gpus 0``) beside no config that
sets the dataset's path: Trinity's DPO then requires it, which the keys leave to the config (``trainer-input-missing``
without it)."""


def defaults_taken_note(variables: Sequence[str], unread: Sequence[tuple[str, str]] = ()) -> list[str]:
    """The header note of a fragment made without an ``environ`` whose layout's ``${oc.env:VAR,default}`` (of the
    environment `variables`) took their defaults, or whose keys (`unread`, each with its variable) read a
    ``${oc.env:VAR}`` without one and were left unread: Trinity reads them in the environment ``trinity run`` starts
    in, and fails to load the config where such a variable is unset. Empty where neither."""
    taken = [(f"# No environ given: layout's ${{oc.env:...}} took their defaults ({', '.join(variables)}), as the "
              "keys here read them; Trinity resolves them as it loads the config (trinity/common/config.py:1059 in "
              "0.6.0), in the environment trinity run starts in: where that sets them, pass it as environ "
              "(environ=os.environ in that shell).")] if variables else []
    unset = list(dict.fromkeys(variable for _, variable in unread))
    if len(unread) == 1:
        keys = f"{unread[0][0]} unread, as its ${{oc.env:{unread[0][1]}}} has no default"
    else:
        keys = (f"{and_joined([f'{key} (${{oc.env:{variable}}})' for key, variable in unread])} unread, as their "
                "${oc.env:...} have no default")
    given = "The" if variables else "No environ given: the"  # said in the paragraph before
    left = [(f"# {given} keys here leave {keys}; Trinity fails to load the config where trinity run "
             f"starts without {and_joined(unset)} set (OmegaConf resolves every value as Trinity loads it: "
             "trinity/common/config.py:1059 in 0.6.0): where "
             f"{'it is' if len(unset) == 1 else 'they are'} set, pass that environment as environ (environ=os.environ "
             "in that shell).")] if unread else []
    return [*taken, *left]


def _past_validated(plan: Plan, model: Model, option_names: OptionNames) -> str:
    """The header's words where the plan's length is past what `model` is validated for
    (`Plan.past_validated_length`), and the length that is not, as `option_names` name it; "" otherwise."""
    if (validated := plan.past_validated_length) is None:
        return ""
    return f", {past_validated_words(model, validated)} ({check_or_plan_words(validated, option_names)})"


def _long_length_note(model: Model, max_model_len: int) -> list[str]:
    """The note on `max_model_len` past `model`'s native context on its own RoPE scaling, or with none where its type
    is advised no YaRN (`Model.beyond_native_no_yarn`), or past the longest length vLLM derives for it as written
    (`Model.vllm_longest_as_written`): that length, and vLLM's variable to set where it is shorter."""
    own = model.beyond_native_on_own_scaling(max_model_len)
    longest = model.vllm_longest_as_written(max_model_len)
    derived = (f"vLLM (the explorer's rollout) derives a longest max_model_len of "
               f"{vllm_length_words(model, longest)} from the model's config.json"
               f"{'' if model.yarn_factor(max_model_len) is None else ' and the YaRN written'}")
    if max_model_len <= longest:
        factor = "" if vllm_no_limit(model) else f" (its {model.rope_scaling} scaling's factor applied)"
        vllm = f"{derived}{factor}: it takes this one."
    else:
        skipped = " (it applies no RoPE scaling's factor to a Gemma 3's length)" if model.vllm_skips_rope_factor else ""
        vllm = (f"{derived}{skipped} and refuses a longer one unless {'='.join(LONG_LENGTH_VARIABLE)} is set (before "
                "Ray starts).")
    beyond = f"max_model_len is beyond {model.name}'s native context of {model.native_context}"
    check = "Check that the model handles this length before you train at it."
    if own:
        vllm = (f"{beyond}, which its own {model.rope_scaling} RoPE scaling provides: no rope_scaling is written "
                f"(YaRN would replace it). {vllm} {check}")
    elif model.beyond_native_no_yarn(max_model_len):
        extension = model.rope_advice.extension
        vllm = (f"{beyond}, {NO_ROPE_SCALING}: no rope_scaling is written for model_type {extension.model_type}: "
                f"{extension.why_no_yarn}; {extension.accepted}. {vllm} {check}")
    return [f"# {vllm}"]


def placed_on_words(pool: str, nodes: tuple[int, ...], shared_gpus: tuple[int, ...] | None,
                    trainer_nodes: tuple[int, ...]) -> str:
    """Where a cluster placement put a job, in the header's words (``node 3 of pool a100 (GPUs 2-7)``), its nodes
    numbered as the placement's table numbers them: `shared_gpus`, the GPUs of the one node it shares (None: it takes
    its `nodes` whole, its trainer on `trainer_nodes`, the first of them)."""
    def numbered(indexes: tuple[int, ...]) -> str:
        return f"node{'s' if len(indexes) > 1 else ''} {and_joined([str(index) for index in indexes])}"

    if shared_gpus is not None:
        gpus = f"GPU{'s' if len(shared_gpus) > 1 else ''} {index_range(shared_gpus)}"
    else:
        trainer = "" if trainer_nodes == nodes else f"; its trainer on {numbered(trainer_nodes)}"
        gpus = f"all {'their' if len(nodes) > 1 else 'its'} GPUs{trainer}"
    return f"{numbered(nodes)} of pool {pool} ({gpus})"


def moved_from_words(moved_from: RunsAt | None, fleet: Fleet) -> str | None:
    """Where a job that moves runs now (`Placement.moved_from`), in `placed_on_words`' words, on its pool's nodes as
    `fleet` gives them (``node 1 of pool a100 (all its GPUs)``; a pool `fleet` lacks, its GPUs named), its trainer's
    nodes named where its rollout has others (``its trainer on node 0``); None for None (a job that does not move, or
    one read from JSON made before ``moved_from``)."""
    if moved_from is None:
        return None
    node_gpus = fleet.node_gpus(moved_from.pool)
    whole = node_gpus is not None and moved_from.gpu_indexes == tuple(range(node_gpus))
    trainer = moved_from.trainer_nodes if moved_from.trainer_nodes is not None else moved_from.nodes
    return placed_on_words(moved_from.pool, moved_from.nodes, None if whole else moved_from.gpu_indexes, trainer)


def moving_words(moved_from: str | None, move_reason: str | None) -> str:
    """Where a job that moves runs now (`moved_from`, `moved_from_words`') and why it moves (`move_reason`), as the
    header's ``# now:`` line and solve cluster's ``moves:`` lines say it, each where known (a placement read from JSON
    made before ``moved_from`` lacks it)."""
    where = "it" if moved_from is None else f"it runs on {moved_from} now, and"
    return f"{where} restarts as placed{'' if move_reason is None else f': {move_reason}'}"


def running_now_words(current: str | None, moved_from: str | None = None, move_reason: str | None = None) -> str | None:
    """What a cluster placement made with the placement the fleet runs now (``--current``) does with a job, in the
    header's words, by its `current` (``stays``, ``moves`` or ``starts``, as the placement's table and JSON say it):
    for a job that moves, where it runs now (`moved_from`, in `placed_on_words`' words) and why (`move_reason`:
    `moving_words`), each where known (a placement read from JSON made before ``moved_from`` lacks it); None where
    `current` is None (no ``--current``)."""
    if current is None:
        return None
    if current == "moves":
        return f"moves: {moving_words(moved_from, move_reason)}"
    return {"stays": "stays: it runs there now, as placed (no restart)",
            "starts": "starts: it does not run now"}[current]


def _whole_nodes_note(trainer_gpus: int, node_gpus: int) -> list[str]:
    """The note on the whole nodes a trainer spans, where no cluster section says it."""
    return [(f"# The trainer spans {trainer_gpus // node_gpus} whole nodes of {counted(node_gpus, 'GPU')}: your "
             "cluster.node_num x gpu_per_node must hold them and the rollout's GPUs (--rollout-gpus R, or "
             "solver.plan's rollout_gpus, writes that section).")]


def _shared_gpus_note(shared_gpus: tuple[int, ...], environment: Mapping[str, str]) -> list[str]:
    """The note on the GPUs of a node the job takes part of: their CUDA_VISIBLE_DEVICES, and a Ray of its own."""
    return [
        (f"# The job takes GPU{'s' if len(shared_gpus) > 1 else ''} {index_range(shared_gpus)} of its node: "
         "before Ray starts,"),
        f"#   export CUDA_VISIBLE_DEVICES={environment['CUDA_VISIBLE_DEVICES']}",
        ("# Each job on the node needs a Ray of its own: start this one's after that export (ray start --head on "
         "ports no other job's Ray uses) and set cluster.ray_address to it; the default, auto, joins whichever Ray the "
         "node started last."),
    ]


def _env_note(several: bool, rocm: bool, option_names: OptionNames) -> list[str]:
    """The note on Env's variable, to export where Ray starts (on each node, for `several`), and ROCm's too (in
    `option_names`' words)."""
    # Each node's Ray workers take the environment its `ray start` had: Trinity passes this variable to none.
    return [
        (f"# Env: run this {env_when(several)} (Ray's workers take the environment their node's Ray started with; "
         "Trinity passes this variable to none of them):" if several else
         f"# Env: run this {env_when(several)} (before `ray start`, or before `trinity run` starts Ray):"),
        f"#   {ENV_EXPORT}",
        "# It is an environment variable, not a config key.",
        *([f"# {rocm_env_note(option_names)}"] if rocm else []),
    ]


def trinity_fragment(
    plan: Plan, model: Model, rollout_gpus: int | None = None, *, gpu: str | None = None, nodes: int = 1,
    shared_gpus: tuple[int, ...] | None = None, engines: tuple[int, int] | None = (0, 1), layout: Any = None,
    version: TrinityVersion | None = None, rocm: bool = False, train_batch_size: int | None = None,
    node_gpus: int | None = None, host_ram_gb: float | None = None, host_ram_source: str | None = None,
    option_names: OptionNames = API_OPTIONS, check: tuple[str, ...] | None = None, dpo: bool | None = None,
    environ: Mapping[str, str] | None = None, config_lora: bool = False,
) -> str:
    """A Trinity YAML fragment (nested mappings, with comments) that applies `plan` to `model`.

    It sets ``model.max_model_len``, ``model.rope_scaling`` (YaRN) only beyond the model's native
    context, ``trainer.ulysses_sequence_parallel_size`` and ``trainer.max_token_len_per_gpu``, and with
    Offload the FSDP2 offload keys and ``trainer.save_hf_checkpoint: never``. Env is a comment block at
    the top (an environment variable, not a key). With `rollout_gpus` R (0 or more) it adds a
    ``cluster`` of `nodes` nodes (default one) sharing the trainer's GPUs and R equally
    (``gpu_per_node`` = (trainer GPUs + R) / nodes), and (for R of 1 or more) ``explorer.rollout_model`` with R engines of
    tensor-parallel size 1; `engines` = (GPUs of other models, GPUs per engine) gives instead
    (R - those GPUs) / size engines of that size (a `layout` with Trinity 0.6's data or pipeline parallel
    sizes keeps its sizes: the tensor-parallel one is not written), and None no engines at all (a config's
    own, which take the R GPUs already). `version`: the Trinity minor version the config is for (``0.5``: no offload
    flags under ``trainer``); None, the plan's own (`solver.results.written_release`: `Plan.trinity_version`'s, as
    `solver.trinity_config` writes it; where the plan names none, 0.6's keys, their comments saying 0.5 refuses them).
    `gpu` (e.g. ``A100-80GB``) only names the GPU type in the header comment; `shared_gpus`, the GPUs of a node the
    job takes part of, adds the CUDA_VISIBLE_DEVICES to set; `rocm` (an AMD GPU) adds to the Env comment what ROCm
    builds read; `train_batch_size`, the batch the plan was made for,
    a header line saying so; `node_gpus`, the GPUs per node it was made for: without `rollout_gpus`, a header line on
    the whole nodes a trainer on more GPUs spans (a trainer past one node that is not whole nodes is a `QueryError`);
    `host_ram_gb`, the host memory per node the plan was held to (from `host_ram_source`, as the header names it;
    None: `option_names`' option), or None: the header's host memory line says that it was, or that it was not
    checked; `option_names`, how the notes name the caller's options (`solver.rules.API_OPTIONS`, the API's
    keywords, or `COMMAND_OPTIONS`, the command's flags): a config for Trinity 0.5, as the comment on 0.6's offload
    flags under ``trainer`` names it, made for no release, and the length to plan at past the validated one. `check`,
    the options that check
    a config as the plan was made (`check_flags`: ``--gpu`` and more), adds the command that does so to the header,
    with the host memory, the Trinity release and Env's variable as the plan has them; None, no command.
    `layout`, the user's config as nested mappings, adds the keys of its own that the plan sets too (a role's
    SP and budget, the offload flags under a role's ``engine``), as `patch_trinity_config` does; without it, a header
    line says to bring hand-set per-role budgets down to the plan's. `dpo`: whether the plan counted a DPO pair per
    micro-batch (an answer's `Answer.dpo_pairs`), for which a padded model's actor holds one pair
    (`solver.trinity.plan_keys.DPO_PAIR_SIZES`); None: where `layout` trains DPO; False beside a `layout` that trains
    DPO for such a model, a `QueryError` (`checked_settings_arguments`). `environ`: where `layout`'s interpolations are
    read (``${oc.env:VAR,default}``), as Trinity reads them in the environment ``trinity run`` starts in (the command
    passes its shell's, as its plans read the config); None: none, each at its default, which a header line says
    (`defaults_taken_note`). `config_lora`: True where the plan's LoRA is that of the config the fragment is merged
    into (an answer's `Query.config_lora`), whose own LoRA config it keeps: no ``model.lora_configs``, as beside a
    `layout`. The output depends only on the arguments: the same input gives the same
    bytes, checked against Trinity's rules (`solver.trinity.checks.trinity_config_problems`, less the cautions its
    comments say) before it is returned.
    """
    return plan_fragment(plan, model, rollout_gpus, gpu=gpu, nodes=nodes, shared_gpus=shared_gpus, engines=engines,
                         layout=layout, version=version, rocm=rocm, train_batch_size=train_batch_size,
                         node_gpus=node_gpus, host_ram_gb=host_ram_gb, host_ram_source=host_ram_source,
                         option_names=option_names, check=check, dpo=dpo, environ=environ,
                         config_lora=config_lora)[0]


def plan_fragment(
    plan: Plan, model: Model, rollout_gpus: int | None = None, *, gpu: str | None = None, nodes: int = 1,
    shared_gpus: tuple[int, ...] | None = None, engines: tuple[int, int] | None = (0, 1), layout: Any = None,
    version: TrinityVersion | None = None, rocm: bool = False, train_batch_size: int | None = None,
    node_gpus: int | None = None, host_ram_gb: float | None = None, host_ram_source: str | None = None,
    option_names: OptionNames = API_OPTIONS, check: tuple[str, ...] | None = None, dpo: bool | None = None,
    environ: Mapping[str, str] | None = None, config_lora: bool = False,
) -> tuple[str, TrinitySettings]:
    """`trinity_fragment`'s text, and the settings it writes as data: both from one list of keys (`fragment_keys`, as
    `plan_settings` gives the settings alone)."""
    return fragment_for(SettingsArguments(plan, model, rollout_gpus, nodes=nodes, shared_gpus=shared_gpus,
                                          engines=engines, layout=layout, version=version,
                                          train_batch_size=train_batch_size, dpo=dpo, environ=environ,
                                          config_lora=config_lora),
                        gpu=gpu, rocm=rocm, node_gpus=node_gpus, host_ram_gb=host_ram_gb,
                        host_ram_source=host_ram_source, option_names=option_names, check=check)


def fragment_for(
    arguments: SettingsArguments, *, gpu: str | None = None, rocm: bool = False, node_gpus: int | None = None,
    host_ram_gb: float | None = None, host_ram_source: str | None = None, option_names: OptionNames = API_OPTIONS,
    check: tuple[str, ...] | None = None, check_environment: tuple[tuple[str, str], ...] = (),
    dpo_mode_unset: bool = False, placed_on: str | None = None, running_now: str | None = None,
    config_lora_rank: int = 0, token_cap: str | None = None,
) -> tuple[str, TrinitySettings]:
    """`plan_fragment` of `arguments` (its arguments that decide keys as one value, as an answer's or a placement's
    are made: `settings_for` gives their settings alone) and the header's; `check_environment`, the environment
    variables the config planned from read (`solver.trinity.check_environment`), which the header's command sets;
    `dpo_mode_unset`, whether the run trains DPO without a config of mode train (`Plan.dpo_mode_unset`): without
    ``mode: train`` among the keys, the header says the keys Trinity's DPO needs (`DPO_MODE_NOTE`); `placed_on`, a
    cluster placement's nodes in words (`placed_on_words`), which the header names under the plan, and `running_now`,
    what it does with the job as the fleet runs it now (`running_now_words`), which it says under them;
    `config_lora_rank`, the LoRA rank the config planned from counts itself, which the header's check command leaves
    to it (no ``--lora-rank`` where the plan counted that rank); `token_cap`, how the comment on a budget the plan's
    cap binds names the cap (its answer's `solver.results.Answer.token_cap_words`; None: a plan without its answer,
    which names either source)."""
    arguments = checked_settings_arguments(arguments)  # its release written: the plan's own where none is named
    plan, model = arguments.plan, arguments.model
    check_types(("option_names", option_names, OptionNames))  # the header's default host memory source reads it
    options = _FragmentOptions(rollout_gpus=arguments.rollout_gpus, gpu=gpu, nodes=arguments.nodes,
                               shared_gpus=arguments.shared_gpus, version=arguments.version, rocm=rocm,
                               train_batch_size=arguments.train_batch_size, node_gpus=node_gpus,
                               host_ram_gb=host_ram_gb, host_ram_source=(
                                   host_ram_source if host_ram_source is not None else option_names.host_ram),
                               option_names=option_names, check_flags=check, check_environment=check_environment,
                               placed_on=placed_on, running_now=running_now, config_lora_rank=config_lora_rank)
    _check_header_arguments(plan, options)
    ordered, settings, read_without = fragment_keys(arguments, option_names, gpu, token_cap)
    if read_without is not None:
        options = replace(options, defaults_taken=tuple(read_without.taken),
                          left_unread=tuple(read_without.unread.items()))
    if dpo_mode_unset and keys_leave_mode(ordered):
        options = replace(options, dpo_mode_unset=True)  # keys for a config whose mode they leave
    if plan.dpo and not keys_leave_mode(ordered) and value_at(arguments.layout or {}, TRAINER_INPUT_PATH) in (None, ""):
        options = replace(options, dpo_mode_train=True)  # keys that write mode train for DPO, no dataset named
    comments: dict[tuple[str, ...], str] = {
        ("model", "rope_scaling"): f"YaRN: max_model_len is beyond the native context of {model.native_context}",
    }
    if plan.offload and arguments.version == "0.5":  # Offload in the roles' flags alone, which 0.6 may override
        comments["trainer", "trainer_config"] = written_for_05_comment(plan, option_names, "these flags")
    body = _emit(ordered, comments)
    header = _header(plan, model, options, settings.environment, ordered)
    # A config's own per-role budgets above the plan's come down to it among its keys (for one sequence per
    # micro-batch, dynamic batch sizes off, no budget is read)
    if arguments.layout is None and not one_sequence_per_micro_batch(model):
        header.append(_hand_set_budgets_comment(plan))
    text = wrapped_comments("\n".join([*header, *body]))
    loaded = pyyaml.load(text, Loader=_FAST_SAFE_LOADER)
    # The settings passed Trinity's rules (`fragment_keys`); the text says them, so it passes too.
    if loaded != settings.config:  # a defect of rft-solver's, never of the input: the settings are what the text says
        raise RuntimeError(f"the Trinity config made for {plan.setting.label} reads as {loaded}, not {settings.config}")
    return text, settings


def _hand_set_budgets_comment(plan: Plan) -> str:
    """The fragment's header line, made without the user's config, on the token budgets a config may set by hand per
    role, which verl before 0.8 takes over ``max_token_len_per_gpu`` (`solver.trinity.keys.ROLE_BUDGET_KEYS`; the
    critic's where `plan` counts one, `Plan.critic`): one above the plan's budget takes more tokens per GPU than the
    plan counts; and a forward's (the rollout's, the critic's value forward's: `solver.trinity.keys.FORWARD_BUDGETS`)
    below ``ceil(L/SP)`` at the plan's length and SP holds no sequence of it, which Trinity never raises (it raises the
    others: ``_adjust_token_len_if_needed``, ``trainer/verl/verl_config.py:463``, called at ``:555``, ``:578`` and
    ``:610`` in 0.5.2) and verl stops at (it asserts that a micro-batch holds the longest sequence,
    ``utils/seqlen_balancing.py:382`` in 0.7.0)."""
    budget, least = plan.max_token_len_per_gpu, least_token_budget(plan.max_model_len, plan.sp)
    critic = plan.critic is not None
    over = (("ppo_max_token_len_per_gpu (actor, critic), log_prob_max_token_len_per_gpu (ref, rollout) or "
             "forward_max_token_len_per_gpu (critic)") if critic
            else "ppo_max_token_len_per_gpu (actor) or log_prob_max_token_len_per_gpu (ref, rollout)")
    forwards = ("the rollout's log_prob_max_token_len_per_gpu or the critic's forward_max_token_len_per_gpu"
                if critic else "the rollout's log_prob_max_token_len_per_gpu")
    return (f"# On verl before 0.8, a hand-set {over} above {budget} overrides max_token_len_per_gpu: lower it to "
            f"{budget} or remove it; and {forwards} below ceil({plan.max_model_len} / {plan.sp}) = {least} holds no "
            f"sequence of that length, which Trinity never raises and verl stops at: raise it to {least} or more, or "
            "remove it.")


def _check_header_arguments(plan: Plan, options: _FragmentOptions) -> None:
    """`QueryError` unless `trinity_fragment`'s arguments that only its header reads (those of `plan_settings` are
    `checked_settings_arguments`') are of their kinds and within their ranges, and, where there is no cluster
    section (no `rollout_gpus`), the trainer takes one node of `node_gpus` or whole nodes."""
    check_types(("gpu", options.gpu, str | None), ("rocm", options.rocm, bool),
                ("node_gpus", options.node_gpus, int | None), ("host_ram_gb", options.host_ram_gb, float | None),
                ("host_ram_source", options.host_ram_source, str), ("check", options.check_flags, tuple | None))
    check_host_ram(options.host_ram_gb, options.option_names)
    check_gpu_name(options.gpu)
    if options.check_flags is not None and not _printable(options.check_flags):  # as gpu: a comment's words
        raise QueryError(f"check must be a tuple of printable strings, got {brief(options.check_flags)}")
    for name, words in (("placed_on", options.placed_on), ("running_now", options.running_now)):
        if words is not None and not _printable((words,)):  # a header line's words too
            raise QueryError(f"{name} must be a printable string or None, got {brief(words)}")
    node_gpus = options.node_gpus
    check_node_gpus(node_gpus, "node_gpus")
    # no cluster section: the trainer alone on nodes of node_gpus, where given
    violation = (whole_nodes_violation(plan.gpus, node_gpus, f"node_gpus={node_gpus}")
                 if options.rollout_gpus is None and node_gpus else None)
    if violation:
        raise QueryError(violation)
