"""`solve cluster`'s placement: its status, a table per pool of the jobs placed there, their cautions, the unplaced
jobs; and the placement as JSON."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from math import ceil
from pathlib import Path
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from solver.query import counts_reference
from solver.render.layout import PIPED_WIDTH, TableOrBlocks, check_text_options, view_text
from solver.render.phrases import cost_ratio_words, lowered_note, seconds_words
from solver.render.styles import setting_style
from solver.results import (
    ClusterResult,
    Placement,
    Plan,
    PoolUse,
    PurchaseResult,
    StayCode,
    Unplaced,
    check_placed_on,
    fleet_gpus_words,
    index_range,
)
from solver.rules import API_OPTIONS, COMMAND_OPTIONS, OptionNames
from solver.tables import (
    EVERY_JOB,
    Catalog,
    CriticStates,
    Fleet,
    Pool,
    and_joined,
    check_types,
    counted,
    given_fleet,
    it_or_them,
    load_catalog,
    named_jobs,
    shown_number,
)
from solver.tables.peft_match import adapted_brief, all_linear

WIDENED_NOTE = "(+N): grown onto N idle GPUs of its node, where more GPUs run it faster (or longer, for at_least)"
"""A cluster table's note on the jobs that `place` widened."""
MOVED_NOTE = ("(moved to widen): moved alone onto a node of its pool that no job used, so that it, or the jobs it "
              "shared a node with, run on more GPUs")
"""A cluster table's note on the jobs that widening moved onto an idle node."""
MORE_ROLLOUT_NOTE = "(N asked): a trainer on whole nodes leaves its rollout whole nodes, more GPUs than the job asked"
"""A cluster table's note on the jobs whose rollout takes more GPUs than they asked."""


def required_note(names: OptionNames) -> str:
    """A cluster table's note on the jobs that must be placed: those the fleet marks ``required: true``, and those the
    option names, as `names` name it (the command's flag, or the call's keyword)."""
    marked = (f"the fleet marks it required: true, or the call's {names.item(names.required, 'it')}" if names.keywords
              else f"required: true, or {names.required}")
    return f"(required): the job must be placed ({marked})"


REQUIRED_NOTE = required_note(COMMAND_OPTIONS)
"""`required_note` in the command's words."""
AT_LEAST_NOTE = "(≥N): the job asked for at_least N tokens, longer where a plan allows"
"""A cluster table's note on the jobs that asked for at_least a length."""
AT_MOST_NOTE = "(N..M): the job asked for at_least N tokens and at_most M, longer where a plan allows, up to M"
"""A cluster table's note on the jobs that asked for at_least a length, capped with at_most."""
TRAINER_NODES_NOTE = ("host GiB/node (node N, ...): needed only on the nodes named, those its trainer runs on; its "
                      "other nodes hold its rollout alone")
"""A cluster table's note on the jobs with nodes of their rollout alone, whose host need is their trainer's nodes'."""
TRAINING_NOTE = ("training: full fine-tuning, or LoRA of the job's lora_rank; ref or no ref: whether its run builds a "
                 "reference model (the job's reference_model; absent, none with LoRA), whose pinned shards the host "
                 "memory need counts")
"""A cluster table's note on its training column, shown where a job placed there trains LoRA, builds no reference
model or trains a PPO critic."""
CRITIC_NOTE = ("; critic resident, offloaded or reloaded: the PPO critic it trains beside the actor (the job's "
               "critic), where the critic keeps its states")
"""What `TRAINING_NOTE` says besides where a job of the table trains a PPO critic."""
LORA_TARGETS_NOTE = ("; LoRA R on MODULES: its adapter on the job's lora_targets (the names, or its "
                     "target_modules regex), not all-linear")
"""What `TRAINING_NOTE` says besides where a job of the table trains LoRA on other modules than all-linear's."""
LORA_EXCLUDED_NOTE = ("; less EXCLUDED: less the modules its lora_exclude_modules (an exclude_modules regex) "
                      "matches")
"""What `TRAINING_NOTE` says besides where a job of the table leaves modules out of its LoRA adapter."""
DPO_NOTE = ("; DPO: it trains DPO (the job's dpo), a chosen and a rejected sequence per micro-batch where its model "
            "is trained one padded sequence per micro-batch")
"""What `TRAINING_NOTE` says besides where a job of the table trains DPO."""


def training_note(critic: bool, dpo: bool = False, targets: bool = False, excluded: bool = False) -> str:
    """The note on a cluster table's training column (`TRAINING_NOTE`), with what it says of a PPO critic where a job
    of the table trains one (`critic`), of DPO where one trains it (`dpo`), of LoRA targets where one's adapter
    adapts other modules than all-linear's (`targets`), and of exclusions where one's leaves modules out
    (`excluded`)."""
    return (TRAINING_NOTE + (LORA_TARGETS_NOTE if targets else "") + (LORA_EXCLUDED_NOTE if excluded else "")
            + (CRITIC_NOTE if critic else "") + (DPO_NOTE if dpo else ""))
RELEASE_NOTE = ("Trinity: the release the job's plans are counted for (its trinity_version; else, where it runs now, "
                "the one its plan names; else the run's)")
"""A cluster table's note on its Trinity column, shown where the placement's jobs are counted for several releases,
a placed job names its own, or one that runs now has a plan counted for one (`_named_releases`)."""
UNNAMED_RELEASE_NOTE = "; none: none named (0.6's counts)"
"""What `RELEASE_NOTE` says besides where a job of the table is counted for no release, its column's ``none``."""
UNPLACED_RELEASE_NOTE = ("Trinity: the job's own release (its trinity_version), by whose counts it was left out; "
                         "blank: none of its own (the run's, or where it runs now, the one its plan names)")
"""An unplaced jobs' table's note on its Trinity column, shown where one of them names its own release."""
COST_NOTE = ("cost: the job's relative step time, as solve gives its plan (compare within one model and GPU type: 1 is "
             "its own model's vanilla step on one GPU)")
"""The line under a cluster's tables that says what their cost column counts."""


def no_rollout_gpus_note(names: OptionNames) -> str:
    """What a cluster's output says of the placed jobs that give no rollout_gpus (they get none, unlike a job that
    asks for 0, which says so), naming what writes their configs as `names` do."""
    return (f"no rollout_gpus given, so no GPUs for the explorer here ({names.placement_writer} writes mode: train); "
            "give rollout_gpus, or 0 where the explorer runs elsewhere or none does (SFT)")


