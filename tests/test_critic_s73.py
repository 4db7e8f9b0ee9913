"""A PPO critic counted (s73): verl 0.9.1 builds the critic as ``AutoModelForTokenClassification`` (the model less its
output projection, with a one-output value head), trains it from fp32 weights with AdamW (16 bytes per parameter,
sharded as the actor's) and Trinity colocates it with the actor on every trainer GPU, so its states sit beside the
actor's unless its own flags offload them. The figures are Qwen3-8B's at 32768 tokens on 4 A100s, worked by hand."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from solver.api import config_query, estimate_memory, make_query, memory_answer, plan
from solver.memory import GIB, critic_parameters, host_memory_gib, pinned_rounding
from solver.rules import cited_tables_verdict
from solver.tables import QueryError, Setting, load_catalog
from solver.trinity import read_trinity_config

QWEN3_8B = 8.191e9
"""Qwen3-8B's parameters (tables/models.yaml)."""
QWEN3_8B_CRITIC = 8_191_000_000 - 151936 * 4096 + 4096 + 1
"""Less its untied output projection (151936 x 4096), with a value head of 4096 weights and a bias: 7,568,674,241."""
CRITIC_GIB = 16 * QWEN3_8B_CRITIC / 4 / GIB
"""Its fp32 weights, gradients and Adam's two moments on each of 4 GPUs: 28.1955 GiB."""
RESIDENT_GIB = 12 * QWEN3_8B_CRITIC / 4 / GIB
"""What of them stays beside the actor's update and step: all but the gradients, which its own update frees as it ends
(s74, test_criticgrads_s74): 21.1466 GiB."""
ACTOR_STEP_GIB = 20 * QWEN3_8B / 4 / GIB
"""The actor's optimizer step without Offload: its 16 bytes per parameter and Adam's temporary, 4 more: 38.1423 GiB."""


def answer(critic: str | None, **setting: object):  # type: ignore[no-untyped-def]
    return memory_answer("Qwen3-8B", "A100-80GB", 4, 32768, critic=critic, **setting)  # type: ignore[arg-type]


def test_the_critic_is_the_model_less_its_output_projection_with_a_value_head():
    catalog = load_catalog()
    assert critic_parameters(catalog.model("Qwen3-8B")) == pytest.approx(7_568_674_241, abs=1e-3)
    # A tied model keeps the embeddings it shares: Qwen3-4B's 4.022B and a head of 2560 weights and a bias.
    assert critic_parameters(catalog.model("Qwen3-4B")) == pytest.approx(4.022e9 + 2561, abs=1e-3)


def test_a_resident_critic_adds_its_states_to_the_peak_and_to_the_optimizer_step():
    alone, resident = answer(None, sp=2, env=True), answer("resident", sp=2, env=True)
    assert resident.critic_gib == pytest.approx(RESIDENT_GIB, abs=1e-9) and round(RESIDENT_GIB, 4) == 21.1466
    assert resident.terms == alone.terms and alone.critic_gib == 0.0
    assert resident.total_gib == pytest.approx(alone.total_gib + RESIDENT_GIB, abs=1e-9)
    # The actor's step beside the critic's states less their gradients (38.14 + 21.15 = 59.29 GiB) outweighs the
    # critic's own beside the actor's 12 bytes per parameter (22.88 + 35.24 = 58.13), and the overhead, 1 GiB, comes
    # on top.
    assert alone.step_gib == pytest.approx(ACTOR_STEP_GIB + 1.0, abs=1e-9)
    assert resident.step_gib == pytest.approx(ACTOR_STEP_GIB + RESIDENT_GIB + 1.0, abs=1e-9)
    assert (round(resident.total_gib, 2), round(resident.step_gib, 2)) == (101.28, 60.29)
    assert (alone.longest_len, resident.longest_len) == (27648, 12288)
    assert (resident.critic, resident.critic_parameters_b, alone.critic, alone.critic_parameters_b) == (
        "resident", pytest.approx(7.568674241), None, 0.0)


def test_with_offload_the_critics_own_step_is_the_one_on_the_gpu():
    resident = answer("resident", sp=2, env=True, offload=True)
    assert resident.step_gib == pytest.approx(CRITIC_GIB * 20 / 16 + 1.0, abs=1e-9)  # 36.2444: no actor states
    assert answer(None, sp=2, env=True, offload=True).step_gib == 0.0


