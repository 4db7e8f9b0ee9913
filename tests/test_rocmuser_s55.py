"""An MI300X team's questions (session 55): `--from-config` reads Env on an AMD GPU as PyTorch's ROCm builds do,
from PYTORCH_HIP_ALLOC_CONF where PYTORCH_CUDA_ALLOC_CONF is not set, names the variable read, and says where the two
differ; `solve map` of an AMD GPU gives `solve`'s ROCm caution once, under its legend. And on any GPU, PyTorch 2.9's
PYTORCH_ALLOC_CONF: read after the other two (as 2.10 and 2.11 read them), a line where it is the one that turns Env
on (PyTorch takes Env from it only from 2.10 on) and where it differs from the one read. Session 55's torchcuda: the
HIP variable is read on an NVIDIA GPU too, as PyTorch 2.10 and 2.11's CUDA builds read it, with that line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CONFIG = ("algorithm: {algorithm_type: grpo}\n"
          "model:\n  model_path: Qwen/Qwen3-32B\n  max_prompt_tokens: 4096\n  max_response_tokens: 61440\n"
          "  max_model_len: 65536\n"
          "  rope_scaling: {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960}\n"
          "cluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 2\n"
          "    tensor_parallel_size: 2\ntrainer:\n  ulysses_sequence_parallel_size: 2\n")
RUNS = "q32.yaml runs {setting} on 4 trainer GPUs at 65536 tokens (Env {env}, read from this shell's {variable}): "


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """Qwen3-32B at 65536 tokens, SP=2 on 4 trainer GPUs and 4 rollout GPUs of a node of 8."""
    path = tmp_path / "q32.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


def verdict(out: str) -> str:
    """The output with its lines joined, as the verdict reads unwrapped."""
    return " ".join(out.split())


def test_on_an_amd_gpu_env_is_read_from_the_hip_variable_where_the_cuda_one_is_not_set(
        cli, config: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTORCH_HIP_ALLOC_CONF", "expandable_segments:True")
    status, out, _ = cli("--from-config", str(config), "--gpu", "mi300x")
    assert status == 0
    assert (RUNS.format(setting="Env + SP=2", env="on", variable="PYTORCH_HIP_ALLOC_CONF")
            + "nothing in the tables and the memory model's estimates says it trains (the memory model predicts "
              "242.0 GiB per GPU, of 176.5 usable). The best plan follows.") in verdict(out)


NEW_NAME = ("but: {variable} turns Env on, and PyTorch takes Env from it only from 2.10 on (before 2.10 Env is off): "
            "to be sure, set PYTORCH_CUDA_ALLOC_CONF the same, which every release reads")


def test_on_an_nvidia_gpu_the_hip_variable_is_read_with_a_line_on_releases_before_2_10(
        cli, config: Path, monkeypatch: pytest.MonkeyPatch):
    # PyTorch 2.10 and 2.11's CUDA builds take expandable_segments from libc10's reading, which reads it; 2.9's do not.
    monkeypatch.setenv("PYTORCH_HIP_ALLOC_CONF", "expandable_segments:True")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h200")
    assert status == 0
    assert RUNS.format(setting="Env + SP=2", env="on", variable="PYTORCH_HIP_ALLOC_CONF") in verdict(out)
    assert NEW_NAME.format(variable="PYTORCH_HIP_ALLOC_CONF") in verdict(out)


def test_a_cuda_variable_that_is_set_is_read_on_an_amd_gpu_too(cli, config: Path, monkeypatch: pytest.MonkeyPatch):
    # Set without expandable_segments: PyTorch reads it, not the HIP variable, so Env is off.
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:512")
    monkeypatch.setenv("PYTORCH_HIP_ALLOC_CONF", "expandable_segments:True")
    status, out, _ = cli("--from-config", str(config), "--gpu", "mi300x")
    assert status == 0
    assert RUNS.format(setting="SP=2", env="off", variable="PYTORCH_CUDA_ALLOC_CONF") in verdict(out)


def test_a_hip_value_pytorch_refuses_is_a_refused_line_naming_that_variable(
        cli, config: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTORCH_HIP_ALLOC_CONF", "expandable_segments:yes")
    status, out, _ = cli("--from-config", str(config), "--gpu", "mi300x", "--check")
    assert status == 1
    assert ("refused: PYTORCH_HIP_ALLOC_CONF has expandable_segments:yes, which PyTorch refuses (it takes True or "
            "False, so the run stops at its first GPU allocation)") in verdict(out)


def test_the_json_names_the_variable_env_was_read_from(cli, config: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTORCH_HIP_ALLOC_CONF", "expandable_segments:True")
    status, out, _ = cli("--from-config", str(config), "--gpu", "mi300x", "--json")
    current = json.loads(out)[0]["current"]
    assert status == 0 and (current["env"], current["env_variable"]) == (True, "PYTORCH_HIP_ALLOC_CONF")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h200", "--json")
    current = json.loads(out)[0]["current"]
    assert status == 0 and (current["env"], current["env_variable"]) == (True, "PYTORCH_HIP_ALLOC_CONF")
    assert current["config_problem_codes"][-1] == "alloc-conf-new-name"


ROCM_CAUTION_LINE = ("caution: ROCm: PyTorch's ROCm builds also read PYTORCH_HIP_ALLOC_CONF (set it the same, or not "
                     "at all), and a build without expandable segments ignores them with a warning, so Env may not "
                     "take effect: check yours (solve --no-env plans without it)")


def test_a_map_of_an_amd_gpu_with_env_cells_ends_with_solves_rocm_caution(cli):
    status, out, _ = cli("map", "--gpu", "mi300x", "--model", "32B", "--gpus-up-to", "2")
    assert status == 0 and " ".join(out.split()).endswith(  # then the codes no line says (loraexclude2, s82)
        f"{ROCM_CAUTION_LINE} host memory: 2 cells need 664.2 GiB per node, more than a node is assumed to have "
        "(--host-ram checks it) other cautions, unmarked (their words: --json): thin-headroom (2 cells: ≤1, ≤2)")
    assert out.count("PYTORCH_HIP_ALLOC_CONF") == 1  # once under the legend, not per cell


def test_a_map_without_env_cells_on_an_amd_gpu_or_of_an_nvidia_gpu_has_no_rocm_caution(cli):
    # The MI300X has no tables, so --no-estimate leaves every cell '-'; the H200's Env cells get no ROCm words.
    status, out, _ = cli("map", "--gpu", "mi300x", "--model", "32B", "--gpus-up-to", "2", "--no-estimate")
    assert status == 0 and "nothing trains" in out and "ROCm" not in out
    status, out, _ = cli("map", "--gpu", "h200", "--model", "8B", "--gpus-up-to", "2")
    assert status == 0 and "E+" in out and "ROCm" not in out


def test_on_an_amd_gpu_the_two_variables_differing_on_env_is_a_but_line(
        cli, config: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:512")
    monkeypatch.setenv("PYTORCH_HIP_ALLOC_CONF", "expandable_segments:True")
    status, out, _ = cli("--from-config", str(config), "--gpu", "mi300x", "--check")
    assert status == 1  # vanilla SP=2 does not fit; the line itself refuses nothing
    assert ("but: PYTORCH_HIP_ALLOC_CONF turns Env on where PYTORCH_CUDA_ALLOC_CONF turns it off: every PyTorch "
            "release that takes Env from PYTORCH_HIP_ALLOC_CONF takes it from PYTORCH_CUDA_ALLOC_CONF first, as this "
            "verdict does: unset PYTORCH_HIP_ALLOC_CONF") in verdict(out)
    status, out, _ = cli("--from-config", str(config), "--gpu", "mi300x", "--json")
    assert json.loads(out)[0]["current"]["config_problem_codes"][-1] == "alloc-confs-disagree"


def test_a_cuda_variable_set_empty_is_the_one_read(cli, config: Path, monkeypatch: pytest.MonkeyPatch):
    # `export PYTORCH_CUDA_ALLOC_CONF=`: set, though empty (PyTorch reads the first variable set, as getenv gives it):
    # Env is off, read from it, and the HIP variable that turns Env on is the one to unset.
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "")
    monkeypatch.setenv("PYTORCH_HIP_ALLOC_CONF", "expandable_segments:True")
    status, out, _ = cli("--from-config", str(config), "--gpu", "mi300x")
    assert status == 0
    assert RUNS.format(setting="SP=2", env="off", variable="PYTORCH_CUDA_ALLOC_CONF") in verdict(out)
    assert "but: PYTORCH_HIP_ALLOC_CONF turns Env on where PYTORCH_CUDA_ALLOC_CONF turns it off" in verdict(out)


@pytest.mark.parametrize("gpu", ["h200", "mi300x"])
def test_the_two_variables_agreeing_get_no_such_line_and_differing_get_it_on_any_gpu(
        cli, config: Path, monkeypatch: pytest.MonkeyPatch, gpu: str):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    monkeypatch.setenv("PYTORCH_HIP_ALLOC_CONF", "expandable_segments:True")
    status, out, _ = cli("--from-config", str(config), "--gpu", gpu)
    assert status == 0 and "turns Env" not in out
    monkeypatch.setenv("PYTORCH_HIP_ALLOC_CONF", "expandable_segments:False")
    status, out, _ = cli("--from-config", str(config), "--gpu", gpu)
    assert status == 0 and "PYTORCH_HIP_ALLOC_CONF turns Env off where PYTORCH_CUDA_ALLOC_CONF turns it on" in (
        verdict(out))


@pytest.mark.parametrize("gpu", ["h200", "mi300x"])
def test_env_is_read_from_pytorch_alloc_conf_alone_with_a_line_on_releases_before_2_10(
        cli, config: Path, monkeypatch: pytest.MonkeyPatch, gpu: str):
    monkeypatch.setenv("PYTORCH_ALLOC_CONF", "expandable_segments:True")
    _, out, _ = cli("--from-config", str(config), "--gpu", gpu, "--check")
    assert RUNS.format(setting="Env + SP=2", env="on", variable="PYTORCH_ALLOC_CONF") in verdict(out)
    assert NEW_NAME.format(variable="PYTORCH_ALLOC_CONF") in verdict(out)
    _, out, _ = cli("--from-config", str(config), "--gpu", gpu, "--json")
    current = json.loads(out)[0]["current"]
    assert (current["env"], current["env_variable"], current["config_problem_codes"][-1], current["refused"]) == (
        True, "PYTORCH_ALLOC_CONF", "alloc-conf-new-name", False)


def test_pytorch_alloc_conf_set_without_env_gets_no_line(cli, config: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTORCH_ALLOC_CONF", "max_split_size_mb:512")
    _, out, _ = cli("--from-config", str(config), "--gpu", "h200")
    assert RUNS.format(setting="SP=2", env="off", variable="PYTORCH_ALLOC_CONF") in verdict(out)
    assert "2.10" not in out


@pytest.mark.parametrize(("cuda", "generic", "env"), [("max_split_size_mb:512", "expandable_segments:True", "off"),
                                                      ("expandable_segments:True", "expandable_segments:False", "on")])
def test_pytorch_alloc_conf_differing_from_the_cuda_variable_is_read_after_it_by_every_release(
        cli, config: Path, monkeypatch: pytest.MonkeyPatch, cuda: str, generic: str, env: str):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", cuda)
    monkeypatch.setenv("PYTORCH_ALLOC_CONF", generic)
    _, out, _ = cli("--from-config", str(config), "--gpu", "h200")
    other = "off" if env == "on" else "on"
    assert RUNS.format(setting="Env + SP=2" if env == "on" else "SP=2", env=env,
                       variable="PYTORCH_CUDA_ALLOC_CONF") in verdict(out)
    # PyTorch 2.9's CUDA allocator takes Env from PYTORCH_CUDA_ALLOC_CONF alone (its libc10_cuda parses only it).
    assert (f"but: PYTORCH_ALLOC_CONF turns Env {other} where PYTORCH_CUDA_ALLOC_CONF turns it {env}: every PyTorch "
            "release that takes Env from PYTORCH_ALLOC_CONF takes it from PYTORCH_CUDA_ALLOC_CONF first, as this "
            "verdict does: unset PYTORCH_ALLOC_CONF") in verdict(out)
    assert "only from 2.10" not in out


def test_the_hip_variable_is_read_before_pytorch_alloc_conf_on_an_amd_gpu(
        cli, config: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTORCH_HIP_ALLOC_CONF", "expandable_segments:True")
    monkeypatch.setenv("PYTORCH_ALLOC_CONF", "expandable_segments:True")
    _, out, _ = cli("--from-config", str(config), "--gpu", "mi300x")
    assert RUNS.format(setting="Env + SP=2", env="on", variable="PYTORCH_HIP_ALLOC_CONF") in verdict(out)
    assert "turns Env" not in out


def test_each_variable_that_differs_from_the_one_read_gets_its_line(
        cli, config: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    monkeypatch.setenv("PYTORCH_HIP_ALLOC_CONF", "expandable_segments:False")
    monkeypatch.setenv("PYTORCH_ALLOC_CONF", "max_split_size_mb:512")
    _, out, _ = cli("--from-config", str(config), "--gpu", "mi300x", "--json")
    current = json.loads(out)[0]["current"]
    assert (current["env"], current["env_variable"]) == (True, "PYTORCH_CUDA_ALLOC_CONF")
    assert [words for code, words in zip(current["config_problem_codes"], current["config_problems"], strict=True)
            if code == "alloc-confs-disagree"] == [
        ("PYTORCH_HIP_ALLOC_CONF turns Env off where PYTORCH_CUDA_ALLOC_CONF turns it on: every PyTorch release that "
         "takes Env from PYTORCH_HIP_ALLOC_CONF takes it from PYTORCH_CUDA_ALLOC_CONF first, as this verdict does: "
         "unset PYTORCH_HIP_ALLOC_CONF"),
        ("PYTORCH_ALLOC_CONF turns Env off where PYTORCH_CUDA_ALLOC_CONF turns it on: every PyTorch release that "
         "takes Env from PYTORCH_ALLOC_CONF takes it from PYTORCH_CUDA_ALLOC_CONF first, as this verdict does: unset "
         "PYTORCH_ALLOC_CONF")]
