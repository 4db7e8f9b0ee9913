"""The docs' claims on session 78's changes, held to the code (docstruth14): docs/planner.md's GPU names that are
guessed, not taken (`gh200` naming both GH200s, which it said of any name several types share before their memory,
though `a100` is taken), and the sizes and slips it lists; docs/json.md's `rope-scaling-unbuilt-refused` row (which
named a YaRN on a Phi-3 alone: a `linear` one is refused too, in `mode: train`, and `--write` removes it); planner.md's
plan `trinity_version` and `expert_layout` for each release it names; api.md's `environ`, a mapping of strings (its
keys were not checked: ``{1: "true"}`` was taken)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.tables import QueryError, load_catalog
from solver.trinity import plan_settings, read_trinity_config, trinity_fragment

Cli = Callable[..., tuple[int, str, str]]

ROOT = Path(__file__).resolve().parent.parent
PLANNER = " ".join((ROOT / "docs" / "planner.md").read_text(encoding="utf-8").split())
JSON_PAGE = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
PHI3_128K = ROOT / "tests" / "data" / "hf-configs" / "Phi-3-mini-128k-instruct.json"

GUESSED = [("gh200", "GH200-96GB or GH200-144GB"), ("96gb", "H20-96GB or GH200-96GB"), ("96", "H20-96GB or GH200-96GB"),
           ("141gb", "H200-141GB"), ("80gb", "A100-80GB, A800-80GB, H100-80GB or H800-80GB"), ("h2o", "H20-96GB"),
           ("h02", "H20-96GB"), ("H20-69GB", "H20-96GB"), ("L40-S", "L40S-48GB"), ("64gb", None), ("qwen3-41b", None)]
"""The names planner.md's paragraph on GPU names says are refused, each with the guess it gives (None: none)."""


@pytest.mark.parametrize(("name", "guess"), GUESSED)
def test_each_gpu_name_the_planner_page_says_is_guessed_gets_that_guess(cli: Cli, name: str, guess: str | None):
    assert f"`{name}`" in PLANNER or f"`--gpu {name}`" in PLANNER
    status, _, err = cli("--model", "8B", "--gpu", name, "--gpus", "1", "--len", "8192")
    said = f"solve: error: unknown GPU '{name}'" + (f" (did you mean {guess}?)" if guess else "") + "; accepted: "
    assert (status, err.splitlines()[-1][:len(said)]) == (2, said)


def test_gh200_names_both_types_but_a100_is_taken(cli: Cli):
    # Before, the page said any name several GPU types share before their memory sizes names each: a100 is taken.
    assert ("A name that several GPU types have before their memory sizes names each of them: `gh200` (did you mean "
            "GH200-96GB or GH200-144GB?); `a100` alone is taken (above).") in PLANNER
    status, out, err = cli("--model", "8B", "--gpu", "a100", "--gpus", "1", "--len", "8192")
    assert (status, out.split(" · ")[0]) == (0, "A100-80GB")
    assert err == ("solve: note: --gpu 'a100' is taken as A100-80GB; nodes of A100-40GB need that name (the memory "
                   "decides the plans)\n")
    assert cli("--model", "0.6B", "--gpu", "4090", "--gpus", "1", "--len", "8192")[1].startswith(
        "RTX-4090-24GB · ")  # a bare number that is a GPU type's short form: taken


