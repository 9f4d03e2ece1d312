"""What a browser downloads: HTML and JSON compressed; in a deployment (collectstatic into
STATIC_ROOT) static files named by their content's hash, pre-compressed, kept for a year."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client, override_settings
from django.urls import reverse

ROOT = Path(__file__).resolve().parents[3]
DEPLOYED = {"default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
            "staticfiles": {"BACKEND": "dashboard.storage.StaticStorage"}}


@pytest.fixture(scope="module")
def static_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("static")
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"],
                   cwd=ROOT, check=True, env=dict(os.environ, STATIC_ROOT=str(root),
                                                  SECRET_KEY="collectstatic-only"))
    return root


def test_pages_are_sent_compressed(alice):
    r = alice.get(reverse("training-job-list"), HTTP_ACCEPT_ENCODING="gzip, br")
    assert r.status_code == 200 and r["Content-Encoding"] == "gzip"


def test_a_deployment_sends_hashed_precompressed_files_kept_for_a_year(static_root, db):
    with override_settings(STATIC_ROOT=str(static_root), STORAGES=DEPLOYED):
        browser = Client()
        page = browser.get(reverse("training-signed-out")).content.decode()
        css = re.search(r'href="(/static/css/dashboard\.[0-9a-f]{12}\.css)"', page)
        assert css, "the stylesheet's address carries its hash"
        r = browser.get(css.group(1), HTTP_ACCEPT_ENCODING="gzip")
        assert r.status_code == 200
        assert r["Content-Encoding"] == "gzip"
        max_age = int(re.search(r"max-age=(\d+)", r["Cache-Control"]).group(1))
        assert max_age >= 365 * 24 * 3600 and "immutable" in r["Cache-Control"]
        assert re.search(r'src="/static/js/theme\.[0-9a-f]{12}\.js"', page)


def test_streamed_downloads_are_sent_as_they_are(admin):
    """Django compresses an async stream chunk by chunk (separate gzip members, of which
    browsers read the first): the audit CSV and log downloads are not compressed."""
    r = admin.get(reverse("training-cluster-audit-export"), HTTP_ACCEPT_ENCODING="gzip")
    assert r.status_code == 200 and r.streaming
    assert "Content-Encoding" not in r
    assert b"".join(r.streaming_content).startswith(b"time,")
