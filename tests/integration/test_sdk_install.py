"""`pip install .` into a fresh virtual environment gives the SDK and the `odh` command with
only what they need (the kubernetes client, PyYAML, requests): no Django, Channels, daphne
or Plotly. Then the installed command talks to a real simcluster."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD_ONLY = ("django", "channels", "daphne", "plotly", "channels-redis", "whitenoise",
                  "psycopg", "authlib", "django-htmx", "markdown", "prometheus-client")
SKIPPED = shutil.ignore_patterns(".venv", "node_modules", ".git", ".simcluster", "staticfiles",
                                 "__pycache__", "build", "*.egg-info", ".ruff_cache")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("sdk-install")
    source = base / "source"  # a copy, so the build leaves nothing in the checkout
    shutil.copytree(ROOT, source, ignore=SKIPPED)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    done = subprocess.run([str(venv / "bin" / "pip"), "install", "-q",
                           "--disable-pip-version-check", str(source)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return venv


# One test: the install is the cost (20-30 s); split in several, the test workers would
# each make it (their module fixtures are their own).
def test_it_installs_alone_imports_without_django_and_lists_jobs(installed, simcluster):
    _it_pulls_only_what_the_sdk_needs(installed)
    _the_sdk_imports_without_django(installed)
    _the_installed_odh_command_lists_jobs_on_simcluster(installed, simcluster)


def _it_pulls_only_what_the_sdk_needs(installed):
    listed = subprocess.run([str(installed / "bin" / "pip"), "list", "--format=freeze",
                             "--disable-pip-version-check"],
                            capture_output=True, text=True, check=True, timeout=120)
    names = {line.split("==")[0].lower() for line in listed.stdout.splitlines()}
    assert {"kubernetes", "pyyaml", "requests", "odh-mpijob-dashboard"} <= names
    assert not names & set(DASHBOARD_ONLY), sorted(names & set(DASHBOARD_ONLY))
    assert "tqdm" not in names  # wait_for_completion's bar uses it only where installed


def _the_sdk_imports_without_django(installed):
    script = ("import sys\n"
              "from odh.training import MPIJob, AsyncMPIJob, ResourceSpec, JobStatus, "
              "JobFailedError, ValidationError\n"
              "MPIJob(name='x', image='i:1', command=['python', 't.py']).to_yaml()\n"
              "assert 'django' not in sys.modules\n"
              "from odh.training.jobs.notebook import choose\n"
              "assert choose(True) == 'text', 'no tqdm here: plain lines'\n"
              "try:\n    import django\nexcept ImportError:\n    print('no django')\n")
    done = subprocess.run([str(installed / "bin" / "python"), "-c", script],
                          capture_output=True, text=True, timeout=120, cwd=installed)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "no django\n"


def _the_installed_odh_command_lists_jobs_on_simcluster(installed, simcluster):
    env = {**{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")},
           "KUBECONFIG": str(simcluster.kubeconfig("alice"))}
    done = subprocess.run([str(installed / "bin" / "odh"), "training", "list", "mpijob"],
                          capture_output=True, text=True, timeout=120, env=env, cwd=installed)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(("NAME ", "No training jobs found."))
    alias = subprocess.run([str(installed / "bin" / "odh-training"), "list"],
                           capture_output=True, text=True, timeout=120, env=env, cwd=installed)
    # the same jobs (their ages move on between the two runs)
    def jobs(text: str) -> str:
        return re.sub(r"\d+[dhms]( \d+[hms])* ago", "", text)

    assert alias.returncode == 0 and jobs(alias.stdout) == jobs(done.stdout)
