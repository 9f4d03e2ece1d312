"""The hub renders each push in the languages its viewers read (training/live/hub/languages.py)."""

from __future__ import annotations

from django.utils import translation

from training.live.hub.groups import job_group, ns_group
from training.live.hub.languages import (
    TTL_SECONDS,
    ViewerLanguages,
    in_viewer_language,
    language_of_scope,
    localized,
    set_viewer_language,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_it_always_renders_in_the_sites_language_and_in_those_named_lately():
    clock = Clock()
    languages = ViewerLanguages(clock)
    assert languages.active() == ["en"]
    languages.seen("ja")
    languages.seen("fr")
    assert languages.active() == ["en", "fr", "ja"]
    clock.now += TTL_SECONDS / 2
    languages.seen("fr")  # renewed
    clock.now += TTL_SECONDS / 2 + 1
    assert languages.active() == ["en", "fr"]  # nobody reads Japanese any more


def test_it_ignores_languages_it_does_not_ship():
    languages = ViewerLanguages(Clock())
    for code in ("de", "", "x" * 500, "en"):
        languages.seen(code)
    assert languages.active() == ["en"]


def test_translated_groups_never_collide_with_a_jobs_own():
    assert localized(ns_group("team-nlp"), "en") == "ns.team-nlp"
    assert localized(ns_group("team-nlp"), "ja") == "ns.team-nlp_ja"
    # a job may be called "bert.ja" (a DNS subdomain), never "bert_ja"
    assert localized(job_group("team-nlp", "bert"), "ja") != job_group("team-nlp", "bert.ja")
    assert len(localized(job_group("a" * 63, "b" * 63), "zh-hans")) < 100


def test_a_socket_reads_its_language_from_the_cookie_then_accept_language():
    def scope(cookie: str = "", accept: str = "") -> dict:
        return {"cookies": {"dashboard_language": cookie} if cookie else {},
                "headers": [(b"accept-language", accept.encode())]}

    assert language_of_scope(scope(accept="ja-JP,ja;q=0.9")) == "ja"
    assert language_of_scope(scope(accept="zh-CN")) == "zh-hans"
    assert language_of_scope(scope(cookie="fr", accept="ja")) == "fr"
    assert language_of_scope(scope(accept="de-DE")) == "en"


def test_a_socket_speaks_its_viewers_language():
    set_viewer_language("ko")
    try:
        with in_viewer_language():
            assert translation.get_language() == "ko"
            assert translation.gettext("Training jobs") != "Training jobs"
            assert localized(ns_group("research")) == "ns.research_ko"
    finally:
        set_viewer_language("")


def test_it_renders_a_group_only_in_the_languages_of_those_who_watch_it():
    clock = Clock()
    languages = ViewerLanguages(clock)
    nlp, bert = ns_group("team-nlp"), job_group("team-nlp", "bert")
    assert languages.for_group(nlp) == []  # nobody watches: nothing to render
    assert languages.seen("en", [nlp]) == [(nlp, "en")]  # watched anew
    assert languages.seen("ja", [nlp, bert]) == [(nlp, "ja"), (bert, "ja")]
    assert languages.seen("en", [nlp]) == []  # a renewal
    assert languages.for_group(nlp) == ["en", "ja"]
    assert languages.for_group(bert) == ["ja"]
    clock.now += TTL_SECONDS / 2
    languages.seen("ja", [bert])
    clock.now += TTL_SECONDS / 2 + 1
    assert languages.for_group(nlp) == []  # not renewed: its viewers are gone
    assert languages.for_group(bert) == ["ja"]
    assert languages.seen("en", [nlp]) == [(nlp, "en")]  # watched anew again


def test_a_renewal_naming_no_group_counts_for_every_group():
    """As a web process of an older release sends it."""
    languages = ViewerLanguages(Clock())
    languages.seen("fr")
    assert languages.for_group(ns_group("research")) == ["fr"]
