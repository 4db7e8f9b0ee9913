"""Small slips in the CLI and API that earlier reviews found and left (smallslips47, s85): each test failed before
its fix."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

import solver
from solver.api import answer_query, config_query, with_config_verdicts
from solver.tables import load_catalog
from solver.tables.text import asked_tokens, rewritten_note, rewritten_whole_number
from solver.trinity import patch_trinity_config, read_trinity_config

CONFIG = Path(__file__).parent.parent / "docs" / "examples" / "trinity.yaml"
ALGORITHM_HINT = ("(without these options rft-solver counts a run as GRPO trains it: the actor and a reference model "
                  "(none with --lora-rank), no critic; --critic WHERE adds PPO's critic, --dpo DPO and --no-reference a "
                  "run without a reference model (SFT on Trinity 0.6, with --rollout-gpus 0: no rollout))")
"""What an algorithm named where no option counts it is told."""
PRECISION_HINT = ("(rft-solver counts verl's mixed precision whatever a checkpoint's torch_dtype: the actor's "
                  "weights in fp32 (Trinity's model_dtype), with fp32 gradients and Adam moments for those it trains, "
                  "and bf16 activations and logits)")
"""What an option of another tool's numeric precision is told."""


@pytest.mark.parametrize("release", ["0.6.0", "v0.6.0"])
def test_config_functions_read_a_release_as_plan_does(release: str):
    # plan(trinity_version="0.6.0") was taken where these three refused it ("pass '0.6'")
    catalog, text = load_catalog(), CONFIG.read_text(encoding="utf-8")
    config = read_trinity_config(text, "trinity.yaml", {}, release)
    assert config == read_trinity_config(text, "trinity.yaml", {}, "0.6")
    query = config_query(catalog, config, gpu="h100")
    answers = answer_query(query, catalog)
    judged = with_config_verdicts(answers, query, catalog, config, text, "trinity.yaml", {}, release)
    assert judged == with_config_verdicts(answers, query, catalog, config, text, "trinity.yaml", {}, "0.6")
    assert judged[0].current is not None
    plan, model = answers[0].plans[0], catalog.model(query.model)
    patched = patch_trinity_config(text, plan, model, name="trinity.yaml", version=release)
    assert patched == patch_trinity_config(text, plan, model, name="trinity.yaml", version="0.6")
    # the functions beside the patch read it alike (they took any string before, "0.7" too)
    for view in (solver.trinity.config_key_changes, solver.trinity.kept_interpolations):
        assert view(text, plan, model, version="0.5.2") == view(text, plan, model, version="0.5")
        with pytest.raises(solver.QueryError, match=r"^version takes 0\.5, .*, got '0\.7'"):
            view(text, plan, model, version="0.7")
    # a release rft-solver does not know is refused in plan's words
    with pytest.raises(solver.QueryError) as caught:
        read_trinity_config(text, "trinity.yaml", {}, "0.7")
    with pytest.raises(solver.QueryError) as planned:
        solver.plan("8B", gpu="h100", max_model_len=4096, trinity_version="0.7")
    assert str(caught.value) == str(planned.value).replace("trinity_version", "version") == (
        "version takes 0.5, 0.5.0, 0.5.1, 0.5.2, 0.6 or 0.6.0 (or a tag of one, v0.5.2), got '0.7' (rft-solver knows "
        "the rules of these releases alone)")


