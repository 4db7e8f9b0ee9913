"""s77 review77c: a review of release05a, release05b, smallslips25, docstruth13 and coverage17. What it fixed:
``solver.trinity_config(model_config=)`` wrote a check command naming a file that is not there (or a folder without a
config.json, or another model's), which the command then refuses (or judges for that model): it now reads the file as
``--model-config`` does, raising `load_model_config`'s one-line `TableError`, and a `QueryError` for another shape;
`expert_layout_words` said a Llama 4's or GraniteMoE's LoRA adapter under Trinity 0.5.1 was counted as "the larger"
layout's, where 0.5.1 has one layout alone (its 3-D experts held whole); ``solve map --trinity-version ' 0.5'`` titled
its map ``Trinity  0.5`` (the blank as given)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.memory import expert_layout_words
from solver.tables import QueryError, TableError

Cli = Callable[..., tuple[int, str, str]]
CONFIGS = Path(__file__).parent / "data" / "hf-configs"
SMALL_MOE = {"hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2,
             "vocab_size": 32000, "max_position_embeddings": 4096, "tie_word_embeddings": False, "num_experts": 8,
             "num_local_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 512, "intermediate_size": 512}
"""A made-up mixture of experts (as test_lorasep_s77's): 4 layers of hidden width 1024, 8 experts of 512."""
THREE_D_IN_0_5_1 = ("routed experts counted 3-D, as Trinity 0.5.1's transformers 4 holds them too and its verl 0.7 "
                    "places them")


def _read(folder: Path, config: dict[str, object]) -> solver.Model:
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return solver.load_model_config(folder)


@pytest.fixture(scope="module")
def answer() -> solver.Answer:
    return solver.plan("Qwen2.5-7B", gpu="H100", budget_gpus=4, objective="max_len")[0]


def test_trinity_config_refuses_a_model_config_that_is_not_there(answer: solver.Answer, tmp_path: Path) -> None:
    missing = tmp_path / "gone" / "config.json"
    with pytest.raises(TableError) as refused:
        solver.trinity_config(answer, model_config=missing)
    assert str(refused.value) == f"{missing}: cannot read: No such file or directory"
    with pytest.raises(TableError) as refused:  # a folder without one: the file --model-config would look for
        solver.trinity_config(answer, model_config=str(tmp_path))
    assert str(refused.value) == f"{tmp_path / 'config.json'}: cannot read: No such file or directory"
    (tmp_path / "notes.txt").write_text("not JSON", encoding="utf-8")
    with pytest.raises(TableError, match=r"notes\.txt: not JSON: Expecting value \(line 1\)$"):
        solver.trinity_config(answer, model_config=tmp_path / "notes.txt")


def test_trinity_config_names_a_model_config_that_reads(answer: solver.Answer) -> None:
    file = CONFIGS / "Qwen2.5-7B.json"
    fragment = solver.trinity_config(answer, model_config=file)
    (command,) = [line for line in fragment.splitlines() if line.startswith("#   ") and "--check" in line]
    assert command.endswith(f"--gpu H100-80GB --model-config {file} --critic none")


def test_trinity_config_refuses_another_models_config(answer: solver.Answer) -> None:
    mixtral = CONFIGS / "Mixtral-8x7B-v0.1.json"
    with pytest.raises(QueryError) as refused:
        solver.trinity_config(answer, model_config=mixtral)
    assert str(refused.value) == (
        f"model_config {mixtral} gives Mixtral-8x7B-v0.1, not of the shape of Qwen2.5-7B, which the answer was "
        "planned for: pass Qwen2.5-7B's config.json, or leave model_config out")


def test_trinity_config_takes_a_model_of_your_own_by_its_file() -> None:
    own = Path(__file__).parent.parent / "docs" / "examples" / "my-model" / "config.json"
    catalog = solver.load_catalog().with_model(solver.load_model_config(own))
    (mistral,) = solver.plan("Mistral-7B-v0.1", gpu="h20", max_model_len=65536, budget_gpus=6, catalog=catalog)
    assert f"--model-config {own} " in solver.trinity_config(mistral, catalog, model_config=own)


@pytest.mark.parametrize("config", [
    {"model_type": "granitemoe", **SMALL_MOE},
    {"model_type": "llama4_text", "vocab_size": 202048, "hidden_size": 5120, "intermediate_size": 8192,
     "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40, "num_key_value_heads": 8,
     "head_dim": 128, "max_position_embeddings": 131072, "tie_word_embeddings": False, "num_experts_per_tok": 1,
     "num_local_experts": 16, "interleave_moe_layer_step": 1},
])
def test_0_5_1_counts_a_3_d_experts_adapter_as_its_one_layout(tmp_path: Path, config: dict[str, object]) -> None:
    model = _read(tmp_path, config)
    # With LoRA as without: 0.5.1 takes transformers 4 alone, so there is no larger of two layouts to name
    assert expert_layout_words(model, "separate", 16) == THREE_D_IN_0_5_1
    assert expert_layout_words(model, "separate") == THREE_D_IN_0_5_1


def test_phimoes_adapter_under_0_5_is_still_the_larger(tmp_path: Path) -> None:
    model = _read(tmp_path, {"model_type": "phimoe", **SMALL_MOE})  # PEFT converts no PhiMoE: transformers 4's larger
    assert expert_layout_words(model, "either", 16) == (
        "routed experts counted at the larger of Trinity 0.5's two layouts, 3-D as transformers 5 holds them or "
        "separate as transformers 4 does, each as verl 0.7 places it; its LoRA adapter as transformers 4 makes them, "
        "the larger")
    assert expert_layout_words(model, "separate", 16) == (
        "routed experts counted separate, as Trinity 0.5.1's transformers 4 holds them")


def test_map_titles_the_release_without_its_blanks(cli: Cli) -> None:
    status, out, err = cli("map", "--model", "8B", "--gpu", "h100", "--gpus-up-to", "1", "--trinity-version", " 0.5 ")
    assert (status, err) == (0, "")
    assert out.startswith("H100-80GB: longest context per model and GPU budget, Trinity 0.5\n")
    status, out, err = cli("map", "--model", "8B", "--gpu", "h100", "--gpus-up-to", "1", "--trinity-version", " 0.5 ",
                           "--json")
    assert status == 0, err
    assert json.loads(out)[0]["trinity_version"] == " 0.5 "  # the JSON echoes it as given


def test_map_and_memory_title_a_tagged_release_by_its_name(cli: Cli) -> None:
    # s87: the titles said "Trinity v0.5.1", as typed; solve names it back 0.5.1 (release_name)
    status, out, err = cli("map", "--model", "8B", "--gpu", "h100", "--gpus-up-to", "1", "--trinity-version", "v0.5.1")
    assert (status, err) == (0, "")
    assert out.startswith("H100-80GB: longest context per model and GPU budget, Trinity 0.5.1\n")
    status, out, err = cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "4", "--len", "4k",
                           "--trinity-version", "V0.5.1")
    assert status == 0, err
    assert ", vanilla, Trinity 0.5.1, 4096 tokens" in out and "v0.5.1" not in out.lower()