NO_ROLLOUT_GPUS_NOTE = no_rollout_gpus_note(COMMAND_OPTIONS)
"""`no_rollout_gpus_note` in the command's words."""


def tie_break_unproven(interrupted: bool, names: OptionNames = COMMAND_OPTIONS) -> str:
    """The line under an ``optimal`` cluster status whose tie-break did not prove its pick: the time limit (its
    deterministic work, the same on every run; where the wall clock stopped it, `wall_clock_stopped_words` says so),
    or Ctrl-C where `interrupted`, stopped it; options named as `names` do."""
    return (f"placement optimal; tie-break not proven: {'Ctrl-C' if interrupted else 'the time limit'} stopped the "
            "pick among the equally good placements, so "
            + (f"another run or {names.workers} may give another of them" if interrupted
               else f"{names.workers} may give another of them (raise {names.time_limit})"))


WALL_CLOCK_STEPS = {"priority": "the placed-priority stage", "nodes": "the nodes-used stage",
                    "stays": "the running-jobs-kept stage", "jobs": "the stage choosing among jobs tied in priority",
                    "length": "the longer-contexts stage",
                    "cost": "the step-time-cost stage",
                    "tie-break": "the tie-break", "without host": "the proof without host memory",
                    "widening": "widening onto idle GPUs", "hints": "the smaller asks of the jobs left out",
                    "bought GPUs": "the GPUs-bought stage", "bought nodes": "the nodes-bought stage",
                    "ways": "working out the jobs' ways",
                    "reasons": "working out why the other pools of the jobs left out have no way for them",
                    "least priority": "the least priority that places each job left out",
                    "stay notes": "weighing the wider ways of the running jobs kept beside idle GPUs",
                    "solve best": "asking solve's best on the trainer GPUs of the jobs placed on the tables' plans"}
"""The steps `ClusterResult.wall_clock_stopped` names, in words."""


def wall_clock_stopped_words(steps: tuple[str, ...], names: OptionNames = COMMAND_OPTIONS) -> str:
    """The line that says which `steps` (`ClusterResult.wall_clock_stopped`) the time limit's wall clock stopped
    before the work they are given, so that another run may answer otherwise (the time limit named as `names` do)."""
    named = [WALL_CLOCK_STEPS[step] for step in steps]
    return (f"the wall clock stopped {and_joined(named)} before the work {'it is' if len(named) == 1 else 'they are'} "
            "given (a busy machine, or the jobs' ways took much of the time limit): another run may give another "
            f"answer (raise {names.time_limit})")


def cluster_json(result: ClusterResult) -> str:
    """A cluster placement as JSON: status, objective (and what it counts), bound, placements, unplaced jobs, and
    whether Ctrl-C cut the search short."""
    return json.dumps(result.model_dump(mode="json"), indent=2)


def _pool_view(pool: Pool, use: PoolUse, here: list[Placement], required: frozenset[str],
               names: OptionNames, releases: bool = False) -> RenderableType:
    """A pool's table, under what the placement `use`s of it: a row per job placed `here` (its nodes, GPUs, the job,
    marked where it is one of the `required`, trainer and rollout GPUs against those it asked, plan, length, cost,
    evidence and host memory), with a note on each estimated plan's predicted memory (as `solve`'s ``memory`` row gives
    it) and one on how each mixture of experts placed for a named Trinity release counted its routed experts
    (`Plan.experts_counted`, as `solve`'s ``experts`` row gives it), one on each tables' plan where `solve` gives the
    job a cheaper estimate (`_solve_best_words`), or its title alone where nothing is placed; its notes name options
    as `names` do; each job's Trinity release where the placement's jobs are counted for several, or one names its
    own (`releases`, `_named_releases`)."""
    fullest = "" if use.fullest_node_host_gb is None else f", {use.fullest_node_host_gb:.1f} needed on the fullest node"
    host_ram = (f" ({shown_number(pool.host_ram_gb)} GiB host memory each{fullest})"
                if pool.host_ram_gb is not None else "")
    used = (f"{counted(use.nodes_used, 'node')} and {use.gpus_used} of {counted(use.gpus, 'GPU')} used" if pool.nodes
            else "no nodes now (nodes: 0): nothing runs there")
    down = (f", {'nodes' if len(pool.down) > 1 else 'node'} {and_joined(list(map(str, pool.down)))} down"
            if pool.down else "")
    title = f"pool {pool.name}: {pool.nodes} x {pool.gpus_per_node} {pool.gpu}{host_ram}{down}; {used}"
    if not here:  # a title, without an empty table
        return Text(title, style="italic")
    columns = _PoolColumns.of(pool, here, required, releases)
    widened = any(placement.widened_from is not None for placement in here)
    moved = any(placement.moved_to_widen for placement in here)
    more_rollout = any(placement.rollout_gpus != placement.asked_rollout_gpus for placement in here)
    unnamed = any(placement.plan.trinity_version is None for placement in here)  # its Trinity column's none
    rollout_nodes = columns.offloads and any(placement.trainer_nodes != placement.nodes
                                             and placement.host_need_gb is not None for placement in here)
    notes = ([required_note(names)] if columns.required else []) + (
        [f"{lowered_note(names)}: set it in the job's config"] if columns.lowered else []) + (
        [WIDENED_NOTE] if widened else []) + ([MOVED_NOTE] if moved else []) + (
        [MORE_ROLLOUT_NOTE] if more_rollout else []) + (
        [AT_LEAST_NOTE + _validated_stops(here, capped=False)]
        if any(at_most is None for at_most in columns.lengthened.values()) else []) + (
        [AT_MOST_NOTE + _validated_stops(here, capped=True)]
        if any(at_most is not None for at_most in columns.lengthened.values()) else []) + (
        [TRAINER_NODES_NOTE] if rollout_nodes else []) + (
        [training_note(any(placement.plan.critic for placement in here), any(placement.plan.dpo for placement in here),
                       any(not all_linear(placement.plan.lora_target_modules) for placement in here),
                       any(placement.plan.lora_exclude_modules for placement in here))]
        if columns.training else []) + (
        [RELEASE_NOTE + (UNNAMED_RELEASE_NOTE if unnamed else "")] if columns.releases else []) + [
        f"{placement.job}: {placement.plan.prediction_words} (memory model)" for placement in _as_the_gpus_lie(here)
        if placement.plan.source is None] + [
        f"{placement.job}: {placement.plan.experts_counted}" for placement in _as_the_gpus_lie(here)
        if placement.plan.experts_counted and placement.plan.trinity_version] + [
        _solve_best_words(placement, best) for placement in _as_the_gpus_lie(here)
        if (best := placement.solve_best) is not None]
    view = Table(title=title, title_justify="left", caption_justify="left", caption="\n".join(notes) or None)
    for header in columns.headers:
        view.add_column(header, no_wrap=True, justify="right" if header in (
            "trainer", "rollout", "max_model_len", "YaRN", "tokens/GPU", "host GiB/node") else "left")
    for placement in _as_the_gpus_lie(here):
        view.add_row(*_pool_row(pool, placement, columns))
    return TableOrBlocks(view, heading=columns.headers.index("job"))