@pytest.mark.parametrize(("flags", "hint"), [
    # persona90c: not "rft-solver takes no seed", which its Python API takes (solver.plan(seed=N), solver.place's)
    (("--seed", "1"), ("(the command takes no seed: CP-SAT's is fixed (the Python API's seed= sets it), and a proven "
                       "answer (optimal) is the same on every run; one a time limit cut short may differ with the "
                       "machine's load, --workers or the OR-Tools version (solve cluster's, with one worker, only where "
                       "it says the wall clock stopped a step))")),
    (("--objective", "max_len"), ("(the objective is a flag here: --maximize len, --minimize gpus or --minimize "
                                  "gpu-hours, and without one the cheapest plan (the Python API's objective=))")),
    (("--algorithm", "ppo"), "(did you mean --critic?)"),
    (("--algorithm=DPO",), "(did you mean --dpo?)"),
    # a GRPO user (s88) got no word that GRPO is what the plans count without these options
    (("--algorithm", "grpo"), ALGORITHM_HINT),
    # an SFT-then-GRPO user (s89) wrote the algorithm as a flag and got no word at all
    (("--sft",), ALGORITHM_HINT),
    (("--grpo",), ALGORITHM_HINT),
    (("--lora-alpha", "32"), "(LoRA's alpha changes no memory: --lora-rank is what counts)"),
    # verl's and Trinity's names (s86): --rollout-n was guessed as --rollout-gpus, which would plan 8 rollout GPUs
    (("--rollout-n", "8"), ("(a prompt's rollouts count only in the train batch: --train-batch-size B, the "
                            "experiences per step (buffer.batch_size x algorithm.repeat_times))")),
    (("--ppo-micro-batch-size-per-gpu", "1"), ("(Trinity packs micro-batches by tokens (trainer.use_dynamic_bsz, its "
                                               "default): --token-budget N caps max_token_len_per_gpu)")),
    (("--max-response-length=61440",),
     "(--len L is the prompt and the response together: Trinity's model.max_model_len)"),
    (("--n-gpus-per-node", "8"), "(did you mean --node-gpus?)"),
    # a user whose checkpoint's config.json says torch_dtype float32 (persona90b, s90) got no word on precision
    (("--dtype", "float32"), PRECISION_HINT),
    (("--bf16",), PRECISION_HINT),
    # a team on verl 0.8 guesses its release (s87): the lines say which verl line they hold for
    (("--verl-version", "0.8"), ("(rft-solver takes no verl release: a line that holds on one verl line alone says "
                                 "which (before 0.8, or 0.8 or later); --trinity-version V names Trinity's release)")),
])
def test_other_tools_training_options_get_a_hint(cli, flags: tuple[str, ...], hint: str):
    status, out, err = cli("--model", "8B", "--gpu", "h100", "--len", "32k", *flags)
    assert (status, out) == (2, "")
    assert err.endswith(f"solve: error: unrecognized arguments: {' '.join(flags)} {hint}\n")


def test_every_precision_option_gets_the_precision_hint(cli):
    # mutants53: each of the precision options the parser names, not only those above
    for flag in ("--torch-dtype", "--model-dtype", "--precision", "--mixed-precision", "--bfloat16", "--fp16",
                 "--float16", "--half", "--fp32", "--float32"):
        status, out, err = cli("--model", "8B", "--gpu", "h100", "--len", "32k", flag)
        assert (status, out, err.endswith(f"unrecognized arguments: {flag} {PRECISION_HINT}\n")) == (2, "", True), err


def test_other_tools_options_without_a_meaning_here_get_no_hint(cli):
    # a command without --lora-rank is not pointed to it, nor one without --critic to the algorithms' options
    _, _, err = cli("cluster", "fleet.yaml", "--lora-alpha", "32")
    assert err.endswith("solve cluster: error: unrecognized arguments: --lora-alpha 32\n")
    _, _, err = cli("cluster", "fleet.yaml", "--algorithm", "grpo")
    assert err.endswith("solve cluster: error: unrecognized arguments: --algorithm grpo\n")


def test_a_list_of_gpu_counts_points_to_solve_map(cli):
    status, _, err = cli("--model", "8B", "--gpu", "h100", "--len", "32k", "--gpus", "8, 16")
    assert (status, err.splitlines()[-1]) == (2, (
        "solve: error: argument --gpus: expected a whole number from 1 to 65536, got '8, 16' (one budget: solve map "
        "--budgets 8,16 answers for several)"))
    _, _, err = cli("--model", "8B", "--gpu", "h100", "--len", "32k", "--gpus", "8,0")  # 0 is no budget
    assert err.endswith("got '8,0'\n")
    _, _, err = cli("memory", "--model", "8B", "--gpu", "h100", "--len", "32k", "--gpus", "8,16")  # no map of memory
    assert err.endswith("got '8,16' (one count: run solve memory once for each of 8,16)\n")