BATCH_OF_6_ON_4 = ("mode: train\nmodel:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 8192\ncluster:\n  node_num: 1\n"
                   "  gpu_per_node: 4\nbuffer:\n  train_batch_size: 6\ntrainer:\n  ulysses_sequence_parallel_size: 4\n")
"""A config whose 4 trainer GPUs do not divide its train batch of 6, though its 1 data-parallel rank (SP=4) does."""
OVER_GPUS = ("a train batch of 6 (buffer.train_batch_size) does not divide by the 4 trainer GPUs, which Trinity 0.5.0 "
             "and 0.5.1 refuse (trinity/common/config_validator.py:860 in 0.5.0, :859 in 0.5.1); 0.5.2 takes it, as it "
             "needs only the 1 data-parallel ranks (4 GPUs / SP=4) to divide it "
             "(trinity/trainer/verl/verl_config.py:424): for 0.5.0 or 0.5.1, make it a multiple of 4")


@pytest.mark.parametrize("release", ["0.5.0", "0.5.1"])
def test_a_config_that_0_5_1_refuses_breaks_its_rule(cli: Cli, tmp_path: Path, release: str) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(BATCH_OF_6_ON_4, encoding="utf-8")
    check = ("--from-config", str(config), "--check", "--gpu", "h100", "--critic", "none", "--trinity-version", release)
    status, out, err = cli(*check, "--json")
    assert status == 1, err
    current = json.loads(out)[0]["current"]
    assert (current["trains"], current["broken_rule_code"], current["broken_rule"]) == (False, "batch-divides",
                                                                                        OVER_GPUS)
    assert current["config_problem_codes"] == ["critic-trained"]  # the caution is the rule now, not said twice
    assert current["refused"]  # checks90: the release's validator raises as it loads the config
    status, out, err = cli(*check)
    assert status == 1, err
    assert f"it breaks a rule: {OVER_GPUS} ({BATCH_REFUSED}: the config as written is refused). No plan trains" in (
        " ".join(out.split()))


BATCH_REFUSED = ("Trinity stops on it as it loads the config on verl before 0.8, verl as it splits the first step's "
                 "batch over the ranks on 0.8 or later")
"""Who stops on a train batch the config's own ranks (or, on 0.5.0 and 0.5.1, GPUs) do not divide, in words."""


def test_a_batch_the_configs_own_ranks_do_not_divide_refuses_it_on_every_release(cli: Cli, tmp_path: Path) -> None:
    # checks90: Trinity's _check_parallel_config raises on it (0.5.2; 0.6.0 before verl 0.8), verl 0.8 asserts as it
    # splits the first step's batch over the ranks, 0.5.0 and 0.5.1's validator on the GPUs: refused with no release
    # named; --train-batch-size's batch is not the config's, so it breaks the rule without refusing the config.
    config = tmp_path / "run.yaml"
    config.write_text(BATCH_OF_6_ON_4.replace("ulysses_sequence_parallel_size: 4", "ulysses_sequence_parallel_size: 1"),
                      encoding="utf-8")
    for extra, refused in (((), True), (("--train-batch-size", "10"), False)):
        status, out, err = cli("--from-config", str(config), "--check", "--gpu", "h100", "--critic", "none",
                               "--json", *extra)
        current = json.loads(out)[0]["current"]
        assert (status, current["broken_rule_code"], current["batch_given"], current["refused"]) == (
            1, "batch-divides", refused, refused), err
        assert (f"({BATCH_REFUSED}: the config as written is refused)" in current["verdict"]) is refused


def test_a_config_that_0_5_2_takes_trains_without_the_caution(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(BATCH_OF_6_ON_4, encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--check", "--gpu", "h100", "--critic", "none",
                           "--trinity-version", "0.5.2", "--json")
    assert status == 0, err
    current = json.loads(out)[0]["current"]
    assert (current["trains"], current["broken_rule_code"]) == (True, None)
    assert current["config_problem_codes"] == ["critic-trained"]  # 0.5.2 takes it: no 0.5.0/0.5.1 caution
