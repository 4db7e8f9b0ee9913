"""A CLI reviewer's slips, across the commands: an option that says the opposite of a flag is told the default, not
the flag; a flag given a value is told how to give it, with ``=`` or after it; a last ``--`` ends the options, and
a word after one is not told the option it spells; an option's name without hyphens is told the option in every
command; solve map's --model list refuses an empty name as --gpu's does."""

from __future__ import annotations

import json

import pytest

USAGE = "usage: {} [options] (--help lists them)\n"


@pytest.mark.parametrize(("argv", "error"), [
    (["--model", "8B", "--no-json"],
     "solve: error: unrecognized arguments: --no-json (the default is without --json: leave --no-json out)"),
    (["--model", "8B", "--nojson"],
     "solve: error: unrecognized arguments: --nojson (the default is without --json: leave --nojson out)"),
    (["cluster", "fleet.yaml", "--nowiden"],
     "solve cluster: error: unrecognized arguments: --nowiden (did you mean --no-widen?)"),
    (["--no-explain"],
     "solve: error: unrecognized arguments: --no-explain (the default is without --explain: leave --no-explain out)"),
    (["cluster", "fleet.yaml", "--widen"],
     "solve cluster: error: unrecognized arguments: --widen (the default is without --no-widen: leave --widen out)"),
    (["calibrate", "--without-tables"],
     ("solve calibrate: error: unrecognized arguments: --without-tables (the default is without --with-tables: leave "
      "--without-tables out)")),
    (["examples", "--no-force"],
     ("solve examples: error: unrecognized arguments: --no-force (the default is without --force: leave --no-force "
      "out)")),
])
def test_the_opposite_of_a_flag_is_told_the_default_not_the_flag(cli, argv, error):
    """--no-json was told 'did you mean --json?', and --widen '--no-widen?': the opposite of what was asked."""
    prog = error.split(": error")[0]
    assert cli(*argv) == (2, "", USAGE.format(prog) + error + "\n")


@pytest.mark.parametrize(("argv", "error"), [
    (["cluster", "fleet.yaml", "--node_gpus", "8"],
     "solve cluster: error: unrecognized arguments: --node_gpus 8 (the file gives it: a pool's gpus_per_node)"),
    (["--model", "8B", "--Node_Count", "2"],
     ("solve: error: unrecognized arguments: --Node_Count 2 (solve counts the trainer's GPUs, not nodes: --gpus 16 for "
      "2 nodes of 8 GPUs; --node-gpus N for nodes of another size)")),
    (["map", "--NODE_INTERCONNECT", "ib"],
     ("solve map: error: unrecognized arguments: --NODE_INTERCONNECT ib (the link between nodes is no option: the cost "
      "takes a trainer's nodes as joined by InfiniBand or RoCE")),
])
def test_a_name_that_starts_with_no_is_not_read_as_its_opposite(cli, argv, error):
    """smalls92: --node_gpus was spelled --no-de-gpus, as --nojson is --no-json, so solve cluster did not say that its
    file gives it (two lookups worked round that for --node-interconnect and the node counts)."""
    prog = error.split(": error")[0]
    status, out, err = cli(*argv)
    assert (status, out) == (2, "") and err.startswith(USAGE.format(prog) + error)


@pytest.mark.parametrize(("argv", "error"), [
    (["--env=true"], "solve: error: --env takes no value, got 'true': --env or --no-env"),
    (["--no-offload=1"], "solve: error: --no-offload takes no value, got '1': --offload or --no-offload"),
    (["--estimate=yes"], "solve: error: --estimate takes no value, got 'yes': --estimate or --no-estimate"),
    (["map", "--json=no"], "solve map: error: --json takes no value, got 'no': --json, or leave it out"),
    (["cluster", "fleet.yaml", "--no-widen=1"],
     "solve cluster: error: --no-widen takes no value, got '1': --no-widen, or leave it out"),
    (["--model", "8B", "--json", "yes"],
     "solve: error: unrecognized arguments: yes (--json takes no value: --json, or leave it out)"),
    (["--estimate", "yes"],
     "solve: error: unrecognized arguments: yes (--estimate takes no value: --estimate or --no-estimate)"),
])
def test_a_flag_given_a_value_is_told_how_to_give_it(cli, argv, error):
    """argparse said 'ignored explicit argument' for --env=true, and nothing of the flag for --json yes."""
    prog = error.split(": error")[0]
    assert cli(*argv) == (2, "", USAGE.format(prog) + error + "\n")


