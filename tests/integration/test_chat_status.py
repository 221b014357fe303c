"""The app's side of the embedded LLM: it starts with the app (pages answer at once), reports its
state at ``GET /api/chat/status`` and in ``/readyz`` (optional: never failing the app), and stops with
the app; a configured server or none is reported too."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient
from sqlalchemy import Engine

from app.main import create_app
from settings import get_settings

StartApp = Callable[..., TestClient]


@pytest.fixture
def app_with(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> Iterator[StartApp]:
    """Builds the app over an empty catalogue with the given settings (a client to enter)."""

    def start(**env: str) -> TestClient:
        monkeypatch.setenv("WOVEPAPER_DATABASE_URL", engine.url.render_as_string(hide_password=False))
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        get_settings.cache_clear()
        return TestClient(create_app())

    yield start


def checks(client: TestClient) -> tuple[int, dict[str, dict[str, Any]]]:
    response = client.get("/readyz")
    return response.status_code, {c["name"]: c for c in response.json()["checks"]}


def test_the_embedded_model_starts_with_the_app_and_stops_with_it(app_with: StartApp, tmp_path: Path) -> None:
    started = time.monotonic()
    with app_with(
        WOVEPAPER_LOCAL_LLM_ENABLED="true",
        WOVEPAPER_LOCAL_LLM_MODEL="smollm2-135m",
        WOVEPAPER_LOCAL_LLM_CONTEXT_TOKENS="1024",
        WOVEPAPER_LOCAL_LLM_DIR=str(tmp_path / "llm"),
    ) as client:
        assert client.get("/").status_code == 200  # pages do not wait for the model
        first = client.get("/api/chat/status").json()
        assert first["model"] == "smollm2-135m" and first["state"] in ("starting", "ready"), first
        code, found = checks(client)
        assert code == 200 and found["llm"]["required"] is False  # ready while the model loads
        while (status := client.get("/api/chat/status").json())["state"] != "ready":
            assert status["state"] == "starting", status
            assert time.monotonic() - started < 120, status
            time.sleep(0.1)
        assert "SmolLM2" in status["detail"] and status["progress"] is None
        code, found = checks(client)
        assert code == 200 and found["llm"]["ok"] and "SmolLM2" in found["llm"]["detail"]
        services = client.app.state.services
        assert services.llm_base_url == services.local_llm.base_url
        pid = services.local_llm.server_pid
    with pytest.raises(ProcessLookupError):  # the app's shutdown stopped the server
        os.kill(pid, 0)


def test_no_model_configured_is_disabled_and_the_app_stays_ready(app_with: StartApp) -> None:
    with app_with(WOVEPAPER_LOCAL_LLM_ENABLED="false") as client:
        status = client.get("/api/chat/status").json()
        assert status["state"] == "disabled" and status["model"] is None
        assert client.app.state.services.llm_base_url is None
        code, found = checks(client)
        assert code == 200 and not found["llm"]["ok"]


def test_a_configured_server_is_used_instead_and_probed_by_connection(app_with: StartApp) -> None:
    from chat.runtime import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    with app_with(WOVEPAPER_LLM_BASE_URL=url, WOVEPAPER_LOCAL_LLM_ENABLED="true") as client:
        services = client.app.state.services
        assert services.local_llm is None and services.llm_base_url == url  # no embedded server
        status = client.get("/api/chat/status").json()
        assert status["state"] == "down" and "does not accept connections" in status["detail"]
        code, found = checks(client)
        assert code == 200 and not found["llm"]["ok"]
        assert "does not accept connections" in found["llm"]["detail"]
