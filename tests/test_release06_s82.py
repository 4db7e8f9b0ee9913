"""Trinity 0.6 and per-release loose ends (s82, helper release06): a key under ``trainer.trainer_config`` that Trinity
0.6's legacy ``veRLConfig`` lacks gets a ``key-dropped`` line (its trainer on verl before 0.8 drops it), naming the
closest key, and a known one none; the key sets read from 0.6.0's source; an unset ``trainer_strategy``'s offload lines
name the release's default; the config check's ``lora-moe-config-unsaved`` under 0.5 names transformers 4 as the
plan's caution does; ``solve cluster --current`` shows the Trinity column where running jobs keep their plans' release
under a run that names none, names the file in a LoRA refusal under that release, and ``--emit-dir``'s comments name
the plan's release, not ``--trinity-version``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from benchmark_modules import load_benchmark
from config_cases import BASE, with_key, written
from test_cluster import reference_checked
from test_clustercli_s79 import SMALLER_ASKS
from test_smallslips24_s77 import Cli

from solver.tables import load_catalog, load_trinity_fields
from solver.trinity import check_trinity_config, trinity_config_problems

ARR = "trainer.trainer_config.actor_rollout_ref"
PASSED_08 = ("Trinity 0.6 drops it on verl before 0.8 (its veRLConfig has no such key there), where it does nothing, "
             "and on verl 0.8 or later passes it to verl's own {} config, which fails the trainer as it starts unless "
             "the installed verl has such a key there (not judged here)")
"""What Trinity 0.6 does on each verl with a key of a section it passes verl 0.8 (s83's stagesdrop: the words name
the path; before, the legacy one alone)."""
DROPPED = "{}: " + PASSED_08 + "{}"


def _problems(config: dict[str, Any], version: str | None = None, model: str = "Qwen3-8B") -> list[tuple[str, str]]:
    return [(problem.code.value, problem.words) for problem in trinity_config_problems(
        config, load_catalog().model(model), 4, version=version)]


def _dropped_config() -> dict[str, Any]:
    config = with_key(f"{ARR}.actor.ppo_mini_batchsize", 16)
    config = with_key(f"{ARR}.actor.optim.lrr", 1e-6, config)
    config = with_key(f"{ARR}.model.enable_gradient_checkpointng", True, config)
    config = with_key("trainer.trainer_config.critic.use_torch_compile", True, config)
    return with_key(f"{ARR}.actor.ppo_max_token_len_per_gpuu", 16384, config)


# Without a release named, 0.5's veRLConfig refuses these keys too: that line (verl-key, session 82's algorelease)
# names both, tests/test_algorelease_s82.py
BOTH = ("{}: Trinity 0.5 refuses the config as it loads it (its veRLConfig has no such key there), and " + PASSED_08
        + "{}")


@pytest.mark.parametrize(("version", "code", "words"), [(None, "verl-key", BOTH), ("0.6", "key-dropped", DROPPED)])
def test_keys_trinity_06_drops_are_said_with_the_closest_key(version: str | None, code: str, words: str):
    lines = [line for line in _problems(_dropped_config(), version) if line[0] in (code, "misspelt-key")]
    unset = ("Trinity 0.6 on verl before 0.8" if version
             else "Trinity 0.5 refuses the config, and 0.6 on verl before 0.8")
    assert lines == [
        ("misspelt-key", (f"{ARR}.actor.ppo_max_token_len_per_gpuu: did you mean ppo_max_token_len_per_gpu? That key "
                          f"is unset, and read as such ({unset} drops the key)")),
        (code, words.format(f"{ARR}.actor.ppo_mini_batchsize", "actor", "; did you mean ppo_mini_batch_size?")),
        (code, words.format(f"{ARR}.actor.optim.lrr", "actor", "; did you mean lr?")),
        (code, words.format(f"{ARR}.model.enable_gradient_checkpointng", "model",
                            "; did you mean enable_gradient_checkpointing?")),
        (code, words.format("trainer.trainer_config.critic.use_torch_compile", "critic", "")),
    ]


def test_no_key_dropped_line_for_trinity_05_nor_for_known_keys():
    # 0.5 merges the section into a veRLConfig of its own, which refuses them (verl-key-refused since session 82)
    assert not any(code == "key-dropped" for code, _ in _problems(_dropped_config(), "0.5"))
    known = with_key(f"{ARR}.actor.ppo_mini_batch_size", 16)
    for key, value in ((f"{ARR}.actor.optim.lr", 1e-6), (f"{ARR}.model.override_config.attention_dropout", 0.0),
                       (f"{ARR}.actor.checkpoint.anything_verl_takes", 1),  # verl's CheckpointConfig: not judged
                       (f"{ARR}.actor.policy_loss.loss_mode", "vanilla"),
                       (f"{ARR}.ref.fsdp_config.param_offload", False), (f"{ARR}.model.rope_scaling.factor", 2.0),
                       ("trainer.trainer_config.algorithm.rollout_correction.whatever", 1)):
        known = with_key(key, value, known)
    assert check_trinity_config(known, load_catalog().model("Qwen3-8B"), 4, version="0.6") == []


DROPPED_08 = ("{}: Trinity 0.6 on verl 0.8 or later drops it (it passes verl model, actor, ref, rollout and critic "
              "alone), so it does nothing there, though its veRLConfig on verl before 0.8 has the key{}")
"""The note on a key 0.6's legacy veRLConfig has that 0.6 on verl 0.8 drops (release89)."""


