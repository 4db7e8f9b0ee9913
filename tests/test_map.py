"""`solve map`: the longest context per model and budget, the cheapest setting per length and budget."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from conftest import qwen3_8b_checkpoint
from rich.console import Console

import solver
import solver.cli.maps
import solver.maps
import solver.solve
from solver.maps import UNTABLED_LENGTHS, cheapest_by_length, gpu_map, length_rows, longest_by_model, mapped_models
from solver.query import make_query
from solver.render import PLAIN_TEXT, fitting_budgets, map_view, map_views, maps_width, short_label
from solver.results import CautionCode, GpuMap, LengthMapRow, ModelMapRow, single_gpu_caution
from solver.rules import API_OPTIONS, COMMAND_OPTIONS
from solver.solve import best_plan
from solver.tables import Setting, Undecided, load_catalog

CATALOG = load_catalog()


def test_the_longest_context_map_shows_the_six_versus_four_insight():
    grid = longest_by_model(CATALOG, "A100-80GB", ["Qwen3-4B"], [4, 6])
    four, six = grid[("Qwen3-4B", 4)], grid[("Qwen3-4B", 6)]
    assert (four.max_model_len, four.gpus, four.evidence) == (102400, 4, "documented")
    assert (six.max_model_len, six.gpus) == (102400, 4)  # 6 GPUs reach no further: the best still uses 4


def test_the_cheapest_setting_map_follows_the_tables():
    grid = cheapest_by_length(CATALOG, "A100-80GB", "Qwen3-8B", [32768, 131072], [4])
    assert grid[(32768, 4)].setting.label == "SP=4" and grid[(131072, 4)] is None


def test_a_length_map_goes_on_as_far_as_the_largest_budget_reaches():
    # Qwen3-8B within 8 H20s reaches 245760 (as --maximize len and the by-model map say): past the tables' last
    # row, 153600, the rows go on every 10240 tokens to it.
    rows = length_rows(CATALOG, "H20-96GB", "Qwen3-8B", [1, 2, 8])
    tabled = sorted({row.max_model_len for table in CATALOG.gpu("h20").tables for row in table.rows})
    longest = longest_by_model(CATALOG, "H20-96GB", ["Qwen3-8B"], [8])[("Qwen3-8B", 8)]
    assert longest.max_model_len == 245760 == rows[-1]
    assert rows[:len(tabled)] == tabled and rows[len(tabled):] == [*range(163840, 245760, 10240), 245760]
    grid = cheapest_by_length(CATALOG, "H20-96GB", "Qwen3-8B", rows[-1:], [8])
    assert grid[(245760, 8)] is not None and grid[(245760, 8)].max_model_len == 245760
    # Within 2 GPUs nothing trains past the tables' rows: they stay as they are; a GPU type without tables starts
    # from 4096 to 131072.
    assert length_rows(CATALOG, "H20-96GB", "Qwen3-8B", [1, 2]) == tabled
    assert length_rows(CATALOG, "H100-80GB", "Qwen3-4B", [1])[:32] == list(UNTABLED_LENGTHS)


def test_short_labels():
    assert short_label(Setting()) == "van"
    assert short_label(Setting(env=True, offload=True, sp=4)) == "E+O+SP4"


def test_cli_map_and_svg(cli, tmp_path: Path):
    status, out, err = cli("map", "--gpu", "a100-80g", "--gpus-up-to", "6")
    assert (status, err) == (0, "")
    row = next(line for line in out.splitlines() if "Qwen3-4B" in line)
    assert "100k E+O+SP4@4" in row and "28k E+O@1" in row
    svg = tmp_path / "map.svg"
    status, out, _ = cli("map", "--gpu", "h20", "--model", "8B", "--by", "len", "--gpus-up-to", "4", "--svg", str(svg))
    assert status == 0 and "cheapest setting per length" in out
    assert svg.read_text(encoding="utf-8").startswith("<svg") and [p.name for p in tmp_path.iterdir()] == ["map.svg"]
    status, _, err = cli("map", "--by", "len")
    assert status == 2 and err == "solve map: error: --by len maps one model: give --model M (or --model-config PATH)\n"
    assert cli("map", "--gpu", "h100", "--model", "32B,8B", "--by", "len") == (
        2, "", "solve map: error: --by len maps one model: give one to --model, not 2\n")


def test_a_map_of_the_models_you_name(cli):
    # A GPU type without tables maps the five tabled Qwen3 models by default; --model names others, in its order,
    # each once, each row the planner's answer.
    out = cli("map", "--gpu", "h100", "--gpus-up-to", "2")[1]
    assert [line.split()[1] for line in out.splitlines() if line.startswith("│ ")] == [
        "Qwen3-0.6B", "Qwen3-1.7B", "Qwen3-4B", "Qwen3-8B", "Qwen3-14B"]
    status, out, _ = cli("map", "--gpu", "h100", "--gpus-up-to", "2", "--model", "32B, llama-3.1-70b,qwen3-32b",
                         "--json")
    [h100] = json.loads(out)
    assert status == 0 and [row["model"] for row in h100["rows"]] == ["Qwen3-32B", "Llama-3.1-70B"]
    [answer] = json.loads(cli("--model", "llama3.1-70b", "--gpu", "h100", "--gpus", "2", "--maximize", "len",
                              "--json")[1])
    assert h100["rows"][1]["plans"][1] == answer["plans"][0]
    assert cli("map", "--gpu", "h100", "--model", "32B,5B")[:2] == (2, "")


def test_cli_map_refuses_bad_input_before_any_map(cli, tmp_path: Path):
    target = tmp_path / "missing" / "map.svg"
    assert cli("map", "--gpu", "a100", "--svg", str(target)) == (
        2, "", f"solve map: error: --svg {target}: cannot write: {target.parent} does not exist\n")
    assert cli("map", "--gpu", "a100", "--svg", str(tmp_path)) == (  # a folder: refused before the map is made
        2, "", f"solve map: error: --svg {tmp_path}: not a regular file; give a file name to write\n")
    status, out, err = cli("map", "--model", "9B")
    assert (status, out) == (2, "") and err.startswith("solve map: error: unknown model '9B'; accepted: Qwen3-0.6B")
    # A folder that refuses the file (sysfs, even to root): bad input, and no map printed before it.
    if Path("/sys").is_dir():
        assert cli("map", "--gpu", "a100", "--svg", "/sys/map.svg") == (
            2, "", ("solve map: error: --svg /sys/map.svg: cannot write: a temporary file cannot be created in /sys "
                    "(Permission denied); the file is written there first, then renamed into place\n"))


def test_a_narrow_maps_title_keeps_to_one_line(cli):
    status, out, _ = cli("map", "--gpu", "a100", "--gpus-up-to", "1")
    assert status == 0 and out.splitlines()[0] == "A100-80GB: longest context per model and GPU budget"


def test_a_terminal_too_narrow_for_the_maps_gets_a_note_but_not_with_json(cli, monkeypatch: pytest.MonkeyPatch):
    screen = io.StringIO()
    monkeypatch.setattr(solver.cli.maps, "new_console", lambda width=160: Console(
        width=40, force_terminal=True, file=screen, **PLAIN_TEXT))
    status, _, err = cli("map", "--gpu", "a100-80g", "--model", "4B")
    assert status == 0 and re.fullmatch(r"solve map: note: the maps need \d+ columns and the terminal has 40: widen "
                                        r"it, pipe the output \(\| less -S\), map fewer budgets \(--budgets "
                                        r"8\), or save it with --svg FILE; --json has every cell\n", err)
    # JSON is not laid out in columns: no note.
    status, out, err = cli("map", "--gpu", "a100-80g", "--model", "4B", "--json")
    assert (status, err) == (0, "") and out.startswith("[")


def test_a_terminal_too_narrow_for_the_maps_folds_cells_before_their_gpu_count(
        cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    # Budgets up to 32 past a node, cut to their fewest columns (2) for 50 columns, whose cells (E+O+SP8@16~!^) fold
    # there: each cell breaks at a space before its GPU count, which stays whole (it broke as E+O+SP8@1 over 6~!^,
    # one GPU to the eye). A pipe, and the SVG, get the maps whole, without that space.
    screen = io.StringIO()
    monkeypatch.setattr(solver.cli.maps, "new_console", lambda width=160: Console(
        width=50, force_terminal=True, file=screen, **PLAIN_TEXT))
    # (Trinity 0.6: rank 0 alone loads the model on H200s; every rank's 8 loads of 262.6 GiB would not fit 2048 GiB.)
    asked = ("map", "--gpu", "h200", "--model", "llama3.1-70b", "--gpus-up-to", "32", "--host-ram", "2048",
             "--trinity-version", "0.6")
    svg = tmp_path / "map.svg"
    status, _, err = cli(*asked, "--svg", str(svg))
    shown = re.sub(r"\x1b\[[0-9;]*m", "", screen.getvalue())  # the terminal's colours left out
    cells = [cell.strip() for line in shown.splitlines() if line.startswith("│")
             for cell in line.split("│")[2:-1]]
    assert status == 0 and err.startswith("solve map: note: the maps need ")
    assert [cell for cell in cells if "@" in cell] == ["@16~!^", "@32~!^"]
    assert "E+O+SP8@16~!^" in svg.read_text().replace("&#160;", " ")
    monkeypatch.undo()
    status, out, _ = cli(*asked)
    row = next(line for line in out.splitlines() if line.startswith("│ Llama-3.1-70B"))
    assert status == 0 and row.split("│")[5].strip() == "213k E+O+SP8@16~!^"


def test_a_map_without_gpu_has_one_map_per_gpu_type_with_tables(cli):
    status, out, _ = cli("map", "--model", "4B", "--gpus-up-to", "1", "--json")
    assert status == 0 and [m["gpu"] for m in json.loads(out)] == [g.name for g in CATALOG.documented_gpu_types] == [
        "A100-80GB", "H20-96GB"]


def test_the_svg_of_a_narrow_map_keeps_its_title_on_one_line(cli, tmp_path: Path):
    # One budget makes a table far narrower than its title: the SVG is at least 80 columns wide, as a terminal.
    svg = tmp_path / "map.svg"
    status, out, _ = cli("map", "--gpu", "a100", "--model", "4B", "--gpus-up-to", "1", "--svg", str(svg))
    title = "A100-80GB: longest context per model and GPU budget"
    assert status == 0 and out.splitlines()[0] == title
    assert title.replace(" ", "&#160;") in svg.read_text(encoding="utf-8")


def test_a_map_saved_as_svg_says_so_after_the_map_as_solve_says_what_it_wrote(cli, tmp_path: Path):
    svg = tmp_path / "map.svg"
    flags = ["map", "--gpu", "a100-80g", "--model", "4B", "--gpus-up-to", "1", "--svg", str(svg)]
    status, out, err = cli(*flags)
    assert (status, err, out.splitlines()[-1]) == (0, "", f"wrote {svg}")
    svg.unlink()
    status, out, _ = cli(*flags, "--json")  # JSON stays JSON, and the SVG is saved as well
    assert status == 0 and json.loads(out)[0]["gpu"] == "A100-80GB" and svg.read_text(encoding="utf-8").startswith(
        "<svg")


def test_budgets_that_allow_the_same_gpu_counts_share_one_answer():
    # On nodes of 8, budgets 9 to 15 allow the counts that 8 allows: the same plan, each with its unused GPUs,
    # and the one a query of its own gives.
    grid = longest_by_model(CATALOG, "h100", ["Qwen3-8B"], list(range(8, 17)))
    for budget in range(9, 16):
        plan = grid["Qwen3-8B", budget]
        assert plan is not None and plan.model_copy(update={"unused_gpus": 0}) == grid["Qwen3-8B", 8]
        assert plan.unused_gpus == budget - plan.gpus
    assert grid["Qwen3-8B", 12] == best_plan(CATALOG, make_query(CATALOG, model="8B", gpu="h100", objective="max_len",
                                                                 budget_gpus=12), "H100-80GB")
    assert grid["Qwen3-8B", 16] is not None and grid["Qwen3-8B", 16].gpus == 16


def test_budgets_that_allow_the_same_gpu_counts_are_solved_once(monkeypatch: pytest.MonkeyPatch):
    # Budgets 8 to 15 on nodes of 8 allow the same counts: one solve for them, and one for 16 (per row).
    solved = []
    monkeypatch.setattr(solver.maps, "best_plan",
                        lambda catalog, query, gpu, proven: solved.append(query.budget_gpus))
    longest_by_model(CATALOG, "h100", ["Qwen3-8B", "Qwen3-4B"], list(range(8, 17)))
    assert solved == [8, 16, 8, 16]


def test_a_length_map_whose_largest_budget_has_no_plan_keeps_to_the_tables_rows():
    # With 8 GB of host memory per node, Qwen3-8B loads nowhere: the rows are the A100 tables', none past them.
    assert longest_by_model(CATALOG, "a100", ["Qwen3-8B"], [2], host_ram_gb=8) == {("Qwen3-8B", 2): None}
    assert length_rows(CATALOG, "a100", "Qwen3-8B", [1, 2], host_ram_gb=8) == [
        *range(4096, 40960 + 1, 4096), *range(51200, 133120 + 1, 10240)]


def test_many_budgets_keep_readable_cells_in_a_pipe_and_in_the_svg(cli, tmp_path: Path):
    # 24 budgets are wider than any default width: every cell still shows its length and setting.
    target = tmp_path / "map.svg"
    status, out, err = cli("map", "--gpu", "h100", "--model", "8B", "--gpus-up-to", "24", "--svg", str(target))
    row = next(line for line in out.splitlines() if line.startswith("│ Qwen3-8B"))
    cells = [cell.strip() for cell in row.strip("│").split("│")][1:]
    header = next(line for line in out.splitlines() if line.startswith("┃ model"))
    # Runs of budgets with the same plans share a column (a map wider than 16 budgets).
    assert (status, err) == (0, "") and len(cells) == header.count("GPU") < 24
    assert all(re.fullmatch(r"\d+k \S+ ?@\d+(\*|~!?)?\^?", cell) for cell in cells)
    assert "@24~" in out or "@16~" in out
    svg = target.read_text(encoding="utf-8")  # as wide as the map: each cell whole on its line, as in the pipe
    assert all(cell.replace(" ", "&#160;") in svg for cell in cells)


def test_estimates_beyond_the_calibration_are_marked(cli):
    status, out, _ = cli("map", "--gpu", "h100", "--gpus-up-to", "8")
    row = next(line for line in out.splitlines() if line.startswith("│ Qwen3-0.6B"))
    cells = [cell.strip() for cell in row.split("│")[2:-1]]
    # 4 GPUs with SP=4 stay within the calibration (at most 6 GPUs, SP=4); 8 GPUs with SP=8 do not.
    assert status == 0 and cells[3] == "120k E+O+SP4@4~" and cells[7] == "241k E+O+SP8@8~!^"
    assert "~! estimated beyond the memory model's calibration" in " ".join(out.split())


def test_a_maps_legend_explains_only_the_marks_its_cells_carry(cli):
    # Without estimates no cell is marked ~ or ~!, and with a plan in every cell none is -: the legend said all four.
    status, out, _ = cli("map", "--gpu", "a100-80gb", "--model", "4B", "--gpus-up-to", "2", "--no-estimate")
    assert status == 0 and "│ Qwen3-4B │ 28k E+O@1† │ 50k E+O+SP2@2 │" in out
    assert "cells: longest context (k = 1024 tokens), setting@GPUs; evidence: documented\n" in out
    status, out, _ = cli("map", "--gpu", "h100", "--model", "4B", "--gpus-up-to", "1", "--no-estimate")
    assert status == 0 and "│ Qwen3-4B │   -    │" in out
    assert ("cells: longest context (k = 1024 tokens), setting@GPUs; - nothing trains within the limits in the "
            "title\n") in out


def test_yarn_past_what_is_validated_is_marked(cli):
    # Qwen3-8B on H20s: 8 GPUs reach 240k by estimate, past the 131072 tokens (YaRN factor 4) Qwen validates, as
    # `solve` cautions; 120k on 4 is within it. By length, the rows past 131072 carry the mark.
    status, out, _ = cli("map", "--gpu", "h20", "--model", "8B")
    row = next(line for line in out.splitlines() if line.startswith("│ Qwen3-8B"))
    cells = [cell.strip() for cell in row.split("│")[2:-1]]
    assert status == 0 and (cells[3], cells[7]) == ("120k E+O+SP4@4", "240k E+O+SP8@8~!^")
    assert "; ^ YaRN past what is validated (quality untested)" in " ".join(out.split())
    status, out, _ = cli("map", "--gpu", "h20", "--model", "8B", "--by", "len")
    lengths = [line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│")]
    assert status == 0 and "122880" in lengths and "133120^" in lengths and "245760^" in lengths
    assert all(length.endswith("^") == (int(length.rstrip("^")) > 131072) for length in lengths)
    # Within what is validated, no mark and no legend for it.
    status, out, _ = cli("map", "--gpu", "a100", "--model", "8B", "--gpus-up-to", "4")
    assert status == 0 and "^" not in out and "YaRN" not in out


def test_a_length_past_the_native_context_on_the_models_own_scaling_is_marked(cli):
    # Llama-3.1-70B on 8 H200s reaches 218112 tokens (213k) by estimate, past the native 131072 its own llama3 RoPE
    # scaling provides, which `solve` cautions (past-native-on-own-scaling); 106k on 4 is within it. It has no YaRN,
    # so the legend names the other kind; beside Qwen3-32B, past its validated YaRN at 142k, it names both.
    status, out, _ = cli("map", "--gpu", "h200", "--model", "llama3.1-70b", "--gpus-up-to", "8")
    row = next(line for line in out.splitlines() if line.startswith("│ Llama-3.1-70B"))
    cells = [cell.strip() for cell in row.split("│")[2:-1]]
    assert status == 0 and (cells[3], cells[7]) == ("106k E+O+SP4@4~!", "213k E+O+SP8@8~!^")
    legend = " ".join(out.split())
    assert "; ^ past the native context on the model's own RoPE scaling (quality untested)" in legend
    assert "YaRN" not in legend
    status, out, _ = cli("map", "--gpu", "h200", "--model", "llama3.1-70b", "--by", "len", "--gpus-up-to", "8")
    lengths = [line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│")]
    assert status == 0 and "131072" in lengths and "141312^" in lengths and "218112^" in lengths
    assert all(length.endswith("^") == (int(length.rstrip("^")) > 131072) for length in lengths)
    status, out, _ = cli("map", "--gpu", "h200", "--model", "llama3.1-70b,32B", "--gpus-up-to", "4")
    assert status == 0 and "; ^ YaRN past what is validated (quality untested)" in " ".join(out.split())
    status, out, _ = cli("map", "--gpu", "h200", "--model", "llama3.1-70b,32B", "--gpus-up-to", "8")
    assert status == 0 and ("; ^ YaRN past what is validated, or past the native context on the model's own RoPE "
                            "scaling (quality untested)") in " ".join(out.split())


def test_a_map_with_host_memory_keeps_to_plans_that_fit_there(cli):
    # Qwen3-32B on one node of H100s trains only with Offload, whose states take 664.2 GiB of host memory per node (up
    # to 863.7 on 7 GPUs): 512 GiB leave no plan at any budget of one node; 1024 GiB leave the planner's, each `solve
    # --host-ram`'s.
    status, out, _ = cli("map", "--gpu", "h100", "--model", "32B", "--host-ram", "512")
    row = next(line for line in out.splitlines() if line.startswith("│ Qwen3-32B"))
    assert status == 0 and out.startswith("H100-80GB: longest context per model and GPU budget, host memory 512 GiB "
                                          "per node\n")
    assert {cell.strip() for cell in row.split("│")[2:-1]} == {"-"}
    assert "- nothing trains within the limits in the title" in " ".join(out.split())
    # On two nodes each holds half of the states (332.1 GiB), which 512 GiB hold: the 16-GPU budget has a plan, under
    # Trinity 0.6, whose rank 0 alone loads the model on H100s (every rank's 8 loads of 122.1 GiB would not fit).
    [h100] = json.loads(cli("map", "--gpu", "h100", "--model", "32B", "--host-ram", "512", "--gpus-up-to", "16",
                            "--trinity-version", "0.6", "--json")[1])
    [plans] = [row["plans"] for row in h100["rows"]]
    assert [plan is None for plan in plans] == [True] * 15 + [False]
    assert (plans[-1]["gpus"], plans[-1]["offload"], plans[-1]["host_memory_gb"]) == (16, True, 332.1)
    out = cli("map", "--gpu", "h100", "--model", "32B", "--host-ram", "1024", "--json")[1]
    [h100] = json.loads(out)
    assert '"host_ram_gb": 1024,' in out  # as given, not 1024.0
    assert list(h100) == ["gpu", "by", "host_ram_gb", "budget_gpus", "rows", "schema_version",
                          "rft_solver_version"] and h100["host_ram_gb"] == 1024
    [plans] = [row["plans"] for row in h100["rows"]]
    for budget in (1, 6, 8):
        [answer] = json.loads(cli("--model", "32B", "--gpu", "h100", "--maximize", "len", "--gpus", str(budget),
                                  "--host-ram", "1024", "--json")[1])
        assert plans[budget - 1] == {**answer["plans"][0], "unused_gpus": budget - answer["plans"][0]["gpus"]}
    without = json.loads(cli("map", "--gpu", "h100", "--model", "32B", "--json")[1])[0]
    assert "host_ram_gb" not in without and without["rows"][0]["plans"][0]["offload"]


def test_a_map_of_your_own_gpu_cells_and_memory_model(cli, tmp_path: Path):
    # A GPU type the catalogue lacks, by its memory: every cell estimated.
    status, out, _ = cli("map", "--gpu", "MyAccel", "--gpu-memory", "65536MiB", "--model", "8B", "--gpus-up-to", "2")
    row = next(line for line in out.splitlines() if "Qwen3-8B" in line)
    assert status == 0 and out.startswith("MyAccel: longest context") and row.count("~") == 2
    # Cells you measured are tables of their GPU type: the map has a row per model they name.
    cells = Path(__file__).parent / "data" / "cells" / "h800.yaml"
    status, out, _ = cli("map", "--gpu", "h800", "--cells", str(cells), "--gpus-up-to", "8")
    rows = [line.split()[1] for line in out.splitlines() if line.startswith("│ Qwen3-")]  # not the legend's
    assert status == 0 and rows == ["Qwen3-8B", "Qwen3-14B"]
    # A larger margin never maps a longer context; a bad one is refused before any map.

    def lengths(*flags: str) -> list[int]:
        _, out, _ = cli("map", "--gpu", "h100", "--model", "8B", "--gpus-up-to", "8", *flags)
        row = next(line for line in out.splitlines() if "Qwen3-8B" in line)
        return [int(k) for k in re.findall(r"(\d+)k ", row)]

    plain, careful = lengths(), lengths("--margin", "0.1")
    assert len(plain) == len(careful) == 8 and all(c <= p for c, p in zip(careful, plain)) and careful != plain
    status, out, err = cli("map", "--gpu", "h100", "--margin", "2")
    assert (status, out, err.splitlines()[-1]) == (
        2, "", ("solve map: error: argument --margin: must be a fraction from 0 to below 1, got 2 "
                "(as a percentage, 2% is 0.02)"))


def test_a_map_of_a_model_from_its_config(cli, tmp_path: Path):
    folder = qwen3_8b_checkpoint(tmp_path / "Coder-8B", vocab_size=200000)  # not a catalogue shape: estimated
    status, out, _ = cli("map", "--gpu", "h100", "--model-config", str(folder), "--gpus-up-to", "2")
    # Each cell is the planner's longest context for that budget, marked estimated beyond the calibration (~!).
    expected = []
    for gpus in (1, 2):
        best = json.loads(cli("--gpu", "h100", "--model-config", str(folder), "--maximize", "len", "--gpus", str(gpus),
                              "--json")[1])[0]["plans"][0]
        assert (best["env"], best["offload"], best["evidence"]) == (True, True, "estimated")
        sp = f"+SP{best['sp']}" if best["sp"] > 1 else ""
        one_gpu = "†" if "single-gpu-advised-against" in best["caution_codes"] else ""  # the guide advises more GPUs
        expected.append(f"{best['max_model_len'] // 1024}k E+O{sp}@{best['gpus']}~!{one_gpu}")
    row = next(line for line in out.splitlines() if line.startswith("│ Coder-8B "))
    assert status == 0 and [cell.strip() for cell in row.split("│")[2:-1]] == expected
    status, out, _ = cli("map", "--gpu", "h100", "--model-config", str(folder), "--by", "len", "--gpus-up-to", "2")
    assert status == 0 and "Coder-8B: cheapest setting per length" in out
    assert cli("map", "--model", "8B", "--model-config", str(folder)) == (
        2, "", "solve map: error: --model and --model-config both name the model: give one\n")


def test_a_cell_whose_solve_ran_out_of_time_is_not_shown_as_no_plan(cli, monkeypatch):
    real = solver.solve.answer_for

    def out_of_time(catalog, query, gpu, explained=True):
        answer = real(catalog, query, gpu, explained)
        return answer.model_copy(update={"status": "unknown", "plans": ()}) if query.budget_gpus == 2 else answer

    monkeypatch.setattr(solver.solve, "answer_for", out_of_time)
    assert cli("map", "--gpu", "a100", "--model", "4B", "--gpus-up-to", "2") == (
        1, "", ("solve map: undecided: no plan found for Qwen3-4B on A100-80GB within the time limit of 10 s; "
                "nothing printed (a longer --time-limit may decide it)\n"))


def test_a_cell_whose_plan_the_time_limit_left_unproven_is_undecided_too(cli, monkeypatch):
    # A solve cut short with a plan found (status feasible) gave that plan as the cell's: one a longer run, another
    # seed or worker count may better, so the map was not the same whatever the seed, as docs/api.md says it is.
    real = solver.solve.answer_for

    def cut_short(catalog, query, gpu, explained=True):
        answer = real(catalog, query, gpu, explained)
        return answer.model_copy(update={"status": "feasible"}) if query.budget_gpus == 2 else answer

    monkeypatch.setattr(solver.solve, "answer_for", cut_short)
    said = "a plan for Qwen3-4B on A100-80GB was found but not proven the best within the time limit of 10 s"
    assert cli("map", "--gpu", "a100", "--model", "4B", "--gpus-up-to", "2") == (
        1, "", f"solve map: undecided: {said}; nothing printed (a longer --time-limit may decide it)\n")
    with pytest.raises(Undecided) as raised:
        solver.map_plans("4B", gpu="a100", gpus_up_to=2)
    assert type(raised.value) is Undecided and str(raised.value) == said
    assert solver.map_plans("4B", gpu="a100", gpus_up_to=1)[0].rows[0].plans[0] is not None  # budget 1: decided


def test_the_time_limit_of_a_maps_cells_is_the_users(cli, monkeypatch):
    # As solve's and solve cluster's: a map whose cell ran out of time (exit 1) can be given longer.
    real, limits = solver.solve.answer_for, []

    def out_of_time(catalog, query, gpu, explained=True):
        limits.append(query.time_limit_s)
        return real(catalog, query, gpu, explained).model_copy(update={"status": "unknown", "plans": ()})

    monkeypatch.setattr(solver.solve, "answer_for", out_of_time)
    assert cli("map", "--gpu", "a100", "--model", "4B", "--gpus-up-to", "2", "--time-limit", "30") == (
        1, "", ("solve map: undecided: no plan found for Qwen3-4B on A100-80GB within the time limit of 30 s; "
                "nothing printed (a longer --time-limit may decide it)\n"))
    assert limits == [30.0]
    assert cli("map", "--time-limit", "0") == (2, "", ("usage: solve map [options] (--help lists them)\nsolve map: "
                                                       "error: argument --time-limit: must be a number above 0 and at "
                                                       "most 1000000000, got 0\n"))


def test_a_wide_map_shows_a_run_of_budgets_with_the_same_plans_as_one_column(cli):
    # On nodes of 8, budgets of 9 to 15 GPUs allow what 8 do: one column; a map within one node keeps each.
    status, out, _ = cli("map", "--gpu", "a100", "--model", "4B", "--gpus-up-to", "64")
    header = next(line for line in out.splitlines() if line.startswith("┃ model"))
    assert status == 0 and "≤8-15 GPUs" in header and "≤9 GPU" not in header and "≤64 GPUs" in header
    assert "≤a-b: budgets a to b, the same plans" in out
    status, out, _ = cli("map", "--gpu", "a100", "--model", "4B", "--gpus-up-to", "8")  # within a node: each
    header = next(line for line in out.splitlines() if line.startswith("┃ model"))
    assert status == 0 and "≤3 GPUs" in header and "-" not in header.replace("─", "").replace("━", "")


def test_a_narrow_terminal_wraps_a_merged_budget_header_before_gpus_not_inside_its_range():
    catalog = load_catalog()
    budgets = list(range(1, 65))
    out = io.StringIO()
    # listed: every run a column (a map of budgets 1 to 64 from --gpus-up-to shows five of them)
    Console(width=100, file=out).print(map_view(gpu_map(catalog, "H100-80GB", ["Qwen3-8B"], budgets,
                                                        budgets_listed=True), "map"))
    header = next(line for line in out.getvalue().splitlines() if "≤1" in line)
    assert all(f"≤{first}-{last}" in header for first, last in ((16, 23), (24, 31), (56, 63)))


def test_the_maps_as_json_are_indented_as_solve_json_is(cli):
    # Two spaces a level, as `solve --json` prints: `solve map --json` read by a person stays legible.
    for command in (("map", "--gpu", "a100-80g", "--model", "4B", "--gpus-up-to", "2", "--json"),
                    ("--model", "4B", "--gpu", "a100-80g", "--gpus", "2", "--len", "8192", "--json")):
        status, out, _ = cli(*command)
        assert status == 0 and out == json.dumps(json.loads(out), indent=2) + "\n"


def test_the_maps_as_json_hold_the_planners_plans(cli):
    # Each cell is the plan `solve --json` gives for that row and budget (null where there is none).
    status, out, err = cli("map", "--gpu", "a100-80g", "--gpus-up-to", "6", "--json")
    [a100] = json.loads(out)
    assert (status, err, a100["gpu"], a100["by"], a100["budget_gpus"]) == (0, "", "A100-80GB", "model", [1, 2, 3, 4, 5, 6])
    row = next(row for row in a100["rows"] if row["model"] == "Qwen3-4B")
    [answer] = json.loads(cli("--model", "4B", "--gpu", "a100-80g", "--gpus", "6", "--maximize", "len", "--json")[1])
    assert row["plans"][5] == answer["plans"][0] and row["plans"][5]["max_model_len"] == 102400
    status, out, _ = cli("map", "--gpu", "a100-80g", "--model", "8B", "--by", "len", "--gpus-up-to", "4", "--json")
    [by_length] = json.loads(out)
    cells = {row["max_model_len"]: row["plans"] for row in by_length["rows"]}
    assert by_length["by"] == "len" and cells[133120] == [None] * 4 and cells[32768][3]["sp"] == 4
    # A length map names its model, as its title does; a model map's rows name theirs.
    assert list(by_length) == ["gpu", "by", "model", "budget_gpus", "rows", "schema_version",
                               "rft_solver_version"] and by_length["model"] == "Qwen3-8B"
    assert list(a100) == ["gpu", "by", "budget_gpus", "rows", "schema_version", "rft_solver_version"]
    # A model map of one model is still a model map: its row names the model.
    [one] = json.loads(cli("map", "--gpu", "a100-80g", "--model", "8B", "--gpus-up-to", "2", "--json")[1])
    assert (list(one), one["by"], [row["model"] for row in one["rows"]]) == (
        ["gpu", "by", "budget_gpus", "rows", "schema_version", "rft_solver_version"], "model", ["Qwen3-8B"])


def test_a_map_with_a_train_batch_keeps_to_trainers_whose_ranks_divide_it(cli):
    # 256 experiences split over 1, 2 or 4 ranks, not 3, 5 or 6: Qwen3-8B's cheapest plans within 3, 5 and 6 A100s
    # stay on 2 and 4 GPUs, each the planner's with the same batch.
    # A node's host memory given (1 TB), so that no caution on Offload's is the ranks' business here.
    out = cli("map", "--gpu", "a100", "--model", "8B", "--by", "len", "--gpus-up-to", "6", "--json",
              "--train-batch-size", "256", "--host-ram", "1TB")[1]
    [a100] = json.loads(out)
    cells = {row["max_model_len"]: row["plans"] for row in a100["rows"]}
    assert list(a100) == ["gpu", "by", "model", "train_batch_size", "host_ram_gb", "budget_gpus", "rows",
                          "schema_version", "rft_solver_version"]
    assert a100["train_batch_size"] == 256 and [plan["gpus"] for plan in cells[4096]] == [1, 2, 2, 4, 4, 4]
    # No caution on the ranks; one A100 for Qwen3-8B has the guide's advice for more GPUs, and nothing else.
    eight_b = solver.tables.load_catalog().model("8B")
    assert all(plan is None or plan["gpus"] // plan["sp"] in (1, 2, 4) and plan["cautions"] == (
        [single_gpu_caution(eight_b, 1, length, 80.0)] if plan["gpus"] == 1 else [])
               for length, plans in cells.items() for plan in plans)
    [answer] = json.loads(cli("--model", "8B", "--gpu", "a100", "--gpus", "6", "--len", "32768", "--json",
                              "--train-batch-size", "256", "--host-ram", "1TB")[1])
    assert cells[32768][5] == answer["plans"][0]
    unbatched = json.loads(cli("map", "--gpu", "a100", "--model", "8B", "--by", "len", "--gpus-up-to", "6",
                               "--json")[1])[0]["rows"]
    assert [plan["gpus"] for plan in unbatched[0]["plans"]] == [1, 2, 3, 4, 5, 6]
    assert cli("map", "--gpu", "a100", "--model", "8B", "--gpus-up-to", "6", "--train-batch-size", "256")[1].startswith(
        "A100-80GB: longest context per model and GPU budget, train batch 256\n")


def test_an_untabled_length_map_starts_from_4096_to_131072_in_steps_of_4096():
    assert UNTABLED_LENGTHS == tuple(range(4096, 131072 + 1, 4096))
    assert length_rows(CATALOG, "H100-80GB", "Qwen3-4B", [1])[:32] == list(range(4096, 131072 + 1, 4096))


def test_a_length_map_reaching_exactly_its_last_tabled_row_repeats_no_row(monkeypatch):
    # Where the largest budget reaches the tables' last row and no further, the rows are the tables' own.
    tabled = sorted({row.max_model_len for table in CATALOG.gpu("h20").tables for row in table.rows})
    reached = best_plan(CATALOG, make_query(CATALOG, model="Qwen3-8B", gpu="h20", budget_gpus=8,
                                            max_model_len=tabled[-1]), "H20-96GB")
    assert reached is not None
    monkeypatch.setattr(solver.maps, "longest_by_model",
                        lambda catalog, gpu, models, budgets, **estimates: {(models[0], budgets[0]): reached})
    assert length_rows(CATALOG, "H20-96GB", "Qwen3-8B", [1, 8]) == tabled


def test_a_by_model_map_has_the_models_its_gpu_types_tables_document_else_every_documented_one():
    everyone = ["Qwen3-0.6B", "Qwen3-1.7B", "Qwen3-4B", "Qwen3-8B", "Qwen3-14B"]
    with_h800 = CATALOG.with_cells(Path(__file__).parent / "data" / "cells" / "h800.yaml")
    assert mapped_models(with_h800, "h800") == ["Qwen3-8B", "Qwen3-14B"]  # its own tables' models
    assert mapped_models(CATALOG, "a100") == mapped_models(CATALOG, "h100") == everyone  # h100: no tables


PLANNER_KNOBS = [
    # (the knob's flags, the GPU and model mapped, the other map flags, the row and budget whose cell the knob changes,
    # solve's question there, the end of the map's title, the JSON's echo)
    # Offload cheap and SP dear: Qwen3-4B at 20480 tokens on 2 A100s takes Env + Offload (estimated), not SP=2.
    (["--weights", "WEIGHTS"], "a100-80g", "4B", ["--by", "len", "--gpus-up-to", "2"], 20480, 2, ["--len", "20480"],
     "cheapest setting per length and GPU budget, weights WEIGHTS", {}),
    # On nodes of 4 an SP group keeps to a node: 8 A100s reach Env + Offload + SP=4's 100k, not SP=8's 217k.
    (["--node-gpus", "4"], "a100-80g", "4B", ["--gpus-up-to", "8"], "Qwen3-4B", 8, ["--maximize", "len"],
     "longest context per model and GPU budget, nodes of 4 GPUs", {"node_gpus": 4}),
    # The memory model alone: one A100 reaches 27k (estimated), where its table says 28k.
    (["--estimate"], "a100-80g", "4B", ["--gpus-up-to", "1"], "Qwen3-4B", 1, ["--maximize", "len"],
     "longest context per model and GPU budget, estimates alone", {"estimate": "only"}),
    # No estimates: an H100, which has no tables, has no plan.
    (["--no-estimate"], "h100", "4B", ["--gpus-up-to", "1"], "Qwen3-4B", 1, ["--maximize", "len"],
     "longest context per model and GPU budget, no estimates", {"estimate": "never"}),
    # Lowered token budgets: Qwen3-32B on one H100 reaches 40k, not 20k.
    (["--token-budget", "auto"], "h100", "32B", ["--gpus-up-to", "1"], "Qwen3-32B", 1, ["--maximize", "len"],
     "longest context per model and GPU budget, token budget auto", {"token_budget": "auto"}),
]


@pytest.mark.parametrize(("knob", "gpu", "model", "flags", "row", "budget", "question", "title", "echo"),
                         PLANNER_KNOBS, ids=[knob[0] for knob, *_ in PLANNER_KNOBS])
def test_a_maps_cells_take_the_planners_knobs_as_solve_does(cli, tmp_path: Path, knob, gpu, model, flags, row, budget,
                                                            question, title, echo):
    # Each changes the cell, which is `solve`'s answer with the same knob at that budget; the title and the JSON say
    # it was given.
    weights = tmp_path / "w.yaml"
    weights.write_text("offload: 0.01\nsp: 0.5\nenv: 0.01\n", encoding="utf-8")
    knob = [str(weights) if word == "WEIGHTS" else word for word in knob]
    mapped = ["map", "--gpu", gpu, "--model", model, *flags]

    def grid(*given: str) -> dict:
        status, out, err = cli(*mapped, *given, "--json")
        assert (status, err) == (0, "")
        [one] = json.loads(out)
        return one

    def cell(one: dict) -> dict | None:
        return next(line["plans"] for line in one["rows"] if row in (line.get("model"), line.get("max_model_len")))[
            budget - 1]

    with_knob = grid(*knob)
    [answer] = json.loads(cli("--model", model, "--gpu", gpu, "--gpus", str(budget), *question, *knob, "--json")[1])
    assert cell(with_knob) == ({**answer["plans"][0], "unused_gpus": budget - answer["plans"][0]["gpus"]}
                               if answer["plans"] else None)
    assert cell(with_knob) != cell(grid())
    assert {name: with_knob[name] for name in echo} == echo and list(with_knob)[-4:] == [
        "budget_gpus", "rows", "schema_version", "rft_solver_version"]
    assert cli(*mapped, *knob)[1].splitlines()[0].endswith(title.replace("WEIGHTS", str(weights)))


def test_a_maps_cells_are_solved_with_the_workers_asked_for_and_the_same_whatever_their_number(cli, monkeypatch):
    real, workers = solver.solve.best_plan, []

    def counting(catalog, query, gpu, proven):
        workers.append(query.workers)
        return real(catalog, query, gpu, proven=proven)

    assert cli("map", "--gpu", "a100", "--model", "4B", "--gpus-up-to", "2", "--workers", "1", "--json")[1] == cli(
        "map", "--gpu", "a100", "--model", "4B", "--gpus-up-to", "2", "--workers", "4", "--json")[1]
    monkeypatch.setattr(solver.maps, "best_plan", counting)
    assert cli("map", "--gpu", "a100", "--model", "4B", "--gpus-up-to", "2", "--workers", "4")[0] == 0
    assert workers == [4, 4]
    assert cli("map", "--workers", "0") == (2, "", ("usage: solve map [options] (--help lists them)\nsolve map: "
                                                    "error: argument --workers: must be a whole number from 1 to 1024, "
                                                    "got 0\n"))


def test_a_map_refuses_estimates_alone_with_none_and_lowered_budgets_without_estimates_as_solve_does(cli):
    for flags in (["--estimate", "--no-estimate"], ["--no-estimate", "--token-budget", "auto"]):
        status, _, err = cli("map", "--gpu", "a100", *flags)
        _, _, planners = cli("--model", "4B", "--gpu", "a100", *flags)
        assert status == 2 and err.splitlines()[-1] == planners.splitlines()[-1].replace("solve:", "solve map:")


def test_a_map_legend_gives_what_offload_cells_need_past_a_node_s_host_memory():
    """mapcaution91: on RTX 4090s, Offload cells of Qwen3-4B and 8B need more host memory than the 64 GiB a
    workstation commonly has; the legend said only that nothing checked it, and left the code out of its line of
    other cautions. A line of its own now gives how many cells, their needs and the option that checks them."""
    maps = solver.map_plans(["0.6B", "4B", "8B"], gpu="4090", budgets=[1, 2])
    need = "host memory: 4 cells need 93.4 to 183.0 GiB per node, more than the 64 GiB assumed ({} checks it)"
    for names, option in ((COMMAND_OPTIONS, "--host-ram"), (API_OPTIONS, "host_ram_gb")):
        text = solver.map_text(maps, width=400, option_names=names)
        assert need.format(option) in text.splitlines() and "host-memory-unchecked" not in text
    needs = [plan.host_memory_gb for row in maps[0].rows for plan in row.plans
             if plan and CautionCode.HOST_MEMORY_UNCHECKED in plan.caution_codes]  # --json's, each cell's
    assert needs == [93.4, 93.4, 183.0, 183.0]


def test_a_map_legend_says_offload_cells_host_memory_is_unchecked_without_host_ram(cli):
    """Llama-3.1-70B on H100s trains only with Offload, whose states need 1258.2 GiB of one node's host memory on up
    to 8 GPUs (1404.7 while the model loads): without --host-ram the legend says nothing checked that, and what the
    cells need past what a node is assumed to have (mapcaution91); with it, the cells keep within it."""
    flags = ("map", "--gpu", "h100", "--model", "llama3.1-70b", "--gpus-up-to", "2")
    status, out, _ = cli(*flags)
    assert status == 0 and "14k E+O@1~!†" in out
    assert out.endswith("settings: E Env, O Offload (host memory per node not checked: --host-ram not given), "
                        "SPn Ulysses SP, van vanilla\n"
                        "† one trainer GPU: Trinity-RFT's guide strongly advises more GPUs\n"
                        "host memory: 2 cells need 1404.7 GiB per node, more than a node is assumed to have "
                        "(--host-ram checks it)\n"
                        "other cautions, unmarked (their words: --json): thin-headroom (2 cells: ≤1, ≤2)\n")
    status, out, _ = cli(*flags, "--host-ram", "1024")
    assert status == 0 and "14k" not in out
    assert out.endswith("settings: E Env, O Offload, SPn Ulysses SP, van vanilla\n")
    status, out, _ = cli(*flags, "--host-ram", "2048")  # its Offload cells checked: within 2048 GiB
    assert status == 0 and "14k E+O@1~!†" in out
    assert out.endswith("settings: E Env, O Offload, SPn Ulysses SP, van vanilla\n"
                        "† one trainer GPU: Trinity-RFT's guide strongly advises more GPUs\n"
                        "other cautions, unmarked (their words: --json): thin-headroom (2 cells: ≤1, ≤2)\n")
    grid = cheapest_by_length(load_catalog(), "A100-80GB", "Qwen3-0.6B", [4096], [1, 2])  # vanilla: no Offload
    row = LengthMapRow(max_model_len=4096, plans=(grid[4096, 1], grid[4096, 2]))
    out_file = io.StringIO()
    Console(width=200, file=out_file).print(map_view(GpuMap(gpu="A100-80GB", by="len", model="Qwen3-0.6B",
                                                            budget_gpus=(1, 2), rows=(row,)), "map"))
    assert "van@1" in out_file.getvalue() and "not checked" not in out_file.getvalue()


def _map_lines(rows: tuple[LengthMapRow, ...] | tuple[ModelMapRow, ...], limited: bool = False) -> list[str]:
    """`map_view`'s lines for a map of A100-80GB over budgets 1 and 2 with `rows` (by length, or by model)."""
    by = "len" if isinstance(rows[0], LengthMapRow) else "model"
    out = io.StringIO()
    model = "Qwen3-0.6B" if by == "len" else None
    Console(width=200, file=out).print(map_view(GpuMap(gpu="A100-80GB", by=by, model=model, budget_gpus=(1, 2),
                                                       rows=rows), "map", limited=limited))
    return out.getvalue().splitlines()


