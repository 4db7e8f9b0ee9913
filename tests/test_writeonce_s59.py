"""Tests for session 59's writeonce: ``solve --from-config FILE --write OUT`` (and ``--check``, and the API's config
functions) parses the config's text once per parser within a call: once as Trinity reads it (PyYAML, whose read
every step shares: `solver.tables.parsing_once`), and once as ruamel's round trip writes it, with a second round trip
only for a config whose aliases repeat an anchor (`anchored_keys` reads the anchors the patch changes). Nothing is
kept past the call. Counted by the parsers' own entry points: PyYAML's reader, ruamel's load and parse."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import ruamel.yaml.main
import yaml.reader

import solver
from solver.cli import main
from solver.trinity import anchored_keys, patch, patched_config_problems, patched_trinity_config

ROOT = Path(__file__).resolve().parents[1]
CONFIG = (ROOT / "docs" / "examples" / "trinity.yaml").read_text()
"""The docs' example config (Qwen3-8B at 32768 tokens, 6 trainer GPUs of 8), which has no anchor."""
ANCHORED = CONFIG.replace("max_model_len: 32768  # prompt + response", "max_model_len: &len 32768").replace(
    "    tensor_parallel_size: 1\n", "    tensor_parallel_size: 1\n    max_model_len: *len\n").replace(
    "max_response_tokens: 30720", "max_response_tokens: 14336")
