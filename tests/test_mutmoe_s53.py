"""Mutation tests of session 53's model-config reading (MTP layers, ERNIE-4.5-MoE / Hunyuan-MoE / Llama 4 text
layouts, quantization_config) and Trinity 0.5's judging at the actor's SP: each test kills a mutant the other tests
let live (review-s53-mutmoe.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import PADDED_051
from test_trinity import TRAINER_SP_SET_TO_1

from solver.query import ROLE_TOKEN_BUDGETS, role_budget_sources, role_budgets
from solver.tables import TableError, load_catalog, load_model_config
from solver.tables.schema import Model
from solver.trinity import check_trinity_config, load_config_mapping, read_trinity_config, trinity_config_problems

TINY_QWEN3 = {"model_type": "qwen3", "vocab_size": 1000, "hidden_size": 64, "intermediate_size": 96,
              "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
              "max_position_embeddings": 4096, "tie_word_embeddings": True}
"""A small dense Qwen3-style config: 4 layers of 4 heads of 16 (2 KV heads), tied embeddings."""
TINY_ERNIE = {"model_type": "ernie4_5_moe", "vocab_size": 1000, "hidden_size": 64, "intermediate_size": 96,
              "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
              "max_position_embeddings": 4096, "moe_intermediate_size": 16, "moe_k": 2, "moe_num_experts": 8}
"""A small ERNIE-4.5-MoE-style config on the class's layout defaults (2 shared experts, layer 0 dense)."""
TINY_HUNYUAN = {"model_type": "hunyuan_v1_moe", "vocab_size": 1000, "hidden_size": 64, "intermediate_size": 32,
                "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
                "max_position_embeddings": 4096, "num_experts": 8, "moe_topk": 2}
"""A small Hunyuan-MoE-style config: 8 routed experts and a shared one, 32 wide, in every layer."""
TINY_LLAMA4 = {"model_type": "llama4_text", "vocab_size": 1000, "hidden_size": 64, "intermediate_size": 32,
               "intermediate_size_mlp": 128, "num_hidden_layers": 5, "num_attention_heads": 4,
               "num_key_value_heads": 2, "head_dim": 16, "max_position_embeddings": 4096, "num_experts_per_tok": 1,
               "num_local_experts": 4, "interleave_moe_layer_step": 2}
"""A small Llama 4 text config: experts in every second layer (1 and 3 of 5), the others dense 128 wide."""
HIDDEN, VOCAB = 64, 1000
ATTENTION = HIDDEN * 16 * (2 * 4 + 2 * 2) + 2 * HIDDEN
"""A tiny config's attention (q and o of 4 heads of 16, k and v of 2) and the layer's two norms."""


def _read(tmp_path: Path, config: dict[str, object], **changes: object) -> Model:
    """`config` with `changes` (a key changed to ``...`` left out), written as a config.json and read."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({key: value for key, value in {**config, **changes}.items() if value is not ...}),
                    encoding="utf-8")
    return load_model_config(path)


def _count(model: Model) -> int:
    """`model`'s parameters as a whole number."""
    return round(model.parameters_b * 1e9)


def test_a_dense_config_reads_an_mtp_key_as_it_reads_without_it(tmp_path: Path):
    # Only DeepSeek's layouts refuse the key, and only MTP_MODEL_TYPES count it: a Qwen3 config's is neither.
    total = 4 * (ATTENTION + 3 * HIDDEN * 96) + VOCAB * HIDDEN + HIDDEN
    for changes in ({}, {"num_nextn_predict_layers": 1}):
        model = _read(tmp_path, TINY_QWEN3, **changes)
        assert (_count(model), model.uncounted_mtp_layers, model.unchecked_layout) == (total, 0, None)


def test_a_deepseek_moe_config_reads_no_mtp_layer_and_refuses_one(tmp_path: Path):
    # DeepSeek-MoE's remote code (unread) is not known to drop MTP layers: 0 (or null) reads as absent; above 0 is
    # refused, not dropped.
    config = {"model_type": "deepseek", "vocab_size": VOCAB, "hidden_size": HIDDEN, "intermediate_size": 96,
              "moe_intermediate_size": 16, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
              "head_dim": 16, "n_routed_experts": 8, "n_shared_experts": 1, "num_experts_per_tok": 2,
              "first_k_dense_replace": 1, "max_position_embeddings": 4096}
    without = _count(_read(tmp_path, config))
    for layers in (0, None):
        model = _read(tmp_path, config, num_nextn_predict_layers=layers)
        assert (_count(model), model.uncounted_mtp_layers) == (without, 0)
    with pytest.raises(TableError) as refused:
        _read(tmp_path, config, num_nextn_predict_layers=1)
    assert str(refused.value) == (
        f"{tmp_path / 'config.json'}: num_nextn_predict_layers 1: multi-token prediction layers, which this "
        "model_type's class does not declare (DeepSeek-V3's, GLM-4.5's and ERNIE-4.5's are read, their weights not "
        "loaded): set it to 0")


