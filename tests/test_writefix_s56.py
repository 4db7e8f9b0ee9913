"""--write keeps what it does not mean to change (s56): configs written every way YAML allows (comments, anchors and
aliases, merges, flow style, values on the next line, quotes, odd indentation, CRLF or CR line endings, a byte order
mark), patched on every key the patch writes, re-read to the plan's values, with every other line, comment and anchor
kept."""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.query import make_query
from solver.results import Plan
from solver.rules import API_OPTIONS
from solver.solve import plan as solve
from solver.tables import Catalog, load_catalog
from solver.trinity import anchored_keys, load_config_mapping, patch_trinity_config
from solver.trinity import patch as patch_module
from solver.trinity.keys import value_at
from solver.trinity.plan_keys import keys_for_plan


@cache
def catalog() -> Catalog:
    return load_catalog()


@cache
def plans() -> tuple[Plan, ...]:
    """Offload + SP=4 + YaRN at 102400 (every key but the actor's offload flags turned off), and SP=2 at 24576
    (the actor's offload flags turned off; the trainer's and roles' SP, budgets and the keys turned back on alike)."""
    def best(**query: Any) -> Plan:
        (answer,) = solve(make_query(catalog(), gpu="a100", model="4B", **query), catalog())
        assert answer.plans, answer.reason
        return answer.plans[0]

    return (best(objective="max_len", budget_gpus=6),
            best(objective="cheapest", budget_gpus=2, exact=True, max_model_len=24576))


ROLES = ("trainer", "trainer_config", "actor_rollout_ref")
# Each section's scalar keys, with a value the plans change (or, for save_hf_checkpoint, keep), by path.
SCALARS: dict[tuple[str, ...], tuple[tuple[str, str], ...]] = {
    ("model",): (("model_path", "q/Qwen3-4B"), ("max_model_len", "8192")),
    ("trainer",): (("ulysses_sequence_parallel_size", "1"), ("max_token_len_per_gpu", "16384"),
                   ("trainer_strategy", "fsdp"), ("save_hf_checkpoint", "last"), ("use_dynamic_bsz", "false"),
                   ("use_remove_padding", "false"), ("param_offload", "false")),
    (*ROLES, "model"): (("enable_gradient_checkpointing", "false"), ("use_remove_padding", "false")),
    (*ROLES, "actor"): (("ppo_max_token_len_per_gpu", "8192"), ("ulysses_sequence_parallel_size", "1"),
                        ("use_dynamic_bsz", "false")),
    (*ROLES, "ref"): (("log_prob_max_token_len_per_gpu", "8192"), ("ulysses_sequence_parallel_size", "1"),
                      ("log_prob_use_dynamic_bsz", "false")),
}
KIN = {"ulysses_sequence_parallel_size": "sp", "max_token_len_per_gpu": "budget", "ppo_max_token_len_per_gpu": "budget",
       "log_prob_max_token_len_per_gpu": "budget", "use_dynamic_bsz": "dynamic", "log_prob_use_dynamic_bsz": "dynamic",
       "use_remove_padding": "padding"}
"""The keys the plans set to one value wherever they are (the trainer's and the roles'), by kind: one may be an alias
of another's anchor, which then stays, with the new value, and the alias with it."""
STYLES = ("plain", "comment", "anchor", "anchor comment", "next line", "next line anchor comment", "quoted")
"""How a scalar is written: ``k: v``, ``k: v  # c``, ``k: &a v``, ``k: &a v  # c``, ``k:`` and the value on the
next line (with an anchor and a comment between them), ``k: "v"`` (for text)."""


def _scalar(key: str, value: str, style: str, indent: str, unit: str, name: str) -> list[str]:
    anchor, comment = f"&{name}", f"# why {key}"
    deeper = indent + unit
    quoted = f'"{value}"' if style == "quoted" and not re.fullmatch(r"\d+|true|false", value) else value
    return {"plain": [f"{indent}{key}: {quoted}"], "quoted": [f"{indent}{key}: {quoted}"],
            "comment": [f"{indent}{key}: {value}  {comment}"], "anchor": [f"{indent}{key}: {anchor} {value}"],
            "anchor comment": [f"{indent}{key}: {anchor} {value}   {comment}"],
            "next line": [f"{indent}{key}:", f"{deeper}{value}"],
            "next line anchor comment": [f"{indent}{key}: {anchor}  {comment}", f"{deeper}{value}"]}[style]


