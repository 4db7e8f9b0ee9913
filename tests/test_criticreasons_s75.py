"""The PPO critic in explanations and cluster reasons, and what a running job kept by ``--current`` forgoes (session 75,
criticreasons): `--explain`'s nearest setting, where only the memory model speaks for what the limits leave, is the one
whose further peak (the actor's pass, or the critic's own update) is least over, and names the critic's update where
that is what rules it out; an unplaced cluster job's planner reason says its critic was counted; `Planner.reasons`'
key is the job shape `why_no_option` asks by; and a running job that stays says what the idle GPUs beside it would
grow it to (`count-kept`) and where another pool's idle room would run it for less (`pool-kept`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from cluster_reference import check_placements

import solver
from solver.cluster.options import Planner
from solver.cluster.reasons import why_no_option
from solver.rules import API_OPTIONS, COMMAND_OPTIONS
from solver.tables import JobTraining, load_catalog, load_fleet, load_weights

CATALOG = load_catalog()

Cli = Callable[..., tuple[int, str, str]]


def _limit(model: str, gpu: str, gpus: int, length: int, **pins: Any) -> str:
    """The `limit` line of `solve --explain` for a query with no plan."""
    (answer,) = solver.plan(model, gpu=gpu, max_model_len=length, budget_gpus=gpus, explain=True,
                            option_names=COMMAND_OPTIONS, **pins)
    assert answer.explanation[0].rule == "limit"
    return answer.explanation[0].detail


def test_the_nearest_setting_ruled_out_by_the_critics_update_alone_names_that_update():
    # Qwen3-32B at 16384 on 8 H100s with --no-env and a resident critic: Offload + SP=8's actor pass fits (59.2 GiB of
    # 71.0), its critic's own update does not (72.1, 1.1 over). Before, the nearest skipped it for Offload + SP=2,
    # whose actor pass is 11.1 over (and its critic's update 18.0).
    assert _limit("32B", "h100", 8, 16384, env=False, critic="resident") == (
        "no plan passes these rules together: the pins (--no-env); nothing in the tables and the memory model's "
        "estimates vouches for Qwen3-32B on H100-80GB at 16384 tokens within the limits above (the nearest, Offload + "
        "SP=8 on 8 GPUs: the memory model predicts 59.2 GiB of 71.0 usable, but the PPO critic's own update takes "
        "72.1 GiB, 1.1 GiB over)")
    sp8 = solver.estimate_memory("32B", "h100", 8, 16384, sp=8, env=False, offload=True, critic="resident")
    assert (f"{sp8.total_gib:.1f}", f"{sp8.usable_gib:.1f}", f"{sp8.critic_pass_gib:.1f}") == ("59.2", "71.0", "72.1")
    assert sp8.total_gib < sp8.usable_gib < sp8.critic_pass_gib
    sp2 = solver.estimate_memory("32B", "h100", 8, 16384, sp=2, env=False, offload=True, critic="resident")
    assert (f"{sp2.total_gib - sp2.usable_gib:.1f}", f"{sp2.critic_pass_gib - sp2.usable_gib:.1f}") == ("11.1", "18.0")
    # Without the critic the query has a plan: Offload on 8 GPUs.
    (plain,) = solver.plan("32B", gpu="h100", max_model_len=16384, budget_gpus=8, env=False)
    assert plain.best is not None and plain.best.setting.label == "Offload"


def test_the_nearest_is_how_far_its_further_peak_is_over_and_names_both_where_both_are():
    # Qwen3-14B at 32768 on 4 H100s, --no-env, a resident critic: Offload + SP=4's actor pass is 0.7 GiB over, its
    # critic's own update 3.5: the nearest says both, and how far the further is over (before: "0.7 GiB over" alone).
    assert _limit("14B", "h100", 4, 32768, env=False, critic="resident").endswith(
        "(the nearest, Offload + SP=4 on 4 GPUs: the memory model predicts 71.7 GiB of 71.0 usable, 0.7 GiB over, and "
        "the PPO critic's own update takes 74.5 GiB, 3.5 GiB over)")
    found = solver.estimate_memory("14B", "h100", 4, 32768, sp=4, env=False, offload=True, critic="resident")
    assert (f"{found.total_gib - found.usable_gib:.1f}", f"{found.critic_pass_gib:.1f}",
            f"{found.critic_pass_gib - found.usable_gib:.1f}") == ("0.7", "74.5", "3.5")


def _fleet(tmp_path: Path, *jobs: dict[str, Any], pools: list[dict[str, Any]] | None = None,
           name: str = "fleet") -> Path:
    path = tmp_path / f"{name}.yaml"
    pool = {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 1024}
    path.write_text(yaml.safe_dump({"pools": pools or [pool], "jobs": list(jobs)}), encoding="utf-8")
    return path


def _job(name: str, model: str, length: int, rollout_gpus: int = 0, critic: str | None = None) -> dict[str, Any]:
    job = {"name": name, "model": model, "max_model_len": length, "rollout_gpus": rollout_gpus}
    return job if critic is None else {**job, "critic": critic}


BEYOND = ("32768 tokens is beyond what the tables and the memory model's estimates allow for Qwen3-32B with a resident "
          "PPO critic on A100-80GB "
          "within 8 GPUs with 1024 GiB of host memory per node (the pool's host_ram_gb): the longest is 23552 on the "
          "1024-token grid (Env + Offload + SP=8 on 8 GPUs, estimated, extrapolated); --token-budget auto trains 32768 "
          "tokens: Env + Offload + SP=8 on 8 GPUs with max_token_len_per_gpu = 5120 (estimated, extrapolated)")
"""The planner's reason for Qwen3-32B at 32768 with a resident critic on a node of 8 A100s, under `VERL_LOADING`."""
VERL_LOADING = ("--trinity-version", "0.5.1")
"""Trinity 0.5.1 keeps verl's loading, rank 0 alone for this untied model: with no release named every rank loads it
(on A100s 0.6 does too), and the reason is the host memory's (1256.4 GiB per node), not the length's."""


