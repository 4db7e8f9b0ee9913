"""Mutation pass over session 74's code (helper mutants26, s75): tests that kill the mutants its own tests left alive
(the critic kept by ``--critic none --write``, the critic's engine comment, ...). Each asserts what the command or
function does, exactly."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from cluster_api import buy
from test_coverage13_s74 import _purchase_bounds
from test_critickept_s74 import PPO as TRAINER_FLAGS_PPO

import solver
import solver.solve as solve_module
from solver.api import answer_query, config_query, with_config_verdicts
from solver.cluster.options import Planner
from solver.cluster.reasons import _may_be_beyond_reach, _whole_pool_question, reasons_may_ask_reach
from solver.query import make_query
from solver.tables import load_catalog, load_fleet, load_weights
from solver.tables.model_config import _vllm_partial_rotary_lost
from solver.trinity import patch_trinity_config, read_trinity_config
from solver.trinity.plan_keys import critic_engine_comment

PPO = """\
algorithm: {algorithm_type: ppo}
model: {model_path: MODEL, max_model_len: LENGTH}
cluster: {node_num: 1, gpu_per_node: 8}
explorer:
  rollout_model: {engine_num: ENGINES, tensor_parallel_size: 1}
trainer:
  trainer_strategy: fsdp2
  param_offload: true
  optimizer_offload: true
  offload_policy: true
"""
"""A PPO config with Trinity 0.6's three offload flags on under ``trainer`` (on verl 0.8 or later the critic's engine
copies them: its critic is offloaded there)."""

FLAGS = ("param_offload", "optimizer_offload", "offload_policy")


@pytest.fixture(autouse=True)
def _env_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)


def _config(tmp_path: Path, model: str = "Qwen/Qwen3-4B", length: int = 8192, engines: int = 4,
            extra: str = "") -> Path:
    path = tmp_path / "ppo.yaml"
    path.write_text(PPO.replace("MODEL", model).replace("LENGTH", str(length)).replace("ENGINES", str(engines))
                    + extra, encoding="utf-8")
    return path


def _written(cli, config: Path, *flags: str) -> dict:
    written = config.parent / "written.yaml"
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--critic", "none", *flags,
                         "--write", str(written))
    assert status == 0, err
    return yaml.safe_load(written.read_text(encoding="utf-8"))


def test_critic_none_keeps_all_three_of_the_trainers_flags_for_the_critic(cli, tmp_path: Path):
    # KK9: offload_policy too (the critic offloaded, as the trainer's three flags held it on verl 0.8 or later)
    written = _written(cli, _config(tmp_path))
    assert [written["trainer"][flag] for flag in FLAGS] == [False, False, False]
    assert written["trainer"]["trainer_config"]["critic"] == {"fsdp": dict.fromkeys(FLAGS, True)}


def test_critic_none_keeps_nothing_for_trinity_05(cli, tmp_path: Path):
    # KK1: 0.5 refuses the critic's engine (and has no trainer-level flags, which --write removes)
    written = _written(cli, _config(tmp_path), "--trinity-version", "0.5")
    assert not set(FLAGS) & set(written["trainer"])
    assert "trainer_config" not in written["trainer"]


def test_critic_none_keeps_nothing_where_the_plan_runs_offload(cli, tmp_path: Path):
    # KK2: Qwen3-14B at 32768 tokens on 2 H100s runs Offload: the trainer's flags stay on, which the critic's
    # engine copies
    written = _written(cli, _config(tmp_path, "Qwen/Qwen3-14B", 32768, 6))
    assert [written["trainer"][flag] for flag in FLAGS] == [True, True, True]
    assert "critic" not in written["trainer"].get("trainer_config", {})


def test_critic_none_leaves_a_flag_the_critics_engine_sets_itself(cli, tmp_path: Path):
    # KK5: the kept flags are set only where the config sets them not (default_only): its own false stays
    own = "  trainer_config:\n    critic:\n      fsdp: {param_offload: false}\n"
    written = _written(cli, _config(tmp_path, extra=own))
    assert written["trainer"]["trainer_config"]["critic"]["fsdp"] == {
        "param_offload": False, "optimizer_offload": True, "offload_policy": True}


def test_the_kept_flags_comment_sits_above_the_first(cli, tmp_path: Path):
    # KK6: the fragment comments the first kept flag alone
    status, out, err = cli("--from-config", str(_config(tmp_path)), "--gpu", "h100", "--critic", "none",
                           "--emit", "trinity")
    assert status == 0, err
    lines = out.splitlines()
    start = lines.index("      fsdp:")
    assert lines[start + 1:start + 6] == [
        "        # the PPO critic's, as trainer's held them: the plan counted no critic and turns trainer's",
        "        # off",
        "        param_offload: true",
        "        optimizer_offload: true",
        "        offload_policy: true"]


def test_the_critics_engine_comment_names_the_option_only_for_no_release(cli):
    # PK1, PK2: made for Trinity 0.6, the comment names no option (0.5 is not in question)
    assert critic_engine_comment(None) == "Trinity 0.6 on verl 0.8 or later reads these, not the critic's model's"
    assert critic_engine_comment() == ("Trinity 0.6 on verl 0.8 or later reads these (0.5 refuses them: "
                                       "--trinity-version 0.5 leaves them out), not the critic's model's")
    status, out, err = cli("--model", "Qwen3-4B", "--len", "8192", "--gpu", "h100", "--gpus", "4",
                           "--critic", "resident", "--trinity-version", "0.6", "--emit", "trinity")
    assert status == 0, err
    lines = out.splitlines()
    start = lines.index("      fsdp:")
    assert lines[start + 1:start + 3] == [
        "        # Trinity 0.6 on verl 0.8 or later reads these, not the critic's model's",
        "        param_offload: false"]


RESIDENT_OK = TRAINER_FLAGS_PPO.replace("ALGORITHM", "ppo").replace(
    "  param_offload: true\n  optimizer_offload: true\n", "")
"""A PPO config with no offload flags of its own: Qwen3-4B at 8192 tokens on 4 H100s."""

ENGINE_NOTE = ["        # Trinity 0.6 on verl 0.8 or later reads these (0.5 refuses them: --trinity-version 0.5",
               "        #   leaves them out), not the critic's model's"]


def _critic_written(cli, tmp_path: Path, text: str, name: str, *flags: str) -> list[str]:
    """The lines of `text` --write'n for an offloaded critic (`flags` added), from the config `name`."""
    config, written = tmp_path / name, tmp_path / f"{name}.written.yaml"
    config.write_text(text, encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--critic", "offloaded", *flags,
                         "--write", str(written))
    assert status == 0, err
    return written.read_text(encoding="utf-8").splitlines()


