"""Small slips of session 76's personas (helper smallslips23): the check command in a fragment's header names the
``--model-config`` a model was planned from (``--emit trinity`` without ``--from-config``, ``solve cluster
--emit-dir``'s job of a ``model_config``); rules.py keeps no unused wording of how the tables speak for LoRA and a
critic; ``solve cluster``'s table notes an estimated plan's predicted memory; a misspelt GPU type gets "did you mean";
``--check`` on a config that has the plan says --write would change only comments."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

HF_CONFIGS = Path(__file__).parent / "data" / "hf-configs"
DEEPSEEK = HF_CONFIGS / "DeepSeek-V2-Lite.json"

Cli = Callable[..., tuple[int, str, str]]

# 1. The check command keeps --model-config: a config naming the model by a Hugging Face id the planner does not know
#    is checked as the plan was made.

ENV = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"


def _check_line(fragment: str) -> str:
    lines = fragment.splitlines()
    return lines[lines.index("# To check your config once these keys are in it (CONFIG: its file), as this plan was "
                             "made:") + 1]


def _merged_config(tmp_path: Path, fragment: str) -> Path:
    """A config of DeepSeek-V2-Lite by its Hugging Face id, with `fragment`'s keys merged in."""
    keys = yaml.safe_load(fragment)
    config = {"model": {"model_path": "deepseek-ai/DeepSeek-V2-Lite", "max_prompt_tokens": 2048,
                        "max_response_tokens": 6144, **keys.pop("model")},
              "cluster": {"node_num": 1, "gpu_per_node": 8}, **keys}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _run_check(cli: Cli, line: str, config: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    words = shlex.split(line.removeprefix("#   "))
    assert words[:2] == [ENV, "solve"]
    monkeypatch.setenv(*ENV.split("=", 1))
    return cli(*[str(config) if word == "CONFIG" else word for word in words[2:]])


def test_emit_trinity_of_a_model_config_checks_with_it(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    status, out, _ = cli("--model-config", str(DEEPSEEK), "--gpu", "h100", "--gpus", "8", "--len", "8192", "--emit",
                         "trinity")
    line = _check_line(out)
    assert status == 0 and line == (f"#   {ENV} solve --from-config CONFIG --check --gpu H100-80GB --model-config "
                                    f"{DEEPSEEK} --critic none")
    config = _merged_config(tmp_path, out)
    status, out, err = _run_check(cli, line, config, monkeypatch)
    assert status == 0 and err == "" and "config.yaml runs Env on 7 trainer GPUs at 8192 tokens" in out
    # Without it (what the header printed before), the check refuses the model's id.
    status, _, err = _run_check(cli, line.replace(f" --model-config {DEEPSEEK}", ""), config, monkeypatch)
    assert status == 2 and err.startswith(f"solve: error: --from-config {config}: model.model_path: unknown model "
                                          "'DeepSeek-V2-Lite': give --model M")


def test_emit_trinity_of_a_catalogue_model_still_has_no_model_option(cli: Cli):
    status, out, _ = cli("--model", "8B", "--gpu", "a100", "--gpus", "4", "--len", "32k", "--emit", "trinity")
    assert status == 0 and _check_line(out) == "#   solve --from-config CONFIG --check --gpu A100-80GB --critic none"


def test_emit_dir_check_names_a_jobs_model_config(cli: Cli, tmp_path: Path):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "config.json").write_text(DEEPSEEK.read_text(encoding="utf-8"), encoding="utf-8")
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: a, gpu: h100, nodes: 1, gpus_per_node: 8}\njobs:\n"
                     "  - {name: ds, model_config: models, max_model_len: 8192}\n"
                     "  - {name: q, model: 8B, max_model_len: 8192}\n", encoding="utf-8")
    status, _, _ = cli("cluster", str(fleet), "--emit-dir", str(tmp_path / "out"))
    ds, q = ((tmp_path / "out" / f"{job}.yaml").read_text(encoding="utf-8") for job in ("ds", "q"))
    assert status == 0 and _check_line(ds) == (
        f"#   {ENV} solve --from-config CONFIG --check --gpu H100-80GB --model-config {tmp_path}/models/config.json "
        "--critic none")
    assert _check_line(q) == f"#   {ENV} solve --from-config CONFIG --check --gpu H100-80GB --critic none"


# 2. How the tables speak for LoRA and a critic is worded once, by solver.render.memory: rules.py keeps no unused copy.

def test_rules_keeps_no_unused_wording_of_how_the_tables_speak():
    import solver.rules

    assert not hasattr(solver.rules, "LORA_EVIDENCE") and not hasattr(solver.rules, "CRITIC_EVIDENCE")
    named = [path.name for path in (Path(__file__).parent.parent / "solver").rglob("*.py")
             if "_EVIDENCE`" in path.read_text(encoding="utf-8")]
    assert named == []


