"""`solve memory`'s breakdown of one GPU's predicted peak (view and JSON), and the memory-model file `solve
calibrate` writes."""

from __future__ import annotations

import json

import yaml
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from solver.memory import (
    CEILING,
    FROZEN_BASE_BYTES,
    GRID,
    HELD_STATE_BYTES,
    STATE_BYTES,
    MemoryAnswer,
    MemoryEstimate,
    shown_host_gib,
)
from solver.query import counts_reference, default_margin
from solver.render.layout import PIPED_WIDTH, check_text_options, view_text
from solver.render.phrases import CEILING_WORDS, hint_said_once
from solver.results import Calibration, CautionCode
from solver.rules import (
    API_OPTIONS,
    COMMAND_OPTIONS,
    OptionNames,
    TablesVerdict,
    fewer,
    host_ram_bound_words,
    host_ram_check_words,
    smaller_card_words,
    tables_said,
    trainer_gpus_on_node,
)
from solver.tables import (
    NODE_GPUS,
    Catalog,
    CriticStates,
    MemoryModel,
    Model,
    QueryError,
    Setting,
    and_joined,
    check_types,
    counted,
    host_moment_words,
    host_need_detail,
    host_need_purpose,
    load_catalog,
    load_memory_model,
    lower_host_count_hint,
    release_name,
    shown_number,
    shown_parameters,
)
from solver.tables.peft_match import ALL_LINEAR


def calibration_json(fitted: Calibration) -> str:
    """What ``solve calibrate --json`` prints: the fitted memory model (its source, coefficients, margin and fit, as
    the file --out writes holds them) and what the fit found in the cells (`Calibration`'s fields, ``poor_fit``
    last)."""
    return json.dumps(fitted.model_dump(mode="json"), indent=2)


def memory_model_yaml(memory_model: MemoryModel) -> str:
    """A memory-model file (``tables/memory-model.yaml``'s format), with comments saying what it is."""
    fit = memory_model.fit
    lines = [
        "# Memory-model coefficients, written by `solve calibrate` (solver/calibrate.py): a linear program",
        "# fitted on the positive and negative evidence of the cells below. Regenerate, never edit by hand.",
        "# The terms and their units are described in solver/memory.py.",
        "source: " + _yaml_string(memory_model.source),
        "coefficients:",
        *(f"  {name}: {value}" for name, value in memory_model.coefficients.model_dump().items()),
        f"margin: {memory_model.margin}  # default safety margin of estimated plans: fit in this much less than usable",
        "fit:  # on the observations it was fitted on",
        *(f"  {name}: {value}" for name, value in fit.model_dump(exclude={"range"}).items()),
        *(["  range:  # what the observations span: past it, estimates extrapolate, and say so"] if fit.range else []),
        *(f"    {name}: {str(value).lower() if isinstance(value, bool) else value}"
          for name, value in (fit.range.model_dump() if fit.range else {}).items()),
    ]
    return "\n".join(lines) + "\n"


def _yaml_string(text: str) -> str:
    """`text` as a double-quoted YAML scalar that PyYAML reads back: YAML's escapes (JSON's write a character
    beyond U+FFFF as a surrogate pair, which YAML refuses)."""
    dumped: str = yaml.safe_dump(text, default_style='"', allow_unicode=True, width=float("inf"))
    return dumped.rstrip("\n")


def memory_label(answer: MemoryAnswer, moe: bool) -> str:
    """The breakdown's heading: the model (with its active parameters where it is a mixture of experts, `moe`), the
    GPUs, setting (its LoRA, its critic, DPO, the Trinity release named), length and token budget, the margin, and the
    source of a memory model of one's own, if any."""
    active = f", {shown_parameters(answer.model_active_parameters_b)} active" if moe else ""
    setting = Setting(env=answer.env, offload=answer.offload, sp=answer.sp)
    own_budget = ", your token budget" if answer.max_token_len_per_gpu is not None else ""
    lora = f", LoRA rank {answer.lora_rank}" if answer.lora_rank else ""
    critic = f", critic {answer.critic}" if answer.critic else ""
    dpo = ", DPO" if answer.dpo else ""
    release = ("" if answer.trinity_version is None  # as solve names it back: 0.5.1 for v0.5.1
               else f", Trinity {release_name(answer.trinity_version) or answer.trinity_version}")
    return (f"{answer.model} ({shown_parameters(answer.model_parameters_b)} parameters{active}) on {answer.gpus} x "
            f"{answer.gpu} ({answer.memory_gib:.1f} GiB), {setting.label}{lora}{critic}{dpo}{release}, "
            f"{counted(answer.max_model_len, 'token')} "
            f"({answer.tokens_per_gpu} per GPU{own_budget}), margin {answer.margin:g}"
            f"{f', memory model: {answer.memory_model_source}' if answer.memory_model_source else ''}")


