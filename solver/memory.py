"""A memory model of one trainer GPU, shaped from first principles and calibrated on the documented cells.

Per trainer GPU, with ``P`` parameters (every expert's, for a MoE model), ``n`` trainer GPUs, SP degree
``s``, ``T = ceil(2L/s)`` tokens per GPU (Trinity's default token budget; ``T = L`` for a model trained one padded
sequence per micro-batch, ``2L`` for its DPO pair, `solver.rules.counted_tokens`) and gradient checkpointing:

- **states**: 16 bytes per parameter (the ZeRO paper's mixed-precision count; verl's FSDP holds them as
  fp32 parameters and gradients and Adam's two fp32 moments, the same 16), sharded over the ``n`` GPUs by
  FSDP (a mixture of experts' routed experts with the padding FSDP2 gives them, `expert_padding`: by rows, whole
  experts, the fullest GPU the rounded-up count of them, under Trinity 0.6 and where no release is named; under 0.5,
  whose verl 0.7 places each tensor by its first dimension the GPUs divide, padded only where they divide none of
  them, transformers 5's fused tensors or 0.5.1's transformers 4's weights of each expert; a dense layer's padding is
  not counted); with Offload they
  live in host memory instead; with LoRA (`lora_rank`), the frozen base's fp32 weights alone, and the adapter's
  weights, gradients and Adam moments (`lora_states_bytes`);
- **gathered**: FSDP's working set of whole layers, Offload or not: while a layer's gradients are
  computed and reduced it holds that layer's bf16 weights and the next one's (prefetched), its bf16
  gradients and their fp32 copy for the reduction, 10 bytes per parameter of a layer, and the embedding
  and output matrices with a gradient, 4 bytes per value: ``4 * vocab * hidden + 10 * P_layer``, where
  ``P_layer`` is the parameters less the embeddings', per layer (the largest layer's: an expert layer's where a
  mixture of experts' first layers are dense, `largest_layer_parameters`);
- **checkpoints**: one bf16 hidden state per layer per token, ``2 * T * hidden * layers`` bytes;
- **logits**: ``4 * T * vocab`` bytes, unchunked (and, for a model that caps them, `SOFTCAP_BYTES` per logit more,
  uncalibrated); verl's logits are bf16, and the fitted multiplier (about 7.8 bytes per logit) stands for about four
  bf16 copies at the backward: the logits, the entropy's softmax, the log-probabilities' and the entropy's gradients;
- **recompute**: one layer's activations while it is recomputed, ``2 * T * (hidden + intermediate)``;
- **SP buffers**: what SP costs besides when ``s > 1``, ``2 * T * hidden``, its multiplier fitted, not derived:
  Ulysses' all-to-all copies of the queries, keys, values and attention output live in the layer being
  recomputed, not at the logits' peak, and scale with the attention's widths, not the hidden one;
- **fragmentation**: without Env, PyTorch's caching allocator cannot reuse the holes that the largest
  transient tensors (the logits) leave, so some of their size is lost again: ``4 * T * vocab``;
- **overhead**: CUDA context, NCCL buffers, allocator slack: 1 GiB;
- **critic** (besides the terms, first principles, not calibrated): a PPO critic's states where they stay on the GPU
  beside the actor's (`resident_critic_gib`), 16 bytes per parameter of the model less its output projection with a
  value head (`critic_parameters`), sharded as the actor's, less their gradients (4 bytes), which its own update frees
  as it ends; its optimizer step (`optimizer_step_gib`); and its own update, a second peak (`critic_pass_gib`), with
  all 16: the actor's states where they stay on the GPU less their gradients, freed before it
  (`actor_held_at_critic_pass`), the critic's where they are there for its pass (resident, or
  reloaded by ``param_offload`` and ``optimizer_offload`` without FSDP2's ``offload_policy``: verl 0.9.1's
  ``engine/base.py:314-335``) and its activations, at the actor's SP and token budget (Trinity 0.6 gives it the
  trainer's) but with no vocabulary-wide logits.

Each term is multiplied by a calibrated coefficient (`Coefficients`), checkpoints, logits and recompute
held together to a physical floor per token (`token_floor_gib`); without Offload the optimizer step's own
peak (`optimizer_step_gib`) must fit in `STEP_USABLE` of the memory too (both less a safety margin); the plan fits when the sum is
within the usable fraction of the GPU's memory, a fraction that Env (expandable segments, less
fragmentation) raises; with a critic, its own update's peak must be within it too. All coefficients are
non-negative, so the model is monotone: more GPUs, more memory, Offload or Env never make a plan stop fitting, and a
longer context never makes one start.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from math import ceil, prod
from typing import Annotated, Any

from pydantic import (
    Field,
    NonNegativeInt,
    PlainSerializer,
    PositiveInt,
    SerializerFunctionWrapHandler,
    ValidatorFunctionWrapHandler,
    computed_field,
    model_serializer,
    model_validator,
)

from solver.query import default_margin
from solver.results import (
    SERVER_HOST_RAM_PER_GPU_GIB,
    Beyond,
    BeyondCode,
    Caution,
    CautionCode,
    HostRamGb,
    MarginRoom,
    RolloutEngines,
    Versioned,
    caution_fields,
    cautions_of,
    check_beyond_codes,
    check_caution_codes,
    far_beyond_calibration,
    gpu_runtime,
    single_gpu_caution,
    sp_over_pcie_caution,
    thin_headroom,
    unchecked_host_need,
)
from solver.rules import (
    COMMAND_OPTIONS,
    Evidence,
    OptionNames,
    TablesVerdict,
    counted_tokens,
    least_token_budget,
    longest_length_of_tokens,
    one_sequence_per_micro_batch,
    sp_degrees,
    trainer_gpus_on_node,
    uneven_split_caution,
    whole_nodes_violation,
)
from solver.tables import (
    HOST_HELD_CRITICS,
    HOST_NEED_WORDS,
    LAYOUTS_TAKEN,
    MAX_ESTIMATED_GPUS,
    NODE_GPUS,
    CalibrationRange,
    Coefficients,
    CriticStates,
    ExpertLayout,
    Frozen,
    GpuType,
    HeldExperts,
    MemoryModel,
    Model,
    ModelLoading,
    Setting,
    TrinityVersion,
    counted,
    host_moment_words,
    loading_ranks,
    lower_host_count_hint,
    shown_parameters,
    sp_rule_violation,
)
from solver.tables.peft_match import adapted_modules, peft_target_match
from solver.tables.peft_names import LoraTargets, PeftModuleNames

GIB = 1024**3
GRID = 1024
"""Estimated lengths are multiples of this many tokens."""
CEILING = 1 << 21
"""The longest length the memory model is asked about (2097152 tokens)."""


PRIOR = Coefficients(states=1.0, gathered=1.0, checkpoints=1.0, logits=1.0, recompute=1.0, sp_buffers=1.0, fragmentation=1.0,
                     overhead=1.0, usable=0.90, usable_env=0.95)
"""First principles before calibration: every term as derived, 90% of memory usable (95% with Env)."""


class Terms(Frozen):
    """GiB per memory term (`TERMS`, in their order), coefficients applied; ``terms["logits"]`` reads one."""

    states: float
    gathered: float
    checkpoints: float
    logits: float
    recompute: float
    sp_buffers: float
    fragmentation: float
    overhead: float

    def __getitem__(self, term: str) -> float:
        if term not in TERMS:
            raise KeyError(term)
        return float(getattr(self, term))

    def items(self) -> tuple[tuple[str, float], ...]:
        """(term, GiB) in the order of `TERMS`."""
        return tuple((term, self[term]) for term in TERMS)

    def __contains__(self, term: object) -> bool:
        return term in TERMS


TERMS = tuple(Terms.model_fields)
"""The memory terms, in the order of a breakdown."""


class Breakdown(Frozen):
    """Predicted peak memory of one trainer GPU, per term, against what is usable."""

    terms: Terms = Field(description="GiB per term of TERMS, coefficients applied")
    total_gib: float = Field(description="the predicted peak: the terms' sum, GiB")
    usable_gib: float = Field(description=(
        "what the peak may take: the usable fraction of the memory (higher with Env), less the safety margin, GiB"))
    memory_gib: float = Field(description="the GPU's memory, GiB")
    tokens_per_gpu: int = Field(description=(
        "the tokens per GPU the activations are predicted for: Trinity's default token budget for the length and "
        "SP, ceil(2 x max_model_len / SP), or the one given; max_model_len for a model trained one sequence per "
        "micro-batch (padded-micro-batches), which reads no budget"))
    step_gib: float = Field(default=0.0, description=(
        "the optimizer step's peak (`optimizer_step_gib`; 0 with Offload), which must be within step_usable_gib "
        "besides"))
    step_usable_gib: float = Field(description="what the optimizer step may take: STEP_USABLE of the memory, less the margin")
    critic_gib: float = Field(default=0.0, description=(
        "the states of a PPO critic resident on the GPU beside the actor's, less their gradients, which its own update "
        "frees (`resident_critic_gib`), counted in total_gib and step_gib: first principles, not calibrated; 0 without "
        "a critic or with its states offloaded"))
    critic_pass_gib: float = Field(default=0.0, description=(
        "the peak of a PPO critic's own update (`critic_pass_gib`), which must be within usable_gib besides: the "
        "actor's states where they stay on the GPU, less their gradients (freed after the actor's update), the "
        "critic's where they are there for its pass (resident or reloaded), and its activations (the terms less the "
        "logits); 0 without a critic"))

    @property
    def step_fits(self) -> bool:
        """Whether the optimizer step's peak is within its share of the memory (`step_usable_gib`)."""
        return self.step_gib <= self.step_usable_gib

    @property
    def critic_pass_fits(self) -> bool:
        """Whether a PPO critic's own update (`critic_pass_gib`; none without a critic) is within the usable memory."""
        return self.critic_pass_gib <= self.usable_gib

    @property
    def fits(self) -> bool:
        """Whether the total is within the usable memory, the optimizer step's peak within its share, and a critic's
        own update within the usable memory."""
        return self.total_gib <= self.usable_gib and self.step_fits and self.critic_pass_fits

    def _critic_pass_room(self) -> float:
        """The room a critic's own update leaves of the usable memory; without a critic, the activations' (no less)."""
        return self.usable_gib - (self.critic_pass_gib or self.total_gib)

    @property
    def step_binds(self) -> bool:
        """Whether the optimizer step (without Offload) has less room than the activations and than a critic's own
        update: `headroom_gib` is its."""
        room = self.step_usable_gib - self.step_gib
        return bool(self.step_gib) and room < self.usable_gib - self.total_gib and room < self._critic_pass_room()

    @property
    def critic_pass_binds(self) -> bool:
        """Whether a PPO critic's own update has less room than the activations, and no more than the optimizer
        step (`step_binds` is not): `headroom_gib` is its."""
        return (bool(self.critic_pass_gib) and not self.step_binds
                and self._critic_pass_room() < self.usable_gib - self.total_gib)

    def margin_kept_gib(self, margin: float) -> float:
        """What the safety `margin` this breakdown was held to keeps back at the tightest peak (`headroom_gib`'s): its
        share of the usable memory there, beside the room left over."""
        return (self.step_usable_gib if self.step_binds else self.usable_gib) * margin / (1 - margin)

    @property
    def headroom_gib(self) -> float:
        """Memory left at the tightest peak, negative for what it lacks: the activations against the usable memory,
        without Offload the optimizer step against its share (`step_binds`), and a critic's own update against the
        usable memory (`critic_pass_binds`)."""
        if self.step_binds:
            return self.step_usable_gib - self.step_gib
        if self.critic_pass_binds:
            return self._critic_pass_room()
        return self.usable_gib - self.total_gib