# 3. solve cluster's table notes each estimated plan's predicted memory and room, as solve's memory row gives them.

def test_cluster_table_notes_an_estimated_plans_memory(cli: Cli, tmp_path: Path):
    (tmp_path / "ds.json").write_text(DEEPSEEK.read_text(encoding="utf-8"), encoding="utf-8")
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: a, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}\njobs:\n"
                     "  - {name: doc, model: 8B, max_model_len: 32768}\n"
                     "  - {name: ds, model_config: ds.json, max_model_len: 8192}\n", encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet))
    table_end = out.index("┘\n") + 2
    assert status == 0 and "│ documented   " in out and "│ estimated, extrapolated │" in out
    assert out[table_end:].splitlines()[:2] == [
        "ds: 73.1 GiB per GPU predicted, 0.4 GiB to spare (memory model)",  # none for doc's documented plan
        ("cost: the job's relative step time, as solve gives its plan (compare within one model and GPU type: 1 is its "
         "own model's vanilla step on one GPU)")]
    status, out, _ = cli("cluster", str(fleet), "--json")
    [ds] = [placement["plan"] for placement in json.loads(out)["placements"] if placement["job"] == "ds"]
    assert (ds["memory_gb"], ds["headroom_gb"], ds["source"]) == (73.14, 0.39, None)


# 5. --check on a config that has the plan's keys says --write would change only comments, not "with the plan applied".

HAS_THE_PLAN = """model:
  model_path: Qwen/Qwen3-8B
  max_prompt_tokens: 2048
  max_response_tokens: 6144
  max_model_len: 8192
algorithm:
  algorithm_type: grpo
cluster:
  node_num: 1
  gpu_per_node: 8
trainer:
  ulysses_sequence_parallel_size: 1
  max_token_len_per_gpu: 16384
"""
"""Qwen3-8B at 8192 tokens on 7 trainer H100s with the best plan's keys (Env on 7 GPUs, SP 1, a budget of 16384)."""

APPLY = "apply          the lines below (dotted keys; --emit trinity writes YAML); "


def _apply_row(out: str) -> str:
    lines = out.splitlines()
    at = next(index for index, line in enumerate(lines) if line.startswith("apply "))
    return " ".join([lines[at], *(line.strip() for line in lines[at + 1:] if line.startswith("    "))])


@pytest.mark.parametrize(("text", "said"), [
    (HAS_THE_PLAN, "q.yaml has these keys already: --write FILE writes a copy that differs in its comments alone"),
    # Without its token budget, which --write writes out: a copy that changes a key.
    (HAS_THE_PLAN.replace("  max_token_len_per_gpu: 16384\n", ""),
     "--write FILE writes a copy of q.yaml with the plan applied"),
    (HAS_THE_PLAN.replace("max_model_len: 8192", "max_model_len: 8192  # prompt + response"),  # a comment alone
     "q.yaml has these keys already: --write FILE writes a copy that differs in its comments alone"),
])
def test_check_says_when_write_would_change_only_comments(cli: Cli, tmp_path: Path, text: str, said: str):
    config = tmp_path / "q.yaml"
    config.write_text(text, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--check", "--gpu", "h100")
    assert status == 0 and "plan           Env on 7 of 7 GPUs, with 1 rollout GPU" in out
    assert _apply_row(out) == APPLY + said
    status, out, _ = cli("--from-config", str(config), "--check", "--gpu", "h100", "--write", str(tmp_path / "w.yaml"))
    assert _apply_row(out) == APPLY.rstrip("; ")  # --write names no next step
    written = yaml.safe_load((tmp_path / "w.yaml").read_text(encoding="utf-8"))
    assert (written == yaml.safe_load(text)) == ("already" in said)  # the copy's keys and values: as said


def test_check_on_other_gpus_than_the_configs_offers_no_write_step(cli: Cli, tmp_path: Path):
    # The best plan on 4 GPUs, not the config's 7: the patch refuses it, as --write refuses --gpus 4 (s85), so no
    # "already" and no --write offered.
    config = tmp_path / "q.yaml"
    config.write_text(HAS_THE_PLAN, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--check", "--gpu", "h100", "--gpus", "4")
    assert status == 0 and " ".join(out.split()).count(
        f"{' '.join(APPLY.split())} q.yaml's cluster gives the trainer 7 GPUs, where these lines would run: set it to "
        "give 4, this plan's (cluster.node_num x cluster.gpu_per_node, less the rollout's GPUs)") == 1
