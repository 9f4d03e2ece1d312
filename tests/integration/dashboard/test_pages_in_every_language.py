"""Every page, in every shipped language, has no English left from the catalogue: no text
and no label a person reads (text, aria-label, title, placeholder, alt, the sentences in
data-* attributes the scripts show) is a catalogue string still in English. Names and
data (job names, YAML, log lines, Kubernetes' own event messages) are not in the
catalogue, so they are allowed. The troubleshooting guide is documentation and, like
OpenShift's own documentation, in English: its pages are left out (README, Translations).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import translation

from tests.integration.dashboard.wizard.wizard_flow import start, step_url

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = [code for code, _name in settings.LANGUAGES if code != settings.LANGUAGE_CODE]
PLACEHOLDER = re.compile(r"%\(\w+\)[sd]|%[sd]")
READ_ATTRIBUTES = {"aria-label", "title", "placeholder", "alt"}
JOB = ["team-nlp", "mpijob", "bert-large-pretrain"]
TABS = ("overview", "topology", "logs", "events", "metrics", "artifacts", "configuration")


def _pattern(msgid: str) -> re.Pattern | None:
    """A regex matching the English text as a page shows it (placeholders filled)."""
    text = " ".join(msgid.split())
    if len(re.findall(r"[A-Za-z]{2,}", PLACEHOLDER.sub("", text))) < 2:
        return None  # a word or a unit ("GPU", "%(n)s Gi"): may rightly read the same
    parts = PLACEHOLDER.split(text)
    return re.compile(".+?".join(re.escape(p) for p in parts))


def english_left(code: str) -> list[re.Pattern]:
    po = polib.pofile(str(ROOT / "locale" / translation.to_locale(code) / "LC_MESSAGES"
                          / "django.po"))
    found = []
    for entry in po.translated_entries():
        said = entry.msgstr or entry.msgstr_plural.get(0, "")
        for english in filter(None, (entry.msgid, entry.msgid_plural)):
            if said.strip() != english.strip() and (pattern := _pattern(english)):
                found.append(pattern)
    return found


class _ReadText(HTMLParser):
    """The strings of a page a person reads or hears."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "pre", "code"):
            self._skip += 1
        for name, value in attrs:
            if value and (name in READ_ATTRIBUTES or (name.startswith("data-") and " " in value)):
                self.texts.append(" ".join(value.split()))

    def handle_endtag(self, tag):
        if tag in ("script", "style", "pre", "code") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        text = " ".join(data.split())
        if text and not self._skip:
            self.texts.append(text)


def untranslated(html: str, patterns: list[re.Pattern]) -> list[str]:
    reader = _ReadText()
    reader.feed(html)
    return sorted({text for text in reader.texts for p in patterns if p.fullmatch(text)})


@pytest.fixture(scope="module")
def leftovers():
    return {code: english_left(code) for code in SHIPPED}


def _pages(client, who: str) -> dict[str, str]:
    job = reverse("training-job-detail", args=JOB)
    pages = {"list": reverse("training-job-list"),
             "list, failed": reverse("training-job-list") + "?status=Failed",
             "new job": reverse("training-job-new"),
             "compare": reverse("training-job-compare") + "?job=team-nlp/mpijob/gpt2-finetune"
                        "&job=team-nlp/mpijob/bert-large-pretrain",
             "missing job": reverse("training-job-detail",
                                    args=["team-nlp", "mpijob", "no-such-job"])}
    if who in ("alice", "admin"):
        pages.update({f"job, {tab}": f"{job}?tab={tab}" for tab in TABS})
        pages["delete"] = reverse("training-job-delete", args=JOB)
        pages["wizard, configuration"] = step_url(start(client), "configuration")
    if who == "admin":
        pages["cluster"] = reverse("training-cluster-overview")
        pages["audit"] = reverse("training-cluster-audit")
        pages["queues"] = reverse("training-cluster-queues")
    return pages


def _check(client, leftovers, who: str, code: str) -> None:
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = code
    found = {}
    for name, url in _pages(client, who).items():
        response = client.get(url)
        assert response.status_code in (200, 403, 404), (name, response.status_code)
        assert response.headers["Content-Language"] == code
        if left := untranslated(response.content.decode(), leftovers[code]):
            found[name] = left
    assert found == {}


@pytest.mark.parametrize("code", SHIPPED)
def test_it_shows_alice_every_page_in_her_language(alice, leftovers, code):
    _check(alice, leftovers, "alice", code)


@pytest.mark.parametrize("code", SHIPPED)
def test_it_shows_the_admin_the_cluster_pages_in_their_language(admin, leftovers, code):
    _check(admin, leftovers, "admin", code)


@pytest.mark.parametrize("code", ["ja", "fr"])
def test_it_shows_charlie_the_empty_pages_in_his_language(charlie, leftovers, code):
    _check(charlie, leftovers, "charlie", code)


def test_the_detector_finds_english_left_in_a_page(leftovers):
    page = '<p>Training jobs</p><button aria-label="Sign out">x</button>'
    assert untranslated(page, leftovers["fr"]) == ["Sign out", "Training jobs"]


def test_accept_language_chooses_and_zh_cn_means_simplified_chinese(alice):
    response = alice.get(reverse("training-job-list"), HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    assert response.headers["Content-Language"] == "zh-hans"
    with translation.override("zh-hans"):
        assert translation.gettext("Training jobs") in response.content.decode()
