"""plan_settings: the keys a plan's Trinity fragment writes, in its order, and the same keys as data
(`TrinitySettings`): what `trinity_fragment` writes as YAML and ``solve --json``'s ``apply`` carries, both checked
against Trinity's rules (`fragment_keys`) before they are returned. Importing this module loads no ruamel; making
settings does (the check reads values as Trinity does, `solver.trinity.checks`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from solver.query import NODE_SIZE_PATH, TRAIN_BATCH_PATH, ConfigProblemCode, check_trinity_version
from solver.results import Plan, SettingsArguments, TrinitySettings, plan_environment, written_release
from solver.rules import (
    API_OPTIONS,
    OptionNames,
    batch_split_violation,
    one_sequence_per_micro_batch,
    whole_nodes_violation,
)
from solver.tables import (
    MAX_GPUS,
    MAX_TRAIN_BATCH,
    Model,
    OneLineError,
    QueryError,
    TrinityVersion,
    brief,
    check_types,
    counted,
    written_layout,
)
from solver.trinity.keys import REMOTE_ENGINES, check_environ, trains_dpo, value_at
from solver.trinity.plan_keys import (
    PlanKey,
    config_trains_critic,
    config_trains_dpo,
    keys_for_plan,
    turns_dpo_rows,
)

if TYPE_CHECKING:
    from solver.trinity.interpolation import NoEnvironment


class EngineError(OneLineError):
    """Rollout GPUs that a config's engines (their GPUs each, its auxiliary models) cannot take."""


def plan_settings(
    plan: Plan, model: Model, rollout_gpus: int | None = None, *, nodes: int = 1,
    shared_gpus: tuple[int, ...] | None = None, engines: tuple[int, int] | None = (0, 1), layout: Any = None,
    version: TrinityVersion | None = None, train_batch_size: int | None = None, dpo: bool | None = None,
    environ: Mapping[str, str] | None = None, config_lora: bool = False,
) -> TrinitySettings:
    """The settings `trinity_fragment` writes with the same arguments (those of its that decide keys; the others only
    word its header), as data, without making its text: `QueryError` for arguments of the wrong kinds, outside
    their ranges or at odds (`checked_settings_arguments`: `dpo` False beside a `layout` that trains DPO on a padded
    model), `EngineError` for rollout GPUs the engines cannot take. Checked against
    Trinity's rules as the fragment is (`fragment_keys`). `environ`: where `layout`'s interpolations are read, as
    `trinity_fragment` takes it (None: each ``${oc.env:VAR,default}`` at its default, which settings do not say);
    `config_lora` as `trinity_fragment`'s."""
    return settings_for(SettingsArguments(plan, model, rollout_gpus, nodes=nodes, shared_gpus=shared_gpus,
                                          engines=engines, layout=layout, version=version,
                                          train_batch_size=train_batch_size, dpo=dpo, environ=environ,
                                          config_lora=config_lora))


def settings_for(arguments: SettingsArguments) -> TrinitySettings:
    """`plan_settings` of `arguments` (its arguments as one value, as an answer's or a placement's are made)."""
    # The options only word the keys' comments, which the settings do not carry.
    return fragment_keys(checked_settings_arguments(arguments), API_OPTIONS)[1]


