"""A user's small stumbles (session 64, smallwords): a job or pool name guessed through its zero-padding, one reading
of a length for --len and a cluster file, a fleet given as a dict, a stale ``# prompt + response`` comment, a model
that nothing validates called so, the rollout hint in the form the guide recommends, and a length past a
config.json's shorter length key said in the plan's length row."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.tables import QueryError, load_catalog, meant_fleet_name

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "docs" / "examples"
MY_MODEL = EXAMPLES / "my-model"
"""Mistral-7B-v0.1's config.json: a model that is not Qwen's (rft-solver knows of no validation of its YaRN)."""
CATALOG = load_catalog()

Cli = Callable[..., tuple[int, str, str]]

POOL = "  - {name: a, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}\n"


def _fleet(tmp_path: Path, jobs: str, pools: str = POOL) -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(f"pools:\n{pools}jobs:\n{jobs}", encoding="utf-8")
    return path


# (1) The close-name guess sees zero-padding.

def test_a_required_job_named_without_its_zero_padding_is_guessed(cli: Cli, tmp_path: Path):
    jobs = "".join(f"  - {{name: j{n:02d}, model: 0.6B, max_model_len: 8k}}\n" for n in range(1, 11))
    path = _fleet(tmp_path, jobs)
    for given in ("j8", "J8", "j008"):
        status, out, err = cli("cluster", str(path), "--required", given)
        assert (status, out) == (2, "")
        assert err == (f"solve cluster: error: --required '{given}': no job of the fleet is named so; did you mean "
                       "j08? its jobs: j01, j02, j03, j04 and 6 more jobs; or all, for every job\n")
    # A name no padding or case makes one of them gets no guess.
    status, _, err = cli("cluster", str(path), "--required", "j80")
    assert status == 2 and "did you mean" not in err


def test_a_jobs_pool_named_without_its_zero_padding_is_guessed(cli: Cli, tmp_path: Path):
    path = _fleet(tmp_path, "  - {name: j, model: 0.6B, max_model_len: 8k, pool: Pool-1}\n",
                  "  - {name: pool-01, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}\n")
    assert cli("cluster", str(path)) == (2, "", (
        f"solve cluster: error: {path}: job j, pool: no pool named 'Pool-1' (did you mean pool-01? pools: pool-01)\n"))


def test_the_guess_is_one_name_or_none():
    assert meant_fleet_name("j8", ["j07", "j08", "j09"]) == "j08"
    assert meant_fleet_name("A-0", ["a-000", "b"]) == "a-000"
    assert meant_fleet_name("j8", ["j08", "j008"]) is None  # two names are as likely
    assert meant_fleet_name("j18", ["j08", "j81"]) is None
    assert meant_fleet_name("x" + "0" * 5000 + "1", ["x1"]) == "x1"  # zeros however many, no int() of them


# (2) --len and a cluster file read a length by one function, and refuse it in the same words.

@pytest.mark.parametrize("written", ["32 k", " 32 K ", "32k", "+32k"])
def test_len_takes_what_a_cluster_file_takes(cli: Cli, tmp_path: Path, written: str):
    status, out, _ = cli("--model", "0.6B", "--gpu", "a100", "--len", written, "--json")
    assert status == 0 and json.loads(out)[0]["max_model_len"] == 32768
    path = _fleet(tmp_path, f"  - {{name: j, model: 0.6B, max_model_len: '{written}'}}\n")
    assert solver.load_fleet(path).jobs[0].max_model_len == 32768


def test_a_number_is_bare_in_a_file_and_text_on_the_command_line(cli: Cli, tmp_path: Path):
    for written in ("32768", " +0032768 "):
        status, out, _ = cli("--model", "0.6B", "--gpu", "a100", "--len", written, "--json")
        assert status == 0 and json.loads(out)[0]["max_model_len"] == 32768
    path = _fleet(tmp_path, "  - {name: j, model: 0.6B, max_model_len: '32768'}\n")
    assert cli("cluster", str(path)) == (2, "", (
        f"solve cluster: error: {path}: line 4: job j, max_model_len: must be a whole number, got '32768' (quoted, "
        "YAML reads it as text: write it without quotes)\n"))


@pytest.mark.parametrize(("written", "why"), [
    ("32kb", ""), ("32,768", "; write 32,768 as 32768"), ("1.5k", ""), ("32 768", ""),
    ("1m", ("; M is not taken, 1M being 1000000 tokens to some tools and 1048576 to others: 1024k is 1048576 "
            "tokens")),
])
def test_len_and_a_cluster_file_refuse_a_length_in_the_same_words(cli: Cli, tmp_path: Path, written: str, why: str):
    words = f"a whole number, got '{written}' (tokens, or thousands of 1024: 32768 or 32k{why})"
    status, _, err = cli("--model", "0.6B", "--gpu", "a100", "--len", written)
    assert status == 2 and err.splitlines()[-1] == f"solve: error: argument --len: expected {words}"
    path = _fleet(tmp_path, f"  - {{name: j, model: 0.6B, max_model_len: '{written}'}}\n")
    refusal = f"solve cluster: error: {path}: line 4: job j, max_model_len: must be {words}\n"
    assert cli("cluster", str(path)) == (2, "", refusal)


def test_a_length_out_of_range_is_refused_by_each_in_its_own_range_words(cli: Cli, tmp_path: Path):
    status, _, err = cli("--model", "0.6B", "--gpu", "a100", "--len", "20000 k")
    assert status == 2 and err.endswith("argument --len: must be a whole number of tokens from 1 to 16777216, got "
                                        "20000 k\n")
    path = _fleet(tmp_path, "  - {name: j, model: 0.6B, max_model_len: '20000 k'}\n")
    assert cli("cluster", str(path)) == (2, "", (
        f"solve cluster: error: {path}: line 4: job j, max_model_len: must be at most 16777216, got '20000 k'\n"))


# (3) A fleet given as a dict says how to build a Fleet of it.

def test_a_fleet_given_as_a_dict_says_how_to_build_one():
    fleet = {"pools": [{"name": "a", "gpu": "h100", "nodes": 1, "gpus_per_node": 8}],
             "jobs": [{"name": "q", "model": "Qwen3-0.6B", "max_model_len": "8k"}]}
    for call in (lambda: solver.place(fleet), lambda: solver.buy_nodes(fleet)):
        with pytest.raises(QueryError, match=r"^fleet must be a Fleet, a Path or a str, got \{'jobs': .* \(a mapping: "
                                             r"pass solver\.Fleet\.model_validate\(it\)\)$"):
            call()
    built = solver.Fleet.model_validate(fleet)
    assert [job.max_model_len for job in built.jobs] == [8192]


# (4) --write drops a "# prompt + response" comment its length no longer is.

CONFIG = """algorithm: {{algorithm_type: grpo}}
model:
  model_path: Qwen/Qwen3-8B
  max_prompt_tokens: 2048
  max_response_tokens: 30720
  max_model_len: 32768  {comment}

  # the cluster
