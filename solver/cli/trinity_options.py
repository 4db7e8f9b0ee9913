"""What the planner's Trinity flags do (the flags themselves are defined with the planner's, in `planner`):
--from-config read and checked, --emit, --out and --write made and written."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from solver.cli.atomic import errors_named_by, write_all_atomically
from solver.cli.options import planning_check_options
from solver.tables import OneLineError, QueryError, TableError, TrinityVersion, counted

if TYPE_CHECKING:  # the models and solver.trinity's modules are imported where needed (ruamel where a config is read)
    from solver.query import Objective, TrinityConfig
    from solver.render.summary import ConfigApplied
    from solver.results import Answer, Plan, TrinitySettings
    from solver.tables import Catalog, GpuType, Model
    from solver.trinity import EngineError, PatchedConfig

    Fragment = tuple[str, TrinitySettings]
    """A plan's Trinity fragment and its settings as data (`solver.trinity.plan_fragment`)."""

def read_config_file(path: Path, version: TrinityVersion | None,
                     asked_gpu: Callable[[], GpuType | None] = lambda: None) -> tuple[str, TrinityConfig]:
    """A Trinity config's text and what rft-solver reads of it (`QueryError` in one line where it cannot; for mode
    colocate, with the share of `asked_gpu`'s memory left to the trainer where it gives the one GPU type asked)."""
    from solver.tables import MAX_CONFIG_BYTES, read_user_file

    text = read_user_file(path, MAX_CONFIG_BYTES)
    return text, read_config_text(text, path, version, asked_gpu=asked_gpu)


def read_config_text(text: str, path: Path, version: TrinityVersion | None, write_offered: bool = True,
                     asked_gpu: Callable[[], GpuType | None] = lambda: None) -> TrinityConfig:
    """What rft-solver reads of the Trinity config `text` (the file `path`), its fixes naming --write only where it is
    offered (`OptionNames.write_offered`); `QueryError` in one line where it cannot: for mode colocate
    (`ColocateRefused`), with the share of the GPU type's memory left to the trainer where `asked_gpu` gives one."""
    from solver.rules import COMMAND_OPTIONS
    from solver.trinity import ColocateRefused, ConfigError, read_trinity_config

    names = COMMAND_OPTIONS._replace(write_offered=write_offered)
    try:
        return read_trinity_config(text, str(path), os.environ, version, option_names=names)
    except ColocateRefused as error:
        gpu = asked_gpu()
        raise QueryError(str(error) if gpu is None else error.on_gpu(gpu)) from None
    except ConfigError as error:
        raise QueryError(str(error)) from None


def local_config_json(config: TrinityConfig | None) -> Path | None:
    """The config.json that the config's ``model.model_path`` names on this machine (`local_model_config`); None
    otherwise (a Hugging Face id, say: nothing is fetched)."""
    from solver.tables import local_model_config
    return None if config is None else local_model_config(config.model_path)


def _not_found_locally(config: TrinityConfig, where: str) -> str:
    """Why the config's model path (not a catalogue model) is not found here, for the unknown model's refusal: first,
    `QueryError` (after `where`, the config's file) where it is a folder of a PEFT adapter's config alone,
    --model-config's refusal of it naming its base model; else, where it is a local path (not a Hugging Face id,
    ``namespace/name`` at most) without a config.json, where it was looked for, in words; "" otherwise."""
    from solver.query import MODEL_PATH_KEY
    from solver.tables import adapter_alone_refusal, model_config_file

    path = config.model_path or ""
    try:
        adapter_alone = adapter_alone_refusal(model_config_file(Path(path))) if path else None
    except TableError:  # a folder on the way it may not look into: nothing local
        adapter_alone = None
    if adapter_alone is not None:
        raise QueryError(f"{where}{MODEL_PATH_KEY}: {adapter_alone} (--model-config PATH), or --model M, a "
                         "catalogue model of that shape")
    if path.startswith("/"):
        return f" (and no config.json at {path})"
    if path.startswith(("./", "../")) or path.rstrip("/").count("/") > 1:  # else a Hugging Face id, or a name
        return f" (and no config.json at {path}, from the working directory {Path.cwd()}, as Trinity reads it)"
    return ""


def _config_file(args: argparse.Namespace) -> str:
    """The --from-config file as its errors start, as `errors_named_by` names every file an option gives."""
    return f"--from-config {args.from_config}"


