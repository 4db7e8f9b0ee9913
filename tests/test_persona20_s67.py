"""A first-time user follows the guide from a folder of their own (persona20, s67): the docs' commands name the
example files relative to the repository's root (``docs/examples/...``), so run elsewhere before `solve examples`
they would only hear "No such file or directory". Such a file, missing, is named as one of the docs' examples, with
where they are and the command that writes them; any other missing file keeps the plain words."""

from __future__ import annotations

from pathlib import Path

import pytest

HINT = ("no such file here: it is one of the docs' example files, relative to the repository's root; run the command "
        "there, or run `solve examples` here first, which writes them to docs/examples")


@pytest.mark.parametrize(("argv", "error"), [
    (("--model-config", "docs/examples/my-model", "--gpu", "h20", "--gpus", "4", "--len", "32k"),
     "solve: error: --model-config docs/examples/my-model"),
    (("--model", "8B", "--gpu", "h100", "--len", "64k", "--cells", "docs/examples/my-cells.yaml"),
     "solve: error: --cells docs/examples/my-cells.yaml"),
    (("--from-config", "docs/examples/trinity.yaml", "--gpu", "h20"),
     "solve: error: --from-config docs/examples/trinity.yaml"),
    (("cluster", "docs/examples/fleet.yaml", "--minimize", "nodes"), "solve cluster: error: docs/examples/fleet.yaml"),
])
def test_a_docs_example_file_missing_here_names_solve_examples(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               argv: tuple[str, ...], error: str):
    monkeypatch.chdir(tmp_path)
    assert cli(*argv) == (2, "", f"{error}: {HINT}\n")
    assert list(tmp_path.iterdir()) == []


def test_the_examples_written_here_are_read_and_other_missing_files_keep_the_plain_words(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    missing = "docs/examples/trinity-mine.yaml"  # under the folder, but no example of the docs
    assert cli("--from-config", missing, "--gpu", "h20") == (
        2, "", f"solve: error: --from-config {missing}: cannot read: No such file or directory\n")
    assert cli("examples")[0] == 0
    status, out, err = cli("--model-config", "docs/examples/my-model", "--gpu", "h20", "--gpus", "4", "--len", "32k")
    assert (status, out.splitlines()[0], err) == (
        0, "H20-96GB · Mistral-7B-v0.1 · cheapest plan for 32768 tokens within 4 GPUs: optimal", "")
