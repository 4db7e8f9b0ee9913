"""Small slips left by s77 (smallslips25): a smaller card's cell in words says its GPU has at most the memory of the
planned one (`SourceCell.words`, which `smaller_card_words` reuses), next to the table as a larger card's says at least;
``--from-config``'s verdict gives the ``smaller card`` note (`CurrentSettings.smaller_card`); each job's check command
names the model_config file the job gave (`Fleet.model_config_of`, by job); and `trinity_config`'s check command for a
model of one's own gives ``--model-config`` (the file passed, or PATH, said in the comment)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import solver
from solver.rules import SourceCell, TablesVerdict, smaller_card_words

CATALOG = solver.load_catalog()
CONFIGS = Path(__file__).parent / "data" / "hf-configs"
DEEPSEEK = CONFIGS / "DeepSeek-V2-Lite.json"
BIG = CATALOG.with_gpu_types([solver.described_gpu_type("big", memory_mib=102400)])  # --gpu big --gpu-memory 100GiB
SMALLER_NOTE = ("the H20-96GB table for 2 GPUs (its GPU has at most the memory of big) says 'SP=2' at 16384 "
                "(documented): the estimate is on the safe side there, and still decides, as a smaller card's cells "
                "vouch for no other GPU type")


def test_a_cell_of_another_gpu_type_says_how_its_memory_stands_next_to_its_table():
    cell = SourceCell(model="Qwen3-8B", gpus=2, max_model_len=16384, setting="SP=2", gpu="H20-96GB")
    assert cell.words("big", "Qwen3-8B", memory="at most") == (
        "the H20-96GB table for 2 GPUs (its GPU has at most the memory of big) says 'SP=2' at 16384")
    assert cell.words("H100-80GB", "Qwen3-4B") == (
        "the H20-96GB table for 2 GPUs (its GPU has at least the memory of H100-80GB) says 'SP=2' at 16384 for "
        "Qwen3-8B, of the same shape")
    # A cell that vouches for a plan is a same-memory GPU type's (a larger card's lends none): said so, not "at least".
    assert cell.words("H20-like", "Qwen3-8B", memory="the same") == (
        "the H20-96GB table for 2 GPUs (its GPU has the same memory as H20-like) says 'SP=2' at 16384")
    assert cell.words("", "Qwen3-8B") == "the H20-96GB table for 2 GPUs says 'SP=2' at 16384"  # no GPU to compare
    own = cell.model_copy(update={"gpu": None})
    assert own.words("big", memory="at most") == "the big table for 2 GPUs says 'SP=2' at 16384"  # its own: none said


def test_the_smaller_card_note_is_the_cell_s_words_for_a_smaller_card():
    verdict = TablesVerdict(trains=True, evidence="documented", source=SourceCell(
        model="Qwen3-8B", gpus=2, max_model_len=16384, setting="SP=2", gpu="H20-96GB"))
    assert smaller_card_words(verdict, "big", "Qwen3-8B") == SMALLER_NOTE
    answer = solver.memory_answer("Qwen3-8B", "big", 2, 16384, sp=2, catalog=BIG)
    assert f"smaller card: {SMALLER_NOTE}" in solver.memory_text(answer, BIG, width=400).splitlines()


def test_fleet_keeps_the_model_config_file_of_each_job(tmp_path: Path):
    for folder in ("m1", "m2"):  # two copies of one config.json: one model (ds), two files
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "ds.json").write_text(DEEPSEEK.read_text(encoding="utf-8"), encoding="utf-8")
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: a, gpu: h100, nodes: 2, gpus_per_node: 8}\njobs:\n"
                     "  - {name: one, model_config: m1/ds.json, max_model_len: 8192}\n"
                     "  - {name: two, model_config: m2/ds.json, max_model_len: 8192}\n", encoding="utf-8")
    loaded = solver.load_fleet(fleet)
    assert [job.model for job in loaded.jobs] == ["ds", "ds"]
    # test_mutants29_s76 checks each job's --emit-dir check command names its own
    assert dict(loaded.model_config_of) == {"one": tmp_path / "m1" / "ds.json", "two": tmp_path / "m2" / "ds.json"}


def test_a_catalogue_named_job_gets_no_other_job_s_model_config_file(tmp_path: Path):
    # A config.json that names Qwen3-8B with its shape is that model: the job naming it by `model` gave no file.
    (tmp_path / "Qwen3-8B").mkdir()
    (tmp_path / "Qwen3-8B" / "config.json").write_text((CONFIGS / "Qwen3-8B.json").read_text(encoding="utf-8"),
                                                       encoding="utf-8")
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: a, gpu: a100, nodes: 2, gpus_per_node: 8}\njobs:\n"
                     "  - {name: named, model: 8B, max_model_len: 8192}\n"
                     "  - {name: given, model_config: Qwen3-8B, max_model_len: 8192}\n", encoding="utf-8")
    loaded = solver.load_fleet(fleet)
    assert [job.model for job in loaded.jobs] == ["Qwen3-8B", "Qwen3-8B"]
    assert dict(loaded.model_config_of) == {"given": tmp_path / "Qwen3-8B" / "config.json"}
    configs = solver.placement_configs(solver.place(loaded), loaded)
    checks = {job: next(line for line in text.splitlines() if "--check" in line) for job, text in configs.items()}
    assert "--model-config" not in checks["named"]
    assert f"--model-config {tmp_path}/Qwen3-8B/config.json" in checks["given"]


MY_MODEL = Path(__file__).parent.parent / "docs" / "examples" / "my-model" / "config.json"


def _check_lines(fragment: str) -> list[str]:
    lines = fragment.splitlines()
    at = next(index for index, line in enumerate(lines) if line.startswith("# To check your config"))
    return lines[at:at + 3]


def test_trinity_config_of_one_s_own_model_gives_its_config_json_or_says_what_to_put_there(cli):
    catalog = CATALOG.with_model(solver.load_model_config(MY_MODEL))
    (answer,) = solver.plan("Mistral-7B-v0.1", gpu="h20", max_model_len=65536, budget_gpus=6, catalog=catalog)
    command = ("#   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve --from-config CONFIG --check --gpu H20-96GB "
               "--model-config {} --critic none")
    assert _check_lines(solver.trinity_config(answer, catalog))[:3] == [
        "# To check your config once these keys are in it (CONFIG: its file; MODEL_CONFIG: your model's",
        "# config.json), as this plan was made:", command.format("MODEL_CONFIG")]
    given = solver.trinity_config(answer, catalog, model_config=MY_MODEL)
    assert _check_lines(given)[:2] == [
        "# To check your config once these keys are in it (CONFIG: its file), as this plan was made:",
        command.format(MY_MODEL)]
    # as --emit trinity prints it with --model-config
    status, out, _ = cli("--model-config", str(MY_MODEL), "--gpu", "h20", "--len", "64k", "--gpus", "6", "--emit",
                         "trinity")
    assert status == 0 and _check_lines(out)[:2] == _check_lines(given)[:2]


def test_trinity_config_of_a_shipped_model_gives_no_model_config_unless_asked():
    (answer,) = solver.plan("8B", gpu="h100", max_model_len=8192, budget_gpus=8)
    assert "--model-config" not in solver.trinity_config(answer)
    mine = CONFIGS / "Qwen3-8B.json"  # a file that is there, of the model's shape (review77c: read, not taken blind)
    assert f"--model-config {mine} --critic none" in solver.trinity_config(answer, model_config=mine)
    with pytest.raises(solver.QueryError, match="^model_config must be a non-empty path, got ''$"):
        solver.trinity_config(answer, model_config="")


CONFIG = ("mode: train\nmodel:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 16384\ncluster:\n  node_num: 1\n"
          "  gpu_per_node: 2\nbuffer:\n  train_batch_size: 16\ntrainer:\n  ulysses_sequence_parallel_size: 2\n")
H20_CELL = {"trains": True, "evidence": "documented",
            "source": {"model": "Qwen3-8B", "gpus": 2, "max_model_len": 16384, "setting": "SP=2", "gpu": "H20-96GB"}}


def _checked(cli, tmp_path: Path, memory: str, critic: str = "none") -> tuple[int, dict[str, object]]:
    config = tmp_path / "trinity.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "big", "--gpu-memory", memory, "--critic", critic,
                         "--check", "--json")
    (answer,) = json.loads(out)
    return status, answer["current"]


def test_from_config_s_verdict_gives_the_smaller_card_note_and_keeps_the_estimate_s_exit(cli, tmp_path: Path):
    status, current = _checked(cli, tmp_path, "100GiB")
    assert (status, current["trains"], current["predicted"], current["smaller_card"]) == (
        1, False, [92.5, 89.1], H20_CELL)
    assert current["verdict"] == (
        "trinity.yaml runs SP=2 on 2 trainer GPUs at 16384 tokens (Env off, PYTORCH_CUDA_ALLOC_CONF unset in this "
        "shell): nothing in the tables and the memory model's estimates says it trains (the memory model predicts "
        f"92.5 GiB per GPU, of 89.1 usable), though {SMALLER_NOTE}. The best plan follows.")


def test_from_config_gives_no_note_where_the_estimate_fits_or_no_smaller_card_s_table_trains_it(cli, tmp_path: Path):
    status, fits = _checked(cli, tmp_path, "140GiB")  # the estimate fits: it trains
    assert (status, fits["trains"], fits["smaller_card"]) == (0, True, None)
    # 1 MiB less than the H20's: none of the GPU types with no more memory has a table that trains it
    status, less = _checked(cli, tmp_path, "97870MiB")
    assert (status, less["trains"], less["smaller_card"]) == (1, False, None)
    assert "though" not in less["verdict"]
    status, critic = _checked(cli, tmp_path, "100GiB", "resident")  # none of its own would, with a critic
    assert (status, critic["trains"], critic["smaller_card"]) == (1, False, None)
