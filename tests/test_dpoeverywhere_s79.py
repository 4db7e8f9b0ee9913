"""DPO everywhere it is planned (session 79): ``solve memory --dpo`` (the API's ``estimate_memory``/``memory_answer(
dpo=...)``) and a cluster job's ``dpo: true`` count the pair ``solve --dpo`` counts for a model trained one padded
sequence per micro-batch (the same bytes, through `counts_dpo_pairs` and `counted_tokens`), with the same caution and
the same refusals (beside a PPO critic, and without LoRA beside no reference model); a cluster job's ``--emit-dir``
config is what ``solve --dpo --emit trinity`` writes for the same plan; a ``dpo:`` that is not a boolean is bad
input, one line, exit 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from option_reference import option_reference
from test_padbound_s71 import INTERNLM2, Cli

import solver
from solver.tables import QueryError, load_catalog
from solver.tables.model_config import load_model_config

MODEL = load_model_config(INTERNLM2)
PADDED = load_catalog().with_model(MODEL)
SETTING = ("--model-config", str(INTERNLM2), "--gpu", "h100", "--gpus", "8", "--len", "32k")
PAIR_TOTAL = 60.13918841948485
"""InternLM2-7B at 32768 tokens on 8 H100s with Env + Offload, counting the DPO pair (65536 tokens per GPU)."""
ONE_TOTAL = 31.9225
"""The same setting without DPO, one sequence (32768 tokens per GPU), as the JSON rounds it."""
PAIR_CAUTION = ("which leaves max_token_len_per_gpu unread: the memory estimate counts the DPO pair, a chosen and a "
                "rejected sequence, 2 x max_model_len = 65536 tokens per GPU;")
SWITCHES = "which the estimate counts where it is made for DPO (a config of algorithm_type dpo, --dpo, or a cluster "
FLEET = """pools:
  - name: h100
    gpu: H100-80GB
    nodes: {nodes}
    gpus_per_node: 8
jobs:
  - name: pairs
    model_config: internlm2-7b.json
    max_model_len: 32768
    {extra}