@st.composite
def configs(draw: Any) -> tuple[str, int]:
    """A config (its text, with its line ending and byte order mark) and the index of the plan to patch it for."""
    unit = draw(st.sampled_from(["  ", "   ", "    "]))
    lines = ["# a GRPO run", "project: demo  # the project"]
    aliases: list[str] = []
    anchors: dict[str, str] = {}  # per kind of key (`KIN`), the first anchor on one

    def section(path: tuple[str, ...], depth: int) -> None:
        indent = unit * depth
        lines.append(f"{indent}note: {'.'.join(path)}  # kept")  # none empty (the patch fills an empty one)
        for key, value in SCALARS.get(path, ()):
            if draw(st.booleans()) or key in ("model_path", "max_model_len"):
                if KIN.get(key) in anchors and draw(st.booleans()):
                    lines.append(f"{indent}{key}: *{anchors[KIN[key]]}  # the same")
                    continue
                style = draw(st.sampled_from(STYLES))
                name = f"a{len(lines)}"
                lines.extend(_scalar(key, value, style, indent, unit, name))
                if "anchor" in style and key in KIN:
                    anchors.setdefault(KIN[key], name)
                if "anchor" in style and draw(st.booleans()):
                    aliases.append(f"{unit}copy_of_{name}: *{name}  # a copy")

    lines.append("model:")
    section(("model",), 1)
    if draw(st.booleans()):
        lines += [f"{unit}rope_scaling:  # YaRN", f"{unit * 2}rope_type: 'yarn'", f"{unit * 2}factor: 4",
                  f"{unit * 2}original_max_position_embeddings: 40960"]
    lines += ["", "# the trainer", "trainer:"]
    section(("trainer",), 1)
    lines += [f"{unit}trainer_config:", f"{unit * 2}actor_rollout_ref:", f"{unit * 3}model:"]
    section((*ROLES, "model"), 4)
    lines.append(f"{unit * 3}actor:")
    section((*ROLES, "actor"), 4)
    fsdp = draw(st.sampled_from(["block", "flow", "merged", "aliased"]))
    if fsdp == "flow":
        lines.append(f"{unit * 4}fsdp_config: {{param_offload: false, optimizer_offload: false}}  # flow")
    else:
        lines += [f"{unit * 4}fsdp_config: &fsdp  # the actor's", f"{unit * 5}param_offload: false",
                  f"{unit * 5}optimizer_offload: false"]
    lines.append(f"{unit * 3}ref:")
    section((*ROLES, "ref"), 4)
    if fsdp == "merged":
        lines += [f"{unit * 4}fsdp_config:", f"{unit * 5}<<: *fsdp", f"{unit * 5}param_offload: false"]
    elif fsdp == "aliased":
        lines.append(f"{unit * 4}fsdp_config: *fsdp  # the same")
    if aliases:
        lines += ["copies:", *aliases]
    lines.append("# the end")
    ending = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    bom = "\ufeff" if draw(st.booleans()) else ""
    return bom + ending.join(lines) + ending, draw(st.integers(0, 1))


def _expected(reading: Any, plan: Plan) -> dict[tuple[str, ...], Any]:
    """The values the plan's keys have in the patched config: the plan's, but where the config's own is kept (a
    default the config chooses) or the key is set only where the config has it."""
    expected = {}
    for key in keys_for_plan(plan, catalog().model("4B"), reading):
        current = value_at(reading, key.path)
        if key.existing_only and current is None:
            continue
        expected[key.path] = current if key.default_only and current is not None else key.value
    return expected


def _opens_value(line: str, changed_line: re.Pattern[str]) -> bool:
    """Whether `line` is a changed key's whose value is on the next line (after an anchor and a comment, perhaps)."""
    return bool(changed_line.search(line)) and re.search(r":(?:[ \t]+&\S+)?(?:[ \t]+#.*)?$", line) is not None


