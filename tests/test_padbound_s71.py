"""One padded sequence per micro-batch for a model of its own attention code (session 71). Such a model (InternLM2's)
trains with remove padding off (test_remotepad_s70), so each micro-batch is padded to its longest sequence, which
dynamic batching, filling it by the sequences' own lengths, would take past the token budget the memory estimate
counts. So the apply lines, ``--emit trinity`` and ``--write`` also set ``trainer.use_dynamic_bsz: false`` and each
pass's micro-batch size per GPU to 1 (the actor's, the ref's, the rollout's log-prob recompute, the critic's), keys
that Trinity 0.5 and 0.6 both read; ``--check`` flags dynamic batching on or a size other than 1
(``micro-batch-unbounded``, in place of ``dynamic-batch-off``) and a size left unset where a release hands verl none
(``micro-batch-unset``). Session 88 (checks88): the rollout's own ``log_prob_use_dynamic_bsz``, which Trinity 0.5 and
0.6 on verl before 0.8 run the log-prob recompute by, is judged as the ref's; a deprecated size for the whole batch is
``micro-batch-unbounded`` only where verl before 0.8 makes it more than one sequence per GPU, else verl 0.8's refusal
alone (``micro-batch-deprecated-size``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_tokbudget_s72 import _config, _verdict

from solver.query import BUDGET_ABOVE_VERDICT_CODES, REFUSED_CONFIG_CODES, ConfigProblemCode, make_query
from solver.render.summary import apply_lines
from solver.solve import plan
from solver.tables import load_catalog
from solver.tables.model_config import load_model_config
from solver.trinity import patched_trinity_config, read_trinity_config, trinity_config_problems
from solver.trinity.plan_keys import keys_for_plan
from solver.trinity.settings import plan_settings

ROOT = Path(__file__).parent.parent
INTERNLM2 = ROOT / "tests" / "data" / "hf-configs" / "internlm2-7b.json"
EXAMPLE = ROOT / "docs" / "examples" / "trinity.yaml"
Cli = Callable[..., tuple[int, str, str]]
ARR = "trainer.trainer_config.actor_rollout_ref"
CRITIC = "trainer.trainer_config.critic"
SIZES = [f"{ARR}.actor.ppo_micro_batch_size_per_gpu", f"{ARR}.ref.log_prob_micro_batch_size_per_gpu",
         f"{ARR}.rollout.log_prob_micro_batch_size_per_gpu"]
CRITIC_SIZES = [f"{CRITIC}.ppo_micro_batch_size_per_gpu", f"{CRITIC}.forward_micro_batch_size_per_gpu"]
ENGINE_SIZES = [f"{CRITIC}.fsdp.micro_batch_size_per_gpu", f"{CRITIC}.fsdp.infer_micro_batch_size_per_gpu"]
APPLY_LINES = ["# one sequence per micro-batch, as the caution above says:", "trainer.use_dynamic_bsz: false",
               *(f"{key}: 1" for key in SIZES),
               "# and the critic's, where the algorithm trains one (ppo, Trinity's default):",
               *(f"{key}: 1" for key in CRITIC_SIZES)]
WHY = ("remove padding off (as internlm2-7b needs) pads each micro-batch to its longest sequence, and dynamic batching "
       "fills it by the sequences' own lengths, so one of uneven lengths holds more tokens than the token budget the "
       "memory estimate counts: set it to false, with one sequence per micro-batch "
       "(solver.trinity.patch_trinity_config does)")
ON_08 = ("Trinity 0.6 on verl 0.8 or later hands verl none, which then refuses dynamic batch sizes off as the trainer "
         "starts")
PADDING_OFF = {"use_remove_padding": False, "trainer_config": {"actor_rollout_ref": {"model": {
    "use_remove_padding": False}}}}
"""Remove padding off at both keys, as such a model needs (test_remotepad_s70)."""


ACTOR_FLAG_SCOPE = ("on Trinity before 0.6, and on 0.6 with verl before 0.8 for the rollout's log-prob pass where the "
                    "rollout sets no log_prob_use_dynamic_bsz of its own: Trinity 0.6 sets it to trainer.use_dynamic_bsz "
                    "for the actor's update")
"""Where the actor's own ``use_dynamic_bsz`` counts, as a line beside it says (rowsflag88)."""

def _internlm2_plan(length: int = 32768, gpu: str = "h100", version: str | None = None) -> Any:
    """InternLM2-7B's best plan on 8 GPUs of `gpu` at `length` tokens, and the model."""
    catalog = load_catalog().with_model(load_model_config(INTERNLM2))
    query = make_query(catalog, gpu=gpu, model="internlm2-7b", budget_gpus=8, max_model_len=length,
                       trinity_version=version)
    (answer,) = plan(query, catalog)
    return answer.plans[0], catalog.model("internlm2-7b")