def memory_text(answer: MemoryAnswer, catalog: Catalog | None = None, *, width: int = PIPED_WIDTH,
                color: bool = False) -> str:
    """The text ``solve memory`` prints for `answer` (`solver.api.memory_answer`'s), laid out for `width` columns as on
    a pipe that wide, with ANSI colour codes where `color`; `catalog` the one it was estimated with (default: the
    shipped one). Its lines name the API's keywords (``host_ram_gb``), and where the setting does not train, the
    planner's call (`planner_call`) in place of the command's ``solve ...`` line: with the memory-model file the
    answer was estimated with, or, for a `MemoryModel` passed to `memory_answer`, which the call cannot name, a line
    above it that asks for it by its source; ``catalog=catalog`` where the model or GPU type is one of your own, which
    the shipped catalogue lacks (`catalog` holds it). `QueryError` (one line) for a bad argument (for
    `estimate_memory`'s estimate, naming `memory_answer`, which gives one with its question)."""
    if isinstance(answer, list | tuple) and answer and all(isinstance(one, MemoryAnswer) for one in answer):
        raise QueryError(f"answer must be a MemoryAnswer, got a {type(answer).__name__} of "
                         f"{counted(len(answer), 'MemoryAnswer')} (memory_answer gives one alone): pass one, such as "
                         "answers[0]")
    if isinstance(answer, MemoryEstimate) and not isinstance(answer, MemoryAnswer):
        raise QueryError("answer must be a MemoryAnswer, got a MemoryEstimate (estimate_memory's, which holds no "
                         "question to show): call memory_answer with the same arguments for text")
    check_types(("answer", answer, MemoryAnswer), ("catalog", catalog, Catalog | None))
    check_text_options(width, color)
    estimated = catalog if catalog is not None else load_catalog()
    model = estimated.model(answer.model)
    passed = answer.memory_model_source if answer.memory_model is None else None  # a MemoryModel, not a file
    call = planner_call(answer, own_catalog=catalog is not None and not _shipped(answer))
    view = memory_view(answer, memory_label(answer, model.moe is not None), answer.gpu, answer.model, answer.gpus,
                       answer.offload, call, own_budget=answer.max_token_len_per_gpu is not None,
                       names=API_OPTIONS, passed_memory=passed, catalog=estimated)
    return view_text(view, width, color)


def _shipped(answer: MemoryAnswer) -> bool:
    """Whether the shipped catalogue has `answer`'s model and GPU type (else one is of your own)."""
    shipped = load_catalog()
    try:
        shipped.model(answer.model)
        shipped.gpu(answer.gpu)
    except QueryError:
        return False
    return True


