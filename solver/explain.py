"""Explanations from the solver's own reasoning: why this plan and not a cheaper one, why no plan.

The planning model is built with every rule guarded by its own literal (see `solver.model.RULES`).
An alternative is put to it through assumptions that fix some plan variables; CP-SAT then says whether
one rule on its own excludes it, or, for a query with no plan at all, which rules together do (its
infeasibility core, shrunk until each rule in it is needed). Alternatives are put coarsest first: a GPU
count (budget, table length), then an SP degree on it (the divisibility rules), then each setting
(pins, documented cells), so that one answer covers every setting it excludes. The words for each rule
come from the tables (the cell in the way, where a table ends) and the model's shape.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from time import monotonic
from typing import NamedTuple

from ortools.sat.python import cp_model

from solver.memory import GRID, Breakdown, breakdown, estimated_counts, estimates_setting, unestimated_count_words
from solver.model import RULES, Combination, PlanningData, SolverStatus, build_model, host_need, prepare
from solver.query import Query, token_cap_source
from solver.results import AlternativeName, Answer, Plan, Reason, ReasonCode
from solver.rules import (
    DPO_PAIR_BATCH_WORDS,
    SP_NODE_RULE_OWNER,
    failed_settings,
    least_token_budget,
    most_estimated_tokens,
    no_rollout_layout_words,
    one_sequence_per_micro_batch,
    padded_micro_batch_words,
    refuting_cell,
    smaller_card_note,
    smaller_card_words,
    sp_degrees,
    table_words,
    tried_settings,
    whole_nodes_violation,
)
from solver.solve import (
    alternative_plan,
    answer_for,
    checked,
    deadline_passed,
    deadline_words,
    grid_words,
    lowered_fewer,
    more_gpus_changes,
    new_solver,
    node_caps_sp,
    raised_cap_words,
    within_deadline,
)
from solver.tables import (
    HOST_HELD_CRITICS,
    LOADING_ALONE_NEED,
    LOADING_HOST_NEED,
    NO_CRITIC,
    Catalog,
    Model,
    Setting,
    and_joined,
    consecutive_runs,
    counted,
    host_need_detail,
)

GPU_RULES = ("budget", "whole_nodes", "rollout_layout", "table_rows")
SP_RULES = ("sp_divides_gpus", "sp_divides_heads", "sp_kv_heads", "sp_attention", "sp_within_node", "batch_divides",
            "token_cap")
SETTING_RULES = ("pin_sp", "pin_env", "pin_offload", "host_ram", "evidence")


class _Core(NamedTuple):
    """Rules that together exclude every plan with some values, from CP-SAT's infeasibility core."""

    rules: tuple[str, ...]
    minimal: bool
    """Whether each rule was shown to be needed; False where the deadline left a question of that undecided (the
    rules still exclude those plans together, but fewer of them may too)."""


class _Prober:
    """Puts alternatives to the guarded model: which rule, on its own, excludes them?

    Plan variables are fixed through assumptions on literals made once, so every question is one more
    solve of the same model. All questions share one deadline, the query's time limit from now (or the call's
    deadline, `within_deadline`, where that comes sooner); a question it leaves undecided counts as not excluding,
    and is counted in `undecided`.
    """

    def __init__(self, data: PlanningData, query: Query) -> None:
        self.deadline = monotonic() + within_deadline(query.time_limit_s)
        self.gpu = data.gpu
        self.undecided = 0
        # Feasibility is all that is asked: no ranks table, which presolve expanded where the evidence rule is off,
        # a hundred times the cost of such a question with it (0.4 s on up to 64 A10s). A constant objective keeps
        # CP-SAT taking the assumptions as fixed, as the ranks' objective did: without one it searches each question
        # for a small core of them, an explanation about 40 times slower (`binding_rules` shrinks the core itself).
        self.model, self.plan, self.guards = build_model(data, query, guarded=True, ranked=False)
        self.model.minimize(0)
        self.solver = new_solver(query)
        self.solver.parameters.stop_after_first_solution = True  # feasibility is all that is asked
        # Unlike a planning solve, proving that no plan passes the other rules pays for presolve: with many
        # GPU counts (up to 64) it made an explanation three to twenty times faster, and never slower.
        self.solver.parameters.cp_model_presolve = True
        # One round of it proves as much here, and most of a question that a plan passes went to further rounds.
        self.solver.parameters.max_presolve_iterations = 1
        self._first_rules: dict[tuple[object, ...], str | None] = {}
        self._only_rules: dict[tuple[str, ...], list[cp_model.LiteralT]] = {}
        self.rule_of = {literal.index: rule for rule, literal in self.guards.items()}
        pinned = {"pin_sp": query.sp, "pin_env": query.env, "pin_offload": query.offload,
                  "sp_within_node": query.node_gpus, "host_ram": query.host_ram_gb,
                  "rollout_layout": query.rollout_gpus or None,  # as build_model adds them: not for 0 rollout GPUs
                  "batch_divides": query.train_batch_size, "token_cap": query.token_budget_cap,
                  "sp_attention": data.shape.ulysses_unreached}  # as add_parallelism_rules adds it
        self.active = {rule for rule in RULES if pinned.get(rule, True) is not None}
        if query.max_model_len is not None:
            self.active.discard("table_rows")
        lengths = data.lengths if query.max_model_len is None else ()
        self.fixes = {
            name: self._value_literals(variable, values)
            for name, variable, values in (
                ("gpus", self.plan.gpus, data.counts),
                ("env", self.plan.env, (0, 1)),
                ("offload", self.plan.offload, (0, 1)),
                ("sp", self.plan.sp, data.sp_degrees),
                ("length", self.plan.max_model_len, lengths),
            )
        }

    def _value_literals(self, variable: cp_model.IntVar, values: Iterable[int]) -> dict[int, cp_model.IntVar]:
        literals = {}
        for value in values:
            literals[value] = self.model.new_bool_var(f"fix_{variable.name}_{value}")
            self.model.add(variable == value).only_enforce_if(literals[value])
        return literals

    def remaining_s(self) -> float:
        """Seconds left before the deadline (at least a millisecond, CP-SAT's smallest useful limit)."""
        return max(self.deadline - monotonic(), 0.001)

    def _status(self, assumptions: list[cp_model.LiteralT]) -> SolverStatus:
        """CP-SAT's answer under `assumptions`; UNKNOWN at once once the deadline has passed (setting a question's
        assumptions costs more than its solve then: an explanation's thousands of them took seconds past a deadline)."""
        status = self._solved(assumptions) if self.deadline > monotonic() else cp_model.UNKNOWN
        self.undecided += status == cp_model.UNKNOWN
        return status

    def _solved(self, assumptions: list[cp_model.LiteralT]) -> SolverStatus:
        self.model.clear_assumptions()
        self.model.add_assumptions(assumptions)
        self.solver.parameters.max_time_in_seconds = self.remaining_s()
        return checked(self.solver, self.model, self.solver.solve(self.model))

    def _infeasible(self, assumptions: list[cp_model.LiteralT]) -> bool:
        return self._status(assumptions) == cp_model.INFEASIBLE

    def _fixing(self, **values: int | None) -> list[cp_model.LiteralT]:
        return [self.fixes[name][value] for name, value in values.items() if value is not None]

    def first_rule(self, rules: tuple[str, ...], **values: int | None) -> str | None:
        """The first of `rules` (those in force) that on its own excludes every plan with these values."""
        fixing = self._fixing(**values)
        active = [rule for rule in rules if rule in self.active]
        if len(active) > 1 and not self._infeasible(fixing + self._only(*active)):
            return None  # a plan passes them all together, so each on its own (one question, not one a rule)
        return next((rule for rule in active if self._infeasible(fixing + self._only(rule))), None)

    def _only(self, *rules: str) -> list[cp_model.LiteralT]:
        """Assumptions that hold `rules` and no other (the others off, as they may be: where a plan passes, CP-SAT
        then finds one at once), made once a prober for each `rules`."""
        if rules not in self._only_rules:
            self._only_rules[rules] = [literal if rule in rules else ~literal for rule, literal in self.guards.items()]
        return self._only_rules[rules]

    def binding_rules(self, **values: int | None) -> _Core | None:
        """A smallest set of rules that together exclude every plan with these values (none fixed: the
        query itself), from CP-SAT's infeasibility core, in `RULES` order (not `minimal` where the deadline cut
        the shrinking short); no rules when a plan exists, None when the deadline leaves it undecided."""
        fixing = self._fixing(**values)
        status = self._status(fixing + list(self.guards.values()))
        if status != cp_model.INFEASIBLE:
            return None if status == cp_model.UNKNOWN else _Core(rules=(), minimal=True)
        undecided = self.undecided
        # CP-SAT's core may hold a rule not in force (its literal guards nothing: no --host-ram, no pin), which the
        # loop below drops only where its solve is decided in time; such a rule is never part of the answer.
        core = {self.rule_of[index] for index in self.solver.sufficient_assumptions_for_infeasibility()
                if index in self.rule_of and self.rule_of[index] in self.active}
        for rule in RULES:  # drop every rule the others do not need
            if rule in core and self._infeasible(fixing + [self.guards[r] for r in core - {rule}]):
                core.discard(rule)
        return _Core(rules=tuple(rule for rule in RULES if rule in core), minimal=self.undecided == undecided)

    def classify(self, candidates: list[Combination], length: int | None) -> list[tuple[Combination, str]]:
        """The rule that excludes each candidate (`excluding_rule`), by GPU count, then SP degree."""
        return [(c, rule) for c in sorted(candidates, key=count_then_degree)
                if (rule := self.excluding_rule(c, length))]

    def excluding_rule(self, combination: Combination, length: int | None) -> str | None:
        """The rule that excludes `combination` at `length`, None where none is known to: its GPU count's, else its
        SP degree's (each asked once a prober, so that one answer covers every setting it excludes), else its
        setting's."""
        n, env, offload, sp = combination
        rule = self._first_rule_once(GPU_RULES, gpus=n, length=length) or self._first_rule_once(
            SP_RULES, gpus=n, sp=sp, length=length)
        if rule:
            return rule
        values = {"gpus": n, "env": env, "offload": offload, "sp": sp, "length": length}
        return self.first_rule(SETTING_RULES, **values) or self._needed_rule(**values)

    def evidence_excludes(self, combination: Combination, length: int | None) -> bool:
        """Whether `excluding_rule` puts `combination` down to the evidence, its SP degree's rules asked before its GPU
        count's (where either excludes it, the evidence does not; an SP question costs a fraction of a count's)."""
        n, _, _, sp = combination
        return (self._first_rule_once(SP_RULES, gpus=n, sp=sp, length=length) is None
                and self.excluding_rule(combination, length) == "evidence")

    def _first_rule_once(self, rules: tuple[str, ...], **values: int | None) -> str | None:
        """`first_rule`, asked of CP-SAT once a prober for these rules and values."""
        key = (rules, *values.items())
        if key not in self._first_rules:
            self._first_rules[key] = self.first_rule(rules, **values)
        return self._first_rules[key]

    def sp_excluded(self, gpus: int, length: int | None) -> list[tuple[Combination, str]]:
        """The SP degrees on `gpus` GPUs that an SP rule of the model's (`SP_RULES`) excludes on its own, each as a
        combination with the first rule that does (the settings do not matter to these rules): SP=1 only where the
        batch rule or the token budget cap does."""
        excluded = []
        for sp in range(1, gpus + 1):
            if rule := self.first_rule(SP_RULES, gpus=gpus, sp=sp, length=length):
                excluded.append(((gpus, 0, 0, sp), rule))
        return excluded

    def _needed_rule(self, **values: int | None) -> str | None:
        """The first rule of a minimal core that excludes the plans with these values (None where none is known
        to be needed: a plan passes, or the deadline left it undecided)."""
        core = self.binding_rules(**values)
        return core.rules[0] if core is not None and core.minimal and core.rules else None


