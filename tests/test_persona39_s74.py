"""A platform engineer scripting rft-solver (persona 39: every command with --json, validated against the schemas,
exit statuses, files and error lines): what disagreed with the docs or misled a script, each fixed here."""

from __future__ import annotations

import json
from pathlib import Path

from config_cases import one_node_rollout

from solver.tables import load_trinity_fields

CONFIG_8K = """\
algorithm:
  algorithm_type: grpo
  repeat_times: 8
buffer:
  batch_size: 96
model:
  model_path: Qwen/Qwen3-8B
  max_prompt_tokens: 2048
  max_response_tokens: 6144
  max_model_len: 8192
""" + one_node_rollout(2) + """\
trainer:
  save_interval: 100
"""
"""A config whose settings train (vanilla on six H20s at 8192 tokens: documented), for `--check` to pass."""


def _check(cli, tmp_path: Path, text: str) -> tuple[int, dict]:
    """`solve --from-config --check --gpu h20 --json` of `text`: its exit status and its one answer's `current`."""
    config = tmp_path / "trinity.yaml"
    config.write_text(text)
    status, out, _ = cli("--from-config", str(config), "--check", "--gpu", "h20", "--json")
    (answer,) = json.loads(out)
    return status, answer["current"]


def test_the_config_as_given_passes_the_check(cli, tmp_path: Path):
    status, current = _check(cli, tmp_path, CONFIG_8K)
    assert (status, current["trains"], current["refused"], current["config_problem_codes"]) == (0, True, False, [])


def test_a_key_no_trinity_release_has_is_refused(cli, tmp_path: Path):
    """Trinity's load_config merges the file into its typed Config, which refuses a key it lacks in every release:
    --check passed such a config (exit 0, "it trains"), which Trinity then refused as it loaded it."""
    status, current = _check(cli, tmp_path, CONFIG_8K.replace("save_interval: 100", "save_interval: 100\n  foo_bar: 1"))
    assert status == 1 and current["refused"] is True
    assert current["config_problem_codes"] == ["no-such-key-refused"]
    assert current["config_problems"] == [(
        "trainer.foo_bar: no release of Trinity (0.5.0 to 0.6.0) has this key there, so Trinity refuses the config (it "
        "knows no such key): remove it, or move it where Trinity reads it")]


def test_a_misspelt_key_is_said_once_with_the_key_it_means(cli, tmp_path: Path):
    status, current = _check(cli, tmp_path, CONFIG_8K.replace("trainer:", "trainr:"))
    assert status == 1 and current["config_problem_codes"] == ["misspelt-key-refused"]


def test_keys_under_a_field_typed_any_are_not_refused(cli, tmp_path: Path):
    """``trainer.trainer_config`` is typed Any: Trinity's ``load_config`` keeps what a config writes there, and 0.6 on
    verl before 0.8 drops a key its veRLConfig lacks (`key-dropped`, release06 s82); without a release, the line says
    that 0.5's veRLConfig refuses it too (`verl-key`, algorelease s82), which refuses nothing."""
    text = CONFIG_8K + "  trainer_config:\n    my_own_section: {anything: 1}\n"
    status, current = _check(cli, tmp_path, text)
    assert (status, current["config_problem_codes"]) == (0, ["verl-key"])


def test_a_key_of_one_release_is_not_refused_without_a_release(cli, tmp_path: Path):
    """Trinity 0.6's rollout ``data_parallel_size`` is a key 0.5 lacks: without --trinity-version it is no such key's
    refusal (with 0.5, `unknown-key-refused` says it)."""
    text = CONFIG_8K.replace("tensor_parallel_size: 1", "tensor_parallel_size: 1\n    data_parallel_size: 1")
    status, current = _check(cli, tmp_path, text)
    assert (status, current["refused"], current["config_problem_codes"]) == (0, False, [])