def _leaves(node: Any, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    if not isinstance(node, dict):
        return {path: node}
    return {leaf: value for key, child in node.items() for leaf, value in _leaves(child, (*path, key)).items()}


@settings(max_examples=40, deadline=None, derandomize=True)
@given(configs())
def test_write_keeps_every_line_comment_and_anchor_it_does_not_mean_to_change(drawn: tuple[str, int]) -> None:
    text, which = drawn
    plan = plans()[which]
    after = patch_trinity_config(text, plan, catalog().model("4B"))
    before_reading = load_config_mapping(text, "config.yaml")
    after_reading = load_config_mapping(after, "patched.yaml")
    expected = _expected(before_reading, plan)
    # (a) the plan's keys read back as intended, of the intended kind, and every other value as it was
    for path, value in expected.items():
        assert (type(value_at(after_reading, path)), value_at(after_reading, path)) == (type(value), value), path
    rope = plan.rope_scaling_factor is None and "rope_scaling" in before_reading["model"]
    assert {path: value for path, value in _leaves(after_reading).items() if path not in expected} == {
        path: value for path, value in _leaves(before_reading).items()
        if path not in expected and not (rope and path[:2] == ("model", "rope_scaling"))}
    # (b) every line the patch does not change stays, byte for byte (with its line ending and the byte order mark)
    changed = {path[-1] for path, value in expected.items() if value_at(before_reading, path) != value}
    if rope:
        changed |= {"rope_scaling", "rope_type", "factor", "original_max_position_embeddings"}
    changed_line = re.compile(rf"(?:^\ufeff?|[\s{{,]){'|'.join(map(re.escape, changed))}:")
    ending = "\r\n" if "\r\n" in text else "\r" if "\r" in text else "\n"
    before_lines = text.split(ending)
    moved = {name for line in before_lines if changed_line.search(line) for name in re.findall(r"&(\w+)", line)}
    moved_to = re.compile(rf"\*(?:{'|'.join(moved) or '(?!)'})\b")  # where the anchor of a changed key moves
    kept = Counter(line for index, line in enumerate(before_lines)
                   if not changed_line.search(line) and not moved_to.search(line)
                   and not (index and _opens_value(before_lines[index - 1], changed_line)))
    assert after.startswith("\ufeff") == text.startswith("\ufeff")
    assert not Counter(kept) - Counter(after.split(ending)), "a line the patch does not change is lost"
    assert ending == "\n" or "\n" not in after.replace("\r\n", "")
    # (c) the comments, and every anchor, stay (an anchor that aliases repeat, on a changed key, moves to one; where
    # every alias is on a key the patch sets to the same value, `KIN`, it stays, and they do)
    for comment in re.findall(r"#[^\r\n]*", text):
        if not (rope and comment == "# YaRN"):
            assert after.count(comment) >= text.count(comment), comment
    alone = {line.strip() for line in after.split(ending) if line.lstrip().startswith("#")} - {
        line.strip() for line in before_lines if line.lstrip().startswith("#")}  # a comment on a line of its own
    flags_note = {line.strip() for width in range(1, 9) for line in patch_module._flags_note(width, API_OPTIONS)}
    # the host memory note, wrapped where its start-up peak names the training need
    assert all(line.startswith("# host memory:") or re.fullmatch(r"#   .*\btraining\).*", line) or line in flags_note
               for line in alone), alone
    for anchor in set(re.findall(r"&(\w+)", text)):
        assert after.count(f"&{anchor}") == text.count(f"&{anchor}"), anchor
        if f"copy_of_{anchor}:" not in text:  # its aliases are on keys the patch sets to one value (`KIN`), or none
            assert after.count(f"*{anchor}") == text.count(f"*{anchor}"), anchor
        else:  # the first alias the patch leaves is the anchor's place now, and those it sets are written out
            set_too = len(re.findall(rf": \*{anchor}  # the same", text))
            assert after.count(f"*{anchor}") >= text.count(f"*{anchor}") - 1 - set_too, anchor


def test_the_merge_falls_back_to_ruamels_text_where_it_would_read_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    # A merge that would change a value (here a made-up change of the config's own, kept where the patch writes
    # nothing) is not written: the round trip's text is, whole.
    text = "model:\n  model_path: q/Qwen3-4B\n  max_model_len: 8192\n  spaced:  # why\n    8\n"
    real = patch_module._hunks

    def wrong(base: list[str], other: list[str], *, patch: bool) -> list[tuple[int, int, bool, list[str]]]:
        return [(start, end, by_patch, [line.replace("8\n", "9\n") for line in lines])
                for start, end, by_patch, lines in real(base, other, patch=patch)]

    monkeypatch.setattr(patch_module, "_hunks", wrong)
    assert patch_trinity_config(text, plans()[1], catalog().model("4B")) == (
        "model:\n  model_path: q/Qwen3-4B\n  max_model_len: 24576\n  spaced: 8 # why\n"
        "trainer:\n  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 24576\n")


def test_write_keeps_the_anchor_and_comment_of_a_length_whose_value_is_on_the_next_line(cli, tmp_path) -> None:
    # s56's known bug, as a user meets it: --write lost both "&len" and "# the context".
    config = tmp_path / "grpo.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\n"
                      "model:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: &len  # the context\n    8192\n"
                      "cluster: {node_num: 1, gpu_per_node: 2}\n", encoding="utf-8")
    patched = tmp_path / "patched.yaml"
    status, _, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--len", "24576", "--write", str(patched))
    assert status == 0
    assert patched.read_text(encoding="utf-8").startswith(
        "algorithm: {algorithm_type: grpo}\n"
        "model:\n  model_path: Qwen/Qwen3-4B\n  # To check this file as its plan was made:\n"
        f"  #   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve --from-config {patched} --check "
        "--gpu A100-80GB\n"
        "  max_model_len: &len 24576  # the context\n"
        "cluster: {node_num: 1, gpu_per_node: 2}\n")


