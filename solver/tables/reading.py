"""Reading YAML files: unique keys, size limits, and validation errors as one-line messages naming the place; the
readers of a user's file (`read_user_file`), of the models file (`load_models`) and of a GPU table file
(`load_gpu_type`, which `Catalog.with_cells` needs below the catalogue); a text parsed once within a call
(`parsing_once`, `parsed_once`; and what is computed of it, `computed_once`); a path the API is given (`given_path`);
and which paths name the same file (`same_file`, `check_once`)."""

from __future__ import annotations

import copy
import datetime
import difflib
import errno
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple, TypeVar, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError

from solver.tables.bounds import MAX_FILE_BYTES, NODE_IS_ONE_HOST, critic_meant, mib_as_gb_hint
from solver.tables.inputs import MAX_PRIORITY, UNION_TAGS, FleetFile, MemoryModel, Weights
from solver.tables.schema import (
    SOURCE_TAGS,
    TYPED,
    GpuType,
    Model,
    ModelsFile,
    RowProblem,
    own_words,
    sp_rule_violation,
)
from solver.tables.text import (
    PLAIN_PROBLEMS,
    QueryError,
    TableError,
    brief,
    check_types,
    counted,
    cut,
    first_repeated,
    gpu_name_forms,
    length_forms,
    meant_whole_number,
    named_jobs,
    names_a_stream,
    names_joined_hint,
    normalise,
    plain_words,
    thousands_of_tokens,
    whole_number_note,
    yaml_brief,
)


def given_path(name: str, value: Path | str, text_way: str = "") -> Path:
    """`value`, the parameter `name`'s `Path` or str, as a `Path`; `QueryError` for another type, for a str that is
    empty or blank (which `Path` would take for the current folder, and the command refuses) and for one of several
    lines (a file's text given for its path, which would otherwise be quoted whole in the message; `text_way`, where
    given, says how to pass a text), and for a name no file can have (a NUL character, or a lone surrogate other than
    `os.fsdecode`'s escape of a byte)."""
    check_types((name, value, Path | str))
    if isinstance(value, str) and not value.strip():
        raise QueryError(f"{name} must be a non-empty path, got {brief(value)}")
    if isinstance(value, str) and ("\n" in value or "\r" in value):
        raise QueryError(f"{name} must be a path, not a file's text: got several lines ({brief(value)})"
                         f"{text_way and f'; {text_way}'}")
    if "\0" in str(value):  # os.stat and open raised ValueError, not the API's error
        raise QueryError(f"{name} must be a path the file system can name, got {brief(str(value))}: a NUL character, "
                         "which no file name holds")
    try:
        os.fsencode(value)
    except UnicodeEncodeError:  # a lone surrogate that is no byte's escape (os.fsdecode's): no file has that name
        raise QueryError(f"{name} must be a path the file system can name, got {brief(str(value))}: a lone surrogate "
                         "that stands for no byte") from None
    return Path(value)


def resolved_path(path: Path) -> Path:
    """Where a path leads (through links); a link in a loop, one that leads nowhere, or a path that cannot
    be looked at (in a folder without search permission), is itself."""
    try:
        if not path.is_symlink():
            return path
        return path.resolve(strict=False)  # a dangling link leads to where its file would be
    except (OSError, RuntimeError):  # a loop (RuntimeError before Python 3.13)
        return path


def same_file(path: Path, other: Path) -> bool:
    """Whether two paths name the same file: an existing one, or one a write would make (the same real path,
    relative or absolute, through links to folders and dangling links alike)."""
    return file_identity(path) == file_identity(other)


def file_identity(path: Path) -> tuple[int, int] | str:
    """What tells the file at `path` from others (`same_file`): an existing file's device and inode, else the real
    path a write would make it at. Equal for two paths, they are one file; a key for many paths at once.
    `QueryError` for a relative path where the working directory has been removed: it names no file."""
    try:
        status = path.stat()
    except OSError:
        try:
            return os.path.realpath(path)
        except OSError:  # os.getcwd(): the working directory was removed under the command
            raise QueryError(f"{path}: the working directory, where a relative path starts, no longer exists; cd to "
                             "one that does, or give an absolute path") from None
    return status.st_dev, status.st_ino


def check_once(flag: str, paths: Sequence[Path]) -> None:
    """`QueryError` when two of the files a repeatable `flag` (or argument) names are the same file."""
    twice = next((path for i, path in enumerate(paths) if any(same_file(path, other) for other in paths[:i])), None)
    if twice is not None:
        raise QueryError(f"{flag} {twice}: the same file is given twice; give each file once")


class UniqueKeys:
    """For a PyYAML loader (before it in the bases): a mapping with the same key twice is refused (plain YAML
    keeps the last); a key that a merge key (``<<: *defaults``) brings in and the mapping sets again is not
    twice, as in YAML 1.1."""

    _document: yaml.Node | None = None
    """The document's top node: a mapping below it with a key twice is named by its `name` (`_named_entry`)."""

    def construct_document(self, node: yaml.Node) -> Any:
        """The loader's document, its top node kept."""
        self._document = node
        return super().construct_document(node)  # type: ignore[misc]

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """The loader's mapping, once every key is a plain value given once (`TableError` naming the line, and the
        entry's name where it is one of the document's entries)."""
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)  # type: ignore[attr-defined]
            if not isinstance(key, (str, int, float, bool, type(None))):
                raise TableError(f"line {key_node.start_mark.line + 1}: a key must be a plain value, "
                                 f"not a {type(key).__name__}")
            if key in seen:
                raise TableError(f"line {key_node.start_mark.line + 1}: key {_key_as_written(key, key_node)} appears "
                                 f"twice{'' if node is self._document else _named_entry(node, key)}")
            seen.add(key)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)  # type: ignore[misc]
        return mapping


def _named_entry(node: yaml.MappingNode, repeated: Any) -> str:
    """Where an entry (a mapping below the document's top) with a key given twice has a plain `name` (a cluster
    file's job or pool), the words that name it after the message (`` in the entry named 'math-4b'``), so that one of
    many entries on a line is found; else, or where `name` is the key given twice, nothing."""
    name = next((value.value for key, value in node.value if isinstance(key, yaml.ScalarNode) and key.value == "name"
                 and isinstance(value, yaml.ScalarNode)), None)
    return f" in the entry named {name!r}" if name and repeated != "name" else ""


def _key_as_written(key: Any, node: yaml.Node) -> str:
    """A mapping's `key`, read from `node`, as a message names it: ``'gpu'``, ``true``, or as written where YAML read it
    as another value (``'yes', which YAML reads as true,``)."""
    shown = repr(key) if isinstance(key, str) else yaml_brief(key)
    return shown if isinstance(key, str) or node.value == shown else f"{node.value!r}, which YAML reads as {shown},"


class WrittenKeys:
    """For a PyYAML loader (before it in the bases): a key YAML 1.1 reads as something other than text (``true``,
    ``on``, ``3``, ``null``) is its text as written, so that a schema refuses it as the unknown field the user wrote
    (``unknown field 'true'``, naming the fields), not as a key of another type at the place Python writes it
    (``1`` for true)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """The loader's mapping, its keys as written."""
        _keys_as_written(node)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)  # type: ignore[misc]
        return mapping

    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        """The loader's merge of the mappings a merge key brings in (``<<: *defaults``), their keys as written."""
        _keys_as_written(node)
        super().flatten_mapping(node)  # type: ignore[misc]


def _keys_as_written(node: yaml.MappingNode) -> None:
    """Make a mapping node's scalar keys text, as written (but a merge key's ``<<``)."""
    node.value = [(yaml.ScalarNode(_TEXT_TAG, key.value, key.start_mark, key.end_mark)
                   if isinstance(key, yaml.ScalarNode) and key.tag not in (_TEXT_TAG, _MERGE_TAG) else key, value)
                  for key, value in node.value]


_TEXT_TAG = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_NULL_TAG = "tag:yaml.org,2002:null"


class UniqueKeyLoader(WrittenKeys, UniqueKeys, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's safe loader (libyaml's, where installed) with `WrittenKeys` and `UniqueKeys`: the tables' files and
    a user's files that a schema validates."""


ValueLines = dict[int, dict[Any, int]]
"""The line (from 1) each value of a file's mappings and lists starts on: by the container's id, then its key or
index (`LineMarkingLoader`)."""