def check_planner_config(args: argparse.Namespace, catalog: Catalog, added: str, config: TrinityConfig,
                         objective: Objective) -> None:
    """`QueryError` where --from-config's config and the other options cannot be planned together: a trainer
    other than FSDP, an unknown model, no length, a --write, --rollout-gpus or --write's --train-batch-size at odds
    with the config, --rollout-gpus above 0 beside its DPO (`check_dpo_rollout`)."""
    if (args.write or args.emit or args.out) and (refusal := _write_strategy_refusal(args, config)):
        raise QueryError(refusal)
    if args.model is None and not added:
        from solver.api import check_config_model
        try:
            catalog.model(config.model)
        except QueryError:  # why not, where the path is a local one (its own refusal for an adapter's folder)
            where = f"{_config_file(args)}: "
            check_config_model(catalog, config, "--model M", "--model-config PATH (its config.json)", where=where,
                               why=_not_found_locally(config, where))
    if objective != "max_len" and args.max_model_len is None and config.max_model_len is None:
        raise QueryError(f"{_config_file(args)}: no model.max_model_len to plan for: give --len L (or --maximize len)")
    if args.write and (refusal := _write_cluster_refusal(args, objective, config)):
        raise QueryError(refusal)
    if (args.write or args.out or args.emit) and (refusal := _write_model_refusal(args, catalog, config)):
        raise QueryError(refusal)
    from solver.query import CONFIG_DPO_SOURCE, check_dpo_rollout
    from solver.rules import COMMAND_OPTIONS
    check_dpo_rollout(config.dpo, args.rollout_gpus, COMMAND_OPTIONS, CONFIG_DPO_SOURCE)  # why, before a mismatch
    if args.rollout_gpus is not None and config.trainer_gpus is not None and args.rollout_gpus != config.rollout_gpus:
        raise QueryError(f"--rollout-gpus {args.rollout_gpus}: {args.from_config} gives the rollout "
                         f"{counted(config.rollout_gpus, 'GPU')} (its engines times their GPUs each): "
                         f"drop --rollout-gpus, or plan a rollout of {counted(args.rollout_gpus, 'GPU')} from a copy "
                         "whose explorer takes that many (explorer.rollout_model.engine_num x each engine's GPUs, "
                         "with any auxiliary models')")
    if args.write and (refusal := _write_batch_refusal(args, config)):
        raise QueryError(refusal)


def write_refused(args: argparse.Namespace, objective: Objective, catalog: Catalog, config: TrinityConfig,
                  config_text: str, lora_rank: int) -> bool:
    """Whether --write would refuse to patch --from-config's `config` (its text `config_text`) as these options plan
    it: a trainer other than FSDP, or its cluster (or --total-gpus, which `solver.cli.planner` refuses beside --write),
    its train batch, its model (`catalog`'s name for it) or its LoRA rank, which the copy keeps, at odds with theirs
    (`lora_rank`: the plans') (the summary then offers no --write)."""
    from solver.rules import COMMAND_OPTIONS
    from solver.trinity import lora_rank_unkept

    return bool(args.total_gpus is not None or _write_strategy_refusal(args, config)
                or _write_cluster_refusal(args, objective, config)
                or _write_batch_refusal(args, config) or _write_model_refusal(args, catalog, config)
                or lora_rank and lora_rank_unkept(lora_rank, _config_layout(args, config_text, config),
                                                  _config_file(args), os.environ, COMMAND_OPTIONS))


def _write_strategy_refusal(args: argparse.Namespace, config: TrinityConfig) -> str | None:
    """Why --write (or --out, --emit) refuses --from-config's `config`: a trainer other than FSDP, whose settings the
    plan's do not carry over to; None where it takes it."""
    from solver.api import fsdp_trainer
    if fsdp_trainer(config):
        return None
    return (f"{_config_file(args)}: trainer.trainer_strategy is {config.strategy}: rft-solver plans FSDP trainers "
            "(fsdp, or fsdp2 for Offload), whose settings do not carry over to it; plan it by hand")


def _write_batch_refusal(args: argparse.Namespace, config: TrinityConfig) -> str | None:
    """Why --write refuses a --train-batch-size other than the batch the config sets, which the copy keeps; None
    where it takes it."""
    if args.train_batch_size in (None, config.train_batch_size) or not config.train_batch_size:
        return None
    return (f"--train-batch-size {args.train_batch_size}: {args.from_config} gives a train batch of "
            f"{config.train_batch_size} ({config.train_batch_source}), which --write keeps: drop "
            "--train-batch-size, or change the config's batch first")


def other_model_planned(args: argparse.Namespace, catalog: Catalog, config: TrinityConfig) -> tuple[str, str] | None:
    """Where a --model, or a --model-config named after a catalogue model, names another catalogue model than
    --from-config's `config` trains (`other_catalogue_model`): the config's and the plan's, as the catalogue names them;
    None where it names none, or the config's own (the config.json its model.model_path names), or a name the
    catalogue does not know (a local path, say: the user's to give)."""
    from solver.tables import model_config_file, same_file
    from solver.trinity import other_catalogue_model
    if args.model is None and args.model_config is None or config.model_path is None:
        return None
    local = local_config_json(config)
    if args.model_config and local is not None and same_file(model_config_file(args.model_config), local):
        return None  # the config.json its model.model_path names: the config's own model
    planned = catalog.model(args.model) if args.model else catalog.models[-1]  # --model-config's, added last
    return other_catalogue_model(planned, config.model_path, local_by_contents=False)