def _dotted(config: Any, prefix: str = "") -> dict[str, Any]:
    """The leaves of nested mappings, by dotted key."""
    if not isinstance(config, dict):
        return {prefix: config}
    return {key: value for name, item in config.items()
            for key, value in _dotted(item, f"{prefix}.{name}" if prefix else name).items()}


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_the_apply_lines_turn_dynamic_batching_off_with_one_sequence_per_micro_batch(version: str | None):
    found, model = _internlm2_plan(version=version)
    lines = apply_lines(found, model, version)  # type: ignore[arg-type]
    start = lines.index("trainer.use_remove_padding: false" if version != "0.5" else
                        f"{CRITIC}.model.use_remove_padding: false") + 1
    assert lines[start:start + len(APPLY_LINES)] == APPLY_LINES
    # the critic's engine's, which Trinity 0.6 on verl 0.8 or later cuts its passes by (critic87); 0.5 refuses them
    before = "" if version else " (leave them out before 0.6, which refuses them)"
    engine = [f"# Trinity 0.6 on verl 0.8 or later cuts the critic's by these{before}:",
              *(f"{key}: 1" for key in ENGINE_SIZES)] if version != "0.5" else []
    assert lines[start + len(APPLY_LINES):start + len(APPLY_LINES) + len(engine)] == engine
    assert (ENGINE_SIZES[0] + ": 1" in lines) is (version != "0.5")
    qwen3 = apply_lines(found, load_catalog().model("8B"), version)  # type: ignore[arg-type]
    assert not any("micro_batch" in line or "use_dynamic_bsz" in line for line in qwen3)


@pytest.mark.parametrize("algorithm", ["sft", "ppo"])
def test_the_apply_block_sets_the_critics_sizes_only_where_the_configs_algorithm_trains_one(
        cli: Cli, tmp_path: Path, algorithm: str):
    # refsp88: an SFT config trains no critic, yet its apply block listed the critic's sizes and its engine's
    config = tmp_path / "trinity.yaml"
    config.write_text(f"model: {{model_path: internlm/internlm2-7b, max_model_len: 4096}}\nalgorithm: "
                      f"{{algorithm_type: {algorithm}}}\nbuffer: {{train_batch_size: 64}}\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--model-config", str(INTERNLM2), "--gpu", "h100", "--gpus", "8",
                         "--trinity-version", "0.6")
    lines = out.splitlines()
    assert status == 0 and f"{SIZES[2]}: 1" in lines
    assert [key for key in (*CRITIC_SIZES, *ENGINE_SIZES) if f"{key}: 1" in lines] == (
        [*CRITIC_SIZES, *ENGINE_SIZES] if algorithm == "ppo" else [])


@pytest.mark.parametrize("algorithm", ["sft", "dpo", "ppo", None])
def test_write_sets_the_critics_sizes_only_where_the_configs_algorithm_trains_one(algorithm: str | None):
    # lastread88b: the apply block left an SFT config's critic sizes out (refsp88), but --write and --emit still set
    # them
    found, model = _internlm2_plan(version="0.6")
    config = {} if algorithm is None else {"algorithm": {"algorithm_type": algorithm}}
    written = {".".join(key.path) for key in keys_for_plan(found, model, config, version="0.6")}
    assert [key for key in (*CRITIC_SIZES, *ENGINE_SIZES) if key in written] == (
        [*CRITIC_SIZES, *ENGINE_SIZES] if algorithm in ("ppo", None) else [])


@pytest.mark.parametrize("version", ["0.5", "0.6"])
def test_a_padded_plan_sets_the_critics_engine_sizes_but_for_0_5_and_the_trainers_budget_only_where_present(
        version: str):
    # mutants52: 0.5, which refuses the critic's engine section, got its sizes; the trainer's budget, unread with one
    # sequence per micro-batch, is to be set only in place of a config's own
    found, model = _internlm2_plan(version="0.6")
    keys = keys_for_plan(found, model, {"algorithm": {"algorithm_type": "ppo"}}, version=version)
    written = {".".join(key.path) for key in keys}
    assert [key for key in (*CRITIC_SIZES, *ENGINE_SIZES) if key in written] == (
        CRITIC_SIZES if version == "0.5" else [*CRITIC_SIZES, *ENGINE_SIZES])
    assert [key.existing_only for key in keys if key.path == ("trainer", "max_token_len_per_gpu")] == [True]
    patched = yaml.safe_load(patched_trinity_config("model:\n  max_model_len: 32768\n", found, model).text)
    assert patched["trainer"]["ulysses_sequence_parallel_size"] == found.sp
    assert "max_token_len_per_gpu" not in patched["trainer"]


