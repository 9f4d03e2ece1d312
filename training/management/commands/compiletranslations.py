"""`manage.py compiletranslations`: locale/*/LC_MESSAGES/django.po into the .mo files Django
reads. Django's own compilemessages needs GNU gettext's msgfmt on the machine; this needs
only polib (a dependency of the dashboard), so `make install` and the container build
compile the catalogues wherever Python runs. A .mo newer than its .po is left alone."""

from __future__ import annotations

from pathlib import Path

import polib
from django.conf import settings
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Compile the translation catalogues (locale/*/LC_MESSAGES/django.po)."

    def handle(self, *args, **options) -> None:
        compiled = 0
        for root in settings.LOCALE_PATHS:
            for source in sorted(Path(root).glob("*/LC_MESSAGES/django.po")):
                target = source.with_suffix(".mo")
                if target.exists() and target.stat().st_mtime >= source.stat().st_mtime:
                    continue
                polib.pofile(str(source)).save_as_mofile(str(target))
                compiled += 1
        self.stdout.write(f"{compiled} catalogue(s) compiled")