class LineMarkingLoader(UniqueKeyLoader):
    """`UniqueKeyLoader` that keeps the line each value of its mappings and lists starts on (`value_lines`), which a
    cells file's refusal names (`load_validated`)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.value_lines: ValueLines = {}

    def construct_marked_mapping(self, node: yaml.MappingNode) -> Iterator[dict[Any, Any]]:
        """The mapping of `node`, its values' lines kept (as PyYAML's own, filled once yielded: anchors)."""
        data: dict[Any, Any] = {}
        yield data
        data.update(self.construct_mapping(node))
        self.value_lines[id(data)] = {self.construct_object(key): value.start_mark.line + 1
                                      for key, value in node.value}

    def construct_marked_list(self, node: yaml.SequenceNode) -> Iterator[list[Any]]:
        """The list of `node`, its items' lines kept."""
        data: list[Any] = []
        yield data
        data.extend(self.construct_sequence(node))
        self.value_lines[id(data)] = {index: item.start_mark.line + 1 for index, item in enumerate(node.value)}


LineMarkingLoader.add_constructor("tag:yaml.org,2002:map", LineMarkingLoader.construct_marked_mapping)
LineMarkingLoader.add_constructor("tag:yaml.org,2002:seq", LineMarkingLoader.construct_marked_list)


class WrittenNames:
    """For a PyYAML loader (before it in the bases): the value of a key `NAME_KEYS` names that YAML 1.1 reads as
    something other than text (``010``, ``1.50``, ``on``, ``2024-01-01``) is its text as written, so that
    ``name: 010`` is the name ``010``, not the octal 8; null (nothing, ``~``, ``null``) stays null, as no name."""

    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        """The loader's merge of the mappings a merge key brings in, then the values of its names as written."""
        super().flatten_mapping(node)  # type: ignore[misc]
        node.value = [(key, yaml.ScalarNode(_TEXT_TAG, value.value, value.start_mark, value.end_mark)
                       if isinstance(key, yaml.ScalarNode) and key.value in NAME_KEYS
                       and isinstance(value, yaml.ScalarNode) and value.tag not in (_TEXT_TAG, _NULL_TAG) else value)
                      for key, value in node.value]


NAME_KEYS = frozenset({"name", "pool", "trinity_version"})
"""The keys of a cluster file whose values are names (a pool's and a job's, the pool a job names, and the Trinity
release a job runs on: ``0.5``, not the number 0.5), each the text as written (`WrittenNames`)."""


class FleetLoader(WrittenNames, LineMarkingLoader):
    """`LineMarkingLoader` with `WrittenNames`: a cluster file's, whose refusals name the line as a cells file's do."""


NUMBER_TOO_LONG = "a number too long to read (thousands of digits)"
"""What a message says of an integer longer than Python converts (4300 digits)."""
MAX_INT_DIGITS = 640
"""The most digits of an integer that Python converts to text however its limit is set (4300 by default, 640 at the
least): more, in a number a message would write out, are written in exponent notation instead."""


_PARSED: ContextVar[dict[tuple[Any, ...], Any] | None] = ContextVar("parsed", default=None)
"""What `parsed_once` parsed and `computed_once` computed within the current `parsing_once`, per key (a parse's kind
and text); None outside one."""

GpuTypeNamed = Callable[[str], str | None] | None
"""What names the GPU type a word is a name or alias of (``h100``: H100-80GB), else None: `Catalog.gpu_type_named`;
None where the file's unknown fields are not looked up as GPU types."""

_Parsed = TypeVar("_Parsed")


@contextmanager
def parsing_once() -> Iterator[None]:
    """Within it (one command, one API call; as a decorator, each call of the function), `parsed_once` parses a
    text once per kind; what it parsed goes at its end. Nested, the outermost one holds."""
    if _PARSED.get() is not None:
        yield
        return
    token = _PARSED.set({})
    try:
        yield
    finally:
        _PARSED.reset(token)


def parsed_once(kind: str, text: str, parse: Callable[[str], _Parsed]) -> _Parsed:
    """`parse(text)`, or within `parsing_once` what it gave for the same `kind` and `text` there before (the callers
    share it: none may change it); a parse that raises is not kept."""
    return computed_once((kind, text), partial(parse, text))


def computed_once(key: tuple[Any, ...], compute: Callable[[], _Parsed]) -> _Parsed:
    """`compute()`, or within `parsing_once` what it gave for an equal `key` there before: `key` holds a name for the
    computation and every value it is a pure function of (the callers share what it gives: none may change it); one
    that raises is not kept, and a `key` that cannot be hashed (a value that is no frozen type) is computed anew."""
    parsed = _PARSED.get()
    if parsed is None:
        return compute()
    try:
        known = key in parsed
    except TypeError:  # unhashable
        return compute()
    if not known:
        parsed[key] = compute()
    result: _Parsed = parsed[key]
    return result


def yaml_limit(error: BaseException) -> str | None:
    """Which of Python's limits a YAML loader's `error` ran into, in words: nesting deeper than its recursion
    goes (said in libyaml's words for its own limit), or an integer longer than it converts; None for others."""
    if isinstance(error, RecursionError):
        return "malformed YAML: exceeded maximum nesting depth"
    if isinstance(error, ValueError) and "integer string conversion" in str(error):
        return NUMBER_TOO_LONG
    return None


def yaml_error_place(error: BaseException, text: str) -> str:
    """Where in `text` a YAML loader's `error` lies, in words before a colon: ``line N: ``, or ``at the end of the
    file: `` for a mark at its end (an unclosed bracket: its line past the last); for a character the reader refuses
    (a control character, unseen), its line; "" without a mark."""
    mark = getattr(error, "problem_mark", None)
    if mark is None:
        position = getattr(error, "position", None)  # PyYAML's and ruamel's ReaderError: the character's index
        if not isinstance(position, int):
            return ""
        line = text.count("\n", 0, position) + 1
        return f"line {line}: "
    return "at the end of the file: " if mark.index >= len(text) else f"line {mark.line + 1}: "


def yaml_tab_problem(error: BaseException, text: str) -> str | None:
    """Where a YAML loader's `error` marks a tab in `text` (PyYAML's "found character '\\t' that cannot start any
    token", libyaml's "found a tab character that violates indentation"), the problem in words, with its fix:
    a tab that indents its line (YAML indents with spaces alone), or one elsewhere on it (at its column: PyYAML's
    pure-Python loader, Trinity's, takes no tab after a colon); None for another error."""
    mark = getattr(error, "problem_mark", None)
    if mark is None or text[mark.index:mark.index + 1] != "\t":
        return None
    if text[:mark.index].rsplit("\n", 1)[-1].strip(" \t"):
        return f"a tab (column {mark.column + 1}) where the YAML reader takes only spaces; use spaces"
    return "tabs are not allowed for indentation in YAML; use spaces"


def yaml_bare_dash_problem(error: BaseException, text: str) -> str | None:
    """Where a YAML loader's `error` marks a ``-`` alone after a key in `text` (``Qwen3-8B: -``, a cell where nothing
    trained, in block style: YAML reads it as a list's item there), the problem in words, with its fix; None for
    another error."""
    mark = getattr(error, "problem_mark", None)
    if mark is None or text[mark.index:mark.index + 1] != "-":
        return None
    line_start = text.rfind("\n", 0, mark.index) + 1
    line_end = len(text) if (end := text.find("\n", mark.index)) < 0 else end
    before, after = text[line_start:mark.index], text[mark.index + 1:line_end]
    if not before.rstrip().endswith(":") or after.split("#", 1)[0].strip():
        return None
    return "a bare '-' after a key, which YAML reads as a list's item there: quote it, \"-\""


def yaml_comma_fields_problem(error: BaseException, text: str) -> str | None:
    """Where a YAML loader's `error` marks a second field after a comma on a line of a block mapping (``nodes: 6,
    down: [3]``: a comma separates fields only inside ``{...}``), the problem in words, with its fix (braces shown
    around the mapping's first field: `_first_field`); where it marks a mapping written as a field's value on the
    field's line (``model: model_path: X, max_model_len: 8192``), that, with braces around the value; None for
    another error. A cluster, cells or Trinity file's."""
    mark = getattr(error, "problem_mark", None)
    if mark is None or "mapping values are not allowed" not in str(getattr(error, "problem", "")):
        return None
    lines = text.split("\n")
    line = lines[mark.line] if mark.line < len(lines) else ""
    fields = re.fullmatch(_FIELD + r"[^{}\[\]#]*,\s*([^\s:{}\[\],#]+)\s*", line[:mark.column])
    if fields is None:
        nested = re.fullmatch(_FIELD + r"\s*([^\s:{}\[\],#]+)\s*", line[:mark.column])
        return None if nested is None else (
            f"field {nested[4]} in the value of {nested[3]}, on its line: a mapping as a field's value goes inside "
            f"{{...}} there, {nested[3]}: {{{nested[4]}: ..., ...}}, or each of its fields on its own line below "
            f"{nested[3]}, indented (text with ': ' in it goes in quotes)")
    first = fields[3] if fields[1] else _first_field(lines[:mark.line], fields.start(3), fields[3])
    return (f"fields {fields[3]} and {fields[4]} on one line, joined by a comma, which separates fields only inside "
            f"{{...}}: give each field its own line, or write the whole entry in braces, {{{first}: ..., ...}}")