@pytest.mark.parametrize("version", [None, "0.6"])
def test_a_dpo_plans_fragment_and_apply_lines_set_no_critic_sizes(version: str | None):
    # sft89: DPO trains no critic, yet solve --dpo's fragment and apply lines (no config: PPO's keys) set the critic's
    found, model = _internlm2_plan(version=version)
    written = {".".join(key.path): key.value for key in keys_for_plan(found, model, None, version=version, dpo=True)}
    lines = apply_lines(found, model, version, dpo=True)  # type: ignore[arg-type]
    assert written[SIZES[0]] == 2 and f"{SIZES[0]}: 2" in lines  # the actor's one pair
    assert not [key for key in (*CRITIC_SIZES, *ENGINE_SIZES) if key in written or f"{key}: 1" in lines]
    assert not any("the critic's" in line for line in lines)


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_the_settings_of_every_release_set_the_same_keys(version: str | None):
    found, model = _internlm2_plan(version=version)
    written = _dotted(plan_settings(found, model, version=version).config)  # type: ignore[arg-type]
    assert {key: written.get(key) for key in ["trainer.use_dynamic_bsz", *SIZES, *CRITIC_SIZES]} == {
        "trainer.use_dynamic_bsz": False, **{key: 1 for key in SIZES + CRITIC_SIZES}}
    qwen3 = _dotted(plan_settings(found, load_catalog().model("8B"), version=version).config)  # type: ignore[arg-type]
    assert not [key for key in qwen3 if "micro_batch" in key or "dynamic" in key]


@pytest.mark.parametrize(("length", "gpu"), [(8192, "l40s"), (32768, "h100"), (40960, "h20")])
def test_one_sequence_fits_the_budget_the_plan_is_estimated_at(length: int, gpu: str):
    # one sequence is at most max_model_len tokens: every plan of such a model is at SP=1 (sp_attention), where the
    # least budget verl takes is the length itself
    found, _ = _internlm2_plan(length, gpu)
    assert found.sp == 1 and found.max_token_len_per_gpu >= found.max_model_len == length


def _problems(config: dict[str, Any], version: str | None = None, model: Any = None) -> list[tuple[str, str]]:
    """The dynamic batch and micro-batch problems of `config` for `model` (InternLM2-7B's) on 4 GPUs."""
    found = trinity_config_problems(config, model or load_model_config(INTERNLM2), 4,
                                    version=version)  # type: ignore[arg-type]
    return [(problem.code.value, problem.words) for problem in found
            if problem.code.value.startswith(("micro-batch", "dynamic-batch"))]


def _off(algorithm: str | None = None, **sizes: Any) -> dict[str, Any]:
    """A config with remove padding and dynamic batch sizes off, its `algorithm`, and micro-batch `sizes` (by the
    dotted key under ``trainer``)."""
    trainer: dict[str, Any] = json.loads(json.dumps({**PADDING_OFF, "use_dynamic_bsz": False}))
    for key, value in sizes.items():
        *sections, name = key.split(".")
        node = trainer
        for section in sections:
            node = node.setdefault(section, {})
        node[name] = value
    return {"trainer": trainer, **({"algorithm": {"algorithm_type": algorithm}} if algorithm else {})}


def test_check_flags_dynamic_batching_on_or_unset_for_such_a_model_in_place_of_dynamic_batch_off():
    assert _problems({"trainer": PADDING_OFF}) == [
        ("micro-batch-unbounded", f"trainer.use_dynamic_bsz is not set, so true (Trinity's default): {WHY}")]
    role_on = {"trainer": {**PADDING_OFF, "use_dynamic_bsz": False, "trainer_config": {"actor_rollout_ref": {
        "model": {"use_remove_padding": False}, "actor": {"use_dynamic_bsz": True}}}}, "algorithm": {
        "algorithm_type": "grpo"}}
    scope = ACTOR_FLAG_SCOPE
    assert _problems(role_on, "0.5") == [
        ("micro-batch-unbounded", f"{ARR}.actor.use_dynamic_bsz is true: {WHY} ({scope})")]
    # a model of transformers' own code: dynamic batching off is the problem, as before, and with it off the trained
    # critic's forward size unset, which verl before 0.8 cannot split a batch by (test_batchcritic_s75), refused beside
    # its engine's sizes unset, which verl 0.8 or later cuts its passes by (critic87)
    qwen3 = load_catalog().model("8B")
    assert [code for code, _ in _problems({"trainer": {"use_dynamic_bsz": False}}, model=qwen3)] == [
        "dynamic-batch-off", "micro-batch-unset-refused", "micro-batch-unset"]
    assert _problems({"trainer": {"use_dynamic_bsz": True}}, model=qwen3) == []


