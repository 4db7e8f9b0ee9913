"""What Trinity 0.5 refuses as it loads a config (s82, helper algorelease): an ``algorithm.algorithm_type`` the
release's ``ALGORITHM_TYPE`` registry lacks (``dapo``, ``cpt``, ``gigpo`` under 0.5: ``Invalid module key``), and a key
under ``trainer.trainer_config`` that 0.5's typed ``veRLConfig`` lacks (its ``OmegaConf.merge`` refuses it, where 0.6.0
on verl before 0.8 drops it). Each release's algorithm types and 0.5's ``veRLConfig`` key sets are read from the
wheels into ``tables/trinity-fields.yaml`` (``algorithms``, ``verl_merged``) by ``benchmarks/trinity_fields.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from benchmark_modules import load_benchmark
from config_cases import ARR, config_lines, with_key, written
from test_release06_s82 import PASSED_08
from test_smallslips24_s77 import Cli

from solver.tables import load_catalog, load_trinity_fields
from solver.tables.inputs import TrinityFields
from solver.tables.loaders import TableError, load_validated
from solver.trinity import read_trinity_config, trinity_config_problems

ALGORITHMS_05 = ("asymre, cispo, dpo, grpo, gspo, mix, mix_chord, multi_step_grpo, on_policy_distill, opmd, ppo, raft, "
                 "rec, reinforceplusplus, rloo, sapo, sft, sppo, topr")
"""The algorithm types every Trinity 0.5 release has (0.5.0's)."""
KL = f"{ARR}.actor.kl_loss_coef"
REFUSED_05 = "Trinity 0.5 refuses the config as it loads it (its veRLConfig has no such key there)"


def _problems(config: dict[str, Any], version: str | None, trainer_gpus: int = 4) -> list[tuple[str, str]]:
    return [(problem.code.value, problem.words) for problem in trinity_config_problems(
        config, load_catalog().model("Qwen3-8B"), trainer_gpus, version=version)]


def test_the_table_holds_each_releases_algorithms_and_05s_merged_veRLConfig():
    releases = load_trinity_fields().releases
    assert ", ".join(releases["0.5.0"].algorithms) == ALGORITHMS_05
    added = {name: sorted(set(release.algorithms) - set(releases["0.5.0"].algorithms))
             for name, release in releases.items()}
    assert added == {"0.5.0": [], "0.5.1": ["jsd"], "0.5.2": ["grpo_verl", "jsd"],
                     "0.6.0": ["cpt", "dapo", "gigpo", "grpo_verl", "jsd"]}
    assert [name for name, release in releases.items() if release.verl_merged] == ["0.5.0", "0.5.1", "0.5.2"]
    merged_00, merged_02 = releases["0.5.0"].verl_merged, releases["0.5.2"].verl_merged
    assert merged_00 is not None and merged_02 is not None
    assert "kl_loss_coef" not in merged_00.sections["actor_rollout_ref.actor"]
    # 0.5.0's Checkpoint is its own; 0.5.2's _CheckpointConfig is built on verl's: open, not judged
    assert merged_00.sections["actor_rollout_ref.actor.checkpoint"] == ("async_save", "load_contents", "save_contents")
    assert "actor_rollout_ref.actor.checkpoint" in merged_02.open
    assert {"actor_rollout_ref.actor.policy_loss", "actor_rollout_ref.model.override_config",
            "synchronizer"} <= set(merged_00.open)


def test_the_algorithm_names_are_read_from_the_registrys_syntax_tree():
    source = ('from trinity.utils.registry import Registry\nOTHER = Registry("x", default_mapping={"no": "a.B"})\n'
              'ALGORITHM_TYPE: Registry = Registry(\n    "algorithm",\n    default_mapping={"sft": "a.SFT", '
              '"dapo": "a.DAPO", "cpt": "a.CPT"},\n)\n')
    assert load_benchmark("trinity_fields").algorithm_names(source) == ["cpt", "dapo", "sft"]


@pytest.mark.parametrize(("extra", "words"), [
    ("    algorithms: [sft, dapo]\n", "releases, 0.5.0: algorithms: not sorted; sort them"),
    ("    algorithms: [Dapo]\n", "releases, 0.5.0: algorithms: 'Dapo' is no algorithm type"),
    ("    algorithms: []\n", "releases, 0.5.0, algorithms: must list at least 1, got []"),
    (('    algorithms: [sft]\n    verl_legacy: {sections: {"": [a]}, open: {}, null: []}\n'
      '    verl_merged: {sections: {"": [a]}, open: {}, null: []}\n'),
     "releases, 0.5.0: verl_legacy and verl_merged are both given; a release builds one of them"),
])
def test_a_malformed_release_is_refused_in_one_line(tmp_path: Path, extra: str, words: str):
    path = tmp_path / "trinity-fields.yaml"
    path.write_text('releases:\n  "0.5.0":\n    sections: {"": [a]}\n    open: {}\n    null: []\n' + extra,
                    encoding="utf-8")
    with pytest.raises(TableError) as refused:
        load_validated(TrinityFields, path)
    assert str(refused.value).startswith(f"{path}: {words}") and "\n" not in str(refused.value)


DAPO_REFUSED = ("algorithm.algorithm_type dapo: Trinity 0.5 has no such algorithm, so it refuses the config as it "
                f"loads it: name one of {ALGORITHMS_05} (or run a release that has it: Trinity 0.6)")


@pytest.mark.parametrize(("algorithm", "version", "expected"), [
    ("dapo", "0.5", [("unknown-algorithm-refused", DAPO_REFUSED)]),
    ("cpt", "0.5", [("unknown-algorithm-refused", DAPO_REFUSED.replace("dapo", "cpt"))]),
    ("dapo", None, [("unknown-algorithm", (
        "algorithm.algorithm_type dapo: Trinity 0.5 has no such algorithm (0.6 has it), so it refuses the config as it "
        "loads it: with it, name another"))]),
    ("gigpo", "0.6", []),
    ("jsd", "0.5", [("unknown-algorithm", (
        "algorithm.algorithm_type jsd: Trinity 0.5.0 has no such algorithm (0.5.1, 0.5.2 and 0.6 have it), so it "
        "refuses the config as it loads it: with it, name another"))]),
    ("grpo_verl", None, [("unknown-algorithm", (
        "algorithm.algorithm_type grpo_verl: Trinity 0.5.0 and 0.5.1 have no such algorithm (0.5.2 and 0.6 have it), "
        "so they refuse the config as they load it: with those, name another"))]),
    ("grpoo", None, [("unknown-algorithm-refused", (
        "algorithm.algorithm_type grpoo: no release of Trinity (0.5.0 to 0.6.0) has this algorithm, so Trinity "
        f"refuses the config as it loads it: name one of {ALGORITHMS_05}; did you mean grpo?"))]),
    ("my_pkg.algorithms.MyAlgorithm", "0.5", []),  # a class's import path, which the registry imports: not judged
    ("grpo", "0.5", []),
])
def test_an_algorithm_the_release_lacks_is_said(algorithm: str, version: str | None,
                                                expected: list[tuple[str, str]]):
    problems = _problems(with_key("algorithm.algorithm_type", algorithm), version)
    assert [line for line in problems if "algorithm" in line[0]] == expected


SFT_MODE = ("Trinity refuses algorithm_type sft in mode both and explore as it loads the config "
            "(trinity/algorithm/algorithm.py:76 in 0.5.0 to 0.6.0): set mode: train, with the dataset as "
            "buffer.trainer_input.experience_buffer (its path, which mode train requires), and plan it again, as in "
            "mode train no explorer runs and the trainer takes the rollout's GPUs too")
DPO_MODE = SFT_MODE.replace("sft", "dpo").replace("76 in 0.5.0 to 0.6.0", "291 in 0.6.0, :248 in 0.5.0 to 0.5.2")


@pytest.mark.parametrize(("algorithm", "mode", "version", "expected"), [
    ("sft", None, None, [("algorithm-mode-refused", f"mode both (unset: Trinity's default): {SFT_MODE}")]),
    ("sft", "both", "0.5", [("algorithm-mode-refused", f"mode both: {SFT_MODE}")]),
    ("sft", "explore", "0.6", [("algorithm-mode-refused", f"mode explore: {SFT_MODE}")]),
    ("cpt", None, "0.6", [("algorithm-mode-refused", (
        "mode both (unset: Trinity's default): " + SFT_MODE.replace("sft", "cpt").replace(
            "76 in 0.5.0 to 0.6.0", "76 in 0.6.0, SFT's, which CPT inherits")))]),
    ("cpt", None, "0.5", [("unknown-algorithm-refused", DAPO_REFUSED.replace("dapo", "cpt"))]),  # that line alone
    ("sft", "train", None, []),
    ("dpo", None, None, [("algorithm-mode-refused", f"mode both (unset: Trinity's default): {DPO_MODE}")]),
    ("dpo", "both", "0.5", [("algorithm-mode-refused", f"mode both: {DPO_MODE}")]),
    ("dpo", "train", "0.6", []),
    # modefix91: every release's check_config raises in both and explore alone; bench and serve run an explorer
    # alone, colocate runs as both on one GPU, and no later step fails on SFT or DPO there
    ("sft", "bench", None, []),
    ("dpo", "serve", "0.5", []),
    ("cpt", "colocate", "0.6", []),
])
def test_sft_outside_mode_train_is_refused(algorithm: str, mode: str | None, version: str | None,
                                           expected: list[tuple[str, str]]):
    # Before, an SFT config in mode both (Trinity's default) was planned with a rollout GPU, no line said Trinity
    # refuses it (SFTAlgorithm.check_config, trinity/algorithm/algorithm.py:76-77 in 0.6.0 and 0.5.2); a DPO one
    # until session 90 (DPOAlgorithm.check_config, :291-292 in 0.6.0, :248-249 in 0.5.2).
    config = with_key("algorithm.algorithm_type", algorithm)
    if mode is not None:
        config["mode"] = mode
    assert [line for line in _problems(config, version) if "algorithm" in line[0]] == expected


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_the_mode_judged_is_the_written_one_on_a_cluster_trinity_would_make_colocate(version: str | None):
    # checks93b: Trinity switches mode to colocate by itself on a one-node one-GPU Ray cluster where the config leaves
    # cluster.node_num or gpu_per_node unset (RayClusterConfigValidator, config_validator.py:204-212 in 0.6.0), but
    # only after AlgorithmConfigValidator has run DPO's check_config on the written mode (its `validators` list,
    # :1839 before :1841 in 0.6.0, :1681 before :1683 in 0.5.0): so the refusal of mode both stands there
    config = with_key("algorithm.algorithm_type", "dpo")
    del config["cluster"]
    config["explorer"]["rollout_model"]["engine_num"] = 0
    assert [line for line in _problems(config, version, trainer_gpus=1) if "algorithm" in line[0]] == [
        ("algorithm-mode-refused", f"mode both (unset: Trinity's default): {DPO_MODE}")]


EXPERIENCE = "buffer.trainer_input.experience_buffer"
INPUT_MISSING = (f": in mode train Trinity trains algorithm_type {{algorithm}} on the dataset at {EXPERIENCE}.path and "
                 "refuses the config without it as it loads it (trinity/algorithm/algorithm.py{line}): set that path to "
                 "the dataset")
SFT_LINE, DPO_LINE = ":73 in 0.5.0 to 0.6.0", ":288 in 0.6.0, :245 in 0.5.0 to 0.5.2"


@pytest.mark.parametrize(("algorithm", "mode", "experience", "version", "expected"), [
    ("dpo", "train", None, None, [f"{EXPERIENCE} is unset" + INPUT_MISSING.format(algorithm="dpo", line=DPO_LINE)]),
    ("dpo", "train", {"path": None}, "0.6", [f"{EXPERIENCE}.path is unset" + INPUT_MISSING.format(
        algorithm="dpo", line=DPO_LINE)]),
    # a name or a storage type alone is no path; an empty one is none (``not ...path``)
    ("sft", "train", {"name": "sft_data", "storage_type": "file"}, "0.5", [
        f"{EXPERIENCE}.path is unset" + INPUT_MISSING.format(algorithm="sft", line=SFT_LINE)]),
    ("sft", "train", {"path": ""}, None, [f"{EXPERIENCE}.path is empty" + INPUT_MISSING.format(
        algorithm="sft", line=SFT_LINE)]),
    ("cpt", "train", None, "0.6", [f"{EXPERIENCE} is unset" + INPUT_MISSING.format(
        algorithm="cpt", line=":73 in 0.6.0, SFT's, which CPT inherits")]),
    ("cpt", "train", None, "0.5", []),  # unknown-algorithm-refused alone
    ("sft", "both", None, None, []),  # algorithm-mode-refused alone
    ("grpo", "train", None, None, []),  # the buffer's validator fills in a default path
    ("dpo", "train", {"path": "/data/dpo.jsonl"}, "0.5", []),
    ("dpo", "train", {"path": 0}, None, []),  # OmegaConf's str field makes it the text "0"
    # mutants55: no other mode requires it (check_config raises in train alone)
    ("sft", "bench", None, None, []),
    ("dpo", "serve", None, "0.5", []),
])
def test_sft_or_dpo_in_mode_train_without_the_datasets_path_is_refused(
        algorithm: str, mode: str, experience: dict[str, Any] | None, version: str | None, expected: list[str]):
    # trainpath91: every release's SFTAlgorithm / DPOAlgorithm.check_config raises where
    # buffer.trainer_input.experience_buffer is None or its path is falsy in mode train, before the buffer's validator
    # would fill in a default path; --check passed such a config.
    config = with_key("mode", mode, with_key("algorithm.algorithm_type", algorithm))
    if experience is not None:
        config["buffer"]["trainer_input"] = {"experience_buffer": experience}
    lines = _problems(config, version)
    assert [words for code, words in lines if code == "trainer-input-missing"] == expected
    assert [code for code, _ in lines if "refused" in code] == (["unknown-algorithm-refused"] if algorithm == "cpt" and
                                                                version == "0.5" else ["algorithm-mode-refused"]
                                                                if mode == "both" else [])


@pytest.mark.parametrize(("algorithm", "expected"), [("grpo", []), ("dpo", ["trainer-input-missing"])])
def test_a_null_trainer_input_is_refused_as_trinitys_typed_config_refuses_it(algorithm: str, expected: list[str]):
    # modefix91: every release's BufferConfig.trainer_input is a TrainerInput, no Optional: load_config refuses a null
    # ("field 'buffer.trainer_input' is not Optional", 0.5.0 to 0.6.0), which rft-solver read as unset, saying nothing
    config = with_key("buffer.trainer_input", None, with_key("mode", "train", with_key(
        "algorithm.algorithm_type", algorithm)))
    text = yaml.safe_dump(config)
    read = read_trinity_config(text, "t.yaml", {})
    notes = [(code.value, words) for code, words in zip(read.note_codes, read.notes, strict=True)]
    assert notes == [("typed-null-refused", (
        "buffer.trainer_input is null, not a mapping: Trinity's typed config refuses it (the section is not Optional), "
        "with every Trinity release and verl version: remove the key for Trinity's defaults, or write a mapping"))]
    assert [code for code, _ in _problems(config, None) if code == "trainer-input-missing"] == expected


def test_check_refuses_a_dpo_config_without_its_dataset_and_write_keeps_the_line(cli: Cli, tmp_path: Path):
    config = written(tmp_path, with_key("mode", "train", with_key("algorithm.algorithm_type", "dpo")))
    lines, refused, check = config_lines(cli, config, EXPERIENCE)
    assert ([line[0] for line in lines], refused, check) == (["trainer-input-missing"], True, 1)
    # --write cannot name the dataset: the copy keeps the refusal, which its warning says
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--write", str(tmp_path / "w.yaml"))
    assert status == 0 and f"solve: warning: {tmp_path / 'w.yaml'}: {EXPERIENCE} is unset: in mode train" in err


def test_check_exits_1_on_an_sft_config_in_mode_both(cli: Cli, tmp_path: Path):
    lines, refused, check = config_lines(cli, written(tmp_path, with_key("algorithm.algorithm_type", "sft")), "mode")
    assert ([line[0] for line in lines], refused, check) == (["algorithm-mode-refused"], True, 1)


@pytest.mark.parametrize(("version", "status", "prefix"), [("0.5.1", 1, "refused:"), (None, 0, "but:")])
def test_check_refuses_dapo_under_05_and_cautions_without_a_release(cli: Cli, tmp_path: Path, version: str | None,
                                                                    status: int, prefix: str):
    config = written(tmp_path, with_key("algorithm.algorithm_type", "dapo"))
    flags = ("--trinity-version", version) if version else ()
    lines, refused, check = config_lines(cli, config, "algorithm.algorithm_type", *flags)
    code = "unknown-algorithm-refused" if version else "unknown-algorithm"
    assert ([line[0] for line in lines], refused, check) == ([code], bool(status), status)
    got, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--check", *flags)
    assert got == status and f"{prefix} algorithm.algorithm_type dapo: Trinity 0.5 has no such algorithm" in " ".join(
        out.split())


@pytest.mark.parametrize(("version", "expected"), [
    ("0.5", [("verl-key-refused", f"{KL}: {REFUSED_05}: remove it")]),
    (None, [("verl-key", f"{KL}: {REFUSED_05}, and {PASSED_08.format('actor')}")]),
    ("0.6", [("key-dropped", f"{KL}: {PASSED_08.format('actor')}")]),
])
def test_a_trainer_config_key_05_lacks_is_refused_under_05(version: str | None, expected: list[tuple[str, str]]):
    assert [line for line in _problems(with_key(KL, 0.01), version)
            if line[0] in ("verl-key-refused", "verl-key", "key-dropped")] == expected


def test_the_key_most_alike_is_named_and_some_05_releases_are_named_alone():
    config = with_key(f"{ARR}.actor.ppo_mini_batchsize", 16)
    config = with_key(f"{ARR}.actor.checkpoint.anything_verl_takes", 1, config)
    assert [line for line in _problems(config, "0.5") if line[0].startswith("verl-key")] == [
        ("verl-key-refused", (f"{ARR}.actor.ppo_mini_batchsize: {REFUSED_05}: remove it; did you mean "
                              "ppo_mini_batch_size?")),
        ("verl-key", (f"{ARR}.actor.checkpoint.anything_verl_takes: Trinity 0.5.0 and 0.5.1 refuse the config as they "
                      "load it (their veRLConfig has no such key there)"))]


def test_keys_05_has_and_keys_below_verls_own_dataclasses_are_not_said():
    config = with_key(f"{ARR}.actor.ppo_mini_batch_size", 16)
    for key, value in ((f"{ARR}.actor.optim.lr", 1e-6), (f"{ARR}.model.override_config.attention_dropout", 0.0),
                       (f"{ARR}.actor.policy_loss.loss_mode", "vanilla"), ("trainer.trainer_config.trainer.nnodes", 1),
                       (f"{ARR}.ref.fsdp_config.param_offload", False), (f"{ARR}.model.rope_scaling.factor", 2.0)):
        config = with_key(key, value, config)
    assert [line for line in _problems(config, "0.5") if line[0].startswith(("verl-key", "key-dropped"))] == []


def test_check_exits_1_on_a_key_05_refuses(cli: Cli, tmp_path: Path):
    config = written(tmp_path, with_key(KL, 0.01))
    lines, refused, check = config_lines(cli, config, KL, "--trinity-version", "0.5.2")
    assert (lines, refused, check) == ([("verl-key-refused", f"{KL}: {REFUSED_05}: remove it")], True, 1)
    assert config_lines(cli, config, KL)[1:] == (False, 0)