def planner_call(answer: MemoryAnswer, own_catalog: bool = False) -> str:
    """The `solver.plan` call that looks for a setting that trains where `answer`'s does not: the same model, GPU
    type, GPUs (as a budget) and length, its GPUs per node and host memory where given, its margin where it is
    not the shipped memory model's default, the memory-model file it was estimated with (``memory=
    solver.load_memory_model(...)``), if any, its LoRA rank, targets and exclusions, whether it counts a reference
    model where that is not what the planner takes for its LoRA rank (`counts_reference`: ``reference_model=False``,
    as the command's --no-reference), its critic, DPO and Trinity release, if any, and, with `own_catalog`,
    ``catalog=catalog``, the catalogue that holds a model or GPU type of your own; without `sp`, `env`, `offload` and
    a token budget, which the planner tries for itself."""
    keywords = [f"gpu={json.dumps(answer.gpu)}", f"budget_gpus={answer.gpus}", f"max_model_len={answer.max_model_len}",
                *([f"node_gpus={answer.node_gpus}"] if answer.node_gpus != NODE_GPUS else []),
                *([f"host_ram_gb={shown_number(answer.host_ram_gib)}"] if answer.host_ram_gib is not None else [])]
    own_model = answer.memory_model is not None or answer.memory_model_source is not None
    if own_model or answer.margin != default_margin(load_memory_model(), answer.memory_gib):
        keywords.append(f"margin={answer.margin:g}")
    if answer.memory_model is not None:
        keywords.append(f"memory=solver.load_memory_model({json.dumps(answer.memory_model)})")
    if answer.lora_rank:
        keywords.append(f"lora_rank={answer.lora_rank}")
    if answer.lora_target_modules is not None:
        keywords.append(f"lora_targets={json.dumps(answer.lora_target_modules)}")
    if answer.lora_exclude_modules is not None:
        keywords.append(f"lora_exclude_modules={json.dumps(answer.lora_exclude_modules)}")
    if answer.reference_model != counts_reference(None, answer.lora_rank):
        keywords.append(f"reference_model={answer.reference_model}")
    if answer.critic:
        keywords.append(f"critic={json.dumps(answer.critic)}")
    if answer.dpo:
        keywords.append("dpo=True")
    if answer.trinity_version is not None:
        keywords.append(f"trinity_version={json.dumps(answer.trinity_version)}")
    if own_catalog:
        keywords.append("catalog=catalog")
    return f"solver.plan({', '.join([json.dumps(answer.model), *keywords])})"


def memory_view(result: MemoryAnswer, label: str, gpu: str, model: str, gpus: int, offload: bool,
                planner_command: str, own_budget: bool = False, names: OptionNames = COMMAND_OPTIONS,
                passed_memory: str | None = None, *, catalog: Catalog) -> Group:
    """A breakdown table of one GPU's predicted peak memory, the verdict (where it does not fit, with the cell of a
    smaller card's table that says it trains, a note: `smaller_card_words`), the longest length that fits
    (at the user's token budget with `own_budget`), the host memory a node needs (`offload`: for the states
    too; the host memory option named as `names` do), its cautions, what `gpu`'s tables say of the same setting for
    `model` on `gpus` GPUs (they decide where they speak), and where the setting does not train, the planner's
    command that finds one that does (`planner_command`, a line of its own to copy; `passed_memory`: the source of a
    memory model the caller passed, which the command cannot name, and the line above it asks for); `catalog`: the one
    it was estimated with, which has its model and GPU type (for the host memory under other Trinity releases)."""
    lines: list[RenderableType] = [Text(label, style="bold"), _terms_table(result)]
    if result.lora_rank:
        lines.append(Text(lora_states_words(result)))
    if result.critic:
        lines += [Text(critic_states_words(result)), Text(critic_pass_words(result))]
    lines.append(Text(_fit_words(result), style=_fit_style(result)))
    if result.smaller_card is not None:
        lines.append(Text(f"smaller card: {smaller_card_words(result.smaller_card, gpu, model)}"))
    lines.append(Text(_longest_words(result, gpu, model, gpus, offload, own_budget)))
    hint = ""  # what naming a Trinity release counts, where the host memory line says it
    if result.host_memory_gib is not None:
        shape, compute_capability = catalog.model(result.model), catalog.gpu(result.gpu).compute_capability
        hint = _lower_count_hint(result, offload, names, shape, compute_capability)
        lines.append(_host_memory_line(result, result.host_memory_gib, offload, names, shape, compute_capability,
                                       hint))
    lines += [Text(f"caution: {caution}", style="yellow")
              for caution in hint_said_once(result.cautions, result.caution_codes, hint)]
    if result.beyond_calibration:
        lines.append(Text(f"beyond the memory model's calibration: {', '.join(result.beyond_calibration)}; the "
                          "prediction extrapolates there", style="yellow"))
    if result.tables is not None:
        lines.append(_tables_line(result, result.tables, gpu, model, gpus, offload, own_budget))
    if not result.trains:  # solve memory judges one setting: the planner tries them all
        with_memory = f", with memory= the MemoryModel you passed ({passed_memory})" if passed_memory else ""
        budgets = "" if result.dpo else f" (lower token budgets too with {names.token_budget_auto})"
        lines += [Text(f"to find a setting that trains, run the planner, which tries every SP, Env and Offload{budgets}"
                       f"{with_memory}:"), Text(f"  {planner_command}", no_wrap=True, overflow="ignore")]
    return Group(*lines)