def _engine_lines(lines: list[str]) -> list[str]:
    start = lines.index("      fsdp:")
    return lines[start + 1:start + 6]


def test_the_critics_engine_note_sits_at_its_flags_column_and_stays_on_a_second_write(cli, tmp_path: Path):
    # PA4: at the column of the flags four levels down; PA2, PA5: a later --write takes the note's flags for its own
    # and notes them again
    first = _critic_written(cli, tmp_path, RESIDENT_OK, "a.yaml")
    flags = ["        param_offload: true", "        optimizer_offload: true", "        offload_policy: true"]
    assert _engine_lines(first) == [*ENGINE_NOTE, *flags]
    again = _critic_written(cli, tmp_path, "\n".join(first) + "\n", "b.yaml")
    assert _engine_lines(again) == [*ENGINE_NOTE, *flags]
    # made for 0.6 (PA1): no note, and none left from the earlier --write
    for text in (RESIDENT_OK, "\n".join(first) + "\n"):
        for_06 = _critic_written(cli, tmp_path, text, "c.yaml", "--trinity-version", "0.6")
        assert _engine_lines(for_06)[:3] == flags
        assert not any("refuses" in line for line in for_06)


def test_the_critics_engine_flags_of_the_configs_own_get_no_note(cli, tmp_path: Path):
    # PA3: its own flags, false, are the user's: set, not noted
    own = RESIDENT_OK + ("  trainer_config:\n    critic:\n      fsdp:\n        param_offload: false\n"
                         "        optimizer_offload: false\n        offload_policy: false\n")
    lines = _critic_written(cli, tmp_path, own, "own.yaml")
    assert _engine_lines(lines)[:3] == [
        "        param_offload: true", "        optimizer_offload: true", "        offload_policy: true"]
    assert not any("refuses" in line for line in lines)


