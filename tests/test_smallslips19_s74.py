"""Small slips a session's reviews left, mended: the API refuses an empty GPU or model name in the command's words,
naming its keyword; a job's name says it takes ASCII letters only (a pool's takes any); solve --json echoes a whole
--host-ram as solve map --json does; the notes on the input come before the one on a file not written; '-' as a file
to read is refused naming /dev/stdin, which reads standard input; --write notes the critic's engine's offload flags
as it notes trainer's; a LoRA rank vLLM refuses as max_lora_rank is refused where a vLLM rollout starts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from config_cases import one_node_rollout

import solver
from solver.tables import QueryError

Cli = Callable[..., tuple[int, str, str]]


def _example_config() -> solver.trinity.TrinityConfig:
    """docs/examples/trinity.yaml, read."""
    path = Path(__file__).parent.parent / "docs" / "examples" / "trinity.yaml"
    return solver.trinity.read_trinity_config(path.read_text(encoding="utf-8"), path.name, {})


@pytest.mark.parametrize(("call", "message"), [
    (lambda: solver.plan("4B", gpu="", max_model_len=4096),
     "an empty name in gpu='': give a GPU type, or several in a list (gpu=['a100', 'h100'])"),
    (lambda: solver.plan("4B", gpu="a100,", max_model_len=4096),
     "an empty name in gpu='a100,': give a GPU type, or several in a list (gpu=['a100', 'h100'])"),
    (lambda: solver.plan("4B", gpu=["a100", " "], max_model_len=4096),
     "an empty name in gpu=['a100', ' ']: give a GPU type, or several in a list (gpu=['a100', 'h100'])"),
    (lambda: solver.plan("", gpu="a100", max_model_len=4096), "an empty name in model='': give a model (model='4B')"),
    (lambda: solver.estimate_memory("4B", "", 8, 4096), "an empty name in gpu='': give a GPU type (gpu='a100')"),
    (lambda: solver.memory_answer(" ", "a100", 8, 4096), "an empty name in model=' ': give a model (model='4B')"),
    (lambda: solver.map_plans(["4B", ""], gpus_up_to=8),
     "an empty name in model=['4B', '']: give a model, or several in a list (model=['4B', '8B'])"),
    (lambda: solver.map_plans("4B", gpu="", gpus_up_to=8),
     "an empty name in gpu='': give a GPU type, or several in a list (gpu=['a100', 'h100'])"),
    (lambda: solver.api.config_query(solver.load_catalog(), _example_config(), gpu=""),  # said "unknown GPU ''"
     "an empty name in gpu='': give a GPU type, or several in a list (gpu=['a100', 'h100'])"),
])
def test_the_api_refuses_an_empty_name_in_the_commands_words(call: Callable[[], object], message: str):
    with pytest.raises(QueryError) as refused:
        call()
    assert str(refused.value) == message


def test_the_command_says_the_same_words_without_a_keyword(cli: Cli):
    status, out, err = cli("memory", "--gpu", "", "--model", "4B", "--gpus", "8", "--max-model-len", "4096")
    assert (status, out, err.splitlines()[-1]) == (
        2, "", "solve memory: error: argument --gpu: an empty name in '': give a GPU type (a100)")


CLUSTER = """pools:
  - {{name: {pool}, gpu: a100, nodes: 1, gpus_per_node: 8}}
jobs:
  - {{name: {job}, model: 4B, max_model_len: 4096}}
