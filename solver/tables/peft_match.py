"""How PEFT (0.21.2) matches a LoRA config's ``target_modules`` against a model's module names (`peft_target_match`,
on a model type's `PeftModuleNames`), and why it refuses one (`peft_target_refusal`): read by the config reader and the
checks alike, without the reader's other work, and by the memory model, which counts an adapter on what a regex
adapts."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from typing import NamedTuple

from solver.tables.peft_names import EXPERT_INDEX, HEAD_INDEX, PEFT_HEADS, PEFT_NAMES_BY_MODEL_TYPE, PeftModuleNames

PEFT_OUTER_MODULES = ("model.embed_tokens", "lm_head")
"""The modules outside the layers that PEFT adapts where a ``target_modules`` regex names them (an embedding, and the
output projection, which ``all-linear`` leaves out: ``_maybe_include_all_linear_layers``,
``tuners/tuners_utils.py:2464`` to ``:2469`` in peft 0.21.2), whose adapters rft-solver does not count."""
PEFT_OTHER_MODULES = ("model", "model.layers", "model.norm", "model.rotary_emb")
"""A model's other module names outside the layers (every type of `PEFT_NAMES_BY_MODEL_TYPE`), beside its layers'
`PeftModuleNames.others`; not the model itself (``""``), which PEFT never matches (``inject_adapter`` skips the empty
name, ``tuners/tuners_utils.py:949`` to ``:950`` in peft 0.21.2), so that a regex that also matches the empty string,
such as ``(.*\\.q_proj)?``, adapts what else it matches."""
QWEN3, QWEN3_MOE = PEFT_NAMES_BY_MODEL_TYPE["qwen3"], PEFT_NAMES_BY_MODEL_TYPE["qwen3_moe"]
"""A dense Qwen3's and a Qwen3-MoE's module names (transformers 5.12.1): the catalogue's models'."""
PEFT_LAYERS = 128
"""The decoder layers whose module names a ``target_modules`` regex is matched against (``model.layers.0`` to
``model.layers.127``: more than any catalogued model has)."""


def every_layer(name: str) -> range:
    """The layers a layer module `name` is looked for in where the model's are not known: each of `PEFT_LAYERS`."""
    return range(PEFT_LAYERS)


ModuleLayers = Callable[[str], Iterable[int]]
"""The indices of the layers that hold a layer module of a given name (one of `PeftModuleNames.adapted`), as a model
has them (``Model.module_layers``; `every_layer` where the model is not known)."""


def layer_module_names(name: str, names: PeftModuleNames,
                       layers: Iterable[int] = range(PEFT_LAYERS)) -> Iterator[str]:
    """The full names of the layer module `name` of a model of `names` (``""``: the layer itself) in each layer of
    `layers` (by default `PEFT_LAYERS` of them: ``model.layers.0.self_attn.q_proj``), and under transformers 4 of each
    routed expert (``mlp.experts.E.gate_proj`` for each ``E`` below `PeftModuleNames.expert_count`), and of a per-head
    module of each head (``self_attn.q_layernorm.norms.H`` for each ``H`` below `PEFT_HEADS`), layer by layer."""
    parts = name.split(".")
    index, count = (EXPERT_INDEX, names.expert_count) if EXPERT_INDEX in parts else (HEAD_INDEX, PEFT_HEADS)
    experts = [name] if index not in parts else [".".join(str(each) if part == index else part for part in parts)
                                                 for each in range(count)]
    for layer in layers:
        for expert_name in experts:
            yield f"model.layers.{layer}{'.' if expert_name else ''}{expert_name}"


