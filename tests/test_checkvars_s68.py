"""The command that checks a config as its plan was made carries the environment variables the check reads too (a
``but:`` or ``refused:`` line's key, not only the plan's), writes a value only where it is a number or a flag (a
path, a model id or a token is the shell's own, ``NAME="${NAME:?}"``), and ``${oc.decode:8.0}`` is refused as
OmegaConf 2.3.0 refuses it (session 68)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_writecheck_s60 import written_check

from solver.api import plan
from solver.tables import QueryError, load_catalog
from solver.trinity import check_environment, load_config_mapping, read_trinity_config, trinity_config_problems
from solver.trinity.fragment import check_command

CONFIG = ("mode: both\nalgorithm: {algorithm_type: grpo, repeat_times: 8}\nbuffer: {batch_size: 32}\n"
          "model:\n  model_path: ${oc.env:MODEL_PATH}\n  max_model_len: 32768\n"
          "  max_prompt_tokens: ${oc.decode:${oc.env:PROMPT,31000}}\n  max_response_tokens: 2768\n"
          "cluster:\n  node_num: 1\n  gpu_per_node: ${oc.decode:${oc.env:NGPUS,8}}\n"
          "explorer:\n  rollout_model: {engine_num: 2, tensor_parallel_size: 2}\n"
          "trainer:\n  ulysses_sequence_parallel_size: 1\n  save_hf_checkpoint: ${oc.env:UNSET_SAVE,never}\n")
"""Qwen3-8B at 32768 tokens from a private path; its GPUs per node from NGPUS (8 by default), 4 of them the
rollout's; a prompt from PROMPT that only the check reads (the length is set), 31000 by default, which with the
response is past the length (refused)."""
PATH = "/home/alice/models/Qwen3-8B"
PLANNING = {"MODEL_PATH": PATH, "NGPUS": "12", "PROMPT": "2048"}
"""The planning shell's variables: a user's path, 8 trainer GPUs, a prompt that fits."""
COMMAND = ('MODEL_PATH="${{MODEL_PATH:?}}" NGPUS=12 PROMPT=2048 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True '
           "solve --from-config {config} --check --gpu A100-80GB")
"""The check command written for them: the path is the shell's own, the numbers are written."""


def _planning_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in PLANNING.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("UNSET_SAVE", raising=False)


def test_check_environment_gives_the_plans_variables_then_the_checks_in_the_order_first_read(
        monkeypatch: pytest.MonkeyPatch):
    config = read_trinity_config(CONFIG, "trinity.yaml", PLANNING)
    assert config.environment == (("MODEL_PATH", PATH), ("NGPUS", "12"))  # PROMPT: only the check reads it
    assert check_environment(config, load_config_mapping(CONFIG, "trinity.yaml"), load_catalog().model("8B"), 8,
                             environ=PLANNING, max_model_len=32768) == (
        ("MODEL_PATH", PATH), ("NGPUS", "12"), ("PROMPT", "2048"))  # UNSET_SAVE, unset: its default in any shell


