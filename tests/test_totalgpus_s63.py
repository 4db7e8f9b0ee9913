"""Session 63, totalgpus: ``--total-gpus T`` (the API's ``total_gpus``) counts the trainer's and the rollout's GPUs
together, the trainer's budget what ``--rollout-gpus R`` leaves of them: the same answers as ``--gpus T-R
--rollout-gpus R``, the split in the title and the JSON, and a one-line refusal (exit 2) for each contradiction."""
from __future__ import annotations

import json

import pytest

import solver
from solver.query import make_query
from solver.rules import API_OPTIONS, rollout_layout
from solver.tables import QueryError, load_catalog

PERSONA = ("--len", "128k", "--model", "14B", "--gpu", "h100")
"""Review s63 persona9's question: Qwen3-14B at 131072 tokens on H100s, 16 GPUs owned, 8 of them for the rollout."""

_SAME = [  # (objective keywords, total, rollout): each equals budget_gpus=total-rollout with the same rollout
    ({"model": "14B", "gpu": "h100", "max_model_len": 131072}, 16, 8),
    ({"model": "8B", "gpu": "a100", "max_model_len": 65536}, 16, 4),
    ({"model": "8B", "gpu": "a100", "objective": "max_len"}, 8, 2),
    ({"model": "8B", "gpu": "a100", "objective": "min_gpus", "max_model_len": 65536}, 16, 4),
    ({"model": "8B", "gpu": "a100", "max_model_len": 65536, "exact": True}, 16, 8),
    ({"model": "4B", "gpu": "a100", "max_model_len": 32768}, 6, 0),
]


@pytest.mark.parametrize(("asked", "total", "rollout"), _SAME)
def test_total_gpus_answers_as_the_trainer_budget_the_rollout_leaves(asked: dict, total: int, rollout: int):
    by_total = solver.plan(**asked, total_gpus=total, rollout_gpus=rollout)[0]
    by_budget = solver.plan(**asked, budget_gpus=total - rollout, rollout_gpus=rollout)[0]
    assert by_total.plans == by_budget.plans and by_total.plans
    assert (by_total.status, by_total.budget_gpus, by_total.rollout_gpus, by_total.total_gpus) == (
        by_budget.status, total - rollout, rollout, total)
    assert by_budget.total_gpus is None


def test_persona_16_gpus_in_all_with_8_for_the_rollout_take_two_nodes_not_three(cli):
    status, out, err = cli(*PERSONA, "--total-gpus", "16", "--rollout-gpus", "8", "--json")
    answer = json.loads(out)[0]
    best = answer["plans"][0]
    assert (status, err) == (0, "")
    assert (answer["budget_gpus"], answer["rollout_gpus"], answer["total_gpus"]) == (8, 8, 16)
    assert (best["gpus"], best["sp"], best["offload"], best["nodes"], best["rollout_gpus"]) == (8, 8, True, 2, 8)
    _, text, _ = cli(*PERSONA, "--total-gpus", "16", "--rollout-gpus", "8")
    assert text.splitlines()[:2] == [
        "H100-80GB · Qwen3-14B · cheapest plan for 131072 tokens within 16 GPUs in all (8 for the rollout): optimal",
        "plan           Env + Offload + SP=8 on 8 of 8 GPUs, with 8 rollout GPUs, trainer and rollout on 2 nodes of 8"]
    _, trainer_budget, _ = cli(*PERSONA, "--gpus", "16", "--rollout-gpus", "8", "--json")  # the review's 24 GPUs
    assert json.loads(trainer_budget)[0]["plans"][0]["nodes"] == 3
    assert json.loads(trainer_budget)[0]["total_gpus"] is None


def test_the_budget_words_say_the_split_for_each_objective(cli):
    common = ("--model", "8B", "--gpu", "a100", "--total-gpus", "16")
    titles = {
        ("--len", "64k", "--rollout-gpus", "4", "--minimize", "gpus"):
            "fewest GPUs for 65536 tokens (budget 12 of 16 in all, 4 for the rollout)",
        ("--len", "64k", "--rollout-gpus", "8", "--exact"):
            "cheapest plan for 65536 tokens on exactly 8 GPUs (16 in all, 8 for the rollout)",
        ("--rollout-gpus", "8", "--maximize", "len"): "longest context within 16 GPUs in all (8 for the rollout)"}
    for flags, title in titles.items():
        status, out, _ = cli(*common, *flags)
        assert (status, out.splitlines()[0]) == (0, f"A100-80GB · Qwen3-8B · {title}: optimal")


def test_hints_name_the_gpus_in_all_not_the_trainer_budget(cli):
    # fewer nodes: 4 trainer + 4 rollout GPUs fit one node, 8 GPUs in all (--gpus 4 would mean 4 more beside them)
    _, out, _ = cli("--model", "8B", "--gpu", "a100", "--total-gpus", "16", "--rollout-gpus", "4", "--len", "64k")
    assert " ".join(out.split()).count("4 trainer + 4 rollout GPUs, 65536 tokens, 4.00x the relative step time "
                                       "(documented): --total-gpus 8 apply") == 1
    # a nearest plan past the budget: 8 trainer GPUs and 2 rollout GPUs on whole nodes take 16 in all
    _, out, _ = cli("--model", "32B", "--gpu", "a100", "--total-gpus", "4", "--rollout-gpus", "2", "--len", "128k",
                    "--no-estimate")
    assert "drop --no-estimate and take --total-gpus 16 --explain says why" in " ".join(out.split())


