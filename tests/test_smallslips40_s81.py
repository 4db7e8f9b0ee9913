"""Small slips left by session 81's helpers (helper smallslips40): an empty or unlisted ``model.lora_configs`` beside
verl's ``lora_rank`` counts full fine-tuning, as Trinity refuses the config (``config_validator.py:699`` to ``:703``
in 0.5.2, ``:780`` to ``:784`` in 0.6.0: ``lora_configs[0]`` of an empty list; the typed ``List[LoRAConfig]``
refuses a mapping), naming model.lora_configs as the refused key; --write's note on a kept YaRN says it added the
base it lacked."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from test_jobrelease_s81 import _fleet
from test_review81b_s81 import _current
from test_ropeseven_s74 import _phi_partial

from solver.render.cluster import UNPLACED_RELEASE_NOTE
from solver.results import ClusterResult
from solver.trinity import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]

VERL_RANK = """\
algorithm: {algorithm_type: grpo}
cluster: {node_num: 1, gpu_per_node: 8}
buffer: {batch_size: 64}
model:
  model_path: Qwen/Qwen3-8B
  max_model_len: 4096
  lora_configs: %s
explorer:
  rollout_model: {engine_num: 2, tensor_parallel_size: 2}
trainer:
  trainer_config:
    actor_rollout_ref:
      model: {lora_rank: 8}
"""
"""A config whose verl ``lora_rank`` 8 Trinity 0.5 would train, beside a ``model.lora_configs`` (``%s``)."""
RANK_KEY = "trainer.trainer_config.actor_rollout_ref.model.lora_rank"


@pytest.mark.parametrize(("configs", "why"), [
    ("[]", "is an empty list: Trinity takes its first LoRA config (lora_configs[0]) and so fails to load the config"),
    ("{}", "is not a list: Trinity's typed config refuses it when it loads the config"),
])
def test_a_refused_lora_configs_beside_verls_rank_counts_full_fine_tuning(configs: str, why: str) -> None:
    # Before: rank 8 counted under 0.5 (LoRA's states), with a line saying so beside the refusal.
    for version, key in (("0.5", RANK_KEY), (None, None)):  # 0.6 on verl 0.8 or later ignores lora_rank
        reading = read_trinity_config(VERL_RANK % configs, "trinity.yaml", {}, version=version)
        assert (reading.lora_rank, reading.lora_key) == (0, key)
        # before: "drop it for no LoRA", where verl's lora_rank trains LoRA without it
        assert [(code.value, words) for code, words in zip(reading.note_codes, reading.notes, strict=True)] == [
            ("lora-configs-refused", (f"model.lora_configs {why}: give it one LoRA config, or drop it and {RANK_KEY} "
                                      "for no LoRA"))]


def test_the_check_and_write_name_model_lora_configs_as_refused(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "trinity.yaml"
    config.write_text(VERL_RANK % "[]", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--check", "--trinity-version", "0.5")
    words = " ".join(out.split())
    assert (status, err) == (1, "")
    assert ("but: with model.lora_configs refused (lora-configs-refused says why), the verdict and the plans count "
            "full fine-tuning, which holds more than a LoRA run: fix model.lora_configs and plan again to count the "
            f"LoRA run, or remove it and {RANK_KEY} to train every parameter plan ") in words
    assert "LoRA rank 8" not in words and "LoRA rank 8's states" not in words
    patched = tmp_path / "patched.yaml"
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--trinity-version", "0.5", "--write",
                         str(patched))
    assert status == 0, err
    assert (f"solve: note: {config} sets LoRA ({RANK_KEY}), which --write keeps as written, though Trinity refuses "
            "it so (its refused line, lora-configs-refused, says why): the plan counted full fine-tuning, which holds "
            "more than a LoRA run; fix model.lora_configs and plan again to count the LoRA run, or remove it and "
            f"{RANK_KEY} to train every parameter\n") in err


YARN = """\
algorithm: {algorithm_type: grpo}
model:
  model_path: Qwen/Qwen3-4B
  max_model_len: 131072
  rope_scaling:
    rope_type: yarn
    factor: 4.0
    original_max_position_embeddings: 32768
%scluster:
  node_num: 1
  gpu_per_node: 8
explorer:
  rollout_model:
    engine_num: 4
