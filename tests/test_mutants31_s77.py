"""Tests that kill the mutants that survived mutants31's pass over session 77's merges (currenttime, peftnames,
persona48, smallslips24, dpofrag, lorajson, persona47): each asserts behaviour the pass found untested."""

from __future__ import annotations

from pathlib import Path

import pytest
from cluster_api import place
from test_currenttime_s77 import STUCK, _asked_as_it_runs
from test_dpomicro_s76 import ACTOR_SIZE, _dpo
from test_minnodes_s64 import _questions_per_second
from test_ownbudget_s72 import _problems
from test_padbound_s71 import INTERNLM2
from test_peftnames_s77 import CONFIGS, Cli, _checked
from test_runpast_s76 import CATALOG, JOBS, _fleet, _running
from test_smallslips24_s77 import TWO_NODES, _lowered, _write

import solver
from solver import load_weights
from solver.cluster import Planner
from solver.cluster.options import fleet_options
from solver.tables import RunningJob, load_catalog, load_fleet
from solver.tables.model_config import load_model_config
from solver.tables.peft_match import QWEN3_MOE, excludes_every_module, shown_module_names
from solver.tables.peft_names import PEFT_NAMES_BY_MODEL_TYPE
from solver.trinity.fragment import trinity_fragment
from solver.trinity.plan_keys import dpo_pair_note

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"
LOST = {"name": "lost", "model": "Qwen3-1.7B", "max_model_len": 8192, "rollout_gpus": 8, "priority": 5}
"""A job that is not required, with no way at all (as `STUCK`: 8 rollout GPUs leave none of the node's 8)."""


def test_the_jobs_left_out_for_a_required_job_name_the_required_ones_alone(tmp_path: Path) -> None:
    # stuck (required) and lost (not required) fit nowhere; a is left out for stuck alone, and the answer says how
    # long working out the ways took (`_none_placed`), as every answer does.
    fleet = load_fleet(_fleet(tmp_path, [STUCK, LOST, JOBS[0]], "now"), CATALOG)
    result = place(fleet, catalog=CATALOG)
    assert (result.status, result.no_way_to_run) == ("infeasible", ("stuck", "lost"))
    assert [(left.job, left.reason_code, left.reason) for left in result.unplaced[2:]] == [
        ("a", "another-job-fits-nowhere",
         "the required job stuck fits nowhere, and a placement places every required job or none")]
    assert 0 < result.planning_s <= result.wall_time_s


def test_a_llama_config_is_judged_on_llamas_own_names_not_assumed(cli: Cli, tmp_path: Path) -> None:
    # llama is in the table: Phi-3's .*qkv_proj matches none of its modules, which is refused, not merely cautioned.
    status, current = _checked(cli, tmp_path, CONFIGS["llama"], ".*qkv_proj")
    assert (status, current["refused"], current["config_problem_codes"][0]) == (1, True, "lora-configs-refused")
    assert "(a dense model, model_type llama), matches no module" in current["config_problems"][0]


def test_a_config_without_a_model_type_has_its_names_assumed(cli: Cli, tmp_path: Path) -> None:
    config = {key: value for key, value in CONFIGS["llama"].items() if key != "model_type"}
    status, current = _checked(cli, tmp_path, config, ".*qkv_proj")
    assert (status, current["refused"]) == (0, False)
    assumed = [words for words, code in zip(current["config_problems"], current["config_problem_codes"], strict=True)
               if code == "lora-targets-assumed"]
    assert [words.split(", whose")[0] for words in assumed] == [
        "model.lora_configs[0].target_modules '.*qkv_proj', on mine (a dense model, no model_type"]


def test_a_block_of_names_without_one_ending_is_braced_whole() -> None:
    # DeepSeek's latent attention: kv_a_proj_with_mqa does not end in _proj, so no common ending is taken out.
    assert shown_module_names(PEFT_NAMES_BY_MODEL_TYPE["deepseek_v3"]) == (
        "model.layers.N.self_attn.{q_proj,q_a_proj,q_b_proj,kv_a_proj_with_mqa,kv_b_proj,o_proj}, "
        "model.layers.N.mlp.gate, model.layers.N.mlp.experts.{gate,up,down}_proj, model.embed_tokens and lm_head")
    # (no dense MLP nor shared experts: PEFT maps their names to the routed experts' parameters, test_loraleft_s78)


