"""Tests for session 60's writecheck: a config ``solve --from-config FILE --write OUT`` writes carries, in its note
above ``model.max_model_len``, the command that checks it as its plan was made (the ``--emit trinity`` header's, in
the same words and quoting, naming OUT); the note's evidence and caution are wrapped at 100 columns; a later
``--write`` replaces the whole note and nothing of the user's around it; a flow-style ``model`` gets the note above its
line, and a config all in flow style a line on stderr with the command."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from test_evidnote_s59 import EXAMPLE, QWEN32

from solver.query import make_query
from solver.solve import plan as solve
from solver.tables import QueryError, load_catalog
from solver.trinity import patch_trinity_config

ROOT = Path(__file__).resolve().parents[1]
LLAMA70 = (EXAMPLE.replace("Qwen/Qwen3-8B", "meta-llama/Llama-3.1-70B").replace("engine_num: 2", "engine_num: 0")
           .replace("node_num: 1", "node_num: 2"))
"""Llama-3.1-70B on 16 trainer GPUs: its longest length on H200 is an estimate with a thin headroom's caution."""
FLOW = ("mode: both\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}\n"
        "cluster: {node_num: 1, gpu_per_node: 8}\nalgorithm: {algorithm_type: grpo}\n")
"""A config whose model section is in flow style, on one line: 7 trainer GPUs, an inferred plan at 16384."""
T32 = QWEN32.replace("engine_num: 4\n    tensor_parallel_size: 1", "engine_num: 2\n    tensor_parallel_size: 2")
"""The review's t32.yaml with its 4 rollout GPUs in engines of 2: one H100 cannot hold Qwen3-32B's 61 GiB of weights
and a 131072-token sequence's 32 GiB of KV cache (`rollout-engine-memory-refused`: test_rolloutfit_s73)."""
INTRO = "# To check this file as its plan was made:"
ENV = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"


def _write(cli, config: Path, out: Path, text: str, *flags: str) -> tuple[str, str]:
    """The file ``--write`` makes of the config `text` (at `config`) with `flags`, and its stderr (exit 0)."""
    config.write_text(text)
    status, _, err = cli("--from-config", str(config), *flags, "--write", str(out))
    assert status == 0, err
    return out.read_text(), err


def written_check(written: str) -> str:
    """The check command of the written config's note: the line after its lead-in."""
    lines = [line.strip() for line in written.splitlines()]
    return lines[lines.index(INTRO) + 1].removeprefix("#   ")


def run_as_shell(cli, monkeypatch: pytest.MonkeyPatch, command: str) -> tuple[int, str, str]:
    """`command` (``[VARIABLE=VALUE] solve ...``) run as a shell would, in-process."""
    words = shlex.split(command)
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    while "=" in words[0]:
        variable, _, value = words.pop(0).partition("=")
        monkeypatch.setenv(variable, value)
    assert words[0] == "solve"
    return cli(*words[1:])


def test_the_written_command_is_the_emitted_headers_naming_the_file_with_the_planning_options(
        cli, tmp_path, monkeypatch):
    folder = tmp_path / "my runs"  # a space: quoted, as the header quotes
    folder.mkdir()
    config, out = folder / "t32.yaml", folder / "t32 h100.yaml"
    flags = ("--gpu", "h100", "--token-budget", "auto", "--margin", "0.02", "--cells",
             str(ROOT / "docs" / "examples" / "my-cells.yaml"))
    written, _ = _write(cli, config, out, T32, *flags)
    status, emitted, _ = cli("--from-config", str(config), *flags, "--emit", "trinity")
    assert status == 0
    header = next(line for line in emitted.splitlines() if " solve --from-config CONFIG --check " in line)
    # The fragment has no algorithm_type: its check leaves out PPO's critic, which the GRPO config's has none of.
    assert f"{written_check(written)} --critic none" == header.removeprefix("#   ").replace(
        "CONFIG", shlex.quote(str(out)))
    assert written_check(written) == (
        f"{ENV} solve --from-config '{out}' --check --gpu H100-80GB --cells "
        f"{ROOT / 'docs' / 'examples' / 'my-cells.yaml'} --margin 0.02")
    # Pasted as it is, it checks the written file: it trains.
    status, out_text, err = run_as_shell(cli, monkeypatch, written_check(written))
    assert status == 0, err
    assert re.search(r"t32 h100\.yaml runs Env \+ Offload \+ SP=4 on 4 trainer GPUs at 131072 tokens .*: it trains",
                     " ".join(out_text.split("\n")))


