"""A brute-force reference of the planner's semantics, for tests to check every solver answer against.

Written from the planner's spec only, as plainly as possible: no ortools, no cleverness. It lists every
(n, env, offload, sp, max_model_len) candidate, keeps the feasible ones and sorts them by the objective's key.

A plan is a dict with exactly the keys of `PLAN_KEYS` (and, for min_gpu_hours, ``gpu_hours``: gpus x cost; with a
host-memory caution, ``host_ram_assumed``: the GiB a node is assumed to have and what would give it). In short:

- n trainer GPUs must be a count with a table for the GPU type naming the model, or a count more than
  such a table's (within one node of `node_gpus`, or whole nodes, up to 64); n <= budget (n == budget
  with exact=True).
- SP degree s: divides n, divides the model's attention heads, and KV heads % s == 0 or s % KV heads == 0.
- max_token_len_per_gpu = ceil(2 * L / s) (lowered_budget false; see token_budget="auto" below);
  rope_scaling_factor = L / native_context when L > native_context.
- Evidence, with T the table for n and row(L) its shortest row with max_model_len >= L: documented when
  T's cell at row(L) is exactly (env, offload, sp); otherwise inferred when some row R >= L of T, else of
  the table for the most GPUs below n (two or more, n at most 64) that has such a row, has a non-``-``
  cell C (which neither T nor the n-GPU table of a GPU type with at least its memory says ran out of memory
  at L: at some row up to row(L), unless no row up to L says so and a shorter row takes as many tokens per GPU,
  ceil(2 x row / s), as L at C's SP s) with env >= C.env,
  offload >= C.offload, sp >= C.sp (the source is the shortest such row; what trains on fewer GPUs trains
  on more); otherwise estimated (below) or infeasible. When maximising, L is a row of the source's table.
- cost = (1/n) * (1 + w_off*r*o + c) * (1 + w_sp*(s-1)) * (1 + w_env*e), exactly, with Fraction(repr(weight)), where
  r is the parameters the model holds per parameter a token passes through: 1 for a dense model; for a mixture of
  experts, parameters_b (read as its decimal) over parameters_b less the gated MLPs (3 * hidden * moe_intermediate
  each) of the experts a token does not take (experts - active_experts) in each layer that is not dense; and c is 0
  without a PPO critic, else w_critic * (1 + w_off*r*h), h 1 where its states are offloaded or reloaded.
- Nodes of `node_gpus` (default 8): a trainer on more GPUs than a node uses whole nodes and has SP
  dividing the node. With `rollout_gpus` R > 0, n + R <= node_gpus, or n < node_gpus and n + R whole
  nodes, or n is whole nodes. A plan of a query with `rollout_gpus` (0 too) gives its layout: `nodes`
  (1 when n + R fit one node; (n + R) / node_gpus when the rollout fills the trainer's node and whole
  nodes more; else n / node_gpus whole nodes for the trainer and ceil(R / node_gpus) for the rollout)
  and `rollout_gpus` (R, or all the rollout nodes' GPUs in the last case); both None without. Every plan gives
  `trainer_nodes`, the nodes its trainer runs on: 1 when n fits a node, else n / node_gpus.
- With `train_batch_size` B, n / s (the data-parallel ranks) divides B; for `dpo`, 2 x n / s does (each rank's share
  takes whole micro-batches of one pair, a chosen and a rejected sequence). Without it, a plan whose n / s is not a
  power of two carries a caution on its data-parallel ranks; with it, none does.
- With estimates=True, also every GPU count without a table among 1..node_gpus and the multiples of
  node_gpus, up to the budget and 64: a plan there, or on a count with a table, that no cell vouches for
  is "estimated" (source None) when its setting has Env on (or Env is pinned off), the shipped memory
  model, with its margin, fits exactly that setting at L (at most 2**21 tokens), and no table for the
  count or more GPUs, of the GPU type or of another with tables and at least its memory, says the setting ran
  out of memory at L (what runs out on more GPUs does on fewer, and with more memory on less), nor any such
  table for fewer GPUs that the setting with Offload did (with Offload a GPU holds the same on any count, and
  without it more);
  when maximising, L is a multiple of 1024, or (at the default token budget) the longest length estimated for the
  setting where a table stops the estimate short of the memory model's longest.
- A GPU type's own tables for a model include, for each GPU count it has none with the model for, the table
  with the model of another GPU type with tables and the same driver-reported memory (the A800-80GB takes
  the A100-80GB's), its plans' source cells naming that type ("gpu").
- With token_budget="auto" (and estimates): let Lc be the longest length that the rule above makes
  estimated for the setting (the memory model's longest, and no longer than the last row, of each table for
  the count or more GPUs, that does not say the setting ran out of memory) and Tc = ceil(2 * Lc / s), less one where
  such a table says the setting ran out of memory at floor(Tc * s / 2), the longest length of Tc tokens per GPU
  (cells that contradict themselves: a row past Lc fails with the tokens Lc trained with). A plan no cell
  vouches for is also estimated at any L with ceil(L / s) <= Tc (L at most 2**21; when maximising, a
  multiple of 1024); where the rule above does not make it estimated at L, its max_token_len_per_gpu is the
  larger of ceil(L / s) and the lesser of Tc and ceil(2L / s) - 1 rounded down to a multiple of 1024
  (lowered_budget: whether that is below ceil(2L / s)); its memory fields are the memory model's at that budget.
- With a PPO `critic` ("resident", "offloaded" or "reloaded"): no cell vouches (the tables measured the actor
  alone), so only estimates plan, the memory model counting the critic's states where they stay on the GPU and its
  own update's peak (`breakdown(..., critic=...)`), the tables still refuting; an offloaded or reloaded critic's
  states count in host memory, per trainer GPU what Offload keeps of the actor per parameter for each of the
  critic's parameters (the model's less its untied output projection, with a one-output value head).
- With a LoRA `lora_rank` (docs/memory.md, "LoRA"; on a dense model of Qwen3's layout or a Qwen3-MoE, `lora_counted`),
  an adapter of rank x (inputs + outputs) parameters per adapted matrix (``all-linear``'s seven a layer, the
  `lora_modules` named, or those whose full names a `lora_pattern` regex matches whole, less a `lora_exclude`'s; a
  Qwen3-MoE's all-linear its router and routed experts too, per transformers, `_adapter_tensors`; plans name the regex
  and are cautioned that Trinity saves it as its characters, or on a Qwen3-MoE that it cannot save the config): no
  reference model; a cell that trained vouches for it, ``inferred`` (the documented one too), and none refutes it; the
  states are the frozen base's 4 bytes a parameter and the adapter's 16 (the step's 20), the host memory the base's
  pinned fp32 parameters beside the adapter's pinned parameters and gradients and pageable moments, the load the
  adapter too; the rollout's vLLM keeps LoRA slots on every linear layer and the embeddings (`cluster_reference`).
- Host memory, per node of the trainer (rank 0's): at start-up the whole model in fp32 on the ranks that load it,
  beside the reference model's pinned shards (and with Offload the actor's pinned fp32 parameters); with Offload,
  while training, the pinned fp32 parameters and gradients, the reference model's shards and Adam's two moments;
  each pinned shard rounded up to a power of two; a run that builds no reference model (`reference_model` false)
  pins none of its shards. With a Trinity release (`trinity_version`, `Release`): 0.5.0 and
  0.5.1 load an untied model on rank 0 alone, 0.6 on rank 0 alone on a GPU of major compute capability 9 or more,
  else (0.5.2, 0.5 without its patch, none named) every rank; the reference model is bf16 under 0.5, fp32 otherwise;
  0.5's verl 0.7 places each tensor by its first dimension the GPUs divide; a mixture of experts' routed experts are
  laid out as the release's transformers holds them (0.5.1 separate, 0.5, 0.5.0 and 0.5.2 the larger of the two,
  else fused), on the GPUs and in host memory. 0.5.0 and 0.5.1 also need the trainer GPUs to divide a train batch,
  and under 0.5 without its patch a plan whose GPUs do not is cautioned.
- A plan with SP (s > 1) on a GPU type whose GPUs reach one another over PCIe is cautioned; the caution names SP 1 as
  what may train faster only where the same query, cheapest, with SP pinned to 1 at the plan's length has a plan,
  and else says that no plan without SP fits that length.

What it shares with the solver: the memory model's arithmetic (`solver.memory.breakdown`, with the shipped model's
coefficients or those of a `memory` model of one's own), for the memory figures and for whether an estimate fits (full
fine-tuning's: a LoRA run's adapter, states, step and host memory are counted here, `_lora_breakdown`); and
the words of a plan's cautions (`solver.results.Plan.with_cautions`),
which `check_plan` checks are given where they apply (YaRN past what is validated, Env on an AMD GPU). That arithmetic is checked on its own, by hand, in
tests/test_memory.py; here the question is whether the planner picks, ranks and reports plans by it.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, fields, replace
from fractions import Fraction
from typing import Any

from solver.memory import breakdown, margin_room
from solver.results import Plan
from solver.tables import Catalog, Setting, Table, Weights, load_memory_model, load_weights, shown_parameters

OBJECTIVES = ("cheapest", "min_gpus", "max_len", "min_gpu_hours")

PLAN_ORDER = (
    "gpus",
    "unused_gpus",
    "env",
    "offload",
    "sp",
    "max_model_len",
    "max_token_len_per_gpu",
    "lowered_budget",
    "token_budget_cap",
    "rope_scaling_factor",
    "yarn_beyond_validated",
    "past_validated_length",
    "cost",
    "evidence",
    "source",
    "memory_gb",
    "headroom_gb",
    "margin_gb",
    "headroom_at_step",
    "headroom_at_critic_pass",
    "critic_pass_gb",
    "host_memory_gb",
    "host_critic_gb",
    "host_training_gb",
    "reference_model",
    "lora_rank",
    "lora_target_modules",
    "lora_exclude_modules",
    "config_lora",
    "config_adapter",
    "dpo",
    "mode_train",
    "critic",
    "trinity_version",
    "expert_layout",
    "model_loading",
    "compute_capability",
    "experts_counted",
    "beyond_calibration",
    "beyond_calibration_codes",
    "trainer_nodes",
    "nodes",
    "rollout_gpus",
    "cautions",
    "caution_codes",
)
"""A plan's keys in the order the JSON gives them (docs/planner.md)."""
PLAN_KEYS = frozenset(PLAN_ORDER)


# --- the definitions, one small function each ------------------------------------------------------------


def held_per_active(model: Any) -> Fraction:
    """r: the parameters `model` holds per parameter a token's compute passes through, as an exact fraction (every
    one where transformers' class runs every expert for every token: Llama 4)."""
    if model.moe is None or model.moe.computes_every_expert:
        return Fraction(1)
    held = Fraction(repr(model.parameters_b)) * 10**9
    expert_layers = model.num_layers - model.moe.dense_layers
    untaken_experts = model.moe.experts - model.moe.active_experts
    untaken = expert_layers * untaken_experts * 3 * model.hidden_size * model.moe.moe_intermediate_size
    return held / (held - untaken)


@functools.cache  # pure: the same costs are asked for by every enumeration
def exact_cost(weights: Weights, model: Any, gpu: Any, n: int, env: bool, offload: bool, sp: int,
               critic: str | None = None) -> Fraction:
    """cost = (1/n) * (1 + w_off*r*o + c) * (1 + w_sp*p*(s-1)) * (1 + w_env*e), as an exact fraction, with p the
    weights' sp_pcie_factor where `gpu`'s GPUs reach one another over PCIe alone (its interconnect ``pcie``), else 1,
    r = 1 for every model where the weights turn Offload's scaling off, and c a PPO `critic`'s work: 0 without one,
    else w_critic * (1 + w_off*r*h), h 1 for a critic whose states are in host memory ("offloaded", "reloaded")."""
    w_off = Fraction(repr(weights.offload))
    w_sp = Fraction(repr(weights.sp))
    if gpu.interconnect == "pcie":
        w_sp *= Fraction(repr(weights.sp_pcie_factor))
    w_env = Fraction(repr(weights.env))
    o = 1 if offload else 0
    e = 1 if env else 0
    r = held_per_active(model) if weights.offload_moe_scaling else Fraction(1)
    c = Fraction(0)
    if critic is not None:
        h = 1 if critic in ("offloaded", "reloaded") else 0
        c = Fraction(repr(weights.critic)) * (1 + w_off * r * h)
    return Fraction(1, n) * (1 + w_off * r * o + c) * (1 + w_sp * (sp - 1)) * (1 + w_env * e)


@dataclass(frozen=True)
class Release:
    """The Trinity release a plan is counted for (`name`: 0.5, 0.5.0, 0.5.1, 0.5.2, 0.6 or 0.6.0; None: none named),
    and what its counts depend on, written from docs/memory.md ("Which ranks load the model", "Host memory", a
    mixture of experts' layouts) and docs/json.md (`batch-divides-trainer-gpus`)."""

    name: str | None = None

    @staticmethod
    def named(value: str | None) -> Release:
        """The release `value` names (a leading ``v`` dropped: ``v0.5.2`` is 0.5.2); ValueError for another."""
        name = None if value is None else value.strip().removeprefix("v").removeprefix("V")
        if name not in (None, *TRINITY_RELEASES):
            raise ValueError(f"unknown Trinity release {value!r}; the reference knows {', '.join(TRINITY_RELEASES)}")
        return Release(name)

    @property
    def minor(self) -> str | None:
        """The minor version whose rules the release takes (0.5 or 0.6; None: none named)."""
        return None if self.name is None else self.name[:3]

    def loads_on_rank_0(self, model: Any, compute_capability: str | None) -> bool:
        """Whether rank 0 alone of a node builds the whole model in host memory at start-up (else every rank does):
        verl's own rule under 0.5.0 and 0.5.1, rank 0 for an untied model; never under 0.5.2 (every rank, tied or
        not); under 0.6 with FSDP2 (the reference's plans, Offload's or 0.6's default strategy) where the GPU's major
        compute capability is 9 or more; never with no release named or 0.5 without its patch (the most any
        release loads)."""
        if self.name in ("0.5.0", "0.5.1"):
            return not model.tied_embeddings
        if self.minor == "0.6":
            return compute_capability is not None and int(compute_capability.split(".")[0]) >= 9
        return False

    @property
    def reference_bytes(self) -> int:
        """Bytes per value of the reference model's pinned shards: bf16 under 0.5 (verl 0.7's workers), fp32 under
        0.6 and with no release named (0.6's engine, `model_dtype: fp32`)."""
        return 2 if self.minor == "0.5" else 4

    @property
    def placed(self) -> bool:
        """Whether FSDP2 shards each tensor as verl 0.7 places it (its first dimension the GPUs divide, else by rows,
        padded): every 0.5 release; 0.6 and none named are counted by rows, the larger blocks."""
        return self.minor == "0.5"

    @property
    def expert_layout(self) -> str:
        """How the release's transformers holds a mixture of experts' routed experts: ``separate`` under 0.5.1
        (transformers 4 alone), ``either`` under 0.5, 0.5.0 and 0.5.2 (4 or 5: the larger of the two is counted),
        else ``fused`` (transformers 5's 3-D tensors)."""
        if self.name == "0.5.1":
            return "separate"
        return "either" if self.minor == "0.5" else "fused"

    @property
    def gpus_divide_batch(self) -> bool:
        """Whether the release refuses a train batch the trainer GPUs do not divide (0.5.0 and 0.5.1)."""
        return self.name in ("0.5.0", "0.5.1")

    @property
    def batch_divisor(self) -> str:
        """What must divide the train batch, as plans' cautions take it: the trainer GPUs (``gpus``: 0.5.0, 0.5.1),
        perhaps they (``unsure``: 0.5 without its patch, whose 0.5.0 and 0.5.1 would refuse it), else the
        data-parallel ranks alone (``ranks``)."""
        return "gpus" if self.gpus_divide_batch else "unsure" if self.name == "0.5" else "ranks"