def _solve_best_words(placement: Placement, best: Plan) -> str:
    """A pool table's note on a job placed on the tables' plan where `solve` gives it a cheaper estimate on its
    trainer GPUs (`best`, its `Placement.solve_best`): that plan, its cost against the placed one's
    (`cost_ratio_words`) and its predicted memory, and why the cluster took the tables'."""
    plan = placement.plan
    return (f"{placement.job}: solve's best on its {counted(plan.gpus, 'trainer GPU')} at {plan.max_model_len} is "
            f"{best.setting.label} ({best.evidence_and_single_gpu}; {cost_ratio_words(best, plan)}; "
            f"{best.prediction_words}); placed on the tables' {plan.setting.label} ({plan.evidence}), as the cluster "
            "takes the tables' plans first")


def _solve_best_unasked(result: ClusterResult | PurchaseResult, names: OptionNames) -> list[Text]:
    """The note on the placed jobs on the tables' plans whose `solve_best` the time limit (or Ctrl-C) left unasked
    (`ClusterResult.solve_best_unasked`), how many; none where every one was asked."""
    if not result.solve_best_unasked:
        return []
    # Left unasked by the time limit, or else by Ctrl-C (before them, or while they were asked)
    came, raise_limit = (("the time limit ran out", f"; raise {names.time_limit}")
                         if "solve best" in result.wall_clock_stopped else ("Ctrl-C came", ""))
    return [Text(f"note: {came} before solve's best on their trainer GPUs was asked for "
                 f"{counted(result.solve_best_unasked, 'job')} placed on the tables' plans (where it is a cheaper "
                 f"estimate, a line under the pool's table names it{raise_limit})", style="yellow")]


def _as_the_gpus_lie(here: list[Placement]) -> list[Placement]:
    """The jobs placed in a pool in the order of its table's rows: as their nodes and GPUs lie."""
    return sorted(here, key=lambda placement: (placement.nodes, placement.gpu_indexes, placement.job))


def _validated_stops(here: list[Placement], capped: bool) -> str:
    """What an at_least note (`AT_LEAST_NOTE`, or `AT_MOST_NOTE` where `capped`) adds of the jobs placed `here` (with
    an at_most where `capped`, else without) whose stretch stops at the longest their model is known to handle though
    a plan reaches further (`Placement.stopped_at_validated`): each job, its length, and why it stops there; "" where
    none does."""
    stops = [f"; {placement.job} stops at {placement.plan.max_model_len}, "
             + (f"as far as YaRN is validated for {placement.model}" if placement.plan.rope_scaling_factor
                else f"{placement.model}'s native context")
             + ", though a plan reaches further" for placement in here
             if placement.stopped_at_validated and (placement.at_most is not None) == capped]
    return "".join(stops)


@dataclass(frozen=True)
class _PoolColumns:
    """What a pool's table (`_pool_view`) shows besides its fixed columns, as the jobs placed in it need: each job's
    host memory per node (`offloads`: where the pool checks it, with its Offload or its load; else where a job
    offloads), YaRN's factor as --top shows it (`scaled`), the token budget where --token-budget auto lowered one
    (`lowered`); the jobs that asked for at_least a length and run longer, or stop at the length asked where it is
    the longest their model is known to handle though a plan reaches further (`lengthened`, their names, each with
    its at_most cap or None: at the length asked otherwise, "(≥N)" would add nothing); and the jobs placed here that
    must be (`required`, their names); whether each job says if it stays where it runs now (`current`: with
    --current); and whether each says what it trains (`training`: where a job trains LoRA, builds no reference
    model, trains a PPO critic or trains DPO); and whether each names its Trinity release (`releases`:
    `_named_releases`)."""

    offloads: bool
    scaled: bool
    lowered: bool
    lengthened: Mapping[str, int | None]
    required: frozenset[str]
    current: bool = False
    training: bool = False
    releases: bool = False

    @classmethod
    def of(cls, pool: Pool, here: list[Placement], required: frozenset[str], releases: bool = False) -> _PoolColumns:
        """The columns of `pool`'s table with the jobs placed `here`, those of them in `required` marked, each job's
        Trinity release where `releases`."""
        return cls(offloads=pool.host_ram_gb is not None or any(placement.plan.offload for placement in here),
                   scaled=any(placement.plan.rope_scaling_factor for placement in here),
                   lowered=any(placement.plan.lowered_budget for placement in here),
                   lengthened={placement.job: placement.at_most for placement in here if placement.at_least
                               and (placement.plan.max_model_len > placement.asked_max_model_len
                                    or placement.stopped_at_validated)},
                   required=frozenset(placement.job for placement in here if placement.job in required),
                   current=any(placement.current is not None for placement in here),
                   training=any(placement.plan.lora_rank or not placement.plan.reference_model
                                or placement.plan.critic is not None or placement.plan.dpo for placement in here),
                   releases=releases)

    @property
    def headers(self) -> tuple[str, ...]:
        """The table's headers, in order."""
        return ("nodes", "GPUs", "job", "trainer", "rollout", "plan", *(("training",) if self.training else ()),
                *(("Trinity",) if self.releases else ()), "max_model_len",
                *(("YaRN",) if self.scaled else ()), *(("tokens/GPU",) if self.lowered else ()), "cost", "evidence",
                *(("host GiB/node",) if self.offloads else ()), *(("now",) if self.current else ()))


