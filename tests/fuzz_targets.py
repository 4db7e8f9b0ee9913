"""Fuzz targets shared by the test suite (bounded) and benchmarks/fuzz.py (long runs).

Each target takes hypothesis-drawn input and checks the contract: every run of the command ends with
exit status 0, 1 or 2 (2 with a one-line message and no traceback), and every loader either loads or
refuses with its own one-line error, whatever the input.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from solver.api import map_plans
from solver.cli import main
from solver.tables import (
    QueryError,
    TableError,
    Undecided,
    load_catalog,
    load_fleet,
    load_gpu_type,
    load_model_config,
    shipped_tables_directory,
)
from solver.trinity import ConfigError, load_config_mapping, read_trinity_config

CATALOG = load_catalog()
WORDS = ["--model", "--gpu", "--gpus", "--len", "--maximize", "--minimize", "--exact", "--sp", "--env",
         "--no-env", "--offload", "--no-offload", "--top", "--json", "--explain", "--estimate", "--no-estimate",
         "--margin", "--host-ram", "--node-gpus", "--emit", "--rollout-gpus", "--time-limit", "--workers",
         "--gpu-memory", "--token-budget", "auto", "default", "--cells", "64GB", "65536MiB", "64GiB", "mine",
         "3GiB", "8GiB", "1025MiB", "512GB", "--model-config", "--train-batch-size", "256",
         "tables", "memory", "map", "--check", "len", "gpus", "trinity", "32B", "llama-3.1-70b", "4B", "8B",
         "qwen3-14b", "Qwen2.5-7B", "a100",
         "h20", "h100", "b200", "0", "1", "2", "3", "4", "6", "8", "16", "-1", "4096", "32768", "32k", "131072",
         "99999999999999999999", "1e9", "nan", "0.5", "", " ", "ü", "🚀", "--", "-", "x" * 300]
MARKUP = ["p[/]", "[bold]x", ":smile:", "${oc.env:UNSET}", "a\u0000b"]
"""Strings that mean something to rich, OmegaConf or C."""
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20))
TREES = st.recursive(SCALARS | st.sampled_from(MARKUP), lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.sampled_from(["pools", "jobs", "name", "gpu", "model", "nodes", "gpus_per_node", "host_ram_gb", "max_model_len",
                     "at_least", "rollout_gpus", "priority", "pool", "model_path", "cluster", "trainer", "explorer",
                     "model_config", "gpu_memory_gb", "gpu_memory_mib", "engine", "fsdp_config", "param_offload",
                     "node_num", "gpu_per_node", "rollout_model", "engine_num", "ulysses_sequence_parallel_size",
                     "trainer_config", "actor_rollout_ref", "actor", "ref", "use_dynamic_bsz", "offload_policy",
                     "log_prob_use_dynamic_bsz", "ppo_max_token_len_per_gpu", "log_prob_max_token_len_per_gpu",
                     "data_parallel_size", "max_prompt_tokens", "max_response_tokens", "rope_scaling", "factor",
                     "engine_type", "tinker", "enable", "trainer_type", "auxiliary_models", "buffer", "batch_size",
                     "train_batch_size", "algorithm", "repeat_times", "enable_gradient_checkpointing", "x"])
    | st.text(max_size=8), inner, max_size=5), max_leaves=25)
ALIAS_BOMB = "".join(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9))
CRAFTED = [
    "? [a, b]\n: 1\n",  # a key that is a list: ruamel reads it, PyYAML refuses it
    "xx: &a [1]\nyy: *a\nzz: &a [2]\n",  # an anchor given twice
    "a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + ALIAS_BOMB + "pools: [{name: *a8}]\n",  # nested aliases
    "trainer:\n  ulysses_sequence_parallel_size: 99999999999999999999999\n",
    "cluster:\n  node_num: 99999999999999999\n  gpu_per_node: 8\n",
    "model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: &len 65536\nexplorer:\n  rollout_model:\n"
    "    max_model_len: *len\n",
    "pools: [{name: 'p[/]', gpu: a100, nodes: 1, gpus_per_node: 8}]\njobs: [{name: j, model: 4B, max_model_len: 4e3}]\n",
    "pools: [{name: p, gpu: a100, nodes: 2, gpus_per_node: 8, host_ram_gb: 300}]\n"
    "jobs: [{name: a, model: 14B, max_model_len: 61440}, {name: b, model: 8B, max_model_len: 65536}]\n",  # host memory binds
    "pools: [{name: p, gpu: a100, nodes: 1, gpus_per_node: 8, host_ram_gb: 1e400}]\njobs: [{name: j, model: 4B, "
    "max_model_len: 4096}]\n",
    ("pools: [{name: p, gpu: mine, nodes: 1, gpus_per_node: 8, gpu_memory_gb: 64}]\njobs: [{name: j, model: 4B, "
     "max_model_len: 32k}, {name: k, model_config: ., max_model_len: {at_least: 8k}}]\n"),  # new fields
    ("trainer:\n  trainer_strategy: fsdp2\n  trainer_config:\n    actor_rollout_ref:\n      actor: {engine: "
     "{param_offload: true}, fsdp_config: null}\n"),
    ("model: {model_path: Qwen/Qwen3-4B, max_model_len: 102400}\ncluster: {node_num: 1, gpu_per_node: 6}\n"
     "trainer:\n  offload_policy: false\n  trainer_config:\n    actor_rollout_ref:\n"
     "      ref: {log_prob_use_dynamic_bsz: false, log_prob_max_token_len_per_gpu: 204800}\n"
     "      actor: {use_dynamic_bsz: false, fsdp_config: &fs {offload_policy: false}}\n"
     "      model: {enable_gradient_checkpointing: 'off'}\n"),  # role keys, anchors, checkpointing off
    ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 2, gpu_per_node: 8}\n"
     "explorer:\n  rollout_model: {engine_type: tinker}\n  auxiliary_models: [{engine_type: external}, "
     "{engine_num: 1, tensor_parallel_size: 2}]\ntrainer: {offload_policy: true, trainer_config: {actor_rollout_ref: "
     "{actor: {fsdp_config: {offload_policy: false}}}}}\n"),  # remote engines; offload levels that disagree
    ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
     "buffer: {batch_size: 99999999999, train_batch_size: 0}\nalgorithm: {repeat_times: 99999999}\n"
     "trainer: {ulysses_sequence_parallel_size: 2}\n"),  # a train batch past the bound, derived
    ("pools: [{name: p, gpu: a100, nodes: 1, gpus_per_node: 8}]\njobs: [{name: j, model: 8B, max_model_len: 32768, "
     "train_batch_size: 7, rollout_gpus: 1}]\n"),  # a batch only one data-parallel rank divides
]
"""YAML that a random tree cannot give: list keys, anchors, aliases, huge numbers in the right places."""
DOCUMENTS = st.builds(lambda text, tail: text + tail,
                      st.one_of(TREES.map(lambda tree: yaml.safe_dump(tree, allow_unicode=True)),
                                st.sampled_from(CRAFTED)),
                      st.sampled_from(["", *CRAFTED]))
"""YAML documents: random trees, crafted texts, and either with a crafted text after it."""
ARGVS = st.one_of(
    st.lists(st.sampled_from(WORDS), max_size=8),
    st.builds(lambda model, length, extra: ["--model", model, "--len", length, *extra],
              st.sampled_from(["4B", "8B", "0.6b", "qwen3-14b", "Qwen2.5-7B", "Llama-3.1-8B", "32B", "9B", "8B-Base",
                               "Qwen2.5-7B-Instruct"]),
              st.sampled_from(["8192", "32k", "65536", "131072", "0", "200000"]),
              st.lists(st.sampled_from(WORDS), max_size=5)),
)
"""Command lines: words at random, and planner queries with random extra flags (more of them get solved)."""
LORA_TARGETS = ["q_proj,v_proj", "all-linear", " all-linear ", r".*\.(q_proj|v_proj)", "experts", ".*q_norm", "(",
                "q_proj,,v_proj", ".*mlp.*", r".*\.w1", "lm_head", r".*layers\.40\..*", "*", "", " ", "ü", "p[/]"]
"""LoRA targets and exclusions (``--lora-targets``, ``--lora-exclude``): names, regexes, a module all-linear leaves
out, one past the model's layers, no regex at all, nothing."""
RELEASES = ["0.5", "0.5.0", "0.5.1", "0.5.2", "0.6", "0.6.0", "v0.5.2", "0.7", "0.4.2", "latest", ""]
"""Trinity releases (``--trinity-version``): those rft-solver knows, a tag, and others."""
MAP_WORDS = ["--gpu", "--model", "--gpus-up-to", "--budgets", "--by", "len", "model", "--json", "--lora-rank",
             "--lora-targets", "--lora-exclude", "--reference", "--no-reference", "--critic", "none", "resident",
             "offloaded", "reloaded", "gae", "--dpo", "--token-budget", "auto", "default", "--trinity-version",
             "--train-batch-size", "--host-ram", "--node-gpus", "--no-estimate", "--estimate", "--margin",
             "--model-config", "--from-config", "--rollout-gpus", "0", "1", "2", "4", "8", "16", "-1", "64",
             "1,2", "2,1", "1,,2", "0.6B", "8B", "4B,8B", "h100", "a100,h100", "mine", "4096", "32k", "nan",
             *LORA_TARGETS, *RELEASES]
