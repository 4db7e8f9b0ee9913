"""Lines s85 changed that no test ran or none checked (coverage26): a --time-limit whose number before another unit is
no number is refused without seconds meant; the other tools' option names s85 added to the hints, each told its
option."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("given", ["1,5min", "1.2.3m", "x2 sec"])
def test_a_time_limit_in_another_unit_whose_number_is_none_gets_no_seconds_meant(cli, given: str):
    # The unit reads (`OTHER_TIME_UNIT`), but what comes before it is no number: no seconds to offer, a decimal comma
    # (1,5) included.
    status, out, err = cli("--model", "8B", "--time-limit", given)
    assert (status, out, err.splitlines()[-1]) == (
        2, "", f"solve: error: argument --time-limit: expected a number of seconds (10 or 10s), got {given!r}")


@pytest.mark.parametrize(("argv", "hint"), [
    (("--ppo-max-token-len-per-gpu", "8192"), "(did you mean --token-budget?)"),
    (("--log-prob-max-token-len-per-gpu", "8192"), "(did you mean --token-budget?)"),
    (("--optimizer-offload",), "(did you mean --offload?)"),
    (("--fsdp-offload",), "(did you mean --offload?)"),
    (("--algo", "ppo"), "(did you mean --critic?)"),
    (("--algorithm-type", "dpo"), "(did you mean --dpo?)"),
    (("--monochrome",), ("(colour follows the environment, not an option: NO_COLOR=1 turns a terminal's off, and "
                         "FORCE_COLOR=1 turns it on in a pipe, which otherwise gets none)")),
    (("--colours",), ("(colour follows the environment, not an option: NO_COLOR=1 turns a terminal's off, and "
                      "FORCE_COLOR=1 turns it on in a pipe, which otherwise gets none)")),
])
def test_other_tools_option_names_are_told_the_option(cli, argv: tuple[str, ...], hint: str):
    status, out, err = cli("--model", "8B", *argv)
    assert (status, out, err.splitlines()[-1]) == (
        2, "", f"solve: error: unrecognized arguments: {' '.join(argv)} {hint}")


def test_emit_yml_is_told_emit_trinity(cli):
    status, out, err = cli("--model", "8B", "--emit", "yml")
    assert (status, out, err.splitlines()[-1]) == (2, "", (
        "solve: error: argument --emit: invalid choice: 'yml' (choose from 'trinity'); did you mean 'trinity'? "
        "(--emit trinity prints the plan as Trinity YAML)"))
