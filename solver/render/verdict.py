"""The verdict on a config's own settings (`solve --from-config`): whether they train, and why not."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from solver.query import REFUSED_CONFIG_CODES, Query
from solver.results import Answer, CurrentSettings, host_need_words
from solver.rules import fewer_reasons
from solver.tables import Setting, counted


def current_view(answer: Answer, current: CurrentSettings, query: Query) -> Group:
    """The verdict on a config's own settings, then a line for each of its problems (wrapped lines indented under
    the first): ``refused:`` where it refuses the config (its code in `REFUSED_CONFIG_CODES`), else ``but:``."""
    problems = Table.grid(padding=(0, 1))
    for problem, refuses in zip(current.config_problems, _refusing(current), strict=True):
        problems.add_row("  refused:" if refuses else "  but:", problem, style="yellow")
    verdict = _verdict(answer, current, query, bool(current.config_problems))
    return Group(verdict, problems) if current.config_problems else Group(verdict)


def _verdict(answer: Answer, current: CurrentSettings, query: Query, problems: bool) -> Text:
    """Whether a config's own settings train, and why not (a broken rule, a cell that ran out of memory, the host
    memory, or nothing that vouches), in short sentences; yellow where they do not, or do with `problems`."""
    setting = Setting(env=current.env, offload=current.offload, sp=current.sp)
    count = counted(current.gpus, "trainer GPU") + ("" if current.gpus_given else
                                                    " (the budget's: the config does not give its GPUs)")
    runs = f"{current.config} runs" if current.length_given else f"{current.config}'s settings would run"
    env = f"Env {'on' if current.env else 'off'}, read from this shell's {current.env_variable}"
    length = "" if current.length_given else f"{query.option_names.length}; "
    said = f"{runs} {setting.label} on {count} at {counted(current.max_model_len, 'token')} ({length}{env}): "
    if current.plan is not None:
        evidence = current.plan.evidence_text(answer.gpu, answer.model)
        if current.refused:
            return Text(f"{said}it fits in memory ({evidence}), but the config as written is refused "
                        f"({_refusing_lines(current)}).{_dearer(answer, current, query)}", style="yellow")
        return Text(f"{said}it trains ({evidence}).{_dearer(answer, current, query)}",
                    style="yellow" if problems else "green")
    cell = current.out_of_memory
    host = [] if current.host_memory_needed is None else [(
        f"{host_need_words(f'{current.host_memory_needed:.1f}', current.offload)}, more than "
        f"{query.host_ram_bound_words}")]
    if current.broken_rule:
        verdict = [f"it breaks a rule: {current.broken_rule}", *host]
    elif cell is not None:  # the GPU memory first: more host memory would not make it train
        fewer = "; ".join(fewer_reasons(cell, current.gpus, current.offload))
        longer = (f"at {counted(current.max_model_len, 'token')} each GPU holds more than at {cell.max_model_len}" if
                  cell.max_model_len < current.max_model_len and current.max_token_len_per_gpu is None else "")
        verdict = [f"{cell.words(answer.gpu, answer.model)}, so {setting.label} ran out of memory there",
                   *filter(None, (fewer, longer)), *host]
    elif host and not _short_of_gpu_memory(current):
        verdict = host
    else:
        verdict = [f"nothing in {query.evidence_sources} says it trains{_predicted(current)}", *host]
    refused = [f"the config as written is refused too ({_refusing_lines(current)})"] if current.refused else []
    follows = ("the best plan follows" if answer.plans else "no plan was found within the time limit"
               if answer.status == "unknown" else "no plan trains either (the reason follows)")
    sentences = [*verdict, *refused, follows]
    return Text(said + " ".join(_sentence(words, first=not i) for i, words in enumerate(sentences)), style="yellow")


def _sentence(words: str, first: bool = False) -> str:
    """`words` as a sentence of the verdict: with a capital and a full stop (the `first` goes on after the colon of
    what the config runs, so it keeps its case)."""
    return f"{words if first else words[:1].upper() + words[1:]}."


def _refusing(current: CurrentSettings) -> list[bool]:
    """For each of the config's problems, whether it refuses the config (its code in `REFUSED_CONFIG_CODES`; none
    does in JSON made before codes)."""
    codes = current.config_problem_codes or (None,) * len(current.config_problems)
    return [code in REFUSED_CONFIG_CODES for code in codes]


def _refusing_lines(current: CurrentSettings) -> str:
    """Which lines below say why the config is refused, in words: ``the refused: line below says why`` (or
    ``lines ... say``); `current_view` marks them ``refused:`` rather than ``but:``, so none need counting."""
    several = sum(_refusing(current)) > 1
    return f"the refused: {'lines' if several else 'line'} below {'say' if several else 'says'} why"


def _dearer(answer: Answer, current: CurrentSettings, query: Query) -> str:
    """Where a config's own settings train by estimate without Env and the best plan, at the same length, costs more:
    why that plan ranks first and what differs, in sentences after a space ("" otherwise: a longer plan's cost is
    its length's). Estimates keep Env on unless --no-env (`estimates_setting`), so the config's were no candidate;
    where the plan differs in Env alone, Env's ranking weight is all its cost adds. A token budget that
    differs too (the config's own lowered one; the plan's, the most that fits) the cost does not count. Options are
    named as `query`'s names do."""
    own, best = current.plan, answer.plans[0] if answer.plans else None
    if (own is None or best is None or best.cost <= own.cost or own.evidence != "estimated" or own.env
            or best.max_model_len != own.max_model_len):
        return ""
    costs = f"{best.cost:.4g} against {own.cost:.4g}"
    if (best.offload, best.sp, best.gpus) != (own.offload, own.sp, own.gpus):
        runs = (f"{best.setting.label}, not {own.setting.label}" if best.gpus == own.gpus else
                f"{best.setting.label} on {counted(best.gpus, 'GPU')}, not {own.setting.label} on {own.gpus}")
        differs = f"The plan below runs {runs}, and costs more ({costs})."
    else:  # Env alone (the cost does not count the token budget)
        differs = f"The plan below adds Env: its cost is higher ({costs}) by Env's ranking weight alone, not step time."
    without_env = query.option_names.switch("env", False)
    said = [f"The planner did not rank these settings: its estimates keep Env on ({without_env} estimates without it).",
            differs]
    if best.max_token_len_per_gpu != own.max_token_len_per_gpu:
        fewer = "fewer" if best.max_token_len_per_gpu > own.max_token_len_per_gpu else "more"
        said.append(f"Its max_token_len_per_gpu is {best.max_token_len_per_gpu}, not {own.max_token_len_per_gpu} "
                    f"({fewer} micro-batches, which the cost does not count).")
    return "".join(f" {sentence}" for sentence in said)


def _short_of_gpu_memory(current: CurrentSettings) -> bool:
    """Whether the memory model predicts the settings do not fit the GPUs (their peak, or the optimizer step's)."""
    return current.predicted is not None and (current.predicted[0] > current.predicted[1]
                                              or current.predicted_step is not None)


def _predicted(current: CurrentSettings) -> str:
    """The memory model's figures for settings no table speaks of, in words ("" without them)."""
    if current.predicted is None:
        return ""
    total, usable = current.predicted
    step = "" if current.predicted_step is None else (
        f", but {current.predicted_step[0]:.2f} GiB at the optimizer step, more than the "
        f"{current.predicted_step[1]:.2f} it may take")
    return f" (the memory model predicts {total:.1f} GiB per GPU, of {usable:.1f} usable{step})"
