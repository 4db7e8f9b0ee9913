"""A developer integrating rft-solver into a Python tool, for models the catalogue lacks (Gemma-2-9B, Mistral-7B) on
MI300X and H200, through the API and the command's --json alike (persona93d, s93): a config.json in Hugging Face's
cache (``models--google--gemma-2-9b/snapshots/<commit>``) names its model by its repository, not by the commit, as
a saved checkpoint's ``_name_or_path`` and a Trinity config's ``model.model_path`` in the cache do; and
`solver.check_config` reads the config.json that a Trinity config's local ``model.model_path`` holds, as ``solve
--from-config`` does, giving the command's JSON byte for byte where it refused the model before."""

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.render import answers_json
from solver.rules import COMMAND_OPTIONS
from solver.trinity import read_trinity_config

ROOT = Path(__file__).resolve().parent
GEMMA = ROOT / "data" / "hf-configs" / "gemma-2-9b.json"
QWEN3_8B = ROOT / "data" / "hf-configs" / "Qwen3-8B.json"
COMMIT = "33c193028431c2fde6c6e51f29e6f17b60cbfac6"
Cli = Callable[..., tuple[int, str, str]]


def _cached(hub: Path, repository: str, config: Path) -> Path:
    """`config` as Hugging Face's cache holds `repository`'s (``models--org--name/snapshots/<commit>``): the folder."""
    snapshot = hub / f"models--{repository.replace('/', '--')}" / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    shutil.copy(config, snapshot / "config.json")
    return snapshot


@pytest.mark.parametrize("path, name", [
    ("/root/.cache/huggingface/hub/models--google--gemma-2-9b/snapshots/" + COMMIT, "gemma-2-9b"),
    ("/root/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/" + COMMIT + "/", "Qwen3-8B"),
    ("models--gpt2/snapshots/" + COMMIT, "gpt2"),  # a repository without an organisation
    ("C:\\hf\\hub\\models--mistralai--Mistral-7B-v0.3\\snapshots\\" + COMMIT, "Mistral-7B-v0.3"),
    ("/ckpt/models--google--gemma-2-9b/snapshots", "snapshots"),  # no commit: not a snapshot
    ("/ckpt/snapshots/" + COMMIT, COMMIT),  # no repository's folder: the last part, as before
    # mutants59: a folder within a snapshot is its own last part; a folder whose name only ends in models-- is none
    ("/hub/models--Qwen--Qwen3-8B/snapshots/" + COMMIT + "/checkpoint-100", "checkpoint-100"),
    ("/ckpt/my-models--Qwen--Qwen3-8B/snapshots/" + COMMIT, COMMIT),
    ("Qwen/Qwen3-8B", "Qwen3-8B"),
])
def test_a_snapshot_in_hugging_faces_cache_is_named_by_its_repository(path: str, name: str):
    assert solver.tables.model_name_from_path(path) == name


def test_a_config_json_in_hugging_faces_cache_names_its_model_by_the_repository(cli: Cli, tmp_path: Path):
    gemma = _cached(tmp_path / "hub", "google/gemma-2-9b", GEMMA)
    assert solver.load_model_config(gemma).name == "gemma-2-9b"
    assert solver.load_model_config(gemma / "config.json").name == "gemma-2-9b"
    status, out, err = cli("--model-config", str(gemma), "--gpu", "h200", "--len", "8k", "--json")
    assert status == 0 and json.loads(out)[0]["model"] == "gemma-2-9b", err
    # A catalogue model's config.json in the cache is that model, named so, with its tables.
    qwen = _cached(tmp_path / "hub", "Qwen/Qwen3-8B", QWEN3_8B)
    status, out, err = cli("--model-config", str(qwen), "--gpu", "h20", "--gpus", "4", "--len", "32k", "--json")
    (answer,) = json.loads(out)
    assert (status, answer["model"], answer["plans"][0]["evidence"]) == (0, "Qwen3-8B", "documented"), err
    # A checkpoint saved from a model loaded out of the cache names that snapshot in its _name_or_path.
    saved = tmp_path / "global_step_100"
    saved.mkdir()
    (saved / "config.json").write_text(json.dumps({**json.loads(GEMMA.read_text(encoding="utf-8")),
                                                   "_name_or_path": str(gemma)}), encoding="utf-8")
    assert solver.load_model_config(saved).name == "gemma-2-9b"


