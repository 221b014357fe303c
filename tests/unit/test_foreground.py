"""Foreground claims: background work waits while one is fresh, a dead holder's claim goes stale,
no wait outlasts its bound."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from coordination import foreground
from coordination.foreground import Foreground


def test_background_waits_while_a_claim_is_held_and_goes_on_when_it_ends(tmp_path: Path) -> None:
    fg = Foreground(tmp_path / "fg")
    assert fg.claimed() is None and fg.wait() == 0.0
    release = threading.Event()

    def hold() -> None:
        with fg.claim("answer"):
            release.wait(5)

    holder = threading.Thread(target=hold)
    holder.start()
    deadline = time.monotonic() + 5
    while fg.claimed() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert fg.claimed() == "answer"
    threading.Timer(0.6, release.set).start()
    waited = fg.wait()
    holder.join()
    assert waited >= 0.3 and fg.claimed() is None
    assert list((tmp_path / "fg").iterdir()) == []  # the claim is gone with its holder's block


def test_a_claim_outlives_its_freshness_only_while_refreshed(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(foreground, "BEAT", 0.05)
    monkeypatch.setattr(foreground, "FRESH", 0.3)
    fg = Foreground(tmp_path)
    with fg.claim("model-build"):
        time.sleep(0.6)  # twice the freshness: the refresh keeps it
        assert fg.claimed() == "model-build"
    dead = tmp_path / "999999-dead.answer"  # a holder that died without removing its file
    dead.touch()
    old = time.time() - 10
    os.utime(dead, (old, old))
    assert fg.claimed() is None and not dead.exists()


def test_no_wait_outlasts_its_bound_or_a_stop(tmp_path: Path) -> None:
    fg = Foreground(tmp_path)
    with fg.claim("answer"):
        started = time.monotonic()
        assert fg.wait(most=0.3) < 1.0
        assert fg.wait(should_stop=lambda: True) < 0.5
        assert time.monotonic() - started < 2.0