def test_an_alias_the_anchor_of_a_changed_key_moves_to_keeps_its_comment_beside_it() -> None:
    # ruamel writes an alias's comment on a line of its own (or, before the file's last comment, after the sections
    # the patch adds); where the alias becomes the anchor's place, the line is the patch's, so the comment goes back.
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: &len 8192\n"
            "explorer:\n  max_timeout: *len  # the explorer's\n# the end\n")
    assert patch_trinity_config(text, plans()[1], catalog().model("4B")) == (
        "model:\n  model_path: q/Qwen3-4B\n  max_model_len: 24576\n"
        "explorer:\n  max_timeout: &len 8192  # the explorer's\n"
        "trainer:\n  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 24576\n# the end\n")


def test_an_alias_after_a_changed_key_keeps_its_comment_beside_it_where_keys_are_added_after_it() -> None:
    # The ref's SP (its value on the next line) changes, and ruamel writes the alias's comment on a line of its own,
    # after the keys the patch adds at the trainer's end: the comment goes back beside the alias, and that line goes.
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: 8192\ntrainer:\n  trainer_config:\n"
            "    actor_rollout_ref:\n      actor:\n        fsdp_config: &fsdp\n          param_offload: false\n"
            "      ref:\n        ulysses_sequence_parallel_size:\n          1\n"
            "        fsdp_config: *fsdp  # the same\n")
    assert patch_trinity_config(text, plans()[1], catalog().model("4B")) == (
        "model:\n  model_path: q/Qwen3-4B\n  max_model_len: 24576\ntrainer:\n  trainer_config:\n"
        "    actor_rollout_ref:\n      actor:\n        fsdp_config: &fsdp\n          param_offload: false\n      ref:\n"
        "        ulysses_sequence_parallel_size: 2\n        fsdp_config: *fsdp  # the same\n"
        "  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 24576\n")


def test_a_changed_key_beside_a_key_ruamel_rewrites_leaves_that_key_as_it_was() -> None:
    # ruamel rewrites both keys' lines (values on the next line), and the patch changes the first: the run of lines
    # they differ in is cut at the second key, so that its lines are the config's, not ruamel's "spaced: 8 # why".
    text = "model:\n  model_path: q/Qwen3-4B\n  max_model_len:\n    8192\n  spaced:  # why\n    8\n"
    assert patch_trinity_config(text, plans()[1], catalog().model("4B")) == (
        "model:\n  model_path: q/Qwen3-4B\n  max_model_len: 24576\n  spaced:  # why\n    8\n"
        "trainer:\n  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 24576\n")


