"""ruff and mypy are part of the suite: the code base stays lint- and type-clean."""

from __future__ import annotations

import subprocess
import sys

from settings import PROJECT_ROOT

BIN = PROJECT_ROOT / ".venv" / "bin"


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600, check=False)


def test_ruff_check() -> None:
    result = _run(sys.executable, "-m", "ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format() -> None:
    result = _run(sys.executable, "-m", "ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy() -> None:
    result = _run(sys.executable, "-m", "mypy", ".")
    assert result.returncode == 0, result.stdout + result.stderr
