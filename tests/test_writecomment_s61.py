"""Tests for session 61's writecomment: ``solve --from-config FILE --write OUT`` without ``--trinity-version`` adds
Trinity 0.6's offload flags under ``trainer`` (``param_offload``, ``optimizer_offload``, ``offload_policy``), which
Trinity 0.5 refuses; the written file now says so on comment lines just above them, in the words ``--emit trinity``
writes beside them (`trinity_06_keys_comment`). A later ``--write`` replaces that note (for 0.5 removes it with the
flags, for 0.6 removes it alone); a config whose own flags are there (Trinity 0.6's) gets none; a user's comments
stay."""

from __future__ import annotations

from pathlib import Path

import pytest

from solver.query import make_query
from solver.rules import COMMAND_OPTIONS
from solver.solve import plan as solve
from solver.tables import load_catalog
from solver.trinity import patch_trinity_config
from solver.trinity.plan_keys import trinity_06_keys_comment

ROOT = Path(__file__).resolve().parents[1]

GRPO_4090 = """\
project: countdown
name: qwen3-1.7b-16k
mode: both
algorithm:
  algorithm_type: grpo
  repeat_times: 8
buffer:
  batch_size: 16
  total_epochs: 1
model:
  model_path: Qwen/Qwen3-1.7B
  max_prompt_tokens: 1024
  max_response_tokens: 15360
  max_model_len: 16384
cluster:
  node_num: 1
  gpu_per_node: 2
explorer:
  rollout_model:
    engine_type: vllm
    engine_num: 1
    tensor_parallel_size: 1
    gpu_memory_utilization: 0.8
# the trainer: one RTX 4090
trainer:
  save_interval: 100  # steps
  # verl's own settings
  trainer_config:
    actor_rollout_ref:
      actor:
        fsdp_config:
          param_offload: false
"""
"""The review's grpo-4090.yaml (Trinity 0.5, Qwen3-1.7B at 16384 tokens on 2 RTX 4090s: 1 rollout, 1 trainer GPU),
with comments of the user's own around ``trainer``. It has no key of Trinity 0.6's, and none only 0.5 has (0.5's
schema is a subset of 0.6's), so it reads as a config for either; its best plan on the 4090 has Offload."""
FLAGS = ("  param_offload: true\n"
         "  optimizer_offload: true\n"
         "  offload_policy: true\n")
NOTE = ("  # these three are Trinity 0.6's (0.5 refuses them: --trinity-version 0.5 leaves them out); on verl\n"
        "  #   before 0.8, Trinity 0.6 reads these, not the roles' fsdp_config flags\n")
"""The note above the flags at column 2: `trinity_06_keys_comment()`, wrapped at 100 as the one above max_model_len."""
TRAINER_HEAD = ("# the trainer: one RTX 4090\n"
                "trainer:\n"
                "  save_interval: 100  # steps\n"
                "  # host memory: 38.6 GiB per node for Offload, within --host-ram 48 GiB\n"
                "  trainer_strategy: fsdp2\n"
                "  ulysses_sequence_parallel_size: 1\n"
                "  max_token_len_per_gpu: 16384\n"
                "  save_hf_checkpoint: never\n")
"""The trainer section as written for Trinity 0.6 or no release named: the reference model's fp32 shards counted."""
TRAINER_HEAD_05 = TRAINER_HEAD.replace("38.6 GiB", "34.3 GiB")
"""As written for Trinity 0.5, whose reference model's shards are bf16: 4.3 GiB less."""
TRAINER_TAIL = ("  # verl's own settings\n"
                "  trainer_config:\n")
PLANNED = ("--gpu", "4090", "--token-budget", "auto", "--host-ram", "48", "--node-gpus", "2", "--margin", "0.01")
"""The review's command's options, at the margin it was made at (a 4090's default, 0.06, leaves 16384 tokens on one
4090 no plan: the notes a plan writes are what these tests are about)."""