@pytest.mark.parametrize("version", [None, "0.6", "0.5"])
def test_keys_trinity_06_drops_on_verl_08_alone_get_a_note(version: str | None):
    # release89: 0.6's legacy veRLConfig has these keys (no key-dropped line for lacking them), but on verl 0.8 or
    # later Trinity passes verl the roles alone; balance_batch is Trinity's own trainer key there; 0.5 takes them all
    config = with_key("trainer.trainer_config.trainer.balance_batch", False)
    config = with_key(f"{ARR}.hybrid_engine", True, config)
    config = with_key("trainer.trainer_config.trainer.nnodes", 1, config)
    lines = [words for code, words in _problems(config, version) if code == "key-dropped"]
    assert lines == ([] if version == "0.5" else [
        DROPPED_08.format("trainer.trainer_config.trainer.balance_batch",
                          "; Trinity 0.6 reads its own trainer.balance_batch there in its place"),
        DROPPED_08.format("trainer.trainer_config.trainer.nnodes", ""),
        DROPPED_08.format(f"{ARR}.hybrid_engine", "")])


def test_lines_said_elsewhere_are_not_said_again():
    # the ref's model (ref-model), a role's engine (its verdict note) and verl 0.8's critic engine, which rft-solver
    # reads, keep their own lines
    config = with_key(f"{ARR}.ref.model", {"path": "/models/other"})
    config = with_key(f"{ARR}.actor.engine", {"param_offload": True}, config)
    config = with_key("trainer.trainer_config.critic.fsdp", {"param_offload": False}, config)
    assert [code for code, _ in _problems(config, "0.6")] == ["ref-model"]


def test_check_says_the_dropped_key_and_passes(cli: Cli, tmp_path: Path):
    config = written(tmp_path, with_key(f"{ARR}.actor.ppo_mini_batchsize", 16))
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--check", "--trinity-version", "0.6")
    assert status == 0
    assert ("but: trainer.trainer_config.actor_rollout_ref.actor.ppo_mini_batchsize: "
            f"{PASSED_08.format('actor')}; did you mean ppo_mini_batch_size?") in " ".join(out.split())


def test_the_table_holds_06s_legacy_veRLConfig_alone():
    releases = load_trinity_fields().releases
    assert [name for name, release in releases.items() if release.verl_legacy] == ["0.6.0"]
    legacy = releases["0.6.0"].verl_legacy
    assert legacy is not None
    assert legacy.sections["actor_rollout_ref.actor.optim"][:4] == ("betas", "clip_grad", "lr", "lr_decay_steps")
    assert {"actor_rollout_ref.actor.checkpoint", "actor_rollout_ref.actor.megatron", "global_profiler",
            "synchronizer"} <= set(legacy.open)
    assert legacy.lacked({"actor_rollout_ref": {"actor": {"ppo_mini_batchsize": 1, "checkpoint": {"x": 1}}},
                          "data": {"train_batch_size": 8}, "extra": 1}) == (
        ("actor_rollout_ref", "actor", "ppo_mini_batchsize"), ("extra",))


LEGACY_SOURCE = '''
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional
from verl.workers.config import VerlConfig


@dataclass
class Inner:
    a: int = 1
    b: List[str] = field(default_factory=list)


@dataclass
class _Wrapped(VerlConfig):
    extra: bool = True


@dataclass
class veRLConfig:
    inner: Inner = field(default_factory=Inner)
    maybe: Optional[Inner] = None
    kept: Dict[str, Any] = field(default_factory=dict)
    theirs: _Wrapped = field(default_factory=_Wrapped)
    other: Optional[VerlConfig] = None
    n: int = 0
'''


