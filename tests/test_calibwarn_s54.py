"""A calibration that says when its fit or its cells file looks wrong: fitted multipliers outside the physical range
of docs/memory.md's derivation (``unphysical``, with codes, in text and JSON), and a cells file's GPU name close to a
catalogue GPU type (``did you mean X?``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

import solver
from solver.calibrate import (
    PHYSICAL,
    PhysicalRange,
    _far_move,
    at_bounds,
    at_edge,
    calibrate,
    far_from_shipped,
    observations,
    unphysical,
)
from solver.memory import PRIOR
from solver.render import calibration_json
from solver.results import UnphysicalCode
from solver.tables import load_catalog, load_memory_model

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"

STATES = ("16 to 20 bytes per parameter, from mixed-precision Adam's fp32 master weights and two moments with bf16 "
          "weights and gradients (ZeRO's count) to fp32 gradients and bf16 copies of both besides")
"""What the states' physical range stands for, as the phrases give it."""
LIKELY = ("likely too few cells to pin the model down ({}; add cells, or fit with the documented ones too: "
          "--with-tables), or cells measured with another framework or precision than verl's FSDP with bf16 and Adam: "
          "estimates from this fit may not hold\n")
"""The end of the warning on a fit of your cells alone, with their observations counted."""


def one_cell(tmp_path: Path, gpus: int, model: str, length: int, cell: str, gpu: str = "H100-80GB") -> Path:
    """A cells file of one made-up cell: `model` on `gpus` x `gpu` at `length` trained with `cell`."""
    path = tmp_path / "cells.yaml"
    path.write_text(f"gpu: {gpu}\nmemory_gb: 80\nsource: made up\ntables:\n  - gpus: {gpus}\n    section: s\n"
                    f"    models: [{model}]\n    rows:\n"
                    f"      - {{max_model_len: {length}, cells: {{{model}: {cell}}}}}\n",
                    encoding="utf-8")
    return path


def test_the_shipped_fit_and_fits_on_each_documented_gpu_type_keep_every_multiplier_in_its_physical_range(cli):
    # The ranges come from the derivation, not from the shipped fit: the shipped fit keeps to them (states 1.03,
    # gathered 0.79, SP buffers 6.46, fragmentation 0.34), and so do fits on the A100's and the H20's tables alone.
    fitted = solver.calibrate_memory_model()
    assert (fitted.unphysical, fitted.unphysical_codes) == ((), ())
    status, _, err = cli("calibrate", "--json")
    assert (status, err) == (0, "")
    catalog = load_catalog()
    for gpu_type in catalog.documented_gpu_types:
        coefficients, _ = calibrate(observations(catalog, gpu_types=[gpu_type]))
        assert unphysical(coefficients) == []


def test_the_ranges_include_their_edges_and_name_each_multiplier_outside_in_the_order_of_the_terms():
    edges = PRIOR.model_copy(update={"states": 1.25, "gathered": 0.4, "sp_buffers": 1.0, "fragmentation": 1.0})
    assert unphysical(PRIOR) == unphysical(edges) == []
    outside = PRIOR.model_copy(update={"states": 1.26, "gathered": 0.39, "sp_buffers": 0.5, "fragmentation": 1.5,
                                       "checkpoints": 0.2, "overhead": 0.1})  # no range of their own
    assert unphysical(outside) == [
        (UnphysicalCode.STATES_ABOVE_RANGE, f"states 1.26 is above its physical range, 1 to 1.25: {STATES}"),
        (UnphysicalCode.GATHERED_BELOW_RANGE, (
            "gathered 0.39 is below its physical range, at least 0.4: 4 of its 10 bytes per layer parameter, the bf16 "
            "weights and gradients of the layer that FSDP computes")),
        (UnphysicalCode.SP_BUFFERS_BELOW_RANGE, (
            "sp_buffers 0.5 is below its physical range, at least 1: one bf16 hidden state per token, the layer's "
            "activations that Ulysses' all-to-all receives")),
        (UnphysicalCode.FRAGMENTATION_ABOVE_RANGE, (
            "fragmentation 1.5 is above its physical range, at most 1: 4 bytes per logit, two bf16 copies of the "
            "logits (verl's are bf16), as the term counts them: the holes they leave are no larger than that")),
    ]
    assert unphysical(PRIOR.model_copy(update={"states": 0.99})) == [
        (UnphysicalCode.STATES_BELOW_RANGE, f"states 0.99 is below its physical range, 1 to 1.25: {STATES}")]


def test_every_bound_of_a_physical_range_has_its_code_and_every_code_a_bound():
    # unphysical() builds the code from the term and the side: a bound added without a code would raise at run time.
    sides = {f"{term.replace('_', '-')}-{side}-range" for term, physical in PHYSICAL.items()
             for side, bound in (("below", physical.low), ("above", physical.high)) if bound is not None}
    assert sides == {code.value for code in UnphysicalCode}