def shown_module_names(names: PeftModuleNames, outer: bool = True) -> str:
    """The full module names a ``target_modules`` regex is to match on a model of `names`, as a refusal names them:
    the layers' that ``all-linear`` adapts (each under a block: ``self_attn.q_proj``), those of one block in braces by
    their common ending (``model.layers.N.self_attn.{q,k,v,o}_proj``), then, where `outer`, ``model.embed_tokens
    and lm_head``."""
    blocks: dict[str, list[str]] = {}
    for name in names.adapted:
        block, _, leaf = name.rpartition(".")
        blocks.setdefault(block, []).append(leaf)
    return ", ".join([f"model.layers.N.{block}.{_braced(leaves)}" for block, leaves in blocks.items()]
                     + (["model.embed_tokens and lm_head"] if outer else []))


def _braced(leaves: list[str]) -> str:
    """`leaves` as one name with braces (``{q,k,v,o}_proj``, ``{w1,w3,w2}``), or the one leaf."""
    if len(leaves) == 1:
        return leaves[0]
    ending = "_" + leaves[0].rsplit("_", 1)[-1]
    if all(leaf.endswith(ending) and leaf != ending for leaf in leaves):
        return "{" + ",".join(leaf.removesuffix(ending) for leaf in leaves) + "}" + ending
    return "{" + ",".join(leaves) + "}"


class TargetMatch(NamedTuple):
    """What a ``target_modules`` regex matches whole (`peft_target_match`): the layer's modules ``all-linear`` adapts
    (`PeftModuleNames.adapted`, without their first part: ``self_attn.``, ``mlp.``), the modules outside the layers
    PEFT adapts (`PEFT_OUTER_MODULES`) and the first other module (a norm, a layer or the model; None where none)."""

    linears: tuple[str, ...]
    outer: tuple[str, ...]
    other: str | None

    @property
    def beyond_all_linear(self) -> tuple[str, ...]:
        """The modules it matches that ``all-linear`` leaves out, which rft-solver does not count an adapter on:
        `outer`, then `other` where there is one (none: it adapts the layers' linears alone, if any)."""
        return (*self.outer, *((self.other,) if self.other is not None else ()))


def peft_regex(pattern: str) -> re.Pattern[str]:
    """`pattern` (a ``target_modules`` or ``exclude_modules`` regex) compiled, as PEFT compiles it; `re.error` where
    it is none, a repetition past Python's limit (``a{99999999999}``: an `OverflowError` there) and groups nested
    past its stack (a `RecursionError`) included, which PEFT fails on alike."""
    try:
        return re.compile(pattern)
    except (OverflowError, RecursionError) as error:
        raise re.error(str(error)) from None


@lru_cache(maxsize=512)
def peft_target_match(pattern: str, excluded: str | None = None, names: PeftModuleNames = QWEN3) -> TargetMatch:
    """The modules of a model of `names` (a dense Qwen3's by default) whose full names
    (``model.layers.0.self_attn.q_proj``) the ``target_modules`` regex `pattern` matches whole, as PEFT matches a
    string (``re.fullmatch``, ``match_target_against_key``, ``utils/other.py:1516`` to ``:1521``, from
    ``check_target_module_exists``, ``tuners/tuners_utils.py:2370`` to ``:2371`` in peft 0.21.2), in any of
    `PEFT_LAYERS` layers (and of transformers 4's routed experts: `layer_module_names`), or that ``all-linear``
    adapts (`PeftModuleNames.adapted`, ``_maybe_include_all_linear_layers``, ``:2430`` to ``:2490``; a converted
    mixture of experts' routed experts by their v4 names, which PEFT resolves a regex against,
    ``utils/transformers_weight_conversion.py:375`` to ``:399``; on such a model PEFT matches the short names it
    makes of the regex instead, `converted_target_names`, of which ``gate`` and the experts' v4 names adapt the
    router's ``gate.weight`` and the routed experts' parameters alone, and so nothing of a router named otherwise:
    Hunyuan-MoE's ``mlp.gate`` holds an ``nn.Linear``, ``mlp.gate.wg``, which ``wg`` adapts); less those the
    ``exclude_modules`` regex `excluded` matches whole, which PEFT leaves out first (``:2350`` to ``:2353``), but for
    ``all-linear``'s router and routed experts on such a model, which PEFT adds by their v4 names whatever it
    excludes (``_resolve_string_target_modules``, ``utils/transformers_weight_conversion.py:369`` to ``:373``), and
    a regex's whose short names hold theirs, in every layer (`converted_parameters`), as parameters, which no
    exclusion leaves out (``_inject_parameters``, ``tuners/tuners_utils.py:1008`` to ``:1011``,
    ``:1225`` to ``:1250``); `re.error` where either is no regular expression."""
    adapted = _adapts(pattern, excluded, names)

    def in_a_layer(name: str, linear: bool = False) -> bool:
        return any(adapted(full_name, linear) for full_name in layer_module_names(name, names))

    linears = tuple(name.split(".", 1)[1] for name in names.adapted if in_a_layer(name, linear=True))
    outer = tuple(name for name in PEFT_OUTER_MODULES if adapted(name, False))
    other = next((name for name in PEFT_OTHER_MODULES if adapted(name, False)), None)
    layer = next((f"model.layers.N{'.' if name else ''}{name}" for name in names.others if in_a_layer(name)), None)
    return TargetMatch(linears, outer, other or layer)


