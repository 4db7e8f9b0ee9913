"""Interpolations in a Trinity config, resolved as OmegaConf resolves them (`ConfigValues`): references to its keys,
${oc.env:VAR,default}, ${oc.env:VAR}, ${oc.decode:...}, read by OmegaConf's grammar (its lexer's modes and its
parser's rules, quotes and escapes as it takes them)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

from solver.tables import NUMBER_TOO_LONG, yaml_brief
from solver.trinity.keys import INT_FIELDS, ConfigError

_SUPPORTED = "only references to keys, ${oc.env:VAR,default} and ${oc.decode:...} are supported"


class ResolvesToNothing(ConfigError):
    """A value that resolves to nothing whatever the environment: a reference to a key the config lacks (`lacking`,
    the first key of its path the config lacks; None where a list's index or a value on the way fails it; `below`:
    the keys of the reference's path after that one), a cycle, an ``oc.decode`` that OmegaConf refuses (given no text,
    or more than one: ``${oc.decode:8.0}`` is a float, not text; text its grammar cannot read). Trinity's
    ``load_config`` resolves every value of the config (``OmegaConf.to_object``, ``trinity/common/config.py:1059`` in
    0.6.0), so it refuses such a config as it loads it, unless its typed ``Config`` gives the key lacking a default
    (and, where that is a section, the keys below it too). Where an environment variable is read on the way
    (``${a.${oc.env:K,b}}``), the run's may differ: a plain `ConfigError` then."""

    def __init__(self, message: str, lacking: Path | None = None, below: tuple[str, ...] = ()):
        super().__init__(message)
        self.lacking = lacking
        self.below = below


class VariableUnset(ConfigError):
    """A ``${oc.env:VAR}`` without a default whose `variable` is not set: OmegaConf refuses to resolve it, so Trinity
    fails to load the config in an environment without it. Its message is `unset` (where, and which variable) and
    `fix` (set it, or give it a default)."""

    def __init__(self, unset: str, variable: str):
        self.unset = unset
        self.variable = variable
        super().__init__(f"{unset}: {self.fix}")

    @property
    def fix(self) -> str:
        """What to do, in words: set the variable as the run will have it, or give it a default."""
        return (f"set {self.variable} as trinity run will have it (Trinity fails to load the config without it), or "
                f"give it a default (${{oc.env:{self.variable},DEFAULT}})")


def _missing_words(key: str) -> str:
    """That `key` (as a message names it) is ``???``, and what to do, read directly or through a reference alike."""
    return f"{key} is ???, a value missing (OmegaConf refuses to read it): give it"


class MissingValue(ConfigError):
    """OmegaConf's missing value `MISSING` (``???``), read or referred to, at `at`: Trinity loads the config or refuses
    it by where that is (`solver.trinity.keys.MISSING_KEPT_SECTIONS`)."""

    def __init__(self, message: str, at: Path):
        super().__init__(message)
        self.at = at


_PLAIN_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
"""A word that YAML 1.2 reads as the text it is (``yarn``, ``fsdp2``), but for `_YAML_WORDS`."""
_YAML_WORDS = ("true", "false", "null")
"""The words YAML 1.2 reads as a boolean or null (in some cases: ``True``; not ``tRUE``, which ruamel decides)."""