class MemoryEstimate(Breakdown, defer_build=True):
    """A breakdown, with the longest length that fits with the same model, GPUs and setting, and what the
    tables say of it."""

    longest_len: int | None = Field(description=(
        f"the longest max_model_len on the {GRID}-token grid that fits (up to {CEILING}); None when not even "
        f"{GRID} tokens fit. With a token budget of one's own, the longest its SP group holds (budget x SP, "
        "off the grid) if it fits, else None"))
    dpo_pairs: bool = Field(default=False, description=(
        "whether tokens_per_gpu counts a DPO pair per micro-batch, a chosen and a rejected sequence, each of "
        "max_model_len / SP tokens: a DPO run (--dpo) of a model trained one padded sequence per micro-batch; false "
        "otherwise"))
    beyond_calibration: tuple[str, ...] = Field(default=(), description=(
        "where the estimate lies outside the observations the memory model was calibrated on, in words "
        "(`beyond_calibration`); empty within them"))
    beyond_calibration_codes: tuple[BeyondCode, ...] = Field(default=(), description=(
        "a stable code for each of beyond_calibration, in the same order (docs/json.md lists them)"))
    host_memory_gib: float | None = Field(default=None, description=(
        "the host memory one node needs (`host_memory_gib`, rounded up to a tenth: `shown_host_gib`): "
        f"{HOST_NEED_WORDS}"))
    host_critic_gib: float = Field(default=0.0, description=(
        "what one node holds of a PPO critic's states in host memory while the actor trains (offloaded or reloaded: "
        "`host_critic_gib`), part of the training need that host_memory_gib takes where it is more than the load; 0 "
        "otherwise"))
    host_training_gib: float | None = Field(default=None, description=(
        "where host_memory_gib is the start-up need (the model loading in fp32 beside the pinned shards) and training "
        "holds less: what one node holds while training (`shown_training_host_need`); None otherwise"))
    reference_model: bool = Field(default=True, description=(
        "whether host_memory_gib counts the reference model's pinned shards (--reference/--no-reference; by default "
        "but with --lora-rank): false for a run that builds none"))
    model_loading: ModelLoading = Field(default="every-rank", description=(
        "which of a node's trainer ranks host_memory_gib counts loading the whole model at start-up, as a plan's "
        "model_loading (`solver.tables.model_loading`): every-rank, rank-0, or verl (rank 0 for an untied model, "
        "every rank for a tied one)"))
    host_ram_gib: HostRamGb | None = Field(default=None, description=(
        "the host memory a node has, as given (``--host-ram``), a whole amount without its ``.0`` in JSON; None "
        "when not given"))
    tables: TablesVerdict | None = Field(default=None, description=(
        "what the GPU type's tables say of the same setting, count and length (they decide where they speak); "
        "None where they say nothing"))
    longest_refuted: TablesVerdict | None = Field(default=None, description=(
        "where the tables say the setting runs out of memory at `longest_len` (Trinity's default token budget): "
        "their verdict there, the cell that says so; None otherwise"))
    tables_longest: int | None = Field(default=None, description=(
        "with `longest_refuted`: the longest length the tables let the setting train on these GPUs (the planner's, "
        "from the tables alone); None otherwise, where they let it train at no length, and with a critic (they "
        "measured the actor alone: they vouch for no length of a run that trains one)"))
    tables_longer: TablesVerdict | None = Field(default=None, description=(
        "where the tables let the setting train on these GPUs longer than `longest_len` (at the default token "
        f"budget): their verdict at the next length past it (`longest_len` + {GRID}), documented or inferred, with "
        "the cell that vouches (at its row, that length or longer); None otherwise"))
    smaller_card: TablesVerdict | None = Field(default=None, description=(
        "where `tables` is None and the memory model does not fit the setting: the verdict of the tables of another "
        "GPU type with at most this one's memory (the catalogue's) that say it trains on as many GPUs at this length "
        "(`smaller_card_vouching`), its cell naming that GPU type; the estimate is on the safe side there, and still "
        "decides (a note: a smaller card's cells vouch for no other GPU type); None otherwise"))
    cautions: tuple[str, ...] = Field(default=(), description=(
        "what to check, in words (`with_cautions`): a model read from a config.json of a kind whose counts were not "
        "checked, YaRN past what is validated or a length past the native context on the model's own RoPE scaling "
        "or with none (a type that is advised no YaRN, as Phi-3), "
        "a length within it past the shorter one vLLM derives from the model's config.json (a smaller length key), "
        "thin headroom where it fits by extrapolating, Offload needing more host memory per node than the "
        f"{SERVER_HOST_RAM_PER_GPU_GIB:g} GiB per GPU servers commonly have for each of its GPUs (without "
        "--node-gpus, its trainer GPUs there; on a card sold for workstations, than such a workstation has) without "
        "--host-ram, one GPU of at most "
        "an A100 80GB's memory for a model of 4B parameters or more or more than 20K tokens, data-parallel ranks "
        "(GPUs / SP) that are not a power of two, Env on an AMD GPU, SP on GPUs that reach one another over PCIe "
        "(GpuType.interconnect), LoRA on a mixture of experts whose adapter config Trinity saves cut short "
        "(lora_moe_caution); empty where there is nothing"))
    caution_codes: tuple[CautionCode, ...] = Field(default=(), description=(
        "a stable code for each of cautions, in the same order (docs/json.md lists them)"))

    @model_validator(mode="after")
    def _codes_per_words(self) -> MemoryEstimate:
        check_caution_codes(self.cautions, self.caution_codes)
        check_beyond_codes(self.beyond_calibration, self.beyond_calibration_codes)
        return self

    def with_cautions(self, model: Model, gpu: GpuType, gpus: int, sp: int, max_model_len: int, env: bool,
                      room: MarginRoom, offload: bool = False, node_gpus: int | None = None,
                      option_names: OptionNames = COMMAND_OPTIONS, lora_moe: str | None = None,
                      lora_targets: str | None = None, excluded_adapted: str | None = None,
                      no_class: str | None = None, release_named: bool = False,
                      critic: CriticStates | None = None) -> MemoryEstimate:
        """This estimate of `model` on `gpus` GPUs of type `gpu` at SP `sp` and `max_model_len` tokens, with Env or not
        (`env`) and Offload or not (`offload`), with a PPO `critic` or not, with its `cautions` (`room`: the margin it
        was held to, `margin_room`; a host memory need, with Offload or without, larger than servers commonly have for
        the GPUs of a node of `node_gpus` (None: not given, for its trainer GPUs on a node of 8), or a workstation for
        all its cards, where no `host_ram_gib`
        holds it to anything: `unchecked_host_need`, which where no Trinity release is named (`release_named`)
        says that naming one counts its own, where some release counts it lower (`lower_host_count_hint`); LoRA on a
        mixture of experts whose adapter config Trinity saves cut short, `lora_moe`: `lora_moe_caution`'s, on LoRA
        targets one transformers' PEFT alone takes,
        `lora_targets`: `lora_targets_caution`'s, and on exclusions a mixture of experts' PEFT adapts all the same,
        `excluded_adapted`: `lora_excluded_adapted_caution`'s, and on a model type the release's transformers 4 has no
        class of, `no_class`: `transformers_4_unloaded_words`', where given; a padded model's, counting a DPO pair where
        `dpo_pairs` does), naming the options they point to as `option_names` do."""
        thin = (thin_headroom(self.headroom_gib, self.beyond_calibration, self.memory_gib, room,
                              self.beyond_calibration_codes, option_names, gpu.rocm) if self.fits else "")
        single = single_gpu_caution(model, gpus, max_model_len, self.memory_gib)
        uneven = uneven_split_caution(gpus, sp, source=None)
        on_node = trainer_gpus_on_node(gpus, node_gpus or NODE_GPUS)
        hint = lower_host_count_hint(release_named, self.model_loading, on_node,
                                     bool(host_moment_words(self.host_training_gib, self.model_loading, offload,
                                                            critic)),
                                     self.reference_model, model.tied_embeddings, gpu.compute_capability,
                                     option_names.release_option())
        host = unchecked_host_need(self.host_memory_gib, gpu, on_node, node_gpus, offload,
                                   option_names.host_ram if self.host_ram_gib is None else None,
                                   option_names.node_gpus, self.host_training_gib, self.model_loading, hint, critic)
        cautions = cautions_of(model, max_model_len, thin, single, uneven, gpu.rocm and env, host=host,
                               sp_over_pcie=sp_over_pcie_caution(gpu, sp, option_names, costed=False),
                               option_names=option_names, dpo=self.dpo_pairs, lora_moe=lora_moe,
                               lora_targets=lora_targets, excluded_adapted=excluded_adapted,
                               far=far_beyond_calibration(room, thin, option_names) if self.fits else None,
                               no_class=no_class)
        return self.model_copy(update=caution_fields(cautions))

    @property
    def host_fits(self) -> bool:
        """Whether the host memory needed fits in the node's (True without `host_ram_gib`)."""
        return self.host_memory_gib is None or host_ram_holds(self.host_memory_gib, self.host_ram_gib)

    @property
    def trains(self) -> bool:
        """The verdict, as `solve memory`'s exit status gives it: the tables' where they speak, else `fits`;
        either way only where the host memory needed fits (`host_fits`)."""
        return (self.fits if self.tables is None else self.tables.trains) and self.host_fits

    @property
    def evidence(self) -> Evidence | None:
        """What the GPU-memory verdict rests on, as a plan's evidence: documented or inferred where a table's cell
        vouches for the setting or says it runs out of memory (`tables`: its `trains` says which; the memory model's
        `fits` may disagree), estimated where no cell speaks and the memory model decides; None only in JSON made
        before a verdict that it runs out of memory had its evidence."""
        return "estimated" if self.tables is None else self.tables.evidence


ParametersB = Annotated[
    float, PlainSerializer(lambda billions: round(billions, 3), return_type=float, when_used="json")]
"""A count of parameters in billions, rounded to 3 decimals where JSON is made (as the text shows two)."""


class MemoryQuestion(Frozen, defer_build=True):
    """What ``solve memory`` was asked, as its --json echoes it before the answer (`MemoryAnswer`)."""

    model: str = Field(description="the model, as the catalogue names it")
    model_parameters_b: ParametersB = Field(description=(
        "its parameters, billions (every expert's, for a mixture of experts): a config.json's count to compare with "
        "its model card"))
    model_active_parameters_b: ParametersB = Field(description=(
        "the parameters a token passes through, billions: a dense model's all, a mixture of experts' all but its "
        "idle experts'"))
    gpu: str = Field(description="the GPU type, as the catalogue names it")
    gpus: PositiveInt = Field(description="the trainer GPUs (--gpus)")
    max_model_len: PositiveInt = Field(description="the length, tokens (--len)")
    sp: PositiveInt = Field(description="the Ulysses SP degree (--sp)")
    env: bool = Field(description="whether with Env, the allocator's expandable segments (--env)")
    offload: bool = Field(description="whether with FSDP2 CPU Offload (--offload)")
    lora_rank: NonNegativeInt = Field(default=0, description=(
        "the LoRA rank whose states were counted (--lora-rank): the frozen base's fp32 weights and the adapter's "
        "weights, gradients and Adam moments; 0 for full fine-tuning's"))
    lora_parameters: NonNegativeInt = Field(default=0, description=(
        "the LoRA adapter's parameters counted (on every linear layer but the output projection: all-linear, "
        "Trinity's default target_modules; or on those lora_target_modules matches, less lora_exclude_modules'); 0 "
        "for full fine-tuning"))
    lora_target_modules: str | None = Field(default=None, description=(
        "the target_modules regex the adapter was counted on (--lora-targets: module names as the regex that "
        "matches them in every layer); null for all-linear's, and for full fine-tuning"))
    lora_exclude_modules: str | None = Field(default=None, description=(
        "the exclude_modules regex of the modules the adapter was counted without (--lora-exclude; "
        "lora_target_modules is then all-linear where no --lora-targets is given); null for none"))
    critic: CriticStates | None = Field(default=None, description=(
        "a PPO critic counted beside the actor (--critic): resident, its states on the GPUs (critic_gib); "
        "offloaded, in host memory (FSDP2's offload_policy); or reloaded, in host memory but back on the GPUs for its "
        "own update (critic_pass_gib); null for none, the tables' runs"))
    critic_parameters_b: ParametersB = Field(default=0.0, description=(
        "the critic's parameters counted, billions: the model's less its output projection, with a value head; 0 "
        "without a critic"))
    dpo: bool = Field(default=False, description=(
        "whether the run trains DPO (--dpo): for a model trained one padded sequence per micro-batch, the estimate "
        "counts a pair per micro-batch (dpo_pairs); false for none"))
    margin: float = Field(description=("the safety margin held to: --margin, or the default on this GPU type (the "
                                       "memory model's, more on a card of at most 48 GiB)"))
    max_token_len_per_gpu: PositiveInt | None = Field(description=(
        "a token budget of one's own (--token-budget); null for Trinity's default (tokens_per_gpu gives the one "
        "predicted for)"))
    node_gpus: PositiveInt = Field(description="the GPUs per node (--node-gpus)")
    trinity_version: str | None = Field(default=None, description=(
        "the Trinity release the memory is counted for (--trinity-version), as given: 0.5.1's transformers 4 holds a "
        "mixture of experts' routed experts separate, the others fused, each tensor placed as verl 0.7 places it "
        "under 0.5, by rows (whole experts) under 0.6; null for none, counted as 0.6"))
    memory_model: str | None = Field(description=(
        "the memory-model file given (--memory-model), as given (a byte of its name that is not UTF-8 as its escape, "
        "\\xe9); null where none was: the shipped memory model, or through the API a loaded one"))
    memory_model_source: str | None = Field(default=None, description=(
        "the source of a memory model of one's own, a file's or a loaded one's (``calibrated on my-cells.yaml``), as "
        "the heading names it; null for the shipped one"))


JSON_GIB_DECIMALS = 4
"""The decimals of the estimate's GiB in ``solve memory --json`` (`MemoryAnswer`): 0.1 MiB."""
JSON_GIB_SLACK = 2 * 10**-JSON_GIB_DECIMALS
"""How far a figure derived from the JSON's rounded GiB may be from the one it printed, rounded from the exact ones
(each of the three off by at most half the last decimal)."""
VERDICTS = ("step_fits", "fits", "headroom_gib", "step_binds", "host_fits", "trains", "evidence")
"""The verdicts ``solve memory --json`` prints after the estimate's fields (`MemoryAnswer`'s computed fields)."""


