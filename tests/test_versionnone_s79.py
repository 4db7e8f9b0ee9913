"""Session 79, versionnone: a plan's own Trinity release wherever none is named. `solver.trinity.trinity_fragment`,
`plan_settings`, `patch_trinity_config` (and the patch's other functions) called without ``version`` write the release
the plan was counted for (`solver.results.written_release`, as `solver.trinity_config` does), so a plan made for 0.5.1
gets 0.5's keys, not 0.6's; a pre-release (``0.6.0.dev0``, ``0.6.0rc1``) is refused at every entry point, naming the
releases taken; a saved plan naming a release rft-solver now refuses (``0.6.1``) still reads, and writing its config
says to pass its minor release; `_written_for`'s words are true of each layout: a release taking either
transformers *may* hold the experts otherwise, and where only a LoRA adapter differs (Qwen1.5-MoE's, whose
transformers 4 router and experts are ``nn.Linear`` and transformers 5's are not) the refusal says that."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from test_cluster import reference_checked

import solver
from solver.api import _written_for
from solver.query import QueryError
from solver.results import Plan, written_release
from solver.tables import planned_release
from solver.trinity import (
    config_keys_changed,
    patch_trinity_config,
    patched_trinity_config,
    plan_settings,
    trinity_fragment,
)

Cli = Callable[..., tuple[int, str, str]]

HF_CONFIGS = Path(__file__).parent / "data" / "hf-configs"
QWEN3_8B = solver.load_catalog().model("Qwen3-8B")
ASKED = {"gpu": "h100", "budget_gpus": 8, "max_model_len": 32768, "offload": True}
CONFIG = ("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 4096\ncluster:\n  node_num: 1\n  gpu_per_node: 8\n"
          "mode: train\ntrainer:\n  trainer_config:\n    actor_rollout_ref:\n      actor:\n"
          "        fsdp_config: {param_offload: false}\n")
"""A Trinity config of Qwen3-8B on 8 trainer GPUs (mode train: no rollout), its actor's offload off."""
TAKEN = "0.5, 0.5.0, 0.5.1, 0.5.2, 0.6 or 0.6.0 (or a tag of one, v0.5.2)"
TRAINER_FLAGS = ("param_offload", "optimizer_offload", "offload_policy")
"""Trinity 0.6's offload flags under ``trainer`` itself, which 0.5 refuses."""


def _best(trinity_version: str | None) -> Plan:
    (answer,) = solver.plan("Qwen3-8B", trinity_version=trinity_version, **ASKED)  # type: ignore[arg-type]
    assert answer.best is not None
    return answer.best


@pytest.fixture(scope="module")
def plan_051() -> Plan:
    """Qwen3-8B with Offload on 8 H100s at 32k, made for Trinity 0.5.1."""
    return _best("0.5.1")


def test_a_fragment_without_version_is_written_for_the_plans_release(plan_051: Plan) -> None:
    assert plan_051.trinity_version == "0.5.1"
    fragment = trinity_fragment(plan_051, QWEN3_8B)
    # Before: 0.6's keys, its offload flags under trainer that 0.5 refuses, and a check naming no release.
    assert fragment == trinity_fragment(plan_051, QWEN3_8B, version="0.5")
    assert fragment != trinity_fragment(plan_051, QWEN3_8B, version="0.6")
    assert not any(f"\n  {flag}: " in fragment for flag in TRAINER_FLAGS)
    checked = trinity_fragment(plan_051, QWEN3_8B, check=("--gpu", "H100-80GB"))
    assert checked.count(" --check --gpu H100-80GB --critic none --trinity-version 0.5.1\n") == 1
    settings = plan_settings(plan_051, QWEN3_8B)
    assert settings == plan_settings(plan_051, QWEN3_8B, version="0.5")
    assert not set(TRAINER_FLAGS) & set(settings.config["trainer"])
    assert settings.trinity_06_keys == ()


def test_a_plan_for_no_release_still_gets_0_6s_keys_with_their_note() -> None:
    plan = _best(None)
    fragment = trinity_fragment(plan, QWEN3_8B)
    assert fragment != trinity_fragment(plan, QWEN3_8B, version="0.6")  # 0.6 named: no note that 0.5 refuses them
    assert all(f"\n  {flag}: true" in fragment for flag in TRAINER_FLAGS)
    note = "  # these three are Trinity 0.6's (0.5 refuses them: version=\"0.5\" leaves them out); on verl before\n"
    assert note in fragment
    assert plan_settings(plan, QWEN3_8B).trinity_06_keys != ()


def test_the_patch_without_version_is_for_the_plans_release(plan_051: Plan) -> None:
    patched = patched_trinity_config(CONFIG, plan_051, QWEN3_8B)
    assert patched == patched_trinity_config(CONFIG, plan_051, QWEN3_8B, version="0.5")
    assert patch_trinity_config(CONFIG, plan_051, QWEN3_8B) == patched.text
    assert patched.text != patch_trinity_config(CONFIG, plan_051, QWEN3_8B, version="0.6")
    # the release it was counted under, as the check command names it (s80: 0.5, version="0.5" before)
    assert "# written for Trinity 0.5.1 (version=\"0.5.1\"), which refuses the offload flags under trainer\n" in (
        patched.text)
    assert not any(f"\n  {flag}: " in patched.text for flag in TRAINER_FLAGS)
    assert config_keys_changed(CONFIG, plan_051, QWEN3_8B) == config_keys_changed(CONFIG, plan_051, QWEN3_8B,
                                                                                  version="0.5")


