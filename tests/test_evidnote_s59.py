"""Tests for session 59's evidnote: a config ``solve --from-config FILE --write OUT`` writes for a plan that is not
documented (inferred or estimated) says so, in the ``--emit trinity`` header's words (its ``# evidence:`` line, and
its ``# caution:`` line on an estimate's thin room to spare), on lines of their own just above
``model.max_model_len``; a later ``--write`` replaces them, or for a documented plan removes them. A documented plan's
file is as before, and the note changes nothing ``--check`` reads. ``solver.trinity.patch_trinity_config`` given the
answer's GPU type writes the same text."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from command_words import make_query

import solver.trinity.patch
from solver.rules import COMMAND_OPTIONS
from solver.solve import plan as solve
from solver.tables import QueryError, load_catalog
from solver.trinity import patch_trinity_config

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = (ROOT / "docs" / "examples" / "trinity.yaml").read_text()
"""The docs' example config: Qwen3-8B at 32768 tokens, 6 trainer GPUs of 8 (2 rollout engines)."""
QWEN32 = (EXAMPLE.replace("Qwen/Qwen3-8B", "Qwen/Qwen3-32B")
          .replace("max_prompt_tokens: 2048", "max_prompt_tokens: 4096")
          .replace("max_response_tokens: 30720", "max_response_tokens: 126976")
          .replace("max_model_len: 32768", "max_model_len: 131072").replace("engine_num: 2", "engine_num: 4"))
"""The review's t32.yaml: Qwen3-32B at 131072 tokens, 4 trainer GPUs of 8; on H100 with --token-budget auto, an
estimate beyond the memory model's calibration with 1.3 GiB to spare: thin for a model whose gathered layers may take
1.6 GiB more than the fit counts (session 60), so cautioned."""
ESTIMATED = ("  # evidence: estimated: the memory model predicts 71.9 GiB per GPU, 1.3 GiB to spare; beyond its\n"
             "  #   calibration: 32.8B parameters (calibrated up to 14.8B)\n"
             "  # caution: 1.3 GiB to spare where the estimate extrapolates, and its error there is unmeasured\n"
             "  #   (its gathered layers may take 1.6 GiB more than the fit counts (large layers): docs/memory.md\n"
             "  #   in rft-solver's source); --margin 0.05 keeps 3.0 GiB more to spare than the default 0.01 here,\n"
             "  #   or measure a step first\n")
INFERRED = ("  # evidence: inferred: the A100-80GB table for 6 GPUs says 'Env + SP=2' at 32768, and this plan\n"
            "  #   runs that same setting on more GPUs (which hold no more per GPU)\n")
LLAMA70 = (EXAMPLE.replace("Qwen/Qwen3-8B", "meta-llama/Llama-3.1-70B").replace("engine_num: 2", "engine_num: 0")
           .replace("node_num: 1", "node_num: 2"))
"""Llama-3.1-70B on 16 trainer GPUs (2 nodes of 8): its longest length on H200 has 0.4 GiB to spare, beyond the
calibration, so it is cautioned."""
THIN = ("  # caution: 0.4 GiB to spare where the estimate extrapolates, and its error there is unmeasured\n"
        "  #   (its flat overhead for the CUDA context and NCCL does not grow across nodes; its gathered\n"
        "  #   layers may take 2.5 GiB more than the fit counts (large layers): docs/memory.md in\n"
        "  #   rft-solver's source); --margin 0.04 keeps 3.9 GiB more to spare than the default 0.01 here, or\n"
        "  #   measure a step first\n")
LENGTH = "  max_model_len: "


def _write(cli, tmp_path: Path, text: str, *flags: str, name: str = "out.yaml") -> str:
    """The file ``--write`` makes of the config `text` with `flags` (exit 0 asserted)."""
    config, out = tmp_path / "in.yaml", tmp_path / name
    config.write_text(text)
    status, _, err = cli("--from-config", str(config), *flags, "--write", str(out))
    assert status == 0, err
    return out.read_text()


def _header_lines(cli, tmp_path: Path, made: list[str], text: str, *flags: str) -> list[str]:
    """The ``# evidence:`` and ``# caution:`` lines of ``--emit trinity``'s header for the config `text`, each before
    it is wrapped (the last of `made`, the `unwrapped_fragments`)."""
    config = tmp_path / "emit.yaml"
    config.write_text(text)
    status, _, _ = cli("--from-config", str(config), *flags, "--emit", "trinity")
    assert status == 0
    return [line for line in made[-1].splitlines() if line.startswith(("# evidence: ", "# caution: "))]


def _check(path: Path, gpu: str, env: bool = True, host_ram: str = "") -> str:
    """The note's last two lines, --write's command that checks the file at `path` (planned on `gpu`, with Env, and
    with `host_ram` as --host-ram where given)."""
    prefix = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True " if env else ""
    suffix = f" --host-ram {host_ram}" if host_ram else ""
    return (f"  # To check this file as its plan was made:\n"
            f"  #   {prefix}solve --from-config {path} --check --gpu {gpu}{suffix}\n")