def _adapts(pattern: str, excluded: str | None, names: PeftModuleNames) -> Callable[[str, bool], bool]:
    """Whether the ``target_modules`` regex `pattern` (or ``all-linear``) less `excluded` adapts the module of a full
    name on a model of `names`, given whether it is one ``all-linear`` adapts, as `peft_target_match` says it;
    `re.error` where either is no regular expression."""
    regex = None if all_linear(pattern) else peft_regex(pattern)
    exclusion = None if excluded is None else peft_regex(excluded)
    short = () if regex is None else converted_target_names(pattern, excluded, names)
    parameters = converted_parameters(names)
    mapped = routed_target_names(names)

    def adapted(full_name: str, linear: bool) -> bool:
        if full_name.split(".", 3)[-1] in parameters and (regex is None or short):
            # the router and routed experts: parameters PEFT adds in every layer whatever exclude_modules says,
            # all-linear's each, a regex's where its list of short names holds theirs
            return regex is None or full_name.rsplit(".", 1)[-1] in short
        if exclusion is not None and exclusion.fullmatch(full_name):
            return False
        if short:  # PEFT's list of short names: a module whose name ends in one, the v4 names the experts' alone
            leaf = full_name.rsplit(".", 1)[-1]
            return leaf in short and leaf not in mapped
        return linear if regex is None else bool(regex.fullmatch(full_name))

    return adapted


def converted_parameters(names: PeftModuleNames) -> frozenset[str]:
    """The layer modules (of `PeftModuleNames.adapted`) that PEFT adapts as parameters on a mixture of experts whose
    LoRA config it converts (`PeftModuleNames.fused`; none on another model): the routed experts by their v4 names
    (``mlp.experts.gate_proj``: ``gate_up_proj``, ``down_proj``) and a router named ``mlp.gate`` (``gate.weight``),
    which ``_inject_parameters`` adapts in every layer whatever ``exclude_modules`` says
    (``tuners/tuners_utils.py:1008`` to ``:1011``, ``:1225`` to ``:1250`` in peft 0.21.2: it matches
    ``target_parameters`` alone)."""
    if not names.fused:
        return frozenset()
    return frozenset(name for name in names.adapted if ".experts." in name or name == names.router == "mlp.gate")


