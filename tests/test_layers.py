"""The layers of the package, as docs/api.md and each package's docstring state them: every import in solver/ goes
to a layer before its own (or to a module before it in its own package), none back."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import solver

SOLVER = Path(__file__).resolve().parent.parent / "solver"
LAYERS = ("tables", "rules", "query", "results", "memory", "model", "clock", "solve", "explain", "maps", "cluster",
          "calibrate", "trinity", "api", "render", "cli")
"""docs/api.md's order; `tables`, `cluster`, `trinity`, `render` and `cli` are packages."""
PACKAGES = {
    "tables": ("text", "bounds", "peft_names", "peft_match", "rope_types", "schema", "inputs", "reading", "catalog",
               "loaders", "model_config", "fleets"),
    "cluster": ("options", "model", "widen", "placements", "reasons", "greedy", "search", "buy"),
    "trinity": ("keys", "interpolation", "reader", "config", "checks", "plan_keys", "settings", "fragment",
                "patch"),
    "render": ("styles", "layout", "phrases", "tables", "schema", "summary", "ranking", "verdict", "answers",
               "cluster", "memory", "maps"),
    "cli": ("status", "output", "atomic", "paths", "argtypes", "parser", "options", "catalogs", "notes",
            "trinity_options", "planner", "tables", "cluster", "calibrate", "memory", "maps", "examples"),
}
"""Each package's modules in the order its __init__ docstring states (each uses only those before it)."""


def _imports(path: Path) -> set[str]:
    """The solver modules `path` imports, wherever in it (in functions too, and for type checking only); a name
    from ``solver`` itself counts as the module it comes from (`solver._EXPORTS`), a module as itself (``from solver
    import clock``, ``from solver.cluster import buy``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "solver":
            found.update(f"solver.{alias.name}" if alias.name in solver._MODULES else solver._EXPORTS[alias.name]
                         for alias in node.names if alias.name != "__version__")
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("solver."):
            package = SOLVER.joinpath(*node.module.split(".")[1:])
            found.update(f"{node.module}.{alias.name}" if (package / f"{alias.name}.py").is_file() else node.module
                         for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("solver."))
    return found


def _place(module: str) -> tuple[int, int]:
    """(layer, position in its package) of ``solver.X`` or ``solver.X.Y`` (a package's __init__ comes last)."""
    parts = module.split(".")[1:]
    inner = PACKAGES.get(parts[0], ())
    return LAYERS.index(parts[0]), inner.index(parts[1]) if len(parts) > 1 else len(inner)


MODULES = sorted(path for path in SOLVER.rglob("*.py") if path.parent != SOLVER or path.stem not in ("__init__",
                                                                                                     "__main__"))


@pytest.mark.parametrize("path", MODULES, ids=lambda path: str(path.relative_to(SOLVER)))
def test_every_import_goes_to_an_earlier_layer_or_module(path: Path):
    parts = path.relative_to(SOLVER).with_suffix("").parts
    own = "solver." + ".".join(parts if parts[-1] != "__init__" else parts[:-1])
    later = [module for module in _imports(path) if _place(module) >= _place(own) and module != own]
    assert later == [], f"{own} imports {later}"


def test_the_packages_and_layers_name_every_module():
    assert {path.stem for path in SOLVER.glob("*.py")} - {"__init__", "__main__"} | set(PACKAGES) == set(LAYERS)
    for package, modules in PACKAGES.items():
        assert {path.stem for path in (SOLVER / package).glob("*.py")} - {"__init__"} == set(modules), package
        docstring = ast.get_docstring(ast.parse((SOLVER / package / "__init__.py").read_text(encoding="utf-8")))
        assert docstring is not None and all(f"`{name}`" in docstring or f" {name}," in docstring
                                             for name in modules), package


def test_the_trinity_key_paths_solver_query_holds_are_spelled_there_alone():
    # solver.query keeps the key paths TrinityConfig and solver.api need (so that annotations resolve without
    # ruamel); solver.trinity imports them, as a path or as its dotted key, rather than spelling them again.
    paths = {solver.query.ACTOR_ROLLOUT_REF, solver.query.TRAIN_BATCH_PATH, solver.query.NODE_SIZE_PATH,
             *solver.query.ROLE_TOKEN_BUDGETS}
    keys = {".".join(path) for path in paths}
    spelled = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            words = (tuple(getattr(element, "value", None) for element in node.elts) if isinstance(node, ast.Tuple)
                     else None)
            if path.name != "query.py" and (words in paths or isinstance(node, ast.Constant) and node.value in keys):
                spelled.append(f"{path.relative_to(SOLVER)}:{node.lineno}")
    assert spelled == []
