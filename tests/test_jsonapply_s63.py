"""s63 jsonapply: ``solve --json`` carries what applies the best plan (``apply``: the config keys, the environment and
the keys only Trinity 0.6 takes), the same settings ``--emit trinity`` writes and the text's apply lines export; and
host memory is echoed in GiB, the unit of the figures beside it."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from option_reference import option_reference

import solver
from solver.results import ApplySettings

QUERIES = [
    ["--model", "8B", "--gpu", "a100", "--gpus", "4", "--len", "32768"],
    ["--model", "8B", "--gpu", "a100", "--gpus", "8", "--len", "131072", "--rollout-gpus", "4"],
    ["--model", "8B", "--gpu", "a100", "--gpus", "2", "--len", "8192", "--no-env"],
    ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--len", "200000"],
    ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "16", "--len", "200000", "--host-ram", "2TB"],
    ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--len", "100000"],
    ["--model", "4B", "--gpu", "a100-80g", "--gpus", "6", "--maximize", "len", "--rollout-gpus", "2"],
    ["--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "32k", "--rollout-gpus", "0",
     "--train-batch-size", "64"],
    ["--model", "32B", "--gpu", "h100", "--len", "32k", "--minimize", "gpus"],
    ["--model", "14B", "--gpu", "h20", "--gpus", "8", "--len", "64k", "--offload"],
    ["--model", "8B", "--gpu", "mi300x", "--gpus", "8", "--maximize", "len"],
    ["--model", "8B", "--gpu", "a100", "--gpus", "16", "--len", "160k", "--rollout-gpus", "8", "--node-gpus", "8"],
]
VERSIONS = [[], ["--trinity-version", "0.5"], ["--trinity-version", "0.6"]]


def _json_answer(cli: Any, *argv: str) -> dict[str, Any]:
    status, out, err = cli(*argv, "--json")
    assert status == 0, err
    (answer,) = json.loads(out)
    return answer


def _check_command_environment(fragment: str) -> dict[str, str]:
    """The variables the fragment's "To check" command sets before ``solve``: the environment it was made with."""
    (command,) = [line[4:] for line in fragment.splitlines()
                  if line.startswith("#   ") and " solve --from-config" in line]
    words = shlex.split(command)
    prefix = words[:words.index("solve")]
    return dict(word.split("=", 1) for word in prefix)


def _exports(text: str) -> dict[str, str]:
    """The ``export NAME=VALUE`` lines of the text's apply block, in their order."""
    return dict(line[len("export "):].split("=", 1) for line in text.splitlines() if line.startswith("export "))


@pytest.mark.parametrize("version", VERSIONS, ids=["no-version", "0.5", "0.6"])
@pytest.mark.parametrize("query", QUERIES, ids=[" ".join(query[1:4:2]) + f"-{i}" for i, query in enumerate(QUERIES)])
def test_the_jsons_apply_is_what_emit_trinity_writes(cli, query: list[str], version: list[str]):
    answer = _json_answer(cli, *query, *version)
    status, fragment, _ = cli(*query, *version, "--emit", "trinity")
    assert status == 0
    assert list(answer["apply"]) == ["config", "environment", "trinity_06_keys"]
    assert answer["apply"]["config"] == yaml.safe_load(fragment)
    assert list(answer["apply"]["config"]) == list(yaml.safe_load(fragment))  # in the fragment's order
    assert answer["apply"]["environment"] == _check_command_environment(fragment)
    for name, value in answer["apply"]["environment"].items():
        assert f"{name}={value}" in fragment


@pytest.mark.parametrize("query", QUERIES, ids=[" ".join(query[1:4:2]) + f"-{i}" for i, query in enumerate(QUERIES)])
def test_without_a_release_the_06_keys_are_what_05_leaves_out(cli, query: list[str]):
    both = _json_answer(cli, *query)["apply"]
    for_05 = _json_answer(cli, *query, "--trinity-version", "0.5")["apply"]
    for_06 = _json_answer(cli, *query, "--trinity-version", "0.6")["apply"]
    assert for_05["trinity_06_keys"] == for_06["trinity_06_keys"] == []
    assert for_06["config"] == both["config"]
    without = json.loads(json.dumps(both["config"]))
    for path in both["trinity_06_keys"]:
        section = without
        for name in path[:-1]:
            section = section[name]
        del section[path[-1]]
    assert without == for_05["config"]


