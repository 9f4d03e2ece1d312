"""The person's OpenShift access token, kept only in their server-side session, encrypted.

The session row (django_session) holds the token sealed with Fernet (AES-128-CBC and
HMAC-SHA256) under a key derived from SECRET_KEY (HKDF-SHA256): a copy of the database,
a backup or a log of its rows gives no usable `user:full` token without the key. A value
that does not open (tampered with, sealed under a key no longer configured, or a session
from before tokens were sealed) is no token: the person signs in again. SECRET_KEY_FALLBACKS
still open what older keys sealed, so rotating SECRET_KEY signs nobody out at once.

Expired sessions are deleted by `python manage.py clearsessions`, which the watcher runs
once a day (training/management/commands/runwatcher.py) and deploy/base runs as a CronJob.
"""

from __future__ import annotations

import base64
import time
from functools import lru_cache
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.http import HttpRequest

KEY = "openshift"
SEALED = "sealed_token"  # the field of KEY that holds the sealed token
_HKDF_INFO = b"odh-mpijob-dashboard session token v1"


def _fernet_key(secret: str) -> bytes:
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                   info=_HKDF_INFO).derive(secret.encode())
    return base64.urlsafe_b64encode(derived)


@lru_cache(maxsize=4)
def _fernet_for(secrets: tuple[str, ...]) -> MultiFernet:
    return MultiFernet([Fernet(_fernet_key(s)) for s in secrets])


def _fernet() -> MultiFernet:
    """Seals with SECRET_KEY; opens with it or any of SECRET_KEY_FALLBACKS."""
    fallbacks = tuple(getattr(settings, "SECRET_KEY_FALLBACKS", ()) or ())
    return _fernet_for((settings.SECRET_KEY, *fallbacks))


def seal(token: str) -> str:
    return _fernet().encrypt(token.encode()).decode("ascii")


def unseal(value: object) -> str:
    """The token a sealed value holds, or "" when it does not open."""
    if not isinstance(value, str) or not value:
        return ""
    try:
        return _fernet().decrypt(value.encode("ascii")).decode()
    except (InvalidToken, UnicodeError, ValueError):
        return ""


def session_data(token: str, expires_in: float | None, username: str,
                 groups: list[str]) -> dict[str, Any]:
    """What the session keeps under KEY for a sign-in (the token sealed)."""
    return {
        SEALED: seal(token),
        "expires_at": time.time() + expires_in if expires_in else None,
        "username": username,
        "groups": groups,
    }


def store(request: HttpRequest, token: str, expires_in: int | None, username: str,
          groups: list[str]) -> None:
    request.session[KEY] = session_data(token, expires_in, username, groups)


def _data(request: HttpRequest) -> dict[str, Any]:
    data = request.session.get(KEY)
    return data if isinstance(data, dict) else {}


def token_in(data: dict[str, Any]) -> str:
    """The token of session data kept under KEY ("" if none, or if it does not open)."""
    return unseal(data.get(SEALED)) if isinstance(data, dict) else ""


def token(request: HttpRequest) -> str:
    return token_in(_data(request))


def groups(request: HttpRequest) -> list[str]:
    return list(_data(request).get("groups") or [])


def has_live_token(request: HttpRequest) -> bool:
    data = _data(request)
    if not token_in(data):
        return False
    expires_at = data.get("expires_at")
    return expires_at is None or float(expires_at) > time.time()
