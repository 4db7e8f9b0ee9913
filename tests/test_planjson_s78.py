"""Session 78, planjson: a plan's Trinity release survives every path. A plan keeps the release it was counted for
in its JSON (`Plan.trinity_version`, as `release_name` names it, beside `Plan.expert_layout`), so an answer or a
placement read back writes the config it was counted for (its host memory, its check command), not transformers 5's
whole experts; without ``version`` the API writes the plan's own release, and refuses one whose layout its figures do
not hold for; the check command names the exact release (0.5.0, 0.5.2), and a mixture of experts' plan says how its
routed experts were counted outside the calibration's phrase (`Plan.experts_counted`: solve's experts row, solve
cluster's pool notes)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.query import QueryError
from solver.tables import counted_release, release_name

Cli = Callable[..., tuple[int, str, str]]

MIXTRAL_LIKE = {
    "model_type": "mixtral", "architectures": ["MixtralForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 16,
    "num_attention_heads": 16, "num_key_value_heads": 8, "vocab_size": 32000, "max_position_embeddings": 32768,
    "tie_word_embeddings": False, "num_local_experts": 8, "num_experts_per_tok": 2, "intermediate_size": 5632,
    "rope_theta": 1e6}
"""A made-up Mixtral of 4.8B parameters: 16 layers of hidden width 2048, 8 experts of 5632. With Offload on 16 H100s,
8 a node, its host memory per node is 49.4 GiB with 0.5.1's separate experts, 79.4 with 0.5.0's (either: whole
experts, 0.5's bf16 reference shards), 91.7 with 0.6's."""
SEPARATE = "routed experts counted separate, as Trinity 0.5.1's transformers 4 holds them"
ASKED = ("--gpu", "h100", "--gpus", "16", "--exact", "--len", "8k", "--offload", "--host-ram", "60")


@pytest.fixture
def mixtral_like(tmp_path: Path) -> Path:
    """The folder of `MIXTRAL_LIKE`'s config.json, which ``--model-config`` and `load_model_config` read."""
    folder = tmp_path / "mixtral-like"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(MIXTRAL_LIKE), encoding="utf-8")
    return folder


def _catalog(folder: Path) -> solver.Catalog:
    return solver.load_catalog().with_model(solver.load_model_config(folder))


def _host_and_check(fragment: str) -> list[str]:
    return [line for line in fragment.splitlines() if line.startswith("# host memory") or " --check " in line]


def test_a_0_5_1_answer_read_back_from_json_writes_its_own_config(cli: Cli, mixtral_like: Path) -> None:
    status, out, err = cli("--model-config", str(mixtral_like), *ASKED, "--trinity-version", "v0.5.1", "--json")
    assert status == 0, err
    plan = json.loads(out)[0]["plans"][0]
    assert (plan["trinity_version"], plan["expert_layout"], plan["host_memory_gb"]) == ("0.5.1", "separate", 49.4)
    assert plan["experts_counted"] == SEPARATE
    read_back = solver.Answer.model_validate(json.loads(out)[0])
    assert read_back.best is not None and read_back.best.expert_layout == "separate"
    # Before: read back as fused and planned for no release, 0.6's 91.7 GiB past the 60 it was planned within.
    assert _host_and_check(solver.trinity_config(read_back, _catalog(mixtral_like))) == [
        "# host memory: 49.4 GiB per node for Offload, within host_ram_gb of 60 GiB",
        ("#   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve --from-config CONFIG --check --gpu H100-80GB "
         "--model-config MODEL_CONFIG --host-ram 60 --critic none --trinity-version 0.5.1")]
    assert read_back.best.model_dump() == solver.Plan.model_validate(plan).model_dump()


