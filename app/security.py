"""Response headers every answer carries, added in one ``before_send`` hook (so they are on pages,
API answers, static files, redirects and errors alike, including 404s for unknown routes).

- A strict Content-Security-Policy: only our own scripts, styles and images (``img-src 'self'``: a
  markdown image or model output pointing elsewhere is never fetched), no plugins, no framing
  (``frame-ancestors 'none'``), forms only to us.
- ``X-Content-Type-Options: nosniff``, ``Referrer-Policy``, ``X-Frame-Options`` for old browsers.
- ``Vary: Accept`` always, since every page negotiates HTML or markdown (also on redirects).
A handler that needs a different policy sets its own header; this hook never overrides one.
"""

from __future__ import annotations

from litestar.types import BeforeMessageSendHookHandler, Message, Scope

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "img-src 'self'",
        "style-src 'self'",
        "script-src 'self'",
        "connect-src 'self'",
        "font-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"strict-origin-when-cross-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
)


def security_headers(hsts: bool) -> BeforeMessageSendHookHandler:
    """The ``before_send`` hook; ``hsts`` adds Strict-Transport-Security (public URL is https)."""
    extra = (*_HEADERS, (b"strict-transport-security", b"max-age=31536000")) if hsts else _HEADERS

    async def add_headers(message: Message, scope: Scope) -> None:
        if message["type"] != "http.response.start":
            return
        headers = list(message.get("headers", ()))
        present = {bytes(name).lower() for name, _ in headers}
        headers.extend((name, value) for name, value in extra if name not in present)
        _vary_on_accept(headers)
        message["headers"] = headers

    return add_headers


def _vary_on_accept(headers: list[tuple[bytes, bytes]]) -> None:
    for i, (name, value) in enumerate(headers):
        if bytes(name).lower() == b"vary":
            tokens = [t.strip().lower() for t in bytes(value).split(b",")]
            if b"accept" not in tokens and b"*" not in tokens:
                headers[i] = (name, bytes(value) + b", Accept")
            return
    headers.append((b"vary", b"Accept"))
