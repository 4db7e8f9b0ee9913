"""What a cluster user's review left (session 67): a job that --token-budget auto trains on the pools' nodes as they
are is told so before more nodes; a job pinned to a full pool beside another pool's idle nodes is told its `pool:`
keeps it there; a name with a letter for a digit (h2o, a1oo) or two digits swapped (H20-69GB) gets a guess, for
--gpu, a cluster file's pools and a cells file alike; a --weights file overrides only the weights it gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from test_loader import OWN_CARD

from solver.cli import main
from solver.tables import Weights, load_catalog, load_weights

TWO_A100_NODES = {"name": "a100", "gpu": "A100-80GB", "nodes": 2, "gpus_per_node": 4}
LONG_14B = {"model": "Qwen3-14B", "max_model_len": 131072}
"""Qwen3-14B at 128k on A100s: beyond Trinity's default token budget on 4 of them, trained with a lowered one."""


def _fleet(tmp_path: Path, fleet: dict, name: str = "fleet.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(fleet), encoding="utf-8")
    return path


def test_jobs_the_auto_token_budget_trains_on_the_nodes_as_they_are_are_told_so_not_to_buy_nodes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    # Before: "x, y: no way to run on the pools' nodes as they are, but more nodes may give them a way to run (x, y
    # with --token-budget auto): ... --buy --token-budget auto ...", where --token-budget auto alone places x.
    path = _fleet(tmp_path, {"pools": [TWO_A100_NODES], "jobs": [{"name": "x", **LONG_14B, "rollout_gpus": 3},
                                                                 {"name": "y", **LONG_14B, "rollout_gpus": 1}]})
    assert main(["cluster", str(path)]) == 1
    assert capsys.readouterr().err == (
        "solve cluster: note: x, y: --token-budget auto trains their max_model_len on the pools' nodes as they are "
        "(Trinity's default token budget does not): run again with it to place them where there is room\n")
    assert main(["cluster", str(path), "--json"]) == 1
    assert [[(pool["more_nodes_token_budget"], pool["token_budget_auto_reach"]) for pool in job["pools"]]
            for job in json.loads(capsys.readouterr().out)["unplaced"]] == [[("auto", True)], [("auto", True)]]
    # As the note says: with it, x is placed on the nodes as they are (y is then left out for want of room).
    assert main(["cluster", str(path), "--token-budget", "auto", "--json"]) == 1
    placed = json.loads(capsys.readouterr().out)
    assert ([p["job"] for p in placed["placements"]], [(u["job"], u["reason_code"]) for u in placed["unplaced"]]) == (
        ["x"], [("y", "priority-tie")])


def test_a_job_left_out_for_room_beside_one_auto_trains_gets_buy_with_the_auto_token_budget(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    small = {"model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 3}
    path = _fleet(tmp_path, {"pools": [TWO_A100_NODES], "jobs": [
        {"name": "x", **LONG_14B, "rollout_gpus": 3}, *({"name": f"s{i}", **small} for i in (1, 2, 3))]})
    assert main(["cluster", str(path)]) == 1
    assert capsys.readouterr().err == (
        "solve cluster: note: x: --token-budget auto trains its max_model_len on the pools' nodes as they are "
        "(Trinity's default token budget does not): run again with it to place it where there is room\n"
        f"solve cluster: note: to place every job: solve cluster {path} --buy --token-budget auto names the fewest "
        "GPUs, then nodes, to add to the pools (and the jobs no number of nodes runs)\n")


AUTO_ONLY = {"pools": [{"name": "h20", "gpu": "H20-96GB", "nodes": 1, "gpus_per_node": 8}],
             "jobs": [{"name": "a", "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 2, "required": True},
                      {"name": "long", "model": "Qwen2.5-7B", "max_model_len": 131072, "rollout_gpus": 4}]}
"""A required job that fills the one H20 node, and Qwen2.5-7B at 128k, which only --token-budget auto trains."""


def test_buy_names_token_budget_auto_for_a_job_no_purchase_places_at_the_default_budget(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    # Before (session 93): --buy listed long under "jobs no purchase places ... however many" and said nothing of
    # --token-budget auto, with which one more H20 node places it; the placement alone said so.
    path = _fleet(tmp_path, AUTO_ONLY)
    note = ("solve cluster: note: long: --token-budget auto gives it a way to run (Trinity's default token budget "
            f"gives it none, however many nodes): solve cluster {path} --buy --required {{}} --token-budget auto "
            "buys for it too\n")
    assert main(["cluster", str(path), "--buy"]) == 0
    out, err = capsys.readouterr()
    assert "jobs no purchase places: 1 of 2" in out and err == note.format("long")  # a is required by the file
    assert main(["cluster", str(path), "--buy", "--required", "all"]) == 1
    assert capsys.readouterr().err == note.format("all")
    # as the note says: with it, one more node places both; and no note where the run has it, nor with --json
    assert main(["cluster", str(path), "--buy", "--required", "long", "--token-budget", "auto", "--json"]) == 0
    bought = json.loads(capsys.readouterr().out)
    assert ([(pool["nodes_bought"], pool["gpus_bought"]) for pool in bought["pools"]], bought["fits_nowhere"],
            sorted(placement["job"] for placement in bought["placements"])) == ([(1, 8)], [], ["a", "long"])
    assert main(["cluster", str(path), "--buy", "--json"]) == 0
    assert capsys.readouterr().err == ""
    # mutants59: the command keeps the run's release; a run with --token-budget auto already is told nothing
    assert main(["cluster", str(path), "--buy", "--trinity-version", "0.6"]) == 0
    assert capsys.readouterr().err == note.format("long --trinity-version 0.6")
    assert main(["cluster", str(path), "--buy", "--token-budget", "auto"]) == 0
    assert capsys.readouterr().err == ""


PINNED = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8},
                    {"name": "h20", "gpu": "H20-96GB", "nodes": 1, "gpus_per_node": 8}],
          "jobs": [{"name": "big", "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 4, "pool": "h20",
                    "priority": 2},
                   {"name": "pinned", "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 4,
                    "pool": "h20"}]}
"""Two jobs pinned to the one H20 node, which holds one of them; the A100 node stays idle."""
NO_ROOM = ("no room left in h20 ({} at least 6 GPUs (2 trainer + 4 rollout) of one node) after the jobs placed (the "
           "most priority in all, then "
           "the jobs earlier in the file where priorities tie, then length, then cost); big (priority 2) holds the "
           "room {}: priority 3 is the least that places {}")


def test_a_pinned_job_left_out_beside_another_pools_idle_node_is_told_its_pool_keeps_it_there(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["cluster", str(_fleet(tmp_path, PINNED)), "--json"]) == 1
    [unplaced] = json.loads(capsys.readouterr().out)["unplaced"]
    assert (unplaced["reason"], unplaced["reason_for_several"]) == (
        NO_ROOM.format("it needs", "it needs", "it") + "; its pool: h20 keeps it out of a100 (1 idle node)",
        NO_ROOM.format("each needs", "each needs", "one of them")
        + "; their pool: h20 keeps them out of a100 (1 idle node)")
    # Unpinned, it may use the A100 node: placed there. With the A100 node taken, nothing to name.
    unpinned = {**PINNED, "jobs": [PINNED["jobs"][0], {**PINNED["jobs"][1], "pool": None}]}
    del unpinned["jobs"][1]["pool"]
    assert main(["cluster", str(_fleet(tmp_path, unpinned, "unpinned.yaml")), "--json"]) == 0
    capsys.readouterr()
    taken = {**PINNED, "jobs": [*PINNED["jobs"], {**PINNED["jobs"][0], "name": "other", "pool": "a100"}]}
    assert main(["cluster", str(_fleet(tmp_path, taken, "taken.yaml")), "--json"]) == 1
    assert [u["reason"] for u in json.loads(capsys.readouterr().out)["unplaced"]] == [
        NO_ROOM.format("it needs", "it needs", "it")]


@pytest.mark.parametrize(("name", "meant"), [
    ("h2o", "H20-96GB"), ("H2O", "H20-96GB"), ("a1oo", "A100-80GB"), ("Hl00", "H100-80GB"), ("H10O", "H100-80GB"),
    ("a100-4o", "A100-40GB"), ("H20-69GB", "H20-96GB"), ("A100-08GB", "A100-80GB"),
    ("gh2oo", None),  # gh200: GH200-96GB or GH200-144GB, equally
])
def test_a_gpu_name_with_a_letter_for_a_digit_or_two_digits_swapped_gets_one_guess_everywhere(
        name: str, meant: str | None, cli, tmp_path: Path):
    assert load_catalog().meant_gpu_type(name) == meant  # a cells file's
    guess = f" (did you mean {meant}?)" if meant else ""
    status, _, err = cli("--gpu", name, "--model", "8B", "--len", "8k")
    assert status == 2 and err.startswith(f"solve: error: unknown GPU {name!r}{guess}; accepted: ")
    path = _fleet(tmp_path, {"pools": [{"name": "p", "gpu": name, "nodes": 1, "gpus_per_node": 8}],
                             "jobs": [{"name": "j", "model": "Qwen3-8B", "max_model_len": 8192}]})
    status, _, err = cli("cluster", str(path))
    assert status == 2 and err.startswith(
        f"solve cluster: error: {path}: pool p, gpu: unknown GPU {name!r}{guess}; accepted: ")


@pytest.mark.parametrize(("name", "words"), [
    ("h20-141gb", OWN_CARD.format("H20-96GB", 96, "141")),  # an H20 with 141 GB is another card, no slip of the 96
    # a 48 GB RTX 4090 (a modded card) or a family of two sizes: its own GPU type, not the 24 GB card (persona91a)
    ("RTX 4090 48GB", OWN_CARD.format("RTX-4090-24GB", 24, "48")),
    ("a100-96gb", (" (the catalogue's A100-40GB and A100-80GB have 40 and 80 GB, not 96: a card of other memory is a "
                   "GPU type of your own)")),
])
def test_a_gpu_name_with_a_memory_size_its_cards_lack_is_told_it_is_ones_own_everywhere(
        name: str, words: str, cli, tmp_path: Path):
    assert load_catalog().meant_gpu_type(name) is None  # no guess of another card
    status, _, err = cli("--gpu", name, "--model", "8B", "--len", "8k")
    assert status == 2 and err.startswith(f"solve: error: unknown GPU {name!r}{words}; accepted: ")
    path = _fleet(tmp_path, {"pools": [{"name": "p", "gpu": name, "nodes": 1, "gpus_per_node": 8}],
                             "jobs": [{"name": "j", "model": "Qwen3-8B", "max_model_len": 8192}]})
    status, _, err = cli("cluster", str(path))
    assert status == 2 and err.startswith(f"solve cluster: error: {path}: pool p, gpu: unknown GPU {name!r}{words}; ")


@pytest.mark.parametrize(("pool", "meant", "pools"), [
    ("h2o", "h20", ("a100", "h20")), ("H2O", "h20", ("a100", "h20")), ("a1oo", "a100", ("a100", "h20")),
    ("h02", None, ("a100", "h20")),
    ("a10o", None, ("a100", "a1oo")),  # either, equally
])
def test_a_jobs_pool_with_a_letter_for_a_digit_gets_did_you_mean(pool: str, meant: str | None, pools: tuple[str, str],
                                                                 cli, tmp_path: Path):
    fleet = {"pools": [{**entry, "name": name} for entry, name in zip(PINNED["pools"], pools, strict=True)],
             "jobs": [{**PINNED["jobs"][1], "pool": pool}]}
    path = _fleet(tmp_path, fleet)
    guess = f"did you mean {meant}? " if meant else ""
    named = ", ".join(pools)
    message = f"solve cluster: error: {path}: job pinned, pool: no pool named {pool!r} ({guess}pools: {named})\n"
    assert cli("cluster", str(path)) == (2, "", message)


def test_a_weights_file_overrides_only_the_weights_it_gives(cli, tmp_path: Path):
    # Before, `offload: 2` alone was refused for the missing sp and env, while the two newer weights took the shipped
    # values: now every weight left out does.
    assert Weights() == load_weights()  # the defaults are the shipped file's
    partial, full = tmp_path / "partial.yaml", tmp_path / "full.yaml"
    partial.write_text("offload: 2\n", encoding="utf-8")
    full.write_text("offload: 2.0\nsp: 0.1\nenv: 0.01\noffload_moe_scaling: true\nsp_pcie_factor: 3.0\n",
                    encoding="utf-8")
    assert load_weights(partial) == load_weights(full) == load_weights().model_copy(update={"offload": 2.0})
    asked = ("--model", "14B", "--gpu", "A100-80GB", "--gpus", "4", "--len", "64k", "--top", "3")
    status, out, err = cli(*asked, "--weights", str(partial))
    assert (status, err) == (0, "") and (status, out, err) == cli(*asked, "--weights", str(full))
    assert out != cli(*asked)[1]  # Offload weighs twice as much: other costs
