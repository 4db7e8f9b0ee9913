"""s64 settingsfold: `solver.placement_settings` makes each placement's settings without the fragment's text
(`plan_settings`), so it loads none of the text's modules, and gives the settings it gave before; `placement_configs`
writes the same fragments; ``solve``'s --json ``apply`` and --emit's fragment are made of one set of the keys'
arguments (`_keys_arguments`), written once."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import solver
from solver.api import fragment_check
from solver.cluster import JOB_BATCH_SOURCE, POOL_HOST_RAM_SOURCE
from solver.results import ClusterResult, TrinitySettings
from solver.rules import API_OPTIONS
from solver.tables import Fleet, load_catalog, trinity_release
from solver.trinity import plan_fragment

EXAMPLE_FLEET = Path(__file__).resolve().parent.parent / "docs" / "examples" / "fleet.yaml"
ROCM_FLEET = {
    "pools": [{"name": "mi", "gpu": "MI300X", "nodes": 2, "gpus_per_node": 8}],
    "jobs": [{"name": "rocm-8b", "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 0,
              "train_batch_size": 64},
             {"name": "long-8b", "model": "Qwen3-8B", "max_model_len": 131072, "rollout_gpus": 2}],
}
"""Beside the example fleet (a shared node's CUDA_VISIBLE_DEVICES, engines of 2 GPUs, Offload, YaRN, a train batch,
host memory): an AMD pool, and a job in mode train with its batch."""
VERSIONS = [None, "0.5", "0.6"]

SETTINGS = """\
import sys
import solver
dumped = []
for fleet in {fleets!r}:
    result = solver.place(fleet)
    dumped.append([{{job: settings.model_dump_json() for job, settings in
                    solver.placement_settings(result, fleet, version=version).items()}} for version in {versions!r}])