def lora_states_words(answer: MemoryAnswer) -> str:
    """What a LoRA run's states count (`solver.memory.lora_states_bytes`), and how the tables, which measured full
    fine-tuning, speak of it (with a critic too, neither way: `solver.rules.tables_verdict`)."""
    held = ("in host memory with Offload" if answer.offload
            else f"sharded over the {answer.gpus} GPUs" if answer.gpus > 1 else "on the GPU")
    speak = ("they speak where they say the setting trains, not where it ran out of memory" if answer.critic is None
             else "a cell that ran out of memory says nothing of it")
    adapted = ("on every linear layer but the output projection" if answer.lora_target_modules in (None, ALL_LINEAR)
               else f"on the linear layers target_modules '{answer.lora_target_modules}' matches") + (
                   "" if answer.lora_exclude_modules is None
                   else f" less those exclude_modules '{answer.lora_exclude_modules}' matches")
    return (f"states with LoRA rank {answer.lora_rank}: the frozen base's fp32 weights ({FROZEN_BASE_BYTES} bytes per "
            f"parameter) and {answer.lora_parameters:,} adapter parameters {adapted} ({STATE_BYTES} bytes each: fp32 "
            f"weights, gradients and Adam's two moments), {held}; the tables measured full fine-tuning: {speak}")


CRITIC_HELD_WORDS: dict[CriticStates | None, str] = {
    "offloaded": "in host memory throughout (FSDP2's offload_policy: its own update gathers each layer from there and "
                 "steps on the CPU), none on the GPUs",
    "reloaded": f"in host memory while the actor trains ({HELD_STATE_BYTES} of the {STATE_BYTES} bytes, less the "
                "gradients, which its own update frees before it offloads the rest), and back on each GPU for its own "
                "update and optimizer step (param_offload and optimizer_offload without offload_policy)",
}
"""Where a critic's states are held, in words, for the `CriticStates` that keep them off the GPUs while the actor
trains (a resident one's are a figure: `critic_states_words`)."""


def critic_states_words(answer: MemoryAnswer) -> str:
    """What a PPO critic's states count (`solver.memory.resident_critic_gib`), and how the tables, which measured the
    actor alone, speak of it."""
    held = CRITIC_HELD_WORDS.get(
        answer.critic, f"{answer.critic_gib:.2f} GiB on each GPU beside the actor's pass and optimizer step: "
                       f"{HELD_STATE_BYTES} of the {STATE_BYTES} bytes, less the gradients, which the critic's own "
                       "update frees as it ends")
    speak = ("they speak where they say the setting ran out of memory, not where it trained" if not answer.lora_rank
             else "no cell vouches for the run either, so with LoRA they say nothing of it")
    return (f"critic: {shown_parameters(answer.critic_parameters_b)} parameters (the model with a value head for "
            f"its output projection), {STATE_BYTES} bytes each (fp32 weights, gradients and Adam's two moments), "
            f"{held}; the tables measured the actor alone: {speak}")


def critic_pass_words(answer: MemoryAnswer) -> str:
    """A PPO critic's own update, the second activation peak (`solver.memory.critic_pass_gib`), against the usable
    memory, with what it holds."""
    held = [] if answer.offload else [(
        "the actor's states less their gradients (the actor frees them after each of its updates, which follow the "
        "critic's)")]
    held += {"resident": ["the critic's states"], "reloaded": ["the critic's states (back on the GPU for it)"]}.get(
        answer.critic or "", [])
    held.append("its activations (every term but the logits; the checkpoints and recompute at least their floor "
                "without them)")
    over = "" if answer.critic_pass_fits else " (too much)"
    return (f"critic's own update: {answer.critic_pass_gib:.2f} GiB of the {answer.usable_gib:.2f} usable{over}, "
            f"holding {and_joined(held)}")


def _terms_table(result: MemoryEstimate) -> Table:
    """The breakdown's table: GiB per term, the total and what is usable (a resident critic's states a row of their
    own)."""
    view = Table()
    view.add_column("term")
    view.add_column("GiB", justify="right")
    for term, gib in result.terms.items():
        view.add_row(term.replace("_", " "), f"{gib:.2f}")
    if result.critic_gib:
        view.add_row("critic", f"{result.critic_gib:.2f}")
    view.add_row(Text("total", style="bold"), Text(f"{result.total_gib:.2f}", style="bold"))
    view.add_row("usable", f"{result.usable_gib:.2f}")
    return view


