"""Production mode (``WOVEPAPER_ENVIRONMENT=production``) refuses unsafe settings at start-up, with
one message listing every problem; outside production nothing is refused."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from functools import cached_property

import pytest

from app.main import create_app
from settings import (
    PROJECT_ROOT,
    Settings,
    UnsafeSettings,
    check_production,
    get_settings,
    production_problems,
)

SAFE = {
    "WOVEPAPER_ENVIRONMENT": "production",
    "WOVEPAPER_PUBLIC_URL": "https://papers.example.org",
    "WOVEPAPER_SECRET_KEY": secrets.token_hex(32),
}


def _settings(monkeypatch: pytest.MonkeyPatch, **env: str) -> Settings:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    return get_settings()


def _secret_fields() -> list[str]:
    names = []
    for member in vars(Settings).values():
        if isinstance(member, cached_property):
            section = member.func(Settings())
            for name, field in type(section).model_fields.items():
                extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
                if extra.get("secret"):
                    names.append(f"WOVEPAPER_{name.upper()}")
    return names


def test_safe_production_settings_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _settings(monkeypatch, **SAFE, WOVEPAPER_OPENALEX_API_KEY="k-4f9a1c0e77")
    assert production_problems(settings) == []
    check_production(settings)
    assert settings.debug_views is False  # off by default outside development


@pytest.mark.parametrize("environment", ["development", "test"])
def test_nothing_is_refused_outside_production(monkeypatch: pytest.MonkeyPatch, environment: str) -> None:
    settings = _settings(
        monkeypatch,
        WOVEPAPER_ENVIRONMENT=environment,
        WOVEPAPER_DEBUG_VIEWS="true",
        WOVEPAPER_OPENALEX_API_KEY="changeme",
    )
    assert production_problems(settings) == []


def test_every_problem_is_listed_in_one_message(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _settings(
        monkeypatch,
        WOVEPAPER_ENVIRONMENT="production",
        WOVEPAPER_PUBLIC_URL="http://papers.example.org",
        WOVEPAPER_DEBUG_VIEWS="true",
        WOVEPAPER_DATABASE_ECHO="true",
        WOVEPAPER_SEMANTIC_SCHOLAR_API_KEY="your-api-key",
    )
    with pytest.raises(UnsafeSettings) as refused:
        check_production(settings)
    message = str(refused.value)
    assert message.startswith("refusing to start in production: 5 unsafe setting(s)")
    for name in ("PUBLIC_URL", "DEBUG_VIEWS", "DATABASE_ECHO", "SEMANTIC_SCHOLAR_API_KEY", "SECRET_KEY"):
        assert f"WOVEPAPER_{name}" in message, message
    assert "your-api-key" not in message  # a secret's value is never printed


def test_the_defaults_are_refused_in_production(monkeypatch: pytest.MonkeyPatch) -> None:
    problems = production_problems(_settings(monkeypatch, WOVEPAPER_ENVIRONMENT="production"))
    assert problems == [
        "WOVEPAPER_PUBLIC_URL must be the site's https:// address (it is empty, so http://127.0.0.1:8000): "
        "session cookies would be sent without Secure",
        "WOVEPAPER_SECRET_KEY is not set; production needs the real secret",
    ]


PLACEHOLDERS = ["changeme", "CHANGE_ME", "xxxxxxxx", "<your key>", "${API_KEY}", "key-here"]


@pytest.mark.parametrize("placeholder", PLACEHOLDERS)
def test_every_secret_setting_refuses_placeholders(monkeypatch: pytest.MonkeyPatch, placeholder: str) -> None:
    names = _secret_fields()
    assert {"WOVEPAPER_OPENALEX_API_KEY", "WOVEPAPER_EMBEDDING_API_KEY", "WOVEPAPER_SECRET_KEY"} <= set(names)
    settings = _settings(monkeypatch, **{**SAFE, **dict.fromkeys(names, placeholder)})
    problems = production_problems(settings)
    assert sorted(p.split(" ", 1)[0] for p in problems) == sorted(names), problems


def test_the_app_refuses_to_be_built(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _settings(monkeypatch, WOVEPAPER_ENVIRONMENT="production", WOVEPAPER_DEBUG_VIEWS="1")
    with pytest.raises(UnsafeSettings, match="WOVEPAPER_DEBUG_VIEWS"):
        create_app(settings)


def test_serve_exits_with_the_list_and_no_traceback(tmp_path: object) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WOVEPAPER_")}
    env.update({"WOVEPAPER_ENVIRONMENT": "production", "WOVEPAPER_DATA_DIR": str(tmp_path)})
    command = [sys.executable, "-m", "app", "serve"]
    run = subprocess.run(command, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    assert "refusing to start in production: 2 unsafe setting(s)" in run.stderr
    assert "WOVEPAPER_PUBLIC_URL" in run.stderr and "Traceback" not in run.stderr