def excluded_yet_adapted(pattern: str, excluded: str, names: PeftModuleNames,
                         layers: ModuleLayers = every_layer) -> tuple[str, ...]:
    """The router's and routed experts' names (`converted_parameters`: ``mlp.gate``, ``mlp.experts.gate_proj``) that
    the ``exclude_modules`` regex `excluded` matches whole, by that name or the experts' module's
    (``model.layers.3.mlp.experts``), in a layer that holds them (`layers`) where the ``target_modules`` regex
    `pattern` (or ``all-linear``) adapts them all the same (`peft_target_match`: as parameters, which no exclusion
    leaves out; all-linear's in every layer, a regex's where another layer's name keeps them among its short names),
    in `names.adapted`'s order; () where there is none, or the model's LoRA config is not converted; `re.error` where
    either is no regular expression."""
    exclusion, adapted = peft_regex(excluded), _adapts(pattern, excluded, names)

    def excluded_there(full_name: str) -> bool:
        experts = full_name.rsplit(".", 1)[0] if ".experts." in full_name else full_name
        return bool(exclusion.fullmatch(full_name) or exclusion.fullmatch(experts))

    return tuple(name for name in names.adapted if name in converted_parameters(names) and any(
        excluded_there(full_name) and adapted(full_name, True)
        for full_name in layer_module_names(name, names, layers(name))))


@lru_cache(maxsize=512)
def adapted_modules(pattern: str, excluded: str | None, names: PeftModuleNames, name: str,
                    layers: tuple[int, ...]) -> int:
    """How many modules of the name `name` (one of `names.adapted`) in the layers of the indices `layers` the
    ``target_modules`` regex `pattern` (or ``all-linear``) less `excluded` adapts, as `peft_target_match` matches
    each full name (``model.layers.5.self_attn.o_proj``, `layer_module_names`): one per layer, and under transformers
    4 per routed expert of a name holding `EXPERT_INDEX` (``.*experts\\.[0-3]\\..*_proj`` four in each expert layer
    of Qwen3-MoE's 128; ``.*\\.o_proj`` less ``.*layers\\.0\\..*`` every layer but the first); `re.error` where
    either is no regular expression."""
    adapted = _adapts(pattern, excluded, names)
    return sum(adapted(full_name, True) for full_name in layer_module_names(name, names, layers))


def adapts_the_same(first: tuple[str, str | None], second: tuple[str, str | None], names: PeftModuleNames) -> bool:
    """Whether the ``target_modules`` regex (or ``all-linear``) and ``exclude_modules`` of `first` and of `second`
    adapt the same modules of a model of `names` (`peft_target_match`), and as many of each in its layers and
    transformers 4's routed experts (`adapted_modules` over `PEFT_LAYERS` layers), so that an adapter of one rank is
    counted alike on either (``solver.memory.adapted_shapes``); `re.error` where one is no regular expression."""
    def counts(pattern: str, excluded: str | None) -> tuple[int, ...]:
        return tuple(adapted_modules(pattern, excluded, names, name, tuple(range(PEFT_LAYERS)))
                     for name in names.adapted)

    return (peft_target_match(*first, names) == peft_target_match(*second, names)
            and counts(*first) == counts(*second))


def converted_target_names(pattern: str, excluded: str | None, names: PeftModuleNames) -> tuple[str, ...]:
    """The short names PEFT makes of the ``target_modules`` regex `pattern` (not ``all-linear``) less `excluded` on a
    mixture of experts whose config it converts (`PeftModuleNames.fused`; () on another model): the last part of each
    module name the regex matches whole and `excluded` does not, the routed experts' by their v4 names
    (``_resolve_string_target_modules``, ``utils/transformers_weight_conversion.py:355`` to ``:399`` in peft 0.21.2),
    which it then matches as a list, as name endings (``_convert_peft_config_moe``, ``:406`` to ``:450``): a module
    whose name ends in one is adapted in every layer (``layers\\.0\\..*q_proj`` adapts each layer's ``q_proj``), and
    ``gate`` and the experts' v4 names adapt the router and the routed experts alone (PEFT maps them to their
    parameters). In the order of `PEFT_OTHER_MODULES`, `PEFT_OUTER_MODULES` and the layers' names; `re.error` where
    either is no regular expression."""
    if not names.fused:
        return ()
    regex, exclusion = peft_regex(pattern), None if excluded is None else peft_regex(excluded)
    full_names = [*PEFT_OTHER_MODULES, *PEFT_OUTER_MODULES, *(full_name for name in (*names.adapted, *names.others)
                                                              for full_name in layer_module_names(name, names))]
    return tuple(dict.fromkeys(name.rsplit(".", 1)[-1] for name in full_names if regex.fullmatch(name) and not (
        exclusion is not None and exclusion.fullmatch(name))))


