"""One rule for a config's LoRA adapter refused on the model's module names (session 81, helper lorarule): the checks'
``lora-configs-refused`` line (``--check``, the API's verdict), the plans' rank (`config_query`,
`config_counted_on`) and ``--write``'s rank and note (`_lora_refused`) all judge the adapter Trinity makes anew
(`new_adapter`) by `new_adapter_refused`. Before, ``--write`` ran every config check for it, and the checks judged
``model.lora_configs`` alone while the plans judged verl's ``actor_rollout_ref.model`` keys too: with Trinity 0.5 a
``target_modules`` there that matches no module counted full fine-tuning unsaid (its note blamed a ``--lora-rank 0``
never given, and ``--write``'s check command added one). And a capped plan's fragment comment names the one source of
its cap (`Answer.token_cap_words`), where it named both."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from test_keepbudget_s80 import H20_CONFIG, ROLES_CAP
from test_review79b_s79 import CONFIG

import solver
from solver.api import answer_query, config_query, with_config_verdicts
from solver.rules import API_OPTIONS
from solver.tables import load_catalog
from solver.trinity import load_config_mapping, read_trinity_config, trinity_fragment
from solver.trinity.checks import config_counted_on, new_adapter_refused
from solver.trinity.config import NewAdapter, counted_adapter, written_adapter

Cli = Callable[..., tuple[int, str, str]]
CATALOG = load_catalog()
QWEN3_8B = CATALOG.model("Qwen3-8B")
OWN_LORA = "  lora_configs:\n    - name: mine\n      lora_rank: 64\n      lora_alpha: 128\n      target_modules: '%s'\n"
HEAD = CONFIG.replace(OWN_LORA, "{lora}")
"""review79b's Qwen3-8B GRPO config, its LoRA left to each test."""
LORA_CONFIGS = CONFIG % ".*mlp\\.gate"
"""A Qwen3-MoE's router regex on a dense Qwen3: PEFT matches no module, and Trinity fails as it makes the adapter."""
VERL = HEAD.format(lora="") + """trainer:
  trainer_config:
    actor_rollout_ref:
      model:
        lora_rank: 64
        target_modules: '.*mlp\\.gate'
"""
"""The same adapter by verl before 0.8's keys, which Trinity 0.5 hands its trainer."""
VERL_MODEL = "trainer.trainer_config.actor_rollout_ref.model"
DENSE_NAMES = ("model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.{gate,up,down}_proj, model.embed_tokens "
               "and lm_head")


def _refused(key: str) -> str:
    """The refusal of `key`'s ``.*mlp\\.gate`` on Qwen3-8B, in every path's words."""
    return (f"{key} '.*mlp\\.gate', on Qwen3-8B (a dense model), matches no module: peft matches it whole "
            f"(re.fullmatch) against each module's full name ({DENSE_NAMES}), and Trinity fails as it makes the "
            "adapter: give all-linear, or a regular expression that matches whole names, such as .*\\.(q_proj|v_proj)")


def _counted_as_full(key: str) -> str:
    return (f"with {key} refused (lora-configs-refused says why), the verdict and the plans count full fine-tuning, "
            f"which holds more than a LoRA run: fix {key} and plan again to count the LoRA run, or remove it to train "
            "every parameter")


CASES = [  # (config, release, the key refused, the key that turns LoRA on)
    (LORA_CONFIGS, None, "model.lora_configs[0].target_modules", "model.lora_configs"),
    (LORA_CONFIGS, "0.5", "model.lora_configs[0].target_modules", "model.lora_configs"),
    (VERL, "0.5", f"{VERL_MODEL}.target_modules", f"{VERL_MODEL}.lora_rank"),
]


def _written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "grpo.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _release(version: str | None) -> tuple[str, ...]:
    return () if version is None else ("--trinity-version", version)