def fragment_keys(arguments: SettingsArguments, option_names: OptionNames, gpu: str | None = None,
                  token_cap: str | None = None) -> tuple[list[PlanKey], TrinitySettings, NoEnvironment | None]:
    """The keys of `plan_settings`' `arguments` (checked: `checked_settings_arguments`) in the fragment's order, the
    model section's, the cluster's, the explorer's (the rollout model's YaRN, `layout`'s), then the trainer's, the
    settings they make, checked against Trinity's rules (`trinity_config_problems`): every fragment and every settings
    object is made here; and, for want of an `environ`, how `layout` was read in none (`NoEnvironment`: the variables
    whose defaults its interpolations took, the keys left unread for a variable without one; None where one is
    given). `option_names`, the plan's GPU type `gpu` (None: not known) and how its capped budget names the cap
    (`token_cap`: `keys_for_plan`'s) word the keys' comments only.
    `EngineError` as `plan_settings`; `RuntimeError` for settings that break the rules, a defect of rft-solver's, never
    of the input."""
    plan, model, layout, version = arguments.plan, arguments.model, arguments.layout, arguments.version
    from solver.trinity.interpolation import NoEnvironment  # ruamel: only once settings are made, not on import

    environ = NoEnvironment() if arguments.environ is None else arguments.environ
    # DPO's actor size (`solver.trinity.plan_keys.DPO_PAIR_SIZES`): as the plan counted it, else as `layout` trains
    dpo = config_trains_dpo(layout, environ) if arguments.dpo is None else arguments.dpo
    keys = [key for key in keys_for_plan(plan, model, layout, environ, version=version,
                                         version_option=option_names.trinity_05, gpu=gpu, dpo=dpo,
                                         config_lora=arguments.config_lora, token_cap=token_cap)
            if not (key.existing_only and value_at(layout, key.path) is None)]
    rollout_gpus = arguments.rollout_gpus
    cluster_keys = [] if rollout_gpus is None else _cluster_keys(plan, rollout_gpus, arguments.nodes, arguments.engines,
                                                                 layout, arguments.train_batch_size)
    ordered = [*(key for key in keys if key.path[0] == "model"), *cluster_keys,
               *(key for key in keys if key.path[0] == "explorer"), *(key for key in keys if key.path[0] == "trainer")]
    settings = TrinitySettings(config=_nested(ordered),
                               environment=plan_environment(plan, model, arguments.shared_gpus),
                               trinity_06_keys=_trinity_06_keys(ordered, plan, model, layout, environ, version))
    from solver.trinity.checks import trinity_config_problems

    # DPO's actor size is checked for DPO; its 2 where the release may be on either verl line is what its comment says
    # (a DPO `layout`'s rows too, which the keys turn its dynamic batch sizes off for)
    # (a `layout` whose algorithm trains no critic is checked as GRPO's, PPO's but the critic, which every release has:
    # the keys set none of the critic's sizes there, `keys_for_plan`)
    checked = ({**settings.config, "algorithm": {"algorithm_type": "dpo"}}
               if dpo or turns_dpo_rows(plan, model, layout) or config_trains_dpo(layout, environ)
               else settings.config if config_trains_critic(layout, environ)
               else {**settings.config, "algorithm": {"algorithm_type": "grpo"}})
    # LoRA on a mixture of experts whose adapter config Trinity saves cut short, or on targets that one transformers'
    # PEFT alone takes where the release may run either (the plan's caution, checked on the layouts the config is
    # written for): the LoRA key's comment says so; DPO's mode only where the keys leave the config's (no mode: train
    # here): the config's own stands, which the fragment's header says to set where it is not train
    # (`solver.trinity.fragment.DPO_MODE_NOTE`) and the config's check refuses (``algorithm-mode-refused``); a mode the
    # keys write is theirs to get right; nor the dataset's path, which the keys never write (the config's own stands,
    # which the config's check refuses without: ``trainer-input-missing``)
    passed = (ConfigProblemCode.LORA_MOE_CONFIG_UNSAVED, ConfigProblemCode.LORA_MOE_CONFIG_UNSAVED_REFUSED,
              ConfigProblemCode.LORA_TARGETS_ONE_TRANSFORMERS, ConfigProblemCode.DPO_PAIR_DOUBLED,
              ConfigProblemCode.LORA_EXCLUDED_ADAPTED, ConfigProblemCode.TRAINER_INPUT_MISSING,
              *((ConfigProblemCode.ALGORITHM_MODE_REFUSED,) if keys_leave_mode(ordered) else ()))
    problems = [problem.words for problem in trinity_config_problems(
        checked, model, plan.gpus, environ=settings.environment, version=version,
        experts=written_layout(version, plan.expert_layout)) if problem.code not in passed]
    if problems:  # no settings that Trinity would refuse leave here, as a fragment's text or as data
        raise RuntimeError(f"the Trinity config made for {plan.setting.label} breaks Trinity's rules: {problems}")
    return ordered, settings, environ if isinstance(environ, NoEnvironment) else None


def keys_leave_mode(keys: Iterable[PlanKey]) -> bool:
    """Whether `keys` write no ``mode`` (`_cluster_keys` writes ``mode: train`` without rollout GPUs): the config's
    own stands."""
    return not any(key.path == ("mode",) for key in keys)


