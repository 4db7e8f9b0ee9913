"""A newcomer's guesses from other tools (s85's persona80): parallelism options, an option joined to its value,
short options; and solve memory's words on a GPU type without tables of its own."""

from __future__ import annotations

import json

import pytest

ASKED = ("--model", "8B", "--gpu", "h100", "--gpus", "4", "--len", "32k")
PIPELINE = ("the trainer rft-solver plans, verl's FSDP, has no pipeline parallelism: FSDP shards every layer over the "
            "trainer GPUs (--gpus N)")
SHARDED = ("the trainer rft-solver plans, verl's FSDP, always shards the parameters, gradients and optimizer states "
           "over the trainer GPUs, as ZeRO-3 does; Offload moves them to host memory (--offload)")
EXPERTS = ("the trainer rft-solver plans, verl's FSDP, has no expert parallelism: FSDP shards the experts over the trainer "
           "GPUs (--gpus N) like every other weight; the rollout's expert parallelism is its own, "
           "explorer.rollout_model.enable_expert_parallel")  # --ep was told "did you mean --help?", --ep-size "--sp?"


@pytest.mark.parametrize(("written", "words"), [
    ("--dp", "the data-parallel ranks are not given: they are the trainer GPUs over the SP degree (--gpus N, --sp S)"),
    ("--data_parallel_size", ("the data-parallel ranks are not given: they are the trainer GPUs over the SP degree "
                              "(--gpus N, --sp S)")),
    ("--pp", PIPELINE),
    ("--pipeline-model-parallel-size", PIPELINE),
    ("--cp", "the trainer rft-solver plans, verl's FSDP, splits a long sequence over GPUs by Ulysses SP: --sp S"),
    ("--zero3", SHARDED), ("--fsdp", SHARDED), ("--deepspeed", SHARDED),
    ("--ep", EXPERTS), ("--expert-model-parallel-size", EXPERTS),
])
@pytest.mark.parametrize("command", [(), ("memory",)])
def test_another_parallelism_is_told_what_the_fsdp_trainer_does_not_a_wrong_guess(cli, written: str, words: str,
                                                                                  command: tuple[str, ...]):
    # --dp 2 was told "did you mean --dpo?" (DPO training), --pp 2 "--critic" (by --ppo), --fsdp "--sp"; --zero3,
    # --deepspeed and --cp were told nothing.
    prog = " ".join(("solve", *command))
    status, out, err = cli(*command, *ASKED, written, "2")
    assert (status, out) == (2, "") and err.endswith(
        f"{prog}: error: unrecognized arguments: {written} 2 ({words})\n") and err.count("\n") == 2


STRATEGY = ("the trainer rft-solver plans, verl's FSDP, is Trinity's trainer_strategy fsdp or fsdp2, and a plan with "
            "Offload (--offload) sets fsdp2, which CPU offload needs; a megatron trainer is not planned")
DEFAULTS_ON = ("rft-solver plans with Trinity's defaults on: dynamic batch sizes, gradient checkpointing and remove "
               "padding (dynamic batch sizes off for DPO, whose pairs they split, and with remove padding for a model "
               "of its own attention code, InternLM2's); solve --from-config says where a config turns one off")
# (s87 lastread87: the words said the plans take dynamic batch sizes on, where --dpo's and InternLM2's keys turn them
# off: `solve --dpo --emit trinity` writes trainer.use_dynamic_bsz: false)


@pytest.mark.parametrize(("written", "words"), [
    ("--strategy fsdp2", STRATEGY), ("--trainer_strategy fsdp2", STRATEGY), ("--use-dynamic-bsz", DEFAULTS_ON),
    ("--gradient-checkpointing", DEFAULTS_ON), ("--use_remove_padding", DEFAULTS_ON),
    ("--offload-param", "did you mean --offload?"), ("--offload-optimizer", "did you mean --offload?"),
])
def test_a_verl_users_trainer_switches_are_told_what_the_plans_take(cli, written: str, words: str):
    # s87's persona (a verl/FSDP maintainer): --strategy fsdp2, --use-dynamic-bsz and --gradient-checkpointing were
    # told nothing; DeepSpeed's --offload-param and --offload-optimizer, nothing either.
    status, out, err = cli(*ASKED, *written.split())
    assert (status, out) == (2, "") and err.endswith(f"solve: error: unrecognized arguments: {written} ({words})\n")