def test_a_trinity_configs_model_path_in_hugging_faces_cache_names_the_repository(cli: Cli, tmp_path: Path):
    # Not on this machine (planned elsewhere): the name decides, as for a Hugging Face id.
    snapshot = f"/root/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/{COMMIT}"
    text = (f"model: {{model_path: {snapshot}, max_model_len: 32768}}\ncluster: {{node_num: 1, gpu_per_node: 8}}\n"
            "explorer: {rollout_model: {engine_num: 2}}\n")
    assert read_trinity_config(text, "trinity.yaml", {}).model == "Qwen3-8B"
    answers = []
    for model_path in (snapshot, "Qwen/Qwen3-8B"):
        config = tmp_path / "trinity.yaml"
        config.write_text(text.replace(snapshot, model_path), encoding="utf-8")
        status, out, err = cli("--from-config", str(config), "--gpu", "h20", "--json")
        assert status == 0, err
        answers.append(json.loads(out))
    assert answers[0] == answers[1] and answers[0][0]["model"] == "Qwen3-8B"


def test_check_config_reads_a_local_model_paths_config_json_as_from_config_does(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    gemma = tmp_path / "gemma-2-9b"
    gemma.mkdir()
    shutil.copy(GEMMA, gemma / "config.json")
    config = tmp_path / "trinity.yaml"
    config.write_text(f"model: {{model_path: {gemma}, max_model_len: 8192}}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 2}}\n",
                      encoding="utf-8")
    judged = solver.check_config(config, gpu=["h200", "mi300x"], option_names=COMMAND_OPTIONS)
    assert [answer.model for answer in judged.answers] == ["gemma-2-9b", "gemma-2-9b"]
    status, out, err = cli("--from-config", str(config), "--gpu", "h200,mi300x", "--check", "--json")
    assert (status, answers_json(judged.answers) + "\n") == (0 if judged.passes else 1, out), err
    # A model_path relative to the working directory, as Trinity reads it; model= names the model instead.
    config.write_text(config.read_text(encoding="utf-8").replace(str(gemma), "./gemma-2-9b"), encoding="utf-8")
    assert solver.check_config(config, gpu="h200").answers[0].model == "gemma-2-9b"
    assert solver.check_config(config, gpu="h200", model="8B").answers[0].model == "Qwen3-8B"
    # One it cannot read is refused in one line naming the file, as the command refuses it.
    (gemma / "config.json").write_text("{", encoding="utf-8")
    with pytest.raises(solver.TableError, match=r"^gemma-2-9b/config\.json: not JSON: "):
        solver.check_config(config, gpu="h200")
    assert cli("--from-config", str(config), "--gpu", "h200", "--check")[2].startswith(
        "solve: error: gemma-2-9b/config.json: not JSON: ")


def test_check_config_plans_a_local_model_of_another_shape_under_a_catalogue_name_as_its_own(tmp_path: Path):
    # mutants59: a folder Qwen3-8B whose config.json has 40 layers is its own model, renamed as the catalogue adds it
    # (not the catalogue's Qwen3-8B, whose 36 layers its name names), as --from-config plans it
    folder = tmp_path / "Qwen3-8B"
    folder.mkdir()
    shape = {**json.loads(QWEN3_8B.read_text(encoding="utf-8")), "num_hidden_layers": 40}
    shape.pop("_name_or_path", None)
    (folder / "config.json").write_text(json.dumps(shape), encoding="utf-8")
    config = tmp_path / "trinity.yaml"
    config.write_text(f"model: {{model_path: {folder}, max_model_len: 8192}}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 2}}\n",
                      encoding="utf-8")
    assert [answer.model for answer in solver.check_config(config, gpu="h100").answers] == ["Qwen3-8B (config shape)"]


def test_a_local_config_json_of_another_kind_is_told_what_reads_it_in_the_callers_words(cli: Cli, tmp_path: Path):
    # mutants59: a cluster file saved as the model's config.json, named as the API's or the command's words name it
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "config.json").write_text("pools: [{name: a, gpu: h100, nodes: 1, gpus_per_node: 8}]\n"
                                        "jobs: [{name: j, model: 8B, max_model_len: 8192}]\n", encoding="utf-8")
    config = tmp_path / "trinity.yaml"
    config.write_text(f"model: {{model_path: {folder}, max_model_len: 8192}}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\n", encoding="utf-8")
    refusal = f"{folder / 'config.json'}: not JSON: Expecting value (line 1) (this looks like a fleet file, for "
    with pytest.raises(solver.TableError, match=re.escape(refusal + "solver.place or solver.load_fleet)")):
        solver.check_config(config, gpu="h100")
    with pytest.raises(solver.TableError, match=re.escape(refusal + "solve cluster)")):
        solver.check_config(config, gpu="h100", option_names=COMMAND_OPTIONS)
    assert cli("--from-config", str(config), "--gpu", "h100", "--check") == (
        2, "", f"solve: error: {refusal}solve cluster)\n")
