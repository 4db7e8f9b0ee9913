"""Two answers a reader of verl's SP rules expects (session 61): --explain names the SP rules that leave an exact GPU
count without the SP degrees memory would want (verl #1226: which SP values are legal), and a longest context past
what YaRN is validated for says so in its headline, in the text, the JSON and the emitted config alike."""

from __future__ import annotations

import json

import pytest
from conftest import fragment_comment

from solver.explain import explain
from solver.query import make_query
from solver.rules import sp_layout_violation
from solver.solve import plan
from solver.tables import load_catalog

CATALOG = load_catalog()
ISSUE_1226 = ("--model", "14B", "--gpu", "h100", "--gpus", "5", "--exact", "--len", "64k", "--explain")


def _explained(**request: object) -> list[tuple[str, str]]:
    query = make_query(CATALOG, **request)
    (answer,) = plan(query, CATALOG)
    assert not answer.plans
    return [(reason.rule, reason.detail) for reason in explain(CATALOG, query, answer)]


def test_an_exact_count_without_a_plan_says_which_sp_degrees_its_rules_leave_out(cli):
    status, out, err = cli(*ISSUE_1226)
    words = " ".join(out.split())
    assert (status, err) == (1, "")
    assert ("sp_divides_gpus SP must divide the trainer GPUs: on 5 GPUs that rules out SP=2-4 sp_kv_heads SP and the 8 "
            "KV heads of Qwen3-14B must divide one another: that rules out SP=5 (on 5 GPUs) shorter_length") in words
    status, out, _ = cli(*ISSUE_1226, "--json")
    (answer,) = json.loads(out)
    assert status == 1 and [item["rule"] for item in answer["explanation"]][:3] == [
        "limit", "sp_divides_gpus", "sp_kv_heads"]


def test_the_heads_cap_a_large_exact_count_at_sp_8_as_verl_1226_asks():
    reasons = dict(_explained(gpu="h100", model="14B", budget_gpus=64, exact=True, max_model_len=1_000_000))
    assert reasons["sp_divides_heads"] == ("SP must divide the 40 attention heads of Qwen3-14B: that rules out SP=16, "
                                           "32, 64 (on 64 GPUs)")
    assert reasons["sp_divides_gpus"] == ("SP must divide the trainer GPUs: on 64 GPUs that rules out SP=3, 5-7, 9-15, "
                                          "17-31, 33-63")


@pytest.mark.parametrize(("model", "gpus", "length"), [("14B", 5, "64k"), ("14B", 6, "96k"), ("30B-A3B", 6, "160k"),
                                                       ("32B", 3, "64k"), ("8B", 7, "200k")])
def test_the_sp_degrees_named_are_those_the_layout_rules_reject(model: str, gpus: int, length: str):
    query_words = {"gpu": "h100", "model": model, "budget_gpus": gpus, "exact": True,
                   "max_model_len": int(length[:-1]) * 1024}
    named = {int(sp) for rule, detail in _explained(**query_words) if rule.startswith("sp_")
             for sp in _degrees(detail)}
    shape = CATALOG.model(model)
    assert named == {sp for sp in range(2, gpus + 1) if sp_layout_violation(shape, gpus, sp, 8)}


def _degrees(detail: str) -> list[int]:
    """The SP degrees of a reason's ``SP=3, 5-7`` (up to its parenthesis)."""
    listed = detail.split("SP=")[-1].split(" (")[0]
    degrees = []
    for part in listed.split(", "):
        low, _, high = part.partition("-")
        degrees += range(int(low), int(high or low) + 1)
    return degrees


def test_a_pinned_sp_leaves_the_other_degrees_to_the_pin(cli):
    _, out, _ = cli(*ISSUE_1226, "--sp", "1", "--json")
    (answer,) = json.loads(out)
    assert not {item["rule"] for item in answer["explanation"]} & {"sp_divides_gpus", "sp_kv_heads"}


LONGEST_30B_A3B = ("--maximize", "len", "--gpus", "8", "--model", "30B-A3B")


@pytest.mark.parametrize(("gpu", "length", "factor"), [("H100-80GB", 210944, "5.15"), ("H200-141GB", 388096, "9.475")])
def test_a_longest_context_past_yarns_validated_length_says_so_first_in_text_json_and_config(
        cli, gpu: str, length: int, factor: str):
    status, out, err = cli(*LONGEST_30B_A3B, "--gpu", gpu)
    assert (status, err) == (0, "")
    assert (f"max_model_len  {length}, past the validated 131072 (YaRN rope scaling, factor {factor}; Qwen's model "
            "cards validate") in out
    apply = out[out.index("\nexport PYTORCH_CUDA_ALLOC_CONF"):].splitlines()
    assert apply[2:4] == [("# max_model_len past the validated 131072: check the model's quality at this length, or "
                           "plan --len 131072"), f"model.max_model_len: {length}"]
    status, out, _ = cli(*LONGEST_30B_A3B, "--gpu", gpu, "--emit", "trinity")
    assert status == 0 and fragment_comment(
        f"plan: Env + Offload + SP=8 on 8 {gpu} trainer GPUs, max_model_len {length}, past the validated 131072 (check "
        "the model's quality at this length, or plan --len 131072)") in out
    status, out, _ = cli(*LONGEST_30B_A3B, "--gpu", gpu, "--json")
    (answer,) = json.loads(out)
    best = answer["plans"][0]
    assert (status, best["max_model_len"], best["rope_scaling_factor"], best["yarn_beyond_validated"]) == (
        0, length, float(factor), True)
    validated = answer["validated"]
    assert "past-validated-length" in best["caution_codes"] and validated["max_model_len"] == 131072
    if gpu == "H100-80GB":  # docs/guide.md: 131072 on the same plan
        assert [validated[key] for key in ("gpus", "env", "offload", "sp")] == [8, True, True, 8]


def test_the_length_a_past_validated_answer_names_has_no_such_words(cli):
    status, out, _ = cli("--len", "131072", "--gpus", "8", "--model", "30B-A3B", "--gpu", "h100")
    assert status == 0 and "max_model_len  131072 (YaRN rope scaling, factor 3.2)\n" in out
    _, fragment, _ = cli("--len", "131072", "--gpus", "8", "--model", "30B-A3B", "--gpu", "h100", "--emit", "trinity")
    assert "past the validated" not in out + fragment and "max_model_len 131072\n" in fragment


def test_the_past_validated_words_are_yellow(cli, coloured_screen):
    cli(*LONGEST_30B_A3B, "--gpu", "h100")
    assert "\x1b[1;33m210944, past the validated 131072" in coloured_screen.getvalue()