def test_an_unplaced_jobs_reason_says_its_critic_was_counted(cli: Cli, tmp_path: Path):
    # Without its critic the job places (Env + Offload + SP=2 on the 8 GPUs); with a resident one the planner's
    # reason blamed the length alone, naming no critic: now the planner's own words name it (session 75's lead), the
    # same for one job or several.
    plain = json.loads(cli("cluster", str(_fleet(tmp_path, _job("big", "Qwen3-32B", 32768), name="plain")),
                           "--json", *VERL_LOADING)[1])
    assert [(p["job"], p["plan"]["env"], p["plan"]["offload"], p["plan"]["sp"]) for p in plain["placements"]] == [
        ("big", True, True, 2)]
    assert "critic" not in json.dumps(plain["placements"][0]["plan"]["cautions"])
    path = _fleet(tmp_path, _job("big", "Qwen3-32B", 32768, critic="resident"))
    status, out, _ = cli("cluster", str(path), "--json", *VERL_LOADING)
    [left] = json.loads(out)["unplaced"]
    assert (status, left["critic"], left["reason_code"]) == (1, "resident", "no-way-to-run")
    assert left["reason"] == f"a100: {BEYOND}"
    assert left["reason_for_several"] is None  # the same words for several
    text = " ".join(cli("cluster", str(path), *VERL_LOADING)[1].split())
    assert "│ a100: 32768 tokens is beyond" in text  # the table's cells wrap the rest
    # Two such jobs share a row, in the words for several.
    two = _fleet(tmp_path, _job("big", "Qwen3-32B", 32768, critic="resident"),
                 _job("big2", "Qwen3-32B", 32768, critic="resident"), name="two")
    two_json = json.loads(cli("cluster", str(two), "--json", *VERL_LOADING)[1])["unplaced"]
    assert [(job["job"], job["reason"]) for job in two_json] == [
        ("big", f"a100: {BEYOND}"), ("big2", f"a100: {BEYOND}")]
    # (the same training said once for the row: smallslips33's unplaced table, a row per reason and training)
    assert ("big, big2 │ full, ref, critic resident │ a100: 32768 tokens is") in " ".join(
        cli("cluster", str(two), *VERL_LOADING)[1].split())


