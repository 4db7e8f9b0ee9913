"""A config whose model.model_path is a local checkpoint folder: the API's other-model refusal reads the folder by its
contents (a config.json the plan's model may have come from), the command line by its name unless --model-config
names that very file (s85's merge of apipatch and lastfix85 had dropped the command line's refusal there)."""
from pathlib import Path

from conftest import qwen3_8b_checkpoint


def _config(tmp_path: Path, folder: Path) -> Path:
    config = tmp_path / "trinity.yaml"
    config.write_text(f"model: {{model_path: {folder}, max_model_len: 8192}}\ncluster: {{node_num: 1, gpu_per_node: 8}}\n"
                      "explorer: {rollout_model: {engine_num: 2}}\n", encoding="utf-8")
    return config


def test_write_refuses_a_model_other_than_the_one_a_local_folder_is_named_after(cli, tmp_path: Path):
    folder = qwen3_8b_checkpoint(tmp_path / "models" / "Qwen3-8B")
    patched = tmp_path / "patched.yaml"
    status, out, err = cli("--from-config", str(_config(tmp_path, folder)), "--gpu", "a100", "--model", "0.6B",
                           "--write", str(patched))
    assert (status, out, patched.exists()) == (2, "", False)
    assert err.strip().endswith("--model names Qwen3-0.6B, but " + str(_config(tmp_path, folder)) + " trains Qwen3-8B "
                                "(model.model_path): --write would give it another model's plan; drop --model"), err


def test_write_takes_the_local_folders_own_config_json_as_model_config(cli, tmp_path: Path):
    folder = qwen3_8b_checkpoint(tmp_path / "models" / "Qwen3-8B")
    patched = tmp_path / "patched.yaml"
    status, _, err = cli("--from-config", str(_config(tmp_path, folder)), "--gpu", "a100", "--model-config",
                         str(folder / "config.json"), "--write", str(patched))
    assert (status, patched.exists()) == (0, True), err