def test_an_offloaded_critic_takes_no_gpu_memory_but_host_memory():
    alone, offloaded = answer(None, sp=2, env=True), answer("offloaded", sp=2, env=True)
    assert (offloaded.critic_gib, offloaded.total_gib, offloaded.step_gib) == (0.0, alone.total_gib, alone.step_gib)
    model = load_catalog().model("Qwen3-8B")
    rounding = pinned_rounding(model, 4, 4)
    # Without Offload: the reference model's pinned fp32 shards and the critic's pinned fp32 weights and gradients
    # and pageable Adam moments, all four GPUs' shares on the node (more than loading's 4 bytes per parameter on each
    # of the 4 ranks beside the reference shards, 162.7 GiB: no release named, every rank loads the model).
    held = (4 * rounding * QWEN3_8B + (8 * rounding + 8) * QWEN3_8B_CRITIC) / GIB
    assert host_memory_gib(model, 4, None, offload=False, critic="offloaded") == pytest.approx(held, abs=1e-9)
    assert (alone.host_memory_gib, offloaded.host_memory_gib) == (162.7, 172.1)
    # With Offload the actor's pinned fp32 weights and gradients and pageable Adam moments come beside them.
    both = ((4 + 4 + 4) * rounding + 8) * QWEN3_8B / GIB + (8 * rounding + 8) * QWEN3_8B_CRITIC / GIB
    assert host_memory_gib(model, 4, None, offload=True, critic="offloaded") == pytest.approx(both, abs=1e-9)
    assert answer("offloaded", sp=2, env=True, offload=True).host_memory_gib == 314.4


def test_the_tables_measured_the_actor_alone_so_they_only_refute():
    catalog = load_catalog()
    model = catalog.model("Qwen3-8B")
    documented = cited_tables_verdict(catalog, "A100-80GB", model, 4, Setting(sp=4), 32768)
    assert documented is not None and (documented.trains, documented.evidence) == (True, "documented")
    assert cited_tables_verdict(catalog, "A100-80GB", model, 4, Setting(sp=4), 32768, critic=True) is None
    refuted = cited_tables_verdict(catalog, "A100-80GB", model, 4, Setting(env=True, sp=2), 32768, critic=True)
    assert refuted is not None and not refuted.trains and refuted.source.setting == "SP=4"
    # solve memory: the documented cell no longer decides; the memory model does, with the critic counted.
    assert answer(None, sp=4).tables is not None and answer("resident", sp=4).tables is None


def test_the_planner_counts_the_critic_and_no_cell_vouches():
    def best(critic: str | None):  # type: ignore[no-untyped-def]
        found = plan("Qwen3-8B", gpu="A100-80GB", budget_gpus=4, max_model_len=32768, critic=critic)[0]
        return found.critic, found.best.setting.label, found.best.evidence, round(found.best.memory_gb, 4)

    assert best(None) == (None, "SP=4", "documented", round(answer(None, sp=4).total_gib, 4))
    # Resident, Env + SP=4 takes 79.0 GiB of 73.5: Offload takes the actor's states off the GPU, not the critic's,
    # and leaves room for SP=2 (s74: SP=4 with the critic's gradients counted).
    resident = best("resident")
    assert resident[:3] == ("resident", "Env + Offload + SP=2", "estimated")
    offloaded = answer(None, sp=2, env=True, offload=True).total_gib + RESIDENT_GIB
    assert resident[3] == round(offloaded, 4) == 69.8812
    # Offloaded, the cell's own setting is estimated (with Env, as every estimate is).
    assert best("offloaded") == ("offloaded", "Env + SP=4", "estimated",
                                 round(answer(None, sp=4, env=True).total_gib, 4))


def test_host_ram_counts_an_offloaded_critic_in_the_planner():
    found = plan("Qwen3-8B", gpu="A100-80GB", budget_gpus=4, max_model_len=32768, critic="offloaded",
                 host_ram_gb=172.0)[0]
    assert found.best is None  # its 172.1 GiB per node is more than 172.0
    held = plan("Qwen3-8B", gpu="A100-80GB", budget_gpus=4, max_model_len=32768, critic="offloaded",
                host_ram_gb=172.1)[0].best
    assert held is not None and (held.setting.label, held.host_memory_gb) == ("Env + SP=4", 172.1)


def test_a_critic_that_is_no_choice_is_refused():
    # sftmode89: with the guess --critic makes (solver.tables.CRITIC_CHOICES_MEANT)
    with pytest.raises(QueryError, match=("^critic must be one of None, none, resident, offloaded, reloaded, got 'yes'; "
                                          "did you mean 'resident'[?]$")):
        answer("yes")
    with pytest.raises(QueryError, match=("^critic must be one of None, none, resident, offloaded, reloaded, got True; "
                                          "did you mean 'resident'[?]$")):
        plan("Qwen3-8B", gpu="A100-80GB", budget_gpus=4, max_model_len=32768, critic=True)  # type: ignore[arg-type]