def _named_releases(placements: Sequence[Placement], fleet: Fleet) -> bool:
    """Whether the tables of `placements` (of `fleet`'s jobs) name each job's Trinity release: where their plans are
    counted for more than one (a cluster job's own ``trinity_version``, or the one a running job's plan names, beside
    the run's), where a placed job names its own (the run's may be another, or none: all jobs of ``0.5`` under no
    ``--trinity-version``), or where a job that runs now and names none has a plan counted for one (the release its
    running plan names, which the run's may not be: all running jobs on ``0.5`` under no ``--trinity-version``)."""
    own = {job.name: job.trinity_version for job in fleet.jobs}
    return (len({placement.plan.trinity_version for placement in placements}) > 1
            or any(own.get(placement.job) is not None for placement in placements)
            or any(placement.runs_on_plans_release for placement in placements))


def _pool_row(pool: Pool, placement: Placement, columns: _PoolColumns) -> tuple[RenderableType, ...]:
    """A placed job's row in `pool`'s table, under `columns.headers`: its nodes, GPUs, name (marked where it is
    required), trainer GPUs (with those widening added, and whether it moved the job) and rollout GPUs (against
    those it asked), plan, what it trains (`training_words`), Trinity release, length, cost, evidence, host memory,
    and whether it stays where it runs now (--current)."""
    plan = placement.plan
    nodes = ", ".join(map(str, placement.nodes))
    indexes = placement.gpu_indexes
    gpus = "all" if len(indexes) == pool.gpus_per_node else index_range(indexes)
    need = placement.host_need_gb
    trainer_nodes = placement.trainer_nodes
    named = f"{'node' if len(trainer_nodes) == 1 else 'nodes'} {', '.join(map(str, trainer_nodes))}"
    on = "" if trainer_nodes == placement.nodes else f" ({named})"
    host = () if not columns.offloads else (f"{need:.1f}{on}" if need is not None else "",)
    at_least, at_most = placement.asked_max_model_len, columns.lengthened.get(placement.job)
    asked = ("" if placement.job not in columns.lengthened else f" (≥{at_least})" if at_most is None
             else f" ({at_least}..{at_most})")
    length = f"{plan.max_model_len}{asked}"
    grown = [] if placement.widened_from is None else [f"+{placement.trainer_gpus - placement.widened_from}"]
    added = ", ".join(grown + (["moved to widen"] if placement.moved_to_widen else []))
    rollout = (f"{placement.rollout_gpus}" if placement.rollout_gpus == placement.asked_rollout_gpus
               else f"{placement.rollout_gpus} ({placement.asked_rollout_gpus} asked)")
    job = f"{placement.job} (required)" if placement.job in columns.required else placement.job
    return (nodes, gpus, job, f"{placement.trainer_gpus}{f' ({added})' if added else ''}", rollout,
            Text(plan.setting.label, style=setting_style(plan.setting)),
            *((training_words(plan.lora_rank, plan.reference_model, plan.critic, plan.dpo, plan.lora_target_modules,
                              plan.lora_exclude_modules),)
              if columns.training else ()),
            *((plan.trinity_version or "none",) if columns.releases else ()),
            length,
            *((f"{plan.rope_scaling_factor!r}" if plan.rope_scaling_factor else "",) if columns.scaled else ()),
            *((f"{plan.max_token_len_per_gpu}{'*' if plan.lowered_budget else ''}",) if columns.lowered else ()),
            f"{plan.cost:.4g}", plan.evidence_label, *host, *((placement.current or "",) if columns.current else ()))


def training_words(lora_rank: int, reference_model: bool | None, critic: CriticStates | None,
                   dpo: bool = False, lora_targets: str | None = None, lora_excluded: str | None = None) -> str:
    """What a job trains, as a cluster table's training column says it: ``LoRA 16`` (its `lora_rank`) or ``full``
    (fine-tuning), with the modules its adapter adapts where not all-linear (`lora_targets`, a target_modules regex:
    ``LoRA 16 on q_proj,v_proj``, `adapted_brief`) less those its exclude_modules regex `lora_excluded` matches
    (``LoRA 16 on all-linear less .*\\.layers\\.0\\..*``, each cut as `targets_brief` cuts a regex), then ``ref`` or
    ``no ref``, whether its run builds a reference
    model (``LoRA 16, no ref``; None: as a job's default, `counts_reference`), then where it trains a PPO critic,
    where the critic keeps its states (``full, ref, critic offloaded``), and ``DPO`` where it trains DPO (`dpo`:
    ``LoRA 16, no ref, DPO``)."""
    reference = counts_reference(reference_model, lora_rank)
    trained = (f", critic {critic}" if critic is not None else "") + (", DPO" if dpo else "")
    adapted = adapted_brief(lora_targets, lora_excluded)
    return f"{f'LoRA {lora_rank}{adapted}' if lora_rank else 'full'}, {'ref' if reference else 'no ref'}{trained}"


UNPLACED_JOBS_WIDTH = 40
"""The most columns the unplaced jobs' names take beside their reason (a longer name takes its own)."""


def cluster_view(result: ClusterResult, fleet: Fleet, minimize_nodes: bool = False,
                 names: OptionNames = COMMAND_OPTIONS) -> Group:
    """The status (and the memory model of one's own that estimated, where one did), then a table per pool, a row
    per placed job with its nodes and plan; the placed plans' cautions (those `solve` would give them, and with
    --estimate one where the tables refute a plan: each once, with its jobs); then the unplaced jobs, and what the
    file asks otherwise now of those that stop (``stops: JOB: WORDS``, as a moving job's lines). The view's own
    lines name options as `names` do."""
    renderables: list[Any] = [*_status_lines(result, fleet, minimize_nodes, names), *_running_now(result),
                              *_search_warnings(result, names)]
    if result.memory_model_source:  # as solve's memory line names it: the estimates are its
        renderables.insert(1, Text(f"memory model: {result.memory_model_source}"))
    required = _marked_required(result.required, fleet)
    for pool, use in zip(fleet.pools, result.pools, strict=True):
        renderables.append(_pool_view(pool, use, [p for p in result.placements if p.pool == pool.name], required,
                                      names, _named_releases(result.placements, fleet)))
    if result.placements:
        renderables.append(Text(COST_NOTE, style="dim"))
        renderables += _offloaded_despite_priority(result.placements, fleet)
    renderables += [*_move_reasons(result.placements, fleet), *_placed_cautions(result.placements),
                    *_no_rollout_gpus_given(result.placements, fleet, names), *_solve_best_unasked(result, names)]
    if result.unplaced:
        renderables.append(_unplaced_view(result.unplaced, f"unplaced jobs: {len(result.unplaced)} of "
                                                           f"{len(fleet.jobs)}"))
        renderables += _current_reasons(("stops", left.stop_reason, left.job) for left in result.unplaced)
    return Group(*renderables)


