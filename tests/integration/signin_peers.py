"""Peers for the sign-in tests, all real and on loopback:

- :func:`oidc_mock` — PyPI ``oidc-provider-mock`` (Authlib's OpenID provider in Flask), a real
  OIDC issuer: discovery, JWKS, an authorization form (post ``sub=alice``), the token endpoint.
- :class:`HostileProvider` — an OpenID provider whose ID tokens the *test* writes (wrong nonce,
  audience, issuer, expiry, ``alg: none``, HS256 keyed with the public key, an unknown ``kid``),
  served over HTTP so they reach the app through its real flow. It also checks PKCE itself (the
  mock does not): ``verified_pkce`` records whether the verifier matched the S256 challenge.
- :func:`serve_app` — the app under uvicorn on a free loopback port whose public URL is that port,
  and :class:`Browser`, an httpx client that keeps cookies like a browser and follows the sign-in
  redirects step by step.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
from joserfc import jwt
from joserfc.jwk import RSAKey
from oidc_provider_mock import run_server_in_thread

from accounts import queries as accounts
from catalog.db import make_engine, migrate, transaction
from settings import Settings
from tests.integration.browse_catalogue import _free_port as free_port
from tests.integration.browse_catalogue import served, settings_for


@contextmanager
def oidc_mock() -> Iterator[str]:
    """A running oidc-provider-mock; yields its issuer (``http://localhost:<port>``)."""
    with run_server_in_thread(port=0) as server:
        yield f"http://localhost:{server.server_port}"


# What `python -m app serve` prints for the local sign-in link.
LINK = re.compile(r"Sign in on this machine \(one time, valid \d+ min\): (\S+)")


def printed_link(log: Path) -> str:
    """The local sign-in link an app process printed to ``log`` (waits for it)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if found := LINK.search(log.read_text(errors="replace")):
            return found.group(1)
        time.sleep(0.2)
    raise AssertionError(f"no sign-in link printed:\n{log.read_text()[-2000:]}")


def api_token(
    database_url: str, *, name: str = "tester", scopes: set[str] | None = None, label: str = "tests"
) -> str:
    """A new person with an API token (each caller its own, so limits do not interfere)."""
    engine = make_engine(database_url)
    try:
        with transaction(engine) as db:
            person = accounts.sign_in(db, accounts.Profile("local", "test", secrets.token_hex(8), name, None))
            secret, _ = accounts.create_token(
                db, person.person_id, name=label, scopes=scopes or {"chat"}, expires_at=None
            )
    finally:
        engine.dispose()
    return secret


def settings_with(env: dict[str, str]) -> Settings:
    """Settings read from exactly ``env`` (plus the test environment), every section evaluated now."""
    url = env.get("WOVEPAPER_DATABASE_URL", "sqlite://")
    return settings_for(url, {"WOVEPAPER_WORKER_EMBEDDED": "false", **env})


def app_settings(data_dir: Path, port: int, env: dict[str, str] | None = None) -> Settings:
    """An app on ``port`` with its own SQLite catalogue (migrated) under ``data_dir``."""
    url = f"sqlite:///{data_dir / 'catalogue.sqlite3'}"
    engine = make_engine(url)
    migrate(engine)
    engine.dispose()
    return settings_with(
        {
            "WOVEPAPER_DATA_DIR": str(data_dir),
            "WOVEPAPER_DATABASE_URL": url,
            "WOVEPAPER_PORT": str(port),
            "WOVEPAPER_PUBLIC_URL": f"http://127.0.0.1:{port}",
            **(env or {}),
        }
    )


def serve_app(settings: Settings) -> AbstractContextManager[str]:
    """The app under uvicorn on ``settings.server.port`` (its public URL); yields its base URL."""
    return served(settings, settings.server.port)


COOKIE = "wovepaper_session"


@dataclass
class Browser:
    """A cookie-keeping HTTP client that walks the sign-in flow one redirect at a time."""

    base: str
    client: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        self.client = httpx.Client(base_url=self.base, follow_redirects=False, timeout=30)

    def close(self) -> None:
        self.client.close()

    @property
    def session(self) -> str | None:
        found = [c.value for c in self.client.cookies.jar if c.name == COOKIE]
        assert len(found) <= 1, f"the browser holds {len(found)} session cookies"
        return found[0] if found else None

    def plant(self, value: str) -> None:
        """Put a session cookie in this browser as an attacker (or a saved copy) would."""
        self.client.cookies.set(COOKIE, value, domain=urlsplit(self.base).hostname or "", path="/")

    def csrf(self, path: str = "/account") -> str:
        """The CSRF token from a signed-in page's forms."""
        page = self.client.get(path)
        assert page.status_code == 200, page.text[:300]
        marker = 'name="csrf_token" value="'
        start = page.text.index(marker) + len(marker)
        return page.text[start : page.text.index('"', start)]

    def start(self, provider: str, next_path: str = "/", csrf: str | None = None) -> str:
        """POST the sign-in form as a browser would (with the form's CSRF token once the browser
        has a session); returns the provider's authorization URL."""
        if csrf is None and self.session is not None:
            csrf = self.csrf("/signin")
        data = {"next": next_path, **({"csrf_token": csrf} if csrf else {})}
        started = self.client.post(f"/signin/{provider}", data=data)
        assert started.status_code == 303, started.text[:500]
        return started.headers["location"]

    def sign_in_at_mock(self, authorize_url: str, sub: str) -> str:
        """Sign in as ``sub`` at the oidc-provider-mock; returns our callback URL with the code."""
        with httpx.Client(follow_redirects=False, timeout=30) as provider:
            answer = provider.post(authorize_url, data={"sub": sub})
        assert answer.status_code in (302, 303), answer.text[:500]
        return answer.headers["location"]

    def callback(self, url: str) -> httpx.Response:
        return self.client.get(url)

    def sign_in(self, provider: str, sub: str, next_path: str = "/") -> httpx.Response:
        return self.callback(self.sign_in_at_mock(self.start(provider, next_path), sub))


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


# -- a provider whose ID tokens the test writes ---------------------------------------------


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass
class HostileProvider:
    """An OIDC provider on loopback; ``id_token(claims, header) -> str`` writes its ID tokens.

    ``claims`` are the honest ones for the current authorization (iss, aud, sub, nonce, iat, exp);
    the default writes them signed with the published key. ``published`` is the JWKS served."""

    id_token: Callable[[dict[str, Any], HostileProvider], str] | None = None
    key: RSAKey = field(default_factory=lambda: RSAKey.generate_key(2048, parameters={"kid": "k1"}))
    issuer: str = ""
    verified_pkce: list[bool] = field(default_factory=list)
    codes: dict[str, dict[str, str]] = field(default_factory=dict)
    jwks_fetches: int = 0
    extra_keys: list[dict[str, Any]] = field(default_factory=list)

    def sign(self, claims: dict[str, Any], header: dict[str, Any] | None = None, key: Any = None) -> str:
        return jwt.encode(header or {"alg": "RS256", "kid": "k1"}, claims, key or self.key)

    def unsigned(self, claims: dict[str, Any], header: dict[str, Any]) -> str:
        """A JWT with any header and no real signature (``alg: none`` and friends)."""
        return f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}."

    def hs256_with_public_key(self, claims: dict[str, Any]) -> str:
        """HS256 "signed" with the provider's public key as the HMAC secret (algorithm confusion)."""
        import hmac

        public_pem = self.key.as_pem(private=False)
        signing_input = (
            f"{_b64(json.dumps({'alg': 'HS256', 'kid': 'k1'}).encode())}.{_b64(json.dumps(claims).encode())}"
        )
        mac = hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest()
        return f"{signing_input}.{_b64(mac)}"

    @contextmanager
    def running(self) -> Iterator[str]:
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, body: Any, status: int = 200) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path == "/.well-known/openid-configuration":
                    self._json(
                        {
                            "issuer": provider.issuer,
                            "authorization_endpoint": f"{provider.issuer}/authorize",
                            "token_endpoint": f"{provider.issuer}/token",
                            "jwks_uri": f"{provider.issuer}/jwks",
                            "id_token_signing_alg_values_supported": ["RS256"],
                            "code_challenge_methods_supported": ["S256"],
                        }
                    )
                elif parts.path == "/jwks":
                    provider.jwks_fetches += 1
                    self._json({"keys": [provider.key.as_dict(private=False), *provider.extra_keys]})
                elif parts.path == "/authorize":
                    params = {k: v[0] for k, v in parse_qs(parts.query).items()}
                    code = secrets.token_urlsafe(16)
                    provider.codes[code] = params
                    target = (
                        params["redirect_uri"] + "?" + urlencode({"code": code, "state": params["state"]})
                    )
                    self.send_response(302)
                    self.send_header("Location", target)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                else:
                    self._json({"error": "not_found"}, 404)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                if urlsplit(self.path).path != "/token" or form.get("code") not in provider.codes:
                    self._json({"error": "invalid_grant"}, 400)
                    return
                params = provider.codes.pop(form["code"])
                challenge = params.get("code_challenge")
                verifier = form.get("code_verifier", "")
                provider.verified_pkce.append(
                    challenge is not None and _b64(hashlib.sha256(verifier.encode()).digest()) == challenge
                )
                now = int(time.time())
                claims = {
                    "iss": provider.issuer,
                    "aud": params["client_id"],
                    "sub": "mallory-victim",
                    "nonce": params.get("nonce"),
                    "iat": now,
                    "exp": now + 300,
                    "name": "Hostile Test",
                }
                writer = provider.id_token or (lambda c, p: p.sign(c))
                self._json(
                    {"access_token": "at", "token_type": "Bearer", "id_token": writer(claims, provider)}
                )

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.issuer = f"http://localhost:{server.server_address[1]}"
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self.issuer
        finally:
            server.shutdown()
            server.server_close()


