"""The apply lines and ``config_keys_changed`` where a key sits under a YAML alias (session 83, applyalias).

The text output's apply lines named an anchor's key alone, so a user editing the file saw one path where the edit
changes several: a line whose key an alias (``*a``) or a ``<<: *a`` merge makes one value with others is now followed by
a comment naming them and where one edit changes them all (`solver.render.summary._repeats_line`, from
`solver.trinity.config_key_changes`). ``--write`` wrote a plan's keys through an alias into its anchor's mapping,
whatever the keys at the anchor's own place: the critic's ``model.fsdp_config: *f`` offloaded and the actor's ``&f``
resident were one mapping, the last write winning (the actor's flags off, the critic's ``offload_policy`` on in
the actor's), and a critic of another model's SP, kept, took the actor's through ``critic: *roles`` or ``<<: *roles``.
Such an alias is now written out as a mapping of its own (`solver.trinity.patch._aliases_written_out`), a merged-in
kept SP as the critic's own key (`solver.trinity.plan_keys.kept_own_keys`), each said. (Checked against PyYAML 6.0.4
and OmegaConf 2.3.0, which Trinity loads configs with: each copy reads the same in both.)"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_aliaskeys_s82 import ACTOR, CONFIGS, FSDP, HEAD, MODEL, REF, ROLES, ROLLOUT
from test_criticbudget_s82 import BASE
from test_json import jsonschema_errors
from test_smallslips41_s82 import KEPT_SP

Cli = Callable[..., tuple[int, str, str]]
SWAPPED = (HEAD + MODEL + ROLLOUT + ROLES + "      ref:\n        fsdp_config: &offload {param_offload: true, "
           "optimizer_offload: true}\n      actor:\n        fsdp_config: *offload\n")
"""`FSDP` with the anchor at the ref's ``fsdp_config`` and the actor's its alias: the actor's flags are written at
the ref's."""
ANOTHER = BASE.replace("max_model_len: 32768}", "max_model_len: 32768, critic_model_path: /models/critic}")
"""PPO on Qwen3-8B at 32768 tokens on H20s at SP 2 (`BASE`) whose critic is another model: its own SP is kept."""
ROLES_SP = "    actor_rollout_ref:\n      actor: &roles {ulysses_sequence_parallel_size: 1}\n"
MERGED_SP = ROLES_SP + "    critic:\n      <<: *roles\n      ppo_max_token_len_per_gpu: 32768\n"
"""The critic's SP merged in from the actor's mapping, whose SP 1 --write sets to the plan's 2."""
SHARED_FSDP = ("    actor_rollout_ref:\n      actor:\n        fsdp_config: &f {param_offload: true, optimizer_offload: "
               "true}\n    critic:\n      model:\n        fsdp_config: *f\n")
"""The critic's model's ``fsdp_config`` an alias of the actor's: the plan with ``--critic offloaded`` turns the
actor's off and the critic's on."""
CRITIC = "trainer.trainer_config.critic"
ENV = "expandable_segments:True"
ALSO = "(an alias or a <<: merge repeats it)"


@pytest.fixture(autouse=True)
def _env_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", ENV)