def test_the_legacy_sections_are_read_from_the_syntax_tree():
    found = load_benchmark("trinity_fields").legacy_sections(LEGACY_SOURCE)
    assert found == {"sections": {"": ["inner", "kept", "maybe", "n", "other", "theirs"], "inner": ["a", "b"],
                                  "maybe": ["a", "b"]},
                     "open": {"kept": [], "theirs": [], "other": []}, "null": ["maybe", "other"]}


@pytest.mark.parametrize(("version", "default"), [
    (None, "Trinity before 0.6 takes fsdp; 0.6, fsdp2"), ("0.5", "Trinity 0.5 takes fsdp"), ("0.6", None)])
def test_an_unset_strategy_names_the_default_of_the_release(version: str | None, default: str | None):
    config: dict[str, Any] = json.loads(json.dumps(BASE))
    del config["trainer"]["trainer_strategy"]
    config = with_key(f"{ARR}.ref.fsdp_config.offload_policy", True, config)
    expected = [] if default is None else [(
        "offload-needs-fsdp2", (f"{ARR}.ref.fsdp_config.offload_policy needs trainer.trainer_strategy fsdp2, got "
                                f"none ({default})"))]
    assert [line for line in _problems(config, version) if line[0] == "offload-needs-fsdp2"] == expected


ON_4 = ("run it on transformers 4 (Trinity 0.5.2's vllm extra installs it: vLLM 0.17.0 to 0.19.0 require transformers "
        "below 5), ")


# Under 0.6, transformers 5 alone: refused (test_release06b_s83).
@pytest.mark.parametrize(("version", "way_out", "code"), [("0.5", ON_4, "lora-moe-config-unsaved"),
                                                          ("0.6", "", "lora-moe-config-unsaved-refused"),
                                                          (None, "", "lora-moe-config-unsaved")])
def test_the_config_checks_moe_lora_line_names_transformers_4_as_the_caution_does(version: str | None, way_out: str,
                                                                                  code: str):
    config = with_key("model.lora_configs", [{"lora_rank": 8}], with_key("model.model_path", "Qwen/Qwen3-30B-A3B"))
    words = dict(_problems(config, version, "Qwen3-30B-A3B"))[code]
    assert words.endswith(f"so does any later load of it: {way_out}train Qwen3-30B-A3B without LoRA (drop "
                          "model.lora_configs), or patch Trinity's _save_lora to write target_parameters as a list "
                          "before the run")


def _running_on_05(cli: Cli, tmp_path: Path) -> Path:
    _, out, _ = cli("cluster", str(SMALLER_ASKS), "--trinity-version", "0.5", "--json")
    reference_checked(SMALLER_ASKS, out, trinity_version="0.5")  # every rank loading, as 0.5 without its patch does
    current = tmp_path / "now.json"
    current.write_text(out, encoding="utf-8")
    return current


def test_running_jobs_keeping_their_plans_release_get_the_trinity_column(cli: Cli, tmp_path: Path):
    current = _running_on_05(cli, tmp_path)
    for again in ((), ("--trinity-version", "0.6")):
        status, out, _ = cli("cluster", str(SMALLER_ASKS), "--current", str(current), *again)
        assert status == 1  # math-4b left out, as the example says
        rows = [" ".join(line.split()) for line in out.splitlines() if "chat-14b" in line or "┃ nodes" in line]
        # 0.5 without its patch counts every rank loading the untied Qwen3-14B at start-up: 4 x 55.0 GiB beside the
        # pinned shards, 340.9, above its 311.3 while training (0.5.1's verl rule, rank 0 alone, would show 311.3)
        assert rows[:2] == [
            ("┃ nodes ┃ GPUs ┃ job ┃ trainer ┃ rollout ┃ plan ┃ Trinity ┃ max_model_len ┃ YaRN ┃ cost ┃ evidence ┃ "
             "host GiB/node ┃ now ┃"),
            ("│ 0 │ 0-5 │ chat-14b │ 4 │ 2 │ Env + Offload + SP=4 │ 0.5 │ 65536 │ 1.6 │ 0.6565 │ documented │ 340.9 │ "
             "stays │")]


def test_emit_dir_names_a_running_jobs_release_as_its_plans(cli: Cli, tmp_path: Path):
    current = _running_on_05(cli, tmp_path)
    out_dir = tmp_path / "out"
    status, _, _ = cli("cluster", str(SMALLER_ASKS), "--current", str(current), "--emit-dir", str(out_dir))
    text = (out_dir / "chat-14b.yaml").read_text(encoding="utf-8")
    assert status == 1 and "--trinity-version 0.5)" not in text
    assert ("  # written for Trinity 0.5 (its plan's trinity_version 0.5), which refuses these flags under\n"
            "  # trainer itself;") in text


