from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TrainingConfig(AppConfig):
    name = "training"
    verbose_name = _("Training jobs")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from training.web.requestid import install_record_factory
        install_record_factory()

        # odh.training's messages (validation, resource checks) in the person's language
        from django.utils.translation import gettext, ngettext

        from odh.training.i18n import set_translator
        set_translator(gettext, ngettext)