def test_check_flags_a_micro_batch_of_more_than_one_sequence():
    assert _problems(_off("grpo", **{"trainer_config.actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu": 4}),
                     "0.5") == [("micro-batch-unbounded", (
                         f"{ARR}.ref.log_prob_micro_batch_size_per_gpu is 4: with dynamic batch sizes off a "
                         "micro-batch takes that many sequences, padded to the longest, which the token budget does "
                         "not bound: set it to 1"))]
    # dynamic batching on: the sizes are unread, the line on the flag says it
    on = _off("grpo", **{"trainer_config.actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu": 4})
    on["trainer"]["use_dynamic_bsz"] = True
    assert [words.split(":")[0] for _, words in _problems(on, "0.5")] == ["trainer.use_dynamic_bsz is true"]


@pytest.mark.parametrize(("algorithm", "version", "unset"), [
    ("grpo", "0.5", []),
    ("grpo", "0.6", SIZES),
    ("grpo", None, SIZES),
    (None, "0.5", CRITIC_SIZES[1:]),  # Trinity's default algorithm, ppo, trains a critic
    ("ppo", "0.6", [*SIZES, *CRITIC_SIZES]),
    ("ppo", None, [*SIZES, *CRITIC_SIZES]),
])
def test_check_flags_a_micro_batch_size_left_unset_where_a_release_hands_verl_none(
        algorithm: str | None, version: str | None, unset: list[str]):
    forward = {"0.5": "Trinity 0.5 gives", "0.6": "Trinity 0.6 on verl before 0.8 gives",
               None: "Trinity 0.5, and 0.6 on verl before 0.8, give"}[version]
    words = {key: ON_08 for key in [*SIZES, CRITIC_SIZES[0]]}
    words[CRITIC_SIZES[1]] = (f"{forward} the critic's value forward none, by which verl cannot split a batch, so it "
                              "fails")
    # the critic's forward fails before verl 0.8, the others on 0.8 or later: together, on every verl (s72)
    if CRITIC_SIZES[1] in unset and version != "0.5":
        words[CRITIC_SIZES[1]] += ("; verl 0.8 or later refuses the sizes above left without one, so the config runs "
                                   "on no verl")
    refused = {CRITIC_SIZES[1]}
    # a trained critic's engine, which verl 0.8 or later cuts its passes by, unsized (critic87)
    engine = [] if algorithm != "ppo" else [("micro-batch-unset", (
        f"{' and '.join(ENGINE_SIZES)} are not set: Trinity 0.6 on verl 0.8 or later builds the critic's engine from "
        f"{CRITIC}.fsdp and copies neither of the critic's own micro-batch sizes into it, so with dynamic batch sizes "
        "off verl cuts the critic's passes by none and fails at its first value forward (force_group_size * None: "
        "workers/engine/utils.py:91-93 in verl 0.8.0, :125-127 in 0.9.0 and 0.9.1): set them to 1 "
        "(solver.trinity.patch_trinity_config does)"
        + ("; Trinity 0.5 refuses trainer.trainer_config.critic.fsdp, so leave it out there" if version is None
           else "")))]
    assert _problems(_off(algorithm), version) == [
        ("micro-batch-unset-refused" if key in refused else "micro-batch-unset",
         f"{key} is not set: {words[key]}: set it to 1 (solver.trinity.patch_trinity_config does)") for key in unset
    ] + engine
    every = {key.removeprefix("trainer."): 1 for key in SIZES + CRITIC_SIZES + ENGINE_SIZES}
    assert _problems(_off(algorithm, **every), version) == []


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_write_bounds_a_config_that_batches_dynamically_then_it_checks_clean(
        cli: Cli, tmp_path: Path, version: str | None):
    config = yaml.safe_load(EXAMPLE.read_text())
    config["algorithm"]["algorithm_type"] = "ppo"  # a critic too
    config["trainer"]["use_dynamic_bsz"] = True
    config["trainer"].setdefault("trainer_config", {})["actor_rollout_ref"] = {"actor": {
        "use_dynamic_bsz": True, "ppo_micro_batch_size_per_gpu": 8, "ppo_micro_batch_size": 16}}
    given, written = tmp_path / "given.yaml", tmp_path / "written.yaml"
    given.write_text(yaml.safe_dump(config))
    flags = ("--model-config", str(INTERNLM2), "--gpu", "h100", *(("--trinity-version", version) if version else ()),
             "--check")
    status, out, err = cli("--from-config", str(given), *flags, "--json")
    current = json.loads(out)[0]["current"]
    # padded88: a padded micro-batch past the one sequence the verdict counts, where one each fits every verl line:
    # --check fails (it passed), the verdict at the 32768 tokens the estimate counts (it said the unread 65536)
    assert (status, current["trains"], current["refused"]) == (1, False, False), err
    assert current["config_problem_codes"][:2] == ["micro-batch-unbounded"] * 2
    assert ("it fits in memory at 32768 tokens per GPU (estimated: " in current["verdict"]
            and "but the config lets a GPU take more, which this verdict does not vouch for" in current["verdict"])
    status, _, err = cli("--from-config", str(given), *flags, "--write", str(written))
    assert status == 1, err  # the config's own settings, not the written copy's
    keys = _dotted(yaml.safe_load(written.read_text()))
    assert {key: keys.get(key, "unset") for key in ["trainer.use_dynamic_bsz", f"{ARR}.actor.use_dynamic_bsz",
                                                    *SIZES, *CRITIC_SIZES, f"{ARR}.actor.ppo_micro_batch_size"]} == {
        "trainer.use_dynamic_bsz": False, f"{ARR}.actor.use_dynamic_bsz": False,
        **{key: 1 for key in SIZES + CRITIC_SIZES}, f"{ARR}.actor.ppo_micro_batch_size": None}  # null: read as unset
    status, out, err = cli("--from-config", str(written), *flags, "--json")
    # the critic, which the memory model does not count, is said as for any model (test_json)
    assert (status, json.loads(out)[0]["current"]["config_problem_codes"]) == (0, ["critic-trained"]), err


