"""Ranked plans past the validated length (session 62): a `--top` row whose length is past what the model is known to
handle is marked as the plan's headline marks it, in the text and in each plan's JSON (`past_validated_length`)."""

from __future__ import annotations

import json

from rich.console import Console

from solver.query import make_query
from solver.render.ranking import ranking_view
from solver.solve import plan
from solver.tables import load_catalog

CATALOG = load_catalog()
THIRTY_B_TOP = ("--model", "30B-A3B", "--gpu", "h100", "--gpus", "8", "--maximize", "len", "--top", "3")


def test_a_ranked_row_past_the_validated_length_is_marked_and_its_note_says_what_to_do(cli):
    status, out, err = cli(*THIRTY_B_TOP)
    rows = [line for line in out.splitlines() if line.startswith("│ ")]
    assert (status, err) == (0, "")
    assert [row.split("│")[4].strip() for row in rows] == ["210944^", "105472", "105472"]
    assert ("^ past the validated 131072: check the model's quality at this length, or plan --len 131072"
            in out.splitlines())
    assert "max_model_len  210944, past the validated 131072 (YaRN" in out  # the headline's words, the same number


def test_each_ranked_plan_in_json_holds_the_validated_length_it_is_past(cli):
    status, out, _ = cli(*THIRTY_B_TOP, "--json")
    (answer,) = json.loads(out)
    assert status == 0
    assert [(p["max_model_len"], p["past_validated_length"]) for p in answer["plans"]] == [
        (210944, 131072), (105472, None), (105472, None)]
    assert answer["validated"]["past_validated_length"] is None


def test_a_length_past_the_native_context_on_the_models_own_scaling_is_marked_past_its_native_context(cli):
    status, out, _ = cli("--model", "Llama-3.1-8B", "--gpu", "h100", "--gpus", "8", "--maximize", "len", "--top", "2",
                         "--json")
    (answer,) = json.loads(out)
    best = answer["plans"][0]
    assert status == 0 and best["max_model_len"] > 131072
    assert (best["past_validated_length"], best["yarn_beyond_validated"]) == (131072, False)


def test_within_the_validated_length_no_row_is_marked_and_no_note_is_given(cli):
    status, out, _ = cli(*THIRTY_B_TOP[:-4], "--len", "131072", "--top", "3")
    assert status == 0 and "past the validated" not in out and "^" not in out


def test_the_mark_is_bold_yellow_as_the_headline():
    query = make_query(CATALOG, gpu="h100", model="30B-A3B", budget_gpus=8, objective="max_len", top=2)
    (answer,) = plan(query, CATALOG)
    console = Console(record=True, width=250, color_system="truecolor")
    console.print(ranking_view(answer).table)
    styled = console.export_text(styles=True)
    assert "\x1b[1;33m      210944^\x1b[0m" in styled