@pytest.mark.parametrize("config", [TINY_LLAMA4, TINY_HUNYUAN, TINY_ERNIE])
def test_an_expert_layout_without_its_expert_count_is_refused_not_read_dense(tmp_path: Path, config: dict[str, object]):
    count_key = next(key for key in ("num_local_experts", "num_experts", "moe_num_experts") if key in config)
    with pytest.raises(TableError, match=(
            rf"^{tmp_path / 'config.json'}: missing the count of routed experts \(num_experts, num_local_experts, "
            rf"n_routed_experts or moe_num_experts\): model_type {config['model_type']} is a mixture of experts, which "
            "would be read as a dense model$")):
        _read(tmp_path, config, **{count_key: ...})


def test_the_new_layouts_count_their_experts_dense_layers_and_default_embeddings_exactly(tmp_path: Path):
    # ERNIE: layer 0 dense (96 wide), 1-3 with 8 routed experts of 16 (router rows) and 2 ungated shared ones; its
    # class ties the embeddings by default. Hunyuan: 8 routed and one shared expert, 32 wide, in every layer; Llama 4:
    # experts (4 routed, one shared, 32 wide) in layers 1 and 3 of 5, the others dense at intermediate_size_mlp;
    # neither ties by default.
    ernie = 4 * ATTENTION + 3 * HIDDEN * 96 + 3 * (8 * (3 * HIDDEN * 16 + HIDDEN) + 3 * HIDDEN * 32)
    hunyuan = 4 * (ATTENTION + 8 * (3 * HIDDEN * 32 + HIDDEN) + 3 * HIDDEN * 32)
    llama4 = 5 * ATTENTION + 2 * (4 * (3 * HIDDEN * 32 + HIDDEN) + 3 * HIDDEN * 32) + 3 * 3 * HIDDEN * 128
    for config, layers, embeddings in ((TINY_ERNIE, ernie, 1), (TINY_HUNYUAN, hunyuan, 2), (TINY_LLAMA4, llama4, 2)):
        assert _count(_read(tmp_path, config)) == layers + embeddings * VOCAB * HIDDEN + HIDDEN
        for tied, copies in ((True, 1), (False, 2)):
            model = _read(tmp_path, config, tie_word_embeddings=tied)
            assert _count(model) == layers + copies * VOCAB * HIDDEN + HIDDEN


def test_llama4_dense_layers_default_to_the_classs_intermediate_size_mlp(tmp_path: Path):
    moe = _read(tmp_path, TINY_LLAMA4, intermediate_size_mlp=...).moe
    assert moe is not None and (moe.dense_layers, moe.dense_intermediate_size) == (3, 16384)


def test_a_null_top_k_key_reads_as_absent(tmp_path: Path):
    # ERNIE's moe_k and Hunyuan's moe_topk, null, leave the count a token takes to num_experts_per_tok.
    model = _read(tmp_path, TINY_LLAMA4, moe_k=None, moe_topk=None)
    without = _count(_read(tmp_path, TINY_LLAMA4))
    assert model.moe is not None and (model.moe.active_experts, _count(model)) == (1, without)


def test_a_per_layer_top_k_that_differs_names_the_first_value_and_the_first_other(tmp_path: Path):
    with pytest.raises(TableError, match=(r"^.*config\.json: moe_topk: differs between layers \(2 and 1\); rft-solver "
                                          "counts one value for every layer$")):
        _read(tmp_path, TINY_HUNYUAN, moe_topk=[2, 1, 2, 2])


@pytest.mark.parametrize(("config", "key", "count_key"), [
    (TINY_ERNIE, "moe_k", "moe_num_experts"), (TINY_HUNYUAN, "moe_topk", "num_experts"),
    (TINY_LLAMA4, "num_experts_per_tok", "num_local_experts")])
