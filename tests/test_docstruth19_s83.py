"""Session 83's doc claims checked against the code (helper docstruth19): the messages docs/trinity.md and
docs/api.md quote for a DPO config beside ``--rollout-gpus`` or ``--token-budget`` are what is printed and raised;
the ``key-dropped`` and ``verl-key`` words they quote, a stage's too, are the checks' own; the apply lines' alias
comment and the warning of an alias written out are printed as shown; and ``--write`` writes DPO's pair with its
``solve: note:`` alone, the comment on the key being the fragment's (docs/trinity.md said both wrote it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from test_tokbudget_s72 import ARR, CATALOG, Cli

from solver.api import answer_query, config_query
from solver.query import QueryError
from solver.trinity import (
    aliases_written_out,
    config_key_changes,
    config_keys_changed,
    read_trinity_config,
    trinity_config_problems,
)

DOCS = Path(__file__).resolve().parent.parent / "docs"
TRINITY = (DOCS / "trinity.md").read_text(encoding="utf-8")
API = (DOCS / "api.md").read_text(encoding="utf-8")
PLAN = ("--gpu", "h100", "--gpus", "8")
KL_05 = "...actor.kl_loss_coef: Trinity 0.5 refuses the config as it loads it (its veRLConfig has no such key there)"


def _dpo() -> dict[str, Any]:
    """Qwen3-8B trained DPO in mode train at 32768 tokens, dynamic batch sizes off (its actor's update in rows)."""
    return {"mode": "train", "model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 32768},
            "buffer": {"batch_size": 64}, "algorithm": {"algorithm_type": "dpo"},
            "trainer": {"use_dynamic_bsz": False, "trainer_config": {"actor_rollout_ref": {"actor": {}}}}}


def _quoted(page: str, start: str) -> str:
    """The backquoted text of `page` that starts with `start` (the first: pages quote a message once), up to its
    ``...`` (what the page leaves out), its lines joined."""
    return start + " ".join(page.split()).split(f"`{start}", 1)[1].split("`")[0].split("...")[0]


@pytest.mark.parametrize(("start", "options"), [("the config's algorithm.algorithm_type dpo with --rollout-gpus 2: ",
                                                 ("--rollout-gpus", "2")),
                                                ("--token-budget 8192: ", ("--token-budget", "8192"))])
def test_the_refusals_trinity_md_quotes_for_a_dpo_config_are_printed(tmp_path: Path, cli: Cli, start: str,
                                                                     options: tuple[str, ...]):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(_dpo()), encoding="utf-8")
    status, out, err = cli("--from-config", str(path), *PLAN, *options)
    assert (status, out) == (2, "")
    assert err.startswith("solve: error: " + _quoted(TRINITY, start)), err


@pytest.mark.parametrize(("start", "keywords"), [("the config's algorithm.algorithm_type dpo with rollout_gpus=2: ",
                                                  {"rollout_gpus": 2}),
                                                 ("token_budget=8192: ", {"token_budget": 8192})])
def test_the_refusals_api_md_quotes_for_a_dpo_config_are_raised(start: str, keywords: dict[str, Any]):
    read = read_trinity_config(yaml.safe_dump(_dpo()), "c.yaml", {})
    with pytest.raises(QueryError) as refused:
        config_query(CATALOG, read, gpu="H100", **keywords)
    assert str(refused.value).startswith(_quoted(API, start)), str(refused.value)


def _words(config: dict[str, Any], version: str | None) -> list[str]:
    return [problem.words for problem in trinity_config_problems(config, CATALOG.model("Qwen3-8B"), 4, version=version)]


@pytest.mark.parametrize(("start", "version"), [("...actor.rollout_n: ", "0.6"),
                                                ("...ppo_mini_batchsize: Trinity 0.6 drops", "0.6"),
                                                (f"{KL_05}: remove", "0.5"), (f"{KL_05}, and", None)])
def test_the_dropped_key_words_trinity_md_quotes_are_the_checks(start: str, version: str | None):
    config = _dpo() | {"algorithm": {"algorithm_type": "grpo"}}
    config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"] = {"ppo_mini_batchsize": 16, "rollout_n": 4,
                                                                         "kl_loss_coef": 0.01}
    quote = _quoted(TRINITY, start).removeprefix("...").rstrip()
    said = _words(config, version)
    assert any(quote in words for words in said), (quote, said)