CONFIG = ("cluster: {node_num: 1, gpu_per_node: 8}\n"
          "explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1}}\n"
          "model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ntrainer: {ulysses_sequence_parallel_size: 4}\n")
CRITIC_OFFLOAD = "  trainer_config: {critic: {model: {fsdp_config: {param_offload: true, optimizer_offload: true}}}}\n"


@pytest.mark.parametrize(("algorithm", "critic"), [
    ("algorithm: {algorithm_type: ppo}\n", "resident"),
    ("", "resident"),  # unset: Trinity's default, ppo
    ("algorithm: {algorithm_type: grpo}\n", None),
])
def test_a_config_says_where_the_critic_its_algorithm_trains_holds_its_states(algorithm: str, critic: str | None):
    config = read_trinity_config(algorithm + CONFIG, "run.yaml", {})
    assert config.critic == critic
    assert ("critic-trained" in [code.value for code in config.note_codes]) == (critic is not None)
    # The plans count it as its flags hold it by default (s74); critic="none" leaves it out, another value replaces it.
    assert config_query(load_catalog(), config, gpu="A100-80GB").critic == critic
    assert config_query(load_catalog(), config, gpu="A100-80GB", critic="none").critic is None
    assert config_query(load_catalog(), config, gpu="A100-80GB", critic="offloaded").critic == "offloaded"


def test_a_config_whose_critic_offloads_names_it_reloaded_and_how_to_leave_it_out():
    text = "algorithm: {algorithm_type: ppo}\n" + CONFIG.replace(
        "trainer: {ulysses_sequence_parallel_size: 4}\n",
        "trainer:\n  ulysses_sequence_parallel_size: 4\n" + CRITIC_OFFLOAD)
    config = read_trinity_config(text, "run.yaml", {})
    # param_offload and optimizer_offload without offload_policy: back on the GPUs for its own update (s74).
    assert config.critic == "reloaded"
    assert config.notes[[code.value for code in config.note_codes].index("critic-trained")] == (
        "algorithm.algorithm_type ppo trains a critic model beside the actor on the same trainer GPUs; the verdict and "
        "the plans count its states as its own critic.model.fsdp_config holds them: reloaded (param_offload and "
        "optimizer_offload: in host memory, back on the GPUs for its own update), and its own update "
        'as a second peak; critic="none" counts the actor alone')


def test_from_config_with_critic_plans_with_it_and_json_says_so(cli: Callable[..., tuple[int, str, str]],
                                                                tmp_path: Path):
    path = tmp_path / "ppo.yaml"
    path.write_text("algorithm: {algorithm_type: ppo}\n" + CONFIG, encoding="utf-8")
    status, out, err = cli("--from-config", str(path), "--gpu", "A100-80GB", "--critic", "none", "--json")
    found = json.loads(out)[0]
    # Left out: the documented cell (SP=4 on 4 trainer GPUs) decides, for the actor alone.
    assert (status, found["critic"], found["plans"][0]["evidence"], found["current"]["trains"]) == (
        0, None, "documented", True), err
    status, out, err = cli("--from-config", str(path), "--gpu", "A100-80GB", "--json")
    found = json.loads(out)[0]
    # By default (s74), as its flags hold it, resident: the critic's 21.1 GiB leave the config's SP=4 over (82.2 GiB
    # of 71.3); the best plan is estimated.
    assert (status, found["critic"], found["plans"][0]["critic"], found["plans"][0]["evidence"]) == (
        0, "resident", "resident", "estimated"), err
    assert (found["current"]["trains"], found["current"]["predicted"]) == (False, [82.2, 71.3])
    assert found["plans"][0]["env"] and found["plans"][0]["offload"] and found["plans"][0]["sp"] == 2


@pytest.mark.parametrize(("given", "meant"), [("cpu", "offloaded"), ("GPU", "resident"), ("true", "resident"),
                                              ("no", "none"), ("offload", "offloaded"), ("host", "offloaded")])
def test_a_critic_in_other_words_is_told_the_choice_it_means(cli: Callable[..., tuple[int, str, str]], given: str,
                                                             meant: str):
    # sft89: --critic cpu, gpu, true were refused with no guess (the guesses' table takes gpu for --minimize's 'gpus',
    # which --minimize gpu still is told: test_persona5_s59)
    status, out, err = cli("--model", "8B", "--gpu", "h100", "--gpus", "8", "--critic", given)
    assert (status, out, err.splitlines()[-1]) == (2, "", (
        f"solve: error: argument --critic: invalid choice: '{given}' (choose from 'none', 'resident', 'offloaded', "
        f"'reloaded'); did you mean '{meant}'?"))


