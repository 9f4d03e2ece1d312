from __future__ import annotations

from django.urls import include, path

urlpatterns = [
    path("", include("training.urls")),
]

# a form too big to read (a huge YAML paste) or a malformed request
handler400 = "training.views.middleware.bad_request"
handler403 = "training.views.errors.forbidden"
handler404 = "training.views.errors.not_found"
handler500 = "training.views.errors.server_error"