def test_a_top_k_above_the_expert_count_is_refused_by_its_own_key(
        tmp_path: Path, config: dict[str, object], key: str, count_key: str):
    with pytest.raises(TableError) as refused:
        _read(tmp_path, config, **{key: 9, count_key: 8})
    assert str(refused.value) == f"{tmp_path / 'config.json'}: {key}: expected at most {count_key} (8), got 9"


@pytest.mark.parametrize(("value", "shown"), [(0, "0"), ("2", "'2'"), (True, "true")])
def test_a_per_layer_value_is_checked_as_the_single_value_is(tmp_path: Path, value: object, shown: str):
    with pytest.raises(TableError) as refused:
        _read(tmp_path, TINY_HUNYUAN, moe_topk=[value] * 4)
    assert str(refused.value) == (f"{tmp_path / 'config.json'}: moe_topk: expected a whole number from 1 to 65536, got "
                                  f"{shown}")


@pytest.mark.parametrize(("changes", "dense"), [
    ({"interleave_moe_layer_step": ...}, 0),  # the class's default step, 1: experts in every layer
    ({"interleave_moe_layer_step": 5}, 4),  # the last layer alone
    ({"interleave_moe_layer_step": ..., "moe_layers": [0]}, 4),
    ({"interleave_moe_layer_step": ..., "moe_layers": [1, 1, 3]}, 3),  # a layer named twice is one layer
])
def test_llama4_expert_layers_from_the_step_or_the_list(tmp_path: Path, changes: dict[str, object], dense: int):
    moe = _read(tmp_path, TINY_LLAMA4, **changes).moe
    assert moe is not None and (moe.dense_layers, moe.dense_intermediate_size) == (dense, 128 if dense else 0)


def test_llama4_moe_layers_that_are_booleans_are_refused(tmp_path: Path):
    with pytest.raises(TableError) as refused:
        _read(tmp_path, TINY_LLAMA4, moe_layers=[True, 3])
    assert str(refused.value) == (f"{tmp_path / 'config.json'}: moe_layers: expected a list of layer indices from 0 to "
                                  "4, or null, got [true, 3]")


@pytest.mark.parametrize(("key", "value", "lowest"), [
    ("moe_layer_interval", True, 1), ("moe_layer_interval", 0, 1), ("moe_layer_start_index", 65537, 0),
    ("moe_layer_end_index", -2, -1), ("moe_num_shared_experts", -1, 0)])
def test_ernies_layout_keys_are_whole_numbers_within_their_range(
        tmp_path: Path, key: str, value: object, lowest: int):
    with pytest.raises(TableError) as refused:
        _read(tmp_path, TINY_ERNIE, **{key: value})
    assert str(refused.value) == (f"{tmp_path / 'config.json'}: {key}: expected a whole number from {lowest} to "
                                  f"65536, got {json.dumps(value)}")


def test_solve_memory_notes_how_many_mtp_layers_go_uncounted(cli, tmp_path: Path):
    (tmp_path / "ernie").mkdir()
    (tmp_path / "ernie" / "config.json").write_text(json.dumps({**TINY_ERNIE, "num_nextn_predict_layers": 2}),
                                                    encoding="utf-8")
    status, _, err = cli("memory", "--model-config", str(tmp_path / "ernie"), "--gpu", "h100", "--gpus", "8", "--len",
                         "8192")
    assert (status, err) == (0, ("solve memory: note: ernie declares 2 multi-token prediction layers "
                                 "(num_nextn_predict_layers), not counted: transformers' class does not load their "
                                 "weights, so verl's FSDP trainer holds none of them (verl's Megatron trainer with "
                                 "model.mtp.enable would)\n"))


def _trinity_05_sp_problems(cli, tmp_path: Path, trainer: str, actor_rollout_ref: str) -> tuple[int, int, list[str]]:
    """The exit status, SP and config problems that ``--from-config --trinity-version 0.5 --json`` gives for a
    Qwen3-8B config at 32768 on 4 of 8 A100 GPUs with `trainer`'s keys and `actor_rollout_ref`'s."""
    config = tmp_path / "trinity.yaml"
    config.write_text(
        "algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
        "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\n"
        f"trainer: {{{trainer}, trainer_config: {{actor_rollout_ref: {actor_rollout_ref}}}}}\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80gb", "--json", "--trinity-version", "0.5")
    current = json.loads(out)[0]["current"]
    return status, current["sp"], current["config_problems"]