def decode_scalar(text: str) -> Any:
    """`text` as the config checks read plain text for a typed field: the YAML scalar it spells (a number, a
    boolean), else itself; close to, not quite, OmegaConf's int()/float() conversion (``oc.decode``'s is
    OmegaConf's grammar, `ConfigValues`). A plain word (`_PLAIN_WORD`: a plan's ``yarn``) is itself without
    ruamel, which is loaded only for other text."""
    if _PLAIN_WORD.fullmatch(text) and text.casefold() not in _YAML_WORDS:
        return text
    from ruamel.yaml import YAML  # ruamel: only where a value is read as YAML, not on import
    from ruamel.yaml.error import YAMLError

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
    """The resolver's arguments (elements, not resolved); a reference's key path: its tokens (a key, a dot, a
    bracket) and interpolations (for a key)."""
    reference: bool = False


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
        """The kind of the next token, ``EOF`` past the last."""
        return self.tokens[self.at].kind if self.at < len(self.tokens) else "EOF"

    def take(self, kind: str, missing: str) -> _Token:
        """The next token, of `kind`; `missing` says what is wrong where the text ends first."""
        if self.peek() != kind:
            raise self.unexpected(missing)
        self.at += 1
        return self.tokens[self.at - 1]

    def unexpected(self, missing: str) -> _GrammarError:
        """The error for the next token, which the grammar does not take there (`missing` where the text ended)."""
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
        name: list[_Token | _Interpolation] = []
        while self.peek() not in ("COLON", "INTER_CLOSE"):
            if self.peek() == "INTER_OPEN":
                name.append(self.interpolation())
            elif self.peek() in ("ID", "DOT", "INTER_KEY", "BRACKET_OPEN", "BRACKET_CLOSE"):
                name.append(self.take(self.peek(), ""))
            else:
                raise self.unexpected(unterminated)
        # an interpolation may stand for a word of either
        kinds = ["ID" if isinstance(token, _Interpolation) else token.kind for token in name]
        if self.peek() == "INTER_CLOSE":  # a reference to a key: ${a.b}, ${..a}, ${a[0]}
            if not name:
                raise _GrammarError(f"an empty interpolation (character {start + 1})")
            shape = "".join({"DOT": ".", "BRACKET_OPEN": "[", "BRACKET_CLOSE": "]"}.get(kind, "k") for kind in kinds)
            if not re.fullmatch(r"\.*(?:k|\[k\])(?:\.k|\[k\])*", shape):
                raise _GrammarError(f"not a key's path (the ${{ at character {start + 1})")
            end = self.take("INTER_CLOSE", unterminated)
            return _Interpolation(self.text[start : end.start + len(end.text)], None, name, reference=True)
        if kinds != ["ID", "DOT"] * (len(kinds) // 2) + ["ID"]:  # a resolver's name: words joined by dots
            raise self.unexpected("")
        resolver = None if any(isinstance(token, _Interpolation) for token in name) else "".join(
            token.text for token in name if isinstance(token, _Token))
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


Path = tuple[str | int, ...]
"""Where a value is in a config: its keys, and indexes in lists."""

_KEY_PATH_HEAD = re.compile(r"(\.)*[^.[]*")
_KEY_PATH_OTHER = re.compile(r"\.([^.[]*)|\[(.*?)\]")


def _split_key(key: str) -> list[str]:
    """A reference's key path split into keys as OmegaConf splits it (its ``split_key``): ``a.b[c]`` is a, b, c."""
    head = _KEY_PATH_HEAD.match(key)
    assert head is not None  # it matches any text, if only the empty start
    parts = key[: head.end()].split(".")
    if head.end() == len(key):
        return parts
    if key[head.end()] == "[" and not parts[-1]:
        parts.pop()
    return parts + [name or bracketed for name, bracketed in _KEY_PATH_OTHER.findall(key[head.end() :])]


MISSING = "???"
"""OmegaConf's value missing: reading it, or a reference to it, is an error."""
MAX_RESOLVED_TEXT = 1 << 20
"""The longest text interpolations may make of a value (a config's file is at most 256 KB; text that references join
doubles at each step, so a few dozen keys could make gigabytes)."""


class _Resolution:
    """Resolves what `_Parser` read as OmegaConf does, for the value at `at` in `config` (`ConfigError` naming
    `where`)."""

    def __init__(self, config: ConfigValues, at: Path, where: str):
        self.config, self.at, self.where, self.environ = config, at, where, config.environ

    def value(self, element: Any) -> Any:
        """What `element`, as `_Parser` read it, resolves to."""
        if isinstance(element, _Interpolation):
            return self.resolve(element)
        if isinstance(element, _Token):
            return self.token(element)
        if isinstance(element, _Joined):
            text = "".join(part if isinstance(part, str) else str(self.resolve(part)) for part in element.parts)
            if len(text) > MAX_RESOLVED_TEXT:  # references joined into text double it at each step
                raise ConfigError(f"{self.where}: its interpolations make a text of {len(text)} characters, more than "
                                  f"the {MAX_RESOLVED_TEXT} a value of a config may have")
            return text
        if isinstance(element, _ListOf):
            return [self.item(item) for item in element.items]
        return {self.value(_unquoted(key)): self.item(value) for key, value in element.pairs}

    def item(self, element: Any) -> Any:
        """A decoded list's or mapping's item: not a mapping or list a reference gives with interpolations in it,
        which OmegaConf carries over as written, or resolves anew where it lands."""
        value = self.value(element)
        if isinstance(element, _Interpolation) and element.reference and isinstance(value, (Mapping, list)) and (
                _holds_interpolation(value)):
            raise ConfigError(f"{self.where}: cannot resolve {element.source!r} in what oc.decode decodes: it gives "
                              "a mapping or list with interpolations in it, which OmegaConf resolves otherwise there")
        return value

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
        """What `interpolation` gives (`located`'s value)."""
        return self.located(interpolation)[0]

    def located(self, interpolation: _Interpolation) -> tuple[Any, Path | None]:
        """What `interpolation` gives, and the key whose value that is (a reference's, or ``oc.decode``'s of one:
        OmegaConf gives that key's own mapping, resolved where it is); None for a value a resolver makes."""
        source = interpolation.source
        if interpolation.reference:
            return self.config.referred(source, self.key(interpolation), self.at, self.where)
        if interpolation.resolver not in ("oc.env", "oc.decode"):
            raise ConfigError(f"{self.where}: cannot resolve {source!r} ({_SUPPORTED})")
        arguments = [self.value(argument) for argument in interpolation.arguments]
        if interpolation.resolver == "oc.env":
            return self.env(source, arguments), None
        # What oc.decode refuses here it refuses in every environment (`ResolvesToNothing`), unless an environment
        # variable was read on the way (`ConfigValues._resolve` says so): OmegaConf 2.3.0 raises as it resolves it.
        if len(arguments) != 1:
            given = "no text" if not arguments else f"{len(arguments)} arguments, not one text (quote a comma in it)"
            raise ResolvesToNothing(f"{self.where}: {source!r} gives oc.decode {given}")
        text = arguments[0]
        if text is None:
            return None, None
        if not isinstance(text, str):
            written = interpolation.arguments[0]
            given = ("a list or mapping" if isinstance(text, (list, dict))
                     else written.text.strip() if isinstance(written, _Token) else yaml_brief(text))  # inf, as written
            quoted = self._decodable(text, written.text) if isinstance(written, _Token) else None
            hint = f' (quote it: "{quoted}")' if quoted is not None else ""
            raise ResolvesToNothing(
                f"{self.where}: {source!r}: OmegaConf's oc.decode takes text or null, not {given}{hint}")
        try:
            element = _Parser(text, _lex(text, "value")).single_element()
        except _GrammarError as error:
            raise ResolvesToNothing(
                f"{self.where}: OmegaConf cannot decode {yaml_brief(text)} in {source!r}: {error}") from None
        if isinstance(element, _Interpolation):
            return self.located(element)
        return self.value(element), None

    def _decodable(self, value: Any, written: str) -> str | None:
        """The text to quote for oc.decode where it was given `written`, which reads as `value` (no text): as written,
        but in an int field (`INT_FIELDS`) the whole number a float stands for (``8`` for ``8.0``, which decodes to
        a float the field refuses); None where no text decodes to what that field takes (a boolean, ``8.5``)."""
        if self.at[-1] not in INT_FIELDS or type(value) is int:
            return written
        return str(int(value)) if isinstance(value, float) and value.is_integer() else None

    def key(self, reference: _Interpolation) -> str:
        """A reference's key path as text, its interpolations resolved (each to a key's name)."""
        parts = []
        for part in reference.arguments:
            if isinstance(part, _Token):
                parts.append(part.text)
                continue
            name = self.resolve(part)
            if not isinstance(name, str):
                raise ConfigError(f"{self.where}: cannot resolve {reference.source!r}: {part.source!r} gives "
                                  f"{yaml_brief(name)}, not a key's name")
            parts.append(name)
        return "".join(parts)

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
                              f"{yaml_brief(name)}")
        self.config.environment_read()
        if len(arguments) == 2:
            default = None if arguments[1] is None else str(arguments[1])
            if isinstance(self.environ, VariablesRead):
                return self.environ.or_default(name, default)
            return self.environ.get(name, default)
        if name in self.environ:
            return self.environ[name]
        if not name:
            raise ConfigError(f"{self.where}: {source!r} names no environment variable")
        raise VariableUnset(f"{self.where}: environment variable {name} is not set and {source!r} has no default", name)