def explain(catalog: Catalog, query: Query, answer: Answer) -> tuple[Reason, ...]:
    """Why `answer` (for one GPU type) is what it is, as a list of rules and what they mean here.

    With an open budget for the fewest GPUs (no --gpus) the plan's own GPU count bounds the search: every plan that
    ranks before it has no more GPUs (not so for the fewest GPU-hours, whose plans before it may have more)."""
    scope = query.fewest_gpus_scope
    if query.open_budget and answer.plans and query.objective == "min_gpus":
        query = query.model_copy(update={"budget_gpus": answer.plans[0].gpus, "open_budget": False})
    if answer.status == "unknown":  # the deadline as it was when the answer's search ended (not as it is now)
        return (Reason(rule="undecided", detail=(
            f"the search ran out of time ({query.time_limit_given}{deadline_words(answer.deadline_passed)}) before it "
            f"found a plan or proved that none exists: nothing is known to rule one out; "
            f"{query.option_names.longer_limit(answer.deadline_passed)} decides it")),)
    data = prepare(catalog, answer.gpu, query)
    words = _Words(data, query, catalog)
    if data.holds_no_plan(query):
        return words.nothing_held()
    prober = _Prober(data, query)
    if answer.plans:
        reasons = _why_this_plan(prober, words, data, query, answer.plans[0], scope)
        reasons += tuple(_lowered_fewer_reasons(catalog, prober, words, query, answer))
    else:
        reasons = _why_no_plan(catalog, prober, words, data, query, answer)
    if prober.undecided:
        reasons += (Reason(rule="incomplete", detail=(
            f"{prober.undecided} of the questions behind this explanation ran out of time "
            f"({query.time_limit_given} for the whole explanation{deadline_words()}): "
            f"what they would have shown is missing above; {query.option_names.longer_limit(deadline_passed())} "
            "shows it")),)
    return reasons


def _why_this_plan(prober: _Prober, words: _Words, data: PlanningData, query: Query, best: Plan,
                   scope: str) -> tuple[Reason, ...]:
    """Why `best` is the answer: what the objective picked (the fewest GPUs of those `scope` says), the rule each
    combination ranked above it fails, and, maximising the length, why nothing reaches the next length."""
    best_rank = next(entry.rank for entry in data.ranks
                     if entry.combination == (best.gpus, int(best.env), int(best.offload), best.sp))
    cheaper = [entry.combination for entry in data.ranks if entry.rank < best_rank]
    length = best.max_model_len if query.objective == "max_len" else None
    chosen = f"{best.setting.label} on {words.gpus(best.gpus)}{best.lowered_words}"
    if query.objective == "max_len":
        choice = (f"{counted(best.max_model_len, 'token')} is the longest length with a plan {query.within_budget}"
                  f"{grid_words(best)}, and {chosen} is the cheapest plan there")
    elif query.objective == "min_gpus":
        choice = (f"{chosen} is the plan with the fewest GPUs ({scope}), then the cheapest, at {best.max_model_len} "
                  "tokens")
    elif query.objective == "min_gpu_hours":
        choice = (f"{chosen} is the plan with the fewest GPU-hours, GPUs x cost ({scope}), then the fewest GPUs, at "
                  f"{best.max_model_len} tokens")
    else:
        choice = f"{chosen} is the cheapest plan at {counted(best.max_model_len, 'token')} {query.within_budget}"
    # Counts within the budget that the planner never weighs (more GPUs would cost less): the whole-nodes rule's too.
    unweighed = _not_whole_nodes(data, query, range(best.gpus + 1, query.budget_gpus + 1))
    ruled_out = [combination for combination in cheaper
                 if (combination[0] != query.budget_gpus if query.exact else combination[0] > query.budget_gpus)]
    reasons = [Reason(rule="choice", detail=f"{choice}; {_ranked_before(cheaper, unweighed, ruled_out, data.counts)}")]
    reasons += words.group(prober.classify(cheaper, length) + unweighed, best.max_model_len)
    if query.objective == "max_len":
        longer = [length for length in data.lengths if length > best.max_model_len]
        if not longer:
            reasons.append(Reason(rule="longest_documented", detail=(
                f"nothing for {data.model} on {data.gpu} {query.within_budget}, in {query.evidence_sources}, "
                f"goes beyond {counted(best.max_model_len, 'token')}{grid_words(best)}")))
        else:
            everything = [entry.combination for entry in data.ranks]
            reasons.append(Reason(rule="longer", detail="no plan reaches the next length, "
                                                        f"{counted(longer[0], 'token')}:"))
            unweighed = _not_whole_nodes(data, query, range(1, query.budget_gpus + 1))
            reasons += words.group(prober.classify(everything, longer[0]) + unweighed, longer[0])
    return tuple(reasons)


def _ranked_before(cheaper: list[Combination], unweighed: list[tuple[Combination, str]],
                   ruled_out: list[Combination], counts: tuple[int, ...]) -> str:
    """The `choice` line's words on what would rank before the plan: how many of the combinations the planner weighs
    (`cheaper`) within the budget, on which GPU counts (a longest length's are only those that cost less there: fewer
    GPUs may come under what stops the next length alone), then how many of them on counts the budget rules out
    (`ruled_out`, more GPUs than it, or another count than --exact's), with the GPU counts it weighs (`counts`: the
    tables' and those it estimates, up to the budget; a count past the budget that none of them is goes unnamed), and
    the counts it never weighs (`unweighed`, `_not_whole_nodes`)."""
    of = "of GPU count, Env, Offload and SP"
    within = [combination for combination in cheaper if combination not in ruled_out]
    never = counted([combination[0] for combination, _ in unweighed], "GPU", runs) if unweighed else ""
    past = counted(sorted({combination[0] for combination in ruled_out}), "GPU", runs) if ruled_out else ""
    those_past = (f"{'the one' if len(ruled_out) == 1 else f'the {len(ruled_out)}'} on {past} (of the counts the "
                  f"planner weighs here: {condensed_runs(list(counts))})")
    qualified = f"{of} within the budget" if ruled_out else of
    if not within:
        weighed = " that the planner weighs" if never else ""
        would = [words for words, given in (
            (f"those on {never} would, and fail a rule", never),
            (f"{those_past} would, and the budget rules {'it' if len(ruled_out) == 1 else 'them'} out", past))
            if given]
        return f"no combination {qualified}{weighed} ranks before it{''.join(f'; {words}' for words in would)}" + (
            ":" if would else "")
    also = [words for words, given in ((f"those on {never}, which the planner does not weigh", never),
                                       (f"{those_past}, which the budget rules out", past)) if given]
    also_words = f", as do {' and '.join(also)}" if also else ""
    on = counted(sorted({combination[0] for combination in within}), "GPU", runs)
    return (f"the one combination {qualified} that would rank before it (on {on}) fails a rule{also_words}:"
            if len(within) == 1 else
            f"each of the {len(within)} combinations {qualified} that would rank before it (on {on}) fails a "
            f"rule{also_words}:")


