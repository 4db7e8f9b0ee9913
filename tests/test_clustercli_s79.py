"""Cluster and CLI slips (s79, helper clustercli): Ctrl-C while ``solve cluster --buy``'s placement is widened, or
once its purchase is worked out, keeps the purchase found; ``solve --out``'s ``wrote`` line beside --emit and --json;
``--maximize len`` (and ``--exact``) without a budget names both budget options."""

from __future__ import annotations

import importlib
import json
import shlex
import signal
from pathlib import Path

import pytest
from test_smallslips24_s77 import Cli

import solver.cli.cluster
from solver.cli.cluster import build_cluster_parser

buy_module = importlib.import_module("solver.cluster.buy")  # `solver.cluster.buy` the name is the function
SMALLER_ASKS = Path(__file__).parent.parent / "docs" / "examples" / "smaller-asks.yaml"


@pytest.mark.usefixtures("python_ctrl_c")  # Python's own Ctrl-C handler, also in a suite run with Ctrl-C ignored
def test_ctrl_c_while_the_purchase_is_widened_keeps_the_purchase(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: the placement made again unwidened was not held: a second Ctrl-C there gave no JSON, exit 130.
    grown = buy_module.grown_placements
    asked: list[float | None] = []

    def ctrl_c_while_widening(*args: object) -> object:
        asked.append(args[-1])  # type: ignore[arg-type]  # widen_by: None where not widened
        signal.raise_signal(signal.SIGINT)  # the first stops widening; the second, as it is placed again, is held
        return grown(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(buy_module, "grown_placements", ctrl_c_while_widening)
    status, out, err = cli("cluster", str(SMALLER_ASKS), "--buy", "--json")
    purchase = json.loads(out)
    assert (status, [widen_by is None for widen_by in asked], purchase["interrupted"], purchase["gpus"]) == (
        130, [False, True], True, 8)
    assert [(placed["job"], placed["trainer_gpus"], placed["nodes"]) for placed in purchase["placements"]] == [
        ("chat-14b", 4, [1]), ("math-4b", 4, [0])]
    assert err.splitlines()[-1] == "solve cluster: interrupted: the best purchase found so far is above"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Python's own handler is back


@pytest.mark.usefixtures("python_ctrl_c")
def test_ctrl_c_once_the_purchase_is_printed_leaves_its_exit_status(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: exit 130 and "solve cluster: interrupted" after a whole purchase whose JSON said "interrupted": false.
    noted = solver.cli.cluster._note_what_was_read

    def ctrl_c_in_the_notes(*args: object) -> None:
        signal.raise_signal(signal.SIGINT)  # held until the notes are done: then it stops nothing
        noted(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(solver.cli.cluster, "_note_what_was_read", ctrl_c_in_the_notes)
    status, out, err = cli("cluster", str(SMALLER_ASKS), "--buy", "--json")
    assert (status, json.loads(out)["interrupted"], json.loads(out)["gpus"]) == (0, False, 8)
    assert err.splitlines()[-1] == (
        "solve cluster: Ctrl-C came once the purchase was worked out: the purchase above is whole")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_out_says_wrote_after_the_view_alone_and_emit_keeps_stdout_the_fragment(cli: Cli, tmp_path: Path) -> None:
    # --emit trinity --out: stdout is the fragment alone (for a pipe), as --json's is the JSON, with no "wrote" line on
    # either stream; the view ends with it, as solve map --svg's and solve cluster --emit-dir's do.
    out_file = tmp_path / "plan.yaml"
    asked = ("--model", "8B", "--gpu", "h100", "--total-gpus", "8", "--rollout-gpus", "2", "--len", "32k",
             "--out", str(out_file))
    status, out, err = cli(*asked, "--emit", "trinity")
    assert (status, out, err) == (0, out_file.read_text(encoding="utf-8"), "")
    assert out.splitlines()[1] == ("# plan: Env + SP=2 on 6 H100-80GB trainer GPUs (2 for rollout), "
                                   "max_model_len 32768")
    status, out, err = cli(*asked, "--json")
    assert (status, json.loads(out)[0]["gpu"], "wrote" in out + err) == (0, "H100-80GB", False)
    status, out, err = cli(*asked)
    assert (status, out.splitlines()[-1], err) == (0, f"wrote {out_file}", "")


def test_maximize_len_without_a_budget_names_both_budgets_and_each_bounds_it(cli: Cli) -> None:
    # Before: "--maximize len needs a GPU budget: --gpus N", though --total-gpus with --rollout-gpus bounds it too.
    asked = ("--model", "8B", "--gpu", "h100", "--maximize", "len")
    assert cli(*asked) == (2, "", ("solve: error: --maximize len needs a GPU budget: --gpus N, or --total-gpus T "
                                   "with --rollout-gpus R\n"))
    by_total = json.loads(cli(*asked, "--total-gpus", "8", "--rollout-gpus", "2", "--json")[1])[0]
    by_trainer = json.loads(cli(*asked, "--gpus", "6", "--json")[1])[0]
    assert (by_total["budget_gpus"], by_total["total_gpus"]) == (6, 8)
    assert by_total["plans"][0]["max_model_len"] == by_trainer["plans"][0]["max_model_len"] == 101376


def test_buy_is_said_to_name_the_fewest_gpus_then_nodes(cli: Cli, tmp_path: Path) -> None:
    # Before: the help and the hint said "the fewest nodes"; the purchase is the fewest GPUs, then nodes: a job of 4
    # trainer and 4 rollout GPUs buys two nodes of 4 GPUs, not one of 16.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: big, gpu: A100-80GB, nodes: 0, gpus_per_node: 16}\n"
                     "  - {name: small, gpu: A100-80GB, nodes: 0, gpus_per_node: 4}\n"
                     "jobs: [{name: j, model: Qwen3-8B, max_model_len: 32768, rollout_gpus: 4}]\n", encoding="utf-8")
    purchase = json.loads(cli("cluster", str(fleet), "--buy", "--json")[1])
    assert (purchase["gpus"], purchase["nodes"], [pool["nodes_bought"] for pool in purchase["pools"]]) == (8, 2, [0, 2])
    buy_help = next(action.help for action in build_cluster_parser()._actions if "--buy" in action.option_strings)
    assert buy_help is not None and buy_help.startswith(
        "instead of placing the jobs, say the fewest GPUs, then nodes, to add to the file's pools with which every "
        "job (every required one, where some are) is placed")  # the required jobs alone where some are (smallslips39, s81)
    status, _, err = cli("cluster", str(SMALLER_ASKS))
    assert (status, err.splitlines()[-1]) == (1, (
        f"solve cluster: note: to place every job: solve cluster {SMALLER_ASKS} --buy names the fewest GPUs, then "
        "nodes, to add to the pools (and the jobs no number of nodes runs)"))


def test_the_suggested_buy_asks_with_the_run_s_own_options(cli: Cli) -> None:
    # Before: the suggested --buy dropped the run's --time-limit, --estimate, --cells, ...: it asked another question
    # (on the tables where the run set them aside, within 10 s where it was given 20). The command parses to the run's
    # options, but --buy, and --workers, which asks nothing else.
    root = Path(__file__).parent.parent
    given = ["--time-limit", "20", "--estimate", "--margin", "5%", "--weights", str(root / "tables" / "costs.yaml"),
             "--no-widen", "--cells", str(root / "docs" / "examples" / "my-cells.yaml"), "--memory-model",
             str(root / "tables" / "memory-model.yaml"), "--workers", "2"]
    status, _, err = cli("cluster", str(SMALLER_ASKS), *given)
    suggested = (f"solve cluster {SMALLER_ASKS} --buy --cells {given[9]} --memory-model {given[11]} --margin 0.05 "
                 f"--estimate --weights {given[6]} --time-limit 20 --no-widen")
    assert (status, err.splitlines()[-1]) == (1, (
        f"solve cluster: note: to place every job: {suggested} names the fewest GPUs, then nodes, to add to the pools "
        "(and the jobs no number of nodes runs)"))
    parser = build_cluster_parser()
    run, buy = parser.parse_args([str(SMALLER_ASKS), *given]), parser.parse_args(shlex.split(suggested)[2:])
    assert vars(buy) == {**vars(run), "buy": True, "workers": 1}
    # The defaults add nothing.
    assert cli("cluster", str(SMALLER_ASKS), "--time-limit", "10")[2].splitlines()[-1].startswith(
        f"solve cluster: note: to place every job: solve cluster {SMALLER_ASKS} --buy names the fewest GPUs")


def test_a_second_cluster_file_is_named_as_not_read(cli: Cli) -> None:
    # Before: "unrecognized arguments: b.yaml" alone, not saying that solve cluster reads one file.
    status, out, err = cli("cluster", str(SMALLER_ASKS), "--json", "b.yml")
    assert (status, out) == (2, "")
    assert err.splitlines()[1:] == [("solve cluster: error: unrecognized arguments: b.yml (solve cluster reads one "
                                     "FILE.yaml: join the files in one, or run it once for each)")]


@pytest.mark.parametrize(("top", "pool_extra", "job_extra", "error"), [
    ("", ", h100: 2", "", ("line 2: pool p: unknown field 'h100' ('h100' is a GPU type, H100-80GB, not a field: give "
                           "it as gpu: H100-80GB; fields: name, gpu, nodes, gpus_per_node, host_ram_gb, gpu_memory_gb, "
                           "gpu_memory_mib, gpu_interconnect, node_interconnect, down)")),
    # A job's: where a GPU type belongs, in the words a job's gpu gets (s88; before, the GPU type alone).
    ("", "", ", a100: 1", ("line 4: job j: unknown field 'a100' ('a100' is a GPU type, A100-80GB, not a field: a job "
                           "runs on its pool's gpu (a pool's field, not a job's: to keep a job to a pool, give it "
                           "pool: NAME); fields: name, max_model_len, rollout_gpus, priority, pool, required, "
                           "train_batch_size, lora_rank, lora_targets, lora_exclude_modules, reference_model, critic, "
                           "dpo, trinity_version, model, model_config)")),
    ("H100: 3\n", "", "", ("line 1: unknown field 'H100' ('H100' is a GPU type, H100-80GB, not a field: a pool has no "
                           "price: --buy adds the fewest GPUs, then nodes; fields: pools, jobs)")),
    ("prices: {h100: 3}\n", "", "", ("line 1: unknown field 'prices' (a pool has no price: --buy adds the fewest GPUs, "
                                     "then nodes; fields: pools, jobs)")),
    ("weights: {sp: 1}\n", "", "", ("line 1: unknown field 'weights' (solve cluster's --weights FILE gives the cost "
                                    "weights; fields: pools, jobs)")),
    # A block of shared job fields, as docker-compose files keep them for YAML anchors (s92: before, the fields alone).
    *((f"{key}: &d {{model: 4B}}\n", "", "", (f"line 1: unknown field '{key}' (a cluster file has no block of "
                                              "defaults: anchor the first job's fields, - &defaults {name: a, ...}, "
                                              "and merge them into the others, - {<<: *defaults, name: b}; fields: "
                                              "pools, jobs)")) for key in ("x-defaults", "defaults", "job_defaults")),
])
def test_a_gpu_type_or_its_price_as_a_cluster_file_key_is_told_why_not(cli: Cli, tmp_path: Path, top: str,
                                                                       pool_extra: str, job_extra: str,
                                                                       error: str) -> None:
    # Before: only the list of fields, not that h100 is a GPU type, a pool has no price, --weights gives weights.
    fleet = tmp_path / "f.yaml"
    fleet.write_text(f"{top}pools:\n  - {{name: p, gpu: H100, nodes: 1, gpus_per_node: 8{pool_extra}}}\n"
                     f"jobs:\n  - {{name: j, model: 4B, max_model_len: 8k{job_extra}}}\n", encoding="utf-8")
    assert cli("cluster", str(fleet)) == (2, "", f"solve cluster: error: {fleet}: {error}\n")


def test_a_gpu_type_as_a_weights_file_key_is_told_a_weights_file_has_no_price(cli: Cli, tmp_path: Path) -> None:
    # Before: "unknown field 'a100' (fields: offload, ...)", no word that a weights file weighs no GPU type.
    weights = tmp_path / "w.yaml"
    weights.write_text("a100: 1.5\n", encoding="utf-8")
    status, out, err = cli("cluster", str(SMALLER_ASKS), "--weights", str(weights))
    assert (status, out) == (2, "")
    assert err.startswith(f"solve cluster: error: --weights {weights}: unknown field 'a100' ('a100' is a GPU type, "
                          "A100-80GB, not a field: a weights file has no price: a cost is a relative step time")
