"""Session 85's doc claims checked against the code (helper docstruth21a): guide.md's host-memory figures under
"When nothing trains" are what the reasons say now that a run with no release named counts every rank loading the
model at start-up; its past-one-node map of Qwen3-32B within 512 GiB per node is asked under Trinity 0.6, which loads
the model on rank 0 alone on H100s, so that two nodes have a plan as its words say; and planner.md's host memory per
node of Qwen3-32B on 1 to 8 H100s is Trinity 0.6's, as it now says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_tokbudget_s72 import Cli

DOCS = Path(__file__).resolve().parent.parent / "docs"
GUIDE = " ".join((DOCS / "guide.md").read_text(encoding="utf-8").split())
PLANNER = " ".join((DOCS / "planner.md").read_text(encoding="utf-8").split())


@pytest.mark.parametrize(("asked", "said"), [
    (("--model", "14B", "--len", "64k", "--gpus", "4", "--gpu", "a100", "--host-ram", "256"),
     "Env + Offload + SP=4 on 4 GPUs trains it, and with Offload it needs 381.1 GiB of host memory per node"),
    (("--model", "32B", "--len", "32k", "--gpu", "a100", "--host-ram", "100", "--no-offload"),
     "Offload + SP=2 on 6 GPUs, 1086.3 GiB per node")])
def test_the_guides_host_ram_reasons_name_the_need_the_code_gives(cli: Cli, asked: tuple[str, ...], said: str):
    status, out, _ = cli(*asked)
    need = re.search(r"(\d+\.\d) GiB", said)
    assert need and status == 1 and f"it needs {need[1]} GiB of host memory per node" in " ".join(out.split())
    assert said in GUIDE


def _host_need(cli: Cli, model: str, gpus: int, *release: str) -> str:
    """The host memory per node an Offload plan of `model` on exactly `gpus` H100s needs, as its line says."""
    _, out, _ = cli("--model", model, "--len", "4k", "--gpus", str(gpus), "--exact", "--gpu", "h100", "--offload",
                    *release)
    return re.findall(r"^host memory +(\d+\.\d) GiB per node", out, re.MULTILINE)[0]


def test_the_guides_least_need_example_is_trinity_06s(cli: Cli):
    # 904.1 on 8 and 709.1 on 5 are Trinity 0.6's needs; with no release named every rank loads the model, more.
    assert "needs 904.1 GiB per node on 8 H100s, but 709.1 on 5 (`--trinity-version 0.6`" in GUIDE
    assert [_host_need(cli, "Qwen2.5-32B", gpus, "--trinity-version", "0.6") for gpus in (8, 5)] == ["904.1", "709.1"]
    assert [_host_need(cli, "Qwen2.5-32B", gpus) for gpus in (8, 5)] == ["1416.3", "920.2"]


def test_planners_host_need_per_count_is_trinity_06s(cli: Cli):
    said = re.search(r"Qwen3-32B on H100s needs (\d+\.\d) GiB on 1, 2, 4 or 8 GPUs, (\d+\.\d) on 5, (\d+\.\d) on 3 "
                     r"or 6 and (\d+\.\d) on 7 \(`--trinity-version 0\.6`", PLANNER)
    assert said
    needs = {gpus: _host_need(cli, "32B", gpus, "--trinity-version", "0.6") for gpus in range(1, 9)}
    assert [needs[1], needs[2], needs[4], needs[8]] == [said[1]] * 4
    assert [needs[5], needs[3], needs[6], needs[7]] == [said[2], said[3], said[3], said[4]]
    assert _host_need(cli, "32B", 8) == "1256.4"  # no release named: every rank loads the model at start-up


def test_the_guides_two_node_map_has_the_plan_its_words_say(cli: Cli):
    asked = "solve map --gpu h100 --model 32B --host-ram 512 --gpus-up-to 16"
    shown = GUIDE.split(f"$ {asked}")
    assert len(shown) == 2 and shown[1].startswith(" --trinity-version 0.6 ")
    assert "budgets 1 to 15 are one column, as nothing trains there, and two nodes train 155k tokens" in GUIDE
    _, out, _ = cli(*asked.split()[1:], "--trinity-version", "0.6")
    assert "┃ model     ┃ ≤1-15 GPUs ┃      ≤16 GPUs      ┃" in out
    assert "│ Qwen3-32B │     -      │ 155k E+O+SP8@16~!^ │" in out
    _, out, _ = cli(*asked.split()[1:])  # no release named: every rank loads the model, and no budget trains
    assert "┃ model     ┃ ≤1-16 GPUs ┃" in out and "every cell stays `-`" in GUIDE


def test_the_host_limit_example_is_asked_where_it_has_the_line_its_words_read(cli: Cli):
    # With no release named every rank of the node loads Qwen3-8B, more than 96 GiB hold for any plan: no plan, and
    # no host limit line to read. Under Trinity 0.5.1 (rank 0 loads it) the line is there, with the figure both pages
    # say.
    asked = ("--model", "8B", "--gpu", "a100", "--gpus", "6", "--maximize", "len", "--host-ram", "96")
    assert cli(*asked)[0] == 1
    status, out, _ = cli(*asked, "--trinity-version", "0.5.1")
    line = " ".join(out.split("host limit", 1)[1].split("\napply")[0].split())
    assert status == 0 and line == (
        "with 162.6 GiB of host memory per node, the best plan is Env + Offload + SP=4 on 4 GPUs at 102400 tokens, "
        "cost 0.6565 (documented): --host-ram 96 GiB costs 51200 tokens")
    assert f"$ solve {' '.join(asked)} --trinity-version 0.5.1 " in GUIDE
    assert "The limit rules Offload out (162.6 GiB per node); more host memory doubles the length." in GUIDE
    assert ("`--maximize len --gpus 6 --host-ram 96 --trinity-version 0.5.1` for Qwen3-8B on A100s: Env + SP=4 on "
            "4 GPUs at 51200 tokens, where `with 162.6 GiB of host memory per node` Env + Offload + SP=4 on 4 GPUs "
            "reaches 102400: `--host-ram 96 GiB costs 51200 tokens`") in PLANNER
