"""A ref SP above the actor's, read against verl 0.7.1 (Trinity 0.5.2's pin) beside 0.7.0: where the ref's forward
fails (refused with Trinity 0.5), where it runs (no ref step, LoRA, remove padding off) and what it then takes per
GPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import train_mode_text

HEAD = ("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 8192\n{model}"
        "cluster: {{node_num: 1, gpu_per_node: 8}}\nexplorer: {{rollout_model: {{engine_num: 4}}}}\n")
"""Qwen3-8B at 8192 tokens on 8 GPUs, 4 of them rollout engines (4 trainer GPUs); `model` adds keys to ``model``."""
REF_SP = "trainer.trainer_config.actor_rollout_ref.ref.ulysses_sequence_parallel_size"
PADDING = "trainer.trainer_config.actor_rollout_ref.model.use_remove_padding"
VERSIONS = {"0.5": ("--trinity-version", "0.5"), "0.6": ("--trinity-version", "0.6"), "none": ()}


def _config(tmp_path: Path, algorithm: str, trainer: str, model: str = "", buffer: str = "") -> Path:
    """A Trinity config of `algorithm` with `trainer` (YAML lines under ``trainer``), written to `tmp_path`."""
    path = tmp_path / "trinity.yaml"
    path.write_text(train_mode_text(algorithm, f"algorithm: {{algorithm_type: {algorithm}}}\n{buffer}"
                                    + HEAD.format(model=model) + "trainer:\n" + trainer), encoding="utf-8")
    return path


def _judged(cli, config: Path, version: str) -> tuple[int, bool, list[tuple[str, str]], int, str]:
    """The config judged on A100 80GB with `version`: ``--json``'s status, `refused` and (code, words) of each
    problem, ``--check``'s status, and the text's output."""
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--json", *VERSIONS[version])
    current = json.loads(out)[0]["current"]
    check, _, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--check", *VERSIONS[version])
    _, text, _ = cli("--from-config", str(config), "--gpu", "a100-80g", *VERSIONS[version])
    problems = list(zip(current["config_problem_codes"], current["config_problems"], strict=True))
    return status, current["refused"], problems, check, " ".join(text.split())


REF_AT_2 = "  trainer_config:\n    actor_rollout_ref:\n      ref: {ulysses_sequence_parallel_size: 2}\n"
"""The ref at its own SP 2, the actor at the trainer's 1."""
SLICED = (f"{REF_SP} 2 is above the actor's 1: Trinity 0.5 builds no SP groups at an actor SP of 1, so verl 0.7 splits "
          "each of the ref's micro-batches over all the trainer GPUs but gives every GPU the first part, and gathers "
          "none back: the ref's log-probs are fewer than its tokens")
FAILS_BEFORE_08 = ("{REF_SP} 2 is not trainer.ulysses_sequence_parallel_size 1: Trinity 0.6 on verl 0.8 or later runs "
                   "the ref at SP 1, but {who} builds no SP groups at the actor's SP 1, so the "
                   "ref's forward at SP 2 gathers none of its split micro-batches back and fails at its first step "
                   "(remove padding on); the verdict is at SP 1: set them alike (--write does)")
RUNS_AT_2 = ("{REF_SP} 2 is not trainer.ulysses_sequence_parallel_size 1: {who} runs that role's "
             "forward at SP 2 (with the trainer's token budget), splitting none of its micro-batches with remove "
             "padding off, Trinity 0.6 on verl 0.8 or later at SP 1; the verdict is at SP 1: set them alike (--write "
             "does)")


def _words(template: str, version: str) -> str:
    """`template` (`FAILS_BEFORE_08`, `RUNS_AT_2`) with the words that name the legacy path of `version` ("0.6", or
    "none" for no release named)."""
    return template.format(REF_SP=REF_SP, who="Trinity 0.6 on verl before 0.8" if version == "0.6" else
                           "Trinity with verl before 0.8")

def test_05_refuses_a_ref_sp_above_an_actor_sp_of_one_whose_forward_runs(cli, tmp_path: Path):
    # GRPO uses the ref, remove padding is on (the default): pad_input raises at the first ref step on verl 0.7.0
    # and 0.7.1 alike (dp_actor.py:264 / :331), so Trinity 0.5 as a whole refuses it: --check exits 1.
    config = _config(tmp_path, "grpo", REF_AT_2)
    words = (f"{SLICED}, so the first ref step fails (remove padding on, its default): set the ref's SP to the actor's "
             "(--write does)")
    assert _judged(cli, config, "0.5")[:4] == (0, True, [("ref-sp-ungrouped-refused", words)], 1)
    assert f"but the config as written is refused (the problem that refuses it says why). refused: {words}" in _judged(
        cli, config, "0.5")[4]
    # Trinity 0.6 on verl 0.8 or later runs the ref at the trainer's SP: said, not refused, with or without 0.6.
    for version in ("0.6", "none"):
        assert _judged(cli, config, version)[:4] == (0, False, [("role-sp-differs", _words(FAILS_BEFORE_08, version))],
                                                     0)


