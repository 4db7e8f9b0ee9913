"""Interpolations in a Trinity config, resolved as OmegaConf resolves them: ${oc.env:VAR,default}, ${oc.env:VAR},
${oc.decode:...}."""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from solver.tables import NUMBER_TOO_LONG, brief
from solver.trinity.keys import ConfigError, yaml_scalar

_SUPPORTED = "only ${oc.env:VAR,default} and ${oc.decode:...} are supported"


def _closing(text: str, start: int) -> int:
    """Index of the ``}`` that closes the ``${`` at `start`, or -1."""
    depth = 0
    i = start
    while i < len(text):
        if text.startswith("${", i):
            depth += 1
            i += 2
            continue
        if text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _unquote(text: str) -> str:
    text = text.strip()
    return text[1:-1] if _is_quoted(text) else text


def decode_scalar(text: str) -> Any:
    """`text` as the config checks read plain text for a typed field: the YAML scalar it spells (a number, a
    boolean), else itself; close to, not quite, OmegaConf's int()/float() conversion (`omegaconf_decode` is
    ``oc.decode``'s)."""
    try:
        value = YAML(typ="safe", pure=True).load(text)
    except (YAMLError, ValueError, RecursionError):  # not YAML, or not a value YAML builds: the text stays text
        return text
    return text if isinstance(value, (dict, list)) or value is None else value


_UNSIGNED = r"(?:0|[1-9](?:_?[0-9])*)"
_DIGITS = r"[0-9](?:_?[0-9])*"
_POINT = rf"(?:{_UNSIGNED}\.|{_UNSIGNED}?\.{_DIGITS})"
_INT = re.compile(rf"[+-]?{_UNSIGNED}")
_FLOAT = re.compile(rf"[+-]?(?:{_POINT}|(?:{_UNSIGNED}|{_POINT})[eE][+-]?{_DIGITS}|[Ii][Nn][Ff]|[Nn][Aa][Nn])")
"""The numbers of OmegaConf's grammar (its lexer's INT and FLOAT): no leading zeros, hexadecimal or ``.inf``."""
_PLAIN = frozenset(string.ascii_letters + string.digits + "_-/\\+.$%*@?|: \t")
"""The characters OmegaConf's grammar takes unquoted, unescaped."""
_ESCAPABLE = frozenset("\\()[]{}:=, \t")
"""The characters a backslash escapes in OmegaConf's unquoted text (``\\,`` is a comma)."""