"""``solve map``'s words: its options, their values and others' (with the targets and releases above)."""
MAP_FLAGS = {"--lora-rank": st.sampled_from(["8", "64", "0"]), "--lora-targets": st.sampled_from(LORA_TARGETS),
             "--lora-exclude": st.sampled_from(LORA_TARGETS), "--trinity-version": st.sampled_from(RELEASES),
             "--critic": st.sampled_from(["none", "resident", "offloaded", "reloaded", "gae"]),
             "--token-budget": st.sampled_from(["auto", "default", "4096", "1", "16777217"]),
             "--by": st.sampled_from(["len", "model"]), "--dpo": st.none(), "--no-reference": st.none(),
             "--no-estimate": st.none(), "--json": st.none()}
"""``solve map``'s options (each given once at most) with values that mean something to them (None: a switch)."""
MAP_ARGVS = st.one_of(
    st.lists(st.sampled_from(MAP_WORDS), max_size=8).map(lambda words: ["map", "--gpu", "h100", "--model", "0.6B",
                                                                        "--budgets", "1,2", *words]),
    st.builds(lambda gpu, model, budgets, flags, extra: ["map", "--gpu", gpu, "--model", model, "--budgets", budgets,
                                                         *[word for flag, value in flags.items()
                                                           for word in (flag, value) if word is not None], *extra],
              st.sampled_from(["h100", "a100", "l4", "mi300x"]), st.sampled_from(["0.6B", "4B", "8B", "0.6B,8B"]),
              st.sampled_from(["1", "2", "1,2", "1,8"]), st.fixed_dictionaries({}, optional=MAP_FLAGS),
              st.lists(st.sampled_from(MAP_WORDS), max_size=1)),
)
"""``solve map`` command lines on one GPU type and small budgets (each solves in well under a second): words at random
after them, and the map's options (`MAP_FLAGS`) with a random word or none after them."""
MAP_OPTIONS: dict[str, SearchStrategy[Any]] = {
    "lora_targets": st.sampled_from(LORA_TARGETS),
    "lora_exclude_modules": st.sampled_from(LORA_TARGETS),
    "lora_rank": st.sampled_from([0, 8, 64]),
    "reference_model": st.sampled_from([None, True, False]),
    "dpo": st.booleans(),
    "critic": st.sampled_from(["none", "resident", "offloaded", "reloaded", "gae"]),
    "token_budget": st.sampled_from(["default", "auto", 1, 4096, 65536, 2**24, 2**24 + 1]),
    "trinity_version": st.sampled_from(RELEASES),
    "estimate": st.sampled_from(["auto", "only", "never"]),
    "by": st.sampled_from(["model", "len"]),
}
"""`solver.map_plans`' keywords for the map's newer options, with values of the kinds it takes."""
MAP_CALLS = st.tuples(st.sampled_from(["0.6B", "8B", ["0.6B", "Qwen3-30B-A3B"], None]),
                      st.fixed_dictionaries({}, optional=MAP_OPTIONS)
                      | st.fixed_dictionaries({}, optional={key: values | SCALARS
                                                            for key, values in MAP_OPTIONS.items()}))