"""


def test_a_job_name_takes_ascii_letters_and_says_so(cli: Cli, tmp_path: Path):
    path = tmp_path / "c.yaml"
    path.write_text(CLUSTER.format(pool="a100", job="数学-工作"), encoding="utf-8")
    status, out, err = cli("cluster", str(path))
    assert (status, out, err) == (2, "", (
        f"solve cluster: error: {path}: line 4: job 数学-工作, name: must be ASCII letters and digits (A-Z, a-z, 0-9), "
        "'.', '_' and '-', starting with a letter or digit, got '数学-工作'\n"))


def test_a_pool_name_takes_any_letters(cli: Cli, tmp_path: Path):
    path = tmp_path / "c.yaml"
    path.write_text(CLUSTER.format(pool="ä100", job="math"), encoding="utf-8")
    status, out, _ = cli("cluster", str(path), "--json")
    assert (status, json.loads(out)["placements"][0]["pool"]) == (0, "ä100")


@pytest.mark.parametrize(("host_ram", "echoed"), [("256", 256), ("256.5", 256.5)])
def test_solve_and_map_echo_the_host_memory_alike(cli: Cli, host_ram: str, echoed: float):
    asked = ("--model", "4B", "--gpu", "a100", "--host-ram", host_ram, "--json")
    status, out, _ = cli(*asked, "--len", "4096")
    answer_text = out
    map_status, map_out, _ = cli("map", *asked, "--gpus-up-to", "2")
    assert (status, map_status) == (0, 0)
    assert f'"host_ram_gb": {echoed},' in answer_text and f'"host_ram_gb": {echoed},' in map_out
    assert json.loads(answer_text)[0]["host_ram_gb"] == json.loads(map_out)[0]["host_ram_gb"] == echoed


def test_the_note_on_the_input_comes_before_the_one_on_the_file_not_written(cli: Cli, tmp_path: Path):
    target = tmp_path / "p2.yaml"
    status, _, err = cli("--model", "4B", "--gpu", "a100", "--len", "2000k", "--out", str(target))
    assert (status, err.splitlines()[0], err.splitlines()[-1]) == (
        1, ("solve: note: --gpu 'a100' is taken as A100-80GB; nodes of A100-40GB need that name (the memory decides "
            "the plans)"), f"solve: note: no plan, so {target} is not written")
    assert not target.exists()


def test_dash_is_refused_naming_dev_stdin(cli: Cli):
    status, _, err = cli("cluster", "-")
    assert (status, err.splitlines()[-1]) == (2, (
        "solve cluster: error: argument FILE.yaml: expected a file name, got '-' (rft-solver reads named files: give "
        "/dev/stdin for standard input)"))


@pytest.mark.skipif(not Path("/dev/stdin").exists(), reason="no /dev/stdin on this system")
@pytest.mark.parametrize("command", [["cluster", "/dev/stdin"], ["--from-config", "/dev/stdin", "--gpu", "h100"]])
def test_dev_stdin_reads_standard_input(cli: Cli, standard_input: Callable[[str], None], monkeypatch: pytest.MonkeyPatch,
                                        tmp_path: Path, command: list[str]):
    given = (CLUSTER.format(pool="a100", job="math") if command[0] == "cluster"
             else "model: {model_path: Qwen/Qwen3-4B, max_model_len: 4096}\ncluster: {node_num: 1, gpu_per_node: 8}\n")
    monkeypatch.chdir(tmp_path)
    standard_input(given)
    status, out, err = cli(*command, "--json")
    assert status == 0, err
    read = json.loads(out)
    assert (read["placements"][0]["job"] if command[0] == "cluster" else read[0]["model"]) == (
        "math" if command[0] == "cluster" else "Qwen3-4B")
    if command[0] != "cluster":  # the verdict names the config as the docs name standard input, not as a file "stdin"
        assert read[0]["current"]["config"] == "/dev/stdin"
        assert read[0]["current"]["verdict"].startswith("/dev/stdin runs vanilla on 7 trainer GPUs at 4096 tokens")


PPO_CONFIG = """mode: both
algorithm: {algorithm_type: ppo}
model:
  model_path: Qwen/Qwen3-8B
  max_model_len: 32768
""" + one_node_rollout(2, None)
CRITIC_ENGINE_NOTE = """      fsdp:
        # Trinity 0.6 on verl 0.8 or later reads these (0.5 refuses them: --trinity-version 0.5
        #   leaves them out), not the critic's model's
        param_offload: true
        optimizer_offload: true
        offload_policy: true
      strategy: fsdp2
