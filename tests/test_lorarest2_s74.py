"""LoRA's loose ends (session 74): `solve cluster`'s unplaced jobs say what each trains; a LoRA run said to build a
reference model is refused (no Trinity release builds one); the rollout's vLLM LoRA slots counted where LoRA is on."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from solver.api import estimate_memory, fragment_engines, plan
from solver.memory import GIB, VLLM_LORA_TOKEN_BYTES, rollout_engine, vllm_lora_bytes, vllm_lora_widths
from solver.query import QueryError
from solver.tables import load_catalog

CATALOG = load_catalog()
QWEN3_8B = CATALOG.model("Qwen3-8B")
NO_REFERENCE = ("no Trinity release builds a reference model for a LoRA run (the actor with its adapter disabled "
                "gives the ref's log-probs)")

# A node of 8 H100s with 60 GiB of host memory holds one of these (each needs about 30.7 GiB on its node).
FLEET = """pools:
  - {name: a, gpu: H100, nodes: 1, gpus_per_node: 8, host_ram_gb: 60}
jobs:
  - {name: lora, model: Qwen3-8B, max_model_len: 8192, lora_rank: 16}
  - {name: lora-b, model: Qwen3-8B, max_model_len: 8192, lora_rank: 32}
  - {name: full, model: Qwen3-8B, max_model_len: 8192, reference_model: false}
"""


COUNTED_FULL = ("with model.lora_configs refused (lora-configs-refused says why), the verdict and the plans count "
                "full fine-tuning, which holds more than a LoRA run: fix model.lora_configs and plan again to count "
                "the LoRA run, or remove it to train every parameter")
"""The line that says what a config's verdict and plans count where Trinity refuses its LoRA configs (s80)."""


def test_the_unplaced_jobs_table_says_what_each_job_trains(tmp_path: Path,
                                                           cli: Callable[..., tuple[int, str, str]]) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET, encoding="utf-8")
    code, out, _ = cli("cluster", str(fleet))
    assert code == 1  # not every job placed
    lines = out.splitlines()
    start = lines.index("unplaced jobs: 2 of 3")
    assert " ".join(lines[start + 2].split()).startswith("┃ job ┃ training ┃ reason")
    rows = [line.split("│") for line in lines[start:] if line.startswith("│") and line.split("│")[1].strip()]
    # a tie of priority goes to the jobs earlier in the file (s82): lora placed, lora-b and full left out
    assert [(row[1].strip(), row[2].strip()) for row in rows] == [("lora-b", "LoRA 32, no ref"),
                                                                  ("full", "full, no ref")]
    assert " ".join(" ".join(lines[-2:]).split()) == (
        "training: full fine-tuning, or LoRA of the job's lora_rank; ref or no ref: whether its run builds a "
        "reference model (the job's reference_model; absent, none with LoRA), whose pinned shards the host memory "
        "need counts")
    code, out, _ = cli("cluster", str(fleet), "--json")
    unplaced = [(job["job"], job["lora_rank"], job["reference_model"]) for job in json.loads(out)["unplaced"]]
    assert (code, unplaced) == (1, [("lora-b", 32, False), ("full", 0, False)])


def test_unplaced_full_fine_tuning_with_its_reference_model_adds_no_column(
        tmp_path: Path, cli: Callable[..., tuple[int, str, str]]) -> None:
    fleet = tmp_path / "fleet.yaml"
    # Full fine-tuning with its reference model needs 71.0 GiB of host memory on a node of 60: none placed.
    fleet.write_text(FLEET.replace(", lora_rank: 16", "").replace(", lora_rank: 32", "")
                     .replace(", reference_model: false", ""), encoding="utf-8")
    code, out, _ = cli("cluster", str(fleet))
    unplaced = out[out.index("unplaced jobs"):]
    assert code == 1 and "training" not in unplaced and "┃ jobs ┃ reason" in " ".join(unplaced.split())
    code, out, _ = cli("cluster", str(fleet), "--json")
    # Full fine-tuning with its reference model, the default, leaves both keys out of the JSON.
    assert [sorted({"lora_rank", "reference_model"} & set(job)) for job in json.loads(out)["unplaced"]] == [[]] * 3