"""`solver.map_plans` calls: the rows (a model, two, or those of the GPU type's tables) and keywords of
`MAP_OPTIONS`, with values of the kinds it takes, or with any value (None, numbers, text) too."""


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """Run ``solve`` in-process; the contract: status 0, 1 or 2; for 2, one error line and no traceback."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            subcommand = argv[:1] in (["tables"], ["memory"], ["cluster"])
            timed = ["map", "--time-limit", "1", *argv[1:]] if argv[:1] == ["map"] else ["--time-limit", "2", *argv]
            status = main(argv if subcommand else timed)
        except SystemExit as exit_:
            status = 1 if isinstance(exit_.code, str) else int(exit_.code or 0)  # as the interpreter exits
    assert status in (0, 1, 2), (argv, status)
    assert "Traceback" not in err.getvalue(), argv
    if status == 2:
        errors = [line for line in err.getvalue().splitlines() if not line.startswith("usage:")]
        assert len(errors) == 1 and ": error: " in errors[0], (argv, err.getvalue())
    return status, out.getvalue(), err.getvalue()


def map_call(rows: str | list[str] | None, keywords: dict[str, Any]) -> None:
    """`solver.map_plans` with `keywords` on one GPU type and budgets 1 and 2 (a model or two, or by length one) maps,
    or refuses with a one-line `QueryError`, or says a cell's solve ran out of time (`Undecided`); nothing else."""
    try:
        maps = map_plans(rows if keywords.get("by") != "len" or rows is None else "0.6B", gpu="h100", budgets=[1, 2],
                         time_limit_s=1.0, **keywords)
    except QueryError as error:
        assert "\n" not in str(error)
        return
    except Undecided:
        return
    assert len(maps) == 1 and maps[0].budget_gpus == (1, 2)


