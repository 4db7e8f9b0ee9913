"""The docs' claims that drift as a class (session 67's review of README.md and docs/): the options the pages name.
(The values their Python examples show in comments: test_api.py.)"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from solver.cli.calibrate import build_calibrate_parser
from solver.cli.cluster import build_cluster_parser
from solver.cli.examples import build_examples_parser
from solver.cli.maps import build_map_parser
from solver.cli.memory import build_memory_parser
from solver.cli.planner import build_parser
from solver.cli.tables import build_tables_parser

ROOT = Path(__file__).resolve().parent.parent
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))


SHOWN_REFUSED = ("--maximise", "--max-model-len", "--max", "--num-gpus", "--gpus-per-node", "--nproc-per-node",
                 "--trinity", "--vram", "--cpu-ram", "--format", "--lenght", "--length", "--nodes", "--node",
                 "--memory", "--cluster", "--no-json", "--widen", "--without-tables", "--nojson", "--withouttables",
                 "--nowiden", "--noenv", "--threads", "--num-workers", "--ppo", "--lora", "--tp",
                 "--tensor-parallel-size", "--tensor-model-parallel-size", "--output", "--release",
                 "--max-token-len-per-gpu", "--param-offload", "--offload-policy", "--expandable-segments",
                 "--no-color", "--color", "--output-format", "--yaml", "--algorithm", "--sft", "--grpo", "--lora-alpha", "--seed",
                 "--dp", "--pp", "--cp", "--zero3", "--fsdp", "--deepspeed", "--maximize-len", "--min-gpus",
                 "--fewest-gpus", "--longest", "--max-seq-length", "--seq-length", "--cutoff-len", "--mem",
                 "--host-memory", "--n-gpus-per-node", "--rollout-n", "--repeat-times", "--micro-batch-size",
                 "--ppo-micro-batch-size-per-gpu", "--max-response-length", "--max-prompt-tokens", "--strategy",
                 "--use-dynamic-bsz", "--gradient-checkpointing", "--use-remove-padding", "--offload-param",
                 "--offload-optimizer", "--verl-version", "--ep", "--expert-model-parallel-size", "--documented",
                 "--tables-only", "--evidence", "--dtype", "--torch-dtype", "--bf16", "--budget-gpus",
                 "--reference-model", "--lora-exclude-modules", "--objective", "--critic-model", "--critic-model-path",
                 "--num-machines", "--offload-optimizer-device", "--offload-param-device", "--num-processes",
                 "--nproc", "--gradient-accumulation-steps", "--gpu-memory-utilization", "--node-interconnect",
                 "--network", "--pool")
"""The options docs/cli.md names as what `solve` refuses, with a guess (another tool's names, slips, a flag's
opposite)."""

OTHER_TOOLS = {"--clear": "python3 -m venv", "--strict": "mypy", "--head": "ray start", "--nnodes": "torchrun"}
"""The options the pages name of other tools than rft-solver's commands and benchmarks."""


def options_named(page: Path) -> set[str]:
    """The ``--options`` `page` names, but in the outputs it shows (``$ solve ...`` blocks, which
    tests/shown_output.py keeps true, wrapping help lines at hyphens) and in links to its ``#--heading`` anchors."""
    text = re.sub(r"```[a-z]*\n\$ .*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    text = re.sub(r"\(#--[a-z-]+\)", "", text)
    return set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text))


def test_every_option_the_pages_name_is_taken_by_a_command_or_shown_refused(cli: Callable[..., tuple[int, str, str]]):
    parsers = (build_parser, build_tables_parser, build_map_parser, build_memory_parser, build_calibrate_parser,
               build_cluster_parser, build_examples_parser)
    taken = {option for build in parsers for action in build()._actions for option in action.option_strings}
    benchmarks = {option for script in (ROOT / "benchmarks").glob("*.py")
                  for option in re.findall(r"add_argument\(\"(--[a-z-]+)\"", script.read_text(encoding="utf-8"))}
    # A benchmark's option is named in README.md's list of them alone (docs/cluster.md once named a --seed that
    # solve cluster lacks, which benchmarks/cluster.py's --seed hid).
    assert [f"{page.name}: {option}" for page in PAGES for option in sorted(options_named(page))
            if option not in taken | set(OTHER_TOOLS) | set(SHOWN_REFUSED)
            | (benchmarks if page.name == "README.md" else set())] == []
    for option in SHOWN_REFUSED:
        status, _, err = cli(option)
        assert status == 2 and f"{option} " in err.splitlines()[-1] + " ", (option, err)
