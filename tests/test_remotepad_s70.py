"""Remove padding for a model of its own code (session 70): verl's default ``use_remove_padding: true`` packs a
micro-batch's sequences into one row with no attention mask (verl 0.9.1 ``workers/engine/fsdp/transformer_impl.py``
``:1256-1260``), which InternLM2's own ``flash_attn_func(causal=True)`` attends across even at SP=1. So for such a model
(`Model.ulysses_unreached`) the apply lines, ``--emit trinity`` and ``--write`` set it false, its plans and estimates
say why in a caution (``padded-micro-batches``), ``--check`` flags it on or unset (``remove-padding-on``), and the
memory estimate counts the one sequence a micro-batch then holds (test_padtokens_s71), as it counts twice that budget
with it on."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from solver.api import estimate_memory
from solver.query import make_query
from solver.render.summary import apply_lines
from solver.results import CautionCode
from solver.solve import plan
from solver.tables import load_catalog, remove_padding_violation
from solver.tables.model_config import load_model_config
from solver.trinity import trinity_config_problems
from solver.trinity.settings import plan_settings

ROOT = Path(__file__).parent.parent
INTERNLM2 = ROOT / "tests" / "data" / "hf-configs" / "internlm2-7b.json"
EXAMPLE = ROOT / "docs" / "examples" / "trinity.yaml"
Cli = Callable[..., tuple[int, str, str]]
PACKED_CODE = {  # the verl line each release runs (smallslips30, s78: verl 0.9.1's alone, for 0.5 too)
    None: ("verl 0.9.1 workers/engine/fsdp/transformer_impl.py:1256-1260; on verl 0.7, Trinity 0.5's and 0.6's too, "
           "workers/actor/dp_actor.py:198-205 in 0.7.0, :244-251 in 0.7.1"),
    "0.5": ("verl 0.7.0 workers/actor/dp_actor.py:198-205, which Trinity 0.5.0 and 0.5.1 pin; :244-251 in 0.7.1, "
            "0.5.2's"),
    "0.6": ("verl 0.9.1 workers/engine/fsdp/transformer_impl.py:1256-1260; on verl 0.7.1, which Trinity 0.6 also "
            "runs, workers/actor/dp_actor.py:244-251"),
}


def packed(version: str | None = None) -> str:
    """Why remove padding trains InternLM2-7B wrong, citing the verl line the release `version` runs."""
    return (f"verl's remove padding packs a micro-batch's sequences into one row with no attention mask "
            f"({PACKED_CODE[version]}), and internlm2-7b's own attention code would attend across them")


PACKED = packed()
CAUTION = (f"use_remove_padding false for internlm2-7b: {PACKED}; padded instead, so use_dynamic_bsz false with one "
           "sequence per micro-batch (micro-batch sizes 1), which leaves max_token_len_per_gpu unread: the memory "
           "estimate counts that sequence, max_model_len = 32768 tokens per GPU; before verl 0.8 (Trinity 0.5, 0.6 "
           "on verl 0.7) it is padded to the batch's longest prompt plus its longest response, wider only where a "
           "prompt or a response passes max_prompt_tokens or max_response_tokens (a multi-turn workflow, "
           "model.enable_prompt_truncation off, a rollout max_tokens above max_response_tokens), up to twice "
           "max_model_len, which the estimate does not count; and for DPO a micro-batch holds two sequences, a chosen "
           "and a rejected one, which Trinity's DPO loss takes as a pair (before verl 0.8 Trinity doubles the size to "
           "2; on verl 0.8 or later the actor's must be written 2: with 1 the loss finds no rejected sequence, "
           "dpo-pair-split), which the estimate counts where it is made for DPO (a config of algorithm_type "
           "dpo, --dpo, or a cluster job's dpo: true); "
           "it costs speed: a step runs a forward and backward per sequence, where dynamic batching would pack "
           "several")  # test_padbound_s71: the keys; test_padtokens_s71

TRAINER_KEY = "trainer.use_remove_padding"
MODEL_KEY = "trainer.trainer_config.actor_rollout_ref.model.use_remove_padding"
CRITIC_KEY = "trainer.trainer_config.critic.model.use_remove_padding"
ONLY_BEFORE_06 = " (on Trinity before 0.6 only: Trinity 0.6 sets it to trainer.use_remove_padding whatever the verl)"


def _internlm2_plan(version: str | None = None) -> Any:
    """InternLM2-7B's best plan on 8 H100s at 32768 tokens, and the catalogue with it."""
    catalog = load_catalog().with_model(load_model_config(INTERNLM2))
    query = make_query(catalog, gpu="h100", model="internlm2-7b", budget_gpus=8, max_model_len=32768,
                       trinity_version=version)
    (answer,) = plan(query, catalog)
    return answer.plans[0], catalog.model("internlm2-7b")