def test_a_changed_flow_collection_is_written_on_one_line_without_the_comments_inside_it() -> None:
    # What ruamel cannot keep (docs/trinity.md, what --write keeps): a flow mapping the patch changes a key of is
    # written by it, on one line; the comment inside it goes. The comment after it, and the lines after it, stay.
    text = ("model: { model_path: q/Qwen3-4B,  max_model_len: 8192 }  # flow\ntrainer: {\n"
            "  ulysses_sequence_parallel_size: 1,  # inside\n  note: x\n}\n# end\n")
    assert patch_trinity_config(text, plans()[1], catalog().model("4B")) == (
        "model: {model_path: q/Qwen3-4B, max_model_len: 24576}    # flow\n"
        "trainer: {ulysses_sequence_parallel_size: 2, note: x, max_token_len_per_gpu: 24576}\n# end\n")


def test_a_config_written_as_json_is_written_back_as_json() -> None:
    # A scheduler that writes its configs as JSON (which YAML reads) reads the copy back with a JSON parser: the keys
    # and strings the plan adds are quoted, as the config's own are (s89: they were plain, `max_token_len_per_gpu:`
    # and `yarn`, which no JSON parser reads).
    text = json.dumps({"model": {"model_path": "q/Qwen3-4B", "max_model_len": 8192}, "trainer": {"save_interval": 5},
                       "monitor": {"tags": ["a", "b c"]}}, indent=2) + "\n"
    offload, sp2 = plans()
    for plan in (offload, sp2):
        patched = json.loads(patch_trinity_config(text, plan, catalog().model("4B")))
        assert patched["trainer"]["ulysses_sequence_parallel_size"] == plan.sp
        assert (patched["trainer"]["save_interval"], patched["monitor"]) == (5, {"tags": ["a", "b c"]})
    assert patched["model"] == {"model_path": "q/Qwen3-4B", "max_model_len": 24576}
    # words90: laid out as it was, indented as it was (two spaces, four), so a diff shows the keys the plan changed
    # (it came back on one line); JSON on one line stays on one
    for indent in ("  ", "    "):
        assert patch_trinity_config(text.replace("  ", indent), sp2, catalog().model("4B")) == (
            '{\n~"model": {\n~~"model_path": "q/Qwen3-4B",\n~~"max_model_len": 24576\n~},\n~"trainer": {\n'
            '~~"save_interval": 5,\n~~"ulysses_sequence_parallel_size": 2,\n~~"max_token_len_per_gpu": 24576\n~},\n'
            '~"monitor": {\n~~"tags": [\n~~~"a",\n~~~"b c"\n~~]\n~}\n}\n').replace("~", indent)
    assert patch_trinity_config(json.dumps(json.loads(text)), sp2, catalog().model("4B")).count("\n") == 1
    # mutants53: an empty mapping or list stays on its line, as {} and []
    empty = text.replace('"tags": [', '"none": {}, "empty": [], "tags": [')
    laid_out = patch_trinity_config(empty, sp2, catalog().model("4B"))
    assert '\n    "none": {},\n    "empty": [],\n    "tags": [\n' in laid_out
    rope = json.loads(patch_trinity_config(text, offload, catalog().model("4B")))["model"]["rope_scaling"]
    assert rope["rope_type"] == "yarn" and rope["factor"] == 2.5
    # the LoRA adapter a plan adds to a config without one is a plain mapping in a list: quoted too (was {lora_rank: 32})
    (answer,) = solve(make_query(catalog(), gpu="a100", model="4B", objective="cheapest", budget_gpus=2, exact=True,
                                 max_model_len=8192, lora_rank=32), catalog())
    patched = json.loads(patch_trinity_config(text, answer.plans[0], catalog().model("4B")))
    assert patched["model"]["lora_configs"] == [{"lora_rank": 32}]


