"""Trinity configs: the emitted fragment (golden files), reading a user's config back, patching it in place.

The golden files are tests/data/trinity/golden-*.yaml, compared byte for byte. After an intended change
to the fragment, regenerate them with

    UPDATE_GOLDEN=1 .venv/bin/pytest -q tests/test_trinity.py

and review the diff of tests/data/trinity/ before committing.
"""

from __future__ import annotations

import difflib
import io
import json
import os
import re
import signal
import threading
import time
import warnings
from functools import cache, partial
from pathlib import Path
from typing import Any

import pytest
import yaml
from command_words import (
    check_trinity_config,
    make_query,
    plan_fragment,
    read_trinity_config,
    trinity_config_problems,
    trinity_fragment,
)
from conftest import PADDED_051
from ruamel.yaml import YAML

from solver.query import ACTOR_ROLLOUT_REF, ConfigProblemCode, VllmRollout
from solver.render import apply_lines
from solver.results import Plan, rocm_env_caution, yarn_beyond_words
from solver.rules import API_OPTIONS, COMMAND_OPTIONS, SourceCell, token_budget
from solver.solve import plan as solve
from solver.tables import MAX_TRAIN_BATCH, Catalog, Model, QueryError, TrinityVersion, brief, load_catalog
from solver.trinity import (
    TRINITY_06_OFFLOAD,
    ConfigError,
    EngineError,
    TrinityConfig,
    anchored_keys,
    check_flags,
    config_keys_changed,
    kept_interpolations,
    load_config_mapping,
    patch_trinity_config,
    reader,
)
from solver.trinity.interpolation import ConfigValues, decode_scalar
from solver.trinity.keys import (
    GRADIENT_CHECKPOINTING_KEY,
    IGNORED_SECTION,
    OFFLOAD_FLAGS,
    READ_KEYS,
    ROLES,
    TRINITY_06_TRAINER_KEYS,
    offload_path,
    yaml_scalar,
)
from solver.trinity.plan_keys import PlanKey, keys_for_plan, trinity_06_keys_comment

DATA = Path(__file__).parent / "data" / "trinity"
USER_CONFIG = DATA / "user-config.yaml"
NO_THETA = "model.rope_scaling has no rope_theta: Trinity 0.6's trainer on verl before 0.8 sets it as"
"""The head of the ``but:`` line on a mapping without its own ``rope_theta`` where no release is named (ropecheck,
s79: Trinity 0.6's trainer fails on it, 0.5's builds it)."""
INT_FIELD_REFUSES = "every Trinity release refuses the config as it loads it (its typed config's int field)"
TRAINER_SP_SET_TO_1 = (": Trinity sets it to 1 with a warning as it loads the config (config_validator.py:1271 in "
                       "0.6.0, :1174 in 0.5.2), and the verdict is at SP 1")
"""Why a count that is no whole number is refused (OmegaConf 2.3.0's int field; session 67)."""


@cache
def catalog() -> Catalog:
    return load_catalog()


def _best(**query: Any) -> Plan:
    (answer,) = solve(make_query(catalog(), gpu="a100", **query), catalog())
    assert answer.plans, answer.reason
    return answer.plans[0]


@cache
def vanilla_plan() -> Plan:
    """Qwen3-4B on exactly 4 A100s at 8192: vanilla, no YaRN."""
    return _best(model="4B", objective="cheapest", budget_gpus=4, exact=True, max_model_len=8192)


@cache
def sp2_plan() -> Plan:
    """Qwen3-4B on exactly 2 A100s at 24576: SP=2 without Offload."""
    return _best(model="4B", objective="cheapest", budget_gpus=2, exact=True, max_model_len=24576)


@cache
def long_plan() -> Plan:
    """The README's main job: Env + Offload + SP=4 on 4 of 6 GPUs at 102400 (YaRN 2.5)."""
    return _best(model="4B", objective="max_len", budget_gpus=6)


def _user_config(plan: Plan) -> str:
    """The user's config (`USER_CONFIG`: one node of 8 GPUs) with as many rollout engines (of one GPU) as leave the
    trainer `plan`'s GPUs, training Qwen3-4B, the model of this module's plans, where it trains Qwen3-0.6B:
    `patch_trinity_config` keeps the cluster and the model, and refuses a plan on other GPUs, or of another model."""
    text = USER_CONFIG.read_text(encoding="utf-8")
    assert "    engine_num: 2\n" in text and "  gpu_per_node: 8\n" in text
    assert "  model_path: ${oc.env:MODEL_PATH,Qwen/Qwen3-0.6B}\n" in text
    return text.replace("    engine_num: 2\n", f"    engine_num: {8 - plan.gpus}\n").replace(
        "Qwen/Qwen3-0.6B}", "Qwen/Qwen3-4B}")


def _safe_load(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(io.StringIO(text))


def _leaves(mapping: Any, path: tuple[str, ...] = ()) -> dict[str, Any]:
    """Every leaf of nested mappings, by its dotted path."""
    if not isinstance(mapping, dict):
        return {".".join(path): mapping}
    return {key: value for name, child in mapping.items() for key, value in _leaves(child, (*path, name)).items()}


@pytest.mark.parametrize("plan_of", [vanilla_plan, sp2_plan, long_plan])
def test_the_apply_lines_set_what_the_fragment_sets(plan_of):
    # The plan's summary (apply) and the Trinity fragment are written apart: the same keys and values.
    plan, model = plan_of(), catalog().model("4B")
    applied = {}
    for line in apply_lines(plan, model):
        if line.startswith(("export ", "#")):  # the shell line, and the comments on lines of their own
            continue
        assert "#" not in line  # no comment after a key: a narrow terminal that wraps it would break it
        key, _, value = line.partition(": ")
        braces = re.search(r"\{([^}]*)\}", key)  # {actor,ref}: each of them
        for named in ([key[:braces.start()] + name.strip() + key[braces.end():] for name in braces.group(1).split(",")]
                      if braces else [key]):
            applied.update({f"{named}.{leaf}": setting for leaf, setting in _leaves(_safe_load(value)).items()}
                           if value.startswith("{") else {named: _safe_load(value)})
    fragment = _leaves(_safe_load(trinity_fragment(plan, model)))
    assert applied == fragment


def _with_model_path(fragment: str, model_path: str = "Qwen/Qwen3-4B") -> str:
    """The fragment as a whole config: users keep their own model.model_path (added under model) and algorithm (GRPO's,
    which trains no critic)."""
    assert "\nmodel:\n" in fragment
    whole = f"\nalgorithm: {{algorithm_type: grpo}}\nmodel:\n  model_path: {model_path}\n"
    return fragment.replace("\nmodel:\n", whole, 1)


# --------------------------------------------------------------------------------------------------
# trinity_fragment


GOLDEN = {
    "golden-vanilla.yaml": lambda: trinity_fragment(vanilla_plan(), catalog().model("4B")),
    "golden-sp2.yaml": lambda: trinity_fragment(sp2_plan(), catalog().model("4B"), gpu="A100-80GB"),
    "golden-env-offload-sp4-yarn.yaml": lambda: trinity_fragment(
        long_plan(), catalog().model("4B"), rollout_gpus=2, gpu="A100-80GB", check=check_flags("A100-80GB")
    ),
}


def test_the_golden_plans_are_the_ones_named() -> None:
    assert (vanilla_plan().setting.label, vanilla_plan().gpus, vanilla_plan().max_model_len) == ("vanilla", 4, 8192)
    assert (sp2_plan().setting.label, sp2_plan().gpus) == ("SP=2", 2)
    long = long_plan()
    assert (long.setting.label, long.gpus, long.unused_gpus, long.max_model_len) == ("Env + Offload + SP=4", 4, 2, 102400)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_fragment_matches_golden_file(name: str) -> None:
    text = GOLDEN[name]()
    path = DATA / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        assert not os.environ.get("CI"), "UPDATE_GOLDEN=1 under CI would compare the files with themselves"
        path.write_bytes(text.encode("utf-8"))
    assert path.exists(), f"no golden file {path}: run with UPDATE_GOLDEN=1 to create it"
    assert text.encode("utf-8") == path.read_bytes(), f"{name} differs; UPDATE_GOLDEN=1 regenerates it"


def test_fragment_is_deterministic() -> None:
    for make in GOLDEN.values():
        assert make() == make()


def test_fragment_content_for_the_long_plan() -> None:
    text = GOLDEN["golden-env-offload-sp4-yarn.yaml"]()
    data = _safe_load(text)
    assert data["model"] == {
        "max_model_len": 102400,
        "rope_scaling": {"rope_type": "yarn", "factor": 2.5, "original_max_position_embeddings": 40960,
                         "rope_theta": 1000000},
    }
    assert data["cluster"] == {"node_num": 1, "gpu_per_node": 6}
    assert data["explorer"] == {"rollout_model": {"engine_num": 2, "tensor_parallel_size": 1}}
    trainer = data["trainer"]
    assert trainer["trainer_strategy"] == "fsdp2"
    assert trainer["ulysses_sequence_parallel_size"] == 4
    assert trainer["max_token_len_per_gpu"] == 51200
    assert trainer["save_hf_checkpoint"] == "never"
    for role in ("actor", "ref"):
        assert trainer["trainer_config"]["actor_rollout_ref"][role]["fsdp_config"] == {
            "param_offload": True,
            "optimizer_offload": True,
            "offload_policy": True,
        }
    header = text.split("\nmodel:\n")[0]
    assert all(line.startswith("#") for line in header.splitlines())
    assert header.splitlines()[:3] == [
        "# Trinity-RFT settings generated by rft-solver for Qwen3-4B",
        "# plan: Env + Offload + SP=4 on 4 A100-80GB trainer GPUs (2 for rollout), max_model_len 102400",
        "# evidence: documented: the A100-80GB table for 4 GPUs says 'Env + Offload + SP=4' at 102400",
    ]
    assert "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in header
    assert "before Ray starts" in header
    assert ("# no Hugging Face weights saved, as in the A100 offload measurements of Trinity-RFT's guide\n"
            "  save_hf_checkpoint: never\n") in text  # an A100 plan: the guide's H20 tables are not its GPU's
    assert "." not in "".join(k for k in data)  # nested mappings, no dotted keys


ENV_ON_ONE_NODE = ["# Env: run this before Ray starts (before `ray start`, or before `trinity run` starts Ray):",
                   "#   export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"]
ENV_ON_SEVERAL_NODES = [
    "# Env: run this on every node of the job before `ray start` there (Ray's workers take the",
    "# environment their node's Ray started with; Trinity passes this variable to none of them):",
    "#   export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
]


def _env_lines(fragment: str) -> list[str]:
    lines = fragment.split("\nmodel:\n")[0].splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith("# Env:"))
    return lines[start:lines.index("#   export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True") + 1]


def test_the_env_export_goes_on_every_node_of_a_job_on_several() -> None:
    # Trinity hands Ray's workers no PYTORCH_CUDA_ALLOC_CONF: each node's workers have what its `ray start` had, so
    # an export on the head node alone leaves the trainer's GPUs on the other nodes without expandable segments.
    plan, model = long_plan(), catalog().model("4B")
    assert _env_lines(trinity_fragment(plan, model, rollout_gpus=2)) == ENV_ON_ONE_NODE
    assert _env_lines(trinity_fragment(plan, model, rollout_gpus=12, nodes=2)) == ENV_ON_SEVERAL_NODES
    sixteen = _best(model="8B", objective="cheapest", budget_gpus=16, exact=True, max_model_len=131072)
    assert sixteen.env and sixteen.gpus == 16
    assert _env_lines(trinity_fragment(sixteen, catalog().model("8B"), node_gpus=8)) == ENV_ON_SEVERAL_NODES
    assert _env_lines(trinity_fragment(sixteen, catalog().model("8B"), node_gpus=16)) == ENV_ON_ONE_NODE
    # The plan's summary says so too, for a trainer past one node and for a trainer and its rollout on several.
    assert apply_lines(sixteen, catalog().model("8B"))[0] == "# on every node of the job before `ray start` there:"
    assert apply_lines(sixteen, catalog().model("8B"), node_gpus=16)[0] == "# before Ray starts:"
    assert apply_lines(plan, model)[0] == "# before Ray starts:"
    assert apply_lines(plan.model_copy(update={"nodes": 2, "rollout_gpus": 12}), model)[0] == (
        "# on every node of the job before `ray start` there:")


def test_a_fragments_cluster_section_decides_whether_env_goes_on_every_node() -> None:
    # With rollout_gpus the fragment writes cluster.node_num, and the Env comment follows it, not node_gpus (which
    # only a fragment without a cluster section reads): 2 nodes of a trainer alone need the export on both, and one
    # node of 20 GPUs one export, though the trainer's 16 are more than node_gpus=8.
    sixteen = _best(model="8B", objective="cheapest", budget_gpus=16, exact=True, max_model_len=131072)
    model = catalog().model("8B")
    assert _env_lines(trinity_fragment(sixteen, model, rollout_gpus=0, nodes=2)) == ENV_ON_SEVERAL_NODES
    assert _env_lines(trinity_fragment(sixteen, model, rollout_gpus=0, nodes=1, node_gpus=8)) == ENV_ON_ONE_NODE
    assert _env_lines(trinity_fragment(sixteen, model, rollout_gpus=4, nodes=1, node_gpus=8)) == ENV_ON_ONE_NODE


def test_fragment_without_env_offload_or_yarn_sets_only_the_basics() -> None:
    data = _safe_load(GOLDEN["golden-vanilla.yaml"]())
    assert data == {
        "model": {"max_model_len": 8192},
        "trainer": {"ulysses_sequence_parallel_size": 1, "max_token_len_per_gpu": 16384},
    }
    assert "PYTORCH_CUDA_ALLOC_CONF" not in GOLDEN["golden-vanilla.yaml"]()


def test_fragment_refuses_a_plan_that_breaks_trinitys_rules() -> None:
    broken = sp2_plan().model_copy(update={"max_token_len_per_gpu": 1024})  # too few tokens per GPU for 24576
    with pytest.raises(RuntimeError, match=r"the Trinity config made for SP=2 breaks Trinity's rules: .*max_token_len"):
        trinity_fragment(broken, catalog().model("4B"))


def test_fragment_refuses_settings_that_are_not_what_its_text_says(monkeypatch: pytest.MonkeyPatch) -> None:
    # A defect of rft-solver's too: the settings given beside the text are what a YAML loader reads from it.
    monkeypatch.setattr("solver.trinity.settings._nested", lambda keys: {})
    with pytest.raises(RuntimeError, match=r"^the Trinity config made for SP=2 reads as \{'model': \{'max_model_len': "
                                           r"24576\}, 'trainer': .*\}, not \{\}$"):
        trinity_fragment(sp2_plan(), catalog().model("4B"))


def test_fragment_refuses_keys_of_a_section_that_are_not_together(monkeypatch: pytest.MonkeyPatch) -> None:
    # A defect of rft-solver's: a section opened twice would be a duplicate YAML key, which loaders read otherwise.
    keys = [PlanKey(path=("model", "max_model_len"), value=24576),
            # keys 0.6's veRLConfig has, in the roles it passes verl 0.8 (release89: a key outside them gets a line)
            PlanKey(path=("trainer", "trainer_config", "actor_rollout_ref", "actor", "ppo_epochs"), value=1),
            PlanKey(path=("trainer", "save_interval"), value=2),
            PlanKey(path=("trainer", "trainer_config", "critic", "ppo_epochs"), value=1)]
    monkeypatch.setattr("solver.trinity.settings.keys_for_plan", lambda *arguments, **options: keys)
    with pytest.raises(ValueError, match=r"^keys under trainer\.trainer_config are not grouped together$"):
        trinity_fragment(sp2_plan(), catalog().model("4B"))


def test_a_fragment_sharing_no_gpus_exports_no_cuda_visible_devices() -> None:
    # An empty tuple of a node's GPUs shares none, as None does: no export in the text, none in the settings.
    fragments = [plan_fragment(sp2_plan(), catalog().model("4B"), 0, shared_gpus=shared) for shared in ((), None)]
    assert fragments[0] == fragments[1] and fragments[0][1].environment == {}


@pytest.mark.parametrize(("arguments", "message"), [
    ({"version": "0.7"}, "version must be one of None, 0.5, 0.6, got '0.7'"),
    ({"rollout_gpus": 2, "nodes": 0}, "nodes must be from 1 to 65536, got 0"),
    ({"rollout_gpus": 2, "nodes": "1"}, "nodes must be a whole number, got '1'"),
    ({"rollout_gpus": 2.5}, "rollout_gpus must be a whole number or None, got 2.5"),
    ({"rollout_gpus": 10**9}, "rollout_gpus must be from 0 to 65536 (or None for no cluster section), got 1000000000"),
    ({"rollout_gpus": 2, "engines": (0, 1, 2)}, ("engines must be (GPUs of other models, GPUs per engine), two whole "
                                                 "numbers of at least 0, got (0, 1, 2)")),
    ({"rollout_gpus": 2, "engines": (-1, 1)}, ("engines must be (GPUs of other models, GPUs per engine), two whole "
                                               "numbers of at least 0, got (-1, 1)")),
    ({"rollout_gpus": 3, "nodes": 2}, "2 trainer + 3 rollout GPUs do not split into 2 nodes of the same size"),
    ({"gpu": 5}, "gpu must be"),
    ({"shared_gpus": (0, -1)}, "shared_gpus must be GPU indices, whole numbers of at least 0, got (0, -1)"),
    ({"node_gpus": 0}, "node_gpus must be a whole number from 1 to 16, got 0"),
    ({"node_gpus": 17}, "node_gpus must be a whole number from 1 to 16, got 17 (a node is one host"),
    ({"rollout_gpus": 2, "nodes": 65537}, "nodes must be from 1 to 65536, got 65537"),
    ({"node_gpus": 8.0}, "node_gpus must be a whole number or None, got 8.0"),
])
def test_fragment_arguments_out_of_their_range_are_one_line_query_errors(arguments: dict, message: str) -> None:
    # Arguments the fragment cannot take: a QueryError naming them, not an error from deep inside (a division by
    # zero nodes, a KeyError for an unknown release) nor the RuntimeError kept for rft-solver's own defects.
    with pytest.raises(QueryError) as raised:
        trinity_fragment(sp2_plan(), catalog().model("4B"), **arguments)
    assert str(raised.value).startswith(message)


def test_fragment_says_the_nodes_a_trainer_spans_where_no_cluster_section_does() -> None:
    # long_plan's 4 trainer GPUs on nodes of 2: two whole nodes, said in the header; on nodes of 4, or with a
    # cluster section (rollout GPUs given), nothing more.
    spans = ("# The trainer spans 2 whole nodes of 2 GPUs: your cluster.node_num x gpu_per_node must hold them and\n"
             "# the rollout's GPUs (--rollout-gpus R, or solver.plan's rollout_gpus, writes that section).\n")
    assert spans in trinity_fragment(long_plan(), catalog().model("4B"), node_gpus=2)
    assert "The trainer spans" not in trinity_fragment(long_plan(), catalog().model("4B"), node_gpus=4)  # one node
    assert "The trainer spans" not in trinity_fragment(long_plan(), catalog().model("4B"), 0, nodes=2, node_gpus=2)
    # 4 trainer GPUs on nodes of 3 are no whole nodes: refused, as with a cluster section (not 'spans 1 whole node').
    with pytest.raises(QueryError, match=r"^4 GPUs span nodes of 3 \(node_gpus=3\) but are not whole nodes$"):
        trinity_fragment(long_plan(), catalog().model("4B"), node_gpus=3)


def test_fragment_nodes_that_split_the_trainer_are_a_query_error() -> None:
    with pytest.raises(QueryError, match=r"^4 GPUs span nodes of 3 \(nodes=2\) but are not whole nodes$"):
        trinity_fragment(long_plan(), catalog().model("4B"), rollout_gpus=2, nodes=2)  # 6 GPUs in 2 nodes of 3


@pytest.mark.parametrize(("arguments", "message"), [
    ({"version": "0.7"}, ("version takes 0.5, 0.5.0, 0.5.1, 0.5.2, 0.6 or 0.6.0 (or a tag of one, v0.5.2), got "
                          "'0.7' (rft-solver knows the rules of these releases alone)")),
    ({"environ": 5}, "environ must be a Mapping or None, got 5"),
    ({"environ": {"PYTORCH_CUDA_ALLOC_CONF": 1}}, "environ's values must be"),
    ({"name": None}, "name must be a str, got None"),
])
def test_patch_arguments_of_the_wrong_kind_are_one_line_query_errors(arguments: dict, message: str) -> None:
    with pytest.raises(QueryError) as raised:
        patch_trinity_config("model: {max_model_len: 4096}\n", sp2_plan(), catalog().model("4B"), **arguments)
    assert str(raised.value).startswith(message)


def test_fragment_with_zero_rollout_gpus_gives_the_cluster_alone() -> None:
    with pytest.raises(QueryError, match=r"rollout_gpus must be from 0 to 65536 \(or None for no cluster section\)"):
        trinity_fragment(vanilla_plan(), catalog().model("4B"), rollout_gpus=-1)
    fragment = trinity_fragment(vanilla_plan(), catalog().model("4B"), rollout_gpus=0)
    assert "\n# plan: vanilla on 4 trainer GPUs, max_model_len 8192\n" in fragment  # no "(0 for rollout)"
    data = _safe_load(fragment)
    assert data["cluster"] == {"node_num": 1, "gpu_per_node": vanilla_plan().gpus} and "explorer" not in data


def test_fragment_engines_take_the_rollout_gpus_left_to_them() -> None:
    model = catalog().model("4B")
    with pytest.raises(EngineError) as raised:  # the auxiliary models take them all: no engine is left
        trinity_fragment(sp2_plan(), model, rollout_gpus=2, engines=(2, 1))
    assert str(raised.value) == "2 rollout GPUs less the 2 of auxiliary models are not whole engines of 1 GPU each"
    # a layout with Trinity 0.6's pipeline parallel size keeps its sizes: no tensor-parallel size is written
    layout = {"explorer": {"rollout_model": {"pipeline_parallel_size": 2, "tensor_parallel_size": 2}}}
    fragment = trinity_fragment(sp2_plan(), model, rollout_gpus=4, engines=(0, 4), layout=layout)
    assert _safe_load(fragment)["explorer"] == {"rollout_model": {"engine_num": 1}}


def test_fragment_says_to_bring_hand_set_role_budgets_down_where_it_has_no_config() -> None:
    # Merged into a config that sets a role's own budget above the plan's, that budget would win on verl before 0.8:
    # the header says so; a fragment made with the config's layout lowers such a budget among its keys instead.
    model, plan = catalog().model("4B"), sp2_plan()
    budget = plan.max_token_len_per_gpu
    # (criticbudget_s82: and that the rollout's budget below ceil(L/SP) stops verl; tests/test_criticbudget_s82.py)
    lines = ["# On verl before 0.8, a hand-set ppo_max_token_len_per_gpu (actor) or log_prob_max_token_len_per_gpu",
             f"# (ref, rollout) above {budget} overrides max_token_len_per_gpu: lower it to {budget} or remove it; and",
             "# the rollout's log_prob_max_token_len_per_gpu below ceil(24576 / 2) = 12288 holds no sequence of",
             "# that length, which Trinity never raises and verl stops at: raise it to 12288 or more, or remove",
             "# it."]
    header = trinity_fragment(plan, model).split("\nmodel:\n")[0].splitlines()
    assert header[-5:] == lines
    role = {"ppo_max_token_len_per_gpu": 10 * plan.max_token_len_per_gpu}
    fragment = trinity_fragment(plan, model, layout={"trainer": {"trainer_config": {"actor_rollout_ref": {
        "actor": role}}}})
    assert lines[0] not in fragment and _safe_load(fragment)["trainer"]["trainer_config"]["actor_rollout_ref"] == {
        "actor": {"ppo_max_token_len_per_gpu": plan.max_token_len_per_gpu}}
    # The rollout's, which bounds the actor's log-prob recompute, likewise, where that runs (bypass_mode false;
    # bypass90: true, Trinity's default, runs none, and the rollout's is left as it is)
    rollout = {"log_prob_max_token_len_per_gpu": 10 * plan.max_token_len_per_gpu}
    fragment = trinity_fragment(plan, model, layout={"trainer": {"trainer_config": {"actor_rollout_ref": {
        "rollout": rollout}, "algorithm": {"rollout_correction": {"bypass_mode": False}}}}})
    assert _safe_load(fragment)["trainer"]["trainer_config"]["actor_rollout_ref"] == {
        "rollout": {"log_prob_max_token_len_per_gpu": plan.max_token_len_per_gpu}}


def test_fragment_takes_the_largest_train_batch() -> None:
    fragment = trinity_fragment(vanilla_plan(), catalog().model("4B"), train_batch_size=MAX_TRAIN_BATCH)
    assert (f"\n# Planned for a train batch of {MAX_TRAIN_BATCH} (buffer.train_batch_size, by default batch_size x\n"
            "# repeat_times), which its 4 data-parallel ranks (trainer GPUs / SP) divide: keep your batch a\n"
            "# multiple of 4.\n") in fragment


def test_fragment_on_rocm_says_the_rocm_env_caution_beside_the_export_alone() -> None:
    (answer,) = solve(make_query(catalog(), gpu="mi300x", model="4B", objective="max_len", budget_gpus=4), catalog())
    plan = answer.plans[0]
    assert plan.env and rocm_env_caution() in plan.cautions
    fragment = trinity_fragment(plan, catalog().model("4B"), gpu="MI300X", rocm=True)
    assert "ROCm: PyTorch" not in fragment and fragment.count("PYTORCH_HIP_ALLOC_CONF") == 1
    assert ("#   export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n"
            "# It is an environment variable, not a config key.\n"
            "# On ROCm, PyTorch reads PYTORCH_HIP_ALLOC_CONF too: set it the same, or not at all; a build without\n"
            "# expandable segments ignores them with a warning (then plan with --no-env).\n") in fragment


def _documented_plans() -> list[tuple[Plan, Model]]:
    """A plan for every documented cell that trains (every setting, length and GPU count the tables hold)."""
    plans = []
    seen = set()
    for cell in catalog().cells():
        if cell.setting is None or (cell.gpus, cell.model, cell.max_model_len, cell.setting) in seen:
            continue
        seen.add((cell.gpus, cell.model, cell.max_model_len, cell.setting))
        model = catalog().model(cell.model)
        setting = cell.setting
        plans.append(
            (
                Plan(
                    gpus=cell.gpus,
                    unused_gpus=0,
                    env=setting.env,
                    offload=setting.offload,
                    sp=setting.sp,
                    max_model_len=cell.max_model_len,
                    max_token_len_per_gpu=token_budget(cell.max_model_len, setting.sp),
                    rope_scaling_factor=model.yarn_factor(cell.max_model_len),
                    yarn_beyond_validated=model.yarn_beyond_validated(cell.max_model_len),
                    cost=1.0,
                    evidence="documented",
                    source=SourceCell(model=model.name, gpus=cell.gpus, max_model_len=cell.max_model_len,
                                      setting=setting.label),
                    memory_gb=0.0,
                    headroom_gb=0.0,
                ),
                model,
            )
        )
    return plans


def test_every_fragment_is_valid_yaml_passes_the_checks_and_reads_back() -> None:
    plans = _documented_plans()
    assert len(plans) > 200
    for index, (plan, model) in enumerate(plans):
        rollout = 1 + index % 3
        fragment = trinity_fragment(plan, model, rollout_gpus=rollout)
        data = _safe_load(fragment)
        assert isinstance(data, dict)
        assert check_trinity_config(data, model, plan.gpus) == [], (plan, fragment)
        config = read_trinity_config(_with_model_path(fragment, f"Qwen/{model.name}"), "fragment.yaml", {})
        assert config == TrinityConfig(
            model=model.name,
            model_path=f"Qwen/{model.name}",
            max_model_len=plan.max_model_len,
            trainer_gpus=plan.gpus,
            node_gpus=plan.gpus + rollout,  # one node
            rollout_gpus=rollout,
            sp=plan.sp,
            offload=plan.offload,
            max_token_len_per_gpu=plan.max_token_len_per_gpu,
            strategy="fsdp2" if plan.offload else None,
            vllm_rollout=VllmRollout(tensor_parallel_size=1, gpu_memory_utilization=None, value_bytes=2,
                                     max_model_len=None),
        )


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_fragments_round_trip(name: str) -> None:
    text = GOLDEN[name]()
    plan = {"golden-vanilla.yaml": vanilla_plan, "golden-sp2.yaml": sp2_plan}.get(name, long_plan)()
    config = read_trinity_config(_with_model_path(text), name, {})
    assert config.model == "Qwen3-4B"
    assert (config.max_model_len, config.sp, config.offload, config.max_token_len_per_gpu) == (
        plan.max_model_len,
        plan.sp,
        plan.offload,
        plan.max_token_len_per_gpu,
    )
    assert config.trainer_gpus == (plan.gpus if "cluster:" in text else None)


