"""The docs' claims on session 77's changes, checked against real runs (session 77's docstruth13): docs/memory.md's LoRA
adapter counts per expert layout as ``solve memory`` gives them, with ``--trinity-version``; ``solve --help``'s
``--trinity-version``; trinity.md's ``lora-targets-assumed``, said whether or not a type rft-solver has read takes the
regex; api.md's `memory_text`, whose plan call carries the release."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from option_reference import option_reference
from test_peftnames_s77 import _checked

import solver
from solver.tables.peft_match import peft_target_refusal
from solver.tables.peft_names import PEFT_NAMES_BY_MODEL_TYPE

Cli = Callable[..., tuple[int, str, str]]

CONFIGS = Path(__file__).parent / "data" / "hf-configs"


@pytest.mark.parametrize(("model", "version", "adapter"), [
    # docs/memory.md's LoRA: at rank 32, 0.5.1's transformers 4 (separate experts) against transformers 5's
    ("Mixtral-8x7B-v0.1", "0.5.1", 484_450_304), ("Mixtral-8x7B-v0.1", None, 719_331_328),
    ("Qwen3-30B-A3B", "0.5.1", 1_691_025_408), ("Qwen3-30B-A3B", "0.6", 1_993_015_296),
    # 0.5 takes either layout and counts the larger adapter (release05a): Qwen1.5-MoE's separate experts' here
    ("Qwen1.5-MoE-A2.7B", "v0.5.1", 511_227_648), ("Qwen1.5-MoE-A2.7B", "0.5", 511_227_648),
    ("Qwen1.5-MoE-A2.7B", "0.6", 31_851_264),
])
def test_solve_memory_gives_the_adapter_of_the_release_it_counts(cli: Cli, model: str, version: str | None,
                                                                 adapter: int) -> None:
    """``lora_parameters`` and the text's LoRA row are the adapter whose states the breakdown counts, its experts laid
    out as the release holds them (they gave transformers 5's whatever ``--trinity-version`` said)."""
    common = ("memory", "--model-config", str(CONFIGS / f"{model}.json"), "--gpu", "a100", "--gpus", "32", "--len",
              "8192", "--lora-rank", "32", *(("--trinity-version", version) if version else ()))
    status, out, _ = cli(*common, "--json")
    assert (status, json.loads(out)["lora_parameters"]) == (0, adapter)
    status, out, _ = cli(*common)
    assert f"{adapter:,} adapter parameters on every linear layer" in " ".join(out.split())


def _host_and_memory(cli: Cli, *options: str) -> tuple[float, float]:
    status, out, _ = cli("--model-config", str(CONFIGS / "Mixtral-8x7B-v0.1.json"), "--gpu", "a100", "--gpus", "32",
                         "--exact", "--len", "8192", "--host-ram", "2000", *options, "--json")
    plan = json.loads(out)[0]["plans"][0]
    assert status == 0
    return plan["host_memory_gb"], plan["memory_gb"]


def test_solves_trinity_version_counts_the_memory_as_its_help_says(cli: Cli) -> None:
    """--trinity-version, as docs/cli.md's option reference says (``solve --help`` names the releases it takes): 0.5's
    reference shards in bf16, 0.6's and the default's in fp32, 0.5.1's routed experts each sharded over every GPU, the
    other 0.5 releases' the larger of that and the fused tensors, each as verl 0.7 places it (Mixtral on 32 A100s: 46.6
    GiB a GPU without Offload under every 0.5 release, where 0.6's whole experts need Offload: fusedpad, s80). The host
    memory counts the fp32 model, 174.0 GiB (46.70B parameters), on the ranks that load it (hostload, s84): rank 0 alone
    under 0.5.1, 198.8 GiB with the bf16 reference's shards; every rank of the node of 8 under 0.5 without its patch
    (the most its releases load, 0.5.2's), 7 x 174.0 more, 1416.7; and on A100s (compute capability 8.0) under 0.6, or
    with no release named, every rank too: the load, 7 x 174.0 over the 561.0 that was below the training need, 1778.9,
    now the peak over 667.6."""
    counted = {version: _host_and_memory(cli, *(("--trinity-version", version) if version else ()))
               for version in (None, "0.6", "0.5", "0.5.1")}
    assert counted == {None: (1778.9, 24.22), "0.6": (1778.9, 24.22), "0.5": (1416.7, 46.6),
                       "0.5.1": (198.8, 46.6)}
    help_text = " ".join(cli("--help")[1].split())
    assert "and count as: 0.5, 0.6 or one of theirs, 0.5.1 (default: write both, count 0.6's)" in help_text
    assert ("Every command counts the memory as the release holds it: 0.5 the reference model's host shards in bf16, "
            "0.6 (and by default) in fp32; 0.5.1 a mixture of experts' routed experts each sharded over every GPU, by "
            "its transformers 4, the other 0.5 releases the larger of that and transformers 5's fused tensors, each "
            "as verl 0.7 places it") in option_reference()


def test_a_regex_no_read_type_takes_is_said_on_assumed_names_not_refused(cli: Cli, tmp_path: Path) -> None:
    """docs/trinity.md's ``lora-targets-assumed``: InternLM2's own ``.*wqkv``, which no type rft-solver has read takes,
    is said on the assumed names, not refused (the page said the line came where a read type takes it)."""
    assert [kind for kind, names in PEFT_NAMES_BY_MODEL_TYPE.items()
            if peft_target_refusal(".*wqkv", None, names) is None] == []
    config = json.loads((CONFIGS / "internlm2-7b.json").read_text(encoding="utf-8"))
    status, current = _checked(cli, tmp_path, config, ".*wqkv")
    assert current["refused"] is False and "lora-targets-assumed" in current["config_problem_codes"]
    # padded88: --check exits 1 all the same, for InternLM2's padded micro-batches that Trinity's default dynamic
    # batching leaves unbounded, not for the regex
    assert (status, current["trains"], "micro-batch-unbounded" in current["config_problem_codes"]) == (1, False, True)


def test_memory_texts_plan_call_carries_the_release(cli: Cli) -> None:
    """docs/api.md's `memory_text`: the ``solver.plan(...)`` call it prints where the setting does not train carries
    ``trinity_version`` as given, as the command's planner line carries ``--trinity-version``."""
    model = solver.load_model_config(CONFIGS / "Mixtral-8x7B-v0.1.json")
    catalog = solver.load_catalog().with_model(model)
    answer = solver.memory_answer(model.name, "a100", 8, 8192, catalog=catalog, trinity_version="v0.5.1")
    assert ('  solver.plan("Mixtral-8x7B-v0.1", gpu="A100-80GB", budget_gpus=8, max_model_len=8192, '
            'trinity_version="v0.5.1", catalog=catalog)') in solver.memory_text(answer, catalog).splitlines()
    out = cli("memory", "--model-config", str(CONFIGS / "Mixtral-8x7B-v0.1.json"), "--gpu", "a100", "--gpus", "8",
              "--len", "8192", "--trinity-version", "v0.5.1")[1]
    assert out.splitlines()[-1].endswith("--gpu a100 --gpus 8 --len 8192 --trinity-version v0.5.1")


def test_an_unknown_mixture_of_experts_adapter_is_counted_on_qwen3_moes_layers_without_its_experts(
        cli: Cli, tmp_path: Path) -> None:
    """docs/memory.md's LoRA: an unknown type's mixture of experts is counted on Qwen3-MoE's names (assumed), without
    the routed experts PEFT converts for the types it knows alone: Qwen3-30B-A3B's shape as ``foo_moe``, 30,081,024,
    its attention and router's (each expert's, 1,691,025,408 in all, under 0.5.1's transformers 4)."""
    config = json.loads((CONFIGS / "Qwen3-30B-A3B.json").read_text(encoding="utf-8"))
    (tmp_path / "config.json").write_text(json.dumps({**config, "model_type": "foo_moe"}), encoding="utf-8")
    counted = []
    for version in ((), ("--trinity-version", "0.5.1")):
        status, out, _ = cli("memory", "--model-config", str(tmp_path), "--gpu", "a100", "--gpus", "8", "--len",
                             "8192", "--lora-rank", "32", *version, "--json")
        counted.append((status, json.loads(out)["lora_parameters"]))
    assert counted == [(0, 30_081_024), (0, 1_691_025_408)]


def _current_table() -> list[dict[str, str]]:
    """benchmarks/README.md's table of the cluster benchmark's ``--current`` runs, a dict per row by its header."""
    text = (Path(__file__).parent.parent / "benchmarks" / "README.md").read_text(encoding="utf-8")
    lines = text[text.index("| GPUs | jobs | running |"):].splitlines()
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = [line for line in lines[2:] if line.startswith("|")][:16]
    return [dict(zip(header, (cell.strip() for cell in row.strip("|").split("|")), strict=True)) for row in rows]


def test_the_current_benchmarks_words_are_its_tables_figures() -> None:
    """benchmarks/README.md's words on the ``--current`` table (it said 3 to 12 priority above the greedy start, and
    every 1 and 3 s run below it): the running jobs each stay, move or stop; 17 to 292 jobs cut short at 1 and 3 s,
    below the greedy start but at 3 s on 56 and 120 GPUs; none cut short from 10 s, 3 to 13 above it; the first stage
    ends at most 0.8 s after its best priority in a 10 or 30 s run."""
    table = _current_table()
    assert all(sum(map(int, row["stay/move/stop"].split("/"))) == int(row["running"]) for row in table)
    short = [row for row in table if row["limit s"] in ("1", "3")]
    long = [row for row in table if row["limit s"] in ("10", "30")]
    cut = [int(row["cut short"]) for row in short]
    assert (min(cut), max(cut), {int(row["cut short"]) for row in long}) == (17, 292, {0})
    above = [(row["GPUs"], row["limit s"]) for row in short if int(row["priority"]) > int(row["greedy priority"])]
    assert above == [("56", "3"), ("120", "3")]
    beaten = [int(row["priority"]) - int(row["greedy priority"]) for row in long]
    assert (min(beaten), max(beaten)) == (3, 13)
    spent = [float(row["1st stage ends s"]) - float(row["best priority at s"]) for row in long]
    assert max(spent) == pytest.approx(0.8)
    words = " ".join((Path(__file__).parent.parent / "benchmarks" / "README.md").read_text(encoding="utf-8").split())
    assert all(phrase in words for phrase in (
        "cuts the ways of 17 to 292 jobs short", "but at 3 s on 56 and 120 GPUs, 75 and 186 against 72 and 185",
        "beats the greedy start by 3 to 13 priority", "spends up to 0.8 s of a 10 or 30 s run"))