def cluster_text(result: ClusterResult | PurchaseResult, fleet: Fleet | Path | str, *, width: int = PIPED_WIDTH,
                 color: bool = False, option_names: OptionNames = API_OPTIONS, catalog: Catalog | None = None) -> str:
    """The text ``solve cluster`` prints for `result` (of `solver.place`; of `solver.buy_nodes`, as with ``--buy``) on
    `fleet` (the `Fleet` it placed, its GPU types and models named as `catalog` names them, or its cluster file's
    path, loaded with `catalog`; default: the shipped one), laid out for `width` columns as on a pipe that wide, with
    ANSI colour codes where `color`; the view's own lines name options as `option_names` do (the API's keywords; the
    result's reasons and cautions are its own, as `place` worded them).
    `QueryError` (one line) for a bad argument (a `Fleet` that breaks its checks, or names a GPU type or model
    `catalog` lacks, among them), or a result not placed on `fleet` (`check_placed_on`); `TableError` for a bad
    cluster file."""
    check_types(("result", result, ClusterResult | PurchaseResult), ("fleet", fleet, Fleet | Path | str),
                ("option_names", option_names, OptionNames), ("catalog", catalog, Catalog | None))
    check_text_options(width, color)
    fleet = given_fleet(fleet, catalog if catalog is not None else load_catalog())
    check_placed_on(result, fleet)
    view = (purchase_view(result, fleet, option_names) if isinstance(result, PurchaseResult)
            else cluster_view(result, fleet, result.objective_counts == "nodes", option_names))
    return view_text(view, width, color)


def _status_lines(result: ClusterResult, fleet: Fleet, minimize_nodes: bool, names: OptionNames) -> list[Text]:
    """A placement's status, with what it counts (the nodes used where `minimize_nodes`, else the placed priority),
    its bound and gap; and, without a bound, how long working out the jobs' ways took (the time limit named as
    `names` do)."""
    if result.search_never_ran:
        return [Text(f"status: {result.status}: time ran out working out the jobs' ways to run, so the search for a "
                     f"placement never ran (raise {names.time_limit})", style="bold red")]
    if result.objective is None:
        out_of_time = result.least_time_limit_s is not None  # no placement: time ran out before the first
        return [Text(f"status: {result.status}"
                     + (f" (time ran out before the search's first placement; raise {names.time_limit})"
                        if out_of_time else ""), style="bold red"), *_time_to_search(result, names)]
    gap = f", gap {result.gap:.1%}" if result.gap else ""
    measure = "nodes used" if minimize_nodes else f"placed priority ({_priority_within_reach(result, fleet)})"
    stopped = ("interrupted" if result.interrupted else "time ran out") + " before the search's first placement"
    raise_limit = "" if result.interrupted else f"; raise {names.time_limit}"
    bound = f"proven bound {result.bound}" if result.bound is not None else (
        f"no bound proven ({stopped}: the greedy one stands{raise_limit})")
    if result.host_rounded and result.bound is not None:
        bound = f"bound {result.bound} with the host memory rounded"
    if result.ways_cut_short and result.bound is not None:
        bound = f"bound {result.bound} on the jobs whose ways were worked out"
    elif result.bound is not None and any(placed.stay_reason_code == StayCode.WAYS_CUT_SHORT
                                          for placed in result.placements):
        bound = f"bound {result.bound} on the ways worked out"  # a running job's on its way as it runs alone
    lines = [Text(f"status: {result.status}; {measure}: {result.objective}, {bound}{gap}", style="bold")]
    if result.bound is None and not result.interrupted:
        lines += _time_to_search(result, names)
    return lines


def _running_now(result: ClusterResult) -> list[Text]:
    """With --current, how many of the jobs that run now stay, move and stop, and how many jobs start; else none."""
    said: Counter[str] = Counter(placement.current for placement in result.placements if placement.current is not None)
    said.update(job.current for job in result.unplaced if job.current is not None)
    if not said:
        return []
    stay, move, stop, start = (said[word] for word in ("stays", "moves", "stops", "starts"))
    return [Text(f"running now: {stay} {'stays' if stay == 1 else 'stay'}, {move} {'moves' if move == 1 else 'move'}, "
                 f"{stop} {'stops' if stop == 1 else 'stop'}; {start} {'starts' if start == 1 else 'start'}")]


def _time_to_search(result: ClusterResult, names: OptionNames) -> list[Text]:
    """How long working out the jobs' ways (and building the placement model) took, and the time limit above which
    the search gets time after them; none where the result has no such limit."""
    if result.least_time_limit_s is None:
        return []
    least = ceil(result.least_time_limit_s)  # rounded up: a limit above it must be above the least
    building = (f", and building the placement model {seconds_words(result.building_s)},"
                if result.building_s >= 0.05 else "")
    return [Text(f"working out the jobs' ways to run took {seconds_words(result.planning_s)}{building} before the "
                 f"search could start: a {names.time_limit} above {least} s leaves the search time after them")]


def _search_warnings(result: ClusterResult, names: OptionNames) -> list[Text]:
    """What leaves a placement less than proven best: a tie-break not proven, the steps the wall clock stopped, host
    memory rounded up, the jobs' ways that ran out of time."""
    warnings = []
    if result.status == "optimal" and not result.tie_broken:
        warnings.append(Text(tie_break_unproven(result.interrupted, names), style="yellow"))
    # The jobs cut short, or with ways undecided, are not required then, unless a required job has no way at all.
    infeasible = result.status == "infeasible"
    if result.ways_cut_short:
        raise_limit = _raise_limit(result.ways_time_limit_s, names, said=result.search_never_ran)
        warnings.append(_ways_cut_short_warning(result.ways_cut_short, (
            "so the placement is not proven best" + raise_limit if result.placements else
            "but a job that must be placed has no way to run at all, whatever their ways" if infeasible
            and result.required_cut_short else
            "and as none of them is required, their ways would not make room for the required jobs" if infeasible else
            "so no placement was found" + raise_limit)))
    if infeasible and result.undecided_ways:
        warnings.append(Text(f"{counted(result.undecided_ways, 'question')} about the jobs' ways to run ran out of "
                             f"time ({names.time_limit}), none behind the required jobs' ways: the required jobs do "
                             "not fit whatever they would answer", style="yellow"))
    return warnings + _unproven_warnings(result.wall_clock_stopped, result.host_rounded,
                                         0 if infeasible else result.undecided_ways,
                                         ": no node's host memory is exceeded, but the placement is not proven optimal"
                                         if result.placements else "", "placement", names)