def test_the_api_answer_and_its_json_give_the_same_figures(mixtral_like: Path) -> None:
    catalog = _catalog(mixtral_like)
    (answer,) = solver.plan("mixtral-like", gpu="h100", budget_gpus=16, exact=True, max_model_len=8192, offload=True,
                            host_ram_gb=60.0, trinity_version="0.5.1", catalog=catalog)
    read_back = solver.Answer.model_validate_json(answer.model_dump_json())
    assert _host_and_check(solver.trinity_config(read_back, catalog)) == _host_and_check(
        solver.trinity_config(answer, catalog))
    assert solver.trinity_settings(read_back, catalog) == solver.trinity_settings(answer, catalog)


@pytest.mark.parametrize("version", ["0.6", "0.5", "0.5.0", "0.5.2"])
def test_a_release_holding_the_experts_otherwise_is_refused(mixtral_like: Path, version: str) -> None:
    catalog = _catalog(mixtral_like)
    (answer,) = solver.plan("mixtral-like", gpu="h100", budget_gpus=16, exact=True, max_model_len=8192, offload=True,
                            host_ram_gb=60.0, trinity_version="0.5.1", catalog=catalog)
    with pytest.raises(QueryError) as raised:
        solver.trinity_config(solver.Answer.model_validate_json(answer.model_dump_json()), catalog, version=version)
    # 0.6's transformers 5 holds them whole; 0.5's may (s79: the words say so, not that it does)
    held = ("which holds mixtral-like's routed experts otherwise, whole on its transformers 5" if version == "0.6" else
            "which may hold mixtral-like's routed experts otherwise, whole on transformers 5")
    assert str(raised.value) == (
        f"the answer's plan was counted for Trinity 0.5.1 ({SEPARATE}): its memory figures do not hold for Trinity "
        f"{version}, {held}; plan it again with trinity_version='{version}', or leave version out to write it for "
        "Trinity 0.5.1")


def test_a_whole_experts_plan_is_refused_for_0_5_1_and_an_either_plan_written_for_any(mixtral_like: Path) -> None:
    catalog = _catalog(mixtral_like)
    asked = {"gpu": "h100", "budget_gpus": 16, "exact": True, "max_model_len": 8192, "offload": True,
             "catalog": catalog}
    (fused,) = solver.plan("mixtral-like", **asked)  # type: ignore[arg-type]
    with pytest.raises(QueryError, match=r"^the answer's plan was counted for no Trinity release \(0\.6's; routed "
                                         r"experts counted whole, as transformers 5 holds them\): its memory figures "
                                         r"do not hold for Trinity 0\.5\.1, "):
        solver.trinity_config(fused, catalog, version="0.5.1")
    # 0.5.0's plan counted the larger of the two layouts: it holds for 0.5.1's and 0.6's, and names them.
    (either,) = solver.plan("mixtral-like", trinity_version="0.5.0", **asked)  # type: ignore[arg-type]
    assert either.best is not None and (either.best.expert_layout, either.best.host_memory_gb) == ("either", 49.4)
    for version, host in (("0.5.1", "49.4"), ("0.6.0", "91.7")):
        lines = _host_and_check(solver.trinity_config(either, catalog, version=version))
        assert lines[0] == f"# host memory: {host} GiB per node for Offload; not checked: host_ram_gb not given"
        assert lines[1].endswith(f" --critic none --trinity-version {version}")


def test_a_dense_plan_may_be_written_for_another_release() -> None:
    (answer,) = solver.plan("Qwen3-8B", gpu="h100", budget_gpus=8, max_model_len=32768, trinity_version="0.5.1")
    assert answer.best is not None and (answer.best.expert_layout, answer.best.experts_counted) == ("separate", None)
    assert solver.trinity_config(answer, version="0.6").count("--trinity-version 0.6\n") == 1


@pytest.mark.parametrize(("given", "named"), [("0.5.0", "0.5.0"), ("v0.5.2", "0.5.2"), ("0.5", "0.5"),
                                              ("0.6.0.post1", "0.6.0"), ("0.6", "0.6")])  # pre-releases refused: s79
