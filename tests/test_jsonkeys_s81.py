"""What ``--json`` says a plan changes, and what a capped refusal offers (session 81, jsonkeys).

``solve --from-config C --json`` (and ``--check --json``) gives each answer with ``apply`` a ``config_keys_changed``
list: every key of the config that applying the best plan sets to another value, as ``--write`` sets it, with the
config's value and the plan's (`solver.trinity.config_key_changes`), so that a CI script need not diff configs; the
text's apply lines keep naming only those beyond the plan's own keys (`config_keys_changed`). A request refused under
a token budget cap (``--token-budget N``, or a config's own lowered budget) names the smallest cap that trains the
length on the same GPUs, found in one solve with the cap a variable (`solver.model.minimize_token_cap`), and where the
cap came from; the answer's ``token_budget_cap_raised`` holds that plan."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import solver
from solver.results import Answer
from solver.tables import load_catalog
from solver.trinity import config_key_changes, config_keys_changed

Cli = Callable[..., tuple[int, str, str]]
ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "trinity.yaml"
ROLES = """\
algorithm:
  algorithm_type: grpo
model:
  model_path: Qwen/Qwen3-8B
  max_model_len: {length}
cluster:
  node_num: 1
  gpu_per_node: {gpus}
explorer:
  rollout_model:
    engine_num: {engines}
    tensor_parallel_size: 1
trainer:
  trainer_config:
    actor_rollout_ref:
      actor:
        use_dynamic_bsz: true
        ppo_max_token_len_per_gpu: {budget}
{extra}      ref:
        log_prob_max_token_len_per_gpu: {ref_budget}
"""
ACTOR_OWN = "        ulysses_sequence_parallel_size: 2\n        fsdp_config: {param_offload: true}\n"
OWN_BUDGET = ROLES.format(length=32768, gpus=4, engines=2, budget=65536, ref_budget=32768, extra=ACTOR_OWN)
"""2 rollout and 2 trainer H20s; the actor's own budget above the plan's, its SP and offload flag the plan's."""
CAPPED = ROLES.format(length=65536, gpus=8, engines=4, budget=8192, ref_budget=8192,
                      extra="        ulysses_sequence_parallel_size: 16\n")
"""4 rollout and 4 trainer H20s at 65536 tokens, every role at 8192 tokens per GPU: the config's own cap (the actor's
own SP 16, at which its budget holds a sequence, so that no release raises it: release89b)."""
ACTOR = "trainer.trainer_config.actor_rollout_ref.actor"
REF = "trainer.trainer_config.actor_rollout_ref.ref"
OWN_CAP = f"the config's own {ACTOR}.ppo_max_token_len_per_gpu and {REF}.log_prob_max_token_len_per_gpu"
"""`CAPPED`'s cap, the roles' own budgets (rolebudget2_s81: it said ``the config's own max_token_len_per_gpu``, which
`CAPPED` does not set)."""


def _only(out: str) -> dict[str, object]:
    (answer,) = json.loads(out)
    assert isinstance(answer, dict)
    return answer


