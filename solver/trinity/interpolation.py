"""Interpolations in a Trinity config, resolved as OmegaConf resolves them: ${oc.env:VAR,default}, ${oc.env:VAR},
${oc.decode:...}."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from solver.trinity.keys import ConfigError, yaml_scalar

_SUPPORTED = "only ${oc.env:VAR,default} is supported"


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
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def decode_scalar(text: str) -> Any:
    """`text` as OmegaConf's ``oc.decode`` reads it: the YAML scalar it spells (a number, a boolean), else itself."""
    try:
        value = YAML(typ="safe", pure=True).load(text)
    except (YAMLError, ValueError, RecursionError):  # not YAML, or not a value YAML builds: the text stays text
        return text
    return text if isinstance(value, (dict, list)) or value is None else value


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
    # Joined into text, a value is written as OmegaConf writes it (a null default as "None").
    return "".join(p if isinstance(p, str) else "None" if p is None else yaml_scalar(p) for p in parts)


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
        inner = _interpolate(args.strip(), where, environ)
        if isinstance(inner, str) and inner.lower() == "null":  # OmegaConf's null, in any case (YAML's ~ it refuses)
            return None
        return decode_scalar(inner) if isinstance(inner, str) else inner
    raise ConfigError(f"{where}: cannot resolve {expression!r} ({_SUPPORTED})")


def resolve_interpolations(value: Any, where: str, environ: Mapping[str, str]) -> Any:
    """`value` with its ``${...}`` interpolations resolved from `environ` (`ConfigError` naming `where` where one
    cannot be); any other value as it is."""
    if isinstance(value, str) and "${" in value:
        return _interpolate(value, where, environ)
    return value