def test_a_map_by_length_says_the_untrained_lengths_past_its_longest_in_one_line_and_a_map_by_model_keeps_its_rows():
    plan = cheapest_by_length(CATALOG, "A100-80GB", "Qwen3-0.6B", [4096], [1])[4096, 1]
    trained, untrained = (plan, plan), (None, None)
    # One length left out is named alone; within limits, the line says so.
    lines = _map_lines((LengthMapRow(max_model_len=4096, plans=trained),
                        LengthMapRow(max_model_len=8192, plans=untrained)), limited=True)
    assert "8192 tokens: nothing trains on up to 2 GPUs within the limits in the title (rows left out)" in lines
    assert not any("│   8192 │" in line for line in lines)
    # Where no length trains, the first row stays and the line names the rest.
    lines = _map_lines(tuple(LengthMapRow(max_model_len=length, plans=untrained) for length in (4096, 8192, 12288)))
    assert any(line.startswith("│   4096 │") for line in lines)
    assert "8192 to 12288 tokens: nothing trains on up to 2 GPUs (rows left out)" in lines
    # A map by model keeps a model that trains nowhere: that it does not is its answer.
    lines = _map_lines((ModelMapRow(model="Qwen3-0.6B", plans=trained),
                        ModelMapRow(model="Qwen3-32B", plans=untrained)))
    assert any(line.startswith("│ Qwen3-32B") for line in lines) and not any("rows left out" in line for line in lines)


