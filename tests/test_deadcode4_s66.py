"""A reference that nothing can resolve, whatever Trinity's typed config fills in: a cycle, or a key read below a
plain value, is refused by every release (`solver.trinity.checks._schema_fills` for an error with no key lacking:
the one line of this session's changes that the tests of the changed files left unrun, s66 deadcode4)."""

from __future__ import annotations

import pytest

from solver.tables import load_catalog
from solver.trinity import trinity_config_problems

REFUSED = "refuses the config as it loads it (OmegaConf resolves each value then)"


def _problems(reference: str, version: str | None) -> list[tuple[str, str]]:
    mapping = {"model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 4096, "critic_model_path": reference}}
    return [(problem.code.value, problem.words)
            for problem in trinity_config_problems(mapping, load_catalog().model("qwen3-8b"), 8,
                                                   version=version)]  # type: ignore[arg-type]


@pytest.mark.parametrize(("version", "releases"), [(None, "every Trinity release"), ("0.5", "Trinity 0.5")])
@pytest.mark.parametrize(("reference", "why"), [
    ("${model.critic_model_path}",
     ("'${model.critic_model_path}' reads model.critic_model_path: a cycle of interpolations, back to "
      "model.critic_model_path")),
    # max_model_len is a field's name in every release: read below a plain value, no default of it is filled there
    ("${model.model_path.max_model_len}",
     ("cannot resolve '${model.model_path.max_model_len}': model.model_path is 'Qwen/Qwen3-8B', not a mapping or "
      "list, so it has no max_model_len")),
])
def test_a_reference_with_no_key_lacking_is_refused_by_every_release(reference: str, why: str, version: str | None,
                                                                     releases: str) -> None:
    assert _problems(reference, version) == [
        ("unresolved-value-refused", f"model.critic_model_path: {why}; {releases} {REFUSED}")]
