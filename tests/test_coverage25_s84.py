"""Lines and branches s84 changed that no test ran, or ran without checking what they do (session 84, coverage25).

A padded model's PPO critic at a higher SP of its own counts one sequence there; a rollout's own length past a YaRN
the model's length needs, or a Gemma 3's (whose length vLLM takes with no factor), is not offered that YaRN; a
``--current`` file that is not JSON but names ``solve`` on no line of standard error's is not told of ``2>&1``;
``--gpu`` of two types with ``--gpu-memory`` is offered no one sized card; ``--no-estimate``'s verdict says no critic's
need at its own SP; ``--rank`` is told ``--lora-rank``; a critic of another model whose own SP divides the trainer GPUs
keeps its budget judged at that SP where only its engine's SP is set to the plan's; an actor's own SP below 1
leaves its budget judged at the trainer's SP (taken as the actor's, 0 would divide by zero). Removed as unreachable:
``_critic_at_own_sp``'s test for no critic (``critic_sps`` is empty without one) and ``_check_token_budgets``' test
that the actor's SP is whole (read as an int key, it is)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from test_criticspmem_s84 import CONFIG, SP_1
from test_smallslips45_s84 import ANOTHER_CRITIC, HEADS

import solver
from solver.memory import breakdown
from solver.query import ConfigProblemCode
from solver.tables import load_catalog
from solver.tables.loaders import load_memory_model
from solver.tables.model_config import load_model_config
from solver.tables.schema import Setting
from solver.trinity import trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]
HF_CONFIGS = Path(__file__).parent / "data" / "hf-configs"


@pytest.fixture
def _env_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")


def test_a_padded_models_critic_at_a_higher_sp_of_its_own_holds_one_sequence_there() -> None:
    # InternLM2's own attention code trains one padded sequence per micro-batch: its critic at SP 2 holds
    # ceil(32768 / 2) = 16384 tokens per GPU, not the trainer's 32768 at SP 1 (a budget, which it reads none of)
    model = load_model_config(HF_CONFIGS / "internlm2-7b.json")
    coefficients, memory = load_memory_model().coefficients, solver.load_catalog().gpu("h20").memory_gib
    own = breakdown(model, memory, 8, Setting(env=True, sp=1), 32768, coefficients, critic="resident", critic_sp=2)
    at_1 = breakdown(model, memory, 8, Setting(env=True, sp=1), 32768, coefficients, critic="resident")
    at_2 = breakdown(model, memory, 8, Setting(env=True, sp=2), 32768, coefficients, critic="resident")
    assert own.critic_pass_gib == at_2.critic_pass_gib < at_1.critic_pass_gib
    assert (own.total_gib, own.tokens_per_gpu) == (at_1.total_gib, 32768)  # the actor's pass at the trainer's SP


ROLLOUT_REFUSED = ("explorer.rollout_model.max_model_len 65536 is beyond {model}'s native context of {native}, which "
                   "the rollout's vLLM takes as its longest length: the rollout's vLLM refuses it unless "
                   "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set before Ray starts; set it (and check that the model handles "
                   "this length), or lower explorer.rollout_model.max_model_len to {native}")


@pytest.mark.parametrize(("model", "path", "length", "native"), [
    ("Qwen3-14B", "Qwen/Qwen3-14B", 49152, 40960),  # model.rope_scaling's YaRN 1.2 for 49152 would not cover 65536
    ("gemma-3-1b-pt", "google/gemma-3-1b-pt", 65536, 32768),  # vLLM applies no factor to a Gemma 3's length
])
def test_the_rollouts_length_refused_offers_no_yarn_that_would_not_lift_it(model: str, path: str, length: int,
                                                                           native: int) -> None:
    loaded = (load_catalog().model(model) if model.startswith("Qwen3") else
              load_model_config(HF_CONFIGS / f"{model}.json"))
    mapping = {"model": {"model_path": path, "max_model_len": length},
               "explorer": {"rollout_model": {"max_model_len": 65536}}}
    problems = trinity_config_problems(mapping, loaded, 8, version="0.6")
    assert [problem.words for problem in problems if problem.code is ConfigProblemCode.ROLLOUT_LENGTH_REFUSED] == [
        ROLLOUT_REFUSED.format(model=model, native=native)]


def test_a_current_file_naming_solve_on_no_stderr_line_gets_the_plain_words(cli: Cli, tmp_path: Path) -> None:
    # the command saved in place of its output names solve, but no "solve cluster: note:" line: no 2>&1 to undo
    fleet, now = tmp_path / "n.yaml", tmp_path / "now.json"
    fleet.write_text("pools:\n  - {name: a, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}\n"
                     "jobs:\n  - {name: j1, model: 4B, max_model_len: 8k, rollout_gpus: 0}\n", encoding="utf-8")
    now.write_text("solve cluster n.yaml --json > now.json\n", encoding="utf-8")
    assert cli("cluster", str(fleet), "--current", str(now)) == (2, "", (
        f"solve cluster: error: --current {now}: not JSON (Expecting value: line 1 column 1 (char 0)): a placement "
        "is what solve cluster --json printed\n"))


def test_two_catalogue_gpus_with_a_memory_are_offered_no_one_sized_card(cli: Cli) -> None:
    # --gpu a100 alone is told the A100-40GB; beside the H100 the 40 GB size names no one card for both
    assert cli("--model", "4B", "--len", "8k", "--gpu", "a100,h100", "--gpu-memory", "40G") == (2, "", (
        "solve: error: --gpu a100,h100 names A100-80GB (80.0 GiB), H100-80GB (79.6 GiB), GPU types whose memory is "
        "each known: drop --gpu-memory, or give your GPU type a name of its own\n"))


@pytest.mark.usefixtures("_env_on")
def test_without_estimates_the_critic_sp_line_says_no_need(cli: Cli, tmp_path: Path) -> None:
    # the tables decide (the H20 table's '-'); no memory model's figure for the critic at its own SP 1
    (tmp_path / "c.yaml").write_text(CONFIG + SP_1)
    status, out, _ = cli("--from-config", str(tmp_path / "c.yaml"), "--gpu", "h20", "--check", "--json",
                         "--no-estimate")
    current = json.loads(out)[0]["current"]
    assert (status, current["trains"], current["critic_sps"], current["predicted_critic_pass"]) == (1, False, [1, 4],
                                                                                                    None)
    (line,) = (words for code, words in zip(current["config_problem_codes"], current["config_problems"], strict=True)
               if code == "role-sp-differs")
    # the tables' verdict counts no critic at its own SP: the line says where the verdict counts it, as before s84
    assert line.endswith("Trinity 0.6 on verl 0.8 or later ignores the key and runs the critic at SP 4; the verdict and "
                         "the plans count the critic at SP 4: set them alike (--write does)")


def test_rank_is_told_lora_rank(cli: Cli) -> None:
    assert cli("--model", "4B", "--len", "8k", "--gpu", "a100", "--rank", "64") == (2, "", (
        "usage: solve [options] (--help lists them)\n"
        "solve: error: unrecognized arguments: --rank 64 (did you mean --lora-rank?)\n"))


@pytest.mark.usefixtures("_env_on")
def test_another_models_critic_keeps_its_budget_at_its_own_sp_where_only_its_engines_is_set(
        cli: Cli, tmp_path: Path) -> None:
    # own SP 3 divides the 6 trainer GPUs (kept); the engine's SP 4 does not (set to the plan's 2): the critic's
    # budget ceil(32768 / 3) = 10923 holds a sequence at SP 3, where verl before 0.8 runs it, so it is kept
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(ANOTHER_CRITIC + "    critic: {ulysses_sequence_parallel_size: 3, ppo_max_token_len_per_gpu: "
                      "10923, fsdp: {ulysses_sequence_parallel_size: 4}}\n")
    status, _, err = cli("--from-config", str(config), "--gpu", "h20", "--write", str(written))
    assert status == 0, err
    critic = yaml.safe_load(written.read_text())["trainer"]["trainer_config"]["critic"]
    assert (critic["ulysses_sequence_parallel_size"], critic["ppo_max_token_len_per_gpu"],
            critic["fsdp"]["ulysses_sequence_parallel_size"]) == (3, 10923, 2)
    assert ("trainer.trainer_config.critic.ppo_max_token_len_per_gpu 10923 kept, below the plan's 32768: it holds a "
            "sequence of the plan's length at the critic's own SP 3 (ceil(32768 / 3) = 10923 tokens per GPU or more)"
            ) in " ".join(err.split())
    assert f"--write keeps it: {HEADS}" in " ".join(err.split())


@pytest.mark.parametrize("actor_sp", [0, -2, 2.5])
def test_an_actor_sp_below_1_or_not_whole_is_not_the_actors_budgets_sp(actor_sp: float) -> None:
    # the actor's own budget is judged at the actor's own SP only where that is at least 1 (taken as the actor's, 0
    # would divide by zero and -2 hold every length); 2.5 is refused as no whole number (a line of its own)
    def budget_lines(actor: dict[str, float]) -> list[str]:
        mapping = {"model": {"model_path": "Qwen/Qwen3-14B", "max_model_len": 65536},
                   "trainer": {"trainer_config": {"actor_rollout_ref": {"actor": actor}}}}
        problems = trinity_config_problems(mapping, load_catalog().model("14B"), 8, version="0.6")
        return [problem.words for problem in problems if problem.code is ConfigProblemCode.TOKEN_BUDGET_BELOW_LENGTH]

    budget = {"ppo_max_token_len_per_gpu": 16384}
    (line,) = budget_lines(budget)  # the trainer's SP 1, as with no SP of the actor's
    assert line.startswith("trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu 16384 x SP 1 is "
                           "below model.max_model_len 65536: ")
    assert budget_lines({**budget, "ulysses_sequence_parallel_size": actor_sp}) == [line]