@pytest.mark.parametrize(("text", "version", "refused", "lora"), CASES)
def test_check_refuses_the_adapter_and_counts_full_fine_tuning(cli: Cli, tmp_path: Path, text: str,
                                                               version: str | None, refused: str, lora: str) -> None:
    status, out, _ = cli("--from-config", str(_written(tmp_path, text)), "--gpu", "h100", "--check", "--json",
                         *_release(version))
    [answer] = json.loads(out)
    current = answer["current"]
    assert status == 1
    assert [words for words, code in zip(current["config_problems"], current["config_problem_codes"], strict=True)
            if code.startswith("lora")] == [_refused(refused), _counted_as_full(lora)]
    assert [plan["lora_rank"] for plan in answer["plans"]] == [0]  # full fine-tuning counted


@pytest.mark.parametrize(("text", "version", "refused", "lora"), CASES)
def test_write_keeps_the_refused_adapter_and_says_so(cli: Cli, tmp_path: Path, text: str, version: str | None,
                                                     refused: str, lora: str) -> None:
    config, written = _written(tmp_path, text), tmp_path / "out.yaml"
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--write", str(written),
                         *_release(version))
    assert status == 0
    assert f"solve: warning: {written}: {_refused(refused)}\n" in err
    assert (f"solve: note: {config} sets LoRA ({lora}), which --write keeps as written, though Trinity refuses it so "
            "(its refused line, lora-configs-refused, says why): the plan counted full fine-tuning, which holds more "
            f"than a LoRA run; fix {lora} and plan again to count the LoRA run, or remove it to train every "
            "parameter\n") in err
    # the check command counts the config's LoRA as the plan did, with no --lora-rank 0 of its own (verl's keys had it)
    check = [line for line in written.read_text().splitlines() if "--check" in line]
    assert check == [(f"  #   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve --from-config {written} --check "
                      f"--gpu H100-80GB{' --trinity-version 0.5' if version else ''}")]


@pytest.mark.parametrize(("text", "version", "refused", "lora"), CASES)
def test_the_api_counts_and_says_the_same(text: str, version: str | None, refused: str, lora: str) -> None:
    config = read_trinity_config(text, "grpo.yaml", {}, version)
    assert config.lora_rank == 64  # the reading alone assumes a Qwen3-MoE's names, which take the regex
    query = config_query(CATALOG, config, gpu="h100", trinity_version=version)
    assert (query.lora_rank, query.lora_targets) == (0, None)
    (answer,) = with_config_verdicts(answer_query(query, CATALOG), query, CATALOG, config, text, "grpo.yaml", {},
                                     version)
    assert answer.current is not None
    assert [words for words, code in zip(answer.current.config_problems, answer.current.config_problem_codes,
                                         strict=True) if code.value.startswith("lora")] == [
        _refused(refused), _counted_as_full(lora)]


@pytest.mark.parametrize(("text", "version", "adapter"), [
    (LORA_CONFIGS, None, NewAdapter(("model", "lora_configs", 0), ".*mlp\\.gate", None)),
    (VERL, "0.5", NewAdapter(("trainer", "trainer_config", "actor_rollout_ref", "model"), ".*mlp\\.gate", None)),
])
def test_the_plans_and_write_judge_one_adapter(text: str, version: str | None, adapter: NewAdapter) -> None:
    # config_query's (the reading's counted adapter) and --write's (the config as written) are the same one
    config = read_trinity_config(text, "grpo.yaml", {}, version)
    assert counted_adapter(config) == adapter == written_adapter(load_config_mapping(text, "grpo.yaml"), "grpo.yaml",
                                                                 {}, version)
    assert new_adapter_refused(adapter, QWEN3_8B, "fused")
    assert config_counted_on(config, QWEN3_8B, "fused").lora_rank == 0
    assert config_counted_on(config, CATALOG.model("Qwen3-30B-A3B"), "fused") == config  # its router: taken