_FIELD = r"\s*((-\s+)*)([^\s:{}\[\],#]+):"
"""A block line's field up to its colon: its indentation, a list item's dashes (group 1, the last in group 2) and the
field (group 3)."""


def _first_field(before: list[str], column: int, field: str) -> str:
    """The first field of the block mapping whose `field` starts at `column` of the line after the lines `before` it:
    the topmost field above it at that column, with none at a lesser column between (a list item's, where it starts
    one); lines indented further (the values of its fields) are passed over."""
    for line in reversed(before):
        if not line.split("#", 1)[0].strip():
            continue
        above = re.match(_FIELD, line)
        at = above.start(3) if above is not None else len(line) - len(line.lstrip(" "))
        if at > column:
            continue
        if above is None or at < column:
            break
        field = above[3]
        if above[1]:  # the list item's first line
            break
    return field


def _read_yaml(path: Path, loader: type[UniqueKeyLoader]) -> tuple[Any, ValueLines | None]:
    """The data of the YAML file at `path`, read by `loader`, and its values' lines where it keeps them
    (`LineMarkingLoader`); `TableError` in one line where it is no YAML `loader` reads."""
    text = read_user_file(path)
    try:
        reading = loader(text)
        try:
            return reading.get_single_data(), getattr(reading, "value_lines", None)
        finally:
            reading.dispose()
    except TableError as error:
        raise TableError(f"{path}: {error}") from None
    except (RecursionError, ValueError) as error:  # a limit, or a scalar that cannot be built (the date 2020-13-45)
        raise TableError(f"{path}: {yaml_limit(error) or 'malformed YAML: ' + ' '.join(str(error).split())}") from None
    except yaml.YAMLError as error:
        at = yaml_error_place(error, text)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        said = (yaml_tab_problem(error, text) or yaml_bare_dash_problem(error, text)
                or yaml_comma_fields_problem(error, text) or f"malformed YAML: {problem}")
        raise TableError(f"{path}: {at}{said}") from None


_ITEM_LABELS = {
    "tables": ("table gpus={}", "gpus"),
    "rows": ("row max_model_len={}", "max_model_len"),
    "models": ("model {}", "name"),
    "pools": ("pool {}", "name"),
    "gpus": ("gpu {}", "name"),
    "without_bf16": ("without_bf16 {}", "name"),
    "jobs": ("job {}", "name"),
    "placements": ("job {}", "job"),  # an earlier solve cluster --json's (--current)
}
"""How to name an item of each list in an error: by the field that identifies it."""


def _describe_location(raw: Any, location: tuple[Any, ...]) -> str:
    """Turn a pydantic error location into words: ``table gpus=4, row max_model_len=8192, cells``; an item that names
    nothing by its list's field and number alone (``pool a100, down item 1``, not ``down, down item 1``)."""
    words: list[str] = []
    node = raw
    container = ""
    container_said = False  # the field just named is the list the next item is of
    for position, key in enumerate(location):
        if isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
            node = node[key]
            label, field = _ITEM_LABELS.get(container, ("item {}", ""))
            identity = node.get(field) if isinstance(node, dict) else None
            if not isinstance(identity, (str, int, float, datetime.date)):  # a list or a mapping names nothing
                identity = None
            written = identity if isinstance(identity, str) else yaml_brief(identity)  # false, not False
            # no control codes raw, nor outer spaces or an empty name unseen
            text = written if written.isprintable() and written == written.strip(" ") != "" else repr(identity)
            shown = text if len(text) <= 40 else f"{text[:37]}..."
            if identity is None and container_said:  # the item's words name the list: it is not named twice
                words.pop()
            words.append(label.format(shown) if identity is not None else f"{container or 'item'} item {key + 1}")
            container_said = False
        elif isinstance(node, dict) and key in node:
            node = node[key]
            container = str(key) or '""'  # an empty key (a Trinity section's path, the top) shown, not left blank
            container_said = key not in _ITEM_LABELS or position == len(location) - 1
            if container_said:
                words.append(container)
        else:
            words.append(str(key))
            node = None
            container_said = False
    return ", ".join(words)


def _data_location(raw: Any, location: tuple[Any, ...]) -> tuple[Any, ...]:
    """The part of a pydantic location that walks the data (without the tags of a field's forms that pydantic adds
    to it: `UNION_TAGS`, `SOURCE_TAGS`)."""
    walked, node = [], raw
    for key in location:
        if key in (*UNION_TAGS, *SOURCE_TAGS) and not (isinstance(node, dict) and key in node):  # a tag, not data
            continue
        if isinstance(node, dict) and key in node or isinstance(node, list) and isinstance(key, int):
            node = node[key] if isinstance(node, dict) or 0 <= key < len(node) else None
            walked.append(key)
        elif isinstance(node, (dict, list)):
            walked.append(key)  # a missing or unknown field
            node = None
    return tuple(walked)


def _node_at(raw: Any, location: tuple[Any, ...]) -> Any:
    """The data at `location` of `raw` (as `_data_location` gives it: keys of mappings and indexes of lists), or None
    where the data has none there."""
    node = raw
    for key in location:
        if isinstance(node, dict) and key in node or isinstance(node, list) and isinstance(key, int) and 0 <= key < len(
                node):
            node = node[key]
        else:
            return None
    return node


def _fields_at(schema: type[BaseModel], location: tuple[Any, ...]) -> tuple[str, ...]:
    """The fields of the mapping at a pydantic error's `location` in data of `schema` (the names a file may
    give there, aliases as written), or () where it is not one of rft-solver's models."""
    node = _model_at(schema, location)
    return () if node is None else tuple(field.alias or name for name, field in node.model_fields.items())


