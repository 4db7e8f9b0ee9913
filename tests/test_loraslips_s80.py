"""Session 80, loraslips: LoRA targets' small slips. (1) ``--lora-targets`` module names with a comma before or after
them, spaces around them or one named twice are read as the list PEFT would take (no module's name holds a comma or a
space, so no regex with them matched one): ``q_proj,`` is q_proj's adapter, not a regex refused as matching nothing.
(2) ``lm_head``, which PEFT's list matches as it is (``key in target_modules``), is refused for what it is, the
output projection that rft-solver does not count, not as matching no module (``.*\\.lm_head`` missed it). (3) Under
0.5.0's and 0.5.2's transformers 4 or 5 (``either``), the LoRA note names what the regex matches of each one's module
names, not transformers 5's alone. (4) A regex on some of transformers 4's routed experts counts those it adapts, not
all of them. (5) A key that decides the LoRA adapter (``model.lora_configs``, its rank, targets, adapter path) behind
an unset ``${oc.env:VAR}`` without a default is refused in one line, not read as no LoRA (full fine-tuning counted)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.tables.peft_match import (
    PEFT_OTHER_MODULES,
    PEFT_OUTER_MODULES,
    TOP_MODULES,
    adapted_modules,
    layer_module_names,
    lora_targets_pattern,
)
from solver.trinity import read_trinity_config
from solver.trinity.keys import ConfigError

Cli = Callable[..., tuple[int, str, str]]
FORMS = ("give all-linear (Trinity's default: every linear layer but the output projection), module names separated "
         "by commas (q_proj,v_proj) or a regular expression that PEFT matches whole module names with "
         "(.*\\.(q_proj|v_proj))")
MEMORY = ("memory", "--model", "8B", "--gpu", "A100-80GB", "--gpus", "6", "--len", "16k", "--env", "--lora-rank", "64",
          "--json")
Q, QV = ".*\\.q_proj", ".*\\.(q_proj|v_proj)"
MIXTRAL_CONFIG = str(Path(__file__).parent / "data" / "hf-configs" / "Mixtral-8x7B-v0.1.json")


def _memory(cli: Cli, *asked: str) -> tuple[int, str | None, str]:
    status, out, err = cli(*asked)
    if status:
        return status, None, err
    raw = json.loads(out)
    return raw["lora_parameters"], raw["lora_target_modules"], err


# (1) Names with stray commas, spaces, or twice: PEFT's list of them.

@pytest.mark.parametrize(("targets", "parameters", "pattern"), [
    ("q_proj,", 18_874_368, Q),  # 64 x (4096 + 4096) x 36; before: refused, matching no module
    (",q_proj", 18_874_368, Q),
    ("q_proj,q_proj", 18_874_368, Q),  # before: .*\.(q_proj|q_proj)
    ("q_proj,,v_proj", 30_670_848, QV),  # and v: 64 x (4096 + 1024) x 36 more
    (" q_proj , v_proj ,", 30_670_848, QV),
    ("v_proj, q_proj, v_proj", 30_670_848, ".*\\.(v_proj|q_proj)"),
])
def test_names_with_stray_commas_or_twice_are_the_list_peft_takes(cli: Cli, targets: str, parameters: int,
                                                                  pattern: str) -> None:
    assert _memory(cli, *MEMORY, "--lora-targets", targets) == (parameters, pattern, "")


def test_a_regex_is_still_a_regex_and_commas_alone_name_no_module(cli: Cli) -> None:
    regex = ".*\\.layers\\.\\d{1,2}\\.self_attn\\.q_proj"  # a comma, but no names alone
    assert lora_targets_pattern(regex) == regex
    assert lora_targets_pattern("q_proj, .*v_proj") == "q_proj, .*v_proj"  # not names alone: a regex, refused
    status, out, err = cli(*MEMORY[:-1], "--lora-targets", ",")
    assert (status, out, err) == (2, "", (
        "solve memory: error: --lora-targets ',' matches no module of Qwen3-8B "
        "(model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.{gate,up,down}_proj, model.embed_tokens and "
        f"lm_head): {FORMS}\n"))


@pytest.mark.parametrize(("targets", "names"), [
    ('["q_proj", "v_proj"]', "q_proj,v_proj"),  # adapter_config.json's target_modules, copied
    ("[q_proj, v_proj]", "q_proj,v_proj"),  # a Trinity config's, as YAML writes it
    ("q_proj v_proj", "q_proj,v_proj"),
    ("['q_proj']", "q_proj"),
])
def test_names_written_as_another_tool_s_list_are_told_to_give_them_separated_by_commas(cli: Cli, targets: str,
                                                                                        names: str) -> None:
    # persona90b (s90): told only the forms, as if the names matched no module of the model
    status, out, err = cli(*MEMORY[:-1], "--lora-targets", targets)
    assert (status, out, err) == (2, "", (
        f"solve memory: error: --lora-targets '{targets}' matches no module of Qwen3-8B "
        "(model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.{gate,up,down}_proj, model.embed_tokens and "
        f"lm_head): give the names separated by commas, without brackets, quotes or spaces: {names}\n"))
    # names that would match nothing either way, and a regex that is one, are told the forms
    for nothing in ("foo bar", "[foo]", "[qv]_proj"):
        assert cli(*MEMORY[:-1], "--lora-targets", nothing)[2].endswith(f"lm_head): {FORMS}\n")


# (2) lm_head: matched as PEFT's list matches it, and refused for what it is.

def test_the_names_regex_matches_what_peft_s_list_of_them_matches() -> None:
    keys = [*PEFT_OTHER_MODULES, *PEFT_OUTER_MODULES, "model.layers.0.self_attn.q_proj", "model.layers.3.mlp.up_proj",
            "model.layers.0.self_attn.q_norm"]
    assert TOP_MODULES == ("model", "lm_head")
    for names in (["lm_head"], ["q_proj", "lm_head"], ["embed_tokens"], ["q_proj"], ["up_proj", "q_proj"], ["model"]):
        pattern = lora_targets_pattern(",".join(names))
        assert pattern is not None
        # check_target_module_exists, tuners/tuners_utils.py:2372 to :2376 in peft 0.21.2, for a list
        assert [key for key in keys if re.fullmatch(pattern, key)] == [
            key for key in keys if key in names or any(key.endswith(f".{name}") for name in names)], names
    assert (lora_targets_pattern("lm_head"), lora_targets_pattern("q_proj,lm_head")) == (
        "(.*\\.)?lm_head", "(.*\\.)?(q_proj|lm_head)")


@pytest.mark.parametrize("targets", ["lm_head", "q_proj, lm_head"])
def test_lm_head_is_refused_as_the_output_projection_rft_solver_does_not_count(cli: Cli, targets: str) -> None:
    # before: "--lora-targets 'lm_head' matches no module of Qwen3-8B (..., model.embed_tokens and lm_head)"
    status, out, err = cli(*MEMORY[:-1], "--lora-targets", targets)
    assert (status, out, err) == (2, "", (
        f"solve memory: error: --lora-targets '{targets}' matches lm_head of Qwen3-8B, which all-linear leaves out and "
        f"rft-solver does not count: {FORMS}\n"))


def test_the_api_refuses_lm_head_alike() -> None:
    with pytest.raises(solver.QueryError, match="^lora_targets 'lm_head' matches lm_head of Qwen3-8B, which "
                                                "all-linear leaves out and rft-solver does not count: give all-linear"):
        solver.plan("Qwen3-8B", gpu="A100-80GB", budget_gpus=6, max_model_len=16384, lora_rank=64,
                    lora_targets="lm_head")


# (3) Under either, the LoRA note names each transformers' modules.

MIXTRAL_LORA = """\
algorithm: {algorithm_type: grpo}
cluster: {node_num: 2, gpu_per_node: 8}
buffer: {batch_size: 64}
model:
  model_path: mistralai/Mixtral-8x7B-v0.1
  max_model_len: 4096
  lora_configs: [{lora_rank: 16, lora_alpha: 32, target_modules: '.*\\.w1'}]
