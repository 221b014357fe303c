"""Prompt templates and the tiny renderer that fills them (standard library only).

The chat's templates live beside this module as ``<name>.txt``: ``system`` (the rules, no
variables), ``answer`` (``passages``, ``question``) and ``condense`` (``history``, ``question``).
Templates use ``{name}`` fields. Rendering refuses a missing variable AND an unknown one, so a
renamed field never silently produces a prompt with a hole or a stray value in it.
"""

from __future__ import annotations

import string
from functools import cache
from importlib.resources import files

_FORMATTER = string.Formatter()


class PromptError(ValueError):
    """A template and its variables do not match; the message names the difference."""


def fields(template: str) -> set[str]:
    """The variable names a template uses (``{{`` and ``}}`` are literal braces)."""
    names = set()
    for _literal, name, spec, conversion in _FORMATTER.parse(template):
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            raise PromptError(f"only plain {{name}} fields are allowed, found {{{name}}}")
        names.add(name)
    return names


def render(template: str, /, **variables: object) -> str:
    expected = fields(template)
    missing = expected - variables.keys()
    unknown = variables.keys() - expected
    if missing or unknown:
        raise PromptError(
            f"prompt variables do not match: missing {sorted(missing)}, unknown {sorted(unknown)}"
        )
    return template.format(**{k: str(v) for k, v in variables.items()})


TEMPLATES = ("system", "answer", "condense")


@cache
def template(name: str) -> str:
    """The text of the template ``name`` (one of :data:`TEMPLATES`)."""
    if name not in TEMPLATES:
        raise PromptError(f"no prompt template {name!r}; there are {', '.join(TEMPLATES)}")
    return files(__name__).joinpath(f"{name}.txt").read_text(encoding="utf-8").strip()
