"""The domain rules the CP-SAT model is built from: what the tables say (which settings ran out of memory where, the
cell that vouches for a setting, `TablesVerdict`), lengths and token budgets, and the layout rules of nodes, rollout
GPUs and SP degrees. (The tests' plain-Python reference, tests/reference.py, restates them on its own.)"""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Collection, Mapping, Sequence
from enum import Enum
from functools import lru_cache, partial
from math import ceil, lcm
from types import MappingProxyType
from typing import Literal, NamedTuple

from pydantic import Field, PositiveInt

from solver.tables import (
    API_FILE_READERS,
    LAYOUTS_TAKEN,
    MAX_TOKENS,
    NODE_GPUS,
    YARN_VALIDATED_FACTOR,
    YARN_VALIDATED_TOKENS,
    Catalog,
    ExpertLayout,
    FileReaders,
    Frozen,
    GpuType,
    HeldExperts,
    LeftOutWhenNone,
    Model,
    Setting,
    TableOrigin,
    TrinityVersion,
    brief,
    cell_text,
    counted,
    counted_expert_layout,
    remove_padding_violation,
    shown_number,
    sp_rule_violation,
    vouches_for,
    yaml_brief,
)
from solver.tables.model_config import TRANSFORMERS_5_MODEL_TYPES
from solver.tables.peft_match import (
    ALL_LINEAR,
    adapted_modules,
    all_linear,
    excluded_yet_adapted,
    lora_targets_pattern,
    peft_target_match,
    peft_target_refusal,
    same_modules_regex,
    shown_module_names,
)
from solver.tables.peft_names import LoraTargets

Evidence = Literal["documented", "inferred", "estimated"]

CellMemory = Literal["at least", "the same", "at most"]
"""How the memory of the GPU type whose table holds a cell stands to the plan's GPU type's (`SourceCell.words`)."""


class BrokenRuleCode(str, Enum):
    """The machine-readable code of the rule of Trinity's or verl's a config's settings break
    (`solver.results.CurrentSettings.broken_rule_code`), beside its words: the one source of the codes that
    docs/json.md's table documents."""

    WHOLE_NODES = "whole-nodes"
    SP_MODEL_HEADS = "sp-model-heads"
    SP_MODEL_ATTENTION = "sp-model-attention"
    SP_DIVIDES_GPUS = "sp-divides-gpus"
    SP_WITHIN_NODE = "sp-within-node"
    BATCH_DIVIDES = "batch-divides"


class BrokenRule(NamedTuple):
    """A rule that settings break: its `code` and its `words`, as the text shows them."""

    code: BrokenRuleCode
    words: str


def table_words(gpu: str | None, gpus: int, source: str | None = None) -> str:
    """A table in words: ``the A100-80GB table for 4 GPUs`` (``the table`` for no GPU type), with ``of your cells
    (SOURCE)`` where it is measured cells of yours (`source`, `TableOrigin.source`)."""
    table = f"the {gpu} table" if gpu else "the table"
    return f"{table} for {counted(gpus, 'GPU')}" + (f" of your cells ({source})" if source else "")


SOURCE_CELL_LEFT_OUT_WHEN_NONE = ("gpu", "table_source")
"""The fields of a `SourceCell` that its JSON leaves out where they are None: a null gpu is the answer's own GPU type
(the answer says it); a null table_source, the source document."""


class SourceCell(LeftOutWhenNone):
    """The documented cell a plan rests on."""

    left_out_where_none = SOURCE_CELL_LEFT_OUT_WHEN_NONE

    model: str = Field(description=(
        "the model whose column the cell is in: the plan's own, or a tabled model of the same shape"))
    gpus: PositiveInt = Field(description="the trainer GPU count of the cell's table")
    max_model_len: PositiveInt = Field(description="the length of the cell's row, tokens")
    setting: str = Field(description=(
        "the cell as the source writes it ('Env + Offload + SP=4', 'vanilla'; '-' where nothing trained)"))
    gpu: str | None = Field(default=None, description=(
        "the GPU type whose table the cell is in where it is not the answer's own: one with at least as much "
        "memory, whose table says the setting ran out of memory (`larger_gpu_types`), or one with the same memory "
        "whose table for a GPU count the answer's lacks speaks for it (`Catalog.tables_for`), or, in a "
        "smaller_card note, one with at most as much memory (`smaller_gpu_types`); left out for the answer's own"))
    table_source: str | None = Field(default=None, description=(
        "where the cell's table comes from where it is measured cells of yours (--cells: the file's source); left "
        "out for the source document's"))

    def words(self, gpu: str, model: str | None = None, *, memory: CellMemory = "at least") -> str:
        """The cell in words, for a plan of `model` on `gpu` (empty: "the table"); naming the cell's
        model where it stands for `model` (a model of the same shape), and its GPU type where it is another's, with
        how its memory stands to `gpu`'s (`memory`): at least as much (a table that says a setting ran out of memory,
        a larger or same-memory GPU type's), the same (a cell that vouches for a plan: only a GPU type of the same
        memory lends its tables), or for a smaller card's (`smaller_card_words`) at most as much."""
        table = table_words(self.gpu or gpu, self.gpus, self.table_source)
        if self.gpu and gpu:
            table += (f" (its GPU has the same memory as {gpu})" if memory == "the same" else
                      f" (its GPU has {memory} the memory of {gpu})")
        said = f"{table} says {self.setting!r} at {self.max_model_len}"
        return said if model in (None, self.model) else f"{said} for {self.model}, of the same shape"

    def cited(self, origins: Mapping[int, TableOrigin]) -> SourceCell:
        """The cell, naming its table's GPU type where the table for its count is borrowed from another with the
        same memory, and its source where it is measured cells of yours (`origins`: `Catalog.table_origins`),
        unless it is another GPU type's cell already."""
        origin = origins.get(self.gpus)
        if self.gpu is not None or origin is None:
            return self
        return self.model_copy(update={"gpu": origin.gpu, "table_source": origin.source})


def validated_length(model: Model) -> int:
    """The longest context `model` is known to handle: its native context, or with YaRN up to what Qwen's model
    cards validate (`YARN_VALIDATED_FACTOR` times it, at most `YARN_VALIDATED_TOKENS`); a model with a RoPE
    scaling of its own, or one that is not Qwen's (`Model.qwen_yarn`), its native context."""
    if model.rope_scaling is not None or not model.qwen_yarn:
        return model.native_context
    return max(model.native_context, min(int(YARN_VALIDATED_FACTOR * model.native_context), YARN_VALIDATED_TOKENS))


def rope_theta_to_set(model: Model) -> int | float | None:
    """The ``model.rope_theta`` a YaRN plan sets beside its ``rope_scaling``: `model`'s own RoPE base, where the
    rollout's vLLM would otherwise rotate it at another (`Model.vllm_rope_theta_lost`: Qwen3-30B-A3B's 1000000);
    None where it would not."""
    lost = model.vllm_rope_theta_lost
    return None if lost is None else _written_number(lost[0])


def mapped_theta_words(release: str | None) -> str | None:
    """Why a YaRN rft-solver writes for the Trinity `release` (`solver.tables.counted_release`'s: ``0.5.2``, ``0.5``,
    ``0.6``; None: none named, 0.6's) carries the model's ``rope_theta`` (`mapped_rope_theta`), in words: its trainer
    on verl before 0.8 sets the mapping as the model's RoPE parameters, in which transformers 5 finds no base (0.6's
    ``trainer/verl_legacy/fsdp_workers.py:390-393``, 0.5.2's ``trainer/verl/fsdp_workers.py:362-363``; transformers
    5.3.0, the newest 0.5.2 takes, reads it as ``rope_parameters["rope_theta"]``, ``modeling_rope_utils.py:317``).
    None under a release whose transformers is 4 alone (0.5.1: `counted_expert_layout` ``separate``), which builds
    the same RoPE with it or without it."""
    if counted_expert_layout(release) == "separate":
        return None
    if release is None or release.startswith("0.6"):
        return ("Trinity 0.6's trainer on verl before 0.8 fails to build the model on a rope_scaling without it "
                "(transformers 5 finds no base)")
    return (f"Trinity {release}'s trainer on transformers 5 fails to build the model on a rope_scaling without it "
            "(it finds no base there)")


def mapped_rope_theta(model: Model) -> int | float | None:
    """The ``rope_theta`` every YaRN rft-solver writes carries in its mapping: `model`'s own RoPE base
    (`Model.own_rope_theta`); None where it is not known (a config.json's RoPE parameters per layer type). Trinity
    0.6's trainer on verl before 0.8 sets the mapping as the loaded config's RoPE parameters
    (``trainer/verl_legacy/fsdp_workers.py:390-393`` in 0.6.0), in which transformers 5 finds no base otherwise (a
    TypeError as it builds the model, ``base ** ...`` of None: ``modeling_rope_utils.py:446`` in 5.12.1, ``:488`` in
    5.25.0; ``model.rope_theta`` mends it on 5.12.1 alone). Run on a tiny Qwen3 (2026-12-06): harmless on 0.5, whose
    transformers 4.57.6 builds the same RoPE with it or without it; vLLM 0.12 or later rotates at it (``get_rope``),
    vLLM 0.11.0 reads a YaRN's own keys alone."""
    theta = model.own_rope_theta
    return None if theta is None else _written_number(theta)


def mapped_partial_rotary(model: Model) -> tuple[float, str] | None:
    """The ``partial_rotary_factor`` a YaRN rft-solver writes carries in its mapping, and why, in words: `model`'s own
    where the rollout's vLLM would otherwise take another (`Model.vllm_partial_rotary_lost`), else the share vLLM
    rotates where the trainer's transformers rotates another (`Model.trainer_partial_rotary_differs`: a MiniMax-M2
    config's ``rotary_dim`` over ``head_dim``), so both rotate it; None where neither."""
    if model.vllm_partial_rotary_lost is not None:
        own, taken = model.vllm_partial_rotary_lost
        return own, f"{model.name}'s own; the rollout's vLLM takes {taken!r} where the rope_scaling comes without it"
    if model.trainer_partial_rotary_differs is not None:
        trainer, rollout = model.trainer_partial_rotary_differs
        return rollout, (f"rotary_dim over head_dim, which the rollout's vLLM rotates; the trainer's transformers "
                         f"rotates {trainer!r} without it")
    return None


def _written_number(number: float) -> int | float:
    """`number` as a config writes it: a whole one as an int (1000000, not 1000000.0)."""
    return int(number) if number.is_integer() else number


def token_budget(max_model_len: int, sp: int) -> int:
    """Trinity's default ``max_token_len_per_gpu``: ``ceil(2 * max_model_len / sp)``."""
    return ceil(2 * max_model_len / sp)


def one_sequence_per_micro_batch(model: Model) -> bool:
    """Whether `model`'s plans train one padded sequence per micro-batch: remove padding would train it wrong
    (`remove_padding_violation`), so they turn it off, and dynamic batch sizes with it (each pass's micro-batch size
    per GPU 1), which leaves Trinity's token budget unread."""
    return remove_padding_violation(model) is not None


def padded_sequences(dpo: bool) -> int:
    """The sequences of up to ``max_model_len`` tokens in the actor's micro-batch of a model trained one padded sequence
    per micro-batch (`one_sequence_per_micro_batch`): one, or for `dpo` a pair, a chosen and a rejected sequence, which
    Trinity's DPO loss takes from the micro-batch's rows on every verl line that trains DPO (before verl 0.8 Trinity
    doubles the size 1 to 2, 0.6.0 ``trainer/verl_legacy/verl_config.py:685-688``; on 0.8 or later it is written 2,
    `solver.trinity.checks._check_dpo_pairs`), each padded to the micro-batch's width: twice one sequence's
    activations."""
    return 2 if dpo else 1


def counts_dpo_pairs(model: Model, dpo: bool) -> bool:
    """Whether a run of `model` that trains DPO or not (`dpo`) counts a DPO pair per micro-batch (`padded_sequences`):
    for DPO, a model trained one padded sequence per micro-batch (`one_sequence_per_micro_batch`); a budget read
    bounds another's micro-batch, pairs and all (`Answer.dpo_pairs`, `MemoryEstimate.dpo_pairs`)."""
    return dpo and one_sequence_per_micro_batch(model)


def padded_micro_batch_words(dpo: bool) -> str:
    """What the actor's micro-batch of a model trained one padded sequence per micro-batch holds
    (`padded_sequences`), in words, with dynamic batch sizes off: one sequence, or for `dpo` one pair."""
    return f"{'one DPO pair' if dpo else 'one sequence'} per micro-batch (dynamic batch sizes off)"


DPO_PAIR_SIZES = (2, 1)
"""The actor's micro-batch size per GPU that holds one DPO pair, a chosen and a rejected sequence, for a padded model
(dynamic batch sizes off), by whether the release is Trinity 0.5: 1 there, which Trinity doubles before verl 0.8
(0.5.0 ``common/verl_config.py:655-658``); 2 where it may be 0.6, whose DPO loss on verl 0.8 or later takes a
micro-batch's rows as they are (`solver.trinity.checks._check_dpo_pairs`), and which pip gives verl 0.8 or later
unless verl is pinned (Trinity 0.6.0 requires ``verl>=0.7.1``)."""


