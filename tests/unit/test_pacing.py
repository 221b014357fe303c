"""The pacing primitive kept in files (coordination.pacing.FilePacer), with an injected clock: a
reservation is a time slot, slots of one key are one interval apart whoever takes them (threads,
processes), and nothing a crash or a clock change leaves behind blocks anyone for long."""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path

import pytest

from coordination.pacing import FilePacer, PacingUnavailable, RedisPacer, pacer
from settings import get_settings


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_slots_of_one_key_are_one_interval_apart(tmp_path: Path) -> None:
    clock = Clock()
    pace = FilePacer(tmp_path, clock)
    assert [pace.reserve("arxiv", 3.0) for _ in range(4)] == [0.0, 3.0, 6.0, 9.0]  # queued in order
    clock.now += 7.5  # two slots have begun meanwhile
    assert pace.reserve("arxiv", 3.0) == pytest.approx(4.5)  # after the last slot taken, at +12
    clock.now += 100
    assert pace.reserve("arxiv", 3.0) == 0.0  # idle: at once


def test_keys_are_independent_and_any_key_names_a_file(tmp_path: Path) -> None:
    pace = FilePacer(tmp_path, Clock())
    assert pace.reserve("api.openalex.org", 0.125) == 0.0
    assert pace.reserve("arxiv", 3.0) == 0.0
    assert pace.reserve("../../etc/passwd", 1.0) == 0.0  # stays inside the folder
    assert pace.reserve("api.openalex.org", 0.125) == 0.125
    assert sorted(p.name for p in tmp_path.iterdir()) == [".._.._etc_passwd", "api.openalex.org", "arxiv"]


def test_a_crashed_holder_costs_at_most_one_interval(tmp_path: Path) -> None:
    clock = Clock()
    FilePacer(tmp_path, clock).reserve("arxiv", 3.0)  # its holder dies before sending
    assert FilePacer(tmp_path, clock).reserve("arxiv", 3.0) == 3.0


def test_a_clock_set_back_or_a_damaged_file_does_not_stall(tmp_path: Path) -> None:
    clock = Clock()
    pace = FilePacer(tmp_path, clock)
    pace.reserve("arxiv", 3.0)
    clock.now -= 3600  # the wall clock was set back an hour: the stored slot is not waited for
    assert pace.reserve("arxiv", 3.0) == 0.0
    assert pace.reserve("arxiv", 3.0) == 3.0
    (tmp_path / "arxiv").write_text("garbage")
    assert pace.reserve("arxiv", 3.0) == 0.0


def test_an_unusable_folder_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(PacingUnavailable, match="cannot reserve a request slot in"):
        FilePacer(tmp_path / "file" / "pacing").reserve("arxiv", 3.0)


def test_threads_never_share_a_slot(tmp_path: Path) -> None:
    pace = FilePacer(tmp_path, Clock())  # time stands still: every wait is a distinct slot
    waits: list[float] = []
    lock = threading.Lock()

    def take() -> None:
        for _ in range(20):
            wait = pace.reserve("arxiv", 0.5)
            with lock:
                waits.append(wait)

    threads = [threading.Thread(target=take) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(waits) == [n * 0.5 for n in range(160)]


def _reserve_many(folder: str, count: int, out: multiprocessing.Queue[float]) -> None:
    pace = FilePacer(Path(folder), Clock())
    for _ in range(count):
        out.put(pace.reserve("arxiv", 0.25))


def test_processes_never_share_a_slot(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")  # each process opens and locks the file itself
    out: multiprocessing.Queue[float] = context.Queue()
    workers = [context.Process(target=_reserve_many, args=(str(tmp_path), 25, out)) for _ in range(4)]
    for w in workers:
        w.start()
    waits = sorted(out.get(timeout=60) for _ in range(100))
    for w in workers:
        w.join(timeout=30)
        assert w.exitcode == 0
    assert waits == [n * 0.25 for n in range(100)]


def test_the_deployment_picks_redis_when_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = pacer(get_settings())
    assert isinstance(chosen, FilePacer) and chosen.folder == get_settings().core.data_dir / "pacing"
    monkeypatch.setenv("WOVEPAPER_REDIS_URL", "redis://127.0.0.1:6379/0")
    get_settings.cache_clear()
    assert isinstance(pacer(get_settings()), RedisPacer)
