"""The docs' claims on what session 82 changed (docstruth18): the words, paths and figures README.md and docs/ quote,
each against a run. (The features themselves: test_aliaskeys_s82, test_criticbudget_s82, test_loraexclude2_s82,
test_release06_s82, test_solvebest_s82, test_persona64_s82.)"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_release06_s82 import PASSED_08

import solver
from solver.render.cluster import _solve_best_unasked
from solver.rules import COMMAND_OPTIONS, SP_NODE_RULE_OWNER
from solver.trinity.keys import ref_forward_runs

Cli = Callable[..., tuple[int, str, str]]
DOCS = Path(__file__).resolve().parent.parent / "docs"
HEAD = """\
algorithm: {algorithm_type: grpo, repeat_times: 8}
buffer: {batch_size: 96}
cluster: {node_num: 1, gpu_per_node: 8}
model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}
explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1}}
"""
"""Qwen3-8B at 16384 tokens on 8 H100s, 4 of them for the rollout."""
ANCHORED = HEAD + """\
trainer:
  trainer_config:
    actor_rollout_ref:
      actor:
        fsdp_config: &offload {param_offload: true, optimizer_offload: true}
      ref:
        fsdp_config: *offload
"""
"""json.md's example: the actor's ``fsdp_config: &offload``, the ref's ``fsdp_config: *offload``."""


def _flat(text: str) -> str:
    """`text` with its line breaks and runs of spaces as one space, as a page's wrapped prose and a wrapped line
    read."""
    return re.sub(r"\s+", " ", text)


def _page(name: str) -> str:
    return _flat((DOCS / name).read_text(encoding="utf-8"))


def _config(tmp_path: Path, text: str) -> str:
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_json_md_s_alias_example_is_the_entry_the_command_gives(cli: Cli, tmp_path: Path) -> None:
    written_at = re.search(r'With the actor\'s `fsdp_config: &offload` and the ref\'s `fsdp_config: \*offload`, '
                           r'turning the actor\'s `param_offload` off names the ref\'s too, with `"written_at": '
                           r'"([\w.]+)"`', _page("json.md"))
    assert written_at is not None
    status, out, _ = cli("--from-config", _config(tmp_path, ANCHORED), "--gpu", "h100", "--json")
    (answer,) = json.loads(out)
    ref = "trainer.trainer_config.actor_rollout_ref.ref.fsdp_config.param_offload"
    assert status == 0 and [entry for entry in answer["config_keys_changed"] if entry["key"] == ref] == [
        {"key": ref, "config_value": True, "plan_value": False, "written_at": written_at.group(1)}]
    assert written_at.group(1) == "trainer.trainer_config.actor_rollout_ref.actor.fsdp_config.param_offload"


def test_trinity_md_quotes_the_refusal_of_a_value_that_holds_itself(cli: Cli, tmp_path: Path) -> None:
    assert "(`extra: &x {b: *x}`), which OmegaConf cannot load (it recurses without end): one line names the key " \
           "(`extra.b repeats extra, the mapping that holds it ...`)" in _page("trinity.md")
    config = _config(tmp_path, HEAD + "extra: &x {b: *x}\n")
    status, out, err = cli("--from-config", config, "--gpu", "h100")
    assert (status, out, err.count("\n")) == (2, "", 1)
    assert err.startswith(f"solve: error: --from-config {config}: extra.b repeats extra, the mapping that holds it ")


@pytest.mark.parametrize(("key", "guess"), [("ppo_mini_batchsize", "; did you mean ppo_mini_batch_size?"),
                                            ("ppo_infer_micro_batch_size_per_gpu", "")])
