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