def test_the_apis_note_is_taken_back_by_a_later_patch():
    # PA6: the note in the API's words (version="0.5") is an earlier patch's too: a patch for 0.6 removes it
    plan = solver.plan("4B", gpu="h100", max_model_len=8192, budget_gpus=4, critic="offloaded")[0].best
    model = load_catalog().model("4B")
    first = patch_trinity_config(RESIDENT_OK, plan, model)
    assert 'version="0.5" leaves them' in first
    assert patch_trinity_config(first, plan, model) == first
    for_06 = patch_trinity_config(first, plan, model, version="0.6")
    assert "refuses" not in for_06
    assert for_06 == patch_trinity_config(RESIDENT_OK, plan, model, version="0.6")


def test_the_written_check_command_asks_for_no_critic_only_where_the_algorithm_trains_one(cli, tmp_path: Path):
    # PA17: a GRPO config trains no critic: its check needs no --critic none; a PPO one, planned without, does
    for algorithm, asked in (("grpo", ""), ("ppo", " --critic none")):
        config, written = tmp_path / f"{algorithm}.yaml", tmp_path / f"{algorithm}.written.yaml"
        config.write_text(RESIDENT_OK.replace("ppo", algorithm), encoding="utf-8")
        flags = ("--critic", "none") if algorithm == "ppo" else ()
        status, _, err = cli("--from-config", str(config), "--gpu", "h100", *flags, "--write", str(written))
        assert status == 0, err
        (check,) = [line for line in written.read_text(encoding="utf-8").splitlines() if " --check " in line]
        assert check.endswith(f" --check --gpu H100-80GB{asked}")


def _config_problems(cli, config: Path, *flags: str, status: int = 0) -> list[str]:
    """The config's problems as --check --json says them, its exit `status` checked (1: the config is refused)."""
    found, out, err = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json", *flags)
    assert found == status, err
    problems: list[str] = json.loads(out)[0]["current"]["config_problems"]
    return problems


def test_asking_for_the_critic_the_flags_hold_leaves_the_note_as_read(cli, tmp_path: Path):
    # CR5: --critic resident where the flags hold it resident: the note is the reading's, not a "counts" one
    config = tmp_path / "ppo.yaml"
    config.write_text(RESIDENT_OK, encoding="utf-8")
    note = ("algorithm.algorithm_type ppo trains a critic model beside the actor on the same trainer GPUs; the verdict "
            "and the plans count its states as its own critic.model.fsdp_config holds them: resident (on the GPUs "
            "throughout), and its own update as a second peak; --critic none counts the actor alone")
    assert _config_problems(cli, config) == [note]
    assert _config_problems(cli, config, "--critic", "resident") == [note]


def test_another_note_stays_as_it_is_where_another_critic_is_asked(cli, tmp_path: Path):
    # CR6: only the critic's note says what was asked; the train batch's stays the same
    config = tmp_path / "train.yaml"
    config.write_text("mode: train\n" + RESIDENT_OK, encoding="utf-8")
    assert _config_problems(cli, config, "--critic", "none", status=1) == [
        ("buffer.train_batch_size is unset, which Trinity requires with mode train: it refuses the config (the verdict "
         "and the plans check no train batch)"),
        ("algorithm.algorithm_type ppo trains a critic model beside the actor on the same trainer GPUs; --critic none "
         "leaves it out: the verdict and the plans are for the actor alone, though the run trains it (its flags hold "
         "its states resident)")]


def test_the_apis_critic_note_quotes_the_value_asked():
    # CR9: in the API's words, critic="offloaded", as the keyword takes it
    catalog = load_catalog()
    config = read_trinity_config(RESIDENT_OK, "ppo.yaml", {})
    query = config_query(catalog, config, gpu="h100", critic="offloaded")
    (answer,) = with_config_verdicts(answer_query(query, catalog), query, catalog, config, RESIDENT_OK, "ppo.yaml", {})
    assert answer.current is not None
    assert answer.current.config_problems == (
        ("algorithm.algorithm_type ppo trains a critic model beside the actor on the same trainer GPUs; "
         'critic="offloaded" counts its states offloaded (offload_policy under fsdp2: in host memory throughout), '
         "where its flags hold them resident"),)