@pytest.mark.parametrize(("flags", "error"), [
    (("--total-gpus", "16"), ("solve: error: --total-gpus 16 counts the trainer's and the rollout's GPUs together: "
                              "say how many of them the rollout takes, --rollout-gpus R (0: it runs elsewhere; "
                              "--rollout-gpus 8 is what the planner keeps for it of 16 where a trainer would take "
                              "them all), or "
                              "give the trainer's budget alone, --gpus N")),
    (("--total-gpus", "16", "--gpus", "8", "--rollout-gpus", "8"), ("solve: error: --total-gpus counts the trainer's "
                                                                    "and the rollout's GPUs together, --gpus the "
                                                                    "trainer's alone: give one of them")),
    (("--total-gpus", "16", "--rollout-gpus", "16"), ("solve: error: --rollout-gpus 16 leaves the trainer none of "
                                                      "--total-gpus 16: give the rollout fewer than 16")),
    (("--total-gpus", "12", "--rollout-gpus", "4"), ("solve: error: --total-gpus 12 is no whole number of nodes of 8 "
                                                     "(--node-gpus), and a trainer and rollout past one node take "
                                                     "whole nodes: give 8 or 16, or the GPUs of your nodes with "
                                                     "--node-gpus N")),
    (("--total-gpus", "0", "--rollout-gpus", "0"), ("solve: error: argument --total-gpus: must be a whole number from "
                                                    "1 to 65536, got 0")),
])
def test_contradictions_are_one_line_and_exit_2(cli, flags: tuple[str, ...], error: str):
    status, out, err = cli(*PERSONA, *flags)
    assert (status, out, err.splitlines()[-1]) == (2, "", error)
    assert "Traceback" not in err


def test_twelve_gpus_on_nodes_of_four_or_six_are_whole_nodes(cli):
    for node_gpus in ("4", "6"):
        asked = ("--model", "8B", "--gpu", "a100", "--len", "32k", "--node-gpus", node_gpus, "--json")
        status, out, _ = cli(*asked, "--total-gpus", "12", "--rollout-gpus", "4")
        _, by_budget, _ = cli(*asked, "--gpus", "8", "--rollout-gpus", "4")
        assert (status, json.loads(out)[0]["budget_gpus"]) == (0, 8)
        assert json.loads(out)[0]["plans"] == json.loads(by_budget)[0]["plans"]


def test_write_keeps_the_configs_cluster_so_refuses_total_gpus(cli, tmp_path):
    status, out, err = cli("--from-config", "docs/examples/trinity.yaml", "--gpu", "h100", "--total-gpus", "16",
                           "--write", str(tmp_path / "patched.yaml"))
    assert (status, out) == (2, "")
    assert err == ("solve: error: --write keeps the config's cluster, which gives the trainer's and the rollout's "
                   "GPUs: drop --total-gpus (or write a fragment with its own cluster with --out FILE)\n")
    assert not (tmp_path / "patched.yaml").exists()


def test_from_config_total_gpus_frees_the_count_and_keeps_the_configs_rollout(cli):
    # trinity.yaml: 8 GPUs on one node, 2 rollout engines of 1 GPU: 6 trainer GPUs, exactly
    status, out, _ = cli("--from-config", "docs/examples/trinity.yaml", "--gpu", "h100", "--total-gpus", "16", "--json")
    answer = json.loads(out)[0]
    assert (status, answer["budget_gpus"], answer["rollout_gpus"], answer["total_gpus"], answer["exact"]) == (
        0, 14, 2, 16, False)
    status, out, _ = cli("--from-config", "docs/examples/trinity.yaml", "--gpu", "h100", "--total-gpus", "8",
                         "--json")
    assert (status, json.loads(out)[0]["budget_gpus"], json.loads(out)[0]["plans"][0]["gpus"]) == (0, 6, 6)


def test_the_api_names_its_keywords():
    catalog = load_catalog()
    with pytest.raises(QueryError, match=r"^total_gpus=16 counts .* rollout_gpus=R \(0: it runs elsewhere; "
                       r"rollout_gpus=8 is what the planner keeps for it of 16 where a trainer would take them all\), "
                       r"or give the trainer's budget alone, budget_gpus=N$"):
        make_query(catalog, model="8B", max_model_len=32768, total_gpus=16, option_names=API_OPTIONS)
    with pytest.raises(QueryError, match=r"^total_gpus counts the trainer's and the rollout's GPUs together, "
                       r"budget_gpus the trainer's alone: give one of them$"):
        solver.plan("8B", max_model_len=32768, total_gpus=16, budget_gpus=8, rollout_gpus=8)
    with pytest.raises(QueryError, match=r"^total_gpus must be a whole number from 1 to 65536, got 0$"):
        solver.plan("8B", max_model_len=32768, total_gpus=0, rollout_gpus=0)
    with pytest.raises(QueryError, match="total_gpus must be"):
        solver.plan("8B", max_model_len=32768, total_gpus="16", rollout_gpus=0)  # type: ignore[arg-type]


@pytest.mark.parametrize("node_gpus", [4, 6, 8])
def test_the_trainer_budget_is_exactly_the_layouts_within_the_gpus_in_all(node_gpus: int):
    # The claim total_budget rests on: on whole nodes (or within one), a trainer of n GPUs and R rollout GPUs lay
    # out on at most T GPUs in all if and only if n <= T - R (where they lay out at all: the model's node rule).
    for total in [*range(1, node_gpus + 1), 2 * node_gpus, 3 * node_gpus]:
        for rollout in range(total):
            for gpus in range(1, 4 * node_gpus):
                layout = rollout_layout(gpus, rollout, node_gpus) if rollout else (1, 0)
                if layout is None:
                    continue
                in_all = gpus + layout[1] if rollout else gpus
                assert (in_all <= total) == (gpus <= total - rollout), (total, rollout, gpus, node_gpus)
