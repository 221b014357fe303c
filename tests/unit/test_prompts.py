from __future__ import annotations

import pytest

from prompts import PromptError, fields, render


def test_render_fills_every_field() -> None:
    assert render("Answer {question} from {context}.", question="why?", context="[1] x") == (
        "Answer why? from [1] x."
    )


def test_literal_braces_survive() -> None:
    assert render('JSON: {{"a": {n}}}', n=1) == 'JSON: {"a": 1}'


@pytest.mark.parametrize(
    ("template", "variables", "message"),
    [
        ("Hello {name}", {}, "missing ['name']"),
        ("Hello {name}", {"name": "x", "extra": 1}, "unknown ['extra']"),
    ],
)
def test_mismatched_variables_are_refused(template: str, variables: dict[str, object], message: str) -> None:
    with pytest.raises(PromptError, match=message.replace("[", r"\[").replace("]", r"\]")):
        render(template, **variables)


@pytest.mark.parametrize("template", ["{0}", "{name!r}", "{name:>10}", "{a.b}", "{a[0]}"])
def test_only_plain_fields_are_allowed(template: str) -> None:
    with pytest.raises(PromptError):
        fields(template)


def test_values_are_not_reinterpreted_as_templates() -> None:
    assert render("Q: {q}", q="{secret}") == "Q: {secret}"