@pytest.mark.parametrize(("length", "note"), [
    ("131k", "solve memory: note: --len 131k is 134144 tokens (k is 1024); for 131072 tokens write --len 128k\n"),
    ("65k", "solve memory: note: --len 65k is 66560 tokens (k is 1024); for 65536 tokens write --len 64k\n"),
    ("128k", ""),
    ("32k", ""),
    ("131000", ""),
])
def test_a_length_in_thousands_that_cuts_a_power_of_two_is_noted(cli, length: str, note: str):
    status, out, err = cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", length)
    assert status in (0, 1) and out
    assert err == note


def test_a_sized_card_of_the_memory_given_is_named_whichever_size_gpu_names(cli):
    _, _, err = cli("--model", "8B", "--gpu", "a100-40gb", "--gpu-memory", "80G", "--len", "32k")
    assert err == ("solve: error: --gpu a100-40gb names A100-40GB (40.0 GiB), a GPU type whose memory is known: for "
                   "the 80 GB card give --gpu A100-80GB; else drop --gpu-memory, or give your GPU type a name of its "
                   "own\n")
    catalog = load_catalog()
    assert catalog.sized_gpu("gh200-144gb", 96) == catalog.gpu("GH200-96GB")
    assert catalog.sized_gpu("a100", 80) is None  # the card it names already
    assert catalog.sized_gpu("h100", 94) is None  # the H100 NVL is another card, not an H100 of 94 GB


def test_a_card_named_twice_is_listed_once(cli):
    _, _, err = cli("--model", "8B", "--gpu", "a100,a100-80gb", "--gpu-memory", "40G", "--len", "32k")
    assert err == ("solve: error: --gpu a100,a100-80gb names A100-80GB (80.0 GiB), a GPU type whose memory is known: "
                   "for the 40 GB card give --gpu A100-40GB; else drop --gpu-memory, or give your GPU type a name of "
                   "its own\n")


def test_gpus_past_the_configs_nodes_is_noted(cli, tmp_path: Path):
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG.read_text(encoding="utf-8").replace("node_num: 1", "node_num: 2")
                      .replace("engine_num: 2", "engine_num: 8"), encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--gpus", "16")
    assert status == 0 and "on 16 of 16 GPUs, with 8 rollout GPUs, trainer and rollout on 3 nodes of 8" in out
    assert err == ("solve: note: c.yaml's cluster holds 16 GPUs in all (2 nodes of 8); the plan takes 16 trainer + 8 "
                   "rollout GPUs on 3 nodes: give the config cluster.node_num 3, or plan within its 16 with "
                   "--total-gpus 16 in place of --gpus\n")
    # within the config's nodes, or without --gpus, no note
    for flags in (("--gpus", "8"), ("--total-gpus", "16"), ()):
        _, _, err = cli("--from-config", str(config), "--gpu", "h100", *flags)
        assert err == ""


# CLI slips of session 86 (cliwords86): choices in any case, several models, digit separators, another command's
# option by another tool's name, and a format a command does not write.

def test_choices_are_taken_in_any_case_as_names_are():
    from solver.cli.maps import build_map_parser
    from solver.cli.planner import build_parser
    args = build_parser().parse_args(["--model", "8B", "--gpu", "x", "--gpu-memory", "80", "--gpu-interconnect", "PCIe",
                                      "--critic", "Resident", "--token-budget", "Auto", "--emit", "Trinity",
                                      "--maximize", "LEN"])
    assert (args.gpu_interconnect, args.critic, args.token_budget, args.emit, args.maximize) == (
        "pcie", "resident", "auto", "trinity", "len")  # each was refused: invalid choice: 'PCIe' ...
    assert build_map_parser().parse_args(["--by", "Len"]).by == "len"


def test_a_choice_a_slip_away_is_still_refused_with_a_guess(cli):
    status, _, err = cli("--model", "8B", "--gpu", "h100", "--len", "32k", "--critic", "Resdent")
    assert (status, err.splitlines()[-1]) == (2, (
        "solve: error: argument --critic: invalid choice: 'Resdent' (choose from 'none', 'resident', 'offloaded', "
        "'reloaded'); did you mean 'resident'?"))


