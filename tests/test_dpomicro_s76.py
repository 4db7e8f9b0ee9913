"""DPO's actor micro-batch size for a model trained one padded sequence per micro-batch (session 76). Trinity's DPO
loss takes a micro-batch's rows in pairs, a chosen and a rejected sequence; before verl 0.8 (Trinity 0.5, 0.6 on verl
0.7) Trinity doubles the size written, on verl 0.8 or later it does not. So ``--write`` and ``--emit trinity`` write 1
for Trinity 0.5 (``--trinity-version 0.5``), and else 2, with a note and a comment that no one size fits both verl
lines; ``micro-batch-unbounded`` takes 1 and, where the release may be 0.6, 2 for DPO's actor, and names both sizes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import in_train_mode, mode_line
from test_ownbudget_s72 import ONE, _config, _problems
from test_padbound_s71 import ARR, EXAMPLE, INTERNLM2, Cli

from solver.memory import breakdown, longest_fitting
from solver.rules import counted_tokens, longest_length_of_tokens
from solver.tables import load_catalog, load_memory_model
from solver.tables.model_config import load_model_config
from solver.tables.schema import Setting
from solver.trinity.plan_keys import DPO_PAIR_COMMENT

ACTOR_SIZE = f"{ARR}.actor.ppo_micro_batch_size_per_gpu"
NOTE = ("solve: note: {path} trains DPO with one padded sequence per micro-batch for internlm2-7b, so what is made "
        f"from it writes {ACTOR_SIZE} 2, one pair, a chosen and a rejected sequence, as Trinity 0.6 on verl 0.8 or "
        "later needs; but no one size fits both verl lines: before verl 0.8 ({before}) Trinity doubles it to 4 "
        "sequences, two pairs, so there write 1{option}")


def example_with_algorithm(tmp_path: Path, algorithm: str, name: str | None = None) -> Path:
    """docs/examples/trinity.yaml with ``algorithm.algorithm_type`` `algorithm`, written in `tmp_path` as `name`
    (``<algorithm>.yaml`` by default); where Trinity trains `algorithm` in mode train alone (DPO), in that mode on the
    6 trainer GPUs the example's mode both leaves (its 2 rollout engines', which mode train gives the trainer, left
    out of the node)."""
    config = yaml.safe_load(EXAMPLE.read_text())
    config["algorithm"]["algorithm_type"] = algorithm
    if mode_line(algorithm):
        config = in_train_mode(config)
        config["cluster"]["gpu_per_node"] = 6
    given = tmp_path / (name or f"{algorithm}.yaml")
    given.write_text(yaml.safe_dump(config))
    return given


def _dpo(size: Any, version: str | None) -> dict[str, Any]:
    """test_ownbudget_s72's padded config for DPO, every size 1 but the actor's, `size`."""
    return _config("dpo", version, {**ONE, "actor": {"ppo_micro_batch_size_per_gpu": size}})


def _unbounded(size: int, version: str | None) -> list[str]:
    """The words of `size`'s ``micro-batch-unbounded`` lines for DPO's actor under `version`."""
    return [words for code, words in _problems(_dpo(size, version), version) if code == "micro-batch-unbounded"]


@pytest.mark.parametrize("version", [None, "0.6"])
def test_dpo_takes_one_pair_where_the_release_may_be_0_6(version: str | None):
    assert _unbounded(2, version) == _unbounded(1, version) == []
    before = "Trinity 0.6 on verl before 0.8" if version else "Trinity 0.5, and 0.6 on verl before 0.8,"
    assert _unbounded(4, version) == [(
        f"{ACTOR_SIZE} is 4 for DPO with dynamic batch sizes off: a micro-batch takes that many sequences on Trinity "
        f"0.6 with verl 0.8 or later, and 8 where {before} doubles it for DPO, padded to the longest, which the token "
        "budget does not bound: set it to 2, one pair, a chosen and a rejected sequence, on verl 0.8 or later, and to "
        "1 before 0.8, which Trinity doubles to one pair")]
    # 1 is one pair before verl 0.8 alone: on 0.8 or later its own line (dpo-pair-split), not this one
    assert [code for code, _ in _problems(_dpo(1, version), version)] == ["dpo-pair-split"]
    # 2 is one pair on verl 0.8 or later alone: before 0.8 its own line (dpo-pair-doubled, test_dpofrag_s77)
    assert [code for code, _ in _problems(_dpo(2, version), version)] == ["dpo-pair-doubled"]


def test_dpo_on_trinity_0_5_takes_1_which_it_doubles():
    assert _problems(_dpo(1, "0.5"), "0.5") == []
    assert _unbounded(2, "0.5") == [(
        f"{ACTOR_SIZE} is 2 for DPO with dynamic batch sizes off: Trinity 0.5 doubles it for DPO, so a micro-batch "
        "takes 4 sequences, padded to the longest, which the token budget does not bound: set it to 1, one pair, a "
        "chosen and a rejected sequence, once doubled")]


def test_other_algorithms_and_roles_keep_one_sequence():
    assert [words.split(":")[0] for words in _unbounded_of(_config("grpo", None, {
        **ONE, "actor": {"ppo_micro_batch_size_per_gpu": 2}}))] == [f"{ACTOR_SIZE} is 2"]
    # DPO's ref holds no pair that its forward needs: one sequence, as every role's
    ref = {**ONE, "ref": {"log_prob_micro_batch_size_per_gpu": 2}}
    assert [words.split(":")[0] for words in _unbounded_of(_config("dpo", None, ref))] == [
        f"{ARR}.ref.log_prob_micro_batch_size_per_gpu is 2"]


def _unbounded_of(config: dict[str, Any]) -> list[str]:
    """The words of `config`'s ``micro-batch-unbounded`` lines, no release given."""
    return [words for code, words in _problems(config, None) if code == "micro-batch-unbounded"]