def _model_at(schema: type[BaseModel], location: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model of the mapping at a pydantic error's `location` in data of `schema`, or None where it is not one
    of rft-solver's models."""
    node: Any = schema
    for key in location:
        if not _is_model(node):
            return None
        if key in node.model_fields:
            node = node.model_fields[key].annotation
        elif not isinstance(key, int):  # a union member's tag, or an item's position, walks into the type
            node = next((member for member in _members(node) if getattr(member, "__name__", None) == key), node)
            continue
        node = next((member for member in _members(node) if _is_model(member)), node)
    return node if _is_model(node) else None


def _is_model(annotation: Any) -> bool:
    """Whether `annotation` is a pydantic model class (not a generic alias such as ``dict[str, ...]``, which Python
    3.10 takes as a class too, and `issubclass` then refuses)."""
    return isinstance(annotation, type) and get_origin(annotation) is None and issubclass(annotation, BaseModel)


def _members(annotation: Any) -> tuple[Any, ...]:
    """The types an annotation stands for, unwrapped (Optional, unions, Annotated, the items of a tuple or list)."""
    arguments = get_args(annotation)
    if not arguments:
        return (annotation,)
    return tuple(member for argument in arguments for member in _members(argument))


def _validation_message(path: Path | str, raw: Any, error: ValidationError, recheck: Callable[[Any], object],
                        schema: type[BaseModel], yaml_read: bool = True, gpu_type_named: GpuTypeNamed = None,
                        lines: ValueLines | None = None) -> str:
    """`error` in one line after `path` (a file's, or an argument's name) and the line of the value refused (or of
    the mapping that lacks a field) where `lines` has it (`_line_at`), naming a mapping's fields where one is
    missing or unknown (`schema`'s), with a hint where the value refused is a mistake `_HINTS` recognises (in data YAML
    read: `yaml_read`); `recheck` validates other data the same way (for the hint of a number YAML reads as text,
    which must not suggest a value its field refuses); `gpu_type_named` tells an unknown field that names a GPU type
    (`_unknown_field`)."""
    errors = _innermost(error.errors())
    first = _first_said(errors)
    location = _data_location(raw, tuple(first["loc"]))
    line = _line_at(raw, _row_refused(first, location), lines) if lines is not None else None  # a field's own line
    if first["type"] == "extra_forbidden":
        problem, errors = _unknown_field(first, location[-1], errors, schema, _node_at(raw, location[:-1]),
                                         gpu_type_named)
        location = location[:-1]
    elif first["type"] == "missing":
        problem = f"missing field {location[-1]!r}{_fields_note(_fields_at(schema, tuple(first['loc'][:-1])))}"
        location = location[:-1]
    elif (listed := _mapping_for_a_list(first, schema)) is not None:
        problem = listed
    elif first["type"] in PLAIN_PROBLEMS:
        refused = _Refused(first["type"], first["input"], location, raw, recheck)
        bound = None if refused.field == "priority" else _bound_written_otherwise(refused)
        asked = PRIORITY_RANGE if refused.field == "priority" else _plain_problem(first)
        problem = (f"{bound}, got {yaml_brief(first['input'])}" if bound else
                   f"{asked}, got {yaml_brief(first['input'])}{_hint(refused) if yaml_read else ''}")
    else:
        problem = own_words(first)
    where = _describe_location(raw, location)
    at = "" if line is None else f"line {line}: "
    return f"{path}: {at}{where + ': ' if where else ''}{problem}{_more_problems(raw, first, errors, lines)}"


def _row_refused(error: Any, location: tuple[Any, ...]) -> tuple[Any, ...]:
    """Where in the data the value that pydantic's `error` refuses is, at `location` (`_data_location`'s), down to the
    row where a table's check refuses one of its rows (`RowProblem`: the table's own location names only the table)."""
    problem = (error.get("ctx") or {}).get("error")
    return (*location, "rows", problem.row_index) if isinstance(problem, RowProblem) else location


def _line_at(raw: Any, location: tuple[Any, ...], lines: ValueLines) -> int | None:
    """The line of the value at `location` of `raw` (keys of mappings and indexes of lists), or of the deepest value
    above it that `lines` has (a field missing: its mapping's); None where it has none."""
    line, node = None, raw
    for key in location:
        line = lines.get(id(node), {}).get(key, line)
        node = _node_at(node, (key,))
    return line


def _mapping_for_a_list(error: Any, schema: type[BaseModel]) -> str | None:
    """A mapping given where a list is asked (``pools: {h100: {...}}``), in words: its keys, not Python's repr, and,
    where the list's items are mappings with a name, how to list them (``- name: h100``); None for another error."""
    given = error["input"]
    if error["type"] not in ("list_type", "tuple_type") or not isinstance(given, dict):
        return None
    keys = [cut(str(key)) for key in given]
    named = "name" in _fields_at(schema, tuple(error["loc"]))
    how = f": list each as an item with its name, '- name: {keys[0]}', its fields under it" if named and keys else ""
    of = f" (keys: {named_jobs(keys, 'key')})" if keys else ""
    return f"must be a list, got a mapping{of}{how}"


def _innermost(errors: list[Any]) -> list[Any]:
    """Pydantic's `errors` less those at a location that holds another's: its consequences (a list left empty by an
    item that failed)."""
    return [e for e in errors
            if not any(len(o["loc"]) > len(e["loc"]) and tuple(o["loc"][:len(e["loc"])]) == tuple(e["loc"])
                       for o in errors)]


def _first_said(errors: list[Any]) -> Any:
    """The error a message says in full: the first, or for a missing field the unknown one beside it (the field given
    under another name), which says more."""
    first = errors[0]
    if first["type"] != "missing":
        return first
    return next((e for e in errors if e["type"] == "extra_forbidden" and e["loc"][:-1] == first["loc"][:-1]), first)


def _fields_note(fields: Sequence[str], lead: str = "") -> str:
    """`` (fields: a, b)`` naming a mapping's `fields`, after `lead` (``did you mean a? ``); "" where none are known."""
    return f" ({lead}fields: {', '.join(fields)})" if fields else ""


def _unknown_field(error: Any, name: Any, errors: list[Any], schema: type[BaseModel],
                   mapping: Any = None, gpu_type_named: GpuTypeNamed = None) -> tuple[str, list[Any]]:
    """An unknown field `name`'s problem, naming its mapping's fields, with the number it splits off (where
    `mapping`, the data that holds it, has one written with commas: `_thousands_split`), or else the one it was meant
    to be (`_meant_field`, of the fields `mapping` lacks) or else why no such field is asked there (a model's
    ``not_asked_here``: a job's GPUs are the placement's, a pool's GPU type is no job's), or else the GPU type it
    names, where `gpu_type_named` finds one (``h100:``, a key given for its weight or price), with where it belongs
    (a pool's gpu, a job's pool's); and `errors` less the meant field's missing one, no problem of its own."""
    mapping_at = tuple(error["loc"][:-1])
    fields = _fields_at(schema, mapping_at)
    meant = _meant_field(name, [field for field in fields if not (isinstance(mapping, dict) and field in mapping)])
    not_asked = getattr(_model_at(schema, mapping_at), "not_asked_here", {})
    if (split := _thousands_split(mapping, name)) is not None:
        words, groups = split
        note = _fields_note(fields, f"{words}; ")
        errors = [e for e in errors if not (e["type"] == "extra_forbidden" and tuple(e["loc"][:-1]) == mapping_at
                                            and e["loc"][-1] in groups and e["loc"][-1] != name)]
    elif meant is not None:
        note = _fields_note(fields, f"did you mean {meant}? ")
        errors = [e for e in errors if not (e["type"] == "missing" and tuple(e["loc"]) == (*mapping_at, meant))]
    elif isinstance(name, str) and _letters(name) in not_asked:
        note = _fields_note(fields, f"{not_asked[_letters(name)]}; ")
    elif gpu_type_named is not None and isinstance(name, str) and (gpu := gpu_type_named(name)) is not None:
        # A pool takes it as its gpu; a job runs on its pool's (why a job's gpu is not asked says where it belongs).
        how = (f"give it as gpu: {gpu}" if "gpu" in fields
               else f"a job runs on its pool's gpu ({not_asked['gpu']})" if "gpu" in not_asked
               else not_asked.get("price", ""))
        note = _fields_note(fields, f"{name!r} is a GPU type, {gpu}, not a field{f': {how}' if how else ''}; ")
    else:
        note = _fields_note(fields)
    return f"unknown field {name!r}{note}", errors


_DIGIT_GROUP = re.compile(r"\d{3}")
"""A group of three digits, as a thousands separator leaves it after its comma (``131,072``: ``072``)."""


def _thousands_split(mapping: Any, name: Any) -> tuple[str, list[str]] | None:
    """Where the unknown field `name` is a group of digits that a number written with thousands separators left in a
    flow mapping (``{max_model_len: 131,072}``, which YAML reads as ``max_model_len: 131`` and a field ``072``
    without a value): that number as written, as YAML read it, and how to write it (``131072``), in words, and the
    groups it left as fields (``072``); None otherwise."""
    if not (isinstance(mapping, dict) and isinstance(name, str) and name in mapping):
        return None
    keys = list(mapping)

    def group(key: Any) -> bool:
        return isinstance(key, str) and _DIGIT_GROUP.fullmatch(key) is not None and mapping[key] is None

    first = last = keys.index(name)
    while first > 0 and group(keys[first - 1]):
        first -= 1
    while last + 1 < len(keys) and group(keys[last + 1]):
        last += 1
    field = keys[first - 1] if first > 0 else None
    value = mapping.get(field)
    if not group(name) or field is None or isinstance(value, bool) or not isinstance(value, int):
        return None
    groups = keys[first:last + 1]
    return (f"{field}: {','.join([str(value), *groups])}, in a {{...}} entry, is read as {field}: {value} and "
            f"{'a field' if len(groups) == 1 else 'fields'} {', '.join(map(repr, groups))}: write "
            f"{field}: {''.join([str(value), *groups])}, without commas"), groups


def _more_problems(raw: Any, first: Any, errors: list[Any], lines: ValueLines | None = None) -> str:
    """`` (and 2 more problems, at 'pool a, nodes' (line 3), 'job j' (line 9))``: where `errors` other than the
    `first` are, by place (`SHOWN_PROBLEMS` of them), each with its line where `lines` has it (`_line_at`); "" where
    there are none."""
    first_at = _keyed_location(raw, first)
    places = [at for at in dict.fromkeys(_keyed_location(raw, e) for e in errors) if at != first_at]
    others = [f"'{_describe_location(raw, at) or 'the top level'}'"
              + ("" if lines is None or (line := _line_at(raw, at, lines)) is None else f" (line {line})")
              for at in places]
    named = ", ".join(others[:SHOWN_PROBLEMS]) + (", ..." if len(others) > SHOWN_PROBLEMS else "")
    return f" (and {counted(len(others), 'more problem')}, at {named})" if others else ""


def _keyed_location(raw: Any, error: Any) -> tuple[Any, ...]:
    """Where in `raw` the pydantic `error` is (`_data_location`), down to the key of a mapping its validator's words
    start by naming (a cells mapping's ``Qwen3-14B: setting 'Env+SP=2' is not in the source's form``), as the
    problem said first names it (`_validation_message`)."""
    at = _data_location(raw, tuple(error["loc"]))
    node = _node_at(raw, at)
    if isinstance(node, dict):
        named = [key for key in node if own_words(error).startswith(f"{key}: ")]
        return (*at, named[0]) if len(named) == 1 else at
    return at


FIELDS_MEANT = {
    "nodes": ("count", "numnodes", "nodecount", "nnodes", "nodenum", "hosts"),
    "max_model_len": ("length", "seqlen", "maxlen", "maxlength", "maxseqlen", "context", "contextlength", "contextlen"),
    "gpu": ("gputype", "gpuname", "device", "type"),
    "gpus_per_node": ("gpupernode", "numgpus", "gpucount", "nprocpernode", "nodegpus"),
    "gpus": ("numgpus", "ngpus", "gpucount", "gpunum", "trainergpus"),
    "node_interconnect": ("fabric", "nodefabric", "network", "nodenetwork", "internode", "interconnectnodes"),
    "host_ram_gb": ("hostram", "hostmemory", "hostmemorygb", "ramgb", "cpumemorygb", "hostramgib"),
    "rollout_gpus": ("rollout", "rolloutgpu", "explorergpus", "vllmgpus"),
    "train_batch_size": ("batchsize", "trainbatch"),
    "model_config": ("modelpath", "config", "configpath"),
    "pools": ("nodepools", "fleet", "nodes", "clusters"),
    "at_least": ("min", "minimum", "least", "atleastlen", "gte", "from"),
    "at_most": ("max", "maximum", "most", "cap", "lte", "upto"),
    "required": ("must", "mustrun", "mandatory", "essential"),
    "down": ("downnodes", "nodesdown", "failed", "failednodes", "drained", "drainednodes", "cordoned", "offline",
             "offlinenodes", "unhealthy", "broken"),
}
"""Each field by the names a newcomer may guess for it, without case or separators (a pool's count of nodes,
Trinity's max_model_len by other tools' names, a pool's GPUs per node as solve's --node-gpus names it, and with a
table's trainer GPUs as num_gpus, the network between a pool's nodes as its fabric, a fleet's pools as nodes, a
length's least as min and its most as max, a pool's nodes down as an operator's failed or drained ones): an unknown
field is told the field of its mapping whose guessed names hold it."""


def _letters(text: str) -> str:
    """A name without case or separators: at_least, AtLeast and at-least are one."""
    return re.sub(r"[\W_]+", "", text.casefold())


def _meant_field(name: Any, fields: Sequence[str]) -> str | None:
    """The one field of `fields` an unknown field `name` is close to, or None: the same but for case and separators
    (atleast: at_least), else the start of only it (prio: priority; modelc: model_config, not model), else the one
    whose `FIELDS_MEANT` names hold it (count: nodes), else with a letter or two wrong (prority: priority); not a field
    that only shares a part (at_most is not at_least)."""
    if not isinstance(name, str) or len(_letters(name)) < 3:
        return None
    by_letters = {_letters(field): field for field in fields}
    started = [field for known, field in by_letters.items() if known.startswith(_letters(name))]
    if _letters(name) in by_letters or len(started) == 1:
        return by_letters.get(_letters(name)) or started[0]
    guessed = [field for field in fields if _letters(name) in FIELDS_MEANT.get(field, ())]
    if guessed:
        return guessed[0]
    close = difflib.get_close_matches(_letters(name), by_letters, n=1, cutoff=0.8)
    return by_letters[close[0]] if close else None


SHOWN_PROBLEMS = 3
"""A file's problems named, by where they are, after the first one it says in full."""


def _plain_problem(error: Any) -> str:
    """A pydantic error of `PLAIN_PROBLEMS`' types in their words, its bounds as written (`plain_words`)."""
    return plain_words(PLAIN_PROBLEMS[error["type"]], error.get("ctx", {}))


_BOUND_PROBLEMS = ("greater_than_equal", "greater_than", "less_than_equal", "less_than", "finite_number", "int_type")
"""What a number may break that `_broken_bound` names (a whole-number field's ``2.5e0`` is not whole: 2.5 is
refused)."""


def _broken_bound(raw: Any, location: tuple[Any, ...], number: Any, recheck: Callable[[Any], object]) -> str | None:
    """The bound of its field that `number`, put at `location` of `raw`, breaks, in words (``must be at most
    1000000``, or ``must be a whole number`` for one that is not); None when it breaks none."""
    data = copy.deepcopy(raw)
    node = data
    for key in location[:-1]:
        node = node[key]
    node[location[-1]] = number
    try:
        recheck(data)
    except ValidationError as error:
        return next((_plain_problem(e) for e in error.errors()
                     if e["type"] in _BOUND_PROBLEMS and _data_location(data, tuple(e["loc"])) == location), None)
    return None


def _yaml_text_number(value: Any) -> bool:
    """Whether `value` is text in exponent notation that YAML 1.1 does not read as a number (``1e3``,
    ``1e-3``: it wants a dot and a sign, ``1.0e+3``)."""
    return isinstance(value, str) and re.fullmatch(r"\s*[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+\s*", value) is not None


def _quoted_number(value: Any, whole: bool) -> bool:
    """Whether `value` is text that YAML reads as a number (a `whole` one) once its quotes are gone (``'2'``)."""
    read = _unquoted(value)
    return isinstance(read, int if whole else (int, float)) and not isinstance(read, bool)


def _unquoted(value: Any) -> Any:
    """What YAML reads text `value` as once its quotes are gone (``'true'``: True); None for other values, or text
    YAML cannot read alone."""
    if not isinstance(value, str):
        return None
    try:
        return yaml.safe_load(value)
    except (yaml.YAMLError, ValueError):  # ValueError: an int past Python's 4300 digits
        return None


PLAIN_DIGITS = 7
"""The most digits a whole value of a field that takes fractions is written in, where exponent notation was refused
(``1e3``: ``1000``; ``1e30``: ``1.0e+30``)."""


def _yaml_number(text: str, whole: bool) -> str:
    """How to write `text` (exponent notation, see `_yaml_text_number`) so that YAML reads a number: the
    digits for a whole number (of a field that takes fractions, up to `PLAIN_DIGITS`), else a dot in the mantissa
    and a signed exponent (``1e-3`` -> ``1.0e-3``; so too a whole number of more digits than Python converts,
    ``1e5000``, which YAML reads as infinity)."""
    value = Decimal(text.strip())  # exact: 1e30 is 1 and thirty zeros, not the nearest float's digits
    if value == value.to_integral_value() and value.adjusted() < (MAX_INT_DIGITS if whole else PLAIN_DIGITS):
        return str(int(value))
    mantissa, exponent = text.strip().lower().split("e")
    sign, digits = (mantissa[0], mantissa[1:]) if mantissa[0] in "+-" else ("", mantissa)
    mantissa = sign + ("0" if digits.startswith(".") else "") + digits + ("" if "." in digits else ".0")
    return f"{mantissa}e{exponent if exponent[0] in '+-' else '+' + exponent}"


@dataclass(frozen=True)
class _Refused:
    """A value its field refused, as a hint sees it: pydantic's error type (`PLAIN_PROBLEMS`' types), the value, and
    where it is in the file's data `raw`, with `recheck` to validate a changed copy of it (`broken_bound`)."""

    kind: str
    value: Any
    location: tuple[Any, ...]
    raw: Any
    recheck: Callable[[Any], object]

    @property
    def field(self) -> Any:
        """The name of the field (or the position of the item) that holds the value (never the top level: a file's
        data that is no mapping is refused before it is validated)."""
        return self.location[-1]

    @property
    def whole(self) -> bool:
        """Whether the field asked for a whole number."""
        return self.kind == "int_type"

    def broken_bound(self, number: Any) -> str | None:
        """The bound of the field that `number` in the value's place breaks, in words; None when it breaks none."""
        return _broken_bound(self.raw, self.location, number, self.recheck)


def _number_in_exponent_text(refused: _Refused) -> str | None:
    """A number in exponent notation YAML 1.1 reads as text (``1e3``): how to write it, or the bound it breaks."""
    if refused.kind not in ("int_type", "float_type") or not _yaml_text_number(refused.value):
        return None
    written = _yaml_number(refused.value, refused.whole)
    bound = refused.broken_bound(yaml.safe_load(written))
    return f" (YAML reads it as text{f', and as a number it {bound}' if bound else f': write {written}'})"


def _table_length_in_thousands(refused: _Refused) -> str | None:
    """A table row's length in thousands (``32k``, as --len and cluster jobs take it): tables are in tokens."""
    if not (refused.whole and refused.field == "max_model_len" and thousands_of_tokens(refused.value) != refused.value):
        return None
    written = thousands_of_tokens(refused.value)
    bound = refused.broken_bound(written)
    return f" (tables are in tokens{f', and as a number it {bound}' if bound else f': write {written}'})"


def _quoted_value(refused: _Refused) -> str | None:
    """A number, or true or false, in quotes (``'2'``), which YAML reads as text."""
    quoted = ((refused.kind in ("int_type", "float_type") and _quoted_number(refused.value, refused.whole))
              or (refused.kind == "bool_type" and isinstance(_unquoted(refused.value), bool)))
    return " (quoted, YAML reads it as text: write it without quotes)" if quoted else None


def _job_length_as_range(refused: _Refused) -> str | None:
    """A job's length given as a range (``[32k, 128k]``, ``32k-128k``, ``32k to 128k``): its two forms, and the
    mapping a range is written as, with the lengths given (``{at_least: 32k, at_most: 128k}``)."""
    if not (refused.whole and refused.field == "max_model_len" and refused.broken_bound("32k") is None):
        return None
    value = refused.value
    ends = ([str(end) for end in value] if isinstance(value, list | tuple)
            else re.split(r"\s*(?:-|~|\.\.|\bto\b)\s*", value.strip()) if isinstance(value, str) else [])
    if len(ends) != 2 or not all(isinstance(thousands_of_tokens(end), int) for end in ends):
        return None
    return f" ({length_forms(value)}; a range is a mapping: {{at_least: {ends[0]}, at_most: {ends[1]}}})"


_AT_LEAST_WRITTEN = re.compile(r"(?:>=?|≥|at\s*least|min(?:imum)?)\s*:?\s*(.+?)|(.+?)\s*(?:\+|or\s+more)",
                               re.IGNORECASE)
"""A length written as at least a number (``>=32k``, ``≥32k``, ``32k+``, ``at least 32k``): the number its groups
hold."""


def _job_length_at_least(refused: _Refused) -> str | None:
    """A job's length written as at least a length (``>=32k``, ``32k+``): its two forms, and the mapping that says
    it (``{at_least: 32k}``)."""
    if not (refused.whole and refused.field == "max_model_len" and isinstance(refused.value, str)
            and refused.broken_bound("32k") is None):
        return None
    written = _AT_LEAST_WRITTEN.fullmatch(refused.value.strip())
    least = next((group for group in written.groups() if group), None) if written else None
    if least is None or not isinstance(thousands_of_tokens(least), int):
        return None
    return f" ({length_forms(refused.value)}; for at least {least}, longer where a plan allows: {{at_least: {least}}})"


def _whole_number_written_otherwise(refused: _Refused) -> str | None:
    """A whole number with a zero fraction (``8.0``), digit separators (``1,024``) or a word that counts after it
    (``8卡``, ``8 GPUs``), where the field takes it written alone, as a command line's count is told
    (`solver.cli.argtypes.whole_number`)."""
    meant = meant_whole_number(refused.value)
    if not refused.whole or meant is None or refused.broken_bound(meant) is not None:
        return None
    return f" ({whole_number_note(refused.value)})"


def _bound_written_otherwise(refused: _Refused) -> str | None:
    """The bound its field's whole number written otherwise (``-2.0``, `meant_whole_number`) breaks (``must be at
    least 0``), said in place of how to write it, which would not mend it; None otherwise."""
    meant = meant_whole_number(refused.value)
    return refused.broken_bound(meant) if refused.whole and meant is not None else None


def _job_length_in_neither_form(refused: _Refused) -> str | None:
    """A job's length (a whole-number field that takes ``32k`` too) in neither form it takes (``32kb``)."""
    if not (refused.whole and refused.broken_bound("32k") is None):
        return None
    return f" ({length_forms(refused.value)})"


PRIORITY_RANGE = f"must be a whole number from 1 to {MAX_PRIORITY}"
"""What a job's priority must be, as every refusal of one says it (``0``, ``5.5``, ``high``, ``-1.0``: one message,
the range it takes, `_validation_message`), whatever bound or type the value breaks."""


def _priority_weight(refused: _Refused) -> str | None:
    """A job's priority refused for no more particular mistake (its quotes, say): what it weighs, a word (``high``)
    or a number out of its range alike (``0``, ``5.5``)."""
    if refused.field != "priority":
        return None
    return " (a weight: the placement places the most total priority)"


def _mib_as_gb(refused: _Refused) -> str | None:
    """nvidia-smi's total in MiB given as a pool's or a GPU type's GB (past any GPU's GB): the MiB field to give it
    in (a pool's gpu_memory_mib, a GPU type's memory_mib)."""
    if not (refused.field in ("gpu_memory_gb", "memory_gb") and refused.kind == "less_than_equal"):
        return None
    return mib_as_gb_hint(refused.value, f"{str(refused.field).replace('_gb', '_mib')}: {refused.value}")


def _node_past_one_host(refused: _Refused) -> str | None:
    """A pool's node of more GPUs than one host has: why a node is one host, and how to give more GPUs."""
    if not (refused.field == "gpus_per_node" and refused.kind == "less_than_equal"):
        return None
    return f" ({NODE_IS_ONE_HOST})"


def _gpu_memory_with_unit(refused: _Refused) -> str | None:
    """A pool's GPU memory (or a cells file's) with its unit (``48GB``, ``81559 MiB``), where a number is asked: the
    number it starts with, or an example where it starts with none; MiB (``M``, ``MB``, ``Mi``, as ``--gpu-memory``
    reads them) given as GB, the field that takes them, with that number."""
    if not isinstance(refused.value, str) or refused.field not in (
            "gpu_memory_gb", "gpu_memory_mib", "memory_gb", "memory_mib"):
        return None
    given = re.match(r"\s*(\d+)", refused.value)
    mib_field = f"{refused.field.removesuffix('gb').removesuffix('mib')}mib"  # a pool's gpu_memory_mib, else memory_mib
    if refused.field.endswith("_gb"):
        if mib := re.fullmatch(r"\s*(\d+)\s*mi?b?\s*", refused.value, flags=re.IGNORECASE):
            return f" (MiB, nvidia-smi's total, go in {mib_field}: {mib_field}: {mib[1]})"
        gb = given[1] if given else "48"
        return f" (GB as sold, as a number: {gb} for {gb} GB; nvidia-smi's total in MiB goes in {mib_field})"
    return f" (nvidia-smi's total in MiB, as a number: {given[1] if given else 81559})"


def _lora_targets_as_list(refused: _Refused) -> str | None:
    """A job's ``lora_targets`` given as a list of module names, as PEFT takes them: the names separated by commas,
    the text it takes (`names_joined_hint`)."""
    if refused.field != "lora_targets" or refused.kind != "string_type":
        return None
    return names_joined_hint(refused.value, "give") or None


def _text_read_unquoted_as_another_type(refused: _Refused) -> str | None:
    """Text that YAML reads, unquoted, as another type (`unquoted_text_hint`)."""
    return (unquoted_text_hint(refused.value) or None) if refused.kind == "string_type" else None


def unquoted_text_hint(value: Any) -> str:
    """For a value a YAML file gave where text is asked, which YAML read, unquoted, as another type: true or false
    (a name ``on``, ``no``), a number (``010``, ``1.0e+3``), a date (``2024-01-01``) or null (``~``, or nothing), the
    hint to quote it: `` (YAML reads it, unquoted, as a date: quote it to keep it as text)``; "" for other values."""
    if value is None:  # most often nothing written at all
        return (" (YAML reads an empty value, or ~ or null unquoted, as null: give the text, in quotes to keep ~ or "
                "null)")
    kind = next((words for types, words in _READ_AS_ANOTHER_TYPE if isinstance(value, types)), None)
    return f" (YAML reads it, unquoted, as {kind}: quote it to keep it as text)" if kind else ""


def _word_read_as_another_type(refused: _Refused) -> str | None:
    """A value YAML read, unquoted, as another type than text (``critic: no``, false) where one of a field's words
    is asked: what YAML read it as, and to write one of them."""
    if refused.kind != "literal_error" or isinstance(refused.value, str):
        return None
    kind = "null" if refused.value is None else next(
        (words for types, words in _READ_AS_ANOTHER_TYPE if isinstance(refused.value, types)), None)
    return f" (YAML reads it, unquoted, as {kind}: write one of the words)" if kind else None


def _critic_by_another_word(refused: _Refused) -> str | None:
    """A job's critic by another word for one of its choices (`critic_meant`: ``critic: gpu``; ``critic: yes``, which
    YAML reads as true, told so first), ending with the choice meant, as ``--critic`` and the API's ``critic=`` guess
    it."""
    meant = critic_meant(refused.value) if refused.field == "critic" and refused.kind == "literal_error" else None
    return f"{_word_read_as_another_type(refused) or ''}; did you mean {meant!r}?" if meant else None


_READ_AS_ANOTHER_TYPE: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "true or false"), ((int, float), "a number"), (datetime.date, "a date"))
"""The types YAML reads unquoted text as, besides null, each in words (bool before int: a bool is an int)."""


