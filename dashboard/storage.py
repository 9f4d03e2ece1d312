"""Static files for a deployment: WhiteNoise's compressed, content-hashed storage.

PatternFly's package ships stylesheets we do not serve (per-component and Sass-built ones)
whose relative references point at files outside it; Django's manifest storage refuses
the whole collectstatic over one of those. A reference that names no file is left as it
is written (the stylesheets we link resolve fully: each of their files gets its hash)."""

from __future__ import annotations

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticStorage(CompressedManifestStaticFilesStorage):
    def hashed_name(self, name, content=None, filename=None):
        try:
            return super().hashed_name(name, content, filename)
        except ValueError:  # "The file ... could not be found": not one we serve
            return name
