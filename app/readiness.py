"""Readiness: does each part this process depends on answer right now? (``/readyz``)

A small registry of named checks. Each check is a probe that returns a short statement of what it
found ("20,035 papers") or raises with the reason; a check marked optional is reported but does not
make the process unready (a Redis that is not configured is not a failure). Probes run concurrently,
in threads of their own (never waiting behind searches or page builds), each bounded by a timeout.

Adding a dependency means adding a check where its client is opened (``app/services.py``), e.g. the
chat's LLM endpoint: ``services.readiness.add(Check("llm", probe_llm))``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import anyio
import anyio.to_thread


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    probe: Callable[[], str]  # what it found, or raises with the reason it is not ready
    required: bool = True


@dataclass(frozen=True, slots=True)
class CheckResult:
    name: str
    ok: bool
    required: bool
    detail: str
    took_ms: float


class Readiness:
    """The registry: checks in the order they were added, run together by :meth:`run`."""

    def __init__(self, checks: list[Check] | None = None, *, timeout: float = 3.0) -> None:
        self.checks: list[Check] = []
        self.timeout = timeout
        self._limiter: anyio.CapacityLimiter | None = None
        for check in checks or []:
            self.add(check)

    def add(self, check: Check) -> None:
        if any(c.name == check.name for c in self.checks):
            raise ValueError(f"a readiness check named {check.name!r} is already registered")
        self.checks.append(check)

    async def run(self) -> list[CheckResult]:
        if self._limiter is None:  # its own threads: readiness never queues behind other work
            self._limiter = anyio.CapacityLimiter(max(1, len(self.checks)))
        results: dict[str, CheckResult] = {}
        async with anyio.create_task_group() as group:
            for check in self.checks:
                group.start_soon(self._one, check, results)
        return [results[c.name] for c in self.checks]

    async def _one(self, check: Check, results: dict[str, CheckResult]) -> None:
        started = time.perf_counter()
        try:
            with anyio.fail_after(self.timeout):
                detail = await anyio.to_thread.run_sync(
                    check.probe, limiter=self._limiter, abandon_on_cancel=True
                )
            ok = True
        except TimeoutError:
            ok, detail = False, f"no answer within {self.timeout:g} s"
        except Exception as exc:  # a probe reports any failure as "not ready", with the reason
            ok, detail = False, str(exc) or type(exc).__name__
        took = round((time.perf_counter() - started) * 1000, 1)
        results[check.name] = CheckResult(check.name, ok, check.required, detail, took)