def _nested(keys: Iterable[PlanKey]) -> dict[str, Any]:
    """`keys` as nested mappings, in their order: what a YAML loader reads from the fragment's lines."""
    nested: dict[str, Any] = {}
    for key in keys:
        section = nested
        for name in key.path[:-1]:
            section = section.setdefault(name, {})
        section[key.path[-1]] = key.value
    return nested


def _trinity_06_keys(keys: Iterable[PlanKey], plan: Plan, model: Model, layout: Any, environ: Mapping[str, str],
                     version: TrinityVersion | None) -> tuple[tuple[str, ...], ...]:
    """The paths of `keys` (made for `version`) that only Trinity 0.6 takes: for no release given, the plan's keys
    (`keys_for_plan`, `layout` read in `environ`) that it leaves out for 0.5; none for a release given, whose keys are
    its own."""
    if version is not None:
        return ()
    only_06 = ({key.path for key in keys_for_plan(plan, model, layout, environ)}
               - {key.path for key in keys_for_plan(plan, model, layout, environ, version="0.5")})
    return tuple(key.path for key in keys if key.path in only_06)


def _cluster_keys(plan: Plan, rollout_gpus: int, nodes: int, engines: tuple[int, int] | None,
                  layout: Any, train_batch_size: int | None) -> list[PlanKey]:
    """The keys that lay out `trinity_fragment`'s cluster: ``mode: train`` without rollout GPUs (with
    ``buffer.train_batch_size``, which Trinity requires in mode train, where `train_batch_size` is known), the cluster's
    nodes and GPUs per node (saying which are the trainer's and the rollout's, and how many of the budget the plan
    leaves idle), and (with `engines`) the explorer's rollout engines; `EngineError` where the engines are elsewhere
    or do not divide the rollout GPUs."""
    idle = f"; {counted(plan.unused_gpus, 'GPU')} of the budget unused" if plan.unused_gpus else ""
    why_train = ("Trinity trains DPO on a dataset in mode train alone, with no explorer anywhere" if plan.dpo else
                 "no explorer here: it runs elsewhere, in mode explore, or none does (SFT)")
    no_explorer = [PlanKey(path=("mode",), value="train", comment=why_train),
                   *([PlanKey(path=TRAIN_BATCH_PATH, value=train_batch_size,
                              comment="the batch planned for, which Trinity requires in mode train")]
                     if train_batch_size is not None else [])]
    keys = [
        *(no_explorer if not rollout_gpus else []),
        PlanKey(path=("cluster", "node_num"), value=nodes),
        PlanKey(
            path=NODE_SIZE_PATH,
            value=(plan.gpus + rollout_gpus) // nodes,
            comment=(f"{plan.gpus} trainer + {rollout_gpus} rollout" if rollout_gpus else
                     f"{plan.gpus} trainer, no rollout GPU here") + idle,
        ),
    ]
    if engines is not None and rollout_gpus:
        others, size = engines
        if not size:
            raise EngineError(f"its rollout engines run elsewhere (engine_type {' or '.join(REMOTE_ENGINES)}) and "
                              f"take none of the {rollout_gpus - others} rollout GPUs")
        if (rollout_gpus - others) < size or (rollout_gpus - others) % size:
            raise EngineError(f"{rollout_gpus} rollout GPUs less the {others} of auxiliary models are not whole "
                              f"engines of {counted(size, 'GPU')} each")
        keys.append(PlanKey(path=("explorer", "rollout_model", "engine_num"), value=(rollout_gpus - others) // size,
                            comment="one GPU each" if size == 1 else f"{size} GPUs each"))
        if not any(value_at(layout, ("explorer", "rollout_model", key)) is not None
                   for key in ("data_parallel_size", "pipeline_parallel_size")):  # else size is their product
            keys.append(PlanKey(path=("explorer", "rollout_model", "tensor_parallel_size"), value=size))
    return keys


