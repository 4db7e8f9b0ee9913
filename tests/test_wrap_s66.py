"""A Trinity fragment's comments wrapped at `COMMENT_WIDTH` (session 66): every comment line of a fragment that
--emit prints, --out and cluster --emit-dir write and the API gives is at most 100 characters, as --write's notes are,
but for a command to paste, which stays whole on its line; only the comments' layout changes (the YAML reads the
same, the comments say the same words); a key's comment past the width goes just above the key."""

from __future__ import annotations

import itertools
import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

import solver
from solver.trinity.fragment import wrapped_comments
from solver.trinity.plan_keys import COMMENT_WIDTH

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"
CHECK_INTRO = "# To check your config once these keys are in it (CONFIG: its file), as this plan was made:"
COMMAND = re.compile(r" *#   \S.*")
"""A command to paste in a fragment's comments (the check command, an export): kept whole, however long."""


def _comment_words(text: str) -> list[str]:
    """The words of a fragment's comments, in order: those of comment lines and of comments beside keys."""
    words: list[str] = []
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            words += line.lstrip()[1:].split()
        elif "  # " in line:
            words += line.split("  # ", 1)[1].split()
    return words


def _assert_wrapped(text: str, unwrapped: str, config: dict[str, Any]) -> None:
    """`text`, a fragment made from `unwrapped` (its comments before wrapping), has no line past the width but a
    command; the check command whole on the line after its lead-in; the keys of `config`; the same comment words; and
    each line of `unwrapped` that fits, unchanged, in order."""
    lines = text.splitlines()
    assert [line for line in lines if len(line) > COMMENT_WIDTH and not COMMAND.fullmatch(line)] == []
    [check] = [line for line in lines if "solve --from-config CONFIG --check" in line]
    assert lines[lines.index(check) - 1] == CHECK_INTRO and check in unwrapped.splitlines()
    command = shlex.split(check.removeprefix("#   "))
    assert command[command.index("solve"):command.index("solve") + 5] == [
        "solve", "--from-config", "CONFIG", "--check", "--gpu"]
    assert yaml.safe_load(text) == yaml.safe_load(unwrapped) == config  # the data, as before the wrap
    assert _comment_words(text) == _comment_words(unwrapped)
    fitting = iter(lines)
    assert all(line in fitting for line in unwrapped.splitlines() if len(line) <= COMMENT_WIDTH)  # in order


MODELS = ("0.6B", "4B", "8B", "14B", "32B", "Llama-3.1-8B", "30B-A3B", "Qwen2.5-7B")
GPUS = ("a100", "a100-40g", "h20", "h100", "h200", "mi300x")  # the MI300X's fragments have ROCm's Env note
VARIANTS: tuple[dict[str, Any], ...] = (
    {"objective": "max_len", "budget_gpus": 8},
    {"max_model_len": 65536, "objective": "min_gpus", "rollout_gpus": 4, "host_ram_gb": 256.0},
    {"max_model_len": 131072, "budget_gpus": 16, "exact": True, "node_gpus": 8},  # a trainer on two nodes
    {"max_model_len": 32768, "budget_gpus": 8, "rollout_gpus": 0},  # mode train, no batch: its note
    {"max_model_len": 32768, "budget_gpus": 6, "train_batch_size": 96, "trinity_version": "0.5"},
    {"max_model_len": 65536, "budget_gpus": 8, "rollout_gpus": 12, "node_gpus": 8, "token_budget": "auto"},
)
"""Each model x GPU type is planned with one of these in turn: every variant meets most models and GPU types."""


def test_every_fragment_of_a_sweep_has_its_comments_within_the_width(unwrapped_fragments: list[str]) -> None:
    made: dict[int, int] = {}
    wrapped = 0  # lines the wrap changed
    for index, (model, gpu) in enumerate(itertools.product(MODELS, GPUS)):
        variant = VARIANTS[index % len(VARIANTS)]
        (answer,) = solver.plan(model, gpu=gpu, **variant)
        if answer.best is None:
            continue
        version = variant.get("trinity_version")
        unwrapped_fragments.clear()
        text = solver.trinity_config(answer, version=version)
        [unwrapped] = unwrapped_fragments
        _assert_wrapped(text, unwrapped, solver.trinity_settings(answer, version=version).config)
        made[index % len(VARIANTS)] = made.get(index % len(VARIANTS), 0) + 1
        wrapped += sum(len(line) > COMMENT_WIDTH and not COMMAND.fullmatch(line) for line in unwrapped.splitlines())
    assert sorted(made) == list(range(len(VARIANTS))) and sum(made.values()) >= 30, made  # no variant left out
    assert wrapped >= 60  # and the sweep's comments were long


LORA_CONFIG = ("algorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 65536\n"
               "  lora_configs: [{lora_rank: 32}]\ncluster: {node_num: 3, gpu_per_node: 8}\n"
               "buffer: {train_batch_size: 96}\n"
               "explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 2}}\n"
               "trainer:\n  trainer_config:\n    actor_rollout_ref:\n"
               "      actor: {ppo_max_token_len_per_gpu: 400000, ulysses_sequence_parallel_size: 1}\n")


