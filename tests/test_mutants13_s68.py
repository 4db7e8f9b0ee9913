"""Mutation testing of s68's merges (mutants13): the behaviours of the wider questions asked first (pins2) that no test
held. The host question settles a pinned query's first solve where the pins cost and the limit does not; an unproven
wider answer settles nothing; a ranked answer's objective value and bound are its best plan's; and a reason takes the
host question's plan for the one without a limit only where every plan's need fits the most host memory. And of
persona22's and persona23's: a fit's short warning names every multiplier outside its range, on its side; a crash of
any kind exits 70, also where stderr cannot take the words. Of checkvars': a private name in any case hides its value;
the check command carries a variable that only the check at the plan's own length reads. Of smallnames': a memory
size with a decimal, a GPU name as nvidia-smi prints it with a slip, a slip read as digits then swapped, a model's
size in millions kept; a scalar that is no plain word read as YAML, and no ruamel loaded to refuse a malformed config
read as Trinity does. Of words6: --sp's help names the node."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import pytest
import yaml
from command_words import make_query
from option_reference import option_reference
from test_widerfirst_s68 import _fields, _solves

import solver.api
import solver.solve
from solver.__main__ import run
from solver.calibrate import implausible
from solver.solve import _asked_first, answer_for
from solver.tables import QueryError, load_catalog, load_memory_model
from solver.tables.text import guessed_name
from solver.trinity.fragment import check_command
from solver.trinity.interpolation import decode_scalar

CATALOG = load_catalog()


def _query(model: str, budget: int, length: int, **rest: Any) -> Any:
    return make_query(CATALOG, gpu="A100-80GB", model=model, objective="cheapest", budget_gpus=budget,
                      max_model_len=length, **rest)


def test_the_host_question_settles_a_pinned_query_whose_pins_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    # SP=4 costs on 6 A100s (the free best is Env + SP=2): the question without the pin settles nothing, the host
    # question (SP=4 kept, the most host memory) does: the query's ranking goes on from its best, one solve (none left).
    # Trinity 0.5.1 loads the untied model on rank 0 alone; on every rank, no release named, 96 GiB holds no plan.
    query = _query("Qwen3-8B", 6, 32768, sp=4, top=3, host_ram_gb=96, trinity_version="0.5.1")
    asked = _asked_first(CATALOG, query, "A100-80GB")
    assert asked.unpinned is not None and asked.unpinned.answer.plans[0].sp == 2
    count = _solves(monkeypatch)
    answer = answer_for(CATALOG, query, "A100-80GB", explained=False, asked=asked.questions)
    assert (count[0], [(p.gpus, p.setting.label) for p in answer.plans]) == (1, [(4, "SP=4")])
    count[0] = 0
    assert _fields(answer_for(CATALOG, query, "A100-80GB", explained=False)) == _fields(answer) and count[0] == 2


def test_an_unproven_wider_answer_settles_nothing() -> None:
    # a wider question the time limit stopped ("feasible") may hold a plan that is not the best: the query is solved
    # as if it had not been asked (here its plan is the query's second best, Env + Offload + SP=2 on 4 GPUs)
    query = _query("Qwen3-8B", 6, 32768, sp=2, top=3)
    own = answer_for(CATALOG, query, "A100-80GB")
    asked = _asked_first(CATALOG, query, "A100-80GB")
    assert asked.unpinned is not None
    stopped = asked.unpinned._replace(answer=asked.unpinned.answer.model_copy(
        update={"status": "feasible", "plans": (own.plans[1],)}))
    answer = answer_for(CATALOG, query, "A100-80GB", asked=(stopped,))
    assert [(p.gpus, p.setting.label) for p in answer.plans] == [
        (6, "Env + SP=2"), (4, "Env + Offload + SP=2"), (2, "Env + Offload + SP=2")]
    assert _fields(answer) == _fields(own)


def test_a_ranked_answers_objective_value_and_bound_are_its_best_plans() -> None:
    query = _query("Qwen3-8B", 6, 32768, top=3)
    ranked = answer_for(CATALOG, query, "A100-80GB")
    best = answer_for(CATALOG, query.model_copy(update={"top": 1}), "A100-80GB")
    assert (ranked.status, len(ranked.plans), ranked.objective_value, ranked.bound) == ("optimal", 3, 3, 3.0)
    assert (best.objective_value, best.bound) == (3, 3.0)


def test_a_reason_solves_the_plan_without_the_limit_where_a_larger_count_needs_more_than_the_most(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Qwen3-4B ties its embeddings: each rank loads it, so 8 GPUs on a node need 141.0 GiB, 4 need 81.1 and one 36.2
    # (93.4 with Offload), each beside the reference model's fp32 shards. With the most host memory made 100 GiB, the
    # host question leaves out the 8-GPU plan that the question without a limit has: the reason does not take its answer
    query = _query("Qwen3-4B", 8, 65536, host_ram_gb=10)
    expected = answer_for(CATALOG, query, "A100-80GB")
    assert ("; without --host-ram, SP=4 on 8 GPUs trains it (65536 tokens), and it needs 141.0 GiB of host memory per "
            "node while the model loads") in (expected.reason or "")
    monkeypatch.setattr(solver.solve, "MAX_HOST_RAM_GB", 100)
    asked = _asked_first(CATALOG, query, "A100-80GB")
    assert asked.more_host_ram is not None and asked.more_host_ram.answer.plans[0].gpus == 4
    assert _fields(answer_for(CATALOG, query, "A100-80GB", asked=asked.questions)) == _fields(expected)


def test_the_short_words_name_every_multiplier_outside_its_range_each_on_its_side(tmp_path: Path) -> None:
    shipped = Path(__file__).parent.parent / "tables" / "memory-model.yaml"
    text = yaml.safe_load(shipped.read_text(encoding="utf-8"))
    text["coefficients"].update(states=1.3, gathered=0.3, fragmentation=1.5)
    path = tmp_path / "odd.yaml"
    path.write_text(yaml.safe_dump(text), encoding="utf-8")
    assert implausible(load_memory_model(path).coefficients) == [
        "states 1.3 above its physical range", "gathered 0.3 below its physical range",
        "fragmentation 1.5 above its physical range"]


ANSWER_ARGV = ["solve", "--model", "4B", "--gpu", "a100", "--len", "8k", "--json"]


def test_a_crash_of_any_exception_type_exits_70(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    def crashed(*args: Any, **kwargs: Any) -> NoReturn:
        raise AttributeError("a defect")

    monkeypatch.setattr(solver.api, "answer_query", crashed)
    monkeypatch.setattr(sys, "argv", ANSWER_ARGV)
    assert run() == 70
    out, err = capsys.readouterr()
    assert (out, err.splitlines()[-2:]) == ("", [
        "AttributeError: a defect",
        "solve: internal error (the traceback above): no answer, and no bad input; exit status 70"])


class _FullStream:
    """A standard error that takes no words (2>/dev/full): each write fails."""

    def write(self, text: str) -> int:
        raise OSError(28, "No space left on device")

    def flush(self) -> None:
        raise OSError(28, "No space left on device")


def test_a_crash_with_standard_error_full_still_exits_70(monkeypatch: pytest.MonkeyPatch) -> None:
    def crashed(*args: Any, **kwargs: Any) -> NoReturn:
        raise RuntimeError("a defect")

    monkeypatch.setattr(solver.api, "answer_query", crashed)
    monkeypatch.setattr(sys, "argv", ANSWER_ARGV)
    monkeypatch.setattr(sys, "stderr", _FullStream())
    assert run() == 70


def test_a_private_name_in_any_case_hides_its_value() -> None:
    plan = answer_for(CATALOG, _query("Qwen3-4B", 1, 8192), "A100-80GB").plans[0]
    command = check_command(plan, CATALOG.model("Qwen3-4B"), ("--gpu", "A100-80GB"), None, None,
                            environment=(("hf_token", "12"), ("Wandb_Api_Key", "1"), ("ngpus", "8")),
                            critic_trained=False)  # a config that trains no critic: no --critic none
    assert command == ('hf_token="${hf_token:?}" Wandb_Api_Key="${Wandb_Api_Key:?}" ngpus=8 '
                       "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve --from-config CONFIG --check --gpu "
                       "A100-80GB")  # the plan has Env: its variable too


YARN_FROM_SHELL = ("mode: both\nalgorithm: {algorithm_type: grpo, repeat_times: 8}\nbuffer: {batch_size: 32}\n"
                   "model:\n  model_path: Qwen/Qwen3-8B\n  max_prompt_tokens: 2048\n  max_response_tokens: 2048\n"
                   '  rope_scaling: {rope_type: yarn, factor: "${oc.env:FACTOR,1.0}", '
                   "original_max_position_embeddings: 40960}\n"
                   "cluster: {node_num: 1, gpu_per_node: 8}\n"
                   "explorer:\n  rollout_model: {engine_num: 2, tensor_parallel_size: 2}\n")
"""Qwen3-8B without model.max_model_len (the plan's is prompt + response, 4096), with a YaRN factor from FACTOR that
only the check reads, at the plan's length (within the native context: YaRN is not needed, and its factor is read)."""


def test_the_check_command_carries_a_variable_only_the_check_at_the_plans_length_reads(
        cli: Callable[..., tuple[int, str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "trinity.yaml"
    config.write_text(YARN_FROM_SHELL, encoding="utf-8")
    monkeypatch.setenv("FACTOR", "2.0")  # not its default, 1.0, which a shell without it reads the same (s69)
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80g", "--emit", "trinity")
    assert status == 0 and "# plan: vanilla on 4 A100-80GB trainer GPUs (4 for rollout), max_model_len 4096\n" in out
    # The fragment has no algorithm_type: its check leaves out Trinity's default PPO's critic, as the plan did.
    assert "#   FACTOR=2.0 solve --from-config CONFIG --check --gpu A100-80GB --critic none\n" in out


@pytest.mark.parametrize(("name", "guess"), [
    ("96.0gb", "H20-96GB or GH200-96GB"),  # a memory size with a decimal
    ("NVIDIA H10O PCIe", "H100-80GB"),  # nvidia-smi's words around a slip: the guess is of the name without them
    ("ho2", "H20-96GB"),  # a letter for a digit, then two characters swapped: h02, h20
])
def test_an_unknown_gpu_name_gets_the_guess_of_what_it_was_meant_to_be(name: str, guess: str) -> None:
    with pytest.raises(QueryError, match=rf"^unknown GPU '{name}' \(did you mean {guess}\?\); accepted: "):
        CATALOG.gpu(name)


def test_sp_help_says_an_sp_group_stays_in_one_node(cli: Callable[..., tuple[int, str, str]]) -> None:
    # --help gives the rules of a degree short (session 93); docs/cli.md's option reference, the nodes' rule too
    status, out, _ = cli("--help")
    shown = " ".join(out.split())  # as argparse wraps it at any width
    assert status == 0 and ("--sp S pin the Ulysses SP degree: it divides the trainer GPUs and the attention heads, "
                            "and SP and the KV heads divide one another --env, --no-env") in shown
    assert ("and a trainer that spans nodes keeps each SP group in one node (a --model-config model that runs its "
            "checkpoint's own code, its auto_map, takes SP=1 only). solve memory --sp (default 1) keeps the same "
            "rules.") in option_reference()


@pytest.mark.parametrize(("text", "value"), [
    ("8", 8), ("1_000", 1000), ("0x10", 16), ("1e3", 1000.0),  # numbers, which start with no letter: YAML's
    ("yarn # the type", "yarn"),  # a word and a comment: not a plain word alone, read as YAML (the word)
])
def test_text_that_is_no_plain_word_alone_decodes_as_yaml(text: str, value: object) -> None:
    assert decode_scalar(text) == value and type(decode_scalar(text)) is type(value)


MALFORMED_LOADS_NO_RUAMEL = """\
import sys
from solver.trinity.keys import ConfigError
from solver.trinity.reader import load_config_mapping
try:
    load_config_mapping("model: [1\\n", "user.yaml")
except ConfigError as error:
    print(error)
print("ruamel" in sys.modules)
"""


def test_a_malformed_config_read_as_trinity_does_is_refused_without_loading_ruamel() -> None:
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run([sys.executable, "-c", MALFORMED_LOADS_NO_RUAMEL], capture_output=True, text=True,
                            timeout=120, check=False, cwd=root)
    assert (result.returncode, result.stdout) == (0, (
        "user.yaml: at the end of the file: malformed YAML: expected ',' or ']', but got '<stream end>'\nFalse\n")), \
        result.stderr


def test_a_model_size_in_millions_is_no_slip_of_its_digits_swapped() -> None:
    # as qwen3-41b is no slip of Qwen3-14B, smollm-153m is none of SmolLM-135M: another size; a swap elsewhere is
    names = {"smollm-135m": "SmolLM-135M"}
    assert (guessed_name("smollm-153m", names), guessed_name("smolml-135m", names)) == (None, "SmolLM-135M")