def test_an_anchor_in_a_block_before_an_alias_beside_that_block_keeps_its_comment() -> None:
    # The anchors are found in the order of the text: the alias after the block is not taken for the anchor (whose
    # comment was then dropped as a copy of the alias's, and lost where the patch changed the anchored key).
    # The actor's 65536 is above the plan's 24576, which the patch lowers it to (s81, rolebudget: a 16384 here, below
    # the plan's but holding a sequence of 24576 at SP 2, is kept, and the anchored key no longer changes).
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: 8192\ntrainer:\n  trainer_config:\n"
            "    actor_rollout_ref:\n      actor:\n        ppo_max_token_len_per_gpu: &budget 65536  # by hand\n"
            "  budget_note: *budget\n")
    assert patch_trinity_config(text, plans()[1], catalog().model("4B")) == (
        "model:\n  model_path: q/Qwen3-4B\n  max_model_len: 24576\ntrainer:\n  trainer_config:\n"
        "    actor_rollout_ref:\n      actor:\n        ppo_max_token_len_per_gpu: 24576  # by hand\n"
        "  budget_note: &budget 65536\n  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 24576\n")


def test_an_anchor_whose_aliases_the_patch_sets_to_the_same_value_stays_and_they_stay_aliases() -> None:
    # The length and the trainer's and actor's budgets (24576 each) share &len, the SP keys &sp (2 each): the anchors
    # stay where they were with the new values, and the aliases stay aliases with their comments; no warning. Before,
    # each place got the number written out, the anchors and aliases went, and the aliases' comments were left on
    # lines of their own.
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: &len 8192  # one number\n"
            "trainer:\n  ulysses_sequence_parallel_size: &sp 1   # sp\n  max_token_len_per_gpu: *len  # the same\n"
            "  trainer_config:\n    actor_rollout_ref:\n      actor:\n        ppo_max_token_len_per_gpu: *len\n"
            "        ulysses_sequence_parallel_size: *sp\n      ref:\n"
            "        ulysses_sequence_parallel_size: *sp  # also\n# end\n")
    assert patch_trinity_config(text, plans()[1], catalog().model("4B")) == text.replace(
        "&len 8192", "&len 24576").replace("&sp 1", "&sp 2")
    assert anchored_keys(text, plans()[1], catalog().model("4B")) == []
    # A value on the next line, after the anchor and a comment, alike.
    spaced = text.replace("&len 8192  # one number\n", "&len  # one number\n    8192\n")
    assert patch_trinity_config(spaced, plans()[1], catalog().model("4B")).startswith(
        "model:\n  model_path: q/Qwen3-4B\n  max_model_len: &len 24576  # one number\n"
        "trainer:\n  ulysses_sequence_parallel_size: &sp 2   # sp\n  max_token_len_per_gpu: *len  # the same\n")


def test_an_anchor_set_through_a_mapping_an_alias_repeats_stays_and_one_set_to_other_values_goes() -> None:
    # Offload sets the trainer's flag (&off) and the actor's flags that repeat it, in a mapping the ref repeats (so
    # set twice): the anchor stays, with true. The length (&len, 102400) and the trainer's budget repeating it
    # (51200) differ: each is written out, the anchor goes, and the warning stays.
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: &len  # the context\n    8192\n"
            "trainer:\n  max_token_len_per_gpu: *len\n  param_offload: &off false  # off\n  trainer_config:\n"
            "    actor_rollout_ref:\n      actor:\n        fsdp_config: &fsdp\n          param_offload: *off\n"
            "          optimizer_offload: *off   # opt\n      ref:\n        fsdp_config: *fsdp\n")
    assert patch_trinity_config(text, plans()[0], catalog().model("4B")) == (
        "model:\n  model_path: q/Qwen3-4B\n  max_model_len: 102400  # the context\n  rope_scaling:\n"
        "    rope_type: yarn\n    factor: 2.5\n    original_max_position_embeddings: 40960\n    rope_theta: 1000000\n"
        "trainer:\n  max_token_len_per_gpu: 51200\n  param_offload: &off true  # off\n"
        "  # host memory: 102.2 GiB per node for Offload (at start-up, every rank loading the model; 93.4\n"
        "  #   while training); not checked: host_ram_gb not given\n"
        "  trainer_strategy: fsdp2\n  ulysses_sequence_parallel_size: 4\n  save_hf_checkpoint: never\n"
        "  optimizer_offload: true\n  offload_policy: true\n  trainer_config:\n    actor_rollout_ref:\n      actor:\n"
        "        fsdp_config: &fsdp\n          param_offload: *off\n          optimizer_offload: *off   # opt\n"
        "          offload_policy: true\n      ref:\n        fsdp_config: *fsdp\n")
    assert anchored_keys(text, plans()[0], catalog().model("4B")) == [
        ("model.max_model_len is the anchor &len, which other keys repeat (*len): the patch sets it to 102400 and "
         "trainer.max_token_len_per_gpu to 51200, written out (&len and *len go)"),
        ("trainer.trainer_config.actor_rollout_ref.actor.fsdp_config is the anchor &fsdp, which "
         "trainer.trainer_config.actor_rollout_ref.ref.fsdp_config repeats (*fsdp): the patch's changes in it "
         "(param_offload to true, ...) reach it too")]