def counted_tokens(model: Model, max_model_len: int, sp: int, budget: int | None = None, dpo: bool = False) -> int:
    """The tokens per GPU the memory model counts for `model` at `max_model_len` and SP `sp`: for a model of
    `one_sequence_per_micro_batch` (at SP=1), its padded sequences (`padded_sequences`: for `dpo`, a pair) of
    `max_model_len` each (verl 0.8 pads a micro-batch
    to its own longest; before 0.8, to the batch's longest prompt plus longest response, which Trinity keeps within
    ``max_prompt_tokens + max_response_tokens <= max_model_len`` where no prompt or response passes its own limit:
    `ONE_SEQUENCE_WIDER_WORDS`); else `budget` (a ``max_token_len_per_gpu`` of one's own), or Trinity's default
    (`token_budget`)."""
    if one_sequence_per_micro_batch(model):
        return padded_sequences(dpo) * ceil(max_model_len / sp)
    return token_budget(max_model_len, sp) if budget is None else budget


def longest_length_of_tokens(model: Model, tokens: int, sp: int, dpo: bool = False) -> int:
    """The longest ``max_model_len`` whose `counted_tokens` for `model` at SP `sp` (for `dpo` too) are at most
    `tokens`."""
    return tokens // padded_sequences(dpo) * sp if one_sequence_per_micro_batch(model) else tokens * sp // 2


ONE_SEQUENCE_WIDER_WORDS = ("before verl 0.8 (Trinity 0.5, 0.6 on verl 0.7) it is padded to the batch's longest prompt "
                            "plus its longest response, wider only where a prompt or a response passes "
                            "max_prompt_tokens or max_response_tokens (a multi-turn workflow, "
                            "model.enable_prompt_truncation off, a rollout max_tokens above max_response_tokens), up "
                            "to twice max_model_len, which the estimate does not count; and for DPO a micro-batch "
                            "holds two sequences, a chosen and a rejected one, which Trinity's DPO loss takes as a "
                            "pair (before verl 0.8 Trinity doubles the size to 2; on verl 0.8 or later the actor's "
                            "must be written 2: with 1 the loss finds no rejected sequence, dpo-pair-split), which the "
                            "estimate counts where it is made for DPO (a config of algorithm_type dpo, --dpo, or a "
                            "cluster job's dpo: true)")
"""Where a micro-batch of one padded sequence (`counted_tokens`) holds more than ``max_model_len`` tokens, in words:
verl 0.7.0's actor runs the batch's padded width (``workers/actor/dp_actor.py:110-111`` without remove padding),
which Trinity's ``to_data_proto`` pads to (0.5.0 ``trainer/verl/utils.py:31-32``, 0.6.0 ``:62-63``); a prompt and a
response are each below ``max_model_len`` (an experience is cut at ``max_model_len - 1`` tokens,
``common/models/model.py:337-342`` in 0.6.0); for DPO it doubles the actor's and ref's micro-batch sizes
(0.5.0 ``common/verl_config.py:655-658``, 0.6.0 ``verl_legacy/verl_config.py:686-688``), which Trinity 0.6 on verl 0.8
or later does not, where its DPO loss pairs a micro-batch's rows (``solver.trinity.checks._check_dpo_pairs``)."""


def default_budget_reach(max_model_len: int, sp: int) -> int:
    """The longest ``max_model_len`` whose Trinity default budget at `sp` (`token_budget`) is that of `max_model_len`:
    the lengths up to it take no more tokens per GPU, and so no more memory (with SP above 2, ``ceil(2L/sp)`` may round
    a length up to the tokens of a longer one: 30001 and 30002 both take 15001 at SP=4)."""
    return sp * token_budget(max_model_len, sp) // 2


def shortest_length_of_budget(tokens: int, sp: int) -> int:
    """The shortest ``max_model_len`` whose Trinity default budget at `sp` (`token_budget`) is at least `tokens`:
    ``floor(sp * (tokens - 1) / 2) + 1`` (15001 tokens at SP=4: 30001, though 30002 takes them too)."""
    return sp * (tokens - 1) // 2 + 1


def least_token_budget(max_model_len: float, sp: int) -> int:
    """The smallest ``max_token_len_per_gpu`` verl takes: an SP group's micro-batch holds the longest
    sequence, ``ceil(max_model_len / sp)``."""
    return ceil(max_model_len / sp)


def micro_batch_stop_words(longest: str) -> str:
    """Where verl before 0.8 stops a pass whose tokens per micro-batch ("that") hold no sequence of the length, in
    words, after "verl": it asserts that each step's batch fits a micro-batch. Trinity 0.5.2 and 0.6.0 put their own
    ``rearrange_micro_batches`` in verl's stead, which takes the batch's longest sequence (`longest`: those releases,
    in words; 0.5.2's ``trainer/verl/utils.py:349``, put in at ``fsdp_workers.py:115`` and ``:1148``, the actor's and
    the critic's workers; 0.6.0's ``trainer/verl_legacy/utils.py:437``, at ``verl_legacy/fsdp_workers.py:125`` and
    ``:1246``). 0.5.0 and 0.5.1 keep verl 0.7.0's, which takes its padded width
    (``utils/seqlen_balancing.py:379``, ``:382``): its longest prompt plus its longest response (``to_data_proto``,
    ``trainer/verl/utils.py:31`` in 0.5.0), which may come from two sequences."""
    return (f"stops at the first step whose batch holds a sequence longer than that ({longest}) or is padded wider "
            f"than that, {PADDED_WIDTH_WORDS} (0.5.0 and 0.5.1)")


PADDED_WIDTH_WORDS = "to its longest prompt plus its longest response"
"""A batch's padded width, which verl 0.7.0 checks (`micro_batch_stop_words`), in words."""


def raised_budget_stop_words(budget: str, least: int, sp: int) -> str:
    """Where Trinity 0.5.1's verl stops a pass whose token budget (`budget`, in words) Trinity raised to `least`,
    ``ceil(L / SP)``, at `sp`, in words: a line of its own, after the one on the raise. Every sequence fits the length,
    but the padded width that verl 0.7.0 checks (`micro_batch_stop_words`) takes the longest prompt and the longest
    response from two sequences, and neither is kept to ``max_prompt_tokens`` nor ``max_response_tokens`` there: a
    multi-turn workflow's response is the whole talk after the first prompt, cut at ``max_model_len - 1`` tokens alone
    (``convert_messages_to_experience``, ``common/models/model.py:204`` to ``:211``), ``enable_prompt_truncation:
    false`` keeps a prompt whole (``vllm_model.py:71``), and a taskset's ``rollout_args.max_tokens`` may exceed
    ``max_response_tokens`` (``config_validator.py:935`` fills it only where unset). 0.5.0 raises to twice the length,
    which no padded width exceeds (a prompt and a response are each below it); 0.5.2 and 0.6.0 check the longest
    sequence."""
    return (f"{budget} as Trinity 0.5.1 raises it, {least} x SP {sp} = {least * sp} tokens, holds every sequence, but "
            f"its verl stops at the first step whose batch is padded wider, {PADDED_WIDTH_WORDS}, which may come from "
            "two sequences (a multi-turn workflow, model.enable_prompt_truncation off, or a rollout max_tokens above "
            "max_response_tokens)")


TOKEN_CAP_WORDS = "capped by {}"
"""A plan's token budget where a cap binds on it (`solver.results.Plan.token_budget_cap`), in words: ``{}`` where the
cap's source goes (``--token-budget 16384``, ``the config's own max_token_len_per_gpu``: `CONFIG_TOKEN_CAP_SOURCE`;
`solver.query.token_cap_words`)."""

CONFIG_TOKEN_CAP_SOURCE = "the config's own max_token_len_per_gpu"
"""Where a query's token budget cap came from when a Trinity config's own lowered budget set it
(`solver.query.Query.token_budget_cap_source`)."""

TOKEN_BUDGET_STEP = 1024
"""A lowered token budget is a multiple of this many tokens, unless it is the least one."""


def lowered_token_budget(max_model_len: int, sp: int, most_tokens: int) -> int | None:
    """The ``max_token_len_per_gpu`` of a plan that may hold at most `most_tokens` tokens per GPU: Trinity's
    default where it is within them; else the most of them, down to a multiple of `TOKEN_BUDGET_STEP`, but
    at least `least_token_budget`. None when not even the least budget is within them."""
    default, least = token_budget(max_model_len, sp), least_token_budget(max_model_len, sp)
    if default <= most_tokens:
        return default
    if least > most_tokens:
        return None
    return max(least, most_tokens - most_tokens % TOKEN_BUDGET_STEP)


def most_estimated_tokens(max_model_len: int, sp: int, longest: int) -> int:
    """The most tokens per GPU an estimate whose longest length at Trinity's default budget is `longest` holds at
    `max_model_len` (`lowered_token_budget`'s `most_tokens`): that default's at `longest`; past `longest`, one fewer
    where `longest` stops short of the lengths of its tokens (`default_budget_reach`): a table's row says a longer
    length with those tokens ran out of memory (cells that contradict themselves: a row at 30002 that says SP=4 did
    at the 15001 tokens per GPU a row at 30001 trained with). Past `longest` the default at `max_model_len` is more
    than these: its budget is lowered."""
    most = token_budget(longest, sp)
    return most - 1 if longest < max_model_len and longest < default_budget_reach(longest, sp) else most


def lowered_reach(longest: int, sp: int) -> int:
    """The longest ``max_model_len`` a lowered token budget reaches for a setting whose longest length at
    Trinity's default is `longest`: the most tokens per GPU past it (`most_estimated_tokens`), times SP (then one
    sequence fills an SP group's micro-batch); `longest` itself where that is shorter (no token left past it: a
    row said the setting ran out of memory at one token per GPU). Every length up to it has a budget
    (`lowered_token_budget`)."""
    return max(longest, sp * most_estimated_tokens(longest + 1, sp, longest))


@lru_cache(maxsize=4096)
def tried_settings(model: Model, gpus: int) -> tuple[Setting, ...]:
    """The source's escalation order (`ESCALATION_ORDER`) with the SP degrees the rules allow on `gpus` GPUs:
    vanilla and Env, each SP degree in turn without and with Env, then Env + Offload with each SP degree.
    On the documented GPU counts that is the source's order less the degrees forbidden there; on more GPUs
    it goes on in the same pattern (SP=8 and Env + SP=8 after Env + SP=4, and so on), with the degrees
    that keep each SP group inside a node of `NODE_GPUS` when the GPUs span nodes."""
    tried = (Setting(env=env, offload=offload, sp=sp) for sp in sp_degrees(model, gpus, NODE_GPUS)
             for env, offload in ((False, False), (True, False), (True, True)))
    return tuple(sorted(tried, key=lambda setting: setting.escalation_key))


@lru_cache(maxsize=4096)
def failed_settings(model: Model, gpus: int, cell: Setting | None) -> tuple[Setting, ...]:
    """The settings that ran out of memory where the table for `gpus` GPUs names `cell`: those the source
    tried before it (`tried_settings`), or all of them at a ``-`` cell."""
    order = tried_settings(model, gpus)
    return order if cell is None else order[: order.index(cell)] if cell in order else ()


def refuting_row(model: Model, rows: Sequence[tuple[int, int]], settings: Mapping[tuple[int, int], Setting],
                 gpus: int, setting: Setting, length: int) -> int | None:
    """The row of the table for `gpus` GPUs (of a GPU type's `table_cells`) that says `setting` runs out of
    memory at `length`: the first row where a setting that ran out of memory (`failed_settings`) includes it, where
    `length` is past `own_table_limit`. None when no row says so there, or there is no such table."""
    failures = failures_by_row(model, rows, settings, gpus)
    return first_failure(failures, setting) if length > own_table_limit(failures, setting) else None


def refuting_cell(model: Model, rows: Sequence[tuple[int, int]], settings: Mapping[tuple[int, int], Setting],
                  gpus: int, setting: Setting, length: int, *, others_only: bool = False) -> tuple[int, int] | None:
    """(count, row) of the table that says `setting` runs out of memory on `gpus` GPUs at `length`: the
    count's own (`refuting_row`), else the first of the tables for more GPUs that says it runs out of memory
    there (what runs out of memory on more GPUs does on fewer: each holds more of the states, and the same
    tokens), else the nearest table for fewer GPUs that says the setting with Offload does (no GPU holds any of
    the states then, so each holds as much on any count, and without Offload more); `within_refuting_tables`
    caps the estimates so. `others_only`: the tables for other counts alone. None when no table says so."""
    counts = sorted({n for n, _ in rows})
    with_offload = Setting(env=setting.env, offload=True, sp=setting.sp)
    order = ([] if others_only else [(gpus, setting)]) + [(n, setting) for n in counts if n > gpus] + [
        (n, with_offload) for n in reversed(counts) if n < gpus]
    return next(((n, row) for n, asked in order if n in counts
                 and (row := refuting_row(model, rows, settings, n, asked, length)) is not None), None)