"""


def test_write_notes_the_critics_engine_flags_and_a_later_write_replaces_the_note(cli: Cli, tmp_path: Path):
    config, patched, again = tmp_path / "ppo.yaml", tmp_path / "p2.yaml", tmp_path / "p3.yaml"
    config.write_text(PPO_CONFIG, encoding="utf-8")
    flags = ("--gpu", "a100-80g", "--critic", "offloaded", "--write")
    assert cli("--from-config", str(config), *flags, str(patched))[0] == 0
    written = patched.read_text(encoding="utf-8")
    assert written.endswith(CRITIC_ENGINE_NOTE) and written.count("# Trinity 0.6 on verl 0.8") == 1
    assert cli("--from-config", str(patched), *flags, str(again))[0] == 0  # the note replaced, not doubled
    assert again.read_text(encoding="utf-8").endswith(CRITIC_ENGINE_NOTE)
    assert again.read_text(encoding="utf-8").count("# Trinity 0.6 on verl 0.8") == 1


def test_write_leaves_the_critics_own_engine_flags_without_a_note(cli: Cli, tmp_path: Path):
    config, patched = tmp_path / "ppo.yaml", tmp_path / "p2.yaml"
    own = "trainer:\n  trainer_config:\n    critic:\n      fsdp:\n        param_offload: false\n"
    config.write_text(PPO_CONFIG + own, encoding="utf-8")
    assert cli("--from-config", str(config), "--gpu", "a100-80g", "--critic", "offloaded", "--write",
               str(patched))[0] == 0
    assert "reads these" not in patched.read_text(encoding="utf-8")


VLLM_RANK_WORDS = ("24, which Trinity gives the rollout's vLLM as its max_lora_rank: vLLM 0.19.1 takes 1, 8, 16, 32, "
                   "64, 128, 256, 320 or 512 alone, and fails as the rollout starts: give one of those")


def test_check_refuses_a_lora_rank_vllm_refuses(cli: Cli, tmp_path: Path):
    config = tmp_path / "lora.yaml"
    lora = "max_model_len: 16384\n  lora_configs: [{lora_rank: 24}]"
    config.write_text(PPO_CONFIG.replace("max_model_len: 32768", lora), encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["refused"]) == (1, True)
    problems = zip(current["config_problem_codes"], current["config_problems"], strict=True)
    assert ("lora-rank-vllm-refused", (f"model.lora_configs[0].lora_rank {VLLM_RANK_WORDS}, or mode: train where no "
                                       "vLLM rollout starts")) in problems
    config.write_text(config.read_text(encoding="utf-8").replace("mode: both", "mode: train"), encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json")
    assert "lora-rank-vllm-refused" not in json.loads(out)[0]["current"]["config_problem_codes"]


def test_a_lora_rank_vllm_refuses_is_refused_where_a_rollout_is_planned(cli: Cli):
    status, out, err = cli("--model", "8B", "--gpu", "h100", "--len", "16k", "--lora-rank", "24")
    assert (status, out, err) == (2, "", (f"solve: error: --lora-rank {VLLM_RANK_WORDS}, or --rollout-gpus 0 for a "
                                          "trainer alone\n"))
    assert cli("--model", "8B", "--gpu", "h100", "--len", "16k", "--lora-rank", "24", "--rollout-gpus", "0")[0] == 0
    assert cli("--model", "8B", "--gpu", "h100", "--len", "16k", "--lora-rank", "32")[0] == 0
    with pytest.raises(QueryError) as refused:
        solver.plan("8B", gpu="h100", max_model_len=16384, lora_rank=24)
    assert str(refused.value) == f"lora_rank={VLLM_RANK_WORDS}, or rollout_gpus=0 for a trainer alone"
