"""Interpolations in a Trinity config, resolved as OmegaConf resolves them: ${oc.env:VAR,default}, ${oc.env:VAR},
${oc.decode:...}, read by OmegaConf's grammar (its lexer's modes and its parser's rules, quotes and escapes as it
takes them)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from solver.tables import NUMBER_TOO_LONG, brief
from solver.trinity.keys import ConfigError

_SUPPORTED = "only ${oc.env:VAR,default} and ${oc.decode:...} are supported"


def decode_scalar(text: str) -> Any:
    """`text` as the config checks read plain text for a typed field: the YAML scalar it spells (a number, a
    boolean), else itself; close to, not quite, OmegaConf's int()/float() conversion (``oc.decode``'s is
    OmegaConf's grammar, `resolve_interpolations`)."""
    try:
        value = YAML(typ="safe", pure=True).load(text)
    except (YAMLError, ValueError, RecursionError):  # not YAML, or not a value YAML builds: the text stays text
        return text
    return text if isinstance(value, (dict, list)) or value is None else value


_UNSIGNED = r"(?:0|[1-9](?:_?[0-9])*)"
_DIGITS = r"[0-9](?:_?[0-9])*"
_POINT = rf"(?:{_UNSIGNED}?\.{_DIGITS}|{_UNSIGNED}\.)"
_WS = r"[ \t]*"
_INTER_OPEN = re.compile(rf"\$\{{{_WS}")
_VALUE_TOKENS = tuple((kind, re.compile(pattern)) for kind, pattern in (
    ("INTER_OPEN", _INTER_OPEN.pattern), ("BRACE_OPEN", rf"\{{{_WS}"), ("BRACE_CLOSE", rf"{_WS}\}}"),
    ("QUOTE_OPEN", "['\"]"), ("COMMA", rf"{_WS},{_WS}"), ("BRACKET_OPEN", rf"\[{_WS}"),
    ("BRACKET_CLOSE", rf"{_WS}\]"), ("COLON", rf"{_WS}:{_WS}"),
    ("FLOAT", rf"[+-]?(?:(?:{_UNSIGNED}|{_POINT})[eE][+-]?{_DIGITS}|{_POINT}|[Ii][Nn][Ff]|[Nn][Aa][Nn])"),
    ("INT", rf"[+-]?{_UNSIGNED}"), ("BOOL", "(?i:true|false)"), ("NULL", "(?i:null)"),
    ("UNQUOTED_CHAR", r"[/\-\\+.$%*@?|]"), ("ID", "[a-zA-Z_][a-zA-Z0-9_-]*"),
    ("ESC", r"(?:\\[\\()\[\]{}:=, \t])+"), ("WS", "[ \t]+"),
))
"""The tokens of OmegaConf's lexer in its VALUE_MODE (a resolver's arguments, what ``oc.decode`` reads), in its
order: the longest match wins, the first on a tie."""
_INTERPOLATION_TOKENS = tuple((kind, re.compile(pattern)) for kind, pattern in (
    ("INTER_OPEN", _INTER_OPEN.pattern), ("COLON", rf"{_WS}:{_WS}"), ("INTER_CLOSE", rf"{_WS}\}}"), ("DOT", r"\."),
    ("BRACKET_OPEN", r"\["), ("BRACKET_CLOSE", r"\]"), ("ID", "[a-zA-Z_][a-zA-Z0-9_-]*"),
    ("INTER_KEY", r"[^\\{}()\[\]:. \t'\"]+"),
))
"""The tokens of its INTERPOLATION_MODE (after ``${``, up to the resolver's colon): no spaces but around those."""
_PRIMITIVE = frozenset(("ID", "NULL", "INT", "FLOAT", "BOOL", "UNQUOTED_CHAR", "COLON", "ESC", "WS"))
"""The tokens a primitive (unquoted text, a number, ...) is made of, with interpolations; a dict's key takes
them but the colon."""


class _Token(NamedTuple):
    kind: str
    text: str
    """As written."""
    start: int
    value: str = ""
    """For text outside interpolations (STR), what it stands for: its escapes undone."""


class _GrammarError(Exception):
    """Text OmegaConf's grammar refuses (the error says why, in words)."""