def _raise_limit(covering_s: int | None, names: OptionNames, said: bool) -> str:
    """What the line of the jobs whose ways were cut short says of the time limit: the limit that would likely work
    out their ways, where their count cut them (`covering_s`, a result's ``ways_time_limit_s``), else to raise it,
    unless the status line says so (`said`)."""
    if covering_s is not None:
        return f" ({names.valued(names.time_limit, covering_s)} would likely work them all out)"
    return "" if said else f" (raise {names.time_limit})"


def _ways_cut_short_warning(cut_short: tuple[str, ...], so: str) -> Text:
    """The line that names the jobs whose ways the time limit left unasked (`cut_short`), and what follows (`so`)."""
    return Text(f"the time limit cut working out the jobs' ways short: {named_jobs(list(cut_short))} got none (the "
                f"jobs of more priority are asked first), {so}", style="yellow")


def _unproven_warnings(wall_clock_stopped: tuple[str, ...], host_rounded: tuple[str, ...], undecided_ways: int,
                       rounded_so: str, answer: str, names: OptionNames) -> list[Text]:
    """The steps the wall clock stopped, the pools whose host memory was rounded up (then `rounded_so`), and the
    jobs' ways that ran out of time, which leave the `answer` (``placement``) not proven best."""
    warnings = []
    if wall_clock_stopped:
        warnings.append(Text(wall_clock_stopped_words(wall_clock_stopped, names), style="yellow"))
    if host_rounded:
        warnings.append(Text(
            f"host memory of the jobs rounded up into classes in {', '.join(host_rounded)} (the ways to "
            f"fill a node were too many otherwise){rounded_so}", style="yellow"))
    if undecided_ways:
        warnings.append(Text(
            f"{counted(undecided_ways, 'question')} about the jobs' ways to run (a pool and a GPU count each) "
            f"ran out of time ({names.time_limit}): those ways were left out or may not have their best plans, so the "
            f"{answer} is not proven best",
            style="yellow"))
    return warnings


def _no_rollout_gpus_given(placements: tuple[Placement, ...], fleet: Fleet, names: OptionNames) -> list[Text]:
    """The note on the placed jobs that give no rollout_gpus (`no_rollout_gpus_note`), where any do; not on a DPO
    job's, whose mode train is what Trinity trains DPO on a dataset in (it refuses mode both), so there is nothing to
    give."""
    ungiven = {job.name for job in fleet.jobs if not job.rollout_gpus_given and not job.dpo}
    if unasked := [placement.job for placement in placements if placement.job in ungiven]:
        return [Text(f"note: {named_jobs(unasked)}: {no_rollout_gpus_note(names)}", style="yellow")]
    return []


def _offloaded_despite_priority(placements: tuple[Placement, ...], fleet: Fleet) -> list[Text]:
    """The note on the placed jobs whose plans take Offload, the slowest setting, beside a placed job of less priority
    whose plan does not: priority decides which jobs are placed, and nothing of their plans (docs/cluster.md's
    Objectives), which the tables, showing no priority, do not say."""
    priority = {job.name: job.priority for job in fleet.jobs}
    least_resident = min((priority[placement.job] for placement in placements if not placement.plan.offload),
                         default=None)
    offloaded = [f"{placement.job} (priority {priority[placement.job]})" for placement in placements
                 if placement.plan.offload and least_resident is not None and priority[placement.job] > least_resident]
    if not offloaded:
        return []
    runs = "runs" if len(offloaded) == 1 else "run"
    return [Text(f"note: {named_jobs(offloaded)} {runs} with Offload beside jobs of less priority without it: priority "
                 "decides which jobs are placed, not their plans (length and cost weigh every placed job alike)",
                 style="yellow")]


def _marked_required(required: tuple[str, ...], fleet: Fleet) -> frozenset[str]:
    """The jobs the pools' tables mark required: `required`'s (`ClusterResult.required`, `PurchaseResult.required`),
    unless that is every job of the fleet (every placement then places them all: the marks would tell nothing)."""
    return frozenset(required) if len(required) < len(fleet.jobs) else frozenset()


def _move_reasons(placements: tuple[Placement, ...], fleet: Fleet) -> list[Text]:
    """Where each job that runs now and moves (``--current``) runs now and why it moves, as its config's ``# now:``
    line says it (`moving_words`: a line per job, their places differ), then what a job that stays on its own
    settings says, a line per reason with the jobs it is given for (`_current_reasons`)."""
    said = [(current, reason, placement.job) for placement in placements
            for current, reason in (("moves", _moving_words(placement, fleet)), ("stays", placement.stay_reason))]
    return _current_reasons(sorted(said, key=lambda given: given[0] != "moves"))


def _moving_words(placement: Placement, fleet: Fleet) -> str | None:
    """Where `placement`'s job runs now and why it moves (`moving_words`, its pool's nodes as `fleet` gives them; a
    placement read from JSON made before ``moved_from`` says why alone, as its config's ``# now:`` line); None where
    it does not move."""
    if placement.move_reason is None:
        return None
    from solver.trinity import moved_from_words, moving_words  # solver.trinity: loaded only where a job moves

    return moving_words(moved_from_words(placement.moved_from, fleet), placement.move_reason)


def _current_reasons(said: Iterable[tuple[str, str | None, str]]) -> list[Text]:
    """A line per (current, reason) of `said`'s (current, reason, job) triples, in their order, with the jobs it is
    given for: ``stops: JOB: WORDS``; for several, ``stops: a, b, each: WORDS``, as the words say it of one job (``where
    it runs``); a reason None says nothing."""
    jobs: dict[tuple[str, str], list[str]] = {}
    for current, reason, job in said:
        if reason is not None:
            jobs.setdefault((current, reason), []).append(job)
    return [Text(f"{current}: {named_jobs(given)}{', each' if len(given) > 1 else ''}: {reason}")
            for (current, reason), given in jobs.items()]


def _placed_cautions(placements: tuple[Placement, ...]) -> list[Text]:
    """The placed plans' cautions (`cluster_view`'s), each once, with the jobs it is about."""
    cautioned: dict[str, list[str]] = {}
    for placement in placements:
        for caution in placement.plan.cautions:
            cautioned.setdefault(caution, []).append(placement.job)
    cautions = []
    for caution, jobs in cautioned.items():
        cautions.append(Text(f"caution: {named_jobs(jobs)}: {caution}", style="yellow"))
    return cautions