@pytest.mark.parametrize("given", [("--critic", "8B"), ("--critic", "Qwen/Qwen3-14B"),
                                   ("--critic-model", "Qwen3-14B"), ("--critic_model_path", "/models/critic")])
def test_a_critics_model_given_by_name_is_told_rft_solver_sizes_it_as_the_actors(
        cli: Callable[..., tuple[int, str, str]], given: tuple[str, str]):
    # critic90: --critic 8B and --critic-model X were refused with no hint that the critic is the actor's model
    status, out, err = cli("--model", "8B", "--gpu", "h100", "--gpus", "8", *given)
    told = ("rft-solver counts a PPO critic as the actor's model (--model), a value head for its output projection: "
            "--critic says where its states are held")
    assert (status, out, err.splitlines()[-1]) == (2, "", (
        f"solve: error: argument --critic: invalid choice: '{given[1]}' (choose from 'none', 'resident', 'offloaded', "
        f"'reloaded'); {told}" if given[0] == "--critic" else
        f"solve: error: unrecognized arguments: {' '.join(given)} ({told})"))


def test_solve_memory_shows_the_critic_row_and_refuses_a_bad_value(cli: Callable[..., tuple[int, str, str]]):
    status, out, err = cli("memory", "--model", "8B", "--gpu", "A100-80GB", "--gpus", "4", "--len", "32k", "--sp", "2",
                           "--env", "--critic", "resident")
    assert status == 1 and "│ critic        │  21.15 │" in out and "│ total         │ 101.28 │" in out, err
    assert "critic: 7.6B parameters (the model with a value head for its output projection)" in " ".join(out.split())
    status, out, err = cli("memory", "--model", "8B", "--gpu", "A100-80GB", "--gpus", "4", "--len", "32k",
                           "--critic", "yes")
    assert (status, out, err.splitlines()[1:]) == (2, "", [
        ("solve memory: error: argument --critic: invalid choice: 'yes' "
         "(choose from 'none', 'resident', 'offloaded', 'reloaded'); did you mean 'resident'?")])
    status, out, err = cli("memory", "--model", "8B", "--gpu", "A100-80GB", "--gpus", "4", "--len", "32k", "--sp", "4",
                           "--critic", "offloaded", "--json")
    shown = json.loads(out)
    # The documented cell (SP=4) no longer decides: the memory model does, and fits it (61.07 GiB of 71.3 usable).
    assert (status, shown["critic"], shown["critic_gib"], shown["tables"], shown["fits"]) == (
        0, "offloaded", 0.0, None, True), err


def test_the_api_takes_a_critic_in_any_case_as_the_command_does() -> None:
    # `--critic Resident` was taken where critic="Resident" was refused (apiwords87): one folding for both.
    catalog = load_catalog()
    assert make_query(catalog, model="8B", gpu="h100", max_model_len=8192, budget_gpus=4, critic="Resident").critic == (
        "resident")
    assert memory_answer("8B", "h100", 8, 8192, critic="OFFLOADED").critic == "offloaded"  # type: ignore[arg-type]
    assert estimate_memory("8B", "h100", 8, 8192, critic="Reloaded") == estimate_memory(  # type: ignore[arg-type]
        "8B", "h100", 8, 8192, critic="reloaded")
    config = read_trinity_config("model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\n", "c.yaml", {})
    assert config_query(catalog, config, gpu="h100", critic="None").critic is None  # type: ignore[arg-type]
    with pytest.raises(QueryError, match="^critic must be one of None, none, .*, reloaded, got 'res'$"):
        memory_answer("8B", "h100", 8, 8192, critic="res")  # type: ignore[arg-type]


def test_a_critic_beside_a_lora_actor_is_counted_in_full() -> None:
    # sft89: Trinity gives LoRA to the actor's model config alone (0.6 on verl 0.8 or later builds the critic's without
    # a rank, trainer/verl/trainer.py:355; before 0.8 its CriticModel has no LoRA field), so the critic trains in full
    full = estimate_memory("8B", "h100", 8, 32768, critic="resident")
    lora = estimate_memory("8B", "h100", 8, 32768, critic="resident", lora_rank=16)
    assert lora.critic_gib == full.critic_gib == pytest.approx(12 * critic_parameters(load_catalog().model("8B")) / 8
                                                               / GIB)