def routed_target_names(names: PeftModuleNames) -> frozenset[str]:
    """The short names PEFT maps to the router's and the routed experts' parameters on a mixture of experts of
    `names` whose LoRA config it converts (``_MOE_TARGET_MODULE_MAPPING``' keys,
    ``utils/transformers_weight_conversion.py:332`` to ``:345`` in peft 0.21.2): ``gate``, always, and the last names
    of the routed experts' v4 names (a ``target_modules`` that names none of them leaves ``target_parameters``
    empty)."""
    return frozenset({"gate", *(name.rsplit(".", 1)[-1] for name in names.adapted if ".experts." in name)})


def adapts_all(match: TargetMatch, names: PeftModuleNames) -> bool:
    """Whether `match` (`peft_target_match` on `names`) holds every layer module ``all-linear`` adapts."""
    return match.linears == tuple(name.split(".", 1)[1] for name in names.adapted)


NO_MATCH = TargetMatch((), (), None)
"""A ``target_modules`` regex's match where it matches no module (`peft_target_match`)."""


def excludes_every_module(excluded: str, names: PeftModuleNames, layers: ModuleLayers = every_layer) -> bool:
    """Whether the ``exclude_modules`` regex `excluded` matches whole every module name of a model of `names` whose
    layers hold its modules as `layers` says (the others, norms and blocks, in every layer) but the model itself,
    which PEFT skips: PEFT then leaves every module out and raises "All modules were excluded"
    (``tuners/tuners_utils.py:1052`` to ``:1057`` in peft 0.21.2), not "No modules were targeted for adaptation",
    which it raises where some module is neither adapted nor excluded (``:1074`` to ``:1086``); `re.error` where it is
    no regular expression."""
    exclusion = peft_regex(excluded)
    # A converted mixture of experts' routed experts are one module (mlp.experts): their v4 names, the fused halves'
    # and the down projection's alike (mlp.experts.down_proj, Mixtral's w2: parameters now), are no module's.
    blocks = {fused.rsplit(".", 1)[0] for fused in names.fused}
    all_layers = sorted({layer for name in names.adapted for layer in layers(name)})
    layer_names = [*((name, layers(name)) for name in names.adapted
                     if name.rsplit(".", 1)[0].rsplit(".", 1)[-1] not in blocks),
                   *((name, all_layers) for name in names.others)]
    full_names = itertools.chain((name for name in PEFT_OTHER_MODULES if name), PEFT_OUTER_MODULES, (
        full_name for name, held in layer_names for full_name in layer_module_names(name, names, held)))
    return all(exclusion.fullmatch(name) for name in full_names)


def adapts_some_module(pattern: str, excluded: str | None, names: PeftModuleNames,
                       layers: ModuleLayers = every_layer) -> bool:
    """Whether the ``target_modules`` regex `pattern` (or ``all-linear``) less `excluded` adapts some module of a
    model of `names` whose layers hold its modules as `layers` says: one outside the layers, or a layer module in a
    layer that holds it (`adapted_modules`, as ``Model.adapted_layers`` counts it; a module PEFT cannot adapt,
    `TargetMatch.other`, counts too: PEFT fails on it otherwise); `re.error` where either is no regular
    expression."""
    return bool(peft_target_match(pattern, excluded, names).beyond_all_linear) or any(
        adapted_modules(pattern, excluded, names, name, tuple(layers(name))) for name in names.adapted)


MATCHES_NO_MODULE = "matches no module"
"""`peft_target_refusal`'s words for a regex that matches no module."""
SPACED_ALL_LINEAR = ("is all-linear with spaces around it, which peft takes as a regular expression (it lowers the "
                     "word but strips nothing) and which matches no module")
"""`peft_target_refusal`'s words for ``all-linear`` with spaces around it (`spaced_all_linear`)."""


