"""Several GPU types in one question (session 58): ``solve --gpu a100,h100`` and ``solve map --gpu ...`` answer for
each, in the order given, as they do for the tabled GPU types without --gpu; ``solver.plan(gpu=[...])`` and
``solver.map_plans(gpu=[...])`` take a list or tuple; a GPU type named twice is answered once; an empty name, an
unknown one, a list with --out, or a list for solve memory or solve tables is refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from option_reference import option_reference

import solver
from solver.tables import Fleet, Job, Pool

LENGTH = ("--model", "4B", "--len", "32k")
UNKNOWN_H1000 = "solve: error: unknown GPU 'h1000'"


def _gpus(out: str) -> list[str]:
    return [answer["gpu"] for answer in json.loads(out)]


def test_a_list_of_the_tabled_gpu_types_prints_what_no_gpu_prints(cli):
    assert cli(*LENGTH, "--gpu", "A100-80GB,H20-96GB") == (*cli(*LENGTH)[:2], "")
    status, out, err = cli(*LENGTH, "--gpu", "a100,h20")
    assert (status, out) == cli(*LENGTH)[:2]
    assert [line.split(" · ")[0] for line in out.splitlines() if " · " in line] == ["A100-80GB", "H20-96GB"]
    assert err == ("solve: note: --gpu 'a100' is taken as A100-80GB; nodes of A100-40GB need that name (the memory "
                   "decides the plans)\n")
    for flags in (("--json",), ("--top", "3", "--json"), ("--explain", "--json"), ("--emit", "trinity")):
        assert cli(*LENGTH, "--gpu", "a100,h20", *flags)[:2] == cli(*LENGTH, *flags)[:2]


def test_the_answers_follow_the_order_given_each_as_its_gpu_alone_gives_it(cli):
    status, out, _ = cli(*LENGTH, "--gpus", "8", "--gpu", "h200,a100,h100", "--json")
    assert (status, _gpus(out)) == (0, ["H200-141GB", "A100-80GB", "H100-80GB"])
    alone = [json.loads(cli(*LENGTH, "--gpus", "8", "--gpu", gpu, "--json")[1])[0] for gpu in ("h200", "a100", "h100")]
    assert json.loads(out) == alone
    assert [(answer["plans"][0]["gpus"], answer["plans"][0]["sp"]) for answer in alone] == [(8, 1), (8, 2), (8, 2)]
    status, out, _ = cli(*LENGTH, "--gpu", "h100,h20")
    assert status == 0
    assert [line for line in out.splitlines() if " · " in line] == [
        "H100-80GB · Qwen3-4B · cheapest plan for 32768 tokens within 6 GPUs: optimal",
        "H20-96GB · Qwen3-4B · cheapest plan for 32768 tokens within 6 GPUs: optimal"]


def test_one_budget_for_the_listed_gpu_types_the_largest_of_their_tables(cli):
    # Alone, the H200 (no tables) plans within a node of 8; listed with the A100, within the A100's 6, as both are.
    assert "within 8 GPUs" in cli(*LENGTH, "--gpu", "h200")[1].splitlines()[0]
    out = cli(*LENGTH, "--gpu", "h200,a100", "--json")[1]
    assert [(answer["budget_gpus"], answer["plans"][0]["gpus"]) for answer in json.loads(out)] == [(6, 6), (6, 6)]
    out = cli(*LENGTH, "--gpu", "h200,b200", "--json")[1]
    assert [answer["budget_gpus"] for answer in json.loads(out)] == [8, 8]


def test_a_listed_gpu_type_without_a_plan_exits_1_beside_one_with_one(cli):
    status, out, _ = cli("--model", "14B", "--len", "64k", "--gpus", "2", "--gpu", "a100,h200", "--json")
    assert status == 1
    assert [(answer["gpu"], len(answer["plans"])) for answer in json.loads(out)] == [("A100-80GB", 0),
                                                                                     ("H200-141GB", 1)]
    status, out, _ = cli("--model", "14B", "--len", "64k", "--gpus", "2", "--gpu", "h200")
    assert status == 0


@pytest.mark.parametrize("listed", ["a100,h1000", "h1000,a100", "a100, h1000"])
def test_an_unknown_name_in_a_list_is_refused_by_its_own_name(cli, listed: str):
    status, out, err = cli(*LENGTH, "--gpu", listed)
    assert (status, out) == (2, "")
    assert err.startswith(UNKNOWN_H1000 + " (did you mean H100-80GB?); accepted: A100-40GB/80GB, ")
    assert err.endswith("; or, for a GPU type of your own, give its memory: --gpu-memory SIZE\n")
    assert err.count("\n") == 1


@pytest.mark.parametrize("listed", ["a100,", ",a100", "a100,,h20", "a100, ,h20", ""])
def test_an_empty_name_in_a_list_is_refused(cli, listed: str):
    for command in ((), ("map",)):
        status, out, err = cli(*command, *LENGTH[:2], "--gpu", listed)
        assert (status, out) == (2, "")
        assert err.splitlines()[1] == (f"solve{' map' if command else ''}: error: argument --gpu: an empty name in "
                                       f"{listed!r}: give a GPU type, or several separated by commas (a100,h100)")


def test_a_gpu_type_named_twice_is_answered_once(cli, tmp_path: Path):
    status, out, err = cli(*LENGTH, "--gpu", "h20,a100,H20-96GB,h20", "--json")
    assert (status, _gpus(out)) == (0, ["H20-96GB", "A100-80GB"])
    assert err.count("is taken as A100-80GB") == 1
    written = tmp_path / "plan.yaml"
    status, out, _ = cli(*LENGTH, "--gpu", "a100,A100-80GB", "--out", str(written))
    assert status == 0
    assert out.splitlines()[0].startswith("A100-80GB · ")
    assert out.count(" · Qwen3-4B · ") == 1
    assert written.read_text(encoding="utf-8") == cli(*LENGTH, "--gpu", "a100", "--emit", "trinity")[1]


def test_out_and_write_refuse_a_list_of_two_gpu_types_as_they_refuse_no_gpu(cli, tmp_path: Path):
    written = tmp_path / "plan.yaml"
    status, out, err = cli(*LENGTH, "--gpu", "a100,h100", "--out", str(written))
    assert (status, out, written.exists()) == (2, "", False)
    assert err.endswith("solve: error: --out takes one plan: choose one GPU type with --gpu (A100-80GB or "
                        "H100-80GB, the ones this answer covers, or any other of the catalogue)\n")


def test_gpu_memory_names_the_one_listed_gpu_type_the_catalogue_lacks(cli):
    status, out, _ = cli(*LENGTH, "--gpus", "8", "--gpu", "a100,mine", "--gpu-memory", "64GiB", "--json")
    assert (status, _gpus(out)) == (0, ["A100-80GB", "mine"])
    alone = cli(*LENGTH, "--gpus", "8", "--gpu", "mine", "--gpu-memory", "64GiB", "--json")[1]
    assert json.loads(out)[1] == json.loads(alone)[0]
    status, out, err = cli(*LENGTH, "--gpu", "x1,x2", "--gpu-memory", "64GiB")
    assert (status, out) == (2, "")
    assert err == ("solve: error: --gpu names 2 GPU types the catalogue lacks ('x1', 'x2'), and --gpu-memory gives "
                   "the memory of one: name one GPU type of your own, the others from the catalogue\n")
    status, _, err = cli(*LENGTH, "--gpu", "a100,h100", "--gpu-memory", "64GiB")
    assert status == 2
    assert err == ("solve: error: --gpu a100,h100 names A100-80GB (80.0 GiB), H100-80GB (79.6 GiB), GPU types whose "
                   "memory is each known: drop --gpu-memory, or give your GPU type a name of its own\n")
    status, _, err = cli(*LENGTH, "--gpu", "a100", "--gpu-memory", "64GiB")
    assert status == 2
    assert err == ("solve: error: --gpu a100 names A100-80GB (80.0 GiB), a GPU type whose memory is known: drop "
                   "--gpu-memory, or give your GPU type a name of its own\n")


def test_map_draws_a_map_for_each_listed_gpu_type_in_order(cli):
    flags = ("map", "--model", "4B", "--gpus-up-to", "2")
    status, out, _ = cli(*flags, "--gpu", "h200,a100,h200", "--json")
    assert (status, _gpus(out)) == (0, ["H200-141GB", "A100-80GB"])
    assert json.loads(out) == [json.loads(cli(*flags, "--gpu", gpu, "--json")[1])[0] for gpu in ("h200", "a100")]
    status, out, _ = cli(*flags, "--gpu", "h200,a100")
    assert status == 0
    assert [line for line in out.splitlines() if "longest context per model" in line] == [
        "H200-141GB: longest context per model and GPU budget", "A100-80GB: longest context per model and GPU budget"]
    status, out, err = cli(*flags, "--gpu", "a100,h1000")
    assert (status, out) == (2, "")
    assert err.startswith(UNKNOWN_H1000.replace("solve:", "solve map:") + " (did you mean H100-80GB?)")


@pytest.mark.parametrize("command", [("memory", "--model", "4B", "--gpus", "2", "--len", "32k"), ("tables",)])
def test_memory_and_tables_take_one_gpu_type_and_refuse_a_list_in_one_line(cli, command: tuple[str, ...]):
    status, out, err = cli(*command, "--gpu", "a100,h20")
    assert (status, out) == (2, "")
    every = "; without --gpu, the tables for every GPU type" if command[0] == "tables" else ""  # s91: as --gpus 4,6
    assert err == (f"solve {command[0]}: error: GPU 'a100,h20' lists 2 (A100-80GB, H20-96GB) where one is asked for: "
                   f"give one, and ask for each in turn{every}\n")
    assert ("one: to compare several, solve --gpu a100,h100" if command[0] == "memory" else
            "only this GPU type, one (") in " ".join(cli(*command[:1], "--help")[1].split())


def test_the_help_says_which_commands_take_a_list(cli):
    assert "or several, a100,h100: an answer for each (default: each one with tables)" in " ".join(
        cli("--help")[1].split())
    assert "or several, a100,h100: a map for each (default: each with tables)" in " ".join(
        cli("map", "--help")[1].split())
    assert "one: to compare several, solve --gpu a100,h100" in " ".join(cli("memory", "--help")[1].split())
    # docs/cli.md's option reference, in full (session 93)
    assert ("or several, comma-separated (a100,h100,h200): an answer for each, in that order (a GPU type named twice "
            "is answered once); default: each one with tables. solve map --gpu takes a list alike (a map for each); "
            "solve tables --gpu and solve memory --gpu one") in option_reference()


def test_plan_takes_a_list_or_tuple_of_gpu_types_as_map_plans_takes_models():
    asked = {"max_model_len": 32768, "budget_gpus": 8}
    answers = solver.plan("4B", gpu=["h200", "a100", "A100-80GB"], **asked)
    assert [answer.gpu for answer in answers] == ["H200-141GB", "A100-80GB"]
    assert answers == (*solver.plan("4B", gpu="h200", **asked), *solver.plan("4B", gpu=("a100",), **asked))
    assert solver.plan("4B", gpu=("a100", "h20"), max_model_len=32768) == solver.plan("4B", max_model_len=32768)
    maps = solver.map_plans("4B", gpu=("h200", "a100"), gpus_up_to=2)
    assert [gpu_map.gpu for gpu_map in maps] == ["H200-141GB", "A100-80GB"]


@pytest.mark.parametrize(("gpu", "message"), [
    ([], r"^gpu: an empty list names no GPU type: give one or more names, or None for each GPU type with tables$"),
    (["a100", 3], r"^gpu\[1\] must be a str, got 3$"),
    (("a100", "h1000"), r"^unknown GPU 'h1000' \(did you mean H100-80GB\?\); accepted: .*solver\.described_gpu_type"),
    ("a100, h100", r"^gpu 'a100, h100' lists 2 GPU types in one string: pass them as a list, gpu=\['a100', 'h100'\]$"),
    ("a100,h1000", r"^unknown GPU 'a100,h1000'; accepted: "),
])
def test_plan_and_map_plans_refuse_an_empty_list_a_non_name_and_an_unknown_name(gpu: object, message: str):
    with pytest.raises(solver.QueryError, match=message):
        solver.plan("4B", gpu=gpu, max_model_len=32768)  # type: ignore[arg-type]
    with pytest.raises(solver.QueryError, match=message):
        solver.map_plans("4B", gpu=gpu, gpus_up_to=1)  # type: ignore[arg-type]


@pytest.mark.parametrize(("argv", "hint"), [
    (("--gpu", "all", *LENGTH), "; leave --gpu out for an answer on each GPU type with tables"),
    (("--gpu", "a100,Every", *LENGTH), "; leave --gpu out for an answer on each GPU type with tables"),
    (("map", "--gpu", "ALL"), "; leave --gpu out for a map of each GPU type with tables"),
    (("map", "--model", "8B,all"), "; leave --model out to map each model the GPU type's tables document"),
    (("--model", "*", "--gpu", "a100", "--len", "32k"),
     "; solve map, without --model, maps each model the GPU type's tables document"),
    (("map", "--by", "len", "--model", "all", "--gpu", "a100"), ""),  # --by len maps one model: none to leave out
    (("--gpu", "alll", *LENGTH), ""),  # a name of its own, not a word for all
    (("memory", "--gpu", "all", "--model", "4B", "--gpus", "1", "--len", "4k"), ""),  # one GPU type asked for
])
def test_a_word_for_all_is_refused_with_what_answers_each(cli, argv, hint):
    # --gpu all and --model all name no entry; leaving the option out answers each, which the one line says.
    status, out, err = cli(*argv)
    assert (status, out, err.count("\n")) == (2, "", 1) and " error: unknown " in err
    assert err.endswith(("--gpu-memory SIZE", "--model-config PATH")[" model " in err] + hint + "\n")


@pytest.mark.parametrize(("given", "listed"), [("h200 mi300x", "h200,mi300x"), ("h200; mi300x", "h200,mi300x"),
                                               ("b200,h200 mi300x", "b200,h200,mi300x")])
def test_gpu_types_apart_by_spaces_in_one_word_are_told_the_commas(cli, given: str, listed: str):
    # '--gpu "h200 mi300x"' was told: did you mean H200-141GB? (the MI300X dropped; persona92d)
    names = "h200 mi300x" if given.startswith("b200") else given
    assert cli(*LENGTH, "--gpu", given) == (2, "", (
        f"solve: error: --gpu '{names}' names 2 GPU types in one word (H200-141GB and MI300X): separate them by "
        f"commas, --gpu {listed}\n"))


def test_gpu_types_apart_by_spaces_in_one_word_are_refused_alike_wherever_one_is_asked_for(cli, tmp_path: Path):
    # smalls92c: solve tables --gpu 'a100 h20' and a pool's gpu: 'h200 mi300x' were told one guess (did you mean
    # A100-80GB?), where --gpu of solve, map and memory were told the two; the catalogue's check is shared now.
    both = "GPU 'a100 h20' names 2 GPU types in one word (A100-80GB and H20-96GB), where one is asked for: "
    assert cli("memory", *LENGTH, "--gpus", "2", "--gpu", "a100 h20") == (
        2, "", f"solve memory: error: {both}give one, and ask for each in turn\n")
    assert cli("tables", "--gpu", "a100 h20") == (2, "", (f"solve tables: error: {both}give one, and ask for each "
                                                          "in turn; without --gpu, the tables for every GPU type\n"))
    fleet = tmp_path / "fleet.yaml"
    for gpu, refused in (("h200 mi300x", "names 2 GPU types in one word (H200-141GB and MI300X),"),
                         ("h200,mi300x", "lists 2 (H200-141GB, MI300X)")):
        fleet.write_text(f"pools:\n  - {{name: lab, gpu: '{gpu}', nodes: 1, gpus_per_node: 8}}\n"
                         "jobs:\n  - {name: j, model: Qwen3-8B, max_model_len: 8192}\n", encoding="utf-8")
        assert cli("cluster", str(fleet)) == (2, "", (f"solve cluster: error: {fleet}: pool lab, gpu: GPU '{gpu}' "
                                                      f"{refused} where a pool takes one: give each GPU type its own "
                                                      "pool\n"))
    pool = Pool(name="lab", gpu="h200 mi300x", nodes=1, gpus_per_node=8)
    with pytest.raises(solver.QueryError, match=r"^pool lab: GPU 'h200 mi300x' names 2 GPU types in one word \(H200-141GB "
                                                r"and MI300X\), where a pool takes one: give each GPU type its own pool$"):
        solver.place(Fleet(pools=[pool], jobs=[Job(name="j", model="Qwen3-8B", max_model_len=8192)]))
    with pytest.raises(solver.QueryError, match=r"^gpu 'h200 mi300x' lists 2 GPU types in one string: pass them as a "
                                                r"list, gpu=\['h200', 'mi300x'\]$"):
        solver.plan("8B", gpu="h200 mi300x", max_model_len=8192)
    assert cli(*LENGTH, "--gpu", "h200 mi300x", "--gpu-memory", "192")[2] == (
        "solve: error: --gpu 'h200 mi300x' names 2 GPU types in one word (H200-141GB and MI300X): separate them by "
        "commas, --gpu h200,mi300x\n")
    assert cli(*LENGTH, "--gpu", "h100 h2o")[2].startswith("solve: error: unknown GPU 'h100 h2o' (did you mean ")


def test_gpu_types_in_one_word_are_found_apart_from_the_spaces_around_them():
    """mutants58: `Catalog.gpus_in_one_word` takes the words within the spaces around the name, not an empty first
    one; a name of one word, or one with a word no GPU type has, gives none."""
    catalog = solver.load_catalog()
    assert catalog.gpus_in_one_word(" h200 mi300x ") == catalog.gpus_in_one_word("h200;mi300x") == ("h200", "mi300x")
    assert catalog.gpus_in_one_word("h200") == catalog.gpus_in_one_word("h100 h2o") == ()