def test_key_dropped_says_what_trinity_md_and_json_md_say(cli: Cli, tmp_path: Path, key: str, guess: str) -> None:
    trinity, json_md = _page("trinity.md"), _page("json.md")
    dropped = PASSED_08.format("actor")  # each verl's path since s83's stagesdrop
    assert (f"(`...ppo_mini_batchsize: {dropped}; did you mean ppo_mini_batch_size?`). The line names the key of its "
            "section most alike, where one is, but for a key of verl's own spelt near one rft-solver reads (verl 0.8's "
            "`ppo_infer_micro_batch_size_per_gpu`") in trinity
    assert ("none for a key of verl's own spelt near one rft-solver reads, verl 0.8's "
            "`ppo_infer_micro_batch_size_per_gpu`") in json_md
    text = HEAD + f"trainer:\n  trainer_config:\n    actor_rollout_ref:\n      actor: {{{key}: 4}}\n"
    said = f"trainer.trainer_config.actor_rollout_ref.actor.{key}"
    refused_too = ("Trinity 0.5 refuses the config as it loads it (its veRLConfig has no such key there), and "
                   f"{dropped}")  # no release: verl-key names both (algorelease)
    for version, words in (((), refused_too), (("--trinity-version", "0.6"), dropped)):
        status, out, _ = cli("--from-config", _config(tmp_path, text), "--check", "--gpu", "h100", *version)
        assert status == 1  # vanilla on the config's 4 trainer H100s runs out of memory at 16384 tokens
        (_, line) = _flat(out).split(f" but: {said}: ")
        assert re.match(re.escape(f"{words}{guess}") + " [^;]", line), line  # the line ends there
    status, out, _ = cli("--from-config", _config(tmp_path, text), "--check", "--gpu", "h100",
                         "--trinity-version", "0.5")
    assert status == 1 and "drops it" not in out


@pytest.mark.parametrize(("version", "words"), [((), "(Trinity before 0.6 takes fsdp; 0.6, fsdp2)"),
                                                (("--trinity-version", "0.5"), "(Trinity 0.5 takes fsdp)"),
                                                (("--trinity-version", "0.6"), None)])
def test_the_unset_strategy_line_names_the_defaults_trinity_md_says(
        cli: Cli, tmp_path: Path, version: tuple[str, ...], words: str | None) -> None:
    assert ("get a `but:` line naming both defaults, `(Trinity before 0.6 takes fsdp; 0.6, fsdp2)`, since on 0.6 it "
            "would not hold), unless `--trinity-version` says which release the config is for (0.6: `fsdp2`, and no "
            "line; 0.5: `fsdp`, the line naming 0.5's alone)") in _page("trinity.md")
    status, out, _ = cli("--from-config", _config(tmp_path, ANCHORED), "--check", "--gpu", "h100", *version)
    said = [line for line in _flat(out).split(" but: ") if "trainer_strategy is not set" in line]
    assert status == 1 and [line.split(": the tables'")[0] for line in said] == (
        [] if words is None else [f"the offload flags are set, but trainer.trainer_strategy is not set {words}"])


def test_the_ref_is_counted_where_trinity_md_says_its_forward_runs() -> None:
    assert ("the ref counted only where its forward runs, as in [the verdict](#the-verdict): not for an algorithm that "
            "uses no ref, `asymre`, or `dapo` (Trinity 0.6's own: 0.5 refuses a config naming it), whatever "
            "`--trinity-version` the command names") in _page("trinity.md")
    assert [ref_forward_runs("asymre", version) for version in ("0.5", "0.6", None)] == [False, False, False]
    assert [ref_forward_runs("dapo", version) for version in ("0.6", None)] == [False, False]
    assert [ref_forward_runs("grpo", version) for version in ("0.5", "0.6", None)] == [True, True, True]


def test_the_header_s_budget_line_is_where_trinity_md_says(cli: Cli, tmp_path: Path) -> None:
    page = _page("trinity.md")
    assert ("it is to be raised to that or removed (the fragment above: `below ceil(102400 / 4) = 25600`). Not in a "
            "fragment made from a config (`--from-config`)") in page
    shown = page.split("### The header")[0]
    assert "log_prob_max_token_len_per_gpu below ceil(102400 / 4) = 25600 holds no sequence of that length, which " \
           "Trinity never raises and verl stops at" in shown.replace("# ", "")
    status, out, _ = cli("--from-config", _config(tmp_path, ANCHORED), "--gpu", "h100", "--emit", "trinity")
    assert status == 0 and "hand-set" not in out
    status, out, _ = cli("--model", "8B", "--gpus", "4", "--len", "32768", "--gpu", "h100", "--emit", "trinity",
                         "--critic", "resident")
    header = _flat(out.replace("# ", ""))
    assert status == 0 and ("the rollout's log_prob_max_token_len_per_gpu or the critic's "
                            "forward_max_token_len_per_gpu below ceil(32768 / 2) = 16384 holds no sequence") in header


