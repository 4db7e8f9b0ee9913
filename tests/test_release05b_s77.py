"""s77 release05b: Trinity 0.5.x's train batch rule follows the release named (0.5.0 and 0.5.1 refuse a batch the
trainer GPUs do not divide: a CP-SAT rule; 0.5 a caution; 0.5.2 and 0.6 nothing), ``solve map``/``map_plans`` take
the release, and a DPO fragment without ``mode: train`` says the keys Trinity's DPO needs."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from test_cluster import reference_checked

import solver
from solver.rules import COMMAND_OPTIONS, dividing_batch_words
from solver.tables import QueryError, counted_batch_divisor

Cli = Callable[..., tuple[int, str, str]]
SIX_GPUS = ("--model", "8B", "--gpu", "a100", "--len", "16k", "--gpus", "6", "--exact", "--sp", "2",
            "--train-batch-size", "63")
CAUTION = "batch-divides-trainer-gpus"


@pytest.mark.parametrize(("release", "divisor"), [
    ("0.5.0", "gpus"), ("0.5.1", "gpus"), ("v0.5.1", "gpus"), ("0.5.0.dev0", "ranks"), ("0.5", "unsure"),
    ("0.5.2", "ranks"), ("0.6", "ranks"), ("0.6.0", "ranks"), (None, "ranks"), ("0.7", "ranks")])
def test_batch_divisor_of_each_release(release: str | None, divisor: str) -> None:
    assert counted_batch_divisor(release) == divisor


def test_refusing_release_leaves_no_plan_on_gpus_that_do_not_divide(cli: Cli) -> None:
    status, out, _ = cli(*SIX_GPUS, "--trinity-version", "0.5.1", "--explain")
    assert status == 1
    assert "on exactly 6 GPUs: infeasible" in out
    # the nearest plan names a batch its GPUs divide, not its 3 ranks
    assert ("a train batch that 6 trainer GPUs divide (the nearest to 63: 60 or 66) lets SP=2 on 6 GPUs train it"
            in " ".join(out.split()))
    assert "data-parallel ranks divide" not in out
    assert ("with Trinity 0.5.0 and 0.5.1 the trainer GPUs must divide it too "
            "(trinity/common/config_validator.py:860 in 0.5.0, :859 in 0.5.1; 0.5.2 needs the ranks alone)"
            in " ".join(out.split()))


@pytest.mark.parametrize(("release", "cautioned"), [("0.5", True), ("0.5.2", False), ("0.6", False)])
def test_other_releases_keep_the_plan(cli: Cli, release: str, cautioned: bool) -> None:
    status, out, _ = cli(*SIX_GPUS, "--trinity-version", release, "--json")
    assert status == 0
    (answer,) = json.loads(out)
    best = answer["plans"][0]
    assert (best["gpus"], best["sp"]) == (6, 2)
    assert (CAUTION in best["caution_codes"]) is cautioned


def test_the_solver_picks_another_count_for_a_refusing_release() -> None:
    # up to 6 A100s, a batch of 63: SP=2 on 6 GPUs splits it over 3 ranks, which 0.5.2 takes and 0.5.1 refuses
    plans = {release: solver.plan("8B", gpu="a100", max_model_len=16384, budget_gpus=6, train_batch_size=63,
                                  trinity_version=release)[0].best for release in ("0.5.2", "0.5", "0.5.1", "0.5.0")}
    shown = {release: (plan.gpus, plan.sp, plan.setting.label, [code.value for code in plan.caution_codes])
             for release, plan in plans.items() if plan is not None}
    assert shown == {"0.5.2": (6, 2, "SP=2", []), "0.5": (6, 2, "SP=2", [CAUTION]),
                     "0.5.1": (3, 1, "Env + Offload", []), "0.5.0": (3, 1, "Env + Offload", [])}
    with pytest.raises(QueryError, match=r"trinity_version takes 0.5, 0.5.0, 0.5.1, 0.5.2, 0.6 or 0.6.0 "):
        solver.plan("8B", gpu="a100", trinity_version="0.4.2")


def test_query_carries_the_divisor() -> None:
    catalog = solver.load_catalog()
    assert solver.make_query(catalog, model="8B", max_model_len=16384, trinity_version="0.5.1").batch_divisor == "gpus"
    assert solver.make_query(catalog, model="8B", max_model_len=16384, trinity_version="0.5").batch_divisor == "unsure"
    assert solver.make_query(catalog, model="8B", max_model_len=16384).batch_divisor == "ranks"


def test_dividing_batch_words() -> None:
    assert dividing_batch_words(6, 2, False) == "a train batch that 3 data-parallel ranks divide"
    assert dividing_batch_words(6, 2, True) == "a train batch that 6 trainer GPUs divide"


def test_map_takes_the_release(cli: Cli) -> None:
    base = ("map", "--model", "8B", "--gpu", "h100", "--budgets", "4", "--train-batch-size", "6")
    status, out, _ = cli(*base, "--json")
    assert status == 0
    (free,) = json.loads(out)
    assert "trinity_version" not in free
    assert (free["rows"][0]["plans"][0]["gpus"], free["rows"][0]["plans"][0]["sp"]) == (4, 4)
    status, out, _ = cli(*base, "--trinity-version", "0.5.1", "--json")
    assert status == 0
    (kept,) = json.loads(out)
    assert kept["trinity_version"] == "0.5.1"
    plan = kept["rows"][0]["plans"][0]
    assert (plan["gpus"], plan["sp"], plan["max_model_len"]) == (2, 2, 50176)
    status, out, _ = cli(*base, "--trinity-version", "0.5.1")
    assert out.startswith("H100-80GB: longest context per model and GPU budget, Trinity 0.5.1, train batch 6\n")


def test_map_refuses_an_unknown_release_as_solve_does(cli: Cli) -> None:
    status, out, err = cli("map", "--model", "8B", "--gpu", "h100", "--trinity-version", "0.7")
    assert (status, out) == (2, "")
    assert err.endswith("solve map: error: argument --trinity-version: takes 0.5, 0.5.0, 0.5.1, 0.5.2, 0.6 or "
                        "0.6.0 (or a tag of one, v0.5.2), got '0.7' (rft-solver knows the rules of these releases "
                        "alone)\n")
    with pytest.raises(QueryError, match=r"^trinity_version takes 0.5, 0.5.0, 0.5.1, 0.5.2, 0.6 or 0.6.0 "
                                         r"\(or a tag of one, v0.5.2\), got '0.7'"):
        solver.map_plans("8B", gpu="h100", gpus_up_to=2, trinity_version="0.7")


def test_map_plans_echoes_the_release() -> None:
    (gpu_map,) = solver.map_plans("8B", gpu="h100", budgets=[4], train_batch_size=6, trinity_version="0.5.0",
                                  option_names=COMMAND_OPTIONS)
    assert gpu_map.trinity_version == "0.5.0"
    assert gpu_map.rows[0].plans[0] is not None and gpu_map.rows[0].plans[0].gpus == 2
    assert "Trinity 0.5.0" in solver.map_text((gpu_map,))


DPO_NOTE = ("# DPO: Trinity trains it on a dataset in mode train alone (it refuses mode both: "
            "trinity/algorithm/algorithm.py:291 in 0.6.0, :248 in 0.5.2) and requires buffer.train_batch_size in every "
            "mode (trinity/common/config_validator.py:966 in 0.6.0, :877 in 0.5.2): set mode: train and "
            "buffer.train_batch_size in your config, or plan with --rollout-gpus 0 --train-batch-size N (an API "
            "query's rollout_gpus=0 and train_batch_size), which writes both here.")
DPO = ("--model", "8B", "--gpu", "a100", "--len", "16k", "--gpus", "8", "--dpo", "--emit", "trinity")


DPO_DATASET_NOTE = ("# DPO in mode train: Trinity trains on the dataset at buffer.trainer_input.experience_buffer.path "
                    "and refuses the config without it (trinity/algorithm/algorithm.py:288 in 0.6.0, :245 in 0.5.0 to "
                    "0.5.2): set it in your config to your dataset of preference pairs, which these keys cannot name.")


def _unwrapped(text: str) -> str:
    """The fragment's comment lines joined as one paragraph each (the fragment wraps them)."""
    return " ".join(line.removeprefix("# ") if line.startswith("# ") else line for line in text.splitlines())


