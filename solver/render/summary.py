"""A plan's summary under `solve`'s answer: a row per fact about the best plan, then the lines that apply it
(`apply_lines`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from solver.memory import CEILING
from solver.query import (
    CHOOSES_COUNT,
    CRITIC_ENGINE_MICRO_BATCH_SIZES,
    CRITIC_MICRO_BATCH_SIZES,
    CRITIC_REMOVE_PADDING_KEY,
    ROLE_MICRO_BATCH_SIZES,
    ConfigProblemCode,
    token_cap_words,
)
from solver.render.phrases import (
    CEILING_WORDS,
    cost_ratio_words,
    hint_said_once,
    objective_ratio_words,
    room_kept_words,
)
from solver.results import (
    CHECK_QUALITY,
    LONG_LENGTH_VARIABLE,
    NO_ROPE_SCALING,
    YARN_KEPT,
    Answer,
    CautionCode,
    ConfigKeyChange,
    Plan,
    env_when,
    known_length_word,
    length_cautions,
    lowered_budget_undone,
    no_checkpoint_words,
    no_yarn_follows,
    own_scaling_parts,
    padded_count_words,
    past_derived_length_words,
    past_validated_note,
    past_validated_words,
    plan_environment,
    spans_nodes,
    yarn_validation_words,
)
from solver.rules import (
    COMMAND_OPTIONS,
    DPO_PAIR_SIZES,
    OptionNames,
    colocate_words,
    dividing_batch_words,
    host_ram_check_words,
    least_token_budget,
    lora_configs_words,
    mapped_partial_rotary,
    mapped_rope_theta,
    one_sequence_per_micro_batch,
    padded_micro_batch_words,
    rope_theta_to_set,
    sp_degrees,
    tables_refute_words,
    tables_said,
    token_budget,
    trainer_nodes_of,
)
from solver.tables import (
    MAX_ESTIMATED_GPUS,
    NODE_GPUS,
    Model,
    TrinityVersion,
    and_joined,
    counted,
    host_moment_words,
    it_or_them,
    lower_host_count_clause,
    lower_host_count_hint,
    written_layout,
)


class ConfigApplied(NamedTuple):
    """What the ``apply`` block says of the config read with --from-config, for one best plan."""

    changed: Sequence[str] = ()
    """The config's keys that the plan changes too (``solver.trinity.config_keys_changed``), as lines."""
    kept: Mapping[tuple[str, ...], str] = MappingProxyType({})
    """The plan's keys that --write leaves as the config has them, by path, with the config's values
    (``solver.trinity.config_keys_kept``: its own YaRN that reaches the plan's length, its ``model.rope_theta``, its
    ``trainer.save_hf_checkpoint``): the block leaves them too, saying so."""
    rope_scaling: str | None = None
    """The ``model.rope_scaling`` mapping --write leaves where the config has one and the plan sets YaRN
    (``solver.trinity.rope_scaling_written``: its own keys too, a legacy ``type`` beside ``rope_type``), in flow
    style: the block's line gives it whole, as pasting it replaces the config's."""
    comments_alone: bool = False
    """Whether the copy --write would write (without --write) differs from the config in its comments alone: the
    config has the plan's keys already (`_apply_heading` says so)."""
    lora_unkept: str | None = None
    """Where the plan counted a LoRA adapter (at its --lora-rank, on its --lora-targets) of fewer parameters than the
    config's own, which the block keeps (it writes no ``model.lora_configs`` over it): why, and what to do
    (``solver.trinity.lora_unkept``), the block's first line, a comment, as --emit trinity refuses it."""
    changes: Sequence[ConfigKeyChange] = ()
    """Every key of the config that --write changes (``solver.trinity.config_key_changes``: --json's
    ``config_keys_changed``), where an alias or a ``<<:`` merge repeats one of them (``written_at``); else none: the
    block says under each line whose key is one value with others which (`_repeats_line`)."""
    written_out: Sequence[tuple[str, str]] = ()
    """The aliases of mappings in the config that --write writes out as mappings of their own, as the plan leaves other
    values in them than at the place they repeat (``solver.trinity.aliases_written_out``): each with that place, a
    comment at the block's end."""
    critic_flags_off: Sequence[tuple[str, Any]] = ()
    """The PPO critic's offload flags that the config holds on and the plan turns off, each with the config's value
    (``solver.trinity.patch.HandChangedKeys``): the block marks its lines that set them
    (`_with_critic_flags_turned_off`)."""


NO_CONFIG_APPLIED = ConfigApplied()
"""What the ``apply`` block says of no config (none read with --from-config): nothing."""


CHECKPOINT_KEY = ("trainer", "save_hf_checkpoint")
"""Where an Offload plan saves no Hugging Face weights, unless the config chooses its own."""
ROPE_SCALING = ("model", "rope_scaling")
"""Where a YaRN is set, in a config and in the plan's keys."""
ROPE_FACTOR = (*ROPE_SCALING, "factor")
"""A YaRN's factor, which a config's own YaRN that --write keeps sets (`ConfigApplied.kept`)."""
ROPE_ORIGINAL = (*ROPE_SCALING, "original_max_position_embeddings")
"""The positions a YaRN's factor multiplies, which a config's own YaRN that --write keeps sets too."""
ACROSS_GPU_TYPES = "compare it within one GPU type: a cost counts GPUs and settings, not a GPU type's speed"
"""What the ``cost`` row adds where the answers are for several GPU types, whose costs side by side do not say which
runs faster (4 A100s and 4 H100s with the same settings cost the same)."""
THETA_KEY = ("model", "rope_theta")
"""The RoPE base a YaRN plan sets where the rollout's vLLM would drop the model's (`rope_theta_to_set`), unless the
config has its own, which --write keeps."""


DPO_PAIR_LINE = ("# DPO's actor: one pair, a chosen and a rejected sequence, on verl 0.8 or later (before 0.8 Trinity "
                 "doubles it: write 1 there)")
"""The apply lines' comment on DPO's actor micro-batch size 2 (`apply_lines`)."""


