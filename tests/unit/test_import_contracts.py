"""The borders between the parts are checked by import-linter in `make test` (contracts in
pyproject.toml); here, that the contracts name every part (a new module cannot slip past
them), that the roots stay small enough to show the parts, and that no product module needs
itself to be imported (no cycle at import time)."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _contracts() -> dict[str, dict]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return {c["name"]: c for c in project["tool"]["importlinter"]["contracts"]}


def test_every_part_of_training_but_the_views_and_urls_is_kept_from_the_views():
    contract = next(c for name, c in _contracts().items() if "imports the views" in name)
    parts = {f"training.{p.stem}" for p in (ROOT / "training").iterdir()
             if (p.suffix == ".py" and p.stem != "__init__")
             or (p.is_dir() and (p / "__init__.py").exists())}
    missing = parts - set(contract["source_modules"]) - {"training.views", "training.urls"}
    assert not missing, f"add {sorted(missing)} to the contract in pyproject.toml"
    assert contract["forbidden_modules"] == ["training.views"]


def _parts(package: Path) -> set[str]:
    return {p.stem for p in package.iterdir()
            if (p.suffix == ".py" and p.stem != "__init__")
            or (p.is_dir() and (p / "__init__.py").exists())}


def test_every_part_of_odh_training_sits_in_a_layer():
    contract = next(c for name, c in _contracts().items()
                    if name.startswith("odh.training in layers"))
    layered = {part.strip() for layer in contract["layers"] for part in layer.split(":")}
    missing = _parts(ROOT / "odh" / "training") - layered
    assert not missing, f"place {sorted(missing)} in a layer of the contract in pyproject.toml"


def test_the_roots_show_the_parts():
    """At most 15 modules at the root of training/ and 20 at the root of odh/training/
    (issue 22): past that, a module belongs in one of the parts."""
    def modules(folder: str) -> list[str]:
        return sorted(p.name for p in (ROOT / folder).glob("*.py"))
    assert len(modules("training")) <= 15, modules("training")
    assert len(modules("odh/training")) <= 20, modules("odh/training")
    # and every part below them, and simcluster's (odh/training's root keeps the SDK's
    # public modules: odh.training.errors, .sdk...)
    for top in ("odh", "training", "simcluster", "dashboard"):
        for folder in sorted((ROOT / top).rglob("__init__.py")):
            part = str(folder.parent.relative_to(ROOT))
            if part != "odh/training" and "migrations" not in part:
                assert len(modules(part)) <= 15, f"{part}: {modules(part)}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_at_import_time(path: Path, known: set[str]) -> set[str]:
    """The product modules `path` imports when it is imported: its top-level imports (those
    in a function run later; those under `if TYPE_CHECKING:` never)."""
    found: set[str] = set()

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.If):
                if "TYPE_CHECKING" not in ast.unparse(node.test):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name in known)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    if f"{node.module}.{alias.name}" in known:
                        found.add(f"{node.module}.{alias.name}")
                    elif node.module in known:
                        found.add(node.module)

    visit(ast.parse(path.read_text()).body)
    return found


def test_no_product_module_is_part_of_an_import_cycle():
    files = [p for top in ("odh", "training", "dashboard") for p in (ROOT / top).rglob("*.py")
             if "migrations" not in p.parts]
    names = {_module_name(p): p for p in files}
    graph = {name: _imported_at_import_time(path, set(names)) - {name}
             for name, path in names.items()}

    # Tarjan's strongly connected components: a component of more than one module is a cycle
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    assert not cycles, f"import cycles: {cycles}"


def test_make_test_checks_them():
    assert "lint-imports" in (ROOT / "Makefile").read_text().split("\ntest:", 1)[1]
    assert {"odh", "simcluster"} <= {m for c in _contracts().values()
                                     for m in c.get("source_modules", [])}