def spaced_all_linear(targets: str) -> bool:
    """Whether ``target_modules`` `targets` is ``all-linear`` (in any case) with spaces around it (``' all-linear '``,
    as a quoted YAML string keeps them), which PEFT does not take as the word: it lowers ``target_modules`` but strips
    nothing (``_maybe_include_all_linear_layers``, ``tuners/tuners_utils.py:2439`` to ``:2442``, and
    ``_resolve_string_target_modules``, ``utils/transformers_weight_conversion.py:368``, in peft 0.21.2), so it is a
    regex that matches no module, and PEFT raises "Target modules  all-linear  not found in the base model"."""
    return not all_linear(targets) and all_linear(targets.strip())


EXCLUDE_FEWER = "exclude fewer, or remove it"
"""What to do where an ``exclude_modules`` regex leaves out every module the targets match (`every_target_excluded`)."""
EXCLUDED_FORM = "give a regular expression that matches whole names, such as .*\\.v_proj, or remove it"
"""What to do where an ``exclude_modules`` is no regular expression (a config's, a cluster job's)."""


def every_target_excluded(pattern: str, excluded: str, names: PeftModuleNames, targets: str,
                          layers: ModuleLayers = every_layer) -> str | None:
    """Why PEFT fails where the ``exclude_modules`` regex `excluded` leaves out every module the ``target_modules``
    regex `pattern` alone matches on a model of `names` whose layers hold its modules as `layers` says
    (`adapts_some_module`: ``.*layers\\.([0-9]|[12][0-9]|3[0-5])\\..*`` leaves none of a 36-layer model's), in words
    that follow the exclusions' key and name the targets as `targets` (``target_modules '...'``): "All modules were
    excluded" where it leaves out every module of the model (`excludes_every_module`), else "No modules were targeted
    for adaptation" (both a ``NoMatchingPeftModuleError``, a ``ValueError``, from ``inject_adapter``,
    ``tuners/tuners_utils.py:1051`` to ``:1086`` in peft 0.21.2); None where the targets alone match no module, or
    something is left to adapt."""
    if not adapts_some_module(pattern, None, names, layers) or adapts_some_module(pattern, excluded, names, layers):
        return None
    none = "All modules were excluded" if excludes_every_module(excluded, names, layers) else (
        "No modules were targeted for adaptation")
    return f"leaves out every module {targets} matches (\"{none}\")"


def peft_target_refusal(pattern: str, excluded: str | None, names: PeftModuleNames) -> str | None:
    """Why PEFT fails on a ``target_modules`` regex `pattern` less `excluded` (`peft_target_match`) on a model of
    `names`, in words that follow the key: it matches no module, one of the routed experts' two projections PEFT fuses
    (`PeftModuleNames.fused`) alone (PEFT's conversion refuses it first), or a module that is no layer PEFT adapts (a
    norm, an MLP block, the experts module, an activation, an attention block, a decoder layer, the model:
    ``_create_new_module`` raises "Target module ... is not supported", ``tuners/lora/model.py:559`` in peft 0.21.2,
    and for ``.*`` on a mixture of experts "target_modules should not contain an empty string"), the first of them
    named; None where PEFT takes it; `re.error` where either is no regular expression."""
    match = peft_target_match(pattern, excluded, names)
    if match == NO_MATCH:
        return SPACED_ALL_LINEAR if spaced_all_linear(pattern) else MATCHES_NO_MODULE
    fused = [name for name in names.fused if name in match.linears]
    if len(fused) == 1:
        alone, other = fused[0].split(".")[1], next(name for name in names.fused if name != fused[0]).split(".")[1]
        return (f"matches the routed experts' {alone} without their {other}, which PEFT fuses into gate_up_proj "
                "(\"Cannot convert PEFT target(s) ... because they are fused\")")
    if match.other is not None:
        return (f"matches {match.other}, which PEFT cannot adapt (\"Target module ... is not supported\": it adapts "
                "linear layers and embeddings alone)")
    return None


