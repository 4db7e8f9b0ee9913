"""Small slips session 84's users found (smallslips46): each test failed before its fix."""

from __future__ import annotations

import pytest

import solver
from solver.tables import load_catalog


@pytest.mark.parametrize(("version", "words"), [
    ("0.6.0", "got '0.6.0': pass '0.6'"),
    ("v0.5.1", "got 'v0.5.1': pass '0.5' with experts='separate' and batch_divisor='gpus', as 'v0.5.1' counts"),
    ("0.5.2", "got '0.5.2': pass '0.5' with experts='either' and batch_divisor='ranks', as '0.5.2' counts"),
])
def test_trinity_config_problems_tells_a_patch_release_the_minor_version_to_pass(version: str, words: str):
    model = load_catalog().model("Qwen3-8B")
    for check in (solver.trinity.trinity_config_problems, solver.trinity.check_trinity_config):
        with pytest.raises(solver.QueryError) as caught:  # a bare KeyError before
            check({}, model, 8, version=version)  # type: ignore[arg-type]
        assert str(caught.value) == f"version must be one of None, 0.5, 0.6 (the minor version), {words}"
    with pytest.raises(solver.QueryError, match=r"^version must be one of None, 0\.5, 0\.6, got '0\.7'$"):
        solver.trinity.trinity_config_problems({}, model, 8, version="0.7")  # type: ignore[arg-type]
    # the minor version, with the counts the refusal names, is checked as before
    assert solver.trinity.trinity_config_problems({}, model, 8, version="0.5", experts="separate",
                                                  batch_divisor="gpus") == []


def test_check_environment_tells_a_patch_release_the_minor_version_to_pass():
    model = load_catalog().model("Qwen3-8B")
    config = solver.trinity.read_trinity_config("model: {model_path: Qwen/Qwen3-8B}\n", "c.yaml", {})
    with pytest.raises(solver.QueryError, match=r"got '0\.6\.0': pass '0\.6'$"):
        solver.trinity.check_environment(config, {}, model, 8, environ={}, version="0.6.0")  # type: ignore[arg-type]