def _fit_words(result: MemoryEstimate) -> str:
    """Whether the breakdown fits, by the memory model's estimate (so it says), by how much, and what share of the
    memory is usable (where the activations, or a critic's own update, decide), and (without Offload) what the
    optimizer step takes of its share."""
    fits = result.fits
    usable = f"the usable memory ({result.usable_gib / result.memory_gib:.1%} of the memory, the margin taken off)"
    critic = result.critic_pass_binds
    spare = ("to spare at the optimizer step" if result.step_binds
             else f"to spare at the critic's own update, of {usable}" if critic else f"to spare of {usable}")
    # Where the host memory rules the setting out, a bare "fits" would read as the answer: say whose memory it is.
    # Either way the words are the memory model's estimate (the tables' line, if any, says what a cell says).
    fitted = ("fits (estimated)" if result.host_fits
              else "fits the GPUs' memory (estimated; the host memory below rules it out)")
    unfit = "does not fit (estimated)"
    verdict = (f"{fitted}: {result.headroom_gib:.2f} GiB {spare}" if fits
               else f"{unfit}: the optimizer step is {-result.headroom_gib:.2f} GiB over" if result.step_binds
               else f"{unfit}: the critic's own update is {-result.headroom_gib:.2f} GiB over {usable}" if critic
               else f"{unfit}: {-result.headroom_gib:.2f} GiB over {usable}")
    if result.step_gib:  # without Offload: the optimizer step's own peak, the states and Adam's temporary
        share = result.step_usable_gib / result.memory_gib
        step = "it" if result.step_binds and not fits else "the optimizer step"  # named already where it is over
        verdict += (f"; {step} takes {result.step_gib:.2f} GiB of the {result.step_usable_gib:.2f} it "
                    f"may ({share:.1%} of the memory){'' if result.step_fits else ': too much'}")
    return verdict


def _fit_style(result: MemoryEstimate) -> str:
    """The verdict's colour: green where the setting fits everywhere, yellow where the GPUs' memory holds it but the
    host memory does not (as the tables' line says it), red where the GPUs' memory does not."""
    return "red" if not result.fits else "green" if result.host_fits else "yellow"


def _lower_count_hint(result: MemoryAnswer, offload: bool, names: OptionNames, model: Model,
                      compute_capability: str | None) -> str:
    """Where no Trinity release is named and some release counts the host memory need lower, that naming one counts its
    own, and why, in words (`lower_host_count_hint`, for `model` on a GPU of `compute_capability`; `offload`: the
    states are held there too); "" otherwise."""
    moment = host_moment_words(result.host_training_gib, result.model_loading, offload, result.critic)
    return lower_host_count_hint(
        result.trinity_version is not None, result.model_loading,
        trainer_gpus_on_node(result.gpus, result.node_gpus), bool(moment), result.reference_model,
        model.tied_embeddings, compute_capability, names.release_option())


def _host_memory_line(result: MemoryAnswer, need_gib: float, offload: bool, names: OptionNames, model: Model,
                      compute_capability: str | None, hint: str) -> Text:
    """The host memory a node needs (`need_gib`; `offload`: for the states too; a critic's where they are held there,
    with their share: `host_need_purpose`, `host_need_detail`),
    and whether --host-ram (the option as `names` name it) holds it, as the plan summary says it
    (`host_ram_check_words`: where neither Offload, --host-ram nor a caution on the need makes it matter, nothing),
    and as it does, where a
    Trinity release is named what the other needs where it differs (`estimate_other_release_words`), else where some
    release counts less, that naming one counts its own (`hint`: `_lower_count_hint`), for `model` on a GPU of
    `compute_capability`."""
    from solver.trinity.plan_keys import estimate_other_release_words  # no ruamel

    if result.host_ram_gib is not None and not result.host_fits:
        room = f"; more than {host_ram_bound_words(result.host_ram_gib, names.host_ram)}: it does not train there"
    elif offload or result.host_ram_gib is not None or CautionCode.HOST_MEMORY_UNCHECKED in result.caution_codes:
        room = host_ram_check_words(result.host_ram_gib, names.host_ram)
    else:
        room = ""
    detail = host_need_detail(offload, result.reference_model, result.critic, result.host_critic_gib or None)
    moment = host_moment_words(result.host_training_gib, result.model_loading, offload, result.critic)
    what = f"{host_need_purpose(offload, result.critic)} ({detail}{'; here ' + moment if moment else ''})"
    release = estimate_other_release_words(result, model, compute_capability) + hint
    return Text(f"host memory: {shown_host_gib(need_gib):.1f} GiB per node {what}{room}{release}",
                style="" if result.host_fits else "red")