def apply_lines(plan: Plan, model: Model, version: TrinityVersion | None = None,
                node_gpus: int = NODE_GPUS, names: OptionNames = COMMAND_OPTIONS, gpu: str | None = None,
                kept_in: str | None = None, kept: Mapping[tuple[str, ...], str] = NO_CONFIG_APPLIED.kept,
                rope_scaling: str | None = None, dpo: bool = False, cautions_above: bool = False,
                critic: bool = True) -> list[str]:
    """How to apply a plan: the export lines of its environment (`plan_environment`: on every node where the job
    takes several of `node_gpus` GPUs) and the Trinity config keys it sets (for the Trinity release `version` where
    given: 0.5 refuses the trainer's own offload flags and remove padding, off for a model it would train wrong,
    `remove_padding_violation`, with dynamic batch sizes off and one sequence per micro-batch, and no token budget,
    which that leaves unread: `one_sequence_per_micro_batch`); a comment names an
    option as `names` do, and says where no Hugging Face checkpoint comes from as for a plan on `gpu`
    (`no_checkpoint_words`); beside a YaRN, the model's own ``model.rope_theta`` where the rollout's vLLM would drop
    it (`rope_theta_to_set`), as the fragment sets it, and in the YaRN its ``rope_theta`` (`mapped_rope_theta`). The
    YaRN, RoPE base and checkpoint lines are comments where the
    config named `kept_in` has its own there, which --write keeps (`kept`: `ConfigApplied.kept`; a checkpoint of its
    own other than the plan's ``never``), but a kept YaRN that
    lacks the model's ``rope_theta`` (`_kept_yarn_lacks`), which --write adds; the YaRN line gives
    the config's mapping as --write leaves it where given (`rope_scaling`: `ConfigApplied.rope_scaling`); for `dpo`
    (`Answer.dpo_pairs`), the actor's one pair, as the fragment writes it (`DPO_PAIR_SIZES`); with `cautions_above`
    (the summary's caution rows give the plan's cautions on its LoRA config's save), the LoRA config's comment points
    to them (`lora_configs_words`' `said_above`); the critic's micro-batch sizes of a padded model only where a critic
    may be trained (`critic`: false for a config whose algorithm trains none; none for `dpo` either)."""
    lines = []
    when = env_when(spans_nodes(plan, node_gpus))
    longest = math.floor(model.vllm_longest_as_written(plan.max_model_len))
    for name, value in plan_environment(plan, model).items():  # comments on lines of their own: each line pastes alone
        why = (f"vLLM's rollout takes a max_model_len past the {longest} it derives from the model's config only "
               "with this, " if name == LONG_LENGTH_VARIABLE[0] else "")
        lines += [f"# {why}{when}:", f"export {name}={value}"]
    if (past := past_validated_note(plan, model, names)) is not None:
        lines.append(f"# {past}")
    lines.append(f"model.max_model_len: {plan.max_model_len}")
    if plan.lora_rank and not plan.config_lora:  # a config's own LoRA stays; one without LoRA gets the plan's
        from solver.trinity.keys import yaml_flow  # as the fragment writes it

        layout = written_layout(version, plan.expert_layout)
        lines += [f"# {lora_configs_words(model, version, layout, plan.lora_targets, cautions_above)}:",
                  f"model.lora_configs: {yaml_flow([plan.lora_config])}"]
    added = _kept_yarn_lacks(model, kept) if rope_scaling is not None else []
    if plan.rope_scaling_factor is not None and _kept_yarn(kept_in, kept) is not None and added:
        lines += [(f"# model.rope_scaling: {kept_in}'s, as {names.write} keeps it ({YARN_KEPT}), with the "
                   f"{' and '.join(added)} it lacks added:"), f"model.rope_scaling: {rope_scaling}"]
    elif plan.rope_scaling_factor is not None and _kept_yarn(kept_in, kept) is not None:
        lines.append(f"# model.rope_scaling: {kept_in}'s stays, as {names.write} keeps it: {YARN_KEPT}")
    elif plan.rope_scaling_factor is not None and rope_scaling is not None:
        lines.append(f"model.rope_scaling: {rope_scaling}")
    elif plan.rope_scaling_factor is not None:
        partial = mapped_partial_rotary(model)  # the share the rollout's vLLM and the trainer take from here alone
        mapped = mapped_rope_theta(model)  # the model's own, which Trinity 0.6's trainer needs here
        lines.append(
            f"model.rope_scaling: {{rope_type: yarn, factor: {plan.rope_scaling_factor!r}, "
            f"original_max_position_embeddings: {model.native_context}"
            + (f", partial_rotary_factor: {partial[0]!r}" if partial is not None else "")
            + (f", rope_theta: {mapped}}}" if mapped is not None else "}")
        )
    theta, lost = rope_theta_to_set(model), model.vllm_rope_theta_lost
    if plan.rope_scaling_factor is not None and lost is not None and kept_in is not None and THETA_KEY in kept:
        lines.append(f"# model.rope_theta: {kept_in}'s stays, as {names.write} keeps it")
    elif plan.rope_scaling_factor is not None and lost is not None:
        lines += [(f"# {model.name}'s own RoPE base; the rollout's vLLM takes {lost[1]:.0f} where the "
                   "rope_scaling comes without it:"), f"model.rope_theta: {theta}"]
    lines.append(f"trainer.ulysses_sequence_parallel_size: {plan.sp}")
    if not one_sequence_per_micro_batch(model):  # else dynamic batch sizes off leave the budget unread
        lines.append(f"trainer.max_token_len_per_gpu: {plan.max_token_len_per_gpu}")
        if plan.dpo:  # as the fragment and --write: Trinity's default, on, splits DPO's pairs (dpo-pair-dynamic)
            from solver.trinity.plan_keys import DPO_DYNAMIC_BATCH_WORDS  # ruamel: only for a DPO plan

            lines += [f"# {DPO_DYNAMIC_BATCH_WORDS}:", "trainer.use_dynamic_bsz: false",
                      *_micro_batch_lines(DPO_PAIR_SIZES[version == "0.5"])]
    else:
        lines += ["# remove padding off, as the caution above says:",
                  "trainer.trainer_config.actor_rollout_ref.model.use_remove_padding: false"]
        if version != "0.6":
            lines += [f"{'.'.join(CRITIC_REMOVE_PADDING_KEY)}: false"]
        if version != "0.5":
            before = "" if version else " (leave it out before 0.6, which refuses it)"
            lines += [f"# Trinity 0.6 reads this one instead{before}:", "trainer.use_remove_padding: false"]
        pair = DPO_PAIR_SIZES[version == "0.5"] if dpo else 1
        lines += ["# one sequence per micro-batch, as the caution above says:", "trainer.use_dynamic_bsz: false",
                  *_micro_batch_lines(pair)]
        if critic and not dpo:  # DPO trains no critic
            lines += ["# and the critic's, where the algorithm trains one (ppo, Trinity's default):",
                      *(f"{'.'.join(path)}: 1" for path in CRITIC_MICRO_BATCH_SIZES)]
        if critic and not dpo and version != "0.5":
            before = "" if version else " (leave them out before 0.6, which refuses them)"
            lines += [f"# Trinity 0.6 on verl 0.8 or later cuts the critic's by these{before}:",
                      *(f"{'.'.join(path)}: 1" for path in CRITIC_ENGINE_MICRO_BATCH_SIZES)]
    if plan.offload:
        lines.append("trainer.trainer_strategy: fsdp2")
        if kept_in is not None and kept.get(CHECKPOINT_KEY, "never") != "never":
            lines.append(f"# {'.'.join(CHECKPOINT_KEY)}: {kept_in}'s stays, as {names.write} keeps it: the plan's "
                         f"never, {no_checkpoint_words(gpu)}, is for a config without one")
        else:
            lines += [f"# {no_checkpoint_words(gpu)}:", f"{'.'.join(CHECKPOINT_KEY)}: never"]
        roles = "{actor,ref}" if plan.reference_model else "actor"  # a run without a reference model offloads none
        lines.append(f"trainer.trainer_config.actor_rollout_ref.{roles}.fsdp_config: "
                     "{param_offload: true, optimizer_offload: true, offload_policy: true}")
        if version != "0.5":
            before = "" if version else " (leave them out before 0.6, which refuses them)"
            lines += [f"# Trinity 0.6 also takes these{before}:",
                      "trainer.{param_offload, optimizer_offload, offload_policy}: true"]
    return lines + _critic_lines(plan, version)


def _micro_batch_lines(pair: int) -> list[str]:
    """The apply lines of the actor's, the ref's and the rollout's micro-batch sizes per GPU (`ROLE_MICRO_BATCH_SIZES`),
    as the fragment writes them with dynamic batch sizes off: the actor's `pair` (DPO's one pair where 2, with its
    comment, `DPO_PAIR_LINE`), the others' 1."""
    return [*([DPO_PAIR_LINE] if pair == 2 else []),
            *(f"{'.'.join(path)}: {pair if path == ROLE_MICRO_BATCH_SIZES[0] else 1}" for path in ROLE_MICRO_BATCH_SIZES)]


