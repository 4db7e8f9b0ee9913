"""What the planner is asked and what it answers: frozen, validated models shared by every layer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from math import ceil
from types import MappingProxyType
from typing import Any, Literal, NamedTuple, get_args

from pydantic import Field, SerializerFunctionWrapHandler, computed_field, model_serializer, model_validator

from solver.tables import (
    MAX_ESTIMATED_GPUS,
    MAX_GPUS,
    MAX_HOST_RAM_GB,
    MAX_TOKENS,
    YARN_VALIDATED_FACTOR,
    YARN_VALIDATED_TOKENS,
    Catalog,
    Frozen,
    GpuType,
    MemoryModel,
    Model,
    QueryError,
    Setting,
    Table,
    Weights,
    brief,
    cell_text,
    check_types,
    counted,
    load_memory_model,
    load_weights,
    sp_rule_violation,
    sp_within_node,
    vouches_for,
)

TrinityVersion = Literal["0.5", "0.6"]
"""The Trinity-RFT releases whose offload keys differ: 0.6 has them under ``trainer`` too, 0.5 refuses those."""
Objective = Literal["cheapest", "max_len", "min_gpus"]
Status = Literal["optimal", "feasible", "infeasible", "unknown"]
PlacementCount = Literal["priority", "nodes"]
"""What a cluster placement's objective counts: the placed jobs' priority, or the nodes used (--minimize nodes)."""
Evidence = Literal["documented", "inferred", "estimated"]
EstimateMode = Literal["auto", "only", "never"]
TokenBudgetMode = Literal["default", "auto"]
"""``default``: every plan at Trinity's default ``max_token_len_per_gpu``, ``ceil(2L/s)``, which the tables
measured; ``auto``: an estimated plan whose default does not fit takes a lower one (`lowered_token_budget`)."""

NODE_GPUS = 8
"""GPUs per node unless the request says otherwise (a trainer on more GPUs spans nodes)."""
MAX_WORKERS = 1024
"""The most CP-SAT search workers a query may ask for (CP-SAT refuses more than 10000; more than the
machine's cores only slow it down)."""
MAX_TIME_LIMIT_S = 1e9
"""The longest time limit, in seconds (about 30 years): finite, and a number CP-SAT takes."""
NODE_SIZE_KEY = "cluster.gpu_per_node"
"""The Trinity config key that gives the GPUs of a node."""

ENV_EXPORT = "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
"""The shell line that turns Env on; it must run before Ray starts."""

YARN_CAUTION = ("longer than YaRN is validated for (131072 tokens, a factor of 4, in Qwen's model cards): check the "
                "model's quality at this length")
OTHER_YARN_CAUTION = ("YaRN on a model that is not Qwen's, for which rft-solver knows of no validation: check the "
                      "model's quality at this length")


def yarn_caution(model: Model) -> str:
    """The caution for a plan of `model` whose YaRN goes beyond what is validated (`Plan.yarn_beyond_validated`):
    past what Qwen's model cards validate, or any YaRN for a model that is not Qwen's (`Model.qwen_yarn`)."""
    return YARN_CAUTION if model.qwen_yarn else OTHER_YARN_CAUTION


THIN_HEADROOM_GIB = 1.0
"""Less room than this in an extrapolated estimate gets a caution: the known errors there are about a GiB and more."""
SMALL_CARD_GIB = 48.0
"""On cards of at most this much memory, estimates run optimistic by about a GiB more (the CUDA context, NCCL and
cuBLAS workspaces do not shrink with the card: docs/memory.md), so a thin headroom is twice `THIN_HEADROOM_GIB`."""

ROCM_ENV_CAUTION = ("ROCm: PyTorch's ROCm builds also read PYTORCH_HIP_ALLOC_CONF (set it the same, or not at all), "
                    "and a build without expandable segments ignores them with a warning, so Env may not take effect: "
                    "check yours (solve --no-env plans without it)")
"""What a plan with Env on an AMD GPU (`GpuType.rocm`) cautions."""


def thin_headroom(headroom_gib: float, beyond_calibration: Sequence[str], memory_gib: float) -> str:
    """A caution for a prediction on a GPU of `memory_gib` that fits with less than `THIN_HEADROOM_GIB` to spare
    (twice that on a card of at most `SMALL_CARD_GIB`) where it extrapolates (`beyond_calibration` not empty), in
    words; "" otherwise."""
    thin = THIN_HEADROOM_GIB * (2 if memory_gib <= SMALL_CARD_GIB else 1)
    if not beyond_calibration or not 0 <= headroom_gib < thin:
        return ""
    return (f"{headroom_gib:.1f} GiB to spare where the estimate extrapolates, and its error there is unmeasured (on "
            "much smaller cards and much larger models it runs optimistic by about a GiB and more: docs/memory.md); "
            "raise --margin, or measure a step first")


def own_scaling_words(model: Model) -> str:
    """A length past `model`'s native context on its own RoPE scaling, in words."""
    return (f"beyond the native {model.native_context}, which {model.name}'s own {model.rope_scaling} RoPE scaling "
            "provides: no YaRN written; vLLM's rollout refuses a max_model_len past what it derives from the model's "
            "config unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set; check the model handles it")


MAX_TOP = 100
"""The most ranked plans one query may ask for."""
MAX_SEED = 2**31 - 1
"""The largest CP-SAT random seed (its ``random_seed`` is a 32-bit signed integer)."""


class Undecided(Exception):
    """A question CP-SAT could not decide within its time limit: neither a plan nor the proof that none exists."""


class Pins(Frozen):
    """The settings a query pins (--sp, --env/--no-env, --offload/--no-offload); null where it leaves one free."""

    sp: int | None = None
    env: bool | None = None
    offload: bool | None = None


class Query(Frozen):
    """A planning request, names resolved and flags checked (build it with `make_query`)."""

    model: str
    gpus: tuple[str, ...] = Field(description="GPU types to answer for, one answer each")
    objective: Objective
    budget_gpus: int = Field(gt=0, description="trainer GPUs the plan may use at most (exactly, with exact)")
    open_budget: bool = Field(default=False, description=(
        "the budget is not the user's: the fewest GPUs among every count the planner considers"))
    exact: bool = False
    max_model_len: int | None = Field(default=None, gt=0)
    sp: int | None = Field(default=None, gt=0)
    env: bool | None = None
    offload: bool | None = None
    node_gpus: int = Field(default=NODE_GPUS, gt=0, description="GPUs per node: a trainer spanning nodes "
                                     "keeps each SP group inside one node")
    node_source: str = Field(default="--node-gpus", description="where the node size came from, as messages "
                             "name it (--node-gpus, or a config's cluster.gpu_per_node)")
    host_ram_source: str = Field(default="--host-ram", description="where the host memory came from, as "
                                 "messages name it (--host-ram, or a cluster pool's host_ram_gb)")
    rollout_gpus: int | None = Field(default=None, ge=0, description="rollout GPUs beside the trainer: its GPU "
                                     "count must leave them a layout on the nodes")
    top: int = Field(default=1, gt=0, le=MAX_TOP)
    weights: Weights
    estimate: EstimateMode = Field(default="auto", description="auto: estimates where the tables have no "
                                   "table for the GPU type, model or count; only: estimates alone; never: none")
    memory: MemoryModel
    margin: float = Field(ge=0, lt=1, description="safety margin of estimates, a fraction of usable memory")
    token_budget: TokenBudgetMode = Field(default="default", description=(
        "default: Trinity's max_token_len_per_gpu for every plan; auto: where it does not fit, an estimated plan "
        "takes the most tokens per GPU the memory model fits, at least ceil(L/s)"))
    host_ram_gb: float | None = Field(default=None, gt=0, le=MAX_HOST_RAM_GB, description="host memory per node, for Offload")
    time_limit_s: float = Field(default=10.0, gt=0)
    workers: int = Field(default=1, gt=0)
    seed: int = Field(default=0, ge=0)

    @property
    def pins(self) -> Pins:
        """The settings the query pins (`sp`, `env`, `offload`), as an answer echoes them."""
        return Pins(sp=self.sp, env=self.env, offload=self.offload)

    @property
    def within_budget(self) -> str:
        """The budget in words: ``within 6 GPUs``, or ``on exactly 6 GPUs`` with `exact`."""
        gpus = counted(self.budget_gpus, "GPU")
        return f"on exactly {gpus}" if self.exact else f"within {gpus}"

    @property
    def evidence_sources(self) -> str:
        """What plans may rest on, in words: the tables, the memory model's estimates, or both."""
        return {"auto": "the tables and the memory model's estimates", "only": "the memory model's estimates",
                "never": "the tables"}[self.estimate]

    @property
    def pin_flags(self) -> str:
        """The pinned settings as the flags that pin them (``--sp 2 --no-offload``); empty when none."""
        flags = [f"--sp {self.sp}"] if self.sp is not None else []
        flags += [f"--{'' if pinned else 'no-'}{name}"
                  for name, pinned in (("env", self.env), ("offload", self.offload)) if pinned is not None]
        return " ".join(flags)

    @property
    def limit_flags(self) -> str:
        """The flags that narrow the plans: the pins (`pin_flags`) and the host memory given; empty when none."""
        host_ram = f"{self.host_ram_source} {self.host_ram_gb:g}" if self.host_ram_gb is not None else ""
        return " ".join(filter(None, (self.pin_flags, host_ram)))


def host_need_words(amount: str, offload: bool) -> str:
    """What a plan needs of a node's host memory, in words: ``with Offload it needs 162.6 GiB of host memory per
    node``, or ``it needs 30.6 GiB of host memory per node while the model loads`` (`amount`: the GiB, as written)."""
    if offload:
        return f"with Offload it needs {amount} GiB of host memory per node"
    return f"it needs {amount} GiB of host memory per node while the model loads"


class SourceCell(Frozen):
    """The documented cell a plan rests on."""

    model: str = Field(description=(
        "the model whose column the cell is in: the plan's own, or a tabled model of the same shape"))
    gpus: int
    max_model_len: int
    setting: str
    gpu: str | None = Field(default=None, description=(
        "the GPU type whose table the cell is in where it is not the answer's own: one with at least as much "
        "memory, whose table says the setting ran out of memory (`larger_gpu_types`), or one with the same memory "
        "whose table for a GPU count the answer's lacks speaks for it (`Catalog.tables_for`); left out for the "
        "answer's own"))

    @model_serializer(mode="wrap")
    def _without_own_gpu(self, handler: SerializerFunctionWrapHandler):  # unannotated: keeps the JSON schema
        data: dict[str, Any] = handler(self)
        if data.get("gpu") is None:  # the answer's own GPU type: said by the answer
            data.pop("gpu", None)
        return data

    def words(self, gpu: str, model: str | None = None) -> str:
        """The cell in words, for a plan of `model` on `gpu` (empty: "the table"); naming the cell's
        model where it stands for `model` (a model of the same shape), and its GPU type where it is another's."""
        table = f"the {self.gpu or gpu} table" if self.gpu or gpu else "the table"
        said = f"{table} for {counted(self.gpus, 'GPU')} says {self.setting!r} at {self.max_model_len}"
        said = said if model in (None, self.model) else f"{said} for {self.model}, of the same shape"
        return f"{said} (its GPU has at least the memory of the {gpu})" if self.gpu and gpu else said

    def cited(self, origins: Mapping[int, str]) -> SourceCell:
        """The cell, naming its table's GPU type where the table for its count is borrowed from another with the
        same memory (`origins`: `Catalog.table_origins`), unless it names one already."""
        if self.gpu is not None or self.gpus not in origins:
            return self
        return self.model_copy(update={"gpu": origins[self.gpus]})


class Plan(Frozen):
    """One way to lay out the trainer: GPUs, settings, length, what it costs and why it trains."""

    gpus: int
    unused_gpus: int
    env: bool
    offload: bool
    sp: int
    max_model_len: int
    max_token_len_per_gpu: int
    rope_scaling_factor: float | None
    yarn_beyond_validated: bool = Field(description=(
        "whether its YaRN goes beyond what is validated (Model.yarn_beyond_validated): memory fits, quality is "
        "untested"))
    cost: float
    evidence: Evidence
    source: SourceCell | None = Field(description="the documented cell it rests on; null when estimated")
    memory_gb: float = Field(description="the memory model's predicted peak per trainer GPU, GiB")
    headroom_gb: float = Field(description=(
        "memory left over at the tighter peak, GiB: the activations' usable memory (less the safety margin) or, "
        "without Offload, the optimizer step's share where that is tighter (headroom_at_step)"))
    headroom_at_step: bool = Field(default=False, description=(
        "whether headroom_gb is the optimizer step's room (memory_gb is the activations' peak)"))
    host_memory_gb: float | None = Field(default=None, description=(
        "host memory per node the plan needs, GiB, rounded up to a tenth (what --host-ram is checked against): with "
        "Offload its states, or the model while it loads where that is more; without Offload, where --host-ram is "
        "given, the model while it loads; null otherwise"))
    beyond_calibration: tuple[str, ...] = Field(default=(), description=(
        "for an estimated plan: where it lies outside the observations the memory model was calibrated on, in "
        "words; empty within them, and for a plan a table vouches for"))
    nodes: int | None = Field(default=None, description=(
        "with --rollout-gpus: the nodes the trainer and its rollout take together; null without"))
    rollout_gpus: int | None = Field(default=None, description=(
        "with --rollout-gpus: the rollout GPUs of that layout (more than asked where a trainer on whole nodes "
        "leaves the rollout whole nodes); null without"))
    cautions: tuple[str, ...] = Field(default=(), description=(
        "what to check before running it, in words (`with_cautions`): YaRN past what is validated, a length past "
        "the model's native context on its own RoPE scaling, thin headroom where an estimate extrapolates, Env on "
        "an AMD GPU; empty where there is nothing"))

    def with_cautions(self, model: Model, gpu: GpuType) -> Plan:
        """This plan, of `model` on `gpu`, with its `cautions`."""
        length = self.length_cautions(model)
        thin = (thin_headroom(self.headroom_gb, self.beyond_calibration, gpu.memory_gib)
                if self.evidence == "estimated" else "")
        cautions = (*length, *((thin,) if thin else ()), *((ROCM_ENV_CAUTION,) if gpu.rocm and self.env else ()))
        return self.model_copy(update={"cautions": cautions})

    def length_cautions(self, model: Model) -> tuple[str, ...]:
        """The cautions of `model`'s plan that are about its length: YaRN past what is validated, a length past its
        native context on its own RoPE scaling."""
        yarn = (f"YaRN factor {self.rope_scaling_factor!r} at {self.max_model_len} tokens: {yarn_caution(model)}",)
        own = (own_scaling_words(model),)
        return ((yarn if self.yarn_beyond_validated else ())
                + (own if model.beyond_native_on_own_scaling(self.max_model_len) else ()))

    @property
    def setting(self) -> Setting:
        """The plan's Env, Offload and SP as a `Setting` (``label`` gives the source's words)."""
        return Setting(env=self.env, offload=self.offload, sp=self.sp)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def lowered_budget(self) -> bool:
        """Whether its ``max_token_len_per_gpu`` is below Trinity's default (``--token-budget auto``)."""
        return self.max_token_len_per_gpu < token_budget(self.max_model_len, self.sp)

    @model_validator(mode="before")
    @classmethod
    def _derived_budget_flag(cls, raw: Any) -> Any:
        """A plan rebuilt from its JSON: ``lowered_budget`` is derived from the other fields, so it is dropped
        where it agrees with them (and refused where it does not)."""
        if not isinstance(raw, dict) or "lowered_budget" not in raw:
            return raw
        data = {key: value for key, value in raw.items() if key != "lowered_budget"}
        try:
            derived = data["max_token_len_per_gpu"] < token_budget(data["max_model_len"], data["sp"])
        except (KeyError, TypeError, ZeroDivisionError):
            return data  # the fields' own validation says what is wrong
        if raw["lowered_budget"] != derived:
            raise ValueError(f"lowered_budget is {raw['lowered_budget']!r}, but max_token_len_per_gpu "
                             f"{data['max_token_len_per_gpu']} says {derived!r}")
        return data

    @model_serializer(mode="wrap")
    def _budget_flag_beside_budget(self, handler: SerializerFunctionWrapHandler):  # unannotated: keeps the JSON schema
        data: dict[str, Any] = handler(self)
        if "lowered_budget" not in data or "max_token_len_per_gpu" not in data:  # include/exclude left one out
            return data
        flag, ordered = data.pop("lowered_budget"), {}
        for name, item in data.items():
            ordered[name] = item
            if name == "max_token_len_per_gpu":
                ordered["lowered_budget"] = flag
        return ordered

    @property
    def lowered_words(self) -> str:
        """`` with a lowered max_token_len_per_gpu of N`` for a plan of `lowered_budget`, else empty: what a
        suggestion must add for the plan to be taken as it is."""
        return f" with a lowered max_token_len_per_gpu of {self.max_token_len_per_gpu}" if self.lowered_budget else ""

    @property
    def evidence_label(self) -> str:
        """The evidence in a word or two: ``estimated, extrapolated`` for an estimate beyond the memory
        model's calibration (`beyond_calibration`)."""
        return self.evidence + (", extrapolated" if self.beyond_calibration else "")

    @property
    def room_words(self) -> str:
        """The room the memory model leaves the plan (or what it lacks), in words, at the tighter of the
        activations and the optimizer step."""
        at = " at the optimizer step's peak, the tighter one" if self.headroom_at_step else ""
        if self.headroom_gb >= 0:
            return f"{self.headroom_gb:.1f} GiB to spare{at}"
        return f"{-self.headroom_gb:.1f} GiB over what it may take{at}"

    def evidence_text(self, gpu: str, model: str | None = None) -> str:
        """What the plan of `model` on `gpu` rests on, in words: the documented cell (naming whose it is where
        it is another model's of the same shape, given `model`), or the memory model's prediction."""
        if self.source is None:
            beyond = (f"; beyond its calibration: {', '.join(self.beyond_calibration)}" if self.beyond_calibration
                      else "")
            return f"estimated: the memory model predicts {self.memory_gb:.1f} GiB per GPU, {self.room_words}{beyond}"
        cell = self.source.words(gpu, model)
        if self.evidence == "documented":
            return f"documented: {cell}"
        if self.source.gpus == self.gpus:
            return f"inferred: {cell}, and this plan includes that setting"
        return f"inferred: {cell}, and this plan includes that setting on more GPUs (which hold no more per GPU)"


class Reason(Frozen):
    """One step of an explanation: the rule (a short name) and what it means here, in words."""

    rule: str
    detail: str


class CurrentSettings(Frozen):
    """The settings a user's Trinity config runs with, and whether the tables say they train."""

    config: str = Field(description="the config file's name")
    gpus: int
    gpus_given: bool = Field(default=True, description=(
        "whether the config gives its GPUs (cluster.node_num and cluster.gpu_per_node); else gpus is the budget's"))
    env: bool = Field(description="from the environment: PYTORCH_CUDA_ALLOC_CONF has expandable_segments:True")
    offload: bool
    sp: int
    max_model_len: int
    length_given: bool = Field(default=True, description=(
        "whether max_model_len is the config's own (False: --len's, at which its settings are judged)"))
    max_token_len_per_gpu: int | None = Field(default=None, description=(
        "the config's token budget in effect (the most any role takes: a role's own, else "
        "trainer.max_token_len_per_gpu) when it is below Trinity's default and holds a sequence, and estimates are on: "
        "the verdict is at that budget; null otherwise (the verdict is at Trinity's default)"))
    trains: bool
    plan: Plan | None = Field(description="the plan for exactly these settings, with its evidence, if they train")
    broken_rule: str | None = Field(default=None, description="the rule of Trinity's or verl's these settings break")
    host_memory_needed: float | None = Field(default=None, description=(
        "when the host memory given (--host-ram, or a pool's) is what rules them out: the host memory per node they "
        "need (`host_memory_gib`: the model while it loads, and with Offload the states), GiB"))
    predicted: tuple[float, float] | None = Field(default=None, description=(
        "when they do not train and no table says why: the memory model's predicted peak per GPU and the usable "
        "memory (less the safety margin), GiB, at the verdict's budget"))
    predicted_step: tuple[float, float] | None = Field(default=None, description=(
        "with `predicted`, when it is the optimizer step that does not fit: its peak per GPU and what it may take "
        "(98% of the memory less the safety margin), GiB"))
    out_of_memory: SourceCell | None = Field(default=None, description=(
        "when they do not train: the cell of the GPU count's own table, or of a table for more GPUs, that says "
        "they ran out of memory (its setting: what trained there instead, or '-')"))
    config_problems: tuple[str, ...] = Field(default=(), description=(
        "what else in the config breaks Trinity's or verl's rules (RoPE scaling, token limits) or is not what the "
        "verdict assumes (partial Offload, a token budget above the default the tables measured)"))


AlternativeName = Literal["token_budget_auto", "without_pins"]
"""The ways an infeasible query is changed to find the plans near it (`Alternatives`)."""


class Alternatives(Frozen):
    """The best plans of an infeasible query changed one way, as its reason solved them: its explanation
    (``--explain``) names them too, and solves only those not in `solved`. (The longest plan within its budget
    and pins is `Answer.nearest`.)"""

    token_budget_auto: Plan | None = Field(default=None, description=(
        "with --token-budget auto: asked for a length at Trinity's default token budget, with estimates"))
    without_pins: Plan | None = Field(default=None, description="without the pins (--sp, --env, --offload), if any")
    solved: frozenset[AlternativeName] = Field(default=frozenset(), description=(
        "the alternatives solved and decided within the time limit (their fields None where no plan exists, or the "
        "query cannot be changed so)"))


class _Timed(Frozen):
    """A solver's result with a ``wall_time_s`` field: equal results compare (and hash) equal however long
    each took to solve."""

    def _untimed(self) -> tuple[object, ...]:
        return type(self), tuple(value for name, value in self.__dict__.items() if name != "wall_time_s")

    def __eq__(self, other: object) -> bool:
        return self._untimed() == other._untimed() if isinstance(other, _Timed) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._untimed())


