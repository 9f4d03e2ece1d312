"""The shipped catalogues are complete: every language of settings.LANGUAGES has one, every
entry translated (none fuzzy), its placeholders, tags and newlines kept, and its strings
exactly those the code and templates mark today (a string added without its translations
fails here: `make messages`, then scripts/translate.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import override_settings
from django.utils import translation

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = [code for code, _name in settings.LANGUAGES if code != settings.LANGUAGE_CODE]

_spec = importlib.util.spec_from_file_location("translate", ROOT / "scripts" / "translate.py")
translate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(translate)


def catalogue(code: str) -> polib.POFile:
    return polib.pofile(str(ROOT / "locale" / translation.to_locale(code) / "LC_MESSAGES"
                            / "django.po"))


def test_it_ships_the_languages_of_the_openshift_console():
    assert set(SHIPPED) == {"es", "fr", "ja", "ko", "zh-hans"}


@pytest.mark.parametrize("code", SHIPPED)
def test_it_translates_every_entry_keeping_placeholders_and_tags(code):
    po = catalogue(code)
    left = [e.msgid for e in translate.untranslated(po)]
    assert left == [], f"{len(left)} untranslated in {code}, e.g. {left[:5]}"
    broken = {e.msgid: translate.entry_problems(e) for e in po.translated_entries()
              if translate.entry_problems(e)}
    assert broken == {}


def test_the_placeholder_check_refuses_a_lost_or_renamed_placeholder():
    assert translate.problems("Job %(name)s failed", "Tâche %(nom)s en échec") != []
    assert translate.problems("<strong>%(n)d</strong> left", "%(n)d restants") != []
    assert translate.problems("Job %(name)s failed", "La tâche %(name)s a échoué") == []


@pytest.mark.parametrize("code", SHIPPED)
def test_it_is_compiled_and_used(code):
    with translation.override(code):
        assert translation.gettext("Training jobs") != "Training jobs"


IGNORED = {"locale", ".venv", "node_modules", "simcluster", "tests", "benchmarks", "staticfiles",
           "screenshots", ".git"}


def test_the_catalogues_hold_exactly_the_strings_marked_in_the_code(tmp_path, monkeypatch):
    """makemessages over the sources (as `make messages` reads them) into an empty folder
    gives the strings marked today; each catalogue must hold the same ones (none missing,
    none left over). It runs in a folder of links to the sources: run in the repository,
    makemessages would write into its locale/."""
    sources = tmp_path / "sources"
    sources.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in IGNORED:
            (sources / entry.name).symlink_to(entry)
    monkeypatch.chdir(sources)
    with override_settings(LOCALE_PATHS=[str(tmp_path / "out")]):
        call_command("makemessages", locale=["fr"], verbosity=0, no_obsolete=True,
                     symlinks=True, ignore_patterns=sorted(IGNORED))
    fresh = polib.pofile(str(tmp_path / "out" / "fr" / "LC_MESSAGES" / "django.po"))
    wanted = {(e.msgctxt, e.msgid) for e in fresh if not e.obsolete}
    assert len(wanted) > 1000
    for code in SHIPPED:
        held = {(e.msgctxt, e.msgid) for e in catalogue(code) if not e.obsolete}
        missing, extra = sorted(wanted - held), sorted(held - wanted)
        assert (missing, extra) == ([], []), (
            f"{code}: run `make messages` and translate {len(missing)} new string(s) "
            f"(e.g. {missing[:3]}); {len(extra)} no longer used")