def test_a_running_jobs_lora_refusal_under_its_release_names_the_file(cli: Cli, tmp_path: Path):
    pools = [{"name": "h", "gpu": "H100-80GB", "nodes": 1, "gpus_per_node": 8}]
    job = {"name": "moe", "model": "Qwen3-30B-A3B", "max_model_len": 8192, "rollout_gpus": 2, "lora_rank": 8}
    first, changed = tmp_path / "f1.yaml", tmp_path / "f2.yaml"
    first.write_text(yaml.safe_dump({"pools": pools, "jobs": [job]}), encoding="utf-8")
    # fused experts' names: taken under the run's release (none named, 0.6's), refused under 0.5.1's it runs on
    targets = {**job, "lora_targets": r".*experts\.(gate|up)_proj"}
    changed.write_text(yaml.safe_dump({"pools": pools, "jobs": [targets]}), encoding="utf-8")
    _, out, _ = cli("cluster", str(first), "--trinity-version", "0.5.1", "--json", "--time-limit", "10")
    current = tmp_path / "now.json"
    current.write_text(out, encoding="utf-8")
    status, _, err = cli("cluster", str(changed), "--current", str(current), "--time-limit", "10")
    assert (status, " ".join(err.split())) == (2, (
        f"solve cluster: error: {changed}: job moe: lora_targets '.*experts\\.(gate|up)_proj' matches no module of "
        "Qwen3-30B-A3B (model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.gate, "
        "model.layers.N.mlp.experts.E.{gate,up,down}_proj, model.embed_tokens and lm_head): give all-linear (Trinity's "
        "default: every linear layer but the output projection), module names separated by commas (q_proj,v_proj) or "
        "a regular expression that PEFT matches whole module names with (.*\\.(q_proj|v_proj))"))


# s88 (legacy88): verl 0.7's own switch between its legacy and engine workers reaches verl under no Trinity release
# (solver.trinity.checks.WORKER_PATH_KEY): its line says what picks the workers, the installed verl
LEGACY_KEY = "trainer.trainer_config.trainer.use_legacy_worker_impl"
DROPPED_06 = ("Trinity 0.6 drops it on any verl (its veRLConfig on verl before 0.8 has no such key there, and on 0.8 or "
              "later it passes verl model, actor, ref, rollout and critic alone), so it does nothing")
PICKED_06 = ("picks verl's workers by the installed verl, not by a key: the legacy workers on verl before 0.8{}, the "
             "engine workers on 0.8 or later")
NO_SUCH = ("trainer.use_legacy_worker_impl: no release of Trinity (0.5.0 to 0.6.0) has this key there, so Trinity "
           "refuses the config (it knows no such key): remove it; ")
ONLY_05 = "Trinity 0.5 runs verl 0.7's legacy workers alone, which no key changes"


@pytest.mark.parametrize(("key", "version", "line"), [
    (LEGACY_KEY, "0.6", ("key-dropped", f"{LEGACY_KEY}: {DROPPED_06}; Trinity 0.6 {PICKED_06.format('')}")),
    (LEGACY_KEY, "0.5", ("verl-key-refused", (f"{LEGACY_KEY}: Trinity 0.5 refuses the config as it loads it (its "
                                              f"veRLConfig has no such key there): remove it; {ONLY_05}"))),
    (LEGACY_KEY, None, ("verl-key", (f"{LEGACY_KEY}: Trinity 0.5 refuses the config as it loads it (its veRLConfig "
                                     f"has no such key there), and {DROPPED_06}; Trinity "
                                     f"{PICKED_06.format(' (Trinity 0.5 runs no other)')}"))),
    ("trainer.use_legacy_worker_impl", "0.6", ("no-such-key-refused", f"{NO_SUCH}Trinity 0.6 {PICKED_06.format('')}")),
    ("trainer.use_legacy_worker_impl", "0.5", ("no-such-key-refused", NO_SUCH + ONLY_05)),
])
def test_legacy_worker_switch_is_said_to_pick_nothing(key: str, version: str | None, line: tuple[str, str]):
    # a PPO critic at fsdp2 keeps no line of its own: the engine-worker branch that would raise for it
    # (0.6.0's verl_legacy/verl_trainer.py:335, verl 0.7.1's ray_trainer.py:720) never runs, the key never reaching verl
    config = with_key(key, "disable", with_key("algorithm.algorithm_type", "ppo"))
    assert _problems(with_key("trainer.trainer_config.critic.strategy", "fsdp2", config), version) == [line]
