"""Security headers on every response: a strict Content-Security-Policy and its friends.

The dashboard's pages run no inline script and no eval: every script is a file under
/static/, every style a stylesheet, widths of bars are classes (`dash-w-<n>`), htmx is
told not to add its indicator <style> (the rule is in dashboard.css) nor evaluate
attributes, and Plotly is told not to add its <style> (the element it looks for,
`#plotly.js-style-global.no-inline-styles`, links its rules from
`training-plotly-css`). So the policy needs no nonce and no hash.

`form-action` is left out on purpose: a form posted with an expired session is
redirected to sign in at the cluster's OAuth server, whose address is discovered at run
time, and browsers apply `form-action` to that redirect.
"""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse

# sensors, devices and payments: nothing the dashboard uses, so nothing a page may ask for
PERMISSIONS_POLICY = ", ".join(f"{feature}=()" for feature in (
    "accelerometer", "autoplay", "camera", "display-capture", "geolocation", "gyroscope",
    "magnetometer", "microphone", "midi", "payment", "usb"))


def content_security_policy(request: HttpRequest) -> str:
    # 'self' covers the page's own ws:/wss: origin in CSP Level 3; older browsers need it
    # spelled out (the host is one ALLOWED_HOSTS let through)
    try:
        socket = ("wss://" if request.is_secure() else "ws://") + request.get_host()
    except DisallowedHost:  # the 400 page of a request for another host
        socket = ""
    return "; ".join((
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",  # PatternFly's icons in its CSS; Plotly's PNG download
        "font-src 'self' data:",
        f"connect-src 'self' {socket}".rstrip(),
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    ))


class SecurityHeadersMiddleware:
    """Content-Security-Policy and Permissions-Policy (Referrer-Policy, nosniff and
    X-Frame-Options come from Django's SecurityMiddleware and clickjacking middleware)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy",
                                    content_security_policy(request))
        response.headers.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        return response