"""
"""Qwen's model cards' YaRN (factor 4 over 32768), which reaches 131072, with the lines ``%s`` after it."""


@pytest.mark.parametrize(("version", "theta", "added"), [
    ((), "", (" and added the base it lacked, Qwen3-4B's own rope_theta 1000000: Trinity 0.6's trainer on verl "
              "before 0.8 fails to build the model on a rope_scaling without it (transformers 5 finds no base)")),
    (("--trinity-version", "0.5.1"), "", " and added the base it lacked, Qwen3-4B's own rope_theta 1000000"),
    ((), "    rope_theta: 1000000\n", ""),
])
def test_a_kept_yarns_note_says_the_base_write_added(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     version: tuple[str, ...], theta: str, added: str) -> None:
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text(YARN % theta, encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h200", *version, "--write", str(patched))
    assert status == 0, err
    assert "    original_max_position_embeddings: 32768\n    rope_theta: 1000000\ncluster:\n" in patched.read_text()
    kept = (" (one that covers the length needs no change)" + added) if added else (
        ": one that covers the length needs no change")
    assert err.splitlines()[0] == (
        f"solve: note: {patched}: model.rope_scaling (factor 4.0 over 32768) covers the length, but not as "
        f"Trinity-RFT's guide sets it, factor max_model_len / 40960 = 3.2 over 40960; --write kept it{kept}")


def test_the_current_note_on_a_plan_of_an_unknown_release_asks_for_no_release_refused(cli: Cli,
                                                                                      tmp_path: Path) -> None:
    # Before: "give it the release it runs on as trinity_version", which trinity_version refuses for 0.6.1
    placed = json.loads(_current(cli, tmp_path, "0.5.2").read_text(encoding="utf-8"))
    placed["placements"][0]["plan"]["trinity_version"] = "0.6.1"
    current = tmp_path / "later.json"
    current.write_text(json.dumps(placed), encoding="utf-8")
    plain = tmp_path / "plain.yaml"
    status, _, err = cli("cluster", str(plain), "--current", str(current), "--trinity-version", "0.5", "--json")
    assert status == 0
    assert " ".join(err.split()) == (
        f"solve cluster: note: --current {current} runs old on plans counted for Trinity 0.6.1, this run for Trinity "
        "0.5 (--trinity-version 0.5): whether it stays is judged by this run's release, not the one it runs on; "
        "rft-solver knows no rules of Trinity 0.6.1, which trinity_version refuses (it takes 0.5, 0.5.0, 0.5.1, "
        "0.5.2, 0.6 or 0.6.0 (or a tag of one, v0.5.2)): to judge it by its own release, run it on one of those and "
        f"give it as its trinity_version in {plain}")


def _comments(text: str) -> str:
    """The comment lines of a fragment `text`, joined into one line of words."""
    return " ".join(line.strip().lstrip("#").strip() for line in text.splitlines() if line.strip().startswith("#"))


def test_an_emit_dir_comment_names_the_jobs_own_release_key(cli: Cli, tmp_path: Path) -> None:
    # Before: "written for Trinity 0.5.2 (--trinity-version 0.5.2)" where the job's own key named it
    fleet = _fleet(tmp_path, new="")
    comment = ("written for Trinity 0.5.2 ({}), which refuses these flags under trainer itself; Trinity 0.6 on verl "
               "before 0.8 replaces the roles' offload flags")
    for run in ((), ("--trinity-version", "0.5.2")):
        out = tmp_path / f"out{len(run)}"
        status, _, err = cli("cluster", str(fleet), "--emit-dir", str(out), *run)
        assert status == 0, err
        old, new = (_comments((out / f"{job}.yaml").read_text(encoding="utf-8")) for job in ("old", "new"))
        assert comment.format("the job's trinity_version 0.5.2") in old
        # the other job's release is the run's, as the option gives it (none named: 0.6's, no such comment)
        assert (comment.format("--trinity-version 0.5.2") in new) if run else "written for Trinity" not in new


MIXTRAL = Path(__file__).parent / "data" / "hf-configs" / "Mixtral-8x7B-v0.1.json"


def test_a_cluster_lora_caution_names_the_jobs_lora_targets_key(cli: Cli, tmp_path: Path) -> None:
    # Before: "target_modules '.*\.w1' (--lora-targets)", an option solve cluster lacks
    fleet = tmp_path / "mix.yaml"
    fleet.write_text("pools:\n  - {name: h200, gpu: h200, gpus_per_node: 8, nodes: 2, host_ram_gb: 2000}\njobs:\n"
                     f"  - {{name: mix, model_config: {MIXTRAL}, max_model_len: 4096, lora_rank: 16, "
                     "lora_targets: '.*\\.w1', trinity_version: '0.5'}\n", encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--json", "--emit-dir", str(tmp_path / "out"))
    assert status == 0, err
    (placement,) = json.loads(out)["placements"]
    (caution,) = (words for code, words in zip(placement["plan"]["caution_codes"], placement["plan"]["cautions"],
                                               strict=True) if code == "lora-targets-one-transformers")
    assert caution.startswith(
        "target_modules '.*\\.w1' (the job's lora_targets), on Mixtral-8x7B-v0.1 (a mixture of experts, model_type "
        "mixtral), is taken on transformers 4's module names")
    assert "caution: target_modules '.*\\.w1' (the job's lora_targets), on Mixtral-8x7B-v0.1" in _comments(
        (tmp_path / "out" / "mix.yaml").read_text(encoding="utf-8"))


UNPLACED_FLEET = """\
pools:
  - {name: h100, gpu: h100, gpus_per_node: 6, nodes: 2, host_ram_gb: 900}