@pytest.mark.parametrize(("gpus", "model", "length", "cell", "codes", "phrase", "counted_observations"), [
    # One GPU trains Qwen3-4B as it is: less room than 16 bytes per parameter leave.
    (1, "Qwen3-4B", 4096, "vanilla", ["states-below-range"],
     f"states 0.895997 is below its physical range, 1 to 1.25: {STATES}", "1 observation"),
    # Two GPUs ran out of memory with Qwen3-4B as it is at 4096 tokens: the states take the blame.
    (2, "Qwen3-4B", 4096, "Env", ["states-above-range"],
     f"states 1.81857 is above its physical range, 1 to 1.25: {STATES}", "2 observations"),
    # Without Env Qwen3-0.6B ran out at 16384 tokens on one GPU, with it trained: the allocator's holes take the blame.
    (1, "Qwen3-0.6B", 16384, "Env", ["fragmentation-above-range"],
     ("fragmentation 1.46678 is above its physical range, at most 1: 4 bytes per logit, two bf16 copies of the "
      "logits (verl's are bf16), as the term counts them: the holes they leave are no larger than that"),
     "2 observations"),
    # Qwen3-14B at 28672 tokens on one GPU, its states offloaded: FSDP's gathered layers would have to take nothing.
    (1, "Qwen3-14B", 28672, "Env + Offload", ["gathered-below-range"],
     ("gathered 0 is below its physical range, at least 0.4: 4 of its 10 bytes per layer parameter, the bf16 weights "
      "and gradients of the layer that FSDP computes"), "3 observations"),
])
def test_a_tiny_cells_file_drives_each_warning_in_text_and_json(
        cli, tmp_path: Path, gpus: int, model: str, length: int, cell: str, codes: list[str], phrase: str,
        counted_observations: str):
    cells = one_cell(tmp_path, gpus, model, length, cell)
    status, _, err = cli("calibrate", "--cells", str(cells))
    warning = f"solve calibrate: warning: {phrase}; {LIKELY.format(counted_observations)}"
    assert status == 0 and warning in err.splitlines(keepends=True)
    status, out, json_err = cli("calibrate", "--cells", str(cells), "--json")
    printed = json.loads(out)
    assert (status, json_err, printed["unphysical"], printed["unphysical_codes"]) == (0, err, [phrase], codes)
    assert solver.Calibration.model_validate_json(out) == solver.calibrate_memory_model([cells])


def test_with_the_documented_tables_an_unphysical_fit_blames_your_cells(cli, monkeypatch: pytest.MonkeyPatch):
    # The documented tables keep every multiplier in its range: beside them, your cells pull one out. (A range
    # narrowed past the shipped states' 1.03 stands in for cells that would.)
    monkeypatch.setitem(PHYSICAL, "states", PhysicalRange(1.05, 1.25, "made up"))
    status, _, err = cli("calibrate", "--cells", str(EXAMPLES / "my-cells.yaml"), "--with-tables")
    assert status == 0 and err == (
        "solve calibrate: warning: states 1.02901 is below its physical range, 1.05 to 1.25: made up; likely your "
        "cells pulling it there against the documented tables (check them for typos), or cells measured with another "
        "framework or precision than verl's FSDP with bf16 and Adam: estimates from this fit may not hold\n")


def test_a_multiplier_few_cells_move_far_beyond_the_shipped_fit_is_cautioned(cli, tmp_path: Path):
    # Qwen3-1.7B trained Env + SP=4 at 16384 tokens on 8 GPUs and nothing at 32768: logits 14.8, 7.6 times the
    # shipped 1.95, in its plausible range and with no physical one of its own, so no warning named it.
    cells = one_cell(tmp_path, 8, "Qwen3-1.7B", 16384, "Env + SP=4")
    cells.write_text(cells.read_text(encoding="utf-8") + "      - {max_model_len: 32768, cells: {Qwen3-1.7B: '-'}}\n",
                     encoding="utf-8")
    status, _, err = cli("calibrate", "--cells", str(cells))
    assert status == 0 and err.splitlines()[0] == (
        "solve calibrate: caution: logits 14.8, 7.6 times the shipped fit's 1.95: few cells decide it, your 2 cells "
        "(18 observations); add cells, or fit with the documented ones too (--with-tables); estimates from this fit "
        "may not hold")
    assert solver.calibrate_memory_model([cells]).far_from_shipped == ("logits 14.8, 7.6 times the shipped fit's 1.95",)


def test_far_from_shipped_names_a_multiplier_beyond_both_anchors_that_no_warning_names():
    # recompute 5.48 (the shipped fit's and first principles' 1): beyond both, named; sp_buffers 0.97, a seventh of the
    # shipped 6.46 but near first principles, and a value FAR_FACTOR times away exactly, are not; states at its edge
    # and gathered below its physical range are warned of already.
    shipped = load_memory_model().coefficients
    fitted = PRIOR.model_copy(update={"recompute": 5.48, "sp_buffers": 0.97, "logits": 3 * shipped.logits,
                                      "states": 4.0, "gathered": 0.0, "fragmentation": 0.1})
    assert far_from_shipped(fitted, shipped) == [("recompute", 5.48, 1.0), ("fragmentation", 0.1, shipped.fragmentation)]
    assert far_from_shipped(shipped, shipped) == []
    # mutants48: a multiplier at the lower edge of its range (checkpoints 0.1, below a third of both anchors) is warned
    # of at its edge, not named again
    assert far_from_shipped(PRIOR.model_copy(update={"checkpoints": 0.1}), shipped) == []
    assert [_far_move("fragmentation", value, 0.343) for value in (0.1, 0.0)] == [
        "fragmentation 0.1, down 3.4 times from the shipped fit's 0.343",
        "fragmentation 0, down from the shipped fit's 0.343 (the term dropped)"]