TRINITY_RELEASES = ("0.5", "0.5.0", "0.5.1", "0.5.2", "0.6", "0.6.0")
"""The Trinity releases whose rules the reference counts (`Release`)."""
NO_RELEASE = Release()
"""No release named: every rank loading the model, 0.6's fp32 reference model and blocks by rows."""


def _padded(model: Any) -> bool:
    """Whether `model` trains one padded sequence per micro-batch: it runs its checkpoint's own attention code
    (``ulysses_unreached``), which verl's remove padding would let attend across the sequences it packs into a row, so
    its plans turn remove padding off, and dynamic batch sizes with it, leaving the token budget unread; the memory
    model then counts ``max_model_len`` tokens per GPU at SP 1, two for DPO (docs/memory.md, "A model the catalogue
    lacks"; docs/json.md, ``padded-micro-batches``)."""
    return model.ulysses_unreached is not None


def _counted_tokens(model: Any, length: int, sp: int, budget: int, dpo: bool) -> int:
    """The tokens per GPU the memory model counts, which the calibration range is weighed against: the plan's token
    `budget`, but for a model trained one padded sequence per micro-batch (`_padded`), which reads none, that sequence
    at SP `sp` (a DPO pair of them for `dpo`)."""
    return (2 if dpo else 1) * -(-length // sp) if _padded(model) else budget


def _sp_rule_problems(model: Any, n: int, sp: int) -> list[str]:
    problems = []
    if sp < 1:
        problems.append(f"SP={sp} is below 1")
        return problems
    if sp > 1 and model.ulysses_unreached is not None:  # verl's Ulysses patch does not reach its own attention
        problems.append(f"SP={sp}, but {model.name}'s own attention code takes SP 1 alone")
    if n % sp != 0:
        problems.append(f"SP={sp} does not divide the {n} trainer GPUs")
    heads = model.num_attention_heads
    kv = model.num_key_value_heads
    if heads % sp != 0:
        problems.append(f"SP={sp} does not divide {model.name}'s {heads} attention heads")
    if kv % sp != 0 and sp % kv != 0:
        problems.append(f"SP={sp} and {model.name}'s {kv} KV heads: neither divides the other")
    return problems


def _batch_problem(train_batch_size: int | None, n: int, sp: int, release: Release = NO_RELEASE,
                   dpo: bool = False) -> list[str]:
    """A train batch that n GPUs at SP sp cannot split evenly over their n / sp data-parallel ranks (for `dpo`, in
    pairs: twice the ranks, as each rank's share takes whole micro-batches of one pair, a chosen and a rejected
    sequence, on every release), or under a `release` that needs it (0.5.0, 0.5.1) over the n GPUs themselves."""
    ranks = n // sp * (2 if dpo else 1)
    if train_batch_size is not None and n % sp == 0 and train_batch_size % ranks != 0:
        return [(f"{n} GPUs at SP={sp} make {n // sp} data-parallel ranks, {'twice which' if dpo else 'which'} do "
                 f"not divide the train batch of {train_batch_size}")]
    if train_batch_size is not None and release.gpus_divide_batch and train_batch_size % n != 0:
        return [f"{n} GPUs do not divide the train batch of {train_batch_size}, which Trinity {release.name} refuses"]
    return []


def _node_problem(n: int, sp: int, node_gpus: int) -> list[str]:
    problems = []
    if n > node_gpus and n % node_gpus != 0:
        problems.append(f"{n} GPUs exceed a node of {node_gpus} but are not whole nodes")
    if n > node_gpus and node_gpus % sp != 0:
        problems.append(f"SP={sp} spans nodes: {n} GPUs exceed a node of {node_gpus} and SP does not divide it")
    return problems


def _host_ram_problem(model: Any, n: int, node_gpus: int, host_ram_gb: float | None, offload: bool,
                      critic: str | None = None, release: Release = NO_RELEASE,
                      compute_capability: str | None = None, reference_model: bool = True,
                      adapter: Adapter | None = None) -> list[str]:
    """With --host-ram: every plan loads the model into host memory at start-up (`_load_need`); Offload keeps the
    states there too, each node its trainer GPUs' share (`_host_need`), and so does an offloaded or reloaded PPO
    `critic` its own, each as the Trinity `release` counts it on a GPU of `compute_capability`, with the reference
    model's shards where the run builds one (`reference_model`), for a LoRA run of `adapter` its adapter besides the
    frozen base (`_host_moments`); more than `host_ram_gb`, the need rounded up to a
    tenth of a GiB as plans give it, does not fit."""
    if host_ram_gb is None:
        return []
    if not offload:
        need = _up_to_a_tenth(_load_need(model, n, node_gpus, critic, release, compute_capability, reference_model,
                                         adapter))
        problem = f"loading the model needs {need:.1f} GiB of host memory per node, more than --host-ram"
        return [f"{problem} {host_ram_gb:g}"] if need > host_ram_gb else []
    need = _up_to_a_tenth(_host_need(model, n, node_gpus, critic, release, compute_capability, reference_model,
                                     adapter))
    return [f"Offload needs {need:.1f} GiB of host memory per node, more than --host-ram {host_ram_gb:g}"] \
        if need > host_ram_gb else []


def _rollout_problem(n: int, rollout_gpus: int, node_gpus: int) -> list[str]:
    """Rollout GPUs beside the trainer: both in one node, the trainer in one node and both filling whole
    nodes, or the trainer on whole nodes."""
    fills_nodes = n < node_gpus and (n + rollout_gpus) % node_gpus == 0  # trainer in one node, rollout the rest
    if rollout_gpus and n + rollout_gpus > node_gpus and n % node_gpus != 0 and not fills_nodes:
        return [f"{n} trainer + {rollout_gpus} rollout GPUs fit neither one node of {node_gpus} nor whole nodes"]
    return []


def _trainer_nodes(n: int, node_gpus: int) -> int:
    """The nodes n trainer GPUs run on: one node, or the whole nodes they take."""
    return 1 if n <= node_gpus else n // node_gpus


def _layout(n: int, rollout_gpus: int | None, node_gpus: int) -> dict[str, int | None]:
    """The plan's nodes and rollout GPUs with `rollout_gpus` rollout GPUs beside n trainer GPUs."""
    if rollout_gpus is None:
        return {"nodes": None, "rollout_gpus": None}
    if n + rollout_gpus <= node_gpus:
        return {"nodes": 1, "rollout_gpus": rollout_gpus}
    if n < node_gpus and (n + rollout_gpus) % node_gpus == 0:
        return {"nodes": (n + rollout_gpus) // node_gpus, "rollout_gpus": rollout_gpus}
    rollout_nodes = -(-rollout_gpus // node_gpus)
    return {"nodes": n // node_gpus + rollout_nodes, "rollout_gpus": rollout_nodes * node_gpus}


def _estimated_counts(documented: Any, budget_gpus: int, node_gpus: int) -> list[int]:
    """GPU counts without a table the memory model estimates for: within a node, then whole nodes, to 64."""
    most = min(budget_gpus, 64)
    counts = [n for n in range(1, most + 1) if n <= node_gpus or n % node_gpus == 0]
    return [n for n in counts if n not in documented]


def _memory_model(memory: Any | None) -> Any:
    """The memory model the estimates are made with: `memory`, one of one's own (``--memory-model``, a calibrated
    file), else the shipped one."""
    return load_memory_model() if memory is None else memory


def _estimate_margin(memory_gib: float, margin: float | None = None, memory: Any | None = None) -> float:
    """The margin the memory model's estimates (`memory`, None: the shipped one's) on a card of `memory_gib` are
    held to: `margin` where given, else its own, and on a card of at most 48 GiB a GiB of its usable memory (the lesser
    fraction) more, rounded up to a hundredth (docs/memory.md, "Choosing a margin")."""
    memory = _memory_model(memory)
    if margin is not None:
        return margin
    if memory_gib > 48:
        return memory.margin
    usable = memory_gib * min(memory.coefficients.usable, memory.coefficients.usable_env)
    return math.ceil(round((memory.margin + 1.0 / usable) * 100, 9)) / 100


@functools.cache
def _longest_estimate(the_model: Any, memory_gib: float, n: int, env: bool, offload: bool, sp: int,
                      env_pinned_off: bool, margin: float | None = None, critic: str | None = None,
                      experts: str = "fused", dpo: bool = False, memory: Any | None = None,
                      adapter: Adapter | None = None) -> int:
    """The longest length (up to 2**21 tokens) at which the memory model (`memory`, None: the shipped one), with its
    margin, fits this
    setting (with a PPO `critic` beside the actor: its states where they stay on the GPU, and its own update's peak;
    a mixture of experts' routed experts laid out as `experts`, `Release.expert_layout`; for `dpo` a model trained one
    padded sequence per micro-batch counts a pair of them, `_padded`; a LoRA run of `adapter`, `_lora_breakdown`);
    0 when not even 1 token does, or the setting is not estimated (Env off, unless pinned off).
    Memory grows with the length (a tested property), so a bisection finds it."""
    memory = _memory_model(memory)
    if not env and not env_pinned_off:
        return 0  # estimates turn Env on unless it is pinned off

    def fits(length: int) -> bool:
        return _breakdown(the_model, memory_gib, n, Setting(env=env, offload=offload, sp=sp), length,
                          memory.coefficients, _estimate_margin(memory_gib, margin, memory), critic=critic,
                          experts=experts, dpo=dpo, adapter=adapter).fits

    if not fits(1):
        return 0
    low, high = 1, 1 << 21
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if fits(middle) else (low, middle - 1)
    return low


def _estimated_tokens(tables: list[dict[int, Table]], the_model: Any, memory_gib: float, n: int, env: bool,
                      offload: bool, sp: int, env_pinned_off: bool, margin: float | None = None,
                      critic: str | None = None, experts: str = "fused", dpo: bool = False,
                      memory: Any | None = None, adapter: Adapter | None = None) -> int:
    """Tc: the tokens per GPU of Trinity's default budget at Lc, the longest length estimated for the setting
    (the memory model's longest, no longer than the last row of each refuting table, `_tables_asked`,
    that does not say the setting ran out of memory); one fewer where a refuting table says the setting ran out of
    memory at the longest length that takes Tc, floor(Tc x s / 2) (cells that contradict themselves); 0 when
    nothing is estimated."""
    longest = _longest_estimate(the_model, memory_gib, n, bool(env), bool(offload), sp, env_pinned_off, margin, critic,
                                experts, dpo, memory, adapter)
    asked = _tables_asked(tables, n, bool(offload))
    for table, asked_offload in asked:
        if _ran_out_of_memory(table, the_model, bool(env), asked_offload, sp, longest):
            standing = [row.max_model_len for row in table.rows
                        if not _ran_out_of_memory(table, the_model, bool(env), asked_offload, sp, row.max_model_len)]
            longest = min(longest, max(standing, default=0))
    tokens = _max_token_len_per_gpu(longest, sp)
    refuted = longest > 0 and any(_ran_out_of_memory(table, the_model, bool(env), asked_offload, sp, tokens * sp // 2)
                                  for table, asked_offload in asked)
    return tokens - 1 if refuted else tokens


def _tables_asked(tables: list[dict[int, Table]], n: int, offload: bool) -> list[tuple[Table, bool]]:
    """(table, Offload to ask it of) for every table of the GPU type and of those with at least its memory
    (`tables`, one `_tables_with_model` each): a table for n GPUs or more is asked of the setting (what runs out
    of memory on more GPUs does on fewer: each holds more of the states, and the same tokens; and what runs out
    with more memory does with less), one for fewer GPUs of the setting with Offload (no GPU holds any of the
    states then, so each holds the same whatever the count, and without Offload it holds them besides)."""
    return [(table, offload or count < n) for of_type in tables for count, table in sorted(of_type.items())]


def _table_stop(tables: list[dict[int, Table]], the_model: Any, memory_gib: float, n: int, env: bool, offload: bool,
                sp: int, env_pinned_off: bool, margin: float | None = None, critic: str | None = None,
                experts: str = "fused", dpo: bool = False, memory: Any | None = None,
                adapter: Adapter | None = None) -> int | None:
    """Where a refuting table stops the setting's estimate short of the memory model's longest: the longest L that
    `_estimated` holds at, when it does not hold at the memory model's longest; None otherwise (or when no length is
    estimated). A bisection: a length that a table says ran out of memory, so does every longer one."""
    longest = _longest_estimate(the_model, memory_gib, n, bool(env), bool(offload), sp, env_pinned_off, margin, critic,
                                experts, dpo, memory, adapter)
    if not longest or _estimated(tables, the_model, memory_gib, n, env, offload, sp, longest, env_pinned_off, margin,
                                 critic, experts, dpo, memory, adapter):
        return None
    low, high = 0, longest  # estimated at low (0: none), not at high
    while high - low > 1:
        middle = (low + high) // 2
        estimated = _estimated(tables, the_model, memory_gib, n, env, offload, sp, middle, env_pinned_off, margin,
                               critic, experts, dpo, memory, adapter)
        low, high = (middle, high) if estimated else (low, middle)
    return low or None


def _lowered_budget(length: int, sp: int, most_tokens: int) -> int | None:
    """The token budget of an estimated plan under token_budget="auto" at a length L that the estimate does not
    vouch for at Trinity's default (`_estimated` does not hold): at most Tc (`most_tokens`) and below ceil(2L / s),
    the default that did not fit or a table says ran out of memory, rounded down to a multiple of 1024, but at least
    ceil(L / s); None when that least is more."""
    most = min(most_tokens, _max_token_len_per_gpu(length, sp) - 1)
    least = -(-length // sp)
    return None if least > most else max(least, most // 1024 * 1024)


def _estimated(tables: list[dict[int, Table]], the_model: Any, memory_gib: float, n: int, env: bool, offload: bool,
               sp: int, length: int, env_pinned_off: bool, margin: float | None = None,
               critic: str | None = None, experts: str = "fused", dpo: bool = False,
               memory: Any | None = None, adapter: Adapter | None = None) -> bool:
    """Whether the memory model vouches for the setting on n GPUs at L (with a PPO `critic`, its states and update
    counted): it fits, and no refuting table (`_tables_asked`) says the setting ran out of memory at L (the tables
    measured the actor alone: what ran out of memory without a critic does with one)."""
    return (length <= _longest_estimate(the_model, memory_gib, n, bool(env), bool(offload), sp, env_pinned_off,
                                        margin, critic, experts, dpo, memory, adapter)
            and not any(_ran_out_of_memory(table, the_model, bool(env), asked_offload, sp, length)
                        for table, asked_offload in _tables_asked(tables, n, bool(offload))))


def _cell_column(table: Table, model: Any) -> str:
    """The model's column in one of the tables `_tables_with_model` chose: its own where the table has one,
    else that of the tabled model of its shape it names (tables_of)."""
    return model.name if model.name in table.models else model.tables_of


def _tables_with_model(gpu_type: Any, model: Any) -> dict[int, Table]:
    """The documented tables of the GPU type that have a column for the model, or for the tabled model of its
    shape it names, by trainer GPU count."""
    return {table.gpus: table for table in gpu_type.tables
            if model.name in table.models or (model.tables_of is not None and model.tables_of in table.models)}


def _own_tables(catalog: Catalog, gpu_type: Any, model: Any) -> tuple[dict[int, Table], dict[int, str]]:
    """The tables with the model that are the GPU type's own (`_tables_with_model`), and for every GPU count
    without one, the first such table for that count of another GPU type with tables and the same
    driver-reported memory (where that is known), in the catalogue's order; and, by count, the GPU type of each
    table so borrowed."""
    tables, origins = _tables_with_model(gpu_type, model), {}
    for other in catalog.gpu_types:
        if gpu_type.memory_mib is not None and other.name != gpu_type.name and other.memory_mib == gpu_type.memory_mib:
            for count, table in _tables_with_model(other, model).items():
                if count not in tables:
                    tables[count], origins[count] = table, other.name
    return tables, origins


def _refuting_tables(catalog: Catalog, gpu_type: Any, model: Any) -> list[dict[int, Table]]:
    """`_own_tables` of the GPU type, then `_tables_with_model` of every other GPU type with tables and at least
    its memory."""
    return [_own_tables(catalog, gpu_type, model)[0], *(
        _tables_with_model(other, model) for other in catalog.gpu_types
        if other.tables and other.name != gpu_type.name and other.memory_gib >= gpu_type.memory_gib)]


def _cited(source: dict, catalog: Catalog, gpu_type: Any, model: Any) -> dict:
    """A source cell as a plan cites it: naming its table's GPU type where that table is borrowed, and its
    table's own source where it has one (measured cells, not the source document)."""
    tables, origins = _own_tables(catalog, gpu_type, model)
    table = tables.get(source["gpus"])
    measured = {"table_source": table.source} if table is not None and table.source is not None else {}
    return {**source, **measured, **({"gpu": origins[source["gpus"]]} if source["gpus"] in origins else {})}


def _row_for_length(table: Table, length: int) -> Any | None:
    """row(L): the shortest row with max_model_len >= L, None when L is beyond the last row."""
    for row in table.rows:  # rows increase (the loader checks)
        if row.max_model_len >= length:
            return row
    return None


def _includes(env: bool, offload: bool, sp: int, cell: Setting) -> bool:
    """Whether the plan's setting includes the cell's: each switch at least as strong."""
    return int(env) >= int(cell.env) and int(offload) >= int(cell.offload) and sp >= cell.sp


# The source's order of settings (its section 1): vanilla, Env, SP=2, Env + SP=2, SP=4, Env + SP=4, then Env +
# Offload with SP 1, 2 and 4. A table of more GPUs (cells of a user's) goes on in the same pattern, as
# docs/memory.md says: every SP degree the GPUs and the heads allow, without and then with Env, then Env + Offload
# with each; SP groups inside a node of 8 where the GPUs span nodes.
SOURCE_NODE_GPUS = 8


def _source_order(model: Any, n: int) -> list[tuple[bool, bool, int]]:
    """The settings (Env, Offload, SP) the source tries on `n` GPUs, in its order."""
    degrees = [s for s in range(1, n + 1)
               if not _sp_rule_problems(model, n, s) and not (n > SOURCE_NODE_GPUS and SOURCE_NODE_GPUS % s)]
    return [(env, False, s) for s in degrees for env in (False, True)] + [(True, True, s) for s in degrees]


_ROWS_SAYING_SO: dict[tuple[int, int, bool, bool, int], tuple[Table, Any, tuple[bool, ...]]] = {}
"""`_rows_saying_so`'s answers by the ids of the table and the model, and the switches; each kept with its table and
model, so that neither id names another object while it is kept."""


def _rows_saying_so(table: Table, model: Any, env: bool, offload: bool, sp: int) -> tuple[bool, ...]:
    """For each row of `table`, whether it says the setting ran out of memory: a setting the source tried before the
    row's cell (every one it tried, at a `-`) is at least as strong in Env, Offload and SP. Worked out once per table,
    model and setting: the estimates ask it of many lengths (a bisection each)."""
    key = (id(table), id(model), env, offload, sp)
    if key not in _ROWS_SAYING_SO:
        tried = _source_order(model, table.gpus)

        def says_so(row: Any) -> bool:
            cell = row.setting(_cell_column(table, model))
            setting = None if cell is None else (cell.env, cell.offload, cell.sp)
            failed = tried if setting is None else tried[: tried.index(setting)] if setting in tried else []
            return any(e >= env and o >= offload and s >= sp for e, o, s in failed)

        _ROWS_SAYING_SO[key] = (table, model, tuple(says_so(row) for row in table.rows))
    return _ROWS_SAYING_SO[key][2]


def _ran_out_of_memory(table: Table, model: Any, env: bool, offload: bool, sp: int, length: int) -> bool:
    """Whether `table` (for its own GPU count) says the setting runs out of memory at `length`: at some
    row up to row(L) (every row when L is past the table), a setting the source tried before the cell's
    (every one it tried, at a `-`) is at least as strong in Env, Offload and SP (`_rows_saying_so`); unless no row up
    to L itself says so and a row shorter than L takes as many tokens per GPU at Trinity's default, ceil(2 x row / sp),
    as L does (the memory follows the tokens: at SP=4, 30002 takes 15001, as 30001 does)."""
    said = zip(table.rows, _rows_saying_so(table, model, env, offload, sp), strict=True)
    last = _row_for_length(table, length) or table.rows[-1]
    saying = [row.max_model_len for row, says_so in said if says_so and row.max_model_len <= last.max_model_len]
    if not saying:
        return False
    if any(row_length <= length for row_length in saying):
        return True
    return not any(_max_token_len_per_gpu(row.max_model_len, sp) >= _max_token_len_per_gpu(length, sp)
                   for row in table.rows if row.max_model_len < length)


def _evidence(tables: dict[int, Table], model: Any, n: int, env: bool, offload: bool, sp: int,
              length: int, larger: list[dict[int, Table]] = (), lora: bool = False) -> tuple[str, dict] | None:
    """("documented" | "inferred", source) for the plan on `n` GPUs, or None when no cell vouches for it.

    Documented: the cell at row(L) of the n-GPU table is exactly the plan's setting. Inferred: the first
    row >= L whose cell the plan includes, in the n-GPU table, else in the table of the most GPUs below n
    (two or more; n at most 64) that has one (what trains on fewer GPUs trains on more: the states shard
    wider and, with SP at least the cell's, the tokens per GPU are no more) and whose setting no n-GPU table, of
    the GPU type or of one with at least its memory (`larger`), says runs out of memory at L. For a `lora` run,
    which holds less than the full fine-tuning the cells measured, a cell that trained infers it (the documented one
    too) and none that ran out of memory says anything of it.
    """
    own = tables.get(n)
    row = _row_for_length(own, length) if own is not None else None
    cell = row.setting(_cell_column(own, model)) if row is not None else None
    if not lora and row is not None and cell is not None and \
            (cell.env, cell.offload, cell.sp) == (bool(env), bool(offload), sp):
        return "documented", {"model": _cell_column(own, model), "gpus": n, "max_model_len": row.max_model_len,
                              "setting": cell.label}
    for count in sorted((m for m in tables if m == n or 2 <= m < n <= 64), reverse=True):
        for candidate in tables[count].rows:  # shortest first: the first row >= L whose cell the plan includes
            if candidate.max_model_len < length:
                continue
            cell = candidate.setting(_cell_column(tables[count], model))
            if cell is None or not _includes(env, offload, sp, cell):
                continue
            if count != n and not lora and any(_ran_out_of_memory(table, model, cell.env, cell.offload, cell.sp, length)
                                               for table in (own, *(other.get(n) for other in larger)) if table is not None):
                continue  # an n-GPU table (this GPU type's, or one with more memory) says it ran out of memory at L
            return "inferred", {"model": _cell_column(tables[count], model), "gpus": count,
                                "max_model_len": candidate.max_model_len, "setting": cell.label}
    return None


NO_YARN_MODEL_TYPES = ("phi3", "phimoe")
"""The ``model_type``s advised no YaRN (docs/memory.md: their long-context checkpoints reach past the native context by
LongRoPE's per-dimension factors, which no one factor gives): past it, no YaRN is written (``past-native-no-yarn``)."""


def _rope_scaling_factor(model: Any, length: int) -> float | None:
    """YaRN beyond the native context, unless the model has a RoPE scaling of its own (Llama 3.1's) or is of a type
    advised no YaRN (`NO_YARN_MODEL_TYPES`)."""
    if length > model.native_context and model.rope_scaling is None and model.model_type not in NO_YARN_MODEL_TYPES:
        return length / model.native_context
    return None


def _yarn_beyond_validated(model: Any, length: int) -> bool:
    """Any YaRN for a model Qwen's model cards do not speak for; for one they do, a factor above 4 or more than
    131072 tokens."""
    factor = _rope_scaling_factor(model, length)
    return factor is not None and (not model.qwen_yarn or factor > 4 or length > 131072)


def _past_validated_length(model: Any, length: int) -> int | None:
    """The longest context a model is known to handle, where `length` is past it: for a Qwen model on YaRN, 4 times
    its native context, at most 131072 tokens (never below the native context); for another, or one on its own
    RoPE scaling, its native context. None within it."""
    native = model.native_context
    yarn = model.rope_scaling is None and model.qwen_yarn
    validated = max(native, min(4 * native, 131072)) if yarn else native
    return validated if length > validated else None


def _max_token_len_per_gpu(length: int, sp: int) -> int:
    return -(-2 * length // sp)  # ceil(2L / s) in integers


def _settings_on(env: bool, offload: bool, sp: int) -> int:
    return int(env) + int(offload) + (1 if sp > 1 else 0)


def rank_key(objective: str, n: int, env: bool, offload: bool, sp: int, length: int, cost: Fraction) -> tuple:
    tail = (_settings_on(env, offload, sp), sp, int(env), int(offload))
    if objective == "cheapest":
        return (cost, n, *tail)
    if objective == "min_gpus":
        return (n, cost, *tail)
    if objective == "min_gpu_hours":  # GPU-hours, n x cost: the same on every n for one setting, so fewer GPUs next
        return (n * cost, n, *tail)
    if objective == "max_len":
        return (-length, cost, n, *tail)
    raise ValueError(f"unknown objective {objective!r}; accepted: {', '.join(OBJECTIVES)}")


def _pinned_values(pin: Any | None, free: list) -> list:
    return free if pin is None else [pin]


def _assumed_host_gib(query: Query, gpu_type: Any, n: int) -> float | None:
    """The host memory a node of `n` trainer GPUs of `gpu_type` is assumed to have where `query` gives none (None where
    it does): a workstation card's for the whole box, else 128 GiB per GPU of the node where its size is the caller's
    (`Query.host_node_gpus`), or per trainer GPU on it."""
    if query.host_ram_gb is not None:
        return None
    if gpu_type.workstation_host_ram_gib is not None:
        return float(gpu_type.workstation_host_ram_gib)
    return 128.0 * (query.host_node_gpus or min(n, query.node_gpus))


def _memory(catalog: Catalog, memory_gib: float, model: Any, n: int, env: bool, offload: bool, sp: int,
            length: int, node_gpus: int, tokens: int | None, host_ram_gb: float | None,
            estimated: bool, margin: float | None = None, critic: str | None = None, release: Release = NO_RELEASE,
            compute_capability: str | None = None, reference_model: bool = True,
            dpo: bool = False, memory: Any | None = None,
            assumed_host_gib: float | None = None, adapter: Adapter | None = None) -> dict[str, float | str | None]:
    """The plan's predicted peak memory and headroom (whole: `_rounded_figures` as the JSON gives them), from the
    memory model (`memory`, None: the shipped one; not the tables), with a PPO `critic` beside the actor where one is
    counted; the host memory a node of `node_gpus` needs: with Offload (`_host_need`), or with `host_ram_gb` given, a
    critic held in host memory or (s88) a need past what the node is assumed to have (`assumed_host_gib`, where no
    host memory is given: `_assumed_host_gib`) (`_load_need`). An `estimated` plan's at the margin estimates there
    are held to; a documented or inferred plan's at `margin` where given, else the memory model's own (docs/memory.md,
    "Choosing a margin": its `memory` line is figured at --margin). Each as the Trinity
    `release` counts it on a GPU of `compute_capability` (`Release`), with the reference model's shards where the run
    builds one (`reference_model`); a run that trains DPO (`dpo`: `Query.dpo`) says so, its figures the same unless the
    model trains one padded sequence per micro-batch (`_padded`: a pair counted); a LoRA run of `adapter` (None: full
    fine-tuning) counted as `_lora_breakdown` and `_host_moments` count it."""
    memory = _memory_model(memory)
    held_to = (_estimate_margin(memory_gib, margin, memory) if estimated
               else memory.margin if margin is None else margin)
    result = _breakdown(model, memory_gib, n, Setting(env=bool(env), offload=bool(offload), sp=sp), length,
                        memory.coefficients, held_to, tokens, critic=critic, dpo=dpo, experts=release.expert_layout,
                        adapter=adapter)
    held = critic in ("offloaded", "reloaded")
    # What the margin keeps: its share of the memory the tightest peak may take (the step's 98%, or the usable
    # fraction).
    share = 0.98 if result.step_binds else memory.coefficients.usable_env if env else memory.coefficients.usable
    counted = (model, n, node_gpus, critic, release, compute_capability, reference_model, adapter)
    return {"memory_gb": result.total_gib, "headroom_gb": result.headroom_gib,
            "margin_gb": held_to * share * memory_gib,
            "headroom_at_step": result.step_binds,
            "headroom_at_critic_pass": result.critic_pass_binds,
            "critic_pass_gb": None if critic is None else result.critic_pass_gib,
            "host_memory_gb": _up_to_a_tenth(_host_need(*counted)) if offload
            else _up_to_a_tenth(_load_need(*counted)) if host_ram_gb is not None or held or (
                assumed_host_gib is not None and _up_to_a_tenth(_load_need(*counted)) > assumed_host_gib) else None,
            "host_critic_gb": _held_critic(model, n, critic, release) * min(n, node_gpus) / 2**30 if held else None,
            "host_training_gb": _training_below_load(*counted, offload=bool(offload)),
            "reference_model": reference_model,  # whether the needs count the reference model's shards
            "lora_rank": 0 if adapter is None else adapter.rank,  # 0: full fine-tuning's states
            "lora_target_modules": None if adapter is None else adapter.target_modules or (  # named beside an exclusion
                None if adapter.exclude is None else "all-linear"),
            "lora_exclude_modules": None if adapter is None else adapter.exclude,
            "config_lora": False,  # no config's adapter
            "config_adapter": None,  # no config's
            "dpo": dpo, "mode_train": False,  # no config's mode
            "critic": critic,
            "trinity_version": release.name, "expert_layout": release.expert_layout,
            "model_loading": "rank-0" if release.loads_on_rank_0(model, compute_capability) else "every-rank",
            "experts_counted": None if model.moe is None else EXPERTS_COUNTED[release.expert_layout]}


EXPERTS_COUNTED = {
    "fused": "routed experts counted whole, as transformers 5 holds them",
    "separate": "routed experts counted separate, as Trinity 0.5.1's transformers 4 holds them",
    "either": ("routed experts counted at the larger of Trinity 0.5's two layouts, 3-D as transformers 5 holds them "
               "or separate as transformers 4 does, each as verl 0.7 places it"),
}
"""How a plan says a Qwen3 mixture of experts' routed experts were counted, by `Release.expert_layout`
(docs/memory.md, "Calibration": what the estimates say)."""


def _up_to_a_tenth(gib: float) -> float:
    """A host need as plans give it: rounded up to a tenth of a GiB (so that it holds the need)."""
    return math.ceil(round(gib * 10, 6)) / 10


@functools.cache  # a pure function of its arguments, asked about the same plans again and again
def _pinned(model: Any, n: int, bytes_per_value: int = 4, placed: bool = False, experts: str = "fused") -> float:
    """Bytes one GPU of `n` pins for a copy of the model's weights, `bytes_per_value` a value: each weight tensor's
    shard rounded up to a power of two, scaled to the model's own parameter count. A shard is the tensor's rows split
    over the `n` GPUs, rounded up; where `placed` (verl 0.7's placement, `Release.placed`), its values split evenly
    where the GPUs divide one of its dimensions. A mixture of experts' routed experts laid out as `experts`: ``fused``
    (transformers 5's two 3-D tensors a layer, a row per expert), ``separate`` (transformers 4's three matrices an
    expert) or ``either`` (the layout that pins more); beside them in each expert layer its shared expert's three
    matrices and their gate (Qwen2-MoE's one row; Llama 4's shared expert has none), where it has them; its dense
    layers (the first `dense_layers`, or `dense_layer_indices`) a dense MLP `dense_intermediate_size` wide. Written
    out tensor by tensor, by name."""
    if experts == "either":
        return max(_pinned(model, n, bytes_per_value, placed, layout) for layout in ("fused", "separate"))
    h, d, layers = model.hidden_size, model.head_size, model.num_layers
    tensors = {"embed_tokens": [((model.vocab_size, h), 1)], "norm": [((h, 1), 1)]}  # (dimensions, how many)
    if not model.tied_embeddings:
        tensors["lm_head"] = [((model.vocab_size, h), 1)]
    moe = model.moe
    dense = set() if moe is None else set(moe.dense_layer_indices or range(moe.dense_layers))
    for layer in range(layers):
        weights = [((model.num_attention_heads * d, h), 1), ((model.num_key_value_heads * d, h), 2),
                   ((h, model.num_attention_heads * d), 1), ((h, 1), 2), ((d, 1), 2)]
        if moe is None or layer in dense:  # gate_proj and up_proj, then down_proj
            mlp = model.intermediate_size if moe is None else moe.dense_intermediate_size
            weights += [((mlp, h), 2), ((h, mlp), 1)]
        elif experts == "fused":  # the router, then gate_up_proj and down_proj
            width = model.moe.moe_intermediate_size
            weights += [((model.moe.experts, h), 1), ((model.moe.experts, 2 * width, h), 1),
                        ((model.moe.experts, h, width), 1)]
        else:  # the router, then each expert's gate_proj, up_proj and down_proj
            width = model.moe.moe_intermediate_size
            weights += [((model.moe.experts, h), 1), ((width, h), 2 * model.moe.experts),
                        ((h, width), model.moe.experts)]
        if moe is not None and layer not in dense and (shared := moe.shared_expert_intermediate_size):
            weights += [((shared, h), 2), ((h, shared), 1)] + ([((1, h), 1)] if moe.shared_expert_gate else [])
        tensors[f"layers.{layer}"] = weights

    pinned = sum(_block(bytes_per_value * _shard(dimensions, n, placed)) * count
                 for weights in tensors.values() for dimensions, count in weights)
    values = sum(math.prod(dimensions) * count for weights in tensors.values() for dimensions, count in weights)
    return pinned * model.parameters_b * 1e9 / values


def _shard(dimensions: tuple[int, ...], n: int, placed: bool) -> int:
    """The values one GPU of `n` holds of a tensor of `dimensions`: its rows split over the GPUs, rounded up; where
    `placed` (verl 0.7's placement), its values split evenly where the GPUs divide one of its dimensions."""
    if placed and any(size % n == 0 for size in dimensions):
        return math.prod(dimensions) // n
    return math.ceil(dimensions[0] / n) * math.prod(dimensions[1:])


def _block(size: int) -> int:
    """A pinned block of `size` bytes as the host allocator takes it: rounded up to a power of two."""
    power = 1
    while power < size:
        power *= 2
    return power


# --- LoRA (docs/memory.md, "LoRA") ----------------------------------------------------------------------------

LORA_LINEAR_TYPES = (None, "qwen3", "qwen2", "llama", "mistral")
"""The model types whose decoder layers hold Qwen3's seven linear modules (`LAYER_LINEARS`), all PEFT's ``all-linear``
adapts of a dense model (a catalogue model's type is None: Qwen3's layout)."""
LORA_MOE_TYPES = (None, "qwen3_moe")
"""The mixture-of-experts types whose LoRA the reference counts: Qwen3-MoE's layout (a catalogue model's type is None),
whose config PEFT converts under transformers 5 (docs/memory.md, "LoRA")."""
ATTENTION_LINEARS = ("q_proj", "k_proj", "v_proj", "o_proj")
LAYER_LINEARS = (*ATTENTION_LINEARS, "gate_proj", "up_proj", "down_proj")
"""The linear modules of a decoder layer of `LORA_LINEAR_TYPES`, by name (a Qwen3-MoE expert layer's attention
holds the first four)."""


@dataclass(frozen=True)
class Adapter:
    """A LoRA adapter of `rank` on the linear modules `modules` names (of `LAYER_LINEARS`) in every layer, as a job's
    ``lora_targets`` lists them (``q_proj,v_proj``, which Trinity's config takes as ``.*\\.(q_proj|v_proj)``; None:
    ``all-linear``, Trinity's default ``target_modules``), or on those whose full names (``model.layers.N.mlp.up_proj``)
    the ``target_modules`` regex `pattern` matches whole, as PEFT's ``re.fullmatch`` does; less those the
    ``exclude_modules`` regex `exclude` matches whole."""

    rank: int
    modules: tuple[str, ...] | None = None
    pattern: str | None = None
    exclude: str | None = None

    @property
    def target_modules(self) -> str | None:
        """The ``target_modules`` regex a plan names (None: ``all-linear``): the regex given, else each module name's
        ending, after a dot."""
        if self.pattern is not None or self.modules is None:
            return self.pattern
        return ".*\\." + (self.modules[0] if len(self.modules) == 1 else f"({'|'.join(self.modules)})")

    def adapts(self, name: str) -> bool:
        """Whether the adapter adapts the linear module of full name `name` (all-linear's, the names listed, or the
        regex's), PEFT's matching: a regex whole, a listed name as the name's last part; not what `exclude` matches."""
        if self.exclude is not None and re.fullmatch(self.exclude, name):
            return False
        if self.pattern is not None:
            return re.fullmatch(self.pattern, name) is not None
        return self.modules is None or name.rsplit(".", 1)[-1] in self.modules


def _layer_names(model: Any, layer: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the linear modules a LoRA adapter may adapt, the other modules) of decoder layer `layer` of `model`, by full
    name as transformers names them (those of either transformers of a Qwen3-MoE expert layer: 4's experts one module
    each, 5's one module whose converted names PEFT matches as ``mlp.experts.gate_proj``)."""
    prefix = f"model.layers.{layer}"
    linears = [f"{prefix}.self_attn.{name}" for name in ATTENTION_LINEARS]
    others = [prefix, f"{prefix}.self_attn", f"{prefix}.self_attn.q_norm", f"{prefix}.self_attn.k_norm",
              f"{prefix}.mlp", f"{prefix}.mlp.act_fn", f"{prefix}.input_layernorm",
              f"{prefix}.post_attention_layernorm"]
    mlp = [f"{prefix}.mlp.{name}" for name in LAYER_LINEARS[4:]]
    if model.moe is None:
        return tuple(linears + mlp), tuple(others)
    experts = [f"{prefix}.mlp.experts.{expert}" for expert in range(model.moe.experts)]
    others += [f"{prefix}.mlp.gate", f"{prefix}.mlp.experts", *mlp, *experts, *(
        f"{expert}.{name}" for expert in experts for name in (*LAYER_LINEARS[4:], "act_fn"))]
    others += [f"{prefix}.mlp.experts.{name}" for name in (*LAYER_LINEARS[4:], "gate_up_proj")]
    return tuple(linears), tuple(others)


MODEL_NAMES = ("", "model", "model.embed_tokens", "model.layers", "model.norm", "model.rotary_emb", "lm_head")
"""The full names of a decoder model's modules outside its layers."""


@functools.cache  # pure: asked of each plan checked
def lora_counted(model: Any, adapter: Adapter | None = None) -> bool:
    """Whether the reference counts a LoRA `adapter` (any, None) on `model`: a dense model of `LORA_LINEAR_TYPES`, or a
    mixture of experts of Qwen3-MoE's layout (`LORA_MOE_TYPES`: every layer an expert layer, no shared expert), without
    latent attention; on it, an adapter that adapts some module, whose regexes compile, matching linear modules alone
    (else PEFT refuses it, or it counts full fine-tuning); on a mixture of experts, ``all-linear`` or the attention's
    modules alone, with no `exclude`. Other types' stay uncounted (Phi-3's fused ``qkv_proj``, GLM-4's
    ``gate_up_proj``, Mixtral's and DeepSeek's experts: `solver.tables.peft_names`' table per type), and so do a
    mixture of experts' regexes or exclusions touching its router or experts: whether PEFT converts them, fuses them
    or adapts them whatever is excluded, per transformers, is a second PEFT (`lora-excluded-adapted`,
    `lora-targets-one-transformers`), not a cheap check."""
    moe = model.moe
    if model.mla is not None:
        return False
    if moe is None:
        counted = model.model_type in LORA_LINEAR_TYPES
    else:
        counted = (model.model_type in LORA_MOE_TYPES and not moe.dense_layers and not moe.dense_layer_indices
                   and not moe.shared_expert_intermediate_size and not moe.computes_every_expert)
    if not counted or adapter is None:
        return counted
    try:
        for regex in (adapter.pattern, adapter.exclude):
            if regex is not None:
                re.compile(regex)
    except re.error:
        return False
    if moe is not None and (adapter.exclude is not None or (adapter.pattern is None and adapter.modules is not None
                                                            and not set(adapter.modules) <= set(ATTENTION_LINEARS))):
        return False
    if adapter.pattern is not None and (any(re.fullmatch(adapter.pattern, name) for name in MODEL_NAMES) or any(
            re.fullmatch(adapter.pattern, name) for layer in range(model.num_layers)
            for name in _layer_names(model, layer)[1])):
        return False
    return any(adapter.adapts(name) for layer in range(model.num_layers) for name in _layer_names(model, layer)[0])


@functools.cache  # pure: asked of every length estimated
def _adapter_tensors(model: Any, adapter: Adapter, experts: str) -> tuple[tuple[tuple[int, int], int], ...]:
    """The LoRA weights of `adapter` on a model it counts (`lora_counted`), ((rows, columns), how many), a mixture of
    experts' routed experts laid out as `experts` (`Release.expert_layout`): each adapted ``nn.Linear`` of inputs I and
    outputs O a ``lora_A`` (rank x I) and a ``lora_B`` (O x rank); ``all-linear`` on a mixture of experts adds each
    layer's router (hidden -> experts) and routed experts: under transformers 4 (``separate``) each expert's gate, up
    and down ``nn.Linear``, under 5 (``fused``) PEFT's ``target_parameters`` wrappers (peft 0.21.2's ``ParamWrapper``:
    a 3-D parameter (E, I, O) takes ``lora_A`` (r x E, I) and ``lora_B`` (O, r x E), a 2-D one (O, I) as a linear's),
    the fused (E, 2 x width, hidden) ``gate_up_proj`` at twice the rank and (E, hidden, width) ``down_proj``;
    ``either``: the layout of the larger adapter."""
    if experts == "either":
        return max((_adapter_tensors(model, adapter, layout) for layout in ("fused", "separate")),
                   key=lambda tensors: sum(math.prod(shape) * count for shape, count in tensors))
    hidden, rank = model.hidden_size, adapter.rank
    queries, keys = model.num_attention_heads * model.head_size, model.num_key_value_heads * model.head_size
    widths = {"q_proj": (hidden, queries), "k_proj": (hidden, keys), "v_proj": (hidden, keys),
              "o_proj": (queries, hidden), "gate_proj": (hidden, model.intermediate_size),
              "up_proj": (hidden, model.intermediate_size), "down_proj": (model.intermediate_size, hidden)}
    tensors: list[tuple[tuple[int, int], int]] = []
    for layer in range(model.num_layers):
        for name in _layer_names(model, layer)[0]:
            if adapter.adapts(name):
                inputs, outputs = widths[name.rsplit(".", 1)[-1]]
                tensors += [((rank, inputs), 1), ((outputs, rank), 1)]
    moe = model.moe
    if moe is not None and adapter.pattern is None and adapter.modules is None:  # all-linear: router and experts
        width, count, layers = moe.moe_intermediate_size, moe.experts, model.num_layers
        tensors += [((rank, hidden), layers), ((count, rank), layers)]
        if experts == "fused":
            tensors += [((2 * rank * count, 2 * width), layers), ((hidden, 2 * rank * count), layers),
                        ((rank * count, hidden), layers), ((width, rank * count), layers)]
        else:
            tensors += [((rank, hidden), 2 * count * layers), ((width, rank), 2 * count * layers),
                        ((rank, width), count * layers), ((hidden, rank), count * layers)]
    return tuple(tensors)


def _adapter_parameters(model: Any, adapter: Adapter | None, experts: str = "fused") -> int:
    """The parameters of a LoRA `adapter` (`_adapter_tensors`, the routed experts laid out as `experts`; 0 for full
    fine-tuning, None)."""
    if adapter is None:
        return 0
    return sum(math.prod(shape) * count for shape, count in _adapter_tensors(model, adapter, experts))


def _adapter_pinned(model: Any, n: int, adapter: Adapter, release: Release) -> float:
    """Bytes one GPU of `n` pins for the `adapter`'s fp32 parameters (or its fp32 gradients) under `release`: each of
    its LoRA weights (`_adapter_tensors`) sharded as FSDP shards it, each shard a pinned block."""
    return sum(count * _block(4 * _shard(shape, n, release.placed))
               for shape, count in _adapter_tensors(model, adapter, release.expert_layout))


LORA_BASE_BYTES = 4
"""What a LoRA run's frozen base holds per parameter on the GPU: its fp32 weights, no gradients, no Adam moments."""
TRAINED_BYTES, HELD_BYTES, STEP_BYTES = 16, 12, 20
"""Per trained parameter: the states (fp32 weights, gradients and Adam's two moments); those held while a critic
updates (the gradients freed); those at the optimizer step (Adam's fp32 temporary besides)."""


def _lora_breakdown(model: Any, n: int, setting: Setting, coefficients: Any, full: Any, adapter: Adapter | None,
                    critic: str | None, experts: str = "fused") -> Any:
    """The memory model's breakdown of a LoRA run of `adapter` on a dense `model` (`lora_counted`), from full
    fine-tuning's `full` at the same GPUs, setting, tokens and critic, as docs/memory.md's "LoRA" counts it: the states
    term the frozen base's `LORA_BASE_BYTES` and the adapter's `TRAINED_BYTES` per parameter in place of every
    parameter's 16 (the calibrated multiplier kept), the activations the same; the optimizer step the base beside the
    adapter's `STEP_BYTES` (and beside a critic's states as full fine-tuning's step is); a critic's own update the base
    beside the adapter's `HELD_BYTES` (a mixture of experts' adapter as its routed experts are laid out, `experts`).
    With Offload nothing of it is on the GPU: full fine-tuning's figures."""
    if adapter is None or setting.offload:
        return full
    multiplier = coefficients.states  # the calibrated states' multiplier
    # The base's values on the fullest GPU, as full fine-tuning's states hold them (a mixture of experts' routed
    # experts padded as FSDP2 shards them); the adapter's own tensors are sharded evenly (their padding is not counted).
    parameters = full.terms.states / multiplier * 2**30 / TRAINED_BYTES
    trained = _adapter_parameters(model, adapter, experts) / n

    def states_gib(per_trained: int) -> float:
        return (LORA_BASE_BYTES * parameters + per_trained * trained) / 2**30

    states = multiplier * states_gib(TRAINED_BYTES)
    steps = [states_gib(STEP_BYTES) + full.critic_gib]
    if critic in ("resident", "reloaded"):  # the critic's own step beside the actor's held states
        steps.append(states_gib(HELD_BYTES) + STEP_BYTES * _critic_parameters(model) / n / 2**30)
    critic_pass = 0.0 if critic is None else (full.critic_pass_gib - full.terms.states * HELD_BYTES / TRAINED_BYTES
                                              + multiplier * states_gib(HELD_BYTES))
    return full.model_copy(update={"terms": full.terms.model_copy(update={"states": states}),
                                   "total_gib": full.total_gib - full.terms.states + states,
                                   "step_gib": max(steps) + coefficients.overhead, "critic_pass_gib": critic_pass})


def _breakdown(model: Any, memory_gib: float, n: int, setting: Setting, length: int, coefficients: Any,
               margin: float, tokens: int | None = None, *, critic: str | None, dpo: bool, experts: str,
               adapter: Adapter | None) -> Any:
    """The memory model's breakdown (`solver.memory.breakdown`, full fine-tuning's), of a LoRA run of `adapter` as
    `_lora_breakdown` counts it."""
    full = breakdown(model, memory_gib, n, setting, length, coefficients, margin, tokens, critic=critic, dpo=dpo,
                     experts=experts)
    return _lora_breakdown(model, n, setting, coefficients, full, adapter, critic, experts)


def _critic_parameters(model: Any) -> float:
    """The parameters of a PPO critic made from the model: the model's less its output projection (an untied model's
    vocabulary x hidden matrix; a tied one's is its embeddings, which the critic keeps), with a value head of one
    output: a weight per hidden unit and a bias."""
    output = 0 if model.tied_embeddings else model.vocab_size * model.hidden_size
    return model.parameters_b * 1e9 - output + model.hidden_size + 1


def _actor_pinned(model: Any, n: int, release: Release) -> float:
    """Bytes one GPU of `n` pins for the actor's fp32 parameters (or its fp32 gradients) under `release`."""
    return _pinned(model, n, 4, release.placed, release.expert_layout)


def _held_critic(model: Any, n: int, critic: str | None, release: Release = NO_RELEASE) -> float:
    """Bytes one trainer GPU's share of a PPO critic keeps in host memory while the actor trains: for an offloaded or
    reloaded `critic`, for each of the critic's parameters: offloaded, what Offload keeps of a full fine-tuned actor
    per parameter (pinned fp32 parameters and gradients, `_actor_pinned` each, and Adam's two fp32 moments, 8 bytes a
    value); reloaded, its fp32 parameters and Adam's two moments, each pinned as `_actor_pinned`, no gradients (its
    update sets them to None before verl offloads it); none for a resident critic, nor without one."""
    if critic not in ("offloaded", "reloaded"):
        return 0.0
    parameters = model.parameters_b * 1e9
    pinned = _actor_pinned(model, n, release)
    held = 3 * pinned if critic == "reloaded" else 2 * pinned + 8 * parameters / n
    return held * _critic_parameters(model) / parameters


def _host_moments(model: Any, n: int, node_gpus: int, critic: str | None = None, release: Release = NO_RELEASE,
                  compute_capability: str | None = None, offload: bool = True,
                  reference_model: bool = True, adapter: Adapter | None = None) -> tuple[float, float]:
    """GiB of host memory a node holds at two moments, (loading, training), under the Trinity `release` on a GPU of
    `compute_capability`. With Offload, training: per trainer GPU on the node, pinned fp32 parameters and pinned fp32
    gradients (`_actor_pinned` each), the reference model's pinned shards (`Release.reference_bytes` a value), Adam's
    two fp32 moments, 8 bytes a value, and the share of a `critic` held there (`_held_critic`); loading: the whole
    fp32 model on the node's ranks that load it (`Release.loads_on_rank_0`: one, else every trainer rank of the node;
    with no release named every rank, the most any release loads), beside the node's pinned fp32 parameter and
    reference shards. Without Offload, loading: the model beside the node's pinned reference shards, which verl builds
    first; training: the reference shards and the critic's. A run that builds no reference model
    (`reference_model` false: ``--no-reference``, a cluster job's ``reference_model: false``) pins no reference
    shards (docs/memory.md, "The reference model as Trinity builds it"). A LoRA run of `adapter` (docs/memory.md,
    "LoRA") loads its adapter beside the model (PEFT adds it before FSDP shards them); with Offload the frozen base
    pins its fp32 parameters alone, and the adapter its pinned fp32 parameters and gradients (`_adapter_pinned` each)
    and Adam's two pageable moments."""
    actor = _actor_pinned(model, n, release)  # a LoRA run's frozen base pins these fp32 parameters too
    reference = _pinned(model, n, release.reference_bytes, release.placed, release.expert_layout) \
        if reference_model else 0.0
    on_node = min(n, node_gpus)
    loaders = 1 if release.loads_on_rank_0(model, compute_capability) else on_node
    adapter_parameters = _adapter_parameters(model, adapter, release.expert_layout)
    trained = adapter_parameters if adapter else model.parameters_b * 1e9
    load = 4 * (model.parameters_b * 1e9 + adapter_parameters) * loaders
    critic_held = _held_critic(model, n, critic, release)
    if offload:
        # What is trained (the adapter, else the model) pins its gradients and keeps Adam's two moments pageable.
        adapter_blocks = _adapter_pinned(model, n, adapter, release) if adapter else 0.0
        parameters, gradients = actor + adapter_blocks, adapter_blocks if adapter else actor
        per_gpu = parameters + gradients + reference + 8 * trained / n + critic_held
        return (load + (parameters + reference) * on_node) / 2**30, per_gpu * on_node / 2**30
    return (load + reference * on_node) / 2**30, (reference + critic_held) * on_node / 2**30


def _host_need(model: Any, n: int, node_gpus: int, critic: str | None = None, release: Release = NO_RELEASE,
               compute_capability: str | None = None, reference_model: bool = True,
               adapter: Adapter | None = None) -> float:
    """GiB of host memory a node needs for Offload, the larger of two moments (`_host_moments`)."""
    return max(_host_moments(model, n, node_gpus, critic, release, compute_capability,
                             reference_model=reference_model, adapter=adapter))


def _load_need(model: Any, n: int, node_gpus: int, critic: str | None = None, release: Release = NO_RELEASE,
               compute_capability: str | None = None, reference_model: bool = True,
               adapter: Adapter | None = None) -> float:
    """GiB of host memory a node needs without Offload: while verl loads the model (`_host_moments`); with a `critic`
    held in host memory, the larger of that and what training holds."""
    loading, training = _host_moments(model, n, node_gpus, critic, release, compute_capability, offload=False,
                                      reference_model=reference_model, adapter=adapter)
    return max(loading, training) if critic in ("offloaded", "reloaded") else loading


def _training_below_load(model: Any, n: int, node_gpus: int, critic: str | None, release: Release = NO_RELEASE,
                         compute_capability: str | None = None, reference_model: bool = True,
                         adapter: Adapter | None = None,
                         *, offload: bool) -> float | None:
    """With Offload or a critic held in host memory, where training holds less than loading takes, both as shown (up
    to a tenth of a GiB), what training holds; None otherwise (the plan's `host_training_gb`)."""
    if not offload and critic not in ("offloaded", "reloaded"):
        return None
    loading, training = (_up_to_a_tenth(need) for need in _host_moments(model, n, node_gpus, critic, release,
                                                                        compute_capability, offload, reference_model,
                                                                        adapter))
    return training if training < loading else None


def _beyond_calibration(gpu_type: Any, model: Any, n: int, sp: int, tokens: int,
                        node_gpus: int, experts: str = "fused", memory: Any | None = None) -> list[tuple[str, str]]:
    """Where an estimated plan with `tokens` per GPU lies outside the memory model's observations (its ``fit``
    range: `memory`'s, None: the shipped one's, which test_memory checks that calibration reproduces; none where it
    records no range), each as (code, words), the code docs/json.md gives it: parameters compared to 0.1B, memory to
    1 GiB; a trainer on more nodes of `node_gpus` GPUs than the observations spanned (those on up to 8 GPUs ran on one
    node; NCCL's memory is counted as they took it, RCCL's on an AMD GPU, `gpu_type`'s ``rocm``, as docs/memory.md
    names it); a mixture of experts' words say how its routed experts were counted (`experts`: `EXPERTS_COUNTED`).
    A range's fields a file leaves out (None) are not checked."""
    fit = _memory_model(memory).fit.range
    if fit is None:
        return []
    found = []
    if round(model.parameters_b, 1) > round(fit.largest_model_b, 1):
        found.append(("larger-model",
                      (f"{shown_parameters(model.parameters_b)} parameters (calibrated up to "
                       f"{fit.largest_model_b:.1f}B)")))
    if fit.smallest_model_b is not None and round(model.parameters_b, 1) < round(fit.smallest_model_b, 1):
        found.append(("smaller-model",
                      (f"{shown_parameters(model.parameters_b)} parameters (calibrated from "
                       f"{fit.smallest_model_b:.1f}B)")))
    # Qwen3's one vocabulary within 10% counts as seen (Qwen2.5's 152064).
    vocab = (fit.least_vocab_size, fit.most_vocab_size)
    if None not in vocab and not vocab[0] / 1.1 <= model.vocab_size <= vocab[1] * 1.1:
        seen = vocab[0] if vocab[0] == vocab[1] else f"{vocab[0]} to {vocab[1]}"
        found.append(("other-vocabulary", f"a vocabulary of {model.vocab_size} (calibrated on {seen})"))
    if model.moe is not None and fit.mixture_of_experts is False:
        found.append(("mixture-of-experts",
                      f"a mixture of experts (calibrated on dense models; {EXPERTS_COUNTED[experts]})"))
    if model.logit_softcapping:  # no tabled model caps its logits
        found.append(("capped-logits",
                      "capped logits (their extra copy counted from first principles, not calibrated)"))
    least, most, memory_gib = round(fit.least_memory_gib), round(fit.most_memory_gib), gpu_type.memory_gib
    if not least <= round(memory_gib) <= most:
        seen = f"{least} GiB" if least == most else f"{least} to {most} GiB"
        found.append(("other-gpu-memory", f"{memory_gib:.0f} GiB GPUs (calibrated on {seen})"))
    if n > fit.most_gpus:
        found.append(("more-gpus", f"{n} GPUs (calibrated up to {fit.most_gpus})"))
    spanned = -(-fit.most_gpus // 8)  # the nodes of 8 GPUs the observations ran on
    if -(-n // node_gpus) > spanned:
        on = "one node" if spanned == 1 else f"up to {spanned} nodes"
        library = "RCCL" if gpu_type.rocm else "NCCL"
        found.append(("more-nodes", f"{-(-n // node_gpus)} nodes ({library}'s memory calibrated on {on})"))
    if fit.fewest_gpus is not None and n < fit.fewest_gpus:
        found.append(("fewer-gpus", f"{n} GPU{'s' if n > 1 else ''} (calibrated from {fit.fewest_gpus})"))
    if sp > fit.largest_sp:
        found.append(("larger-sp", f"SP={sp} (calibrated up to SP={fit.largest_sp})"))
    if sp == 1 and fit.fit_without_sp is False:
        found.append(("without-sp", "SP=1 (calibrated on fits with SP only)"))
    if tokens > fit.most_tokens_per_gpu:
        found.append(("more-tokens-per-gpu",
                      f"{tokens} tokens per GPU (calibrated on fits of up to {fit.most_tokens_per_gpu})"))
    return found


def _beyond_fields(beyond: list[tuple[str, str]]) -> dict[str, list[str]]:
    """A plan's two fields of `beyond` (`_beyond_calibration`'s): the words and, in the same order, the codes."""
    return {"beyond_calibration": [words for _, words in beyond],
            "beyond_calibration_codes": [code for code, _ in beyond]}


# --- enumeration -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    """What a query asks, as `enumerate_plans` and `check_plan` take it: keyword arguments of these names (the
    objective apart), with these defaults."""

    gpu: str
    model: str
    budget_gpus: int
    max_model_len: int | None = None
    exact: bool = False
    sp: int | None = None
    env: bool | None = None
    offload: bool | None = None
    weights: Weights | None = None
    node_gpus: int = 8
    host_node_gpus: int | None = None
    """The GPUs of a node that the host-memory caution counts, where the node size is the caller's (the product's
    `Query.node_gpus_given`: `node_gpus` where passed, as `_query` reads it; a cluster pool's `gpus_per_node`); None:
    the trainer's GPUs on a node alone."""
    estimates: bool = False
    rollout_gpus: int | None = None
    host_ram_gb: float | None = None
    token_budget: str = "default"
    train_batch_size: int | None = None
    margin: float | None = None
    """The estimates' safety margin (None: the default on the card, `_estimate_margin`)."""
    memory: Any | None = None
    """The memory model the estimates are made with: one of one's own (``--memory-model``, a `MemoryModel`
    calibrated on one's cells; its coefficients, default margin and calibration range), None: the shipped one."""
    budget_margin: float | None = None
    """The margin at which a token budget lowered with ``auto`` is chosen (None: `margin`): a cluster's at_least
    stretch stopped short of thin headroom keeps the budget of the margin it stopped at (`check_plan`)."""
    critic: str | None = None
    """A PPO critic trained beside the actor ("resident", "offloaded" or "reloaded"; None: none): the memory model
    counts it, no cell vouches for a plan (the tables measured the actor alone; they still refute), and an offloaded
    or reloaded one's states count in host memory."""
    trinity_version: str | None = None
    """The Trinity release the plans are counted for (`Release.named`; None: none named)."""
    reference_model: bool = True
    """Whether the run builds a reference model, whose pinned shards the host memory counts (false: ``--no-reference``,
    a cluster job's ``reference_model: false``)."""
    lora_rank: int = 0
    """The rank of the LoRA adapter the run trains (0: full fine-tuning), on `lora_modules`, of a model `lora_counted`
    counts, with no reference model (Trinity takes the actor without its adapter as the reference): the memory figures
    are `_lora_breakdown`'s and `_host_moments`', a cell that trained vouches for it (``inferred``: no cell documents a
    LoRA run) and none that ran out of memory refutes it (docs/memory.md, "LoRA")."""
    lora_modules: tuple[str, ...] | None = None
    """The linear modules of each layer the LoRA adapter adapts, by name (`Adapter`; None: all-linear's)."""
    lora_pattern: str | None = None
    """A ``target_modules`` regex the LoRA adapter adapts the linear modules it matches of (`Adapter.pattern`), in
    place of `lora_modules`."""
    lora_exclude: str | None = None
    """An ``exclude_modules`` regex whose matches the LoRA adapter leaves out (`Adapter.exclude`; None: none)."""
    dpo: bool = False
    """Whether the run trains DPO (``--dpo``, a cluster job's ``dpo: true``). For a model that reads the token budget
    the plans are as without it, at Trinity's default token budget, a pair's tokens (``auto`` lowers none: refused here,
    as ``--dpo --token-budget auto`` is); one trained one padded sequence per micro-batch (`_padded`) holds the pair
    each padded, twice the tokens the memory model counts (docs/cluster.md, `dpo: true`); the plan says ``dpo``."""

    def __post_init__(self) -> None:
        if self.dpo and self.token_budget != "default":
            raise ValueError(f"a DPO run reads no token budget: token_budget={self.token_budget!r} is refused")
        if self.lora_rank and self.reference_model:
            raise ValueError("a LoRA run builds no reference model: give reference_model=False with lora_rank")

    @property
    def adapter(self) -> Adapter | None:
        """The LoRA adapter the run trains (`lora_rank` on `lora_modules`); None for full fine-tuning."""
        return Adapter(self.lora_rank, self.lora_modules, self.lora_pattern, self.lora_exclude) \
            if self.lora_rank else None

    def lowers_budget(self, model: Any) -> bool:
        """Whether the query's estimates may lower the token budget (``auto``): not for a `model` that reads none
        (`_padded`), whose plans are as at Trinity's default."""
        return self.token_budget == "auto" and not _padded(model)

    @property
    def release(self) -> Release:
        """`trinity_version` as the reference counts it."""
        return Release.named(self.trinity_version)

    @property
    def experts(self) -> str:
        """How the release lays out a mixture of experts' routed experts (`Release.expert_layout`)."""
        return self.release.expert_layout

    def cell_evidence(self, tables: dict[int, Table], the_model: Any, n: int, env: bool, offload: bool, sp: int,
                      length: int, refuting: list[dict[int, Table]]) -> tuple[str, Any] | None:
        """`_evidence`, the cell that vouches for the setting (of a LoRA run's), where the query counts no critic; None
        with one."""
        return None if self.critic else _evidence(tables, the_model, n, env, offload, sp, length, refuting,
                                                  lora=self.lora_rank > 0)

    @property
    def without_env(self) -> bool:
        """Whether Env is pinned off: an estimate then needs no Env (`_longest_estimate`)."""
        return self.env is False


def _query(asked: dict[str, Any]) -> Query:
    """The `Query` of the keywords `asked`, its node size given where they pass one (`Query.host_node_gpus`), as
    `solver.make_query` reads it."""
    return Query(**{"host_node_gpus": asked.get("node_gpus"), **asked})


def _resolved(catalog: Catalog, query: Query) -> tuple[Weights, Any, Any, dict[int, Table], list[dict[int, Table]]]:
    """The query's weights (the shipped ones by default), GPU type and model, and the tables that speak for them:
    `_own_tables` and `_refuting_tables` (none for a LoRA run: they measured full fine-tuning, which holds more)."""
    gpu_type, the_model = catalog.gpu(query.gpu), catalog.model(query.model)
    return (load_weights() if query.weights is None else query.weights, gpu_type, the_model,
            _own_tables(catalog, gpu_type, the_model)[0],
            [] if query.adapter else _refuting_tables(catalog, gpu_type, the_model))


def enumerate_plans(catalog: Catalog, *, objective: str, **asked: Any) -> list[dict]:
    """Every feasible plan of the query `asked` (`Query`'s fields), best first by the objective's key (a total
    order); when maximising, each combination (n, env, offload, sp) at its longest length, and where that is an
    estimate, at its longest length the tables vouch for too."""
    query = _query(asked)
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown objective {objective!r}; accepted: {', '.join(OBJECTIVES)}")
    if objective == "max_len":
        if query.max_model_len is not None:
            raise ValueError("max_len chooses the length itself; give no max_model_len")
    elif query.max_model_len is None:
        raise ValueError(f"{objective} needs a max_model_len")
    weights, gpu_type, the_model, tables, refuting = _resolved(catalog, query)

    ranked = []
    untabled = _estimated_counts(tables, query.budget_gpus, query.node_gpus)
    # Counts with a table, those beyond a table's count (whose cells may vouch for them), and with estimates
    # every count the memory model covers.
    counts = sorted({*tables, *(n for n in untabled if query.estimates or (tables and n > min(tables)))})
    for n in counts:
        if (n > query.budget_gpus or (query.exact and n != query.budget_gpus)
                or _rollout_problem(n, query.rollout_gpus or 0, query.node_gpus)):
            continue
        for e in _pinned_values(query.env, [False, True]):
            for o in _pinned_values(query.offload, [False, True]):
                if _host_ram_problem(the_model, n, query.node_gpus, query.host_ram_gb, o, query.critic,
                                     query.release, gpu_type.compute_capability, query.reference_model,
                                     query.adapter):
                    continue
                for s in _pinned_values(query.sp, list(range(1, n + 1))):
                    if (_sp_rule_problems(the_model, n, s) or _node_problem(n, s, query.node_gpus)
                            or _batch_problem(query.train_batch_size, n, s, query.release, query.dpo)):
                        continue
                    longest = 0 if not query.estimates else _longest_estimate(
                        the_model, gpu_type.memory_gib, n, bool(e), bool(o), s, query.without_env, query.margin,
                        query.critic, query.experts, query.dpo, query.memory, query.adapter)
                    most_tokens = _estimated_tokens(refuting, the_model, gpu_type.memory_gib, n, e, o, s,
                                                    query.without_env, query.margin, query.critic, query.experts,
                                                    query.dpo, query.memory, query.adapter) \
                        if query.estimates and query.lowers_budget(the_model) else 0
                    reach = max(longest, min(s * most_tokens, 1 << 21))
                    # When maximising: the rows of the tables that may vouch (the tables share one grid of
                    # rows), the estimate's grid, and at the default budget where a table stops the estimate.
                    rows = {row.max_model_len for m, t in tables.items() if m <= n for row in t.rows}
                    stop = _table_stop(refuting, the_model, gpu_type.memory_gib, n, e, o, s, query.without_env,
                                       query.margin, query.critic, query.experts, query.dpo, query.memory,
                                       query.adapter) \
                        if query.estimates and not query.lowers_budget(the_model) else None
                    lengths = sorted(rows | set(range(1024, reach + 1, 1024)) | ({stop} if stop else set())) \
                        if objective == "max_len" else [query.max_model_len]
                    for length in lengths:
                        found = query.cell_evidence(tables, the_model, n, e, o, s, length, refuting[1:])
                        tokens = _max_token_len_per_gpu(length, s)
                        if found is None and query.estimates and _estimated(
                                refuting, the_model, gpu_type.memory_gib, n, e, o, s, length, query.without_env,
                                query.margin, query.critic, query.experts, query.dpo, query.memory, query.adapter):
                            found = ("estimated", None)
                        elif found is None and most_tokens and length <= 1 << 21 and \
                                (lowered := _lowered_budget(length, s, most_tokens)) is not None:
                            found, tokens = ("estimated", None), lowered
                        if found is None or (objective == "max_len" and found[0] == "estimated"
                                             and length % 1024 and length != stop):
                            continue  # when maximising, an estimate is on its grid or where a table stops it
                        cost = exact_cost(weights, the_model, gpu_type, n, e, o, s, query.critic)
                        ranked.append((rank_key(objective, n, e, o, s, length, cost),
                                       (n, bool(e), bool(o), s, length, tokens, found, cost)))
    ranked.sort(key=lambda pair: pair[0])
    keys = [key for key, _ in ranked]
    assert len(set(keys)) == len(keys), "the ranking key is not a total order over distinct plans"
    if objective == "max_len":
        # Each combination at its longest (a shorter length is no alternative), and where that is an estimate,
        # at its longest length the tables vouch for too (a shorter, measured alternative).
        listed: dict[tuple, list[str]] = {}  # combination -> the evidence of the lengths kept, longest first
        kept = []
        for key, found in ranked:
            evidence = listed.setdefault(found[:4], [])
            if not evidence or (evidence == ["estimated"] and found[6][0] != "estimated"):
                evidence.append(found[6][0])
                kept.append((key, found))
        ranked = kept
    plans = [_plan(catalog, query, gpu_type, the_model, *found) for _, found in ranked]
    if objective != "min_gpu_hours":
        return plans
    return [_with_gpu_hours(plan, found[0] * found[7]) for plan, (_, found) in zip(plans, ranked, strict=True)]


def _with_gpu_hours(plan: dict, gpu_hours: Fraction) -> dict:
    """`plan` as a min_gpu_hours answer gives it: its exact `gpu_hours` (gpus x cost) after its ``cost``."""
    ordered = {}
    for key, value in plan.items():
        ordered[key] = value
        if key == "cost":
            ordered["gpu_hours"] = float(gpu_hours)
    return ordered


def _plan(catalog: Catalog, query: Query, gpu_type: Any, the_model: Any, n: int, env: bool, offload: bool, sp: int,
          length: int, tokens: int, found: tuple[str, Any], cost: Fraction) -> dict:
    """The plan `enumerate_plans` lists for the combination (n, env, offload, sp) at `length` with `tokens` per GPU,
    of the evidence and source `found` and the exact `cost`: made only for the plans it lists (when maximising,
    most lengths it weighs are not)."""
    evidence, source = found
    plan = {
        "gpus": n,
        "unused_gpus": query.budget_gpus - n,
        "env": env,
        "offload": offload,
        "sp": sp,
        "max_model_len": length,
        "max_token_len_per_gpu": tokens,
        "lowered_budget": tokens < _max_token_len_per_gpu(length, sp),
        "token_budget_cap": None,  # the reference plans without a cap (--token-budget N)
        "rope_scaling_factor": _rope_scaling_factor(the_model, length),
        "yarn_beyond_validated": _yarn_beyond_validated(the_model, length),
        "past_validated_length": _past_validated_length(the_model, length),
        "cost": float(cost),
        "evidence": evidence,
        "source": None if source is None else _cited(source, catalog, gpu_type, the_model),
        **_memory(catalog, gpu_type.memory_gib, the_model, n, env, offload, sp, length, query.node_gpus, tokens,
                  query.host_ram_gb, evidence == "estimated", query.margin, query.critic, query.release,
                  gpu_type.compute_capability, query.reference_model, query.dpo, query.memory,
                  _assumed_host_gib(query, gpu_type, n), query.adapter),
        **_beyond_fields(_beyond_calibration(gpu_type, the_model, n, sp,
                                             _counted_tokens(the_model, length, sp, tokens, query.dpo),
                                             query.node_gpus, query.experts, query.memory)
                         if evidence == "estimated" else []),
        "compute_capability": gpu_type.compute_capability,  # the GPU type's, as the catalogue gives it
        "trainer_nodes": _trainer_nodes(n, query.node_gpus),
        **_layout(n, query.rollout_gpus, query.node_gpus),
    }
    plan["cautions"], plan["caution_codes"] = _cautions(plan, the_model, gpu_type, query.train_batch_size,
                                                        None if query.host_ram_gb is not None else "--host-ram",
                                                        query.node_gpus, query.margin, query.host_node_gpus,
                                                        _fits_without_sp(catalog, query, gpu_type, sp, length),
                                                        query.release, query.memory)
    plan.update(_rounded_figures(plan))  # the cautions use them whole, the JSON to 2 decimals
    assumed = _assumed_host_gib(query, gpu_type, n)
    if assumed is not None and plan["host_memory_gb"] is not None and plan["host_memory_gb"] > assumed:
        plan["host_ram_assumed"] = {"gb": assumed, "source": "--host-ram"}  # the bound its host caution names
    return plan


def _fits_without_sp(catalog: Catalog, query: Query, gpu_type: Any, sp: int, length: int) -> bool | str | None:
    """For a plan with `sp` above 1 at `length` on a GPU type over PCIe: whether the query, cheapest, with SP pinned
    to 1 at that length, has a plan, or where it has none at Trinity's default token budget, ``lowered`` where it
    has one with the budget ``auto`` lowers (with estimates, not for DPO); None for any other plan."""
    if sp == 1 or gpu_type.interconnect != "pcie":
        return None
    without_sp = replace(query, sp=1, max_model_len=length)

    def fits(asked: Query) -> bool:
        return bool(enumerate_plans(catalog, objective="cheapest",
                                    **{field.name: getattr(asked, field.name) for field in fields(asked)}))

    if fits(without_sp):
        return True
    lowers = without_sp.token_budget == "default" and without_sp.estimates and not without_sp.dpo
    return "lowered" if lowers and fits(replace(without_sp, token_budget="auto")) else False


def ranked_alternatives(plans: list[dict], model: Any, gpu: Any, weights: Weights | None = None) -> list[dict]:
    """What `--top` lists of `plans` of `model` on `gpu` (best first, as `enumerate_plans` gives them): those that no
    earlier one dominates, being as long, on as few GPUs, as cheap (by exact cost under `weights`: an equal cost is
    no gain) and vouched for by the tables unless the later one is an estimate too."""
    weights = load_weights() if weights is None else weights

    def cost(plan: dict) -> Fraction:
        return exact_cost(weights, model, gpu, plan["gpus"], plan["env"], plan["offload"], plan["sp"], plan["critic"])

    kept: list[dict] = []
    for plan in plans:
        if not any(earlier["max_model_len"] >= plan["max_model_len"] and earlier["gpus"] <= plan["gpus"]
                   and cost(earlier) <= cost(plan)
                   and (earlier["evidence"] != "estimated" or plan["evidence"] == "estimated") for earlier in kept):
            kept.append(plan)
    return kept


# --- checking one plan -----------------------------------------------------------------------------------


def _rounded_figures(figures: dict) -> dict[str, float]:
    """The memory model's peak and headroom of `figures` (and a PPO critic's own update's peak and its states' share of
    a node's host memory, where there are) as the JSON gives them: to two decimals."""
    return {key: round(figures[key], 2) for key in ("memory_gb", "headroom_gb", "margin_gb", "critic_pass_gb",
                                                    "host_critic_gb")
            if figures.get(key) is not None}


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _cautions(plan: dict, model: Any, gpu: Any, train_batch_size: int | None,
              unchecked_host_ram: str | None, node_gpus: int,
              margin: float | None = None, host_node_gpus: int | None = None,
              fits_without_sp: bool | str | None = None, release: Release = NO_RELEASE,
              memory: Any | None = None) -> tuple[list[str], list[str]]:
    """The words of `plan`'s cautions and their codes, as the planner gives them for the Trinity `release` with the
    memory model `memory` (None: the shipped one) (shared: see the module's docstring; `check_plan` checks the codes
    against the words)."""
    fields = {key: value for key, value in plan.items() if key != "lowered_budget"}  # checked on its own
    memory = _memory_model(memory)
    setting = Setting(env=plan["env"], offload=plan["offload"], sp=plan["sp"])
    room = margin_room(memory, _estimate_margin(gpu.memory_gib, margin, memory), gpu.memory_gib, setting, model)
    cautioned = Plan(**fields).with_cautions(model, gpu, room, train_batch_size,
                                             unchecked_host_ram=unchecked_host_ram,
                                             node_gpus=host_node_gpus or node_gpus,
                                             node_gpus_given=host_node_gpus is not None,
                                             fits_without_sp=fits_without_sp, version=release.minor,
                                             dpo=plan["dpo"], batch_divisor=release.batch_divisor)
    return list(cautioned.cautions), [code.value for code in cautioned.caution_codes]


def _raised_gib(memory_gib: float, env: bool, margin: float | None, memory: Any | None = None) -> float:
    """What `margin` (None: the default on a card of `memory_gib`) holds back beyond that default, GiB of the usable
    memory (with Env where `env`) of the memory model `memory` (None: the shipped one): what a margin raised above the
    default keeps counts as room to spare (docs/memory.md, "Choosing a margin"); negative below the default."""
    memory = _memory_model(memory)
    usable = memory_gib * (memory.coefficients.usable_env if env else memory.coefficients.usable)
    return (_estimate_margin(memory_gib, margin, memory) - _estimate_margin(memory_gib, None, memory)) * usable


def _gathered_shortfall_gib(model: Any, memory: Any | None = None) -> float:
    """What the memory model's (`memory`, None: the shipped one) gathered layers of `model` may take more than its fit
    counts, GiB: for a model of more parameters (to 0.1B) than the calibration's largest, the first-principles 4 bytes
    per embedding value and 10 per layer parameter less the fitted multiplier's share of them; 0 otherwise."""
    memory = _memory_model(memory)
    if memory.fit.range is None or round(model.parameters_b, 1) <= round(memory.fit.range.largest_model_b, 1):
        return 0.0
    embedding = model.vocab_size * model.hidden_size
    layer = (model.parameters_b * 1e9 - embedding * (1 if model.tied_embeddings else 2)) / model.num_layers
    return max(0.0, 1 - memory.coefficients.gathered) * (4 * embedding + 10 * layer) / 2**30


def _caution_problems(cautions: Any, plan: dict, *, rocm: bool, memory_gib: float, batch_given: bool,
                      parameters_b: float, shortfall_gib: float, host_ram_given: bool, node_gpus: int,
                      over_pcie: bool, link_stated: bool, host_node_gpus: int | None = None,
                      batch_over_gpus: bool = False, far_beyond: bool | None = False, raised_gib: float = 0.0,
                      workstation_gib: int | None = None, padded: bool = False, saved_split: bool = False,
                      moe_unsaved: bool = False) -> list[str]:
    """Problems with a plan's cautions: words, one on YaRN exactly where it goes past what is validated, one on
    ROCm exactly where Env is on an AMD GPU, one on thin headroom exactly where an estimate beyond the calibration
    has less than 1 GiB to spare (on a card of at most 48 GiB too: its default margin holds back the GiB such a card
    runs optimistic by already) and `shortfall_gib` more (what its gathered
    layers may take beyond the fit, `_gathered_shortfall_gib`), less what a margin raised above the card's default
    holds back (`raised_gib`, `_raised_gib`: counted as room to spare), one on a single GPU exactly where the guide
    strongly advises more (one GPU of at most 80 GiB, for a model of 4B parameters or more or more than 20480
    tokens), one on the data-parallel ranks exactly where no train batch was given and GPUs / SP is not 1, 2, 4,
    8, ..., one on the trainer GPUs exactly where they do not divide a train batch that a release named may refuse so
    (`batch_over_gpus`: Trinity 0.5 without its patch), one on host memory exactly where a plan (with Offload or,
    s88, without) needs more than 128 GiB per GPU of a node of
    `host_node_gpus` (None: the node size not given, per trainer GPU on a node of `node_gpus`) and no host memory was
    given (on a workstation card, `workstation_gib`, where it needs more than that for the whole box), one on SP over
    PCIe exactly where SP is above 1 on a GPU type whose
    GPUs reach one another `over_pcie`, one on the interconnect exactly where SP is above 1 on a GPU type whose
    interconnect is not stated (not `link_stated`), one on a model far beyond the calibration exactly where an estimate
    is of more than `FAR_BEYOND_SCALE` times the calibration's largest model at the default margin and the thin-headroom
    caution is not given (`far_beyond`: whether the model is so far and the margin the default; None: the margin raised
    or unknown, where the caution may be missing), one on padded micro-batches exactly where the model trains one padded
    sequence per micro-batch (`padded`: `_padded`), one on a LoRA adapter's ``target_modules`` saved as its characters
    exactly where a new adapter's is a regex, not ``all-linear`` (`saved_split`: on a dense model, whatever the
    release; on a mixture of experts, where the release's transformers may be 4; docs/json.md,
    ``lora-targets-saved-split``), one on a mixture of experts' adapter config that Trinity cannot save exactly where a
    LoRA run's release may run transformers 5 (`moe_unsaved`: not 0.5.1; ``lora-moe-config-unsaved``)."""
    if not isinstance(cautions, (list, tuple)) or not all(isinstance(caution, str) and caution for caution in cautions):
        return [f"cautions is not a list of words: {cautions!r}"]
    problems = []
    yarn = any(caution.startswith("YaRN factor ") for caution in cautions)
    if yarn != (plan.get("yarn_beyond_validated") is True):
        problems.append(f"a YaRN caution {'given' if yarn else 'missing'}: yarn_beyond_validated is "
                        f"{plan.get('yarn_beyond_validated')!r}")
    on_rocm = any(caution.startswith("ROCm: ") for caution in cautions)
    if on_rocm != (rocm and plan.get("env") is True):
        problems.append(f"a ROCm caution {'given' if on_rocm else 'missing'} (env {plan.get('env')!r}, ROCm {rocm})")
    thin = any("GiB to spare where the estimate extrapolates" in caution for caution in cautions)
    room = plan.get("headroom_gb")
    expected = (plan.get("evidence") == "estimated" and bool(plan.get("beyond_calibration"))
                and isinstance(room, float) and 0 <= room < 1.0 + shortfall_gib - raised_gib)
    if thin != expected:
        problems.append(f"a thin-headroom caution {'given' if thin else 'missing'} ({room!r} GiB to spare)")
    far = any("times the parameters of the largest the memory model was calibrated on" in caution
              for caution in cautions)
    far_expected = plan.get("evidence") == "estimated" and not thin and far_beyond is not False
    if (far and not far_expected) or (not far and far_expected and far_beyond):
        problems.append(f"a far-beyond-calibration caution {'given' if far else 'missing'} (evidence "
                        f"{plan.get('evidence')!r}, thin headroom {'cautioned' if thin else 'not cautioned'})")
    single = any(caution.startswith("one trainer GPU: ") for caution in cautions)
    length = plan.get("max_model_len")
    advised = (plan.get("gpus") == 1 and memory_gib <= 80
               and (parameters_b >= 4 or (isinstance(length, int) and length > 20480)))
    if single != advised:
        problems.append(f"a single-GPU caution {'given' if single else 'missing'} ({plan.get('gpus')!r} GPUs, "
                        f"{parameters_b}B parameters, {length!r} tokens, {memory_gib} GiB)")
    ranks = plan["gpus"] // plan["sp"] if _is_int(plan.get("gpus")) and _is_int(plan.get("sp")) and plan["sp"] else 1
    over_gpus = any(BATCH_OVER_GPUS in caution for caution in cautions)
    if over_gpus != batch_over_gpus:
        problems.append(f"a caution on a train batch the GPUs do not divide {'given' if over_gpus else 'missing'}")
    uneven = any("data-parallel ranks" in caution and BATCH_OVER_GPUS not in caution for caution in cautions)
    if uneven != (not batch_given and ranks not in {2**k for k in range(17)}):
        problems.append(f"a data-parallel caution {'given' if uneven else 'missing'} ({ranks} ranks)")
    host = any(caution.startswith(("Offload needs ", "the trainer needs ")) for caution in cautions)
    need, on_node = plan.get("host_memory_gb"), host_node_gpus or min(plan.get("gpus", 1), node_gpus)
    bound = 128 * on_node if workstation_gib is None else workstation_gib
    if host != (not host_ram_given and isinstance(need, float) and need > bound):  # s88: with Offload or without
        problems.append(f"a host-memory caution {'given' if host else 'missing'} ({need!r} GiB on {on_node} GPUs, "
                        f"offload {plan.get('offload')!r}, host memory {'given' if host_ram_given else 'not given'})")
    # the bound that caution names, beside it (hostfield90b): the GiB assumed and what would give the node's instead
    assumed = plan.get("host_ram_assumed")
    if (assumed is not None) != host or host and not (
            isinstance(assumed, dict) and set(assumed) == {"gb", "source"} and assumed["gb"] == bound
            and any(f"give {assumed['source']} what a node can spare" in caution for caution in cautions)):
        problems.append(f"host_ram_assumed={assumed!r} with{'' if host else 'out'} a host-memory caution (a node "
                        f"assumed to have {bound} GiB)")
    pcie = any(caution.startswith("SP=") and "which reach one another over PCIe" in caution for caution in cautions)
    if pcie != (over_pcie and _is_int(plan.get("sp")) and plan["sp"] > 1):
        problems.append(f"an SP-over-PCIe caution {'given' if pcie else 'missing'} (SP {plan.get('sp')!r}, "
                        f"{'PCIe' if over_pcie else 'not PCIe'})")
    unstated = any(caution.startswith("SP=") and "whose interconnect is not stated" in caution for caution in cautions)
    if unstated != (not link_stated and _is_int(plan.get("sp")) and plan["sp"] > 1):
        problems.append(f"an unstated-interconnect caution {'given' if unstated else 'missing'} (SP "
                        f"{plan.get('sp')!r}, interconnect {'stated' if link_stated else 'not stated'})")
    remove_padding_off = any(caution.startswith("use_remove_padding false for ") for caution in cautions)
    if remove_padding_off != padded:
        problems.append(f"a padded-micro-batches caution {'given' if remove_padding_off else 'missing'} (the model "
                        f"{'trains' if padded else 'does not train'} one padded sequence per micro-batch)")
    split = any(caution.startswith("target_modules '") and "as its single characters" in caution
                for caution in cautions)
    if split != saved_split:
        problems.append(f"a lora-targets-saved-split caution {'given' if split else 'missing'} (target_modules "
                        f"{plan.get('lora_target_modules')!r})")
    unsaved = any(caution.startswith("LoRA on ") and "a mixture of experts: " in caution for caution in cautions)
    if unsaved != moe_unsaved:
        problems.append(f"a lora-moe-config-unsaved caution {'given' if unsaved else 'missing'}")
    expected_codes = [_caution_code(caution) for caution in cautions]
    if plan.get("caution_codes") != expected_codes:
        problems.append(f"caution codes {plan.get('caution_codes')!r}, where the words say {expected_codes!r}")
    return problems


FAR_BEYOND_SCALE = 4
"""How many times the parameters of the memory model's largest calibrated model past which an estimate is far beyond
its calibration (docs/json.md, `far-beyond-calibration`: its held-out splits reached 3.5 times)."""


def _far_beyond(model: Any, memory: Any | None = None) -> bool:
    """Whether `model` has more than `FAR_BEYOND_SCALE` times the parameters of the memory model's (`memory`, None:
    the shipped one) largest calibrated model."""
    calibrated = _memory_model(memory).fit.range
    return calibrated is not None and model.parameters_b > FAR_BEYOND_SCALE * calibrated.largest_model_b


BATCH_OVER_GPUS = "trainer GPUs, which Trinity 0.5.0 and 0.5.1 refuse"
"""The words of a caution that the trainer GPUs do not divide the train batch (`batch-divides-trainer-gpus`)."""
CAUTION_CODES_BY_WORDS = (
    ("YaRN factor ", "YaRN on a model that is not Qwen's", "yarn-unvalidated-model"),
    ("YaRN factor ", "", "past-validated-length"),
    ("ROCm: ", "", "rocm-env-may-not-apply"),
    ("estimated from the memory model alone, but the tables say it runs out of memory (", "",
     "tables-say-out-of-memory"),
    ("", "GiB to spare where the estimate extrapolates", "thin-headroom"),
    ("Offload needs ", "GiB per GPU, as servers commonly have", "host-memory-unchecked"),
    ("Offload needs ", "GiB a workstation of ", "host-memory-unchecked"),
    ("the trainer needs ", "GiB per GPU, as servers commonly have", "host-memory-unchecked"),
    ("the trainer needs ", "GiB a workstation of ", "host-memory-unchecked"),
    ("one trainer GPU: ", "", "single-gpu-advised-against"),
    ("the model has ", "times the parameters of the largest the memory model was calibrated on",
     "far-beyond-calibration"),
    ("", BATCH_OVER_GPUS, "batch-divides-trainer-gpus"),
    ("", "data-parallel ranks", "uneven-data-parallel"),
    ("beyond the native ", "with no RoPE scaling to reach it", "past-native-no-yarn"),
    ("beyond the native ", "RoPE scaling", "past-native-on-own-scaling"),
    ("vLLM's rollout refuses it unless ", "it derives from the model's config: ", "past-derived-length"),
    ("past ", "'s sliding window of ", "past-sliding-window"),
    ("", "is read from a config.json of a kind rft-solver has not checked", "unchecked-config-layout"),
    ("use_remove_padding false for ", "", "padded-micro-batches"),
    ("SP=", "which reach one another over PCIe", "sp-over-pcie"),
    ("SP=", "whose interconnect is not stated", "interconnect-not-stated"),
    ("its trainer spans ", "", "trainer-spans-nodes"),
    ("node ", "GiB such a node is assumed to have; the pool gives no host_ram_gb", "node-host-memory-unchecked"),
    ("target_modules '", "as its single characters", "lora-targets-saved-split"),
    ("LoRA on ", "a mixture of experts: ", "lora-moe-config-unsaved"),
)
"""How a caution's words say its kind: (start, words within, code), the first that matches (docs/json.md)."""


def _caution_code(caution: str) -> str | None:
    """The code docs/json.md gives the caution `caution` says, by its words; None for words no kind has."""
    return next((code for start, within, code in CAUTION_CODES_BY_WORDS
                 if caution.startswith(start) and within in caution), None)


def check_plan(catalog: Catalog, plan: dict, **asked: Any) -> list[str]:
    """Problems with `plan` for the query `asked` (`Query`'s fields), straight from the definitions; an empty
    list means valid.

    Checks validity only (not optimality). With no max_model_len (the max_len objective), the plan's
    length must be one of the row lengths of the table that vouches for it (an estimate's: a multiple
    of 1024, or where a table stops the estimate).
    """
    query = _query(asked)
    weights, gpu_type, the_model, tables, refuting = _resolved(catalog, query)
    problems: list[str] = []

    if not isinstance(plan, dict):
        return [f"the plan is a {type(plan).__name__}, not a dict"]
    # a min_gpu_hours answer's plans have gpu_hours, those of a host-memory caution host_ram_assumed (checked below)
    keys = set(plan) - {"gpu_hours", "host_ram_assumed"}
    if keys != PLAN_KEYS:
        missing = sorted(PLAN_KEYS - keys)
        extra = sorted(keys - PLAN_KEYS)
        problems.append(f"plan keys wrong: missing {missing}, unexpected {extra}")
        return problems
    problems += _caution_problems(plan["cautions"], plan, rocm=gpu_type.rocm, memory_gib=gpu_type.memory_gib,
                                  batch_given=query.train_batch_size is not None, parameters_b=the_model.parameters_b,
                                  shortfall_gib=_gathered_shortfall_gib(the_model, query.memory),
                                  host_ram_given=query.host_ram_gb is not None, node_gpus=query.node_gpus,
                                  over_pcie=gpu_type.interconnect == "pcie",
                                  link_stated=gpu_type.interconnect is not None,
                                  host_node_gpus=query.host_node_gpus,
                                  batch_over_gpus=query.release.batch_divisor == "unsure"
                                  and query.train_batch_size is not None and _is_int(plan["gpus"]) and plan["gpus"] > 0
                                  and query.train_batch_size % plan["gpus"] != 0,
                                  workstation_gib=gpu_type.workstation_host_ram_gib, padded=_padded(the_model),
                                  saved_split=query.adapter is not None and query.adapter.target_modules is not None
                                  and (the_model.moe is None or query.release.expert_layout != "fused"),
                                  moe_unsaved=query.adapter is not None and the_model.moe is not None
                                  and query.release.expert_layout != "separate",
                                  raised_gib=_raised_gib(gpu_type.memory_gib, plan.get("env") is True,
                                                         query.margin, query.memory),
                                  far_beyond=_far_beyond(the_model, query.memory) and (
                                      None if query.margin is not None or query.budget_margin is not None else True))

    n = plan["gpus"]
    e = plan["env"]
    o = plan["offload"]
    s = plan["sp"]
    length = plan["max_model_len"]
    types_ok = True
    for name, value, ok in (
        ("gpus", n, _is_int(n)),
        ("sp", s, _is_int(s)),
        ("max_model_len", length, _is_int(length)),
        ("env", e, _is_bool(e)),
        ("offload", o, _is_bool(o)),
        ("unused_gpus", plan["unused_gpus"], _is_int(plan["unused_gpus"])),
        ("max_token_len_per_gpu", plan["max_token_len_per_gpu"], _is_int(plan["max_token_len_per_gpu"])),
        ("cost", plan["cost"], isinstance(plan["cost"], float)),
    ):
        if not ok:
            problems.append(f"{name} has the wrong type: {value!r}")
            types_ok = False
    if not types_ok:
        return problems
    if n < 1:
        return problems + [f"gpus={n} is not positive"]
    if s < 1:
        return problems + [f"sp={s} is below 1"]
    if length < 1:
        return problems + [f"max_model_len={length} is not positive"]

    # Budget and the documented GPU counts.
    if n > query.budget_gpus:
        problems.append(f"gpus={n} is over the budget of {query.budget_gpus}")
    if query.exact and n != query.budget_gpus:
        problems.append(f"gpus={n} but exactly {query.budget_gpus} were asked for")
    if plan["unused_gpus"] != query.budget_gpus - n:
        problems.append(f"unused_gpus={plan['unused_gpus']}, expected {query.budget_gpus - n}")
    if plan["trainer_nodes"] != _trainer_nodes(n, query.node_gpus):
        problems.append(f"trainer_nodes={plan['trainer_nodes']}, expected {_trainer_nodes(n, query.node_gpus)}")
    table = tables.get(n)
    untabled = n in _estimated_counts(tables, query.budget_gpus, query.node_gpus)
    estimated = query.estimates and (table is not None or untabled)
    if table is None and not estimated and not (untabled and tables and n > min(tables)):
        problems.append(
            f"{n} GPUs: no {gpu_type.name} table for them names {the_model.name}, and they are not a count past a "
            f"table's (within a node of {query.node_gpus} or whole nodes, up to 64; documented counts: "
            f"{sorted(tables)})"
        )

    # The SP rules.
    problems.extend(_sp_rule_problems(the_model, n, s))
    problems.extend(_node_problem(n, s, query.node_gpus))
    problems.extend(_batch_problem(query.train_batch_size, n, s, query.release, query.dpo))
    problems.extend(_rollout_problem(n, query.rollout_gpus or 0, query.node_gpus))
    if not _rollout_problem(n, query.rollout_gpus or 0, query.node_gpus):
        layout = _layout(n, query.rollout_gpus, query.node_gpus)
        if (plan["nodes"], plan["rollout_gpus"]) != (layout["nodes"], layout["rollout_gpus"]):
            problems.append(f"nodes/rollout_gpus {plan['nodes']}/{plan['rollout_gpus']}, expected "
                            f"{layout['nodes']}/{layout['rollout_gpus']}")
    problems.extend(_host_ram_problem(the_model, n, query.node_gpus, query.host_ram_gb, o, query.critic,
                                      query.release, gpu_type.compute_capability, query.reference_model,
                                      query.adapter))

    # Pins.
    for name, pin, value in (("sp", query.sp, s), ("env", query.env, e), ("offload", query.offload, o)):
        if pin is not None and value != pin:
            problems.append(f"{name}={value!r} but it was pinned to {pin!r}")

    # The length.
    if query.max_model_len is not None:
        if length != query.max_model_len:
            problems.append(f"max_model_len={length} but {query.max_model_len} was asked for")
    elif plan["evidence"] == "estimated":
        stop = _table_stop(refuting, the_model, gpu_type.memory_gib, n, e, o, s, query.without_env, query.margin,
                           query.critic, query.experts, query.dpo, query.memory, query.adapter) \
            if not query.lowers_budget(the_model) else None
        if length % 1024 and length != stop:
            problems.append(f"max_model_len={length} is not a multiple of 1024 (an estimate's grid), nor where a "
                            "table stops the estimate")
    elif isinstance(plan["source"], dict) and plan["source"].get("gpus") in tables:
        if length not in [row.max_model_len for row in tables[plan["source"]["gpus"]].rows]:
            problems.append(f"max_model_len={length} is not a row of the table that vouches for the plan")

    # Derived fields.
    want_tokens = _max_token_len_per_gpu(length, s)
    lowered = None
    budget_margin = query.margin if query.budget_margin is None else query.budget_margin
    if estimated and query.lowers_budget(the_model) and plan["evidence"] == "estimated" and \
            query.cell_evidence(tables, the_model, n, e, o, s, length, refuting[1:]) is None and \
            not _estimated(refuting, the_model, gpu_type.memory_gib, n, e, o, s, length, query.without_env,
                           budget_margin, query.critic, query.experts, query.dpo, query.memory, query.adapter) and \
            length <= 1 << 21:
        lowered = _lowered_budget(length, s, _estimated_tokens(refuting, the_model, gpu_type.memory_gib, n, e, o, s,
                                                               query.without_env, budget_margin, query.critic,
                                                               query.experts, query.dpo, query.memory, query.adapter))
        want_tokens = lowered or want_tokens
    if plan["max_token_len_per_gpu"] != want_tokens:
        problems.append(f"max_token_len_per_gpu={plan['max_token_len_per_gpu']}, expected {want_tokens}")
    if plan["lowered_budget"] is not (want_tokens < _max_token_len_per_gpu(length, s)):
        problems.append(f"lowered_budget={plan['lowered_budget']!r}, but the token budget expected is {want_tokens} "
                        f"and Trinity's default {_max_token_len_per_gpu(length, s)}")
    want_rope = _rope_scaling_factor(the_model, length)
    rope = plan["rope_scaling_factor"]
    if want_rope is None:
        if rope is not None:
            problems.append(f"rope_scaling_factor={rope!r}, expected None (no YaRN for {the_model.name} at {length} "
                            "tokens)")
    elif not isinstance(rope, float) or isinstance(rope, bool) or not math.isclose(rope, want_rope, rel_tol=1e-12, abs_tol=0.0):
        problems.append(f"rope_scaling_factor={rope!r}, expected {want_rope!r}")
    if plan["yarn_beyond_validated"] is not _yarn_beyond_validated(the_model, length):
        problems.append(f"yarn_beyond_validated={plan['yarn_beyond_validated']!r}, expected the opposite")
    if plan["past_validated_length"] != _past_validated_length(the_model, length):
        problems.append(f"past_validated_length={plan['past_validated_length']!r}, expected "
                        f"{_past_validated_length(the_model, length)!r}")

    # The memory model's prediction (a derived field, computed by solver.memory).
    predicted = _memory(catalog, gpu_type.memory_gib, the_model, n, e, o, s, length, query.node_gpus, want_tokens,
                        query.host_ram_gb, plan["evidence"] == "estimated", query.margin, query.critic,
                        query.release, gpu_type.compute_capability, query.reference_model, query.dpo, query.memory,
                        _assumed_host_gib(query, gpu_type, n), query.adapter)
    predicted.update(_rounded_figures(predicted))
    if {k: plan[k] for k in predicted} != predicted:
        problems.append(f"the memory figures {({k: plan[k] for k in predicted})} differ from the memory model's "
                        f"{predicted}")

    want_beyond = _beyond_fields(_beyond_calibration(gpu_type, the_model, n, s,
                                                     _counted_tokens(the_model, length, s, want_tokens, query.dpo),
                                                     query.node_gpus, query.experts, query.memory)
                                 if plan["evidence"] == "estimated" else [])
    for key, want in want_beyond.items():
        if plan.get(key) is None or list(plan[key]) != want:
            problems.append(f"{key}={plan.get(key)!r}, expected {want!r}")

    # Cost.
    want_cost = float(exact_cost(weights, the_model, gpu_type, n, e, o, s, query.critic))
    if not math.isclose(plan["cost"], want_cost, rel_tol=1e-12, abs_tol=0.0):
        problems.append(f"cost={plan['cost']!r}, expected {want_cost!r}")
    if "gpu_hours" in plan and not math.isclose(plan["gpu_hours"], n * want_cost, rel_tol=1e-12, abs_tol=0.0):
        problems.append(f"gpu_hours={plan['gpu_hours']!r}, expected {n * want_cost!r} (gpus x cost)")

    # Evidence and source: a cell when one vouches, else the memory model's estimate.
    found = query.cell_evidence(tables, the_model, n, e, o, s, length, refuting[1:])
    if found is not None:
        evidence, source = found[0], _cited(found[1], catalog, gpu_type, the_model)
        if plan["evidence"] != evidence:
            problems.append(f"evidence={plan['evidence']!r}, expected {evidence!r}")
        if not isinstance(plan["source"], dict) or set(plan["source"]) != set(source):
            problems.append(f"source={plan['source']!r} does not have exactly the keys {sorted(source)}")
        elif plan["source"] != source:
            problems.append(f"source={plan['source']!r}, expected {source!r}")
    elif not estimated:
        problems.append(
            f"not feasible: no row >= {length} of a table for {n} GPUs or fewer has a cell that "
            f"{Setting(env=e, offload=o, sp=s).label} includes"
        )
    else:
        if lowered is None and not _estimated(refuting, the_model, gpu_type.memory_gib, n, e, o, s, length,
                                              query.without_env, query.margin, query.critic, query.experts,
                                              query.dpo, query.memory, query.adapter):
            problems.append(f"not feasible: the memory model does not vouch for {Setting(env=e, offload=o, sp=s).label} "
                            f"on {n} GPUs at {length} tokens (it does not fit, or the count's table says it ran out of "
                            "memory)")
        if plan["evidence"] != "estimated" or plan["source"] is not None:
            problems.append(f"evidence={plan['evidence']!r}, source={plan['source']!r}: expected 'estimated', None")
    return problems
