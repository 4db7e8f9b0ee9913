"""Small slips left by session 81's helpers (smallslips39).

``--explain`` names the smallest raised token cap that a capped refusal names (`raise_token_budget`, from the
answer's ``token_budget_cap_raised``: no second search); an estimated plan's ``evidence`` line says where the shipped
memory model's held-out accuracy is, and at which margin; ``--help`` names what this session added (``--model`` given
a checkpoint, ``config_keys_changed``, the raised cap, ``--buy`` for the required jobs)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from option_reference import option_reference

import solver
import solver.solve
from solver.tables import shipped_tables_directory

Cli = Callable[..., tuple[int, str, str]]
CAPPED = ("--model", "8B", "--gpu", "h20", "--len", "64k", "--token-budget", "8k", "--gpus", "4")
"""Qwen3-8B at 65536 tokens on 4 H20s within 8192 tokens per GPU: refused, 16384 trains it."""
RAISED = ("a cap of 16384 tokens per GPU (--token-budget 16384) trains 65536 tokens within 4 GPUs: Env + SP=4 on 4 "
          "GPUs at 65536 tokens with a lowered max_token_len_per_gpu of 16384 (documented: the H20-96GB table for 4 "
          "GPUs says 'Env + SP=4' at 71680, the row that 65536 falls to)")
CONFIG_CAPPED = """\
algorithm:
  algorithm_type: grpo
model:
  model_path: Qwen/Qwen3-8B
  max_model_len: 65536
cluster:
  node_num: 1
  gpu_per_node: 8
explorer:
  rollout_model:
    engine_num: 4
    tensor_parallel_size: 1
trainer:
  max_token_len_per_gpu: 8192
  trainer_config: {actor_rollout_ref: {actor: {ulysses_sequence_parallel_size: 16}}}
"""
"""4 rollout and 4 trainer H20s at 65536 tokens, the trainer's own budget 8192 tokens per GPU, which caps the plans:
the actor's own SP is 16, at which the budget holds a sequence, so no release raises it (release89b: one below a
sequence at the actor's SP is raised to hold one, as every release runs it, and would cap nothing here)."""
POINTER = "docs/memory.md in rft-solver's source gives its accuracy on held-out cells at margin 0.01"


def _rows(out: str) -> dict[str, str]:
    """The text's rows (``evidence``, ``raise_token_budget``, ...), each with its wrapped lines joined."""
    rows: dict[str, str] = {}
    name = ""
    for line in out.splitlines():
        if (found := re.match(r"^([a-z_]+) +(\S.*)$", line)) and not line.startswith(" "):
            name = found.group(1)
            rows[name] = found.group(2)
        elif line.startswith(" ") and name:
            rows[name] += " " + line.strip()
    return rows