# --------------------------------------------------------------------------------------------------
# read_trinity_config


@pytest.mark.parametrize(("trainer", "actor", "unread"), [
    ("use_dynamic_bsz: false", "ppo_micro_batch_size_per_gpu: '${oc.env:MB}'",
     ["trainer.trainer_config.actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu"]),
    ("use_dynamic_bsz: true", "ppo_micro_batch_size_per_gpu: '${oc.env:MB}'", []),  # read by no pass: a budget is
    ("use_dynamic_bsz: '${oc.env:DYN}'", "ppo_micro_batch_size: '${oc.env:MB}'",  # the deprecated size too
     ["trainer.use_dynamic_bsz", "trainer.trainer_config.actor_rollout_ref.actor.ppo_micro_batch_size"]),
    ("use_dynamic_bsz: '${oc.env:DYN}'", "ppo_micro_batch_size_per_gpu: 2", ["trainer.use_dynamic_bsz"]),
    ("use_dynamic_bsz: '${oc.env:DYN}'", "ppo_epochs: 1", []),  # one sequence per micro-batch, on or off
    ("use_dynamic_bsz: false", "ppo_micro_batch_size_per_gpu: '${oc.env:MB,4}'", []),
])
def test_the_keys_that_decide_the_tokens_per_gpu_and_cannot_be_read_are_named(
        trainer: str, actor: str, unread: list[str]) -> None:
    text = ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
            f"trainer: {{{trainer}, trainer_config: {{actor_rollout_ref: {{actor: {{{actor}}}}}}}}}\n")
    assert list(read_trinity_config(text, "trinity.yaml", {}).memory_unread) == unread


@pytest.mark.parametrize(("algorithm", "trainer", "critic", "unread"), [
    ("ppo", "use_dynamic_bsz: false", "ppo_micro_batch_size_per_gpu: '${oc.env:MB}'",
     ["trainer.trainer_config.critic.ppo_micro_batch_size_per_gpu"]),
    ("ppo", "use_dynamic_bsz: false", "ppo_micro_batch_size: '${oc.env:MB}'",  # its deprecated size too
     ["trainer.trainer_config.critic.ppo_micro_batch_size"]),
    ("grpo", "use_dynamic_bsz: false", "ppo_micro_batch_size_per_gpu: '${oc.env:MB}'", []),  # no critic trained
    ("ppo", "use_dynamic_bsz: true", "ppo_micro_batch_size_per_gpu: '${oc.env:MB}'", []),  # read by no pass
    # The trainer's flag decides where the critic's micro-batch holds 2 sequences with it off, not where it holds 1.
    ("ppo", "use_dynamic_bsz: '${oc.env:DYN}'", "ppo_micro_batch_size_per_gpu: 2", ["trainer.use_dynamic_bsz"]),
    ("ppo", "use_dynamic_bsz: '${oc.env:DYN}'", "ppo_micro_batch_size_per_gpu: 1", []),
])
def test_a_trained_critics_keys_that_decide_its_tokens_per_gpu_and_cannot_be_read_are_named_as_the_actors(
        algorithm: str, trainer: str, critic: str, unread: list[str]) -> None:
    text = ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
            f"algorithm: {{algorithm_type: {algorithm}}}\n"
            f"trainer: {{{trainer}, trainer_config: {{critic: {{forward_micro_batch_size_per_gpu: 1, {critic}}}}}}}\n")
    assert list(read_trinity_config(text, "trinity.yaml", {}).memory_unread) == unread


@pytest.mark.parametrize("key", ["ppo_max_token_len_per_gpu", "forward_max_token_len_per_gpu"])
def test_a_trained_critics_token_budget_that_cannot_be_read_is_refused_as_the_actors(key: str) -> None:
    # Not left out silently: the budget is a key the verdict and --write read, as the actor's (exit 2).
    text = ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
            "algorithm: {algorithm_type: ppo}\n"
            f"trainer: {{trainer_config: {{critic: {{{key}: '${{oc.env:TOK}}'}}}}}}\n")
    with pytest.raises(ConfigError, match=(
            f"^trinity.yaml: trainer.trainer_config.critic.{key}: environment variable TOK is not set and "
            "'\\$\\{oc.env:TOK\\}' has no default: set TOK as trinity run will have it ")):
        read_trinity_config(text, "trinity.yaml", {})
    assert read_trinity_config(text, "trinity.yaml", {"TOK": "65536"}).critic_token_budgets == (
        (f"trainer.trainer_config.critic.{key}", 65536),)


@pytest.mark.parametrize(("version", "flag_named"), [("0.6", False), ("0.5", True), (None, True)])
def test_an_unread_dynamic_flag_is_named_only_where_its_value_changes_the_passes(
        version: str | None, flag_named: bool) -> None:
    # mutants47: Trinity 0.6 sets the actor's flag to the trainer's (off), so the actor's own, unread, decides nothing
    # there (the rollout's own is read); Trinity 0.5 takes it
    text = ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
            "trainer: {use_dynamic_bsz: false, trainer_config: {actor_rollout_ref: {actor: {use_dynamic_bsz: "
            "'${oc.env:DYN}', ppo_micro_batch_size_per_gpu: '${oc.env:MB}'}, rollout: {log_prob_use_dynamic_bsz: "
            "false}}}}\n")
    actor = "trainer.trainer_config.actor_rollout_ref.actor"
    assert read_trinity_config(text, "trinity.yaml", {}, version).memory_unread == (  # type: ignore[arg-type]
        *([f"{actor}.use_dynamic_bsz"] if flag_named else []), f"{actor}.ppo_micro_batch_size_per_gpu")


@pytest.mark.parametrize("version", [None, "0.5"])
def test_an_unread_micro_batch_of_a_role_off_on_one_release_only_is_named_where_that_release_may_run(
        version: str | None) -> None:
    # unread87: the actor's own flag off, the trainer's unset (on): Trinity 0.5 runs the actor in rows, 0.6 sets it
    # to the trainer's; with no release given the unread size may decide (it went unnamed, the verdict "trains")
    text = ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
            "trainer: {trainer_config: {actor_rollout_ref: {actor: {use_dynamic_bsz: false, "
            "ppo_micro_batch_size_per_gpu: '${oc.env:MB}'}}}}\n")
    assert read_trinity_config(text, "trinity.yaml", {}, version).memory_unread == (  # type: ignore[arg-type]
        "trainer.trainer_config.actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu",)
    assert read_trinity_config(text, "trinity.yaml", {}, "0.6").memory_unread == ()


def test_reads_the_user_config_with_defaults_from_the_environment() -> None:
    config = read_trinity_config(USER_CONFIG.read_text(encoding="utf-8"), "user-config.yaml", {})
    assert config == TrinityConfig(
        model="Qwen3-0.6B",
        model_path="Qwen/Qwen3-0.6B",
        max_model_len=4096,
        trainer_gpus=6,
        node_gpus=8,
        rollout_gpus=2,
        sp=1,
        offload=False,
        max_token_len_per_gpu=None,
        train_batch_size=768,  # buffer.batch_size 96 x algorithm.repeat_times 8
        train_batch_source="buffer.batch_size x algorithm.repeat_times",
        vllm_rollout=VllmRollout(tensor_parallel_size=1, gpu_memory_utilization=None, value_bytes=2,
                                 max_model_len=None),  # engine_type vllm_async, dtype bfloat16
    )


@pytest.mark.parametrize(("keys", "batch", "source"), [
    ("buffer: {train_batch_size: 512, batch_size: 32}\nalgorithm: {repeat_times: 8}", 512, "buffer.train_batch_size"),
    ("buffer: {train_batch_size: 0, batch_size: 32}\nalgorithm: {repeat_times: 8}", 256,
     "buffer.batch_size x algorithm.repeat_times"),  # 0, Trinity's default: derived
    ("buffer: {batch_size: 32}", 32, "buffer.batch_size x algorithm.repeat_times"),  # repeat_times defaults to 1
    ("buffer: {batch_size: '${oc.env:BATCH,12}'}\nalgorithm: {repeat_times: 4}", 48,
     "buffer.batch_size x algorithm.repeat_times"),
    ("algorithm: {repeat_times: 8}", None, "buffer.train_batch_size"),  # no batch size: not checked
    ("buffer: {batch_size: 8388608}\nalgorithm: {repeat_times: 2}", 16777216,
     "buffer.batch_size x algorithm.repeat_times"),  # the most a train batch may be
])
def test_reads_the_train_batch_as_trinity_derives_it(keys: str, batch: int | None, source: str) -> None:
    text = f"model: {{model_path: Qwen/Qwen3-8B, max_model_len: 32768}}\n{keys}\n"
    config = read_trinity_config(text, "t.yaml", {})
    assert (config.train_batch_size, config.train_batch_source) == (batch, source)


@pytest.mark.parametrize(("keys", "message"), [
    ("buffer: {train_batch_size: -1}", "t.yaml: buffer.train_batch_size must be at least 0, got -1"),
    ("buffer: {batch_size: 0}", "t.yaml: buffer.batch_size must be at least 1, got 0"),
    ("buffer: {batch_size: 8}\nalgorithm: {repeat_times: many}",
     "t.yaml: algorithm.repeat_times must be a whole number"),
    ("buffer: {batch_size: 16777216}\nalgorithm: {repeat_times: 2}",
     "t.yaml: buffer.batch_size x algorithm.repeat_times must be at most 16777216, got 33554432"),
])
def test_a_train_batch_that_is_not_a_count_is_refused(keys: str, message: str) -> None:
    text = f"model: {{model_path: Qwen/Qwen3-8B, max_model_len: 32768}}\n{keys}\n"
    with pytest.raises(ConfigError) as caught:
        read_trinity_config(text, "t.yaml", {})
    assert str(caught.value).startswith(message)


def test_reads_the_user_config_with_the_variables_set() -> None:
    environ = {"MODEL_PATH": "/models/Qwen3-8B/", "MAX_MODEL_LEN": "81920", "FACTOR": "2.0"}
    config = read_trinity_config(USER_CONFIG.read_text(encoding="utf-8"), "user-config.yaml", environ)
    assert (config.model, config.max_model_len) == ("Qwen3-8B", 81920)
    # The name passes over the trailing "/", which verl's copy_to_local asserts against as the trainer starts.
    assert ConfigProblemCode.TRAILING_SLASH_REFUSED in config.note_codes


@pytest.mark.parametrize(
    ("text", "environ", "expected"),
    [
        ("model:\n  model_path: Qwen/Qwen3-8B\n", {}, {"model": "Qwen3-8B", "max_model_len": None, "sp": 1}),
        ("model:\n  model_path: ${oc.env:MP}\n", {"MP": "C:\\models\\Qwen3-14B"}, {"model": "Qwen3-14B"}),
        ("model:\n  model_path: ${oc.env:ROOT,/m}/Qwen3-1.7B\n", {}, {"model": "Qwen3-1.7B"}),
        (
            "model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${oc.decode:${oc.env:L,'8192'}}\n",
            {},
            {"max_model_len": 8192},
        ),
        ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: '${oc.env:L}'\n", {"L": " 32768 "}, {"max_model_len": 32768}),
        # OmegaConf's null default: the key counts as unset (prompt + response), unless the variable is set.
        (("model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${oc.env:L,null}\n  max_prompt_tokens: 2048\n"
          "  max_response_tokens: 14336\n"), {}, {"max_model_len": 16384}),
        ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${oc.env:L, null }\n", {"L": "32768"},
         {"max_model_len": 32768}),
        ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${oc.env:L,NULL}\n", {}, {"max_model_len": None}),
        ("model:\n  model_path: /m/${oc.env:S,NULL}/Qwen3-4B\n", {}, {"model": "Qwen3-4B"}),  # joined: "None"
        ("model:\n  model_path: /m/${oc.env:S,''}Qwen3-4B\n", {}, {"model": "Qwen3-4B"}),  # a quoted empty default
        ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${oc.env:L,${oc.env:M,4096}}\n", {"M": "8192"},
         {"max_model_len": 8192}),  # a default of another variable's
        (("model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${oc.decode:${oc.env:L,null}}\n"
          "  max_prompt_tokens: 2048\n  max_response_tokens: 14336\n"), {}, {"max_model_len": 16384}),  # a null on
        (("model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${oc.decode:${oc.env:L}}\n"
          "  max_prompt_tokens: 2048\n  max_response_tokens: 14336\n"), {"L": "Null"}, {"max_model_len": 16384}),
        ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${oc.decode:null}\n", {}, {"max_model_len": None}),
        ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: '${ oc.env : L ,4096}'\n", {"L": "8192"},
         {"max_model_len": 8192}),  # spaces around the resolver and the variable's name, as OmegaConf allows
        (
            "model: {model_path: m/Qwen3-4B}\ncluster: {gpu_per_node: 8}\nmode: train\n",
            {},
            {"trainer_gpus": 8, "rollout_gpus": 0, "rollout_engine_gpus": 1},
        ),
        (
            (
                "model: {model_path: m/Qwen3-4B}\ncluster: {node_num: 2, gpu_per_node: 8}\n"
                "explorer:\n  rollout_model: {engine_num: 2, tensor_parallel_size: 2}\n"
                "  auxiliary_models:\n  - {engine_num: 1, tensor_parallel_size: 4}\n"
            ),
            {},
            {"trainer_gpus": 8, "rollout_gpus": 8},
        ),
        (
            (
                "model: {model_path: m/Qwen3-4B}\ntrainer:\n  trainer_strategy: fsdp2\n  trainer_config:\n"
                "    actor_rollout_ref: {actor: {fsdp_config: {offload_policy: '${oc.env:OFF,false}'}}}\n"
            ),
            {"OFF": "True"},
            {"offload": True},
        ),
        (  # FSDP2's CPU offload is offload_policy's: verl loads manually offloaded states back for each step
            (
                "model: {model_path: m/Qwen3-4B}\ntrainer:\n  trainer_strategy: fsdp2\n  trainer_config:\n"
                "    actor_rollout_ref: {actor: {fsdp_config: {param_offload: true, optimizer_offload: true}}}\n"
            ),
            {},
            {"offload": False},
        ),
        (
            (
                "model: {model_path: m/Qwen3-4B}\ntrainer:\n  trainer_strategy: fsdp\n  trainer_config:\n"
                "    actor_rollout_ref: {actor: {fsdp_config: {param_offload: true}}}\n"
            ),
            {},
            {"offload": False},
        ),
        (  # the flags under a role's engine, which nothing reads (verl replaces it with fsdp_config)
            (
                "model: {model_path: m/Qwen3-4B}\ntrainer:\n  trainer_strategy: fsdp2\n  trainer_config:\n"
                "    actor_rollout_ref: {actor: {engine: {offload_policy: true}}}\n"
            ),
            {},
            {"offload": False},
        ),
        (  # mode train has no explorer: an external rollout model there is no refusal, and takes no GPU
            ("mode: train\nmodel: {model_path: q/Qwen3-4B}\nexplorer: {rollout_model: {engine_type: external}}\n"
             "cluster: {gpu_per_node: 8}\n"),
            {},
            {"trainer_gpus": 8, "rollout_gpus": 0},
        ),
        (  # a cluster of exactly MAX_GPUS (65536) GPUs is read: the limit is above it
            "model: {model_path: m/Qwen3-4B}\ncluster: {node_num: 8192, gpu_per_node: 8}\n",
            {},
            {"trainer_gpus": 65535, "node_gpus": 8, "rollout_gpus": 1},
        ),
        (  # a role with both sections: its fsdp_config's flags count
            (
                "model: {model_path: m/Qwen3-4B}\ntrainer:\n  trainer_strategy: fsdp2\n  trainer_config:\n"
                "    actor_rollout_ref: {actor: {engine: {offload_policy: false}, fsdp_config: {offload_policy: true}}}\n"
            ),
            {},
            {"offload": True},
        ),
    ],
)
def test_reads(text: str, environ: dict[str, str], expected: dict[str, Any]) -> None:
    config = read_trinity_config(text, "t.yaml", environ)
    assert {key: getattr(config, key) for key in expected} == expected


@pytest.mark.parametrize(
    ("text", "environ", "expected"),
    [
        ("model:\n  model_path: ${oc.env:MODEL_PATH}\n", {}, "t.yaml: model.model_path: environment variable MODEL_PATH is not set"),
        # a quoted 'null' is the text, as OmegaConf takes it
        ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${oc.env:L,'null'}\n", {},
         "t.yaml: model.max_model_len must be a whole number, got 'null'"),
        (
            "model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${foo.bar}\n",
            {},
            "t.yaml: model.max_model_len: cannot resolve '${foo.bar}': the config has no foo",
        ),
        (
            "model:\n  model_path: q/Qwen3-4B\ntrainer:\n  ulysses_sequence_parallel_size: ${oc.select:a.b,2}\n",
            {},
            "t.yaml: trainer.ulysses_sequence_parallel_size: cannot resolve '${oc.select:a.b,2}'",
        ),
        ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${oc.env:L\n", {},
         ("t.yaml: model.max_model_len: OmegaConf cannot read '${oc.env:L': unterminated interpolation (the ${ at "
          "character 1)")),
        ("model: [unclosed\n", {}, "t.yaml: at the end of the file: malformed YAML"),
        ("model:\n  a: 1\n   b: 2\n", {}, "t.yaml: line 3: malformed YAML"),
        ("model:\n  model_path: q/Qwen3-4B\x07\n", {},  # the line of a character YAML does not take, unseen
         "t.yaml: line 2: malformed YAML: unacceptable character #x0007: special characters are not allowed"),
        ("- model\n- trainer\n", {}, "t.yaml: a Trinity config is a mapping of sections (model, cluster, trainer, ...), got a list"),
        ("", {}, "t.yaml: a Trinity config is a mapping"),
        ("project: x\nmodel:\n  max_model_len: 4096\n", {}, "t.yaml: missing model.model_path"),
        ("model:\n  model_path: '  '\n", {}, "t.yaml: missing model.model_path"),
        (
            "mode: both\nmodel: {model_path: q/Qwen3-4B}\nexplorer: {rollout_model: {engine_type: external}}\n",
            {},
            ("t.yaml: an external rollout model (explorer.rollout_model.engine_type external, or "
             "model.external_model.enable) is for mode bench"),
        ),
        ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: 40k\n", {}, "t.yaml: model.max_model_len must be a whole number, got '40k'"),
        ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: 4096.5\n", {}, "t.yaml: model.max_model_len must be a whole number"),
        (  # OmegaConf's float without a dot
            "model:\n  model_path: q/Qwen3-4B\n  max_model_len: 1e5\n",
            {},
            "t.yaml: model.max_model_len must be a whole number, got 100000.0",
        ),
        (  # a scalar that cannot be built
            "model:\n  model_path: q/Qwen3-4B\n  max_model_len: !!int x\n",
            {},
            "t.yaml: malformed YAML: invalid literal for int() with base 10: 'x'",
        ),
        (
            "model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${oc.env:L,4096}\n",
            {"L": "lots"},
            "t.yaml: model.max_model_len must be a whole number, got 'lots'",
        ),
        ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: true\n", {}, "t.yaml: model.max_model_len must be a whole number"),
        (
            (
                "model: {model_path: q/Qwen3-4B}\ncluster: {node_num: 1, gpu_per_node: 4}\n"
                "explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 2}}\n"
            ),
            {},
            ("t.yaml: cluster.node_num x cluster.gpu_per_node = 4 GPUs: no trainer GPU is left after 4 rollout GPUs "
             "(explorer.rollout_model.engine_num x each engine's GPUs): the trainer takes GPUs of its own beside the "
             "rollout's, so give the rollout at most 3 of the 4"),
        ),
        (
            "model: {model_path: q/Qwen3-4B}\ncluster: {gpu_per_node: 2}\nexplorer: {rollout_model: {engine_num: 4}}\n",
            {},
            ("t.yaml: cluster.node_num x cluster.gpu_per_node = 2 GPUs: no trainer GPU is left after 4 rollout GPUs "
             "(explorer.rollout_model.engine_num x each engine's GPUs): the trainer takes GPUs of its own beside the "
             "rollout's, so give the rollout at most 1 of the 2"),
        ),
        (  # one GPU in all (a rented one): mode both cannot run, whatever the rollout takes
            "model: {model_path: q/Qwen3-4B}\ncluster: {gpu_per_node: 1}\n",
            {},
            ("t.yaml: cluster.node_num x cluster.gpu_per_node = 1 GPU: no trainer GPU is left after 1 rollout GPU "
             "(explorer.rollout_model.engine_num x each engine's GPUs): the trainer takes GPUs of its own beside the "
             "rollout's, so the cluster needs 2 GPUs at least, one for each; or, with one, Trinity's mode colocate "
             "runs the trainer and its vLLM engine on one GPU, the engine taking up to 25% of it "
             "(gpu_memory_utilization), which rft-solver does not plan: plan the trainer on the 75% left, a GPU type "
             "of your own (--gpu NAME --gpu-memory SIZE: 75% of nvidia-smi's total, in MiB)"),
        ),
        ("model: q/Qwen3-4B\n", {}, "t.yaml: model must be a mapping"),
        ("model:\n  model_path: q/Qwen3-4B\n  model_path: q/Qwen3-8B\n", {}, "t.yaml: line 3: key 'model_path' appears twice"),
        (  # an offload flag read only for a note is refused all the same when it is no boolean
            ("model: {model_path: q/Qwen3-4B}\ntrainer: {trainer_config: {actor_rollout_ref: "
             "{ref: {fsdp_config: {param_offload: maybe}}}}}\n"),
            {},
            ("t.yaml: trainer.trainer_config.actor_rollout_ref.ref.fsdp_config.param_offload must be true or false, "
             "got 'maybe'"),
        ),
        (  # a word with spaces around it, which OmegaConf refuses for a boolean (' false' would be on where unchecked)
            ("model: {model_path: q/Qwen3-4B}\ntrainer: {trainer_config: {actor_rollout_ref: "
             "{ref: {fsdp_config: {param_offload: ' false'}}}}}\n"),
            {},
            ("t.yaml: trainer.trainer_config.actor_rollout_ref.ref.fsdp_config.param_offload must be true or false, "
             "got ' false'"),
        ),
        (
            ("model: {model_path: q/Qwen3-4B}\ntrainer: {trainer_strategy: fsdp2, trainer_config: {actor_rollout_ref: "
             "{actor: {fsdp_config: {param_offload: true, optimizer_offload: '${oc.env:OFF,maybe}'}}}}}\n"),
            {},
            ("t.yaml: trainer.trainer_config.actor_rollout_ref.actor.fsdp_config.optimizer_offload must be true or "
             "false, got 'maybe'"),
        ),
        ("[" * 500 + "]" * 500 + "\n", {}, "t.yaml: malformed YAML: exceeded maximum nesting depth"),
        ("a: " + "{a: " * 50000 + "1" + "}" * 50000 + "\n", {}, "t.yaml: malformed YAML: exceeded maximum nesting depth"),
        (
            "model: {model_path: q/Qwen3-4B, max_model_len: " + "9" * 5000 + "}\n",
            {},
            "t.yaml: a number too long to read (thousands of digits)",
        ),
        ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: 4${oc.env:L,null}\n", {},
         "t.yaml: model.max_model_len must be a whole number, got '4None'"),  # joined, a null is written as OmegaConf's
        ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${oc.env:${oc.decode:'8192'}}\n", {},  # named by a number
         ("t.yaml: model.max_model_len: cannot resolve \"${oc.env:${oc.decode:'8192'}}\": oc.env takes a variable's "
          "name, not 8192")),
        # without a colon, a reference to a key (as OmegaConf reads it), which this config has not
        ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${oc.env}\n", {},
         "t.yaml: model.max_model_len: cannot resolve '${oc.env}': the config has no oc"),
        ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${oc.decode}\n", {},
         "t.yaml: model.max_model_len: cannot resolve '${oc.decode}': the config has no oc"),
        # quotes that do not pair: OmegaConf's grammar refuses them
        ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${oc.env:L,'4096\"}\n", {},
         ("t.yaml: model.max_model_len: OmegaConf cannot read '${oc.env:L,\\'4096\"}': no closing quote (the ' at "
          "character 12)")),
        ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${oc.env:L}\n", {"L": ""},
         "t.yaml: model.max_model_len must be a whole number, got ''"),  # set, but empty
        ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${oc.env:}\n", {},
         "t.yaml: model.max_model_len: '${oc.env:}' names no environment variable"),
        ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${oc.env:''}\n", {},
         "t.yaml: model.max_model_len: \"${oc.env:''}\" names no environment variable"),
        (
            "model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${oc.env:L,32768}\n",
            {"L": "9" * 5000},
            "t.yaml: model.max_model_len: a number too long to read (thousands of digits)",
        ),
        (
            "model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${oc.decode:${oc.env:L,32768}}\n",
            {"L": "-" + "9" * 5000},
            "t.yaml: model.max_model_len: a number too long to read (thousands of digits)",
        ),
    ],
)
def test_read_errors_are_one_line_naming_file_and_key(text: str, environ: dict[str, str], expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        read_trinity_config(text, "t.yaml", environ)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(expected), message


@pytest.mark.parametrize("sp", [0, -2])
def test_a_trainer_sp_below_1_is_read_as_the_1_trinity_sets_it_to_not_refused(sp: int) -> None:
    # persona92a: trainer.ulysses_sequence_parallel_size 0 exited 2 as bad input, though Trinity (0.5.2 and 0.6.0)
    # sets it to 1 with a warning and runs the config, as docs/trinity.md says: the verdict is at SP 1, with its line
    text = f"model: {{model_path: q/Qwen3-4B}}\ntrainer: {{ulysses_sequence_parallel_size: {sp}}}\n"
    assert read_trinity_config(text, "t.yaml", {}).sp == 1


def test_a_trainer_sp_below_1_is_the_1_an_actors_own_1_matches_under_trinity_05() -> None:
    # mutants58: with Trinity 0.5 the actor's own SP 1 beside the trainer's 0, which Trinity sets to 1: alike, so no
    # role-sp-differs note (nor a trainer's own SP) on an SP of 0
    text = ("model: {model_path: q/Qwen3-4B}\nalgorithm: {algorithm_type: grpo}\ntrainer:\n"
            "  ulysses_sequence_parallel_size: 0\n  trainer_config:\n"
            "    actor_rollout_ref: {actor: {ulysses_sequence_parallel_size: 1}}\n")
    config = read_trinity_config(text, "t.yaml", {}, version="0.5")
    assert (config.sp, config.trainer_sp, config.notes) == (1, None, ())


_ENGINE_CONFIG = (
    "model: {model_path: Qwen/Qwen3-4B, max_model_len: 8192}\nalgorithm: {algorithm_type: grpo}\n"
    "trainer:\n  trainer_strategy: fsdp2\n  trainer_config:\n    actor_rollout_ref:\n"
    "      actor: {engine: {param_offload: true, optimizer_offload: true}}\n"
    "      ref: {engine: {param_offload: true}}\n"
)
"""Offload flags under each role's engine, which nothing reads (Trinity 0.5 refuses the key, 0.6 drops it, verl 0.8
and later replaces it with the role's fsdp_config)."""
_MANUAL_CONFIG = _ENGINE_CONFIG.replace("engine:", "fsdp_config:")
"""param_offload and optimizer_offload under the roles' fsdp_config, without offload_policy."""


def test_offload_flags_under_a_roles_engine_are_named_and_left_out() -> None:
    config = read_trinity_config(_ENGINE_CONFIG, "t.yaml", {})
    assert not config.offload and config.notes == ((
        "actor.engine.param_offload, actor.engine.optimizer_offload, ref.engine.param_offload (under "
        "trainer.trainer_config.actor_rollout_ref): Trinity reads a role's offload flags from its fsdp_config, never "
        "its engine (Trinity 0.5 refuses the key, 0.6 drops it, and verl 0.8 or later replaces it with fsdp_config), "
        "so the verdict leaves them out; set them under fsdp_config (--write does)"),)
    assert read_trinity_config(_ENGINE_CONFIG.replace("optimizer_offload", "offload_policy"), "t.yaml", {}).offload is False
    # Flags there that are off are named too: unread all the same, and --write sets them alike.
    assert read_trinity_config(_ENGINE_CONFIG.replace("true", "false"), "t.yaml", {}).notes == config.notes


def test_a_ppo_config_is_told_how_its_critic_is_counted() -> None:
    # Trinity's ppo (the one algorithm whose use_critic is true) puts a critic on the trainer's GPUs beside the actor;
    # the verdict and the plans count it as the config holds its states (s74), and the note says how to leave it out.
    base = "model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
    counted = ("the verdict and the plans count its states as its own critic.model.fsdp_config holds them: resident "
               "(on the GPUs throughout), and its own update as a second peak; --critic none counts the actor alone")
    config = read_trinity_config(base + "algorithm: {algorithm_type: ppo}\n", "t.yaml", {})
    assert (config.notes, config.critic) == ((
        "algorithm.algorithm_type ppo trains a critic model beside the actor on the same trainer GPUs; " + counted,),
        "resident")
    for algorithm in ("grpo", "sppo"):
        config = read_trinity_config(base + f"algorithm: {{algorithm_type: {algorithm}}}\n", "t.yaml", {})
        assert (config.notes, config.critic) == ((), None)
    # Unset, it is Trinity's default, ppo; the API names its keyword.
    assert read_trinity_config(base, "t.yaml", {}, option_names=API_OPTIONS).notes == ((
        "PPO, Trinity's algorithm where algorithm.algorithm_type is unset, trains a critic model beside the actor on "
        "the same trainer GPUs; " + counted.replace("--critic none", 'critic="none"')),)


def test_a_critic_that_offloads_is_counted_so_and_its_own_budget_is_read_for_the_notes() -> None:
    # The critic's model.fsdp_config offloading its states (offload_policy under fsdp2: offloaded; param_offload and
    # optimizer_offload: reloaded) is counted so; its ppo_max_token_len_per_gpu is read (for the notes alone), and only
    # where a critic trains.
    base = ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
            "algorithm: {algorithm_type: ppo}\ntrainer: {trainer_strategy: fsdp2, trainer_config: {critic: "
            "{ppo_max_token_len_per_gpu: 65536, model: {fsdp_config: FLAGS}}}}\n")
    told = ("algorithm.algorithm_type ppo trains a critic model beside the actor on the same trainer GPUs; the verdict "
            "and the plans count its states {}: {}, and its own update as a second peak; --critic none counts the "
            "actor alone")
    own = "as its own critic.model.fsdp_config holds them"
    resident = told.format(own, "resident (on the GPUs throughout)")
    reloaded = told.format(own, "reloaded (param_offload and optimizer_offload: in host memory, back on the GPUs for "
                                "its own update)")
    policy = told.format(own, "offloaded (offload_policy under fsdp2: in host memory throughout)")
    for flags, note, critic in (("{param_offload: true, optimizer_offload: true}", reloaded, "reloaded"),
                                ("{offload_policy: true}", policy, "offloaded"),
                                ("{param_offload: true}", resident, "resident"), ("{}", resident, "resident"),
                                ("{param_offload: maybe}", resident, "resident")):
        config = read_trinity_config(base.replace("FLAGS", flags), "t.yaml", {})
        assert (config.notes, config.critic) == ((note,), critic), flags
        assert config.critic_token_budgets == (("trainer.trainer_config.critic.ppo_max_token_len_per_gpu", 65536),)
    # Trinity 0.6's flags under trainer: verl 0.8 or later copies them into the critic's engine (offloaded), verl
    # before 0.8 does not (its own, resident): the one that holds more on the GPUs counts (docs/trinity.md says so).
    flags_06 = "fsdp2, param_offload: true, optimizer_offload: true, offload_policy: true"
    trainer_level = read_trinity_config(base.replace("FLAGS", "{}").replace("fsdp2", flags_06), "t.yaml", {})
    assert trainer_level.offload and (trainer_level.notes, trainer_level.critic) == ((told.format(
        "by the more held on the GPUs of two readings, verl before 0.8's of its own critic.model.fsdp_config "
        "(resident) and verl 0.8 or later's of critic.fsdp, else the trainer's (offloaded)",
        "resident (on the GPUs throughout)") + "; --critic offloaded counts it as verl 0.8 or later reads it, and "
        "--write then sets both readings' flags to that",), "resident")
    # offload_policy is FSDP2's: under fsdp it offloads nothing.
    fsdp = base.replace("FLAGS", "{offload_policy: true}").replace("fsdp2", "fsdp")
    assert read_trinity_config(fsdp, "t.yaml", {}).notes == (resident,)
    grpo = read_trinity_config(base.replace("FLAGS", "{}").replace("ppo}", "grpo}"), "t.yaml", {})
    assert grpo.notes == () and grpo.critic_token_budgets == ()


