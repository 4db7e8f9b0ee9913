"""``--check`` judges a ``${...}`` reference to a key the config lacks by the fields of the section holding it in
Trinity's typed config, per release (``tables/trinity-fields.yaml``, keyed by section since session 66), not by the
name alone; the table's shape; the script that regenerates it (benchmarks/trinity_fields.py), on dataclasses of its
own. Each verdict below was checked with each release's own ``load_config`` (0.5.0 to 0.6.0, OmegaConf 2.3.0)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional  # noqa: UP035 - Trinity's spellings, walked as it has them

import pytest
from benchmark_modules import load_benchmark

from solver.tables import load_catalog, load_trinity_fields
from solver.tables.inputs import ITEM
from solver.trinity import trinity_config_problems

RELEASES = ("0.5.0", "0.5.1", "0.5.2", "0.6.0")
VERSIONS = ((None, "every Trinity release"), ("0.5", "Trinity 0.5"), ("0.6", "Trinity 0.6"))


def _problems(reference: str, version: str | None, **sections: object) -> list[tuple[str, str]]:
    mapping = {"model": {"model_path": "Qwen/Qwen3-8B", "critic_model_path": f"${{{reference}}}"}, **sections}
    return [(problem.code.value, problem.words) for problem in trinity_config_problems(
        mapping, load_catalog().model("8B"), 8, version=version)]


def _refused(reference: str, lacking: str, releases: str, below: str = "") -> list[tuple[str, str]]:
    filled = f", which the typed config of {releases} fills in with its defaults, with no {below}" if below else ""
    return [("unresolved-value-refused", (
        f"model.critic_model_path: cannot resolve '${{{reference}}}': the config has no {lacking}{filled}; "
        f"{releases} refuses the config as it loads it (OmegaConf resolves each value then)"))]


@pytest.mark.parametrize(("version", "releases"), VERSIONS)
def test_a_key_of_another_section_is_refused_where_the_merge_fills_the_section_in(version: str | None,
                                                                                  releases: str):
    # model_path is a field of ModelConfig, not of TrainerConfig, which fills in the trainer section the config lacks
    assert _problems("trainer.model_path", version) == _refused("trainer.model_path", "trainer", releases,
                                                                "model_path")


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_a_field_of_its_own_section_is_not_judged(version: str | None):
    problems = trinity_config_problems({"model": {"critic_model_path": "${model.model_path}"}},
                                       load_catalog().model("8B"), 8, version=version)
    assert [(problem.code.value, problem.words) for problem in problems] == [("unresolved-value", (
        "cannot check model.critic_model_path: cannot resolve '${model.model_path}': the config has no "
        "model.model_path"))]


@pytest.mark.parametrize(("version", "releases"), VERSIONS)
def test_a_key_inside_the_open_trainer_config_is_refused_with_or_without_the_trainer(version: str | None,
                                                                                     releases: str):
    # trainer_config is typed Any with the default {}: the merge adds no key there, whatever the config writes
    reference = "trainer.trainer_config.x"
    assert _problems(reference, version) == _refused(reference, "trainer", releases, "trainer_config.x")
    given = {"trainer": {"trainer_config": {"enable_preview": True}}}  # a key 0.6's veRLConfig has (release06, s82)
    problems = _problems(reference, version, **given)  # less the key-dropped note 0.6 on verl 0.8 gets (s89)
    assert [problem for problem in problems if problem[0] != "key-dropped"] == _refused(reference, reference, releases)


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize(("path", "lacking", "fills"), [
    (("trainer", "model_path"), 1, False),
    (("model", "model_path"), 2, True),
    (("trainer", "trainer_config", "x"), 1, False),
    (("trainer", "trainer_config", "x"), 3, False),
    (("model", "tokenizer_path"), 2, False),  # BufferConfig's
    (("model", "rope_scaling", "factor"), 2, False),  # an open field whose default is null
    (("buffer", "explorer_input", "taskset", "name"), 3, False),  # a section whose default is null
    (("buffer", "explorer_input", "taskset", "name"), 4, True),  # the config gives that section
    (("explorer", "auxiliary_models", 0, "model_path"), 4, True),  # a list's item the config gives
    (("explorer", "auxiliary_models", 0, "nope"), 4, False),
    (("buffer", "trainer_input", "auxiliary_buffers", "mine", "storage_type"), 5, True),  # a mapping's item
    (("buffer", "trainer_input", "experience_buffer", "replay_buffer", "priority_fn_args", "decay"), 4, True),
    (("stages", 0, "trainer", "save_interval"), 3, False),
    (("stages", 0, "trainer", "save_interval"), 4, True),
])
def test_each_release_fills_what_its_load_config_resolves(release: str, path: tuple[str | int, ...], lacking: int,
                                                          fills: bool):
    assert load_trinity_fields().releases[release].fills(path, lacking) is fills


def test_megatron_is_filled_in_by_0_6_alone():
    releases = load_trinity_fields().releases
    assert [release for release in RELEASES if releases[release].fills(("trainer", "megatron"), 1)] == ["0.6.0"]


@pytest.mark.parametrize("release", RELEASES)
def test_each_section_of_the_shipped_table_is_reached_from_the_top(release: str):
    schema = load_trinity_fields().releases[release]
    paths = (*schema.sections, *schema.open)
    for path in paths:
        if not path:
            continue
        parent, _, key = path.rpartition(".")
        if key == ITEM:  # the items of a list or mapping: a field of the section above it
            parent, _, key = parent.rpartition(".")
        assert key in schema.sections[parent], (release, path)
    for path in schema.null:
        parent, _, key = path.rpartition(".")
        assert key in schema.sections[parent], (release, path)
    assert schema.open["trainer.trainer_config"] == () and "model.rope_scaling" in schema.null


@dataclass
class _Inner:
    b: int = 0
    a: str = ""


@dataclass
class _Top:  # Trinity's own spellings (typing's Optional, List, Dict), and a union of its own
    inner: _Inner = field(default_factory=_Inner)
    maybe: Optional[_Inner] = None  # noqa: UP045
    items: List[_Inner] = field(default_factory=list)  # noqa: UP006
    named: Dict[str, _Inner] = field(default_factory=dict)  # noqa: UP006
    anything: Any = field(default_factory=dict)
    args: Dict[str, Any] = field(default_factory=lambda: {"decay": 2.0})  # noqa: UP006
    loose: dict | None = None
    plain: int = 1


def test_the_generator_walks_sections_items_open_fields_and_null_defaults():
    sections: dict[str, list[str]] = {}
    open_fields: dict[str, list[str]] = {}
    null: list[str] = []
    load_benchmark("trinity_fields").walk(_Top, "", sections, open_fields, null)
    inner = ["a", "b"]
    assert sections == {"": ["anything", "args", "inner", "items", "loose", "maybe", "named", "plain"],
                        "inner": inner, "maybe": inner, "items.*": inner, "named.*": inner}
    assert open_fields == {"anything": [], "args": ["decay"], "loose": []}
    assert null == ["maybe", "loose"]
