"""Interpolations (solver/trinity/interpolation.py) against OmegaConf: cases a mutation of the grammar's tables or
parser let through (tokens, spaces, escapes, mappings, resolver names). Each expected value or refusal was taken
from OmegaConf 2.4.0 with these variables set and nothing else; OmegaConf is not needed to run them."""

from __future__ import annotations

import pytest

from solver.trinity.interpolation import ConfigValues
from solver.trinity.keys import ConfigError

_ENVIRON = {"SET": "8192", "R": "env"}
_DECODED = "${oc.decode:${oc.env:V}}"
"""The expression that decodes the text of V, as OmegaConf's grammar reads it."""


def resolve_interpolations(expression: str, key: str, environ: dict[str, str]) -> object:
    """`expression` as the value of `key`, resolved as a config's value is."""
    return ConfigValues({key: expression}, environ).get((key,))


@pytest.mark.parametrize(("text", "decoded"), [
    # spaces after [ and { and before ] and }
    ("{ a: 1}", {"a": 1}), ("{a: 1 }", {"a": 1}), ("[ 1, 2 ]", [1, 2]), ("[1 , 2]", [1, 2]), ("{ }", {}),
    ("{}", {}),
    # the unquoted characters besides letters and digits
    ("a*b", "a*b"), ("a@b", "a@b"), ("a?b", "a?b"), ("a|b", "a|b"), ("*", "*"), ("-", "-"), ("+", "+"),
    ("true-x", "true-x"), ("Qwen3-8B", "Qwen3-8B"),
    # escapes: a backslash before any of \()[]{}:=, space and tab is undone
    ("a\\:b", "a:b"), ("a\\\tb", "a\tb"), ("\\(", "("), ("a\\(b\\)", "a(b)"), ("a\\[b\\]", "a[b]"),
    ("a\\{b\\}", "a{b}"), ("\\,", ","), ("\\ ", " "), ("\\\\", "\\"), ("\\,\\,", ",,"),
    # a mapping's keys are typed as values are; escapes undone in them
    ("{1: a}", {1: "a"}), ("{true: 1}", {True: 1}), ("{null: 1}", {None: 1}), ("{1.5: x}", {1.5: "x"}),
    ("{a\\ b: 1}", {"a b": 1}), ("{a b: 1}", {"a b": 1}), ("{a: [1, {b: 2}]}", {"a": [1, {"b": 2}]}),
    # text decoded is resolved in turn, an interpolation inside it too
    ("a${oc.env:SET}", "a8192"), ("${oc.env:SET}b", "8192b"), ("[${oc.env:SET}, x]", ["8192", "x"]),
])
def test_oc_decode_gives_what_omegaconf_decodes(text: str, decoded: object) -> None:
    value = resolve_interpolations(_DECODED, "k", {**_ENVIRON, "V": text})
    assert (repr(value), type(value)) == (repr(decoded), type(decoded))


@pytest.mark.parametrize(("expression", "resolved"), [
    # tabs wherever spaces are allowed
    ("${\toc.env:SET}", "8192"), ("${oc.env:\tSET}", "8192"), ("${oc.env:SET\t}", "8192"), ("${oc.env\t:SET}", "8192"),
    ("${oc.env:UNSET,\t4\t}", "4"), ("${oc.decode:\t'[\t1\t,\t2\t]'\t}", [1, 2]),
    # a default of one escape, or text with one
    ("${oc.env:UNSET,\\,}", ","), ("${oc.env:UNSET,\\ }", " "), ("${oc.env:UNSET,a\\:b}", "a:b"),
    ("${oc.env:UNSET,-}", "-"),
    # a null default joined into text is written as Python writes it
    ("x${oc.env:UNSET,null}y", "xNoney"), ("${oc.env:UNSET,{a: 1}}", "{'a': 1}"),
])
def test_interpolations_resolve_as_omegaconf_resolves_them(expression: str, resolved: object) -> None:
    value = resolve_interpolations(expression, "k", _ENVIRON)
    assert (repr(value), type(value)) == (repr(resolved), type(resolved))


@pytest.mark.parametrize(("text", "reason"), [
    ("{: 1}", "unexpected ': ' (character 2)"),
    ("[1", "no closing ] (the [ at character 1)"),
    ("[ 1, 2", "no closing ] (the [ at character 1)"),
    ("{a: 1", "no closing } (the { at character 1)"),
    ("{a", "no closing } (the { at character 1)"),
    ("x {a", "unexpected '{' (character 3)"),
    ("{a 1}", "unexpected '}' (character 5)"),
    ("{a: 1, b}", "unexpected '}' (character 9)"),
    ("{'a': 1}", "unexpected \"'\" (character 2)"),
    ("{${oc.env:SET}: 1}", "unexpected '${' (character 2)"),
    ("['a' 'b']", "unexpected ' ' (character 5)"),
    ("a\\(b)", "')' outside quotes (character 5)"),
])
def test_oc_decode_refuses_what_omegaconf_refuses(text: str, reason: str) -> None:
    with pytest.raises(ConfigError) as raised:
        resolve_interpolations(_DECODED, "k", {**_ENVIRON, "V": text})
    assert str(raised.value) == f"k: OmegaConf cannot decode {text!r} in {_DECODED!r}: {reason}"