def test_a_dropped_term_is_at_its_edge_for_what_moved_but_not_for_the_warnings():
    # smalls92: one definition of an edge (at_edge): solve calibrate's line on what moved counts a term at 0 at its
    # edge (dropped=True), the warnings do not (at_bounds names none, far_from_shipped says it dropped)
    fitted = PRIOR.model_copy(update={"fragmentation": 0.0, "gathered": 20.0, "checkpoints": 0.1})
    assert [term for term in ("fragmentation", "gathered", "checkpoints", "states")
            if at_edge(fitted, term, dropped=True)] == ["fragmentation", "gathered", "checkpoints"]
    assert [term for term in ("fragmentation", "gathered", "checkpoints", "states") if at_edge(fitted, term)] == [
        "gathered", "checkpoints"]
    assert at_bounds(fitted) == ["gathered 20", "checkpoints 0.1"]


def test_json_with_a_code_missing_for_a_phrase_is_refused():
    fitted = solver.calibrate_memory_model([EXAMPLES / "few-cells.yaml"])
    assert fitted.unphysical_codes == (UnphysicalCode.STATES_BELOW_RANGE,)
    printed = json.loads(calibration_json(fitted))
    printed["unphysical_codes"] = []  # JSON made before the codes has none: read back as such
    assert solver.Calibration.model_validate(printed).unphysical == fitted.unphysical
    printed["unphysical_codes"] = ["states-below-range", "states-above-range"]
    with pytest.raises(ValidationError, match="2 unphysical_codes for 1 unphysical phrases: give one code per phrase"):
        solver.Calibration.model_validate(printed)


@pytest.mark.parametrize(("name", "meant"), [("H1000", "H100-80GB"), ("A100-80", "A100-80GB"), ("H10O", "H100-80GB"),
                                             ("Own-80GB", None), ("RTX-3090-24GB", None), ("H100-80G", None)])
def test_a_gpu_name_the_catalogue_lacks_is_matched_to_the_one_it_likely_meant(name: str, meant: str | None):
    # A doubled key, a memory cut short, an O for a zero: the catalogue's; a name of one's own, or another card one
    # character away, none; an alias of the catalogue's is its own GPU type, no typo.
    assert load_catalog().meant_gpu_type(name) == meant


def test_a_cells_files_gpu_name_with_a_doubled_key_gets_did_you_mean_in_place_of_the_memory_note(cli, tmp_path: Path):
    # H1000 (a key doubled) makes a GPU type of its own, by its memory as sold: the one note says what was likely meant.
    cells = one_cell(tmp_path, 8, "Qwen3-8B", 65536, "SP=4", gpu="H1000")
    status, _, err = cli("calibrate", "--cells", str(cells))
    assert status == 0 and err == (
        f"solve calibrate: note: {cells}: H1000 is not a GPU type of the catalogue, so its cells make one of their own "
        "(did you mean H100-80GB?)\n")
    mine = one_cell(tmp_path, 8, "Qwen3-8B", 65536, "SP=4", gpu="Mine-80GB")
    assert cli("calibrate", "--cells", str(mine))[2] == (
        f"solve calibrate: note: {mine}: Mine-80GB's memory_gb 80 is taken as 80 GiB; a card reports less (an H100 "
        "80GB: 81559 MiB, 79.6 GiB), so add its memory_mib (nvidia-smi's total) where you have it\n")


def test_docs_notes_bullet_names_each_prefix_calibrate_prints():
    # wording88: docs/cli.md's "Notes and warnings" bullet named `solve calibrate: warning:` alone, not the caution
    source = (Path(solver.__file__).parent / "cli" / "calibrate.py").read_text(encoding="utf-8")
    bullet = (EXAMPLES.parent / "cli.md").read_text(encoding="utf-8").split("- **Notes and warnings** (", 1)[1]
    prefixes = set(re.findall(r"solve calibrate: [a-z]+: ", source))
    assert prefixes == {"solve calibrate: warning: ", "solve calibrate: caution: ", "solve calibrate: note: "}
    assert all(f"`{prefix}...`" in bullet.split(") go to", 1)[0] for prefix in prefixes)


def test_usable_env_a_hair_below_all_of_the_memory_is_at_the_edge_of_its_range():
    # Within the fit's GAP (0.005) of 1, an observation holds usable_env a hair below all of the memory: at the edge
    # all the same; further below it is not.
    shipped = load_memory_model().coefficients
    assert at_bounds(shipped.model_copy(update={"usable_env": 0.996})) == ["usable_env 0.996"]
    assert at_bounds(shipped.model_copy(update={"usable_env": 0.99})) == []