@pytest.mark.parametrize("name", ["map.png", "map.PDF", "map.yaml"])  # map.json: test_apirest2_s75
def test_an_svg_named_as_another_format_is_refused_before_any_map(cli, tmp_path: Path, name: str):
    # A user who wants a picture for a slide writes --svg map.png: the file would hold SVG text that no PNG viewer
    # opens, so it is refused, as --out frag.json is (the map is not worked out first: the file is named wrong).
    target = tmp_path / name
    kind = target.suffix[1:].upper()
    assert cli("map", "--gpu", "h20", "--model", "8B", "--svg", str(target)) == (
        2, "", f"solve map: error: --svg {target}: --svg writes SVG, not {kind}: name the file .svg\n")
    assert list(tmp_path.iterdir()) == []


def test_a_map_of_nine_columns_spaces_its_gpu_counts_and_names_a_cautions_three_cells_and_fits_its_exact_width():
    # Nine budget columns (nodes of 16: none merged) put a space before each GPU count; a caution on three cells, as
    # many as the legend names, names them; a width the map's table takes exactly fits it, all its budgets kept.
    plan = cheapest_by_length(CATALOG, "A100-80GB", "Qwen3-0.6B", [4096], [1])[4096, 1]
    thin = plan.model_copy(update={"cautions": ("thin headroom",), "caution_codes": (CautionCode.THIN_HEADROOM,)})
    budgets = tuple(range(1, 10))
    nine = GpuMap(gpu="A100-80GB", by="model", node_gpus=16, budget_gpus=budgets,
                  rows=(ModelMapRow(model="Qwen3-0.6B", plans=(thin, thin, thin, *[plan] * 6)),))
    out = io.StringIO()
    Console(width=300, file=out).print(map_view(nine, "map"))
    assert "4k van @1" in out.getvalue() and "van@1" not in out.getvalue()
    assert out.getvalue().endswith("other cautions, unmarked (their words: --json): thin-headroom (3 cells: ≤1, ≤2, "
                                   "≤3)\n")
    two = GpuMap(gpu="A100-80GB", by="model", budget_gpus=(1, 2), rows=(ModelMapRow(model="Qwen3-0.6B",
                                                                                    plans=(plan, None)),))
    whole = maps_width(map_views([two]))
    assert fitting_budgets([two], whole) == (1, 2) and fitting_budgets([two], whole - 1) != (1, 2)