def test_the_check_command_names_the_release_the_plan_was_made_for(cli: Cli, given: str, named: str) -> None:
    # Before, 0.5.0's and 0.5.2's named 0.5: a check that only cautions 0.5.0's train batch rule.
    status, out, err = cli("--model", "4B", "--gpu", "a100", "--len", "8k", "--train-batch-size", "96",
                           "--trinity-version", given, "--emit", "trinity")
    assert status == 0, err
    assert out.count(f"--critic none --trinity-version {named}\n") == 1


@pytest.mark.parametrize(("value", "name"), [("v0.5.1", "0.5.1"), (" 0.5.0 ", "0.5.0"), ("0.6.0.dev0", None),
                                             ("0.5", "0.5"), ("0.6.0+local", "0.6.0"), ("0.6.1", None), (None, None),
                                             ("0.x", None)])
def test_release_name_keeps_the_minor_version_and_patch(value: str | None, name: str | None) -> None:
    assert release_name(value) == name


@pytest.mark.parametrize(("version", "experts", "planned", "named"), [
    ("0.5", "either", "0.5.0", "0.5.0"), ("0.5", "separate", "0.5.1", "0.5.1"), ("0.5", "either", None, "0.5"),
    ("0.6", "fused", "0.5.0", "0.6"), ("0.5", "separate", "0.6", "0.5.1"), (None, "fused", "0.5.2", None),
])
def test_counted_release_names_the_plans_own_release_of_the_minor_written(version: str | None, experts: str,
                                                                          planned: str | None,
                                                                          named: str | None) -> None:
    assert counted_release(version, experts, planned) == named  # type: ignore[arg-type]


def test_solve_says_the_layout_counted_in_a_row_of_its_own(cli: Cli, mixtral_like: Path) -> None:
    status, out, err = cli("--model-config", str(mixtral_like), *ASKED, "--trinity-version", "0.5.1")
    assert status == 0, err
    assert f"\nexperts        {SEPARATE}\n" in out
    status, out, err = cli("--model-config", str(mixtral_like), *ASKED[:-2])  # no release named: no row
    assert status == 0, err
    assert "\nexperts " not in out
    status, out, err = cli("--model", "8B", "--gpu", "h100", "--len", "8k", "--trinity-version", "0.5.1")
    assert (status, "\nexperts " in out) == (0, False), err  # a dense model


def test_a_cluster_read_back_keeps_its_release_and_notes_the_layout(cli: Cli, mixtral_like: Path,
                                                                    tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: h100s, gpu: h100, nodes: 2, gpus_per_node: 8, host_ram_gb: 60}\n"
                     f"jobs:\n  - {{name: mix, model_config: {mixtral_like}, max_model_len: 8192, "
                     "rollout_gpus: 0}\n", encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--trinity-version", "0.5.1")
    assert status == 0, err
    assert f"\nmix: {SEPARATE}\n" in out
    status, out, err = cli("cluster", str(fleet), "--trinity-version", "0.5.1", "--json")
    assert status == 0, err
    placed = solver.ClusterResult.model_validate_json(out)
    # Env on 16 H100s: 12.7 GiB a GPU and 24.1 of host memory a node as 0.5.1 holds the experts (17.0 and 42.4 as 0.6
    # does), which a placement read back wrote before as 0.6's, for no release.
    assert (placed.placements[0].plan.trinity_version, placed.placements[0].plan.host_memory_gb) == ("0.5.1", 24.1)
    fragment = solver.placement_configs(placed, fleet, _catalog(mixtral_like))["mix"]
    # 0.5.1 loads the untied model on rank 0 alone, as its words now say (s84), onto a second line
    assert _host_and_check(fragment)[0] == ("# host memory: 24.1 GiB per node while the model loads (rank 0 loading "
                                            "the model), within the pool's")
    assert "the model), within the pool's\n# host_ram_gb of 60 GiB\n" in fragment
    assert fragment.count("--trinity-version 0.5.1\n") == 1
    current = tmp_path / "placement.json"
    current.write_text(out, encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--trinity-version", "0.5.1", "--current", str(current))
    assert (status, "stays" in out) == (0, True), err