@pytest.mark.parametrize(("written", "meant"), [("--maximize-len", "--maximize len"),
                                                ("--minimize-gpus", "--minimize gpus"),
                                                ("--minimize_gpus", "--minimize gpus"),
                                                ("--min-gpus", "--minimize gpus"), ("--fewest-gpus", "--minimize gpus"),
                                                ("--longest", "--maximize len"), ("--max-context", "--maximize len")])
def test_an_objective_written_as_one_option_is_told_the_option_with_its_value(cli, written: str, meant: str):
    # --maximize-len was told "did you mean --maximize?", which then wants a value; --min-gpus, nothing.
    assert cli("--model", "8B", "--gpus", "4", written) == (
        2, "", (f"usage: solve [options] (--help lists them)\nsolve: error: unrecognized arguments: {written} "
                f"(did you mean {meant}?)\n"))


def test_an_objective_of_solve_is_not_offered_to_solve_cluster(cli, tmp_path):
    # solve cluster has --minimize too, but only nodes: --min-gpus is not --minimize gpus there.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: p, gpu: H100, nodes: 1, gpus_per_node: 8}\njobs:\n"
                     "  - {name: j, model: 4B, max_model_len: 8192}\n", encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--min-gpus")
    assert (status, out) == (2, "") and err.endswith("unrecognized arguments: --min-gpus\n")
    status, out, err = cli("cluster", str(fleet), "--minimize-nodes")
    assert (status, out) == (2, "") and err.endswith("unrecognized arguments: --minimize-nodes (did you mean "
                                                     "--minimize nodes?)\n")


@pytest.mark.parametrize("command", [(), ("memory",)])
def test_dash_m_is_told_model(cli, command: tuple[str, ...]):
    status, out, err = cli(*command, "-m", "8b", "--gpu", "h100", "--gpus", "4", "--len", "32k")
    assert (status, out) == (2, "") and err.endswith("unrecognized arguments: -m 8b (did you mean --model?)\n")


def test_memory_on_a_gpu_without_tables_does_not_say_the_setting_trains_at_no_length(cli):
    # On 4 H100s, Env + SP=4 fits 55296 tokens by the memory model; an A100-80GB cell (a card with at least its
    # memory) refutes the row 61440 that length falls to. The breakdown said "they let it train at no length", yet
    # the planner trains it at 51200 (estimated): the tables vouch for nothing on the H100, having none of their own.
    asked = ("memory", "--model", "8B", "--gpu", "h100", "--gpus", "4", "--len", "64k", "--sp", "4", "--env")
    status, out, _ = cli(*asked)
    flat = " ".join(out.split())
    assert status == 1 and "let it train at no length" not in flat
    assert ("and they decide: they vouch for it at no length on H100-80GB (another GPU type's table rules lengths "
            "out, not in)") in flat
    status, out, _ = cli(*asked, "--json")
    assert status == 1 and json.loads(out)["tables_longest"] is None
    planned = cli("--model", "8B", "--gpu", "h100", "--gpus", "4", "--exact", "--sp", "4", "--env", "--no-offload",
                  "--maximize", "len", "--json")
    assert planned[0] == 0 and json.loads(planned[1])[0]["plans"][0]["max_model_len"] == 51200


def test_memory_on_a_gpu_with_tables_still_says_how_far_they_let_it_train(cli):
    status, out, _ = cli("memory", "--model", "8B", "--gpu", "a100", "--gpus", "4", "--len", "64k", "--sp", "4",
                         "--env")
    assert status == 1 and "and they decide: they let it train up to 51200" in " ".join(out.split())