LORA_24 = """\
mode: both
algorithm: {algorithm_type: ppo}
model:
  model_path: Qwen/Qwen3-8B
  max_model_len: 16384
  lora_configs: [{lora_rank: 24}]
cluster:
  node_num: 1
  gpu_per_node: 8
explorer:
  rollout_model:
    ROLLOUT
"""
"""A config whose LoRA rank, 24, vLLM 0.19.1 refuses as its max_lora_rank, its rollout model's keys to fill in."""


@pytest.mark.parametrize(("rollout", "refused"), [
    ("engine_num: 2", True), ("tensor_parallel_size: 1", True),  # VL4: engine_num unset is 1 engine
    ("{engine_type: vllm_async, engine_num: 2}", True),
    ("{engine_type: sglang, engine_num: 2}", False),  # VL1: no vLLM rollout (SGLang refuses LoRA: its own code)
    ("engine_num: 0", False),  # VL3: no rollout engine
])
def test_a_vllm_refused_lora_rank_only_where_a_vllm_rollout_starts(cli, tmp_path: Path, rollout: str, refused: bool):
    config = tmp_path / "lora.yaml"
    text = LORA_24.replace("ROLLOUT", rollout)
    if rollout.startswith("{"):
        text = text.replace("rollout_model:\n    ", "rollout_model: ")
    config.write_text(text, encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json")
    assert status in (0, 1), err  # 1: the config does not train (sglang's rollout is not counted)
    sglang = ["sglang-lora-refused"] if "sglang" in rollout else []  # test_lorarest3_s75
    assert json.loads(out)[0]["current"]["config_problem_codes"] == [
        "critic-trained", "lora-counted-as-full", *(["lora-rank-vllm-refused"] if refused else []), *sglang]


def test_a_job_kept_on_its_own_settings_names_the_planners_cheapest_way_there(cli, tmp_path: Path):
    # C5: on 4 trainer GPUs its ways are Env + SP=4 (cost 3282) and, on a node whose host memory the pool gives,
    # Env + Offload + SP=4 (6565, reaching 92160 tokens, which the placement takes): the words name the planner's
    # cheapest way there, the cheaper, and say it is the cheapest (smallslips21), as the placement takes the longer
    # one; before, no test told min from max
    fleet = {"pools": [{"name": "h", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 1024}],
             "jobs": [{"name": "j", "model": "Qwen3-14B", "max_model_len": {"at_least": 16384}, "rollout_gpus": 2}]}
    path, running = tmp_path / "fleet.yaml", tmp_path / "now.json"
    path.write_text(yaml.safe_dump(fleet), encoding="utf-8")
    status, out, err = cli("cluster", str(path), "--json")
    assert status == 0, err
    now = json.loads(out)
    placed = now["placements"][0]
    assert (placed["trainer_gpus"], placed["plan"]["sp"], placed["plan"]["offload"]) == (4, 4, True)
    placed["plan"].update(sp=2, max_model_len=16384)
    running.write_text(json.dumps(now), encoding="utf-8")
    status, out, err = cli("cluster", str(path), "--current", str(running), "--json")
    assert status == 0, err
    kept = json.loads(out)["placements"][0]
    assert (kept["current"], kept["stay_reason_code"], kept["stay_reason"]) == ("stays", "settings-kept", (
        "its settings are kept as they run (SP=2 with Offload at 16384 tokens on 4 trainer GPUs; the planner's "
        "cheapest way on 4 trainer GPUs: Env + SP=4); the 2 idle GPUs beside it on its node would grow it to 6 "
        "trainer GPUs (Env + Offload + SP=2, cost 0.3703, not 0.5555, 40960 tokens, not 16384), which would restart "
        "it"))  # count-kept's words too


def test_whether_reasons_may_ask_reach_is_asked_per_training(tmp_path: Path):
    # C14: two 8B jobs alike but for the critic one trains: on 4 A100-40GBs the whole pool trains the first's 16384
    # tokens (not beyond reach) but not the second's (which it trains shorter: may be beyond). The answer is cached
    # per model, training, pool and length: keyed without the training, the second took the first's answer
    fleet = {"pools": [{"name": "big", "gpu": "H100-80GB", "nodes": 1, "gpus_per_node": 8},
                       {"name": "small", "gpu": "A100-40GB", "nodes": 1, "gpus_per_node": 4}],
             "jobs": [{"name": "a", "model": "Qwen3-8B", "max_model_len": 16384, "rollout_gpus": 0},
                      {"name": "b", "model": "Qwen3-8B", "max_model_len": 16384, "rollout_gpus": 0,
                       "critic": "resident"}]}
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(fleet), encoding="utf-8")
    loaded = load_fleet(path, load_catalog())
    small = loaded.pools[1]
    planner = Planner(load_catalog(), load_weights(), "auto")
    assert [_may_be_beyond_reach(planner, job, small, _whole_pool_question(planner, job, small, 16384))
            for job in loaded.jobs] == [False, True]
    both_in_big = {0: frozenset({0}), 1: frozenset({0})}
    assert reasons_may_ask_reach(Planner(load_catalog(), load_weights(), "auto"), loaded, both_in_big) is True
    only_a = {0: frozenset({0})}
    assert reasons_may_ask_reach(Planner(load_catalog(), load_weights(), "auto"), loaded, only_a) is False