class VariablesRead(Mapping[str, str]):
    """`environ` as a config's interpolations read it (`ConfigValues`' ``oc.env``), noting each variable that they
    find set there (`found`, in the order first read, with its value): those the command checking the config as it
    was planned sets too (`solver.trinity.check_command`), whether the reader of the config or its checks read them.
    A read with a default its value equals (`or_default`) is not noted: a shell without the variable reads the same."""

    def __init__(self, environ: Mapping[str, str]):
        self.environ = environ
        self.found: dict[str, str] = {}

    def __getitem__(self, name: str) -> str:
        value = self.environ[name]
        self.found[name] = value
        return value

    def or_default(self, name: str, default: str | None) -> str | None:
        """The variable's value, else `default` (``oc.env``'s), noting it as `__getitem__` does unless it is
        `default`."""
        if name not in self.environ:
            return default
        value = self.environ[name]
        if value != default:
            self.found[name] = value
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self.environ)

    def __len__(self) -> int:
        return len(self.environ)


class NoEnvironment(Mapping[str, str]):
    """No environment, as a config's interpolations read it where none is given: each ``${oc.env:VAR,default}``
    takes its default (one without a default resolves to nothing: `VariableUnset`), where Trinity, which resolves them
    as it loads the config (``OmegaConf.to_object``, ``trinity/common/config.py:1059`` in 0.6.0), reads the
    environment ``trinity run`` starts in. `taken`: each variable whose default was taken, in the order first read;
    `unread`: each key a reader left unread for a variable without a default (`left_unread`), and that variable."""

    def __init__(self) -> None:
        self.taken: dict[str, None] = {}
        self.unread: dict[str, str] = {}

    def __getitem__(self, name: str) -> str:
        raise KeyError(name)

    def get(self, name: str, default: Any = None) -> Any:
        """`default`, noting `name` as taken at it (``oc.env``'s default)."""
        self.taken[name] = None
        return default

    def left_unread(self, key: str, unset: VariableUnset) -> None:
        """Note that the dotted `key` was left unread, as it reads the variable of `unset`, which has no default."""
        self.unread.setdefault(key, unset.variable)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