class Answer(_Timed):
    """The planner's answer for one GPU type: plans best first, or none and the reason."""

    gpu: str
    model: str
    objective: Objective
    budget_gpus: int
    open_budget: bool = Field(default=False, description=(
        "the budget is the planner's search bound, not the user's (--minimize gpus without --gpus); plans then "
        "claim no GPUs left for rollout"))
    max_model_len: int | None = Field(default=None, description=(
        "the length asked for (--len) of a cheapest or fewest-GPU answer; null when maximising the length"))
    exact: bool = Field(default=False, description="whether the plans must use exactly budget_gpus (--exact)")
    pins: Pins = Field(default=Pins(), description="the settings the query pins; null where it leaves one free")
    rollout_gpus: int | None = Field(default=None, exclude=True, description="the query's --rollout-gpus")
    status: Status
    reason: str | None
    plans: tuple[Plan, ...]
    explanation: tuple[Reason, ...] | None = Field(default=None, description="with --explain: why this answer")
    current: CurrentSettings | None = Field(default=None, description="with --from-config: the config's settings")
    nearest: Plan | None = Field(default=None, description=(
        "when no plan trains the asked length: the longest plan within the same budget and pins"))
    alternatives: Alternatives | None = Field(default=None, exclude=True, description=(
        "when there is no plan (and it was worked out why): the plans of the query changed one way"))
    measured: Plan | None = Field(default=None, description=(
        "when the best plan is estimated but the tables have a plan for the same question (budget, length, "
        "pins): the tables' best, documented or inferred"))
    tables: TablesVerdict | None = Field(default=None, description=(
        "with --estimate (the memory model alone): what the GPU type's tables say of the best plan's setting, "
        "count and length, where they speak (they decide there); None otherwise"))
    larger_gpu_cell: SourceCell | None = Field(default=None, description=(
        "when the best plan is estimated: the cell of a GPU type with a little more memory (at most 3% more) "
        "that documents exactly its setting on as many GPUs at its length, the row at or next above it (the "
        "A100-80GB's for the H100-80GB): it trained there"))
    validated: Plan | None = Field(default=None, description=(
        "when the longest context is past what the model is known to handle (validated_length: YaRN past what "
        "Qwen's model cards validate), the cheapest plan at that length within the same budget and pins, where "
        "its setting or GPU count differs from the best plan's"))
    fewer_nodes: Plan | None = Field(default=None, description=(
        "with rollout GPUs, when the best plan's trainer takes whole nodes and so leaves the rollout more GPUs "
        "than asked: the best plan on fewer nodes (within the largest budget whose layouts take fewer)"))
    objective_value: int | None = Field(default=None, exclude=True, description="CP-SAT objective of the best plan")
    bound: float | None = Field(default=None, exclude=True, description="CP-SAT's proven bound on it")
    wall_time_s: float = Field(default=0.0, exclude=True, description=(
        "seconds spent solving, all plans together (not compared: equal answers are equal however long they took)"))

    @property
    def best(self) -> Plan | None:
        """The best plan found, or None."""
        return self.plans[0] if self.plans else None

    @property
    def decided(self) -> bool:
        """Whether the solve proved its answer: the best plans (``optimal``) or that there is none
        (``infeasible``); ``feasible`` and ``unknown`` are what the time limit left open."""
        return self.status in ("optimal", "infeasible")

    @property
    def no_plan_line(self) -> str:
        """The reason as a line that starts ``no plan`` (once: ``no plan for 6 GPUs ...`` as it is)."""
        reason = self.reason or ""
        return reason if reason.startswith("no plan") else f"no plan: {reason}"

    def as_json(self) -> dict[str, Any]:
        """The answer as ``solve --json`` prints it: ``explanation``, ``current``, ``nearest``, ``measured``,
        ``larger_gpu_cell``, ``validated``, ``fewer_nodes`` and ``tables`` only when present."""
        absent = {name for name in ("explanation", "current", "nearest", "measured", "larger_gpu_cell", "validated",
                                    "fewer_nodes", "tables")
                  if getattr(self, name) is None}
        return self.model_dump(mode="json", exclude=absent)


