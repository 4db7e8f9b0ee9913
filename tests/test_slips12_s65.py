"""Slips12 (s65): four slips a user review found (persona12), each a test that failed before its fix."""
import pytest


@pytest.mark.parametrize(("argv", "message"), [
    (["--maximize", "gpus", "--len", "32k"], ("solve: error: argument --maximize: invalid choice: 'gpus' (choose from "
                                             "'len'); did you mean --minimize gpus (the fewest trainer GPUs for "
                                             "--len)?")),
    (["--maximize", "gpu", "--len", "32k"], ("solve: error: argument --maximize: invalid choice: 'gpu' (choose from "
                                            "'len'); did you mean --minimize gpus (the fewest trainer GPUs for "
                                            "--len)?")),
    (["--minimize", "len", "--gpus", "4"], ("solve: error: argument --minimize: invalid choice: 'len' (choose from "
                                           "'gpus'); did you mean --maximize len (the longest context within "
                                           "--gpus)?")),
    (["--minimize", "length", "--gpus", "4"], ("solve: error: argument --minimize: invalid choice: 'length' (choose "
                                              "from 'gpus'); did you mean --maximize len (the longest context within "
                                              "--gpus)?")),
    # A slip within the option's own choices still gets that choice.
    (["--maximize", "length", "--gpus", "4"], ("solve: error: argument --maximize: invalid choice: 'length' (choose "
                                              "from 'len'); did you mean 'len'?")),
])
def test_the_other_goal_is_named(cli, argv: list[str], message: str):
    # --maximize gpus and --minimize len were refused with the choices alone, not the goal the user likely meant.
    status, out, err = cli("--model", "4B", *argv)
    assert (status, out) == (2, "")
    assert err.splitlines() == ["usage: solve [options] (--help lists them)", message]


@pytest.mark.parametrize(("argv", "message"), [
    (["--model", "4B", "--env", "--no-env"], "solve: error: --env and --no-env contradict each other: give one of them"),
    (["--model", "4B", "--no-offload", "--len", "8k", "--offload"],
     "solve: error: --no-offload and --offload contradict each other: give one of them"),
    (["--model", "4B", "--estimate", "--no-estimate"],
     "solve: error: --estimate and --no-estimate contradict each other: give one of them"),
    (["memory", "--model", "4B", "--no-env", "--env"],
     "solve memory: error: --no-env and --env contradict each other: give one of them"),
    (["map", "--model", "4B", "--no-estimate", "--estimate"],
     "solve map: error: --no-estimate and --estimate contradict each other: give one of them"),
    (["cluster", "fleet.yaml", "--estimate", "--no-estimate"],
     "solve cluster: error: --estimate and --no-estimate contradict each other: give one of them"),
    # The same half twice is a repeat, as an option with a value given twice is.
    (["--model", "4B", "--env", "--env"], "solve: error: argument --env/--no-env: given twice: give it once"),
])
def test_both_halves_of_an_on_off_pair_contradict(cli, argv: list[str], message: str):
    # --env --no-env was "given twice: give it once" (and --estimate --no-estimate argparse's "not allowed with"):
    # the user asked for two opposite things, not one thing twice.
    status, out, err = cli(*argv)
    assert (status, out) == (2, "")
    assert err.splitlines()[1:] == [message]