@pytest.mark.parametrize("models", [("8B", "14B"), ("8B,14B",), ("8B,", "14B")])
def test_several_models_to_solve_point_to_solve_map(cli, models: tuple[str, ...]):
    status, out, err = cli("--model", *models, "--gpu", "h100", "--gpus", "8", "--len", "32k")
    assert (status, out) == (2, "")
    assert err.endswith("solve map --model 8B,14B compares several: the longest context of each per GPU budget)\n"
                        if len(models) == 2 else
                        "solve map --model 8B,14B compares several: the longest context of each per GPU budget\n")
    assert "one word; quote one with spaces" not in err  # was: --model took '8B': an option's value is one word ...
    # a word that names no model is still told the option's value is one word
    _, _, err = cli("--model", "8B", "h100", "--len", "32k")
    assert err.endswith("(--model took '8B': an option's value is one word; quote one with spaces)\n")


@pytest.mark.parametrize(("flags", "said"), [
    (("--len", "32,768"), "got '32,768' (tokens, or thousands of 1024: 32768 or 32k; write 32,768 as 32768)"),
    (("--len", "131_072"), "got '131_072' (tokens, or thousands of 1024: 32768 or 32k; write 131_072 as 131072)"),
    (("--len", "32k", "--gpus", "1_6"), "got '1_6' (write 1_6 as 16)"),
    (("--len", "32k", "--gpus", "16,384"), ("got '16,384' (write 16,384 as 16384; or one budget: solve map --budgets "
                                            "16,384 answers for several)")),
    (("--len", "32k", "--gpus", "100,000"), "got '100,000'"),  # past every count: no number to write
    (("--len", "32k", "--token-budget", "32_768"), ("(a whole number: 32768 or 32k; write 32_768 as 32768), got "
                                                    "'32_768'")),
])
def test_a_number_with_digit_separators_is_told_the_number(cli, flags: tuple[str, ...], said: str):
    status, _, err = cli("--model", "8B", "--gpu", "h100", *flags)
    assert status == 2 and err.endswith(f"{said}\n")


def test_solve_map_names_another_commands_option_by_another_tools_name(cli):
    status, _, err = cli("map", "--max-model-len", "32768")
    assert (status, err.splitlines()[-1]) == (2, (
        "solve map: error: unrecognized arguments: --max-model-len 32768 (that is --len, an option of solve and solve "
        "memory, not of solve map: a map finds the longest context of each model per GPU budget, or with --by len the "
        "cheapest setting of one model per length and budget)"))  # was: no hint, where solve's was --len
    _, _, err = cli("map", "--len", "32k")
    assert err.endswith("not of solve map: a map finds the longest context of each model per GPU budget, or with --by "
                        "len the cheapest setting of one model per length and budget\n")


@pytest.mark.parametrize(("argv", "hint"), [
    (("tables", "--format", "yaml"), "(the formats of solve tables: text, the default, or JSON with --json)"),
    (("map", "--output", "yaml"), "(the formats of solve map: text, the default, or JSON with --json)"),
    (("--model", "8B", "--format=csv"), ("(the formats of solve: text, the default, JSON with --json, or a Trinity "
                                         "config with --emit trinity)")),
    (("tables", "--format", "json"), "(did you mean --json?)"),
    (("--model", "8B", "--format", "yaml"), "(did you mean --emit trinity?)"),
])
def test_a_format_a_command_does_not_write_names_those_it_does(cli, argv: tuple[str, ...], hint: str):
    status, _, err = cli(*argv)
    assert status == 2 and err.endswith(f"{hint}\n")


def test_a_files_path_given_for_what_it_holds_is_told_how_to_load_it():
    # s86: a notebook's path where the API takes the loaded object got no hint ("memory must be a MemoryModel or None,
    # got 'm.yaml'"), and a config's file name in place of its text was refused as YAML ("got 'trinity.yaml'")
    with pytest.raises(solver.QueryError, match=r"^memory must be a MemoryModel or None, got 'm\.yaml' \(a path: "
                                                r"pass solver\.load_memory_model\('m\.yaml'\)\)$"):
        solver.plan("8B", gpu="h100", max_model_len=4096, memory="m.yaml")
    with pytest.raises(solver.QueryError, match=r"^weights must be a Weights or None, got a PosixPath \(a path: pass "
                                                r"solver\.load_weights\('costs\.yaml'\)\)$"):
        solver.plan("8B", gpu="h100", max_model_len=4096, weights=Path("costs.yaml"))
    with pytest.raises(solver.QueryError, match=r"^text is the config's YAML, not its file's name 'trinity\.yaml': "
                                                r"pass Path\('trinity\.yaml'\)\.read_text\(\)$"):
        read_trinity_config("trinity.yaml", "trinity.yaml", {})
    with pytest.raises(solver.QueryError, match=r"^text must be a str, got a PosixPath \(a path: pass the config's "
                                                r"text, Path\('.*trinity\.yaml'\)\.read_text\(\)\)$"):
        read_trinity_config(CONFIG, "trinity.yaml", {})


