"""s64 jsonapply2: ``solve --json``'s ``apply`` is made from the fragment's keys without its text, so it loads none of
the text's modules (`solver.trinity.plan_settings`; it loaded no ruamel until s66 checked the settings too, and
loads none again since s68); where
--from-config's engines take no fragment, the JSON says why (``apply_left_out``); and the text view takes
--trinity-version as --json does, its apply lines following it."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_jsonapply_s63 import QUERIES, VERSIONS, _apply_keys, _flat, _json_answer

import solver.trinity
from solver.api import answer_query
from solver.query import make_query
from solver.tables import QueryError, load_catalog
from solver.trinity import EngineError, load_config_mapping, plan_fragment, plan_settings

LOADED = """\
import sys
from solver.cli import main
for argv in {queries!r}:
    main(argv)
print(sorted(name for name in sys.modules if name.startswith(("ruamel", "solver.trinity"))), file=sys.stderr)
"""
"""A script that runs `solve` on each of `queries` in one process, then names the modules of ruamel and of
solver.trinity that are loaded, on stderr."""


def _loaded(*queries: list[str]) -> list[str]:
    """The modules of ruamel and solver.trinity that running `solve` on `queries`, one after the other, loads."""
    result = subprocess.run([sys.executable, "-c", LOADED.format(queries=list(queries))], capture_output=True,
                            text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    loaded: list[str] = ast.literal_eval(result.stderr.splitlines()[-1])
    return loaded


def test_solve_json_makes_no_fragment_text():
    # Each query of s63's (a cluster section, mode train with a batch, Offload, ROCm, vLLM's long-length variable,
    # the YaRN keys) and --top, with and without a Trinity release: the settings alone, and their check against
    # Trinity's rules (s66), none of the text's modules, nor ruamel (s68: the check reads the plans' words, ``yarn``,
    # without it).
    queries = [[*query, *version, "--json"] for query in QUERIES for version in VERSIONS]
    queries.append(["--model", "8B", "--gpu", "h100", "--len", "32k", "--top", "3", "--json"])
    loaded = _loaded(*queries)
    assert [name for name in loaded if not name.startswith("solver.")] == [] and loaded == [
        "solver.trinity", "solver.trinity.checks", "solver.trinity.interpolation", "solver.trinity.keys",
        "solver.trinity.plan_keys", "solver.trinity.reader", "solver.trinity.settings"]


def test_emit_loads_the_fragments_module_where_json_does_not():
    # The text (and its settings' check against Trinity's rules, as --json's); no ruamel, which only a config's
    # round trip (--write's patch) needs (s68).
    loaded = _loaded(["--model", "8B", "--gpu", "h100", "--len", "32k", "--emit", "trinity"])
    assert "solver.trinity.fragment" in loaded and not {"ruamel", "solver.trinity.patch"} & set(loaded)


def test_importing_solver_trinity_loads_none_of_its_modules_until_a_name_is_used():
    code = ("import sys, solver.trinity; before = sorted(m for m in sys.modules if m.startswith(('ruamel', "
            "'solver.trinity.'))); solver.trinity.plan_settings; print(before, 'ruamel' in sys.modules, "
            "'solver.trinity.settings' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.stdout == "[] False True\n", result.stderr


def test_type_checkers_see_every_name_solver_trinity_exports():
    source = ast.parse(Path(solver.trinity.__file__).read_text(encoding="utf-8"))
    (block,) = [node for node in source.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"]
    typed = {alias.name: node.module for node in block.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert typed == solver.trinity._EXPORTS
    assert solver.trinity.__all__ == [*solver.trinity._EXPORTS]
    assert set(solver.trinity.__all__) <= set(dir(solver.trinity))
    for name in solver.trinity.__all__:
        assert getattr(solver.trinity, name) is getattr(sys.modules[solver.trinity._EXPORTS[name]], name)
    with pytest.raises(AttributeError, match="^module 'solver.trinity' has no attribute 'no_such_thing'$"):
        solver.trinity.no_such_thing  # noqa: B018


CONFIG = """\
model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}
cluster: {node_num: 1, gpu_per_node: 8}
explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}
trainer:
  use_dynamic_bsz: false
  trainer_config:
    actor_rollout_ref:
      actor: {ppo_max_token_len_per_gpu: 999999, ulysses_sequence_parallel_size: 1}
      ref: {fsdp_config: {param_offload: true}}
