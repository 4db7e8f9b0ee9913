"""Small consistency fixes (session 57): `solve cluster`'s table and JSON say Trinity 0.5's train batch caution as
`solve` does; cautions keep one order however they are added; the API names the train batch as its caller gave it;
`solve memory --from-config` names solve's verdict; a map by length leaves out the lengths nothing trains; the
accepted GPU names read as separate cards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import fragment_comment
from test_cluster import reference_checked
from test_lora2_s56 import FLEET, JOB_75, _batch_words

import solver
from solver.results import CautionCode
from solver.trinity import read_trinity_config

ANSWER_BATCH = "a train batch of 75 (the answer's train_batch_size)"


@pytest.mark.parametrize(("version", "batch", "cautioned"), [("0.5", 75, True), ("0.6", 75, False),
                                                             ("0.5", 72, False)])
def test_cluster_table_and_json_say_the_05_batch_caution_its_fragment_says(
        cli, tmp_path: Path, version: str, batch: int, cautioned: bool):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET.replace("BATCH", str(batch)), encoding="utf-8")
    flags = ("cluster", str(fleet), "--emit-dir", str(tmp_path / "out"), "--trinity-version", version)
    status, out, _ = cli(*flags, "--json")
    plan = reference_checked(fleet, out, trinity_version=version)["placements"][0]["plan"]
    assert (status, plan["gpus"], plan["sp"]) == (0, 6, 2)
    assert (plan["caution_codes"], plan["cautions"]) == ((["batch-divides-trainer-gpus"], [JOB_75]) if cautioned
                                                         else ([], []))
    status, out, _ = cli(*flags)
    assert status == 0
    assert (f"caution: big: {JOB_75}" in " ".join(out.split())) is cautioned
    assert (tmp_path / "out" / "big.yaml").read_text(encoding="utf-8").count("# caution: ") == cautioned


def test_place_takes_the_trinity_version_as_plan_does():
    instance = {"pools": [{"name": "h100", "gpu": "H100-80GB", "nodes": 1, "gpus_per_node": 6}],
                "jobs": [{"name": "big", "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 0,
                          "train_batch_size": 75}]}
    fleet = solver.Fleet.model_validate(instance)
    result = solver.place(fleet, trinity_version="0.5")
    reference_checked(instance, result.model_dump_json(), trinity_version="0.5")  # 0.5's caution, as it counts it
    (placed,) = result.placements
    assert placed.plan.caution_codes == (CautionCode.BATCH_DIVIDES_TRAINER_GPUS,)
    # Its fragment says it once, as one of a result placed without the release does.
    fragments = [solver.placement_configs(result, fleet, version="0.5")["big"]
                 for result in (solver.place(fleet, trinity_version="0.5"), solver.place(fleet))]
    assert [fragment.count(fragment_comment(f"caution: {JOB_75}")) for fragment in fragments] == [1, 1]
    assert solver.place(fleet).placements[0].plan.cautions == ()
    with pytest.raises(solver.QueryError, match=(r"^trinity_version takes 0\.5, 0\.5\.0, 0\.5\.1, 0\.5\.2, 0\.6 or "
                                                 r"0\.6\.0 \(or a tag of one, v0\.5\.2\), got '0\.7' \(rft-solver "
                                                 r"knows the rules of these releases alone\)$")):
        solver.place(fleet, trinity_version="0.7")


def test_a_batch_caution_added_after_planning_takes_the_place_planning_gives_it():
    # Env on an AMD GPU is cautioned after the train batch, whether the batch's caution came with the plan or later.
    asked = {"gpu": "mi300x", "max_model_len": 32768, "budget_gpus": 6, "exact": True, "train_batch_size": 75,
             "env": True, "sp": 2}
    (planned,) = solver.plan("8B", trinity_version="0.5", **asked)
    (unnamed,) = solver.plan("8B", **asked)
    added = unnamed.best.with_batch_caution(75, "--train-batch-size", "0.5")
    order = (CautionCode.BATCH_DIVIDES_TRAINER_GPUS, CautionCode.ROCM_ENV_MAY_NOT_APPLY)
    assert planned.best.caution_codes == added.caution_codes == order
    assert added.cautions[0].startswith("--train-batch-size 75 does not divide by the 6 trainer GPUs")
    assert added.cautions[1] == planned.best.cautions[1] == unnamed.best.cautions[0]


def test_a_config_planned_without_the_release_names_its_batch_as_the_answers_field_in_its_05_fragment():
    # The answer keeps no source: its fragment names the field it reads, not a flag the config never gave.
    config = read_trinity_config(
        "mode: train\nalgorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 6}\n"
        "model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\nbuffer: {train_batch_size: 75}\n", "trinity.yaml",
        {})
    catalog = solver.load_catalog()
    (answer,) = solver.api.answer_query(solver.api.config_query(catalog, config, gpu="h100"), catalog)
    assert (answer.best.gpus, answer.best.sp, answer.train_batch_size) == (6, 2, 75)
    fragment = solver.trinity_config(answer, version="0.5")
    assert fragment_comment(f"caution: {_batch_words(ANSWER_BATCH)}") in fragment
    assert "--train-batch-size" not in fragment


def test_solve_memory_from_config_names_solves_verdict(cli):
    status, out, err = cli("memory", "--from-config", "trinity.yaml", "--gpu", "h100")
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] == (
        "solve memory: error: --from-config is an option of solve, not of solve memory: for a Trinity config's own "
        "settings, solve --from-config FILE --gpu G gives the planner's verdict on them (whether they train, and why) "
        "and its best plan")
    _, help_text, _ = cli("memory", "--help")
    assert "for a Trinity config's own settings, solve --from-config FILE --gpu G gives" in " ".join(help_text.split())


def test_a_map_by_length_says_the_lengths_nothing_trains_in_one_line(cli):
    # Qwen3-8B on RTX 4090s trains up to 49152 tokens on 8 GPUs: the 20 longer lengths are one line, not 20 rows.
    status, out, _ = cli("map", "--by", "len", "--gpu", "rtx-4090", "--model", "8B")
    assert status == 0
    lines = out.splitlines()
    assert any(line.startswith("│  49152 │") for line in lines)
    assert not any(line.startswith("│  53248 │") for line in lines)
    assert "53248 to 131072 tokens: nothing trains on up to 8 GPUs (rows left out)" in lines
    # The JSON keeps every row.
    status, out, _ = cli("map", "--by", "len", "--gpu", "rtx-4090", "--model", "8B", "--json")
    rows = json.loads(out)[0]["rows"]
    assert (status, rows[-1]["max_model_len"], rows[-1]["plans"]) == (0, 131072, [None] * 8)


def test_a_map_by_length_that_trains_its_longest_length_leaves_out_no_row(cli):
    status, out, _ = cli("map", "--by", "len", "--gpu", "h200", "--model", "8B")
    assert status == 0 and "rows left out" not in out and "│ 367616^ │" in out


def test_unknown_gpu_lists_the_rtx_cards_each_whole():
    with pytest.raises(solver.QueryError) as raised:
        solver.load_catalog().gpu("a30")
    assert "RTX-6000-Ada-48GB, " in str(raised.value) and "48GB/" not in str(raised.value)
    assert "RTX-4090-24GB, RTX-5090-32GB, " in str(raised.value)


def test_cluster_trinity_version_without_emit_dir_cautions_the_table_and_json(cli, tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET.replace("BATCH", "75"), encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--trinity-version", "0.5", "--json")
    plan = reference_checked(fleet, out, trinity_version="0.5")["placements"][0]["plan"]
    assert (status, plan["caution_codes"], plan["cautions"]) == (0, ["batch-divides-trainer-gpus"], [JOB_75])
    status, out, _ = cli("cluster", str(fleet), "--trinity-version", "0.5")
    assert status == 0 and f"caution: big: {JOB_75}" in " ".join(out.split()) and "wrote" not in out
    assert list(tmp_path.iterdir()) == [fleet]  # nothing written without --emit-dir
