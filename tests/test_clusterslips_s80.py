"""Cluster words and JSON (s80, helper clusterslips): ``solve cluster --buy --json``'s pools say ``nodes_bought`` and
``gpus_bought`` (schema_version 2; version 1 read back), so that a pool's ``nodes`` is the pool's own; an unplaced
job's reason names its LoRA adapter on its targets and its DPO pair where counted, beside its critic; ``--explain``'s
budget step with ``--exact`` and ``--total-gpus`` names the total; ``--current`` notes the running jobs planned for
another Trinity release; Ctrl-C before the search says nothing was placed."""

from __future__ import annotations

import importlib
import json
import shutil
import signal
from pathlib import Path

import pytest
import yaml
from test_cluster import reference_checked
from test_clustercli_s79 import SMALLER_ASKS, buy_module
from test_smallslips24_s77 import Cli

import solver
import solver.cli.cluster
from solver.results import PURCHASE_SCHEMA_VERSION, SCHEMA_VERSION, PurchaseResult

search_module = importlib.import_module("solver.cluster.search")
INTERNLM2 = Path(__file__).parent / "data" / "hf-configs" / "internlm2-7b.json"


def _fleet(tmp_path: Path, pools: list[dict[str, object]], jobs: list[dict[str, object]]) -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": pools, "jobs": jobs}), encoding="utf-8")
    return path


def test_a_purchases_pools_say_the_nodes_bought_and_a_placements_the_pools_own(cli: Cli):
    # Before: "nodes" was the nodes to buy in --buy --json's pools, and the pool's size in a placement's.
    status, out, _ = cli("cluster", str(SMALLER_ASKS), "--buy", "--json")
    bought = json.loads(out)
    assert (status, bought["schema_version"], bought["gpus"], bought["nodes"]) == (0, 2, 8, 1)
    assert bought["pools"] == [{"pool": "a100", "gpu": "A100-80GB", "nodes_bought": 1, "gpus_bought": 8,
                                "nodes_after": 2, "down": [], "nodes_used": 2, "gpus_used": 11, "host_ram_gb": 480,
                                "fullest_node_host_gb": 381.1}]
    status, out, _ = cli("cluster", str(SMALLER_ASKS), "--json")
    placed = json.loads(out)
    assert (status, placed["schema_version"]) == (1, 1)
    assert [(pool["pool"], pool["nodes"], pool["gpus"]) for pool in placed["pools"]] == [("a100", 1, 8)]
    assert (SCHEMA_VERSION, PURCHASE_SCHEMA_VERSION) == (1, 2)
    schema = json.loads(solver.render.json_schema("cluster-buy"))
    assert schema["properties"]["schema_version"]["const"] == 2
    assert list(schema["$defs"]["PoolPurchase"]["properties"])[:4] == ["pool", "gpu", "nodes_bought", "gpus_bought"]


def test_a_purchase_of_schema_version_1_reads_back(cli: Cli):
    _, out, _ = cli("cluster", str(SMALLER_ASKS), "--buy", "--json")
    now = PurchaseResult.model_validate_json(out)
    old = json.loads(out)
    old["schema_version"] = 1
    old["pools"] = [{**{"nodes" if key == "nodes_bought" else "gpus" if key == "gpus_bought" else key: value
                        for key, value in pool.items()}} for pool in old["pools"]]
    assert list(old["pools"][0])[:4] == ["pool", "gpu", "nodes", "gpus"]
    read = PurchaseResult.model_validate(old)
    assert read == now and (read.pools[0].nodes_bought, read.pools[0].gpus_bought) == (1, 8)
    assert json.loads(read.model_dump_json())["pools"] == json.loads(out)["pools"]  # printed again: version 2's
    without = {key: value for key, value in old.items() if key not in ("schema_version", "rft_solver_version")}
    assert PurchaseResult.model_validate(without) == now  # made before the key: read as version 1
    with pytest.raises(ValueError, match=r"schema_version is 3: this release of rft-solver reads 2 or 1 \(and JSON "
                                         r"without one\)"):
        PurchaseResult.model_validate({**old, "schema_version": 3})
    with pytest.raises(ValueError, match=r"schema_version is 2: this release of rft-solver reads 1 \(and JSON "):
        solver.ClusterResult.model_validate_json(cli("cluster", str(SMALLER_ASKS), "--json")[1].replace(
            '"schema_version":1', '"schema_version":2').replace('"schema_version": 1', '"schema_version": 2'))


def test_an_unplaced_reason_names_the_dpo_pair_its_plans_count(tmp_path: Path):
    # internlm2-7b is trained one padded sequence per micro-batch: DPO counts a pair, 2 x 65536 tokens on a GPU, which
    # 2 H100s do not train; without dpo it is placed at 65536 on one of them. Before: the reason named no pair.
    shutil.copy(INTERNLM2, tmp_path / "internlm2-7b.json")
    pools = [{"name": "h100", "gpu": "H100-80GB", "nodes": 1, "gpus_per_node": 2}]
    job = {"name": "pref", "model_config": "internlm2-7b.json", "max_model_len": 65536}
    plain = solver.place(_fleet(tmp_path, pools, [job]))
    assert ([p.job for p in plain.placements], plain.unplaced) == (["pref"], ())
    paired = solver.place(_fleet(tmp_path, pools, [{**job, "dpo": True}]))
    (unplaced,) = paired.unplaced
    assert unplaced.reason.startswith(
        "h100, with its DPO pair per micro-batch counted: 65536 tokens is beyond what the tables and the memory "
        "model's estimates allow for internlm2-7b on H100-80GB within 2 GPUs: the longest is 39936")
    assert unplaced.dpo is True


