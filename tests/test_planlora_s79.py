"""Session 79, planlora: a LoRA adapter's targets survive every path. A plan keeps the ``target_modules`` (and
``exclude_modules``) its figures count the adapter on and whether its LoRA is its config's own (`Plan.lora_targets`,
`Plan.config_lora`), so an answer read back from JSON counts and writes what it was planned with; ``--lora-targets``
(``solve``, ``solve memory``; the API's ``lora_targets=``) names the targets without a config: ``all-linear``, module
names, or a regex, read by one function (`given_lora_targets`) and refused in one line, exit 2; and ``all-linear``'s
adapter is counted module by module, as a regex's (`adapted_shapes`)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from test_apilora_s78 import HF_CONFIGS, QV_LORA, UNREAD_CONFIGS

import solver
from solver.api import answer_query, config_query
from solver.memory import adapted_shapes, lora_parameters, weight_shapes
from solver.query import QueryError
from solver.tables import load_catalog
from solver.tables.model_config import load_model_config
from solver.tables.peft_names import LoraTargets
from solver.trinity import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]
CATALOG = load_catalog()
QV = ".*\\.(q_proj|v_proj)"
FORMS = ("give all-linear (Trinity's default: every linear layer but the output projection), module names separated "
         "by commas (q_proj,v_proj) or a regular expression that PEFT matches whole module names with "
         "(.*\\.(q_proj|v_proj))")
ASKED = ("--model", "8B", "--gpu", "A100-80GB", "--gpus", "6", "--len", "16k", "--rollout-gpus", "2", "--lora-rank",
         "64")


def _host_and_lora(fragment: str) -> list[str]:
    return [line.strip() for line in fragment.splitlines() if line.startswith("# host memory") or "lora_configs" in line
            or "a new adapter" in line]


# (1) A config's q/v adapter, planned with Offload on 6 A100-80GBs: read back from JSON, the answer counts the adapter
# on q and v still (218.7 GiB of host memory per node, not all-linear's 222.5: 0.5.2 loads the model and its adapter
# on each of the 6 ranks, s84) and writes no lora_configs, as before.

def test_a_configs_lora_targets_survive_the_json_round_trip() -> None:
    config = read_trinity_config(QV_LORA, "config.yaml", {}, "0.5")
    query = config_query(CATALOG, config, gpu="A100-80GB", trinity_version="0.5.2", offload=True, host_ram_gb=512.0)
    (answer,) = answer_query(query, CATALOG)
    assert answer.best is not None
    plan = json.loads(answer.model_dump_json())["plans"][0]
    assert (plan["lora_rank"], plan["lora_target_modules"], plan["lora_exclude_modules"], plan["config_lora"]) == (
        64, QV, None, True)
    assert (plan["host_memory_gb"], round(plan["memory_gb"], 2)) == (218.7, 47.12)
    read_back = solver.Answer.model_validate_json(answer.model_dump_json())
    assert read_back.query is None and read_back.best is not None
    assert (read_back.best.lora_targets, read_back.best.config_lora) == (LoraTargets(QV), True)
    fragment = solver.trinity_config(read_back)
    assert fragment == solver.trinity_config(answer)
    # Before: read back without them, 222.5 GiB (all-linear's adapter) and a lora_configs in place of the config's own.
    assert _host_and_lora(fragment) == [  # its first line: the 218.7 GiB is the start-up load's
        "# host memory: 218.7 GiB per node for Offload (no reference model; at start-up, every rank loading"]
    assert solver.trinity_settings(read_back).config["model"] == {"max_model_len": 16384}
    forgotten = read_back.model_copy(update={"plans": (read_back.best.model_copy(
        update={"lora_target_modules": None, "config_lora": False}),)})
    assert _host_and_lora(solver.trinity_config(forgotten))[0].startswith("# host memory: 222.5 GiB per node")


def test_an_exclude_modules_survives_too() -> None:
    excluded = QV_LORA.replace("target_modules: '.*\\.(q_proj|v_proj)'", "exclude_modules: '.*mlp.*'")
    query = config_query(CATALOG, read_trinity_config(excluded, "config.yaml", {}, "0.5"), gpu="A100-80GB")
    (answer,) = answer_query(query, CATALOG)
    read_back = solver.Answer.model_validate_json(answer.model_dump_json())
    assert read_back.best is not None and answer.best is not None
    assert read_back.best.lora_targets == answer.best.lora_targets == LoraTargets("all-linear", ".*mlp.*")


def test_lora_targets_planned_write_the_same_target_modules_from_the_json(cli: Cli) -> None:
    status, out, err = cli(*ASKED, "--lora-targets", "q_proj,v_proj", "--json")
    assert status == 0, err
    (raw,) = json.loads(out)
    assert (raw["plans"][0]["lora_target_modules"], raw["plans"][0]["config_lora"]) == (QV, False)
    assert raw["plans"][0]["memory_gb"] == 52.43  # all-linear's seven: 52.8
    lora = {"lora_rank": 64, "target_modules": QV}
    assert raw["apply"]["config"]["model"] == {"max_model_len": 16384, "lora_configs": [lora]}
    status, emitted, err = cli(*ASKED, "--lora-targets", "q_proj,v_proj", "--emit", "trinity")
    assert status == 0, err
    read_back = solver.Answer.model_validate(raw)
    fragment = solver.trinity_config(read_back)
    assert yaml.safe_load(fragment)["model"] == yaml.safe_load(emitted)["model"] == raw["apply"]["config"]["model"]
    assert _host_and_lora(fragment) == [
        "# a new adapter on target_modules '.*\\.(q_proj|v_proj)', as planned; with LoRA Trinity builds no",
        # the comment's lora-targets-saved-split (s80), whose words name model.lora_configs[0].path
        "# later run's model.lora_configs[0].path, or PeftModel.from_pretrained) fails: plan for all-linear",
        "lora_configs: [{lora_rank: 64, target_modules: '.*\\.(q_proj|v_proj)'}]"]
    (planned,) = solver.plan("Qwen3-8B", gpu="A100-80GB", budget_gpus=6, max_model_len=16384, lora_rank=64,
                             lora_targets="q_proj,v_proj", rollout_gpus=2)
    assert planned.best is not None and round(planned.best.memory_gb, 2) == 52.43
    assert yaml.safe_load(solver.trinity_config(planned))["model"] == raw["apply"]["config"]["model"]


def test_the_apply_lines_and_the_fragment_write_a_regex_yaml_reads_back(cli: Cli) -> None:
    regex = ".*layers\\.\\d{1,2}\\.self_attn\\.(q_proj|v_proj)"  # braces and a comma: quoted, or the flow ends
    status, emitted, err = cli(*ASKED, "--lora-targets", regex, "--emit", "trinity")
    assert status == 0, err
    assert yaml.safe_load(emitted)["model"]["lora_configs"] == [{"lora_rank": 64, "target_modules": regex}]
    status, out, err = cli(*ASKED, "--lora-targets", regex)
    assert status == 0, err
    assert f"\nmodel.lora_configs: [{{lora_rank: 64, target_modules: '{regex}'}}]\n" in out
    assert yaml.safe_load(f"[{{lora_rank: 64, target_modules: '{regex}'}}]")[0]["target_modules"] == regex


# (2) --lora-targets: solve memory counts the adapter on the modules it names, as solve does.

def test_solve_memory_counts_the_targets(cli: Cli) -> None:
    memory = ("memory", "--model", "8B", "--gpu", "A100-80GB", "--gpus", "6", "--len", "16k", "--env",
              "--lora-rank", "64", "--json")
    answers = {}
    for targets in ("q_proj,v_proj", "q_proj, v_proj", QV, "all-linear", "ALL-LINEAR", None):
        status, out, err = cli(*memory, *(("--lora-targets", targets) if targets is not None else ()))
        assert status == 0, err
        raw = json.loads(out)
        answers[targets] = (raw["lora_parameters"], raw["lora_target_modules"], round(raw["total_gib"], 2))
    # 64 x (4096 + 4096 + 4096 + 1024) x 36 on q and v; all-linear's seven 174,587,904
    assert answers == {"q_proj,v_proj": (30_670_848, QV, 52.43), "q_proj, v_proj": (30_670_848, QV, 52.43),
                       QV: (30_670_848, QV, 52.43), "all-linear": (174_587_904, None, 52.8),
                       "ALL-LINEAR": (174_587_904, None, 52.8), None: (174_587_904, None, 52.8)}
    # where it does not train, the planner's command it names keeps the targets
    status, out, err = cli("memory", "--model", "8B", "--gpu", "A100-80GB", "--gpus", "1", "--len", "128k",
                           "--lora-rank", "64", "--lora-targets", "o_proj")
    assert status == 1, err
    assert ("solve --model 8B --gpu A100-80GB --gpus 1 --len 131072 --lora-rank 64 --lora-targets o_proj"
            in " ".join(out.split()))


@pytest.mark.parametrize(("targets", "words"), [
    ("foo", ("--lora-targets 'foo' matches no module of Qwen3-8B (model.layers.N.self_attn.{q,k,v,o}_proj, "
             f"model.layers.N.mlp.{{gate,up,down}}_proj, model.embed_tokens and lm_head): {FORMS}")),
    ("", f"--lora-targets is empty: {FORMS}"),
    (" ", f"--lora-targets is empty: {FORMS}"),
    ("((", f"--lora-targets '((' is no regular expression (missing ), unterminated subpattern at position 1): {FORMS}"),
    (".*(embed_tokens|q_proj)", ("--lora-targets '.*(embed_tokens|q_proj)' matches model.embed_tokens of "
                                 f"Qwen3-8B, which all-linear leaves out and rft-solver does not count: {FORMS}")),
    (".*norm", ("--lora-targets '.*norm' matches model.norm of Qwen3-8B, which all-linear leaves out and rft-solver "
                f"does not count: {FORMS}")),
])
@pytest.mark.parametrize("command", ["solve", "solve memory"])
def test_bad_targets_exit_2_in_one_line(cli: Cli, command: str, targets: str, words: str) -> None:
    asked = ("--model", "8B", "--gpu", "A100-80GB", "--gpus", "6", "--len", "16k", "--lora-rank", "64")
    status, out, err = cli(*command.split()[1:], *asked, "--lora-targets", targets)
    assert (status, out, err) == (2, "", f"{command}: error: {words}\n")


@pytest.mark.parametrize("command", ["solve", "solve memory"])
def test_targets_without_lora_are_refused(cli: Cli, command: str) -> None:
    status, out, err = cli(*command.split()[1:], "--model", "8B", "--gpu", "A100-80GB", "--gpus", "6", "--len", "16k",
                           "--lora-targets", "q_proj")
    words = "--lora-targets 'q_proj' without LoRA: the targets are a LoRA adapter's; give a --lora-rank above 0"
    assert (status, out, err) == (2, "", f"{command}: error: {words}\n")


def test_the_api_refuses_alike_in_its_keywords() -> None:
    with pytest.raises(QueryError) as raised:
        solver.plan("Qwen3-8B", gpu="A100-80GB", max_model_len=16384, lora_targets="q_proj")
    assert str(raised.value) == ("lora_targets 'q_proj' without LoRA: the targets are a LoRA adapter's; give a "
                                 "lora_rank above 0")
    with pytest.raises(QueryError, match=r"^lora_targets must be "):
        solver.estimate_memory("Qwen3-8B", "A100-80GB", 6, 16384, lora_rank=64,
                               lora_targets=["q_proj"])  # type: ignore[arg-type]


def test_a_configs_targets_give_way_to_the_options() -> None:
    config = read_trinity_config(QV_LORA, "config.yaml", {}, "0.5")
    query = config_query(CATALOG, config, gpu="A100-80GB", lora_targets="all-linear")
    assert (query.lora_targets, query.config_lora) == (None, True)  # all-linear's count; the config keeps its own
    assert config_query(CATALOG, config, gpu="A100-80GB", lora_targets="k_proj").lora_targets == LoraTargets(
        ".*\\.k_proj")


def test_under_0_5_a_regex_of_either_layouts_names_is_taken() -> None:
    # Qwen3-30B-A3B's experts by transformers 4's names match nothing under 0.6's fused names: refused there, taken
    # under 0.5 (either layout) and 0.5.1 (separate), whose count is theirs.
    experts = ".*mlp\\.experts\\.\\d+\\.(gate_proj|up_proj|down_proj)"
    with pytest.raises(QueryError, match=r"^lora_targets '.*' matches no module of Qwen3-30B-A3B "):
        solver.estimate_memory("Qwen3-30B-A3B", "H100-80GB", 8, 8192, lora_rank=64, lora_targets=experts)
    answers = [solver.memory_answer("Qwen3-30B-A3B", "H100-80GB", 8, 8192, lora_rank=64, lora_targets=experts,
                                    trinity_version=version) for version in ("0.5", "0.5.1")]
    assert [answer.lora_parameters for answer in answers] == [3_321_888_768, 3_321_888_768]


# (3) all-linear's adapter is counted module by module (`_module_shape`), a regex's on the modules it matches alone;
# on a dense model without fused projections, those matrices are the layers' linear weight tensors (`weight_shapes`,
# the structural count), tensor for tensor.

def test_all_linear_is_counted_module_by_module() -> None:
    model = CATALOG.model("Qwen3-8B")
    assert adapted_shapes(model) == ((4096, 4096, 36), (1024, 4096, 36), (1024, 4096, 36), (4096, 4096, 36),
                                     (12288, 4096, 36), (12288, 4096, 36), (4096, 12288, 36))
    assert lora_parameters(model, 64) == 174_587_904


def _tally(shapes: tuple[tuple[int, int, int], ...]) -> Counter[tuple[int, int]]:
    counts: Counter[tuple[int, int]] = Counter()
    for rows, columns, count in shapes:
        counts[rows, columns] += count
    return counts


def test_a_dense_models_adapted_matrices_are_its_linear_weights() -> None:
    models = [*CATALOG.models, *(load_model_config(path) for path in sorted(HF_CONFIGS.glob("*.json"))
                                 if path.stem not in UNREAD_CONFIGS)]
    dense = [model for model in models if model.moe is None and model.mla is None
             and not {"self_attn.qkv_proj", "mlp.gate_up_proj"} & set(model.peft_names.adapted)]
    assert len(dense) >= 20
    for model in dense:
        linear = tuple(shape for shape in weight_shapes(model)[2:] if shape[1] > 1)  # no embeddings, lm_head, norms
        assert _tally(adapted_shapes(model)) == _tally(linear), model.name


def test_the_option_is_read_in_one_place() -> None:
    for path in Path(solver.__file__).parent.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert text.count("def given_lora_targets(") == (path.name == "query.py"), path


def test_the_memory_texts_name_the_targets() -> None:
    answer = solver.memory_answer("Qwen3-8B", "A100-80GB", 1, 131072, lora_rank=64, lora_targets="q_proj,v_proj")
    text = " ".join(solver.memory_text(answer, width=400).split())
    assert ("30,670,848 adapter parameters on the linear layers target_modules '.*\\.(q_proj|v_proj)' matches (16 "
            "bytes each") in text
    assert ('solver.plan("Qwen3-8B", gpu="A100-80GB", budget_gpus=1, max_model_len=131072, lora_rank=64, '
            'lora_targets=".*\\\\.(q_proj|v_proj)")') in text
