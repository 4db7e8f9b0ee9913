"""Mutation testing of session 55's changes (Env from PYTORCH_HIP_ALLOC_CONF and PYTORCH_ALLOC_CONF, a ref SP above
the actor's with verl 0.7.1, `solve map`'s ROCm caution, --write's removed keys, cluster JSON): a test for each
hand-made mutant of those lines that the suite let live."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from solver.results import RolloutEngines

CONFIG = ("algorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-32B\n  max_model_len: 65536\n"
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


def test_two_variables_differing_from_the_one_read_each_get_a_line_in_the_order_pytorch_reads_them(
        cli, config: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:512")
    monkeypatch.setenv("PYTORCH_HIP_ALLOC_CONF", "expandable_segments:True")
    monkeypatch.setenv("PYTORCH_ALLOC_CONF", "expandable_segments:True")
    _, current, text = judged(cli, config, "mi300x")
    assert current["config_problem_codes"].count("alloc-confs-disagree") == 2
    hip = text.index("but: PYTORCH_HIP_ALLOC_CONF turns Env on where PYTORCH_CUDA_ALLOC_CONF turns it off: every "
                     "PyTorch release that takes Env from PYTORCH_HIP_ALLOC_CONF takes it from PYTORCH_CUDA_ALLOC_CONF "
                     "first, as this verdict does: unset PYTORCH_HIP_ALLOC_CONF")
    assert hip < text.index("but: PYTORCH_ALLOC_CONF turns Env on where PYTORCH_CUDA_ALLOC_CONF turns it off:")


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
        (f"{ROLE_KEY.format(role=role)} {own} is not trainer.ulysses_sequence_parallel_size {trainer}: Trinity 0.6 on "
         f"verl before 0.8 runs that role at SP {own} (with the trainer's token budget), Trinity 0.6 on verl 0.8 or "
         f"later at SP {trainer}; the verdict is at SP {trainer}: set them alike (--write does)")
        for role in ("actor", "ref")]


REF_AT_2 = ("algorithm: {{algorithm_type: {algorithm}}}\nmodel: {{model_path: Qwen/Qwen3-8B, max_model_len: 8192}}\n"
            "cluster: {{node_num: 1, gpu_per_node: 8}}\nexplorer: {{rollout_model: {{engine_num: 4}}}}\n"
            "trainer:\n  trainer_config:\n    actor_rollout_ref:\n      ref: {{ulysses_sequence_parallel_size: 2}}\n")
"""Qwen3-8B on 4 trainer GPUs, the actor at SP 1 and the ref at its own SP 2, of an algorithm."""
SLICED = (f"{ROLE_KEY.format(role='ref')} 2 is above the actor's 1: Trinity 0.5 builds no SP groups at an actor SP of "
          "1, so verl 0.7 splits each of the ref's micro-batches over all the trainer GPUs but gives every GPU the "
          "first part, and gathers none back: the ref's log-probs are fewer than its tokens")
RUNS_06 = (f"{ROLE_KEY.format(role='ref')} 2 is not trainer.ulysses_sequence_parallel_size 1, but algorithm_type dapo "
           "uses no ref model, so its forward never runs; the verdict is at SP 1: set them alike (--write does)")


DAPO_05 = ("algorithm.algorithm_type dapo: Trinity 0.5 has no such algorithm, so it refuses the config as it loads it: "
           "name one of asymre, cispo, dpo, grpo, gspo, mix, mix_chord, multi_step_grpo, on_policy_distill, opmd, ppo, "
           "raft, rec, reinforceplusplus, rloo, sapo, sft, sppo, topr (or run a release that has it: Trinity 0.6)")
JSD_05 = ("algorithm.algorithm_type jsd: Trinity 0.5.0 has no such algorithm (0.5.1, 0.5.2 and 0.6 have it), so it "
          "refuses the config as it loads it: with it, name another")
"""Since session 82 (algorelease), the lines on an algorithm type that 0.5's registry lacks (0.5.0's, for jsd)."""


@pytest.mark.parametrize(("algorithm", "version", "refused", "words"), [
    # DAPO uses the ref on Trinity 0.5 (its forward fails), not on 0.6; JSD uses none on 0.5.2.
    ("dapo", "0.5", True, [DAPO_05, (f"{SLICED}, so the first ref step fails (remove padding on, its default): set "
                                     "the ref's SP to the actor's (--write does)")]),
    ("dapo", "0.6", False, [RUNS_06]),
    ("jsd", "0.5", False, [JSD_05, (f"{SLICED}, which would fail its first step, but algorithm_type jsd uses no ref "
                                    "model, so it never runs; set the ref's SP to the actor's (--write does)")])])
def test_whether_the_ref_runs_follows_the_releases_own_algorithms_without_a_ref(
        cli, tmp_path: Path, algorithm: str, version: str, refused: bool, words: list[str]):
    config = tmp_path / "ref.yaml"
    config.write_text(REF_AT_2.format(algorithm=algorithm), encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--trinity-version", version, "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["refused"], current["config_problems"]) == (0, refused, words)
    check, _, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--trinity-version", version, "--check")
    assert check == (1 if refused else 0)


@pytest.mark.parametrize(("rank", "refused"), [(0, True), (8, False)])
def test_a_lora_rank_of_0_is_no_lora_and_the_refs_forward_runs(cli, tmp_path: Path, rank: int, refused: bool):
    config = tmp_path / "lora.yaml"
    config.write_text(REF_AT_2.format(algorithm="grpo").replace(
        "      ref:", f"      model: {{lora_rank: {rank}}}\n      ref:"), encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--trinity-version", "0.5", "--json")
    current = json.loads(out)[0]["current"]
    lora = ("with LoRA (trainer.trainer_config.actor_rollout_ref.model.lora_rank) the actor, at its own SP, gives the "
            "ref's log-probs")
    lora_line = [] if refused else ["lora-counted-as-full"]  # a rank above 0 is LoRA: test_lorafull_s67
    assert current["config_problem_codes"][1:] == lora_line
    assert (status, current["refused"], current["config_problems"][:1]) == (0, refused, [
        f"{SLICED}, so the first ref step fails (remove padding on, its default): set the ref's SP to the actor's "
        "(--write does)" if refused else
        f"{SLICED}, which would fail its first step, but {lora}, so it never runs; set the ref's SP to the actor's "
        "(--write does)"])


@pytest.mark.parametrize("field", ["weights_gib", "kv_cache_gib", "room_gib"])
def test_rollout_engines_refuse_a_negative_gib(field: str):
    figures = {"weights_gib": 1.0, "kv_cache_gib": 1.0, "room_gib": 1.0, field: -0.5}
    with pytest.raises(ValidationError, match=f"{field}\n  Input should be greater than or equal to 0"):
        RolloutEngines(size=1, largest=False, **figures)