@pytest.mark.parametrize(("algorithm", "model", "buffer", "why"), [
    ("sft", "", "buffer: {train_batch_size: 64}\n", "algorithm_type sft uses no ref model"),
    ("raft", "", "", "algorithm_type raft uses no ref model"),
    ("grpo", "  lora_configs: [{lora_rank: 32, lora_alpha: 32}]\n", "",
     "with LoRA (model.lora_configs) the actor, at its own SP, gives the ref's log-probs")])
def test_05_says_why_the_ref_never_fails_where_no_ref_forward_runs(cli, tmp_path: Path, algorithm: str, model: str,
                                                                   buffer: str, why: str):
    # An algorithm whose use_reference is false computes no ref log-probs (verl_trainer.py:541); with LoRA the actor
    # without its adapter gives them (fsdp_workers.py:966): nothing fails, so role-sp-differs, and --check passes.
    config = _config(tmp_path, algorithm, REF_AT_2, model, buffer)
    words = (f"{SLICED}, which would fail its first step, but {why}, so it never runs; set the ref's SP to the "
             "actor's (--write does)")
    status, refused, problems, check, text = _judged(cli, config, "0.5")
    assert (status, refused, problems[0], check) == (0, False, ("role-sp-differs", words), 0)
    assert f"but: {words}" in text
    # Without 0.5 the same reasons hold (Trinity 0.6 counts sft and raft as algorithms without a ref), so the SP line
    # says so too, not that Trinity runs the ref at SP 2.
    assert _judged(cli, config, "none")[2][0] == ("role-sp-differs", (
        f"{REF_SP} 2 is not trainer.ulysses_sequence_parallel_size 1, but {why}, so its forward never runs; the "
        "verdict is at SP 1: set them alike (--write does)"))


def test_05_with_remove_padding_off_the_ref_runs_whole_micro_batches(cli, tmp_path: Path):
    # Without remove padding verl slices nothing (dp_actor.py:346 in 0.7.1): no failure, but each GPU forwards the
    # ref's micro-batches whole, the trainer's filled 16384 x the ref's 2 = 32768 tokens, above the verdict's 16384.
    config = _config(tmp_path, "grpo", "  trainer_config:\n    actor_rollout_ref:\n"
                     "      model: {use_remove_padding: false}\n      ref: {ulysses_sequence_parallel_size: 2}\n")
    status, refused, problems, check, text = _judged(cli, config, "0.5")
    # (s87: --check fails where the config lets a GPU take more than the verdict's budget)
    assert (status, refused, [code for code, _ in problems], check) == (
        0, False, ["remove-padding-off", "role-sp-differs", "token-budget-above-verdict"], 1)
    assert problems[1:] == [
        ("role-sp-differs",
         (f"{REF_SP} 2 is above the actor's 1: Trinity 0.5 builds no SP groups at an actor SP of 1, and with "
          f"{PADDING} false verl 0.7 splits none of the ref's micro-batches: each GPU takes whole ones of the ref's "
          "budget x 2 tokens, padded to the longest sequence; set the ref's SP to the actor's (--write does)")),
        ("token-budget-above-verdict",
         ("the unset trainer.max_token_len_per_gpu, which Trinity fills with 16384 and the ref takes, at the ref's SP "
          "2: each of the ref's micro-batches holds 16384 x 2 tokens, and with remove padding off verl splits none of "
          "them, so each GPU takes all 32768 (padded to the longest sequence), more than the verdict's 16384: set the "
          "ref's SP to the actor's (--write does)"))]
    assert "but: the unset trainer.max_token_len_per_gpu, which Trinity fills with 16384" in text
    # Trinity 0.6 sets this key to trainer.use_remove_padding (on): its verl 0.7.1 path still fails.
    assert _judged(cli, config, "0.6")[2][1] == ("role-sp-differs", _words(FAILS_BEFORE_08, "0.6"))
    # Without a release, 0.5 reads the key that is off: the old words.
    assert _judged(cli, config, "none")[2][1] == ("role-sp-differs", _words(RUNS_AT_2, "none"))


