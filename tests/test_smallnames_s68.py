"""GPU names users type (session 68): a form factor glued onto any GPU's name (``l40spcie``, ``mi300xpcie``) names
it as the hyphenated one does, in --gpu, a cluster file's pools and a cells file alike (`gpu_name_forms`); a memory
size alone (``96gb``) is answered for every size in the catalogue, naming each GPU type with it; a name with two
adjacent characters swapped (``h02``) gets a guess where one name is meant, none where two are as close; and
``solve --json``, ``--emit trinity``, `trinity_settings` and `placement_settings` load no ruamel."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from ruamel.yaml import YAML

from solver.tables import load_catalog
from solver.tables.reading import load_gpu_type
from solver.tables.text import guessed_name, normalise
from solver.trinity.interpolation import decode_scalar

Cli = Callable[..., tuple[int, str, str]]

CATALOG = load_catalog()
GLUED = [(f"{known}{factor}", gpu.name) for gpu in CATALOG.gpu_types for known in (gpu.name, *gpu.aliases)
         if normalise(known)[-1].isdigit() or normalise(known)[-2:-1].isdigit()
         for factor in ("pcie", "sxm", "PCIe")]
"""Every catalogue name or alias that ends in its model's number, or one letter after it, with a form factor glued
on (``l40spcie``, ``mi300xsxm``, ``a100-40gpcie``): the GPU type it names."""


def _run(cli: Cli, name: str, fleet: Path | None = None) -> tuple[int, str, str]:
    """`solve --gpu NAME`, or, given a `fleet` file to write, `solve cluster FLEET` with a pool of GPU `name`."""
    if fleet is None:
        return cli("--gpu", name, "--model", "8B", "--len", "8k")
    fleet.write_text(yaml.safe_dump({"pools": [{"name": "p", "gpu": name, "nodes": 1, "gpus_per_node": 8}],
                                     "jobs": [{"name": "j", "model": "Qwen3-8B", "max_model_len": 8192}]}),
                     encoding="utf-8")
    return cli("cluster", str(fleet))


def _unknown_gpu_error(cli: Cli, name: str, guess: str, fleet: Path | None = None) -> str:
    """The one line --gpu's (or, given a `fleet`, a pool's) error gives for `name`, with `guess` (`` (did you mean
    X?)``) before the accepted names, taken from the error for a name close to none."""
    status, _, err = _run(cli, "zzz", fleet)
    assert status == 2 and "'zzz';" in err
    return err.replace("'zzz'", f"{name!r}{guess}")


@pytest.mark.parametrize(("written", "taken"), GLUED)
def test_a_form_factor_glued_onto_any_catalogue_name_names_its_gpu_type(written: str, taken: str):
    # Before: l40spcie (the L40S after its letter, not its number) was refused as unknown while l40s-pcie was taken.
    assert CATALOG.gpu(written).name == CATALOG.gpu(written.replace("pcie", "-pcie").replace("sxm", "-sxm")).name
    assert CATALOG.gpu(written).name == CATALOG.gpu(written.upper()).name == taken
    assert CATALOG.meant_gpu_type(written) is None  # a cells file's name the catalogue has, no guess


def test_glued_names_cover_the_cards_named_by_a_letter_after_their_number():
    assert {"l40spcie", "mi300xpcie", "mi325xpcie"} <= {written.lower() for written, _ in GLUED}


@pytest.mark.parametrize("written", ["l40spcie", "L40S PCIe", "NVIDIA L40SPCIE"])
def test_l40spcie_names_the_l40s_in_a_pool_and_a_cells_file_too(written: str, cli: Cli, tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({"pools": [{"name": "p", "gpu": written, "nodes": 1, "gpus_per_node": 8}],
                                     "jobs": [{"name": "j", "model": "Qwen3-8B", "max_model_len": 8192}]}),
                     encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--json")
    assert (status, err) == (0, "") and [p["gpu"] for p in json.loads(out)["placements"]] == ["L40S-48GB"]
    cells = tmp_path / "cells.yaml"
    cells.write_text(f"gpu: {written}\nmemory_gb: 48\nsource: ours\ntables:\n  - gpus: 4\n    section: ours\n"
                     "    models: [Qwen3-8B]\n"
                     "    rows:\n      - {max_model_len: 8192, cells: {Qwen3-8B: vanilla}}\n", encoding="utf-8")
    assert load_gpu_type(cells, CATALOG.models, CATALOG.gpu_types).name == "L40S-48GB"


@pytest.mark.parametrize(("name", "guess"), [
    ("96gb", " (did you mean H20-96GB or GH200-96GB?)"), ("141gb", " (did you mean H200-141GB?)"),
    ("80GB", " (did you mean A100-80GB, A800-80GB, H100-80GB or H800-80GB?)"),
    ("24 GB", " (did you mean A10-24GB, L4-24GB or RTX-4090-24GB?)"), ("192g", " (did you mean MI300X?)"),
    ("64gb", ""),  # no catalogue GPU has 64GB
    ("16gb", ""),  # only GPU types without bf16 (V100, T4, P100) have 16GB: none to name
])
def test_a_memory_size_alone_names_every_gpu_type_with_it_in_one_line(name: str, guess: str, cli: Cli,
                                                                      tmp_path: Path):
    # Before: 96gb got no guess (two cards end with it) while 141gb did (one does).
    status, out, err = _run(cli, name)
    assert (status, out, err) == (2, "", _unknown_gpu_error(cli, name, guess)) and err.count("\n") == 1
    assert err.startswith(f"solve: error: unknown GPU {name!r}{guess}; accepted: A100-40GB/80GB, ")
    fleet = tmp_path / "fleet.yaml"
    status, out, err = _run(cli, name, fleet)
    assert (status, out, err) == (2, "", _unknown_gpu_error(cli, name, guess, fleet)) and err.count("\n") == 1
    assert err.startswith(f"solve cluster: error: {fleet}: pool p, gpu: unknown GPU {name!r}{guess}; accepted: ")


@pytest.mark.parametrize("size", sorted({gpu.memory_gb for gpu in CATALOG.gpu_types}))
def test_every_memory_size_of_the_catalogue_is_answered_with_its_gpu_types(size: int):
    named = [gpu.name for gpu in CATALOG.gpu_types if gpu.memory_gb == size]
    words = CATALOG.meant_gpu_type(f"{size}gb")
    assert words is not None and words.replace(" or ", ", ").split(", ") == named


@pytest.mark.parametrize(("name", "guess"), [
    ("h02", " (did you mean H20-96GB?)"), ("H02-96GB", " (did you mean H20-96GB?)"),
    ("a010", " (did you mean A100-80GB?)"), ("rtx-4009", " (did you mean RTX-4090-24GB?)"),
])
def test_a_gpu_name_with_two_characters_swapped_gets_the_one_it_was_meant_to_be(name: str, guess: str, cli: Cli):
    # Before: h02 got no guess.
    status, out, err = _run(cli, name)
    assert (status, out, err) == (2, "", _unknown_gpu_error(cli, name, guess)) and err.count("\n") == 1
    assert CATALOG.meant_gpu_type(name) == (guess[len(" (did you mean "):-2] or None)


def test_a_model_name_with_two_characters_swapped_gets_a_guess_but_not_its_size_swapped(cli: Cli):
    status, _, err = cli("--model", "qwne3-8b", "--gpu", "h20", "--len", "8k")
    assert status == 2 and err.startswith("solve: error: unknown model 'qwne3-8b' (did you mean Qwen3-8B?); accepted: ")
    status, _, err = cli("--model", "qwen3-41b", "--gpu", "h20", "--len", "8k")  # 41B is a size, not a slip of 14B
    assert status == 2 and err.startswith("solve: error: unknown model 'qwen3-41b'; accepted: ")


def test_a_name_two_known_names_are_one_swap_from_gets_no_guess():
    assert guessed_name("h02", {"h20": "H20-96GB", "h100": "H100-80GB"}) == "H20-96GB"
    assert guessed_name("h02", {"h20": "H20-96GB", "0h2": "Other"}) is None


RUAMEL_LOADED = """\
import io, sys, contextlib
import solver
from solver.cli import main
answer = solver.plan("8B", gpu="h100", max_model_len=32768, top=1)[0]
solver.trinity_settings(answer)
fleet = "docs/examples/fleet.yaml"
solver.placement_settings(solver.place(fleet), fleet)
with contextlib.redirect_stdout(io.StringIO()):
    main(["--model", "8B", "--gpu", "h100", "--len", "128k", "--json"])
print("ruamel" in sys.modules)
"""


def test_settings_as_data_load_no_ruamel():
    # Before: trinity_settings, placement_settings and solve --json (YaRN's rope_type: yarn) loaded it (~40 ms).
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run([sys.executable, "-c", RUAMEL_LOADED], capture_output=True, text=True, timeout=120,
                            check=False, cwd=root)
    assert (result.returncode, result.stdout) == (0, "False\n"), result.stderr


@given(st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,8}", fullmatch=True)
       | st.sampled_from(["True", "TRUE", "tRUE", "null", "Null", "NULL", "yes", "on", "inf", "nan", "e5", "x1e5"]))
def test_a_plain_word_decodes_as_ruamel_reads_it(word: str):
    # decode_scalar reads a plain word as itself without ruamel: what ruamel would read (null stays text).
    read = YAML(typ="safe", pure=True).load(word)
    assert decode_scalar(word) == (word if read is None else read)
