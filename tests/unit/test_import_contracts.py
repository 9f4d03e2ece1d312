"""The borders between the parts are checked by import-linter in `make test` (contracts in
pyproject.toml); here, that the contract on the views names every part of `training`, so a
new module cannot slip past it."""

from __future__ import annotations

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


def test_make_test_checks_them():
    assert "lint-imports" in (ROOT / "Makefile").read_text().split("\ntest:", 1)[1]
    assert {"odh", "simcluster"} <= {m for c in _contracts().values()
                                     for m in c["source_modules"]}