def test_trinity_05_notes_nothing_where_the_trainers_and_roles_sp_agree(cli, tmp_path: Path):
    assert _trinity_05_sp_problems(
        cli, tmp_path, "ulysses_sequence_parallel_size: 4",
        "{actor: {ulysses_sequence_parallel_size: 4}, ref: {ulysses_sequence_parallel_size: 4}}") == (0, 4, [])


def test_trinity_05_gives_no_filled_budget_where_the_config_sets_the_trainers(cli, tmp_path: Path):
    # trainer.max_token_len_per_gpu set: Trinity 0.5 fills nothing at the trainer's SP, so the note names no budget;
    # the ref, which sets neither an SP nor a budget of its own, takes the trainer's 16384 at SP 1, which Trinity
    # raises (verl_config.py's _adjust_token_len_if_needed at the ref's SP): a line says so.
    assert _trinity_05_sp_problems(
        cli, tmp_path, "ulysses_sequence_parallel_size: 1, max_token_len_per_gpu: 16384",
        "{actor: {ulysses_sequence_parallel_size: 4}}") == (0, 4, [
            ("trainer.max_token_len_per_gpu 16384 x SP 1 (the ref's, which sets no budget of its own) is below "
             "model.max_model_len 32768: Trinity 0.5 raises the ref's to ceil(32768 / 1) = 32768 (Trinity 0.5.0 to "
             "its default, ceil(2 x 32768 / 1) = 65536)"),
            PADDED_051.format(budget="trainer.max_token_len_per_gpu (the ref's, which sets no budget of its own)",
                              least=32768, sp=1, tokens=32768),
            ("trainer.trainer_config.actor_rollout_ref.actor.ulysses_sequence_parallel_size 4 is not "
             "trainer.ulysses_sequence_parallel_size 1: Trinity 0.5 runs the trainer at the actor's (it takes the "
             "trainer's only where a role sets none), so the verdict is at SP 4: set them alike (--write does)")])


@pytest.mark.parametrize(("trainer", "ref", "lines"), [
    # The ref's own budget is judged at its SP under its own key; the trainer's is not judged there again.
    ("max_token_len_per_gpu: 16384", "{log_prob_max_token_len_per_gpu: 16384}",
     [("trainer.trainer_config.actor_rollout_ref.ref.log_prob_max_token_len_per_gpu 16384 x SP 1 (the ref's) is "
       "below model.max_model_len 32768: Trinity 0.5 raises it to ceil(32768 / 1) = 32768 (Trinity 0.5.0 to its "
       "default, ceil(2 x 32768 / 1) = 65536)"),
      PADDED_051.format(
          budget="trainer.trainer_config.actor_rollout_ref.ref.log_prob_max_token_len_per_gpu (the ref's)",
          least=32768, sp=1, tokens=32768)]),
    # A trainer's budget that holds a sequence at the ref's SP, or a ref at the actor's SP: no line.
    ("max_token_len_per_gpu: 32768", "{}", []),
    ("max_token_len_per_gpu: 16384", "{ulysses_sequence_parallel_size: 4}", []),
    # Unset, Trinity 0.5 fills it at the trainer's SP, the ref's: it holds a sequence there.
    ("max_model_len: 32768", "{}", [])])
def test_trinity_05_judges_the_trainers_budget_at_the_refs_sp_only_where_the_ref_takes_it(
        cli, tmp_path: Path, trainer: str, ref: str, lines: list[str]):
    status, sp, problems = _trinity_05_sp_problems(
        cli, tmp_path, f"ulysses_sequence_parallel_size: 1, {trainer}",
        f"{{actor: {{ulysses_sequence_parallel_size: 4}}, ref: {ref}}}")
    assert (status, sp) == (0, 4)
    assert [line for line in problems if "_token_len_per_gpu" in line and " x SP 1" in line] == lines


def test_role_budget_sources_name_the_key_each_role_takes_its_budget_from() -> None:
    actor, ref, rollout = (".".join(path) for path in ROLE_TOKEN_BUDGETS)
    trainer = "trainer.max_token_len_per_gpu"
    assert role_budget_sources([]) == {actor: trainer, ref: trainer, rollout: trainer}
    assert role_budget_sources([actor]) == {actor: actor, ref: trainer, rollout: actor}
    assert role_budget_sources([ref, rollout]) == {actor: trainer, ref: ref, rollout: rollout}
    assert role_budgets(100, {actor: 50}) == {actor: 50, ref: 100, rollout: 50}