"""


def _fleet(tmp_path: Path, extra: str, nodes: int = 1) -> Path:
    shutil.copy(INTERNLM2, tmp_path / "internlm2-7b.json")
    path = tmp_path / "fleet.yaml"
    path.write_text(FLEET.format(nodes=nodes, extra=extra))
    return path


def test_solve_memory_dpo_counts_the_pair_solve_dpo_counts(cli: Cli):
    status, out, err = cli("memory", *SETTING, "--env", "--offload", "--dpo", "--json")
    assert (status, err) == (0, "")
    answer = json.loads(out)
    assert (answer["dpo"], answer["dpo_pairs"], answer["tokens_per_gpu"]) == (True, True, 65536)
    assert answer["total_gib"] == round(PAIR_TOTAL, 4) == 60.1392
    assert answer["caution_codes"] == ["padded-micro-batches"] and PAIR_CAUTION in answer["cautions"][0]
    assert SWITCHES in answer["cautions"][0]
    plain = json.loads(cli("memory", *SETTING, "--env", "--offload", "--json")[1])
    assert (plain["dpo"], plain["dpo_pairs"], plain["tokens_per_gpu"], plain["total_gib"]) == (
        False, False, 32768, ONE_TOTAL)
    # solve --dpo plans this very setting, at the same bytes
    best = solver.plan(MODEL.name, gpu="h100", budget_gpus=8, max_model_len=32768, exact=True, dpo=True,
                       catalog=PADDED)[0].best
    assert best is not None and (best.gpus, best.sp, best.env, best.offload) == (8, 1, True, True)
    estimate = solver.estimate_memory(MODEL.name, "h100", 8, 32768, env=True, offload=True, dpo=True, catalog=PADDED)
    assert best.memory_gb == estimate.total_gib == PAIR_TOTAL and best.headroom_gb == estimate.headroom_gib
    assert estimate.dpo_pairs is True


def test_solve_memory_dpo_text_names_it_and_its_planner_command_keeps_it(cli: Cli):
    status, out, _ = cli("memory", *SETTING, "--dpo")  # vanilla: the pair does not fit
    assert status == 1
    assert out.startswith("internlm2-7b (7.7B parameters) on 8 x H100-80GB (79.6 GiB), vanilla, DPO, 32768 tokens "
                          "(65536 per GPU), margin 0.01\n")
    assert "does not fit (estimated): 11.76 GiB over the usable memory" in out
    assert "longest length the memory model fits with this setting: 26624 tokens" in out
    assert (f"  solve --model-config {INTERNLM2} --gpu h100 --gpus 8 --len 32768 --dpo\n") in out
    answer = solver.memory_answer(MODEL.name, "h100", 8, 32768, dpo=True, catalog=PADDED)
    assert answer.longest_len == 26624 and not answer.trains
    assert solver.memory_text(answer, PADDED).endswith(
        f'solver.plan("{MODEL.name}", gpu="H100-80GB", budget_gpus=8, max_model_len=32768, dpo=True, '
        "catalog=catalog)\n")
    # without DPO, one sequence: it fits, up to 53248 tokens
    assert cli("memory", *SETTING)[0] == 0


def test_dpo_on_a_model_that_reads_its_budget_counts_nothing_more():
    # Its token budget bounds a micro-batch, pairs and all: the same figures, no pair counted (as solve --dpo's).
    with_dpo = solver.memory_answer("Qwen3-8B", "h100", 8, 32768, dpo=True)
    without = solver.memory_answer("Qwen3-8B", "h100", 8, 32768)
    assert (with_dpo.dpo, with_dpo.dpo_pairs, without.dpo) == (True, False, False)
    assert with_dpo.total_gib == without.total_gib and with_dpo.tokens_per_gpu == without.tokens_per_gpu == 65536
    assert with_dpo.cautions == without.cautions


@pytest.mark.parametrize("command", [(), ("memory",)])
def test_the_dpo_help_says_what_it_does_for_a_model_that_reads_its_budget(cli: Cli, command: tuple[str, ...],
                                                                          monkeypatch: pytest.MonkeyPatch):
    # A Qwen3 DPO user (s89) read --dpo's help as about --model-config's padded models alone: it writes the pair's
    # keys for every model, and another model's estimates are as without it (the test above). --help says it short
    # (session 93), the same in each command; docs/cli.md's option reference says the rest.
    monkeypatch.setenv("COLUMNS", "400")  # argparse wraps at hyphens too
    status, out, _ = cli(*command, "--help")
    words = " ".join(out[out.index("  --dpo "):].split())
    own = ", or as --from-config's algorithm_type says" if command == () else ""
    assert status == 0 and words.startswith(
        f"--dpo the run trains DPO, on pairs of a chosen and a rejected sequence (default: not DPO{own}) --")
    assert ("count a pair per micro-batch, a chosen and a rejected sequence (another model's estimates are as without "
            "it); what solve writes turns dynamic batch sizes off, which would split its pairs, and gives the actor's "
            "micro-batch one pair") in option_reference()  # solve memory writes nothing


@pytest.mark.parametrize(("options", "message"), [
    (("--critic", "resident"),
     "--dpo trains no PPO critic (Trinity's dpo algorithm uses none): drop --critic resident"),
    (("--no-reference",), ("--dpo without LoRA builds a reference model (Trinity's dpo algorithm uses one): drop "
                           "--no-reference, or give --lora-rank"))])
def test_solve_memory_dpo_is_refused_as_solve_dpo_is(cli: Cli, options: tuple[str, ...], message: str):
    for command in (("memory",), ()):
        status, out, err = cli(*command, *SETTING, "--dpo", *options)
        assert (status, out) == (2, "")
        assert err.splitlines()[-1] == f"solve{' memory' if command else ''}: error: {message}"
    assert cli("memory", *SETTING, "--dpo", "--no-reference", "--lora-rank", "16")[0] in (0, 1)  # LoRA builds none


@pytest.mark.parametrize(("keywords", "message"), [
    ({"critic": "offloaded"}, ("dpo=True trains no PPO critic (Trinity's dpo algorithm uses none): drop "
                               "critic='offloaded'")),
    ({"reference_model": False}, ("dpo=True without LoRA builds a reference model (Trinity's dpo algorithm uses "
                                  "one): drop reference_model=False, or give lora_rank")),
    ({"dpo": "yes"}, "dpo must be True or False, got 'yes'")])
def test_the_apis_dpo_is_refused_as_plans_is(keywords: dict[str, object], message: str):
    for estimate in (solver.estimate_memory, solver.memory_answer):
        with pytest.raises(QueryError) as refused:
            estimate("Qwen3-8B", "h100", 8, 32768, **{"dpo": True, **keywords})  # type: ignore[arg-type]
        assert str(refused.value) == message


def test_a_cluster_jobs_dpo_places_it_at_solve_dpos_figures(tmp_path: Path, cli: Cli):
    placed = solver.place(_fleet(tmp_path, "dpo: true\n    train_batch_size: 64")).placements[0].plan
    assert (placed.gpus, placed.env, placed.offload, placed.memory_gb) == (8, True, True, PAIR_TOTAL)
    plain = solver.place(_fleet(tmp_path, "dpo: false\n    train_batch_size: 64")).placements[0].plan
    one = solver.estimate_memory(MODEL.name, "h100", 8, 32768, env=True, catalog=PADDED).total_gib
    assert (plain.env, plain.offload, plain.memory_gb, round(one, 2)) == (True, False, one, 46.75)
    status, out, _ = cli("cluster", str(tmp_path / "fleet.yaml"))
    assert status == 0 and "pairs: 46.8 GiB per GPU predicted" in out  # the file as last written: dpo false
    status, out, _ = cli("cluster", str(_fleet(tmp_path, "dpo: true")))
    assert status == 0 and "pairs: 60.1 GiB per GPU predicted, 13.1 GiB to spare (memory model)" in out
    assert " ".join(out.split()).count(" ".join(PAIR_CAUTION.split())) == 1


def test_buy_nodes_counts_a_dpo_jobs_pair(tmp_path: Path):
    bought = solver.buy_nodes(_fleet(tmp_path, "dpo: true", nodes=0))
    assert (bought.gpus, bought.nodes) == (8, 1)
    plan = bought.placements[0].plan
    assert (plan.env, plan.offload, plan.memory_gb) == (True, True, PAIR_TOTAL)


def test_a_dpo_jobs_emitted_config_is_solve_dpos(tmp_path: Path, cli: Cli):
    fleet = _fleet(tmp_path, "dpo: true\n    train_batch_size: 64")
    assert cli("cluster", str(fleet), "--emit-dir", str(tmp_path / "out"))[0] == 0
    written = (tmp_path / "out" / "pairs.yaml").read_text()
    status, emitted, _ = cli("--model-config", str(tmp_path / "internlm2-7b.json"), "--gpu", "h100", "--gpus", "8",
                             "--len", "32k", "--dpo", "--rollout-gpus", "0", "--train-batch-size", "64", "--emit",
                             "trinity")
    assert status == 0
    # No release named: each of the 8 ranks loads the model at start-up, more than training holds.
    host = ("# host memory: 296.7 GiB per node for Offload (at start-up, every rank loading the model; 156.7\n"
            "# while training); not checked: ")  # whose option each names
    placed_on = "# placed on node 0 of pool h100 (all its GPUs)\n"  # a cluster config's own line (persona55)
    assert placed_on in written
    assert written.replace(placed_on, "") == emitted.replace(f"{host}--host-ram not given",
                                                             f"{host}the pool's host_ram_gb not given")
    assert "        ppo_micro_batch_size_per_gpu: 2\n" in written and "# 2 for DPO: one pair" in written
    assert cli("cluster", str(fleet), "--trinity-version", "0.5", "--emit-dir", str(tmp_path / "05"))[0] == 0
    assert "      actor:\n        ppo_micro_batch_size_per_gpu: 1\n" in (tmp_path / "05" / "pairs.yaml").read_text()
    fleet = _fleet(tmp_path, "dpo: false\n    rollout_gpus: 2")
    assert cli("cluster", str(fleet), "--emit-dir", str(tmp_path / "grpo"))[0] == 0
    grpo = (tmp_path / "grpo" / "pairs.yaml").read_text()
    assert "# DPO:" not in grpo and "        ppo_micro_batch_size_per_gpu: 1\n" in grpo
    settings = solver.api.placement_settings(solver.place(_fleet(tmp_path, "dpo: true")), tmp_path / "fleet.yaml")
    actor = settings["pairs"].config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]
    assert actor["ppo_micro_batch_size_per_gpu"] == 2


@pytest.mark.parametrize(("extra", "message"), [
    ("dpo: 1", "line 10: job pairs, dpo: must be true or false, got 1"),
    ("dpo: 'true'", ("line 10: job pairs, dpo: must be true or false, got 'true' (quoted, YAML reads it as text: write "
                     "it without quotes)")),
    ("dpo: true\n    critic: resident", ("line 7: job pairs: dpo true trains no PPO critic (Trinity's dpo algorithm "
                                         "uses none): drop critic resident")),
    ("dpo: true\n    reference_model: false", ("line 7: job pairs: dpo true without LoRA builds a reference model "
                                               "(Trinity's dpo algorithm uses one): drop reference_model false, or "
                                               "give a lora_rank"))])
def test_a_bad_dpo_job_is_refused_in_one_line(tmp_path: Path, cli: Cli, extra: str, message: str):
    status, out, err = cli("cluster", str(_fleet(tmp_path, extra)))
    assert (status, out, err) == (2, "", f"solve cluster: error: {tmp_path / 'fleet.yaml'}: {message}\n")


def test_a_dpo_lora_job_without_a_reference_model_is_placed(tmp_path: Path):
    placed = solver.place(_fleet(tmp_path, "dpo: true\n    lora_rank: 16\n    reference_model: false"))
    assert placed.placements[0].plan.lora_rank == 16