def test_verls_own_key_beside_a_micro_batch_size_is_no_misspelling_of_it():
    qwen3 = load_catalog().model("8B")

    def codes(key: str) -> list[str]:
        config = {"trainer": {"trainer_config": {"actor_rollout_ref": {"actor": {key: 2}}}}}
        return [problem.code.value for problem in trinity_config_problems(config, qwen3, 8, version="0.6")]

    # verl 0.8's actor key: no misspelling, but Trinity 0.6 on verl before 0.8 drops it (release06, s82)
    assert codes("ppo_infer_micro_batch_size_per_gpu") == ["key-dropped"]
    assert codes("ppo_micro_batch_size_per_gp") == ["misspelt-key"]


def test_a_padded_models_unread_critic_flag_counts_where_a_critic_is_trained_and_read():
    # mutants48: memory_unread_padded lists a flag whose value changes which of a padded model's passes run with dynamic
    # batch sizes on: the critic's own, before verl 0.8 (Trinity 0.6 sets it to the trainer's), where a critic trains
    text = ("model: {{model_path: Qwen/Qwen3-8B, max_model_len: 32768}}\ncluster: {{node_num: 1, gpu_per_node: 8}}\n"
            "algorithm: {{algorithm_type: {algorithm}}}\n"
            "trainer: {{use_dynamic_bsz: false, trainer_config: {{critic: {{use_dynamic_bsz: '${{oc.env:DYN}}'}}}}}}\n")
    read = {(algorithm, version): read_trinity_config(text.format(algorithm=algorithm), "trinity.yaml", {}, version)
            for algorithm in ("grpo", "ppo") for version in (None, "0.6")}
    assert {key: (config.memory_unread_padded, config.memory_unread) for key, config in read.items()} == {
        ("grpo", None): ((), ()), ("grpo", "0.6"): ((), ()),
        ("ppo", None): (("trainer.trainer_config.critic.use_dynamic_bsz",), ()), ("ppo", "0.6"): ((), ())}


def test_a_padded_models_unread_critic_engine_flag_counts_where_verl_08_runs_the_critic_by_it():
    # lastread87: the critic's engine's own flag, which Trinity 0.6 on verl 0.8 or later runs a trained critic's passes
    # by (on: micro-batch-unbounded), unread here leaves the verdict unknown (it said "it trains" and --check passed)
    text = ("model: {{model_path: Qwen/Qwen3-8B, max_model_len: 32768}}\ncluster: {{node_num: 1, gpu_per_node: 8}}\n"
            "algorithm: {{algorithm_type: {algorithm}}}\ntrainer: {{use_dynamic_bsz: false, trainer_config: {{"
            "critic: {{fsdp: {{use_dynamic_bsz: '${{oc.env:DYN}}'}}}}}}}}\n")
    read = {(algorithm, version): read_trinity_config(text.format(algorithm=algorithm), "trinity.yaml", {}, version)
            for algorithm in ("grpo", "ppo") for version in (None, "0.5", "0.6")}
    engine = ("trainer.trainer_config.critic.fsdp.use_dynamic_bsz",)
    assert {key: config.memory_unread_padded for key, config in read.items()} == {
        ("grpo", None): (), ("grpo", "0.5"): (), ("grpo", "0.6"): (),
        ("ppo", None): engine, ("ppo", "0.5"): (), ("ppo", "0.6"): engine}