def test_the_keys_every_release_lacks_in_a_list_of_sections_and_in_order():
    config = {"zzz": 1, "buffer": {"explorer_input": {"eval_tasksets": [{"name": "a", "bogus": 2}]}},
              "trainer": {"trainer_config": {"free": 1}, "save_intervall": 3}, "aaa": 4}
    every = tuple(load_trinity_fields().releases)
    assert list(load_trinity_fields().lacking(config).items()) == [
        (("zzz",), every), (("buffer", "explorer_input", "eval_tasksets", 0, "bogus"), every),
        (("trainer", "save_intervall"), every), (("aaa",), every)]


def test_a_key_yaml_reads_as_no_text_is_refused_as_yaml_writes_it(cli, tmp_path: Path):
    """``2:``, ``null:``, ``1.5:`` and ``true:`` are keys YAML reads as a number, null or a boolean, which no typed
    section has: Trinity's merge refuses them ("Key '2' not in 'Trainer'"; a null key's type), so --check does (it
    skipped them)."""
    text = CONFIG_8K.replace("save_interval: 100", "save_interval: 100\n  2: x\n  null: y\n  1.5: z\n  true: w")
    status, current = _check(cli, tmp_path, text)
    assert (status, current["refused"]) == (1, True)
    assert [problem.split(":")[0] for problem in current["config_problems"]] == [
        "trainer.2", "trainer.null", "trainer.1.5", "trainer.true"]
    assert set(current["config_problem_codes"]) == {"no-such-key-refused"}


def test_a_slip_of_a_key_no_release_has_names_the_field_its_section_lacks(cli, tmp_path: Path):
    """A migrating user's slip of a key rft-solver does not read (``save_intervall``) got 'remove it, or move it where
    Trinity reads it', not the key meant (persona 89a); a slip of one its section has already names none."""
    status, current = _check(cli, tmp_path, CONFIG_8K.replace("save_interval: 100", "save_intervall: 100"))
    assert status == 1 and current["config_problem_codes"] == ["no-such-key-refused"]
    assert current["config_problems"] == [(
        "trainer.save_intervall: no release of Trinity (0.5.0 to 0.6.0) has this key there, so Trinity refuses the "
        "config (it knows no such key): did you mean save_interval? Rename it, or remove it")]
    both = CONFIG_8K.replace("save_interval: 100", "save_interval: 100\n  save_intervl: 1")
    status, current = _check(cli, tmp_path, both)
    assert current["config_problems"][0].endswith("remove it, or move it where Trinity reads it")
    # a top-level slip of a section the config lacks names it, with no word of parking YAML anchors there
    status, current = _check(cli, tmp_path, "monitr:\n  project: p\n" + CONFIG_8K)
    assert current["config_problems"] == [(
        "monitr: no release of Trinity (0.5.0 to 0.6.0) has this key there, so Trinity refuses the config (it knows no "
        "such key): did you mean monitor? Rename it, or remove it")]


def test_a_reference_to_nothing_in_a_key_not_read_refuses_the_config(cli, tmp_path: Path):
    """Trinity resolves every value as it loads the config, so ``name: ${project_name}`` with no such key refuses it;
    --check passed it (exit 0: only the keys rft-solver reads were resolved). One whose variable the run may set
    (``${oc.env:RUN}``) is still left to the run's environment (persona 89a)."""
    status, current = _check(cli, tmp_path, "name: ${project_name}-8k\n" + CONFIG_8K)
    assert (status, current["refused"], current["config_problem_codes"]) == (1, True, ["unresolved-value-refused"])
    assert current["config_problems"] == [(
        "name: cannot resolve '${project_name}': the config has no project_name; every Trinity release refuses the "
        "config as it loads it (OmegaConf resolves each value then)")]
    status, current = _check(cli, tmp_path, "name: ${oc.env:RFT_SOLVER_UNSET_89}\n" + CONFIG_8K)
    assert (status, current["config_problem_codes"]) == (0, [])
    # nor one to a key the config lacks that Trinity's typed Config fills in with its default
    status, current = _check(cli, tmp_path, "name: ${synchronizer.sync_interval}-8k\n" + CONFIG_8K)
    assert (status, current["config_problem_codes"]) == (0, [])
