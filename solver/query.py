"""What the planner is asked: a request (`Query`, built and checked by `make_query`), the settings it pins
(`Pins`), the limits a request must keep to, `Undecided` for a question the time limit left open, the
`Progress` a placement reports to, and what a Trinity config asks (`TrinityConfig`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from enum import Enum
from functools import partial, wraps
from inspect import signature
from math import ceil
from typing import Any, Literal, NamedTuple, ParamSpec, TypeVar, get_args

from pydantic import Field, PositiveInt, model_validator

from solver.rules import (
    API_OPTIONS,
    COMMAND_OPTIONS,
    CONFIG_TOKEN_CAP_SOURCE,
    SP_NODE_RULE_OWNER,
    TOKEN_CAP_WORDS,
    BrokenRuleCode,
    OptionNames,
    batch_words,
    host_ram_bound_words,
    host_ram_words,
    kept_for_rollout,
    keyword_meant,
    least_token_budget,
    one_sequence_per_micro_batch,
    option_names_of,
    rollout_layout,
    sp_degrees,
    sp_degrees_within,
    sp_layout_violation,
    token_budget,
)
from solver.tables import (
    CRITIC_CHOICES,
    DPO_CONFLICTS,
    DPO_NO_EXPLORER,
    LAYOUTS_TAKEN,
    MAX_ESTIMATED_GPUS,
    MAX_GPUS,
    MAX_HOST_RAM_GB,
    MAX_LORA_RANK,
    MAX_NODE_GPUS,
    MAX_TIME_LIMIT_S,
    MAX_TOKENS,
    MAX_TOP,
    MAX_TRAIN_BATCH,
    MAX_WORKERS,
    NO_LORA_REFERENCE,
    NODE_GPUS,
    REFERENCE_ALWAYS,
    SMALL_CARD_GIB,
    BatchDivisor,
    Catalog,
    CountedGpu,
    CriticChoice,
    CriticStates,
    ExpertLayout,
    Frozen,
    MemoryModel,
    Model,
    ModelLoading,
    QueryError,
    RefusedNameError,
    TokenBudgetMode,
    TrinityVersion,
    Weights,
    and_joined,
    asked_length,
    brief,
    builds_reference_anyway,
    check_choice,
    check_critic,
    check_types,
    chosen,
    count_range_words,
    counted,
    counted_batch_divisor,
    counted_critic,
    counted_expert_layout,
    cut,
    dpo_conflict,
    folded_choice,
    host_mib_as_gb_hint,
    load_memory_model,
    load_weights,
    model_loading,
    node_gpus_range_words,
    percentage_hint,
    release_name,
    shown_number,
    sp_attention_violation,
    sp_rule_violation,
    trinity_release,
    vllm_lora_rank_refusal,
)
from solver.tables.peft_match import (
    ALL_LINEAR,
    EXCLUDE_FEWER,
    EXCLUDED_FORM,
    LORA_TARGETS_FORMS,
    SPACED_ALL_LINEAR,
    comma_module_names,
    every_target_excluded,
    listed_module_names,
    lora_targets_pattern,
    peft_regex,
    peft_target_match,
    peft_target_refusal,
    shown_module_names,
    spaced_all_linear,
)
from solver.tables.peft_names import LoraTargets


def check_trinity_version(name: str, value: object, counts_taken: bool = False) -> None:
    """`QueryError` unless `value` is None, ``"0.5"`` or ``"0.6"`` (`name`'s, for functions below the API's, which
    take the minor version alone); a release of one (``"0.5.2"``) is told the minor version to pass, and, for a
    function that takes the release's counts apart (`counts_taken`: ``experts=`` and ``batch_divisor=``, as
    `solver.trinity.trinity_config_problems`), those of the release where they are not the minor version's
    defaults."""
    try:
        release = trinity_release(name, value)
    except QueryError:
        release = None
    if release is not None and release != value:
        counts = {"experts": (counted_expert_layout(str(value)), "fused"),
                  "batch_divisor": (counted_batch_divisor(str(value)), counted_batch_divisor(release))}
        differ = [f"{key}={count!r}" for key, (count, default) in counts.items() if count != default]
        with_counts = f" with {' and '.join(differ)}, as {brief(value)} counts" if counts_taken and differ else ""
        raise QueryError(f"{name} must be one of None, 0.5, 0.6 (the minor version), got {brief(value)}: pass "
                         f"{release!r}{with_counts}")
    check_choice(name, value, (None, *get_args(TrinityVersion)))
Objective = Literal["cheapest", "max_len", "min_gpus", "min_gpu_hours"]

CHOOSES_COUNT: tuple[Objective, ...] = ("min_gpus", "min_gpu_hours")
"""The objectives that choose the trainer GPU count: without a budget, any count up to `MAX_ESTIMATED_GPUS` (an open
budget), and never an exact one."""
GpuNames = str | list[str] | tuple[str, ...] | None
"""The GPU types a question asks about (`asked_gpus`): a name, a list or tuple of names, or None for each GPU type with
tables."""
EstimateMode = Literal["auto", "only", "never"]
Progress = Callable[[str, float, float, float], None]
"""Called with (stage, best objective, best bound, seconds) whenever CP-SAT finds a better placement whose objective
or bound, as the stage counts them, changes (`solver.cluster.place`'s `progress`)."""


MODEL_PATH_KEY = "model.model_path"
"""The Trinity config key that names the model: a Hugging Face id, or a local folder."""
NODE_SIZE_PATH = ("cluster", "gpu_per_node")
NODE_SIZE_KEY = ".".join(NODE_SIZE_PATH)
"""The Trinity config key that gives the GPUs of a node."""
ACTOR_ROLLOUT_REF = ("trainer", "trainer_config", "actor_rollout_ref")
"""Where a Trinity config keeps verl's roles (actor, ref) and their settings."""
BYPASS_OLD_LOGPROBS_KEY = ("algorithm", "bypass_old_logprobs")
"""Trinity 0.6's switch between the rollout's log-probs as the old ones (true, its default: ``common/config.py:657``
in 0.6.0) and the actor's recompute of them each step (false: ``_compute_old_log_prob``, ``trainer/verl/trainer.py:517``
and ``:719``, on verl 0.8 or later). Before verl 0.8 the legacy trainer reads another key
(`solver.trinity.keys.LEGACY_BYPASS_MODE_KEY`)."""
BYPASS_OLD_LOGPROBS = ".".join(BYPASS_OLD_LOGPROBS_KEY)
"""`BYPASS_OLD_LOGPROBS_KEY` dotted, as a verdict's ``unread_keys`` name it."""
ROLE_TOKEN_BUDGETS = ((*ACTOR_ROLLOUT_REF, "actor", "ppo_max_token_len_per_gpu"),
                      (*ACTOR_ROLLOUT_REF, "ref", "log_prob_max_token_len_per_gpu"),
                      (*ACTOR_ROLLOUT_REF, "rollout", "log_prob_max_token_len_per_gpu"))
"""verl's per-role token budgets: set by hand, they override ``trainer.max_token_len_per_gpu`` for their role (on verl
before 0.8: `solver.trinity.ROLE_KEYS_IGNORED`). The rollout's bounds the actor's recompute of the old log-probs (a
forward, on the trainer's GPUs; unset, Trinity fills it from the actor's)."""
ROLE_MICRO_BATCH_SIZES = ((*ACTOR_ROLLOUT_REF, "actor", "ppo_micro_batch_size_per_gpu"),
                          (*ACTOR_ROLLOUT_REF, "ref", "log_prob_micro_batch_size_per_gpu"),
                          (*ACTOR_ROLLOUT_REF, "rollout", "log_prob_micro_batch_size_per_gpu"))
"""verl's sequences per micro-batch on each GPU for the actor's training, the ref's forward and the actor's recompute
of the old log-probs (the rollout's): what verl splits a batch by with dynamic batch sizes off (``use_dynamic_bsz:
false``), its token budgets then unread (``dp_actor.py:114`` in Trinity 0.5.0)."""
CRITIC_MICRO_BATCH_SIZES = (("trainer", "trainer_config", "critic", "ppo_micro_batch_size_per_gpu"),
                            ("trainer", "trainer_config", "critic", "forward_micro_batch_size_per_gpu"))
"""The critic's alike (`ROLE_MICRO_BATCH_SIZES`): its training's, and its value forward's."""
CRITIC_ENGINE_MICRO_BATCH_SIZES = (("trainer", "trainer_config", "critic", "fsdp", "micro_batch_size_per_gpu"),
                                   ("trainer", "trainer_config", "critic", "fsdp", "infer_micro_batch_size_per_gpu"))
"""The micro-batch sizes per GPU of the critic's FSDP engine, its update's and its value forward's, which Trinity 0.6 on
verl 0.8 or later cuts the critic's passes by with dynamic batch sizes off: Trinity builds the engine from
``critic.fsdp`` (``trainer/verl/trainer.py:363-371``, ``_build_fsdp_engine_config``, ``trainer/verl/config.py:499``
in 0.6.0) and copies neither of the critic's own sizes (`CRITIC_MICRO_BATCH_SIZES`) into it, so unset they stay none
(``EngineConfig``, ``workers/config/engine.py:105``, ``:108`` in verl 0.8.0 and 0.9.0, ``:103``, ``:106`` in 0.9.1;
verl's own trainer copies none either, ``trainer/ppo/ray_trainer.py:812-814``), and the critic's first value forward
fails on ``force_group_size * None`` (``prepare_micro_batches``, ``workers/engine/utils.py:91`` in 0.8.0, ``:125`` in
0.9.0 and 0.9.1). The config's ``critic.fsdp`` is deep-merged over the engine (no ``FROZEN_KEYS``), so these keys set
them. Trinity 0.5's typed ``Critic`` refuses the section; 0.6.0 on verl before 0.8 drops it. Read from the code, not
run."""
CRITIC_REMOVE_PADDING_KEY = ("trainer", "trainer_config", "critic", "model", "use_remove_padding")
"""The critic's own remove padding, which Trinity 0.5 reads (``CriticModel``, true by default,
``common/verl_config.py:248`` in 0.5.0; its worker, ``trainer/verl/fsdp_workers.py:1318``) and 0.6 sets to the
trainer's (``solver.trinity.keys.SET_TO_TRAINERS_BY_06``)."""
ROLLOUT_TOKEN_BUDGET = ROLE_TOKEN_BUDGETS[2]
"""The rollout's token budget, which Trinity never raises to hold a sequence (it does the actor's and the ref's)."""
TRAINER_TOKEN_BUDGET = "trainer.max_token_len_per_gpu"
"""Trinity's token budget per GPU (unset: ``ceil(2 x max_model_len / SP)``), which flows to the roles' own."""
TRAIN_BATCH_PATH = ("buffer", "train_batch_size")
TRAIN_BATCH_KEY = ".".join(TRAIN_BATCH_PATH)
"""Trinity's experiences per training step (0, its default: ``buffer.batch_size`` x ``algorithm.repeat_times``), which
the trainer's data-parallel ranks must divide."""
DEFAULT_TRAIN_BATCH_SOURCE = "buffer.batch_size x algorithm.repeat_times"
"""Where a config's train batch comes from where it leaves `TRAIN_BATCH_KEY` unset, as messages name it: another batch
than that product is set at `TRAIN_BATCH_KEY` (`Query.batch_set_at`)."""
MAX_SEED = 2**31 - 1
"""The largest CP-SAT random seed (its ``random_seed`` is a 32-bit signed integer)."""


class Pins(Frozen):
    """The settings a query pins (--sp, --env/--no-env, --offload/--no-offload); null where it leaves one free."""

    sp: PositiveInt | None = Field(default=None, description="the SP degree --sp pins; null where free")
    env: bool | None = Field(default=None, description="--env (true) or --no-env (false); null where free")
    offload: bool | None = Field(default=None, description="--offload (true) or --no-offload (false); null where free")


class ConfigAdapter(Frozen):
    """A Trinity config's own LoRA adapter, which what is made of a plan with it keeps: the dotted key that turns it
    on (`key`), the rank the plans count (`rank`: 0 where they count none) and its targets' regexes
    (`target_modules`, `exclude_modules`; `targets`, None for all-linear's). Each plan keeps it
    (`solver.results.Plan.config_adapter`), so that its JSON read back is checked against it as the answer was
    (`solver.trinity.adapter_unkept`)."""

    key: str = Field(description="the config's key that turns its LoRA on (model.lora_configs, ...)")
    rank: int = Field(ge=0, description=(
        "the adapter's rank as its plans count it; 0 where they count none of the config's own (an adapter it "
        "loads: the plan's lora_rank counts)"))
    target_modules: str | None = Field(default=None, description=(
        "its target_modules regex, as the plans count it; null for all-linear's, every linear layer but the output "
        "projection"))
    exclude_modules: str | None = Field(default=None, description=(
        "with target_modules: its exclude_modules regex; null where none"))

    @classmethod
    def of(cls, key: str, rank: int, targets: LoraTargets | None) -> ConfigAdapter:
        """The adapter turned on by `key`, of `rank`, on `targets` (None: all-linear's)."""
        return cls(key=key, rank=rank, target_modules=None if targets is None else targets.pattern,
                   exclude_modules=None if targets is None else targets.excluded)

    @property
    def targets(self) -> LoraTargets | None:
        """Its targets, as `Catalog.with_lora_targets` takes them; None for all-linear's."""
        return None if self.target_modules is None else LoraTargets(self.target_modules, self.exclude_modules)

    @property
    def targets_key(self) -> str | None:
        """The dotted config key that gives its ``target_modules`` regex where the config makes it anew (`rank` above
        0): the one LoRA config's (``model.lora_configs[0].target_modules``), else verl before 0.8's beside `key`
        (``trainer.trainer_config.actor_rollout_ref.model.target_modules``); None for an adapter it loads, whose
        targets are its own file's."""
        if not self.rank:
            return None
        if self.key == "model.lora_configs":
            return f"{self.key}[0].target_modules"
        return f"{self.key.rpartition('.')[0]}.target_modules"


def lora_targets_given(own: LoraTargets | None, counted: LoraTargets | None) -> tuple[str | None, str | None]:
    """The ``--lora-targets`` and ``--lora-exclude`` (``lora_targets=``, ``lora_exclude_modules=``) with which
    ``solve --from-config`` (``solver.api.config_query``) counts a config's adapter on `counted` in place of its own
    targets `own` (None: all-linear's): neither where they are the same; the exclusions alone where they leave out
    modules of the config's own regex (which exclusions alone keep, in place of its ``exclude_modules``); else the
    regex (or ``all-linear``) with its exclusions, if any (a regex given alone drops the config's)."""
    pattern, excluded = (ALL_LINEAR, None) if counted is None else counted
    own_pattern, own_excluded = (ALL_LINEAR, None) if own is None else own
    if (pattern, excluded) == (own_pattern, own_excluded):
        return None, None
    return (None if pattern == own_pattern and excluded is not None else pattern), excluded


class Query(Frozen):
    """A planning request, names resolved and flags checked (build it with `make_query`)."""

    model: str
    gpus: tuple[str, ...] = Field(description="GPU types to answer for, one answer each")
    objective: Objective
    budget_gpus: int = Field(gt=0, description="trainer GPUs the plan may use at most (exactly, with exact)")
    open_budget: bool = Field(default=False, description=(
        "the budget is not the user's: the fewest GPUs among every count the planner considers"))
    exact: bool = False
    exact_source: str = Field(default="--exact", description="where the exact count came from, as messages name it "
                              "(--exact, or a config's cluster)")
    max_model_len: int | None = Field(default=None, gt=0)
    sp: int | None = Field(default=None, gt=0)
    env: bool | None = None
    offload: bool | None = None
    node_gpus: int = Field(default=NODE_GPUS, gt=0, le=MAX_NODE_GPUS, description="GPUs per node: a trainer "
                           "spanning nodes keeps each SP group inside one node")
    node_source: str = Field(default="--node-gpus", description="where the node size came from, as messages "
                             "name it (--node-gpus, or a config's cluster.gpu_per_node)")
    node_gpus_given: bool = Field(default=False, description=(
        "whether the node size is the caller's (--node-gpus, a config's cluster.gpu_per_node, a cluster's pool): a "
        "refusal's nearest plan then keeps to nodes of that size; false: the default 8, and a refusal may name a "
        "plan on nodes of 16 where nodes of 8 have none"))
    host_ram_source: str = Field(default="--host-ram", description="where the host memory came from, as "
                                 "messages name it (--host-ram, or a cluster pool's host_ram_gb)")
    host_ram_hardware: str | None = Field(default=None, description=(
        "whose hardware host_ram_gb is, as messages name it (a cluster's \"the pool's\"): messages then say what "
        "nodes with more of it would allow, not a limit to drop; null: a limit the user sets (--host-ram)"))
    count_nodes: bool = Field(default=False, description=(
        "whether messages say how many nodes a plan on more GPUs than one node takes (a cluster's questions, for a "
        "pool of so many nodes); false: the planner's, whose node count is open"))
    rollout_gpus: int | None = Field(default=None, ge=0, description="rollout GPUs beside the trainer: its GPU "
                                     "count must leave them a layout on the nodes")
    rollout_source: str | None = Field(default=None, description=(
        "where the rollout GPUs came from, as messages name them (a cluster job's rollout_gpus, a Trinity config's "
        "explorer); null: the option option_names names (--rollout-gpus)"))
    total_gpus: int | None = Field(default=None, gt=0, description=(
        "the trainer's and the rollout's GPUs together (--total-gpus), whose rollout_gpus the trainer's budget_gpus "
        "leaves; null where the budget is the trainer's alone"))
    train_batch_size: int | None = Field(default=None, gt=0, le=MAX_TRAIN_BATCH, description=(
        "experiences per training step (Trinity's buffer.train_batch_size, by default batch_size x repeat_times): "
        "the trainer's data-parallel ranks (GPUs / SP) must divide it; null: not checked"))
    train_batch_source: str = Field(default="--train-batch-size", description=(
        "where the train batch came from, as messages name it (--train-batch-size, or a config's key)"))
    trinity_version: TrinityVersion | None = Field(default=None, description=(
        "the Trinity release the plans are for (--trinity-version): with 0.5, a plan whose GPUs do not divide the "
        "train batch gets a caution (0.5.0 and 0.5.1 refuse it: batch_divisor); null: none named"))
    trinity_release: str | None = Field(default=None, description=(
        "the release named (--trinity-version) as the plans name it back (`solver.tables.release_name`: 0.5.1, "
        "0.5.0, 0.5), the one their check command gives; null: none named"))
    trainer_strategy: str | None = Field(default=None, description=(
        "the trainer strategy the Trinity config the query was read from sets (trainer.trainer_strategy: fsdp, "
        "fsdp2), which a plan without Offload keeps (one with Offload writes fsdp2); null: none set, the release's "
        "default (fsdp2 from 0.6). It decides, with the release and the GPU, which ranks load the model at start-up "
        "(`model_loading`)"))
    batch_divisor: BatchDivisor = Field(default="ranks", description=(
        "what must divide the train batch for the release named (--trinity-version, "
        "`solver.tables.counted_batch_divisor`): gpus for 0.5.0 and 0.5.1, which refuse a train batch the trainer "
        "GPUs do not divide, a rule the plans keep to; unsure for 0.5 without its patch, whose plans get a caution "
        "where the GPUs do not divide it; ranks (the data-parallel ranks alone) otherwise"))
    expert_layout: ExpertLayout = Field(default="fused", description=(
        "how the release named (--trinity-version) has transformers hold a mixture of experts' routed experts, which "
        "decides how FSDP2 shards their states and what a LoRA adapter on all-linear adapts of them "
        "(`solver.tables.counted_expert_layout`): separate for 0.5.1, whose transformers 4 makes each expert its own "
        "nn.Linear; either for 0.5, 0.5.0 and 0.5.2, which take transformers 4 or 5 (the states and a LoRA adapter "
        "each the larger of the two); fused otherwise"))
    reference_model: bool = Field(default=True, description=(
        "whether the run builds a reference model, whose pinned shards the host memory need counts (a Trinity "
        "config's algorithm and LoRA decide it, `TrinityConfig.reference_model`; --no-reference); true where not "
        "known"))
    lora_rank: int = Field(default=0, ge=0, le=MAX_LORA_RANK, description=(
        "the LoRA rank whose states the plans count (--lora-rank, or a Trinity config's LoRA: "
        "`TrinityConfig.lora_rank`): the frozen base's fp32 weights and the adapter's states on every linear layer "
        "but the output projection (or those a config's regex adapts: lora_targets); the tables, which measured "
        "full fine-tuning, then vouch by inference and refute nothing; 0 for full fine-tuning"))
    critic: CriticStates | None = Field(default=None, description=(
        "a PPO critic the plans count beside the actor (--critic; by default a Trinity config's own, as its flags "
        "hold it, `TrinityConfig.critic`): resident, its states on the GPUs; offloaded, in host memory; reloaded, in "
        "host memory and back on the GPUs for its own update; the tables, which measured the actor alone, then vouch "
        "for nothing and still refute; null for none"))
    mode_train: bool = Field(default=False, description=(
        "whether the Trinity config the query was read from runs in mode train (config_query, --from-config), the one "
        "mode Trinity trains DPO on a dataset in: a DPO fragment's header then leaves out the note that says to set "
        "it"))
    lora_targets: LoraTargets | None = Field(default=None, description=(
        "the target_modules regex (and exclude_modules) of the LoRA adapter: --lora-targets' (`given_lora_targets`), "
        "else that of the Trinity config's own adapter the query was read from (config_query, --from-config: "
        "`TrinityConfig.lora_targets`), whose modules the plans count the adapter on "
        "(`solver.tables.Model.lora_targets`, `counted_catalog`) and which each plan keeps "
        "(`solver.results.Plan.lora_target_modules`); null: all-linear's, every linear layer but the output "
        "projection"))
    config_adapter: ConfigAdapter | None = Field(default=None, description=(
        "the LoRA adapter of the Trinity config the query was read from (config_query), which the config keeps "
        "(config_lora): its key, rank and targets as the plans count them (`TrinityConfig.lora_key`, `lora_rank`, "
        "`lora_targets`), against which solver.trinity_config refuses a plan that counted fewer parameters "
        "(`solver.trinity.adapter_unkept`); null without one"))
    config_lora: bool = Field(default=False, description=(
        "whether the Trinity config the query was read from (config_query, --from-config) sets LoRA of its own "
        "(`TrinityConfig.lora_key`), whose adapter (target_modules, name, alpha) the config keeps: the plans' "
        "fragment and settings then write no model.lora_configs, which would replace it, as --emit trinity and "
        "--json's apply, made with the config, write none"))
    dpo: bool = Field(default=False, description=(
        "whether the run trains DPO (a Trinity config's algorithm_type dpo, or --dpo): for a model trained one padded "
        "sequence per micro-batch, the actor's micro-batch holds a pair, a chosen and a rejected sequence, which the "
        "plans' memory estimate counts (`solver.rules.counted_tokens`); false where not known"))
    own_batch_sizes: bool = Field(default=False, description=(
        "whether the query judges a config's own micro-batch sizes (the verdict on its settings): a DPO train batch "
        "is then not held to the pairs of the sizes the plans write (`pair_batch`), which the config's checks judge "
        "against its own (dpo-mini-batch-split)"))
    top: int = Field(default=1, gt=0, le=MAX_TOP)
    weights: Weights
    estimate: EstimateMode = Field(default="auto", description="auto: estimates where the tables have no "
                                   "table for the GPU type, model or count; only: estimates alone; never: none")
    memory: MemoryModel
    margin: float | None = Field(default=None, ge=0, lt=1, description=(
        "safety margin of estimates, a fraction of usable memory (--margin); null: the default on each GPU type "
        "(`default_margin`)"))
    token_budget: TokenBudgetMode = Field(default="default", description=(
        "default: Trinity's max_token_len_per_gpu for every plan; auto: where it does not fit, an estimated plan "
        "takes the most tokens per GPU the memory model fits, at least ceil(L/s)"))
    token_budget_cap: int | None = Field(default=None, ge=1, le=MAX_TOKENS, description=(
        "the most tokens per GPU any plan takes (--token-budget N, or a Trinity config's own lowered budget): a plan "
        "takes the least of it, Trinity's default and (auto) what its estimate fits, and holds a sequence at it "
        "(ceil(L/s) <= N); null: no cap"))
    token_budget_cap_source: str | None = Field(default=None, description=(
        "where a cap not given as the option came from, in words: the config's keys that set it "
        "(`config_token_cap_source`: ``the config's own max_token_len_per_gpu``, or its roles' own); null: the option "
        "(--token-budget N) or no cap"))
    host_ram_gb: float | None = Field(default=None, gt=0, le=MAX_HOST_RAM_GB, description="host memory per node, for Offload")
    time_limit_s: float = Field(default=10.0, gt=0)
    workers: int = Field(default=1, gt=0)
    seed: int = Field(default=0, ge=0)
    option_names: OptionNames = Field(default=API_OPTIONS, description=(
        "how the answers' reasons and cautions name the options they point to: the API's keywords "
        "(`solver.rules.API_OPTIONS`, the default), or the command's flags (`COMMAND_OPTIONS`, which solve passes)"))

    def margin_on(self, memory_gib: float, estimated: bool = True) -> float:
        """The safety margin the query holds plans on a GPU of `memory_gib` to: an estimate's (`resolve_margin`), or,
        for a documented or inferred plan's figures (`estimated` False), --margin or the memory model's own."""
        if self.margin is None and not estimated:
            return self.memory.margin
        return resolve_margin(self.memory, self.margin, memory_gib)

    @property
    def pair_batch(self) -> bool:
        """Whether the plans keep the train batch to DPO's pairs, twice the data-parallel ranks
        (`solver.rules.batch_divisor_of`'s `pairs`): a DPO run (`dpo`), whose actor's micro-batch of one pair, as the
        plans' Trinity keys write it, each rank's share must hold whole on every release and verl line
        (`solver.rules.DPO_PAIR_BATCH_WORDS`); not where the query judges a config's own sizes (`own_batch_sizes`)."""
        return self.dpo and not self.own_batch_sizes

    def model_loading(self, compute_capability: str | None, offload: bool) -> ModelLoading:
        """Which of a node's trainer ranks load the model at start-up (`solver.tables.model_loading`) for a plan with
        `offload` or not on a GPU of `compute_capability`, under the release named (`trinity_release`): FSDP2 with
        Offload (the plans write it), else the config's strategy (`trainer_strategy`) or the release's default."""
        return model_loading(self.trinity_release, self.trainer_strategy, compute_capability, offload)

    def under_release(self, release: str) -> Query:
        """The query as the same one names the Trinity `release` (``0.5.1``: as `trinity_release` takes it), with the
        rules the release decides (`trinity_version`, `batch_divisor`, `expert_layout`, the ranks loading the model)."""
        return self.model_copy(update={"trinity_version": trinity_release("trinity_version", release),
                                       "trinity_release": release_name(release),
                                       "expert_layout": counted_expert_layout(release),
                                       "batch_divisor": counted_batch_divisor(release)})

    def counted_catalog(self, catalog: Catalog) -> Catalog:
        """`catalog` with the query's model counting its LoRA adapter on the modules `lora_targets` adapts
        (`Catalog.with_lora_targets`), as the plans and the verdict count it."""
        return catalog.with_lora_targets(self.model, self.lora_targets)

    @property
    def pins(self) -> Pins:
        """The settings the query pins (`sp`, `env`, `offload`), as an answer echoes them."""
        return Pins(sp=self.sp, env=self.env, offload=self.offload)

    @property
    def within_budget(self) -> str:
        """The budget in words: ``within 6 GPUs``, or ``on exactly 6 GPUs`` with `exact`; with `total_gpus`, ``within
        16 GPUs in all (8 for the rollout)``, or ``on exactly 8 GPUs (16 in all, 8 for the rollout)``."""
        gpus = counted(self.budget_gpus, "GPU")
        if self.total_gpus is None:
            return f"on exactly {gpus}" if self.exact else f"within {gpus}"
        if self.exact:
            return f"on exactly {gpus}{self.total_split}"
        return f"within {self.total_gpus} GPUs in all ({self.rollout_gpus} for the rollout)"

    @property
    def total_split(self) -> str:
        """With `total_gpus`, how the trainer's budget comes from them, in words after it: `` (16 in all, 8 for the
        rollout)`` (the trainer's budget is what the rollout leaves); "" without."""
        return "" if self.total_gpus is None else f" ({self.total_gpus} in all, {self.rollout_gpus} for the rollout)"

    def budget_option(self, gpus: int) -> str:
        """The option that gives a trainer of `gpus` GPUs, as the caller writes it: ``--gpus 8``, or with `total_gpus`
        the GPUs in all that it and its rollout's layout take, ``--total-gpus 16`` (8 and a rollout of 4 on nodes of 8
        take two nodes)."""
        names = self.option_names
        if self.total_gpus is None or self.rollout_gpus is None:
            return names.valued(names.budget, gpus)
        layout = rollout_layout(gpus, self.rollout_gpus, self.node_gpus)
        return names.valued(names.total_gpus, gpus + (layout[1] if layout is not None else self.rollout_gpus))

    @property
    def fewest_gpus_scope(self) -> str:
        """The GPU counts --minimize gpus (or gpu-hours) chooses from, in words: ``any count up to 64`` (no --gpus), or
        ``budget 6``, or with `total_gpus` ``budget 8 of 16 in all, 8 for the rollout``."""
        if self.total_gpus is not None:
            return f"budget {self.budget_gpus} of {self.total_gpus} in all, {self.rollout_gpus} for the rollout"
        return f"any count up to {self.budget_gpus}" if self.open_budget else f"budget {self.budget_gpus}"

    @property
    def evidence_sources(self) -> str:
        """What plans may rest on, in words: the tables, the memory model's estimates, or both."""
        return {"auto": "the tables and the memory model's estimates", "only": "the memory model's estimates",
                "never": "the tables"}[self.estimate]

    @property
    def pin_flags(self) -> str:
        """The pinned settings as the options that pin them (``--sp 2 --no-offload``; the API's ``sp=2,
        offload=False``: `option_names`); empty when none."""
        return self.option_names.joined(self._setting_pins)

    @property
    def _setting_pins(self) -> tuple[str, ...]:
        """The pinned settings, each as the option that pins it (``("--sp 2", "--no-offload")``)."""
        return self.pins_unlike(None, None, None)

    def pins_unlike(self, sp: int | None, env: bool | None, offload: bool | None) -> tuple[str, ...]:
        """The pinned settings that a plan of `sp`, `env` and `offload` does not have, each as the option that pins
        it (``("--sp 8",)`` for SP 1 with Env, of ``--sp 8 --env``)."""
        names = self.option_names
        given = (("sp", self.sp, sp), ("env", self.env, env), ("offload", self.offload, offload))
        return tuple(names.valued(names.named(name), pinned) if name == "sp" else names.switch(name, bool(pinned))
                     for name, pinned, value in given if pinned is not None and pinned != value)

    @property
    def exact_pinned(self) -> bool:
        """Whether the caller pinned the GPU count (--exact, the API's ``exact=True``), not a config's cluster."""
        return self.exact and self.exact_source == self.option_names.exact

    @property
    def given_pins(self) -> tuple[str, ...]:
        """The pins the caller gave, each as the option that gives it: `pin_flags`'s, then the exact count where the
        caller pinned it (`exact_pinned`: ``("--sp 4", "--exact")``); empty when none."""
        return (*self._setting_pins, *([self.option_names.exact] if self.exact_pinned else []))

    @property
    def host_ram_limit_words(self) -> str:
        """The host memory given, as running text names it (`host_ram_words`: ``--host-ram 64 GiB``, or ``64 GiB of host
        memory per node (the pool's host_ram_gb)``); empty when none."""
        return host_ram_words(self.host_ram_gb, self.host_ram_source) if self.host_ram_gb is not None else ""

    @property
    def unchecked_host_ram(self) -> str | None:
        """Where a node's host memory would come from (`host_ram_source`) where none was given, as a caution on a
        large need names it (`solver.results.unchecked_host_need`); None where it was given."""
        return self.host_ram_source if self.host_ram_gb is None else None

    @property
    def host_ram_bound_words(self) -> str:
        """The host memory given, as the bound a need exceeds (`host_ram_bound_words`: ``--host-ram 64 GiB``, or ``the
        pool's host_ram_gb of 64 GiB``); empty when none."""
        return host_ram_bound_words(self.host_ram_gb, self.host_ram_source) if self.host_ram_gb is not None else ""

    def more_host_ram_words(self, named: bool = False) -> str:
        """Where host memory is no flag to drop (hardware, `host_ram_hardware`, or a caller's own words for it): more
        of it, in words: ``with more host memory`` where the words before have `named` it among the limits
        (`limit_flags`), else ``with more host memory than the pool's 32 GiB`` (``... than the node's RAM of 64
        GiB``); empty otherwise."""
        if self.host_ram_gb is None or option_names_of(self.host_ram_source) is not None:
            return ""
        return f"with more host memory{'' if named else f' than {self.host_ram_named}'}"

    @property
    def critic_words(self) -> str:
        """The PPO critic the plans count (`critic`), in words after the model's name: `` with a resident PPO
        critic``, `` with an offloaded PPO critic``; "" for none."""
        if self.critic is None:
            return ""
        return f" with {'an' if self.critic == 'offloaded' else 'a'} {self.critic} PPO critic"

    @property
    def host_ram_named(self) -> str:
        """The host memory given, named briefly: as the caller gave the option (`host_ram_limit_words`: ``--host-ram 64
        GiB``, ``host_ram_gb=64``), ``the pool's 32 GiB`` (`host_ram_hardware_words`), or ``the node's RAM of 64 GiB``
        (`host_ram_bound_words`); empty when none."""
        if option_names_of(self.host_ram_source) is not None:
            return self.host_ram_limit_words
        return self.host_ram_hardware_words or self.host_ram_bound_words

    @property
    def host_ram_hardware_words(self) -> str:
        """Host memory that is hardware (`host_ram_hardware`), named briefly: ``the pool's 32 GiB``; empty
        otherwise."""
        if self.host_ram_gb is None or self.host_ram_hardware is None:
            return ""
        return f"{self.host_ram_hardware} {shown_number(self.host_ram_gb)} GiB"

    def without_host_ram_words(self, named: bool = False) -> str:
        """Where a plan needs more host memory than the query gives: what it takes, in words: ``without --host-ram``
        (a limit), ``on nodes with more host memory than the pool's 32 GiB`` (hardware), or ``with more host memory
        than the node's RAM of 64 GiB`` (a caller's own words for it); without the figure where the words before have
        `named` it (`more_host_ram_words`)."""
        if not (more := self.more_host_ram_words(named)):
            return f"without {self.host_ram_source}"
        return f"on nodes {more}" if self.host_ram_hardware is not None else more

    @property
    def time_limit_words(self) -> str:
        """The time limit as messages write it: ``10 s``, ``1e-9 s`` (`shown_number`)."""
        return f"{shown_number(self.time_limit_s)} s"

    @property
    def time_limit_given(self) -> str:
        """The time limit as the caller gives it (`option_names`): ``--time-limit 10 s``, or ``time_limit_s=10``."""
        return self.option_names.valued(self.option_names.time_limit, shown_number(self.time_limit_s), " s")

    @property
    def host_ram_limit(self) -> tuple[str, bool]:
        """The host memory given (`host_ram_limit_words`; empty when none) and whether it is an option the caller
        gave (a flag or the API's keyword), not words of another source's (a pool's)."""
        return self.host_ram_limit_words, option_names_of(self.host_ram_source) is not None

    @property
    def rollout_limit(self) -> tuple[str, bool]:
        """The rollout GPUs given (empty when none) and whether they are named as an option (``--rollout-gpus 4``),
        not in words of their source's (``its 4 rollout GPUs (the job's rollout_gpus)``: `rollout_source`)."""
        if self.rollout_gpus is None:
            return "", True
        if self.rollout_source is None:
            return self.option_names.valued(self.option_names.rollout_gpus, self.rollout_gpus), True
        return f"its {counted(self.rollout_gpus, 'rollout GPU')} ({self.rollout_source})", False

    @property
    def rollout_named(self) -> str:
        """Where the rollout GPUs came from, as messages name them: `rollout_source` (``the job's rollout_gpus``, a
        config's explorer), else the option (``--rollout-gpus``)."""
        return self.rollout_source or self.option_names.rollout_gpus

    @property
    def batch_limit(self) -> tuple[str, bool]:
        """The train batch given (`batch_words`; empty when none) and whether it is named as a flag
        (``--train-batch-size 256``), not in words (``a train batch of 256 (train_batch_size)``)."""
        if not self.train_batch_size:
            return "", False
        return batch_words(self.train_batch_size, self.train_batch_source), self.train_batch_source.startswith("--")

    @property
    def batch_set_at(self) -> str | None:
        """Where another train batch than the one given is set, where its source does not say it: `TRAIN_BATCH_KEY`
        for a config's ``buffer.batch_size x algorithm.repeat_times`` (`DEFAULT_TRAIN_BATCH_SOURCE`), whose batch
        size need not give it; else None."""
        return TRAIN_BATCH_KEY if self.train_batch_source == DEFAULT_TRAIN_BATCH_SOURCE else None

    @property
    def batch_named(self) -> str:
        """The train batch given, named briefly: as the caller gave the option (``--train-batch-size 256``,
        ``train_batch_size=256``), else ``a train batch of 256`` (a config's); empty when none."""
        if not self.train_batch_size:
            return ""
        names = self.option_names
        if self.train_batch_source == names.train_batch:
            return names.valued(names.train_batch, self.train_batch_size)
        return f"a train batch of {self.train_batch_size}"

    def options_then_words(self, limits: Sequence[tuple[str, bool]]) -> str:
        """`limits` (each its words, empty for none, and whether they are an option) as a reason names them: the
        options together as the caller writes them (`OptionNames.joined`), then the others, joined with "and"."""
        options = self.option_names.joined([words for words, option in limits if words and option])
        return " and ".join(filter(None, (options, *(words for words, option in limits if words and not option))))

    @property
    def token_cap_limit(self) -> tuple[str, bool]:
        """The token budget cap (`token_budget_cap`; empty when none) and whether it is named as the option the caller
        gave (``--token-budget 4096``, ``token_budget=4096``), not in words of its source's (``max_token_len_per_gpu at
        most 4096 (the config's max_token_len_per_gpu)``)."""
        if self.token_budget_cap is None:
            return "", False
        if self.token_budget_cap_source is None:
            return token_cap_source(self.token_budget_cap, None, self.option_names), True
        return f"max_token_len_per_gpu at most {self.token_budget_cap} ({self.token_budget_cap_source})", False

    @property
    def limit_flags(self) -> str:
        """The options that narrow the plans: the pins (`pin_flags`), the host memory, the train batch and the token
        budget cap given (`options_then_words`); empty when none."""
        return self.options_then_words(((self.pin_flags, True), self.host_ram_limit, self.batch_limit,
                                        self.token_cap_limit))


def check_host_ram(host_ram_gb: float | None, option_names: OptionNames = COMMAND_OPTIONS) -> None:
    """`QueryError` unless a node's host memory, if given, is above 0 and at most `MAX_HOST_RAM_GB` (naming the
    option as `option_names` do)."""
    if host_ram_gb is not None and not 0 < host_ram_gb <= MAX_HOST_RAM_GB:
        gib_form = option_names.valued(option_names.host_ram, "")
        raise QueryError(f"{option_names.host_ram} must be above 0 and at most {MAX_HOST_RAM_GB} GB, got "
                         f"{shown_number(host_ram_gb)}{host_mib_as_gb_hint(host_ram_gb, gib_form)}")


class ConfigProblemCode(str, Enum):
    """The machine-readable code of each kind of problem a Trinity config has (`ConfigProblem`;
    `solver.results.CurrentSettings.config_problem_codes`), beside its words: one code per thing a user does about
    it, the one source of the codes that docs/json.md's table documents. Two are only of a config the patch wrote
    (`solver.trinity.patched_config_problems`, what ``--write`` warns of): ``trainer-keys-merged-refused`` and
    ``anchored-key-changed``."""

    UNRESOLVED_VALUE = "unresolved-value"
    UNRESOLVED_VALUE_REFUSED = "unresolved-value-refused"
    WRONG_TYPE = "wrong-type"
    WRONG_TYPE_REFUSED = "wrong-type-refused"
    NUMBER_AS_TEXT = "number-as-text"
    NOT_A_NUMBER = "not-a-number"
    VALUE_OUT_OF_RANGE = "value-out-of-range"
    FLAG_NOT_BOOLEAN = "flag-not-boolean"
    FLAG_NOT_BOOLEAN_REFUSED = "flag-not-boolean-refused"
    MISSPELT_KEY = "misspelt-key"
    MISSPELT_KEY_REFUSED = "misspelt-key-refused"
    SP_DIVIDES_GPUS = "sp-divides-gpus"
    SP_MODEL_HEADS = "sp-model-heads"
    SP_MODEL_ATTENTION = "sp-model-attention"
    WHOLE_NODES = "whole-nodes"
    BATCH_DIVIDES = "batch-divides"
    BATCH_DIVIDES_TRAINER_GPUS = "batch-divides-trainer-gpus"
    ROLE_SP_DIFFERS = "role-sp-differs"
    ROLE_SP_DIFFERS_REFUSED = "role-sp-differs-refused"
    ROLE_SP_BELOW_ONE = "role-sp-below-one"
    ROLE_SP_BELOW_ONE_REFUSED = "role-sp-below-one-refused"
    REF_SP_UNGROUPED_REFUSED = "ref-sp-ungrouped-refused"
    LORA_CONFIGS_REFUSED = "lora-configs-refused"
    EMPTY_ADAPTER_PATH_REFUSED = "empty-adapter-path-refused"
    EMPTY_ADAPTER_PATH = "empty-adapter-path"
    TRAILING_SLASH_REFUSED = "trailing-slash-refused"
    TRAILING_SLASH = "trailing-slash"
    LORA_RANK_NOT_A_NUMBER_REFUSED = "lora-rank-not-a-number-refused"
    LORA_RANK_NOT_A_NUMBER = "lora-rank-not-a-number"
    LORA_RANK_VLLM_REFUSED = "lora-rank-vllm-refused"
    ENGINE_ARGS_LORA_REFUSED = "engine-args-lora-refused"
    ENGINE_ARGS_REPEATED_REFUSED = "engine-args-repeated-refused"
    SGLANG_LORA_REFUSED = "sglang-lora-refused"
    TYPED_NULL_REFUSED = "typed-null-refused"
    TYPED_NULL = "typed-null"
    REF_MODEL_REFUSED = "ref-model-refused"
    REF_MODEL = "ref-model"
    REF_NOT_BUILT = "ref-not-built"
    TOKEN_BUDGET_BELOW_LENGTH = "token-budget-below-length"
    PROMPT_RESPONSE_OVER_LENGTH = "prompt-response-over-length"
    PROMPT_OR_RESPONSE_AT_LENGTH = "prompt-or-response-at-length"
    LENGTH_FROM_PROMPT_RESPONSE = "length-from-prompt-response"
    ROPE_SCALING_MISSING = "rope-scaling-missing"
    ROPE_SCALING_MISSING_REFUSED = "rope-scaling-missing-refused"
    ROPE_SCALING_WRONG = "rope-scaling-wrong"
    ROPE_SCALING_SHORT_REFUSED = "rope-scaling-short-refused"
    ROPE_FACTOR_SKIPPED_REFUSED = "rope-factor-skipped-refused"
    ROPE_SCALING_OFF_GUIDE = "rope-scaling-off-guide"
    ROLLOUT_ROPE_SCALING_DIFFERS = "rollout-rope-scaling-differs"
    ROLLOUT_LENGTH_SHORT = "rollout-length-short"
    ROLLOUT_LENGTH_REFUSED = "rollout-length-refused"
    ROLLOUT_ENGINE_MEMORY_REFUSED = "rollout-engine-memory-refused"
    ROLLOUT_TP_HEADS_REFUSED = "rollout-tp-heads-refused"
    ENGINE_NODES_REFUSED = "engine-nodes-refused"
    SGLANG_PARALLEL_REFUSED = "sglang-parallel-refused"
    ROPE_SCALING_UNNEEDED = "rope-scaling-unneeded"
    ROPE_SCALING_REPLACES_OWN = "rope-scaling-replaces-own"
    ROPE_TYPE_MISSING_REFUSED = "rope-type-missing-refused"
    ROPE_SCALING_UNBUILT_REFUSED = "rope-scaling-unbuilt-refused"
    ROPE_SCALING_UNTRAINED = "rope-scaling-untrained"
    ROPE_THETA_DROPPED = "rope-theta-dropped"
    ROPE_THETA_MISSING_REFUSED = "rope-theta-missing-refused"
    ROPE_THETA_MISSING = "rope-theta-missing"
    ROPE_PARTIAL_DROPPED = "rope-partial-dropped"
    ROPE_PARTIAL_DIFFERS = "rope-partial-differs"
    PAST_NATIVE_ON_OWN_SCALING_REFUSED = "past-native-on-own-scaling-refused"
    PAST_DERIVED_LENGTH_REFUSED = "past-derived-length-refused"
    SGLANG_LENGTH_REFUSED = "sglang-length-refused"
    DYNAMIC_BATCH_OFF = "dynamic-batch-off"
    GRADIENT_CHECKPOINTING_OFF = "gradient-checkpointing-off"
    REMOVE_PADDING_OFF = "remove-padding-off"
    REMOVE_PADDING_ON = "remove-padding-on"
    MICRO_BATCH_UNBOUNDED = "micro-batch-unbounded"
    MICRO_BATCH_UNSET = "micro-batch-unset"
    MICRO_BATCH_UNSET_REFUSED = "micro-batch-unset-refused"
    MICRO_BATCH_DEPRECATED_SIZE = "micro-batch-deprecated-size"
    DPO_PAIR_SPLIT = "dpo-pair-split"
    DPO_PAIR_DOUBLED = "dpo-pair-doubled"
    DPO_PAIR_DYNAMIC = "dpo-pair-dynamic"
    DPO_MINI_BATCH_SPLIT = "dpo-mini-batch-split"
    DPO_MINI_BATCH_SPLIT_REFUSED = "dpo-mini-batch-split-refused"
    MINI_BATCH_SPLIT = "mini-batch-split"
    MINI_BATCH_SPLIT_REFUSED = "mini-batch-split-refused"
    OFFLOAD_NEEDS_FSDP2 = "offload-needs-fsdp2"
    OFFLOAD_WITHOUT_POLICY = "offload-without-policy"
    OFFLOAD_POLICIES_DISAGREE = "offload-policies-disagree"
    TRAINER_OFFLOAD_FLAGS_UNSET = "trainer-offload-flags-unset"
    OFFLOAD_FLAGS_UNDER_ENGINE = "offload-flags-under-engine"
    TRAINER_OFFLOAD_KEYS_REFUSED = "trainer-offload-keys-refused"
    TRAINER_KEYS_REFUSED = "trainer-keys-refused"
    TRAINER_KEYS_MERGED_REFUSED = "trainer-keys-merged-refused"
    UNKNOWN_KEY_REFUSED = "unknown-key-refused"
    UNKNOWN_KEY = "unknown-key"
    KEY_DROPPED = "key-dropped"
    VERL_KEY_REFUSED = "verl-key-refused"
    VERL_KEY = "verl-key"
    UNKNOWN_ALGORITHM_REFUSED = "unknown-algorithm-refused"
    UNKNOWN_ALGORITHM = "unknown-algorithm"
    ALGORITHM_MODE_REFUSED = "algorithm-mode-refused"
    TRAINER_INPUT_MISSING = "trainer-input-missing"
    NO_SUCH_KEY_REFUSED = "no-such-key-refused"
    DEPRECATED_CONFIG_PATH = "deprecated-config-path"
    CONFIG_PATH_REFUSED = "config-path-refused"
    NOT_FSDP_STRATEGY = "not-fsdp-strategy"
    NOT_FSDP_CRITIC_STRATEGY = "not-fsdp-critic-strategy"
    NOT_FSDP_CRITIC_STRATEGY_REFUSED = "not-fsdp-critic-strategy-refused"
    UNKNOWN_STRATEGY = "unknown-strategy"
    UNKNOWN_STRATEGY_REFUSED = "unknown-strategy-refused"
    MODEL_PATH_OVERWRITTEN = "model-path-overwritten"
    FSDP_SIZE_HYBRID = "fsdp-size-hybrid"
    FSDP_SIZE_MESH = "fsdp-size-mesh"
    FSDP_SIZE_MESH_REFUSED = "fsdp-size-mesh-refused"
    TRAIN_BATCH_REQUIRED = "train-batch-required"
    CRITIC_TRAINED = "critic-trained"
    LORA_COUNTED_AS_FULL = "lora-counted-as-full"
    LORA_TARGETS_SAVED_SPLIT = "lora-targets-saved-split"
    LORA_MOE_CONFIG_UNSAVED = "lora-moe-config-unsaved"
    LORA_MOE_CONFIG_UNSAVED_REFUSED = "lora-moe-config-unsaved-refused"
    LORA_TARGETS_ASSUMED = "lora-targets-assumed"
    LORA_TARGETS_ONE_TRANSFORMERS = "lora-targets-one-transformers"
    LORA_EXCLUDED_ADAPTED = "lora-excluded-adapted"
    CRITIC_BUDGET_ABOVE_VERDICT = "critic-budget-above-verdict"
    CRITIC_BUDGET_RAISED = "critic-budget-raised"
    LOWERED_TOKEN_BUDGET = "lowered-token-budget"
    TOKEN_BUDGET_ABOVE_VERDICT = "token-budget-above-verdict"
    DPO_DOUBLED_ABOVE_VERDICT = "dpo-doubled-above-verdict"
    TOKEN_BUDGET_BELOW_VERDICT = "token-budget-below-verdict"
    ALLOC_CONF_REFUSED = "alloc-conf-refused"
    ALLOC_CONFS_DISAGREE = "alloc-confs-disagree"
    ALLOC_CONF_NEW_NAME = "alloc-conf-new-name"
    ALLOC_CONF_IN_EXPLORER = "alloc-conf-in-explorer"
    CHUNKED_ENTROPY = "chunked-entropy"
    ANCHORED_KEY_CHANGED = "anchored-key-changed"


BUDGET_ABOVE_VERDICT_CODES = frozenset({ConfigProblemCode.TOKEN_BUDGET_ABOVE_VERDICT,
                                        ConfigProblemCode.CRITIC_BUDGET_ABOVE_VERDICT,
                                        ConfigProblemCode.MICRO_BATCH_UNBOUNDED})
"""The `ConfigProblemCode`s of problems that say a config lets a GPU take more tokens than the verdict's budget on
some verl line the release may run, where a setting fits every line (lower the budget or the micro-batch sizes: a
budget of the trainer's or a role's, one only verl before 0.8 reads too, or a trained critic's own, or its
micro-batches of more sequences than the budget holds with dynamic batch sizes off; for a model
trained one padded sequence per micro-batch, ``micro-batch-unbounded``: dynamic batch sizes on, or micro-batches of
more than one sequence, or DPO pair, each padded to the longest, where the verdict counts one, and dynamic batch sizes
off with one each fits every line): the verdict does not vouch for its settings
(`solver.results.CurrentSettings.budget_above_verdict`). Not ``dpo-doubled-above-verdict``, where no size fits both
verl lines: its line says so, and the verdict goes by the memory."""

REFUSED_CONFIG_CODES = frozenset({
    ConfigProblemCode.FLAG_NOT_BOOLEAN_REFUSED, ConfigProblemCode.MISSPELT_KEY_REFUSED,
    ConfigProblemCode.SP_DIVIDES_GPUS, ConfigProblemCode.SP_MODEL_HEADS, ConfigProblemCode.WHOLE_NODES,
    ConfigProblemCode.BATCH_DIVIDES, ConfigProblemCode.PROMPT_RESPONSE_OVER_LENGTH,
    ConfigProblemCode.TRAIN_BATCH_REQUIRED, ConfigProblemCode.TRAINER_OFFLOAD_KEYS_REFUSED,
    ConfigProblemCode.TRAINER_KEYS_REFUSED, ConfigProblemCode.TRAINER_KEYS_MERGED_REFUSED,
    ConfigProblemCode.CONFIG_PATH_REFUSED, ConfigProblemCode.ALLOC_CONF_REFUSED,
    ConfigProblemCode.REF_SP_UNGROUPED_REFUSED, ConfigProblemCode.LORA_CONFIGS_REFUSED,
    ConfigProblemCode.EMPTY_ADAPTER_PATH_REFUSED, ConfigProblemCode.TRAILING_SLASH_REFUSED,
    ConfigProblemCode.LORA_RANK_NOT_A_NUMBER_REFUSED, ConfigProblemCode.LORA_RANK_VLLM_REFUSED,
    ConfigProblemCode.ENGINE_ARGS_LORA_REFUSED, ConfigProblemCode.ENGINE_ARGS_REPEATED_REFUSED,
    ConfigProblemCode.SGLANG_LORA_REFUSED,
    ConfigProblemCode.TYPED_NULL_REFUSED,
    ConfigProblemCode.REF_MODEL_REFUSED, ConfigProblemCode.UNKNOWN_KEY_REFUSED,
    ConfigProblemCode.ROPE_SCALING_MISSING_REFUSED, ConfigProblemCode.ROPE_SCALING_SHORT_REFUSED,
    ConfigProblemCode.ROPE_FACTOR_SKIPPED_REFUSED, ConfigProblemCode.PAST_NATIVE_ON_OWN_SCALING_REFUSED,
    ConfigProblemCode.ROPE_THETA_MISSING_REFUSED,
    ConfigProblemCode.PAST_DERIVED_LENGTH_REFUSED, ConfigProblemCode.UNRESOLVED_VALUE_REFUSED,
    ConfigProblemCode.ROPE_TYPE_MISSING_REFUSED, ConfigProblemCode.ROPE_SCALING_UNBUILT_REFUSED,
    ConfigProblemCode.WRONG_TYPE_REFUSED, ConfigProblemCode.ROLLOUT_LENGTH_REFUSED,
    ConfigProblemCode.MICRO_BATCH_UNSET_REFUSED, ConfigProblemCode.ROLLOUT_ENGINE_MEMORY_REFUSED,
    ConfigProblemCode.NO_SUCH_KEY_REFUSED, ConfigProblemCode.SGLANG_LENGTH_REFUSED,
    ConfigProblemCode.ROLLOUT_TP_HEADS_REFUSED, ConfigProblemCode.ENGINE_NODES_REFUSED,
    ConfigProblemCode.SGLANG_PARALLEL_REFUSED, ConfigProblemCode.VERL_KEY_REFUSED,
    ConfigProblemCode.UNKNOWN_ALGORITHM_REFUSED, ConfigProblemCode.ALGORITHM_MODE_REFUSED,
    ConfigProblemCode.TRAINER_INPUT_MISSING, ConfigProblemCode.LORA_MOE_CONFIG_UNSAVED_REFUSED,
    ConfigProblemCode.DPO_MINI_BATCH_SPLIT_REFUSED, ConfigProblemCode.MINI_BATCH_SPLIT_REFUSED,
    ConfigProblemCode.ROLE_SP_DIFFERS_REFUSED, ConfigProblemCode.NOT_FSDP_CRITIC_STRATEGY_REFUSED,
    ConfigProblemCode.FSDP_SIZE_MESH_REFUSED, ConfigProblemCode.ROLE_SP_BELOW_ONE_REFUSED,
    ConfigProblemCode.UNKNOWN_STRATEGY_REFUSED})
"""The `ConfigProblemCode`s of problems for which Trinity, verl or PyTorch refuse the config whatever its memory (a flag
or a key its typed schema refuses, a role's SP or data-parallel ranks that Trinity checks, nodes, a prompt and
response over the length, a required train batch, keys the release refuses, a key no release's typed section has,
a key under ``trainer.trainer_config`` that Trinity 0.5's typed ``veRLConfig`` lacks, an algorithm type the release's
registry lacks, an offline trainer's (SFT, DPO) in mode train without its dataset's path,
the allocator setting, a ref SP above an actor SP of 1 whose forward verl cannot gather back, LoRA configs Trinity
does not load, an empty LoRA adapter path that Trinity 0.5's worker loads, a path ending in "/" that the worker loads,
a LoRA rank that is no whole number, null in a key Trinity types as no ``Optional``, a ref ``model`` that Trinity
0.5's typed ``Ref`` lacks, a length past the longest the rollout's vLLM derives from the model's config.json with no
``model.rope_scaling``, or past what a given one covers, that vLLM refuses, the rollout model's own length or RoPE
scaling so, a RoPE scaling that vLLM, reading it as given, fails on (its type in ``type`` alone, a key it needs
missing), a micro-batch size that every release leaves verl without with dynamic batch sizes off (or, with them on
too, a critic's value forward beside its whole-batch size, on which its worker fails as it starts), a rollout engine
whose GPUs cannot hold the weights and one sequence's KV cache as vLLM loads it, or whose tensor-parallel size the
model's heads do not allow, an engine across nodes that Trinity 0.6 refuses, or an SGLang engine whose
tensor-parallel size is no multiple of its data-parallel size, LoRA on a mixture of experts whose adapter config
Trinity 0.6 saves cut short, which its explorer's vLLM fails to reload at the first weight sync, a PPO critic's own
SP that verl before 0.8 refuses beside an engine SP on which verl 0.8's engine fails to start, a PPO critic's own
strategy other than FSDP's under an FSDP trainer, with ``--trinity-version 0.5``, whose FSDP critic worker fails on it
as it starts, a role's ``fsdp_size`` that the trainer GPUs do not divide, on which every verl line the release may run
fails as it loads the config or starts, a role's own SP below 1 that Trinity 0.5.0 and 0.5.1 keep and fail on, a
trainer strategy other than fsdp, fsdp2 or megatron on which Trinity before verl 0.8 fails as its trainer starts):
the config as written does not run,
which the verdict says (`solver.results.CurrentSettings.refused`), and ``solve --check`` fails on them as on a
verdict that it does not train. docs/trinity.md lists each code and the Trinity release code that refuses it; a code
that only some releases or verl versions refuse (``deprecated-config-path``, ``flag-not-boolean`` and
``misspelt-key``, under ``trainer.trainer_config`` without Trinity 0.5; ``verl-key`` and ``unknown-algorithm``, which
only some of the releases the run may be refuse; ``batch-divides-trainer-gpus``, which 0.5.2
accepts; ``empty-adapter-path`` and ``trailing-slash``, which Trinity 0.6 on verl 0.8 or later ignores or loads no
adapter from; ``ref-model``, which Trinity 0.6 drops on verl before 0.8; ``typed-null``, a null under
``trainer.trainer_config`` that Trinity 0.6 on verl 0.8 or later reads as false or ignores; ``rope-scaling-missing``,
where no vLLM rollout refuses the length; ``rope-scaling-wrong`` in their place under ``--trinity-version 0.5``,
whose 0.5.0 also takes a vLLM before 0.12; ``micro-batch-unset``, where only some verl versions are left without a
size; ``lora-moe-config-unsaved``, where the release may be 0.5, which transformers 4 saves whole, or the run, in mode
train, never reloads the adapter; ``not-fsdp-critic-strategy``, which Trinity 0.6 on verl 0.8 or later ignores) is not
one."""

REFUSING_BROKEN_RULES = {
    BrokenRuleCode.SP_MODEL_HEADS: "Trinity and verl stop on it as the trainer starts",
    BrokenRuleCode.SP_DIVIDES_GPUS: ("Trinity stops on it as it loads the config on verl before 0.8, PyTorch's device "
                                     "mesh as the trainer starts on 0.8 or later"),
    BrokenRuleCode.WHOLE_NODES: "Trinity stops on it as it loads the config",
    BrokenRuleCode.BATCH_DIVIDES: ("Trinity stops on it as it loads the config on verl before 0.8, verl as it splits "
                                   "the first step's batch over the ranks on 0.8 or later")}
"""The rules that every release the verdict may be for stops on, whatever the memory, where the config's own settings
break them (`broken_rule_refuses`), by `BrokenRuleCode`, with who stops on it, in words: an SP the model's heads do
not suit, which Trinity's ``_check_parallel_config`` refuses as it loads the config (verl before 0.8) and the Ulysses
patch asserts as the trainer builds its model (every verl line); an SP that does not divide the trainer GPUs, which
``_check_parallel_config`` refuses (verl before 0.8) and PyTorch's ``init_device_mesh`` of (GPUs / SP, SP) as verl
0.8's engine builds it; trainer GPUs that span nodes but are not whole nodes, which Trinity's config validator
refuses (every release; docs/trinity.md#json-current); a train batch that the data-parallel ranks (GPUs / SP) do not
divide, which Trinity's ``_check_parallel_config`` refuses (0.5.2, and 0.6.0 on verl before 0.8:
``verl_legacy/verl_config.py:430``) and verl 0.8's split of the first step's batch over the ranks asserts
(``chunk_tensordict``, ``utils/tensordict_utils.py:341`` in verl 0.8.0), or, with 0.5.0 and 0.5.1, that the trainer
GPUs do not divide, which their config validator refuses (``config_validator.py:860`` in 0.5.0). Not
``sp-within-node`` (rft-solver's rule) nor ``sp-model-attention``, on which nothing raises."""

def broken_rule_refuses(code: BrokenRuleCode | None, config_model: str | None, gpus_given: bool,
                        nodes_given: bool, batch_given: bool) -> bool:
    """Whether the rule `code` that a config's settings break refuses the config as written
    (`solver.results.CurrentSettings.refused`): one of `REFUSING_BROKEN_RULES`, judged on what is the config's own,
    not on what the verdict put in its place: its model's heads (no `config_model`, another model's named by --model)
    for ``sp-model-heads``, its GPUs (`gpus_given`, not the budget's) for ``sp-divides-gpus``, and its GPUs and node
    size (`nodes_given`, not --node-gpus' of another size) for ``whole-nodes``, its GPUs and train batch
    (`batch_given`, not --train-batch-size's) for ``batch-divides``."""
    own = {BrokenRuleCode.SP_MODEL_HEADS: config_model is None, BrokenRuleCode.SP_DIVIDES_GPUS: gpus_given,
           BrokenRuleCode.WHOLE_NODES: gpus_given and nodes_given,
           BrokenRuleCode.BATCH_DIVIDES: gpus_given and batch_given}
    return code is not None and own.get(code, False)


class ConfigProblem(NamedTuple):
    """A problem a Trinity config has: its `code` and its `words`, as the text shows them."""

    code: ConfigProblemCode
    words: str


class VllmRollout(NamedTuple):
    """A config's vLLM rollout engine, as far as its memory is checked (`solver.trinity.read_trinity_config` reads it
    from ``explorer.rollout_model``)."""

    tensor_parallel_size: int
    gpu_memory_utilization: float | None
    """vLLM's share of each GPU as the config gives it; None where unset (Trinity's default, 0.9, applies)."""
    value_bytes: int
    """Bytes a weight (and a KV cache value) takes as vLLM loads the ``dtype`` given: 4 for ``float32`` or ``float``,
    else 2 (Trinity's default ``bfloat16``, ``float16``, ``auto``)."""
    max_model_len: int | None
    """The rollout model's own ``max_model_len``; None where unset (Trinity gives it ``model``'s)."""
    lora_rank: int = 0
    """vLLM's ``max_lora_rank`` where the config turns the rollout's LoRA on (``model.lora_configs``, or
    ``enable_lora``), whose slots its engines hold (`solver.memory.vllm_lora_bytes`); 0 with LoRA off."""
    max_loras: int = 1
    """vLLM's ``max_loras``, the LoRA slots of that rank each engine makes: 1 as Trinity starts it, or the config's
    ``extra_engine_args.max_loras`` where it gives vLLM ``enable_lora`` itself."""


DPO_DOUBLED_WORDS = ("the micro-batch size per GPU, 1 where unset, doubled: Trinity on verl before 0.8 doubles the "
                     "actor's and the ref's for DPO, a chosen and a rejected sequence per example")
"""Where a DPO pass's sequences per micro-batch come from, in words (`TrinityConfig.micro_batch_sources`,
`solver.trinity.config.micro_batch_counts`)."""


def legacy_release_words(version: TrinityVersion | None) -> str:
    """The releases of `version` (None: any) that run verl's legacy workers (verl before 0.8), in words."""
    return {"0.5": "Trinity 0.5", "0.6": "Trinity 0.6 on verl before 0.8"}.get(version or "",
                                                                               "Trinity with verl before 0.8")


def legacy_releases_listed(version: TrinityVersion | None) -> str:
    """The releases of `version` (None: any) that run verl's legacy workers, each named, as a sentence's subject:
    with no release given, ``Trinity 0.5, and 0.6 on verl before 0.8,`` (set off by commas, a plural subject)."""
    return legacy_release_words(version) if version else "Trinity 0.5, and 0.6 on verl before 0.8,"


class TrinityConfig(Frozen, defer_build=True):
    """What rft-solver needs from a Trinity-RFT config, interpolations resolved (`solver.trinity.read_trinity_config`
    reads it; it is here, with the query it asks, so that its annotations resolve without ruamel).

    ``trainer_gpus`` (and ``node_gpus``, its ``cluster.gpu_per_node``) is None when the config does not
    say how many GPUs there are; ``rollout_gpus`` counts the explorer's engines (and auxiliary models).
    """

    model: str
    model_path: str | None = None
    """``model.model_path`` as the config gives it (interpolations resolved); ``model`` is its last part."""
    max_model_len: int | None = None
    trainer_gpus: int | None = None
    node_gpus: int | None = None
    rollout_gpus: int = 0
    sp: int = 1
    trainer_sp: int | None = None
    """``trainer.ulysses_sequence_parallel_size`` where the trainer runs at another SP, `sp` (Trinity 0.5 runs it at
    the actor's own): Trinity still fills the unset token budget at it (`default_budget`); None where it is `sp`."""
    actor_sp: int | None = None
    """The actor's own SP where a release the config may be (0.6) runs it at another than `sp` on verl before 0.8
    (``trainer.trainer_config.actor_rollout_ref.actor.ulysses_sequence_parallel_size``): there it raises the actor's
    token budget at it (`raised_actor_budget`); None where it is `sp` or the release is 0.5, which runs `sp` at it."""
    offload: bool = False
    max_token_len_per_gpu: int | None = None
    role_token_budgets: tuple[tuple[str, int], ...] = ()
    """The per-role token budgets the config sets to whole numbers (`ROLE_TOKEN_BUDGETS`): they override the
    trainer's."""
    strategy: str | None = None
    rollout_engine_gpus: int = 1
    """The GPUs of one rollout engine: ``explorer.rollout_model.tensor_parallel_size`` (times Trinity 0.6's
    ``data_parallel_size`` and ``pipeline_parallel_size``, where given); 0 for engines that run elsewhere
    (``engine_type`` tinker or external)."""
    auxiliary_gpus: int = 0
    """The GPUs of ``explorer.auxiliary_models``, part of ``rollout_gpus``."""
    vllm_rollout: VllmRollout | None = None
    """The rollout's vLLM engine, whose memory the verdict checks on each GPU type; None where no vLLM rollout starts
    (``mode: train``, another ``engine_type``, ``engine_num`` 0), or where its weights are split other than by tensor
    parallelism (``pipeline_parallel_size`` above 1, ``enable_expert_parallel``), which is not checked."""
    train_batch_size: int | None = None
    """Experiences per training step; None where the config sets no batch size."""
    train_batch_source: str = TRAIN_BATCH_KEY
    """The keys `train_batch_size` comes from, as messages name them."""
    critic_token_budgets: tuple[tuple[str, int], ...] = ()
    """(key, value) of each of the critic's own token budgets the config sets to a whole number (its training's and
    its value forward's, `solver.trinity.keys.CRITIC_BUDGETS`), read for the notes alone: none where the algorithm
    trains no critic."""
    critic_micro_batch_sequences: int = 0
    """The most sequences a micro-batch of the trained critic's passes holds on a GPU where they run with dynamic batch
    sizes off on some verl line of the releases the config may run on (`solver.trinity.config.critic_rows_sequences`):
    verl reads no critic budget there, so they take up to that many sequences of the length over the critic's SP; 0
    where none does."""
    version: TrinityVersion | None = None
    """The Trinity release the config was read for (None: not known): with 0.5, the actor's and the ref's budgets are
    raised as 0.5.0 raises them, any below ``ceil(2L/SP)`` (`raised_budgets`), the actor's before the rollout's is
    filled from it (`role_budgets`)."""
    ref_sp: int | None = None
    """The ref's SP (its own, else the trainer's) where it is another than `sp` and the ref runs a forward of its own
    (not with LoRA, nor where `ref_forward_runs` is false), the actor's SP groups at `sp`: every release on verl
    before 0.8 (`legacy_words`) sizes the ref's micro-batches at it but runs its forward in the actor's SP groups
    (Trinity 0.6.0's ``verl_legacy/fsdp_workers.py:158-180`` as 0.5.2's ``trainer/verl/fsdp_workers.py:144-166``,
    verl 0.7.1's ``workers/actor/dp_actor.py:72``, ``:467``); else None."""
    lora_ref_sp: int | None = None
    """The ref's SP (its own, else the trainer's) where it is above `sp` and LoRA gives the ref's log-probs on every
    release on verl before 0.8 (`legacy_words`): the actor's log-prob pass, at `sp`, with the ref's budget, which
    Trinity raises at this SP (``compute_log_prob``'s ``config_source``, ``fsdp_workers.py:924`` in 0.5.2,
    ``verl_legacy/fsdp_workers.py:1006`` in 0.6.0; ``_adjust_token_len_if_needed`` at ``verl_legacy/verl_config.py:586``
    in 0.6.0); else None."""
    reference_model: bool = True
    """Whether Trinity (`version`) builds a reference model of its own for this config, whose pinned shards a node's
    host memory holds (`solver.trinity.config.builds_reference_model`)."""
    lora_key: str | None = None
    """The key that turns LoRA on with every release the config may run on (``model.lora_configs``; with `version`
    0.5 any of `solver.trinity.keys.LORA_KEYS`), whose actor without its adapter gives the ref's log-probs, so that
    none builds a reference model (``--reference`` is refused with it), whatever rank `lora_rank` counts; else None
    (`solver.trinity.config.lora_on_every_release`)."""
    lora_rank: int = 0
    """The rank of the new LoRA adapter the config trains with every release it may run on, whose states the verdict
    and the plans count (`solver.trinity.config.counted_lora_rank`); 0 where they count full fine-tuning's."""
    lora_targets: LoraTargets | None = None
    """That adapter's ``target_modules`` regex (and ``exclude_modules``) where it is not ``all-linear`` alone, whose
    modules the verdict and the plans count it on where the model is known (`Query.lora_targets`); None:
    ``all-linear``'s, or no adapter counted (`solver.trinity.config.counted_lora_targets`)."""
    critic: CriticStates | None = None
    """Where the critic the config's algorithm trains keeps its states, as its flags hold them with the releases it
    may run on (`solver.trinity.config.CriticRead`), which the verdict and the plans count unless ``--critic`` says
    otherwise (``--critic none``: none); None where it trains none."""
    critic_held: str = ""
    """Where the critic's flags hold its states, in words, for the note where ``--critic`` asks otherwise: `critic`,
    or where the verl lines a release may run read them apart, each one's (``resident on verl before 0.8 and offloaded
    on verl 0.8 or later``: `solver.trinity.config.critic_held_words`); "" where it trains none."""
    ref_forward_runs: bool = True
    """Whether the trainer computes the ref's log-probs, the one forward that reads the ref's own token budget: not
    for an algorithm that uses no ref. With LoRA it does: the actor without its adapter takes the ref's budget, at
    the actor's SP (``compute_log_prob``'s ``config_source``, ``fsdp_workers.py:924`` in Trinity 0.5.2)."""
    old_log_prob_recompute: bool = False
    """Whether the actor's recompute of the old log-probs may run where it reads the rollout's own token budget and
    micro-batch size, its one pass that does (`solver.trinity.reader.recompute_may_run`): Trinity 0.5, and 0.6 on
    verl before 0.8, run it only with ``rollout_correction.bypass_mode`` false; true, their default, takes the rollout's
    log-probs (``verl_trainer.py:477`` in 0.5.2, ``verl_legacy/verl_trainer.py:531`` in 0.6.0), so false by default, as
    for a config that leaves the key unset. On verl 0.8 or later it reads the trainer's budget, as the actor's update
    does."""

    def pass_runs(self, key: str) -> bool:
        """Whether the pass that reads the token budget `key` (`ROLE_TOKEN_BUDGETS`, dotted) runs, so that the verdict
        counts it: the ref's where its forward runs (`ref_forward_runs`), the rollout's where the old log-prob
        recompute may (`old_log_prob_recompute`), the others always."""
        ref, rollout = (".".join(path) for path in ROLE_TOKEN_BUDGETS[1:])
        return {ref: self.ref_forward_runs, rollout: self.old_log_prob_recompute}.get(key, True)

    micro_batch_sequences: tuple[tuple[str, int], ...] = ()
    """(key, sequences) of each role's token budget (`ROLE_TOKEN_BUDGETS`) whose passes run with dynamic batch sizes
    off on every release (`solver.trinity.sequence_counted_roles`): verl reads no budget there, and fills each
    micro-batch on a GPU with that many sequences, its micro-batch size (`ROLE_MICRO_BATCH_SIZES`; the rollout's, unset,
    the actor's; 1 where unset, as Trinity before verl 0.8 gives it; doubled for DPO, or a deprecated size for the
    whole batch over the data-parallel ranks: `micro_batch_sources`), so its budget in effect is that many sequences
    of the length over the SP its pass splits them over (`role_budgets_in_effect`, `sequence_pass_sp`)."""
    micro_batch_sequences_050: tuple[tuple[str, int], ...] | None = None
    """`micro_batch_sequences` as Trinity 0.5 reads the roles' own dynamic batch size flags, where that differs (a
    role's own flag off while the trainer's is on, with no release named: Trinity 0.6 on verl 0.8 or later gives it
    the trainer's), for `budget_in_effect_on_050`; None where it is `micro_batch_sequences`."""
    micro_batch_sources: tuple[tuple[str, str], ...] = ()
    """(key, words) of each of `micro_batch_sequences` whose sequences are not the micro-batch size per GPU as written
    (`solver.trinity.config.micro_batch_counts`): where they come from, in words (Trinity doubles the actor's and the
    ref's for DPO; a deprecated size for the whole batch over the data-parallel ranks)."""
    dpo: bool = False
    """Whether the config trains DPO (``algorithm.algorithm_type: dpo``), whose plans count a pair of padded sequences
    per micro-batch for a model trained one per micro-batch (`Query.dpo`)."""
    memory_unread: tuple[str, ...] = ()
    """The keys that decide how many tokens a pass takes per GPU that cannot be read here (an interpolation of an
    environment variable this shell lacks: `solver.trinity.config.memory_unread_keys`; the verdict's ``unread_keys``
    adds those that decide whether a pass fails, `solver.trinity.checks.forward_unread_keys`), dotted: with any,
    whether the config's settings train is unknown."""
    memory_unread_padded: tuple[str, ...] = ()
    """`memory_unread` for a model trained one padded sequence per micro-batch
    (`solver.rules.one_sequence_per_micro_batch`): its dynamic batch size keys too where their values change which of
    its passes run with them on, which no token budget bounds (each padded micro-batch holds sequences by their own
    lengths)."""
    dpo_update_in_rows: bool = False
    """Whether the config trains DPO (`dpo`) with the actor's update run with dynamic batch sizes off on some release
    it may run on (`solver.trinity.reader.actor_update_in_rows`): its micro-batches hold rows, one pair as ``--write``
    writes them (`solver.rules.DPO_PAIR_SIZES`), up to Trinity's default token budget, and read no budget. A DPO
    config's plans are at that default either way (`check_dpo_budget_unread`): where this is false, ``--write`` turns
    the actor's dynamic batch sizes off, which on split its pairs (`solver.trinity.plan_keys.keys_for_plan`); this
    words what the config does as written."""
    mode_train: bool = False
    """Whether the config's ``mode`` is ``train`` (unset, Trinity's is ``both``), the one mode Trinity trains DPO on a
    dataset in (`Query.mode_train`)."""
    remove_padding: bool = True
    """Whether ``actor_rollout_ref.model.use_remove_padding`` is on (Trinity 0.5's worker reads it for the actor and
    the ref; on by default): off, verl splits none of the ref's micro-batches over SP, so each GPU takes them whole."""
    environment: tuple[tuple[str, str], ...] = ()
    """(name, value) of each environment variable set in the shell that read the config whose value an
    interpolation in a key rft-solver read took (``${oc.env:NGPUS,8}``): the plan was made with them, so the command
    that checks a config as it was planned sets them, with those the check reads (`solver.trinity.check_environment`,
    `solver.trinity.check_command`)."""
    notes: tuple[str, ...] = ()
    """What the reader noticed that the verdict on these settings does not show: Offload flags that do not
    all agree, or that the strategy ignores; a verl config kept in another file."""
    note_codes: tuple[ConfigProblemCode, ...] = ()
    """The code of each of `notes`, in the same order (`ConfigProblemCode`)."""

    @model_validator(mode="after")
    def _one_code_per_note(self) -> TrinityConfig:
        """Refuse notes without a code each (a verdict pairs every note with its code)."""
        if len(self.note_codes) != len(self.notes):
            raise ValueError(f"{len(self.note_codes)} note_codes for {len(self.notes)} notes: give one code per note")
        return self

    @property
    def legacy_words(self) -> str:
        """The releases of `version` that run verl's legacy workers (verl before 0.8), in words
        (`legacy_release_words`)."""
        return legacy_release_words(self.version)

    def default_budget(self, max_model_len: int) -> int:
        """What Trinity fills an unset ``trainer.max_token_len_per_gpu`` with at `max_model_len`: ``ceil(2L/sp)`` at
        the trainer's own SP (`trainer_sp`, else `sp`)."""
        return token_budget(max_model_len, self.trainer_sp or self.sp)

    def followed_budgets(self) -> tuple[str, ...]:
        """The token budget keys (`TRAINER_TOKEN_BUDGET`, `role_token_budgets`) set to the value Trinity gives them
        unset at the config's own length and SP: the trainer's at its default (`default_budget`), a role's at the one
        it is filled from (`role_budgets`). Such a key, as ``--write`` writes one, is the default written out, no limit
        of the user's: at another length it follows the default, as the unset key would (`budget_in_effect`). None
        without a length."""
        if self.max_model_len is None:
            return ()
        default = self.default_budget(self.max_model_len)
        trainer = self.max_token_len_per_gpu or default
        followed = (TRAINER_TOKEN_BUDGET,) if self.max_token_len_per_gpu == default else ()
        given = dict(self.role_token_budgets)
        raised = self.raised_budgets(self.max_model_len)
        return followed + tuple(key for key, budget in self.role_token_budgets if budget == role_budgets(
            trainer, {k: v for k, v in given.items() if k != key}, raised)[key])

    def own_budgets(self) -> dict[str, int]:
        """The token budget keys (`TRAINER_TOKEN_BUDGET`, `role_token_budgets`) that set a limit of the user's, by key:
        a key that only writes out the default at the config's own length (`followed_budgets`) counts as unset."""
        followed = self.followed_budgets()
        written = ((TRAINER_TOKEN_BUDGET, self.max_token_len_per_gpu), *self.role_token_budgets)
        return {key: budget for key, budget in written if budget is not None and key not in followed}

    def role_budgets_in_effect(self, max_model_len: int, planned: bool = False, *, raised: bool = True
                               ) -> dict[str, int]:
        """Each role's token budget at `max_model_len` (`role_budgets`, by dotted key): its own (`own_budgets`), else
        the trainer's, else the one Trinity fills it with (`default_budget`); where it reads none
        (`micro_batch_sequences`), its sequences' tokens per GPU at the actor's SP. The actor's and the ref's raised
        as `raised_budgets` says (`planned`: for a plan's cap), unless not `raised` (as Trinity fills them, before
        it raises any)."""
        own = self.own_budgets()
        trainer = own.pop(TRAINER_TOKEN_BUDGET, None) or self.default_budget(max_model_len)
        budgets = role_budgets(trainer, own, self.raised_budgets(max_model_len, planned) if raised else None)
        return budgets | {key: sequences * least_token_budget(max_model_len, self.sequence_pass_sp(key))
                          for key, sequences in self.micro_batch_sequences}

    def undoubled_sequences(self, key: str) -> int:
        """The sequences per micro-batch of the pass of the token budget `key` among `micro_batch_sequences` on Trinity
        0.6 with verl 0.8 or later, which doubles none for DPO: half the count where Trinity on verl before 0.8 doubles
        it (`DPO_DOUBLED_WORDS`), else the count."""
        sequences = dict(self.micro_batch_sequences)[key]
        return sequences // 2 if dict(self.micro_batch_sources).get(key) == DPO_DOUBLED_WORDS else sequences

    def sequence_pass_sp(self, key: str) -> int:
        """The SP over which the pass of the token budget `key` that runs with dynamic batch sizes off
        (`micro_batch_sequences`) splits each micro-batch: the actor's (`sp`), its SP groups' (Trinity 0.5's worker
        builds them from the actor's SP, ``fsdp_workers.py:136`` in 0.5.0), but 1 for the ref's where a release on verl
        before 0.8 runs it at its own SP 1 (`ref_sp`; Trinity 0.6 on verl 0.8 or later at `sp`, fewer tokens): verl
        0.7 slices a role's micro-batch only where that role's own SP is above 1
        (``workers/actor/dp_actor.py:72-73``, ``:167`` in 0.7.0), so each GPU takes the ref's whole. Above 1, the
        ref's is sliced over the actor's groups (``utils/ulysses.py:117-130``: padded to the ref's SP, cut into the
        group's size), so each GPU takes its share at the actor's SP."""
        return 1 if key == ".".join(ROLE_TOKEN_BUDGETS[1]) and self.ref_sp == 1 else self.sp

    def budget_in_effect(self, max_model_len: int, planned: bool = False, *, raised: bool = True) -> int:
        """The most tokens per GPU any role takes at `max_model_len` (`role_budgets_in_effect`, `planned` for a plan's
        cap, `raised` unless as Trinity fills them): of the passes that run (`pass_runs`)."""
        return max(budget for role, budget in self.role_budgets_in_effect(max_model_len, planned, raised=raised).items()
                   if self.pass_runs(role))

    def budget_in_effect_keys(self, max_model_len: int, planned: bool = False) -> tuple[str, ...]:
        """The dotted keys that set the token budget in effect at `max_model_len` (`budget_in_effect`, `planned` for a
        plan's cap): the one each
        role taking that many tokens per GPU fills its budget from (`role_budget_sources`: its own, the trainer's,
        the actor's for the rollout), each once, in `ROLE_TOKEN_BUDGETS`' order; none for a role that reads no budget
        (`micro_batch_sequences`: `budget_in_effect_sequences`)."""
        sources = role_budget_sources(self.own_budgets())
        sequences = dict(self.micro_batch_sequences)
        return tuple(dict.fromkeys(sources[role] for role in self._roles_in_effect(max_model_len, planned)
                                   if role not in sequences))

    def budget_in_effect_sequences(self, max_model_len: int, planned: bool = False) -> tuple[int, ...]:
        """The sequences per micro-batch of each role that takes the token budget in effect at `max_model_len`
        (`budget_in_effect`) with dynamic batch sizes off (`micro_batch_sequences`): its figure comes from them, not
        from a budget key; each count once, in `ROLE_TOKEN_BUDGETS`' order."""
        sequences = dict(self.micro_batch_sequences)
        return tuple(dict.fromkeys(sequences[role] for role in self._roles_in_effect(max_model_len, planned)
                                   if role in sequences))

    def _roles_in_effect(self, max_model_len: int, planned: bool = False) -> list[str]:
        """The roles (token budget keys, dotted) that take the token budget in effect at `max_model_len`
        (`budget_in_effect`, `planned` for a plan's cap): of the passes that run (`pass_runs`); those that take it as
        set where any does, else those raised to it (`raised_budgets`)."""
        most = self.budget_in_effect(max_model_len, planned)
        roles = [role for role, budget in self.role_budgets_in_effect(max_model_len, planned).items()
                 if budget == most and self.pass_runs(role)]
        as_set = self.role_budgets_in_effect(max_model_len, planned, raised=False)
        return [role for role in roles if as_set[role] == most] or roles

    def raised_budgets(self, max_model_len: int, planned: bool = False) -> dict[str, int]:
        """The budgets Trinity raises the actor's and the ref's token budgets (`ROLE_TOKEN_BUDGETS`, by dotted key) to
        where they are below them at `max_model_len` (`raised_at`; ``_adjust_token_len_if_needed``, called for the
        actor, the ref and the critic alike in ``synchronize_config``: ``common/verl_config.py:542``, ``:564`` in 0.5.0,
        ``trainer/verl/verl_config.py:555``, ``:578`` in 0.5.2, ``verl_legacy/verl_config.py:563``, ``:586`` in
        0.6.0; the critic's is `raised_critic_budget`), the actor's before the rollout's is filled from it; none for
        a release that raises none as counted (`raised_actor_budget`). The ref's is raised at its own SP
        (`ref_raise_sp`), in the verdict alone: in a plan's cap (`planned`), one number at the actor's SP, as a plan
        sets the roles' SP alike, the ref's raise there would be the actor's least, which never sets the cap."""
        actor = self.raised_actor_budget(max_model_len, planned)
        if actor is None:
            return {}
        raised = {".".join(ROLE_TOKEN_BUDGETS[0]): actor}
        if not planned:
            raised[".".join(ROLE_TOKEN_BUDGETS[1])] = raised_at(self.version, max_model_len, self.ref_raise_sp)
        return raised

    def budget_in_effect_on_050(self, max_model_len: int) -> int:
        """The most tokens per GPU any pass takes at `max_model_len` on Trinity 0.5.0 (`budget_in_effect` as with 0.5,
        which counts 0.5.0's raise, `raised_budgets`): ``_adjust_token_len_if_needed`` raises each role's budget
        below ``ceil(2L/SP)`` whatever its dynamic batch size flag (``common/verl_config.py:542``, ``:564``, ``:595``),
        but a pass with them off on 0.5 reads none (`micro_batch_sequences_050`, else `micro_batch_sequences`:
        ``trainer/verl/dp_actor.py:103`` fills its micro-batches by count), so the raise reaches only the passes with
        them on."""
        sequences = self.micro_batch_sequences if self.micro_batch_sequences_050 is None else (
            self.micro_batch_sequences_050)
        return self.model_copy(update={"version": "0.5", "micro_batch_sequences": sequences}).budget_in_effect(
            max_model_len)

    def key_raised_to(self, key: str, budget: int, max_model_len: int) -> int | None:
        """The budget the verdict at `max_model_len` counts the budget key `key`, at `budget`, raised to, where it sets
        the actor's or the ref's budget (`role_budget_sources`, of passes that run: `pass_runs`) and is below that
        role's raise (`raised_budgets`: with 0.5, 0.5.0's, which raises a budget that holds a sequence too); the most
        of the roles it sets. None where none raises it."""
        sources = role_budget_sources(self.own_budgets())
        raised = [least for role, least in self.raised_budgets(max_model_len).items()
                  if sources[role] == key and budget < least and self.pass_runs(role)]
        return max(raised, default=None)

    @property
    def ref_raise_sp(self) -> int:
        """The SP at which Trinity raises the ref's token budget, the ref's own (`ref_sp`, or with LoRA
        `lora_ref_sp`) where known to differ from the actor's, else the actor's (`sp`)."""
        return self.lora_ref_sp or self.ref_sp or self.sp

    def raised_actor_budget(self, max_model_len: int, planned: bool = False) -> int | None:
        """The budget Trinity raises an actor's budget below it to at `max_model_len` before the rollout's is
        filled from it (``_adjust_token_len_if_needed``, then ``synchronize_config``'s rollout fill), as counted for
        the release named, `version`. With 0.5, in the verdict, 0.5.0's ``ceil(2L/SP)``, the most any 0.5 release
        gives, any budget below it (0.5.1 and 0.5.2 raise one that holds no sequence to ``ceil(L/SP)`` and keep the
        rest): the verdict bounds memory from above
        (`raised_at`); in a plan's cap (`planned`), the least they give, ``ceil(L/SP)`` (`RAISED_CAP_WORDS`), so that
        a plan raises the budget of no 0.5 release (0.5.0 raises the plan's back to its default, as the plan's
        caution says: `solver.results.lowered_budget_undone`). With 0.6, whose raise and fill depend on verl, only
        where `planned` (a plan's cap, `solver.api`'s ``_config_budget_mode``): on verl before 0.8 it raises the
        actor's to ``ceil(L/SP)`` at the actor's own SP (`actor_sp`, else `sp`; ``verl_legacy/verl_config.py:469``
        in 0.6.0) and fills the rollout's from it; on verl 0.8 or later it ignores both and runs every pass at the
        trainer's budget, which a plan writes, at the most the cap; so the cap is the raised budget, as each verl
        runs the plan at it. With no release named, where `planned`, the least any release raises it to:
        ``ceil(L/SP)`` at the actor's own SP, as 0.5.1, 0.5.2 and 0.6 on verl before 0.8 do (0.5 runs the actor's
        SP as `sp`, `actor_sp` beside it here). Not for the config's own settings with 0.6 or none, whose roles'
        budgets below a sequence are judged at Trinity's default, as verl 0.8 or later runs them. None
        otherwise."""
        if planned:
            return least_token_budget(max_model_len, self.actor_sp or self.sp)
        if self.version != "0.5":
            return None
        return raised_at(self.version, max_model_len, self.sp)

    def raised_critic_budget(self, max_model_len: int, critic_sp: int) -> int:
        """The budget Trinity on verl before 0.8 raises the critic's own token budget below it to at `max_model_len`
        and the critic's SP, `critic_sp` (``_adjust_token_len_if_needed``: ``common/verl_config.py:595``
        in 0.5.0, ``trainer/verl/verl_config.py:610`` in 0.5.2, ``verl_legacy/verl_config.py:617`` in 0.6.0), as
        counted for the release named (`raised_at`: 0.5.0's raise with 0.5); its value forward's is filled from it
        after that (`solver.trinity.keys.FORWARD_BUDGETS`)."""
        return raised_at(self.version, max_model_len, critic_sp)


def raised_at(version: TrinityVersion | None, max_model_len: int, sp: int) -> int:
    """The budget Trinity on verl before 0.8 raises a token budget below it to at `max_model_len` and `sp`
    (``_adjust_token_len_if_needed``: a budget times SP below ``required_min`` becomes ``ceil(required_min / SP)``, so
    the bound and the raise are one number), as a verdict counts it for the release named, `version`: with 0.5 (any
    patch: `TrinityConfig` carries the minor version alone) 0.5.0's ``ceil(2L/SP)`` (``required_min = max_model_len *
    2``, ``common/verl_config.py:466-469``), the most any 0.5 release gives, which bounds memory from above: 0.5.0
    raises a budget that holds a sequence too; else ``ceil(L/SP)``, which 0.5.1, 0.5.2 and 0.6.0 raise a budget that
    holds no sequence to (``required_min = max_model_len``) and, at the least, every release does."""
    return token_budget(max_model_len, sp) if version == "0.5" else least_token_budget(max_model_len, sp)


def role_budget_sources(own: Collection[str]) -> dict[str, str]:
    """The key each role's token budget (`ROLE_TOKEN_BUDGETS`, by dotted key) comes from as Trinity fills it: its own
    where the config sets it (in `own`), else the trainer's (`TRAINER_TOKEN_BUDGET`), but the rollout's (the actor's
    log-prob recompute) the actor's (Trinity's ``synchronize_config``)."""
    actor, ref, rollout = (".".join(path) for path in ROLE_TOKEN_BUDGETS)
    sources = {role: role if role in own else TRAINER_TOKEN_BUDGET for role in (actor, ref)}
    return sources | {rollout: rollout if rollout in own else sources[actor]}


def role_budgets(trainer: int, own: dict[str, int], raised: Mapping[str, int] | None = None) -> dict[str, int]:
    """Each role's token budget (`ROLE_TOKEN_BUDGETS`, by dotted key) as Trinity fills it (`role_budget_sources`):
    its `own` where set, else the trainer's budget `trainer`, but the rollout's the actor's, after each role's in
    `raised` (the actor's and the ref's: `TrinityConfig.raised_budgets`) is raised to its figure there where below it
    (Trinity raises the actor's before the rollout takes it; the rollout's own it never raises)."""
    actor, _, rollout = (".".join(path) for path in ROLE_TOKEN_BUDGETS)
    budgets = {TRAINER_TOKEN_BUDGET: trainer, **own}
    filled = {role: budgets[source] for role, source in role_budget_sources(own).items()}
    for role, least in (raised or {}).items():
        filled[role] = max(filled[role], least)
    if rollout not in own:  # it takes the actor's, as raised
        filled[rollout] = filled[actor]
    return filled


_Params = ParamSpec("_Params")
_Result = TypeVar("_Result")


def keywords_told(function: Callable[_Params, _Result]) -> Callable[_Params, _Result]:
    """`function`, a keyword argument it lacks refused as Python refuses it, a `TypeError` naming `function`
    (``plan() got an unexpected keyword argument 'gpus'``), with the keyword it likely meant (`keyword_meant`: the
    command's flag's, `` (--gpus is budget_gpus here: ...)``)."""
    keywords = tuple(signature(function).parameters)

    @wraps(function)
    def unknown_keyword_refused(*args: _Params.args, **kwargs: _Params.kwargs) -> _Result:
        """`function` called with `args` and `kwargs`, after a `TypeError` for a keyword it lacks."""
        unknown = next((name for name in kwargs if name not in keywords), None)
        if unknown is not None:
            raise TypeError(f"{function.__name__}() got an unexpected keyword argument {unknown!r}"
                            f"{keyword_meant(unknown, kwargs[unknown], keywords)}")
        return function(*args, **kwargs)
    return unknown_keyword_refused


@keywords_told
def make_query(
    catalog: Catalog,
    *,
    model: str,
    gpu: GpuNames = None,
    objective: Objective = "cheapest",
    budget_gpus: int | None = None,
    exact: bool = False,
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
    token_budget: TokenBudgetMode | int | str = "default",
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
    lora_rank: int = 0,
    critic: CriticChoice | None = None,
    dpo: bool = False,
    lora_targets: str | None = None,
    lora_exclude_modules: str | None = None,
    lora_targets_source: str | None = None,
) -> Query:
    """Resolve names and check that the request makes sense; `QueryError` (one line) when it does not.

    `gpu`: the GPU types to answer for, as `asked_gpus` takes them (one answer each, in their order).
    `budget_gpus` defaults, where the objective allows, to the largest documented GPU count of those GPU types (one
    node where none has tables), one budget for them all; for the fewest GPUs, to `MAX_ESTIMATED_GPUS`.
    `node_gpus` (None: 8) is the node size: a trainer on more GPUs uses whole nodes and keeps each SP
    group in one node; a refusal's nearest plan keeps to a size given (`Query.node_gpus_given`); messages say it came
    from `node_source` (and `host_ram_gb` from `host_ram_source`, an
    `exact` count from `exact_source`; each None: the option `option_names` names, the API's keywords by default,
    `solver.rules.COMMAND_OPTIONS` for the command's flags, as the answers' reasons and cautions then name every
    option).
    With `rollout_gpus`, the trainer's count
    leaves them a `rollout_layout`: trainer and rollout in one node; the trainer in part of a node and the
    rollout filling it and whole nodes more; or the trainer on whole nodes and the rollout on the nodes
    after them. With `train_batch_size` (experiences per step; messages say it came from `train_batch_source`),
    the data-parallel ranks (GPUs / SP) divide it; with `trinity_version` 0.5.0 or 0.5.1 (as `trinity_release` reads
    it) the trainer GPUs too, which those releases need (`Query.batch_divisor`); with 0.5 alone, a plan whose GPUs do
    not divide it says that Trinity 0.5.0 and 0.5.1 refuse it.
    `total_gpus` (in place of `budget_gpus`, with `rollout_gpus`) counts the trainer's and the rollout's GPUs together:
    the trainer's budget is what the rollout leaves of them (`total_budget`). `reference_model` false leaves the
    reference model's pinned shards out of the host memory need (a run that builds none: `Query.reference_model`);
    None: none with LoRA (Trinity then takes the actor without its adapter as the reference), else counted.
    `lora_rank` above 0 plans a LoRA run of that rank (`Query.lora_rank`), its adapter on `lora_targets`' modules
    (`given_lora_targets`; None: ``all-linear``'s), less those the ``exclude_modules`` regex `lora_exclude_modules`
    matches (``--lora-exclude``, a cluster job's; None: none), messages naming `lora_targets` as
    `lora_targets_source` (``the config's target_modules``, where they are a config's own; None: the option);
    `critic` one with a PPO critic
    (`Query.critic`; ``"none"``, as ``--critic none``, and None: none). `dpo` plans a DPO run (`Query.dpo`), which
    counts no critic and, without LoRA, a reference model (`check_dpo`).
    """
    budget_asked: TokenBudgetMode | int
    critic, estimate, budget_asked = run_choices(critic, estimate, token_budget)  # "Resident", "16k": as --critic
    asked_len: int | None = asked_length(max_model_len)  # "64k", as a Job's and a cluster file's: `asked_tokens`
    check_run_options(option_names, lora_rank=lora_rank, reference_model=reference_model, critic=critic, dpo=dpo,
                      estimate=estimate, trinity_version=trinity_version, token_budget=budget_asked,
                      time_limit_s=time_limit_s, margin=margin, host_ram_gb=host_ram_gb, node_gpus=node_gpus,
                      train_batch_size=train_batch_size, workers=workers, memory=memory)
    reference_model = counts_reference(reference_model, lora_rank)
    node_source = node_source if node_source is not None else option_names.node_gpus
    host_ram_source = host_ram_source if host_ram_source is not None else option_names.host_ram
    exact_source = exact_source if exact_source is not None else option_names.exact
    train_batch_source = train_batch_source if train_batch_source is not None else option_names.train_batch
    check_types(("catalog", catalog, Catalog), ("budget_gpus", budget_gpus, int | None), ("exact", exact, bool),
                ("max_model_len", asked_len, int | None), ("sp", sp, int | None), ("env", env, bool | None),
                ("offload", offload, bool | None), ("top", top, int), ("weights", weights, Weights | None),
                ("seed", seed, int),
                ("node_source", node_source, str), ("host_ram_source", host_ram_source, str),
                ("exact_source", exact_source, str),
                ("rollout_gpus", rollout_gpus, int | None), ("total_gpus", total_gpus, int | None),
                ("train_batch_source", train_batch_source, str))
    objective = chosen("objective", objective, get_args(Objective))  # "Max_Len": as --maximize Len
    release = trinity_release("trinity_version", trinity_version)
    check_seed(seed)
    resolved = catalog.model(model)
    check_token_budget_read(budget_asked, resolved, option_names)
    check_types(("lora_targets_source", lora_targets_source, str | None))
    targets = given_lora_targets(lora_targets, lora_rank, resolved, counted_expert_layout(trinity_version),
                                 option_names, lora_exclude_modules, lora_targets_source)
    gpu_names = asked_gpus(catalog, gpu)
    memory = memory if memory is not None else load_memory_model()
    names = option_names
    check_counts((names.budget, budget_gpus, MAX_GPUS), (names.length, asked_len, MAX_TOKENS),
                 (names.named("sp"), sp, MAX_GPUS), (names.named("top"), top, MAX_TOP))
    if rollout_gpus is not None and not 0 <= rollout_gpus <= MAX_GPUS:  # 0: no rollout GPUs beside the trainer
        raise QueryError(f"{names.rollout_gpus} must be a whole number from 0 to {MAX_GPUS}, got "
                         f"{brief(rollout_gpus)}")
    check_dpo_rollout(dpo, rollout_gpus, names)
    node_gpus_given = node_gpus is not None
    node_gpus = node_gpus if node_gpus is not None else NODE_GPUS
    if total_gpus is not None:
        budget_gpus = total_budget(total_gpus, budget_gpus, rollout_gpus, node_gpus, node_source, option_names)
    _check_objective(objective, budget_gpus, asked_len, exact, names)
    if sp is not None:
        check_sp(resolved, sp, budget_gpus if exact else None, budget_gpus, node_gpus, node_source, names)
    budget, open_budget = _budget(catalog, gpu_names, objective, budget_gpus)
    mode, cap = token_budget_mode_and_cap(budget_asked, estimate)
    return Query(model=resolved.name, gpus=gpu_names, objective=objective, budget_gpus=budget, open_budget=open_budget,
                 exact=exact, exact_source=exact_source, max_model_len=asked_len, sp=sp, env=env, offload=offload,
                 top=top, weights=weights if weights is not None else load_weights(), time_limit_s=time_limit_s,
                 workers=workers, seed=seed, estimate=estimate, memory=memory, margin=margin,
                 token_budget=mode, token_budget_cap=cap, host_ram_gb=host_ram_gb, node_gpus=node_gpus,
                 node_source=node_source, node_gpus_given=node_gpus_given, host_ram_source=host_ram_source,
                 rollout_gpus=rollout_gpus,
                 total_gpus=total_gpus,
                 train_batch_size=train_batch_size, train_batch_source=train_batch_source, trinity_version=release,
                 trinity_release=release_name(trinity_version),
                 expert_layout=counted_expert_layout(trinity_version),
                 batch_divisor=counted_batch_divisor(trinity_version),
                 reference_model=reference_model, lora_rank=lora_rank, lora_targets=targets,
                 critic=counted_critic(critic), dpo=dpo, option_names=option_names)


def run_choices(critic: Any, estimate: Any, token_budget: Any) -> tuple[Any, Any, Any]:
    """`critic`, `estimate` and `token_budget` as the command reads its choices, in any case (``"Resident"``,
    ``"Never"``: `folded_choice`), the token budget as `asked_token_budget`; any other value as it is, for
    `check_run_options` to judge."""
    return (folded_choice(critic, CRITIC_CHOICES), folded_choice(estimate, get_args(EstimateMode)),
            asked_token_budget(token_budget))


def asked_token_budget(token_budget: Any) -> Any:
    """A token budget as ``--token-budget`` reads it: a mode in any case (``"Auto"``), or a cap in thousands of 1024
    (``"16k"``: 16384, as ``max_model_len="16k"`` is read, `asked_length`, which refuses ``"-2k"`` as written: text
    reaches here from the API alone, whose keyword it names); any other value as it is, for `check_token_budget` to
    judge."""
    return folded_choice(asked_length(token_budget, "token_budget"), get_args(TokenBudgetMode))


def check_run_options(option_names: OptionNames, *, lora_rank: int, reference_model: bool | None,
                      critic: CriticChoice | None, dpo: bool, estimate: EstimateMode, trinity_version: str | None,
                      token_budget: TokenBudgetMode | int, time_limit_s: float, margin: float | None,
                      host_ram_gb: float | None, node_gpus: int | None, train_batch_size: int | None,
                      workers: int, memory: MemoryModel | None) -> None:
    """`QueryError` (one line, naming the options as `option_names` do) where options that every query of a run
    shares, whatever its model, GPU type, budget and length, refuse it, as `make_query` checks them first: the run's
    kind (`lora_rank`, `reference_model`, `critic`, `dpo`: `check_dpo`), the `estimate` mode, the `trinity_version`,
    the `token_budget`, the time limit, the `margin`, a node's host memory (`host_ram_gb`: `check_host_ram`) and GPUs
    (`node_gpus`), the `train_batch_size`, the `workers` and the `memory` model. A map (`solver.map_plans`) checks
    them once, before any cell."""
    check_types(("option_names", option_names, OptionNames), ("reference_model", reference_model, bool | None),
                ("lora_rank", lora_rank, int), ("dpo", dpo, bool), ("workers", workers, int),
                ("host_ram_gb", host_ram_gb, float | None), ("node_gpus", node_gpus, int | None),
                ("train_batch_size", train_batch_size, int | None), ("memory", memory, MemoryModel | None))
    check_lora_rank(lora_rank)
    check_reference_with_lora(reference_model, lora_rank, option_names)
    check_critic(option_names.named("critic"), critic)
    check_dpo(dpo, critic, reference_model, lora_rank, option_names)
    check_choice("estimate", estimate, get_args(EstimateMode))
    trinity_release("trinity_version", trinity_version)
    check_reference_for_release(reference_model, lora_rank, trinity_version, option_names)
    check_token_budget(token_budget, estimate, option_names, caps=True)
    check_time_limit(time_limit_s)
    check_margin(margin, option_names)
    check_host_ram(host_ram_gb, option_names)
    check_node_gpus(node_gpus, option_names.node_gpus)
    check_counts((option_names.named("workers"), workers, MAX_WORKERS),
                 (option_names.train_batch, train_batch_size, MAX_TRAIN_BATCH))


def check_token_budget_read(token_budget: TokenBudgetMode | int, model: Model, option_names: OptionNames) -> None:
    """`QueryError` where a cap of `token_budget` tokens per GPU is given for `model`, which trains one padded
    sequence per micro-batch (`one_sequence_per_micro_batch`) and so reads no token budget."""
    if isinstance(token_budget, int) and one_sequence_per_micro_batch(model):
        budget_name = token_budget_name(option_names)
        raise QueryError(f"{budget_name} {token_budget}: {model.name} trains one padded sequence per micro-batch, "
                         f"which reads no token budget: leave {budget_name} out")


def check_dpo_budget_unread(token_budget: TokenBudgetMode | int | None, config: TrinityConfig | None, model: Model,
                            names: OptionNames, dpo: bool = False, budget_name: str | None = None) -> None:
    """`QueryError` where a token budget other than the default (`token_budget`: a cap, or ``auto``, which lowers
    budgets) is asked of the plans for a `config` that trains DPO (`TrinityConfig.dpo`: its actor's update run with
    dynamic batch sizes off, `TrinityConfig.dpo_update_in_rows`, or on, which ``--write`` turns off), or, without a
    config (None), for a `dpo` run, whose Trinity keys turn them off (Trinity's default, on, splits the pairs:
    `solver.trinity.plan_keys.turns_dpo_rows`): verl reads no
    budget there, and each micro-batch holds one pair, a chosen and a rejected sequence of up to the length each (the
    size ``--write`` and the keys write, `solver.rules.DPO_PAIR_SIZES`): Trinity's default budget,
    ``ceil(2 x max_model_len / SP)`` tokens per GPU, which the plans count; a lower one would count fewer tokens than
    the pair holds. Not for a `model` trained one padded sequence per micro-batch, whose plans count the pair whatever
    the budget (`check_token_budget_read`). `budget_name`: the option that gave the budget, where not the token
    budget's (`token_budget_name`): ``solve memory``'s ``--token-budget`` is `estimate_memory`'s
    ``max_token_len_per_gpu``."""
    in_rows = config.dpo if config is not None else dpo
    if in_rows and token_budget not in (None, "default") and not one_sequence_per_micro_batch(model):
        budget_name = budget_name if budget_name is not None else token_budget_name(names)
        how = ("the config trains DPO with dynamic batch sizes off in the actor's update"
               if config is not None and config.dpo_update_in_rows else
               "the config trains DPO, and what is made from it runs the actor's update with dynamic batch sizes "
               "off (on, they split its pairs)" if config is not None else
               f"{_dpo_said(names, None)} runs with dynamic batch sizes off in the actor's update, as its Trinity "
               "keys write (on, they split DPO's pairs)")
        raise QueryError(f"{names.valued(budget_name, token_budget)}: {how}, which reads no token budget: each "
                         "micro-batch holds one pair, a chosen and a rejected sequence, which the plans count at "
                         f"Trinity's default budget, ceil(2 x max_model_len / SP) tokens per GPU: leave {budget_name} "
                         "out")


def given_lora_targets(targets: str | None, lora_rank: int, model: Model, experts: ExpertLayout,
                       names: OptionNames, excluded: str | None = None,
                       source: str | None = None) -> LoraTargets | None:
    """The LoRA targets an option gives (`targets`: None, not given; `LORA_TARGETS_FORMS`), less the modules the
    ``exclude_modules`` regex `excluded` (``--lora-exclude``, a cluster job's ``lora_exclude_modules``; None: none)
    matches, whose modules a LoRA run of `lora_rank` on `model` counts its adapter on (`Catalog.with_lora_targets`,
    as a Trinity config's ``target_modules`` and ``exclude_modules``): None for ``all-linear`` (or not given)
    without `excluded`; module names as the regex that matches them in every layer (``.*\\.(q_proj|v_proj)``, as
    PEFT matches a list by its names' endings); else the regex itself (`lora_targets_pattern`; ``all-linear`` where
    only `excluded` is given). `QueryError`, naming the option as `names` do, for targets or exclusions without
    LoRA, targets or exclusions that are empty, either no regex, or targets that, less `excluded`, adapt no linear layer
    `all-linear` adapts, or a module it leaves out, on the module names of each layout the release may hold
    `model`'s routed experts in (`experts`; `peft_target_match`), or that PEFT refuses on each
    (`peft_target_refusal`: a routed expert's half PEFT fuses alone, Mixtral's ``.*\\.w1`` under transformers 5;
    `every_target_excluded`: exclusions that leave out every module the targets match), as a config's are refused;
    `source` names the targets where they are not the option's (a config's own, beside ``--lora-exclude``)."""
    if targets is None and excluded is None:
        return None
    lora, option, exclusions = names.lora_options
    check_types((option, targets, str | None), (exclusions, excluded, str | None))
    shown, fix = f"{source or option} '{cut(targets or ALL_LINEAR)}'", f"give {LORA_TARGETS_FORMS}"
    if targets is not None and not targets.strip():
        raise QueryError(f"{option} is empty: {fix}")
    if excluded is not None and not excluded.strip():  # PEFT leaves nothing out for it: refused as a cluster job's
        raise QueryError(f"{exclusions} is empty: {EXCLUDED_FORM}")
    if not lora_rank:
        given = shown if targets is not None else f"{exclusions} '{cut(excluded or '')}'"
        raise QueryError(f"{given} without LoRA: the {'targets' if targets is not None else 'exclusions'} are a LoRA "
                         f"adapter's; give a {lora} above 0")
    pattern = None if targets is None else lora_targets_pattern(targets)  # module names as a regex (None: all-linear)
    if excluded is not None:
        try:
            peft_regex(excluded)
        except re.error as error:
            raise QueryError(f"{exclusions} '{cut(excluded)}' is no regular expression ({error}): "
                             f"{EXCLUDED_FORM}") from None
    if pattern is None and excluded is None:
        return None
    pattern = ALL_LINEAR if pattern is None else pattern
    try:
        peft_regex(pattern)
    except re.error as error:
        raise QueryError(f"{shown} is no regular expression ({error}): {fix}") from None
    matches = [(peft_target_match(pattern, excluded, model.peft_names_of(layout)), model.peft_names_of(layout))
               for layout in LAYOUTS_TAKEN[experts]]
    for match, layout_names in matches:
        if match.beyond_all_linear:
            # a layer's module (a mixture of experts' experts, a norm): the layers' modules that are counted
            counted = (f" (it counts {shown_module_names(layout_names, outer=False)})"
                       if any(module.startswith("model.layers.") for module in match.beyond_all_linear) else "")
            raise QueryError(f"{shown} matches {', '.join(match.beyond_all_linear)} of {model.name}, which all-linear "
                             f"leaves out and rft-solver does not count{counted}: {fix}")
    adapts = any(model.adapted_layers(names, LoraTargets(pattern, excluded)) for _, names in matches)
    if excluded is not None and not adapts:  # of the layers the model has (every one of its 36 excluded: none)
        all_excluded = every_target_excluded(pattern, excluded, matches[0][1], shown if targets is not None else
                                             ALL_LINEAR, partial(model.module_layers, names=matches[0][1]))
        if all_excluded is not None:
            raise QueryError(f"{exclusions} '{cut(excluded)}', on {model.name}, {all_excluded}: {EXCLUDE_FEWER}")
    if targets is not None and spaced_all_linear(targets):  # as PEFT takes a config's (no module: refused alike)
        raise QueryError(f"{shown} {SPACED_ALL_LINEAR}: give all-linear without the spaces")
    if not any(match.linears for match, _ in matches):
        listed = listed_module_names(targets) if targets is not None else None  # from adapter_config.json, say
        if listed and any(peft_target_match(lora_targets_pattern(",".join(listed)) or ALL_LINEAR, excluded,
                                            layout_names).linears for _, layout_names in matches):
            fix = f"give the names separated by commas, without brackets, quotes or spaces: {','.join(listed)}"
        raise QueryError(f"{shown} matches no module of {model.name} ({shown_module_names(matches[0][1])}): {fix}")
    unmatched = [name for name in (comma_module_names(targets) if targets is not None else None) or () if not any(
        peft_target_match(lora_targets_pattern(name) or ALL_LINEAR, None, layout_names).linears
        for _, layout_names in matches)]
    if unmatched:  # a misspelt name beside others that match, which PEFT's list would skip unsaid
        one = len(unmatched) == 1
        raise QueryError(f"{shown}: {', '.join(unmatched)} {'matches' if one else 'match'} no module of {model.name} "
                         f"({shown_module_names(matches[0][1])}): correct {'it' if one else 'them'} or leave "
                         f"{'it' if one else 'them'} out (PEFT would skip {'it' if one else 'them'} unsaid)")
    if not adapts:
        # modules of layers the model lacks alone (.*layers\.40\..* on 36 layers), which PEFT refuses as none
        raise QueryError(f"{shown} matches no module of {model.name} ({shown_module_names(matches[0][1])}, N from 0 "
                         f"to {model.num_layers - 1}): {fix}")
    refusals = [peft_target_refusal(pattern, excluded, names) for _, names in matches]
    if all(refusals):  # each layout's PEFT refuses it: a fused expert's half alone, as a config's is refused
        if excluded is not None and any(peft_target_refusal(pattern, None, names) is None for _, names in matches):
            subject = shown if targets is not None else ALL_LINEAR  # the exclusions make it so: they are to change
            raise QueryError(f"{subject} less {exclusions} '{cut(excluded)}', on {model.name}, {refusals[0]}: "
                             f"{EXCLUDE_FEWER}")
        raise QueryError(f"{shown}, on {model.name}, {refusals[0]}: {fix}")
    return LoraTargets(pattern, excluded)


def counts_reference(reference_model: bool | None, lora_rank: int) -> bool:
    """Whether the host memory need counts the reference model: as `reference_model` says, or where it says nothing
    (None) for full fine-tuning alone (`lora_rank` 0: with LoRA, Trinity takes the actor without its adapter as the
    reference)."""
    return lora_rank == 0 if reference_model is None else reference_model


def check_reference_with_lora(reference_model: bool | None, lora_rank: int, names: OptionNames,
                              lora_given: str | None = None) -> None:
    """`QueryError` where a LoRA run (`lora_rank` above 0, or the LoRA `lora_given` names where it is no option's: a
    config's, whatever rank it counts) is said to build a reference model (`NO_LORA_REFERENCE`), named as `names`
    name the options."""
    if (lora_rank or lora_given) and reference_model:
        reference, instead = (("reference_model=True", "reference_model=False") if names.keywords
                              else ("--reference", "--no-reference"))
        rank = lora_given or (f"lora_rank={lora_rank}" if names.keywords else f"--lora-rank {lora_rank}")
        raise QueryError(f"{reference} with {rank}: {NO_LORA_REFERENCE}; give {instead}, or leave it out")


def check_reference_for_release(reference_model: bool | None, lora_rank: int, trinity_version: str | None,
                                names: OptionNames) -> None:
    """`QueryError` where a run without LoRA (`lora_rank` 0) is said to build no reference model (`reference_model`
    False) on a Trinity release that builds one whatever its algorithm, or may be one (0.5 without its patch:
    `builds_reference_anyway`), named as `names` name the options: its host memory need would count too little."""
    if reference_model is False and not lora_rank and builds_reference_anyway(trinity_version):
        release = names.planned_release(str(release_name(trinity_version)))
        raise QueryError(f"{names.no_reference()} with {release}: {REFERENCE_ALWAYS}: drop {names.no_reference()}, "
                         "or name 0.5.2 if the run is on it with an algorithm that uses none (use_reference false, "
                         "as SFT's) and no KL term (kl_loss_fn and kl_penalty_fn none), for which its verl 0.7.1 "
                         "builds none (an algorithm that uses one, as GRPO's, then fails at its first step asking "
                         "the ref never built for its log-probs: keep the reference, or LoRA, whose actor stands in)")


def check_dpo(dpo: bool, critic: CriticChoice | None, reference_model: bool | None, lora_rank: int,
              names: OptionNames, said: str | None = None) -> None:
    """`QueryError` where a DPO run (`dpo`) is said to train a PPO `critic`, or without LoRA (`lora_rank` 0) to build
    no reference model (`reference_model` False): Trinity's dpo algorithm uses no critic and a reference model
    (`dpo_conflict`); named as `names` name the options, and what says the run trains DPO as `said` does (None: the
    option, ``dpo=True`` or ``--dpo``)."""
    conflict = dpo_conflict(dpo, critic, reference_model, lora_rank)
    if conflict is None:
        return
    asked = _dpo_said(names, said)
    if conflict == "critic":
        drop = f"critic={critic!r}" if names.keywords else f"--critic {critic}"
        raise QueryError(f"{asked} {DPO_CONFLICTS[conflict]}: drop {drop}")
    drop, lora = ("reference_model=False" if names.keywords else "--no-reference"), names.lora_options[0]
    raise QueryError(f"{asked} {DPO_CONFLICTS[conflict]}: drop {drop}, or give {lora}")


CONFIG_DPO_SOURCE = "the config's algorithm.algorithm_type dpo"
"""What says a run planned from a Trinity config trains DPO, in a refusal's words (`check_dpo`, `check_dpo_rollout`)."""


def check_dpo_rollout(dpo: bool, rollout_gpus: int | None, names: OptionNames, said: str | None = None) -> None:
    """`QueryError` where a DPO run (`dpo`) is given rollout GPUs (`rollout_gpus` above 0): Trinity trains DPO on a
    dataset in mode train alone (`DPO_NO_EXPLORER`); named as `names` name the options, and what says the run trains
    DPO as `said` does (None: the option, ``dpo=True`` or ``--dpo``), as `check_dpo` names it."""
    if dpo and rollout_gpus:
        raise QueryError(f"{_dpo_said(names, said)} with {names.valued(names.rollout_gpus, rollout_gpus)}: "
                         f"{DPO_NO_EXPLORER}: drop {names.rollout_gpus}, or give 0")


def _dpo_said(names: OptionNames, said: str | None) -> str:
    """What says a run trains DPO, in a refusal's words: `said` (a config's ``algorithm.algorithm_type dpo``), else
    the option as `names` name it, ``dpo=True`` or ``--dpo``."""
    return said if said is not None else "dpo=True" if names.keywords else "--dpo"


def check_lora_rank(lora_rank: int) -> None:
    """`QueryError` unless `lora_rank` (its type checked before) is from 0 (full fine-tuning) to `MAX_LORA_RANK`."""
    if not 0 <= lora_rank <= MAX_LORA_RANK:
        raise QueryError(f"lora_rank must be a whole number from 0 (full fine-tuning) to {MAX_LORA_RANK}, got "
                         f"{brief(lora_rank)}")


def check_vllm_lora_rank(lora_rank: int, rollout_gpus: int | None, option_names: OptionNames) -> None:
    """`QueryError` for a LoRA rank (`lora_rank`, as an option gave it) that a vLLM rollout refuses
    (`vllm_lora_rank_refusal`) where the run has one beside its trainer (`rollout_gpus` not 0; None, not said, counts
    one, as a --model-config that vLLM refuses is refused), naming the options as `option_names` do."""
    refusal = None if rollout_gpus == 0 else vllm_lora_rank_refusal(lora_rank)
    if refusal is not None:
        raise QueryError(f"{option_names.valued(option_names.lora_options[0], refusal)}: give one of those, or "
                         f"{option_names.valued(option_names.rollout_gpus, 0)} for a trainer alone")


def total_budget(total_gpus: int, budget_gpus: int | None, rollout_gpus: int | None, node_gpus: int,
                 node_source: str, option_names: OptionNames) -> int:
    """The trainer's GPU budget within `total_gpus` GPUs in all: what `rollout_gpus` leave of them. `QueryError`
    where `budget_gpus` is given too, no `rollout_gpus` are, they leave the trainer none, or `total_gpus` past one
    node of `node_gpus` (from `node_source`) is no whole number of nodes (Trinity's cluster is nodes of
    ``gpu_per_node``). On whole nodes, a trainer within the budget has a `solver.rules.rollout_layout` with the
    rollout on at most `total_gpus`, and every such layout's trainer is within the budget: the budget is the
    model's constraint (`solver.model.add_budget`), the layout its node rule's."""
    total = option_names.valued(option_names.total_gpus, total_gpus)
    check_counts((option_names.total_gpus, total_gpus, MAX_GPUS))
    if budget_gpus is not None:
        raise QueryError(f"{option_names.total_gpus} counts the trainer's and the rollout's GPUs together, "
                         f"{option_names.budget} the trainer's alone: give one of them")
    if rollout_gpus is None:  # no split is sourced as Trinity's default: ask for one, naming the planner's
        rollout = option_names.valued(option_names.rollout_gpus, "R")
        budget = option_names.valued(option_names.budget, "N")
        kept = kept_for_rollout(total_gpus, node_gpus)
        split = (f"; {option_names.valued(option_names.rollout_gpus, kept)} is what the planner keeps for it of "
                 f"{total_gpus} where a trainer would take them all" if kept < total_gpus and (
                     total_gpus <= node_gpus or not total_gpus % node_gpus) else "")
        raise QueryError(f"{total} counts the trainer's and the rollout's GPUs together: say how many of them the "
                         f"rollout takes, {rollout} (0: it runs elsewhere{split}), or give the trainer's budget "
                         f"alone, {budget}")
    if rollout_gpus >= total_gpus:
        raise QueryError(f"{option_names.valued(option_names.rollout_gpus, rollout_gpus)} leaves the trainer none of "
                         f"{total}: give the rollout fewer than {total_gpus}")
    if total_gpus > node_gpus and total_gpus % node_gpus:
        fewer, more = total_gpus // node_gpus * node_gpus, -(-total_gpus // node_gpus) * node_gpus
        raise QueryError(f"{total} is no whole number of nodes of {node_gpus} ({node_source}), and a trainer and "
                         f"rollout past one node take whole nodes: give {fewer} or {more}, or the GPUs of your nodes "
                         f"with {option_names.valued(option_names.node_gpus, 'N')}")
    return total_gpus - rollout_gpus


def asked_gpus(catalog: Catalog, gpu: GpuNames,
               with_count: Callable[[CountedGpu], str] | None = None) -> tuple[str, ...]:
    """The GPU types that `gpu` names (a name, or a list or tuple of names; None: each documented one), as the
    catalogue names them, in the order given, a GPU type named twice (``a100`` and ``A100-80GB``) once; `QueryError`
    for an unknown name (with `with_count`'s words for a GPU type with a count, alone or in a comma list: `Catalog.gpu`)
    or an empty list."""
    if gpu is None:
        return tuple(gpu_type.name for gpu_type in catalog.documented_gpu_types)
    if not isinstance(gpu, list | tuple):  # one name; another value, the catalogue says what names a GPU type
        try:
            return (catalog.gpu(gpu, with_count).name,)
        except QueryError as error:  # a comma list, or names in one word: the list this takes, where it names GPU
            apart = catalog.gpus_in_one_word(gpu) if isinstance(gpu, str) else ()  # types it knows
            if not isinstance(gpu, str) or "," not in gpu and not apart:
                raise
            names = [name.strip() for name in gpu.split(",")] if "," in gpu else list(apart)
            counted = next(filter(None, map(catalog.counted_gpu, names)), None)
            if counted is not None and with_count is not None:  # one with a count (a100x4): how to give it apart
                raise RefusedNameError(with_count(counted)) from None
            if not isinstance(error, RefusedNameError):
                raise
            raise RefusedNameError(f"gpu {brief(gpu)} lists {len(names)} GPU types in one string: pass them as a "
                                   f"list, gpu={names!r}") from None
    if not gpu:
        raise QueryError("gpu: an empty list names no GPU type: give one or more names, or None for each GPU type "
                         "with tables")
    for index, name in enumerate(gpu):
        check_types((f"gpu[{index}]", name, str))
    return tuple(dict.fromkeys(catalog.gpu(name, with_count).name for name in gpu))


def _budget(catalog: Catalog, gpu_names: tuple[str, ...], objective: Objective,
            budget_gpus: int | None) -> tuple[int, bool]:
    """The GPU budget and whether it is open (not the user's): the one given; else, for the fewest GPUs or GPU-hours
    (`CHOOSES_COUNT`), every count the planner considers (`MAX_ESTIMATED_GPUS`: tables vouch past their counts too);
    else the largest count the GPU types' tables have (one node without tables)."""
    if budget_gpus is not None:
        return budget_gpus, False
    if objective in CHOOSES_COUNT:
        return MAX_ESTIMATED_GPUS, True
    return default_budget_gpus(catalog, gpu_names), False


def default_budget_gpus(catalog: Catalog, gpu_names: Sequence[str]) -> int:
    """The GPU budget a question on `gpu_names` gets where none is given (but for the fewest GPUs): the largest count
    their tables have, one budget for them all; one node (`NODE_GPUS`) where none of them has tables."""
    return max((count for name in gpu_names for count in catalog.tabled_counts(name)), default=NODE_GPUS)


def minimize_option(objective: Objective, names: OptionNames) -> str:
    """The option, with its value, that asks for a count-choosing `objective` (`CHOOSES_COUNT`), in `names`' words:
    ``--minimize gpu-hours``."""
    return names.minimize_gpu_hours if objective == "min_gpu_hours" else names.minimize_gpus


def _check_objective(objective: Objective, budget_gpus: int | None, max_model_len: int | None, exact: bool,
                     names: OptionNames) -> None:
    """`QueryError` where the objective lacks what it needs (a budget to maximise the length within, a length
    otherwise) or is given what it chooses (the length, or with ``--exact`` the GPU count), naming the options as
    `names` do: the budget is the trainer's, or the trainer's and the rollout's together less the rollout's."""
    give_budget = (f"{names.valued(names.budget, 'N')}, or {names.valued(names.total_gpus, 'T')} with "
                   f"{names.valued(names.rollout_gpus, 'R')}")
    if objective == "max_len":
        if max_model_len is not None:  # both fixes at once where both are needed
            budget = "" if budget_gpus is not None else f", and give the GPU budget to find it within: {give_budget}"
            raise QueryError(f"{names.maximize_len} chooses the length: drop {names.length}{budget}")
        if budget_gpus is None:
            raise QueryError(f"{names.maximize_len} needs a GPU budget: {give_budget}")
    elif max_model_len is None:
        wanted = minimize_option(objective, names) if objective in CHOOSES_COUNT else "a cheapest plan"
        longest = ("" if objective in CHOOSES_COUNT
                   else f"; or, for the longest context, "
                   f"{names.joined((names.maximize_len, names.valued(names.budget, 'N')))}")
        raise QueryError(f"{wanted} needs a length: {names.valued(names.length, 'L')} (tokens, e.g. 32768){longest}")
    if exact and objective in CHOOSES_COUNT:  # before the budget: with one, it would be refused all the same
        raise QueryError(f"{minimize_option(objective, names)} chooses the GPU count: drop {names.exact}")
    if exact and budget_gpus is None:
        raise QueryError(f"{names.exact} needs {give_budget}")


def check_sp(model: Model, sp: int, exact_gpus: int | None, budget_gpus: int | None, node_gpus: int,
             node_source: str = "--node-gpus", option_names: OptionNames = COMMAND_OPTIONS) -> None:
    """`QueryError`, one line for `solve` and `solve memory` alike naming the degrees allowed, for an SP degree that
    `model`'s heads or attention refuse (`sp_attention_violation`), that does not divide an exact count of trainer
    GPUs (`exact_gpus`) or spans its nodes, or else that needs more GPUs than the budget (`budget_gpus`) or a node of
    `node_gpus` (from `node_source`); it names the SP option as `option_names` do."""
    heads, kv_heads = model.num_attention_heads, model.num_key_value_heads
    refused = sp_rule_violation(heads, kv_heads, sp) or sp_attention_violation(model, sp)
    problem = refused
    if exact_gpus:
        allowed = sp_degrees(model, exact_gpus, node_gpus)
        room = f"that divide the {counted(exact_gpus, 'trainer GPU')}, "
        problem = problem or sp_layout_violation(model, exact_gpus, sp, node_gpus, node_source)
    else:
        most = min(node_gpus, budget_gpus or node_gpus)
        allowed = sp_degrees_within(model, most, node_gpus)
        room = f"that fit the budget of {counted(most, 'GPU')}, " if most < node_gpus else ""
        if not problem and budget_gpus is not None and sp > budget_gpus:
            problem = f"SP={sp} needs at least {sp} trainer GPUs, more than the budget of {budget_gpus}"
        elif not problem and sp > node_gpus:
            problem = (f"SP={sp} is more GPUs than nodes of {node_gpus} ({node_source}) hold, and an SP group must fit "
                       f"in one: {SP_NODE_RULE_OWNER}")
    if problem:
        named = f" for {model.name}" if refused else ""
        allows = "heads allow" if model.ulysses_unreached is None else "heads and attention allow"
        allowed = tuple(degree for degree in allowed if not sp_attention_violation(model, degree))
        raise QueryError(f"{option_names.valued(option_names.named('sp'), sp)} is not allowed{named}: {problem} "
                         f"(the degrees {room}that {model.name}'s {allows} and that keep an SP group in a node of "
                         f"{counted(node_gpus, 'GPU')}: {', '.join(map(str, allowed))})")


SMALL_CARD_OPTIMISM_GIB = 1.0
"""What estimates on a card of at most `SMALL_CARD_GIB` run optimistic by (docs/memory.md, "Where we expect the
extrapolation to err": the reserve the usable fraction leaves is about a GiB less than the fixed costs need there),
which the default margin on such a card holds back (`default_margin`)."""


def check_margin(margin: float | None, option_names: OptionNames = COMMAND_OPTIONS) -> float | None:
    """The safety margin asked for (None: the default), checked; `QueryError` outside [0, 1), naming the option as
    `option_names` do."""
    check_types(("margin", margin, float | None))
    if margin is not None and not 0 <= margin < 1:
        raise QueryError(f"{option_names.named('margin')} is a fraction from 0 to below 1, got {brief(margin)}"
                         f"{percentage_hint(margin)}")
    return margin


def default_margin(memory: MemoryModel, memory_gib: float) -> float:
    """The safety margin estimates on a GPU of `memory_gib` are held to where none is given: the memory model's, and
    on a card of at most `SMALL_CARD_GIB` that much more as keeps `SMALL_CARD_OPTIMISM_GIB` of its usable memory
    (the lesser usable fraction, with Env or without), rounded up to a hundredth."""
    if memory_gib > SMALL_CARD_GIB:
        return memory.margin
    usable_gib = memory_gib * min(memory.coefficients.usable, memory.coefficients.usable_env)
    return margin_keeping(memory.margin, SMALL_CARD_OPTIMISM_GIB, usable_gib)


def margin_keeping(margin: float, gib: float, usable_gib: float) -> float:
    """The margin, rounded up to a hundredth, that holds back `gib` GiB of `usable_gib` more than `margin` does."""
    return ceil(round((margin + gib / usable_gib) * 100, 9)) / 100


def resolve_margin(memory: MemoryModel, margin: float | None, memory_gib: float,
                   option_names: OptionNames = COMMAND_OPTIONS) -> float:
    """The safety margin asked for, or the default on a GPU of `memory_gib` (`default_margin`); `QueryError`
    outside [0, 1) (`check_margin`'s)."""
    margin = check_margin(margin, option_names)
    return default_margin(memory, memory_gib) if margin is None else margin


def token_budget_mode_and_cap(token_budget: TokenBudgetMode | int,
                              estimate: EstimateMode) -> tuple[TokenBudgetMode, int | None]:
    """A checked `token_budget` as the query's mode and cap (`Query.token_budget_cap`): a whole number caps every
    plan's budget at it, lowering (``auto``) an estimated plan's further where its budget does not fit, unless
    estimates are off; a mode caps none."""
    if isinstance(token_budget, int):
        return ("default" if estimate == "never" else "auto"), token_budget
    return token_budget, None


def token_budget_name(option_names: OptionNames) -> str:
    """The token budget's option as `option_names` name it: ``--token-budget``, or the API's ``token_budget``."""
    return "token_budget" if option_names.keywords else "--token-budget"


def cap_is_one_jobs(option_names: OptionNames) -> str:
    """Why a token budget for every job (a cluster's) takes no cap in tokens per GPU, and what takes one, as
    `option_names` name them: ``a cap in tokens per GPU is one job's: solve --token-budget N plans a job with it;
    solve memory --token-budget T estimates one setting at it``."""
    plans = option_names.planner.format(option_names.valued(token_budget_name(option_names), "N"))
    estimates = option_names.estimator.format(option_names.valued(option_names.tokens_per_gpu, "T"))
    return f"a cap in tokens per GPU is one job's: {plans} plans a job with it; {estimates} estimates one setting at it"


def token_cap_source(cap: int, source: str | None, option_names: OptionNames | None) -> str:
    """Where the token budget cap `cap` came from, in words: `source` (``the config's own max_token_len_per_gpu``, or a
    role's key: `Query.token_budget_cap_source`), else the option as `option_names` name it (``--token-budget 16384``,
    ``token_budget=16384``); with neither known (None: a plan's fragment, written without its answer), either."""
    if source is not None:
        return source
    if option_names is None:
        return f"--token-budget {cap} or {CONFIG_TOKEN_CAP_SOURCE}"
    return option_names.valued(token_budget_name(option_names), cap)


def token_cap_words(cap: int, source: str | None, option_names: OptionNames | None) -> str:
    """A plan's token budget where the cap `cap` binds on it, naming where the cap came from (`TOKEN_CAP_WORDS`,
    `token_cap_source`): ``capped by --token-budget 16384``."""
    return TOKEN_CAP_WORDS.format(token_cap_source(cap, source, option_names))


RAISED_CAP_WORDS: dict[TrinityVersion | None, str] = {
    "0.5": "raised to hold a sequence at the actor's SP, the least any 0.5 release runs it at: Trinity 0.5.1 and 0.5.2 "
           "raise it so, 0.5.0 to its default",
    "0.6": "raised to hold a sequence at the actor's SP, as Trinity 0.6 runs it on verl before 0.8; on 0.8 or later it "
           "runs the plan's trainer.max_token_len_per_gpu",
    None: "raised to hold a sequence at the actor's SP, the least any release runs it at: Trinity 0.5.1, 0.5.2 and 0.6 "
          "on verl before 0.8 raise it so, 0.5.0 to its default, and 0.6 on verl 0.8 or later runs the plan's "
          "trainer.max_token_len_per_gpu"}
"""How the cap from a config's actor budget below a sequence is that budget raised (`TrinityConfig.raised_actor_budget`,
planned), in words, by the release named (`config_token_cap_source`): Trinity 0.5, 0.6, or none."""


def config_token_cap_source(keys: Sequence[str], sequences: Sequence[int] = (), raised: bool = False,
                            version: TrinityVersion | None = None) -> str:
    """Where a query's token budget cap came from when a Trinity config's own budgets set it
    (`Query.token_budget_cap_source`), naming the `keys` that set it (`TrinityConfig.budget_in_effect_keys`):
    `CONFIG_TOKEN_CAP_SOURCE` for the trainer's own, else ``the config's own`` and the roles' keys, `raised` as the
    release named, `version`, raises them (`RAISED_CAP_WORDS`); and the `sequences` per micro-batch of
    the passes that read no budget (`TrinityConfig.budget_in_effect_sequences`): ``the config's micro-batches of 1
    sequence with dynamic batch sizes off``."""
    micro_batches = (f"micro-batches of {counted(list(sequences), 'sequence')} with dynamic batch sizes off"
                     if sequences else "")
    if not keys:
        return f"the config's {micro_batches}"
    named = CONFIG_TOKEN_CAP_SOURCE if list(keys) == [TRAINER_TOKEN_BUDGET] else f"the config's own {and_joined(keys)}"
    named += f" ({RAISED_CAP_WORDS[version]})" if raised else ""
    return f"{named} and its {micro_batches}" if micro_batches else named


def check_token_budget(token_budget: object, estimate: EstimateMode,
                       option_names: OptionNames = COMMAND_OPTIONS, caps: bool = False) -> None:
    """`QueryError` unless `token_budget` is a `TokenBudgetMode` that the `estimate` mode allows (``auto``
    lowers the budgets of estimated plans: not with estimates off), or, where the caller `caps` budgets (the planner:
    `Query.token_budget_cap`), tokens per GPU from 1 to `MAX_TOKENS`, naming the options as `option_names` do."""
    if caps and isinstance(token_budget, int) and not isinstance(token_budget, bool):
        check_counts((token_budget_name(option_names), token_budget, MAX_TOKENS))
        return
    if caps and token_budget not in get_args(TokenBudgetMode):
        raise QueryError(f"{token_budget_name(option_names)} takes default, auto or the most tokens per GPU (a whole "
                         f"number from 1 to {MAX_TOKENS}), got {brief(token_budget)}")
    check_choice("token_budget", token_budget, get_args(TokenBudgetMode), cap_is_one_jobs(option_names))
    if token_budget == "auto" and estimate == "never":
        raise QueryError(f"{option_names.token_budget_auto} lowers the token budget of estimated plans, which "
                         f"{option_names.no_estimate} turns off: drop one of them")


def check_seed(seed: int) -> None:
    """`QueryError` unless `seed` is CP-SAT's random seed: a whole number from 0 to `MAX_SEED`."""
    check_types(("seed", seed, int))
    if not 0 <= seed <= MAX_SEED:
        raise QueryError(f"seed must be from 0 to {MAX_SEED} (CP-SAT's seed is 32-bit), got {brief(seed)}")


def check_time_limit(time_limit_s: float, name: str = "time_limit_s") -> None:
    """`QueryError` unless `time_limit_s` is a number of seconds above 0 and at most `MAX_TIME_LIMIT_S`
    (CP-SAT's search time; `name`: the argument it was given as, for the message)."""
    check_types((name, time_limit_s, float))
    if not 0 < time_limit_s <= MAX_TIME_LIMIT_S:
        raise QueryError(f"{name} must be above 0 seconds and at most {MAX_TIME_LIMIT_S:.0f}, got "
                         f"{brief(time_limit_s)}")


def check_node_gpus(node_gpus: int | None, name: str) -> None:
    """`QueryError` unless `node_gpus` (named `name`; its type checked before) is None or from 1 to `MAX_NODE_GPUS`,
    the most one host has."""
    if node_gpus is not None and not 1 <= node_gpus <= MAX_NODE_GPUS:
        raise QueryError(node_gpus_range_words(name, node_gpus))


def check_counts(*counts: tuple[str, int | None, int]) -> None:
    """`QueryError` unless each (option, value, most) value is None or from 1 to `most` (its type checked
    before, with `check_types`)."""
    for name, value, most in counts:
        if value is not None and not 1 <= value <= most:
            raise QueryError(count_range_words(name, most, value))