def test_buy_asks_again_on_the_floor_of_the_bought_gpus_in_a_pool_of_larger_nodes(tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch):
    # U7: test_clusterrest_s74's eight jobs on A100 nodes of 16 (host needs rounded on the first bound's 8 nodes),
    # and one more in a pool of H100 nodes of 8: the first purchase is made on rounded needs; the second ask bounds
    # the A100 pool by the nodes of 16 those GPUs fill, 2 (unrounded). It buys 2 + 1 nodes, 40 GPUs, optimal. The
    # jobs name Trinity 0.5.1, whose verl rule loads the untied Qwen3-8B on rank 0 alone: with no release named
    # every rank loads it (s84), and the first bound rounds no pool, so nothing is asked again. (Before s84, with
    # 0.6's fp32 reference shards: 4 + 1 nodes, then 3 + 1, 56 GPUs.)
    models = ["Qwen3-0.6B", "Qwen3-1.7B", "Qwen3-4B", "Qwen3-8B"] * 2
    fleet = {"pools": [{"name": "p", "gpu": "A100-80GB", "nodes": 0, "gpus_per_node": 16, "host_ram_gb": 128},
                       {"name": "q", "gpu": "H100-80GB", "nodes": 0, "gpus_per_node": 8}],
             "jobs": [*({"name": f"j{index}", "model": model, "max_model_len": 8192, "rollout_gpus": 0, "pool": "p",
                         "required": True, "trinity_version": "0.5.1"} for index, model in enumerate(models)),
                      {"name": "q0", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 0, "pool": "q",
                       "required": True, "trinity_version": "0.5.1"}]}
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(fleet), encoding="utf-8")
    catalog = load_catalog()
    made = _purchase_bounds(monkeypatch)
    purchase = json.loads(buy(load_fleet(path, catalog), catalog=catalog, time_limit_s=60).model_dump_json())
    assert made == [([8, 8], ("p",)), ([2, 5], ())]
    assert (purchase["status"], purchase["gpus"], purchase["nodes"], purchase["host_rounded"]) == (
        "optimal", 40, 3, [])


def test_a_memory_answer_without_a_critic_counts_no_critic_parameters():
    # AP5: critic_parameters_b is the critic's size only where one is counted
    assert [(answer.critic, round(answer.critic_parameters_b, 4)) for answer in (
        solver.memory_answer("4B", gpu="h100", gpus=4, max_model_len=8192, critic=critic)
        for critic in (None, "none", "resident"))] == [(None, 0.0), (None, 0.0), ("resident", 4.022)]


@pytest.mark.parametrize("section", [("fsdp",), ("model", "fsdp_config")])
def test_a_misspelt_offload_flag_of_the_critics_is_named(cli, tmp_path: Path, section: tuple[str, ...]):
    # KE1, KE2: the critic's engine's flags and its model's are keys rft-solver reads: a near miss is named
    nested = "".join(f"{'  ' * (depth + 3)}{part}:\n" for depth, part in enumerate(section))
    config = tmp_path / "ppo.yaml"
    config.write_text(RESIDENT_OK + "  trainer_config:\n    critic:\n" + nested
                      + f"{'  ' * (len(section) + 3)}param_ofload: true\n", encoding="utf-8")
    dotted = ".".join(("trainer", "trainer_config", "critic", *section))
    assert _config_problems(cli, config)[0] == (
        f"{dotted}.param_ofload: did you mean param_offload? That key is unset, and read as such (Trinity 0.5 refuses "
        "the config, and 0.6 on verl before 0.8 drops the key)")