@pytest.mark.parametrize("flags", [
    ("--from-config", "{lora}", "--gpu", "h100", "--offload"),  # LoRA, the actor's budget and SP, on 2 of 3 nodes
    ("--from-config", str(EXAMPLES / "trinity.yaml"), "--gpu", "a100", "--offload", "--host-ram", "512"),
    ("--model", "32B", "--gpu", "h100", "--len", "128k", "--token-budget", "auto", "--rollout-gpus", "8"),
    ("--model", "4B", "--gpu", "mi300x", "--maximize", "len", "--gpus", "4", "--trinity-version", "0.6"),
])
def test_out_writes_the_fragment_emit_prints_wrapped(cli, tmp_path: Path, unwrapped_fragments: list[str],
                                                     flags: tuple[str, ...]) -> None:
    (tmp_path / "lora.yaml").write_text(LORA_CONFIG, encoding="utf-8")
    flags = tuple(flag.format(lora=tmp_path / "lora.yaml") for flag in flags)
    status, out, _ = cli(*flags, "--emit", "trinity", "--out", str(tmp_path / "fragment.yaml"))
    [unwrapped] = unwrapped_fragments
    assert status == 0 and out == (tmp_path / "fragment.yaml").read_text(encoding="utf-8")
    status, settings, _ = cli(*flags, "--json")
    [apply] = [answer["apply"] for answer in json.loads(settings)]
    _assert_wrapped(out, unwrapped, apply["config"])


def test_a_cluster_s_job_configs_have_their_comments_within_the_width(cli, tmp_path: Path,
                                                                      unwrapped_fragments: list[str]) -> None:
    # The example fleet: four jobs, one on GPUs of a node it shares (its CUDA_VISIBLE_DEVICES export and Ray note).
    assert cli("cluster", str(EXAMPLES / "fleet.yaml"), "--emit-dir", str(tmp_path))[0] == 0
    written = sorted(tmp_path.iterdir())
    assert len(written) == len(unwrapped_fragments) == 4
    for unwrapped in unwrapped_fragments:
        [path] = [path for path in written if path.read_text(encoding="utf-8") == wrapped_comments(unwrapped)]
        _assert_wrapped(path.read_text(encoding="utf-8"), unwrapped, yaml.safe_load(unwrapped))
    assert any("#   export CUDA_VISIBLE_DEVICES=" in path.read_text(encoding="utf-8") for path in written)


def test_write_s_notes_keep_the_same_width(cli, tmp_path: Path) -> None:
    # --write's own notes (evidence, caution, host memory, the flags' note) are wrapped at the same width by the
    # same helper, further lines indented two spaces more; the check command stays whole on its line.
    config = tmp_path / "t.yaml"
    config.write_text((EXAMPLES / "trinity.yaml").read_text(encoding="utf-8").replace(
        "Qwen/Qwen3-8B", "Qwen/Qwen3-32B").replace("max_model_len: 32768", "max_model_len: 131072").replace(
        "engine_num: 2", "engine_num: 4"), encoding="utf-8")
    status, _, _ = cli("--from-config", str(config), "--gpu", "h100", "--token-budget", "auto", "--offload",
                       "--write", str(tmp_path / "w.yaml"))
    written = (tmp_path / "w.yaml").read_text(encoding="utf-8").splitlines()
    notes = [line for line in written if line.lstrip().startswith(("# evidence", "# caution", "# host memory",
                                                                   "# these three", "#   "))]
    assert status == 0 and len(notes) >= 8
    assert [line for line in notes if len(line) > COMMENT_WIDTH and " solve --from-config " not in line] == []
    [check] = [line for line in notes if " solve --from-config " in line]  # whole, on one line
    assert check.endswith(" --check --gpu H100-80GB")


def test_a_long_comment_wraps_at_spaces_alone_and_a_command_stays_whole() -> None:
    url = "https://github.com/modelscope/Trinity-RFT/blob/main/docs/sphinx_doc/source/tutorial/" + "x" * 40
    text = "\n".join([
        "# " + "word " * 17 + "--trinity-version 0.5 leaves them out, and " + url + " says why.",
        "#   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve --from-config CONFIG --check " + "--gpu H100 " * 9,
        "#",
        "trainer:",
        "  save_hf_checkpoint: never  # short",
        "  param_offload: true  # " + "these three are Trinity 0.6's; " * 4 + "end",
        "  trainer_config:",
        "    actor:  # " + "x-y " * 30,
    ])
    assert wrapped_comments(text).splitlines() == [
        "# " + ("word " * 17).rstrip(),  # "--trinity-" would fit: the flag goes whole to the next line
        "# --trinity-version 0.5 leaves them out, and",
        "# " + url,  # a URL longer than the width, whole on its own line
        "# says why.",
        "#   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve --from-config CONFIG --check "
        + "--gpu H100 " * 9,
        "#",
        "trainer:",
        "  save_hf_checkpoint: never  # short",
        "  # " + ("these three are Trinity 0.6's; " * 3).rstrip(),  # above its key, at the key's indentation
        "  # these three are Trinity 0.6's; end",
        "  param_offload: true",
        "  trainer_config:",
        "    # " + "x-y " * 22 + "x-y",  # 4 + 2 + 23 x 4 - 1 = 97 columns: no hyphen broken to fill it
        "    # " + "x-y " * 6 + "x-y",
        "    actor:",
    ]
