"""Small slips the s68 reviews left (session 69): a bare number for --gpu is guessed as a memory size; a LoRA config
at a rank not above 0 is read as Trinity, verl and peft do, and the LoRA line says how much less it needs; the
oc.decode hint in a LoRA rank quotes the whole number; a variable set to its default is not carried by the check
command; --write on a config all in flow style says what its note would have held; estimate_memory's sp=None says
why it is refused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.api import plan
from solver.query import ConfigProblemCode
from solver.tables import QueryError, load_catalog
from solver.trinity import (
    check_environment,
    load_config_mapping,
    patched_trinity_config,
    read_trinity_config,
    trinity_config_problems,
)

Cli = Callable[..., tuple[int, str, str]]
CATALOG = load_catalog()


@pytest.mark.parametrize(("bare", "guess"), [
    ("96", " (did you mean H20-96GB or GH200-96GB?)"),
    ("80", " (did you mean A100-80GB, A800-80GB, H100-80GB or H800-80GB?)"),
    ("141", " (did you mean H200-141GB?)"),
])
def test_a_bare_number_for_gpu_gets_the_guess_of_that_memory_size(cli: Cli, bare: str, guess: str):
    status, out, err = cli("--gpu", bare, "--model", "8B", "--len", "8k")
    _, _, sized = cli("--gpu", f"{bare}gb", "--model", "8B", "--len", "8k")
    assert (status, out, err.count("\n")) == (2, "", 1)
    assert err.startswith(f"solve: error: unknown GPU '{bare}'{guess}; accepted: A100-40GB/80GB, ")
    assert err == sized.replace(f"'{bare}gb'", f"'{bare}'")  # the same guess and list as its gb form
    assert CATALOG.meant_gpu_type(bare) == guess.removeprefix(" (did you mean ").removesuffix("?)")


def test_a_bare_number_that_is_an_alias_is_its_gpu_and_one_no_gpu_has_gets_no_size_guess(cli: Cli):
    status, out, _ = cli("--gpu", "4090", "--model", "0.6B", "--len", "4k", "--json")
    assert (status, '"gpu": "RTX-4090-24GB"' in out) == (0, True)
    status, _, err = cli("--gpu", "100", "--model", "8B", "--len", "8k")  # no catalogue GPU has 100 GB
    assert (status, err.startswith("solve: error: unknown GPU '100'; accepted: ")) == (2, True)


HEAD = ("algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 2}}\n")
MODEL = "model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768%s}\n"
ROLE_MODEL = "trainer: {trainer_config: {actor_rollout_ref: {model: {lora_rank: %s}}}}\n"
COUNTED = ("the trainer holds gradients and optimizer states for the adapter alone: the verdict and the plans count "
           "LoRA rank {}'s states (the frozen base's fp32 weights and the adapter's on every linear layer but the "
           "output projection, unless --lora-rank gives another), and the tables, which measured full fine-tuning, "
           "vouch for it by inference and refute nothing")
"""LoRA's line where its states are counted (s72), at a rank."""
AS_FULL = ("the trainer holds gradients and optimizer states for the adapter alone, but the verdict and the plans "
           "count full fine-tuning's, as the tables measured ({}): a LoRA run needs less memory than shown "
           "(conservative: without Offload, LoRA leaves each GPU's shard about 4 of the 16 bytes per parameter "
           "counted; solve --lora-rank RANK counts a new adapter's)")
"""LoRA's line where full fine-tuning's states are counted (s72), saying why."""
ADAPTER = "it loads an adapter, whose rank is the adapter's own"
DUMMY = ("model.lora_configs[0].lora_rank {rank} without a path: Trinity makes a dummy adapter of that rank, which "
         "peft refuses (\"`r` should be a positive integer value\") before the trainer starts: give a rank above 0 "
         "for LoRA, or drop model.lora_configs for no LoRA")


def _lines(text: str, version: str | None = None) -> list[tuple[str, str]]:
    """The LoRA lines of the config `text` (after `HEAD`): (code, words)."""
    config = read_trinity_config(HEAD + text, "trinity.yaml", {}, version)
    return [(code.value, words) for words, code in zip(config.notes, config.note_codes, strict=True)
            if "lora" in code.value]


@pytest.mark.parametrize(("rank", "shown"), [("0", "0"), ("'-1'", "-1"), ("' 0'", "0")])
@pytest.mark.parametrize("version", [None, "0.5"])
def test_a_lora_config_without_a_path_at_a_rank_not_above_0_is_refused(rank: str, shown: str, version: str | None):
    # Before: counted as LoRA (lora-counted-as-full). Trinity's validator makes a dummy adapter of that rank
    # (create_dummy_lora), and peft's LoraLayer.update_layer raises for r <= 0: the config never trains.
    for configs in (f"[{{lora_rank: {rank}}}]", f"[{{lora_rank: {rank}, path: null}}]"):
        assert _lines(MODEL % f", lora_configs: {configs}", version) == [
            (ConfigProblemCode.LORA_CONFIGS_REFUSED.value, DUMMY.format(rank=shown))]


