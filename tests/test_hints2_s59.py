"""Gaps users met (session 59): nvidia-smi's MiB given as GB below the old 16384 GB bound (a T4's 15360) is refused
with both readings; --explain of a --minimize gpus answer says why no fewer GPUs train, at which token budget, and
what a lowered one gives; an emitted config's header prints the check command that judges it on its own GPU type."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import yaml

import solver
import solver.api
import solver.solve
import solver.trinity
from solver.tables import TableError, load_catalog, load_fleet

CATALOG = load_catalog()


@pytest.mark.parametrize(("smi", "gib"), [("15360", "15.0"), ("8192", "8.0"), ("16384", "16.0"), ("11264", "11.0")])
def test_a_bare_mib_figure_no_gpu_has_in_gb_is_refused_with_both_readings(cli, smi: str, gib: str):
    # A T4's 15360 MiB (and 8 to 16 GiB cards'): read as 15360 GB before, below the old bound of 16384.
    status, out, err = cli("--model", "0.6B", "--gpu", "t4-mine", "--gpu-memory", smi, "--len", "4096")
    assert (status, out) == (2, "")
    assert err.splitlines() == [*err.splitlines()[:-1], (
        f"solve: error: argument --gpu-memory: must be from 8 to 4096 (GB), got '{smi}' (no GPU has {smi} GB; if it "
        f"is nvidia-smi's total in MiB, {gib} GiB, give --gpu-memory {smi}MiB)")]
    with pytest.raises(solver.QueryError) as caught:
        solver.described_gpu_type("T4-mine", memory_gb=int(smi))
    assert str(caught.value) == (f"T4-mine: its memory must be from 8 to 4096 GB, got {smi} GB (no GPU has {smi} GB; "
                                 f"if it is nvidia-smi's total in MiB, {gib} GiB, give memory_mib={smi})")
    status, out, _ = cli("--model", "0.6B", "--gpu", "t4-mine", "--gpu-memory", f"{smi}MiB", "--len", "4096")
    assert status == 0 and out.startswith("t4-mine · Qwen3-0.6B")


@pytest.mark.parametrize(("pool", "line", "problem"), [
    ({"gpu": "T4-mine", "gpu_memory_gb": 15360, "gpus_per_node": 4}, 7,
     ("gpu_memory_gb: must be at most 4096, got 15360 (no GPU has 15360 GB; if it is nvidia-smi's total in MiB, 15.0 "
      "GiB, give gpu_memory_mib: 15360)")),
    # free -m's total, as host memory in GB (session 59's smallhints3; read as --host-ram reads it since session 62)
    ({"gpu": "H100", "gpus_per_node": 8, "host_ram_gb": 515870}, 8,
     ("host_ram_gb: a number without a unit is GB up to 4096, got 515870: give its unit, 515870MiB if it is free -m's "
      "total (503.7 GiB)")),
])
def test_a_pools_mib_figure_as_gb_is_refused_with_both_readings(tmp_path: Path, pool: dict, line: int, problem: str):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [{"name": "lab", "nodes": 1, **pool}],
                                    "jobs": [{"name": "a", "model": "Qwen3-0.6B", "max_model_len": 4096}]}),
                    encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_fleet(path, CATALOG)
    assert str(caught.value) == f"{path}: line {line}: pool lab, {problem}"


def test_the_mib_hint_reaches_the_most_mib_a_gpu_type_may_report_and_not_where_the_mib_are_given():
    most = 4096 * 1024
    with pytest.raises(solver.QueryError) as caught:
        solver.described_gpu_type("Big", memory_gb=most)
    assert str(caught.value).endswith(f"got {most} GB (no GPU has {most} GB; if it is nvidia-smi's total in MiB, "
                                      f"4096.0 GiB, give memory_mib={most})")
    for memory_gb, memory_mib in ((most + 1, None), (15360, 15360)):
        with pytest.raises(solver.QueryError) as caught:
            solver.described_gpu_type("Big", memory_gb=memory_gb, memory_mib=memory_mib)
        assert str(caught.value) == f"Big: its memory must be from 8 to 4096 GB, got {memory_gb} GB"


@pytest.mark.parametrize("sold", [24, 48, 80, 96, 141, 192, 288, 1024, 4096])
def test_gb_figures_below_any_mib_figure_are_still_taken(cli, sold: int):
    gpu_type = solver.described_gpu_type("Mine", memory_gb=sold)
    assert (gpu_type.memory_gb, gpu_type.memory_mib) == (sold, None)
    status, out, _ = cli("--model", "0.6B", "--gpu", "mine", "--gpu-memory", str(sold), "--len", "4096", "--json")
    (answer,) = json.loads(out)
    assert (status, answer["gpu"], answer["status"]) == (0, "mine", "optimal")


@pytest.mark.parametrize("number", ["4097", "8191"])
def test_a_bare_number_past_the_bound_but_no_mib_figure_gets_no_mib_hint(cli, number: str):
    status, _, err = cli("--model", "0.6B", "--gpu", "mine", "--gpu-memory", number, "--len", "4096")
    assert (status, err.splitlines()[-1]) == (2, (f"solve: error: argument --gpu-memory: must be from 8 to 4096 (GB), "
                                                  f"got '{number}'"))


LOWERED_HELD = ("the rules above hold at Trinity's default token budget, ceil(2 x length / SP) tokens per GPU, which "
                "the tables measure; ")


def _reasons(out: str) -> dict[str, str]:
    """The ``why`` rows of a one-answer `--explain` output, by rule (a rule's continuation lines joined)."""
    rows: dict[str, str] = {}
    rule = ""
    for line in out.split("\nwhy\n", 1)[1].splitlines():
        if line[:1].strip():
            rule, _, text = line.partition(" ")
            rows[rule] = text.strip() if rule not in rows else f"{rows[rule]} | {text.strip()}"
        elif line.strip():
            rows[rule] += " " + line.strip()
    return rows


def test_fewest_gpus_explained_names_the_counts_searched_and_the_fewer_gpus_a_lowered_budget_trains(cli):
    # Qwen3-8B at 65536 on A100s: 4 GPUs at Trinity's default budget; the explanation said why not 1, 2 or 3 there,
    # but not that those rules hold at that budget, nor that --token-budget auto trains it on 2 (the answer's own
    # fewer GPUs line says so; its JSON's token_budget_auto).
    status, out, _ = cli("--model", "8B", "--len", "65536", "--minimize", "gpus", "--explain", "--gpu", "a100")
    reasons = _reasons(out)
    assert status == 0 and reasons["choice"].startswith(
        "Env + Offload + SP=4 on 4 GPUs is the plan with the fewest GPUs (any count up to 64), then the cheapest, at "
        "65536 tokens;")
    assert reasons["lower_token_budget"] == (
        f"{LOWERED_HELD}--token-budget auto trains 65536 tokens on 2 GPUs, 2 fewer: Env + Offload + SP=2 on 2 GPUs at "
        "65536 tokens with a lowered max_token_len_per_gpu of 50176 (estimated: the memory model predicts 72.4 GiB per "
        "GPU, 1.2 GiB to spare)")
    status, out, _ = cli("--model", "8B", "--len", "65536", "--minimize", "gpus", "--explain", "--gpu", "a100",
                         "--gpus", "6")
    assert "is the plan with the fewest GPUs (budget 6), then the cheapest" in _reasons(out)["choice"]


def test_fewest_gpus_explained_says_where_a_lowered_budget_trains_on_no_fewer(cli):
    # SP pinned to 4: no count below 4 GPUs takes SP=4, whatever the budget; CP-SAT's answer with --token-budget auto.
    status, out, _ = cli("--model", "8B", "--len", "65536", "--minimize", "gpus", "--explain", "--gpu", "a100",
                         "--sp", "4")
    assert status == 0 and _reasons(out)["lower_token_budget"] == (
        f"{LOWERED_HELD}a budget lowered by --token-budget auto trains 65536 tokens on no fewer than 4 GPUs either")


@pytest.mark.parametrize("flags", [("--token-budget", "auto"), ("--no-estimate",)])
def test_fewest_gpus_explained_asks_no_lowered_budget_where_none_can_be_lowered(cli, flags: tuple[str, ...]):
    status, out, _ = cli("--model", "8B", "--len", "65536", "--minimize", "gpus", "--explain", "--gpu", "a100", *flags)
    assert status == 0 and "lower_token_budget" not in _reasons(out)


def test_a_lowered_fewest_gpus_plan_is_explained_with_its_budget_on_every_count_before_it(cli):
    # With --token-budget auto the plan is on 2 GPUs at a lowered budget: the choice names it, and the 1-GPU table's
    # end (measured at the default budget) says what a lowered one holds there, as the 2-GPU table's '-' does.
    status, out, _ = cli("--model", "8B", "--len", "65536", "--minimize", "gpus", "--explain", "--gpu", "a100",
                         "--token-budget", "auto")
    reasons = _reasons(out)
    assert status == 0 and reasons["choice"].startswith(
        "Env + Offload + SP=2 on 2 GPUs with a lowered max_token_len_per_gpu of 50176 is the plan with the fewest GPUs "
        "(any count up to 64), then the cheapest, at 65536 tokens;")
    assert reasons["no_setting"].split(" | ")[0] == (
        "the A100-80GB table for 1 GPU says '-' for Qwen3-8B from 28672 tokens to 32768, where its rows end: nothing "
        "trained there (at Trinity's default budget; lowered, vanilla not estimated without Env; Env not estimated; "
        "Offload not estimated without Env; Env + Offload holds at most 49152 tokens per GPU, below ceil(65536 / 1) = "
        "65536)")


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_the_explanations_fewer_gpus_question_keeps_to_its_deadline(monkeypatch):
    # Where the answer has no plan on fewer GPUs (as where its own question ran out of time), the explanation asks it
    # within what is left of its deadline; left undecided, it is counted (incomplete), and no claim is made.
    import solver.explain as explain_module

    query = solver.make_query(CATALOG, model="8B", gpu="a100", objective="min_gpus", max_model_len=65536, sp=4)
    (answer,) = solver.solve.plan(query, CATALOG)
    asked: list[float] = []

    def undecided(catalog, timed, best, gpu):
        asked.append(timed.time_limit_s)
        return None, False

    monkeypatch.setattr(explain_module, "lowered_fewer", undecided)
    rules = [reason.rule for reason in explain_module.explain(CATALOG, query, answer)]
    assert "lower_token_budget" not in rules and "incomplete" in rules
    assert len(asked) == 1 and 0 < asked[0] < query.time_limit_s


def test_the_fewer_gpus_a_lowered_budget_trains_are_counted_from_the_best_plans(cli):
    # Qwen3-1.7B at 65536 on H20s: 4 GPUs at the default budget, 1 with a lowered one: 3 fewer (not the 1 it takes).
    status, out, _ = cli("--model", "1.7B", "--len", "65536", "--minimize", "gpus", "--explain", "--gpu", "h20")
    assert status == 0 and _reasons(out)["lower_token_budget"].startswith(
        f"{LOWERED_HELD}--token-budget auto trains 65536 tokens on 1 GPU, 3 fewer: ")


def test_a_fewer_gpus_plan_at_the_default_budget_is_no_lowered_one():
    # Where `best` is not the fewest at the default budget (as where a time limit left it unproven: 3 GPUs here, where
    # 1 trains Qwen3-0.6B), the question with --token-budget auto finds the 1 at the default budget: that is no plan a
    # lowered budget gives, and none is named.
    query = solver.make_query(CATALOG, model="0.6B", gpu="a100", objective="min_gpus", max_model_len=4096)
    (answer,) = solver.solve.plan(query, CATALOG)
    assert answer.best is not None and (answer.best.gpus, answer.best.lowered_budget) == (1, False)
    unproven = answer.best.model_copy(update={"gpus": 3})
    assert solver.solve.lowered_fewer(CATALOG, query, unproven, answer.gpu) == (None, True)


CHECK_INTRO = "# To check your config once these keys are in it (CONFIG: its file), as this plan was made:"


def _run_printed_check(cli, monkeypatch, fragment: str, model: str, folder: Path) -> tuple[int, str, str]:
    """Merge `fragment` into a config that names `model` (its model.model_path, which a fragment leaves to yours),
    and run the check command its header prints on it, with the environment variable the command sets."""
    lines = fragment.splitlines()
    command = lines[lines.index(CHECK_INTRO) + 1]
    assert command.startswith("#   ")
    words = shlex.split(command[4:])
    while "=" in words[0]:
        name, _, value = words.pop(0).partition("=")
        monkeypatch.setenv(name, value)
    assert words[:4] == ["solve", "--from-config", "CONFIG", "--check"]
    config = folder / "config.yaml"
    config.write_text(fragment.replace("\nmodel:\n", f"\nmodel:\n  model_path: Qwen/{model}\n", 1), encoding="utf-8")
    return cli("--from-config", str(config), *words[3:])


def test_each_emitted_configs_header_prints_the_check_that_checks_it_on_its_pools_gpu(cli, monkeypatch, tmp_path):
    # solve cluster --emit-dir: without --gpu a check judges the A100 and the H20; the header's command names the
    # job's pool's GPU type (H20-96GB for one job here), its host memory and Env's variable, and passes.
    fleet = Path("docs/examples/fleet.yaml")
    out = tmp_path / "out"
    status, _, _ = cli("cluster", str(fleet), "--emit-dir", str(out), "--json")
    assert status == 0
    placed = json.loads(cli("cluster", str(fleet), "--json")[1])["placements"]
    assert {placement["gpu"] for placement in placed} == {"A100-80GB", "H20-96GB"}
    for placement in placed:
        fragment = (out / f"{placement['job']}.yaml").read_text(encoding="utf-8")
        plan = placement["plan"]
        monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
        status, answer, err = _run_printed_check(cli, monkeypatch, fragment, placement["model"], tmp_path)
        assert status == 0, err
        heading = answer.splitlines()[0]
        assert heading.startswith(f"{placement['gpu']} · {placement['model']} · ") and answer.count(" · ") == 2
        label = " + ".join([*(["Env"] if plan["env"] else []), *(["Offload"] if plan["offload"] else []),
                            *([f"SP={plan['sp']}"] if plan["sp"] > 1 else [])]) or "vanilla"
        said = " ".join(answer.split())
        assert f"config.yaml runs {label} on {plan['gpus']} trainer GPU" in said and ": it trains (" in said
    chat = (out / "chat-14b.yaml").read_text(encoding="utf-8")
    assert (f"{CHECK_INTRO}\n#   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve --from-config CONFIG --check "
            "--gpu A100-80GB --host-ram 1024 --critic none\n") in chat  # its plan counted no critic (s74)


def test_a_pools_own_gpu_and_the_placements_options_are_in_the_check(cli, monkeypatch, tmp_path):
    # A pool of a GPU type of your own (by its driver's memory) and a placement with --margin: the check needs both
    # to judge the config as it was placed (the job grew onto the node's idle GPUs: 3 trainer GPUs).
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({
        "pools": [{"name": "lab", "gpu": "lab-48", "gpu_memory_mib": 46068, "nodes": 1, "gpus_per_node": 4}],
        "jobs": [{"name": "small", "model": "Qwen3-0.6B", "max_model_len": 4096, "rollout_gpus": 1}]}),
        encoding="utf-8")
    out = tmp_path / "out"
    assert cli("cluster", str(fleet), "--emit-dir", str(out), "--margin", "0.05")[0] == 0
    fragment = (out / "small.yaml").read_text(encoding="utf-8")
    assert (f"{CHECK_INTRO}\n#   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve --from-config CONFIG --check "
            "--gpu lab-48 --gpu-memory 46068MiB --margin 0.05 --critic none\n") in fragment
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    status, answer, err = _run_printed_check(cli, monkeypatch, fragment, "Qwen3-0.6B", tmp_path)
    assert status == 0 and answer.startswith("lab-48 · Qwen3-0.6B · "), err
    assert "config.yaml runs Env on 3 trainer GPUs at 4096 tokens" in " ".join(answer.split())


