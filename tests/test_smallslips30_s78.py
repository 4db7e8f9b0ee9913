"""Small slips (s78, helper smallslips30): Ctrl-C once ``solve cluster``'s search is over (the reasons asked again, or
the running jobs marked) keeps the placement found, as docs/cli.md says; ``--trinity-version`` and
``trinity_version`` take only the releases rft-solver knows."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from test_smallslips24_s77 import Cli

import solver
import solver.cluster.search
from solver.tables import load_catalog
from solver.tables.model_config import load_model_config
from solver.tables.peft_match import peft_target_match
from solver.trinity.checks import lora_targets_problem

FLEET = Path(__file__).parent.parent / "docs" / "examples" / "fleet.yaml"
INTERNLM2 = Path(__file__).parent / "data" / "hf-configs" / "internlm2-7b.json"
MIXTRAL = Path(__file__).parent / "data" / "hf-configs" / "Mixtral-8x7B-v0.1.json"
PLACED = ["math-4b", "code-8b", "chat-14b", "probe-0.6b"]


@pytest.mark.usefixtures("python_ctrl_c")  # Python's own Ctrl-C handler, also in a suite run with Ctrl-C ignored
def test_ctrl_c_while_the_reasons_are_asked_again_keeps_the_placement(cli: Cli, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: Ctrl-C in the reasons stopped them, and again as they were asked again: no JSON, exit 130.
    reasons = solver.cluster.search.unplaced_reasons
    asked = []

    def ctrl_c_in_the_reasons(*args: object, **keywords: object) -> object:
        asked.append(1)
        signal.raise_signal(signal.SIGINT)  # the first stops them; the second, as they are asked again, is held
        return reasons(*args, **keywords)  # type: ignore[arg-type]

    monkeypatch.setattr(solver.cluster.search, "unplaced_reasons", ctrl_c_in_the_reasons)
    folder = tmp_path / "configs"
    status, out, err = cli("cluster", str(FLEET), "--emit-dir", str(folder), "--json")
    placement = json.loads(out)
    assert (status, len(asked), placement["interrupted"], [placed["job"] for placed in placement["placements"]]) == (
        130, 2, True, PLACED)
    assert err.splitlines()[-2:] == [
        f"solve cluster: interrupted: no configs written to {folder} (the placement may not be the best)",
        "solve cluster: interrupted: the best placement found so far is above"]
    assert not folder.exists()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Python's own handler is back


@pytest.mark.usefixtures("python_ctrl_c")
def test_ctrl_c_while_the_running_jobs_are_marked_keeps_the_placement_marked(cli: Cli, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: Ctrl-C in with_current (the stays/moves/starts of --current) gave no JSON and exit 130.
    current = tmp_path / "now.json"
    current.write_text(cli("cluster", str(FLEET), "--json")[1])
    marked = solver.cluster.search.with_current
    asked = []

    def ctrl_c_while_marking(*args: object, **keywords: object) -> solver.ClusterResult:
        asked.append(1)
        signal.raise_signal(signal.SIGINT)  # the first stops the marking; the second, as it is marked again, is held
        return marked(*args, **keywords)  # type: ignore[arg-type]

    monkeypatch.setattr(solver.cluster.search, "with_current", ctrl_c_while_marking)
    status, out, err = cli("cluster", str(FLEET), "--current", str(current), "--json")
    placement = json.loads(out)
    assert (status, len(asked), placement["interrupted"]) == (130, 2, True)
    assert [(placed["job"], placed["current"]) for placed in placement["placements"]] == [
        (job, "stays") for job in PLACED]
    assert err.splitlines()[-1] == "solve cluster: interrupted: the best placement found so far is above"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


KNOWN = "takes 0.5, 0.5.0, 0.5.1, 0.5.2, 0.6 or 0.6.0 (or a tag of one, v0.5.2), got"
NOT_KNOWN = "(rft-solver knows the rules of these releases alone)"


@pytest.mark.parametrize("release", ["0.5.3", "v0.6.1", "0.5.10"])
@pytest.mark.parametrize("command", [
    ("--model", "4B", "--gpu", "h100", "--len", "8k"), ("memory", "--model", "4B", "--gpu", "h100", "--gpus", "4",
                                                        "--len", "8k"),
    ("map", "--model", "4B", "--gpu", "h100"), ("cluster", str(FLEET)),
])
def test_every_command_refuses_a_release_rft_solver_does_not_know(cli: Cli, command: tuple[str, ...],
                                                                  release: str) -> None:
    # Before: 0.5.3 (no such release) was read as 0.5 with no word, and planned by 0.5's rules.
    status, out, err = cli(*command, "--trinity-version", release)
    prog = " ".join(("solve", *command[:1])) if not command[0].startswith("-") else "solve"
    assert (status, out, err.splitlines()[-1]) == (
        2, "", f"{prog}: error: argument --trinity-version: {KNOWN} {release!r} {NOT_KNOWN}")


def test_every_api_keyword_refuses_a_release_rft_solver_does_not_know() -> None:
    (answer,) = solver.plan("4B", gpu="h100", max_model_len=8192, budget_gpus=4)
    placed = solver.place(FLEET)
    refusing = {
        "trinity_version": [lambda: solver.plan("4B", gpu="h100", max_model_len=8192, trinity_version="0.5.3"),
                            lambda: solver.estimate_memory("4B", "h100", 4, 8192, trinity_version="0.5.3"),
                            lambda: solver.map_plans("4B", gpu="h100", gpus_up_to=2, trinity_version="0.5.3"),
                            lambda: solver.place(FLEET, trinity_version="0.5.3")],
        "version": [lambda: solver.trinity_config(answer, version="0.5.3"),
                    lambda: solver.trinity_settings(answer, version="0.5.3"),
                    lambda: solver.placement_configs(placed, FLEET, version="0.5.3")],
    }
    for keyword, calls in refusing.items():
        for call in calls:
            with pytest.raises(solver.QueryError) as caught:
                call()
            assert str(caught.value) == f"{keyword} {KNOWN} '0.5.3' {NOT_KNOWN}"
    # The releases it knows, and their tags, are still read as their minor version.
    assert solver.trinity_settings(answer, version="v0.6.0") == solver.trinity_settings(answer, version="0.6")


def test_the_padded_model_caution_cites_the_verl_line_the_release_runs(cli: Cli) -> None:
    # Before: verl 0.9.1's engine (transformer_impl.py:1256-1260) for a 0.5.x run, which pins verl 0.7.0 or 0.7.1
    # (trinity_rft-0.5.2's METADATA: verl==0.7.1; 0.5.0's and 0.5.1's: verl==0.7.0), whose actor packs the rows.
    asked = ("--model-config", str(INTERNLM2), "--gpu", "h100", "--gpus", "8", "--len", "32768")
    status, out, _ = cli(*asked, "--trinity-version", "0.5.2", "--json")
    (caution,) = [caution for caution in json.loads(out)[0]["plans"][0]["cautions"]
                  if caution.startswith("use_remove_padding false")]
    assert (status, caution.split(": ", 1)[1].split("; padded instead")[0]) == (0, (
        "verl's remove padding packs a micro-batch's sequences into one row with no attention mask (verl 0.7.0 "
        "workers/actor/dp_actor.py:198-205, which Trinity 0.5.0 and 0.5.1 pin; :244-251 in 0.7.1, 0.5.2's), and "
        "internlm2-7b's own attention code would attend across them"))
    status, out, err = cli(*asked, "--trinity-version", "0.5", "--emit", "trinity")
    assert (status, err) == (0, "") and "0.9.1" not in out and "dp_actor.py:198-205" in out


@pytest.mark.parametrize(("model", "pattern", "same"), [
    ("Qwen3-30B-A3B", ".*mlp\\.experts\\.\\d+\\.(gate_proj|up_proj|down_proj)",
     ".*\\.(mlp\\.experts\\.\\d+|mlp\\.experts)\\.(gate_proj|up_proj|down_proj)"),
    (str(MIXTRAL), ".*experts\\.\\d+\\.(w1|w2|w3)",
     ".*\\.(block_sparse_moe\\.experts\\.\\d+|mlp\\.experts)\\.(w1|w3|w2)"),
])
def test_an_experts_only_regex_transformers_5_refuses_is_told_its_transformers_5_names(model: str, pattern: str,
                                                                                       same: str) -> None:
    # Before: "or give all-linear, or ... such as .*\.(q_proj|v_proj)", which adapts the attention, not the experts.
    judged = load_model_config(MIXTRAL) if model == str(MIXTRAL) else load_catalog().model(model)
    problem = lora_targets_problem(pattern, None, judged, "either")
    assert problem is not None and problem.code.value == "lora-targets-one-transformers"
    assert problem.words.endswith(
        "where it has transformers 5: run it with transformers 4 (Trinity 0.5.1 pins it), or give "
        f"{same}, which adapts the same modules on both transformers' names")
    # ... which each layout takes, adapting there the routed experts the regex adapts on transformers 4's names
    layouts = ("either", "fused", "separate")
    assert [lora_targets_problem(same, None, judged, layout) for layout in layouts] == [None] * 3
    separate = judged.peft_names_of("separate")
    assert peft_target_match(same, None, separate) == peft_target_match(pattern, None, separate)
    leaves = ("w1", "w3", "w2") if model == str(MIXTRAL) else ("gate_proj", "up_proj", "down_proj")
    assert peft_target_match(same, None, judged.peft_names_of("fused")).linears == tuple(
        f"experts.{leaf}" for leaf in leaves)


def test_the_refusal_under_transformers_5_alone_names_the_regex_of_the_same_experts() -> None:
    # Trinity 0.6 (transformers 5 alone): transformers 4's experts-only names match no module; before, the line said
    # ".*\.(q_proj|v_proj)"; now the regex that adapts those experts here, or the release that takes it where none does.
    qwen3_moe, mixtral = load_catalog().model("Qwen3-30B-A3B"), load_model_config(MIXTRAL)
    refused = lora_targets_problem(".*mlp\\.experts\\.\\d+\\.(gate_proj|up_proj|down_proj)", None, qwen3_moe, "fused")
    assert refused is not None and refused.code.value == "lora-configs-refused"
    assert refused.words.endswith(
        "matches no module: peft matches it whole (re.fullmatch) against each module's full name "
        "(model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.gate, model.layers.N.mlp.experts.{gate,up,down}_"
        "proj, model.embed_tokens and lm_head), and Trinity fails as it makes the adapter: give "
        ".*\\.(mlp\\.experts\\.\\d+|mlp\\.experts)\\.(gate_proj|up_proj|down_proj), which adapts here the modules it "
        "names on transformers 4's names")
    alone = lora_targets_problem(".*experts\\.\\d+\\.w1", None, mixtral, "fused")  # w1 without w3: none does
    assert alone is not None and alone.words.endswith(
        "and Trinity fails as it makes the adapter: it names modules of transformers 4's names that no regular "
        "expression adapts here: run it with transformers 4 (Trinity 0.5.1 pins it)")
    nowhere = lora_targets_problem(".*\\.q_norm", None, mixtral, "fused")  # no transformers' names: as before
    assert nowhere is not None and nowhere.words.endswith("such as .*\\.(q_proj|v_proj)")
