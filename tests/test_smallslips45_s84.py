"""Small slips (s84, smallslips45): (1) ``solve memory --dpo --token-budget`` refused as ``solve --dpo`` refuses it;
(2) a PPO critic of another model (``model.critic_model_path``) whose own SP does not divide the trainer GPUs gets the
plan's from ``--write``, and the line says so; (3) ``solve cluster --current`` refuses a running job whose trainer and
rollout GPUs are more than its nodes and GPU indexes name (fewer, a job holding GPUs it does not use, moves:
test_persona68_s83, test_movereason_s72); (4) a ``???`` read first through a reference (``model.critic_model_path``,
read first since s83) carries the advice of one read directly; (5) a top-level key that parks YAML anchors, which
Trinity refuses (OmegaConf 2.3.0's merge into its typed Config raises ConfigKeyError: ``Key 'base' not in
'Config'``), says where the anchors go instead."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from test_criticbudget_s82 import BASE as PPO_BASE  # PPO on Qwen3-8B, 6 trainer H20s at SP 2

import solver
from solver.tables import Catalog, QueryError, load_catalog
from solver.trinity import critic_run_sps, trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]
DPO_BUDGET_UNREAD = ("runs with dynamic batch sizes off in the actor's update, as its Trinity keys write (on, they "
                     "split DPO's pairs), which reads no token budget: each micro-batch holds one pair, a chosen and "
                     "a rejected sequence, which the plans count at Trinity's default budget, ceil(2 x max_model_len "
                     "/ SP) tokens per GPU: leave {option} out")
ANOTHER_CRITIC = PPO_BASE.replace("model_path: Qwen/Qwen3-8B,",
                                  "model_path: Qwen/Qwen3-8B, critic_model_path: Qwen/Qwen3-4B,")
"""`PPO_BASE` whose critic is another model's, Qwen3-4B's, to whose heads the plans hold no SP."""
SP = "trainer.trainer_config.critic.ulysses_sequence_parallel_size"
ENGINE_SP = "trainer.trainer_config.critic.fsdp.ulysses_sequence_parallel_size"
HEADS = ("the critic is model.critic_model_path's, Qwen3-4B, of 32 attention heads (8 key-value), to which "
         "rft-solver, counting the critic as the actor's model, holds no SP")
"""critic90: a catalogue model's name is resolved to its heads (it said rft-solver does not know them)."""
MEMORY = ("memory", "--model", "Qwen3-8B", "--gpu", "h100", "--gpus", "8", "--len", "8192")


@pytest.mark.parametrize("budget", ["9000", "4096"])  # one that holds a sequence, one that does not
def test_solve_memory_refuses_a_token_budget_beside_dpo_as_solve_does(cli: Cli, budget: str):
    words = DPO_BUDGET_UNREAD.format(option="--token-budget")
    assert cli(*MEMORY, "--dpo", "--token-budget", budget) == (
        2, "", f"solve memory: error: --token-budget {budget}: --dpo {words}\n")
    status, _, _ = cli(*MEMORY, "--dpo")
    assert status == 0


def test_solve_memory_keeps_a_token_budget_without_dpo(cli: Cli):
    status, out, err = cli(*MEMORY, "--token-budget", "9000")
    assert (status, err) == (0, "") and "9000" in out


@pytest.mark.parametrize("estimate", [solver.estimate_memory, solver.memory_answer])
def test_the_api_memory_estimate_refuses_a_token_budget_beside_dpo_naming_its_keyword(estimate):
    words = DPO_BUDGET_UNREAD.format(option="max_token_len_per_gpu")
    with pytest.raises(QueryError) as refused:
        estimate("Qwen3-8B", "h100", 8, 8192, dpo=True, max_token_len_per_gpu=16384)
    assert str(refused.value) == f"max_token_len_per_gpu=16384: dpo=True {words}"


# (2) a critic of another model whose own SP does not divide the trainer GPUs


@pytest.fixture
def _env_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")


def _critic_sp_write(cli: Cli, tmp_path: Path, critic_sp: int, *options: str) -> tuple[dict, list[str]]:
    """``--write``'s copy of `ANOTHER_CRITIC` with the critic's own SP and its engine's at `critic_sp` (on H20s, with
    `options`), and the ``role-sp-differs`` (or ``-refused``) lines ``--check --json`` gives the config."""
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(ANOTHER_CRITIC + f"    critic: {{ulysses_sequence_parallel_size: {critic_sp}, "
                      f"fsdp: {{ulysses_sequence_parallel_size: {critic_sp}}}}}\n")
    status, out, err = cli("--from-config", str(config), "--gpu", "h20", "--check", "--json", *options)
    assert status in (0, 1), err
    current = json.loads(out)[0]["current"]
    lines = [line for line, code in zip(current["config_problems"], current["config_problem_codes"], strict=True)
             if code.startswith("role-sp-differs")]
    status, _, err = cli("--from-config", str(config), "--gpu", "h20", *options, "--write", str(written))
    assert status == 0, err
    return yaml.safe_load(written.read_text()), lines


