"""Docs as tests: the README's configuration table lists every setting."""

from __future__ import annotations

import re

from settings import PROJECT_ROOT, SECTIONS

README = (PROJECT_ROOT / "README.md").read_text()


def test_every_setting_is_in_the_readme_table() -> None:
    documented = set(re.findall(r"^\| `(WOVEPAPER_[A-Z0-9_]+)` \|", README, flags=re.M))
    fields = {f"WOVEPAPER_{name.upper()}" for section in SECTIONS for name in section.model_fields}
    assert fields - documented == set(), "settings missing from the README configuration table"
    assert documented - fields == set(), "README documents settings that do not exist"


def test_every_setting_has_a_description() -> None:
    for section in SECTIONS:
        for name, field in section.model_fields.items():
            assert field.description, f"{section.__name__}.{name} has no description"


def test_readme_gives_the_two_commands() -> None:
    assert "make run" in README and "make test" in README


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