@pytest.mark.parametrize(("command", "written", "joined"), [
    ((), ("--gpu", "a100", "h100"), "--gpu a100,h100"),
    ((), ("--gpu=a100", "h100"), "--gpu a100,h100"),
    (("map",), ("--model", "8B", "14B"), "--model 8B,14B"),
    (("map",), ("--gpu", "a100", "h20"), "--gpu a100,h20")])
def test_a_second_value_of_a_list_option_is_told_the_commas(cli, command: tuple[str, ...], written: tuple[str, ...],
                                                            joined: str):
    # --gpu a100 h100 was told "quote one with spaces", which gives the unknown GPU 'a100 h100'.
    asked = ("--model", "8B", "--len", "32k", *written) if not command else (*command, *written)
    option, _, value = (written[0].partition("=") if "=" in written[0] else (written[0], "", written[1]))
    status, out, err = cli(*asked)
    assert (status, out) == (2, "") and err.endswith(
        f"unrecognized arguments: {written[-1]} ({option} took '{value}': several are separated by commas, "
        f"{joined})\n")


@pytest.mark.parametrize("asked", [("--model", "qwen3", "8B", "--len", "32k"), ("tables", "--gpu", "a100", "h20"),
                                   ("--model", "8B", "--gpu", "a100", "32k"), ("map", "--gpu", "a100", "foo")])
def test_a_second_word_an_option_takes_alone_is_still_told_one_word(cli, asked: tuple[str, ...]):
    # solve's --model and solve tables' --gpu take one; 32k is no GPU type, nor foo; qwen3 names no model (solve's
    # --model 8B 14B is told solve map: test_smallslips47_s85).
    status, out, err = cli(*asked)
    assert (status, out) == (2, "") and err.endswith(": an option's value is one word; quote one with spaces)\n")


CHOSEN = {  # the words where the command chooses the SP degree, Offload and the GPUs itself: no option named
    "--dp 2": "the data-parallel ranks are not given: they are the trainer GPUs over the SP degree",
    "--pp 2": "the trainer rft-solver plans, verl's FSDP, has no pipeline parallelism: FSDP shards every layer over the "
              "trainer GPUs",
    "--tp 2": ("the trainer rft-solver plans, verl's FSDP, has no tensor parallelism: Ulysses SP splits each sequence "
               "over GPUs instead; the rollout's tensor parallelism is its own, "
               "explorer.rollout_model.tensor_parallel_size"),
    "--cp 2": "the trainer rft-solver plans, verl's FSDP, splits a long sequence over GPUs by Ulysses SP",
    "--zero3": ("the trainer rft-solver plans, verl's FSDP, always shards the parameters, gradients and optimizer "
                "states over the trainer GPUs, as ZeRO-3 does; Offload moves them to host memory"),
    "--strategy fsdp2": ("the trainer rft-solver plans, verl's FSDP, is Trinity's trainer_strategy fsdp or fsdp2, and "
                         "a plan with Offload sets fsdp2, which CPU offload needs; a megatron trainer is not planned"),
    "--use-dynamic-bsz": DEFAULTS_ON,
}


@pytest.mark.parametrize("written", list(CHOSEN))
@pytest.mark.parametrize("command", ["map", "cluster"])
def test_solve_map_and_cluster_tell_another_parallelism_what_the_plans_do(cli, tmp_path, written: str, command: str):
    # solve map chose no guess (--dp 2 was told --dpo, --pp 2 --critic) and said nothing, nor did solve cluster, whose
    # --strategy fsdp2 was told nothing either: they say what solve says, less the options they lack (--sp, --gpus,
    # --offload), whose settings they choose.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: p, gpu: H100, nodes: 1, gpus_per_node: 8}\njobs:\n"
                     "  - {name: j, model: 4B, max_model_len: 8192}\n", encoding="utf-8")
    asked = ("map", "--gpu", "h100", "--model", "8B") if command == "map" else ("cluster", str(fleet))
    assert cli(*asked, *written.split()) == (
        2, "", (f"usage: solve {command} [options] (--help lists them)\nsolve {command}: error: unrecognized arguments: "
                f"{written} ({CHOSEN[written]})\n"))