def _critic(written: dict) -> dict:
    return written["trainer"]["trainer_config"]["critic"]


@pytest.mark.usefixtures("_env_on")
def test_write_sets_another_models_critic_sp_that_does_not_divide_the_trainer_gpus(cli: Cli, tmp_path: Path):
    written, lines = _critic_sp_write(cli, tmp_path, 4)
    assert _critic(written)["ulysses_sequence_parallel_size"] == 2
    assert _critic(written)["fsdp"]["ulysses_sequence_parallel_size"] == 2
    fix = f"--write sets it to the plan's SP, as SP=4 does not divide 6 GPUs ({HEADS}: check that the plan's SP divides " \
          "them)"
    # neither SP runs (verl before 0.8 refuses 4, verl 0.8's engine fails at it: test_legacyref_s85), so no verl
    # runs the config (role-sp-differs-refused: test_lastfix85_s85)
    assert [line.startswith(key) and line.endswith(f"the config runs on no verl: {fix}")
            for line, key in zip(lines, (f"{ENGINE_SP} 4 is not", f"{SP} 4 is not"), strict=True)] == [True, True]


@pytest.mark.usefixtures("_env_on")
def test_write_keeps_another_models_critic_sp_that_divides_the_trainer_gpus(cli: Cli, tmp_path: Path):
    written, lines = _critic_sp_write(cli, tmp_path, 3)
    assert _critic(written)["ulysses_sequence_parallel_size"] == 3
    assert _critic(written)["fsdp"]["ulysses_sequence_parallel_size"] == 3
    assert len(lines) == 2
    assert all(line.endswith(f"and the planner's plans at SP 2: --write keeps it: {HEADS}") for line in lines)


@pytest.mark.usefixtures("_env_on")
def test_write_for_trinity_05_sets_another_models_critic_sp_it_refuses(cli: Cli, tmp_path: Path):
    written, _ = _critic_sp_write(cli, tmp_path, 4, "--trinity-version", "0.5")
    assert _critic(written)["ulysses_sequence_parallel_size"] == 2
    assert _critic(written)["fsdp"]["ulysses_sequence_parallel_size"] == 4  # 0.5 refuses the section: left to you


def test_another_models_critic_is_named_from_the_catalogue_the_run_was_given():
    # smalls92: the words named the shipped catalogue's model, not that of the catalogue the caller gave (a
    # --model-config model, or one of the API's own catalogue): a critic of such a model had "heads unknown"
    own = load_catalog().model("4B").model_copy(update={"name": "MyCritic-4B", "aliases": ()})
    catalog = load_catalog().with_model(own)
    text = (ANOTHER_CRITIC.replace("critic_model_path: Qwen/Qwen3-4B", "critic_model_path: /ckpt/MyCritic-4B")
            + "    critic: {ulysses_sequence_parallel_size: 3, fsdp: {ulysses_sequence_parallel_size: 3}}\n")
    mapping, model = yaml.safe_load(text), load_catalog().model("8B")

    def said(given: Catalog | None) -> list[str]:
        lines = [problem.words for problem in trinity_config_problems(mapping, model, 6, catalog=given)
                 if problem.code.value == "role-sp-differs"]
        runs = critic_run_sps(mapping, model, 6, catalog=given).lines
        assert [line.words() for line in runs] == lines
        return lines

    heads = HEADS.replace("Qwen3-4B", "MyCritic-4B")
    assert [line.endswith(heads) for line in said(catalog)] == [True, True]
    assert [line.endswith("whose heads rft-solver does not know") for line in said(None)] == [True, True]
    # and so does --check's reading of the config, through the API's catalogue, each line with the critic's need at
    # its SP as the verdict counts it (mutants56)
    (answer,) = solver.check_config("c.yaml", text=text, gpu="h100", catalog=catalog, environ={}).answers
    assert answer.current is not None and [
        words.endswith(heads) and "the critic's update at SP 3 (65.1 GiB per H100-80GB GPU, of 71.0 usable)" in words
        for code, words in zip(answer.current.config_problem_codes, answer.current.config_problems, strict=True)
        if code.value == "role-sp-differs"] == [True, True]


# (3) --current: a job on more GPUs than its placement names

SMALL = """\
pools:
  - {name: a100, gpu: A100-80GB, nodes: 2, gpus_per_node: 8}
jobs:
  - {name: small, model: Qwen3-0.6B, max_model_len: 8192, rollout_gpus: 0}
"""