def test_an_sp_one_question_left_open_decides_nothing(monkeypatch: pytest.MonkeyPatch):
    # SO1: the SP-over-PCIe caution's SP=1 question (Qwen3-4B at 8192 tokens on RTX 4090s: no plan with SP 1 at the
    # default budget) says None where its solve ends undecided (status unknown, no plan found), not that SP 1 does not
    # fit
    catalog = load_catalog()
    query, gpu = make_query(catalog, model="Qwen3-4B", max_model_len=8192), catalog.gpu("4090")
    assert solve_module._fits_without_sp(catalog, query, gpu, 2, 8192) == "lowered"  # s93: with --token-budget auto
    capped = make_query(catalog, model="Qwen3-4B", max_model_len=8192, token_budget=8192)  # lowers within it already
    assert solve_module._fits_without_sp(catalog, capped, gpu, 2, 8192) is True
    undecided = SimpleNamespace(status="unknown", best=None)
    monkeypatch.setattr(solve_module, "answer_for", lambda *args, **kwargs: undecided)
    assert solve_module._fits_without_sp(catalog, query, gpu, 2, 8192) is None
    # s93: the default budget's question decided (no plan), the lowered one's left open: None too, not False
    none = SimpleNamespace(status="infeasible", best=None)
    monkeypatch.setattr(solve_module, "answer_for", lambda catalog, asked, *args, **kwargs:
                        undecided if asked.token_budget == "auto" else none)
    assert solve_module._fits_without_sp(catalog, query, gpu, 2, 8192) is None


def test_a_share_beside_rope_parameters_per_layer_type_is_not_judged():
    # MC3: RoPE parameters per layer type (transformers 5's Gemma-3 form) are not judged: no share said lost, where
    # the same share beside one set of parameters is (0.5 of the config against vLLM's 1.0)
    per_layer = {"full_attention": {"rope_type": "default", "rope_theta": 1e6},
                 "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}
    config = {"model_type": "llama", "partial_rotary_factor": 0.5}
    path = Path("config.json")
    assert _vllm_partial_rotary_lost(path, {**config, "rope_parameters": per_layer}, 128) is None
    assert _vllm_partial_rotary_lost(path, {**config, "rope_parameters": per_layer["full_attention"]}, 128) == (0.5, 1.0)


NULL_EXPERT_PARALLEL = """\
algorithm: {algorithm_type: grpo}
model: {model_path: Qwen/Qwen3-4B, max_model_len: 8192}
cluster: {node_num: 1, gpu_per_node: 8}
explorer:
  rollout_model: {engine_num: 4, tensor_parallel_size: 1, enable_expert_parallel: null}
  auxiliary_models:
  - {model_path: Qwen/Qwen3-0.6B, engine_num: 1, enable_expert_parallel: null}
"""


def test_a_null_key_trinity_05_lacks_is_said_once_for_05(cli, tmp_path: Path):
    # XC2: with --trinity-version 0.5 a null enable_expert_parallel (the rollout model's and an auxiliary model's) is
    # a key 0.5 refuses in any value, said so once each; not also a null its typed field refuses
    config = tmp_path / "null.yaml"
    config.write_text(NULL_EXPERT_PARALLEL, encoding="utf-8")
    refused = ("enable_expert_parallel: a key of Trinity 0.6's inference model, which Trinity 0.5 refuses (its "
               "InferenceModelConfig has no such key), so the config does not load: remove it (--write leaves it to "
               "you; Trinity 0.5's rollout engines run without expert parallelism)")
    assert _config_problems(cli, config, "--trinity-version", "0.5", status=1) == [
        f"explorer.rollout_model.{refused}", f"explorer.auxiliary_models[0].{refused}"]


def test_the_apis_estimate_takes_critic_none_as_no_critic():
    # XA1: critic="none" is no critic, as None: no critic's own update counted
    asked = {"gpu": "h100", "gpus": 4, "max_model_len": 8192, "sp": 1, "env": True, "offload": False}
    none = solver.estimate_memory("4B", **asked, critic="none")
    assert none == solver.estimate_memory("4B", **asked)
    assert (none.critic_gib, none.critic_pass_gib) == (0.0, 0.0)