def test_an_alias_keeps_its_comment_where_an_alias_of_the_same_key_comes_before_it() -> None:
    # ruamel writes the ref's alias's comment after the keys the patch adds to the ref; it goes back beside the ref's
    # alias, not beside the actor's (the first line like it), as before.
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: 8192\ntrainer:\n  epochs: &n 1\n  trainer_config:\n"
            "    actor_rollout_ref:\n      actor:\n        micro: *n\n      ref:\n        micro: *n  # also\n# end\n")
    after = patch_trinity_config(text, plans()[0], catalog().model("4B"))
    assert ("      actor:\n        micro: *n\n        fsdp_config:\n" in after
            and "      ref:\n        micro: *n  # also\n        fsdp_config:\n" in after)


def test_write_keeps_a_token_budget_anchor_whose_aliases_it_sets_alike(cli, tmp_path) -> None:
    # The user's one number to edit: the trainer's budget, which the roles' own budgets repeat. The plan's budget
    # (49152) goes on the anchor, the aliases stay, and no warning says that they keep the old one. (--token-budget
    # auto: the config's own 40000, below the default at 24576 tokens, would otherwise cap the plan's, s80.)
    config = tmp_path / "grpo.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: 8192\n"
                      "cluster: {node_num: 1, gpu_per_node: 2}\n"
                      "trainer:\n  max_token_len_per_gpu: &budget 40000  # one number to edit\n  trainer_config:\n"
                      "    actor_rollout_ref:\n      actor:\n        ppo_max_token_len_per_gpu: *budget\n"
                      "      ref:\n        log_prob_max_token_len_per_gpu: *budget  # the same\n", encoding="utf-8")
    patched = tmp_path / "patched.yaml"
    status, _, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--len", "24576", "--token-budget", "auto",
                         "--write", str(patched))
    assert status == 0 and "warning" not in err
    written = patched.read_text(encoding="utf-8")
    assert "trainer:\n  max_token_len_per_gpu: &budget 49152  # one number to edit\n" in written
    assert "      actor:\n        ppo_max_token_len_per_gpu: *budget\n" in written
    assert "      ref:\n        log_prob_max_token_len_per_gpu: *budget  # the same\n" in written
    assert load_config_mapping(written, "patched.yaml")["trainer"]["trainer_config"]["actor_rollout_ref"]["ref"][
        "log_prob_max_token_len_per_gpu"] == 49152