def test_offload_without_a_release_names_the_trainers_own_flags(cli):
    apply = _json_answer(cli, "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--len", "200000")["apply"]
    assert apply["trinity_06_keys"] == [["trainer", "param_offload"], ["trainer", "optimizer_offload"],
                                        ["trainer", "offload_policy"]]
    assert apply["environment"] == {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1",
                                    "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}


@pytest.mark.parametrize("query", QUERIES, ids=[" ".join(query[1:4:2]) + f"-{i}" for i, query in enumerate(QUERIES)])
def test_the_texts_exports_are_the_jsons_environment(cli, query: list[str]):
    status, text, _ = cli(*query)
    assert status == 0
    assert list(_exports(text).items()) == list(_json_answer(cli, *query)["apply"]["environment"].items())


def _flat(config: dict[str, Any], path: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    """`config`'s leaves by their key paths."""
    flat: dict[tuple[str, ...], Any] = {}
    for name, value in config.items():
        flat.update(_flat(value, (*path, name)) if isinstance(value, dict) else {(*path, name): value})
    return flat


def _apply_keys(text: str) -> dict[tuple[str, ...], Any]:
    """The keys of the text's apply lines, their shorthand (``{actor,ref}``, a flow mapping) written out."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("apply ")) + 1
    keys: dict[tuple[str, ...], Any] = {}
    for line in lines[start:lines.index("", start)]:
        if line.startswith(("#", "export ")):
            continue
        match = re.fullmatch(r"((?:[^:{]|\{[^}]*\})+): (.*)", line)
        assert match, line
        paths: list[tuple[str, ...]] = [()]
        for part in match[1].split("."):
            names = [name.strip() for name in part[1:-1].split(",")] if part.startswith("{") else [part]
            paths = [(*path, name) for path in paths for name in names]
        value = yaml.safe_load(match[2])
        for path in paths:
            keys.update(_flat(value, path) if isinstance(value, dict) else {path: value})
    return keys


@pytest.mark.parametrize("query", QUERIES, ids=[" ".join(query[1:4:2]) + f"-{i}" for i, query in enumerate(QUERIES)])
def test_the_texts_apply_keys_are_the_jsons_config_but_the_cluster(cli, query: list[str]):
    status, text, _ = cli(*query)  # no --trinity-version: both releases' keys (test_jsonapply2_s64: each release's)
    assert status == 0
    config = _flat(_json_answer(cli, *query)["apply"]["config"])
    assert _apply_keys(text) == {path: value for path, value in config.items()
                                 if path[0] not in ("cluster", "explorer", "mode", "buffer")}


def test_the_apply_lines_export_vllms_variable_past_llamas_native_context(cli):
    status, text, _ = cli("--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--len", "200000")
    assert status == 0
    lines = text.splitlines()
    start = lines.index("export VLLM_ALLOW_LONG_MAX_MODEL_LEN=1") - 1
    assert lines[start:start + 4] == [
        ("# vLLM's rollout takes a max_model_len past the 131072 it derives from the model's config only with this, "
         "before Ray starts:"),
        "export VLLM_ALLOW_LONG_MAX_MODEL_LEN=1",
        "# before Ray starts:",
        "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
    ]
    # on several nodes, on each of them, as Env's
    status, text, _ = cli("--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "16", "--len", "200000")
    assert status == 0 and ("# vLLM's rollout takes a max_model_len past the 131072 it derives from the model's "
                            "config only with this, on every node of the job before `ray start` there:\n"
                            "export VLLM_ALLOW_LONG_MAX_MODEL_LEN=1\n"
                            ) in text
    # within the native context: no such line
    status, text, _ = cli("--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--len", "131072")
    assert status == 0 and "VLLM_ALLOW_LONG_MAX_MODEL_LEN" not in text and "export PYTORCH_CUDA_ALLOC_CONF" in text


@pytest.mark.parametrize(("length", "exported"), [("100k", False), ("160k", True)])
def test_a_linear_scalings_export_starts_past_the_length_vllm_derives_not_the_native_one(
        cli, length: str, exported: bool):
    """linear-model: native 32768, its own linear scaling of factor 4, which vLLM multiplies: 131072."""
    query = ("--model-config", "docs/examples/linear-model", "--gpu", "h100", "--gpus", "8", "--len", length)
    status, text, _ = cli(*query)
    assert status == 0
    environment = _json_answer(cli, *query)["apply"]["environment"]
    assert ("VLLM_ALLOW_LONG_MAX_MODEL_LEN" in environment) is exported
    assert ("# vLLM's rollout takes a max_model_len past the 131072 it derives from the model's config only with "
            "this, before Ray starts:" in text.splitlines()) is exported
    # The max_model_len row's caution says the same of the length, from the same rule.
    said = ("vLLM's rollout refuses it, past the 131072 it derives from the model's config, unless "
            "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set" if exported
            else "vLLM's rollout takes it: the longest length it derives from the model's config is 131072;")
    assert said in " ".join(text.split())
    (caution,) = [caution for caution in _json_answer(cli, *query)["plans"][0]["cautions"] if "RoPE scaling" in caution]
    assert said in caution


def test_no_plan_has_no_apply(cli):
    status, out, _ = cli("--model", "32B", "--gpu", "a100", "--gpus", "1", "--len", "32k", "--no-estimate", "--json")
    (answer,) = json.loads(out)
    assert status == 1 and answer["plans"] == [] and "apply" not in answer


def test_top_k_gives_the_best_plan_alone_an_apply(cli):
    status, out, _ = cli("--model", "8B", "--gpu", "a100", "--gpus", "8", "--len", "32k", "--top", "3", "--json")
    (answer,) = json.loads(out)
    assert status == 0 and len(answer["plans"]) == 3
    assert answer["apply"]["config"]["trainer"]["ulysses_sequence_parallel_size"] == answer["plans"][0]["sp"]
    assert all("apply" not in plan for plan in answer["plans"])


def test_the_apis_answers_leave_apply_out_and_trinity_settings_give_it(cli):
    (answer,) = solver.plan("llama-3.1-8b", gpu="h100", max_model_len=200000, budget_gpus=8)
    assert answer.apply is None and "apply" not in answer.as_json()
    printed = _json_answer(cli, "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--len", "200000")
    assert solver.trinity_settings(answer).model_dump(mode="json") == printed["apply"]
    # the same answer but for the words naming an option (docs/api.md, "Words"): the API's keyword, the command's flag
    in_command_words = json.dumps(answer.as_json()).replace("margin=", "--margin ")
    assert {key: value for key, value in printed.items() if key != "apply"} == json.loads(in_command_words)


def test_an_answer_read_back_with_its_apply_is_equal_and_hashable(cli):
    _, out, _ = cli("--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--len", "200000", "--json")
    first, second = (solver.Answer.model_validate(answer) for answer in json.loads(out) * 2)
    assert isinstance(first.apply, ApplySettings) and first == second and hash(first) == hash(second)
    assert first.as_json() == json.loads(out)[0]


def test_trinity_version_goes_with_json_alone(cli):
    query = ["--model", "8B", "--gpu", "a100", "--gpus", "8", "--len", "32k"]
    assert cli(*query, "--trinity-version", "0.5")[0] == 0  # the text's apply lines follow it too (s64)
    assert _json_answer(cli, *query, "--trinity-version", "0.5")["apply"]["trinity_06_keys"] == []


def test_emit_with_json_points_to_apply(cli):
    assert cli("--model", "8B", "--gpu", "a100", "--emit", "trinity", "--json") == (
        2, "", ("solve: error: --emit trinity prints YAML: drop --json (its apply carries the same settings) or "
                "--emit\n"))


def test_a_rollout_the_configs_engines_cannot_take_leaves_apply_out_of_the_json(cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {engine_num: 1, tensor_parallel_size: 3}}\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpus", "8", "--exact", "--gpu", "h100", "--json")
    (answer,) = json.loads(out)
    nodes = ("solve: note: trinity.yaml's cluster holds 8 GPUs in all (1 node of 8); the plan takes 8 trainer + 8 "
             "rollout GPUs on 2 nodes: give the config cluster.node_num 2, or plan within its 8 with --total-gpus 8 "
             "in place of --gpus\n")
    assert (status, err) == (0, nodes) and answer["plans"] and "apply" not in answer  # --emit refuses it
    assert answer["apply_left_out"].startswith(f"--from-config {config}: ")  # why: test_jsonapply2_s64


def test_from_config_json_apply_is_what_emit_writes_with_the_configs_keys(cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}\n"
                      "trainer:\n  trainer_config:\n    actor_rollout_ref:\n      actor:\n"
                      "        ppo_max_token_len_per_gpu: 999999\n", encoding="utf-8")
    query = ["--from-config", str(config), "--gpu", "a100-80g"]
    status, fragment, _ = cli(*query, "--emit", "trinity")
    apply = _json_answer(cli, *query)["apply"]
    assert status == 0 and apply["config"] == yaml.safe_load(fragment)
    role = apply["config"]["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]
    assert role["ppo_max_token_len_per_gpu"] == apply["config"]["trainer"]["max_token_len_per_gpu"] == 32768
    assert apply["config"]["cluster"] == {"node_num": 1, "gpu_per_node": 8}


# Units: host memory is echoed in GiB, beside figures in GiB.

def test_host_ram_given_in_tb_is_echoed_in_gib(cli):
    status, text, _ = cli("--model", "8B", "--gpu", "a100", "--gpus", "8", "--len", "64k", "--offload",
                          "--host-ram", "2TB")
    assert status == 0
    (line,) = [line for line in text.splitlines() if line.startswith("host memory")]
    # (No release named: every rank loads the model at start-up, more than training holds; the row goes on to say
    # that --trinity-version counts a release's own loading.)
    assert re.fullmatch(r"host memory +\d+\.\d GiB per node for Offload \(at start-up, every rank loading the model; "
                        r"\d+\.\d while training\), within --host-ram 2048 GiB; --trinity-version", line)


@pytest.mark.parametrize("given", ["512", "512G", "512GB", "512GiB", "512Gi", "0.5TB", "524288MiB"])
def test_every_form_of_512_gib_is_echoed_alike(cli, given: str):
    status, text, _ = cli("--model", "8B", "--gpu", "a100", "--gpus", "8", "--len", "64k", "--offload",
                          "--host-ram", given)
    assert status == 0 and "within --host-ram 512 GiB" in text and not re.search(r"--host-ram [\d.]+GB", text)


def test_a_need_over_host_ram_names_it_in_gib(cli):
    status, out, _ = cli("memory", "--model", "8B", "--gpu", "a100", "--gpus", "8", "--len", "64k", "--offload",
                         "--host-ram", "64G")
    assert status == 1 and "more than --host-ram 64 GiB: it does not train there" in " ".join(out.split())


def test_the_helps_say_g_is_gib_for_both_memory_flags(cli, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("COLUMNS", "1000")  # argparse wraps at the terminal's width, breaking nvidia-smi at its hyphen
    for command in ([], ["memory"]):
        _, out, _ = cli(*command, "--help")
        flat = " ".join(out.split())
        assert "--host-ram GiB host memory per node for the trainer, in GiB: 512, 512G, 2TB or free -m's 64214MiB" \
               in flat
        assert "GB as sold (64) or nvidia-smi's total (65536MiB); its plans are estimates" in flat
    # docs/cli.md's option reference, each in full (session 93)
    assert "--host-ram GiB: host memory per node the trainer can have, in GiB: 512, 512G, 512GB and 512GiB are " \
           "each 512 GiB (RAM is sold in binary GB), 2TB is 2048 GiB, free -m's 64214MiB is 62.7 GiB" \
           in option_reference()
    assert "GB as sold (64, 64G, 64GB), taken as 64 GiB, as --host-ram takes GB; or the driver's figure, " \
           "exactly: nvidia-smi's total (65536MiB) or GiB (64GiB: 65536 MiB; 79.19GiB, torch's total " \
           "capacity)" in option_reference()


@pytest.mark.parametrize("given", ["24", "24G", "24GB"])
def test_gpu_memory_in_gb_is_taken_as_gib(cli, given: str):
    status, _, err = cli("--gpu", "mycard", "--gpu-memory", given, "--model", "1.7B", "--gpus", "1", "--len", "4096")
    assert status == 0 and err.startswith("solve: note: --gpu-memory 24GB is taken as 24 GiB, and as sold it borrows no ")
    assert cli("--gpu", "mycard", "--gpu-memory", "24GiB", "--model", "1.7B", "--gpus", "1", "--len", "4096")[::2] == (
        0, "")  # the driver's figure: no note


def test_host_memory_given_in_64214mib_is_the_62_7_gib_the_help_says(cli):
    # Qwen3-4B without Offload loads on 2 GPUs in 51.1 GiB, within 62.7; with Offload it needs 77.5 or more.
    status, text, _ = cli("--model", "4B", "--gpu", "a100", "--gpus", "8", "--len", "32k", "--offload",
                          "--host-ram", "64214MiB")
    assert status == 1 and ("trains with --offload --host-ram 62.7 GiB (without --offload: Env + SP=2 on 2 GPUs "
                            "trains it, documented)") in " ".join(text.split())
