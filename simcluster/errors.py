"""API errors as the real API server writes them: `Status` objects with its wording."""

from __future__ import annotations

from typing import Any

from simcluster.placement.resources import ResourceType


class ApiError(Exception):
    """An error answer. `status` is the `Status` object sent to the client."""

    def __init__(self, code: int, reason: str, message: str, details: dict | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    @property
    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:
            body["details"] = self.details
        return body


def _details(rt: ResourceType | None, name: str | None, **more: Any) -> dict[str, Any]:
    d: dict[str, Any] = {}
    if name:
        d["name"] = name
    if rt is not None:
        if rt.group:
            d["group"] = rt.group
        d["kind"] = rt.plural
    d.update(more)
    return d


def status_details(rt: ResourceType, name: str, **more: Any) -> dict[str, Any]:
    return _details(rt, name, **more)


def not_found(rt: ResourceType, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{rt.qualified} "{name}" not found', _details(rt, name))


def namespace_not_found(name: str) -> ApiError:
    return ApiError(404, "NotFound", f'namespaces "{name}" not found',
                    {"name": name, "kind": "namespaces"})


def already_exists(rt: ResourceType, name: str) -> ApiError:
    return ApiError(409, "AlreadyExists", f'{rt.qualified} "{name}" already exists',
                    _details(rt, name))


def conflict(rt: ResourceType, name: str) -> ApiError:
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {rt.qualified} "{name}": the object has been '
        "modified; please apply your changes to the latest version and try again",
        _details(rt, name),
    )


def invalid(rt: ResourceType, kind: str, name: str, causes: list[dict[str, str]]) -> ApiError:
    """422 with field causes; message as the API server joins them."""
    parts = [f"{c['field']}: {c['message']}" if c.get("field") else c["message"] for c in causes]
    joined = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    return ApiError(
        422,
        "Invalid",
        f'{kind}.{rt.group or ""}'.rstrip(".") + f' "{name}" is invalid: {joined}',
        _invalid_details(rt, kind, name, causes),
    )


def _invalid_details(rt: ResourceType, kind: str, name: str,
                     causes: list[dict[str, str]]) -> dict[str, Any]:
    """NewInvalid's details name the Kind ("MPIJob"), not the plural the other errors use."""
    d: dict[str, Any] = {}
    if name:
        d["name"] = name
    if rt.group:
        d["group"] = rt.group
    d["kind"] = kind
    d["causes"] = causes
    return d


def field_cause(field: str, message: str, reason: str = "FieldValueInvalid") -> dict[str, str]:
    return {"reason": reason, "message": message, "field": field}


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def forbidden(
    rt: ResourceType | None,
    name: str | None,
    user: str,
    verb: str,
    resource: str,
    group: str,
    namespace: str | None,
    why: str = "",
) -> ApiError:
    """RBAC refusal, worded exactly like the API server's authorizer."""
    who = f'User "{user}"'
    scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    what = f'{rt.qualified} "{name}"' if (rt and name) else (rt.qualified if rt else resource)
    msg = (f'{what} is forbidden: {who} cannot {verb} resource "{resource}" '
           f'in API group "{group}" {scope}')
    if why:
        msg += f": {why}"
    return ApiError(403, "Forbidden", msg, _details(rt, name) if rt else {"kind": resource})


def forbidden_message(rt: ResourceType, name: str, message: str) -> ApiError:
    """A 403 from admission (quota) rather than RBAC."""
    return ApiError(403, "Forbidden", f'{rt.qualified} "{name}" is forbidden: {message}',
                    _details(rt, name))


def gone(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def too_large() -> ApiError:
    return ApiError(413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728")


def method_not_allowed() -> ApiError:
    return ApiError(405, "MethodNotAllowed",
                    "the server does not allow this method on the requested resource")


def unsupported_media_type(content_type: str) -> ApiError:
    return ApiError(415, "UnsupportedMediaType",
                    f'the body of the request was in an unknown format - accepted media types '
                    f'include: application/json-patch+json, application/merge-patch+json, '
                    f'application/strategic-merge-patch+json (got "{content_type}")')


def page_not_found() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource",
                    {})
