"""What sign-in needs before ``WOVEPAPER_ENVIRONMENT=production`` may start: one function listing
the problems, for the app's production start-up check to refuse on."""

from __future__ import annotations

from settings import Settings

# Values people paste from examples; a real secret is long and random.
_PLACEHOLDERS = {"changeme", "change-me", "change_me", "secret", "please-change", "replace-me", "xxx"}
MIN_SECRET_CHARS = 32


def auth_production_problems(settings: Settings) -> list[str]:
    auth = settings.auth
    problems = []
    secret = auth.secret_key.strip()
    if not secret:
        problems.append("WOVEPAPER_SECRET_KEY is not set (sessions need a real secret in production).")
    elif secret.lower() in _PLACEHOLDERS or len(set(secret)) < 8 or len(secret) < MIN_SECRET_CHARS:
        problems.append(
            f"WOVEPAPER_SECRET_KEY looks like a placeholder; use at least {MIN_SECRET_CHARS} random "
            "characters (e.g. `python -c 'import secrets; print(secrets.token_hex(32))'`)."
        )
    if not settings.public_url.startswith("https://"):
        problems.append(
            "WOVEPAPER_PUBLIC_URL is not https: session cookies would be sent without Secure "
            "(and without the __Host- prefix)."
        )
    if "local_signin" in auth.model_fields_set and auth.local_signin:
        problems.append("WOVEPAPER_LOCAL_SIGNIN is on: the local sign-in link is for local development only.")
    return problems
