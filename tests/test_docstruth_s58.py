"""Claims of the docs' prose (outside the shown outputs, which `test_docs.py` checks) that were stale: each test
runs what the page says and checks its words against what the code gives."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from test_cluster import reference_checked

import solver
from solver import model, solve

DOCS = Path(__file__).resolve().parent.parent / "docs"


def page_text(name: str) -> str:
    """A docs page with its line breaks read as spaces, as a reader reads a paragraph."""
    return " ".join((DOCS / name).read_text(encoding="utf-8").split())


def test_the_guides_rollout_example_names_the_flags_the_for_rollout_line_gives(
        cli: Callable[..., tuple[int, str, str]]):
    # docs/guide.md, "Leaving GPUs for the rollout": `--gpus 4` alone on four A100s for Qwen3-8B.
    status, out, _ = cli("--maximize", "len", "--gpus", "4", "--model", "8B", "--gpu", "a100")
    line = next(line for line in out.splitlines() if line.startswith("for rollout"))
    flags = re.search(r"(--total-gpus \d+ --rollout-gpus \d+) keeps", line)
    assert status == 0 and flags is not None and "51200 tokens instead of 102400" in line
    paragraph = page_text("guide.md").split("`--gpus 4` alone would take all four")[1].split("- `--gpus 4 --rollout")[0]
    assert f"`{flags.group(1)}`, 51200 tokens instead of 102400" in paragraph


def test_every_code_name_of_the_planners_model_section_is_in_the_planning_code():
    # docs/planner.md, "How the model is built", names the functions and constants of solver/model.py and solve.py.
    section = (DOCS / "planner.md").read_text(encoding="utf-8").split("## How the model is built")[1]
    names = set(re.findall(r"`([A-Za-z_]\w*(?:\.\w+)*)`", section.split("## Command line")[0]))
    code_names = {name for name in names if "_" in name or "." in name}
    assert "add_cell_evidence" in code_names

    def found(name: str) -> bool:
        head, *rest = name.split(".")
        owner = getattr(model, head, None) or getattr(solve, head, None)
        return owner is not None and all(
            hasattr(owner, part) or part in getattr(owner, "__dataclass_fields__", {}) for part in rest)

    assert sorted(name for name in code_names if not found(name)) == []


def test_the_api_page_lists_the_keywords_its_range_errors_name():
    # docs/api.md: a value out of range, or a request that makes no sense, raises a QueryError whose message names the
    # argument as the function takes it (its keyword, not the command's flag), and the page lists those keywords.
    listed = page_text("api.md").split("its message names the argument as the function takes it")[1].split(
        "The modules, in layers")[0]
    calls: list[Callable[[], object]] = [
        lambda: solver.plan("4B", gpu="a100", max_model_len=4096, train_batch_size=0),
        lambda: solver.plan("4B", gpu="a100", max_model_len=4096, token_budget="auto", estimate="never"),
        lambda: solver.estimate_memory("4B", "a100", 2, 32768, max_token_len_per_gpu=100),
        lambda: solver.map_plans("4B", gpu="a100", gpus_up_to=65),
        lambda: solver.map_plans(["4B", "8B"], gpu="a100", by="len"),
        lambda: solver.plan("4B", gpu="a100", max_model_len=4096, rollout_gpus=-1),
        lambda: solver.plan("4B", gpu="a100", objective="max_len"),
    ]
    named = []
    for call in calls:
        with pytest.raises(solver.QueryError) as refusal:
            call()
        keyword = re.match(r'[a-z_]+(?:="[a-z_]+")?', str(refusal.value))
        assert keyword is not None, str(refusal.value)
        named.append(keyword.group(0))
    assert "--" not in "".join(named)
    assert [keyword for keyword in named if f"`{keyword}" not in listed] == []


def test_write_sets_the_roles_budgets_and_sp_and_warns_of_an_unknown_key_as_the_trinity_page_says(
        cli: Callable[..., tuple[int, str, str]], tmp_path: Path):
    # docs/trinity.md, "Notes and warnings on stderr": the example of a patched config that still breaks a rule is a
    # key --write leaves alone, one no release of Trinity has; the actor's budget, and since criticbudget_s82 the
    # critic's (it was the example: left too small, with two warnings), it sets to the plan's, with no warning; and
    # since review82a_s82 the critic's own SP (it was the example: SP 3 under Trinity 0.5, which does not divide
    # Qwen3-8B's 32 heads) as the roles'.
    example = (DOCS / "examples" / "trinity.yaml").read_text(encoding="utf-8")
    actor = example.replace("          param_offload: false\n",
                            "          param_offload: false\n        ppo_max_token_len_per_gpu: 1000\n")
    critic = example.replace("algorithm_type: grpo", "algorithm_type: ppo") + (
        "    critic:\n      ppo_max_token_len_per_gpu: 1000\n")
    critic_sp = critic.replace("      ppo_max_token_len_per_gpu: 1000\n", "      ulysses_sequence_parallel_size: 3\n")
    warned = {}
    for name, text, options in (("actor", actor, ()), ("critic", critic, ()),
                                ("critic-sp", critic_sp, ("--trinity-version", "0.5")),
                                ("unknown", example + "extra_key: 1\n", ())):
        (tmp_path / f"{name}.yaml").write_text(text, encoding="utf-8")
        status, _, err = cli("--from-config", str(tmp_path / f"{name}.yaml"), "--gpu", "h20", *options,
                             "--write", str(tmp_path / f"{name}-patched.yaml"))
        patched = (tmp_path / f"{name}-patched.yaml").read_text(encoding="utf-8")
        assert status == 0
        warned[name] = [line for line in err.splitlines() if line.startswith("solve: warning:")]
        if name in ("actor", "critic"):
            assert "ppo_max_token_len_per_gpu: 32768" in patched and "1000" not in patched
        if name == "critic-sp":
            assert "    critic:\n      ulysses_sequence_parallel_size: 2\n" in patched
    assert warned["actor"] == warned["critic"] == warned["critic-sp"] == []
    assert warned["unknown"] == [(
        f"solve: warning: {tmp_path / 'unknown-patched.yaml'}: extra_key: no release of Trinity (0.5.0 to 0.6.0) has "
        "this key there, so Trinity refuses the config (it knows no such key): remove it, or move it where Trinity "
        "reads it; where it parks YAML anchors, put each anchor on the first key that uses it, then remove it")]
    paragraph = page_text("trinity.md").split("**A patched config that still breaks Trinity's rules**")[1][:300]
    assert "a key no release of Trinity has there" in paragraph
    assert "A critic's own `ulysses_sequence_parallel_size` it sets to the plan's SP" in paragraph


def test_trinity_version_is_taken_by_solve_and_solve_cluster_with_any_output(
        cli: Callable[..., tuple[int, str, str]]):
    # docs/trinity.md, "What it sets": both commands take --trinity-version with any output (solve's view since s64,
    # its apply lines following it; solve cluster without --emit-dir, its rules cautioning the placed plans).
    view = cli("--model", "4B", "--gpu", "a100-80g", "--len", "8k", "--trinity-version", "0.5")
    taken = cli("cluster", str(DOCS / "examples" / "fleet.yaml"), "--trinity-version", "0.5", "--json")
    reference_checked(DOCS / "examples" / "fleet.yaml", taken[1], trinity_version="0.5")  # cautioned by 0.5's rules
    assert (view[0], view[2], taken[0]) == (0, "", 0)
    words = page_text("trinity.md").split("**`--trinity-version`** chooses")[1]
    words = words.split("- **`PYTORCH_CUDA_ALLOC_CONF`**")[0]
    assert "Both commands take it with any output, and caution the plans by that release's rules" in " ".join(
        words.split())


def test_the_api_page_names_every_field_of_the_results_it_describes():
    # docs/api.md describes these result types field by field (a plan's fields are planner.md's JSON, and
    # CurrentSettings' trinity.md's); a field added to one of them is named there too.
    page = (DOCS / "api.md").read_text(encoding="utf-8")
    described = (solver.Answer, solver.Alternatives, solver.RolloutKept, solver.Pins, solver.ClusterResult,
                 solver.Placement, solver.Unplaced, solver.UnplacedPool, solver.FitsWith, solver.PoolUse,
                 solver.RolloutEngines, solver.Breakdown, solver.MemoryEstimate, solver.MemoryAnswer, solver.GpuMap,
                 solver.Calibration, solver.MemoryModel, solver.TablesVerdict, solver.SourceCell, solver.Setting,
                 solver.Weights, solver.Fleet)
    assert [f"{kind.__name__}.{field}" for kind in described for field in kind.model_fields
            if f"`{field}`" not in page] == []