def test_a_last_double_hyphen_ends_the_options_of_every_command(cli, tmp_path):
    """`solve ... --` and `solve examples DIR --force --` were refused ('unrecognized arguments: --'), while solve
    cluster took it; a word after it is still refused."""
    status, out, err = cli("examples", str(tmp_path / "ex"), "--force", "--")
    assert (status, err) == (0, "") and out.startswith(f"wrote {tmp_path / 'ex' / 'few-cells.yaml'}\n")
    table = ["tables", "--gpu", "h20", "--gpus", "1", "--json"]
    assert cli(*table, "--") == cli(*table)
    refused = ("solve tables: error: unrecognized arguments: -- extra (after --, no word is an option, and solve "
               "tables takes none there)\n")
    assert cli("tables", "--", "extra") == (2, "", USAGE.format("solve tables") + refused)


def test_an_option_after_a_double_hyphen_is_not_told_itself(cli):
    """`solve -- --model 8B` was told 'did you mean --model?', the word it gave, which `--` made no option."""
    assert cli("--", "--model", "8B") == (2, "", USAGE.format("solve") + "solve: error: unrecognized arguments: -- "
                                          "--model 8B (after --, no word is an option, and solve takes none there)\n")


@pytest.mark.parametrize(("argv", "error"), [
    (["map", "help"], "solve map: error: unrecognized arguments: help (did you mean the option --help?)"),
    (["tables", "json"], "solve tables: error: unrecognized arguments: json (did you mean the option --json?)"),
    (["help"], ("solve: error: unknown command 'help' (did you mean the option --help?); commands: tables, cluster, "
                "calibrate, memory, map, examples, or none to plan")),
])
def test_an_options_name_without_hyphens_is_told_the_option_in_every_command(cli, argv, error):
    """`solve help` was told --help, but `solve map help` nothing."""
    prog = error.split(": error")[0]
    assert cli(*argv) == (2, "", USAGE.format(prog) + error + "\n")


@pytest.mark.parametrize("models", ["8B,", "8B,,14B", " , "])
def test_an_empty_name_in_solve_maps_model_list_is_refused_as_in_its_gpu_list(cli, models):
    """It was looked up as a model: unknown model '', with the catalogue's whole list."""
    assert cli("map", "--gpu", "h20", "--model", models) == (
        2, "", USAGE.format("solve map") + f"solve map: error: argument --model: an empty name in '{models}': give a "
                                           "model, or several separated by commas (32B,8B)\n")


def test_solve_maps_model_list_still_takes_spaces_after_its_commas(cli):
    status, out, err = cli("map", "--gpu", "h20", "--gpus-up-to", "1", "--model", "8B, 14B", "--json")
    assert (status, err) == (0, "")
    assert [row["model"] for row in json.loads(out)[0]["rows"]] == ["Qwen3-8B", "Qwen3-14B"]


@pytest.mark.parametrize(("command", "defaults"), [
    ([], ["default: the shipped costs.yaml", "default: the shipped memory-model.yaml", "(default: not checked)"]),
    (["map"], ["default: the shipped costs.yaml", "default: the shipped memory-model.yaml", "(default: not checked)"]),
    (["cluster"], ["default: the shipped costs.yaml", "default: the shipped memory-model.yaml"]),
    (["memory"], ["default: the shipped memory-model.yaml", "(default: not checked)"]),
])
def test_the_help_shows_the_defaults_of_the_files_and_the_host_memory(cli, command, defaults):
    """--weights, --memory-model and --host-ram said nothing of what applies without them."""
    status, out, err = cli(*command, "--help")
    flat = " ".join(out.split())
    assert (status, err) == (0, "") and [default in flat for default in defaults] == [True] * len(defaults)
