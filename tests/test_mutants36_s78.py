"""Tests killing the surviving mutants of session 78's later merges (helper mutants36): apilora's config LoRA
counted on its regex's modules wherever the catalogue is counted (``trinity_config``'s host memory with a release
named, `with_config_verdicts` given the plain catalogue, ``solve --from-config --emit trinity``), the routed experts
of a type PEFT does not convert left out of a regex's adapter; smallslips29's note on two keys of one variable, an
unplaced job that does not run now, the ``each`` of two jobs, moves before stays, a Ctrl-C held
after an interrupted search."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from test_apilora_s78 import QV_LORA
from test_persona52_s78 import DPO_LORA, _lora_line
from test_phi3rope_s78 import _phimoe
from test_smallslips24_s77 import TWO_NODES, Cli, _lowered, _write

import solver.cli.cluster
from solver.api import answer_query, config_query, trinity_config, with_config_verdicts
from solver.memory import adapted_shapes, lora_parameters
from solver.render.cluster import _current_reasons, _move_reasons
from solver.results import Placement, RunsAt
from solver.tables import Fleet, Pool, QueryError, load_catalog
from solver.tables.bounds import ExpertLayout
from solver.tables.model_config import load_model_config
from solver.tables.peft_names import LoraTargets
from solver.trinity import read_trinity_config, trinity_config_problems
from solver.trinity.fragment import defaults_taken_note

CATALOG = load_catalog()
MOE_QV_LORA = QV_LORA.replace("Qwen/Qwen3-8B", "Qwen/Qwen3-30B-A3B")
"""A Qwen3-30B-A3B config whose LoRA adapts q_proj and v_proj alone (rank 64)."""
QV_HOST = "# host memory: 113.8 GiB per node while the model loads (no reference model; rank 0 loading the\n# model)"
"""The host memory of its best plan on H100s, its adapter counted on q_proj and v_proj (128.5 GiB on all-linear), as
Trinity 0.6 loads it with FSDP2 on an H100: on rank 0 alone."""


def _moe_query():  # type: ignore[no-untyped-def]
    config = read_trinity_config(MOE_QV_LORA, "config.yaml", {}, "0.6")
    return config, config_query(CATALOG, config, gpu="H100-80GB", trinity_version="0.6", host_ram_gb=512)


def test_a_fragment_for_a_named_release_counts_the_regexs_adapter():
    # mutant A-2: _answer_keys on the plain catalogue recounted the host memory on all-linear (128.5 GiB)
    _, query = _moe_query()
    (answer,) = answer_query(query, CATALOG)
    for version in (None, "0.6"):
        fragment = trinity_config(answer, CATALOG, version=version)
        assert QV_HOST in fragment, version
    # 0.5.2 loads the untied model on every rank of the node: 6 x 113.7 GiB (113.6 in fp32 and 0.1 for the q/v
    # adapter; all-linear's would be more), past the 512 GiB it was planned within for 0.6 under rank 0's loading
    with pytest.raises(QueryError) as refused:
        trinity_config(answer, CATALOG, version="0.5.2")
    assert str(refused.value) == (
        "the answer's plan needs 682.4 GiB of host memory per node under Trinity 0.5.2, more than host_ram_gb of 512 GiB "
        "it was planned within (for another release): plan it again with trinity_version='0.5.2', or pass version= the "
        "release it was planned for")


def test_the_verdict_counts_the_regexs_adapter_given_the_plain_catalogue():
    # mutant A-7: with_config_verdicts on the catalogue as given predicted 83.6 GiB, all-linear's adapter
    config, query = _moe_query()
    (answer,) = with_config_verdicts(answer_query(query, CATALOG), query, CATALOG, config, MOE_QV_LORA,
                                     "config.yaml", {}, "0.6")
    assert answer.current is not None
    assert "(the memory model predicts 73.5 GiB per GPU, of 71.0 usable)" in answer.current.verdict


def test_the_commands_fragment_counts_the_regexs_adapter_as_its_plan(cli: Cli, tmp_path: Path):
    # mutant A-8: solve's fragment said 128.5 GiB of host memory beside its plan's 113.8
    path = tmp_path / "config.yaml"
    path.write_text(MOE_QV_LORA, encoding="utf-8")
    flags = ("--from-config", str(path), "--gpu", "H100-80GB", "--host-ram", "512", "--trinity-version", "0.6")
    status, fragment, err = cli(*flags, "--emit", "trinity")
    assert status == 0, err
    assert QV_HOST in fragment
    table = cli(*flags)[1]
    assert ("host memory    113.8 GiB per node while the model loads (no reference model; rank 0 loading the model), "
            "within --host-ram 512 GiB") in table


def test_routed_experts_peft_does_not_convert_are_not_counted_on_a_regex(tmp_path: Path):
    # mutants: an MoE type PEFT does not convert (assumed Qwen3-MoE's names, experts among them) counted its
    # unadapted fused experts (62281728 parameters at rank 1), or listed them at count 0
    config = json.loads((Path(__file__).parent / "data" / "hf-configs" / "Qwen3-30B-A3B.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "model_type": "my_moe"}), encoding="utf-8")
    model = load_model_config(tmp_path / "config.json")
    assert model.moe is not None and not model.moe.peft_converts_experts
    assert "mlp.experts.gate_proj" in model.peft_names_of("fused").adapted
    every = model.model_copy(update={"lora_targets": LoraTargets(".*")})
    assert adapted_shapes(every, "fused") == (
        (4096, 2048, 48), (512, 2048, 48), (512, 2048, 48), (2048, 4096, 48), (128, 2048, 48))
    assert lora_parameters(every, 1, "fused") == lora_parameters(model, 1, "fused") == 940032


def test_two_keys_of_one_variable_say_it_is_set():
    # mutant S-8: "where they are set" of one variable A read by two keys
    (note,) = defaults_taken_note([], [("trainer.a", "A"), ("trainer.b", "A")])
    assert note.endswith("run starts without A set (OmegaConf resolves every value as Trinity loads it: "
                         "trinity/common/config.py:1059 in 0.6.0): where it is set, pass that environment as environ "
                         "(environ=os.environ in that shell).")
    assert "trainer.a (${oc.env:A}) and trainer.b (${oc.env:A}) unread" in note


def test_an_unplaced_job_that_does_not_run_now_does_not_stop(cli: Cli, tmp_path: Path):
    # mutant S-12: a job left out that the current placement does not run was marked "stops"
    current, down = _lowered(cli, tmp_path, small_priority=1)
    fleet = {"pools": [{**TWO_NODES["pools"][0], "nodes": 1}],
             "jobs": [*TWO_NODES["jobs"][:1], {**TWO_NODES["jobs"][1], "priority": 1},
                      {**TWO_NODES["jobs"][0], "name": "extra", "priority": 1}]}
    down = _write(tmp_path / "down3.yaml", fleet)
    status, out, _ = cli("cluster", str(down), "--current", str(current), "--json")
    unplaced = {left["job"]: left for left in json.loads(out)["unplaced"]}
    assert (status, sorted(unplaced)) == (1, ["extra", "small"])
    assert unplaced["small"]["current"] == "stops" and unplaced["small"]["stop_reason_code"] == "node-gone"
    assert [key for key in ("current", "stop_reason", "stop_reason_code") if key in unplaced["extra"]] == []


def test_two_jobs_of_one_reason_read_each():
    # mutant S-14: ", each" for three jobs or more alone
    assert [line.plain for line in _current_reasons([("stops", "gone", "a"), ("stops", "gone", "b")])] == [
        "stops: a, b, each: gone"]


def test_moves_come_before_stays():
    # mutant S-15: the lines in the placements' order, a stay before a move
    # (hints87) each move says where the job runs now, as its config's "# now:" line: GPUs 0-1 of a node of 2 are all
    # its GPUs; on a pool the file no longer has, its GPUs are named
    fleet = Fleet.model_construct(pools=(Pool.model_construct(name="p", gpus_per_node=2),))
    placements = (Placement.model_construct(job="a", move_reason=None, stay_reason="kept"),
                  Placement.model_construct(job="b", move_reason="gone", stay_reason=None,
                                            moved_from=RunsAt(pool="p", nodes=(1,), gpu_indexes=(0, 1))),
                  Placement.model_construct(job="c", move_reason="gone", stay_reason=None,
                                            moved_from=RunsAt(pool="q", nodes=(0, 2), gpu_indexes=(0, 1))),
                  # (checks89b) read from JSON made before moved_from: as its config's "# now:" line, not the bare why
                  Placement.model_construct(job="d", move_reason="gone", stay_reason=None, moved_from=None))
    assert [line.plain for line in _move_reasons(placements, fleet)] == [
        "moves: b: it runs on node 1 of pool p (all its GPUs) now, and restarts as placed: gone",
        "moves: c: it runs on nodes 0 and 2 of pool q (GPUs 0-1) now, and restarts as placed: gone",
        "moves: d: it restarts as placed: gone", "stays: a: kept"]


@pytest.mark.usefixtures("python_ctrl_c")  # Python's own Ctrl-C handler, also in a suite run with Ctrl-C ignored
def test_ctrl_c_held_after_an_interrupted_search_does_not_call_its_placement_whole(cli: Cli, tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch):
    # mutant S-17: "the placement above is whole" of a placement its search's Ctrl-C left the best found so far
    noted, searched = solver.cli.cluster._note_what_was_read, solver.cli.cluster._searched

    def ctrl_c_in_the_notes(*args: object) -> None:
        signal.raise_signal(signal.SIGINT)  # held until the notes are done
        noted(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(solver.cli.cluster, "_note_what_was_read", ctrl_c_in_the_notes)
    monkeypatch.setattr(solver.cli.cluster, "_searched", lambda *given, **named: searched(  # type: ignore[arg-type]
        *given, **named).model_copy(update={"interrupted": True}))  # as a Ctrl-C in the search leaves it
    status, _, err = cli("cluster", str(_write(tmp_path / "two.yaml", TWO_NODES)))
    # the Ctrl-C held stops nothing: the placement printed stands, the best found so far (smallslips34)
    assert (status, err) == (130, "solve cluster: interrupted: the best placement found so far is above\n")


@pytest.mark.parametrize("name", ["DeepSeek-V2-Lite", "Mixtral-8x7B-v0.1", "Qwen3-30B-A3B", "Qwen1.5-MoE-A2.7B",
                                  "Llama-3.2-1B"])
@pytest.mark.parametrize("experts", ["fused", "separate", "either"])
def test_a_regex_matching_every_module_counts_all_linears_adapter(name: str, experts: ExpertLayout):
    # a regex matching every module counts what all-linear counts, under each layout (mutant A-22 survives it: a
    # config.json's latent attention gets head_dim qk_head_dim, so its queries' width is the same either way)
    model = load_model_config(Path(__file__).parent / "data" / "hf-configs" / f"{name}.json")
    every = model.model_copy(update={"lora_targets": LoraTargets(".*")})
    assert lora_parameters(every, 1, experts) == lora_parameters(model, 1, experts)


def test_a_lora_counted_as_full_gives_no_targets():
    # mutant A-24: the targets of a LoRA counted as full fine-tuning (a regex adapting the embeddings) were kept
    text = QV_LORA.replace("'.*\\.(q_proj|v_proj)'", "'.*(embed_tokens|q_proj)'")
    assert text != QV_LORA
    config = read_trinity_config(text, "config.yaml", {}, "0.5")
    assert (config.lora_key, config.lora_rank, config.lora_targets) == ("model.lora_configs", 0, None)
    query = config_query(CATALOG, config, gpu="A100-80GB", trinity_version="0.5.2")
    assert (query.lora_rank, query.lora_targets, query.config_lora) == (0, None, True)


def test_a_phimoes_linear_whose_legacy_type_is_unread_is_unneeded_within_the_native_context(tmp_path: Path):
    # mutant R-11: its type unread, no trainer failure is judged (as no refusal is), so the unneeded line stays
    mapping = {"mode": "train", "model": {"model_path": "/nowhere/model", "max_model_len": 2048, "rope_scaling": {
        "rope_type": "linear", "type": "${oc.env:RT}", "factor": 4.0}}}
    assert [problem.code.value for problem in trinity_config_problems(
        mapping, _phimoe(tmp_path), 8, version="0.6", experts="fused")] == ["unresolved-value", "rope-scaling-unneeded"]


def test_verls_lora_rank_key_is_named_beside_another_rank(cli: Cli, tmp_path: Path):
    # mutant P-8: the note named model.lora_configs for a config turning LoRA on by verl's lora_rank
    verl = DPO_LORA.replace("  lora_configs:\n    - name: dpo\n      lora_rank: 32\n      lora_alpha: 64\n", "") + (
        "trainer:\n  trainer_config:\n    actor_rollout_ref:\n      model:\n        lora_rank: 32\n")
    config = tmp_path / "verl.yaml"
    config.write_text(verl, encoding="utf-8")
    rank, line = _lora_line(cli, config, "--lora-rank", "16")
    assert (rank, line.split(")", 1)[0]) == (16, "with LoRA (trainer.trainer_config.actor_rollout_ref.model.lora_rank")


@pytest.mark.parametrize(("flag", "value", "hint"), [
    ("--gpus", "1x1", " (write the product: 1)"), ("--lora-rank", "256x256", " (write the product: 65536)")])
def test_a_product_at_the_options_bounds_is_hinted(cli: Cli, flag: str, value: str, hint: str):
    # mutants P-11, P-12: no hint for a product equal to the least or the most the option takes
    status, _, err = cli("--model", "8B", "--gpu", "A100-80GB", "--len", "8k", flag, value)
    least = 0 if flag == "--lora-rank" else 1
    assert (status, err.splitlines()[-1]) == (2, (
        f"solve: error: argument {flag}: expected a whole number from {least} to 65536, got '{value}'{hint}"))