ACTOR_SP_0 = ("trainer.trainer_config.actor_rollout_ref.actor.ulysses_sequence_parallel_size must be at least 1, got "
              "0: Trinity ")
SET_TO_1_052 = "0.5.2 sets it to 1 with a warning as it loads the config (trainer/verl/verl_config.py:411-414)"
KEPT_050_051 = ("0.5.0 and 0.5.1 keep it and fail on it (at 0, world_size % sp_size divides by zero as they load the "
                "config: common/verl_config.py:411 in 0.5.0, :413 in 0.5.1): set it to 1 or more")


@pytest.mark.parametrize(("divisor", "code", "why"), [
    ("gpus", "role-sp-below-one-refused", KEPT_050_051),  # --trinity-version 0.5.0 or 0.5.1
    ("unsure", "role-sp-below-one", f"{SET_TO_1_052}, at which the verdict is, but {KEPT_050_051}"),  # a bare 0.5
    ("ranks", "value-out-of-range", f"{SET_TO_1_052}, and the verdict is at SP 1")])  # 0.5.2
def test_trinity_05_judges_an_actor_sp_of_0_by_release(divisor: str, code: str, why: str):
    # Before: refused with exit 2 for every 0.5 ("must be at least 1"), though 0.5.2's _check_parallel_config sets a
    # role's SP below 1 to 1; 0.5.0's and 0.5.1's keep it, and world_size % 0 raises as they load the config.
    text = ("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
            "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\n"
            "trainer: {trainer_config: {actor_rollout_ref: {actor: {ulysses_sequence_parallel_size: 0}}}}\n")
    assert read_trinity_config(text, "trinity.yaml", {}, "0.5").sp == 1  # the verdict's SP, no exit 2
    problems = trinity_config_problems(load_config_mapping(text, "trinity.yaml"), load_catalog().model("Qwen3-8B"), 4,
                                       version="0.5", batch_divisor=divisor)  # type: ignore[arg-type]
    assert [(problem.code.value, problem.words) for problem in problems] == [(code, ACTOR_SP_0 + why)]
    # the ref's own, which 0.5 checks as the actor's (mutants57: it was said as 0.5.2 says it, whatever the release)
    ref = load_config_mapping(text.replace("actor: {ulysses", "ref: {ulysses"), "trinity.yaml")
    problems = trinity_config_problems(ref, load_catalog().model("Qwen3-8B"), 4, version="0.5",
                                       batch_divisor=divisor)  # type: ignore[arg-type]
    assert [(problem.code.value, problem.words) for problem in problems] == [
        (code, ACTOR_SP_0.replace(".actor.", ".ref.") + why)]


@pytest.mark.parametrize(("role", "sp", "why"), [
    # checks93: the words cited the 0 case whatever the value; Python's % takes the divisor's sign, so 0.5.0's and
    # 0.5.1's check (common/verl_config.py:411, :413) refuses -3 on 4 GPUs and passes -2, whose token budget their
    # raise sets below 0 (:469, :471) and the actor's worker fails on (fsdp_workers.py:218, :220)
    ("actor", -3, ("and refuse the config as they load it (Python's 4 % -3 is -2, not 0: the trainer GPUs must be "
                   "divisible by it, common/verl_config.py:411 in 0.5.0, :413 in 0.5.1)")),
    ("ref", -3, ("and refuse the config as they load it (Python's 4 % -3 is -2, not 0: the trainer GPUs must be "
                 "divisible by it, common/verl_config.py:411 in 0.5.0, :413 in 0.5.1)")),
    ("actor", -2, ("(4 % -2 is 0 in Python, which passes their check, common/verl_config.py:411 in 0.5.0, :413 in "
                   "0.5.1) and set its token budget below 0 (a length over it: common/verl_config.py:469 in 0.5.0, "
                   ":471 in 0.5.1); their actor's worker then fails as it starts, its mini-batch per data-parallel rank "
                   "below 0 (4 // -2 = -2 ranks: trainer/verl/fsdp_workers.py:218 in 0.5.0, :220 in 0.5.1)")),
    ("ref", -2, ("(4 % -2 is 0 in Python, which passes their check, common/verl_config.py:411 in 0.5.0, :413 in "
                 "0.5.1) and set its token budget below 0 (a length over it: common/verl_config.py:469 in 0.5.0, :471 "
                 "in 0.5.1)"))])