def same_modules_regex(pattern: str, excluded: str | None, taken: PeftModuleNames,
                       other: PeftModuleNames) -> str | None:
    """A ``target_modules`` regex that adapts on a model of `other`'s names (the other transformers' of one model) the
    modules `pattern` less `excluded` adapts on `taken`'s, and those on `taken`'s too: each matched layer module, or
    where `other` names it otherwise, its counterpart there (the routed experts' or the router's of the same last
    name: transformers 4's ``mlp.experts.E.gate_proj`` is 5's ``mlp.experts.gate_proj``, Mixtral's
    ``block_sparse_moe.experts.E.w1`` its ``mlp.experts.w1``), as ``.*\\.(BLOCK|BLOCK)\\.(LEAF|LEAF)`` where every
    block has the same last names, else one name each; None where a module has no counterpart, or where PEFT fails on
    it on either (`peft_target_refusal`: Mixtral's ``w1`` without ``w3`` on transformers 5, which fuses them)."""
    match = peft_target_match(pattern, excluded, taken)
    matched = [name for name in taken.adapted if name.split(".", 1)[1] in match.linears]
    counterparts = []
    for name in matched:
        leaf, expert = name.rsplit(".", 1)[-1], ".experts." in name
        same = [each for each in other.adapted if each == name or each.rsplit(".", 1)[-1] == leaf
                and (".experts." in each if expert else each == other.router and name == taken.router)]
        if not same:
            return None
        counterparts += same
    if not matched or match.beyond_all_linear:  # only layer modules: the embeddings and lm_head are one name
        return None
    names = list(dict.fromkeys((*matched, *counterparts)))
    leaves: dict[str, list[str]] = {}
    for name in names:
        block, _, leaf = name.rpartition(".")
        leaves.setdefault(block, []).append(leaf)

    def escaped(name: str) -> str:
        return "\\.".join("\\d+" if part == EXPERT_INDEX else re.escape(part) for part in name.split("."))

    def either(parts: list[str]) -> str:
        return parts[0] if len(parts) == 1 else f"({'|'.join(parts)})"

    if "" not in leaves and len({tuple(each) for each in leaves.values()}) == 1:
        (shared,) = {tuple(each) for each in leaves.values()}
        regex = f".*\\.{either([escaped(block) for block in leaves])}\\.{either(list(shared))}"
    else:
        regex = f".*\\.{either([escaped(name) for name in names])}"
    same_modules = peft_target_match(regex, excluded, taken).linears == match.linears
    taken_by_both = peft_target_refusal(regex, excluded, taken) is None and peft_target_refusal(
        regex, excluded, other) is None
    return regex if same_modules and taken_by_both else None


ALL_LINEAR = "all-linear"
"""PEFT's word for every linear layer but the output projection, Trinity's default ``target_modules``."""
LORA_TARGETS_FORMS = (f"{ALL_LINEAR} (Trinity's default: every linear layer but the output projection), module "
                      "names separated by commas (q_proj,v_proj) or a regular expression that PEFT matches whole "
                      "module names with (.*\\.(q_proj|v_proj))")
"""The forms of the LoRA targets an option takes (``solver.query.given_lora_targets``, ``--lora-targets``), as
Trinity's ``model.lora_configs[0].target_modules`` takes a regex (or ``all-linear``)."""


def all_linear(targets: object) -> bool:
    """Whether ``target_modules`` `targets` is PEFT's ``all-linear`` (unset, Trinity's default, or the word in any case:
    PEFT lowers it, ``tuners/tuners_utils.py:2439`` to ``:2442`` in peft 0.21.2)."""
    return targets is None or isinstance(targets, str) and targets.lower() == "all-linear"


