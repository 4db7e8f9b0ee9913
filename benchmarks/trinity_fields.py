"""Regenerate ``tables/trinity-fields.yaml`` from Trinity-RFT's wheels: the sections of each release's typed config.

Usage (a maintainer's step, not run in CI; it needs the wheels and OmegaConf, not rft-solver)::

    pip download trinity-rft==0.5.0 --no-deps -d wheels   # and each other release
    pip install omegaconf
    python benchmarks/trinity_fields.py wheels/trinity_rft-*.whl > tables/trinity-fields.yaml

Each wheel is unpacked into a temporary folder, and a child Python imports its ``trinity.common.config`` (with an
empty ``ray`` module where ray is not installed: only ``trinity.utils.log`` imports it, and only calls it later)
and walks its dataclass ``Config`` as ``OmegaConf.structured`` types it:

- a field typed as a dataclass (``Optional`` too) is a section: its path maps to its field names (``""``: the top);
- a list of a dataclass, or a mapping of text to one, holds items typed so: ``PATH.*`` is their section;
- a field typed ``Any``, ``dict`` or a mapping of other values is open: its path maps to the keys of its default
  (OmegaConf keeps what a config writes there as written, and merges the default's keys in);
- a section or open field whose default is null is listed under ``null``: where a config leaves it out, nothing
  is below it.

A wheel with a legacy trainer for verl before 0.8 (``LEGACY_CONFIG``: 0.6.0's) gets ``verl_legacy`` too: its
``veRLConfig``, read from the syntax tree, not imported (`legacy_sections`), as ``build_dataclass_from_mapping``
builds ``trainer.trainer_config`` into it. A wheel without one (0.5's) gets ``verl_merged``: the ``veRLConfig`` that its
validator merges the section into (``OmegaConf.structured``, `MERGED_CONFIGS`), read the same way. Each wheel gets
``algorithms``: the names its ``ALGORITHM_TYPE`` registry maps (`algorithm_names`).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import subprocess
import sys
import tempfile
import types
import typing
import zipfile
from pathlib import Path
from typing import Any

UNIONS = (typing.Union, types.UnionType)
"""``Optional[X]`` and ``X | None``."""

HEADER = """\
# The sections of Trinity-RFT's typed config (the dataclass Config of trinity/common/config.py), per release, read
# from each release's wheel by benchmarks/trinity_fields.py (which says how to run it). Trinity's load_config merges
# a config into that Config (OmegaConf.merge), which fills a key the config leaves out with its default, so that a
# reference to it resolves; rft-solver's --check judges a ${...} reference to a key the config lacks by these.
# sections: a section's path ("": the top; "*": an item of a list or mapping of sections) -> its field names.
# open: a field typed Any or dict (Trinity keeps what the config writes there) -> the keys of its default.
# null: the sections and open fields whose default is null (nothing is below them where the config leaves them out).
# verl_legacy: the typed veRLConfig a release's trainer on verl before 0.8 builds trainer.trainer_config into (0.6.0's
# trainer/verl_legacy/verl_config.py, read from its syntax tree), which drops a key a section lacks; paths below
# trainer.trainer_config; open here also holds a field typed as verl's own dataclass, whose keys are not judged.
# verl_merged: the same, for a release without that trainer (0.5's common/verl_config.py, 0.5.2's
# trainer/verl/verl_config.py), which merges trainer.trainer_config into it (OmegaConf.structured): it refuses a key a
# section lacks.
# algorithms: the algorithm types the release's registry maps (ALGORITHM_TYPE, trinity/algorithm/__init__.py), which
# refuses any other name without a dot (a dotted one is a class's import path) as the config loads.
"""


def _dataclass_in(annotation: Any) -> type | None:
    """The dataclass `annotation` names, itself or in ``Optional``; None where it names none."""
    if dataclasses.is_dataclass(annotation):
        return annotation  # type: ignore[return-value]
    if typing.get_origin(annotation) in UNIONS:
        return next((each for each in typing.get_args(annotation) if dataclasses.is_dataclass(each)), None)
    return None


def _item_dataclass(annotation: Any) -> type | None:
    """The dataclass of the items of a list or mapping `annotation` (``Optional`` too) names; None otherwise."""
    if typing.get_origin(annotation) in UNIONS:
        return next((found for each in typing.get_args(annotation) if (found := _item_dataclass(each))), None)
    arguments = typing.get_args(annotation)
    return _dataclass_in(arguments[-1]) if typing.get_origin(annotation) in (list, dict) and arguments else None


def _is_open(annotation: Any) -> bool:
    """Whether `annotation` is ``Any``, ``dict`` or a mapping (``Optional`` too), whose keys OmegaConf leaves open."""
    if typing.get_origin(annotation) in UNIONS:
        return any(_is_open(each) for each in typing.get_args(annotation) if each is not type(None))
    return annotation is Any or annotation is dict or typing.get_origin(annotation) is dict  # typing.Dict's too


def _default(field: dataclasses.Field[Any]) -> Any:
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return None if field.default is dataclasses.MISSING else field.default


def walk(cls: type, path: str, sections: dict[str, list[str]], open_fields: dict[str, list[str]],
         null: list[str]) -> None:
    """Add the section `cls` at `path`, and every section and open field below it."""
    hints = typing.get_type_hints(cls)
    sections[path] = sorted(field.name for field in dataclasses.fields(cls))
    for field in dataclasses.fields(cls):
        annotation, at = hints[field.name], f"{path}.{field.name}".removeprefix(".")
        section, item = _dataclass_in(annotation), _item_dataclass(annotation)
        if section is None and item is None and not _is_open(annotation):
            continue
        default = _default(field)
        if default is None:
            null.append(at)
        if section is not None:
            walk(section, at, sections, open_fields, null)
        elif item is not None:
            walk(item, f"{at}.*", sections, open_fields, null)
        else:
            open_fields[at] = sorted(default) if isinstance(default, dict) else []


def _walk_installed() -> None:
    """In the child: print the sections of the ``trinity`` on the path as JSON."""
    from trinity.common.config import Config  # the wheel's, on the child's path alone

    sections: dict[str, list[str]] = {}
    open_fields: dict[str, list[str]] = {}
    null: list[str] = []
    walk(Config, "", sections, open_fields, null)
    print(json.dumps({"sections": sections, "open": open_fields, "null": sorted(null)}))


def release_sections(wheel: Path) -> tuple[str, dict[str, Any]]:
    """The release `wheel` holds (its file name's) and its sections, walked in a child Python; with its legacy
    trainer's ``veRLConfig`` (`legacy_sections`) where it has one, else the one it merges (`MERGED_CONFIGS`), and its
    algorithm types (`algorithm_names`)."""
    release = wheel.name.split("-")[1]
    with tempfile.TemporaryDirectory() as folder:
        zipfile.ZipFile(wheel).extractall(folder)
        try:
            __import__("ray")
        except ImportError:
            (Path(folder) / "ray.py").write_text("", encoding="utf-8")
        child = subprocess.run([sys.executable, __file__, "--walk"], cwd=folder, env={"PYTHONPATH": folder},
                               capture_output=True, text=True, check=False)
        legacy = Path(folder) / LEGACY_CONFIG
        merged = next((Path(folder) / path for path in MERGED_CONFIGS if (Path(folder) / path).is_file()), None)
        typed = {"verl_legacy": legacy} if legacy.is_file() else {"verl_merged": merged} if merged else {}
        found = {name: legacy_sections(path.read_text(encoding="utf-8")) for name, path in typed.items()}
        algorithms = algorithm_names((Path(folder) / ALGORITHMS).read_text(encoding="utf-8"))
    if child.returncode:
        raise SystemExit(f"{wheel}: walking its config failed:\n{child.stderr}")
    return release, {"algorithms": algorithms, **json.loads(child.stdout), **found}


LEGACY_CONFIG = "trinity/trainer/verl_legacy/verl_config.py"
"""Where a release that runs verl before 0.8 apart (0.6.0) keeps the typed ``veRLConfig`` that its validator builds
``trainer.trainer_config`` into with ``build_dataclass_from_mapping`` (``trinity/common/dataclass_utils.py``), which
drops a key a dataclass lacks."""
MERGED_CONFIGS = ("trinity/common/verl_config.py", "trinity/trainer/verl/verl_config.py")
"""Where a release without `LEGACY_CONFIG` (0.5.0 and 0.5.1; 0.5.2) keeps the typed ``veRLConfig`` that its validator
merges ``trainer.trainer_config`` into (``OmegaConf.merge`` of ``OmegaConf.structured(veRLConfig)``,
``common/config_validator.py:1155`` in 0.5.0), which refuses a key a dataclass lacks."""
ALGORITHMS = "trinity/algorithm/__init__.py"
"""Where each release's ``ALGORITHM_TYPE`` registry maps its algorithm types to their classes (``default_mapping``)."""
OPEN_ANNOTATIONS = frozenset(("dict", "Dict", "Any"))
"""Annotations whose value ``build_dataclass_from_mapping`` keeps whole (``Optional`` of them too)."""


def legacy_sections(source: str) -> dict[str, Any]:
    """The sections of the dataclass ``veRLConfig`` in `source` (`LEGACY_CONFIG`'s text), read from its syntax tree,
    not imported (that needs verl, and its torch): each dataclass of the module's own is a section, as
    ``build_dataclass_from_mapping`` walks it (``Optional`` of one too); a field typed ``dict`` or ``Any`` is open (kept
    whole), and so is one typed as a ``Union`` of several types that names a section or an open type (which it keeps as
    written), or as a dataclass of verl's or built on one (``_CheckpointConfig(CheckpointConfig)``), or another module's
    (``SynchronizerConfig``): its keys are the installed verl's, or read elsewhere, so none is judged below it. Paths
    are relative to ``trainer.trainer_config``."""
    classes = {node.name: node for node in ast.parse(source).body if isinstance(node, ast.ClassDef)}
    own = {name for name, node in classes.items()
           if all(isinstance(base, ast.Name) and base.id in classes for base in node.bases)}
    sections: dict[str, list[str]] = {}
    open_fields: dict[str, list[str]] = {}
    null: list[str] = []

    def fields(name: str) -> list[ast.AnnAssign]:
        node = classes[name]
        inherited = [field for base in node.bases if isinstance(base, ast.Name) for field in fields(base.id)]
        return inherited + [item for item in node.body
                            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)]

    def named(annotation: ast.expr) -> str | None:
        if isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value) in ("Optional", "Union"):
            inner = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
            kinds = [named(each) for each in inner if not (isinstance(each, ast.Constant) and each.value is None)]
            if len(kinds) == 1:  # Optional[X]: built as X (``_strip_optional`` strips the None)
                return kinds[0]
            # a Union of several types: ``_strip_optional`` leaves it, so the value is kept as written (open)
            return "Any" if any(kind is not None for kind in kinds) else None
        text = ast.unparse(annotation.value if isinstance(annotation, ast.Subscript) else annotation)
        return text if text in classes or text in OPEN_ANNOTATIONS or text[:1].isupper() else None

    def walk(name: str, path: str) -> None:
        sections[path] = sorted(field.target.id for field in fields(name))  # type: ignore[union-attr]
        for field in fields(name):
            at = f"{path}.{field.target.id}".removeprefix(".")  # type: ignore[union-attr]
            kind = named(field.annotation)
            if kind is None or kind in ("List", "Tuple", "Set", "Literal"):
                continue
            if isinstance(field.value, ast.Constant) and field.value.value is None:
                null.append(at)
            if kind in own:
                walk(kind, at)
            else:
                open_fields[at] = []

    walk("veRLConfig", "")
    return {"sections": sections, "open": open_fields, "null": sorted(null)}


