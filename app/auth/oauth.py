"""Sign-in providers and the authorization-code flow: the one module that uses Authlib.

Providers are configured by settings alone (:func:`configured_providers`): any OpenID Connect
issuer by its discovery document, and presets for Google (OIDC), ORCID (OIDC; its ``sub`` is the
ORCID iD; no PKCE) and GitHub (OAuth 2.0, not OIDC: the token endpoint answers JSON to ``Accept:
application/json`` — Authlib sends it — and the person is read from the API, the e-mail being the
primary verified one from ``/user/emails``).

The flow, per RFC 9700: :meth:`Provider.start` makes ``state``, ``nonce`` and a PKCE S256
verifier (where the provider supports it) and returns them for the caller to keep server-side,
bound to the browser's session and keyed by ``state``; :meth:`Provider.finish` exchanges the code
with that verifier and checks the ID token (:mod:`app.auth.id_tokens`). Each provider has its own
callback URL (``/signin/<name>/callback``), so a code cannot be replayed on another provider's
callback (mix-up defence); an ``iss`` in the authorization response must be this provider's.
Everything that goes wrong becomes :class:`SignInFailed` with a reason fit to show.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from authlib.integrations.httpx_client import AsyncOAuth2Client, OAuthError
from authlib.integrations.httpx_client.oauth2_client import httpx2

from accounts.queries import Profile
from app.auth import id_tokens
from settings import Settings

TIMEOUT_SECONDS = 10.0
METADATA_TTL_SECONDS = 3600.0


class SignInFailed(Exception):
    """The sign-in could not be completed; the message is written for the person signing in."""


@dataclass(frozen=True, slots=True)
class Started:
    url: str
    state: str
    nonce: str
    verifier: str | None


@dataclass
class Provider:
    name: str  # also the path segment: /signin/<name>
    title: str
    kind: Literal["oidc", "github"]
    client_id: str
    client_secret: str
    scopes: str
    issuer: str  # OIDC: the exact `iss`; GitHub: its web address (the identity's issuer)
    pkce: bool = True
    token_auth: str = "client_secret_basic"  # noqa: S105 - a method name, not a secret
    github_api: str = ""
    _metadata: dict[str, Any] | None = field(default=None, repr=False)
    _metadata_at: float = 0.0
    _jwks: dict[str, Any] | None = field(default=None, repr=False)

    # -- endpoints -------------------------------------------------------------------------

    def _client(self, redirect_uri: str | None = None) -> AsyncOAuth2Client:
        return AsyncOAuth2Client(
            client_id=self.client_id,
            client_secret=self.client_secret,
            scope=self.scopes,
            redirect_uri=redirect_uri,
            token_endpoint_auth_method=self.token_auth,
            code_challenge_method="S256" if self.pkce else None,
            timeout=TIMEOUT_SECONDS,
            follow_redirects=False,
        )

    async def _get_json(self, url: str, token: str | None = None) -> Any:
        headers = {"Accept": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        try:
            async with self._client() as client:
                response = await client.request("GET", url, headers=headers, withhold_token=True)
            response.raise_for_status()
            return response.json()
        except (httpx2.HTTPError, ValueError) as error:
            raise SignInFailed(
                f"{self.title} did not answer as expected ({error}); try again later."
            ) from error

    async def metadata(self) -> dict[str, Any]:
        """The provider's endpoints: discovered (OIDC, cached an hour) or fixed (GitHub)."""
        if self.kind == "github":
            return {
                "authorization_endpoint": f"{self.issuer}/login/oauth/authorize",
                "token_endpoint": f"{self.issuer}/login/oauth/access_token",
            }
        # (No lock: two requests fetching it at once both get the same document.)
        if self._metadata is None or time.monotonic() - self._metadata_at > METADATA_TTL_SECONDS:
            found = await self._get_json(self.issuer.rstrip("/") + "/.well-known/openid-configuration")
            if not isinstance(found, dict) or found.get("issuer") != self.issuer:
                raise SignInFailed(f"{self.title}'s discovery document names another issuer.")
            self._metadata, self._metadata_at = found, time.monotonic()
        return self._metadata

    async def jwks(self, refresh: bool) -> dict[str, Any]:
        if self._jwks is None or refresh:
            uri = (await self.metadata()).get("jwks_uri")
            if not isinstance(uri, str):
                raise SignInFailed(f"{self.title} publishes no signing keys.")
            found = await self._get_json(uri)
            if not isinstance(found, dict):
                raise SignInFailed(f"{self.title}'s signing keys are not a key set.")
            self._jwks = found
        return self._jwks

    def form_origins(self) -> set[str]:
        """Where a sign-in form's redirect may lead (for the page's CSP ``form-action``): the
        issuer's origin and, once discovered, the authorization endpoint's (no network here)."""
        endpoints = [self.issuer]
        if self._metadata is not None and isinstance(self._metadata.get("authorization_endpoint"), str):
            endpoints.append(self._metadata["authorization_endpoint"])
        return {"{0.scheme}://{0.netloc}".format(urlsplit(e)) for e in endpoints}

    # -- the flow --------------------------------------------------------------------------

    async def start(self, redirect_uri: str) -> Started:
        meta = await self.metadata()
        state, nonce = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        verifier = secrets.token_urlsafe(64) if self.pkce else None
        extra = {"nonce": nonce} if self.kind == "oidc" else {}
        async with self._client(redirect_uri) as client:
            url, _ = client.create_authorization_url(
                meta["authorization_endpoint"], state=state, code_verifier=verifier, **extra
            )
        return Started(url, state, nonce, verifier)

    async def finish(
        self, *, code: str, redirect_uri: str, nonce: str, verifier: str | None, issuer: str | None
    ) -> Profile:
        if issuer is not None and issuer != self.issuer:
            raise SignInFailed("The answer came from another provider than the one you chose (mix-up).")
        meta = await self.metadata()
        try:
            async with self._client(redirect_uri) as client:
                token = await client.fetch_token(
                    meta["token_endpoint"],
                    grant_type="authorization_code",
                    code=code,
                    code_verifier=verifier,
                )
        except (OAuthError, httpx2.HTTPError, ValueError) as error:
            raise SignInFailed(f"{self.title} refused the sign-in code ({error}).") from error
        access = token.get("access_token")
        if not isinstance(access, str):
            raise SignInFailed(f"{self.title} gave no access token.")
        if self.kind == "github":
            return await self._github_profile(access)
        return await self._oidc_profile(token, access, nonce, meta)

    async def _oidc_profile(
        self, token: dict[str, Any], access: str, nonce: str, meta: dict[str, Any]
    ) -> Profile:
        raw = token.get("id_token")
        if not isinstance(raw, str):
            raise SignInFailed(f"{self.title} gave no ID token.")
        try:
            claims = await id_tokens.verify(
                raw,
                keys=self.jwks,
                algorithms=id_tokens.allowed_algorithms(meta.get("id_token_signing_alg_values_supported")),
                issuer=self.issuer,
                client_id=self.client_id,
                nonce=nonce,
            )
        except id_tokens.BadIdToken as error:
            raise SignInFailed(f"{self.title}'s ID token was not valid: {error}.") from error
        userinfo: dict[str, Any] = {}
        if not _name(claims) and isinstance(meta.get("userinfo_endpoint"), str):
            found = await self._get_json(meta["userinfo_endpoint"], access)
            if isinstance(found, dict) and found.get("sub") == claims["sub"]:
                userinfo = found
        merged = {**userinfo, **claims}
        verified = merged.get("email_verified") in (True, "true")
        # ORCID and many issuers say nothing about verification: an e-mail is kept only when vouched.
        return Profile(
            self.name,
            self.issuer,
            str(claims["sub"]),
            _name(merged),
            merged.get("email") if verified else None,
        )

    async def _github_profile(self, access: str) -> Profile:
        user = await self._get_json(f"{self.github_api}/user", access)
        if not isinstance(user, dict) or not isinstance(user.get("id"), int):
            raise SignInFailed("GitHub did not say who you are.")
        email = None
        emails = await self._get_json(f"{self.github_api}/user/emails", access)
        if isinstance(emails, list):
            email = next(
                (
                    e.get("email")
                    for e in emails
                    if isinstance(e, dict) and e.get("primary") and e.get("verified")
                ),
                None,
            )
        # The numeric id is the subject: logins can be renamed and reused.
        return Profile(self.name, self.issuer, str(user["id"]), user.get("name") or user.get("login"), email)