def test_a_stages_refusal_is_quoted_as_the_checks_say_it():
    config = _dpo() | {"algorithm": {"algorithm_type": "grpo"}, "stages": [
        {"stage_name": "a"},
        {"stage_name": "b",
         "trainer": {"trainer_config": {"actor_rollout_ref": {"actor": {"ppo_mini_batchsize": 16}}}}}]}
    start = f"stages[1].{ARR}.actor.ppo_mini_batchsize: "
    assert [words for words in _words(config, "0.5") if words.startswith("stages")] == [_quoted(TRINITY, start)]


def test_write_gives_dpos_pair_its_note_alone_and_the_fragment_its_comment(tmp_path: Path, cli: Cli):
    path, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(_dpo()), encoding="utf-8")
    status, _, err = cli("--from-config", str(path), *PLAN, "--write", str(written))
    pair_line = next(line for line in written.read_text(encoding="utf-8").splitlines()
                     if "ppo_micro_batch_size_per_gpu" in line)
    assert (status, pair_line.strip(), "trains DPO with dynamic batch sizes off" in err) == (
        0, "ppo_micro_batch_size_per_gpu: 2", True)
    fragment = cli("--from-config", str(path), *PLAN, "--emit", "trinity")[1]
    assert "# 2 for DPO: one pair" in fragment
    # docs/trinity.md said --write wrote the comment too (before s83's docstruth19)
    flat = " ".join(TRINITY.split())
    assert "with its comment and `solve: note:` line" not in flat and "a comment on the key and a" not in flat
    assert "in the fragment (`--emit`, `--out`) a comment on the key (`--write` writes none there)" in flat


ALIASED = """mode: both
algorithm: {algorithm_type: ppo, repeat_times: 8}
buffer: {batch_size: 96}
model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}
cluster: {node_num: 1, gpu_per_node: 8}
explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}
trainer:
  trainer_config:
    actor_rollout_ref:
      actor:
        fsdp_config: &f
          param_offload: true
          optimizer_offload: true
      ref:
        fsdp_config: *f
    critic:
      model:
        fsdp_config: *f
"""
"""A PPO config whose actor's offload flags the ref's and the critic's repeat (``*f``): the plan on 6 H100s turns the
actor's off and counts the critic reloaded."""


def test_the_alias_lines_and_warning_trinity_md_shows_are_printed(tmp_path: Path, cli: Cli):
    path = tmp_path / "c.yaml"
    path.write_text(ALIASED, encoding="utf-8")
    status, out, _ = cli("--from-config", str(path), "--gpu", "h100")
    block = TRINITY.split("one edit that changes them\nall is made: here, or at the anchor's key where the line's key "
                          "is an alias of it:\n\n```\n")[1].split("```")[0]
    assert status == 0 and block in out
    status, _, err = cli("--from-config", str(path), "--gpu", "h100", "--write", str(tmp_path / "w.yaml"))
    warning = _quoted(TRINITY, "trainer.trainer_config.critic.model.fsdp_config repeats")
    assert status == 0 and f"w.yaml: {warning}\n" in err


def test_config_keys_changed_gives_the_lines_without_the_views_alias_comments():
    # docs/api.md: the view adds the comments (from config_key_changes' written_at, and aliases_written_out's)
    read = read_trinity_config(ALIASED, "c.yaml", {})
    answer = answer_query(config_query(CATALOG, read, gpu="H100"), CATALOG)[0]
    assert answer.best is not None
    model = CATALOG.model(answer.model)
    lines = config_keys_changed(ALIASED, answer.best, model, name="c.yaml")
    assert lines == [f"{ARR}.actor.fsdp_config.param_offload: false  # now true",
                     f"{ARR}.actor.fsdp_config.optimizer_offload: false  # now true"]
    assert {change.written_at for change in config_key_changes(ALIASED, answer.best, model, name="c.yaml")
            if change.key.startswith(f"{ARR}.ref.")} == {f"{ARR}.actor.fsdp_config.param_offload",
                                                         f"{ARR}.actor.fsdp_config.optimizer_offload"}
    assert aliases_written_out(ALIASED, answer.best, model, name="c.yaml") == [
        ("trainer.trainer_config.critic.model.fsdp_config", f"{ARR}.actor.fsdp_config")]
    assert "the view also puts, under each line of the block whose key an alias or a `<<:` merge repeats" in " ".join(
        API.split())