def _text_token(text: str, start: int, quote: str) -> _Token:
    """The token at `start` of text outside interpolations: at the top of a config's string (`quote` empty) or
    in a quoted text. A backslash escapes only a ``${`` or closing quote after it, a run of them before either
    halved (an odd one escaping it)."""
    if opening := _INTER_OPEN.match(text, start):
        return _Token("INTER_OPEN", opening.group(), start)
    if quote and text[start] == quote:
        return _Token("QUOTE_CLOSE", quote, start)
    end = start + 1
    if text[start] == "\\":
        end = len(text) - len(text[start:].lstrip("\\"))
        escaped = "${" if text.startswith("${", end) else quote if quote and text.startswith(quote, end) else ""
        run = end - start
        if escaped and run % 2:
            return _Token("STR", text[start : end + len(escaped)], start, "\\" * (run // 2) + escaped)
        return _Token("STR", text[start:end], start, "\\" * (run // 2) if escaped else text[start:end])
    while end < len(text) and text[end] not in "\\" + quote and not text.startswith("${", end):
        end += 1
    return _Token("STR", text[start:end], start, text[start:end])


def _longest(text: str, start: int, rules: tuple[tuple[str, re.Pattern[str]], ...]) -> _Token | None:
    """The token of `rules` at `start` as ANTLR's lexer picks it: the longest match, the first rule on a tie."""
    best: _Token | None = None
    for kind, pattern in rules:
        match = pattern.match(text, start)
        if match and (best is None or len(match.group()) > len(best.text)):
            best = _Token(kind, match.group(), start)
    return best


def _lex(text: str, mode: str) -> list[_Token]:
    """`text` split into OmegaConf's tokens, from `mode`: "" a config's string, "value" what ``oc.decode`` reads.
    The lexer's mode follows them: an interpolation's name, then its arguments (values), a quoted text."""
    modes, tokens, start = [mode], [], 0
    while start < len(text):
        mode = modes[-1]
        if mode in ("", "'", '"'):
            token = _text_token(text, start, mode)
        else:
            found = _longest(text, start, _VALUE_TOKENS if mode == "value" else _INTERPOLATION_TOKENS)
            if found is None:
                where = "outside quotes" if mode == "value" else "in an interpolation's name"
                raise _GrammarError(f"{text[start]!r} {where} (character {start + 1})")
            token = found
        tokens.append(token)
        start += len(token.text)
        if token.kind == "INTER_OPEN":
            modes.append("interpolation")
        elif token.kind == "BRACE_OPEN":
            modes.append("value")
        elif token.kind == "QUOTE_OPEN":
            modes.append(token.text)
        elif token.kind == "COLON" and mode == "interpolation":
            modes[-1] = "value"
        elif token.kind in ("INTER_CLOSE", "BRACE_CLOSE", "QUOTE_CLOSE"):
            if len(modes) == 1:
                raise _GrammarError(f"{token.text.strip()!r} closes nothing (character {start})")
            modes.pop()
    return tokens


@dataclass
class _Interpolation:
    source: str
    """As written."""
    resolver: str | None
    """Its resolver's name (``oc.env``); None for a reference to a key, or a resolver named by an interpolation."""
    arguments: list[Any]
    """The resolver's arguments (elements, not resolved)."""


@dataclass
class _Joined:
    """Text joined from `parts`, text and interpolations (quoted text, or unquoted text of several tokens)."""
    parts: list[str | _Interpolation]


@dataclass
class _ListOf:
    items: list[Any]


@dataclass
class _MappingOf:
    pairs: list[tuple[list[_Token], Any]]
    """Each key (its tokens) and value (an element)."""


_EMPTY = _Joined([])
"""A missing argument or list item (``${oc.env:VAR,}``): OmegaConf takes the empty text there."""


class _Parser:
    """OmegaConf's parser over the `tokens` of `text`: what they say, not resolved yet (`_GrammarError`, in words,
    for what its grammar refuses)."""

    def __init__(self, text: str, tokens: list[_Token]):
        self.text, self.tokens, self.at = text, tokens, 0

    def peek(self) -> str:
        return self.tokens[self.at].kind if self.at < len(self.tokens) else "EOF"

    def take(self, kind: str, missing: str) -> _Token:
        """The next token, of `kind`; `missing` says what is wrong where the text ends first."""
        if self.peek() != kind:
            raise self.unexpected(missing)
        self.at += 1
        return self.tokens[self.at - 1]

    def unexpected(self, missing: str) -> _GrammarError:
        if self.at == len(self.tokens):
            return _GrammarError(missing)
        token = self.tokens[self.at]
        return _GrammarError(f"unexpected {token.text!r} (character {token.start + 1})")

    def top(self) -> list[str | _Interpolation]:
        """A config's string (the grammar's ``configValue``): its text and interpolations."""
        parts: list[str | _Interpolation] = []
        while self.peek() != "EOF":
            parts.append(self.interpolation() if self.peek() == "INTER_OPEN" else self.take("STR", "").value)
        return parts

    def single_element(self) -> Any:
        """What ``oc.decode`` reads: one element (the grammar's ``singleElement``)."""
        element = self.element("blank text")
        if self.peek() != "EOF":
            raise self.unexpected("")
        return element

    def interpolation(self) -> _Interpolation:
        """``${key.path}`` (a reference) or ``${resolver:arguments}``."""
        start = self.take("INTER_OPEN", "").start
        unterminated = f"unterminated interpolation (the ${{ at character {start + 1})"
        name: list[_Token | None] = []  # None for an interpolation in it
        while self.peek() not in ("COLON", "INTER_CLOSE"):
            if self.peek() == "INTER_OPEN":
                self.interpolation()
                name.append(None)
            elif self.peek() in ("ID", "DOT", "INTER_KEY", "BRACKET_OPEN", "BRACKET_CLOSE"):
                name.append(self.take(self.peek(), ""))
            else:
                raise self.unexpected(unterminated)
        if self.peek() == "INTER_CLOSE":  # a reference: refused, so its path is not checked further
            if not name:
                raise _GrammarError(f"an empty interpolation (character {start + 1})")
            end = self.take("INTER_CLOSE", unterminated)
            return _Interpolation(self.text[start : end.start + len(end.text)], None, [])
        kinds = ["ID" if token is None else token.kind for token in name]  # an interpolation may stand for a word
        if kinds != ["ID", "DOT"] * (len(kinds) // 2) + ["ID"]:  # a resolver's name: words joined by dots
            raise self.unexpected("")
        resolver = None if None in name else "".join(token.text for token in name if token)
        self.take("COLON", unterminated)
        arguments = [] if self.peek() == "BRACE_CLOSE" else self.sequence("BRACE_CLOSE", unterminated)
        end = self.take("BRACE_CLOSE", unterminated)
        return _Interpolation(self.text[start : end.start + len(end.text)], resolver, arguments)

    def sequence(self, closing: str, missing: str) -> list[Any]:
        """Elements separated by commas up to `closing`, as OmegaConf reads them: a missing one is ''."""
        items, after_comma = [], True
        while self.peek() != closing:
            if self.peek() == "COMMA":
                if after_comma:
                    items.append(_EMPTY)
                self.at += 1
                after_comma = True
            elif after_comma:
                items.append(self.element(missing))
                after_comma = False
            else:
                raise self.unexpected(missing)
        if after_comma:
            items.append(_EMPTY)
        return items

    def element(self, missing: str) -> Any:
        """A quoted text, a list, a mapping, or unquoted text (a single token keeps its type: a number, ...)."""
        if self.peek() == "QUOTE_OPEN":
            quote = self.take("QUOTE_OPEN", "")
            parts: list[str | _Interpolation] = []
            while self.peek() != "QUOTE_CLOSE":
                if self.peek() == "EOF":
                    raise _GrammarError(f"no closing quote (the {quote.text} at character {quote.start + 1})")
                parts.append(self.interpolation() if self.peek() == "INTER_OPEN" else self.take("STR", "").value)
            self.at += 1
            return _Joined(parts)
        if self.peek() == "BRACKET_OPEN":
            bracket = self.take("BRACKET_OPEN", "")
            unclosed = f"no closing ] (the [ at character {bracket.start + 1})"
            items = [] if self.peek() == "BRACKET_CLOSE" else self.sequence("BRACKET_CLOSE", unclosed)
            self.take("BRACKET_CLOSE", unclosed)
            return _ListOf(items)
        if self.peek() == "BRACE_OPEN":
            return self.mapping()
        tokens: list[Any] = []
        while self.peek() in _PRIMITIVE or self.peek() == "INTER_OPEN":
            tokens.append(self.interpolation() if self.peek() == "INTER_OPEN" else self.take(self.peek(), ""))
        if not tokens:
            raise self.unexpected(missing)
        return _unquoted(tokens)

    def mapping(self) -> _MappingOf:
        """``{key: element, ...}``: a key is unquoted text, no colon nor interpolation in it."""
        brace = self.take("BRACE_OPEN", "")
        unclosed = f"no closing }} (the {{ at character {brace.start + 1})"
        pairs: list[tuple[list[_Token], Any]] = []
        while not pairs or self.peek() == "COMMA":
            if pairs:
                self.at += 1
            elif self.peek() == "BRACE_CLOSE":
                break
            key = []
            while self.peek() in _PRIMITIVE - {"COLON"}:
                key.append(self.take(self.peek(), ""))
            if not key:
                raise self.unexpected(unclosed)
            self.take("COLON", unclosed)
            pairs.append((key, self.element(unclosed)))
        self.take("BRACE_CLOSE", unclosed)
        return _MappingOf(pairs)


def _unquoted(tokens: list[Any]) -> Any:
    """Unquoted text of `tokens` (and interpolations): one keeps its type, several are joined, escapes undone."""
    if len(tokens) > 1:
        return _Joined([token if isinstance(token, _Interpolation) else _unescaped(token) for token in tokens])
    if isinstance(tokens[0], _Token) and tokens[0].kind == "WS":
        raise _GrammarError("blank text")
    return tokens[0]


def _unescaped(token: _Token) -> str:
    return token.text[1::2] if token.kind == "ESC" else token.text


class _Resolution:
    """Resolves what `_Parser` read as OmegaConf does, from `environ` (`ConfigError` naming `where`)."""

    def __init__(self, where: str, environ: Mapping[str, str]):
        self.where, self.environ = where, environ

    def value(self, element: Any) -> Any:
        if isinstance(element, _Interpolation):
            return self.resolve(element)
        if isinstance(element, _Token):
            return self.token(element)
        if isinstance(element, _Joined):
            return "".join(part if isinstance(part, str) else str(self.resolve(part)) for part in element.parts)
        if isinstance(element, _ListOf):
            return [self.value(item) for item in element.items]
        return {self.value(_unquoted(key)): self.value(value) for key, value in element.pairs}

    def token(self, token: _Token) -> Any:
        """A single token's value: a number, boolean or null as the grammar spells it, else its text."""
        if token.kind == "INT":
            try:
                return int(token.text)
            except ValueError:  # longer than Python converts (4300 digits), as OmegaConf finds
                raise ConfigError(f"{self.where}: {NUMBER_TOO_LONG}") from None
        if token.kind == "FLOAT":
            return float(token.text)
        if token.kind == "BOOL":
            return token.text.lower() == "true"
        return None if token.kind == "NULL" else _unescaped(token)

    def resolve(self, interpolation: _Interpolation) -> Any:
        source = interpolation.source
        if interpolation.resolver not in ("oc.env", "oc.decode"):
            raise ConfigError(f"{self.where}: cannot resolve {source!r} ({_SUPPORTED})")
        arguments = [self.value(argument) for argument in interpolation.arguments]
        if interpolation.resolver == "oc.env":
            return self.env(source, arguments)
        if len(arguments) != 1:
            given = "no text" if not arguments else f"{len(arguments)} arguments, not one text (quote a comma in it)"
            raise ConfigError(f"{self.where}: {source!r} gives oc.decode {given}")
        text = arguments[0]
        if text is None or not isinstance(text, str):
            if text is None:
                return None
            given = "a list or mapping" if isinstance(text, (list, dict)) else brief(text)
            written = interpolation.arguments[0]
            hint = f' (quote it: "{written.text}")' if isinstance(written, _Token) else ""
            raise ConfigError(f"{self.where}: {source!r}: OmegaConf's oc.decode takes text or null, not {given}{hint}")
        try:
            element = _Parser(text, _lex(text, "value")).single_element()
        except _GrammarError as error:
            raise ConfigError(f"{self.where}: OmegaConf cannot decode {brief(text)} in {source!r}: {error}") from None
        return self.value(element)

    def env(self, source: str, arguments: list[Any]) -> Any:
        """``oc.env``'s value: the variable's text, else the default's (a null default is None)."""
        if not arguments:
            raise ConfigError(f"{self.where}: {source!r} names no environment variable")
        if len(arguments) > 2:
            raise ConfigError(f"{self.where}: {source!r} gives oc.env {len(arguments)} arguments, not a variable and "
                              "at most a default (quote a comma in it)")
        name = arguments[0]
        if not isinstance(name, str):
            raise ConfigError(f"{self.where}: cannot resolve {source!r}: oc.env takes a variable's name, not "
                              f"{brief(name)}")
        if name in self.environ:
            return self.environ[name]
        if len(arguments) == 2:
            return None if arguments[1] is None else str(arguments[1])
        if not name:
            raise ConfigError(f"{self.where}: {source!r} names no environment variable")
        raise ConfigError(f"{self.where}: environment variable {name} is not set and {source!r} has no default")


def resolve_interpolations(value: Any, where: str, environ: Mapping[str, str]) -> Any:
    """`value` with its ``${...}`` interpolations resolved from `environ` as OmegaConf resolves them (a value that
    is one interpolation keeps its type: ``oc.decode`` gives numbers, lists, mappings; `ConfigError` naming
    `where` for one that cannot be, or that is not ``oc.env`` or ``oc.decode``); any other value as it is."""
    if not (isinstance(value, str) and "${" in value):
        return value
    try:
        parts = _Parser(value, _lex(value, "")).top()
    except _GrammarError as error:
        raise ConfigError(f"{where}: OmegaConf cannot read {brief(value)}: {error}") from None
    resolution = _Resolution(where, environ)
    try:
        if len(parts) == 1 and isinstance(parts[0], _Interpolation):
            return resolution.resolve(parts[0])
        return resolution.value(_Joined(parts))
    except RecursionError:  # an environment variable decoded into itself, or lists nested thousands deep
        raise ConfigError(f"{where}: cannot resolve {brief(value)}: its interpolations nest too deep") from None