def _write(cli, tmp_path: Path, text: str, *flags: str, name: str = "fixed.yaml") -> tuple[str, str]:
    """The file ``--write`` makes of the config `text` planned as the review did, with `flags` (exit 0 asserted),
    and what it says on stderr."""
    config, out = tmp_path / f"in-{name}", tmp_path / name
    config.write_text(text)
    status, _, err = cli("--from-config", str(config), *PLANNED, *flags, "--write", str(out))
    assert status == 0, err
    return out.read_text(), err


def _trainer(written: str) -> str:
    """The written config's ``trainer`` section up to its ``trainer_config``, with the comment line above it."""
    return written[written.index("# the trainer"):written.index("  trainer_config:\n") + len("  trainer_config:\n")]


def test_the_note_is_the_fragments_comment_wrapped():
    assert NOTE.replace("\n  #  ", "").replace("  # ", "").rstrip("\n") == trinity_06_keys_comment()


def test_a_config_for_no_release_named_gets_the_note_above_the_flags_it_adds(cli, tmp_path):
    written, err = _write(cli, tmp_path, GRPO_4090)
    assert _trainer(written) == TRAINER_HEAD + NOTE + FLAGS + TRAINER_TAIL
    assert written.count("these three are Trinity 0.6's") == 1
    assert "Trinity before 0.6 refuses them (--trinity-version 0.5 leaves them out)" in err  # the note on stderr too


def test_trinity_0_5_gets_neither_the_flags_nor_the_note(cli, tmp_path):
    written, _ = _write(cli, tmp_path, GRPO_4090, "--trinity-version", "0.5")
    assert _trainer(written) == TRAINER_HEAD_05 + TRAINER_TAIL


def test_trinity_0_6_gets_the_flags_without_the_note(cli, tmp_path):
    written, _ = _write(cli, tmp_path, GRPO_4090, "--trinity-version", "0.6")
    assert _trainer(written) == TRAINER_HEAD + FLAGS + TRAINER_TAIL


def test_a_config_with_trinity_0_6s_own_flags_gets_no_note(cli, tmp_path):
    own = GRPO_4090.replace("  # verl's own settings\n", "  param_offload: false  # ours\n  # verl's own settings\n")
    written, err = _write(cli, tmp_path, own)
    assert _trainer(written) == (TRAINER_HEAD.replace("  # host memory", "  param_offload: true  # ours\n"
                                                      "  # host memory")
                                 + "  optimizer_offload: true\n  offload_policy: true\n" + TRAINER_TAIL)
    assert "these three" not in written and "Trinity before 0.6 refuses them" not in err


def test_a_second_write_replaces_the_note_rather_than_stacking_it(cli, tmp_path):
    first, _ = _write(cli, tmp_path, GRPO_4090, name="one.yaml")
    again, _ = _write(cli, tmp_path, first, name="two.yaml")
    assert again == first.replace(str(tmp_path / "one.yaml"), str(tmp_path / "two.yaml"))  # the check names the file
    assert _trainer(again) == TRAINER_HEAD + NOTE + FLAGS + TRAINER_TAIL


def test_a_second_write_for_a_release_removes_the_note(cli, tmp_path):
    first, _ = _write(cli, tmp_path, GRPO_4090, name="one.yaml")
    for_05, err = _write(cli, tmp_path, first, "--trinity-version", "0.5", name="five.yaml")
    assert _trainer(for_05) == TRAINER_HEAD_05 + TRAINER_TAIL
    assert "trainer.param_offload, trainer.optimizer_offload, trainer.offload_policy removed" in err
    for_06, _ = _write(cli, tmp_path, first, "--trinity-version", "0.6", name="six.yaml")
    assert _trainer(for_06) == TRAINER_HEAD + FLAGS + TRAINER_TAIL


def test_the_users_comments_by_the_note_stay_and_it_is_not_taken_for_theirs(cli, tmp_path):
    first, _ = _write(cli, tmp_path, GRPO_4090, name="one.yaml")
    edited = first.replace(NOTE, "  # my own: 0.6 on the cluster\n" + NOTE).replace(
        "  offload_policy: true\n  # verl", "  offload_policy: true  # mine too\n  # verl")
    assert edited.count("# my own") == edited.count("# mine too") == 1
    again, _ = _write(cli, tmp_path, edited, name="two.yaml")
    assert _trainer(again) == (TRAINER_HEAD + "  # my own: 0.6 on the cluster\n" + NOTE
                               + FLAGS.replace("offload_policy: true\n", "offload_policy: true  # mine too\n")
                               + TRAINER_TAIL)


