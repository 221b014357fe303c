"""Sign-in: who the requester is, and what they may do. The seams other areas build on:

- **The requester** — :func:`requester` gives the :class:`Actor` of a request (None: anonymous):
  ``person_id``, ``name``, ``via`` (``"session"`` or ``"token"``), ``scopes`` (a token's; a session
  has all) and ``limit_key``. Decided once per request by :mod:`app.auth.requester`.
- **Guards** (:mod:`app.auth.guards`) — ``signed_in`` (HTML: redirect to ``/signin?next=…``; JSON:
  401 + ``WWW-Authenticate``), ``session_or_token("chat")`` (the chat API: session + CSRF, or
  ``Authorization: Bearer``), ``token_only("read")`` with ``opt={AUTH_OPT: "bearer"}`` (MCP: bearer
  only, cookies never looked at).
- **CSRF** (:mod:`app.auth.csrf`) — bound to the session; forms send ``csrf_token``, ``fetch``
  sends ``X-CSRF-Token``; templates of signed-in pages get ``csrf_token``; bearer requests exempt.
- **Limits** — :mod:`coordination.limits` (``hit``/``charge``/``slot``) through
  ``auth_state(request).limiter``; :func:`enforce` for ``COUNT/SECONDS`` settings;
  :class:`~coordination.limits.LimitExceeded` becomes 429 with ``Retry-After`` in :mod:`app.errors`.
- **Production** — what sign-in refuses in production (no real ``WOVEPAPER_SECRET_KEY``, a public URL
  that is not https, the local sign-in link switched on) is in ``settings.production_problems``.

Authlib is used only in :mod:`app.auth.oauth`, joserfc only in :mod:`app.auth.id_tokens`.
"""

from app.auth.csrf import HEADER as CSRF_HEADER
from app.auth.csrf import csrf_token
from app.auth.guards import (
    InsufficientScope,
    SignInRequired,
    actor_of,
    session_or_token,
    signed_in,
    token_only,
)
from app.auth.requester import AUTH_OPT, Actor, requester
from app.auth.wiring import auth_state, client_of, enforce

__all__ = [
    "AUTH_OPT",
    "CSRF_HEADER",
    "Actor",
    "InsufficientScope",
    "SignInRequired",
    "actor_of",
    "auth_state",
    "client_of",
    "csrf_token",
    "enforce",
    "requester",
    "session_or_token",
    "signed_in",
    "token_only",
]