def _current(cli: Cli, tmp_path: Path, **placed: object) -> tuple[int, str, str]:
    """``solve cluster --current`` of `SMALL` with job small running as `placed` gives it (on node 0, SP 1)."""
    fleet, now = tmp_path / "fleet.yaml", tmp_path / "now.json"
    fleet.write_text(SMALL, encoding="utf-8")
    running = {"job": "small", "pool": "a100", "nodes": [0], "plan": {"max_model_len": 8192, "sp": 1, "offload": False},
               **placed}
    now.write_text(json.dumps({"schema_version": 1, "placements": [running]}), encoding="utf-8")
    return cli("cluster", str(fleet), "--current", str(now), "--json")


@pytest.mark.parametrize(("nodes", "gpus", "trainer", "rollout", "named", "on"), [
    ([0], 6, 8, 0, 6, "6 GPUs on 1 node"),  # the docs' example
    ([0], 6, 4, 4, 6, "6 GPUs on 1 node"),
    ([0, 1], 4, 8, 2, 8, "4 GPUs on 2 nodes")])
def test_current_refuses_a_job_on_more_gpus_than_its_placement_names(cli: Cli, tmp_path: Path, nodes: list[int],
                                                                     gpus: int, trainer: int, rollout: int,
                                                                     named: int, on: str):
    status, out, err = _current(cli, tmp_path, nodes=nodes, gpu_indexes=list(range(gpus)), trainer_gpus=trainer,
                                rollout_gpus=rollout)
    assert (status, out) == (2, "")
    assert err == (f"solve cluster: error: --current {tmp_path / 'now.json'}: job small: trainer_gpus {trainer} and "
                   f"rollout_gpus {rollout} make {trainer + rollout} GPUs, more than the {named} its nodes and "
                   f"gpu_indexes name ({on}): a job runs on the GPUs its placement names\n")


def test_cluster_md_quotes_the_refusal_as_the_first_case_words_it():
    docs = " ".join((Path(__file__).parents[1] / "docs" / "cluster.md").read_text().split())
    assert ("`--current now.json: job small: trainer_gpus 8 and rollout_gpus 0 make 8 GPUs, more than the 6 its nodes "
            "and gpu_indexes name (6 GPUs on 1 node): a job runs on the GPUs its placement names`") in docs


def test_current_takes_a_job_holding_more_gpus_than_it_uses_and_moves_it(cli: Cli, tmp_path: Path):
    status, out, err = _current(cli, tmp_path, gpu_indexes=list(range(8)), trainer_gpus=6, rollout_gpus=0)
    (placed,) = json.loads(out)["placements"]
    assert (status, err, placed["current"], placed["move_reason_code"]) == (0, "", "moves", "no-way-as-it-runs")


# (4) a ??? read through a reference: the same advice as read directly

MISSING_ADVICE = "is ???, a value missing (OmegaConf refuses to read it): give it"


@pytest.mark.parametrize("missing", ["max_prompt_tokens", "max_response_tokens"])
def test_a_missing_value_read_first_through_the_critics_model_path_says_give_it(missing: str):
    model = {"model_path": "Qwen/Qwen3-8B", missing: "???", "critic_model_path": f"${{model.{missing}}}"}
    problems = trinity_config_problems({"model": model}, load_catalog().model("8B"), 8)
    assert [(problem.code.value, problem.words) for problem in problems] == [("unresolved-value", (
        f"cannot check model.critic_model_path: cannot resolve '${{model.{missing}}}': model.{missing} "
        f"{MISSING_ADVICE}"))]


def test_a_missing_critic_model_path_read_directly_says_the_same():
    model = {"model_path": "Qwen/Qwen3-8B", "critic_model_path": "???"}
    (problem,) = trinity_config_problems({"model": model}, load_catalog().model("8B"), 8)
    assert problem.words == f"cannot check model.critic_model_path {MISSING_ADVICE}"


# (5) a top-level key that parks YAML anchors

NO_SUCH_KEY = ("no release of Trinity (0.5.0 to 0.6.0) has this key there, so Trinity refuses the config (it knows no "
               "such key): remove it, or move it where Trinity reads it")
ANCHORS = "; where it parks YAML anchors, put each anchor on the first key that uses it, then remove it"


def test_a_top_level_key_parking_anchors_is_refused_saying_where_they_go(cli: Cli, tmp_path: Path):
    config = tmp_path / "c.yaml"
    config.write_text("base: &model {model_path: Qwen/Qwen3-8B, max_model_len: 16384}\nmodel: *model\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json")
    current = json.loads(out)[0]["current"]
    said = dict(zip(current["config_problem_codes"], current["config_problems"], strict=True))
    assert (status, current["refused"]) == (1, True), err
    assert said["no-such-key-refused"] == f"base: {NO_SUCH_KEY}{ANCHORS}"


def test_a_key_below_the_top_level_gets_no_anchor_words():
    (problem,) = trinity_config_problems({"model": {"model_path": "Qwen/Qwen3-8B"}, "trainer": {"foo": 1}},
                                         load_catalog().model("8B"), 8)
    assert (problem.code.value, problem.words) == ("no-such-key-refused", f"trainer.foo: {NO_SUCH_KEY}")