def _write_model_refusal(args: argparse.Namespace, catalog: Catalog, config: TrinityConfig) -> str | None:
    """Why --write (or --out, --emit) refuses these options, in one line: --write patches the config's model, and
    --out and --emit give keys to merge into it, so one that plans another catalogue model than the config's
    (`other_model_planned`) would apply that model's plan to it (the patch's own check, `other_catalogue_model`, said
    in the options' words). None where it takes them."""
    other = other_model_planned(args, catalog, config)
    if other is None:
        return None
    configured, named = other
    flag = "--model" if args.model else "--model-config"
    made = "--write" if args.write else "--out" if args.out else "--emit trinity"
    return (f"{flag} names {named}, but {args.from_config} trains {configured} (model.model_path): {made} would give "
            f"it another model's plan; drop {flag}")


def _write_cluster_refusal(args: argparse.Namespace, objective: Objective, config: TrinityConfig) -> str | None:
    """Why --write refuses these options: it changes the plan's keys, not the config's cluster, so the plan must use
    the trainer GPUs the config gives it (or, for a config that does not say, that --gpus gives), on its nodes; None
    where they keep to that."""
    from solver.query import CHOOSES_COUNT, minimize_option
    from solver.rules import COMMAND_OPTIONS
    if config.trainer_gpus is None:
        unsaid = (f"--write keeps {args.from_config}'s cluster, which does not say how many GPUs the trainer gets (no "
                  "cluster.gpu_per_node)")
        if objective in CHOOSES_COUNT:  # the count is the question: a plan on fewer GPUs would not be the config's
            return (f"{unsaid}: drop {minimize_option(objective, COMMAND_OPTIONS)} and give them with --gpus N (or use "
                    "--out FILE for a fragment with its own cluster)")
        return f"{unsaid}: give them with --gpus N" if args.gpus is None else None
    trainer = counted(config.trainer_gpus, "GPU")
    keeps = (f"--write keeps {args.from_config}'s cluster, which gives the trainer {trainer}, so the plan must use "
             "exactly that many")
    if objective in CHOOSES_COUNT:
        return (f"{keeps}: drop {minimize_option(objective, COMMAND_OPTIONS)} (or use --out FILE for a fragment with "
                "its own cluster)")
    if args.gpus is not None and args.gpus != config.trainer_gpus:
        return (f"{keeps}: drop --gpus {args.gpus} or change the config's cluster (or use --out FILE for a fragment "
                "with its own cluster)")
    if args.node_gpus is not None and args.node_gpus != config.node_gpus:
        return (f"--node-gpus {args.node_gpus}: --write keeps {args.from_config}'s cluster, whose nodes have "
                f"{config.node_gpus} GPUs (cluster.gpu_per_node), so the plan must lay out the trainer on those: drop "
                "--node-gpus or change the config's cluster (or use --out FILE for a fragment with its own cluster)")
    return None


def write_trinity(args: argparse.Namespace, answers: tuple[Answer, ...], catalog: Catalog, model: Model,
                  config_text: str, node_gpus: int,
                  config: TrinityConfig | None) -> tuple[list[Fragment | None], list[str]]:
    """For --emit, --out and --write: the Trinity fragment of each answer's best plan and its settings (None for an
    answer without a plan), after writing --out and --write if asked, with the notes on what was made and written
    (or not written, for want of a plan), for the caller to print after its notes on the input; none for the other
    options.
    A fragment leaves the rollout engines alone when its rollout GPUs are the `config`'s, and otherwise
    keeps its engines' size and auxiliary models (refused when they do not divide: `engines_refusal`);
    without a config, its engines are of the size `rollout_engines` suggests.

    Every fragment is checked against Trinity's own rules (by `plan_fragment`); a patched user config
    that still breaks them (a hand-set token limit, say) is written with a warning on stderr, except one whose
    prompt and response exceed the plan's length, which Trinity refuses to load (`QueryError`: nothing written).
    """
    from solver.api import fragment_layout
    if not _writing_trinity(args):
        return [], []
    from solver.tables import remove_padding_violation
    from solver.trinity import trainer_level_offload
    from solver.trinity.keys import REMOVE_PADDING_KEYS, value_at
    from solver.trinity.plan_keys import dpo_pair_note

    layout = _config_layout(args, config_text, config)
    fragments, notes = _fragments(args, answers, catalog, model, node_gpus, config, layout)
    if config is not None and config.trainer_gpus is None and answers[0].plans:
        plan = answers[0].plans[0]
        laid_out = fragment_layout(answers[0])[1]  # the fragment's: --rollout-gpus, or whole nodes, may give more
        rollout = config.rollout_gpus if laid_out is None else laid_out
        notes.append(f"solve: note: {args.from_config} gives no cluster (node_num, gpu_per_node): Trinity takes the "
                     "GPUs Ray finds, and the plan holds where that leaves exactly "
                     f"{counted(plan.gpus, 'trainer GPU')} beside the {counted(rollout, 'rollout GPU')}: set "
                     f"cluster.node_num x cluster.gpu_per_node to {plan.gpus + rollout}")
    best = answers[0].best
    offloaded = any(answer.plans and answer.plans[0].offload for answer in answers)
    if offloaded and layout is not None and not trainer_level_offload(layout) and args.trinity_version is None:
        notes.append(f"solve: note: {args.from_config} has no offload flags under trainer itself (Trinity 0.6's, which "
                     "it reads instead of the roles' on verl before 0.8), so what is made from it adds them; Trinity "
                     "before 0.6 refuses them (--trinity-version 0.5 leaves them out)")
    if (layout is not None and args.trinity_version is None and remove_padding_violation(model) is not None
            and value_at(layout, REMOVE_PADDING_KEYS[0]) is None):
        notes.append(f"solve: note: {args.from_config} has no trainer.use_remove_padding (Trinity 0.6's), so what is "
                     f"made from it adds it, false for {model.name}; Trinity before 0.6 refuses it (--trinity-version "
                     "0.5 leaves it out)")
    # `TrinityConfig.dpo`: the algorithm read in this shell's environment, as the plans and all made for them read it
    if config is not None and config.dpo and (dpo_note := dpo_pair_note(
            str(args.from_config), model, args.trinity_version, rows=config.dpo_update_in_rows)):
        notes.append(f"solve: note: {dpo_note}")
    files = {args.out: fragments[0][0]} if args.out and fragments[0] is not None else {}
    length_note: str | None = None  # the length written that prompt and response leave unused, or prompts take
    if args.write and best is not None:  # made (or refused) before any file is written: a refusal leaves none
        patched, warnings, length_note = _patched_config(args, config_text, best, model, answers[0].gpu, catalog,
                                                         config, node_gpus)
        files[args.write] = patched.text
        notes += warnings
    write_all_atomically(files, {args.out: "--out", args.write: "--write"})  # both or neither
    for unwritten in (path for path in (args.out, args.write) if path is not None and best is None):
        stale = " (the file there is left as it was)" if unwritten.exists() else ""
        notes.append(f"solve: note: no plan, so {unwritten} is not written{stale}")
    if args.write and best is not None:
        notes += _written_notes(args, config_text, best, model, patched, length_note,
                                answers[0].node_gpus, catalog.gpu(answers[0].gpu).rocm)
    return fragments, notes  # printed only once the files are in place: a refusal, or a failed write, is one line