def test_a_map_past_a_node_of_as_many_runs_as_its_columns_keeps_each_run(cli):
    # Budgets 1 to 16 on nodes of 8 whose plans make five runs, as many as a map past a node shows: each keeps its
    # column, ≤3 too, which holds no power of two.
    plan = cheapest_by_length(CATALOG, "A100-80GB", "Qwen3-0.6B", [4096], [1])[4096, 1]
    plans = [plan.model_copy(update={"gpus": min(budget, 4) if budget <= 8 else 9}) for budget in range(1, 17)]
    runs = GpuMap(gpu="A100-80GB", by="model", budget_gpus=tuple(range(1, 17)),
                  rows=(ModelMapRow(model="Qwen3-0.6B", plans=tuple(plans)),))
    out = io.StringIO()
    Console(width=300, file=out).print(map_view(runs, "map"))
    header = next(line for line in out.getvalue().splitlines() if "model" in line)
    assert re.findall(r"≤[\d-]+", header) == ["≤1", "≤2", "≤3", "≤4-8", "≤9-16"] and "left out" not in out.getvalue()
    # Nodes of 8 GPUs given are the default's: neither the title nor the JSON names them.
    status, out, _ = cli("map", "--gpu", "a100-80g", "--model", "0.6B", "--gpus-up-to", "1", "--node-gpus", "8")
    assert status == 0 and out.splitlines()[0] == "A100-80GB: longest context per model and GPU budget"
    assert "node_gpus" not in json.loads(cli("map", "--gpu", "a100-80g", "--model", "0.6B", "--gpus-up-to", "1",
                                             "--node-gpus", "8", "--json")[1])[0]
