"""Everything kind-specific lives with its kind (odh/training/kinds/): no product module
elsewhere compares a job's kind with a kind's name, slug or constant; it asks the kind
(`JobKind`: creatable, runs_mpirun, lead_role, expected_replicas...)."""

from __future__ import annotations

import ast
from pathlib import Path

from odh.training.kinds import KINDS

ROOT = Path(__file__).resolve().parents[2]
CONSTANTS = {"MPIJOB", "PYTORCHJOB", "TFJOB", "TRAINJOB"}
NAMES = {n for k in KINDS.values() for n in (k.kind, k.slug, k.plural)}


def _names_a_kind(node: ast.AST) -> bool:
    if isinstance(node, ast.Name) and node.id in CONSTANTS:
        return True
    if isinstance(node, ast.Attribute):  # kinds.MPIJOB, MPIJOB.kind, MPIJOB.slug
        return node.attr in CONSTANTS or _names_a_kind(node.value)
    if isinstance(node, ast.Constant) and node.value in NAMES:
        return True
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_names_a_kind(e) for e in node.elts)
    return False


def comparisons_of_kinds(source: str) -> list[int]:
    """The lines of `source` that compare something with a kind's name or constant."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Compare)
            and any(_names_a_kind(side) for side in [node.left, *node.comparators])]


def test_the_check_finds_a_comparison():
    assert comparisons_of_kinds("if kind == MPIJOB: pass") == [1]
    assert comparisons_of_kinds("x = s.kind.slug != 'mpijob'") == [1]
    assert comparisons_of_kinds("ok = kind in (kinds.TRAINJOB, PYTORCHJOB)") == [1]
    assert comparisons_of_kinds("if manifest['kind'] != MPIJOB.kind: pass") == [1]
    assert comparisons_of_kinds("if kind.runs_mpirun: pass") == []


def test_no_module_outside_the_kinds_compares_kind_names():
    kinds = ROOT / "odh" / "training" / "kinds"
    found = []
    for top in ("odh", "training", "dashboard"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if kinds in path.parents or "migrations" in path.parts:
                continue
            found += [f"{path.relative_to(ROOT)}:{line}"
                      for line in comparisons_of_kinds(path.read_text())]
    assert not found, "ask the kind instead (odh/training/kinds/base.py): " + ", ".join(found)


# The public SDK names (`from odh.training import MPIJOB, MPIJobSpec`) are listed here.
FRONT_DOOR = ROOT / "odh" / "training" / "__init__.py"
# ... and the MPIJob's roles, choices and annotations are offered under the names people
# import (odh.training.spec); it imports no spec class.
OFFERS_KIND_NAMES = ROOT / "odh" / "training" / "spec.py"
SHARED = {"odh.training.kinds", "odh.training.kinds.base", "odh.training.kinds.jobspec"}
SPEC_CLASSES = {k.spec_model.spec_class.__name__ for k in KINDS.values() if k.spec_model}


def uses_of_a_kind(source: str, may_import_kind_modules: bool = False) -> list[int]:
    """The lines of `source` that name a kind's constant or spec class, or import from a
    kind's own module (anything under odh.training.kinds but the shared base)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module \
                and node.module.startswith("odh.training.kinds") and node.module not in SHARED \
                and not may_import_kind_modules:
            lines.append(node.lineno)
        named = (node.id if isinstance(node, ast.Name) else node.attr
                 if isinstance(node, ast.Attribute) else node.name
                 if isinstance(node, ast.alias) else None)
        if named in CONSTANTS | SPEC_CLASSES:
            lines.append(getattr(node, "lineno", 0))
    return sorted(set(lines))


def test_the_check_finds_a_kind_named():
    assert SPEC_CLASSES == {"MPIJobSpec", "TrainJobSpec"}
    assert uses_of_a_kind("from odh.training.kinds import MPIJOB") == [1]
    assert uses_of_a_kind("from odh.training.kinds.mpijob.model import EnvVar") == [1]
    assert uses_of_a_kind("spec = MPIJobSpec(name='x')") == [1]
    assert uses_of_a_kind("get(kinds.MPIJOB, ns, name)") == [1]
    assert uses_of_a_kind("from odh.training.kinds import JobKind, default_kind") == []
    assert uses_of_a_kind("spec = kind.new_spec(name='x')") == []


def test_no_module_outside_the_kinds_names_a_kind_or_its_spec_class():
    kinds = ROOT / "odh" / "training" / "kinds"
    found = []
    for top in ("odh", "training", "dashboard"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if kinds in path.parents or "migrations" in path.parts or path == FRONT_DOOR:
                continue
            found += [f"{path.relative_to(ROOT)}:{line}" for line in uses_of_a_kind(
                path.read_text(), may_import_kind_modules=path == OFFERS_KIND_NAMES)]
    assert not found, ("ask the registry and the kind instead (odh.training.kinds: "
                       "default_kind(), kind.new_spec(), kind.read_manifest()...): "
                       + ", ".join(found))


def test_the_command_line_keeps_no_table_by_kind():
    """`odh training create` asks the kind how it speaks of its jobs (JobKind.command_line:
    its own flags, its fields' flags and manifest paths): nothing in odh/training/cli is
    keyed by a kind's name, nor probes a spec's fields to tell its kind (hasattr)."""
    found = []
    for path in sorted((ROOT / "odh" / "training" / "cli").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            keyed = isinstance(node, ast.Dict) and any(
                isinstance(k, ast.Constant) and k.value in NAMES for k in node.keys)
            probes = isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "hasattr"
            if keyed or probes:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, "ask the kind (JobKind.command_line): " + ", ".join(found)