def test_planner_md_s_costs_of_three_models_on_eight_h800s() -> None:
    assert ("Qwen3-14B and Qwen3-32B with Env + Offload + SP=8 on 8 H800s both cost 0.4293, and Qwen3-30B-A3B with "
            "the same settings 2.186 (its Offload weighs `r` = 9.18 times), though its step computes with 3.3B active "
            "parameters") in _page("planner.md")
    costs = {}
    for model in ("14B", "32B", "30B-A3B"):
        (answer,) = solver.plan(model, gpu="H800", budget_gpus=8, objective="max_len")
        assert answer.best is not None and answer.best.setting.label == "Env + Offload + SP=8"
        costs[model] = f"{answer.best.cost:.4g}"
    assert costs == {"14B": "0.4293", "32B": "0.4293", "30B-A3B": "2.186"}
    moe = solver.load_catalog().model("30B-A3B")
    assert round(float(moe.held_per_active), 2) == 9.18 and round(moe.active_parameters_b, 1) == 3.3


def test_cluster_md_quotes_the_solve_best_note() -> None:
    quoted = re.search(r"`(note: the time limit ran out before solve's best on their trainer GPUs was asked for 2 "
                       r"jobs[^`]*)`", _page("cluster.md"))
    result = SimpleNamespace(solve_best_unasked=2, interrupted=False, wall_clock_stopped=("solve best",))
    (note,) = _solve_best_unasked(result, COMMAND_OPTIONS)  # type: ignore[arg-type]
    assert quoted is not None and quoted.group(1) == note.plain


def test_guide_md_s_unmarked_codes_example_is_its_shown_map_s_line() -> None:
    page = (DOCS / "guide.md").read_text(encoding="utf-8")
    example = re.search(r"cells \(`(other cautions, unmarked \(their words: --json\): [^`]+)`, the map above\)",
                        _flat(page))
    assert example is not None and f"\n{example.group(1)}\n```" in page


def test_the_pages_say_whose_rule_sp_within_a_node_is() -> None:
    assert SP_NODE_RULE_OWNER.startswith("rft-solver's rule, not Trinity's or verl's")
    json_md = _page("json.md")
    assert json_md.count("so an SP group would cross nodes (rft-solver's rule, not Trinity's or verl's)") == 1
    assert json_md.count("needs each SP group inside one node (rft-solver's rule, not Trinity's or verl's)") == 1
    assert "The second is rft-solver's own rule, not Trinity's or verl's" in _page("concepts.md")
    assert "(this last rft-solver's own, not Trinity's or verl's, which run SP across nodes" in _page("planner.md")


def test_json_md_s_scalar_alias_example_is_raised_with_token_budget_default_alone(cli: Cli, tmp_path: Path) -> None:
    assert ("the actor's `ppo_max_token_len_per_gpu: *budget` beside `max_token_len_per_gpu: &budget 24576`, which "
            "`--write` raises at the anchor (at 32768 tokens and SP 2 with `--token-budget default`: without it, the "
            "config's own 24576 caps the plans and stays), has `\"written_at\": \"trainer.max_token_len_per_gpu\"`"
            ) in _page("json.md")
    head = HEAD.replace("16384", "32768").replace("engine_num: 4", "engine_num: 2")  # 6 trainer GPUs, SP 2
    # release89b: at SP 2, where 24576 holds a sequence (at SP 1 every release raises it to 32768, the cap then)
    config = _config(tmp_path, head + "trainer:\n  ulysses_sequence_parallel_size: 2\n"
                     "  max_token_len_per_gpu: &budget 24576\n  trainer_config:\n"
                     "    actor_rollout_ref:\n      actor: {ppo_max_token_len_per_gpu: *budget}\n")
    actor = "trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu"
    budgets = {}
    for asked in ((), ("--token-budget", "default")):
        status, out, _ = cli("--from-config", config, "--gpu", "h100", *asked, "--json")
        (answer,) = json.loads(out)
        budgets[asked] = [entry for entry in answer["config_keys_changed"] if "max_token_len" in entry["key"]]
        assert status == 0
    assert budgets == {(): [], ("--token-budget", "default"): [
        {"key": "trainer.max_token_len_per_gpu", "config_value": 24576, "plan_value": 32768},
        {"key": actor, "config_value": 24576, "plan_value": 32768, "written_at": "trainer.max_token_len_per_gpu"}]}