def test_the_notes_name_the_offload_flags_that_do_not_offload() -> None:
    config = read_trinity_config(_MANUAL_CONFIG, "t.yaml", {})
    assert not config.offload  # without offload_policy, verl's FSDP2 loads the states back onto the GPUs
    assert config.notes == (
        ("actor.fsdp_config.param_offload and actor.fsdp_config.optimizer_offload without offload_policy (under "
         "trainer.trainer_config.actor_rollout_ref): verl loads those states back onto the GPUs for each step, so the "
         "verdict takes Offload as off; the tables' Offload is FSDP2's CPUOffloadPolicy, which offload_policy: true "
         "turns on"),
    )
    with_policy = read_trinity_config(_MANUAL_CONFIG.replace("optimizer_offload: true", "offload_policy: true"),
                                      "t.yaml", {})
    # The ref's flags do not matter (verl offloads it anyway); with the roles' flags alone, Trinity 0.6 on verl
    # before 0.8 takes the trainer's own (false where unset) instead, which a note says.
    assert with_policy.offload and with_policy.notes == (TRINITY_06_OFFLOAD,)
    under_fsdp = read_trinity_config(_MANUAL_CONFIG.replace("fsdp2", "fsdp"), "t.yaml", {})
    assert not under_fsdp.offload and under_fsdp.notes[0].startswith(
        "the offload flags are set, but trainer.trainer_strategy is fsdp, not fsdp2")
    under_megatron = read_trinity_config(_MANUAL_CONFIG.replace("fsdp2", "megatron"), "t.yaml", {})
    assert under_megatron.notes[-1] == (
        "trainer.trainer_strategy is megatron: the tables and the memory model are FSDP's (fsdp, or fsdp2 for "
        "Offload), so the verdict and the plans are for an FSDP trainer")


# --------------------------------------------------------------------------------------------------
# patch_trinity_config


def _changes(before: str, after: str) -> tuple[list[str], list[str]]:
    """The removed and the added lines of a diff."""
    removed, added = [], []
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0):
        if line.startswith(("---", "+++", "@@")):
            continue
        (removed if line.startswith("-") else added).append(line[1:])
    return removed, added


def test_patch_with_offload_and_yarn_touches_only_the_plan_keys() -> None:
    before = _user_config(long_plan())
    after = patch_trinity_config(before, long_plan(), catalog().model("4B"))
    removed, added = _changes(before, after)
    assert removed == [
        "  max_model_len: ${oc.env:MAX_MODEL_LEN,4096}  # prompt + response",
        "    factor: ${oc.decode:${oc.env:FACTOR}}  # 推荐值 = MAX_MODEL_LEN / 40960",
        "          param_offload: false  # flipped by hand when memory is short",
    ]
    # The new trainer keys land beside the trainer's own (after use_dynamic_bsz), before its trainer_config block.
    assert added == [
        "  max_model_len: 102400",  # its comment said prompt + response, which stay 4096: dropped
        "    factor: 2.5  # 推荐值 = MAX_MODEL_LEN / 40960",
        "    rope_theta: 1000000",  # the model's own, which Trinity 0.6's trainer needs (ropetheta, s78)
        "  # host memory: 102.2 GiB per node for Offload (at start-up, every rank loading the model; 93.4",
        "  #   while training); not checked: host_ram_gb not given",
        "  trainer_strategy: fsdp2",
        "  ulysses_sequence_parallel_size: 4",
        "  max_token_len_per_gpu: 51200",
        "  save_hf_checkpoint: never",
        # Trinity 0.6's, made for no release: the current one's, with the fragment's comment on them above them
        "  # these three are Trinity 0.6's (0.5 refuses them: version=\"0.5\" leaves them out); on verl before",
        "  #   0.8, Trinity 0.6 reads these, not the roles' fsdp_config flags",
        "  param_offload: true",
        "  optimizer_offload: true",
        "  offload_policy: true",
        "          param_offload: true  # flipped by hand when memory is short",
        "          optimizer_offload: true",
        "          offload_policy: true",
        "      ref:",
        "        fsdp_config:",
        "          param_offload: true",
        "          optimizer_offload: true",
        "          offload_policy: true",
    ]
    assert ("  use_dynamic_bsz: true\n  # host memory: 102.2 GiB per node for Offload (at start-up, every rank loading the "
            "model; 93.4\n  #   while training); not checked: host_ram_gb not given\n  trainer_strategy: fsdp2\n" in after)
    assert after.index("  offload_policy: true\n  trainer_config:\n") < after.index("# Monitoring")
    assert after.rindex("\n\n# Monitoring\n") > 0


def test_patch_adds_a_sections_keys_beside_its_own_before_its_first_nested_block() -> None:
    # sp2_plan: SP=2 and 24576 tokens per GPU, which the trainer lacks. They go after its scalar keys, before
    # trainer_config: the SP line keeps its end-of-line comment, and the blank line and comment leading into the block
    # stay before it. A section starting with a block, or merging another (<<:), gets them at its end.
    plan, model = sp2_plan(), catalog().model("4B")
    text = ("model:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: 4096\ntrainer:\n  save_interval: 100  # steps\n\n"
            "  # verl's own\n  trainer_config:\n    actor_rollout_ref:\n"
            "      actor: {ppo_micro_batch_size_per_gpu: 4}\n  # trainer's end\n\n# the end\n")
    assert patch_trinity_config(text, plan, model) == (
        "model:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: 24576\ntrainer:\n  save_interval: 100  # steps\n"
        "  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 24576\n\n"
        "  # verl's own\n  trainer_config:\n    actor_rollout_ref:\n"
        "      actor: {ppo_micro_batch_size_per_gpu: 4}\n  # trainer's end\n\n# the end\n")
    block_first = "model:\n  model_path: Qwen/Qwen3-4B\ntrainer:\n  trainer_config:\n    a: 1\n  grad_clip: 1.0\n"
    assert patch_trinity_config(block_first, plan, model).endswith(
        "  grad_clip: 1.0\n  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 24576\n")
    merged = ("base: &b {save_interval: 100}\nmodel:\n  model_path: Qwen/Qwen3-4B\ntrainer:\n  <<: *b\n"
              "  grad_clip: 1.0\n  trainer_config:\n    a: 1\n")
    assert patch_trinity_config(merged, plan, model).endswith(
        "  trainer_config:\n    a: 1\n  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 24576\n")


def test_patch_adds_a_sections_keys_before_a_block_sequence_and_after_a_flow_one() -> None:
    # A list written as a block (on lines of its own) is a nested block: the keys go before it. One in flow style
    # ([a, b]) is written on its key's line, like a scalar: they go after it, before trainer_config.
    plan, model = sp2_plan(), catalog().model("4B")
    head = "model:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: 4096\ntrainer:\n  save_interval: 100\n"
    added = "  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 24576\n"
    block = "  tags:\n    - a\n    - b\n  trainer_config:\n    a: 1\n"
    assert patch_trinity_config(head + block, plan, model) == (
        head.replace("4096", "24576") + added + block)
    flow = "  tags: [a, b]\n  trainer_config:\n    a: 1\n"
    assert patch_trinity_config(head + flow, plan, model) == (
        head.replace("4096", "24576") + "  tags: [a, b]\n" + added + "  trainer_config:\n    a: 1\n")


def test_patch_without_yarn_removes_the_stale_rope_scaling() -> None:
    before = _user_config(sp2_plan())
    after = patch_trinity_config(before, sp2_plan(), catalog().model("4B"))
    removed, added = _changes(before, after)
    assert removed == [
        "  max_model_len: ${oc.env:MAX_MODEL_LEN,4096}  # prompt + response",
        "  rope_scaling:",
        "    rope_type: yarn",
        "    factor: ${oc.decode:${oc.env:FACTOR}}  # 推荐值 = MAX_MODEL_LEN / 40960",
        "    original_max_position_embeddings: 40960",
    ]
    assert added == [
        "  max_model_len: 24576",  # its comment said prompt + response, which stay 4096: dropped
        "  ulysses_sequence_parallel_size: 2",
        "  max_token_len_per_gpu: 24576",
    ]
    # the blank line before `cluster:` survives the removals
    assert "max_model_len: 24576\n\ncluster:\n" in after


def test_patch_keeps_the_indentation_when_a_dash_opens_the_first_nested_mapping() -> None:
    # The mapping under `- engine:` is indented from the item's text, not from the dash: it does not say that the
    # config indents its mappings by 4, so the patch writes (and keeps) them at 2.
    before = ("auxiliary_models:\n- engine:\n    tensor_parallel_size: 1\n"
              "model:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: 4096\ntrainer:\n  trainer_strategy: fsdp2\n")
    after = patch_trinity_config(before, sp2_plan(), catalog().model("4B"))
    assert _changes(before, after) == (["  max_model_len: 4096"], [
        "  max_model_len: 24576", "  ulysses_sequence_parallel_size: 2", "  max_token_len_per_gpu: 24576"])


def test_patch_keeps_the_comments_after_a_removed_first_or_flow_style_key() -> None:
    # sp2_plan: Qwen3-4B at 24576 tokens, within the native context: model.rope_scaling goes (and with Trinity 0.5,
    # the trainer's 0.6 flags); the lines after it lead into the next key and stay before it, where the removed key
    # is its section's first (after the section's own comments), or written in flow style on one line.
    plan, model = sp2_plan(), catalog().model("4B")
    first = ("model:  # the model\n  # RoPE\n  rope_scaling:\n    rope_type: yarn\n    factor: 4  # 4x\n\n"
             "  # the length, by hand\n  max_model_len: 8192\ntrainer:\n  # 0.6's\n  param_offload: true\n\n"
             "  # the SP\n  ulysses_sequence_parallel_size: 1\n")
    assert patch_trinity_config(first, plan, model, version="0.5") == (
        "model:  # the model\n  # RoPE\n\n  # the length, by hand\n  max_model_len: 24576\ntrainer:\n  # 0.6's\n\n"
        "  # the SP\n  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 24576\n")
    flow = ("model:\n  rope_scaling: {rope_type: yarn, factor: 4}  # 4x\n  # the length\n  max_model_len: 8192\n"
            "  tags: [a, b]  # tags\n  # the template\n  custom_chat_template: x\n")
    assert patch_trinity_config(flow, plan, model) == (
        "model:\n  # the length\n  max_model_len: 24576\n  tags: [a, b]  # tags\n  # the template\n"
        "  custom_chat_template: x\ntrainer:\n  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 24576\n")
    # alike, a key added after a flow-style value goes before the lines that lead into the next section
    appended = ("model:\n  model_path: q/Qwen3-4B\n  tags: [a, b]  # tags\n\n# the cluster\n"
                "cluster:\n  gpu_per_node: 3\n")  # less the one rollout engine: the plan's 2 GPUs
    assert patch_trinity_config(appended, plan, model).startswith(
        "model:\n  model_path: q/Qwen3-4B\n  tags: [a, b]  # tags\n  max_model_len: 24576\n\n# the cluster\ncluster:\n")


def test_patch_keeps_the_lines_after_a_removed_second_key_before_the_key_after_it() -> None:
    # The lines after a removed key's block go to the key before it: for the section's second key, the first.
    plan, model = sp2_plan(), catalog().model("4B")
    text = ("model:\n  model_path: q/Qwen3-4B\n  rope_scaling:\n    rope_type: yarn\n    factor: 4\n\n"
            "  # the length\n  max_model_len: 8192\n")
    assert patch_trinity_config(text, plan, model) == (
        "model:\n  model_path: q/Qwen3-4B\n\n  # the length\n  max_model_len: 24576\n"
        "trainer:\n  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 24576\n")


def test_patch_keeps_the_blank_line_after_a_removed_flag_behind_the_host_memory_comment() -> None:
    # Trinity 0.5: the trainer's 0.6 flag after trainer_strategy goes; the lines after it (blank line kept) go after
    # trainer_strategy, above which the host memory an Offload plan needs is noted on a line of its own: 0.5's figure
    # (its reference model in bf16), not the 102.2 GiB of 0.6's fp32 one that the plan, made for no release, carries.
    text = ("trainer:\n  trainer_strategy: fsdp2\n  param_offload: true\n\n  # the SP\n"
            "  ulysses_sequence_parallel_size: 1\n")
    assert long_plan().host_memory_gb == 102.2
    assert patch_trinity_config(text, long_plan(), catalog().model("4B"), version="0.5").startswith(
        "trainer:\n  # host memory: 91.7 GiB per node for Offload (at start-up, every rank loading the model; 82.8\n"
        "  #   while training); not checked: host_ram_gb not given\n"
        "  trainer_strategy: fsdp2\n\n  # the SP\n  ulysses_sequence_parallel_size: 4\n"
        "  max_token_len_per_gpu: 51200\n")


def test_patch_keeps_the_host_memory_comment_where_a_removed_rope_scaling_repeats_the_trainer() -> None:
    # model.rope_scaling is an alias of trainer, whose last key is trainer_strategy: removing the stale rope_scaling
    # looks for the lines after its block in trainer_strategy's end-of-line comment, which has none (the host memory
    # is noted on its own line above the key); the note stays there and nothing moves under max_model_len.
    plan = _best(model="4B", objective="cheapest", budget_gpus=1, exact=True, max_model_len=8192, offload=True)
    trainer = ("trainer: &t\n  ulysses_sequence_parallel_size: 1\n  max_token_len_per_gpu: 16384\n"
               "  save_hf_checkpoint: never\n  trainer_config:\n    actor_rollout_ref:\n"
               "      actor: {fsdp_config: {param_offload: true, optimizer_offload: true, offload_policy: true}}\n"
               "      ref: {fsdp_config: {param_offload: true, optimizer_offload: true, offload_policy: true}}\n")
    text = (f"{trainer}  trainer_strategy: fsdp2\n"
            "model:\n  model_path: q/Qwen3-4B\n  max_model_len: 8192\n  rope_scaling: *t\n")
    assert (plan.setting.label, plan.max_token_len_per_gpu, plan.host_memory_gb) == ("Env + Offload", 16384, 93.4)
    assert patch_trinity_config(text, plan, catalog().model("4B"), version="0.5") == (  # 0.5's need: a bf16 reference
        f"{trainer}  # host memory: 82.8 GiB per node for Offload; not checked: host_ram_gb not given\n"
        "  trainer_strategy: fsdp2\nmodel:\n  model_path: q/Qwen3-4B\n"
        "  # written for Trinity 0.5 (version=\"0.5\"), which refuses the offload flags under trainer itself;\n"
        "  #   Trinity 0.6 on verl before 0.8 replaces the roles' offload flags with trainer.param_offload,\n"
        "  #   optimizer_offload and offload_policy (false where unset): there, set those to true too\n"
        "  max_model_len: 8192\n")  # Offload for 0.5: the roles' flags alone, which 0.6 on verl before 0.8 overrides


def test_patch_fills_an_empty_section_in_place_and_keeps_the_files_last_comment_last() -> None:
    # 3 GPUs, less the one rollout engine: the plan's 2
    text = "model:\n  model_path: q/Qwen3-4B\ntrainer:\ncluster:\n  gpu_per_node: 3\n# the end\n"
    assert patch_trinity_config(text, sp2_plan(), catalog().model("4B")) == (
        "model:\n  model_path: q/Qwen3-4B\n  max_model_len: 24576\ntrainer:\n  ulysses_sequence_parallel_size: 2\n"
        "  max_token_len_per_gpu: 24576\ncluster:\n  gpu_per_node: 3\n# the end\n")


def test_patch_notes_host_memory_only_for_offload() -> None:
    # A plan without Offload that checked a node's host memory (--host-ram) still needs some while the model loads;
    # the comment beside trainer_strategy is for Offload's alone.
    plan = _best(model="4B", objective="cheapest", budget_gpus=2, exact=True, max_model_len=24576, host_ram_gb=512)
    assert (plan.offload, plan.host_memory_gb) == (False, 51.1)
    text = "model:\n  model_path: q/Qwen3-4B\ntrainer:\n  trainer_strategy: fsdp2\n"
    assert patch_trinity_config(text, plan, catalog().model("4B")) == (
        "model:\n  model_path: q/Qwen3-4B\n  max_model_len: 24576\ntrainer:\n  trainer_strategy: fsdp2\n"
        "  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 24576\n")


@pytest.mark.parametrize("indent", [" ", "  ", "    "])
def test_patch_keeps_the_indentation_of_a_list_under_an_anchored_key(indent: str) -> None:
    # The list's indentation is read from its key's line, which may end in an anchor (or a tag): before, such a line
    # was not taken for one that opens a block, and the list was written at its key's column (with a one-space
    # indentation, at a column that made it another YAML).
    text = (f"model:\n{indent}model_path: q/Qwen3-4B\nexplorer:\n{indent}auxiliary_models: &aux\n"
            f"{indent * 2}- engine_num: 1\n{indent * 2}  tensor_parallel_size: 1\n{indent}other: *aux\n")
    after = patch_trinity_config(text, sp2_plan(), catalog().model("4B"))
    assert after == (f"model:\n{indent}model_path: q/Qwen3-4B\n{indent}max_model_len: 24576\n"
                     f"{text.split(chr(10), 2)[2]}trainer:\n{indent}ulysses_sequence_parallel_size: 2\n"
                     f"{indent}max_token_len_per_gpu: 24576\n")


def test_patch_keeps_crlf_line_endings_without_a_final_newline_and_fills_an_empty_flow_section() -> None:
    model = catalog().model("4B")
    assert patch_trinity_config("model:\r\n  model_path: q/Qwen3-4B\r\n  max_model_len: 8192", sp2_plan(), model) == (
        "model:\r\n  model_path: q/Qwen3-4B\r\n  max_model_len: 24576\r\ntrainer:\r\n"
        "  ulysses_sequence_parallel_size: 2\r\n  max_token_len_per_gpu: 24576\r\n")
    assert patch_trinity_config("model:\n  max_model_len: 8192\ntrainer: {}\n", sp2_plan(), model) == (
        "model:\n  max_model_len: 24576\ntrainer:\n  ulysses_sequence_parallel_size: 2\n"
        "  max_token_len_per_gpu: 24576\n")


def test_patch_writes_the_plans_boolean_over_a_whole_number_that_equals_it() -> None:
    # long_plan (Offload): the actor's flags 1 (an anchor and its alias) are true to OmegaConf but not of the plan's
    # type: both are written as true, the anchor and its alias kept (the patch sets both to true); no anchored key is
    # named, as the value stays what the alias repeats (1 == True).
    plan, model = long_plan(), catalog().model("4B")
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: 102400\n"
            "  rope_scaling: {rope_type: yarn, factor: 2.5, original_max_position_embeddings: 40960}\n"
            "trainer:\n  trainer_strategy: fsdp2\n  ulysses_sequence_parallel_size: 4\n  trainer_config:\n"
            "    actor_rollout_ref:\n      actor:\n        fsdp_config:\n          param_offload: &on 1\n"
            "          optimizer_offload: *on\n")
    after = patch_trinity_config(text, plan, model)
    assert ("        fsdp_config:\n          param_offload: &on true\n          optimizer_offload: *on\n"
            "          offload_policy: true\n      ref:\n") in after
    assert anchored_keys(text, plan, model) == []


def test_patch_turns_back_on_a_dynamic_batch_flag_whose_text_is_the_whole_number_0() -> None:
    # OmegaConf reads the text '0' (written so, or an environment variable's) for a boolean key as false.
    plan, model = sp2_plan(), catalog().model("4B")
    for flag, environ in (("'0'", {}), ("${oc.env:DYNAMIC}", {"DYNAMIC": "0"})):
        text = f"model:\n  model_path: q/Qwen3-4B\n  max_model_len: 24576\ntrainer:\n  use_dynamic_bsz: {flag}\n"
        assert "  use_dynamic_bsz: true" in patch_trinity_config(text, plan, model, environ=environ).splitlines()


def test_patch_removes_a_yarn_rope_scaling_at_exactly_the_native_context() -> None:
    plan = _best(model="4B", objective="cheapest", budget_gpus=4, exact=True, max_model_len=40960)
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: 8192\n"
            "  rope_scaling:\n    rope_type: yarn\n    factor: 4\n")
    assert patch_trinity_config(text, plan, catalog().model("4B")) == (
        "model:\n  model_path: q/Qwen3-4B\n  max_model_len: 40960\ntrainer:\n  ulysses_sequence_parallel_size: 2\n"
        "  max_token_len_per_gpu: 40960\n")


def test_patch_keeps_a_null_rope_scaling_the_document_markers_and_the_files_way_of_writing_null() -> None:
    # sp2_plan: Qwen3-4B at 24576 tokens, within the native context: a null rope_scaling sets nothing and
    # stays, written as the file writes its nulls; the --- and ... around the document stay too. A line the patch
    # does not change stays as written (before s56, the empty null below was rewritten as the file's "null").
    before = ("---\nmodel:\n  model_path: q/Qwen3-4B\n  max_model_len: 8192\n  rope_scaling: null\n"
              "  custom_chat_template:\ntrainer:\n  ulysses_sequence_parallel_size: 1\n...\n")
    after = patch_trinity_config(before, sp2_plan(), catalog().model("4B"))
    assert after == ("---\nmodel:\n  model_path: q/Qwen3-4B\n  max_model_len: 24576\n  rope_scaling: null\n"
                     "  custom_chat_template:\ntrainer:\n  ulysses_sequence_parallel_size: 2\n"
                     "  max_token_len_per_gpu: 24576\n...\n")
    # a file without `: null`, or with one only in a comment, keeps ruamel's empty nulls
    bare = "model:\n  max_model_len: 8192\n  # rope_scaling: null\n  rope_scaling:\n"
    assert patch_trinity_config(bare, sp2_plan(), catalog().model("4B")) == (
        "model:\n  max_model_len: 24576\n  # rope_scaling: null\n  rope_scaling:\ntrainer:\n"
        "  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 24576\n")


def test_patch_keeps_the_lines_before_the_document_start_and_from_its_end_on() -> None:
    # ruamel's round trip drops the comments before a --- line and the ... line with the comments after it:
    # the patch writes them back as the file has them (a byte order mark before the --- too).
    before = ("\ufeff# Qwen3-4B, GRPO\n\n# owner: the RL team\n---\nmodel:\n  model_path: q/Qwen3-4B\n"
              "  max_model_len: 8192\n... # end of the config\n# trainer:\n#   save_interval: 100\n")
    after = patch_trinity_config(before, sp2_plan(), catalog().model("4B"))
    assert after == ("\ufeff# Qwen3-4B, GRPO\n\n# owner: the RL team\n---\nmodel:\n  model_path: q/Qwen3-4B\n"
                     "  max_model_len: 24576\ntrainer:\n  ulysses_sequence_parallel_size: 2\n"
                     "  max_token_len_per_gpu: 24576\n... # end of the config\n# trainer:\n#   save_interval: 100\n")
    bom = "\ufeff---\nmodel:\n  max_model_len: 8192\n"
    assert patch_trinity_config(bom, sp2_plan(), catalog().model("4B")) == (
        "\ufeff---\nmodel:\n  max_model_len: 24576\ntrainer:\n  ulysses_sequence_parallel_size: 2\n"
        "  max_token_len_per_gpu: 24576\n")


def test_patch_keeps_an_interpolation_that_gives_the_plans_value() -> None:
    # ${oc.env:MAX_MODEL_LEN,4096} gives 4096 without the variable, the plan's length: it stays, and the
    # note says so; with MAX_MODEL_LEN=8192 set, it gives another length and becomes the plan's number.
    plan = _best(model="4B", objective="cheapest", budget_gpus=4, exact=True, max_model_len=4096)
    before, model = _user_config(plan), catalog().model("4B")
    after = patch_trinity_config(before, plan, model, environ={})
    assert "  max_model_len: ${oc.env:MAX_MODEL_LEN,4096}  # prompt + response\n" in after
    assert read_trinity_config(after, "patched.yaml", {}).max_model_len == 4096
    assert kept_interpolations(before, plan, model, environ={}) == [(
        "model.max_model_len stays ${oc.env:MAX_MODEL_LEN,4096}, which gives 4096 in this environment: the plan "
        "holds for that value")]
    elsewhere = {"MAX_MODEL_LEN": "8192"}
    assert "  max_model_len: 4096  # prompt + response\n" in patch_trinity_config(before, plan, model, environ=elsewhere)
    assert kept_interpolations(before, plan, model, environ=elsewhere) == []


