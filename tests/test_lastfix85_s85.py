"""What session 85's last review found (s85, lastfix85): a PPO critic that no verl line runs is refused, the words on
two files that are one, a GPU type named twice, and the note on a plan past the config's nodes.

1. Trinity with verl before 0.8 checks a critic's own SP as the actor's and refuses one that does not divide the
   trainer GPUs (``_check_parallel_config``, ``trainer/verl_legacy/verl_config.py:609`` in 0.6.0); verl 0.8.0's FSDP
   engine builds its Ulysses mesh of ``world // sp`` x ``sp`` GPUs and fails as it starts on those left out
   (``workers/engine/fsdp/transformer_impl.py:220-226``). A critic at SP 4, its engine at SP 4, on 6 trainer GPUs
   runs on neither line: the config is refused, as ``dpo-mini-batch-split-refused`` is where every line fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_smallslips47_s85 import CONFIG

CRITIC_KEY = "trainer.trainer_config.critic.ulysses_sequence_parallel_size"
ENGINE_KEY = "trainer.trainer_config.critic.fsdp.ulysses_sequence_parallel_size"
PPO = ("algorithm: {algorithm_type: ppo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\n"
       "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 2}}\ntrainer:\n"
       "  ulysses_sequence_parallel_size: 2\n  trainer_config:\n    critic: {CRITIC}\n")
"""PPO on 6 trainer GPUs (2 rollout) at the trainer's SP 2; CRITIC the critic's section."""
BOTH_AT_4 = "{ulysses_sequence_parallel_size: 4, fsdp: {ulysses_sequence_parallel_size: 4}}"
ON_08_FAILS = ("where SP=4 does not divide 6 GPUs: its engine's SP mesh holds 4 of them and it fails as it starts on "
               "the 2 left out")


def _lines(cli, tmp_path: Path, critic: str, *options: str) -> tuple[dict, list[tuple[str, str]]]:
    """``--from-config --check --json``'s ``current`` for `PPO` with the critic's section `critic` on H100s, and
    (code, words) of each of its lines on the critic's SP and its engine's."""
    path = tmp_path / "ppo.yaml"
    path.write_text(PPO.replace("{CRITIC}", critic), encoding="utf-8")
    status, out, _ = cli("--from-config", str(path), "--gpu", "h100", "--json", *options)
    assert status == 0
    current = json.loads(out)[0]["current"]
    return current, [(code, words) for code, words in zip(current["config_problem_codes"], current["config_problems"],
                                                          strict=True) if code.startswith("role-sp-differs")]


@pytest.mark.parametrize(("options", "who"), [((), "Trinity with verl before 0.8"),
                                              (("--trinity-version", "0.6"), "Trinity 0.6 on verl before 0.8")])
def test_a_critic_no_verl_line_runs_is_refused(cli, tmp_path: Path, options: tuple[str, ...], who: str):
    # Before: two role-sp-differs lines ending "the verdict and the plans count the critic at SP 2", not refused.
    current, lines = _lines(cli, tmp_path, BOTH_AT_4, *options)
    assert current["refused"] and current["critic_sps"] == []
    assert lines == [
        ("role-sp-differs-refused", (
            f"{ENGINE_KEY} 4 is not trainer.ulysses_sequence_parallel_size 2: Trinity 0.6 on verl 0.8 or later takes "
            f"SP 4, its engine's over the trainer's (checking it against nothing), {ON_08_FAILS}, and with verl "
            f"before 0.8 no release reads it; {who} refuses the critic's own SP 4 ({CRITIC_KEY}), so the config runs "
            "on no verl: set them alike (--write does)")),
        ("role-sp-differs-refused", (
            f"{CRITIC_KEY} 4 is not trainer.ulysses_sequence_parallel_size 2: {who} checks the critic's SP as the "
            "actor's and refuses the config (SP=4 does not divide 6 GPUs); Trinity 0.6 on verl 0.8 or later ignores "
            f"the key and runs the critic at SP 4 ({ENGINE_KEY}), {ON_08_FAILS}; the config runs on no verl: set them "
            "alike (--write does)"))]


def test_check_fails_on_a_critic_no_verl_line_runs(cli, tmp_path: Path):
    path = tmp_path / "ppo.yaml"
    path.write_text(PPO.replace("{CRITIC}", BOTH_AT_4), encoding="utf-8")
    status, out, _ = cli("--from-config", str(path), "--gpu", "h100", "--check")
    assert status == 1
    assert "but the config as\nwritten is refused (the 2 problems that refuse it say why)" in out
    assert out.count("  refused: trainer.trainer_config.critic.") == 2


@pytest.mark.parametrize(("critic", "runs_at"), [
    ("{ulysses_sequence_parallel_size: 4}", [2]),  # verl 0.8 runs it at the trainer's SP 2
    ("{fsdp: {ulysses_sequence_parallel_size: 4}}", [2]),  # verl before 0.8 runs it at the trainer's SP 2
    ("{ulysses_sequence_parallel_size: 1, fsdp: {ulysses_sequence_parallel_size: 4}}", [1]),  # before 0.8 at SP 1
    ("{ulysses_sequence_parallel_size: 4, fsdp: {ulysses_sequence_parallel_size: 1}}", [1])])  # verl 0.8 at SP 1
def test_a_critic_one_verl_line_runs_is_not_refused(cli, tmp_path: Path, critic: str, runs_at: list[int]):
    current, lines = _lines(cli, tmp_path, critic)
    assert not current["refused"] and lines and {code for code, _ in lines} == {"role-sp-differs"}
    assert current["critic_sps"] == ([] if runs_at == [2] else runs_at)


def test_the_cluster_file_is_no_option(cli, tmp_path: Path):
    # Before: "each option reads a file of its own kind", of the cluster file, which no option names.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools: []\njobs: []\n", encoding="utf-8")
    (tmp_path / "link.yaml").symlink_to(fleet)
    status, out, err = cli("cluster", str(fleet), "--current", str(tmp_path / "link.yaml"))
    assert (status, out, err) == (2, "", (
        f"solve cluster: error: the cluster file {fleet} and --current {tmp_path / 'link.yaml'} name one file: each "
        "reads a file of its own kind: give each its own file\n"))


@pytest.mark.parametrize(("asked", "said"), [
    (("--model", "8B", "--len", "32k", "--gpu", "a100", "a100"), "--gpu took 'a100', which names 'a100' already"),
    (("--model", "8B", "--len", "32k", "--gpu=a100,h100", "H100"),
     "--gpu took 'a100,h100', which names 'H100' already"),
    (("map", "--model", "8B", "8B"), "--model took '8B', which names '8B' already")])
def test_a_value_named_again_is_told_one_is_enough(cli, asked: tuple[str, ...], said: str):
    # Before: told to write --gpu a100,a100, the same GPU type twice.
    status, out, err = cli(*asked)
    assert (status, out) == (2, "") and err.endswith(f"unrecognized arguments: {asked[-1]} ({said}: one is enough)\n")


def test_the_note_on_the_configs_nodes_says_total_gpus_replaces_gpus(cli, tmp_path: Path):
    # The note appears only with --gpus, and solve refuses --total-gpus beside it.
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG.read_text(encoding="utf-8").replace("node_num: 1", "node_num: 2")
                      .replace("engine_num: 2", "engine_num: 8"), encoding="utf-8")
    _, _, err = cli("--from-config", str(config), "--gpu", "h100", "--gpus", "16")
    assert err.endswith("or plan within its 16 with --total-gpus 16 in place of --gpus\n")
    assert cli("--from-config", str(config), "--gpu", "h100", "--gpus", "16", "--total-gpus", "16")[0] == 2
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--total-gpus", "16")
    assert (status, err) == (0, "")