def test_the_command_reads_a_config_holding_a_file_name_as_a_config(cli, tmp_path: Path):
    # the command reads the file itself: a config that holds a file's name alone is refused as before, in its words
    (tmp_path / "c.yaml").write_text("other.yaml\n", encoding="utf-8")
    status, _, err = cli("--from-config", str(tmp_path / "c.yaml"), "--gpu", "h100")
    assert status == 2 and err.endswith("a Trinity config is a mapping of sections (model, cluster, trainer, ...), got "
                                        "'other.yaml'\n")


# CLI slips of session 87 (cliwords87): a count written 16.0 or 8卡, --budgets 1,024 and 8 16, a goal by another word,
# solve cluster's file read from --format's value, a cluster file's words in any case and counts written otherwise,
# --gpu-memory in torch's GiB.

@pytest.mark.parametrize(("argv", "error"), [
    (("--gpus", "16.0"), "argument --gpus: expected a whole number from 1 to 65536, got '16.0' (write 16.0 as 16)"),
    (("--gpus", "8卡"), "argument --gpus: expected a whole number from 1 to 65536, got '8卡' (write 8)"),
    (("--gpus", "8 GPUs"), "argument --gpus: expected a whole number from 1 to 65536, got '8 GPUs' (write 8)"),
    (("--gpus", "16.5"), "argument --gpus: expected a whole number from 1 to 65536, got '16.5'"),
    (("--gpus", "0卡"), "argument --gpus: expected a whole number from 1 to 65536, got '0卡'"),  # no count to write
    (("--node-gpus", "8.0"), "argument --node-gpus: expected a whole number from 1 to 16, got '8.0' (write 8.0 as 8)"),
    (("--len", "8192.0"), ("argument --len: expected a whole number, got '8192.0' (tokens, or thousands of 1024: 32768 "
                           "or 32k; write 8192.0 as 8192)")),
])
def test_a_count_written_with_a_fraction_or_a_word_is_told_the_number(cli, argv: tuple[str, ...], error: str):
    # each was refused naming no number ("expected a whole number from 1 to 65536, got '16.0'")
    status, out, err = cli("--model", "8B", "--gpu", "h100", *argv)
    assert (status, out, err.splitlines()[-1]) == (2, "", f"solve: error: {error}")


@pytest.mark.parametrize(("argv", "error"), [
    (("map", "--budgets", "1,024"),
     # s88: 1024, past what --budgets takes, is not offered as a reading
     ("solve map: error: argument --budgets: '1,024' reads as 1 and 24 (not 1024, past 64): give "
      "whole numbers from 1 to 64 without leading zeros, separated by commas (1,24)")),
    (("map", "--budgets", "8,16,1,024"),  # hints88: was read as 8, 16, 1 and 24, where 1,024 alone was refused
     ("solve map: error: argument --budgets: '8,16,1,024' reads as 8, 16, 1 and 24 (1,024 is not 1024, past 64): "
      "give whole numbers from 1 to 64 without leading zeros, separated by commas (8,16,1,24)")),
    (("map", "--budgets", "8 16"),
     "solve map: error: argument --budgets: expected whole numbers separated by commas, got '8 16': give 8,16"),
    (("map", "--budgets", "8", "16"),
     ("solve map: error: unrecognized arguments: 16 (--budgets took '8': several are separated by commas, --budgets "
      "8,16)")),
    (("map", "--budgets", "8,128"), "solve map: error: argument --budgets: must be a whole number from 1 to 64, got 128"),
    (("map", "--model", "8B", "bogus"), ("solve map: error: unrecognized arguments: bogus (--model took '8B': an "
                                         "option's value is one word; quote one with spaces)")),  # mutants47: no model
])
def test_a_list_of_counts_is_read_one_way_or_refused_naming_it(cli, argv: tuple[str, ...], error: str):
    # --budgets 1,024 answered for budgets 1 and 24; --budgets 8 16 was told to quote a value with spaces
    status, out, err = cli(*argv)
    assert (status, out, err.splitlines()[-1]) == (2, "", error)