def test_patch_keeps_only_interpolations_that_trinity_reads_as_the_plans_values() -> None:
    # long_plan: Qwen3-4B at 102400 tokens (YaRN factor 2.5), Env + Offload + SP=4 on 4 GPUs.
    plan, model = long_plan(), catalog().model("4B")
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: &len ${oc.env:LEN,102400}\n"
            "  max_response_tokens: *len\n"
            "  rope_scaling:\n    rope_type: ${oc.env:RT,yarn}\n    factor: ${oc.env:F,2.5}\n"
            "    original_max_position_embeddings: ${oc.decode:${oc.env:O,40960}}\n"
            "trainer:\n  ulysses_sequence_parallel_size: ${oc.env:SP,4}\n  trainer_strategy: fsdp2\n"
            "  trainer_config:\n    actor_rollout_ref:\n      actor:\n        fsdp_config:\n"
            "          param_offload: ${oc.env:OFF,True}\n")
    environ = {"RT": "YaRN"}
    after = _safe_load(patch_trinity_config(text, plan, model, environ=environ))
    rope = after["model"]["rope_scaling"]
    # A string in rope_scaling (an untyped dict) stays a string: the factor is written as a number; the case
    # of rope_type matters; oc.decode gives a number, which stays.
    assert rope == {"rope_type": "yarn", "factor": 2.5,
                    "original_max_position_embeddings": "${oc.decode:${oc.env:O,40960}}", "rope_theta": 1000000}
    assert after["model"]["max_model_len"] == "${oc.env:LEN,102400}"  # typed keys: their text is enough
    assert after["trainer"]["ulysses_sequence_parallel_size"] == "${oc.env:SP,4}"
    assert after["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["fsdp_config"]["param_offload"] == \
        "${oc.env:OFF,True}"
    assert kept_interpolations(text, plan, model, environ=environ) == [
        ("model.max_model_len stays ${oc.env:LEN,102400}, which gives 102400 in this environment: the plan holds for "
         "that value"),
        ("model.rope_scaling.original_max_position_embeddings stays ${oc.decode:${oc.env:O,40960}}, which gives 40960 "
         "in this environment: the plan holds for that value"),
        ("trainer.ulysses_sequence_parallel_size stays ${oc.env:SP,4}, which gives 4 in this environment: the plan "
         "holds for that value"),
        ("trainer.trainer_config.actor_rollout_ref.actor.fsdp_config.param_offload stays ${oc.env:OFF,True}, which "
         "gives True in this environment: the plan holds for that value")]
    assert anchored_keys(text, plan, model, environ=environ) == []  # the anchored length is kept, not changed
    # oc.decode giving a float, not the whole number the patch sets there: it is written
    floated = text.replace("${oc.env:O,40960}", "${oc.env:O,40960.0}")
    rope = _safe_load(patch_trinity_config(floated, plan, model, environ=environ))["model"]["rope_scaling"]
    assert rope["original_max_position_embeddings"] == 40960
    # Dynamic batch sizes turned off through an anchored interpolation: the patch turns them on, the alias not.
    dynamic = text + "  use_dynamic_bsz: &dyn ${oc.env:DYN,true}\nkeep: *dyn\n"
    assert anchored_keys(dynamic, plan, model, environ={**environ, "DYN": "false"})[-1] == (
        "trainer.use_dynamic_bsz is the anchor &dyn, which other keys repeat (*dyn): the patch sets it to true and "
        "leaves keep at ${oc.env:DYN,true} (the anchor moves there)")
    assert anchored_keys(text, plan, model, environ={"LEN": "65536"}) == [
        ("model.max_model_len is the anchor &len, which other keys repeat (*len): the patch sets it to 102400 and "
         "leaves model.max_response_tokens at ${oc.env:LEN,102400} (the anchor moves there)")]


def test_an_anchored_value_the_plan_keeps_stays_anchored_where_it_was() -> None:
    # The plan's length is the config's: the key is left as it is, so its anchor does not move to the alias.
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: &len 102400\n"
            "explorer:\n  rollout_model:\n    max_model_len: *len\n"
            "trainer:\n  trainer_config:\n    actor_rollout_ref:\n      actor:\n        fsdp_config:\n"
            "          offload_policy: &on true\n      ref:\n        fsdp_config:\n          offload_policy: *on\n")
    after = patch_trinity_config(text, long_plan(), catalog().model("4B"))
    assert "  max_model_len: &len 102400\n" in after and "    max_model_len: *len\n" in after
    assert "          offload_policy: &on true\n" in after and "          offload_policy: *on\n" in after  # a boolean too


def test_an_anchor_no_alias_repeats_stays_where_it_was() -> None:
    # A mapping's or sequence's anchor that nothing repeats (yet) is the user's, as a scalar's is: ruamel writes
    # those only where an alias repeats them, so the patch marks them to be kept, also in what it changes.
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: 102400\n"
            "defaults: &defaults\n  seed: 1\nstages: &stages [a, b]\nscale: &scale 5\n"
            "trainer:\n  trainer_config:\n    actor_rollout_ref:\n      actor: &actor\n        fsdp_config:\n"
            "          param_offload: false\n")
    after = patch_trinity_config(text, long_plan(), catalog().model("4B"))
    assert ["defaults: &defaults", "stages: &stages [a, b]", "scale: &scale 5", "      actor: &actor",
            "          param_offload: true", "          param_offload: true", "  param_offload: true"] == [
        line for line in after.splitlines() if "&" in line or "param_" in line]  # the actor's, ref's and trainer's


def test_an_anchor_inside_a_sequence_is_kept_and_aliases_of_aliases_are_walked_once() -> None:
    # A mapping's anchor inside a sequence is the user's too; and anchors whose aliases repeat aliases (2**40 paths
    # through l40) are each marked once, not once per path (the walk would not end).
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: 102400\nstages:\n  - &first {seed: 1}\n  - {seed: 2}\n"
            "l0: &l0 {seed: 0}\n" + "".join(f"l{i}: &l{i} [*l{i - 1}, *l{i - 1}]\n" for i in range(1, 41)))
    after = patch_trinity_config(text, long_plan(), catalog().model("4B"))
    assert "stages:\n  - &first {seed: 1}\n  - {seed: 2}\nl0: &l0 {seed: 0}\nl1: &l1 [*l0, *l0]\n" in after
    assert "l40: &l40 [*l39, *l39]\n" in after


def test_a_comment_after_an_anchor_stays_beside_it() -> None:
    # ruamel writes a comment that follows a mapping's anchor on a line of its own below it: the patch puts it back,
    # for a key's anchor and a list item's alike, and patching again changes nothing.
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: 102400\nstages:\n  - &first   # the first stage\n"
            "    seed: 1\n  - *first\ntrainer:\n  trainer_config:\n    actor_rollout_ref:\n      actor:\n"
            "        fsdp_config: &fsdp  # shared by actor and ref\n          param_offload: false\n"
            "      ref:\n        fsdp_config: *fsdp\n")
    after = patch_trinity_config(text, long_plan(), catalog().model("4B"))
    assert "  - &first   # the first stage\n    seed: 1\n  - *first\n" in after
    assert "        fsdp_config: &fsdp  # shared by actor and ref\n          param_offload: true\n" in after
    # the user's comments once each, and added: the host memory one and the note on Trinity 0.6's flags (2 lines
    # each: the host memory's start-up peak and its training need)
    assert after.count("#") == 4 + text.count("#")
    assert patch_trinity_config(after, long_plan(), catalog().model("4B")) == after


def test_an_anchor_and_comment_that_ruamel_writes_unmoved_are_left_as_they_are() -> None:
    # Lines of an anchor and a comment that ruamel does not move, so nothing is put back: text in a block scalar,
    # written as it was, and an anchored rope_scaling that the patch removes along with its comment (within the
    # native context, a kept YaRN factor would contradict the new length).
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: 8192\n  rope_scaling: &rope  # from the long run\n"
            "    rope_type: yarn\n    factor: 4\nnote: |\n  fsdp_config: &fsdp  # not YAML here\n  plain text\n")
    assert patch_trinity_config(text, sp2_plan(), catalog().model("4B")) == (
        "model:\n  model_path: q/Qwen3-4B\n  max_model_len: 24576\nnote: |\n  fsdp_config: &fsdp  # not YAML here\n"
        "  plain text\ntrainer:\n  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 24576\n")


@pytest.mark.parametrize("make", [vanilla_plan, sp2_plan, long_plan])
def test_patched_user_config_reads_back_and_passes_the_checks(make: Any) -> None:
    plan, model = make(), catalog().model("4B")
    before = _user_config(plan)
    after = patch_trinity_config(before, plan, model)
    config = read_trinity_config(after, "patched.yaml", {})
    assert (config.max_model_len, config.sp, config.offload, config.max_token_len_per_gpu) == (
        plan.max_model_len,
        plan.sp,
        plan.offload,
        plan.max_token_len_per_gpu,
    )
    assert check_trinity_config(_safe_load(after), model, plan.gpus) == []
    assert patch_trinity_config(after, plan, model) == after  # patching is idempotent


def test_patch_without_offload_turns_existing_flags_off_and_adds_none() -> None:
    before = (
        "model:\n  model_path: m\n  max_model_len: 1000\n"
        "trainer:\n  trainer_strategy: fsdp2\n  trainer_config:\n    actor_rollout_ref:\n      actor:\n"
        "        fsdp_config:\n          param_offload: true  # keep this comment\n"
        "          offload_policy: true\n# the end\n"
    )
    after = patch_trinity_config(before, vanilla_plan(), catalog().model("4B"))
    assert after == (
        "model:\n  model_path: m\n  max_model_len: 8192\n"
        "trainer:\n  trainer_strategy: fsdp2\n  ulysses_sequence_parallel_size: 1\n  max_token_len_per_gpu: 16384\n"
        "  trainer_config:\n    actor_rollout_ref:\n      actor:\n"
        "        fsdp_config:\n          param_offload: false  # keep this comment\n"
        "          offload_policy: false\n# the end\n"
    )


def test_patch_sets_the_offload_flags_under_fsdp_config_and_the_engines_alike() -> None:
    # Trinity reads a role's fsdp_config, never its engine: the flags go in fsdp_config, and those a config has in
    # engine are said alike (on with Offload; the actor's off without), so that none says otherwise.
    model = catalog().model("4B")
    after = patch_trinity_config(_ENGINE_CONFIG, long_plan(), model)
    roles = _safe_load(after)["trainer"]["trainer_config"]["actor_rollout_ref"]
    on = {"param_offload": True, "optimizer_offload": True, "offload_policy": True}
    assert roles["actor"] == {"engine": {"param_offload": True, "optimizer_offload": True}, "fsdp_config": on}
    assert roles["ref"] == {"engine": {"param_offload": True}, "fsdp_config": on}
    assert read_trinity_config(after, "t.yaml", {}).offload
    # Without Offload the actor's flags go off; the reference model stays offloaded (the memory model counts no
    # reference model on the GPU).
    roles = _safe_load(patch_trinity_config(after, vanilla_plan(), model))["trainer"]["trainer_config"]["actor_rollout_ref"]
    assert roles["actor"] == {"engine": {"param_offload": False, "optimizer_offload": False},
                              "fsdp_config": dict.fromkeys(on, False)}
    assert roles["ref"] == {"engine": {"param_offload": True}, "fsdp_config": on}
    # An fsdp_config that is null beside an engine is filled in.
    null = _ENGINE_CONFIG.replace("actor: {engine:", "actor: {fsdp_config: null, engine:")
    roles = _safe_load(patch_trinity_config(null, long_plan(), model))["trainer"]["trainer_config"]["actor_rollout_ref"]
    assert roles["actor"]["fsdp_config"] == on


def test_patch_adds_missing_sections_whole_before_the_final_comment() -> None:
    before = (
        "---\nmodel:\n    model_path: /models/Qwen3-4B/\n"
        "buffer:\n    items:\n    - a\n    - b   # bb\n\n# end of file\n"
    )
    after = patch_trinity_config(before, long_plan(), catalog().model("4B"))
    assert after.startswith("---\nmodel:\n    model_path: /models/Qwen3-4B/\n    max_model_len: 102400\n")
    assert ("    items:\n    - a\n    - b   # bb\ntrainer:\n    # host memory: 102.2 GiB per node for Offload (at "
            "start-up, every rank loading the model; 93.4\n    #   while training); not checked: host_ram_gb not given\n"
            "    trainer_strategy: fsdp2\n") in after
    assert after.endswith("                    offload_policy: true\n\n# end of file\n")
    assert check_trinity_config(_safe_load(after), catalog().model("4B"), 4) == [f"buffer.items: {NO_SUCH_KEY}"]


def test_patch_notes_an_offload_plans_host_memory_on_its_own_line_above_trainer_strategy() -> None:
    # --emit's header line, on a line of its own above trainer_strategy (beside it, it read as a comment on that key):
    # replaced by a later --write's (the need changes with the plan), removed by one without Offload, and the same
    # again on a second --write of the same plan; the lines after the block stay after it.
    model, plan = catalog().model("4B"), long_plan()
    fragment = trinity_fragment(plan, model, 2)
    header = ("# host memory: 102.2 GiB per node for Offload (at start-up, every rank loading the model; 93.4 while\n"
              "# training); not checked: --host-ram not given")
    assert f"\n{header}\n" in fragment

    def note(indent: str, eol: str = "\n") -> str:
        """The note --write leaves above trainer_strategy, at `indent`, wrapped with its hanging indentation."""
        return (f"{indent}# host memory: 102.2 GiB per node for Offload (at start-up, every rank loading the model; "
                f"93.4{eol}{indent}#   while training); not checked: --host-ram not given{eol}")

    before = "trainer:\n  x: 1\n  trainer_strategy: fsdp2\n\n# Monitoring\nmonitor: {}\n"
    once = patch_trinity_config(before, plan, model, option_names=COMMAND_OPTIONS)  # as --write
    assert once.startswith(f"trainer:\n  x: 1\n{note('  ')}  trainer_strategy: fsdp2\n  ulysses_sequence_parallel_size")
    assert once.count("host memory") == 1
    assert patch_trinity_config(once, plan, model, option_names=COMMAND_OPTIONS) == once
    again = patch_trinity_config(once, plan, model, version="0.5", host_ram_gb=512.0,  # 0.5's need: 91.7
                                 option_names=COMMAND_OPTIONS)
    assert ("\n  # host memory: 91.7 GiB per node for Offload (at start-up, every rank loading the model; 82.8\n"
            "  #   while training), within --host-ram 512 GiB\n  trainer_strategy: fsdp2\n" in again)
    assert again.count("host memory") == 1 and "\n\n# Monitoring\nmonitor: {}\n" in again
    without = patch_trinity_config(again, sp2_plan(), model, option_names=COMMAND_OPTIONS)
    assert "host memory" not in without and "  x: 1\n  trainer_strategy: fsdp2\n" in without
    assert "\n\n# Monitoring\nmonitor: {}\n" in without
    # The note as earlier releases wrote it, beside the key, moves above it; a comment of the user's own there stays,
    # as does the fragment's header line, which is not above trainer_strategy; CRLF and 4-space files alike.
    beside = patch_trinity_config("trainer:\n  trainer_strategy: fsdp2  # host memory: 1.0 GiB per node for Offload\n"
                                  "\n# Monitoring\nmonitor: {}\n", plan, model, option_names=COMMAND_OPTIONS)
    assert beside.startswith(f"trainer:\n{note('  ')}  trainer_strategy: fsdp2\n") and beside.count("host memory") == 1
    assert "\n\n# Monitoring\nmonitor: {}\n" in beside
    mine = patch_trinity_config(f"{header}\ntrainer:\n    trainer_strategy: fsdp2  # mine\n", plan, model,
                                option_names=COMMAND_OPTIONS)
    assert mine.startswith(f"{header}\ntrainer:\n{note('    ')}    trainer_strategy: fsdp2  # mine\n")
    crlf = patch_trinity_config("trainer:\r\n  trainer_strategy: fsdp2\r\n", plan, model, option_names=COMMAND_OPTIONS)
    assert crlf.startswith(f"trainer:\r\n{note('  ', chr(13) + chr(10))}  trainer_strategy: fsdp2\r\n")
    assert patch_trinity_config(crlf, plan, model, option_names=COMMAND_OPTIONS) == crlf
    # A flow-style trainer, on one line, gets none (it would end the line).
    flow = patch_trinity_config("trainer: {trainer_strategy: fsdp2}\n", plan, model, option_names=COMMAND_OPTIONS)
    assert "#" not in flow and _safe_load(flow)["trainer"]["trainer_strategy"] == "fsdp2"


def test_the_fragment_s_host_memory_line_says_whether_the_host_memory_given_holds_it() -> None:
    # As the plan summary's host memory row: within the host memory the plan was held to (named by where it came
    # from), or not checked where none was given; a plan without a host memory need says nothing of it.
    model, plan = catalog().model("4B"), long_plan()

    def host_line(**host_ram: Any) -> str:
        """The fragment's host memory line, and the one it wraps onto (the 102.2 GiB is the start-up load's)."""
        lines = trinity_fragment(plan, model, **host_ram).splitlines()
        start = next(index for index, line in enumerate(lines) if "host memory" in line)
        return " ".join(lines[start:start + 2]).replace(" # ", " ")

    moment = ("# host memory: 102.2 GiB per node for Offload (at start-up, every rank loading the model; 93.4 while "
              "training)")
    assert host_line() == f"{moment}; not checked: --host-ram not given"
    assert host_line(host_ram_gb=512.0) == f"{moment}, within --host-ram 512 GiB"
    assert host_line(host_ram_gb=110.5, host_ram_source="the pool's host_ram_gb") == (
        f"{moment}, within the pool's host_ram_gb of 110.5 GiB")
    assert "host memory" not in trinity_fragment(sp2_plan(), model, host_ram_gb=512.0)
    for bad, fragments, patches in ((0.0, "--host-ram must be above 0", "host_ram_gb must be above 0"),
                                    ("512", "host_ram_gb must be a number or None", "host_ram_gb must be a number")):
        with pytest.raises(QueryError, match=fragments):  # the fragment's default words are the command's
            trinity_fragment(plan, model, host_ram_gb=bad)
        with pytest.raises(QueryError, match=patches):  # the patch's, the API's
            patch_trinity_config("trainer: {}\n", plan, model, host_ram_gb=bad)


