"""Mutants of session 71's later merges that their tests let live (mutants21): a one-sequence model's plan is checked
against the calibration at the tokens it counts, not the unread budget (padtokens, `_memory_figures`); a config's own
token budget, replaced for such a model, is commented as unread (padtokens, `_trainer_keys`); its longest estimate
stops where its own table does (padtokens, `table_stops`), and its explanations read the same, at ``--token-budget
auto`` as at the default, which lowers nothing for it (padtokens, `_Words._lowered`; and `_capped_by`'s "no further"
words and `_beyond_table`'s "with a lowered token budget", which the merge left keyed to the query's mode: fixed
here); ``--write`` removes a stale model YaRN but keeps a rollout YaRN of the rollout's own (persona32,
`_apply_plan`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from solver.explain import explain
from solver.query import make_query
from solver.solve import plan
from solver.tables import load_catalog
from solver.tables.model_config import load_model_config

ROOT = Path(__file__).parent.parent
INTERNLM2 = ROOT / "tests" / "data" / "hf-configs" / "internlm2-7b.json"
EXAMPLE = ROOT / "docs" / "examples" / "trinity.yaml"
Cli = Callable[..., tuple[int, str, str]]

CELLS = """gpu: H100-80GB
memory_gb: 80
source: "made up"
tables:
  - gpus: 8
    section: "8 x H100"
    models: [internlm2-7b]
    rows:
      - {max_model_len: 16384, cells: {internlm2-7b: vanilla}}
      - {max_model_len: 32768, cells: {internlm2-7b: "-"}}
"""
"""Made-up cells of InternLM2-7B (trained one sequence per micro-batch) on 8 H100s: vanilla at 16384, nothing at
32768."""


def test_a_one_sequence_plan_is_beyond_the_calibrations_tokens_only_where_its_sequence_is():
    model = load_model_config(INTERNLM2)
    catalog = load_catalog().with_model(model)
    beyond = {}
    for length in (40960, 79872):  # the calibration's fits reach 73728 tokens per GPU
        (answer,) = plan(make_query(catalog, gpu="h100", model=model.name, budget_gpus=8, max_model_len=length),
                         catalog)
        found = answer.plans[0]
        beyond[length] = (found.max_token_len_per_gpu, list(found.beyond_calibration))
    known = ["a vocabulary of 92544 (calibrated on 151936)", "8 GPUs (calibrated up to 6)"]
    assert beyond == {40960: (81920, known),  # its unread budget, 81920, is past 73728: its sequence is not
                      79872: (159744, [*known, "79872 tokens per GPU (calibrated on fits of up to 73728)"])}


def test_a_configs_own_budget_is_replaced_with_a_comment_that_it_is_unread(cli: Cli, tmp_path: Path):
    given = tmp_path / "given.yaml"
    given.write_text(EXAMPLE.read_text().replace("\ntrainer:\n", "\ntrainer:\n  max_token_len_per_gpu: 1000\n", 1))
    status, out, _ = cli("--from-config", str(given), "--model-config", str(INTERNLM2), "--gpu", "h100", "--emit",
                         "trinity")
    assert status == 0
    assert ("\n  ulysses_sequence_parallel_size: 1\n  # ceil(2 * 32768 / 1), Trinity's default; unread with dynamic "
            "batch sizes off, one sequence per\n  # micro-batch\n  max_token_len_per_gpu: 65536\n") in out


def test_its_explanations_with_its_own_table_read_alike_at_either_token_budget(tmp_path: Path):
    model = load_model_config(INTERNLM2)
    (tmp_path / "cells.yaml").write_text(CELLS)
    catalog = load_catalog().with_model(model).with_cells(tmp_path / "cells.yaml")
    details = []
    for mode in ("default", "auto"):
        query = make_query(catalog, gpu="h100", model=model.name, budget_gpus=8, max_model_len=40960,
                           token_budget=mode)
        (answer,) = plan(query, catalog)
        details.append({reason.rule: reason.detail for reason in explain(catalog, query, answer)})
    assert details[0] == details[1]
    assert details[1]["no_setting"] == ("the H100-80GB table for 8 GPUs of your cells (made up) says '-' for "
                                        "internlm2-7b at 32768 tokens, where its rows end: nothing trained there")
    assert ("1 GPU: 16384 (estimated, extrapolated, no further: the H100-80GB table for 8 GPUs of your cells (made "
            "up) says Env + Offload ran out of memory at 32768)") in details[1]["limit"]


def test_its_longest_lengths_explained_read_alike_at_either_token_budget():
    model = load_model_config(INTERNLM2)
    catalog = load_catalog().with_model(model)
    details = []
    for mode in ("default", "auto"):
        query = make_query(catalog, gpu="h100", model=model.name, budget_gpus=8, objective="max_len",
                           token_budget=mode)
        (answer,) = plan(query, catalog)
        details.append([(reason.rule, reason.detail) for reason in explain(catalog, query, answer)])
    assert details[0] == details[1]
    longest = ("on 1 GPU: no table speaks for H100-80GB (none has its memory); the memory model's longest fitting "
               "length there is 79872 tokens")  # not "... with a lowered token budget"
    assert ("memory_model", longest) in details[1]


def test_its_longest_estimate_stops_where_its_own_table_does_at_either_token_budget(tmp_path: Path):
    model = load_model_config(INTERNLM2)
    (tmp_path / "cells.yaml").write_text(CELLS.replace(
        "vanilla}}\n", "vanilla}}\n      - {max_model_len: 20001, cells: {internlm2-7b: Env + Offload}}\n"))
    catalog = load_catalog().with_model(model).with_cells(tmp_path / "cells.yaml")
    found = []
    for mode in ("default", "auto"):
        query = make_query(catalog, gpu="h100", model=model.name, budget_gpus=4, exact=True, objective="max_len",
                           token_budget=mode)
        best = plan(query, catalog)[0].plans[0]
        found.append((best.gpus, best.max_model_len, best.env, best.offload, best.evidence))
    # the 8-GPU table's Env + Offload at 20001, out of memory at 32768, stops 4 GPUs' estimate off the grid
    assert found == [(4, 20001, True, True, "estimated")] * 2


YARN = "    rope_type: yarn\n    factor: {}\n    original_max_position_embeddings: 40960\n"
"""A YaRN over Qwen3's 40960 tokens, at the model section's indentation."""


def test_write_keeps_a_rollout_yarn_of_its_own_where_it_removes_the_models(cli: Cli, tmp_path: Path):
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    rollout = YARN.format(1.6).replace("    ", "      ")
    config.write_text("model:\n  model_path: Qwen/Qwen3-8B\n  max_prompt_tokens: 4096\n  max_response_tokens: 12288\n"
                      f"  max_model_len: 65536\n  rope_scaling:\n{YARN.format(2.0)}cluster:\n  node_num: 1\n"
                      "  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 2\n    rope_scaling:\n"
                      + rollout, encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h20", "--len", "32k", "--write", str(patched))
    written = patched.read_text(encoding="utf-8")
    assert status == 0, err
    assert written.count("rope_scaling:") == 1  # the model's, stale at 32768, is gone
    assert f"\nexplorer:\n  rollout_model:\n    engine_num: 2\n    rope_scaling:\n{rollout}" in written
