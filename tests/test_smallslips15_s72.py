"""Small word slips (session 72, helper smallslips15): a config.json's values quoted as JSON spells them; a
``--current`` file's boolean schema_version refused; a fragment's missing model_path told with a neutral example; the
``max_model_len`` row naming the config's own YaRN where the apply block keeps it; the verdict saying the allocator
variable is unset where it is, not that Env was read from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solver.results import YARN_KEPT

LLAMA = Path(__file__).parent / "data" / "hf-configs" / "Llama-3.2-1B.json"
EXAMPLES = Path(__file__).parent.parent / "docs" / "examples"


@pytest.mark.parametrize(("edit", "problem"), [
    ({"num_hidden_layers": True}, "num_hidden_layers: expected a whole number from 1 to 16384, got true"),
    ({"peft_type": None}, ("a LoRA/PEFT adapter's config (peft_type null), not a model's: give its base model's "
                           "config.json, whose shape the adapter trains")),
], ids=["number-true", "adapter-null"])
def test_a_config_jsons_value_is_quoted_as_json_spells_it(cli, tmp_path: Path, edit: dict[str, object],
                                                          problem: str):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({**json.loads(LLAMA.read_text(encoding="utf-8")), **edit}), encoding="utf-8")
    assert cli("--model-config", str(config), "--gpu", "h100", "--len", "8192") == (
        2, "", f"solve: error: --model-config {config}: {problem}\n")


def test_a_current_files_boolean_schema_version_is_refused(cli, tmp_path: Path):
    current = tmp_path / "now.json"
    current.write_text(json.dumps({"schema_version": True, "placements": []}), encoding="utf-8")
    assert cli("cluster", str(EXAMPLES / "fleet.yaml"), "--current", str(current)) == (
        2, "", (f"solve cluster: error: --current {current}: schema_version is true: this release of rft-solver "
                "reads 1 (place the fleet again with this release's solve cluster --json)\n"))


def test_a_32b_fragments_missing_model_path_names_no_other_model(cli, tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n- {name: a, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}\njobs:\n"
                     "- {name: b, model: 32B, max_model_len: 8192, rollout_gpus: 2}\n", encoding="utf-8")
    assert cli("cluster", str(fleet), "--emit-dir", str(tmp_path / "out"))[0] == 0
    fragment = tmp_path / "out" / "b.yaml"
    assert cli("--from-config", str(fragment), "--check", "--gpu", "A100-80GB") == (
        2, "", (f"solve: error: --from-config {fragment}: missing model.model_path: set it to the model, by its "
                "Hugging Face name (organisation/model) or a local checkpoint's folder (a fragment that --out or "
                "solve cluster --emit-dir wrote leaves it to your config: check the config you merge the fragment "
                "into)\n"))


CARDS = ("model:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: 131072\n  rope_scaling:\n    rope_type: yarn\n"
         "    factor: 4.0\n    original_max_position_embeddings: 32768\ncluster:\n  node_num: 1\n  gpu_per_node: 8\n"
         "explorer:\n  rollout_model:\n    engine_num: 4\n")
"""Qwen's model cards' YaRN (factor 4 over 32768, which reaches 131072) at 131072."""


def test_the_length_row_names_the_configs_kept_yarn_not_the_guides(cli, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    config = tmp_path / "cards.yaml"
    config.write_text(CARDS, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h200")
    lines = out.splitlines()
    assert status == 0
    assert [line for line in lines if line.startswith(("max_model_len ", "# model.rope_scaling"))] == [
        "max_model_len  131072 (YaRN rope scaling, cards.yaml's factor 4.0 over 32768, which stays)",
        f"# model.rope_scaling: cards.yaml's, as --write keeps it ({YARN_KEPT}), with the rope_theta it lacks added:"]
    # Factor 2 over 32768 falls short: the guide's factor is applied, and named.
    config.write_text(CARDS.replace("factor: 4.0", "factor: 2.0"), encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h200")
    assert "max_model_len  131072 (YaRN rope scaling, factor 3.2)" in out.splitlines()


@pytest.mark.parametrize(("alloc_conf", "said", "is_set"), [
    (None, "Env off, PYTORCH_CUDA_ALLOC_CONF unset in this shell", False),
    ("expandable_segments:False", "Env off, read from this shell's PYTORCH_CUDA_ALLOC_CONF", True),
], ids=["unset", "set-off"])
def test_the_verdict_says_when_the_allocator_variable_is_unset(cli, monkeypatch: pytest.MonkeyPatch,
                                                               alloc_conf: str | None, said: str, is_set: bool):
    if alloc_conf is not None:
        monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", alloc_conf)
    status, out, err = cli("--from-config", str(EXAMPLES / "trinity.yaml"), "--gpu", "A100-80GB", "--json")
    [current] = [answer["current"] for answer in json.loads(out)]
    assert (status, err, current["env_variable"], current["env_variable_set"]) == (
        0, "", "PYTORCH_CUDA_ALLOC_CONF", is_set)
    assert current["verdict"].startswith(f"trinity.yaml runs vanilla on 6 trainer GPUs at 32768 tokens ({said}): ")
