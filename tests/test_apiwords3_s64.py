"""Session 64, helper apiwords3: every public function of the API names its own keywords by default
(`solver.rules.API_OPTIONS`), `make_query`, `config_query` and the Trinity config readers and checkers too, and the
command passes its flags (`COMMAND_OPTIONS`); `plan(...)`'s JSON is `solve --json`'s but for its words and `apply`
(docs/api.md, "Words"); the cluster planner's token budget refusal and three API wordings name the keywords
plainly."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_apiwords_s63 import flags_in

import solver
import solver.api
import solver.trinity
from solver.api import config_query
from solver.query import make_query
from solver.results import ApplySettings
from solver.rules import API_OPTIONS, COMMAND_OPTIONS
from solver.tables import QueryError, load_catalog, load_fleet
from solver.trinity import (
    check_trinity_config,
    load_config_mapping,
    plan_fragment,
    read_trinity_config,
    trinity_config_problems,
    trinity_fragment,
)

ROOT = Path(__file__).resolve().parent.parent
FLEET = ROOT / "docs" / "examples" / "fleet.yaml"
TRINITY_YAML = (ROOT / "docs" / "examples" / "trinity.yaml").read_text(encoding="utf-8")
API_BUDGET_REFUSAL = ('token_budget="auto" lowers the token budget of estimated plans, which estimate="never" turns '
                      "off: drop one of them")
COMMAND_BUDGET_REFUSAL = ("--token-budget auto lowers the token budget of estimated plans, which --no-estimate turns "
                          "off: drop one of them")

PUBLIC_WITH_NAMES: tuple[Callable[..., Any], ...] = (
    solver.plan, solver.make_query, solver.api.config_query, solver.map_plans, solver.estimate_memory,
    solver.memory_answer, solver.place, solver.buy_nodes, solver.placement_configs, solver.trinity.read_trinity_config,
    solver.trinity.check_trinity_config, solver.trinity.trinity_config_problems, solver.trinity.trinity_fragment,
    solver.trinity.plan_fragment, solver.trinity.patch_trinity_config, solver.trinity.patched_trinity_config,
    solver.trinity.patched_config_problems)
"""The functions of the API that take `option_names` (docs/api.md, "Words")."""


def test_every_public_function_that_names_options_takes_the_api_words_by_default():
    for function in PUBLIC_WITH_NAMES:
        assert inspect.signature(function).parameters["option_names"].default is API_OPTIONS, function.__name__
    assert solver.Query.model_fields["option_names"].default is API_OPTIONS


def test_make_query_and_config_query_name_the_keywords_unless_given_the_commands():
    catalog = load_catalog()
    config = read_trinity_config(TRINITY_YAML, "trinity.yaml", {})
    for build in (lambda **kw: make_query(catalog, model="8B", max_model_len=8192, **kw),
                  lambda **kw: config_query(catalog, config, **kw)):
        with pytest.raises(QueryError) as api:
            build(token_budget="auto", estimate="never")
        assert str(api.value) == API_BUDGET_REFUSAL
        with pytest.raises(QueryError) as command:
            build(token_budget="auto", estimate="never", option_names=COMMAND_OPTIONS)
        assert str(command.value) == COMMAND_BUDGET_REFUSAL
    query = make_query(catalog, model="14B", gpu="a100", max_model_len=65536, budget_gpus=4, host_ram_gb=48)
    (answer,) = solver.api.answer_query(query, catalog)
    assert query.option_names == API_OPTIONS and answer.reason is not None
    assert "with host_ram_gb=48; without host_ram_gb," in answer.reason and not flags_in(answer.reason)


def test_a_trinity_config_read_and_checked_in_the_api_names_its_keywords():
    lacking = TRINITY_YAML.replace("  model_path:", "  no_model_path:")
    with pytest.raises(solver.ConfigError) as api:
        read_trinity_config(lacking, "trinity.yaml", {})
    assert "solver.trinity_config or solver.placement_configs" in str(api.value)
    assert not flags_in(str(api.value))
    with pytest.raises(solver.ConfigError) as command:
        read_trinity_config(lacking, "trinity.yaml", {}, option_names=COMMAND_OPTIONS)
    assert "--out or solve cluster --emit-dir" in str(command.value)
    catalog = load_catalog()
    mapping = load_config_mapping(TRINITY_YAML, "trinity.yaml")
    mapping["model"]["max_model_len"] = 8192  # prompt + response past the length
    model = catalog.model("Qwen3-8B")
    api_words = check_trinity_config(mapping, model, 4)
    command_words = check_trinity_config(mapping, model, 4, option_names=COMMAND_OPTIONS)
    assert [problem.words for problem in trinity_config_problems(mapping, model, 4)] == api_words
    assert api_words != command_words and not flags_in(" ".join(api_words))
    assert [words.replace("--len ", "max_model_len=") for words in command_words] == api_words


def test_a_fragment_made_in_the_api_names_its_keywords():
    (answer,) = solver.plan("8B", gpu="h100", max_model_len=65536, budget_gpus=8, offload=True)
    model = load_catalog().model(answer.model)
    fragment = trinity_fragment(answer.plans[0], model)
    assert "not checked: host_ram_gb not given" in fragment and '(0.5 refuses them: version="0.5" leaves' in fragment
    assert plan_fragment(answer.plans[0], model)[0] == fragment
    command = trinity_fragment(answer.plans[0], model, option_names=COMMAND_OPTIONS)
    assert "not checked: --host-ram not given" in command and "(0.5 refuses them: --trinity-version 0.5" in command


# plan(...).as_json() and solve --json: the same JSON but for the words and apply (docs/api.md, "Words").

QUESTIONS: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = (
    (("--model", "8B", "--gpu", "h100", "--len", "131072", "--gpus", "8"),
     {"model": "8B", "gpu": "h100", "max_model_len": 131072, "budget_gpus": 8}),
    (("--model", "14B", "--gpu", "h100", "--len", "600000", "--explain"),
     {"model": "14B", "gpu": "h100", "max_model_len": 600000, "explain": True}),
    (("--model", "14B", "--gpu", "h100", "--len", "131072", "--gpus", "4", "--sp", "2", "--no-env", "--host-ram",
      "48GB", "--explain"),
     {"model": "14B", "gpu": "h100", "max_model_len": 131072, "budget_gpus": 4, "sp": 2, "env": False,
      "host_ram_gb": 48, "explain": True}),
    (("--model", "4B", "--maximize", "len", "--gpus", "6"), {"model": "4B", "objective": "max_len", "budget_gpus": 6}),
    (("--model", "8B", "--gpu", "h100", "--len", "65536", "--gpus", "6", "--train-batch-size", "256",
      "--trinity-version", "0.5", "--rollout-gpus", "2"),
     {"model": "8B", "gpu": "h100", "max_model_len": 65536, "budget_gpus": 6, "train_batch_size": 256,
      "trinity_version": "0.5", "rollout_gpus": 2}),
)
"""Questions as `solve` takes them and as `solver.plan` does."""


def leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Each (path, value) of a JSON document's leaves."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, (*path, index))
    else:
        yield path, value


def is_words(path: tuple[Any, ...]) -> bool:
    """Whether a leaf is one of the words api.md says name the caller's options: an answer's `reason`, an
    `explanation`'s `detail`, or one of the `cautions` of a plan it holds."""
    return (path[-1] == "reason" or (path[-1] == "detail" and "explanation" in path)
            or (len(path) > 1 and path[-2] == "cautions"))


