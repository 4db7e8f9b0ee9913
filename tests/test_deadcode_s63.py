"""Lines no other test reached (coverage, session 63): each test here checks the behaviour such a line gives."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest

import solver
import solver.api
import solver.cli.cluster
from solver.api import plan
from solver.cli import main
from solver.cli.status import INTERRUPTED
from solver.tables import load_catalog
from solver.trinity import ConfigError, anchored_keys, patch_trinity_config, read_trinity_config

FLEET = Path(__file__).parents[1] / "docs" / "examples" / "fleet.yaml"
SHIPPED_MEMORY_MODEL = Path(__file__).parents[1] / "tables" / "memory-model.yaml"


def test_a_name_the_package_lacks_is_an_attribute_error_naming_it():
    with pytest.raises(AttributeError, match=r"^module 'solver' has no attribute 'plan_cluster'$"):
        solver.plan_cluster  # noqa: B018 (the lookup is the test)
    assert not hasattr(solver, "plan_cluster") and hasattr(solver, "plan")


def test_buy_with_a_memory_model_names_its_source_under_the_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    own = tmp_path / "mine.yaml"
    own.write_text(re.sub(r"(?m)^source: .*$", "source: my calibration",
                          SHIPPED_MEMORY_MODEL.read_text(encoding="utf-8"), count=1), encoding="utf-8")
    assert main(["cluster", str(FLEET), "--buy", "--memory-model", str(own)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["status: optimal; nothing to buy: the pools as they are place every job",
                         "memory model: my calibration"]


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_an_interrupted_buy_prints_its_best_purchase_and_says_so_with_130(monkeypatch: pytest.MonkeyPatch,
                                                                          capsys: pytest.CaptureFixture[str]):
    bought = solver.api.buy_nodes

    def interrupted(*args: object, **kwargs: object) -> object:  # as Ctrl-C during the search leaves it
        return bought(*args, **kwargs).model_copy(update={"interrupted": True})

    monkeypatch.setattr(solver.api, "buy_nodes", interrupted)
    assert main(["cluster", str(FLEET), "--buy"]) == INTERRUPTED
    out, err = capsys.readouterr()
    assert out.startswith("status: optimal; nothing to buy")
    assert err == "solve cluster: interrupted: the best purchase found so far is above\n"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX fork")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_plans_on_several_gpu_types_as_its_parent_does():
    # The parent's threads that solve the other GPU types are not in the child: it starts its own (solve.py's
    # os.register_at_fork), where the parent's pool would take the work and never run it.
    parent = [(answer.gpu, answer.best) for answer in plan("4B", max_model_len=8192)]
    assert len(parent) > 1
    child = os.fork()
    if child == 0:  # pragma: no cover (coverage does not follow the fork)
        same = False
        try:
            same = [(answer.gpu, answer.best) for answer in plan("4B", max_model_len=8192)] == parent
        finally:
            os._exit(0 if same else 1)
    ends_by = time.monotonic() + 60
    while (ended := os.waitpid(child, os.WNOHANG))[0] == 0 and time.monotonic() < ends_by:
        time.sleep(0.05)
    if ended[0] == 0:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
    assert ended[0] == child and os.waitstatus_to_exitcode(ended[1]) == 0


def test_a_job_whose_model_folder_holds_a_folder_named_config_json_is_one_line_and_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    (tmp_path / "mine" / "config.json").mkdir(parents=True)
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: a100, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}\n"
                     "jobs:\n  - {name: own, model_config: mine, max_model_len: 8192}\n", encoding="utf-8")
    assert main(["cluster", str(fleet)]) == 2
    assert capsys.readouterr() == ("", (f"solve cluster: error: {fleet}: job own, model_config: "
                                        f"{tmp_path / 'mine' / 'config.json'}: not a regular file\n"))


def test_anchored_keys_refuses_a_config_in_the_words_patch_trinity_config_does():
    # The reader's own word for a key written twice is not ruamel's, which the patch, a round trip, meets first.
    best = plan("4B", max_model_len=8192, gpu="a100")[0].best
    assert best is not None
    model, text = load_catalog().model("4B"), "a: &x 1\na: 2\n"
    refusal = 'c.yaml: line 2: malformed YAML: found duplicate key "a" with value "2" (original value: "1")'
    for call in (anchored_keys, patch_trinity_config):
        with pytest.raises(ConfigError) as refused:
            call(text, best, model, name="c.yaml")
        assert str(refused.value) == refusal


@pytest.mark.parametrize(("written", "rewritten"), [
    ("monitor:\n  names: !!seq [a, b]\n", "  names: [a, b]\n"),  # the round trip drops a tag
    ("monitor:\n  names:   # the names\n    [a, b]\n", "  names: [a, b] # the names\n"),  # and moves a comment
])
def test_a_patch_keeps_a_list_as_the_config_writes_it(written: str, rewritten: str):
    # The round trip rewrites these lines of its own accord; the patch takes them from the config where the result
    # reads the same (lists compared item by item), as it does mappings and scalars.
    best = plan("8B", max_model_len=32768, gpu="a100", budget_gpus=6, exact=True)[0].best
    assert best is not None
    text = (Path(__file__).parents[1] / "docs" / "examples" / "trinity.yaml").read_text(encoding="utf-8") + written
    patched = patch_trinity_config(text, best, load_catalog().model("8B"), name="c.yaml")
    assert patched.endswith(written) and rewritten not in patched
    assert "  ulysses_sequence_parallel_size: 2\n" in patched


@pytest.mark.parametrize(("rank", "codes"), [
    ("true", ["lora-rank-not-a-number-refused"]),  # Trinity's typed LoRAConfig refuses it
    # cannot be read: no lora-rank line, no error; the check's unresolved-value-refused line says it (test_interp_s64)
    ("${model.no_such_key}", []),
])
def test_a_lora_rank_that_cannot_be_read_gets_no_line(rank: str, codes: list[str]):
    text = (Path(__file__).parents[1] / "docs" / "examples" / "trinity.yaml").read_text(encoding="utf-8")
    text = text.replace("model:\n  model_path:", ("model:\n  lora_configs:\n    - path: /adapters/a\n"
                                                  f"      lora_rank: {rank}\n  model_path:"), 1)
    config = read_trinity_config(text, "c.yaml", {})
    assert [code for code in config.note_codes if code.startswith("lora-rank")] == codes