def algorithm_names(source: str) -> list[str]:
    """The algorithm types, sorted, of the ``ALGORITHM_TYPE`` registry in `source` (`ALGORITHMS`' text): the keys of
    its ``default_mapping``, read from the syntax tree (importing the module needs torch)."""
    for node in ast.parse(source).body:
        target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0] if isinstance(
            node, ast.Assign) else None
        if isinstance(target, ast.Name) and target.id == "ALGORITHM_TYPE" and isinstance(node.value, ast.Call):
            mapping = next(word.value for word in node.value.keywords if word.arg == "default_mapping")
            if isinstance(mapping, ast.Dict):
                return sorted(key.value for key in mapping.keys if isinstance(key, ast.Constant))
    raise SystemExit("no ALGORITHM_TYPE registry with a default_mapping found")


def _flow(key: str, names: list[str], indent: int) -> str:
    """``key: [names]`` as a YAML flow list at `indent` spaces, wrapped at 118 columns (further lines two deeper)."""
    lines, line = [], f"{' ' * indent}{key}: ["
    for name in names:
        word = json.dumps(name) if name in ("", "*") else name
        if len(line) + len(word) + 2 > 118:
            lines.append(line.rstrip())
            line = " " * (indent + 2)
        line += f"{word}, "
    return "\n".join([*lines, line.removesuffix(", ") + "]"])