def test_patch_keeps_flow_style_and_extra_rope_keys() -> None:
    before = "model:\n  model_path: x\n  rope_scaling: {rope_type: yarn, factor: 2.0, mscale: 1}\n"
    after = patch_trinity_config(before, long_plan(), catalog().model("4B"))
    assert ("  rope_scaling: {rope_type: yarn, factor: 2.5, mscale: 1, original_max_position_embeddings: 40960, "
            "rope_theta: 1000000}\n") in after
    # The model cards' key for the type (``type``) stays, and rope_type joins it, which the rollout's vLLM reads alone
    # as Trinity hands it the mapping (s73; a YaRN that reaches the length is kept: this one reaches 65536), right
    # after it (s74).
    before = ("model:\n  model_path: x\n"
              "  rope_scaling: {type: yarn, factor: 2.0, original_max_position_embeddings: 32768}\n")
    after = patch_trinity_config(before, long_plan(), catalog().model("4B"))
    assert ("  rope_scaling: {type: yarn, rope_type: yarn, factor: 2.5, original_max_position_embeddings: 40960, "
            "rope_theta: 1000000}\n" in after)
    assert check_trinity_config(_safe_load(after), catalog().model("4B"), 4) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("model: [1\n", "user.yaml: at the end of the file: malformed YAML"),
        ("- a\n", "user.yaml: a Trinity config is a mapping"),
        ("model:\n  model_path: x\ntrainer: 5\n", "user.yaml: trainer must be a mapping, got 5"),
        ("model:\n  model_path: x\n  rope_scaling: {rope_type: yarn}\ntrainer:\n  trainer_config: cfg.yaml\n",
         "user.yaml: trainer.trainer_config must be a mapping, got 'cfg.yaml'"),
    ],
)
def test_patch_errors(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        patch_trinity_config(text, long_plan(), catalog().model("4B"), name="user.yaml")
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith(expected)


# --------------------------------------------------------------------------------------------------
# check_trinity_config


def _config(**trainer: Any) -> dict[str, Any]:
    return {"model": {"max_model_len": 8192}, "trainer": {"ulysses_sequence_parallel_size": 2, **trainer}}


@pytest.mark.parametrize(
    ("mapping", "model", "gpus", "expected"),
    [
        (_config(), "4B", 6, []),
        (_config(), "4B", 3, ["trainer.ulysses_sequence_parallel_size: SP=2 does not divide 3 GPUs (the trainer's)"]),
        (
            {"trainer": {"ulysses_sequence_parallel_size": 16}},
            "14B",
            16,
            ["trainer.ulysses_sequence_parallel_size: SP=16 does not divide its 40 attention heads of Qwen3-14B"],
        ),
        (
            {"trainer": {"ulysses_sequence_parallel_size": 20}},
            "14B",
            20,
            ["trainer.ulysses_sequence_parallel_size: SP=20 and its 8 KV heads do not divide one another of Qwen3-14B"],
        ),
        (
            _config(max_token_len_per_gpu=4095),
            "4B",
            2,
            [("trainer.max_token_len_per_gpu 4095 x SP 2 is below model.max_model_len 8192: verl 0.8 or later stops at "
              "the first sequence longer than that, and Trinity with verl before 0.8 raises it to ceil(8192 / 2) = 4096 "
              "(Trinity 0.5.0 to its default, ceil(2 x 8192 / 2) = 8192)"),
             "trainer.max_token_len_per_gpu as Trinity 0.5.1 raises it, 4096 x SP 2 = 8192 tokens, holds every"],
        ),
        (_config(max_token_len_per_gpu=4096), "4B", 2, []),  # below Trinity's default 8192, but legal
        (
            {"model": {"max_model_len": 8192}, "trainer": {"trainer_config": {"actor_rollout_ref": {
                "actor": {"ppo_max_token_len_per_gpu": 4096}}}}},
            "4B",
            1,
            [("trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu 4096 x SP 1 is below "
              "model.max_model_len 8192: Trinity with verl before 0.8 raises it to ceil(8192 / 1) = 8192 (Trinity "
              "0.5.0 to its default, ceil(2 x 8192 / 1) = 16384), and Trinity 0.6 on verl 0.8 or later ignores the "
              "key"),
             ("trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu as Trinity 0.5.1 raises it, "
              "8192 x SP 1 = 8192 tokens, holds every sequence")],
        ),
        (
            {"model": {"max_model_len": 4096, "max_prompt_tokens": 2048, "max_response_tokens": 4096}},
            "4B",
            1,
            [("model.max_prompt_tokens 2048 + model.max_response_tokens 4096 = 6144, above model.max_model_len 4096, "
              "which Trinity refuses to load: lower them, or plan for 6144 tokens or more (--len 6144)")],
        ),
        (
            {"model": {"max_model_len": 4096, "max_prompt_tokens": -5, "max_response_tokens": 1024}},
            "4B",
            1,
            ["model.max_prompt_tokens must be at least 0, got -5"],
        ),
        (  # a million tokens in digits, not 1.04858e+06
            {"model": {"max_model_len": 1048576, "max_prompt_tokens": 99999999, "max_response_tokens": 8192,
                       "rope_scaling": {"rope_type": "yarn", "factor": 25.6, "original_max_position_embeddings": 40960}},
             "trainer": {"max_token_len_per_gpu": 2000000}},
            "4B",
            1,
            [("model.max_prompt_tokens 99999999 + model.max_response_tokens 8192 = 100008191, above "
              "model.max_model_len 1048576"), NO_THETA],
        ),
        ({"model": {"max_model_len": 81920}}, "4B", 1, ["model.rope_scaling: max_model_len 81920 is beyond"]),
        ({"model": {"max_model_len": 4096}, "trainer": {"use_dynamic_bsz": "maybe"}}, "4B", 1,
         ["trainer.use_dynamic_bsz must be true or false, got 'maybe': Trinity refuses the config"]),
        ({"model": {"max_model_len": 4096}, "trainer": {"use_dynamic_bsz": "Yes"}}, "4B", 1, []),
        # text that OmegaConf takes for the whole number 0, which a boolean field reads as false
        ({"model": {"max_model_len": 4096}, "trainer": {"use_dynamic_bsz": "0"}}, "4B", 1,
         ["trainer.use_dynamic_bsz is false: verl then ignores the token budget",  # and PPO's critic's forward,
          "trainer.trainer_config.critic.forward_micro_batch_size_per_gpu is not set: Trinity 0.5, and 0.6 on verl",
          # and its engine's (critic87)
          "trainer.trainer_config.critic.fsdp.micro_batch_size_per_gpu and trainer.trainer_config.critic.fsdp.infer"]),
        # text that a typed field takes as a number (OmegaConf converts it with int()), not a problem
        ({"model": {"max_model_len": 4096}, "trainer": {"max_token_len_per_gpu": " 16384 "}}, "4B", 1, []),
        ({"model": {"max_model_len": 4096}, "trainer": {"max_token_len_per_gpu": "016384"}}, "4B", 1, []),
        ({"model": {"max_model_len": 4096, "rope_scaling": "yarn"}}, "4B", 1,  # Trinity refuses it at any length
         ["model.rope_scaling must be a mapping, got 'yarn': remove it"]),
        ({"model": {"max_model_len": 81920, "rope_scaling": "yarn"}}, "4B", 1,
         [("model.rope_scaling must be a mapping, got 'yarn': set {rope_type: yarn, factor: 2.0, "
           "original_max_position_embeddings: 40960, rope_theta: 1000000}")]),
        (
            {"model": {"max_model_len": 81920, "rope_scaling": {"rope_type": "yarn", "factor": 2.5,
                                                                "original_max_position_embeddings": 32768}}},
            "4B",
            1,
            [NO_THETA, ("model.rope_scaling (factor 2.5 over 32768) covers the length, but not as Trinity-RFT's guide "
                        "sets it, factor max_model_len / 40960 = 2.0 over 40960")],
        ),
        (
            {"model": {"max_model_len": 81920, "rope_scaling": {
                "rope_type": "linear", "factor": 2.0, "original_max_position_embeddings": 40960}}},
            "4B",
            1,
            [NO_THETA, "model.rope_scaling.rope_type must be yarn, got 'linear'"],
        ),
        (
            {"model": {"max_model_len": 81920, "rope_scaling": {"rope_type": "yarn"}}},
            "4B",
            1,
            # the rollout's vLLM reads it as given, and fails without its factor (s73); the factor the length needs
            [NO_THETA, ("model.rope_scaling: missing factor: vLLM 0.19.1 refuses rope_type yarn without it, and fails "
                        "as it starts, as Trinity hands vLLM the mapping as the model's rope_parameters, past "
                        "transformers' filling-in; add it"),
             "model.rope_scaling.factor must be max_model_len / 40960 = 2.0, not given"],
        ),
        (  # too small a factor: the positions stop short of the length (no rollout: a vLLM one refuses it)
            {"mode": "train",
             "model": {"max_model_len": 81920, "rope_scaling": {"rope_type": "yarn", "factor": 1.5,
                                                                "original_max_position_embeddings": 40960}}},
            "4B",
            1,
            [NO_THETA, ("model.rope_scaling (factor 1.5 over 40960) covers 61440 tokens, fewer than max_model_len "
                        "81920: set it as Trinity-RFT's guide does, factor max_model_len / 40960 = 2.0 over 40960")],
        ),
        (
            {"model": {"max_model_len": "${oc.env:L,81920}",
                       "rope_scaling": {"rope_type": "yarn", "factor": "${oc.decode:${oc.env:F,2.0}}",
                                        "original_max_position_embeddings": 40960}}},
            "4B",
            1,
            [NO_THETA],
        ),
        (  # oc.env gives text, which rope_scaling (an untyped dict) passes on as it is; oc.decode gives numbers
            {"model": {"max_model_len": 51200, "rope_scaling": {"rope_type": "yarn", "factor": "${oc.env:F,1.25}",
                                                                "original_max_position_embeddings": "40960"}}},
            "4B",
            1,
            [NO_THETA, "model.rope_scaling.factor is the text '1.25': model.rope_scaling reaches the model as written",
             "model.rope_scaling.original_max_position_embeddings is the text '40960'"],
        ),
        (  # YaRN within the native context
            {"model": {"max_model_len": 32768, "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                                                                "original_max_position_embeddings": 40960}}},
            "4B", 1, ["model.rope_scaling: max_model_len 32768 is within Qwen3-4B's native context of 40960"],
        ),
        ({"model": {"max_model_len": "${oc.env:L}"}}, "4B", 1, ["cannot check model.max_model_len: environment"]),
        (  # a YaRN factor that cannot be read is one problem, not also a wrong factor
            {"model": {"max_model_len": 65536, "rope_scaling": {"rope_type": "yarn", "factor": "${oc.env:FACTOR}",
                                                                "original_max_position_embeddings": 40960}}},
            "4B", 1, [NO_THETA, "cannot check model.rope_scaling.factor: environment variable FACTOR is not set"],
        ),
        (  # a YaRN type that cannot be read is one problem: not twice, nor also "must be yarn"
            {"model": {"max_model_len": 81920, "rope_scaling": {"rope_type": "${oc.env:RT}", "factor": 2.0,
                                                                "original_max_position_embeddings": 40960}}},
            "4B", 1, ["cannot check model.rope_scaling.rope_type: environment variable RT is not set", NO_THETA],
        ),
        (  # the same with the model cards' key, type
            {"model": {"max_model_len": 81920, "rope_scaling": {"type": "${oc.env:RT}", "factor": 2.0,
                                                                "original_max_position_embeddings": 40960}}},
            "4B", 1, ["cannot check model.rope_scaling.type: environment variable RT is not set", NO_THETA],
        ),
        (  # a dynamic batch flag that cannot be read is one problem, however often the checks look at it
            {"trainer": {"use_dynamic_bsz": "${oc.env:DYNAMIC}"}},
            "4B", 1, ["cannot check trainer.use_dynamic_bsz: environment variable DYNAMIC is not set"],
        ),
        (
            {"trainer": {"trainer_config": {"actor_rollout_ref": {"ref": {"fsdp_config": {"offload_policy": True}}}}}},
            "4B",
            1,
            ["trainer.trainer_config.actor_rollout_ref.ref.fsdp_config.offload_policy needs trainer.trainer_strategy fsdp2"],
        ),
        (  # a flag in engine, which nothing reads, breaks no rule
            {"trainer": {"trainer_config": {"actor_rollout_ref": {"actor": {"engine": {"offload_policy": True}}}}}},
            "4B",
            1,
            [],
        ),
        (  # Trinity 0.6's own flag under fsdp: 0.6 offloads under fsdp2 only
            {"trainer": {"trainer_strategy": "fsdp", "offload_policy": True}},
            "4B",
            1,
            ["trainer.offload_policy needs trainer.trainer_strategy fsdp2, got 'fsdp'"],
        ),
        (  # on as OmegaConf reads a boolean (Trinity's TrainerConfig types it bool): 1, and y as text
            {"trainer": {"trainer_strategy": "fsdp", "offload_policy": 1, "trainer_config": {"actor_rollout_ref": {
                "ref": {"fsdp_config": {"offload_policy": "y"}}}}}},
            "4B",
            1,
            ["trainer.offload_policy needs trainer.trainer_strategy fsdp2, got 'fsdp'",
             "trainer.trainer_config.actor_rollout_ref.ref.fsdp_config.offload_policy needs trainer.trainer_strategy"],
        ),
        ({"trainer": {"trainer_strategy": "fsdp", "offload_policy": 0, "trainer_config": {"actor_rollout_ref": {
            "ref": {"fsdp_config": {"offload_policy": "n"}}}}}}, "4B", 1,
         # checks90: the text 'n' is false to OmegaConf, true to verl 0.8, which takes the ref's engine key as written
         [("trainer.trainer_config.actor_rollout_ref.ref.fsdp_config.offload_policy is the text 'n', which OmegaConf's "
           "bool field reads as false, but Trinity 0.6 on verl 0.8 or later hands it to verl as written, which reads "
           "it as true")]),
        (  # deprecated, and refused or never read
            {"trainer": {"trainer_config_path": "verl.yaml"}},
            "4B",
            1,
            [("trainer.trainer_config_path is deprecated: Trinity refuses it where trainer.trainer_config is empty "
              "(0.5, and 0.6 on verl before 0.8) and otherwise never reads it; move its settings under "
              "trainer.trainer_config")],
        ),
        ({"cluster": {"gpu_per_node": 8}}, "4B", 12, ["12 GPUs span nodes of 8 (cluster.gpu_per_node) but are not whole nodes"]),
        ({"cluster": {"gpu_per_node": 0.5}}, "4B", 12,  # OmegaConf's int field refuses a float (session 67)
         [f"cluster.gpu_per_node must be a whole number, got 0.5: {INT_FIELD_REFUSES}"]),
        ({"cluster": {"gpu_per_node": -8}}, "4B", 12, ["cluster.gpu_per_node must be a whole number of at least 1, got -8"]),
        ({"cluster": {"gpu_per_node": 0}}, "4B", 12,
         ["cluster.gpu_per_node must be a whole number of at least 1, got 0"]),
        ({"cluster": {"gpu_per_node": 2.5}}, "4B", 12,  # int() would make it 2, which 12 GPUs fill whole
         [f"cluster.gpu_per_node must be a whole number, got 2.5: {INT_FIELD_REFUSES}"]),
        ({"trainer": {"ulysses_sequence_parallel_size": 0}}, "4B", 4,  # said once, then taken as 1
         ["trainer.ulysses_sequence_parallel_size must be at least 1, got 0" + TRAINER_SP_SET_TO_1]),
        ({}, "4B", 0, ["the trainer needs at least 1 GPU, got 0"]),
        ({"model": {"max_model_len": True}}, "4B", 1,
         [f"model.max_model_len must be a whole number, got true: {INT_FIELD_REFUSES}"]),
        ({"model": {"max_model_len": 4096, "max_prompt_tokens": 0, "max_response_tokens": 4096}}, "4B", 1, []),
        ({"model": {"max_model_len": 4096, "max_prompt_tokens": 1024, "max_response_tokens": -1}}, "4B", 1,
         ["model.max_response_tokens must be at least 0, got -1"]),
        (  # YaRN at the native context itself: not needed there either
            {"model": {"max_model_len": 40960,
                       "rope_scaling": {"rope_type": "yarn", "factor": 1.0, "original_max_position_embeddings": 40960}}},
            "4B", 1, ["model.rope_scaling: max_model_len 40960 is within Qwen3-4B's native context of 40960"],
        ),
        (  # a missing original length is said once: the rollout's vLLM, reading it as given, fails without it (s73)
            {"model": {"max_model_len": 81920, "rope_scaling": {"rope_type": "yarn", "factor": 2.0}}},
            "4B", 1, [NO_THETA, ("model.rope_scaling: missing original_max_position_embeddings: vLLM 0.19.1 refuses "
                                 "rope_type yarn without it, and fails as it starts, as Trinity hands vLLM the mapping "
                                 "as the model's rope_parameters, past transformers' filling-in; add "
                                 "original_max_position_embeddings: 40960")],
        ),
        (  # the model's own RoPE scaling, as written (whole, with the original length vLLM reads), is kept; but
            # without model.rope_theta vLLM rotates Llama at its class's 10000, not 500000 (s73)
            {"model": {"max_model_len": 4096, "rope_scaling": {"rope_type": "llama3", "factor": 8.0,
                                                               "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                                               "original_max_position_embeddings": 8192}}},
            "llama-3.1-8b", 8, [NO_THETA, "model.rope_scaling is given and model.rope_theta is not"],
        ),
        (  # given model.rope_theta: nothing
            {"model": {"max_model_len": 4096, "rope_theta": 500000,
                       "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                        "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}},
            "llama-3.1-8b", 8, [NO_THETA],
        ),
        (  # YaRN over the model's own scaling is to remove: said once, not also as YaRN within the native context
            {"model": {"max_model_len": 4096, "rope_theta": 500000,
                       "rope_scaling": {"rope_type": "yarn", "factor": 2.0}}},
            "llama-3.1-8b", 8, ["model.rope_scaling ('yarn') would replace Llama-3.1-8B's own llama3 RoPE scaling",
                                ("model.rope_scaling: missing original_max_position_embeddings: vLLM 0.19.1 refuses "
                                 "rope_type yarn without it, and fails as it starts, as Trinity hands vLLM the "
                                 "mapping as the model's rope_parameters, past transformers' filling-in; add it")],
        ),
    ],
)
def test_checks(mapping: dict[str, Any], model: str, gpus: int, expected: list[str]) -> None:
    problems = check_trinity_config(mapping, catalog().model(model), gpus)
    assert len(problems) == len(expected), problems
    for problem, start in zip(problems, expected):
        assert problem.startswith(start), problem


@pytest.mark.parametrize("gpus", [0, -2])
def test_no_trainer_gpus_is_said_once_though_trinity_05_checks_a_role_sp_as_well(gpus: int) -> None:
    # The ref's own SP is checked as the actor's (Trinity 0.5): against the heads still, but the GPUs' problem, said
    # with the trainer's SP, is not said again for the role.
    ref = {"trainer": {"trainer_config": {"actor_rollout_ref": {"ref": {"ulysses_sequence_parallel_size": 3}}}}}
    assert check_trinity_config(ref, catalog().model("4B"), gpus, version="0.5") == [
        f"the trainer needs at least 1 GPU, got {gpus}",
        ("trainer.trainer_config.actor_rollout_ref.ref.ulysses_sequence_parallel_size: SP=3 does not divide its 32 "
         "attention heads of Qwen3-4B, and Trinity 0.5 checks the ref's SP as the actor's: it refuses the config")]


NO_SUCH_KEY = ("no release of Trinity (0.5.0 to 0.6.0) has this key there, so Trinity refuses the config (it knows no "
               "such key): remove it, or move it where Trinity reads it")
"""The words of a key that every Trinity release's typed section lacks (`no-such-key-refused`), after its path."""
TOP_NO_SUCH_KEY = (f"{NO_SUCH_KEY}; where it parks YAML anchors, put each anchor on the first key that uses it, then "
                   "remove it")
"""Those of a top-level key, which may park YAML anchors (s84)."""


def test_checks_name_a_key_spelt_almost_as_one_the_section_lacks() -> None:
    # A misspelt key leaves the one meant unset: each is named with the key it likely means, at any depth read.
    mapping = {"model": {"max_model_len": 32768, "min_response_tokens": 16},
               "trainr": {"save_interval": 100},
               "trainer": {"ulysses_sequence_paralel_size": 4, "max_tokens_len_per_gpu": 8192, "trainer_config": {
                   "actor_rollout_ref": {"actor": {"fsdp_config": {"offload_polcy": True}}}}}}
    unset = "That key is unset, and read as such; Trinity refuses the config (it knows no such key)"
    # Under trainer_config, Trinity 0.6 on verl before 0.8 drops it (build_dataclass_from_mapping): not every release
    # refuses it, but Trinity 0.5 does.
    dropped = ("That key is unset, and read as such (Trinity 0.5 refuses the config, and 0.6 on verl before 0.8 drops "
               "the key)")
    assert check_trinity_config(mapping, catalog().model("8B"), 4) == [
        f"trainer.ulysses_sequence_paralel_size: did you mean ulysses_sequence_parallel_size? {unset}",
        f"trainer.max_tokens_len_per_gpu: did you mean max_token_len_per_gpu? {unset}",
        ("trainer.trainer_config.actor_rollout_ref.actor.fsdp_config.offload_polcy: did you mean offload_policy? "
         f"{dropped}"),
        f"trainr: {TOP_NO_SUCH_KEY}",
    ]  # trainr no misspelling: the config has its trainer; nor Trinity's min_response_tokens, less alike to
    # max_response_tokens; but Trinity refuses trainr as it refuses any key its typed Config lacks
    assert check_trinity_config({"trainr": {}, "model": {"max_model_len": 4096}}, catalog().model("8B"), 4) == [
        f"trainr: did you mean trainer? {unset}"]
    spelt = {"model": {"max_model_len": 4096}, "trainer": {"ulysses_sequence_parallel_size": 2,
                                                           "ulysses_sequence_paralel_size": 4}}
    # The key meant is there: no misspelling, but a key Trinity's typed trainer section lacks.
    assert check_trinity_config(spelt, catalog().model("8B"), 4) == [
        f"trainer.ulysses_sequence_paralel_size: {NO_SUCH_KEY}"]


@pytest.mark.parametrize(("section", "key", "meant"), [
    (("model",), "max_model_length", "max_model_len"),  # difflib's ratio 0.897, under MISSPELT_CUTOFF
    (("trainer",), "max_token_length_per_gpu", "max_token_len_per_gpu"),
    (("trainer",), "ulysses_sequence_parallel", "ulysses_sequence_parallel_size"),
    (("cluster",), "gpus_per_node", "gpu_per_node"),
    (("explorer", "rollout_model"), "tensor_parallel", "tensor_parallel_size"),  # 0.857
    (("explorer", "rollout_model"), "engine_number", "engine_num"),  # 0.87
    ((*ACTOR_ROLLOUT_REF, "actor", "fsdp_config"), "parameter_offload", "param_offload"),
    (("trainer",), "sequence_parallel_size", "ulysses_sequence_parallel_size"),  # known wrong SP names: SP_KEY_SLIPS
    ((*ACTOR_ROLLOUT_REF, "ref"), "sp_size", "ulysses_sequence_parallel_size"),
])
def test_a_read_key_with_a_word_spelt_out_or_dropped_is_taken_for_it_misspelt(
        section: tuple[str, ...], key: str, meant: str) -> None:
    # A word spelt out, cut short or its last one dropped: difflib's ratio may stay under the cutoff, which keeps
    # Trinity's min_response_tokens from being taken for max_response_tokens; the key meant is unset all the same.
    mapping: dict[str, Any] = {key: 1}
    for part in reversed(section):
        mapping = {part: mapping}
    (problem,) = trinity_config_problems(mapping, catalog().model("8B"), 8, version="0.6")
    assert problem.words.startswith(f"{'.'.join((*section, key))}: did you mean {meant}? That key is unset")
    assert problem.code in (ConfigProblemCode.MISSPELT_KEY, ConfigProblemCode.MISSPELT_KEY_REFUSED)


def test_no_key_trinity_has_is_taken_for_a_misspelt_one() -> None:
    # Each key the code knows in its section, alone there: those it reads (READ_KEYS), Trinity 0.6's trainer keys,
    # verl's gradient checkpointing, a role's ignored engine section, and keys of Trinity's own near one read
    # (min_response_tokens beside max_response_tokens; trainer_config_path beside trainer_config, a word added).
    named = {(*section, key) for section, known in READ_KEYS.items() for key in known} | {
        ("trainer", key) for key in TRINITY_06_TRAINER_KEYS} | {
        offload_path(role, "", IGNORED_SECTION)[:-1] for role in ROLES} | {
        GRADIENT_CHECKPOINTING_KEY, ("model", "min_response_tokens"), ("trainer", "trainer_config_path")}
    assert len(named) == 127  # with the five micro-batch sizes (test_padbound_s71), four deprecated (the critic's
    # forward_micro_batch_size: test_batchcritic_s75), the dataset's buffer.trainer_input.experience_buffer.path and
    # the two sections above it (trainpath91: test_algorelease_s82), the critic's
    # own remove padding (test_ownbudget_s72), the rollout's and the critic's dynamic batch keys (test_tokbudget_s72),
    # the rollout engine's expert parallelism, memory share, dtype and length (test_rolloutfit_s73), its enable_lora
    # (test_lorarest2_s74), the critic's strategy and engine with its three offload flags (test_criticconfig2_s74),
    # the engine's extra_engine_args, read whole (test_lorarest3_s75), and the critic engine's SP, dynamic batch flag
    # and two micro-batch sizes, which Trinity 0.6 on verl 0.8 reads (criticdyn87: test_batchcritic_s75), and
    # algorithm.bypass_old_logprobs and the actor's and the ref's engine SP (recompute88: test_dpoverl08_s85), and the
    # legacy trainer's algorithm.rollout_correction.bypass_mode under trainer_config (rowsflag88: test_padbound_s71)
    for path in sorted(named):
        mapping: dict[str, Any] = {path[-1]: None}
        for part in reversed(path[:-1]):
            mapping = {part: mapping}
        codes = {problem.code for problem in trinity_config_problems(mapping, catalog().model("8B"), 8)}
        assert not codes & {ConfigProblemCode.MISSPELT_KEY, ConfigProblemCode.MISSPELT_KEY_REFUSED}, path


def test_read_keys_name_every_key_the_reader_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    # The misspelt-key check knows the keys read from READ_KEYS: a key the reader reads that it lacks would never be
    # suggested (it lacked trainer.trainer_type, model.tinker.enable, the rollout's data and pipeline parallel sizes,
    # ...). Every key read while reading and checking the example configs, each in its section; list entries (an
    # auxiliary model's keys) are not checked for misspellings, nor a role's ignored engine section's offload flags.
    read: set[tuple[str | int, ...]] = set()
    get = reader.ConfigReader.get
    monkeypatch.setattr(reader.ConfigReader, "get", lambda self, path: read.add((*self.base, *path)) or get(self, path))
    for path in (Path(__file__).parents[1] / "docs" / "examples" / "trinity.yaml", DATA / "user-config.yaml"):
        text = path.read_text(encoding="utf-8")
        config = read_trinity_config(text, str(path), environ={})
        check_trinity_config(load_config_mapping(text, str(path)), catalog().model(config.model), 4, environ={})
    checked = [key for key in read if not any(isinstance(part, int) for part in key) and IGNORED_SECTION not in key]
    assert len(checked) > 30
    assert [key for key in checked if key[-1] not in READ_KEYS.get(key[:-1], ())] == []


def test_a_model_with_its_own_rope_scaling_gets_no_yarn() -> None:
    # Llama 3.1's 131072 positions rest on its llama3 RoPE scaling: YaRN over them would replace it.
    llama = catalog().model("llama-3.1-8b")
    plan = make_query(catalog(), model=llama.name, gpu="h100", budget_gpus=8, max_model_len=200000)
    (answer,) = solve(plan, catalog())
    best = answer.plans[0]
    assert best.rope_scaling_factor is None
    fragment = trinity_fragment(best, llama)
    assert "rope_scaling" not in fragment.replace("no rope_scaling is written", "")
    assert ("# max_model_len is beyond Llama-3.1-8B's native context of 131072, which its own llama3 RoPE scaling\n"
            "# provides: no rope_scaling is written (YaRN would replace it). vLLM (the explorer's rollout)\n"
            "# derives a longest max_model_len of 131072 from the model's config.json and refuses a longer one\n"
            "# unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set (before Ray starts). Check that the model handles\n"
            "# this length before you train at it.\n") in fragment
    user = "model:\n  max_model_len: 4096\n  rope_scaling: {rope_type: llama3, factor: 8.0}\n"
    assert "rope_scaling: {rope_type: llama3, factor: 8.0}" in patch_trinity_config(user, best, llama)
    long = {"model": {"max_model_len": 200000}}  # no YaRN asked; vLLM takes the length with its variable alone
    assert check_trinity_config(long, llama, 8, environ={"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}) == []
    assert [problem.code for problem in trinity_config_problems(long, llama, 8)] == [
        ConfigProblemCode.PAST_NATIVE_ON_OWN_SCALING_REFUSED]


def test_a_fragment_says_to_keep_prompt_and_response_within_its_length() -> None:
    # It sets max_model_len alone: a config whose prompt and response add up to more does not load in Trinity.
    text = trinity_fragment(sp2_plan(), catalog().model("4B"))
    assert (f"# Keep model.max_prompt_tokens + max_response_tokens within {sp2_plan().max_model_len}:\n"
            "# Trinity refuses more, and less leaves part of the length unused.\n") in text


def test_a_yarn_fragment_says_trinity_06_on_verl_08_gives_the_trainer_only_the_checkpoints_config() -> None:
    # Trinity 0.6's verl 0.8 path hands model.rope_scaling to vLLM only: the trainer's model reads config.json alone.
    # Trinity 0.5 passes it to the trainer too, and a fragment without YaRN has nothing to say.
    said = "".join(f"# {line}\n" for line in (
        "model.rope_scaling reaches the rollout (vLLM), but on Trinity 0.6 with verl 0.8 or later not the",
        "trainer, whose model reads the checkpoint's config.json alone: to train with YaRN too, add the",
        "same rope_scaling there, the way Qwen's model cards add theirs (memory is the same either way)."))
    model = catalog().model("4B")
    assert said in trinity_fragment(long_plan(), model) and said in trinity_fragment(long_plan(), model, version="0.6")
    assert said not in trinity_fragment(long_plan(), model, version="0.5")
    assert "rope_scaling" not in trinity_fragment(vanilla_plan(), model)


def test_patch_sets_per_role_budgets_to_the_plans_and_leaves_those_equal_to_it() -> None:
    # Qwen3-4B at 4096 on 4 GPUs: max_token_len_per_gpu 8192 (SP=1). The actor's budget, an interpolation that
    # gives 131072 here, overrides it for the actor: lowered to 8192. The ref's 4096, below it but holding a sequence
    # of 4096 at SP 1, is kept (s81, rolebudget: it was raised to 8192); the ref's 2048, which holds none, is raised.
    # The patched config's verdict reads the plan's budget, the most any role takes.
    plan = _best(model="4B", objective="cheapest", budget_gpus=4, exact=True, max_model_len=4096)
    budget = plan.max_token_len_per_gpu
    roles = ("trainer:\n  trainer_config:\n    actor_rollout_ref:\n"
             "      actor: {ppo_max_token_len_per_gpu: '${oc.env:ACTOR_BUDGET,131072}'}\n"
             "      ref: {log_prob_max_token_len_per_gpu: 4096}\n")
    after = patch_trinity_config("model:\n  max_model_len: 4096\n" + roles, plan, catalog().model("4B"), environ={})
    assert (budget, after.count("ppo_max_token_len_per_gpu: 8192"), after.count("log_prob_max_token_len_per_gpu: 4096")
            ) == (8192, 1, 1)
    short = patch_trinity_config("model:\n  max_model_len: 4096\n" + roles.replace("4096}", "2048}"), plan,
                                 catalog().model("4B"), environ={})
    assert "ref: {log_prob_max_token_len_per_gpu: 8192}" in short
    named = after.replace("model:\n", "model:\n  model_path: Qwen/Qwen3-4B\n", 1)
    assert read_trinity_config(named, "p.yaml", {}).budget_in_effect(4096) == budget
    below = patch_trinity_config("model:\n  max_model_len: 4096\n" + roles, plan, catalog().model("4B"),
                                 environ={"ACTOR_BUDGET": "8000"})
    # 8000 and the ref's 4096, the most the roles take 8000, below the plan's 8192: both raised to it (rolebudget2_s81:
    # kept, they left the plan's budget no role on verl before 0.8)
    assert "actor: {ppo_max_token_len_per_gpu: 8192}" in below
    assert "ref: {log_prob_max_token_len_per_gpu: 8192}" in below
    # One equal to the plan's is not above it: it stays as written.
    equal = patch_trinity_config("model:\n  max_model_len: 4096\n" + roles, plan, catalog().model("4B"),
                                 environ={"ACTOR_BUDGET": "8192.0"})
    assert "ppo_max_token_len_per_gpu: '${oc.env:ACTOR_BUDGET,131072}'" in equal
    as_written = patch_trinity_config("model:\n  max_model_len: 4096\n" + roles.replace(
        "'${oc.env:ACTOR_BUDGET,131072}'", "8192.0"), plan, catalog().model("4B"))
    assert "{ppo_max_token_len_per_gpu: 8192.0}" in as_written


def test_config_keys_changed_names_what_the_plans_own_keys_leave_as_they_were() -> None:
    # Qwen3-4B at 4096 on 4 GPUs: vanilla, SP=1, 8192 tokens per GPU. Beside its own keys (the length, SP, budget),
    # the patch sets the config's dynamic batch sizes back on, the actor's SP and budget to the plan's, and the
    # actor's offload flag off; the ref's budget, the plan's already, and its offload flag (left alone) are not named.
    plan = _best(model="4B", objective="cheapest", budget_gpus=4, exact=True, max_model_len=4096)
    text = ("model:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: 2048\ntrainer:\n  use_dynamic_bsz: false\n"
            "  trainer_config:\n    actor_rollout_ref:\n      actor:\n        ulysses_sequence_parallel_size: 2\n"
            "        ppo_max_token_len_per_gpu: 131072\n        fsdp_config: {param_offload: true}\n"
            "      ref: {log_prob_max_token_len_per_gpu: 8192, fsdp_config: {param_offload: true}}\n")
    actor = "trainer.trainer_config.actor_rollout_ref.actor"
    assert config_keys_changed(text, plan, catalog().model("4B"), environ={}) == [
        "trainer.use_dynamic_bsz: true  # now false", f"{actor}.ulysses_sequence_parallel_size: 1  # now 2",
        f"{actor}.ppo_max_token_len_per_gpu: 8192  # now 131072",
        f"{actor}.fsdp_config.param_offload: false  # now true"]
    # Trinity 0.6's flags under trainer, turned off where the config has one: those it lacks are named as unset.
    # (GRPO: a PPO critic, which the plan counts none of, would keep the flags under its engine: test_critickept_s74)
    flags = "algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-4B}\ntrainer: {offload_policy: true}\n"
    assert config_keys_changed(flags, plan, catalog().model("4B"), environ={}) == [
        "trainer.param_offload: false  # now unset", "trainer.optimizer_offload: false  # now unset",
        "trainer.offload_policy: false  # now true"]


def test_patch_sets_a_role_budget_written_as_a_float_to_the_plans() -> None:
    # 131072.0 is a number other than the plan's 8192 (Qwen3-4B at 4096 on 4 GPUs), as 131072 is: set to it.
    plan = _best(model="4B", objective="cheapest", budget_gpus=4, exact=True, max_model_len=4096)
    text = ("model:\n  max_model_len: 4096\ntrainer:\n  trainer_config:\n    actor_rollout_ref:\n"
            "      ref: {log_prob_max_token_len_per_gpu: 131072.0}\n")
    assert "      ref: {log_prob_max_token_len_per_gpu: 8192}\n" in patch_trinity_config(
        text, plan, catalog().model("4B"), environ={})


def test_config_keys_changed_writes_a_value_that_is_no_scalar_briefly() -> None:
    # Through the API (the command line refuses such a config first): a role's SP given as a list is named as
    # Python shows it, not as a YAML scalar.
    plan = _best(model="4B", objective="cheapest", budget_gpus=4, exact=True, max_model_len=4096)
    text = ("model:\n  model_path: Qwen/Qwen3-4B\ntrainer:\n  trainer_config:\n    actor_rollout_ref:\n"
            "      actor: {ulysses_sequence_parallel_size: [2]}\n")
    assert config_keys_changed(text, plan, catalog().model("4B"), environ={}) == [
        "trainer.trainer_config.actor_rollout_ref.actor.ulysses_sequence_parallel_size: 1  # now [2]"]


def test_config_keys_changed_reads_interpolations_in_the_environment_and_keeps_to_the_trinity_version() -> None:
    # The same plan (SP=1, 8192 tokens per GPU, no Offload). An offload flag the environment turns off already is
    # what the patch keeps (not named); without the variable it is on, and named as written. A role's budget whose
    # variable says 131072 is named, though its default is the plan's. Trinity 0.5 gets no trainer-level flags.
    plan = _best(model="4B", objective="cheapest", budget_gpus=4, exact=True, max_model_len=4096)
    model, actor = catalog().model("4B"), "trainer.trainer_config.actor_rollout_ref.actor"
    roles = "model:\n  model_path: Qwen/Qwen3-4B\ntrainer:\n  trainer_config:\n    actor_rollout_ref:\n      actor:\n"
    offload = roles + "        fsdp_config:\n          param_offload: ${oc.decode:${oc.env:OFFLOAD,true}}\n"
    assert config_keys_changed(offload, plan, model, environ={"OFFLOAD": "false"}) == []
    assert config_keys_changed(offload, plan, model, environ={}) == [
        f"{actor}.fsdp_config.param_offload: false  # now ${{oc.decode:${{oc.env:OFFLOAD,true}}}}"]
    budget = roles + "        ppo_max_token_len_per_gpu: ${oc.decode:${oc.env:ACTOR_BUDGET,8192}}\n"
    assert config_keys_changed(budget, plan, model, environ={"ACTOR_BUDGET": "131072"}) == [
        f"{actor}.ppo_max_token_len_per_gpu: 8192  # now ${{oc.decode:${{oc.env:ACTOR_BUDGET,8192}}}}"]
    assert config_keys_changed(budget, plan, model, environ={}) == []
    trainer_flags = ("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-4B}\n"
                     "trainer: {offload_policy: true}\n")
    assert config_keys_changed(trainer_flags, plan, model, environ={}, version="0.5") == []
    assert config_keys_changed(trainer_flags, plan, model, environ={}, version="0.6") == [
        "trainer.param_offload: false  # now unset", "trainer.optimizer_offload: false  # now unset",
        "trainer.offload_policy: false  # now true"]


_TRINITY_06 = (
    "model: {model_path: Qwen/Qwen3-8B, max_model_len: 65536}\nalgorithm: {algorithm_type: grpo}\n"
    "trainer:\n"
    "  trainer_strategy: fsdp2\n"
    "  offload_policy: %s\n"
    "  trainer_config:\n"
    "    actor_rollout_ref:\n"
    "      actor: {fsdp_config: {offload_policy: %s}}\n"
)
"""A Trinity 0.6 config with the offload policy at both levels (trainer's, actor's) to fill in."""


@pytest.mark.parametrize(("trainer", "actor"), [("true", "false"), ("false", "true")])
def test_offload_flags_that_disagree_between_the_levels_count_as_off(trainer: str, actor: str) -> None:
    # Trinity 0.6 takes the trainer's flags on verl before 0.8 and the actor's own on verl 0.8 and later.
    config = read_trinity_config(_TRINITY_06 % (trainer, actor), "t.yaml", {})
    assert not config.offload and config.notes == ((
        f"trainer.offload_policy is {trainer} but trainer.trainer_config.actor_rollout_ref.actor.fsdp_config."
        f"offload_policy is {actor}: Trinity 0.6 takes the trainer's with verl before 0.8 and the actor's with verl 0.8 "
        "or later, so the verdict takes Offload as off; set both alike (--write does)"),)


def test_the_offload_notes_follow_the_strategy_and_the_release() -> None:
    disagree = ("trainer.offload_policy is false but trainer.trainer_config.actor_rollout_ref.actor.fsdp_config."
                "offload_policy is true: Trinity 0.6 takes the trainer's with verl before 0.8 and the actor's with "
                "verl 0.8 or later, so the verdict takes Offload as off; set both alike (--write does)")
    # the levels disagreeing say so alone: the trainer's param_offload is not named as on without a policy
    manual = (_TRINITY_06 % ("false", "true")).replace(
        "  offload_policy: false\n", "  offload_policy: false\n  param_offload: true\n")
    assert read_trinity_config(manual, "t.yaml", {}).notes == (disagree,)
    # under another strategy no policy counts, so none disagrees: the flags are named as what the strategy ignores
    megatron = ("trainer.trainer_strategy is megatron: the tables and the memory model are FSDP's (fsdp, or fsdp2 "
                "for Offload), so the verdict and the plans are for an FSDP trainer")
    for strategy, notes in [("fsdp", ()), ("megatron", (megatron,))]:
        config = read_trinity_config((_TRINITY_06 % ("true", "false")).replace("fsdp2", strategy), "t.yaml", {})
        assert not config.offload and config.notes == (
            (f"the offload flags are set, but trainer.trainer_strategy is {strategy}, not fsdp2: the tables' Offload "
             "is FSDP2's CPU offload, so the verdict takes Offload as off"), *notes)
    # Trinity 0.5 takes the actor's own policy: no note on 0.6's flags under trainer
    actor_only = ("model: {model_path: Qwen/Qwen3-8B}\nalgorithm: {algorithm_type: grpo}\ntrainer:\n"
                  "  trainer_strategy: fsdp2\n  trainer_config:\n"
                  "    actor_rollout_ref:\n      actor: {fsdp_config: {offload_policy: true}}\n")
    config = read_trinity_config(actor_only, "t.yaml", {}, "0.5")
    assert config.offload and config.notes == ()


def test_offload_flags_that_agree_between_the_levels_count_as_on() -> None:
    config = read_trinity_config(_TRINITY_06 % ("true", "true"), "t.yaml", {})
    assert config.offload and config.notes == ()
    # The actor without a policy of its own takes the trainer's on either verl.
    trainer_only = read_trinity_config((_TRINITY_06 % ("true", "true")).replace("offload_policy: true}}", "x: 1}}"),
                                       "t.yaml", {})
    assert trainer_only.offload and trainer_only.notes == ()


def test_offload_flags_without_a_strategy_are_off_for_trinity_before_06() -> None:
    text = ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 65536}\nalgorithm: {algorithm_type: grpo}\n"
            "trainer:\n  trainer_config:\n    actor_rollout_ref:\n      actor: {fsdp_config: {offload_policy: true}}\n")
    config = read_trinity_config(text, "t.yaml", {})
    assert not config.offload and config.notes == ((
        "the offload flags are set, but trainer.trainer_strategy is not set (Trinity before 0.6 takes fsdp; 0.6, "
        "fsdp2): the tables' Offload is FSDP2's CPU offload, so the verdict takes Offload as off"),)
    assert check_trinity_config(_safe_load(text), catalog().model("8B"), 4)[-1] == (
        "trainer.trainer_config.actor_rollout_ref.actor.fsdp_config.offload_policy needs trainer.trainer_strategy "
        "fsdp2, got none (Trinity before 0.6 takes fsdp; 0.6, fsdp2)")
    # A config said to be Trinity 0.6's (--trinity-version 0.6) runs fsdp2, its default; Offload counts where verl
    # before 0.8 reads it on too, from the trainer's flags (test_release06b_s83).
    for_06 = read_trinity_config(text, "t.yaml", {}, "0.6")
    assert not for_06.offload and for_06.note_codes == (ConfigProblemCode.TRAINER_OFFLOAD_FLAGS_UNSET,)
    both = read_trinity_config(text.replace("trainer:\n", "trainer:\n  offload_policy: true\n"), "t.yaml", {}, "0.6")
    assert both.offload and not any("trainer_strategy" in note for note in both.notes)
    assert not any("trainer_strategy" in problem
                   for problem in check_trinity_config(_safe_load(text), catalog().model("8B"), 4, version="0.6"))
    assert not read_trinity_config(text, "t.yaml", {}, "0.5").offload
    # Trinity 0.6's flags under trainer make it 0.6, whose default is fsdp2 (unless it is said to be 0.5); under fsdp
    # they break its rule.
    with_06_flags = text.replace("trainer:\n", "trainer:\n  offload_policy: true\n")
    assert read_trinity_config(with_06_flags, "t.yaml", {}).offload
    assert not read_trinity_config(with_06_flags, "t.yaml", {}, "0.5").offload
    assert check_trinity_config(_safe_load(text.replace("trainer:\n", "trainer:\n  trainer_strategy: fsdp\n"
                                                        "  offload_policy: true\n")), catalog().model("8B"), 4)[-2:] == [
        "trainer.offload_policy needs trainer.trainer_strategy fsdp2, got 'fsdp'",
        ("trainer.trainer_config.actor_rollout_ref.actor.fsdp_config.offload_policy needs trainer.trainer_strategy fsdp2, "
         "got 'fsdp'")]


@pytest.mark.parametrize(("value", "on"), [
    ("1", True), ("-1", True), ("0", False), ("'y'", True), ("N", False), ("'TRUE'", True), ("'1'", True),
    ("' -0 '", False)])
def test_offload_flags_are_read_as_omegaconf_reads_a_boolean(value: str, on: bool) -> None:
    # Trinity's TrainerConfig types them bool: OmegaConf takes whole numbers (0 false; as text too) and y/n in any
    # case too.
    text = f"model: {{model_path: Qwen/Qwen3-8B}}\ntrainer: {{trainer_strategy: fsdp2, offload_policy: {value}}}\n"
    assert read_trinity_config(text, "t.yaml", {}).offload is on


def test_a_config_is_read_as_yaml_1_1_as_trinity_reads_it() -> None:
    # OmegaConf's loader is PyYAML's, YAML 1.1: 010000 is the octal 4096, `on` and `yes` are true (YAML 1.2, which
    # ruamel speaks by default, has 10000 and two words).
    text = ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 010000}\n"
            "trainer: {trainer_strategy: fsdp2, offload_policy: on, ulysses_sequence_parallel_size: 2}\n")
    config = read_trinity_config(text, "t.yaml", {})
    assert (config.max_model_len, config.offload) == (4096, True)
    assert config.max_model_len == yaml.safe_load(text)["model"]["max_model_len"]


def test_the_patch_decides_on_the_values_trinity_reads() -> None:
    # 024576 is 24576 to YAML 1.2 (ruamel's round trip), but the octal 10622 to Trinity: the length is rewritten.
    # A flag Trinity reads as true (`yes`) is the plan's value already, and stays as written.
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: 024576\ntrainer:\n  ulysses_sequence_parallel_size: 2\n"
            "  max_token_len_per_gpu: 24576\n")
    patched = patch_trinity_config(text, sp2_plan(), catalog().model("4B"))
    assert "  max_model_len: 24576\n" in patched and yaml.safe_load(patched)["model"]["max_model_len"] == 24576
    offloaded = ("model:\n  model_path: q/Qwen3-4B\ntrainer:\n  trainer_strategy: fsdp2\n  trainer_config:\n"
                 "    actor_rollout_ref:\n      actor:\n        fsdp_config:\n          param_offload: yes\n")
    assert "          param_offload: yes\n" in patch_trinity_config(offloaded, long_plan(), catalog().model("4B"))


def test_a_trainer_type_trinity_does_not_take_is_refused() -> None:
    with pytest.raises(ConfigError) as raised:
        read_trinity_config("model: {model_path: Qwen/Qwen3-8B}\ntrainer: {trainer_type: TINKER}\n", "t.yaml", {})
    assert str(raised.value) == "t.yaml: trainer.trainer_type must be verl (or tinker), as Trinity takes it, got 'TINKER'"


def test_yarn_within_the_native_context_is_to_remove_and_an_unset_factor_variable_is_named() -> None:
    # The source guide's own snippet reads the factor from $FACTOR, without a default: OmegaConf (and so Trinity)
    # refuses the config when it is unset, whatever the length.
    text = ("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 32768\n  rope_scaling:\n    rope_type: yarn\n"
            "    factor: ${oc.decode:${oc.env:FACTOR}}\n    original_max_position_embeddings: 40960\n")
    remove = ("model.rope_scaling: max_model_len 32768 is within Qwen3-8B's native context of 40960: YaRN is not "
              "needed there (it stretches the positions the model was trained on); remove it")
    unset = ("cannot check model.rope_scaling.factor: environment variable FACTOR is not set and '${oc.env:FACTOR}' "
             "has no default: set FACTOR as trinity run will have it (Trinity fails to load the config without it), "
             "or give it a default (${oc.env:FACTOR,DEFAULT})")
    assert check_trinity_config(_safe_load(text), catalog().model("8B"), 4) == [remove, unset]
    assert check_trinity_config(_safe_load(text), catalog().model("8B"), 4, environ={"FACTOR": "1.0"}) == [remove]


def test_a_tab_after_a_colon_is_refused_as_trinity_refuses_it() -> None:
    # OmegaConf 2.3 reads with PyYAML's pure-Python loader, which takes no tab as a separator (libyaml would).
    with pytest.raises(ConfigError) as raised:
        read_trinity_config("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len:\t32768\n", "t.yaml", {})
    assert str(raised.value) == "t.yaml: line 3: a tab (column 17) where the YAML reader takes only spaces; use spaces"


def test_a_yarn_that_covers_the_length_otherwise_than_the_guide_says_whether_it_stretches_more() -> None:
    guide = "covers the length, but not as Trinity-RFT's guide sets it, factor max_model_len / 40960 = 2.0 over 40960"

    def problems(factor: float, original: int) -> list[str]:
        rope = {"rope_type": "yarn", "factor": factor, "original_max_position_embeddings": original,
                "rope_theta": 1000000}  # the model's own base, without which a but: line says so (ropecheck, s79)
        return check_trinity_config({"model": {"max_model_len": 81920, "rope_scaling": rope}}, catalog().model("4B"), 1)

    assert problems(2.5, 32768) == [f"model.rope_scaling (factor 2.5 over 32768) {guide}"]  # 81920 exactly
    assert problems(3.0, 40960) == [
        f"model.rope_scaling (factor 3.0 over 40960) {guide}: it stretches the positions more than the length needs"]
    assert problems(2.0, 45000) == [  # the guide's factor, over another original length
        f"model.rope_scaling (factor 2.0 over 45000) {guide}: it stretches the positions more than the length needs"]
    assert problems(2.0, 40960) == []


def test_trinity_06_flags_under_trainer_for_05_are_named_together() -> None:
    mapping = {"trainer": {"trainer_strategy": "fsdp2", "param_offload": True, "optimizer_offload": True}}
    two = check_trinity_config(mapping, catalog().model("4B"), 1, version="0.5")
    assert two == [("trainer.param_offload, trainer.optimizer_offload: keys of Trinity 0.6's trainer, which Trinity "
                    "0.5 refuses (its TrainerConfig has no such key), so the config does not load: remove them and set "
                    "the roles' fsdp_config flags (--write does; the verdict reads the roles', as 0.5 would)")]
    one = check_trinity_config({"trainer": {"param_offload": True}}, catalog().model("4B"), 1, version="0.5")
    assert one[0].startswith("trainer.param_offload: a key of Trinity 0.6's trainer,") and "remove it and" in one[0]
    assert check_trinity_config(mapping, catalog().model("4B"), 1, version="0.6") == []


def test_trinity_05_checks_the_refs_sp_as_the_actors() -> None:
    # Trinity 0.5 checks each role's SP against the trainer GPUs and the heads (verl_config.py's
    # _check_parallel_config), the ref's being its own where set, else the trainer's (set_if_none).
    model = catalog().model("8B")
    roles_key = "trainer.trainer_config.actor_rollout_ref"

    def config(ref: int | None, trainer: int | None = None) -> dict[str, Any]:
        roles: dict[str, Any] = {"actor": {"ulysses_sequence_parallel_size": 4}}
        roles |= {"ref": {"ulysses_sequence_parallel_size": ref}} if ref is not None else {}
        return {"trainer": {"trainer_config": {"actor_rollout_ref": roles}}
                | ({"ulysses_sequence_parallel_size": trainer} if trainer is not None else {})}

    own = ", and Trinity 0.5 checks the ref's SP as the actor's: it refuses the config"
    assert check_trinity_config(config(3), model, 4, version="0.5") == [
        f"{roles_key}.ref.ulysses_sequence_parallel_size: SP=3 does not divide 4 GPUs (the trainer's){own}",
        f"{roles_key}.ref.ulysses_sequence_parallel_size: SP=3 does not divide its 32 attention heads of Qwen3-8B{own}"]
    given = (", and Trinity 0.5 gives it to the ref and the critic, whose SPs it checks as the actor's: it refuses "
             "the config")
    assert check_trinity_config(config(None, 3), model, 4, version="0.5") == [
        f"trainer.ulysses_sequence_parallel_size: SP=3 does not divide 4 GPUs (the trainer's){given}",
        f"trainer.ulysses_sequence_parallel_size: SP=3 does not divide its 32 attention heads of Qwen3-8B{given}"]
    # A ref whose SP passes: nothing; the ref's own SP over the trainer's, at 2 (which passes), nothing for the ref,
    # but the critic, which sets none, takes the trainer's 3, which Trinity 0.5 checks all the same.
    assert check_trinity_config(config(2), model, 4, version="0.5") == []
    critic = ", and Trinity 0.5 gives it to the critic, whose SP it checks as the actor's: it refuses the config"
    assert check_trinity_config(config(2, 3), model, 4, version="0.5") == [
        f"trainer.ulysses_sequence_parallel_size: SP=3 does not divide 4 GPUs (the trainer's){critic}",
        f"trainer.ulysses_sequence_parallel_size: SP=3 does not divide its 32 attention heads of Qwen3-8B{critic}"]
    # Trinity 0.6 on verl before 0.8 checks it alike, and on verl 0.8 or later sets the roles' SP to the trainer's (1
    # here): one line says both, naming the release (test_legacyref2_s85).
    for version, who in (("0.6", "Trinity 0.6 on verl before 0.8"), (None, "Trinity with verl before 0.8")):
        assert check_trinity_config(config(3), model, 4, version=version) == [(
            f"{roles_key}.ref.ulysses_sequence_parallel_size 3 is not trainer.ulysses_sequence_parallel_size 1: {who} "
            "checks the ref's SP as the actor's and refuses the config (SP=3 does not divide 4 GPUs); Trinity 0.6 on "
            "verl 0.8 or later runs the ref at SP 1; the verdict is at SP 1: set them alike (--write does)")]


def test_trinity_05_checks_the_critics_sp_and_budget_as_the_refs() -> None:
    # Trinity 0.5 fills the critic's SP and ppo_max_token_len_per_gpu from the trainer's only where unset, checks its
    # SP as the actor's (_check_parallel_config: the trainer GPUs, and the heads of model.critic_model_path, which is
    # model_path where unset) and raises its budget at its own SP (_adjust_token_len_if_needed), whatever the
    # algorithm: common/verl_config.py:587, :588, :595 in 0.5.0.
    model = catalog().model("8B")
    critic_key = "trainer.trainer_config.critic"

    def config(critic: dict[str, Any], trainer_sp: int = 2, **model_keys: str) -> dict[str, Any]:
        return {"model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 32768, **model_keys},
                "trainer": {"ulysses_sequence_parallel_size": trainer_sp, "trainer_config": {
                    "actor_rollout_ref": {"ref": {"ulysses_sequence_parallel_size": 2}}, "critic": critic}}}

    own = ", and Trinity 0.5 checks the critic's SP as the actor's: it refuses the config"
    assert check_trinity_config(config({"ulysses_sequence_parallel_size": 3}), model, 6, version="0.5") == [
        f"{critic_key}.ulysses_sequence_parallel_size: SP=3 does not divide its 32 attention heads of Qwen3-8B{own}"]
    problems = trinity_config_problems(config({"ulysses_sequence_parallel_size": 3}), model, 4, version="0.5")
    assert [problem.code for problem in problems] == [ConfigProblemCode.SP_DIVIDES_GPUS,
                                                      ConfigProblemCode.SP_MODEL_HEADS]
    # A critic of another model: its heads are that model's, which rft-solver does not know; the GPUs still count.
    other = config({"ulysses_sequence_parallel_size": 3}, critic_model_path="/models/Qwen3-4B")
    assert check_trinity_config(other, model, 4, version="0.5") == [
        f"{critic_key}.ulysses_sequence_parallel_size: SP=3 does not divide 4 GPUs (the trainer's){own}"]
    # A critic SP key misspelt: that key is unset, and the trainer's 2 passes (no key of verl's critic is so alike).
    misspelt = config({"ulysses_sequence_paralel_size": 3})
    assert check_trinity_config(misspelt, model, 4, version="0.5") == [
        (f"{critic_key}.ulysses_sequence_paralel_size: did you mean ulysses_sequence_parallel_size? That key is unset, "
         "and read as such; Trinity refuses the config (it knows no such key)")]
    # The trainer's SP given to the critic alone (the ref sets its own, the actor takes the trainer's here).
    given = ", and Trinity 0.5 gives it to the critic, whose SP it checks as the actor's: it refuses the config"
    actor_own = config({})
    actor_own["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"] = {"ulysses_sequence_parallel_size": 2}
    actor_own["trainer"]["ulysses_sequence_parallel_size"] = 3
    assert check_trinity_config(actor_own, model, 4, version="0.5")[0] == (
        f"trainer.ulysses_sequence_parallel_size: SP=3 does not divide 4 GPUs (the trainer's){given}")
    # Its own budget holds no sequence at its own SP 1 (it would at the trainer's 2): Trinity 0.5 raises it there;
    # the critic runs at SP 1, where the verdict counts it, the plans at 2 (criticsp, s83: that line first; s84).
    at_1 = (f"{critic_key}.ulysses_sequence_parallel_size 1 is not the actor's SP 2: Trinity 0.5 runs the critic at SP "
            "1, raising its token budget to hold a sequence there (0.5.0 two); the verdict and its plan count the "
            "critic's update at SP 1, its token budget raised as Trinity 0.5.0 raises it, to hold two sequences "
            "there, and the planner's plans at SP 2: set them alike (--write does)")
    low = config({"ulysses_sequence_parallel_size": 1, "ppo_max_token_len_per_gpu": 16384})
    assert check_trinity_config(low, model, 4, version="0.5") == [
        at_1,
        (f"{critic_key}.ppo_max_token_len_per_gpu 16384 x SP 1 (the critic's) is below model.max_model_len 32768: "
         "Trinity 0.5 raises it to ceil(32768 / 1) = 32768 (Trinity 0.5.0 to its default, ceil(2 x 32768 / 1) = "
         "65536)"),
        PADDED_051.format(budget=f"{critic_key}.ppo_max_token_len_per_gpu (the critic's)", least=32768, sp=1,
                          tokens=32768)]
    # An algorithm without a critic (GRPO): Trinity raises its budget to no effect, so nothing is said of it; its SP
    # Trinity 0.5 checks all the same.
    grpo = config({"ulysses_sequence_parallel_size": 3, "ppo_max_token_len_per_gpu": 2048}) | {
        "algorithm": {"algorithm_type": "grpo"}}
    assert [problem.code for problem in trinity_config_problems(grpo, model, 4, version="0.5")] == [
        ConfigProblemCode.SP_DIVIDES_GPUS, ConfigProblemCode.SP_MODEL_HEADS]
    # Without a budget of its own it takes the trainer's, judged at its SP.
    taken = config({"ulysses_sequence_parallel_size": 1})
    taken["trainer"]["max_token_len_per_gpu"] = 16384
    assert check_trinity_config(taken, model, 4, version="0.5") == [
        at_1,
        ("trainer.max_token_len_per_gpu 16384 x SP 1 (the critic's, which sets no budget of its own) is below "
         "model.max_model_len 32768: Trinity 0.5 raises the critic's to ceil(32768 / 1) = 32768 (Trinity 0.5.0 to its "
         "default, ceil(2 x 32768 / 1) = 65536)"),
        PADDED_051.format(budget="trainer.max_token_len_per_gpu (the critic's, which sets no budget of its own)",
                          least=32768, sp=1, tokens=32768)]
    # The ref and the critic both at SP 1, both taking the trainer's: one line names both.
    both = config({"ulysses_sequence_parallel_size": 1})
    both["trainer"]["trainer_config"]["actor_rollout_ref"] = {
        "actor": {"ulysses_sequence_parallel_size": 2}, "ref": {"ulysses_sequence_parallel_size": 1}}
    both["trainer"]["max_token_len_per_gpu"] = 16384
    assert check_trinity_config(both, model, 4, version="0.5") == [
        at_1,
        ("trainer.max_token_len_per_gpu 16384 x SP 1 (the ref's and the critic's, which set no budget of their own) "
         "is below model.max_model_len 32768: Trinity 0.5 raises the ref's and the critic's to ceil(32768 / 1) = 32768 "
         "(Trinity 0.5.0 to its default, ceil(2 x 32768 / 1) = 65536)"),
        PADDED_051.format(budget=("trainer.max_token_len_per_gpu (the ref's and the critic's, which set no budget of "
                                  "their own)"), least=32768, sp=1, tokens=32768)]
    # Trinity 0.6 on verl 0.8 or later freezes the critic's SP and budget to the trainer's; 0.6 on verl before 0.8
    # refuses its SP 3 as 0.5 does: a role-sp-differs line, which refuses nothing (criticsp, s83: before, none). Its
    # own budget, with no SP of its own, is judged at the trainer's SP (verl_legacy raises it, FROZEN_KEYS ignores it).
    for version in ("0.6", None):
        who = "Trinity 0.6 on verl before 0.8" if version else "Trinity with verl before 0.8"
        assert check_trinity_config(config({"ulysses_sequence_parallel_size": 3}), model, 4, version=version) == [
            (f"{critic_key}.ulysses_sequence_parallel_size 3 is not trainer.ulysses_sequence_parallel_size 2: {who} "
             "checks the critic's SP as the actor's and refuses the config (SP=3 does not divide 4 GPUs); Trinity 0.6 "
             "on verl 0.8 or later ignores the key and runs the critic at SP 2; the verdict and the plans count the "
             "critic at SP 2: set them alike (--write does)")]
        assert check_trinity_config(config({"ppo_max_token_len_per_gpu": 8192}), model, 4, version=version) == [
            f"{critic_key}.ppo_max_token_len_per_gpu 8192 x SP 2 is below model.max_model_len 32768: " + (
                "Trinity with verl before 0.8 raises it to ceil(32768 / 2) = 16384 (Trinity 0.5.0 to its default, "
                "ceil(2 x 32768 / 2) = 32768), and Trinity 0.6 on verl 0.8 or later ignores the key" if version is None
                else "Trinity 0.6 on verl before 0.8 raises it to ceil(32768 / 2) = 16384, and on verl 0.8 or later "
                "ignores the key")] + ([PADDED_051.format(budget=f"{critic_key}.ppo_max_token_len_per_gpu", least=16384,
                                                          sp=2, tokens=32768)] if version is None else [])


def test_the_critics_forward_budget_is_judged_as_the_rollouts_at_the_critics_sp() -> None:
    # Trinity fills the critic's forward_max_token_len_per_gpu from its raised ppo budget (0.5.0
    # common/verl_config.py:600, after the raise at :595) and never raises it; verl before 0.8 runs the critic's value
    # forward at the critic's SP (dp_critic.py:168) and asserts each step's batch fits (0.5.2 and 0.6.0: its longest
    # sequence; 0.5.0 and 0.5.1: its padded width). Set by hand, it is judged as the rollout's, at the SP its forward
    # runs at.
    model = catalog().model("8B")
    forward_key = "trainer.trainer_config.critic.forward_max_token_len_per_gpu"

    def config(critic: dict[str, Any], algorithm: str = "ppo") -> dict[str, Any]:
        return {"algorithm": {"algorithm_type": algorithm},
                "model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 32768},
                "trainer": {"ulysses_sequence_parallel_size": 2, "trainer_config": {"critic": critic}}}

    # At the critic's own SP 1 under 0.5: 12000 holds no sequence (it would at the trainer's 2, 24000 < 32768 too).
    low = config({"ulysses_sequence_parallel_size": 1, "forward_max_token_len_per_gpu": 12000})
    problems = trinity_config_problems(low, model, 4, version="0.5")
    assert problems[0].code == ConfigProblemCode.ROLE_SP_DIFFERS  # the critic at SP 1, counted at 2 (criticsp, s83)
    assert problems[1:] == [(ConfigProblemCode.TOKEN_BUDGET_BELOW_LENGTH, (
        f"{forward_key} 12000 x SP 1 (the critic's) is below model.max_model_len 32768: Trinity 0.5 never raises it, "
        "and in the critic's value forward its verl (before 0.8) stops at the first step whose batch holds a sequence "
        "longer than that (Trinity 0.5.2) or is padded wider than that, to its longest prompt plus its longest "
        "response (0.5.0 and 0.5.1)"))]
    # 0.6 and no version: at the trainer's SP where the critic sets none of its own, and Trinity 0.6 on verl 0.8 or
    # later sets the key itself. 0.6.0 on verl before 0.8 checks the longest sequence; without a release, 0.5.0's and
    # 0.5.1's padded width is named too.
    stops: dict[TrinityVersion | None, str] = {
        "0.6": "verl before 0.8 stops at the first sequence longer than that in the critic's value forward",
        None: ("in the critic's value forward verl before 0.8 stops at the first step whose batch holds a sequence "
               "longer than that (Trinity 0.5.2 and 0.6) or is padded wider than that, to its longest prompt plus its "
               "longest response (0.5.0 and 0.5.1)")}
    for version, stop in stops.items():
        assert check_trinity_config(config({"forward_max_token_len_per_gpu": 12000}), model, 4, version=version) == [
            (f"{forward_key} 12000 x SP 2 is below model.max_model_len 32768: {stop}, and Trinity 0.6 on verl 0.8 or "
             "later ignores the key")]
        # 20000 x 2 would hold one at the trainer's SP, but Trinity 0.6 on verl before 0.8, as 0.5, runs the critic's
        # forward at its own SP 1, where it does not (criticsp, s83: before, judged at the trainer's SP, nothing)
        holds = config({"ulysses_sequence_parallel_size": 1, "forward_max_token_len_per_gpu": 20000})
        assert [problem.code for problem in trinity_config_problems(holds, model, 4, version=version)] == [
            ConfigProblemCode.ROLE_SP_DIFFERS, ConfigProblemCode.TOKEN_BUDGET_BELOW_LENGTH]
        assert (f"{forward_key} 20000 x SP 1 (the critic's) is below model.max_model_len 32768: "
                in check_trinity_config(holds, model, 4, version=version)[1])
    assert len(check_trinity_config(holds, model, 4, version="0.5")) == 2
    # No critic trained (GRPO): nothing is said of it; unset, it takes the raised ppo budget, which holds one.
    assert check_trinity_config(config({"forward_max_token_len_per_gpu": 12000}, "grpo"), model, 4) == []
    assert check_trinity_config(config({"ppo_max_token_len_per_gpu": 32768}), model, 4, version="0.5") == []
    # Read for the notes too, beside the ppo budget.
    text = ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
            "trainer: {trainer_config: {critic: {ppo_max_token_len_per_gpu: 9000, forward_max_token_len_per_gpu: "
            "65536}}}\n")
    assert read_trinity_config(text, "t.yaml", {}).critic_token_budgets == (
        ("trainer.trainer_config.critic.ppo_max_token_len_per_gpu", 9000), (forward_key, 65536))


def test_trinity_05_checks_the_ref_and_critic_ranks_at_their_own_sp_against_the_train_batch() -> None:
    # 0.5.2's _check_parallel_config raises where the train batch is no multiple of the GPUs / the role's SP
    # (trainer/verl/verl_config.py:424), for the ref and the critic as for the actor; 0.5.0 and 0.5.1 refuse a batch
    # the GPUs do not divide (config_validator.py:860 and :859), so such a batch too.
    model = catalog().model("8B")
    mapping = {"model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 16384},
               "trainer": {"ulysses_sequence_parallel_size": 2, "trainer_config": {
                   "actor_rollout_ref": {"ref": {"ulysses_sequence_parallel_size": 1}}}}}
    ref_key = "trainer.trainer_config.actor_rollout_ref.ref.ulysses_sequence_parallel_size"
    problems = trinity_config_problems(mapping, model, 6, version="0.5", train_batch_size=75,
                                       train_batch_source="buffer.train_batch_size")
    assert problems == [(ConfigProblemCode.BATCH_DIVIDES, (
        f"{ref_key}: the train batch of 75 (buffer.train_batch_size) must split evenly over the data-parallel ranks, "
        "and 6 (6 GPUs / SP=1) do not divide it, and Trinity 0.5 checks the ref's SP as the actor's: it refuses the "
        "config"))]
    # A batch the role's ranks divide, or no batch known: nothing of it.
    assert trinity_config_problems(mapping, model, 6, version="0.5", train_batch_size=96) == []
    assert trinity_config_problems(mapping, model, 6, version="0.5") == []
    # 0.6 on verl before 0.8 runs the same check (verl_legacy/verl_config.py:430): one line for both verl lines, its
    # words in test_legacyref2_s85.
    assert [problem.code for problem in trinity_config_problems(mapping, model, 6, version="0.6",
                                                                train_batch_size=75)] == [
        ConfigProblemCode.ROLE_SP_DIFFERS]
    assert trinity_config_problems(mapping, model, 6, version="0.6", train_batch_size=96) == []
    # The trainer's SP 1 given to an unset critic, the actor and the ref at their own 2: named from the trainer's key.
    critic = {"model": mapping["model"], "trainer": {"ulysses_sequence_parallel_size": 1, "trainer_config": {
        "actor_rollout_ref": {role: {"ulysses_sequence_parallel_size": 2} for role in ("actor", "ref")}}}}
    assert check_trinity_config(critic, model, 6, version="0.5", train_batch_size=9) == [
        ("trainer.ulysses_sequence_parallel_size: the train batch of 9 (buffer.train_batch_size) must split evenly "
         "over the data-parallel ranks, and 6 (6 GPUs / SP=1) do not divide it, and Trinity 0.5 gives it to the "
         "critic, whose SP it checks as the actor's: it refuses the config")]


def test_an_unset_rollout_budget_takes_the_actors_own() -> None:
    # Trinity fills rollout.log_prob_max_token_len_per_gpu (the actor's log-prob recompute) from the actor's budget,
    # not the trainer's: with the actor's and the ref's own at 12288, the rollout's is 12288 too, the budget in
    # effect, below the default 16384.
    roles = "actor: {ppo_max_token_len_per_gpu: 12288}, ref: {log_prob_max_token_len_per_gpu: 12288}"
    text = ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
            "explorer: {rollout_model: {engine_num: 4}}\ntrainer:\n  ulysses_sequence_parallel_size: 4\n"
            f"  trainer_config: {{actor_rollout_ref: {{{roles}}}}}\n")
    assert read_trinity_config(text, "trinity.yaml", {}).budget_in_effect(32768) == 12288
    # The rollout's own above them is the most any role takes where the recompute that reads it runs
    # (rollout_correction.bypass_mode false); with Trinity's default, true, no pass reads it (checks90).
    above_text = text.replace(roles, f"{roles}, rollout: {{log_prob_max_token_len_per_gpu: 20480}}")
    above = read_trinity_config(above_text, "trinity.yaml", {})
    assert above.followed_budgets() == () and above.budget_in_effect(32768) == 12288
    recomputed = read_trinity_config(above_text.replace(
        "trainer_config: {", "trainer_config: {algorithm: {rollout_correction: {bypass_mode: false}}, "), "t.yaml", {})
    assert recomputed.budget_in_effect(32768) == 20480
    # At the actor's, it is what Trinity gives it unset (read as unset: it follows the actor's at any length).
    alike = read_trinity_config(text.replace(roles, f"{roles}, rollout: {{log_prob_max_token_len_per_gpu: 12288}}"),
                                "trinity.yaml", {})
    rollout_key = "trainer.trainer_config.actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu"
    assert alike.followed_budgets() == (rollout_key,)
    assert alike.budget_in_effect(65536) == 12288


def test_trinity_05_fills_an_unset_rollout_budget_from_the_actors_as_raised() -> None:
    # The actor's 4096 x SP 4 holds no sequence of 32768: Trinity 0.5 raises it (0.5.0 to its default 16384, 0.5.1
    # and 0.5.2 to 8192) before the rollout's is filled from it (verl_config.py:542, then :665 in 0.5.0); the most
    # any 0.5 release gives is counted. Without the release, the actor's as set, 12288 (the ref's) the most.
    text = ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
            "explorer: {rollout_model: {engine_num: 4}}\ntrainer:\n  ulysses_sequence_parallel_size: 4\n"
            "  trainer_config: {actor_rollout_ref: {actor: {ppo_max_token_len_per_gpu: 4096}, "
            "ref: {log_prob_max_token_len_per_gpu: 12288}}}\n")
    assert read_trinity_config(text, "trinity.yaml", {}, "0.5").budget_in_effect(32768) == 16384
    assert read_trinity_config(text, "trinity.yaml", {}, "0.6").budget_in_effect(32768) == 12288
    assert read_trinity_config(text, "trinity.yaml", {}).budget_in_effect(32768) == 12288
    # A rollout's own written at that raised budget is what Trinity 0.5 gives it unset (followed); not so elsewhere.
    written = text.replace(", ref: {", ", rollout: {log_prob_max_token_len_per_gpu: 16384}, ref: {")
    rollout_key = "trainer.trainer_config.actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu"
    assert read_trinity_config(written, "trinity.yaml", {}, "0.5").followed_budgets() == (rollout_key,)
    assert read_trinity_config(written, "trinity.yaml", {}).followed_budgets() == ()