def test_json_names_every_key_of_the_config_the_plan_changes(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "grpo.yaml"
    config.write_text(OWN_BUDGET, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--json")
    answer = _only(out)
    assert status == 0 and list(answer)[list(answer).index("apply") + 1] == "config_keys_changed"
    # Env + Offload + SP=2 on 2 GPUs at 32768: the actor's SP is the plan's already, its param_offload too
    assert answer["config_keys_changed"] == [
        {"key": "trainer.trainer_strategy", "config_value": None, "plan_value": "fsdp2"},
        {"key": "trainer.ulysses_sequence_parallel_size", "config_value": None, "plan_value": 2},
        {"key": "trainer.max_token_len_per_gpu", "config_value": None, "plan_value": 32768},
        {"key": "trainer.save_hf_checkpoint", "config_value": None, "plan_value": "never"},
        {"key": "trainer.param_offload", "config_value": None, "plan_value": True},
        {"key": "trainer.optimizer_offload", "config_value": None, "plan_value": True},
        {"key": "trainer.offload_policy", "config_value": None, "plan_value": True},
        {"key": f"{ACTOR}.ppo_max_token_len_per_gpu", "config_value": 65536, "plan_value": 32768},
        {"key": f"{ACTOR}.fsdp_config.optimizer_offload", "config_value": None, "plan_value": True},
        {"key": f"{ACTOR}.fsdp_config.offload_policy", "config_value": None, "plan_value": True},
        {"key": f"{REF}.fsdp_config.param_offload", "config_value": None, "plan_value": True},
        {"key": f"{REF}.fsdp_config.optimizer_offload", "config_value": None, "plan_value": True},
        {"key": f"{REF}.fsdp_config.offload_policy", "config_value": None, "plan_value": True}]
    # --check --json says the same; the text's apply lines name only the key beyond the plan's own
    assert _only(cli("--from-config", str(config), "--gpu", "h20", "--check", "--json")[1])[
        "config_keys_changed"] == answer["config_keys_changed"]
    text = cli("--from-config", str(config), "--gpu", "h20")[1]
    assert text.endswith("# and these keys of grpo.yaml, which the plan changes too (after each, its value now):\n"
                         f"{ACTOR}.ppo_max_token_len_per_gpu: 32768  # now 65536\n\n")
    read_back = Answer.model_validate(answer)
    plan = read_back.best
    assert plan is not None and hash(read_back) == hash(Answer.model_validate(answer))
    model = load_catalog().model("Qwen3-8B")
    assert read_back.config_keys_changed == config_key_changes(OWN_BUDGET, plan, model, environ={})
    assert config_keys_changed(OWN_BUDGET, plan, model, environ={}) == [
        f"{ACTOR}.ppo_max_token_len_per_gpu: 32768  # now 65536"]


def test_the_docs_example_is_what_the_command_prints(cli: Cli) -> None:
    status, out, _ = cli("--from-config", str(EXAMPLE), "--gpu", "h20", "--json")
    page = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
    heading = "`solve --from-config docs/examples/trinity.yaml --gpu h20 --json` gives its answer:\n\n```json\n"
    shown = page.split(heading, 1)[1].split("```", 1)[0]
    assert status == 0 and json.loads(shown) == {"config_keys_changed": _only(out)["config_keys_changed"]}
    assert json.loads(shown)["config_keys_changed"] == [
        {"key": "trainer.ulysses_sequence_parallel_size", "config_value": None, "plan_value": 2},
        {"key": "trainer.max_token_len_per_gpu", "config_value": None, "plan_value": 32768}]


def test_no_config_no_plan_or_old_json_has_no_keys_changed(cli: Cli, tmp_path: Path) -> None:
    assert "config_keys_changed" not in _only(cli("--model", "8B", "--gpu", "h20", "--len", "32768", "--json")[1])
    config = tmp_path / "capped.yaml"
    config.write_text(CAPPED, encoding="utf-8")
    refused = _only(cli("--from-config", str(config), "--gpu", "h20", "--json")[1])
    assert refused["plans"] == [] and "config_keys_changed" not in refused and "apply" not in refused
    old = _only(cli("--model", "8B", "--gpu", "h20", "--len", "32768", "--json")[1])
    assert Answer.model_validate(old).config_keys_changed is None  # JSON made before the key reads as none


def test_a_capped_refusal_names_the_smallest_cap_on_the_same_gpus(cli: Cli) -> None:
    status, out, _ = cli("--model", "8B", "--gpu", "h20", "--len", "65536", "--token-budget", "8k", "--gpus", "4")
    assert status == 1
    assert " ".join(out.split()) == (
        "H20-96GB · Qwen3-8B · cheapest plan for 65536 tokens within 4 GPUs: infeasible no plan: 65536 tokens is "
        "beyond what the tables and the memory model's estimates allow for Qwen3-8B on H20-96GB within 4 GPUs with "
        "--token-budget 8192: the longest is 32768 (SP=4 on 4 GPUs with a lowered max_token_len_per_gpu of 8192, "
        "inferred); more trainer GPUs train 65536 tokens: Env + SP=8 on 8 GPUs with a lowered max_token_len_per_gpu "
        "of 8192 (inferred); a cap of 16384 tokens per GPU (--token-budget 16384) trains 65536 tokens within 4 GPUs: "
        "Env + SP=4 on 4 GPUs with max_token_len_per_gpu = 16384 (documented) --explain says why, rule by rule, and "
        "names plans beyond these limits where there are any")
    answer = _only(cli("--model", "8B", "--gpu", "h20", "--len", "65536", "--token-budget", "8k", "--gpus", "4",
                       "--json")[1])
    raised = answer["token_budget_cap_raised"]
    assert isinstance(raised, dict) and "token_budget_cap_source" not in answer
    assert (raised["gpus"], raised["sp"], raised["env"], raised["max_model_len"], raised["max_token_len_per_gpu"],
            raised["token_budget_cap"], raised["evidence"]) == (4, 4, True, 65536, 16384, 16384, "documented")
    assert list(answer)[list(answer).index("token_budget_cap") + 1] == "token_budget_cap_raised"


def test_the_cap_named_is_the_smallest_and_its_plan_the_one_that_cap_gets() -> None:
    (capped,) = solver.plan("8B", gpu="h20", max_model_len=65536, budget_gpus=4, token_budget=8192)
    assert capped.reason is not None and capped.reason.endswith(
        "; a cap of 16384 tokens per GPU (token_budget=16384) trains 65536 tokens within 4 GPUs: Env + SP=4 on 4 GPUs "
        "with max_token_len_per_gpu = 16384 (documented)")
    (at_it,) = solver.plan("8B", gpu="h20", max_model_len=65536, budget_gpus=4, token_budget=16384)
    (below,) = solver.plan("8B", gpu="h20", max_model_len=65536, budget_gpus=4, token_budget=16383)
    assert at_it.best == capped.token_budget_cap_raised and below.best is None
    assert below.token_budget_cap_raised == capped.token_budget_cap_raised
    # no cap trains 262144 tokens on one GPU: nothing is offered
    (one,) = solver.plan("8B", gpu="h20", max_model_len=262144, budget_gpus=1, token_budget=8192)
    assert one.token_budget_cap_raised is None and one.reason is not None and "a cap of" not in one.reason


def test_a_configs_own_cap_names_its_source_raised(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "capped.yaml"
    config.write_text(CAPPED, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20")
    assert status == 1
    reason = " ".join(out.split("no plan: ", 1)[1].split())
    assert reason == (
        "65536 tokens is beyond what the tables and the memory model's estimates allow for Qwen3-8B on H20-96GB on "
        f"exactly 4 GPUs with max_token_len_per_gpu at most 8192 ({OWN_CAP}): the longest "
        "is 32768 (SP=4 on 4 GPUs with a lowered max_token_len_per_gpu of 8192, inferred); on 2 nodes of 8 GPUs, more "
        "trainer GPUs train 65536 tokens: Env + SP=8 on 8 GPUs with a lowered max_token_len_per_gpu of 8192 "
        f"(inferred); a cap of 16384 tokens per GPU ({OWN_CAP} raised to it, or "
        "--token-budget 16384) trains 65536 tokens on exactly 4 GPUs: Env + SP=4 on 4 GPUs with max_token_len_per_gpu "
        "= 16384 (documented) --explain says why, rule by rule, and names plans beyond these limits where there are "
        "any")
    answer = _only(cli("--from-config", str(config), "--gpu", "h20", "--json")[1])
    assert answer["token_budget_cap_source"] == OWN_CAP
    raised = answer["token_budget_cap_raised"]
    assert isinstance(raised, dict) and (raised["gpus"], raised["sp"], raised["max_token_len_per_gpu"]) == (4, 4, 16384)
    # --token-budget 16384 in its place plans it
    assert re.search(r"^plan +Env \+ SP=4 on 4 of 4 GPUs", cli("--from-config", str(config), "--gpu", "h20",
                                                               "--token-budget", "16384")[1], flags=re.MULTILINE)