def _name(claims: dict[str, Any]) -> str | None:
    name = claims.get("name")
    if isinstance(name, str) and name.strip():
        return name
    parts = [claims.get("given_name"), claims.get("family_name")]
    joined = " ".join(p for p in parts if isinstance(p, str) and p.strip())
    return joined or claims.get("preferred_username") or None


def configured_providers(settings: Settings) -> dict[str, Provider]:
    """The providers whose client id is set, by path name, in sign-in page order."""
    auth = settings.auth
    found: list[Provider] = []
    if auth.orcid_client_id:
        found.append(
            Provider(
                "orcid",
                "ORCID",
                "oidc",
                auth.orcid_client_id,
                auth.orcid_client_secret,
                "openid",
                auth.orcid_issuer,
                pkce=False,  # ORCID does not support PKCE
                token_auth="client_secret_post",  # noqa: S106 - a method name
            )
        )
    if auth.github_client_id:
        found.append(
            Provider(
                "github",
                "GitHub",
                "github",
                auth.github_client_id,
                auth.github_client_secret,
                "read:user user:email",
                auth.github_url.rstrip("/"),
                github_api=auth.github_api_url.rstrip("/"),
            )
        )
    if auth.google_client_id:
        found.append(
            Provider(
                "google",
                "Google",
                "oidc",
                auth.google_client_id,
                auth.google_client_secret,
                "openid email profile",
                "https://accounts.google.com",
            )
        )
    if auth.oidc_issuer:
        found.append(
            Provider(
                "oidc",
                auth.oidc_name,
                "oidc",
                auth.oidc_client_id,
                auth.oidc_client_secret,
                auth.oidc_scopes,
                auth.oidc_issuer,
            )
        )
    return {p.name: p for p in found}