def test_chunked_entropy_with_an_entropy_loss_is_noted_where_the_release_reads_it() -> None:
    # verl's entropy_from_logits_with_chunking keeps each chunk's float32 logits and softmax for the backward when
    # the loss has an entropy term (Trinity's entropy_loss_fn other than none: GRPO's and PPO's default): more memory
    # at the logits peak, not less. verl before 0.8 reads the actor's key, its FSDP engine (0.8 or later) the actor's
    # fsdp_config's; entropy_checkpointing beside it, or a loss without entropy, takes no note.
    roles = "trainer.trainer_config.actor_rollout_ref"
    tail = (": verl keeps each chunk's float32 logits and softmax for the backward, about 8 bytes per logit more at "
            "the logits peak than the tables measured, so each GPU holds more than the verdict assumes; set it to "
            "false, or entropy_checkpointing to true beside it")

    def notes(algorithm: str, actor: str, version: TrinityVersion | None = None) -> list[tuple[str, str]]:
        text = (f"model: {{model_path: Qwen/Qwen3-8B}}\nalgorithm: {{{algorithm}}}\n"
                f"trainer: {{trainer_config: {{actor_rollout_ref: {{actor: {{{actor}}}}}}}}}\n")
        config = read_trinity_config(text, "trinity.yaml", {}, version)
        return [(code.value, words) for code, words in zip(config.note_codes, config.notes, strict=True)
                if code.value != "critic-trained"]

    chunked = "entropy_from_logits_with_chunking: true"
    assert notes("algorithm_type: grpo", chunked) == [("chunked-entropy", (
        f"{roles}.actor.entropy_from_logits_with_chunking is true (read by verl before 0.8) with the entropy loss of "
        f"algorithm_type grpo, on by default{tail}"))]
    assert notes("", chunked) == [("chunked-entropy", (
        f"{roles}.actor.entropy_from_logits_with_chunking is true (read by verl before 0.8) with the entropy loss of "
        f"PPO, Trinity's algorithm where algorithm.algorithm_type is unset, on by default{tail}"))]
    assert notes("algorithm_type: asymre, entropy_loss_fn: mix", chunked) == [("chunked-entropy", (
        f"{roles}.actor.entropy_from_logits_with_chunking is true (read by verl before 0.8) with "
        f"algorithm.entropy_loss_fn mix{tail}"))]
    engine = f"fsdp_config: {{{chunked}}}"
    assert notes("algorithm_type: grpo", engine) == [("chunked-entropy", (
        f"{roles}.actor.fsdp_config.entropy_from_logits_with_chunking is true (read by verl 0.8 or later) with the "
        f"entropy loss of algorithm_type grpo, on by default{tail}"))]
    assert notes("algorithm_type: grpo", engine, "0.5") == []  # Trinity 0.5 runs verl 0.7, which never reads it
    assert notes("algorithm_type: grpo", f"{chunked}, entropy_checkpointing: true") == []
    assert notes("algorithm_type: raft", chunked) == notes("algorithm_type: grpo, entropy_loss_fn: none", chunked) == []
    assert notes("algorithm_type: grpo", "entropy_from_logits_with_chunking: false") == []