def test_an_alias_the_patch_writes_out_keeps_its_comment_at_the_end_of_its_line() -> None:
    # ruamel holds an alias's comment in front of what follows it (the next key, the end of the file): where the
    # patch writes the alias out as a number (the anchor moving to an alias it leaves, or to another value than the
    # anchor's key), the comment went on a line of its own, at the alias's column. It stays at the end of the key's
    # line, as far from the value as it was; the lines after it stay where they were.
    model = catalog().model("4B")
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: &len 8192  # the context\n"
            "trainer:\n  max_token_len_per_gpu: *len  # the same\n\n  # the rest\n  note: x\n"
            "explorer:\n  max_timeout: *len  # the explorer's\n")
    assert patch_trinity_config(text, plans()[1], model) == (
        "model:\n  model_path: q/Qwen3-4B\n  max_model_len: 24576  # the context\n"
        "trainer:\n  max_token_len_per_gpu: 24576  # the same\n\n  # the rest\n  note: x\n"
        "  ulysses_sequence_parallel_size: 2\n"
        "explorer:\n  max_timeout: &len 8192  # the explorer's\n")
    last = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: &len 8192  # the context\n"
            "trainer:\n  note: x\n  max_token_len_per_gpu: *len    # the same\n# the end\n")
    after = patch_trinity_config(last, plans()[0], model)
    assert "  max_model_len: 102400  # the context\n" in after
    assert "trainer:\n  note: x\n  max_token_len_per_gpu: 51200    # the same\n  # host memory:" in after
    assert after.endswith("          offload_policy: true\n# the end\n") and after.count("# the same") == 1


def test_the_warning_on_an_anchored_value_says_what_the_patch_does_at_each_alias() -> None:
    # It said "the patch sets it to 102400 and they keep 8192" even where the patch set the aliases too (to the
    # plan's budget, written out): it says, for the anchor's key and each alias, the value set or the value left.
    model, head = catalog().model("4B"), "model:\n  model_path: q/Qwen3-4B\n  max_model_len: &len 8192\n"
    words = "model.max_model_len is the anchor &len, which other keys repeat (*len): the patch "
    budgets = ("trainer:\n  max_token_len_per_gpu: *len\n  trainer_config:\n    actor_rollout_ref:\n      actor:\n"
               "        ppo_max_token_len_per_gpu: *len\n")
    # (explorer.max_timeout: a key the plan leaves; the rollout's own length is set with the model's, which it was)
    rollout = "explorer:\n  max_timeout: *len\n  auxiliary_length: *len\n"
    # Every alias left as it is: they keep the old value, and the anchor moves to the first.
    assert anchored_keys(head + rollout, plans()[0], model) == [
        (f"{words}sets it to 102400 and leaves explorer.max_timeout and explorer.auxiliary_length at "
         "8192 (the anchor moves to explorer.max_timeout)")]
    after = patch_trinity_config(head + rollout, plans()[0], model)
    assert "  max_timeout: &len 8192\n  auxiliary_length: *len\n" in after
    # Every alias set, to another value than the anchor's key: each written out, and the anchor goes.
    after = patch_trinity_config(head + budgets, plans()[0], model)
    assert anchored_keys(head + budgets, plans()[0], model) == [
        (f"{words}sets it to 102400 and trainer.max_token_len_per_gpu to 51200 and "
         "trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu to 51200, written out (&len and "
         "*len go)")]
    assert "&len" not in after and "*len" not in after and after.count("_token_len_per_gpu: 51200\n") == 2
    # A mix: the budgets set (the trainer's the same as the length, 24576, but the anchor moves to the explorer's
    # timeout, which is left), the explorer's keep the old value.
    assert anchored_keys(head + budgets + rollout, plans()[1], model) == [
        (f"{words}sets it to 24576 and trainer.max_token_len_per_gpu to 24576 and "
         "trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu to 24576, written out (no longer "
         "*len), and leaves explorer.max_timeout and explorer.auxiliary_length at 8192 (the anchor "
         "moves to explorer.max_timeout)")]
    after = patch_trinity_config(head + budgets + rollout, plans()[1], model)
    assert after.count("_token_len_per_gpu: 24576\n") == 2 and "  max_timeout: &len 8192\n" in after
    # The anchor's key left (the plan's length already), an alias set: the anchor stays; the key named is the
    # anchor's, not the alias's (it was "trainer.max_token_len_per_gpu is the anchor &len").
    at_length = head.replace("8192", "102400") + "trainer:\n  max_token_len_per_gpu: *len\n"
    assert anchored_keys(at_length, plans()[0], model) == [
        f"{words}sets trainer.max_token_len_per_gpu to 51200, written out (no longer *len), and leaves it at 102400"]
