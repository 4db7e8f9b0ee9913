"""An answer under a host-memory limit says what the limit costs (s67, hostlift): where --host-ram (the API's
host_ram_gb, or a source's own words for it) is given, the planner asks the same question on nodes with the most host
memory any has and the answer names that best plan and the host memory per node it needs on a ``host limit`` line
(``Answer.more_host_ram`` in the JSON and the API), with the tokens, GPUs or step time the limit costs, or that it
costs nothing; without a limit, no line and no extra question."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import solver
import solver.solve
from solver.api import answer_query
from solver.cluster import POOL_HOST_RAM_SOURCE
from solver.model import prepare
from solver.query import make_query
from solver.render import json_schema
from solver.tables import MAX_HOST_RAM_GB, load_catalog

Cli = Callable[..., tuple[int, str, str]]

# Trinity 0.5.1 keeps verl's loading, rank 0 alone for the untied Qwen3-8B (s84): with no release named every rank of
# the node loads it in fp32 (30.5 GiB each), more than --host-ram 96 holds for any plan. Its reference model is bf16
# where 0.6's (counted with none named) is fp32: 162.6 GiB for the Offload + SP=4 plan where 0.6 counts 183.0.
ASKED = ("--model", "8B", "--gpu", "a100", "--trinity-version", "0.5.1")
LONGEST = ("--maximize", "len", "--gpus", "6")
VALUES_COLUMN = len("max_model_len  ")  # the widest label of these summaries, and the gap after it
LONGEST_LINE = ("with 162.6 GiB of host memory per node, the best plan is Env + Offload + SP=4 on 4 GPUs at 102400 "
                "tokens, cost 0.6565 (documented): --host-ram 96 GiB costs 51200 tokens")


def _row(out: str, label: str) -> list[str]:
    """The summary rows of `out` that start with `label`, their values only, each with the lines the terminal's width
    wrapped it onto (indented to the values' column) joined back."""
    rows: list[str] = []
    lines = out.splitlines()
    for at, line in enumerate(lines):
        if line.startswith(f"{label} "):
            rows.append(line[len(label):].strip())
            for more in lines[at + 1:]:
                if not more.startswith(" " * VALUES_COLUMN):
                    break
                rows[-1] += f" {more.strip()}"
    return rows


def _answer(cli: Cli, *argv: str) -> dict[str, Any]:
    """The first answer ``solve --json`` gives for `argv`."""
    status, out, _ = cli(*ASKED, *argv, "--json")
    assert status == 0
    return json.loads(out)[0]  # type: ignore[no-any-return]


@pytest.mark.parametrize(("argv", "line"), [
    ((*LONGEST, "--host-ram", "96"), LONGEST_LINE),
    (("--minimize", "gpus", "--len", "32k", "--host-ram", "96"),
     ("with 162.6 GiB of host memory per node, the best plan is Env + Offload + SP=2 on 2 GPUs, cost 1.111 "
      "(documented): --host-ram 96 GiB costs 2 GPUs")),
    ((*LONGEST, "--host-ram", "200"), "--host-ram 200 GiB costs nothing: the best plan fits in it"),
    (("--len", "32k", "--host-ram", "96"), "--host-ram 96 GiB costs nothing: the best plan fits in it"),
])
def test_an_answer_under_a_host_limit_says_what_it_costs(cli: Cli, argv: tuple[str, ...], line: str) -> None:
    status, out, err = cli(*ASKED, *argv)
    assert status == 0 and _row(out, "host limit") == [line]
    assert err.count("\n") == 1 and "Traceback" not in err  # the a100 note alone


def test_the_users_case_names_offload_and_its_need(cli: Cli) -> None:
    """persona17's case: Qwen3-30B-A3B on 8 H100s with 512 GiB gets 25600 tokens; Offload, which needs 681.1 GiB per
    node, reaches 210944, the planner's own longest without the limit. Under Trinity 0.6, which loads the model on rank
    0 alone on H100s (s84; with no release named all 8 ranks load the untied model, 113.6 GiB each)."""
    argv = ("--model", "Qwen3-30B-A3B", "--gpu", "h100", "--gpus", "8", "--maximize", "len", "--trinity-version", "0.6")
    status, out, _ = cli(*argv, "--host-ram", "512")
    assert status == 0 and _row(out, "max_model_len") == ["25600"]
    # Then the cautions that plan carries and the best lacks (cautions90; before, none): its length past YaRN's
    # validated one, and its estimate's thin headroom.
    assert _row(out, "host limit") == [(
        "with 681.1 GiB of host memory per node, the best plan is Env + Offload + SP=8 on 8 GPUs at 210944 tokens, "
        "cost 2.186 (estimated, extrapolated): --host-ram 512 GiB costs 185344 tokens; caution: YaRN factor 5.15 at "
        "210944 tokens: longer than YaRN is validated for (Qwen's model cards validate a factor of 4 over 32768 "
        "positions: 131072 tokens): check the model's quality at this length; caution: 0.3 GiB to spare where the "
        "estimate extrapolates, and its error there is unmeasured (its flat overhead for the CUDA context and NCCL does "
        "not grow with more GPUs than calibrated; its gathered layers may take 1.5 GiB more than the fit counts (large "
        "layers): docs/memory.md in rft-solver's source); --margin 0.05 keeps 3.0 GiB more to spare than the default "
        "0.01 here, or measure a step first")]
    unlimited = json.loads(cli(*argv, "--json")[1])[0]["plans"][0]
    assert (unlimited["max_model_len"], unlimited["host_memory_gb"]) == (210944, 681.1)


def test_the_json_holds_the_planners_best_without_the_limit(cli: Cli) -> None:
    """more_host_ram is the plan the same question without --host-ram answers (its host need stated), not the limited
    answer's; where the limit costs nothing, the answer's own best plan."""
    answer = _answer(cli, *LONGEST, "--host-ram", "96")
    free, unlimited = answer["more_host_ram"], _answer(cli, *LONGEST)["plans"][0]
    kept = ("gpus", "env", "offload", "sp", "max_model_len", "cost", "evidence", "host_memory_gb")
    assert {key: free[key] for key in kept} == {key: unlimited[key] for key in kept}
    assert free != answer["plans"][0] and (free["offload"], answer["plans"][0]["offload"]) == (True, False)
    fitting = _answer(cli, *LONGEST, "--host-ram", "200")
    assert fitting["more_host_ram"] == fitting["plans"][0]
    assert json.loads(json_schema("solve"))["$defs"]["Answer"]["properties"]["more_host_ram"]


def test_without_a_limit_there_is_no_line_no_field_and_no_question(
        cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[float | None] = []
    answer_for = solver.solve.answer_for

    def recorded(catalog: Any, query: Any, gpu: str, *args: Any, **kwargs: Any) -> Any:
        if query.host_ram_gb == MAX_HOST_RAM_GB:
            asked.append(query.host_ram_gb)
        return answer_for(catalog, query, gpu, *args, **kwargs)

    monkeypatch.setattr(solver.solve, "answer_for", recorded)
    status, out, _ = cli(*ASKED, *LONGEST)
    assert status == 0 and "host limit" not in out and asked == []
    assert "more_host_ram" not in _answer(cli, *LONGEST) and asked == []
    cli(*ASKED, *LONGEST, "--host-ram", "96")
    assert asked == [MAX_HOST_RAM_GB]  # one question, once (s68: asked before the query's own)


def test_pins_and_a_limit_each_say_what_they_cost_alone(cli: Cli) -> None:
    """With --sp 2 and --host-ram 96, the unpinned question keeps the limit and the host one keeps the pin."""
    status, out, _ = cli(*ASKED, *LONGEST, "--sp", "2", "--host-ram", "96")
    assert status == 0 and _row(out, "max_model_len") == ["32768"]
    assert _row(out, "unpinned") == [(
        "without --sp 2, the best plan is Env + SP=4 on 4 GPUs at 51200 tokens, cost 0.3282 (documented): the pin "
        "costs 18432 tokens")]
    assert _row(out, "host limit") == [(
        "with 147.8 GiB of host memory per node, the best plan is Env + Offload + SP=2 on 6 GPUs at 51200 tokens, "
        "cost 0.3703 (documented): --host-ram 96 GiB costs 18432 tokens")]
    answer = _answer(cli, *LONGEST, "--sp", "2", "--host-ram", "96")
    assert (answer["unpinned"]["offload"], answer["unpinned"]["sp"]) == (False, 4)
    assert (answer["more_host_ram"]["offload"], answer["more_host_ram"]["sp"]) == (True, 2)


@pytest.mark.parametrize("left_open", ["feasible", "unknown"])  # found but not proven the best; nothing found
def test_a_host_question_the_time_limit_leaves_open_is_left_out(
        cli: Cli, answers_left_open: Callable[[Callable[[Any], bool], str], None], left_open: str) -> None:
    answers_left_open(lambda query: query.host_ram_gb == MAX_HOST_RAM_GB, left_open)
    status, out, _ = cli(*ASKED, *LONGEST, "--host-ram", "96")
    assert status == 0 and _row(out, "max_model_len") == ["51200 (YaRN rope scaling, factor 1.25)"]
    assert "host limit" not in out


def test_the_api_names_the_limit_as_it_was_given() -> None:
    """The API's keyword (``host_ram_gb=96``), a caller's own words for hardware, and a pool's host memory each name
    it as given; an answer without a limit has no more_host_ram."""
    answer = solver.plan("8B", gpu="a100", objective="max_len", budget_gpus=6, host_ram_gb=96,
                         trinity_version="0.5.1")[0]
    free = solver.plan("8B", gpu="a100", objective="max_len", budget_gpus=6, trinity_version="0.5.1")[0]
    assert free.more_host_ram is None and answer.more_host_ram is not None
    assert (answer.more_host_ram.max_model_len, answer.more_host_ram.host_memory_gb) == (102400, 162.6)
    cost = ("with 162.6 GiB of host memory per node, the best plan is Env + Offload + SP=4 on 4 GPUs at 102400 tokens, "
            "cost 0.6565 (documented): {} costs 51200 tokens")
    assert _row(solver.answers_text([answer]), "host limit") == [cost.format("host_ram_gb=96")]
    catalog = load_catalog()
    query = make_query(catalog, model="8B", gpu="a100", objective="max_len", budget_gpus=6, host_ram_gb=96,
                       host_ram_source="the node's RAM", trinity_version="0.5.1")
    text = solver.answers_text(answer_query(query, catalog))
    assert _row(text, "host limit") == [cost.format("the node's RAM of 96 GiB")]
    pool = query.model_copy(update={"host_ram_source": POOL_HOST_RAM_SOURCE, "host_ram_hardware": "the pool's"})
    text = solver.answers_text(answer_query(pool, catalog))
    assert _row(text, "host limit") == [cost.format("the pool's 96 GiB")]


# With no release named every rank of a node loads Llama-3.1-70B in fp32 at start-up (1637.3 GiB per node for 4 GPUs'
# Offload), so 2 TB per node holds 4 GPUs at the most; Trinity 0.6, whose rank 0 alone loads it with FSDP2 on an H100
# (compute capability 9.0), holds 32 (liftrelease92).
LLAMA_70B = ("--model", "Llama-3.1-70B", "--gpu", "H100-80GB", "--gpus", "32", "--node-gpus", "8", "--host-ram", "2TB",
             "--maximize", "len")
RELEASE_WORDS = ("with --trinity-version 0.6.0, whose rank 0 alone loads the model: Env + Offload + SP=8 on 32 GPUs, "
                 "115712 tokens instead of 57344 (estimated, extrapolated)")


def test_a_release_whose_rank_0_alone_loads_the_model_is_named_with_what_it_gets(cli: Cli) -> None:
    """The host limit line ends with the release and its plan, the one the same question naming it gets, which the
    JSON's named_release holds (its trinity_version the release); guide.md quotes the line."""
    status, out, _ = cli(*LLAMA_70B)
    (row,) = _row(out, "host limit")
    # smalls93: the release came after the plan's long caution; it comes first now, the caution naming its plan
    assert status == 0 and _row(out, "max_model_len") == ["57344"]
    caution = ("caution with 2249.1 GiB: 0.1 GiB to spare where the estimate extrapolates, and its error there is "
               "unmeasured (its flat overhead for the CUDA context and NCCL does not grow across nodes")
    assert row.split("; ")[1:3] == [RELEASE_WORDS, caution]
    printed = json.loads(cli(*LLAMA_70B, "--json")[1])
    named = printed[0]["named_release"]
    assert named == json.loads(cli(*LLAMA_70B, "--trinity-version", "0.6.0", "--json")[1])[0]["plans"][0]
    assert (named["trinity_version"], named["gpus"], named["max_model_len"]) == ("0.6.0", 32, 115712)
    assert json.loads(json_schema("solve"))["$defs"]["Answer"]["properties"]["named_release"]
    guide = (Path(__file__).parents[1] / "docs" / "guide.md").read_text(encoding="utf-8")
    assert RELEASE_WORDS in " ".join(guide.split()).replace("-- ", "--")


@pytest.mark.parametrize(("gpu", "strategy", "named"), [
    ("h100", None, (8, "Env + SP=8", 197632, "0.6.0")),  # compute capability 9.0: 0.6's rank 0 alone loads it
    ("h100", "fsdp", None),  # FSDP1: 0.6 loads it on every rank (and Offload's plans need more than 64 GiB then too)
    ("a100", None, None),  # compute capability 8.0: every rank loads it under 0.6, and Qwen3-4B's tied embeddings too
])                         # under 0.5.0 and 0.5.1: no release lifts the limit, and none is asked
def test_a_release_is_named_only_where_its_rank_0_loads_the_model(
        gpu: str, strategy: str | None, named: tuple[object, ...] | None, monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _releases_asked(monkeypatch)
    catalog = load_catalog()
    query = make_query(catalog, model="4B", gpu=gpu, objective="max_len", budget_gpus=8, host_ram_gb=64)
    (answer,) = answer_query(query.model_copy(update={"trainer_strategy": strategy}), catalog)
    free = answer.more_host_ram
    assert answer.best is not None and free is not None and free.max_model_len > answer.best.max_model_len
    plan = answer.named_release
    shown = None if plan is None else (plan.gpus, plan.setting.label, plan.max_model_len, plan.trinity_version)
    assert shown == named
    assert asked == ([] if named is None else ["0.6.0"])
    assert ('trinity_version="0.6.0"' in _row(solver.answers_text([answer]), "host limit")[0]) is (named is not None)


def test_a_release_that_counts_less_but_gets_nothing_better_is_not_named(
        cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """Qwen3-4B on A100s with 96 GiB: 8 GPUs would be cheaper than 4 but need more host memory; 0.5.2, whose bf16
    reference model counts less, is asked (one solve) and gets no cheaper plan within it: the line names no release."""
    asked = _releases_asked(monkeypatch)
    status, out, _ = cli("--model", "4B", "--gpu", "a100", "--gpus", "8", "--len", "32k", "--host-ram", "96", "--json")
    (answer,) = json.loads(out)
    assert status == 0 and (answer["plans"][0]["gpus"], answer["more_host_ram"]["gpus"]) == (4, 8)
    assert "named_release" not in answer and asked == ["0.5.2"]


def _releases_asked(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """The Trinity releases of the questions `solver.solve.answer_for` is asked from now, as they name them."""
    asked: list[str | None] = []
    answer_for = solver.solve.answer_for

    def recorded(catalog: Any, query: Any, gpu: str, *args: Any, **kwargs: Any) -> Any:
        if query.trinity_release is not None:
            asked.append(query.trinity_release)
        return answer_for(catalog, query, gpu, *args, **kwargs)

    monkeypatch.setattr(solver.solve, "answer_for", recorded)
    return asked


def test_a_release_whose_question_the_time_limit_leaves_open_is_not_named(
        answers_left_open: Callable[[Callable[[Any], bool], str], None]) -> None:
    """mutants56: the h100 case above, its 0.6.0 question found but not proven the best: no release is named."""
    answers_left_open(lambda query: query.trinity_release == "0.6.0", "feasible")
    catalog = load_catalog()
    query = make_query(catalog, model="4B", gpu="h100", objective="max_len", budget_gpus=8, host_ram_gb=64)
    (answer,) = answer_query(query, catalog)
    assert answer.more_host_ram is not None and answer.named_release is None


def test_no_release_is_named_where_the_question_names_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """mutants56: the h100 case above under --trinity-version 0.5.2, whose every rank loads the model: the host limit
    costs it longer plans, yet the release asked for is the one planned, and no other is asked or named."""
    asked = _releases_asked(monkeypatch)
    catalog = load_catalog()
    query = make_query(catalog, model="4B", gpu="h100", objective="max_len", budget_gpus=8, host_ram_gb=64,
                       trinity_version="0.5.2")
    (answer,) = answer_query(query, catalog)
    free = answer.more_host_ram
    assert answer.best is not None and free is not None and free.max_model_len > answer.best.max_model_len
    assert answer.named_release is None and set(asked) == {"0.5.2"}


def test_a_release_whose_plan_takes_as_many_gpus_is_not_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """mutants56: Qwen3-4B at 16384 tokens on H100s with 64 GiB, fewest GPUs: Offload on 1 GPU needs more host memory;
    0.6.0, whose rank 0 alone loads the model, is asked and gets Env + SP=2 on 2 GPUs, no fewer than the best plan's:
    not named (a release ranks before the best plan only strictly)."""
    asked = _releases_asked(monkeypatch)
    catalog = load_catalog()
    query = make_query(catalog, model="4B", gpu="h100", objective="min_gpus", budget_gpus=8, host_ram_gb=64,
                       max_model_len=16384)
    (answer,) = answer_query(query, catalog)
    assert answer.best is not None and answer.more_host_ram is not None
    assert (answer.best.gpus, answer.more_host_ram.gpus) == (2, 1)
    assert answer.named_release is None and asked == ["0.6.0"]


def test_a_release_whose_plan_takes_fewer_gpu_hours_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """coverage92: Qwen3-4B at 24576 tokens on H100s with 64 GiB, fewest GPU-hours: within it Env + SP=2 on 2 GPUs
    (1.111); Env on 7 GPUs takes fewer (1.01) but needs more host memory while every rank loads the model. 0.6.0,
    whose rank 0 alone loads it, gets that plan within the 64 GiB: named, as it ranks before by GPU-hours."""
    asked = _releases_asked(monkeypatch)
    catalog = load_catalog()
    query = make_query(catalog, model="4B", gpu="h100", objective="min_gpu_hours", budget_gpus=8, host_ram_gb=64,
                       max_model_len=24576)
    (answer,) = answer_query(query, catalog)
    shown = [None if plan is None else (plan.gpus, plan.setting.label, plan.gpu_hours, plan.trinity_version)
             for plan in (answer.best, answer.more_host_ram, answer.named_release)]
    assert shown == [(2, "Env + SP=2", 1.111, None), (7, "Env", 1.01, None), (7, "Env", 1.01, "0.6.0")]
    assert asked == ["0.6.0"]


def test_no_release_is_asked_where_the_host_limit_costs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """mutants58: Qwen3-4B at 24576 tokens on H100s with 128 GiB, fewest GPU-hours: Env on 7 GPUs fits in it, the plan
    without the limit too, so no release that counts less host memory is asked (no solve) nor named."""
    asked = _releases_asked(monkeypatch)
    catalog = load_catalog()
    query = make_query(catalog, model="4B", gpu="h100", objective="min_gpu_hours", budget_gpus=8, host_ram_gb=128,
                       max_model_len=24576)
    (answer,) = answer_query(query, catalog)
    assert answer.best is not None and answer.more_host_ram is not None
    assert (answer.best.gpus, answer.best.setting.label, answer.more_host_ram.gpus) == (7, "Env", 7)
    assert answer.named_release is None and asked == []


def test_a_release_ranks_before_the_best_plan_only_strictly_by_the_objectives_first_term() -> None:
    """mutants58: `_ranks_before` (named_release's rule) on the plans of the GPU-hours case above: a plan no longer, on
    no fewer GPUs, of no fewer GPU-hours or no cheaper ranks after; without GPU-hours the cost decides."""
    catalog = load_catalog()
    query = make_query(catalog, model="4B", gpu="h100", objective="min_gpu_hours", budget_gpus=8, host_ram_gb=64,
                       max_model_len=24576)
    (answer,) = answer_query(query, catalog)
    best, named = answer.best, answer.named_release
    assert best is not None and named is not None
    same = best.model_copy(update={"trinity_version": "0.6.0"})
    assert [solver.solve._ranks_before(same, best, objective)
            for objective in ("max_len", "min_gpus", "min_gpu_hours", "cheapest")] == [False] * 4
    assert solver.solve._ranks_before(named, best, "min_gpu_hours")
    assert not solver.solve._ranks_before(best, named, "min_gpu_hours")
    # the same GPU-hours (1.111), a lower cost: not before by GPU-hours; without GPU-hours, by the cost
    cheaper = best.model_copy(update={"cost": best.cost / 2})
    assert not solver.solve._ranks_before(cheaper, best, "min_gpu_hours")
    unhoured = cheaper.model_copy(update={"gpu_hours": None})
    assert solver.solve._ranks_before(unhoured, best, "min_gpu_hours")
    assert not solver.solve._ranks_before(best.model_copy(update={"gpu_hours": None}), cheaper, "min_gpu_hours")


@pytest.mark.parametrize(("model", "asked"), [("8B", ["0.5.1"]), ("4B", ["0.5.2"])])
def test_a_release_whose_fitting_counts_another_asked_or_its_patch_holds_is_not_asked(
        model: str, asked: list[str]) -> None:
    """mutants58: on A100s with 96 GiB each 0.5 patch counts less host memory than no release named. For the untied
    Qwen3-8B, 0.5.1, whose rank 0 alone loads it, holds more GPU counts than 0.5.2 and the same as 0.5.0: it alone is
    asked; for the tied Qwen3-4B, 0.5.2's counts hold the others': it alone is asked."""
    catalog = load_catalog()
    query = make_query(catalog, model=model, gpu="a100", objective="max_len", budget_gpus=8, host_ram_gb=96)
    lifting = solver.solve._lifting_releases(prepare(catalog, "A100-80GB", query), query)
    assert (lifting.releases, [release for release, _ in lifting.asked]) == (["0.5.2", "0.5.1", "0.5.0"], asked)


def test_another_plan_differs_in_gpus_setting_or_length() -> None:
    """mutants58: `Plan.another_than`, which decides whether a limit costs the best plan something (the host limit
    row, `more_host_ram`, `named_release`): another count of GPUs, setting or length, not another release or cost."""
    catalog = load_catalog()
    (answer,) = answer_query(make_query(catalog, model="4B", gpu="h100", objective="max_len", budget_gpus=8,
                                        host_ram_gb=64), catalog)
    best = answer.best
    assert best is not None and answer.more_host_ram is not None and best.another_than(answer.more_host_ram)
    assert not best.another_than(None)
    assert not best.another_than(best.model_copy(update={"trinity_version": "0.6.0", "cost": best.cost * 2}))
    assert [best.another_than(best.model_copy(update=update)) for update in (
        {"max_model_len": best.max_model_len + 1024}, {"gpus": best.gpus + 1}, {"sp": best.sp * 2},
        {"offload": not best.offload}, {"env": not best.env})] == [True] * 5


# persona93g: --trinity-version 0.5, the minor version without its patch, counts every rank loading the model (0.5.2's
# rule, the most any 0.5 patch loads); 0.5.1 and 0.5.0 load the untied Llama-3.1-70B and Qwen3-8B on rank 0 alone. The
# answer named neither: Llama-3.1-70B at 32k on A100s with 1 TB a node got "no plan" (0.5.1 trains it on 16 GPUs), and
# Qwen3-8B on 6 A100s with 96 GiB got 4096 tokens with no word of 0.5.1's 51200.
LLAMA_70B_A100 = ("--model", "Llama-3.1-70B", "--gpu", "a100", "--len", "32k", "--minimize", "gpus",
                  "--host-ram", "1TB")


def test_a_minor_version_named_without_its_patch_names_the_patch_that_lifts_its_limit(cli: Cli) -> None:
    status, out, _ = cli(*LLAMA_70B_A100, "--trinity-version", "0.5")
    words = " ".join(out.split())
    assert status == 1 and "no plan:" in words
    # the reason is the loading alone: 0.5's reference model is bf16 on every patch
    assert ("; with --trinity-version 0.5.1, whose rank 0 alone loads the model, Env + Offload + SP=4 on 16 GPUs "
            "trains it (32768 tokens), and with Offload it needs 629.1 GiB of host memory per node; 0.5.0 counts less "
            "host memory too, enough for that plan") in words
    assert "bf16" not in words
    # a patch named is the release planned: no other is named (nor without the limit, 0.6.0 on A100s loading as 0.5.2)
    for release in ("0.5.2", "0.6"):
        status, out, _ = cli(*LLAMA_70B_A100, "--trinity-version", release)
        assert status == 1 and "--trinity-version 0.5.1" not in " ".join(out.split())


def test_a_minor_version_named_without_its_patch_names_the_patch_whose_plan_ranks_before(
        cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _releases_asked(monkeypatch)
    argv = ("--model", "8B", "--gpu", "a100", "--maximize", "len", "--gpus", "6", "--host-ram", "96")
    status, out, _ = cli(*argv, "--trinity-version", "0.5")
    (row,) = _row(out, "host limit")
    assert status == 0 and _row(out, "max_model_len") == ["4096"]
    assert row.split("; ")[1] == ("with --trinity-version 0.5.1, whose rank 0 alone loads the model: Env + SP=4 on 4 "
                                  "GPUs, 51200 tokens instead of 4096 (documented)")
    assert "0.5.1" in asked and "0.5.2" not in asked  # 0.5.2 counts as 0.5 does: not asked
    printed = json.loads(cli(*argv, "--trinity-version", "0.5", "--json")[1])[0]
    assert printed["named_release"]["trinity_version"] == "0.5.1"


def test_the_other_releases_that_count_less_say_whether_that_plan_fits_within_the_limit(cli: Cli) -> None:
    """persona93g: with no release named, Llama-3.1-70B at 32k on A100s with 1 TB a node: 0.5.1 trains it on 16 GPUs
    (629.1 GiB per node); the answer went on "0.5.2 and 0.5.0 count less host memory too", and 0.5.2, every rank loading
    the model, needs 2322.3 GiB per node for that plan (no plan at all within 1 TB): it says which hold that plan."""
    status, out, _ = cli(*LLAMA_70B_A100)
    assert status == 1
    assert ("it needs 629.1 GiB of host memory per node; 0.5.0 counts less host memory too, enough for that plan; "
            "0.5.2 counts less too, but not enough for that plan") in " ".join(out.split())
    assert cli(*LLAMA_70B_A100, "--trinity-version", "0.5.2")[0] == 1