def test_a_lora_job_with_a_reference_model_is_refused(tmp_path: Path,
                                                      cli: Callable[..., tuple[int, str, str]]) -> None:
    # Trinity 0.6.0's trainer sets ref_in_actor for a LoRA rank above 0 (trainer/verl/trainer.py:250-258), as verl
    # 0.9.1's does (ray_trainer.py:360) and Trinity 0.6's legacy trainer, which initialises no ref worker then
    # (verl_legacy/verl_trainer.py:412): the job counted a reference model no run builds.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET.replace("lora_rank: 16}", "lora_rank: 16, reference_model: true}"), encoding="utf-8")
    code, out, err = cli("cluster", str(fleet))
    assert (code, out, err) == (2, "", (f"solve cluster: error: {fleet}: line 4: job lora: reference_model true with "
                                        f"lora_rank 16: {NO_REFERENCE}; give reference_model false, or leave it out\n"))
    fleet.write_text(FLEET.replace("lora_rank: 16}", "lora_rank: 16, reference_model: false}"), encoding="utf-8")
    assert cli("cluster", str(fleet))[0] == 1  # placed where it may be, not refused


@pytest.mark.parametrize("command", [["--gpus", "8", "--len", "8192"], ["memory", "--gpus", "8", "--len", "8192"],
                                     ["map", "--budgets", "8"]])
def test_the_commands_refuse_reference_with_lora_rank(cli: Callable[..., tuple[int, str, str]],
                                                      command: list[str]) -> None:
    name = "solve memory" if command[0] == "memory" else "solve map" if command[0] == "map" else "solve"
    code, out, err = cli(*command, "--model", "8B", "--gpu", "h100", "--lora-rank", "16", "--reference")
    assert (code, out, err.splitlines()[-1]) == (2, "", (f"{name}: error: --reference with --lora-rank 16: "
                                                         f"{NO_REFERENCE}; give --no-reference, or leave it out"))
    assert cli(*command, "--model", "8B", "--gpu", "h100", "--lora-rank", "16", "--no-reference")[0] == 0


def test_the_api_refuses_reference_model_with_lora_rank() -> None:
    words = f"^reference_model=True with lora_rank=8: {NO_REFERENCE}; give reference_model=False, or leave it out$"
    for call in (lambda: plan("Qwen3-8B", gpu="h100", budget_gpus=8, lora_rank=8, reference_model=True),
                 lambda: estimate_memory("Qwen3-8B", "h100", 8, 8192, lora_rank=8, reference_model=True)):
        with pytest.raises(QueryError, match=words.replace("(", r"\(").replace(")", r"\)")):
            call()


def _trinity_config(tmp_path: Path, model_keys: str, length: int = 38000) -> Path:
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\n"
                      f"model: {{model_path: Qwen/Qwen3-8B, max_model_len: {length}{model_keys}}}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1}}\n", encoding="utf-8")
    return config


# vLLM 0.19.1's LoRA layers of Qwen3-8B (hidden 4096, 32 query heads and 8 KV heads of 128, MLP 12288, 36 layers,
# vocabulary 151936, untied), (inputs + outputs) per GPU at tensor-parallel size 1:
#   embed_tokens 151936 + 4096, the logits processor 4096 + 151936:               312064
#   q_proj (4096 + 4096) x 36 = 294912; k_proj, v_proj (4096 + 1024) x 72 = 368640;
#   o_proj (4096 + 4096) x 36 = 294912; gate_proj, up_proj (4096 + 12288) x 72 = 1179648;
#   down_proj (12288 + 4096) x 36 = 589824:                                         2727936
WIDTHS_TP1 = 312064 + 2727936
# At size 4 a column-parallel layer keeps a quarter of its outputs, a row-parallel one a quarter of its inputs
# (the KV heads: 2 of 8 per GPU, 256 wide): q (4096 + 1024) x 36 = 184320, k, v (4096 + 256) x 72 = 313344,
# o (1024 + 4096) x 36 = 184320, gate, up (4096 + 3072) x 72 = 516096, down (3072 + 4096) x 36 = 258048.
WIDTHS_TP4 = 312064 + 184320 + 313344 + 184320 + 516096 + 258048
PUNICA = 56 * 2048  # 5 int64 and 2 x 2 int32 per batched token, 2048 tokens


def test_vllm_lora_slots_of_qwen3_8b_by_hand() -> None:
    assert sum((i + o) * n for i, o, n in vllm_lora_widths(QWEN3_8B, 1)) == WIDTHS_TP1 == 3_040_000
    assert sum((i + o) * n for i, o, n in vllm_lora_widths(QWEN3_8B, 4)) == WIDTHS_TP4 == 1_768_192
    assert VLLM_LORA_TOKEN_BYTES * 2048 == PUNICA
    assert vllm_lora_bytes(QWEN3_8B, 1, 16) == 16 * WIDTHS_TP1 * 2 + PUNICA == 97_394_688
    assert vllm_lora_bytes(QWEN3_8B, 4, 64) == 64 * WIDTHS_TP4 * 2 + PUNICA == 226_443_264
    assert vllm_lora_bytes(QWEN3_8B, 1, 16, value_bytes=4) == 16 * WIDTHS_TP1 * 4 + PUNICA
    # A tied output projection is the embeddings' own VocabParallelEmbedding: vLLM wraps it once more.
    tied = CATALOG.model("Qwen3-4B")
    assert vllm_lora_widths(tied, 1)[:2] == ((151936, 2560, 2), (2560, 151936, 1))