def _note(text: str) -> list[str]:
    """The comment lines just above ``model.max_model_len`` in the written `text`, but for the check command's two."""
    lines = text.splitlines()
    at = next(index for index, line in enumerate(lines) if line.startswith(LENGTH))
    assert lines[at - 2] == "  # To check this file as its plan was made:"
    above = at - 2
    while above > 0 and lines[above - 1].lstrip().startswith("#"):
        above -= 1
    return lines[above:at - 2]


def _unwrapped(lines: list[str]) -> list[str]:
    """The note's `lines` as the header's, one line each: a line that goes on with the one before it joins it."""
    joined: list[str] = []
    for line in lines:
        if line.startswith("  #   "):
            joined[-1] += " " + line.removeprefix("  #   ")
        else:
            joined.append(line.strip())
    return joined


def _without_note(cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, text: str, *flags: str) -> str:
    """What ``--write`` makes of `text` with no evidence note (as before session 59)."""
    with monkeypatch.context() as patched:
        patched.setattr(solver.trinity.patch, "_note_evidence", lambda *arguments: None)
        return _write(cli, tmp_path, text, *flags, name="bare.yaml")


def test_an_estimated_plan_is_written_with_the_headers_evidence_line_above_its_length(cli, tmp_path, monkeypatch,
                                                                                      unwrapped_fragments):
    flags = ("--gpu", "h100", "--token-budget", "auto", "--host-ram", "1TB")  # host memory no caution is about
    written = _write(cli, tmp_path, QWEN32, *flags)
    assert _note(written) == ESTIMATED.splitlines()
    assert written.count("# evidence") == 1
    check = _check(tmp_path / "out.yaml", "H100-80GB", host_ram="1024")
    assert ESTIMATED + check + "  max_model_len: 131072  # prompt + response\n" in written
    # The header's own words, and every other byte as the patch wrote it before.
    assert _unwrapped(_note(written)) == _header_lines(cli, tmp_path, unwrapped_fragments, QWEN32, *flags)
    assert written.replace(ESTIMATED + check, "") == _without_note(cli, monkeypatch, tmp_path, QWEN32, *flags)


def test_an_inferred_plan_gets_its_evidence_line_naming_the_cell(cli, tmp_path, monkeypatch, unwrapped_fragments):
    config = EXAMPLE.replace("engine_num: 2", "engine_num: 0")  # 8 trainer GPUs: the 6-GPU table's cell, inferred
    flags = ("--gpu", "a100", "--len", "32k")
    written = _write(cli, tmp_path, config, *flags)
    assert _note(written) == INFERRED.splitlines()
    assert _unwrapped(_note(written)) == _header_lines(cli, tmp_path, unwrapped_fragments, config, *flags)
    check = _check(tmp_path / "out.yaml", "A100-80GB")
    assert written.replace(INFERRED + check, "") == _without_note(cli, monkeypatch, tmp_path, config, *flags)


def test_a_thin_estimate_gets_the_headers_caution_below_its_evidence(cli, tmp_path, unwrapped_fragments):
    # Trinity 0.6 loads the model on rank 0 alone on H200s: with no release named every rank would, and the header
    # would add a caution on that host memory.
    flags = ("--gpu", "h200", "--maximize", "len", "--trinity-version", "0.6")
    written = _write(cli, tmp_path, LLAMA70, *flags)
    note = _note(written)
    assert len(note) == 11
    assert note[0].startswith("  # evidence: estimated: the memory model predicts 128.7 GiB per GPU")
    assert note[4:9] == THIN.splitlines()
    assert _unwrapped(note[:9]) == _header_lines(cli, tmp_path, unwrapped_fragments, LLAMA70, *flags)
    assert _unwrapped(note[9:]) == [  # past the native length, what to do: the header's # plan: line says it too
        "# max_model_len past the native 131072: check the model's quality at this length, or plan --len 131072"]


def test_a_documented_plans_file_has_no_evidence_note_and_is_as_before_but_for_its_check(cli, tmp_path, monkeypatch):
    flags = ("--gpu", "a100")  # the 6-GPU table's 'Env + SP=2' at 32768
    written = _write(cli, tmp_path, EXAMPLE, *flags)
    assert "# evidence" not in written and "# caution" not in written and _note(written) == []
    check = _check(tmp_path / "out.yaml", "A100-80GB")
    assert written.replace(check, "") == _without_note(cli, monkeypatch, tmp_path, EXAMPLE, *flags)


def test_a_second_write_keeps_one_note_and_drops_it_for_a_documented_plan(cli, tmp_path):
    flags = ("--gpu", "a100", "--len", "32k")
    first = _write(cli, tmp_path, EXAMPLE.replace("engine_num: 2", "engine_num: 0"), *flags)
    assert _note(first) == INFERRED.splitlines()
    assert _write(cli, tmp_path, first, *flags, name="out.yaml") == first  # the same note, once
    # The same config with 2 engines again: 6 trainer GPUs, the documented cell. No note, as from the example itself.
    documented = _write(cli, tmp_path, first.replace("engine_num: 0", "engine_num: 2"), *flags, name="doc.yaml")
    assert "# evidence" not in documented
    assert documented == _write(cli, tmp_path, EXAMPLE, *flags, name="doc.yaml")


