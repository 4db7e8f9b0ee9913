"""Tests killing the surviving mutants of session 78's merges (helper mutants37, session 79): ropetheta's base read
from a config.json's ``rope_parameters`` (none for one without model_type whose base is per layer type), a YaRN's own
base kept and the rollout model's copy given the base by ``--write``; the past-sliding-window caution at a window of
the native context's length, over some layers, and named in the API's words; lorarank's ``--write`` refusing a larger
rank, keeping an adapter path, reading the config's LoRA in its environ; a release with a character past ASCII refused
(smallslips30); and C-13 (left open by mutants35), no smaller card's note beside a config's settings that its GPU
type's own tables vouch for where ``--estimate`` lets the estimate decide."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from test_apilora_s78 import NO_LORA, QV_LORA
from test_lorarank_s78 import CATALOG, _answer
from test_ropetheta_s78 import CONFIG, LLAMA_CONFIG
from test_smallslips28_s78 import PAST_WINDOW, PHI3

import solver
from solver.results import past_window_words
from solver.rules import mapped_rope_theta
from solver.tables import QueryError, load_model_config
from solver.tables.bounds import release_name, trinity_release
from solver.trinity import patch_trinity_config

Cli = Callable[..., tuple[int, str, str]]


def test_a_config_jsons_base_in_its_rope_parameters_alone_is_its_own(tmp_path: Path):
    # mutant T-10: the base read as transformers' default 10000 where rope_parameters alone gives it (transformers 5)
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**LLAMA_CONFIG, "rope_theta": None,
                                "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0}}))
    model = load_model_config(path)
    assert (model.rope_theta, model.own_rope_theta, mapped_rope_theta(model)) == (500000, 500000, 500000)
    assert model.vllm_rope_theta_lost == (500000, 10000)
    path.write_text(json.dumps({**LLAMA_CONFIG, "rope_theta": None, "rope_parameters": {"rope_type": "default"}}))
    assert load_model_config(path).rope_theta == 10000  # none given: transformers' default
    # mutant T-26: a config.json without model_type (an unchecked layout) and with a base per layer type taken as
    # the catalogue's, whose base the table gives
    path.write_text(json.dumps({**{key: value for key, value in LLAMA_CONFIG.items() if key != "model_type"},
                                "rope_theta": None, "rope_parameters": {
                                    "full_attention": {"rope_type": "default", "rope_theta": 1000000.0},
                                    "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}}))
    model = load_model_config(path)
    assert (model.model_type, model.unchecked_layout) == (None, "no model_type")
    assert (model.rope_theta, model.own_rope_theta, mapped_rope_theta(model)) == (None, None, None)


C13_CONFIG = """\
mode: both
algorithm: {algorithm_type: grpo}
model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384, max_prompt_tokens: 8192, max_response_tokens: 8192}
cluster: {node_num: 1, gpu_per_node: 4}
explorer:
  rollout_model: {engine_num: 2, tensor_parallel_size: 1}
