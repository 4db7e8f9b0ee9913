"""Mutation pass over session 80's merges (helper mutants39): each test here kills a mutant that the merges' own tests
left alive (named in its comment), asserting what the code does: the deadline of the questions asked first, a
release's words in the API's refusals, and a cluster job's LoRA exclusions (read, compared
with a running job's, and noted under the table)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_clustercli_s79 import SMALLER_ASKS
from test_deadlines_s80 import PINNED, VERL_LOADING, FakeClock

import solver
from solver.api import answer_query, config_query
from solver.memory import offloaded_actor_bytes
from solver.query import given_lora_targets, make_query
from solver.render.cluster import LORA_EXCLUDED_NOTE, LORA_TARGETS_NOTE
from solver.rules import COMMAND_OPTIONS
from solver.tables import MAX_HOST_RAM_GB, Job, QueryError, load_catalog
from solver.tables.fleets import given_fleet, releases_differing
from solver.tables.peft_names import LoraTargets
from solver.trinity import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]
CATALOG = load_catalog()


@pytest.mark.parametrize(("moved_after", "more", "given", "asked"), [
    # D-10: the question without the pins drops ends_by (its ranking had 10 s of its own, not the 2 s left of the
    # 5 s share, ASKED_FIRST_SHARE); the query's own ranking has the 7 s left of the answer's 10
    ("_unpinned_question", (), [2.0, 7.0], [(None, None), (4, None)]),
    # D-9: the question with the most host memory drops ends_by (10 s, not the 2 s left of the share)
    ("_more_host_ram_question", ("--host-ram", "96", *VERL_LOADING), [2.0], [(4, MAX_HOST_RAM_GB), (4, 96.0)]),
])
def test_the_questions_asked_first_end_by_the_answers_deadline(
        cli: Cli, monkeypatch: pytest.MonkeyPatch, moved_after: str, more: tuple[str, ...], given: list[float],
        asked: list[tuple[int | None, float | None]]) -> None:
    # 3 s of the 10 pass as the question asked first is made: its ranking's solves get what is left of the share
    # of the time limit the questions asked first have (5 s), the pinned query's ranking what is left of the 10
    clock = FakeClock(monkeypatch)
    clock.advance_after(monkeypatch, moved_after, 3.0)
    status, _, _ = cli(*PINNED, "--sp", "4", *more)
    assert (status, clock.given, [(query.sp, query.host_ram_gb) for query in clock.asked]) == (0, given, asked)


def test_a_refusal_says_how_it_read_a_plans_post_release() -> None:
    # D-18: the plan's own release in words (a plan JSON may hold 0.5.1.post1, which is read as 0.5.1)
    (answer,) = solver.plan("Qwen3-30B-A3B", gpu="h100", budget_gpus=8, max_model_len=8192, trinity_version="0.5.1")
    text = answer.model_dump_json().replace('"trinity_version":"0.5.1"', '"trinity_version":"0.5.1.post1"')
    read_back = solver.Answer.model_validate_json(text)
    with pytest.raises(QueryError) as raised:
        solver.trinity_config(read_back, version="0.6")
    assert str(raised.value) == (
        "the answer's plan was counted for Trinity 0.5.1.post1 (read as 0.5.1; routed experts counted separate, as "
        "Trinity 0.5.1's transformers 4 holds them): its memory figures do not hold for Trinity 0.6, which holds "
        "Qwen3-30B-A3B's routed experts otherwise, whole on its transformers 5; plan it again with "
        "trinity_version='0.6', or leave version out to write it for Trinity 0.5.1.post1 (read as 0.5.1)")


def test_a_host_memory_refusal_says_how_it_read_a_local_build() -> None:
    # D-20: the release asked for in words (0.6.0+cu121 is read as 0.6.0). Planned for 0.5.1, whose verl rule loads
    # this untied model on rank 0 alone (0.5 named alone may be 0.5.2, every rank: past 60 GiB); 0.6 on H100s loads
    # it on rank 0 too, beside its fp32 reference shards: 71.2 GiB.
    (answer,) = solver.plan("Qwen3-8B", gpu="h100", budget_gpus=8, max_model_len=32768, host_ram_gb=60.0,
                            trinity_version="0.5.1")
    with pytest.raises(QueryError) as raised:
        solver.trinity_config(answer, version="0.6.0+cu121")
    assert str(raised.value) == (
        "the answer's plan needs 71.2 GiB of host memory per node under Trinity 0.6.0+cu121 (read as 0.6.0), more "
        "than host_ram_gb of 60 GiB it was planned within (for another release): plan it again with "
        "trinity_version='0.6.0+cu121', or pass version= the release it was planned for")


@pytest.mark.parametrize("layout", ["fused", "either"])
def test_exclusions_that_leave_out_the_fused_half_are_taken(layout: str) -> None:
    # PEFT's refusal is judged on the targets less the exclusions: q_proj,gate_proj on Qwen3-30B-A3B's fused
    # experts adapts their gate_proj without up_proj, refused alone (under 0.6), taken less the experts
    model = CATALOG.model("Qwen3-30B-A3B")
    with pytest.raises(QueryError, match="matches the routed experts' gate_proj without their up_proj"):
        given_lora_targets("q_proj,gate_proj", 16, model, "fused", COMMAND_OPTIONS)
    assert given_lora_targets("q_proj,gate_proj", 16, model, layout, COMMAND_OPTIONS,  # type: ignore[arg-type]
                              ".*\\.experts\\..*") == LoraTargets(".*\\.(q_proj|gate_proj)", ".*\\.experts\\..*")


def test_targets_matching_no_module_are_refused_so_beside_exclusions() -> None:
    # every_target_excluded's `or` as `and` said the exclusions left out every module of targets that match
    # none; the refusal is the one without exclusions
    model = CATALOG.model("Qwen3-8B")
    refusals = []
    for excluded in (None, ".*\\.v_proj"):
        with pytest.raises(QueryError) as raised:
            given_lora_targets("foo_proj", 16, model, "fused", COMMAND_OPTIONS, excluded)
        refusals.append(str(raised.value))
    assert refusals[0] == refusals[1]
    assert refusals[0].startswith("--lora-targets 'foo_proj' matches no module of Qwen3-8B (")


def test_a_jobs_training_as_a_running_jobs_gives_its_exclusions() -> None:
    # as_running without the exclude_modules regex: no way of a job running with the same exclusions kept it
    # as it runs (keeps_running compares the two)
    job = Job(name="q", model="Qwen3-8B", max_model_len=8192, lora_rank=16, lora_targets="q_proj,v_proj",
              lora_exclude_modules=".*\\.v_proj")
    assert job.training.as_running == (16, None, False, ".*\\.(q_proj|v_proj)", ".*\\.v_proj")
    less_mlp = job.model_copy(update={"lora_targets": None, "lora_exclude_modules": ".*\\.mlp\\..*"})
    assert less_mlp.training.as_running == (16, None, False, "all-linear", ".*\\.mlp\\..*")
    assert job.model_copy(update={"lora_exclude_modules": None}).training.as_running == (
        16, None, False, ".*\\.(q_proj|v_proj)", None)


def test_all_linear_less_exclusions_notes_the_exclusions_alone(cli: Cli, tmp_path: Path) -> None:
    # X-28: a plan's lora_target_modules all-linear (a job giving exclusions alone) is no targets' note
    path = tmp_path / "fleet.yaml"
    path.write_text("pools:\n  - {name: a100, gpu: A100-80GB, gpus_per_node: 8, nodes: 1}\njobs:\n"
                    "  - {name: mlp, model: Qwen3-8B, max_model_len: 8192, rollout_gpus: 2, lora_rank: 16, "
                    "lora_exclude_modules: '.*\\.mlp\\..*'}\n")
    status, out, err = cli("cluster", str(path), "--time-limit", "10")
    words = " ".join(out.split())
    assert (status, err) == (0, "")
    assert "LoRA 16 on all-linear less .*\\.mlp\\..*, no ref" in words
    assert " ".join(LORA_EXCLUDED_NOTE.split()) in words and " ".join(LORA_TARGETS_NOTE.split()) not in words


ADAPTED_CONFIG = ("algorithm:\n  algorithm_type: grpo\nmodel:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 8192\n"
                  "  lora_configs:\n    - lora_rank: 64\n      lora_alpha: 128\n"
                  "      target_modules: '.*\\.(q_proj|v_proj)'%s\ncluster:\n  node_num: 1\n  gpu_per_node: 8\n"
                  "explorer:\n  rollout_model:\n    engine_num: 2\n    tensor_parallel_size: 1\n")
"""A Trinity config of Qwen3-8B with LoRA 64 on q_proj,v_proj, and more keys of its adapter (`%s`)."""


def _check_command(extra: str, **keywords: Any) -> str:
    """The check command of `trinity_config` for ADAPTED_CONFIG (with `extra`) planned on A100s with `keywords`."""
    config = read_trinity_config(ADAPTED_CONFIG % extra, "grpo.yaml", {})
    (answer,) = answer_query(config_query(CATALOG, config, gpu="A100-80GB", **keywords), CATALOG)
    (command,) = [line for line in solver.trinity_config(answer).splitlines() if " --check " in line]
    return command.split(" --check ")[1]


def test_the_check_command_gives_no_targets_for_full_fine_tuning_or_the_configs_own_exclusions() -> None:
    # K-4: lora_rank=0 (full fine-tuning, no targets) was given --lora-targets all-linear, the config's adapter's
    # targets being other; K-16: ConfigAdapter.targets without its exclude_modules differed from the plan's, which
    # counts the config's own, so --lora-targets was given for them
    assert "--lora-targets" not in _check_command("", lora_rank=0)
    assert _check_command("\n      exclude_modules: '.*\\.v_proj'") == "--gpu A100-80GB --critic none"


def test_full_fine_tuning_of_a_lora_config_notes_the_rank_alone(cli: Cli, tmp_path: Path) -> None:
    # K-18: --lora-rank 0 gives no targets (full fine-tuning has none), so the note names --lora-rank 0 alone and the
    # config's own rank without "on its target_modules"
    config = tmp_path / "grpo.yaml"
    config.write_text(ADAPTED_CONFIG % "")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--lora-rank", "0", "--check", "--json")
    (answer,) = json.loads(out)
    assert (status, answer["current"]["config_problems"][0]) == (0, (
        "with LoRA (model.lora_configs) the trainer holds gradients and optimizer states for the adapter alone, but "
        "--lora-rank 0 counts full fine-tuning's, as the tables measured, in place of the config's own LoRA rank "
        "64's: a LoRA run needs less memory than shown"))


def test_write_over_a_refused_lora_config_planned_with_lora_refuses_another_rank(cli: Cli, tmp_path: Path) -> None:
    # P-2: the refused-LoRA note is for a plan of full fine-tuning; one that counted LoRA rank 16 over the config's
    # refused rank 32 is refused for the rank (the mutant wrote it, noting full fine-tuning)
    config = tmp_path / "grpo.yaml"
    config.write_text(ADAPTED_CONFIG.replace("'.*\\.(q_proj|v_proj)'", "[q_proj, v_proj]") % "")
    status, _, err = cli("--from-config", str(config), "--gpu", "h20", "--lora-rank", "16", "--write",
                         str(tmp_path / "patched.yaml"))
    assert (status, err) == (2, (
        f"solve: error: --from-config {config}: the plan counted LoRA rank 16, but model.lora_configs trains rank 64, "
        "which --write keeps (its lora_alpha scales the adapter by its rank): plan at rank 64 (--lora-rank 64, or "
        "leave it out), or set model.lora_configs's rank to 16 first\n"))
    assert not (tmp_path / "patched.yaml").exists()


def test_offloaded_actor_blocks_are_placed_under_0_5() -> None:
    # F-16: the actor's pinned blocks under a 0.5 release as verl 0.7 places them: 4.55 and 17.09 bytes per parameter
    # on 6 GPUs, where by rows (no release named) they take 5.43 and 18.86
    model = CATALOG.model("Qwen3-8B")
    placed = offloaded_actor_bytes(model, 6, 0, "either", "0.5")
    assert [round(value, 6) for value in placed] == [4.547488, 17.094976]
    assert [round(value, 6) for value in offloaded_actor_bytes(model, 6, 0, "either", None)] == [5.43236, 18.864721]


def test_a_token_budget_cap_without_estimates_keeps_trinitys_default_budget() -> None:
    # T-1 (keepbudget): a cap with estimates off lowers nothing (auto lowers an estimated plan's budget): the mode is
    # default, the cap the number given
    query = make_query(CATALOG, model="Qwen3-8B", gpu="h100", budget_gpus=8, max_model_len=16384, token_budget=8192,
                       estimate="never")
    assert (query.token_budget, query.token_budget_cap) == ("default", 8192)
    capped = make_query(CATALOG, model="Qwen3-8B", gpu="h100", budget_gpus=8, max_model_len=16384, token_budget=8192)
    assert (capped.token_budget, capped.token_budget_cap) == ("auto", 8192)


def test_a_maps_targets_are_checked_on_the_layout_its_release_holds() -> None:
    # N-8 (smallslips36): q_proj,gate_proj adapts Qwen3-30B-A3B's routed experts' gate_proj alone, which PEFT refuses
    # on transformers 5's fused experts (0.6) and takes on 0.5.1's separate ones
    (gpu_map,) = solver.map_plans("Qwen3-30B-A3B", gpu="h100", budgets=[8], lora_rank=16,
                                  lora_targets="q_proj,gate_proj", trinity_version="0.5.1")
    assert gpu_map.lora_target_modules == ".*\\.(q_proj|gate_proj)" and gpu_map.rows[0].plans[0] is not None
    with pytest.raises(QueryError, match="matches the routed experts' gate_proj without their up_proj"):
        solver.map_plans("Qwen3-30B-A3B", gpu="h100", budgets=[8], lora_rank=16, lora_targets="q_proj,gate_proj")


def test_a_length_one_past_the_cap_takes_sp_2() -> None:
    # T-9 (keepbudget): a plan holds a sequence at the cap (L <= cap x SP): 8193 tokens at a cap of 8192 need SP=2
    (answer,) = solver.plan("Qwen3-8B", gpu="h100", budget_gpus=8, max_model_len=8193, token_budget=8192)
    assert [(plan.gpus, plan.sp, plan.max_token_len_per_gpu) for plan in answer.plans] == [(8, 2, 8192)]


def test_releases_differing_names_running_jobs_the_file_still_takes_alone(cli: Cli, tmp_path: Path) -> None:
    # C-1, C-2 (clusterslips): a job the file no longer has, or one in a pool it no longer has, is not noted
    # (jobrelease, s81: a plan naming a release keeps it, so only one naming none is noted, under a run naming one)
    _, out, _ = cli("cluster", str(SMALLER_ASKS), "--json")
    current = tmp_path / "now.json"
    current.write_text(out, encoding="utf-8")
    fleet = given_fleet(SMALLER_ASKS, CATALOG)
    assert releases_differing(current, fleet, "0.5") == {None: ("chat-14b",)}
    assert releases_differing(current, fleet, None) == {}
    without_job = fleet.model_copy(update={"jobs": tuple(job for job in fleet.jobs if job.name != "chat-14b")})
    renamed = fleet.model_copy(update={"pools": tuple(pool.model_copy(update={"name": f"{pool.name}-new"})
                                                      for pool in fleet.pools)})
    assert releases_differing(current, without_job, "0.5") == releases_differing(current, renamed, "0.5") == {}


def test_write_judges_a_moe_configs_lora_on_the_releases_layout(cli: Cli, tmp_path: Path) -> None:
    # P-5 (persona57): q_proj,gate_proj on Qwen3-30B-A3B is taken on 0.5.1's separate experts (refused on fused
    # ones), so full fine-tuning planned over it (--lora-rank 0) says remove, not fix
    config = tmp_path / "moe.yaml"
    config.write_text(ADAPTED_CONFIG.replace("Qwen3-8B", "Qwen3-30B-A3B").replace("v_proj", "gate_proj") % "")
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--trinity-version", "0.5.1", "--lora-rank",
                         "0", "--write", str(tmp_path / "patched.yaml"))
    assert status == 0
    assert (f"solve: note: {config} sets LoRA (model.lora_configs), which --write keeps: the plan counted full "
            "fine-tuning, which holds more than a LoRA run; remove model.lora_configs to train every parameter\n"
            ) in err
