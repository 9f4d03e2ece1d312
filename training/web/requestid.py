"""The current request's id, for log lines (importable before Django is set up)."""

from __future__ import annotations

import contextvars
import logging

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")


def _id_for(record: logging.LogRecord) -> str:
    # django.request logs a response after the middleware has finished with the request; it
    # passes the request along, and the request remembers its id.
    request = getattr(record, "request", None)
    return getattr(request, "request_id", None) or request_id.get()


class RequestIdFilter(logging.Filter):
    """Puts the current request id on every log record a handler writes."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _id_for(record)
        return True


def install_record_factory() -> None:
    """Give every log record a request id from the start, whichever handler sees it."""
    previous = logging.getLogRecordFactory()
    if getattr(previous, "adds_request_id", False):
        return

    def factory(*args, **kwargs) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        record.request_id = request_id.get()
        return record

    factory.adds_request_id = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)


class ClientErrorsInOneLine(logging.Filter):
    """django.request logs a 403 (PermissionDenied) or 400 with the exception's traceback:
    the person's request was refused, nothing broke, so one line says it (5xx keep theirs)."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and status < 500:
            record.exc_info = None
            record.exc_text = None
        return True
