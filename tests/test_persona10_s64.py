"""What a new user's first hour found (session 64, persona10): each test runs what the words describe and checks
the words against what the code does."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from solver.tables import shipped_examples

ROOT = Path(__file__).resolve().parent.parent
REQUIRED = ROOT / "docs" / "examples" / "required.yaml"
"""Four jobs on two nodes of 8; code-8b, chat-14b and probe-4b required, math-8b not."""

Cli = Callable[..., tuple[int, str, str]]


def flat(text: str) -> str:
    """Text with its line breaks read as spaces, as a reader reads a paragraph."""
    return " ".join(text.split())


def test_minimize_nodes_sends_a_fleet_with_required_jobs_to_a_purchase_for_every_job(cli: Cli):
    # --minimize nodes places every job or none; --buy alone buys for the required jobs only, so the note's command
    # must name the others (it said "to place the required jobs: ... --buy", which buys for three of the four).
    status, _, err = cli("cluster", str(REQUIRED), "--minimize", "nodes")
    assert status == 1
    assert f"note: to place every job: solve cluster {REQUIRED} --buy --required math-8b names the fewest" in err
    status, out, _ = cli("cluster", str(REQUIRED), "--buy", "--required", "math-8b", "--json")
    purchase = json.loads(out)
    assert status == 0 and purchase["required"] == ["code-8b", "math-8b", "chat-14b", "probe-4b"]
    assert {placement["job"] for placement in purchase["placements"]} == set(purchase["required"])
    # A job --required names is named again (a new run needs it); the file's required ones are not.
    status, _, err = cli("cluster", str(REQUIRED), "--minimize", "nodes", "--required", "math-8b")
    assert status == 1 and f"note: to place every job: solve cluster {REQUIRED} --buy --required math-8b names" in err
    # Without --minimize nodes nothing changes: the required jobs do not fit, and --buy buys for them.
    status, _, err = cli("cluster", str(REQUIRED))
    assert status == 1 and f"note: to place the required jobs: solve cluster {REQUIRED} --buy names the" in err


def test_the_examples_help_and_readme_count_the_model_configs_solve_examples_writes(cli: Cli):
    # my-model/config.json and linear-model/config.json: the words said "a model's config.json" / "a config.json".
    configs = sorted(str(name) for name in shipped_examples() if name.name == "config.json")
    assert configs == ["linear-model/config.json", "my-model/config.json"]
    status, out, _ = cli("examples", "--help")
    assert status == 0 and "a Trinity config, two models' config.json) into DIR" in flat(out)
    readme = flat((ROOT / "README.md").read_text(encoding="utf-8"))
    assert ("a Trinity config, two config.json files: one of a released model's shape, one of a made-up model with a "
            "RoPE scaling of its own, `linear-model`, whose README says so) to `docs/examples`") in readme


def test_the_guide_and_readme_name_total_gpus_for_the_gpus_in_all(cli: Cli):
    # A user who owns N GPUs reads the guide's rollout section and the README: both asked for --gpus N-R alone, though
    # --total-gpus N --rollout-gpus R says it as the user counts (the help and planner.md had it; they did not).
    guide = flat((ROOT / "docs" / "guide.md").read_text(encoding="utf-8"))
    section = guide.split("### Leaving GPUs for the rollout")[1].split("### The cheapest plan")[0]
    assert "ask `--total-gpus N --rollout-gpus R`, which plans as `--gpus N-R --rollout-gpus R` does" in section
    example = "solve --maximize len --total-gpus 4 --rollout-gpus 1 --model 8B --gpu a100"
    assert f"Example, on four A100s: `{example}`." in section
    status, in_all, _ = cli(*example.split()[1:])
    status_trainer, trainer, _ = cli("--maximize", "len", "--gpus", "3", "--rollout-gpus", "1", "--model", "8B",
                                     "--gpu", "a100")
    assert (status, status_trainer) == (0, 0)
    assert in_all.splitlines()[0].endswith("longest context within 4 GPUs in all (1 for the rollout): optimal")
    assert in_all.splitlines()[1:] == trainer.splitlines()[1:]  # the same plan as --gpus 3 --rollout-gpus 1
    assert "Env + Offload + SP=2 on 2 of 3 GPUs, with 1 rollout GPU (1 unused: --rollout-gpus 2" in in_all
    readme = flat((ROOT / "README.md").read_text(encoding="utf-8"))
    assert "(`--total-gpus T --rollout-gpus R`: T GPUs in all, the trainer's budget T - R)" in readme