@pytest.mark.parametrize(("flags", "command"), [
    # A fragment has no algorithm_type: the check leaves out Trinity's default PPO's critic, as the plan did (s74).
    (("--gpu", "h100", "--host-ram", "0.5TB"), "--gpu H100-80GB --host-ram 512 --critic none"),
    (("--gpu", "mine", "--gpu-memory", "48", "--trinity-version", "0.5"),
     "--gpu mine --gpu-memory 48 --critic none --trinity-version 0.5"),
])
def test_solve_emit_prints_the_check_for_its_gpu(cli, monkeypatch, tmp_path, flags: tuple[str, ...], command: str):
    status, fragment, _ = cli("--model", "8B", "--len", "16384", "--gpus", "2", "--emit", "trinity", *flags)
    assert status == 0
    lines = fragment.splitlines()
    assert lines[lines.index(CHECK_INTRO) + 1].endswith(f" --check {command}")
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    status, answer, err = _run_printed_check(cli, monkeypatch, fragment, "Qwen3-8B", tmp_path)
    assert status == 0 and answer.startswith(f"{command.split()[1].replace('h100', 'H100-80GB')} · Qwen3-8B · "), err


def test_the_api_fragments_print_the_check_as_the_commands_do(tmp_path):
    # trinity_config and placement_configs give what --emit trinity and --emit-dir write: the check command too (a GPU
    # type of your own with its memory); trinity_fragment writes one only where asked (`check`).
    (answer,) = solver.plan("8B", gpu="h100", max_model_len=16384, budget_gpus=2)
    assert (f"{CHECK_INTRO}\n#   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve --from-config CONFIG --check "
            "--gpu H100-80GB --critic none\n") in solver.trinity_config(answer)
    model = load_catalog().model(answer.model)
    assert CHECK_INTRO not in solver.trinity.trinity_fragment(answer.plans[0], model, gpu=answer.gpu)
    mine = CATALOG.with_gpu_types([solver.described_gpu_type("mine", 64)])
    (own,) = solver.plan("8B", gpu="mine", max_model_len=16384, budget_gpus=2, catalog=mine)
    assert "--check --gpu mine --gpu-memory 64 --critic none\n" in solver.trinity_config(own, mine)
    fleet = Path("docs/examples/fleet.yaml")
    result = solver.place(fleet)
    asked = solver.placement_configs(result, fleet, check_options=("--no-estimate",))
    assert all(f"{CHECK_INTRO}\n#   " in text and " --no-estimate" in text for text in asked.values())
    assert solver.api.fragment_check("h100", CATALOG) == ("--gpu", "H100-80GB")  # the name, as the check takes it
    with pytest.raises(solver.QueryError) as caught:
        solver.placement_configs(result, fleet, check_options="--no-estimate")
    assert str(caught.value) == "check_options must be a tuple or None, got '--no-estimate'"


