"""Mutation testing of session 55's changes (Env from PYTORCH_HIP_ALLOC_CONF and PYTORCH_ALLOC_CONF, a ref SP above
the actor's with verl 0.7.1, `solve map`'s ROCm caution, --write's removed keys, cluster JSON): a test for each
hand-made mutant of those lines that the suite let live."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CONFIG = ("model:\n  model_path: Qwen/Qwen3-32B\n  max_model_len: 65536\n"
          "  rope_scaling: {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960}\n"
          "cluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 2\n"
          "    tensor_parallel_size: 2\ntrainer:\n  ulysses_sequence_parallel_size: 2\n")
"""Qwen3-32B at 65536 tokens, SP=2 on 4 trainer GPUs and 4 rollout GPUs of a node of 8."""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """`CONFIG` as q32.yaml."""
    path = tmp_path / "q32.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


def judged(cli, config: Path, gpu: str) -> tuple[int, dict, str]:
    """`config` judged on `gpu`: ``--json``'s status and ``current``, and the text output's words joined by one
    space (as the verdict reads unwrapped)."""
    status, out, _ = cli("--from-config", str(config), "--gpu", gpu, "--json")
    _, text, _ = cli("--from-config", str(config), "--gpu", gpu)
    return status, json.loads(out)[0]["current"], " ".join(text.split())


@pytest.mark.parametrize("value", ["false", "true", "1"])
def test_an_expandable_segments_value_other_than_true_or_false_capitalised_is_refused(
        cli, config: Path, monkeypatch: pytest.MonkeyPatch, value: str):
    # PyTorch's allocator config takes exactly "True" or "False": lower case stops the run too.
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", f"expandable_segments:{value}")
    status, current, text = judged(cli, config, "h200")
    assert (status, current["env"], current["refused"], current["config_problem_codes"][-1]) == (
        0, False, True, "alloc-conf-refused")
    assert (f"refused: PYTORCH_CUDA_ALLOC_CONF has expandable_segments:{value}, which PyTorch refuses (it takes True "
            "or False, so the run stops at its first GPU allocation)") in text


def test_the_last_expandable_segments_of_a_variable_not_read_decides_whether_it_differs(
        cli, config: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    monkeypatch.setenv("PYTORCH_ALLOC_CONF", "expandable_segments:True,expandable_segments:False")
    status, current, text = judged(cli, config, "h200")
    assert (status, current["env"], current["config_problem_codes"][-1]) == (0, True, "alloc-confs-disagree")
    assert "but: PYTORCH_ALLOC_CONF turns Env off where PYTORCH_CUDA_ALLOC_CONF turns it on: " in text
    monkeypatch.setenv("PYTORCH_ALLOC_CONF", "expandable_segments:False,expandable_segments:True")
    _, current, text = judged(cli, config, "h200")
    assert "alloc-confs-disagree" not in current["config_problem_codes"] and "turns Env" not in text


def test_of_two_variables_differing_from_the_one_read_the_line_names_the_first_pytorch_reads(
        cli, config: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:512")
    monkeypatch.setenv("PYTORCH_HIP_ALLOC_CONF", "expandable_segments:True")
    monkeypatch.setenv("PYTORCH_ALLOC_CONF", "expandable_segments:True")
    _, current, text = judged(cli, config, "mi300x")
    assert current["config_problem_codes"].count("alloc-confs-disagree") == 1
    assert ("but: PYTORCH_HIP_ALLOC_CONF turns Env on where PYTORCH_CUDA_ALLOC_CONF turns it off: PyTorch reads "
            "PYTORCH_CUDA_ALLOC_CONF before PYTORCH_HIP_ALLOC_CONF (2.9 to 2.11 read), as this verdict does: unset "
            "PYTORCH_HIP_ALLOC_CONF") in text


ROLES_06 = ("algorithm: {{algorithm_type: grpo}}\nmodel: {{model_path: Qwen/Qwen3-8B, max_model_len: 8192}}\n"
            "cluster: {{node_num: 1, gpu_per_node: 8}}\nexplorer: {{rollout_model: {{engine_num: 4}}}}\n"
            "trainer:\n  ulysses_sequence_parallel_size: {trainer}\n  trainer_config:\n    actor_rollout_ref:\n"
            "      actor: {{ulysses_sequence_parallel_size: {actor}}}\n"
            "      ref: {{ulysses_sequence_parallel_size: {ref}}}\n")
"""Qwen3-8B at 8192 tokens on 4 trainer GPUs, GRPO (which runs the ref), with the trainer's, the actor's and the
ref's own SP."""
ROLE_KEY = "trainer.trainer_config.actor_rollout_ref.{role}.ulysses_sequence_parallel_size"


@pytest.mark.parametrize(("trainer", "own"), [(2, 1), (1, 2)])
def test_06_a_ref_at_the_actors_own_sp_runs_before_verl_08(cli, tmp_path: Path, trainer: int, own: int):
    # Trinity 0.6 on verl 0.7.1 builds SP groups from the actor's own SP: a ref at that SP, another than the
    # trainer's, runs (no 'fails at its first step'), whether the actor's SP is 1 or above.
    config = tmp_path / "roles.yaml"
    config.write_text(ROLES_06.format(trainer=trainer, actor=own, ref=own), encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--trinity-version", "0.6", "--json")
    current = json.loads(out)[0]["current"]
    assert status == 0 and current["config_problem_codes"] == ["role-sp-differs", "role-sp-differs"]
    assert current["config_problems"] == [
        (f"{ROLE_KEY.format(role=role)} {own} is not trainer.ulysses_sequence_parallel_size {trainer}: Trinity with "
         f"verl before 0.8 runs that role at SP {own} (with the trainer's token budget), Trinity 0.6 on verl 0.8 or "
         f"later at SP {trainer}; the verdict is at SP {trainer}: set them alike (--write does)")
        for role in ("actor", "ref")]
