"""`solve`'s answers: per GPU type, what was asked, the config's verdict, the best plan's summary, the ranking, why
there is no plan and the explanation; and the answers as JSON."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from solver.query import CHOOSES_COUNT, Query
from solver.render.layout import PIPED_WIDTH, check_text_options, view_text
from solver.render.ranking import ranking_view
from solver.render.summary import NO_CONFIG_APPLIED, ConfigApplied, plan_summary
from solver.render.verdict import current_view
from solver.results import Answer, Reason, check_answers_of
from solver.rules import COMMAND_OPTIONS, OptionNames, batch_words
from solver.tables import Catalog, QueryError, TrinityVersion, and_joined, check_types, counted, load_catalog


def answers_json(answers: Iterable[Answer]) -> str:
    """The answers as a JSON array, one object per GPU type, plans best first; ``explanation`` (a list
    of ``{rule, detail}``) only when the answers were explained, ``current`` only for --from-config."""
    return json.dumps([answer.as_json() for answer in answers], indent=2)


def _goal(query: Query) -> str:
    """What the query asks for, in words (a heading)."""
    if query.objective == "max_len":
        return f"longest context {query.within_budget}"
    if query.objective in CHOOSES_COUNT:
        fewest = "GPUs" if query.objective == "min_gpus" else "GPU-hours"
        return f"fewest {fewest} for {counted(query.max_model_len or 0, 'token')} ({query.fewest_gpus_scope})"
    return f"cheapest plan for {counted(query.max_model_len or 0, 'token')} {query.within_budget}"


def _no_alternative(query: Query, answer: Answer) -> str:
    """Why `--top` lists fewer plans than asked: every other plan that trains (within the host memory given, if
    any) is no better, in the ways the query leaves open, than a plan above; and, where one of the `answer`'s plans
    is an estimate and Env is not pinned, that estimates keep Env on."""
    ways = [*(["no longer"] if query.objective == "max_len" else []), "no cheaper",
            *([] if query.exact else ["on no fewer GPUs"]), "no better vouched for"]
    limits = [query.host_ram_limit_words] if query.host_ram_gb is not None else []
    limits += [batch_words(query.train_batch_size, query.train_batch_source)] if query.train_batch_size else []
    within = f" within {' and '.join(limits)}" if limits else ""
    # An estimate keeps Env on unless --no-env (`estimates_setting`): one without it may cost a hair less.
    estimated = any(plan.evidence == "estimated" for plan in answer.plans)
    without_env = query.option_names.switch("env", False)
    env = f"; estimates keep Env on ({without_env} estimates without it)" if query.env is None and estimated else ""
    return f"each other plan that trains{within} is {and_joined(ways)} than a plan above{env}"


def _explanation(reasons: Iterable[Reason]) -> Group:
    """The ``why`` rows: each rule and what it means here."""
    return Group(Text("why", style="bold"), _RuleRows([(reason.rule, reason.detail) for reason in reasons]))


EXPLANATION_DETAIL_WIDTH = 40
"""The fewest columns the ``why`` rows keep for a rule's words beside its name: on a narrower terminal each name
stands on a line of its own over its words, which then have the width whole (beside a name of 18 columns, 30 columns
left the words 10, and a word longer than that was cut to ``(--token-…``)."""


class _RuleRows:
    """The ``why`` rows, each rule's name beside its words where the width leaves them `EXPLANATION_DETAIL_WIDTH`
    columns, else over them; the words wrap at spaces, and a word wider than the room breaks, never cut."""

    def __init__(self, rows: Sequence[tuple[str, str]]) -> None:
        self.rows = rows

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        widest = max((len(rule) for rule, _ in self.rows), default=0)
        if widest + 2 + EXPLANATION_DETAIL_WIDTH <= options.max_width:
            grid = Table.grid(padding=(0, 2))
            grid.add_column(style="dim", no_wrap=True)
            grid.add_column(overflow="fold")
            for rule, detail in self.rows:
                grid.add_row(rule, detail)
            yield grid
            return
        for rule, detail in self.rows:
            yield Text(rule, style="dim")
            yield Padding(Text(detail, overflow="fold"), (0, 0, 0, 2))


def answers_view(answers: Iterable[Answer], query: Query, catalog: Catalog, version: TrinityVersion | None = None,
                 *, write_unoffered: bool = False,
                 config_keys: Mapping[str, ConfigApplied] | None = None) -> Group:
    """Per answer: what was asked, the best plan in full (or why there is none; its config keys for the Trinity
    release `version` where given; for a config read with --from-config, how --write applies it, unless
    `write_unoffered` (written already, or --write would refuse the options), and what its apply lines say of the
    config, `config_keys` per GPU type), then the ranking."""
    model, names = catalog.model(query.model), query.option_names
    renderables: list[Any] = []
    for answer in answers:
        renderables.append(Text(f"{answer.gpu} · {answer.model} · {_goal(query)}: {answer.status}", style="bold"))
        if answer.current:
            renderables.append(current_view(answer, answer.current, query))
        after_apply = None  # where what follows the summary's apply lines starts
        if answer.plans:
            renderables.append(plan_summary(answer, answer.plans[0], model, query.node_gpus, version,
                                            query.memory.own_source, len(query.gpus) > 1, write_unoffered, names,
                                            (config_keys or {}).get(answer.gpu, NO_CONFIG_APPLIED), query.given_pins,
                                            query.host_ram_named, query.batch_named))
            after_apply = len(renderables)
            if query.top > 1:  # the ranking asked for, even of one plan: the note below counts its rows
                renderables.append(ranking_view(answer, model, names))
            if len(answer.plans) < query.top:
                why = (_no_alternative(query, answer) if answer.status == "optimal" else
                       f"the time limit stopped the search; {names.longer_limit(answer.deadline_passed)} may find "
                       "more, and better ones")
                renderables.append(Text(f"{counted(len(answer.plans), 'plan')} of the {query.top} asked for: {why}"))
            elif answer.status == "feasible":
                proven = "these plans" if len(answer.plans) > 1 else "this plan"
                renderables.append(Text(unproven_hint(names, answer.deadline_passed).format(proven), style="yellow"))
        else:
            renderables.append(Text(answer.no_plan_line, style="red"))
            if answer.explanation is None:
                hint = (undecided_hint(names, answer.deadline_passed) if answer.status == "unknown"
                        else no_plan_hint(names))
                renderables.append(Text(hint, style="dim"))
        if answer.explanation:
            renderables.append(_explanation(answer.explanation))
        if after_apply is not None and after_apply < len(renderables):  # a blank line ends the lines to paste
            renderables.insert(after_apply, Text())
        renderables.append(Text())
    return Group(*renderables)


def answers_text(answers: Sequence[Answer], query: Query | None = None, catalog: Catalog | None = None, *,
                 width: int = PIPED_WIDTH, color: bool = False) -> str:
    """The text ``solve`` prints for `query`'s `answers` (of `solver.plan`, `solver.api.answer_query`, or
    `with_config_verdicts`; `query` None: the one they hold, ``Answer.query``), laid out for `width` columns as on a
    pipe that wide, with ANSI colour codes where `color`; `catalog` the one they were planned with (default: the
    shipped one). The text's words are the answers' own (the query's `option_names`). `QueryError` (one line) for a
    bad argument, answers of another query, or, without `query`, answers that hold none (rebuilt from their JSON)
    or hold different ones."""
    if isinstance(answers, Answer):  # a notebook's ``(answer,) = solver.plan(...)``, then its answer alone
        raise QueryError("answers must be a list or a tuple, got an Answer: pass (answer,), or plan's tuple")
    check_types(("answers", answers, list | tuple), ("query", query, Query | None),
                ("catalog", catalog, Catalog | None))
    check_text_options(width, color)
    for index, answer in enumerate(answers):
        check_types((f"answers[{index}]", answer, Answer))
    query = query if query is not None else _held_query(answers)
    catalog = catalog if catalog is not None else load_catalog()
    check_answers_of(answers, query, catalog.model(query.model).name)
    return view_text(answers_view(answers, query, catalog, query.trinity_version), width, color)


def _held_query(answers: Sequence[Answer]) -> Query:
    """The query `answers` hold (``Answer.query``, `solver.api.answer_query`'s), the same for each; `QueryError`
    where there are none, or one holds none (an answer rebuilt from its JSON) or another query."""
    if not answers:
        raise QueryError("answers: an empty list holds no query: pass the answers of solver.plan, or the query too")
    held = answers[0].query
    for index, answer in enumerate(answers):
        if answer.query is None:
            raise QueryError(f"answers[{index}] holds no query (an answer rebuilt from its JSON keeps none): pass the "
                             "query it answers, answers_text(answers, query)")
        if answer.query != held:
            raise QueryError(f"answers[{index}] answers another query than answers[0]: pass the answers of one call")
    assert held is not None  # answers[0]'s, checked above
    return held


def unproven_hint(names: OptionNames, deadline_passed: bool = False) -> str:
    """The line under a ``feasible`` answer's plans ({}: which), naming the time limit as `names` do (and the call's
    deadline_s where it had passed: `OptionNames.longer_limit`)."""
    return (f"the time limit stopped the search before it proved {{}} the best: "
            f"{names.longer_limit(deadline_passed)} may find better ones")


def no_plan_hint(names: OptionNames) -> str:
    """The line under a reason without an explanation, naming the option that explains as `names` do."""
    return f"{names.explain} says why, rule by rule, and names plans beyond these limits where there are any"


def undecided_hint(names: OptionNames, deadline_passed: bool = False) -> str:
    """The line under a reason where the time limit stopped the search before it decided, naming the time limit as
    `names` do (and the call's deadline_s where it had passed: `OptionNames.longer_limit`)."""
    return f"{names.longer_limit(deadline_passed)} lets the search find a plan or prove that none exists"


UNPROVEN_HINT = unproven_hint(COMMAND_OPTIONS)
"""`unproven_hint` in the command's words."""
UNDECIDED_HINT = undecided_hint(COMMAND_OPTIONS)
"""`undecided_hint` in the command's words."""