def test_only_a_model_of_its_own_code_is_trained_wrong_by_remove_padding():
    catalog = load_catalog()
    assert remove_padding_violation(load_model_config(INTERNLM2)) == PACKED
    assert [remove_padding_violation(catalog.model(name)) for name in ("8B", "30B-A3B", "Llama-3.1-8B")] == [None] * 3


def test_its_plan_cautions_why_remove_padding_is_off_and_what_the_estimate_leaves_out():
    found, _ = _internlm2_plan()
    assert (CautionCode.PADDED_MICRO_BATCHES, CAUTION) in zip(found.caution_codes, found.cautions, strict=True)
    catalog = load_catalog()
    query = make_query(catalog, gpu="h100", model="8B", budget_gpus=8, max_model_len=32768)
    assert CautionCode.PADDED_MICRO_BATCHES not in plan(query, catalog)[0].plans[0].caution_codes


@pytest.mark.parametrize(("version", "trainer_lines"), [
    (None, ["# Trinity 0.6 reads this one instead (leave it out before 0.6, which refuses it):",
            f"{TRAINER_KEY}: false"]),
    ("0.6", ["# Trinity 0.6 reads this one instead:", f"{TRAINER_KEY}: false"]),
    ("0.5", []),
])
def test_the_apply_lines_turn_remove_padding_off_at_the_keys_the_release_reads(
        version: str | None, trainer_lines: list[str]):
    found, model = _internlm2_plan(version)
    lines = apply_lines(found, model, version)  # type: ignore[arg-type]
    start = lines.index("trainer.ulysses_sequence_parallel_size: 1") + 1  # no token budget: test_padtokens_s71
    critic = [f"{CRITIC_KEY}: false"] if version != "0.6" else []  # the critic's, which 0.5 reads (s72)
    assert lines[start:start + 2 + len(critic) + len(trainer_lines)] == [
        "# remove padding off, as the caution above says:", f"{MODEL_KEY}: false", *critic, *trainer_lines]
    assert not any("use_remove_padding" in line for line in apply_lines(found, load_catalog().model("8B")))


@pytest.mark.parametrize(("version", "trainer_key"), [(None, False), ("0.6", False), ("0.5", None)])
def test_the_settings_set_both_keys_false_and_0_5_only_its_own(version: str | None, trainer_key: bool | None):
    found, model = _internlm2_plan(version)
    settings = plan_settings(found, model, version=version)  # type: ignore[arg-type]
    trainer = settings.config["trainer"]
    assert (trainer.get("use_remove_padding"), trainer["trainer_config"]["actor_rollout_ref"]["model"]) == (
        trainer_key, {"use_remove_padding": False})
    assert (("trainer", "use_remove_padding") in settings.trinity_06_keys) == (version is None)
    assert trainer["trainer_config"]["critic"].get("model") == (  # the critic's own, which 0.5 reads (s72)
        None if version == "0.6" else {"use_remove_padding": False})


def test_emit_trinity_writes_the_keys_false_with_why_and_that_0_5_refuses_the_trainers(cli: Cli):
    status, out, err = cli("--model-config", str(INTERNLM2), "--gpu", "h100", "--gpus", "8", "--len", "32768",
                           "--emit", "trinity")
    assert (status, err) == (0, "")
    assert ("  ulysses_sequence_parallel_size: 1\n"
            "  # off, with one sequence per micro-batch (the micro-batch sizes of 1 below), as the caution says\n"
            "  use_dynamic_bsz: false\n"  # test_padbound_s71
            "  # verl's remove padding packs a micro-batch's sequences into one row with no attention mask (verl\n"
            "  # 0.9.1 workers/engine/fsdp/transformer_impl.py:1256-1260; on verl 0.7, Trinity 0.5's and 0.6's\n"
            "  # too, workers/actor/dp_actor.py:198-205 in 0.7.0, :244-251 in 0.7.1), and internlm2-7b's own\n"
            "  # attention code would attend across them; this key is Trinity 0.6's (0.5 refuses it:\n"
            "  # --trinity-version 0.5 leaves it out)\n"
            "  use_remove_padding: false\n") in out
    assert "  trainer_config:\n    actor_rollout_ref:\n      model:\n        use_remove_padding: false\n" in out