def with_apply(args: argparse.Namespace, answers: tuple[Answer, ...], catalog: Catalog, model: Model,
               config_text: str, node_gpus: int, config: TrinityConfig | None) -> tuple[Answer, ...]:
    """For --json: `answers` with ``apply``, ``config_keys_changed`` and ``apply_left_out`` as `solver.api.with_apply`
    gives them for --from-config's config, read in this shell's environment for --trinity-version."""
    from solver.api import with_apply as applied
    from solver.rules import COMMAND_OPTIONS

    return applied(answers, catalog, model, node_gpus, config=config, text=config_text, name=str(args.from_config),
                   where=_config_file(args), environ=os.environ, version=args.trinity_version,
                   option_names=COMMAND_OPTIONS)


def engines_refusal(args: argparse.Namespace, error: EngineError, node_gpus: int) -> str:
    """Why --from-config's engines take no fragment of a plan (`error`), on nodes of `node_gpus`:
    --emit's, --out's and --write's refusal (`solver.api.engines_refusal`)."""
    from solver.api import engines_refusal as refusal
    from solver.rules import COMMAND_OPTIONS

    return refusal(_config_file(args), str(error), node_gpus, COMMAND_OPTIONS)


def lora_refusal(args: argparse.Namespace, layout: Any, plan: Plan, model: Model,
                 kept_by: str) -> str | None:
    """`solver.api.config_lora_refusal` for --from-config's config (`layout`, as `_config_layout` reads it), in this
    shell's environment for --trinity-version: --emit's, --out's and --write's refusal, and the apply lines' first
    comment."""
    from solver.api import config_lora_refusal
    from solver.rules import COMMAND_OPTIONS

    return config_lora_refusal(layout, plan, model, _config_file(args), os.environ, args.trinity_version, kept_by,
                               COMMAND_OPTIONS)


def _config_layout(args: argparse.Namespace, config_text: str, config: TrinityConfig | None) -> Any:
    """--from-config's config as nested mappings (`load_config_mapping`), or None without one."""
    if config is None:
        return None
    from solver.trinity import load_config_mapping  # ruamel: only where a config is read

    with errors_named_by("--from-config"):
        return load_config_mapping(config_text, str(args.from_config))