# keys_for_plan


def _key(keys: list[PlanKey], path: tuple[str, ...]) -> PlanKey | None:
    return next((key for key in keys if key.path == path), None)


def test_plan_keys_name_the_yarn_type_as_the_config_does_and_caution_beyond_the_validated() -> None:
    plan, model = long_plan(), catalog().model("4B")
    rope = ("model", "rope_scaling")
    both = keys_for_plan(plan, model, {"model": {"rope_scaling": {"type": "yarn", "rope_type": "yarn"}}})
    # both keys where the config has both: the type says what vLLM takes from rope_type
    assert _key(both, (*rope, "rope_type")) is not None and _key(both, (*rope, "type")).existing_only
    # type alone (the model cards' form): rope_type too, which the rollout's vLLM reads alone (s73)
    old = keys_for_plan(plan, model, {"model": {"rope_scaling": {"type": "yarn"}}})
    assert _key(old, (*rope, "type")).existing_only and not _key(old, (*rope, "rope_type")).existing_only
    assert not plan.yarn_beyond_validated and _key(old, (*rope, "factor")).comment == "max_model_len / 40960"
    beyond = keys_for_plan(plan.model_copy(update={"yarn_beyond_validated": True}), model)
    assert _key(beyond, (*rope, "factor")).comment == f"max_model_len / 40960; {yarn_beyond_words(model)}"


def test_plan_keys_set_trinity_06_trainer_flags_as_the_version_and_config_call_for() -> None:
    model = catalog().model("4B")
    flags = [("trainer", flag) for flag in OFFLOAD_FLAGS]
    # Without Offload, Trinity 0.6's flags a config has under trainer are turned off.
    off = keys_for_plan(vanilla_plan(), model, {"trainer": {"param_offload": True}}, version="0.6")
    assert [(key.value, key.comment) for key in map(partial(_key, off), flags)] == [(False, None)] * 3
    assert not any(key.path in flags for key in keys_for_plan(vanilla_plan(), model, {}, version="0.6"))
    # The comment on them is for a fragment of no version only: one for 0.6 has them without it.
    assert _key(keys_for_plan(long_plan(), model), flags[0]).comment == trinity_06_keys_comment()
    assert [_key(keys_for_plan(long_plan(), model, version="0.6"), flag).comment for flag in flags] == [None] * 3


def test_plan_keys_with_offload_turn_on_every_roles_flags_in_the_config_the_refs_too() -> None:
    keys = keys_for_plan(long_plan(), catalog().model("4B"), {})
    for role in ROLES:
        for section in ("fsdp_config", IGNORED_SECTION):
            for flag in OFFLOAD_FLAGS:
                key = _key(keys, offload_path(role, flag, section))
                assert key is not None and key.value is True, (role, section, flag)
                assert key.existing_only is (section == IGNORED_SECTION)
    # Without Offload the reference model's stay as they are; the actor's go off.
    plain = keys_for_plan(vanilla_plan(), catalog().model("4B"), {})
    assert _key(plain, offload_path("ref", "param_offload", IGNORED_SECTION)) is None
    assert _key(plain, offload_path("actor", "param_offload", IGNORED_SECTION)).value is False


def _resolved(expression: str, environ: dict[str, str]) -> object:
    """`expression` resolved as the value of a key k, alone in its config."""
    return ConfigValues({"k": expression}, environ).get(("k",))


_INF, _NAN = float("inf"), float("nan")


@pytest.mark.parametrize(("text", "decoded"), [
    ("8192", 8192), ("+5", 5), ("-0", 0), ("1_000", 1000), ("-1_000", -1000), ("1e3", 1000.0), ("1E+3", 1000.0),
    ("1e-5", 1e-5), ("1.", 1.0), (".5", 0.5), ("-.5", -0.5), ("1_000.5", 1000.5), ("1.e3", 1000.0), ("1e400", _INF),
    ("inf", _INF), ("-inf", -_INF), ("+Inf", _INF), ("NaN", _NAN), ("true", True), ("True", True), ("FALSE", False),
    ("null", None), ("NULL", None), ("Null", None), ("'5'", "5"), ('"5"', "5"), ("'a b'", "a b"), ("'null'", "null"),
    ("''", ""), ("'a\\'b'", "a'b"), ("a\\,b", "a,b"), ("a\\b", "a\\b"), ("abc", "abc"), ("a b", "a b"),
    ("a:b", "a:b"), ("/m/Qwen3-8B", "/m/Qwen3-8B"),
    # text in OmegaConf's grammar, where YAML reads a number, a date, a boolean or null
    ("010", "010"), ("016384", "016384"), ("00", "00"), ("0x10", "0x10"), ("0o10", "0o10"), ("1__0", "1__0"),
    ("1_", "1_"), ("00.5", "00.5"), (".inf", ".inf"), ("-.inf", "-.inf"), (".nan", ".nan"), ("infinity", "infinity"),
    ("2024-01-01", "2024-01-01"), ("12:30", "12:30"), (" 16384 ", " 16384 "), ("5 ", "5 "), ("\t5", "\t5"),
    ("yes", "yes"), ("no", "no"), ("on", "on"), ("y", "y"), ("None", "None"), ("none", "none"),
    # a list or mapping, as OmegaConf decodes it (its ListConfig, DictConfig), items decoded too
    ("[1,2]", [1, 2]), ("{a: 1}", {"a": 1}), ("[a b, '2', {x: null}]", ["a b", "2", {"x": None}]), ("[]", []),
    # underscores between digits in a fraction or exponent too, one at a time; a sign once; no leading zero before e
    ("1.0_5", 1.05), ("1e1_0", 1e10), ("1e05", 1e5), ("1.0__1", "1.0__1"), ("1e1__0", "1e1__0"), ("1.5_", "1.5_"),
    ("1e5_", "1e5_"), (".", "."), ("-.", "-."), ("+-5", "+-5"), ("--5", "--5"), ("00e1", "00e1"),
    # unquoted: $ and % plain; a backslash undoes itself, a space and =, not n; a trailing one stays
    ("a$b", "a$b"), ("50%", "50%"), ("a\\\\b", "a\\b"), ("a\\ b", "a b"), ("a\\=b", "a=b"), ("a\\nb", "a\\nb"),
    ("a\\", "a\\"),
    # quoted: backslashes before no quote stay as they are
    ("'a\\b'", "a\\b"), ("'a\\\\b'", "a\\\\b"),
])
def test_oc_decode_reads_text_as_omegaconfs_grammar_does(text: str, decoded: object) -> None:
    # Each as OmegaConf 2.4 gives ${oc.decode:${oc.env:V}} with V set to the text (compared with it, not YAML).
    value = _resolved("${oc.decode:${oc.env:V}}", {"V": text})
    assert (repr(value), type(value)) == (repr(decoded), type(decoded))


@pytest.mark.parametrize(("expression", "decoded"), [
    ('${oc.decode:"5"}', 5), ("${oc.decode:'5'}", 5), ('${oc.decode: "5" }', 5), ('${oc.decode:"0x10"}', "0x10"),
    ("${oc.decode:0x10}", "0x10"), ("${oc.decode:abc}", "abc"), ("${oc.decode:null}", None),
    ('${oc.decode:"null"}', None), ("${oc.decode:'\"5\"'}", "5"), ('${oc.decode:" 5 "}', " 5 "),
    ('${oc.decode:"inf"}', _INF), ('${oc.decode:"${oc.env:X}"}', 5), ('${oc.decode:"1${oc.env:X}"}', 15),
    ("${oc.decode:5${oc.env:X}}", 55), ("${oc.decode:x${oc.env:X}}", "x5"), ("${oc.decode:${oc.env:Q}}", "5"),
    ('${oc.decode:"${oc.env:UNSET,null}"}', "None"), ("${oc.decode:${oc.env:UNSET,null}}", None),
    ("${oc.decode:'${oc.env:UNSET,'7'}'}", 7), ('${oc.decode:${oc.decode:"\'5\'"}}', 5),
])
def test_oc_decode_takes_its_argument_as_omegaconf_does(expression: str, decoded: object) -> None:
    # A quoted argument is unquoted, then decoded: "5" is 5 (as OmegaConf 2.4 gives each).
    value = _resolved(expression, {"X": "5", "Q": '"5"'})
    assert (repr(value), type(value)) == (repr(decoded), type(decoded))