def words_in(leaves_of: dict[tuple[Any, ...], Any]) -> str:
    """The words among a JSON document's leaves (`is_words`), one text."""
    return " ".join(words for path, words in leaves_of.items() if is_words(path) and words is not None)


def with_apply(answer: solver.Answer, version: str | None) -> solver.Answer:
    """`answer` with the `apply` that ``solve --json`` adds, as api.md says to make it: `trinity_settings`' at the
    Trinity release asked (none without a plan)."""
    if answer.best is None:
        return answer
    return answer.model_copy(update={"apply": ApplySettings.of(solver.trinity_settings(answer, version=version))})


@pytest.mark.parametrize(("argv", "asked"), QUESTIONS)
def test_plans_json_is_solve_json_in_the_api_words_without_apply(cli, argv, asked):
    _, out, _ = cli(*argv, "--json")
    asked = dict(asked)
    model = asked.pop("model")
    command = solver.plan(model, **asked, option_names=COMMAND_OPTIONS)
    assert out == json.dumps([with_apply(answer, asked.get("trinity_version")).as_json() for answer in command],
                             indent=2) + "\n"
    printed = json.loads(out)
    assert [answer.pop("apply", None) is not None for answer in printed] == [bool(answer.plans) for answer in command]
    assert [answer.as_json() for answer in command] == printed
    # The API's own words: the same leaves but for the words, which name no flag.
    ours = dict(leaves([answer.as_json() for answer in solver.plan(model, **asked)]))
    theirs = dict(leaves(printed))
    assert ours.keys() == theirs.keys()
    differ = [path for path in ours if ours[path] != theirs[path]]
    assert all(is_words(path) for path in differ), differ
    assert not flags_in(words_in(ours))
    assert bool(differ) == bool(flags_in(words_in(theirs)))