_HINTS: tuple[Callable[[_Refused], str | None], ...] = (
    _quoted_value,
    _number_in_exponent_text,
    _table_length_in_thousands,
    _job_length_as_range,
    _job_length_at_least,
    _job_length_in_neither_form,
    _whole_number_written_otherwise,
    _priority_weight,
    _mib_as_gb,
    _node_past_one_host,
    _gpu_memory_with_unit,
    _lora_targets_as_list,
    _text_read_unquoted_as_another_type,
    _critic_by_another_word,
    _word_read_as_another_type,
)
"""The mistakes a refused value's message recognises, each a function of the `_Refused` value that gives its hint
(`` (...)``, or "" where it has nothing to add), or None where the value is not that mistake. They are tried in
order and the first that recognises the value says the hint: where two would, the more particular comes first (a
job's quoted ``'4096'`` or ``'5'`` is told of its quotes, not of a length's two forms or a priority's weights, and a
quoted ``'1.0e+3'`` of its quotes, not of how to write a number in exponent notation)."""


def _hint(refused: _Refused) -> str:
    """What the first of `_HINTS` that recognises the `refused` value's mistake says of it; "" where none does."""
    return next((said for recognise in _HINTS if (said := recognise(refused)) is not None), "")


class FileReaders(NamedTuple):
    """What reads each kind of file a user gives, in the caller's words (the API's, `API_FILE_READERS`, or the
    command's, `solver.rules.COMMAND_OPTIONS`' ``file_readers``), as a file given for another that looks like one is
    told (`looks_like`: `` (this looks like a cells file, for --cells)``)."""

    cells: str
    """What reads a cells file you measured."""
    memory_model: str
    """What reads a memory-model file, and what writes one."""
    weights: str
    """What reads a cost-weights file."""
    fleet: str
    """What reads a cluster (fleet) file."""
    config: str
    """What reads a Trinity config."""
    model_config: str
    """What reads a Hugging Face config.json."""
    current: str
    """How to give a saved placement (``solve cluster --json``'s) to keep its jobs where they run."""