explorer:
  rollout_model: {engine_num: 2, tensor_parallel_size: 4}
"""
NOTE_HEAD = ("with LoRA (model.lora_configs) the trainer holds gradients and optimizer states for the adapter alone: "
             "the verdict and the plans count LoRA rank 16's states (the frozen base's fp32 weights and the adapter's, "
             "unless --lora-rank gives another; its target_modules '.*\\.w1' matches ")
NOTE_TAIL = ("), and the tables, which measured full fine-tuning, vouch for it by inference and refute nothing")


def _mixtral_notes(cli: Cli, tmp_path: Path, release: str, *more: str) -> dict[str, str]:
    config = tmp_path / "mixtral-lora.yaml"
    config.write_text(MIXTRAL_LORA, encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--model-config", MIXTRAL_CONFIG, "--gpu", "h200", "--check",
                           "--trinity-version", release, *more, "--json")
    assert (status, err) == (0, ""), out
    current = json.loads(out)[0]["current"]
    return dict(zip(current["config_problem_codes"], current["config_problems"], strict=True))


def test_either_s_note_names_each_transformers_modules(cli: Cli, tmp_path: Path) -> None:
    # before: "... matches experts.w1 alone, on which alone its adapter is counted" (transformers 5's, where PEFT
    # refuses w1 without w3)
    assert _mixtral_notes(cli, tmp_path, "0.5.2")["lora-counted-as-full"] == (
        f"{NOTE_HEAD}experts.w1 alone under transformers 5 and experts.E.w1 alone under transformers 4, its adapter "
        f"counted on the larger of the two{NOTE_TAIL}")
    assert _mixtral_notes(cli, tmp_path, "0.5.1")["lora-counted-as-full"] == (
        f"{NOTE_HEAD}experts.E.w1 alone, on which alone its adapter is counted{NOTE_TAIL}")


def test_either_s_note_on_asked_targets_names_each_too(cli: Cli, tmp_path: Path) -> None:
    notes = _mixtral_notes(cli, tmp_path, "0.5.2", "--lora-targets", "w1,w3", "--lora-rank", "8")
    assert notes["lora-counted-as-full"].endswith(
        "--lora-rank 8 and --lora-targets '.*\\.(w1|w3)' count LoRA rank 8's states (the frozen base's fp32 weights "
        "and the adapter's on experts.w1 and experts.w3 alone under transformers 5 and experts.E.w1 and experts.E.w3 "
        "alone under transformers 4), in place of the config's own LoRA rank 16's on its target_modules, and the "
        "tables, which measured full fine-tuning, vouch for it by inference and refute nothing")


# (4) A regex on some of transformers 4's routed experts counts those.

FOUR_EXPERTS = ".*experts\\.[0-3]\\.(gate_proj|up_proj|down_proj)"
EVERY_EXPERT = ".*experts\\.\\d+\\.(gate_proj|up_proj|down_proj)"


@pytest.mark.parametrize(("release", "targets", "parameters"), [
    ("0.5.1", FOUR_EXPERTS, 25_952_256),  # 16 x 3 x (2048 + 768) x 4 experts x 48 layers; before: all 128's
    ("0.5.1", EVERY_EXPERT, 830_472_192),  # 16 x 3 x (2048 + 768) x 128 x 48
    ("0.5.2", FOUR_EXPERTS, 25_952_256),  # transformers 5's names: no module; 4's: those four
])
def test_a_regex_on_some_routed_experts_counts_those(cli: Cli, release: str, targets: str, parameters: int) -> None:
    asked = ("memory", "--model", "30B-A3B", "--gpu", "h100", "--gpus", "8", "--len", "8k", "--lora-rank", "16",
             "--trinity-version", release, "--json", "--lora-targets", targets)
    assert _memory(cli, *asked)[:2] == (parameters, targets)


def test_adapted_modules_counts_each_projection_s_experts_less_those_excluded_layer_by_layer() -> None:
    names = solver.load_catalog().model("Qwen3-30B-A3B").peft_names_of("separate")
    assert names.expert_count == 128
    layers = tuple(range(48))  # Qwen3-30B-A3B's, each an expert layer
    assert [adapted_modules(FOUR_EXPERTS, None, names, name, layers) for name in names.adapted if ".E." in name] == [
        4 * 48, 4 * 48, 4 * 48]
    assert adapted_modules(".*experts\\.(0|1)\\.gate_proj|.*experts\\.2\\.down_proj", None, names,
                           "mlp.experts.E.gate_proj", layers) == 2 * 48
    assert adapted_modules("all-linear", ".*experts\\.\\d\\d+\\..*", names, "mlp.experts.E.down_proj",
                           layers) == 10 * 48
    assert adapted_modules(".*layers\\.0\\.mlp\\.experts\\.5\\.up_proj", None, names, "mlp.experts.E.up_proj",
                           layers) == 1
    assert sum(1 for _ in layer_module_names("mlp.experts.E.up_proj", names)) == 128 * 128  # layers x experts


# (5) An unset variable in a LoRA key: refused in one line.

PLAIN = """\
algorithm: {algorithm_type: grpo}
cluster: {node_num: 1, gpu_per_node: 8}
buffer: {batch_size: 64}
model:
  model_path: Qwen/Qwen3-8B
  max_model_len: 4096
