"""Docs as tests: the manual (docs/, MkDocs) builds strictly, its configuration tables list every
setting, and the README stays a front door."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from settings import PROJECT_ROOT, SECTIONS

README = (PROJECT_ROOT / "README.md").read_text()
DOCS = PROJECT_ROOT / "docs"


def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", PROJECT_ROOT / "scripts" / "docs_hooks.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_configuration_tables_list_every_setting() -> None:
    """The tables are generated from settings.py by the MkDocs hook, on the page that holds its marker."""
    hooks = _hooks()
    assert hooks.MARKER in (DOCS / "configuration.md").read_text()
    assert "scripts/docs_hooks.py" in (PROJECT_ROOT / "mkdocs.yml").read_text()
    table = hooks.on_page_markdown((DOCS / "configuration.md").read_text())
    documented = re.findall(r"^\| `(WOVEPAPER_[A-Z0-9_]+)` \|", table, flags=re.M)
    fields = [f"WOVEPAPER_{name.upper()}" for section in SECTIONS for name in section.model_fields]
    assert documented == fields
    assert hooks.MARKER not in table


def test_the_manual_builds_strictly(tmp_path: Path) -> None:
    """`mkdocs build --strict`: a broken link or anchor, a page missing from the nav, a bad hook fail."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(tmp_path / "site")],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    page = (tmp_path / "site" / "configuration" / "index.html").read_text()
    assert "WOVEPAPER_DATABASE_URL" in page and "<!-- settings-table -->" not in page


@pytest.mark.parametrize("name", ["chat-figures.md", "decisions/claim-checking.md"])
def test_pages_kept_at_their_paths_are_in_the_nav(name: str) -> None:
    assert f": {name}" in (PROJECT_ROOT / "mkdocs.yml").read_text()


def test_every_setting_has_a_description() -> None:
    for section in SECTIONS:
        for name, field in section.model_fields.items():
            assert field.description, f"{section.__name__}.{name} has no description"


def test_readme_gives_the_two_commands() -> None:
    assert "make run" in README and "make test" in README


def test_the_readme_is_a_front_door() -> None:
    """At most 250 lines, pointing at the manual; the manual holds the rest."""
    assert len(README.splitlines()) <= 250
    assert "docs/" in README and "make docs" in README


def test_the_deployment_files_name_only_real_settings() -> None:
    """compose.yaml and the Dockerfile configure through settings that exist (a renamed setting
    would otherwise be silently ignored in production)."""
    fields = {f"WOVEPAPER_{name.upper()}" for section in SECTIONS for name in section.model_fields}
    for name in ("compose.yaml", "Dockerfile"):
        used = set(re.findall(r"\b(WOVEPAPER_[A-Z0-9_]+)\b", (PROJECT_ROOT / name).read_text()))
        assert used, f"{name} sets no WOVEPAPER_ variable"
        assert used - fields == set(), f"{name} sets unknown settings"


def test_compose_runs_commands_that_exist() -> None:
    import yaml

    compose = yaml.safe_load((PROJECT_ROOT / "compose.yaml").read_text())
    modules = set()
    for service in compose["services"].values():
        command = service.get("command", [])
        if command[:2] == ["python", "-m"]:
            modules.add(command[2])
    assert modules == {"app", "indexing", "catalog"}
    for module in modules:
        assert (PROJECT_ROOT / module / "__main__.py").is_file()


def test_the_image_and_the_wheel_hold_every_package() -> None:
    """A package missing from the Dockerfile or the wheel would only fail in production."""
    import tomllib

    project = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())
    wheel = project["tool"]["hatch"]["build"]["targets"]["wheel"]
    packages = {p.parent.name for p in PROJECT_ROOT.glob("*/__init__.py")} - {"tests", "benchmarks"}
    assert set(wheel["packages"]) == packages
    assert set(wheel["only-include"]) == packages | {"settings.py"}
    copied = set(re.findall(r"^COPY (\w+) \./\1$", (PROJECT_ROOT / "Dockerfile").read_text(), flags=re.M))
    assert copied == packages
