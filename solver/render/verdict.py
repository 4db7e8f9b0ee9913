"""The verdict on a config's own settings (`solve --from-config`): whether they train, and why not."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from solver.query import REFUSED_CONFIG_CODES, Query
from solver.render.phrases import fewer
from solver.results import Answer, CurrentSettings, host_need_words
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
    memory, or nothing that vouches), in words; yellow where they do not, or do with `problems`."""
    setting = Setting(env=current.env, offload=current.offload, sp=current.sp)
    count = counted(current.gpus, "trainer GPU") + ("" if current.gpus_given else
                                                    " (the budget's: the config does not give its GPUs)")
    runs = f"{current.config} runs" if current.length_given else f"{current.config}'s settings would run"
    env = f"Env {'on' if current.env else 'off'}, read from this shell's {current.env_variable}"
    length = "" if current.length_given else "--len; "
    said = f"{runs} {setting.label} on {count} at {current.max_model_len} tokens ({length}{env}): "
    if current.plan is not None:
        evidence = current.plan.evidence_text(answer.gpu, answer.model)
        if current.refused:
            return Text(f"{said}it fits in memory ({evidence}), but the config as written is refused "
                        f"({_refusing_lines(current)}){_dearer(answer, current)}", style="yellow")
        return Text(f"{said}it trains ({evidence}){_dearer(answer, current)}", style="yellow" if problems else "green")
    cell = current.out_of_memory
    host = "" if current.host_memory_needed is None else (
        f"{host_need_words(f'{current.host_memory_needed:.1f}', current.offload)}, more than "
        f"{query.host_ram_bound_words}")
    if current.broken_rule:
        verdict = f"it breaks a rule: {current.broken_rule}"
    elif cell is not None:  # the GPU memory first: more host memory would not make it train
        longer = (f", and at {current.max_model_len} tokens each GPU holds more" if
                  cell.max_model_len < current.max_model_len and current.max_token_len_per_gpu is None else "")
        verdict = (f"{cell.words(answer.gpu, answer.model)}, so {setting.label} ran out of memory there"
                   f"{fewer(cell, current.gpus, current.offload)}{longer}{'; and ' + host if host else ''}")
    elif host and not _short_of_gpu_memory(current):
        verdict = host
    else:
        verdict = (f"nothing in {query.evidence_sources} says it trains{_predicted(current)}"
                   f"{'; and ' + host if host else ''}")
    follows = ("the best plan follows" if answer.plans else "and no plan was found within the time limit"
               if answer.status == "unknown" else "nor does any plan (the reason follows)")
    refused = f"; and the config as written is refused too ({_refusing_lines(current)})" if current.refused else ""
    return Text(f"{said}{verdict}{refused}; {follows}", style="yellow")


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


def _dearer(answer: Answer, current: CurrentSettings) -> str:
    """Where a config's own settings train by estimate without Env and the best plan, at the same length, costs more:
    why it is the best, in words, naming what differs ("" otherwise: a longer plan's cost is its length's). Estimates
    keep Env on unless --no-env (`estimates_setting`), so the config's were no candidate; Env's cost is a tie-break. A
    token budget that differs too (the config's own lowered one; the plan's, the most that fits) the cost does not
    count."""
    own, best = current.plan, answer.plans[0] if answer.plans else None
    if (own is None or best is None or best.cost <= own.cost or own.evidence != "estimated" or own.env
            or best.max_model_len != own.max_model_len):
        return ""
    beyond_env = (best.offload, best.sp) != (own.offload, own.sp)
    differs = [f"in its setting, {best.setting.label} against {own.setting.label}" + (
        " (estimates keep Env on; --no-env estimates without it)" if best.env else "")] if beyond_env else [
        "in Env, which estimates keep on (--no-env estimates without it)"] if best.env else []
    if best.max_token_len_per_gpu != own.max_token_len_per_gpu:
        fewer = "fewer" if best.max_token_len_per_gpu > own.max_token_len_per_gpu else "more"
        differs.append(f"in max_token_len_per_gpu, {best.max_token_len_per_gpu} against {own.max_token_len_per_gpu} "
                       f"({fewer} micro-batches, which the cost does not count)")
    return (f"; the best plan below costs {'more' if beyond_env else 'a little more'} ({best.cost:.4g} against "
            f"{own.cost:.4g}): it differs {', and '.join(differs)}")


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