def hand_applied_keys(args: argparse.Namespace, answers: tuple[Answer, ...], model: Model,
                      config_text: str) -> dict[str, ConfigApplied]:
    """For the view of answers to --from-config (not --emit or --json, whose fragment and ``apply`` hold them): per GPU
    type, what the ``apply`` block says of the config: its keys that the best plan changes beyond its own keys
    (`config_keys_changed`: a role's own token budget or SP, offload flags turned off, ...), as lines, which the block
    would leave as they were, the keys --write keeps as the config has them (`config_keys_kept`), which the block
    leaves too, and the config's ``model.rope_scaling`` as --write leaves it (`rope_scaling_written`), and where the
    config has aliases, every key --write changes (`config_key_changes`), so that a line whose key an alias or a
    ``<<:`` merge makes one value with others names them (`ConfigApplied.changes`), and the aliases --write writes
    out as mappings of their own (`aliases_written_out`); with --write
    too, so that the lines say what the written copy sets; without it, whether a copy --write wrote would differ
    from the config in its comments alone (`_comments_alone_written`)."""
    if args.from_config is None or args.emit or args.json:
        return {}
    from solver.render.summary import ConfigApplied
    from solver.trinity import (
        aliases_written_out,
        config_key_changes,
        config_keys_kept,
        load_config_mapping,
        rope_scaling_written,
    )
    from solver.trinity.patch import hand_changed_keys
    from solver.trinity.reader import aliased_anchors

    config = {"name": str(args.from_config), "environ": os.environ, "version": args.trinity_version}
    with errors_named_by("--from-config"):
        layout = load_config_mapping(config_text, str(args.from_config))
    aliased = bool(aliased_anchors(config_text))  # else no key is one value with another
    hand = {answer.gpu: hand_changed_keys(config_text, answer.best, model, **config)
            for answer in answers if answer.best is not None}
    return {answer.gpu: ConfigApplied(hand[answer.gpu].lines,
                                      config_keys_kept(config_text, answer.best, model, **config),
                                      rope_scaling_written(config_text, answer.best, model, **config)
                                      if answer.best.rope_scaling_factor is not None else None,  # else unsaid
                                      args.write is None and _runs_the_best_plan(answer)
                                      and _comments_alone_written(config_text, answer.best, model, config),
                                      lora_refusal(args, layout, answer.best, model, "these lines keep"),
                                      changes=config_key_changes(config_text, answer.best, model, **config)
                                      if aliased else (),
                                      written_out=aliases_written_out(config_text, answer.best, model, **config)
                                      if aliased else (),
                                      critic_flags_off=hand[answer.gpu].critic_flags_off
                                      if answer.best.critic is not None else ())
            for answer in answers if answer.best is not None}


def _runs_the_best_plan(answer: Answer) -> bool:
    """Whether the config `answer` judged already runs its best plan's GPUs, Offload, SP and length, without which the
    copy --write writes changes keys: only then is it worth a round trip to see (`_comments_alone_written`)."""
    current, best = answer.current, answer.best
    return current is not None and best is not None and (
        current.gpus, current.offload, current.sp, current.max_model_len) == (
        best.gpus, best.setting.offload, best.setting.sp, best.max_model_len)


def _comments_alone_written(config_text: str, best: Plan, model: Model, config: dict[str, Any]) -> bool:
    """Whether the copy of the config (`config_text`, read with `config`: its name, environment and Trinity release)
    that --write would write for `best` holds the same keys and values, differing in comments alone: false where
    the patch refuses the plan (on another cluster than the config's, say), which --write would say, and without
    the round trip where the patch sets a key to another value than the config's (`sets_another_value`)."""
    from solver.trinity import load_config_mapping, patch_trinity_config
    from solver.trinity.patch import sets_another_value

    try:
        if sets_another_value(config_text, best, model, **config):
            return False
        patched = patch_trinity_config(config_text, best, model, **config)
    except OneLineError:
        return False
    return bool(load_config_mapping(patched, config["name"]) == load_config_mapping(config_text, config["name"]))


