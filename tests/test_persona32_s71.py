"""A long-context researcher's configs (persona32, session 71): where a Trinity config gives its rollout model the
RoPE scaling it gives the model, ``--write`` keeps the two the same (a new YaRN factor in both, or neither where the
length no longer needs one), and ``--emit trinity`` and ``--json``'s ``apply`` from that config set both too; a
rollout RoPE scaling of its own, other than the model's, is left as it was, and still said to differ."""

import json
from pathlib import Path

YARN = "    rope_type: yarn\n    factor: 1.1\n    original_max_position_embeddings: 40960\n"
"""The YaRN of 45056 tokens over Qwen3's 40960, at the model section's indentation: a longer length needs another
(one that reaches the length --write keeps)."""

CONFIG = ("algorithm: {algorithm_type: grpo}\n"
          "model:\n  model_path: Qwen/Qwen3-8B\n  max_prompt_tokens: 4096\n  max_response_tokens: 12288\n"
          f"  max_model_len: 45056\n  rope_scaling:\n{YARN}cluster:\n  node_num: 1\n  gpu_per_node: 8\n"
          "explorer:\n  rollout_model:\n    engine_num: 2\n    rope_scaling:\n"
          + YARN.replace("    ", "      "))
"""Qwen3-8B at 45056 tokens on 6 trainer GPUs and 2 rollout GPUs, its rollout model given the model's YaRN."""

DIFFERS = ("solve: warning: {}: explorer.rollout_model.rope_scaling ({{'factor': 1.2, "
           "'original_max_position_embeddings': 40960...) is not what the trainer takes ({}): the rollout's vLLM "
           "samples at other positions than the trainer trains at; remove it (Trinity gives the rollout "
           "model.rope_scaling)\n")


def _written(cli, tmp_path: Path, text: str, length: str) -> tuple[str, str]:
    """The config `text` written with the plan for `length` tokens on H20s: the patched file and stderr."""
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text(text, encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h20", "--len", length, "--write", str(patched))
    assert status == 0, err
    return patched.read_text(encoding="utf-8"), err


def _rope_section(text: str, section: str) -> str:
    """The lines of `text` from `section`'s ``rope_scaling:`` line to the next key at a shallower indentation."""
    lines = text.splitlines(keepends=True)
    start = next(index for index, line in enumerate(lines) if line.strip() == "rope_scaling:"
                 and (section == "model" or index > lines.index("explorer:\n")))
    depth = len(lines[start]) - len(lines[start].lstrip())
    end = next((index for index in range(start + 1, len(lines))
                if len(lines[index]) - len(lines[index].lstrip()) <= depth), len(lines))
    return "".join(lines[start:end])


def test_write_sets_the_rollout_models_yarn_where_it_was_the_models(cli, tmp_path: Path):
    patched, err = _written(cli, tmp_path, CONFIG, "60k")
    new = "rope_scaling:\n    rope_type: yarn\n    factor: 1.5\n    original_max_position_embeddings: 40960\n"
    theta = "    rope_theta: 1000000\n"  # the model's own, in both (ropetheta, s78)
    assert _rope_section(patched, "model") == f"  {new}{theta}"
    assert _rope_section(patched, "explorer") == "    " + (new + theta).replace("    ", "      ")
    assert "rollout_model.rope_scaling" not in err


def test_write_removes_the_rollout_models_yarn_with_the_models_where_the_length_needs_none(cli, tmp_path: Path):
    patched, err = _written(cli, tmp_path, CONFIG, "32k")
    assert "rope_scaling" not in patched
    assert "\nexplorer:\n  rollout_model:\n    engine_num: 2\ntrainer:\n" in patched
    assert "rollout_model.rope_scaling" not in err


def test_write_leaves_a_rollout_yarn_of_its_own(cli, tmp_path: Path):
    rollouts = YARN.replace("    ", "      ")
    own = CONFIG.replace(rollouts, rollouts.replace("1.1", "1.2"))
    patched, err = _written(cli, tmp_path, own, "60k")
    assert _rope_section(patched, "explorer") == "    rope_scaling:\n" + rollouts.replace("1.1", "1.2")
    assert DIFFERS.format(tmp_path / "patched.yaml", "model.rope_scaling, {'factor': 1.5, "
                          "'original_max_position_embeddings': 40960...") in err


def test_emit_and_apply_from_the_config_set_the_rollout_models_yarn_too(cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--len", "60k")
    assert status == 0
    assert ("# and these keys of trinity.yaml, which the plan changes too (after each, its value now):\n"
            "explorer.rollout_model.rope_scaling.factor: 1.5  # now 1.1\n") in out
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--len", "60k", "--emit", "trinity")
    assert status == 0
    assert ("\nexplorer:\n  rollout_model:\n    rope_scaling:\n      rope_type: yarn\n      factor: 1.5\n"
            "      original_max_position_embeddings: 40960\n      rope_theta: 1000000\ntrainer:\n") in out
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--len", "60k", "--json")
    assert status == 0
    assert json.loads(out)[0]["apply"]["config"]["explorer"] == {"rollout_model": {"rope_scaling": {
        "rope_type": "yarn", "factor": 1.5, "original_max_position_embeddings": 40960, "rope_theta": 1000000}}}