def test_the_commands_fragment_and_apply_are_the_plans_release(cli: Cli, plan_051: Plan) -> None:
    asked = ("--model", "Qwen3-8B", "--gpu", "h100", "--gpus", "8", "--len", "32k", "--offload",
             "--trinity-version", "0.5.1")
    status, out, err = cli(*asked, "--json")
    assert status == 0, err
    read_back = solver.Answer.model_validate(json.loads(out)[0])
    assert read_back.best is not None and read_back.best.trinity_version == "0.5.1"
    # --json's apply: the settings trinity_fragment writes for the plan read back, no version named
    assert json.loads(out)[0]["apply"]["config"] == plan_settings(read_back.best, QWEN3_8B).config
    status, emitted, err = cli(*asked, "--emit", "trinity")
    assert status == 0, err
    # the API's, no version named, writes the plan's release: the same keys (its notes name its keywords)
    assert yaml.safe_load(emitted) == yaml.safe_load(solver.trinity_config(read_back))
    assert not any(f"\n  {flag}: " in emitted for flag in TRAINER_FLAGS)
    assert emitted.count(" --trinity-version 0.5.1\n") == 1


def test_written_release_is_the_version_named_else_the_plans(plan_051: Plan) -> None:
    assert (written_release(plan_051), written_release(plan_051, "0.6")) == ("0.5", "0.6")
    assert written_release(_best(None)) is None


@pytest.mark.parametrize(("value", "before"), [("0.6.0.dev0", "0.6.0"), ("0.6.0rc1", "0.6.0"), ("v0.5.1b2", "0.5.1"),
                                               ("0.5.dev0", "0.5"), ("0.6.0.post1.dev0", "0.6.0.post1")])
def test_a_pre_release_is_refused_at_each_entry_point(cli: Cli, value: str, before: str) -> None:
    why = (f"(a pre-release of {before}, whose rules may differ from that release's: rft-solver knows the rules of "
           "these releases alone)")
    status, out, err = cli("--model", "4B", "--gpu", "a100", "--len", "8k", "--trinity-version", value)
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] == (f"solve: error: argument --trinity-version: takes {TAKEN}, got {value!r} {why}")
    status, _, err = cli("cluster", "tests/data/cluster-40-jobs.yaml", "--trinity-version", value)
    assert status == 2 and err.splitlines()[-1].endswith(f"got {value!r} {why}")
    with pytest.raises(QueryError) as raised:
        solver.plan("Qwen3-8B", gpu="h100", trinity_version=value)
    assert str(raised.value) == f"trinity_version takes {TAKEN}, got {value!r} {why}"
    (answer,) = solver.plan("Qwen3-8B", gpu="h100", max_model_len=8192)
    with pytest.raises(QueryError) as raised:
        solver.trinity_config(answer, version=value)
    assert str(raised.value) == f"version takes {TAKEN}, got {value!r} {why}"
    with pytest.raises(QueryError) as raised:
        trinity_fragment(_best(None), QWEN3_8B, version=value)  # type: ignore[arg-type]
    assert str(raised.value) == f"version must be one of None, 0.5, 0.6, got {value!r}"


@pytest.mark.parametrize(("value", "minor"), [("0.6.0.post1", "0.6"), ("0.6.0+cu121", "0.6"), ("v0.5.2", "0.5")])
def test_a_post_release_or_local_build_is_its_release(value: str, minor: str) -> None:
    assert solver.tables.trinity_release("trinity_version", value) == minor


@pytest.mark.parametrize(("saved", "minor"), [("0.6.1", "0.6"), ("0.5.3", "0.5")])
def test_a_saved_plan_naming_a_release_now_refused_reads_and_says_what_to_pass(saved: str, minor: str) -> None:
    (answer,) = solver.plan("Qwen3-8B", gpu="h100", max_model_len=32768, trinity_version=f"{minor}.0")
    assert answer.best is not None
    text = answer.model_dump_json().replace(f'"trinity_version":"{minor}.0"', f'"trinity_version":"{saved}"')
    read_back = solver.Answer.model_validate_json(text)  # the file reads, as before
    assert read_back.best is not None and read_back.best.trinity_version == saved
    said = (f"was counted for Trinity {saved!r}, a release whose rules rft-solver does not know: pass "
            f"version='{minor}' to write it for {minor}, whose rules counted it, or plan it again with one it knows, "
            f"{TAKEN}")
    for write in (solver.trinity_config, solver.trinity_settings):
        with pytest.raises(QueryError) as raised:
            write(read_back)
        assert str(raised.value) == f"the answer's plan {said}"
    with pytest.raises(QueryError) as raised:
        trinity_fragment(read_back.best, QWEN3_8B)
    assert str(raised.value) == f"the plan {said}"
    fragment = solver.trinity_config(read_back, version=minor)  # as it says
    assert fragment.count(f" --trinity-version {minor}\n") == 1
    assert trinity_fragment(read_back.best, QWEN3_8B, version=minor) == trinity_fragment(
        read_back.best.model_copy(update={"trinity_version": minor}), QWEN3_8B)