def test_check_emit_says_a_padded_dpo_pairs_tokens_and_the_unbounded_micro_batch_it_points_to(cli: Cli,
                                                                                              tmp_path: Path):
    # mutants48: a padded model's DPO verdict fits at a pair's tokens (2 x 8192, what its estimate counts), and
    # --check's notes with --emit (no view) name the micro-batch-unbounded line the verdict points to
    config = tmp_path / "trinity.yaml"
    config.write_text(
        "model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\nmode: train\nalgorithm: {algorithm_type: dpo}\n"
        "cluster: {node_num: 1, gpu_per_node: 8}\nbuffer: {train_batch_size: 64, trainer_input: {experience_buffer: {"
        "path: /data/dpo.jsonl}}}\ntrainer: {use_dynamic_bsz: true, "
        "use_remove_padding: false, trainer_config: {actor_rollout_ref: {model: {use_remove_padding: false}, actor: {"
        "ppo_micro_batch_size_per_gpu: 1}, ref: {log_prob_micro_batch_size_per_gpu: 1}, rollout: {"
        "log_prob_micro_batch_size_per_gpu: 1}}}}\n", encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--model-config", str(INTERNLM2), "--gpu", "h100", "--check",
                         "--emit", "trinity", "--trinity-version", "0.6")
    said = [line for line in err.splitlines() if line.startswith("solve: H100-80GB: --check: ")]
    assert status == 1 and len(said) == 2
    assert ": it fits in memory at 16384 tokens per GPU (estimated: " in said[0]
    why = WHY.replace("solver.trinity.patch_trinity_config does", "--write does")  # the command's words
    assert said[1] == f"solve: H100-80GB: --check: trainer.use_dynamic_bsz is true: {why}"


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_the_rollouts_own_dynamic_flag_is_judged_as_the_refs(version: str | None):
    # checks88: Trinity 0.5, and 0.6 on verl before 0.8, run the actor's log-prob recompute by the rollout's own
    # log_prob_use_dynamic_bsz (0.6 on verl 0.8 or later by the trainer's): on, for a padded model, it pads that pass's
    # micro-batches past the budget as the ref's own does (it got no line), and --write turns it off; off, for any
    # other model, it ignores the budget (dynamic-batch-off), and --write turns it back on
    flag = f"{ARR}.rollout.log_prob_use_dynamic_bsz"
    scope = ("on verl before 0.8 only: Trinity 0.6 on verl 0.8 or later ignores the roles' own token budgets and "
             "dynamic-batch keys, taking the trainer's")
    sizes = {key.removeprefix("trainer."): 1 for key in SIZES}
    padded = _off("grpo", **sizes, **{flag.removeprefix("trainer."): True})
    assert _problems(padded, version) == [("micro-batch-unbounded", f"{flag} is true: {WHY} ({scope})")]
    other = {"algorithm": {"algorithm_type": "grpo"}, "trainer": {"trainer_config": {"actor_rollout_ref": {
        "rollout": {"log_prob_use_dynamic_bsz": False}}}}}
    qwen3 = load_catalog().model("8B")
    assert _problems(other, version, qwen3) == [("dynamic-batch-off", (
        f"{flag} is false: verl then ignores the token budget (max_token_len_per_gpu), which the tables measured and "
        f"the plan sets, and fills micro-batches by sequence count: set it to true ({scope})"))]
    found, model = _internlm2_plan(version=version)
    path = tuple(flag.split("."))
    assert [{key.path: key.value for key in keys_for_plan(found, written, config, version=version)}.get(path)
            for written, config in ((model, padded), (qwen3, other))] == [False, True]


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_the_rollouts_flag_left_none_beside_the_actors_runs_its_pass_in_rows(version: str | None):
    # rowsflag88: Trinity 0.6 on verl before 0.8 fills the rollout's log_prob_use_dynamic_bsz from the actor's own as
    # written, so with neither set it is none, which verl 0.7.1 reads as off: the actor's log-prob recompute, which
    # its legacy trainer runs with rollout_correction.bypass_mode false, runs in rows of the actor's 4 whatever
    # trainer.use_dynamic_bsz says, 4 x 8192 tokens, above the verdict's default
    roles = {"actor": {"ppo_micro_batch_size_per_gpu": 4}}
    sized = _config(roles, use_dynamic_bsz=True)
    assert "token-budget-above-verdict" not in dict(_verdict(sized, version)[1])  # bypass_mode true, its default
    sized["trainer"]["trainer_config"]["algorithm"] = {"rollout_correction": {"bypass_mode": False}}
    legacy = version != "0.5"  # Trinity 0.5 gives the actor's unset the trainer's first
    above = ("dynamic batch sizes off for the actor's log-prob recompute: verl reads no token budget there and fills "
             "each micro-batch with 4 sequences (the actor's micro-batch size per GPU on Trinity 0.6 with verl before "
             "0.8, whose trainer recomputes the old log-probs with rollout_correction.bypass_mode false, and where "
             "neither the rollout's log_prob_use_dynamic_bsz nor the actor's use_dynamic_bsz is set: "
             "Trinity leaves the rollout's none, which verl reads as off, whatever trainer.use_dynamic_bsz says; set "
             "the rollout's to true), up to 4 x ceil(8192 / 1) = 32768 tokens per GPU, more than Trinity's default "
             "ceil(2 x 8192 / 1) = 16384, which the tables measured: more tokens per GPU than the verdict assumes; "
             "set the micro-batch sizes to 1, or turn dynamic batch sizes on")
    assert [line for line in _verdict(sized, version)[1] if line[0] == "token-budget-above-verdict"] == (
        [("token-budget-above-verdict", above)] if legacy else [])
    # --write sets the rollout's to true, after which the pass takes the budget; either flag set, or the actor's 1
    # (a sequence per micro-batch, within any budget the verdict takes), gets no line either
    found, _ = _internlm2_plan(version=version)
    path = (*ARR.split("."), "rollout", "log_prob_use_dynamic_bsz")
    written = {key.path: key.value for key in keys_for_plan(found, load_catalog().model("8B"), sized, version=version)}
    assert written.get(path, "unset") == (True if legacy else "unset")
    for fixed in ({**roles, "rollout": {"log_prob_use_dynamic_bsz": True}},
                  {"actor": {"ppo_micro_batch_size_per_gpu": 4, "use_dynamic_bsz": True}},
                  {"actor": {"ppo_micro_batch_size_per_gpu": 1}}) if legacy else ():  # 0.5 gave no line
        config = _config(fixed, use_dynamic_bsz=True)
        config["trainer"]["trainer_config"]["algorithm"] = {"rollout_correction": {"bypass_mode": False}}
        assert "token-budget-above-verdict" not in dict(_verdict(config, version)[1])
    # mutants52: nor does --write set the rollout's flag beside the actor's 1, which its rows of one sequence hold
    one = _config({"actor": {"ppo_micro_batch_size_per_gpu": 1}}, use_dynamic_bsz=True)
    one["trainer"]["trainer_config"]["algorithm"] = {"rollout_correction": {"bypass_mode": False}}
    assert path not in {key.path for key in keys_for_plan(found, load_catalog().model("8B"), one, version=version)}
    # the actor's own flag counts on 0.6 with verl before 0.8, for that pass: its line says so
    off = _config({"actor": {"use_dynamic_bsz": False}}, use_dynamic_bsz=True)
    assert _problems(off, version, load_catalog().model("8B")) == [("dynamic-batch-off", (
        f"{ARR}.actor.use_dynamic_bsz is false: verl then ignores the token budget (max_token_len_per_gpu), which the "
        f"tables measured and the plan sets, and fills micro-batches by sequence count: set it to true "
        f"({ACTOR_FLAG_SCOPE})"))]


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_a_deprecated_whole_batch_size_is_unbounded_only_where_verl_before_08_takes_more_than_one(version: str | None):
    # checks88: verl before 0.8 takes a deprecated size for the whole batch over the 4 data-parallel ranks: the actor's
    # 4 is one sequence per GPU, as the verdict counts, so only verl 0.8's refusal of it is said, a line of that verl
    # line's that fails nothing (none with 0.5); the ref's 8 is two, padded past the budget: micro-batch-unbounded
    sizes = {key.removeprefix("trainer."): 1 for key in SIZES}
    config = _off("grpo", **sizes, **{f"trainer_config.actor_rollout_ref.{key}": size for key, size in (
        ("actor.ppo_micro_batch_size", 4), ("ref.log_prob_micro_batch_size", 8))})
    before = "Trinity 0.5's verl" if version == "0.5" else "verl before 0.8"
    on_08 = "verl 0.8 or later refuses it beside the per-GPU size as the trainer starts (a ValueError: both set)"
    fix = "remove it, or set it to null, read as unset (solver.trinity.patch_trinity_config does)"
    one = [] if version == "0.5" else [("micro-batch-deprecated-size", (
        f"{ARR}.actor.ppo_micro_batch_size is 4: a deprecated size for the whole batch, which {before} takes over the "
        "per-GPU size, 4 over the 4 data-parallel ranks (trainer GPUs 4 / SP 1) = 1 sequence per micro-batch, as the "
        f"verdict counts; but {on_08}: {fix}"))]
    assert _problems(config, version) == [*one, ("micro-batch-unbounded", (
        f"{ARR}.ref.log_prob_micro_batch_size is 8: a deprecated size for the whole batch, which {before} takes over "
        "the per-GPU size, 8 over the 4 data-parallel ranks (trainer GPUs 4 / SP 1) = 2 sequences per micro-batch, "
        f"padded to the longest, which the token budget does not bound{'' if version == '0.5' else f', and {on_08}'}: "
        f"{fix}"))]
    # the one-sequence line neither refuses the config nor lets a GPU take more than the verdict: --check passes on it
    assert ConfigProblemCode.MICRO_BATCH_DEPRECATED_SIZE not in BUDGET_ABOVE_VERDICT_CODES | REFUSED_CONFIG_CODES
    # --write nulls both, as before
    found, model = _internlm2_plan(version=version)
    written = {key.path: key.value for key in keys_for_plan(found, model, config, version=version)}
    assert [written.get((*ARR.split("."), *key.split(".")), "unset") for key in (
        "actor.ppo_micro_batch_size", "ref.log_prob_micro_batch_size")] == [None, None]


