"""The tokens the memory estimate counts for a model trained one padded sequence per micro-batch (session 71). Such a
model (InternLM2's: its own attention code, test_remotepad_s70) plans with remove padding and dynamic batch sizes off
and each pass's micro-batch size per GPU 1 (test_padbound_s71), at SP=1, so a micro-batch holds one sequence of at most
``max_model_len`` tokens and no token budget is read (verl splits by the budget only with dynamic batch sizes:
verl 0.7.0 ``workers/actor/dp_actor.py:366``, ``:440``; verl 0.8.0 ``workers/engine/utils.py:74``). The estimate counts
``T = L`` for it (`counted_tokens`), not Trinity's default ``ceil(2L/s)``; the plans, ``solve memory`` and
explanations agree, and nothing writes the unread ``trainer.max_token_len_per_gpu`` but in place of a config's own."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from solver.api import estimate_memory
from solver.explain import explain
from solver.memory import breakdown, features, longest_fitting
from solver.query import make_query
from solver.render.summary import apply_lines
from solver.rules import counted_tokens, longest_length_of_tokens, one_sequence_per_micro_batch
from solver.solve import plan
from solver.tables import Catalog, Model, QueryError, Setting, load_catalog, load_memory_model
from solver.tables.model_config import load_model_config

ROOT = Path(__file__).parent.parent
INTERNLM2 = ROOT / "tests" / "data" / "hf-configs" / "internlm2-7b.json"
EXAMPLE = ROOT / "docs" / "examples" / "trinity.yaml"
Cli = Callable[..., tuple[int, str, str]]
GIB = 1 << 30
HIDDEN, LAYERS, VOCAB, INTERMEDIATE = 4096, 32, 92544, 14336
"""InternLM2-7B's config.json (the fixture's)."""
ENV = Setting(env=True)


def _internlm2() -> tuple[Model, Catalog]:
    """InternLM2-7B from the fixture, and the catalogue with it."""
    model = load_model_config(INTERNLM2)
    return model, load_catalog().with_model(model)


def _twin(tmp_path: Path) -> Model:
    """InternLM2-7B's layout with no code of its own (no ``auto_map``): it reads the token budget."""
    config = json.loads(INTERNLM2.read_text())
    del config["auto_map"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    return load_model_config(tmp_path / "config.json")


def test_one_sequence_counts_the_length_where_a_budget_reader_counts_twice_it(tmp_path: Path):
    model, twin = load_model_config(INTERNLM2), _twin(tmp_path)
    assert (one_sequence_per_micro_batch(model), one_sequence_per_micro_batch(twin)) == (True, False)
    assert [counted_tokens(model, 40960, 1), counted_tokens(twin, 40960, 1), counted_tokens(twin, 40960, 1, 50000)] \
        == [40960, 81920, 50000]
    assert counted_tokens(model, 40960, 1, 50000) == 40960  # a budget given is not what a micro-batch holds
    assert [longest_length_of_tokens(model, 40960, 1), longest_length_of_tokens(twin, 40960, 1)] == [40960, 20480]


def test_the_per_token_terms_at_40960_are_the_hand_counted_ones():
    model = load_model_config(INTERNLM2)
    raw = features(model, 8, ENV, 40960)
    tokens = 40960  # T = L, one sequence: not 2 x 40960
    assert raw["checkpoints"] == 2 * tokens * HIDDEN * LAYERS / GIB == 10.0
    assert raw["logits"] == 4 * tokens * VOCAB / GIB == 14.12109375
    assert raw["recompute"] == 2 * tokens * (HIDDEN + INTERMEDIATE) / GIB == 1.40625


def test_its_estimate_is_a_budget_readers_at_half_the_length(tmp_path: Path):
    model, twin = load_model_config(INTERNLM2), _twin(tmp_path)
    coefficients = load_memory_model().coefficients
    own = breakdown(model, 79.6475, 8, ENV, 40960, coefficients)
    half = breakdown(twin, 79.6475, 8, ENV, 20480, coefficients)  # ceil(2 x 20480 / 1) = 40960 tokens
    assert (own.tokens_per_gpu, half.tokens_per_gpu, own.total_gib) == (40960, 40960, half.total_gib)
    assert longest_fitting(model, 79.6475, 8, ENV, coefficients) == 2 * longest_fitting(twin, 79.6475, 8, ENV,
                                                                                        coefficients)


def test_40960_tokens_on_8_h100s_has_a_plan_and_solve_memory_agrees(cli: Cli):
    status, out, err = cli("--model-config", str(INTERNLM2), "--gpu", "h100", "--gpus", "8", "--len", "40960",
                           "--json")
    assert (status, err) == (0, "")  # before: no plan, 89.1 GiB of 73.2 usable at 81920 tokens per GPU
    found = json.loads(out)[0]["plans"][0]
    assert [found[key] for key in ("gpus", "env", "offload", "sp", "memory_gb")] == [8, True, False, 1, 53.81]
    assert "the memory estimate counts that sequence, max_model_len = 40960 tokens per GPU" in found["cautions"][0]
    status, out, err = cli("memory", "--model-config", str(INTERNLM2), "--gpu", "h100", "--gpus", "8", "--len",
                           "40960", "--env", "--json")
    estimate = json.loads(out)
    assert (status, err, estimate["tokens_per_gpu"], round(estimate["total_gib"], 2)) == (0, "", 40960, 53.81)
    assert round(estimate["headroom_gib"], 1) == found["headroom_gb"] == 19.4


def test_the_longest_plan_on_8_h100s_is_the_one_sequences_reach():
    model, catalog = _internlm2()
    query = make_query(catalog, gpu="h100", model=model.name, budget_gpus=8, objective="max_len")
    (answer,) = plan(query, catalog)
    best = answer.plans[0]
    coefficients = load_memory_model().coefficients
    reach = longest_fitting(model, 79.6475, 8, Setting(env=True, offload=True), coefficients, 0.01)
    assert (best.max_model_len, best.offload, best.sp, reach) == (79872, True, 1, 79872)


def test_token_budget_auto_lowers_nothing_for_it():
    model, catalog = _internlm2()
    plans = []
    for mode in ("default", "auto"):
        query = make_query(catalog, gpu="h100", model=model.name, budget_gpus=8, max_model_len=40960,
                           token_budget=mode)
        plans.append(plan(query, catalog)[0].plans[0])
    assert plans[0] == plans[1] and not plans[1].lowered_budget


def test_solve_memory_refuses_a_token_budget_it_does_not_read(cli: Cli):
    status, out, err = cli("memory", "--model-config", str(INTERNLM2), "--gpu", "h100", "--gpus", "8", "--len",
                           "40960", "--token-budget", "50000")
    assert (status, out) == (2, "")
    assert err == ("solve memory: error: --token-budget is not read for internlm2-7b: its plans turn dynamic batch "
                   "sizes off with one sequence per micro-batch, so the estimate counts that sequence, 40960 tokens "
                   "per GPU; leave --token-budget out\n")
    _, catalog = _internlm2()
    with pytest.raises(QueryError, match="^max_token_len_per_gpu is not read for internlm2-7b"):
        estimate_memory("internlm2-7b", "h100", 8, 40960, catalog=catalog, max_token_len_per_gpu=50000)


def test_the_plan_writes_no_token_budget_and_its_summary_says_what_is_counted(cli: Cli):
    model, catalog = _internlm2()
    found = plan(make_query(catalog, gpu="h100", model=model.name, budget_gpus=8, max_model_len=40960), catalog)
    assert not any("max_token_len_per_gpu" in line for line in apply_lines(found[0].plans[0], model))
    status, out, _ = cli("--model-config", str(INTERNLM2), "--gpu", "h100", "--gpus", "8", "--len", "40960")
    assert status == 0 and ("token budget   none read: one sequence per micro-batch (dynamic batch sizes off), so "
                            "the estimate counts max_model_len = 40960 tokens per GPU\n") in out
    status, out, _ = cli("--model-config", str(INTERNLM2), "--gpu", "h100", "--gpus", "8", "--len", "40960", "--emit",
                         "trinity")
    assert status == 0 and "max_token_len_per_gpu:" not in out and "hand-set ppo_max_token_len_per_gpu" not in out


def test_write_replaces_a_configs_own_budget_at_the_default_and_checks_clean(cli: Cli, tmp_path: Path):
    given = tmp_path / "given.yaml"
    given.write_text(EXAMPLE.read_text().replace("\ntrainer:\n", "\ntrainer:\n  max_token_len_per_gpu: 1000\n", 1))
    written = tmp_path / "written.yaml"
    flags = ("--model-config", str(INTERNLM2), "--gpu", "h100")
    assert cli("--from-config", str(given), *flags, "--write", str(written))[0] == 0
    assert "\n  max_token_len_per_gpu: 65536\n" in written.read_text()  # Trinity's default at 32768: its checks read it
    status, out, _ = cli("--from-config", str(written), *flags, "--json")
    assert (status, json.loads(out)[0]["current"]["config_problem_codes"]) == (0, [])


def test_a_configs_own_budget_makes_no_verdict_line_for_it(cli: Cli, tmp_path: Path):
    written = tmp_path / "written.yaml"
    flags = ("--model-config", str(INTERNLM2), "--gpu", "h100")
    assert cli("--from-config", str(EXAMPLE), *flags, "--write", str(written))[0] == 0
    assert "\n  max_token_len_per_gpu:" not in written.read_text()  # the example has none: none added
    own = tmp_path / "own.yaml"
    own.write_text(written.read_text().replace("\ntrainer:\n", "\ntrainer:\n  max_token_len_per_gpu: 40000\n", 1))
    status, out, _ = cli("--from-config", str(own), *flags, "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["config_problem_codes"], current["max_token_len_per_gpu"]) == (0, [], None)


def test_an_explanation_says_what_the_longest_length_is_per_gpu():
    model, catalog = _internlm2()
    query = make_query(catalog, gpu="h100", model=model.name, budget_gpus=8, max_model_len=131072,
                       token_budget="auto")
    (answer,) = plan(query, catalog)
    details = {reason.rule: reason.detail for reason in explain(catalog, query, answer)}
    assert details["fewer_tokens"] == ("prompt and response together (max_prompt_tokens + max_response_tokens) must "
                                       "then fit in 79872 tokens, which is one sequence per micro-batch (dynamic batch "
                                       "sizes off) on each of 8 GPUs with SP=1")
    assert details["more_gpus"] == ("no count of H100-80GB GPUs up to 64 trains internlm2-7b at 131072 tokens, one "
                                    "sequence per micro-batch (dynamic batch sizes off)")
    assert "least budget" not in details["limit"]


def test_no_reason_points_to_a_token_budget_auto_that_lowers_nothing(cli: Cli):
    status, out, err = cli("--model-config", str(INTERNLM2), "--gpu", "h100", "--gpus", "8", "--len", "131072",
                           "--node-gpus", "4")
    words = " ".join(out.split())
    assert (status, err) == (1, "")
    # not "..., even with --token-budget auto: ..."
    assert ("extrapolated); no count of nodes of 4 GPUs (--node-gpus) trains it: an SP group stays within one node, "
            "so SP=4 at most --explain") in words
    assert "--token-budget" not in out
