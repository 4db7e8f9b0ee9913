"""Trinity config findings settled against the released wheels (session 57, trinity3).

A flag's text is a boolean only as OmegaConf 2.3.0's ``BooleanNode`` reads it (``omegaconf/nodes.py:394`` to
``:414``): a whole number through ``int()`` (spaces around it, a sign, ``_`` between digits), else one of its words in
any case, with no spaces around the word; floats and other text are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import PADDED_051, config_lines

from solver.trinity.keys import ConfigError
from solver.trinity.reader import ConfigReader, omegaconf_boolean, turned_off

FLAG_CONFIG = ("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 16384\nalgorithm: {{algorithm_type: grpo}}\n"
               "cluster: {{node_num: 1, gpu_per_node: 8}}\nbuffer: {{train_batch_size: 64}}\n"
               "explorer: {{rollout_model: {{engine_num: 4}}}}\n"
               "trainer:\n  ulysses_sequence_parallel_size: 2\n  use_dynamic_bsz: {flag}\n")
"""Qwen3-8B at 16384 tokens, SP 2 on 4 trainer GPUs of 8, with `flag` as ``trainer.use_dynamic_bsz``."""

ACCEPTED = [
    (True, True), (False, False), (0, False), (1, True), (-3, True),
    ("yes", True), ("YES", True), ("Yes", True), ("y", True), ("on", True), ("tRuE", True),
    ("no", False), ("N", False), ("OFF", False), ("False", False),
    ("1", True), ("0", False), (" 1 ", True), ("+0", False), ("-3", True), ("1_0", True), ("\u0661", True),
]
"""Values OmegaConf's bool field takes, and the boolean it makes of each (checked against omegaconf 2.3.0)."""
REFUSED = [" yes", "yes ", "\tno", "maybe", "", " ", "1.0", "1e3", "0x1", "1__0", "_1", "null", 1.5, 0.0, 1.0, [], {}]
"""Values OmegaConf's bool field refuses (a ``ValidationError``, checked against omegaconf 2.3.0)."""


@pytest.mark.parametrize(("value", "read"), ACCEPTED)
def test_omegaconf_boolean_takes_what_booleannode_takes(value: object, read: bool):
    assert omegaconf_boolean(value) is read
    assert turned_off(value) is (not read)
    assert ConfigReader({"flag": value}, "c.yaml", {}).boolean(("flag",), value) is read


@pytest.mark.parametrize("value", REFUSED)
def test_omegaconf_boolean_refuses_what_booleannode_refuses(value: object):
    assert omegaconf_boolean(value) is None
    assert turned_off(value) is False
    with pytest.raises(ConfigError, match="must be true or false, got"):
        ConfigReader({"flag": value}, "c.yaml", {}).boolean(("flag",), value)


def _flag_lines(cli, tmp_path: Path, flag: str) -> tuple[list[tuple[str, str]], bool, int]:
    """The (code, words) of `--from-config --trinity-version 0.5`'s flag lines on H100 with `flag` (YAML) as the
    trainer's dynamic batch flag, whether the config is refused, and the exit status of the same with `--check`."""
    config = tmp_path / "trinity.yaml"
    config.write_text(FLAG_CONFIG.format(flag=flag), encoding="utf-8")
    flags = ("--from-config", str(config), "--gpu", "h100", "--trinity-version", "0.5")
    status, out, _ = cli(*flags, "--json")
    assert status == 0
    current = json.loads(out)[0]["current"]
    lines = [(code, words) for code, words in zip(current["config_problem_codes"], current["config_problems"],
                                                  strict=True) if code.startswith(("flag-", "dynamic-"))]
    return lines, current["refused"], cli(*flags, "--check")[0]


@pytest.mark.parametrize(("flag", "shown"), [("' yes'", "' yes'"), ("'yes '", "'yes '"), ("' no'", "' no'"),
                                             ("1.5", "1.5"), ("'maybe'", "'maybe'")])
def test_a_flag_with_spaces_around_its_word_is_refused_as_omegaconf_does(cli, tmp_path: Path, flag: str,
                                                                         shown: str):
    lines, refused, check = _flag_lines(cli, tmp_path, flag)
    assert lines == [("flag-not-boolean-refused",
                      f"trainer.use_dynamic_bsz must be true or false, got {shown}: Trinity refuses the config")]
    assert (refused, check) == (True, 1)


@pytest.mark.parametrize(("flag", "codes"), [
    ("' 1 '", []), ("'1_0'", []), ("'YES'", []), ("'+0'", ["dynamic-batch-off"]), ("'n'", ["dynamic-batch-off"]),
])
def test_a_flag_omegaconf_takes_is_read_as_it_reads_it(cli, tmp_path: Path, flag: str, codes: list[str]):
    lines, refused, check = _flag_lines(cli, tmp_path, flag)
    assert [code for code, _ in lines] == codes
    assert all(words.startswith("trainer.use_dynamic_bsz is false: verl then ignores") for _, words in lines)
    assert (refused, check) == (False, 0)