jobs:
  - {name: old, model: Qwen3-30B-A3B, max_model_len: 8192, trinity_version: v0.5.2}
  - {name: third, model: Qwen3-30B-A3B, max_model_len: 8192}
  - {name: fourth, model: Qwen3-30B-A3B, max_model_len: 8192, lora_rank: 8}
  - {name: new, model: Qwen3-30B-A3B, max_model_len: 8192%s}
"""
"""Four Qwen3-30B-A3B jobs on two nodes of 6 H100s: ``new`` (given the key ``%s``), last in the file, is left out for
want of room (a tie of priority goes to the jobs earlier in the file, s82). 900 GiB of host memory a node, not 700:
``third`` names no release, so each of its ranks loads the untied model at start-up (113.6 GiB each), and with 700
``fourth`` is left out too."""


def test_an_unplaced_job_names_its_own_release(cli: Cli, tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(UNPLACED_FLEET % ", trinity_version: v0.6.0", encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--json")
    assert status == 1, err  # a job left out
    placed = json.loads(out)
    assert [(left["job"], left["trinity_version"]) for left in placed["unplaced"]] == [("new", "0.6.0")]
    # JSON made before the key reads back, without it
    for left in placed["unplaced"]:
        del left["trinity_version"]
    assert ClusterResult.model_validate(placed).unplaced[0].trinity_version is None
    status, out, _ = cli("cluster", str(fleet))
    table = out.split("unplaced jobs: 1 of 4\n")[1]
    assert status == 1 and "┃ job ┃ Trinity ┃ reason " in table
    assert "│ new │ 0.6.0   │ left out in a tie with third" in table
    assert " ".join(UNPLACED_RELEASE_NOTE.split()) in " ".join(table.split())
    assert UNPLACED_RELEASE_NOTE == (
        "Trinity: the job's own release (its trinity_version), by whose counts it was left out; blank: none of its "
        "own (the run's, or where it runs now, the one its plan names)")
    # Without a release of its own: neither key nor column
    fleet.write_text(UNPLACED_FLEET % "", encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--json")
    assert status == 1 and [sorted(left) for left in json.loads(out)["unplaced"]] == [
        ["fits_with", "job", "pools", "reason", "reason_code", "reason_for_several"]]
    status, out, _ = cli("cluster", str(fleet))
    assert status == 1 and "Trinity" not in out.split("unplaced jobs: 1 of 4\n")[1]


def test_a_kept_yarns_note_names_each_key_write_added(cli: Cli, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # A model rotating 0.75 of each head, whose partial_rotary_factor the kept YaRN lacks too
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    model = _phi_partial(tmp_path, model_type="stablelm")
    config, written = tmp_path / "trinity.yaml", tmp_path / "written.yaml"
    config.write_text("model:\n  model_path: /nowhere/Phi-partial\n  max_model_len: 8192\n  rope_scaling:\n"
                      "    rope_type: yarn\n    factor: 4.0\n    original_max_position_embeddings: 2048\ncluster:\n"
                      "  node_num: 1\n  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 4\n",
                      encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--model-config", str(model), "--gpu", "h200", "--write",
                         str(written))
    assert status == 0, err
    assert ("    original_max_position_embeddings: 2048\n    partial_rotary_factor: 0.75\n    rope_theta: 10000\n"
            ) in written.read_text(encoding="utf-8")
    assert err.splitlines()[0].endswith(
        "; --write kept it (one that covers the length needs no change) and added what it lacked, Phi-partial's own "
        "partial_rotary_factor 0.75 and rope_theta 10000: Trinity 0.6's trainer on verl before 0.8 fails to build "
        "the model on a rope_scaling without it (transformers 5 finds no base)")
