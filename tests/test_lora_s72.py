"""LoRA is planned as LoRA trains (s72): the states of a LoRA actor are the frozen base's fp32 weights (4 bytes per
parameter, sharded) and the adapter's fp32 weights, gradients and Adam moments (16 bytes per adapter parameter, on
every linear layer but the output projection: PEFT's ``all-linear``, Trinity's default), not full fine-tuning's 16
bytes per parameter; the tables, which measured full fine-tuning, vouch for a LoRA run by inference and refute
nothing. The review's case: a GRPO+LoRA Qwen3-14B at 65536 tokens on 4 H20s, told Env + Offload + SP=4 (cost
0.6565) where Env + SP=4 fits (0.3282)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.api import memory_answer, plan
from solver.memory import GIB, lora_parameters, lora_states_bytes
from solver.query import ConfigProblemCode, QueryError
from solver.render import memory_text
from solver.tables import load_catalog, load_memory_model
from solver.trinity import read_trinity_config

QWEN3_14B_ADAPTER = 32 * 40 * (
    (5120 + 5120) * 2  # the query and output projections: 40 heads x 128 = 5120 wide
    + (5120 + 1024) * 2  # the key and value projections: 8 KV heads x 128 = 1024 wide
    + (5120 + 17408) * 3)  # the MLP's gate, up and down projections
"""Rank 32 x 40 layers x (inputs + outputs) of each adapted matrix: 128,450,560 parameters."""
LORA_STATES_BYTES = 4 * 14.768e9 / 4 + 16 * QWEN3_14B_ADAPTER / 4
"""Qwen3-14B's 14.768B frozen fp32 weights and the adapter's 16 bytes per parameter, over 4 GPUs."""
LORA_STEP_BYTES = 4 * 14.768e9 / 4 + 20 * QWEN3_14B_ADAPTER / 4
"""At the optimizer step, Adam's temporary square root (4 bytes) for the adapter's parameters alone."""

HEAD = ("algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1}}\n")
MODEL = "model: {model_path: Qwen/Qwen3-14B, max_model_len: 65536%s}\n"
SP = "trainer: {ulysses_sequence_parallel_size: 4}\n"
ROLE_MODEL = "trainer: {trainer_config: {actor_rollout_ref: {model: {%s}}}}\n"


def test_the_adapter_and_the_states_are_counted_by_hand():
    model = load_catalog().model("14B")
    assert QWEN3_14B_ADAPTER == 128_450_560 == lora_parameters(model, 32)
    assert lora_states_bytes(model, 4, 32, 16) == pytest.approx(LORA_STATES_BYTES)  # 14.23 GiB
    assert lora_states_bytes(model, 4, 0, 16) == pytest.approx(16 * 14.768e9 / 4)  # full fine-tuning: 55.02 GiB
    # A mixture of experts' routed experts are no nn.Linear in transformers 5, but PEFT 0.21.2 adapts them (fused gate
    # and up at twice the rank, down at the rank, per expert) beside the attention and the router: test_lorarest4_s76.
    moe = load_catalog().model("30B-A3B")
    assert lora_parameters(moe, 32) == 32 * 48 * ((2048 + 4096) * 2 + (2048 + 512) * 2 + (2048 + 128) + 128 * (
        2 * (2 * 768 + 2048) + (2048 + 768))) == 1_993_015_296


def test_solve_memory_breakdown_of_the_reviews_case():
    states_multiplier = load_memory_model().coefficients.multiplier("states")
    lora = memory_answer("14B", "h20", 4, 65536, sp=4, env=True, lora_rank=32)
    full = memory_answer("14B", "h20", 4, 65536, sp=4, env=True)
    assert (lora.lora_rank, lora.lora_parameters, full.lora_rank, full.lora_parameters) == (32, 128_450_560, 0, 0)
    assert lora.terms.states == pytest.approx(LORA_STATES_BYTES / GIB * states_multiplier)  # 14.65 GiB
    assert lora.step_gib == pytest.approx(LORA_STEP_BYTES / GIB + 1.0)  # 15.35 GiB with the overhead
    assert round(lora.total_gib, 2) == 67.81 and round(full.total_gib, 2) == 109.78
    assert round(lora.usable_gib, 2) == 87.85
    # The activations are the same: only the states differ.
    assert {term: gib for term, gib in lora.terms.items() if term != "states"} == {
        term: gib for term, gib in full.terms.items() if term != "states"}
    assert (lora.fits, lora.trains, full.fits, full.trains) == (True, True, False, False)
    # The 4-GPU table's cell at 40960 says Env + SP=4 ran out of memory with full fine-tuning: not with LoRA.
    assert full.tables is not None and not full.tables.trains and lora.tables is None
    assert lora.longest_len == 93184


def test_a_cell_that_trained_vouches_for_lora_inferred():
    lora = memory_answer("14B", "h20", 4, 32768, sp=4, lora_rank=32)
    assert lora.tables is not None and (lora.tables.trains, lora.tables.evidence) == (True, "inferred")
    full = memory_answer("14B", "h20", 4, 32768, sp=4)
    assert full.tables is not None and (full.tables.trains, full.tables.evidence) == (True, "documented")


def test_solve_memory_cli_exit_codes_and_the_states_line(cli, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("COLUMNS", "400")
    asked = ("memory", "--model", "14B", "--gpu", "h20", "--gpus", "4", "--len", "64k", "--sp", "4", "--env")
    status, out, err = cli(*asked, "--lora-rank", "32")
    assert (status, err) == (0, "")
    assert "Env + SP=4, LoRA rank 32, 65536 tokens" in out
    assert ("states with LoRA rank 32: the frozen base's fp32 weights (4 bytes per parameter) and 128,450,560 "
            "adapter parameters on every linear layer but the output projection (16 bytes each: fp32 weights, "
            "gradients and Adam's two moments), sharded over the 4 GPUs;") in out
    assert "fits (estimated): 20.04 GiB to spare" in out
    assert cli(*asked)[0] == 1 and cli(*asked, "--lora-rank", "0")[0] == 1
    status, out, err = cli(*asked, "--lora-rank", "32", "--json")
    assert status == 0 and json.loads(out)["lora_parameters"] == 128_450_560
    for bad in ("-1", "65537", "r32"):
        status, out, err = cli(*asked, "--lora-rank", bad)
        assert (status, out) == (2, "") and len(err.splitlines()) == 2 and "Traceback" not in err
        assert "argument --lora-rank:" in err and "0 to 65536" in err
    status, _, err = cli(*asked, "--lora-rank", "8", "--lora-rank", "16")
    assert status == 2 and "--lora-rank: given twice" in err


def test_the_planner_plans_lora_without_offload():
    full, = plan("14B", gpu="h20", budget_gpus=4, max_model_len=65536, exact=True)
    lora, = plan("14B", gpu="h20", budget_gpus=4, max_model_len=65536, exact=True, lora_rank=32)
    assert full.best is not None and lora.best is not None
    assert (full.best.setting.label, round(full.best.cost, 4), full.best.evidence) == (
        "Env + Offload + SP=4", 0.6565, "documented")
    assert (lora.best.setting.label, round(lora.best.cost, 4), lora.best.evidence) == (
        "Env + SP=4", 0.3282, "estimated")
    assert (lora.lora_rank, lora.best.lora_rank, full.lora_rank) == (32, 32, 0)
    assert round(lora.best.memory_gb, 2) == 67.81
    # The tables alone: the full fine-tuning cell vouches for LoRA, inferred, and says so.
    tables, = plan("14B", gpu="h20", budget_gpus=4, max_model_len=32768, exact=True, lora_rank=32, estimate="never")
    assert tables.best is not None and (tables.best.setting.label, tables.best.evidence) == ("SP=4", "inferred")
    assert tables.best.evidence_text("H20-96GB") == (
        "inferred: the H20-96GB table for 4 GPUs says 'SP=4' at 32768 for full fine-tuning, which holds more than "
        "this LoRA run (rank 32), and this plan runs that same setting")


def _counted(text: str, version: str | None = None) -> tuple[int, list[str]]:
    config = read_trinity_config(HEAD + text, "trinity.yaml", {}, version)
    return config.lora_rank, [words for words, code in zip(config.notes, config.note_codes, strict=True)
                              if code is ConfigProblemCode.LORA_COUNTED_AS_FULL]


@pytest.mark.parametrize(("text", "version", "rank", "why"), [
    (MODEL % ", lora_configs: [{lora_rank: 64}]", None, 64, None),
    (MODEL % ", lora_configs: [{lora_alpha: 16}]", "0.6", 32, None),  # LoRAConfig's default rank
    (MODEL % ", lora_configs: [{lora_rank: 16, path: /ckpt/adapter}]", None, 0,
     "it loads an adapter, whose rank is the adapter's own"),
    (MODEL % ", lora_configs: [{lora_rank: 16, target_modules: '.*_proj|lm_head'}]", None, 0,
     ("its target_modules '.*_proj|lm_head' matches lm_head, which all-linear leaves out and rft-solver does not "
      "count")),
    (MODEL % "" + ROLE_MODEL % "lora_rank: 8", "0.5", 8, None),
    (MODEL % "" + ROLE_MODEL % "lora_rank: 8", None, 0,
     "Trinity 0.6 on verl 0.8 or later ignores lora_rank and trains every parameter"),
    (MODEL % "" + ROLE_MODEL % "lora_adapter_path: /ckpt/adapter", "0.5", 0,
     "it loads an adapter, whose rank is the adapter's own"),
    (MODEL % "", None, 0, ""),
])
def test_a_configs_lora_rank_and_its_line(text: str, version: str | None, rank: int, why: str | None):
    counted, lines = _counted(text, version)
    assert counted == rank
    if why == "":  # no LoRA: no line
        assert lines == []
    elif why is None:
        assert len(lines) == 1 and f"the verdict and the plans count LoRA rank {rank}'s states" in lines[0]
    else:
        assert len(lines) == 1 and f"but the verdict and the plans count full fine-tuning's, as the tables measured " \
            f"({why}): a LoRA run needs less memory than shown" in lines[0]


def test_from_config_with_lora_and_without(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("COLUMNS", "400")
    with_lora, without = tmp_path / "lora.yaml", tmp_path / "full.yaml"
    with_lora.write_text(HEAD + MODEL % ", lora_configs: [{lora_rank: 32}]" + SP, encoding="utf-8")
    without.write_text(HEAD + MODEL % "" + SP, encoding="utf-8")
    status, out, err = cli("--from-config", str(with_lora), "--gpu", "h20", "--json")
    assert (status, err) == (0, "")
    answer = json.loads(out)[0]
    best = answer["plans"][0]
    assert (answer["lora_rank"], best["env"], best["offload"], best["sp"]) == (32, True, False, 4)
    status, out, err = cli("--from-config", str(without), "--gpu", "h20", "--json")
    answer = json.loads(out)[0]
    assert (status, answer["lora_rank"], answer["plans"][0]["offload"]) == (0, 0, True)
    # --lora-rank 0 plans the LoRA config as full fine-tuning; the text names the states counted.
    status, out, err = cli("--from-config", str(with_lora), "--gpu", "h20", "--lora-rank", "0", "--json")
    assert (status, json.loads(out)[0]["plans"][0]["offload"]) == (0, True)
    status, out, err = cli("--from-config", str(with_lora), "--gpu", "h20")
    assert status == 0 and "(memory model; LoRA rank 32's states)" in out


def test_check_exit_codes_and_the_check_command(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")  # the config's Env + SP=4
    yarn = ", rope_scaling: {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960}"
    with_lora, without = tmp_path / "lora.yaml", tmp_path / "full.yaml"
    with_lora.write_text(HEAD + MODEL % (yarn + ", lora_configs: [{lora_rank: 32}]") + SP, encoding="utf-8")
    without.write_text(HEAD + MODEL % yarn + SP, encoding="utf-8")
    assert cli("--from-config", str(with_lora), "--gpu", "h20", "--check")[0] == 0
    assert cli("--from-config", str(without), "--gpu", "h20", "--check")[0] == 1  # the table's cell at 40960 says OOM
    assert cli("--from-config", str(without), "--gpu", "h20", "--check", "--lora-rank", "32")[0] == 0
    written = tmp_path / "written.yaml"
    assert cli("--from-config", str(without), "--gpu", "h20", "--lora-rank", "32", "--write", str(written))[0] == 0
    assert f"solve --from-config {written} --check --gpu H20-96GB --lora-rank 32\n" in written.read_text("utf-8")


def test_solve_memory_sends_a_lora_run_to_the_planner_with_its_rank():
    answer = memory_answer("14B", "h20", 4, 131072, sp=4, env=True, lora_rank=32)
    assert not answer.trains
    assert memory_text(answer).splitlines()[-1] == (
        '  solver.plan("Qwen3-14B", gpu="H20-96GB", budget_gpus=4, max_model_len=131072, lora_rank=32)')


def test_estimate_alone_cites_no_out_of_memory_cell_for_lora():
    # Env + SP=4 estimated alone: the 4-GPU table's cell at 40960 says it ran out of memory with full fine-tuning.
    full, = plan("14B", gpu="h20", budget_gpus=4, max_model_len=65536, exact=True, estimate="only", sp=4, offload=False)
    lora, = plan("14B", gpu="h20", budget_gpus=4, max_model_len=65536, exact=True, estimate="only", sp=4, offload=False,
                 lora_rank=32)
    assert full.best is None  # the memory model predicts no fit for full fine-tuning without Offload
    assert lora.best is not None and lora.best.setting.label == "Env + SP=4" and lora.tables is None


def test_a_lora_run_counts_no_reference_model_and_refuses_one():
    """Trinity takes the actor without its adapter as the reference with LoRA (both releases): none counted, and
    one said to be built is refused (session 74: it was counted as told)."""
    asked = {"gpu": "h20", "budget_gpus": 4, "max_model_len": 32768, "exact": True, "host_ram_gb": 1024.0}
    full, = plan("8B", **asked)
    lora, = plan("8B", **asked, lora_rank=32)
    assert full.best is not None and lora.best is not None
    assert (full.reference_model, lora.reference_model) == (True, False)
    with pytest.raises(QueryError, match=r"^reference_model=True with lora_rank=32: no Trinity release builds"):
        plan("8B", **asked, lora_rank=32, reference_model=True)


def test_the_command_with_lora_rank_counts_no_reference_model(cli):
    def counted(*flags: str) -> bool:
        code, out, err = cli("--model", "8B", "--gpu", "h20", "--gpus", "4", "--len", "32768", "--host-ram", "1024",
                             "--json", *flags)
        assert (code, err) == (0, "")
        return bool(json.loads(out)[0]["reference_model"])
    assert (counted(), counted("--lora-rank", "32")) == (True, False)
    code, out, err = cli("--model", "8B", "--gpu", "h20", "--gpus", "4", "--lora-rank", "32", "--reference")
    assert (code, out, err.splitlines()[-1][:62]) == (
        2, "", "solve: error: --reference with --lora-rank 32: no Trinity rele")


def test_model_config_with_an_adapter_beside_it_names_the_lora_flags_that_count_it(cli, tmp_path: Path):
    # s90 (persona): --model-config reads the model's shape alone; the LoRA adapter beside its config.json was
    # ignored silently (full fine-tuning counted). A note names --lora-rank and --lora-targets with its values, ready
    # to paste, until they are given; a regex of target_modules is given as it is, quoted for the shell.
    data = Path(__file__).parent / "data" / "hf-configs"
    (tmp_path / "config.json").write_bytes((data / "Qwen3-8B.json").read_bytes())
    adapter = json.loads((data / "Qwen3-8B-lora" / "adapter_config.json").read_text(encoding="utf-8"))
    (tmp_path / "adapter_config.json").write_text(json.dumps(adapter), encoding="utf-8")
    question = ("memory", "--model-config", str(tmp_path), "--gpu", "h100", "--gpus", "8", "--len", "8k")
    names = "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj"
    note = (f"solve memory: note: --model-config {tmp_path}: the LoRA adapter beside its config.json "
            f"(adapter_config.json: r 16, target_modules {names}) is not read, only the model's shape: to count it, "
            f"give --lora-rank 16 --lora-targets {names}\n")
    assert note in cli(*question)[2]
    assert note in cli(*question, "--lora-rank", "16")[2]  # all-linear's modules are not the adapter's
    assert "adapter_config.json" not in cli(*question, "--lora-rank", "16", "--lora-targets", names)[2]
    (tmp_path / "adapter_config.json").write_text(json.dumps({**adapter, "target_modules": ".*(q|v)_proj"}),
                                                  encoding="utf-8")
    assert "give --lora-rank 16 --lora-targets '.*(q|v)_proj'\n" in cli(*question)[2]
    # mutants53: --from-config counts the config's own LoRA, if any, so no note; nor for a rank YAML or JSON reads as
    # a boolean (r: true), which is no rank
    config = tmp_path / "trinity.yaml"
    config.write_text(json.dumps({"model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 8192}}), encoding="utf-8")
    code, _, err = cli("--from-config", str(config), "--model-config", str(tmp_path), "--gpu", "h100")
    assert (code, "adapter_config.json" in err) == (0, False), err
    (tmp_path / "adapter_config.json").write_text(json.dumps({**adapter, "r": True}), encoding="utf-8")
    assert "adapter_config.json" not in cli(*question)[2]


def test_a_cluster_job_s_model_config_with_an_adapter_beside_it_names_the_job_keys_that_count_it(cli, tmp_path: Path):
    # fleetunit91: solve cluster's jobs given by model_config got --model-config's other notes, not this one; it names
    # the jobs whose lora_rank and lora_targets leave the adapter out, and those keys as the file writes them.
    data = Path(__file__).parent / "data" / "hf-configs"
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "config.json").write_bytes((data / "Qwen3-8B.json").read_bytes())
    adapter = json.loads((data / "Qwen3-8B-lora" / "adapter_config.json").read_text(encoding="utf-8"))
    (tmp_path / "ckpt" / "adapter_config.json").write_text(json.dumps({**adapter, "target_modules": ".*(q|v)_proj"}),
                                                           encoding="utf-8")
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools: [{name: h, gpu: h100, nodes: 3, gpus_per_node: 1}]\njobs:\n"
                     "  - {name: a, model_config: ckpt, max_model_len: 4096, rollout_gpus: 0}\n"
                     "  - {name: b, model_config: ckpt, max_model_len: 4096, rollout_gpus: 0, lora_rank: 8}\n"
                     "  - {name: c, model_config: ckpt, max_model_len: 4096, rollout_gpus: 0, lora_rank: 16, "
                     "lora_targets: '.*(q|v)_proj'}\n", encoding="utf-8")
    _, _, err = cli("cluster", str(fleet), "--json")
    assert (f"solve cluster: note: model_config {tmp_path / 'ckpt' / 'config.json'} (jobs a, b): the LoRA adapter "
            "beside its config.json (adapter_config.json: r 16, target_modules .*(q|v)_proj) is not read, only the "
            "model's shape: to count it, give each job lora_rank: 16, lora_targets: .*(q|v)_proj\n") in err
    assert err.count("adapter_config.json") == 1  # none for c, which gives them