MODULE_NAME = re.compile(r"\w+")
"""A module's last name (``q_proj``); such names separated by commas, `lora_targets_pattern` makes a regex of."""
TOP_MODULES = tuple(name for name in (*PEFT_OTHER_MODULES, *PEFT_OUTER_MODULES) if "." not in name)
"""The modules of a model's own top level (``model``, ``lm_head``), whose full names are their last names: PEFT's list
of names matches them as they are (``key in target_modules``, ``tuners/tuners_utils.py:2372`` in peft 0.21.2), which
``.*\\.lm_head`` would not."""


def lora_targets_pattern(targets: str) -> str | None:
    """The ``target_modules`` regex LoRA targets given in one of `LORA_TARGETS_FORMS` come to: None for ``all-linear``;
    module names as the regex that matches them wherever PEFT's list of them does, a module of that name or whose
    name ends in ``.`` and one (``.*\\.(q_proj|v_proj)``; ``(.*\\.)?lm_head`` where one names a top module,
    `TOP_MODULES`), each once, an empty one between commas dropped and spaces around each taken off (no module's
    name holds a comma or a space, so no regex with them matches one: ``q_proj,`` is a list); else `targets` itself
    (not checked: ``solver.query.given_lora_targets`` checks it)."""
    if all_linear(targets):
        return None
    modules = comma_module_names(targets)
    if modules:  # PEFT's list: the names' endings
        prefix = "(.*\\.)?" if set(modules) & set(TOP_MODULES) else ".*\\."
        return prefix + (modules[0] if len(modules) == 1 else f"({'|'.join(modules)})")
    return targets


def comma_module_names(targets: str) -> list[str] | None:
    """The module names of LoRA targets given as names separated by commas (``q_proj,v_proj``), each once, an empty
    one between commas dropped and spaces around each taken off; None where `targets` are no such list (a regex)."""
    modules = list(dict.fromkeys(name.strip() for name in targets.split(",") if name.strip()))
    return modules if modules and all(MODULE_NAME.fullmatch(name) for name in modules) else None


def listed_module_names(targets: str) -> list[str] | None:
    """The module names of LoRA targets written as another tool writes a list of them, where none of
    `LORA_TARGETS_FORMS` reads them so: in brackets as JSON or YAML writes one (``["q_proj", "v_proj"]``, PEFT's
    ``adapter_config.json``), or separated by spaces (``q_proj v_proj``); None otherwise. Read as a regex, each
    matches no module (no module's name holds a bracket, a quote or a space)."""
    inner = targets.strip()
    bracketed = inner.startswith("[") and inner.endswith("]")
    names = [name.strip("\"'") for name in re.split(r"[\s,]+", inner[1:-1] if bracketed else inner) if name]
    if not (bracketed or len(names) > 1) or not names or not all(MODULE_NAME.fullmatch(name) for name in names):
        return None
    return names


NAMES_PATTERN = re.compile(r"\.\*\\\.(?:(\w+)|\((\w+(?:\|\w+)*)\))")
"""The regex that module names separated by commas come to (``.*\\.(q_proj|v_proj)``: `lora_targets_pattern`)."""


def targets_brief(pattern: str) -> str:
    """A LoRA adapter's ``target_modules`` regex `pattern` briefly: the module names it was made of, separated by
    commas (``q_proj,v_proj``), where it is `lora_targets_pattern`'s of names; else the regex, cut to 24 characters."""
    names = NAMES_PATTERN.fullmatch(pattern)
    if names is None:
        return pattern if len(pattern) <= 24 else pattern[:21] + "..."
    return (names.group(1) or names.group(2)).replace("|", ",")


def adapted_brief(pattern: str | None, excluded: str | None) -> str:
    """The modules a LoRA adapter is counted on, briefly (`targets_brief`), in words after it: `` on q_proj,v_proj``,
    `` on all-linear less .*\\.layers\\.0\\..*`` (less those its ``exclude_modules`` regex `excluded` matches);
    "" for all-linear's (`pattern` None) without exclusions."""
    return (f" on {targets_brief(pattern)}" if pattern is not None else "") + (
        f" less {targets_brief(excluded)}" if excluded is not None else "")