def _patched_config(args: argparse.Namespace, config_text: str, best: Plan, model: Model, gpu: str, catalog: Catalog,
                    config: TrinityConfig | None, node_gpus: int) -> tuple[PatchedConfig, list[str], str | None]:
    """The --from-config `config_text` (read as `config`) patched for `best`, a plan on `gpu` of `catalog` (for
    --write), with the command that checks the written file as the plan was made (`fragment_check`, and the
    environment variables the config read, as the fragment's header has them): the patched
    config (its text, the keys it removed), a warning for each of its problems (`patched_config_problems`: the rules of
    Trinity's it still breaks, keys it changed on a YAML anchor, ...; its rollout engine, which the patch leaves as it
    is, where it cannot hold the model on `gpu` in nodes of `node_gpus`, as the check says: `rollout_memory_problem`;
    a note for a YaRN off the guide, which the patch kept) and a note where the command could not be
    written in it, and a note on the prompt and response limits: the length it pays for that no sequence uses
    (`unused_length`), or where --write changed the length and kept a response limit set alone, the room Trinity
    gives prompts (`prompt_room_words`); `QueryError` where its prompt and response exceed the plan's length, which
    Trinity refuses to load, or one set alone is not below it, which Trinity lowers, leaving the other one token
    (`limit_at_length_words`)."""
    from solver.api import fragment_check, rollout_memory_problem
    from solver.query import TRAIN_BATCH_KEY, ConfigProblemCode
    from solver.results import YARN_KEPT
    from solver.rules import COMMAND_OPTIONS
    from solver.trinity import (
        CHECK_PLACEHOLDER,
        load_config_mapping,
        overlong_sequences,
        patched_config_problems,
        patched_trinity_config,
        unused_length,
    )
    from solver.trinity.reader import limit_at_length_words, one_limit, prompt_room_words

    check = fragment_check(gpu, catalog, _check_options(args))
    path = str(args.write) if str(args.write).isprintable() else CHECK_PLACEHOLDER  # a line break would end the note
    with errors_named_by("--from-config"):
        patched = patched_trinity_config(config_text, best, model, name=str(args.from_config), environ=os.environ,
                                         version=args.trinity_version, host_ram_gb=args.host_ram, gpu=gpu,
                                         check=check, path=path, option_names=COMMAND_OPTIONS,
                                         check_environment=_config_environment(
                                             args, config, _config_layout(args, config_text, config), best, model))
    # The patched config as ruamel reads it, as the original was (PyYAML refuses some YAML ruamel takes).
    mapping = load_config_mapping(patched.text, str(args.write))
    overlong = overlong_sequences(mapping, str(args.write), os.environ)
    if overlong is not None:
        least = overlong[1]
        raise QueryError(f"--write {args.write}: {overlong[0]}: Trinity would refuse to load it; lower them in "
                         f"{args.from_config}, or plan for {least} tokens or more (--len {least})")
    limit = one_limit(mapping, str(args.write), os.environ)
    if limit is not None and (at_length := limit_at_length_words(limit)) is not None:
        raise QueryError(f"--write {args.write}: {at_length}; lower it in {args.from_config} below {limit.length}")
    problems = patched_config_problems(config_text, patched, best, model, name=str(args.from_config),
                                       environ=os.environ, version=args.trinity_version,
                                       option_names=COMMAND_OPTIONS,
                                       train_batch_size=None if config is None else config.train_batch_size,
                                       train_batch_source=TRAIN_BATCH_KEY if config is None else
                                       config.train_batch_source)
    engine = None if config is None else rollout_memory_problem(config.vllm_rollout, model, catalog.gpu(gpu),
                                                                config.node_gpus or node_gpus, best.max_model_len)
    problems += [engine] if engine is not None else []
    # A YaRN the patch kept (it reaches the length: `keys_for_plan`) is the one off the guide: nothing needed.
    added = _base_added(config_text, mapping, args, best, model)
    kept = f"{COMMAND_OPTIONS.write} kept it" + (f": {YARN_KEPT}" if added is None else f" ({YARN_KEPT}) {added}")
    off_guide = ConfigProblemCode.ROPE_SCALING_OFF_GUIDE
    warnings = [f"solve: note: {args.write}: {problem.words}; {kept}" if problem.code is off_guide
                else f"solve: warning: {args.write}: {problem.words}" for problem in problems]
    if patched.lora_note is not None:
        warnings.append(f"solve: note: {patched.lora_note}")
    if patched.critic_note is not None:
        warnings.append(f"solve: note: {args.write}: {patched.critic_note}")
    if patched.unwritten_check is not None:
        said = "".join(f"{paragraph}; " for paragraph in patched.unwritten_note)
        warnings.append(f"solve: note: {args.write}: a config in flow style ({{...}}) holds no comment line, so "
                        "--write set the plan's keys in it without the note a block config gets above "
                        f"model.max_model_len: {said}check the file with: {patched.unwritten_check}")
    original = one_limit(load_config_mapping(config_text, str(args.from_config)), str(args.from_config), os.environ)
    room = (prompt_room_words(limit) if limit is not None and (original is None or original.length != limit.length)
            else None)  # where --write changed the length, and kept the response limit
    return patched, warnings, unused_length(mapping, str(args.write), os.environ) or room


def _base_added(config_text: str, patched: Any, args: argparse.Namespace, best: Plan, model: Model) -> str | None:
    """What --write added to the config's own YaRN that it kept, in words: the model's own RoPE keys the config's
    ``model.rope_scaling`` lacked (its ``partial_rotary_factor``, its base: `solver.trinity.plan_keys`' `_yarn_keys`),
    and where it added the base, why where a release fails without it (`solver.rules.mapped_theta_words`); None where
    it added none."""
    from solver.rules import mapped_theta_words
    from solver.tables import counted_release
    from solver.tables.text import and_joined
    from solver.trinity import load_config_mapping
    from solver.trinity.keys import value_at

    rope, original = ("model", "rope_scaling"), load_config_mapping(config_text, str(args.from_config))
    added = {key: value_at(patched, (*rope, key)) for key in ("partial_rotary_factor", "rope_theta")
             if value_at(patched, (*rope, key)) is not None and value_at(original, (*rope, key)) is None}
    if not added:
        return None
    what = "the base it lacked" if list(added) == ["rope_theta"] else "what it lacked"
    why = mapped_theta_words(counted_release(args.trinity_version, best.expert_layout, best.trinity_version))
    return (f"and added {what}, {model.name}'s own {and_joined([f'{key} {value}' for key, value in added.items()])}"
            + ("" if why is None or "rope_theta" not in added else f": {why}"))