def failures_by_row(model: Model, rows: Sequence[tuple[int, int]], settings: Mapping[tuple[int, int], Setting],
                    gpus: int) -> list[tuple[int, tuple[Setting, ...]]]:
    """(row, `failed_settings` there) for each row of the table for `gpus` GPUs, shortest first."""
    return [(row, failed_settings(model, gpus, settings.get((gpus, row))))
            for row in sorted(row for n, row in rows if n == gpus)]


def first_failure(failures: list[tuple[int, tuple[Setting, ...]]], setting: Setting) -> int | None:
    """The first row of `failures_by_row` where a setting that ran out of memory includes `setting`; None when
    there is none."""
    return next((row for row, failed in failures if any(f.includes(setting) for f in failed)), None)


def own_table_limit(failures: list[tuple[int, tuple[Setting, ...]]], setting: Setting) -> int:
    """The longest length at which a count's own table (its `failures_by_row`) does not say `setting` runs
    out of memory, or `MAX_TOKENS` when no row says so. A row speaks for the lengths between it and the row before
    (the next row up), except those that take no more tokens per GPU at the setting's SP than the row before
    (`default_budget_reach`), which speaks for them: the memory follows the tokens. So: the row before the first
    that says so (0 when that is its first row), as far as its tokens reach, short of that first row."""
    first = first_failure(failures, setting)
    if first is None:
        return MAX_TOKENS
    before = max((row for row, _ in failures if row < first), default=0)
    return min(default_budget_reach(before, setting.sp), first - 1)


class TableCells(NamedTuple):
    """A model's cells in a GPU type's tables."""

    rows: tuple[tuple[int, int], ...]
    """(GPU count, max_model_len) of every row of the tables that have the model's cells."""
    settings: Mapping[tuple[int, int], Setting]
    """The setting the model's cell names at each row where something trains."""
    columns: Mapping[int, str]
    """Per GPU count, the name its table gives the model's cells (`Table.name_for`)."""


NO_CELLS = TableCells((), MappingProxyType({}), MappingProxyType({}))
"""The cells of no table (for --estimate: the memory model alone)."""


@lru_cache(maxsize=256)
def table_cells(gpu_type: GpuType, model: Model) -> TableCells:
    """`model`'s cells in those of `gpu_type`'s tables (one per GPU count: `Catalog.tables_for` picks those that
    speak for a GPU type) that have them (`Table.name_for`) (cached: every query on the GPU type asks again)."""
    tables = gpu_type.tables
    columns = {table.gpus: name for table in tables if (name := table.name_for(model)) is not None}
    named = [table for table in tables if table.gpus in columns]
    rows = tuple((table.gpus, row.max_model_len) for table in named for row in table.rows)
    settings = {(table.gpus, row.max_model_len): setting for table in named for row in table.rows
                if (setting := row.setting(columns[table.gpus])) is not None}
    return TableCells(rows, MappingProxyType(settings), MappingProxyType(columns))


def vouching_cell(model: Model, rows: Sequence[tuple[int, int]], settings: Mapping[tuple[int, int], Setting],
                  gpus: int, setting: Setting, length: int, *, columns: Mapping[int, str],
                  larger: Sequence[tuple[str, TableCells]] = (), lora: bool = False
                  ) -> tuple[Evidence, SourceCell] | None:
    """The cell that vouches for `setting` on `gpus` GPUs at `length`, given a GPU type's `table_cells` for
    `model` (its `columns` per count name whose cells they are): documented when the cell at L's row (the
    next row up) of the table for `gpus` GPUs is exactly the setting; otherwise inferred from the shortest
    row at or beyond L whose cell the setting includes, in the table for `gpus` GPUs, else in the table for
    the most GPUs fewer than it (what trains on fewer GPUs trains on more: the states shard wider, and an SP
    at least the cell's keeps the tokens per GPU at most the cell's), unless the table for `gpus` GPUs, of
    this GPU type or of one with at least its memory (`larger`, `larger_tables`), says the cell's setting
    runs out of memory at L (`refuting_row`: a measurement decides). A table of one GPU vouches for no other
    count (one GPU has no collective-communication buffers), and no table vouches past `MAX_ESTIMATED_GPUS`
    (`vouches_for`). None when no cell vouches. For a `lora` run, which holds less than the full fine-tuning the cells
    measured, a cell vouches by inference alone (no cell documents it) and no table refutes one (`tables_verdict`)."""
    own = _row_at(rows, gpus, length)
    if own is not None and settings.get((gpus, own)) == setting:
        return ("inferred" if lora else "documented",
                SourceCell(model=columns[gpus], gpus=gpus, max_model_len=own, setting=setting.label))
    refuters = [] if lora else [(rows, settings), *((cells.rows, cells.settings) for _, cells in larger)]
    for count in sorted({n for n, _ in rows if vouches_for(n, gpus)}, reverse=True):
        for row in sorted(row for n, row in rows if n == count and row >= length):
            cell = settings.get((count, row))
            if cell and setting.includes(cell) and (count == gpus or all(
                    refuting_row(model, their_rows, their_settings, gpus, cell, length) is None
                    for their_rows, their_settings in refuters)):
                return "inferred", SourceCell(model=columns[count], gpus=count, max_model_len=row, setting=cell.label)
    return None


NEW_ADAPTER_WORDS = "a new adapter on {targets}, as planned; with LoRA Trinity builds no reference model"
"""What the LoRA config that a plan's keys turn LoRA on with says of the modules it adapts (`targets`)."""
LORA_CONFIGS_WORDS = NEW_ADAPTER_WORDS.format(targets="all-linear (Trinity's default target_modules)")
"""What the LoRA config that a plan's keys turn LoRA on with says (``model.lora_configs: [{lora_rank: R}]``, written
where no config of the user's gives its own: `solver.trinity.plan_keys`, the apply lines), on any model but a mixture
of experts whose LoRA config PEFT converts (`lora_configs_words`), for a plan on all-linear's modules."""


def transformers_5_words(version: TrinityVersion | None) -> str:
    """When a Trinity release runs on transformers 5, the only one on which PEFT converts a mixture of experts' LoRA
    config (``is_transformers_ge_v5``, ``tuners/tuners_utils.py:833`` in peft 0.21.2), as the wheels pin it: 0.6.0
    requires 5.12.1 or later (said for `version` None too), 0.5.0 takes any (``transformers>=4.51.0``), 0.5.1 none
    (``<5.0.0``) and 0.5.2 up to 5.3.0 (``<=5.3.0``), whose conversion mapping has Qwen3-MoE and Mixtral too."""
    if version == "0.5":
        return ("with transformers 5 (Trinity 0.5.0 allows it, 0.5.2 up to 5.3.0; 0.5.1 pins transformers below 5, "
                "where PEFT converts nothing and the adapter's config is saved whole)")
    return "with transformers 5 (Trinity 0.6 requires 5.12.1 or later)"


def transformers_4_unloaded_words(model: Model, version: TrinityVersion | None, experts: ExpertLayout) -> str | None:
    """What ``transformers-4-no-class`` cautions of for `model` under the Trinity release `version` (its experts'
    layout `experts` telling 0.5.1, ``separate``, from 0.5, 0.5.0 and 0.5.2, ``either``): a model type whose
    transformers class is new in 5.x (`TRANSFORMERS_5_MODEL_TYPES`), which a trainer on transformers 4 (0.5.1's pin;
    0.5.2's ``vllm`` extra installs it) loads only by the checkpoint's own modeling code; None for any other model, and
    for another release (0.6 requires transformers 5.12.1 or later, which has the class)."""
    if version != "0.5" or model.model_type not in TRANSFORMERS_5_MODEL_TYPES:
        return None
    if experts == "separate":
        pinned, way_out = "Trinity 0.5.1 pins", "use Trinity 0.5.2 on transformers 5 (up to 5.3.0) or 0.6"
    else:
        pinned = ("Trinity 0.5.1 pins and 0.5.2's vllm extra installs (vLLM 0.17.0 to 0.19.0 require transformers "
                  "below 5)")
        way_out = "run it on transformers 5 (Trinity 0.5.0 allows it, 0.5.2 up to 5.3.0) or use Trinity 0.6"
    return (f"{model.name} is of model_type {model.model_type}, whose transformers class is new in 5.0 (none in "
            f"4.57.6, one in 5.3.0): on transformers 4, which {pinned}, the trainer loads it only by the checkpoint's "
            f"own modeling code (trust_remote_code, where its auto_map names one): {way_out}")


def lora_moe_unsaved_words(model: Model, version: TrinityVersion | None, experts: ExpertLayout) -> str | None:
    """What ``lora-moe-config-unsaved`` cautions of for LoRA on `model` with the Trinity release `version`, where it is
    a mixture of experts whose LoRA config PEFT converts (`MoE.peft_converts_experts`): each checkpoint's adapter
    config saved cut short, which vLLM fails to reload (`transformers_5_words`: the releases that run into it); None
    for any other model, and under a release that holds the experts `separate` (`experts`: 0.5.1's transformers 4,
    where PEFT converts nothing). Under 0.5 it names transformers 4 as a way out (`transformers_4_way_out`; 0.5.0's
    ``vllm`` extra allows vLLM 0.10.2, ``transformers>=4.55.2``), as the config check's line does. A plan's caution
    (`solver.results.Plan.with_cautions`) and its LoRA key's comment (`lora_configs_words`) say it."""
    if model.moe is None or not model.moe.peft_converts_experts or experts == "separate":
        return None
    return (f"{transformers_5_words(version)} PEFT makes the adapter's target_parameters a set, which Trinity's "
            "_save_lora cannot write as JSON, so the explorer's vLLM fails to reload the adapter at the first weight "
            f"sync: {transformers_4_way_out(version)}train {model.name} without LoRA, or patch _save_lora to write "
            "target_parameters as a list")


def transformers_4_way_out(version: TrinityVersion | None) -> str:
    """Under Trinity 0.5 (`version`), running on transformers 4 as a way out of ``lora-moe-config-unsaved``, in words
    ending ", " (the first of the ways out that `lora_moe_unsaved_words` and the config check's line give), which
    0.5.2's ``vllm`` extra installs (``vllm<=0.19.0,>=0.17.0``, each ``transformers<5,>=4.56.0`` in its METADATA); ""
    for any other (0.6 requires transformers 5)."""
    return ("run it on transformers 4 (Trinity 0.5.2's vllm extra installs it: vLLM 0.17.0 to 0.19.0 require "
            "transformers below 5), " if version == "0.5" else "")


def saved_split(targets: object) -> bool:
    """Whether Trinity writes the ``target_modules`` `targets` of a new adapter into each checkpoint's
    ``lora_adapter/adapter_config.json`` as its single characters: a regex (a string other than ``all-linear``, which
    PEFT compiles), which PEFT keeps as it is (``LoraConfig.__post_init__``, ``tuners/lora/config.py:1014`` to
    ``:1016`` in peft 0.21.2; only ``all-linear`` becomes a set of module names, ``tuners/tuners_utils.py:2489``) and
    Trinity's ``_save_lora`` writes as ``list(target_modules)`` (``trainer/verl/workers.py:177`` and
    ``trainer/verl_legacy/fsdp_workers.py:1098`` in 0.6.0, ``trainer/verl/fsdp_workers.py:977`` in 0.5.1, ``:1011``
    in 0.5.2, ``:1004`` in 0.5.0). Trinity's typed config takes a string alone (``LoRAConfig.target_modules: str``),
    so no other form of a regex is saved whole. On which models it is so: `saved_split_models`."""
    if not isinstance(targets, str) or all_linear(targets):
        return False
    try:
        peft_target_match(targets)
    except re.error:  # refused, or counted as full fine-tuning, as such
        return False
    return True


SAVED_SPLIT_CONVERTED = "lora-moe-config-unsaved says what fails"
"""How a line on a regex saved split (`saved_split_words`) points, on a mixture of experts whose LoRA config PEFT
converts, to the caution that says what fails there instead."""