def _critic_lines(plan: Plan, version: TrinityVersion | None) -> list[str]:
    """The apply lines of the PPO critic's offload flags where `plan` counts one (`Plan.critic`), as the fragment sets
    them (`solver.trinity.plan_keys.CRITIC_FLAGS`): its model's, which Trinity 0.5 and 0.6 on verl before 0.8 read,
    and but for `version` 0.5 its engine's, which 0.6 on verl 0.8 or later reads; an offloaded one's strategy FSDP2.
    Without them a config keeps its critic's own flags (unset: on the GPUs), whatever the plan counted."""
    if plan.critic is None:
        return []
    # Imported here: only a plan with a critic needs solver.trinity.
    from solver.trinity.keys import CRITIC, CRITIC_ENGINE, CRITIC_MODEL_FSDP, OFFLOAD_FLAGS, yaml_flow
    from solver.trinity.plan_keys import CRITIC_FLAGS

    flags = yaml_flow(dict(zip(OFFLOAD_FLAGS, CRITIC_FLAGS[plan.critic], strict=True)))
    lines = [(f"# the PPO critic's states {plan.critic}, as the plan counts them (Trinity 0.5, and 0.6 on verl "
              "before 0.8, read these):"), f"{'.'.join(CRITIC_MODEL_FSDP)}: {flags}"]
    if version != "0.5":
        before = "" if version else " (leave them out before 0.6, which refuses them)"
        lines += [f"# Trinity 0.6 on verl 0.8 or later reads these instead{before}:",
                  f"{'.'.join(CRITIC_ENGINE)}: {flags}"]
    if plan.critic == "offloaded":
        lines += ["# offload_policy needs FSDP2 (verl 0.8 or later runs the critic at trainer.trainer_strategy):",
                  f"{'.'.join(CRITIC)}.strategy: fsdp2"]
    return lines


def _kept_yarn(kept_in: str | None, kept: Mapping[tuple[str, ...], str]) -> str | None:
    """The YaRN of the config named `kept_in` that --write keeps (`ConfigApplied.kept`), in words (None: none)."""
    if kept_in is None or ROPE_FACTOR not in kept:
        return None
    return f"{kept_in}'s factor {kept[ROPE_FACTOR]} over {kept[ROPE_ORIGINAL]}"


def _kept_yarn_lacks(model: Model, kept: Mapping[tuple[str, ...], str]) -> list[str]:
    """The keys --write adds to a config's own YaRN that it keeps (`kept`: `ConfigApplied.kept`), where the mapping
    lacks them: `model`'s ``rope_theta`` (`mapped_rope_theta`) and ``partial_rotary_factor``
    (`mapped_partial_rotary`), as the guide's YaRN line carries them."""
    wanted = {"rope_theta": mapped_rope_theta(model), "partial_rotary_factor": mapped_partial_rotary(model)}
    return [name for name, value in wanted.items() if value is not None and (*ROPE_SCALING, name) not in kept]


def _yarn_caution(plan: Plan, model: Model) -> str:
    """The caution for YaRN beyond what is validated (`yarn_beyond_validated`; "" otherwise), beside the YaRN factor
    in the ``max_model_len`` row, which says first that the length is past it: what is validated
    (`yarn_validation_words`), and what to do unless the apply lines below say it (`past_validated_note`, whose
    comment is pasted alone). Memory fits, quality is untested."""
    if not plan.yarn_beyond_validated:
        return ""
    return f"; {yarn_validation_words(model)}" + (f"; {CHECK_QUALITY}" if plan.past_validated_length is None else "")


def _budget_words(answer: Answer, plan: Plan, model: Model, version: TrinityVersion | None,
                  names: OptionNames) -> str:
    """A plan's token budget and where it comes from (`_budget_origin`: a cap by its source, as `names` name the
    option), in words; for a model trained one sequence per micro-batch, that none is read, what a micro-batch holds
    (`padded_micro_batch_words`) and what the estimate counts instead (`padded_count_words`: for the answer's
    `Answer.dpo_pairs`, a pair)."""
    dpo = bool(answer.dpo_pairs)
    if one_sequence_per_micro_batch(model):
        return (f"none read: {padded_micro_batch_words(dpo)}, so the estimate counts "
                f"{padded_count_words(model, plan.max_model_len, dpo)}")
    capped = None if plan.token_budget_cap is None else token_cap_words(
        plan.token_budget_cap, answer.token_budget_cap_source, names)
    return f"max_token_len_per_gpu = {plan.max_token_len_per_gpu} ({_budget_origin(plan, version, capped)})"


def _budget_origin(plan: Plan, version: TrinityVersion | None, capped: str | None) -> str:
    """Where a plan's token budget comes from, in words: Trinity's default, or lowered from it, by a cap (`capped`, its
    words: `token_cap_words`) or to fit (and, unless `version` is 0.6, that Trinity 0.5.0 undoes that:
    `lowered_budget_undone`)."""
    default = f"ceil(2 x {plan.max_model_len} / SP {plan.sp})"
    if not plan.lowered_budget:
        return default
    undone = lowered_budget_undone(plan, version)
    if capped is not None:
        return (f"{capped}, below Trinity's default, {default} = {token_budget(plan.max_model_len, plan.sp)}; "
                f"at least ceil({plan.max_model_len} / {plan.sp}) = {least_token_budget(plan.max_model_len, plan.sp)}"
                f"; more micro-batches, which the cost does not count" + (f"; {undone}" if undone else ""))
    return (f"lowered from Trinity's default, {default} = {token_budget(plan.max_model_len, plan.sp)}, which does "
            f"not fit; at least ceil({plan.max_model_len} / {plan.sp}) = "
            f"{least_token_budget(plan.max_model_len, plan.sp)}; more micro-batches, which the cost does not count"
            + (f"; {undone}" if undone else ""))


def apply_heading(names: OptionNames) -> str:
    """The summary's ``apply`` row: its lines follow the summary, unindented and never wrapped, so a long one copies
    whole; the keys are shorthand (dotted paths, ``{actor,ref}``), which ``--emit trinity`` (as `names` name it)
    writes out as YAML."""
    return f"the lines below (dotted keys; {names.fragment_yaml} writes YAML)"


APPLY_HEADING = apply_heading(COMMAND_OPTIONS)
"""`apply_heading` in the command's words."""


def _apply_heading(answer: Answer, plan: Plan, several_gpu_types: bool, write_unoffered: bool, names: OptionNames,
                   comments_alone: bool = False) -> str:
    """The summary's ``apply`` row: `apply_heading`, and for a config read with --from-config: where the plan is
    another model's than the config's (`CurrentSettings.config_model`: ``--model``), whose lines they are, which
    --write, --out and --emit refuse; where its cluster gives the trainer other GPUs than `plan` takes (--gpus,
    --minimize gpus), that the lines alone run on those (the cluster is no line of them); else, unless
    `write_unoffered` (written already, or --write would refuse it: `ConfigApplied.lora_unkept`), what applies the plan
    to a copy of it (``--write FILE``, with the answer's --gpu where the answers are for `several_gpu_types`: --write
    takes one; the API's function takes one answer), or where that copy would change its comments alone
    (`comments_alone`), that the config has its keys already."""
    heading = apply_heading(names)
    current = answer.current
    if current is not None and current.config_model is not None:
        return (f"the lines below are for {answer.model}, not for {current.config}'s {current.config_model}: they "
                f"apply with model.model_path set to a {answer.model} checkpoint (dotted keys)")
    if current is not None and current.gpus_given and current.gpus != plan.gpus:
        return (f"{heading}; {current.config}'s cluster gives the trainer {current.gpus} GPUs, where these lines "
                f"would run: set it to give {plan.gpus}, this plan's (cluster.node_num x cluster.gpu_per_node, less "
                "the rollout's GPUs)")
    if current is None or write_unoffered:
        return heading
    if comments_alone:
        return (f"{heading}; {current.config} has these keys already: {names.write_copy} a copy that differs "
                "in its comments alone")
    gpu = f"--gpu {answer.gpu} " if several_gpu_types and not names.keywords else ""
    return f"{heading}; {gpu}{names.write_copy} a copy of {current.config} with the plan applied"