def test_the_rollout_engine_holds_the_lora_slots_only_with_lora() -> None:
    memory = CATALOG.gpu("RTX-4090-24GB").memory_gib
    without = rollout_engine(QWEN3_8B, memory, 1, 38000, largest=False)
    with_lora = rollout_engine(QWEN3_8B, memory, 1, 38000, largest=False, lora_rank=64)
    assert without.lora_gib is None and "lora_gib" not in without.model_dump(mode="json")
    assert with_lora.lora_gib == pytest.approx((64 * WIDTHS_TP1 * 2 + PUNICA) / GIB, rel=1e-12)  # 0.3625 GiB
    assert (without.holds, with_lora.holds) == (True, False)  # 20.48 GiB of 20.59, then 20.84
    assert with_lora.held_gib == pytest.approx(without.held_gib + with_lora.lora_gib, rel=1e-12)


def test_a_config_with_lora_configs_counts_the_rollout_s_lora_slots(
        tmp_path: Path, cli: Callable[..., tuple[int, str, str]]) -> None:
    # Qwen3-8B at 38000 tokens on a 4090 (20.6 GiB for vLLM): 15.3 GiB of weights and 5.2 GiB of KV cache load;
    # Trinity turns vLLM's LoRA on at the config's rank (config_validator.py:780-817 in 0.6.0), 64 here: 0.4 GiB more.
    def current(model_keys: str) -> dict[str, list[str]]:
        _, out, err = cli("--from-config", str(_trinity_config(tmp_path, model_keys)), "--gpu", "4090", "--json")
        assert err == ""
        return {key: json.loads(out)[0]["current"][key] for key in ("config_problems", "config_problem_codes")}

    assert "rollout-engine-memory-refused" not in current("")["config_problem_codes"]
    refused = current(", lora_configs: [{lora_rank: 64}]")
    assert refused["config_problem_codes"] == ["lora-counted-as-full", "rollout-engine-memory-refused"]
    assert refused["config_problems"][1] == (
        "explorer.rollout_model.tensor_parallel_size 1: Qwen3-8B's 16-bit weights (15.3 GiB), vLLM's LoRA slots (0.4 "
        "GiB) and one 38000-token sequence's KV cache (5.2 GiB) per GPU take more than what vLLM takes of one "
        "RTX-4090-24GB (20.6 GiB: Trinity's default gpu_memory_utilization 0.9 of its 24.0 GiB, less 1 GiB for the "
        "CUDA context), so the rollout's vLLM fails as it loads; set it to 4, the smallest size that suits the heads "
        "and holds them in half of that (3.8 + 0.2 + 1.3 GiB of 20.6), leaving the rest to sequences in flight, as "
        "rft-solver sizes a fragment's engines (each of explorer.rollout_model.engine_num's engines then takes 4 GPUs "
        "of the cluster)")


def test_enable_lora_alone_starts_the_engines_at_vllm_s_default_rank(
        tmp_path: Path, cli: Callable[..., tuple[int, str, str]]) -> None:
    # Without lora_configs, explorer.rollout_model.enable_lora reaches vLLM as it is: max_lora_rank 16, 0.09 GiB;
    # at 38800 tokens (20.585 GiB held of 20.589) that is what tips the engine over.
    config = _trinity_config(tmp_path, "", length=38800)
    text = config.read_text(encoding="utf-8")
    assert cli("--from-config", str(config), "--gpu", "4090", "--json")[1].count("rollout-engine-memory-refused") == 0
    config.write_text(text.replace("tensor_parallel_size: 1", "tensor_parallel_size: 1, enable_lora: true"),
                      encoding="utf-8")
    out = cli("--from-config", str(config), "--gpu", "4090", "--json")[1]
    [problem] = [words for words in json.loads(out)[0]["current"]["config_problems"] if "LoRA slots" in words]
    assert "vLLM's LoRA slots (0.1 GiB) and one 38800-token sequence's" in problem