def test_dpo_fragment_without_mode_train_says_the_keys(cli: Cli) -> None:
    # (s82: --dpo --rollout-gpus 4, which this took too, is refused: DPO has no explorer;
    # tests/test_smallslips43_s82.py)
    status, out, _ = cli(*DPO)
    assert status == 0
    assert "\nmode:" not in out
    assert DPO_NOTE.removeprefix("# ") in _unwrapped(out)
    assert "# DPO in mode train:" not in out  # the keys write no mode: the note above says to set it


def test_dpo_fragment_in_mode_train_says_the_datasets_path_alone(cli: Cli) -> None:
    status, out, _ = cli(*DPO, "--rollout-gpus", "0", "--train-batch-size", "64")
    assert status == 0
    assert "\nmode: train  # Trinity trains DPO on a dataset in mode train alone, with no explorer anywhere\n" in out
    assert "  train_batch_size: 64" in out
    assert "# DPO:" not in out
    # modefix91: mode train then needs the dataset's path, which the keys cannot write (trainer-input-missing)
    assert DPO_DATASET_NOTE.removeprefix("# ") in _unwrapped(out)
    status, out, _ = cli(*DPO[:-3], "--emit", "trinity")  # no --dpo: no note
    assert status == 0 and "# DPO:" not in out


def test_cluster_jobs_follow_the_release() -> None:
    instance = {"pools": [{"name": "h100", "gpu": "H100-80GB", "nodes": 1, "gpus_per_node": 6}],
                "jobs": [{"name": "big", "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 0,
                          "train_batch_size": 75}]}
    placed = {release: solver.place(solver.Fleet.model_validate(instance), trinity_version=release)
              for release in ("0.5.2", "0.5.1")}
    for release, result in placed.items():  # the batch rule of the run's release, as the reference counts it
        reference_checked(instance, result.model_dump_json(), trinity_version=release)
    plan = placed["0.5.2"].placements[0].plan
    assert (plan.gpus, plan.sp, plan.caution_codes) == (6, 2, ())
    assert placed["0.5.1"].placements == ()
    (unplaced,) = placed["0.5.1"].unplaced
    reason = unplaced.reason
    assert "within 6 GPUs with a train batch of 75 (the job's train_batch_size): the longest is 24576" in reason
    assert "; a train batch that 2 trainer GPUs divide (the nearest to 75: 74 or 76) lets Env + Offload + SP=2 on 2 GPUs train it (32768" in reason
