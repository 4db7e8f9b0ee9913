"""Session 66, helper smallslips2: small slips the persona reviews left alone: a weight a --weights file leaves out
takes the shipped value (all of them, not only offload_moe_scaling), Ctrl-C's line names each command as docs/cli.md
says, xgmi and nvswitch get their guess in a cluster file and the API (a cells file: test_pcie2_s63) as on the
command line, and a model or GPU name typed in full-width characters is named in ASCII."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

import solver
import solver.cli
from solver.tables import QueryError, Weights, shipped_tables_directory

Cli = Callable[..., tuple[int, str, str]]

SHIPPED = yaml.safe_load((Path(shipped_tables_directory()) / "costs.yaml").read_text(encoding="utf-8"))
"""The shipped cost weights, as the file states them."""
REQUIRED = {name: SHIPPED[name] for name in ("offload", "sp", "env")}
"""The weights every file gave until session 67 (offload, sp, env), at their shipped values."""
OPTIONAL = [name for name, field in Weights.model_fields.items() if not field.is_required()]
"""The weights a file may leave out: since session 67, every one (test_userslips_s67)."""

FULL_WIDTH_NOTE = "is typed in full-width characters (an input method's): type it in ASCII"


# --- 1. a weight left out takes the shipped value -------------------------------------------------------------------


def test_the_optional_weights_are_those_the_shipped_file_states_beside_the_three():
    assert OPTIONAL == ["offload", "sp", "env", "offload_moe_scaling", "sp_pcie_factor", "critic"]  # critic: s76


@pytest.mark.parametrize("left_out", OPTIONAL)
def test_a_weight_left_out_of_a_file_or_the_constructor_takes_the_shipped_value(tmp_path: Path, left_out: str):
    # Before: a file without sp_pcie_factor weighed SP over PCIe as on NVLink (1), the shipped file 3 times, while a
    # file without offload_moe_scaling took the shipped true.
    given = {name: value for name, value in SHIPPED.items() if name != left_out}
    path = tmp_path / "weights.yaml"
    path.write_text(yaml.safe_dump(given), encoding="utf-8")
    assert getattr(solver.load_weights(path), left_out) == SHIPPED[left_out]
    assert getattr(Weights(**given), left_out) == SHIPPED[left_out]
    assert solver.load_weights(path) == solver.load_weights()


def test_a_file_of_the_three_weights_ranks_the_l40s_plans_as_the_shipped_weights_do(cli: Cli, tmp_path: Path):
    # On 8 L40S cards (PCIe) SP=8 weighs 3.1 at the shipped factor 3, above Env + Offload + SP=2's 2.6; at 1 it came
    # first at 0.2146.
    path = tmp_path / "weights.yaml"
    path.write_text(yaml.safe_dump(REQUIRED), encoding="utf-8")
    asked = ("--model", "14B", "--gpu", "l40s", "--gpus", "8", "--len", "16384", "--top", "2", "--json")
    ranked = []
    for more in ((), ("--weights", str(path))):
        status, out, err = cli(*asked, *more)
        assert (status, err) == (0, "")
        plans = json.loads(out)[0]["plans"]
        ranked.append([(plan["gpus"], plan["sp"], plan["offload"], plan["cost"]) for plan in plans])
    assert ranked[0] == ranked[1] and ranked[0][0] == (8, 2, True, 0.32825)


# --- 2. Ctrl-C names the command -------------------------------------------------------------------------------------


def _interrupted(*args: object) -> int:
    raise KeyboardInterrupt  # as Ctrl-C does while a command parses its arguments or works out its answer


@pytest.mark.parametrize("command", [None, *solver.cli._COMMANDS])
def test_ctrl_c_says_the_commands_name_as_its_errors_do(cli: Cli, monkeypatch: pytest.MonkeyPatch,
                                                        command: str | None):
    monkeypatch.setattr(solver.cli, "_parse_and_run", _interrupted)
    prog = "solve" if command is None else f"solve {command}"
    assert cli(*([command] if command else [])) == (130, "", f"{prog}: interrupted\n")


def test_the_ctrl_c_lines_docs_cli_md_quotes_are_the_commands():
    docs = (Path(__file__).resolve().parent.parent / "docs" / "cli.md").read_text(encoding="utf-8")
    bullet = " ".join(docs.split("- **Ctrl-C**")[1].split("\n- ")[0].split())
    quoted = set(re.findall(r"`(solve[a-z ]*): interrupted`", bullet))
    assert quoted == {"solve", "solve cluster", "solve map"}
    assert quoted <= {"solve", *(f"solve {command}" for command in solver.cli._COMMANDS)}


# --- 3. xgmi and nvswitch, in a file and the API ---------------------------------------------------------------------

XGMI = "did you mean 'infinity-fabric'? (amd-smi's and rocm-smi's XGMI links are AMD's Infinity Fabric)"
NVSWITCH = "did you mean 'nvlink'? (NVSwitch joins a node's GPUs by NVLink)"
ACCEPTED = "must be 'nvlink', 'infinity-fabric' or 'pcie'"


@pytest.mark.parametrize(("link", "meant"), [("xgmi", XGMI), ("XGMI", XGMI), ("nvswitch", NVSWITCH)])
def test_a_pools_link_by_another_tools_name_is_told_the_interconnect_it_is(cli: Cli, tmp_path: Path, link: str,
                                                                           meant: str):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: lab, gpu: MI250X, nodes: 1, gpus_per_node: 8, gpu_memory_gb: 128, "
                     f"gpu_interconnect: {link}}}\njobs:\n  - {{name: a, model: Qwen3-8B, max_model_len: 8192}}\n",
                     encoding="utf-8")
    assert cli("cluster", str(fleet)) == (
        2, "", (f"solve cluster: error: {fleet}: line 2: pool lab, gpu_interconnect: {ACCEPTED}, got {link!r}; "
                f"{meant}\n"))


@pytest.mark.parametrize(("link", "meant"), [("xgmi", f"; {XGMI}"), ("nvswitch", f"; {NVSWITCH}"), ("pci", "")])
def test_described_gpu_type_tells_a_link_by_another_tools_name_the_interconnect_it_is(link: str, meant: str):
    with pytest.raises(QueryError) as refused:
        solver.described_gpu_type("MI250X", memory_gb=128, interconnect=link)  # type: ignore[arg-type]
    assert str(refused.value) == f"interconnect must be one of nvlink, infinity-fabric, pcie, got {link!r}{meant}"


# --- 4. a model or GPU name typed in full-width characters -----------------------------------------------------------


@pytest.mark.parametrize(("argv", "prog", "unknown", "ascii_name"), [
    (("--model", "８Ｂ", "--len", "32k"), "solve", "unknown model '８Ｂ'", "8B"),
    (("memory", "--model", "８Ｂ", "--gpu", "a100", "--gpus", "4", "--len", "32k"), "solve memory",
     "unknown model '８Ｂ'", "8B"),
    (("--model", "8B", "--gpu", "Ａ100", "--len", "32k"), "solve", "unknown GPU 'Ａ100'", "A100"),
    (("tables", "--gpu", "Ａ100"), "solve tables", "unknown GPU 'Ａ100'", "A100"),
])
def test_an_unknown_name_typed_in_full_width_characters_is_named_in_ascii(
        cli: Cli, argv: tuple[str, ...], prog: str, unknown: str, ascii_name: str):
    # Before: "unknown model '８Ｂ'; accepted: ... 8B ...", which looks right on screen; a usage error (--len ３２ｋ)
    # had the note already.
    status, out, err = cli(*argv)
    assert (status, out, err.count("\n")) == (2, "", 1)
    assert err.startswith(f"{prog}: error: {unknown}; accepted: ")
    assert err.endswith(f"; '{unknown.split(chr(39))[1]}' {FULL_WIDTH_NOTE}, '{ascii_name}'\n")


def test_an_unknown_name_in_ascii_gets_no_full_width_note(cli: Cli):
    status, _, err = cli("tables", "--gpu", "Z100")
    assert status == 2 and err.startswith("solve tables: error: unknown GPU 'Z100'") and "full-width" not in err