def test_a_lora_plan_s_fragment_engines_hold_its_lora_slots() -> None:
    (full,) = plan("Qwen3-8B", gpu="h100", budget_gpus=8, rollout_gpus=2, max_model_len=8192)
    (lora,) = plan("Qwen3-8B", gpu="h100", budget_gpus=8, rollout_gpus=2, max_model_len=8192, lora_rank=16)
    full_engines, lora_engines = fragment_engines(full, CATALOG), fragment_engines(lora, CATALOG)
    assert full_engines is not None and lora_engines is not None
    assert full_engines.lora_gib is None
    assert lora_engines.lora_gib == pytest.approx(vllm_lora_bytes(QWEN3_8B, lora_engines.size, 16) / GIB, rel=1e-12)


@pytest.mark.parametrize(("targets", "kind"), [("[q_proj, v_proj]", "list"), ("{q_proj: 1}", "mapping")])
def test_target_modules_other_than_a_string_is_refused(tmp_path: Path, cli: Callable[..., tuple[int, str, str]],
                                                       targets: str, kind: str) -> None:
    # Trinity's LoRAConfig types target_modules a string (common/config.py:113 in 0.6.0, :112 in 0.5.2): OmegaConf
    # 2.3.0's merge in load_config raises "Cannot convert 'ListConfig' to string", so the config never loads, and
    # an adapter over the modules listed is never trained. (Counted as full fine-tuning before session 74.)
    config = _trinity_config(tmp_path, f", lora_configs: [{{lora_rank: 16, target_modules: {targets}}}]", 8192)
    _, out, err = cli("--from-config", str(config), "--gpu", "h100", "--json")
    current = json.loads(out)[0]["current"]
    brief = "['q_proj', 'v_proj']" if kind == "list" else "{'q_proj': 1}"
    assert (err, current["refused"], current["config_problem_codes"]) == ("", True, ["lora-configs-refused",
                                                                                     "lora-counted-as-full"])
    assert current["config_problems"] == [(
        f"model.lora_configs[0].target_modules {brief} is a {kind}: Trinity's LoRA config takes a string, so its typed "
        "config refuses it when it loads the config: give all-linear, or one regular expression that peft matches "
        r"whole module names with (.*\.(q_proj|v_proj))"), COUNTED_FULL]
    # Refused, it turns the rollout's LoRA on nowhere: no slots are counted for it.
    assert "LoRA slots" not in out


def test_a_target_modules_string_other_than_all_linear_is_still_counted_as_full_fine_tuning(
        tmp_path: Path, cli: Callable[..., tuple[int, str, str]]) -> None:
    # peft matches a string whole against each module's full name (re.fullmatch): a regular expression that takes
    # the output projection (or the embeddings) keeps the states counted full fine-tuning's (lora_rank 0); one that
    # takes decoder linears alone is counted as all-linear's (test_lorarest3_s75).
    targets = r"'.*\.(q_proj|v_proj)|lm_head'"
    config = _trinity_config(tmp_path, f", lora_configs: [{{lora_rank: 16, target_modules: {targets}}}]", 8192)
    _, out, err = cli("--from-config", str(config), "--gpu", "h100", "--json")
    [answer] = json.loads(out)
    assert (err, answer["lora_rank"], answer["current"]["config_problem_codes"]) == (
        "", 0, ["lora-counted-as-full", "lora-targets-saved-split"])  # a regex Trinity saves split: test_lorarest4_s76


def test_reference_with_a_config_s_lora_is_refused_naming_the_config(
        tmp_path: Path, cli: Callable[..., tuple[int, str, str]]) -> None:
    config = _trinity_config(tmp_path, ", lora_configs: [{lora_rank: 16}]", 8192)
    code, out, err = cli("--from-config", str(config), "--gpu", "h100", "--reference")
    assert (code, out, err.splitlines()[-1]) == (2, "", (
        f"solve: error: --reference with the config's LoRA (rank 16): {NO_REFERENCE}; give --no-reference, or leave "
        "it out"))
    assert cli("--from-config", str(config), "--gpu", "h100", "--reference", "--lora-rank", "8")[2].splitlines()[-1] \
        .startswith("solve: error: --reference with --lora-rank 8: no Trinity release")
    # Without --reference the config's LoRA counts none, and with a rank of its own, a config without LoRA neither
    # (it counted the config's reference model before session 74).
    for model_keys, rank in ((", lora_configs: [{lora_rank: 16}]", ()), ("", ("--lora-rank", "8"))):
        config = _trinity_config(tmp_path, model_keys, 8192)
        out = cli("--from-config", str(config), "--gpu", "h100", *rank, "--json")[1]
        assert json.loads(out)[0]["reference_model"] is False
    assert json.loads(cli("--from-config", str(config), "--gpu", "h100", "--json")[1])[0]["reference_model"] is True