@pytest.mark.parametrize(("text", "flags", "evidence"), [
    (EXAMPLE, ("--gpu", "a100"), "documented"),
    (EXAMPLE.replace("engine_num: 2", "engine_num: 0"), ("--gpu", "a100", "--len", "32k"), "inferred"),
    (T32, ("--gpu", "h100", "--token-budget", "auto"), "estimated"),
    # Trinity 0.6 on H200s loads the model on rank 0 alone: with no release named every rank would, past 1024 GiB.
    (LLAMA70, ("--gpu", "h200", "--maximize", "len", "--host-ram", "1024", "--trinity-version", "0.6"), "estimated"),
])
def test_the_printed_command_passes_on_the_written_file_and_a_rewrite_stacks_no_second(
        cli, tmp_path, monkeypatch, text, flags, evidence):
    config, out = tmp_path / "in.yaml", tmp_path / "out.yaml"
    written, _ = _write(cli, config, out, text, *flags)
    assert written.count(INTRO) == 1 and written.count("# evidence") == (evidence != "documented")
    lines = written.splitlines()
    length = next(index for index, line in enumerate(lines) if line.startswith("  max_model_len: "))
    assert lines[length - 2:length] == [f"  {INTRO}", f"  #   {written_check(written)}"]  # just above the length
    assert ("--host-ram 1024" in written_check(written)) == ("--host-ram" in flags)
    assert run_as_shell(cli, monkeypatch, written_check(written))[0] == 0
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    # Written again from its own output: the same file (but for the name the command gives it), one note.
    again = tmp_path / "again.yaml"
    assert _write(cli, out, again, written, *flags)[0] == written.replace(str(out), str(again))


def test_the_notes_lines_are_wrapped_at_100_columns_on_words(cli, tmp_path):
    written, _ = _write(cli, tmp_path / "in.yaml", tmp_path / "out.yaml", LLAMA70, "--gpu", "h200", "--maximize", "len")
    lines = written.splitlines()
    length = next(index for index, line in enumerate(lines) if line.startswith("  max_model_len: "))
    note = lines[length - 13:length - 4]
    assert lines[length - 4:length - 2] == [  # past the native length: what to do, as the apply lines say it
        "  # max_model_len past the native 131072: check the model's quality at this length, or plan --len",
        "  #   131072"]
    assert note[0].startswith("  # evidence: estimated: ") and note[4].startswith("  # caution: 0.4 GiB to spare")
    assert all(len(line) <= 100 for line in note) and max(map(len, note)) >= 95
    assert all(line.startswith("  #   ") for index, line in enumerate(note) if index not in (0, 4))
    assert " ".join(line.removeprefix("  # ").strip() for line in note[4:]) == (
        "caution: 0.4 GiB to spare where the estimate extrapolates, and its error there is unmeasured (its flat "
        "overhead for the CUDA context and NCCL does not grow across nodes; its gathered layers may take 2.5 GiB more "
        "than the fit counts (large layers): docs/memory.md in rft-solver's source); --margin 0.04 keeps 3.9 GiB more "
        "to spare than the default 0.01 here, or measure a step first")


def test_a_rewrite_replaces_the_whole_wrapped_note_and_keeps_the_users_comments_around_it(cli, tmp_path):
    flags = ("--gpu", "h200", "--maximize", "len")
    out = tmp_path / "out.yaml"
    written, _ = _write(cli, tmp_path / "in.yaml", out, LLAMA70, *flags)
    note_start = written.index("  # evidence: ")
    length = written.index("  max_model_len: ")
    note = written[note_start:length]
    mine = ("  # above: mine\n", "  # below: mine\n", "  #   indented, mine too\n")
    edited = written[:note_start] + mine[0] + note + mine[1] + mine[2] + written[length:]
    again, _ = _write(cli, tmp_path / "edited.yaml", out, edited, *flags)
    assert again.count("# evidence") == 1 and again.count(INTRO) == 1
    assert again == written[:note_start] + "".join(mine) + note + written[length:]
    # At a length the plan is roomier: the whole note is replaced, the caution's wrapped lines too.
    roomy, _ = _write(cli, tmp_path / "again.yaml", out, again, "--gpu", "h200", "--len", "64k")
    assert "caution" not in roomy and "".join(mine) in roomy
    assert roomy.count("# evidence: estimated: ") == 1 and roomy.count(INTRO) == 1