def _priority_within_reach(result: ClusterResult, fleet: Fleet) -> str:
    """The fleet's total priority, in words (``of 17``), and where some jobs have no way to run in any pool
    (`ClusterResult.no_way_to_run`), the most a placement can reach without them (``of 17, or 7 without the job
    that has no way to run``)."""
    total = sum(job.priority for job in fleet.jobs)
    wayless = set(result.no_way_to_run)
    if not wayless:
        return f"of {total}"
    reachable = sum(job.priority for job in fleet.jobs if job.name not in wayless)
    jobs = "the job that has" if len(wayless) == 1 else f"the {len(wayless)} jobs that have"
    return f"of {total}, or {reachable} without {jobs} no way to run"


def _unplaced_view(unplaced: tuple[Unplaced, ...], title: str) -> Table:
    """The `unplaced` jobs under `title`, a row per reason with the jobs it is given for (in the order of their first
    job), in its words for several jobs where it is given for more than one; where a job trains LoRA, builds no
    reference model, trains a PPO critic or DPO (`Unplaced.lora_rank` given), a row per reason and what its jobs
    train (`training_words`, as the placed jobs' tables say it), and where a job names its own Trinity release
    (`Unplaced.trinity_version`), a row per reason, training and release, with each job's own (`UNPLACED_RELEASE_NOTE`):
    the reason said on the first of its rows alone, and a line under the last where it has several."""
    training = any(job.lora_rank is not None for job in unplaced)
    releases = any(job.trinity_version is not None for job in unplaced)
    by_reason: dict[str, dict[tuple[str, str], list[Unplaced]]] = {}
    for job in unplaced:
        trains = training_words(job.lora_rank or 0, job.reference_model, job.critic, bool(job.dpo),
                                job.lora_target_modules, job.lora_exclude_modules) if training else ""
        by_reason.setdefault(job.reason, {}).setdefault((trains, job.trinity_version or ""), []).append(job)
    notes = ([training_note(any(job.critic for job in unplaced), any(job.dpo for job in unplaced),
                            any(not all_linear(job.lora_target_modules) for job in unplaced),
                            any(job.lora_exclude_modules for job in unplaced))] if training else []) + (
        [UNPLACED_RELEASE_NOTE] if releases else [])
    view = Table(title=title, title_justify="left", caption_justify="left", caption="\n".join(notes) or None)
    longest = max(len(job.job) for job in unplaced)  # a name is never cut: folded where the room is short
    rows = sum(len(by_training) for by_training in by_reason.values())
    view.add_column("jobs" if rows < len(unplaced) else "job", max_width=max(UNPLACED_JOBS_WIDTH, longest + 1),
                    overflow="fold")
    if training:
        view.add_column("training")
    if releases:
        view.add_column("Trinity")
    view.add_column("reason", overflow="fold")  # a word wider than the room breaks, never cut to "…"
    for reason, by_training in by_reason.items():
        given = [job for jobs in by_training.values() for job in jobs]
        said = (len(given) > 1 and given[0].reason_for_several) or reason
        for row, ((trains, release), jobs) in enumerate(by_training.items()):
            view.add_row(", ".join(job.job + (" (stops)" if job.current else "") for job in jobs),
                         *((trains,) if training else ()), *((release,) if releases else ()), "" if row else said,
                         end_section=len(by_training) > 1 and row == len(by_training) - 1)
    return view


def purchase_note(names: OptionNames) -> str:
    """The line under what to buy: the placement it makes possible follows, and how to get its configs (as `names`
    name what does)."""
    return (f"the placement with them: set each pool's nodes: to its 'nodes then' and run {names.placer} "
            f"({names.placement_writer} writes the configs)")


def own_nodes_note(names: OptionNames) -> str:
    """The line above the placement where nothing is bought (what writes its configs as `names` name it)."""
    return f"the placement ({names.placement_configs} writes the configs)"


def purchase_view(result: PurchaseResult, fleet: Fleet, names: OptionNames = COMMAND_OPTIONS) -> Group:
    """What `solve cluster --buy` found: its status, the nodes to add to each pool (and the pool's nodes then), what
    leaves it unproven, the placement with them (a table per pool, as a placement's), the jobs not required that it
    leaves out, and the jobs that no number of nodes would place; the view's own lines name options as `names` do."""
    renderables: list[Any] = [_purchase_status(result, fleet, names)]
    if result.memory_model_source:
        renderables.append(Text(f"memory model: {result.memory_model_source}"))
    if result.ways_cut_short:
        raise_limit = _raise_limit(result.ways_time_limit_s, names, said=result.searched is False)
        renderables.append(_ways_cut_short_warning(result.ways_cut_short, f"so no purchase places them{raise_limit}"))
    renderables += _unproven_warnings(result.wall_clock_stopped, result.host_rounded, result.undecided_ways, "",
                                      "purchase", names)
    if result.gpus:
        view = Table(title="what to buy", title_justify="left")
        for header in ("pool", "GPU", "nodes", "buy", "GPUs bought", "nodes then"):
            view.add_column(header, justify="left" if header in ("pool", "GPU") else "right")
        for pool, bought in zip(fleet.pools, result.pools, strict=True):
            view.add_row(pool.name, pool.gpu, str(pool.nodes),
                         f"+{bought.nodes_bought}" if bought.nodes_bought else "0", str(bought.gpus_bought),
                         str(bought.nodes_after))
        renderables.append(view)
    if result.placements:
        renderables += _placement_with_purchase(result, fleet, names)
    if result.fits_nowhere:
        renderables.append(_unplaced_view(result.fits_nowhere, f"jobs no purchase places: {len(result.fits_nowhere)} "
                                                               f"of {len(fleet.jobs)} (no way to run on any pool's "
                                                               "nodes, however many)"))
    return Group(*renderables)


