"""patch_trinity_config: a user's Trinity config with a plan applied (ruamel round trip, comments kept), what the
patch says of the config's anchors and interpolations, and the patched config's problems (`patched_config_problems`).

ruamel keeps a comment that follows a block (blank lines, "# next section") on the last scalar of
that block. When a key is appended to, or removed from, the end of a block, that trailing comment is
moved so it stays in front of whatever came after the block.
"""

from __future__ import annotations

import io
import json
import re
import threading
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from copy import deepcopy
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import islice, pairwise
from math import inf
from types import MappingProxyType
from typing import Any, NamedTuple

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq, merge_attrib
from ruamel.yaml.compat import ordereddict
from ruamel.yaml.error import CommentMark
from ruamel.yaml.representer import RoundTripRepresenter
from ruamel.yaml.scalarbool import ScalarBoolean
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, ScalarString
from ruamel.yaml.tokens import CommentToken

from solver.query import (
    MODEL_PATH_KEY,
    TRAIN_BATCH_KEY,
    ConfigAdapter,
    ConfigProblem,
    ConfigProblemCode,
    check_host_ram,
)
from solver.results import CautionCode, ConfigKeyChange, Plan, past_validated_note, written_release
from solver.rules import API_OPTIONS, COMMAND_OPTIONS, OptionNames, splits_batch, trainer_nodes_of
from solver.tables import (
    CONFIG_SHAPE,
    Model,
    QueryError,
    TrinityVersion,
    cached_names,
    check_types,
    computed_once,
    counted,
    it_or_them,
    load_catalog,
    local_model_config,
    model_name_from_path,
    parsing_once,
    written_layout,
    yaml_brief,
)
from solver.tables.text import and_joined, either, yaml_flow_text
from solver.trinity.checks import new_adapter_refused, trinity_config_problems
from solver.trinity.config import (
    cluster_trainer_gpus,
    config_counted_lora_rank,
    config_counted_lora_targets,
    lora_configs_refused,
    memory_unread_keys,
    refused_lora_fix,
    refused_lora_key,
    unset_variables,
    written_adapter,
    written_lora,
)
from solver.trinity.fragment import check_command, names_relative_path
from solver.trinity.interpolation import ConfigValues, is_interpolation
from solver.trinity.keys import (
    CRITIC_ENGINE,
    OFFLOAD_FLAGS,
    ROLLOUT_MODEL,
    UNTYPED_SECTIONS,
    ConfigError,
    keys_05_refuses,
    keys_05_refuses_why,
    keys_05_refuses_words,
    rope_type_key,
    trains_critic,
    value_at,
    written_for_05_comment,
    yaml_flow,
    yaml_scalar,
)
from solver.trinity.plan_keys import (
    COMMENT_WIDTH,
    CRITIC_FLAGS,
    PlanKey,
    adapter_unkept,
    caution_comment,
    check_gpu_name,
    comment_paragraph,
    config_dpo_in_rows,
    config_trains_dpo,
    critic_engine_comment,
    dpo_pair_note,
    evidence_comment,
    host_memory_comment,
    kept_own_keys,
    keys_for_plan,
    trinity_06_keys_comment,
)
from solver.trinity.reader import (
    ConfigReader,
    aliased_anchors,
    check_config_arguments,
    critic_offload_turned_off,
    load_config_mapping,
    prompt_response_and_length,
    read_or_none,
)


def _tail(node: Any) -> tuple[Any, Any, int] | None:
    """Where the comment after `node`'s block lives: (container, key or index, slot), or None (for a flow-style
    collection, on one line, it lives with the key that holds it). A mapping's block ends with its own last key (not
    one a ``<<: *anchor`` merges in, which is written at the anchor)."""
    if isinstance(node, CommentedMap | CommentedSeq) and node.fa.flow_style():
        return None
    if isinstance(node, CommentedMap) and (own := [key for key, _ in node.non_merged_items()]):
        return _tail_at(node, own[-1], 2)
    if isinstance(node, CommentedSeq) and len(node):
        return _tail_at(node, len(node) - 1, 0)
    return None


def _tail_at(container: Any, key: Any, slot: int) -> tuple[Any, Any, int]:
    """Where the comment after the block of ``container[key]`` lives (`_tail`), or (container, key, slot), its
    key's own, where the value is no block or is written there as an alias (`_written_as_alias`): the comment after
    the aliased block's text belongs to the anchor's place, not the alias's (before, a key appended after an alias
    took that comment from the anchor's place to its own)."""
    deeper = None if _written_as_alias(container, key) else _tail(container[key])
    return deeper if deeper is not None else (container, key, slot)


def _written_as_alias(container: Any, key: Any) -> bool:
    """Whether ``container[key]``, as the round trip read it, is an alias: ruamel records the position of the node
    it takes a value to be, so an alias's is its anchor's, before the alias's key (a mapping's) or at or before an
    earlier item's or its list's start (a list's); a value the patch added has no position, and is none."""
    try:
        if isinstance(container, CommentedMap):
            return bool(container.lc.value(key) < container.lc.key(key))
        position = container.lc.item(key)
        earlier = [container.lc.item(index) for index in range(key)]
        return bool(position < (container.lc.line, container.lc.col) or any(at >= position for at in earlier))
    except (AttributeError, KeyError, TypeError):  # a value the patch added: no position
        return False


def _take_trailing(node: Any) -> str:
    """Cut the lines after `node`'s last line (blank lines, comments) off its tail comment; return them."""
    where = _tail(node)
    if where is None:
        return ""
    container, key, slot = where
    entry = container.ca.items.get(key)
    token = entry[slot] if entry and len(entry) > slot else None
    if token is None or not isinstance(token, CommentToken):
        return ""
    own, newline, rest = token.value.partition("\n")  # its own line's comment, and the lines after
    if own.strip():
        token.value = own + newline
    else:
        entry[slot] = None
    return rest


def _give_trailing(container: Any, key: Any, rest: str) -> None:
    """Put the lines `rest` after the block of ``container[key]`` (`_tail_at`)."""
    if not rest:
        return
    holder, holder_key, slot = _tail_at(container, key, 0 if isinstance(container, CommentedSeq) else 2)
    entry = holder.ca.items.setdefault(holder_key, [None, None, None, None])
    token = entry[slot]
    if isinstance(token, CommentToken):
        token.value = token.value + rest if token.value.endswith("\n") else token.value + "\n" + rest
    else:
        entry[slot] = CommentToken("\n" + rest, CommentMark(0), None)


def _append(mapping: CommentedMap, key: str, value: Any) -> None:
    rest = _take_trailing(mapping)
    mapping[key] = value
    _give_trailing(mapping, key, rest)


def _is_block(value: Any) -> bool:
    """Whether `value` is a mapping or sequence written as a block (on lines of its own), not in flow style."""
    return isinstance(value, CommentedMap | CommentedSeq) and not value.fa.flow_style()


def _add(mapping: CommentedMap, key: str, value: Any, after: str | None = None) -> None:
    """Add `key`, missing from `mapping`, with a scalar `value` (a plan's keys are scalars; `_set` adds missing
    sections): right after the scalar key `after` where the mapping has it (`PlanKey.after`), else before the
    mapping's first block (``trainer_config``), after the scalar key there, whose end-of-line comment stays beside it
    while the lines after it (leading into what follows) go after the new key; at the end of a mapping where that is
    its end, that has no block, starts with one or merges another (``<<:``)."""
    keys = list(mapping.keys())
    first = (keys.index(after) + 1 if after in keys else
             next((index for index, name in enumerate(keys) if _is_block(mapping[name])), None))
    merges = getattr(mapping, merge_attrib, None)  # a ``<<: *anchor``, whose keys `keys` holds too: at the end
    if not first or merges or first == len(keys):  # first: None (no block), 0 (a block)
        _append(mapping, key, value)
        return
    mapping.insert(first, key, value)
    entry = mapping.ca.items.get(keys[first - 1])
    token = entry[2] if entry and len(entry) > 2 else None
    if isinstance(token, CommentToken) and (rest := token.value.partition("\n")[2]):
        token.value = token.value[: len(token.value) - len(rest)]
        mapping.ca.items[key] = [None, None, CommentToken("\n" + rest, CommentMark(0), None), None]


def _delete_merged(mapping: CommentedMap, key: str) -> None:
    """``del mapping[key]``, and `key` gone too from each mapping that merges `mapping` (``<<: *anchor``) and does
    not set it itself, or taken from the next mapping it merges that has it: ruamel.yaml (0.18 and 0.19 alike) fails
    at that itself (``CommentedMap.update_key_value`` reads each merged mapping as a pair: ``KeyError: 1``)."""
    referers = list(mapping._ref)
    mapping._ref.clear()  # ruamel's own update of them, which fails
    try:
        del mapping[key]
    finally:
        mapping._ref.extend(referers)
    for referer in referers:
        if key in referer._ok or not ordereddict.__contains__(referer, key):  # its own key, or not merged in
            continue
        source = next((merged for merged in referer.merge if key in merged), None)
        if source is None:
            ordereddict.__delitem__(referer, key)
        else:
            ordereddict.__setitem__(referer, key, source[key])


def _delete(mapping: CommentedMap, key: str, unset: bool = False) -> None:
    """Remove `key`; the lines after its block (which lead into what follows) go to the key before it. A key the
    mapping only merges in (``<<: *anchor``: not its own) is set to null there instead, its anchor left as it is (it
    may be others' too): Trinity reads a null as the key unset. So is, where the key is to be `unset` (not for one
    Trinity refuses in any value, as 0.5 does 0.6's trainer keys), one of its own that it merges in too: removed, the
    merged value would take its place."""
    if key not in mapping._ok or (unset and any(key in merged for merged in mapping.merge)):
        mapping[key] = None
        return
    keys = list(mapping.keys())
    wrapper = CommentedMap()
    wrapper[key] = mapping[key]
    if key in mapping.lc.data:  # where the round trip read it: an alias's tail is its key's own (`_tail_at`)
        wrapper.lc.add_kv_line_col(key, mapping.lc.data[key])
    if key in mapping.ca.items:
        wrapper.ca.items[key] = mapping.ca.items[key]
    rest = _take_trailing(wrapper)
    _delete_merged(mapping, key)
    mapping.ca.items.pop(key, None)
    index = keys.index(key)
    if rest and index > 0:
        previous = keys[index - 1]
        _give_trailing(mapping, previous, rest)
    elif rest and mapping:  # the first key's: they go before the new first key, after the comments there
        comment = mapping.ca.comment  # [the end-of-line comment of the mapping's key, the comments before its first]
        if comment is None:
            mapping.ca.comment = comment = [None, None]
        if isinstance(comment[0], CommentToken):  # the mapping's key's end-of-line comment, and the lines after it
            comment[0].value += rest
        else:  # appended in place: where the section has comments there, ruamel writes the list its key holds too
            if comment[1] is None:
                comment[1] = []
            comment[1].append(CommentToken(rest, CommentMark(0), None))


def _replace(mapping: CommentedMap, key: str, value: Any, lines: list[str], aliased: dict[int, Any]) -> None:
    """Overwrite `key`'s value, written as the old one was (`_written_as`: its anchor, unless it is one of the
    `aliased` scalars, and its quotes), or, where it is one of those the patch sets to one value at every place,
    with the one scalar `aliased` holds for it (`_shared_anchors`), keeping its end-of-line comment the same distance
    after the value; a comment between the key and a value on the next line (``max_model_len: &len  # ...``), which
    ruamel writes nowhere, becomes the new value's end-of-line comment, in front of the lines that followed the
    value."""
    entry = mapping.ca.items.get(key)
    old = mapping[key]
    if entry and len(entry) > 3 and entry[3] and not isinstance(old, CommentedMap | CommentedSeq):
        between, after = "".join(token.value for token in entry[3]), entry[2]
        column = entry[3][0].column
        entry[2] = CommentToken(between + (after.value if isinstance(after, CommentToken) else ""),
                                CommentMark(column), None)
        entry[3] = None
    token = entry[2] if entry and len(entry) > 2 else None
    shared = aliased.get(id(old))
    mapping[key] = written = shared if shared is not None else _written_as(old, value, id(old) not in aliased)
    if not isinstance(token, CommentToken) or not token.value.startswith("#"):
        return
    try:
        line_no, key_col = mapping.lc.key(key)
        line, old_col = lines[line_no], token.column
    except (AttributeError, IndexError, KeyError, TypeError):  # pragma: no cover - no position to go by
        return
    before = line[key_col:old_col].rstrip()
    gap = max(old_col - (key_col + len(before)), 1)
    token.column = key_col + len(f"{key}: {_scalar_text(written)}") + gap


def _written_as(old: Any, value: Any, anchored: bool) -> Any:
    """The plan's `value` as the config's `old` value at its key was written: with its anchor where `anchored` (an
    anchor that aliases repeat stays with the old value, ruamel then writing it at the first alias), and, text over
    text, in its quotes."""
    anchor = getattr(getattr(old, "anchor", None), "value", None) if anchored else None
    style = getattr(old, "style", None) if isinstance(old, ScalarString) and isinstance(value, str) else None
    quote = style if style in ('"', "'") else ""
    if anchor is None and not quote or isinstance(value, list):  # the LoRA configs: the plan's list, as it is
        return value
    yaml = YAML(typ="rt", pure=True)
    yaml.preserve_quotes = True
    return yaml.load(f"{'' if anchor is None else f'&{anchor} '}{quote}{yaml_scalar(value)}{quote}")


def _scalar_text(value: Any) -> str:
    """A scalar `_written_as` gives, as ruamel writes it: its anchor, its quotes, `yaml_scalar`'s text."""
    anchor = getattr(getattr(value, "anchor", None), "value", None)
    style = getattr(value, "style", None) if isinstance(value, ScalarString) else None
    quote = style if style in ('"', "'") else ""
    plain = bool(value) if isinstance(value, ScalarBoolean) else value
    return f"{'' if anchor is None else f'&{anchor} '}{quote}{yaml_scalar(plain)}{quote}"


def _set(root: CommentedMap, key: PlanKey, lines: list[str], aliased: dict[int, Any]) -> None:
    """Set `key`'s path to its value, adding missing sections (whole, at the end of their parent) and keys (`_add`: a
    scalar after the key it names, `PlanKey.after`, else beside its section's scalars, before its first nested
    block). (A key set only where present, `PlanKey.existing_only`, reaches here only where the config has it:
    `_writes`.)"""
    path, value = key.path, key.value
    node = root
    for depth, part in enumerate(path[:-1]):
        child = node.get(part)
        if isinstance(child, CommentedMap):
            node = child
            continue
        if child is not None:
            raise ConfigError(f"{'.'.join(path[: depth + 1])} must be a mapping, got {yaml_brief(child)}")
        subtree: Any = value
        for missing in reversed(path[depth + 1 :]):
            subtree = CommentedMap([(missing, subtree)])
        if part in node:  # an empty section (``trainer:`` with nothing under it)
            node[part] = subtree
        else:
            _append(node, part, subtree)
        return
    last = path[-1]
    if last in node:
        _replace(node, last, value, lines, aliased)
    else:
        _add(node, last, value, key.after)


def _indentation(text: str) -> tuple[int, int, int]:
    """The config's block indentation as ruamel wants it: (mapping, sequence, offset of the dash)."""
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    mapping = sequence = offset = None
    for above, line in pairwise(lines):
        parent_col = len(above) - len(above.lstrip())
        col = len(line) - len(line.lstrip())
        opens = re.match(r"^\s*(- )?[^#]*:(?:[ \t]+[&!][^\s#]*)*\s*(#.*)?$", above)  # an anchor or tag may follow
        if not opens or col < parent_col or (col == parent_col and not line.lstrip().startswith("- ")):
            continue
        if above.lstrip().startswith("- "):
            continue
        if line.lstrip().startswith("- ") and sequence is None and col >= parent_col:
            offset = col - parent_col
            content = len(line) - len(line.lstrip()[1:].lstrip())
            sequence = content - parent_col
        elif not line.lstrip().startswith("- ") and mapping is None:
            mapping = col - parent_col
    mapping = mapping or 2
    if sequence is None:
        sequence, offset = mapping, 0
    return mapping, max(sequence, (offset or 0) + 2), offset or 0


