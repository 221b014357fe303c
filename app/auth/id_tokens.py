"""OpenID Connect ID tokens, checked with joserfc (Authlib's JOSE successor).

A token is accepted only when it is signed with an asymmetric algorithm the provider announced,
by a key from the provider's JWKS (fetched again once when the token names an unknown ``kid``:
providers rotate keys), and its claims say: ``iss`` exactly the provider's issuer, ``aud``
containing our client id (and ``azp`` our client id when there are several audiences), ``exp`` in
the future and ``iat`` present (with a minute's leeway for clocks), and ``nonce`` the one this
sign-in sent. ``alg: none`` and every HMAC algorithm are refused before any key is looked at, so
an HS256 token "signed" with the provider's public key never gets near a verifier.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from joserfc.jws import extract_compact

ASYMMETRIC = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"}
)
LEEWAY_SECONDS = 60


class BadIdToken(ValueError):
    """The ID token must not be trusted; the message says why (for logs and the error page)."""


def allowed_algorithms(announced: Iterable[str] | None) -> list[str]:
    """The provider's announced ID-token algorithms that are asymmetric (RS256 when it says none)."""
    chosen = [alg for alg in (announced or ["RS256"]) if alg in ASYMMETRIC]
    if not chosen:
        raise BadIdToken("the provider announces no asymmetric ID-token algorithm")
    return chosen


def _header(token: str) -> dict[str, Any]:
    try:
        return dict(extract_compact(token.encode()).protected)
    except (JoseError, ValueError, json.JSONDecodeError) as error:
        raise BadIdToken(f"not a signed JWT ({error})") from error


async def verify(
    token: str,
    *,
    keys: Callable[[bool], Awaitable[dict[str, Any]]],
    algorithms: list[str],
    issuer: str,
    client_id: str,
    nonce: str,
    now: int | None = None,
) -> dict[str, Any]:
    """The claims of a valid ID token; raises :class:`BadIdToken`. ``keys(refresh)`` returns the
    provider's JWKS (fetched again when ``refresh`` is true)."""
    header = _header(token)
    alg = header.get("alg")
    if alg not in algorithms:
        raise BadIdToken(f"signature algorithm {alg!r} is not accepted (expected one of {algorithms})")
    jwks = await keys(False)
    kid = header.get("kid")
    if kid is not None and kid not in {k.get("kid") for k in jwks.get("keys", [])}:
        jwks = await keys(True)  # a rotated key: fetch the set again, once
    try:
        key_set = KeySet.import_key_set(jwks)  # type: ignore[arg-type]
        decoded = jwt.decode(token, key_set, algorithms=algorithms)
    except (JoseError, ValueError) as error:
        raise BadIdToken(f"signature check failed ({error})") from error
    claims = dict(decoded.claims)
    registry = jwt.JWTClaimsRegistry(
        now=now,
        leeway=LEEWAY_SECONDS,
        iss={"essential": True, "value": issuer},
        aud={"essential": True, "value": client_id},
        sub={"essential": True},
        exp={"essential": True},
        iat={"essential": True},
        nonce={"essential": True, "value": nonce},
    )
    try:
        registry.validate(claims)
    except JoseError as error:
        raise BadIdToken(f"claims rejected ({error})") from error
    audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
    if len(audiences) > 1 and claims.get("azp") != client_id:
        raise BadIdToken("several audiences and azp is not this client")
    return claims