def saved_split_models(model: Model | None, version: TrinityVersion | None, experts: ExpertLayout) -> str | None:
    """The models, in words, on which Trinity saves a ``target_modules`` regex as its characters (`saved_split`):
    for `model` None (a config read alone, which knows no model), a dense model's, and under 0.5 a mixture of
    experts' with transformers 4 too (0.5.1's pin, 0.5.0's and 0.5.2's where installed so), where PEFT converts
    nothing; on a mixture of experts whose config PEFT converts (`lora_moe_unsaved_words`), transformers 5's PEFT
    resolves the regex into module names before the save (``_resolve_string_target_modules``,
    ``utils/transformers_weight_conversion.py:355`` to ``:399`` in peft 0.21.2), which then fails whole, as it writes
    ``target_parameters`` too (``lora-moe-config-unsaved``). For a known `model` with its routed experts held as
    `experts`: "" where it is saved so whatever transformers runs, the words for transformers 4 where either may
    (``either``), None where no transformers it runs on saves it so (a converted mixture of experts' ``fused``)."""
    if model is None:
        converted = (f"on a mixture of experts whose config PEFT converts, it turns it into module names before the "
                     f"save, and {SAVED_SPLIT_CONVERTED}")
        if version != "0.5":
            return f" on a dense model ({converted})"
        return (" on a dense model, and with transformers 4 (Trinity 0.5.1's; 0.5.0 and 0.5.2 take 4 or 5) on a "
                f"mixture of experts too, where PEFT converts nothing (with transformers 5, {converted})")
    if lora_moe_unsaved_words(model, version, experts) is None:
        return ""
    if experts != "either":
        return None
    return (" with transformers 4 (Trinity 0.5.1's; 0.5.0 and 0.5.2 take 4 or 5), where PEFT converts nothing (with "
            f"transformers 5, PEFT turns it into module names before the save, and {SAVED_SPLIT_CONVERTED})")


def saved_split_words(key: str, pattern: str, models: str, fix: str) -> str:
    """What ``lora-targets-saved-split`` says of the ``target_modules`` regex `pattern` (`saved_split`) that `key`
    names (with the regex), on the `models` `saved_split_models` gives, and what to do (`fix`, before "which
    Trinity saves as module names"): a config's line (``solver.trinity.config``), a plan's caution and the comment
    on the LoRA config its keys write (`lora_configs_words`). PEFT takes a list as name endings (a name that is one,
    or ends in "." and one: ``tuners_utils.py:2372`` to ``:2376`` in peft 0.21.2), which match no module (or a
    decoder layer, by a digit), so loading that adapter with PEFT fails (``PeftModel.from_pretrained``, as verl loads
    a ``lora_adapter_path``: ``workers/engine/fsdp/transformer_impl.py:352`` in verl 0.9.1,
    ``trainer/verl_legacy/fsdp_workers.py:496`` in Trinity 0.6.0). The run itself is unaffected: vLLM loads the
    saved adapter by its tensors' names (``lora/lora_model.py:210`` to ``:221`` in vLLM 0.19.1)."""
    return (f"{key} is a regular expression, which Trinity writes into each checkpoint's "
            "lora_adapter/adapter_config.json as its single characters "
            f"({yaml_brief(list(dict.fromkeys(pattern))[:4])[:-1]}, ...]){models}: this run is unaffected (vLLM loads "
            "the adapter by its tensors' names), but PEFT reads those characters as module-name endings, so loading "
            "that adapter with PEFT (a later run's model.lora_configs[0].path, or PeftModel.from_pretrained) fails: "
            f"{fix}, which Trinity saves as module names, or write the regular expression back into the saved "
            "adapter_config.json before you load it")


def lora_saved_split_words(model: Model, version: TrinityVersion | None, experts: ExpertLayout,
                           targets: LoraTargets | None) -> str | None:
    """What ``lora-targets-saved-split`` says of a new adapter on `model` (its routed experts held as `experts`
    under the Trinity release `version`) on the plan's `targets` (None: all-linear's, saved whole) that its keys
    write: a plan's caution and its LoRA config's comment (`lora_configs_words`), where `saved_split_models` says
    the regex is saved split; None otherwise."""
    if targets is None or not saved_split(targets.pattern):
        return None
    # where one transformers' module names alone take the regex, the adapter is made (and saved) with that one alone
    taken = one_transformers_taken(targets.pattern, targets.excluded, model, experts)
    models = saved_split_models(model, version, taken or experts)
    return None if models is None else saved_split_words(
        f"target_modules '{targets.pattern}'", targets.pattern, models, "plan for all-linear instead")


def lora_configs_words(model: Model, version: TrinityVersion | None, experts: ExpertLayout,
                       targets: LoraTargets | None, said_above: bool = False) -> str:
    """What the LoRA config a plan's keys turn LoRA on with says for `model` with the Trinity release `version`, its
    routed experts held as `experts`: `LORA_CONFIGS_WORDS`, or for the plan's `targets` (`Plan.lora_targets`) the
    regex it writes; where one transformers' names alone take that regex (`one_transformers_taken`), that PEFT fails on
    it with the other as Trinity makes the adapter, and which to run (``lora-targets-one-transformers``); and on a
    mixture of experts whose LoRA config PEFT converts what ``lora-moe-config-unsaved`` cautions of
    (`lora_moe_unsaved_words`), where transformers 5's PEFT takes the regex (else it fails before any save); and
    where Trinity saves the regex as its characters, what ``lora-targets-saved-split`` cautions of
    (`lora_saved_split_words`); where `said_above` (``solve``'s apply lines, below the plan's caution rows), those
    two pointed to in a word, not said again."""
    less = "" if targets is None or targets.excluded is None else f" less exclude_modules '{targets.excluded}'"
    words = LORA_CONFIGS_WORDS if targets is None else NEW_ADAPTER_WORDS.format(
        targets=f"target_modules '{targets.pattern}'{less}")
    taken = None if targets is None else one_transformers_taken(targets.pattern, targets.excluded, model, experts)
    refused = None if taken is None else (
        f"with transformers {TRANSFORMERS_OF[other_layout(taken)]} PEFT fails on it as Trinity makes the adapter: run "
        f"it with transformers {TRANSFORMERS_OF[taken]} ({PINNED_BY[TRANSFORMERS_OF[taken]]})")
    unsaved = None if taken == "separate" else lora_moe_unsaved_words(model, version, experts)
    split = lora_saved_split_words(model, version, experts, targets)
    cautions = [words for words in (unsaved, split) if words is not None]
    if said_above and cautions:
        cautions = [f"see the caution{'s' if len(cautions) > 1 else ''} above on how Trinity saves its config"]
    said = "; ".join(words for words in (refused, *cautions) if words is not None)
    return f"{words}; but {said}" if said else words


TRANSFORMERS_OF: dict[HeldExperts, int] = {"fused": 5, "separate": 4}
"""The transformers major version that holds the routed experts as each `HeldExperts`."""
PINNED_BY = {4: "Trinity 0.5.1 pins it", 5: "Trinity 0.5.2 takes up to 5.3.0, 0.6 requires 5.12.1 or later"}
"""What pins each transformers major version among Trinity's releases (`one_transformers_words`)."""
TARGETS_FIX = "give all-linear, or a regular expression that matches whole names, such as .*\\.(q_proj|v_proj)"
"""What to do where PEFT fails on a ``target_modules`` regex (``solver.trinity.checks.lora_targets_problem``)."""


def other_layout(layout: HeldExperts) -> HeldExperts:
    """The other of the two ways a transformers holds the routed experts."""
    return "separate" if layout == "fused" else "fused"


def model_kind_words(model: Model) -> str:
    """`model`'s kind, as the LoRA targets' words name it."""
    return "a mixture of experts" if model.moe is not None else "a dense model"


def model_type_words(model: Model) -> str:
    """``, model_type T`` for `model`'s type, as the LoRA targets' words name it; "" where it has none."""
    return "" if model.model_type is None else f", model_type {model.model_type}"


def one_transformers_taken(pattern: str, excluded: str | None, model: Model,
                           experts: ExpertLayout) -> HeldExperts | None:
    """Where a release may hold `model`'s routed experts either way (`experts` ``either``: 0.5.0 and 0.5.2 run on
    transformers 4 or 5), the layout whose module names alone take the ``target_modules`` regex `pattern` less
    `excluded`, PEFT refusing it on the other's (`peft_target_refusal`: Mixtral's ``.*\\.w1``, transformers 4's
    alone); None where both take it or neither, and under a release of one layout."""
    if experts != "either":
        return None
    taken = [layout for layout in LAYOUTS_TAKEN[experts]
             if peft_target_refusal(pattern, excluded, model.peft_names_of(layout)) is None]
    return taken[0] if len(taken) == 1 else None


def one_transformers_words(subject: str, why: str, fix: str, pattern: str, excluded: str | None, model: Model,
                           taken: HeldExperts) -> str:
    """What ``lora-targets-one-transformers`` says (a config's check, a plan's caution) of `subject` (a LoRA adapter's
    ``target_modules`` regex `pattern` less `excluded`, or that key) on `model`, which the module names of the layout
    `taken` alone take: PEFT fails on the other's, `why` (`peft_target_refusal`'s words) where the run has that
    transformers; what to do: run it with the one that takes it, or `fix`; for `TARGETS_FIX`, the regex that adapts the
    same modules on both transformers' names (`same_modules_regex`), or, where none does, that none does (not a regex
    that adapts other modules)."""
    failing = other_layout(taken)
    names, taken_names = model.peft_names_of(failing), model.peft_names_of(taken)
    good, bad = TRANSFORMERS_OF[taken], TRANSFORMERS_OF[failing]
    ending = f", or {fix}"
    if fix == TARGETS_FIX:
        same = same_modules_regex(pattern, excluded, taken_names, names)
        ending = (f", or give {same}, which adapts the same modules on both transformers' names" if same else
                  f": no regular expression adapts the same modules on transformers {bad}'s names")
    assumed = f", {names.model_type}'s, which it assumes," if names.assumed else ""
    return (f"{subject}, on {model.name} ({model_kind_words(model)}{model_type_words(model)}), is taken on "
            f"transformers {good}'s module names ({shown_module_names(taken_names)}) but {why} among transformers "
            f"{bad}'s{assumed} ({shown_module_names(names)}): Trinity 0.5.0 and 0.5.2 run on transformers 4 or 5, and "
            f"the run fails as Trinity makes the adapter where it has transformers {bad}: run it with transformers "
            f"{good} ({PINNED_BY[good]}){ending}")


def excluded_adapted_words(subject: str, pattern: str, excluded: str, model: Model, version: TrinityVersion | None,
                           experts: ExpertLayout, targets_key: str = "target_modules") -> str | None:
    """What ``lora-excluded-adapted`` says (a config's ``but:`` line, a plan's caution) of `subject` (the
    ``exclude_modules`` key, or the option, with `excluded`) where the ``target_modules`` regex `pattern` (or
    ``all-linear``) adapts all the same the router's or routed experts' modules it matches on `model` with
    transformers 5, the release `version`'s (`excluded_yet_adapted` on `Model.peft_names`: ``.*\\.mlp\\..*`` on
    Qwen3-MoE leaves none of them out); what to do: give `targets_key` (the config's key, or the option) a regex of
    the other modules it adapts, where one leaves them out (checked as counted: `adapted_modules` in the layers that
    hold them; quoted for a shell where `targets_key` is a flag, ``--lora-targets '.*\\.(q_proj|v_proj)'``, as a
    YAML key or a keyword takes it otherwise), else one that matches none of them. None where it does what it says,
    under a release on transformers 4 alone (`experts` ``separate``, 0.5.1's), where PEFT converts nothing and
    excludes them, and where PEFT refuses `pattern` on transformers 5's names (said as such); `re.error` where
    either is no regex."""
    names = model.peft_names
    if experts == "separate" or peft_target_refusal(pattern, excluded, names) is not None:
        return None
    layers = partial(model.module_layers, names=names)
    kept = excluded_yet_adapted(pattern, excluded, names, layers)
    if not kept or names.assumed:
        return None
    routed = [name for name in kept if ".experts." in name]
    what = " and ".join(([f"router ({names.router})"] if len(routed) < len(kept) else []) + (
        [f"routed experts ({', '.join(routed)})"] if routed else []))
    others = [name.rsplit(".", 1)[-1] for name in names.adapted if name not in kept
              and adapted_modules(pattern, excluded, names, name, tuple(layers(name)))]
    regex = lora_targets_pattern(",".join(dict.fromkeys(others))) if others else None
    leaves_them = regex is not None and peft_target_refusal(regex, excluded, names) is None and not any(
        adapted_modules(regex, excluded, names, name, tuple(layers(name))) for name in kept)
    given = shlex.quote(regex) if regex is not None and targets_key.startswith("--") else regex  # a shell's word
    fix = (f"give {targets_key} {given}, which adapts the other modules alone" if leaves_them else
           f"give {targets_key} a regular expression that matches none of them in any layer")
    release = {"0.6": "Trinity 0.6's", "0.5": "Trinity 0.5.0's and 0.5.2's, where they run on it"}.get(
        version or "", "Trinity 0.6's, and 0.5.0's and 0.5.2's where they run on it")
    how = ("all-linear adds them by name, whatever exclude_modules says" if all_linear(pattern) else
           "by the last names of what the regular expression matches in any layer")
    targets = ALL_LINEAR if all_linear(pattern) else pattern
    return (f"{subject} matches {model.name}'s {what}, but target_modules '{targets}' adapts them all the same, in "
            f"every layer, on transformers 5 ({release}): peft 0.21.2 converts a mixture of experts' LoRA config "
            f"and adapts the router and the routed experts as target_parameters ({how}), "
            "which exclude_modules does not leave out (_inject_parameters); rft-solver counts the adapter on them: "
            f"{fix}")