trainer: {ulysses_sequence_parallel_size: 2}
"""


def test_no_smaller_cards_note_where_the_cards_own_tables_vouch_and_the_estimate_decides(cli: Cli, tmp_path: Path):
    # mutant C-13: _vouched asked for a smaller card's cell as though the card's own tables said nothing. A card with
    # the H20's memory (its tables speak for it: SP=2 on 2 GPUs at 16384 trains) with --estimate: the estimate
    # (92.5 GiB of 85.2) decides, and the H20's cell is the card's own, no smaller card's.
    config = tmp_path / "trinity.yaml"
    config.write_text(C13_CONFIG)
    flags = ("--from-config", str(config), "--gpu", "big", "--gpu-memory", "97871MiB", "--json")
    status, out, err = cli(*flags)
    current = json.loads(out)[0]["current"]
    assert (status, err, current["trains"], current["smaller_card"]) == (0, "", True, None)
    status, out, err = cli(*flags, "--estimate")
    current = json.loads(out)[0]["current"]
    assert (status, err) == (0, "")
    assert (current["gpus"], current["sp"], current["trains"], current["predicted"]) == (2, 2, False, [92.5, 85.2])
    assert (current["out_of_memory"], current["smaller_card"]) == (None, None)


YARN_LINE = "{rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960"


def test_write_keeps_a_mappings_own_base_and_adds_the_base_to_the_rollouts_copy(cli: Cli, tmp_path: Path):
    # mutants T-22 (the model's base written over the mapping's own) and T-24 (the rollout model's copy of the
    # mapping, which the rollout's vLLM reads alone, left without the base)
    config, written = tmp_path / "trinity.yaml", tmp_path / "written.yaml"
    flags = ["--from-config", str(config), "--gpu", "h100", "--trinity-version", "0.6", "--write", str(written)]
    config.write_text(CONFIG.replace("40960}", "40960, rope_theta: 500000}"))
    assert cli(*flags)[0] == 0
    assert f"  rope_scaling: {YARN_LINE}, rope_theta: 500000}}\n" in written.read_text()
    config.write_text(CONFIG.replace("{engine_num: 4, tensor_parallel_size: 1}",
                                     f"{{engine_num: 4, tensor_parallel_size: 1, rope_scaling: {YARN_LINE}}}}}"))
    assert cli(*flags)[0] == 0
    text = written.read_text()
    assert f"  rope_scaling: {YARN_LINE}, rope_theta: 1000000}}\n" in text
    assert f"rope_scaling: {YARN_LINE}, rope_theta: 1000000}}}}\n" in text  # the rollout model's


def test_past_a_window_as_long_as_the_native_context_is_cautioned():
    # mutant H-16: a window of the native context's length taken as the model's own; it trained with full attention
    # there (every sequence within the window), so a token past it no longer sees the sequence's start
    phi3 = solver.load_model_config(PHI3)
    native = phi3.model_copy(update={"vllm_sliding_window": (131072, 32)})
    assert past_window_words(native, 131073) == PAST_WINDOW.replace("262144", "131072")
    assert past_window_words(native, 131072) is None
    assert past_window_words(phi3.model_copy(update={"vllm_sliding_window": (131071, 32)}), 524288) is None


def test_a_window_over_some_layers_names_them():
    # mutant H-17: the layers the window covers left unsaid where it is not every layer's
    phi3 = solver.load_model_config(PHI3)
    some = phi3.model_copy(update={"vllm_sliding_window": (262144, 16)})
    assert past_window_words(some, 262145) == PAST_WINDOW.replace(
        "262144 up to it alone,", "262144 up to it alone in its 16 sliding-window layers,")


def test_the_window_caution_names_the_length_as_the_api_takes_it():
    # mutant H-18: the caution's length named as the command's option (--len) in the API's plans
    phi3 = solver.load_model_config(PHI3)
    catalog = solver.load_catalog().with_model(phi3)
    (answer,) = solver.plan(phi3.name, gpu="h100", budget_gpus=8, max_model_len=262145, catalog=catalog)
    assert answer.best is not None
    cautions = dict(zip(answer.best.caution_codes, answer.best.cautions, strict=True))
    assert cautions["past-sliding-window"] == PAST_WINDOW.replace("--len 262144", "max_model_len=262144")


def test_write_refuses_a_plan_at_a_larger_rank_than_the_configs_adapter():
    # mutant L-3: a plan of a larger rank than the adapter's taken (it counts more than the config trains)
    plan = _answer(QV_LORA, 64).best
    assert plan is not None and plan.lora_rank == 64
    with pytest.raises(QueryError, match=r"^config: the plan counted LoRA rank 128, but model.lora_configs trains "
                                         r"rank 64, "):
        patch_trinity_config(QV_LORA, plan.model_copy(update={"lora_rank": 128}), CATALOG.model("Qwen3-8B"))


ADAPTER_PATH = NO_LORA.replace("cluster:\n", "trainer:\n  trainer_config:\n    actor_rollout_ref:\n      model:\n"
                               "        lora_adapter_path: /adapters/mine\ncluster:\n")
ENV_RANK = ADAPTER_PATH.replace("lora_adapter_path: /adapters/mine", "lora_rank: ${oc.env:LORA_RANK,0}")


def test_write_keeps_an_adapter_path_whose_rank_it_cannot_know():
    # mutant L-2: an adapter loaded from a path (its rank is its own file's: 0 here) refused as another rank's
    plan = _answer(NO_LORA, 32).best
    assert plan is not None and plan.lora_rank == 32
    written = yaml.safe_load(patch_trinity_config(ADAPTER_PATH, plan, CATALOG.model("Qwen3-8B")))
    assert written["model"] == {"model_path": "Qwen/Qwen3-8B", "max_model_len": 16384}  # no lora_configs beside it
    assert written["trainer"]["trainer_config"]["actor_rollout_ref"]["model"] == {
        "lora_adapter_path": "/adapters/mine"}


def test_write_reads_the_configs_lora_in_its_environ():
    # mutants L-5, L-9, L-14 (the config's LoRA read without environ: none, so another rank taken) and L-12 (a
    # lora_configs written beside the LoRA the environ turns on)
    model, plan = CATALOG.model("Qwen3-8B"), _answer(NO_LORA, 32).best
    assert plan is not None
    with pytest.raises(QueryError, match=r"^config: the plan counted LoRA rank 32, but "
                                         r"trainer.trainer_config.actor_rollout_ref.model.lora_rank trains rank 64, "):
        patch_trinity_config(ENV_RANK, plan, model, environ={"LORA_RANK": "64"})
    written = yaml.safe_load(patch_trinity_config(ENV_RANK, plan.model_copy(update={"lora_rank": 64}), model,
                                                  environ={"LORA_RANK": "64"}))
    assert written["model"] == {"model_path": "Qwen/Qwen3-8B", "max_model_len": 16384}
    # without it, the default 0 turns no LoRA on: the plan's LoRA config is written
    written = yaml.safe_load(patch_trinity_config(ENV_RANK, plan, model, environ={}))
    assert written["model"]["lora_configs"] == [{"lora_rank": 32}]


@pytest.mark.parametrize("value", ["0.5+l\u00e9", "\u20030.5.2"])
def test_a_release_with_a_character_past_ascii_is_none(value: str):
    # mutant V-10: a local version's non-ASCII word (PEP 440 takes ASCII alone) or a Unicode space read as a release
    with pytest.raises(QueryError) as raised:
        trinity_release("version", value)
    assert str(raised.value) == ("version takes 0.5, 0.5.0, 0.5.1, 0.5.2, 0.6 or 0.6.0 (or a tag of one, v0.5.2), "
                                 f"got {value!r}")
    assert release_name(value) is None