def _not_whole_nodes(data: PlanningData, query: Query, counts: range) -> list[tuple[Combination, str]]:
    """The GPU counts of `counts` that the planner never weighs because they span nodes but are not whole nodes (none
    under --exact, whose count is the query's), as the whole-nodes rule's exclusions."""
    return [((n, 0, 0, 1), "whole_nodes") for n in counts
            if n not in data.counts and whole_nodes_violation(n, query.node_gpus) and not query.exact]


def _lowered_fewer_reasons(catalog: Catalog, prober: _Prober, words: _Words, query: Query,
                           answer: Answer) -> list[Reason]:
    """Under --minimize gpus at Trinity's default token budget, where --token-budget auto may lower it: that the rules
    above hold at that budget, and the plan on fewer GPUs a lowered one gives (the answer's `token_budget_auto`, else
    `lowered_fewer` solved within the explanation's deadline) with the cautions it carries that the best plan does
    not (`Plan.cautions_beside`), or that none does; none where the question does not
    arise, or the deadline left it undecided (counted in `undecided`)."""
    best, asked = answer.plans[0], query.max_model_len or 0
    fewer = answer.token_budget_auto
    if fewer is None:
        timed = query.model_copy(update={"time_limit_s": prober.remaining_s()})
        found = lowered_fewer(catalog, timed, best, answer.gpu)
        if found is None:
            return []
        fewer, decided = found
        prober.undecided += not decided
        if fewer is None and not decided:
            return []
    held = ("the rules above hold at Trinity's default token budget, ceil(2 x length / SP) tokens per GPU, which the "
            "tables measure")
    if fewer is None:
        return [Reason(rule="lower_token_budget", detail=(
            f"{held}; a budget lowered by {query.option_names.token_budget_auto} trains {counted(asked, 'token')} on "
            "no fewer than "
            f"{words.gpus(best.gpus)} either"))]
    return [Reason(rule="lower_token_budget", detail=(
        f"{held}; {query.option_names.token_budget_auto} trains {counted(asked, 'token')} on {words.gpus(fewer.gpus)}, "
        f"{best.gpus - fewer.gpus} fewer: {words.plan(fewer, best)}"))]


def _with_rollout_words(plan: Plan, asked: int) -> str:
    """The GPUs `plan` takes with the `asked` rollout GPUs, in words: its layout's rollout, which is more where the
    trainer takes whole nodes (`rollout_layout`)."""
    rollout = plan.rollout_gpus if plan.rollout_gpus is not None else asked
    if rollout == asked:
        return f" (with the {counted(asked, 'rollout GPU')}, {plan.gpus + rollout} in all)"
    return (f" (with {counted(rollout, 'rollout GPU')}, {plan.gpus + rollout} in all: {asked} asked, but a trainer on "
            "whole nodes leaves the rollout whole nodes)")


def _why_no_plan(
    catalog: Catalog, prober: _Prober, words: _Words, data: PlanningData, query: Query, answer: Answer
) -> tuple[Reason, ...]:
    """What stops the query, and the nearest plans: the answer's (its `nearest`, the longest plan within the
    budget and pins, and its `alternatives`, solved here where its reason did not), and with more GPUs, each with the
    cautions it carries (`_Words.plan`)."""
    shorter = answer.nearest

    def alternative(name: AlternativeName) -> Plan | None:
        found, decided = alternative_plan(catalog, query, answer, name, prober.remaining_s())
        prober.undecided += not decided
        return found

    core = prober.binding_rules()
    binding = core.rules if core is not None else None
    spread = whole_nodes_violation(query.budget_gpus, query.node_gpus, query.node_source) if query.exact else None
    limit: str | None
    if binding == ("budget",) and spread:  # the count asked for is not in the model at all: say why
        limit = f"no plan passes this rule: {spread}, which a trainer that spans nodes must use"
    else:
        limit = words.binding(core, lambda: _reach(catalog, prober, data, query),
                              lambda: _nearest_estimate(prober, words, data, query)) if core is not None else None
    reasons = [Reason(rule="limit", detail=limit) if limit is not None else Reason(rule="undecided", detail=(
        "which rules stop the query together was not decided in time"))]
    if query.exact and query.sp is None and query.budget_gpus in data.counts and "evidence" in (binding or ()):
        # Memory stops the count asked for: which SP degrees, that would spread the tokens wider, its rules leave out
        # (the evidence rule alone excludes them too, so a minimal core need not name them).
        reasons += words.group(prober.sp_excluded(query.budget_gpus, None), query.max_model_len or 0)
    if (query.exact and query.sp is not None and None not in (query.env, query.offload)
            and query.max_model_len is not None and query.budget_gpus in data.counts):
        # One combination asked for (a config's own settings, say): what the tables and the model say of it. On a
        # count the planner never weighs (not whole nodes, past the estimates' counts) the limit says why alone.
        combination = (query.budget_gpus, int(bool(query.env)), int(bool(query.offload)), query.sp)
        reasons += words.group(prober.classify([combination], None), query.max_model_len)  # the model fixes the length
    elif query.objective == "cheapest" and query.max_model_len is not None and "evidence" in (binding or ()):
        reasons += _dash_reasons(prober, words, data, query.budget_gpus, query.max_model_len)
    if query.objective != "max_len":
        if shorter:
            reasons += _shorter_reasons(words, query, shorter, data.shape)
        reasons += _more_gpus_reasons(catalog, prober, words, data, query)
        if lowered := alternative("token_budget_auto"):
            reasons.append(Reason(rule="lower_token_budget", detail=(
                f"{query.option_names.token_budget_auto} trains {counted(query.max_model_len or 0, 'token')} "
                f"{query.within_budget}: "
                f"{words.plan(lowered, None)}")))
        elif (shorter or answer.reason_code == ReasonCode.NOTHING_TRAINS) and (
                reach := alternative("token_budget_auto_longest")) and (
                reach.max_model_len > (shorter.max_model_len if shorter else 0)):  # as the answer's reason says
            reasons.append(Reason(rule="lower_token_budget", detail=(
                f"{query.option_names.token_budget_auto} reaches "
                f"{counted(reach.max_model_len, 'token')}{grid_words(reach)} "
                f"{query.within_budget}: {words.plan(reach, None)}")))
    if raised := answer.token_budget_cap_raised:  # as the answer's reason names it: no second search
        reasons.append(Reason(rule="raise_token_budget",
                              detail=f"{raised_cap_words(query, raised)}: {words.plan(raised, None)}"))
    if any(rule.startswith("pin_") for rule in binding or ()) and (free := alternative("without_pins")):
        reasons.append(Reason(rule="without_pins", detail=f"without {query.pin_flags}: {words.plan(free, None)}"))
    return tuple(reasons)


def _dash_reasons(prober: _Prober, words: _Words, data: PlanningData, budget: int, length: int) -> list[Reason]:
    """The document's own reason on each count within `budget` whose table says '-' at `length` (its row, or its last
    row where the length is past it): the `no_setting` line --maximize len gives, for the combinations there that the
    evidence rule excludes."""
    dashed = [entry.combination for entry in data.ranks if entry.combination[0] <= budget
              and (rows := words.rows(entry.combination[0]))
              and (entry.combination[0], next((row for row in rows if row >= length), rows[-1])) not in data.settings]
    return words.group([(combination, rule) for combination, rule in prober.classify(dashed, None)
                        if rule == "evidence"], length)


def _shorter_reasons(words: _Words, query: Query, shorter: Plan, model: Model) -> list[Reason]:
    """The longest length with a plan within the budget and pins (`shorter`, the answer's nearest), and what the
    prompt and response must then fit in (and what that is per GPU: `model`'s token budget, or what its micro-batch
    holds, `one_sequence_per_micro_batch`: `padded_micro_batch_words`)."""
    per_gpu = (padded_micro_batch_words(query.dpo) if one_sequence_per_micro_batch(model)
               else f"max_token_len_per_gpu = {shorter.max_token_len_per_gpu}")
    return [
        Reason(rule="shorter_length", detail=(
            f"{query.within_budget} the longest length with a plan is {counted(shorter.max_model_len, 'token')}"
            f"{grid_words(shorter)} ({(query.max_model_len or 0) - shorter.max_model_len} fewer): "
            f"{words.plan(shorter, None)}")),
        Reason(rule="fewer_tokens", detail=(
            f"prompt and response together (max_prompt_tokens + max_response_tokens) must then fit in "
            f"{counted(shorter.max_model_len, 'token')}, which is {per_gpu} on "
            f"{'its 1 GPU' if shorter.gpus == 1 else f'each of {shorter.gpus} GPUs'} with SP={shorter.sp}")),
    ]