def test_05_with_remove_padding_off_a_ref_over_actor_groups_is_not_split(cli, tmp_path: Path):
    # Actor SP 2, ref SP 4: with remove padding on each GPU takes 8192 x 4 / 2 = 16384 of the ref's tokens; off, all
    # 8192 x 4 = 32768 (nothing split).
    trainer = ("  ulysses_sequence_parallel_size: 2\n  trainer_config:\n    actor_rollout_ref:\n{padding}"
               "      ref: {{ulysses_sequence_parallel_size: 4}}\n")
    lines = {}
    for padding in ("", "      model: {use_remove_padding: false}\n"):
        status, refused, problems, check, _ = _judged(cli, _config(tmp_path, "grpo", trainer.format(padding=padding)),
                                                      "0.5")
        assert (status, refused, check) == (0, False, 1)  # s87: above the verdict's budget, --check fails
        lines[bool(padding)] = [words for code, words in problems if code == "token-budget-above-verdict"]
    head = ("the unset trainer.max_token_len_per_gpu, which Trinity fills with 8192 and the ref takes, at the ref's SP "
            "4: each of the ref's micro-batches holds 8192 x 4 tokens, ")
    assert lines == {
        False: [head + ("but Trinity 0.5 runs its forward in the actor's SP groups of 2 GPUs, so each GPU takes 8192 x "
                        "4 / 2 = 16384 tokens there, more than the verdict's 8192: set the ref's SP to the actor's "
                        "(--write does)")],
        True: [head + ("and with remove padding off verl splits none of them, so each GPU takes all 32768 (padded to "
                       "the longest sequence), more than the verdict's 8192: set the ref's SP to the actor's (--write "
                       "does)")]}


def test_06_with_its_own_remove_padding_off_the_ref_runs_before_verl_08(cli, tmp_path: Path):
    # Trinity 0.6's own trainer.use_remove_padding off: its verl_legacy path slices nothing (verl_config.py:707 copies
    # the key to verl's), so each GPU takes the ref's budget x 2 whole, as 0.5's worker does (test_legacyref_s85).
    config = _config(tmp_path, "grpo", "  use_remove_padding: false\n" + REF_AT_2)
    for version in ("0.6", "none"):
        status, refused, problems, check, _ = _judged(cli, config, version)
        assert (status, refused, problems, check) == (0, False, [
            ("remove-padding-off", ("trainer.use_remove_padding is false: the tables measured with remove "
                                    "padding, Trinity's default, and the verdict and the plans assume it; without it "
                                    "each micro-batch is padded to its longest sequence, and verl splits no sequence "
                                    "over Ulysses SP: set it to true")),
            ("role-sp-differs", _words(RUNS_AT_2, version)),
            ("token-budget-above-verdict", (
                "the unset trainer.max_token_len_per_gpu, which Trinity fills with 16384 and the ref takes, at the "
                "ref's SP 2: each of the ref's micro-batches holds 16384 x 2 tokens, and with remove padding off verl "
                "splits none of them, so each GPU takes all 32768 (padded to the longest sequence), more than the "
                "verdict's 16384; Trinity 0.6 on verl 0.8 or later runs it at SP 1: set the ref's SP to the actor's "
                "(--write does)"))], 1)


def test_a_misspelt_lora_key_is_named_now_that_it_is_read(cli, tmp_path: Path):
    # lora_rank under actor_rollout_ref.model is read (it turns LoRA on): a near miss of it is named, refused under
    # 0.5 (its typed veRLConfig knows no such key), not otherwise.
    config = _config(tmp_path, "grpo", "  trainer_config:\n    actor_rollout_ref:\n      model: {lora_rnk: 8}\n")
    unset = ("trainer.trainer_config.actor_rollout_ref.model.lora_rnk: did you mean lora_rank? That key is unset, and "
             "read as such")
    assert _judged(cli, config, "0.5")[:4] == (0, True, [
        ("misspelt-key-refused", f"{unset}; Trinity refuses the config (it knows no such key)")], 1)
    assert _judged(cli, config, "0.6")[:4] == (0, False, [
        ("misspelt-key", f"{unset} (Trinity 0.6 on verl before 0.8 drops the key)")], 0)


def test_05_with_remove_padding_off_and_no_ref_step_says_the_ref_never_runs(cli, tmp_path: Path):
    # sft computes no ref log-probs: with remove padding off too, the line says the ref's forward never runs, not
    # that each GPU takes whole micro-batches of the ref's (as it does for grpo).
    config = _config(tmp_path, "sft", "  trainer_config:\n    actor_rollout_ref:\n"
                     "      model: {use_remove_padding: false}\n      ref: {ulysses_sequence_parallel_size: 2}\n",
                     buffer="buffer: {train_batch_size: 64}\n")
    status, refused, problems, check, text = _judged(cli, config, "0.5")
    words = (f"{REF_SP} 2 is above the actor's 1: Trinity 0.5 builds no SP groups at an actor SP of 1, and with "
             f"{PADDING} false verl 0.7 splits none of the ref's micro-batches, but algorithm_type sft uses no ref "
             "model, so the ref's forward never runs; set the ref's SP to the actor's (--write does)")
    assert (status, refused, problems[1], check) == (0, False, ("role-sp-differs", words), 0)
    assert "takes whole ones" not in text
