"""A Trinity config's own PPO critic counted by default (s74): `--from-config`, `--check` and `--write` (and the API's
`config_query`) count the critic that the config's algorithm trains (Trinity's ``ppo``, its default) as its own flags
hold it, read as each release reads them: Trinity 0.5, and 0.6 on verl before 0.8, its ``critic.model.fsdp_config``
under its own strategy; 0.6 on verl 0.8 or later its engine's ``critic.fsdp``, else the flags under ``trainer``, under
the trainer's strategy (where the two readings differ, the one that holds more on the GPUs). ``--critic X`` replaces
it, ``--critic none`` leaves it out; plans that count a critic write its keys; a fragment's check command says
``--critic none`` where its plan counted none. The figures are Qwen3-8B's at 32768 tokens on 4 A100s (SP=4, Env off):
21.15 GiB of critic states (less their gradients, freed after its own update: s74) beside the actor's 61.07 GiB, 82.21
of the 71.28 usable."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from test_trinity import vanilla_plan

from solver.api import config_query, memory_answer, plan
from solver.query import ConfigProblem
from solver.rules import COMMAND_OPTIONS
from solver.tables import QueryError, load_catalog
from solver.trinity import patched_trinity_config, read_trinity_config
from solver.trinity.config import verdict_critic_note

Cli = Callable[..., tuple[int, str, str]]

CONFIG = ("cluster: {node_num: 1, gpu_per_node: 8}\n"
          "explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1}}\n"
          "model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
          "trainer:\n  ulysses_sequence_parallel_size: 4\n")
"""PPO (Trinity's default: no algorithm_type) on 4 trainer GPUs beside 4 rollout GPUs, SP=4 at 32768 tokens."""
OWN = "  trainer_config:\n    critic:\n      model:\n        fsdp_config: {%s}\n"
"""The critic's own flags (Trinity 0.5, and 0.6 on verl before 0.8)."""
ENGINE = "  trainer_config:\n    critic:\n      fsdp: {%s}\n"
"""Its engine's flags (Trinity 0.6 on verl 0.8 or later)."""
BOTH = "  trainer_config:\n    critic:\n      model:\n        fsdp_config: {%s}\n      fsdp: {%s}\n"
RELOAD = "param_offload: true, optimizer_offload: true"
ALL = "param_offload: true, optimizer_offload: true, offload_policy: true"
TRAINER_ALL = "  param_offload: true\n  optimizer_offload: true\n  offload_policy: true\n"
"""Trinity 0.6's flags under trainer (the actor's Offload), which verl 0.8 or later copies into the critic's engine."""


def critic_of(text: str, version: str | None = None) -> str | None:
    return read_trinity_config(text, "run.yaml", {}, version).critic  # type: ignore[arg-type]


@pytest.mark.parametrize(("extra", "states"), [
    ("", {None: "resident", "0.5": "resident", "0.6": "resident"}),
    # Its own param_offload and optimizer_offload: reloaded where they are read; 0.6 on verl 0.8 reads the trainer's
    # (unset, off), so with 0.6 the reading that holds more on the GPUs, resident, counts.
    (OWN % RELOAD, {None: "reloaded", "0.5": "reloaded", "0.6": "resident"}),
    # offload_policy needs FSDP2: 0.5's default strategy is fsdp (then param_offload and optimizer_offload reload);
    # 0.6's fsdp2. On verl 0.8 the trainer's flags (unset) make 0.6's resident.
    (OWN % ALL, {None: "reloaded", "0.5": "reloaded", "0.6": "resident"}),
    ("  trainer_strategy: fsdp2\n" + OWN % ALL, {None: "offloaded", "0.5": "offloaded", "0.6": "resident"}),
    # The critic's own strategy, which 0.5 and 0.6 on verl before 0.8 read (verl 0.8 freezes it to the trainer's).
    (OWN.replace("      model:", "      strategy: fsdp2\n      model:") % ALL,
     {None: "offloaded", "0.5": "offloaded", "0.6": "resident"}),
    # Trinity 0.6's trainer flags (a config with them is 0.6's without a version): verl 0.8 copies them into the
    # critic's engine (offloaded), verl before 0.8 does not (resident): resident counts.
    (TRAINER_ALL, {None: "resident", "0.6": "resident"}),
    (TRAINER_ALL + OWN % ALL, {None: "offloaded", "0.6": "offloaded"}),
    # Its engine's own flags override the trainer's; read beside its own, they agree.
    (TRAINER_ALL + BOTH % (RELOAD, RELOAD + ", offload_policy: false"), {None: "reloaded", "0.6": "reloaded"}),
    (ENGINE % ALL, {None: "resident", "0.5": "resident", "0.6": "resident"}),
    (BOTH % (ALL, ALL), {None: "offloaded", "0.6": "offloaded"}),
])
def test_each_release_reads_the_critics_flags_as_trinity_does(extra: str, states: dict[str | None, str]):
    for version, held in states.items():
        assert critic_of(CONFIG + extra, version) == held, version


def test_where_the_readings_differ_the_note_names_both():
    config = read_trinity_config(CONFIG + OWN % RELOAD, "run.yaml", {}, "0.6")
    (note,) = [words for words, code in zip(config.notes, config.note_codes, strict=True)
               if code.value == "critic-trained"]
    assert note == (
        "PPO, Trinity's algorithm where algorithm.algorithm_type is unset, trains a critic model beside the actor on "
        "the same trainer GPUs; the verdict and the plans count its states by the more held on the GPUs of two "
        "readings, verl before 0.8's of its own critic.model.fsdp_config (reloaded) and verl 0.8 or later's of "
        "critic.fsdp, else the trainer's (resident): resident (on the GPUs throughout), and its own update "
        "as a second peak; critic=\"none\" counts the actor alone; critic=\"reloaded\" counts it as verl before 0.8 "
        "reads it, and solver.trinity.patch_trinity_config then sets both readings' flags to that")


def verdict(cli: Cli, path: Path, *flags: str) -> dict:  # type: ignore[type-arg]
    status, out, err = cli("--from-config", str(path), "--gpu", "A100-80GB", *flags, "--json")
    assert status == 0, err
    return json.loads(out)[0]  # type: ignore[no-any-return]


@pytest.mark.parametrize(("extra", "critic"), [("", "resident"), (OWN % RELOAD, "reloaded")])
def test_the_verdict_counts_the_configs_critic_as_solve_memory_does(cli: Cli, tmp_path: Path, extra: str,
                                                                    critic: str):
    path = tmp_path / "ppo.yaml"
    path.write_text(CONFIG + extra, encoding="utf-8")
    found = verdict(cli, path)
    alone = memory_answer("Qwen3-8B", "A100-80GB", 4, 32768, sp=4)
    counted = memory_answer("Qwen3-8B", "A100-80GB", 4, 32768, sp=4, critic=critic)  # type: ignore[arg-type]
    # Resident: its 21.15 GiB beside the actor's 61.07, 82.21 of 71.28, which does not fit; reloaded: none on the GPUs
    # while the actor trains (61.07), but back for its own update, 69.19 (the actor's 31.40 of states less their
    # gradients, 23.55, its own 28.20 and activations), which fits (s74; 77.04 with the actor's gradients): the
    # memory model vouches (no table does for a run with a critic).
    resident = critic == "resident"
    assert (round(alone.total_gib, 2), round(counted.critic_gib, 2), round(counted.usable_gib, 2)) == (
        61.07, 21.15 if resident else 0.0, 71.28)
    assert (round(counted.critic_pass_gib, 2), counted.fits) == (69.19, not resident)
    assert (found["critic"], found["current"]["trains"], found["current"]["predicted"]) == (
        critic, not resident, [82.2, 71.3] if resident else None)
    if not resident:
        assert found["current"]["plan"]["evidence"] == "estimated"
    status, out, _ = cli("memory", "--model", "8B", "--gpu", "A100-80GB", "--gpus", "4", "--len", "32k", "--sp", "4",
                         "--critic", critic, "--json")
    shown = json.loads(out)
    assert (status, shown["total_gib"], shown["critic_pass_gib"], shown["fits"]) == (
        int(resident), round(counted.total_gib, 4), round(counted.critic_pass_gib, 4), not resident)
    assert all(plan["critic"] == critic and plan["evidence"] == "estimated" for plan in found["plans"])


def test_critic_none_leaves_it_out_and_another_value_replaces_it(cli: Cli, tmp_path: Path):
    path = tmp_path / "ppo.yaml"
    path.write_text(CONFIG + OWN % RELOAD, encoding="utf-8")
    left_out = verdict(cli, path, "--critic", "none")
    # The actor alone: the documented cell (SP=4 on 4 GPUs at 32768) decides, as before s74.
    assert (left_out["critic"], left_out["current"]["trains"], left_out["plans"][0]["evidence"]) == (
        None, True, "documented")
    (note,) = [words for words, code in zip(left_out["current"]["config_problems"],
                                            left_out["current"]["config_problem_codes"], strict=True)
               if code == "critic-trained"]
    assert note == ("PPO, Trinity's algorithm where algorithm.algorithm_type is unset, trains a critic model beside "
                    "the actor on the same trainer GPUs; --critic none leaves it out: the verdict and the plans are "
                    "for the actor alone, though the run trains it (its flags hold its states reloaded)")
    replaced = verdict(cli, path, "--critic", "offloaded")
    # Offloaded: none on the GPUs, its own update (48.84 GiB) below the actor's pass: the config's SP=4 fits.
    assert (replaced["critic"], replaced["current"]["trains"], replaced["plans"][0]["evidence"]) == (
        "offloaded", True, "estimated")
    assert ("--critic offloaded counts its states offloaded (offload_policy under fsdp2: in host memory throughout), "
            "where its flags hold them reloaded") in replaced["current"]["config_problems"][-1]
    catalog = load_catalog()
    config = read_trinity_config(path.read_text(encoding="utf-8"), "ppo.yaml", {})
    assert [config_query(catalog, config, gpu="A100-80GB", critic=critic).critic
            for critic in (None, "none", "resident")] == ["reloaded", None, "resident"]


def test_an_algorithm_without_a_critic_is_unchanged(cli: Cli, tmp_path: Path):
    path = tmp_path / "grpo.yaml"
    path.write_text("algorithm: {algorithm_type: grpo}\n" + CONFIG + OWN % RELOAD, encoding="utf-8")
    found = verdict(cli, path)
    assert (found["critic"], found["current"]["trains"], found["plans"][0]["evidence"]) == (None, True, "documented")
    assert "critic-trained" not in found["current"]["config_problem_codes"]
    assert verdict(cli, path, "--critic", "none") == found
    assert critic_of(path.read_text(encoding="utf-8")) is None


@pytest.mark.parametrize("critic", ["resident", "offloaded", "reloaded"])
@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_written_critic_keys_read_back_as_the_plan_counted_them(cli: Cli, tmp_path: Path, critic: str,
                                                                version: str | None):
    path, patched = tmp_path / "ppo.yaml", tmp_path / "patched.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    release = ("--trinity-version", version) if version else ()
    status, _, err = cli("--from-config", str(path), "--gpu", "A100-80GB", "--critic", critic, *release,
                         "--write", str(patched))
    assert status == 0, err
    written = patched.read_text(encoding="utf-8")
    assert critic_of(written, version) == critic
    assert verdict(cli, patched, *release)["critic"] == critic
    # Its own flags, and but for 0.5 (which refuses the key) its engine's; an offloaded one's own strategy too.
    assert ("fsdp: {" in written or "      fsdp:\n" in written) == (version != "0.5")
    assert ("\n      strategy: fsdp2\n" in written) == (critic == "offloaded")


def test_a_plan_without_a_critic_writes_none_of_its_keys(cli: Cli, tmp_path: Path):
    path, patched = tmp_path / "ppo.yaml", tmp_path / "patched.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    assert cli("--from-config", str(path), "--gpu", "A100-80GB", "--critic", "none", "--write", str(patched))[0] == 0
    written = patched.read_text(encoding="utf-8")
    assert "critic:" not in written
    # Its check command leaves the critic out too, as the plan did; so does --emit's for a plan with none.
    assert "--check --gpu A100-80GB --critic none\n" in written
    status, out, _ = cli("--model", "8B", "--gpu", "A100-80GB", "--gpus", "4", "--len", "32k", "--emit", "trinity")
    assert status == 0 and "#   solve --from-config CONFIG --check --gpu A100-80GB --critic none\n" in out
    assert "critic:" not in out


def test_a_fragment_for_a_critic_checks_as_planned_without_critic_none(cli: Cli, tmp_path: Path):
    status, out, _ = cli("--model", "8B", "--gpu", "A100-80GB", "--gpus", "4", "--len", "32k", "--critic", "reloaded",
                         "--emit", "trinity")
    assert status == 0
    assert ("#   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve --from-config CONFIG --check --gpu A100-80GB\n"
            in out)
    assert ("    critic:\n      model:\n        fsdp_config:\n          param_offload: true  # the PPO critic's states "
            "reloaded, as the plan counts them\n          optimizer_offload: true\n          offload_policy: false\n"
            "      fsdp:\n") in out
    config = tmp_path / "merged.yaml"
    config.write_text(out.replace("model:\n", "model:\n  model_path: Qwen/Qwen3-8B\n", 1)
                      + "cluster: {gpu_per_node: 4}\nexplorer: {rollout_model: {engine_num: 0}}\n", encoding="utf-8")
    status, checked, err = cli("--from-config", str(config), "--gpu", "A100-80GB", "--check", "--json")
    found = json.loads(checked)[0]
    assert (status, found["critic"], found["current"]["trains"]) == (0, "reloaded", True), err


def test_solve_map_takes_critic(cli: Cli):
    status, out, err = cli("map", "--model", "8B", "--gpu", "a100", "--budgets", "4", "--critic", "resident", "--json")
    assert status == 0, err
    (mapped,) = json.loads(out)
    (plan,) = mapped["rows"][0]["plans"]
    assert (mapped["critic"], plan["critic"], plan["evidence"]) == ("resident", "resident", "estimated")
    status, alone, _ = cli("map", "--model", "8B", "--gpu", "a100", "--budgets", "4", "--critic", "none", "--json")
    (unmapped,) = json.loads(alone)
    assert "critic" not in unmapped and unmapped["rows"][0]["plans"][0]["max_model_len"] > plan["max_model_len"]
    status, out, _ = cli("map", "--model", "8B", "--gpu", "a100", "--budgets", "4", "--critic", "resident")
    assert status == 0 and "A100-80GB: longest context per model and GPU budget, critic resident" in out


@pytest.mark.parametrize("command", [(), ("memory", "--gpus", "4", "--len", "32k"), ("map",)])
def test_a_bad_critic_exits_2_with_one_line(cli: Cli, command: tuple[str, ...]):
    status, out, err = cli(*command[:1], "--model", "8B", "--gpu", "a100", *command[1:], "--critic", "yes")
    prog = " ".join(("solve", *command[:1]))
    assert (status, out, err.splitlines()[-1]) == (2, "", (
        f"{prog}: error: argument --critic: invalid choice: 'yes' (choose from 'none', 'resident', 'offloaded', "
        "'reloaded'); did you mean 'resident'?"))  # sft89: every command's --critic guesses alike
    config = read_trinity_config(CONFIG, "run.yaml", {})
    # sftmode89: the API guesses as --critic does (solver.tables.CRITIC_CHOICES_MEANT); before, no guess
    for given, meant in (("yes", "resident"), ("gpu", "resident"), ("CPU", "offloaded"), ("resdent", "resident")):
        with pytest.raises(QueryError) as refused:
            config_query(load_catalog(), config, gpu="A100-80GB", critic=given)  # type: ignore[arg-type]
        assert str(refused.value) == (f"critic must be one of None, none, resident, offloaded, reloaded, got "
                                      f"'{given}'; did you mean '{meant}'?")
    with pytest.raises(QueryError, match="^critic must be one of .*, got 'gpu'; did you mean 'resident'[?]$"):
        plan("8B", gpu="a100", max_model_len=8192, budget_gpus=4, critic="gpu")  # type: ignore[arg-type]
    with pytest.raises(QueryError, match="^critic must be one of .*, got 'resdent'; did you mean 'resident'[?]$"):
        plan("8B", gpu="a100", max_model_len=8192, budget_gpus=4, critic="resdent")  # type: ignore[arg-type]
    with pytest.raises(QueryError, match="^critic must be one of .*, got 'no'; did you mean 'none'[?]$"):
        memory_answer("8B", "a100", 4, 8192, critic="no")  # type: ignore[arg-type]


def test_a_critic_asked_of_an_algorithm_that_trains_none_is_named_in_the_written_check(cli: Cli, tmp_path: Path):
    # GRPO trains no critic, so the written file's keys alone would not make its check count one: the command asks.
    path, patched = tmp_path / "grpo.yaml", tmp_path / "patched.yaml"
    path.write_text("algorithm: {algorithm_type: grpo}\n" + CONFIG, encoding="utf-8")
    assert cli("--from-config", str(path), "--gpu", "A100-80GB", "--critic", "reloaded", "--write",
               str(patched))[0] == 0
    (command,) = [line for line in patched.read_text(encoding="utf-8").splitlines() if " --check " in line]
    assert command.endswith(f"solve --from-config {patched} --check --gpu A100-80GB --critic reloaded")
    assert verdict(cli, patched, "--critic", "reloaded")["critic"] == "reloaded"
    assert verdict(cli, patched)["critic"] is None


def test_a_critic_asked_of_an_algorithm_that_trains_none_gets_a_note(cli: Cli, tmp_path: Path):
    # an SFT stage's config checked with --critic (s89): its verdict counted a critic SFT never builds, unsaid
    path = tmp_path / "sft.yaml"
    path.write_text("algorithm: {algorithm_type: sft}\n" + CONFIG, encoding="utf-8")
    status, _, err = cli("--from-config", str(path), "--gpu", "A100-80GB", "--critic", "resident")
    assert status == 0 and err.splitlines()[-1] == (
        "solve: note: sft.yaml's algorithm.algorithm_type trains no PPO critic (ppo, Trinity's default, alone trains "
        "one), but --critic resident counts one beside the actor all the same, in the verdict and the plans; leave "
        "--critic out to judge the run as the config trains it")
    assert "trains no PPO critic" not in cli("--from-config", str(path), "--gpu", "A100-80GB", "--critic", "none")[2]
    ppo = tmp_path / "ppo.yaml"  # PPO trains one: --critic says only where its states are
    ppo.write_text(CONFIG, encoding="utf-8")
    assert "trains no PPO critic" not in cli("--from-config", str(ppo), "--gpu", "A100-80GB", "--critic",
                                             "offloaded")[2]


def test_a_critic_asked_names_where_each_reading_holds_the_configs(cli: Cli, tmp_path: Path):
    # persona90d: a Trinity 0.6 config that offloads its critic by critic.fsdp alone (as a verl 0.8 user does) is
    # resident on verl before 0.8; with --critic given, the line names both readings, not "resident" alone, which told
    # that user their offload flags hold the critic on the GPUs.
    path = tmp_path / "ppo.yaml"
    path.write_text(CONFIG + ENGINE % ALL, encoding="utf-8")
    held = "resident on verl before 0.8 and offloaded on verl 0.8 or later"
    head = ("PPO, Trinity's algorithm where algorithm.algorithm_type is unset, trains a critic model beside the actor "
            "on the same trainer GPUs")
    found = verdict(cli, path, "--critic", "offloaded", "--trinity-version", "0.6")["current"]
    assert [words for words, code in zip(found["config_problems"], found["config_problem_codes"], strict=True)
            if code == "critic-trained"] == [
        (f"{head}; --critic offloaded counts its states offloaded (offload_policy under fsdp2: in host memory "
         f"throughout), where its flags hold them {held}")]
    config = read_trinity_config(CONFIG + ENGINE % ALL, "ppo.yaml", {}, "0.6", COMMAND_OPTIONS)
    (note,) = [ConfigProblem(code, words) for words, code in zip(config.notes, config.note_codes, strict=True)
               if code.value == "critic-trained"]
    assert (config.critic, config.critic_held) == ("resident", held)
    assert verdict_critic_note(note, None, config.critic, COMMAND_OPTIONS, config.critic_held).words == (
        f"{head}; --critic none leaves it out: the verdict and the plans are for the actor alone, though the run "
        f"trains it (its flags hold its states {held})")


def test_write_names_the_critics_offload_flags_it_turns_off_and_the_critic_that_keeps_them(cli: Cli, tmp_path: Path):
    # bypass90: that persona90d config, written for the plan's resident critic (verl before 0.8's reading), had its
    # critic.fsdp flags set to false with no word on stderr and no "# now" mark in the apply lines.
    path, patched = tmp_path / "ppo.yaml", tmp_path / "patched.yaml"
    path.write_text(CONFIG + ENGINE % ALL, encoding="utf-8")
    engine = "trainer.trainer_config.critic.fsdp"
    status, out, err = cli("--from-config", str(path), "--gpu", "A100-80GB", "--trinity-version", "0.6",
                           "--write", str(patched))
    assert status == 0, err
    flags = "param_offload: {0}, optimizer_offload: {0}, offload_policy: {0}"
    assert f"\n{engine}: {{{flags.format('false')}}}  # now {{{flags.format('true')}}}\n" in out
    assert (f"solve: note: {patched}: {engine}.param_offload, {engine}.optimizer_offload and {engine}.offload_policy "
            f"set to false, on in {path}: the plan counts the PPO critic's states resident, and --write sets the "
            "critic's offload flags to that; --critic offloaded keeps them on, counting the critic so\n") in err
    # A reloaded critic keeps two of them on, an offloaded one all three (no note); the API's words.
    text = CONFIG.replace("8B, max_model_len: 32768", "4B, max_model_len: 8192").replace("size: 4", "size: 1")

    def note(critic: str) -> str | None:
        plan = vanilla_plan().model_copy(update={"critic": critic})
        return patched_trinity_config(text + ENGINE % ALL, plan, load_catalog().model("4B"), name="ppo.yaml",
                                      environ={}, version="0.6").critic_note

    assert (note("reloaded"), note("offloaded")) == ((
        f"{engine}.offload_policy set to false, on in ppo.yaml: the plan counts the PPO critic's states reloaded, and "
        "solver.trinity.patch_trinity_config sets the critic's offload flags to that; critic=\"offloaded\" keeps it "
        "on, counting the critic so"), None)


@pytest.mark.parametrize(("critic_path", "named"), [("Qwen/Qwen3-14B", True), ("Qwen/Qwen3-8B", False), ("", False)])
def test_a_critic_of_another_model_is_said_to_be_sized_as_the_actors(critic_path: str, named: bool):
    # persona90d: an 8B actor with a 14B critic (model.critic_model_path) was counted at 8B's critic (7.57B parameters)
    # without a word; the critic's line now names the path and says how it is sized. Its own path, or none: no words.
    text = CONFIG.replace("model_path: Qwen/Qwen3-8B,", f"model_path: Qwen/Qwen3-8B, critic_model_path: '{critic_path}',")
    config = read_trinity_config(text, "run.yaml", {}, "0.6")
    (note,) = [words for words, code in zip(config.notes, config.note_codes, strict=True)
               if code.value == "critic-trained"]
    words = ("trains a critic model (model.critic_model_path's Qwen/Qwen3-14B, which rft-solver sizes as "
             "model.model_path's model: it counts no critic of another size, so a larger one needs more memory than "
             "counted) beside the actor on the same trainer GPUs; ")
    assert (words in note, "trains a critic model beside the actor" in note) == (named, not named)
    assert config.critic == "resident"
