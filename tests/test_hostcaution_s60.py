"""What a workstation user meets about host memory (session 60): --host-ram as free -m, free -g, free -h and
/proc/meminfo print it (a bare MiB figure of a 32-48 GB node was taken as 32-48 TB, and every plan fit)."""

from __future__ import annotations

import json

import pytest

USAGE = "usage: solve [options] (--help lists them)"
ASK = ("--model", "0.6B", "--gpu", "h100", "--gpus", "1", "--len", "4k", "--json")


@pytest.mark.parametrize(("given", "gib"), [
    ("64214MiB", 62.7), ("64214 MiB", 62.7), ("64214M", 62.7), ("64214Mi", 62.7), ("64214mb", 62.7),  # free -m's
    ("31958MiB", 31.2),  # a 32 GB node's free -m total
    ("65849636kB", 62.7), ("65849636 kB", 62.7), ("65849636KiB", 62.7),  # /proc/meminfo's MemTotal (KiB)
    ("62", 62), ("31", 31),  # free -g's (GiB, as written)
    ("62Gi", 62), ("1.5Ti", 1536), ("62G", 62),  # free -h's, and older procps's
    ("4096", 4096),  # the most a bare number is taken as
])
def test_host_ram_as_free_and_meminfo_print_it_with_its_unit_is_read_right(cli, given: str, gib: float):
    status, out, err = cli(*ASK, "--host-ram", given)
    [answer] = json.loads(out)
    assert (status, err, answer["host_ram_gb"]) == (0, "", gib)


@pytest.mark.parametrize(("given", "readings"), [
    # free -m's total of a 32 GB and of a 48 GB node: taken as 32 and 48 TB before
    ("31958", "31958MiB if it is free -m's total (31.2 GiB) or 31958GB if it is GB"),
    ("48000", "48000MiB if it is free -m's total (46.8 GiB) or 48000GB if it is GB"),
    ("49152", "49152MiB if it is free -m's total (48.0 GiB) or 49152GB if it is GB"),
    ("4097", "4097MiB if it is free -m's total (4.0 GiB) or 4097GB if it is GB"),
    ("64214", "64214MiB if it is free -m's total (62.7 GiB)"),  # past 48 TB as GB
    # /proc/meminfo's MemTotal (kB) of a 64 GB node, and of a 32 GB one (which free -m's MiB could be too)
    ("65849636", "65849636kB if it is /proc/meminfo's MemTotal (62.7 GiB)"),
    ("32849636", ("32849636MiB if it is free -m's total (32079.7 GiB) or 32849636kB if it is /proc/meminfo's "
                  "MemTotal (31.3 GiB)")),
])
def test_a_bare_number_past_4096_is_refused_naming_the_unit_of_each_reading(cli, given: str, readings: str):
    status, out, err = cli(*ASK, "--host-ram", given)
    assert (status, out) == (2, "")
    assert err.splitlines() == [USAGE, (f"solve: error: argument --host-ram: a number without a unit is GB up to "
                                        f"4096, got {given}: give its unit, {readings}")]


@pytest.mark.parametrize("given", ["64k", "64214 M B", "62 GiB RAM"])
def test_host_ram_in_no_form_it_takes_is_refused_naming_the_forms(cli, given: str):
    status, out, err = cli(*ASK, "--host-ram", given)
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] == (
        "solve: error: argument --host-ram: expected 512, 512GB, 512GiB, 2TB, 503Gi (free -h), 515870MiB (free -m) "
        f"or 528280000kB (/proc/meminfo), got '{given}'")


def test_solve_memory_reads_free_m_with_its_unit_and_refuses_it_bare(cli):
    flags = ("memory", "--model", "8B", "--gpu", "h100", "--gpus", "1", "--len", "4k", "--offload")
    status, out, _ = cli(*flags, "--host-ram", "31958MiB", "--json")
    assert (status, json.loads(out)["host_ram_gib"]) == (1, 31.2)  # Offload needs 162.6 GiB
    status, _, err = cli(*flags, "--host-ram", "31958")
    assert (status, err.splitlines()[-1]) == (2, (
        "solve memory: error: argument --host-ram: a number without a unit is GB up to 4096, got 31958: give its "
        "unit, 31958MiB if it is free -m's total (31.2 GiB) or 31958GB if it is GB"))