def _placement_with_purchase(result: PurchaseResult, fleet: Fleet, names: OptionNames) -> list[Any]:
    """The placement on the pools with the nodes bought: how to get it, whether it is proven the best the purchase
    allows, a table per pool (its title with the nodes bought), the cost note and cautions, the jobs left out."""
    lines: list[Any] = [Text(purchase_note(names) if result.gpus else own_nodes_note(names), style="dim")]
    if not result.placement_proven:
        lines.append(Text("placement not proven the best the purchase allows (the other jobs' priority, length, cost): "
                          f"the time limit stopped it (raise {names.time_limit})", style="yellow"))
    required = _marked_required(result.required, fleet)
    for pool, bought in zip(fleet.pools, result.pools, strict=True):
        after = pool.model_copy(update={"nodes": bought.nodes_after})
        use = PoolUse(pool=pool.name, nodes=bought.nodes_after, gpus=bought.nodes_after * pool.gpus_per_node,
                      down=bought.down, nodes_used=bought.nodes_used, gpus_used=bought.gpus_used,
                      host_ram_gb=bought.host_ram_gb, fullest_node_host_gb=bought.fullest_node_host_gb)
        lines.append(_pool_view(after, use, [p for p in result.placements if p.pool == pool.name], required, names,
                                _named_releases(result.placements, fleet)))
    lines += [Text(COST_NOTE, style="dim"), *_offloaded_despite_priority(result.placements, fleet),
              *_placed_cautions(result.placements),
              *_no_rollout_gpus_given(result.placements, fleet, names), *_solve_best_unasked(result, names)]
    if result.left_out:  # every name: the only place the text lists them (an unplaced table names each job too)
        pools = "with the nodes bought" if result.gpus else "as they are"
        beside = ("the jobs placed (the required ones, then the most priority of the others)"
                  if any(placement.job not in result.required for placement in result.placements)
                  else "the required jobs")
        every_job = (f"; {names.required}{f'={[EVERY_JOB]}' if names.keywords else f' {EVERY_JOB}'} buys for "
                     "every job" if fleet.all_names_every_job else "")
        lines.append(Text(f"left out (not required): {', '.join(result.left_out)}: no room "
                          f"{'' if result.placement_proven else 'found '}for "
                          f"{it_or_them(len(result.left_out))} beside {beside} on the pools {pools}{every_job}",
                          style="yellow"))
    return lines


def _purchase_status(result: PurchaseResult, fleet: Fleet, names: OptionNames) -> Text:
    """The status line of what to buy: the GPUs and nodes, and how far they are proven the fewest (the time limit
    named as `names` do)."""
    if result.gpus is None:
        searched = ("interrupted" if result.interrupted else "time ran out") + " before the search found a purchase"
        why = {"infeasible": "no job has a way to run on any pool's nodes, so nothing to buy places one",
               "unknown": (f"{searched} that places every job" if result.searched is not False else
                           "time ran out working out the jobs' ways to run, so the search for a purchase never ran")
               + f" (raise {names.time_limit})"}
        return Text(f"status: {result.status}: {why.get(result.status, '')}", style="bold red")
    nowhere = {job.job for job in result.fits_nowhere}
    stuck = ""
    if len(result.required) < len(fleet.jobs):
        # Every name (not named_jobs' first few): the jobs a --required or the file's marks chose, to check; those
        # no number of nodes runs named apart, since nothing places them.
        placed = [job for job in result.required if job not in nowhere]
        if unplaceable := [job for job in result.required if job in nowhere]:
            stuck = (f"no number of nodes places the required {'job' if len(unplaceable) == 1 else 'jobs'} "
                     f"{', '.join(unplaceable)} (below)")
        jobs = f"the required {'job' if len(placed) == 1 else 'jobs'} ({', '.join(placed)})" if placed else ""
    else:
        jobs = "every job" if not nowhere else "every job with a way to run"
    if not result.gpus:
        said = f"the pools as they are place {jobs}{'; ' if jobs and stuck else ''}{stuck}" if jobs else stuck
        return Text(f"status: {result.status}; nothing to buy: {said}", style="bold")
    bound = ("proven the fewest" if result.status == "optimal" else
             f"proven bound {counted(result.bound, 'GPU')}" if result.bound is not None else "no bound proven")
    return Text(f"status: {result.status}; to place {jobs}, buy {counted(result.gpus, 'GPU')} "
                f"({counted(result.nodes or 0, 'node')}), {bound}{_fewest_gpus_words(result)}"
                f"{_bought_for_estimates_words(result, names)}{'; ' if stuck else ''}{stuck}", style="bold")


def _bought_for_estimates_words(result: PurchaseResult, names: OptionNames) -> str:
    """How many of the GPUs bought run the memory model's estimated plans, and for which jobs
    (`PurchaseResult.gpus_bought_for_estimates`), with what buys for the tables' plans alone, after ``; ``: the part of
    the purchase that rests on estimates, said where the purchase is read; "" where none does."""
    if not (gpus := result.gpus_bought_for_estimates):
        return ""
    jobs = ", ".join(placement.job + (" (extrapolated)" if placement.plan.beyond_calibration else "")
                     for placement, _ in result.estimated_on_bought)
    bought = (f"{gpus} of the {result.gpus} GPUs bought" if gpus < (result.gpus or 0)
              else f"the {counted(gpus, 'GPU')} bought")
    return (f"; {bought} {'runs' if gpus == 1 else 'run'} the memory model's estimated plans, not the tables': {jobs}; "
            f"{names.no_estimate} buys for the tables' plans alone")


def _fewest_gpus_words(result: PurchaseResult) -> str:
    """The figure behind a purchase's bound, in words: the GPUs the jobs it must place take at their fewest against
    the fleet's (`PurchaseResult.fewest_gpus`, `fleet_gpus`), and what the purchase buys past the difference, for the
    pools the jobs may use and their layouts to pack into the nodes; "" where JSON made before them lacks them."""
    need, has, gpus = result.fewest_gpus, result.fleet_gpus, result.gpus or 0
    if need is None or has is None:
        return ""
    packing = gpus - max(need - has, 0)
    why = "for the pools they may use and their layouts (GPUs and host memory) to pack into the nodes"
    any_down = any(pool.down for pool in result.pools)
    if need <= has:
        fleet = fleet_gpus_words(has, any_down, noun=True)
        return f" (at their fewest they take {need} of {fleet}; the {gpus} bought {'is' if gpus == 1 else 'are'} {why})"
    more = f"at their fewest they take {counted(need, 'GPU')}, {need - has} more than {fleet_gpus_words(has, any_down)}"
    return f" ({more}; the other {packing} bought {'is' if packing == 1 else 'are'} {why})" if packing else f" ({more})"


def purchase_json(result: PurchaseResult) -> str:
    """What to buy as JSON: status, GPUs and nodes bought, their bound, per pool the nodes to buy, and the jobs no
    purchase places."""
    return json.dumps(result.model_dump(mode="json"), indent=2)