def test_a_converted_mixture_of_experts_v4_expert_names_are_no_modules_to_exclude() -> None:
    # A Qwen3-MoE layer's experts are one module (mlp.experts) in transformers 5: an exclusion that leaves out every
    # module but matches none of the experts' v4 names still leaves every module out.
    for name in ("gate_proj", "up_proj"):  # down_proj's: test_review77_s77
        assert excludes_every_module(f"(?!.*experts\\.{name}$).*", QWEN3_MOE), name
    assert not excludes_every_module("(?!.*experts$).*", QWEN3_MOE)  # mlp.experts itself is a module


@pytest.mark.parametrize("first", [LOST, {**JOBS[0], "required": True}], ids=["no-way-not-required", "required"])
def test_the_ways_as_they_run_are_asked_past_a_job_that_has_ways_or_is_not_required(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first: dict[str, object]) -> None:
    # As test_currenttime_s77's infeasible case, but the job asked first either has no way and is not required (lost,
    # first for its priority), or is required and has ways (a): neither decides the answer, so a placement is still
    # searched, and b's way as it runs, past the ways' limit, is asked (it has none: it asks twice its length now).
    running = _running(tmp_path, JOBS)
    jobs = [first, *([JOBS[0]] if first is LOST else []), {**JOBS[1], "max_model_len": 16384}]
    fleet = load_fleet(_fleet(tmp_path, jobs, "now"), CATALOG)
    _questions_per_second(monkeypatch, 0.1)
    asked = _asked_as_it_runs(monkeypatch)
    result = place(fleet, catalog=CATALOG, time_limit_s=10.0, current=running)
    assert (asked, result.status, result.ways_cut_short) == (["b"], "feasible", ("b",))
    assert (result.no_way_to_run, [placement.job for placement in result.placements]) == (
        ("lost",) if first is LOST else (), ["a"])


def test_a_regex_that_adapts_all_of_the_first_type_taking_it_is_counted_whole(cli: Cli, tmp_path: Path) -> None:
    # mlp.act_fn is a module of a dense Qwen3 alone: the regex is taken on Qwen3-MoE's names first, every one of whose
    # linear layers it adapts (no "matches ... alone" clause), though not every one of a dense Qwen3's.
    pattern = ".*\\.(q_proj|k_proj|v_proj|o_proj|gate|experts\\.(gate_proj|up_proj|down_proj)|mlp\\.act_fn)"
    status, current = _checked(cli, tmp_path, CONFIGS["olmoe"], pattern)
    counted = [words for words, code in zip(current["config_problems"], current["config_problem_codes"], strict=True)
               if code == "lora-counted-as-full"]
    assert (status, len(counted)) == (0, 1)
    assert "unless --lora-rank gives another), and the tables" in counted[0]


