"""The last uncovered spots of review s65's deadcode3, judged (helper deadcode3b): each reached by the input that takes
it, with what it then says or gives; a bug one of them showed fixed (a cells file's ``source`` mapping, a union whose
members pydantic tagged in the location: the messages named a field 'Source' and a place 'source, constrained-str')."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table
from test_vllmlen2_s63 import LLAMA_SHAPE
from test_writefix_s56 import catalog, plans

from solver.render import TableOrBlocks
from solver.tables import TableError, load_model_config
from solver.tables.inputs import TrinityFields
from solver.tables.reading import load_validated
from solver.trinity import patch_trinity_config

CELLS = Path(__file__).parent / "data" / "cells" / "h800.yaml"
QUERY = ("--model", "8B", "--gpu", "H800", "--len", "32768")


def _cells_with_source(tmp_path: Path, source: str) -> Path:
    text = CELLS.read_text(encoding="utf-8")
    first, rest = text.split("\nsource: ", 1)
    path = tmp_path / "cells.yaml"
    path.write_text(f"{first}\nsource: {source}\n{rest.split(chr(10), 1)[1]}", encoding="utf-8")
    return path


@pytest.mark.parametrize(("source", "problem"), [
    ("{document: my bench}", "source: missing field 'section' (fields: document, section)"),
    ("{document: my bench, section: t1, page: 3}", "source: unknown field 'page' (fields: document, section)"),
    ("{document: 5, section: t1}",
     "source, document: must be text, got 5 (YAML reads it, unquoted, as a number: quote it to keep it as text)"),
    ("5", "source: must be text, got 5 (YAML reads it, unquoted, as a number: quote it to keep it as text)"),
    ("[1, 2]", "source: must be text, got [1, 2]"),
], ids=["missing", "unknown", "mapping-field-type", "number", "list"])
def test_a_cells_files_source_problem_names_its_field_not_pydantic_tags(cli, tmp_path: Path, source: str, problem: str):
    path = _cells_with_source(tmp_path, source)
    assert cli("--cells", str(path), *QUERY) == (2, "", f"solve: error: --cells {path}: line 3: {problem}\n")


def test_a_cells_files_source_of_either_form_still_loads(cli, tmp_path: Path):
    for source in ("{document: my bench, section: table 1}", '"my bench, table 1"'):
        status, out, err = cli("--cells", str(_cells_with_source(tmp_path, source)), *QUERY)
        assert (status, err) == (0, "")
        assert "H800-80GB" in out


# reading.py 333 (`_model_at` past a field of no model of rft-solver's): reached by the one such field, the
# maintainer's tables/trinity-fields.yaml's sections, a mapping of lists; a mapping in a list's place names no fields.

def test_a_trinity_fields_release_given_a_mapping_names_its_keys_and_no_fields(tmp_path: Path):
    path = tmp_path / "trinity-fields.yaml"
    path.write_text('releases:\n  "0.5.0":\n    algorithms: [ppo]\n    sections: {"": {algorithm: 1}}\n    open: {}\n'
                    '    null: []\n', encoding="utf-8")
    with pytest.raises(TableError) as raised:
        load_validated(TrinityFields, path)
    assert str(raised.value) == (f'{path}: releases, 0.5.0, sections, "": must be a list, got a mapping '
                                 "(keys: algorithm)")


# A cells file's row of an odd length (30001 tokens, where SP=4 trains, before the row where SP=4 runs out of memory)
# caps an estimate at the lengths its default budget reaches (30002 takes 15001 tokens per GPU at SP=4, as 30001
# does), in the default mode as --token-budget auto caps it: the same plan at the same budget (session 65 found the
# default mode refusing 30002 there; tests/test_oddlen_s66.py has the rule's other cases).

ODD_ROWS = ('gpu: H800-80GB\nmemory_gb: 80\nsource: "made-up: a row of an odd length"\ntables:\n  - gpus: 8\n'
            '    section: "8 x H800"\n    models: [8B]\n    rows:\n'
            '      - {max_model_len: 30001, cells: {8B: SP=4}}\n      - {max_model_len: 40000, cells: {8B: SP=8}}\n')
ODD_QUERY = ("--model", "8B", "--gpu", "H800", "--gpus", "8", "--len", "30002", "--sp", "4")


def test_a_length_auto_trains_at_the_default_budget_trains_in_the_default_mode_too(cli, tmp_path: Path):
    cells = tmp_path / "odd.yaml"
    cells.write_text(ODD_ROWS, encoding="utf-8")
    found = []
    for budget in ("default", "auto"):
        status, out, _ = cli("--cells", str(cells), *ODD_QUERY, "--no-offload", "--token-budget", budget, "--json")
        [best] = json.loads(out)[0]["plans"][:1]
        found.append((status, best["env"], best["offload"], best["sp"], best["max_token_len_per_gpu"],
                      best["lowered_budget"], best["evidence"], best["cost"]))
    assert found == [(0, True, False, 4, 15001, False, "estimated", 0.164125)] * 2


# model_config.py 634->636 (a RoPE scaling without `factor`): transformers 5's `rope_parameters` of a plain model
# (`rope_type: default`), a `dynamic` one with a null factor (transformers refuses one without the key), and a
# per-layer one whose later type gives none: no factor
# where none is given, and the last factor given standing (docs/trinity.md, `past-native-on-own-scaling-refused`).

@pytest.mark.parametrize(("config", "fields"), [
    ({"rope_parameters": {"rope_type": "default", "rope_theta": 1e6}}, (None, 32768, None, 32768)),
    ({"rope_scaling": {"rope_type": "dynamic", "factor": None}}, ("dynamic", 32768, None, 32768)),
    ({"rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 4.0},
                          "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}},
     ("linear", 32768, 131072.0, 131072.0)),
], ids=["transformers5-default", "dynamic-null-factor", "per-layer-last-without-factor"])
def test_a_rope_scaling_without_a_factor_keeps_the_length_or_the_factor_before_it(tmp_path: Path, config: dict,
                                                                                  fields: tuple):
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({**LLAMA_SHAPE, **config}), encoding="utf-8")
    model = load_model_config(folder)
    assert (model.rope_scaling, model.native_context, model.vllm_context, model.vllm_longest_length) == fields


# trinity/patch.py 574 (the stale "# prompt + response" comment dropped whole): ruamel ends an end-of-line comment
# with its line break, which is "\n" but for a NEL (U+0085) one; there the comment left nothing, and ruamel's writer
# failed on the empty comment (IndexError) without the line that drops it.

SUM_LAST_NEL = ("algorithm: {algorithm_type: grpo}\n"
                "cluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 2\n"
                "    tensor_parallel_size: 1\nmodel:\n  model_path: Qwen/Qwen3-8B\n  max_prompt_tokens: 2048\n"
                "  max_response_tokens: 30720\n  max_model_len: 32768  # prompt + response\x85")


def test_write_drops_a_sum_comment_ended_by_a_nel_line_break(cli, tmp_path: Path):
    config, written = tmp_path / "config.yaml", tmp_path / "written.yaml"
    config.write_text(SUM_LAST_NEL, encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--maximize", "len", "--write", str(written))
    text = written.read_text(encoding="utf-8")
    assert status == 0, err
    assert "prompt + response" not in text and "\x85" not in text
    assert [line for line in text.splitlines() if "max_model_len" in line] == ["  max_model_len: 50176"]


# trinity/patch.py 837->825 (an alias's comment put back with no line of its own to take away): ruamel holds the
# comment in front of the key after the alias; where the patch deletes that key (a rope_scaling the plan's length
# within the native context does not need), ruamel writes the comment nowhere, and it goes back beside the alias.

def test_an_alias_keeps_its_comment_where_the_patch_deletes_the_key_after_it():
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: &a 8192\n  seed: *a  # the same\n"
            "  rope_scaling: {rope_type: yarn, factor: 4.0, original_max_position_embeddings: 32768}\n")
    assert patch_trinity_config(text, plans()[1], catalog().model("4B")) == (
        "model:\n  model_path: q/Qwen3-4B\n  max_model_len: 24576\n  seed: &a 8192  # the same\n"
        "trainer:\n  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 24576\n")


# render/layout.py 104->106 (a table without a title, turned into blocks): both callers give a title; the class is
# render's (exported), and its blocks show what its table form shows: no title line where there is none.

@pytest.mark.parametrize(("title", "head"), [(None, ""), ("ranked", "ranked\n")], ids=["untitled", "titled"])
def test_a_narrow_table_without_a_title_turns_into_blocks_with_no_title_line(title: str | None, head: str):
    table = Table(title=title)
    table.add_column("#")
    table.add_column("plan")
    table.add_column("cost", no_wrap=True)
    table.add_row("1", "Env + SP=2", "0.5")
    table.add_row("2", "SP=4", "")
    out = io.StringIO()
    Console(file=out, width=16, color_system=None).print(TableOrBlocks(table, heading=0, heading_form="#{}"))
    assert out.getvalue() == f"{head}#1  plan  Env + \n          SP=2  \n    cost  0.5   \n#2  plan  SP=4  \n"