def test_a_job_whose_trainer_has_no_layout_beside_its_rollout_says_its_critic_was_counted(cli: Cli, tmp_path: Path):
    # Qwen3-14B at 65536 with 4 rollout GPUs on a node of 8: 4 trainer GPUs train it without a critic; with a
    # resident one 8 do at the fewest, which leave its rollout no room.
    plain = json.loads(cli("cluster", str(_fleet(tmp_path, _job("q", "Qwen3-14B", 65536, 4), name="plain")),
                           "--json")[1])
    assert [(p["trainer_gpus"], p["rollout_gpus"]) for p in plain["placements"]] == [(4, 4)]
    status, out, _ = cli("cluster", str(_fleet(tmp_path, _job("q", "Qwen3-14B", 65536, 4, "resident"))), "--json")
    [left] = json.loads(out)["unplaced"]
    assert (status, left["reason_code"]) == (1, "no-way-to-run")
    assert left["reason"] == (
        "a100, with its PPO critic (resident) counted: with 4 rollout GPUs, no trainer GPU count that trains it (8 at "
        "the fewest) has a layout on its 1 node of 8 GPUs; with rollout_gpus: 0 (its explorer on GPUs outside the "
        "fleet), a trainer of 8 GPUs has one")
    assert [pool["reason_code"] for pool in left["pools"]] == ["no-layout-beside-rollout"]


def test_the_planners_reasons_are_kept_by_the_job_shape_they_are_asked_by(tmp_path: Path):
    # `Planner.reasons`' key: model, length, rollout GPUs, training (train batch, LoRA rank, reference model and
    # critic), pool, the pools left out and the fleet's pools; a job of the same shape but its critic asks again.
    path = _fleet(tmp_path, _job("a", "Qwen3-32B", 32768, critic="resident"), _job("b", "Qwen3-32B", 32768))
    fleet = load_fleet(path, CATALOG)
    planner = Planner(CATALOG, load_weights(), "auto")
    with_critic, without = (why_no_option(planner, fleet, index) for index in (0, 1))
    assert list(planner.reasons) == [
        ("Qwen3-32B", 32768, 0, JobTraining(critic="resident"), None, frozenset(), fleet.pools),
        ("Qwen3-32B", 32768, 0, JobTraining(), None, frozenset(), fleet.pools)]
    assert "Qwen3-32B with a resident PPO critic on A100-80GB" in with_critic.words.text
    assert "PPO critic" not in without.words.text


def test_one_planners_reasons_on_a_pool_of_other_node_counts_count_each_ones_nodes(tmp_path: Path):
    # One planner serves --buy's pools raised and as bought: a reason asked on 1 node of a pool is not the one on 2.
    fleet = load_fleet(_fleet(tmp_path, _job("roll", "Qwen3-8B", 32768, 16)), CATALOG)
    two = fleet.model_copy(update={"pools": (fleet.pools[0].model_copy(update={"nodes": 2}),)})
    planner = Planner(CATALOG, load_weights(), "auto")
    assert [why_no_option(planner, given, 0).words.text for given in (fleet, two, fleet)] == [
        "a100: the job's 16 rollout GPUs are more than the pool's 8 GPUs, leaving none for a trainer",
        "a100: the job's 16 rollout GPUs take all the pool's 16 GPUs, leaving none for a trainer",
        "a100: the job's 16 rollout GPUs are more than the pool's 8 GPUs, leaving none for a trainer"]


def _current(cli: Cli, fleet: Path, running: Path, *flags: str) -> tuple[list[tuple[Any, ...]], str]:
    """Each placement's job, `current`, trainer GPUs, `stay_reason_code` and `stay_reason` with --current, and the
    text's lines joined."""
    out = json.loads(cli("cluster", str(fleet), "--current", str(running), "--json", *flags)[1])
    text = " ".join(cli("cluster", str(fleet), "--current", str(running), *flags)[1].split())
    return [(p["job"], p["current"], p["trainer_gpus"], p.get("stay_reason_code"), p.get("stay_reason"))
            for p in out["placements"]], text