API_FILE_READERS = FileReaders(
    cells="catalog.with_cells or solver.calibrate_memory_model(cells=...)",
    memory_model="solver.load_memory_model, as solver.render.memory_model_yaml writes",
    weights="solver.load_weights", fleet="solver.place or solver.load_fleet",
    config="solver.check_config or solver.api.config_query",
    model_config="solver.load_model_config and catalog.with_model",
    current="give it as solver.place's current=, beside the fleet,")
"""What reads each kind of file, in the API's words (`solver.rules.API_OPTIONS`' ``file_readers``): the loaders'
default."""


_Schema = TypeVar("_Schema", bound=BaseModel)


def _top_level_kind(raw: object) -> str:
    """What a YAML file that is not a mapping holds, in words (``a number``, not Python's ``a int``)."""
    if raw is None:
        return "an empty file"
    if isinstance(raw, str):
        return "text, not YAML's 'key: value' lines"
    if isinstance(raw, bool):
        return "true or false"
    return "a number" if isinstance(raw, int | float) else f"a {type(raw).__name__}"


def load_validated(model: type[_Schema], path: Path, context: dict[str, Any] | None = None,
                   loader: type[UniqueKeyLoader] = UniqueKeyLoader, gpu_type_named: GpuTypeNamed = None,
                   file_readers: FileReaders = API_FILE_READERS) -> _Schema:
    """The file at `path` as `model`, read by `loader`, or `TableError` in one line (naming the kind of file it looks
    like instead, where its top-level keys are another's: `looks_like`, in `file_readers`' words; an unknown field
    that `gpu_type_named` finds a GPU type's name, that GPU type; the line, where `loader` keeps lines:
    `LineMarkingLoader`)."""
    raw, lines = _read_yaml(path, loader)
    if not isinstance(raw, dict):  # a CSV, say, reads as one string: say which keys the file takes
        raise TableError(f"{path}: expected a mapping at the top level, got {_top_level_kind(raw)} (fields: "
                         f"{', '.join(_fields_at(model, ()))})")
    if (unread := _unread_kind(raw)) is not None:  # our own output, say: its every field refused would hide that
        raise TableError(f"{path}: this looks like {unread.format(**file_readers._asdict())}")
    return validated_data(model, raw, path, context, looks_like(raw, model, file_readers),
                          gpu_type_named=gpu_type_named, lines=lines)