@pytest.mark.parametrize(("lora", "version"), [
    ("lora_configs: [{lora_rank: 64, path: /adapters/a, target_modules: '.*mlp\\.gate'}]", None),  # loaded
    ("lora_configs: [{lora_rank: 0, target_modules: '.*mlp\\.gate'}]", None),  # refused for its rank alone
    ("lora_configs: [{lora_rank: 8, target_modules: '.*mlp\\.gate'}, {lora_rank: 8}]", None),  # two: refused so
    ("lora_configs: [{lora_rank: 8, target_modules: [q_proj]}]", None),  # a list: the reading's refusal
])
def test_no_adapter_made_anew_is_judged_on_the_names(lora: str, version: str | None) -> None:
    text = HEAD.format(lora=f"  {lora}\n")
    assert written_adapter(load_config_mapping(text, "grpo.yaml"), "grpo.yaml", {}, version) is None


def test_verls_keys_make_an_adapter_with_trinity_05_alone() -> None:
    # Trinity 0.6 on verl 0.8 ignores them (and counts full fine-tuning): not judged; a lora_adapter_path loads one
    mapping = load_config_mapping(VERL, "grpo.yaml")
    assert written_adapter(mapping, "grpo.yaml", {}, "0.6") is None
    assert written_adapter(mapping, "grpo.yaml", {}, None) is None
    loaded = VERL.replace("        lora_rank: 64\n", "        lora_rank: 64\n        lora_adapter_path: /adapters/a\n")
    assert written_adapter(load_config_mapping(loaded, "grpo.yaml"), "grpo.yaml", {}, "0.5") is None


def test_a_number_is_the_text_trinitys_typed_lora_config_makes() -> None:
    text = HEAD.format(lora="  lora_configs: [{lora_rank: 8, target_modules: 7}]\n")
    assert written_adapter(load_config_mapping(text, "grpo.yaml"), "grpo.yaml", {}, None) == NewAdapter(
        ("model", "lora_configs", 0), "7", None)


CAPPED = ("--model", "qwen3-8b", "--gpu", "h100", "--len", "32768", "--token-budget", "8192")
BUDGET_COMMENT = ("below Trinity's default ceil(2 * 32768 / {sp}): capped by {cap}; at least ceil(32768 / {sp}); "
                  "Trinity 0.5.0 raises it back to the default: use 0.5.1 or later")


def _budget_comment(fragment: str) -> str:
    """The comment on a fragment's ``trainer.max_token_len_per_gpu``, its lines joined."""
    lines = fragment.splitlines()
    end = next(index for index, line in enumerate(lines) if line.startswith("  max_token_len_per_gpu:"))
    start = max(index for index in range(end) if "below Trinity's default" in lines[index])
    return " ".join(" ".join(line.strip().removeprefix("#").split()) for line in lines[start:end])


def test_the_option_cap_is_named_as_the_command_gives_it(cli: Cli) -> None:
    status, out, _ = cli(*CAPPED, "--emit", "trinity")
    assert status == 0
    assert _budget_comment(out) == BUDGET_COMMENT.format(sp=4, cap="--token-budget 8192")


def test_the_option_cap_is_named_as_the_api_gives_it() -> None:
    (answer,) = solver.plan("qwen3-8b", gpu="h100", max_model_len=32768, token_budget=8192)
    assert answer.token_cap_words(API_OPTIONS) == "capped by token_budget=8192"
    assert _budget_comment(solver.trinity_config(answer)) == BUDGET_COMMENT.format(sp=4, cap="token_budget=8192")
    # a plan without its answer may have either cap: its fragment names both
    assert answer.best is not None
    assert _budget_comment(trinity_fragment(answer.best, CATALOG.model("qwen3-8b"))) == BUDGET_COMMENT.format(
        sp=4, cap="--token-budget 8192 or the config's own max_token_len_per_gpu")


def test_the_configs_own_cap_is_named_as_such(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "grpo.yaml"
    config.write_text(H20_CONFIG, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--emit", "trinity")
    assert status == 0
    assert _budget_comment(out) == BUDGET_COMMENT.format(sp=1, cap=ROLES_CAP)
    read = read_trinity_config(H20_CONFIG, "grpo.yaml", {}, None)
    (answer,) = answer_query(config_query(CATALOG, read, gpu="h20"), CATALOG)
    assert answer.token_budget_cap_source == ROLES_CAP
    assert _budget_comment(solver.trinity_config(answer)) == BUDGET_COMMENT.format(sp=1, cap=ROLES_CAP)
