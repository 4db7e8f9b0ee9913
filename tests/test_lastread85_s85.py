"""A last read of session s85's changes (lastread85): each test failed before its fix."""

from __future__ import annotations


def test_a_length_written_in_digits_is_not_told_it_was_written_in_thousands(cli):
    # --len 134144 is what 131k reads as, but written so it is meant: no note that "--len 131k" was given
    for command in (("memory", "--gpus", "8"), ()):
        status, out, err = cli(*command, "--model", "8B", "--gpu", "h100", "--len", "134144")
        assert status in (0, 1) and err == "" and out
    # written in thousands, however spelled, it is noted
    _, _, err = cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "8", "--len=131K")
    assert err == "solve memory: note: --len 131k is 134144 tokens (k is 1024); for 131072 tokens write --len 128k\n"