class ConfigValues:
    """A config's values (`root`: nested mappings and lists, as YAML gives them) as OmegaConf resolves them:
    references to its keys (``${model.max_model_len}``, ``${..key}``, ``${a.b[0]}``), ``${oc.env:VAR,default}``
    from `environ`, ``${oc.decode:...}``, read by OmegaConf's grammar; other resolvers are refused. Only what is
    read is resolved, each key once. Messages name the keys after `name` (the config's)."""

    def __init__(self, root: Mapping[str, Any], environ: Mapping[str, str], name: str = ""):
        self.root, self.environ, self.name = root, environ, name
        self._resolved: dict[Path, tuple[Any, Path]] = {}
        self._resolving: list[Path] = []
        self._decoded: set[Path] = set()
        """Where ``oc.decode`` gave a mapping or list: its text is final there, as OmegaConf takes a resolver's."""
        self._environmental: set[Path] = set()
        """The values whose resolution read an environment variable (``oc.env``), directly or through another."""

    def where(self, path: Path) -> str:
        """`path` as messages name it: the config's name, then the dotted key (a list's index in brackets)."""
        key = dotted(path)
        return f"{self.name}: {key}" if self.name else key

    def get(self, path: Path) -> Any:
        """The value at `path`, its interpolations (and those of sections on the way) resolved; None where it, or a
        section above, is absent or null. `ConfigError` for one that cannot be resolved, or a section on the way
        that is not a mapping (or, for an index, a list). A mapping or list is given as written."""
        node: Any = self.root
        at: Path = ()
        for depth, key in enumerate(path):
            if node is None:
                return None
            kind, named = (list, "list") if isinstance(key, int) else (Mapping, "mapping")
            if not isinstance(node, kind):
                raise ConfigError(f"{self.where(path[:depth])} must be a {named}, got {yaml_brief(node)}")
            if key not in node if isinstance(node, Mapping) else not 0 <= int(key) < len(node):
                return None
            if (node[key] if isinstance(node, Mapping) else node[int(key)]) == MISSING:
                raise MissingValue(_missing_words(self.where(path[: depth + 1])), path[: depth + 1])
            node, at = self._child(node, at, key, partial(self.where, path[: depth + 1]))
        return node

    def _child(self, container: Any, at: Path, key: str | int, where: Callable[[], str]) -> tuple[Any, Path]:
        """The value at `key` in `container` (at `at`), resolved, and where it is (a reference's mapping: there);
        `where` gives the words that name the value in a message, made only for a value that is resolved."""
        value = container[key]
        if is_interpolation(value) and not any(at[:depth] in self._decoded for depth in range(len(at) + 1)):
            return self._resolve((*at, key), value, where())
        return value, (*at, key)

    def _resolve(self, at: Path, text: str, where: str) -> tuple[Any, Path]:
        """`text`, the value at `at`, resolved (a value that is one interpolation keeps its type), and where it is."""
        if at in self._resolved:
            if at in self._environmental:
                self.environment_read()
            return self._resolved[at]
        if at in self._resolving:
            raise ResolvesToNothing(f"{where}: a cycle of interpolations, back to {dotted(at)}")
        try:
            parts = _Parser(text, _lex(text, "")).top()
        except (_GrammarError, RecursionError) as error:  # RecursionError: thousands of ${ inside one another
            problem = "its interpolations nest too deep" if isinstance(error, RecursionError) else error
            raise ConfigError(f"{where}: OmegaConf cannot read {yaml_brief(text)}: {problem}") from None
        resolution = _Resolution(self, at, where)
        self._resolving.append(at)
        try:
            if len(parts) == 1 and isinstance(parts[0], _Interpolation):
                value, place = resolution.located(parts[0])
                if place is None and isinstance(value, (Mapping, list)):
                    self._decoded.add(at)
                found = value, at if place is None else place
            else:
                found = resolution.value(_Joined(parts)), at
        except RecursionError:  # an environment variable decoded into itself, chains thousands long
            raise ConfigError(f"{where}: cannot resolve {yaml_brief(text)}: its interpolations nest too deep") from None
        except ResolvesToNothing as error:
            if at in self._environmental:  # the run's environment may resolve it
                raise ConfigError(str(error)) from None
            raise
        finally:
            self._resolving.pop()
        self._resolved[at] = found
        return found

    def environment_read(self) -> None:
        """Note that the values being resolved read an environment variable: what fails in them may resolve where the
        run's environment differs (`ResolvesToNothing` is not said of them)."""
        self._environmental.update(self._resolving)

    def referred(self, source: str, key: str, at: Path, where: str) -> tuple[Any, Path]:
        """The value the reference `source` (its key path `key`) in the value at `at` refers to, and where it is,
        as OmegaConf selects it: from the config's top, or with a leading dot from the mapping that holds the value
        (each further dot one up); keys split at dots and brackets, a list's by index."""
        start: Path = at[:-1]
        if key.startswith("."):
            key = key[1:]
            while key.startswith("."):
                if not start:
                    raise ResolvesToNothing(f"{where}: cannot resolve {source!r}: it climbs above the config's top")
                start, key = start[:-1], key[1:]
        else:
            start = ()
        node: Any = self.root
        node_at: Path = ()
        for part in start:  # the mapping or list it starts from (each found before, and resolved)
            node, node_at = self._child(node, node_at, part, lambda: where)
        parts = _split_key(key) if key else []
        for index, part in enumerate(parts):
            node, node_at = self._select(node, node_at, part, source, where, tuple(parts[index + 1:]))
        if node_at == at[: len(node_at)]:  # a section that holds the value itself
            raise ResolvesToNothing(f"{where}: cannot resolve {source!r}: it refers to "
                                    f"{dotted(node_at) or 'the config'}, which holds it")
        return node, node_at

    def _select(self, node: Any, at: Path, part: str, source: str, where: str,
                below: tuple[str, ...]) -> tuple[Any, Path]:
        """The value at `part` in `node` (at `at`) for the reference `source`, resolved, and where it is (`below`: the
        keys the reference reads after `part`, which a `ResolvesToNothing` for a missing `part` keeps)."""
        def missing(path: Path) -> ResolvesToNothing:
            return ResolvesToNothing(f"{where}: cannot resolve {source!r}: the config has no {dotted(path)}", path,
                                     below)

        if isinstance(node, list):
            try:
                index = int(part)
            except ValueError:
                raise ResolvesToNothing(f"{where}: cannot resolve {source!r}: {dotted(at)} is a list, and {part!r} "
                                        "is no index") from None
            if not 0 <= index < len(node):
                raise missing((*at, index))
            key: str | int = index
        elif isinstance(node, Mapping):
            if part not in node:
                raise missing((*at, part))
            key = part
        else:
            raise ResolvesToNothing(f"{where}: cannot resolve {source!r}: {dotted(at)} is {yaml_brief(node)}, not a "
                                    f"mapping or list, so it has no {part}")
        if node[key] == MISSING:
            raise MissingValue(f"{where}: cannot resolve {source!r}: {_missing_words(dotted((*at, key)))}", (*at, key))
        return self._child(node, at, key, lambda: f"{where}: {source!r} reads {dotted((*at, key))}")


def is_interpolation(value: Any) -> bool:
    """Whether `value` is text with ``${`` in it, which OmegaConf resolves."""
    return isinstance(value, str) and "${" in value


def _holds_interpolation(value: Any) -> bool:
    """Whether `value` is, or holds, text with ``${`` in it (`is_interpolation`)."""
    if isinstance(value, Mapping):
        return any(_holds_interpolation(item) for item in value.values())
    if isinstance(value, list):
        return any(_holds_interpolation(item) for item in value)
    return is_interpolation(value)


def dotted(path: Path) -> str:
    """`path` as a dotted key, as messages name it (a list's index in brackets: ``explorer.auxiliary_models[0]``)."""
    return "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in path).removeprefix(".")