def _check_options(args: argparse.Namespace) -> tuple[str, ...]:
    """The planner's options that the command checking a config as the plans were made needs (the --emit header's and
    --write's, `fragment_check`): `planning_check_options`', then --model-config where given, and --model where
    given with --from-config: they name the model where the config's model.model_path names none the planner knows
    (a catalogue model's --model without --from-config is left out, so that the header's command is
    `solver.trinity_config`'s, which gives --model-config alone, its ``model_config=``); and --lora-targets and
    --lora-exclude where given with --from-config: the plans counted the adapter on their modules, not on the config's
    own target_modules and exclude_modules, which the config keeps (without a config, the keys write them)."""
    given = args.from_config is not None
    model = ("--model", args.model) if args.model is not None and given else ()
    targets = (*(("--lora-targets", args.lora_targets) if args.lora_targets is not None and given else ()),
               *(("--lora-exclude", args.lora_exclude) if args.lora_exclude is not None and given else ()))
    return (*planning_check_options(args), *model,
            *(("--model-config", str(args.model_config)) if args.model_config is not None else ()), *targets)


def _config_environment(args: argparse.Namespace, config: TrinityConfig | None, layout: Any, best: Plan,
                        model: Model) -> tuple[tuple[str, str], ...]:
    """The environment variables that --from-config's `config` (`layout`: as nested mappings) read, in the keys read
    for the plan and in those its check reads on `best`'s trainer GPUs and length (`check_environment`), which the
    command checking it as the plan was made sets (the fragment's header and --write's note): none without a
    config."""
    if config is None:
        return ()
    from solver.trinity import check_environment

    return check_environment(config, layout, model, best.gpus, environ=os.environ, version=args.trinity_version,
                             max_model_len=best.max_model_len)


def _writing_trinity(args: argparse.Namespace) -> bool:
    """Whether the options print or write a Trinity fragment (--emit, --out, --write), not only --json's settings."""
    return bool(args.emit or args.out or args.write)


def _fragments(args: argparse.Namespace, answers: tuple[Answer, ...], catalog: Catalog, model: Model,
               node_gpus: int, config: TrinityConfig | None,
               layout: Any) -> tuple[list[Fragment | None], list[str]]:
    """The Trinity fragment of each answer's best plan and its settings (`write_trinity` says of which engines, and
    where None), and the notes on them: the cluster's layout, the engines' size, an answer without a plan and, with
    --check, the verdict of settings it exits 1 for (for --emit, which prints no view)."""
    from solver.api import fragment_check, fragment_engines, settings_arguments
    from solver.memory import engines_note
    from solver.render import UNDECIDED_HINT, UNPROVEN_HINT
    from solver.results import CautionCode
    from solver.rules import COMMAND_OPTIONS
    from solver.trinity import EngineError, fragment_for

    fragments: list[Fragment | None] = []
    notes = []
    for answer in answers:
        if args.emit and args.check and answer.current is not None and answer.current.check_fails:
            notes += [f"solve: {answer.gpu}: --check: {words}"  # no view shows them
                      for words in (answer.current.verdict, *answer.current.problems_pointed_to)]
        if not answer.plans:
            fragments.append(None)
            if args.emit:
                undecided = f": {UNDECIDED_HINT}" if answer.status == "unknown" else ""
                notes.append(f"solve: {answer.gpu}: {answer.no_plan_line}{undecided}")
            continue
        notes += [note] if (note := _layout_note(answer)) else []
        # As solver.api.trinity_config sizes them; engines too small for the model are the plan's caution already,
        # which the fragment's header says.
        unheld = answer.plans[0].cautions_coded(CautionCode.ROLLOUT_ENGINES_UNHELD)
        if config is None and not unheld and (suggested := fragment_engines(answer, catalog)):
            notes += [note] if (note := engines_note(suggested, model.name, catalog.gpu(answer.gpu))) else []
        made = "--emit trinity" if args.emit else "--out" if args.out else "--write"
        if (unkept := lora_refusal(args, layout, answer.plans[0], model, f"{made} keeps")) is not None:
            raise QueryError(unkept)
        check = fragment_check(answer.gpu, catalog, _check_options(args))
        keys = settings_arguments(answer, answer.plans[0], catalog, model, config, layout, args.trinity_version,
                                  os.environ)
        try:
            fragments.append(fragment_for(keys, gpu=answer.gpu, rocm=catalog.gpu(answer.gpu).rocm,
                                          node_gpus=answer.node_gpus, host_ram_gb=answer.host_ram_gb, check=check,
                                          option_names=COMMAND_OPTIONS,
                                          dpo_mode_unset=answer.plans[0].dpo_mode_unset,
                                          # as the config's plans count its LoRA on the model (as the API's)
                                          config_lora_rank=0 if (adapter := answer.plans[0].config_adapter) is None
                                          else adapter.rank, token_cap=answer.token_cap_words(COMMAND_OPTIONS),
                                          check_environment=_config_environment(args, config, layout,
                                                                                answer.plans[0], model)))
        except EngineError as error:  # the config's engines cannot take the rollout GPUs this plan leaves
            raise QueryError(engines_refusal(args, error, node_gpus)) from None
        if args.emit and answer.status == "feasible":  # the view says so under the plan
            notes.append(f"solve: {answer.gpu}: {UNPROVEN_HINT.format('this plan')}")
    return fragments, notes