@pytest.mark.parametrize(("argv", "hint"), [
    (("--maximize", "context"), "did you mean 'len'?"),
    (("--maximize", "seq_len"), "did you mean 'len'?"),
    (("--maximize", "max_model_len"), "did you mean 'len'?"),  # mutants47: underscores read as hyphens
    (("--minimize", "devices"), "did you mean 'gpus'?"),
    (("--minimize", "context"), "did you mean --maximize len (the longest context within --gpus or --total-gpus)?"),
    (("--minimize", "hosts"), "the fewest nodes for many jobs: solve cluster FLEET.yaml --minimize nodes"),
    (("--maximize", "speed"), ("the cheapest plan (the shortest step time) is what solve answers without --minimize or "
                               "--maximize: --len L; the fewest GPU-hours (GPUs x cost): --minimize gpu-hours")),
])
def test_a_goal_by_another_word_is_told_the_choice_it_means(cli, argv: tuple[str, ...], hint: str):
    # --maximize context was refused with no guess: invalid choice: 'context' (choose from 'len')
    status, _, err = cli("--model", "8B", "--gpu", "h100", *argv)
    assert status == 2 and err.endswith(f"; {hint}\n")
    status, _, err = cli("map", "--by", "context")
    assert status == 2 and err.endswith("invalid choice: 'context' (choose from 'model', 'len'); did you mean 'len'?\n")


def test_an_unknown_options_value_read_as_an_optional_folder_is_not_called_missing(cli):
    # mutants47: solve examples' DIR may be left out, so 'yaml' read as it leaves nothing missing
    status, out, err = cli("examples", "--format", "yaml")
    assert (status, out, err.splitlines()[-1]) == (2, "", (
        "solve examples: error: unrecognized arguments: --format yaml (that is --json, an option of solve, solve "
        "tables, solve cluster, solve calibrate, solve memory and solve map, not of solve examples)"))


def test_digits_alone_are_no_number_written_otherwise():
    # mutants47: only separators or a zero fraction are rewritten; plain digits get no "write 32768 as 32768"
    assert [rewritten_whole_number(value) for value in ("32768", " 32768 ", "32,768", "131_072", "16.0", 16.0)] == [
        None, None, 32768, 131072, 16, 16]
    assert rewritten_note("32768") == "" and rewritten_note("32,768") == "; write 32,768 as 32768"
    # a length in thousands, with a k in either case, as --len takes it; digits in quotes stay for the refusal
    assert [asked_tokens(value) for value in ("32k", "32K ", "32768", 32768)] == [32768, 32768, "32768", 32768]


@pytest.mark.parametrize(("argv", "error"), [
    (("--format", "yaml"), ("unrecognized arguments: --format yaml (did you mean --emit-dir?); FILE.yaml is missing "
                            "('yaml', after --format, was read as FILE.yaml)")),
    (("--format", "yaml", "fleet.yaml"), "unrecognized arguments: --format yaml (did you mean --emit-dir?)"),
    (("fleet.yaml", "--output", "json"), "unrecognized arguments: --output json (did you mean --json?)"),
])
def test_an_unknown_options_value_read_as_the_fleet_file_is_named_with_it(cli, argv: tuple[str, ...], error: str):
    # solve cluster --format yaml read 'yaml' as its file and said "unrecognized arguments: --format (did you mean
    # --json?)"; before a file, "--format fleet.yaml (the formats of solve cluster: ...)"
    status, out, err = cli("cluster", *argv)
    assert (status, out, err.splitlines()[-1]) == (2, "", f"solve cluster: error: {error}")


FLEET = "pools:\n  - {{name: p, gpu: {gpu}, nodes: {nodes}, gpus_per_node: 8{pool}}}\njobs:\n  - {{name: j, model: 4B, " \
        "max_model_len: {length}{job}}}\n"


