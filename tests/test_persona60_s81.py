"""Session 81's persona60, a researcher beyond the tables (Qwen2.5-7B-Instruct and Llama-3.1-8B on 8 H100s and 4
L40Ss, a local checkpoint folder holding only its config.json): ``--model`` given that folder (or its config.json),
which it reads no file of, is told the ``--model-config`` option with the path itself, quoted as a shell word, by
``solve``, ``solve memory`` and ``solve map``, and a fleet job's ``model`` such a path beside the fleet file is told
``model_config: PATH`` (`solver.tables.own_model_option`); a folder without a config.json, or a name that is no path,
keeps ``--model-config PATH`` (``model_config``); the option the message names plans that checkpoint (named by its
config's ``_name_or_path``)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

Cli = Callable[..., tuple[int, str, str]]
EXAMPLE_CONFIG = Path(__file__).resolve().parents[1] / "docs" / "examples" / "my-model" / "config.json"
ACCEPTED = ("accepted: Qwen3-0.6B/1.7B/8B/14B(-Base), Qwen3-4B(-Base|-Instruct-2507|-Thinking-2507), Qwen3-32B, "
            "Qwen3-30B-A3B(-Base|-Instruct-2507|-Thinking-2507), Qwen2.5-7B/14B/32B(-Instruct), Llama-3.1-8B/70B; "
            "short forms such as 4B for Qwen3-4B too; or, for a model of your own, its Hugging Face config.json: ")


def _checkpoint(folder: Path) -> Path:
    """`folder` made a checkpoint folder holding only a config.json (the docs' example model's)."""
    folder.mkdir(parents=True)
    shutil.copy(EXAMPLE_CONFIG, folder / "config.json")
    return folder


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`tmp_path`, made the working directory, so that the paths given are relative, as a user types them."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("command", [(), ("memory", "--gpus", "4"), ("map",)])
def test_model_given_a_checkpoint_folder_is_told_model_config_with_that_folder(cli: Cli, in_tmp: Path,
                                                                               command: tuple[str, ...]) -> None:
    _checkpoint(in_tmp / "ckpt" / "step-100")
    status, out, err = cli(*command, "--model", "ckpt/step-100", "--gpu", "h100", *(("--len", "8k") if command
                                                                                    != ("map",) else ()))
    prefix = f"solve {command[0]}" if command else "solve"
    assert (status, out) == (2, "")
    assert err == (f"{prefix}: error: unknown model 'ckpt/step-100'; {ACCEPTED}--model-config ckpt/step-100 (the "
                   "folder holds one; --model reads no file)\n")


def test_model_given_a_config_json_file_or_a_spaced_folder(cli: Cli, in_tmp: Path) -> None:
    _checkpoint(in_tmp / "ckpt" / "step-100")
    status, _, err = cli("--model", "ckpt/step-100/config.json", "--gpu", "h100", "--len", "8k")
    assert status == 2
    assert err == (f"solve: error: unknown model 'ckpt/step-100/config.json'; {ACCEPTED}--model-config "
                   "ckpt/step-100/config.json (--model reads no file)\n")
    _checkpoint(in_tmp / "my ckpt")
    status, _, err = cli("--model", "my ckpt", "--gpu", "h100", "--len", "8k")
    assert status == 2
    assert err == (f"solve: error: unknown model 'my ckpt'; {ACCEPTED}--model-config 'my ckpt' (the "
                   "folder holds one; --model reads no file)\n")


@pytest.mark.parametrize("name", ["ckpt/empty", "ckpt/missing", "Mistral-7B"])
def test_no_config_json_there_keeps_the_generic_option(cli: Cli, in_tmp: Path, name: str) -> None:
    (in_tmp / "ckpt" / "empty").mkdir(parents=True)
    status, _, err = cli("--model", name, "--gpu", "h100", "--len", "8k")
    assert (status, err) == (2, f"solve: error: unknown model '{name}'; {ACCEPTED}--model-config PATH\n")


def test_the_named_option_plans_the_checkpoint(cli: Cli, in_tmp: Path) -> None:
    _checkpoint(in_tmp / "ckpt" / "step-100")
    status, out, _ = cli("--model-config", "ckpt/step-100", "--gpu", "h100", "--gpus", "8", "--len", "8k")
    assert status == 0
    assert out.splitlines()[0] == "H100-80GB · Mistral-7B-v0.1 · cheapest plan for 8192 tokens within 8 GPUs: optimal"


FLEET = """\
pools:
  - {name: h100s, gpu: h100, gpus_per_node: 8, nodes: 1}
jobs:
  - {name: grpo7b, model: MODEL, max_model_len: 16384}
"""


@pytest.mark.parametrize(("model", "option"), [
    ("ckpt/step-100", "model_config: ckpt/step-100 (the folder holds one; model reads no file)"),
    ("ckpt/step-100/config.json", "model_config: ckpt/step-100/config.json (model reads no file)"),
    ("Mistral-7B", "model_config"),
])
def test_a_fleet_job_given_a_checkpoint_folder_as_its_model(cli: Cli, in_tmp: Path, model: str, option: str) -> None:
    _checkpoint(in_tmp / "fleets" / "ckpt" / "step-100")
    (in_tmp / "fleets" / "fleet.yaml").write_text(FLEET.replace("MODEL", model), encoding="utf-8")
    status, out, err = cli("cluster", "fleets/fleet.yaml")
    assert (status, out) == (2, "")
    assert err == (f"solve cluster: error: fleets/fleet.yaml: job grpo7b, model: unknown model '{model}'; {ACCEPTED}"
                   f"{option}\n")


def test_a_fleet_checkpoint_is_looked_for_beside_the_file_not_the_working_directory(cli: Cli, in_tmp: Path) -> None:
    _checkpoint(in_tmp / "ckpt" / "step-100")
    (in_tmp / "fleets").mkdir()
    (in_tmp / "fleets" / "fleet.yaml").write_text(FLEET.replace("MODEL", "ckpt/step-100"), encoding="utf-8")
    status, _, err = cli("cluster", "fleets/fleet.yaml")
    assert status == 2
    assert err.endswith(f"{ACCEPTED}model_config\n")
