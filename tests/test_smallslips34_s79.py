"""Small slips (s79, smallslips34): a ``--lora-targets`` regex one transformers' names alone take, cautioned under a
release that runs either (``lora-targets-one-transformers``, as a config's is), and its apply comment; a list item
that names nothing said by its list's field once (``pool a100, down item 1``); ``solve cluster``'s purchase printed
before a second Ctrl-C during its notes said to stand."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
import yaml
from test_clustercli_s79 import SMALLER_ASKS, buy_module
from test_smallslips24_s77 import Cli

import solver
import solver.cli.cluster
from solver.rules import lora_configs_words
from solver.tables import TableError
from solver.tables.inputs import TrinityFields
from solver.tables.loaders import load_validated
from solver.trinity.checks import lora_targets_problem

POOL = {"name": "a100", "gpu": "A100-80GB", "nodes": 5, "gpus_per_node": 8}
JOBS = [{"name": "small", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 1}]


@pytest.mark.parametrize(("down", "where"), [
    ([-1], "line 8: pool a100, down item 1: must be at least 0, got -1"),
    ([0, "x"], "line 9: pool a100, down item 2: must be a whole number, got 'x'"),
])
def test_a_list_of_plain_values_names_its_field_once(tmp_path: Path, down: list[object], where: str):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [{**POOL, "down": down}], "jobs": JOBS}), encoding="utf-8")
    with pytest.raises(TableError) as raised:
        solver.load_fleet(path)
    assert str(raised.value) == f"{path}: {where}"


def test_an_item_of_a_labelled_list_and_a_section_list_keep_their_words(tmp_path: Path):
    path = tmp_path / "fleet.yaml"  # a named list's item that names nothing: its list's words, as before
    path.write_text(yaml.safe_dump({"pools": [{**POOL, "name": None}], "jobs": JOBS}), encoding="utf-8")
    with pytest.raises(TableError, match=r": pools item 1, name: must be text, got null"):
        solver.load_fleet(path)
    fields = tmp_path / "trinity-fields.yaml"  # a section's list of names: "model item 2", not "model, model item 2"
    fields.write_text(yaml.safe_dump({"releases": {"0.6.0": {"algorithms": ["ppo"], "sections": {"model": ["a", 1]},
                                                             "open": {}, "null": []}}}), encoding="utf-8")
    with pytest.raises(TableError) as raised:
        load_validated(TrinityFields, fields)
    assert str(raised.value) == (f"{fields}: releases, 0.6.0, sections, model item 2: must be text, got 1 (YAML reads "
                                 "it, unquoted, as a number: quote it to keep it as text)")


def ctrl_c_in_widening_then_in_the_notes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C while `--buy`'s placement widens (placed again unwidened, as it was), and a second while the
    purchase's notes print (held until they are done)."""
    grown, noted = buy_module.grown_placements, solver.cli.cluster._note_what_was_read

    def ctrl_c_while_widening(*args: object) -> object:
        if args[-1] is not None:  # widened: stopped; placed again unwidened, as it was
            signal.raise_signal(signal.SIGINT)
        return grown(*args)

    def ctrl_c_in_the_notes(*args: object) -> None:
        signal.raise_signal(signal.SIGINT)  # held until the notes are done
        noted(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(buy_module, "grown_placements", ctrl_c_while_widening)
    monkeypatch.setattr(solver.cli.cluster, "_note_what_was_read", ctrl_c_in_the_notes)


@pytest.mark.usefixtures("python_ctrl_c")  # Python's own Ctrl-C handler, also in a suite run with Ctrl-C ignored
def test_a_second_ctrl_c_in_an_interrupted_purchases_notes_leaves_it_standing(cli: Cli,
                                                                              monkeypatch: pytest.MonkeyPatch):
    # a Ctrl-C stops the widening; a second, held while the purchase's notes print, stops nothing: the purchase is
    # printed and the last line says it stands (before: "solve cluster: interrupted" alone, exit 130)
    ctrl_c_in_widening_then_in_the_notes(monkeypatch)
    status, out, err = cli("cluster", str(SMALLER_ASKS), "--buy")
    assert (status, err) == (130, "solve cluster: interrupted: the best purchase found so far is above\n")
    assert out.splitlines()[0] == (  # s81: with the figure behind the bound
        "status: optimal; to place every job, buy 8 GPUs (1 node), proven the fewest (at their fewest they take 9 "
        "GPUs, 1 more than the fleet's 8; the other 7 bought are")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Python's own handler is back


MIXTRAL_CONFIG = str(Path(__file__).parent / "data" / "hf-configs" / "Mixtral-8x7B-v0.1.json")
MIXTRAL = solver.load_model_config(Path(MIXTRAL_CONFIG))
W1 = ".*\\.w1"
CONFIG_SUBJECT = "model.lora_configs[0].target_modules '.*\\.w1'"


def _one_transformers_words(subject: str) -> str:
    """The words a config's check says of Mixtral's ``.*\\.w1`` under 0.5.2, its key named as `subject` names it."""
    problem = lora_targets_problem(W1, None, MIXTRAL, "either")
    assert problem is not None and problem.code.value == "lora-targets-one-transformers"
    assert problem.words.startswith(CONFIG_SUBJECT + ", on Mixtral-8x7B-v0.1 (a mixture of experts, model_type "
                                    "mixtral), is taken on transformers 4's module names")
    return subject + problem.words[len(CONFIG_SUBJECT):]


@pytest.mark.parametrize("release", ["0.5", "0.5.0", "0.5.2"])
def test_a_query_regex_one_transformers_alone_takes_is_cautioned_as_a_configs(cli: Cli, release: str):
    # before: no caution, and --json failed (exit 70) checking the LoRA key on transformers 5's names alone
    status, out, _ = cli("--model-config", MIXTRAL_CONFIG, "--gpu", "h200", "--gpus", "16", "--len", "4096",
                         "--lora-rank", "16", "--lora-targets", W1, "--trinity-version", release, "--json")
    (plan,) = json.loads(out)[0]["plans"][:1]
    # s88: where every rank loads the model (0.5.0's rank 0 alone), its 8 loads at start-up pass a node's 1024 GiB
    loads = ["host-memory-unchecked"] if release != "0.5.0" else []
    assert (status, plan["caution_codes"]) == (0, [*loads, "lora-targets-one-transformers", "lora-moe-config-unsaved",
                                                   "lora-targets-saved-split"])  # transformers 4 saves it split (s80)
    words = dict(zip(plan["caution_codes"], plan["cautions"]))["lora-targets-one-transformers"]
    assert words == _one_transformers_words("target_modules '.*\\.w1' (--lora-targets)")
    assert words.endswith(": run it with transformers 4 (Trinity 0.5.1 pins it): no regular "
                          "expression adapts the same modules on transformers 5's names")


def test_the_apply_comment_says_transformers_5_fails_as_the_adapter_is_made(cli: Cli):
    status, out, _ = cli("--model-config", MIXTRAL_CONFIG, "--gpu", "h200", "--gpus", "16", "--len", "4096",
                         "--lora-rank", "16", "--lora-targets", W1, "--trinity-version", "0.5.2")
    assert status == 0
    assert ("\n# a new adapter on target_modules '.*\\.w1', as planned; with LoRA Trinity builds no reference model; "
            "but with transformers 5 PEFT fails on it as Trinity makes the adapter: run it with transformers 4 "
            "(Trinity 0.5.1 pins it); see the caution above on how Trinity saves its config:\n") in out
    # transformers 4's save, on which the adapter is made (s80), in a caution row (smallslips37)
    assert ("caution        target_modules '.*\\.w1' is a regular expression, which Trinity writes into each "
            "checkpoint's lora_adapter/adapter_config.json") in out
    assert ("saves its config:\nmodel.lora_configs: [{lora_rank: 16, target_modules: '.*\\.w1'}]\n") in out
    assert "_save_lora" not in out.split("\napply ")[1]  # not that it fails only as the adapter is saved
    status, out, _ = cli("--model-config", MIXTRAL_CONFIG, "--gpu", "h200", "--gpus", "16", "--len", "4096",
                         "--lora-rank", "16", "--lora-targets", W1, "--trinity-version", "0.5.2", "--emit", "trinity")
    assert status == 0 and "# caution: target_modules '.*\\.w1' (--lora-targets), on Mixtral-8x7B-v0.1" in out


def test_under_one_transformers_the_regex_is_not_cautioned(cli: Cli):
    status, out, _ = cli("--model-config", MIXTRAL_CONFIG, "--gpu", "h200", "--gpus", "16", "--len", "4096",
                         "--lora-rank", "16", "--lora-targets", W1, "--trinity-version", "0.5.1", "--json")
    # transformers 4 alone: no lora-targets-one-transformers, but it saves the regex split (s80)
    assert (status, json.loads(out)[0]["plans"][0]["caution_codes"]) == (0, ["lora-targets-saved-split"])


def test_the_estimate_and_the_api_say_it_too():
    estimate = solver.estimate_memory(MIXTRAL.name, "h200", 8, 4096, lora_rank=16, lora_targets=W1,
                                      trinity_version="0.5.2", catalog=solver.load_catalog().with_model(MIXTRAL))
    # (s88: after the host memory's: 0.5.2's 8 ranks each loading the model at start-up)
    assert [code.value for code in estimate.caution_codes] == ["host-memory-unchecked",
                                                               "lora-targets-one-transformers",
                                                               "lora-moe-config-unsaved"]
    assert estimate.cautions[1] == _one_transformers_words("target_modules '.*\\.w1' (lora_targets)")


def test_a_regex_transformers_4_refuses_keeps_the_save_caution_in_the_comment():
    moe = r".*mlp\.experts\.(gate_proj|up_proj|down_proj)"  # transformers 5's names alone take it
    (answer,) = solver.plan("30B-A3B", gpu="h200", max_model_len=4096, budget_gpus=8, lora_rank=16, lora_targets=moe,
                            trinity_version="0.5.2")
    assert answer.best is not None
    assert [code.value for code in answer.best.caution_codes] == ["lora-targets-one-transformers",
                                                                  "lora-moe-config-unsaved"]
    words = lora_configs_words(solver.load_catalog().model("Qwen3-30B-A3B"), "0.5", "either", answer.best.lora_targets)
    assert words.startswith(f"a new adapter on target_modules '{moe}', as planned; with LoRA Trinity builds no "
                            "reference model; but with transformers 4 PEFT fails on it as Trinity makes the adapter: "
                            "run it with transformers 5 (Trinity 0.5.2 takes up to 5.3.0, 0.6 requires 5.12.1 or "
                            "later); with transformers 5 (Trinity 0.5.0 allows it")
    assert words.endswith("or patch _save_lora to write target_parameters as a list")
