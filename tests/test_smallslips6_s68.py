"""Small slips the session's reviews left (session 68, helper smallslips6): the offload lines' ``save_hf_checkpoint``
comment says the H20 tables do not say only on an H20 plan; a --write config past the validated length says what to
do, once; the margin's JSON description and --margin's help say the same; ``solve cluster --help`` in plain words.
(Its test that a pool of no nodes names both ways to ask what to buy went in session 69, which accepts such a pool:
test_fleetops_s69.py.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from option_reference import option_reference

from solver.cli.cluster import build_cluster_parser
from solver.results import Answer, no_checkpoint_words

Cli = Callable[..., tuple[int, str, str]]
CHECK = "check the model's quality at this length"


@pytest.mark.parametrize(("gpu", "words"), [
    ("A100-80GB", "as in the A100 offload measurements of Trinity-RFT's guide"),
    ("H20-96GB", "as in the A100 offload measurements of Trinity-RFT's guide (its H20 tables do not say)"),
    ("H100-80GB", "as in the A100 offload measurements of Trinity-RFT's guide"),
    (None, "as in the A100 offload measurements of Trinity-RFT's guide"),
])
def test_the_no_checkpoint_words_speak_of_the_h20_tables_on_an_h20_plan_alone(gpu: str | None, words: str):
    assert no_checkpoint_words(gpu) == words


@pytest.mark.parametrize(("gpu", "aside", "fragment_lines"), [
    ("h100", "", "guide\n"),
    ("h20", " (its H20 tables do not say)", "guide (its\n  # H20 tables do not say)\n"),
])
def test_a_plans_offload_lines_and_fragment_speak_of_the_h20_tables_on_an_h20_plan_alone(
        cli: Cli, gpu: str, aside: str, fragment_lines: str):
    flags = ("--model", "14B", "--gpu", gpu, "--gpus", "2", "--len", "20480", "--offload")
    status, out, _ = cli(*flags)
    assert status == 0 and (f"trainer.trainer_strategy: fsdp2\n# as in the A100 offload measurements of "
                            f"Trinity-RFT's guide{aside}:\ntrainer.save_hf_checkpoint: never\n") in out
    status, out, _ = cli(*flags, "--emit", "trinity")
    assert status == 0 and ("  # no Hugging Face weights saved, as in the A100 offload measurements of Trinity-RFT's "
                            f"{fragment_lines}  save_hf_checkpoint: never\n") in out


CONFIG = """\
model:
  model_path: Qwen/Qwen3-4B
  max_model_len: 4096
  rope_scaling:
    rope_type: yarn
    factor: 1.0
    original_max_position_embeddings: 40960
cluster:
  node_num: 1
  gpu_per_node: 8
explorer:
  rollout_model:
    engine_num: 0
algorithm:
  algorithm_type: grpo
"""


def test_a_written_config_past_the_validated_length_says_what_to_do_once(cli: Cli, tmp_path: Path):
    config, out, again = tmp_path / "in.yaml", tmp_path / "out.yaml", tmp_path / "again.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    flags = ("--gpu", "A100-80GB", "--len", "163840", "--estimate")
    status, _, err = cli("--from-config", str(config), *flags, "--write", str(out))
    written = out.read_text(encoding="utf-8")
    assert status == 0, err
    assert ("  #   calibration: 8 GPUs (calibrated up to 6), SP=8 (calibrated up to SP=4)\n"
            "  # max_model_len past the validated 131072: check the model's quality at this length, or plan --len\n"
            "  #   131072\n"
            "  # To check this file as its plan was made:\n") in written
    assert written.count(CHECK) == 1
    # Written again from its own output: the note is replaced, not repeated.
    status, _, err = cli("--from-config", str(out), *flags, "--write", str(again))
    assert status == 0, err
    assert again.read_text(encoding="utf-8") == written.replace(str(out), str(again))


def test_the_margins_json_description_says_what_margin_help_says(cli: Cli):
    words = "more on cards of at most 48 GiB, to cover the GiB their estimates run low"
    description = Answer.model_fields["margin"].description
    assert description is not None and words in description and "optimistic" not in description
    status, out, _ = cli("--help")
    assert status == 0 and "(default: the memory model's, 0.01; more on cards of 48 GiB or less)" in " ".join(
        out.split())
    assert words in option_reference()  # in full (session 93)


def test_solve_cluster_help_says_what_no_widen_lengthens_plainly():
    # (--buy's exit status 0 in plain words: test_clusterwords_s62.py, with docs/cli.md's exit table)
    parser = build_cluster_parser()
    [widen] = [action for action in parser._actions if "--no-widen" in action.option_strings]
    assert widen.help == ("leave idle GPUs and nodes idle (by default a placed job grows onto idle GPUs of its node, "
                          "or moves to a node no job uses, where more GPUs run it faster or, for a max_model_len of "
                          "at_least N, at a longer length)")
