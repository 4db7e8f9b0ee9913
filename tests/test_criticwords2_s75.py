"""The PPO critic's words, s75 (criticwords2): a plan that counts a critic names both its peaks, the actor's pass and
the critic's own update (`Plan.critic_pass_gb`), and the one its room to spare is at, in the ``memory`` row, the
evidence (``--emit trinity``'s header, a config's verdict) and JSON; ``solve memory``'s host memory line gives a
host-held critic's share (`MemoryEstimate.host_critic_gib`); with a critic the tables vouch for no length where they
refute the longest one; the critic note says ``--critic none counts the actor alone``; one function words what a host
memory need is for (`host_need_purpose`) (the cost's critic term, s76: test_criticcost_s76.py). Figures: Qwen3-8B
on 4 A100-80GBs at 32768 tokens (73.53 GiB usable with Env)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.memory import GIB, critic_parameters, host_critic_gib, host_memory_gib, offloaded_actor_bytes
from solver.render.memory import memory_text
from solver.rules import COMMAND_OPTIONS
from solver.tables import CriticStates, host_need_detail, host_need_purpose, load_catalog
from solver.trinity import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]

ROOT = Path(__file__).resolve().parent.parent
A100 = ("--model", "8B", "--gpu", "A100-80GB", "--gpus", "4", "--len", "32768")


def _said(out: str) -> str:
    """`out` with its wrapped lines joined."""
    return " ".join(out.split())


# 1. both peaks


@pytest.mark.parametrize(("critic", "row"), [
    # the actor's pass binds: the room is its own, and named so
    ("resident", ("memory 69.9 GiB per GPU predicted for the actor's pass and 52.5 for the critic's own update, 3.7 "
                  "GiB to spare at the actor's pass, the tighter peak (memory model; a PPO critic's states, "
                  "resident)")),
    ("offloaded", ("memory 57.9 GiB per GPU predicted for the actor's pass and 37.8 for the critic's own update, 15.7 "
                   "GiB to spare at the actor's pass, the tighter peak (memory model; a PPO critic's states, "
                   "offloaded)")),
    # the reloaded critic's own update binds: 73.53 - 66.00 = 7.53 to spare there, not the actor's 15.7
    ("reloaded", ("memory 57.9 GiB per GPU predicted for the actor's pass and 66.0 for the critic's own update, 7.5 "
                  "GiB to spare at the critic's own update, the tighter peak (memory model; a PPO critic's states, "
                  "reloaded)")),
])
def test_the_memory_row_names_both_peaks_and_the_one_that_binds(cli: Cli, critic: str, row: str):
    status, out, err = cli(*A100, "--critic", critic)
    assert status == 0, err
    assert row in _said(out)


def test_a_plan_without_a_critic_keeps_its_row(cli: Cli):
    status, out, err = cli(*A100)
    assert status == 0, err
    assert "memory 61.1 GiB per GPU predicted, 10.2 GiB to spare (memory model) " in _said(out)


def test_the_json_gives_the_critics_own_update(cli: Cli):
    peaks = {}
    for critic in ("resident", "reloaded", "none"):
        status, out, err = cli(*A100, "--critic", critic, "--json")
        assert status == 0, err
        (plan, *_) = json.loads(out)[0]["plans"]
        peaks[critic] = (plan["memory_gb"], plan["critic_pass_gb"], plan["headroom_gb"],
                         plan["headroom_at_critic_pass"])
    assert peaks == {"resident": (69.88, 52.48, 3.65, False), "reloaded": (57.88, 66.0, 7.53, True),
                     "none": (61.07, None, 10.21, False)}


def test_the_words_give_one_peak_where_both_round_alike():
    (answer,) = solver.plan("Qwen3-8B", gpu="A100-80GB", budget_gpus=4, max_model_len=32768, critic="resident")
    plan = answer.best
    assert plan is not None
    same = plan.model_copy(update={"critic_pass_gb": plan.memory_gb + 0.01})
    assert (same.peaks_words, same.room_words) == ("", "3.7 GiB to spare")
    none = plan.model_copy(update={"critic_pass_gb": None})
    assert none.evidence_text("A100-80GB") == "estimated: the memory model predicts 69.9 GiB per GPU, 3.7 GiB to spare"


def test_the_emitted_header_and_a_configs_verdict_say_both_peaks(cli: Cli, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch):
    status, out, err = cli(*A100, "--critic", "reloaded", "--emit", "trinity")
    assert status == 0, err
    assert ("evidence: estimated: the memory model predicts 57.9 GiB per GPU for the actor's pass and 66.0 for the "
            "critic's own update, 7.5 GiB to spare at the critic's own update, the tighter peak") in _said(
                out.replace("\n#", ""))
    config = tmp_path / "run.yaml"
    config.write_text("cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4, "
                      "tensor_parallel_size: 1}}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
                      "trainer: {ulysses_sequence_parallel_size: 4}\n", encoding="utf-8")
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    status, out, err = cli("--from-config", str(config), "--gpu", "A100-80GB", "--critic", "reloaded", "--json")
    assert status == 0, err
    assert json.loads(out)[0]["current"]["verdict"].endswith(
        "it trains (estimated: the memory model predicts 57.9 GiB per GPU for the actor's pass and 66.0 for the "
        "critic's own update, 7.5 GiB to spare at the critic's own update, the tighter peak).")


# 2. a host-held critic's share


def test_solve_memory_gives_a_host_held_critics_share():
    model = load_catalog().model("Qwen3-8B")
    share = offloaded_actor_bytes(model, 4)[1] * critic_parameters(model) / GIB  # 4 of 4 GPUs on the node
    assert host_critic_gib(model, 4, None, "offloaded") == pytest.approx(share, rel=1e-12)
    assert round(share, 2) == 131.47
    assert (host_critic_gib(model, 4, None, "resident"), host_critic_gib(model, 4, None, None)) == (0.0, 0.0)
    # the training need is the actor's (with Offload) and the reference model's, plus it (where rank 0 alone loads
    # the model, so that training's need is the larger: every rank's load would outweigh the actor's alone)
    with_critic, alone = (host_memory_gib(model, 4, None, True, critic=critic, loading="rank-0")
                          for critic in ("offloaded", None))
    assert with_critic - alone == pytest.approx(share, rel=1e-9)
    answer = solver.memory_answer("Qwen3-8B", "A100-80GB", 4, 32768, sp=2, env=True, offload=True,
                                  critic="offloaded")
    assert answer.host_critic_gib == pytest.approx(share, rel=1e-12)
    assert ("host memory: 314.4 GiB per node for Offload and the critic's offloaded states (the actor's states, the "
            "critic's states (131.5 GiB) and the reference model's shards, or the model while it loads beside both "
            "models' pinned shards, whichever is more); not checked: host_ram_gb not given") in _said(
                memory_text(answer, width=1000))


def test_a_reloaded_critic_holds_its_weights_and_adam_in_host_memory_but_no_gradients():
    """s90: its update sets its gradients to None (verl 0.8.0's engine, transformer_impl.py:917; verl 0.7's
    dp_critic.py:262) before verl offloads its weights and Adam's moments: 3 pinned fp32 values a parameter, each
    pinned as Offload's weights (not Offload's pinned gradients and pageable Adam too)."""
    model = load_catalog().model("Qwen3-8B")
    share = 3 * offloaded_actor_bytes(model, 4)[0] * critic_parameters(model) / GIB
    assert host_critic_gib(model, 4, None, "reloaded") == pytest.approx(share, rel=1e-12)
    assert (round(share, 2), round(host_critic_gib(model, 4, None, "offloaded"), 2)) == (112.62, 131.47)
    answer = solver.memory_answer("Qwen3-8B", "A100-80GB", 4, 32768, sp=2, env=True, offload=True,
                                  critic="reloaded")
    said = _said(memory_text(answer, width=1000))
    assert answer.host_critic_gib == pytest.approx(share, rel=1e-12)
    assert "critic's states (112.6 GiB)" in said
    assert ("in host memory while the actor trains (12 of the 16 bytes, less the gradients, which its own update "
            "frees before it offloads the rest)") in said


# 3. the tables vouch for no length with a critic


@pytest.mark.parametrize(("gpus", "length", "row", "trains"), [(2, "1024", 4096, False), (4, "8192", 12288, True)])
def test_with_a_critic_the_tables_vouch_for_no_length(cli: Cli, gpus: int, length: str, row: int, trains: bool):
    # s74 said "they let it train at no length" beside "fits", or up to the actor's longest, with a critic counted
    flags = ("memory", "--model", "8B", "--gpu", "A100-80GB", "--gpus", str(gpus), "--len", length)
    status, out, err = cli(*flags, "--critic", "offloaded")
    said = _said(out)
    assert (status, f"the A100-80GB table for {gpus} GPUs says 'Env' at {row}), and they decide (they measured the "
            "actor alone, so with a critic they vouch for no length)" in said) == (0 if trains else 1, True), err
    assert "let it train" not in said
    status, out, err = cli(*flags, "--critic", "offloaded", "--json")
    assert json.loads(out)["tables_longest"] is None
    # the actor alone: the tables' own longest length
    status, out, err = cli(*flags)
    alone = "up to 8192" if trains else "at no length"
    assert (status, f"and they decide: they let it train {alone}" in _said(out)) == (0 if trains else 1, True), err


# 4. the critic note


def test_the_critic_note_says_plainly_what_critic_none_does():
    base = "model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
    config = read_trinity_config(base + "algorithm: {algorithm_type: ppo}\n", "t.yaml", {},
                                 option_names=COMMAND_OPTIONS)
    assert config.notes == ((
        "algorithm.algorithm_type ppo trains a critic model beside the actor on the same trainer GPUs; the verdict "
        "and the plans count its states as its own critic.model.fsdp_config holds them: resident (on the GPUs "
        "throughout), and its own update as a second peak; --critic none counts the actor alone"),)


# 5. one place words a host memory need's purpose


# loading: the plan's words for a figure that is the load's, every rank loading on A100s (s84): at start-up beside
# training's need with Offload, alone without
@pytest.mark.parametrize(("offload", "critic", "purpose", "loading"), [
    (True, "offloaded", "for Offload and the critic's offloaded states", ""),
    (True, "reloaded", "for Offload and the critic's offloaded states", ""),
    (True, "resident", "for Offload", " (at start-up, every rank loading the model; 183.0 while training)"),
    (True, None, "for Offload", " (at start-up, every rank loading the model; 183.0 while training)"),
    (False, "offloaded", "for the critic's offloaded states", ""),
    # s90: a reloaded critic holds less (no gradients), so that loading outweighs training
    (False, "reloaded", "for the critic's offloaded states",
     "; at start-up, every rank loading the model; 153.3 while training"),
    (False, "resident", "while the model loads", " (every rank loading the model)"),
    (False, None, "while the model loads", " (every rank loading the model)"),
])
def test_the_plan_and_solve_memory_word_the_purpose_alike(offload: bool, critic: CriticStates | None, purpose: str,
                                                          loading: str):
    assert host_need_purpose(offload, critic) == purpose
    answer = solver.memory_answer("Qwen3-8B", "A100-80GB", 4, 4096, env=True, offload=offload, critic=critic,
                                  host_ram_gb=2048.0)
    assert f" GiB per node {purpose} (" in _said(memory_text(answer, width=1000))
    (planned,) = solver.plan("Qwen3-8B", gpu="A100-80GB", budget_gpus=4, exact=True, max_model_len=4096, sp=1,
                             env=True, offload=offload, critic=critic, host_ram_gb=2048.0)
    assert planned.best is not None
    # With the critic's share where it is held in host memory (s76), in solve memory's words, of its figure.
    # where it is, what the load adds is said within the same brackets
    detail = host_need_detail(offload, True, critic, answer.host_critic_gib) if answer.host_critic_gib else ""
    said = f" ({detail}{loading})" if detail else loading
    assert planned.best.host_memory_words() == f"{answer.host_memory_gib:.1f} GiB per node {purpose}{said}"


def test_a_reasons_host_need_words_a_critic_with_offload_too():
    from solver.results import host_need_words

    assert host_need_words("314.4", True, "offloaded") == (
        "it needs 314.4 GiB of host memory per node for Offload and the critic's offloaded states")
    assert host_need_words("183.0", True, "resident") == "with Offload it needs 183.0 GiB of host memory per node"