def _placed(cli: Cli, fleet: Path) -> Path:
    """`fleet`'s placement as `solve cluster --json` gives it, written where --current reads it."""
    running = fleet.with_suffix(".json")
    running.write_text(cli("cluster", str(fleet), "--json")[1], encoding="utf-8")
    return running


A100_8 = {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}


def test_a_job_kept_beside_idle_gpus_says_what_widening_would_grow_it_to(cli: Cli, tmp_path: Path):
    # a and b share a node of 8 A100s, 4 GPUs each; b leaves the file. Without --current a runs on all 8 (placed on 6,
    # grown by 2); kept, it stays on its 4, and says what the 4 idle GPUs beside it would give it.
    both = _fleet(tmp_path, _job("a", "Qwen3-4B", 16384), _job("b", "Qwen3-8B", 16384), pools=[A100_8], name="both")
    running = _placed(cli, both)
    alone = _fleet(tmp_path, _job("a", "Qwen3-4B", 16384), pools=[A100_8], name="alone")
    fresh = json.loads(cli("cluster", str(alone), "--json")[1])["placements"]
    assert [(p["trainer_gpus"], p["widened_from"], p["plan"]["cost"]) for p in fresh] == [(8, 6, 0.125)]
    why = ("its trainer GPU count is kept as it runs (4 trainer GPUs); the 4 idle GPUs beside it on its node would "
           "grow it to 8 trainer GPUs (vanilla, cost 0.125, not 0.25), which would restart it")
    stays, text = _current(cli, alone, running)
    assert stays == [("a", "stays", 4, "count-kept", why)]
    assert f"stays: a: {why}" in text
    # With --no-widen no job grows onto idle GPUs: it says nothing.
    assert _current(cli, alone, running, "--no-widen")[0] == [("a", "stays", 4, None, None)]
    assert check_placements(CATALOG, yaml.safe_load(alone.read_text()), json.loads(
        cli("cluster", str(alone), "--current", str(running), "--json")[1])) == []


def test_a_widened_job_kept_by_current_says_its_count_is_kept(cli: Cli, tmp_path: Path):
    # Qwen3-14B at 65536 on a node of 8 A100s: placed on 4, grown to 8. Kept so by --current, its count is none its
    # ways there take (4): count-kept, with nothing forgone (no idle GPU beside it, no other pool).
    path = _fleet(tmp_path, _job("big", "Qwen3-14B", 65536))
    running = _placed(cli, path)
    placed = json.loads(running.read_text())["placements"]
    assert [(p["trainer_gpus"], p["widened_from"]) for p in placed] == [(8, 4)]
    assert _current(cli, path, running)[0] == [("big", "stays", 8, "count-kept", (
        "its trainer GPU count is kept as it runs (8 trainer GPUs; its other ways in pool a100 take 4)"))]


def test_a_job_kept_in_its_pool_says_nothing_of_another_gpu_types_idle_room(cli: Cli, tmp_path: Path):
    # Qwen3-8B at 32768 started on a node of 4 A100s (SP=4, cost 0.325); a node of 4 H20s, idle, runs it with Env +
    # SP=2 for 0.2777, and a placement without --current puts it there. Session 75 said it stayed "though pool h20's
    # idle room would run it for less"; a cost counts GPUs and settings, not a GPU type's speed, so since session 76
    # another GPU type's pool is not named (test_clusterlimits_s76 names a pool of its own type).
    a100 = {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 4}
    h20 = {"name": "h20", "gpu": "H20-96GB", "nodes": 1, "gpus_per_node": 4}
    job = _job("j", "Qwen3-8B", 32768)
    running = _placed(cli, _fleet(tmp_path, job, pools=[a100], name="a100-only"))
    both = _fleet(tmp_path, job, pools=[a100, h20])
    fresh = json.loads(cli("cluster", str(both), "--json")[1])["placements"]
    assert [(p["pool"], p["plan"]["cost"]) for p in fresh] == [("h20", 0.27775)]
    stays, text = _current(cli, both, running)
    assert stays == [("j", "stays", 4, None, None)]
    assert "stays: j" not in text