def validated_data(model: type[_Schema], raw: Any, where: Path | str, context: dict[str, Any] | None = None,
                   note: str = "", yaml_read: bool = True, gpu_type_named: GpuTypeNamed = None,
                   lines: ValueLines | None = None) -> _Schema:
    """`raw` (a file's data, read: by YAML, or by JSON where not `yaml_read`, which its hints then do not assume) as
    `model`, or `TableError` in one line after `where` (the file), and the line where `lines` (`ValueLines`) has it:
    the field named as a file's are, what was found and what the field takes, then `note`."""
    try:
        return model.model_validate(raw, context=context)
    except ValidationError as error:
        recheck = partial(model.model_validate, context=context)
        raise TableError(_validation_message(where, raw, error, recheck, model, yaml_read, gpu_type_named, lines)
                         + note) from None


def check_built_again(built: BaseModel, name: str) -> None:
    """`QueryError`, in one line naming the argument `name` and the field as `load_validated` names a file's, where
    `built` breaks its own model's checks: pydantic's `model_copy(update=...)`, the way to change a frozen model,
    checks nothing (a `Fleet` given two jobs of one name, or a job on a pool it lacks)."""
    raw = built.model_dump(mode="json", warnings=False)  # a value of the wrong type is the message's, not a warning
    try:
        type(built).model_validate(raw)
    except ValidationError as error:
        raise QueryError(_validation_message(name, raw, error, type(built).model_validate, type(built))) from None


def looks_like(raw: Mapping[Any, Any], expected: type[BaseModel] | None, file_readers: FileReaders) -> str:
    """For a file that did not load as `expected` (None: a Trinity config): `` (this looks like a fleet file, for solve
    cluster)`` where its top-level keys are another kind's (`_FILE_KINDS`), naming what reads that kind in the caller's
    words, `file_readers` (`solver.rules.COMMAND_OPTIONS`', or `API_FILE_READERS`: ``solver.place or
    solver.load_fleet``); "" otherwise."""
    other = next((kind for kind, (schema, keys) in _FILE_KINDS.items() if schema is not expected and keys <= set(raw)),
                 None) or _unread_kind(raw)
    return f" (this looks like {other.format(**file_readers._asdict())})" if other else ""


def _unread_kind(raw: Mapping[Any, Any]) -> str | None:
    """The kind of file no loader reads that `raw`'s top-level keys tell (`_UNREAD_KINDS`, unformatted); None where
    they tell none."""
    return next((kind for kind, keys in _UNREAD_KINDS.items() if keys <= set(raw)), None)


_FILE_KINDS: dict[str, tuple[type[BaseModel] | None, set[str]]] = {
    "a cells file, for {cells}": (GpuType, {"gpu", "tables"}),
    "a memory-model file, for {memory_model}": (MemoryModel, {"coefficients"}),
    "a cost-weights file, for {weights}": (Weights, {"offload", "sp", "env"}),
    "a fleet file, for {fleet}": (FleetFile, {"pools", "jobs"}),
    "a Trinity config, for {config}": (None, {"model", "trainer"}),
    "a Hugging Face config.json, for {model_config}": (Model, {"model_type", "vocab_size"}),
}
"""The kinds of file a user gives, each by its schema (a config.json's: the `Model` it reads as) and the top-level keys
that tell it apart; ``{cells}`` and the like: what reads each kind, in the caller's words (`FileReaders`' fields:
`looks_like`)."""

_UNREAD_KINDS: dict[str, set[str]] = {
    "solve cluster --json's output, a placement: {current} to keep its jobs "
    "where they run": {"placements", "unplaced"},
    "solve cluster --buy --json's output, what to buy: set each pool's nodes to its nodes_after in the cluster file":
        {"placements", "fits_nowhere"},
    "verl's own config, its actor_rollout_ref at the top: {config} reads a Trinity-RFT config, which takes "
    "verl's keys under trainer.trainer_config and its model, lengths and GPUs as model.* and cluster.*":
        {"actor_rollout_ref"},
}
"""The kinds of file that a user may give as an input but none reads (rft-solver's own output, as a placement given as
the cluster file; verl's config given as a Trinity config), by the top-level keys that tell them apart; ``{current}``
and ``{config}`` as `_FILE_KINDS`' are."""