def sections_block(found: dict[str, Any], indent: int) -> list[str]:
    """The lines of `found`'s ``sections``, ``open`` and ``null`` at `indent` spaces."""
    out = []
    for kind in ("sections", "open"):
        out.append(f"{' ' * indent}{kind}:")
        out += [_flow(json.dumps(path), names, indent + 2) for path, names in sorted(found[kind].items())]
    return [*out, _flow("null", found["null"], indent)]


def main(wheels: list[str]) -> None:
    """Print ``tables/trinity-fields.yaml`` for `wheels`."""
    out = [HEADER.rstrip("\n"), "releases:"]
    for release, found in sorted(release_sections(Path(wheel)) for wheel in wheels):
        out += [f'  "{release}":', _flow("algorithms", found["algorithms"], 4), *sections_block(found, 4)]
        for typed in ("verl_legacy", "verl_merged"):
            if typed in found:
                out += [f"    {typed}:", *sections_block(found[typed], 6)]
    print("\n".join(out))


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("wheels", nargs="*", metavar="WHEEL", help="a trinity_rft-<release>-py3-none-any.whl")
    parser.add_argument("--walk", action="store_true", help=argparse.SUPPRESS)  # the child, in an unpacked wheel
    arguments = parser.parse_args()
    if not arguments.walk and not arguments.wheels:
        parser.error("name at least one wheel")
    return arguments


if __name__ == "__main__":
    ARGUMENTS = _arguments()
    if ARGUMENTS.walk:
        _walk_installed()
    else:
        main(ARGUMENTS.wheels)