%s
explorer:
  rollout_model: {engine_num: 2, tensor_parallel_size: 2}
"""
UNSET = (": environment variable {0} is not set and '${{oc.env:{0}}}' has no default, and it decides the LoRA adapter "
         "the verdict and the plans count: set {0} as trinity run will have it (Trinity fails to load the config "
         "without it), or give it a default (${{oc.env:{0},DEFAULT}})")


@pytest.mark.parametrize(("lora", "key", "variable"), [
    ("  lora_configs: ${oc.env:S80_LORA}", "model.lora_configs", "S80_LORA"),  # before: no LoRA, full fine-tuning
    ("  lora_configs: [{lora_rank: '${oc.env:S80_RANK}'}]", "model.lora_configs[0].lora_rank", "S80_RANK"),  # 32
    ("  lora_configs: [{lora_rank: 8, target_modules: '${oc.env:S80_TARGETS}'}]",
     "model.lora_configs[0].target_modules", "S80_TARGETS"),  # before: all-linear counted
    ("  lora_configs: [{lora_rank: 8, path: '${oc.env:S80_PATH}'}]", "model.lora_configs[0].path", "S80_PATH"),
])
def test_an_unset_variable_in_a_lora_key_is_refused(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    lora: str, key: str, variable: str) -> None:
    monkeypatch.delenv(variable, raising=False)
    config = tmp_path / "trinity.yaml"
    config.write_text(PLAIN % lora, encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--check")
    assert (status, out, err) == (2, "", f"solve: error: --from-config {config}: {key}{UNSET.format(variable)}\n")
    with pytest.raises(ConfigError, match=f"^trinity.yaml: {re.escape(key)}: environment variable {variable} is not"):
        read_trinity_config(PLAIN % lora, "trinity.yaml", {})


def test_set_or_defaulted_or_beside_the_adapter_it_reads_as_before() -> None:
    rank = PLAIN % "  lora_configs: [{lora_rank: '${oc.env:S80_RANK}'}]"
    assert read_trinity_config(rank, "trinity.yaml", {"S80_RANK": "16"}).lora_rank == 16
    defaulted = PLAIN % "  lora_configs: [{lora_rank: '${oc.env:S80_RANK,24}'}]"
    assert read_trinity_config(defaulted, "trinity.yaml", {}).lora_rank == 24
    # lora_alpha decides nothing counted: its unset variable is the checks' to say, not a refusal here
    alpha = PLAIN % "  lora_configs: [{lora_rank: 8, lora_alpha: '${oc.env:S80_ALPHA}'}]"
    assert read_trinity_config(alpha, "trinity.yaml", {}).lora_rank == 8
    # no LoRA: verl's target_modules beside no LoRA key decides nothing either
    verl = PLAIN % "  lora_configs: null\nactor_rollout_ref: {model: {target_modules: '${oc.env:S80_TARGETS}'}}"
    assert read_trinity_config(verl, "trinity.yaml", {}).lora_rank == 0


def test_the_checks_resolve_a_lora_config_s_keys_before_matching_them() -> None:
    # before: the check matched the text '${oc.env:S80_T}' itself, "matches no module", set or not
    config = {"model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 4096,
                        "lora_configs": [{"lora_rank": 8, "target_modules": "${oc.env:S80_T}"}]},
              "cluster": {"node_num": 1, "gpu_per_node": 8}}
    model = solver.load_catalog().model("Qwen3-8B")
    assert solver.trinity.check_trinity_config(config, model, 4, environ={}) == [(
        "cannot check model.lora_configs[0].target_modules: environment variable S80_T is not set and "
        "'${oc.env:S80_T}' has no default: set S80_T as trinity run will have it (Trinity fails to load the config "
        "without it), or give it a default (${oc.env:S80_T,DEFAULT})")]
    assert solver.trinity.check_trinity_config(config, model, 4, environ={"S80_T": ".*\\.(q_proj|v_proj)"}) == []
    refused = solver.trinity.check_trinity_config(config, model, 4, environ={"S80_T": ".*q_norm"})
    assert len(refused) == 1 and refused[0].startswith(
        "model.lora_configs[0].target_modules '.*q_norm', on Qwen3-8B (a dense model), matches "
        "model.layers.N.self_attn.q_norm, which PEFT cannot adapt")


# (s93) A misspelt name beside others that match: refused, not dropped unsaid as PEFT's list would.

@pytest.mark.parametrize(("targets", "unmatched"), [
    ("q_proj,v_prj", "v_prj matches"),  # before: q_proj's adapter alone, planned and written without a word
    ("q_prj, v_prj,k_proj", "q_prj, v_prj match"),
])
def test_a_misspelt_name_in_a_list_of_targets_is_refused(cli: Cli, targets: str, unmatched: str):
    one = unmatched.endswith("matches")
    them = "it" if one else "them"
    problem = (f"--lora-targets '{targets}': {unmatched} no module of Qwen3-8B (model.layers.N.self_attn.{{q,k,v,o}}"
               "_proj, model.layers.N.mlp.{gate,up,down}_proj, model.embed_tokens and lm_head): correct "
               f"{them} or leave {them} out (PEFT would skip {them} unsaid)\n")
    assert cli(*MEMORY, "--lora-targets", targets) == (2, "", f"solve memory: error: {problem}")
    assert cli("--model", "8B", "--gpu", "4090", "--len", "8k", "--lora-rank", "16", "--lora-targets", targets) == (
        2, "", f"solve: error: {problem}")
    with pytest.raises(solver.QueryError, match=re.escape(f"lora_targets '{targets}': {unmatched} no module of ")):
        solver.plan("8B", gpu="4090", max_model_len=8192, lora_rank=16, lora_targets=targets)
    # spelt right, each name is counted
    assert cli(*MEMORY, "--lora-targets", targets.replace("prj", "proj"))[0] == 0