def mutate(text: str, edits: list[tuple[int, int, str]]) -> str:
    """Apply (position, length to delete, insertion) edits to `text`."""
    for position, length, insertion in edits:
        at = position % (len(text) + 1)
        text = text[:at] + insertion + text[at + length:]
    return text


EDITS = st.lists(st.tuples(st.integers(min_value=0, max_value=40_000), st.integers(min_value=0, max_value=40),
                           st.sampled_from(["", "-", ":", " + ", "SP=3", "Env", "\n", "  ", "{", "]", "0", "-4096",
                                            "!!python/object:os.system", "&a *a", "ü", "\t", "'", '"', "#"])),
                 min_size=1, max_size=6)
TABLE_TEXT = (shipped_tables_directory() / "feasibility" / "a100-80gb.yaml").read_text(encoding="utf-8")


def load_mutated_table(edits: list[tuple[int, int, str]], folder: Path) -> None:
    """A mutated GPU table file loads, or is refused with a `TableError`; nothing else."""
    path = folder / "table.yaml"
    path.write_text(mutate(TABLE_TEXT, edits), encoding="utf-8")
    try:
        load_gpu_type(path, CATALOG.models)
    except TableError as error:
        assert "\n" not in str(error)


CONFIGS = [json.loads(path.read_text(encoding="utf-8"))
           for path in sorted((Path(__file__).parent / "data" / "hf-configs").glob("*.json"))]
"""Published Hugging Face config.json files (tests/data/hf-configs), to change and mutate."""
CONFIG_KEYS = ["model_type", "architectures", "_name_or_path", "hidden_size", "num_hidden_layers",
               "num_attention_heads", "num_key_value_heads", "head_dim", "intermediate_size", "vocab_size",
               "tie_word_embeddings", "max_position_embeddings", "rope_scaling", "rope_parameters",
               "final_logit_softcapping", "num_experts", "vision_config", "text_config", "kv_lora_rank"]
CONFIG_VALUES = st.recursive(SCALARS | st.sampled_from(["qwen", "qwen3", "llama", "exaone4", "nemotron_h", "yarn",
                                                        "llama3", "default", "Qwen3ForCausalLM"]),
                             lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                                 st.sampled_from(["rope_type", "type", "factor", "original_max_position_embeddings",
                                                  "rope_theta", "full_attention"]), inner, max_size=3),
                             max_leaves=6)
