"""Review of session 76's diff (review76): DPO's actor size for a padded model (InternLM2). The note on the size 2
follows what is written: ``--write`` reads an interpolated ``algorithm_type`` in this shell's environment, as its
keys do, and so (since session 77, test_dpofrag_s77) does the fragment (``--emit``, ``--out``), as the plans read it;
an unset or null actor size for DPO is told to hold one pair (2, or 1 for Trinity 0.5), as ``--write`` writes it,
not 1."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from test_dpomicro_s76 import ACTOR_SIZE, example_with_algorithm
from test_ownbudget_s72 import ONE, _config, _problems
from test_padbound_s71 import INTERNLM2, Cli

from solver.tables import load_catalog
from solver.trinity.plan_keys import config_trains_dpo

PATCHER = "solver.trinity.patch_trinity_config"
PAIR_FIX = (f"set it to 2 ({PATCHER} does), one pair, a chosen and a rejected sequence, on verl 0.8 or later, and to "
            "1 before 0.8, which Trinity doubles to one pair")


def _interpolated(tmp_path: Path, default: str) -> Path:
    """The docs' example config with ``algorithm_type: ${oc.env:ALGO,<default>}``."""
    return example_with_algorithm(tmp_path, f"${{oc.env:ALGO,{default}}}", f"{default}.yaml")


def _actor_size(text: str) -> int:
    return int(yaml.safe_load(text)["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"][
        "ppo_micro_batch_size_per_gpu"])


@pytest.mark.parametrize(("default", "algo", "write_size", "emit_size"), [
    ("dpo", "grpo", 1, 1),  # the note said 2 for --write, which wrote 1 (--emit read the default: 2, s77)
    ("grpo", "dpo", 2, 2),  # --write wrote 2 with no note (--emit read the default: 1, s77)
    ("dpo", None, 2, 2),
    ("grpo", None, 1, 1)])
def test_the_dpo_note_follows_what_is_written(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              default: str, algo: str | None, write_size: int, emit_size: int):
    if algo is None:
        monkeypatch.delenv("ALGO", raising=False)
    else:
        monkeypatch.setenv("ALGO", algo)
    given = _interpolated(tmp_path, default)
    written = tmp_path / "written.yaml"
    common = ("--from-config", str(given), "--model-config", str(INTERNLM2), "--gpu", "h100")
    status, _, err = cli(*common, "--write", str(written))
    assert (status, _actor_size(written.read_text()), "trains DPO" in err) == (0, write_size, write_size == 2)
    status, out, err = cli(*common, "--emit", "trinity")
    assert (status, _actor_size(out), "trains DPO" in err) == (0, emit_size, emit_size == 2)


def test_config_trains_dpo_reads_the_environment_given():
    config = {"algorithm": {"algorithm_type": "${oc.env:ALGO,dpo}"}}
    assert (config_trains_dpo(config), config_trains_dpo(config, {"ALGO": "grpo"}),
            config_trains_dpo(config, {}), config_trains_dpo(None)) == (True, False, True, False)


@pytest.mark.parametrize("version", [None, "0.6"])
def test_an_unset_dpo_actor_size_is_told_one_pair(version: str | None):
    unset = _problems(_config("dpo", version, {**ONE, "actor": {}}), version)
    assert unset == [("micro-batch-unset", (
        f"{ACTOR_SIZE} is not set: Trinity 0.6 on verl 0.8 or later hands verl none, which then refuses dynamic batch "
        f"sizes off as the trainer starts: {PAIR_FIX}"))]
    in_05 = ("Trinity 0.5's typed config refuses it as it loads the config (OmegaConf's int field); "
             if version is None else "")
    null = _problems(_config("dpo", version, {**ONE, "actor": {"ppo_micro_batch_size_per_gpu": None}}), version)
    assert null == [("micro-batch-unset-refused", (
        f"{ACTOR_SIZE} is null: {in_05}Trinity 0.6 fails on it as the trainer starts: with verl before 0.8 its typed "
        f"config refuses it, and verl 0.8 or later, left with none, refuses dynamic batch sizes off: {PAIR_FIX}"))]
    # another algorithm's actor, and DPO's ref: one sequence
    assert _problems(_config("grpo", version, {**ONE, "actor": {}}), version)[0][1].endswith(
        f": set it to 1 ({PATCHER} does)")
    ref = _problems(_config("dpo", version, {**ONE, "actor": {"ppo_micro_batch_size_per_gpu": 2},
                                             "ref": {"log_prob_micro_batch_size_per_gpu": None}}), version)
    assert [(code, words.endswith(f": set it to 1 ({PATCHER} does)")) for code, words in ref] == [
        ("dpo-pair-doubled", False), ("micro-batch-unset-refused", True)]  # the actor's 2: test_dpofrag_s77


def test_a_null_dpo_actor_size_on_trinity_0_5_is_told_1_which_it_doubles():
    null = _problems(_config("dpo", "0.5", {**ONE, "actor": {"ppo_micro_batch_size_per_gpu": None}}), "0.5")
    assert null == [("micro-batch-unset-refused", (
        f"{ACTOR_SIZE} is null: Trinity 0.5's typed config refuses it as it loads the config (OmegaConf's int field): "
        f"set it to 1 ({PATCHER} does), one pair, a chosen and a rejected sequence, once doubled"))]


def _pair_split(model: object = None) -> str:
    """The end of the ``dpo-pair-split`` line of DPO's actor size 3 with dynamic batch sizes off, no release given."""
    found = _problems(_config("dpo", None, {**ONE, "actor": {"ppo_micro_batch_size_per_gpu": 3}}), None, model)
    return next(words for code, words in found if code == "dpo-pair-split").split("it runs, but is not DPO: ")[1]


def test_a_split_pair_of_a_padded_model_is_told_one_pair_not_the_next_even_size():
    # micro-batch-unbounded says 2 for the same key: the two lines no longer disagree (it said 4)
    assert _pair_split() == (
        "on verl 0.8 or later set it to 2, one pair (more sequences are padded past the token budget: "
        "micro-batch-unbounded; on verl before 0.8, Trinity doubles what is written)")
    # a model that keeps remove padding on takes any even size: the next one
    assert _pair_split(load_catalog().model("Qwen3-8B")) == (
        "on verl 0.8 or later set it to 4, an even size (on verl before 0.8, Trinity doubles what is written)")