def test_the_text_of_an_infeasible_answer_says_the_jobs_cut_short_are_not_required(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # test_currenttime_s77's infeasible case without --minimize nodes: b, cut short, is not required, so its ways
    # would not have made room (not "a job that must be placed has no way": stuck is required and has none, b not).
    running = _running(tmp_path, JOBS)
    fleet_path = _fleet(tmp_path, [STUCK, JOBS[0], {**JOBS[1], "max_model_len": 16384}], "now")
    _questions_per_second(monkeypatch, 0.1)
    result = place(load_fleet(fleet_path, CATALOG), catalog=CATALOG, time_limit_s=10.0, current=running)
    assert (result.status, result.ways_cut_short, result.required_cut_short) == ("infeasible", ("b",), False)
    assert ("the time limit cut working out the jobs' ways short: b got none (the jobs of more priority are asked "
            "first), and as none of them is required, their ways would not make room for the required jobs") in (
        solver.cluster_text(result, fleet_path, width=400).splitlines())


def test_a_fragment_for_a_configs_own_lora_says_the_moe_caution_in_its_header() -> None:
    # Where the config gives its own LoRA, the fragment writes no LoRA config (whose comment would say the caution):
    # its header says it, once.
    (answer,) = solver.plan("30B-A3B", gpu="h100", budget_gpus=8, max_model_len=32768, lora_rank=64,
                            trinity_version="0.5.2")
    assert answer.best is not None
    text = trinity_fragment(answer.best, solver.load_catalog().model(answer.model), 8, version="0.5",
                            layout={"model": {"lora_configs": [{"lora_rank": 64}]}})
    assert "lora_configs" not in text
    assert text.count("# caution: LoRA on Qwen3-30B-A3B, a mixture of experts: with transformers 5 (Trinity 0.5.0 "
                      "allows\n# it, 0.5.2 up to 5.3.0;") == 1


def test_the_apply_lines_lora_comment_names_the_releases_of_trinity_version(cli: Cli) -> None:
    status, out, err = cli("--model", "30B-A3B", "--gpu", "h100", "--gpus", "8", "--len", "32k", "--lora-rank", "64",
                           "--trinity-version", "0.5")
    assert (status, err) == (0, "")
    shown = " ".join(out.split())
    # a caution row, which the apply comment points to (smallslips37)
    assert shown.count("caution LoRA on Qwen3-30B-A3B, a mixture of experts: with transformers 5 (Trinity 0.5.0 "
                       "allows it, 0.5.2 up to 5.3.0;") == 1
    assert "with LoRA Trinity builds no reference model; but see the caution above on how Trinity saves" in shown
    assert "Trinity 0.6 requires 5.12.1" not in shown


def test_a_running_job_on_gpus_its_pool_no_longer_has_moves_or_stops(cli: Cli, tmp_path: Path) -> None:
    # Each job of TWO_NODES takes GPUs 0 to 7 of its node; with 7 GPUs per node now, both run until they stop (GPU 7
    # gone): small moves (gpu-gone), big, which no layout of 7-GPU nodes runs, stops (smallslips27; before, neither
    # was running, and no "running now" line was given).
    current, _ = _lowered(cli, tmp_path, small_priority=1)
    narrow = {"pools": [{**TWO_NODES["pools"][0], "gpus_per_node": 7}], "jobs": TWO_NODES["jobs"]}
    lines = cli("cluster", str(_write(tmp_path / "narrow.yaml", narrow)), "--current", str(current))[1].splitlines()
    assert lines[1:3] == ["running now: 0 stay, 1 moves, 1 stops; 0 start",
                          "pool a100: 2 x 7 A100-80GB; 1 node and 6 of 14 GPUs used"]
    assert ("moves: small: it runs on node 1 of pool a100 (GPUs 0-7) now, "
            "and restarts as placed: GPU 7 of pool a100, where it runs, "
            "is no longer in the pool (gpus_per_node: 7)") in " ".join(" ".join(lines).split())  # the line wraps


def test_dpos_actor_size_2_on_trinity_05_is_unbounded_alone() -> None:
    # 0.5 doubles 2 to two pairs: micro-batch-unbounded says so; dpo-pair-doubled (2 right on verl 0.8) is not said.
    assert [code for code, _ in _problems(_dpo(2, "0.5"), "0.5")] == ["micro-batch-unbounded"]


def test_the_dpo_pair_note_says_why_the_pair_is_written() -> None:
    # A model trained with remove padding: its rows of one pair, as its config has them, or as what is made from it
    # turns dynamic batch sizes off (before, roles87: no note, its pairs left to split).
    qwen = load_catalog().model("Qwen3-8B")
    assert (dpo_pair_note("dpo.yaml", qwen, None, rows=True) or "").startswith(
        "dpo.yaml trains DPO with dynamic batch sizes off in the actor's update, so what is made from it writes ")
    assert (dpo_pair_note("dpo.yaml", qwen, None) or "").startswith(
        "dpo.yaml trains DPO with dynamic batch sizes on in the actor's update, which split its pairs, so what is "
        "made from it turns them off and writes ")
    assert dpo_pair_note("dpo.yaml", qwen, "0.5") is None
    assert (dpo_pair_note("dpo.yaml", load_model_config(INTERNLM2), None) or "").startswith(
        "dpo.yaml trains DPO with one padded sequence per micro-batch for ")


def test_the_apply_lines_write_dpos_pair_as_one_for_trinity_05(cli: Cli) -> None:
    # Trinity 0.5 doubles the actor's size for DPO: 1 holds one pair there, and no comment on 2 is written.
    status, out, _ = cli("--model-config", str(INTERNLM2), "--gpu", "h100", "--len", "32768", "--gpus", "8", "--dpo",
                         "--trinity-version", "0.5")
    lines = out.splitlines()
    at = lines.index("trainer.use_dynamic_bsz: false")
    assert (status, lines[at + 1]) == (0, f"{ACTOR_SIZE}: 1")
    assert not [line for line in lines if line.startswith("# DPO's actor: one pair")]


@pytest.mark.parametrize(("nodes", "added"), [(3, [(8, 2)]), (2, [])])
def test_a_job_on_a_node_its_pool_no_longer_has_gets_no_way_at_its_running_count(
        tmp_path: Path, nodes: int, added: list[tuple[int, int]]) -> None:
    # small runs on 8 trainer GPUs (of nodes 2 and 3), a count the planner does not offer it: where its pool still has
    # node 2 it gets ways at that count, to stay as it runs; where the pool has 2 nodes now it cannot stay, and gets
    # its own ways alone.
    fleet = load_fleet(_write(tmp_path / "now.yaml", {"pools": [{**TWO_NODES["pools"][0], "nodes": nodes}],
                                                      "jobs": TWO_NODES["jobs"][1:]}), CATALOG)
    planner = Planner(CATALOG.for_fleet(fleet), load_weights(), "auto")
    running = RunningJob(job=0, pool=0, nodes=(2,), gpu_indexes=tuple(range(8)), trainer_gpus=8, rollout_gpus=2,
                         max_model_len=32768, sp=2, offload=False)
    own = [(way.plan.gpus, way.nodes) for way in fleet_options(planner, fleet).options]
    ways = [(way.plan.gpus, way.nodes) for way in fleet_options(planner, fleet, running=[running]).options]
    assert (own, ways) == ([(2, 1), (4, 1), (6, 1)], [(2, 1), (4, 1), (6, 1), *added])


def test_a_refused_configs_lora_on_a_mixture_of_experts_keeps_its_caution_row(cli: Cli, tmp_path: Path) -> None:
    # Mixtral's own LoRA, on Phi-3's names: refused, so the check says nothing of the adapter config saved cut short;
    # the plans count full fine-tuning (refusedlora, s80), so no LoRA caution row either: the refused line says it.
    _checked(cli, tmp_path, CONFIGS["mixtral"], ".*qkv_proj")
    status, out, _ = cli("--from-config", str(tmp_path / "trinity.yaml"), "--model-config", str(tmp_path / "mine"),
                         "--gpu", "h100")
    shown = " ".join(out.split())
    assert (status, shown.count("LoRA on mine, a mixture of experts: with transformers 5")) == (0, 0)
    assert shown.count("with model.lora_configs refused (lora-configs-refused says why), the verdict and the plans "
                       "count full fine-tuning") == 1


def test_a_fleet_of_the_same_nodes_but_other_gpus_per_node_is_refused() -> None:
    fleet = solver.load_fleet(EXAMPLES / "fleet.yaml")
    of_16 = fleet.pools[0].model_copy(update={"gpus_per_node": 16})  # a100: 2 nodes, of 16 GPUs now
    with pytest.raises(solver.QueryError) as raised:
        solver.cluster_text(solver.place(fleet), fleet.model_copy(update={"pools": (of_16, *fleet.pools[1:])}))
    assert str(raised.value) == ("result is on 2 nodes of 8 GPUs in pool a100, fleet has 2 nodes of 16: pass the fleet "
                                 "it placed")


def test_a_job_left_out_that_the_fleet_lacks_is_refused() -> None:
    # required.yaml places none of its jobs: each is left out, and one the fleet lacks is named.
    fleet = solver.load_fleet(EXAMPLES / "required.yaml")
    result = solver.place(fleet)
    assert (result.placements, len(result.unplaced)) == ((), 4)
    renamed = tuple(job.model_copy(update={"name": "math-8b-2"}) if job.name == "math-8b" else job
                    for job in fleet.jobs)
    with pytest.raises(solver.QueryError) as raised:
        solver.cluster_text(result, fleet.model_copy(update={"jobs": renamed}))
    assert str(raised.value) == "result names math-8b, which fleet has no job of: pass the fleet it placed"
