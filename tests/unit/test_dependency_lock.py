"""requirements.lock pins every dependency pyproject.toml names, with hashes, and the
environment the tests run in is the one it describes (`make install` installs from it)."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
EXTRAS = ("dashboard", "simcluster", "test")  # what `make install` installs


def _locked() -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) of every package the lock pins."""
    text = (ROOT / "requirements.lock").read_text().replace("\\\n", " ")
    found = {}
    for line in text.splitlines():
        pin = re.match(r"^([A-Za-z0-9_.\-]+)==(\S+)\s*(.*)$", line)
        if pin:
            name, version, rest = pin.groups()
            found[canonicalize_name(name)] = (version, re.findall(r"--hash=(sha256:\w+)", rest))
    return found


def _wanted() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    names = list(project["project"]["dependencies"])
    for extra in EXTRAS:
        names += project["project"]["optional-dependencies"][extra]
    names += project["build-system"]["requires"]
    return [Requirement(n) for n in names]


def test_it_pins_every_dependency_at_a_version_pyproject_allows():
    locked = _locked()
    for requirement in _wanted():
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{name} is not in requirements.lock: run `make lock`"
        version, _hashes = locked[name]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"requirements.lock has {name}=={version}, pyproject.toml asks "
            f"{requirement.specifier}: run `make lock`")


def test_every_pin_has_its_hashes():
    locked = _locked()
    assert len(locked) > 50  # the whole tree, not only the direct dependencies
    assert all(hashes for _version, hashes in locked.values()), [
        n for n, (_v, h) in locked.items() if not h]


def test_the_tests_run_on_the_locked_versions():
    mismatched = {}
    for name, (version, _hashes) in _locked().items():
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            mismatched[name] = (version, None)
            continue
        if installed != version:
            mismatched[name] = (version, installed)
    assert not mismatched, f"(locked, installed): {mismatched}: run `make install`"
