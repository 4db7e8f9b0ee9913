"""Mutation test of session 85's solver/ changes (mutants46): each test kills a mutant that the session's own tests
let live, asserting the behaviour the mutated line gives."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import qwen3_8b_checkpoint
from test_smallslips37_s80 import _row

import solver
from solver.api import answer_query, config_query, with_config_verdicts
from solver.memory import shown_host_need
from solver.results import written_release
from solver.tables import load_catalog, names_a_stream
from solver.trinity import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]


def test_without_a_reference_model_the_placement_alone_is_the_reason(cli: Cli) -> None:
    # Mutants pk2 (the reference model's swap taking this release's placement too) and mem2 (the placement given
    # ignored where the actor's bytes are counted): no reference model, so its precision is no reason.
    status, out, _ = cli("--model", "8B", "--gpus", "6", "--gpu", "a100", "--trinity-version", "0.5.2",
                         "--no-reference", "--offload", "--len", "16k", "--host-ram", "1000")
    assert status == 0
    assert _row(out, "host memory") == (
        "217.8 GiB per node for Offload (no reference model; at start-up, every rank loading the model; 130.5 while "
        "training), within --host-ram 1000 GiB; Trinity 0.6 needs 224.6 (each pinned block by rows where 0.5's verl "
        "0.7 places it)")


def test_a_critic_engine_sp_above_one_trainer_gpu_fails_on_that_gpu(cli: Cli, tmp_path: Path) -> None:
    # Mutant ck4 (`_engine_mesh_failure` only from 2 trainer GPUs): on 1 GPU an engine SP of 2 meshes none of them.
    path = tmp_path / "trinity.yaml"
    path.write_text("algorithm: {algorithm_type: ppo}\nmodel: {model_path: Qwen/Qwen3-0.6B, max_model_len: 4096}\n"
                    "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 7}}\n"
                    "trainer:\n  trainer_config:\n    critic: {fsdp: {ulysses_sequence_parallel_size: 2}}\n",
                    encoding="utf-8")
    status, out, _ = cli("--from-config", str(path), "--gpu", "a100-80g", "--json", "--trinity-version", "0.6")
    assert status == 0
    current = json.loads(out)[0]["current"]
    assert current["critic_sps"] == []
    assert current["config_problems"][0] == (
        "trainer.trainer_config.critic.fsdp.ulysses_sequence_parallel_size 2 is not trainer.ulysses_sequence_parallel_"
        "size 1: Trinity 0.6 on verl 0.8 or later takes SP 2, its engine's over the trainer's (checking it against "
        "nothing), where SP=2 does not divide 1 GPU: its engine's SP mesh holds 0 of them and it fails as it starts on "
        "the 1 left out, and with verl before 0.8 no release reads it; the verdict and the plans count the critic at "
        "SP 1: set them alike (--write does)")


def test_placed_places_the_critics_offloaded_states_too() -> None:
    # Mutant mem4 (the critic's host states placed as the release places them whatever `placed` says): without a
    # reference model, a dense model's figure differs between the releases by the placement alone, the critic's too.
    model = load_catalog().model("Qwen3-8B")

    def need(version: str, placed: bool | None) -> float:
        return shown_host_need(model, 6, 8, True, version, reference=False, critic="offloaded", loading="every-rank",
                               placed=placed)

    assert (need("0.5", None), need("0.6", None)) == (251.0, 276.9)
    assert (need("0.5", False), need("0.6", True)) == (276.9, 251.0)


def test_a_ref_at_the_actors_own_sp_1_runs_at_it(cli: Cli, tmp_path: Path) -> None:
    # Mutant cf2 (a ref at SP 1 beside the actor's own SP 1 taken for one above it, whose forward fails): both roles
    # at SP 1 under a trainer's SP 2 run at SP 1 with verl before 0.8.
    path = tmp_path / "trinity.yaml"
    path.write_text("model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                    "explorer: {rollout_model: {engine_num: 4}}\ntrainer:\n  ulysses_sequence_parallel_size: 2\n"
                    "  trainer_config:\n    actor_rollout_ref:\n      actor: {ulysses_sequence_parallel_size: 1}\n"
                    "      ref: {ulysses_sequence_parallel_size: 1}\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(path), "--gpu", "a100-80g", "--json", "--trinity-version", "0.6")
    assert status == 0
    assert json.loads(out)[0]["current"]["config_problems"][1] == (
        "trainer.trainer_config.actor_rollout_ref.ref.ulysses_sequence_parallel_size 1 is not trainer.ulysses_sequence_"
        "parallel_size 2: Trinity 0.6 on verl before 0.8 runs that role at SP 1 (with the trainer's token budget), "
        "Trinity 0.6 on verl 0.8 or later at SP 2; the verdict is at SP 2: set them alike (--write does)")


def test_with_config_verdicts_judges_the_config_for_the_release_given() -> None:
    # Mutant api7 (the release given to `with_config_verdicts` dropped): Trinity 0.5 reads the critic's own SP key,
    # where the config's keys alone say 0.6 (whose verl 0.8 path reads the critic's engine's).
    catalog = load_catalog()
    text = ("algorithm: {algorithm_type: ppo}\nmodel: {model_path: Qwen/Qwen3-0.6B, max_model_len: 4096}\n"
            "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\ntrainer:\n"
            "  trainer_config:\n    critic: {ulysses_sequence_parallel_size: 2,\n"
            "             fsdp: {ulysses_sequence_parallel_size: 2}}\n")
    config = read_trinity_config(text, "trinity.yaml", {})
    query = config_query(catalog, config, gpu="h100")
    answers = answer_query(query, catalog)
    current = {release: with_config_verdicts(answers, query, catalog, config, text, "trinity.yaml", {}, release)[0]
               .current for release in ("0.5.2", None)}
    assert current["0.5.2"] is not None and current[None] is not None
    assert current["0.5.2"].config_problems[0].startswith(
        "trainer.trainer_config.critic.ulysses_sequence_parallel_size 2 is not the actor's SP 1: Trinity 0.5 runs the "
        "critic at SP 2, raising its token budget to hold a sequence there")
    assert current[None].config_problems[0].startswith(
        "trainer.trainer_config.critic.fsdp.ulysses_sequence_parallel_size 2 is not trainer.ulysses_sequence_parallel_"
        "size 1: Trinity 0.6 on verl 0.8 or later runs the critic at SP 2")


def test_remove_padding_is_read_from_the_key_the_release_reads() -> None:
    # Mutants cf5 (0.5 reading the trainer's key) and cf7 (`read_trinity_config` reading both keys whatever the
    # release): Trinity 0.5's worker reads verl's key, 0.6 copies the trainer's into verl's; none named, either off.
    head = "model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
    trainer_off = head + "trainer: {use_remove_padding: false}\n"
    verl_off = head + "trainer:\n  trainer_config:\n    actor_rollout_ref:\n      model: {use_remove_padding: false}\n"
    read = {(name, release): read_trinity_config(text, "trinity.yaml", {}, release).remove_padding
            for name, text in (("trainer", trainer_off), ("verl", verl_off)) for release in ("0.5", "0.6", None)}
    assert read == {("trainer", "0.5"): True, ("trainer", "0.6"): False, ("trainer", None): False,
                    ("verl", "0.5"): False, ("verl", "0.6"): True, ("verl", None): False}


def test_a_stray_word_is_told_the_file_options_only_where_it_names_a_yaml_or_json_file(cli: Cli) -> None:
    # Mutant pa11 (any stray word not starting with "-" taken for a file): notes.txt gets no hint; the suffix is
    # read without case.
    assert cli("calibrate", "notes.txt")[::2] == (2, (
        "usage: solve calibrate [options] (--help lists them)\n"
        "solve calibrate: error: unrecognized arguments: notes.txt\n"))
    assert cli("calibrate", "NOTES.YAML")[2].endswith(
        "unrecognized arguments: NOTES.YAML (a file is named after its option: --cells FILE or --model-config PATH)\n")


@pytest.mark.parametrize(("third", "kind"), [
    ("unplaced", "solve cluster --json's output, a placement: give it with --current"),
    ("fits_nowhere", "solve cluster --buy --json's output, what to buy")])
def test_an_output_of_exactly_its_telling_keys_is_told_what_it_is(cli: Cli, tmp_path: Path, third: str,
                                                                  kind: str) -> None:
    # Mutant rd5 (an output told only where it holds more keys than those that tell it apart): a trimmed placement,
    # made before JSON had schema_version (s89: read as version 1, so told too).
    path = tmp_path / "yesterday.json"
    path.write_text(json.dumps({"placements": [], third: []}), encoding="utf-8")
    status, out, err = cli("cluster", str(path))
    assert (status, out, err.count("\n")) == (2, "", 1)
    assert err.startswith(f"solve cluster: error: {path}: this looks like {kind}")  # alone (cluster92)


@pytest.mark.parametrize(("path", "stream"), [("/proc/4242/fd/0", True), ("/proc/self/fd/1", True),
                                              ("/dev/fd/63", True), ("/proc/4242/fd", False), ("/dev/stdinx", False)])
def test_a_stream_is_named_by_a_process_number_too(path: str, stream: bool) -> None:
    # Mutant tx3 (``/proc/PID/fd/N`` not a stream, only ``/proc/self``'s).
    assert names_a_stream(path) is stream


@pytest.mark.skipif(not Path("/dev/stdin").exists(), reason="no /dev/stdin on this system")
def test_a_file_and_standard_input_redirected_from_it_are_one_file_read_once(
        cli: Cli, standard_input: Callable[[int], None], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Mutant pt3 (standard input named only where both options name a stream): --cells /dev/stdin < trinity.yaml.
    config = tmp_path / "trinity.yaml"
    config.write_text("model: {model_path: Qwen/Qwen3-4B, max_model_len: 4096}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with config.open(encoding="utf-8") as given:
        standard_input(given.fileno())
    assert cli("--from-config", "trinity.yaml", "--cells", "/dev/stdin", "--gpu", "h100") == (2, "", (
        "solve: error: --from-config trinity.yaml and --cells /dev/stdin name one file: each reads a file of "
        "its own kind, and standard input is read once: give each its own file\n"))


@pytest.mark.parametrize(("given", "meant"), [
    ("1000000000000ms", ": 1000000000000ms is 1000000000 seconds, give 1000000000"), ("1000000000001ms", "")])
def test_the_most_seconds_time_limit_takes_is_still_meant(cli: Cli, given: str, meant: str) -> None:
    # Mutant at6 (the seconds meant only below the most --time-limit takes, 1e9): exactly 1e9 seconds is taken.
    status, out, err = cli("--model", "4B", "--len", "8k", "--time-limit", given)
    assert (status, out, err.splitlines()[-1]) == (
        2, "", f"solve: error: argument --time-limit: expected a number of seconds (10 or 10s), got {given!r}{meant}")


def test_the_unchecked_host_caution_gives_the_share_of_each_of_two_trainer_gpus(cli: Cli) -> None:
    # Mutant rs3 (the share per trainer GPU only from 3 GPUs on a node): 2 GPUs share 351.6 GiB; one takes it all.
    for gpus, share in (("2", " (175.8 GiB per trainer GPU)"), ("1", "")):
        status, out, _ = cli("--model", "14B", "--len", "16k", "--gpus", gpus, "--gpu", "a100")
        assert status == 0
        assert _row(out, "caution").startswith(f"Offload needs 351.6 GiB of host memory per node{share}, more than ")


def test_one_pool_of_two_with_a_node_down_counts_the_fleets_gpus_on_nodes_up(cli: Cli, tmp_path: Path) -> None:
    # Mutants rc1 and rc2 (nodes up said only where every pool has one down): a spare pool beside one with a node down.
    path = tmp_path / "fleet.yaml"
    whole_node = "model: 14B, max_model_len: 65536, rollout_gpus: 4"
    path.write_text("pools:\n  - {name: a100, gpu: A100-80GB, nodes: 2, gpus_per_node: 8, down: [1]}\n"
                    "  - {name: spare, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}\njobs:\n"
                    + "".join(f"  - {{name: {name}, {whole_node}}}\n" for name in "abc"), encoding="utf-8")
    status, out, _ = cli("cluster", str(path), "--buy", "--no-widen")
    assert status == 0
    assert out.splitlines()[0] == ("status: optimal; to place every job, buy 8 GPUs (1 node), proven the fewest (at "
                                   "their fewest they take 24 GPUs, 8 more than the fleet's 16 on nodes up)")
    status, out, _ = cli("cluster", str(path), "--required", "all", "--json")
    assert status == 1
    assert json.loads(out)["unplaced"][0]["reason"] == (
        "the required jobs (a, b, c) do not all fit the fleet together: at their fewest they take 24 GPUs, more than "
        "the fleet's 16 on nodes up; --buy names the nodes to add for them")


def test_a_release_named_for_the_config_overrides_the_plans() -> None:
    # Mutant rs5 (the release named taken only where none is, the plan's otherwise): 0.5.1 named is 0.5's keys.
    planned = solver.plan("4B", gpu="h100", max_model_len=4096, trinity_version="0.6")[0].plans[0]
    unnamed = solver.plan("4B", gpu="h100", max_model_len=4096)[0].plans[0]
    assert [written_release(planned), written_release(planned, "0.5.1"), written_release(unnamed),
            written_release(unnamed, "v0.5.2")] == ["0.6", "0.5", None, "0.5"]


def test_a_model_config_folder_is_its_config_json_beside_another_option(cli: Cli, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # Mutant pt5 (--model-config's folder compared as the folder, not its config.json, and others as config.json).
    qwen3_8b_checkpoint(tmp_path / "ckpt")
    monkeypatch.chdir(tmp_path)
    assert cli("--model-config", "ckpt", "--weights", "ckpt/config.json", "--len", "8k") == (2, "", (
        "solve: error: --weights ckpt/config.json and --model-config ckpt/config.json name one file: each reads "
        "a file of its own kind: give each its own file\n"))