def test_a_cluster_files_words_are_taken_in_any_case_as_the_options_take_them(tmp_path: Path):
    # gpu_interconnect: PCIe was refused (must be 'nvlink', 'infinity-fabric' or 'pcie'), where --gpu-interconnect
    # PCIe is taken; so were node_interconnect: InfiniBand and critic: Resident (--critic Resident is taken)
    path = tmp_path / "fleet.yaml"
    path.write_text(FLEET.format(gpu="mycard", nodes=1, pool=", gpu_memory_gb: 80, gpu_interconnect: PCIe, "
                                 "node_interconnect: InfiniBand", length="8k", job=", critic: Resident"), "utf-8")
    fleet = solver.load_fleet(path)
    assert (fleet.pools[0].gpu_interconnect, fleet.pools[0].node_interconnect, fleet.jobs[0].critic) == (
        "pcie", "infiniband", "resident")
    with pytest.raises(ValueError, match="input_value='PCIe'"):  # built in Python, exact (as described_gpu_type)
        solver.Pool.model_validate({"name": "p", "gpu": "mycard", "nodes": 1, "gpus_per_node": 8,
                                    "gpu_memory_gb": 80, "gpu_interconnect": "PCIe"})


@pytest.mark.parametrize(("nodes", "said"), [("1.0", "nodes: must be a whole number, got 1.0 (write 1.0 as 1)"),
                                             ("1卡", "nodes: must be a whole number, got '1卡' (write 1)"),
                                             ("1.5", "nodes: must be a whole number, got 1.5")])
def test_a_cluster_files_count_written_otherwise_is_told_the_number(tmp_path: Path, nodes: str, said: str):
    path = tmp_path / "fleet.yaml"
    path.write_text(FLEET.format(gpu="h100", nodes=nodes, pool="", length="8k", job=""), "utf-8")
    with pytest.raises(solver.TableError) as refused:
        solver.load_fleet(path)
    assert str(refused.value) == f"{path}: line 2: pool p, {said}"


def test_a_job_length_in_thousands_cut_is_noted_as_len_is(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    # max_model_len: 131k was taken as 134144 tokens with no note, where --len 131k gets one
    from solver.cli.notes import note_thousands_of_job_lengths
    path = tmp_path / "fleet.yaml"
    for length in ("131k", "{at_least: 65k}", "128k", "32k"):
        path.write_text(FLEET.format(gpu="h100", nodes=1, pool="", length=length, job=""), "utf-8")
        note_thousands_of_job_lengths(solver.load_fleet(path), "solve cluster")
    assert capsys.readouterr().err == (
        "solve cluster: note: job j: max_model_len is 134144 tokens, 131k (k is 1024); for 131072 tokens write "
        "max_model_len: 128k\n"
        "solve cluster: note: job j: max_model_len at_least is 66560 tokens, 65k (k is 1024); for 65536 tokens write "
        "at_least: 64k\n")


@pytest.mark.parametrize(("text", "memory"), [("79.19GiB", (None, 81090)), ("79.19Gi", (None, 81090)),
                                              ("80GiB", (None, 81920))])
def test_gpu_memory_takes_torchs_total_in_gib(text: str, memory: tuple[None, int]):
    # --gpu-memory 79.19GiB (torch's "total capacity of 79.19 GiB") was refused: the MiB, rounded down
    from solver.cli.argtypes import gpu_memory
    assert gpu_memory(text) == memory


def test_gpu_memory_in_gb_with_a_fraction_is_told_its_gib(cli):
    status, _, err = cli("--model", "8B", "--gpu", "x", "--gpu-memory", "79.19", "--len", "8k")
    assert status == 2 and err.endswith(
        "argument --gpu-memory: expected 64, 64G or 64GB (as sold, whole), 64GiB or 79.19GiB (torch's total capacity), "
        "or 65536MiB (nvidia-smi's total), got '79.19' (GB as sold are whole; a total with a fraction is torch's, in "
        "GiB: 79.19GiB)\n")


def test_gpu_memory_with_a_fraction_past_every_gpu_is_not_told_a_gib_past_it_too():
    # --gpu-memory 81559.5 (nvidia-smi's MiB with a stray fraction) was told "in GiB: 81559.5GiB", which is refused too
    from solver.cli.argtypes import gpu_memory
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        gpu_memory("81559.5")
    assert str(refused.value) == (
        "expected 64, 64G or 64GB (as sold, whole), 64GiB or 79.19GiB (torch's total capacity), or 65536MiB "
        "(nvidia-smi's total), got '81559.5'")