def test_a_user_comment_between_the_note_and_the_flags_keeps_the_note_as_it_is():
    """The note is the patch's only where it is just above a flag: with a comment of the user's in between, it is
    theirs, kept as it is, and the flags under it are taken as the config's own (no note added: none stacked)."""
    catalog = load_catalog()
    (answer,) = solve(make_query(catalog, model="1.7B", gpu="4090", max_model_len=16384, budget_gpus=1, exact=True,
                                 token_budget="auto", node_gpus=2, margin=0.01), catalog)
    model = catalog.model("1.7B")
    first = patch_trinity_config(GRPO_4090, answer.plans[0], model, option_names=COMMAND_OPTIONS)
    edited = first.replace(NOTE, NOTE + "  # checked on our 0.6 cluster\n")
    assert edited.count("# checked on our") == 1
    assert patch_trinity_config(edited, answer.plans[0], model, option_names=COMMAND_OPTIONS) == edited


def test_a_plan_without_offload_over_the_note_keeps_it_above_the_flags_it_turns_off():
    catalog = load_catalog()
    (offloaded,) = solve(make_query(catalog, model="1.7B", gpu="4090", max_model_len=16384, budget_gpus=1, exact=True,
                                    token_budget="auto", node_gpus=2, margin=0.01), catalog)
    (plain,) = solve(make_query(catalog, model="1.7B", gpu="a100", max_model_len=16384, budget_gpus=1, exact=True,
                                offload=False, node_gpus=2), catalog)
    model = catalog.model("1.7B")
    assert offloaded.plans[0].offload and not plain.plans[0].offload
    first = patch_trinity_config(GRPO_4090, offloaded.plans[0], model, option_names=COMMAND_OPTIONS)
    again = patch_trinity_config(first, plain.plans[0], model, option_names=COMMAND_OPTIONS)
    assert NOTE + FLAGS.replace("true", "false") + TRAINER_TAIL in again  # still keys 0.5 refuses
    assert again.count("these three are Trinity 0.6's") == 1


def test_the_note_follows_the_configs_indentation_and_a_second_write_finds_it():
    catalog = load_catalog()
    (answer,) = solve(make_query(catalog, model="1.7B", gpu="4090", max_model_len=16384, budget_gpus=1, exact=True,
                                 token_budget="auto", node_gpus=2, margin=0.01), catalog)
    model = catalog.model("1.7B")
    wide = "".join(line[:len(line) - len(line.lstrip(" "))] * 2 + line.lstrip(" ") + "\n"
                   for line in GRPO_4090.splitlines())
    first = patch_trinity_config(wide, answer.plans[0], model, option_names=COMMAND_OPTIONS)
    assert ("    # these three are Trinity 0.6's (0.5 refuses them: --trinity-version 0.5 leaves them out); on\n"
            "    #   verl before 0.8, Trinity 0.6 reads these, not the roles' fsdp_config flags\n"
            "    param_offload: true\n") in first
    assert patch_trinity_config(first, answer.plans[0], model, option_names=COMMAND_OPTIONS) == first


def test_docs_trinity_shows_the_trainer_section_as_it_is_written(cli, tmp_path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(ROOT)  # the docs' paths are the repository's
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    out = tmp_path / "patched.yaml"
    status, _, err = cli("--from-config", "docs/examples/trinity.yaml", "--gpu", "a100", "--offload",
                         "--write", str(out))
    assert status == 0, err
    written = out.read_text()
    section = written[written.index("trainer:\n"):written.index("  trainer_config:\n")]
    assert NOTE + FLAGS in section
    shown = "".join(f"  {line}\n" for line in section.splitlines())
    docs = (ROOT / "docs" / "trinity.md").read_text()
    assert f"  --offload --write patched.yaml` writes:\n  ```yaml\n{shown}  ```\n" in docs
