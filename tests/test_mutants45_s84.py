"""Tests that kill the survivors of the mutation pass over this session's changes to solver/ (s84, helper
mutants45): each pins a behaviour the session's own tests left free."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from test_criticbudget_s82 import BASE as PPO_BASE  # PPO on Qwen3-8B, 6 trainer H20s at SP 2
from test_criticsp_s83 import _config as _ppo_config
from test_criticspmem_s84 import CONFIG as LONG_PPO
from test_criticspmem_s84 import SP_1
from test_padbound_s71 import INTERNLM2
from test_persona73_s84 import A_JOBS, POOL_FIELDS
from test_smallslips45_s84 import ANOTHER_CRITIC, HEADS
from test_smallslips45_s84 import _current as _running
from test_vllmlen2_s63 import _gemma3

from solver.memory import breakdown
from solver.tables import Setting, load_catalog, load_memory_model
from solver.tables.model_config import load_model_config
from solver.trinity import critic_run_sps, load_config_mapping, trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]
SP = "trainer.trainer_config.critic.ulysses_sequence_parallel_size"


def _with_critic_sp(text: str, critic_sp: int) -> str:
    """`text` (a config ending in ``trainer_config:``) with the critic's own SP `critic_sp`."""
    return text + f"    critic: {{ulysses_sequence_parallel_size: {critic_sp}}}\n"