def test_a_second_write_replaces_the_evidence_and_a_caution_no_longer_due(cli, tmp_path):
    thin = _write(cli, tmp_path, LLAMA70, "--gpu", "h200", "--maximize", "len")
    roomy = _write(cli, tmp_path, thin, "--gpu", "h200", "--len", "64k", name="roomy.yaml")
    note = _note(roomy)
    assert len(note) == 4 and note[0].startswith(
        "  # evidence: estimated: the memory model predicts 113.5 GiB per GPU, 15.5 GiB to spare;")
    assert "# caution" not in roomy and roomy.count("# To check this file") == 1
    assert note == _note(_write(cli, tmp_path, LLAMA70, "--gpu", "h200", "--len", "64k", name="fresh.yaml"))


def test_a_users_comment_above_the_length_stays_and_the_note_goes_below_it(cli, tmp_path):
    config = QWEN32.replace("  max_model_len: 131072", "  # the length we train at\n  max_model_len: 131072")
    flags = ("--gpu", "h100", "--token-budget", "auto")
    written = _write(cli, tmp_path, config, *flags)
    assert _note(written) == ["  # the length we train at", *ESTIMATED.splitlines()]
    assert _write(cli, tmp_path, written, *flags) == written


def test_the_written_file_reads_and_checks_as_it_would_without_the_note(cli, tmp_path):
    written = _write(cli, tmp_path, QWEN32, "--gpu", "h100", "--token-budget", "auto")
    note = ESTIMATED + _check(tmp_path / "out.yaml", "H100-80GB")
    assert note in written
    noted, bare = tmp_path / "noted.yaml", tmp_path / "plain.yaml"
    noted.write_text(written)
    bare.write_text(written.replace(note, ""))
    for flags in (("--check",), ("--json",), ()):
        status, out, err = cli("--from-config", str(noted), "--gpu", "h100", "--token-budget", "auto", *flags)
        assert (status, out, err) == tuple(
            part.replace("plain.yaml", "noted.yaml") if isinstance(part, str) else part
            for part in cli("--from-config", str(bare), "--gpu", "h100", "--token-budget", "auto", *flags))
    assert noted.read_text() == written  # read back, the note is still there


def test_the_api_patch_given_the_answers_gpu_writes_what_the_cli_writes(cli, tmp_path):
    written = _write(cli, tmp_path, QWEN32, "--gpu", "h100", "--token-budget", "auto")
    catalog = load_catalog()
    (answer,) = solve(make_query(catalog, model="32B", gpu="h100", max_model_len=131072, budget_gpus=4, exact=True,
                                 rollout_gpus=4, token_budget="auto"), catalog)
    model = catalog.model(answer.model)
    out = str(tmp_path / "out.yaml")
    assert patch_trinity_config(QWEN32, answer.plans[0], model, gpu=answer.gpu, environ=os.environ,
                                check=("--gpu", answer.gpu), path=out, option_names=COMMAND_OPTIONS) == written
    # Without the GPU type, the estimate's words name none: the same note.
    assert patch_trinity_config(QWEN32, answer.plans[0], model, check=("--gpu", answer.gpu), path=out,
                                option_names=COMMAND_OPTIONS) == written
    # Without the options to check it with, no command.
    assert patch_trinity_config(QWEN32, answer.plans[0], model, option_names=COMMAND_OPTIONS) == written.replace(
        _check(Path(out), answer.gpu), "")


@pytest.mark.parametrize(("gpu", "message"), [
    (80, "gpu must be a str or None, got 80"),
    ("H100\n# x", "gpu must be printable text, got 'H100\\n# x'"),
])
def test_the_patchs_gpu_must_be_printable_text(gpu, message):
    catalog = load_catalog()
    (answer,) = solve(make_query(catalog, model="8B", gpu="a100", max_model_len=8192, budget_gpus=2, exact=True),
                      catalog)
    with pytest.raises(QueryError, match=f"^{re.escape(message)}$"):
        patch_trinity_config(EXAMPLE, answer.plans[0], catalog.model("8B"), gpu=gpu)


def test_docs_trinity_shows_the_note_as_it_is_written(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the command in the note names the file as --write does
    (tmp_path / "t32.yaml").write_text(QWEN32)
    status, _, err = cli("--from-config", "t32.yaml", "--gpu", "h100", "--token-budget", "auto", "--write",
                         "t32-h100.yaml")
    assert status == 0, err
    written = (tmp_path / "t32-h100.yaml").read_text()
    section = written[written.index("model:\n"):written.index("  max_model_len: 131072  # prompt + response\n")]
    shown = "".join(f"  {line}\n" for line in f"{section}  max_model_len: 131072  # prompt + response".splitlines())
    assert f"  ```yaml\n{shown}  ```\n" in (ROOT / "docs" / "trinity.md").read_text()