def _problems(trainer: dict[str, Any], version: str | None = None, model: Any = None) -> list[tuple[str, str]]:
    """The remove padding problems of a config with `trainer` for `model` (InternLM2-7B's) on 4 GPUs."""
    found = trinity_config_problems({"trainer": trainer}, model or load_model_config(INTERNLM2), 4,
                                    version=version)  # type: ignore[arg-type]
    return [tuple(problem) for problem in found if "remove-padding" in problem[0]]  # type: ignore[misc]


def _on_line(key: str, shown: str, scope: str = "", version: str | None = None) -> tuple[str, str]:
    return "remove-padding-on", f"{key} is {shown}: {packed(version)}: set it to false{scope}"


def test_check_flags_remove_padding_on_or_unset_for_its_model_at_the_keys_the_release_reads():
    unset = "not set, so true (Trinity's default)"
    model_off = {"actor_rollout_ref": {"model": {"use_remove_padding": False}}}
    off = {"use_remove_padding": False, "trainer_config": model_off}
    # Trinity's default algorithm, ppo, trains a critic, whose own key Trinity 0.5 reads too (test_ownbudget_s72)
    critic = _on_line(CRITIC_KEY, unset, ONLY_BEFORE_06)
    assert _problems({}) == [_on_line(TRAINER_KEY, unset), _on_line(MODEL_KEY, unset, ONLY_BEFORE_06), critic]
    assert _problems({**off, "use_remove_padding": True}) == [_on_line(TRAINER_KEY, "true"), critic]
    assert _problems(off) == [critic]
    assert _problems(off, "0.6") == []
    critic_05 = _on_line(CRITIC_KEY, unset, ONLY_BEFORE_06, "0.5")
    assert _problems({}, "0.5") == [_on_line(MODEL_KEY, unset, ONLY_BEFORE_06, "0.5"), critic_05]
    assert _problems({"trainer_config": model_off}, "0.5") == [critic_05]
    assert _problems({"trainer_config": {**model_off, "critic": {"model": {"use_remove_padding": False}}}}, "0.5") == []
    qwen3 = load_catalog().model("8B")  # remove padding off is the problem there, on is none
    assert _problems({}, model=qwen3) == []
    assert [code for code, _ in _problems(off, model=qwen3)] == ["remove-padding-off"] * 2


def test_write_sets_the_keys_false_with_the_caution_and_its_file_then_checks_clean(cli: Cli, tmp_path: Path):
    written = tmp_path / "written.yaml"
    flags = ("--model-config", str(INTERNLM2), "--gpu", "h100")
    status, _, err = cli("--from-config", str(EXAMPLE), *flags, "--write", str(written))
    assert status == 0
    assert (f"solve: note: {EXAMPLE} has no trainer.use_remove_padding (Trinity 0.6's), so what is made from it adds "
            "it, false for internlm2-7b; Trinity before 0.6 refuses it (--trinity-version 0.5 leaves it out)\n") in err
    text = written.read_text()
    assert "\n  # caution: use_remove_padding false for internlm2-7b: verl's remove padding packs a micro-batch's\n" \
        "  #   sequences into one row" in text
    assert "\n  use_remove_padding: false\n" in text and "\n      model:\n        use_remove_padding: false\n" in text
    again = tmp_path / "again.yaml"
    status, _, err = cli("--from-config", str(written), *flags, "--write", str(again))
    assert status == 0 and "trainer.use_remove_padding" not in err  # the config has it now
    assert again.read_text() == text.replace(str(written), str(again))  # its note replaced, not added twice
    status, out, _ = cli("--from-config", str(written), *flags, "--json")
    assert (status, json.loads(out)[0]["current"]["config_problem_codes"]) == (0, [])


def test_the_memory_estimate_counts_one_sequence_with_remove_padding_off_where_on_counts_the_budget(tmp_path: Path):
    config = json.loads(INTERNLM2.read_text())
    del config["auto_map"]  # the same layout, of no code of its own: remove padding on
    (tmp_path / "config.json").write_text(json.dumps(config))
    estimates = []
    for path, length in ((INTERNLM2, 32768), (tmp_path / "config.json", 16384)):  # T = L, and 2L (test_padtokens_s71)
        model = load_model_config(path)
        assert (remove_padding_violation(model) is None) == (path != INTERNLM2)
        estimate = estimate_memory(model.name, "h100", 8, length, env=True,
                                   catalog=load_catalog().with_model(model))
        estimates.append((estimate.total_gib, CautionCode.PADDED_MICRO_BATCHES in estimate.caution_codes))
    assert estimates[0][0] == estimates[1][0] and [padded for _, padded in estimates] == [True, False]
