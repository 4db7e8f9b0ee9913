"""RoPE loose ends of the rollout (session 74, helper ropeseven): --write completes the rollout model's copy of
``model.rope_scaling`` as it does the model's (``rope_type`` beside a ``type`` alone, the original length), so that
the file it writes passes --check; ``rope_type`` goes right after the legacy ``type``; a model's own
``partial_rotary_factor``, which a RoPE scaling Trinity hands vLLM drops, is said (``rope-partial-dropped``) and
written back into the mapping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_moe_layouts import MINIMAX_M2

from solver.tables import TableError, load_catalog
from solver.tables.model_config import load_model_config
from solver.trinity import load_config_mapping, trinity_config_problems
from solver.trinity.plan_keys import _yarn_keys

CARD = "{type: yarn, factor: 4.0, original_max_position_embeddings: 32768}"
"""Qwen's model cards' YaRN, its type in the legacy ``type`` alone: it reaches 131072 tokens over 32768."""
SHORT = "{type: yarn, factor: 2.0}"
"""A YaRN of the legacy form short of 131072 tokens, without its original length: the guide's takes its place."""


def _config(model_rope: str, rollout_rope: str) -> str:
    """Qwen3-4B at 131072 tokens on 4 trainer and 4 rollout GPUs, the model's and the rollout's RoPE scaling given
    (GRPO: no critic, which is not the subject here)."""
    return ("algorithm: {algorithm_type: grpo}\n"
            f"model:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: 131072\n  rope_scaling: {model_rope}\n"
            "cluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 4\n"
            f"    rope_scaling: {rollout_rope}\n")


@pytest.fixture(autouse=True)
def _env_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)