def _written_notes(args: argparse.Namespace, config_text: str, best: Plan, model: Model,
                   patched: PatchedConfig, length_note: str | None, node_gpus: int, rocm: bool) -> list[str]:
    """The notes on a config --write `patched` for `best` (on nodes of `node_gpus`, of an AMD GPU where `rocm`):
    the environment variables to set for its check to read the keys that decide its tokens per GPU
    (`PatchedConfig.unread_note`), interpolations kept or replaced (`PatchedConfig.replaced_notes`), the keys the
    patch removed (`PatchedConfig.removed_for_05`: Trinity 0.6's under ``trainer``, which 0.5 refuses), a length no
    sequence uses or prompts take (`length_note`), the roles' and the critic's own token budgets set to the plan's or
    kept (`own_budget_changes`), YaRN's reach (`yarn_trainer_words`), a lowered budget Trinity 0.5.0 undoes
    (`lowered_budget_undone`), and Env, which no config key can carry (on ROCm, with the word on its other variable,
    `rocm_env_note`)."""
    from solver.results import ENV_EXPORT, env_when, lowered_budget_undone, rocm_env_note, spans_nodes
    from solver.rules import one_sequence_per_micro_batch, token_budget
    from solver.trinity import (
        ROLE_KEYS_IGNORED,
        kept_interpolated_keys,
        kept_interpolations,
        keys_05_refuses_why,
        load_config_mapping,
        yarn_trainer_words,
    )
    from solver.trinity.plan_keys import own_budget_changes

    config_name = str(args.from_config)
    notes = [f"solve: note: {args.write}: {patched.unread_note}"] if patched.unread_note else []
    notes += [f"solve: note: {args.write}: {kept}" for kept in kept_interpolations(
        config_text, best, model, name=config_name, environ=os.environ, version=args.trinity_version)]
    notes += [f"solve: note: {args.write}: {replaced}" for replaced in patched.replaced_notes]
    kept_keys = kept_interpolated_keys(config_text, best, model, name=config_name, environ=os.environ,
                                       version=args.trinity_version)  # said above: the patch sets none of them
    if removed := patched.removed_for_05:
        notes.append(f"solve: note: {args.write}: {', '.join(removed)} removed: {keys_05_refuses_why(len(removed))}")
    notes += [f"solve: note: {args.write}: {length_note}"] if length_note else []
    planned = best.max_token_len_per_gpu
    # Trinity 0.5 runs verl before 0.8, which reads the roles' own budgets: no word of Trinity 0.6's verl 0.8 path.
    scope = f" ({ROLE_KEYS_IGNORED})" if args.trinity_version != "0.5" else ""
    changes = own_budget_changes(best, load_config_mapping(config_text, config_name), os.environ,
                                 one_sequence_per_micro_batch(model), args.trinity_version)
    notes += [f"solve: note: {args.write}: {key} {change}{scope}"
              for key, change in changes if key not in kept_keys]  # roles' kept, raised or lowered
    if undone := lowered_budget_undone(best, args.trinity_version):
        notes.append(f"solve: note: {args.write}: trainer.max_token_len_per_gpu {planned} is below Trinity's default "
                     f"ceil(2 x {best.max_model_len} / {best.sp}) = {token_budget(best.max_model_len, best.sp)}: "
                     f"{undone}")
    if best.rope_scaling_factor is not None and args.trinity_version != "0.5":
        notes.append(f"solve: note: {args.write}: {yarn_trainer_words(not best.without_rollout)}")
    if best.env:  # no config key can carry Env; each node's Ray workers take the environment of its own `ray start`
        when = env_when(spans_nodes(best, node_gpus))  # as the summary's apply lines say it
        rocm_note = f". {rocm_env_note()}" if rocm else ""
        notes.append(f"solve: note: {args.write} needs Env, which a config cannot set: {ENV_EXPORT} {when}{rocm_note}")
    return notes


def _layout_note(answer: Answer) -> str | None:
    """The note for stderr when the fragment's rollout gets more GPUs than asked (`fragment_layout`): the trainer
    takes whole nodes."""
    from solver.api import fragment_layout
    nodes, rollout = fragment_layout(answer)
    if rollout is None or rollout == answer.rollout_gpus or answer.best is None:
        return None
    return (f"solve: note: rollout gets {counted(rollout, 'GPU')}, not {answer.rollout_gpus}: the trainer's "
            f"{answer.best.gpus} GPUs take whole nodes of {answer.node_gpus}, and rollout the rest of the {nodes} "
            "nodes")