print(dumped)
print(sorted(name for name in sys.modules if name.startswith("solver.trinity")))
"""


def _fleets(tmp_path: Path) -> list[str]:
    """The example fleet's path and the ROCm fleet's, written to `tmp_path`."""
    rocm = tmp_path / "rocm.yaml"
    rocm.write_text(yaml.safe_dump(ROCM_FLEET), encoding="utf-8")
    return [str(EXAMPLE_FLEET), str(rocm)]


def _fragments_before(result: ClusterResult, fleet: Fleet,
                      version: str | None) -> dict[str, tuple[str, TrinitySettings]]:
    """Each placement's `placement_configs` fragment and its settings as they were made before s64's settingsfold:
    by `plan_fragment`, the text and the settings at once."""
    catalog, release = load_catalog(), trinity_release("version", version)
    known = catalog.for_fleet(fleet)
    jobs, pools = {job.name: job for job in fleet.jobs}, {pool.name: pool for pool in fleet.pools}
    fragments = {}
    for placement in result.placements:
        job, pool = jobs[placement.job], pools[placement.pool]
        shared = placement.gpu_indexes if len(placement.gpu_indexes) < pool.gpus_per_node else None
        fragments[placement.job] = plan_fragment(
            placement.plan.with_batch_caution(job.train_batch_size, JOB_BATCH_SOURCE, release),
            known.model(placement.model), placement.rollout_gpus, nodes=len(placement.nodes), gpu=placement.gpu,
            shared_gpus=shared, engines=(0, placement.rollout_engine_size or 1), version=release,
            rocm=known.gpu(placement.gpu).rocm, train_batch_size=job.train_batch_size, host_ram_gb=pool.host_ram_gb,
            host_ram_source=POOL_HOST_RAM_SOURCE, option_names=API_OPTIONS,
            check=fragment_check(placement.gpu, known))
    return fragments


def test_placement_settings_make_no_fragment_text_and_are_the_fragments_settings(tmp_path: Path):
    fleets = _fleets(tmp_path)
    run = subprocess.run([sys.executable, "-c", SETTINGS.format(fleets=fleets, versions=VERSIONS)],
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    dumped, loaded = run.stdout.splitlines()
    # The settings and their check (s66), none of the text's modules (fragment, patch, config).
    assert ast.literal_eval(loaded) == ["solver.trinity", "solver.trinity.checks", "solver.trinity.interpolation",
                                        "solver.trinity.keys", "solver.trinity.plan_keys", "solver.trinity.reader",
                                        "solver.trinity.settings"]
    given = [[{job: TrinitySettings.model_validate(json.loads(one)) for job, one in by_job.items()}
              for by_job in by_version] for by_version in ast.literal_eval(dumped)]
    expected = []
    for path in fleets:
        fleet = solver.load_fleet(path)
        result = solver.place(fleet)
        expected.append([{job: settings for job, (_, settings) in _fragments_before(result, fleet, version).items()}
                         for version in VERSIONS])
    assert given == expected
    # The placements are of the kinds the fleets are for (so the comparison covers them).
    placed = [settings for by_version in expected for by_job in by_version for settings in by_job.values()]
    assert len(placed) == 3 * 6
    assert any(settings.environment.get("CUDA_VISIBLE_DEVICES") == "4,5,6" for settings in placed)
    assert any(settings.config.get("mode") == "train" and settings.config["buffer"] == {"train_batch_size": 64}
               for settings in placed)
    assert any(settings.config["explorer"]["rollout_model"]["tensor_parallel_size"] == 2
               for settings in placed if "explorer" in settings.config)
    assert any(settings.trinity_06_keys for settings in placed) and not all(s.trinity_06_keys for s in placed)


@pytest.mark.parametrize("version", VERSIONS)
def test_placement_configs_write_the_fragments_they_wrote_before(tmp_path: Path, version: str | None):
    for path in _fleets(tmp_path):
        fleet = solver.load_fleet(path)
        result = solver.place(fleet)
        before = _fragments_before(result, fleet, version)
        texts = {job: text for job, (text, _) in before.items()}
        made = {job: settings for job, (_, settings) in before.items()}
        configs = solver.placement_configs(result, fleet, version=version)
        # s79 (persona55) added the line naming the job's nodes under the plan, which plan_fragment has no words for
        assert {job: "".join(line for line in text.splitlines(keepends=True) if not line.startswith("# placed on "))
                for job, text in configs.items()} == texts
        assert all(text.splitlines()[2].startswith("# placed on node") for text in configs.values())
        assert solver.placement_settings(result, fleet, version=version) == made


def test_placement_settings_refuse_as_placement_configs_do():
    fleet = solver.load_fleet(EXAMPLE_FLEET)
    result = solver.place(fleet)
    [probe] = [placement for placement in result.placements if placement.job == "probe-0.6b"]
    unknown_pool = r"^the fleet has no job 'probe-0.6b' in a pool 'h21': pass the fleet it was placed from$"
    for placement, words in [(probe.model_copy(update={"gpu": "no-such-gpu"}), r"^unknown GPU 'no-such-gpu'; "),
                             (probe.model_copy(update={"model": "no-such-model"}), r"^unknown model 'no-such-model'"),
                             (probe.model_copy(update={"pool": "h21"}), unknown_pool)]:
        altered = result.model_copy(update={"placements": (placement,)})
        for function in (solver.placement_configs, solver.placement_settings):
            with pytest.raises(solver.QueryError, match=words):
                function(altered, fleet)
    for function in (solver.placement_configs, solver.placement_settings):
        with pytest.raises(solver.QueryError, match=r"^version takes "):
            function(result, fleet, version="0.4")


JSON_AND_EMIT = ["--model", "8B", "--gpu", "a100", "--gpus", "8", "--len", "131072", "--rollout-gpus", "4"]


def test_json_apply_and_the_emitted_fragment_are_made_of_one_set_of_the_keys_arguments(
        cli: Any, monkeypatch: pytest.MonkeyPatch):
    # Both go through solver.api.settings_arguments (the CLI's _keys_arguments until api88): engines of 2 GPUs
    # given there reach --json's apply and --emit's fragment.
    made = []
    unpatched = solver.api.settings_arguments

    def two_gpu_engines(*args: Any) -> Any:
        keys = unpatched(*args)
        made.append(keys)
        return keys._replace(engines=(0, 2))

    monkeypatch.setattr(solver.api, "settings_arguments", two_gpu_engines)
    status, out, err = cli(*JSON_AND_EMIT, "--json")
    assert status == 0, err
    [answer] = json.loads(out)
    status, emitted, err = cli(*JSON_AND_EMIT, "--emit", "trinity")
    assert status == 0, err
    engines = {"engine_num": 4, "tensor_parallel_size": 2}  # 8 rollout GPUs: the trainer takes a whole node
    assert answer["apply"]["config"]["explorer"]["rollout_model"] == engines
    assert yaml.safe_load(emitted)["explorer"]["rollout_model"] == engines
    assert len(made) == 2 and made[0] == made[1] and made[0].engines == (0, 1) and made[0].rollout_gpus == 8
