"""The Containerfile cannot be built here (no container engine), so it is read: its stages,
the files it copies exist in a clean checkout and are not ignored, and what it runs
matches the project (collectstatic into STATIC_ROOT, npm ci from the lock file, daphne on
8080, a non-root user) and the manifests in deploy/."""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import subprocess
import sys

from tests.deploy import manifests as m

CONTAINERFILE = m.ROOT / "Containerfile"
IGNORE = m.ROOT / ".dockerignore"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    out, pending = [], ""
    for line in CONTAINERFILE.read_text().splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        full = (pending + stripped).strip()
        pending = ""
        keyword, _, args = full.partition(" ")
        out.append((keyword.upper(), args.strip()))
    assert not pending, "the Containerfile ends inside a continued line"
    return out


def stages() -> list[list[tuple[str, str]]]:
    result: list[list[tuple[str, str]]] = []
    for keyword, args in instructions():
        if keyword == "FROM":
            result.append([])
        assert result, "an instruction before the first FROM"
        result[-1].append((keyword, args))
    return result


def tracked_files() -> list[str]:
    """What a fresh clone has (CI builds from one): git's index plus what is new here."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                            cwd=m.ROOT, capture_output=True, text=True, check=True).stdout
    return [p for p in listed.splitlines() if (m.ROOT / p).exists()]


def ignored(path: str, patterns: list[str]) -> bool:
    parts = path.split("/")
    return any(fnmatch.fnmatch(path, p) or any(fnmatch.fnmatch(part, p) for part in parts)
               for p in patterns)


def test_two_stages_on_ubi9():
    (assets, app) = stages()
    assert assets[0] == ("FROM", "registry.access.redhat.com/ubi9/nodejs-20 AS assets")
    assert app[0] == ("FROM", "registry.access.redhat.com/ubi9/python-311")


def test_every_copied_source_exists_and_is_not_ignored():
    patterns = [line.strip() for line in IGNORE.read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    files = tracked_files()
    copies = [args for stage in stages() for keyword, args in stage if keyword == "COPY"]
    assert copies
    for args in copies:
        words = shlex.split(args)
        flags = [w for w in words if w.startswith("--")]
        sources = [w for w in words if not w.startswith("--")][:-1]
        assert any(f.startswith("--chown=1001:0") for f in flags), args  # group 0 owns
        if any(f.startswith("--from=") for f in flags):
            continue
        for source in sources:
            path = source.rstrip("/")
            present = [f for f in files if f == path or f.startswith(path + "/")]
            assert present, f"COPY {source}: not in a clean checkout"
            assert not ignored(path, patterns), f"COPY {source}: excluded by .dockerignore"
    # what the image must not carry
    for path in (".venv", "node_modules", "db.sqlite3", ".secret-key", "simcluster", "tests",
                 ".git"):
        assert ignored(path, patterns), path


def test_assets_come_from_the_lock_file():
    (assets, app) = stages()
    assets_text = dict(assets)
    assert "package.json package-lock.json" in assets_text["COPY"]
    assert assets_text["RUN"].startswith("npm ci ")
    lock = json.loads((m.ROOT / "package-lock.json").read_text())
    assert "node_modules/@patternfly/patternfly" in lock["packages"]
    assert "node_modules/plotly.js-basic-dist-min" in lock["packages"]
    copied = [a for k, a in app if k == "COPY" and "--from=assets" in a]
    assert copied == ["--from=assets --chown=1001:0 /opt/app-root/src/node_modules/@patternfly/"
                      "patternfly node_modules/@patternfly/patternfly",
                      "--from=assets --chown=1001:0 /opt/app-root/src/node_modules/"
                      "plotly.js-basic-dist-min node_modules/plotly.js-basic-dist-min"]
    # where settings.py looks for them
    settings = (m.ROOT / "dashboard" / "settings.py").read_text()
    assert '"node_modules" / "@patternfly" / "patternfly"' in settings
    assert '"node_modules" / "plotly.js-basic-dist-min"' in settings


def test_the_application_stage():
    (_, app) = stages()
    runs = [a for k, a in app if k == "RUN"]
    env = " ".join(a for k, a in app if k == "ENV")
    assert "STATIC_ROOT=/opt/app-root/staticfiles" in env
    assert any("pip install -r /tmp/requirements.txt" in r and "tomllib" in r for r in runs)
    assert any("pip install --no-deps -e ." in r for r in runs)
    collect = next(r for r in runs if "collectstatic" in r)
    assert "python manage.py collectstatic --noinput" in collect
    assert "chmod -R g=u" in collect  # arbitrary UIDs of group 0
    users = [a for k, a in app if k == "USER"]
    assert users and users[-1] == "1001"
    assert ("EXPOSE", "8080") in app
    (cmd,) = [json.loads(a) for k, a in app if k == "CMD"]
    assert cmd == ["daphne", "-b", "0.0.0.0", "-p", "8080", "dashboard.asgi:application"]
    assert (m.ROOT / "dashboard" / "asgi.py").exists()
    # the manifests run the same command and the same management commands
    (web,) = m.load("base/web-deployment.yaml")
    assert web["spec"]["template"]["spec"]["containers"][0]["command"] == cmd
    commands = m.ROOT / "training" / "management" / "commands"
    assert (commands / "runwatcher.py").exists()
    # everything the settings import at start is installed by the requirements step: run
    # its python -c on pyproject.toml (the SDK's dependencies and the extra `dashboard`)
    step = next(r for r in runs if "tomllib" in r)
    argv = shlex.split(step.split(">", 1)[0])
    assert argv[:2] == ["python", "-c"]
    listed = subprocess.run([sys.executable, "-c", argv[2]], cwd=m.ROOT, capture_output=True,
                            text=True, check=True).stdout.split()
    names = {re.split(r"[<>=\[;]", r, maxsplit=1)[0].lower() for r in listed}
    assert {"kubernetes", "pyyaml", "django", "daphne", "channels-redis", "psycopg",
            "whitenoise"} <= names