def _tables_line(result: MemoryEstimate, tables: TablesVerdict, gpu: str, model: str, gpus: int, offload: bool,
                 own_budget: bool) -> Text:
    """What `gpu`'s tables say of the breakdown's setting (`tables`), and where that overrules the memory model or
    the host memory rules it out."""
    said = tables_said(tables, gpu, model, gpus, offload)
    disagree = "; where the memory model disagrees, the table, a measurement, decides" if (
        tables.trains != result.fits) else ""
    by_tokens = (f" (a row is taken for its tokens per GPU, {result.tokens_per_gpu} by your budget, not for "
                 "the length)") if own_budget else ""
    host_short = tables.trains and not result.host_fits  # the tables speak of GPU memory only
    host = "; that is the GPUs' memory, and the host memory above rules it out" if host_short else ""
    return Text(f"tables: {said}{by_tokens}{disagree}{host}",
                style="yellow" if host_short else "green" if tables.trains else "red")


def _longest_words(result: MemoryAnswer, gpu: str, model: str, gpus: int, offload: bool, own_budget: bool) -> str:
    """The longest length the memory model fits with the breakdown's setting (with `own_budget`: that its token
    budget holds), in words, with what `gpu`'s tables say where a measurement there refutes it, or lets the setting
    train longer."""
    if own_budget:  # the memory is the budget's whatever the length
        return (f"longest length its token budget holds (budget x SP), which the memory model fits: "
                f"{counted(result.longest_len, 'token')}" if result.longest_len else
                "no length fits with this setting and token budget, by the memory model")
    at_least = "at least " if result.longest_len == CEILING else ""  # the longest length it is asked about
    longest = (f"longest length the memory model fits with this setting: {at_least}{result.longest_len} tokens (on "
               f"a {GRID}-token grid{'; ' + CEILING_WORDS if at_least else ''})" if result.longest_len else
               "no length fits with this setting, by the memory model")
    if result.longest_refuted is not None and result.longest_len:  # a measurement there says otherwise
        source = result.longest_refuted.source
        allowed = (f": they let it train up to {result.tables_longest}" if result.tables_longest is not None
                   else " (they measured the actor alone, so with a critic they vouch for no length)" if result.critic
                   else f": they vouch for it at no length on {gpu} (another GPU type's table rules lengths out, "
                        "not in)" if source.gpu is not None
                   else ": they let it train at no length")
        where = ("there" if source.max_model_len == result.longest_len else
                 f"at {source.max_model_len}, the row that {result.longest_len} falls to"
                 if source.max_model_len > result.longest_len else f"already at {source.max_model_len}")
        longest += (f", but the tables say it runs out of memory {where} ({source.words(gpu, model)}"
                    f"{fewer(source, gpus, offload)}), and they decide{allowed}")
    elif result.tables_longer is not None:  # a measurement says it trains longer
        longer = result.tables_longer
        cited = ("the cell on the tables line" if result.tables is not None and result.tables.source == longer.source
                 else tables_said(longer, gpu, model, gpus, offload).removeprefix('it trains (').removesuffix(')'))
        # at least: the cell vouches for the next length on the grid, and the tables may reach further still
        longest += f"; the tables let it train at least to {longer.source.max_model_len} ({cited}), and they decide"
    return longest


def memory_json(answer: MemoryAnswer) -> str:
    """A breakdown as JSON (`solver.api.memory_answer`'s `MemoryAnswer`): what was asked (model, GPU, count, length,
    setting, margin, ...), then the estimate's fields, then its verdicts (``step_fits``, ``fits``, ``headroom_gib``,
    ``step_binds``, ``host_fits``, ``trains``: the tables' where they speak, and only where the host memory holds the
    states); GiB rounded to 4 decimals (0.1 MiB)."""
    return json.dumps(answer.model_dump(mode="json"), indent=2)
