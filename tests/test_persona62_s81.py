"""A team's Trinity 0.5.2 configs moved to 0.6 (persona62, session 81): a config's own YaRN that reaches the length,
which --write keeps, lacks the model's ``rope_theta`` that --write adds to it (Trinity 0.6's trainer on verl before 0.8
fails to build the model without it): the ``apply`` block said the mapping "stays" and "needs no change", so pasting
its lines left the config refused; it now says what --write adds and gives the mapping whole, as --write leaves it.
And the same mapping under ``--trinity-version 0.5`` (0.5.0, 0.5.2), said nothing of before: those releases allow
transformers 5 (0.5.2 up to 5.3.0), whose ``Qwen3Config`` keeps no ``rope_theta`` attribute, so the mapping Trinity sets
gets a base of None (run on 5.3.0's config class), unless ``model.rope_theta`` is set: a ``but:`` line, since their
vllm extra installs transformers 4, which builds it; none under 0.5.1 (transformers 4 alone). 0.6's refusal said
"but on 5.12.1 with model.rope_theta set" for "unless": now in those words."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from solver.results import YARN_KEPT
from solver.tables import load_catalog
from solver.trinity import trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]
LORA_YARN = """mode: both
algorithm: {algorithm_type: grpo, repeat_times: 8}
buffer: {batch_size: 32}
model:
  model_path: Qwen/Qwen3-1.7B
  max_prompt_tokens: 4096
  max_response_tokens: 61440
  max_model_len: 65536
  rope_scaling:
    rope_type: yarn
    factor: 2.0
    original_max_position_embeddings: 32768
  lora_configs:
    - lora_rank: 64
      lora_alpha: 128
cluster: {node_num: 1, gpu_per_node: 8}
explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1}}
trainer: {ulysses_sequence_parallel_size: 2}
"""
"""A LoRA GRPO config of Qwen3-1.7B at 65536 tokens, its YaRN of Qwen's model cards' form (factor 2 over 32768)."""


def _rope_lines(out: str) -> list[str]:
    """The ``apply`` block's lines on ``model.rope_scaling``."""
    return [line for line in out.splitlines() if line.startswith(("# model.rope_scaling", "model.rope_scaling"))]


@pytest.mark.parametrize("version", ["0.6", "0.5.2", "0.5.1"])
def test_a_kept_yarn_without_its_base_is_given_whole_as_write_leaves_it(cli: Cli, tmp_path: Path, version: str,
                                                                        monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    config, written = tmp_path / "lora.yaml", tmp_path / "written.yaml"
    config.write_text(LORA_YARN, encoding="utf-8")
    mapping = "{rope_type: yarn, factor: 2.0, original_max_position_embeddings: 32768, rope_theta: 1000000}"
    said = [(f"# model.rope_scaling: lora.yaml's, as --write keeps it ({YARN_KEPT}), with the rope_theta it lacks "
             "added:"), f"model.rope_scaling: {mapping}"]
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--trinity-version", version)
    assert (status, _rope_lines(out)) == (0, said)
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--trinity-version", version,
                         "--write", str(written))
    assert (status, _rope_lines(out)) == (0, said)
    # The line pastes what --write wrote.
    assert yaml.safe_load(written.read_text(encoding="utf-8"))["model"]["rope_scaling"] == yaml.safe_load(mapping)
    # Before s81: the comment alone, "lora.yaml's stays, as --write keeps it: one that covers the length needs no
    # change", while --check --trinity-version 0.6 refused the config for the rope_theta it lacks.
    assert f"# model.rope_scaling: lora.yaml's stays, as --write keeps it: {YARN_KEPT}" not in out.splitlines()


def test_a_kept_yarn_with_its_base_still_stays_in_a_comment(cli: Cli, tmp_path: Path):
    config = tmp_path / "lora.yaml"
    config.write_text(LORA_YARN.replace("original_max_position_embeddings: 32768\n",
                                        "original_max_position_embeddings: 32768\n    rope_theta: 1000000\n"),
                      encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--trinity-version", "0.6")
    stays = f"# model.rope_scaling: lora.yaml's stays, as --write keeps it: {YARN_KEPT}"
    assert (status, _rope_lines(out)) == (0, [stays])
    assert "rope-theta-missing" not in out and "has no rope_theta" not in out


ON_05 = ("model.rope_scaling has no rope_theta: on transformers 5 (Trinity 0.5.0 allows it, 0.5.2 up to 5.3.0) Trinity "
         "0.5's trainer sets it as Qwen3-1.7B's RoPE parameters, in which transformers finds no base, and fails as it "
         "builds the model unless model.rope_theta is set; on transformers 4, which Trinity 0.5.2's vllm extra "
         "installs (vLLM 0.17.0 to 0.19.0 require transformers below 5), it builds; add rope_theta: 1000000 to it (as "
         "--write does; harmless on transformers 4)")
"""The ``but:`` line under ``--trinity-version 0.5`` on `LORA_YARN`'s mapping."""


def _theta_lines(cli: Cli, config: Path, *flags: str) -> list[str]:
    """``--check``'s verdict lines on `config`'s mapping without ``rope_theta``, joined whole."""
    _, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--check", *flags)
    text = " ".join(out.split())
    return [part.split(" but: ")[0].split(" refused: ")[0] for part in text.split(": model.rope_scaling has no")[1:]]


@pytest.mark.parametrize("version", ["0.5", "0.5.2", "0.5.0"])
def test_05_on_transformers_5_fails_alike_unless_model_rope_theta_is_set(cli: Cli, tmp_path: Path, version: str):
    config = tmp_path / "lora.yaml"
    config.write_text(LORA_YARN, encoding="utf-8")
    _, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--check", "--trinity-version", version)
    assert f"but: {ON_05}" in " ".join(out.split())
    # model.rope_theta mends it there (Trinity 0.5.2 sets it as the attribute standardize_rope_params reads)
    config.write_text(LORA_YARN.replace("  max_model_len: 65536\n", "  max_model_len: 65536\n  rope_theta: 1000000\n"),
                      encoding="utf-8")
    assert _theta_lines(cli, config, "--trinity-version", version) == []


def test_0_5_1_on_transformers_4_alone_is_told_nothing(cli: Cli, tmp_path: Path):
    config = tmp_path / "lora.yaml"
    config.write_text(LORA_YARN, encoding="utf-8")
    assert _theta_lines(cli, config, "--trinity-version", "0.5.1") == []


def test_06_refuses_it_saying_unless():
    mapping = {"model": {"model_path": "Qwen/Qwen3-1.7B", "max_model_len": 65536, "rope_scaling": {
        "rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 32768}}, "mode": "train"}
    model = load_catalog().model("1.7B")
    words = {version: [problem.words for problem in trinity_config_problems(mapping, model, 8, version=version)
                       if problem.code.value.startswith("rope-theta-missing")] for version in ("0.6", "0.5")}
    assert words["0.6"] == [(
        "model.rope_scaling has no rope_theta: Trinity 0.6's trainer on verl before 0.8 sets it as Qwen3-1.7B's RoPE "
        "parameters, in which transformers 5 finds no base, and fails as it builds the model (a TypeError, "
        "modeling_rope_utils.py:446 in 5.12.1, :488 in 5.25.0) unless model.rope_theta is set and transformers is "
        "5.12.1; add rope_theta: 1000000 to it (as solver.trinity.patch_trinity_config does)")]
    # mode: train has no vLLM to pin transformers 4: 0.5's line is said there too
    assert words["0.5"] == [ON_05.replace("--write", "solver.trinity.patch_trinity_config")]