CONFIG_CHANGES = st.dictionaries(st.sampled_from(CONFIG_KEYS), CONFIG_VALUES | st.just(None), max_size=4)
CONFIG_EDITS = st.lists(st.tuples(st.integers(min_value=0, max_value=10_000), st.integers(min_value=0, max_value=30),
                                  st.sampled_from(["", ",", ":", "{", "}", '"', "-1", "1e400", "NaN", "Infinity",
                                                   "null", "ü", "\n", "\\u0000", "\\n"])), max_size=2)


def load_changed_model_config(which: int, changes: dict, edits: list[tuple[int, int, str]], folder: Path) -> None:
    """A published config.json with keys changed (a value of None drops the key), then maybe mutated as text,
    loads or is refused with a `TableError`; through ``solve memory`` and the planner, it ends with 0, 1 or 2."""
    config = dict(CONFIGS[which % len(CONFIGS)])
    for key, value in changes.items():
        if value is None:
            config.pop(key, None)
        else:
            config[key] = value
    path = folder / "config.json"
    path.write_text(mutate(json.dumps(config, indent=2), edits), encoding="utf-8")
    try:
        load_model_config(path)
    except TableError as error:
        assert "\n" not in str(error)
    run_cli(["memory", "--model-config", str(path), "--gpu", "h100", "--gpus", "8", "--len", "32k", "--sp", "2"])
    run_cli(["--model-config", str(path), "--gpu", "h100", "--gpus", "8", "--maximize", "len"])


def load_cluster_document(text: str, folder: Path) -> None:
    """Any YAML document as a cluster file loads, or is refused with a `TableError`; through the
    command, it ends with 0, 1 or 2."""
    path = folder / "fleet.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        load_fleet(path, CATALOG)
    except TableError as error:
        assert "\n" not in str(error)
    run_cli(["cluster", str(path), "--time-limit", "1"])


def read_trinity_document(text: str, folder: Path) -> None:
    """Any YAML document as a Trinity config reads, or is refused with a `ConfigError`; through the
    command with --write, the patched copy is whole YAML (as ruamel, which reads configs, reads it) or
    not there at all."""
    try:
        read_trinity_config(text, "trinity.yaml", {})
    except ConfigError as error:
        assert "\n" not in str(error)
    config, patched = folder / "trinity.yaml", folder / "patched.yaml"
    config.write_text(text, encoding="utf-8")
    patched.unlink(missing_ok=True)
    _said_once(run_cli(["--from-config", str(config), "--gpu", "a100", "--len", "8192", "--write", str(patched)]))
    if patched.exists():
        load_config_mapping(patched.read_text(encoding="utf-8"), patched.name)
    _said_once(run_cli(["--from-config", str(config), "--gpu", "a100", "--maximize", "len", "--emit", "trinity"]))


def _said_once(result: tuple[int, str, str]) -> None:
    """A verdict on a config (one GPU type: one answer) names each of its problems once."""
    problems = [line for line in result[1].splitlines() if line.startswith(("  but: ", "  refused: "))]
    assert len(problems) == len(set(problems)), result[1]


TARGETS: dict[str, tuple[SearchStrategy[Any], Callable[[Any, Path], object]]] = {
    "command lines": (ARGVS, lambda argv, folder: run_cli(argv)),
    "map command lines": (MAP_ARGVS, lambda argv, folder: run_cli(argv)),
    "map_plans keywords": (MAP_CALLS, lambda drawn, folder: map_call(*drawn)),
    "mutated table files": (EDITS, load_mutated_table),
    "random cluster files": (DOCUMENTS, load_cluster_document),
    "random Trinity configs": (DOCUMENTS, read_trinity_document),
    "changed model configs": (st.tuples(st.integers(min_value=0, max_value=99), CONFIG_CHANGES, CONFIG_EDITS),
                              lambda drawn, folder: load_changed_model_config(*drawn, folder)),
}
"""Every target by name: the inputs it draws, and the check of one input (given a folder for its files)."""