def test_trinity_05_words_a_negative_role_sp_for_the_value_given(role: str, sp: int, why: str):
    text = ("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
            "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\n"
            f"trainer: {{trainer_config: {{actor_rollout_ref: {{{role}: {{ulysses_sequence_parallel_size: {sp}}}}}}}}}\n")
    head = (f"trainer.trainer_config.actor_rollout_ref.{role}.ulysses_sequence_parallel_size must be at least 1, got "
            f"{sp}: Trinity ")
    kept = f"0.5.0 and 0.5.1 keep it {why}"
    for divisor, code, words in [("gpus", "role-sp-below-one-refused", f"{kept}: set it to 1 or more"),
                                 ("unsure", "role-sp-below-one",
                                  f"{SET_TO_1_052}, at which the verdict is, but {kept}: set it to 1 or more"),
                                 ("ranks", "value-out-of-range", f"{SET_TO_1_052}, and the verdict is at SP 1")]:
        problems = trinity_config_problems(load_config_mapping(text, "trinity.yaml"),
                                           load_catalog().model("Qwen3-8B"), 4, version="0.5",
                                           batch_divisor=divisor)  # type: ignore[arg-type]
        assert [(problem.code.value, problem.words) for problem in problems] == [(code, head + words)]


@pytest.mark.parametrize(("gpus", "why"), [
    # mutants59: 1 % -3 is -2 in Python, which 0.5.0's and 0.5.1's check refuses (one trainer GPU is no exception);
    # on a count below 1 (a line of its own says so) the words give Python's % of it as it is: -4 % -3 is -1, not 0
    (1, ("and refuse the config as they load it (Python's 1 % -3 is -2, not 0: the trainer GPUs must be divisible by "
         "it, common/verl_config.py:411 in 0.5.0, :413 in 0.5.1)")),
    (-4, ("and refuse the config as they load it (Python's -4 % -3 is -1, not 0: the trainer GPUs must be divisible by "
          "it, common/verl_config.py:411 in 0.5.0, :413 in 0.5.1)"))])
def test_trinity_05_words_a_negative_role_sp_by_pythons_remainder_on_the_gpus_given(gpus: int, why: str):
    text = ("model: {model_path: Qwen/Qwen3-8B}\n"
            "trainer: {trainer_config: {actor_rollout_ref: {actor: {ulysses_sequence_parallel_size: -3}}}}\n")
    problems = trinity_config_problems(load_config_mapping(text, "trinity.yaml"), load_catalog().model("Qwen3-8B"),
                                       gpus, version="0.5", batch_divisor="gpus")
    assert (problems[0].code.value, problems[0].words) == ("role-sp-below-one-refused", (
        "trainer.trainer_config.actor_rollout_ref.actor.ulysses_sequence_parallel_size must be at least 1, got -3: "
        f"Trinity 0.5.0 and 0.5.1 keep it {why}: set it to 1 or more"))


@pytest.mark.parametrize(("version", "keys"), [
    (None, ["trainer.ulysses_sequence_parallel_size"]),
    # Trinity 0.5 runs the actor at its own SP and the ref, which sets none, at the trainer's: both are checked.
    ("0.5", ["trainer.trainer_config.actor_rollout_ref.actor.ulysses_sequence_parallel_size",
             "trainer.ulysses_sequence_parallel_size"])])
def test_an_sp_below_1_is_said_once_and_the_rules_checked_at_1(version: str | None, keys: list[str]):
    # On 3 trainer GPUs, which SP 1 divides and no larger SP Qwen3-4B's heads take does.
    sp = {"ulysses_sequence_parallel_size": 0}
    mapping = {"trainer": {**sp, "trainer_config": {"actor_rollout_ref": {"actor": sp}}}}
    assert check_trinity_config(mapping, load_catalog().model("Qwen3-4B"), 3, version=version) == [
        f"{key} must be at least 1, got 0" + (TRAINER_SP_SET_TO_1 if key == "trainer.ulysses_sequence_parallel_size"
                                              else f": Trinity {SET_TO_1_052}, at which the verdict is, but "
                                              f"{KEPT_050_051}")
        for key in keys]