def test_a_lora_config_with_a_path_at_rank_0_is_lora_only_with_verl_before_0_8():
    # verl before 0.8 (Trinity 0.5's worker, 0.6's verl_legacy) turns LoRA on for any adapter path; verl 0.8's
    # engine only at a rank above 0, so Trinity 0.6 on it trains every parameter.
    text = MODEL % ", lora_configs: [{lora_rank: 0, path: adapters/a}]"
    from_08 = "Trinity 0.6 on verl 0.8 or later loads no adapter at a lora_rank not above 0 and trains every parameter"
    # Whatever the trainer does, the rollout's vLLM is given max_lora_rank 0, which it refuses (test_lorarest3_s75).
    vllm = [code for code, _ in _lines(text)[1:]]
    assert _lines(text)[:1] == [("lora-counted-as-full", (
        f"with verl before 0.8 LoRA (model.lora_configs) {AS_FULL.format(from_08)}"))]
    assert _lines(text, "0.5")[:1] == [
        ("lora-counted-as-full", f"with LoRA (model.lora_configs) {AS_FULL.format(ADAPTER)}")]
    assert vllm == [code for code, _ in _lines(text, "0.5")[1:]] == ["lora-rank-vllm-refused"]
    assert _lines(MODEL % ", lora_configs: [{path: adapters/a}]") == [  # the default rank, 32: every release
        ("lora-counted-as-full", f"with LoRA (model.lora_configs) {AS_FULL.format(ADAPTER)}")]


@pytest.mark.parametrize("version", [None, "0.5"])
def test_a_lora_config_rank_that_is_no_number_is_said_to_be_none_not_a_rank_not_above_0(version: str | None):
    # Before: "(Trinity 0.6 on verl 0.8 or later loads no adapter at a lora_rank not above 0 ...)", with 0.5 "its rank
    # is no whole number above 0": a rank no release reads (LoRAConfig.lora_rank: int refuses it), not one below 1.
    for rank, shown in (("sixteen", "'sixteen'"), ("8.5", "8.5")):
        lines = _lines(MODEL % f", lora_configs: [{{lora_rank: {rank}}}]", version)
        assert lines[0] == ("lora-counted-as-full", (
            f"with LoRA (model.lora_configs) {AS_FULL.format(f'its lora_rank {shown} is not a whole number')}"))
        assert [code for code, _ in lines[1:]] == ["lora-rank-not-a-number-refused"]


@pytest.mark.parametrize(("rank", "lora"), [("0", False), ("'0'", False), ("'+8'", True), ("8", True)])
def test_a_roles_lora_rank_turns_lora_on_above_0_as_omegaconf_reads_it(rank: str, lora: bool):
    lines = _lines(MODEL % "" + ROLE_MODEL % rank, "0.5")
    key = "trainer.trainer_config.actor_rollout_ref.model.lora_rank"
    assert lines == ([("lora-counted-as-full", f"with LoRA ({key}) {COUNTED.format(8)}")] if lora else [])


def test_the_oc_decode_hint_in_a_lora_rank_quotes_the_whole_number_and_following_it_is_taken():
    def said(rank: str) -> list[str]:
        """The codes of what the config's reading and its checks say of it with Trinity 0.5, in order."""
        text = HEAD + MODEL % "" + ROLE_MODEL % rank
        config = read_trinity_config(text, "trinity.yaml", {}, "0.5")
        checks = trinity_config_problems(load_config_mapping(text, "trinity.yaml"), CATALOG.model("8B"), 4,
                                         version="0.5")
        return [code.value for code in config.note_codes] + [f"{problem.code.value}: {problem.words}"
                                                             for problem in checks]

    assert said("'${oc.decode:8.0}'") == [(
        "unresolved-value-refused: trainer.trainer_config.actor_rollout_ref.model.lora_rank: '${oc.decode:8.0}': "
        "OmegaConf's oc.decode takes text or null, not 8.0 (quote it: \"8\"); Trinity 0.5 refuses the config as it "
        "loads it (OmegaConf resolves each value then)")]
    assert said("'${oc.decode:\"8\"}'") == ["lora-counted-as-full"]  # the hint followed: taken
    assert said("'${oc.decode:\"8.0\"}'") == ["lora-rank-not-a-number-refused"]  # the old hint: a float, refused