@pytest.mark.parametrize(("version", "size", "before", "option"), [
    ((), 2, "Trinity 0.5, 0.6 on verl 0.7", " (--trinity-version 0.5 does)"),
    (("--trinity-version", "0.6"), 2, "Trinity 0.6 on verl 0.7", ""),
    (("--trinity-version", "0.5"), 1, None, None)])
def test_write_and_emit_write_the_pair_size_of_the_release(cli: Cli, tmp_path: Path, version: tuple[str, ...],
                                                           size: int, before: str | None, option: str | None):
    given = example_with_algorithm(tmp_path, "dpo")
    written = tmp_path / "written.yaml"
    common = ("--from-config", str(given), "--model-config", str(INTERNLM2), "--gpu", "h100", *version)
    status, _, err = cli(*common, "--write", str(written))
    note = NOTE.format(path=given, before=before, option=option)
    assert (status, note in err.splitlines(), "dpo-pair-split" in err) == (0, before is not None, False)
    assert "warning" not in err  # the written config passes its own check
    actor = yaml.safe_load(written.read_text())["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]
    assert actor["ppo_micro_batch_size_per_gpu"] == size
    status, out, err = cli(*common, "--emit", "trinity")
    assert (status, note in err.splitlines()) == (0, before is not None)
    emitted = yaml.safe_load(out)["trainer"]["trainer_config"]["actor_rollout_ref"]
    assert (emitted["actor"]["ppo_micro_batch_size_per_gpu"], emitted["ref"]["log_prob_micro_batch_size_per_gpu"]) == (
        size, 1)
    assert ("# 2 for DPO: one pair" in out) == (size == 2)
    # a config of another algorithm (written in the DPO one's place, which `common` names): one sequence, no note
    example_with_algorithm(tmp_path, "grpo", given.name)
    status, out, err = cli(*common, "--emit", "trinity")
    assert (status, "trains DPO" in err, yaml.safe_load(out)["trainer"]["trainer_config"]["actor_rollout_ref"][
        "actor"]["ppo_micro_batch_size_per_gpu"]) == (0, False, 1)


def test_the_comment_says_which_size_for_which_line():
    assert DPO_PAIR_COMMENT == (
        "2 for DPO: one pair, a chosen and a rejected sequence, as Trinity 0.6 on verl 0.8 or later trains it (with 1 "
        "its DPO loss finds no rejected sequence); no one size fits both verl lines: before verl 0.8 (Trinity 0.5, 0.6 "
        "on verl 0.7) Trinity doubles it to 4, two pairs, so write 1 there")


def _dpo_config_answer(cli: Cli, tmp_path: Path, algorithm: str) -> dict[str, Any]:
    """The --json answer for docs/examples/trinity.yaml with InternLM2-7B and `algorithm`: 32768 tokens on the 6
    trainer GPUs of H100 its cluster leaves beside 2 rollout GPUs."""
    given = example_with_algorithm(tmp_path, algorithm)
    status, out, _ = cli("--from-config", str(given), "--model-config", str(INTERNLM2), "--gpu", "h100", "--json")
    assert status == 0
    (answer,) = json.loads(out)
    return answer  # type: ignore[no-any-return]


def test_a_padded_models_dpo_plans_count_the_pair(cli: Cli, tmp_path: Path):
    grpo, dpo = (_dpo_config_answer(cli, tmp_path, algorithm) for algorithm in ("grpo", "dpo"))
    assert "dpo_pairs" not in grpo and dpo["dpo_pairs"] is True
    best = {name: (answer["plans"][0]["env"], answer["plans"][0]["offload"], answer["plans"][0]["gpus"],
                   answer["plans"][0]["memory_gb"]) for name, answer in (("grpo", grpo), ("dpo", dpo))}
    # the pair's checkpoints and logits take Env alone past the GPU: Offload makes room
    assert best == {"grpo": (True, False, 6, 51.7), "dpo": (True, True, 6, 60.14)}
    caution = next(words for words in dpo["plans"][0]["cautions"] if words.startswith("use_remove_padding"))
    assert ("the memory estimate counts the DPO pair, a chosen and a rejected sequence, 2 x max_model_len = 65536 "
            "tokens per GPU; before verl 0.8") in caution


def test_the_pair_is_counted_in_one_place_and_only_for_a_padded_model():
    model = load_model_config(INTERNLM2)
    assert [counted_tokens(model, 32768, 1, dpo=dpo) for dpo in (False, True)] == [32768, 65536]
    assert [longest_length_of_tokens(model, 65537, 1, dpo) for dpo in (False, True)] == [65537, 32768]
    qwen = load_catalog().model("8B")  # remove padding on: its token budget bounds a pair like any sequences
    assert counted_tokens(qwen, 32768, 1, dpo=True) == counted_tokens(qwen, 32768, 1) == 65536
    setting = Setting(env=True, offload=False, sp=1)
    coefficients = load_memory_model().coefficients
    one, pair = (breakdown(model, 80.0, 6, setting, 32768, coefficients, dpo=dpo) for dpo in (False, True))
    assert (round(one.total_gib, 1), round(pair.total_gib, 1), one.fits, pair.fits) == (51.7, 79.9, True, False)
    assert pair.terms.checkpoints == 2 * one.terms.checkpoints and pair.terms.states == one.terms.states
    assert [longest_fitting(model, 80.0, 6, setting, coefficients, dpo=dpo) for dpo in (False, True)] == [58368, 28672]


def test_the_verdict_on_a_dpo_config_counts_the_pair(cli: Cli, tmp_path: Path):
    predicted = {}
    for algorithm in ("grpo", "dpo"):
        given = example_with_algorithm(tmp_path, algorithm)
        status, out, _ = cli("--from-config", str(given), "--model-config", str(INTERNLM2), "--gpu", "h100")
        predicted[algorithm] = (status, " ".join(out.split()).split("the memory model predicts ")[1].split(" GiB")[0])
    assert predicted == {"grpo": (0, "55.6"), "dpo": (0, "87.7")}  # vanilla on 6 GPUs at 32768: one sequence, a pair


def test_an_interpolated_dpo_algorithm_is_read_alike_by_the_keys_their_check_and_the_note(cli: Cli, tmp_path: Path):
    """``algorithm_type: ${oc.env:ALGO,dpo}``: the fragment's keys, their own check and the note all read its default
    (an internal error, exit 70, where the check read the text as written and refused the pair's size 2)."""
    given = example_with_algorithm(tmp_path, "${oc.env:ALGO,dpo}", "dpo.yaml")
    status, out, err = cli("--from-config", str(given), "--model-config", str(INTERNLM2), "--gpu", "h100", "--emit",
                           "trinity")
    actor = yaml.safe_load(out)["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]
    assert (status, actor["ppo_micro_batch_size_per_gpu"], "trains DPO" in err, "internal error" in err) == (
        0, 2, True, False)
