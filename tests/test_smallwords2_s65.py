"""Small wrong words (session 65, smallwords2): a Qwen model whose native context is 131072 or more, planned past
it, is past its native context, not a validated one; --write's text names the config's keys the written copy
changes too, as --json's apply holds them; only the very ``# prompt + response`` comment the example config has is
dropped as stale; a long --model-config name folds in a map's model column; --model-config's help says a folder
is read too, and tables --check's help says what it checks."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from solver.render.maps import MODEL_NAME_WIDTH
from solver.tables import load_catalog

Cli = Callable[..., tuple[int, str, str]]

ROOT = Path(__file__).resolve().parent.parent
QWEN3_8B_CONFIG = ROOT / "tests" / "data" / "hf-configs" / "Qwen3-8B.json"

# (1) Past a native context of 131072 or more: "past the native N" in every view.

LONG_NATIVE = ("--model", "4B-Instruct-2507", "--gpu", "h200", "--gpus", "8", "--maximize", "len")
"""Qwen3-4B-Instruct-2507 (native 262144, which Qwen's validated YaRN does not reach past) at its longest on 8
H200s: 397312 tokens."""
CHECK_OR_PLAN = "check the model's quality at this length, or plan --len 262144"


def test_a_qwen_model_of_a_long_native_context_is_past_its_native_one_in_every_view(cli: Cli):
    status, out, _ = cli(*LONG_NATIVE, "--top", "2")
    assert status == 0 and "validated 262144" not in out and "\nvalidated " not in out
    assert "\nmax_model_len  397312, past the native 262144 (YaRN rope scaling, factor 1.515625; " in out
    assert "\nnative         at 262144, the cheapest plan is Env + SP=8 on 8 GPUs (" in out
    assert f"\n# max_model_len past the native 262144: {CHECK_OR_PLAN}\n" in out
    assert f"\n^ past the native 262144: {CHECK_OR_PLAN}\n" in out
    status, fragment, _ = cli(*LONG_NATIVE, "--emit", "trinity")
    assert status == 0 and fragment.splitlines()[1:3] == [
        "# plan: Env + Offload + SP=8 on 8 H200-141GB trainer GPUs, max_model_len 397312, past the native",
        f"# 262144 ({CHECK_OR_PLAN})"]
    status, out, _ = cli(*LONG_NATIVE, "--json")
    [answer] = json.loads(out)
    best = answer["plans"][0]
    assert status == 0 and "validated 262144" not in out and best["past_validated_length"] == 262144
    assert "which its native 262144 already covers" in " ".join(best["cautions"])


def test_a_length_past_what_qwens_yarn_validates_is_still_past_the_validated_one(cli: Cli):
    status, out, _ = cli("--model", "qwen3-8b", "--gpu", "h800", "--len", "160k")
    assert status == 0 and "\nmax_model_len  163840, past the validated 131072 (" in out


# (2) --write's text names the config's own keys the written copy changes too.

ROLE_KEYS_CONFIG = ("algorithm: {algorithm_type: grpo}\n"
                    "model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 16384\ncluster:\n  node_num: 1\n"
                    "  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 4\ntrainer:\n"
                    "  ulysses_sequence_parallel_size: 2\n  trainer_config:\n    actor_rollout_ref:\n      actor:\n"
                    "        ppo_max_token_len_per_gpu: 32768\n        fsdp_config: {param_offload: true}\n")
ACTOR = "trainer.trainer_config.actor_rollout_ref.actor"


def test_write_names_the_configs_keys_its_copy_changes_too_as_json_apply_holds_them(cli: Cli, tmp_path: Path):
    config, written = tmp_path / "trinity.yaml", tmp_path / "written.yaml"
    config.write_text(ROLE_KEYS_CONFIG, encoding="utf-8")
    asked = ("--from-config", str(config), "--gpu", "a100", "--len", "32768")
    status, out, _ = cli(*asked, "--write", str(written))
    assert status == 0 and out.endswith(
        "trainer.max_token_len_per_gpu: 16384\n"
        "# and these keys of trinity.yaml, which the plan changes too (after each, its value now):\n"
        f"{ACTOR}.ppo_max_token_len_per_gpu: 16384  # now 32768\n{ACTOR}.fsdp_config.param_offload: false  # now true\n"
        f"\nwrote {written}\n")
    copy = written.read_text(encoding="utf-8")
    assert "        ppo_max_token_len_per_gpu: 16384\n" in copy and "{param_offload: false}" in copy
    status, out, _ = cli(*asked, "--json")
    actor = json.loads(out)[0]["apply"]["config"]["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]
    assert status == 0 and actor == {"ppo_max_token_len_per_gpu": 16384, "fsdp_config": {"param_offload": False}}


# (3) Only the example config's very "# prompt + response" comment goes as stale.

SUM_CONFIG = ("algorithm: {{algorithm_type: grpo}}\n"
              "model:\n  model_path: Qwen/Qwen3-8B\n  max_prompt_tokens: 2048\n  max_response_tokens: 30720\n"
              "  max_model_len: 32768  {comment}\ncluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n"
              "  rollout_model:\n    engine_num: 2\n    tensor_parallel_size: 1\n")


def _written_length_line(cli: Cli, tmp_path: Path, comment: str) -> str:
    config, written = tmp_path / "config.yaml", tmp_path / "written.yaml"
    config.write_text(SUM_CONFIG.format(comment=comment), encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--maximize", "len", "--write", str(written))
    assert status == 0, err
    [line] = [line for line in written.read_text(encoding="utf-8").splitlines() if "max_model_len:" in line]
    return line


def test_write_drops_the_example_configs_sum_comment_where_it_is_no_longer_so(cli: Cli, tmp_path: Path):
    assert _written_length_line(cli, tmp_path, "# prompt + response") == "  max_model_len: 50176"


@pytest.mark.parametrize("comment", ["# response budget raised for the prompt templates",
                                     "# prompt + response, set by the team: ask before changing",
                                     "# not prompt + response"])
def test_write_keeps_a_users_own_comment_naming_the_prompt_and_the_response(cli: Cli, tmp_path: Path, comment: str):
    assert _written_length_line(cli, tmp_path, comment) == f"  max_model_len: 50176  {comment}"


def test_the_example_config_has_the_very_comment_write_drops():
    assert "  max_model_len: 32768  # prompt + response\n" in (ROOT / "docs" / "examples" / "trinity.yaml").read_text(
        encoding="utf-8")


# (4) A long --model-config name folds in a map's model column.

def _map_lines(cli: Cli, tmp_path: Path, name: str) -> list[str]:
    folder = tmp_path / re.sub(r"\W", "-", name)
    folder.mkdir()
    config = json.loads(QWEN3_8B_CONFIG.read_text(encoding="utf-8")) | {"_name_or_path": f"my-org/{name}"}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    status, out, err = cli("map", "--model-config", str(folder), "--gpu", "h100", "--gpus-up-to", "32")
    assert status == 0, err
    return [line for line in out.splitlines() if line[:1] in "┏┃┡│└"]


def test_a_long_model_config_name_folds_in_the_maps_model_column(cli: Cli, tmp_path: Path):
    long_name = "qwen3-8b-grpo-math-reasoning-long-context-sft-checkpoint-step-12000"
    folded, whole = _map_lines(cli, tmp_path, long_name), _map_lines(cli, tmp_path, "q" * MODEL_NAME_WIDTH)
    # was 167 for the long name; 127 (five budget columns) before s67 fit a map past a node within 120 columns
    assert max(map(len, folded)) == max(map(len, whole)) == 110
    names = [line.split("│")[1].strip() for line in folded if line.startswith("│")]
    assert "".join(names) == long_name and len(names) == 3


def test_the_catalogues_names_fit_the_maps_model_column_whole():
    assert max(len(model.name) for model in load_catalog().models) == MODEL_NAME_WIDTH


# (5) Help: --model-config reads a folder too; tables --check says what it checks.

@pytest.mark.parametrize("command", [(), ("tables",), ("map",), ("memory",), ("calibrate",)])
def test_every_model_config_help_says_a_checkpoint_folder_is_read_too(cli: Cli, command: tuple[str, ...]):
    status, out, _ = cli(*command, "--help")
    assert status == 0 and "a local Hugging Face config.json (or the checkpoint folder holding it)" in " ".join(
        out.split())


def test_memory_reads_a_model_config_folder_as_its_help_says(cli: Cli, tmp_path: Path):
    (tmp_path / "config.json").write_text(QWEN3_8B_CONFIG.read_text(encoding="utf-8"), encoding="utf-8")
    status, out, err = cli("memory", "--model-config", str(tmp_path), "--gpu", "h100", "--gpus", "8", "--len", "8k")
    assert (status, err) == (0, "") and out.startswith(f"{tmp_path.name} (8.2B parameters) on 8 x H100-80GB")


def test_tables_check_help_says_what_it_checks(cli: Cli):
    status, out, _ = cli("tables", "--help")
    assert status == 0 and "contradict the semantics" not in out
    assert ("--check report the cells that contradict the others as they are read (a setting is the first that "
            "trained; memory grows with the length, shrinks on more GPUs; models of one shape and GPU types of one "
            "memory agree): exit 1 if any") in " ".join(out.split())