def _lora_moe_said(answer: Answer) -> bool:
    """Whether the summary says its plan's caution on LoRA on a mixture of experts (and on a regex Trinity saves
    split, ``lora-targets-saved-split``, which the first alone gives) elsewhere than in a caution row: in the check
    of the --from-config's own LoRA (``lora-moe-config-unsaved`` or, where it refuses the config,
    ``lora-moe-config-unsaved-refused`` among its problems). Otherwise the caution rows give them, and the apply lines'
    LoRA config comment points to them (`apply_lines`' `cautions_above`)."""
    return answer.current is not None and not {
        ConfigProblemCode.LORA_MOE_CONFIG_UNSAVED, ConfigProblemCode.LORA_MOE_CONFIG_UNSAVED_REFUSED,
    }.isdisjoint(answer.current.config_problem_codes)


def _verdict_host_cautions(answer: Answer, plan: Plan) -> set[str]:
    """The host-memory-unchecked caution of `plan` where the --from-config's verdict above it says it already: the
    plan is the config's own layout (its setting on its GPUs at its length), whose fitting verdict carries its plan's
    caution (`config_verdict`); none otherwise."""
    current = answer.current.plan if answer.current is not None else None
    if current is None or (current.setting, current.gpus, current.max_model_len) != (
            plan.setting, plan.gpus, plan.max_model_len):
        return set()
    return {*current.cautions_coded(CautionCode.HOST_MEMORY_UNCHECKED)}