def test_a_deprecated_whole_batch_size_counted_whole_says_one_sequence_in_the_singular():
    # lastread87: with no trainer GPUs to divide it by, the actor's deprecated size 1 is 1 sequence, not "1 sequences"
    sizes = {key.removeprefix("trainer."): 1 for key in SIZES}
    config = _off("grpo", **sizes, **{"trainer_config.actor_rollout_ref.actor.ppo_micro_batch_size": 1})
    found = trinity_config_problems(config, load_model_config(INTERNLM2), 0)  # type: ignore[arg-type]
    words = [problem.words for problem in found if problem.code == ConfigProblemCode.MICRO_BATCH_DEPRECATED_SIZE]
    assert len(words) == 1 and ", counted whole, 1 sequence per micro-batch, as no trainer GPUs " in words[0]


def test_the_rollouts_flag_left_none_counts_its_own_size_and_only_past_one_sequence():
    # mutants49: the rollout's own size, the actor's unset, runs its pass in rows and --write sets its flag; a size of
    # 1, a sequence within any budget, is not counted and writes no flag; with trainer.use_dynamic_bsz false the pass
    # is counted in rows anyway, and its line names no left-none flag
    path = (*ARR.split("."), "rollout", "log_prob_use_dynamic_bsz")
    found, _ = _internlm2_plan(version="0.6")
    qwen3 = load_catalog().model("8B")
    legacy = {"algorithm": {"rollout_correction": {"bypass_mode": False}}}
    own, one = ({"rollout": {"log_prob_micro_batch_size_per_gpu": 4}}, {"actor": {"ppo_micro_batch_size_per_gpu": 1}})
    written = []
    for roles in (own, one):
        config = _config(roles, use_dynamic_bsz=True)
        config["trainer"]["trainer_config"].update(legacy)
        written.append([key.value for key in keys_for_plan(found, qwen3, config, version="0.6") if key.path == path])
        read = read_trinity_config(yaml.safe_dump(config), "c.yaml", {}, "0.6")  # type: ignore[arg-type]
        assert read.micro_batch_sequences == (
            ((f"{ARR}.rollout.log_prob_max_token_len_per_gpu", 4),) if roles is own else ())
    assert written == [[True], []]
    trainer_off = _config({"actor": {"ppo_micro_batch_size_per_gpu": 4}})
    trainer_off["trainer"]["trainer_config"].update(legacy)
    assert [words for code, words in _verdict(trainer_off, "0.6")[1] if code == "token-budget-above-verdict"] == [(
        "dynamic batch sizes off: verl reads no token budget and fills each micro-batch with 4 sequences (the largest "
        "micro-batch size per GPU, 1 where unset), up to 4 x ceil(8192 / 1) = 32768 tokens per GPU, more than "
        "Trinity's default ceil(2 x 8192 / 1) = 16384, which the tables measured: more tokens per GPU than the verdict "
        "assumes; set the micro-batch sizes to 1, or turn dynamic batch sizes on")]