"""The example with its length an anchor, which the rollout's repeats (and a response that 16384 tokens hold)."""


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Each parse from here on: (the parser, the text it parsed)."""
    seen: list[tuple[str, str]] = []
    reader_init, load, parse = yaml.reader.Reader.__init__, ruamel.yaml.main.YAML.load, ruamel.yaml.main.YAML.parse

    def pyyaml_reader(self: yaml.reader.Reader, stream: object) -> None:
        seen.append(("pyyaml", stream if isinstance(stream, str) else ""))
        reader_init(self, stream)

    def ruamel_load(self: ruamel.yaml.main.YAML, stream: object) -> object:
        seen.append(("ruamel", stream if isinstance(stream, str) else ""))
        return load(self, stream)

    def ruamel_parse(self: ruamel.yaml.main.YAML, stream: object) -> object:
        seen.append(("ruamel events", stream if isinstance(stream, str) else ""))
        return parse(self, stream)

    monkeypatch.setattr(yaml.reader.Reader, "__init__", pyyaml_reader)
    monkeypatch.setattr(ruamel.yaml.main.YAML, "load", ruamel_load)
    monkeypatch.setattr(ruamel.yaml.main.YAML, "parse", ruamel_parse)
    return seen


def _of(parsed: list[tuple[str, str]], text: str) -> list[str]:
    """The parsers that parsed `text`, in order."""
    return [parser for parser, parsed_text in parsed if parsed_text == text]


def test_write_parses_the_config_once_per_parser(tmp_path, parsed, capsys):
    config, out = tmp_path / "trinity.yaml", tmp_path / "out.yaml"
    config.write_text(CONFIG)
    assert main(["--from-config", str(config), "--gpu", "h20", "--write", str(out)]) == 0
    assert _of(parsed, CONFIG) == ["pyyaml", "ruamel"]
    written = out.read_text()
    assert _of(parsed, written) == ["pyyaml"]  # the patched text, read once for its checks and notes
    assert "  max_model_len: 32768  # prompt + response\n" in written
    assert "  ulysses_sequence_parallel_size: 2\n" in written
    assert f"wrote {out}" in capsys.readouterr().out


def test_write_of_an_anchored_config_reads_its_anchors_once_more(tmp_path, parsed, capsys):
    config, out = tmp_path / "trinity.yaml", tmp_path / "out.yaml"
    config.write_text(ANCHORED)
    assert main(["--from-config", str(config), "--gpu", "h20", "--len", "16384", "--write", str(out)]) == 0
    # the patch's round trip, then the anchors'; then, for the apply block's words on aliases (applyalias, s83: only
    # where the config has them), config_key_changes' patch and its places' round trip
    assert _of(parsed, ANCHORED) == ["pyyaml", "ruamel", "ruamel", "ruamel", "ruamel"]
    # The rollout's length, the model's through the alias, is set with it: the anchor stays, and no warning.
    assert "is the anchor" not in capsys.readouterr().err
    assert "  max_model_len: &len 16384\n" in out.read_text() and "    max_model_len: *len\n" in out.read_text()


def test_check_parses_the_config_once(tmp_path, parsed, capsys):
    config = tmp_path / "trinity.yaml"
    config.write_text(CONFIG)
    assert main(["--from-config", str(config), "--gpu", "h20", "--check"]) == 1  # vanilla runs out of memory
    assert _of(parsed, CONFIG) == ["pyyaml"]
    assert "trinity.yaml runs vanilla on 6 trainer GPUs at 32768 tokens" in capsys.readouterr().out


def test_api_calls_parse_once_each_and_keep_nothing_after(parsed):
    (answer,) = solver.plan("8B", gpu="h20", budget_gpus=6, exact=True, max_model_len=32768)
    assert answer.best is not None
    model = solver.load_catalog().model("8B")
    parsed.clear()
    patched = patched_trinity_config(CONFIG, answer.best, model)
    assert _of(parsed, CONFIG) == ["ruamel", "pyyaml"]
    assert patched_trinity_config(CONFIG, answer.best, model) == patched  # parsed again: nothing kept between calls
    assert _of(parsed, CONFIG) == ["ruamel", "pyyaml"] * 2
    parsed.clear()
    assert patched_config_problems(CONFIG, patched, answer.best, model) == []
    assert _of(parsed, CONFIG) == ["pyyaml"]  # no anchor that aliases repeat: no round trip for anchors
    assert _of(parsed, patched.text) == ["pyyaml"]
    parsed.clear()
    assert anchored_keys(ANCHORED, answer.best, model) == []  # the plan keeps the length: no key changes on it
    assert _of(parsed, ANCHORED) == ["pyyaml", "ruamel"]


def test_anchored_keys_refuses_a_config_in_the_words_the_patch_does():
    # Both read it as Trinity does and with ruamel's round trip; where both refuse it, the round trip's words, as the
    # patch's, come first (Trinity's read names a key given twice otherwise).
    (answer,) = solver.plan("8B", gpu="h20", budget_gpus=6, exact=True, max_model_len=32768)
    assert answer.best is not None
    model = solver.load_catalog().model("8B")
    refusals = []
    for call in (anchored_keys, patched_trinity_config):
        with pytest.raises(solver.ConfigError) as caught:
            call("a: 1\na: 2\n", answer.best, model)
        refusals.append(str(caught.value))
    duplicate = 'config: line 2: malformed YAML: found duplicate key "a" with value "2" (original value: "1")'
    assert refusals == [duplicate, duplicate]


def test_write_keeps_a_yaml_directive_ruamel_reads_otherwise(tmp_path, capsys):
    # PyYAML, as Trinity, reads a %YAML 1.3 document, and the report planned it; ruamel's round trip asserted on it
    # (--write refused it): it reads it as %YAML 1.2, and the file written keeps the config's own directive.
    config, out = tmp_path / "trinity.yaml", tmp_path / "out.yaml"
    config.write_text(f"%YAML 1.3\n---\n{CONFIG}")
    assert main(["--from-config", str(config), "--gpu", "h20", "--write", str(out)]) == 0
    assert capsys.readouterr().err == ""
    written = out.read_text()
    assert written.startswith(f"%YAML 1.3\n---\n{CONFIG.splitlines()[0]}\n")
    assert "\n  ulysses_sequence_parallel_size: 2\n" in written


class _CountedLock:
    """A lock that counts the times it is taken."""

    def __init__(self) -> None:
        self.lock, self.taken = threading.Lock(), 0

    def __enter__(self) -> None:
        self.lock.acquire()
        self.taken += 1

    def __exit__(self, *_: object) -> None:
        self.lock.release()


def test_a_patch_takes_the_unpatched_dumps_lock_once_and_dumps_a_text_patched_before_no_more(monkeypatch):
    # smalls93: `_unpatched_dump` took its lock twice, to look the dump up and to keep it
    (answer,) = solver.plan("8B", gpu="h20", budget_gpus=6, exact=True, max_model_len=32768)
    assert answer.best is not None
    model, lock = solver.load_catalog().model("8B"), _CountedLock()
    monkeypatch.setattr(patch, "_UNPATCHED_DUMPS_LOCK", lock)
    monkeypatch.setattr(patch, "_UNPATCHED_DUMPS", {})
    dumps = []
    dumped = patch._dumped
    monkeypatch.setattr(patch, "_dumped", lambda *given: dumps.append(given[2]) or dumped(*given))
    first = patched_trinity_config(CONFIG, answer.best, model)
    assert (lock.taken, len(dumps), list(patch._UNPATCHED_DUMPS)) == (1, 2, [CONFIG])  # the unpatched, the patched
    assert patched_trinity_config(CONFIG, answer.best, model) == first
    assert (lock.taken, len(dumps)) == (2, 3)  # the unpatched dump kept: the patched one alone made again