def _no_plan(model: str, gpus: int, critic: str | None, **more: Any) -> str:
    """The reason `solve` gives for no plan of `model` at 32768 tokens within `gpus` A100-80GB with `critic`."""
    (answer,) = solver.plan(model, gpu="A100-80GB", max_model_len=32768, budget_gpus=gpus, critic=critic,
                            option_names=COMMAND_OPTIONS, **more)
    assert (answer.status, answer.plans) == ("infeasible", ())
    return answer.reason


def test_solves_own_no_plan_reasons_name_the_critic_they_count(cli: Cli):
    # The planner's reasons speak of the model with the critic it counts, in every kind of no plan: a length beyond
    # reach (the cluster's reasons above quote it), nothing that trains, no table and nothing the estimates fit.
    assert _no_plan("32B", 8, "resident").startswith(
        "32768 tokens is beyond what the tables and the memory model's estimates allow for Qwen3-32B with a resident "
        "PPO critic on A100-80GB within 8 GPUs: the longest is 23552")
    assert _no_plan("8B", 1, "offloaded").startswith(
        "32768 tokens is beyond what the tables and the memory model's estimates allow for Qwen3-8B with an offloaded "
        "PPO critic on A100-80GB within 1 GPU: the longest is")
    assert _no_plan("8B", 1, "resident").startswith(
        "nothing in the tables and the memory model's estimates for Qwen3-8B with a resident PPO critic on A100-80GB "
        "within 1 GPU trains")
    assert _no_plan("32B", 2, "reloaded") == (
        "the tables have no Qwen3-32B on A100-80GB, and with a reloaded PPO critic the memory model estimates that "
        "nothing fits (not even 1024 tokens); with --critic offloaded (its states in host memory throughout), Env + "
        "Offload + SP=2 on 2 GPUs trains 32768 tokens (estimated, extrapolated); more trainer GPUs train 32768 tokens: "
        "Env + SP=8 on 16 GPUs (estimated, extrapolated)")
    assert _no_plan("32B", 2, "reloaded", estimate="only").startswith(
        "with --estimate (the tables set aside), with a reloaded PPO critic the memory model estimates that "
        "nothing fits")
    # Without a critic, the words are as they were.
    assert _no_plan("32B", 1, None).startswith(
        "32768 tokens is beyond what the tables and the memory model's estimates allow for Qwen3-32B on A100-80GB "
        "within 1 GPU")
    assert "PPO critic" not in _no_plan("8B", 1, None)
    # The command prints it on its no-plan line (exit status 1).
    status, out, _ = cli("--model", "32B", "--gpu", "A100-80GB", "--gpus", "8", "--len", "32768", "--critic",
                         "resident")
    assert status == 1
    assert ("no plan: 32768 tokens is beyond what the tables and the memory model's estimates allow for Qwen3-32B "
            "with a resident PPO critic on A100-80GB within 8 GPUs") in " ".join(out.split())


def test_a_host_limit_ruling_out_a_host_held_critic_names_the_critic_choice_the_planner_fits(cli: Cli):
    """s90: Qwen3-14B at 64k on 8 H20s with an offloaded critic needs 337.3 GiB a node under Trinity 0.6, over
    --host-ram 300; the planner's answer with a resident one (135.6 GiB, the load) is named, and none with a reloaded
    one, whose 309.3 GiB is over too."""
    asked = ("--model", "14B", "--gpu", "h20", "--gpus", "8", "--len", "64k", "--host-ram", "300",
             "--trinity-version", "0.6")
    status, out, _ = cli(*asked, "--critic", "offloaded")
    said = " ".join(out.split())
    assert status == 1
    assert ("it needs 337.3 GiB of host memory per node for the critic's offloaded states; with --critic resident, "
            "Env + SP=8 on 8 GPUs trains it (65536 tokens), and it needs 135.6 GiB of host memory per node while the "
            "model loads --explain") in said
    assert "--critic reloaded" not in said
    assert COMMAND_OPTIONS.planned_critic("reloaded") == "--critic reloaded"
    assert API_OPTIONS.planned_critic("resident") == 'critic="resident"'