def test_an_unplaced_reason_names_the_lora_adapter_on_its_targets(tmp_path: Path):
    pools = [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 2, "host_ram_gb": 100}]
    job = {"name": "big", "model": "Qwen3-8B", "max_model_len": 65536, "lora_rank": 256,
           "lora_targets": "q_proj,v_proj"}
    (unplaced,) = solver.place(_fleet(tmp_path, pools, [job])).unplaced
    assert unplaced.reason.startswith(
        "a100, with its LoRA adapter on q_proj,v_proj counted: 65536 tokens is beyond what the tables and the memory "
        "model's estimates allow for Qwen3-8B on A100-80GB within 2 GPUs with 100 GiB of host memory per node")
    # all-linear, the default, is named by no words: the planner's reason as it was
    (plain,) = solver.place(_fleet(tmp_path, pools, [{**job, "lora_targets": "all-linear"}])).unplaced
    assert plain.reason.startswith("a100: 65536 tokens is beyond what")


def test_a_job_left_out_for_room_names_its_adapter_and_its_critic(tmp_path: Path):
    pools = [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}]
    jobs = [{"name": "big", "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 4, "priority": 5},
            {"name": "small", "model": "Qwen3-8B", "max_model_len": 32768, "lora_rank": 16,
             "lora_targets": "q_proj,v_proj", "critic": "resident", "rollout_gpus": 2}]
    (unplaced,) = solver.place(_fleet(tmp_path, pools, jobs)).unplaced
    assert unplaced.reason.startswith(
        "no room left in a100 (it needs at least 6 GPUs (4 trainer + 2 rollout) of one node, with its LoRA adapter on "
        "q_proj,v_proj and its "
        "PPO critic (resident) counted) after the jobs placed")


def test_the_budget_step_names_the_total_as_the_choice_step_does(cli: Cli):
    # Before: "6 GPUs: --exact asks for 4", where the choice above said "on exactly 4 GPUs (6 in all, ...)".
    status, out, _ = cli("--model", "8B", "--total-gpus", "6", "--rollout-gpus", "2", "--len", "32768", "--exact",
                         "--gpu", "A100-80GB", "--explain")
    lines = out.splitlines()
    assert status == 0
    assert any(line.startswith("choice ") and "on exactly 4 GPUs (6 in all, 2 for the rollout)" in line
               for line in lines)
    assert "budget           6 GPUs: --exact asks for 4 (6 in all, 2 for the rollout)" in lines
    _, alone, _ = cli("--model", "8B", "--gpus", "4", "--len", "32768", "--exact", "--gpu", "A100-80GB", "--explain")
    assert "budget           6 GPUs: --exact asks for 4" in alone.splitlines()  # without --total-gpus: as before


def test_current_notes_running_jobs_planned_for_another_release(cli: Cli, tmp_path: Path):
    # jobrelease (s81): a running job whose plan names its release keeps it (no note); one whose plan names none is
    # judged by this run's release, as the note says
    _, out, _ = cli("cluster", str(SMALLER_ASKS), "--trinity-version", "0.5", "--json")
    placed = reference_checked(SMALLER_ASKS, out, trinity_version="0.5")
    assert [(p["job"], p["plan"]["trinity_version"]) for p in placed["placements"]] == [("chat-14b", "0.5")]
    current = tmp_path / "now.json"
    current.write_text(out, encoding="utf-8")
    for again in ((), ("--trinity-version", "0.6"), ("--trinity-version", "0.5")):
        _, _, err = cli("cluster", str(SMALLER_ASKS), "--current", str(current), *again)
        assert "plans counted for" not in err  # the release it runs on, its plan's: no note
    _, out, _ = cli("cluster", str(SMALLER_ASKS), "--json")
    current.write_text(out, encoding="utf-8")
    _, _, err = cli("cluster", str(SMALLER_ASKS), "--current", str(current), "--trinity-version", "0.5")
    assert (f"solve cluster: note: --current {current} runs chat-14b on plans counted for no Trinity release named "
            "(0.6's counts), this run for Trinity 0.5 (--trinity-version 0.5): whether it stays is judged by this "
            f"run's release, not the one it runs on; give it the release it runs on as trinity_version in "
            f"{SMALLER_ASKS} (or run again without --trinity-version to judge it as it runs)") in " ".join(err.split())
    _, _, err = cli("cluster", str(SMALLER_ASKS), "--current", str(current))
    assert "plans counted for" not in err


def _ctrl_c_while_the_ways_are_worked_out(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> None:
    def ctrl_c(*args: object, **kwargs: object) -> object:
        signal.raise_signal(signal.SIGINT)
        raise AssertionError("Ctrl-C did not stop it")

    monkeypatch.setattr(module, name, ctrl_c)


@pytest.mark.usefixtures("python_ctrl_c")  # Python's own Ctrl-C handler, also in a suite run with Ctrl-C ignored
@pytest.mark.parametrize(("flags", "said"), [
    ((), "a placement began: nothing placed"),
    (("--json",), "a placement began: nothing placed"),
    (("--emit-dir", "{out}"), "a placement began: nothing placed, no configs written"),
])
def test_ctrl_c_before_the_placement_search_says_nothing_was_placed(cli: Cli, monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path, flags: tuple[str, ...],
                                                                    said: str):
    # Before: "solve cluster: interrupted" alone, exit 130, which did not say that nothing was placed.
    _ctrl_c_while_the_ways_are_worked_out(monkeypatch, search_module, "fleet_options")
    out_dir = tmp_path / "out"
    status, out, err = cli("cluster", str(SMALLER_ASKS), *(flag.format(out=out_dir) for flag in flags))
    assert (status, out, err) == (130, "", f"solve cluster: interrupted before the search for {said}\n")
    assert not out_dir.exists()


@pytest.mark.usefixtures("python_ctrl_c")
def test_ctrl_c_before_the_purchase_search_says_nothing_was_placed(cli: Cli, monkeypatch: pytest.MonkeyPatch):
    _ctrl_c_while_the_ways_are_worked_out(monkeypatch, buy_module, "_ways_by_tier")
    status, out, err = cli("cluster", str(SMALLER_ASKS), "--buy", "--json")
    assert (status, out, err) == (
        130, "", "solve cluster: interrupted before the search for a purchase began: nothing placed\n")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Python's own handler is back


@pytest.mark.usefixtures("python_ctrl_c")
def test_ctrl_c_before_the_search_reaches_an_api_caller_as_ctrl_c(monkeypatch: pytest.MonkeyPatch):
    # the command's mark for it (InterruptedBeforeSearch) is a KeyboardInterrupt: a caller catching Ctrl-C catches it
    _ctrl_c_while_the_ways_are_worked_out(monkeypatch, search_module, "fleet_options")
    with pytest.raises(KeyboardInterrupt) as raised:
        solver.place(SMALLER_ASKS)
    assert type(raised.value) is search_module.InterruptedBeforeSearch


@pytest.mark.usefixtures("python_ctrl_c")
@pytest.mark.parametrize(("module", "name"), [
    (solver.cli, "check_inputs_apart"),  # the inputs' checks, which load the tables' libraries, before the command
    (solver.cli.cluster, "_fleet_and_catalog"),  # the cluster file and the tables read
    (solver.cli.cluster, "memory_model_option"),  # the memory model read, OR-Tools loaded
])
@pytest.mark.parametrize(("flags", "said"), [
    ((), "a placement began: nothing placed"),
    (("--buy",), "a purchase began: nothing placed"),
    (("--emit-dir", "{out}"), "a placement began: nothing placed, no configs written"),
])
def test_ctrl_c_while_loading_says_nothing_was_placed(cli: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                      module: object, name: str, flags: tuple[str, ...], said: str):
    # cluster93 (s93): Ctrl-C in a cluster command's first seconds (libraries loading, the inputs read) said only
    # "solve cluster: interrupted"; it says what the ways' Ctrl-C says: nothing placed (nor written), exit 130
    _ctrl_c_while_the_ways_are_worked_out(monkeypatch, module, name)
    out_dir = tmp_path / "out"
    status, out, err = cli("cluster", str(SMALLER_ASKS), *(flag.format(out=out_dir) for flag in flags))
    assert (status, out, err) == (130, "", f"solve cluster: interrupted before the search for {said}\n")
    assert not out_dir.exists()


@pytest.mark.usefixtures("python_ctrl_c")
def test_ctrl_c_before_buy_with_emit_dir_is_refused_says_no_configs_were_to_be_written(
        cli: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    # mutants59: Ctrl-C while the inputs are checked, before --buy beside --emit-dir is refused (--buy writes no
    # configs): a purchase, nothing placed, and no word of configs not written
    _ctrl_c_while_the_ways_are_worked_out(monkeypatch, solver.cli, "check_inputs_apart")
    assert cli("cluster", str(SMALLER_ASKS), "--buy", "--emit-dir", str(tmp_path / "out")) == (
        130, "", "solve cluster: interrupted before the search for a purchase began: nothing placed\n")


@pytest.mark.usefixtures("python_ctrl_c")
def test_ctrl_c_while_another_command_checks_its_inputs_stays_one_word(cli: Cli, monkeypatch: pytest.MonkeyPatch):
    _ctrl_c_while_the_ways_are_worked_out(monkeypatch, solver.cli, "check_inputs_apart")
    assert cli("memory", "--model", "4B", "--gpu", "a100", "--gpus", "4", "--len", "8k") == (
        130, "", "solve memory: interrupted\n")