def _quoted_text(text: str) -> str:
    """The text inside `text`, one quoted text of OmegaConf's grammar: a quote escaped by an odd run of
    backslashes, the run halved (so too the run before the closing quote); interpolations as they are.
    ValueError for a quote inside it unescaped, or none closing it."""
    quote, body, out, i = text[0], text[1:-1], [], 0
    while i < len(body):
        if body.startswith("${", i) and (end := _closing(body, i)) > 0:  # quotes in it are its own
            out.append(body[i : end + 1])
            i = end + 1
            continue
        after = i
        while after < len(body) and body[after] == "\\":
            after += 1
        run = after - i
        if after == len(body) or body[after] == quote:
            if run % 2 == (after == len(body)):  # unescaped, or escaping the closing quote
                raise ValueError(f"a {quote} inside the quoted text" if after < len(body) else "no closing quote")
            out.append("\\" * (run // 2) + body[after : after + 1])
            i = after + 1
        else:
            out.append(body[i : after + 1])
            i = after + 1
    return "".join(out)


def _is_quoted(text: str) -> bool:
    return len(text) >= 2 and text[0] == text[-1] and text[0] in "'\""


def omegaconf_decode(text: str) -> Any:
    """`text` as OmegaConf's ``oc.decode`` reads it (its grammar's ``singleElement``): the int, float, boolean or
    null it spells alone (``010``, ``0x10``, ``.inf``, a date and a number with spaces around it stay text), a
    quoted text unquoted, other text with its escapes undone; a list or mapping stays text (not read here).
    ValueError, in words, for what the grammar refuses: blank text, ``~``, a comma, a stray quote, ..."""
    if text[:1] in ("[", "{"):
        return text
    if _is_quoted(text):
        return _quoted_text(text)
    if _INT.fullmatch(text):
        try:
            return int(text)
        except ValueError:  # longer than Python converts (4300 digits), as OmegaConf finds
            raise ValueError(NUMBER_TOO_LONG) from None
    if _FLOAT.fullmatch(text):
        return float(text)
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if text.lower() == "null":
        return None
    if not text.strip(" \t"):
        raise ValueError("blank text")
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and text[i + 1 : i + 2] in _ESCAPABLE:
            i += 1
        elif text[i] not in _PLAIN:
            raise ValueError(f"{text[i]!r} outside quotes")
        out.append(text[i])
        i += 1
    return "".join(out)


def _interpolate(value: str, where: str, environ: Mapping[str, str]) -> Any:
    """Resolve every interpolation in `value`; a value that is one interpolation keeps its type."""
    parts: list[Any] = []
    i = 0
    while i < len(value):
        start = value.find("${", i)
        if start < 0:
            parts.append(value[i:])
            break
        parts.append(value[i:start])
        end = _closing(value, start)
        if end < 0:
            raise ConfigError(f"{where}: unterminated interpolation in {value!r}")
        parts.append(_resolve_one(value[start : end + 1], where, environ))
        i = end + 1
    parts = [p for p in parts if p != ""]
    if len(parts) == 1:
        return parts[0]
    return "".join(map(_as_text, parts))


def _as_text(value: Any) -> str:
    """A resolved value joined into text, as OmegaConf writes it there (a null default as "None")."""
    return value if isinstance(value, str) else "None" if value is None else yaml_scalar(value)


def _resolve_one(expression: str, where: str, environ: Mapping[str, str]) -> Any:
    body = expression[2:-1].strip()
    resolver, colon, args = body.partition(":")
    resolver = resolver.strip()
    if colon and resolver == "oc.env":
        inner = _interpolate(args, where, environ) if "${" in args else args
        if not isinstance(inner, str):
            raise ConfigError(f"{where}: cannot resolve {expression!r} ({_SUPPORTED})")
        var, comma, default = inner.partition(",")
        var = var.strip()
        if not var:
            raise ConfigError(f"{where}: {expression!r} names no environment variable")
        if var in environ:
            return environ[var]
        if comma:  # OmegaConf's: text, but an unquoted null is None (the key counts as unset)
            return None if default.strip().lower() == "null" else _unquote(default)
        raise ConfigError(f"{where}: environment variable {var} is not set and {expression!r} has no default")
    if colon and resolver == "oc.decode":
        text = _decode_argument(args.strip(), expression, where, environ)
        if text is None:
            return None
        if "${" in text:
            raise ConfigError(f"{where}: cannot resolve {expression!r}: the text it decodes, {brief(text)}, holds an "
                              f"interpolation ({_SUPPORTED})")
        try:
            return omegaconf_decode(text)
        except ValueError as error:
            if str(error) == NUMBER_TOO_LONG:  # as where a typed field reads it
                raise ConfigError(f"{where}: {NUMBER_TOO_LONG}") from None
            raise ConfigError(f"{where}: OmegaConf cannot decode {brief(text)} in {expression!r}: {error}") from None
    raise ConfigError(f"{where}: cannot resolve {expression!r} ({_SUPPORTED})")


def _decode_argument(args: str, expression: str, where: str, environ: Mapping[str, str]) -> str | None:
    """The text `expression`'s ``oc.decode`` decodes: its argument `args` as OmegaConf reads a resolver's (a quoted
    text, interpolations in it resolved; one interpolation's value; unquoted text), or None for null;
    `ConfigError` for a number, a boolean or a list there, which OmegaConf refuses (``oc.decode`` takes text)."""
    value: Any
    if not args:
        raise ConfigError(f"{where}: {expression!r} gives oc.decode no text")
    if args[0] in "[{":
        value = [args]  # a list or mapping: refused below
    elif "${" in args and not _is_quoted(args):
        value = _interpolate(args, where, environ)
    else:
        try:
            value = _quoted_text(args) if _is_quoted(args) else omegaconf_decode(args)
        except ValueError as error:
            raise ConfigError(f"{where}: OmegaConf cannot read {brief(args)} in {expression!r}: {error}") from None
        if _is_quoted(args) and "${" in value:  # interpolated into text
            value = _as_text(_interpolate(value, where, environ))
    if value is not None and not isinstance(value, str):
        given = "a list or mapping" if isinstance(value, list) else brief(value)
        hint = "" if "${" in args or isinstance(value, list) else f" (quote it: \"{args}\")"
        raise ConfigError(f"{where}: {expression!r}: OmegaConf's oc.decode takes text or null, not {given}{hint}")
    return value


def resolve_interpolations(value: Any, where: str, environ: Mapping[str, str]) -> Any:
    """`value` with its ``${...}`` interpolations resolved from `environ` (`ConfigError` naming `where` where one
    cannot be); any other value as it is."""
    if isinstance(value, str) and "${" in value:
        return _interpolate(value, where, environ)
    return value