class TablesVerdict(Frozen):
    """What a GPU type's tables say of one setting on one GPU count at one length: it trains (a cell
    vouches), or it runs out of memory (a row of the count's own table, or of a table for more GPUs, says so:
    `refuting_cell`)."""

    trains: bool = Field(description="whether the tables say the setting trains (else: it runs out of memory)")
    evidence: Evidence | None = Field(description=(
        "how the cell says so, either way: documented where the cell at the length's row of the count's own table "
        "names the setting (it trains) or a later one or '-' (it ran out of memory: the setting itself was tried "
        "there), else inferred; null in JSON made before a verdict that it runs out of memory had one"))
    source: SourceCell = Field(description="the cell that says so (its setting '-' where nothing trained)")

    def cited(self, origins: Mapping[int, TableOrigin]) -> TablesVerdict:
        """The verdict, its cell naming a borrowed table's GPU type (`SourceCell.cited`)."""
        return self.model_copy(update={"source": self.source.cited(origins)})


def tables_verdict(model: Model, rows: Sequence[tuple[int, int]], settings: Mapping[tuple[int, int], Setting],
                   gpus: int, setting: Setting, length: int, *, columns: Mapping[int, str],
                   larger: Sequence[tuple[str, TableCells]] = (), lora: bool = False,
                   critic: bool = False) -> TablesVerdict | None:
    """The `TablesVerdict` of a GPU type's `table_cells` for `model` (`columns` as `vouching_cell` takes
    them), or where they say nothing, of the tables of GPU types with at least its memory (`larger`: their names
    and cells, `larger_tables`) that say the setting runs out of memory; None when none says anything. The tables
    measured full fine-tuning of the actor alone: for a `lora` run, which holds less (the frozen base's fp32 weights
    and the adapter's states in place of every parameter's), only a cell that vouches speaks, inferred; for a run
    with a PPO `critic`, which holds the critic's states beside the actor's, only one that refutes, and always
    inferred: the tables never ran the critic (a refutation of a run without one is documented where the count's own
    cell at the length's row says the setting ran out of memory: `_ran_out_there`); for both, none (the words:
    `solver.render.memory.lora_states_words`, `critic_states_words`). The planner's plans they do not vouch
    for are estimated, with LoRA's states (`solver.memory.lora_states_bytes`) and the critic's counted."""
    vouching = None if critic else vouching_cell(model, rows, settings, gpus, setting, length, columns=columns,
                                                 larger=larger, lora=lora)
    if vouching is not None:
        return TablesVerdict(trains=True, evidence=vouching[0], source=vouching[1])
    if lora:
        return None
    for gpu, cells in ((None, TableCells(tuple(rows), dict(settings), columns)), *larger):
        refuting = refuting_cell(model, cells.rows, cells.settings, gpus, setting, length)
        if refuting is not None:
            count, row = refuting
            documented = (gpu is None and count == gpus and not critic
                          and _ran_out_there(model, rows, settings, gpus, setting, length))
            return TablesVerdict(trains=False, evidence="documented" if documented else "inferred",
                                 source=SourceCell(model=cells.columns[count], gpus=count, max_model_len=row,
                                                   setting=cell_text(cells.settings.get((count, row))), gpu=gpu))
    return None


def _ran_out_there(model: Model, rows: Sequence[tuple[int, int]], settings: Mapping[tuple[int, int], Setting],
                   gpus: int, setting: Setting, length: int) -> bool:
    """Whether the cell at `length`'s row (the next row up) of the table for `gpus` GPUs says `setting` itself ran out
    of memory (`failed_settings`: a later setting in the source's order, or '-'), as `vouching_cell` documents a
    setting that trains by the cell at that row naming it."""
    own = _row_at(rows, gpus, length)
    return own is not None and setting in failed_settings(model, gpus, settings.get((gpus, own)))


def _row_at(rows: Sequence[tuple[int, int]], gpus: int, length: int) -> int | None:
    """`length`'s row in the table for `gpus` GPUs (of `rows`, its count and length pairs): the shortest row at or
    beyond it; None past the table's last row."""
    return min((row for n, row in rows if n == gpus and row >= length), default=None)


def larger_gpu_types(catalog: Catalog, gpu: str) -> tuple[GpuType, ...]:
    """The other GPU types with tables and at least `gpu`'s memory, the least memory first: where their tables
    say a setting runs out of memory on a GPU count at a length, it does on `gpu` too (the A100-80GB's for the
    H100-80GB, which reports a little less, and the A800-80GB)."""
    return _tabled_gpu_types_by_memory(catalog, gpu, larger=True)


def smaller_gpu_types(catalog: Catalog, gpu: str) -> tuple[GpuType, ...]:
    """The other GPU types with tables and at most `gpu`'s memory, the most memory first: the mirror of
    `larger_gpu_types`, whose tables `smaller_card_vouching` reads."""
    return _tabled_gpu_types_by_memory(catalog, gpu, larger=False)


def _tabled_gpu_types_by_memory(catalog: Catalog, gpu: str, *, larger: bool) -> tuple[GpuType, ...]:
    """The other GPU types with tables and at least (`larger`) or at most `gpu`'s memory (the catalogue's
    ``memory_gib``), the nearest to it first."""
    own = catalog.gpu(gpu)
    found = (other for other in catalog.documented_gpu_types if other.name != own.name
             and (other.memory_gib >= own.memory_gib if larger else other.memory_gib <= own.memory_gib))
    return tuple(sorted(found, key=lambda other: other.memory_gib, reverse=not larger))


def smaller_card_vouching(catalog: Catalog, gpu: str, model: Model, gpus: int, setting: Setting, length: int,
                          lora: bool = False, critic: bool = False) -> TablesVerdict | None:
    """Where an estimate on `gpu` says `setting` of `model` on `gpus` GPUs at `length` does not fit: the
    `cited_tables_verdict` of the first of `smaller_gpu_types` whose tables say it trains (documented or inferred),
    its cell naming that GPU type; None where none does. A note that the estimate is on the safe side there, not
    evidence: a smaller card's cells vouch for no other GPU type (docs/memory.md, "When an estimate stands in")."""
    for other in smaller_gpu_types(catalog, gpu):
        verdict = cited_tables_verdict(catalog, other.name, model, gpus, setting, length, lora=lora, critic=critic)
        if verdict is not None and verdict.trains:
            return verdict.model_copy(update={"source": verdict.source.model_copy(
                update={"gpu": verdict.source.gpu or other.name})})
    return None


def smaller_card_note(catalog: Catalog, gpu: str, model: Model, gpus: int, setting: Setting, length: int, *,
                      tables: TablesVerdict | None, estimate_fits: bool, lora: bool = False,
                      critic: bool = False) -> TablesVerdict | None:
    """The smaller card's cell a verdict on `gpu` notes (`smaller_card_vouching`): only where `gpu`'s own `tables`
    say nothing of `setting` of `model` on `gpus` GPUs at `length` (None) and the estimate does not fit (not
    `estimate_fits`); None otherwise."""
    if tables is not None or estimate_fits:
        return None
    return smaller_card_vouching(catalog, gpu, model, gpus, setting, length, lora=lora, critic=critic)


def smaller_card_words(vouching: TablesVerdict, gpu: str, model: str) -> str:
    """A `smaller_card_vouching` verdict of a setting of `model` that an estimate on `gpu` does not fit, in words: its
    cell, and that the estimate is on the safe side there but still decides (``solve memory``'s line, the planner's
    reasons)."""
    return (f"{vouching.source.words(gpu, model, memory='at most')} ({vouching.evidence}): the estimate is on the safe "
            "side there, and still decides, as a smaller card's cells vouch for no other GPU type")


def own_table_cells(catalog: Catalog, gpu: str, model: Model) -> tuple[Mapping[int, TableOrigin], TableCells]:
    """(origins, cells): whose each table `gpu` borrows or measured is (`Catalog.table_origins`), and the
    `table_cells` for `model` of the tables that speak for `gpu` (`Catalog.tables_for`: its own, and those it
    borrows of GPU types with the same memory)."""
    return catalog.table_origins(gpu, model), table_cells(catalog.tables_for(gpu, model), model)


def larger_tables(catalog: Catalog, gpu: str, model: Model) -> tuple[tuple[str, TableCells], ...]:
    """(name, `table_cells` for `model`) of each of `larger_gpu_types` whose tables have the model's cells."""
    found = ((other.name, table_cells(other, model)) for other in larger_gpu_types(catalog, gpu))
    return tuple((name, cells) for name, cells in found if cells.rows)


def tables_said(tables: TablesVerdict, gpu: str, model: str, gpus: int, offload: bool) -> str:
    """What a GPU type's tables say of a setting (with `offload` or not) on `gpus` GPUs, in words: it trains (and which
    cell vouches), or it runs out of memory (and which cell says so)."""
    cell = tables.source.words(gpu, model, memory="the same" if tables.trains else "at least")
    cells = "your cells" if tables.source.table_source else "the source's cells"
    return (f"it trains ({tables.evidence}: {cell})" if tables.trains else
            f"it runs out of memory ({cell}: {cells} read as the first setting that trained in their order, '-' "
            f"where none did, so this setting, or one that includes it, ran out of memory there"
            f"{fewer(tables.source, gpus, offload)})")


def tables_refute_words(tables: TablesVerdict, gpu: str, model: str, gpus: int, offload: bool,
                        names: OptionNames) -> str:
    """Where a GPU type's tables say a setting an estimate made (with ``--estimate``, the memory model alone) runs out
    of memory, in words: what they say (`tables_said`), and that the table, a measurement, decides (dropping the
    option, named as `names` name it, plans with it): ``solve``'s ``tables`` row, a placed plan's caution."""
    return (f"{tables_said(tables, gpu, model, gpus, offload)}; the table, a measurement, decides: drop "
            f"{names.estimate_only} to plan with it")


def fewer(cell: SourceCell, gpus: int, offload: bool) -> str:
    """For a cell of another count's table that says a setting ran out of memory: why that holds on `gpus` too,
    as clauses to follow the cell's words (``, and ...``; "" for the count's own table): `fewer_reasons`."""
    return "".join(f", and {reason}" for reason in fewer_reasons(cell, gpus, offload))


def fewer_reasons(cell: SourceCell, gpus: int, offload: bool) -> tuple[str, ...]:
    """For a cell of another count's table that says a setting ran out of memory: why that holds on `gpus` too, one
    clause each (none for the count's own table): with `offload` each holds as much on any count (the states are on
    the CPU); without it, on fewer GPUs each holds more, and a table for fewer GPUs speaks through its cell's setting
    with Offload, which holds as much."""
    if cell.gpus == gpus:
        return ()
    as_much = f"as much per GPU on {gpus} GPUs as on {cell.gpus} (the states are on the CPU)"
    if offload:
        return (f"with Offload it holds {as_much}",)
    if cell.gpus > gpus:
        return (f"on {counted(gpus, 'GPU')} each holds more",)
    return (f"it ran out with Offload too, which holds {as_much}", "without Offload each GPU holds more")


def cited_tables_verdict(catalog: Catalog, gpu: str, model: Model, gpus: int, setting: Setting,
                         length: int, lora: bool = False, critic: bool = False) -> TablesVerdict | None:
    """The `tables_verdict` of `gpu`'s tables (`own_table_cells`), or where they say nothing, of those of GPU types
    with at least its memory (`larger_tables`), on `setting` of `model` on `gpus` GPUs at `length` (for a `lora` run
    or not, with a `critic` or not), its cell cited (`TablesVerdict.cited`); None where none says anything."""
    origins, cells = own_table_cells(catalog, gpu, model)
    verdict = tables_verdict(model, cells.rows, cells.settings, gpus, setting, length, columns=cells.columns,
                             larger=larger_tables(catalog, gpu, model), lora=lora, critic=critic)
    return None if verdict is None else verdict.cited(origins)


def whole_nodes_violation(gpus: int, node_gpus: int, source: str = "--node-gpus") -> str | None:
    """Why `gpus` trainer GPUs cannot run in nodes of `node_gpus` (whose size the message says comes from
    `source`): a trainer that spans nodes uses whole nodes (Trinity's rule); None when they can."""
    if gpus > node_gpus and gpus % node_gpus:
        return f"{gpus} GPUs span nodes of {node_gpus} ({source}) but are not whole nodes"
    return None