def test_the_written_command_carries_the_checks_variable_shows_no_path_and_judges_the_same_config(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    config, patched = tmp_path / "trinity.yaml", tmp_path / "patched.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    _planning_shell(monkeypatch)
    status, out, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--write", str(patched))
    assert (status, "plan           Env + SP=2 on 8 of 8 GPUs, with 4 rollout GPUs\n" in out) == (0, True)
    written = patched.read_text(encoding="utf-8")
    assert written_check(written) == COMMAND.format(config=patched)
    assert PATH not in written and PATH not in out + err
    # The check's shell: the same user's, less the numbers, which the command sets: it trains, nothing refused.
    for name in ("NGPUS", "PROMPT"):
        monkeypatch.delenv(name)
    status, out, err = _run_pasted(cli, monkeypatch, tmp_path, written_check(written))
    assert (status, err, "refused:" in out) == (0, "", False)
    assert out.splitlines()[1].startswith(f"{patched.name} runs Env + SP=2 on 8 trainer GPUs at 32768 tokens")
    # Without the PROMPT it carries, the check judges another config: 31000 + 2768 tokens, which Trinity refuses.
    monkeypatch.delenv("PROMPT")  # as the check's shell has it
    status, out, _ = _run_pasted(cli, monkeypatch, tmp_path, written_check(written).replace("PROMPT=2048 ", ""))
    assert (status, "  refused: model.max_prompt_tokens 31000 + model.max_response_tokens 2768 = 33768" in out) == (
        1, True)


def test_the_emitted_header_carries_the_same_variables_as_the_written_note(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    config = tmp_path / "trinity.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    _planning_shell(monkeypatch)
    status, out, err = cli("--from-config", str(config), "--gpu", "a100-80g", "--emit", "trinity")
    assert status == 0 and PATH not in out + err
    # A fragment has no algorithm_type: its check leaves out the critic of Trinity's default, PPO, as the plan did.
    assert f"#   {COMMAND.format(config='CONFIG')} --critic none\n" in out


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash to paste the command into")
def test_a_shell_without_the_private_variable_stops_the_command_before_it_runs(tmp_path: Path):
    command = COMMAND.format(config="patched.yaml")
    status, err, ran = _pasted_into_bash(tmp_path, command, {})
    assert (status != 0, err.endswith("MODEL_PATH: parameter null or not set\n"), ran) == (True, True, None)
    status, err, ran = _pasted_into_bash(tmp_path, command, {"MODEL_PATH": ""})  # empty: no more the path
    assert (status != 0, ran) == (True, None)
    status, err, ran = _pasted_into_bash(tmp_path, command, {"MODEL_PATH": PATH, "NGPUS": "9"})
    assert (status, err, ran) == (0, "", (
        {"MODEL_PATH": PATH, "NGPUS": "12", "PROMPT": "2048", "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"},
        ["--from-config", "patched.yaml", "--check", "--gpu", "A100-80GB"]))


_STUB = ('#!/bin/sh\nfor name in MODEL_PATH NGPUS PROMPT PYTORCH_CUDA_ALLOC_CONF; do\n'
         '  eval "set_=\\${$name+x}"; [ -n "$set_" ] && eval "printf \'%s=%s\\n\' $name \\"\\$$name\\""\n'
         'done > "$0.env"\nprintf \'%s\\n\' "$@" > "$0.args"\n')
"""A ``solve`` that writes the variables the check command sets, as it got them, and its arguments, beside itself."""


def _pasted_into_bash(tmp_path: Path, command: str, environ: dict[str, str]
                      ) -> tuple[int, str, tuple[dict[str, str], list[str]] | None]:
    """`command` pasted into bash with `environ` alone (and a stub ``solve`` on its path, `_STUB`): bash's status, its
    standard error, and what ``solve`` got (its variables and arguments; None where it did not run)."""
    stub = tmp_path / "bin" / "solve"
    stub.parent.mkdir(exist_ok=True)
    stub.write_text(_STUB, encoding="utf-8")
    stub.chmod(0o755)
    for output in (stub.with_suffix(".env"), stub.with_suffix(".args")):
        output.unlink(missing_ok=True)
    done = subprocess.run(["bash", "-c", command], env={**environ, "PATH": f"{stub.parent}{os.pathsep}/usr/bin:/bin"},
                          capture_output=True, text=True, check=False, cwd=tmp_path)
    if not stub.with_suffix(".args").exists():
        return done.returncode, done.stderr, None
    variables = dict(line.split("=", 1) for line in stub.with_suffix(".env").read_text(encoding="utf-8").splitlines())
    return done.returncode, done.stderr, (variables, stub.with_suffix(".args").read_text(encoding="utf-8").splitlines())


def _run_pasted(cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, command: str) -> tuple[int, str, str]:
    """`command` pasted into a bash whose environment is this process's (`_pasted_into_bash`), then ``solve`` run
    in-process with the variables and arguments bash gave it."""
    status, err, ran = _pasted_into_bash(tmp_path, command, dict(os.environ))
    assert (status, err) == (0, "") and ran is not None
    variables, arguments = ran
    for name in ("MODEL_PATH", "NGPUS", "PROMPT", "PYTORCH_CUDA_ALLOC_CONF"):
        if name in variables:
            monkeypatch.setenv(name, variables[name])
        else:
            monkeypatch.delenv(name, raising=False)
    return cli(*arguments)


_PLAN = plan("4B", max_model_len=8192, gpu="a100")[0].plans[0]
"""A plan that needs no environment variable of its own (no Env, within vLLM's length)."""


@pytest.mark.parametrize(("environment", "words"), [
    ((("NGPUS", "12"), ("DYN", "false"), ("LEN", " 8"), ("F", "1.5e3"), ("N", "null"), ("G", ".5"), ("K", "1_000")),
     "NGPUS=12 DYN=false LEN=' 8' F=1.5e3 N=null G=.5 K=1_000 solve"),  # numbers and flags: what the verdict judges
    ((("MODEL_PATH", PATH),), 'MODEL_PATH="${MODEL_PATH:?}" solve'),  # a user's name in a path
    ((("MODEL", "Qwen/Qwen3-8B"), ("LEN", "32 768"), ("HOST", "10.0.0.1")),
     'MODEL="${MODEL:?}" LEN="${LEN:?}" HOST="${HOST:?}" solve'),  # no number
    ((("HF_TOKEN", "12345"), ("WANDB_API_KEY", "1"), ("DB_PASSWD", "true"), ("MY_SECRET_N", "8")),
     ('HF_TOKEN="${HF_TOKEN:?}" WANDB_API_KEY="${WANDB_API_KEY:?}" DB_PASSWD="${DB_PASSWD:?}" '
      'MY_SECRET_N="${MY_SECRET_N:?}" solve')),  # a private name: even a number is not written
    ((("NGPUS", "1\n2"),), 'NGPUS="${NGPUS:?}" solve'),  # not written, so no line break in the comment
    ((("MY-VAR", "1"), ("API_KEY", "x")), "env MY-VAR=1 API_KEY=\"${API_KEY:?}\" solve"),
    ((("MY-VAR", PATH), ("NGPUS", "12")), "NGPUS=12 solve"),  # no shell can expand MY-VAR: env passes it on
])
def test_the_check_command_writes_numbers_and_flags_and_the_shells_own_for_the_rest(
        environment: tuple[tuple[str, str], ...], words: str):
    command = check_command(_PLAN, load_catalog().model("4B"), ("--gpu", "A100-80GB"), None, None,
                            environment=environment, critic_trained=False)  # GRPO's config: no --critic none
    assert command == f"{words} --from-config CONFIG --check --gpu A100-80GB"


def test_a_variable_whose_name_no_comment_line_can_hold_is_refused_in_one_line():
    with pytest.raises(QueryError, match=r"^the config reads the environment variable 'A\\tB', whose name the "
                                         "command that checks it as it was planned cannot hold on a comment's line$"):
        check_command(_PLAN, load_catalog().model("4B"), ("--gpu", "A100-80GB"), None, None,
                      environment=(("A\tB", "12"),))


QWEN = "model: {model_path: Qwen/Qwen3-8B}\ncluster: {node_num: 1}\n"
REFUSED = "; every Trinity release refuses the config as it loads it (OmegaConf resolves each value then)"


def _batch_problems(value: str, environ: dict[str, str] | None = None) -> list[tuple[str, str]]:
    mapping = load_config_mapping(f"{QWEN}buffer:\n  batch_size: {value}\n", "trinity.yaml")
    return [(problem.code.value, problem.words)
            for problem in trinity_config_problems(mapping, load_catalog().model("8B"), 8, environ=environ)]


@pytest.mark.parametrize(("value", "words"), [
    # OmegaConf 2.3.0: "`oc.decode` can only take strings or None as input, but `8.0` is float", before the int field
    ("${oc.decode:8.0}", "'${oc.decode:8.0}': OmegaConf's oc.decode takes text or null, not 8.0 (quote it: \"8\")"),
    ("${oc.decode:8}", "'${oc.decode:8}': OmegaConf's oc.decode takes text or null, not 8 (quote it: \"8\")"),
    ("${oc.decode:${cluster.node_num}}",
     "'${oc.decode:${cluster.node_num}}': OmegaConf's oc.decode takes text or null, not 1"),
    ("${oc.decode:}", "'${oc.decode:}' gives oc.decode no text"),  # "decode() missing 1 required positional argument"
    ("${oc.decode:1,000}", "'${oc.decode:1,000}' gives oc.decode 2 arguments, not one text (quote a comma in it)"),
    ("\"${oc.decode:'a}'}\"",
     "OmegaConf cannot decode 'a}' in \"${oc.decode:'a}'}\": '}' closes nothing (character 2)"),
])
def test_an_oc_decode_omegaconf_refuses_in_any_environment_is_refused(value: str, words: str):
    assert _batch_problems(value) == [("unresolved-value-refused", f"buffer.batch_size: {words}{REFUSED}")]


@pytest.mark.parametrize(("value", "environ", "problem"), [
    # quoted, oc.decode reads the text: the float 8.0, which the int field refuses
    ('${oc.decode:"8.0"}', None, ("wrong-type-refused", (
        "buffer.batch_size must be a whole number, got 8.0 (write 8.0 as 8): every Trinity release refuses the config as it "
        "loads it "
        "(its typed config's int field)"))),
    ("${oc.decode:'8'}", None, None), ("${oc.decode:${oc.env:B}}", {"B": "8"}, None),
    # the text came from this shell: the run's may decode, so it is not judged
    ("${oc.decode:${oc.env:B}}", {"B": "~"}, ("unresolved-value", (
        "cannot check buffer.batch_size: OmegaConf cannot decode '~' in '${oc.decode:${oc.env:B}}': '~' outside "
        "quotes (character 1)"))),
])
def test_an_oc_decode_of_text_is_judged_by_what_it_decodes_to(
        value: str, environ: dict[str, str] | None, problem: tuple[str, str] | None):
    assert _batch_problems(value, environ) == ([problem] if problem else [])