def _more_gpus_reasons(catalog: Catalog, prober: _Prober, words: _Words, data: PlanningData,
                       query: Query) -> list[Reason]:
    """The fewest GPUs past the budget that train the query's length (and how many of them the rollout GPUs
    take), or, where that is decided, that no count does (on nodes of the query's size where its host memory is what
    decides that: some count trains it without); none where it is undecided or within the budget."""
    asked = query.max_model_len or 0
    more_gpus = more_gpus_changes(data)
    more, decided = _best(catalog, query, prober, **more_gpus)
    if more and more.gpus > query.budget_gpus:
        alone = _best(catalog, query, prober, **more_gpus, rollout_gpus=None)[0] if query.rollout_gpus else None
        tokens_need = f"{counted(asked, 'token')} {'needs' if asked == 1 else 'need'}"
        need = (f"{tokens_need} {words.gpus(alone.gpus)}, but beside the "
                f"{counted(query.rollout_gpus or 0, 'rollout GPU')} ({query.rollout_named}) a trainer "
                "takes "
                f"{words.gpus(more.gpus)}" if alone and alone.gpus < more.gpus
                else f"{tokens_need} {words.gpus(more.gpus)}")
        rollout = "" if not query.rollout_gpus else _with_rollout_words(more, query.rollout_gpus)
        return [Reason(rule="more_gpus", detail=(
            f"{need}, {more.gpus - query.budget_gpus} more than the budget{rollout}: {words.plan(more, None)}"))]
    if not more and decided:  # no count trains it
        host_decides = (query.host_ram_gb is not None
                        and _best(catalog, query, prober, **more_gpus, host_ram_gb=None)[0] is not None)
        # One clause of what held (the limits, the node size where host memory decides, the token budget, the
        # tables alone), then one short clause for each that needs saying why.
        held = f" with {query.limit_flags}" if query.limit_flags else ""
        notes = []
        most_sp = node_caps_sp(data.shape, query)
        node_decides = [*(["the host memory is each node's"] if host_decides else []),
                        *([f"an SP group stays within one node, so SP={most_sp} at most"] if most_sp else [])]
        if node_decides:
            held += f" on nodes of {counted(query.node_gpus, 'GPU')}"
            notes.append(f"{', and '.join(node_decides)}, and {query.node_source} sets another node size")
        if one_sequence_per_micro_batch(data.shape):
            held += f", {padded_micro_batch_words(query.dpo)}"
        elif data.lowers_budget:
            held += f", even at a token budget lowered by {query.option_names.token_budget_auto}"
        else:
            held += ", at Trinity's default token budget"
            notes.append("the default token budget is the max_token_len_per_gpu the tables measure")
        if query.estimate == "never":
            held += ", by the tables"
            notes.append(f"{query.option_names.no_estimate} turns off the estimates")
        return [Reason(rule="more_gpus", detail="; ".join((
            (f"no count of {data.gpu} GPUs up to {more_gpus['budget_gpus']} trains {data.model} at "
             f"{counted(asked, 'token')}{held}"),
            *notes)))]
    return []


def _reach(catalog: Catalog, prober: _Prober, data: PlanningData, query: Query) -> str:
    """The longest length with a plan on each GPU count of the budget (the query's count alone with `exact`; the
    query's pins kept), in words, marked where only the memory model speaks for it."""
    parts = []
    budget_counts = (count for count in data.counts
                     if (count == query.budget_gpus if query.exact else count <= query.budget_gpus))
    for count in budget_counts:
        longest, decided = _best(catalog, query, prober, objective="max_len", max_model_len=None, budget_gpus=count,
                                 exact=True)
        reach = ("none" if decided else "unknown (out of time)") if longest is None else str(
            longest.max_model_len) + (f" ({longest.evidence_label}"
                                      f"{_capped_by(catalog, data, query, count, longest.setting, longest.max_model_len)})"
                                      if longest.evidence == "estimated" else "")
        parts.append(f"{_Words.gpus(count)}: {reach}")
    return ", ".join(parts)


def _nearest_estimate(prober: _Prober, words: _Words, data: PlanningData, query: Query) -> str:
    """Where limits leave the query's length no plan and the evidence rules out what they leave: among the
    combinations only the memory model speaks for (no table for their GPU count) that the evidence alone excludes,
    the one it predicts nearest to fitting, in words (`_Words.nearest_over`); "" where there is none, or no
    estimate (estimates off, the longest length asked)."""
    if query.max_model_len is None or query.estimate == "never":
        return ""
    candidates = [entry.combination for entry in data.ranks if not words.rows(entry.combination[0])
                  and estimates_setting(_setting(entry.combination), without_env=query.env is False)]
    return words.nearest_over(sorted(candidates, key=count_then_degree), query.max_model_len,
                              lambda combination: prober.evidence_excludes(combination, None))


def _capped_by(catalog: Catalog, data: PlanningData, query: Query, gpus: int, setting: Setting, length: int) -> str:
    """For an estimate of `setting` on `gpus` GPUs at its longest `length`: where the memory model fits it a grid
    step further but a table says it ran out of memory there (the count's, one for more GPUs, or one of a GPU type
    with at least this one's memory: `within_refuting_tables`), that table's cell in words; "" otherwise, and where
    the budget is lowered (`PlanningData.lowers_budget`: a lowered estimate reaches past the default's cell)."""
    further = length + GRID
    memory_gib = catalog.gpu(data.gpu).memory_gib
    if data.lowers_budget or query.lora_rank or not breakdown(data.shape, memory_gib, gpus, setting, further,
                                                              query.memory.coefficients, query.margin_on(memory_gib),
                                                              critic=query.critic, dpo=query.dpo,
                                                              experts=query.expert_layout).fits:
        return ""  # for LoRA no table caps an estimate (`solver.rules.tables_verdict`)
    own = refuting_cell(data.shape, data.rows, data.settings, gpus, setting, further)
    found = (data.table_gpu(own[0]), own, data.columns) if own is not None else next(
        ((gpu, cell, cells.columns) for gpu, cells in data.larger
         if (cell := refuting_cell(data.shape, cells.rows, cells.settings, gpus, setting, further))), None)
    if found is None or found[1] is None:
        return ""
    gpu, (count, row), columns = found
    table = data.table_words(count) if own is not None else table_words(gpu, count)
    whose = "" if gpu == data.gpu else ", whose GPU has at least this one's memory,"
    column = "" if columns[count] == data.model else f" for {columns[count]}"
    return f", no further: {table}{whose} says {setting.label} ran out of memory{column} at {row}"


def _best(catalog: Catalog, query: Query, prober: _Prober, **changes: object) -> tuple[Plan | None, bool]:
    """The best plan of `query` changed as given, on the prober's GPU type, within its deadline, or None; and whether
    that was decided (a question the deadline stopped is counted in the prober's `undecided` too)."""
    changed = query.model_copy(update={"top": 1, "time_limit_s": prober.remaining_s(), **changes})
    answer = answer_for(catalog, changed, prober.gpu, explained=False)
    prober.undecided += not answer.decided
    return answer.best, answer.decided


def _over(result: Breakdown) -> tuple[float, bool] | None:
    """How far over the usable memory the memory model predicts a setting (`result`), GiB, and whether that is a PPO
    critic's own update: the further of its peak and the critic's update, where its peak is over, or the critic's
    update is over and the optimizer step fits (else the step rules it out first); None where neither is."""
    actor = result.total_gib - result.usable_gib
    critic = result.critic_pass_gib - result.usable_gib if result.critic_pass_gib else -math.inf
    if actor <= 0 and (critic <= 0 or not result.step_fits):
        return None
    return (critic, True) if critic > actor else (actor, False)