# -- several app processes sharing one Redis ------------------------------------------------


@contextmanager
def app_processes(work: Path, count: int, env: dict[str, str]) -> Iterator[list[str]]:
    """``count`` separate ``python -m app serve`` processes on their own ports (each with its own
    data dir and SQLite catalogue), configured by ``env`` (e.g. one Redis); yields their URLs."""
    import subprocess
    import sys

    from settings import PROJECT_ROOT

    processes: list[subprocess.Popen[bytes]] = []
    urls = []
    try:
        for n in range(count):
            port = free_port()
            data = work / f"app-{n}"
            data.mkdir(parents=True, exist_ok=True)
            child_env = {k: v for k, v in os.environ.items() if not k.startswith("WOVEPAPER_")}
            child_env.update(
                {
                    "WOVEPAPER_ENVIRONMENT": "test",
                    "WOVEPAPER_DATA_DIR": str(data),
                    "WOVEPAPER_PORT": str(port),
                    "WOVEPAPER_WORKER_EMBEDDED": "false",
                    **env,
                }
            )
            log = (data / "server.log").open("wb")
            processes.append(
                subprocess.Popen(
                    [sys.executable, "-m", "app", "serve"],
                    cwd=PROJECT_ROOT,
                    env=child_env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )
            urls.append(f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + 120
        for url, process in zip(urls, processes, strict=True):
            while True:
                assert process.poll() is None, f"{url} exited; see its server.log"
                assert time.monotonic() < deadline, f"{url} did not come up"
                try:
                    if httpx.get(f"{url}/healthz", timeout=2).status_code < 500:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)
        yield urls
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except Exception:
                process.kill()


def burst(
    urls: list[str], path: str, total: int, headers: Callable[[int], dict[str, str]] | None = None
) -> list[httpx.Response]:
    """``total`` requests at once, spread round-robin over ``urls`` (one thread per request)."""
    from concurrent.futures import ThreadPoolExecutor

    barrier = threading.Barrier(total)

    def one(n: int) -> httpx.Response:
        with httpx.Client(timeout=60) as client:
            barrier.wait()
            return client.get(urls[n % len(urls)] + path, headers=headers(n) if headers else None)

    with ThreadPoolExecutor(max_workers=total) as pool:
        return list(pool.map(one, range(total)))


# -- GitHub (OAuth 2.0, not OIDC; cannot run here, so a stand-in speaking its protocol) --------


@dataclass
class FakeGitHub:
    """GitHub's OAuth endpoints and the two API calls the app makes, on loopback. Like GitHub, the
    token endpoint answers form-encoded unless asked for JSON; ``/user/emails`` lists addresses
    with ``primary`` and ``verified``."""

    user: dict[str, Any] = field(default_factory=lambda: {"id": 4242, "login": "octo", "name": "Octo Cat"})
    emails: list[dict[str, Any]] = field(
        default_factory=lambda: [
            {"email": "old@example.org", "primary": False, "verified": True},
            {"email": "octo@example.org", "primary": True, "verified": True},
        ]
    )
    codes: dict[str, dict[str, str]] = field(default_factory=dict)
    token_accepts: list[str] = field(default_factory=list)

    @contextmanager
    def running(self) -> Iterator[str]:
        github = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, kind: str, location: str | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                if location:
                    self.send_header("Location", location)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                params = {k: v[0] for k, v in parse_qs(parts.query).items()}
                authorized = self.headers.get("Authorization") == "Bearer gho_test"
                if parts.path == "/login/oauth/authorize":
                    code = secrets.token_urlsafe(8)
                    github.codes[code] = params
                    back = params["redirect_uri"] + "?" + urlencode({"code": code, "state": params["state"]})
                    self._send(302, b"", "text/plain", back)
                elif parts.path == "/api/user" and authorized:
                    self._send(200, json.dumps(github.user).encode(), "application/json")
                elif parts.path == "/api/user/emails" and authorized:
                    self._send(200, json.dumps(github.emails).encode(), "application/json")
                else:
                    self._send(401 if parts.path.startswith("/api/") else 404, b"{}", "application/json")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                accept = self.headers.get("Accept", "")
                github.token_accepts.append(accept)
                params = github.codes.pop(form.get("code", ""), None)
                if params is None:
                    answer = {"error": "bad_verification_code"}
                else:
                    challenge = _b64(hashlib.sha256(form.get("code_verifier", "").encode()).digest())
                    ok = challenge == params.get("code_challenge")
                    answer = {
                        "access_token": "gho_test",
                        "token_type": "bearer",
                        "scope": "read:user,user:email",
                    }
                    if not ok:
                        answer = {"error": "invalid_grant"}
                if "application/json" in accept:
                    self._send(200, json.dumps(answer).encode(), "application/json")
                else:
                    self._send(200, urlencode(answer).encode(), "application/x-www-form-urlencoded")

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()