def rollout_layout(gpus: int, rollout_gpus: int, node_gpus: int) -> tuple[int, int] | None:
    """(nodes, rollout GPUs) of a Trinity cluster for `gpus` trainer GPUs and `rollout_gpus` rollout GPUs on
    nodes of `node_gpus` (Trinity gives the trainer what the rollout leaves of ``node_num x gpu_per_node``):
    both in one node; the trainer in part of a node and the rollout filling it and whole nodes more; or the
    trainer on whole nodes and the rollout on the nodes after them (the rest of them, which can be more
    than asked). None when there is no such layout."""
    together = gpus + rollout_gpus
    if together <= node_gpus or (gpus < node_gpus and together % node_gpus == 0):
        return max(together // node_gpus, 1), rollout_gpus
    if gpus % node_gpus:
        return None
    nodes = gpus // node_gpus + -(-rollout_gpus // node_gpus)
    return nodes, nodes * node_gpus - gpus


def kept_for_rollout(budget_gpus: int, node_gpus: int) -> int:
    """How many of a budget of `budget_gpus` trainer GPUs to keep for the rollout where a plan takes the budget
    whole (``--gpus`` counts the trainer's alone): a quarter of one node's budget (at least 1 GPU), or the last node
    of several (a trainer past one node takes whole nodes); for one GPU, that one (which leaves the trainer none:
    the rollout's GPUs are then beside the budget's)."""
    return node_gpus if budget_gpus > node_gpus else max(budget_gpus // 4, 1)


COLOCATE_ROLLOUT_SHARE = 0.25
"""The most of the GPU's memory Trinity lets its vLLM engine take in mode colocate: it lowers a larger
``explorer.rollout_model.gpu_memory_utilization`` to this (``config_validator.py``, every release 0.5.0 to 0.6.0)."""


def colocate_words(names: OptionNames, gpu: GpuType | None = None) -> str:
    """Trinity's mode colocate in words: the trainer and its vLLM engine share the one GPU of a cluster that has one
    (Trinity runs it so by itself on a one-GPU Ray cluster where the config leaves ``cluster.node_num`` or
    ``gpu_per_node`` unset), which rft-solver does not plan, and how to plan the trainer on what the engine leaves
    it, as `names` name the option (``--gpu NAME --gpu-memory SIZE``): with the size, the share of `gpu`'s memory
    left (``--gpu-memory 61440MiB`` on an A100-80GB), where the GPU type is known."""
    left = round(100 * (1 - COLOCATE_ROLLOUT_SHARE))
    if gpu is None:
        own = f"{names.own_gpu}: {left}% of nvidia-smi's total, in MiB"
    else:
        total = round(gpu.memory_gib * 1024)  # the driver's figure, else the GB sold taken as GiB, as planned
        size = total * left // 100
        own = (f"{names.own_gpu.replace('SIZE', str(size) if names.keywords else f'{size}MiB')}: {left}% of the "
               f"{gpu.name}'s {total} MiB")
    return (f"Trinity's mode colocate runs the trainer and its vLLM engine on one GPU, the engine taking up to "
            f"{round(100 * COLOCATE_ROLLOUT_SHARE)}% of it (gpu_memory_utilization), which rft-solver does not plan: "
            f"plan the trainer on the {left}% left, a GPU type of your own ({own})")


def trainer_gpus_on_node(gpus: int, node_gpus: int | None) -> int:
    """How many of a trainer's `gpus` GPUs one node of `node_gpus` (None: as many as it takes) holds: a trainer that
    spans nodes fills them, one that does not has its own GPUs alone."""
    return min(gpus, node_gpus or gpus)


def trainer_nodes_of(gpus: int, node_gpus: int) -> int:
    """How many nodes of `node_gpus` GPUs a trainer of `gpus` GPUs runs on: one where it fits a node (alone or beside
    its rollout), else the whole nodes it takes (a trainer that spans nodes takes whole ones: `whole_nodes`)."""
    return ceil(gpus / node_gpus)


def trainer_node_count(gpus: int, rollout_gpus: int, nodes: int) -> int:
    """How many of the `nodes` nodes of a `rollout_layout` of `gpus` trainer and `rollout_gpus` rollout GPUs (which fill
    them, on several) the trainer runs on: the nodes it takes whole, or the one it takes part of (or shares with the
    rollout); the nodes after them hold its rollout alone."""
    return max(gpus * nodes // (gpus + rollout_gpus), 1)


def rollout_layout_violation(gpus: int, rollout_gpus: int | None, node_gpus: int,
                             source: str = "--rollout-gpus") -> str | None:
    """Why `gpus` trainer GPUs and `rollout_gpus` rollout GPUs (from `source`, as the words name it) have no
    `rollout_layout` on nodes of `node_gpus`; None when they have one (or when no rollout GPUs are given)."""
    if not rollout_gpus or rollout_layout(gpus, rollout_gpus, node_gpus) is not None:
        return None
    return f"{gpus} trainer + {rollout_gpus} rollout GPUs ({source}) {no_rollout_layout_words(node_gpus)}"


def no_rollout_layout_words(node_gpus: int) -> str:
    """What a trainer and its rollout without a `rollout_layout` on nodes of `node_gpus` fail to fit, as words."""
    return (f"fit neither one node of {node_gpus}, nor whole nodes with the trainer in one of them, nor with the "
            "trainer on whole nodes")


def sp_gpus_violation(gpus: int, sp: int) -> str | None:
    """Why SP degree `sp` cannot split `gpus` trainer GPUs (it must divide them), or None if it can: one wording
    wherever the rule is broken (a plan, a config's verdict, its checks), so that a verdict says it once."""
    return f"SP={sp} does not divide {counted(gpus, 'GPU')}" if gpus % sp else None


ENGINE_MINI_BATCH_ASSERT_LINES = "workers/engine/utils.py:91-93 in verl 0.8.0, :125-127 in 0.9.0 and 0.9.1"
"""Where verl's engine asserts, with dynamic batch sizes off, that the micro-batch size per GPU divides the rows it
cuts (``prepare_micro_batches``), in each verl release from 0.8 that Trinity 0.6.0 runs."""
DPO_PAIR_BATCH_SOURCE = ("trinity/trainer/verl/fsdp_workers.py:243 in 0.5.2, :235 in 0.5.0, :237 in 0.5.1, "
                         "trainer/verl_legacy/fsdp_workers.py:259 in 0.6.0")
"""Where Trinity on verl before 0.8 asserts, with dynamic batch sizes off, as the actor starts, that each data-parallel
rank's share of the train batch (``ppo_mini_batch_size``, set to it, over the ranks) divides by the actor's
micro-batch per GPU, which it has doubled for DPO as it loads the config (``common/verl_config.py:657`` in 0.5.0,
``:659`` in 0.5.1, ``trainer/verl/verl_config.py:674`` in 0.5.2, ``trainer/verl_legacy/verl_config.py:687`` in
0.6.0): from the 1 written for 0.5 to a pair, 2 rows (`batch_divisor_of`'s `pairs`)."""
DPO_PAIR_BATCH_WORDS = ("each data-parallel rank's share of the batch must divide by the actor's micro-batch of one "
                        "pair, 2 sequences: Trinity on verl before 0.8 doubles the size written for DPO (1 for 0.5) "
                        f"and asserts it as the actor starts ({DPO_PAIR_BATCH_SOURCE}), and verl 0.8 or later "
                        f"asserts it of the 2 written at the actor's first update ({ENGINE_MINI_BATCH_ASSERT_LINES})")
"""Why a DPO train batch must divide by twice the data-parallel ranks (`batch_divisor_of`'s `pairs`), in words: with
the actor's micro-batch sizes ``--write`` writes (`solver.trinity.plan_keys.DPO_PAIR_SIZES`), dynamic batch sizes
off as it writes them for DPO, on every release and verl line."""


def batch_divisor_of(gpus: int, sp: int, pairs: bool = False) -> int:
    """What must divide a train batch split over a trainer of `gpus` GPUs at SP `sp` (where SP divides them): its
    data-parallel ranks (``gpus / sp``), or twice them for DPO's pairs (`pairs`: each rank's share must hold whole
    micro-batches of one pair, `DPO_PAIR_BATCH_WORDS`)."""
    return gpus // sp * (2 if pairs else 1)


def splits_batch(train_batch_size: int, gpus: int, sp: int, pairs: bool = False) -> bool:
    """Whether a train batch of `train_batch_size` experiences splits evenly over the data-parallel ranks of a
    trainer of `gpus` GPUs at SP degree `sp` (``gpus / sp``, where SP divides the GPUs: `sp_gpus_violation` is that
    rule), in DPO's pairs where `pairs` (`batch_divisor_of`): Trinity refuses a batch they do not divide, and verl's
    batch balancing asserts it."""
    return gpus % sp != 0 or train_batch_size % batch_divisor_of(gpus, sp, pairs) == 0


def pair_ranks_words(gpus: int, sp: int) -> str:
    """``DPO's pairs: 2 x 4 data-parallel ranks``: why twice the ranks of `gpus` GPUs at SP `sp` must divide a DPO
    train batch (`batch_divisor_of`'s `pairs`), in words."""
    return f"DPO's pairs: 2 x {gpus // sp} data-parallel ranks"


def dividing_batch_words(gpus: int, sp: int, gpus_divide: bool, nearest_to: int | None = None,
                         set_at: str | None = None, pairs: bool = False) -> str:
    """``a train batch that 3 data-parallel ranks divide``: the batch a plan of `gpus` GPUs at SP `sp` takes, in words;
    ``a train batch that 6 trainer GPUs divide`` where the Trinity release needs its GPUs to divide it too
    (`gpus_divide`: 0.5.0 and 0.5.1, `solver.tables.counted_batch_divisor`'s ``gpus``), as its ranks then do; for DPO
    on a release that splits it in pairs (`pairs`, `batch_divisor_of`), ``a train batch that 8 divides (DPO's pairs: 2 x
    4 data-parallel ranks)``, the GPUs too where they must; with the batch asked for (`nearest_to`), the nearest such
    batch (`nearest_dividing_batches`): ``(the nearest to 37: 36)``), and the key that sets it where its source does
    not (`set_at`: ``(the nearest to 256: 255, set as buffer.train_batch_size)``)."""
    ranks = batch_divisor_of(gpus, sp, pairs)
    divisor = lcm(gpus, ranks) if gpus_divide else ranks
    batches = () if nearest_to is None else nearest_dividing_batches(nearest_to, divisor)
    where = f", set as {set_at}" if set_at else ""
    nearest = f"the nearest to {nearest_to}: {' or '.join(map(str, batches))}{where}" if batches else ""
    if pairs:
        why = pair_ranks_words(gpus, sp) + (f", and the {gpus} trainer GPUs" if gpus_divide else "")
        return f"a train batch that {divisor} divides ({'; '.join(filter(None, (why, nearest)))})"
    nearest = f" ({nearest})" if nearest else ""
    return (f"a train batch that {gpus} trainer GPUs divide{nearest}" if gpus_divide
            else f"a train batch that {divisor} data-parallel ranks divide{nearest}")


def nearest_dividing_batches(train_batch_size: int, divisor: int) -> tuple[int, ...]:
    """The train batches nearest to `train_batch_size` that `divisor` (data-parallel ranks, or GPUs) divides, at least
    `divisor`: one, or the one below and the one above where they are as near."""
    below = max(divisor, train_batch_size // divisor * divisor)
    gaps = {below: abs(train_batch_size - below), below + divisor: below + divisor - train_batch_size}
    return tuple(sorted(batch for batch, gap in gaps.items() if gap == min(gaps.values())))


def batch_words(train_batch_size: int, source: str) -> str:
    """A train batch as messages name it: the flag and its value (``--train-batch-size 256``), or ``a train batch of
    256 (buffer.batch_size x algorithm.repeat_times)`` where it came from elsewhere (`source`)."""
    if source.startswith("--"):
        return f"{source} {train_batch_size}"
    return f"a train batch of {train_batch_size} ({source})"


def batch_over_trainer_gpus_words(train_batch_size: int, source: str, gpus: int, sp: int) -> str:
    """That a train batch (`train_batch_size`, from `source`) the data-parallel ranks of `gpus` GPUs at SP `sp` divide
    but the GPUs do not is one Trinity 0.5.0 and 0.5.1 refuse and 0.5.2 takes, in words."""
    return (f"{batch_words(train_batch_size, source)} does not divide by the {gpus} trainer GPUs, which Trinity 0.5.0 "
            "and 0.5.1 refuse (trinity/common/config_validator.py:860 in 0.5.0, :859 in 0.5.1); 0.5.2 takes it, as it "
            f"needs only the {gpus // sp} data-parallel ranks ({gpus} GPUs / SP={sp}) to divide it "
            f"(trinity/trainer/verl/verl_config.py:424): for 0.5.0 or 0.5.1, make it a multiple of {gpus}")


def host_ram_words(host_ram_gb: float, source: str) -> str:
    """A node's host memory as messages name it: the option and its value in GiB, the unit of every memory figure
    beside it, as the caller writes it (``--host-ram 64 GiB``; ``--host-ram 2048 GiB`` for a ``2TB`` given, as ``--len
    32k`` is named 32768 tokens; the API's ``host_ram_gb=64``), or ``64 GiB of host memory per node (the pool's
    host_ram_gb)`` where it came from elsewhere (`source`): plain words that keep the key findable."""
    if (names := option_names_of(source)) is not None:
        return names.valued(source, shown_number(host_ram_gb), " GiB")
    return f"{shown_number(host_ram_gb)} GiB of host memory per node ({source})"


def host_ram_bound_words(host_ram_gb: float, source: str) -> str:
    """A node's host memory as the bound a need per node exceeds (``more than ...``, after words that say "of host
    memory per node" already): the flag and its value (``--host-ram 64 GiB``), or ``the pool's host_ram_gb of 64 GiB``,
    without `host_ram_words`' parentheses, which would close a reason's own twice."""
    if source.startswith("--"):
        return host_ram_words(host_ram_gb, source)
    return f"{source} of {shown_number(host_ram_gb)} GiB"


EXCLUDED_KEY = "lora_exclude_modules"
"""A cluster job's key for the ``exclude_modules`` regex of its LoRA adapter (`solver.query.given_lora_targets`'
`excluded`), as a plan's JSON and the API's keyword name it."""


class OptionNames(NamedTuple):
    """How a caller names the options its words point to: the command's flags (`COMMAND_OPTIONS`) or the Python
    API's keywords (`API_OPTIONS`); each reason, caution and note has one text, worded with the caller's names."""

    host_ram: str
    """The option that gives a node's host memory."""
    trinity_05: str
    """The option, with its value, that makes a config for Trinity 0.5."""
    node_gpus: str
    """The option that gives the GPUs per node."""
    rollout_gpus: str
    """The option that gives the rollout GPUs beside the trainer's."""
    train_batch: str
    """The option that gives the train batch."""
    exact: str
    """The option that pins the GPU count to the budget."""
    token_budget_auto: str
    """The option, with its value, that lets an estimated plan take a lower token budget."""
    no_estimate: str
    """The option, with its value, that turns the memory model's estimates off."""
    estimate_only: str
    """The option, with its value, that sets the tables aside for the memory model's estimates."""
    time_limit: str
    """The option that gives each solve's time limit."""
    write: str
    """What applies a plan to a Trinity config's text."""
    length: str
    """The option that gives the length, tokens."""
    budget: str
    """The option that gives the trainer GPUs' budget."""
    total_gpus: str
    """The option that gives the trainer's and the rollout's GPUs together."""
    planner: str
    """How a plan is asked for with some options (``{}`` where they go)."""
    estimator: str
    """How a memory estimate is asked for with some options (``{}`` where they go)."""
    minimize_nodes: str
    """The option, with its value, that places every job on the fewest nodes (a cluster's)."""
    buy: str
    """What names the nodes to add to a cluster."""
    maximize_len: str
    """The option, with its value, that asks for the longest length within a GPU budget."""
    minimize_gpus: str
    """The option, with its value, that asks for the fewest GPUs."""
    minimize_gpu_hours: str
    """The option, with its value, that asks for the fewest GPU-hours (GPUs x cost)."""
    tokens_per_gpu: str
    """The option that gives a trainer GPU's tokens (Trinity's ``max_token_len_per_gpu``) to a memory estimate."""
    gpus_up_to: str
    """The option that gives a map's largest GPU budget."""
    budgets: str
    """The option that lists a map's GPU budgets."""
    map_data: str
    """What holds a map's every GPU budget, those its columns leave out too."""
    map_by_len: str
    """The option, with its value, that maps one model's longest lengths."""
    one_model: str
    """How one model is named to a map by length (``M`` where its name goes)."""
    required: str
    """The option that names the jobs a cluster must place."""
    fragment_writers: str
    """What writes a plan's Trinity config fragment."""
    pcie_interconnect: str
    """What states, beside its memory, that a GPU type of your own reaches its others over PCIe alone."""
    explain: str
    """The option, with its value, that explains an answer rule by rule."""
    fragment_yaml: str
    """What writes a plan's Trinity config keys as YAML."""
    write_copy: str
    """What gives a copy of a Trinity config with the plan applied, and how (``--write FILE writes``)."""
    workers: str
    """The option that gives the search's worker threads."""
    placement_writer: str
    """What writes the configs of the placement just made, beside what made it."""
    placement_configs: str
    """What writes the configs of a cluster's placement, on its own."""
    placer: str
    """What places a cluster file's jobs on its pools."""
    own_gpu: str
    """What plans for a GPU type of your own by its memory (``SIZE`` where the memory goes)."""
    file_readers: FileReaders
    """What reads each kind of file a user gives (a Trinity config: what checks or plans from one), as a file given
    for another that looks like one is told (`solver.tables.looks_like`: `` (this looks like a cells file, for
    --cells)``)."""
    keywords: bool
    """Whether the names are keywords (``name=value``) rather than flags (``--name value``)."""
    lora_keys: tuple[str, str, str] | None = None
    """The keys that give a LoRA run's rank, targets and exclusions where no option of the caller's does (a cluster
    job's: ``solver.cluster.JOB_LORA_KEYS``), which `lora_options` names then; None: the caller's options."""
    write_offered: bool = True
    """Whether `write` is offered for the config judged (`write_does`): ``solve --from-config`` offers no --write
    where it would refuse to patch the config as the options plan it (`solver.cli.trinity_options.write_refused`)."""
    release_key: str | None = None
    """The key that names a run's Trinity release where no option of the caller's does (a cluster job's:
    ``solver.cluster.JOB_VERSION_KEY``), which `release_option` names then; None: the caller's option."""
    run_release: bool = False
    """Whether the caller's option may name that release too, beside `release_key` (a cluster job that names none,
    under a run that names none either: the run's ``--trinity-version`` gives it to every such job), which
    `release_option` and `planned_release` then name after the key: ``(or the run's --trinity-version)``."""
    critic_key: str | None = None
    """The key that gives a run's PPO critic where no option of the caller's does (a cluster job's:
    ``solver.cluster.options.JOB_CRITIC_KEY``), which `planned_critic` names then; None: the caller's option."""
    reference_key: str | None = None
    """The key that says whether a run builds a reference model where no option of the caller's does (a cluster
    job's: ``solver.cluster.options.JOB_REFERENCE_KEY``), which `no_reference` names then; None: the caller's
    option."""
    length_key: str | None = None
    """The key that gives a run's length where no option of the caller's does (a cluster job's:
    ``solver.cluster.JOB_LENGTH_KEY``), which `planned_length` names then; None: the caller's option."""
    settings_chosen: bool = False
    """Whether a placement chooses the plans' settings, which no option of the caller's pins (a cluster job's): words
    that name a pin (SP 1) name the planner's option that plans with it then (`setting_pin`)."""

    def write_does(self, lead: str = "", after: str = "") -> str:
        """`` (--write does)`` after a fix the patch makes (`lead` before `write`: ``as ``; `after`, more words in the
        brackets: ``(--write does; harmless on transformers 4)``); where `write` is not offered (`write_offered`), only
        `after` in brackets, else ""."""
        words = [f"{lead}{self.write} does"] if self.write_offered else []
        return f" ({'; '.join([*words, after] if after else words)})" if words or after else ""

    def valued(self, name: str, value: object, unit: str = "") -> str:
        """Option `name` given `value`, as the caller writes it: ``--sp 2``, ``--host-ram 48GB`` (a flag's `unit`
        after the value), or ``sp=2``, ``host_ram_gb=48``."""
        return f"{name}={value}" if self.keywords else f"{name} {value}{unit}"

    def length_at(self, length: str) -> str:
        """The length the caller gave, `length` (as shown), named as its option's: ``--len's 16384``, or
        ``max_model_len's 16384``."""
        return f"{self.length}'s {length}"

    def switch(self, name: str, on: bool) -> str:
        """A setting pinned on or off, as the caller writes it: ``--env``, ``--no-offload``, or ``env=True``,
        ``offload=False``."""
        return f"{name}={on}" if self.keywords else f"--{'' if on else 'no-'}{name}"

    def item(self, name: str, value: str) -> str:
        """One item of list option `name` (`value`, as shown), as the caller gives it: ``--required 'nope'``, or
        ``required names 'nope'`` (in a list)."""
        return f"{name} names {value}" if self.keywords else f"{name} {value}"

    def one_name(self, name: str, given: int) -> str:
        """Asking for one name where `given` were given to option `name`: ``one to --model, not 2``, or ``model one
        name, not 2``."""
        return f"{name} one name, not {given}" if self.keywords else f"one to --{name}, not {given}"

    @property
    def lora_options(self) -> tuple[str, str, str]:
        """A LoRA run's rank, targets and exclusions options, as the caller names them: ``--lora-rank``,
        ``--lora-targets`` and ``--lora-exclude``, or ``lora_rank``, ``lora_targets`` and ``lora_exclude_modules``;
        or the keys that give them (`lora_keys`: a cluster job's)."""
        if self.lora_keys is not None:
            return self.lora_keys
        return ("lora_rank", "lora_targets", EXCLUDED_KEY) if self.keywords else (
            "--lora-rank", "--lora-targets", "--lora-exclude")

    def release_option(self) -> str:
        """What names a run's Trinity release, as the caller names it: ``--trinity-version``, or
        ``trinity_version``; or the key that gives it (`release_key`: a cluster job's), with the caller's option after
        it where that may give it too (`run_release`: ``the job's trinity_version (or the run's
        --trinity-version)``)."""
        option = "trinity_version" if self.keywords else "--trinity-version"
        if self.release_key is not None:
            return f"{self.release_key} (or the run's {option})" if self.run_release else self.release_key
        return option

    def named(self, name: str) -> str:
        """An option whose keyword is its flag's name (`name`: ``sp``, ``margin``), as the caller names it: ``--sp``,
        or ``sp``."""
        return name if self.keywords else f"--{name}"

    def planning(self, options: str) -> str:
        """Planning with `options`, as the caller asks for it: ``solve --no-env``, ``solver.plan(env=False)``."""
        return self.planner.format(options)

    def trinity_release(self, release: str) -> str:
        """The option, with its value, that makes a config for the Trinity `release` (``0.5``, ``0.5.1``), as
        `trinity_05` names 0.5's: ``--trinity-version 0.5.1``, or ``version="0.5.1"``."""
        return self.trinity_05.replace("0.5", release)

    def planned_release(self, release: str) -> str:
        """The option, with its value, that plans for the Trinity `release` (``0.6.0``), as the caller names it:
        ``--trinity-version 0.6.0``, or plan's and place's keyword, ``trinity_version="0.6.0"`` (where a fragment
        writer's is ``version``: `trinity_release`); or the key that names it (`release_key`: a cluster job's, ``the
        job's trinity_version 0.6.0``), with the caller's option after it where that may give it too (`run_release`:
        ``the job's trinity_version 0.6.0 (or the run's --trinity-version 0.6.0)``)."""
        option = f'trinity_version="{release}"' if self.keywords else self.trinity_release(release)
        if self.release_key is not None:
            return (f"{self.release_key} {release} (or the run's {option})" if self.run_release
                    else f"{self.release_key} {release}")
        return option

    def planned_length(self, tokens: int) -> str:
        """The option, with its value, that plans `tokens` tokens, as the caller names it after ``plan``: ``--len
        131072``, or ``max_model_len=131072``; or with the key that gives it (`length_key`: a cluster job's, ``with
        the job's max_model_len 131072``)."""
        if self.length_key is not None:
            return f"with {self.length_key} {tokens}"
        return self.valued(self.length, tokens)

    def setting_pin(self, name: str, value: object) -> str:
        """Option `name` (``sp``) pinning a plan's setting to `value`, as the caller gives it: ``--sp 1``, or ``sp=1``;
        where a placement chooses the settings (`settings_chosen`: a cluster job's), the planner's option that plans
        with it: ``solve --sp 1``, or ``solver.plan(sp=1)``."""
        pin = self.valued(self.named(name), value)
        return self.planning(pin) if self.settings_chosen else pin

    def no_reference(self) -> str:
        """What says a run builds no reference model, as the caller names it: ``--no-reference``, or
        ``reference_model=False``; or the key that says it (`reference_key`: a cluster job's, ``the job's
        reference_model false``)."""
        if self.reference_key is not None:
            return f"{self.reference_key} false"
        return "reference_model=False" if self.keywords else "--no-reference"

    def planned_critic(self, critic: str) -> str:
        """The option, with its value, that plans with a PPO critic held as `critic` (``resident``), as the caller
        names it: ``--critic resident``, or ``critic="resident"``; or the key that gives it (`critic_key`: a cluster
        job's, ``the job's critic resident``)."""
        if self.critic_key is not None:
            return f"{self.critic_key} {critic}"
        return f'critic="{critic}"' if self.keywords else f"--critic {critic}"

    def longer_limit(self, deadline_passed: bool = False) -> str:
        """What lets a search that ran out of time run on, as the caller names it: ``a longer --time-limit``, or ``a
        longer time_limit_s``; where the call's deadline_s had passed (`deadline_passed`), which may be what cut it
        short, ``a longer deadline_s (and time_limit_s, where that came first)``."""
        if deadline_passed:
            return f"a longer deadline_s (and {self.time_limit}, where that came first)"
        return f"a longer {self.time_limit}"

    def thousands_written(self, thousands: int) -> str:
        """A length of `thousands` thousands of 1024 tokens, as the caller gives it: ``--len 64k``, or
        ``max_model_len=65536``."""
        return f"{self.length}={thousands * 1024}" if self.keywords else f"{self.length} {thousands}k"

    def host_ram_written(self, amount: float, unit: str) -> str:
        """A node's host memory of `amount` `unit` (``GB`` or ``TB``), as the caller gives it: ``--host-ram 2TB``, or
        ``host_ram_gb=2048`` (the keyword takes GB alone)."""
        if self.keywords:
            return f"{self.host_ram}={shown_number(amount * (1024 if unit == 'TB' else 1))}"
        return f"{self.host_ram} {shown_number(amount)}{unit}"

    def joined(self, options: Sequence[str]) -> str:
        """Several options given together, as the caller writes them: ``--sp 2 --no-env``, ``sp=2, env=False``."""
        return (", " if self.keywords else " ").join(options)


def check_without_gpu_note(config_name: str, gpus: Sequence[str], option_names: OptionNames) -> str:
    """What a config's check without a GPU type named (``--check`` without --gpu, `solver.api.check_config` without
    ``gpu``) says of the GPU types it judged `config_name` on (`gpus`), in `option_names`' words: a Trinity config
    names none, and its verdict on the GPUs it runs on may differ."""
    checker, given = (("check_config without gpu", 'gpu="TYPE"') if option_names.keywords
                      else ("--check without --gpu", "--gpu TYPE"))
    return (f"{checker} judged {config_name} on {' and '.join(gpus)}, as a Trinity config names no GPU type; give "
            f"{given} to judge it on the GPUs it runs on")


MODEL_CONFIG_PLACEHOLDER = "MODEL_CONFIG"
"""What a fragment's check command gives ``--model-config`` for a model of one's own whose config.json it does not know
(`solver.api.trinity_config` without ``model_config=``): the header says to put the file there, as CONFIG the config's.
"""

COMMAND_OPTIONS = OptionNames(
    host_ram="--host-ram", trinity_05="--trinity-version 0.5", node_gpus="--node-gpus", rollout_gpus="--rollout-gpus",
    train_batch="--train-batch-size", exact="--exact", token_budget_auto="--token-budget auto",
    no_estimate="--no-estimate", estimate_only="--estimate", time_limit="--time-limit", write="--write",
    length="--len", budget="--gpus", total_gpus="--total-gpus", planner="solve {}", estimator="solve memory {}",
    minimize_nodes="--minimize nodes",
    buy="--buy", maximize_len="--maximize len", minimize_gpus="--minimize gpus",
    minimize_gpu_hours="--minimize gpu-hours", tokens_per_gpu="--token-budget",
    gpus_up_to="--gpus-up-to", budgets="--budgets", map_data="--json", map_by_len="--by len",
    one_model="--model M (or --model-config PATH)",
    required="--required", fragment_writers="--out or solve cluster --emit-dir",
    pcie_interconnect="--gpu-interconnect pcie", explain="--explain", fragment_yaml="--emit trinity",
    write_copy="--write FILE writes", workers="--workers", placement_writer="--emit-dir",
    placement_configs="solve cluster --emit-dir", placer="solve cluster", own_gpu="--gpu NAME --gpu-memory SIZE",
    file_readers=FileReaders(
        cells="--cells", memory_model="--memory-model, as solve calibrate --out writes", weights="--weights",
        fleet="solve cluster", config="--from-config", model_config="--model-config",
        current="give it with --current, beside the cluster file,"), keywords=False)
API_OPTIONS = OptionNames(
    host_ram="host_ram_gb", trinity_05='version="0.5"', node_gpus="node_gpus", rollout_gpus="rollout_gpus",
    train_batch="train_batch_size", exact="exact=True", token_budget_auto='token_budget="auto"',
    no_estimate='estimate="never"', estimate_only='estimate="only"', time_limit="time_limit_s",
    write="solver.trinity.patch_trinity_config", length="max_model_len", budget="budget_gpus",
    total_gpus="total_gpus", planner="solver.plan({})", estimator="solver.estimate_memory({})",
    minimize_nodes='minimize="nodes"', buy="solver.buy_nodes",
    maximize_len='objective="max_len"', minimize_gpus='objective="min_gpus"',
    minimize_gpu_hours='objective="min_gpu_hours"', tokens_per_gpu="max_token_len_per_gpu",
    gpus_up_to="gpus_up_to", budgets="budgets", map_data="the GpuMap", map_by_len='by="len"', one_model="model=M",
    required="required",
    fragment_writers="solver.trinity_config or solver.placement_configs",
    pcie_interconnect='solver.described_gpu_type(..., interconnect="pcie")', explain="explain=True",
    fragment_yaml="solver.trinity_config", write_copy="solver.trinity.patch_trinity_config gives",
    workers="workers", placement_writer="solver.placement_configs", placement_configs="solver.placement_configs",
    placer="solver.place", own_gpu='solver.described_gpu_type("NAME", memory_mib=SIZE)',
    file_readers=API_FILE_READERS, keywords=True)


def option_names_of(source: str) -> OptionNames | None:
    """The caller's names whose host memory option `source` is (a flag, ``--host-ram``, or the API's keyword,
    ``host_ram_gb``); None where it came from elsewhere (a pool's key, a caller's own words)."""
    return next((names for names in (COMMAND_OPTIONS, API_OPTIONS) if source == names.host_ram), None)


GPU_COUNT_KEYWORDS: dict[str, tuple[str, ...]] = {
    "gpus": ("gpus_up_to",), "budget_gpus": ("gpus_up_to", "gpus"), "gpus_up_to": ("budget_gpus", "gpus")}
"""The API's keywords that count GPUs, each with those another function takes for its count, in order (`keyword_meant`
tells the first that a function has): map_plans' ``gpus_up_to`` for ``gpus``, as ``solve map --gpus`` is told
``--gpus-up-to``; estimate_memory's ``gpus`` for ``budget_gpus``."""


def keyword_meant(name: str, value: object, keywords: Collection[str]) -> str:
    """What a keyword argument `name` (given `value`) of none of a function's `keywords` likely meant, as its
    `TypeError` says it (`solver.query.keywords_told`): the API's keyword for the command's flag of that name
    (`COMMAND_OPTIONS` beside `API_OPTIONS`: ``gpus=4``, `` (--gpus is budget_gpus here: pass budget_gpus=4, and
    exact=True for exactly 4)``), the function's own keyword for that count of GPUs (`GPU_COUNT_KEYWORDS`: map_plans'
    `` (did you mean gpus_up_to=4?)``), or else one it is a slip from (`` (did you mean max_model_len?)``); "" where
    none."""
    flag = f"--{name.replace('_', '-')}"
    field = next((field for field in OptionNames._fields if getattr(COMMAND_OPTIONS, field) == flag), None)
    meant = getattr(API_OPTIONS, field) if field is not None else None
    if meant in keywords:
        exact = (f", and {API_OPTIONS.exact} for exactly {brief(value)}" if field == "budget" and "exact" in keywords
                 else "")
        return f" ({flag} is {meant} here: pass {meant}={brief(value)}{exact})"
    count = next((keyword for keyword in GPU_COUNT_KEYWORDS.get(name, ()) if keyword in keywords), None)
    if count is not None:
        return f" (did you mean {count}={brief(value)}?)"
    close = difflib.get_close_matches(name, keywords, n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def host_ram_unchecked_words(source: str = COMMAND_OPTIONS.host_ram) -> str:
    """That nothing held plans to a node's host memory (none came from `source`), as every command says it: ``not
    checked: --host-ram not given`` (the plan summary, `solve memory`, a map's legend, a Trinity config's comment)."""
    return f"not checked: {source} not given"


def host_ram_check_words(host_ram_gb: float | None, source: str = "--host-ram") -> str:
    """Whether a plan's host memory need was held to a node's host memory (`host_ram_gb`, from `source`), as a host
    memory line ends it in every command: ``, within --host-ram 512 GiB`` (``, within the pool's host_ram_gb of 1024
    GiB``: `host_ram_bound_words`), or ``; not checked: --host-ram not given`` where none was
    (`host_ram_unchecked_words`)."""
    if host_ram_gb is None:
        return f"; {host_ram_unchecked_words(source)}"
    return f", within {host_ram_bound_words(host_ram_gb, source)}"


def batch_split_violation(train_batch_size: int | None, gpus: int, sp: int,
                          source: str = "--train-batch-size", pairs: bool = False) -> str | None:
    """Why a train batch of `train_batch_size` experiences (None: not known; messages say it came from `source`)
    does not split over the data-parallel ranks of `gpus` GPUs at SP `sp` (`splits_batch`), in DPO's pairs where
    `pairs` (`batch_divisor_of`), in words; None when it does, or is not known."""
    if train_batch_size is None or splits_batch(train_batch_size, gpus, sp, pairs):
        return None
    if pairs:
        return (f"the train batch of {train_batch_size} ({source}) must split evenly into DPO's pairs over the "
                f"data-parallel ranks, and {batch_divisor_of(gpus, sp, True)} ({pair_ranks_words(gpus, sp)}, "
                f"{counted(gpus, 'GPU')} / SP={sp}) do not divide it: {DPO_PAIR_BATCH_WORDS}")
    return (f"the train batch of {train_batch_size} ({source}) must split evenly over the data-parallel ranks, and "
            f"{gpus // sp} ({counted(gpus, 'GPU')} / SP={sp}) do not divide it")


def uneven_split_caution(gpus: int, sp: int, source: str | None = "--train-batch-size") -> str | None:
    """A plan's caution where its data-parallel ranks (``gpus / sp``) are not a power of two and no train batch was
    given to check (`source` says where one is given; None where none is taken): usual batches (powers of two times
    a few) may not split over them; None otherwise."""
    ranks = gpus // sp
    if ranks & (ranks - 1) == 0:
        return None
    advice = f"; give {source} to plan for yours" if source else ""
    return (f"{ranks} data-parallel ranks ({counted(gpus, 'GPU')} / SP={sp}): Trinity splits each training batch "
            f"evenly over them, so buffer.train_batch_size (batch_size x repeat_times) must be a multiple of "
            f"{ranks}{advice}")


SP_NODE_RULE_OWNER = ("rft-solver's rule, not Trinity's or verl's, which run it with its all-to-all crossing nodes; "
                      "the tables measured SP within one node")
"""Whose rule it is that each SP group of a trainer spanning nodes stays inside a node, and why, as the words of a
degree it refuses say it."""


def sp_within_node(gpus: int, node_gpus: int, sp: int) -> bool:
    """Whether each SP group of a trainer of `gpus` GPUs stays inside a node of `node_gpus`: the trainer fits
    one node, or SP divides the node."""
    return gpus <= node_gpus or node_gpus % sp == 0


@lru_cache(maxsize=4096)
def sp_degrees(model: Model, gpus: int, node_gpus: int | None = None) -> tuple[int, ...]:
    """The SP degrees that can run `model` on `gpus` trainer GPUs (`sp_layout_violation`: the heads rules, SP
    dividing the GPUs, and with `node_gpus` each SP group inside a node when the trainer spans nodes)."""
    return tuple(sp for sp in range(1, gpus + 1) if not sp_layout_violation(model, gpus, sp, node_gpus or gpus))


def sp_degrees_within(model: Model, budget_gpus: int, node_gpus: int) -> tuple[int, ...]:
    """The SP degrees that can run `model` on some count of at most `budget_gpus` trainer GPUs in nodes of `node_gpus`
    (`sp_degrees` of each count; an SP group fits in one node, so the counts up to a node's size have them all)."""
    counts = range(1, min(budget_gpus, node_gpus) + 1)
    return tuple(sorted({sp for gpus in counts for sp in sp_degrees(model, gpus, node_gpus)}))


def sp_layout_violation(
    model: Model, gpus: int, sp: int, node_gpus: int, source: str = "--node-gpus"
) -> str | None:
    """Why SP degree `sp` cannot run `model` on `gpus` trainer GPUs in nodes of `node_gpus` (whose size
    comes from `source`): the heads rules, SP dividing the GPUs, and each SP group inside a node when the
    trainer spans nodes; None when it can."""
    broken = sp_layout_rule(model, gpus, sp, node_gpus, source)
    return broken.words if broken else None


def sp_layout_rule(model: Model, gpus: int, sp: int, node_gpus: int, source: str = "--node-gpus") -> BrokenRule | None:
    """`sp_layout_violation` with its code: the rule SP degree `sp` breaks on `gpus` GPUs in nodes of `node_gpus`."""
    heads = sp_rule_violation(model.num_attention_heads, model.num_key_value_heads, sp)
    if heads:
        return BrokenRule(BrokenRuleCode.SP_MODEL_HEADS, f"{model.name}: {heads}")
    if broken := sp_gpus_violation(gpus, sp):
        return BrokenRule(BrokenRuleCode.SP_DIVIDES_GPUS, broken)
    if not sp_within_node(gpus, node_gpus, sp):
        return BrokenRule(BrokenRuleCode.SP_WITHIN_NODE,
                          (f"{gpus} GPUs span nodes of {node_gpus} ({source}), and SP={sp} does not divide a "
                           f"node: {SP_NODE_RULE_OWNER}"))
    return None