@pytest.mark.parametrize(("expression", "text", "message"), [
    ("${oc.decode:${oc.env:V}}", "~",
     "k: OmegaConf cannot decode '~' in '${oc.decode:${oc.env:V}}': '~' outside quotes (character 1)"),
    ("${oc.decode:${oc.env:V}}", "1,000",
     "k: OmegaConf cannot decode '1,000' in '${oc.decode:${oc.env:V}}': unexpected ',' (character 2)"),
    ("${oc.decode:${oc.env:V}}", "café",
     "k: OmegaConf cannot decode 'café' in '${oc.decode:${oc.env:V}}': 'é' outside quotes (character 4)"),
    ("${oc.decode:${oc.env:V}}", "", "k: OmegaConf cannot decode '' in '${oc.decode:${oc.env:V}}': blank text"),
    ("${oc.decode:${oc.env:V}}", " ", "k: OmegaConf cannot decode ' ' in '${oc.decode:${oc.env:V}}': blank text"),
    ("${oc.decode:${oc.env:V}}", "'5' ",
     "k: OmegaConf cannot decode \"'5' \" in '${oc.decode:${oc.env:V}}': unexpected ' ' (character 4)"),
    ("${oc.decode:${oc.env:V}}", "'a\\'",
     "k: OmegaConf cannot decode \"'a\\\\'\" in '${oc.decode:${oc.env:V}}': no closing quote (the ' at character 1)"),
    ("${oc.decode:${oc.env:V}}", "9" * 5000, "k: a number too long to read (thousands of digits)"),
    ("${oc.decode:${oc.env:V}}", "${oc.env:W}",  # the text it decodes is resolved in turn
     ("k: environment variable W is not set and '${oc.env:W}' has no default: set W as trinity run will have it "
      "(Trinity fails to load the config without it), or give it a default (${oc.env:W,DEFAULT})")),
    ("${oc.decode:${oc.env:V}}", "${oc.decode:${oc.env:V}}",  # decoded into itself: no end, no traceback
     "k: cannot resolve '${oc.decode:${oc.env:V}}': its interpolations nest too deep"),
    ("${oc.decode:5}", "", "k: '${oc.decode:5}': OmegaConf's oc.decode takes text or null, not 5 (quote it: \"5\")"),
    ("${oc.decode:inf}", "",
     "k: '${oc.decode:inf}': OmegaConf's oc.decode takes text or null, not inf (quote it: \"inf\")"),
    ("${oc.decode:[1,2]}", "",
     "k: '${oc.decode:[1,2]}': OmegaConf's oc.decode takes text or null, not a list or mapping"),
    ("${oc.decode:}", "", "k: '${oc.decode:}' gives oc.decode no text"),
    ("${oc.decode:${oc.env:V}}", "\t", "k: OmegaConf cannot decode '\\t' in '${oc.decode:${oc.env:V}}': blank text"),
    ("${oc.decode:${oc.env:V}}", "'",
     "k: OmegaConf cannot decode \"'\" in '${oc.decode:${oc.env:V}}': no closing quote (the ' at character 1)"),
    ("${oc.decode:${oc.env:V}}", "a\\'b",  # a backslash does not escape a quote outside quotes
     "k: OmegaConf cannot decode \"a\\\\'b\" in '${oc.decode:${oc.env:V}}': unexpected \"'\" (character 3)"),
    ("${oc.decode:${oc.decode:'5'}}", "",  # a number from an interpolation: no hint to quote it
     "k: \"${oc.decode:${oc.decode:'5'}}\": OmegaConf's oc.decode takes text or null, not 5"),
])
def test_oc_decode_refuses_what_omegaconf_refuses_in_one_line(expression: str, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        _resolved(expression, {"V": text})
    assert str(raised.value) == message


def test_interpolations_written_thousands_deep_are_refused_in_one_line() -> None:
    # Parsing them (not only resolving them) goes deeper than Python's recursion: a traceback before
    deep = "${" * 3000 + "}" * 3000
    with pytest.raises(ConfigError) as raised:
        _resolved(deep, {})
    assert str(raised.value) == f"k: OmegaConf cannot read {brief(deep)}: its interpolations nest too deep"


_GRAMMAR_ENVIRON = {"SET": "8192", "LIST": "[1, 2]", "MAP": "{rope_type: yarn, factor: 2.0}", "BR": "a}b"}
"""Variables for the cases OmegaConf resolved (2.3.0 and 2.4.0 alike, with these set and nothing else)."""


@pytest.mark.parametrize(("expression", "resolved"), [
    # quotes inside an interpolation: a } or { in them is text, not its end
    ("${oc.env:UNSET,'a}b'}", "a}b"), ('${oc.env:UNSET,"{x}"}', "{x}"), ("${oc.decode:'{a: \"}\"}'}", {"a": "}"}),
    ("${oc.env:BR}x", "a}bx"),
    # a backslash escapes a quote or ${ after it in quotes (a run of them halved before either), else stays
    ("${oc.env:UNSET,'it\\'s'}", "it's"), ("${oc.env:UNSET,'a\\\\'}", "a\\"), ("${oc.env:UNSET,'a\\b'}", "a\\b"),
    ('${oc.env:UNSET,"say \\"hi\\""}', 'say "hi"'), ("${oc.env:UNSET,'\\${SET}'}", "${SET}"),
    ("${oc.env:UNSET,'\\\\${oc.env:SET}'}", "\\8192"), ('${oc.env:UNSET,"it\'s"}', "it's"),
    # oc.decode into a list or mapping; joined into text, it is written as Python writes it (as OmegaConf does)
    ('${oc.decode:"[1, 2.5, null, true]"}', [1, 2.5, None, True]),
    ("${oc.decode:${oc.env:MAP}}", {"rope_type": "yarn", "factor": 2.0}), ("${oc.decode:${oc.env:LIST}}", [1, 2]),
    ("x${oc.decode:${oc.env:MAP}}", "x{'rope_type': 'yarn', 'factor': 2.0}"),
    ("${oc.decode:'[a, [b, {c: d}]]'}", ["a", ["b", {"c": "d"}]]), ("${oc.decode:'[1,,2]'}", [1, "", 2]),
    ("${oc.decode:'{a: ${oc.env:SET}}'}", {"a": 8192}),
    # an escaped interpolation at the top is text; backslashes before one are halved, elsewhere kept
    ("\\${oc.env:SET}", "${oc.env:SET}"), ("a\\${model.max_model_len}b", "a${model.max_model_len}b"),
    ("\\\\${oc.env:SET}", "\\8192"), ("\\\\\\${oc.env:SET}", "\\${oc.env:SET}"), ("a\\\\b${oc.env:SET}", "a\\\\b8192"),
    # spaces after ${, around the colon and commas, before }
    ("${ oc.env:SET }", "8192"), ("${oc.env :SET}", "8192"), ("${oc.env: SET ,  4096  }", "8192"),
    ("${oc.decode:  ' 5 ' }", " 5 "),
    # a default is read by the grammar, then written as text (str()); a missing one is empty; so is a variable's name
    ("${oc.env:UNSET,1e-6}", "1e-06"), ("${oc.env:UNSET,1_000}", "1000"), ("${oc.env:UNSET,TRUE}", "True"),
    ("${oc.env:UNSET,0010}", "0010"), ("${oc.env:UNSET,}", ""), ("${oc.env:,4096}", "4096"),
    ("${oc.env:UNSET,a\\,b}", "a,b"), ("${oc.env:UNSET,a b}", "a b"), ("${oc.env:UNSET,[1,2]}", "[1, 2]"),
    ("a${oc.env:UNSET,1.0}", "a1.0"), ("a${oc.decode:'true'}", "aTrue"),
    # nested
    ("${oc.env:UNSET,${oc.env:SET}}", "8192"), ("${oc.decode:${oc.env:UNSET,'16384'}}", 16384),
])
def test_interpolations_resolve_as_omegaconf_resolves_them(expression: str, resolved: object) -> None:
    value = _resolved(expression, _GRAMMAR_ENVIRON)
    assert (repr(value), type(value)) == (repr(resolved), type(resolved))


@pytest.mark.parametrize(("expression", "message"), [
    # what OmegaConf refuses too
    ("${oc . env:SET}", "k: OmegaConf cannot read '${oc . env:SET}': ' ' in an interpolation's name (character 5)"),
    ("${oc.env:SET,${oc.env:UNSET}}",  # the default is resolved even where the variable is set
     ("k: environment variable UNSET is not set and '${oc.env:UNSET}' has no default: set UNSET as trinity run "
      "will have it (Trinity fails to load the config without it), or give it a default (${oc.env:UNSET,DEFAULT})")),
    ("${oc.env:UNSET,a=b}", "k: OmegaConf cannot read '${oc.env:UNSET,a=b}': '=' outside quotes (character 17)"),
    ("${oc.env:UNSET,'abc}",
     "k: OmegaConf cannot read \"${oc.env:UNSET,'abc}\": no closing quote (the ' at character 16)"),
    ("${oc.env:UNSET,'a'b}", "k: OmegaConf cannot read \"${oc.env:UNSET,'a'b}\": unexpected 'b' (character 19)"),
    ("${oc.env:A,B,C}",
     "k: '${oc.env:A,B,C}' gives oc.env 3 arguments, not a variable and at most a default (quote a comma in it)"),
    ("${oc.decode:1,000}", "k: '${oc.decode:1,000}' gives oc.decode 2 arguments, not one text (quote a comma in it)"),
    ("${oc.decode:'{a: 1,}'}",
     "k: OmegaConf cannot decode '{a: 1,}' in \"${oc.decode:'{a: 1,}'}\": unexpected '}' (character 7)"),
    ("${oc.decode:'a}'}", "k: OmegaConf cannot decode 'a}' in \"${oc.decode:'a}'}\": '}' closes nothing (character 2)"),
    ("${}", "k: OmegaConf cannot read '${}': an empty interpolation (character 1)"),
    ("a${oc.decode:true}",
     "k: '${oc.decode:true}': OmegaConf's oc.decode takes text or null, not true (quote it: \"true\")"),
    # references to keys the config has not, or above its top
    ("${..max_model_len}", "k: cannot resolve '${..max_model_len}': it climbs above the config's top"),
    ("${model.max_model_len}", "k: cannot resolve '${model.max_model_len}': the config has no model"),
    # other resolvers
    ("${oc.select:model.x,1}", ("k: cannot resolve '${oc.select:model.x,1}' (only references to keys, "
                                "${oc.env:VAR,default} and ${oc.decode:...} are supported)")),
])
def test_interpolations_refused_in_one_line(expression: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        _resolved(expression, _GRAMMAR_ENVIRON)
    assert str(raised.value) == message


@pytest.mark.parametrize(("text", "decoded"), [
    # The config checks' reading of a typed key's text (close to OmegaConf's int()): not oc.decode's.
    (" 16384 ", 16384), ("016384", 16384), ("8192", 8192), ("2.5", 2.5), ("true", True), ("abc", "abc"),
])
def test_the_checks_read_a_typed_keys_text_as_before(text: str, decoded: object) -> None:
    assert (decode_scalar(text), type(decode_scalar(text))) == (decoded, type(decoded))


@pytest.mark.parametrize(("text", "problems"), [
    ("inf", [f"model.max_model_len must be a whole number, got .inf: {INT_FIELD_REFUSES}"]),  # a float to OmegaConf
    (".inf", [f"model.max_model_len must be a whole number, got '.inf': {INT_FIELD_REFUSES}"]),  # text to it
    ("nan", [f"model.max_model_len must be a whole number, got .nan: {INT_FIELD_REFUSES}"]),
    ("true", [f"model.max_model_len must be a whole number, got true: {INT_FIELD_REFUSES}"]),
    ("[1,2]", [f"model.max_model_len must be a whole number, got [1, 2]: {INT_FIELD_REFUSES}"]),  # a list to OmegaConf
    ("16384", []),
])
def test_checks_take_or_refuse_what_oc_decode_gives_a_typed_key(text: str, problems: list[str]) -> None:
    config = {"model": {"max_model_len": "${oc.decode:${oc.env:V}}"}}
    assert check_trinity_config(config, catalog().model("4B"), 1, environ={"V": text}) == problems


@pytest.mark.parametrize("text", ["null", "~", "Null", ""])
def test_checks_take_an_environment_variables_null_as_text_not_as_unset(text: str) -> None:
    # oc.env gives text: OmegaConf converts it to the key's type, and "null" is no whole number (it does not unset
    # the key), so the check names it, as it names any text that is not a number.
    mapping = {"model": {"model_path": "q/Qwen3-4B", "max_model_len": 8192},
               "trainer": {"max_token_len_per_gpu": "${oc.env:BUDGET}"}}
    assert check_trinity_config(mapping, catalog().model("4B"), 4, environ={"BUDGET": text}) == [
        f"trainer.max_token_len_per_gpu must be a whole number, got {text!r}: {INT_FIELD_REFUSES}"]


@pytest.mark.parametrize("text", ["[1", "a: b: c", "%x", "*a"])
def test_checks_name_an_environment_variables_text_that_is_not_yaml_as_text_not_a_number(text: str) -> None:
    # Text YAML cannot read (an open list, a mapping in a scalar, a directive, an alias with no anchor) stays the text.
    mapping = {"model": {"model_path": "q/Qwen3-4B", "max_model_len": 8192},
               "trainer": {"max_token_len_per_gpu": "${oc.env:BUDGET}"}}
    assert decode_scalar(text) == text
    assert check_trinity_config(mapping, catalog().model("4B"), 4, environ={"BUDGET": text}) == [
        f"trainer.max_token_len_per_gpu must be a whole number, got {text!r}: {INT_FIELD_REFUSES}"]


def test_checks_say_oc_decode_leaves_text_that_rope_scaling_passes_on_as_written() -> None:
    config = {"model": {"max_model_len": 81920, "rope_scaling": {
        "rope_type": "yarn", "factor": "${oc.decode:${oc.env:F}}", "original_max_position_embeddings": 40960,
        "rope_theta": 1000000}}}  # the model's own base, without which a but: line says so (ropecheck, s79)
    problems = check_trinity_config(config, catalog().model("4B"), 1, environ={"F": "02.0"})
    assert problems == [("model.rope_scaling.factor is the text '02.0': model.rope_scaling reaches the model as "
                         "written (oc.decode leaves it text, as OmegaConf's grammar reads it); write the number as "
                         "that grammar spells one (no leading zero, 0x or .inf)")]
    assert check_trinity_config(config, catalog().model("4B"), 1, environ={"F": "2.0"}) == []
    config["model"]["rope_scaling"]["factor"] = "${oc.decode:'02.0'}"  # oc.decode alone: the same words
    assert check_trinity_config(config, catalog().model("4B"), 1) == problems
    config["model"]["rope_scaling"]["factor"] = "${oc.env:F}"  # oc.env alone: its own words
    assert check_trinity_config(config, catalog().model("4B"), 1, environ={"F": "2.0"}) == [
        ("model.rope_scaling.factor is the text '2.0': model.rope_scaling reaches the model as written (an oc.env "
         "value stays text there); write the number, or ${oc.decode:...} around it")]


def test_checks_read_a_rope_scaling_that_oc_decode_gives_as_the_mapping_omegaconf_decodes() -> None:
    config = {"mode": "train",  # no rollout, which would refuse a YaRN that falls short
              "model": {"max_model_len": 81920, "rope_scaling": "${oc.decode:${oc.env:ROPE,null}}"}}
    yarn = "{rope_type: yarn, factor: 2.0, original_max_position_embeddings: 40960, rope_theta: 1000000}"
    assert check_trinity_config(config, catalog().model("4B"), 1, environ={"ROPE": yarn}) == []
    assert check_trinity_config(config, catalog().model("4B"), 1, environ={"ROPE": yarn.replace("2.0", "1.5")}) == [
        ("model.rope_scaling (factor 1.5 over 40960) covers 61440 tokens, fewer than max_model_len 81920: set it as "
         "Trinity-RFT's guide does, factor max_model_len / 40960 = 2.0 over 40960")]
    unset = check_trinity_config(config, catalog().model("4B"), 1, environ={})  # null: none, as if absent
    assert unset == check_trinity_config({"mode": "train", "model": {"max_model_len": 81920}}, catalog().model("4B"),
                                         1) != []
    assert check_trinity_config(config, catalog().model("4B"), 1, environ={"ROPE": "yarn"})[0].startswith(
        "model.rope_scaling must be a mapping, got 'yarn': set {rope_type: yarn")


def test_oc_decode_refuses_a_mapping_as_omegaconf_does() -> None:
    # OmegaConf: "`oc.decode` can only take strings or None as input" (a DictConfig here).
    with pytest.raises(ConfigError, match="OmegaConf's oc.decode takes text or null, not a list or mapping$"):
        _resolved("${oc.decode:{a: 1}}", {})


_REFERENCES = [
    # (config, key read, what OmegaConf 2.3.0 gives there), each compared with it
    ("model: {max_model_len: 32768}\ntrainer: {max_token_len_per_gpu: '${model.max_model_len}'}",
     ("trainer", "max_token_len_per_gpu"), 32768),
    ("trainer: {max_token_len_per_gpu: 16384, x: {actor: {ppo: '${...max_token_len_per_gpu}'}}}",
     ("trainer", "x", "actor", "ppo"), 16384),
    ("a: {b: 1, c: '${.b}'}", ("a", "c"), 1),
    ("a: {b: [10, 20]}\nx: '${a.b[1]}'", ("x",), 20),
    ("a: {b: [10, 20]}\nx: '${a.b.0}'", ("x",), 10),
    ("a: {b: [10, {c: 5}]}\nx: '${a[b][1].c}'", ("x",), 5),
    ("a: 4096\nb: '${a}'\nx: '${b}'", ("x",), 4096),
    ("a: 1\nb: two\nx: '${a}-${b}'", ("x",), "1-two"),
    ("a: {n: 1, m: [2]}\nx: '${a}'", ("x",), {"n": 1, "m": [2]}),
    ("a: {n: 1, m: '${.n}'}\nx: '${a}'", ("x", "m"), 1),  # resolved where it is, not where it is referred to
    ("a: {b: 1}\nx: 'v${a}'", ("x",), "v{'b': 1}"),
    ("k: b\na: {b: 7}\nx: '${a.${k}}'", ("x",), 7),
    ("k: b.c\na: {b: {c: 3}}\nx: '${a.${k}}'", ("x",), 3),
    ("a: '${oc.env:L,8192}'\nx: '${a}'", ("x",), "8192"),
    ("c: '${oc.decode:\"{node_num: 1, gpu_per_node: 8}\"}'", ("c", "gpu_per_node"), 8),
    ("a: '5'\nx: '${oc.decode:${a}}'", ("x",), 5),
    ("a: true\nx: 'on: ${a}'", ("x",), "on: True"),
    ("a: null\nx: '${a}'", ("x",), None),
    ("a: null\nx: 1", ("a", "b"), None),  # a key under a null section reads as absent
    ("a: '\\${b}'\nx: '${a}'", ("x",), "${b}"),
    ("x: '${[a]}'\na: 1", ("x",), 1),
]


@pytest.mark.parametrize(("text", "path", "resolved"), _REFERENCES)
def test_references_resolve_as_omegaconf_resolves_them(text: str, path: tuple[str, ...], resolved: object) -> None:
    value = ConfigValues(load_config_mapping(text, "c"), {}).get(path)
    assert (repr(value), type(value)) == (repr(resolved), type(resolved))


@pytest.mark.parametrize(("text", "message"), [
    # OmegaConf refuses each (Interpolation key not found, Recursive interpolation, Interpolation to parent node, ...)
    ("a: {b: 1}\nx: '${a.c}'", "c: x: cannot resolve '${a.c}': the config has no a.c"),
    ("x: '${a.b}'", "c: x: cannot resolve '${a.b}': the config has no a"),
    ("a: [1]\nx: '${a[3]}'", "c: x: cannot resolve '${a[3]}': the config has no a[3]"),
    ("x: '${b}'\nb: '${x}'", "c: x: '${b}' reads b: '${x}' reads x: a cycle of interpolations, back to x"),
    ("x: '${x}'", "c: x: '${x}' reads x: a cycle of interpolations, back to x"),
    ("x: {b: '${x}'}", "c: x.b: cannot resolve '${x}': it refers to x, which holds it"),
    ("x: '${..a}'", "c: x: cannot resolve '${..a}': it climbs above the config's top"),
    ("a: [1]\nx: '${a.b}'", "c: x: cannot resolve '${a.b}': a is a list, and 'b' is no index"),
    ("a: 5\nx: '${a.b}'", "c: x: cannot resolve '${a.b}': a is 5, not a mapping or list, so it has no b"),
    ("a: null\nx: '${a.b}'", "c: x: cannot resolve '${a.b}': a is null, not a mapping or list, so it has no b"),
    ("a: ???\nx: '${a}'",
     "c: x: cannot resolve '${a}': a is ???, a value missing (OmegaConf refuses to read it): give it"),
    ("k: 5\na: {b: 7}\nx: '${a.${k}}'", "c: x: cannot resolve '${a.${k}}': '${k}' gives 5, not a key's name"),
    ("x: '${a..b}'", "c: x: OmegaConf cannot read '${a..b}': not a key's path (the ${ at character 1)"),
    ("a: '${oc.env:A}'\nx: '${a}'",
     ("c: x: '${a}' reads a: environment variable A is not set and '${oc.env:A}' has no default: set A as trinity "
      "run will have it (Trinity fails to load the config without it), or give it a default "
      "(${oc.env:A,DEFAULT})")),
    # OmegaConf carries the mapping over as written (its own interpolations unresolved): refused
    ("a: {y: '${b}'}\nb: 1\nk: '[1, \\${a}]'\nx: '${oc.decode:${k}}'",
     ("c: x: cannot resolve '${a}' in what oc.decode decodes: it gives a mapping or list with interpolations in it, "
      "which OmegaConf resolves otherwise there")),
    ("a: ['${b}']\nb: 1\nk: '[1, \\${a}]'\nx: '${oc.decode:${k}}'",  # a list of them, likewise
     ("c: x: cannot resolve '${a}' in what oc.decode decodes: it gives a mapping or list with interpolations in it, "
      "which OmegaConf resolves otherwise there")),
])
def test_references_refused_in_one_line(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        ConfigValues(load_config_mapping(text, "c"), {}, "c").get(("x", "b") if text.startswith("x: {") else ("x",))
    assert str(raised.value) == message


def test_read_trinity_config_resolves_references_and_sections_given_by_oc_decode() -> None:
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${oc.env:LEN,32768}\n"
            "cluster: \"${oc.decode:'{node_num: 1, gpu_per_node: 8}'}\"\n"
            "explorer:\n  rollout_model:\n    engine_num: ${..auxiliary_models[0].engine_num}\n"
            "  auxiliary_models:\n  - engine_num: 2\n    tensor_parallel_size: ${...rollout_model.engine_num}\n"
            "trainer:\n  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: ${model.max_model_len}\n"
            "  trainer_config:\n    actor_rollout_ref:\n      actor:\n"
            "        ppo_max_token_len_per_gpu: ${trainer.max_token_len_per_gpu}\n")
    config = read_trinity_config(text, "c.yaml", {"LEN": "65536"})
    assert (config.max_model_len, config.max_token_len_per_gpu, config.role_token_budgets) == (
        65536, 65536, (("trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu", 65536),))
    assert (config.node_gpus, config.rollout_gpus, config.auxiliary_gpus, config.trainer_gpus) == (8, 6, 4, 2)
    missing = (r"^c.yaml: trainer.max_token_len_per_gpu: cannot resolve '\$\{model.max_len\}': the config has no "
               "model.max_len$")
    with pytest.raises(ConfigError, match=missing):
        read_trinity_config(text.replace("${model.max_model_len}", "${model.max_len}"), "c.yaml", {})


def test_patch_keeps_a_reference_only_where_it_gives_the_plans_value_in_the_patched_config() -> None:
    # long_plan: 102400 tokens at SP 4, a budget of 51200. The trainer's budget refers to the length, 51200 before the
    # patch (the plan's budget) but 102400 after it: it is written. The actor's SP, the plan's 4 through a relative
    # reference, stays; so does the actor's budget referring to the trainer's, lowered to the plan's 51200 with it.
    plan, model = long_plan(), catalog().model("4B")
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: 51200\n"
            "trainer:\n  ulysses_sequence_parallel_size: 4\n  max_token_len_per_gpu: ${model.max_model_len}\n"
            "  trainer_config:\n    actor_rollout_ref:\n      actor:\n"
            "        ulysses_sequence_parallel_size: ${....ulysses_sequence_parallel_size}\n"
            "        ppo_max_token_len_per_gpu: ${trainer.max_token_len_per_gpu}\n")
    after = _safe_load(patch_trinity_config(text, plan, model, environ={}))
    actor = after["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]
    assert after["trainer"]["max_token_len_per_gpu"] == 51200
    assert (actor["ulysses_sequence_parallel_size"], actor["ppo_max_token_len_per_gpu"]) == (
        "${....ulysses_sequence_parallel_size}", "${trainer.max_token_len_per_gpu}")
    assert kept_interpolations(text, plan, model, environ={}) == [
        ("trainer.trainer_config.actor_rollout_ref.actor.ulysses_sequence_parallel_size stays "
         "${....ulysses_sequence_parallel_size}, which gives 4 in this environment: the plan holds for that value")]
    # A budget above the plan's, referred to: the trainer's is written as the plan's, and the actor's, lowered to it,
    # keeps its reference, which gives the plan's budget in the patched config.
    above = text.replace("max_model_len: 51200", "max_model_len: 65536").replace(
        "${model.max_model_len}", "${oc.decode:'65536'}")
    patched = patch_trinity_config(above, plan, model, environ={})
    actor = _safe_load(patched)["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]
    assert actor["ppo_max_token_len_per_gpu"] == "${trainer.max_token_len_per_gpu}"
    assert read_trinity_config(patched, "p.yaml", {}).budget_in_effect(102400) == 51200


def test_patch_writes_both_of_two_references_to_each_other_that_give_the_plans_values_only_one_at_a_time() -> None:
    # sp2_plan: 24576 tokens and a budget of 24576. Kept alone, either reference gives the plan's value (the other is
    # written as 24576); kept together they refer to each other, which Trinity cannot read: both are written.
    plan, model = sp2_plan(), catalog().model("4B")
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: ${trainer.max_token_len_per_gpu}\n"
            "trainer:\n  max_token_len_per_gpu: ${model.max_model_len}\n")
    after = _safe_load(patch_trinity_config(text, plan, model, environ={}))
    assert (after["model"]["max_model_len"], after["trainer"]["max_token_len_per_gpu"]) == (24576, 24576)
    assert kept_interpolations(text, plan, model, environ={}) == []


def test_patch_keeps_only_the_interpolations_that_give_the_plans_values_with_those_it_writes() -> None:
    # Each of Trinity 0.6's three flags gives true on its own (the others written as the plan's true, "True" in
    # text). Kept together, optimizer_offload reads offload_policy's "TRUE" (D_TRUE: no), so it is written; and then
    # param_offload reads X_True_TRUE (false): written too. Only offload_policy's, which gives TRUE whatever, stays.
    plan, model = long_plan(), catalog().model("4B")
    text = ("model:\n  model_path: q/Qwen3-4B\ntrainer:\n  trainer_strategy: fsdp2\n"
            "  param_offload: ${oc.env:X_${trainer.optimizer_offload}_${trainer.offload_policy},true}\n"
            "  optimizer_offload: ${oc.env:D_${trainer.offload_policy},true}\n  offload_policy: ${oc.env:PO,TRUE}\n")
    environ = {"X_True_TRUE": "false", "D_TRUE": "no", "PO": "TRUE"}
    assert kept_interpolations(text, plan, model, environ=environ) == [
        ("trainer.offload_policy stays ${oc.env:PO,TRUE}, which gives TRUE in this environment: the plan holds for "
         "that value")]
    patched = patch_trinity_config(text, plan, model, environ=environ)
    assert ("  param_offload: true\n  optimizer_offload: true\n  offload_policy: ${oc.env:PO,TRUE}\n") in patched
    assert [ConfigValues(_safe_load(patched), environ).get(("trainer", flag)) for flag in OFFLOAD_FLAGS] == [
        True, True, "TRUE"]


def test_muting_ruamels_warnings_in_two_threads_at_once_leaves_the_processs_warnings_as_they_were():
    # warnings.catch_warnings restores the filters it saw on entry: two threads inside at once (a in, b in, a out,
    # b out) left ruamel's "ignore" in force for good, silencing the caller's own warnings. Each reader waits a
    # moment for the other to be inside too; a lock lets b in only once a is out.
    inside = {"a": threading.Event(), "b": threading.Event()}
    a_out = threading.Event()

    class Reader:  # ruamel's YAML, as far as load_config_mapping uses it
        def __init__(self, name: str, other: str) -> None:
            self.name, self.other = name, other

        def load(self, text: str) -> dict[str, Any]:
            inside[self.name].set()
            inside[self.other].wait(0.5)
            if self.name == "b":
                a_out.wait(0.5)
            return {"model": {}}

    def read_a() -> None:
        load_config_mapping("model: {}", "a", Reader("a", "b"))
        a_out.set()

    before = list(warnings.filters)
    first = threading.Thread(target=read_a)
    first.start()
    inside["a"].wait(5)
    second = threading.Thread(target=load_config_mapping, args=("model: {}", "b", Reader("b", "a")))
    second.start()
    first.join()
    second.join()
    assert warnings.filters == before


def test_a_process_forked_while_another_thread_mutes_ruamels_warnings_can_read_configs():
    # The child of a fork (multiprocessing's default on Linux before Python 3.14) has only the forking thread: a lock
    # another thread held would stay held there for good, and the child's first config would never load.
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with reader._WARNINGS_MUTED:
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(5)
    child = os.fork()
    if child == 0:  # the child: read a config, then leave at once (no pytest teardown here)
        os._exit(0 if load_config_mapping("model: {}", "c.yaml", YAML()) == {"model": {}} else 1)
    for _ in range(200):  # up to 10 s for the child, which takes a fraction of a second
        done, status = os.waitpid(child, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
    release.set()
    holder.join()
    assert done and os.waitstatus_to_exitcode(status) == 0


def test_a_plan_value_is_written_as_yaml_writes_it_and_any_other_kind_is_refused():
    written = [yaml_scalar(value) for value in (True, False, 8192, "yarn", 2.5, None)]
    # None as null (a padded model's deprecated micro-batch size, read as unset, padded88), not "None", which YAML
    # would read as a string
    assert written == ["true", "false", "8192", "yarn", "2.5", "null"]
    with pytest.raises(TypeError, match=r"^no YAML form for \[1\]$"):
        yaml_scalar([1])


def test_a_changed_key_keeps_its_anchor_and_the_comment_before_its_value_on_the_next_line() -> None:
    # s56's known bug: ruamel writes the comment between a key (with its anchor) and its value on the next line
    # nowhere, and a new value lost the anchor. Both stay, the comment beside the new value; a key the patch leaves
    # keeps its lines as they were (ruamel wrote it "max_token_len_per_gpu: &budget 24576", without the comment).
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: &len  # the context\n    32768\n"
            "trainer:\n  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: &budget  # by hand\n    24576\n")
    assert patch_trinity_config(text, sp2_plan(), catalog().model("4B")) == (
        "model:\n  model_path: q/Qwen3-4B\n  max_model_len: &len 24576  # the context\n"
        "trainer:\n  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: &budget  # by hand\n    24576\n")


def test_a_changed_key_whose_anchor_aliases_repeat_keeps_its_comment_and_the_alias_gets_none() -> None:
    # The aliases keep the old value (a warning says so), so the anchor moves to the first of them; the changed key's
    # comment (and the lines after it) stayed beside the key and were written beside that alias too.
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: &len 32768  # the context\n\n  # the rollout's\n"
            "explorer:\n  max_timeout: *len\n  max_retry_times: 2\n")
    assert patch_trinity_config(text, sp2_plan(), catalog().model("4B")) == (
        "model:\n  model_path: q/Qwen3-4B\n  max_model_len: 24576  # the context\n\n  # the rollout's\n"
        "explorer:\n  max_timeout: &len 32768\n  max_retry_times: 2\n"
        "trainer:\n  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 24576\n")


def test_lines_the_patch_does_not_change_stay_byte_for_byte_where_ruamel_rewrites_them() -> None:
    # ruamel's round trip rewrites some lines it is not asked to change: an alias's comment (to a line of its own), a
    # tag, a comment before a value on the next line, a capitalised boolean. The patch writes them as they were.
    kept = ("extra:\n  seed: &seed 1\n  again: *seed  # the same\n  tagged: !!int &n  # tagged\n    7\n"
            "  spaced:  # why\n    8\n  flag: False\n  other: ~\n")
    text = f"model:\n  model_path: q/Qwen3-4B\n  max_model_len: 8192\n{kept}"
    assert patch_trinity_config(text, sp2_plan(), catalog().model("4B")) == (
        f"model:\n  model_path: q/Qwen3-4B\n  max_model_len: 24576\n{kept}"
        "trainer:\n  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 24576\n")


def test_a_changed_text_value_keeps_its_quotes() -> None:
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_model_len: 102400\n  rope_scaling:\n    rope_type: 'yarn'\n"
            "    factor: 2.5\n    original_max_position_embeddings: 40960\n"
            "trainer:\n  trainer_strategy: \"fsdp\"  # was FSDP1\n")
    after = patch_trinity_config(text, long_plan(), catalog().model("4B"))
    assert "    rope_type: 'yarn'\n" in after and "  trainer_strategy: \"fsdp2\"  # was FSDP1\n" in after


def test_a_lowered_budgets_comment_names_the_cap_that_binds_or_says_it_does_not_fit() -> None:
    # mutants52: nothing checked that the comment on a budget a cap lowered names the cap
    model = catalog().model("4B")
    lowered = vanilla_plan().model_copy(update={"max_token_len_per_gpu": 9000})

    def comment(plan: Plan, token_cap: str | None = None) -> str | None:
        (budget,) = [key for key in keys_for_plan(plan, model, version="0.6", token_cap=token_cap)
                     if key.path == ("trainer", "max_token_len_per_gpu")]
        return budget.comment

    head = "below Trinity's default ceil(2 * 8192 / 1)"
    assert comment(lowered) == f"{head}, which does not fit; at least ceil(8192 / 1)"
    capped = lowered.model_copy(update={"token_budget_cap": 9000})
    assert comment(capped) == (f"{head}: capped by --token-budget 9000 or the config's own max_token_len_per_gpu; at "
                               "least ceil(8192 / 1)")
    assert comment(capped, "capped by X") == f"{head}: capped by X; at least ceil(8192 / 1)"


def test_offload_sets_no_ref_flags_where_the_plan_builds_no_reference_model() -> None:
    # mutants52: the ref's offload flags were set with Offload whether or not the run builds a reference model
    model, offload = catalog().model("4B"), vanilla_plan().model_copy(update={"offload": True})

    def ref_flags(plan: Plan) -> list[tuple[str, ...]]:
        return [key.path for key in keys_for_plan(plan, model, {}) if key.path[-1] in OFFLOAD_FLAGS
                and key.path[:len(ACTOR_ROLLOUT_REF) + 1] == (*ACTOR_ROLLOUT_REF, "ref")]

    assert ref_flags(offload) == [offload_path("ref", flag, section) for section in ("fsdp_config", IGNORED_SECTION)
                                  for flag in OFFLOAD_FLAGS]
    assert ref_flags(offload.model_copy(update={"reference_model": False})) == []


def test_the_sum_comment_goes_only_where_the_length_was_the_prompts_and_the_responses() -> None:
    # mutants52: nothing held that a "# prompt + response" beside a length that was not their sum stays as written
    plan, model = vanilla_plan(), catalog().model("4B")  # 8192 tokens

    def length_line(response: int) -> list[str]:
        text = (f"model:\n  max_prompt_tokens: 1024\n  max_response_tokens: {response}\n"
                "  max_model_len: 4096  # prompt + response\n")
        return [line for line in patch_trinity_config(text, plan, model).splitlines() if "max_model_len:" in line]

    assert length_line(3072) == ["  max_model_len: 8192"]  # was the sum: no longer so
    assert length_line(1024) == ["  max_model_len: 8192  # prompt + response"]  # was never the sum: the user's


def test_a_config_written_as_json_stays_json() -> None:
    # mutants52: nothing held that the keys and strings the patch adds to a JSON config are quoted
    text = '{"model": {"max_model_len": 4096}, "trainer": {"ulysses_sequence_parallel_size": 2}}\n'
    patched = patch_trinity_config(text, vanilla_plan(), catalog().model("4B"))
    assert json.loads(patched)["trainer"] == {"ulysses_sequence_parallel_size": 1, "max_token_len_per_gpu": 16384}


def test_a_stale_model_rope_scaling_takes_the_rollouts_with_it_only_where_that_is_the_models() -> None:
    # mutants52: nothing held that a rollout model's own rope_scaling stays where the model's stale one goes
    def patched(rollout_factor: float) -> Any:
        text = ("model:\n  max_model_len: 4096\n  rope_scaling: {rope_type: yarn, factor: 4.0, "
                "original_max_position_embeddings: 32768}\nexplorer:\n  rollout_model:\n    rope_scaling: {rope_type: "
                f"yarn, factor: {rollout_factor}, original_max_position_embeddings: 32768}}\n")
        return yaml.safe_load(patch_trinity_config(text, vanilla_plan(), catalog().model("4B")))

    own = patched(2.0)
    assert "rope_scaling" not in own["model"]
    assert own["explorer"]["rollout_model"]["rope_scaling"]["factor"] == 2.0
    assert "rope_scaling" not in patched(4.0)["explorer"]["rollout_model"]


def test_the_budget_formula_comment_is_mended_to_the_plans_or_dropped_where_it_is_lowered() -> None:
    # mutants52: nothing held that the formula beside a budget the plan lowers goes
    text = "trainer:\n  max_token_len_per_gpu: 8192  # ceil(2 x 4096 / SP 1)\n"
    model, plan = catalog().model("4B"), vanilla_plan()

    def budget_line(plan: Plan) -> list[str]:
        return [line for line in patch_trinity_config(text, plan, model).splitlines() if "max_token_len" in line]

    assert budget_line(plan) == ["  max_token_len_per_gpu: 16384  # ceil(2 x 8192 / SP 1)"]
    assert budget_line(plan.model_copy(update={"max_token_len_per_gpu": 9000})) == ["  max_token_len_per_gpu: 9000"]


def test_a_stale_rope_scaling_the_model_also_merges_in_is_unset_not_removed() -> None:
    # mutants52: removed, the rope_scaling a '<<: *anchor' merges into model showed through in its stead
    text = ("explorer:\n  rollout_model: &rollout\n    rope_scaling: {rope_type: yarn, factor: 4.0, "
            "original_max_position_embeddings: 32768}\nmodel:\n  <<: *rollout\n  max_model_len: 4096\n"
            "  rope_scaling: {rope_type: yarn, factor: 2.0, original_max_position_embeddings: 32768}\n")
    patched = yaml.safe_load(patch_trinity_config(text, vanilla_plan(), catalog().model("4B")))
    assert patched["model"]["rope_scaling"] is None
    assert patched["explorer"]["rollout_model"]["rope_scaling"]["factor"] == 4.0


@pytest.mark.parametrize("version", [None, "0.6", "0.5"])
def test_anchored_keys_says_a_06_key_on_the_anchor_goes_only_for_0_5(version: str | None) -> None:
    # mutants52: nothing held that a Trinity 0.6 key under trainer that repeats an anchor the patch changes stays
    # where the patch is for a release other than 0.5
    text = "trainer:\n  ulysses_sequence_parallel_size: &n 2\n  critic_warmup: *n\n"
    (words,) = anchored_keys(text, vanilla_plan(), catalog().model("4B"), version=version)
    head = ("trainer.ulysses_sequence_parallel_size is the anchor &n, which other keys repeat (*n): the patch sets it "
            "to 1")
    assert words == head + (" and removes trainer.critic_warmup: a key of Trinity 0.6's trainer, which Trinity 0.5 "
                            "refuses (its TrainerConfig has no such key)" if version == "0.5" else
                            " and leaves trainer.critic_warmup at 2 (the anchor moves there)")