def validated_length(model: Model) -> int:
    """The longest context `model` is known to handle: its native context, or with YaRN up to what Qwen's model
    cards validate (`YARN_VALIDATED_FACTOR` times it, at most `YARN_VALIDATED_TOKENS`); a model with a RoPE
    scaling of its own, or one that is not Qwen's (`Model.qwen_yarn`), its native context."""
    if model.rope_scaling is not None or not model.qwen_yarn:
        return model.native_context
    return max(model.native_context, min(int(YARN_VALIDATED_FACTOR * model.native_context), YARN_VALIDATED_TOKENS))


def token_budget(max_model_len: int, sp: int) -> int:
    """Trinity's default ``max_token_len_per_gpu``: ``ceil(2 * max_model_len / sp)``."""
    return ceil(2 * max_model_len / sp)


def least_token_budget(max_model_len: float, sp: int) -> int:
    """The smallest ``max_token_len_per_gpu`` verl takes: an SP group's micro-batch holds the longest
    sequence, ``ceil(max_model_len / sp)``."""
    return ceil(max_model_len / sp)


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


def lowered_reach(longest: int, sp: int) -> int:
    """The longest ``max_model_len`` a lowered token budget reaches for a setting whose longest length at
    Trinity's default is `longest`: the tokens per GPU that default holds, times SP (then one sequence fills
    an SP group's micro-batch)."""
    return sp * token_budget(longest, sp)


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
    memory at `length`: the first row, up to L's (the next row up; every row when L is past the table),
    where a setting that ran out of memory (`failed_settings`) includes it. None when no row says so, or
    there is no such table."""
    failures = failures_by_row(model, rows, settings, gpus)
    upto = next((row for row, _ in failures if row >= length), failures[-1][0] if failures else 0)
    return first_failure(failures, setting, upto)


def refuting_cell(model: Model, rows: Sequence[tuple[int, int]], settings: Mapping[tuple[int, int], Setting],
                  gpus: int, setting: Setting, length: int, *, others_only: bool = False) -> tuple[int, int] | None:
    """(count, row) of the table that says `setting` runs out of memory on `gpus` GPUs at `length`: the
    count's own (`refuting_row`), else the first of the tables for more GPUs that says it runs out of memory
    there (what runs out of memory on more GPUs does on fewer: each holds more of the states, and the same
    tokens), else, for an Offload setting, the nearest table for fewer GPUs that does (no GPU holds any of the
    states, so each holds as much on any count); `within_refuting_tables` caps the estimates so. `others_only`:
    the tables for other counts alone. None when no table says so."""
    counts = sorted({n for n, _ in rows})
    order = ([] if others_only else [gpus]) + [n for n in counts if n > gpus] + (
        [n for n in reversed(counts) if n < gpus] if setting.offload else [])
    return next(((n, row) for n in order if n in counts
                 and (row := refuting_row(model, rows, settings, n, setting, length)) is not None), None)


def failures_by_row(model: Model, rows: Sequence[tuple[int, int]], settings: Mapping[tuple[int, int], Setting],
                    gpus: int) -> list[tuple[int, tuple[Setting, ...]]]:
    """(row, `failed_settings` there) for each row of the table for `gpus` GPUs, shortest first."""
    return [(row, failed_settings(model, gpus, settings.get((gpus, row))))
            for row in sorted(row for n, row in rows if n == gpus)]


def first_failure(failures: list[tuple[int, tuple[Setting, ...]]], setting: Setting, upto: int) -> int | None:
    """The first row of `failures_by_row`, up to `upto`, where a setting that ran out of memory includes
    `setting`; None when there is none."""
    return next((row for row, failed in failures if row <= upto and any(f.includes(setting) for f in failed)), None)


def own_table_limit(failures: list[tuple[int, tuple[Setting, ...]]], setting: Setting) -> int:
    """The longest length at which a count's own table (its `failures_by_row`) does not say `setting` runs
    out of memory: the row before the first that says so (0 when that is its first row), or `MAX_TOKENS`
    when none does (`refuting_row`'s rule, for every length at once)."""
    first = first_failure(failures, setting, MAX_TOKENS)
    return MAX_TOKENS if first is None else max((row for row, _ in failures if row < first), default=0)


class TableCells(NamedTuple):
    """A model's cells in a GPU type's tables."""

    rows: tuple[tuple[int, int], ...]
    """(GPU count, max_model_len) of every row of the tables that have the model's cells."""
    settings: dict[tuple[int, int], Setting]
    """The setting the model's cell names at each row where something trains."""
    columns: Mapping[int, str]
    """Per GPU count, the name its table gives the model's cells (`Table.name_for`)."""


def table_cells(tables: Sequence[Table], model: Model) -> TableCells:
    """`model`'s cells in those of `tables` (a GPU type's, one per GPU count: `Catalog.tables_for` picks those that
    speak for a GPU type) that have them (`Table.name_for`)."""
    columns = {table.gpus: name for table in tables if (name := table.name_for(model)) is not None}
    named = [table for table in tables if table.gpus in columns]
    rows = tuple((table.gpus, row.max_model_len) for table in named for row in table.rows)
    settings = {(table.gpus, row.max_model_len): setting for table in named for row in table.rows
                if (setting := row.setting(columns[table.gpus])) is not None}
    return TableCells(rows, settings, MappingProxyType(columns))


def vouching_cell(model: Model, rows: Sequence[tuple[int, int]], settings: Mapping[tuple[int, int], Setting],
                  gpus: int, setting: Setting, length: int, *, columns: Mapping[int, str],
                  larger: Sequence[tuple[str, TableCells]] = ()) -> tuple[Evidence, SourceCell] | None:
    """The cell that vouches for `setting` on `gpus` GPUs at `length`, given a GPU type's `table_cells` for
    `model` (its `columns` per count name whose cells they are): documented when the cell at L's row (the
    next row up) of the table for `gpus` GPUs is exactly the setting; otherwise inferred from the shortest row at or beyond L whose cell the setting includes, in
    the table for `gpus` GPUs, else in the table for the most GPUs fewer than it (what trains on fewer GPUs
    trains on more: the states shard wider, and an SP at least the cell's keeps the tokens per GPU at most
    the cell's), unless the table for `gpus` GPUs, of this GPU type or of one with at least its memory (`larger`,
    `larger_tables`), says the cell's setting runs out of memory at L (`refuting_row`: a measurement decides). A table of one GPU vouches for no other count (one
    GPU has no collective-communication buffers), and no table vouches past `MAX_ESTIMATED_GPUS`. None when
    no cell vouches."""
    own = sorted(row for n, row in rows if n == gpus and row >= length)
    if own and settings.get((gpus, own[0])) == setting:
        return "documented", SourceCell(model=columns[gpus], gpus=gpus, max_model_len=own[0], setting=setting.label)
    refuters = [(rows, settings), *((cells.rows, cells.settings) for _, cells in larger)]
    for count in sorted({n for n, _ in rows if vouches_for(n, gpus)}, reverse=True):
        for row in sorted(row for n, row in rows if n == count and row >= length):
            cell = settings.get((count, row))
            if cell and setting.includes(cell) and (count == gpus or all(
                    refuting_row(model, their_rows, their_settings, gpus, cell, length) is None
                    for their_rows, their_settings in refuters)):
                return "inferred", SourceCell(model=columns[count], gpus=count, max_model_len=row, setting=cell.label)
    return None


class TablesVerdict(Frozen):
    """What a GPU type's tables say of one setting on one GPU count at one length: it trains (a cell
    vouches), or it runs out of memory (a row of the count's own table, or of a table for more GPUs, says so:
    `refuting_cell`)."""

    trains: bool
    evidence: Evidence | None = Field(description="documented or inferred when it trains; null when it does not")
    source: SourceCell = Field(description="the cell that says so (its setting '-' where nothing trained)")

    def cited(self, origins: Mapping[int, str]) -> TablesVerdict:
        """The verdict, its cell naming a borrowed table's GPU type (`SourceCell.cited`)."""
        return self.model_copy(update={"source": self.source.cited(origins)})


def tables_verdict(model: Model, rows: Sequence[tuple[int, int]], settings: Mapping[tuple[int, int], Setting],
                   gpus: int, setting: Setting, length: int, *, columns: Mapping[int, str],
                   larger: Sequence[tuple[str, TableCells]] = ()) -> TablesVerdict | None:
    """The `TablesVerdict` of a GPU type's `table_cells` for `model` (`columns` as `vouching_cell` takes
    them), or where they say nothing, of the tables of GPU types with at least its memory (`larger`: their names
    and cells, `larger_tables`) that say the setting runs out of memory; None when none says anything."""
    vouching = vouching_cell(model, rows, settings, gpus, setting, length, columns=columns, larger=larger)
    if vouching is not None:
        return TablesVerdict(trains=True, evidence=vouching[0], source=vouching[1])
    for gpu, cells in ((None, TableCells(tuple(rows), dict(settings), columns)), *larger):
        refuting = refuting_cell(model, cells.rows, cells.settings, gpus, setting, length)
        if refuting is not None:
            count, row = refuting
            return TablesVerdict(trains=False, evidence=None,
                                 source=SourceCell(model=cells.columns[count], gpus=count, max_model_len=row,
                                                   setting=cell_text(cells.settings.get((count, row))), gpu=gpu))
    return None


def larger_gpu_types(catalog: Catalog, gpu: str) -> tuple[GpuType, ...]:
    """The other GPU types with tables and at least `gpu`'s memory, the least memory first: where their tables
    say a setting runs out of memory on a GPU count at a length, it does on `gpu` too (the A100-80GB's for the
    H100-80GB, which reports a little less, and the A800-80GB)."""
    own = catalog.gpu(gpu)
    return tuple(sorted((other for other in catalog.documented_gpu_types
                         if other.name != own.name and other.memory_gib >= own.memory_gib),
                        key=lambda other: other.memory_gib))


def own_table_cells(catalog: Catalog, gpu: str, model: Model) -> tuple[Mapping[int, str], TableCells]:
    """(origins, cells): which GPU type each table `gpu` borrows comes from (`Catalog.table_origins`), and the
    `table_cells` for `model` of the tables that speak for `gpu` (`Catalog.tables_for`: its own, and those it
    borrows of GPU types with the same memory)."""
    return catalog.table_origins(gpu, model), table_cells(catalog.tables_for(gpu, model).tables, model)


def larger_tables(catalog: Catalog, gpu: str, model: Model) -> tuple[tuple[str, TableCells], ...]:
    """(name, `table_cells` for `model`) of each of `larger_gpu_types` whose tables have the model's cells."""
    found = ((other.name, table_cells(other.tables, model)) for other in larger_gpu_types(catalog, gpu))
    return tuple((name, cells) for name, cells in found if cells.rows)


def check_host_ram(host_ram_gb: float | None) -> None:
    """`QueryError` unless a node's host memory, if given, is above 0 and at most `MAX_HOST_RAM_GB`."""
    if host_ram_gb is not None and not 0 < host_ram_gb <= MAX_HOST_RAM_GB:
        raise QueryError(f"--host-ram must be above 0 and at most {MAX_HOST_RAM_GB} GB, got {host_ram_gb:g}")


def make_query(
    catalog: Catalog,
    *,
    model: str,
    gpu: str | None = None,
    objective: Objective = "cheapest",
    budget_gpus: int | None = None,
    exact: bool = False,
    max_model_len: int | None = None,
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
    token_budget: TokenBudgetMode = "default",
    host_ram_gb: float | None = None,
    node_gpus: int = NODE_GPUS,
    rollout_gpus: int | None = None,
    node_source: str = "--node-gpus",
    host_ram_source: str = "--host-ram",
) -> Query:
    """Resolve names and check that the request makes sense; `QueryError` (one line) when it does not.

    `budget_gpus` defaults, where the objective allows, to the largest documented GPU count (one node
    without tables); for the fewest GPUs, to `MAX_ESTIMATED_GPUS`.
    `node_gpus` (default 8) is the node size: a trainer on more GPUs uses whole nodes and keeps each SP
    group in one node; messages say it came from `node_source` (and `host_ram_gb` from `host_ram_source`).
    With `rollout_gpus`, the trainer's count
    leaves them a `rollout_layout`: trainer and rollout in one node; the trainer in part of a node and the
    rollout filling it and whole nodes more; or the trainer on whole nodes and the rollout on the nodes
    after them.
    """
    check_types(("catalog", catalog, Catalog), ("budget_gpus", budget_gpus, int | None), ("exact", exact, bool),
                ("max_model_len", max_model_len, int | None), ("sp", sp, int | None), ("env", env, bool | None),
                ("offload", offload, bool | None), ("top", top, int), ("weights", weights, Weights | None),
                ("workers", workers, int), ("seed", seed, int), ("memory", memory, MemoryModel | None),
                ("host_ram_gb", host_ram_gb, float | None), ("node_gpus", node_gpus, int),
                ("node_source", node_source, str), ("host_ram_source", host_ram_source, str),
                ("rollout_gpus", rollout_gpus, int | None))
    check_choice("objective", objective, get_args(Objective))
    check_choice("estimate", estimate, get_args(EstimateMode))
    check_token_budget(token_budget, estimate)
    check_time_limit(time_limit_s)
    check_seed(seed)
    resolved = catalog.model(model)
    gpu_names = (catalog.gpu(gpu).name,) if gpu is not None else tuple(g.name for g in catalog.documented_gpu_types)
    memory = memory if memory is not None else load_memory_model()
    margin = resolve_margin(memory, margin)
    check_counts(("--gpus", budget_gpus, MAX_GPUS), ("--len", max_model_len, MAX_TOKENS), ("--sp", sp, MAX_GPUS),
                 ("--top", top, MAX_TOP), ("--node-gpus", node_gpus, MAX_GPUS), ("--workers", workers, MAX_WORKERS))
    if rollout_gpus is not None and not 0 <= rollout_gpus <= MAX_GPUS:  # 0: no rollout GPUs beside the trainer
        raise QueryError(f"--rollout-gpus must be a whole number from 0 to {MAX_GPUS}, got {brief(rollout_gpus)}")
    _check_objective(objective, budget_gpus, max_model_len, exact)
    check_host_ram(host_ram_gb)
    if sp is not None:
        _check_sp(resolved, sp, budget_gpus if exact else None, budget_gpus, node_gpus, node_source)
    open_budget = budget_gpus is None and objective == "min_gpus"  # tables vouch past their counts too
    if open_budget:
        budget_gpus = MAX_ESTIMATED_GPUS
    elif budget_gpus is None:
        budget_gpus = max((count for name in gpu_names for count in catalog.tabled_counts(name)),
                          default=NODE_GPUS)
    return Query(
        model=resolved.name,
        gpus=gpu_names,
        objective=objective,
        budget_gpus=budget_gpus,
        open_budget=open_budget,
        exact=exact,
        max_model_len=max_model_len,
        sp=sp,
        env=env,
        offload=offload,
        top=top,
        weights=weights if weights is not None else load_weights(),
        time_limit_s=time_limit_s,
        workers=workers,
        seed=seed,
        estimate=estimate,
        memory=memory,
        margin=margin,
        token_budget=token_budget,
        host_ram_gb=host_ram_gb,
        node_gpus=node_gpus,
        node_source=node_source,
        host_ram_source=host_ram_source,
        rollout_gpus=rollout_gpus,
    )


def _check_objective(objective: Objective, budget_gpus: int | None, max_model_len: int | None, exact: bool) -> None:
    """`QueryError` where the objective lacks what it needs (a budget to maximise the length within, a length
    otherwise) or is given what it chooses (the length, or with ``--exact`` the GPU count)."""
    if objective == "max_len":
        if budget_gpus is None:
            raise QueryError("--maximize len needs a GPU budget: --gpus N")
        if max_model_len is not None:
            raise QueryError("--maximize len chooses the length: drop --len")
    elif max_model_len is None:
        wanted = "--minimize gpus" if objective == "min_gpus" else "a cheapest plan"
        raise QueryError(f"{wanted} needs a length: --len L (tokens, e.g. 32768)")
    if exact and budget_gpus is None:
        raise QueryError("--exact needs --gpus N")
    if exact and objective == "min_gpus":
        raise QueryError("--minimize gpus chooses the GPU count: drop --exact")


def _check_sp(model: Model, sp: int, exact_gpus: int | None, budget_gpus: int | None, node_gpus: int,
              node_source: str) -> None:
    """`QueryError`, naming the degrees allowed, for an SP degree that `model`'s heads refuse, that the trainer GPUs
    of an exact count (`exact_gpus`) cannot lay out, that needs more GPUs than the budget, or that spans a node."""
    heads, kv_heads = model.num_attention_heads, model.num_key_value_heads
    problem = sp_rule_violation(heads, kv_heads, sp)
    if problem:
        allowed = ", ".join(str(s) for s in range(1, heads + 1) if not sp_rule_violation(heads, kv_heads, s))
        raise QueryError(f"--sp {sp} is not allowed for {model.name}: {problem}; its heads allow {allowed}")
    layout = sp_layout_violation(model, exact_gpus, sp, node_gpus, node_source) if exact_gpus else None
    if exact_gpus and layout:
        allowed = ", ".join(str(s) for s in range(1, exact_gpus + 1)
                            if not sp_layout_violation(model, exact_gpus, s, node_gpus))
        gpus = f"{counted(exact_gpus, 'trainer GPU')} the plan must use"
        why = f"does not divide the {gpus}" if exact_gpus % sp else f"is not allowed on the {gpus}: {layout}"
        raise QueryError(f"--sp {sp} {why} (the degrees that divide them, that {model.name}'s heads allow and "
                         f"that keep an SP group in a node: {allowed})")
    if budget_gpus is not None and sp > budget_gpus:  # one SP group takes more GPUs than the budget has
        allowed = ", ".join(str(s) for s in range(1, budget_gpus + 1) if not sp_rule_violation(heads, kv_heads, s))
        raise QueryError(f"--sp {sp} needs at least {sp} trainer GPUs, more than the budget of {budget_gpus} (the "
                         f"degrees up to {budget_gpus} that {model.name}'s heads allow: {allowed})")
    if sp > node_gpus:  # its GPUs would span nodes, and it cannot divide one
        raise QueryError(f"--sp {sp} is not allowed with nodes of {node_gpus} GPUs ({node_source}): an SP group "
                         "must fit in one node")


def resolve_margin(memory: MemoryModel, margin: float | None) -> float:
    """The safety margin asked for, or the memory model's default; `QueryError` outside [0, 1)."""
    check_types(("margin", margin, float | None))
    margin = memory.margin if margin is None else margin
    if not 0 <= margin < 1:
        raise QueryError(f"--margin is a fraction from 0 to below 1, got {brief(margin)}")
    return margin


def check_token_budget(token_budget: object, estimate: EstimateMode) -> None:
    """`QueryError` unless `token_budget` is a `TokenBudgetMode` that the `estimate` mode allows (``auto``
    lowers the budgets of estimated plans: not with estimates off)."""
    check_choice("token_budget", token_budget, get_args(TokenBudgetMode))
    if token_budget == "auto" and estimate == "never":
        raise QueryError("--token-budget auto lowers the token budget of estimated plans, which --no-estimate turns "
                         "off: drop one of them")


def check_choice(name: str, value: object, accepted: tuple[object, ...]) -> None:
    """`QueryError` unless `value` is one of `accepted`."""
    if value not in accepted:
        raise QueryError(f"{name} must be one of {', '.join(map(str, accepted))}, got {value!r}")


def check_seed(seed: int) -> None:
    """`QueryError` unless `seed` is CP-SAT's random seed: a whole number from 0 to `MAX_SEED`."""
    check_types(("seed", seed, int))
    if not 0 <= seed <= MAX_SEED:
        raise QueryError(f"seed must be from 0 to {MAX_SEED} (CP-SAT's seed is 32-bit), got {brief(seed)}")


def check_time_limit(time_limit_s: float) -> None:
    """`QueryError` unless `time_limit_s` is a number of seconds above 0 and at most `MAX_TIME_LIMIT_S`
    (CP-SAT's search time)."""
    check_types(("time_limit_s", time_limit_s, float))
    if not 0 < time_limit_s <= MAX_TIME_LIMIT_S:
        raise QueryError(f"time_limit_s must be above 0 seconds and at most {MAX_TIME_LIMIT_S:.0f}, got "
                         f"{brief(time_limit_s)}")


def check_counts(*counts: tuple[str, int | None, int]) -> None:
    """`QueryError` unless each (flag, value, most) value is None or from 1 to `most` (its type checked
    before, with `check_types`)."""
    for name, value, most in counts:
        if value is not None and value < 1:
            raise QueryError(f"{name} must be at least 1, got {brief(value)}")
        if value is not None and value > most:
            raise QueryError(f"{name} must be at most {most}, got {brief(value)}")


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


def rollout_layout_violation(gpus: int, rollout_gpus: int | None, node_gpus: int) -> str | None:
    """Why `gpus` trainer GPUs and `rollout_gpus` rollout GPUs have no `rollout_layout` on nodes of
    `node_gpus`; None when they have one (or when no rollout GPUs are given)."""
    if not rollout_gpus or rollout_layout(gpus, rollout_gpus, node_gpus) is not None:
        return None
    return (f"{gpus} trainer + {rollout_gpus} rollout GPUs (--rollout-gpus) fit neither one node of {node_gpus}, "
            f"nor whole nodes with the trainer in one of them, nor with the trainer on whole nodes")


@lru_cache(maxsize=4096)
def sp_degrees(model: Model, gpus: int, node_gpus: int | None = None) -> tuple[int, ...]:
    """The SP degrees that can run `model` on `gpus` trainer GPUs (`sp_layout_violation`: the heads rules, SP
    dividing the GPUs, and with `node_gpus` each SP group inside a node when the trainer spans nodes)."""
    return tuple(sp for sp in range(1, gpus + 1) if not sp_layout_violation(model, gpus, sp, node_gpus or gpus))


def sp_layout_violation(
    model: Model, gpus: int, sp: int, node_gpus: int, source: str = "--node-gpus"
) -> str | None:
    """Why SP degree `sp` cannot run `model` on `gpus` trainer GPUs in nodes of `node_gpus` (whose size
    comes from `source`): the heads rules, SP dividing the GPUs, and each SP group inside a node when the
    trainer spans nodes; None when it can."""
    heads = sp_rule_violation(model.num_attention_heads, model.num_key_value_heads, sp)
    if heads:
        return f"{model.name}: {heads}"
    if gpus % sp:
        return f"SP={sp} does not divide {counted(gpus, 'GPU')}"
    if not sp_within_node(gpus, node_gpus, sp):
        return f"{gpus} GPUs span nodes of {node_gpus} ({source}), and SP={sp} does not divide a node"
    return None


class Placement(Frozen):
    """Where a job runs: its pool, node indexes within the pool, GPUs, and the planner's plan."""

    job: str
    pool: str
    model: str = Field(description="the job's model, as the catalogue names it")
    gpu: str = Field(description="the pool's GPU type, as the catalogue names it")
    nodes: tuple[int, ...]
    gpu_indexes: tuple[int, ...] = Field(description=(
        "the GPUs the job takes on each of its nodes, as CUDA_VISIBLE_DEVICES numbers them: a range of a "
        "shared node, or all of a node taken whole"))
    trainer_gpus: int
    rollout_gpus: int
    plan: Plan
    widened_from: int | None = Field(default=None, description=(
        "the trainer GPUs the job was placed with, where it then grew onto idle GPUs of its node (a plan on "
        "more GPUs there is cheaper, or longer for an at_least job); null otherwise"))
    host_memory_gb: float | None = Field(default=None, description=(
        "in a pool that gives host_ram_gb: the host memory the job needs on each of its nodes, GiB (with Offload its "
        "states or the model while it loads, whichever is more; without, the model while it loads); null otherwise"))


def index_range(indexes: tuple[int, ...]) -> str:
    """Consecutive GPU indexes in words: ``4-6``, or ``5`` for one."""
    return f"{indexes[0]}-{indexes[-1]}" if len(indexes) > 1 else f"{indexes[0]}"


class Unplaced(Frozen):
    """A job left out, and why."""

    job: str
    reason: str


class ClusterResult(_Timed):
    """The placement of a fleet's jobs: status, the first objective and its proven bound, and the jobs."""

    status: Status
    objective: int | None = Field(description="placed priority, or nodes used with minimize='nodes'")
    objective_counts: PlacementCount = Field(default="priority", description=(
        "what objective and bound count: the placed jobs' priority (maximised), or with minimize='nodes' the "
        "nodes used (minimised)"))
    bound: int | None = Field(description="CP-SAT's proven bound on that objective (with `host_rounded`, on the "
                              "placement with the host memory rounded)")
    placements: tuple[Placement, ...]
    unplaced: tuple[Unplaced, ...]
    host_rounded: tuple[str, ...] = Field(default=(), description=(
        "pools whose jobs' host memory the placement rounded up into a few classes (the ways to fill "
        "a node were too many otherwise): safe, but optimal and the bound only as rounded, so the status is "
        "at best 'feasible'"))
    undecided_ways: int = Field(default=0, description=(
        "the planner's questions about a job's ways to run (one pool, one GPU count) that ran out of time: those "
        "ways were left out, or their plans may not be their best, so the status is at best 'feasible'"))
    wall_time_s: float = Field(default=0.0, exclude=True, description="seconds spent placing (not compared)")
    interrupted: bool = Field(default=False, description=(
        "whether Ctrl-C stopped the search early: the placement is the best found by then"))

    @property
    def gap(self) -> float | None:
        """How far the first stage's objective may be from its bound, relative to the bound: 0 where it reaches the
        bound, which proves the placement the best only where `status` is ``optimal`` (with ways left undecided, or
        host memory rounded, the bound is that of the ways weighed)."""
        if self.objective is None or self.bound is None or self.bound == 0:
            return None
        return abs(self.bound - self.objective) / abs(self.bound)