@pytest.mark.parametrize(("expression", "message"), [
    # a resolver's name: words joined by dots, a word may hold a -; OmegaConf refuses these too
    ("${oc.env/x:SET}", "k: OmegaConf cannot read '${oc.env/x:SET}': unexpected ':' (character 11)"),
    ("${oc..env:SET}", "k: OmegaConf cannot read '${oc..env:SET}': unexpected ':' (character 10)"),
    ("${.oc.env:SET}", "k: OmegaConf cannot read '${.oc.env:SET}': unexpected ':' (character 10)"),
    ("${a[0]:x}", "k: OmegaConf cannot read '${a[0]:x}': unexpected ':' (character 7)"),
    ("${my-res:x}", ("k: cannot resolve '${my-res:x}' (only references to keys, ${oc.env:VAR,default} and "
                     "${oc.decode:...} are supported)")),
    ("${${oc.env:R}:SET}",  # OmegaConf: no resolver named env
     ("k: cannot resolve '${${oc.env:R}:SET}' (only references to keys, ${oc.env:VAR,default} and ${oc.decode:...} "
      "are supported)")),
    # oc.env takes text (OmegaConf: "str expected")
    ("${oc.env:[a]}", "k: cannot resolve '${oc.env:[a]}': oc.env takes a variable's name, not ['a']"),
    ("${oc.env:5}", "k: cannot resolve '${oc.env:5}': oc.env takes a variable's name, not 5"),
    ('${oc.env:"SE"T}', "k: OmegaConf cannot read '${oc.env:\"SE\"T}': unexpected 'T' (character 14)"),
    ("${oc.env:SET", "k: OmegaConf cannot read '${oc.env:SET': unterminated interpolation (the ${ at character 1)"),
    ("${SET", "k: OmegaConf cannot read '${SET': unterminated interpolation (the ${ at character 1)"),
])
def test_interpolations_refused_as_omegaconf_refuses_them(expression: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        resolve_interpolations(expression, "k", _ENVIRON)
    assert str(raised.value) == message


@pytest.mark.parametrize(("expression", "resolved"), [
    ("${ a.b }", 3), ("${a.b}x", "3x"), ("x${a.b}y${a.b}", "x3y3"),  # OmegaConf 2.4.0's values
])
def test_references_with_spaces_or_text_around_them_resolve_as_omegaconf_resolves_them(
        expression: str, resolved: object) -> None:
    assert ConfigValues({"a": {"b": 3}, "k": expression}, {}).get(("k",)) == resolved


def test_references_joined_into_text_stop_at_a_megabyte():
    # Each key joins the next twice: 40 keys would make a text of 2**41 characters (OmegaConf would try); a value of
    # more than a megabyte is refused, in one line, as soon as one is made.
    config = {f"k{index}": f"${{k{index + 1}}}${{k{index + 1}}}" for index in range(40)} | {"k40": "ab"}
    with pytest.raises(ConfigError) as raised:
        ConfigValues(config, {}).get(("k0",))
    assert str(raised.value).endswith(": its interpolations make a text of 2097152 characters, more than the 1048576 "
                                      "a value of a config may have")
    config["k40"] = "a"  # 2**40 characters at k0 without the limit; within it, k20 is a megabyte exactly
    assert ConfigValues(config, {}).get(("k20",)) == "a" * 2**20
    # the limit is the megabyte itself: a character more is refused
    joined = {"k": "${oc.env:A}${oc.env:B}"}
    assert ConfigValues(joined, {"A": "a" * (2**20 - 1), "B": "b"}).get(("k",)) == "a" * (2**20 - 1) + "b"
    with pytest.raises(ConfigError) as raised:
        ConfigValues(joined, {"A": "a" * 2**20, "B": "b"}).get(("k",))
    assert str(raised.value) == ("k: its interpolations make a text of 1048577 characters, more than the 1048576 a "
                                 "value of a config may have")


def test_an_index_past_a_lists_end_reads_nothing():
    values = ConfigValues({"a": [1, 2]}, {})
    assert [values.get(("a", index)) for index in (0, 1, 2, 3, -1)] == [1, 2, None, None, None]


def test_a_missing_value_read_is_refused_as_omegaconf_refuses_it():
    # OmegaConf 2.4.0: reading model.model_path of '???' raises MissingMandatoryValue; a section of '???' on the way
    # too. A value missing that nothing reads stays unread.
    config = {"model": {"model_path": "???", "max_model_len": 4096}, "cluster": "???", "unread": "???"}
    values = ConfigValues(config, {}, "c.yaml")
    for path, where in ((("model", "model_path"), "model.model_path"), (("cluster", "node_num"), "cluster")):
        with pytest.raises(ConfigError) as raised:
            values.get(path)
        assert str(raised.value) == f"c.yaml: {where} is ???, a value missing (OmegaConf refuses to read it): give it"
    assert values.get(("model", "max_model_len")) == 4096


def test_text_under_a_mapping_oc_decode_gives_stays_text_as_omegaconf_gives_it():
    # OmegaConf 2.4.0 gives oc.decode's mapping as a dict: the ${ that an escape kept in its text is not resolved,
    # read as the mapping or as a key under it.
    values = ConfigValues({"k": _DECODED}, {**_ENVIRON, "V": "{a: '\\${oc.env:SET}', b: 1}"})
    assert values.get(("k", "a")) == "${oc.env:SET}"
    assert values.get(("k",)) == {"a": "${oc.env:SET}", "b": 1}