def _run(cli: Cli, tmp_path: Path, text: str, gpu: str, *options: str) -> tuple[list[str], list[dict[str, Any]],
                                                                                dict[str, Any], str]:
    """For the config `text` (``c.yaml``) planned on `gpu` with `options`: the text output's apply lines after the
    plan's own (from ``model.max_model_len``), --json's ``config_keys_changed``, --write's copy as PyYAML reads it,
    and --write's stderr less its Env note; each command must succeed."""
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(text, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", gpu, *options)
    assert status == 0
    lines = out.rstrip("\n").splitlines()
    apply = lines[next(index for index, line in enumerate(lines) if line.startswith("model.max_model_len: ")):]
    status, out, _ = cli("--from-config", str(config), "--gpu", gpu, *options, "--json")
    (answer,) = json.loads(out)
    assert status == 0 and jsonschema_errors("solve", [answer]) == []
    status, _, err = cli("--from-config", str(config), "--gpu", gpu, *options, "--write", str(written))
    assert status == 0
    notes = "".join(f"{line}\n" for line in err.splitlines() if "needs Env" not in line)
    return apply, answer["config_keys_changed"], yaml.safe_load(written.read_text(encoding="utf-8")), notes


def test_a_line_whose_key_an_alias_repeats_names_the_other_path(cli: Cli, tmp_path: Path) -> None:
    # the ref's fsdp_config is the actor's (*offload): the line sets the actor's flag, which the ref reads too
    apply, changes, _, _ = _run(cli, tmp_path, FSDP, "h100")
    assert apply[3:] == [
        "# and these keys of c.yaml, which the plan changes too (after each, its value now):",
        f"{ACTOR}.param_offload: false  # now true",
        f"# in c.yaml this key is also read at {REF}.param_offload {ALSO}: one edit here changes both",
        f"{ACTOR}.optimizer_offload: false  # now true",
        f"# in c.yaml this key is also read at {REF}.optimizer_offload {ALSO}: one edit here changes both"]
    # the JSON names both paths, the ref's written at the actor's
    assert [(change["key"], change.get("written_at")) for change in changes[2:]] == [
        (f"{ACTOR}.param_offload", None), (f"{REF}.param_offload", f"{ACTOR}.param_offload"),
        (f"{ACTOR}.optimizer_offload", None), (f"{REF}.optimizer_offload", f"{ACTOR}.optimizer_offload")]


def test_a_line_whose_key_is_an_alias_says_where_the_edit_is_made(cli: Cli, tmp_path: Path) -> None:
    # the actor's fsdp_config is the ref's (*offload): its flags are written at the ref's, the anchor
    apply, changes, written, notes = _run(cli, tmp_path, SWAPPED, "h100")
    assert apply[4:] == [
        f"{ACTOR}.param_offload: false  # now true",
        (f"# in c.yaml this key is also read at {REF}.param_offload {ALSO}: one edit at {REF}.param_offload changes "
         "both"),
        f"{ACTOR}.optimizer_offload: false  # now true",
        (f"# in c.yaml this key is also read at {REF}.optimizer_offload {ALSO}: one edit at {REF}.optimizer_offload "
         "changes both")]
    assert [(change["key"], change.get("written_at")) for change in changes[2:]] == [
        (f"{ACTOR}.param_offload", f"{REF}.param_offload"), (f"{REF}.param_offload", None),
        (f"{ACTOR}.optimizer_offload", f"{REF}.optimizer_offload"), (f"{REF}.optimizer_offload", None)]
    assert written["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["fsdp_config"] == {
        "param_offload": False, "optimizer_offload": False}
    # the warning names the anchor's place (the ref's), not the path the change was set through (before: the actor's)
    assert notes == (f"solve: warning: {tmp_path / 'w.yaml'}: {REF.removesuffix('.fsdp_config')}.fsdp_config is the "
                     f"anchor &offload, which {ACTOR} repeats (*offload): the patch's changes in it (param_offload to "
                     "false, ...) reach it too\n")


def test_the_plans_own_lines_name_every_path_aliases_of_aliases_repeat(cli: Cli, tmp_path: Path) -> None:
    apply, _, _, _ = _run(cli, tmp_path, CONFIGS["aliases of aliases"][0], "h100")
    paths = "more.t.{0}, evenmore.m.t.{0} and evenmore.t2.{0}"
    assert apply[1:] == [
        "trainer.ulysses_sequence_parallel_size: 2",
        (f"# in c.yaml this key is also read at {paths.format('ulysses_sequence_parallel_size')} {ALSO}: one edit "
         "here changes them all"),
        "trainer.max_token_len_per_gpu: 16384",
        (f"# in c.yaml this key is also read at {paths.format('max_token_len_per_gpu')} {ALSO}: one edit here changes "
         "them all")]


def test_a_config_without_aliases_has_no_such_comment(cli: Cli, tmp_path: Path) -> None:
    apply, changes, _, _ = _run(cli, tmp_path, CONFIGS["plain"][0], "h100", "--trinity-version", "0.5")
    assert apply == ["model.max_model_len: 16384", "trainer.ulysses_sequence_parallel_size: 2",
                     "trainer.max_token_len_per_gpu: 16384"]
    assert not any("written_at" in change for change in changes)


def test_a_critics_own_sp_written_beside_a_merge_is_its_own_key(cli: Cli, tmp_path: Path) -> None:
    # a critic of the plan's model merges its SP 1 from the actor's mapping: --write sets the actor's at the anchor
    # and writes the critic's as its own key beside the <<, each named at its own path (no written_at)
    apply, changes, written, notes = _run(cli, tmp_path, BASE + MERGED_SP, "h20")
    sp = [change for change in changes if change["key"].endswith("ulysses_sequence_parallel_size")]
    assert sp == [{"key": "trainer.trainer_config.actor_rollout_ref.actor.ulysses_sequence_parallel_size",
                   "config_value": 1, "plan_value": 2},
                  {"key": f"{CRITIC}.ulysses_sequence_parallel_size", "config_value": 1, "plan_value": 2}]
    assert written["trainer"]["trainer_config"]["critic"]["ulysses_sequence_parallel_size"] == 2
    assert "      <<: *roles\n      ppo_max_token_len_per_gpu: 32768\n      ulysses_sequence_parallel_size: 2\n" in (
        tmp_path / "w.yaml").read_text(encoding="utf-8")
    assert apply[-2:] == ["trainer.trainer_config.actor_rollout_ref.actor.ulysses_sequence_parallel_size: 2  # now 1",
                          f"{CRITIC}.ulysses_sequence_parallel_size: 2  # now 1"]
    assert notes == ""  # no anchor warning: the critic sets the key itself (before: "reach them too")


@pytest.mark.parametrize(("critic", "alias"), [("    critic:\n      <<: *roles\n", False),
                                               ("    critic: *roles\n", True)], ids=["merge", "alias"])
def test_a_critic_of_another_model_keeps_its_sp_through_the_actors_anchor(cli: Cli, tmp_path: Path, critic: str,
                                                                          alias: bool) -> None:
    # the actor's SP set to the plan's 2 at &roles reached the critic, whose own SP 1 --write keeps (its heads the
    # plan's SP need not divide): a merged one is written as the critic's own key, an alias out as its own mapping;
    # the copy's line on the kept SP 1 first (session 83, criticsp: before, none)
    apply, changes, written, notes = _run(cli, tmp_path, ANOTHER + ROLES_SP + critic, "h20")
    kept_sp = KEPT_SP.format(written=tmp_path / "w.yaml")
    assert written["trainer"]["trainer_config"]["critic"]["ulysses_sequence_parallel_size"] == 1
    assert written["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"] == {"ulysses_sequence_parallel_size": 2}
    assert [change["key"] for change in changes if change["key"].endswith("ulysses_sequence_parallel_size")] == [
        "trainer.trainer_config.actor_rollout_ref.actor.ulysses_sequence_parallel_size"]
    actor = "trainer.trainer_config.actor_rollout_ref.actor"
    if alias:
        assert notes == kept_sp + (f"solve: warning: {tmp_path / 'w.yaml'}: {CRITIC} repeats {actor} (*roles), but "
                                   "the plan leaves other values in it than there: the patch writes it out as a "
                                   "mapping of its own\n")
        assert apply[-1] == (f"# in c.yaml {CRITIC} is an alias of {actor}, but the plan leaves other values in it "
                             f"than there: write it out as a mapping of its own, as --write does (an edit at {actor} "
                             "reaches it)")
    else:
        assert notes == kept_sp and "      ulysses_sequence_parallel_size: 1\n" in (tmp_path / "w.yaml").read_text()
        assert apply[-1] == f"{actor}.ulysses_sequence_parallel_size: 2  # now 1"


def test_an_alias_the_plan_sets_otherwise_than_its_anchor_is_written_out(cli: Cli, tmp_path: Path) -> None:
    # N-11/N-12: the critic's model.fsdp_config is *f, the actor's: offloaded beside the actor resident, both were
    # written at &f, the actor's false winning and the critic's offload_policy landing in the actor's
    apply, changes, written, notes = _run(cli, tmp_path, BASE + SHARED_FSDP, "h20", "--critic", "offloaded")
    roles = written["trainer"]["trainer_config"]
    assert roles["actor_rollout_ref"]["actor"]["fsdp_config"] == {"param_offload": False, "optimizer_offload": False}
    assert roles["critic"]["model"]["fsdp_config"] == {"param_offload": True, "optimizer_offload": True,
                                                       "offload_policy": True}
    assert changes == [
        {"key": f"{ACTOR}.param_offload", "config_value": True, "plan_value": False},
        {"key": f"{ACTOR}.optimizer_offload", "config_value": True, "plan_value": False},
        {"key": f"{CRITIC}.model.fsdp_config.offload_policy", "config_value": None, "plan_value": True},
        *({"key": f"{CRITIC}.fsdp.{flag}", "config_value": None, "plan_value": True}
          for flag in ("param_offload", "optimizer_offload", "offload_policy")),
        {"key": f"{CRITIC}.strategy", "config_value": None, "plan_value": "fsdp2"}]
    assert notes == (f"solve: warning: {tmp_path / 'w.yaml'}: {CRITIC}.model.fsdp_config repeats {ACTOR} (*f), but "
                     "the plan leaves other values in it than there: the patch writes it out as a mapping of its own\n")
    assert apply[-1] == (f"# in c.yaml {CRITIC}.model.fsdp_config is an alias of {ACTOR}, but the plan leaves other "
                         f"values in it than there: write it out as a mapping of its own, as --write does (an edit "
                         f"at {ACTOR} reaches it)")
    # the entries are the keys whose values the copy changes
    old, new = _leaves(yaml.safe_load(BASE + SHARED_FSDP)), _leaves(written)
    assert [change["key"] for change in changes] == [key for key in new if old.get(key) != new[key]]


def _leaves(mapping: Any, path: str = "") -> dict[str, Any]:
    """Every dotted path to a value that is not a mapping in `mapping`."""
    found: dict[str, Any] = {}
    for key, value in mapping.items():
        dotted = f"{path}{key}"
        found.update(_leaves(value, f"{dotted}.") if isinstance(value, dict) else {dotted: value})
    return found


def test_an_alias_written_out_keeps_its_block_form_and_lists(cli: Cli, tmp_path: Path) -> None:
    # a block mapping with a flow list and a block list inside, written out where `critic: *roles` was: each in its
    # own form
    text = ANOTHER + ("    actor_rollout_ref:\n      actor: &roles\n        ulysses_sequence_parallel_size: 1\n"
                      "        checkpoint:\n          save_contents: [model, optimizer]\n          load_contents:\n"
                      "          - model\n    critic: *roles\n")
    _, _, written, _ = _run(cli, tmp_path, text, "h20")
    assert written["trainer"]["trainer_config"]["critic"]["checkpoint"] == {"save_contents": ["model", "optimizer"],
                                                                            "load_contents": ["model"]}
    assert ("      actor: &roles\n        ulysses_sequence_parallel_size: 2\n        checkpoint:\n          "
            "save_contents: [model, optimizer]\n          load_contents:\n          - model\n    critic:\n"
            "      ulysses_sequence_parallel_size: 1\n"
            "      checkpoint:\n        save_contents: [model, optimizer]\n        load_contents:\n        - model\n"
            "      model:\n") in (
        tmp_path / "w.yaml").read_text()