def test_the_check_passes_the_plannings_cells_memory_model_margin_and_estimate_mode(cli, monkeypatch, tmp_path):
    # A GPU type of your own given by cells (its memory is in them: no --gpu-memory), the files in a folder whose name
    # has a space (quoted, as a shell reads it), the shipped memory model as a file of your own, --margin 0 and
    # --estimate: the header's check passes them all, and judges the config as the plan was made.
    folder = tmp_path / "my cells"
    folder.mkdir()
    cells = folder / "lab.yaml"
    cells.write_text(Path("docs/examples/my-cells.yaml").read_text(encoding="utf-8").replace(
        "gpu: H100-80GB ", "gpu: lab-80\nmemory_mib: 81559\n").replace(
        "# aliases: [my-gpu]", "aliases: [my-gpu]"), encoding="utf-8")
    memory_model = folder / "memory-model.yaml"
    memory_model.write_text(Path("tables/memory-model.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    status, fragment, err = cli("--model", "8B", "--len", "32768", "--gpu", "lab-80", "--gpus", "8", "--cells",
                                str(cells), "--memory-model", str(memory_model), "--margin", "0", "--estimate",
                                "--emit", "trinity")
    assert status == 0, err
    lines = fragment.splitlines()
    assert lines[lines.index(CHECK_INTRO) + 1].endswith(
        f" --check --gpu lab-80 --cells '{cells}' --memory-model '{memory_model}' --margin 0 --estimate --critic none")
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    status, answer, err = _run_printed_check(cli, monkeypatch, fragment, "Qwen3-8B", tmp_path)
    assert status == 0 and answer.startswith("lab-80 · Qwen3-8B · "), err


def test_a_check_option_that_would_break_the_header_comment_is_refused():
    (answer,) = solver.plan("8B", gpu="h100", max_model_len=16384, budget_gpus=2)
    model = load_catalog().model(answer.model)
    with pytest.raises(solver.QueryError) as caught:
        solver.trinity.trinity_fragment(answer.plans[0], model, gpu=answer.gpu,
                                        check=solver.trinity.check_flags("H100-80GB", options=("--cells", "a\nb")))
    assert str(caught.value) == ("check must be a tuple of printable strings, got ('--gpu', 'H100-80GB', '--cells', "
                                 "'a\\nb')")