def test_the_questions_compared_include_words_that_differ():
    """The comparison above is not vacuous: the no-plan questions' words name flags in the command."""
    (answer,) = solver.plan("14B", gpu="h100", max_model_len=600000, explain=True, option_names=COMMAND_OPTIONS)
    assert answer.reason is not None and "--token-budget auto reaches" in answer.reason


# The cluster planner's refusal of the token budget (the API's, before it builds the planner) names the caller's
# options.

@pytest.mark.parametrize("search", [solver.place, solver.buy_nodes])
def test_the_cluster_planners_token_budget_refusal_names_the_callers_options(search):
    catalog = load_catalog()
    fleet = load_fleet(FLEET, catalog)
    for names, words in ((API_OPTIONS, API_BUDGET_REFUSAL), (COMMAND_OPTIONS, COMMAND_BUDGET_REFUSAL)):
        with pytest.raises(QueryError) as refused:
            search(fleet, catalog=catalog, time_limit_s=1, estimate="never", token_budget="auto", option_names=names)
        assert str(refused.value) == words


# Wordings reread.

def test_a_time_limit_is_named_as_the_caller_gives_it():
    catalog = load_catalog()
    for names, words in ((API_OPTIONS, "time_limit_s=10"), (COMMAND_OPTIONS, "--time-limit 10 s"),
                         (API_OPTIONS, "time_limit_s=0.5")):
        seconds = 0.5 if words.endswith("0.5") else 10.0
        query = make_query(catalog, model="8B", max_model_len=8192, time_limit_s=seconds, option_names=names)
        assert query.time_limit_given == words


def test_an_unknown_required_job_and_two_models_by_length_read_plainly():
    with pytest.raises(QueryError) as required:
        solver.place(FLEET, required=["math-4b", "nope"])
    assert str(required.value) == ("required names 'nope': no job of the fleet is named so; its jobs: math-4b, "
                                   "code-8b, chat-14b, probe-0.6b; or all, for every job")
    with pytest.raises(QueryError) as command:
        solver.place(FLEET, required=["nope"], option_names=COMMAND_OPTIONS)
    assert str(command.value).startswith("--required 'nope': no job of the fleet is named so;")
    with pytest.raises(QueryError) as maps:
        solver.map_plans(["8B", "4B"], by="len")
    assert str(maps.value) == 'by="len" maps one model: give model one name, not 2'
    with pytest.raises(QueryError) as command_maps:
        solver.map_plans(["8B", "4B"], by="len", option_names=COMMAND_OPTIONS)
    assert str(command_maps.value) == "--by len maps one model: give one to --model, not 2"


def test_the_command_keeps_its_flags(cli, tmp_path):
    """The command passes its flags where the defaults are now the API's."""
    config = tmp_path / "trinity.yaml"
    config.write_text(TRINITY_YAML.replace("  model_path:", "  no_model_path:"), encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100")
    assert status == 2 and "--out or solve cluster --emit-dir" in err
    status, out, err = cli("--model", "8B", "--gpu", "h100", "--len", "65536", "--gpus", "8", "--offload", "--emit",
                           "trinity")
    assert status == 0 and "not checked: --host-ram not given" in out and "--trinity-version 0.5 leaves" in out
    status, out, err = cli("map", "--gpu", "h100", "--by", "len", "--model", "8B,4B")
    assert (status, err) == (2, "solve map: error: --by len maps one model: give one to --model, not 2\n")