class MemoryAnswer(MemoryEstimate, MemoryQuestion, Versioned, defer_build=True):
    """What ``solve memory --json`` prints: the question (`MemoryQuestion`), the estimate (`MemoryEstimate`), then
    the verdicts its properties give; in JSON the estimate's GiB are rounded to 4 decimals (0.1 MiB).
    Its JSON reads back into it (``MemoryAnswer.model_validate_json``): the verdicts are derived again."""

    notes: tuple[str, ...] = Field(default=(), exclude=True, description=(
        "the notes solve memory prints on stderr for the question, in its words: a max_model_len of a few hundred "
        "tokens at most, likely meant as thousands (as --len); not in the JSON"))

    # The verdicts, printed after the estimate's fields: its properties as computed fields, described by their
    # docstrings.
    step_fits = computed_field(MemoryEstimate.step_fits)
    fits = computed_field(MemoryEstimate.fits)
    headroom_gib = computed_field(MemoryEstimate.headroom_gib)
    step_binds = computed_field(MemoryEstimate.step_binds)
    host_fits = computed_field(MemoryEstimate.host_fits)
    trains = computed_field(MemoryEstimate.trains)
    # mypy infers computed_field's type variable from the inherited property's Literal type, not the property
    evidence = computed_field(MemoryEstimate.evidence)  # type: ignore[arg-type]

    @model_serializer(mode="wrap", when_used="json")  # unannotated: a return annotation would replace the schema
    def _rounded(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        data: dict[str, Any] = handler(self)
        rounded = {name: value if name in MemoryQuestion.model_fields else _rounded_gib(value)
                   for name, value in data.items()}
        # The headroom of the rounded figures, which the JSON read back derives again: the same, not 0.0001 off.
        figures = {name: value for name, value in rounded.items() if name not in VERDICTS}
        rounded["headroom_gib"] = _rounded_gib(type(self).model_validate(figures).headroom_gib)
        return rounded

    @model_validator(mode="wrap")
    @classmethod
    def _derived_verdicts(cls, raw: Any, handler: ValidatorFunctionWrapHandler) -> MemoryAnswer:
        """An answer rebuilt from its JSON: the verdicts (`VERDICTS`) are derived from the other fields, so they are
        dropped and derived again, and refused where they disagree by more than the JSON's rounding explains.
        (`ValidatorFunctionWrapHandler`: pydantic 2.6 has no typed `ModelWrapValidatorHandler`.)"""
        answer: MemoryAnswer
        if not isinstance(raw, dict) or not raw.keys() & set(VERDICTS):
            answer = handler(raw)
            return answer
        answer = handler({name: value for name, value in raw.items() if name not in VERDICTS})
        for name in VERDICTS:
            if name in raw and not answer._agrees(name, raw[name]):
                raise ValueError(f"{name} is {raw[name]!r}, but the other fields say {getattr(answer, name)!r}")
        return answer

    def _agrees(self, verdict: str, given: Any) -> bool:
        """Whether `given` is what this answer's `verdict` says, as its JSON (rounded) may print it: the headroom
        within twice `JSON_GIB_SLACK` (the tighter peak may be the other, as close), a yes or no either way where a
        comparison it rests on is within `JSON_GIB_SLACK` (`_at_a_limit`)."""
        derived = getattr(self, verdict)
        if derived is None or isinstance(derived, str):  # the evidence: derived from `tables` alone, no figure
            return bool(given == derived)
        if isinstance(derived, bool):
            return given is derived or isinstance(given, bool) and self._at_a_limit(verdict)
        return (isinstance(given, int | float) and not isinstance(given, bool)
                and abs(given - derived) <= 2 * JSON_GIB_SLACK)

    def _at_a_limit(self, verdict: str) -> bool:
        """Whether a comparison that `verdict` rests on is closer than the JSON's rounding can tell
        (`JSON_GIB_SLACK`): the peak against the usable memory, the optimizer step's against its share, a critic's own
        update against the usable memory, or their rooms against each other; or whether the host memory holds the
        need, which is rounded up to a tenth (`shown_host_gib`) after the JSON rounds it, so a need of 100.00003 GiB
        (100.1 shown: more than a --host-ram of 100.05) prints as 100.0 (which is not)."""
        activations, step = self.usable_gib - self.total_gib, self.step_usable_gib - self.step_gib
        critic = self._critic_pass_room()
        steps = [step] if self.step_gib else []  # with Offload no optimizer step on the GPU: nothing to compare
        critics = [critic] if self.critic_pass_gib else []  # without a critic, no update of its own
        fits = [activations, *steps, *critics]
        gaps = {"step_fits": steps, "fits": fits,
                "step_binds": [step - activations, step - critic] if self.step_gib else [],
                "host_fits": [], "trains": fits if self.tables is None else []}[verdict]
        need, host_ram = self.host_memory_gib, self.host_ram_gib
        host_at_a_limit = (verdict in ("host_fits", "trains") and need is not None and host_ram is not None
                           and host_ram_holds(need - JSON_GIB_SLACK, host_ram + JSON_GIB_SLACK)
                           != host_ram_holds(need + JSON_GIB_SLACK, host_ram - JSON_GIB_SLACK))
        return host_at_a_limit or any(abs(gap) <= JSON_GIB_SLACK for gap in gaps)


def _rounded_gib(value: Any) -> Any:
    """Floats in `value`, a mapping's at any depth too, rounded to `JSON_GIB_DECIMALS`."""
    if isinstance(value, dict):
        return {key: _rounded_gib(item) for key, item in value.items()}
    return round(value, JSON_GIB_DECIMALS) if isinstance(value, float) else value


def estimated_counts(node_gpus: int, budget: int = MAX_ESTIMATED_GPUS) -> tuple[int, ...]:
    """Trainer GPU counts the memory model's estimates consider, up to `budget` and `MAX_ESTIMATED_GPUS`:
    any count within one node of `node_gpus` GPUs, then whole nodes (a trainer that spans nodes uses whole
    nodes) (`unestimated_count_words`)."""
    return tuple(n for n in range(1, min(budget, MAX_ESTIMATED_GPUS) + 1) if not unestimated_count_words(n, node_gpus))


def unestimated_count_words(gpus: int, node_gpus: int, source: str = "--node-gpus") -> str | None:
    """Why the memory model's estimates never consider `gpus` trainer GPUs in nodes of `node_gpus` (whose size comes
    from `source`), in words: they span nodes but are not whole nodes (`whole_nodes_violation`), or they are past
    `MAX_ESTIMATED_GPUS`; None where they consider it (`estimated_counts`)."""
    return whole_nodes_violation(gpus, node_gpus, source) or (
        f"the memory model estimates no count past {MAX_ESTIMATED_GPUS} GPUs" if gpus > MAX_ESTIMATED_GPUS else None)


def features(model: Model, gpus: int, setting: Setting, max_model_len: int) -> dict[str, float]:
    """Each term of `TERMS` in GiB before calibration, for `model` on `gpus` GPUs with `setting` at
    `max_model_len` tokens (see the module's docstring for where each comes from)."""
    return token_features(model, gpus, setting, counted_tokens(model, max_model_len, setting.sp))


def token_features(model: Model, gpus: int, setting: Setting, tokens: int, lora_rank: int = 0,
                   experts: ExpertLayout = "fused") -> dict[str, float]:
    """`features` for `tokens` tokens per GPU: each term is a constant or in proportion to them; the states of a LoRA
    run of `lora_rank` (0: full fine-tuning) as `lora_states_bytes` counts them, the routed experts laid out as
    `experts`."""
    embedding = model.vocab_size * model.hidden_size
    return {
        "states": 0.0 if setting.offload else lora_states_bytes(model, gpus, lora_rank, STATE_BYTES, experts) / GIB,
        "gathered": (4 * embedding + 10 * largest_layer_parameters(model)) / GIB,
        "checkpoints": 2 * tokens * model.hidden_size * model.num_layers / GIB,
        "logits": 4 * tokens * model.vocab_size / GIB,
        "recompute": 2 * tokens * (model.hidden_size + _ffn_width(model)) / GIB,
        "sp_buffers": 2 * tokens * model.hidden_size / GIB if setting.sp > 1 else 0.0,
        "fragmentation": 0.0 if setting.env else 4 * tokens * model.vocab_size / GIB,
        "overhead": 1.0,
    }


def largest_layer_parameters(model: Model) -> float:
    """The parameters of `model`'s largest layer, which FSDP gathers whole: the parameters less the embeddings', per
    layer, and, for a mixture of experts with dense layers (DeepSeek's first ones), what the wider kind of layer's MLP
    holds beyond the other's, spread over the layers in that mean, added back: an expert layer's over the dense ones
    (DeepSeek-V2-Lite: 584.9M, not 566.2M), or a dense layer's, where it is the wider, over the expert ones."""
    embedding = model.vocab_size * model.hidden_size
    mean = (model.parameters_b * 1e9 - embedding * (1 if model.tied_embeddings else 2)) / model.num_layers
    moe = model.moe
    if moe is None or not moe.dense_layers:
        return mean
    beyond = moe.layer_parameters(model.hidden_size) - 3 * model.hidden_size * moe.dense_width
    others = moe.dense_layers if beyond >= 0 else model.num_layers - moe.dense_layers
    return mean + abs(beyond) * others / model.num_layers


def gathered_shortfall_gib(model: Model, memory: MemoryModel) -> float:
    """How much more FSDP's gathered layers of `model` may take than `memory`'s calibrated ``gathered`` term counts,
    GiB: its first-principles count (`token_features`: 10 bytes per layer parameter) less the multiplier's keep of it,
    for a model larger than the calibration's (`larger_than_calibrated`), whose layers the fit never saw; 0 within
    the calibrated models (their cells check the prediction as a whole), where the range is not known, or where the
    multiplier keeps all of the count. It is the same on any GPU count: every GPU gathers whole layers."""
    calibrated = memory.fit.range
    if calibrated is None or not larger_than_calibrated(model, calibrated):
        return 0.0
    count = token_features(model, 1, Setting(), 0)["gathered"]
    return max(0.0, 1 - memory.coefficients.multiplier("gathered")) * count


def _ffn_width(model: Model) -> int:
    """The feed-forward width a token passes through: for a MoE model, its computed experts' (the active ones', or
    every expert's for a class that computes them all) and a shared expert's (`MoE.ffn_width`)."""
    return model.intermediate_size if model.moe is None else model.moe.ffn_width


def _critic_states_gpus(gpus: int, critic_gpus: int | None) -> int:
    """The GPUs a PPO critic's states are sharded over: `critic_gpus` where given (a hybrid ``fsdp_size``'s group of
    its own), else the trainer's `gpus`."""
    return gpus if critic_gpus is None else critic_gpus


def breakdown(
    model: Model, memory_gib: float, gpus: int, setting: Setting, max_model_len: int, coefficients: Coefficients,
    margin: float = 0.0, tokens_per_gpu: int | None = None, lora_rank: int = 0, critic: CriticStates | None = None,
    dpo: bool = False, experts: ExpertLayout = "fused", critic_sp: int | None = None, critic_gpus: int | None = None,
    critic_raised: int | None = None,
) -> Breakdown:
    """Predicted peak memory of one trainer GPU against its usable memory, and of the optimizer step against
    its share (both less a safety `margin`), at the tokens per GPU it counts for `max_model_len` (`counted_tokens`:
    Trinity's default token budget, or `tokens_per_gpu`, a ``max_token_len_per_gpu`` of the user's; one sequence for a
    model trained one per micro-batch, a pair for `dpo`), for full fine-tuning or a LoRA run of `lora_rank`, with a PPO
    critic's states
    where they stay on the GPU (`critic`: `resident_critic_gib`) and its own update's peak (`critic_pass_gib`: at
    `critic_sp`, a config's own SP for it, where given, else the trainer's, `critic_tokens`, its budget raised there
    to `critic_raised` where given; else at the trainer's SP and tokens), a
    mixture of experts' routed experts sharded as `experts` lays them out (`expert_padding`); the states sharded over
    the `gpus`, the critic's over `critic_gpus` where given (a hybrid ``fsdp_size``'s group of its own)."""
    tokens = counted_tokens(model, max_model_len, setting.sp, tokens_per_gpu, dpo)
    terms = calibrated_terms(model, gpus, setting, tokens, coefficients, lora_rank, experts)
    critic_over = _critic_states_gpus(gpus, critic_gpus)
    critic_gib = resident_critic_gib(model, critic_over, critic, experts)
    critic_tokens, critic_terms = tokens, terms
    critic_at = setting.sp if critic_sp is None else critic_sp
    if critic is not None and (critic_at != setting.sp or critic_raised is not None):
        critic_tokens = _critic_tokens(model, max_model_len, tokens, critic_at, critic_raised)
        critic_terms = calibrated_terms(model, gpus, setting.model_copy(update={"sp": critic_at}), critic_tokens,
                                        coefficients, lora_rank, experts)
    return Breakdown(
        terms=Terms(**terms),
        total_gib=sum(terms.values()) + critic_gib,
        usable_gib=_usable_gib(memory_gib, setting, coefficients, margin),
        memory_gib=float(memory_gib),
        tokens_per_gpu=tokens,
        step_gib=optimizer_step_gib(model, gpus, setting, coefficients, lora_rank, critic, experts, critic_over),
        step_usable_gib=_step_usable_gib(memory_gib, margin),
        critic_gib=critic_gib,
        critic_pass_gib=critic_pass_gib(model, gpus, critic_tokens, critic_terms, critic, lora_rank, experts,
                                        critic_over),
    )


def _critic_tokens(model: Model, max_model_len: int, tokens: int, critic_sp: int, raised: int | None = None) -> int:
    """The tokens per GPU of a PPO critic's update at its own SP `critic_sp` (a config's, else the trainer's where its
    budget is raised there, `raised`), where the trainer's budget is `tokens`: the critic's micro-batches of a model
    trained one sequence per micro-batch hold one sequence there (`counted_tokens`); otherwise it takes the trainer's
    budget, which Trinity raises at its SP to `raised` where given (a release's raise as the verdict counts it: Trinity
    0.5.0's ``ceil(2 x max_model_len / critic_sp)``), else to hold a sequence there, ``ceil(max_model_len / critic_sp)``
    (`least_token_budget`, the least every release gives; with verl before 0.8, ``verl_legacy/verl_config.py:613`` in
    0.6.0; 0.5's ``_adjust_token_len_if_needed``), and at a higher SP keeps (each GPU still holds the budget of an SP
    group's micro-batch of budget x SP tokens)."""
    if one_sequence_per_micro_batch(model):
        return counted_tokens(model, max_model_len, critic_sp)
    return max(tokens, least_token_budget(max_model_len, critic_sp) if raised is None else raised)


CRITIC_HEAD_PARAMETERS = 1
"""What a critic's value head holds per hidden width, besides one bias: the ``score`` projection of transformers'
``GenericForTokenClassification`` (``modeling_layers.py:283`` in 5.25: ``nn.Linear(hidden_size, num_labels)``, a
bias by default), with ``num_labels`` 1 as verl sets it (``engine/fsdp/transformer_impl.py:296`` in 0.9.1)."""


def critic_parameters(model: Model) -> float:
    """The parameters of a PPO critic made from `model` as verl 0.9.1 loads it, ``AutoModelForTokenClassification``
    (``utils/model.py:645``): the model without its output projection (an untied model's own vocabulary matrix; a tied
    one keeps the embeddings it shares), and a value head of one output (`CRITIC_HEAD_PARAMETERS`)."""
    output = 0 if model.tied_embeddings else model.vocab_size * model.hidden_size
    return model.parameters_b * 1e9 - output + CRITIC_HEAD_PARAMETERS * model.hidden_size + 1


def critic_states_gib(model: Model, gpus: int, experts: ExpertLayout = "fused") -> float:
    """What the fullest of `gpus` GPUs holds of a PPO critic's states, GiB: `STATE_BYTES` per parameter
    (`critic_parameters`), sharded over the GPUs as the actor's (a mixture of experts' routed experts as `experts`
    lays them out, `expert_padding`). verl trains it in full whatever the actor's LoRA (Trinity 0.6 gives its model
    config no LoRA rank, ``trainer/verl/trainer.py:355``), from fp32 weights (``model_dtype: fp32``,
    ``trainer/verl/config.py:511``; verl's default for training, ``transformer_impl.py:262``) with AdamW
    (``config.py:624``)."""
    return STATE_BYTES * (critic_parameters(model) / gpus + expert_padding(model, gpus, experts)) / GIB


def resident_critic_gib(model: Model, gpus: int, critic: CriticStates | None, experts: ExpertLayout = "fused") -> float:
    """The critic's states (`critic_states_gib`) that stay on each GPU while the actor trains: where `critic` is
    ``resident``, all but their gradients (`HELD_STATE_BYTES` of `STATE_BYTES`), none without a critic or with its
    states ``offloaded``. Trinity places the critic's worker in the actor's process on every trainer GPU (one resource
    pool, ``create_colocated_worker_cls``, ``trainer/verl/trainer.py:264-266``, ``:408``), so both models' states are
    held at once unless one offloads; verl's engine moves an offloading critic's states to the host outside its own
    passes (``engine/base.py:314-335``). The critic's update ends by freeing its gradients, whichever model the
    trainer updates first, and its forward (``compute_values``) makes none: on verl 0.8 or later (Trinity 0.6.0's
    ``TrinityCriticWorker``, verl's ``TrainingWorker``) its engine's train mode zeroes them as it exits (verl 0.9.1's
    ``workers/engine/fsdp/transformer_impl.py:1138-1139``, ``zero_grad_on_exit`` default true at
    ``workers/engine/base.py:312``, entered by ``train_mini_batch``, ``workers/engine_workers.py:282``; 0.8.0's
    ``:917`` unconditionally) and its forward runs under ``torch.no_grad`` (``base.py:147``; 0.8.0's ``:146``); on
    verl 0.7 (Trinity 0.5.x, and 0.6.0's legacy ``fsdp_workers.py:1645``, which build verl's ``DataParallelPPOCritic``)
    ``update_critic`` ends with ``critic_optimizer.zero_grad()`` (``workers/critic/dp_critic.py:262`` in 0.7.0 and
    0.7.1) and ``compute_values`` runs under ``torch.no_grad`` (``:177``). Each is PyTorch's ``Optimizer.zero_grad``,
    which sets them to None (the default since PyTorch 2.0). Read from the code, not measured."""
    return critic_states_gib(model, gpus, experts) * HELD_STATE_BYTES / STATE_BYTES if critic == "resident" else 0.0


def critic_pass_states_gib(model: Model, gpus: int, critic: CriticStates | None,
                           experts: ExpertLayout = "fused") -> float:
    """The critic's states (`critic_states_gib`) on each GPU during its own update and optimizer step: where `critic`
    is ``resident``, and where ``reloaded``: verl's engine (0.9.1, ``engine/base.py:314-335``; Trinity 0.5's
    ``CriticWorker.update_critic``, ``trainer/verl/fsdp_workers.py:1583-1586``) loads the weights and gradients
    (``param_offload``) and Adam's moments (``optimizer_offload``) back for it. None where ``offloaded`` (FSDP2's
    ``offload_policy``: they stay in host memory, the step runs there) or without a critic."""
    return critic_states_gib(model, gpus, experts) if critic in ("resident", "reloaded") else 0.0


CRITIC_PASS_TERMS = tuple(term for term in TERMS if term != "logits")
"""The terms a PPO critic's own update holds (`critic_pass_gib`): all but the logits (its value head has one output)."""
GRADIENT_BYTES = 4
"""The fp32 gradients among `STATE_BYTES`, per trained parameter, which the optimizer frees after each update."""


def actor_held_at_critic_pass(model: Model, gpus: int, lora_rank: int = 0, experts: ExpertLayout = "fused") -> float:
    """The share of the actor's states (`lora_states_bytes`) still on a GPU while a PPO critic updates: all but their
    gradients (`GRADIENT_BYTES` per trained parameter; a LoRA run's frozen base has none). The trainer updates the
    critic before the actor in each step (Trinity 0.6.0's ``trainer/verl/trainer.py:556-562``,
    ``trainer/verl_legacy/verl_trainer.py:615-627``; verl 0.9.1's ``trainer/ppo/ray_trainer.py:1678-1690``), and the
    actor's previous update ends by freeing its gradients: on verl 0.8 or later its engine's train mode zeroes them
    as it exits (``zero_grad_on_exit``, default true: verl 0.9.1's ``workers/engine/base.py:312``,
    ``workers/engine/fsdp/transformer_impl.py:786``, ``:1138-1139``, entered by ``train_mini_batch``,
    ``workers/engine_workers.py:282``, for ``update_actor``, ``:713-714``), on verl before 0.8 Trinity's
    ``update_policy`` does (``trainer/verl_legacy/dp_actor.py:623`` in 0.6.0), each by PyTorch's
    ``Optimizer.zero_grad``, which sets them to None (the default since PyTorch 2.0). Read from the code, not
    measured."""
    return (lora_states_bytes(model, gpus, lora_rank, HELD_STATE_BYTES, experts)
            / lora_states_bytes(model, gpus, lora_rank, STATE_BYTES, experts))


def critic_pass_gib(model: Model, gpus: int, tokens: int, terms: dict[str, float],
                    critic: CriticStates | None, lora_rank: int = 0, experts: ExpertLayout = "fused",
                    critic_gpus: int | None = None) -> float:
    """The peak of a PPO critic's own update on a trainer GPU at `tokens` per GPU, GiB, beside the actor's calibrated
    `terms` there (0 without a critic), for full fine-tuning or a LoRA run of `lora_rank`. Trinity places both on every
    trainer GPU (`resident_critic_gib`) and gives the critic the trainer's SP and token budget (0.6:
    ``trainer/verl/config.py:462``, ``:478``; 0.5: ``verl_config.py:594-601``), so its pass holds: the actor's states
    where they stay on the GPU (its ``states`` term, none with Offload) less their gradients, freed after the actor's
    update, which follows the critic's (`actor_held_at_critic_pass`), the critic's states where they are
    there for its pass (`critic_pass_states_gib`), and its activations: `CRITIC_PASS_TERMS` as the actor's (the
    gathered layers' embedding matrix with a gradient, which the critic keeps, and the output matrix, which it has
    not, counted: the more; the fragmentation the actor's logits leave without Env, which its cache may still hold),
    the checkpoints and recompute held to their own floor (`token_floor_gib` without the logits: their calibrated
    multipliers were fitted beside the logits'). The critic's states are sharded over `critic_gpus` where given, else
    over the `gpus`."""
    if critic is None:
        return 0.0
    per_token = max(terms["checkpoints"] + terms["recompute"], token_floor_gib(model, tokens, logits=False))
    others = sum(terms[term] for term in CRITIC_PASS_TERMS if term not in ("states", "checkpoints", "recompute"))
    actor = terms["states"] * actor_held_at_critic_pass(model, gpus, lora_rank, experts)
    critic_over = _critic_states_gpus(gpus, critic_gpus)
    return actor + others + per_token + critic_pass_states_gib(model, critic_over, critic, experts)


STEP_USABLE = 0.98
"""The share of a GPU's memory the optimizer step's peak may take before the safety margin (97.0% at the default
margin): no activations are held then, so little is lost to fragmentation (Qwen3-8B with Env on two A100s, a
documented cell, takes 96.6% at the step)."""
ADAM_STEP_BYTES = 4
"""What AdamW's step adds per parameter of the shard: PyTorch's foreach implementation computes the square
root of the second moment into a new fp32 tensor."""


def optimizer_step_gib(model: Model, gpus: int, setting: Setting, coefficients: Coefficients, lora_rank: int = 0,
                       critic: CriticStates | None = None, experts: ExpertLayout = "fused",
                       critic_gpus: int | None = None) -> float:
    """The peak at the optimizer step, GiB: `optimizer_step_states_gib` and the overhead; 0 with Offload, whose step
    runs on the CPU. It does not grow with the length, so it binds only for large models at short contexts (Qwen3-32B
    on eight 80 GB GPUs). With a critic's states resident (`critic`: `resident_critic_gib`), the larger of the actor's
    step beside them and the critic's own step (its states and `ADAM_STEP_BYTES` per parameter) beside the actor's
    states less their gradients (`actor_held_at_critic_pass`; none with Offload); with them reloaded for its update
    (`critic_pass_states_gib`), its own step so too. The critic's states are sharded over `critic_gpus` where given,
    else over the `gpus`."""
    critic_over = _critic_states_gpus(gpus, critic_gpus)
    resident = resident_critic_gib(model, critic_over, critic, experts)
    steps = [] if setting.offload else [optimizer_step_states_gib(model, gpus, lora_rank, experts) + resident]
    critic_states = critic_pass_states_gib(model, critic_over, critic, experts)
    if critic_states:
        actor = 0.0 if setting.offload else lora_states_bytes(model, gpus, lora_rank, HELD_STATE_BYTES, experts) / GIB
        steps.append(actor + critic_states * (STATE_BYTES + ADAM_STEP_BYTES) / STATE_BYTES)
    return max(steps) + coefficients.overhead if steps else 0.0


def optimizer_step_states_gib(model: Model, gpus: int, lora_rank: int = 0, experts: ExpertLayout = "fused") -> float:
    """What the optimizer step holds without Offload besides the overhead, GiB: the states as first principles count
    them (16 bytes per trained parameter of the shard; the calibrated multiplier also carries what the activation
    peak holds besides) and `ADAM_STEP_BYTES` more per trained parameter (`lora_states_bytes`: every parameter, or
    with LoRA the adapter's). The calibration fits the overhead against it."""
    return lora_states_bytes(model, gpus, lora_rank, STATE_BYTES + ADAM_STEP_BYTES, experts) / GIB


STATE_BYTES = 16
"""The states per trained parameter: the ZeRO paper's mixed-precision count; verl's FSDP holds fp32 weights and
gradients and Adam's two fp32 moments. A LoRA adapter's are counted the same: PEFT makes it in the base's dtype,
fp32 (Trinity 0.6 writes ``model_dtype: fp32`` for the actor; verl 0.9.1's `FSDPEngine._build_module`); under FSDP2
Trinity's worker casts it to bf16 (`_maybe_patch_lora_fsdp2`), 8 bytes, which the count leaves on the safe side."""
HELD_STATE_BYTES = STATE_BYTES - GRADIENT_BYTES
"""The states per trained parameter a model keeps on the GPU between its own updates: all but the gradients, which
each update frees as it ends (the actor's: `actor_held_at_critic_pass`; a critic's: `resident_critic_gib`)."""
FROZEN_BASE_BYTES = 4
"""What a LoRA run's frozen base model holds per parameter: its fp32 weights, sharded by FSDP as full fine-tuning's
(verl 0.9.1 loads the actor in ``model_dtype`` fp32 whether LoRA trains or not), without gradients or Adam moments
(``requires_grad`` is off: PEFT freezes them)."""


def lora_states_bytes(model: Model, gpus: int, lora_rank: int, per_trained: int,
                      experts: ExpertLayout = "fused") -> float:
    """What the fullest of `gpus` GPUs holds of the model's states, bytes, at `per_trained` bytes per trained
    parameter: every parameter for full fine-tuning (`lora_rank` 0); with LoRA, `FROZEN_BASE_BYTES` per parameter
    of the base and `per_trained` per parameter of the adapter (`lora_parameters`), all sharded over the GPUs (a
    mixture of experts' routed experts as `experts` lays them out, `expert_padding`, frozen with LoRA; and so its
    adapter on them)."""
    held = per_trained if not lora_rank else FROZEN_BASE_BYTES  # per parameter of the model, as sharded
    adapter = per_trained * lora_parameters(model, lora_rank, experts) / gpus if lora_rank else 0.0
    return held * model.parameters_b * 1e9 / gpus + held * expert_padding(model, gpus, experts) + adapter


def lora_parameters(model: Model, rank: int, experts: ExpertLayout = "fused") -> int:
    """The parameters of a LoRA adapter of `rank` on every linear layer of `model` but the output projection
    (PEFT's ``all-linear``, Trinity's default ``target_modules``), or on those its config's regex adapts
    (`Model.lora_targets`): ``rank x (inputs + outputs)`` per adapted matrix (`adapted_shapes`, a mixture of experts'
    routed experts laid out as `experts`)."""
    return rank * sum((rows + columns) * count for rows, columns, count in adapted_shapes(model, experts))


def expert_padding(model: Model, gpus: int, experts: ExpertLayout = "fused") -> float:
    """Parameters the fullest of `gpus` GPUs holds beyond an even share of the model's: the padding FSDP2 gives a
    mixture of experts' routed experts' tensors (`shard_padding`; 0 for a dense model, whose layers' padding is not
    counted). `fused` (transformers 5's, `_routed_expert_dims`, a row per expert): by rows, each GPU holds the
    rounded-up count of every expert layer's experts, 22 of Qwen3-30B-A3B's 128 on 6 GPUs where 21.3 would do,
    Mixtral's 1 of 8 on 32 GPUs where a quarter would do (verl 0.8 and later's engine, Trinity 0.6's, and where no
    release is named); under a Trinity 0.5 release (`PLACED_EXPERT_LAYOUTS`) each 3-D tensor as verl 0.7 places it,
    by its first dimension the GPUs divide, padded only where they divide none of the three (`shard_values`):
    Qwen3-30B-A3B's on 6 GPUs by their 1536 and 768, none. `separate` (transformers 4's, Trinity 0.5.1's,
    `held_experts`): each expert's three ``nn.Linear`` weights, placed alike: Mixtral's ``w2``, 4096 rows, pads to
    4098 on 6 GPUs, each of 256. `either` (a release taking transformers 4 or 5): the larger of the two on these
    GPUs, each as verl 0.7 places it: Qwen1.5-MoE's separate weights pad more on 3, 5 or 6 GPUs, its fused tensors on
    7 or 9."""
    moe = model.moe
    if moe is None:
        return 0.0
    sparse = model.num_layers - moe.dense_layers
    width, count = moe.moe_intermediate_size, moe.experts
    if held_experts(model, experts) == "separate":
        return shard_padding(_mlp_shapes(model.hidden_size, width, count * sparse), gpus, first_even_dim=True)
    fused = tuple((*dims, sparse) for dims in _routed_expert_dims(model.hidden_size, width, count))
    padding = shard_padding(fused, gpus, first_even_dim=experts in PLACED_EXPERT_LAYOUTS)
    return max(padding, expert_padding(model, gpus, "separate")) if experts == "either" else padding


def shard_rows(rows: int, gpus: int) -> int:
    """The rows of a tensor of `rows` rows that the fullest of `gpus` GPUs holds where FSDP2 shards it by its rows:
    the rows over the GPUs, rounded up (``FSDPParam._init_sharded_param``, ``fsdp/_fully_shard/_fsdp_param.py:298``
    to ``:316`` in PyTorch 2.13: ``torch.chunk``'s first chunk, which every GPU allocates, padded)."""
    return -(-rows // gpus)


def shard_values(dims: tuple[int, ...], gpus: int, first_even_dim: bool = False) -> int:
    """The values of a tensor of the dimensions `dims` that the fullest of `gpus` GPUs holds: FSDP2 shards it by its
    rows (`shard_rows`), padded to a multiple of the GPUs; where `first_even_dim`, by its first dimension the GPUs
    divide, padded only where they divide none: verl 0.7's ``get_shard_placement_fn``
    (``utils/fsdp_utils.py:540-550`` in 0.7.0, ``:562-572`` in 0.7.1), which Trinity 0.5's workers give
    ``fully_shard`` (``trainer/verl/fsdp_workers.py:552`` in 0.5.1; FSDP2 refuses an uneven split of another
    dimension, ``_fsdp_param.py:289-297``; ``:353-368`` alike in PyTorch 2.9.1, which Trinity 0.5.1's newest vLLM,
    0.15.1, pins)."""
    if first_even_dim and any(size % gpus == 0 for size in dims):
        return prod(dims) // gpus
    return shard_rows(dims[0], gpus) * prod(dims[1:])


def shard_padding(shapes: tuple[tuple[int, ...], ...], gpus: int, first_even_dim: bool = False) -> float:
    """Parameters the fullest of `gpus` GPUs holds of the tensors `shapes` ((dimensions..., count): (rows, columns,
    count) of a matrix) beyond an even share of them: each tensor's shard (`shard_values`, by its rows or, where
    `first_even_dim`, as verl 0.7 places it) less its even share."""
    return sum((shard_values(shape[:-1], gpus, first_even_dim) * gpus - prod(shape[:-1])) * shape[-1]
               for shape in shapes) / gpus


def _calibrated(raw: dict[str, float], coefficients: Coefficients) -> dict[str, float]:
    """Each term of `features` times its calibrated multiplier, GiB."""
    return {term: raw[term] * coefficients.multiplier(term) for term in TERMS}


LOGIT_FLOOR_BYTES = 7
"""The least a token costs per vocabulary entry at the logits peak: 4 + 2 + 1 in verl's performance guide (reference
facts section 4). By verl's code the logits are bf16, and the log-probabilities' and the entropy's gradients come
beside them at the backward (6 bytes; 8 where the entropy's softmax is kept too)."""
SOFTCAP_BYTES = 2
"""What a model that caps its logits (`Model.logit_softcapping`; Gemma-2) holds more per token and vocabulary entry:
transformers divides the logits by the cap, takes tanh and multiplies back, each a new bf16 tensor; the division's
and the multiplication's outputs replace the logits (a scalar's saves nothing for the backward), and tanh's output
is kept for the backward beside the capped logits: one more bf16 copy (the tables' models cap none, so the fit
never saw it: it is added as it is, not calibrated)."""


def calibrated_terms(model: Model, gpus: int, setting: Setting, tokens: int, coefficients: Coefficients,
                     lora_rank: int = 0, experts: ExpertLayout = "fused") -> dict[str, float]:
    """Each term in GiB for `tokens` per GPU, coefficients applied, with the per-token terms held to a physical
    floor (`token_floor_gib`). The fit can trade the checkpoints for the logits, since the vocabulary dwarfs
    the checkpoints of the tabled models (calibration holds them to the floor, which they clear); the floor
    keeps models whose checkpoints outweigh their logits (Qwen3-32B, Llama-3.1-70B) from extrapolating below
    physics. What falls short is added to the checkpoints, the term the fit holds low."""
    terms = _calibrated(token_features(model, gpus, setting, tokens, lora_rank, experts), coefficients)
    if model.logit_softcapping:
        terms["logits"] += SOFTCAP_BYTES * tokens * model.vocab_size / GIB
    short = token_floor_gib(model, tokens) - sum(terms[term] for term in PER_TOKEN_TERMS)
    if short > 0:
        terms["checkpoints"] += short
    return terms


PER_TOKEN_TERMS = ("checkpoints", "logits", "recompute")
"""The terms `calibrated_terms` holds to `token_floor_gib` together."""


def token_floor_gib(model: Model, tokens: int, logits: bool = True) -> float:
    """The least `PER_TOKEN_TERMS` can take together for `tokens` per GPU, GiB: a bf16 hidden state per layer
    (each layer's input, which gradient checkpointing keeps; the first is the embedding output) and the final norm's
    output, which the output projection keeps, and the larger of the two peaks that follow each other, the logits'
    (`LOGIT_FLOOR_BYTES` per logit, and `SOFTCAP_BYTES` where the model caps them; none for a pass without `logits`,
    a critic's) and one layer's recompute and backward (`layer_peak_bytes`). (Calibration holds its fit to it too; for
    every catalogued model the logits' peak is the larger.)"""
    checkpoints = 2 * model.hidden_size * (model.num_layers + 1)
    logit_bytes = (LOGIT_FLOOR_BYTES + SOFTCAP_BYTES * model.logit_softcapping) * model.vocab_size if logits else 0
    return tokens * (checkpoints + max(logit_bytes, layer_peak_bytes(model))) / GIB


def layer_peak_bytes(model: Model) -> int:
    """Bytes per token one decoder layer holds while it is recomputed and differentiated, as Hugging Face's
    eager Qwen/Llama code and flash-attention run it: the two RMSNorms' fp32 copies and outputs (``12 h``),
    the query and key paths' norm, rotary and output copies (``14`` bytes per query and per key width), the
    values and attention output, the MLP's gate, up, activation and product with their backward (``12``
    bytes per feed-forward width), and the backward's hidden-width gradients (``8 h``). With latent attention
    (`MLA`), every head's key and value are decompressed (flash-attention pads the values to the keys' width, so
    they count as keys), and each latent holds its bf16 output and its norm's fp32 copy and output besides
    (`LATENT_BYTES` per latent width). A mixture of experts' expert layer holds its routed copies of the hidden state
    besides (`feed_forward_peak_bytes`)."""
    hidden = model.hidden_size
    queries = model.num_attention_heads * model.head_size
    keys = model.num_key_value_heads * model.head_size
    latents = 0 if model.mla is None else LATENT_BYTES * model.mla.latent_width
    return 20 * hidden + 14 * queries + 14 * keys + feed_forward_peak_bytes(model) + latents


MLP_PEAK_BYTES = 12
"""Bytes per token and feed-forward width one layer's MLP holds at its peak (`layer_peak_bytes`): its gate, up,
activation and product with their backward."""
ROUTED_COPY_BYTES = 4
"""Bytes per token, computed expert (`MoE.computed_experts`) and hidden width that a mixture of experts' expert layer
holds at its peak besides its experts' MLP: the token's hidden state copied for each expert it is routed to, and each
expert's output before the routing weight scales it, both bf16 and both kept for the backward (transformers 5.25's
default ``grouped_mm`` experts, integrations/moe.py ``grouped_mm_experts_forward``, and the eager loop of
modeling_qwen3_moe.py's ``Qwen3MoeExperts`` alike). Llama 4's ``Llama4TextMoe`` (modeling_llama4.py), which computes
every expert, holds as many: the hidden state repeated for each expert and that copy scaled by its routing weight
before the experts, both kept for the backward (its experts' output is only summed, which keeps nothing). First
principles, not calibrated (the tables hold no such model)."""


def feed_forward_peak_bytes(model: Model) -> int:
    """Bytes per token the widest layer's feed-forward holds at its peak (`layer_peak_bytes`): `MLP_PEAK_BYTES` per
    width, and in a mixture of experts' expert layer its routed copies of the hidden state besides (`ROUTED_COPY_BYTES`
    per computed expert and hidden width), or a dense layer's MLP where that holds more."""
    if model.moe is None:
        return MLP_PEAK_BYTES * model.intermediate_size
    moe = model.moe
    routed = MLP_PEAK_BYTES * moe.routed_width + ROUTED_COPY_BYTES * moe.computed_experts * model.hidden_size
    return max(routed, MLP_PEAK_BYTES * moe.dense_width)


ROUTER_LOGITS_BYTES = 8
"""The most bytes per token, expert and expert layer that a config's ``output_router_logits`` keeps until the model's
forward returns (transformers 5.25): each layer's router logits (bf16, or fp32 for ERNIE-4.5's and DeepSeek's routers),
and, for a class that computes the load-balancing loss (Qwen-MoE's, Mixtral's, ERNIE-4.5's), their softmax in the same
type, which that loss keeps for its backward (``load_balancing_loss_func``, modeling_qwen3_moe.py). verl's loss does
not use that loss, and the model's output is dropped before the backward, so none of it is held at the peak the memory
model estimates (`router_logits_bytes`)."""
ROUTER_ONE_HOT_BYTES = 12
"""The bytes per token, expert, active expert and expert layer that transformers 5.12's ``load_balancing_loss_func``
(modeling_qwen3_moe.py, Trinity 0.6's least transformers) takes for a moment at the forward's end, beside the logits:
every layer's choices one-hot at once (int64) and their fp32 copy. transformers 5.25 counts them a layer at a time."""


def router_logits_bytes(model: Model) -> tuple[int, int]:
    """For a mixture of experts whose config sets ``output_router_logits``: the most bytes per token it keeps until the
    forward returns (`ROUTER_LOGITS_BYTES` per expert and expert layer), and the bytes per token transformers 5.12's
    load-balancing loss takes besides for a moment (`ROUTER_ONE_HOT_BYTES`); (0, 0) for a dense model. Not counted in
    the estimate: both are freed before the backward, whose peak it is."""
    if model.moe is None:
        return 0, 0
    routed = model.moe.experts * (model.num_layers - model.moe.dense_layers)
    return ROUTER_LOGITS_BYTES * routed, ROUTER_ONE_HOT_BYTES * model.moe.active_experts * routed


LATENT_BYTES = 8
"""Bytes per token and latent width a latent attention's layer holds at its peak (`layer_peak_bytes`): the latent
projection's bf16 output, and its RMSNorm's fp32 copy and bf16 output (the shared RoPE key, without a norm, counted
alike); first principles, not calibrated (the tables hold no such model)."""


def _usable_gib(memory_gib: float, setting: Setting, coefficients: Coefficients, margin: float) -> float:
    """The memory a plan may fill: the usable fraction (Env's with Env), less the safety `margin`."""
    fraction = coefficients.usable_env if setting.env else coefficients.usable
    return memory_gib * fraction * (1 - margin)


def margin_room(memory: MemoryModel, margin: float, memory_gib: float, setting: Setting, model: Model) -> MarginRoom:
    """The `margin` an estimate of `model` with `setting` on a GPU of `memory_gib` is held to, against the default
    there (`default_margin`: `memory`'s, more on a small card), with the usable memory the margin is a fraction of
    and what the calibrated gathered layers may fall short by (`gathered_shortfall_gib`): `thin_headroom` weighs its
    room to spare so; and how many times the calibration's largest model the model is (`far_beyond_calibration`)."""
    calibrated = memory.fit.range
    return MarginRoom(margin, default_margin(memory, memory_gib),
                      _usable_gib(memory_gib, setting, memory.coefficients, 0.0), gathered_shortfall_gib(model, memory),
                      0.0 if calibrated is None or calibrated.largest_model_b <= 0
                      else model.parameters_b / calibrated.largest_model_b)


def _step_usable_gib(memory_gib: float, margin: float) -> float:
    """The memory the optimizer step's peak may fill: `STEP_USABLE` of it, less the safety `margin`."""
    return STEP_USABLE * memory_gib * (1 - margin)


def longest_fitting(
    model: Model, memory_gib: float, gpus: int, setting: Setting, coefficients: Coefficients, margin: float = 0.0,
    grid: int = GRID, ceiling: int = CEILING, lora_rank: int = 0, critic: CriticStates | None = None,
    dpo: bool = False, experts: ExpertLayout = "fused",
) -> int | None:
    """The longest ``max_model_len`` on a `grid` of tokens, up to `ceiling`, that fits (None when not even
    one step fits), for full fine-tuning or a LoRA run of `lora_rank`, with a PPO critic or not (`critic`), for DPO
    or not (`dpo`: `counted_tokens`), a mixture of experts' routed experts laid out as `experts`.

    The memory at each activation peak (the actor's; a critic's own update, `critic_pass_gib`) is a constant plus a
    cost per token per GPU (`token_features`), so the most tokens per GPU that fit follow from the two, the fewer of
    the peaks'; the length is then checked with `breakdown` (and moved by a token where rounding put it one off)."""
    critic_gib = resident_critic_gib(model, gpus, critic, experts)

    def peaks(tokens: int) -> tuple[float, ...]:
        terms = calibrated_terms(model, gpus, setting, tokens, coefficients, lora_rank, experts)
        actor = sum(terms.values()) + critic_gib
        return ((actor, critic_pass_gib(model, gpus, tokens, terms, critic, lora_rank, experts)) if critic
                else (actor,))

    def fits(length: int) -> bool:
        return breakdown(model, memory_gib, gpus, setting, length, coefficients, margin, None, lora_rank, critic,
                         dpo, experts).fits

    step = optimizer_step_gib(model, gpus, setting, coefficients, lora_rank, critic, experts)
    if step > _step_usable_gib(memory_gib, margin):
        return None  # the optimizer step does not fit, whatever the length
    usable = _usable_gib(memory_gib, setting, coefficients, margin)
    # above 0 per token: the per-token terms are held to a physical floor
    most_tokens = max(0, min(int((usable - fixed) / (one - fixed)) for fixed, one in zip(peaks(0), peaks(1))))
    length = min(ceiling, longest_length_of_tokens(model, most_tokens, setting.sp, dpo))
    if not (length == 0 or fits(length)) or (length < ceiling and fits(length + 1)):
        length = _last_fitting(fits, ceiling)  # rounding put it off: search (memory grows with the length)
    length -= length % grid
    return length if length >= grid else None


def _last_fitting(fits: Callable[[int], bool], ceiling: int) -> int:
    """The longest length up to `ceiling` that `fits` (0 when none), by bisection: `fits` holds up to a
    length and not past it."""
    if not fits(1):
        return 0
    low, high = 1, ceiling
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if fits(middle) else (low, middle - 1)
    return low


PINNED_BYTES = (4, 4)
"""Host memory per parameter that Offload keeps in pinned (page-locked) memory: FSDP2's fp32 parameter shards
and the fp32 gradients it copies to the CPU. PyTorch's pinned-memory allocator rounds each block up to a power of
two, and FSDP2 pins each parameter's shard apart."""
REFERENCE_BYTES: dict[TrinityVersion, int] = {"0.5": 2, "0.6": 4}
"""Host memory per parameter of the reference model's shards, by Trinity release: pinned with Offload or not (verl
offloads the reference model to pinned host memory whatever the config), and held from start-up on (verl builds it
before the actor). Trinity 0.5 builds it in bf16 (verl 0.7's worker: no ``model_dtype``, a reference role); 0.6, on
verl 0.8 or later, in fp32 (it writes ``model_dtype: fp32`` into the reference model's engine config as into the
actor's). Counted where the run builds one (`Query.reference_model`, which a Trinity config decides:
`TrinityConfig.reference_model`); without a config, counted."""
FIRST_EVEN_DIM_RELEASES: tuple[TrinityVersion, ...] = ("0.5",)
"""The Trinity releases whose trainer gives FSDP2 verl 0.7's placement (`shard_values`' `first_even_dim`), so that
the pinned host blocks are counted as placed (`pinned_rounding`): each 0.5 patch pins verl 0.7 (0.5.0 and 0.5.1
``verl==0.7.0``, 0.5.2 ``verl==0.7.1``, each wheel's METADATA), whose placement its workers pass. 0.6.0 takes
``verl>=0.7.1``: its legacy workers pass it on verl 0.7 alone (``trinity/trainer/trainer.py``, ``is_verl_legacy``:
below 0.8), and verl 0.8 and later's engine, its trainer on the newest verl, pass none (``transformer_impl.py:465-472``
in 0.9.1), so it is counted by rows, as where no release is named: the larger blocks, never below the placed ones."""
PLACED_EXPERT_LAYOUTS: tuple[ExpertLayout, ...] = ("separate", "either")
"""The layouts counted for the `FIRST_EVEN_DIM_RELEASES` (`solver.tables.counted_expert_layout`: 0.5.1's `separate`,
0.5.0's, 0.5.2's and 0.5's `either`), by which the states on the GPU, which know the release by its layout alone,
place a mixture of experts' routed experts as verl 0.7 does (`expert_padding`); `fused` is 0.6's and no release's."""


def first_even_dim_release(version: TrinityVersion | None) -> bool:
    """Whether Trinity's `version` (None: none named) gives FSDP2 verl 0.7's placement (`FIRST_EVEN_DIM_RELEASES`), so
    that its pinned host blocks are counted as placed (`pinned_rounding`'s `first_even_dim`)."""
    return version in FIRST_EVEN_DIM_RELEASES


PAGEABLE_BYTES = 8
"""Host memory per parameter for Adam's two fp32 moments, in ordinary memory (no rounding)."""
RELOADED_CRITIC_BYTES = (4, 4, 4)
"""Host memory per parameter that a reloaded critic (``param_offload`` and ``optimizer_offload`` without
``offload_policy``) holds while the actor trains: its fp32 weights and Adam's two fp32 moments, no gradients. Its
update ends with ``optimizer.zero_grad()``, which sets them to None (PyTorch's default), before verl moves the rest
to the CPU: verl 0.8.0's engine as its train mode exits (``workers/engine/fsdp/transformer_impl.py:917``, then
``engine/base.py:263`` and ``transformer_impl.py:742-745``), verl 0.7's critic (``workers/critic/dp_critic.py:262``)
before Trinity's legacy worker offloads it (0.6.0's ``trainer/verl_legacy/fsdp_workers.py:1715``, ``:1732-1735``).
Each counted pinned, rounded as `pinned_rounding` says: ``offload_fsdp_optimizer`` copies the moments with
``non_blocking=True``, which PyTorch allocates pinned, and so does FSDP1's ``flat_param_to`` the weights; FSDP2's
``model.cpu()`` leaves the weights pageable, which the count leaves on the safe side."""
LOAD_BYTES = 4
"""Host memory per parameter while verl loads the model before FSDP shards it: the whole model in fp32."""


def weight_shapes(model: Model, experts: ExpertLayout = "fused") -> tuple[tuple[int, int, int], ...]:
    """(rows, columns, count) of each kind of weight tensor the model holds, as Hugging Face's Qwen3 code lays
    them out: embeddings (one matrix if tied), and per layer the attention projections, the MLP (for a MoE model
    the router, the routed experts and a shared expert with its gate) and the norms, Qwen3's query and key
    norms among them (for Llama and Qwen2.5, which have none, or q/k/v biases instead, the sizes differ by less
    than 0.01%); a latent attention's projections and latent norms instead (`MLA`), and
    a mixture of experts' dense layers' MLPs. FSDP2 shards each tensor by its rows (or as verl 0.7 places it,
    `shard_values`). An expert layer's routed experts are two tensors of one row per expert
    (`_routed_expert_shapes`), as transformers 5, which Trinity 0.6 needs, holds them `fused`; or, `separate`
    (transformers 4's, Trinity 0.5.1's), a gated MLP's three matrices per expert."""
    hidden = model.hidden_size
    embeddings = ((model.vocab_size, hidden, 1 if model.tied_embeddings else 2), (hidden, 1, 1))
    return embeddings + _layer_shapes(model, routed_experts=held_experts(model, experts))


def held_experts(model: Model, experts: ExpertLayout) -> HeldExperts:
    """How `model`'s routed experts are held, and so sharded, under a release that holds them as `experts`: `separate`
    where its transformers 4 makes them ``nn.Linear`` for the model's type (`PeftModuleNames.separate_experts`: not
    Llama 4's ``Llama4TextExperts`` nor GraniteMoE's ``GraniteMoeParallelExperts``, 3-D parameters there too with a
    row per expert, ``modeling_llama4.py:53-54`` and ``modeling_granitemoe.py:245`` in 4.57.1, which 0.5.1's verl 0.7
    places as transformers 5's, `expert_padding`); else `fused`, and so where the release takes `either`: the fused
    tensors' shapes, whose padding and pinned blocks are counted as the larger of the two layouts' on each GPU count
    (`expert_padding`, `pinned_rounding`)."""
    return "separate" if experts == "separate" and model.peft_names.separate_experts else "fused"


def counts_hold_for(model: Model, lora_rank: int, counted: ExpertLayout, written: ExpertLayout) -> bool:
    """Whether memory figures of `model` (with LoRA at `lora_rank`) counted with its routed experts laid out as
    `counted` hold for a release that holds them as `written`: `either` counts the larger of the two, so holds for
    each; else where both hold the states alike (`held_experts`) and a LoRA adapter has as many parameters
    (`lora_parameters`), as a dense model's always do."""
    return counted == "either" or (held_experts(model, counted) == held_experts(model, written) and (
        not lora_rank or lora_parameters(model, lora_rank, counted) == lora_parameters(model, lora_rank, written)))


def expert_layout_words(model: Model, experts: ExpertLayout, lora_rank: int = 0) -> str:
    """How the states of `model`'s routed experts were counted under a release holding them as `experts`
    (`held_experts`, `expert_padding`), in words, and with LoRA (`lora_rank`) its adapter where the release takes
    `either` layout and the larger adapter is transformers 4's, unlike the states (`adapter_experts`: Qwen2-MoE's,
    PhiMoE's): ``routed experts counted whole, as transformers 5 holds them`` (by rows: 0.6, none named), ``routed
    experts counted separate, as Trinity 0.5.1's transformers 4 holds them``; under Trinity 0.5's verl 0.7, which
    places 3-D tensors by a dimension the GPUs divide (`PLACED_EXPERT_LAYOUTS`), not whole experts, the words say
    so."""
    if held_experts(model, experts) == "separate":
        return "routed experts counted separate, as Trinity 0.5.1's transformers 4 holds them"
    held = {"fused": "whole, as transformers 5 holds them",
            "separate": "3-D, as Trinity 0.5.1's transformers 4 holds them too and its verl 0.7 places them",
            "either": ("at the larger of Trinity 0.5's two layouts, 3-D as transformers 5 holds them or separate as "
                       "transformers 4 does, each as verl 0.7 places it")
            if held_experts(model, "separate") == "separate" else
            "3-D, as transformers 4 and 5 hold them and Trinity 0.5's verl 0.7 places them"}[experts]
    adapter = ("; its LoRA adapter as transformers 4 makes them, the larger"
               if lora_rank and experts == "either" and adapter_experts(model, experts) == "separate" else "")
    return f"routed experts counted {held}{adapter}"


def layout_difference_words(model: Model, lora_rank: int, counted: ExpertLayout, written: ExpertLayout) -> str:
    """What a release holding `model`'s routed experts as `written` holds otherwise than figures counted as `counted`
    (where `counts_hold_for` says they do not hold), in words: the experts' states where it holds them otherwise
    (`held_experts`: ``which holds Mixtral-8x7B-v0.1's routed experts otherwise, whole on its transformers 5``; a
    release taking `either` transformers ``may``); else its LoRA adapter at `lora_rank` alone, with its parameters as
    that release's transformers lays the model out (`adapter_experts`: transformers 4 makes Qwen2-MoE's router and
    experts ``nn.Linear`` modules that LoRA adapts, transformers 5 parameters it does not) and those counted."""
    name = model.name
    if held_experts(model, counted) != held_experts(model, written):
        return {"fused": f"which holds {name}'s routed experts otherwise, whole on its transformers 5",
                "separate": f"which holds {name}'s routed experts otherwise, separate on its transformers 4",
                "either": f"which may hold {name}'s routed experts otherwise, whole on transformers 5"}[written]
    layouts = {"separate": "transformers 4", "fused": "transformers 5"}
    given, held = lora_parameters(model, lora_rank, written), lora_parameters(model, lora_rank, counted)
    return (f"which counts {name}'s routed experts' states alike but its LoRA adapter "
            f"{'larger' if given > held else 'smaller'} ({given:,} parameters at rank {lora_rank} as "
            f"{layouts[adapter_experts(model, written)]} lays the model out, not the {held:,} counted)")


@lru_cache(maxsize=256)
def adapter_experts(model: Model, experts: ExpertLayout) -> HeldExperts:
    """How a LoRA adapter on ``all-linear`` counts `model`'s router and routed experts under a release that holds
    them as `experts` (`adapted_shapes`): as that layout; where the release takes `either`, the layout whose adapter
    is the larger for the model: `fused` for the types PEFT converts on transformers 5 (Qwen3-MoE's, Mixtral's),
    `separate` for those it does not, whose experts only transformers 4 lets it adapt (Qwen2-MoE's, PhiMoE's); `fused`
    where the two are alike (a dense model); on a regex's modules (`Model.lora_targets`), the layout whose adapter on
    what the regex adapts is the larger."""
    if experts != "either":
        return experts
    return max(LAYOUTS_TAKEN[experts], key=lambda layout: lora_parameters(model, 1, layout))


def _module_shape(model: Model, names: PeftModuleNames, name: str, held: HeldExperts,
                  targets: LoraTargets | None) -> tuple[int, int, int]:
    """(rows, columns, count) at the rank of the layer module `name` (one of `names.adapted`, the release's layout
    `held`) that ``all-linear`` adapts, as `adapted_shapes` counts it: an attention projection in every layer, the
    router and the routed experts (transformers 4's each expert's projections; transformers 5's, where PEFT converts
    them, their fused gate and up projection at twice the rank, halved between the two names) and a shared expert in
    each expert layer, a dense MLP's projection in each dense layer (every layer of a dense model; a mixture of
    experts' as `Model.module_layers` says); of those, where a regex `targets` is given, the ones it adapts
    (`adapted_modules`: in the layers, and of transformers 4's experts, whose full names it matches); count 0 for
    routed experts that nothing adapts (`MoE.peft_converts_experts` off)."""
    hidden, moe, mla = model.hidden_size, model.moe, model.mla
    leaf, parts, indices = name.rsplit(".", 1)[-1], name.split("."), model.module_layers(name, names)

    def count(per_layer: int = 1) -> int:  # the modules of `name` adapted in its layers, `per_layer` in each
        if targets is None:
            return len(indices) * per_layer
        return adapted_modules(targets.pattern, targets.excluded, names, name, indices)

    if parts[0] == "self_attn":
        heads = model.num_attention_heads
        queries = heads * (mla.qk_head_dim if mla is not None else model.head_size)
        keys = model.num_key_value_heads * model.head_size
        rows, columns = {
            "q_proj": (queries, hidden), "k_proj": (keys, hidden), "v_proj": (keys, hidden),
            "qkv_proj": (queries + 2 * keys, hidden),
            "o_proj": (hidden, heads * mla.v_head_dim if mla is not None else queries),
            **({} if mla is None else {
                "q_a_proj": (mla.q_lora_rank, hidden), "q_b_proj": (queries, mla.q_lora_rank),
                "kv_a_proj_with_mqa": (mla.kv_lora_rank + mla.qk_rope_head_dim, hidden),
                "kv_b_proj": (heads * (mla.qk_nope_head_dim + mla.v_head_dim), mla.kv_lora_rank)})}[leaf]
        return rows, columns, count()
    if moe is None:
        return _projection_shape(leaf, hidden, model.intermediate_size, count())
    if name == names.router:
        return moe.experts, hidden, count()
    if "experts" in parts:
        width = moe.moe_intermediate_size
        if held == "separate":
            return _projection_shape(leaf, hidden, width, count(moe.experts))
        routed = count() * moe.experts if moe.peft_converts_experts else 0  # PEFT's wrapper: every expert
        down = leaf in ("down_proj", "w2")  # else half the fused gate and up projection, at twice the rank
        return _projection_shape(leaf, hidden, width, routed) if down else (2 * width, hidden, routed)
    if leaf == "shared_expert_gate":
        return 1, hidden, count()
    if {"shared_expert", "shared_experts", "shared_mlp"} & set(parts):
        return _projection_shape(leaf, hidden, moe.shared_expert_intermediate_size, count())
    return _projection_shape(leaf, hidden, moe.dense_intermediate_size, count())


def _projection_shape(leaf: str, hidden: int, width: int, count: int) -> tuple[int, int, int]:
    """(rows, columns, count) of `count` gated MLPs' projection `leaf`, `width` wide: the gate or up projection
    (``gate_proj``, ``up_proj``, Mixtral's ``w1``, ``w3``; ``gate_up_proj`` twice as wide), or down (``down_proj``,
    ``w2``)."""
    if leaf in ("down_proj", "w2"):
        return hidden, width, count
    return (2 * width if leaf == "gate_up_proj" else width), hidden, count


def adapted_shapes(model: Model, experts: ExpertLayout = "fused") -> tuple[tuple[int, int, int], ...]:
    """(rows, columns, count) of the weight matrices a LoRA adapter adapts, each at the rank, one entry per module
    name (`_module_shape`): on ``all-linear``, every ``nn.Linear`` of the layers (the embeddings, the output
    projection, which PEFT's ``all-linear`` leaves out, and the norms not), as the model's type names and lays them
    out under the release's layout `experts` (`Model.peft_names_of` the layout `adapter_experts` counts:
    `PeftModuleNames.adapted`; Phi-3's fused ``qkv_proj`` and ``gate_up_proj`` one matrix each): of a mixture of
    experts, `fused` (transformers 5), the router where PEFT adapts it and the routed experts where PEFT converts the
    model's LoRA config (`MoE.peft_converts_experts`: each expert's fused gate and up projection at twice the rank
    and its down projection, PEFT 0.21.2's ``ParamWrapper`` of rank x experts; another's are no ``nn.Linear``, which
    nothing adapts), and there no shared expert nor dense layer's MLP, whose projections' names PEFT maps to the
    routed experts' parameters (``solver.tables.peft_names.CONVERTED_MLPS``); `separate` (transformers 4, Trinity
    0.5.1's), no conversion, but the router and each expert's three projections where they are ``nn.Linear`` there;
    under a release taking `either`, the larger of the two. Of those, the ones a config's regex (less its
    ``exclude_modules``) matches where the model has one (`Model.lora_targets`; `peft_target_match` on the layout's
    module names, transformers 4's ``mlp.experts.E.gate_proj`` under ``separate``), each counted in the layers, and
    of transformers 4's routed experts those, whose full names it adapts (`adapted_modules` on `Model.module_layers`:
    ``.*experts\\.[0-3]\\..*_proj`` four per expert layer, ``.*\\.o_proj`` less ``.*layers\\.0\\..*`` every layer but
    the first)."""
    held = adapter_experts(model, experts)
    names, targets = model.peft_names_of(held), model.lora_targets
    matched = None if targets is None else peft_target_match(targets.pattern, targets.excluded, names).linears
    shapes = (_module_shape(model, names, name, held, targets) for name in names.adapted
              if matched is None or name.split(".", 1)[1] in matched)
    return tuple(shape for shape in shapes if shape[2] and shape[0] and shape[1])


def _layer_shapes(model: Model, routed_experts: HeldExperts) -> tuple[tuple[int, int, int], ...]:
    """(rows, columns, count) of the layers' weight tensors (`weight_shapes`), the routed experts' laid out as
    `routed_experts`. A LoRA adapter's matrices are counted module by module instead (`adapted_shapes`), as PEFT
    names them."""
    hidden, layers = model.hidden_size, model.num_layers
    attention = _attention_shapes(model)
    if model.moe is None:
        return attention + _mlp_shapes(hidden, model.intermediate_size, layers)
    moe = model.moe
    sparse = layers - moe.dense_layers
    shared = _mlp_shapes(hidden, moe.shared_expert_intermediate_size, sparse)
    gate = ((1, hidden, sparse),) if moe.shared_expert_intermediate_size and moe.shared_expert_gate else ()
    width, count = moe.moe_intermediate_size, moe.experts
    experts = (_routed_expert_shapes(hidden, width, count, sparse) if routed_experts == "fused"
               else _mlp_shapes(hidden, width, count * sparse))
    dense = _mlp_shapes(hidden, moe.dense_intermediate_size, moe.dense_layers)
    return attention + ((moe.experts, hidden, sparse),) + experts + shared + gate + dense


def _routed_expert_shapes(hidden: int, width: int, experts: int, layers: int) -> tuple[tuple[int, int, int], ...]:
    """(rows, columns, count) of the routed experts' tensors in `layers` expert layers, as transformers 5 holds them
    (`_routed_expert_dims`, each row's two dimensions as one): a row per expert, which FSDP2 shards whole by rows, so
    on a GPU count that does not divide the experts each shard holds the rounded-up count of experts (Qwen3-30B-A3B's
    128 on 6 GPUs: 22 a GPU; as verl 0.7 places them, by all three dimensions: `expert_padding`)."""
    dims = _routed_expert_dims(hidden, width, experts)
    return tuple((rows, columns * inner, layers) for rows, columns, inner in dims)


def _routed_expert_dims(hidden: int, width: int, experts: int) -> tuple[tuple[int, int, int], ...]:
    """The dimensions of an expert layer's routed experts' two 3-D tensors as transformers 5 holds them
    (`Qwen3MoeExperts`: ``gate_up_proj`` of experts x 2 width x hidden, ``down_proj`` of experts x hidden x width)."""
    return (experts, 2 * width, hidden), (experts, hidden, width)


def _mlp_shapes(hidden: int, width: int, count: int) -> tuple[tuple[int, int, int], ...]:
    """(rows, columns, count) of `count` gated MLPs `width` wide: their gate and up projections, and down; none for
    no width or count."""
    if not width or not count:
        return ()
    return (width, hidden, 2 * count), (hidden, width, count)


def _attention_shapes(model: Model) -> tuple[tuple[int, int, int], ...]:
    """(rows, columns, count) of the attention's weight tensors in all layers (`weight_shapes`): the query, key, value
    and output projections, the layers' two RMSNorms and Qwen3's query and key norms; or a latent attention's
    projections and norms and the layers' two RMSNorms."""
    hidden, heads, layers, mla = model.hidden_size, model.num_attention_heads, model.num_layers, model.mla
    if mla is None:
        queries, keys = heads * model.head_size, model.num_key_value_heads * model.head_size
        projections = ((queries, hidden, layers), (keys, hidden, 2 * layers))
        return projections + ((hidden, queries, layers), (hidden, 1, 2 * layers), (model.head_size, 1, 2 * layers))
    queries = heads * mla.qk_head_dim
    query = (((mla.q_lora_rank, hidden, layers), (mla.q_lora_rank, 1, layers), (queries, mla.q_lora_rank, layers))
             if mla.q_lora_rank else ((queries, hidden, layers),))
    return query + ((mla.kv_lora_rank + mla.qk_rope_head_dim, hidden, layers), (mla.kv_lora_rank, 1, layers),
                    (heads * (mla.qk_nope_head_dim + mla.v_head_dim), mla.kv_lora_rank, layers),
                    (hidden, heads * mla.v_head_dim, layers), (hidden, 1, 2 * layers))


def adapter_shapes(model: Model, rank: int, experts: ExpertLayout = "fused") -> tuple[tuple[int, int, int], ...]:
    """(rows, columns, count) of the tensors of a LoRA adapter of `rank` (`adapted_shapes`, a mixture of experts'
    routed experts laid out as `experts`): each adapted matrix's ``lora_A`` (rank x inputs) and ``lora_B`` (outputs x
    rank), as PEFT makes them."""
    return tuple(shape for rows, columns, count in adapted_shapes(model, experts)
                 for shape in ((rank, columns, count), (rows, rank, count)))


@lru_cache(maxsize=1024)
def pinned_rounding(model: Model, gpus: int, bytes_per_value: int, lora_rank: int = 0,
                    experts: ExpertLayout = "fused", first_even_dim: bool = False) -> float:
    """How much more pinned memory the shards of `model` over `gpus` GPUs take than their bytes (at least 1): each
    tensor's shard (`shard_values`: its rows split over the GPUs, rounded up, or where `first_even_dim` as verl 0.7
    places it, `FIRST_EVEN_DIM_RELEASES`, a fused expert tensor by its three dimensions) rounded up to a power of two,
    over all tensors of the model, or with `lora_rank` of its LoRA adapter (`adapter_shapes`), its routed experts
    laid out as `experts` (cached: every planning question with host memory asks again for each GPU count); under a
    release taking `either` transformers, the model's blocks in the layout that pins more on these GPUs (the same
    bytes either way; a LoRA adapter is laid out as its larger one, `adapter_experts`)."""
    if experts == "either" and not lora_rank:
        return max(pinned_rounding(model, gpus, bytes_per_value, 0, layout, first_even_dim)
                   for layout in LAYOUTS_TAKEN[experts])
    fused = {} if lora_rank or model.moe is None or held_experts(model, experts) == "separate" else {
        (rows, columns * inner): (rows, columns, inner)
        for rows, columns, inner in _routed_expert_dims(model.hidden_size, model.moe.moe_intermediate_size,
                                                        model.moe.experts)}

    def pinned(rows: int, columns: int) -> int:
        dims = fused.get((rows, columns), (rows, columns))  # a fused expert tensor placed by its own dimensions
        return 1 << (bytes_per_value * shard_values(dims, gpus, first_even_dim) - 1).bit_length()

    shapes = adapter_shapes(model, lora_rank, experts) if lora_rank else weight_shapes(model, experts)
    held = sum(pinned(rows, columns) * count for rows, columns, count in shapes)
    return held / sum(bytes_per_value * rows * columns * count / gpus for rows, columns, count in shapes)


def host_memory_gib(model: Model, gpus: int, node_gpus: int | None = None, offload: bool = True,
                    version: TrinityVersion | None = None, reference: bool = True, lora_rank: int = 0,
                    critic: CriticStates | None = None, experts: ExpertLayout = "fused",
                    loading: ModelLoading = "every-rank", *, placed: bool | None = None) -> float:
    """Host memory one node needs, GiB. What loading takes at start-up, with Offload or not: `LOAD_BYTES` per
    parameter of the whole model (and of a LoRA adapter of `lora_rank`, which PEFT adds before FSDP shards them), on
    the ranks of the node that `loading` says load it (`loading_ranks`, `solver.tables.model_loading`: by default every
    rank, the most any Trinity release loads; verl's rule under 0.5.0 and 0.5.1, rank 0 alone under 0.6 with FSDP2 on
    a GPU of compute capability 9 or more: docs/memory.md), the node of rank 0's figure given for every node of a
    trainer across nodes, beside the node's pinned shards of the reference model where the run has one (`reference`;
    `REFERENCE_BYTES` of Trinity's `version`, None: 0.6) and, with Offload, the actor's pinned parameter shards.
    With Offload, or a PPO critic whose states are in host memory while the actor trains (`critic`:
    `HOST_HELD_CRITICS`), the larger of that and what its trainer GPUs'
    shares (of all `gpus`) hold while training: the reference model's, with Offload the actor's
    (`offloaded_actor_bytes`, for full fine-tuning or LoRA), and where it offloads the critic's, as full fine-tuning's
    per parameter of `critic_parameters`. (The critic loads before the actor and frees its copy as FSDP shards it: its
    loading is not counted beside the actor's.) The pinned shards hold a mixture of experts' routed experts laid out
    as `experts`, each block as `version`'s trainer places it (`pinned_rounding`; `placed`, where given, as verl 0.7
    places it or by rows whatever the release: `offloaded_actor_bytes`)."""
    loaded, training = host_moments_gib(model, gpus, node_gpus, offload, version, reference, lora_rank, critic,
                                        experts, loading, placed=placed)
    return loaded if training is None else max(training, loaded)


def host_moments_gib(model: Model, gpus: int, node_gpus: int | None = None, offload: bool = True,
                     version: TrinityVersion | None = None, reference: bool = True, lora_rank: int = 0,
                     critic: CriticStates | None = None, experts: ExpertLayout = "fused",
                     loading: ModelLoading = "every-rank", *, placed: bool | None = None) -> tuple[float, float | None]:
    """The two moments of `host_memory_gib`'s need, GiB: what loading takes at start-up, and what training holds (None
    without Offload or a critic held in host memory, where loading is the need: the reference model's shards, held
    from start-up on, are counted in it); the pinned blocks placed as `placed` says (`offloaded_actor_bytes`)."""
    on_node = trainer_gpus_on_node(gpus, node_gpus)
    parameters = model.parameters_b * 1e9
    shards = parameters * on_node / gpus
    loaders = loading_ranks(loading, model.tied_embeddings, on_node)
    reference_bytes = REFERENCE_BYTES[version or "0.6"]
    placed = first_even_dim_release(version) if placed is None else placed
    reference_held = (reference_bytes * pinned_rounding(model, gpus, reference_bytes, 0, experts, placed)
                      if reference else 0)
    actor_parameters, actor_states = (offloaded_actor_bytes(model, gpus, lora_rank, experts, version, placed=placed)
                                      if offload else (0.0, 0.0))
    loaded = parameters + (lora_parameters(model, lora_rank, experts) if lora_rank else 0)
    at_start = LOAD_BYTES * loaded * loaders + (reference_held + actor_parameters) * shards
    critic_held = host_critic_gib(model, gpus, node_gpus, critic, experts, version, placed=placed) * GIB
    if not offload and not critic_held:
        return at_start / GIB, None
    training = (reference_held + actor_states) * shards + critic_held
    return at_start / GIB, training / GIB


def shown_training_host_need(model: Model, gpus: int, node_gpus: int | None = None, offload: bool = True,
                             version: TrinityVersion | None = None, reference: bool = True, lora_rank: int = 0,
                             critic: CriticStates | None = None, experts: ExpertLayout = "fused",
                             loading: ModelLoading = "every-rank") -> float | None:
    """Where the host memory need (`host_memory_gib`) is loading's at start-up and training holds less as rft-solver
    gives them (`shown_host_gib`): what training holds, so shown; None otherwise (training is the peak, or there is no
    training moment of its own: `host_moments_gib`, without Offload or a critic held in host memory)."""
    if not offload and critic not in HOST_HELD_CRITICS:
        return None
    loaded, training = host_moments_gib(model, gpus, node_gpus, offload, version, reference, lora_rank, critic,
                                        experts, loading)
    if training is None or shown_host_gib(training) >= shown_host_gib(loaded):
        return None
    return shown_host_gib(training)


def host_critic_gib(model: Model, gpus: int, node_gpus: int | None, critic: CriticStates | None,
                    experts: ExpertLayout = "fused", version: TrinityVersion | None = None, *,
                    placed: bool | None = None) -> float:
    """What one node holds in host memory of a PPO critic's states while the actor trains, GiB (part of
    `host_memory_gib`'s training need): where `critic` keeps them there (`HOST_HELD_CRITICS`), its trainer GPUs' share
    (of all `gpus`, `node_gpus` to a node) per parameter of `critic_parameters`: offloaded, as full fine-tuning's
    Offload holds them (`offloaded_actor_bytes`); reloaded, its weights and Adam moments without gradients
    (`RELOADED_CRITIC_BYTES`), pinned as Offload's are; under Trinity's `version`, its blocks placed as `placed` says,
    its routed experts laid out as `experts`; 0 otherwise."""
    if critic not in HOST_HELD_CRITICS:
        return 0.0
    on_node = trainer_gpus_on_node(gpus, node_gpus)
    if critic == "reloaded":
        placed = first_even_dim_release(version) if placed is None else placed
        held = sum(size * pinned_rounding(model, gpus, size, 0, experts, placed) for size in RELOADED_CRITIC_BYTES)
    else:
        held = offloaded_actor_bytes(model, gpus, 0, experts, version, placed=placed)[1]
    return held * critic_parameters(model) * on_node / gpus / GIB


def offloaded_actor_bytes(model: Model, gpus: int, lora_rank: int = 0, experts: ExpertLayout = "fused",
                          version: TrinityVersion | None = None, *, placed: bool | None = None) -> tuple[float, float]:
    """What Offload keeps of the actor in host memory, bytes per parameter of the model: its pinned parameter shards,
    and those with its pinned gradients and pageable Adam moments while training (`PINNED_BYTES`, rounded as
    `pinned_rounding` says, and `PAGEABLE_BYTES`). With LoRA (`lora_rank`), FSDP2's CPU offload holds the frozen
    base's fp32 parameter shards alone (`FROZEN_BASE_BYTES`: no gradient, no Adam state), and the adapter's
    (`lora_parameters`) all three, counted in fp32 as on the GPU (`STATE_BYTES`). The model's routed experts are
    laid out as `experts`, each block as Trinity's `version` places it (`pinned_rounding`,
    `FIRST_EVEN_DIM_RELEASES`; None: by rows), or where `placed` is given as verl 0.7 places it (True) or by rows
    (False) whatever `version` (to tell what the placement alone changes: `solver.trinity.plan_keys`)."""
    placed = first_even_dim_release(version) if placed is None else placed
    pinned = [size * pinned_rounding(model, gpus, size, 0, experts, placed) for size in PINNED_BYTES]
    if not lora_rank:
        return pinned[0], sum(pinned) + PAGEABLE_BYTES
    base = FROZEN_BASE_BYTES * pinned_rounding(model, gpus, FROZEN_BASE_BYTES, 0, experts, placed)
    share = lora_parameters(model, lora_rank, experts) / (model.parameters_b * 1e9)
    adapter = [size * pinned_rounding(model, gpus, size, lora_rank, experts, placed) for size in PINNED_BYTES]
    return base + share * adapter[0], base + share * (sum(adapter) + PAGEABLE_BYTES)


def shown_host_tenths(need_gib: float) -> int:
    """A host memory need as rft-solver gives it, in tenths of a GiB: rounded up, so that the figure holds it (a
    need of 55.02 GiB is 551 tenths, not 550)."""
    return ceil(round(need_gib * 10, 6))


def shown_host_gib(need_gib: float) -> float:
    """A host memory need as rft-solver gives it: GiB rounded up to a tenth (`shown_host_tenths`), so that the
    figure holds it (a need of 55.02 GiB is 55.1, not 55.0)."""
    return shown_host_tenths(need_gib) / 10


def shown_host_need(model: Model, gpus: int, node_gpus: int | None = None, offload: bool = True,
                    version: TrinityVersion | None = None, reference: bool = True, lora_rank: int = 0,
                    critic: CriticStates | None = None, experts: ExpertLayout = "fused",
                    loading: ModelLoading = "every-rank", *, placed: bool | None = None) -> float:
    """The host memory one node needs (`host_memory_gib`, for Trinity's `version`, with a reference model or not, for
    full fine-tuning or LoRA of `lora_rank`, with a critic or not, the routed experts laid out as `experts`, the
    pinned blocks placed as `placed` says) as rft-solver gives it: rounded up to a tenth of a GiB
    (`shown_host_gib`)."""
    return shown_host_gib(host_memory_gib(model, gpus, node_gpus, offload, version, reference, lora_rank, critic,
                                          experts, loading, placed=placed))


def fits_host_ram(model: Model, gpus: int, node_gpus: int | None, host_ram_gb: float | None,
                  offload: bool = True, version: TrinityVersion | None = None, reference: bool = True,
                  lora_rank: int = 0, critic: CriticStates | None = None, experts: ExpertLayout = "fused",
                  loading: ModelLoading = "every-rank") -> bool:
    """Whether the host memory a node needs (`host_memory_gib`, with Offload or without, under Trinity's `version`,
    with a reference model or not, for full fine-tuning or LoRA of `lora_rank`, with a critic or not, the routed
    experts laid out as `experts`) fits a node's
    `host_ram_gb` (GiB; None: not checked): the planner's rule, and the --from-config verdict's (`host_ram_holds`, as
    `MemoryEstimate.host_fits`)."""
    return host_ram_gb is None or host_ram_holds(
        host_memory_gib(model, gpus, node_gpus, offload, version, reference, lora_rank, critic, experts, loading),
        host_ram_gb)


def host_ram_holds(need_gib: float, host_ram_gb: float | None) -> bool:
    """Whether a node's host memory `host_ram_gb` (None: not checked) holds `need_gib` as rft-solver gives it
    (`shown_host_gib`: a plan never says it needs more than the memory that holds it): all of it may be used."""
    return host_ram_gb is None or shown_host_gib(need_gib) <= host_ram_gb


def held_host_tenths(host_ram_gb: float) -> int:
    """The most host memory, in tenths of a GiB, that a node of `host_ram_gb` holds as `host_ram_holds` reads it:
    a need shown as t tenths fits it just where t is at most this, so that needs in tenths add up exactly (a node
    of 165.6 holds 1656, one of 165.599 holds 1655, and one of 3533.3999999999996, a float just under 3533.4, holds
    35333, though it times 10 is 35334.0)."""
    tenths = round(host_ram_gb * 10)
    return tenths if tenths / 10 <= host_ram_gb else tenths - 1


VOCAB_TOLERANCE = 1.1
"""A vocabulary within this factor of the calibrated ones counts as within them (Qwen2.5's 152064 beside Qwen3's
151936); past it the logits' share of the activations differs, which the fit could not weigh apart from the
checkpoints' (`docs/memory.md`)."""


def beyond_calibration(
    calibrated: CalibrationRange | None, model: Model, memory_gib: float, gpus: int, setting: Setting,
    tokens_per_gpu: int, node_gpus: int, rocm: bool = False, experts: ExpertLayout = "fused", lora_rank: int = 0,
) -> tuple[Beyond, ...]:
    """Where an estimate lies outside the range of the observations the memory model was calibrated on
    (`calibrated`), one phrase per quantity with its code, compared as shown (parameters to 0.1B, memory to 1 GiB);
    empty when within it, or when the range is not known. There the prediction extrapolates the fitted
    terms, and a measurement is worth more than usual. A trainer on more nodes of `node_gpus` GPUs than the
    observations spanned is beyond it too (`calibrated_nodes`): the flat overhead counts NCCL's memory (RCCL's on an
    AMD GPU, where `rocm`: `gpu_runtime`) as the observations took it. A mixture of experts' phrase says how its
    routed experts were counted (`expert_layout_words`: under a release holding them as `experts`, with LoRA at
    `lora_rank` or not)."""
    if calibrated is None:
        return ()
    least, most = round(calibrated.least_memory_gib), round(calibrated.most_memory_gib)
    memory_range = f"{least} GiB" if least == most else f"{least} to {most} GiB"
    smallest = calibrated.smallest_model_b
    fewer = smallest is not None and round(model.parameters_b, 1) < round(smallest, 1)
    least_vocab, most_vocab = calibrated.least_vocab_size, calibrated.most_vocab_size
    fewest = calibrated.fewest_gpus
    nodes, measured_nodes = ceil(gpus / node_gpus), calibrated_nodes(calibrated)
    measured_on = "one node" if measured_nodes == 1 else f"up to {measured_nodes} nodes"
    vocab_range = f"{least_vocab}" if least_vocab == most_vocab else f"{least_vocab} to {most_vocab}"
    outside = [
        (larger_than_calibrated(model, calibrated), BeyondCode.LARGER_MODEL,
         f"{shown_parameters(model.parameters_b)} parameters (calibrated up to {calibrated.largest_model_b:.1f}B)"),
        (fewer, BeyondCode.SMALLER_MODEL,
         f"{shown_parameters(model.parameters_b)} parameters (calibrated from {smallest or 0:.1f}B)"),
        (least_vocab is not None and most_vocab is not None and not (
            least_vocab / VOCAB_TOLERANCE <= model.vocab_size <= most_vocab * VOCAB_TOLERANCE),
         BeyondCode.OTHER_VOCABULARY, f"a vocabulary of {model.vocab_size} (calibrated on {vocab_range})"),
        (model.moe is not None and calibrated.mixture_of_experts is False, BeyondCode.MIXTURE_OF_EXPERTS,
         f"a mixture of experts (calibrated on dense models; {expert_layout_words(model, experts, lora_rank)})"),
        (model.logit_softcapping, BeyondCode.CAPPED_LOGITS,
         "capped logits (their extra copy counted from first principles, not calibrated)"),
        (not least <= round(memory_gib) <= most, BeyondCode.OTHER_GPU_MEMORY,
         f"{memory_gib:.0f} GiB GPUs (calibrated on {memory_range})"),
        (gpus > calibrated.most_gpus, BeyondCode.MORE_GPUS, f"{gpus} GPUs (calibrated up to {calibrated.most_gpus})"),
        (nodes > measured_nodes, BeyondCode.MORE_NODES,
         f"{nodes} nodes ({gpu_runtime(rocm)[1]}'s memory calibrated on {measured_on})"),
        (fewest is not None and gpus < fewest, BeyondCode.FEWER_GPUS,
         f"{counted(gpus, 'GPU')} (calibrated from {fewest})"),
        (setting.sp > calibrated.largest_sp, BeyondCode.LARGER_SP,
         f"SP={setting.sp} (calibrated up to SP={calibrated.largest_sp})"),
        (setting.sp == 1 and calibrated.fit_without_sp is False, BeyondCode.WITHOUT_SP,
         "SP=1 (calibrated on fits with SP only)"),
        (tokens_per_gpu > calibrated.most_tokens_per_gpu, BeyondCode.MORE_TOKENS_PER_GPU,
         f"{tokens_per_gpu} tokens per GPU (calibrated on fits of up to {calibrated.most_tokens_per_gpu})"),
    ]
    return tuple(Beyond(code, words) for is_outside, code, words in outside if is_outside)


def calibrated_nodes(calibrated: CalibrationRange) -> int:
    """The nodes the observations of `calibrated` spanned: the documented tables' ran on one; cells of yours on more
    GPUs than a node of `NODE_GPUS` are read on such nodes (`tried_settings`), so a fit on 16 GPUs saw two."""
    return ceil(calibrated.most_gpus / NODE_GPUS)


def larger_than_calibrated(model: Model, calibrated: CalibrationRange) -> bool:
    """Whether `model` has more parameters than the largest the calibration observed, as shown (to 0.1B)."""
    return round(model.parameters_b, 1) > round(calibrated.largest_model_b, 1)


def estimates_setting(setting: Setting, without_env: bool = False) -> bool:
    """Whether the memory model estimates `setting`: only with Env on, unless the request turns Env off
    (`without_env`: ``--no-env``, for a system where expandable segments are not available). Env costs
    nothing that matters (its cost weight is a tie-break) and gives the memory room, so an estimate, a
    prediction, never goes without it unless asked; and so it never wins over a plan the tables vouch for
    by saving Env's nominal cost."""
    return setting.env or without_env


def estimated_cells(
    model: Model, memory_gib: float, counts: tuple[int, ...], coefficients: Coefficients, margin: float,
    without_env: bool = False, lora_rank: int = 0, critic: CriticStates | None = None, dpo: bool = False,
    experts: ExpertLayout = "fused",
) -> tuple[tuple[int, int, int, int, int], ...]:
    """(n, e, o, s, longest) for every trainer GPU count in `counts`, Env and Offload (those of
    `estimates_setting`) and SP degree dividing the count that the model's heads allow: the longest
    ``max_model_len`` (any number of tokens, up to `CEILING`) the memory model predicts to fit (kept when
    at least one token fits), for full fine-tuning or a LoRA run of `lora_rank`, with a PPO `critic` or not, for DPO
    or not (`dpo`), a mixture of experts' routed experts laid out as `experts`. The planner's rules still decide
    which of them a plan may use."""
    return tuple(cell for gpus in counts for cell in _cells_of_count(model, memory_gib, gpus, coefficients, margin,
                                                                     without_env, lora_rank, critic, dpo, experts))


@lru_cache(maxsize=1024)
def _cells_of_count(
    model: Model, memory_gib: float, gpus: int, coefficients: Coefficients, margin: float, without_env: bool,
    lora_rank: int, critic: CriticStates | None, dpo: bool, experts: ExpertLayout,
) -> tuple[tuple[int, int, int, int, int], ...]:
    """`estimated_cells` for one GPU count (cached: the planner asks for the same counts again and again)."""
    cells = []
    for sp in sp_degrees(model, gpus):
        for env in (0, 1):
            for offload in (0, 1):
                setting = Setting(env=bool(env), offload=bool(offload), sp=sp)
                if not estimates_setting(setting, without_env):
                    continue
                longest = longest_fitting(model, memory_gib, gpus, setting, coefficients, margin, grid=1,
                                          lora_rank=lora_rank, critic=critic, dpo=dpo, experts=experts)
                if longest is not None:
                    cells.append((gpus, env, offload, sp, longest))
    return tuple(cells)


ROLLOUT_UTILIZATION = 0.9
"""The share of a GPU's memory vLLM takes for a rollout engine (its default ``gpu_memory_utilization``)."""

ROLLOUT_CONTEXT_GIB = 1.0
"""What a rollout engine's CUDA context takes of the memory vLLM takes, GiB."""


def rollout_engines(model: Model, memory_gib: float, rollout_gpus: int, max_model_len: int,
                    node_gpus: int = NODE_GPUS, *, utilization: float = ROLLOUT_UTILIZATION,
                    value_bytes: int = 2, lora_rank: int = 0, max_loras: int = 1) -> RolloutEngines:
    """The smallest tensor-parallel size for the rollout's vLLM engines that divides `rollout_gpus` (1 or more), that
    keeps an engine in one node of `node_gpus`, that the heads allow (as SP: it divides the attention
    heads, and it and the KV heads divide one another), and that `fits` (`rollout_engine`'s figures: one GPU holds the
    weights and the KV cache of one `max_model_len` sequence in half of what vLLM takes of it). When
    no size does, the largest allowed one (whose `fits` is False). A starting point for the rollout, which
    rft-solver does not plan; `utilization`, `value_bytes`, `lora_rank` and `max_loras` as `rollout_engine` takes
    them."""
    allowed = rollout_sizes(model, node_gpus)
    sizes = [t for t in allowed if t <= rollout_gpus and rollout_gpus % t == 0]
    options = [rollout_engine(model, memory_gib, t, max_model_len, largest=t == allowed[-1], utilization=utilization,
                              value_bytes=value_bytes, lora_rank=lora_rank, max_loras=max_loras) for t in sizes]
    return next((option for option in options if option.fits), options[-1])


def rollout_sizes(model: Model, node_gpus: int) -> list[int]:
    """The tensor-parallel sizes a rollout engine of `model` may have, smallest first: those within one node of
    `node_gpus` that the heads allow (as SP: a size divides the attention heads, and it and the KV heads divide one
    another)."""
    heads, kv_heads = model.num_attention_heads, model.num_key_value_heads
    return [t for t in range(1, node_gpus + 1) if not sp_rule_violation(heads, kv_heads, t)]


def rollout_engine(model: Model, memory_gib: float, size: int, max_model_len: int, *, largest: bool,
                   utilization: float = ROLLOUT_UTILIZATION, value_bytes: int = 2,
                   lora_rank: int = 0, max_loras: int = 1) -> RolloutEngines:
    """What one GPU of a vLLM rollout engine of tensor-parallel `size` holds on a GPU of `memory_gib`: the weights,
    `value_bytes` a value (2 for bf16, vLLM's ``dtype`` as Trinity gives it; 4 for float32), its share of the KV cache
    of one `max_model_len` sequence (`vllm_cached_tokens`: less in sliding-window layers; vLLM's ``kv_cache_dtype``
    ``auto`` caches it in the weights' dtype), with LoRA of `lora_rank` (vLLM's ``max_lora_rank``; 0: LoRA off) its
    `max_loras` LoRA slots (`vllm_lora_bytes`), and the room vLLM takes of it (`utilization` of its memory, vLLM's
    ``gpu_memory_utilization``, less `ROLLOUT_CONTEXT_GIB`; none below that); `largest` as `RolloutEngines` has it."""
    return RolloutEngines(size=size, weights_gib=value_bytes * model.parameters_b * 1e9 / size / GIB,
                          kv_cache_gib=_kv_layer_token_bytes(model, size, value_bytes)
                          * vllm_cached_tokens(model, max_model_len) / GIB,
                          lora_gib=vllm_lora_bytes(model, size, lora_rank, value_bytes, max_loras) / GIB
                          if lora_rank else None,
                          room_gib=max(memory_gib * utilization - ROLLOUT_CONTEXT_GIB, 0.0), largest=largest)


def engines_note(engines: RolloutEngines, model: str, gpu: GpuType, prefix: str = "solve: note: ") -> str | None:
    """Why the rollout engines of `model` (its name) on `gpu` are larger than one GPU, or that even the largest holds
    too little, after `prefix` (`solve cluster` names the job there; a plan's caution, its rollout GPUs:
    `rollout_unheld_caution`); None for engines of one GPU that hold enough."""
    held = (f"{model}'s bf16 weights ({engines.weights_gib:.1f} GiB){engines.lora_words} and one sequence's KV cache "
            f"({engines.kv_cache_gib:.1f} GiB) per GPU")
    advice = ("no larger tensor-parallel size stays in a node and suits the heads: the rollout needs GPUs with more "
              "memory" if engines.largest else "give the rollout more GPUs, a count that a larger tensor-parallel "
              "size divides")
    room = (f"{gpu.name} ({engines.room_gib:.1f} GiB: {ROLLOUT_UTILIZATION:.0%} of its memory, less "
            f"{ROLLOUT_CONTEXT_GIB:g} GiB for the {gpu_runtime(gpu.rocm)[0]} context)")
    if not engines.holds:
        return (f"{prefix}{held} at tensor-parallel size {engines.size} take more than vLLM takes of one {room}: "
                f"the engines cannot hold them; {advice}")
    if not engines.fits:
        return (f"{prefix}{held} at tensor-parallel size {engines.size} take more than half of what vLLM takes "
                f"of one {room}: little room for sequences in flight; {advice}")
    if engines.size > 1:
        return (f"{prefix}rollout engines of tensor-parallel size {engines.size}: {held} take at most half of "
                f"what vLLM takes of one {room}, leaving the rest to sequences in flight")
    return None


def rollout_unheld_caution(model: Model, gpu: GpuType, rollout_gpus: int | None, max_model_len: int, node_gpus: int,
                           lora_rank: int = 0) -> Caution | None:
    """The caution on a plan of `model` on `gpu` with `rollout_gpus` beside its trainer (None or 0: none) at
    `max_model_len`, on nodes of `node_gpus`, where the rollout engines `rollout_engines` sizes for them (as the
    plan's Trinity config does: `solver.api.fragment_engines`) cannot hold the model's weights and one sequence's KV
    cache (`RolloutEngines.holds`): `engines_note`'s words after the rollout GPUs (``1 rollout GPU: Qwen3-32B's bf16
    weights (61.0 GiB) ... the engines cannot hold them; ...``), so that the plan's answer says what only its config's
    note said; None where they hold them."""
    if not rollout_gpus:
        return None
    engines = rollout_engines(model, gpu.memory_gib, rollout_gpus, max_model_len, node_gpus, lora_rank=lora_rank)
    if engines.holds:
        return None
    words = engines_note(engines, model.name, gpu, prefix=f"{counted(rollout_gpus, 'rollout GPU')}: ")
    return None if words is None else Caution(CautionCode.ROLLOUT_ENGINES_UNHELD, words)


VLLM_LORA_TOKEN_BYTES = 56
"""What vLLM 0.19.1's punica wrapper keeps on the GPU per batched token (``max_num_batched_tokens``) for LoRA: four
int64 indices (``PunicaWrapperBase.__init__``, ``lora/punica_wrapper/punica_base.py:138`` to ``:149``, the embeddings'
two) and two int32 mappings in each of its two kernel metadata (``LoRAKernelMeta.make``,
``lora/ops/triton_ops/lora_kernel_metadata.py:56`` to ``:62``; ``punica_gpu.py:57``, ``:68``): 5 x 8 + 2 x 2 x 4. Its
tensors per sequence and per adapter (a few KiB) are left out."""


def vllm_lora_bytes(model: Model, size: int, rank: int, value_bytes: int = 2, max_loras: int = 1) -> float:
    """What one GPU of a vLLM 0.19.1 engine of tensor-parallel `size` holds for LoRA at ``max_lora_rank`` `rank`,
    bytes: each LoRA layer's ``lora_a_stacked`` (rank x its inputs on the GPU) and ``lora_b_stacked`` (its outputs on
    the GPU x rank) for each of `max_loras` slots (vLLM's ``max_loras``: 1 as Trinity starts it for its one LoRA
    config, ``common/config_validator.py:806`` to ``:817`` in 0.6.0, and vLLM's default), in the weights' dtype
    (``lora_dtype`` auto, `value_bytes`), over every layer vLLM wraps whatever the adapter's target modules
    (`vllm_lora_widths`), and the punica wrapper's per-token indices (`VLLM_LORA_TOKEN_BYTES` at
    `VLLM_BATCHED_TOKENS`)."""
    widths = sum((inputs + outputs) * count for inputs, outputs, count in vllm_lora_widths(model, size))
    return max_loras * rank * widths * value_bytes + VLLM_LORA_TOKEN_BYTES * VLLM_BATCHED_TOKENS


def vllm_lora_widths(model: Model, size: int) -> tuple[tuple[float, float, int], ...]:
    """(inputs, outputs, count) on one GPU of a vLLM engine of tensor-parallel `size` of the layers whose LoRA slots
    vLLM 0.19.1 makes (``LoRAModelManager._create_lora_modules``, ``lora/model_manager.py:363`` to ``:441``: every
    linear layer and the embeddings, ``lora/utils.py:208`` to ``:229``, none left out without a ``target_modules`` of
    vLLM's own). A column-parallel layer (the query, key and value projections, an MLP's gate and up) keeps its
    inputs whole and its share of the outputs (the KV heads' at least one head), a row-parallel one (the output and
    down projections) its share of the inputs and its outputs whole (``BaseLinearLayerWithLoRA.create_lora_weights``,
    ``lora/layers/base_linear.py:35`` to ``:85``; ``column_parallel_linear.py:197`` to ``:235``); a replicated router
    both whole; a mixture of experts' routed experts each a gated MLP (``FusedMoEWithLoRA``,
    ``lora/layers/fused_moe.py:353`` to ``:412``; vLLM 0.15.1's alike, ``:320`` to ``:380``; 0.11.0 makes none for
    them). The embeddings take the vocabulary whole (``embed_tokens``,
    ``vocal_parallel_embedding.py:49`` to ``:67``; again for a tied output projection, which is the same
    ``VocabParallelEmbedding``), and so does the output projection's logits processor (``logits_processor.py:93`` to
    ``:111``). A latent attention's projections are counted whole on every GPU (on the safe side)."""
    hidden, layers = model.hidden_size, model.num_layers
    vocabulary = ((model.vocab_size, hidden, 2 if model.tied_embeddings else 1), (hidden, model.vocab_size, 1))
    if model.mla is not None:
        attention: tuple[tuple[float, float, int], ...] = tuple(
            (columns, rows, count) for rows, columns, count in _attention_shapes(model) if columns > 1)
    else:
        queries = model.num_attention_heads * model.head_size
        kv_heads = model.num_key_value_heads
        attention = ((hidden, queries / size, layers), (hidden, kv_heads * model.head_size / min(size, kv_heads),
                                                        2 * layers), (queries / size, hidden, layers))
    if model.moe is None:
        return vocabulary + attention + _vllm_mlp_widths(hidden, model.intermediate_size, size, layers)
    moe = model.moe
    sparse = layers - moe.dense_layers
    gate = ((hidden, 1, sparse),) if moe.shared_expert_intermediate_size and moe.shared_expert_gate else ()
    return (vocabulary + attention + ((hidden, moe.experts, sparse),) + gate
            + _vllm_mlp_widths(hidden, moe.moe_intermediate_size, size, moe.experts * sparse)
            + _vllm_mlp_widths(hidden, moe.shared_expert_intermediate_size, size, sparse)
            + _vllm_mlp_widths(hidden, moe.dense_intermediate_size, size, moe.dense_layers))


def _vllm_mlp_widths(hidden: int, width: int, size: int, count: int) -> tuple[tuple[float, float, int], ...]:
    """(inputs, outputs, count) on one GPU of tensor-parallel `size` of `count` gated MLPs `width` wide
    (`vllm_lora_widths`): the gate and up projections column-parallel, down row-parallel; none for no width or
    count."""
    return ((hidden, width / size, 2 * count), (width / size, hidden, count)) if width and count else ()


VLLM_BATCHED_TOKENS = 2048
"""The tokens a vLLM 0.19.1 engine as Trinity starts it schedules in one step (``max_num_batched_tokens``):
``SchedulerConfig.DEFAULT_MAX_NUM_BATCHED_TOKENS`` (``vllm/config/scheduler.py:42``), which an engine made from
``AsyncEngineArgs`` (its usage context ``ENGINE_CONTEXT`` has no default of its own, ``engine/arg_utils.py:2194-2197``)
keeps with chunked prefill on, Trinity 0.6.0's default (``enable_chunked_prefill``, ``common/config.py:536``); off, it
is at least ``max_model_len`` (``arg_utils.py:2213-2222``), and a sliding window then saves nothing."""


def vllm_cached_tokens(model: Model, max_model_len: int) -> int:
    """The tokens whose keys and values a vLLM engine caches for one `max_model_len` sequence, its layers' together:
    every token in a full-attention layer; in each of its sliding-window layers (`Model.vllm_sliding_window`), the
    window less one and the tokens of one step (`VLLM_BATCHED_TOKENS`), at most the sequence, as vLLM 0.19.1's
    ``SlidingWindowSpec.max_memory_usage_bytes`` counts them (``vllm/v1/kv_cache_interface.py:251-270``; its one more
    block, 16 tokens, left out as the full layers' rounding up to a block is)."""
    window, local = model.vllm_sliding_window or (max_model_len, 0)
    return (model.num_layers - local) * max_model_len + local * min(max_model_len, window - 1 + VLLM_BATCHED_TOKENS)


def _kv_layer_token_bytes(model: Model, size: int, value_bytes: int) -> float:
    """The KV cache, `value_bytes` a value (2: bf16), one token takes in one layer on one GPU of a vLLM engine of
    tensor-parallel `size`: the keys and values of its share of the KV heads (each GPU at least one); with latent
    attention, the latent and RoPE key, which vLLM caches whole on every GPU of the engine."""
    if model.mla is not None:
        return value_bytes * (model.mla.kv_lora_rank + model.mla.qk_rope_head_dim)
    kv_heads = model.num_key_value_heads
    return 2 * kv_heads * model.head_size * value_bytes / min(size, kv_heads)