def _check_dpo_pair(model: Model, layout: Any, dpo: bool | None, environ: Mapping[str, str] | None) -> None:
    """`QueryError` for `dpo` False (the plan counted no DPO pair) where `layout` trains DPO, its
    ``algorithm.algorithm_type`` read in `environ` as Trinity reads it (`config_trains_dpo`; None: an interpolation
    at its default, which the message says), on a `model` trained one padded sequence per micro-batch: its actor's
    micro-batch holds a pair, which such a plan does not count (`solver.rules.padded_sequences`), and the size written
    for one sequence splits the pair."""
    from solver.trinity.interpolation import NoEnvironment  # ruamel: only where a layout is read, not on import

    reading = NoEnvironment() if environ is None else environ
    if dpo is not False or not one_sequence_per_micro_batch(model) or not config_trains_dpo(layout, reading):
        return
    written = value_at(layout, ("algorithm", "algorithm_type"))
    how = (" in environ" if environ is not None else " at its default: no environ given (pass the one the plans "
           "read it in)" if isinstance(reading, NoEnvironment) and reading.taken else "")
    read = "" if trains_dpo(written) else f", read from {written}{how}"
    raise QueryError(f"dpo is False, but layout trains DPO (algorithm.algorithm_type: dpo{read}) and {model.name} is "
                     "trained one padded sequence per micro-batch, which for DPO holds a pair the plan did not "
                     "count: plan with dpo=True and pass dpo=True (its answer's dpo_pairs) or None (which reads "
                     "layout)")


def checked_settings_arguments(arguments: SettingsArguments) -> SettingsArguments:
    """`arguments` with their Trinity release the one the config is written for (`written_release`: the plan's own
    where `version` is None); `QueryError` unless `plan_settings`' `arguments` are of their kinds and within their
    ranges: the rollout GPUs,
    nodes, train batch (which the plan's data-parallel ranks divide), engines and shared GPUs' indices, and, with a
    cluster section (rollout GPUs), the trainer and rollout GPUs split into their nodes, of which the trainer takes
    one node's share or whole nodes; `dpo` False beside a `layout` that trains DPO (read in `environ`, a mapping of
    strings or None) on a model trained one padded sequence per micro-batch, whose plan for DPO counts a pair
    (`_check_dpo_pair`)."""
    plan, model, rollout_gpus, nodes, shared_gpus, engines, layout, version, train_batch_size, dpo, environ, \
        config_lora = arguments
    check_types(("plan", plan, Plan), ("model", model, Model), ("rollout_gpus", rollout_gpus, int | None),
                ("nodes", nodes, int), ("shared_gpus", shared_gpus, tuple | None), ("engines", engines, tuple | None),
                ("train_batch_size", train_batch_size, int | None), ("layout", layout, Mapping | None),
                ("dpo", dpo, bool | None), ("config_lora", config_lora, bool))
    check_environ(environ)
    check_trinity_version("version", version)
    if rollout_gpus is not None and not 0 <= rollout_gpus <= MAX_GPUS:
        raise QueryError(f"rollout_gpus must be from 0 to {MAX_GPUS} (or None for no cluster section), got "
                         f"{rollout_gpus}")
    if not 1 <= nodes <= MAX_GPUS:
        raise QueryError(f"nodes must be from 1 to {MAX_GPUS}, got {nodes}")
    unsplit = batch_split_violation(train_batch_size, plan.gpus, plan.sp)
    if train_batch_size is not None and not (1 <= train_batch_size <= MAX_TRAIN_BATCH and not unsplit):
        raise QueryError(f"train_batch_size must be a whole number from 1 to {MAX_TRAIN_BATCH} that the plan's "
                         f"data-parallel ranks ({plan.gpus} GPUs / SP={plan.sp}) divide, got {brief(train_batch_size)}")
    if engines is not None and not (len(engines) == 2 and all(type(n) is int for n in engines)
                                    and engines[0] >= 0 and engines[1] >= 0):
        raise QueryError(f"engines must be (GPUs of other models, GPUs per engine), two whole numbers of at least 0, "
                         f"got {brief(engines)}")
    if shared_gpus is not None and not all(type(n) is int and n >= 0 for n in shared_gpus):
        raise QueryError(f"shared_gpus must be GPU indices, whole numbers of at least 0, got {brief(shared_gpus)}")
    _check_dpo_pair(model, layout, dpo, environ)
    if rollout_gpus is not None:  # else no cluster section: the header says how the trainer alone lies on nodes
        if (plan.gpus + rollout_gpus) % nodes:
            raise QueryError(f"{plan.gpus} trainer + {rollout_gpus} rollout GPUs do not split into "
                             f"{counted(nodes, 'node')} of the same size")
        if violation := whole_nodes_violation(plan.gpus, (plan.gpus + rollout_gpus) // nodes, f"nodes={nodes}"):
            raise QueryError(violation)
    return arguments._replace(version=written_release(plan, version))
