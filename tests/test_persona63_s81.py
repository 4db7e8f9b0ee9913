"""A backend developer's service over the Python API (s81, persona63): `config_query` refuses an `option_names` that
is no `OptionNames` in one line (it raised `AttributeError`); `with_config_verdicts` refuses answers of another
question, as `answers_text` does (it judged an 8B config on a 0.6B answer for L40S, naming the 8B's table);
`place` takes `token_budget` as a mode alone, as docs/api.md now says; mixed calls from 4 threads give the serial
answers, and answers read back from their JSON give the same JSON: a memory answer's too, whose `headroom_gib` is
printed from its rounded figures (it read back 0.0001 off)."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

import solver
from solver.api import answer_query, config_query, with_config_verdicts
from solver.trinity import read_trinity_config

ROOT = Path(__file__).parents[1]
TRINITY = ROOT / "docs" / "examples" / "trinity.yaml"
FLEET = ROOT / "docs" / "examples" / "fleet.yaml"


def _config() -> tuple[solver.Catalog, Any, str]:
    catalog, text = solver.load_catalog(), TRINITY.read_text()
    return catalog, read_trinity_config(text, "trinity.yaml", {}), text


def test_config_query_refuses_option_names_of_another_type_in_one_line() -> None:
    catalog, config, _ = _config()
    with pytest.raises(solver.QueryError, match=r"^option_names must be an OptionNames, got 'x'$"):
        config_query(catalog, config, gpu="h20", option_names="x")  # type: ignore[arg-type]


def test_with_config_verdicts_refuses_answers_of_another_question() -> None:
    catalog, config, text = _config()
    query = config_query(catalog, config, gpu="h20")
    (other,) = solver.plan("0.6B", gpu="l40s", max_model_len=4096, budget_gpus=1)
    with pytest.raises(solver.QueryError) as raised:
        with_config_verdicts((other,), query, catalog, config, text, "trinity.yaml", {})
    assert str(raised.value) == ("answers[0] is for Qwen3-0.6B on L40S-48GB, not one of the query's (Qwen3-8B on "
                                 "H20-96GB): pass the answers of that query")
    (h20,) = with_config_verdicts(answer_query(query, catalog), query, catalog, config, text, "trinity.yaml", {})
    assert h20.current is not None and h20.gpu == "H20-96GB"  # the query's own answers are judged as before


@pytest.mark.parametrize("place", [solver.place, solver.buy_nodes])
def test_place_takes_a_token_budget_mode_alone(place: Any) -> None:
    # s87: with the command's hint that a cap is one job's (`cap_is_one_jobs`), in the API's names
    with pytest.raises(solver.QueryError) as raised:
        place(FLEET, token_budget="16k")
    assert str(raised.value) == (
        "token_budget must be one of default, auto, got '16k' (a cap in tokens per GPU is one job's: "
        "solver.plan(token_budget=N) plans a job with it; solver.estimate_memory(max_token_len_per_gpu=T) estimates "
        "one setting at it)")


def _mixed(call: tuple[str, dict[str, Any]]) -> str:
    kind, arguments = call
    try:
        if kind == "memory":
            return solver.memory_answer(**arguments).model_dump_json()
        return json.dumps([answer.as_json() for answer in solver.plan(**arguments)])
    except solver.QueryError as error:
        return str(error)


def test_mixed_calls_from_four_threads_give_the_serial_answers() -> None:
    calls = [("plan", {"model": model, "gpu": gpu, "max_model_len": 32768, "budget_gpus": 8, "top": 3})
             for model in ("4B", "8B") for gpu in ("a100", "h20")]
    calls += [("memory", {"model": "8B", "gpu": "h100", "gpus": 8, "max_model_len": 131072, "sp": sp, "env": True})
              for sp in (2, 8)]
    calls += [("plan", {"model": "8B", "gpu": ["a100", "h100"], "objective": "max_len", "budget_gpus": 4}),
              ("plan", {"model": "8B", "max_model_len": -1})]
    serial = [_mixed(call) for call in calls]
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(_mixed, calls)) == serial
    assert serial[-1] == "max_model_len must be a whole number from 1 to 16777216, got -1"


def test_answers_read_back_from_their_json_give_the_same_json() -> None:
    answers = solver.plan("8B", gpu=["a100", "h20"], max_model_len=32768, budget_gpus=8, top=3)
    saved = json.dumps([answer.as_json() for answer in answers])
    rebuilt = TypeAdapter(list[solver.Answer]).validate_json(saved)
    assert [answer.as_json() for answer in rebuilt] == [answer.as_json() for answer in answers]
    result = solver.place(FLEET, time_limit_s=10)
    assert solver.ClusterResult.model_validate_json(result.model_dump_json()).model_dump(mode="json") == \
        result.model_dump(mode="json")


def test_memory_json_prints_the_headroom_its_rounded_figures_give_and_reads_back_the_same() -> None:
    # Qwen3-8B on 8 A100-40GB at 16384, Env: -27.16544 GiB exactly; the JSON printed -27.1654, and the answer read back
    # -27.1655, its usable 35.6533 less its total 62.8188, so a service's saved JSON did not print again the same.
    answer = solver.memory_answer("8B", "a100-40g", 8, 16384, env=True)
    printed = answer.model_dump_json()
    shown = json.loads(printed)
    assert (shown["usable_gib"], shown["total_gib"], shown["headroom_gib"]) == (35.6533, 62.8188, -27.1655)
    assert round(answer.headroom_gib, 5) == -27.16544 and answer.fits is False
    assert solver.MemoryAnswer.model_validate_json(printed).model_dump_json() == printed
