"""s69: the limit's nearest estimate (`--explain` with no plan) asks CP-SAT of the candidates nearest to fitting first,
and stops at the first the evidence excludes: the words are those classifying every candidate gives."""

from __future__ import annotations

import pytest
from command_words import make_query

from solver.explain import _nearest_estimate, _Prober, _setting, _Words, count_then_degree
from solver.memory import estimates_setting
from solver.model import prepare
from solver.tables import load_catalog

CATALOG = load_catalog()


def test_the_nearest_estimate_asks_a_few_questions_and_names_what_classifying_every_candidate_names(
        monkeypatch: pytest.MonkeyPatch):
    # Qwen3-8B at 128k on up to 64 A10s: 1920 candidates only the memory model speaks for, most of them SP degrees
    # that do not divide the count; classifying all of them took some 2000 CP-SAT questions.
    query = make_query(CATALOG, gpu="a10", model="8B", max_model_len=131072, budget_gpus=64)
    data = prepare(CATALOG, "A10-24GB", query)
    words = _Words(data, query, CATALOG)
    candidates = sorted((entry.combination for entry in data.ranks if not words.rows(entry.combination[0])
                         and estimates_setting(_setting(entry.combination))), key=count_then_degree)
    classified = dict(_Prober(data, query).classify(candidates, None))
    assert len(candidates) == len(classified) == 1920
    everything = words.nearest_over(candidates, 131072, lambda combination: classified[combination] == "evidence")
    asked = []
    monkeypatch.setattr(_Prober, "_status", lambda self, assumptions, status=_Prober._status: (
        asked.append(assumptions), status(self, assumptions))[1])
    assert _nearest_estimate(_Prober(data, query), words, data, query) == everything == (
        " (the nearest, Env + Offload + SP=8 on 8 GPUs: the memory model predicts 48.7 GiB of 19.6 usable, "
        "29.1 GiB over)")
    assert len(asked) < 1100  # some 1000 (2200 classifying every candidate)
