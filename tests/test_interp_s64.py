"""Interpolations that resolve to nothing, and values of a type rft-solver cannot read, in the keys it reads for its
notes (session 64): `--check` says each, one line, where it said nothing before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.query import ConfigProblemCode
from solver.tables import load_catalog
from solver.trinity import ConfigError, read_trinity_config, trinity_config_problems
from solver.trinity.interpolation import ConfigValues, ResolvesToNothing
from solver.trinity.reader import load_config_mapping

EXAMPLE = Path(__file__).parents[1] / "docs" / "examples" / "trinity.yaml"
C = ConfigProblemCode

NOTES_ONLY_KEYS = [
    ("model", "critic_model_path"),
    ("model", "lora_configs"),
    ("trainer", "save_hf_checkpoint"),
    ("trainer", "trainer_config", "critic", "ppo_max_token_len_per_gpu"),
    ("trainer", "trainer_config", "critic", "forward_max_token_len_per_gpu"),
    ("trainer", "trainer_config", "critic", "ulysses_sequence_parallel_size"),
    ("trainer", "trainer_config", "critic", "model", "fsdp_config", "param_offload"),
    ("trainer", "trainer_config", "critic", "model", "fsdp_config", "offload_policy"),
    ("trainer", "trainer_config", "actor_rollout_ref", "model", "lora_rank"),
    ("trainer", "trainer_config", "actor_rollout_ref", "model", "lora_adapter_path"),
    ("trainer", "trainer_config", "actor_rollout_ref", "actor", "ulysses_sequence_parallel_size"),
    ("trainer", "trainer_config", "actor_rollout_ref", "actor", "entropy_checkpointing"),
    ("trainer", "trainer_config", "actor_rollout_ref", "ref", "ulysses_sequence_parallel_size"),
    ("trainer", "trainer_config", "actor_rollout_ref", "actor", "fsdp_config", "param_offload"),
    ("trainer", "trainer_config", "actor_rollout_ref", "ref", "fsdp_config", "optimizer_offload"),
]
"""Keys rft-solver reads only for its notes (read_or_none), where an interpolation to a missing key said nothing."""


def _nested(path: tuple[str, ...], value: object) -> dict[str, object]:
    """A config with `value` at `path`, beside a model section (which a reference may read)."""
    config: dict[str, object] = {"model": {"model_path": "Qwen/Qwen3-8B"}}
    section = config
    for key in path[:-1]:
        section = section.setdefault(key, {})  # type: ignore[assignment]
    section[path[-1]] = value
    return config


def _problems(mapping: dict[str, object], environ: dict[str, str] | None = None) -> list[tuple[str, str]]:
    model = load_catalog().model("8B")
    return [(problem.code.value, problem.words)
            for problem in trinity_config_problems(mapping, model, 8, environ=environ)]


@pytest.mark.parametrize("path", NOTES_ONLY_KEYS, ids=".".join)
def test_a_reference_to_a_missing_key_in_a_key_read_for_notes_is_refused_in_one_line(path: tuple[str, ...]):
    problems = _problems(_nested(path, "${model.no_such_key}"))
    assert problems == [("unresolved-value-refused", (
        f"{'.'.join(path)}: cannot resolve '${{model.no_such_key}}': the config has no model.no_such_key; every "
        "Trinity release refuses the config as it loads it (OmegaConf resolves each value then)"))]


@pytest.mark.parametrize(("value", "words"), [
    ("${oc.env:RANK_X}", "environment variable RANK_X is not set and '${oc.env:RANK_X}' has no default"),
    ("${foo:bar}", "cannot resolve '${foo:bar}' (only references to keys"),
    ("${oc.select:model.nope,8}", "cannot resolve '${oc.select:model.nope,8}' (only references to keys"),
    # the key's name comes from the environment: the run's may name one the config has
    ("${model.${oc.env:WHICH,nope}}", "cannot resolve '${model.${oc.env:WHICH,nope}}': the config has no model.nope"),
])
def test_an_environment_variable_or_an_unknown_resolver_is_not_judged(value: str, words: str):
    path = ("trainer", "trainer_config", "actor_rollout_ref", "model", "lora_rank")
    ((code, said),) = _problems(_nested(path, value))
    assert code == "unresolved-value"
    assert said.startswith(f"cannot check {'.'.join(path)}: {words}")


def test_a_reference_through_a_key_that_reads_the_environment_is_not_judged():
    mapping = {"model": {"which": "${oc.env:WHICH,nope}", "lora_configs": [{"lora_rank": "${model.${model.which}}"}]}}
    # s80: the LoRA config's rank is read first now, as its check reads it resolved (before: its text)
    ((code, words), (own, own_words)) = _problems(mapping)
    assert code == "unresolved-value" and "the config has no model.nope" in words
    assert own == "no-such-key-refused" and own_words.startswith("model.which: no release of Trinity")  # the test's key


def test_resolves_to_nothing_is_raised_only_where_no_environment_variable_is_read():
    # OmegaConf resolves a resolver's arguments first: a default that refers to a missing key fails, the variable set
    values = ConfigValues({"a": "${b.c}", "b": {"d": 1}, "e": "${b.${oc.env:K,c}}", "f": "???", "g": "${f}",
                           "h": "${h}", "i": "${oc.env:X,${b.c}}", "j": "${b.d.e}"}, {"X": "1"})
    for key, words, lacking in (("a", "the config has no b.c", ("b", "c")), ("h", "a cycle of interpolations", None),
                                ("i", "the config has no b.c", ("b", "c")), ("j", "b.d is 1, not a mapping", None)):
        with pytest.raises(ResolvesToNothing, match=words) as refused:
            values.get((key,))
        assert refused.value.lacking == lacking
    # an environment variable read on the way; ??? in a typed field keeps Trinity's default as it merges the config
    for key, words in (("e", "the config has no b.c"), ("f", "a value missing"), ("g", r"f is \?\?\?")):
        with pytest.raises(ConfigError, match=words) as raised:
            values.get((key,))
        assert not isinstance(raised.value, ResolvesToNothing)  # a ??? raises MissingValue, a ConfigError too


@pytest.mark.parametrize(("value", "code"), [
    ("???", "unresolved-value"),  # OmegaConf's merge keeps the typed field's default
    ("${model.max_prompt_tokens}", "unresolved-value"),  # unset: Trinity's typed ModelConfig gives its default
    ("${model.tinker.enable}", "unresolved-value"),
    ("${model.max_prompt_tokenz}", "unresolved-value-refused"),
    # nothing is filled under trainer_config, typed Any
    ("${trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu}", "unresolved-value-refused"),
])
def test_a_key_trinity_gives_a_default_is_not_judged(value: str, code: str):
    mapping = {"model": {"model_path": "Qwen/Qwen3-8B", "critic_model_path": value},
               "trainer": {"trainer_config": {"actor_rollout_ref": {"actor": {}}}}}
    ((said, words),) = _problems(mapping)
    assert said == code and words.startswith(("cannot check model.critic_model_path", "model.critic_model_path: "))


def test_a_reference_the_checks_read_already_is_said_once_and_refused():
    problems = _problems({"model": {"max_prompt_tokens": "${model.nope}", "max_response_tokens": 1024,
                                    "max_model_len": 4096}})
    assert [code for code, _ in problems] == ["unresolved-value-refused"]


BOOL_06 = ("Trinity 0.5 refuses the config, and 0.6 on verl before 0.8 keeps it as written, which its trainer's typed "
           "config (OmegaConf's bool field) refuses as the trainer starts")
"""What the releases do with a flag under trainer.trainer_config that OmegaConf's bool field refuses, before verl 0.8
(checks90: said for every flag, `non_boolean_flag_words`)."""
INT_06 = ("Trinity 0.5 refuses the config, and 0.6 on verl before 0.8 keeps it as written, which its trainer's typed "
          "config (OmegaConf's int field) refuses as the trainer starts; the notes that read it are not judged")


@pytest.mark.parametrize(("path", "value", "code", "words"), [
    # a count Trinity 0.5's veRLConfig types int, which 0.6 on verl before 0.8 types as its trainer starts (s67)
    (("trainer", "trainer_config", "critic", "ulysses_sequence_parallel_size"), "eight", C.NOT_A_NUMBER,
     f"trainer.trainer_config.critic.ulysses_sequence_parallel_size must be a whole number, got 'eight': {INT_06}"),
    (("trainer", "trainer_config", "critic", "ppo_max_token_len_per_gpu"), [8], C.NOT_A_NUMBER,
     f"trainer.trainer_config.critic.ppo_max_token_len_per_gpu must be a whole number, got [8]: {INT_06}"),
    (("trainer", "trainer_config", "actor_rollout_ref", "ref", "ulysses_sequence_parallel_size"), [8], C.NOT_A_NUMBER,
     ("trainer.trainer_config.actor_rollout_ref.ref.ulysses_sequence_parallel_size must be a whole number, got [8]: "
      f"{INT_06}")),
    (("trainer", "trainer_config", "critic", "model", "fsdp_config", "offload_policy"), "maybe", C.WRONG_TYPE,
     ("trainer.trainer_config.critic.model.fsdp_config.offload_policy must be true or false, got 'maybe': "
      f"{BOOL_06}, and on verl 0.8 or later ignores it; the notes that read it are not judged")),
    (("trainer", "trainer_config", "actor_rollout_ref", "actor", "entropy_checkpointing"), [8], C.WRONG_TYPE,
     ("trainer.trainer_config.actor_rollout_ref.actor.entropy_checkpointing must be true or false, got [8]: "
      f"{BOOL_06}, and on verl 0.8 or later hands it to verl as written, which reads it as true (Python's truth of "
      "it); the notes that read it are not judged")),
    # Trinity's typed config (OmegaConf 2.3.0's str field) refuses a list or a mapping where it types text (s66)
    (("model", "critic_model_path"), [8], C.WRONG_TYPE_REFUSED,
     ("model.critic_model_path must be text, got [8]: every Trinity release refuses the config as it loads it (its "
      "typed config's str field)")),
    (("trainer", "save_hf_checkpoint"), {"a": 1}, C.WRONG_TYPE_REFUSED,
     ("trainer.save_hf_checkpoint must be text, got {'a': 1}: every Trinity release refuses the config as it loads it "
      "(its typed config's str field)")),
])
def test_a_value_of_a_type_rft_solver_cannot_read_is_said_in_one_line(
        path: tuple[str, ...], value: object, code: ConfigProblemCode, words: str):
    assert _problems(_nested(path, value)) == [(code.value, words)]


@pytest.mark.parametrize(("path", "value"), [
    *((("model", "critic_model_path"), value) for value in ("/models/critic", "8", 8, True, None)),
    # OmegaConf's bool field takes a whole number (8: true), and its words in any case
    *((("trainer", "trainer_config", "critic", "model", "fsdp_config", "param_offload"), value)
      for value in ("8", 8, "True", "off", False, None)),
    # the text '2' there is number-as-text (Trinity 0.6 on verl before 0.8 multiplies it as it loads): fragcheck5_s81
    *((("trainer", "trainer_config", "critic", "ulysses_sequence_parallel_size"), value) for value in (2, None)),
])
def test_values_of_the_types_read_say_nothing(path: tuple[str, ...], value: object):
    # nothing of its type; a critic's own SP 2 beside the trainer's 1 is said to differ (s83's criticsp), no more
    differs = [("role-sp-differs",)] if path[-1] == "ulysses_sequence_parallel_size" and value == 2 else []
    assert [problem[:1] for problem in _problems(_nested(path, value))] == differs


def _with_lora_rank(rank: str) -> str:
    text = EXAMPLE.read_text(encoding="utf-8")
    return text.replace("model:\n  model_path:", ("model:\n  lora_configs:\n    - path: /adapters/a\n"
                                                  f"      lora_rank: {rank}\n  model_path:"), 1)


def test_check_refuses_a_lora_rank_that_refers_to_a_missing_key(cli, tmp_path: Path):
    config = tmp_path / "c.yaml"
    config.write_text(_with_lora_rank("${model.no_such_key}"), encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h200", "--check", "--json")
    assert status == 1 and "Traceback" not in err
    current = json.loads(out)[0]["current"]
    assert current["refused"] is True
    # The one LoRA config turns LoRA on whatever its rank: LoRA's line (test_lorafull_s67) follows.
    assert current["config_problem_codes"] == ["unresolved-value-refused", "lora-counted-as-full"]
    assert current["config_problems"][0].startswith(
        "model.lora_configs[0].lora_rank: cannot resolve '${model.no_such_key}': the config has no model.no_such_key")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h200", "--check")
    assert status == 1 and sum(line.startswith("  refused: model.lora_configs[0].lora_rank: cannot resolve")
                               for line in out.splitlines()) == 1


def test_check_refuses_an_unset_environment_variable_in_a_lora_rank(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # s80: refused in one line, exit 2 (before: a "but: cannot check" line, status 0), as the rank decides the LoRA
    # counted (whether Trinity 0.6 on verl 0.8 loads the adapter at all; a new adapter's states), as an SP's would
    monkeypatch.delenv("RANK_X", raising=False)
    config = tmp_path / "c.yaml"
    config.write_text(_with_lora_rank("${oc.env:RANK_X}"), encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h200", "--check")
    assert (status, out) == (2, "") and "Traceback" not in err
    assert err.startswith(f"solve: error: --from-config {config}: model.lora_configs[0].lora_rank: environment "
                          "variable RANK_X is not set and '${oc.env:RANK_X}' has no default, and it decides the LoRA "
                          "adapter the verdict and the plans count")
    monkeypatch.setenv("RANK_X", "8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h200", "--check")
    assert status == 0 and "RANK_X" not in out


def test_write_takes_a_config_whose_lora_rank_refers_to_a_missing_key_and_warns(cli, tmp_path: Path):
    config, written = tmp_path / "c.yaml", tmp_path / "out.yaml"
    config.write_text(_with_lora_rank("${model.no_such_key}"), encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h200", "--write", str(written))
    assert status == 0 and written.exists()
    assert "model.lora_configs[0].lora_rank: cannot resolve '${model.no_such_key}'" in err


def test_the_example_config_has_no_problem():
    mapping = load_config_mapping(EXAMPLE.read_text(encoding="utf-8"), "trinity.yaml")
    assert _problems(dict(mapping)) == []


@pytest.mark.parametrize("entry", ["8", "abc", "[8]"])
def test_a_lora_config_that_is_no_mapping_is_refused(entry: str):
    text = EXAMPLE.read_text(encoding="utf-8").replace("model:\n  model_path:", (
        f"model:\n  lora_configs: [{entry}]\n  model_path:"), 1)
    config = read_trinity_config(text, "c.yaml", {})
    assert [code for code in config.note_codes if code.startswith("lora-configs")] == ["lora-configs-refused"]
    (words,) = [note for note in config.notes if note.startswith("model.lora_configs")]
    assert words.startswith("model.lora_configs holds ") and "not a LoRA config (a mapping)" in words
