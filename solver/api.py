"""The library API: what the ``solve`` command does, as functions returning frozen pydantic results.

Every result's ``model_dump(mode="json")`` is the JSON the command prints (``--json``), and the command
is a thin layer over these same functions (`solver.query.make_query`, `solver.solve.plan`,
`solver.explain.explain`, `solver.cluster.place`, `solver.memory.breakdown`, `solver.maps.gpu_map`), and the verdict
on a Trinity config's own settings (`with_config_verdicts`) and the fragment ``--emit trinity`` prints
(`trinity_config`) are worked out here. (`estimate_memory` is not named `memory`, the name of the module it uses.)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, get_args

from solver.memory import (
    GRID,
    ROLLOUT_CONTEXT_GIB,
    ROLLOUT_UTILIZATION,
    Breakdown,
    MemoryAnswer,
    MemoryEstimate,
    beyond_calibration,
    breakdown,
    counts_hold_for,
    critic_parameters,
    expert_layout_words,
    fits_host_ram,
    host_critic_gib,
    host_ram_holds,
    layout_difference_words,
    longest_fitting,
    lora_parameters,
    margin_room,
    rollout_engine,
    rollout_engines,
    rollout_sizes,
    shown_host_need,
    shown_training_host_need,
)
from solver.query import (
    CHOOSES_COUNT,
    CONFIG_DPO_SOURCE,
    MODEL_PATH_KEY,
    NODE_SIZE_KEY,
    ROLE_TOKEN_BUDGETS,
    TRAINER_TOKEN_BUDGET,
    ConfigAdapter,
    ConfigProblem,
    ConfigProblemCode,
    EstimateMode,
    GpuNames,
    Objective,
    Progress,
    Query,
    TrinityConfig,
    VllmRollout,
    asked_gpus,
    asked_token_budget,
    check_counts,
    check_dpo,
    check_dpo_budget_unread,
    check_dpo_rollout,
    check_host_ram,
    check_lora_rank,
    check_margin,
    check_node_gpus,
    check_reference_for_release,
    check_reference_with_lora,
    check_run_options,
    check_seed,
    check_sp,
    check_time_limit,
    check_token_budget,
    check_vllm_lora_rank,
    config_token_cap_source,
    counts_reference,
    given_lora_targets,
    keywords_told,
    lora_targets_given,
    make_query,
    raised_at,
    resolve_margin,
    run_choices,
)
from solver.results import (
    ALLOC_CONF_VARIABLES,
    ENV_VARIABLE,
    ROCM_ENV_VARIABLE,
    SCHEMA_VERSION,
    Answer,
    Calibration,
    ClusterResult,
    ConfigCheck,
    ConfigKeyChange,
    CurrentSettings,
    GpuMap,
    JobGone,
    Placement,
    Plan,
    PurchaseResult,
    RolloutEngines,
    SettingsArguments,
    TrinitySettings,
    beyond_fields,
    check_answers_of,
    check_placed_on,
    config_verdict,
    expandable_segments,
    gpu_runtime,
    lora_excluded_adapted_caution,
    lora_moe_caution,
    lora_targets_caution,
    lowered_budget_raised_by,
    written_release,
)
from solver.rules import (
    API_OPTIONS,
    MODEL_CONFIG_PLACEHOLDER,
    BrokenRule,
    BrokenRuleCode,
    OptionNames,
    TablesVerdict,
    batch_over_trainer_gpus_words,
    batch_split_violation,
    check_without_gpu_note,
    cited_tables_verdict,
    counted_tokens,
    counts_dpo_pairs,
    host_ram_bound_words,
    larger_tables,
    least_token_budget,
    micro_batch_stop_words,
    one_sequence_per_micro_batch,
    own_table_cells,
    raised_budget_stop_words,
    saved_split_models,
    shortest_length_of_budget,
    smaller_card_note,
    sp_layout_rule,
    tables_verdict,
    token_budget,
    transformers_4_unloaded_words,
    whole_nodes_violation,
)
from solver.tables import (
    CRITIC_CHOICES,
    EVERY_JOB,
    HOST_RAM_UNITS,
    LAYOUTS_TAKEN,
    MAX_CONFIG_BYTES,
    MAX_ESTIMATED_GPUS,
    MAX_GPUS,
    MAX_TOKENS,
    MAX_WORKERS,
    NODE_GPUS,
    OWN_GPU_IN_CODE,
    OWN_MODEL_IN_CODE,
    Catalog,
    CountedGpu,
    CriticChoice,
    ExpertLayout,
    Fleet,
    GpuType,
    MemoryModel,
    Model,
    QueryError,
    RunningJob,
    Setting,
    TableError,
    TokenBudgetMode,
    TrinityVersion,
    Weights,
    and_joined,
    asked_length,
    brief,
    check_choice,
    check_critic,
    check_once,
    check_types,
    choice_meant,
    chosen,
    counted,
    counted_batch_divisor,
    counted_critic,
    counted_expert_layout,
    cut_thousands_note,
    empty_name,
    folded_choice,
    given_fleet,
    given_path,
    it_or_them,
    load_catalog,
    load_memory_model,
    load_model_config,
    load_weights,
    local_model_config,
    meant_fleet_name,
    model_loaders,
    model_loading,
    named_jobs,
    path_text,
    read_cells_files,
    read_user_file,
    release_name,
    release_words,
    short_length_note,
    shown_value,
    small_host_ram_note,
    sp_attention_violation,
    trinity_release,
    with_own_hint,
)

if TYPE_CHECKING:  # the cluster's modules load OR-Tools: imported where a placement is asked for
    from solver.cluster import Planner
    from solver.trinity.checks import CriticSpLine, StateGroups

__all__ = [
    "answer_query",
    "buy_nodes",
    "calibrate_memory_model",
    "check_config",
    "check_config_model",
    "check_fleet_lora_targets",
    "check_judged_length",
    "config_answers",
    "config_lora_refusal",
    "config_nodes_note",
    "config_query",
    "engines_refusal",
    "estimate_memory",
    "fragment_check",
    "fragment_engines",
    "fragment_layout",
    "fsdp_trainer",
    "local_config_model",
    "make_query",
    "map_plans",
    "memory_answer",
    "patch_takes",
    "place",
    "placement_configs",
    "placement_settings",
    "plan",
    "rollout_memory_problem",
    "settings_arguments",
    "trinity_config",
    "trinity_settings",
    "with_apply",
    "with_config_verdicts",
]
"""The public names: the module's functions, and `make_query` (solver.query's), whose `Query` `answer_query` takes.
The rest of what it imports is its own (a type checker with ``--strict`` refuses them from here)."""


ANSWER_BATCH_SOURCE = "the answer's train_batch_size"
"""Where `trinity_config`'s train batch comes from, as its caution names it: the answer's field, true of every source
it was planned from (a keyword, a flag, a config's key)."""


def _check_named(catalog: Catalog, model: object, gpu: object, count_keyword: str, *,
                 gpu_lists: bool = False) -> None:
    """`QueryError` for a `model` or `gpu` name (a string, or, where `gpu_lists`, a list or tuple of them, as
    `asked_gpus` reads them; None for no GPU type) that `catalog` lacks, saying how code gives one of its own
    (`OWN_MODEL_IN_CODE`, `OWN_GPU_IN_CODE`), or, for a GPU type with a count (``a100x4``), the keywords that give them
    apart (the count to `count_keyword`); other values are left to the checks that name their types."""
    _refuse_empty_names(model, gpu, gpu_lists)
    gpus = gpu if gpu_lists and isinstance(gpu, list | tuple) else [gpu]
    listed = (gpus if gpus is gpu else [name.strip() for name in gpu.split(",")]
              if gpu_lists and isinstance(gpu, str) and "," in gpu else None)  # a comma list: the names apart

    def with_count(found: CountedGpu) -> str:
        apart = [found.name if given == found.given else given for given in listed] if listed else found.name
        return found.refused("gpu=", f"gpu={apart!r}, {count_keyword}={found.gpus}")

    find_gpu = (partial(asked_gpus, catalog, with_count=with_count) if gpu_lists
                else partial(catalog.gpu, with_count=with_count))
    for name, find, hint in ((model, catalog.model, OWN_MODEL_IN_CODE),
                             *((gpu_name, find_gpu, OWN_GPU_IN_CODE) for gpu_name in gpus)):
        if isinstance(name, str):
            try:
                find(name)
            except QueryError as error:
                raise QueryError(with_own_hint(error, hint)) from None


def _refuse_empty_names(model: object, gpu: object, gpu_lists: bool) -> None:
    """`QueryError` where `model` or `gpu` (where `gpu_lists`, a list of names too) is an empty name or holds one, as
    `plan` refuses them (`_refuse_empty_name`)."""
    _refuse_empty_name("model", model, "a model", ("4B", "8B"), lists=False)
    _refuse_empty_name("gpu", gpu, "a GPU type", ("a100", "h100"), lists=gpu_lists)


def _refuse_empty_name(keyword: str, value: object, kind: str, examples: tuple[str, str], *, lists: bool) -> None:
    """`QueryError` in the command's words (`empty_name`), naming `keyword`, where `value` is an empty name (``''``),
    or, where it `lists` them, holds one (``['a100', '']``, ``'a100,'``); `kind` (``a GPU type``) and two `examples`
    (``a100``, ``h100``) say what to give."""
    names = (value if lists and isinstance(value, list | tuple)
             else value.split(",") if lists and isinstance(value, str) else [value])
    if any(isinstance(name, str) and not name.strip() for name in names):
        several, example = (", or several in a list", list(examples)) if lists else ("", examples[0])
        raise QueryError(empty_name(f"{keyword}={brief(value)}", f"{kind}{several}", f"{keyword}={example!r}"))


@keywords_told
def plan(
    model: str,
    *,
    gpu: GpuNames = None,
    objective: Objective = "cheapest",
    budget_gpus: int | None = None,
    max_model_len: int | str | None = None,
    exact: bool = False,
    sp: int | None = None,
    env: bool | None = None,
    offload: bool | None = None,
    top: int = 1,
    weights: Weights | None = None,
    estimate: EstimateMode = "auto",
    margin: float | None = None,
    token_budget: TokenBudgetMode | int | str = "default",
    host_ram_gb: float | None = None,
    node_gpus: int | None = None,
    rollout_gpus: int | None = None,
    total_gpus: int | None = None,
    train_batch_size: int | None = None,
    trinity_version: str | None = None,
    reference_model: bool | None = None,
    lora_rank: int = 0,
    critic: CriticChoice | None = None,
    dpo: bool = False,
    lora_targets: str | None = None,
    lora_exclude_modules: str | None = None,
    memory: MemoryModel | None = None,
    explain: bool = False,
    time_limit_s: float = 10.0,
    workers: int = 1,
    catalog: Catalog | None = None,
    seed: int = 0,
    deadline_s: float | None = None,
    option_names: OptionNames = API_OPTIONS,
) -> tuple[Answer, ...]:
    """Answer a planning question, one `Answer` per GPU type: `gpu`'s (a name, or a list or tuple of names, answered
    in that order, a GPU type named twice once, within one GPU budget), else every documented one's.

    ``objective``: ``"cheapest"`` (needs `max_model_len`), ``"max_len"`` (needs `budget_gpus`), ``"min_gpus"`` or
    ``"min_gpu_hours"`` (the fewest GPUs x cost, then the fewest GPUs; both need `max_model_len`, and without
    `budget_gpus` weigh every count up to 64). `max_model_len`: tokens, or a str of thousands of 1024 (``"64k"``), read
    as a `Job`'s (`asked_tokens`); at most `SHORT_LENGTH_NOTED`, the answers' `notes` say so, as ``--len 64``'s note
    does, and so for thousands that cut a power of two (``"131k"``) and a `host_ram_gb` below `SMALL_HOST_RAM_GIB`
    (`_input_notes`). ``token_budget="auto"`` lets an estimated plan whose
    Trinity-default ``max_token_len_per_gpu`` does not fit take a lower one (the plan's
    ``max_token_len_per_gpu`` says which); a whole number ``token_budget=N`` does too, and then no plan takes more than
    N tokens per GPU, and each holds a sequence at N (``ceil(L / SP) <= N``; `Query.token_budget_cap`).
    `train_batch_size` (experiences per training step, Trinity's
    ``buffer.train_batch_size``) keeps to GPU counts and SP degrees whose data-parallel ranks (GPUs / SP) divide it;
    without it, a plan whose ranks are not a power of two is cautioned; with it and ``trinity_version="0.5"``, a plan
    whose GPUs do not divide it, which Trinity 0.5.0 and 0.5.1 refuse (as ``--trinity-version``). `seed` is CP-SAT's
    (as `make_query`'s). `node_gpus`: the GPUs per node (None: 8); a refusal's nearest plan keeps to a size given, and
    where it has none says so, while for the default 8 it may name one on nodes of 16. `total_gpus` (with
    `rollout_gpus`, in place of `budget_gpus`): the GPUs in all, the trainer's budget what the rollout leaves.
    ``reference_model=False``: the run builds no reference model, so the host memory need counts none of its pinned
    shards (as ``--no-reference``; `Query.reference_model`); None: none with LoRA, else counted. `lora_rank` above 0
    plans a LoRA run of that rank (as ``--lora-rank``; `Query.lora_rank`): its states counted, the tables vouching by
    inference and refuting nothing, its adapter on the modules `lora_targets` names (as ``--lora-targets``:
    `solver.tables.peft_match.LORA_TARGETS_FORMS`; None: ``all-linear``'s) less those the ``exclude_modules`` regex
    `lora_exclude_modules` matches (as ``--lora-exclude``; None: none), which its fragment writes. `critic` plans
    a run with a PPO critic beside the actor (as ``--critic``; `Query.critic`): ``"resident"``, its states on the
    GPUs; ``"offloaded"``, in host memory (its own
    ``offload_policy``); or ``"reloaded"``, in host memory but back on the GPUs for its own update; the tables, which
    measured the actor alone, then vouch for no plan and still refute. `dpo` plans a DPO run (as ``--dpo``;
    `Query.dpo`): a `QueryError` with a `critic` or, without `lora_rank`, ``reference_model=False``, as Trinity's dpo
    algorithm uses no critic and a reference model.
    Raises
    `solver.tables.QueryError` for a request that makes no sense (unknown names, missing numbers, pins no rule allows,
    a value of the wrong type), with one line saying why. `deadline_s`: seconds from now within which every solve of
    the call ends (`answer_query`'s). `option_names`: how the answers' reasons and cautions name the options they point
    to, this API's keywords (`API_OPTIONS`: ``token_budget="auto"``, ``host_ram_gb=48``), or the command's flags
    (`COMMAND_OPTIONS`, as ``solve`` prints them).
    """
    check_types(("explain", explain, bool), ("catalog", catalog, Catalog | None))
    asked_len: int | None = asked_length(max_model_len)  # "64k" as a Job's, a cluster file's and --len's
    budget_asked: TokenBudgetMode | int = asked_token_budget(token_budget)  # "Auto", "16k": as --token-budget
    catalog = catalog if catalog is not None else load_catalog()
    _check_named(catalog, model, gpu, "budget_gpus", gpu_lists=True)
    query = make_query(catalog, model=model, gpu=gpu, objective=objective, budget_gpus=budget_gpus,
                       max_model_len=asked_len, exact=exact, sp=sp, env=env, offload=offload, top=top,
                       weights=weights, estimate=estimate, margin=margin, token_budget=budget_asked,
                       host_ram_gb=host_ram_gb,
                       node_gpus=node_gpus, rollout_gpus=rollout_gpus, total_gpus=total_gpus, memory=memory,
                       time_limit_s=time_limit_s,
                       workers=workers, seed=seed, train_batch_size=train_batch_size, trinity_version=trinity_version,
                       reference_model=reference_model, lora_rank=lora_rank, critic=critic, dpo=dpo,
                       lora_targets=lora_targets, lora_exclude_modules=lora_exclude_modules, option_names=option_names)
    check_dpo_budget_unread(budget_asked, None, catalog.model(query.model), option_names, dpo=query.dpo)
    check_vllm_lora_rank(query.lora_rank, query.rollout_gpus, option_names)
    answers = answer_query(query, catalog, explain=explain, deadline_s=deadline_s)
    notes = _input_notes(option_names, max_model_len, asked_len, host_ram_gb)
    return tuple(answer.model_copy(update={"notes": notes}) for answer in answers) if notes else answers


def _input_notes(option_names: OptionNames, given_length: object, max_model_len: int | None,
                 host_ram_gb: float | None) -> tuple[str, ...]:
    """The notes ``solve`` prints on stderr for the same input, in `option_names`' words, for `Answer.notes` and
    `MemoryAnswer.notes`: a `max_model_len` of a few hundred tokens at most (`short_length_note`), or given as
    thousands of 1024 (`given_length`, as written: ``"131k"``) whose thousands cut a power of two of tokens
    (`cut_thousands_note`), and a `host_ram_gb` below what any GPU node has (`small_host_ram_note`)."""
    notes = []
    if max_model_len is not None:
        notes += [short_length_note(option_names.length, max_model_len, option_names.thousands_written)]
        notes += [cut_thousands_note(f"{option_names.length} {max_model_len // 1024}k", max_model_len,
                                     option_names.thousands_written) if isinstance(given_length, str) else None]
    if host_ram_gb is not None:
        notes += [small_host_ram_note(option_names.host_ram, host_ram_gb, option_names.host_ram_written,
                                      "GB as sold" if option_names.keywords else HOST_RAM_UNITS)]
    return tuple(note for note in notes if note is not None)


def answer_query(query: Query, catalog: Catalog, *, explain: bool = False,
                 deadline_s: float | None = None) -> tuple[Answer, ...]:
    """The answers to a prepared `query` (from `make_query`), each holding it (``query``, which
    `solver.answers_text` renders them with) and its explanation if asked. `deadline_s`
    (None: none) cuts short every solve still running that many seconds from now, and gives the solves after it
    a millisecond each: the answers then say what the query's own time limit would (status ``feasible`` or
    ``unknown``, an explanation ``incomplete``), so the call ends soon after it."""
    from solver.explain import explain as explain_answer  # these import OR-Tools: only solving pays for it
    from solver.solve import call_deadline
    from solver.solve import plan as solve

    check_types(("query", query, Query), ("catalog", catalog, Catalog), ("explain", explain, bool))
    catalog = query.counted_catalog(catalog)  # a config's LoRA adapter counted on its regex's modules
    if deadline_s is not None:
        check_time_limit(deadline_s, "deadline_s")
    with call_deadline(deadline_s):
        answers = solve(query, catalog)
        if explain:
            answers = tuple(a.model_copy(update={"explanation": explain_answer(catalog, query, a)}) for a in answers)
    return tuple(answer.model_copy(update={"query": query}) for answer in answers)


@keywords_told
def place(
    fleet: Fleet | Path | str,
    *,
    minimize: Literal["nodes"] | None = None,
    weights: Weights | None = None,
    time_limit_s: float = 10.0,
    workers: int = 1,
    estimate: EstimateMode = "auto",
    memory: MemoryModel | None = None,
    margin: float | None = None,
    token_budget: TokenBudgetMode = "default",
    catalog: Catalog | None = None,
    seed: int = 0,
    progress: Progress | None = None,
    widen: bool = True,
    trinity_version: str | None = None,
    required: Sequence[str] | None = None,
    option_names: OptionNames = API_OPTIONS,
    current: ClusterResult | Path | str | None = None,
    source: Path | str | None = None,
) -> ClusterResult:
    """Place a fleet's jobs (a `Fleet`, or the path of a cluster file) on its pools; `estimate`, `memory`,
    `margin`, `token_budget` and `trinity_version` as in `plan` ("never": the tables' GPU counts and cells alone;
    with "0.5", a placed plan whose GPUs do not divide its job's train batch is cautioned), `seed` CP-SAT's,
    `progress` called at each better placement (`solver.query.Progress`), `widen` False to leave idle GPUs idle
    (placed jobs otherwise grow onto them, or move to a node no job uses, where that makes them faster or longer),
    `required` the names of jobs that must be placed besides those the fleet marks ``required`` (the answer is
    infeasible where they cannot all be),
    `option_names` as `plan`'s (its reasons name ``minimize="nodes"``, ``solver.buy_nodes``, ``time_limit_s``),
    `current` the placement the fleet runs now, an earlier `place`'s `ClusterResult` or the path of an earlier
    ``solve cluster --json`` (its running jobs stay where they run unless moving one places more priority; each
    placement says whether it stays, moves or starts), `source` the cluster file a `Fleet` was read from (a `Path` or
    `str`), which a refusal of a running job's LoRA targets under the release it runs on names as the file's others do
    (a path given as `fleet` names itself). Its `notes` are those ``solve cluster`` prints on stderr for the fleet (a
    pool's `host_ram_gb` likely meant a unit up: `Fleet.small_host_ram_notes`). Raises `QueryError` (one line) for a bad
    option, `TableError` for a bad cluster or `current` file."""
    from solver.cluster import place as place_jobs
    from solver.tables import running_releases  # a fleet's module: only where a placement is asked for

    check_types(("option_names", option_names, OptionNames), ("current", current, ClusterResult | Path | str | None),
                ("source", source, Path | str | None))
    source = str(source) if source is not None else None if isinstance(fleet, Fleet) else str(fleet)
    minimize = folded_choice(minimize, ("nodes",))  # in any case, as --minimize Nodes
    fleet, planner = _fleet_and_planner(
        fleet, weights=weights, workers=workers, memory=memory, margin=margin, catalog=catalog, progress=progress,
        estimate=estimate, token_budget=token_budget, time_limit_s=time_limit_s, seed=seed,
        trinity_version=trinity_version, required=required, widen=widen, minimize=minimize, option_names=option_names)
    running, gone = ((), ()) if current is None else _running_now(current, fleet, option_names)
    if running:  # a running job keeps the release its plan names, its LoRA targets checked under it
        fleet = running_releases(fleet, running)
        check_fleet_lora_targets(fleet, planner.catalog, trinity_version, source)
    result = place_jobs(fleet, planner, minimize=minimize, workers=workers, seed=seed, progress=progress, widen=widen,
                        running=running)
    own_source = None if memory is None else memory.own_source
    return result.model_copy(update={"memory_model_source": own_source, "jobs_gone": gone,
                                     "notes": fleet.small_host_ram_notes})


def _running_now(current: ClusterResult | Path | str, fleet: Fleet,
                 option_names: OptionNames) -> tuple[tuple[RunningJob, ...], tuple[JobGone, ...]]:
    """The jobs of `fleet` that run now, as `place`'s `current` places them, and those it runs that `fleet` has none
    of in a pool it has (`current_jobs_gone`): a `ClusterResult` read as its JSON is (`current_jobs`; `QueryError` for
    one changed by `model_copy` into no placement: a job placed twice, a GPU taken twice), or the file at its path
    (`read_current`'s `TableError`, naming the file as `option_names` name ``--current``)."""
    from solver.tables import current_jobs, current_jobs_gone, read_current  # a fleet's: only for a placement

    given: Path | dict[str, Any]
    if not isinstance(current, ClusterResult):
        given = given_path("current", current)
        running = read_current(given, fleet, SCHEMA_VERSION, flag="" if option_names.keywords else "--current ",
                               file_readers=option_names.file_readers)
    else:
        given = current.model_dump(mode="json")
        try:
            running = current_jobs(given, "current", fleet, SCHEMA_VERSION)
        except TableError as error:
            raise QueryError(str(error)) from None
    gone = tuple(JobGone(job=placed.job, pool=placed.pool, nodes=placed.nodes, gpu_indexes=placed.gpu_indexes)
                 for placed in current_jobs_gone(given, fleet))
    return running, gone


@keywords_told
def buy_nodes(
    fleet: Fleet | Path | str,
    *,
    weights: Weights | None = None,
    time_limit_s: float = 10.0,
    workers: int = 1,
    estimate: EstimateMode = "auto",
    memory: MemoryModel | None = None,
    margin: float | None = None,
    token_budget: TokenBudgetMode = "default",
    catalog: Catalog | None = None,
    seed: int = 0,
    progress: Progress | None = None,
    widen: bool = True,
    trinity_version: str | None = None,
    required: Sequence[str] | None = None,
    option_names: OptionNames = API_OPTIONS,
    current: ClusterResult | Path | str | None = None,
) -> PurchaseResult:
    """The fewest GPUs, then nodes, to add to a fleet's pools (a `Fleet`, or the path of a cluster file) so that every
    job with a way to run in some pool it may use is placed (`solve cluster --buy`), or only the required ones, where
    some are: those the fleet marks ``required`` and those `required` names (the others are placed where room is
    left); the jobs with none are named apart. The answer holds the placement with the nodes bought, grown onto
    idle GPUs as a placement's (`widen` False: not). The keywords as `place`'s, but `current`, which is refused as
    ``solve cluster --buy --current`` is: a purchase weighs no running jobs. Its `notes` are `place`'s, those
    ``solve cluster --buy`` prints on stderr for the fleet. Raises `QueryError` (one line) for a bad option,
    `TableError` for a bad cluster file."""
    from solver.cluster import buy

    check_types(("option_names", option_names, OptionNames))
    if current is not None:
        raise QueryError("buy_nodes with current: buy_nodes weighs no running jobs; call solver.place(current=...) on "
                         "the fleet with the nodes it names added")
    fleet, planner = _fleet_and_planner(
        fleet, weights=weights, workers=workers, memory=memory, margin=margin, catalog=catalog, progress=progress,
        estimate=estimate, token_budget=token_budget, time_limit_s=time_limit_s, seed=seed,
        trinity_version=trinity_version, required=required, widen=widen, option_names=option_names)
    result = buy(fleet, planner, workers=workers, seed=seed, progress=progress, widen=widen)
    own_source = None if memory is None else memory.own_source
    return result.model_copy(update={"memory_model_source": own_source, "notes": fleet.small_host_ram_notes})


def _with_required(fleet: Fleet, required: Sequence[str] | None, option_names: OptionNames) -> Fleet:
    """`fleet` with the jobs `required` names marked ``required`` too, every job where it names `EVERY_JOB` and no
    job is named so (`_check_required`'s `QueryError` for bad names)."""
    _check_required(required, fleet, option_names)
    if required is None:
        return fleet
    if EVERY_JOB in required and fleet.all_names_every_job:
        required = [job.name for job in fleet.jobs]
    return fleet.model_copy(update={"jobs": tuple(job.model_copy(update={"required": True}) if job.name in required
                                                  else job for job in fleet.jobs)})


def _check_required(required: Sequence[str] | None, fleet: Fleet, option_names: OptionNames) -> None:
    """`QueryError` unless `required` is None or a list or tuple of names of `fleet`'s jobs (or `EVERY_JOB`, unless a
    job is named so), one at least (naming the option as `option_names` do)."""
    check_types(("required", required, list | tuple | None))
    if required is None:
        return
    names = [job.name for job in fleet.jobs]
    if not required:
        raise QueryError(f"{option_names.required} names no job: name one or more of the fleet's jobs "
                         f"({named_jobs(names)})")
    for index, name in enumerate(required):
        check_types((f"required[{index}]", name, str))
    every = [EVERY_JOB] if fleet.all_names_every_job else []  # the word for every job, unless a job is named so
    for name in required:
        if name not in names and name not in every:
            meant = meant_fleet_name(name, names + every)
            raise QueryError(f"{option_names.item(option_names.required, shown_value(name))}: no job of the fleet "
                             f"is named so; {f'did you mean {meant}? ' if meant else ''}its jobs: {named_jobs(names)}"
                             f"{f'; or {EVERY_JOB}, for every job' if every else ''}")


def _fleet_and_planner(fleet: Fleet | Path | str, *, weights: Weights | None, workers: int,
                       memory: MemoryModel | None, margin: float | None, catalog: Catalog | None,
                       progress: Progress | None, estimate: EstimateMode, token_budget: TokenBudgetMode,
                       time_limit_s: float, seed: int, trinity_version: str | None, required: Sequence[str] | None,
                       option_names: OptionNames, widen: bool = True,
                       minimize: Literal["nodes"] | None = None) -> tuple[Fleet, Planner]:
    """`place`'s and `buy_nodes`' options checked (`QueryError`, naming them as `option_names` do), in one order for
    both (`minimize` is `place`'s alone); the fleet to place, names as the catalogue (the shipped one
    where None) gives them (`TableError` for a bad cluster file), with the jobs `required` names marked
    (`_with_required`); and the planner of its jobs' ways, with the planning options and the Trinity release
    (`trinity_release`'s)."""
    from solver.cluster import Planner

    check_types(("fleet", fleet, Fleet | Path | str), ("weights", weights, Weights | None),
                ("workers", workers, int), ("memory", memory, MemoryModel | None), ("catalog", catalog, Catalog | None),
                ("progress", progress, Callable | None), ("widen", widen, bool))
    check_margin(margin, option_names)
    # as --minimize
    check_choice("minimize", minimize, (None, "nodes"), meant=lambda: choice_meant(minimize, ("nodes",)))
    estimate = chosen("estimate", estimate, get_args(EstimateMode))
    token_budget = folded_choice(token_budget, get_args(TokenBudgetMode))  # a mode (a cap is one job's)
    check_token_budget(token_budget, estimate, option_names)
    check_counts((option_names.named("workers"), workers, MAX_WORKERS))
    check_time_limit(time_limit_s)
    check_seed(seed)
    release = trinity_release("trinity_version", trinity_version)
    catalog = catalog if catalog is not None else load_catalog()
    source = None if isinstance(fleet, Fleet) else str(fleet)
    fleet = _with_required(given_fleet(fleet, catalog), required, option_names)
    check_fleet_lora_targets(fleet, catalog, trinity_version, source)
    planner = Planner(catalog.for_fleet(fleet), weights if weights is not None else load_weights(), estimate,
                      time_limit_s, memory, margin, token_budget, release, option_names,
                      counted_expert_layout(trinity_version), counted_batch_divisor(trinity_version),
                      release_name(trinity_version))
    return fleet, planner


def check_fleet_lora_targets(fleet: Fleet, catalog: Catalog, trinity_version: str | None,
                             source: str | None = None) -> None:
    """`QueryError`, naming the job and its ``lora_targets`` or ``lora_exclude_modules`` key (after the cluster file
    `source`, where the fleet was read from one, as its other refusals name it), for a job's LoRA targets less its
    exclusions that ``--lora-targets`` and a config's ``exclude_modules`` would be refused for on its model of
    `catalog`, its routed experts held as its Trinity release's transformers holds them (its own ``trinity_version``,
    else `trinity_version`: `given_lora_targets`): without a lora_rank, empty or no regex, matching no module, beyond
    all-linear, excluding every module the targets match, or what PEFT refuses."""
    known = catalog.for_fleet(fleet)
    where = "" if source is None else f"{source}: "
    for job in fleet.jobs:
        experts = counted_expert_layout(job.trinity_version or trinity_version)
        try:
            given_lora_targets(job.lora_targets, job.lora_rank, known.model(job.model), experts, API_OPTIONS,
                               job.lora_exclude_modules)
        except QueryError as error:
            raise QueryError(f"{where}job {job.name}: {error}") from None


def fragment_check(gpu: str, catalog: Catalog, options: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The options ``solve --from-config CONFIG --check`` needs to check a config that a fragment for the GPU type
    `gpu` of `catalog` is merged into, as the plan was made (`solver.trinity.check_flags`): its name, with its memory
    (and ``--gpu-interconnect``, where it states one) where it is one of your own (not the shipped catalogue's, nor
    given tables by cells), then `options`."""
    from solver.trinity import check_flags  # ruamel: only where a fragment is made

    gpu_type = catalog.gpu(gpu)
    shipped = any(gpu_type.name == known.name for known in load_catalog().gpu_types)
    own = None if shipped or gpu_type.tables else (gpu_type.memory_gb, gpu_type.memory_mib)
    link = ("--gpu-interconnect", gpu_type.interconnect) if own and gpu_type.interconnect else ()
    return check_flags(gpu_type.name, own, (*link, *options))


def trinity_config(answer: Answer, catalog: Catalog | None = None, *, version: str | None = None,
                   model_config: Path | str | None = None) -> str:
    """The Trinity YAML fragment of `answer`'s best plan, as ``solve --emit trinity`` prints it: with the query's
    rollout GPUs, a ``cluster`` on the plan's nodes (`fragment_layout`) and rollout engines of the size
    `fragment_engines` suggests; on an AMD GPU, ROCm's allocator variable beside Env. `catalog`: the one the answer
    was planned with (default: the shipped one); `version` as `trinity_fragment`'s, or a release of either that
    rft-solver knows (None: the release the best plan was counted for, `Plan.trinity_version`, which its JSON keeps:
    `_written_for`);
    `model_config`: the config.json
    the answer's model was read from, which its check command gives as ``--model-config`` (`_model_config_check`).
    `QueryError` for an answer without a plan, a `version` whose routed experts' layout the plan's figures do not
    hold for (`_written_for`), and for a `model_config` of another shape than the answer's model;
    `load_model_config`'s `TableError` for one it cannot read as a model's config.json (a missing file, a folder
    without one), which the check command would refuse. An answer rebuilt from its JSON gives the same fragment, but
    for the evidence comment's memory figures, which the JSON rounds to two decimals."""
    from solver.trinity import fragment_for  # ruamel: only where a fragment is made

    known, keys = _answer_keys("trinity_config", answer, catalog, version)
    path = None if model_config is None else given_path("model_config", model_config)
    if path is not None:  # the check command's --model-config reads it so: no command that names a file it refuses
        _check_model_config_shape(path, known.model(answer.model))
    adapter = keys.plan.config_adapter
    return fragment_for(keys, gpu=answer.gpu, rocm=known.gpu(answer.gpu).rocm, node_gpus=answer.node_gpus,
                        host_ram_gb=answer.host_ram_gb, option_names=API_OPTIONS,
                        check=fragment_check(answer.gpu, known, (*_model_config_check(answer.model, path),
                                                                 *_lora_targets_check(keys.plan))),
                        dpo_mode_unset=keys.plan.dpo_mode_unset,
                        config_lora_rank=0 if adapter is None else adapter.rank,
                        token_cap=answer.token_cap_words(API_OPTIONS))[0]


def _check_model_config_shape(path: Path, model: Model) -> None:
    """`load_model_config`'s `TableError` where `path` is no model's config.json, and `QueryError` where its model is
    not of `model`'s shape (the one the answer was planned for, whose plan the check command would then not judge)."""
    given = load_model_config(path, vllm_rollout=False)
    if given.shape != model.shape:
        raise QueryError(f"model_config {path} gives {given.name}, not of the shape of {model.name}, which the answer "
                         f"was planned for: pass {model.name}'s config.json, or leave model_config out")


def _model_config_check(model: str, path: Path | None) -> tuple[str, ...]:
    """The ``--model-config`` a fragment's check command gives for `model`: the config.json at `path`, where given; else
    for a model the shipped catalogue lacks (one of your own, which a config's ``model.model_path`` may not name for
    the check) `MODEL_CONFIG_PLACEHOLDER`, which the fragment's header says to replace; none for a shipped model."""
    if path is not None:
        return ("--model-config", str(path))
    shipped = any(model == known.name for known in load_catalog().models)
    return () if shipped else ("--model-config", MODEL_CONFIG_PLACEHOLDER)


def _lora_targets_check(plan: Plan) -> tuple[str, ...]:
    """The ``--lora-targets`` (and ``--lora-exclude``) a fragment's check command gives for `plan`, where its LoRA is
    a config's own adapter (`Plan.config_adapter`, which the config keeps, and the check counts on the config's
    targets) counted on other targets (``lora_targets=`` or ``lora_exclude_modules=`` given to `config_query`): the
    options that count the plan's targets in place of the config's (`lora_targets_given`: the exclusions alone
    where they leave out modules of the config's own regex); none otherwise."""
    adapter = plan.config_adapter
    if adapter is None or not plan.lora_rank:
        return ()
    pattern, excluded = lora_targets_given(adapter.targets, plan.lora_targets)
    return (*(() if pattern is None else ("--lora-targets", pattern)),
            *(() if excluded is None else ("--lora-exclude", excluded)))


def trinity_settings(answer: Answer, catalog: Catalog | None = None, *,
                     version: str | None = None) -> TrinitySettings:
    """`trinity_config`'s fragment as data (arguments and errors as its): the keys it writes as nested mappings
    (``config``, what a YAML loader reads from it) and the environment variables its comments say to export
    before Ray starts (``environment``). Made without the fragment's text (`settings_for`), as ``solve --json``'s
    ``apply`` is, and checked against Trinity's rules as the fragment is."""
    from solver.trinity import settings_for  # ruamel: only where settings are made (their check reads it)

    _, keys = _answer_keys("trinity_settings", answer, catalog, version)
    return settings_for(keys)


def _answer_keys(caller: str, answer: Answer, catalog: Catalog | None,
                 version: str | None) -> tuple[Catalog, SettingsArguments]:
    """The catalog (default: the shipped one) and the keys' arguments of `answer`'s fragment, for `trinity_config`
    and `trinity_settings` (`caller`, which messages name): the best plan (with its train batch's caution), its model,
    the ``cluster``'s nodes and rollout GPUs (`fragment_layout`), the rollout engines (`fragment_engines`), the
    Trinity release (`version`'s, else the best plan's own: `_written_for`), the train batch and DPO's pair where its
    plans counted one (`Answer.dpo_pairs`), its LoRA adapter counted on the plan's targets (`Plan.lora_targets`), and
    no LoRA config where its LoRA is the config's own that its query was read from (`Plan.config_lora`), both of
    which the plan's JSON keeps. `QueryError` for a tuple of answers, wrong types, a release rft-solver
    does not know or whose expert layout the plan's figures do not hold for, an answer without a plan, a model or
    GPU type the catalog lacks, or a plan that counted fewer LoRA parameters than the config's own adapter, which
    it keeps (`_check_adapter_kept`)."""
    if isinstance(answer, tuple) and answer and all(isinstance(one, Answer) for one in answer):
        raise QueryError(f"answer must be an Answer, got a tuple of {counted(len(answer), 'Answer')} (plan gives one "
                         f"per GPU type): pass one, such as answers[0] ({answer[0].gpu}'s)")
    check_types(("answer", answer, Answer), ("catalog", catalog, Catalog | None))
    trinity_release("version", version)  # refused before the answer's own faults
    catalog = catalog if catalog is not None else load_catalog()
    if answer.best is None:
        raise QueryError(f"{answer.gpu}: {answer.no_plan_line}")
    try:
        catalog.model(answer.model), catalog.gpu(answer.gpu)
    except QueryError as error:  # a model or GPU type of your own, planned with a catalogue that has it
        raise QueryError(f"pass {caller} the catalog the answer was planned with: {error}") from None
    # its LoRA adapter counted on the modules its targets adapt, as its plans were (the plan's JSON keeps them)
    catalog = catalog.with_lora_targets(answer.model, answer.best.lora_targets)
    model = catalog.model(answer.model)
    best = _written_for(answer.best, model, version, "the answer")
    _check_adapter_kept(caller, best, model)
    release = written_release(best, planned="the answer's plan")
    _within_host_memory(best, model, release, answer.host_ram_gb, API_OPTIONS.host_ram, "the answer", version)
    nodes, rollout = fragment_layout(answer)
    engines = fragment_engines(answer, catalog)
    return catalog, SettingsArguments(
        plan=best.with_batch_caution(answer.train_batch_size, ANSWER_BATCH_SOURCE,
                                     counted_batch_divisor(best.trinity_version)),
        model=model, rollout_gpus=rollout, nodes=nodes, shared_gpus=None,
        engines=(0, engines.size if engines else 1), version=release, train_batch_size=answer.train_batch_size,
        dpo=bool(answer.dpo_pairs), config_lora=best.config_lora)


def _check_adapter_kept(caller: str, best: Plan, model: Model) -> None:
    """`QueryError` where `best` (of an answer to a `config_query`) counted a LoRA adapter of fewer parameters than
    the config's own, which the fragment keeps (`Plan.config_adapter`, which its JSON keeps too: an answer read back
    is refused alike; `adapter_unkept`, as ``--emit trinity`` refuses it)."""
    from solver.trinity import adapter_unkept

    adapter = best.config_adapter
    if best.config_lora and adapter is not None and (
            unkept := adapter_unkept(best, model, adapter, "config", f"{caller} keeps", API_OPTIONS)) is not None:
        raise QueryError(unkept)


def placement_configs(result: ClusterResult, fleet: Fleet | Path | str, catalog: Catalog | None = None, *,
                      version: str | None = None, check_options: tuple[str, ...] = (),
                      option_names: OptionNames = API_OPTIONS) -> dict[str, str]:
    """The Trinity YAML fragment of each of `place`'s placements, by job name, as ``solve cluster --emit-dir`` writes
    them: the job's plan, where it was placed (with ``current=``, whether it stays, moves or starts there:
    `running_now_words`), a ``cluster`` of its nodes with its rollout GPUs and engines, the GPUs of a node it shares
    (``CUDA_VISIBLE_DEVICES``) and its train batch. `fleet` and `catalog`: those `result` was placed with; `version` as
    `trinity_config`'s (None: each plan's own release). Each header has the ``solve --from-config CONFIG --check``
    command that checks a config with the fragment merged in on the job's pool's GPU type (`fragment_check`), with
    `check_options`, the placement's options that the check needs too (``("--cells", "mine.yaml")``, as ``solve
    cluster`` passes its own), and for a job that gave its model by ``model_config``, ``--model-config`` with that file
    (a config's ``model.model_path`` may name a model the planner does not know). `option_names`: how the notes name the
    options they point to (`API_OPTIONS`: this function's ``version="0.5"``; ``solve cluster`` passes `COMMAND_OPTIONS`,
    its flags), a job's length by its key (`JOB_LENGTH_KEY`) and SP 1 as planned alone, which the placement chooses
    (`OptionNames.settings_chosen`). `QueryError` for a placement whose job or pool the fleet lacks, or wrong types."""
    from solver.cluster import JOB_LENGTH_KEY, POOL_HOST_RAM_SOURCE
    from solver.trinity import fragment_for, placed_on_words, running_now_words  # ruamel: only where one is made

    check_types(("check_options", check_options, tuple | None), ("option_names", option_names, OptionNames))
    known, placements = _placements_made(result, fleet, catalog, version)
    fragments = {}
    for placed in placements:
        model = ("--model-config", str(placed.model_config)) if placed.model_config is not None else ()
        check = None if check_options is None else fragment_check(placed.gpu, known, (*check_options, *model))
        placed_on = placed_on_words(placed.pool, placed.nodes, placed.keys.shared_gpus, placed.trainer_nodes)
        names = option_names._replace(trinity_05=placed.release_key or option_names.trinity_05,
                                      length_key=JOB_LENGTH_KEY, settings_chosen=True)
        fragments[placed.job] = fragment_for(placed.keys, gpu=placed.gpu, rocm=placed.rocm,
                                             host_ram_gb=placed.host_ram_gb, host_ram_source=POOL_HOST_RAM_SOURCE,
                                             option_names=names, check=check, placed_on=placed_on,
                                             running_now=running_now_words(*placed.running_now),
                                             dpo_mode_unset=placed.dpo)[0]
    return fragments


def placement_settings(result: ClusterResult, fleet: Fleet | Path | str, catalog: Catalog | None = None, *,
                       version: str | None = None) -> dict[str, TrinitySettings]:
    """`placement_configs`' fragments as data, by job name (arguments and errors as its), as `trinity_settings`
    gives an answer's: each job's keys and the environment variables to export (a shared node's
    ``CUDA_VISIBLE_DEVICES`` among them). Made without the fragments' text (`settings_for`), and checked as they
    are."""
    from solver.trinity import settings_for  # ruamel: only where settings are made (their check reads it)

    _, placements = _placements_made(result, fleet, catalog, version)
    return {placed.job: settings_for(placed.keys) for placed in placements}


class _Placed(NamedTuple):
    """What a placement's fragment is made of, for `placement_configs` and `placement_settings`: the job's name, the
    GPU type (the placement's name for it, and whether it is an AMD one) and host memory its header words, the
    config.json the job's model was read from (None: a catalogue model), its keys' arguments, and its pool, nodes and
    its trainer's nodes, which the header names (`placed_on_words`); and what gives its release where no ``version=``
    does (`release_key`, which the fragment's comments name: the job's own ``trinity_version``, `JOB_RELEASE_KEY`; for
    a job that runs now and names none, its plan's, `PLAN_RELEASE_KEY`; None: the caller's option)."""

    job: str
    gpu: str
    rocm: bool
    host_ram_gb: float | None
    model_config: Path | None
    keys: SettingsArguments
    pool: str
    nodes: tuple[int, ...]
    trainer_nodes: tuple[int, ...]
    dpo: bool = False
    """Whether the job trains DPO (its ``dpo``): its fragment's header says the mode Trinity's DPO needs where its keys
    leave it (`Plan.dpo_mode_unset`: a cluster job reads no config)."""
    release_key: str | None = None
    running_now: tuple[str | None, str | None, str | None] = (None, None, None)
    """`running_now_words`' arguments: its placement's `current`, where it runs now in `placed_on_words`' words where it
    moves, and why it moves."""


def _now_words_arguments(placement: Placement, fleet: Fleet) -> tuple[str | None, str | None, str | None]:
    """`placement`'s `current`, and where it moves where it does, where it runs now in `placed_on_words`' words (on
    the nodes of its pool now in `fleet`: `moved_from_words`) and why (`running_now_words`' arguments)."""
    if placement.moved_from is None:  # a job that does not move: the fragment's module is not loaded for it
        return placement.current, None, placement.move_reason
    from solver.trinity import moved_from_words  # the fragment's module: only for a job that moves

    return placement.current, moved_from_words(placement.moved_from, fleet), placement.move_reason


def _placements_made(result: ClusterResult, fleet: Fleet | Path | str, catalog: Catalog | None,
                     version: str | None) -> tuple[Catalog, list[_Placed]]:
    """The catalog for `fleet` (`Catalog.for_fleet`) and what each of `result`'s placements' fragments is made of:
    the job's plan (with its train batch's caution), its nodes, rollout GPUs and engines, the GPUs of a node it shares
    and its train batch, on its pool's GPU type and host memory, and its model_config file; `QueryError` for a
    placement whose job or pool the fleet lacks, pools of other sizes than the result's, a GPU type or model the
    catalog lacks, or wrong types."""
    from solver.cluster import JOB_BATCH_SOURCE, POOL_HOST_RAM_SOURCE

    check_types(("result", result, ClusterResult), ("fleet", fleet, Fleet | Path | str),
                ("catalog", catalog, Catalog | None))
    trinity_release("version", version)  # refused before the placement's own faults
    catalog = catalog if catalog is not None else load_catalog()
    fleet = given_fleet(fleet, catalog)
    known = catalog.for_fleet(fleet)
    jobs, pools = {job.name: job for job in fleet.jobs}, {pool.name: pool for pool in fleet.pools}
    model_configs = dict(fleet.model_config_of)
    placed = []
    for placement in result.placements:
        job, pool = jobs.get(placement.job), pools.get(placement.pool)
        if job is None or pool is None:
            raise QueryError(f"the fleet has no job {placement.job!r} in a pool {placement.pool!r}: pass the fleet "
                             "it was placed from")
        rocm, model = known.gpu(placement.gpu).rocm, known.model(placement.model)
        plan = _written_for(placement.plan, model, version, f"job {placement.job}")
        release = written_release(plan, planned=f"job {placement.job}'s plan")
        _within_host_memory(plan, model, release, pool.host_ram_gb, POOL_HOST_RAM_SOURCE, f"job {placement.job}",
                            version)
        keys = SettingsArguments(
            plan=plan.with_batch_caution(job.train_batch_size, JOB_BATCH_SOURCE,
                                         counted_batch_divisor(plan.trinity_version)),
            model=model, rollout_gpus=placement.rollout_gpus, nodes=len(placement.nodes),
            shared_gpus=placement.gpu_indexes if len(placement.gpu_indexes) < pool.gpus_per_node else None,
            engines=(0, placement.rollout_engine_size or 1), version=release, train_batch_size=job.train_batch_size,
            dpo=counts_dpo_pairs(model, job.dpo))
        placed.append(_Placed(job=placement.job, gpu=placement.gpu, rocm=rocm, host_ram_gb=pool.host_ram_gb,
                              model_config=model_configs.get(placement.job), keys=keys, pool=pool.name,
                              nodes=placement.nodes, trainer_nodes=placement.trainer_nodes, dpo=job.dpo,
                              release_key=_release_key(version, job.trinity_version, placement),
                              running_now=_now_words_arguments(placement, fleet)))
    check_placed_on(result, fleet)  # pools of other sizes, as `cluster_text` refuses them
    return known, placed


def _release_key(version: str | None, own: str | None, placement: Placement) -> str | None:
    """What gives the release of `placement`'s fragment, as its comments name it, where `version` (``version=``) does
    not: the job's `own` ``trinity_version`` (`JOB_RELEASE_KEY`), else for a job that runs now its plan's
    (`PLAN_RELEASE_KEY`, `Placement.runs_on_plans_release`: the release its running plan names, which the run's
    ``--trinity-version`` may not be, else the run's, not told apart); None where `version` is given, or for a job
    that starts, whose plan's release is the run's (the caller's option names it)."""
    from solver.cluster import JOB_RELEASE_KEY, PLAN_RELEASE_KEY

    if version is not None:
        return None
    if own is not None:
        return JOB_RELEASE_KEY
    return PLAN_RELEASE_KEY if placement.runs_on_plans_release else None


def _written_for(plan: Plan, model: Model, version: str | None, planned: str) -> Plan:
    """`plan` (of `model`, `planned`'s: the answer's, a job's) as a fragment for the release `version` names holds it
    (None: the release it was counted for, `Plan.trinity_version`, as it counted it): that release
    (`release_name`'s), which its check command names, with its routed experts laid out as it holds them
    (`counted_expert_layout`: ``0.5.1``'s separate, ``0.6``'s fused), which the fragment's host memory counts; its
    `Plan.experts_counted` still says how its memory figures were counted, which this does not change.
    `QueryError` where the plan's memory figures do not hold for that layout (`counts_hold_for`: a plan of a mixture
    of experts counted for 0.5.1, written for another release, or one counted whole written for 0.5.1; with LoRA,
    one whose adapter that release's transformers lays out otherwise: `layout_difference_words` says which). A plan
    counted for another release, or none, takes that release's ranks loading the model at start-up
    (`Plan.model_loading`), which the fragment's host memory counts."""
    if version is None:
        return plan
    experts = counted_expert_layout(version)
    if not counts_hold_for(model, plan.lora_rank, plan.expert_layout, experts):
        counted_for = (f"Trinity {release_words(plan.trinity_version)}" if plan.trinity_version
                       else "no Trinity release (0.6's)")
        layout = expert_layout_words(model, plan.expert_layout, plan.lora_rank)
        # one bracket, not two in a row, where the release's words end in their own (``0.5.1.post1 (read as 0.5.1)``)
        counted = f"{counted_for[:-1]}; {layout})" if counted_for.endswith(")") else f"{counted_for} ({layout})"
        raise QueryError(
            f"{planned}'s plan was counted for {counted}: its memory figures do not hold for "
            f"Trinity {release_words(version)}, "
            f"{layout_difference_words(model, plan.lora_rank, plan.expert_layout, experts)}; plan it again with "
            f"trinity_version='{version.strip()}', or leave version out to write it for {counted_for}")
    from solver.trinity.plan_keys import loading_under  # no ruamel
    release = release_name(version)
    return plan.model_copy(update={"expert_layout": experts, "trinity_version": release,
                                   "model_loading": loading_under(plan, model, release)})


def _within_host_memory(plan: Plan, model: Model, release: TrinityVersion | None, host_ram_gb: float | None,
                        source: str, planned: str, named: str | None = None) -> None:
    """`QueryError` where `plan` (of `model`, `planned`'s: the answer's, a job's) needs more host memory per node
    under the Trinity release its fragment is for (`release`; None: 0.6's; `named`: as the caller gave it, ``0.5.2``,
    which the refusal names) than the `host_ram_gb` (from `source`) it was planned within, as a plan made for another
    release may: its fragment would call that need within it."""
    from solver.trinity.plan_keys import for_release  # no ruamel

    if host_ram_gb is None:
        return
    need = for_release(plan, model, release).host_memory_gb
    if need is not None and not host_ram_holds(need, host_ram_gb):  # the planner's rule
        shown = named.strip() if named is not None else release or "0.6"
        raise QueryError(
            f"{planned}'s plan needs {need:.1f} GiB of host memory per node under Trinity {release_words(shown)}, "
            f"more than {host_ram_bound_words(host_ram_gb, source)} it was planned within (for another release): plan "
            f"it again with trinity_version='{shown}', or pass version= the release it was planned for")


def fragment_layout(answer: Answer) -> tuple[int, int | None]:
    """(nodes, rollout GPUs) of the ``cluster`` in `answer`'s fragment: the best plan's layout where the query asked
    for rollout GPUs (`Plan.nodes`; the rollout may get more than asked where the trainer takes whole nodes), else
    one node and no cluster section (None)."""
    check_types(("answer", answer, Answer))
    plan = answer.best
    if answer.rollout_gpus is None or plan is None or plan.nodes is None or plan.rollout_gpus is None:
        return 1, None
    return plan.nodes, plan.rollout_gpus


def fragment_engines(answer: Answer, catalog: Catalog) -> RolloutEngines | None:
    """The rollout engines `rollout_engines` suggests for `answer`'s fragment (its rollout GPUs, GPU type, model,
    length and node size); None where it has no rollout GPUs."""
    check_types(("catalog", catalog, Catalog))
    _, rollout = fragment_layout(answer)
    if not rollout or answer.best is None:
        return None
    return rollout_engines(catalog.model(answer.model), catalog.gpu(answer.gpu).memory_gib, rollout,
                           answer.best.max_model_len, answer.node_gpus, lora_rank=answer.best.lora_rank)


def with_apply(answers: tuple[Answer, ...], catalog: Catalog, model: Model, node_gpus: int, *,
               config: TrinityConfig | None = None, text: str = "", name: str = "config", where: str | None = None,
               environ: Mapping[str, str] | None = None, version: str | None = None,
               option_names: OptionNames = API_OPTIONS) -> tuple[Answer, ...]:
    """`answers` (of `model`, on nodes of `node_gpus`), each with a plan given the settings that apply its best plan
    (``apply``: those of the fragment ``--emit trinity`` writes, `solver.trinity.settings_for`, which makes no text),
    and with a `config` (read from `text`, the file `name`, in `environ`, for the Trinity release `version`) the
    config's keys they set to another value as the patch does (``config_keys_changed``:
    `solver.trinity.config_key_changes`); where the config's engines cannot take the plan's rollout GPUs, or the plan
    counted a LoRA adapter of fewer parameters than the config's own, none, and why (``apply_left_out``, naming the
    file as `where`, by default `name`): ``solve --json``'s."""
    from solver.results import ApplySettings
    from solver.trinity import EngineError, load_config_mapping, settings_for

    release = trinity_release("version", version)  # ``0.6.0`` is 0.6, as the other functions read it
    layout = None if config is None else load_config_mapping(text, name)
    where = name if where is None else where
    applied = []
    for answer in answers:
        if answer.best is None:
            applied.append(answer)
            continue
        kept_by = f"{option_names.fragment_yaml} keeps"
        if (unkept := config_lora_refusal(layout, answer.best, model, where, environ, release, kept_by,
                                          option_names)) is not None:
            applied.append(answer.model_copy(update={"apply_left_out": unkept}))
            continue
        keys = settings_arguments(answer, answer.best, catalog, model, config, layout, release, environ)
        try:
            settings = settings_for(keys)
        except EngineError as error:
            applied.append(answer.model_copy(update={"apply_left_out": engines_refusal(
                where, str(error), node_gpus, option_names)}))
        else:
            changed = None if config is None else _config_key_changes(text, answer.best, model, name, environ, release)
            applied.append(answer.model_copy(update={"apply": ApplySettings.of(settings),
                                                     "config_keys_changed": changed}))
    return tuple(applied)


def _config_key_changes(text: str, best: Plan, model: Model, name: str, environ: Mapping[str, str] | None,
                        version: TrinityVersion | None) -> tuple[ConfigKeyChange, ...]:
    """The keys of the config `text` (the file `name`, read in `environ` for `version`) that `best` sets to another
    value, as the patch does (`solver.trinity.config_key_changes`: ruamel, loaded only where a config is given)."""
    from solver.trinity import config_key_changes

    return config_key_changes(text, best, model, name=name, environ=environ, version=version)


def settings_arguments(answer: Answer, best: Plan, catalog: Catalog, model: Model, config: TrinityConfig | None,
                       layout: Any, version: TrinityVersion | None,
                       environ: Mapping[str, str] | None) -> SettingsArguments:
    """The keys' arguments of the fragment of `answer`'s `best` plan: the ``cluster``'s nodes and rollout GPUs
    (`fragment_layout`), its engines (`_config_engines`), the config's `layout` (`config` as nested mappings), the
    Trinity release `version`, the answer's train batch and whether its plans counted a DPO pair (`Answer.dpo_pairs`:
    the algorithm read in `environ`, as the patch reads it), and `environ`, where the layout's other interpolations are
    read as the plans read them; ``apply`` (`with_apply`) and ``--emit``'s fragment are made of these same ones."""
    nodes, rollout = fragment_layout(answer)
    return SettingsArguments(plan=best, model=model, rollout_gpus=rollout, nodes=nodes,
                             engines=_config_engines(answer, catalog, config, rollout), layout=layout,
                             version=version, train_batch_size=answer.train_batch_size,
                             dpo=bool(answer.dpo_pairs), environ=environ)


def _config_engines(answer: Answer, catalog: Catalog, config: TrinityConfig | None,
                    rollout: int | None) -> tuple[int, int] | None:
    """The rollout engines of `answer`'s fragment, as `plan_fragment`'s `engines`: with a `config`, none where the
    fragment's `rollout` GPUs are its own (its engines take them), else engines of its engines' size beside its
    auxiliary models; without, engines of the size `fragment_engines` suggests (one GPU where it suggests none)."""
    if config is not None:
        return None if rollout == config.rollout_gpus else (config.auxiliary_gpus, config.rollout_engine_gpus)
    suggested = fragment_engines(answer, catalog)
    return (0, suggested.size if suggested else 1)


def engines_refusal(where: str, error: str, node_gpus: int, option_names: OptionNames) -> str:
    """Why the engines of a config (the file `where`) take no fragment of a plan (`error`: an
    `solver.trinity.EngineError`'s words), on nodes of `node_gpus`: ``--emit``'s, ``--out``'s and ``--write``'s
    refusal, and ``apply_left_out``; the budget named as `option_names` name it."""
    return (f"{where}: {error} on nodes of {node_gpus}: choose a trainer size with {option_names.budget} that leaves "
            "the config's engines exactly their GPUs")


def config_lora_refusal(layout: Any, plan: Plan, model: Model, where: str, environ: Mapping[str, str] | None,
                        version: TrinityVersion | None, kept_by: str, option_names: OptionNames) -> str | None:
    """Where `plan` counted a LoRA adapter (at its rank, on its targets) of fewer parameters than the config's own
    adapter (`layout`: the config, the file `where`, as nested mappings, read in `environ` for `version`), which what
    is made of the plan keeps (`kept_by`: ``--emit trinity keeps``; none writes model.lora_configs over the config's
    own): why, in one line (`solver.trinity.lora_unkept`). None otherwise, and without a config."""
    if layout is None or not plan.config_lora:
        return None
    from solver.trinity import lora_unkept

    return lora_unkept(plan, model, layout, where, {} if environ is None else environ, version, kept_by,
                       option_names)


@keywords_told
def estimate_memory(
    model: str,
    gpu: str,
    gpus: int,
    max_model_len: int | str,
    *,
    sp: int = 1,
    env: bool = False,
    offload: bool = False,
    margin: float | None = None,
    node_gpus: int | None = None,
    catalog: Catalog | None = None,
    memory: MemoryModel | None = None,
    max_token_len_per_gpu: int | str | None = None,
    host_ram_gb: float | None = None,
    option_names: OptionNames = API_OPTIONS,
    lora_rank: int = 0,
    reference_model: bool | None = None,
    critic: CriticChoice | None = None,
    dpo: bool = False,
    trinity_version: str | None = None,
    lora_targets: str | None = None,
    lora_exclude_modules: str | None = None,
) -> MemoryEstimate:
    """The memory model's breakdown of one trainer GPU's peak memory, whether it fits, the longest length
    that would fit with the same setting, and what the GPU type's tables say of it (``tables``);
    `QueryError` for an unknown name, a count out of range or
    an SP degree the model's heads, the GPU count or the node size (a trainer on more GPUs than a node of
    `node_gpus`, None: 8, keeps each SP group in a node) rule out, or a value of the wrong type. A node size given
    lets the caution on an Offload need without `host_ram_gb` count all of a node's GPUs (`unchecked_host_need`).

    `max_token_len_per_gpu` (Trinity's ``trainer.max_token_len_per_gpu``; default: its own default,
    ``ceil(2 x max_model_len / sp)``, which the tables measured) sets the tokens per GPU instead: at least
    ``ceil(max_model_len / sp)``, so that an SP group holds the longest sequence. The tables then speak
    where they say it trains with at least as many tokens per GPU, or ran out of memory with no more.

    `host_ram_gb` (a node's host memory, GiB) makes a setting train only where the host memory it needs
    (`host_memory_gib`: `solver.tables.HOST_NEED_WORDS`) fits there (``host_fits``).

    `lora_rank` (0: full fine-tuning) counts a LoRA run's states (`solver.memory.lora_states_bytes`); the tables,
    which measured full fine-tuning, then speak only where they say the setting trains; its adapter on the modules
    `lora_targets` names, less those the ``exclude_modules`` regex `lora_exclude_modules` matches (as `plan`'s:
    `_lora_counted`). `reference_model` says whether
    the host memory need counts the reference model's pinned shards (None: but with `lora_rank`, as `plan`'s).

    `critic` counts a PPO critic trained beside the actor on the same GPUs: ``"resident"``, its states on the GPUs
    (`solver.memory.resident_critic_gib`), or ``"offloaded"``, in host memory; None (the default) for none, the
    tables' runs. The tables, which measured the actor alone, then speak only where they say the setting runs out
    of memory.

    `dpo` counts a DPO run (as ``solve memory --dpo``; `plan`'s `dpo`): for a model trained one padded sequence per
    micro-batch, a pair per micro-batch (`solver.rules.counted_tokens`; ``dpo_pairs``), with the padded caution's
    words for it; a `QueryError` with a `critic` or, without `lora_rank`, ``reference_model=False``, as `plan`'s,
    and with `max_token_len_per_gpu` for a model that reads a budget (`check_dpo_budget_unread`: DPO's Trinity keys
    turn dynamic batch sizes off, so the actor's update reads none), as `plan`'s `token_budget`.

    `trinity_version` (as `plan`'s, ``"0.5.1"`` too): the Trinity release whose memory it counts: a mixture of
    experts' routed experts as its transformers lays them out (`counted_expert_layout`: 0.5.1's separate, 0.6's
    whole, 0.5's, 0.5.0's and 0.5.2's states and LoRA adapter each the larger of the two) and its reference model's
    pinned host shards (`solver.memory.REFERENCE_BYTES`; None: 0.6's).

    `option_names`: how the cautions name the options they point to (this API's keywords, `API_OPTIONS`; ``solve
    memory`` passes its flags, `COMMAND_OPTIONS`). `sp` None, which `plan` takes as free, is a `QueryError` that says
    so: the estimate is of one setting, its SP given."""
    if sp is None:
        raise QueryError("sp must be a whole number, got None: the memory estimate is of one setting, its SP given "
                         "(1 for none); plan(..., sp=None) picks the SP")
    asked_len: int = asked_length(max_model_len)  # "64k" as plan's
    # "16k" as solve memory --token-budget 16k; "-2k" refused as written
    token_cap: int | None = asked_length(max_token_len_per_gpu, "max_token_len_per_gpu")
    check_types(("gpus", gpus, int), ("max_model_len", asked_len, int), ("sp", sp, int), ("env", env, bool),
                ("offload", offload, bool), ("node_gpus", node_gpus, int | None), ("catalog", catalog, Catalog | None),
                ("memory", memory, MemoryModel | None), ("max_token_len_per_gpu", token_cap, int | None),
                ("host_ram_gb", host_ram_gb, float | None), ("option_names", option_names, OptionNames),
                ("lora_rank", lora_rank, int), ("reference_model", reference_model, bool | None), ("dpo", dpo, bool))
    check_lora_rank(lora_rank)
    check_reference_with_lora(reference_model, lora_rank, option_names)
    check_reference_for_release(reference_model, lora_rank, trinity_version, option_names)
    reference = counts_reference(reference_model, lora_rank)
    critic = folded_choice(critic, CRITIC_CHOICES)  # in any case, as --critic takes it
    check_critic("critic", critic)
    check_dpo(dpo, critic, reference_model, lora_rank, option_names)
    critic = counted_critic(critic)
    release, experts = trinity_release("trinity_version", trinity_version), counted_expert_layout(trinity_version)
    catalog = catalog if catalog is not None else load_catalog()
    _check_named(catalog, model, gpu, "gpus")
    memory = memory if memory is not None else load_memory_model()
    margin = resolve_margin(memory, margin, catalog.gpu(gpu).memory_gib, option_names)
    names = option_names
    check_counts((names.named("gpus"), gpus, MAX_GPUS), (names.length, asked_len, MAX_TOKENS),
                 (names.named("sp"), sp, MAX_GPUS))
    check_node_gpus(node_gpus, names.node_gpus)
    check_host_ram(host_ram_gb, names)
    catalog = _lora_counted(catalog, model, lora_targets, lora_rank, experts, option_names, lora_exclude_modules)
    resolved, node_size = catalog.model(model), node_gpus if node_gpus is not None else NODE_GPUS
    _check_trainer_layout(resolved, gpus, sp, node_size, names)
    check_dpo_budget_unread(token_cap, None, resolved, names, dpo=dpo, budget_name=names.tokens_per_gpu)
    budget = _checked_token_budget(resolved, asked_len, sp, token_cap, names)
    gpu_type, setting = catalog.gpu(gpu), Setting(env=env, offload=offload, sp=sp)
    loading = model_loading(trinity_version, None, gpu_type.compute_capability, offload)
    result = breakdown(resolved, gpu_type.memory_gib, gpus, setting, asked_len, memory.coefficients, margin,
                       budget, lora_rank, critic, dpo, experts)
    if token_cap is None:
        longest = longest_fitting(resolved, gpu_type.memory_gib, gpus, setting, memory.coefficients, margin,
                                  lora_rank=lora_rank, critic=critic, dpo=dpo, experts=experts)
    else:  # the memory is the budget's whatever the length: any length its SP group holds
        longest = min(budget * sp, MAX_TOKENS) if result.fits else None
    said = _tables_say(catalog, gpu_type.name, resolved, gpus, setting, asked_len, budget, longest, node_size,
                       result.fits, lora=lora_rank > 0, critic=critic is not None)
    beyond = beyond_calibration(memory.fit.range, resolved, gpu_type.memory_gib, gpus, setting, budget, node_size,
                                gpu_type.rocm, experts, lora_rank)
    return MemoryEstimate(**dict(result), longest_len=longest, **said._asdict(), **beyond_fields(beyond),
                          host_memory_gib=shown_host_need(resolved, gpus, node_size, offload, release, reference,
                                                          lora_rank, critic, experts, loading),
                          host_critic_gib=host_critic_gib(resolved, gpus, node_size, critic, experts, release),
                          host_training_gib=shown_training_host_need(resolved, gpus, node_size, offload, release,
                                                                     reference, lora_rank, critic, experts, loading),
                          reference_model=reference, model_loading=model_loaders(loading, resolved.tied_embeddings),
                          host_ram_gib=host_ram_gb,
                          dpo_pairs=counts_dpo_pairs(resolved, dpo)).with_cautions(
                              resolved, gpu_type, gpus, sp, asked_len, env,
                              margin_room(memory, margin, gpu_type.memory_gib, setting, resolved), offload, node_gpus,
                              option_names, lora_moe_caution(resolved, lora_rank, release, experts),
                              *((None, None) if lora_targets is None and lora_exclude_modules is None else (
                                  lora_targets_caution(resolved, lora_rank, resolved.lora_targets, experts,
                                                       option_names),
                                  lora_excluded_adapted_caution(resolved, lora_rank, resolved.lora_targets, release,
                                                                experts, option_names))),
                              transformers_4_unloaded_words(resolved, release, experts),
                              release_named=trinity_version is not None, critic=critic)


def _lora_counted(catalog: Catalog, model: str, lora_targets: str | None, lora_rank: int, experts: ExpertLayout,
                  option_names: OptionNames, lora_exclude_modules: str | None = None) -> Catalog:
    """`catalog` with `model` (a name it has) counting a LoRA adapter of `lora_rank` on the modules `lora_targets`
    names less those the ``exclude_modules`` regex `lora_exclude_modules` matches (`given_lora_targets`, whose
    `QueryError` it raises), its routed experts held as `experts`; `catalog` as it is where neither is given (its
    model may count a config's: `Catalog.with_lora_targets`)."""
    if lora_targets is None and lora_exclude_modules is None:
        return catalog
    resolved = catalog.model(model)
    targets = given_lora_targets(lora_targets, lora_rank, resolved, experts, option_names, lora_exclude_modules)
    return catalog.with_lora_targets(resolved.name, targets)


@keywords_told
def memory_answer(
    model: str,
    gpu: str,
    gpus: int,
    max_model_len: int | str,
    *,
    sp: int = 1,
    env: bool = False,
    offload: bool = False,
    margin: float | None = None,
    node_gpus: int | None = None,
    catalog: Catalog | None = None,
    memory: MemoryModel | Path | str | None = None,
    max_token_len_per_gpu: int | str | None = None,
    host_ram_gb: float | None = None,
    option_names: OptionNames = API_OPTIONS,
    lora_rank: int = 0,
    reference_model: bool | None = None,
    critic: CriticChoice | None = None,
    dpo: bool = False,
    trinity_version: str | None = None,
    lora_targets: str | None = None,
    lora_exclude_modules: str | None = None,
) -> MemoryAnswer:
    """`estimate_memory`'s estimate with the question it answers, the `MemoryAnswer` ``solve memory --json`` prints
    for the same arguments (arguments and errors as `estimate_memory`'s). `memory` may be a memory-model file's path
    too (as --memory-model), which the answer's ``memory_model`` echoes as given (None for a `MemoryModel`); its
    ``memory_model_source`` is the memory model's source, a file's or a `MemoryModel`'s (`MemoryModel.own_source`:
    None for the shipped one)."""
    check_types(("memory", memory, MemoryModel | Path | str | None), ("catalog", catalog, Catalog | None))
    critic = folded_choice(critic, CRITIC_CHOICES)  # in any case, as --critic takes it
    asked_len: int = asked_length(max_model_len)  # "64k" as plan's
    token_cap: int | None = asked_length(max_token_len_per_gpu, "max_token_len_per_gpu")  # "16k" as --token-budget
    loaded = load_memory_model(given_path("memory", memory)) if isinstance(memory, Path | str) else memory
    loaded = loaded if loaded is not None else load_memory_model()
    catalog = catalog if catalog is not None else load_catalog()
    estimate = estimate_memory(model, gpu, gpus, asked_len, sp=sp, env=env, offload=offload, margin=margin,
                               node_gpus=node_gpus, catalog=catalog, memory=loaded,
                               max_token_len_per_gpu=token_cap, host_ram_gb=host_ram_gb,
                               option_names=option_names, lora_rank=lora_rank, reference_model=reference_model,
                               critic=critic, dpo=dpo, trinity_version=trinity_version, lora_targets=lora_targets,
                               lora_exclude_modules=lora_exclude_modules)
    experts = counted_expert_layout(trinity_version)
    resolved = _lora_counted(catalog, model, lora_targets, lora_rank, experts, option_names,
                             lora_exclude_modules).model(model)
    return MemoryAnswer(model=resolved.name, model_parameters_b=resolved.parameters_b,
                        model_active_parameters_b=resolved.active_parameters_b, gpu=catalog.gpu(gpu).name, gpus=gpus,
                        max_model_len=asked_len, sp=sp, env=env, offload=offload, lora_rank=lora_rank,
                        lora_parameters=lora_parameters(resolved, lora_rank, experts),
                        lora_target_modules=None if resolved.lora_targets is None else resolved.lora_targets.pattern,
                        lora_exclude_modules=None if resolved.lora_targets is None else resolved.lora_targets.excluded,
                        critic=counted_critic(critic),
                        critic_parameters_b=critic_parameters(resolved) / 1e9 if counted_critic(critic) else 0.0,
                        dpo=dpo,
                        margin=resolve_margin(loaded, margin, catalog.gpu(gpu).memory_gib),
                        max_token_len_per_gpu=token_cap,
                        node_gpus=node_gpus if node_gpus is not None else NODE_GPUS,
                        trinity_version=trinity_version.strip() if trinity_version is not None else None,
                        memory_model=path_text(memory) if isinstance(memory, Path | str) else None,
                        memory_model_source=loaded.own_source,
                        notes=_input_notes(option_names, max_model_len, asked_len, host_ram_gb),
                        **dict(estimate))


@keywords_told
def map_plans(
    model: str | list[str] | tuple[str, ...] | None = None,
    *,
    gpu: GpuNames = None,
    by: Literal["model", "len"] = "model",
    gpus_up_to: int | None = None,
    budgets: list[int] | tuple[int, ...] | None = None,
    weights: Weights | Path | str | None = None,
    estimate: EstimateMode = "auto",
    margin: float | None = None,
    token_budget: TokenBudgetMode | int | str = "default",
    host_ram_gb: float | None = None,
    node_gpus: int | None = None,
    train_batch_size: int | None = None,
    memory: MemoryModel | None = None,
    time_limit_s: float = 10.0,
    workers: int = 1,
    catalog: Catalog | None = None,
    option_names: OptionNames = API_OPTIONS,
    lora_rank: int = 0,
    reference_model: bool | None = None,
    critic: CriticChoice | None = None,
    trinity_version: str | None = None,
    dpo: bool = False,
    lora_targets: str | None = None,
    lora_exclude_modules: str | None = None,
) -> tuple[GpuMap, ...]:
    """The maps ``solve map --json`` prints for the same options, a `GpuMap` per GPU type (`gpu`'s: a name, or a
    list or tuple of them, mapped in that order, a GPU type named twice once; else each documented one's), of GPU
    budgets 1 to `gpus_up_to` (default 8), or those of `budgets` (a list or tuple, mapped in increasing order, each
    once): by model, each of `model` (a name, or a list of them; default: those the GPU type's
    tables document, else those any tables document) with its longest plan at each budget; with ``by="len"``,
    `model` (one) at each length with its cheapest plan. The other keywords as `plan`'s (a model or GPU type of your
    own, or --cells' tables: in the `catalog`; `option_names` as `estimate_memory`'s, for the plans' cautions);
    `weights` may also be a cost-weights file's path (`Path` or `str`, as --weights), which the maps' ``weights``
    echo as given, and their titles name; `lora_rank`, `lora_targets`, `lora_exclude_modules`, `reference_model`,
    `critic`, `dpo` and `trinity_version` (the release as given: its memory counts and train batch rule) as `plan`'s,
    which the maps echo where given (`lora_targets` as its ``target_modules`` regex, ``all-linear`` where
    `lora_exclude_modules` alone is given), and `token_budget` (a mode, or a cap, N, as `plan`'s). `QueryError` as
    `plan`'s (and `load_weights`' for a path), each before any solve: what every cell shares once
    (`check_run_options`), then what a row's model refuses (`solver.maps.check_rows`)."""
    from solver.maps import check_rows, gpu_map  # imports OR-Tools: only mapping pays for it

    check_types(("model", model, str | list | tuple | None), ("weights", weights, Weights | Path | str | None),
                ("catalog", catalog, Catalog | None),
                ("gpus_up_to", gpus_up_to, int | None), ("budgets", budgets, list | tuple | None))
    budget_asked: TokenBudgetMode | int
    critic, estimate, budget_asked = run_choices(critic, estimate, token_budget)  # "Resident", "16k": as --critic
    # what every cell shares, refused once before any (each cell's query would refuse it alike)
    check_run_options(option_names, lora_rank=lora_rank, reference_model=reference_model, critic=critic, dpo=dpo,
                      estimate=estimate, trinity_version=trinity_version, token_budget=budget_asked,
                      time_limit_s=time_limit_s, margin=margin, host_ram_gb=host_ram_gb, node_gpus=node_gpus,
                      train_batch_size=train_batch_size, workers=workers, memory=memory)
    for index, budget in enumerate(budgets or ()):
        check_types((f"budgets[{index}]", budget, int))
    if budgets is not None and (gpus_up_to is not None or not budgets):
        raise QueryError(f"{option_names.budgets}: give one or more GPU counts (8, 16, 32), and not with "
                         f"{option_names.gpus_up_to}, which maps the budgets 1 to N")
    names = [model] if isinstance(model, str) else list(model or ())
    if model is not None and not names:
        raise QueryError("model: an empty list names no model: give one or more names, or None for the models the "
                         "tables document")
    for index, name in enumerate(names):
        check_types((f"model[{index}]", name, str))
    _refuse_empty_name("model", model, "a model", ("4B", "8B"), lists=True)
    catalog = catalog if catalog is not None else load_catalog()
    for named in [*names, None]:  # the models first, then the GPU type, as `plan` checks them
        _check_named(catalog, named, gpu if named is None else None, "gpus_up_to", gpu_lists=True)
    by = chosen("by", by, ("model", "len"))  # in any case, as --by Len
    check_counts((option_names.gpus_up_to, gpus_up_to, MAX_ESTIMATED_GPUS),
                 *((option_names.budgets, budget, MAX_ESTIMATED_GPUS) for budget in budgets or ()))
    mapped = list(dict.fromkeys(catalog.model(name).name for name in names))
    if by == "len" and len(mapped) != 1:
        give = option_names.one_name("model", len(mapped)) if mapped else option_names.one_model
        raise QueryError(f"{option_names.map_by_len} maps one model: give {give}")
    gpu_names = asked_gpus(catalog, gpu)
    weights_file = path_text(weights) if isinstance(weights, Path | str) else None
    loaded = load_weights(given_path("weights", weights)) if isinstance(weights, Path | str) else weights
    options = {"memory": memory, "margin": margin, "train_batch_size": train_batch_size, "host_ram_gb": host_ram_gb,
               "time_limit_s": time_limit_s, "workers": workers, "weights": loaded, "estimate": estimate,
               "token_budget": budget_asked, "node_gpus": node_gpus, "option_names": option_names,
               "lora_rank": lora_rank, "reference_model": reference_model, "critic": counted_critic(critic),
               "trinity_version": trinity_version, "dpo": dpo, "lora_targets": lora_targets,
               "lora_exclude_modules": lora_exclude_modules}
    mapped_budgets = sorted(set(budgets)) if budgets is not None else list(range(1, (gpus_up_to or 8) + 1))
    check_rows(catalog, gpu_names, mapped, **options)  # what a row's model refuses, before any solve
    return tuple(gpu_map(catalog, gpu_name, mapped, mapped_budgets, by_length=by == "len", weights_file=weights_file,
                         budgets_listed=budgets is not None, **options) for gpu_name in gpu_names)


def _check_trainer_layout(model: Model, gpus: int, sp: int, node_gpus: int, option_names: OptionNames) -> None:
    """`QueryError` where `gpus` span nodes of `node_gpus` but are not whole nodes, or where `model`'s heads, the GPU
    count or the node size rule out SP degree `sp` (naming the degrees allowed, and the options as `option_names`
    do)."""
    spread = whole_nodes_violation(gpus, node_gpus, option_names.node_gpus)
    if spread:
        below = gpus // node_gpus * node_gpus
        raise QueryError(f"{option_names.valued(option_names.named('gpus'), gpus)} is not allowed: {spread} (the "
                         f"counts allowed: 1 to {node_gpus}, then whole nodes: {below} and {below + node_gpus} are the "
                         "nearest)")
    check_sp(model, sp, gpus, None, node_gpus, option_names.node_gpus, option_names)


class _TablesSaid(NamedTuple):
    """What the tables say in `estimate_memory` (`MemoryEstimate`'s fields of the same names)."""

    tables: TablesVerdict | None
    longest_refuted: TablesVerdict | None
    tables_longest: int | None
    tables_longer: TablesVerdict | None
    smaller_card: TablesVerdict | None


def _tables_say(catalog: Catalog, gpu: str, model: Model, gpus: int, setting: Setting, max_model_len: int,
                budget: int, longest: int | None, node_gpus: int, fits: bool, lora: bool = False,
                critic: bool = False) -> _TablesSaid:
    """What `gpu`'s tables (and those of GPU types with at least its memory, for their failures) say of `setting` on
    `gpus` GPUs at `max_model_len` with `budget` tokens per GPU; and at the default budget, where they refute the
    `longest` length the memory model fits, their verdict there and the longest length they let the setting train
    (`_tables_longest`), or where they vouch for the next length past it, their verdict there; all cited. For a
    `lora` run only where they say it trains: they measured full fine-tuning, whose states a LoRA run holds less of,
    so what trained there trains with LoRA, and what ran out of memory there says nothing of it. For a run with a
    `critic`, only where they say it runs out of memory: they measured the actor alone, so they give no longest length
    it trains. Where they say nothing and the memory model does not fit it (not `fits`), the verdict of a GPU type's
    tables with no more memory that say it trains (`smaller_card_note`), a note."""
    origins, (rows, settings, columns) = own_table_cells(catalog, gpu, model)
    at_default = budget == token_budget(max_model_len, setting.sp)
    # The tables measured the default budget. Another budget is judged at `by_tokens`, the shortest length whose
    # default reaches it (`shortest_length_of_budget`: a row there measured that many tokens per GPU): a cell
    # vouches for it at a row at or beyond both that length and L, and it runs out of memory where the tables
    # say so of that length (`refuting_row`, as the planner takes it: the lengths of one default budget share it).
    by_tokens = shortest_length_of_budget(budget, setting.sp)
    larger = larger_tables(catalog, gpu, model)  # GPU types with at least this one's memory: their failures hold

    def verdict(length: int) -> TablesVerdict | None:
        return tables_verdict(model, rows, settings, gpus, setting, length, columns=columns, larger=larger, lora=lora,
                              critic=critic)

    judged = max_model_len if at_default else max(max_model_len, by_tokens)
    tables = verdict(judged)
    if not at_default and tables is not None and not tables.trains:
        refuted = verdict(by_tokens)
        tables = refuted if refuted is not None and not refuted.trains else None
    smaller = smaller_card_note(catalog, gpu, model, gpus, setting, judged, tables=tables, estimate_fits=fits,
                                lora=lora, critic=critic)
    at_longest = None if longest is None or not at_default else verdict(longest)
    refuted_longest = at_longest if at_longest is not None and not at_longest.trains else None
    past = (longest or 0) + GRID  # the next length past the memory model's longest: a cell that vouches for it
    beyond = verdict(past) if at_default and refuted_longest is None and past <= MAX_TOKENS else None
    return _TablesSaid(None if tables is None else tables.cited(origins),
                       None if refuted_longest is None else refuted_longest.cited(origins),
                       None if refuted_longest is None or critic else _tables_longest(catalog, model.name, gpu, gpus,
                                                                                      setting, node_gpus),
                       beyond.cited(origins) if beyond is not None and beyond.trains else None, smaller)


def calibrate_memory_model(cells: Iterable[Path | str] = (), *, with_tables: bool = False,
                           catalog: Catalog | None = None) -> Calibration:
    """Fit the memory model's coefficients as ``solve calibrate`` does: on the catalogue's documented tables, or
    on `cells` you measured (files in the tables' format, as ``--cells``; the models they name are the catalogue's,
    so add a model of your own with ``catalog.with_model``), with the documented tables too where `with_tables`.
    Its ``memory_model`` is for ``memory=`` (and `solver.render.memory_model_yaml` writes it as ``--out`` does).
    `QueryError` where there is nothing to fit (no cell that trained) or for wrong types; `TableError` for a bad
    cells file."""
    from solver.calibrate import calibration  # imports OR-Tools: only calibrating pays for it

    if isinstance(cells, (str, bytes, Path, AbstractSet, Mapping)) or not isinstance(cells, Iterable):
        # a set's order may change from run to run, and the fit's source names the files in order
        raise QueryError(f"cells must be a list of paths, got {shown_value(cells)}")
    paths = [given_path("cells", path) for path in cells]
    check_types(("with_tables", with_tables, bool), ("catalog", catalog, Catalog | None))
    if with_tables and not paths:
        raise QueryError("with_tables adds the documented tables to the cells you give: give cells")
    check_once("cells:", paths)
    catalog = catalog if catalog is not None else load_catalog()
    catalog, read = read_cells_files(catalog, paths, join=False)  # as planning reads them
    return calibration(catalog, read, with_tables=with_tables)


def _checked_token_budget(model: Model, max_model_len: int, sp: int, max_token_len_per_gpu: int | None,
                          names: OptionNames) -> int:
    """The tokens per GPU of a breakdown of `model` (`counted_tokens`): `max_token_len_per_gpu` where given, else
    Trinity's default; `QueryError` (naming the options as `names` do) where it is given for a model trained one
    sequence per micro-batch, which reads none, holds no sequence of `max_model_len` tokens, or is more than
    `MAX_TOKENS`."""
    if max_token_len_per_gpu is not None and one_sequence_per_micro_batch(model):
        raise QueryError(f"{names.tokens_per_gpu} is not read for {model.name}: its plans turn dynamic batch sizes off "
                         f"with one sequence per micro-batch, so the estimate counts that sequence, {max_model_len} "
                         f"tokens per GPU; leave {names.tokens_per_gpu} out")
    budget = counted_tokens(model, max_model_len, sp, max_token_len_per_gpu)
    if budget < least_token_budget(max_model_len, sp):
        raise QueryError(f"{names.valued(names.tokens_per_gpu, budget)} holds no sequence of {max_model_len} tokens "
                         f"with SP={sp}: it must be at least ceil({max_model_len} / {sp}) = "
                         f"{least_token_budget(max_model_len, sp)}")
    if max_token_len_per_gpu is None and budget > MAX_TOKENS:  # the default of a length past half the cap, SP 1
        sp_option = names.named("sp")
        raise QueryError(f"{names.valued(names.length, max_model_len)} with {names.valued(sp_option, sp)} makes "
                         f"Trinity's default token budget, ceil(2 x {max_model_len} / {sp}) = {budget}, more than "
                         f"{MAX_TOKENS} tokens per GPU: raise {sp_option}, or give {names.tokens_per_gpu}")
    check_counts((names.tokens_per_gpu, budget, MAX_TOKENS))
    return budget


def _tables_longest(catalog: Catalog, model: str, gpu: str, gpus: int, setting: Setting, node_gpus: int) -> int | None:
    """The longest length the tables let exactly `setting` train `model` on exactly `gpus` GPUs of `gpu`: the
    planner's, from the tables alone (None where they let it train at no length, or the solve ran out of time)."""
    from solver.solve import optional_best  # imports OR-Tools: only a refuted estimate pays for it

    query = make_query(catalog, model=model, gpu=gpu, objective="max_len", budget_gpus=gpus, exact=True, sp=setting.sp,
                       env=setting.env, offload=setting.offload, estimate="never", node_gpus=node_gpus)
    best = optional_best(catalog, query, gpu)
    return None if best is None else best.max_model_len


CONFIG_TARGETS_SOURCE = "the config's target_modules"
"""How messages name a Trinity config's own ``target_modules`` regex, from which ``--lora-exclude`` alone leaves
modules out (`config_query`'s `lora_exclude_modules`), in place of ``--lora-targets``, which was not given."""

CONFIG_ROLLOUT_SOURCE = "the config's explorer"
"""Where a Trinity config's rollout GPUs come from, as messages name them (`Query.rollout_source`): its explorer's
engines (``engine_num`` times each one's GPUs) and auxiliary models."""


@keywords_told
def config_query(
    catalog: Catalog,
    config: TrinityConfig,
    *,
    model: str | None = None,
    gpu: GpuNames = None,
    objective: Objective = "cheapest",
    budget_gpus: int | None = None,
    exact: bool | None = None,
    exact_source: str | None = None,
    max_model_len: int | str | None = None,
    sp: int | None = None,
    env: bool | None = None,
    offload: bool | None = None,
    top: int = 1,
    weights: Weights | None = None,
    time_limit_s: float = 10.0,
    workers: int = 1,
    seed: int = 0,
    estimate: EstimateMode = "auto",
    memory: MemoryModel | None = None,
    margin: float | None = None,
    token_budget: TokenBudgetMode | int | str | None = None,
    host_ram_gb: float | None = None,
    node_gpus: int | None = None,
    rollout_gpus: int | None = None,
    total_gpus: int | None = None,
    node_source: str | None = None,
    host_ram_source: str | None = None,
    train_batch_size: int | None = None,
    train_batch_source: str | None = None,
    trinity_version: str | None = None,
    reference_model: bool | None = None,
    option_names: OptionNames = API_OPTIONS,
    lora_rank: int | None = None,
    critic: CriticChoice | None = None,
    dpo: bool | None = None,
    lora_targets: str | None = None,
    lora_exclude_modules: str | None = None,
    lora_targets_source: str | None = None,
) -> Query:
    """The query ``solve --from-config`` asks of a Trinity `config` (as `solver.trinity.read_trinity_config` reads
    it): its model, its length (unless maximising), exactly its trainer GPUs (where it gives them: not for the
    fewest GPUs), its node size, its rollout GPUs, its train batch, whether it builds a reference model
    (`TrinityConfig.reference_model`), its LoRA rank (`TrinityConfig.lora_rank`; 0 where PEFT refuses its targets on
    the model: `solver.trinity.checks.config_counted_on`), whether it trains DPO
    (`TrinityConfig.dpo`, `Query.dpo`) and, where it lowers its own token
    budget and its model reads one (not `one_sequence_per_micro_batch`: its plans are the same), ``auto``; and the
    critic its algorithm trains, as its flags hold it (`TrinityConfig.critic`), unless `critic` is given: one of
    `CriticStates` in its stead, or ``"none"`` (`NO_CRITIC`) for none (the run trains it all the same). The
    keywords are `make_query`'s; one given (not None) overrides the config, as the command's flag does (`budget_gpus`
    frees the count, and so does `total_gpus`, whose rollout is the config's unless `rollout_gpus` is given; `exact`
    pins any budget, and ``exact=False`` frees the config's; `lora_exclude_modules` leaves its modules out of
    `lora_targets`, or without it out of the config's own ``target_modules``, in place of its ``exclude_modules``,
    which messages then name as `CONFIG_TARGETS_SOURCE` unless `lora_targets_source` is given; `dpo`, its
    ``algorithm.algorithm_type``'s ``dpo``, checked as `make_query` checks it:
    one the config does not say is a `QueryError`, as ``--dpo`` with ``--from-config``);
    the sources default to where the config's values came from; an empty `model` or `gpu` name is refused as `plan`
    refuses it."""
    _refuse_empty_names(model, gpu, gpu_lists=True)
    asked_len: int | None = asked_length(max_model_len)  # "64k" as plan's
    check_types(("catalog", catalog, Catalog), ("config", config, TrinityConfig),
                ("max_model_len", asked_len, int | None),
                ("reference_model", reference_model, bool | None),
                ("lora_rank", lora_rank, int | None),
                ("dpo", dpo, bool | None),
                ("option_names", option_names, OptionNames))  # read before make_query checks the rest
    if dpo is not None and dpo != config.dpo:  # a plan for another algorithm than the config's: --dpo is refused too
        raise QueryError(f"dpo={dpo}, but the config's algorithm.algorithm_type says the run "
                         f"{'trains' if config.dpo else 'does not train'} DPO: drop dpo (the config gives it, as "
                         "--from-config refuses --dpo)")
    # rollout GPUs given beside the config's DPO, refused as beside dpo=True (--dpo)
    check_dpo_rollout(config.dpo, rollout_gpus, option_names, None if dpo else CONFIG_DPO_SOURCE)
    budget_asked: TokenBudgetMode | int | None
    critic, estimate, budget_asked = run_choices(critic, estimate, token_budget)  # "Resident", "16k": as --critic
    objective = folded_choice(objective, get_args(Objective))  # "Max_Len", for make_query to judge
    check_critic(option_names.named("critic"), critic)
    from_config = budget_gpus is None and total_gpus is None and config.trainer_gpus is not None
    own_rollout = rollout_gpus is None and bool(config.rollout_gpus) and (
        total_gpus is not None or config.trainer_gpus is not None)
    if rollout_gpus is None and total_gpus is not None:  # the GPUs in all are split with the config's rollout
        rollout_gpus = config.rollout_gpus
    asked = asked_len if asked_len is not None else config.max_model_len
    own_nodes = node_gpus is None and config.node_gpus is not None
    own_batch = train_batch_size is None and config.train_batch_size is not None
    if model is None:
        check_config_model(catalog, config, "model=M",
                           OWN_MODEL_IN_CODE.removeprefix("; or, for a model of your own, "))
    from solver.trinity.checks import config_counted_on

    # LoRA configs PEFT refuses on the model's names (which the config read alone does not know) count no adapter
    planned = catalog.model(model if model is not None else config.model)
    config = config_counted_on(config, planned, counted_expert_layout(trinity_version))
    check_dpo_budget_unread(budget_asked, config, planned, option_names)
    if lora_rank is not None:  # the config's own: its refused line (lora-rank-vllm-refused)
        check_lora_rank(lora_rank)
        check_vllm_lora_rank(lora_rank, rollout_gpus if rollout_gpus is not None else config.rollout_gpus,
                             option_names)
    if lora_rank is None and config.lora_key is not None:  # as make_query would refuse the option's
        counted = f"rank {config.lora_rank}" if config.lora_rank else config.lora_key
        check_reference_with_lora(reference_model, config.lora_rank, option_names, f"the config's LoRA ({counted})")
    # the config's DPO (or dpo=True, the same), refused beside a critic or no reference model as dpo=True (--dpo) is
    counted_rank = config.lora_rank if lora_rank is None else lora_rank
    check_dpo(config.dpo, critic, reference_model, counted_rank, option_names,
              None if dpo else CONFIG_DPO_SOURCE)
    # exclusions alone leave out modules of the config's own targets, which messages name as its
    own_targets = None if lora_targets is not None or lora_exclude_modules is None or not counted_rank else (
        config.lora_targets)
    if own_targets is not None:
        lora_targets = own_targets.pattern
    config_builds_none = reference_model is None and not lora_rank and not config.reference_model
    query = make_query(
        catalog, model=model if model is not None else config.model, gpu=gpu, objective=objective,
        budget_gpus=config.trainer_gpus if from_config else budget_gpus,
        exact=exact if exact is not None else from_config and objective not in CHOOSES_COUNT,
        # the config's GPUs, less its rollout's, are the trainer's exactly
        exact_source=exact_source if exact_source is not None else (
            "the config's cluster" if exact is None and from_config else None),
        max_model_len=asked if objective != "max_len" or asked_len is not None else None, sp=sp, env=env,
        offload=offload, top=top, weights=weights, time_limit_s=time_limit_s, workers=workers, seed=seed,
        estimate=estimate, memory=memory, margin=margin,
        token_budget=budget_asked if budget_asked is not None else _config_budget_mode(
            config, asked, estimate, catalog.model(model if model is not None else config.model)),
        host_ram_gb=host_ram_gb, node_gpus=node_gpus if node_gpus is not None else config.node_gpus,
        rollout_gpus=rollout_gpus if rollout_gpus is not None or config.trainer_gpus is None
        else config.rollout_gpus or None,  # the config's own rollout GPUs, when it gives its GPUs
        total_gpus=total_gpus,
        node_source=node_source if node_source is not None else NODE_SIZE_KEY if own_nodes else None,
        host_ram_source=host_ram_source,
        train_batch_size=config.train_batch_size if own_batch else train_batch_size,
        train_batch_source=train_batch_source if train_batch_source is not None else
        config.train_batch_source if own_batch else None, trinity_version=trinity_version,
        # the config's own reading of no reference model (its LoRA keys: Trinity's ref_in_actor) is set below, past
        # make_query's check of a caller's --no-reference on a release that builds one whatever (it says no option)
        reference_model=None if config_builds_none else reference_model if reference_model is not None or lora_rank
        else config.reference_model,
        lora_rank=counted_rank, critic=config.critic if critic is None else counted_critic(critic), dpo=bool(dpo),
        lora_targets=lora_targets, lora_exclude_modules=lora_exclude_modules, option_names=option_names,
        lora_targets_source=lora_targets_source if lora_targets_source is not None or own_targets is None
        else CONFIG_TARGETS_SOURCE)
    # the config's own readings that make_query takes no keyword for, or (dpo) where none overrides them
    own = {"dpo": config.dpo if dpo is None else dpo, "mode_train": config.mode_train,
           **({"reference_model": False} if config_builds_none else {}),
           "trainer_strategy": config.strategy,
           "config_lora": config.lora_key is not None,
           "config_adapter": None if config.lora_key is None else ConfigAdapter.of(config.lora_key, config.lora_rank,
                                                                                   config.lora_targets),
           # the config's adapter's modules, at any rank the plans count (the config keeps them): none where
           # lora_rank=0 asks for full fine-tuning in place of the config's LoRA
           "lora_targets": query.lora_targets if lora_targets is not None or lora_exclude_modules is not None else
           None if lora_rank == 0 != config.lora_rank else config.lora_targets,
           "rollout_source": CONFIG_ROLLOUT_SOURCE if own_rollout else query.rollout_source,
           "token_budget_cap_source": config_token_cap_source(
               config.budget_in_effect_keys(asked, planned=True), config.budget_in_effect_sequences(asked, True),
               config.budget_in_effect(asked, planned=True) > config.budget_in_effect(asked, raised=False),
               config.version)
           if budget_asked is None and query.token_budget_cap and asked is not None else None}
    return query.model_copy(update=own)


@keywords_told
def check_config(
    config: Path | str,
    *,
    text: str | None = None,
    gpu: GpuNames = None,
    model: str | None = None,
    max_model_len: int | str | None = None,
    trinity_version: str | None = None,
    host_ram_gb: float | None = None,
    margin: float | None = None,
    estimate: EstimateMode = "auto",
    memory: MemoryModel | None = None,
    time_limit_s: float = 10.0,
    workers: int = 1,
    seed: int = 0,
    catalog: Catalog | None = None,
    environ: Mapping[str, str] | None = None,
    option_names: OptionNames = API_OPTIONS,
) -> ConfigCheck:
    """A Trinity config judged in one call, as ``solve --from-config CONFIG --check --json`` judges it: read (the file
    `config`, or, given, its `text`, named by `config`'s file name; interpolations read in `environ`, by default this
    process's environment, as the command reads its shell's), its query (`config_query`, with `gpu`, `model` where
    its ``model.model_path`` names no catalogue model (without it, a local config.json that path names is read, as the
    command reads it: `local_config_model`), `max_model_len`, `trinity_version`, `host_ram_gb`, `margin`,
    `estimate`, `memory`, `time_limit_s`, `workers` and `seed` as `plan` takes them, on `catalog`, by default the
    shipped one) answered, each answer with the verdict on the config's own settings (`with_config_verdicts`) and what
    applies its best plan (`with_apply`): a `ConfigCheck`, whose `passes` is ``--check``'s exit status 0. The words
    name the options as `option_names` do (`COMMAND_OPTIONS` gives the command's JSON for the same config).
    Raises `QueryError` for bad keywords (naming them), a config with no length to judge at, or no catalogue model
    (`check_config_model`); `ConfigError` for a config that cannot be read; `TableError` for a file that cannot."""
    from solver.trinity import read_trinity_config

    check_types(("config", config, Path | str), ("text", text, str | None), ("catalog", catalog, Catalog | None),
                ("environ", environ, Mapping | None), ("option_names", option_names, OptionNames))
    _refuse_empty_names(model, gpu, gpu_lists=True)  # as plan refuses them
    environ = os.environ if environ is None else environ
    path = given_path("config", config, "for a config's text, pass it as text=, and its file's name as config")
    name = path.name
    text = read_user_file(path, MAX_CONFIG_BYTES) if text is None else text
    release = trinity_release("trinity_version", trinity_version)
    catalog = load_catalog() if catalog is None else catalog
    read = read_trinity_config(text, name, environ, release, option_names=option_names)
    planned = None if model is None else catalog.model(model)
    local = None if model is not None else local_config_model(
        read, catalog, vllm_rollout=read.rollout_gpus != 0, option_names=option_names)
    if local is not None:  # the config's own model, as --from-config reads it
        catalog = catalog.with_model(local)
        model = catalog.models[-1].name  # with_model adds it last, renamed if it only borrows a name
    patched = patch_takes(read, planned)
    if not patched:  # the verdict's fixes name the patch only where it takes the config
        read = read_trinity_config(text, name, environ, release, option_names=option_names._replace(
            write_offered=False))
    check_judged_length(read, max_model_len, name, "check_config" if option_names.keywords else "--check",
                        option_names)
    query = config_query(catalog, read, model=model, gpu=gpu, max_model_len=max_model_len, time_limit_s=time_limit_s,
                         workers=workers, seed=seed, estimate=estimate, memory=memory, margin=margin,
                         host_ram_gb=host_ram_gb, trinity_version=trinity_version, option_names=option_names)
    answers = config_answers(query, catalog, read, text, name, environ, release, write_offered=patched)
    notes = _input_notes(option_names, max_model_len, asked_length(max_model_len), host_ram_gb)
    notes += () if gpu is not None else (check_without_gpu_note(name, [answer.gpu for answer in answers],
                                                                option_names),)
    answers = tuple(answer.model_copy(update={"notes": (*notes, *answer.notes)}) for answer in answers)
    counted = query.counted_catalog(catalog)
    return ConfigCheck(config=name, answers=with_apply(
        answers, counted, counted.model(query.model), query.node_gpus, config=read, text=text, name=name,
        environ=environ, version=release, option_names=option_names))


def config_answers(query: Query, catalog: Catalog, config: TrinityConfig, text: str, name: str,
                   environ: Mapping[str, str], version: TrinityVersion | None, *, explain: bool = False,
                   write_offered: bool = True) -> tuple[Answer, ...]:
    """The answers to `query` (`config_query`'s, for the Trinity `config` read from `text`, the file `name`, in
    `environ`, for the release `version`), on `catalog` as the query counts it (`Query.counted_catalog`), with the
    verdict on the config's own settings (`with_config_verdicts`, whose fixes name the patch where `write_offered`):
    ``solve --from-config``'s answers, and `check_config`'s."""
    catalog = query.counted_catalog(catalog)  # the config's LoRA adapter counted on its regex's modules
    answers = answer_query(query, catalog, explain=explain)
    offered = query.model_copy(update={"option_names": query.option_names._replace(write_offered=write_offered)})
    return with_config_verdicts(answers, offered, catalog, config, text, name, environ, version)


def check_judged_length(config: TrinityConfig, max_model_len: int | str | None, name: str, checker: str,
                        option_names: OptionNames) -> None:
    """`QueryError` where the Trinity `config` (the file `name`) gives no length to judge it at and `max_model_len`
    gives none either: `checker` (``--check``, `check_config`) needs one."""
    if max_model_len is None and config.max_model_len is None:
        raise QueryError(f"{checker} needs a length to judge {name} at: it sets no model.max_model_len (nor "
                         "max_prompt_tokens and max_response_tokens); give "
                         f"{option_names.valued(option_names.length, 'L')}")


def patch_takes(config: TrinityConfig, planned: Model | None = None) -> bool:
    """Whether `solver.trinity.patch_trinity_config` takes a plan made for the Trinity `config` with none of the
    planner's keywords that change what the patch keeps (its cluster, batch and LoRA rank): an FSDP trainer, or none
    named (`fsdp_trainer`), a cluster that gives the trainer's GPUs, and no other catalogue model `planned` than the
    one its ``model.model_path`` names (`solver.trinity.other_catalogue_model`)."""
    from solver.trinity import other_catalogue_model

    return fsdp_trainer(config) and config.trainer_gpus is not None and (
        planned is None or config.model_path is None
        or other_catalogue_model(planned, config.model_path, local_by_contents=False) is None)


def fsdp_trainer(config: TrinityConfig) -> bool:
    """Whether the Trinity `config` trains with FSDP (``fsdp``, ``fsdp2``, or no ``trainer.trainer_strategy``): the
    trainers rft-solver plans, whose settings the patch and the fragments carry over."""
    return config.strategy in (None, "fsdp", "fsdp2")


def local_config_model(config: TrinityConfig, catalog: Catalog, *, vllm_rollout: bool = True,
                       option_names: OptionNames = API_OPTIONS) -> Model | None:
    """The model that the config.json the Trinity `config`'s ``model.model_path`` names on this machine describes
    (`local_model_config`), read as `load_model_config` reads it, its errors naming the options as `option_names` do
    (known by its folder too: a checkpoint of Qwen3-8B's shape in a folder ``Qwen3-8B`` is that model, whatever its
    ``_name_or_path``): what ``--from-config`` and `check_config` add to the catalogue. None where the path names no
    local file (a Hugging Face id, say: nothing is fetched), or where the file cannot be read (a mixture of experts with
    shared experts, say) and the path names a model of `catalog`: the name stands, as for a Hugging Face id.
    `TableError` where it names none (why it cannot be read), or where vLLM refuses to build the model
    (`Model.vllm_refusal`) and a vLLM rollout takes it (`vllm_rollout`): `catalog`'s model of that name would not
    stand for it."""
    file = local_model_config(config.model_path)
    if file is None:
        return None
    try:
        model = load_model_config(file, vllm_rollout=False, file_readers=option_names.file_readers)
    except TableError as unreadable:
        try:
            catalog.model(config.model)
        except QueryError:  # the user's own model, which only its config.json describes: why it cannot be read
            raise unreadable from None
        return None
    if vllm_rollout and model.vllm_refusal is not None:
        raise TableError(f"{file}: {model.vllm_refusal}")
    return model


def check_config_model(catalog: Catalog, config: TrinityConfig, shape: str, own: str, *, where: str = "",
                       why: str = "") -> None:
    """`QueryError` for a `config` whose ``model.model_path`` names a model `catalog` lacks (a fine-tune of one, say),
    saying how to give it before the long list of those accepted: `shape` (``model=M``, ``--model M``) a catalogue
    model of its shape, or `own`, its config.json (`OWN_MODEL_IN_CODE`'s way, or ``--model-config PATH``); `where`
    before the key (the config's file), `why` after the model's name (it was not found locally)."""
    try:
        catalog.model(config.model)
    except QueryError as error:  # the way out before the list of models, which is long
        unknown, _, accepted = str(error).partition("; accepted: ")
        raise QueryError(f"{where}{MODEL_PATH_KEY}: {unknown}{why}: give {shape} (a catalogue model of its shape, "
                         f"such as the one it was fine-tuned from), or {own}; accepted: {accepted}") from None


def with_config_verdicts(answers: tuple[Answer, ...], query: Query, catalog: Catalog, config: TrinityConfig, text: str,
                         name: str, environ: Mapping[str, str], version: str | None = None
                         ) -> tuple[Answer, ...]:
    """`answers` (to `query`, made from the config) with the verdict on the Trinity config's own settings
    (`Answer.current`: do they train on each answer's GPU type, the plan that says so, or why not, and whether the
    config's rollout engine holds its model there, `_with_rollout_memory`; no `Answer.rollout_kept`: the config's
    rollout has GPUs of its own); `config`
    as `solver.trinity.read_trinity_config` reads `text` (the file `name`), Env read from `environ`, and
    `version` the Trinity release it is for (None: as its keys say). Unchanged where the config gives no
    length to judge at."""
    from solver.trinity import check_config_arguments

    version = check_config_arguments(text, name, environ, version)
    check_types(("answers", answers, tuple), ("query", query, Query), ("catalog", catalog, Catalog),
                ("config", config, TrinityConfig))
    for index, answer in enumerate(answers):
        check_types((f"answers[{index}]", answer, Answer))
    check_answers_of(answers, query, catalog.model(query.model).name)
    if query.total_gpus is None:  # budget_gpus, or the config's own count: the cluster the best plan outgrows, if any
        answers = tuple(_with_nodes_note(answer, name, config, query.option_names) for answer in answers)
    catalog = query.counted_catalog(catalog)  # the config's LoRA adapter counted on its regex's modules
    current = _current(catalog, query, config, name, text, environ, version)
    if current is None:
        return answers
    query, settings, lines = current
    model, node_gpus = catalog.model(query.model), config.node_gpus or query.node_gpus
    # The config's explorer has GPUs of its own (its cluster's, or elsewhere): none of the budget to keep for it.
    judged = ((answer, _with_rollout_memory(_with_env(settings, environ, catalog.gpu(answer.gpu).rocm),
                                            config.vllm_rollout, model, catalog.gpu(answer.gpu), node_gpus))
              for answer in answers)
    return tuple(answer.model_copy(update={"current": _in_words(answer, query, _vouched(
        catalog, query, settings_on_gpu, answer.gpu, lines)), "rollout_kept": None})
        for answer, settings_on_gpu in judged)


def _with_nodes_note(answer: Answer, config_name: str, config: TrinityConfig, names: OptionNames) -> Answer:
    """`answer` with `config_nodes_note` on its best plan added to its notes, where there is one (once: answers
    judged again keep it)."""
    note = None if answer.best is None else config_nodes_note(config_name, config, answer.best, names)
    return answer if note is None or note in answer.notes else answer.model_copy(
        update={"notes": (*answer.notes, note)})


def config_nodes_note(config_name: str, config: TrinityConfig, plan: Plan, names: OptionNames) -> str | None:
    """Where `plan` takes more of the config's nodes, with its rollout, than the config's cluster holds GPUs (a
    trainer budget past the config's, `names.budget`): the note ``solve --from-config`` prints on stderr and
    `with_config_verdicts` puts in `Answer.notes`, in `names`' words (the config's GPUs and nodes, the nodes the plan
    takes, and how to plan within the config's GPUs); else None, and where the config gives no cluster."""
    if config.trainer_gpus is None or config.node_gpus is None:
        return None
    held = config.trainer_gpus + config.rollout_gpus
    nodes = plan.nodes or plan.trainer_nodes or 1
    if nodes * config.node_gpus <= held:
        return None
    rollout = f" + {plan.rollout_gpus} rollout" if plan.rollout_gpus else ""
    return (f"{config_name}'s cluster holds {held} GPUs in all ({counted(held // config.node_gpus, 'node')} of "
            f"{config.node_gpus}); the plan takes {plan.gpus} trainer{rollout} GPUs on {nodes} nodes: give the config "
            f"cluster.node_num {nodes}, or plan within its {held} with {names.valued(names.total_gpus, held)} in place "
            f"of {names.budget}")


def _with_rollout_memory(current: CurrentSettings, engine: VllmRollout | None, model: Model, gpu: GpuType,
                         node_gpus: int) -> CurrentSettings:
    """`current` with the problem `rollout_memory_problem` finds in the config's vLLM rollout `engine` (at the
    verdict's length, where the rollout gives none of its own), if any."""
    problem = rollout_memory_problem(engine, model, gpu, node_gpus, current.max_model_len)
    if problem is None:
        return current
    return current.model_copy(update={"config_problems": (*current.config_problems, problem.words),
                                      "config_problem_codes": (*current.config_problem_codes, problem.code)})


def rollout_memory_problem(engine: VllmRollout | None, model: Model, gpu: GpuType, node_gpus: int,
                           length: int) -> ConfigProblem | None:
    """The problem (`ConfigProblemCode.ROLLOUT_ENGINE_MEMORY_REFUSED`) where a config's vLLM rollout `engine` of `model`
    cannot hold on a `gpu` what it needs as it loads (`RolloutEngines.holds`, `rollout_engine`'s figures at the
    rollout's length: its own, else `length`), naming the tensor-parallel size the memory model sizes engines at in a
    node of `node_gpus` (`rollout_engines`, at the engine's utilization and dtype); None where it holds, or none
    starts (`engine` None): the check's line, and ``--write``'s warning on the file it writes."""
    if engine is None:
        return None
    length = engine.max_model_len or length
    utilization = engine.gpu_memory_utilization or ROLLOUT_UTILIZATION
    size, sizes = engine.tensor_parallel_size, rollout_sizes(model, node_gpus)
    own = rollout_engine(model, gpu.memory_gib, size, length, largest=size >= sizes[-1], utilization=utilization,
                         value_bytes=engine.value_bytes, lora_rank=engine.lora_rank, max_loras=engine.max_loras)
    if own.holds:
        return None
    sized = rollout_engines(model, gpu.memory_gib, node_gpus, length, node_gpus, utilization=utilization,
                            value_bytes=engine.value_bytes, lora_rank=engine.lora_rank, max_loras=engine.max_loras)
    given = (f"its gpu_memory_utilization {engine.gpu_memory_utilization:g}" if engine.gpu_memory_utilization
             else f"Trinity's default gpu_memory_utilization {ROLLOUT_UTILIZATION:g}")
    held = (f"{model.name}'s {8 * engine.value_bytes}-bit weights ({own.weights_gib:.1f} GiB){own.lora_words} and one "
            f"{length}-token "
            f"sequence's KV cache ({own.kv_cache_gib:.1f} GiB) per GPU")
    room = (f"what vLLM takes of one {gpu.name} ({own.room_gib:.1f} GiB: {given} of its {gpu.memory_gib:.1f} GiB, "
            f"less {ROLLOUT_CONTEXT_GIB:g} GiB for the {gpu_runtime(gpu.rocm)[0]} context)")
    figures = f"{sized.weights_gib:.1f}{sized.lora_figure} + {sized.kv_cache_gib:.1f} GiB of {sized.room_gib:.1f}"
    if sized.fits:
        fix = (f"set it to {sized.size}, the smallest size that suits the heads and holds them in half of that "
               f"({figures}), leaving the rest to sequences in flight, as rft-solver sizes a fragment's engines "
               f"(each of explorer.rollout_model.engine_num's engines then takes {sized.size} GPUs of the cluster)")
    elif sized.holds:
        fix = (f"{sized.size}, the largest size that suits the heads in a node of {node_gpus} GPUs, holds them "
               f"({figures}) with less than half left to sequences in flight: set it to {sized.size}, or give the "
               "rollout GPUs with more memory")
    else:
        fix = (f"no size that suits the heads in a node of {node_gpus} GPUs holds them ({sized.size}: {figures}): "
               "give the rollout GPUs with more memory, or a shorter length")
    return ConfigProblem(ConfigProblemCode.ROLLOUT_ENGINE_MEMORY_REFUSED, (
        f"explorer.rollout_model.tensor_parallel_size {size}: {held} take more than {room}, so the rollout's vLLM "
        f"fails as it loads; {fix}"))


def _in_words(answer: Answer, query: Query, current: CurrentSettings) -> CurrentSettings:
    """`current`, judged on `answer`'s GPU type, with its verdict in words (``verdict``: `config_verdict`'s, the
    text's)."""
    return current.model_copy(update={"verdict": config_verdict(answer, current, query)})


def _with_env(current: CurrentSettings, environ: Mapping[str, str], rocm: bool) -> CurrentSettings:
    """`current` with Env as `environ` gives it: the expandable_segments of the first allocator variable set, in the
    order PyTorch 2.10 and 2.11 read them on every GPU (`ALLOC_CONF_VARIABLES`); with a problem for each value PyTorch
    refuses, one where Env is on from a variable that older releases do not take it from (all but
    `ENV_VARIABLE`'s, and, on an AMD GPU, `rocm`, the ROCm one), and one for each other of them set that differs on
    Env."""
    names = [name for name in ALLOC_CONF_VARIABLES if name in environ]
    variable = next(iter(names), ENV_VARIABLE[0])
    values = expandable_segments(environ.get(variable, ""))
    env = values[-1:] == ["True"]  # the last word on them wins
    problems = [ConfigProblem(ConfigProblemCode.ALLOC_CONF_REFUSED, (
                    f"{variable} has expandable_segments:{value}, which PyTorch refuses (it takes True "
                    "or False, so the run stops at its first GPU allocation)"))
                for value in values if value not in ("True", "False")]
    if env and variable not in (ENV_VARIABLE[0], *([ROCM_ENV_VARIABLE] if rocm else [])):
        problems.append(ConfigProblem(ConfigProblemCode.ALLOC_CONF_NEW_NAME, (
            f"{variable} turns Env on, and PyTorch takes Env from it only from 2.10 on (before 2.10 Env is off): to "
            f"be sure, set {ENV_VARIABLE[0]} the same, which every release reads")))
    problems += [ConfigProblem(ConfigProblemCode.ALLOC_CONFS_DISAGREE, (
                     f"{name} turns Env {'off' if env else 'on'} where {variable} turns it {'on' if env else 'off'}: "
                     f"every PyTorch release that takes Env from {name} takes it from {variable} first, as this "
                     f"verdict does: unset {name}"))
                 for name in names[1:] if (expandable_segments(environ[name])[-1:] == ["True"]) != env]
    return current.model_copy(update={
        "env": env, "env_variable": variable, "env_variable_set": bool(names),
        "config_problems": (*current.config_problems, *(problem.words for problem in problems)),
        "config_problem_codes": (*current.config_problem_codes, *(problem.code for problem in problems))})


def _config_budget_mode(config: TrinityConfig, length: int | None, estimate: EstimateMode,
                        model: Model) -> TokenBudgetMode | int:
    """The planner's token budget for a query from a Trinity config (without --token-budget) of `model`: the
    config's own budget in effect where it lowers Trinity's default at `length` at the config's SP (where estimates
    are on; the actor's budget raised to hold a sequence at the actor's SP as Trinity 0.6 on verl before 0.8 does
    and, with no release named, as the least any release runs it, `TrinityConfig.raised_actor_budget`, planned),
    kept as every plan's cap, so that plans may lower budgets too but never raise the config's, at a length longer
    than the config's too, where it may still hold no sequence at the config's SP (the plans then take an SP
    that holds one, `solver.model.add_token_cap`); else ``default``, as for a model whose plans read no budget
    (`one_sequence_per_micro_batch`: they are the default's, which says what was judged), and for a config that
    trains DPO, whose actor's micro-batches hold one pair, up to the default budget, whatever the budgets of its other
    passes, with dynamic batch sizes off as the config has them or as ``--write`` turns them (`TrinityConfig.dpo`)."""
    if length is None or estimate == "never" or one_sequence_per_micro_batch(model) or config.dpo:
        return "default"
    own = config.budget_in_effect(length, planned=True)
    return own if own < token_budget(length, config.sp) else "default"


def _current(catalog: Catalog, query: Query, config: TrinityConfig, name: str, text: str,
             environ: Mapping[str, str], version: TrinityVersion | None
             ) -> tuple[Query, CurrentSettings, _LinesData] | None:
    """The config's own settings (Env read from `environ`) and what else in the config (`text`)
    breaks Trinity's rules or is not what a verdict on them assumes; with the query at the config's
    length, and the GPUs its ``fsdp_size`` keys shard each role's states over and the lines the verdict completes as
    data (`_LinesData`), for `_vouched` to say whether they train. None when there is no length to judge them at."""
    from solver.trinity import critic_run_sps, load_config_mapping, trinity_config_problems
    from solver.trinity.checks import forward_unread_keys, fsdp_state_groups, refused_sp_roles
    from solver.trinity.config import refused_lora_note, verdict_critic_note, verdict_length_note, verdict_lora_note

    gpus = config.trainer_gpus or query.budget_gpus
    length = query.max_model_len or config.max_model_len  # --maximize len: the config's own length
    if length is None:
        return None
    own_length = length == config.max_model_len  # else --len's, which the words name so
    query = query.model_copy(update={"max_model_len": length})
    model = catalog.model(query.model)
    broken = _broken_rule(query, model, gpus, config.sp)
    said = broken.words.split(": ", 1)[-1] if broken else None  # the verdict's words, less the model's name
    # The config as ruamel read it (PyYAML refuses some YAML ruamel takes), checked at the verdict's length (--len, or
    # prompt + response); what the verdict or a note already says (the rule it breaks; the offload flags' strategy)
    # is not said again.
    mapping = load_config_mapping(text, name)
    checked = trinity_config_problems(mapping, model, gpus, environ=environ, version=version, strategy_noted=True,
                                      train_batch_size=query.train_batch_size,
                                      train_batch_source=query.train_batch_source, max_model_len=length,
                                      length_from_option=not own_length,
                                      option_names=query.option_names, experts=query.expert_layout,
                                      batch_divisor=query.batch_divisor, catalog=catalog)
    problems = [problem for problem in checked if not (said and said in problem.words)]
    size, source = query.train_batch_size, query.train_batch_source
    # A role's SP the releases on verl before 0.8 refuse (the checks say so) runs nowhere at it: the reading's line on
    # how it runs is moot, and so is the sizing of the ref's micro-batches (or of LoRA's pass in its stead) at it.
    refused_roles = refused_sp_roles(mapping, model, gpus, environ=environ, version=version, train_batch_size=size,
                                     train_batch_source=source)
    if "ref" in refused_roles:
        config = config.model_copy(update={"ref_sp": None, "lora_ref_sp": None})
    # A LoRA config the checks refuse (its target_modules on the model's names) makes no adapter: the reading's lines
    # on how its adapter is counted and saved are moot, as where the reading refuses the LoRA config itself; one line
    # says what is counted in their place (without --lora-rank: full fine-tuning). Where no transformers the release
    # runs on saves a regex split on this model (a mixture of experts whose config PEFT converts, with transformers 5
    # alone: lora-moe-config-unsaved says what fails), the reading's line, said before the model is known, is moot too.
    codes = {problem.code for problem in checked}
    moot = (_ADAPTER_NOTES if ConfigProblemCode.LORA_CONFIGS_REFUSED in codes
            else (ConfigProblemCode.LORA_TARGETS_SAVED_SPLIT,)
            if saved_split_models(model, version, query.expert_layout) is None else ())
    problems += (verdict_lora_note(verdict_critic_note(verdict_length_note(
                     ConfigProblem(code, words), config.max_model_len, length, query.option_names), query.critic,
                     config.critic, query.option_names, config.critic_held), mapping, name, environ, version,
                     {layout: model.peft_names_of(layout) for layout in LAYOUTS_TAKEN[query.expert_layout]},
                     query.lora_rank, query.option_names, query.lora_targets, model)
                 for code, words in zip(config.note_codes, config.notes, strict=True)
                 if code not in moot and not _role_sp_line(code, words, refused_roles))
    refused = (refused_lora_note(mapping, name, environ)
               if ConfigProblemCode.LORA_CONFIGS_REFUSED in codes | {*config.note_codes} and not query.lora_rank
               else None)
    problems += [refused] if refused is not None else []
    # A model trained one sequence per micro-batch reads no budget (dynamic batch sizes off): its verdict is at that.
    reads_budget = not one_sequence_per_micro_batch(model)
    lowered = _lowered_by_config(config, length, query.estimate) if reads_budget else None
    # A critic counted where the config gives it its own SP: its update at the SPs the releases may run it at.
    run_sps = partial(critic_run_sps, mapping, model, gpus, environ=environ, version=version, train_batch_size=size,
                      train_batch_source=source, option_names=query.option_names, catalog=catalog)
    runs = None if query.critic is None else run_sps()
    critic_sps = () if runs is None else runs.sps
    critic_sp = None if query.critic is None else _counted_critic_sp(critic_sps, config.sp)
    at_verdict = _BudgetVerdict(config, length, lowered, query.option_names)
    critic_count = None if critic_sp is None else _critic_counted_at(at_verdict, critic_sp, bool(critic_sps))
    critic_budgets = (_critic_budgets(at_verdict, critic_count)
                      if reads_budget and critic_count is not None else ())
    problems += _token_budget_problems(at_verdict, critic_budgets, critic_count) if reads_budget else []
    # A critic at the trainer's SP whose budget Trinity raises above the verdict's: counted there, as its line says.
    trainer_budget_read = (_critic_takes_raised_trainer_budget(at_verdict)
                           if reads_budget and critic_sp is not None and not critic_sps else None)
    if trainer_budget_read is not None:
        problems.append(ConfigProblem(trainer_budget_read.code, trainer_budget_read.words()))
        critic_budgets += (trainer_budget_read,)
    # its own training budget raised there is counted as well (at its own SPs, `_critic_raised` counts the raise)
    raised_at_trainer_sp = max((line.tokens for line in critic_budgets if line.counted and not critic_sps),
                               default=None)
    if query.critic is None and ConfigProblemCode.ROLE_SP_DIFFERS in {problem.code for problem in problems}:
        # none counted (--critic none): the lines on its SP claim no count of it
        problems = _critic_left_out_said(problems, run_sps().lines, query.option_names)
    groups = fsdp_state_groups(mapping, gpus, environ=environ, version=version, option_names=query.option_names)
    # The host memory a node needs where a hybrid fsdp_size groups the states is not counted: where it is checked
    # (--host-ram), whether they train is unknown (not on a critic's key where none is counted: --critic none).
    host_unread = _hybrid_keys_counted(query, groups) if query.host_ram_gb is not None else ()
    return query, CurrentSettings(config=name, config_model=_config_model_unplanned(model, config), gpus=gpus,
                                  gpus_given=config.trainer_gpus is not None,
                                  nodes_given=config.node_gpus == query.node_gpus,
                                  batch_given=size is not None and (size, source) == (config.train_batch_size,
                                                                                      config.train_batch_source),
                                  env=False,
                                  offload=config.offload, sp=config.sp, critic_sps=critic_sps, max_model_len=length,
                                  length_given=own_length,
                                  max_token_len_per_gpu=lowered, trains=False, plan=None,
                                  unread_keys=(config.memory_unread if reads_budget else config.memory_unread_padded)
                                  + forward_unread_keys(mapping, model, gpus, environ=environ, version=version,
                                                        train_batch_size=size, train_batch_source=source)
                                  + groups.unread
                                  + host_unread,
                                  broken_rule=broken.words if broken else None,
                                  broken_rule_code=broken.code if broken else None,
                                  config_problems=tuple(problem.words for problem in problems),
                                  config_problem_codes=tuple(problem.code for problem in problems)), _LinesData(
        groups, critic_budgets, () if runs is None else runs.lines,
        {each: _critic_raised(config, length, each) for each in critic_sps}
        | ({} if raised_at_trainer_sp is None else {config.sp: raised_at_trainer_sp}))


class _LinesData(NamedTuple):
    """What `_vouched` completes a config's lines from, as data: the GPUs its ``fsdp_size`` keys shard each role's
    states over with the ``fsdp-size-hybrid`` lines (`groups`), the ``critic-budget-above-verdict`` lines on the
    critic's own budgets (`_critic_budgets`) and the ``role-sp-differs`` lines on its SP (`CriticSpLine`), where a
    critic is counted, and the budget the critic's is counted raised to at each SP of its own it may run at
    (`_critic_raised`, by SP), or at the trainer's where the budget it reads there, raised, is above the verdict's
    (`_CriticBudgetLine.counted`)."""

    groups: StateGroups
    critic_budgets: tuple[_CriticBudgetLine, ...]
    critic_sps: tuple[CriticSpLine, ...]
    critic_raised: dict[int, int]


def _critic_raised(config: TrinityConfig, length: int, sp: int) -> int:
    """The budget a verdict at `length` counts Trinity raising the critic's training budget to at an SP of its own,
    `sp`, where its passes read one (`TrinityConfig.raised_critic_budget`: with 0.5, 0.5.0's ``ceil(2L/SP)``, as
    the actor's); where they run with dynamic batch sizes off on some release the config may run on
    (`TrinityConfig.critic_micro_batch_sequences`), verl reads none there and fills its micro-batches by count, so
    one sequence there, ``ceil(L/SP)`` (`_critic_budget_lines` says where they hold more)."""
    if config.critic_micro_batch_sequences:
        return least_token_budget(length, sp)
    return config.raised_critic_budget(length, sp)


def _counted_critic_sp(critic_sps: tuple[int, ...], sp: int) -> int:
    """The SP a verdict counts a config's critic's own budgets at: the least of those it may run at (`critic_sps`; the
    trainer's `sp` where none of its own), where they put the most tokens on a GPU."""
    return min(critic_sps or (sp,))


def _config_model_unplanned(model: Model, config: TrinityConfig) -> str | None:
    """Where the plans are for `model`, another catalogue model than the one `config` trains (``--model``, the API's
    ``model=``: `solver.trinity.other_catalogue_model`, a local folder known by its name, as the command holds a
    --model to it), the config's, as the catalogue names it; else None."""
    from solver.trinity import other_catalogue_model

    other = None if config.model_path is None else other_catalogue_model(model, config.model_path,
                                                                         local_by_contents=False)
    return None if other is None else other[0]


def _role_sp_line(code: ConfigProblemCode, words: str, roles: Iterable[str]) -> bool:
    """Whether the config reading's note (`code`, `words`) is its line on the SP of one of `roles` (``role-sp-differs``,
    named by that role's SP key), which says how the releases run that role there."""
    from solver.trinity.keys import ROLE_SP_KEYS, ROLES  # no ruamel

    keys = dict(zip(ROLES, ROLE_SP_KEYS, strict=True))
    return code == ConfigProblemCode.ROLE_SP_DIFFERS and any(
        words.startswith(f"{'.'.join(keys[role])} ") for role in roles)


_ADAPTER_NOTES = (ConfigProblemCode.LORA_COUNTED_AS_FULL, ConfigProblemCode.LORA_TARGETS_SAVED_SPLIT)
"""The codes of a config reading's lines on how a new LoRA adapter is counted and saved."""


def _broken_rule(query: Query, model: Model, gpus: int, sp: int) -> BrokenRule | None:
    """The first rule of Trinity's or verl's that a config's `gpus` trainer GPUs at SP `sp` break on the `query`'s
    nodes and train batch (whole nodes, SP's layout, the model's attention, the batch's split), with its code; None
    where they break none."""
    if spread := whole_nodes_violation(gpus, query.node_gpus, query.node_source):
        return BrokenRule(BrokenRuleCode.WHOLE_NODES, spread)
    if layout := sp_layout_rule(model, gpus, sp, query.node_gpus, query.node_source):
        return layout
    if unreached := sp_attention_violation(model, sp):
        return BrokenRule(BrokenRuleCode.SP_MODEL_ATTENTION, f"{model.name}: {unreached}")
    if split := batch_split_violation(query.train_batch_size, gpus, sp, query.train_batch_source):
        return BrokenRule(BrokenRuleCode.BATCH_DIVIDES, split)
    if over_gpus := _batch_over_gpus_violation(query, gpus, sp):
        return BrokenRule(BrokenRuleCode.BATCH_DIVIDES, over_gpus)
    return None


def _batch_over_gpus_violation(query: Query, gpus: int, sp: int) -> str | None:
    """Where the query's Trinity release refuses a train batch its `gpus` trainer GPUs do not divide
    (`Query.batch_divisor` ``gpus``: 0.5.0, 0.5.1, a rule the planner keeps to too) and they do not divide the
    query's, why in words (`batch_over_trainer_gpus_words`, at SP `sp`); None otherwise."""
    size = query.train_batch_size
    if query.batch_divisor != "gpus" or size is None or gpus < 1 or size % gpus == 0:
        return None
    return batch_over_trainer_gpus_words(size, query.train_batch_source, gpus, sp)


_ACTOR_BUDGET, _REF_BUDGET = (".".join(path) for path in ROLE_TOKEN_BUDGETS[:2])


class _TrainerFill(NamedTuple):
    """Trinity 0.5's fill of the unset trainer budget at the trainer's own SP: the `budget` and its `words`."""

    budget: int
    words: str


class _BudgetVerdict(NamedTuple):
    """What the token budget lines on `config` compare with: the verdict at `length`, at the config's `lowered`
    budget (None: at Trinity's default); the lines name the patch as `option_names` do."""

    config: TrinityConfig
    length: int
    lowered: int | None
    option_names: OptionNames

    @property
    def default(self) -> int:
        """Trinity's default budget at `length` and the actor's SP, which the tables measured."""
        return token_budget(self.length, self.config.sp)

    @property
    def default_words(self) -> str:
        """`default` with its formula, in words."""
        return f"ceil(2 x {self.length} / {self.config.sp}) = {self.default}"

    @property
    def passes(self) -> set[str]:
        """The token budget keys of the passes the verdict counts (`ROLE_TOKEN_BUDGETS`): those that run
        (`TrinityConfig.pass_runs`)."""
        return {".".join(path) for path in ROLE_TOKEN_BUDGETS if self.config.pass_runs(".".join(path))}

    @property
    def sequence_counted(self) -> set[str]:
        """The token budget keys of the passes the verdict counts that read none (`TrinityConfig.micro_batch_sequences`,
        dynamic batch sizes off)."""
        return {key for key, _ in self.config.micro_batch_sequences} & self.passes

    @property
    def judged(self) -> int:
        """The budget the verdict is at: `lowered`, else `default`."""
        return self.lowered or self.default

    @property
    def measure(self) -> str:
        """What a set budget is compared with, in words."""
        return "the verdict's budget" if self.lowered else (
            f"Trinity's default {self.default_words}, which the tables measured")

    @property
    def least(self) -> int:
        """The least budget that holds a sequence of `length` at the actor's SP."""
        return least_token_budget(self.length, self.config.sp)

    @property
    def fill(self) -> _TrainerFill | None:
        """Trinity 0.5's fill of the unset trainer budget at the trainer's own SP (`TrinityConfig.default_budget`),
        where it differs from `default` and the actor or the ref takes it (the rollout takes the actor's); else
        None."""
        config, filled = self.config, self.config.default_budget(self.length)
        if (config.max_token_len_per_gpu is not None or filled == self.default
                or {_ACTOR_BUDGET, _REF_BUDGET} <= dict(config.role_token_budgets).keys()):
            return None
        return _TrainerFill(filled, (
            f"the unset {TRAINER_TOKEN_BUDGET}, which Trinity 0.5 fills at the trainer's SP {config.trainer_sp} with "
            f"ceil(2 x {self.length} / {config.trainer_sp}) = {filled},"))


def _token_budget_problems(verdict: _BudgetVerdict, critic_budgets: tuple[_CriticBudgetLine, ...],
                           critic_count: _CriticCount | None) -> list[ConfigProblem]:
    """How the config's token budgets differ from the one the `verdict` is at (its own lowered budget, else Trinity's
    default, which the tables measured), each with its code: the lowered budget in effect, the keys that only write
    out the default, each other budget key above or below it (the trainer's unset one too, where Trinity 0.5 fills it
    at another SP), the ref over the actor's SP groups and the raised fill of LoRA's pass in its stead that holds no
    sequence (releases on verl before 0.8), and, where the verdict counts the critic (`critic_count`, at the least SP
    it may run at: `_critic_counted_at`; None: ``--critic none``, whose verdict is the actor's alone), each of its
    budgets above it (`critic_budgets`, `_critic_budgets`' at that SP), its micro-batches' sequences too
    (`_critic_budget_lines`; naming the patch as the verdict's option names do)."""
    counted = verdict.sequence_counted
    critic = _critic_budget_lines(verdict, critic_count, critic_budgets) if critic_count is not None else []
    if counted and counted == verdict.passes:  # no pass the verdict counts reads a budget
        return [*_sequence_count_lines(verdict), *critic]
    return [*_lowered_budget_line(verdict), *_set_budget_lines(verdict), *_sequence_count_lines(verdict),
            *([] if _REF_BUDGET in counted else [*_ref_over_actor_groups(verdict), *_lora_ref_pass_line(verdict)]),
            *([] if _ACTOR_BUDGET in counted else _unheld_fill_lines(verdict)), *critic]


_PASSES = dict(zip((".".join(path) for path in ROLE_TOKEN_BUDGETS),
                   ("the actor's training", "the ref's forward", "the actor's log-prob recompute"), strict=True))
"""Each role's pass, in words, by its token budget's key."""


def _dpo_doubled_line(verdict: _BudgetVerdict, counted: dict[str, int], what: str) -> ConfigProblem | None:
    """For DPO on a release that may be Trinity 0.6 (`TrinityConfig.version` None or 0.6), where the passes `counted`
    (`_sequence_count_lines`: `what` says the most they take, with Trinity's doubling before verl 0.8) take more
    tokens per GPU than the verdict's budget only as Trinity on verl before 0.8 doubles their micro-batches (on verl
    0.8 or later, `TrinityConfig.undoubled_sequences`, within it): a ``dpo-doubled-above-verdict`` line worded as
    that split, where no size fits both verl lines (the actor's 2, one pair on verl 0.8 or later, is 4 sequences
    before it), which, on one verl line only, leaves `CurrentSettings.trains` as the memory goes; None otherwise."""
    config = verdict.config
    if not config.dpo or config.version == "0.5":
        return None
    undoubled = {key: config.undoubled_sequences(key) * least_token_budget(verdict.length, config.sequence_pass_sp(key))
                 for key in counted}
    most = max(undoubled, key=lambda key: undoubled[key])
    if undoubled[most] > verdict.judged:
        return None
    sequences = config.undoubled_sequences(most)
    before = "on Trinity 0.6 with verl before 0.8" if config.version == "0.6" else (
        "on Trinity 0.5, and on 0.6 with verl before 0.8")
    return ConfigProblem(ConfigProblemCode.DPO_DOUBLED_ABOVE_VERDICT, (
        f"{what}, more than {verdict.measure}, {before}: more tokens per GPU than the verdict assumes there; Trinity "
        f"0.6 with verl 0.8 or later doubles nothing: {sequences} sequence{'' if sequences == 1 else 's'}, up to "
        f"{undoubled[most]} tokens per GPU, within it. No micro-batch size fits both verl lines: on verl before 0.8 "
        "write the doubled sizes halved (the actor's 1, one pair once doubled, which on verl 0.8 or later splits its "
        "pairs, dpo-pair-split)"))


def _sequence_count_lines(verdict: _BudgetVerdict) -> list[ConfigProblem]:
    """The line on the passes the verdict counts that run with dynamic batch sizes off
    (`TrinityConfig.micro_batch_sequences`): verl reads no budget there, and its micro-batches hold up to their size
    in sequences of the length over SP, tokens per GPU (verl 0.9.1 ``workers/engine/utils.py:122``, each SP group's
    micro-batch split over its GPUs; the ref's whole where a release on verl before 0.8 runs it at SP 1:
    `TrinityConfig.sequence_pass_sp`), as a model trained one sequence per micro-batch is counted
    (`solver.rules.counted_tokens`); the line names the pass that takes the most, and where its sequences come from
    (`TrinityConfig.micro_batch_sources`). Where every pass does and that is below Trinity's default, the verdict is
    at it (a ``lowered-token-budget`` line); more than the verdict's budget, a ``token-budget-above-verdict`` line;
    fewer, where the verdict stays at the default (estimates off), a ``token-budget-below-verdict`` line; none where it
    is the verdict's budget, or fewer and another pass reads a larger budget."""
    config = verdict.config
    counted = {key: sequences for key, sequences in config.micro_batch_sequences if key in verdict.passes}
    if not counted:
        return []
    length, judged = verdict.length, verdict.judged
    budgets = config.role_budgets_in_effect(length)
    most = max(counted, key=lambda key: budgets[key])  # the first of the passes that take the most tokens
    sequences, sp, tokens = counted[most], config.sequence_pass_sp(most), budgets[most]
    every = counted.keys() == verdict.passes
    passes = "" if every else f" for {and_joined([_PASSES[key] for key in counted])}"
    source = dict(config.micro_batch_sources).get(most) or (
        f"{'the largest' if len(set(counted.values())) > 1 else 'the'} micro-batch size per GPU, 1 where unset")
    unsliced = (f" ({_PASSES[most]}: {config.legacy_words} runs it at the ref's own SP 1, slicing none of its "
                f"micro-batches{_on_08_words(config)})" if sp != config.sp else "")
    what = (f"dynamic batch sizes off{passes}: verl reads no token budget{' there' if passes else ''} and fills each "
            f"micro-batch with {sequences} sequence{'' if sequences == 1 else 's'} ({source}), up to {sequences} x "
            f"ceil({length} / {sp}) = {tokens} tokens per GPU{unsliced}")
    if tokens > judged and (split := _dpo_doubled_line(verdict, counted, what)):
        return [split]
    if tokens > judged:
        # for DPO, dynamic batch sizes on would split the actor's pairs (dpo-pair-dynamic)
        fix = ("set the micro-batch sizes to 1 (for DPO the actor's 1 is one pair before verl 0.8, where Trinity "
               "doubles it, and on verl 0.8 or later needs 2, dpo-pair-split: no size fits both lines; dynamic batch "
               "sizes on would split its pairs, dpo-pair-dynamic)" if config.dpo else
               "set the micro-batch sizes to 1, or turn dynamic batch sizes on")
        return [ConfigProblem(ConfigProblemCode.TOKEN_BUDGET_ABOVE_VERDICT, (
            f"{what}, more than {verdict.measure}: more tokens per GPU than the verdict assumes; {fix}"))]
    if not every or tokens == judged and verdict.lowered is None:
        return []
    if tokens == judged:
        return [ConfigProblem(ConfigProblemCode.LOWERED_TOKEN_BUDGET, (
            f"{what}, below Trinity's default {verdict.default_words}, which the tables measured: the verdict is at "
            f"{tokens} tokens per GPU"))]
    return [ConfigProblem(ConfigProblemCode.TOKEN_BUDGET_BELOW_VERDICT, (
        f"{what}, below {verdict.measure}: fewer tokens per GPU than the verdict assumes (so it is cautious; with "
        "estimates off the verdict is at what the tables measured)"))]


def _budget_code(above: bool) -> ConfigProblemCode:
    """The code of a line on a budget `above` the verdict's, or below it."""
    return ConfigProblemCode.TOKEN_BUDGET_ABOVE_VERDICT if above else ConfigProblemCode.TOKEN_BUDGET_BELOW_VERDICT


def _roles_scope(config: TrinityConfig, keys: Iterable[str]) -> str:
    """Where the roles' own budgets among `keys` count, in brackets (Trinity 0.6's verl 0.8 path ignores them); ""
    for the trainer's alone, or with Trinity 0.5, which runs verl before 0.8 only."""
    from solver.trinity import ROLE_KEYS_IGNORED

    roles = config.version != "0.5" and any(key != TRAINER_TOKEN_BUDGET for key in keys)
    return f" ({ROLE_KEYS_IGNORED})" if roles else ""


def _lowered_budget_line(verdict: _BudgetVerdict) -> list[ConfigProblem]:
    """The line on the config's lowered budget that the verdict is at (none where it is at the default), saying that
    Trinity 0.5.0 raises it where the release may be 0.5.0 (`lowered_budget_raised_by`) and runs some pass at more
    (`TrinityConfig.budget_in_effect_on_050`: one with dynamic batch sizes on); not with 0.5, whose verdict counts
    0.5.0's raise, so that its lowered budget is one 0.5.0 runs too (passes with them off, which read none, or a
    ref's raise at an SP of its own above the actor's)."""
    lowered, fill = verdict.lowered, verdict.fill
    if lowered is None:
        return []
    in_effect = verdict.config.role_token_budgets or verdict.sequence_counted
    named = (f"the token budget in effect, {lowered} (the most any role takes)," if in_effect
             else fill.words if fill else f"{TRAINER_TOKEN_BUDGET} {lowered}")
    raised = (lowered_budget_raised_by(verdict.config.version)
              if verdict.config.budget_in_effect_on_050(verdict.length) > lowered else None)
    return [ConfigProblem(ConfigProblemCode.LOWERED_TOKEN_BUDGET, (
        f"{named} is below Trinity's default {verdict.default_words}, which the tables measured: the verdict is at "
        f"{lowered} tokens per GPU (each step takes more micro-batches){f'; {raised}' if raised else ''}"))]


def _set_budget_lines(verdict: _BudgetVerdict) -> list[ConfigProblem]:
    """The lines on the budget keys other than the verdict's budget (`_differing_budgets`): one on those that only
    write out the default (`_followed_keys`) for each budget they are at (`_followed_budgets_line`), then one on each
    of the others (`_set_budget_line`)."""
    differing, followed = _differing_budgets(verdict), _followed_keys(verdict)
    followed_at: dict[int, list[str]] = {}
    for key, budget in differing:
        if key in followed:
            followed_at.setdefault(budget, []).append(key)
    return [_followed_budgets_line(verdict, keys, budget) for budget, keys in followed_at.items()] + [
        _set_budget_line(verdict, key, budget) for key, budget in differing if key not in followed]


def _differing_budgets(verdict: _BudgetVerdict) -> list[tuple[str, int]]:
    """(key, budget) of each budget key the config sets (the trainer's unset one where Trinity 0.5 fills it,
    `_BudgetVerdict.fill`) to another than the verdict's budget; not one that holds no sequence (a rule it breaks,
    which `check_trinity_config` says), nor the ref's where `_ref_over_actor_groups` speaks of it, nor one whose pass
    does not run (`TrinityConfig.pass_runs`: the ref's where the algorithm computes no ref log-probs, the rollout's
    where no old log-prob recompute does)."""
    config, fill = verdict.config, verdict.fill
    trainer = config.max_token_len_per_gpu if fill is None else fill.budget
    return [(key, budget) for key, budget in ((TRAINER_TOKEN_BUDGET, trainer), *config.role_token_budgets)
            if budget is not None and budget != verdict.judged and budget >= verdict.least
            and key not in verdict.sequence_counted
            and config.pass_runs(key) and not (key == _REF_BUDGET and _ref_over_actor_sp(config))]


def _followed_keys(verdict: _BudgetVerdict) -> set[str]:
    """The budget keys that only write out what Trinity gives them unset at the config's own length
    (`TrinityConfig.followed_budgets`); at that length, not a trainer budget set to Trinity 0.5's fill at another SP
    than the verdict's: that is no default written out, but the budget in effect, set by hand."""
    config = verdict.config
    written_fill = config.default_budget(verdict.length) != verdict.default and verdict.length == config.max_model_len
    return set(config.followed_budgets()) - ({TRAINER_TOKEN_BUDGET} if written_fill else set())


def _followed_budgets_line(verdict: _BudgetVerdict, keys: Sequence[str], budget: int) -> ConfigProblem:
    """The line on the budget `keys` (`_followed_keys`) at `budget`: the verdict reads them as unset, though Trinity,
    as written, keeps their number."""
    named = and_joined(keys)
    above = budget > verdict.judged
    them = it_or_them(len(keys))
    return ConfigProblem(_budget_code(above), (
        f"{named} {budget}: what Trinity gives {them} unset at the config's own {verdict.config.max_model_len} tokens, "
        f"so read as unset at {verdict.length} tokens too (the verdict is at {verdict.judged} tokens per GPU); as "
        f"written, Trinity keeps {budget} there, {'more' if above else 'fewer'} tokens per GPU than the verdict "
        f"assumes{_followed_scope(verdict.config, keys)}; applying the plan leaves {them} at its budget"))


def _followed_scope(config: TrinityConfig, keys: Sequence[str]) -> str:
    """Which passes take the followed budget `keys` (`_followed_budgets_line`) on each verl line, in brackets: with the
    trainer's, Trinity 0.6 on verl 0.8 or later runs every pass at it, verl before 0.8 each role at its own budget where
    set (so with the roles' own beside it, every pass on every line); the roles' own alone, `_roles_scope`; "" with
    Trinity 0.5, which runs verl before 0.8 only."""
    if config.version == "0.5" or TRAINER_TOKEN_BUDGET not in keys:
        return _roles_scope(config, keys)
    on_08 = "Trinity 0.6 on verl 0.8 or later runs every pass at"
    if len(keys) == 1:
        return f" ({on_08} it; verl before 0.8 each role without a budget of its own)"
    return (f" (on every verl line: {on_08} the trainer's; verl before 0.8 each role at its own where set, else at the "
            "trainer's)")


def _set_budget_line(verdict: _BudgetVerdict, key: str, budget: int) -> ConfigProblem:
    """The line on one budget key, `key` (the trainer's unset one as Trinity 0.5 fills it), at `budget`: above or
    below the verdict's budget; one the verdict counts as Trinity 0.5.0 raises it (`TrinityConfig.key_raised_to`,
    never above the verdict's budget) says so, and that 0.5.1 and 0.5.2 keep it."""
    config, fill = verdict.config, verdict.fill
    raised = config.key_raised_to(key, budget, verdict.length)
    above = budget > verdict.judged and raised is None
    named = fill.words if fill and key == TRAINER_TOKEN_BUDGET else f"{key} {budget}"
    fewer = "fewer tokens per GPU than the verdict assumes (so it is cautious; each step takes more micro-batches)"
    if raised is not None:
        judged = ", the verdict's budget" if raised == verdict.judged else ""
        return ConfigProblem(_budget_code(above), (
            f"{named} is below {verdict.measure}: Trinity 0.5.0 raises it to {raised}{judged} (any budget below twice "
            f"the length over its role's SP), as the verdict counts; 0.5.1 and 0.5.2 keep it, {fewer}"))
    return ConfigProblem(_budget_code(above), (
        f"{named} is {'above' if above else 'below'} {verdict.measure}: "
        f"{'more tokens per GPU than the verdict assumes' if above else fewer}{_roles_scope(config, [key])}"))


def _on_08_words(config: TrinityConfig) -> str:
    """Where the release may be Trinity 0.6 (`TrinityConfig.version` 0.6 or none), that on verl 0.8 or later it runs
    the ref at the trainer's SP, in words after a clause; "" with 0.5."""
    return "" if config.version == "0.5" else f"; Trinity 0.6 on verl 0.8 or later runs it at SP {config.sp}"


def _ref_over_actor_sp(config: TrinityConfig) -> bool:
    """Whether a release on verl before 0.8 runs the ref at a higher SP than the actor's (`TrinityConfig.ref_sp`),
    the actor's at least 2 (at 1 it builds no SP groups) or remove padding off (verl then splits nothing over SP):
    each GPU takes more of the ref's tokens than its budget then."""
    return config.ref_sp is not None and config.ref_sp > config.sp and (config.sp > 1 or not config.remove_padding)


def _ref_over_actor_groups(verdict: _BudgetVerdict) -> list[ConfigProblem]:
    """Where a release on verl before 0.8 runs the ref at a higher SP than the actor's (`_ref_over_actor_sp`), the
    line on the ref's forward: its micro-batches hold its budget x its SP (verl's dp_actor), but it runs in the actor's
    SP groups (the worker builds them from the actor's SP; Trinity 0.6 on verl 0.8 or later runs it at the
    trainer's), so each GPU takes its budget x its SP / the actor's SP tokens, or, with remove padding off
    (`TrinityConfig.remove_padding`), which splits nothing, its budget x its SP;
    none where that is the verdict's budget, or where the budget holds no sequence at the ref's SP (a
    `token-budget-below-length` line says so)."""
    config, judged = verdict.config, verdict.judged
    if not _ref_over_actor_sp(config):
        return []
    ref_sp, sp = config.ref_sp or config.sp, config.sp
    budget = config.role_budgets_in_effect(verdict.length, raised=False)[_REF_BUDGET]
    per_gpu = -(-budget * ref_sp // (sp if config.remove_padding else 1))
    if budget * ref_sp < verdict.length or per_gpu == judged:
        return []
    above = per_gpu > judged
    spread = (f"but {config.legacy_words} runs its forward in the actor's SP groups of {sp} GPUs, so each GPU takes "
              f"{budget} x {ref_sp} / {sp} = {per_gpu} tokens there" if config.remove_padding else
              f"and with remove padding off verl splits none of them, so each GPU takes all {per_gpu} (padded to the "
              f"longest sequence)")
    return [ConfigProblem(_budget_code(above), (
        f"{_ref_budget_words(verdict, budget)}, at the ref's SP {ref_sp}: each of the ref's micro-batches holds "
        f"{budget} x {ref_sp} tokens, {spread}, {'more' if above else 'fewer'} than the verdict's {judged}"
        + ("" if above else " (so it is cautious)") + _on_08_words(config)
        + f": set the ref's SP to the actor's{verdict.option_names.write_does()}"))]


def _lora_ref_pass_line(verdict: _BudgetVerdict) -> list[ConfigProblem]:
    """Where LoRA gives the ref's log-probs on a release on verl before 0.8 at a ref SP above the actor's
    (`TrinityConfig.lora_ref_sp`), the line on the actor's log-prob pass that gives them where it holds no sequence of
    the length: it takes the ref's budget (``compute_log_prob``'s ``config_source``, ``fsdp_workers.py:924`` in 0.5.2,
    ``verl_legacy/fsdp_workers.py:1006`` in 0.6.0) x the actor's SP tokens per micro-batch (verl's ``dp_actor.py:467``
    in 0.7.1), a budget Trinity raises at the ref's SP alone (``_adjust_token_len_if_needed``, ``verl_config.py:578``
    in 0.5.2, ``verl_legacy/verl_config.py:586`` in 0.6.0: one that holds no sequence to ``ceil(L / the ref's SP)``,
    0.5.0 any below ``ceil(2L / the ref's SP)`` to that: `raised_at`), and verl asserts that each step's batch fits a
    micro-batch (0.5.2 and 0.6.0 at its longest sequence, 0.5.0 and 0.5.1 at its padded width:
    `micro_batch_stop_words`): a ``but:`` line, for a batch whose sequences are short enough passes; none where the
    budget holds a sequence of the length. The words name the release (`TrinityConfig.legacy_words`; 0.5.0's raise
    and padded width not with 0.6, which on verl 0.8 or later sets the ref's SP and budget to the trainer's,
    ``FROZEN_KEYS``, ``trainer/verl/config.py:723-724``)."""
    config, length, sp = verdict.config, verdict.length, verdict.config.sp
    ref_sp = config.lora_ref_sp
    if ref_sp is None:
        return []
    budget = config.role_budgets_in_effect(length, raised=False)[_REF_BUDGET]
    # as 0.5.1 and later raise it (on verl before 0.8: one that holds no sequence), and as 0.5.0 does (any below 2L)
    raised, raised_050 = (max(budget, raised_at(version, length, ref_sp)) for version in ("0.6", "0.5"))
    if raised * sp >= length:
        return []
    named, only_06 = _ref_budget_words(verdict, budget), config.version == "0.6"
    holds = "which holds one" if raised_050 * sp >= length else "which holds none either"
    if raised > budget:
        named += (f", which {config.legacy_words} raises at the ref's SP {ref_sp} to ceil({length} / {ref_sp}) = "
                  f"{raised}" + ("" if only_06 else f" (0.5.0 to ceil(2 x {length} / {ref_sp}) = {raised_050}, {holds} "
                                                    "at the actor's SP)"))
    elif raised_050 > budget and not only_06:
        named += (f" (which Trinity 0.5.0 raises at the ref's SP {ref_sp} to ceil(2 x {length} / {ref_sp}) = "
                  f"{raised_050}, {holds} at the actor's SP)")
    stops = ("stops at the first step whose batch holds a sequence longer than that" if only_06 else
             micro_batch_stop_words("Trinity 0.5.2" if config.version == "0.5" else "Trinity 0.5.2 and 0.6"))
    on_08 = ("" if config.version == "0.5" else
             "; Trinity 0.6 on verl 0.8 or later sets the ref's SP and budget to the trainer's")
    return [ConfigProblem(ConfigProblemCode.TOKEN_BUDGET_BELOW_LENGTH, (
        f"{named}: {raised} x the actor's SP {sp} = {raised * sp} tokens hold no sequence of {length}, and with LoRA "
        f"the actor's log-prob pass gives the ref's log-probs at the actor's SP with the ref's budget, so verl "
        f"{stops}{on_08}; set the ref's SP to the actor's{verdict.option_names.write_does()}, or its budget to at "
        f"least ceil({length} / {sp}) = {least_token_budget(length, sp)}"))]


def _ref_budget_words(verdict: _BudgetVerdict, budget: int) -> str:
    """The ref's `budget` at the verdict's length, named by the key it comes from: its own, else the trainer's (set,
    set to what Trinity gives it unset at the config's own length, or unset)."""
    config = verdict.config
    written_budgets = {TRAINER_TOKEN_BUDGET: config.max_token_len_per_gpu, **dict(config.role_token_budgets)}
    source = _REF_BUDGET if _REF_BUDGET in written_budgets else TRAINER_TOKEN_BUDGET
    written = written_budgets[source]
    takes = "" if source == _REF_BUDGET else ", which the ref takes"
    if written == budget:
        return f"{source} {budget}{takes}"
    if written is None:
        return f"the unset {TRAINER_TOKEN_BUDGET}, which Trinity fills with {budget} and the ref takes"
    return (f"{source} {written} (what Trinity gives it unset at the config's own {config.max_model_len} tokens, so "
            f"read as unset: {budget} at {verdict.length} tokens){takes}")


def _unheld_fill_lines(verdict: _BudgetVerdict) -> list[ConfigProblem]:
    """The line on Trinity 0.5's fill of the unset trainer budget (`_BudgetVerdict.fill`) where the actor takes it
    and it holds no sequence at the actor's SP, so Trinity 0.5 raises the actor's, then the line on 0.5.1's padded
    width (`raised_budget_stop_words`, a ``token-budget-below-length`` line: the fill holds no sequence); none
    elsewhere."""
    config, fill, length, least = verdict.config, verdict.fill, verdict.length, verdict.least
    if fill is None or fill.budget >= least or _ACTOR_BUDGET in dict(config.role_token_budgets):
        return []
    return [ConfigProblem(ConfigProblemCode.TOKEN_BUDGET_BELOW_VERDICT, (
        f"{fill.words} holds no sequence of {length} tokens at the actor's SP {config.sp}: Trinity 0.5 raises the "
        f"actor's to ceil({length} / {config.sp}) = {least} (0.5.0 to {verdict.default_words}), no more tokens per "
        "GPU than the verdict assumes (so it is cautious)")),
        ConfigProblem(ConfigProblemCode.TOKEN_BUDGET_BELOW_LENGTH,
                      raised_budget_stop_words("the actor's budget", least, config.sp))]


class _CriticBudgetLine(NamedTuple):
    """A ``critic-budget-above-verdict`` line on one of the critic's own budgets (`_critic_budgets`), or a
    ``critic-budget-raised`` line on its own training budget Trinity raises above the verdict's or on the trainer's it
    takes (`_critic_takes_raised_trainer_budget`), as data: its key, dotted, its value, how Trinity fills (where
    unset) or raises it, in words after it (where it does; else empty), the tokens per GPU it puts on the critic's
    pass, the verdict's budget, whether the verdict counts the critic's update at those tokens
    (``critic-budget-raised``), and, where it counts it at neither those nor the verdict's, at what, in words
    (`_critic_counted_at`; empty: at the verdict's)."""

    key: str
    budget: int
    raised: str
    tokens: int
    judged: int
    counted: bool = False
    counted_at: str = ""

    @property
    def code(self) -> ConfigProblemCode:
        """The line's code: ``critic-budget-raised`` where the verdict counts its tokens (`counted`), else
        ``critic-budget-above-verdict``."""
        return (ConfigProblemCode.CRITIC_BUDGET_RAISED if self.counted
                else ConfigProblemCode.CRITIC_BUDGET_ABOVE_VERDICT)

    def words(self, need: str = "") -> str:
        """The line's words (`solver.trinity.critic_budget_note`), the training budget's with what the critic's update
        needs at its tokens (`need`, where the memory model computes it: `_critic_budget_need_said`)."""
        from solver.trinity import critic_budget_note

        counts = f"the verdict counts the critic's own update there{need}"
        if self.key == TRAINER_TOKEN_BUDGET:  # a ``critic-budget-raised`` line: `_critic_takes_raised_trainer_budget`
            return (f"the critic's passes read {self.key} {self.budget} at the trainer's SP (it sets no training "
                    f"budget of its own){self.raised} above the verdict's {self.judged} tokens per GPU: {counts}")
        if self.counted:
            return (f"{self.key} {self.budget}{self.raised} is above the verdict's {self.judged} tokens per GPU: "
                    f"{counts}; --write sets it to the plan's")
        return critic_budget_note(self.key, self.budget, f"the verdict's {self.judged} tokens per GPU", self.tokens,
                                  self.judged, self.raised, need, self.counted_at)


class _CriticCount(NamedTuple):
    """Where a verdict counts the critic's update (`_critic_counted_at`): the critic's SP, the tokens per GPU there,
    and those tokens in words where they are not the verdict's budget (else empty)."""

    sp: int
    tokens: int
    words: str


def _critic_budgets(verdict: _BudgetVerdict, count: _CriticCount) -> tuple[_CriticBudgetLine, ...]:
    """The critic's own budgets above the verdict's, at its SP (`count`'s), each as its line's data: the memory model
    counts its own update at the verdict's budget (one sequence at an SP of its own, raised to hold it there). A
    training budget below what Trinity raises it to at that SP counts as raised (`TrinityConfig.raised_critic_budget`:
    with 0.5 any below 0.5.0's ``ceil(2L/SP)``, else one that holds no sequence; its value forward's own it never
    raises), and
    where its passes read it (dynamic batch sizes on wherever it may run: `TrinityConfig.critic_micro_batch_sequences`
    0) the verdict counts its update at that raise (`counted`: at an SP of its own, as `_critic_raised` does; at the
    trainer's, `_current` passes it on), so that it holds what Trinity runs. At an SP of its own, one set at or above
    that raise is counted at the raise (`count`): above it, a line says so; at it, none."""
    from solver.trinity.keys import CRITIC_TOKEN_BUDGET

    config, judged, sp = verdict.config, verdict.judged, count.sp
    critic_raise = config.raised_critic_budget(verdict.length, sp)
    lines = []
    for key, budget in config.critic_token_budgets:
        raised = key == ".".join(CRITIC_TOKEN_BUDGET) and budget < critic_raise
        taken = critic_raise if raised else budget
        if taken > (judged if raised else count.tokens):
            raise_words = _critic_raise_words(config, verdict.length, sp, budget) if raised else ""
            lines.append(_CriticBudgetLine(key, budget, raise_words, taken, judged,
                                           raised and not config.critic_micro_batch_sequences, count.words))
    return tuple(lines)


def _critic_counted_at(verdict: _BudgetVerdict, sp: int, own_sp: bool) -> _CriticCount:
    """The tokens per GPU at which the verdict counts the critic's update at `sp`, with those tokens in words where
    they are not the verdict's budget (else empty): at an SP of its own (`own_sp`), the budget it counts Trinity
    raising a smaller one to there (`_critic_raised`: one sequence where its passes read none), where above the
    verdict's (`solver.memory`'s ``_critic_tokens``, which counts no budget of the critic's own above it); else the
    verdict's."""
    raised = _critic_raised(verdict.config, verdict.length, sp) if own_sp else 0
    if raised <= verdict.judged:
        return _CriticCount(sp, verdict.judged, "")
    what = "one sequence" if verdict.config.critic_micro_batch_sequences else "the raise of a smaller budget"
    return _CriticCount(sp, raised, f"{raised}, {what} at the critic's SP {sp}")


def _critic_takes_raised_trainer_budget(verdict: _BudgetVerdict) -> _CriticBudgetLine | None:
    """Where the trained critic runs at the trainer's SP, sets no training budget of its own, so takes the trainer's
    (Trinity's ``set_if_none``, ``common/verl_config.py:585`` in 0.5.0; unset, Trinity's fill, ``ceil(2L/SP)`` at the
    trainer's SP, ``config_validator.py:1169``), and its passes read it (dynamic batch sizes on on every release the
    config may run on: `TrinityConfig.critic_micro_batch_sequences` 0, verl 0.7.0's
    ``workers/critic/dp_critic.py:211``), which Trinity raises where below its raise
    (`TrinityConfig.raised_critic_budget`: with 0.5, 0.5.0's ``ceil(2L/SP)``, ``:595``), and the more of the two is
    above the verdict's budget (lowered, the other passes reading none, or with every pass reading a budget a trainer's
    above Trinity's default, which has a line of its own, `_token_budget_problems`: on every verl line the critic takes
    it, frozen to it on verl 0.8, ``trainer/verl/config.py:462`` in 0.6.0): the line's data, that more its tokens, at
    which the verdict counts its update (`_critic_at_own_sp`); else None."""
    from solver.trinity.keys import CRITIC_TOKEN_BUDGET

    config, length = verdict.config, verdict.length
    own = any(key == ".".join(CRITIC_TOKEN_BUDGET) for key, _ in config.critic_token_budgets)
    if config.critic is None or own or config.critic_micro_batch_sequences:
        return None
    budget, raised = config.max_token_len_per_gpu or config.default_budget(length), config.raised_critic_budget(
        length, config.sp)
    tokens = max(budget, raised)
    if tokens <= verdict.judged:
        return None
    filled = "" if config.max_token_len_per_gpu else (
        f", Trinity's fill of the unset key (ceil(2 x {length} / {config.trainer_sp or config.sp})),")
    raise_words = _critic_raise_words(config, length, config.sp, budget) if budget < raised else ""
    return _CriticBudgetLine(TRAINER_TOKEN_BUDGET, budget, f"{filled}{raise_words}", tokens, verdict.judged, True)


def _critic_budget_lines(verdict: _BudgetVerdict, count: _CriticCount,
                         budgets: tuple[_CriticBudgetLine, ...]) -> list[ConfigProblem]:
    """A line on each of the critic's own budgets above the verdict's (`budgets`, `_critic_budgets`' at its SP,
    `count`'s), and on its micro-batches where its passes run with dynamic batch sizes off
    (`TrinityConfig.critic_micro_batch_sequences`, at that SP) and one holds more sequences than one, and more tokens
    per GPU than where the memory model counts its own update (`count`: the verdict's budget, or at an SP of its own
    one sequence there where that is more)."""
    sequences, sp, judged = verdict.config.critic_micro_batch_sequences, count.sp, count.tokens
    than = count.words or f"the verdict's {judged}"
    lines = [ConfigProblem(line.code, line.words()) for line in budgets]
    if sequences > 1 and (tokens := sequences * least_token_budget(verdict.length, sp)) > judged:
        lines.append(ConfigProblem(ConfigProblemCode.CRITIC_BUDGET_ABOVE_VERDICT, (
            f"the critic's passes run with dynamic batch sizes off: verl reads no token budget there and fills each "
            f"micro-batch with {sequences} sequences (the largest of its micro-batch sizes), up to {sequences} x "
            f"ceil({verdict.length} / {sp}) = {tokens} tokens per GPU, more than {than}, where the memory model "
            "counts its own update: set its micro-batch sizes to 1, or turn dynamic batch sizes on")))
    return lines


def _critic_raise_words(config: TrinityConfig, length: int, sp: int, budget: int) -> str:
    """How Trinity on verl before 0.8 raises the critic's training budget `budget`, below what it raises it to at
    `length` and the critic's SP `sp` (`TrinityConfig.raised_critic_budget`), in words after the budget: the raise
    counted, naming the releases that give it (with 0.5, 0.5.0's, the most, beside 0.5.1's and 0.5.2's, which keep a
    budget that holds a sequence; else the least, beside 0.5.0's where the release may be 0.5)."""
    least = f"ceil({length} / {sp}) = {least_token_budget(length, sp)}"
    most = f"ceil(2 x {length} / {sp}) = {token_budget(length, sp)}"
    if config.version == "0.5":
        kept = "keep it" if budget >= least_token_budget(length, sp) else f"to {least}"
        return (f", which Trinity 0.5.0 raises to {most} at the critic's SP (0.5.1 and 0.5.2 {kept}; the most is "
                "counted),")
    return (f", which {config.legacy_words} raises to {least} at the critic's SP"
            + ("," if config.version == "0.6" else f" (Trinity 0.5.0 to {most}),"))


def _lowered_by_config(config: TrinityConfig, length: int, estimate: EstimateMode) -> int | None:
    """The token budget a config's roles take at the most (`TrinityConfig.budget_in_effect`) when it is below
    Trinity's default at `length`, still holds the longest sequence (a smaller one is a problem
    `check_trinity_config` reports), and estimates may speak for it (the tables measured the default); else
    None."""
    own = config.budget_in_effect(length)
    if estimate == "never" or not least_token_budget(length, config.sp) <= own < token_budget(length, config.sp):
        return None
    return own


def _vouched(catalog: Catalog, query: Query, current: CurrentSettings, gpu: str,
             lines: _LinesData) -> CurrentSettings:
    """`current` with whether its settings train on `gpu`, the plan that says so, and otherwise why not; where a
    hybrid ``fsdp_size`` shards the states a GPU holds over fewer GPUs (`lines.groups`, `_hybrid_states_gpus`), the
    memory model's estimate with them so must fit too, and its plan's figures count them so. The lines on them, and
    on the critic's SP and budgets (`lines`), say what the memory model counts."""
    from solver.solve import at_token_budget

    groups = lines.groups
    states_gpus = _hybrid_states_gpus(query, current, groups)
    if states_gpus is not None and query.estimate == "never":  # no table measured the groups
        current = current.model_copy(update={"unread_keys": current.unread_keys + tuple(
            key for key in _hybrid_keys_counted(query, groups) if key not in current.unread_keys)})
    if current.unread_keys and not current.broken_rule:
        # how many tokens a pass takes per GPU, or the host memory or GPU memory grouped states take, is unknown here:
        # so is whether it trains
        return current.model_copy(update={"config_problems": _hybrid_need_said(
            current, current.config_problems, None, gpu, query, groups)})
    setting = Setting(env=current.env, offload=current.offload, sp=current.sp)
    # At the config's own budget where it lowers Trinity's default (and estimates may), else at the default.
    own = current.max_token_len_per_gpu if query.estimate != "never" else None
    judged = query.model_copy(update={"token_budget": "default" if own is None else "auto",
                                      "token_budget_cap": None,  # judged at its own budget, not one asked for
                                      "own_batch_sizes": True})  # and its own micro-batches, which the checks judge
    vouching = _plan_at_budget(catalog, judged, gpu, current, setting, own)
    model = catalog.model(query.model)
    verdict = cited_tables_verdict(catalog, gpu, model, current.gpus, setting, current.max_model_len,
                                   lora=query.lora_rank > 0, critic=query.critic is not None)
    out_of_memory = verdict.source if verdict and not verdict.trains else None
    own_critic = _critic_at_own_sp(catalog, query, current, gpu, setting, own, lines.critic_raised, states_gpus)
    hybrid = None if states_gpus is None else (own_critic[1] if own_critic is not None else _verdict_breakdown(
        catalog, query, current, gpu, setting, own, states_gpus=states_gpus))
    problems = _critic_budget_need_said(catalog, query, current, gpu, setting, states_gpus, lines.critic_budgets,
                                        _hybrid_need_said(current, _critic_need_said(
                                            current, lines.critic_sps, own_critic, gpu), hybrid, gpu, query, groups))
    # With --estimate the estimates alone make the plan, but a table that says the setting ran out of memory at
    # Trinity's default budget (its GPU type's, or one's with at least its memory), a measurement, decides, as the
    # plan's tables line says. A critic at its own SP (the plan counts it at the trainer's) must fit there too, and
    # the states a hybrid fsdp_size groups, as the memory model counts them there.
    plan_fits = vouching is not None and (out_of_memory is None or vouching.lowered_budget)
    if plan_fits and (own_critic is None or own_critic[1].critic_pass_fits) and (hybrid is None or hybrid.fits):
        # at the verdict's budget: where the config lets a GPU take more, the verdict does not vouch that it trains;
        # its plan's figures with the states over the groups the verdict counts them over, as the hybrid lines say
        # and its critic's own update where the verdict counts it at an SP of its own or its budget raised
        # (`_critic_at_own_sp`), as its lines say, not at the verdict's budget and the trainer's SP
        critic_at = None if own_critic is None else (own_critic[0], lines.critic_raised[own_critic[0]])
        grouped = vouching if (states_gpus is None and critic_at is None) or vouching is None else at_token_budget(
            catalog, judged, gpu, vouching, vouching.max_token_len_per_gpu, states_gpus, critic_at)
        return current.model_copy(update={"trains": not current.budget_above_verdict, "plan": grouped,
                                          "config_problems": problems, "states_grouped": hybrid is not None})
    out_of_memory = None if plan_fits else out_of_memory  # the critic at its own SP alone does not fit: no cell's say
    predicted, predicted_step, critic_pass, host_needed = None, None, None, None
    smaller = None
    gpus_hold = False  # where only the host memory rules them out: a cell or the memory model vouches without it
    loading = query.model_loading(catalog.gpu(gpu).compute_capability, setting.offload)
    if not fits_host_ram(model, current.gpus, query.node_gpus, query.host_ram_gb, setting.offload,
                         query.trinity_version, query.reference_model, query.lora_rank, query.critic,
                         query.expert_layout, loading):
        host_needed = shown_host_need(model, current.gpus, query.node_gpus, setting.offload, query.trinity_version,
                                      query.reference_model, query.lora_rank, query.critic, query.expert_layout,
                                      loading)
        gpus_hold = _plan_at_budget(catalog, judged.model_copy(update={"host_ram_gb": None}), gpu, current, setting,
                                    own) is not None
    if out_of_memory is None and not current.broken_rule and query.estimate != "never" and not gpus_hold:
        memory = (own_critic[1] if own_critic is not None else hybrid if hybrid is not None
                  else _verdict_breakdown(catalog, query, current, gpu, setting, own))
        predicted = (round(memory.total_gib, 1), round(memory.usable_gib, 1))
        if memory.total_gib <= memory.usable_gib and not memory.step_fits:
            predicted_step = (round(memory.step_gib, 2), round(memory.step_usable_gib, 2))
        if memory.total_gib <= memory.usable_gib and not memory.critic_pass_fits:  # beside the step's, where both
            critic_pass = (round(memory.critic_pass_gib, 2), round(memory.usable_gib, 2))
        # Where the tables say nothing and the estimate does not fit, a smaller card's tables that say it trains: a note
        smaller = smaller_card_note(catalog, gpu, model, current.gpus, setting, current.max_model_len,
                                    tables=verdict, estimate_fits=memory.fits, lora=query.lora_rank > 0,
                                    critic=query.critic is not None)
    return current.model_copy(update={"trains": False, "plan": None, "predicted": predicted,
                                      "predicted_step": predicted_step, "predicted_critic_pass": critic_pass,
                                      "host_memory_needed": host_needed, "out_of_memory": out_of_memory,
                                      "smaller_card": smaller, "config_problems": problems,
                                      "states_grouped": hybrid is not None})


def _verdict_breakdown(catalog: Catalog, query: Query, current: CurrentSettings, gpu: str, setting: Setting,
                       own: int | None, critic_sp: int | None = None,
                       states_gpus: tuple[int, int] | None = None, critic_raised: int | None = None) -> Breakdown:
    """The memory model's breakdown of the config's `setting` on `gpu` at its own token budget `own` (None:
    Trinity's default), with the `query`'s critic at `critic_sp` (None: at the trainer's SP), its budget raised there
    to `critic_raised` (None: to hold a sequence there), the actor's states and
    the critic's sharded over `states_gpus` (hybrid ``fsdp_size`` groups: `_hybrid_states_gpus`; None: every trainer
    GPU)."""
    memory_gib = catalog.gpu(gpu).memory_gib
    gpus, critic_gpus = (current.gpus, current.gpus) if states_gpus is None else states_gpus
    return breakdown(catalog.model(query.model), memory_gib, gpus, setting, current.max_model_len,
                     query.memory.coefficients, query.margin_on(memory_gib), own, query.lora_rank, query.critic,
                     query.dpo, query.expert_layout, critic_sp, critic_gpus, critic_raised)


def _critic_left_out_said(problems: list[ConfigProblem], lines: tuple[CriticSpLine, ...],
                          names: OptionNames) -> list[ConfigProblem]:
    """`problems` for a verdict that counts no critic (``--critic none``, `names`'): the ``role-sp-differs`` lines on
    the critic's SP (`lines`, which the checks word as counting it where the releases run it), built again to say
    that the verdict and the plans leave it out."""
    from solver.trinity.config import critic_left_out_option

    left_out = f"the verdict and the plans count no critic ({critic_left_out_option(names)} leaves it out)"
    said = {line.words(): line.words(left_out) for line in lines}
    return [ConfigProblem(problem.code, said.get(problem.words, problem.words)) for problem in problems]


def _critic_at_own_sp(catalog: Catalog, query: Query, current: CurrentSettings, gpu: str, setting: Setting,
                      own: int | None, raised: Mapping[int, int],
                      states_gpus: tuple[int, int] | None = None) -> tuple[int, Breakdown] | None:
    """Where the config's critic may run at SPs of its own (`CurrentSettings.critic_sps`) and estimates may speak:
    the one of them at which its update needs the most, with the breakdown there (`_verdict_breakdown`, its budget
    raised to `raised`'s at each SP, the states over `states_gpus`); where it runs at the trainer's SP alone with its
    budget raised above the verdict's (`raised` holds that SP: `_critic_takes_raised_trainer_budget`), that SP and
    the breakdown with its budget so raised; None otherwise (the critic counted at the verdict's budget)."""
    if query.estimate == "never":
        return None
    if not current.critic_sps:  # none without a critic (`_current`)
        return None if current.sp not in raised else (current.sp, _verdict_breakdown(
            catalog, query, current, gpu, setting, own, None, states_gpus, raised[current.sp]))
    return max(((sp, _verdict_breakdown(catalog, query, current, gpu, setting, own, sp, states_gpus, raised[sp]))
                for sp in current.critic_sps), key=lambda each: each[1].critic_pass_gib)


def _hybrid_keys_counted(query: Query, groups: StateGroups) -> tuple[str, ...]:
    """The hybrid ``fsdp_size`` keys of `groups` whose states the verdict counts, dotted: the critic's only where the
    `query` counts a critic (not with ``--critic none``)."""
    return tuple(line.key for line in groups.lines if line.role != "critic" or query.critic is not None)


def _hybrid_states_gpus(query: Query, current: CurrentSettings, groups: StateGroups) -> tuple[int, int] | None:
    """The GPUs the actor's states and the critic's are sharded over where a hybrid ``fsdp_size`` (`groups`) shards
    those a trainer GPU holds over fewer than `current`'s: the actor's, or the critic's where the verdict counts one
    (`query`'s); None where none does. The ref's weights stay on the host (pinned, verl's ``CPUOffload``), so its
    group changes no GPU's memory."""
    if groups.actor == current.gpus and (query.critic is None or groups.critic == current.gpus):
        return None
    return groups.actor, groups.critic


def _hybrid_need_said(current: CurrentSettings, problems: tuple[str, ...], memory: Breakdown | None, gpu: str,
                      query: Query, groups: StateGroups) -> tuple[str, ...]:
    """The config's `problems` (in `current`'s order) with their ``fsdp-size-hybrid`` lines (`groups`' lines, each
    built again from its data) saying how much a GPU needs with the states over their groups (`memory`, on `gpu`), or
    that the verdict does not count them (None: whether it trains is unknown); for the critic's keys where the `query`
    counts no critic (``--critic none``), that it is left out. A line whose states the verdict counts, where they fit
    so, gives no fix (-1): that grouping trains; the others do, where it does not or is unknown."""
    from solver.trinity.checks import fsdp_hybrid_counted_words
    from solver.trinity.config import critic_left_out_option

    lines = {line.words(): line for line in groups.lines}
    said = []
    for code, words in zip(current.config_problem_codes, problems, strict=True):
        if code == ConfigProblemCode.FSDP_SIZE_HYBRID:
            line = lines[words]
            left_out = line.role == "critic" and query.critic is None
            if left_out:
                need = (f"the verdict and the plans count no critic ({critic_left_out_option(query.option_names)} "
                        "leaves it out)")
            elif memory is None:
                need = (f"only the memory model would count them so, as a run on {counted(line.counted_size, 'GPU')} "
                        "holds them, on the GPUs, and whether it trains is unknown here (the verdict says why)")
            else:
                need = fsdp_hybrid_counted_words(line.counted_size, (
                    f" ({memory.total_gib:.1f} GiB per {gpu} GPU, of {memory.usable_gib:.1f} usable; "
                    f"{memory.step_gib:.1f} at the optimizer step, of {memory.step_usable_gib:.1f})"))
            words = line.words(need, advised=left_out or line.role == "ref" or memory is None or not memory.fits)
        said.append(words)
    return tuple(said)


def _critic_budget_need_said(catalog: Catalog, query: Query, current: CurrentSettings, gpu: str, setting: Setting,
                             states_gpus: tuple[int, int] | None, budgets: tuple[_CriticBudgetLine, ...],
                             problems: tuple[str, ...]) -> tuple[str, ...]:
    """The config's `problems` with the ``critic-budget-above-verdict`` line on the critic's own training budget (of
    `budgets`, each line's data) built again saying what its update needs at that budget on `gpu`
    (`_CriticBudgetLine.words`' need: the memory model's breakdown there, at the SP the verdict counts it at,
    `_counted_critic_sp`, the states over `states_gpus`), where estimates may speak and a critic is counted; as they
    are otherwise."""
    from solver.trinity.keys import CRITIC_TOKEN_BUDGET

    if query.estimate == "never" or query.critic is None:
        return problems
    said = {}
    for line in budgets:
        if line.key in (".".join(CRITIC_TOKEN_BUDGET), TRAINER_TOKEN_BUDGET):
            memory = _verdict_breakdown(catalog, query, current, gpu, setting, line.tokens,
                                        _counted_critic_sp(current.critic_sps, current.sp), states_gpus)
            said[line.words()] = line.words(f" (at {line.tokens}, {memory.critic_pass_gib:.1f} GiB per {gpu} GPU, "
                                            f"of {memory.usable_gib:.1f} usable)")
    return tuple(said.get(words, words) for words in problems)


def _critic_need_said(current: CurrentSettings, lines: tuple[CriticSpLine, ...],
                      own_critic: tuple[int, Breakdown] | None, gpu: str) -> tuple[str, ...]:
    """The config's problems with its ``role-sp-differs`` lines on the critic's SP (`lines`, each line's data) built
    again saying how much its update needs at the SP the verdict counts it at (`own_critic`: that SP and the breakdown
    there), on `gpu`; where the critic may run at SPs of its own but the verdict counts none of them (`own_critic`
    None: estimates off, the tables alone judge), that the verdict and the plans count it at the trainer's SP."""
    from solver.trinity import critic_sp_counted_words

    if not current.critic_sps:  # the lines say the critic is counted at the trainer's SP already
        return current.config_problems
    if own_critic is None:
        said = {line.words(): line.words(critic_sp_counted_words((), current.sp)) for line in lines}
    else:
        sp, memory = own_critic
        need = (f" (SP {sp}, " if len(current.critic_sps) > 1 else " (") + (
            f"{memory.critic_pass_gib:.1f} GiB per {gpu} GPU, of {memory.usable_gib:.1f} usable)")
        said = {line.words(): line.words(critic_sp_counted_words(current.critic_sps, current.sp, need, line.raised))
                for line in lines}
    return tuple(said.get(words, words) for words in current.config_problems)


def _plan_at_budget(catalog: Catalog, judged: Query, gpu: str, current: CurrentSettings, setting: Setting,
                    own: int | None) -> Plan | None:
    """The plan for exactly the config's settings at its own token budget `own` (None: Trinity's default), by
    the `judged` query; None when they do not train there."""
    from solver.solve import at_token_budget, plan_for_settings

    vouching = plan_for_settings(catalog, judged, gpu, current.gpus, setting)
    if vouching is None or own is None:
        return vouching
    if own > vouching.max_token_len_per_gpu:  # above the planner's lowered budget (a multiple of 1024): may fit
        estimate = estimate_memory(judged.model, gpu, current.gpus, current.max_model_len, sp=setting.sp,
                                   env=setting.env, offload=setting.offload, margin=judged.margin,
                                   node_gpus=judged.node_gpus, catalog=catalog, memory=judged.memory,
                                   max_token_len_per_gpu=own)
        if not estimate.fits or (estimate.tables is not None and not estimate.tables.trains):
            return None
    return at_token_budget(catalog, judged, gpu, vouching, own)