def test_planned_release_of_an_unknown_minor_names_no_release_to_pass() -> None:
    assert planned_release("0.5.1") == "0.5"
    assert planned_release(None) is None
    with pytest.raises(QueryError) as raised:
        planned_release("0.7", "job a's plan")
    assert str(raised.value) == (f"job a's plan was counted for Trinity '0.7', a release whose rules rft-solver does "
                                 f"not know: pass version= the release to write it for, or plan it again with one it "
                                 f"knows, {TAKEN}")


def test_a_placement_read_back_naming_a_refused_release_names_its_job(tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: h100s, gpu: h100, nodes: 1, gpus_per_node: 8}\n"
                     "jobs:\n  - {name: small, model: Qwen3-8B, max_model_len: 8192, rollout_gpus: 0}\n",
                     encoding="utf-8")
    placed = solver.place(fleet, trinity_version="0.6.0")
    reference_checked(fleet, placed.model_dump_json(), trinity_version="0.6.0")
    text = placed.model_dump_json().replace('"trinity_version":"0.6.0"', '"trinity_version":"0.6.1"')
    read_back = solver.ClusterResult.model_validate_json(text)
    with pytest.raises(QueryError, match=r"^job small's plan was counted for Trinity '0\.6\.1', a release whose "
                                         r"rules rft-solver does not know: pass version='0\.6' to write it for 0\.6,"):
        solver.placement_configs(read_back, fleet)
    assert solver.placement_configs(read_back, fleet, version="0.6")["small"].count(" --trinity-version 0.6\n") == 1


@pytest.fixture(scope="module")
def qwen15_moe() -> solver.Catalog:
    """The shipped catalogue with Qwen1.5-MoE-A2.7B (qwen2_moe): transformers 4.57.6 makes its router and each
    expert's projections ``nn.Linear`` modules; 5.12.1 its router a parameter and its experts 3-D parameters."""
    return solver.load_catalog().with_model(solver.load_model_config(HF_CONFIGS / "Qwen1.5-MoE-A2.7B.json"))


@pytest.mark.parametrize("version", ["0.5", "0.5.2"])
def test_only_the_adapter_differing_is_said_so(qwen15_moe: solver.Catalog, version: str) -> None:
    (answer,) = solver.plan("Qwen1.5-MoE-A2.7B", gpu="h100", budget_gpus=8, max_model_len=8192, lora_rank=16,
                            catalog=qwen15_moe)
    with pytest.raises(QueryError) as raised:
        solver.trinity_config(answer, qwen15_moe, version=version)
    # Before: "which holds Qwen1.5-MoE-A2.7B's routed experts otherwise": either layout counts the states whole.
    assert str(raised.value) == (
        "the answer's plan was counted for no Trinity release (0.6's; routed experts counted whole, as transformers "
        f"5 holds them): its memory figures do not hold for Trinity {version}, which counts Qwen1.5-MoE-A2.7B's "
        "routed experts' states alike but its LoRA adapter larger (255,613,824 parameters at rank 16 as transformers "
        "4 lays the model out, not the 15,925,632 counted); plan it again with "
        f"trinity_version='{version}', or leave version out to write it for no Trinity release (0.6's)")
    with pytest.raises(QueryError, match=r"do not hold for Trinity 0\.5\.1, which holds Qwen1\.5-MoE-A2\.7B's routed "
                                         r"experts otherwise, separate on its transformers 4; plan it again"):
        solver.trinity_config(answer, qwen15_moe, version="0.5.1")


def test_an_either_plan_written_for_0_5_1_keeps_how_its_figures_were_counted(qwen15_moe: solver.Catalog) -> None:
    (answer,) = solver.plan("Qwen1.5-MoE-A2.7B", gpu="h100", budget_gpus=8, max_model_len=8192, lora_rank=16,
                            catalog=qwen15_moe, trinity_version="0.5.0")
    assert answer.best is not None
    counted = ("routed experts counted at the larger of Trinity 0.5's two layouts, 3-D as transformers 5 holds them "
               "or separate as transformers 4 does, each as verl 0.7 places it; its LoRA adapter as transformers 4 "
               "makes them, the larger")
    assert answer.best.experts_counted == counted
    written = _written_for(answer.best, qwen15_moe.model("Qwen1.5-MoE-A2.7B"), "0.5.1", "the answer")
    # Before: "routed experts counted separate, as Trinity 0.5.1's transformers 4 holds them", which its memory_gb
    # (whole experts' states) is not.
    assert (written.expert_layout, written.trinity_version, written.experts_counted) == ("separate", "0.5.1", counted)
    assert written.memory_gb == answer.best.memory_gb