"""


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
@pytest.mark.parametrize(("rollout", "nodes", "engines", "shared", "batch"), [
    (None, 1, (0, 1), None, None), (2, 1, (0, 1), (0, 1, 2, 3, 4, 5, 6, 7, 8, 9), None), (0, 1, (0, 1), None, 64),
    (8, 2, (0, 2), None, 64), (4, 1, None, None, None)])
@pytest.mark.parametrize("layout", [False, True], ids=["no-config", "config"])
def test_plan_settings_are_the_settings_plan_fragment_writes(rollout: int | None, nodes: int,
                                                             engines: tuple[int, int] | None,
                                                             shared: tuple[int, ...] | None, batch: int | None,
                                                             version: str | None, layout: bool):
    catalog = load_catalog()
    (answer,) = answer_query(make_query(catalog, model="8B", gpu="h100", max_model_len=131072, budget_gpus=8,
                                        offload=True), catalog)
    assert answer.best is not None
    arguments: dict[str, Any] = {"nodes": nodes, "engines": engines, "shared_gpus": shared, "version": version,
                                 "train_batch_size": batch,
                                 "layout": load_config_mapping(CONFIG, "trinity.yaml") if layout else None}
    text, settings = plan_fragment(answer.best, catalog.model("8B"), rollout, **arguments)
    assert plan_settings(answer.best, catalog.model("8B"), rollout, **arguments) == settings
    assert settings.config == yaml.safe_load(text)


@pytest.mark.parametrize(("arguments", "message"), [
    ({"nodes": 0}, "nodes must be from 1 to 65536, got 0"),
    ({"engines": (0, -1)}, (r"engines must be \(GPUs of other models, GPUs per engine\), two whole numbers of at "
                            r"least 0, got \(0, -1\)")),
    ({"train_batch_size": 0}, (r"train_batch_size must be a whole number from 1 to 16777216 that the plan's "
                               r"data-parallel ranks \(8 GPUs / SP=8\) divide, got 0")),
    ({"nodes": 5}, "8 trainer \\+ 4 rollout GPUs do not split into 5 nodes of the same size$"),
    ({"version": "0.7"}, "version must be one of None, 0.5, 0.6, got '0.7'$"),
])
def test_plan_settings_refuses_what_plan_fragment_refuses(arguments: dict[str, Any], message: str):
    catalog = load_catalog()
    (answer,) = answer_query(make_query(catalog, model="8B", gpu="h100", max_model_len=131072, budget_gpus=8,
                                        offload=True), catalog)
    assert answer.best is not None
    for made in (plan_settings, plan_fragment):
        with pytest.raises(QueryError, match=f"^{message}"):
            made(answer.best, catalog.model("8B"), 4, **arguments)


def test_plan_settings_refuses_rollout_gpus_its_engines_cannot_take():
    catalog = load_catalog()
    (answer,) = answer_query(make_query(catalog, model="8B", gpu="h100", max_model_len=32768, budget_gpus=4),
                             catalog)
    assert answer.best is not None
    with pytest.raises(EngineError, match="^4 rollout GPUs less the 0 of auxiliary models are not whole engines of 3 "
                                          "GPUs each$"):
        plan_settings(answer.best, catalog.model("8B"), 4, engines=(0, 3))


ENGINES_OF_3 = ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                "explorer: {rollout_model: {engine_num: 1, tensor_parallel_size: 3}}\n")
"""A config whose one rollout engine takes 3 GPUs: no whole number of them takes the 8 a trainer of 8 leaves."""


def test_json_says_why_apply_is_left_out_in_emits_words(cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    config.write_text(ENGINES_OF_3, encoding="utf-8")
    query = ["--from-config", str(config), "--gpus", "8", "--exact", "--gpu", "h100"]
    status, out, err = cli(*query, "--json")
    (answer,) = json.loads(out)
    why = (f"--from-config {config}: 8 rollout GPUs less the 0 of auxiliary models are not whole engines of 3 GPUs "
           "each on nodes of 8: choose a trainer size with --gpus that leaves the config's engines exactly their GPUs")
    nodes = ("solve: note: trinity.yaml's cluster holds 8 GPUs in all (1 node of 8); the plan takes 8 trainer + 8 "
             "rollout GPUs on 2 nodes: give the config cluster.node_num 2, or plan within its 8 with --total-gpus 8 "
             "in place of --gpus\n")
    assert (status, err, answer["plans"][0]["gpus"], "apply" in answer) == (0, nodes, 8, False)
    assert answer["apply_left_out"] == why
    assert cli(*query, "--emit", "trinity") == (2, "", f"solve: error: {why}\n")
    assert solver.Answer.model_validate(answer).as_json() == answer  # read back, the field kept


def test_an_answer_with_apply_has_no_apply_left_out(cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    config.write_text(ENGINES_OF_3, encoding="utf-8")
    # A trainer of 4 leaves the rollout the config's own 3 GPUs, which its engine takes: the cluster is resized.
    answer = _json_answer(cli, "--from-config", str(config), "--gpus", "4", "--exact", "--gpu", "h100")
    assert "apply_left_out" not in answer
    assert answer["apply"]["config"]["cluster"] == {"node_num": 1, "gpu_per_node": 7}


OFFLOAD = ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--len", "200000"]
"""A plan with Offload: the trainer's own offload flags are Trinity 0.6's."""


@pytest.mark.parametrize(("version", "comment"), [
    ([], "# Trinity 0.6 also takes these (leave them out before 0.6, which refuses them):"),
    (["--trinity-version", "0.6"], "# Trinity 0.6 also takes these:"),
    (["--trinity-version", "0.5"], None)])
def test_the_text_view_takes_trinity_version_and_its_apply_lines_follow_it(
        cli, version: list[str], comment: str | None):
    status, text, err = cli(*OFFLOAD, *version)
    assert (status, err) == (0, "")
    lines = text.splitlines()
    assert [line for line in lines if line.startswith("# Trinity 0.6")] == ([comment] if comment else [])
    assert ("trainer.{param_offload, optimizer_offload, offload_policy}: true" in lines) == (comment is not None)


@pytest.mark.parametrize("version", VERSIONS[1:], ids=["0.5", "0.6"])
@pytest.mark.parametrize("query", QUERIES, ids=[" ".join(query[1:4:2]) + f"-{i}" for i, query in enumerate(QUERIES)])
def test_the_texts_apply_keys_for_a_release_are_the_jsons_config_but_the_cluster(cli, query: list[str],
                                                                                 version: list[str]):
    status, text, _ = cli(*query, *version)
    assert status == 0
    config = _flat(_json_answer(cli, *query, *version)["apply"]["config"])
    assert _apply_keys(text) == {path: value for path, value in config.items()
                                 if path[0] not in ("cluster", "explorer", "mode", "buffer")}
