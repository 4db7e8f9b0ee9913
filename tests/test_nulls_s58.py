"""Nulls in a Trinity config's typed keys, settled in session 58 (nulls).

rft-solver reads a null (``key: null``, ``key:`` or an interpolation that gives null) as unset. Where Trinity's own
config types the key plainly (``int``, ``bool`` or ``str``, not ``Optional``), every release refuses it as it loads
the config: ``load_config`` merges the file into the typed schema (``OmegaConf.merge``, ``trinity/common/config.py:983``
in 0.5.2, ``:1058`` in 0.6.0), and OmegaConf 2.3.0 refuses None there ("Incompatible value 'None' for field of type
'int'", checked with ``OmegaConf.merge`` of a structured schema and the YAML). The ``Optional`` ones stay unset."""

from __future__ import annotations

from pathlib import Path

import pytest
from config_cases import ARR, BASE, config_lines, with_key, written

WORDS = {"int": "a whole number", "bool": "true or false", "str": "text"}


def _refused(key: str, field_type: str) -> list[tuple[str, str]]:
    """The line on `key`, a field of `field_type`, written null."""
    kind = WORDS[field_type]
    return [("typed-null-refused", (
        f"{key} is null, not {kind}: Trinity's typed config (OmegaConf's {field_type} field) refuses it, with every "
        f"Trinity release and verl version: remove the key for Trinity's default, or write {kind}"))]


@pytest.mark.parametrize(("key", "field_type"), [
    # Trinity's own config: plain int, bool and str fields (solver.trinity.keys.NOT_OPTIONAL_KEYS).
    ("cluster.gpu_per_node", "int"),
    ("cluster.node_num", "int"),
    ("trainer.ulysses_sequence_parallel_size", "int"),
    ("buffer.train_batch_size", "int"),
    ("buffer.batch_size", "int"),
    ("algorithm.repeat_times", "int"),
    ("explorer.rollout_model.engine_num", "int"),
    ("explorer.rollout_model.tensor_parallel_size", "int"),
    ("explorer.rollout_model.data_parallel_size", "int"),
    ("explorer.rollout_model.pipeline_parallel_size", "int"),
    ("model.tinker.enable", "bool"),
    ("model.external_model.enable", "bool"),
    ("trainer.use_dynamic_bsz", "bool"),
    ("trainer.use_remove_padding", "bool"),
    ("trainer.param_offload", "bool"),
    ("trainer.optimizer_offload", "bool"),
    ("trainer.offload_policy", "bool"),
    ("mode", "str"),
    ("algorithm.algorithm_type", "str"),
    ("model.critic_model_path", "str"),
    ("explorer.rollout_model.engine_type", "str"),
    ("trainer.trainer_type", "str"),
    ("trainer.trainer_strategy", "str"),
    # Optional fields: null is unset, as Trinity takes it.
    ("model.max_model_len", None),
    ("model.max_prompt_tokens", None),
    ("model.max_response_tokens", None),
    ("trainer.max_token_len_per_gpu", None),
    ("algorithm.entropy_loss_fn", None),
    (f"{ARR}.actor.ppo_max_token_len_per_gpu", None),
    (f"{ARR}.actor.ulysses_sequence_parallel_size", None),
    (f"{ARR}.actor.use_dynamic_bsz", None),
    (f"{ARR}.ref.log_prob_max_token_len_per_gpu", None),
    (f"{ARR}.ref.ulysses_sequence_parallel_size", None),
    (f"{ARR}.ref.log_prob_use_dynamic_bsz", None),
    (f"{ARR}.rollout.log_prob_max_token_len_per_gpu", None),
    ("trainer.trainer_config.critic.ppo_max_token_len_per_gpu", None),
    ("trainer.trainer_config.critic.ulysses_sequence_parallel_size", None),
])
def test_a_null_is_refused_where_trinity_types_the_key_as_no_optional(cli, tmp_path: Path, key: str,
                                                                      field_type: str | None):
    lines, refused, check = config_lines(cli, written(tmp_path, with_key(key, None)), f"{key} is null")
    expected = _refused(key, field_type) if field_type else []
    assert (lines, refused, check) == (expected, bool(expected), int(bool(expected)))


@pytest.mark.parametrize("spelled", ["", "~", "Null", "${oc.env:S58_NULLS,null}"])
def test_a_null_written_otherwise_or_an_interpolation_giving_it_is_refused(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelled: str):
    monkeypatch.delenv("S58_NULLS", raising=False)
    key = "trainer.ulysses_sequence_parallel_size"
    config = written(tmp_path, with_key(key, "WRITTEN"))
    config.write_text(config.read_text(encoding="utf-8").replace("WRITTEN", spelled), encoding="utf-8")
    assert config_lines(cli, config, f"{key} is null") == (_refused(key, "int"), True, 1)


@pytest.mark.parametrize("flags", [(), ("--trinity-version", "0.5"), ("--trinity-version", "0.6")])
def test_a_null_is_refused_with_every_release(cli, tmp_path: Path, flags: tuple[str, ...]):
    key = "cluster.gpu_per_node"
    config = written(tmp_path, with_key(key, None))
    assert config_lines(cli, config, f"{key} is null", *flags) == (_refused(key, "int"), True, 1)


def test_a_key_given_a_value_or_left_out_has_no_null_line(cli, tmp_path: Path):
    lines, refused, check = config_lines(cli, written(tmp_path, BASE), "")
    assert "typed-null-refused" not in [code for code, _ in lines] and (refused, check) == (False, 0)