def test_the_patch_without_a_check_command_eats_no_indented_comment_below_its_note(tmp_path):
    catalog = load_catalog()
    (answer,) = solve(make_query(catalog, model="32B", gpu="h100", max_model_len=131072, budget_gpus=4, exact=True,
                                 rollout_gpus=4, token_budget="auto"), catalog)
    model = catalog.model(answer.model)
    written = patch_trinity_config(QWEN32, answer.plans[0], model)
    # the evidence's second line, the caution's 3, the host memory line's second (its start-up figure, every rank
    # loading the model with no release named, beside training's), and the second of the note on Trinity 0.6's flags
    assert INTRO not in written and written.count("  #   ") == 6
    mine = "  #   (not the note's: mine)\n"
    edited = written.replace("  max_model_len: ", mine + "  max_model_len: ")
    assert patch_trinity_config(edited, answer.plans[0], model) == edited.replace(
        "  # evidence: ", mine + "  # evidence: ").replace(mine + "  max_model_len: ", "  max_model_len: ")
    # A note as session 59 wrote it (one line, unwrapped) is replaced by the wrapped one.
    old = re.sub(r"\n  #   ", " ", written, count=1)
    assert old != written and patch_trinity_config(old, answer.plans[0], model) == written


def test_a_flow_style_model_gets_its_note_above_its_line_and_checks(cli, tmp_path, monkeypatch):
    out = tmp_path / "out.yaml"
    written, err = _write(cli, tmp_path / "in.yaml", out, FLOW, "--gpu", "a100")
    assert written.startswith(
        "mode: both\n"
        "# evidence: inferred: the A100-80GB table for 6 GPUs says 'Env' at 16384, and this plan runs that\n"
        "#   same setting on more GPUs (which hold no more per GPU)\n"
        f"{INTRO}\n#   {ENV} solve --from-config {out} --check --gpu A100-80GB\n"
        "model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}\n")
    assert "flow style" not in err
    again = tmp_path / "again.yaml"
    assert _write(cli, out, again, written, "--gpu", "a100")[0] == written.replace(str(out), str(again))  # once
    assert run_as_shell(cli, monkeypatch, written_check(written))[0] == 0


def test_a_config_all_in_flow_style_gets_the_command_on_stderr(cli, tmp_path, monkeypatch):
    out = tmp_path / "out.yaml"
    text = ("{algorithm: {algorithm_type: grpo}, model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}, "
            "cluster: {node_num: 1, gpu_per_node: 8}}\n")
    written, err = _write(cli, tmp_path / "in.yaml", out, text, "--gpu", "a100")
    assert "#" not in written
    command = f"{ENV} solve --from-config {out} --check --gpu A100-80GB"
    assert (f"solve: note: {out}: a config in flow style ({{...}}) holds no comment line, so --write set the plan's "
            "keys in it without the note a block config gets above model.max_model_len: evidence: inferred: the "
            "A100-80GB table for 6 GPUs says 'Env' at 16384, and this plan runs that same setting on more GPUs (which "
            f"hold no more per GPU); check the file with: {command}\n") in err
    assert run_as_shell(cli, monkeypatch, command)[0] == 0


@pytest.mark.parametrize(("check", "path", "message"), [
    (("--gpu", "H100\n# x"), "out.yaml",
     "the check command's options and file must be printable strings, got ('--gpu', 'H100\\n# x', 'out.yaml')"),
    (("--gpu", "H100"), "out\n.yaml",
     "the check command's options and file must be printable strings, got ('--gpu', 'H100', 'out\\n.yaml')"),
    (["--gpu", "H100"], "out.yaml", "check must be a tuple or None, got ['--gpu', 'H100']"),
])
def test_the_patchs_check_options_must_be_printable_text(check, path, message):
    catalog = load_catalog()
    (answer,) = solve(make_query(catalog, model="8B", gpu="a100", max_model_len=8192, budget_gpus=2, exact=True),
                      catalog)
    with pytest.raises(QueryError, match=f"^{re.escape(message)}$"):
        patch_trinity_config(EXAMPLE, answer.plans[0], catalog.model("8B"), check=check, path=path)


@pytest.mark.parametrize("model", [("--model", "4B"), ("--model-config", str(ROOT / "docs" / "examples" / "my-model"))])
def test_a_model_named_by_option_is_in_the_command_as_in_the_headers(cli, tmp_path, monkeypatch, model):
    # The config's model_path names no model here: without the option, the printed check refused the file.
    text = ("mode: both\nmodel:\n  model_path: /data/ckpt/my-run\n  max_model_len: 8192\n"
            "cluster: {node_num: 1, gpu_per_node: 8}\n")
    config, out = tmp_path / "in.yaml", tmp_path / "out.yaml"
    written, _ = _write(cli, config, out, text, "--gpu", "a100", *model)
    assert written_check(written).endswith(f" --check --gpu A100-80GB {shlex.join(model)}")
    status, emitted, _ = cli("--from-config", str(config), "--gpu", "a100", *model, "--emit", "trinity")
    assert status == 0 and f" solve --from-config CONFIG --check --gpu A100-80GB {shlex.join(model)}\n" in emitted
    assert run_as_shell(cli, monkeypatch, written_check(written))[0] == 0