class _Words:
    """Puts rules into words for one GPU type and model, from the tables and the query."""

    def __init__(self, data: PlanningData, query: Query, catalog: Catalog) -> None:
        self.data = data
        self.query = query
        self.catalog = catalog
        self.model = data.shape
        self.memory_gib = catalog.gpu(data.gpu).memory_gib
        self.named: list[Plan] = []  # the plans the lines so far name beside no best plan, in their order (`plan`)

    @staticmethod
    def gpus(count: int) -> str:
        """``1 GPU``, ``4 GPUs``."""
        return counted(count, "GPU")

    def plan(self, plan: Plan, best: Plan | None) -> str:
        """`plan` in words: its setting, GPUs and length, the evidence for it, the guide's caution against one
        GPU in short where the plan carries it (`Plan.with_single_gpu_caution`), then the cautions it carries that the
        answer's `best` plan does not (`Plan.cautions_beside`); where the answer has none, all of them, its host memory
        caution short where a line above names a plan with one in full (`named`)."""
        above = None
        if best is None:
            above, self.named = tuple(self.named), [*self.named, plan]
        return (f"{plan.setting.label} on {self.gpus(plan.gpus)} at "
                f"{counted(plan.max_model_len, 'token')}{plan.lowered_words} "
                f"({plan.with_single_gpu_caution(plan.evidence_text(self.data.gpu, self.data.model))})"
                f"{plan.cautions_beside(best, above)}")

    def column(self, count: int) -> str:
        """The model as the table for `count` GPUs names its cells: itself, or a tabled model of its shape."""
        data = self.data
        column = data.columns.get(count, data.model)
        return data.model if column == data.model else f"{column} (the same shape as {data.model})"

    def whose(self, count: int) -> str:
        """`` for Qwen3-8B (the same shape as ...)`` where the table for `count` GPUs has another model's cells
        standing for the model; empty where they are its own."""
        return "" if self.data.columns.get(count, self.data.model) == self.data.model else f" for {self.column(count)}"

    def rows(self, count: int) -> list[int]:
        """The lengths of the rows of the tables for `count` GPUs, shortest first."""
        return sorted(length for n, length in self.data.rows if n == count)

    def longest_documented(self, count: int) -> int | None:
        """The longest length where the tables for `count` GPUs document a setting that trains; None where none."""
        return max((row for n, row in self.data.settings if n == count), default=None)

    def binding(self, core: _Core, reach: Callable[[], str], nearest: Callable[[], str]) -> str:
        """What stops the query as a whole, from the rules of its infeasibility core (`reach` gives the
        longest length per GPU count, `nearest` the estimate nearest to fitting within the other rules, each asked
        only where it is shown). The core of a query without a plan holds a
        rule: with none in force every combination has a plan (`cost_ranks` ranks each one, and `holds_no_plan`
        leaves a count and a length), so a core without a rule would mean the planner's model is infeasible alone
        (and a core of one rule needs it)."""
        parts = self._limit_words(core.rules)
        if "evidence" in core.rules:  # not table_rows: it never stops a count alone, so a minimal core lacks it
            # Alone, the evidence rule still speaks for the budget's counts, which `reach` lists: a count past them may
            # train the length (`more_gpus` names it), so the words keep to the budget.
            within = (f" within the limits above{nearest()}" if parts
                      else f" {self.query.within_budget} (longest per GPU count: {reach()})")
            parts.append(self._unvouched_words() + within)
        together = ("these rules together: " if core.minimal else
                    "these rules together (the time limit ran out before it showed that each is needed): ")
        return "no plan passes " + ("this rule: " if len(parts) == 1 else together) + "; ".join(parts)

    def _limit_words(self, rules: tuple[str, ...]) -> list[str]:
        """Each of `rules` but the evidence's in words, in `binding`'s order: the budget, the nodes, the rollout GPUs'
        room, the SP and batch rules, the pins, host memory."""
        query = self.query
        parts = []
        if "budget" in rules:
            parts.append(f"the budget ({query.within_budget})")
        if "whole_nodes" in rules:
            parts.append(f"a trainer that spans nodes uses whole nodes of {counted(query.node_gpus, 'GPU')}")
        if "rollout_layout" in rules:
            rollout = query.rollout_gpus or 0
            parts.append(f"the {counted(rollout, 'rollout GPU')} {'needs' if rollout == 1 else 'need'} room beside the "
                         "trainer (in its node, filling its node and whole nodes more, or on nodes of their own when "
                         "the trainer takes whole nodes)")
        parts += self._sp_words(rules)
        if any(rule.startswith("pin_") for rule in rules):
            parts.append(f"the pins ({query.pin_flags})")
        if "host_ram" in rules:
            loading = (host_need_detail(False, query.reference_model, query.critic)
                       if query.critic in HOST_HELD_CRITICS else
                       LOADING_HOST_NEED if query.reference_model else LOADING_ALONE_NEED)
            parts.append(f"host memory ({query.host_ram_bound_words} is too little for Offload, or for {loading})")
        return parts

    def _sp_words(self, rules: tuple[str, ...]) -> list[str]:
        """The SP and batch rules among `rules` in words, in `RULES` order: what SP and the data-parallel ranks must
        divide."""
        data, query = self.data, self.query
        words = {"sp_divides_gpus": "SP must divide the trainer GPUs",
                 "sp_divides_heads": f"SP must divide the {data.shape.num_attention_heads} attention heads",
                 "sp_kv_heads": f"SP and the {data.shape.num_key_value_heads} KV heads must divide one another",
                 "sp_attention": "SP must be 1, since verl's Ulysses patch does not reach the model's attention",
                 "sp_within_node": f"SP must divide the {counted(query.node_gpus, 'GPU')} of a node",
                 "batch_divides": (f"{_dividing_ranks(query)} must divide the train batch of "
                                   f"{query.train_batch_size} ({query.train_batch_source}){_gpus_too(query)}"),
                 "token_cap": f"a sequence must fit in {self._token_cap_words()}: ceil(length / SP) <= "
                              f"{query.token_budget_cap}, {self._most_sp_words()}"}
        return [text for rule, text in words.items() if rule in rules]

    def _most_sp_words(self) -> str:
        """The largest SP degree the query's plans may take, and why the degrees stop there: ``SP at most 4 here
        (SP=1, 2, 4: those that divide the 32 attention heads and some count of up to 6 GPUs, SP and the 8 KV heads
        dividing one another)``; with SP pinned, or a model that takes SP=1 only, that one."""
        data, query, shape = self.data, self.query, self.data.shape
        counts = [n for n in data.counts if n == query.budget_gpus or not query.exact and n <= query.budget_gpus]
        degrees = sorted({sp for n in counts for sp in self._degrees(n)})
        if not degrees:  # no count the planner weighs: the limit says why
            return "no SP degree here"
        if query.sp is not None or shape.ulysses_unreached is not None:
            return f"SP={degrees[-1]} here ({'pinned' if query.sp is not None else 'the model takes SP=1 only'})"
        gpus = counted(query.budget_gpus, "GPU") if query.exact else f"some count of up to {counted(counts[-1], 'GPU')}"
        node = f", each SP group in a node of {query.node_gpus}" if counts[-1] > query.node_gpus else ""
        return (f"SP at most {degrees[-1]} here (SP={runs(degrees)}: those that divide the "
                f"{shape.num_attention_heads} attention heads and {gpus}{node}, SP and the "
                f"{shape.num_key_value_heads} KV heads dividing one another)")

    def _degrees(self, n: int) -> list[int]:
        """The SP degrees the rules allow on `n` GPUs, ascending: those that divide them and suit the heads, each SP
        group in a node (`sp_degrees`), SP=1 alone where verl's Ulysses patch does not reach the model's attention, the
        pinned one alone."""
        shape, query = self.data.shape, self.query
        return [sp for sp in sp_degrees(shape, n, query.node_gpus)
                if query.sp in (None, sp) and (sp == 1 or shape.ulysses_unreached is None)]

    def _token_cap_words(self) -> str:
        """The token budget cap in words, with where it came from: ``4096 tokens per GPU (--token-budget 4096)``."""
        query, cap = self.query, self.query.token_budget_cap or 0
        source = token_cap_source(cap, query.token_budget_cap_source, query.option_names)
        return f"{counted(cap, 'token')} per GPU ({source})"

    def _unvouched_words(self) -> str:
        """``nothing in the tables vouches for Qwen3-8B on A100-80GB at 32768 tokens``: the evidence rule in words."""
        query = self.query
        asked = counted(query.max_model_len, "token") if query.max_model_len else "any length"
        return f"nothing in {query.evidence_sources} vouches for {self.data.model} on {self.data.gpu} at {asked}"

    def group(self, excluded: list[tuple[Combination, str]], length: int) -> list[Reason]:
        """One reason per rule and situation, covering every alternative it excludes, in `RULES` order."""
        groups: dict[tuple[int, ...], list[Combination]] = defaultdict(list)
        for combination, rule in excluded:
            n = combination[0]
            where = {"sp_divides_heads": 0, "sp_kv_heads": 0, "sp_attention": 0, "token_cap": 0, "pin_sp": 0,
                     "pin_env": 0, "pin_offload": 0, "budget": 0, "whole_nodes": 0, "rollout_layout": 0}.get(rule, n)
            groups[(RULES.index(rule), where)].append(combination)
        return [reason for key in sorted(groups) for reason in self._reasons(RULES[key[0]], groups[key], length)]

    def _reasons(self, rule: str, combinations: list[Combination], length: int) -> list[Reason]:
        """Why `rule` excludes `combinations` (one of `group`'s groups) at `length`: one reason, or the evidence's
        (`_evidence`)."""
        first_count = min(c[0] for c in combinations)
        if rule in SP_RULES:
            return [self._sp_reason(rule, combinations, length)]
        if rule == "table_rows":
            return [self._beyond_table(first_count, length)]
        if rule == "evidence":
            return self._evidence(first_count, length, combinations)
        return [self._limit_reason(rule, combinations)]

    def _limit_reason(self, rule: str, combinations: list[Combination]) -> Reason:
        """Why a limit of the query's (`rule`: the budget, the nodes, the rollout GPUs, host memory or a pin)
        excludes `combinations`."""
        query = self.query
        counts = sorted({c[0] for c in combinations})
        on = counted(counts, "GPU", runs)
        if rule == "budget":
            if query.exact:
                return Reason(rule="budget", detail=(
                    f"{on}: {query.exact_source} asks for {query.budget_gpus}{query.total_split}"))
            names = query.option_names
            split = ("" if query.total_gpus is None else
                     f", what the {counted(query.rollout_gpus or 0, 'rollout GPU')} ({query.rollout_named}) "
                     f"{'leaves' if query.rollout_gpus == 1 else 'leave'} of "
                     f"{names.valued(names.total_gpus, query.total_gpus)}")
            return Reason(rule="budget", detail=(
                f"more GPUs than the budget of {query.budget_gpus}{split} (such as {on})"))
        if rule == "whole_nodes":
            return Reason(rule="whole_nodes", detail=(
                f"{on} span nodes of {query.node_gpus} ({query.node_source}) but are not whole nodes, which a trainer "
                "that spans nodes must use"))
        if rule == "rollout_layout":
            return Reason(rule="rollout_layout", detail=(
                f"{counted(counts, 'trainer GPU', runs)}: with the {counted(query.rollout_gpus or 0, 'rollout GPU')} "
                f"({query.rollout_named}) they {no_rollout_layout_words(query.node_gpus)}"))
        if rule == "host_ram":
            offloaded = all(offload for _, _, offload, _ in combinations)
            needs = ("Offload needs" if offloaded else "the offloaded critic needs"
                     if query.critic in HOST_HELD_CRITICS else "loading the model needs")
            what = f"{needs} more host memory ({host_need_detail(offloaded, query.reference_model, query.critic)})"
            need = host_need(self.data, query, counts[0], offloaded)  # `group` gives host memory one count a reason
            return Reason(rule="host_ram", detail=(
                f"{what} than {query.host_ram_bound_words} (on {on}: {need:.1f} GiB per node)"))
        labels = ", ".join(dict.fromkeys(f"{_label(c)} on {counted(c[0], 'GPU')}" for c in combinations))
        return Reason(rule="pin", detail=f"{query.pin_flags} rules out {labels}")

    def _sp_reason(self, rule: str, combinations: list[Combination], length: int) -> Reason:
        """Why a rule of what SP or the data-parallel ranks must divide, or the token budget cap (`rule`, one of
        `SP_RULES`), rules out the SP degrees of `combinations` at `length`."""
        data, query = self.data, self.query
        counts = sorted({c[0] for c in combinations})
        on, first = counted(counts, "GPU", runs), self.gpus(counts[0])
        degrees = sorted({c[3] for c in combinations})
        sps = runs(degrees)
        if rule == "sp_divides_gpus":
            count, short = counts[0], condensed_runs(degrees)
            if short != sps and degrees == [sp for sp in range(2, count + 1) if count % sp]:  # the words say which
                return Reason(rule="sp_divides_gpus", detail=(
                    f"SP must divide the trainer GPUs: on {first} that rules out every SP up to {count} that does not "
                    f"divide {count} ({counted(len(degrees), 'degree')}: SP={short})"))
            return Reason(rule="sp_divides_gpus", detail=(
                f"SP must divide the trainer GPUs: on {first} that rules out SP={sps}"))
        if rule == "sp_divides_heads":
            return Reason(rule="sp_divides_heads", detail=(
                f"SP must divide the {data.shape.num_attention_heads} attention heads of {data.model}: that rules out "
                f"SP={sps} (on {on})"))
        if rule == "sp_kv_heads":
            return Reason(rule="sp_kv_heads", detail=(
                f"SP and the {data.shape.num_key_value_heads} KV heads of {data.model} must divide one another: that "
                f"rules out SP={sps} (on {on})"))
        if rule == "sp_attention":
            return Reason(rule="sp_attention", detail=(
                f"verl's Ulysses SP does not reach the attention of {data.model}: that rules out SP={sps} (on {on}): "
                f"{data.shape.ulysses_unreached}"))
        if rule == "sp_within_node":
            return Reason(rule="sp_within_node", detail=(
                f"a trainer on {first} spans nodes of {counted(query.node_gpus, 'GPU')} and each SP group must fit in "
                f"one ({SP_NODE_RULE_OWNER}): that rules out SP={sps}"))
        if rule == "token_cap":
            return Reason(rule="token_cap", detail=(
                f"a micro-batch of {self._token_cap_words()} must hold a sequence over its SP group, ceil(length / SP) "
                f"<= {query.token_budget_cap}: at {counted(length, 'token')} that rules out SP={sps} (on {on})"))
        batch = f"{query.train_batch_size} ({query.train_batch_source})"
        pairs = " in DPO's pairs, 2 x the ranks" if query.pair_batch else ""
        return Reason(rule="batch_divides", detail=(
            f"the train batch of {batch} must split evenly over the data-parallel ranks (GPUs / SP){pairs}"
            f"{_gpus_too(query)}: on {first} that rules out SP={sps}"))

    def nearest_over(self, candidates: list[Combination], length: int,
                     evidence_excludes: Callable[[Combination], bool]) -> str:
        """Of the `candidates` that the evidence alone excludes (`evidence_excludes`, asked only of those over, nearest
        first, until one is), the one the memory model predicts least over the usable memory at `length` (`_over`: its
        peak, or a PPO critic's own update, whichever is further over), with its figures, in parentheses (the first in
        `candidates`' order of those as near); where none is over it, the first the memory model fits but a table
        stops (`refuted_elsewhere`), with that table's cell; "" where there is neither (the optimizer step rules them
        out)."""
        coefficients, margin = self.query.memory.coefficients, self.query.margin_on(self.memory_gib)
        over, fitting = [], []
        for combination in candidates:
            setting = _setting(combination)
            least = least_token_budget(length, setting.sp) if self.data.lowers_budget else None
            result = breakdown(self.model, self.memory_gib, combination[0], setting, length, coefficients, margin,
                               least, self.query.lora_rank, self.query.critic, self.query.dpo, self.query.expert_layout)
            if (how_far := _over(result)) is not None:
                over.append((how_far, combination, setting, result, least))
            elif result.fits:
                fitting.append((combination, setting, result))
        over.sort(key=lambda nearest: nearest[0][0])  # stable: of those as near, the first in `candidates`' order
        found = next((nearest for nearest in over if evidence_excludes(nearest[1])), None)
        if found is None:
            return next((f" ({setting.label} on {self.gpus(combination[0])}: the memory model predicts "
                         f"{result.total_gib:.1f} GiB of {result.usable_gib:.1f} usable, {refuted})"
                         for combination, setting, result in fitting if evidence_excludes(combination)
                         and (refuted := self.refuted_elsewhere(combination[0], setting, length)) is not None), "")
        (gib, critics_update), combination, setting, result, least = found
        budget = f" at {counted(least, 'token')} per GPU, its least budget" if least else ""
        peak = f"{result.total_gib:.1f} GiB of {result.usable_gib:.1f} usable"
        if critics_update:
            actor = (f", {result.total_gib - result.usable_gib:.1f} GiB over, and"
                     if result.total_gib > result.usable_gib else ", but")
            peak += f"{actor} the PPO critic's own update takes {result.critic_pass_gib:.1f} GiB"
        return (f" (the nearest, {setting.label} on {self.gpus(combination[0])}: the memory model predicts "
                f"{peak}, {gib:.1f} GiB over{budget})")

    def refuted_elsewhere(self, n: int, setting: Setting, length: int) -> str | None:
        """Where a table of another GPU count (`within_refuting_tables`; none for LoRA) or of a GPU type with at least
        this one's memory (`least_limits`) says `setting` ran out of memory on `n` GPUs at `length`, which caps the
        memory model's estimate there: that table's cell and why it speaks for `n`, in words (``but the A100-80GB
        table for 1 GPU says it ran out of memory at 32768, and ...``); None where none does."""
        offload = setting.offload
        other = None if self.query.lora_rank else refuting_cell(self.model, self.data.rows, self.data.settings, n,
                                                                setting, length, others_only=True)
        if other is not None:
            return (f"but {self.data.table_words(other[0])} says it ran out of memory{self.whose(other[0])} at "
                    f"{other[1]}, and {_why_another_count_speaks(other[0], n, offload)}")
        larger = next(((gpu, found, cells.columns[found[0]]) for gpu, cells in self.data.larger
                       if (found := refuting_cell(self.model, cells.rows, cells.settings, n, setting, length))), None)
        if larger is None:
            return None
        gpu, (count, row), column = larger
        whose = "" if column == self.data.model else f" (for {column}, of the same shape)"
        fewer = "" if count == n else f", and {_why_another_count_speaks(count, n, offload)}"
        return (f"but the {gpu} table for {self.gpus(count)}, whose GPU has at least this one's memory, says it ran "
                f"out of memory{whose} at {row}{fewer}")

    def _no_estimate_reason(self, n: int, length: int, combinations: list[Combination]) -> Reason:
        """What rules out settings for a GPU count without a table: no smaller table's cell vouches, and the
        memory model predicts they do not fit (or does not estimate them: estimates off, or Env off)."""
        no_table = self._no_table(n)
        if self.query.estimate == "never":
            return Reason(rule="no_estimates", detail=f"{no_table}; {self._estimates_off}")
        return Reason(rule="memory_model", detail=f"{no_table}; {self._predictions(n, length, combinations)}")

    @property
    def _estimates_off(self) -> str:
        """That estimates are off, naming the option that turned them off."""
        return f"estimates are off ({self.query.option_names.no_estimate})"

    def _predictions(self, n: int, length: int, combinations: list[Combination]) -> str:
        """What the memory model predicts for these settings on `n` GPUs at `length` (or why it does not
        estimate them), in words."""
        if self.query.estimate == "never":
            return self._estimates_off
        coefficients, margin = self.query.memory.coefficients, self.query.margin_on(self.memory_gib)
        predictions, unestimated = [], []
        for _, env, offload, sp in combinations:
            setting = Setting(env=bool(env), offload=bool(offload), sp=sp)
            if not estimates_setting(setting, without_env=self.query.env is False):
                unestimated.append(setting.label)
                continue
            least = least_token_budget(length, sp) if self.data.lowers_budget else None
            result = breakdown(self.model, self.memory_gib, n, setting, length, coefficients, margin, least,
                               self.query.lora_rank, self.query.critic, self.query.dpo, self.query.expert_layout)
            if result.fits and (refuted := self.refuted_elsewhere(n, setting, length)) is not None:
                predictions.append(f"{setting.label} {result.total_gib:.1f} GiB of {result.usable_gib:.1f} usable, "
                                   f"{refuted}")
                continue
            if result.total_gib > result.usable_gib or (result.step_fits and result.critic_pass_fits):
                words = f"{setting.label} {result.total_gib:.1f} GiB of {result.usable_gib:.1f} usable"
            elif result.step_fits:  # the peak and the step fit: a PPO critic's own update is what does not
                words = self._critic_pass_over(n, setting, length, least, result, (
                    f"{setting.label} {result.total_gib:.1f} GiB of {result.usable_gib:.1f} usable, but"))
            else:
                words = (f"{setting.label} {result.step_gib:.2f} GiB at the optimizer step, more than the "
                         f"{result.step_usable_gib:.2f} it may take")
                if not result.critic_pass_fits:  # a PPO critic's own update is over too: it says so
                    words = self._critic_pass_over(n, setting, length, least, result, f"{words}, and")
            least_words = f" (at {counted(least, 'token')} per GPU, its least budget)" if least else ""
            predictions.append(words + least_words + self._smaller_card(n, setting, length, result))
        if unestimated:
            predictions.append(f"{and_joined(unestimated)} not estimated (estimates turn Env on unless "
                               f"{self.query.option_names.switch('env', False)})")
        return f"the memory model predicts at {counted(length, 'token')}: {'; '.join(predictions)}"

    def _smaller_card(self, n: int, setting: Setting, length: int, result: Breakdown) -> str:
        """Where the memory model does not fit `setting` on `n` GPUs at `length` (`result`) but a GPU type's tables
        with at most this one's memory say it trains (`smaller_card_note`; no cell here vouches, so its tables give no
        verdict): ``, though `` and that cell, a note (`smaller_card_words`); "" otherwise."""
        query = self.query
        vouching = smaller_card_note(self.catalog, self.data.gpu, self.model, n, setting, length, tables=None,
                                     estimate_fits=result.fits, lora=query.lora_rank > 0,
                                     critic=query.critic is not None)
        return "" if vouching is None else f", though {smaller_card_words(vouching, self.data.gpu, self.data.model)}"

    def _critic_pass_over(self, n: int, setting: Setting, length: int, least: int | None, result: Breakdown,
                          before: str) -> str:
        """For `setting` on `n` GPUs at `length` (`least` tokens per GPU, or the default budget), whose peak fits
        (`result`) but whose PPO critic's own update does not: `before` (what else the words say of it), that
        update's figure, and the critics the memory model fits it with (none; offloaded, FSDP2's offload_policy),
        where it does, in words."""
        coefficients, margin = self.query.memory.coefficients, self.query.margin_on(self.memory_gib)
        names = self.query.option_names
        fitting = [names.valued(names.named("critic"), f'"{critic or NO_CRITIC}"' if names.keywords
                                else critic or NO_CRITIC)
                   for critic in (None, "offloaded") if critic != self.query.critic
                   and breakdown(self.model, self.memory_gib, n, setting, length, coefficients, margin, least,
                                 self.query.lora_rank, critic, self.query.dpo, self.query.expert_layout).fits]
        fits = f"; with {' or '.join(fitting)} the memory model fits it" if fitting else ""
        return (f"{before} the PPO critic's own update takes {result.critic_pass_gib:.2f} GiB of the "
                f"{result.usable_gib:.2f} usable{fits}")

    def _no_table(self, n: int) -> str:
        """That no table speaks for `n` GPUs: none of the GPU type's for the model at all (`_untabled`), or none for
        `n` GPUs (nor, `_nor_fewer`, a cell of a table for fewer)."""
        if not self.data.rows:
            return f"on {self.gpus(n)}: {self._untabled()}"
        return f"no table for {self.gpus(n)}{self._nor_fewer(n)}"

    def _untabled(self) -> str:
        """Why no table speaks for the model on this GPU type at all: none has its memory (though those of GPU types
        with more may cap its estimates, where estimates are on: `PlanningData.capping_gpus`), --estimate sets them
        aside, or none of them names the model."""
        query, data = self.query, self.data
        if not self.catalog.tabled_counts(data.gpu):
            if (capping := data.capping_gpus) and query.estimate != "never":
                return (f"no table vouches for {data.gpu} (none has its memory; the {capping} tables, whose GPUs have "
                        "at least its memory, cap its estimates where they say a setting ran out of memory)")
            return f"no table speaks for {data.gpu} (none has its memory)"
        if query.estimate == "only":
            return f"the tables set aside ({query.option_names.estimate_only})"
        return f"no {data.gpu} table names {data.model}"

    def nothing_held(self) -> tuple[Reason, ...]:
        """Why no GPU count has a plan at all, so that no planning model is built (`PlanningData.holds_no_plan`): with
        estimates off, that no table speaks for the model; else what the memory model predicts at the query's length
        (its grid's first step when the length is maximised) for each setting the rules allow (`_degrees`; Env and
        Offload as pinned, of those it estimates) on the most GPUs within the budget that run its SP degree (the count
        asked, with --exact; on fewer it fits no more), one reason per GPU count, which names its degrees where there
        are more counts. Words, not a filter: the estimates `prepare` made decided that nothing fits."""
        query = self.query
        if query.estimate == "never":
            return (Reason(rule="no_table", detail=f"{self._untabled()}, for any GPU count; {self._estimates_off}"),)
        if query.exact and (unestimated := unestimated_count_words(query.budget_gpus, query.node_gpus)):
            return (self._unestimated_count(query.budget_gpus, unestimated),)
        counts = (query.budget_gpus,) if query.exact else estimated_counts(query.node_gpus, query.budget_gpus)
        most = {sp: n for n in counts for sp in self._degrees(n)}  # each SP degree's largest count (counts ascend)
        settings = [setting for sp in most for env in (False, True) for offload in (False, True)
                    if query.env in (None, env) and query.offload in (None, offload)
                    and estimates_setting(setting := Setting(env=env, offload=offload, sp=sp),
                                          without_env=query.env is False)]
        settings.sort(key=lambda setting: setting.escalation_key)
        reasons, counts_shown = [], sorted(set(most.values()))
        for n in counts_shown:
            degrees = [sp for sp in most if most[sp] == n]
            on = (self.gpus(n) if query.exact else f"{self.gpus(n)}, the most within the budget" + (
                f" for SP={runs(degrees)}" if len(counts_shown) > 1 else ""))
            combinations = [(n, int(s.env), int(s.offload), s.sp) for s in settings if s.sp in degrees]
            reasons.append(Reason(rule="memory_model", detail=(
                f"on {on}: {self._untabled()}; {self._predictions(n, query.max_model_len or GRID, combinations)}")))
        return tuple(reasons)

    def _unestimated_count(self, n: int, unestimated: str) -> Reason:
        """Why the memory model has no figures for `n` GPUs (a count --exact asks for, no table speaking for it;
        `unestimated`: `unestimated_count_words`): they span nodes but are not whole nodes (the rule's own reason),
        or they are more than it estimates."""
        if whole_nodes_violation(n, self.query.node_gpus):
            return self._limit_reason("whole_nodes", [(n, 0, 0, 1)])
        return Reason(rule="memory_model", detail=f"on {self.gpus(n)}: {self._untabled()}; {unestimated}")

    def _lora_table(self, n: int) -> str:
        """What the table for `n` GPUs says of a LoRA run past what it vouches for: it measured full fine-tuning, whose
        cells that trained vouch up to the longest of them, and whose '-' says nothing of LoRA."""
        documented = self.longest_documented(n)
        vouched = (f"its cells that trained vouch up to {counted(documented, 'token')}" if documented
                   else "no cell of it trained")
        return (f"{self.data.table_words(n)} measured full fine-tuning{self.whose(n)}, which holds more than this LoRA "
                f"run: {vouched}, and a '-' or its rows' end says nothing of LoRA")

    def _nor_fewer(self, n: int) -> str:
        """``, nor a cell for fewer GPUs that vouches`` where a table that may vouch for `n` GPUs exists (of
        two GPUs or more, fewer than `n`)."""
        return ", nor a cell of a table for fewer GPUs that vouches" if any(
            1 < m < n for m, _ in self.data.rows) else ""

    def _beyond_table(self, n: int, length: int) -> Reason:
        """What stops `n` GPUs at `length` where the table for them (or the memory model) goes no further: the
        table's '-' rows to its end, the row `length` falls to among them named, or the end of the table."""
        if not self.rows(n) or self.query.lora_rank:
            longest = self.data.longest_estimate.get(n, 0) // GRID * GRID
            lowered = " with a lowered token budget" if self.data.lowers_budget else ""
            reaching = [Setting(env=bool(e), offload=bool(o), sp=s) for m, e, o, s, fits in self.data.estimates
                        if m == n and fits // GRID * GRID == longest]  # the settings the longest estimate is of
            capped = next(filter(None, (_capped_by(self.catalog, self.data, self.query, n, setting, longest)
                                        for setting in reaching)), "")
            return Reason(rule="memory_model", detail=(
                f"{self._lora_table(n) if self.rows(n) else self._no_table(n)}; the memory model's longest fitting "
                f"length there is {longest} tokens{lowered}{capped}"))
        rows, documented = self.rows(n), self.longest_documented(n)
        nor = "; nor does a cell of a table for fewer GPUs vouch" if self._nor_fewer(n) else ""
        if documented != rows[-1]:  # its last rows say '-': a measurement, not the table's end, stops it
            first = min(row for row in rows if row > (documented or 0))
            falls = f" (the row that {length} falls to)" if (documented or 0) < length < first else ""
            span = f"at {first} tokens{falls}" if first == rows[-1] else f"from {first} tokens{falls} to {rows[-1]}"
            return Reason(rule="no_setting", detail=(
                f"{self.data.table_words(n)} says '-' for {self.column(n)} {span}, where its rows end: nothing "
                f"trained there{nor}"))
        return Reason(rule="beyond_table", detail=(
            f"{self.data.table_words(n)} ends at {counted(rows[-1], 'token')}, where {self.column(n)} "
            f"still trains{nor}"))

    def _evidence(self, n: int, length: int, combinations: list[Combination]) -> list[Reason]:
        """What the table for `n` GPUs says against these settings at `length`."""
        data = self.data
        if not self.rows(n):
            return [self._no_estimate_reason(n, length, combinations)]
        rows = [row for row in self.rows(n) if row >= length]
        table = data.table_words(n)
        if self.query.lora_rank:
            return [Reason(rule="memory_model", detail=(
                f"{table} measured full fine-tuning{self.whose(n)}, which holds more than this LoRA run: no cell of "
                f"it vouches for these settings at {counted(length, 'token')}, and none that ran out of memory speaks "
                f"for LoRA; {self._predictions(n, length, combinations)}"))]
        if self.query.critic:
            return [Reason(rule="memory_model", detail=(
                f"{table} measured the actor alone{self.whose(n)}, without the PPO critic this run trains beside "
                f"it: no cell of it vouches for these settings at {counted(length, 'token')}; "
                f"{self._predictions(n, length, combinations)}"))]
        if not rows:  # the table ends before the length: at the default budget it measured (`_lowered`)
            beyond = self._beyond_table(n, length)
            return [beyond.model_copy(update={"detail": beyond.detail + self._lowered(length, combinations)})]
        row = rows[0]
        if not any((n, r) in data.settings for r in rows):  # '-' from the row after the last that trains
            first = min(r for r in self.rows(n) if r > max((r for r in self.rows(n) if (n, r) in data.settings),
                                                           default=0))
            return [Reason(rule="no_setting", detail=f"{table} says '-' for {self.column(n)} from "
                                                     f"{counted(first, 'token')} on: "
                                                     f"nothing trained there{self._lowered(length, combinations)}")]
        cell = data.settings.get((n, row))
        order = [setting.label for setting in tried_settings(data.shape, n)]
        tried = [setting.label for setting in failed_settings(data.shape, n, cell)]
        labels = list(dict.fromkeys(_label(c) for c in combinations))
        failed = [label for label in tried if label in labels]
        others = [label for label in labels if label not in tried]
        reasons = []
        falls = f", the row that {length} falls to," if row > length else ""
        said = f"at {counted(row, 'token')}{falls} {table} says '{cell.label if cell else '-'}'{self.whose(n)}"
        if failed:
            reasons.append(Reason(rule="out_of_memory", detail=(
                f"{said}; its cells read as the first setting that trained in the order {', '.join(order)} "
                f"(Trinity-RFT's guide advises: start from vanilla, then on OOM add Env, SP, Offload), so "
                f"{', '.join(failed)} ran out of memory there"
                f"{self._lowered(length, [c for c in combinations if _label(c) in failed])}")))
        if others:
            unmeasured = [c for c in combinations if _label(c) in others]
            reasons.append(Reason(rule="undocumented", detail=(
                f"{', '.join(others)} on {self.gpus(n)}: never measured, and no cell of {table}{self.whose(n)} from "
                f"{counted(row, 'token')} on is a setting they include (at {row}: '{cell.label if cell else '-'}')"
                f"{', nor a cell of a table for fewer GPUs' if self._nor_fewer(n) else ''}; "
                f"{self._predictions(n, length, list(dict.fromkeys(unmeasured)))}")))
        return reasons

    def _lowered(self, length: int, combinations: list[Combination]) -> str:
        """Where the budget is lowered (`PlanningData.lowers_budget`): why that does not save these settings either
        (the tables measured Trinity's default), in words; empty otherwise."""
        if not self.data.lowers_budget:
            return ""
        held = []
        for combination in dict.fromkeys(combinations):
            longest = self.data.estimate_longest.get(combination)
            most = None if longest is None else most_estimated_tokens(length, combination[3], longest)
            if most is None:
                held.append(f"{_label(combination)} not estimated{'' if combination[1] else ' without Env'}")
            elif most == 0:  # cells that contradict themselves at the least budget
                held.append(f"{_label(combination)} has no budget left: a row says it ran out of memory at 1 token "
                            "per GPU, the least budget")
            else:
                held.append(f"{_label(combination)} holds at most {counted(most, 'token')} per GPU, below "
                            f"ceil({length} / {combination[3]}) = {least_token_budget(length, combination[3])}")
        return f" (at Trinity's default budget; lowered, {'; '.join(held)})"


def _why_another_count_speaks(count: int, gpus: int, offload: bool) -> str:
    """Why a table for `count` GPUs that says a setting (with `offload` or not) ran out of memory speaks for `gpus`
    GPUs too, in words: with Offload each GPU holds as much on any count (the states are on the CPU); without it, a
    table for more GPUs speaks since on fewer each holds more, and one for fewer through its cell's setting with
    Offload, which holds as much."""
    if count > gpus and not offload:
        return "on fewer GPUs each holds more"
    return "with Offload each GPU holds as much on any count" + ("" if offload else ", without it more")


def _run_groups(values: list[int]) -> list[str]:
    """Sorted whole numbers as `runs` writes them, a group each: ``3``, ``5-7``, ``9-64`` (two in a row, two
    groups)."""
    return [item for g in consecutive_runs(values) for item in ([f"{g[0]}-{g[-1]}"] if len(g) > 2 else map(str, g))]


def runs(values: list[int]) -> str:
    """Sorted whole numbers in words, three or more in a row as a range: ``3, 5-7, 9-64``."""
    return ", ".join(_run_groups(values))


LONG_RUNS = 5
"""`condensed_runs` shortens a list of more groups than this."""


def condensed_runs(values: list[int]) -> str:
    """A long list of sorted whole numbers (more groups than `LONG_RUNS`) as a reader scans it: its first three groups
    of `runs`, then ``...`` and its last, ``5, 7, 9-11, ..., 25-47``; a shorter one whole, as `runs` writes it.
    For a list whose words say which numbers it holds."""
    groups = _run_groups(values)
    return ", ".join(groups if len(groups) <= LONG_RUNS else [*groups[:3], "...", groups[-1]])


def count_then_degree(combination: Combination) -> tuple[int, int]:
    """The order `_Prober.classify` puts combinations in: by GPU count, then SP degree."""
    return combination[0], combination[3]


def _setting(combination: Combination) -> Setting:
    """The setting of a combination (n, e, o, s)."""
    _, env, offload, sp = combination
    return Setting(env=bool(env), offload=bool(offload), sp=sp)


def _label(combination: Combination) -> str:
    return _setting(combination).label


def _dividing_ranks(query: Query) -> str:
    """What must divide the query's train batch but the GPUs (`_gpus_too`), in words: the data-parallel ranks, or
    twice them for DPO (`Query.pair_batch`), with why."""
    if not query.pair_batch:
        return "the data-parallel ranks (trainer GPUs / SP)"
    return f"twice the data-parallel ranks (DPO's pairs: 2 x trainer GPUs / SP; {DPO_PAIR_BATCH_WORDS})"


def _gpus_too(query: Query) -> str:
    """Where the query's Trinity release refuses a train batch the trainer GPUs do not divide (`Query.batch_divisor`
    ``gpus``), the words that add that rule to the data-parallel ranks' (``; with Trinity 0.5.0 and 0.5.1 the trainer
    GPUs must divide it too ...``); else ""."""
    if query.batch_divisor != "gpus":
        return ""
    return ("; with Trinity 0.5.0 and 0.5.1 the trainer GPUs must divide it too (trinity/common/config_validator.py"
            ":860 in 0.5.0, :859 in 0.5.1; 0.5.2 needs the ranks alone)")