DEFAULTED = ("model:\n  model_path: ${oc.env:MODEL_PATH,Qwen/Qwen3-8B}\n  max_model_len: 32768\n"
             "cluster:\n  node_num: 1\n  gpu_per_node: ${oc.decode:${oc.env:NGPUS,8}}\n"
             "explorer:\n  rollout_model: {engine_num: 2, tensor_parallel_size: 2}\n")
"""A config whose model and GPUs per node come from variables with defaults."""


@pytest.mark.parametrize(("environ", "carried"), [
    ({"MODEL_PATH": "Qwen/Qwen3-8B", "NGPUS": "8"}, ()),  # each its default: a shell without them reads the same
    ({"MODEL_PATH": "/data/Qwen3-8B", "NGPUS": "8"}, (("MODEL_PATH", "/data/Qwen3-8B"),)),
    ({"MODEL_PATH": "Qwen/Qwen3-8B", "NGPUS": "08"}, (("NGPUS", "08"),)),  # another text, though the same number
])
def test_a_variable_set_to_its_default_is_not_carried_by_the_check_command(
        environ: dict[str, str], carried: tuple[tuple[str, str], ...]):
    config = read_trinity_config(DEFAULTED, "trinity.yaml", environ)
    assert check_environment(config, load_config_mapping(DEFAULTED, "trinity.yaml"), CATALOG.model("8B"), 4,
                             environ=environ, max_model_len=32768) == carried


def test_a_variable_read_once_with_its_default_and_once_without_one_is_carried():
    text = DEFAULTED.replace("max_model_len: 32768", "max_model_len: 32768\n  critic_model_path: ${oc.env:MODEL_PATH}")
    environ = {"MODEL_PATH": "Qwen/Qwen3-8B"}
    config = read_trinity_config(text, "trinity.yaml", environ)
    assert check_environment(config, load_config_mapping(text, "trinity.yaml"), CATALOG.model("8B"), 4,
                             environ=environ, max_model_len=32768) == (("MODEL_PATH", "Qwen/Qwen3-8B"),)


FLOW = ("{model: {model_path: Qwen/Qwen3-4B, max_model_len: 160000}, cluster: {node_num: 1, gpu_per_node: 8}, "
        "explorer: {rollout_model: {engine_num: 4}}}\n")
"""A config all in flow style, past Qwen3-4B's validated 131072 tokens."""
PAST = "max_model_len past the validated 131072: check the model's quality at this length, or plan --len 131072"


def test_write_on_a_config_all_in_flow_style_says_what_its_note_would_have_held(cli: Cli, tmp_path: Path):
    config, out = tmp_path / "in.yaml", tmp_path / "out.yaml"
    config.write_text(FLOW, encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h200", "--write", str(out))
    assert (status, "#" in out.read_text(encoding="utf-8")) == (0, False)
    [note] = [line for line in err.splitlines() if "flow style" in line]
    assert note.startswith(f"solve: note: {out}: a config in flow style ({{...}}) holds no comment line, so --write "
                           "set the plan's keys in it without the note a block config gets above model.max_model_len: "
                           "evidence: estimated: the memory model predicts ")
    assert note.endswith(f"; {PAST}; check the file with: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve "
                         f"--from-config {out} --check --gpu H200-141GB")


def test_patched_config_gives_the_note_a_flow_style_config_could_not_hold():
    # on the 4 trainer GPUs FLOW's cluster gives (8, less 4 engines), as --write plans
    [answer] = plan("4B", gpu="h200", max_model_len=160000, budget_gpus=4, exact=True)
    model, best = CATALOG.model("4B"), answer.plans[0]
    patched = patched_trinity_config(FLOW, best, model, gpu=answer.gpu)
    past = PAST.replace("--len 131072", "max_model_len=131072")  # the API's words
    assert (patched.unwritten_check, len(patched.unwritten_note), patched.unwritten_note[-1]) == (None, 2, past)
    assert patched.unwritten_note[0].startswith("evidence: estimated: the memory model predicts ")
    block = patched_trinity_config(FLOW[1:-2].replace("}, ", "}\n") + "\n", best, model, gpu=answer.gpu)  # block style
    assert (block.unwritten_note, "# max_model_len past the validated 131072: check" in block.text) == ((), True)


@pytest.mark.parametrize("function", [solver.estimate_memory, solver.memory_answer])
def test_estimate_memory_refuses_sp_none_saying_why_and_what_to_pass(function: Callable[..., object]):
    with pytest.raises(QueryError) as raised:
        function("8B", "h100", 4, 8192, sp=None)
    assert str(raised.value) == ("sp must be a whole number, got None: the memory estimate is of one setting, its SP "
                                 "given (1 for none); plan(..., sp=None) picks the SP")