def test_without_estimates_the_critic_sp_line_gives_no_figure(cli: Cli, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # --no-estimate: the H20 table's '-' decides, and the memory model says nothing of the critic at SP 1 either
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    (tmp_path / "c.yaml").write_text(LONG_PPO + SP_1)
    status, out, err = cli("--from-config", str(tmp_path / "c.yaml"), "--gpu", "h20", "--check", "--json",
                           "--no-estimate")
    current = json.loads(out)[0]["current"]
    assert (status, current["trains"], current["critic_sps"], current["predicted_critic_pass"]) == (
        1, False, [1, 4], None), err
    (line,) = [words for code, words in zip(current["config_problem_codes"], current["config_problems"], strict=True)
               if code == "role-sp-differs"]
    assert line.endswith("the verdict and the plans count the critic at SP 4: set them alike (--write does)")


def test_a_padded_models_critic_at_its_own_sp_holds_one_sequence_split_over_that_sp() -> None:
    # InternLM2 trains one padded sequence per micro-batch: its critic at SP 2 holds ceil(65536 / 2) tokens per GPU,
    # as a trainer at SP 2 does (48.34 GiB), not the whole sequence (64.91 GiB, SP 1's) nor the trainer's SP 4's
    model, coefficients = load_model_config(INTERNLM2), load_memory_model().coefficients
    memory = load_catalog().gpu("h100").memory_gib

    def counted(sp: int, critic_sp: int | None = None) -> float:
        return breakdown(model, memory, 8, Setting(env=True, sp=sp), 65536, coefficients, 0.0, critic="resident",
                         critic_sp=critic_sp).critic_pass_gib

    assert [round(counted(sp), 2) for sp in (1, 2, 4)] == [64.91, 48.34, 38.44]
    assert counted(4, critic_sp=2) == counted(2) and counted(4, critic_sp=1) == counted(1)


@pytest.mark.parametrize(("critic_sp", "runs_at"), [
    (1, (1, 2)),  # taken by verl before 0.8; 0.8 runs it at the trainer's SP 2
    (4, ()),  # divides Qwen3-8B's heads, not the 6 trainer GPUs: refused before 0.8, so SP 2 alone
    (3, ()),  # divides the 6 GPUs, not the 32 heads: refused before 0.8 likewise
])
def test_a_critic_sp_refused_for_the_gpus_or_the_heads_alone_is_no_sp_it_runs_at(critic_sp: int,
                                                                                 runs_at: tuple[int, ...]) -> None:
    mapping = load_config_mapping(_with_critic_sp(PPO_BASE, critic_sp), "c.yaml")
    assert critic_run_sps(mapping, load_catalog().model("Qwen3-8B"), 6).sps == runs_at


def test_another_models_critic_sp_on_one_trainer_gpu_is_set_to_the_plans() -> None:
    # SP 2 cannot split one GPU: --write (the API's patch) sets the critic's SP to the plan's (plan_keys'
    # _critic_sp_keys), as the line says, though the critic's heads are unknown
    text = ANOTHER_CRITIC.replace("ulysses_sequence_parallel_size: 2", "ulysses_sequence_parallel_size: 1")
    mapping = load_config_mapping(_with_critic_sp(text, 2), "c.yaml")
    lines = [problem.words for problem in trinity_config_problems(mapping, load_catalog().model("Qwen3-8B"), 1)
             if problem.code == "role-sp-differs"]
    assert len(lines) == 1 and lines[0].startswith(f"{SP} 2 is not trainer.ulysses_sequence_parallel_size 1")
    assert lines[0].endswith(f"the plans count the critic at SP 1: solver.trinity.patch_trinity_config sets it to the "
                             f"plan's SP, as SP=2 does not divide 1 GPU ({HEADS}: check that the plan's SP divides "
                             "them)")


ACTOR_BUDGET = "trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu"


def _actor_budget_lines(actor_sp: float, trainer_sp: int) -> list[str]:
    """The ``token-budget-below-length`` lines of Qwen3-14B at 65536 tokens on 8 GPUs for Trinity 0.6, the actor's
    own budget 16384 at its own SP `actor_sp`, the trainer's `trainer_sp`."""
    actor = {"ulysses_sequence_parallel_size": actor_sp, "ppo_max_token_len_per_gpu": 16384}
    mapping = {"model": {"model_path": "Qwen/Qwen3-14B", "max_model_len": 65536},
               "trainer": {"ulysses_sequence_parallel_size": trainer_sp,
                           "trainer_config": {"actor_rollout_ref": {"actor": actor}}}}
    problems = trinity_config_problems(mapping, load_catalog().model("14B"), 8, version="0.6")
    return [problem.words for problem in problems if problem.code == "token-budget-below-length"]


def test_the_actors_own_sp_1_below_the_trainers_judges_its_budget_at_sp_1() -> None:
    # 16384 x the trainer's SP 8 holds 65536 tokens; verl before 0.8 runs the actor at its own SP 1, where it does not
    assert _actor_budget_lines(1, 8) == [(
        f"{ACTOR_BUDGET} 16384 x SP 1 (the actor's) is below model.max_model_len 65536: Trinity 0.6 on verl before 0.8 "
        "raises it to ceil(65536 / 1) = 65536, and on verl 0.8 or later ignores the key")]


def test_an_actor_sp_that_is_no_whole_number_leaves_its_budget_judged_at_the_trainers_sp() -> None:
    # 2.5 is refused as no whole number (its own line), which the checks read as no SP: no SP 2 "of the actor's"
    (line,) = _actor_budget_lines(2.5, 1)
    assert line.startswith(f"{ACTOR_BUDGET} 16384 x SP 1 is below model.max_model_len 65536: ")


def test_a_gemma_3_rollout_past_its_positions_is_told_the_variable_alone(tmp_path: Path) -> None:
    # vLLM applies no RoPE scaling's factor to a Gemma 3's length: model.rope_scaling's YaRN, which the rollout takes,
    # does not lift the refusal, so the line names no rope_scaling, only the variable
    model = load_model_config(_gemma3(tmp_path, max_position_embeddings=32768, _name_or_path="my-gemma3"))
    mapping = {"model": {"max_model_len": 65536}, "explorer": {"rollout_model": {"max_model_len": 65536}}}
    assert [problem.words for problem in trinity_config_problems(mapping, model, 8)
            if problem.code == "rollout-length-refused"] == [(
        "explorer.rollout_model.max_model_len 65536 is beyond my-gemma3's native context of 32768, which the rollout's "
        "vLLM takes as its longest length: the rollout's vLLM refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set "
        "before Ray starts; set it (and check that the model handles this length), or lower "
        "explorer.rollout_model.max_model_len to 32768")]


def _written(cli: Cli, tmp_path: Path, text: str, *options: str) -> dict:
    """``--write``'s copy of `text` on H20s (with `options`), read back."""
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(text)
    status, _, err = cli("--from-config", str(config), "--gpu", "h20", *options, "--write", str(written))
    assert status == 0, err
    return dict(yaml.safe_load(written.read_text()))


def test_write_turns_a_trainer_offload_flag_of_0_into_false(cli: Cli, tmp_path: Path) -> None:
    # 0 equals False, but is not the plan's value of its type: --write writes false (Trinity 0.6's trainer-level flag,
    # which it copies over the roles'), as it does for 1
    text = _ppo_config("ppo", "").replace("  max_token_len_per_gpu: 32768\n", "  max_token_len_per_gpu: 32768\n"
                                          "  param_offload: 0\n")
    trainer = _written(cli, tmp_path, text, "--trinity-version", "0.6")["trainer"]
    assert [trainer[flag] for flag in ("param_offload", "optimizer_offload", "offload_policy")] == [False] * 3
    assert trainer["param_offload"] is False  # 0 == False: the type is the point


@pytest.mark.parametrize("version", ["0.5", "0.6"])
def test_the_critics_budget_is_judged_at_the_sp_write_sets_for_each_release(cli: Cli, tmp_path: Path,
                                                                            version: str) -> None:
    # 0.5 has no engine SP key: the critic's own SP 1, set to the plan's 2 all the same, keeps its budget of 20000,
    # which holds a sequence at SP 2 (ceil(32768 / 2) = 16384), not at SP 1
    text = _ppo_config("ppo", "    critic: {ulysses_sequence_parallel_size: 1, ppo_max_token_len_per_gpu: 20000}\n")
    critic = _written(cli, tmp_path, text, "--trinity-version", version)["trainer"]["trainer_config"]["critic"]
    assert (critic["ulysses_sequence_parallel_size"], critic["ppo_max_token_len_per_gpu"]) == (2, 20000)


def test_several_catalogue_gpus_with_a_memory_are_told_no_sibling(cli: Cli) -> None:
    # --gpu-memory gives one GPU type's memory: with several known types named, no 40 GB sibling of the first is meant
    assert cli("--model", "4B", "--len", "8k", "--gpu", "a100,h100", "--gpu-memory", "40G") == (2, "", (
        "solve: error: --gpu a100,h100 names A100-80GB (80.0 GiB), H100-80GB (79.6 GiB), GPU types whose memory is "
        "each known: drop --gpu-memory, or give your GPU type a name of its own\n"))


def test_current_refuses_a_job_on_one_gpu_more_than_its_placement_names(cli: Cli, tmp_path: Path) -> None:
    status, out, err = _running(cli, tmp_path, gpu_indexes=list(range(7)), trainer_gpus=8, rollout_gpus=0)
    assert (status, out, err) == (2, "", (
        f"solve cluster: error: --current {tmp_path / 'now.json'}: job small: trainer_gpus 8 and rollout_gpus 0 make 8 "
        "GPUs, more than the 7 its nodes and gpu_indexes name (7 GPUs on 1 node): a job runs on the GPUs its placement "
        "names\n"))


@pytest.mark.parametrize("field", ["model", "model_config", "rollout_gpus", "required"])
def test_a_jobs_field_given_to_a_pool_says_whose_it_is(cli: Cli, tmp_path: Path, field: str) -> None:
    fleet = tmp_path / "q.yaml"
    fleet.write_text(f"pools:\n  - {{name: h20, gpu: H20-96GB, nodes: 1, gpus_per_node: 8, {field}: x}}\n"
                     "jobs:\n  - {name: j1, model: 4B, max_model_len: 8k}\n", encoding="utf-8")
    assert cli("cluster", str(fleet)) == (2, "", (
        f"solve cluster: error: {fleet}: line 2: pool h20: unknown field {field!r} ({A_JOBS}; fields: "
        f"{POOL_FIELDS})\n"))