def _write_then_check(cli, tmp_path: Path, text: str) -> tuple[str, dict[str, object]]:
    """`text` written (--write, H200) and the written file checked (--check --json): its text and the verdict."""
    config, written = tmp_path / "trinity.yaml", tmp_path / "written.yaml"
    config.write_text(text, encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h200", "--write", str(written))
    assert status == 0, err
    status, out, err = cli("--from-config", str(written), "--gpu", "h200", "--check", "--json")
    assert status == 0, err
    return written.read_text(encoding="utf-8"), json.loads(out)[0]["current"]


@pytest.mark.parametrize(("given", "rope"), [
    # kept (it reaches the length): rope_type joins it, right after type
    (CARD, "{type: yarn, rope_type: yarn, factor: 4.0, original_max_position_embeddings: 32768, rope_theta: 1000000}"),
    # short of the length: the guide's factor over the native 40960, the original length added to the copy too
    (SHORT, "{type: yarn, rope_type: yarn, factor: 3.2, original_max_position_embeddings: 40960, rope_theta: 1000000}"),
])
def test_the_rollouts_copy_is_completed_as_the_models_and_the_written_file_passes_check(cli, tmp_path: Path,
                                                                                        given: str, rope: str):
    # Before, the copy got only the keys it had (rope_type and the original length were left out), and the fragment
    # behind --write broke its own check: an internal error, exit status 70, and no file.
    written, current = _write_then_check(cli, tmp_path, _config(given, given))
    assert f"  rope_scaling: {rope}\n" in written and f"    rope_scaling: {rope}\n" in written
    assert current["refused"] is False
    assert not {"rope-type-missing-refused", "rope-scaling-unbuilt-refused", "rollout-rope-scaling-differs"} & {
        *current["config_problem_codes"]}


@pytest.mark.parametrize(("given", "lines"), [
    ("{rope_type: yarn, factor: 2.0, original_max_position_embeddings: 40960}",
     ["explorer.rollout_model.rope_scaling.factor: 3.2  # now 2.0"]),
    (CARD, ["explorer.rollout_model.rope_scaling.rope_type: yarn  # now unset"]),
])
def test_the_apply_block_names_the_rollouts_keys_it_changes(cli, tmp_path: Path, given: str, lines: list[str]):
    config = tmp_path / "trinity.yaml"
    config.write_text(_config(given, given), encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h200")
    assert status == 0, err
    header = f"# and these keys of {config.name}, which the plan changes too (after each, its value now):\n"
    assert header + "".join(f"{line}\n" for line in lines) in out


def test_an_aliased_rollout_rope_scaling_is_written_once_and_passes_check(cli, tmp_path: Path):
    text = _config(SHORT, SHORT).replace(f"  rope_scaling: {SHORT}\n", "  rope_scaling: &rope\n    type: yarn\n"
                                         "    factor: 2.0\n", 1).replace(f"    rope_scaling: {SHORT}\n",
                                                                         "    rope_scaling: *rope\n")
    written, current = _write_then_check(cli, tmp_path, text)
    assert ("  rope_scaling: &rope\n    type: yarn\n    rope_type: yarn\n    factor: 3.2\n"
            "    original_max_position_embeddings: 40960\n") in written and "    rope_scaling: *rope\n" in written
    assert current["refused"] is False


def test_a_rollout_rope_scaling_of_its_own_is_left(cli, tmp_path: Path):
    # not the model's: --write leaves it (and --check still says what vLLM makes of it)
    config, written = tmp_path / "trinity.yaml", tmp_path / "written.yaml"
    config.write_text(_config(CARD, SHORT), encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h200", "--write", str(written))
    assert status == 0, err
    assert f"    rope_scaling: {SHORT}\n" in written.read_text(encoding="utf-8")


def test_rope_type_goes_right_after_type_in_a_block_mapping_too(cli, tmp_path: Path):
    text = _config(SHORT, SHORT).replace(f"  rope_scaling: {SHORT}\n", "  rope_scaling:\n    type: yarn  # the card's\n"
                                         "    factor: 2.0\n# after the YaRN\n", 1)
    text = text.replace(f"    rope_scaling: {SHORT}\n", "")
    written, _ = _write_then_check(cli, tmp_path, text)
    assert ("  rope_scaling:\n    type: yarn  # the card's\n    rope_type: yarn\n    factor: 3.2\n"
            "    original_max_position_embeddings: 40960\n    rope_theta: 1000000\n# after the YaRN\ncluster:\n"
            ) in written
    assert load_config_mapping(written, "w")["model"]["rope_scaling"] == {
        "type": "yarn", "rope_type": "yarn", "factor": 3.2, "original_max_position_embeddings": 40960,
        "rope_theta": 1000000}


def test_rope_type_without_a_type_goes_where_new_keys_go(cli, tmp_path: Path):
    text = _config("{factor: 2.0}", "{factor: 2.0}")
    written, _ = _write_then_check(cli, tmp_path, text)
    assert ("  rope_scaling: {factor: 3.2, rope_type: yarn, original_max_position_embeddings: 40960, "
            "rope_theta: 1000000}\n") in written


# partial_rotary_factor: Trinity hands vLLM the mapping as the model's whole rope_parameters (hf_overrides), which held
# the share of each head's dimensions RoPE rotates; vLLM 0.19.1's Phi-3 (Llama) class hands get_rope what is left,
# which rotates whole heads, and GLM-4's class puts its 0.5 back.

PHI3 = Path(__file__).parent / "data" / "hf-configs" / "Phi-3-mini-128k-instruct.json"
HANDED = "Trinity hands vLLM the mapping as the model's rope_parameters, past transformers' filling-in"
PARTIAL = ("model.rope_scaling is given without partial_rotary_factor: the rollout's vLLM takes the scaling in place "
           "of Phi-partial's RoPE parameters, its partial_rotary_factor with them, and rotates at "
           "partial_rotary_factor 1.0 (the share of each head's dimensions RoPE rotates), not the model's 0.75, "
           f"silently ({HANDED}); add partial_rotary_factor: 0.75 to it")
YARN = {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 4096,
        "rope_theta": 10000}  # a base: no line that Trinity 0.6's trainer needs one (ropecheck, s79)


def _phi_partial(tmp_path: Path, **keys: object) -> Path:
    """A Phi-3 config.json of 4096 native positions and no RoPE scaling of its own, rotating 0.75 of each head (as
    Phi-4-mini does), with `keys` in place of its own (``model_type: stablelm`` where YaRN is given: a Phi-3's takes
    none, tests/test_ropetype_s77.py)."""
    config = json.loads(PHI3.read_text(encoding="utf-8"))
    for key in ("rope_scaling", "original_max_position_embeddings", "sliding_window"):
        config.pop(key)
    config |= {"_name_or_path": "Phi-partial", "max_position_embeddings": 4096, "partial_rotary_factor": 0.75, **keys}
    path = tmp_path / "config.json"
    path.write_text(json.dumps({key: value for key, value in config.items() if value is not None}), encoding="utf-8")
    return path


@pytest.mark.parametrize(("keys", "lost"), [
    ({}, (0.75, 1.0)),
    ({"partial_rotary_factor": None, "rotary_pct": 0.5}, (0.5, 1.0)),  # an older name vLLM reads
    ({"partial_rotary_factor": 1.0}, None),
    ({"partial_rotary_factor": None}, None),
    # the RoPE parameters' own comes first, as transformers keeps it
    ({"rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5}}, (0.5, 1.0)),
    # GLM-4's class puts its 0.5 back: lost only where the model's own differs
    ({"model_type": "glm4", "partial_rotary_factor": 0.5}, None),
    ({"model_type": "glm4", "partial_rotary_factor": None}, None),
    ({"model_type": "glm4"}, (0.75, 0.5)),
])
def test_a_config_jsons_partial_rotary_factor_is_read(tmp_path: Path, keys: dict[str, object],
                                                      lost: tuple[float, float] | None):
    assert load_model_config(_phi_partial(tmp_path, **keys)).vllm_partial_rotary_lost == lost


@pytest.mark.parametrize(("keys", "words"), [
    ({"partial_rotary_factor": 0}, "partial_rotary_factor: expected a number above 0 and at most 1 such as 0.5, got 0"),
    ({"partial_rotary_factor": None, "rotary_pct": 1.5},
     "rotary_pct: expected a number above 0 and at most 1 such as 0.5, got 1.5"),
    ({"model_type": "llama", "partial_rotary_factor": None,
      "rope_parameters": {"rope_type": "default", "partial_rotary_factor": "half"}},
     "rope_parameters.partial_rotary_factor: expected a number above 0 and at most 1 such as 0.5, got 'half'"),
])
def test_a_partial_rotary_factor_vllm_refuses_is_refused(tmp_path: Path, keys: dict[str, object], words: str):
    path = _phi_partial(tmp_path, **keys)
    with pytest.raises(TableError) as raised:
        load_model_config(path)
    assert str(raised.value) == f"{path}: {words} (vLLM refuses it too)"


@pytest.mark.parametrize(("keys", "lost", "differs"), [
    ({"rotary_dim": 64, "partial_rotary_factor": 0.5}, None, None),  # vLLM's class puts 64 / 128 back
    ({"rotary_dim": 64}, None, (1.0, 0.5)),  # as published: transformers' trainer reads no rotary_dim
    ({"rotary_dim": 64, "partial_rotary_factor": 0.75}, (0.75, 0.5), None),
    ({"rotary_dim": 128, "partial_rotary_factor": 0.5}, (0.5, 1.0), None),
    ({"rotary_dim": 128}, None, None),  # whole heads in both
    ({"rotary_dim": 64, "rope_parameters": {"rope_type": "default", "partial_rotary_factor": 0.5}}, None, None),
    ({"rotary_dim": None, "partial_rotary_factor": 0.5}, None, None),  # null: not judged (vLLM's class takes the 0.5)
])
def test_minimax_m2s_vllm_class_takes_its_rotary_dim(tmp_path: Path, keys: dict[str, object],
                                                     lost: tuple[float, float] | None,
                                                     differs: tuple[float, float] | None):
    # vLLM 0.19.1's MiniMax-M2 class fills partial_rotary_factor in as rotary_dim / head_dim (minimax_m2.py:200-204);
    # transformers 5.9.0's rotates whole heads without partial_rotary_factor (modeling_minimax_m2.py:187-189).
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**MINIMAX_M2, **keys}), encoding="utf-8")
    model = load_model_config(path)
    assert (model.vllm_partial_rotary_lost, model.trainer_partial_rotary_differs) == (lost, differs)
    path.write_text(json.dumps({**MINIMAX_M2, **keys, "rotary_dim": 256}), encoding="utf-8")
    with pytest.raises(TableError) as raised:
        load_model_config(path)
    assert str(raised.value) == (f"{path}: rotary_dim: expected a number above 0 and at most head_dim (128) such as "
                                 "64, got 256 (vLLM refuses it too)")


def test_a_minimax_m2_config_without_rotary_dim_is_refused_for_a_vllm_rollout(tmp_path: Path):
    # vLLM 0.19.1's class reads config.rotary_dim with no default (minimax_m2.py:267), which transformers 5.9.0's
    # MiniMaxM2Config declares none of: the rollout fails as the engine builds the model; a trainer alone reads it.
    path = tmp_path / "config.json"
    path.write_text(json.dumps({key: value for key, value in MINIMAX_M2.items() if key != "rotary_dim"}),
                    encoding="utf-8")
    refusal = ("no rotary_dim, which vLLM 0.19.1's minimax_m2 class reads with no default (minimax_m2.py:267: "
               "AttributeError as it builds the model), so Trinity's rollout cannot start; accepted: rotary_dim, the "
               "dimensions of each head RoPE rotates (64 of head_dim 128 in MiniMax-M2's published config.json)")
    with pytest.raises(TableError) as raised:
        load_model_config(path)
    assert str(raised.value) == f"{path}: {refusal}"
    assert load_model_config(path, vllm_rollout=False).vllm_refusal == refusal


def test_no_catalogue_model_loses_one():
    assert [model.name for model in load_catalog().models if model.vllm_partial_rotary_lost is not None] == []


def _partial_problems(tmp_path: Path, model_keys: dict[str, object], **sections: object) -> list[tuple[str, str]]:
    model = load_model_config(_phi_partial(tmp_path, model_type="stablelm"))  # a Phi-3 is advised no YaRN
    mapping = {"model": {"model_path": "x", "max_model_len": 8192, **model_keys}, **sections}
    return [(problem.code.value, problem.words) for problem in trinity_config_problems(mapping, model, 8)]


def test_a_rope_scaling_without_the_models_partial_rotary_factor_is_a_but_line(tmp_path: Path):
    assert _partial_problems(tmp_path, {"rope_scaling": YARN}) == [("rope-partial-dropped", PARTIAL)]
    rollout = {"rollout_model": {"rope_scaling": YARN}}
    assert _partial_problems(tmp_path, {"rope_scaling": YARN}, explorer=rollout) == [
        ("rope-partial-dropped", PARTIAL.replace("model.rope_scaling is", "explorer.rollout_model.rope_scaling is"))]


@pytest.mark.parametrize(("model_keys", "sections"), [
    ({"rope_scaling": {**YARN, "partial_rotary_factor": 0.75}}, {}),  # given in the mapping itself
    ({"rope_scaling": YARN}, {"mode": "train"}),  # no vLLM rollout
    ({"rope_scaling": YARN},
     {"explorer": {"rollout_model": {"rope_scaling": {**YARN, "partial_rotary_factor": 0.75}}}}),
])
def test_the_share_given_or_nothing_handed_keeps_it(tmp_path: Path, model_keys: dict[str, object],
                                                    sections: dict[str, object]):
    # (the rollout's own mapping beside the model's is a line of its own: rollout-rope-scaling-differs)
    assert "rope-partial-dropped" not in [code for code, _ in _partial_problems(tmp_path, model_keys, **sections)]


def test_write_fragments_and_the_apply_line_give_it(cli, tmp_path: Path):
    model = _phi_partial(tmp_path, model_type="stablelm")  # as _partial_problems
    config, written = tmp_path / "trinity.yaml", tmp_path / "written.yaml"
    config.write_text("model:\n  model_path: /nowhere/Phi-partial\n  max_model_len: 8192\ncluster:\n  node_num: 1\n"
                      "  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 4\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--model-config", str(model), "--gpu", "h200", "--write",
                           str(written))
    assert status == 0, err
    assert ("model.rope_scaling: {rope_type: yarn, factor: 2.0, original_max_position_embeddings: 4096, "
            "partial_rotary_factor: 0.75, rope_theta: 10000}\n") in out
    assert ("  rope_scaling:\n    rope_type: yarn\n    factor: 2.0\n    original_max_position_embeddings: 4096\n"
            "    partial_rotary_factor: 0.75\n") in written.read_text(encoding="utf-8")
    status, out, err = cli("--from-config", str(written), "--model-config", str(model), "--gpu", "h200", "--check",
                           "--json")
    assert status == 0 and "rope-partial-dropped" not in json.loads(out)[0]["current"]["config_problem_codes"]
    status, out, err = cli("--model-config", str(model), "--len", "8192", "--gpus", "4", "--gpu", "h200", "--emit",
                           "trinity")
    assert status == 0 and ("    original_max_position_embeddings: 4096\n"
                            "    # Phi-partial's own; the rollout's vLLM takes 1.0 where the rope_scaling comes "
                            "without it\n    partial_rotary_factor: 0.75\n") in out


# The 2507 updates' RoPE bases in the catalogue (5000000, 10000000) were written from memory of their config.json,
# which nothing offline holds: a config.json given under such a name is read for its own base.

QWEN3_8B = Path(__file__).parent / "data" / "hf-configs" / "Qwen3-8B.json"


def _qwen3_4b_2507(tmp_path: Path, rope_theta: float) -> Path:
    """A config.json of Qwen3-4B's shape named Qwen3-4B-Instruct-2507, of 262144 positions, at `rope_theta`."""
    config = json.loads(QWEN3_8B.read_text(encoding="utf-8")) | {
        "_name_or_path": "Qwen3-4B-Instruct-2507", "hidden_size": 2560, "num_hidden_layers": 36,
        "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 9728, "tie_word_embeddings": True,
        "max_position_embeddings": 262144, "rope_theta": rope_theta}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


@pytest.mark.parametrize(("rope_theta", "lost"), [(5e6, (5e6, 1e6)), (1e7, (1e7, 1e6)), (1e6, None)])
def test_a_catalogue_models_config_json_gives_its_own_rope_base(tmp_path: Path, rope_theta: float,
                                                                lost: tuple[float, float] | None):
    catalog = load_catalog()
    assert catalog.model("Qwen3-4B-Instruct-2507").vllm_rope_theta_lost == (5e6, 1e6)  # the catalogue's
    model = catalog.with_model(load_model_config(_qwen3_4b_2507(tmp_path, rope_theta))).model("Qwen3-4B-Instruct-2507")
    assert model.tables_of == "Qwen3-4B" and model.vllm_rope_theta_lost == lost


DIFFERS = ("MiniMax-M2's config.json gives rotary_dim and no partial_rotary_factor: the trainer's transformers rotates "
           "partial_rotary_factor 1.0 of each head's dimensions (its minimax_m2 class reads no rotary_dim, "
           "modeling_minimax_m2.py:187-189 in 5.9.0), the rollout's vLLM 0.5 (rotary_dim over head_dim, "
           "minimax_m2.py:200-204 in 0.19.1), so the rollout's log-probs differ from the trainer's; add "
           "partial_rotary_factor: 0.5 to the config.json")
MINIMAX_YARN = {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 196608, "rope_theta": 5000000}


@pytest.mark.parametrize(("model_keys", "sections", "version", "tail"), [
    ({}, {}, None, ""),
    ({"rope_scaling": MINIMAX_YARN}, {}, None,  # the API's words
     " and to model.rope_scaling (solver.trinity.patch_trinity_config adds it there)"),
    ({"rope_scaling": {**MINIMAX_YARN, "partial_rotary_factor": 0.5}}, {}, None,
     " (model.rope_scaling's reaches the trainer on verl before 0.8 alone)"),
    ({"rope_scaling": {**MINIMAX_YARN, "partial_rotary_factor": 0.5}}, {}, "0.5", None),  # 0.5's trainer takes it
    ({}, {"mode": "train"}, None, None),  # no vLLM rollout
])
def test_minimax_m2s_rotary_dim_alone_is_a_trainer_rollout_mismatch(
        tmp_path: Path, model_keys: dict[str, object], sections: dict[str, object], version: str | None,
        tail: str | None):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**MINIMAX_M2, "max_position_embeddings": 196608}), encoding="utf-8")
    mapping = {"model": {"model_path": "x", "max_model_len": 393216 if model_keys else 8192, **model_keys},
               **sections}
    problems = trinity_config_problems(mapping, load_model_config(path), 8, version=version)
    said = [problem.words for problem in problems if problem.code.value == "rope-partial-differs"]
    assert said == ([] if tail is None else [DIFFERS + tail])


def test_the_yarn_fix_and_write_carry_the_share_vllm_rotates(tmp_path: Path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(MINIMAX_M2), encoding="utf-8")
    model = load_model_config(path)
    mapping = {"model": {"model_path": "x", "max_model_len": 393216}}
    refused = [problem.words for problem in trinity_config_problems(mapping, model, 8)
               if problem.code.value == "rope-scaling-missing-refused"]
    assert len(refused) == 1 and ("set {rope_type: yarn, factor: 2.0, original_max_position_embeddings: 196608, "
                                  "partial_rotary_factor: 0.5, rope_theta: 5000000}") in refused[0]
    written = {key.path[-1]: (key.value, key.comment) for key in _yarn_keys(("model", "rope_scaling"), model, 2.0,
                                                                            False, 5000000, factor_words="")}
    why = "rotary_dim over head_dim, which the rollout's vLLM rotates; the trainer's transformers rotates 1.0 " \
          "without it"
    assert written["partial_rotary_factor"] == (0.5, why)