_NULL_WORD = re.compile(r"^[^#\n]*:[ \t]+null[ \t]*(#.*)?$", re.MULTILINE)
"""A ``key: null`` line, not in a comment: a config that has one has its nulls written as ``null`` (ruamel writes
nothing)."""


_DOCUMENT_START = re.compile(r"---(?:[ \t]|$)")
"""The start of a document start marker line, ``---``."""
_DOCUMENT_END = re.compile(r"\.\.\.[ \t]*(#.*)?")
"""A document end marker line, ``...`` (with a comment, perhaps)."""


def _within(lines: list[str]) -> list[int]:
    """The indices of the `lines` that are neither blank nor comments."""
    return [index for index, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")]


def _outside_document(text: str) -> tuple[str, str]:
    """The lines of the config `text` before its ``---`` line, and from its ``...`` line on, where it has such a
    marker with nothing but comments and blank lines beyond it: ruamel's round trip drops those lines (and their
    comments), so the patch writes them back as they are ("" where there are none)."""
    lines = text.splitlines(keepends=True)
    inside = _within(lines)  # never empty: the text was read as a mapping, which takes a line
    first, last = inside[0], inside[-1]
    head = "".join(lines[:first]) if _DOCUMENT_START.match(lines[first]) else ""
    tail = "".join(lines[last:]) if _DOCUMENT_END.fullmatch(lines[last].rstrip("\n")) else ""
    return head, tail


def _round_trip_yaml(text: str) -> YAML:
    """A ruamel round trip that writes the config `text` as it is written: its indentation, its document start
    marker (what comes before it is `_outside_document`'s), and its nulls as ``null`` where it writes them so."""
    mapping, sequence, offset = _indentation(text)
    yaml = YAML(typ="rt", pure=True)
    yaml.preserve_quotes = True
    yaml.width = 1 << 16
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    # a one-key mapping in a flow list keeps its braces: without, its anchor (``[&a {x: 1}]``) would name the key
    yaml.brace_single_entry_mapping_in_flow_sequence = True
    lines = text.splitlines()
    if any(_DOCUMENT_START.match(lines[index]) for index in _within(lines)[:1]):
        yaml.explicit_start = True
    if _NULL_WORD.search(text):
        yaml.Representer = _NullWordRepresenter
    return yaml


_HOST_MEMORY_COMMENT = re.compile(r"#\s*host memory: .* for Offload\b.*")
"""The host memory note `host_memory_comment` writes (with Offload), as a comment's text."""

_HOST_MEMORY_START = re.compile(r"([ \t]+)#[ \t]*host memory: .* for Offload\b.*\n?")
"""The first line of the host memory note an earlier --write left on lines of its own just above
``trainer.trainer_strategy`` (`_note_host_memory`), and its indentation."""


def _without_host_memory_note(text: str) -> str:
    """`text` without the host memory note an earlier --write left just above ``trainer.trainer_strategy``: its
    first line and the lines that go on with it as a wrap at `COMMENT_WIDTH` would (`_paragraph_end`)."""
    lines = text.splitlines(keepends=True)
    for start in reversed(range(len(lines))):
        if (first := _HOST_MEMORY_START.fullmatch(lines[start])) is None:
            continue
        end = _paragraph_end(lines, start, len(lines))
        if end < len(lines) and lines[end].startswith(f"{first[1]}trainer_strategy:"):
            del lines[start:end]
    return "".join(lines)


def _note_host_memory(data: CommentedMap, plan: Plan, model: Model, version: TrinityVersion | None,
                      host_ram_gb: float | None, indent: int, host_ram_source: str) -> None:
    """With Offload, what the plan of `model` needs of a node's host memory under the Trinity release `version` the
    config is written for and whether it was held to `host_ram_gb` (from
    `host_ram_source`, as the note names it: ``--host-ram``, ``host_ram_gb``; `host_memory_comment`) as a comment on its
    own line (at column `indent`) just above ``trainer.trainer_strategy``, which Offload sets, so that it reads as a
    note on the plan's Offload, not on that key, wrapped as the note above ``max_model_len`` is (`_wrapped`); none in a
    flow-style ``trainer``, on one line. The note as an earlier --write left it beside that key is removed (one on lines
    of its own is gone before the config is read: `_without_host_memory_note`); a comment of the user's own there
    stays."""
    trainer = data.get("trainer")
    if not isinstance(trainer, CommentedMap) or trainer.fa.flow_style() or "trainer_strategy" not in trainer:
        return
    entry = trainer.ca.items.get("trainer_strategy")
    if entry is not None and isinstance(entry[2], CommentToken):
        own, newline, rest = entry[2].value.partition("\n")  # its own comment, the lines after its block
        if _HOST_MEMORY_COMMENT.fullmatch(own.strip()):
            entry[2] = CommentToken(newline + rest, CommentMark(0), None) if rest else None
    host = (host_memory_comment(plan, model, version, host_ram_gb=host_ram_gb, host_ram_source=host_ram_source)
            if plan.offload else None)
    if host is not None:
        trainer.yaml_set_comment_before_after_key("trainer_strategy", before="\n".join(_wrapped(host, indent)),
                                                  indent=indent)


_NOTE_START = re.compile(r"#[ \t]*(?:evidence: (?:estimated|inferred): |caution: \S+ GiB to spare where the estimate "
                         r"extrapolates|caution: use_remove_padding false for |max_model_len past the \w+ \d+: |"
                         r"written for Trinity 0\.5(?:\.\d+)? \()")
"""The first line of a paragraph of --write's note (`_note_evidence`): its evidence, its caution on a thin headroom or
on remove padding off, what to do past the validated length (`past_validated_note`), or what Offload written for Trinity
0.5 needs on 0.6 (`written_for_05_comment`), after the line's indentation."""
_NOTE_CONTINUED = re.compile(r"#   (\S+)")
"""A line that goes on with a paragraph of --write's note (its hanging indentation, two spaces), and its first word."""
CHECK_PLACEHOLDER = "CONFIG"
"""The file the check command in --write's note names where the written config's path is not known, or cannot be
written in a comment (it is not printable text)."""
_RELATIVE_PATHS = " (its relative paths from the directory it was written in)"
"""What --write's note says after its check command's intro where the command names a file by a relative path
(`names_relative_path`): where to run it."""
_CHECK_INTRO = re.compile(rf"# To check this file(?: \({CHECK_PLACEHOLDER}: its path\))? as its plan was made"
                          rf"(?:{re.escape(_RELATIVE_PATHS)})?:")
"""The line of --write's note that leads into the command checking the written config, after its indentation."""
_CHECK_LINE = re.compile(r"#   (?:\S+=\S+ )*solve --from-config \S.* --check(?: .*)?")
"""The line of --write's note that holds the command checking the written config (`check_command`)."""


def _wrapped(words: str, indent: int) -> list[str]:
    """`words` as the lines of a paragraph of a --write note at column `indent` (without their ``# ``), wrapped at
    `COMMENT_WIDTH` (`comment_paragraph`), its further lines indented two spaces more: a later --write finds where the
    paragraph ends by them (`_paragraph_end`)."""
    return comment_paragraph(words, indent, hanging="  ")


_OFFLOAD_FLAG_LINE = re.compile(rf"( *)(?:{'|'.join(OFFLOAD_FLAGS)}):", re.MULTILINE)
"""The start of a line that holds an offload flag (a block mapping's key), and its indentation."""


NOTED_FLAGS: dict[tuple[str, ...], Callable[[str], str]] = {("trainer",): trinity_06_keys_comment,
                                                            CRITIC_ENGINE: critic_engine_comment}
"""The sections whose offload flags --write notes where it adds them for no Trinity release named, as the fragment
comments them, with the words of that note (naming the option that leaves them out, which Trinity 0.5 refuses):
Trinity 0.6's own under ``trainer`` (`trinity_06_keys_comment`), and the PPO critic's FSDP engine's, which 0.6 on
verl 0.8 or later reads (`critic_engine_comment`)."""


def _flags_note(indent: int, option_names: OptionNames,
                words: Callable[[str], str] = trinity_06_keys_comment) -> list[str]:
    """--write's note above the offload flags of a section of `NOTED_FLAGS` (by default ``trainer``'s), which it adds
    for no Trinity release named (`_note_flags`): the fragment's comment on them (`words`, naming `option_names`'
    option for Trinity 0.5), wrapped (`_wrapped`) at column `indent`, as the lines of text it writes, without their
    line ends."""
    return [f"{' ' * indent}# {line}" for line in _wrapped(words(option_names.trinity_05), indent)]


def _without_flags_note(text: str) -> tuple[str, frozenset[tuple[str, ...]]]:
    """`text` without the notes an earlier --write (or `patch_trinity_config`) left just above an offload flag
    (`_flags_note`, in either's words, at that flag's indentation), and the sections (of `NOTED_FLAGS`) whose flags
    had one: the flags there are then the patch's, not the user's."""
    lines = text.splitlines(keepends=True)
    noted: list[tuple[int, int]] = []  # the lines of each note: start, end
    sections: set[tuple[str, ...]] = set()
    for index, line in enumerate(lines):
        if (flag := _OFFLOAD_FLAG_LINE.match(line)) is None:
            continue
        notes = ((section, _flags_note(len(flag[1]), names, words)) for section, words in NOTED_FLAGS.items()
                 for names in (COMMAND_OPTIONS, API_OPTIONS))
        for section, note in notes:
            start = index - len(note)
            if start >= 0 and [above.rstrip("\n") for above in lines[start:index]] == note:
                noted.append((start, index))
                sections.add(section)
                break
    for start, end in reversed(noted):
        del lines[start:end]
    return "".join(lines), frozenset(sections)


def _note_flags(data: CommentedMap, section: tuple[str, ...], indent: int, option_names: OptionNames) -> None:
    """The fragment's comment on the offload flags of `section` (of `NOTED_FLAGS`: Trinity 0.5 refuses them, and
    ``--trinity-version 0.5`` leaves them out, `option_names`' words), as comment lines just above the first of them
    in `data`, at the column of their depth (`indent` a level); none in a flow-style section, on one line (a config
    in flow style holds no comment line: the note on stderr says it)."""
    mapping = value_at(data, section)
    if not isinstance(mapping, CommentedMap) or mapping.fa.flow_style():
        return
    first = next((key for key in mapping if key in OFFLOAD_FLAGS), None)
    if first is not None:
        column = indent * len(section)
        comment = NOTED_FLAGS[section](option_names.trinity_05)
        mapping.yaml_set_comment_before_after_key(first, before="\n".join(_wrapped(comment, column)), indent=column)


def _paragraph_end(lines: list[str], start: int, end: int) -> int:
    """Where the paragraph of --write's note starting at `lines[start]` ends (before `end`): after each line that
    goes on with it, one whose first word a greedy wrap at `COMMENT_WIDTH` could not have put on the line before
    (a comment of the user's below the note, which could have, is not taken for one)."""
    at = start + 1
    while at < end and (more := _NOTE_CONTINUED.match(lines[at].lstrip())) and (
            len(lines[at - 1].rstrip("\n")) + 1 + len(more[1]) > COMMENT_WIDTH):
        at += 1
    return at


def _note_end(lines: list[str], start: int, end: int, indent: str) -> int:
    """Where --write's note starting at `lines[start]` (among the comment lines at `indent` that run to `end`) ends:
    after its evidence's and caution's paragraphs and its check command's two lines; `start` where none starts
    there."""
    at = start
    while at < end and _NOTE_START.match(lines[at][len(indent):]):
        at = _paragraph_end(lines, at, end)
    if (at + 1 < end and _CHECK_INTRO.fullmatch(lines[at].rstrip("\n")[len(indent):])
            and _CHECK_LINE.fullmatch(lines[at + 1].rstrip("\n")[len(indent):])):
        at += 2
    return at


def _without_notes(text: str) -> str:
    """`text` without the notes an earlier --write left among the comment lines just above each ``max_model_len`` and
    the top-level ``model`` (`_note_evidence`: its evidence, its cautions on a thin headroom and on remove padding off,
    what to do past the validated length, each wrapped, and the command that checks the file), with the user's own
    comment lines there kept."""
    lines = text.splitlines(keepends=True)
    kept: list[str] = []
    done = 0
    for index, line in enumerate(lines):
        key = re.match(r"([ \t]+)max_model_len:|()model:", line)
        if key is None:
            continue
        indent = key[1] or ""
        start = index
        while start > done and lines[start - 1].startswith(indent + "#"):
            start -= 1
        kept += lines[done:start]
        at = start
        while at < index:
            end = _note_end(lines, at, index, indent)
            kept += [lines[at]] if end == at else []
            at = max(end, at + 1)
        done = index
    return "".join(kept + lines[done:])


def _note_evidence(data: CommentedMap, plan: Plan, model: Model, gpu: str | None, indent: int,
                   check: tuple[str, str] | None, version: TrinityVersion | None,
                   option_names: OptionNames) -> tuple[str, ...] | None:
    """Where `plan` is not documented, what it rests on (`evidence_comment`, as the fragment's header says it) and its
    caution on a thin headroom (`caution_comment`); its cautions on remove padding off (`padding_cautions`) and on
    the ``target_modules`` regex of the LoRA config it writes, which Trinity saves split
    (``lora-targets-saved-split``); where its
    length is past what the model is validated for, what to do (`past_validated_note`, naming the length to plan as
    `option_names` do, as the fragment's header says it), and for an Offload plan written for Trinity `version` 0.5,
    what 0.6 on verl before 0.8 needs (the fragment's comment on its flags, `written_for_05_comment`), each wrapped at
    `COMMENT_WIDTH`, then `check`, the line that leads into the command checking the written config and the command
    (`_check_note`), as comments on their own lines (at column `indent`) just
    above ``model.max_model_len``, the plan's length, or above a flow-style ``model``, on one line. Where a note was due
    and could not go anywhere (a config in flow style holds no comment line), its paragraphs but the command, unwrapped
    (none where the command was all); else None. The note as an earlier --write left it is gone before the config is
    read (`_without_notes`)."""
    thin = plan.cautions_coded(CautionCode.THIN_HEADROOM)
    said = [evidence_comment(plan, model, gpu), *map(caution_comment, thin)] if plan.evidence != "documented" else []
    said += map(caution_comment, plan.cautions_coded(CautionCode.PADDED_MICRO_BATCHES,
                                                     CautionCode.LORA_TARGETS_SAVED_SPLIT))
    said += filter(None, [past_validated_note(plan, model, option_names)])
    if plan.offload and version == "0.5":
        said.append(written_for_05_comment(plan, option_names, "the offload flags"))
    if not said and check is None:
        return None
    section = data.get("model")
    if not isinstance(section, CommentedMap) or "max_model_len" not in section or data.fa.flow_style():
        return tuple(said)
    column = 0 if section.fa.flow_style() else indent  # above a flow-style model line, at the file's margin
    note = "\n".join([*(line for words in said for line in _wrapped(words, column)),
                      *([check[0], f"  {check[1]}"] if check is not None else [])])
    if section.fa.flow_style():
        data.yaml_set_comment_before_after_key("model", before=note, indent=0)
    else:
        section.yaml_set_comment_before_after_key("max_model_len", before=note, indent=indent)
    return None


def _check_note(flags: tuple[str, ...], path: str) -> str:
    """The line of --write's note that leads into the command checking the written config at `path` with `flags`
    (`check_command`): saying what `CHECK_PLACEHOLDER` stands for where `path` is it, and where to run the command
    where it names a file by a relative path (`names_relative_path`)."""
    placeholder = f" ({CHECK_PLACEHOLDER}: its path)" if path == CHECK_PLACEHOLDER else ""
    paths = (path,) if path != CHECK_PLACEHOLDER else ()
    relative = _RELATIVE_PATHS if names_relative_path(flags, *paths) else ""
    return f"To check this file{placeholder} as its plan was made{relative}:"


def _apply_plan(data: CommentedMap, reading: Any, lines: list[str], plan: Plan, model: Model,
                environ: Mapping[str, str] | None, version: TrinityVersion | None, host_ram_gb: float | None,
                gpu: str | None, indent: int, places: dict[int, list[_Place]],
                check: tuple[str, str] | None, flags_noted: AbstractSet[tuple[str, ...]],
                option_names: OptionNames) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """Set `plan`'s keys in `data` (the config's round trip, whose text is `lines`; `reading`: its values as Trinity
    reads them), note what a plan that is not documented rests on and `check`, the line leading into the command that
    checks the written config and the command (`_note_evidence`, naming `gpu`'s table), and an Offload plan's host
    memory (`_note_host_memory`), and, for no Trinity release named, that 0.5 refuses the offload flags it puts under
    ``trainer`` and the critic's engine where they are not the config's own (`_note_flags`, `NOTED_FLAGS`;
    `flags_noted`: the sections where an earlier --write's note said so of those there), each at column `indent`,
    the config's mapping indentation, naming the options as `option_names` do (`places`: where the scalars aliases
    repeat are held, `_aliased_scalars`), and remove a stale ``model.rope_scaling`` (and the rollout
    model's, where it is the same or refers to it: `_rollout_rope_is_models`) and, for Trinity 0.5, 0.6's keys under
    ``trainer`` that 0.5 refuses (`keys_05_refuses`), where they are the section's own; return those removed, dotted,
    and, where the note above ``model.max_model_len`` was due and could not go there, its paragraphs but the command
    (`_note_evidence`), else None."""
    keys = keys_for_plan(plan, model, reading, environ, version)
    writes = _written(reading, keys, environ or {})
    kept_paths = kept_own_keys(plan, reading, environ, version)
    _write_out_aliases(data, _set_and_kept(reading, keys, writes, kept_paths))
    written = _written_places(data, writes)
    aliased = _shared_anchors(places, written)
    _alias_comments_moved(data, places, aliased, written)
    kept = _merged_kept_keys(data, reading, written, kept_paths)
    for key in writes:
        _set(data, key, lines, aliased)
    for mapping, name, value in kept:
        mapping[name] = value
    _alias_comments_copied(places, aliased)
    _drop_stale_sum_comment(data, reading, plan, environ)
    _mend_budget_comment(data, plan)
    left_out = _note_evidence(data, plan, model, gpu, indent, check, version, option_names)
    _note_host_memory(data, plan, model, version, host_ram_gb, indent, option_names.host_ram)
    for section in NOTED_FLAGS if version is None else ():  # added, or noted by an earlier --write
        if section in flags_noted or not any(value_at(reading, (*section, flag)) is not None for flag in OFFLOAD_FLAGS):
            _note_flags(data, section, indent, option_names)
    section = data.get("model")
    if isinstance(section, CommentedMap) and "rope_scaling" in section and _stale_rope(section["rope_scaling"],
                                                                                       plan, model):
        rollout = value_at(data, ROLLOUT_MODEL)
        takes_models = _rollout_rope_is_models(reading, environ)
        _delete(section, "rope_scaling", unset=True)  # first: a rollout merging the model's mapping loses it with it
        if isinstance(rollout, CommentedMap) and "rope_scaling" in rollout and takes_models:
            _delete(rollout, "rope_scaling", unset=True)  # so that they still agree, and no interpolation refers to it
    trainer = data.get("trainer")
    if version != "0.5" or not isinstance(trainer, CommentedMap):
        return (), left_out
    refused = _removed_for_05(data, version)
    for name in refused:
        _delete(trainer, name)
    return tuple(f"trainer.{name}" for name in refused), left_out


def _rollout_rope_is_models(reading: Any, environ: Mapping[str, str] | None) -> bool:
    """Whether the config (`reading`, as Trinity reads it) gives the rollout model the ``model.rope_scaling`` it gives
    the model, as a copy, through an alias or an interpolation (``${model.rope_scaling}``), resolved from `environ`:
    the patch removes the rollout's with a stale one of the model's (an interpolation would then resolve to
    nothing)."""
    values = ConfigValues(reading, environ or {})
    rope = read_or_none(values.get, ("model", "rope_scaling"))
    return rope is not None and read_or_none(values.get, (*ROLLOUT_MODEL, "rope_scaling")) == rope


SUM_COMMENT = "# prompt + response"
"""The end-of-line comment beside ``model.max_model_len`` that says it is the prompt's and the response's tokens, as
`solve examples`' ``trinity.yaml`` writes it: a comment of these very words (and no other) goes where it is no longer
so (`_drop_stale_sum_comment`)."""


def _drop_stale_sum_comment(data: CommentedMap, reading: Any, plan: Plan, environ: Mapping[str, str] | None) -> None:
    """Drop the end-of-line comment beside ``model.max_model_len`` that says it is the prompt and the response
    (`SUM_COMMENT`, those words alone: a comment of the user's own that names them stays) where the config's length
    was ``max_prompt_tokens + max_response_tokens`` (`reading`, as Trinity reads it) and the plan's is not: it would
    say what is no longer so (the note on stderr says to raise max_response_tokens). The comment lines after it
    stay."""
    section = data.get("model")
    keys = prompt_response_and_length(reading, "config", environ or {})
    if not isinstance(section, CommentedMap) or keys is None:
        return
    prompt, response, length = keys
    entry = section.ca.items.get("max_model_len")
    token = entry[2] if entry and len(entry) > 2 else None
    if length != prompt + response or plan.max_model_len == length or not isinstance(token, CommentToken):
        return
    own, newline, rest = token.value.partition("\n")
    if own.strip() == SUM_COMMENT:
        token.value = newline + rest
        if not token.value:  # the config's last line, ended by a line break other than \n (NEL)
            entry[2] = None


BUDGET_FORMULA_COMMENT = re.compile(r"#\s*ceil\(\s*2\s*x\s*\d+\s*/\s*SP\s*\d+\s*\)")
"""An end-of-line comment beside ``trainer.max_token_len_per_gpu`` that is Trinity's default budget's formula and
nothing else (``# ceil(2 x 32768 / SP 4)``), as `solve`'s token budget row writes it: `_mend_budget_comment` mends
it to the plan's."""


def _mend_budget_comment(data: CommentedMap, plan: Plan) -> None:
    """Mend the end-of-line comment beside ``trainer.max_token_len_per_gpu`` that gives Trinity's default budget's
    formula (`BUDGET_FORMULA_COMMENT`, those words alone: a comment of the user's own that says more stays) to the
    plan's, ``# ceil(2 x 32768 / SP 1)``, which the patch sets the key to; where the plan's budget is lowered below
    it, drop it: either way it would say what is no longer so. The comment lines after it stay."""
    section: CommentedMap = data["trainer"]  # the patch has set the budget there: a mapping (a config's other refused)
    entry = section.ca.items.get("max_token_len_per_gpu")
    token = entry[2] if entry and len(entry) > 2 else None
    if not isinstance(token, CommentToken):
        return
    own, newline, rest = token.value.partition("\n")
    if BUDGET_FORMULA_COMMENT.fullmatch(own.strip()) is None:
        return
    formula = "" if plan.lowered_budget else own[:len(own) - len(own.lstrip())] + (
        f"# ceil(2 x {plan.max_model_len} / SP {plan.sp})")
    token.value = formula + newline + rest
    if not token.value:  # the config's last line, ended by a line break other than \n (NEL)
        entry[2] = None


def _removed_for_05(data: CommentedMap, version: TrinityVersion | None) -> tuple[str, ...]:
    """The keys of `data`'s ``trainer`` that the patch for `version` removes: with 0.5, Trinity 0.6's keys that 0.5
    refuses (`keys_05_refuses`), where they are the section's own (one a ``<<: *anchor`` merges in stays)."""
    trainer = data.get("trainer")
    if version != "0.5" or not isinstance(trainer, CommentedMap):
        return ()
    return keys_05_refuses(dict(trainer.non_merged_items()))


@dataclass(frozen=True)
class PatchedConfig:
    """A Trinity config with a plan applied (`patched_trinity_config`): its `text`, the keys the patch removed
    because the Trinity release asked for refuses them (`removed_for_05`: Trinity 0.6's keys under ``trainer``, as
    ``trainer.megatron``, for 0.5; none for other releases), and those of them it left (`merged_for_05`: merged into
    ``trainer`` by a ``<<: *anchor``, whose anchor other sections may share; one the section set too is in both, the
    anchor's showing through), and the command that checks it (`check_command`) where the patch was given one to
    write and could not write it in the config (`unwritten_check`: a config in flow style, ``{...}``, holds no
    comment line), and the note's other paragraphs it left out so (`unwritten_note`: what the plan rests on, its
    cautions, what to do past the validated length), and for a DPO config of a padded model, what the actor's
    micro-batch size it writes means on each verl line (`dpo_note`: `solver.trinity.plan_keys.dpo_pair_note`,
    ``--write``'s note; None where none is said), and for a config that sets LoRA patched with a plan of full
    fine-tuning, that it still trains LoRA (`lora_note`: `_config_lora_kept`), for the caller to say; as ``--write``
    says them too: the environment variables to set, as the run will, for the check of the copy to read the keys that
    decide its tokens per GPU (`unread_note`: `unread_variables_note`; unset, that check fails, its verdict unknown),
    the interpolations the patch replaced with the plan's values (`replaced_notes`: `_replaced_words`), and
    the critic's offload flags it turned off, with the ``--critic`` that keeps them on (`critic_note`:
    `_critic_offload_note`; None where it turned none off)."""

    text: str
    removed_for_05: tuple[str, ...]
    merged_for_05: tuple[str, ...] = ()
    unwritten_check: str | None = None
    unwritten_note: tuple[str, ...] = ()
    dpo_note: str | None = None
    lora_note: str | None = None
    unread_note: str | None = None
    replaced_notes: tuple[str, ...] = ()
    critic_note: str | None = None


def patch_trinity_config(text: str, plan: Plan, model: Model, *, name: str = "config",
                         environ: Mapping[str, str] | None = None, version: str | None = None,
                         host_ram_gb: float | None = None, gpu: str | None = None,
                         check: tuple[str, ...] | None = None, path: str = CHECK_PLACEHOLDER,
                         option_names: OptionNames = API_OPTIONS,
                         check_environment: tuple[tuple[str, str], ...] = ()) -> str:
    """The user's Trinity config `text` with `plan` applied, everything else kept: `patched_trinity_config`'s text."""
    return patched_trinity_config(text, plan, model, name=name, environ=environ, version=version,
                                  host_ram_gb=host_ram_gb, gpu=gpu, check=check, path=path,
                                  option_names=option_names, check_environment=check_environment).text


@parsing_once()
def patched_trinity_config(text: str, plan: Plan, model: Model, *, name: str = "config",
                           environ: Mapping[str, str] | None = None, version: str | None = None,
                           host_ram_gb: float | None = None, gpu: str | None = None,
                           check: tuple[str, ...] | None = None, path: str = CHECK_PLACEHOLDER,
                           option_names: OptionNames = API_OPTIONS,
                           check_environment: tuple[tuple[str, str], ...] = ()) -> PatchedConfig:
    """The user's Trinity config `text` with `plan` applied, everything else kept (ruamel round trip), for the
    Trinity release `version` (`keys_for_plan`: 0.5 gets no offload flags under ``trainer``; None: the plan's own,
    `written_release`, as every function here reads it), and the keys removed for that release (`PatchedConfig`).

    Sets exactly the keys `trinity_fragment` sets (not its ``cluster``/``explorer`` section, nor its
    header comment but for what a plan that is not documented rests on, as the header says it for the GPU type `gpu`,
    and with `check`, the options that check a config as the plan was made (`check_flags`), the header's command
    that does so, naming the patched config's `path` (`check_command`; by default `CHECK_PLACEHOLDER`, which the note
    says is its path), setting the environment variables the config was planned with (`check_environment`, as
    `solver.trinity.check_environment` gives them), above ``model.max_model_len``
    (`_note_evidence`), and an Offload plan's host memory and whether it was held to `host_ram_gb`,
    `_note_host_memory`); the notes name the options as `option_names` do (this API's keywords, ``host_ram_gb`` and
    ``version="0.5"``; ``--write`` passes its flags, `COMMAND_OPTIONS`); every other key, the key order, the
    comments and the quoting stay as they were, so a diff against the original touches only those keys' lines (and
    adds lines for new keys).
    Decisions:

    - Existing keys are overwritten in place (an interpolation such as ``${oc.env:MAX_MODEL_LEN,4096}`` or
      ``${model.max_model_len}`` becomes the plan's number, unless it resolves to that number in `environ`, in the
      patched config: then it stays, `_kept`); missing
      sections are appended at the end of their section, and missing keys with them, or before the section's first
      nested block (``trainer.max_token_len_per_gpu`` beside ``ulysses_sequence_parallel_size``, not after the
      ``trainer_config`` block), `_add`.
    - YaRN: beyond the native context, ``model.rope_scaling`` gets ``rope_type``, ``factor`` and
      ``original_max_position_embeddings`` (other keys in it are kept), unless it is a YaRN that reaches the length
      (kept: `keys_for_plan`); a model with a RoPE scaling of
      its own (Llama 3.1) gets none, and a ``model.rope_scaling`` of another type is removed (it would
      replace the model's own). At or below the native
      context an existing ``model.rope_scaling`` is removed, because a kept YaRN factor would
      contradict the new length; none is added.
    - The rollout model: its ``max_model_len`` and ``rope_scaling`` where they were the model's are set (or removed)
      with the model's (`keys_for_plan`, `_rollout_rope_is_models`); its own, other than the model's, are left.
    - Offload: the plan decides, as asked. With Offload, ``trainer.trainer_strategy: fsdp2`` and the
      three flags under the actor's and the ref's ``fsdp_config`` and Trinity 0.6's under ``trainer`` (not for
      `version` 0.5; those under a role's ``engine`` alike) are set (added where missing), and
      ``trainer.save_hf_checkpoint: never`` is added where the config does not choose its own. Without Offload,
      the flags that exist are set to false and none is added; ``trainer_strategy`` and ``save_hf_checkpoint`` are
      left alone (FSDP2 without offload trains too).
    - Trinity 0.5: 0.6's keys under ``trainer`` that 0.5 refuses (`keys_05_refuses`) are removed where they are the
      section's own; one a ``<<: *anchor`` merges in is left with its anchor (other sections may share it), and
      `patched_config_problems` names it.
    - No release (no `version`, and a plan that names none): 0.6's offload flags under ``trainer``, where the config
      has none of its own (nothing in a config says 0.5, whose keys are 0.6's too; without them 0.6 on verl before
      0.8 runs without Offload), get the
      fragment's comment on them (`trinity_06_keys_comment`: 0.5 refuses them) on lines just above them
      (`_note_flags`), and so do the PPO critic's under its FSDP engine (``critic.fsdp``, which 0.6 on verl 0.8 or
      later reads: `critic_engine_comment`); a later patch replaces it, taking the flags under it for its own
      (`_without_flags_note`).
    - Env cannot be patched (an environment variable, set before Ray starts): tell the user.
    - Per-role token limits the user set by hand (``...actor.ppo_max_token_len_per_gpu``, `ROLE_TOKEN_BUDGETS`, and
      where the algorithm trains a critic its two, `solver.trinity.keys.CRITIC_BUDGETS`) override
      ``trainer.max_token_len_per_gpu`` for their role (on verl before 0.8; `ROLE_KEYS_IGNORED`): one above the plan's
      budget (the role would hold more tokens per GPU than the plan assumes), below the least that holds a sequence
      of the plan's length at its SP, or repeating the budget it is filled from, is set to the plan's budget; one
      between, a lower limit of the user's own that verl takes, is kept (`own_budget_change` says why).
      A role's own SP (`ROLE_SP_KEYS`), which Trinity with verl before 0.8 takes over the trainer's, is set to the
      plan's; so is the critic's, where the algorithm trains one of the model itself (`_critic_sp_keys`).

    Raises `ConfigError` (one line, starting with `name`) for text that is not a YAML mapping, or a
    section on the way to a key that is not a mapping, or a cluster that cannot be read (`cluster_trainer_gpus`);
    `QueryError` for a `plan` on other trainer GPUs than the config's cluster gives the trainer, which the patch
    keeps (`_check_cluster_takes`), or of another catalogue model than the one the config trains, which it keeps
    (`_check_config_model`), or of LoRA at another rank than the config's own adapter, which it keeps, or on
    targets that adapt fewer parameters than its own (`_config_lora_kept`); a config without LoRA gets the plan's
    (``model.lora_configs``, as the fragment's).
    """
    check_types(("plan", plan, Plan), ("model", model, Model), ("environ", environ, Mapping | None),
                ("host_ram_gb", host_ram_gb, float | None), ("gpu", gpu, str | None),
                ("check", check, tuple | None), ("path", path, str), ("option_names", option_names, OptionNames))
    check_host_ram(host_ram_gb, option_names)
    check_gpu_name(gpu)
    # a release read as its minor version, as plan reads it; the plan's own release where none is named
    version = written_release(plan, check_config_arguments(text, name, {} if environ is None else environ, version))
    ending = _line_ending(text)  # the file's own, kept; ruamel works on "\n"
    bom = text.startswith("\ufeff")  # kept too
    text = _with_lf(text).removeprefix("\ufeff")
    text, flags_noted = _without_flags_note(_without_notes(_without_host_memory_note(text)))  # noted again below
    yaml = _round_trip_yaml(text)
    data = load_config_mapping(text, name, yaml)  # a mapping: ruamel's round trip makes it a CommentedMap
    reading = load_config_mapping(text, name)  # the values as Trinity reads them (YAML 1.1: 010000 is 4096)
    trained = trains_critic(value_at(reading, ("algorithm", "algorithm_type")))
    command = None if check is None else check_command(
        plan, model, check, host_ram_gb, version, path, check_environment, trained,
        _config_rank(plan, model, reading, name, {} if environ is None else environ, version))
    check_note = None if check is None or command is None else (_check_note(check, path), command)
    _check_config_model(model, reading, name, {} if environ is None else environ, option_names)
    _check_cluster_takes(plan, reading, name, {} if environ is None else environ, option_names)
    lora_note = _config_lora_kept(plan, model, reading, name, {} if environ is None else environ, version,
                                  option_names)
    _keep_anchors(data)
    aliased = _aliased_scalars(data)
    unpatched = _unpatched_dump(yaml, data, text)
    try:
        removed, left_out = _apply_plan(data, reading, text.splitlines(), plan, model, environ, version, host_ram_gb,
                                        gpu, _indentation(text)[0], aliased,
                                        check_note, flags_noted, option_names)
    except ConfigError as error:
        raise ConfigError(f"{name}: {error}") from None
    if _is_json(text):  # a config written as JSON stays JSON: the keys and strings the plan adds are quoted
        _json_quoted(data)
    patched = _alias_comments_kept(text, _kept_lines(text, unpatched, _dumped(yaml, data, text), name))
    indent = _json_indent(text)
    if indent is not None and _is_json(patched):  # ruamel writes it on one line: laid out as the config was
        patched = _json_laid_out(patched, indent) + ("\n" if text.endswith("\n") else "")
    # what 0.5 refuses and the patch leaves: an anchor merges it in (a key the section set too shows through)
    merged = keys_05_refuses(value_at(load_config_mapping(patched, name), ("trainer",))) if version == "0.5" else ()
    if ending != "\n":
        patched = patched.replace("\n", ending)
    dpo = config_trains_dpo(reading, environ)  # as the keys read it (`keys_for_plan`)
    dpo_note = dpo_pair_note(name, model, version, option_names.trinity_05,
                             config_dpo_in_rows(reading, environ, version)) if dpo else None
    unread_note = unread_variables_note(reading, plan, name, {} if environ is None else environ, version, dpo)
    changed = _keys_changed(text, plan, model, name, environ, version)  # one reading for both notes
    replaced = tuple(_replaced_words(changed))
    critic_note = None if plan.critic is None else _critic_offload_note(_critic_flags_off(changed), plan, name,
                                                                        option_names)
    return PatchedConfig("\ufeff" + patched if bom else patched, removed, tuple(f"trainer.{key}" for key in merged),
                         command if left_out is not None else None, left_out or (), dpo_note, lora_note,
                         unread_note, replaced, critic_note)


def unread_variables_note(reading: Any, plan: Plan, name: str, environ: Mapping[str, str],
                          version: TrinityVersion | None, dpo: bool) -> str | None:
    """Where keys of the config `reading` (the file `name`) that decide the tokens per GPU of a copy patched for `plan`
    (on its data-parallel ranks, for `version`, DPO where `dpo`: `memory_unread_keys`) read environment variables unset
    in `environ`, with no default: that, and the variables to set, as the run will, before the copy's check (its
    header's command) can judge it (`PatchedConfig.unread_note`); None otherwise."""
    reader = ConfigReader(reading, name, environ)
    unread = memory_unread_keys(reader, version, dpo, plan.gpus // plan.sp)
    variables = unset_variables(reader, unread)
    if not variables:
        return None
    return (f"whether it trains depends on {and_joined(list(unread))}, which cannot be read here: set "
            f"{and_joined(list(variables))} as the run will, then check it (its header's command)")


def _config_lora_kept(plan: Plan, model: Model, reading: Any, name: str, environ: Mapping[str, str],
                      version: TrinityVersion | None, option_names: OptionNames) -> str | None:
    """The patch keeps the LoRA the config `reading` (the file `name`, read in `environ`) sets (`written_lora`): its
    adapter's modules, name and alpha, which a plan does not say. `QueryError` where `plan` counted another rank than
    the one it writes: the patched config would train a rank the plan did not count, and setting the plan's in the
    adapter would change its scaling (lora_alpha / rank), the user's choice; and where it counted the adapter of
    `model` on targets (`Plan.lora_targets`, ``--lora-targets``) that adapt fewer parameters than the config's own
    (`lora_unkept`), which the patched config would train. Where `plan`
    counted full fine-tuning (which holds more), the note that the config still sets LoRA; where Trinity refuses its
    LoRA configs (`_lora_refused`), at full fine-tuning or the rank they write, that they need fixing; None
    otherwise."""
    own = written_lora(reading, name, environ)
    if own is None:
        return None
    key = own[0]
    refused = (f"{name} sets LoRA ({key}), which {option_names.write} keeps as written, though Trinity refuses it so "
               f"(its refused line, {ConfigProblemCode.LORA_CONFIGS_REFUSED.value}, says why): the plan counted "
               if _lora_refused(plan, model, reading, name, environ, version) else None)
    if not plan.lora_rank and refused is not None:
        fix = refused_lora_fix(refused_lora_key(reading, name, environ, key), key)
        return f"{refused}full fine-tuning, which holds more than a LoRA run; {fix}"
    if not plan.lora_rank:
        return (f"{name} sets LoRA ({key}), which {option_names.write} keeps: the plan counted full fine-tuning, which "
                f"holds more than a LoRA run; remove {key} to train every parameter")
    lora = option_names.lora_options[0]
    other_rank = lora_rank_unkept(plan.lora_rank, reading, name, environ, option_names)
    if other_rank is not None:
        raise QueryError(other_rank)
    if refused is not None:  # the rank it writes: its adapter, once fixed, is the plan's
        return (f"{refused}LoRA rank {plan.lora_rank} ({option_names.valued(lora, plan.lora_rank)}); fix {key} to one "
                "LoRA config of that rank that Trinity takes, or the run fails")
    unkept = lora_unkept(plan, model, reading, name, environ, version, f"{option_names.write} keeps", option_names)
    if unkept is not None:
        raise QueryError(unkept)
    return None


def lora_rank_unkept(plan_rank: int, reading: Any, name: str, environ: Mapping[str, str],
                     option_names: OptionNames) -> str | None:
    """Why the patch refuses a plan that counted LoRA rank `plan_rank` for the config `reading` (the file `name`, read
    in `environ`), in one line: the LoRA it sets (`written_lora`), which the patch keeps, trains another rank, and
    setting the plan's would change its scaling (lora_alpha / rank). None where it takes it: no LoRA of the config's,
    a plan of full fine-tuning (`plan_rank` 0), or an adapter it sets without a rank of its own."""
    own = written_lora(reading, name, environ)
    if own is None or not plan_rank or not own[1] or own[1] == plan_rank:
        return None
    key, rank = own
    lora = option_names.lora_options[0]
    return (f"{name}: the plan counted LoRA rank {plan_rank}, but {key} trains rank {rank}, which "
            f"{option_names.write} keeps (its lora_alpha scales the adapter by its rank): plan at rank "
            f"{rank} ({option_names.valued(lora, rank)}, or leave it out), or set {key}'s rank to {plan_rank} first")


def _lora_refused(plan: Plan, model: Model, reading: Any, name: str, environ: Mapping[str, str],
                  version: TrinityVersion | None) -> bool:
    """Whether Trinity refuses the LoRA configs of the config `reading` (the file `name`, read in `environ`) as
    written: their reading (`lora_configs_refused`), or the adapter it makes anew (`written_adapter`) on `model`'s
    module names, its routed experts held as `plan`'s are under `version` (`new_adapter_refused`, the rule behind the
    checks' ``lora-configs-refused`` line and `solver.trinity.checks.config_counted_on`)."""
    return lora_configs_refused(reading, name, environ) or new_adapter_refused(
        written_adapter(reading, name, environ, version), model, written_layout(version, plan.expert_layout))


def _config_rank(plan: Plan, model: Model, reading: Any, name: str, environ: Mapping[str, str],
                 version: TrinityVersion | None) -> int:
    """The LoRA rank the check command of the config `reading` (the file `name`, read in `environ`) counts on its own,
    as `solver.api.config_query` does on `model`: 0 where Trinity refuses its LoRA configs (`_lora_refused`), else
    `config_counted_lora_rank`."""
    if _lora_refused(plan, model, reading, name, environ, version):
        return 0
    return config_counted_lora_rank(reading, name, environ, version)


def lora_unkept(plan: Plan, model: Model, reading: Any, name: str, environ: Mapping[str, str],
                version: TrinityVersion | None, kept_by: str, option_names: OptionNames) -> str | None:
    """`adapter_unkept` for the config `reading`'s own adapter (the file `name`, read in `environ`: its rank and
    targets as the verdict counts them under Trinity `version`, `config_counted_lora_rank` and
    `config_counted_lora_targets`); None where it sets no LoRA."""
    version = written_release(plan, version)  # the plan's own release where none is named, as the patch reads it
    own = written_lora(reading, name, environ)
    if own is None:
        return None
    adapter = ConfigAdapter.of(own[0], config_counted_lora_rank(reading, name, environ, version),
                               config_counted_lora_targets(reading, name, environ, version))
    return adapter_unkept(plan, model, adapter, name, kept_by, option_names)


def other_catalogue_model(model: Model, model_path: str, *, local_by_contents: bool = True) -> tuple[str, str] | None:
    """Where a config whose ``model.model_path`` is `model_path` trains another catalogue model than `model`, the one
    a plan was made for: the name `model_path` gives (`model_name_from_path`) and `model` both name catalogue models
    (the shipped catalogue's; a model of a config.json's other shape, ``NAME (config shape)``, by its NAME), and not
    the same one: their names, the config's first. None otherwise: a name no catalogue model has (a fine-tune's folder,
    a model of the user's own) is the user's to give, and a folder of this machine holding a config.json says the
    model by what it holds, not by its name (with `local_by_contents`; the command line, which compares a
    --model-config with that file itself, holds another model to the folder's name)."""
    if local_by_contents and local_model_config(model_path) is not None:
        return None
    shipped = load_catalog()
    try:
        configured = shipped.model(model_name_from_path(model_path)).name
        planned = shipped.model(model.name.removesuffix(CONFIG_SHAPE)).name
    except QueryError:
        return None
    return (configured, planned) if configured != planned else None


def _check_config_model(model: Model, reading: Any, name: str, environ: Mapping[str, str],
                        option_names: OptionNames) -> None:
    """`QueryError` where the config `reading` (its ``${oc.env:...}`` from `environ`) trains another catalogue model
    than `model`, the one the plan was made for (`other_catalogue_model`). The patch keeps ``model.model_path``, and
    would give that model this one's figures, as ``--write`` refuses a ``--model`` of another model (the same check,
    in the options' words). A model path that cannot be read here is `read_trinity_config`'s to refuse."""
    model_path = read_or_none(ConfigValues(reading, environ).get, ("model", "model_path"))
    if not isinstance(model_path, str):
        return
    if other := other_catalogue_model(model, model_path):
        configured, planned = other
        raise QueryError(f"{name}: the plan is {planned}'s (model), but the config trains {configured} "
                         f"({MODEL_PATH_KEY}), which {option_names.write} keeps: it would give {configured} another "
                         f"model's plan; give it a plan of {configured}, with that model")


def _check_cluster_takes(plan: Plan, reading: Any, name: str, environ: Mapping[str, str],
                         option_names: OptionNames) -> None:
    """`QueryError` where the config `reading` (as nested mappings, its ``${oc.env:...}`` from `environ`) gives the
    trainer other GPUs than `plan` takes, or lays them on other nodes (the plan's `trainer_nodes`: made for nodes of
    another size): the patch keeps the config's cluster, on which the trainer would run the plan on GPUs it was not
    made for (``--write`` plans on the config's GPUs and nodes alone; a plan of the API's may be on any). A config
    without ``cluster.gpu_per_node`` gives no count: any plan is patched in. A plan with rollout GPUs of its own (a
    placement's, or one planned with them) is told that a fragment writes its cluster."""
    cluster = cluster_trainer_gpus(reading, name, environ, option_names)
    if cluster.trainer_gpus is None or cluster.node_gpus is None:
        return
    nodes = trainer_nodes_of(cluster.trainer_gpus, cluster.node_gpus)
    if cluster.trainer_gpus == plan.gpus and plan.trainer_nodes in (None, nodes):
        return
    less = f", less {counted(cluster.rollout_gpus, 'rollout GPU')}" if cluster.rollout_gpus else ""
    read = f"cluster.node_num x cluster.gpu_per_node{less}"
    own = ("" if plan.rollout_gpus is None else f"; this plan has a cluster of its own, of {plan.gpus} trainer and "
           f"{counted(plan.rollout_gpus, 'rollout GPU')}")
    if cluster.trainer_gpus != plan.gpus:
        differs = (f"the plan is for {counted(plan.gpus, 'trainer GPU')}, but the config's cluster gives the trainer "
                   f"{cluster.trainer_gpus} ({read})")
        fix = f"give it a plan on exactly {cluster.trainer_gpus}"
    else:
        planned = plan.trainer_nodes or 1
        on_planned = _on_nodes(planned, plan.gpus // planned if planned > 1 else None)
        differs = (f"the plan is for {counted(plan.gpus, 'trainer GPU')} {on_planned}, "
                   f"but the config's cluster gives the trainer {cluster.trainer_gpus} "
                   f"{_on_nodes(nodes, cluster.node_gpus)} ({read})")
        fix = (f"give it a plan on nodes of {cluster.node_gpus} GPUs "
               f"({option_names.valued(option_names.node_gpus, cluster.node_gpus)})")
    raise QueryError(f"{name}: {differs}, and {option_names.write} keeps that cluster: {fix}, or set the cluster for "
                     f"this plan{own} ({option_names.fragment_writers} writes a fragment with it)")


def _on_nodes(nodes: int, node_gpus: int | None) -> str:
    """Where a trainer runs, in words: ``on one node`` (``of 8``, with its size `node_gpus`) or ``on 2 nodes of 4``
    (a trainer on several takes them whole: `node_gpus` given)."""
    if nodes == 1:
        return "on one node" + ("" if node_gpus is None else f" of {node_gpus}")
    return f"on {nodes} nodes of {node_gpus}"


def _is_json(text: str) -> bool:
    """Whether the config `text` is written as JSON (a JSON object, which YAML reads as a flow mapping)."""
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def _json_indent(text: str) -> str | None:
    """The indentation of each level of the config `text` where it is written as JSON over lines, as
    ``json.dumps(..., indent=2)`` and ``JSON.stringify`` write it: its first indented line's (two spaces, four); None
    for JSON on one line, or a config not written as JSON (a config indented with tabs never comes here: the YAML
    reader refuses it first)."""
    indented = re.search(r"\n( +)\S", text)
    return indented[1] if indented is not None and _is_json(text) else None


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[^\s{}\[\],:"]+')
"""A token of JSON text: a string (its escapes kept), a punctuation mark, or another scalar (a number, true)."""


def _json_laid_out(text: str, indent: str) -> str:
    """The JSON `text` laid out as ``json.dumps(..., indent=...)`` lays it out, each item of an object or array on a
    line of its own, `indent` deeper than the line that opens it (an empty one kept as ``{}`` or ``[]``), and each
    scalar as `text` writes it (``1e-6``, ``"\\u00e9"``), so that a config's diff shows the keys a plan changed."""
    tokens = _JSON_TOKEN.findall(text)
    parts: list[str] = []
    depth = 0
    for previous, token, following in zip(["", *tokens[:-1]], tokens, [*tokens[1:], ""], strict=True):
        if token in ("{", "["):
            depth += 1
            parts.append(token if following in ("}", "]") else f"{token}\n{indent * depth}")
        elif token in ("}", "]"):
            depth -= 1
            parts.append(token if previous in ("{", "[") else f"\n{indent * depth}{token}")
        else:
            parts.append({",": f",\n{indent * depth}", ":": ": "}.get(token, token))
    return "".join(parts)


def _json_quoted(node: Any) -> Any:
    """`node` with every plain string in it, key or value, double-quoted as JSON writes it (in place for a mapping
    or a list), so that a config read from JSON is written back as JSON with the keys and values a plan adds: a plain
    mapping too (the LoRA adapter a plan adds, ``model.lora_configs: [{lora_rank: 32}]``)."""
    if isinstance(node, CommentedMap):
        for index, key in enumerate(list(node)):
            value = _json_quoted(node[key])
            if type(key) is str:
                del node[key]
                node.insert(index, DoubleQuotedScalarString(key), value)
            else:
                node[key] = value
    elif isinstance(node, dict):
        quoted = {_json_quoted(key): _json_quoted(value) for key, value in node.items()}
        node.clear()
        node.update(quoted)
    elif isinstance(node, list):
        for index, item in enumerate(node):
            node[index] = _json_quoted(item)
    elif type(node) is str:
        return DoubleQuotedScalarString(node)
    return node


def _dumped(yaml: YAML, data: CommentedMap, text: str) -> str:
    """The config `data` as `yaml` (its round trip) writes it, with what that round trip drops of the config `text`
    put back: the lines outside its document (`_outside_document`) and the comments after its anchors
    (`_anchor_comments_kept`)."""
    out = io.StringIO()
    yaml.dump(data, out)
    head, tail = _outside_document(text)
    return head + _anchor_comments_kept(text, out.getvalue()) + tail


UNPATCHED_DUMPS_KEPT = 32
"""The config texts whose unpatched dumps `_unpatched_dump` keeps (the most recently patched)."""
_UNPATCHED_DUMPS: dict[str, str] = {}
"""`_unpatched_dump`'s, per config text, the least recently patched first."""
_UNPATCHED_DUMPS_LOCK = threading.Lock()


def _unpatched_dump(yaml: YAML, data: CommentedMap, text: str) -> str:
    """`_dumped` of the config `text` before the patch changes `data` (its round trip, `yaml` made for it): a function
    of `text` alone, kept for the texts patched last (a config is patched for each of its answers' plans, and
    ``--json`` beside ``--write`` patches it twice). Its lock is taken once, the dump made within it: a server's
    threads, patching configs at once, would dump by turns all the same (the round trip is Python's, under the GIL)."""
    with _UNPATCHED_DUMPS_LOCK:
        dumped = _UNPATCHED_DUMPS.pop(text, None)
        if dumped is None:
            dumped = _dumped(yaml, data, text)
        _UNPATCHED_DUMPS[text] = dumped  # the most recent last
        while len(_UNPATCHED_DUMPS) > UNPATCHED_DUMPS_KEPT:
            del _UNPATCHED_DUMPS[next(iter(_UNPATCHED_DUMPS))]
    return dumped


def _kept_lines(original: str, unpatched: str, patched: str, name: str) -> str:
    """`patched` (the round trip's text of the patched config) with the lines the patch did not change written as the
    config's text `original` has them: the round trip rewrites some lines of its own accord (a comment between a key
    and its value on the next line, a tag, an alias's comment), so each run of lines where `original` differs from
    `unpatched` (the round trip's text of the config as it was) is taken from `original`, unless the patch changed a
    line of it too, or added one within it: a three-way merge of lines, whose runs that both change are the patch's.
    Where the merged text would not read as `patched` does, `patched` is written, whole."""
    base, mine, theirs = (text.splitlines(keepends=True) for text in (unpatched, original, patched))
    hunks = sorted(_hunks(base, theirs, patch=True) + _hunks(base, mine, patch=False),
                   key=lambda hunk: (hunk[0], hunk[1], not hunk[2]))  # where both add lines, the patch's first
    merged: list[str] = []
    done = 0  # the lines of `base` written
    while hunks:
        group = [hunks.pop(0)]
        end = group[0][1]
        while hunks and hunks[0][0] < end:  # overlaps the run before: both change it
            group.append(hunks.pop(0))
            end = max(end, group[-1][1])
        patch = any(by_patch for _, _, by_patch, _ in group)  # then the patch's lines, and base's between them
        merged += base[done:group[0][0]]
        done = group[0][0]
        for start, stop, by_patch, lines in group:
            if by_patch == patch:
                merged += base[done:start] + lines
                done = stop
        merged += base[done:end]
        done = end
    text = "".join(merged + base[done:])
    if text == patched:  # the same text reads the same
        return text
    return text if _same_data(load_config_mapping(text, name), load_config_mapping(patched, name), set()) else patched


def _same_data(one: Any, other: Any, compared: set[tuple[int, int]]) -> bool:
    """Whether `one` and `other` (configs as read) hold the same values of the same types; each pair of mappings or
    lists is `compared` once, so that what aliases repeat costs no more than the text (aliases of aliases)."""
    if isinstance(one, Mapping | list):
        if type(one) is not type(other) or (id(one), id(other)) in compared:
            return type(one) is type(other)
        compared.add((id(one), id(other)))
        if isinstance(one, Mapping):
            return list(one) == list(other) and all(_same_data(one[key], other[key], compared) for key in one)
        return len(one) == len(other) and all(_same_data(a, b, compared) for a, b in zip(one, other, strict=True))
    return type(one) is type(other) and one == other


def _hunks(base: list[str], other: list[str], *, patch: bool) -> list[tuple[int, int, bool, list[str]]]:
    """What `other` changes of `base`: for each run of `base` lines it replaces (or place it adds lines at), the
    run's start and end, whether `other` is the `patch`'s, and its lines there. A run is cut before each key that
    both have in it (`_KEY_LINE`), so that a key's lines changed beside another key's are a run of their own."""
    hunks = []
    for tag, start, end, other_start, other_end in SequenceMatcher(None, base, other, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        same = SequenceMatcher(None, _line_keys(base[start:end]), _line_keys(other[other_start:other_end]),
                               autojunk=False).get_matching_blocks()
        cuts = [(start + at + offset, other_start + other_at + offset) for at, other_at, size in same
                for offset in range(size)]
        bounds = [(start, other_start), *[cut for cut in cuts if cut != (start, other_start)], (end, other_end)]
        hunks += [(run_start, run_end, patch, other[other_run_start:other_run_end])
                  for (run_start, other_run_start), (run_end, other_run_end) in pairwise(bounds)
                  if base[run_start:run_end] != other[other_run_start:other_run_end]]
    return hunks


def _line_keys(lines: list[str]) -> list[object]:
    """Each of `lines`' key (`_KEY_LINE`), or for a line without one, an object of its own, equal to no other."""
    return [key[0] if (key := _KEY_LINE.match(line)) else object() for line in lines]


_KEY_LINE = re.compile(r"[ \t]*(?:- )?[^\s#:'\"][^:#]*:(?=\s|$)")
"""The start of a line that holds a key, up to its colon."""


def _line_ending(text: str) -> str:
    """The line ending of the config `text`: CRLF (Windows) where it has one, CR alone (classic Mac OS) where it has
    no LF, else LF."""
    return "\r\n" if "\r\n" in text else "\r" if "\r" in text and "\n" not in text else "\n"


def _with_lf(text: str) -> str:
    """`text` with every line ending LF, which ruamel's round trip writes (YAML reads CRLF and CR alone as line
    breaks too, and a scalar's line breaks as LF: what it reads is the same)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


_ANCHOR_COMMENT = re.compile(r"^([^#\n]*(?::|^[ \t]*-)[ \t]+&[^\s#]+)([ \t]+#[^\n]*)$", re.MULTILINE)
"""A line that ends in an anchor and a comment (``fsdp_config: &fsdp  # shared``): the anchor's line, the comment."""


def _anchor_comments_kept(original: str, dumped: str) -> str:
    """`dumped` with each comment that followed an anchor in `original` back beside it: ruamel writes such a comment
    on a line of its own, below the anchor's (a key's) or above it (a list item's)."""
    for line, comment in _ANCHOR_COMMENT.findall(original):
        anchored, alone = re.escape(line), rf"[ \t]*{re.escape(comment.strip())}"
        moved = re.search(rf"^(?:{anchored}\n{alone}|{alone}\n{anchored})\n", dumped, re.MULTILINE)
        if moved is not None:
            dumped = f"{dumped[:moved.start()]}{line}{comment}\n{dumped[moved.end():]}"
    return dumped


_ALIAS_COMMENT = re.compile(r"^([^#\n]*:[ \t]+)\*([^\s#,\]}]+)([ \t]+)(#[^\n]*)$", re.MULTILINE)
"""A key's line that ends in an alias and a comment (``seed: *seed  # the same``): up to the alias, its anchor's
name, the gap, the comment."""


def _alias_comments_kept(original: str, patched: str) -> str:
    """`patched` with the comment beside each alias of `original` back beside it where the patch's lines hold the
    alias (a key added after it) or the anchor that moved to it (the patch changed the anchored key, and the alias
    keeps the old value): ruamel writes it on a line of its own, there or further on (that line goes), or not at
    all. The alias is the patch's line that is as many lines like it (the same key, the alias or its anchor) down as
    it is in `original`, so that another alias of the same key's keeps its own comment."""
    for found in _ALIAS_COMMENT.finditer(original):
        line, (start, anchor, gap, comment) = found[0], found.groups()
        if patched.count(line) >= original.count(line):
            continue
        like = re.compile(rf"^({re.escape(start)}(?:\*{re.escape(anchor)}|&{re.escape(anchor)} [^\n#]*?))[ \t]*(#.*)?$",
                          re.MULTILINE)
        written = next(islice(like.finditer(patched), len(like.findall(original, 0, found.start())), None), None)
        if written is None or written[2] is not None:
            continue
        patched = f"{patched[:written.start()]}{written[1]}{gap}{comment}{patched[written.end():]}"
        alone = re.compile(rf"^[ \t]*{re.escape(comment)}\n", re.MULTILINE)
        surplus = alone.search(patched, written.start()) or alone.search(patched)  # the one after the alias first
        if surplus is not None and len(alone.findall(patched)) > len(alone.findall(original)):
            patched = patched[:surplus.start()] + patched[surplus.end():]
    return patched


def _keep_anchors(node: Any, seen: set[int] | None = None) -> None:
    """Mark the anchors of `node`'s mappings and sequences to be written even where no alias repeats them (ruamel
    writes such an anchor only where one does; a scalar's it keeps)."""
    seen = set() if seen is None else seen
    if not isinstance(node, (CommentedMap, CommentedSeq)) or id(node) in seen:
        return
    seen.add(id(node))
    if node.anchor.value is not None:
        node.yaml_set_anchor(node.anchor.value, always_dump=True)
    for child in node.values() if isinstance(node, CommentedMap) else node:
        _keep_anchors(child, seen)


_Place = tuple[Any, Any]
"""Where a value is held: the mapping or list, and its key or index there."""


def _aliased_scalars(node: Any, places: dict[int, list[_Place]] | None = None,
                     entered: set[int] | None = None) -> dict[int, list[_Place]]:
    """The anchored scalars in `node` (the config's round trip) that aliases repeat: per id, the places that hold it,
    in the order of the text (its anchor's first). Along the way, the comments ruamel gives each alias's key as copies
    of its anchor's key's own are dropped: written nowhere while the alias stays one, they would be written beside the
    first alias where the patch changes the anchor's key (its anchor moves there)."""
    places = {} if places is None else places
    entered = set() if entered is None else entered
    if not isinstance(node, CommentedMap | CommentedSeq) or id(node) in entered:
        return {}
    entered.add(id(node))
    for key, value in node.items() if isinstance(node, CommentedMap) else enumerate(node):
        if isinstance(value, CommentedMap | CommentedSeq):
            _aliased_scalars(value, places, entered)
            continue
        if not _anchored_scalar(value):
            continue
        held = places.setdefault(id(value), [])
        held.append((node, key))
        if len(held) == 1:
            continue
        anchor_section, anchor_key = held[0]
        own = anchor_section.ca.items.get(anchor_key) or []
        comments = node.ca.items.get(key) or []
        for slot, comment in enumerate(comments):
            if comment is not None and any(comment is copied for copied in own):
                comments[slot] = None
    return {anchored: held for anchored, held in places.items() if len(held) > 1}


def _merged_kept_keys(data: CommentedMap, reading: Any, written: dict[tuple[int, str], Any],
                      kept: list[tuple[str, ...]]) -> list[tuple[CommentedMap, str, Any]]:
    """The own token budgets and the critic's own SP ``--write`` keeps (`kept`, their paths: `kept_own_keys`) that
    their mapping in `data` (the config's round trip; `reading`, its values as loaded) merges in (``critic: {<<:
    *b}``: not its own key) from a mapping where the patch changes that key (`written`, `_written_places`), so that
    the change would reach them too: each with its mapping, its key and the value it had, as the config wrote it
    without an anchor (`_written_as`), which the patch writes there as that mapping's own key, as it leaves an
    anchored scalar's other places at their value (`_shared_anchors`)."""
    found = []
    for path in kept:
        mapping, name = value_at(data, path[:-1]), path[-1]
        if not isinstance(mapping, CommentedMap) or name in mapping._ok:
            continue
        source = _merge_source(mapping, name)
        if source is not None and written.get((id(source), name), mapping[name]) != mapping[name]:
            found.append((mapping, name, _written_as(mapping[name], value_at(reading, path), False)))
    return found


def _set_and_kept(reading: Any, keys: list[PlanKey], writes: list[PlanKey],
                  kept: list[tuple[str, ...]]) -> list[tuple[tuple[str, ...], Any]]:
    """The keys the patch sets (`writes`), those of the plan's `keys` the config holds at the plan's value already
    (`_holds`: the actor's offload flags that an Offload plan keeps on), and those it keeps at their values (`kept`:
    `kept_own_keys`), read in the config as Trinity reads it (`reading`), each by its path with its value after the
    patch."""
    held = [key for key in keys if _holds(key, value_at(reading, key.path))]  # none written: `_writes` skips them
    return [*((key.path, key.value) for key in (*writes, *held)), *((path, value_at(reading, path)) for path in kept)]


def _aliases_written_out(data: Mapping[str, Any], values: list[tuple[tuple[str, ...], Any]]
                         ) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """The aliases of mappings in `data` (a round trip, or the config as Trinity reads it) whose keys the patch
    leaves at other `values` (by path: `_set_and_kept`) than the place they repeat (their anchor's, or another
    alias's: the one first in the file): the actor's ``fsdp_config: &f`` turned resident and the critic's
    ``model.fsdp_config: *f`` offloaded cannot both be one mapping. Each by its path, the highest alias on the way
    to the keys (``critic: *c`` where they are under the critic's model), with the place it repeats; the patch
    writes each out as a mapping of its own (`_own_copy`), so that each key holds the value the plan leaves there
    and no other path takes another's."""
    by_mapping: dict[int, dict[tuple[str, ...], set[tuple[str, str]]]] = {}
    for path, value in values:
        if isinstance(mapping := value_at(data, path[:-1]), Mapping):
            by_mapping.setdefault(id(mapping), {}).setdefault(path[:-1], set()).add((path[-1], repr(value)))
    found = []
    for sets in by_mapping.values():
        places = _paths_to(data, value_at(data, next(iter(sets))))  # in the file's order, the anchor's first
        first, *others = sorted(sets, key=lambda path: (places.index(path) if path in places else len(places), path))
        for path in (path for path in others if sets[path] != sets[first]):  # another path: an alias on the way
            found.append(next((path[:depth], place) for depth in range(1, len(path) + 1)
                              if (place := _paths_to(data, value_at(data, path[:depth]))[0]) != path[:depth]))
    return list(dict.fromkeys(found))


def _write_out_aliases(data: CommentedMap, values: list[tuple[tuple[str, ...], Any]]
                       ) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Write each alias in `data` that the patch leaves at other `values` than the place it repeats out as a mapping of
    its own (`_aliases_written_out`, `_own_copy`); return them, each with that place."""
    written_out = _aliases_written_out(data, values)
    for path, _ in written_out:
        value_at(data, path[:-1])[path[-1]] = _own_copy(value_at(data, path))
    return written_out


def _own_copy(value: Any) -> Any:
    """A copy of the mapping or list `value` (a round trip's, merged keys as its own), without its anchor or those
    inside it, to write where an alias of it was (`_aliases_written_out`); scalars as they are."""
    if isinstance(value, CommentedMap):
        copied = CommentedMap((key, _own_copy(item)) for key, item in value.items())
        if value.fa.flow_style():
            copied.fa.set_flow_style()
        return copied
    if isinstance(value, CommentedSeq):
        listed = CommentedSeq(_own_copy(item) for item in value)
        if value.fa.flow_style():
            listed.fa.set_flow_style()
        return listed
    return value


def _written_places(data: CommentedMap, writes: list[PlanKey]) -> dict[tuple[int, str], Any]:
    """Per place the patch's `writes` set in `data` (the id of the mapping that holds the key, the key), the value
    (a key set through an alias of its mapping, and at its anchor, is one place)."""
    return {(id(value_at(data, key.path[:-1])), key.path[-1]): key.value for key in writes}


def _shared_anchors(places: dict[int, list[_Place]], written: dict[tuple[int, str], Any]) -> dict[int, Any]:
    """Per anchored scalar that aliases repeat (its `places`, `_aliased_scalars`), what the patch puts at every place
    (`written`, `_written_places`): where it sets each place to one value, that value with the anchor (`_written_as`),
    one object that ruamel writes as the anchor at its first place and as aliases at the others (and, by its own id,
    itself: a place written twice, through an alias of its mapping, keeps it); else None (`_replace`)."""
    shared: dict[int, Any] = {}
    for anchored, held in places.items():
        values = [value for section, key in held if (value := written.get((id(section), key))) is not None]
        everywhere = (bool(values) and all(_scalar_kind(value) is _scalar_kind(values[0]) and value == values[0]
                                           for value in values)  # a list (the LoRA configs) is no set's member
                      and all((id(section), key) in written for section, key in held))
        anchor_section, anchor_key = held[0]
        shared[anchored] = _written_as(anchor_section[anchor_key], values[0], True) if everywhere else None
    return shared | {id(scalar): scalar for scalar in shared.values() if scalar is not None}


def _scalar_kind(value: Any) -> type:
    """A value's kind as YAML writes it: bool (ruamel's anchored booleans too, which are ints), int, float, str,
    else its type."""
    if isinstance(value, (bool, ScalarBoolean)):
        return bool
    return next((kind for kind in (int, float, str) if isinstance(value, kind)), type(value))


def _alias_comments_copied(places: dict[int, list[_Place]], aliased: dict[int, Any]) -> None:
    """Give the aliases of each anchored scalar the patch replaced at every place (`_shared_anchors`) their anchor's
    key's comments after the value, as the config's round trip did (`_aliased_scalars` dropped them): ruamel writes
    the scalar's comments as the last place it holds them at has them."""
    for anchored, held in places.items():
        if aliased.get(anchored) is None:
            continue
        (section, key), aliases = held[0], held[1:]
        own = (section.ca.items.get(key) or [None] * 4)[2:]
        for alias_section, alias_key in aliases:
            if alias_key in alias_section.ca.items:
                alias_section.ca.items[alias_key][2:] = own


def _alias_comments_moved(data: CommentedMap, places: dict[int, list[_Place]], aliased: dict[int, Any],
                          written: dict[tuple[int, str], Any]) -> None:
    """Give each alias the patch writes out (it sets that place, and not every place of the anchored scalar to one
    value: `aliased`, `_shared_anchors`) its own end-of-line comment, which ruamel holds in front of whatever follows
    the alias (the next key, the end of a collection), so that it stays beside the new value (`_replace`) rather than
    go on a line of its own; the lines after it stay where they were."""
    for anchored, held in places.items():
        if aliased.get(anchored) is not None:
            continue
        for section, key in held[1:]:
            if (id(section), key) not in written or section.fa.flow_style():
                continue
            found = _comment_starting_on(data, section.lc.key(key)[0], set())
            if found is None:
                continue
            holder, index = found
            token = holder[index]
            own, newline, rest = token.value.partition("\n")
            section.ca.items.setdefault(key, [None] * 4)[2] = CommentToken(own + newline, token.start_mark, None)
            if rest:
                token.value = rest
            else:
                del holder[index]


def _comment_starting_on(node: Any, line: int, entered: set[int]) -> tuple[list[Any], int] | None:
    """Where ruamel holds the comment that starts on `line` of the config text in front of what follows it (before a
    key or an item, at the end, before the first key) in `node` and what it holds (each collection `entered` once):
    the list of comments, and its index there; None where there is none."""
    if not isinstance(node, CommentedMap | CommentedSeq) or id(node) in entered:
        return None
    entered.add(id(node))
    comments = node.ca
    holders = [comments.end, comments.comment[1] if comments.comment else None,
               *(entry[1] for entry in comments.items.values() if entry and len(entry) > 1)]
    for holder in holders:
        for index, token in enumerate(holder if isinstance(holder, list) else []):
            if isinstance(token, CommentToken) and getattr(token.start_mark, "line", None) == line:
                return holder, index
    children = node.values() if isinstance(node, CommentedMap) else node
    return next((found for child in children if (found := _comment_starting_on(child, line, entered))), None)


def _writes(key: PlanKey, current: Any) -> bool:
    """Whether `patch_trinity_config` writes `key` where the config has `current` there (None: nothing), unless it
    keeps an interpolation there (`_kept`): not a choice of the user's it keeps (`PlanKey.default_only`), nor a key
    it only sets where present (`PlanKey.existing_only`), nor the plan's value already (of its type: written again,
    an anchored value would move its anchor to an alias)."""
    return not _users_choice(key, current) and not (key.existing_only and current is None) and not _holds(key, current)


def _holds(key: PlanKey, current: Any) -> bool:
    """Whether the config's `current` value at `key` is the plan's value already, of its type."""
    return _scalar_kind(current) is _scalar_kind(key.value) and current == key.value


def _users_choice(key: PlanKey, current: Any) -> bool:
    """Whether the config's `current` value at `key` (None: nothing) is the user's own choice, which
    `patch_trinity_config` keeps (`PlanKey.default_only`)."""
    return key.default_only and current is not None


def _written(reading: Any, keys: list[PlanKey], environ: Mapping[str, str]) -> list[PlanKey]:
    """The plan's `keys` that `patch_trinity_config` writes into the config (`reading`, as Trinity reads it):
    those `_writes` takes, less the interpolations it keeps (`_kept`)."""
    kept = _kept(reading, keys, environ)
    return [key for key in keys if _writes(key, value_at(reading, key.path)) and key.path not in kept]


def _kept(reading: Any, keys: list[PlanKey], environ: Mapping[str, str]) -> dict[tuple[str, ...], Any]:
    """The plan's `keys` whose value in the config (`reading`, as Trinity reads it) is an interpolation the patch
    keeps, with what each gives: one that gives the key's value (`_gives`) in the patched config, where a key it
    refers to may have another value (the user's indirection then stays)."""
    writes = [key for key in keys if _writes(key, value_at(reading, key.path))]
    interpolated = [key for key in writes if is_interpolation(value_at(reading, key.path))]

    def giving(kept: list[PlanKey]) -> dict[tuple[str, ...], Any]:  # those of `kept` that give their value
        values = ConfigValues(_with_values(reading, [key for key in writes if key not in kept]), environ)
        given = {key.path: _gives(values, key) for key in kept}
        return {path: value for path, value in given.items() if value is not None}

    # Each on its own among the plan's values first, then together, until those kept give theirs with one another.
    kept = [key for key in interpolated if giving([key])]
    while len(given := giving(kept)) < len(kept):
        kept = [key for key in kept if key.path in given]
    return given


def _with_values(reading: Any, keys: list[PlanKey]) -> Any:
    """A copy of `reading` with `keys` set to their values (missing sections added; none through a value that is not
    a mapping, which the patch refuses)."""
    patched = deepcopy(reading)
    for key in keys:
        node = patched
        for part in key.path[:-1]:
            if node.get(part) is None:
                node[part] = {}
            if not isinstance(node := node[part], dict):
                break
        else:
            node[key.path[-1]] = key.value
    return patched


def _gives(values: ConfigValues, key: PlanKey) -> Any:
    """What the config's interpolation at `key`'s path resolves to in `values` where Trinity would read that as the
    key's value; None otherwise. A typed key takes the text of its value (any case for a boolean); in an untyped
    section (`UNTYPED_SECTIONS`) only the value itself, of its type (``oc.decode`` gives numbers)."""
    resolved = read_or_none(values.get, key.path)
    if key.path[:2] in UNTYPED_SECTIONS:
        same = type(resolved) is type(key.value) and resolved == key.value
    else:
        text = str(resolved).lower() if isinstance(key.value, bool) else str(resolved)
        same = resolved is not None and text == yaml_scalar(key.value)
    return resolved if same else None


def aliases_written_out(text: str, plan: Plan, model: Model, *, name: str = "config",
                        environ: Mapping[str, str] | None = None,
                        version: str | None = None) -> list[tuple[str, str]]:
    """The aliases of mappings in the config `text` that `patch_trinity_config` writes out as mappings of their own
    for `plan`, as it leaves other values in them than at the place they repeat (`_aliases_written_out`: the critic's
    ``model.fsdp_config: *f`` offloaded beside the actor's ``&f`` resident): each dotted, with that place. Read from
    the config as Trinity reads it, whose aliases are one object as the round trip's are (no round trip to parse)."""
    version = _checked_release(text, plan, model, name, environ, version)
    reading, keys = _config_keys(_with_lf(text), plan, model, name, environ, version)
    writes = _written(reading, keys, environ or {})
    values = _set_and_kept(reading, keys, writes, kept_own_keys(plan, reading, environ, version))
    return [(".".join(path), ".".join(place)) for path, place in _aliases_written_out(reading, values)]


@parsing_once()
def anchored_keys(text: str, plan: Plan, model: Model, *, name: str = "config",
                  environ: Mapping[str, str] | None = None, version: str | None = None) -> list[str]:
    """The keys `patch_trinity_config` changes that sit on a YAML anchor other keys repeat, in words: a value
    that is one (``&len 65536``, ``*len`` elsewhere: what the patch does at the anchor's key and at each alias,
    `_anchored_value_words`; not where it sets them all to one value, which they then repeat, `_shared_anchors`), or
    a mapping it changes a key of (``fsdp_config: &offload``, ``*offload`` elsewhere: the change reaches them too).
    (An interpolation it keeps, `kept_interpolations`, changes nothing.)"""
    version = _checked_release(text, plan, model, name, environ, version)
    text = _with_lf(text)
    try:
        reading = load_config_mapping(text, name)  # for the values, as `patch_trinity_config` decides on them
    except ConfigError:
        load_config_mapping(text, name, YAML(typ="rt", pure=True))  # ruamel's word first where it refuses it too
        raise
    keys = _config_keys(text, plan, model, name, environ, version)[1]
    writes = _written(reading, keys, environ or {})
    repeated = aliased_anchors(text)
    if not repeated:  # no key sits on an anchor that aliases repeat: no round trip to read the anchors from
        return []
    data = load_config_mapping(text, name, YAML(typ="rt", pure=True))  # for the anchors

    def anchor_of(node: Any) -> str | None:
        anchor = getattr(getattr(node, "anchor", None), "value", None)
        return anchor if anchor in repeated else None

    found: dict[str, str] = {}  # per anchor, once
    kept_paths = kept_own_keys(plan, reading, environ, version)
    for path, place in _write_out_aliases(data, _set_and_kept(reading, keys, writes, kept_paths)):
        found[".".join(path)] = (f"{'.'.join(path)} repeats {'.'.join(place)} (*{anchor_of(value_at(data, place))}), "
                                 "but the plan leaves other values in it than there: the patch writes it out as a "
                                 "mapping of its own")
    written = _written_places(data, writes)
    kept = {(id(mapping), name) for mapping, name, _ in _merged_kept_keys(data, reading, written, kept_paths)}
    shared = _shared_anchors(_aliased_scalars(data), written)  # kept, with the new value its aliases repeat
    removed: set[tuple[str, ...]] = {("trainer", name) for name in _removed_for_05(data, version)}
    for key in writes:
        value = value_at(reading, key.path)
        if value == key.value:
            continue
        scalar = value_at(data, key.path)
        if (anchor := anchor_of(scalar)) is not None and shared.get(id(scalar)) is None:
            words = _anchored_value_words(data, scalar, anchor, written, _as_written(value), removed)
            found.setdefault(anchor, words)
        for depth in range(1, len(key.path)):
            if (anchor := anchor_of(node := value_at(data, key.path[:depth]))) is not None:
                at, *repeats = _paths_to(data, node)  # the anchor's place first: the key's path may be an alias's
                others = [".".join(path) for path in repeats]
                changed, merging = key.path[depth], getattr(node, "_ref", [])  # the mappings that merge it in (<<)
                if not others and all(changed in each._ok or (id(each), changed) in kept | written.keys()
                                      for each in merging):
                    continue  # its aliases written out, or merged in alone by mappings that hold, set or keep it
                repeat = f"{', '.join(others)} {'repeats' if len(others) == 1 else 'repeat'}" if others else (
                    "other keys repeat")
                found.setdefault(anchor, f"{'.'.join(at)} is the anchor &{anchor}, which {repeat} "
                                         f"(*{anchor}): the patch's changes in it ({key.path[-1]} to "
                                         f"{yaml_flow(key.value)}, ...) reach "
                                         f"{it_or_them(len(others))} too")
    return list(found.values())


def _anchored_value_words(data: CommentedMap, scalar: Any, anchor: str, written: dict[tuple[int, str], Any],
                          old: str, removed: set[tuple[str, ...]]) -> str:
    """What the patch does at each place of the anchored `scalar` (``&anchor``, `old` as written) in `data`, which it
    changes but does not set to one value everywhere (`written`, `_written_places`): the places it sets get their
    values written out (an alias of them goes); those it removes (`removed`: keys Trinity 0.5 refuses) go; those it
    leaves keep `old`, and the anchor moves to the first of them where it leaves its own key. A place a ``<<`` merge
    brings in, where the patch does not set it there, takes what it does in the mapping it comes from
    (`_merge_source`)."""
    anchor_path, *alias_paths = _paths_to(data, scalar)

    def new_value(path: tuple[str, ...]) -> Any:  # set at the place, else in the mapping whose own key it reads
        node = value_at(data, path[:-1])
        while (value := written.get((id(node), path[-1]))) is None and isinstance(node, CommentedMap) and (
                path[-1] not in node._ok):
            node = _merge_source(node, path[-1])
        return value

    new = {path: new_value(path) for path in (anchor_path, *alias_paths)}
    named = {path: "it" if path == anchor_path else ".".join(path) for path in new}
    sets = [f"{named[path]} to {yaml_flow(value)}" for path, value in new.items() if value is not None]
    removes = [named[path] for path, value in new.items() if value is None and path in removed]
    left = [named[path] for path, value in new.items() if value is None and path not in removed]
    words, joiner = f"sets {' and '.join(sets)}", " and "  # one place at least: the key the patch changes
    if any(new[path] is not None for path in alias_paths):
        gone = f"no longer *{anchor}" if left else f"&{anchor} and *{anchor} go"
        words, joiner = f"{words}, written out ({gone})", ", and "
    if left:
        where = "there" if len(left) == 1 else f"to {left[0]}"
        moves = "" if "it" in left else f" (the anchor moves {where})"  # it stays on its key
        words += f"{joiner}leaves {' and '.join(left)} at {old}{moves}"
        joiner = ", and "
    if removes:
        words += f"{joiner}removes {' and '.join(removes)}: {keys_05_refuses_why(len(removes))}"
    return f"{'.'.join(anchor_path)} is the anchor &{anchor}, which other keys repeat (*{anchor}): the patch {words}"


def _paths_to(data: Any, node: Any) -> list[tuple[str, ...]]:
    """The key paths in `data` (nested mappings and lists, as ruamel reads them) at which `node` itself is: its
    anchor's and its aliases' places. Each container is entered once (its first place), so that aliases of aliases
    cost no more than the text: what an alias repeats is said where its anchor is."""
    found: list[tuple[str, ...]] = []
    entered: set[int] = set()
    stack: list[tuple[Any, tuple[str, ...]]] = [(data, ())]
    while stack:
        value, path = stack.pop()
        if value is node:
            found.append(path)
            continue
        if id(value) in entered or not isinstance(value, Mapping | list):
            continue
        entered.add(id(value))
        items = value.items() if isinstance(value, Mapping) else enumerate(value)
        stack.extend(reversed([(item, (*path, str(key))) for key, item in items]))
    return found


def config_keys_changed(text: str, plan: Plan, model: Model, *, name: str = "config",
                        environ: Mapping[str, str] | None = None, version: str | None = None) -> list[str]:
    """The keys of the config `text` that `patch_trinity_config` changes for `plan` only because the config has them
    (`PlanKey.existing_only`: a role's own SP and token budget, dynamic batch sizes, gradient checkpointing and remove
    padding back on; or keys a plan without a config sets none of: the rollout model's YaRN where it was the model's),
    and the offload flags it turns off: what applying the plan's own keys by hand leaves as they were. Each a line to
    paste, as the ``apply`` lines are, with the config's value as a comment: ``key: new  # now old`` (text as YAML
    writes it, quoted where it would read as another type: ``# now 'false'`` beside ``false``)."""
    return _changed_lines(_keys_changed(text, plan, model, name, environ, version))


def _changed_lines(changed: list[tuple[PlanKey, Any, bool]]) -> list[str]:
    """`config_keys_changed` of the keys the patch writes (`changed`, `_keys_changed`'s)."""
    return [f"{'.'.join(key.path)}: {yaml_scalar(key.value)}  # now {_text_as_written(old)}"
            for key, old, beyond_own in changed if beyond_own]


class HandChangedKeys(NamedTuple):
    """What applying a plan's own keys to a config by hand leaves as it was, from one reading of the keys
    `patch_trinity_config` writes (`hand_changed_keys`)."""

    lines: list[str]
    """The keys it changes beyond the plan's own, as lines (`config_keys_changed`)."""
    critic_flags_off: tuple[tuple[str, Any], ...]
    """(dotted key, the config's value as written) of each of the PPO critic's offload flags that the config holds on
    and the patch turns off (`critic_offload_turned_off`): a verl 0.8 user's ``critic.fsdp`` flags, say, where the
    plan counts the critic resident as verl before 0.8 reads its own."""


def hand_changed_keys(text: str, plan: Plan, model: Model, *, name: str = "config",
                      environ: Mapping[str, str] | None = None, version: str | None = None) -> HandChangedKeys:
    """The keys of the config `text` that `patch_trinity_config` changes for `plan` beyond the plan's own, as lines,
    and the PPO critic's offload flags among them that it turns off (`HandChangedKeys`)."""
    changed = _keys_changed(text, plan, model, name, environ, version)
    return HandChangedKeys(_changed_lines(changed), _critic_flags_off(changed))


def _critic_flags_off(changed: list[tuple[PlanKey, Any, bool]]) -> tuple[tuple[str, Any], ...]:
    """`HandChangedKeys.critic_flags_off` of the keys the patch writes (`changed`, `_keys_changed`'s)."""
    return tuple((".".join(key.path), old) for key, old, _ in changed
                 if critic_offload_turned_off(key.path, key.value, old))


def _critic_offload_note(flags_off: tuple[tuple[str, Any], ...], plan: Plan, name: str,
                         option_names: OptionNames) -> str | None:
    """Where `patch_trinity_config` turns off offload flags of the PPO critic that the config (the file `name`) holds
    on for `plan` (`flags_off`, `_critic_flags_off`'s), the note that says so, naming them and each ``--critic``
    (`option_names`) that keeps them on (`CRITIC_FLAGS`); None where it turns none off."""
    turned = [key for key, _ in flags_off]
    if not turned:
        return None
    keeping = [option_names.valued(option_names.named("critic"), f'"{states}"' if option_names.keywords else states)
               for states, flags in CRITIC_FLAGS.items()
               if all(flags[OFFLOAD_FLAGS.index(key.rsplit(".", 1)[1])] for key in turned)]
    return (f"{and_joined(turned)} set to false, on in {name}: the plan counts the PPO critic's states {plan.critic}, "
            f"and {option_names.write} sets the critic's offload flags to that; {either(keeping)} keeps "
            f"{it_or_them(len(turned))} on, counting the critic so")


def sets_another_value(text: str, plan: Plan, model: Model, *, name: str = "config",
                       environ: Mapping[str, str] | None = None, version: str | None = None) -> bool:
    """Whether `patch_trinity_config` sets a key of the config `text` for `plan` to a plain value (text, a number, a
    boolean) that is not the config's there, as Trinity reads it (`_keys_changed`: none where it lacks the key): the
    copy it writes then differs from the config in that value, known without the round trip. Not for a key under a
    ``rope_scaling``, which the patch may yet remove whole (`_stale_rope`)."""
    return any(isinstance(key.value, bool | int | float | str) and old != key.value and "rope_scaling" not in key.path
               for key, old, _ in _keys_changed(text, plan, model, name, environ, version))


def config_key_changes(text: str, plan: Plan, model: Model, *, name: str = "config",
                       environ: Mapping[str, str] | None = None,
                       version: str | None = None) -> tuple[ConfigKeyChange, ...]:
    """Every key of the config `text` whose value, as Trinity reads it, `patch_trinity_config` changes for `plan`:
    the difference of the config and the patched copy, read so (`_differences`), each path that an alias or a
    ``<<: *anchor`` repeats named too, with the place in the file where the change is made where that is another
    (`written_at`: the anchor's). Those it sets come first, in the order it sets them (each with the keys that
    repeat its place), each with the config's value as written (None where it lacks the key) and the new one; then
    those it removes (`removed`: a stale ``model.rope_scaling``, 0.6's keys under ``trainer`` for 0.5), each with
    the config's value: ``solve --from-config --json``'s ``config_keys_changed``. Where the patch refuses `plan` (a
    cluster or a LoRA adapter of the config's that does not take it: ``--write`` writes no copy), the plan's keys
    it would set alone (`_keys_changed`), none removed."""
    changed = _keys_changed(text, plan, model, name, environ, version)
    text = _with_lf(text)
    try:
        patched = _with_lf(patched_trinity_config(text, plan, model, name=name, environ=environ,
                                                  version=version).text)
    except (QueryError, ConfigError):  # --write's refusal, which --json's answer does not make
        return tuple(ConfigKeyChange(key=".".join(key.path), config_value=old, plan_value=key.value)
                     for key, old, _ in changed)
    differences = _differences(load_config_mapping(text, name), load_config_mapping(patched, name), {})
    places = _change_places(text, patched, name, differences)
    order = {key.path: index for index, (key, _, _) in enumerate(changed)}
    first_set: dict[tuple[str, ...], float] = {}  # per place, the first of the plan's keys that sets it
    for difference in differences:
        place = places.get(difference.path, difference.path)
        first_set[place] = min(first_set.get(place, inf), order.get(difference.path, inf))
    sets = sorted((difference for difference in differences if not difference.removed), key=lambda difference: (
        first_set[places.get(difference.path, difference.path)], order.get(difference.path, inf)))
    return tuple(ConfigKeyChange(key=".".join(difference.path), config_value=difference.before,
                                 plan_value=difference.after, removed=difference.removed or None,
                                 written_at=".".join(places[difference.path]) if difference.path in places else None)
                 for difference in (*sets, *(difference for difference in differences if difference.removed)))


class _Difference(NamedTuple):
    """A key whose value differs between two configs as Trinity reads them (`_differences`): its path (keys as
    text), its value `before` (None: none) and `after`, and whether it is `removed` (`after` None)."""

    path: tuple[str, ...]
    before: Any
    after: Any
    removed: bool


_NO_MAPPING: Mapping[str, Any] = MappingProxyType({})
"""What `_differences` compares a mapping the first config lacks against (a constant: its id is a memo's key)."""


def _differences(before: Mapping[Any, Any], after: Mapping[Any, Any],
                 compared: dict[tuple[int, int], list[_Difference]]) -> list[_Difference]:
    """The keys whose values differ between the configs `before` and `after` (as Trinity reads them), in the config's
    order, then the keys `after` adds: one `before` has a value at that `after` lacks or sets to null (which Trinity
    reads as unset) is removed, whole where a mapping; in a mapping `after` adds or changes, each key; any other
    value that differs, of its type too, as a whole (a list). Every path is named, an alias's too, but each pair of
    mappings is `compared` once, so that what aliases repeat costs no more than the text (aliases of aliases)."""
    if (pair := (id(before), id(after))) in compared:
        return compared[pair]
    found: list[_Difference] = []
    for key in [*before, *(key for key in after if key not in before)]:
        old, new = before.get(key), after.get(key)
        if new is None:
            found.extend([_Difference((str(key),), old, None, True)] if old is not None else [])
        elif isinstance(new, Mapping) and isinstance(old, Mapping | None):
            found.extend(_Difference((str(key), *inner.path), *inner[1:])
                         for inner in _differences(_NO_MAPPING if old is None else old, new, compared))
        elif not _same_data(old, new, set()):
            found.append(_Difference((str(key),), old, new, False))
    compared[pair] = found
    return found


def _change_places(text: str, patched: str, name: str,
                   differences: list[_Difference]) -> dict[tuple[str, ...], tuple[str, ...]]:
    """The `differences` between the config `text` and its `patched` copy whose change is made at another place in
    the file (an anchor an alias repeats, or a ``<<: *anchor`` merges in: `_place`), each with that place: where the
    copy holds the key (a set one, or a removed one the patch set to null, as `_delete` does a key a ``<<`` merges
    in), else where the config had it (a removed one the patch deleted). None without aliases (`aliased_anchors`)."""
    if not aliased_anchors(text):
        return {}
    config, copy = (load_config_mapping(source, name, YAML(typ="rt", pure=True)) for source in (text, patched))
    config_firsts, copy_firsts = _first_places(config, scalars=False), _first_places(copy, scalars=True)
    places = {difference.path: _place(copy, difference.path, copy_firsts)
              or _place(config, difference.path, config_firsts) for difference in differences}
    return {path: place for path, place in places.items() if place not in (None, path)}


def _first_places(data: Any, *, scalars: bool) -> dict[int, tuple[str, ...]]:
    """Each mapping's place in `data` (a round trip's, with its anchors) by id, and with `scalars` each anchored
    scalar's (``&anchor 24576``, which its aliases are: in the patched copy, where a changed alias's value is set at
    its anchor; a removed key goes at its own place, whatever its value): the first path to it through keys of the
    mappings' own (not ones a ``<<`` merges in) in the file's order, its anchor's; but not through a list, which no
    dotted key names (`_differences` names it whole): a mapping anchored in one is placed at an alias of it."""
    firsts: dict[int, tuple[str, ...]] = {}
    stack: list[tuple[Any, tuple[str, ...]]] = [(data, ())]
    while stack:
        value, path = stack.pop()
        if id(value) in firsts:
            continue
        if not isinstance(value, CommentedMap):
            if scalars and _anchored_scalar(value):
                firsts[id(value)] = path
            continue
        firsts[id(value)] = path
        stack.extend(reversed([(item, (*path, str(key))) for key, item in value.items() if key in value._ok]))
    return firsts


def _place(data: CommentedMap, path: tuple[str, ...], firsts: dict[int, tuple[str, ...]]) -> tuple[str, ...] | None:
    """Where in the file (a round trip's `data`, its containers' and anchored scalars' `firsts`, `_first_places`)
    the key at `path` is written: its anchor's place where its value is an alias of an anchored scalar in `firsts`,
    else its mapping's place (an alias's is its anchor's), or, for a key the mapping merges in, the place of the
    mapping it merges that holds it, the one the config as Trinity reads it takes (`_merge_source`). None where
    `data` has no such key as written (a key YAML 1.1 reads otherwise than ruamel's YAML 1.2, such as ``on``), or
    that mapping is in a list alone (`_first_places`)."""
    node: Any = data
    for part in path[:-1]:
        node = node.get(part) if isinstance(node, CommentedMap) else None
    while isinstance(node, CommentedMap) and path[-1] not in node._ok:  # merged in: from the one read
        node = _merge_source(node, path[-1])
    if node is None or id(node) not in firsts:
        return None
    value = node.get(path[-1])
    return firsts[id(value)] if id(value) in firsts and _anchored_scalar(value) else (*firsts[id(node)], path[-1])


def _merge_source(mapping: CommentedMap, key: str) -> CommentedMap | None:
    """The mapping a ``<<`` merge of `mapping` brings `key` in from as the config as Trinity reads it takes it: of a
    merge list, the first that holds it (YAML's merge key), or the last where that reading takes the last
    (`_merge_takes_last`); None where none holds it. (Where two hold the value read, the one the patch changed is
    that one: its value alone does not tell them apart.)"""
    holding = [merged for merged in mapping.merge if key in merged]
    return (holding[-1] if _merge_takes_last(key) else holding[0]) if holding else None


@cached_names
def _merge_takes_last(key: str) -> bool:
    """Whether the config as Trinity reads it (`load_config_mapping`'s PyYAML) takes `key` from the last mapping of a
    ``<<`` merge list that holds it, not the first: PyYAML 6.0.4 does for a key of more than one character (it keeps
    each merged key that is not the same object as one before, ``constructor.py:191`` to ``:205``)."""
    probe = load_config_mapping(f"first: &first {{{json.dumps(key)}: 1}}\nlast: &last {{{json.dumps(key)}: 2}}\n"
                                "merged: {<<: [*first, *last]}\n", "merge probe")
    return bool(probe["merged"][key] == 2)


def _anchored_scalar(value: Any) -> bool:
    """Whether `value` (a round trip's) is a scalar with an anchor of its own (``&anchor 24576``): one object that
    its aliases repeat, which the patch changes at the anchor alone."""
    anchor = getattr(value, "anchor", None)
    return not isinstance(value, Mapping | list) and anchor is not None and anchor.value is not None


def _checked_release(text: str, plan: Plan, model: Model, name: str, environ: Mapping[str, str] | None,
                     version: str | None) -> TrinityVersion | None:
    """The release the patch writes `plan` for (`written_release`: the plan's own where `version` names none), after
    `QueryError` for arguments of the wrong type (`text`, `name`, `environ` and `version` as `check_config_arguments`
    takes them), as `patched_trinity_config` refuses them, for the functions that say what it does."""
    check_types(("plan", plan, Plan), ("model", model, Model), ("environ", environ, Mapping | None))
    check_config_arguments(text, name, {} if environ is None else environ, version)
    return written_release(plan, version)


def _keys_changed(text: str, plan: Plan, model: Model, name: str, environ: Mapping[str, str] | None,
                  version: str | None) -> list[tuple[PlanKey, Any, bool]]:
    """The plan's keys that `patch_trinity_config` writes into the config `text` for `plan`, each with the config's
    value there (None where it lacks the key) and whether it is beyond the plan's own keys (`config_keys_changed`'s:
    set only because the config has it, or one a plan without a config sets none of). Within `parsing_once`, worked
    out once for the same arguments (the notes of one command ask it several times)."""
    release = _checked_release(text, plan, model, name, environ, version)
    return list(_worked_once("keys changed", text, plan, model, name, environ, release,
                             lambda: _keys_changed_anew(text, plan, model, name, environ, release)))


def _keys_changed_anew(text: str, plan: Plan, model: Model, name: str, environ: Mapping[str, str] | None,
                       version: TrinityVersion | None) -> tuple[tuple[PlanKey, Any, bool], ...]:
    """`_keys_changed`, worked out (for the release `version`, checked)."""
    reading, keys = _config_keys(_with_lf(text), plan, model, name, environ, version)
    own = {key.path for key in keys_for_plan(plan, model, None, environ, version) if not key.existing_only}
    return tuple((key, value_at(reading, key.path), key.existing_only or key.path not in own)
                 for key in _written(reading, keys, environ or {}))


def config_keys_kept(text: str, plan: Plan, model: Model, *, name: str = "config",
                     environ: Mapping[str, str] | None = None,
                     version: str | None = None) -> dict[tuple[str, ...], str]:
    """The plan's keys that `patch_trinity_config` leaves as the config `text` has them, the user's choice
    (`PlanKey.default_only`): a YaRN ``model.rope_scaling`` of its own form that reaches the plan's length
    (`YARN_KEPT`), its own ``model.rope_theta`` beside a YaRN, and with Offload ``trainer.save_hf_checkpoint``; by
    path, each with the config's value as written (``4.0``), an interpolation's as it resolves in `environ`
    (``${yarn.factor}``: ``4``), as the plan reads it. The ``apply`` lines then leave them too."""
    version = _checked_release(text, plan, model, name, environ, version)
    reading, keys = _config_keys(_with_lf(text), plan, model, name, environ, version)
    values = ConfigValues(reading, environ or {})
    return {key.path: _as_written(read_or_none(values.get, key.path) if is_interpolation(written) else written)
            for key in keys if _users_choice(key, written := value_at(reading, key.path))}


def rope_scaling_written(text: str, plan: Plan, model: Model, *, name: str = "config",
                         environ: Mapping[str, str] | None = None, version: str | None = None) -> str | None:
    """The ``model.rope_scaling`` mapping that `patch_trinity_config` leaves in the config `text` for `plan`, where the
    config has a mapping there: its own with the plan's keys set as the patch sets them (`_set`: ``rope_type`` right
    after a legacy ``type``, which stays, as its other keys do), in YAML's flow style (`yaml_flow`), so that the
    ``apply`` line says what --write writes; None where the config has no mapping there (the line's own then)."""
    version = _checked_release(text, plan, model, name, environ, version)
    text = _with_lf(text).removeprefix("\ufeff")
    reading = load_config_mapping(text, name)
    rope = ("model", "rope_scaling")
    if not isinstance(value_at(reading, rope), Mapping):
        return None
    data = load_config_mapping(text, name, _round_trip_yaml(text))
    for key in _written(reading, _config_keys(text, plan, model, name, environ, version)[1], environ or {}):
        if key.path[:len(rope)] == rope:
            _set(data, key, text.splitlines(), {})
    return yaml_flow(value_at(data, rope))


def _as_written(value: Any) -> str:
    """A config's value as YAML writes a scalar (`yaml_scalar`), ``unset`` for none, else briefly."""
    if value is None:
        return "unset"
    return yaml_scalar(value) if isinstance(value, (bool, int, float, str)) else yaml_brief(value)


def _text_as_written(value: Any) -> str:
    """A config's value as `_as_written` gives it, but text (not an interpolation) as YAML writes it
    (`yaml_flow_text`): quoted where YAML would read it as another type (``'false'``, ``'8'``)."""
    if isinstance(value, str) and not is_interpolation(value):
        return yaml_flow_text(value)
    return _as_written(value)


def kept_interpolations(text: str, plan: Plan, model: Model, *, name: str = "config",
                        environ: Mapping[str, str] | None = None, version: str | None = None) -> list[str]:
    """The keys `patch_trinity_config` leaves as the config's interpolations, which give the plan's value in
    `environ` (and may give another elsewhere), in words."""
    version = _checked_release(text, plan, model, name, environ, version)
    data, keys = _config_keys(_with_lf(text), plan, model, name, environ, version)
    return [f"{'.'.join(path)} stays {value_at(data, path)}, which gives {given} in this environment: the plan holds "
            "for that value" for path, given in _kept(data, keys, environ or {}).items()]


def _replaced_words(changed: list[tuple[PlanKey, Any, bool]]) -> list[str]:
    """The keys whose interpolation in the config `patch_trinity_config` replaces with the plan's value, of the keys it
    writes (`changed`, `_keys_changed`'s: those that do not give it in the environment, as `kept_interpolations`
    keeps the others), in words."""
    return [f"{'.'.join(key.path)} {old} replaced by the plan's {_as_written(key.value)}: the interpolation gives "
            "another value here, or none, and the patch writes the value the plan holds for"
            for key, old, _ in changed if is_interpolation(old)]


def kept_interpolated_keys(text: str, plan: Plan, model: Model, *, name: str = "config",
                           environ: Mapping[str, str] | None = None,
                           version: str | None = None) -> tuple[str, ...]:
    """The dotted keys `patch_trinity_config` leaves as the config's interpolations (those `kept_interpolations`
    names): the patch sets none of them, though what they give may change with a key they refer to."""
    version = _checked_release(text, plan, model, name, environ, version)
    data, keys = _config_keys(_with_lf(text), plan, model, name, environ, version)
    return tuple(".".join(path) for path in _kept(data, keys, environ or {}))


def _config_keys(text: str, plan: Plan, model: Model, name: str, environ: Mapping[str, str] | None,
                 version: TrinityVersion | None) -> tuple[Any, list[PlanKey]]:
    """The config `text` (the file `name`) as Trinity reads it (`load_config_mapping`), and the keys `plan` sets in it
    (`keys_for_plan`, its interpolations read in `environ`, for the release `version`): within `parsing_once`, the
    keys worked out once for the same arguments (the functions that say what the patch does each ask them)."""
    reading = load_config_mapping(text, name)
    return reading, list(_worked_once("plan keys", text, plan, model, name, environ, version,
                                      lambda: tuple(keys_for_plan(plan, model, reading, environ, version))))


def _worked_once(kind: str, text: str, plan: Plan, model: Model, name: str, environ: Mapping[str, str] | None,
                 version: TrinityVersion | None, work: Callable[[], tuple[Any, ...]]) -> tuple[Any, ...]:
    """`work()`, what is worked out of the config `text` for `plan` (`kind`: which), within `parsing_once` once for the
    same arguments (`computed_once`; `environ` by its items: a mapping that notes what is read from it, as
    `solver.trinity.interpolation.NoEnvironment` does, has no place here)."""
    arguments = (text, plan, model, name, None if environ is None else tuple(environ.items()), version)
    return computed_once((kind, *arguments), work)


@parsing_once()
def patched_config_problems(text: str, patched: PatchedConfig, plan: Plan, model: Model, *, name: str = "config",
                            environ: Mapping[str, str] | None = None, version: str | None = None,
                            option_names: OptionNames = API_OPTIONS, train_batch_size: int | None = None,
                            train_batch_source: str = TRAIN_BATCH_KEY) -> list[ConfigProblem]:
    """What ``--write`` warns of `patched`, the config `text` with `plan` applied (`patched_trinity_config`, given
    the same `environ` and `version`), each a `ConfigProblem`: Trinity 0.6's keys under ``trainer`` that the patch
    left for 0.5 because a ``<<: *anchor`` merges them in (`PatchedConfig.merged_for_05`), in one line of their own
    in place of the check's lines on them, whose words say the patch removes them; what else in the patched config
    breaks Trinity's or verl's rules (`trinity_config_problems`, on the plan's trainer GPUs); and the keys the patch
    changed on a YAML anchor other keys repeat (`anchored_keys`). [] if none; not the check's ``dpo-pair-doubled``
    line where `PatchedConfig.dpo_note` says it, nor its ``dpo-mini-batch-split`` line on the 2 written, doubled to 4
    before verl 0.8, where the note says to write 1 there and the batch splits in pairs over the plan's ranks
    (`_doubled_pair_split`). `option_names` as
    `patched_trinity_config`'s: how the words name the patch (``--write`` passes its flags, `COMMAND_OPTIONS`).
    `train_batch_size`, the config's train batch where known (from `train_batch_source`), is checked too: the patch
    keeps it, but may change what must divide it (the actor's micro-batch, ``mini-batch-split``,
    ``dpo-mini-batch-split`` for DPO)."""
    check_types(("patched", patched, PatchedConfig), ("plan", plan, Plan), ("model", model, Model),
                ("environ", environ, Mapping | None), ("option_names", option_names, OptionNames))
    # a release read as its minor version, as plan reads it; the plan's own release where none is named
    version = written_release(plan, check_config_arguments(text, name, {} if environ is None else environ, version))
    merged = [_merged_keys_problem(patched.merged_for_05, option_names)] if patched.merged_for_05 else []
    checked = [problem for problem in trinity_config_problems(load_config_mapping(patched.text, name), model,
                                                              plan.gpus, environ=environ, version=version,
                                                              option_names=option_names,
                                                              train_batch_size=train_batch_size,
                                                              train_batch_source=train_batch_source,
                                                              experts=written_layout(version, plan.expert_layout))
               if not (merged and problem.code in _MERGED_KEYS_CODES)
               and not (patched.dpo_note and problem.code == ConfigProblemCode.DPO_PAIR_DOUBLED)
               and not _doubled_pair_split(problem, patched, plan, train_batch_size)]
    anchored = [ConfigProblem(ConfigProblemCode.ANCHORED_KEY_CHANGED, words)
                for words in anchored_keys(text, plan, model, name=name, environ=environ, version=version)]
    return merged + checked + anchored


def _doubled_pair_split(problem: ConfigProblem, patched: PatchedConfig, plan: Plan, train_batch_size: int | None
                        ) -> bool:
    """Whether `problem` of `patched` is the check's ``dpo-mini-batch-split`` line (not refused: one verl line fails)
    on DPO's pair 2 that `PatchedConfig.dpo_note` says to write as 1 before verl 0.8, where `train_batch_size` splits
    in pairs over `plan`'s ranks (`solver.rules.splits_batch`'s `pairs`, as the plans keep it): the 2 then splits it on
    verl 0.8 or later, and the note's 1, doubled to a pair, before 0.8, so only the 2 doubled to 4 fails there, which
    the note already rules out (the patch writes the roles' SP as the plan's, so verl 0.8's engine splits it at the
    same ranks)."""
    return (patched.dpo_note is not None and problem.code == ConfigProblemCode.DPO_MINI_BATCH_SPLIT
            and train_batch_size is not None and splits_batch(train_batch_size, plan.gpus, plan.sp, pairs=True))


_MERGED_KEYS_CODES = (ConfigProblemCode.TRAINER_OFFLOAD_KEYS_REFUSED, ConfigProblemCode.TRAINER_KEYS_REFUSED)
"""The codes of the check's lines on Trinity 0.6's keys under ``trainer`` that 0.5 refuses: in a config patched for
0.5, each such key left is one a ``<<: *anchor`` merges in, which `PatchedConfig.merged_for_05` holds (it is read from
the patched text as the check reads it), so its own line says them in their stead."""


def _merged_keys_problem(merged: tuple[str, ...], option_names: OptionNames) -> ConfigProblem:
    """The problem of Trinity 0.6's keys `merged` into ``trainer`` by a ``<<: *anchor``, which the patch (as
    `option_names` name it) leaves for 0.5 (the check's own words say the patch removes them)."""
    them = it_or_them(len(merged))
    return ConfigProblem(ConfigProblemCode.TRAINER_KEYS_MERGED_REFUSED, (
        f"{keys_05_refuses_words(merged)}; a '<<: *anchor' merges {them} into trainer, and {option_names.write} leaves "
        f"the anchor as it is, since other sections may share it: remove {them} there"))


class _NullWordRepresenter(RoundTripRepresenter):
    """ruamel's round-trip representer, but writing None as ``null``."""

    def represent_none(self, data: None) -> Any:
        """``null``, not ruamel's empty value."""
        return self.represent_scalar("tag:yaml.org,2002:null", "null")


_NullWordRepresenter.add_representer(type(None), _NullWordRepresenter.represent_none)


def _stale_rope(rope: Any, plan: Plan, model: Model) -> bool:
    """Whether a config's ``model.rope_scaling`` must go: YaRN within the native context (its factor would
    contradict the length), a scaling by a factor (YaRN, linear, dynamic) for a model whose type is advised no YaRN
    (`Model.rope_advice`: Phi-3's, a RoPE the checkpoint was not trained with, or a PhiMoE's that its trainer fails
    on), or any scaling other than the model's own for a model that has one; a null one sets nothing, so it stays."""
    if rope is None:
        return False
    kind = rope.get(rope_type_key(rope)) if isinstance(rope, Mapping) else None
    if model.rope_scaling is None:
        return plan.max_model_len <= model.native_context or model.rope_advice.unadvised(kind)
    return kind != model.rope_scaling