def plan_summary(answer: Answer, plan: Plan, model: Model, node_gpus: int, version: TrinityVersion | None,
                 memory_source: str | None, several_gpu_types: bool, write_unoffered: bool, names: OptionNames,
                 config_keys: ConfigApplied = NO_CONFIG_APPLIED, pins: Sequence[str] = (), host_limit: str = "",
                 batch: str = "") -> Group:
    """A plan's summary, a row per fact (those that do not apply left out), then the lines that apply it: the
    plan's own (`apply_lines`, leaving a YaRN of the --from-config's that --write keeps), then the --from-config's keys
    it changes too (`config_keys`, `_config_key_lines`);
    the options it points to named as `names` do, the pins the query gives as `pins` (`Query.given_pins`), its
    host memory as `host_limit` (`Query.host_ram_named`) and its train batch as `batch` (`Query.batch_named`)."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")  # a word wider than the terminal (a config key to copy) breaks, not "…"
    best = "best" if answer.status == "optimal" else "best found"  # feasible: the time limit stopped the search
    # The unpinned row may show a cheaper plan; the host limit and other batch rows show one beside it.
    kept = [names.joined(pins)] if pins else []
    kept += [host_limit] if host_limit and plan.another_than(answer.more_host_ram) else []
    kept += [batch] if batch and answer.other_batch is not None else []
    best += f" with {and_joined(kept)}" if kept else ""
    kept_in = answer.current.config if answer.current is not None else None
    said = {*length_cautions(model, plan.max_model_len)}  # beside the length
    said |= _verdict_host_cautions(answer, plan)  # in the --from-config's verdict
    if lora_moe_said := _lora_moe_said(answer):
        said |= {*plan.cautions_coded(CautionCode.LORA_MOE_CONFIG_UNSAVED, CautionCode.LORA_TARGETS_SAVED_SPLIT)}
    host_row = _host_memory_words(answer, plan, model, version, names)
    host_hint = "" if host_row is None else _lower_count_hint(plan, model, names)  # the host memory row says it
    rows: list[tuple[str, RenderableType | None]] = [
        ("plan", Text(f"{plan.setting.label} on {_gpus_of_budget(answer, plan, node_gpus, names)}", style="bold")),
        ("for rollout", _rollout_kept_words(answer, plan, names)),
        ("max_model_len", _length_words(answer, plan, model, _kept_yarn(kept_in, config_keys.kept))),
        ("longer", _across_nodes(answer, plan, model, node_gpus, names)),
        (known_length_word(model), _validated_words(answer, plan, model, names)),
        ("token budget", _budget_words(answer, plan, model, version, names)),
        ("cost", f"{plan.cost:.4g} relative step time ({best})"
                 + (f"; {ACROSS_GPU_TYPES}" if several_gpu_types else "")),
        ("GPU-hours", None if plan.gpu_hours is None else
         f"{plan.gpu_hours:.4g} ({plan.gpus} GPUs x the cost: the GPU time a step takes, in the cost's units)"),
        ("evidence", _evidence_words(answer, plan)),
        ("larger GPU", _larger_gpu_words(answer)),
        ("memory", _memory_line(answer, plan, memory_source)),
        ("experts", plan.experts_counted if plan.trinity_version is not None else None),
        *(("caution", Text(caution, style="yellow"))
          for caution in hint_said_once(plan.cautions, plan.caution_codes, host_hint, said)),
        ("more room", room_kept_words(answer, plan, names, _plans_above(
            answer, plan, None if answer.room_kept is None else answer.room_kept.plan))),
        ("host memory", host_row),
        ("tables' best", _tables_best_words(answer, plan)),
        ("tables", _tables_verdict(answer, plan, names)),
        ("fewer nodes", _fewer_nodes_words(answer, plan, node_gpus, names)),
        ("other batch", _other_batch_words(answer, plan)),
        ("unpinned", _unpinned_words(answer, plan, pins, names)),
        ("host limit", _host_limit_words(answer, plan, host_limit, model, names)),
        ("fewer GPUs", _lowered_fewer_words(answer, plan, names)),
        ("apply", _apply_heading(answer, plan, several_gpu_types,
                                 write_unoffered or config_keys.lora_unkept is not None, names,
                                 config_keys.comments_alone)),
    ]
    for label, value in rows:
        if value is not None:
            grid.add_row(label, value)
    # Each line whole, past the terminal's edge if need be (no crop: `print_view`): a pasted line stays one.
    unkept = config_keys.lora_unkept
    lines = [*([f"# {unkept}"] if unkept is not None else []),
             *apply_lines(plan, model, version, node_gpus, names, answer.gpu, kept_in, config_keys.kept,
                          config_keys.rope_scaling, bool(answer.dpo_pairs), not lora_moe_said,
                          answer.current is None
                          or ConfigProblemCode.CRITIC_TRAINED in answer.current.config_problem_codes),
             *_config_key_lines(answer, config_keys.changed)]
    lines = [*_with_repeats(_with_critic_flags_turned_off(lines, config_keys.critic_flags_off), config_keys.changes,
                            kept_in),
             *(f"# in {kept_in} {alias} is an alias of {place}, but the plan leaves other values in it than there: "
               f"write it out as a mapping of its own, as {names.write} does (an edit at {place} reaches it)"
               for alias, place in config_keys.written_out)]
    return Group(grid, *(Text(line, no_wrap=True, overflow="ignore") for line in lines))


def _config_key_lines(answer: Answer, config_keys: Sequence[str]) -> list[str]:
    """The apply block's lines for the keys of the config read with --from-config that the plan changes too
    (``solver.trinity.config_keys_changed``: a role's own token budget or SP, offload flags turned off, ...), under a
    comment naming the config; none without such keys."""
    if not config_keys or answer.current is None:
        return []
    return [f"# and these keys of {answer.current.config}, which the plan changes too (after each, its value now):",
            *config_keys]


def _with_critic_flags_turned_off(lines: Sequence[str], turned_off: Sequence[tuple[str, Any]]) -> list[str]:
    """The apply block's `lines`, each that sets the PPO critic's offload flags (`_critic_lines`: a mapping whole)
    marked with those of them the config holds on, which the plan turns off (`turned_off`:
    `ConfigApplied.critic_flags_off`), as the config's other keys that the plan changes are:
    ``# now {param_offload: true}``."""
    if not turned_off:
        return list(lines)
    from solver.trinity.keys import yaml_flow  # a config was read: solver.trinity is loaded

    def marked(line: str) -> str:
        section = line.split(": ", 1)[0]
        held = {key.rsplit(".", 1)[1]: old for key, old in turned_off if key.rsplit(".", 1)[0] == section}
        return f"{line}  # now {yaml_flow(held)}" if held else line

    return [line if line.startswith("#") else marked(line) for line in lines]


def _with_repeats(lines: Sequence[str], changes: Sequence[ConfigKeyChange], config: str | None) -> list[str]:
    """The apply block's `lines`, each that sets a key (``key: value``) followed by a comment naming the other keys
    of the config named `config` that are one value with it (an alias or a ``<<:`` merge repeats it, `changes`:
    `ConfigApplied.changes`), where any are (`_repeats_line`)."""
    found = []
    for line in lines:
        found.append(line)
        if config is not None and not line.startswith(("#", "export ")) and ": " in line:
            found += [said] if (said := _repeats_line(line.split(": ", 1)[0], changes, config)) is not None else []
    return found


def _repeats_line(key: str, changes: Sequence[ConfigKeyChange], config: str) -> str | None:
    """What the apply line of `key` (dotted: a key, or a mapping that the line gives whole) changes at other keys of
    the config named `config` (`changes`: --write's, each with the key it is made at, ``written_at``, where another):
    those an edit where the line's keys are written changes too, and where that is; None where there are none."""
    def under(path: str) -> bool:
        return path == key or path.startswith(f"{key}.")

    places = {change.written_at or change.key for change in changes if under(change.key)}
    others = [change.key for change in changes if not under(change.key) and (change.written_at or change.key) in places]
    if not others:
        return None
    away = sorted(place for place in places if not under(place))
    where, changed = f"at {and_joined(away)}" if away else "here", "both" if len(others) == 1 else "them all"
    return (f"# in {config} this key is also read at {and_joined(others)} (an alias or a <<: merge repeats it): one "
            f"edit {where} changes {changed}")


def _length_words(answer: Answer, plan: Plan, model: Model, kept_yarn: str | None) -> Text:
    """The summary's ``max_model_len`` row: the plan's length, first (in bold yellow) whether it is past what the model
    is validated for (`Plan.past_validated_length`), with the rope scaling that reaches it (and its caution): the
    config's own, `kept_yarn` (`_kept_yarn`), where the ``apply`` block leaves it, else the guide's factor, or the
    model's own, or none for a type that is advised no YaRN (`no_yarn_follows`); and
    ``at least`` where the longest length the memory model is asked about fits."""
    scaling = f"{kept_yarn}, which stays" if kept_yarn is not None else f"factor {plan.rope_scaling_factor!r}"
    yarn = f" (YaRN rope scaling, {scaling}{_yarn_caution(plan, model)})" if plan.rope_scaling_factor else ""
    if model.beyond_native_on_own_scaling(plan.max_model_len):  # past the native context the row names first
        provides, follows = own_scaling_parts(model, plan.max_model_len)
        yarn = f", {provides} ({follows})"
    if model.beyond_native_no_yarn(plan.max_model_len):  # a type that is advised no YaRN (Phi-3's LongRoPE)
        yarn = f", {NO_ROPE_SCALING} ({no_yarn_follows(model, plan.max_model_len)})"
    if (derived := past_derived_length_words(model, plan.max_model_len)) is not None:
        yarn += f" ({derived})"
    if answer.objective == "max_len" and plan.evidence == "estimated" and plan.max_model_len == CEILING:
        yarn += f" (at least: {CEILING_WORDS})"
    if (validated := plan.past_validated_length) is not None:
        return Text(f"{plan.max_model_len}, {past_validated_words(model, validated)}{yarn}", style="bold yellow")
    return Text(f"{plan.max_model_len}{yarn}")


def _validated_words(answer: Answer, plan: Plan, model: Model, names: OptionNames) -> str | None:
    """The summary's ``validated`` row, where the plan's length is past what the model is known to handle: the
    cheapest plan at the length it is known to (its native context, or the longest YaRN is validated for), where the
    answer has one (None otherwise); briefly where that is this plan's setting on as many GPUs. Where the native
    context bounds it (`known_length_word`), the row is ``native``, which says it already."""
    if (within := answer.validated) is None:
        return None
    length = names.valued(names.length, within.max_model_len)
    known = "" if known_length_word(model) == "native" else " (the longest YaRN is validated for)"
    if (within.gpus, within.setting) == (plan.gpus, plan.setting):
        return f"at {within.max_model_len}{known}, the cheapest plan is this one ({within.evidence_label}): {length}"
    return (f"at {within.max_model_len}{known}, the cheapest plan is {within.setting.label} on "
            f"{counted(within.gpus, 'GPU')} ({within.evidence_and_single_gpu}; "
            f"{objective_ratio_words(within, plan)}): {length}")


def _larger_gpu_words(answer: Answer) -> str | None:
    """The summary's ``larger GPU`` row: a measurement on a GPU with a little more memory, beside an estimate
    (None where the answer has none)."""
    if answer.larger_gpu_cell is None:
        return None
    return (f"{answer.larger_gpu_cell.words('', answer.model)}: it trained there, with a "
            f"little more memory per GPU than the {answer.gpu}'s")


def _host_memory_words(answer: Answer, plan: Plan, model: Model, version: TrinityVersion | None,
                       names: OptionNames) -> str | None:
    """The summary's ``host memory`` row: what the plan of `model` needs of a node's host memory, where the Trinity
    release `version` is named what the other needs where it differs (`other_release_words`), and whether the host
    memory given holds it or none was given (`host_ram_check_words`; None where it says nothing)."""
    from solver.trinity.plan_keys import other_release_words  # ruamel: only where a plan is summarised

    host = plan.host_memory_words()
    return None if host is None else (f"{host}{host_ram_check_words(answer.host_ram_gb, names.host_ram)}"
                                      f"{other_release_words(plan, model, version)}"
                                      f"{_lower_count_hint(plan, model, names)}")


def _lower_count_hint(plan: Plan, model: Model, names: OptionNames) -> str:
    """Where no Trinity release is named and some release counts `plan`'s host memory need lower, that naming one
    counts its own, and why, in words (`lower_host_count_hint`); "" otherwise."""
    if plan.trainer_nodes is None:
        return ""
    return lower_host_count_hint(
        plan.trinity_version is not None, plan.model_loading, plan.gpus // plan.trainer_nodes,
        bool(host_moment_words(plan.host_training_gb, plan.model_loading, plan.offload, plan.critic)),
        plan.reference_model, model.tied_embeddings, plan.compute_capability, names.release_option())


def _tables_best_words(answer: Answer, plan: Plan) -> str | None:
    """The summary's ``tables' best`` row, where the plan is estimated: the tables' best plan for the same question,
    where they have one, its cost against the plan's in the question's terms (`objective_ratio_words`; None
    otherwise), and, where the plan lowers the token budget, that the tables measured the default alone: a setting
    they say ran out of memory did so there."""
    if (measured := answer.measured) is None:
        return None
    lowered = ("; the tables measured Trinity's default token budget alone, which this plan lowers (a setting they say "
               "ran out of memory did so at the default)" if plan.lowered_budget else "")
    return (f"{measured.setting.label} on {counted(measured.gpus, 'GPU')} at {measured.max_model_len} "
            f"({measured.evidence_and_single_gpu}; {objective_ratio_words(measured, plan)}), if you "
            f"prefer the tables' evidence to the memory model's{lowered}")


def _tables_verdict(answer: Answer, plan: Plan, names: OptionNames) -> Text | None:
    """The summary's ``tables`` row, with --estimate (the memory model alone): what the tables say of the plan,
    green where they train it, red where they do not (the table, a measurement, decides); None where they do not
    speak or without --estimate."""
    if answer.tables is None:
        return None
    said = (answer.tables, answer.gpu, answer.model, plan.gpus, plan.offload)
    return Text(tables_said(*said) if answer.tables.trains else tables_refute_words(*said, names),
                style="green" if answer.tables.trains else "red")


def _trainer_alone_words(answer: Answer, names: OptionNames) -> str:
    """Why the fewest GPUs beside the rollout are more than the trainer needs, where the rollout's layout is why
    (`Answer.trainer_alone`): ``the trainer alone needs 4, Env + Offload + SP=4, but 4 + 8 rollout GPUs fill neither
    one node of 8 nor whole nodes: --rollout-gpus 12 fills 2 nodes with them``; "" otherwise."""
    alone, node_gpus = answer.trainer_alone, answer.node_gpus
    if alone is None or not answer.rollout_gpus:
        return ""
    nodes = -(-(alone.gpus + answer.rollout_gpus) // node_gpus)  # the rollout filling the trainer's node and more
    # A trainer alone on fewer GPUs than the best's is within a node (past one it would take whole nodes, which any
    # rollout lays out beside): beside the rollout it fills neither that node nor whole nodes.
    return (f"the trainer alone needs {alone.gpus}, {alone.setting.label}{alone.lowered_words}, but {alone.gpus} + "
            f"{answer.rollout_gpus} rollout GPUs fill neither one node of {node_gpus} nor whole nodes: "
            f"{names.valued(names.rollout_gpus, nodes * node_gpus - alone.gpus)} fills {counted(nodes, 'node')} with "
            "them")


def _fewer_nodes_words(answer: Answer, plan: Plan, node_gpus: int, names: OptionNames) -> str | None:
    """The summary's ``fewer nodes`` row: the plan on fewer nodes of `node_gpus` GPUs, what it trades and the
    cautions it carries that `plan` does not (`Plan.cautions_beside`; None where the answer has none)."""
    if (fewer := answer.fewer_nodes) is None:
        return None
    return (f"{counted(fewer.nodes or 1, 'node')} of {counted(node_gpus, 'GPU')} instead of "
            f"{counted(plan.nodes or 1, 'node')}: {fewer.setting.label} on {fewer.gpus} trainer + "
            f"{fewer.rollout_gpus} rollout GPUs, {_trade_words(fewer, plan)} ({fewer.evidence_and_single_gpu}): "
            f"{_budget_flag(answer, fewer.gpus, fewer.rollout_gpus, names)}{_cautions_beside(answer, plan, fewer)}")


def _budget_flag(answer: Answer, gpus: int, rollout_gpus: int | None, names: OptionNames) -> str:
    """The option that gives a trainer of `gpus` GPUs with `rollout_gpus` beside it: ``--gpus 4``, or where the answer
    counts the GPUs in all, ``--total-gpus 8`` (as `names` name them: ``budget_gpus=4``)."""
    if answer.total_gpus is None:
        return names.valued(names.budget, gpus)
    return names.valued(names.total_gpus, gpus + (rollout_gpus or 0))


def _trade_words(other: Plan, plan: Plan) -> str:
    """What a plan that leaves the rollout GPUs the best `plan` does not trades against it, in words: its shorter
    length, or at the same length its cost against the best's in the question's terms (`objective_ratio_words`: with
    the GPU-hours first where the question ranks by them)."""
    if other.max_model_len != plan.max_model_len:
        return f"{counted(other.max_model_len, 'token')} instead of {plan.max_model_len}"
    return f"{counted(other.max_model_len, 'token')}, {objective_ratio_words(other, plan)}"


def _rollout_kept_words(answer: Answer, plan: Plan, names: OptionNames) -> str | None:
    """The summary's ``for rollout`` row, where the best plan takes the whole budget and leaves the rollout none: the
    flags that keep some of it for the rollout (``--total-gpus N --rollout-gpus R``: the N GPUs asked for, now in
    all, which a plan that takes them whole makes one node or whole nodes), their best plan, what it trades and the
    cautions it carries that `plan` does not (`Plan.cautions_beside`); or,
    where they have none (or,
    for one GPU, would leave the trainer none), that, and how to give the rollout GPUs beside the budget instead
    (and, for one GPU, Trinity's mode colocate: `colocate_words`) (None where the answer did not ask:
    `Answer.rollout_kept`); the options as `names` name them."""
    if (kept := answer.rollout_kept) is None:
        return None
    budget, rollout = answer.budget_gpus, kept.rollout_gpus
    beside = names.joined([names.valued(names.budget, budget), names.valued(names.rollout_gpus, "R")])
    if rollout == budget:  # one GPU: the trainer's (--gpus counts the trainer's alone)
        return (f"the rollout (explorer) takes GPUs of its own beside the trainer's, and keeping the {budget} GPU for "
                f"it leaves the trainer none: give the rollout GPUs beside it instead: {beside}; or, with one GPU in "
                f"all, {colocate_words(names)}")
    kept_for_it = names.joined([names.valued(names.total_gpus, budget), names.valued(names.rollout_gpus, rollout)])
    if (other := kept.plan) is not None and other.lowered_budget and answer.query is not None \
            and answer.query.token_budget == "default":  # only --token-budget auto keeps GPUs for it
        kept_for_it = names.joined([kept_for_it, names.token_budget_auto])
    if other is None:
        trains = "at any length" if answer.objective == "max_len" else f"for {counted(plan.max_model_len, 'token')}"
        return (f"keeping {rollout} of the {budget} for it leaves no plan {trains} (within {budget - rollout})"
                f"{_host_ruled_out_words(answer, kept.without_host_ram)}"
                f"{_pins_ruled_out_words(answer, kept.without_pins, kept_for_it)}; give the rollout GPUs beside these "
                f"instead: {beside}")
    return (f"{kept_for_it} keeps {rollout} of the {budget} for it: "
            f"{other.setting.label} on {counted(other.gpus, 'trainer GPU')}{other.lowered_words}, "
            f"{_trade_words(other, plan)} "
            f"({other.evidence_and_single_gpu}){_cautions_beside(answer, plan, other)}")


def _pins_ruled_out_words(answer: Answer, unpinned: Plan | None, kept_for_it: str) -> str:
    """Where the settings the query pins are what rule out the plans beside the rollout (`RolloutKept.without_pins`):
    the pins that plan has not, and the plan without them of the flags that keep GPUs for it, `kept_for_it`, in words
    (``: --sp 8 rules them out (without it: Env on 6 trainer GPUs with --total-gpus 8 --rollout-gpus 2)``); ""
    otherwise."""
    if unpinned is None or answer.query is None:
        return ""
    query = answer.query
    pins = query.pins_unlike(unpinned.sp, unpinned.env, unpinned.offload)
    rules, them = ("rule", "them") if len(pins) > 1 else ("rules", "it")
    return (f": {query.option_names.joined(pins)} {rules} them out (without {them}: {unpinned.setting.label} on "
            f"{counted(unpinned.gpus, 'trainer GPU')} with {kept_for_it})")


def _host_ruled_out_words(answer: Answer, lifted: Plan | None) -> str:
    """Where the host memory given is what rules out the plans beside the rollout (`RolloutKept.without_host_ram`):
    that bound, and the best plan without it with the host memory it needs, in words (``: --host-ram 2048 GiB rules
    them out (Env + Offload on 24 GPUs needs 2319.6 GiB of host memory per node)``); "" otherwise."""
    if lifted is None or lifted.host_memory_gb is None or answer.query is None:
        return ""
    return (f": {answer.query.host_ram_bound_words} rules them out ({lifted.setting.label} on "
            f"{counted(lifted.gpus, 'GPU')} needs {lifted.host_memory_gb:.1f} GiB of host memory per node)")


def _other_batch_words(answer: Answer, plan: Plan) -> str | None:
    """The summary's ``other batch`` row: the better plan a train batch that its data-parallel ranks divide (for
    Trinity 0.5.0 and 0.5.1, its GPUs: `dividing_batch_words`) would run, what it trades and the cautions it carries
    that `plan` does not (`Plan.cautions_beside`; None where the answer has none)."""
    if (other := answer.other_batch) is None:
        return None
    gpus_divide = answer.query is not None and answer.query.batch_divisor == "gpus"
    pairs = answer.query is not None and answer.query.pair_batch
    step = objective_ratio_words(other, plan)
    longer = other.max_model_len != plan.max_model_len
    trade = (f"{counted(other.max_model_len, 'token')} instead of {plan.max_model_len}" if longer
             else f"{counted(plan.gpus - other.gpus, 'GPU')} fewer, {step}" if other.gpus < plan.gpus else step)
    return (f"with {dividing_batch_words(other.gpus, other.sp, gpus_divide, pairs=pairs)}: "
            f"{other.setting.label} on {counted(other.gpus, 'GPU')}, {trade} "
            f"({other.evidence_and_single_gpu}){_cautions_beside(answer, plan, other)}")


def _unpinned_words(answer: Answer, plan: Plan, pins: Sequence[str], names: OptionNames) -> str | None:
    """The summary's ``unpinned`` row: what the `pins` (as `names` give them) cost (`_limit_cost_words`: ``the pin
    costs nothing: the best plan has it``), and the cautions that plan carries that `plan` does not
    (`Plan.cautions_beside`; None where the answer has no best plan without them: `Answer.unpinned`)."""
    if (free := answer.unpinned) is None:
        return None
    the_pins, costs, them = ("the pins", "cost", "them") if len(pins) > 1 else ("the pin", "costs", "it")
    cautions = _cautions_beside(answer, plan, free) if plan.another_than(free) else ""
    return _limit_cost_words(answer, plan, free, f"without {names.joined(pins)}", f"{the_pins} {costs}",
                             f"the best plan has {them}") + cautions


def _host_limit_words(answer: Answer, plan: Plan, host_limit: str, model: Model, names: OptionNames) -> str | None:
    """The summary's ``host limit`` row: what the host memory given (`host_limit`, `Query.host_ram_named`) costs, with
    the host memory per node the better plan needs (`_limit_cost_words`), then what naming a Trinity release that
    counts less gives within it (`_named_release_words`: what to do, before the cautions, which may be long), and the
    cautions the better plan carries that `plan` does not (`Plan.cautions_beside`; after the release's words, each
    naming that plan by its host memory); None where the answer has no best plan without the limit
    (`Answer.more_host_ram`), or none was given."""
    if (free := answer.more_host_ram) is None or not host_limit:
        return None
    gib = f"{free.host_memory_gb:.1f} GiB"
    named = _named_release_words(answer, plan, model, names)
    lead = f"caution with {gib}" if named else "caution"
    cautions = _cautions_beside(answer, plan, free, lead) if plan.another_than(free) else ""
    return (_limit_cost_words(answer, plan, free, f"with {gib} of host memory per node", f"{host_limit} costs",
                              "the best plan fits in it") + named + cautions)


def _named_release_words(answer: Answer, plan: Plan, model: Model, names: OptionNames) -> str:
    """Where naming a Trinity release that counts less host memory per node gives a better plan within the same host
    memory (`Answer.named_release`, its `trinity_version` that release): the release as `names` name it, why it counts
    less (`lower_host_count_clause`), its plan and what it trades against `plan` (`_trade_words`), in words:
    ``; with --trinity-version 0.6.0, whose rank 0 alone loads the model: Env + Offload + SP=8 on 32 GPUs, 115712
    tokens instead of 57344 (estimated, extrapolated)``; "" otherwise."""
    if (named := answer.named_release) is None or named.trinity_version is None:
        return ""
    why = lower_host_count_clause(named.trinity_version, model.tied_embeddings, named.compute_capability,
                                  None if answer.query is None else answer.query.trinity_release)
    return (f"; with {names.planned_release(named.trinity_version)}{', ' + why if why else ''}: "
            f"{named.setting.label} on {counted(named.gpus, 'GPU')}, {_trade_words(named, plan)} "
            f"({named.evidence_and_single_gpu})")


def _plans_above(answer: Answer, plan: Plan, other: Plan | None) -> tuple[Plan, ...]:
    """The plans the summary's rows above `other`'s show beside the best `plan` with their cautions, in their order
    (all of them where `other` is none of those): ``for rollout``'s, ``more room``'s, ``fewer nodes``', ``other
    batch``'s, ``unpinned``'s and ``host limit``'s (each where another) and ``fewer GPUs``'."""
    kept, room = answer.rollout_kept, answer.room_kept
    rows = (kept.plan if kept is not None and kept.rollout_gpus != answer.budget_gpus else None,
            None if room is None else room.plan, answer.fewer_nodes, answer.other_batch,
            *(free if plan.another_than(free) else None for free in (answer.unpinned, answer.more_host_ram)),
            answer.token_budget_auto)
    shown = tuple(row for row in rows if row is not None)
    return next((shown[:at] for at, row in enumerate(shown) if row is other), shown)


def _cautions_beside(answer: Answer, plan: Plan, other: Plan, lead: str = "caution") -> str:
    """The cautions `other` carries that the best `plan` does not (`Plan.cautions_beside`, each after `lead`), as its
    summary row ends: its host memory caution short where the answer shows a full one already (`_plans_above`)."""
    return other.cautions_beside(plan, _plans_above(answer, plan, other), lead)


def _limit_cost_words(answer: Answer, plan: Plan, free: Plan, lifted: str, limit_costs: str, kept: str) -> str:
    """What one of the caller's limits costs the best `plan`, against `free`, the best plan of the same question
    without it (`lifted`: how, in words): nothing (``{limit_costs} nothing: {kept}``), or in the objective's terms,
    tokens (a longer plan), GPU-hours (the fewest), GPUs (the fewest; of equal GPU-hours, the fewest GPUs), else the
    relative step time (`cost_ratio_words`); none of the GPU-hours or the step time where `plan` ranks below `free`,
    a plan the question without the pins does not ask (`_not_asked_words`): ``{lifted}, the best plan is ...:
    {limit_costs} ...``."""
    if not plan.another_than(free):
        return f"{limit_costs} nothing: {kept}"
    if free.max_model_len != plan.max_model_len:
        length = f" at {counted(free.max_model_len, 'token')}"
        cost = counted(free.max_model_len - plan.max_model_len, "token")
    elif plan.gpu_hours is not None and free.gpu_hours and plan.gpu_hours != free.gpu_hours:
        ratio = f"{plan.gpu_hours / free.gpu_hours:.2f}x"
        length, cost = "", (f"{ratio} the GPU-hours" if plan.gpu_hours > free.gpu_hours else
                            f"no GPU-hours ({ratio}){_not_asked_words(plan, free)}")
    elif answer.objective in CHOOSES_COUNT and free.gpus != plan.gpus:  # of equal GPU-hours, the fewest GPUs rank first
        length, cost = "", counted(plan.gpus - free.gpus, "GPU")
    elif plan.cost < free.cost:
        length, cost = "", f"no relative step time ({plan.cost / free.cost:.2f}x){_not_asked_words(plan, free)}"
    else:
        length, cost = "", cost_ratio_words(plan, free)
    return (f"{lifted}, the best plan is {free.setting.label} on {counted(free.gpus, 'GPU')}{length}, cost "
            f"{free.cost:.4g} ({free.evidence_and_single_gpu}): {limit_costs} {cost}")


def _not_asked_words(plan: Plan, free: Plan) -> str:
    """Why `plan` ranks below `free`, the best plan of the question without the caller's limits, though that question
    does not ask it (--no-env's estimates), in words after a comma (``, but this plan is estimated``); "" where their
    evidence is alike."""
    return f", but this plan is {plan.evidence_label}" if plan.evidence != free.evidence else ""


def _lowered_fewer_words(answer: Answer, plan: Plan, names: OptionNames) -> str | None:
    """The summary's ``fewer GPUs`` row: the plan on fewer GPUs that --token-budget auto gives, with its lowered
    budget, and the cautions it carries that the best plan does not (`Plan.cautions_beside`: thin headroom, a
    host memory need past what a node is assumed to have, ...; None where the answer has none:
    `Answer.token_budget_auto`)."""
    if (fewer := answer.token_budget_auto) is None:
        return None
    return (f"{names.token_budget_auto} trains it on {counted(fewer.gpus, 'GPU')} ({plan.gpus - fewer.gpus} fewer): "
            f"{fewer.setting.label}{fewer.lowered_words} ({fewer.evidence_and_single_gpu})"
            f"{_cautions_beside(answer, plan, fewer)}")


def _evidence_words(answer: Answer, plan: Plan) -> str:
    """The summary's ``evidence`` row: what the plan rests on (`Plan.evidence_text`), but for an estimate without the
    memory model's figures, which the ``memory`` row below it gives; for an estimate of the shipped memory model,
    where its accuracy on held-out cells is, at the default margin those figures are for (the memory model's own,
    which a small card's default or --margin may not be)."""
    if plan.source is not None:
        return plan.evidence_text(answer.gpu, answer.model)
    default = answer.memory_model_margin if answer.memory_model_margin is not None else answer.margin
    accuracy = (f"; docs/memory.md in rft-solver's source gives its accuracy on held-out cells at margin {default:g}"
                if default is not None and answer.memory_model_source is None else "")
    return f"estimated: the memory model's prediction (below{accuracy}){plan.beyond_calibration_words}"


def _memory_line(answer: Answer, plan: Plan, memory_source: str | None) -> str:
    """The memory model's prediction for a plan (naming a model of your own by `memory_source`, and the margin it is
    held to where that is not the memory model's default: a documented or inferred plan stands at any margin, but its
    room to spare is figured at it); where it says a documented or inferred plan does not fit, why: the memory model
    errs on the safe side, and the table (a measurement) says the plan trains."""
    predicted = plan.prediction_words
    named = f"memory model: {memory_source}" if memory_source else "memory model"
    if answer.lora_rank:
        named += f"; LoRA rank {answer.lora_rank}'s states"
    if answer.critic:
        named += f"; a PPO critic's states, {answer.critic}"
    if answer.memory_model_margin is not None and answer.margin is not None:
        named += f"; margin {answer.margin:g}, the memory model's own {answer.memory_model_margin:g}"
    if plan.headroom_gb >= 0:
        return f"{predicted} ({named})"
    return f"{predicted} ({named}, which errs on the safe side; the table, a measurement, says it trains)"


def _across_nodes(answer: Answer, plan: Plan, model: Model, node_gpus: int, names: OptionNames) -> str | None:
    """The summary's ``longer`` row, for the longest context within a budget past one node whose plan takes the
    largest SP a node allows the model: that a larger SP, across nodes, which rft-solver does not plan, is what may
    reach further, in words (None otherwise)."""
    if answer.objective != "max_len" or answer.budget_gpus <= node_gpus:
        return None
    allowed = sp_degrees(model, answer.budget_gpus)
    within = max(sp for sp in allowed if node_gpus % sp == 0)
    across = [sp for sp in allowed if sp > node_gpus]
    if plan.sp != within or not across:
        return None
    return (f"SP={across[0]} or more may reach further, but its groups would span nodes of "
            f"{counted(node_gpus, 'GPU')}: rft-solver keeps each SP group inside a node ({names.node_gpus}), as the "
            "tables measured")


def _gpus_of_budget(answer: Answer, plan: Plan, node_gpus: int, names: OptionNames) -> str:
    """``4 of 6 GPUs (2 left for rollout)``, ``6 of 6 GPUs (none left for rollout)`` (the ``for rollout`` row says how
    to keep some); ``4 of 6 GPUs, with 2 rollout GPUs (2 unused: ...)`` with --rollout-gpus (and the nodes trainer
    and rollout take together, ``..., trainer and rollout on 2 nodes of 8``, when the layout takes more than one node
    of `node_gpus`); ``4 GPUs`` when the budget is not the user's; ``16 of 20 GPUs, 2 whole nodes of 8 (4 left for
    rollout)`` for a trainer past one node; ``8 of 12 GPUs: whole nodes of 8 (4 left for rollout)`` for a trainer of
    one node that a budget past it leaves short of a second, the rest idle as the trainer takes whole nodes past one."""
    of_budget = f"{plan.gpus} of {counted(answer.budget_gpus, 'GPU')}" + (
        f": whole nodes of {node_gpus}" if plan.gpus == node_gpus < answer.budget_gpus < 2 * node_gpus else "")
    if answer.rollout_gpus and plan.nodes is not None and plan.rollout_gpus is not None:
        trainer = counted(plan.gpus, "GPU") if answer.open_budget else of_budget
        nodes, rollout = plan.nodes, plan.rollout_gpus
        if nodes == 1:
            # The budget's GPUs the trainer leaves, for the rollout where a node holds them (not for a config's
            # rollout, which its engines give: --from-config refuses --rollout-gpus).
            widened = rollout + plan.unused_gpus
            them = it_or_them(plan.unused_gpus)
            gives = names.valued(names.rollout_gpus, widened)
            unused = f" ({plan.unused_gpus} unused: {gives} gives {them} to the rollout)" if (
                plan.unused_gpus and not answer.open_budget and answer.current is None
                and plan.gpus + widened <= node_gpus) else ""
            # --gpus counts the trainer's alone: the GPUs the plan takes in all (--total-gpus's header says them),
            # where it takes the budget whole (else the budget's GPUs left are another count, which the words name)
            in_all = f": {plan.gpus + rollout} in all" if (
                not plan.unused_gpus and answer.total_gpus is None and not answer.open_budget
                and answer.query is not None and answer.query.rollout_source is None) else ""
            return f"{trainer}, with {counted(rollout, 'rollout GPU')}{in_all}{unused}"
        source = answer.query.rollout_source if answer.query is not None else None
        asked = (f"{source} asks for {counted(answer.rollout_gpus, 'rollout GPU')}" if source
                 else f"{names.valued(names.rollout_gpus, answer.rollout_gpus)} asked")
        why = [f"{asked}: a trainer on whole nodes leaves the rollout whole nodes"] if rollout != answer.rollout_gpus \
            else []
        why += [alone] if (alone := _trainer_alone_words(answer, names)) else []
        more = f" ({'; '.join(why)})" if why else ""
        # The nodes are the whole job's, not the rollout's alone: the words say so.
        together = f"trainer and rollout on {nodes} nodes of {node_gpus}"
        return f"{trainer}, with {counted(rollout, 'rollout GPU')}, {together}{more}"
    spanned = f", {trainer_nodes_of(plan.gpus, node_gpus)} whole nodes of {node_gpus}" if plan.gpus > node_gpus else ""
    if answer.open_budget:
        return counted(plan.gpus, "GPU") + spanned
    # --rollout-gpus 0: no rollout here; a config's rollout, with no cluster section to count it in, goes beside
    # DPO: Trinity trains it on a dataset in mode train alone, with no explorer to leave GPUs to
    no_rollout = answer.rollout_gpus == 0 or answer.current is not None or (answer.query is not None
                                                                            and answer.query.dpo)
    spare = "unused" if no_rollout else "left for rollout"
    capped = (f"; plans take at most {MAX_ESTIMATED_GPUS} trainer GPUs" if answer.budget_gpus > MAX_ESTIMATED_GPUS
              else "")
    # The whole budget taken, where no --rollout-gpus says the rollout has GPUs of its own: a budget that is all the
    # GPUs a user has leaves the explorer none. (A config's rollout, with no cluster section to count it in, goes
    # beside the trainer: its note says so.)
    none_left = " (none left for rollout)" if answer.rollout_gpus is None and not no_rollout else ""
    left = none_left if plan.unused_gpus == 0 else f" ({plan.unused_gpus} {spare}{capped})"
    return f"{of_budget}{spanned}{left}"