SECTION_CONFIG = ("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 16384\nalgorithm: {algorithm_type: grpo}\n"
                  "cluster: {node_num: 1, gpu_per_node: 8}\nbuffer: {train_batch_size: 64}\n"
                  "explorer: {rollout_model: {engine_num: 4}}\n"
                  "trainer:\n  ulysses_sequence_parallel_size: 2\n  trainer_config:\n    actor_rollout_ref:\n")
"""Qwen3-8B at 16384 tokens, SP 2 on 4 trainer GPUs of 8 (a plan that trains as written), ending in an open
``actor_rollout_ref`` under ``trainer_config``."""
REF_MODEL = "trainer.trainer_config.actor_rollout_ref.ref.model"


DROPS = ("drops the key, so the ref loads model.model_path (on verl 0.8 or later a ref worker fails on it as it "
         "starts: verl's ref config has no model field); remove it")


@pytest.mark.parametrize("ref", ["      ref: {model: {path: /models/other}}\n", "      ref: {model: null}\n",
                                 "      ref: {log_prob_use_dynamic_bsz: true, model: {}}\n"])
@pytest.mark.parametrize(("flags", "code", "words", "refused"), [
    (("--trinity-version", "0.5"), "ref-model-refused",
     "Trinity 0.5 refuses the config (its ref has no model key: the ref loads model.model_path); remove it", True),
    ((), "ref-model", "Trinity 0.5 refuses the config, and 0.6 on verl before 0.8 " + DROPS, False),
    (("--trinity-version", "0.6"), "ref-model", "Trinity 0.6 on verl before 0.8 " + DROPS, False),
])
def test_a_ref_model_is_refused_by_trinity_05_and_dropped_by_06(cli, tmp_path: Path, ref: str, flags: tuple[str, ...],
                                                                code: str, words: str, refused: bool):
    lines, is_refused, check = config_lines(cli, tmp_path, SECTION_CONFIG + ref, flags, "ref-model")
    assert lines == [(code, f"{REF_MODEL}: {words}")]
    assert (is_refused, check) == (refused, int(refused))


def test_a_ref_without_a_model_gives_no_ref_model_line(cli, tmp_path: Path):
    ref = "      ref: {log_prob_use_dynamic_bsz: true}\n"
    flags = ("--trinity-version", "0.5")
    lines, refused, check = config_lines(cli, tmp_path, SECTION_CONFIG + ref, flags, "ref-model")
    assert (lines, refused, check) == ([], False, 0)


BUDGET_CONFIG = ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}\nalgorithm: {algorithm_type: grpo}\n"
                 "cluster: {node_num: 1, gpu_per_node: 8}\nbuffer: {train_batch_size: 64}\n"
                 "explorer: {rollout_model: {engine_num: 4}}\n"
                 "trainer: {ulysses_sequence_parallel_size: 2, max_token_len_per_gpu: 4096}\n")
"""Qwen3-8B at 16384 tokens, SP 2 on 4 trainer GPUs of 8, a trainer budget of 4096 that holds no sequence."""
RAISED = ("raises it to ceil(16384 / 2) = 8192 (Trinity 0.5.0 to its default, ceil(2 x 16384 / 2) = 16384)")
BELOW = "trainer.max_token_len_per_gpu 4096 x SP 2 is below model.max_model_len 16384: "
STOPS_051 = PADDED_051.format(budget="trainer.max_token_len_per_gpu", least=8192, sp=2, tokens=16384)


@pytest.mark.parametrize(("flags", "effects"), [
    # 0.5.1 raises to the length and checks the padded width (verl 0.7.0), which two sequences may make wider: a line
    # of its own after the raise's (s58: the two in one ran to 580 characters).
    (("--trinity-version", "0.5"), [f"{BELOW}Trinity 0.5 {RAISED}", STOPS_051]),
    ((), [(f"{BELOW}verl 0.8 or later stops at the first sequence longer than that, and Trinity with verl before 0.8 "
           f"{RAISED}"), STOPS_051]),
    # 0.6.0 checks the longest sequence, which the raised budget holds; the words name 0.6's raise, not 0.5.0's (s58).
    (("--trinity-version", "0.6"), [(f"{BELOW}verl 0.8 or later stops at the first sequence longer than that, and "
                                     "Trinity 0.6 on verl before 0.8 raises it to ceil(16384 / 2) = 8192")]),
])
def test_a_raised_budget_says_where_trinity_051_still_stops(cli, tmp_path: Path, flags: tuple[str, ...],
                                                            effects: list[str]):
    lines, refused, check = config_lines(cli, tmp_path, BUDGET_CONFIG, flags, "token-budget-below-length")
    assert lines == [("token-budget-below-length", effect) for effect in effects]
    assert all(len(words) <= 400 for _, words in lines)
    assert (refused, check) == (False, 0)