def yaml_looks_like(text: str, expected: type[BaseModel] | None, file_readers: FileReaders) -> str:
    """`looks_like` for a file's `text` read as YAML, as for a config.json that is not JSON (`expected`: `Model`):
    `` (this looks like a Trinity config, for --from-config)``, in `file_readers`' words; "" where it is no YAML
    mapping of another kind."""
    try:
        raw = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError, ValueError):
        return ""
    return looks_like(raw, expected, file_readers) if isinstance(raw, dict) else ""


def load_models(path: Path) -> tuple[Model, ...]:
    """Load and check a models file (``tables/models.yaml``)."""
    models = load_validated(ModelsFile, path).models
    names = [normalise(name) for model in models for name in (model.name, *model.aliases)]
    duplicate = first_repeated(names)
    if duplicate is not None:
        raise TableError(f"{path}: the name {duplicate!r} is given to two models")
    return models


def load_gpu_type(path: Path, models: tuple[Model, ...], hardware: tuple[GpuType, ...] = (),
                  made_by: Mapping[str, Path] | None = None,
                  loader: type[UniqueKeyLoader] = UniqueKeyLoader,
                  file_readers: FileReaders = API_FILE_READERS) -> GpuType:
    """Load and check one GPU type's feasibility tables against the known `models`; a GPU type of the
    `hardware` catalogue (named by its name or an alias) takes its ``memory_gb`` where it gives none, and must match
    its entry there, whose name, aliases,
    driver-reported memory, ROCm, workstation host memory and interconnect it takes (each of these it states must be
    that entry's: `TableError` otherwise). `made_by` names the earlier cells file that made each GPU type of
    `hardware` the catalogue lacks (by name), which a value that differs from its own is said to be from; `loader`
    reads the file (`load_validated`, which names what reads a file of another kind given, `file_readers`)."""
    names = {normalise(name): model.name for model in models for name in (model.name, *model.aliases)}
    head_counts = {model.name: (model.num_attention_heads, model.num_key_value_heads) for model in models}
    memory_gb_of = {normalise(name): gpu.memory_gb for gpu in hardware for name in (gpu.name, *gpu.aliases)}
    tabled = load_validated(GpuType, path, context={"models": [model.name for model in models], "names": names,
                                                    "heads": head_counts, "memory_gb_of": memory_gb_of, TYPED: True},
                            loader=loader, file_readers=file_readers)
    by_name = {model.name: model for model in models}
    for table in tabled.tables:  # a setting no run can have: the model's heads rule its SP degree out
        for row in table.rows:
            for name, setting in row.cells:
                heads = setting and sp_rule_violation(by_name[name].num_attention_heads,
                                                      by_name[name].num_key_value_heads, setting.sp)
                if heads:
                    raise TableError(f"{path}: table gpus={table.gpus}: row max_model_len={row.max_model_len}, "
                                     f"{name}: {heads} (Trinity and verl refuse it)")
    known = next((gpu for wanted in gpu_name_forms(tabled.name)
                  for gpu in hardware if wanted in {normalise(name) for name in (gpu.name, *gpu.aliases)}), None)
    if known is None:
        return tabled
    earlier = (made_by or {}).get(known.name)
    theirs = f"the {{}} that {earlier} gives" if earlier else "the catalogue's {}"
    if known.memory_gb != tabled.memory_gb:
        raise TableError(f"{path}: GPU {tabled.name}: memory_gb {tabled.memory_gb} is not "
                         f"{theirs.format(known.memory_gb)} for {known.name}: write that, or give another card a "
                         "name of its own")
    if tabled.memory_mib not in (None, known.memory_mib):
        raise TableError(f"{path}: GPU {tabled.name}: memory_mib {tabled.memory_mib} is not "
                         f"{theirs.format(known.memory_mib)} for {known.name} (leave it out to take that)")
    owner = f"{earlier}'s" if earlier else "the catalogue's"
    for field, stated, known_value in (
            ("interconnect", tabled.interconnect, known.interconnect),
            ("compute_capability", tabled.compute_capability, known.compute_capability),
            ("workstation_host_ram_gib", tabled.workstation_host_ram_gib, known.workstation_host_ram_gib),
            ("rocm", tabled.rocm if "rocm" in tabled.model_fields_set else None, known.rocm)):
        if stated not in (None, known_value):
            shown = "none stated" if known_value is None else str(known_value).lower()  # as YAML: true, 64, pcie
            raise TableError(f"{path}: GPU {tabled.name}: {field} {str(stated).lower()}, where {owner} {known.name} "
                             f"has {shown}: leave it out to take that")
    aliases = tuple(dict.fromkeys(alias for alias in (*known.aliases, *tabled.aliases) if alias != known.name))
    return tabled.model_copy(update={"name": known.name, "aliases": aliases, "memory_mib": known.memory_mib,
                                     "rocm": known.rocm, "workstation_host_ram_gib": known.workstation_host_ram_gib,
                                     "interconnect": known.interconnect,
                                     "interconnect_source": known.interconnect_source,
                                     "compute_capability": known.compute_capability}).as_written(tabled.name)


def load_cells(path: Path, models: tuple[Model, ...], hardware: tuple[GpuType, ...] = (),
               made_by: Mapping[str, Path] | None = None, file_readers: FileReaders = API_FILE_READERS) -> GpuType:
    """A cells file you measured (`load_gpu_type`, with `file_readers`), which gives at least one table (`TableError`
    otherwise); a value its schema refuses is named by its line too (`LineMarkingLoader`)."""
    measured = load_gpu_type(path, models, hardware, made_by, LineMarkingLoader, file_readers)
    if not measured.tables:
        raise TableError(f"{path}: no tables: a cells file gives at least one (gpus, models, rows)")
    return measured


def _in_units(size: int) -> str:
    """A file size in MB, or in KB below one, to a tenth where that is not whole (16.2 MB, 256 KB)."""
    value, unit = (size / 2**20, "MB") if size >= 2**20 else (size / 2**10, "KB")
    return f"{value:.1f}".removesuffix(".0") + f" {unit}"


def holds_text(path: Path, text: str) -> bool:
    """Whether the file at `path` holds exactly `text` (UTF-8), byte for byte; `QueryError`, one line, when it
    cannot be read."""
    expected = text.encode("utf-8")
    try:
        with path.open("rb") as handle:  # one byte past the text at most: a longer file differs
            return handle.read(len(expected) + 1) == expected
    except OSError as error:
        raise QueryError(f"{path}: cannot read: {error.strerror or error}") from None


def _closed_stream(path: Path, error: OSError) -> str:
    """Why `path`, one of the process's streams (`names_a_stream`: ``/dev/stdin``), is not there (`error`): the
    command was started with it closed (``<&-``); "" for any other path or error."""
    if error.errno != errno.ENOENT or not names_a_stream(path):
        return ""
    return (" (standard input is closed: the command was started with <&-; give the file by its name, or < FILE)"
            if path.name in ("stdin", "0") else " (the command was started without that stream open)")


def read_user_file(path: Path, limit_bytes: int = MAX_FILE_BYTES) -> str:
    """The text of a file the user names (a Trinity config), of at most `limit_bytes`; `TableError`, one line,
    when unreadable."""
    limit = f"the limit is {_in_units(limit_bytes)}"
    try:
        size = path.stat().st_size
        if size > limit_bytes:
            shown = _in_units(size)
            if shown == _in_units(limit_bytes):  # just past the limit, which reads the same rounded: in bytes
                shown, limit = f"{size} bytes", f"the limit is {limit_bytes} bytes"
            raise TableError(f"{path}: {shown} is too large ({limit})")
        with path.open("rb") as handle:  # a device or a pipe has no size: read one byte past the limit at most
            data = handle.read(limit_bytes + 1)
        if len(data) > limit_bytes:
            raise TableError(f"{path}: too large ({limit})")
        return data.decode("utf-8")  # line endings as they are (a patched copy keeps them)
    except OSError as error:
        raise TableError(f"{path}: cannot read: {error.strerror or error}{_closed_stream(path, error)}") from None
    except UnicodeDecodeError as error:
        raise TableError(_not_utf8(path, data, error.start)) from None


def _not_utf8(path: Path, data: bytes, start: int) -> str:
    """Why the bytes `data` of the file at `path` are refused, UTF-8 failing at byte `start`: no text at all where
    they hold a NUL byte, else the line that is text in another encoding (a Chinese Windows editor's GBK)."""
    if b"\0" in data:
        return f"{path}: not a text file (UTF-8)"
    line = data.count(b"\n", 0, start) + 1
    return f"{path}: line {line} is not UTF-8 (another encoding, such as GBK or Latin-1): save the file as UTF-8"