cluster:
  node_num: 1
  gpu_per_node: 8
explorer:
  rollout_model:
    engine_num: 2
    tensor_parallel_size: 1
"""


def _written(cli: Cli, tmp_path: Path, comment: str, *asked: str) -> tuple[str, str]:
    config, written = tmp_path / "config.yaml", tmp_path / "written.yaml"
    config.write_text(CONFIG.format(comment=comment), encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", *asked, "--write", str(written))
    assert status == 0, err
    return written.read_text(encoding="utf-8"), err


def test_write_drops_a_prompt_and_response_comment_its_length_no_longer_is(cli: Cli, tmp_path: Path):
    text, err = _written(cli, tmp_path, "# prompt + response", "--maximize", "len")
    assert "  max_model_len: 50176\n" in text and "prompt + response" not in text
    assert "  # the cluster\n" in text  # the comment lines after it stay
    assert ("model.max_prompt_tokens 2048 + model.max_response_tokens 30720 = 32768, below model.max_model_len 50176: "
            "no sequence uses the rest; raise max_response_tokens to train at the length") in err


def test_write_keeps_a_prompt_and_response_comment_that_stays_true_and_any_other(cli: Cli, tmp_path: Path):
    text, _ = _written(cli, tmp_path, "# prompt + response", "--len", "32768")
    assert "  max_model_len: 32768  # prompt + response\n" in text
    text, _ = _written(cli, tmp_path, "# raised by hand", "--maximize", "len")
    assert "  max_model_len: 50176  # raised by hand\n" in text


# (5) A model that nothing validates is not called validated.

def test_a_model_that_is_not_qwens_is_past_its_native_context_not_a_validated_one(cli: Cli):
    asked = ("--model-config", str(MY_MODEL), "--gpu", "h100", "--gpus", "4", "--maximize", "len")
    status, out, _ = cli(*asked, "--top", "2")
    assert status == 0 and "validated 32768" not in out and "\nvalidated " not in out
    assert "\nmax_model_len  231424, past the native 32768 (YaRN rope scaling, factor 7.0625; " in out
    assert "\nnative         at 32768, the cheapest plan is Env on 4 GPUs (estimated, extrapolated; 0.38x" in out
    assert ("\n# max_model_len past the native 32768: check the model's quality at this length, or plan --len 32768\n"
            in out)
    assert "\n^ past the native 32768: check the model's quality at this length, or plan --len 32768\n" in out
    status, out, _ = cli(*asked, "--emit", "trinity")
    assert status == 0 and (", max_model_len 231424, past the native\n"
                            "# 32768 (check the model's quality at this length, or plan --len 32768)\n") in out
    # A Qwen model keeps its words: its model card validates YaRN.
    status, out, _ = cli("--model", "8B", "--gpu", "h100", "--gpus", "8", "--maximize", "len")
    assert status == 0 and ", past the validated 131072 (" in out and "\nvalidated      at 131072 (" in out


# (6) The rollout hint keeps the GPUs asked for, in all: --total-gpus N --rollout-gpus R.

def test_the_rollout_hint_names_the_gpus_asked_for_in_all(cli: Cli):
    flags = ("--model", "8B", "--gpu", "a100-80g", "--len", "32768")
    status, out, _ = cli(*flags, "--gpus", "4")
    # the row, wrapped past the terminal's width onto a second line
    assert status == 0 and " ".join(" ".join(out.splitlines()[2:4]).split()) == (
        "for rollout --total-gpus 4 --rollout-gpus 2 keeps 2 of the 4 for it: Env + Offload + SP=2 on 2 trainer "
        "GPUs, 32768 tokens, 3.42x the relative step time (documented)")
    # Asked so, those flags give the plan the line names.
    status, out, _ = cli(*flags, "--total-gpus", "4", "--rollout-gpus", "2")
    assert status == 0
    assert out.splitlines()[1] == "plan           Env + Offload + SP=2 on 2 of 2 GPUs, with 2 rollout GPUs"


# (7) A length past a config.json's shorter length key is said in the plan's length row.

def test_a_length_past_a_shorter_length_key_is_said_beside_it(cli: Cli, tmp_path: Path):
    config = json.loads((MY_MODEL / "config.json").read_text(encoding="utf-8"))
    (tmp_path / "config.json").write_text(json.dumps({**config, "seq_length": 8192}), encoding="utf-8")
    asked = ("--model-config", str(tmp_path), "--gpu", "h100", "--gpus", "4")
    status, out, _ = cli(*asked, "--len", "16k")
    assert status == 0 and " ".join(out.split()).count(
        "max_model_len 16384 (vLLM's rollout refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set, past the 8192 "
        "it derives from the model's config: its seq_length of 8192, the smallest of its length keys) token "
        "budget") == 1
    assert "\nexport VLLM_ALLOW_LONG_MAX_MODEL_LEN=1\n" in out
    status, out, _ = cli(*asked, "--len", "8k")
    assert status == 0 and "\nmax_model_len  8192\n" in out and "VLLM_ALLOW_LONG_MAX_MODEL_LEN" not in out