def test_a_linear_scaling_within_a_phi3s_native_context_is_unneeded_in_mode_train_and_removed(cli: Cli,
                                                                                              tmp_path: Path):
    # json.md's row named a yarn on Phi-3-mini-4k alone, and a scaling a vLLM rollout takes; since phi3rope (s78) a
    # Phi-3's factor scaling builds as given (rope-scaling-untrained past the native context), unneeded within it.
    [row] = [line for line in JSON_PAGE.splitlines() if line.startswith("| `rope-scaling-untrained` |")]
    assert "a `yarn`, `linear` or `dynamic` on a Phi-3 without its own `longrope`" in row and "in every mode" in row
    assert "remove it (`--write` does)" in row
    short = {**json.loads(PHI3_128K.read_text(encoding="utf-8")), "max_position_embeddings": 4096,
             "_name_or_path": "microsoft/Phi-3-mini-4k-instruct"}
    del short["rope_scaling"]
    (tmp_path / "phi3.json").write_text(json.dumps(short), encoding="utf-8")
    (tmp_path / "run.yaml").write_text(
        "mode: train\nmodel:\n  model_path: microsoft/Phi-3-mini-4k-instruct\n  max_model_len: 2048\n"
        "  rope_scaling: {rope_type: linear, factor: 2.0}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
        "buffer: {train_batch_size: 64}\nalgorithm: {algorithm_type: grpo}\n", encoding="utf-8")
    given = ("--from-config", str(tmp_path / "run.yaml"), "--model-config", str(tmp_path / "phi3.json"), "--gpu",
             "h100")
    status, out, _ = cli(*given, "--check", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["config_problem_codes"], current["refused"]) == (0, ["rope-scaling-unneeded"], False)
    assert cli(*given, "--write", str(tmp_path / "patched.yaml"))[0] == 0
    assert "rope_scaling" not in (tmp_path / "patched.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize(("given", "named", "layout"), [
    (None, None, "fused"), ("v0.5.1", "0.5.1", "separate"), ("0.5", "0.5", "either"), ("0.5.0", "0.5.0", "either"),
    ("0.5.2", "0.5.2", "either"), ("0.6", "0.6", "fused"), ("0.6.0", "0.6.0", "fused")])
def test_a_plans_release_and_expert_layout_are_the_planner_pages(given: str | None, named: str | None, layout: str):
    assert ("(`--trinity-version`, as rft-solver names it back: `0.5.1` for `v0.5.1`, `0.5.0`, `0.5`, `0.6.0`), null "
            "where none was named") in PLANNER
    assert "(`separate` for 0.5.1, `either` for 0.5, 0.5.0 and 0.5.2, `fused` for 0.6 and none named" in PLANNER
    (answer,) = solver.plan("Qwen3-30B-A3B", gpu="h100", budget_gpus=8, max_model_len=8192, trinity_version=given)
    assert answer.best is not None
    assert (answer.best.trinity_version, answer.best.expert_layout) == (named, layout)


def test_an_environ_whose_keys_are_not_strings_is_refused():
    api = " ".join((ROOT / "docs" / "api.md").read_text(encoding="utf-8").split())
    assert "an `environ` that is not a mapping of strings is a `QueryError`" in api
    (answer,) = solver.plan("Qwen3-8B", gpu="h100", budget_gpus=8, max_model_len=32768)
    assert answer.best is not None
    layout = {"trainer": {"use_dynamic_bsz": "${oc.env:DYN,false}"}}
    model = load_catalog().model("Qwen3-8B")
    for made in (trinity_fragment, plan_settings):
        with pytest.raises(QueryError, match=r"^environ's keys must be a str, got 1$"):
            made(answer.best, model, layout=layout, environ={1: "true"})  # type: ignore[dict-item]
    with pytest.raises(QueryError, match=r"^environ's keys must be a str, got 1$"):
        read_trinity_config("model: {max_model_len: 8192}\n", "run.yaml", {1: "true"})  # type: ignore[dict-item]


DPO_CONFIG = ("mode: train\nmodel:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 8192\ncluster: {node_num: 1, "
              "gpu_per_node: 8}\nalgorithm: {algorithm_type: dpo}\nbuffer: {train_batch_size: 64}\n")


@pytest.mark.parametrize(("page", "said", "options"), [
    ("cli.md", "--from-config's algorithm.algorithm_type says whether the run trains DPO (dpo): drop --dpo",
     ("--dpo",)),
    ("trinity.md", ("the config's algorithm.algorithm_type dpo trains no PPO critic (Trinity's dpo algorithm uses "
                    "none): drop --critic resident"), ("--critic", "resident"))])
def test_the_dpo_refusals_the_pages_quote_are_printed(cli: Cli, tmp_path: Path, page: str, said: str,
                                                      options: tuple[str, ...]):
    assert said in " ".join((ROOT / "docs" / page).read_text(encoding="utf-8").split())
    (tmp_path / "dpo.yaml").write_text(DPO_CONFIG, encoding="utf-8")
    status, _, err = cli("--from-config", str(tmp_path / "dpo.yaml"), "--gpu", "h100", *options)
    assert (status, err.splitlines()[-1]) == (2, f"solve: error: {said}")
