"""What the planner answers: plans (`Plan`, with their cautions), answers for a GPU type (`Answer`), a Trinity
config's settings judged (`CurrentSettings`, with the verdict's words: `config_verdict`), maps over GPU budgets
(`GpuMap`), a fleet's placement (`ClusterResult`), a memory model fitted on cells (`Calibration`), and a Trinity
fragment's settings as data (`TrinitySettings`); the results printed as top-level JSON say their format
(`Versioned`)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from math import ceil
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, NamedTuple, get_args

from annotated_types import Ge, Gt, Le
from pydantic import (
    AllowInfNan,
    BaseModel,
    ConfigDict,
    Field,
    FiniteFloat,
    GetJsonSchemaHandler,
    NonNegativeInt,
    PlainSerializer,
    PositiveInt,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidatorFunctionWrapHandler,
    computed_field,
    model_serializer,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from solver import __version__
from solver.query import (
    BUDGET_ABOVE_VERDICT_CODES,
    BYPASS_OLD_LOGPROBS,
    REFUSED_CONFIG_CODES,
    REFUSING_BROKEN_RULES,
    ConfigAdapter,
    ConfigProblemCode,
    Objective,
    Pins,
    Query,
    broken_rule_refuses,
    lora_targets_given,
    margin_keeping,
    token_cap_words,
)
from solver.rules import (
    COMMAND_OPTIONS,
    ONE_SEQUENCE_WIDER_WORDS,
    TARGETS_FIX,
    BrokenRuleCode,
    Evidence,
    OptionNames,
    SourceCell,
    TablesVerdict,
    batch_over_trainer_gpus_words,
    counted_tokens,
    excluded_adapted_words,
    fewer_reasons,
    lora_moe_unsaved_words,
    lora_saved_split_words,
    one_transformers_taken,
    one_transformers_words,
    other_layout,
    padded_sequences,
    smaller_card_words,
    tables_refute_words,
    token_budget,
    trainer_gpus_on_node,
    trainer_node_count,
    transformers_4_unloaded_words,
    uneven_split_caution,
    validated_length,
)
from solver.tables import (
    FAST_NODE_INTERCONNECTS,
    HOST_HELD_CRITICS,
    HOST_NEED_WORDS,
    MAX_HOST_RAM_GB,
    NODE_GPUS,
    POOL_GPU_SOURCE,
    SMALL_CARD_GIB,
    WAYS_QUESTIONS_PER_SECOND,
    YARN_VALIDATED_FACTOR,
    YARN_VALIDATED_TOKENS,
    BatchDivisor,
    CriticStates,
    ExpertLayout,
    Fleet,
    Frozen,
    GpuType,
    LeftOutWhenNone,
    MemoryModel,
    Model,
    ModelLoading,
    NodeInterconnect,
    QueryError,
    Setting,
    TokenBudgetMode,
    TrinityVersion,
    and_joined,
    check_types,
    consecutive_runs,
    counted,
    host_moment_words,
    host_need_detail,
    host_need_purpose,
    left_out_when_none,
    lower_host_count_hint,
    named_jobs,
    planned_release,
    remove_padding_violation,
    shown_number,
    shown_parameters,
    trinity_release,
    without_none,
)
from solver.tables.model_config import NO_LIMIT_LENGTH
from solver.tables.peft_match import peft_target_refusal
from solver.tables.peft_names import LoraTargets

if TYPE_CHECKING:  # Python 3.11's typing.Self, for the type checker alone (annotations are not evaluated)
    from typing_extensions import Self

Status = Literal["optimal", "feasible", "infeasible", "unknown"]
Amount = Annotated[float, Ge(0), AllowInfNan(False)]
"""GiB or a cost in a result: finite and not negative, so that a result rebuilt from its JSON (`Answer`) holds what the
planner gives (counts and lengths are 1 or more, as `PositiveInt`)."""
GiBFigure = Annotated[FiniteFloat, PlainSerializer(lambda gib: round(gib, 2), return_type=float,
                                                   when_used="json")]
"""A memory model figure in GiB: finite, kept whole, so that the text rounds it once (as `solve memory` does), and
rounded to two decimals where JSON is made."""
HostRamGb = Annotated[float, Gt(0), AllowInfNan(False),
                      PlainSerializer(lambda gib: int(gib) if gib.is_integer() else gib)]  # the schema: the field's
"""The host memory per node a query was given (--host-ram, GiB), as its JSON echoes it: a whole amount without its
``.0`` (512, not 512.0), in ``solve --json`` and ``solve map --json`` alike."""
PlacementCount = Literal["priority", "nodes"]
"""What a cluster placement's objective counts: the placed jobs' priority, or the nodes used (--minimize nodes)."""

ENV_VARIABLE = ("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
"""The environment variable that turns Env on, and its value."""
ROCM_ENV_VARIABLE = "PYTORCH_HIP_ALLOC_CONF"
"""The allocator variable PyTorch's ROCm builds read where `ENV_VARIABLE`'s is not set; its CUDA builds too from 2.10
on (their ``libc10``'s ``AcceleratorAllocatorConfig``, which gives the CUDA allocator its expandable segments)."""
GENERIC_ENV_VARIABLE = "PYTORCH_ALLOC_CONF"
"""The device-agnostic allocator variable: PyTorch 2.10 and 2.11 take Env from it after the other two (read from the
x86-64 CUDA wheels' ``libc10``: 2.9's ``AcceleratorAllocatorConfig`` reads it first, but 2.9's CUDA allocator parses
only ``PYTORCH_CUDA_ALLOC_CONF``, in ``libc10_cuda``'s own ``CUDAAllocatorConfig``)."""
ALLOC_CONF_VARIABLES = (ENV_VARIABLE[0], ROCM_ENV_VARIABLE, GENERIC_ENV_VARIABLE)
"""The allocator variables in the order PyTorch 2.10 and 2.11 read them on every GPU, the first one set being the one
read (PyTorch's CUDA builds before 2.10 take Env from the first only)."""


def expandable_segments(setting: str) -> list[str]:
    """The values an allocator setting (PYTORCH_CUDA_ALLOC_CONF's) gives expandable segments, in order."""
    return [value.strip() for key, _, value in (part.partition(":") for part in setting.split(","))
            if key.strip() == "expandable_segments"]


ENV_EXPORT = f"export {ENV_VARIABLE[0]}={ENV_VARIABLE[1]}"
"""The shell line that turns Env on; it must run before Ray starts (`env_when`)."""


LONG_LENGTH_VARIABLE = ("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1")
"""What vLLM needs before it takes a max_model_len past what it derives from the model's config."""


def plan_environment(plan: Plan, model: Model, shared_gpus: tuple[int, ...] | None = None) -> dict[str, str]:
    """The environment variables to export before Ray starts for `plan` of `model`, in the order the apply lines and
    the fragment say them: a node's GPUs the job takes part of (`shared_gpus`: ``CUDA_VISIBLE_DEVICES``), vLLM's
    `LONG_LENGTH_VARIABLE` past the longest length vLLM derives for the model as the plan writes it
    (`Model.vllm_longest_as_written`), and Env's `ENV_VARIABLE`. No config key sets them
    (`TrinitySettings.environment`)."""
    wanted = [(bool(shared_gpus), ("CUDA_VISIBLE_DEVICES", ",".join(map(str, shared_gpus or ())))),
              (plan.max_model_len > model.vllm_longest_as_written(plan.max_model_len), LONG_LENGTH_VARIABLE),
              (plan.env, ENV_VARIABLE)]
    return dict(variable for wants, variable in wanted if wants)


NO_CHECKPOINT_SILENT_GPU = "H20-96GB"
"""The GPU type whose tables in Trinity-RFT's guide do not say whether its runs saved Hugging Face weights (the
guide's A100 offload measurements saved none: `no_checkpoint_words`)."""


def no_checkpoint_words(gpu: str | None) -> str:
    """Where an Offload plan's ``trainer.save_hf_checkpoint: never`` comes from, said for a plan on `gpu` (None: not
    known): the A100 offload measurements of Trinity-RFT's guide, and on the H20 that its own tables do not say."""
    silent = " (its H20 tables do not say)" if gpu == NO_CHECKPOINT_SILENT_GPU else ""
    return f"as in the A100 offload measurements of Trinity-RFT's guide{silent}"


def env_when(several_nodes: bool) -> str:
    """When `ENV_EXPORT` must run, in words: before Ray starts, and for a job on several nodes on each of them (each
    node's Ray workers take the environment its ``ray start`` had; Trinity passes the variable to none of them)."""
    return "on every node of the job before `ray start` there" if several_nodes else "before Ray starts"


class CautionCode(str, Enum):
    """The machine-readable code of each kind of caution, beside its words (`Plan.caution_codes`,
    `solver.memory.MemoryEstimate.caution_codes`): the one source of the codes that docs/json.md's table documents,
    in the order a result shows its cautions (`in_shown_order` keeps to it)."""

    UNCHECKED_CONFIG_LAYOUT = "unchecked-config-layout"
    TRANSFORMERS_4_NO_CLASS = "transformers-4-no-class"
    PADDED_MICRO_BATCHES = "padded-micro-batches"
    PAST_VALIDATED_LENGTH = "past-validated-length"
    YARN_UNVALIDATED_MODEL = "yarn-unvalidated-model"
    PAST_NATIVE_ON_OWN_SCALING = "past-native-on-own-scaling"
    PAST_NATIVE_NO_YARN = "past-native-no-yarn"
    PAST_DERIVED_LENGTH = "past-derived-length"
    PAST_SLIDING_WINDOW = "past-sliding-window"
    TABLES_SAY_OUT_OF_MEMORY = "tables-say-out-of-memory"
    THIN_HEADROOM = "thin-headroom"
    FAR_BEYOND_CALIBRATION = "far-beyond-calibration"
    HOST_MEMORY_UNCHECKED = "host-memory-unchecked"
    SINGLE_GPU_ADVISED_AGAINST = "single-gpu-advised-against"
    UNEVEN_DATA_PARALLEL = "uneven-data-parallel"
    BATCH_DIVIDES_TRAINER_GPUS = "batch-divides-trainer-gpus"
    ROCM_ENV_MAY_NOT_APPLY = "rocm-env-may-not-apply"
    SP_OVER_PCIE = "sp-over-pcie"
    INTERCONNECT_NOT_STATED = "interconnect-not-stated"
    TRAINER_SPANS_NODES = "trainer-spans-nodes"
    NODE_HOST_MEMORY_UNCHECKED = "node-host-memory-unchecked"
    ROLLOUT_ENGINES_UNHELD = "rollout-engines-unheld"
    LORA_TARGETS_ONE_TRANSFORMERS = "lora-targets-one-transformers"
    LORA_EXCLUDED_ADAPTED = "lora-excluded-adapted"
    LORA_MOE_CONFIG_UNSAVED = "lora-moe-config-unsaved"
    LORA_TARGETS_SAVED_SPLIT = "lora-targets-saved-split"


BESIDE_CAUTION_CODES = (
    CautionCode.PAST_VALIDATED_LENGTH, CautionCode.YARN_UNVALIDATED_MODEL, CautionCode.PAST_NATIVE_ON_OWN_SCALING,
    CautionCode.PAST_NATIVE_NO_YARN, CautionCode.PAST_DERIVED_LENGTH, CautionCode.PAST_SLIDING_WINDOW,
    CautionCode.THIN_HEADROOM, CautionCode.HOST_MEMORY_UNCHECKED, CautionCode.ROLLOUT_ENGINES_UNHELD)
"""The cautions a second plan shown beside the best one says (`Plan.cautions_beside`): those on whether it trains as
shown, its length's, thin headroom, a host memory need nothing checks and rollout GPUs too small for the model."""


class Caution(NamedTuple):
    """A caution: its `code` and its `words`, as the text shows them."""

    code: CautionCode
    words: str


def in_shown_order(cautions: Iterable[Caution]) -> tuple[Caution, ...]:
    """`cautions` in the order a result shows them: their codes' in `CautionCode` (the order of its members)."""
    order = list(CautionCode)
    return tuple(sorted(cautions, key=lambda caution: order.index(caution.code)))


@dataclass(frozen=True)
class ReasonWords:
    """Words of a no-plan reason, or of a part of one, as data: their `text`, and the codes of the cautions it says in
    short beside a plan it names (`Plan.cautioned`), carried from where each is said. Joined with ``+`` (to each other
    or to plain words, which say no caution) or `joined`; never formatted into an f-string, which would drop the
    codes (`__format__` refuses)."""

    text: str = ""
    caution_codes: frozenset[CautionCode] = frozenset()

    def __add__(self, other: ReasonWords | str) -> ReasonWords:
        if isinstance(other, str):
            return ReasonWords(self.text + other, self.caution_codes)
        return ReasonWords(self.text + other.text, self.caution_codes | other.caution_codes)

    def __radd__(self, other: str) -> ReasonWords:
        return ReasonWords(other + self.text, self.caution_codes)

    def __bool__(self) -> bool:
        return bool(self.text)

    def __format__(self, spec: str) -> str:
        raise TypeError("ReasonWords in an f-string would drop their caution codes: join them with + instead")

    @classmethod
    def joined(cls, separator: str, parts: Iterable[ReasonWords | str]) -> ReasonWords:
        """`parts` joined by `separator`, as `str.join` does, with the codes of each."""
        joined = cls()
        for index, part in enumerate(parts):
            joined = (joined + separator if index else joined) + part
        return joined

    @property
    def shown_codes(self) -> tuple[CautionCode, ...] | None:
        """`caution_codes` in the order a result shows cautions (`CautionCode`'s), as a result's JSON gives them; None
        where there are none."""
        return tuple(code for code in CautionCode if code in self.caution_codes) or None


def caution_fields(cautions: Sequence[Caution]) -> dict[str, tuple[Any, ...]]:
    """`cautions` as a result's two fields: ``cautions``, their words, and ``caution_codes``, their codes."""
    return {"cautions": tuple(caution.words for caution in cautions),
            "caution_codes": tuple(caution.code for caution in cautions)}


def check_codes(codes: Sequence[Enum], words: Sequence[str], field: str, named: str, each: str) -> None:
    """`ValueError` where `codes` (the field `field`) are given (JSON made before codes has none) but not one for each
    of `words` (`named`, each an `each`)."""
    if codes and len(codes) != len(words):
        raise ValueError(f"{len(codes)} {field} for {len(words)} {named}: give one code per {each}")


def check_caution_codes(cautions: Sequence[str], codes: Sequence[CautionCode]) -> None:
    """`check_codes` for a result's cautions."""
    check_codes(codes, cautions, "caution_codes", "cautions", "caution")


class ReasonCode(str, Enum):
    """The machine-readable code of an answer's reason for having no plan (`Answer.reason_code`), beside its
    words: the one source of the codes that docs/json.md's table documents."""

    NO_TABLE_FOR_MODEL = "no-table-for-model"
    ESTIMATE_FITS_NOTHING = "estimate-fits-nothing"
    EXACT_COUNT_HAS_NO_PLAN = "exact-count-has-no-plan"
    BUDGET_BELOW_SMALLEST_COUNT = "budget-below-smallest-count"
    ROLLOUT_LEAVES_NO_LAYOUT = "rollout-leaves-no-layout"
    LENGTH_BEYOND_REACH = "length-beyond-reach"
    SHORTER_LENGTH_UNDECIDED = "shorter-length-undecided"
    NOTHING_TRAINS = "nothing-trains"
    TIME_LIMIT = "time-limit"
    NOT_EXPLAINED = "not-explained"


class UnplacedCode(str, Enum):
    """The machine-readable code of why `solve cluster` left a job out (`Unplaced.reason_code`), beside its words:
    the one source of the codes that docs/json.md's table documents."""

    NO_ROOM = "no-room"
    PRIORITY_TIE = "priority-tie"
    NO_ROOM_UNPROVEN = "no-room-unproven"
    NO_WAY_TO_RUN = "no-way-to-run"
    ANOTHER_JOB_FITS_NOWHERE = "another-job-fits-nowhere"
    JOBS_DO_NOT_FIT_TOGETHER = "jobs-do-not-fit-together"
    HOST_MEMORY_ROUNDED = "host-memory-rounded"
    INTERRUPTED = "interrupted"
    TIME_LIMIT = "time-limit"


class MoveCode(str, Enum):
    """The machine-readable code of why a job that runs now moves (`Placement.move_reason_code`, with ``solve cluster
    --current``), or of what the file asks otherwise of one that stops (`Unplaced.stop_reason_code`: those up to
    `RELEASE_CHANGED`), beside its words: the one source of the codes that docs/json.md's table documents."""

    POOL_NOT_ALLOWED = "pool-not-allowed"
    POOL_NO_NODES = "pool-no-nodes"
    NODE_GONE = "node-gone"
    NODE_DOWN = "node-down"
    GPU_GONE = "gpu-gone"
    MODEL_CHANGED = "model-changed"
    LENGTH_CHANGED = "length-changed"
    ROLLOUT_CHANGED = "rollout-changed"
    TRAINING_CHANGED = "training-changed"
    RELEASE_CHANGED = "release-changed"
    NO_WAY_AT_COUNT = "no-way-at-count"
    NO_WAY_AS_IT_RUNS = "no-way-as-it-runs"
    MORE_PRIORITY = "more-priority"
    FEWER_NODES = "fewer-nodes"
    MOVE_UNPROVEN = "move-unproven"


class StayCode(str, Enum):
    """The machine-readable code of what a job that runs now and stays says (`Placement.stay_reason_code`, with
    ``solve cluster --current``), beside its words: the one source of the codes that docs/json.md's table documents."""

    SETTINGS_KEPT = "settings-kept"
    COUNT_KEPT = "count-kept"
    POOL_KEPT = "pool-kept"
    WAYS_CUT_SHORT = "ways-cut-short"


class PoolCode(str, Enum):
    """The machine-readable code of why a job `solve cluster` left out has no place in one pool it may use
    (`UnplacedPool.reason_code`): the one source of the codes that docs/json.md's table documents."""

    NO_ROOM = "no-room"
    NO_ROOM_UNPROVEN = "no-room-unproven"
    ROLLOUT_TAKES_POOL = "rollout-takes-pool"
    NO_LAYOUT_BESIDE_ROLLOUT = "no-layout-beside-rollout"
    NO_PLAN = "no-plan"
    NO_NODES = "no-nodes"


class BeyondCode(str, Enum):
    """The machine-readable code of each way an estimate lies beyond the memory model's calibration
    (`Plan.beyond_calibration_codes`, `solver.memory.MemoryEstimate.beyond_calibration_codes`), beside its words:
    the one source of the codes that docs/json.md's table documents."""

    LARGER_MODEL = "larger-model"
    SMALLER_MODEL = "smaller-model"
    OTHER_VOCABULARY = "other-vocabulary"
    MIXTURE_OF_EXPERTS = "mixture-of-experts"
    CAPPED_LOGITS = "capped-logits"
    OTHER_GPU_MEMORY = "other-gpu-memory"
    MORE_GPUS = "more-gpus"
    MORE_NODES = "more-nodes"
    FEWER_GPUS = "fewer-gpus"
    LARGER_SP = "larger-sp"
    WITHOUT_SP = "without-sp"
    MORE_TOKENS_PER_GPU = "more-tokens-per-gpu"


class Beyond(NamedTuple):
    """One way an estimate lies beyond the memory model's calibration: its `code` and its `words`."""

    code: BeyondCode
    words: str


def beyond_fields(beyond: Sequence[Beyond]) -> dict[str, Any]:
    """`beyond` as a result's two fields: ``beyond_calibration``, the words, and ``beyond_calibration_codes``."""
    return {"beyond_calibration": tuple(way.words for way in beyond),
            "beyond_calibration_codes": tuple(way.code for way in beyond)}


def _without_derived(raw: Any, name: str, derive: Callable[[dict[str, Any]], object],
                     errors: tuple[type[Exception], ...], said_by: str) -> Any:
    """A result's input `raw` (JSON read back) without its computed field `name`, which `derive` gives from the other
    fields: dropped where it agrees with them, a `ValueError` naming the fields (`said_by`, formatted with them:
    ``"max_token_len_per_gpu {max_token_len_per_gpu} says"``) where it does not; `raw` as it is without the field,
    and the field dropped unchecked where `derive` raises one of `errors` (the fields' own validation says what is
    wrong)."""
    if not isinstance(raw, dict) or name not in raw:
        return raw
    data = {key: value for key, value in raw.items() if key != name}
    try:
        derived = derive(data)
    except errors:
        return data
    if raw[name] != derived:
        raise ValueError(f"{name} is {raw[name]!r}, but {said_by.format_map(data)} {derived!r}")
    return data


SchemaVersion = Literal[1]
"""The version of the JSON the commands print (``schema_version``, in each top-level object of every schema in
docs/schema, which requires this value; but the purchase's, `PurchaseSchemaVersion`): raised when a key is removed or
renamed, or its type or meaning changes. A new key or code does not raise it (``rft_solver_version`` names the
release, whose schema files list them)."""
SCHEMA_VERSION: SchemaVersion = get_args(SchemaVersion)[0]
PurchaseSchemaVersion = Literal[2]
"""The version of ``solve cluster --buy --json``'s format (`PurchaseResult`), raised from `SCHEMA_VERSION` when its
pools' ``nodes`` and ``gpus`` (the nodes bought, their GPUs) were renamed ``nodes_bought`` and ``gpus_bought``, so that
a pool's ``nodes`` means one thing, the pool's own, as in a placement's JSON; its JSON of version 1 reads back."""
PURCHASE_SCHEMA_VERSION: PurchaseSchemaVersion = get_args(PurchaseSchemaVersion)[0]


class Versioned(BaseModel):
    """A result printed as a top-level JSON object (an answer, a map, a placement, a purchase, a memory breakdown, a
    calibration): it says its `schema_version` and the `rft_solver_version` that printed it, after its other keys.
    JSON read back may hold them (JSON made before them does not): another schema version than those it reads
    (`read_back_versions`) is refused."""

    read_back_versions: ClassVar[tuple[int, ...]] = (SCHEMA_VERSION,)
    """The schema versions whose JSON reads back into it, its own first."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def schema_version(self) -> SchemaVersion:
        """The version of this JSON's format (`SCHEMA_VERSION`: docs/json.md#json-schemas); raised when a key is
        removed or renamed, or changes its type or meaning, not for a new key or code."""
        return SCHEMA_VERSION

    @computed_field  # type: ignore[prop-decorator]
    @property
    def rft_solver_version(self) -> str:
        """The release of rft-solver that printed this JSON (its package version, as `solve --version` says)."""
        return __version__

    @model_validator(mode="before")
    @classmethod
    def _versions_read_back(cls, raw: Any) -> Any:
        """A result rebuilt from its JSON: ``schema_version`` and ``rft_solver_version`` are dropped (printed again,
        they are this release's), and JSON of another schema version is refused."""
        if not isinstance(raw, dict) or not raw.keys() & {"schema_version", "rft_solver_version"}:
            return raw
        if raw.get("schema_version", SCHEMA_VERSION) not in cls.read_back_versions:
            raise ValueError(f"schema_version is {raw['schema_version']!r}: this release of rft-solver reads "
                             f"{' or '.join(map(str, cls.read_back_versions))} (and JSON without one)")
        return {key: value for key, value in raw.items() if key not in ("schema_version", "rft_solver_version")}


class UnphysicalCode(str, Enum):
    """The machine-readable code of each way a calibration's fitted multiplier leaves its physical range
    (`Calibration.unphysical_codes`), beside its words: the one source of the codes that docs/json.md's table
    documents."""

    STATES_BELOW_RANGE = "states-below-range"
    STATES_ABOVE_RANGE = "states-above-range"
    GATHERED_BELOW_RANGE = "gathered-below-range"
    SP_BUFFERS_BELOW_RANGE = "sp-buffers-below-range"
    FRAGMENTATION_ABOVE_RANGE = "fragmentation-above-range"


def check_beyond_codes(beyond: Sequence[str], codes: Sequence[BeyondCode]) -> None:
    """`check_codes` for a result's beyond-calibration phrases."""
    check_codes(codes, beyond, "beyond_calibration_codes", "beyond_calibration phrases", "phrase")


VALIDATED_YARN = (f"Qwen's model cards validate a factor of {YARN_VALIDATED_FACTOR:g} over "
                  f"{int(YARN_VALIDATED_TOKENS / YARN_VALIDATED_FACTOR)} positions: {YARN_VALIDATED_TOKENS} tokens")
"""What Qwen's model cards validate of YaRN, in words: the cards' factor is over their 32768 positions, not over a
model's native context (40960 for Qwen3, whose YaRN factor reaches 3.2 at 131072 tokens)."""
CHECK_QUALITY = "check the model's quality at this length"
"""What to do about a length past what a model is known to handle, in words (`yarn_caution`, `check_or_plan_words`)."""
YARN_KEPT = "one that covers the length needs no change"
"""Why a config's own YaRN that reaches the plan's length stays (``--write`` keeps it, and the ``apply`` lines leave
it: `solver.trinity.config_keys_kept`), in words."""
OTHER_YARN = "YaRN on a model that is not Qwen's, for which rft-solver knows of no validation"


TRINITY_050_RAISES_BUDGET = "Trinity 0.5.0 raises it back to the default: use 0.5.1 or later"
"""What Trinity 0.5.0 does with a lowered token budget: its ``_adjust_token_len_if_needed`` asks a budget times SP for
twice the length (0.5.1 and later, once), so it raises any budget below the default ``ceil(2L/SP)`` back to it."""


def lowered_budget_undone(plan: Plan, version: TrinityVersion | None) -> str | None:
    """`TRINITY_050_RAISES_BUDGET` where `plan` lowers its token budget and the Trinity release `version` may be 0.5.0
    (`lowered_budget_raised_by`); None otherwise."""
    return lowered_budget_raised_by(version) if plan.lowered_budget else None


def lowered_budget_raised_by(version: TrinityVersion | None) -> str | None:
    """`TRINITY_050_RAISES_BUDGET` where the Trinity release `version` may be 0.5.0 (not 0.6), which raises a token
    budget below the default back to it; None otherwise."""
    return TRINITY_050_RAISES_BUDGET if version != "0.6" else None


def yarn_validation_words(model: Model) -> str:
    """What is known of YaRN's validation for `model`, in words: what Qwen's model cards validate (`validated_length`:
    for a model of a native context of 131072 or more, any YaRN is past it; for one of less than 32768, 4 times its
    native context), or, for a model that is not Qwen's (`Model.qwen_yarn`), that rft-solver knows of none (and what
    it assumes of a type it has not read, `assumed_yarn_words`). The
    summary's ``max_model_len`` row, which says first that the length is past it, sets them beside the YaRN factor;
    `yarn_caution` says them alone."""
    if not model.qwen_yarn:
        return "rft-solver knows of no validation of YaRN on a model that is not Qwen's" + assumed_yarn_words(model)
    validated = validated_length(model)
    within = (f"; 4 times its native {model.native_context} is {validated}" if validated < YARN_VALIDATED_TOKENS
              else f", which its native {validated} already covers" if validated == model.native_context
              else "")
    return f"{VALIDATED_YARN}{within}"


def yarn_beyond_words(model: Model) -> str:
    """Why a plan of `model` whose YaRN goes beyond what is validated (`Plan.yarn_beyond_validated`) is past it, in
    words: past what Qwen's model cards validate (`yarn_validation_words`), or any YaRN for a model that is not Qwen's
    (`OTHER_YARN`, with what is assumed of a type rft-solver has not read: `assumed_yarn_words`). A fragment's YaRN
    factor says it beside the factor; its header says what to do."""
    if not model.qwen_yarn:
        return OTHER_YARN + assumed_yarn_words(model)
    return f"longer than YaRN is validated for ({yarn_validation_words(model)})"


def assumed_yarn_words(model: Model) -> str:
    """What rft-solver assumes of `model`'s YaRN where its type is not one it has read (`Model.rope_advice`:
    ``RopeAdvice.assumed``), in words after `OTHER_YARN`; "" for a known type."""
    if not model.rope_advice.assumed:
        return ""
    what = (f"its model_type {model.model_type} is not one whose RoPE rft-solver has read"
            if model.model_type is not None else "its config.json gives no model_type")
    return f" ({what}: it assumes YaRN extends it, as it does Qwen3 and Llama)"


def yarn_caution(model: Model) -> str:
    """The caution for a plan of `model` whose YaRN goes beyond what is validated: why (`yarn_beyond_words`), and
    what to do (`CHECK_QUALITY`)."""
    return f"{yarn_beyond_words(model)}: {CHECK_QUALITY}"


THIN_HEADROOM_GIB = 1.0
"""Less room than this in an extrapolated estimate gets a caution: the known errors there are about a GiB and more
(on a card of at most `SMALL_CARD_GIB`, beyond the GiB its default margin holds back already: `default_margin`)."""


def gpu_runtime(rocm: bool) -> tuple[str, str]:
    """The GPU runtime whose context, and the collectives library whose buffers, the memory model's flat overhead
    counts, as named on an AMD GPU (`GpuType.rocm`: ``HIP``, ``RCCL``), else NVIDIA's (``CUDA``, ``NCCL``)."""
    return ("HIP", "RCCL") if rocm else ("CUDA", "NCCL")


def rocm_env_caution(option_names: OptionNames = COMMAND_OPTIONS) -> str:
    """What a plan with Env on an AMD GPU (`GpuType.rocm`) cautions, naming the planning without Env in the caller's
    words (`option_names`: ``solve --no-env``, ``solver.plan(env=False)``)."""
    return (f"ROCm: PyTorch's ROCm builds also read {ROCM_ENV_VARIABLE} (set it the same, or not at all), and a build "
            "without expandable segments ignores them with a warning, so Env may not take effect: check yours "
            f"({option_names.planning(option_names.switch('env', False))} plans without it)")


def rocm_env_note(option_names: OptionNames = COMMAND_OPTIONS) -> str:
    """What goes with `ENV_EXPORT` where the plan is for an AMD GPU: the fragment's comment and --write's note, naming
    the planning without Env as `option_names` do (``--no-env``, ``env=False``)."""
    return (f"On ROCm, PyTorch reads {ROCM_ENV_VARIABLE} too: set it the same, or not at all; a build without "
            f"expandable segments ignores them with a warning (then plan with {option_names.switch('env', False)}).")


class MarginRoom(NamedTuple):
    """What an estimate's room to spare is weighed against: the safety `margin` it was held to, the `default` margin
    on its card (`default_margin`: on a card of at most `SMALL_CARD_GIB`, above the memory model's), `usable_gib`,
    the usable memory a margin is a fraction of (the GPU's, before any margin, with the plan's Env or not), and
    `shortfall_gib`, what the model's gathered layers may take more than the fit counts (the memory model's
    `gathered_shortfall_gib`; 0 within the calibrated models), and `model_scale`, how many times the largest
    calibrated model's parameters the model has (0 where the calibration's range is not known)."""

    margin: float
    default: float
    usable_gib: float
    shortfall_gib: float = 0.0
    model_scale: float = 0.0

    @property
    def raised_gib(self) -> float:
        """The GiB the margin holds back beyond what the default's does (negative below the default)."""
        return (self.margin - self.default) * self.usable_gib

    def keeping(self, gib: float) -> float:
        """The margin, rounded up to a hundredth, that holds back `gib` GiB more than the default's."""
        return margin_keeping(self.default, gib, self.usable_gib)

    def holding(self, gib: float) -> float:
        """The margin that holds back exactly `gib` GiB more than the default's (`keeping`, not rounded)."""
        return self.default + gib / self.usable_gib

    @property
    def thin_gib(self) -> float:
        """The room to spare below which an extrapolated estimate gets the thin-headroom caution (`thin_headroom`):
        `THIN_HEADROOM_GIB`, and what its gathered layers may take more than the fit counts."""
        return THIN_HEADROOM_GIB + self.shortfall_gib


def thin_headroom(headroom_gib: float, beyond_calibration: Sequence[str], memory_gib: float, room: MarginRoom,
                  beyond_codes: Sequence[BeyondCode], option_names: OptionNames = COMMAND_OPTIONS,
                  rocm: bool = False) -> str:
    """A caution for a prediction on a GPU of `memory_gib` that fits with less than `THIN_HEADROOM_GIB` to spare
    (beyond what the default margin on its card holds back: on a card of at most `SMALL_CARD_GIB`, the GiB such a
    card runs optimistic by), and what its gathered layers may take more than the fit
    counts (`room.shortfall_gib`), where it extrapolates (`beyond_calibration` not empty), in words, naming the
    error expected there (`known_errors`, from `beyond_codes` and that shortfall, on an AMD GPU where `rocm`) and the
    margin that keeps that much more (as `option_names` names it: ``--margin 0.05``, ``margin=0.05``), with the GiB it
    keeps beyond the default's (rounded up to a hundredth, it keeps a little more); "" otherwise.
    What a margin raised above the default holds back (`room`) counts as room to spare: the caution asks for no more
    than it names."""
    small = memory_gib <= SMALL_CARD_GIB
    thin = room.thin_gib
    if not beyond_calibration or not 0 <= headroom_gib < thin - room.raised_gib:
        return ""
    asked = room._replace(margin=room.keeping(thin))  # rounded up to a hundredth: it keeps a little more than `thin`
    margin = option_names.valued(option_names.named("margin"), f"{asked.margin:.2f}")
    return (f"{headroom_gib:.1f} GiB to spare where the estimate extrapolates, and its error there is unmeasured "
            f"({known_errors(small, beyond_codes, room.shortfall_gib, rocm)}: docs/memory.md in rft-solver's source); "
            f"{margin} keeps {asked.raised_gib:.1f} GiB more to spare than the default {room.default:g} here, or "
            "measure a step first")


FAR_BEYOND_SCALE = 4.0
"""How many times the largest calibrated model's parameters past which an estimate held to the default margin gets
the far-beyond-calibration caution (`far_beyond_calibration`): the held-out splits extrapolated to 3.5 times at most
(docs/memory.md)."""


def far_beyond_calibration(room: MarginRoom, thin: str, option_names: OptionNames = COMMAND_OPTIONS) -> str:
    """A caution for an estimate of a model more than `FAR_BEYOND_SCALE` times the largest calibrated one
    (`room.model_scale`) held to no more than the default margin on its card (`room`), where the thin-headroom caution
    (`thin`, its words or "") does not name a margin already, in words: the margins docs/memory.md advises there,
    0.01 to 0.04 above the default (0.02 to 0.05 where it is 0.01), as `option_names` names the option; "" otherwise."""
    if thin or room.model_scale <= FAR_BEYOND_SCALE or room.margin > room.default:
        return ""
    low = option_names.valued(option_names.named("margin"), f"{room.default + 0.01:.2f}")
    return (f"the model has {room.model_scale:.1f} times the parameters of the largest the memory model was "
            "calibrated on, far past what its held-out splits checked (3.5 times at most), and its error there is "
            "unmeasured: "
            f"docs/memory.md in rft-solver's source advises {low} to {room.default + 0.04:.2f} here (the default is "
            f"{room.default:g}), or measure a step first")


def known_errors(small: bool, beyond_codes: Sequence[BeyondCode], shortfall_gib: float = 0.0,
                 rocm: bool = False) -> str:
    """Where the memory model is expected to err, in words, for an estimate on a card of at most `SMALL_CARD_GIB`
    (`small`) or not, beyond its calibration as `beyond_codes` say: on small cards, optimistic by about a GiB (which
    their default margin holds back: `default_margin`); on
    more nodes or GPUs than calibrated, by the memory NCCL takes there (RCCL on an AMD GPU, where `rocm`:
    `gpu_runtime`), for which the flat overhead does not grow;
    for much larger models, optimistic by about a GiB and more, or by `shortfall_gib` (shown to 0.1 GiB) where the
    model's gathered layers may take that much more than the fit counts; otherwise no error of known direction
    (without codes, the errors known on any card). A small card names much larger models only where the model is
    one."""
    runtime, collectives = gpu_runtime(rocm)
    overhead = f"its flat overhead for the {runtime} context and {collectives} does not grow "
    fabric = (f"{overhead}across nodes" if BeyondCode.MORE_NODES in beyond_codes
              else f"{overhead}with more GPUs than calibrated" if BeyondCode.MORE_GPUS in beyond_codes else "")
    gathered = (f"its gathered layers may take {shortfall_gib:.1f} GiB more than the fit counts (large layers)"
                if round(shortfall_gib, 1) > 0 else "")
    if small:
        larger_too = (", and more for much larger models"
                      if not gathered and (not beyond_codes or BeyondCode.LARGER_MODEL in beyond_codes) else "")
        return "; ".join(words for words in (
            (f"on cards of at most {SMALL_CARD_GIB:g} GiB, as this one, it runs optimistic by about a GiB, which the "
             f"default margin here keeps{larger_too}"),
            fabric, gathered) if words)
    larger = gathered or ("for much larger models it runs optimistic by about a GiB and more"
                          if BeyondCode.LARGER_MODEL in beyond_codes else "")
    if not beyond_codes:  # words without their codes: the errors known anywhere
        return "; ".join(words for words in (
            "on much smaller cards and much larger models it runs optimistic by about a GiB and more", gathered)
            if words)
    return "; ".join(words for words in (fabric, larger) if words) or (
        "no error of known direction is expected here, and none is measured")


SINGLE_GPU_ADVICE_GIB = 80.0
"""The A100 80GB's memory: on one GPU of at most this much, Trinity-RFT's guide strongly advises more GPUs for a model
of 4B parameters or more, or for more than 20K (20480) tokens (`single_gpu_caution`)."""
SINGLE_GPU_ADVICE_PARAMETERS_B = 4.0
SINGLE_GPU_ADVICE_TOKENS = 20480


def single_gpu_caution(model: Model, gpus: int, max_model_len: int, memory_gib: float) -> str:
    """The guide's advice against one A100 80GB (or a GPU of less memory) for a model of 4B parameters or more or
    more than 20K tokens, in words; "" otherwise."""
    if (gpus != 1 or memory_gib > SINGLE_GPU_ADVICE_GIB
            or (model.parameters_b < SINGLE_GPU_ADVICE_PARAMETERS_B and max_model_len <= SINGLE_GPU_ADVICE_TOKENS)):
        return ""
    return ("one trainer GPU: for a model of 4B parameters or more, or more than 20K tokens, on one A100 80GB or a GPU "
            "of no more memory, Trinity-RFT's guide strongly advises more GPUs, which train faster and steadier even "
            "where one GPU's memory suffices")


SINGLE_GPU_CAUTION_SHORT = "one trainer GPU: Trinity-RFT's guide strongly advises more GPUs"
"""`single_gpu_caution` in short, beside a plan shown in a row or line of its own (a ranked plan, a ``for rollout``
plan): the headline plan carries it whole."""


class _ReasonCautions(Frozen):
    """A result with a ``reason`` in words that may name a plan with a caution it says in short beside it (an answer
    without a plan, a job left out): the codes of those cautions, carried with the words where the reason is built
    (`ReasonWords`, set by `with_reason`), in its JSON as ``reason_caution_codes``, and read back from that key."""

    if TYPE_CHECKING:  # each result's own field, described there
        reason: str | None

    _reason_cautions: tuple[CautionCode, ...] | None = PrivateAttr(default=None)

    @computed_field(description=(  # type: ignore[prop-decorator]
        "where the reason names a plan with a caution it says in short beside it, that caution's code "
        "(docs/json.md): single-gpu-advised-against for a plan on one trainer GPU against Trinity-RFT's guide's "
        "advice; left out where it names none"))
    @property
    def reason_caution_codes(self) -> tuple[CautionCode, ...] | None:
        """The codes of the cautions the reason says in short beside a plan it names, as its words were built with
        them (`ReasonWords.shown_codes`); None where it says none."""
        return self._reason_cautions

    @property
    def reason_words(self) -> ReasonWords:
        """The reason ("" where none) with the codes of its cautions, to build longer words on."""
        return ReasonWords(self.reason or "", frozenset(self._reason_cautions or ()))

    def with_reason(self, reason: ReasonWords) -> Self:
        """A copy whose reason is `reason`'s words, with its cautions' codes."""
        changed = self.model_copy(update={"reason": reason.text})
        changed._reason_cautions = reason.shown_codes
        return changed

    @model_validator(mode="wrap")
    @classmethod
    def _reason_cautions_read_back(cls, raw: Any, handler: ValidatorFunctionWrapHandler) -> Self:
        """A result rebuilt from its JSON: its ``reason_caution_codes`` (a list of `CautionCode` values, or null),
        validated, are its reason's codes; codes without a reason are refused. (`ValidatorFunctionWrapHandler`:
        pydantic 2.6, the lowest the project allows, has no typed `ModelWrapValidatorHandler`.)"""
        result: Self
        if not isinstance(raw, dict) or "reason_caution_codes" not in raw:
            result = handler(raw)
            return result
        given = raw["reason_caution_codes"]
        known = [code.value for code in CautionCode]
        listed = (isinstance(given, (list, tuple)) and given and all(code in known for code in given)
                  and len(set(given)) == len(given))
        if given is not None and not listed:
            raise ValueError(f"reason_caution_codes is {given!r}: give null or a list of distinct caution codes "
                             f"({', '.join(known)})")
        result = handler({key: value for key, value in raw.items() if key != "reason_caution_codes"})
        if given is not None and result.reason is None:
            raise ValueError(f"reason_caution_codes is {given!r}, but there is no reason to say them")
        result._reason_cautions = None if given is None else ReasonWords(
            "", frozenset(CautionCode(code) for code in given)).shown_codes
        return result


SERVER_HOST_RAM_PER_GPU_GIB = 128.0
"""The host memory per GPU that GPU servers commonly have, GiB: a DGX A100's 1 TB for its 8 GPUs (a DGX H100 has 2 TB
for 8): on a GPU type sold in servers (no `GpuType.workstation_host_ram_gib`), a plan that needs more on a node than
that for each of the node's GPUs (where its size is given), or else of its trainer GPUs there
(`trainer_gpus_on_node`), gets a caution where no host memory was given to hold it to (`unchecked_host_need`)."""


def assumed_host_ram_gib(gpu: GpuType, gpus_on_node: int, node_gpus: int | None) -> float:
    """The host memory, GiB, a node where a plan has `gpus_on_node` trainer GPUs of type `gpu` is assumed to have where
    none was given: on a card sold for workstations, its `GpuType.workstation_host_ram_gib` for the whole box; else
    `SERVER_HOST_RAM_PER_GPU_GIB` for each of its `node_gpus` GPUs where its size was given (None where not), or else
    for each of its trainer GPUs alone."""
    if gpu.workstation_host_ram_gib is not None:
        return float(gpu.workstation_host_ram_gib)
    return SERVER_HOST_RAM_PER_GPU_GIB * (node_gpus if node_gpus is not None else gpus_on_node)


def exceeds_assumed_host_ram(need_gib: float, gpu: GpuType, gpus_on_node: int, node_gpus: int | None) -> bool:
    """Whether a host memory need of `need_gib` per node (as shown) is more than the node is assumed to have
    (`assumed_host_ram_gib`): where none was given, the need a caution names (`unchecked_host_need`), and the one a
    plan without Offload shows for it."""
    return need_gib > assumed_host_ram_gib(gpu, gpus_on_node, node_gpus)


class HostRamAssumed(Frozen):
    """What a node is assumed to have of host memory where a plan's need is past it and nothing checks it
    (`unchecked_host_bound`): the GiB (`gb`) and the flag or key that would give a node's host memory instead
    (`source`); what both the plan's full caution on it (`unchecked_host_need`) and its short form
    (`short_host_need`) say, kept on the plan (`Plan.host_ram_assumed`)."""

    gb: HostRamGb = Field(description=(
        f"the host memory per node assumed, GiB: {SERVER_HOST_RAM_PER_GPU_GIB:g} per GPU of a node of the size given "
        "(--node-gpus, a pool's gpus_per_node), else per trainer GPU on it, or a workstation card's for the whole box "
        "(GpuType.workstation_host_ram_gib)"))
    source: str = Field(description=(
        "the flag or key that would give a node's host memory, and check the need against it: --host-ram, "
        "host_ram_gb (the API's keyword), the pool's host_ram_gb"))


def unchecked_host_bound(need_gib: float | None, gpu: GpuType, gpus_on_node: int, node_gpus: int | None,
                         unchecked_source: str | None) -> HostRamAssumed | None:
    """The bound a need of `need_gib` of the host memory of a node, where a plan has `gpus_on_node` trainer GPUs of
    type `gpu`, is past: what such a node is assumed to have (`assumed_host_ram_gib`, `node_gpus` None where the
    node's size was not given) where the need exceeds it and no host memory was given to hold it to
    (`unchecked_source`: the flag or key that would give it; None where it was given); None otherwise."""
    if unchecked_source is None or need_gib is None or not exceeds_assumed_host_ram(need_gib, gpu, gpus_on_node,
                                                                                    node_gpus):
        return None
    return HostRamAssumed(gb=assumed_host_ram_gib(gpu, gpus_on_node, node_gpus), source=unchecked_source)


def unchecked_host_need(need_gib: float | None, gpu: GpuType, gpus_on_node: int, node_gpus: int | None, offload: bool,
                        unchecked_source: str | None, node_option: str = "--node-gpus",
                        training_gib: float | None = None, loading: ModelLoading = "every-rank",
                        release_hint: str = "", critic: CriticStates | None = None) -> str | None:
    """The caution for a plan, with Offload (`offload`) or without, that needs `need_gib` of the host memory of a node
    where it has `gpus_on_node` trainer GPUs of type `gpu`, more than such a node is assumed to have
    (`exceeds_assumed_host_ram`), where none was given to hold it to (`unchecked_source`: the flag or key that would
    give it, ``--host-ram``; None where it was given), in words; None otherwise. The words name what the node is
    assumed to have (`assumed_host_ram_gib`): where the node's size was not given (`node_gpus` None), they name
    `node_option`, which gives it. They say what the need is for (without Offload, `host_need_purpose`, with a PPO
    `critic` or not), and where it is the start-up load (training holds less: `training_gib`, as shown; or there is no
    training moment of its own), which ranks load the model (`loading`: `host_moment_words`), what makes the need so
    large, and where given, that naming a Trinity release counts its own (`release_hint`: `lower_host_count_hint`)."""
    bound = unchecked_host_bound(need_gib, gpu, gpus_on_node, node_gpus, unchecked_source)
    if need_gib is None or bound is None:
        return None
    return _host_need_words(need_gib, bound, gpu, gpus_on_node, node_gpus, offload, node_option, training_gib, loading,
                            release_hint, critic)


def _host_need_words(need_gib: float, bound: HostRamAssumed, gpu: GpuType, gpus_on_node: int, node_gpus: int | None,
                     offload: bool, node_option: str, training_gib: float | None, loading: ModelLoading,
                     release_hint: str, critic: CriticStates | None) -> str:
    """`unchecked_host_need`'s words for a need of `need_gib` past `bound` (`unchecked_host_bound`, worked out once by
    the caller), its other arguments as that takes them."""
    per_gpu = f"{SERVER_HOST_RAM_PER_GPU_GIB:g} GiB per GPU, as servers commonly have: a DGX A100's 1 TB for 8"
    share = ""
    if gpu.workstation_host_ram_gib is not None:
        assumed = (f"the {gpu.workstation_host_ram_gib} GiB a workstation of {gpu.name} cards commonly has (for the "
                   "whole box, not each card)")
    elif node_gpus is not None:
        assumed = f"the {bound.gb:g} GiB assumed for a node of {counted(node_gpus, 'GPU')} ({per_gpu})"
    else:
        per_trainer_gpu = ceil(need_gib * 10 / gpus_on_node) / 10  # rounded up, as the need is: past the bound
        share = f"{per_trainer_gpu:.1f} GiB per trainer GPU" if gpus_on_node > 1 else ""
        trainer_gpus = f"its {gpus_on_node} trainer GPUs" if gpus_on_node > 1 else "its one trainer GPU"
        assumed = (f"the {bound.gb:g} GiB assumed for {trainer_gpus} there ({per_gpu}; {node_option} counts "
                   "all of a node's GPUs)")
    said = [part for part in (share, host_moment_words(training_gib, loading, offload, critic)) if part]
    why = f" ({'; '.join(said)})" if said else ""
    return (f"{host_need_opening(need_gib, offload, critic)}{why}, more than {assumed}, and nothing checks it: give "
            f"{bound.source} what a node can spare for the trainer (free -g's total less what the OS, Ray and the "
            f"rollout take) to check it{release_hint}")


def host_need_opening(need_gib: float, offload: bool, critic: CriticStates | None) -> str:
    """What a plan, with Offload (`offload`) or without (and a PPO `critic` or not), needs of a node's host memory, as
    its caution on a need nothing checks opens (`unchecked_host_need`, `short_host_need`): ``Offload needs 757.1 GiB
    of host memory per node``, or ``the trainer needs ... while the model loads`` (`host_need_purpose`)."""
    return (f"Offload needs {need_gib:.1f} GiB of host memory per node" if offload else
            f"the trainer needs {need_gib:.1f} GiB of host memory per node {host_need_purpose(offload, critic)}")


def short_host_need(need_gib: float, offload: bool, critic: CriticStates | None, bound: HostRamAssumed) -> str:
    """The short form of a plan's caution on a host memory need of `need_gib` past `bound` that nothing checks
    (`unchecked_host_need`, with Offload or without and its PPO `critic`), as a plan shown beside another where the
    answer shows the full one once says it: the need and what it exceeds (``Offload needs 1211.5 GiB of host memory
    per node, more than the 1024 GiB assumed (unchecked: --host-ram)``), the advice on checking it left to the full
    one."""
    return (f"{host_need_opening(need_gib, offload, critic)}, more than the {bound.gb:g} GiB assumed "
            f"(unchecked: {bound.source})")


WithoutSp = bool | Literal["lowered"] | None
"""Whether the question of a plan with SP, asked without SP, has a plan (`sp_over_pcie_caution`): True, False,
``lowered`` where it has none at Trinity's default token budget but has one with --token-budget auto, None where that
is not known."""


def sp_over_pcie_caution(gpu: GpuType, sp: int, option_names: OptionNames = COMMAND_OPTIONS,
                         costed: bool = True, fits_without_sp: WithoutSp = None,
                         max_model_len: int | None = None) -> str | None:
    """The caution for a plan with SP on a GPU type whose GPUs reach one another over PCIe alone
    (`GpuType.interconnect` ``pcie``), in words, naming SP 1 as `option_names` do (`OptionNames.setting_pin`); None
    otherwise. Not `costed`, for
    `solve memory`'s breakdown, which shows no cost: the words say nothing of the cost's weight. `fits_without_sp`:
    whether the same question without SP has a plan at the plan's `max_model_len` (`WithoutSp`): only where it has is
    SP 1 named as what may train faster (with --token-budget auto where only a lowered budget gives it); where it has
    none, the words say that SP is what trains that length there."""
    if sp == 1 or gpu.interconnect != "pcie":
        return None
    without_sp = option_names.setting_pin("sp", 1)
    weighed = "the cost weighs that above NVLink's by a ranking weight, not a measured time"
    if not costed:
        advice = f", so the same run without SP, where it fits ({without_sp}), may train faster: time a step of each"
    elif fits_without_sp == "lowered":
        advice = (f"; {weighed}, and no plan without SP fits {max_model_len} tokens here at Trinity's default token "
                  f"budget, but one with a lowered budget does ({without_sp} with {option_names.token_budget_auto}): "
                  "it may train faster, so time a step of each")
    elif fits_without_sp is False:
        advice = (f"; {weighed}, and no plan without SP fits {max_model_len} tokens here: SP over PCIe is what "
                  "trains this length, so time a step before a long run")
    else:
        plan = f"a plan without SP that fits ({without_sp})" if fits_without_sp else \
            f"a plan without SP ({without_sp}), where one fits,"
        advice = f"; {weighed}, so {plan} may train faster: time a step of each"
    return (f"SP={sp} on {gpu.name} cards, which reach one another over PCIe: Ulysses' all-to-all crosses it, or host "
            f"memory where the cards cannot reach one another directly, in every layer{advice}")


def trainer_spans_nodes_caution(trainer_nodes: int, node_interconnect: NodeInterconnect | None) -> Caution | None:
    """The caution for a placed job whose trainer spans `trainer_nodes` nodes of a pool whose nodes are not stated to
    be joined by a fast fabric (`node_interconnect`, the pool's: unstated or ``ethernet``, not one of
    `FAST_NODE_INTERCONNECTS`): FSDP's traffic between them, which the cost does not count; None otherwise."""
    if trainer_nodes == 1 or node_interconnect in FAST_NODE_INTERCONNECTS:
        return None
    joined = ("nodes joined by Ethernet (the pool's node_interconnect)" if node_interconnect == "ethernet"
              else "nodes the fleet does not say a fast fabric joins (the pool states no node_interconnect)")
    advice = ("time a step against a trainer within one node" if node_interconnect == "ethernet"
              else "state node_interconnect: infiniband or roce where one joins them, or time a step")
    return Caution(CautionCode.TRAINER_SPANS_NODES, (
        f"its trainer spans {joined}: FSDP gathers and reduces every layer's parameters and gradients between them in "
        f"every step, which the cost does not count, and over Ethernet a step may take far longer; {advice}"))


def node_host_need_caution(pool: str, node: int, needs: Sequence[tuple[str, float]], gpu: GpuType,
                           node_gpus: int) -> Caution | None:
    """The caution for the placed jobs that share `node` of `pool`, a pool that gives no host_ram_gb, where the host
    memory each needs there as its cell shows it (`needs`: job and GiB; `Placement.host_need_gb`) adds up to more
    than a node of `node_gpus` GPUs of type `gpu` is assumed to have (`assumed_host_ram_gib`), which nothing checks;
    None where it does not, or one job alone needs it (its plan's `unchecked_host_need` says so)."""
    total = sum(round(gib * 10) for _, gib in needs) / 10
    assumed = assumed_host_ram_gib(gpu, node_gpus, node_gpus)
    if len(needs) < 2 or total <= assumed:
        return None
    each = ", ".join(f"{job} {gib:.1f}" for job, gib in needs)
    return Caution(CautionCode.NODE_HOST_MEMORY_UNCHECKED, (
        f"node {node} of pool {pool} holds jobs that need {total:.1f} GiB of host memory together ({each}, as their "
        f"host GiB/node cells show), more than the {assumed:g} GiB such a node is assumed to have; the pool gives no "
        "host_ram_gb, so nothing checks it: give the pool's host_ram_gb, and the placement keeps each node's jobs "
        "within it"))


def pcie_statement(gpu: GpuType, option_names: OptionNames = COMMAND_OPTIONS) -> str:
    """What states that `gpu`, a GPU type of your own, reaches its others over PCIe alone, where it was described:
    the cells file that gives it (the one way such a GPU type has tables of its own), its pool in a cluster file
    (`POOL_GPU_SOURCE`), or else beside its memory, as `option_names` say it (``--gpu-interconnect pcie``)."""
    if gpu.tables:
        return "interconnect: pcie, with its interconnect_source, in its cells file"
    if gpu.source == POOL_GPU_SOURCE:
        return "gpu_interconnect: pcie in its pool"
    return option_names.pcie_interconnect


def interconnect_unstated_caution(gpu: GpuType, sp: int, option_names: OptionNames = COMMAND_OPTIONS) -> str | None:
    """The caution for a plan with SP on a GPU type of your own that states no interconnect (`GpuType.interconnect`
    None: the cost weighs its SP as over NVLink, as it was before interconnects were stated), in words, naming what
    states PCIe (`pcie_statement`); None otherwise."""
    if sp == 1 or gpu.interconnect is not None:
        return None
    return (f"SP={sp} on {gpu.name} cards, whose interconnect is not stated, so the cost weighs SP as over NVLink; "
            "cards without NVLink (GeForce, most workstation cards) reach one another over PCIe alone, where SP costs "
            f"more: if these do, say so ({pcie_statement(gpu, option_names)})")


def tables_refute_caution(tables: TablesVerdict, gpu: str, model: str, plan: Plan,
                          option_names: OptionNames = COMMAND_OPTIONS) -> Caution:
    """The caution for an estimated `plan` of `model` on `gpu` made from the memory model alone (``--estimate``) whose
    setting `gpu`'s tables say runs out of memory there (`tables`, not training), in `tables_refute_words`' words,
    naming the option as `option_names` do: ``solve cluster --estimate`` places such a plan."""
    return Caution(CautionCode.TABLES_SAY_OUT_OF_MEMORY, "estimated from the memory model alone, but the tables say "
                   + tables_refute_words(tables, gpu, model, plan.gpus, plan.offload, option_names))


def layout_cautions(model: Model) -> tuple[str, ...]:
    """The caution for a model read from a config.json of a kind whose counts were not checked
    (`Model.unchecked_layout`), in words; none otherwise."""
    if model.unchecked_layout is None:
        return ()
    mlp = "a gated MLP" if model.moe is None else f"{model.moe.experts} routed experts of gated MLPs"
    words = (f"{model.name} is read from a config.json of a kind rft-solver has not checked "
             f"({model.unchecked_layout}): it counts {shown_parameters(model.parameters_b)} parameters, attention and "
             f"{mlp} in every layer; compare that with the model card")
    return (words,)


def padding_cautions(model: Model, max_model_len: int, dpo: bool = False,
                     version: TrinityVersion | None = None) -> tuple[str, ...]:
    """The caution for a model that remove padding would train wrong (`remove_padding_violation`), in words: its
    plans turn it off, so each micro-batch is padded to its longest sequence, which dynamic batching, filling it by the
    sequences' own lengths up to the token budget, would take past any budget; so they turn dynamic batch sizes off
    too, with one sequence per micro-batch, which leaves the budget unread: the memory estimate counts that sequence,
    `max_model_len` tokens per GPU, for `dpo` a pair (`counted_tokens`, and where verl pads it wider,
    `ONE_SEQUENCE_WIDER_WORDS`), at a cost in speed; its code cited as the Trinity release `version` runs it. None
    otherwise."""
    violation = remove_padding_violation(model, version)
    if violation is None:
        return ()
    counted = ("" if dpo else "that sequence, ") + padded_count_words(model, max_model_len, dpo)
    return ((f"use_remove_padding false for {model.name}: {violation}; padded instead, so use_dynamic_bsz false with "
             "one sequence per micro-batch (micro-batch sizes 1), which leaves max_token_len_per_gpu unread: the "
             f"memory estimate counts {counted}; "
             f"{ONE_SEQUENCE_WIDER_WORDS}; it costs speed: a step runs a forward and backward per sequence, where "
             "dynamic batching would pack several"),)


def padded_count_words(model: Model, max_model_len: int, dpo: bool) -> str:
    """What the memory estimate counts of a micro-batch of `model` trained one padded sequence per micro-batch at
    `max_model_len` (SP 1), in words: that sequence's tokens, or for `dpo` the pair the DPO config's actor holds
    (`counted_tokens`)."""
    tokens = counted_tokens(model, max_model_len, 1, dpo=dpo)
    if dpo:
        return f"the DPO pair, a chosen and a rejected sequence, 2 x max_model_len = {tokens} tokens per GPU"
    return f"max_model_len = {tokens} tokens per GPU"


NO_LIMIT_WORDS = "no limit (transformers' no-limit model_max_length: vLLM refuses no length)"
"""A length vLLM derives from transformers' "no limit" ``model_max_length`` (`NO_LIMIT_LENGTH`), in words."""


def vllm_no_limit(model: Model) -> bool:
    """Whether `model`'s config.json gives transformers' "no limit" ``model_max_length`` (`NO_LIMIT_LENGTH`), which
    vLLM takes up to: every length it derives for the model is that or more, and it refuses no length."""
    return model.vllm_allowed_length == NO_LIMIT_LENGTH


def vllm_length_words(model: Model, length: float) -> str:
    """A length vLLM derives from `model`'s config.json (`Model.vllm_longest_length`, `Model.vllm_longest_as_written`,
    `Model.vllm_longest_given`, `Model.vllm_length_key`'s), as every view shows it: the number (`shown_number`), or
    `NO_LIMIT_WORDS` where it is transformers' "no limit" (`vllm_no_limit`), 31 digits that say nothing to a reader."""
    return NO_LIMIT_WORDS if vllm_no_limit(model) else shown_number(length)


def own_scaling_parts(model: Model, max_model_len: int) -> tuple[str, str]:
    """`max_model_len`, past `model`'s native context on its own RoPE scaling, in words, in two parts: what provides
    that native context (``which Llama-3.1-8B's own llama3 RoPE scaling provides``), and what follows: no YaRN
    written, whether vLLM's rollout takes the length, within the longest length vLLM derives for the model as written
    (`Model.vllm_longest_as_written`), or refuses it without `LONG_LENGTH_VARIABLE` (`plan_environment` exports it
    then). `own_scaling_words` joins them; the summary's ``max_model_len`` row, which names the native context first,
    sets them beside it."""
    return (f"which {model.name}'s own {model.rope_scaling} RoPE scaling provides",
            f"no YaRN written; {_vllm_takes_words(model, max_model_len)}; check the model handles it")


def _vllm_takes_words(model: Model, max_model_len: int) -> str:
    """Whether vLLM's rollout takes `max_model_len` for `model` with no YaRN written, in words: within the longest
    length it derives for the model as written (`Model.vllm_longest_as_written`), or refused without
    `LONG_LENGTH_VARIABLE` (`plan_environment` exports it then)."""
    longest = math.floor(model.vllm_longest_as_written(max_model_len))
    if max_model_len > longest:
        return (f"vLLM's rollout refuses it, past the {longest} it derives from the model's config, unless "
                f"{'='.join(LONG_LENGTH_VARIABLE)} is set")
    return (f"vLLM's rollout takes it: the longest length it derives from the model's config is "
            f"{vllm_length_words(model, longest)}")


def own_scaling_words(model: Model, max_model_len: int) -> str:
    """`max_model_len`, past `model`'s native context on its own RoPE scaling, in words (`own_scaling_parts`):
    ``beyond the native 131072, which ... provides: no YaRN written; ...``."""
    provides, follows = own_scaling_parts(model, max_model_len)
    return f"beyond the native {model.native_context}, {provides}: {follows}"


NO_ROPE_SCALING = "with no RoPE scaling to reach it"
"""A length past the native context of a model whose type is advised no YaRN (`Model.beyond_native_no_yarn`), in
words."""


def no_yarn_follows(model: Model, max_model_len: int) -> str:
    """What follows from `max_model_len` past the native context of `model`, whose type is advised no YaRN
    (`Model.beyond_native_no_yarn`: Phi-3's LongRoPE), in words: why none is written, the accepted way, and whether
    vLLM's rollout takes the length, and what each builds past the native context: transformers' trainer refuses no
    length and rotates the positions past it by plain RoPE, which the model was not trained on; vLLM's rotary cache
    holds the native context's positions alone (``RotaryEmbedding``'s ``max_position_embeddings``,
    ``_compute_cos_sin_cache``, ``base.py:83-92`` in vLLM 0.19.1), which it looks each token's rotation up in by its
    position (``index_select``, ``:152``, or the ``rotary_embedding`` kernel, ``:223-230``), so a position past it
    reads past the cache's end, as ``_get_and_verify_max_len`` warns they lead to nan
    (``vllm/config/model.py:2168-2172``): the rollout samples those tokens with no rotation the trainer computes, and
    the two part there. Not refused: whether it fails (a device-side assert) or samples on depends on vLLM's path,
    and it has not been run. `no_yarn_words` says it after the length; the summary's ``max_model_len`` row, which names
    the native context first, beside it."""
    extension = model.rope_advice.extension
    return (f"no YaRN written for model_type {extension.model_type}: {extension.why_no_yarn}; "
            f"{extension.accepted}; {_vllm_takes_words(model, max_model_len)}; past {model.native_context}, "
            f"transformers' trainer rotates by plain RoPE at positions the model was not trained on, and vLLM's "
            f"rollout reads past the end of its rotary cache of {model.native_context} positions (positions past it "
            f"lead to nan, vLLM warns): it samples those tokens with no rotation the trainer computes")


def no_yarn_words(model: Model, max_model_len: int) -> str:
    """`max_model_len`, past the native context of `model`, whose type is advised no YaRN, in words (`no_yarn_follows`):
    ``beyond the native 4096 with no RoPE scaling to reach it: no YaRN written, ...``."""
    return f"beyond the native {model.native_context} {NO_ROPE_SCALING}: {no_yarn_follows(model, max_model_len)}"


def length_key_words(model: Model) -> str:
    """The length key of `model`'s config.json that vLLM derives its length from before any RoPE scaling
    (`Model.vllm_length_key`), in words: its native context, or the smallest of its length keys, or the
    ``model_max_length`` vLLM takes in their place."""
    if model.vllm_length_key is None:
        return f"its native context of {model.native_context}"
    key, value = model.vllm_length_key
    which = ("which vLLM takes in place of the others" if key == "model_max_length"
             else "the smallest of its length keys")
    return f"its {key} of {vllm_length_words(model, value)}, {which}"


def past_derived_length_words(model: Model, max_model_len: int) -> str | None:
    """Where `max_model_len` is past the longest length vLLM derives for `model` as written
    (`Model.vllm_longest_as_written`) for its config.json's length key (`Model.vllm_length_key`: a ``seq_length``
    shorter than its native context): vLLM's rollout refuses it without `LONG_LENGTH_VARIABLE` (`plan_environment`
    exports it), in words, as `own_scaling_words` says it of a model's own RoPE scaling and `no_yarn_words` of a type
    that is advised no YaRN; None otherwise (and where those say it)."""
    longest = math.floor(model.vllm_longest_as_written(max_model_len))
    if (model.vllm_length_key is None or max_model_len <= longest or model.beyond_native_on_own_scaling(max_model_len)
            or model.beyond_native_no_yarn(max_model_len)):
        return None
    return (f"vLLM's rollout refuses it unless {'='.join(LONG_LENGTH_VARIABLE)} is set, past the {longest} it derives "
            f"from the model's config: {length_key_words(model)}")


def past_window_words(model: Model, max_model_len: int, option_names: OptionNames = COMMAND_OPTIONS) -> str | None:
    """Where `max_model_len` is past `model`'s sliding window (`Model.vllm_sliding_window`) and that window reaches
    past its native context, so that it trained with full attention (Phi-3-mini-128k's 262144 beside 131072): both
    sides attend over the window there, transformers' Phi-3 by its mask and flash attention's ``window_size``
    (``sliding_window`` from its config, ``modeling_phi3.py:265`` and ``:403``,
    ``modeling_flash_attention_utils.py:642`` to ``:647`` in 5.12.1; verl's Ulysses patch passes it on) and the
    rollout's vLLM by the window it caches (`solver.memory`'s KV cache counts it), so a token past it no longer sees
    the sequence's start: in words, the length to plan within named as `option_names` name it; None otherwise (a
    window within the native context, Mistral's or Gemma's, is the model's own)."""
    if model.vllm_sliding_window is None:
        return None
    window, local = model.vllm_sliding_window
    if window < model.native_context or max_model_len <= window:
        return None
    layers = "" if local == model.num_layers else f" in its {local} sliding-window layers"
    return (f"past {model.name}'s sliding window of {window} tokens (its config.json's sliding_window, beyond the "
            f"native {model.native_context}): the trainer's transformers and the rollout's vLLM alike attend each "
            f"token to the {window} up to it alone{layers}, so a token past it no longer sees the sequence's start "
            f"(the prompt); plan {option_names.planned_length(window)} to keep full attention, or check "
            "the model's quality past it")


def _length_cautions(model: Model, max_model_len: int) -> tuple[Caution, ...]:
    """The cautions about `model` at `max_model_len` tokens, with their codes: YaRN past what is validated (for a
    model that is not Qwen's, any YaRN), a length past its native context on its own RoPE scaling or with none (a
    type that is advised no YaRN), a length within
    it past the shorter one vLLM derives from its config.json's length key (`past_derived_length_words`)."""
    cautions: list[Caution] = []  # each worded only where it is said: most plans are within every length
    if model.yarn_beyond_validated(max_model_len):
        yarn_code = CautionCode.PAST_VALIDATED_LENGTH if model.qwen_yarn else CautionCode.YARN_UNVALIDATED_MODEL
        cautions.append(Caution(yarn_code, f"YaRN factor {model.yarn_factor(max_model_len)!r} at {max_model_len} "
                                           f"tokens: {yarn_caution(model)}"))
    if model.beyond_native_on_own_scaling(max_model_len):
        cautions.append(Caution(CautionCode.PAST_NATIVE_ON_OWN_SCALING, own_scaling_words(model, max_model_len)))
    if model.beyond_native_no_yarn(max_model_len):
        cautions.append(Caution(CautionCode.PAST_NATIVE_NO_YARN, no_yarn_words(model, max_model_len)))
    derived = past_derived_length_words(model, max_model_len)
    if derived is not None:
        cautions.append(Caution(CautionCode.PAST_DERIVED_LENGTH, derived))
    return tuple(cautions)


def past_validated(model: Model, max_model_len: int) -> int | None:
    """The longest context `model` is known to handle (`validated_length`) where `max_model_len` is past it (memory
    fits, quality is untested); None within it. A plan holds it (`Plan.past_validated_length`), and every view of
    the plan marks it from there (`past_validated_words`)."""
    validated = validated_length(model)
    return validated if max_model_len > validated else None


def known_length_word(model: Model) -> str:
    """What bounds the length `model` is known to handle (`validated_length`), in a word: ``validated`` where Qwen's
    model cards' YaRN reaches past its native context, else ``native`` (a Qwen model of a native context of 131072 or
    more, one on a RoPE scaling of its own, one whose validation rft-solver does not know of: `Model.qwen_yarn`)."""
    return "validated" if validated_length(model) > model.native_context else "native"


def past_validated_words(model: Model, validated: int) -> str:
    """``past the validated 131072``, said first beside a length of `model` past the `validated` tokens
    (`past_validated`) wherever a plan is shown, applied or written: its summary, its apply lines, its config's header,
    a ranked row's note; ``past the native 262144`` where its native context bounds it (`known_length_word`)."""
    return f"past the {known_length_word(model)} {validated}"


def check_or_plan_words(validated: int, option_names: OptionNames = COMMAND_OPTIONS) -> str:
    """What to do about a length past the validated `validated` tokens, in words: check the model, or plan within
    it (``plan --len 131072``; the API's ``plan max_model_len=131072``; a cluster job's ``plan with the job's
    max_model_len 131072``: `OptionNames.planned_length`)."""
    return f"{CHECK_QUALITY}, or plan {option_names.planned_length(validated)}"


def past_validated_note(plan: Plan, model: Model, option_names: OptionNames = COMMAND_OPTIONS) -> str | None:
    """``max_model_len past the validated 131072: check the model's quality at this length, or plan --len 131072``
    (`past_validated_words`, `check_or_plan_words`) for a `plan` of `model` past what it is known to handle
    (`Plan.past_validated_length`), said once above the length where the plan is applied: its apply lines, a config
    --write writes (whose header-less note is all it says); None within it."""
    if (validated := plan.past_validated_length) is None:
        return None
    return f"max_model_len {past_validated_words(model, validated)}: {check_or_plan_words(validated, option_names)}"


def length_cautions(model: Model, max_model_len: int) -> tuple[str, ...]:
    """The cautions about `model` at `max_model_len` tokens, in words: YaRN past what is validated, a length past its
    native context on its own RoPE scaling, or past the shorter length vLLM derives from its config.json."""
    return tuple(caution.words for caution in _length_cautions(model, max_model_len))


def cautions_of(model: Model, max_model_len: int, thin: str | None, single: str | None, uneven: str | None,
                rocm_env: bool, batch_over_gpus: str | None = None, host: str | None = None,
                sp_over_pcie: str | None = None, option_names: OptionNames = COMMAND_OPTIONS,
                interconnect_unstated: str | None = None, dpo: bool = False,
                lora_moe: str | None = None, version: TrinityVersion | None = None,
                lora_targets: str | None = None, saved_split: str | None = None,
                excluded_adapted: str | None = None, far: str | None = None,
                no_class: str | None = None) -> tuple[Caution, ...]:
    """A plan's or an estimate's cautions with their codes, in the order they are shown (`in_shown_order`): the model's
    layout, remove padding off for it (`padding_cautions`, for `dpo` or not, and the release `version`), its length
    (`length_cautions`; past a sliding window it trained without, `past_window_words`), `thin`
    headroom, a model `far` beyond the calibration at the default margin (`far_beyond_calibration`), a large `host`
    memory need nothing checks (`unchecked_host_need`), one GPU against the guide's advice
    (`single`), `uneven` data-parallel ranks, a train batch the trainer GPUs do not divide (`batch_over_gpus`; each
    where given), Env on an AMD GPU (`rocm_env_caution`, in `option_names`' words), SP over PCIe
    (`sp_over_pcie_caution`) or on a GPU type of your own whose interconnect is not stated
    (`interconnect_unstated_caution`), LoRA on a mixture of experts whose adapter config Trinity saves cut short
    (`lora_moe`: `lora_moe_caution`), LoRA targets one transformers' PEFT alone takes (`lora_targets`:
    `lora_targets_caution`), exclusions a mixture of experts' PEFT leaves unapplied (`excluded_adapted`:
    `lora_excluded_adapted_caution`), and a regex Trinity saves as its characters (`saved_split`:
    `lora_saved_split_caution`; each where given), and a model type the release's transformers 4 has no class of
    (`no_class`: `transformers_4_unloaded_words`, where given)."""
    given = ((CautionCode.TRANSFORMERS_4_NO_CLASS, no_class),
             (CautionCode.PAST_SLIDING_WINDOW, past_window_words(model, max_model_len, option_names)),
             (CautionCode.THIN_HEADROOM, thin), (CautionCode.FAR_BEYOND_CALIBRATION, far),
             (CautionCode.HOST_MEMORY_UNCHECKED, host),
             (CautionCode.SINGLE_GPU_ADVISED_AGAINST, single),
             (CautionCode.UNEVEN_DATA_PARALLEL, uneven), (CautionCode.BATCH_DIVIDES_TRAINER_GPUS, batch_over_gpus),
             (CautionCode.ROCM_ENV_MAY_NOT_APPLY, rocm_env_caution(option_names) if rocm_env else None),
             (CautionCode.SP_OVER_PCIE, sp_over_pcie), (CautionCode.INTERCONNECT_NOT_STATED, interconnect_unstated),
             (CautionCode.LORA_TARGETS_ONE_TRANSFORMERS, lora_targets),
             (CautionCode.LORA_EXCLUDED_ADAPTED, excluded_adapted), (CautionCode.LORA_MOE_CONFIG_UNSAVED, lora_moe),
             (CautionCode.LORA_TARGETS_SAVED_SPLIT, saved_split))
    return in_shown_order((*(Caution(CautionCode.UNCHECKED_CONFIG_LAYOUT, words) for words in layout_cautions(model)),
                           *(Caution(CautionCode.PADDED_MICRO_BATCHES, words)
                             for words in padding_cautions(model, max_model_len, dpo, version)),
                           *_length_cautions(model, max_model_len),
                           *(Caution(code, words) for code, words in given if words)))


def lora_moe_caution(model: Model, lora_rank: int, version: TrinityVersion | None,
                     experts: ExpertLayout) -> str | None:
    """The caution on LoRA at `lora_rank` (0: none, and no caution) on `model` with the Trinity release `version`, its
    routed experts held as `experts` (`CautionCode.LORA_MOE_CONFIG_UNSAVED`), where it is a mixture of experts whose
    adapter config Trinity saves cut short (`lora_moe_unsaved_words`, which the LoRA key's comment says too); None
    otherwise."""
    unsaved = lora_moe_unsaved_words(model, version, experts) if lora_rank else None
    return None if unsaved is None else f"LoRA on {model.name}, a mixture of experts: {unsaved}"


def lora_saved_split_caution(model: Model, lora_rank: int, targets: LoraTargets | None,
                             version: TrinityVersion | None, experts: ExpertLayout) -> str | None:
    """The caution on a new LoRA adapter at `lora_rank` (0: none, and no caution) on `model` on the
    ``target_modules`` regex of the plan's (`targets`: ``--lora-targets``; None: all-linear's) that Trinity saves
    into each checkpoint as its characters with the release `version`, its routed experts held as `experts`
    (`CautionCode.LORA_TARGETS_SAVED_SPLIT`, in `lora_saved_split_words`, which the LoRA key's comment says too);
    None otherwise. A config's own LoRA is its reading's to say (``solver.trinity.config``)."""
    return lora_saved_split_words(model, version, experts, targets) if lora_rank else None


def lora_targets_caution(model: Model, lora_rank: int, targets: LoraTargets | None, experts: ExpertLayout,
                         option_names: OptionNames = COMMAND_OPTIONS) -> str | None:
    """The caution on a new LoRA adapter at `lora_rank` (0: none, and no caution) on `model` on the ``target_modules``
    regex the option gives (`targets`: ``--lora-targets``, ``lora_targets=`` as `option_names` name it; None,
    all-linear's, which both take) where a release that holds the routed experts either way (`experts`) may run on
    the transformers whose PEFT refuses it (`CautionCode.LORA_TARGETS_ONE_TRANSFORMERS`: `one_transformers_taken`),
    in the words a config's check says it in (`one_transformers_words`); None otherwise. A config's own LoRA is its
    check's to say (``solver.trinity.checks.lora_targets_problem``)."""
    if not lora_rank or targets is None:
        return None
    taken = one_transformers_taken(targets.pattern, targets.excluded, model, experts)
    if taken is None:
        return None
    why = peft_target_refusal(targets.pattern, targets.excluded, model.peft_names_of(other_layout(taken))) or ""
    option = option_names.lora_options[1]
    return one_transformers_words(f"target_modules '{targets.pattern}' ({option})", why, TARGETS_FIX, targets.pattern,
                                  targets.excluded, model, taken)


def lora_excluded_adapted_caution(model: Model, lora_rank: int, targets: LoraTargets | None,
                                  version: TrinityVersion | None, experts: ExpertLayout,
                                  option_names: OptionNames = COMMAND_OPTIONS,
                                  config_targets_key: str | None = None) -> str | None:
    """The caution on a new LoRA adapter at `lora_rank` (0: none, and no caution) on `model` whose ``exclude_modules``
    regex the option gives (`targets`' excluded: ``--lora-exclude``, ``lora_exclude_modules=`` as `option_names` name
    it) matches a mixture of experts' router or routed experts, which its targets adapt all the same on
    transformers 5 under the release `version`, its routed experts held as `experts`
    (`CautionCode.LORA_EXCLUDED_ADAPTED`), in the words a config's check says it in (`excluded_adapted_words`, the
    fix naming ``--lora-targets``, or beside a config's own LoRA, which the config keeps, its key
    `config_targets_key`: ``model.lora_configs[0].target_modules``, `ConfigAdapter.targets_key`); None otherwise. A
    config's own exclusions are its check's to say (``solver.trinity.checks``)."""
    if not lora_rank or targets is None or targets.excluded is None:
        return None
    _, targets_option, excluded_option = option_names.lora_options
    return excluded_adapted_words(f"exclude_modules '{targets.excluded}' ({excluded_option})", targets.pattern,
                                  targets.excluded, model, version, experts, config_targets_key or targets_option)


def host_need_words(amount: str, offload: bool, critic: CriticStates | None = None) -> str:
    """What a plan needs of a node's host memory, in words: ``with Offload it needs 162.6 GiB of host memory per
    node``, else ``it needs 30.6 GiB of host memory per node`` and what for (`host_need_purpose`: ``while the model
    loads``, or for the states of a PPO `critic` there while the actor trains, `HOST_HELD_CRITICS`, with Offload or
    not) (`amount`: the GiB, as written)."""
    if offload and critic not in HOST_HELD_CRITICS:
        return f"with Offload it needs {amount} GiB of host memory per node"
    return f"it needs {amount} GiB of host memory per node {host_need_purpose(offload, critic)}"


PLAN_LEFT_OUT_WHEN_NONE = ("gpu_hours", "host_ram_assumed")
"""The fields a plan's JSON leaves out where they are None (its schema says so)."""


class Plan(Frozen):
    """One way to lay out the trainer: GPUs, settings, length, what it costs and why it trains."""

    gpus: PositiveInt = Field(description="the trainer GPUs it takes (rollout GPUs come on top)")
    unused_gpus: NonNegativeInt = Field(description=(
        "the GPUs of the trainer's budget it leaves (budget_gpus less gpus), whoever takes them: a rollout on whole "
        "nodes takes those past its asked GPUs (rollout_gpus above the query's); 0 with an open budget"))
    env: bool = Field(description=(
        "whether with Env: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, exported before Ray starts"))
    offload: bool = Field(description=(
        "whether with Offload: FSDP2 (trainer.trainer_strategy: fsdp2) with CPU offload of the states"))
    sp: PositiveInt = Field(description="the Ulysses SP degree (trainer.ulysses_sequence_parallel_size)")
    max_model_len: PositiveInt = Field(description="the length it trains, tokens (model.max_model_len)")
    max_token_len_per_gpu: PositiveInt = Field(description=(
        "trainer.max_token_len_per_gpu: Trinity's default, ceil(2 x max_model_len / sp), or a lower budget where "
        "lowered_budget; for a model trained one sequence per micro-batch (padded-micro-batches), whose estimate "
        "counts max_model_len tokens per GPU, the default Trinity fills in, which verl leaves unread with dynamic "
        "batch sizes off (Trinity's own memory check, a warning, still estimates at it)"))
    token_budget_cap: PositiveInt | None = Field(default=None, description=(
        "the cap asked for (--token-budget N, or a Trinity config's own budget below the default) where it binds: "
        "max_token_len_per_gpu is that cap, below what Trinity's default or the estimate would give; null where no "
        "cap binds"))
    rope_scaling_factor: Annotated[float, Gt(0), AllowInfNan(False)] | None = Field(description=(
        "the YaRN factor model.rope_scaling takes (max_model_len / the model's native context); null within the "
        "native context, and for a model with a RoPE scaling of its own (Llama 3.1)"))
    yarn_beyond_validated: bool = Field(description=(
        "whether its YaRN goes beyond what is validated (Model.yarn_beyond_validated): memory fits, quality is "
        "untested"))
    past_validated_length: PositiveInt | None = Field(default=None, description=(
        "the longest context the model is known to handle (its native context, or what Qwen's model cards validate "
        "YaRN for) where max_model_len is past it, as the text's 'past the validated N' says ('past the native N' "
        "where the native context bounds it: a model that is not Qwen's, or of a native context of 131072 or more, or "
        "on a RoPE scaling of its own): memory fits, quality is untested (plan with --len N to stay within it); null "
        "within it"))
    cost: Amount = Field(description=(
        "the relative step time (lower is faster): it counts the trainer GPUs and the settings, not the model's "
        "size or the GPU type's speed (1 is the model's vanilla step on one GPU), so compare within one model and "
        "GPU type"))
    gpu_hours: Amount | None = Field(default=None, description=(
        "the GPU time a step takes, relative: gpus x cost, in the cost's units (1 is the model's vanilla step on one "
        "GPU), which the answer's objective min_gpu_hours ranks by; left out for the other objectives"))
    evidence: Evidence = Field(description=(
        "documented (the table's cell at its count and length is exactly its setting), inferred (a cell at its "
        "length or longer, for its count or fewer GPUs, names a setting it includes) or estimated (no cell vouches: "
        "the memory model predicts that it fits)"))
    source: SourceCell | None = Field(description="the documented cell it rests on; null when estimated")
    memory_gb: Annotated[GiBFigure, Ge(0)] = Field(description=(
        "the memory model's predicted peak per trainer GPU, GiB despite the name (solve memory's total_gib)"))
    headroom_gb: GiBFigure = Field(description=(
        "memory left over at the tightest peak, GiB: the activations' usable memory (less the safety margin), "
        "without Offload the optimizer step's share where that is tighter (headroom_at_step), or with a PPO critic "
        "the usable memory at its own update where that is (headroom_at_critic_pass)"))
    margin_gb: Annotated[GiBFigure, Ge(0)] = Field(default=0.0, description=(
        "what the safety margin (the answer's margin for an estimate; for a documented or inferred plan --margin or "
        "the memory model's own) keeps back at the tightest peak, GiB: headroom_gb is the room left beside it"))
    headroom_at_step: bool = Field(default=False, description=(
        "whether headroom_gb is the optimizer step's room (memory_gb is the activations' peak)"))
    headroom_at_critic_pass: bool = Field(default=False, description=(
        "whether headroom_gb is the room a PPO critic's own update leaves, its second activation peak (memory_gb is "
        "the actor's)"))
    critic_pass_gb: GiBFigure | None = Field(default=None, description=(
        "with a PPO critic (critic): the memory model's predicted peak of its own update per trainer GPU, GiB, the "
        "second activation peak beside memory_gb, the actor's (headroom_at_critic_pass says where it is the tighter); "
        "null without a critic, and in JSON made before the field"))
    host_memory_gb: Amount | None = Field(default=None, description=(
        "host memory per node the plan needs, GiB, rounded up to a tenth (what --host-ram is checked against): "
        f"{HOST_NEED_WORDS}; null without Offload where --host-ram is not given, unless a PPO critic's states are in "
        "host memory (critic offloaded or reloaded) or the need is more than a node is assumed to have (the "
        "host-memory-unchecked caution names it)"))
    host_ram_assumed: HostRamAssumed | None = Field(default=None, description=(
        "where host_memory_gb is more than a node is assumed to have and nothing checks it (the host-memory-unchecked "
        "caution): what the node is assumed to have, GiB, and the flag or key that would give its host memory; left "
        "out otherwise (host memory given, or a need within the assumed), and in JSON made before the field"))
    host_critic_gb: GiBFigure | None = Field(default=None, description=(
        "with a PPO critic whose states are in host memory while the actor trains (critic offloaded or reloaded): what "
        "one node holds of them, GiB, part of host_memory_gb's training need (as solve memory's host_critic_gib); "
        "null otherwise, and in JSON made before the field"))
    host_training_gb: Amount | None = Field(default=None, description=(
        "where host_memory_gb is the start-up need (the model loading in fp32 beside the pinned shards) and training "
        "holds less: what one node holds while training, GiB, rounded up to a tenth; null where training is the peak, "
        "without Offload or a critic held in host memory, and in JSON made before the field"))
    reference_model: bool = Field(default=True, description=(
        "whether host_memory_gb counts a reference model's pinned shards: false where the run builds none (a "
        "--from-config config's algorithm or LoRA says so, or --no-reference); true where not known"))
    lora_rank: int = Field(default=0, ge=0, description=(
        "the LoRA rank whose states memory_gb and headroom_gb count (the answer's lora_rank); 0 for full "
        "fine-tuning"))
    lora_target_modules: str | None = Field(default=None, description=(
        "with lora_rank: the target_modules regex whose modules memory_gb and host_memory_gb count the adapter on "
        "(--lora-targets, or a --from-config config's model.lora_configs[0].target_modules: the query's "
        "lora_targets), which its fragment writes; null for all-linear's, every linear layer but the output "
        "projection (and in JSON made before the field)"))
    lora_exclude_modules: str | None = Field(default=None, description=(
        "with lora_target_modules: the exclude_modules regex counted beside it (a --from-config config's, or a "
        "cluster job's lora_exclude_modules); null where none"))
    config_lora: bool = Field(default=False, description=(
        "whether its LoRA is the --from-config config's own adapter (the query's config_lora), which the config "
        "keeps: its fragment writes no model.lora_configs, which would replace that adapter; false in JSON made "
        "before the field"))
    config_adapter: ConfigAdapter | None = Field(default=None, description=(
        "with config_lora: that adapter (the query's config_adapter), its key, rank and targets as the plans count "
        "them, which solver.trinity_config and trinity_settings refuse a plan of fewer LoRA parameters against, as "
        "--emit trinity does, and which its check command leaves to the config; null otherwise, and in JSON made "
        "before the field"))
    dpo: bool = Field(default=False, description=(
        "whether the run trains DPO (the query's dpo: a --from-config config's algorithm_type dpo, --dpo, or a cluster "
        "job's dpo: true), which a cluster table's training column says; memory_gb counts a pair per micro-batch "
        "where the model is trained one padded sequence per micro-batch (the answer's dpo_pairs); false in JSON made "
        "before the field"))
    mode_train: bool = Field(default=False, description=(
        "whether the --from-config config runs in mode train (the query's mode_train), the one mode Trinity trains "
        "DPO on a dataset in: with dpo, its fragment's header then leaves out the note that says to set it "
        "(dpo_mode_unset); false without a config, and in JSON made before the field"))
    critic: CriticStates | None = Field(default=None, description=(
        "the PPO critic memory_gb, headroom_gb and host_memory_gb count (the answer's critic): resident, its states "
        "on the GPUs; offloaded, in host memory (FSDP2's offload_policy); or reloaded, in host memory but back on the "
        "GPUs for its own update; null for none"))
    trinity_version: str | None = Field(default=None, description=(
        "the Trinity release its figures were counted for (--trinity-version, or a cluster job's own, as "
        "`solver.tables.release_name` names it: 0.5.1, 0.5.0, 0.5, 0.6), which its fragment and check command keep "
        "where no other is named; null where none was named (0.6's counts), and in JSON made before the field"))
    expert_layout: ExpertLayout = Field(default="fused", description=(
        "how memory_gb and host_memory_gb count a mixture of experts' routed experts, as its Trinity release's "
        "transformers holds them (the query's expert_layout, `solver.tables.counted_expert_layout`): separate for "
        "0.5.1, either for 0.5, 0.5.0 and 0.5.2 (the states and a LoRA adapter each the larger of the two), fused for "
        "0.6 and where none was named (and in JSON made before the field); a dense model's figures are alike in each"))
    model_loading: ModelLoading = Field(default="verl", description=(
        "which of a node's trainer ranks host_memory_gb counts loading the whole model in fp32 at start-up "
        "(`solver.tables.model_loading`, from the Trinity release, the trainer strategy and the GPU's "
        "compute_capability): every-rank (0.5.2; 0.6 with FSDP1 or below compute capability 9; none named, the most "
        "any release loads), rank-0 (0.6 with FSDP2 on compute capability 9 or more), or verl, verl's own workers' "
        "rule, rank 0 for an untied model and every rank for a tied one (0.5.0, 0.5.1; and in JSON made before the "
        "field, whose figures counted it)"))
    compute_capability: str | None = Field(default=None, description=(
        "the GPU type's compute capability (`solver.tables.GpuType.compute_capability`), with which a figure for "
        "another Trinity release counts its loading ranks; null for a GPU type of your own, and in JSON made before "
        "the field"))
    experts_counted: str | None = Field(default=None, description=(
        "for a mixture of experts: how memory_gb and host_memory_gb count its routed experts, in words "
        "(`solver.memory.expert_layout_words`: 'routed experts counted separate, as Trinity 0.5.1's transformers 4 "
        "holds them'), which solve's experts row and solve cluster's pool notes give where a release was named "
        "(trinity_version); null for a dense model, and in JSON made before the field"))
    beyond_calibration: tuple[str, ...] = Field(default=(), description=(
        "for an estimated plan: where it lies outside the observations the memory model was calibrated on, in "
        "words; empty within them, and for a plan a table vouches for"))
    beyond_calibration_codes: tuple[BeyondCode, ...] = Field(default=(), description=(
        "a stable code for each of beyond_calibration, in the same order (docs/json.md lists them); empty in JSON "
        "made before codes"))
    trainer_nodes: PositiveInt | None = Field(default=None, description=(
        "the nodes the trainer runs on, of the query's node size (--node-gpus; in solve cluster the pool's "
        "gpus_per_node): 1 where it fits one node, else the whole nodes it takes (gpus / node size); null in JSON "
        "made before the field"))
    nodes: PositiveInt | None = Field(default=None, description=(
        "with --rollout-gpus: the nodes the trainer and its rollout take together; null without"))
    rollout_gpus: NonNegativeInt | None = Field(default=None, description=(
        "with --rollout-gpus: the rollout GPUs of that layout (more than asked where a trainer on whole nodes "
        "leaves the rollout whole nodes); null without"))
    cautions: tuple[str, ...] = Field(default=(), description=(
        "what to check before running it, in words (`with_cautions`): a model read from a config.json of a kind "
        "whose counts were not checked, YaRN past what is validated, a length past "
        "the model's native context on its own RoPE scaling or with none (a type that is advised no YaRN, as Phi-3), a "
        "length within it past the shorter one vLLM derives "
        "from the model's config.json (a smaller length key), thin headroom where an estimate extrapolates, "
        f"Offload needing more host memory per node than the {SERVER_HOST_RAM_PER_GPU_GIB:g} GiB per GPU servers "
        "commonly have for each of its GPUs (where the node size is not given, its trainer GPUs there; on a card "
        "sold for workstations, than such a workstation has: GpuType.workstation_host_ram_gib) where none was given "
        "to check it, "
        "one GPU of at most an A100 80GB's memory for a model of 4B parameters or more or more than 20K tokens, "
        "data-parallel ranks (GPUs / SP) that are not a power of two where no train batch was given, with "
        "--trinity-version 0.5 a train batch the GPUs do not divide (Trinity 0.5.0 and 0.5.1 refuse it, 0.5.2 takes "
        "it: with 0.5.0 or 0.5.1 the plans keep to it), Env on an "
        "AMD GPU, SP on GPUs that reach one another over PCIe (GpuType.interconnect), SP on a GPU type of your own "
        "whose interconnect is not stated (weighed as NVLink), in a cluster's placement a trainer across nodes that "
        "its pool does not state a fast node_interconnect joins, LoRA on a mixture of experts whose adapter config "
        "PEFT converts with transformers 5 (Qwen3-MoE, Mixtral), which Trinity saves cut short; empty where there is "
        "nothing"))
    caution_codes: tuple[CautionCode, ...] = Field(default=(), description=(
        "a stable code for each of cautions, in the same order (docs/json.md lists them): what a program tests "
        "instead of the words; empty in JSON made before codes"))

    @model_validator(mode="after")
    def _codes_per_words(self) -> Plan:
        check_caution_codes(self.cautions, self.caution_codes)
        check_beyond_codes(self.beyond_calibration, self.beyond_calibration_codes)
        return self

    def with_cautions(self, model: Model, gpu: GpuType, room: MarginRoom, train_batch_size: int | None = None,
                      train_batch_source: str = "--train-batch-size", version: TrinityVersion | None = None,
                      unchecked_host_ram: str | None = None, node_gpus: int = NODE_GPUS,
                      option_names: OptionNames = COMMAND_OPTIONS, node_gpus_given: bool = False,
                      fits_without_sp: WithoutSp = None, dpo: bool = False,
                      batch_divisor: BatchDivisor = "ranks") -> Plan:
        """This plan, of `model` on `gpu`, with its `cautions` (its room to spare weighed against `room`, the margin
        it was held to); without a `train_batch_size` (the query's) to check, one for data-parallel ranks that usual
        batches may not split over (`uneven_split_caution`, naming `train_batch_source`, where the query would take
        one); with it and a Trinity release that may refuse it (`batch_divisor` ``unsure``: 0.5 without its patch),
        one where the GPUs do not divide it (its ranks do, as the planner keeps them to), which Trinity 0.5.0 and
        0.5.1 refuse (`batch_over_trainer_gpus_words`; for those, ``gpus``, the planner keeps to it); with
        `unchecked_host_ram`, the flag that gives a node's host memory where the query gave none
        (`Query.unchecked_host_ram`), one for an Offload need larger than servers commonly have for the GPUs of a
        node of `node_gpus` (for its trainer GPUs there where that size is not `node_gpus_given`), or a workstation
        for all its cards (`unchecked_host_need`); the options the cautions point to named as `option_names` name
        them (the query's); and for SP over PCIe, whether the question without SP has a plan (`fits_without_sp`, as
        `sp_over_pcie_caution` takes it); `dpo`: the query's (`Query.dpo`), as `padding_cautions` takes it; with LoRA
        (`lora_rank`) on a mixture of experts whose adapter config Trinity saves cut short, one worded for `version`
        (`lora_moe_caution`); on LoRA targets of the query's (not a config's own: `config_lora`) that one transformers'
        PEFT alone takes under a release that may run either, one (`lora_targets_caution`), on exclusions an option
        gives (beside a config's own LoRA too: `_option_exclusion`, the fix then naming the config's key) that a
        mixture of experts' PEFT adapts all the same, one (`lora_excluded_adapted_caution`), and on a regex of
        theirs that Trinity saves as its characters, one (`lora_saved_split_caution`)."""
        thin = (thin_headroom(self.headroom_gb, self.beyond_calibration, gpu.memory_gib, room,
                              self.beyond_calibration_codes, option_names, gpu.rocm)
                if self.evidence == "estimated" else "")
        uneven = uneven_split_caution(self.gpus, self.sp, train_batch_source) if train_batch_size is None else None
        over_gpus = self._batch_over_gpus(train_batch_size, train_batch_source, batch_divisor)
        single = single_gpu_caution(model, self.gpus, self.max_model_len, gpu.memory_gib)
        on_node = trainer_gpus_on_node(self.gpus, node_gpus)
        hint = lower_host_count_hint(self.trinity_version is not None, self.model_loading, on_node,
                                     bool(host_moment_words(self.host_training_gb, self.model_loading, self.offload,
                                                            self.critic)),
                                     self.reference_model, model.tied_embeddings, self.compute_capability,
                                     option_names.release_option())
        node_size = node_gpus if node_gpus_given else None
        bound = unchecked_host_bound(self.host_memory_gb, gpu, on_node, node_size, unchecked_host_ram)
        host = (None if bound is None or self.host_memory_gb is None else _host_need_words(
            self.host_memory_gb, bound, gpu, on_node, node_size, self.offload, option_names.node_gpus,
            self.host_training_gb, self.model_loading, hint, self.critic))
        cautions = cautions_of(model, self.max_model_len, thin, single, uneven, gpu.rocm and self.env, over_gpus, host,
                               sp_over_pcie_caution(gpu, self.sp, option_names, True, fits_without_sp,
                                                    self.max_model_len), option_names,
                               interconnect_unstated_caution(gpu, self.sp, option_names), dpo,
                               lora_moe_caution(model, self.lora_rank, version, self.expert_layout), version,
                               None if self.config_lora else lora_targets_caution(
                                   model, self.lora_rank, self.lora_targets, self.expert_layout, option_names),
                               None if self.config_lora else lora_saved_split_caution(
                                   model, self.lora_rank, self.lora_targets, version, self.expert_layout),
                               lora_excluded_adapted_caution(
                                   model, self.lora_rank, self._option_exclusion, version, self.expert_layout,
                                   option_names, None if self.config_adapter is None else
                                   self.config_adapter.targets_key),
                               far_beyond_calibration(room, thin, option_names)
                               if self.evidence == "estimated" else None,
                               transformers_4_unloaded_words(model, version, self.expert_layout))
        return self.model_copy(update={
            **caution_fields(cautions),
            "host_ram_assumed": bound})

    def with_batch_caution(self, train_batch_size: int | None, train_batch_source: str,
                           batch_divisor: BatchDivisor) -> Plan:
        """This plan with the caution `with_cautions` gives where its GPUs do not divide `train_batch_size` (from
        `train_batch_source`) and the Trinity release may refuse that or does (`batch_divisor` ``unsure`` or
        ``gpus``), where it lacks it: a plan made without the release (a cluster's placements, an answer planned
        without ``trinity_version``) gets it in its fragment for 0.5, 0.5.0 and 0.5.1."""
        words = self._batch_over_gpus(train_batch_size, train_batch_source, batch_divisor)
        return self if words is None else self.with_caution(Caution(CautionCode.BATCH_DIVIDES_TRAINER_GPUS, words))

    def with_caution(self, caution: Caution) -> Plan:
        """This plan with `caution` among its cautions, in their shown order (`in_shown_order`), where it lacks one of
        its code or words (JSON made before codes, with words alone: after the others)."""
        if caution.code in self.caution_codes or caution.words in self.cautions:
            return self
        if self.cautions and not self.caution_codes:
            return self.model_copy(update={"cautions": (*self.cautions, caution.words)})
        return self.model_copy(update=caution_fields(in_shown_order(
            (*map(Caution, self.caution_codes, self.cautions), caution))))

    def _batch_over_gpus(self, train_batch_size: int | None, train_batch_source: str,
                         batch_divisor: BatchDivisor) -> str | None:
        """Unless the Trinity release takes it (`batch_divisor` ``ranks``), that Trinity 0.5.0 and 0.5.1 refuse
        `train_batch_size` (from `train_batch_source`) where the plan's GPUs do not divide it
        (`batch_over_trainer_gpus_words`); else None."""
        if batch_divisor == "ranks" or train_batch_size is None or not train_batch_size % self.gpus:
            return None
        return batch_over_trainer_gpus_words(train_batch_size, train_batch_source, self.gpus, self.sp)

    @property
    def lora_targets(self) -> LoraTargets | None:
        """The LoRA adapter's targets whose modules its figures count it on (`lora_target_modules` less
        `lora_exclude_modules`, as `Catalog.with_lora_targets` takes them); None for ``all-linear``'s."""
        if self.lora_target_modules is None:
            return None
        return LoraTargets(self.lora_target_modules, self.lora_exclude_modules)

    @property
    def _option_exclusion(self) -> LoraTargets | None:
        """Its targets (`lora_targets`) where an option gave their ``exclude_modules`` regex: ``--lora-exclude``'s
        without a config's own LoRA (`config_lora`), and beside one where it counts the adapter on exclusions other
        than the config's (`lora_targets_given`, as the check command gives it); None where the exclusion is the
        config's own, which its check says (and in JSON made before `config_adapter`, which would tell)."""
        adapter = self.config_adapter
        if self.config_lora and (adapter is None or lora_targets_given(adapter.targets, self.lora_targets)[1] is None):
            return None
        return self.lora_targets

    @property
    def lora_config(self) -> dict[str, int | str]:
        """The LoRA config that turns on the plan's LoRA (``model.lora_configs[0]``, a new adapter): its rank, and its
        ``target_modules`` and ``exclude_modules`` where given (`lora_targets`; else Trinity's default,
        ``all-linear``)."""
        targets = {"target_modules": self.lora_target_modules, "exclude_modules": self.lora_exclude_modules}
        return {"lora_rank": self.lora_rank, **{key: value for key, value in targets.items() if value is not None}}

    @property
    def without_rollout(self) -> bool:
        """Whether the run has no rollout (vLLM) engines: DPO (Trinity trains it on a dataset in mode train
        alone), a config of mode train (`mode_train`), or none kept for it (`rollout_gpus` 0)."""
        return self.dpo or self.mode_train or self.rollout_gpus == 0

    @property
    def dpo_mode_unset(self) -> bool:
        """Whether the run trains DPO (`dpo`) without a config of mode train (`mode_train`): a fragment for it whose
        keys leave the mode says the mode and batch Trinity's DPO needs (`solver.trinity.fragment.DPO_MODE_NOTE`)."""
        return self.dpo and not self.mode_train

    @property
    def setting(self) -> Setting:
        """The plan's Env, Offload and SP as a `Setting` (``label`` gives the source's words)."""
        return Setting(env=self.env, offload=self.offload, sp=self.sp)

    def another_than(self, other: Plan | None) -> bool:
        """Whether `other` (the best plan of the question without one of its limits, say) is another plan than this
        one: other GPUs, setting or length (False for None)."""
        return other is not None and ((other.gpus, other.setting, other.max_model_len)
                                      != (self.gpus, self.setting, self.max_model_len))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def lowered_budget(self) -> bool:
        """Whether its ``max_token_len_per_gpu`` is below Trinity's default (``--token-budget auto``)."""
        return self.max_token_len_per_gpu < token_budget(self.max_model_len, self.sp)

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """Its JSON Schema: the fields of `PLAN_LEFT_OUT_WHEN_NONE` are optional, never null."""
        return left_out_when_none(handler(core_schema), handler, PLAN_LEFT_OUT_WHEN_NONE)

    @model_validator(mode="before")
    @classmethod
    def _derived_budget_flag(cls, raw: Any) -> Any:
        """A plan rebuilt from its JSON: ``lowered_budget`` is derived from the other fields, so it is dropped
        where it agrees with them (and refused where it does not)."""
        return _without_derived(
            raw, "lowered_budget",
            lambda data: data["max_token_len_per_gpu"] < token_budget(data["max_model_len"], data["sp"]),
            (KeyError, TypeError, ZeroDivisionError), "max_token_len_per_gpu {max_token_len_per_gpu} says")

    @model_serializer(mode="wrap")  # unannotated: a return annotation would replace the JSON schema's properties
    def _budget_flag_beside_budget(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        data: dict[str, Any] = without_none(handler(self), PLAN_LEFT_OUT_WHEN_NONE)
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
    def single_gpu_advised_against(self) -> bool:
        """Whether the plan carries the guide's caution against one GPU (`single_gpu_caution`)."""
        return CautionCode.SINGLE_GPU_ADVISED_AGAINST in self.caution_codes

    def cautioned(self, words: str) -> ReasonWords:
        """`words` on the plan (its evidence), and where it carries the guide's caution against one GPU
        (`single_gpu_advised_against`), that in short after them, with its code: ``documented; one trainer GPU: ...``
        (`SINGLE_GPU_CAUTION_SHORT`; alone where `words` is ""), as a reason names the plan."""
        if not self.single_gpu_advised_against:
            return ReasonWords(words)
        return ReasonWords("; ".join(filter(None, (words, SINGLE_GPU_CAUTION_SHORT))),
                           frozenset({CautionCode.SINGLE_GPU_ADVISED_AGAINST}))

    def with_single_gpu_caution(self, words: str) -> str:
        """`cautioned`'s words alone, as a plan shown beside another outside a reason (an explanation's) says them."""
        return self.cautioned(words).text

    @property
    def evidence_cautioned(self) -> ReasonWords:
        """The plan's evidence in a word or two (`evidence_label`), and where it carries the guide's caution against
        one GPU, that in short, with its code (`cautioned`): ``documented; one trainer GPU: ...``, as a reason's plan
        says it."""
        return self.cautioned(self.evidence_label)

    def cautions_coded(self, *codes: CautionCode) -> tuple[str, ...]:
        """The plan's cautions whose code is one of `codes`, in order (none where its JSON was made before codes)."""
        return tuple(caution for caution, coded in zip(self.cautions, self.caution_codes, strict=False)
                     if coded in codes)

    def cautions_beside(self, best: Plan | None, above: Sequence[Plan] | None = None, lead: str = "caution") -> str:
        """This plan's cautions of `BESIDE_CAUTION_CODES` that the `best` plan it is shown beside does not carry
        already (all of them where the answer has no best plan: an --explain line naming what would fit), each as
        ``; caution: ...`` (`lead` naming the plan where another's words come between: ``caution with 2249.1 GiB``),
        as a summary's row or an --explain line on another plan ends ("" where none): a user who takes this plan
        instead is told what it risks that the best plan's own cautions do not say.
        Given the plans that the rows or lines `above` its own show beside `best` (None where none are: an --explain
        line beside a best plan, whose words its JSON keeps), its host memory caution is short (`short_host_need`)
        where the answer shows a full one already: `best` carries one, or a plan above does (the first to, where `best`
        does not, its full),
        built from the bound it was made with (`host_ram_assumed`; whole in JSON made before that field)."""
        beside = () if best is None else (best,)
        shown = above is not None and any(plan.cautions_coded(CautionCode.HOST_MEMORY_UNCHECKED)
                                          for plan in (*beside, *above))
        short = (short_host_need(self.host_memory_gb, self.offload, self.critic, self.host_ram_assumed)
                 if shown and self.host_memory_gb is not None and self.host_ram_assumed is not None else None)
        return "".join(
            f"; {lead}: " + (short if short is not None and coded == CautionCode.HOST_MEMORY_UNCHECKED else caution)
            for caution, coded in zip(self.cautions, self.caution_codes, strict=False)
            if coded in BESIDE_CAUTION_CODES and not any(caution in plan.cautions for plan in beside))

    @property
    def evidence_and_single_gpu(self) -> str:
        """`evidence_cautioned`'s words alone, as a plan shown beside another outside a reason (a summary's row) says
        them."""
        return self.evidence_cautioned.text

    def host_memory_words(self, nodes: int | None = None, rollout_gpus: int | None = None) -> str | None:
        """The host memory per node the plan needs and what for, in words (None where `host_memory_gb` is), on a layout
        of `nodes` nodes with `rollout_gpus` rollout GPUs (by default the plan's own: `nodes`, `rollout_gpus`): per
        node its trainer runs on, where the others hold its rollout alone (`trainer_node_count`); it says where the
        figure counts no reference model (`reference_model`), and, with a PPO critic held in host memory, what it holds
        with the critic's share (`host_critic_gb`), as ``solve memory`` says it (`host_need_detail`)."""
        if self.host_memory_gb is None:
            return None
        detail = (None if self.host_critic_gb is None else
                  host_need_detail(self.offload, self.reference_model, self.critic, self.host_critic_gb))
        said = [detail or ("" if self.reference_model else "no reference model"),
                host_moment_words(self.host_training_gb, self.model_loading, self.offload, self.critic)]
        purpose = host_need_purpose(self.offload, self.critic) + (
            f" ({'; '.join(part for part in said if part)})" if any(said) else "")
        nodes = nodes if nodes is not None else self.nodes or 1
        rollout_gpus = rollout_gpus if rollout_gpus is not None else self.rollout_gpus or 0
        trainer_nodes = trainer_node_count(self.gpus, rollout_gpus, nodes)
        if trainer_nodes == nodes:
            return f"{self.host_memory_gb:.1f} GiB per node {purpose}"
        others = "the other holds" if nodes - trainer_nodes == 1 else "the others hold"
        return (f"{self.host_memory_gb:.1f} GiB {purpose}, per node the trainer runs on ({trainer_nodes} of {nodes}: "
                f"{others} only its rollout)")

    @property
    def critic_pass_shown(self) -> bool:
        """Whether the plan's words give a PPO critic's own update's peak beside the actor's: with a critic, where the
        two differ as the words round them (a tenth of a GiB)."""
        return self.critic_pass_gb is not None and f"{self.critic_pass_gb:.1f}" != f"{self.memory_gb:.1f}"

    @property
    def peaks_words(self) -> str:
        """What follows the actor's predicted peak per GPU in words: with a PPO critic whose own update's peak differs
        (`critic_pass_gb`), `` for the actor's pass and 52.5 for the critic's own update``; "" otherwise."""
        if not self.critic_pass_shown:
            return ""
        return f" for the actor's pass and {self.critic_pass_gb:.1f} for the critic's own update"

    @property
    def prediction_words(self) -> str:
        """The memory model's predicted peak per GPU and the room it leaves, in words, as `solve`'s ``memory`` row
        and `solve cluster`'s table give them: ``49.7 GiB per GPU predicted, 23.5 GiB to spare`` (`peaks_words`,
        `room_words`)."""
        return f"{self.memory_gb:.1f} GiB per GPU predicted{self.peaks_words}, {self.room_words}"

    @property
    def room_words(self) -> str:
        """The room the memory model leaves the plan (or what it lacks), in words, at the tightest of the
        activations, the optimizer step and a critic's own update (naming the actor's pass where `peaks_words`
        gives both passes and it is the tighter)."""
        at = (" at the optimizer step's peak, the tighter one" if self.headroom_at_step
              else " at the critic's own update, the tighter peak" if self.headroom_at_critic_pass
              else " at the actor's pass, the tighter peak" if self.critic_pass_shown else "")
        if self.headroom_gb >= 0:
            return f"{self.headroom_gb:.1f} GiB to spare{self._margin_kept_words}{at}"
        over = f"{-self.headroom_gb:.1f}" if self.headroom_gb <= -0.05 else "less than 0.1"  # never "0.0 GiB over"
        return f"{over} GiB over what it may take{at}"

    @property
    def _margin_kept_words(self) -> str:
        """Where the room to spare rounds to nothing (under 0.05 GiB: a longest length's plan, the memory filled up to
        the margin), what the safety margin keeps back beside it, so that the plan is not read as on the edge: `` beyond
        the 0.7 GiB the safety margin keeps``; "" otherwise."""
        return (f" beyond the {self.margin_gb:.1f} GiB the safety margin keeps"
                if 0 <= self.headroom_gb < 0.05 and self.margin_gb >= 0.05 else "")

    @property
    def beyond_calibration_words(self) -> str:
        """``; beyond its calibration: ...`` where an estimate extrapolates (`beyond_calibration`), said after what it
        rests on; "" otherwise."""
        return f"; beyond its calibration: {', '.join(self.beyond_calibration)}" if self.beyond_calibration else ""

    def evidence_text(self, gpu: str, model: str | None = None) -> str:
        """What the plan of `model` on `gpu` rests on, in words: the documented cell (naming whose it is where
        it is another model's of the same shape, given `model`), or the memory model's prediction; `QueryError`
        for a `gpu` or `model` that is not a str (an Answer's ``gpu`` and ``model`` are)."""
        check_types(("gpu", gpu, str), ("model", model, str | None))
        if self.source is None:
            return (f"estimated: the memory model predicts {self.memory_gb:.1f} GiB per GPU{self.peaks_words}, "
                    f"{self.room_words}"
                    f"{self.beyond_calibration_words}")
        cell = self.source.words(gpu, model, memory="the same")
        if self.evidence == "documented":
            between = (f", the row that {self.max_model_len} falls to"
                       if self.source.max_model_len > self.max_model_len else "")
            return f"documented: {cell}{between}"
        shorter = " at fewer tokens" if self.source.max_model_len > self.max_model_len else ""
        more_gpus = " on more GPUs (which hold no more per GPU)" if self.source.gpus < self.gpus else ""
        lora = (f" for full fine-tuning, which holds more than this LoRA run (rank {self.lora_rank})" if self.lora_rank
                else "")
        runs = "runs that same setting" if self.source.setting == self.setting.label else "includes that setting"
        return f"inferred: {cell}{lora}, and this plan {runs}{shorter}{more_gpus}"


ExplainRule = Literal[
    "choice", "budget", "whole_nodes", "rollout_layout", "sp_divides_gpus", "sp_divides_heads", "sp_kv_heads",
    "sp_attention", "sp_within_node", "batch_divides", "token_cap", "pin", "host_ram", "beyond_table", "no_setting",
    "memory_model", "no_estimates", "out_of_memory", "undocumented", "longest_documented", "longer", "limit",
    "no_table", "shorter_length", "fewer_tokens", "more_gpus", "lower_token_budget", "raise_token_budget",
    "without_pins", "undecided", "incomplete",
]
"""The names of `--explain`'s steps (`Reason.rule`): the one source of the names that docs/json.md's table
documents, in its order."""


class Reason(Frozen):
    """One step of an explanation: the rule (a short name) and what it means here, in words."""

    rule: ExplainRule = Field(description="the step's name (docs/json.md lists them)")
    detail: str = Field(description="what the rule means for this answer, in words")


class CurrentSettings(Frozen, defer_build=True):
    """The settings a user's Trinity config runs with, and whether the tables say they train."""

    config: str = Field(description="the config file's name")
    config_model: str | None = Field(default=None, description=(
        "where the plans are for another catalogue model than the one the config trains (--model, the API's model=): "
        "the config's, as the catalogue names it, which the apply row's heading names; null otherwise"))
    gpus: PositiveInt = Field(description="the trainer GPUs the config gives (or, where it gives none, the budget)")
    gpus_given: bool = Field(default=True, description=(
        "whether the config gives its GPUs (cluster.node_num and cluster.gpu_per_node); else gpus is the budget's"))
    nodes_given: bool = Field(default=False, description=(
        "whether the node size the verdict judges the trainer GPUs on is the config's own cluster.gpu_per_node (not "
        "--node-gpus of another size, nor the default where the config gives none); false in JSON made before it"))
    batch_given: bool = Field(default=False, description=(
        "whether the train batch the verdict judges is the config's own (buffer.train_batch_size, else "
        "buffer.batch_size x algorithm.repeat_times; not --train-batch-size's); false where none is judged, and in "
        "JSON made before it"))
    env: bool = Field(description="from the environment: env_variable has expandable_segments:True")
    env_variable: str = Field(default=ENV_VARIABLE[0], description=(
        "the allocator variable env was read from: the first set of PYTORCH_CUDA_ALLOC_CONF, PYTORCH_HIP_ALLOC_CONF "
        "and PYTORCH_ALLOC_CONF, as PyTorch 2.10 and 2.11 read them on every GPU; PYTORCH_CUDA_ALLOC_CONF where none "
        "is set"))
    env_variable_set: bool = Field(default=False, description=(
        "whether env_variable is set in the environment the verdict read; false where none of the allocator variables "
        "is (Env is then off)"))
    offload: bool = Field(description=(
        "whether the verdict takes Offload as on: fsdp2 with the offload flags, offload_policy among them"))
    sp: PositiveInt = Field(description="the config's Ulysses SP degree (trainer.ulysses_sequence_parallel_size)")
    critic_sps: tuple[PositiveInt, ...] = Field(default=(), description=(
        "where the config gives the PPO critic it trains an SP of its own that is not sp "
        "(trainer.trainer_config.critic's, or Trinity 0.6's critic.fsdp's): every SP the releases it may run on run "
        "the critic at, at the one of which its update needs the most the verdict counts it (its token budget raised "
        "to hold a sequence there, ceil(max_model_len / SP), or with Trinity 0.5, where its passes read it, two, as "
        "0.5.0 raises it, ceil(2 x max_model_len / SP); with estimates off, at sp); empty: at sp, as the plans"))
    max_model_len: PositiveInt = Field(description=(
        "the length its settings are judged at, tokens: the config's, or --len's (length_given)"))
    length_given: bool = Field(default=True, description=(
        "whether max_model_len is the config's own (False: --len's, at which its settings are judged)"))
    max_token_len_per_gpu: PositiveInt | None = Field(default=None, description=(
        "the config's token budget in effect (the most any role takes: a role's own, else "
        "trainer.max_token_len_per_gpu; the ref's only where the algorithm uses a ref model; a role with dynamic "
        "batch sizes off reads none, and takes its micro-batch size x ceil(max_model_len / sp)) when it is below "
        "Trinity's default and holds a sequence, and estimates are on: the verdict is at that budget; null otherwise "
        "(the verdict is at Trinity's default)"))
    trains: bool = Field(description=(
        "whether these settings train as far as memory and the rules of `broken_rule` go (the tables, or the memory "
        "model's estimate, vouch for them); false where the config lets a GPU take more tokens than the verdict's "
        "budget on some verl line where a setting fits every line (a token-budget-above-verdict or "
        "critic-budget-above-verdict problem, or a padded model's micro-batch-unbounded: the verdict does not vouch "
        "for that; not dpo-doubled-above-verdict, "
        "DPO's sizes doubled past it on verl before 0.8 alone, which no size fits on both lines); with `refused`, the "
        "config as written does not run all the same"))
    plan: Plan | None = Field(description=(
        "the plan for exactly these settings, with its evidence, if they train, or if they fit in memory at the "
        "verdict's budget where the config lets a GPU take more (trains false); its memory figures with the states "
        "over a hybrid fsdp_size's groups where `states_grouped`, and with the PPO critic's own update where the "
        "verdict counts it at an SP of its own (`critic_sps`) or at a budget Trinity raises (critic-budget-raised) "
        "as it counts it"))
    unread_keys: tuple[str, ...] = Field(default=(), description=(
        "the config's keys that decide how many tokens a pass takes per GPU (dynamic batch sizes, micro-batch sizes), "
        "or whether a pass fails on its rows (algorithm.bypass_old_logprobs), or the share of the states a GPU holds "
        "(a role's fsdp_size), and cannot be read here (an environment variable this shell lacks), and a role's "
        "fsdp_size that shards its states over groups of fewer GPUs (fsdp-size-hybrid) where the verdict cannot count "
        "them so (estimates off, or the host memory checked): where any, whether the settings train is unknown (trains "
        "false, and the verdict says so), unless they break a rule"))
    broken_rule: str | None = Field(default=None, description="the rule of Trinity's or verl's these settings break")
    broken_rule_code: BrokenRuleCode | None = Field(default=None, description=(
        "the code of `broken_rule` (docs/json.md); null where broken_rule is, and in JSON made before codes"))
    host_memory_needed: Amount | None = Field(default=None, description=(
        "when the host memory given (--host-ram, or a pool's) is what rules them out: the host memory per node they "
        f"need (`host_memory_gib`: {HOST_NEED_WORDS}), GiB"))
    predicted: tuple[FiniteFloat, FiniteFloat] | None = Field(default=None, description=(
        "when they do not train and no table says why: the memory model's predicted peak per GPU and the usable "
        "memory (less the safety margin), GiB, at the verdict's budget"))
    predicted_step: tuple[FiniteFloat, FiniteFloat] | None = Field(default=None, description=(
        "with `predicted`, when it is the optimizer step that does not fit: its peak per GPU and what it may take "
        "(98% of the memory less the safety margin), GiB"))
    predicted_critic_pass: tuple[FiniteFloat, FiniteFloat] | None = Field(default=None, description=(
        "with `predicted`, when it is a PPO critic's own update that does not fit (the peak does; the optimizer step "
        "may not either: `predicted_step`): its peak per GPU and the usable memory, GiB"))
    out_of_memory: SourceCell | None = Field(default=None, description=(
        "when they do not train: the cell of the GPU count's own table, or of a table for more GPUs, that says "
        "they ran out of memory (its setting: what trained there instead, or '-')"))
    smaller_card: TablesVerdict | None = Field(default=None, description=(
        "when no table of this GPU type speaks of them and the memory model does not fit them (`predicted`): the "
        "verdict of the tables of another GPU type with at most this one's memory that say they train "
        "(`smaller_card_vouching`), its cell naming that GPU type, as solve memory's smaller_card; a note: the "
        "estimate is on the safe side there, and still decides"))
    config_problems: tuple[str, ...] = Field(default=(), description=(
        "what else in the config breaks Trinity's or verl's rules (RoPE scaling, token limits) or is not what the "
        "verdict assumes (partial Offload, a token budget above the default the tables measured)"))
    config_problem_codes: tuple[ConfigProblemCode, ...] = Field(default=(), description=(
        "the code of each of `config_problems`, in the same order (docs/json.md); empty in JSON made before codes"))
    states_grouped: bool = Field(default=False, description=(
        "whether the verdict counts the states of the actor or the critic over groups of fewer GPUs than the "
        "trainer's (a hybrid fsdp_size) by the memory model's estimate, whose figures its fsdp-size-hybrid lines give, "
        "and `plan`'s too where it trains (the verdict says so, and says it again of settings read back from their "
        "JSON); false in JSON made before it"))
    verdict: str | None = Field(default=None, description=(
        "the verdict in words, one line, as the text prints it under the answer's heading: whether these settings "
        "train, and why not (the rule, the cell, the host memory or the memory model's figures), and that the config "
        "is refused where `refused`; where they fit, the host-memory-unchecked caution of their plan, where it has "
        "one (a need past what a node is assumed to have, with no host memory given: trains stays true); with "
        "`--check`, why it exits 1 where `trains` is false or `refused` true (the answer's `reason` is about the best "
        "plan, null where there is one); null in JSON made before it"))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def refused(self) -> bool:
        """Whether Trinity, verl or PyTorch refuse the config as written whatever its memory: one of its problems'
        codes is in `REFUSED_CONFIG_CODES`, or the rule it breaks refuses it (`rule_refuses`; false in JSON made
        before codes)."""
        return self.rule_refuses or not REFUSED_CONFIG_CODES.isdisjoint(self.config_problem_codes)

    @property
    def rule_refuses(self) -> bool:
        """Whether the rule the settings break (`broken_rule_code`) is one every release stops on, broken by the
        config's own model, GPUs, nodes and train batch (`broken_rule_refuses`: not another model's heads, the budget's
        GPUs, --node-gpus' nodes or --train-batch-size's batch)."""
        return broken_rule_refuses(self.broken_rule_code, self.config_model, self.gpus_given, self.nodes_given,
                                   self.batch_given)

    @property
    def check_fails(self) -> bool:
        """Whether ``--check`` exits 1 for these settings: they are not shown to train (`trains` false), or the config
        as written is refused (`refused`); `verdict` says why."""
        return not self.trains or self.refused

    @property
    def problems_pointed_to(self) -> tuple[str, ...]:
        """The problems `verdict` points to: those that refuse the config (`REFUSED_CONFIG_CODES`) and those that let a
        GPU take more tokens than the verdict's budget (`BUDGET_ABOVE_VERDICT_CODES`)."""
        return tuple(problem for problem, code in zip(self.config_problems, self.config_problem_codes, strict=False)
                     if code in REFUSED_CONFIG_CODES or code in BUDGET_ABOVE_VERDICT_CODES)

    @property
    def budget_above_verdict(self) -> int:
        """How many of the config's problems say that it lets a GPU take more tokens than the verdict's budget on some
        verl line the release may run, where a setting fits every line (`BUDGET_ABOVE_VERDICT_CODES`: a budget of the
        trainer's or a role's, even one only verl before 0.8 reads, or a trained critic's): with any, the verdict does
        not vouch for its settings (`trains` false). DPO's sizes doubled past it on verl before 0.8 alone
        (``dpo-doubled-above-verdict``), which no size fits on both verl lines, are not counted: as for the
        ``-refused`` codes, a problem of one verl line only is a line that says which."""
        return sum(code in BUDGET_ABOVE_VERDICT_CODES for code in self.config_problem_codes)

    @model_validator(mode="before")
    @classmethod
    def _derived_refused(cls, raw: Any) -> Any:
        """Settings rebuilt from their JSON: ``refused`` is derived from ``config_problem_codes`` and the broken rule
        (`rule_refuses`), so the field read is dropped where it agrees with them, and the JSON refused (a
        `ValueError`) where it does not. One disagreement is taken: false beside a rule that refuses the config where
        no code does, as JSON printed before broken rules counted said it; it is dropped too, and the settings read
        back say true, as the rule now does."""
        def derived(data: dict[str, Any]) -> bool:
            code = data.get("broken_rule_code")
            by_rule = broken_rule_refuses(None if code is None else BrokenRuleCode(code), data.get("config_model"),
                                          data.get("gpus_given", True), data.get("nodes_given", False),
                                          data.get("batch_given", False))
            by_codes = not REFUSED_CONFIG_CODES.isdisjoint(map(ConfigProblemCode, data.get("config_problem_codes", ())))
            return by_codes or (by_rule and raw["refused"] is not False)

        return _without_derived(raw, "refused", derived, (TypeError, ValueError),
                                "config_problem_codes and broken_rule_code say")

    @model_validator(mode="after")
    def _codes_match_words(self) -> CurrentSettings:
        """Refuse codes that do not match the words: one code per problem (where codes are given), and a rule's code
        only beside a broken rule."""
        check_codes(self.config_problem_codes, self.config_problems, "config_problem_codes", "config_problems",
                    "problem")
        if self.broken_rule_code is not None and self.broken_rule is None:
            raise ValueError("broken_rule_code without broken_rule")
        return self


AlternativeName = Literal["token_budget_auto", "token_budget_auto_longest", "without_pins"]
"""The ways an infeasible query is changed to find the plans near it (`Alternatives`)."""


class Alternatives(Frozen):
    """The best plans of an infeasible query changed one way, as its reason solved them: its explanation
    (``--explain``) names them too, and solves only those not in `solved`. (The longest plan within its budget
    and pins is `Answer.nearest`.)"""

    token_budget_auto: Plan | None = Field(default=None, description=(
        "with --token-budget auto: asked for a length at Trinity's default token budget, with estimates"))
    token_budget_auto_longest: Plan | None = Field(default=None, description=(
        "the longest with --token-budget auto, within the same budget and pins: asked as token_budget_auto is, where "
        "that has no plan"))
    without_pins: Plan | None = Field(default=None, description="without the pins (--sp, --env, --offload), if any")
    solved: frozenset[AlternativeName] = Field(default=frozenset(), description=(
        "the alternatives solved and decided within the time limit (their fields None where no plan exists, or the "
        "query cannot be changed so)"))


class RolloutKept(Frozen):
    """An answer's question asked again with some of its budget kept for the rollout, where its best plan takes the
    budget whole and no rollout GPUs were given: how many, and the best plan then (``--gpus N-K --rollout-gpus K``)."""

    rollout_gpus: PositiveInt = Field(description=(
        "the budget's GPUs kept for the rollout: a quarter of one node's budget (at least 1), or the last node of "
        "several, and those the plan then leaves unused where the question asked again with them kept too has a plan; "
        "a budget of 1 GPU, that one (the trainer then has none: the rollout's GPUs go beside it)"))
    plan: Plan | None = Field(description=(
        "the best plan on the rest of the budget with that many rollout GPUs beside it, or, where it has none at "
        "Trinity's default token budget and neither the host memory given nor the pins rule them out, with "
        "--token-budget auto (its lowered_budget true); null where there is none (and where no GPU is left to the "
        "trainer)"))
    without_host_ram: Plan | None = Field(default=None, description=(
        "where plan is null and the host memory given (--host-ram, host_ram_gb) is what rules the plans out: the best "
        "plan on the rest of the budget without it, its host_memory_gb more than the host memory given; null "
        "otherwise"))
    without_pins: Plan | None = Field(default=None, description=(
        "where plan is null, the host memory given (if any) is not what rules the plans out and the settings the "
        "query pins (--sp, --env, --offload) are: the best plan on the rest of the budget without the fewest of them "
        "that do (the pins it lacks are those named); null otherwise"))


class RoomKept(Frozen):
    """An answer's question asked again at the margin its best plan's thin-headroom caution names (``--margin
    0.04``), where that plan carries it: the margin, and the best plan then, which keeps the room the caution asks
    for (its memory figures held to that margin)."""

    margin: float = Field(ge=0, lt=1, description=(
        "the margin the best plan's thin-headroom caution names (its words' --margin), which keeps the room it asks "
        "for"))
    plan: Plan | None = Field(description=(
        "the best plan of the same question (budget, length, pins) at that margin, as CP-SAT finds it, its "
        "headroom_gb held to that margin; null where there is none (measure a step first)"))


_NOT_COMPARED = frozenset({"wall_time_s", "planning_s", "building_s", "least_time_limit_s", "query"})
"""The fields of a solver's result that its equality and hash leave out (`_Timed`): those that time it, and the query
an answer holds (``Answer.query``: a seed apart, or a question asked through a config, the answers are the same)."""


class _Timed(Frozen):
    """A solver's result with a ``wall_time_s`` field (a placement's ``planning_s``, ``building_s`` and
    ``least_time_limit_s`` too): equal results compare (and hash) equal however long each took to solve, and an
    answer whatever query it holds (`_NOT_COMPARED`)."""

    def _untimed(self) -> tuple[object, ...]:
        return type(self), tuple(value for name, value in self.__dict__.items() if name not in _NOT_COMPARED)

    def __eq__(self, other: object) -> bool:
        return self._untimed() == other._untimed() if isinstance(other, _Timed) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._untimed())


class TrinitySettings(BaseModel):
    """A fragment's settings as data: `config`, the keys it writes as the nested mappings a YAML loader gives
    (``config["trainer"]["ulysses_sequence_parallel_size"]``), `environment`, the variables its comments say
    to export before Ray starts (`plan_environment`: Env's ``PYTORCH_CUDA_ALLOC_CONF``;
    ``VLLM_ALLOW_LONG_MAX_MODEL_LEN`` past the longest length vLLM derives for the model as written; a shared node's
    ``CUDA_VISIBLE_DEVICES``): no config key sets them; and `trinity_06_keys`, those of `config`'s keys that only
    Trinity 0.6 takes. Frozen, but not hashable, unlike the other results: the dicts are the caller's, to merge into
    or change (``yaml.safe_dump`` takes them, not a read-only mapping), so a hash of them would not stay the same."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    config: dict[str, Any] = Field(description=(
        "the Trinity config keys that apply the plan, as nested mappings (what --emit trinity writes, as a YAML loader "
        "reads it): merge them into your config"))
    environment: dict[str, str] = Field(description=(
        "the environment variables to export before Ray starts (on every node of the job), which no config key sets: "
        "PYTORCH_CUDA_ALLOC_CONF for Env, VLLM_ALLOW_LONG_MAX_MODEL_LEN past the model's native context on its own "
        "RoPE scaling"))
    trinity_06_keys: tuple[tuple[str, ...], ...] = Field(default=(), description=(
        "the paths of the keys of config that only Trinity 0.6 takes (0.5 refuses them: leave them out for 0.5, or "
        "plan with --trinity-version 0.5, which writes none); empty where a Trinity release was given"))


class SettingsArguments(NamedTuple):
    """The arguments that decide a plan's Trinity settings, by the names `solver.trinity.plan_settings` takes them
    with (its docstring and `trinity_fragment`'s say what each does): an answer's and a placement's, for the fragment
    (`solver.trinity.fragment_for`) and for the settings alone (`solver.trinity.settings_for`) alike."""

    plan: Plan
    model: Model
    rollout_gpus: int | None = None
    nodes: int = 1
    shared_gpus: tuple[int, ...] | None = None
    engines: tuple[int, int] | None = (0, 1)
    layout: Any = None
    version: TrinityVersion | None = None
    train_batch_size: int | None = None
    dpo: bool | None = None
    environ: Mapping[str, str] | None = None
    config_lora: bool = False
    """Whether the plan's LoRA is a config's own (`Query.config_lora`), which the config keeps: no
    ``model.lora_configs`` is written, as none is beside a `layout`."""


def written_release(plan: Plan, version: str | None = None,
                    planned: str = "the plan") -> TrinityVersion | None:
    """The Trinity minor version a config made for `plan` is written for: `version`'s where given (``0.6.0``: 0.6,
    as `trinity_release` reads it, whose `QueryError` it raises for a release rft-solver does not know), else the
    release the plan was counted for (`Plan.trinity_version`, read by `planned_release`, which names it as
    `planned`'s; None where none was named: 0.6's keys, with the notes that Trinity 0.5 refuses them). Every
    fragment, settings object and patch takes its release here (`solver.trinity.trinity_fragment`, `plan_settings`,
    `patch_trinity_config`,
    `solver.trinity_config`), so a plan made for 0.5.1 gets 0.5's keys wherever none is named."""
    if version is None:
        return planned_release(plan.trinity_version, planned)
    return trinity_release("version", version)


class ApplySettings(TrinitySettings):
    """What applies an answer's best plan (``solve --json``'s ``apply``): the `TrinitySettings` of the fragment
    ``--emit trinity`` writes. Hashable by their JSON, as the answer holding them is by value: change the dicts only
    on a copy (``model_copy(deep=True)``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_serialization_defaults_required=True)

    @classmethod
    def of(cls, settings: TrinitySettings) -> ApplySettings:
        """`settings` (a fragment's, `solver.trinity.plan_fragment`) as an answer holds them, their dicts copied."""
        return cls.model_validate(settings.model_dump())

    def __hash__(self) -> int:
        return hash(json.dumps(self.model_dump(mode="json"), sort_keys=True))


class ConfigKeyChange(LeftOutWhenNone):
    """One key of a --from-config config that applying a plan sets to another value, or removes, as --write does
    (``solve --from-config --json``'s ``config_keys_changed``, `solver.trinity.config_key_changes`): its dotted path
    (a path through an alias or a ``<<`` merge too), the config's value and the plan's, whether --write removes it,
    and where --write makes the change where that is another key (an anchor's). Hashable by its JSON, as the answer
    holding it is by value."""

    left_out_where_none: ClassVar[tuple[str, ...]] = ("removed", "written_at")

    key: str = Field(description=(
        "the key's dotted path (``trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu``)"))
    config_value: Any = Field(description=(
        "the config's value there as written (an interpolation as its text); null where the config lacks the key"))
    plan_value: Any = Field(description="the plan's value, which --write sets there; null for a key it removes")
    removed: bool | None = Field(default=None, description=(
        "true where --write removes the key (a stale model.rope_scaling, which contradicts the plan's length; with "
        "--trinity-version 0.5, a key of Trinity 0.6's under trainer, which 0.5 refuses): a script that applies the "
        "list deletes it; left out otherwise"))
    written_at: str | None = Field(default=None, description=(
        "where in the file --write makes the change, where that is another key than this one: the dotted path of "
        "the key in the mapping an alias (*anchor) or a merge (<<: *anchor) repeats here, whose change this key "
        "takes; left out otherwise"))

    def __hash__(self) -> int:  # by its JSON, as `ApplySettings`: a value may be a mapping or a list
        return hash(json.dumps(self.model_dump(mode="json"), sort_keys=True))


ANSWER_LEFT_OUT_WHEN_NONE = ("apply", "apply_left_out", "config_keys_changed", "explanation", "current", "nearest",
                             "measured", "larger_gpu_cell", "validated", "fewer_nodes", "trainer_alone", "rollout_kept",
                             "other_batch", "unpinned", "more_host_ram", "named_release", "token_budget_auto",
                             "room_kept", "tables", "memory_model_margin", "reason_caution_codes", "dpo_pairs",
                             "token_budget_cap", "token_budget_cap_source", "token_budget_cap_raised")
"""The fields of an `Answer` that its JSON (`Answer.as_json`, ``solve --json``) leaves out where they are None."""


class Answer(_Timed, Versioned, _ReasonCautions, LeftOutWhenNone):
    """The planner's answer for one GPU type: plans best first, or none and the reason."""

    left_out_where_none = ANSWER_LEFT_OUT_WHEN_NONE  # by model_dump and model_dump_json too, as its schema says

    gpu: str = Field(description="the GPU type, as the catalogue names it")
    model: str = Field(description="the model, as the catalogue names it")
    objective: Objective = Field(description=(
        "the question: cheapest (the least cost for max_model_len), max_len (the longest context within "
        "budget_gpus), min_gpus (the fewest trainer GPUs for max_model_len) or min_gpu_hours (the fewest GPU-hours, "
        "gpus x cost, for max_model_len: each plan's gpu_hours, then the fewest GPUs)"))
    budget_gpus: int = Field(ge=1, description=(
        "the most trainer GPUs the plans may take (--gpus; with open_budget the planner's bound), rollout GPUs not "
        "counted"))
    open_budget: bool = Field(default=False, description=(
        "the budget is the planner's search bound, not the user's (--minimize gpus or gpu-hours without --gpus); "
        "plans then "
        "claim no GPUs left for rollout"))
    max_model_len: PositiveInt | None = Field(default=None, description=(
        "the length asked for (--len) of a cheapest, fewest-GPU or fewest-GPU-hour answer; null when maximising the "
        "length"))
    exact: bool = Field(default=False, description="whether the plans must use exactly budget_gpus (--exact)")
    pins: Pins = Field(default=Pins(), description="the settings the query pins; null where it leaves one free")
    train_batch_size: PositiveInt | None = Field(default=None, description=(
        "the query's train batch (--train-batch-size, or --from-config's), which the plans' data-parallel ranks "
        "divide; null where none was given"))
    rollout_gpus: int | None = Field(default=None, ge=0, description=(
        "the query's --rollout-gpus; null where none was given"))
    total_gpus: int | None = Field(default=None, ge=1, description=(
        "the query's --total-gpus, the trainer's and the rollout's GPUs together, of which budget_gpus is what "
        "rollout_gpus leave; null where none was given (budget_gpus is then the trainer's alone)"))
    node_gpus: int = Field(default=NODE_GPUS, ge=1, description="the query's GPUs per node (--node-gpus)")
    host_ram_gb: Annotated[HostRamGb, Le(MAX_HOST_RAM_GB)] | None = Field(default=None, description=(
        "the query's host memory per node (--host-ram, GiB), which the plans' host memory fits in; null where none "
        "was given"))
    reference_model: bool = Field(default=True, description=(
        "whether the host memory figures (the plans', the reasons' and the verdict's) count a reference model's "
        "pinned shards: false where the run builds none (a --from-config config's algorithm or LoRA says so, or "
        "--no-reference); true where not known"))
    lora_rank: int = Field(default=0, ge=0, description=(
        "the LoRA rank whose states the plans' memory figures and estimates count (--lora-rank, or a --from-config "
        "config's LoRA): the frozen base's fp32 weights and the adapter's states; the tables, which measured full "
        "fine-tuning, vouch for it by inference (no plan is documented) and refute nothing; 0 for full fine-tuning"))
    critic: CriticStates | None = Field(default=None, description=(
        "the PPO critic the plans' memory figures and estimates count beside the actor (--critic; a --from-config "
        "config's note names the value for its critic): resident, its states on the GPUs; offloaded, in host "
        "memory (FSDP2's offload_policy); or reloaded, in host memory but back on the GPUs for its own update (the "
        "host memory figures count them where held there); the tables, which measured the actor alone, vouch for no "
        "plan (every plan is estimated) and still refute; null for none"))
    dpo_pairs: Literal[True] | None = Field(default=None, description=(
        "true where the plans' memory figures and estimates count a DPO pair per micro-batch, a chosen and a "
        "rejected sequence, twice max_model_len tokens per GPU: a --from-config config that trains DPO (or --dpo), of "
        "a model trained one padded sequence per micro-batch; left out otherwise"))
    margin: float | None = Field(default=None, ge=0, lt=1, description=(
        "the safety margin the answer's estimates are held to (--margin, or the default on this GPU type: the memory "
        f"model's, more on cards of at most {SMALL_CARD_GIB:g} GiB, to cover the GiB their estimates run low); null "
        "only in JSON made before answers echoed it"))
    memory_model_margin: float | None = Field(default=None, ge=0, lt=1, description=(
        "the memory model's own default margin where `margin` is not it (--margin, or a small card's default); left "
        "out otherwise"))
    token_budget: TokenBudgetMode = Field(default="default", description="the query's --token-budget mode")
    token_budget_cap: PositiveInt | None = Field(default=None, description=(
        "the most tokens per GPU any plan takes (--token-budget N, where token_budget reads auto, or default under "
        "--no-estimate; or a --from-config config's own budget below Trinity's default); left out where none"))
    token_budget_cap_source: str | None = Field(default=None, description=(
        "where token_budget_cap came from where not the option (--token-budget N): a --from-config config's keys that "
        "set it, ``the config's own max_token_len_per_gpu`` (the trainer's) or its roles' own, by dotted key; left out "
        "otherwise"))
    token_budget_cap_raised: Plan | None = Field(default=None, description=(
        "where token_budget_cap leaves no plan for the asked length: the best plan at the smallest cap that trains it "
        "within the same budget and limits (its max_token_len_per_gpu that cap), as CP-SAT finds it minimising the "
        "cap; left out otherwise"))
    memory_model_source: str | None = Field(default=None, description=(
        "the source of a memory model of one's own (--memory-model's: ``calibrated on my-cells.yaml``), as the "
        "memory line names it; null for the shipped one"))
    status: Status = Field(description=(
        "optimal: the best plan, proven; feasible: a plan the time limit left unproven; infeasible: no plan (reason "
        "says why); unknown: none found within the time limit"))
    reason: str | None = Field(description="why there is no plan, in words; null where there is one")
    reason_code: ReasonCode | None = Field(default=None, description=(
        "a stable code for the reason, what a program tests instead of its words (docs/json.md lists them); null "
        "where there is a plan (and in JSON made before codes)"))
    plans: tuple[Plan, ...] = Field(description="the plans, best first (--top K of them); empty where there is none")
    apply: ApplySettings | None = Field(default=None, description=(
        "solve --json's: what applies the best plan, as --emit trinity writes it for the same query (the config keys, "
        "the environment to export); left out where there is no plan, from the Python API's answers "
        "(solver.trinity_settings gives it), and where the config's rollout engines cannot take the plan's rollout "
        "GPUs or its own LoRA adapter, which they keep, adapts more than the plan's --lora-targets counted "
        "(apply_left_out then says so)"))
    apply_left_out: str | None = Field(default=None, description=(
        "solve --from-config --json's, where the best plan gets no apply: why, in the words --emit trinity refuses "
        "it with (the config's rollout engines cannot take the GPUs the plan leaves the rollout, or its own LoRA "
        "adapter adapts more parameters than the plan counted on --lora-targets); left out otherwise"))
    config_keys_changed: tuple[ConfigKeyChange, ...] | None = Field(default=None, description=(
        "solve --from-config --json's, beside apply: every key of the config that applying the best plan sets to "
        "another value, as --write sets it (a key the config lacks too, from null), in the order --write sets them, "
        "then those --write removes (removed: true): the difference of the config and --write's copy as Trinity reads "
        "them, a key an alias or a <<: merge repeats named at each path (written_at: the anchor's); empty where the "
        "config has the plan's values already; left out where there is no apply (and from the Python API's answers: "
        "solver.trinity.config_key_changes gives it)"))
    explanation: tuple[Reason, ...] | None = Field(default=None, description="with --explain: why this answer")
    current: CurrentSettings | None = Field(default=None, description="with --from-config: the config's settings")
    nearest: Plan | None = Field(default=None, description=(
        "when no plan trains the asked length: the longest plan within the same budget and pins"))
    alternatives: Alternatives | None = Field(default=None, exclude=True, description=(
        "when there is no plan (and it was worked out why): the plans of the query changed one way"))
    limits_named: bool = Field(default=False, exclude=True, description=(
        "when there is no plan: whether the reason names the query's limits (its pins, host memory and train batch) "
        "in full, as words after it need not again"))
    deadline_passed: bool = Field(default=False, exclude=True, description=(
        "whether the call's deadline_s (solver.plan's) had passed when the answer was given, which may have cut its "
        "search short: the lines under it then name deadline_s as what to give more of"))
    notes: tuple[str, ...] = Field(default=(), exclude=True, description=(
        "the notes solve prints on stderr for the question, in its words: a length of a few hundred tokens at most, "
        "likely meant as thousands (solver.plan's max_model_len, as --len), and a config's cluster that the best plan "
        "outgrows with its rollout (solver.api.with_config_verdicts', where budget_gpus frees the config's count, as "
        "--gpus with --from-config)"))
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
        "Qwen's model cards validate), the cheapest plan at that length within the same budget and pins (the "
        "best plan's setting and GPU count, where they are the cheapest there too)"))
    fewer_nodes: Plan | None = Field(default=None, description=(
        "with rollout GPUs, when the best plan's trainer takes whole nodes and so leaves the rollout more GPUs "
        "than asked: the best plan on fewer nodes (within the largest budget whose layouts take fewer)"))
    trainer_alone: Plan | None = Field(default=None, description=(
        "with the fewest GPUs and rollout GPUs beside the trainer, where their layout rules out the trainers of fewer "
        "GPUs than the best plan's (a trainer of 4 beside 8 rollout GPUs on nodes of 8: neither one node nor whole "
        "nodes): the plan of fewest GPUs that trains the length with no rollout beside it, where that is fewer"))
    rollout_kept: RolloutKept | None = Field(default=None, description=(
        "without rollout GPUs (--rollout-gpus, or a config's rollout), when the best plan takes the whole budget and "
        "so leaves the rollout none: the same question with some of the budget kept for the rollout, and its best "
        "plan where it has one"))
    other_batch: Plan | None = Field(default=None, description=(
        "with a train batch: the best plan without it, where that is better by the objective (cheaper, longer or on "
        "fewer GPUs) than the best plan: what a batch its data-parallel ranks divide would run"))
    unpinned: Plan | None = Field(default=None, description=(
        "with pins given (--sp, --env/--no-env, --offload/--no-offload, --exact): the best plan of the same question "
        "without them, as CP-SAT proves it within the time limit (left out where the limit leaves it unproven); the "
        "same plan as plans[0] where the pins cost nothing"))
    more_host_ram: Plan | None = Field(default=None, description=(
        "with a node's host memory given (--host-ram): the best plan of the same question without that limit, as "
        "CP-SAT proves it within the time limit (left out where the limit leaves it unproven); its host_memory_gb is "
        "what it needs per node; the same plan as plans[0] where the limit costs nothing"))
    named_release: Plan | None = Field(default=None, description=(
        "with a node's host memory given (--host-ram), no Trinity release named (or 0.5 without its patch: its patches "
        "asked) and a host limit that costs the best plan something (more_host_ram another plan): the best plan of the "
        "same question under the newest release "
        "that counts less host memory per node (its rank 0 alone loading the model: 0.6 with FSDP2 on compute "
        "capability 9 or more, ...), within that limit, where CP-SAT proves it better by the objective (longer, on "
        "fewer GPUs, of fewer GPU-hours or cheaper); its trinity_version names that release"))
    token_budget_auto: Plan | None = Field(default=None, description=(
        "with --minimize gpus at Trinity's default token budget: the fewest GPUs with --token-budget "
        "auto, where fewer than the best plan's: the same question with that flag, asked within one GPU fewer (a "
        "plan with a lowered max_token_len_per_gpu)"))
    room_kept: RoomKept | None = Field(default=None, description=(
        "where the best plan carries the thin-headroom caution (an extrapolated estimate with little room to spare): "
        "the same question at the margin the caution names, and its best plan: what keeping that room costs, which "
        "the ranked plans, all at the answer's margin, leave out"))
    query: Query | None = Field(default=None, exclude=True, repr=False, description=(
        "the query it answers (`solver.api.answer_query`'s), which its text view (`solver.answers_text`) is made "
        "from; not in its JSON: None for an answer rebuilt from it"))
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

    def token_cap_words(self, option_names: OptionNames) -> str | None:
        """Its plans' token budget where its cap binds, naming the cap's source (`solver.query.token_cap_words`:
        `token_budget_cap_source`, else the option as `option_names` name it); None where it asked for no cap."""
        cap = self.token_budget_cap
        return None if cap is None else token_cap_words(cap, self.token_budget_cap_source, option_names)

    @property
    def no_plan_line(self) -> str:
        """The reason as a line that starts ``no plan`` (once: ``no plan for 6 GPUs ...`` as it is)."""
        reason = self.reason or ""
        return reason if reason.startswith("no plan") else f"no plan: {reason}"

    def as_json(self) -> dict[str, Any]:
        """The answer as ``solve --json`` prints it (its ``model_dump(mode="json")``): the fields of
        `ANSWER_LEFT_OUT_WHEN_NONE` only when present."""
        return self.model_dump(mode="json")


def check_answers_of(answers: Sequence[Answer], query: Query, model: str) -> None:
    """`QueryError` (one line) where one of `answers` is not one of `query`'s: for another model than `model` (the
    query's, as its catalogue names it) or a GPU type the query did not ask."""
    for index, answer in enumerate(answers):
        if answer.model != model or answer.gpu not in query.gpus:
            raise QueryError(f"answers[{index}] is for {answer.model} on {answer.gpu}, not one of the query's "
                             f"({model} on {' or '.join(query.gpus)}): pass the answers of that query")


def config_verdict(answer: Answer, current: CurrentSettings, query: Query) -> str:
    """The verdict on a config's own settings (`current`, judged on `answer`'s GPU type) in words, one line, as
    ``solve --from-config`` prints it and `CurrentSettings.verdict` holds it: whether they train, and why not (a
    broken rule, a cell that ran out of memory, the host memory, or nothing that vouches), in short sentences; where
    they fit, the caution their plan carries on a host memory need past what a node is assumed to have, where no host
    memory was given to hold it to (`unchecked_host_need`), as the plans' say it; options named as `query` names
    them."""
    setting = Setting(env=current.env, offload=current.offload, sp=current.sp)
    count = counted(current.gpus, "trainer GPU") + ("" if current.gpus_given else
                                                    " (the budget's: the config does not give its GPUs)")
    runs = f"{current.config} runs" if current.length_given else f"{current.config}'s settings would run"
    env = (f"Env {'on' if current.env else 'off'}, read from this shell's {current.env_variable}"
           if current.env_variable_set else f"Env off, {current.env_variable} unset in this shell")
    length = "" if current.length_given else f"{query.option_names.length}; "
    said = f"{runs} {setting.label} on {count} at {counted(current.max_model_len, 'token')} ({length}{env}): "
    if current.plan is not None:
        evidence = current.plan.evidence_text(answer.gpu, answer.model)
        # as the plans say it: the host memory a node needs, past what one is assumed to have, that nothing checks
        host_unchecked = "".join(f" {_sentence(words)}"
                                 for words in current.plan.cautions_coded(CautionCode.HOST_MEMORY_UNCHECKED))
        if current.refused:
            return (f"{said}it fits in memory ({evidence}), but {_config_refused(current)} "
                    f"({_refusing_lines(current)}).{host_unchecked}{_dearer(answer, current, query)}")
        if above := current.budget_above_verdict:
            lines = ("the problem on its tokens per GPU says how many" if above == 1 else
                     f"the {above} problems on its tokens per GPU say how many")
            return (f"{said}it fits in memory at {counted(_verdict_tokens(answer, current.plan), 'token')} per GPU "
                    f"({evidence}), but the config lets a GPU take more, which this verdict does not vouch for: "
                    f"whether it trains there is unknown ({lines}).{host_unchecked}{_dearer(answer, current, query)}")
        grouped = (" With the states a hybrid fsdp_size groups, it fits by the memory model's estimate alone, whose "
                   "figures count them over their groups, as its fsdp-size-hybrid line does (a plan sets the key to "
                   "-1 and counts them over every trainer GPU)." if current.states_grouped else "")
        return f"{said}it trains ({evidence}).{grouped}{host_unchecked}{_dearer(answer, current, query)}"
    cell = current.out_of_memory
    host = [] if current.host_memory_needed is None else [(
        f"{host_need_words(f'{current.host_memory_needed:.1f}', current.offload, query.critic)}, more than "
        f"{query.host_ram_bound_words}")]
    if current.broken_rule:
        refusing = (f" ({REFUSING_BROKEN_RULES[current.broken_rule_code]}: the config as written is refused)"
                    if current.rule_refuses and current.broken_rule_code is not None else "")
        verdict = [f"it breaks a rule: {current.broken_rule}{refusing}", *host]
    elif current.unread_keys:
        verdict = [_unread_keys_words(current)]
    elif cell is not None:  # the GPU memory first: more host memory would not make it train
        fewer = "; ".join(fewer_reasons(cell, current.gpus, current.offload))
        longer = (f"at {counted(current.max_model_len, 'token')} each GPU holds more than at {cell.max_model_len}" if
                  cell.max_model_len < current.max_model_len and current.max_token_len_per_gpu is None else "")
        verdict = [f"{cell.words(answer.gpu, answer.model)}, so {setting.label} ran out of memory there",
                   *filter(None, (fewer, longer)), *host]
    elif host and not _short_of_gpu_memory(current):
        verdict = host
    else:
        smaller = ("" if current.smaller_card is None else
                   f", though {smaller_card_words(current.smaller_card, answer.gpu, answer.model)}")
        verdict = [f"nothing in {query.evidence_sources} says it trains{_predicted(current)}{smaller}", *host]
    refused = ([f"{_config_refused(current)} too ({_refusing_lines(current)})"]
               if any(refusing_problems(current)) else [])
    follows = ("the best plan follows" if answer.plans else "no plan was found within the time limit"
               if answer.status == "unknown" else "no plan trains either (the reason follows)")
    sentences = [*verdict, *refused, follows]
    return said + " ".join(_sentence(words, first=not i) for i, words in enumerate(sentences))


def _unread_keys_words(current: CurrentSettings) -> str:
    """Why a config's settings (`current`) are not judged where its `CurrentSettings.unread_keys` cannot be read: the
    tokens per GPU its passes take depend on the keys of its batch sizes, whether the actor's recompute of the old
    log-probs runs, which would fail on its rows (a verl assertion), on `BYPASS_OLD_LOGPROBS`, and the share of the
    states a GPU holds on an ``fsdp_size``; or, for an ``fsdp_size`` read that shards the states over groups of fewer
    GPUs (its ``fsdp-size-hybrid`` line), that the verdict counts that share only by the memory model's estimate, and
    only on the GPUs (unread with estimates off, or with the host memory checked)."""
    hybrid = [key for key in current.unread_keys if any(
        code == ConfigProblemCode.FSDP_SIZE_HYBRID and words.startswith(f"{key} ")
        for code, words in zip(current.config_problem_codes, current.config_problems, strict=False))]
    keys = [key for key in current.unread_keys if key not in hybrid]
    shares = [key for key in keys if key.endswith(".fsdp_size")]
    tokens = [key for key in keys if key != BYPASS_OLD_LOGPROBS and key not in shares]
    recompute = (f"whether it runs the actor's recompute of the old log-probs, whose micro-batch size does not divide "
                 f"the rows each GPU takes (a verl assertion fails), depends on {BYPASS_OLD_LOGPROBS}")
    depends = [f"the tokens per GPU it takes depend on {and_joined(tokens)}"] if tokens else []
    depends += [recompute] if BYPASS_OLD_LOGPROBS in keys else []
    depends += [f"the share of the states each GPU holds depends on {and_joined(shares)}"] if shares else []
    unread = (f"{', and '.join(depends)}, which cannot be read here (set {'it' if len(keys) == 1 else 'them'} as the "
              "run will, and judge again)")
    grouped = (f"{and_joined(hybrid)} {'shards' if len(hybrid) == 1 else 'shard'} the states over groups of fewer "
               "GPUs, which this verdict counts only by the memory model's estimate, on the GPUs alone (set -1, every "
               "GPU, and judge again)")
    said = [*([unread] if keys else []), *([grouped] if hybrid else [])]
    return f"whether it trains is unknown: {'; and '.join(said)}"


def _verdict_tokens(answer: Answer, plan: Plan) -> int:
    """The tokens per GPU at which `plan`, the verdict's on a config's own settings, fits: its token budget, or for a
    model trained one padded sequence per micro-batch (its ``padded-micro-batches`` caution), which reads none, what
    its estimate counts, ``max_model_len`` for one sequence (`padded_sequences`: for the answer's `Answer.dpo_pairs`,
    a pair)."""
    if plan.cautions_coded(CautionCode.PADDED_MICRO_BATCHES):
        return padded_sequences(bool(answer.dpo_pairs)) * plan.max_model_len
    return plan.max_token_len_per_gpu


def _config_refused(current: CurrentSettings) -> str:
    """That the config judged in `current` is refused, in words: as written, or, judged at another length than its own
    (``--len``), at that length (its refused: lines check it there)."""
    return "the config as written is refused" if current.length_given else "the config judged at this length is refused"


def _sentence(words: str, first: bool = False) -> str:
    """`words` as a sentence of the verdict: with a capital and a full stop (the `first` goes on after the colon of
    what the config runs, so it keeps its case)."""
    return f"{words if first else words[:1].upper() + words[1:]}."


def refusing_problems(current: CurrentSettings) -> list[bool]:
    """For each of the config's problems, whether it refuses the config (its code in `REFUSED_CONFIG_CODES`; none
    does in JSON made before codes)."""
    codes = current.config_problem_codes or (None,) * len(current.config_problems)
    return [code in REFUSED_CONFIG_CODES for code in codes]


def _refusing_lines(current: CurrentSettings) -> str:
    """Which of the config's problems say why it is refused, in words true where the verdict is read alone (its JSON,
    `CurrentSettings.verdict`) as under the view's lines (`current_view` marks them ``refused:``): ``the problem that
    refuses it says why`` (or ``the 2 problems that refuse it say why``; one in JSON made before codes, which
    leaves the problems that refuse it unmarked)."""
    count = sum(refusing_problems(current))
    return f"the {count} problems that refuse it say why" if count > 1 else "the problem that refuses it says why"


def _dearer(answer: Answer, current: CurrentSettings, query: Query) -> str:
    """Where a config's own settings train by estimate without Env and the best plan, at the same length, costs more:
    why that plan ranks first and what differs, in sentences after a space ("" otherwise: a longer plan's cost is
    its length's). Estimates keep Env on unless --no-env (`estimates_setting`), so the config's were no candidate;
    where the plan differs in Env alone, Env's ranking weight is all its cost adds. A token budget that
    differs too (the config's own lowered one; the plan's, the most that fits) the cost does not count. Under
    --minimize gpus a plan on fewer GPUs ranks first for that alone, as the answer's heading says: "" there too, and
    so under --minimize gpu-hours for a plan of fewer GPU-hours.
    Options are named as `query`'s names do."""
    own, best = current.plan, answer.plans[0] if answer.plans else None
    if (own is None or best is None or best.cost <= own.cost or own.evidence != "estimated" or own.env
            or best.max_model_len != own.max_model_len or query.objective == "min_gpus" and best.gpus < own.gpus
            or query.objective == "min_gpu_hours" and best.gpus * best.cost < own.gpus * own.cost):
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
    """Whether the memory model predicts the settings do not fit the GPUs (their peak, the optimizer step's, or a PPO
    critic's own update's)."""
    return current.predicted is not None and (current.predicted[0] > current.predicted[1]
                                              or current.predicted_step is not None
                                              or current.predicted_critic_pass is not None)


def _predicted(current: CurrentSettings) -> str:
    """The memory model's figures for settings no table speaks of, in words ("" without them)."""
    if current.predicted is None:
        return ""
    total, usable = current.predicted
    over = []
    if current.predicted_step is not None:
        over.append(f"{current.predicted_step[0]:.2f} GiB at the optimizer step, more than the "
                    f"{current.predicted_step[1]:.2f} it may take")
    if current.predicted_critic_pass is not None:
        over.append(f"{current.predicted_critic_pass[0]:.2f} GiB at the PPO critic's own update, more than the "
                    f"{current.predicted_critic_pass[1]:.2f} usable")
    but = f", but {', and '.join(over)}" if over else ""
    return f" (the memory model predicts {total:.1f} GiB per GPU, of {usable:.1f} usable{but})"


class ModelMapRow(Frozen, defer_build=True):
    """A row of a map by model (`GpuMap`): a model's best plan at each GPU budget."""

    model: str = Field(description="the model, as the catalogue names it")
    plans: tuple[Plan | None, ...] = Field(description=(
        "for each budget of budget_gpus, in that order, the plan with the longest context on at most that many GPUs; "
        "null where nothing trains"))


class LengthMapRow(Frozen, defer_build=True):
    """A row of a map by length (`GpuMap`): the model's cheapest plan at one length and each GPU budget."""

    max_model_len: PositiveInt = Field(description="the length, tokens")
    plans: tuple[Plan | None, ...] = Field(description=(
        "for each budget of budget_gpus, in that order, the cheapest plan at the length on at most that many GPUs; "
        "null where nothing trains"))


MAP_LEFT_OUT_WHEN_NONE = ("model", "train_batch_size", "host_ram_gb", "node_gpus", "estimate", "token_budget",
                          "token_budget_cap",
                          "lora_rank", "lora_target_modules", "lora_exclude_modules", "reference_model", "critic",
                          "dpo", "trinity_version",
                          "weights", "memory_model_source",
                          "budgets_listed")
"""A map's fields that its JSON leaves out where None: the options that were not given (or are the default)."""


class GpuMap(Frozen, Versioned, defer_build=True):
    """One GPU type's map (``solve map --json`` prints one per GPU type): the options given that change its cells,
    then a row per model (or per length of one model) with its best plan at each GPU budget."""

    gpu: str = Field(description="the GPU type, as the catalogue names it")
    by: Literal["model", "len"] = Field(description="what the rows are: models, or lengths of one model (--by len)")
    model: str | None = Field(default=None, description="with by 'len': the model mapped; left out otherwise")
    train_batch_size: PositiveInt | None = Field(default=None, description=(
        "the train batch the plans' data-parallel ranks divide (--train-batch-size); left out where not given"))
    host_ram_gb: HostRamGb | None = Field(default=None, description=(
        "the host memory per node the plans fit in, GiB (--host-ram), a whole amount without its .0 (512, not "
        "512.0); left out where not given"))
    node_gpus: PositiveInt | None = Field(default=None, description=(
        f"the GPUs per node (--node-gpus); left out at the default, {NODE_GPUS}"))
    estimate: Literal["only", "never"] | None = Field(default=None, description=(
        "'only' with --estimate (the tables set aside), 'never' with --no-estimate; left out by default"))
    token_budget: Literal["auto"] | None = Field(default=None, description=(
        "'auto' with --token-budget auto or N (estimated plans may take a lower token budget); left out by default"))
    token_budget_cap: PositiveInt | None = Field(default=None, description=(
        "with --token-budget N, N: the most tokens per GPU any plan takes; left out otherwise"))
    lora_rank: PositiveInt | None = Field(default=None, description=(
        "the LoRA rank the plans count (--lora-rank); left out for full fine-tuning"))
    lora_target_modules: str | None = Field(default=None, description=(
        "with lora_rank: the target_modules regex whose modules the plans count the adapter on (--lora-targets, as "
        "each plan's lora_target_modules); left out for all-linear's, every linear layer but the output projection"))
    lora_exclude_modules: str | None = Field(default=None, description=(
        "with lora_target_modules: the exclude_modules regex of the modules the plans leave out of them "
        "(--lora-exclude, as each plan's lora_exclude_modules; lora_target_modules is then all-linear where no "
        "--lora-targets is given); left out where none"))
    reference_model: bool | None = Field(default=None, description=(
        "whether the plans' host memory need counts a reference model, as given (--reference, --no-reference); left "
        "out where not given: counted but with --lora-rank"))
    critic: CriticStates | None = Field(default=None, description=(
        "where the PPO critic the plans count holds its states (--critic); left out where none is"))
    dpo: Literal[True] | None = Field(default=None, description=(
        "true where the plans are for a DPO run (--dpo): for a model trained one padded sequence per micro-batch, "
        "they count a pair per micro-batch, as each plan's dpo; left out otherwise"))
    trinity_version: str | None = Field(default=None, description=(
        "the Trinity release the plans are for (--trinity-version), as given: its memory counts (0.5.1's experts "
        "sharded evenly, 0.5's reference shards in bf16) and its train batch rule (0.5.0 and 0.5.1: the trainer GPUs "
        "divide it); left out where none was named, counted as 0.6"))
    weights: str | None = Field(default=None, description=(
        "the cost weights' file given (--weights), as given (a byte of its name that is not UTF-8 as its escape, "
        "\\xe9), which the title names; left out where none was (the shipped weights, or through the API a Weights "
        "passed)"))
    memory_model_source: str | None = Field(default=None, description=(
        "the source of a memory model of one's own (--memory-model's: ``calibrated on my-cells.yaml``), which the "
        "estimated cells are predicted with; left out for the shipped one"))
    budgets_listed: Literal[True] | None = Field(default=None, description=(
        "true where the budgets were listed (--budgets): the text then gives each a column (bar runs with the same "
        "plans past one node), however many; left out for budgets 1 to N (--gpus-up-to), of which past one node the "
        "text shows a few"))
    budget_gpus: tuple[PositiveInt, ...] = Field(description=(
        "the GPU budgets, the map's columns: each row has a plan (or null) for each, in this order"))
    rows: tuple[ModelMapRow, ...] | tuple[LengthMapRow, ...] = Field(description=(
        "a row per model, or with by 'len' per length, in the map's order"))

    @model_validator(mode="after")
    def _rows_as_by_says(self) -> GpuMap:
        """A map by length names its model and has rows of lengths; a map by model neither (as ``solve map`` makes
        them: --by len maps one model)."""
        by_length = self.by == "len"
        if (self.model is not None) != by_length:
            raise ValueError(f"a map by {self.by!r} {'needs' if by_length else 'takes no'} model")
        row_type = LengthMapRow if by_length else ModelMapRow
        if not all(isinstance(row, row_type) for row in self.rows):
            raise ValueError(f"a map by {self.by!r} has rows of {row_type.__name__}")
        return self

    @model_serializer(mode="wrap")  # unannotated: a return annotation would replace the JSON schema's properties
    def _as_printed(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        return without_none(handler(self), MAP_LEFT_OUT_WHEN_NONE)

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """Its JSON Schema: the fields of `MAP_LEFT_OUT_WHEN_NONE` are optional, never null (`_as_printed`); and, as
        `_rows_as_by_says` checks, ``by: "len"`` with a model and rows of lengths, ``by: "model"`` with neither."""
        schema = left_out_when_none(handler(core_schema), handler, MAP_LEFT_OUT_WHEN_NONE)
        resolved = handler.resolve_ref_schema(schema)
        model_rows, length_rows = resolved["properties"]["rows"]["anyOf"]  # as `rows` is annotated
        resolved.update({
            "if": {"properties": {"by": {"const": "len"}}},
            "then": {"required": ["model"], "properties": {"model": {"type": "string"}, "rows": length_rows}},
            "else": {"properties": {"model": {"type": "null"}, "rows": model_rows}},
        })
        return schema


ROLLOUT_ENGINES_LEFT_OUT_WHEN_NONE = ("lora_gib",)
"""The fields of a `RolloutEngines` that its JSON leaves out where they are None."""


class RolloutEngines(LeftOutWhenNone, defer_build=True):
    """The tensor-parallel size of vLLM rollout engines, and what one GPU of an engine holds (GiB)."""

    left_out_where_none = ROLLOUT_ENGINES_LEFT_OUT_WHEN_NONE

    size: PositiveInt = Field(description="the tensor-parallel size: the GPUs of one engine")
    weights_gib: Annotated[GiBFigure, Ge(0)] = Field(description=(
        "the model's bf16 weights, every expert's, per GPU of the engine"))
    kv_cache_gib: Annotated[GiBFigure, Ge(0)] = Field(description=(
        "the KV cache of one max_model_len sequence, per GPU of the engine"))
    lora_gib: Annotated[GiBFigure, Ge(0)] | None = Field(default=None, description=(
        "where the engines serve a LoRA adapter (Trinity turns vLLM's enable_lora on for model.lora_configs): the "
        "LoRA slots vLLM makes at its max_lora_rank on every linear layer and the embeddings, per GPU of the "
        "engine; left out without LoRA"))
    room_gib: Annotated[GiBFigure, Ge(0)] = Field(description=(
        "what vLLM takes of one GPU, less the CUDA (on an AMD GPU, HIP) context's 1 GiB"))
    largest: bool = Field(description="whether no larger size is allowed, whatever the rollout GPUs: none "
                          "stays in one node and suits the heads")

    @property
    def fits(self) -> bool:
        """Whether what one GPU holds as it loads (`held_gib`) takes at most half of what vLLM takes, leaving the other
        half to the KV cache of the sequences in flight (a rule of thumb, not a measurement)."""
        return self.held_gib <= self.room_gib / 2

    @property
    def holds(self) -> bool:
        """Whether what one GPU holds as it loads (`held_gib`) takes at most what vLLM takes: else the engine fails as
        it loads (vLLM finds no room for the KV cache of one sequence of its length)."""
        return self.held_gib <= self.room_gib

    @property
    def held_gib(self) -> float:
        """What one GPU of an engine holds as it loads: the weights, one sequence's KV cache and the LoRA slots."""
        return self.weights_gib + self.kv_cache_gib + (self.lora_gib or 0.0)

    @property
    def lora_words(self) -> str:
        """The clause on the LoRA slots that follows the weights where what one GPU holds is given in words, or ""
        without LoRA: ``, vLLM's LoRA slots (0.1 GiB)``."""
        return "" if self.lora_gib is None else f", vLLM's LoRA slots ({self.lora_gib:.1f} GiB)"

    @property
    def lora_figure(self) -> str:
        """The LoRA slots' term where what one GPU holds is added up in figures (`` + 0.1``), or "" without LoRA."""
        return "" if self.lora_gib is None else f" + {self.lora_gib:.1f}"


PLACEMENT_LEFT_OUT_WHEN_NONE = ("current", "moved_to_widen", "move_reason", "move_reason_code", "moved_from",
                                "stay_reason", "stay_reason_code", "stopped_at_validated", "solve_best")
"""The fields of a `Placement` that its JSON (in ``solve cluster --json``) leaves out where they are None."""


class RunsAt(Frozen, defer_build=True):
    """Where a job that moves runs now, as the placement the fleet runs now (``--current``) places it."""

    pool: str = Field(description="its pool, as the cluster file names it")
    nodes: tuple[int, ...] = Field(description="the nodes of the pool it runs on, by index (its trainer's first)")
    gpu_indexes: tuple[int, ...] = Field(description="the GPUs of each of those nodes it runs on, by index")
    trainer_nodes: tuple[int, ...] | None = Field(default=None, description=(
        "the first of those nodes, those its trainer runs on (the others hold its rollout alone); null in JSON made "
        "before it was given, read as all of them"))


class Placement(LeftOutWhenNone, defer_build=True):
    """Where a job runs: its pool, node indexes within the pool, GPUs, and the planner's plan."""

    left_out_where_none = PLACEMENT_LEFT_OUT_WHEN_NONE

    job: str = Field(description="the job's name, as the cluster file gives it")
    pool: str = Field(description="the pool it runs in, as the cluster file names it")
    model: str = Field(description="the job's model, as the catalogue names it")
    gpu: str = Field(description="the pool's GPU type, as the catalogue names it")
    nodes: tuple[int, ...] = Field(description="the node indexes within its pool (from 0) that the job takes")
    gpu_indexes: tuple[int, ...] = Field(description=(
        "the GPUs the job takes on each of its nodes, as CUDA_VISIBLE_DEVICES numbers them: a range of a "
        "shared node, or all of a node taken whole"))
    trainer_gpus: int = Field(description="the trainer GPUs of its plan (plan.gpus)")
    rollout_gpus: int = Field(description="the rollout GPUs it takes beside the trainer")
    asked_rollout_gpus: int = Field(description=(
        "the rollout GPUs the job asked for: rollout_gpus is more where a trainer on whole nodes leaves its rollout "
        "whole nodes"))
    asked_max_model_len: int = Field(description=(
        "the length the job asked for, tokens: exactly, or with at_least as the least (plan.max_model_len is what "
        "it runs at)"))
    at_least: bool = Field(description="whether the job asked for at_least that length (longer where a plan allows)")
    at_most: int | None = Field(default=None, description=(
        "the longest an at_least job asked to be raised to (its max_model_len's at_most), tokens; null where it gave "
        "none"))
    stopped_at_validated: Literal[True] | None = Field(default=None, description=(
        "true where the job asked for at_least a length and runs at the longest its model is known to handle (its "
        "native context, or as far as YaRN is validated for it), though a plan on its GPUs reaches further; left out "
        "otherwise"))
    plan: Plan = Field(description=(
        "the planner's plan it runs with, its nodes the count the trainer and rollout take together"))
    solve_best: Plan | None = Field(default=None, description=(
        "where the plan is the tables' (documented or inferred) and estimates are on: the plan solve gives the job on "
        "its trainer GPUs at its length (solve --gpus N --exact), where that is the memory model's estimate (cheaper: "
        "the cluster places the tables' plans first, as solve names them on its tables' best line); left out "
        "otherwise, and where the time limit cut its question short (asked last: the answer's solve_best_unasked "
        "counts those)"))
    widened_from: int | None = Field(default=None, description=(
        "the trainer GPUs the job was placed with, where it then grew onto idle GPUs of its node (a plan on "
        "more GPUs there is cheaper, or longer for an at_least job); null otherwise"))
    moved_to_widen: Literal[True] | None = Field(default=None, description=(
        "true where widening moved the job, alone, onto a node of its pool that no job used, so that it, or the jobs "
        "it shared a node with, run on more GPUs (widened_from says whether it grew there too); left out otherwise"))
    host_memory_gb: float | None = Field(default=None, description=(
        "in a pool that gives host_ram_gb: the host memory the job needs on each node its trainer runs on "
        f"(`trainer_nodes`: a node that holds only its rollout needs none of it), GiB ({HOST_NEED_WORDS}); null "
        "otherwise"))
    rollout_engine_size: int | None = Field(default=None, description=(
        "the tensor-parallel size of the rollout engines its --emit-dir config gives (rollout_gpus / size engines, "
        "as solver.memory.rollout_engines sizes them); null without rollout GPUs"))
    rollout_engines: RolloutEngines | None = Field(default=None, description=(
        "those engines (`size` is rollout_engine_size) and what one GPU of an engine holds: what solve cluster "
        "--emit-dir notes of them; null without rollout GPUs"))
    config_file: str | None = Field(default=None, description=(
        "the Trinity config that solve cluster --emit-dir wrote for the job: DIR/JOB.yaml, DIR as given (relative "
        "to the working directory where it is relative); null without --emit-dir, and from the API, which writes "
        "none"))
    current: Literal["stays", "moves", "starts"] | None = Field(default=None, description=(
        "with --current (the placement the fleet runs now): stays where the job runs as it does now (its model, "
        "pool, nodes, GPUs, trainer and rollout GPUs, and its plan's max_model_len, sp and offload; stay_reason says "
        "where its settings or trainer GPU count are its own, not the planner's pick, or keeping it forgoes a wider or "
        "cheaper way in the room the placement leaves idle), moves where it "
        "runs otherwise now (a restart; move_reason says why), starts where it does not run now; left out without "
        "--current"))
    move_reason: str | None = Field(default=None, description=(
        "where current is moves: why, in words (move_reason_code is what a program tests); left out otherwise"))
    move_reason_code: MoveCode | None = Field(default=None, description=(
        "where current is moves: a stable code for why (docs/json.md lists them); left out otherwise"))
    moved_from: RunsAt | None = Field(default=None, description=(
        "where current is moves: where it runs now, as the placement the fleet runs now gives its pool, nodes and "
        "gpu_indexes (this placement's own where only its plan changes); left out otherwise"))
    stay_reason: str | None = Field(default=None, description=(
        "where current is stays on settings the planner would not pick there (its SP, Offload or length) or a "
        "trainer GPU count its other ways there do not take: that they are kept as they run; and where keeping it "
        "forgoes the wider way the idle GPUs beside it would grow it to, or a cheaper way of its in the idle room of "
        "another pool of its GPU type: that way; where the time limit cut working out its ways short and it was "
        "kept on its way as it runs alone: that; in words (stay_reason_code is what a program tests); left out "
        "otherwise"))
    stay_reason_code: StayCode | None = Field(default=None, description=(
        "where stay_reason is given: a stable code for it (docs/json.md lists them); left out otherwise"))

    @model_validator(mode="after")
    def _engine_sizes_agree(self) -> Placement:
        """Refuse `rollout_engines` whose size is not `rollout_engine_size` (JSON made before them has none)."""
        if self.rollout_engines is not None and self.rollout_engines.size != self.rollout_engine_size:
            raise ValueError(f"rollout_engines.size {self.rollout_engines.size} is not rollout_engine_size "
                             f"{self.rollout_engine_size}")
        return self

    @property
    def trainer_nodes(self) -> tuple[int, ...]:
        """The nodes its trainer runs on: the first of its nodes, as many as its trainer takes whole (one where it
        takes part of a node); the nodes after them hold its rollout alone."""
        return self.nodes[:trainer_node_count(self.trainer_gpus, self.rollout_gpus, len(self.nodes))]

    @property
    def host_need_gb(self) -> float | None:
        """The host memory per node its trainer runs on that its `host GiB/node` cell shows: `host_memory_gb` (its
        load on a pool that checks host memory), else its plan's Offload need; None where there is neither."""
        return self.host_memory_gb if self.host_memory_gb is not None else self.plan.host_memory_gb

    @property
    def runs_on_plans_release(self) -> bool:
        """Whether the job runs now (`current`: it stays or moves) on a plan counted for a Trinity release
        (`Plan.trinity_version`): the one its running plan names where the fleet gives the job none of its own, else
        the run's, which the placement does not tell apart. A cluster table then names each job's release, and its
        ``--emit-dir`` fragment's comments name the plan's as what gives it."""
        return self.current in ("stays", "moves") and self.plan.trinity_version is not None


def spans_nodes(plan: Plan, node_gpus: int) -> bool:
    """Whether `plan`'s job takes several nodes of `node_gpus` GPUs: a layout on several, or a trainer past one."""
    return (plan.nodes or 1) > 1 or plan.gpus > node_gpus


def index_range(indexes: tuple[int, ...]) -> str:
    """GPU indexes in words, by runs of consecutive ones: ``4-6``, ``5`` for one, ``0-1, 6-7`` for a job that stays
    where it runs now beside GPUs others left (``solve cluster --current``)."""
    return ", ".join(f"{run[0]}-{run[-1]}" if len(run) > 1 else f"{run[0]}" for run in consecutive_runs(indexes))


class UnplacedPool(Frozen, defer_build=True):
    """Why a job left out has no place in one pool it may use."""

    pool: str = Field(description="the pool, as the cluster file names it")
    reason_code: PoolCode = Field(description="a stable code for why the pool has no place for the job")
    plan_reason_code: ReasonCode | None = Field(default=None, description=(
        "where reason_code is no-plan, the planner's own code for the pool (`Answer.reason_code`); null otherwise"))
    more_nodes_reach: bool | None = Field(default=None, description=(
        "where plan_reason_code is length-beyond-reach, or (for a job with no way to run in any pool) reason_code is "
        "no-nodes, rollout-takes-pool or no-layout-beside-rollout: whether the planner trains the job's length on "
        "more of the pool's GPUs (asked at the most trainer GPUs it plans for; beside its rollout there, each node "
        "with the pool's host memory, for those codes), so that --buy may place the job with more of its nodes; null "
        "otherwise, or where that was not decided within the time limit"))
    more_nodes_token_budget: TokenBudgetMode | None = Field(default=None, description=(
        "where more_nodes_reach is true: the token budget with which more of the pool's GPUs train the length: "
        "'default' (Trinity's), or 'auto' (--token-budget auto, which --buy then needs too; asked only where the "
        "run's is the default and estimates are on); null otherwise"))
    token_budget_auto_reach: bool | None = Field(default=None, description=(
        "where plan_reason_code is length-beyond-reach, or reason_code no-layout-beside-rollout (the GPUs that train "
        "the length have no layout beside the rollout), at Trinity's default token budget with estimates on: whether "
        "--token-budget auto trains the job's length on the pool's nodes as they are (on the fewest GPUs that do, "
        "with a layout beside its rollout), so that a run with it may place the job there with no nodes added; null "
        "otherwise, or where that was not decided within the time limit"))


class FitsWith(Frozen, defer_build=True):
    """A smaller ask that would fit a job left out for want of room into the room the placement leaves idle: fewer
    rollout GPUs, or a shorter length."""

    rollout_gpus: int = Field(description="the rollout GPUs it would fit with (its own where the length changes)")
    max_model_len: int = Field(description=(
        "the length it would fit at, in tokens (its own where the rollout changes); for a job that asked for "
        "at_least a length, the least"))
    pool: str = Field(description="the pool whose idle room would hold it")
    nodes: tuple[int, ...] = Field(description=(
        "the node (indexes in the pool, from 0) whose idle GPUs would hold it, or the idle nodes it would take whole"))
    whole_nodes: int = Field(description="the nodes it would take whole; 0 where it would share its node")
    trainer_gpus: int = Field(description="the trainer GPUs of the planner's plan for it there")


UNPLACED_LEFT_OUT_WHEN_NONE = ("reason_caution_codes", "current", "stop_reason", "stop_reason_code", "lora_rank",
                               "reference_model", "critic", "dpo", "lora_target_modules", "lora_exclude_modules",
                               "trinity_version")
"""The fields of an `Unplaced` that its JSON (in ``solve cluster --json``) leaves out where they are None."""


class Unplaced(_ReasonCautions, LeftOutWhenNone, defer_build=True):
    """A job left out, and why."""

    left_out_where_none = UNPLACED_LEFT_OUT_WHEN_NONE

    job: str = Field(description="the job's name, as the cluster file gives it")
    reason: str = Field(description="why it is left out, in words (reason_code is what a program tests)")
    reason_code: UnplacedCode | None = Field(default=None, description=(
        "a stable code for the reason, what a program tests instead of its words (docs/json.md lists them); null in "
        "JSON made before codes"))
    pools: tuple[UnplacedPool, ...] = Field(default=(), description=(
        "for a reason about the pools the job may use (reason_code no-room, priority-tie, no-room-unproven or "
        "no-way-to-run): each pool the reason names, in the order it names them, with its own code; empty for a "
        "reason about the fleet as a whole, or where the job may use no pool"))
    reason_for_several: str | None = Field(default=None, repr=False, description=(
        "the reason in the words for several jobs given it, true of each alone (`solve cluster` shows them in one "
        "row: `each needs`, `places one of them`); null where `reason` reads true of several as it is, and in JSON "
        "made before the key"))
    fits_with: tuple[FitsWith, ...] = Field(default=(), description=(
        "for a job left out for no room: the smaller asks with which one of the planner's ways for it would fit the "
        "room the placement leaves idle on one node (or on whole idle nodes), as the reason's last clause says: the "
        "fewest rollout GPUs dropped, then the least length cut, each where one would; empty otherwise"))
    current: Literal["stops"] | None = Field(default=None, description=(
        "with --current (the placement the fleet runs now): stops where the job runs now and there is a placement; "
        "left out otherwise"))
    stop_reason: str | None = Field(default=None, description=(
        "where current is stops and the file asks the job otherwise now than it runs (another pool, its pool without "
        "nodes, a node or GPUs its pool no longer has, another model, length, rollout GPUs, LoRA rank, critic or "
        "DPO): "
        "that, in the words a job that moves so says (stop_reason_code is what a program tests); left out otherwise"))
    stop_reason_code: MoveCode | None = Field(default=None, description=(
        "where stop_reason is given: a stable code for it, one of the move codes of a change the file asks "
        "(pool-not-allowed to release-changed: docs/json.md lists them); left out otherwise"))
    lora_rank: int | None = Field(default=None, description=(
        "where the job trains LoRA, builds no reference model, trains a PPO critic or trains DPO (what a cluster "
        "table's training column shows): its LoRA rank (its lora_rank), whose states its plans count, 0 for full "
        "fine-tuning; left out for full fine-tuning with a reference model, no critic and no DPO"))
    reference_model: bool | None = Field(default=None, description=(
        "where lora_rank is given: whether the job's run builds a reference model, whose pinned shards its host "
        "memory need counts (its reference_model; absent, none with LoRA); left out with lora_rank"))
    critic: CriticStates | None = Field(default=None, description=(
        "where the job trains a PPO critic beside the actor (its critic), where the critic keeps its states, as its "
        "plans would count them: resident, offloaded or reloaded; left out where it trains none"))
    dpo: Literal[True] | None = Field(default=None, description=(
        "true where the job trains DPO (its dpo: true), as a cluster table's training column says (lora_rank is then "
        "given); left out otherwise"))
    lora_target_modules: str | None = Field(default=None, description=(
        "where the job's LoRA adapter adapts other modules than all-linear's (its lora_targets, or all-linear less its "
        "lora_exclude_modules), the target_modules "
        "regex its plans would count the adapter on, as a plan's lora_target_modules; left out otherwise"))
    lora_exclude_modules: str | None = Field(default=None, description=(
        "where the job's LoRA adapter leaves modules out (its lora_exclude_modules), that exclude_modules regex, as a "
        "plan's lora_exclude_modules (lora_target_modules is then given, all-linear where it gives no lora_targets); "
        "left out otherwise"))
    trinity_version: str | None = Field(default=None, description=(
        "where the job names its own Trinity release (its trinity_version), that release, as a plan's trinity_version "
        "names it (0.5.2 for v0.5.2), whose counts its ways were worked out by; left out otherwise (the run's "
        "--trinity-version, or where it runs now, the one its plan names)"))

HOST_RAM_WORDS = "the host memory of each of the pool's nodes, GiB (its host_ram_gb); null where it gives none"
FULLEST_NODE_WORDS = (
    "where the pool gives host_ram_gb: the most host memory the jobs placed there need together on one node, GiB (each "
    "job's host_memory_gb, or its plan's, on the nodes its trainer runs on, added up to one decimal, as the pool's "
    "title says); null where none needs any, or the pool gives no host_ram_gb (host memory is then not checked, and a "
    "job without Offload has its load counted only where it passes what such a node is assumed to have: a sum "
    "would understate the node's)")


class PoolUse(Frozen, defer_build=True):
    """What a placement uses of one pool."""

    pool: str = Field(description="the pool, as the cluster file names it")
    nodes: int = Field(description="the pool's nodes")
    gpus: int = Field(description="the pool's GPUs, all nodes together")
    down: tuple[int, ...] = Field(default=(), description=(
        "the pool's nodes that are down (its down), by index: counted in nodes and gpus, but they take no job"))
    nodes_used: int = Field(description="the nodes at least one placed job uses")
    gpus_used: int = Field(description="the GPUs the placed jobs run on, trainer and rollout (a job on whole nodes "
                           "may leave some of them idle)")
    host_ram_gb: HostRamGb | None = Field(default=None, description=HOST_RAM_WORDS)
    fullest_node_host_gb: float | None = Field(default=None, description=FULLEST_NODE_WORDS)


class JobGone(Frozen, defer_build=True):
    """A job the placement the fleet runs now (``--current``) runs in a pool of the fleet that the fleet has no job of
    that name for (renamed or removed): the placement takes its GPUs as free, though it runs on them until stopped."""

    job: str = Field(description="the job, as the placement run now names it")
    pool: str = Field(description="its pool, which the cluster file still has")
    nodes: tuple[int, ...] = Field(description="the nodes of the pool it runs on, by index")
    gpu_indexes: tuple[int, ...] = Field(description="the GPUs of each of those nodes it runs on, by index")


class ClusterResult(_Timed, Versioned, defer_build=True):
    """The placement of a fleet's jobs: status, the first objective and its proven bound, and the jobs."""

    status: Status = Field(description=(
        "optimal: the placement is proven best; feasible: the time limit (or host memory rounded, or the jobs' ways "
        "out of time) left it unproven; infeasible: with minimize='nodes', proven that no placement holds every job; "
        "unknown: no placement found in time"))
    objective: int | None = Field(description="placed priority, or nodes used with minimize='nodes'")
    objective_counts: PlacementCount = Field(default="priority", description=(
        "what objective and bound count: the placed jobs' priority (maximised), or with minimize='nodes' the "
        "nodes used (minimised)"))
    bound: int | None = Field(description="CP-SAT's proven bound on that objective (with `host_rounded`, on the "
                              "placement with the host memory rounded)")
    placements: tuple[Placement, ...] = Field(description="the jobs placed, each with its pool, nodes and plan")
    unplaced: tuple[Unplaced, ...] = Field(description="the jobs left out, each with its reason")
    required: tuple[str, ...] = Field(default=(), description=(
        "the jobs (names, in the fleet's order) that must be placed: the fleet's required: true and --required's; a "
        "placement places each of them, or there is none (with minimize='nodes', every job must be, listed or not)"))
    no_way_to_run: tuple[str, ...] = Field(default=(), description=(
        "the jobs (names, in the fleet's order) with no way to run in any pool they may use, whatever else is placed "
        "(their reasons say why): no placement holds them, so the placed priority's bound leaves them out"))
    pools: tuple[PoolUse, ...] = Field(description="what the placement uses of each pool, in the fleet's order")
    host_rounded: tuple[str, ...] = Field(default=(), description=(
        "pools whose jobs' host memory the placement rounded up into a few classes (the ways to fill "
        "a node were too many otherwise): safe, but optimal and the bound only as rounded, so a placement's status "
        "is at best 'feasible'; 'infeasible' beside it is proven whatever the rounding (a required job with no way "
        "to run, or the jobs do not fit even with host memory left out)"))
    undecided_ways: int = Field(default=0, description=(
        "the planner's questions about a job's ways to run (one pool, one GPU count) that ran out of time: those "
        "ways were left out, or their plans may not be their best, so the status is at best 'feasible'"))
    tie_broken: bool = Field(default=False, description=(
        "whether the last stage of the search, which picks one of the equally good placements with fixed weights, "
        "proved its pick: the same file then gives the same placement whatever the workers; false where it ran out "
        "of time (the status may still be 'optimal': the placement is as good, only not the one picked) or did not "
        "run (it runs only where every stage before it is proven)"))
    wall_clock_stopped: tuple[str, ...] = Field(default=(), description=(
        "the steps that the time limit's wall clock stopped, in order: the search's stages ('priority' or 'nodes', "
        "'stays' with --current, 'jobs', 'length', 'cost', 'tie-break') and widening's solves ('widening') before the "
        "work they are given in CP-SAT's deterministic time, the proof that the jobs fit nowhere even without host "
        "memory ('without host'), and, before the count of the planner's questions each is given, the smaller asks of "
        "the jobs left out ('hints'), working out the jobs' ways ('ways') and working out why the other pools a job "
        "left out may use have no way for it ('reasons'; the reasons say what either left unasked, and the answer "
        "comes within the time limit), and, before the work it is given, the least priority that places each job left "
        "out ('least priority': a job not reached is given a priority that places it, not the least), and, with "
        "--current, the planner's questions of the wider ways of the running jobs kept beside idle GPUs ('stay notes': "
        "each job they left unasked says so in its stay_reason), and last, the questions of solve's best on the "
        "trainer GPUs of the jobs placed on the tables' plans ('solve best': solve_best_unasked counts those left "
        "unasked). Empty: the same file, options and seed give the same answer on every run, whatever the machine's "
        "load (with workers=1); otherwise another run may give another"))
    notes: tuple[str, ...] = Field(default=(), exclude=True, description=(
        "the notes solve cluster prints on stderr for the cluster file, in its words: a pool's host_ram_gb below what "
        "any GPU node has, likely meant a unit up (Fleet.small_host_ram_notes; solver.place's)"))
    ways_cut_short: tuple[str, ...] = Field(default=(), description=(
        "the jobs whose ways to run the time limit left unasked (the jobs of more priority are asked first): they are "
        "left out, for want of time, the status is at best 'feasible', and the bound counts the other jobs alone; "
        "where one of them must be placed (a required job, or any with minimize='nodes'), the search for a placement "
        "never ran: status 'unknown' ('infeasible' where another job that must be placed has no way to run at all)"))
    ways_time_limit_s: int | None = Field(default=None, description=(
        "where the count of the planner's questions cut the jobs' ways short (ways_cut_short; not the wall clock), the "
        "time limit, in whole seconds, that would likely work out every job's ways: the questions asked, and as many "
        "again per job shape asked about (model, length, train batch, LoRA rank, reference model, critic, pool) for "
        "each shape of the jobs cut short that none asked before them had, raised by one part in the number of shapes "
        f"asked about, at {WAYS_QUESTIONS_PER_SECOND} new questions per second; an estimate from counts alone, the "
        "same on every run. Null where no job was cut short, or the wall clock cut them, and in JSON made before the "
        "key"))
    solve_best_unasked: int = Field(default=0, description=(
        "how many placed jobs on the tables' plans were left without their solve_best as the time limit (or Ctrl-C) "
        "came before their question was answered: asked last, in the placements' order, within what is left of the "
        "time limit; 0 where every one was asked, and in JSON made before the key"))
    memory_model_source: str | None = Field(default=None, description=(
        "the source of a memory model of one's own (--memory-model's: ``calibrated on my-cells.yaml``), which the "
        "estimated plans are predicted with; null for the shipped one"))
    jobs_gone: tuple[JobGone, ...] = Field(default=(), description=(
        "with --current, the jobs the placement run now runs in pools of the fleet that the cluster file has no job "
        "of that name for (renamed or removed), in that placement's order: their GPUs are taken as free, though they "
        "run on them until stopped (stop them before a job starts there, or give a renamed job its name again); "
        "empty without --current, and in JSON made before the key"))
    wall_time_s: float = Field(default=0.0, exclude=True, description="seconds spent placing (not compared)")
    planning_s: float = Field(default=0.0, exclude=True, description=(
        "of those, the seconds spent working out the jobs' ways to run before the search (not compared)"))
    building_s: float = Field(default=0.0, exclude=True, description=(
        "then the seconds spent building the placement model on those ways, before the search (not compared)"))
    least_time_limit_s: float | None = Field(default=None, exclude=True, description=(
        "the time limit below which the search got no time after those two and the time kept for the reasons of "
        "the jobs left out, from this run's timings (not compared); None where no placement was searched for, or "
        "where the search found none for another reason than time (none exists, or Ctrl-C came first)"))
    interrupted: bool = Field(default=False, description=(
        "whether Ctrl-C stopped the search early: the placement is the best found by then"))
    solve_best_interrupted: bool = Field(default=False, exclude=True, description=(
        "whether Ctrl-C came while solve's best was asked, last, once the placement was worked out: the questions "
        "left were skipped (solve_best_unasked counts them; no 'solve best' in wall_clock_stopped), the placement is "
        "whole (not interrupted) and the command exits with 130"))

    @property
    def required_cut_short(self) -> bool:
        """Whether the time limit ran out working out the jobs' ways before a job that must be placed (a required
        job, or any with minimize='nodes') got its own."""
        if self.objective_counts == "nodes":
            return bool(self.ways_cut_short)
        return bool(set(self.required) & set(self.ways_cut_short))

    @property
    def search_never_ran(self) -> bool:
        """Whether no placement was searched for as a job that must be placed got no ways in time
        (`required_cut_short`; status unknown), not as another has no way at all (status infeasible)."""
        return self.required_cut_short and self.status != "infeasible"

    @property
    def gap(self) -> float | None:
        """How far the first stage's objective may be from its bound, relative to the bound: 0 where it reaches the
        bound, which proves the placement the best only where `status` is ``optimal`` (with ways left undecided, or
        host memory rounded, the bound is that of the ways weighed)."""
        if self.objective is None or self.bound is None or self.bound == 0:
            return None
        return abs(self.bound - self.objective) / abs(self.bound)


class PoolPurchase(Frozen, defer_build=True):
    """The nodes a purchase adds to one pool."""

    pool: str = Field(description="the pool, as the cluster file names it")
    gpu: str = Field(description="the pool's GPU type")
    nodes_bought: int = Field(description=(
        "the nodes to buy for the pool (0: none); nodes in JSON of schema_version 1, which reads back"))
    gpus_bought: int = Field(description=(
        "their GPUs: nodes_bought times the pool's gpus_per_node; gpus in JSON of schema_version 1, which reads back"))
    nodes_after: int = Field(description="the pool's nodes with them: the nodes: to write in the cluster file")
    down: tuple[int, ...] = Field(default=(), description=(
        "the pool's nodes that are down (its down), by index: counted in nodes_after, but no job runs there; the "
        "nodes bought are numbered after the pool's own"))
    nodes_used: int = Field(description="the nodes of the pool, with them, that the placement with them uses")
    gpus_used: int = Field(description="the GPUs the placement with them runs on there, trainer and rollout")
    host_ram_gb: HostRamGb | None = Field(default=None, description=HOST_RAM_WORDS)
    fullest_node_host_gb: float | None = Field(default=None, description=FULLEST_NODE_WORDS)

    @model_validator(mode="before")
    @classmethod
    def _bought_read_back(cls, raw: Any) -> Any:
        """A pool's purchase read back from JSON of schema_version 1 (or made before it had one), whose ``nodes`` and
        ``gpus`` were the nodes bought and their GPUs: taken as ``nodes_bought`` and ``gpus_bought``, the names
        they have since (a placement's pool's ``nodes`` and ``gpus`` are the pool's own)."""
        if not isinstance(raw, dict) or "nodes_bought" in raw or "nodes" not in raw:
            return raw
        renamed = {"nodes": "nodes_bought", "gpus": "gpus_bought"}
        return {renamed.get(key, key): value for key, value in raw.items()}


def fleet_gpus_words(gpus: int, any_down: bool, noun: bool = False) -> str:
    """The fleet's GPUs as a purchase's or a placement's bound compares with them, ``the fleet's 48`` (``the fleet's
    48 GPUs``, ``the fleet's 1 GPU`` with `noun`), or where some pool has nodes down, which the count leaves out,
    ``the fleet's 48 on nodes up``."""
    return f"the fleet's {counted(gpus, 'GPU') if noun else gpus}" + (" on nodes up" if any_down else "")


class PurchaseResult(_Timed, Versioned, defer_build=True):
    """The fewest nodes to buy so that every job of a fleet is placed (`solve cluster --buy`): the fewest GPUs, then
    the fewest nodes; the jobs that no number of nodes of any pool they may use runs are named apart."""

    status: Status = Field(description=(
        "optimal: no purchase of fewer GPUs (then nodes) places every job; feasible: this one does, but the time limit "
        "(or host memory rounded, or the jobs' ways out of time) left fewer unproven; unknown: none found in time; "
        "infeasible: no job that may be placed has a way to run"))
    gpus: int | None = Field(description="the GPUs bought in all (null: no purchase found)")
    nodes: int | None = Field(description="the nodes bought in all (null: no purchase found)")
    bound: int | None = Field(description="the fewest GPUs CP-SAT proved any purchase needs (null: none proven)")
    fewest_gpus: int | None = Field(default=None, description=(
        "the GPUs the jobs the purchase must place (required) take at their fewest: each one's way on the fewest GPUs, "
        "whole nodes counted whole, summed; more than fleet_gpus by what any purchase buys at least (a purchase buys "
        "more where their layouts do not pack into the nodes); null where no search ran"))
    fleet_gpus: int | None = Field(default=None, description=(
        "the GPUs of the pools' nodes as they are (those down left out), beside fewest_gpus; null where no search ran"))
    pools: tuple[PoolPurchase, ...] = Field(description="per pool, in the fleet's order, the nodes to buy (empty: no "
                                            "purchase found)")
    fits_nowhere: tuple[Unplaced, ...] = Field(default=(), description=(
        "the jobs that no number of nodes of any pool they may use would run (too long for every GPU type, say), "
        "with why: no purchase counts them"))
    required: tuple[str, ...] = Field(default=(), description=(
        "the jobs the purchase must place, in the fleet's order: every job, or the required ones where some are (the "
        "fleet's required: true and --required's; one in "
        "fits_nowhere no purchase places); the others are placed where the pools with the nodes bought leave room"))
    placements: tuple[Placement, ...] = Field(default=(), description=(
        "the jobs placed on the pools with the nodes bought, as a placement's placements (grown onto idle GPUs, "
        "unless widen is off; node indexes in the pool with them): the required ones, the most priority of the "
        "others, then the longer contexts, then the least cost; empty where no purchase was found"))
    left_out: tuple[str, ...] = Field(default=(), description=(
        "the jobs not required that the placement with the nodes bought leaves out (those with no way to run are in "
        "fits_nowhere)"))
    placement_proven: bool = Field(default=False, description=(
        "whether the placement's priority of the jobs not required, length and cost are proven the best the "
        "purchase allows (false where the time limit or Ctrl-C stopped a stage)"))
    host_rounded: tuple[str, ...] = Field(default=(), description="as a placement's: the status is at best feasible")
    undecided_ways: int = Field(default=0, description="as a placement's: the status is at best feasible")
    ways_cut_short: tuple[str, ...] = Field(default=(), description=(
        "as a placement's: the jobs whose ways to run the time limit left unasked (the required jobs, then those of "
        "more priority, are asked first); no purchase places them, and the status is at best 'feasible' ('unknown' "
        "where one must be placed)"))
    ways_time_limit_s: int | None = Field(default=None, description=(
        "as a placement's: the time limit that would likely work out every job's ways, where their count cut them "
        "short"))
    solve_best_unasked: int = Field(default=0, description=(
        "as a placement's: the placed jobs left without their solve_best as the time limit (or Ctrl-C) came first"))
    searched: bool | None = Field(default=None, description=(
        "whether the search for a purchase ran: false where it never started, as no job with a way to run was left to "
        "place, or the time limit ran out working out the jobs' ways before a job that must be placed got its own "
        "(ways_cut_short names them; status 'unknown'); null in JSON made before the key"))
    wall_clock_stopped: tuple[str, ...] = Field(default=(), description=(
        "the stages the time limit's wall clock stopped (working out the jobs' ways: 'ways', then 'bought GPUs', "
        "'bought nodes', then the placement's on the purchase: 'priority', 'jobs', 'length', 'cost', 'tie-break', and "
        "its jobs grown onto idle GPUs: 'widening', and last, the questions of solve's best on the trainer GPUs of its "
        "jobs placed on the tables' plans: 'solve best'): empty, and only then, the same file gives the same answer "
        "on every run"))
    memory_model_source: str | None = Field(default=None, description="as a placement's")
    notes: tuple[str, ...] = Field(default=(), exclude=True, description=(
        "as a placement's: the notes solve cluster --buy prints on stderr for the cluster file (solver.buy_nodes')"))
    interrupted: bool = Field(default=False, description="whether Ctrl-C stopped the search early")
    solve_best_interrupted: bool = Field(default=False, exclude=True, description=(
        "as a placement's: whether Ctrl-C came while solve's best was asked, once the purchase was worked out"))
    wall_time_s: float = Field(default=0.0, exclude=True, description="seconds spent (not compared)")

    read_back_versions: ClassVar[tuple[int, ...]] = (PURCHASE_SCHEMA_VERSION, SCHEMA_VERSION)

    @property
    def estimated_on_bought(self) -> tuple[tuple[Placement, int], ...]:
        """The placed jobs whose plan is the memory model's estimate (evidence ``estimated``, extrapolated or not) that
        run on nodes bought, each with the GPUs it takes there, in placement order: what of the purchase rests on
        estimates rather than the tables' cells."""
        first_bought = {use.pool: use.nodes_after - use.nodes_bought for use in self.pools}
        on_bought = ((placement, len(placement.gpu_indexes)
                      * sum(node >= first_bought.get(placement.pool, node + 1) for node in placement.nodes))
                     for placement in self.placements if placement.plan.evidence == "estimated")
        return tuple((placement, gpus) for placement, gpus in on_bought if gpus)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def gpus_bought_for_estimates(self) -> int:
        """The GPUs bought that jobs on the memory model's estimated plans run on (`estimated_on_bought`): that much of
        the purchase rests on estimates (``--no-estimate`` buys for the tables' plans alone); 0 where none does."""
        return sum(gpus for _, gpus in self.estimated_on_bought)

    @model_validator(mode="before")
    @classmethod
    def _derived_gpus_for_estimates(cls, raw: Any) -> Any:
        """A purchase rebuilt from its JSON: ``gpus_bought_for_estimates`` is derived from its pools and placements,
        so it is dropped where it agrees with them (and refused where it does not)."""
        return _without_derived(raw, "gpus_bought_for_estimates",
                                lambda data: cls.model_validate(data).gpus_bought_for_estimates, (ValueError,),
                                "its pools and placements say")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def schema_version(self) -> PurchaseSchemaVersion:  # type: ignore[override]
        """The version of this JSON's format (`PURCHASE_SCHEMA_VERSION`: docs/json.md#json-schemas): 2 since its
        pools' nodes and gpus were renamed nodes_bought and gpus_bought; JSON of version 1 reads back."""
        return PURCHASE_SCHEMA_VERSION


def check_placed_on(result: ClusterResult | PurchaseResult, fleet: Fleet) -> None:
    """`QueryError` where `result` was not placed on `fleet`: on other pools, on pools of other sizes (a purchase's
    before the nodes it buys), of other GPU types or other nodes down, with a job on a node that is down, or with a
    job, placed or left out, that the fleet lacks."""
    pools, placed = [pool.name for pool in fleet.pools], [use.pool for use in result.pools]
    if placed and placed != pools:  # a purchase that found none (`gpus` None) is on no pool
        raise QueryError(f"result is on the pools {and_joined(placed)}, fleet has {and_joined(pools)}: pass the fleet "
                         "it placed")
    # Each pool's nodes and GPUs per node (None where it has, or a purchase buys, no nodes to say it).
    sizes = ([(use.nodes_after - use.nodes_bought, use.gpus_bought // use.nodes_bought if use.nodes_bought else None)
              for use in result.pools]
             if isinstance(result, PurchaseResult)
             else [(use.nodes, use.gpus // use.nodes if use.nodes else None) for use in result.pools])
    for pool, (nodes, per_node) in zip(fleet.pools, sizes, strict=False):
        if nodes != pool.nodes or per_node not in (None, pool.gpus_per_node):
            raise QueryError(f"result is on {counted(nodes, 'node')} of {per_node or pool.gpus_per_node} GPUs in pool "
                             f"{pool.name}, fleet has {counted(pool.nodes, 'node')} of {pool.gpus_per_node}: pass the "
                             "fleet it placed")
    downs: list[tuple[int, ...]] = [use.down for use in result.pools]
    for pool, down in zip(fleet.pools, downs, strict=False):
        if down != pool.down:
            raise QueryError(f"result has nodes [{', '.join(map(str, down))}] of pool {pool.name} down, fleet has "
                             f"[{', '.join(map(str, pool.down))}]: pass the fleet it placed")
    on_down = [placement for placement in result.placements for pool in fleet.pools
               if placement.pool == pool.name and set(placement.nodes) & set(pool.down)]
    if on_down:
        raise QueryError(f"result places {on_down[0].job} on nodes {', '.join(map(str, on_down[0].nodes))} of pool "
                         f"{on_down[0].pool}, where a node is down: pass the fleet it placed")
    gpus = {pool.name: pool.gpu for pool in fleet.pools}
    elsewhere = [placement for placement in result.placements
                 if gpus.get(placement.pool, placement.gpu) != placement.gpu]
    if elsewhere:
        first = elsewhere[0]
        raise QueryError(f"result places job {first.job} on {first.gpu} in pool {first.pool}, fleet's pool "
                         f"{first.pool} has {gpus[first.pool]}: pass the fleet it placed")
    jobs = {job.name for job in fleet.jobs}
    left_out = result.fits_nowhere if isinstance(result, PurchaseResult) else result.unplaced
    lacked = [job for job in [placement.job for placement in result.placements] + [job.job for job in left_out]
              if job not in jobs]
    if lacked:
        raise QueryError(f"result names {named_jobs(lacked)}, which fleet has no job of: pass the fleet it placed")


def _poor_fit(mispredicted: int, your_cells: int) -> bool:
    """Whether `mispredicted` cells of `your_cells` are more than a quarter of them (`Calibration.poor_fit`)."""
    return mispredicted * 4 > your_cells


class Calibration(Frozen, Versioned, defer_build=True):
    """A memory model fitted on cells, as ``solve calibrate`` fits it, with what the fit found in them (each a
    phrase, as the command's warnings and notes give it)."""

    memory_model: MemoryModel = Field(description="the fitted model, for memory= (its source names the cells)")
    table_contradictions: tuple[str, ...] = Field(description=(
        "where your cells contradict the documented tables, which planning with them (--cells) refuses; fitting "
        "with the documented tables too, the fit takes both sides"))
    at_bounds: tuple[str, ...] = Field(description=(
        "coefficients that ended at an edge of their plausible range: the cells do not pin the model down (with the "
        "documented tables too, your cells pull them there against those)"))
    first_principles: tuple[str, ...] = Field(default=(), description=(
        "the multipliers the fit left at their first-principles value of 1 (`solver.memory.TERMS`' names): no "
        "observation moved them, so estimates rest on the derivation there, not on the cells"))
    mispredicted: tuple[str, ...] = Field(description=(
        "your cells that the fit predicts the other way (a mistyped cell shows here first), with the predicted "
        "peak against the usable memory before any safety margin"))
    your_cells: int = Field(default=0, description=(
        "how many cells of yours (a GPU type, count, model and length each) the fit was given; 0 without cells"))
    unphysical: tuple[str, ...] = Field(default=(), description=(
        "fitted multipliers outside their physical range (`solver.calibrate.PHYSICAL`, from the memory model's "
        "derivation: states below 16 bytes per parameter, say), each with its value and the range: too few cells to "
        "pin the model down, or cells of another framework or precision; empty for the shipped fit"))
    unphysical_codes: tuple[UnphysicalCode, ...] = Field(default=(), description=(
        "a code for each of unphysical, in the same order (JSON made before the codes has none)"))
    far_from_shipped: tuple[str, ...] = Field(default=(), description=(
        "fitted multipliers inside their ranges that lie more than 3 times beyond both the shipped fit's value and "
        "first principles' 1 (`solver.calibrate.far_from_shipped`), each with its value and by how much: few cells "
        "decide them (with the documented tables too, your cells pull them there); empty for the shipped fit (JSON "
        "made before it has none)"))
    at_token_floor: tuple[str, ...] = Field(default=(), description=(
        "the multipliers of checkpoints, logits and recompute off their first-principles 1 where the physical "
        "floor per token that the fit holds the three to together binds (`solver.calibrate.at_token_floor`): the "
        "floor sets them there (their sum, where there are several), not the cells; empty for the shipped fit (JSON "
        "made before it has none)"))
    from_shipped: tuple[str, ...] = Field(default=(), description=(
        "the coefficients whose fitted value differs from the shipped fit's (tables/memory-model.yaml) to three "
        "significant figures, each from the shipped value to the fitted one (`sp_buffers 6.46 to 1`); empty for the "
        "shipped fit (JSON made before it has none)"))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def poor_fit(self) -> bool:
        """Whether the fit predicts more than a quarter of your cells the other way: too few or conflicting cells
        to pin the model down (``solve calibrate`` warns of it)."""
        return _poor_fit(len(self.mispredicted), self.your_cells)

    @model_validator(mode="after")
    def _a_code_per_unphysical(self) -> Calibration:
        """Refuse codes that do not match the words: one code per unphysical phrase (where codes are given)."""
        check_codes(self.unphysical_codes, self.unphysical, "unphysical_codes", "unphysical phrases", "phrase")
        return self

    @model_validator(mode="before")
    @classmethod
    def _derived_poor_fit(cls, raw: Any) -> Any:
        """A calibration rebuilt from its JSON (``solve calibrate --json``): ``poor_fit`` is derived from the other
        fields, so it is dropped where it agrees with them (and refused where it does not)."""
        return _without_derived(
            raw, "poor_fit", lambda data: _poor_fit(len(data["mispredicted"]), data.get("your_cells", 0)),
            (KeyError, TypeError), "mispredicted and your_cells say")


def check_passes(answers: Iterable[Answer]) -> bool:
    """Whether ``solve --from-config CONFIG --check`` exits 0 for `answers`: each has a plan, and the config's own
    settings judged in it (`Answer.current`) train and are not refused (`CurrentSettings.check_fails`)."""
    return all(answer.plans and answer.current is not None and not answer.current.check_fails for answer in answers)


class ConfigCheck(Frozen, defer_build=True):
    """A Trinity config judged as ``solve --from-config CONFIG --check --json`` judges it (`solver.api.check_config`):
    the file, as the verdicts name it, and an answer per GPU type, as that JSON has them: the verdict on the config's
    own settings (`Answer.current`: `trains`, `verdict`, `config_problems` with their codes, `unread_keys`), the best
    plan, what applies it (`apply`, `config_keys_changed`, or `apply_left_out`); `passes` says whether ``--check``
    exits 0 for them."""

    config: str = Field(description="the config judged, as its verdicts name it")
    answers: tuple[Answer, ...] = Field(description="an answer per GPU type, in the order asked")

    @property
    def passes(self) -> bool:
        """Whether ``--check`` exits 0 for these answers (`check_passes`): each has a plan, and the config's own
        settings train and are not refused; else it exits 1, and each failing answer's `current.verdict` says why."""
        return check_passes(self.answers)