def test_explain_names_the_smallest_raised_cap_the_refusal_names_from_the_same_search(
        cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    searches: list[int] = []
    minimize = solver.solve.minimize_token_cap

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        searches.append(1)
        return minimize(*args, **kwargs)

    monkeypatch.setattr(solver.solve, "minimize_token_cap", counted)
    status, out, _ = cli(*CAPPED, "--explain")
    assert status == 1 and len(searches) == 1  # the answer's search; the explanation reads its plan
    rows = _rows(out)
    assert rows["raise_token_budget"] == RAISED
    assert list(rows)[-2:] == ["more_gpus", "raise_token_budget"]  # after the other plans beyond the limits
    (answer,) = json.loads(cli(*CAPPED, "--explain", "--json")[1])
    assert answer["explanation"][-1] == {"rule": "raise_token_budget", "detail": RAISED}
    assert answer["token_budget_cap_raised"]["max_token_len_per_gpu"] == 16384


def test_a_configs_own_cap_is_named_raised_in_the_explanation(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "capped.yaml"
    config.write_text(CONFIG_CAPPED, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--explain")
    assert status == 1
    assert _rows(out)["raise_token_budget"] == (
        "a cap of 16384 tokens per GPU (the config's own max_token_len_per_gpu raised to it, or --token-budget 16384) "
        "trains 65536 tokens on exactly 4 GPUs: Env + SP=4 on 4 GPUs at 65536 tokens with a lowered "
        "max_token_len_per_gpu of 16384 (documented: the H20-96GB table for 4 GPUs says 'Env + SP=4' at 71680, the "
        "row that 65536 falls to)")


def test_no_raised_cap_no_line() -> None:
    # No cap trains 262144 tokens on one H20, and a refusal without a cap has none to raise
    (one,) = solver.plan("8B", gpu="h20", max_model_len=262144, budget_gpus=1, token_budget=8192, explain=True)
    (uncapped,) = solver.plan("14B", gpu="a100", max_model_len=131072, budget_gpus=4, explain=True)
    for answer in (one, uncapped):
        assert answer.best is None and answer.token_budget_cap_raised is None and answer.explanation
        assert "raise_token_budget" not in [reason.rule for reason in answer.explanation]
    # the API names the cap as the API takes it
    (capped,) = solver.plan("8B", gpu="h20", max_model_len=65536, budget_gpus=4, token_budget=8192, explain=True)
    assert capped.explanation is not None and capped.explanation[-1].detail == RAISED.replace(
        "--token-budget 16384", "token_budget=16384")


def test_an_estimate_says_where_its_held_out_accuracy_is_at_the_default_margin(cli: Cli, tmp_path: Path) -> None:
    plan = ("--model", "14B", "--len", "128k", "--gpus", "8", "--gpu", "a100-80gb")
    beyond = "; beyond its calibration: 8 GPUs (calibrated up to 6), SP=8 (calibrated up to SP=4)"
    assert _rows(cli(*plan)[1])["evidence"] == f"estimated: the memory model's prediction (below; {POINTER}){beyond}"
    # the figures are for the memory model's own margin, whatever this answer's: --margin, or a small card's 0.04
    assert _rows(cli(*plan, "--margin", "0.03")[1])["evidence"].startswith(
        f"estimated: the memory model's prediction (below; {POINTER})")
    l40s = _rows(cli("--model", "4B", "--gpu", "l40s", "--len", "32k", "--gpus", "4")[1])
    assert l40s["evidence"] == (f"estimated: the memory model's prediction (below; {POINTER}); beyond its "
                                "calibration: 45 GiB GPUs (calibrated on 80 to 96 GiB)")
    assert l40s["memory"].endswith("(memory model; margin 0.04, the memory model's own 0.01)")
    # a plan the tables vouch for says nothing of it
    assert _rows(cli("--model", "4B", "--gpu", "a100-80gb", "--len", "8k", "--gpus", "1")[1])["evidence"] == (
        "documented: the A100-80GB table for 1 GPU says 'Env + Offload' at 8192")
    # a memory model of your own: the shipped one's figures are not its
    own = yaml.safe_load((shipped_tables_directory() / "memory-model.yaml").read_text(encoding="utf-8"))
    own.update(source="calibrated on my-cells.yaml", margin=0.02)
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(own), encoding="utf-8")
    assert _rows(cli(*plan, "--memory-model", str(path))[1])["evidence"] == (
        f"estimated: the memory model's prediction (below){beyond}")


def _help(cli: Cli, *command: str) -> str:
    """The command's --help, on one line (argparse wraps no word at this width)."""
    status, out, _ = cli(*command, "--help")
    assert status == 0
    return " ".join(out.split())


def test_the_help_names_what_this_session_added(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "2000")
    said = _help(cli)
    assert ("--model M model: Qwen3-4B, 4B, qwen3-4b, ... (default: --from-config's; a model of your own: "
            "--model-config)") in said
    assert "--json print a JSON array, one answer per GPU type --emit" in said
    assert "N (32k): no plan takes more than N --train-batch-size" in said
    # solve map caps its cells alike but names no raised cap: its help says nothing of one
    assert "N (32k): no plan takes more than N --train-batch-size" in _help(cli, "map")
    assert ("--buy instead of placing the jobs, say the fewest GPUs, then nodes, to add to the file's pools with which "
            "every job (every required one, where some are) is placed") in _help(cli, "cluster")
    # docs/cli.md's option reference says each in full (session 93)
    reference = option_reference()
    assert ("--model M: the model, by the catalogue's name, short or in any case (Qwen3-4B, 4B, qwen3-4b); default: "
            "--from-config's model.model_path. A local checkpoint folder or its config.json is --model-config's."
            ) in reference
    assert ("--json: print a JSON array, one answer per GPU type (with --from-config, its config_keys_changed lists "
            "the config keys --write would change;") in reference
    assert ("each holds a sequence at N (ceil(L / SP) <= N); where N leaves no plan for the length, solve "
            "--from-config's answer names the smallest N that does.") in reference
    assert ("--buy: instead of placing the jobs, say the fewest GPUs, then nodes, to add to the pools with which every "
            "job (every required one, where some are) is placed") in reference
