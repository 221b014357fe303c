"""The evals' gold files (evals.jsonl and its readers in qa, answers and claims): the files in the
repository load, and a bad line is reported by its number, blank lines counted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from evals import answers, claims, qa
from settings import PROJECT_ROOT

EVALS = PROJECT_ROOT / "evals"


@pytest.mark.parametrize("name", ["chat-demo.jsonl", "pdf-pages.jsonl"])
def test_the_question_files_load(name: str) -> None:
    questions = qa.load(EVALS / "questions" / name)
    assert [q.question for q in answers.load(EVALS / "questions" / name)] == [q.question for q in questions]


@pytest.mark.parametrize("name", ["dev.jsonl", "holdout.jsonl"])
def test_the_claim_files_load(name: str) -> None:
    assert all(c.kind in claims.KINDS for c in claims.load(EVALS / "claims" / name))


def test_a_claim_without_an_id_is_named_by_its_line(tmp_path: Path) -> None:
    path = tmp_path / "claims.jsonl"
    path.write_text('\n{"passage": "p", "claim": "c", "supported": true, "kind": "correct"}\n')
    assert [c.id for c in claims.load(path)] == ["2"]


@pytest.mark.parametrize(
    ("load", "text", "message"),
    [
        (qa.load, "\n[1]\n", ":2: expected {question, arxiv_id, pages}: list indices"),
        (qa.load, '{"question": "q"}\n', ":1: expected {question, arxiv_id, pages}: 'arxiv_id'"),
        (qa.load, '{"question": " ", "arxiv_id": null}\n', ":1: the question is empty"),
        (qa.load, '{"question": "q", "arxiv_id": null, "pages": [1]}\n', ":1: an unanswerable"),
        (answers.load, '{"question": "q", "arxiv_id": "x"}\n', ":1: expected {question, arxiv_id, pages, "),
        (claims.load, '"x"\n', ':1: expected {"id", "passage", "claim", "supported", "kind"}: a line'),
        (claims.load, '{"passage": "p", "claim": "c", "supported": true, "kind": "odd"}\n', ":1: kind"),
        (claims.load, "\n", " has no claims"),
    ],
)
def test_a_bad_line_is_reported_by_its_number(
    tmp_path: Path, load: Callable[[Path], object], text: str, message: str
) -> None:
    path = tmp_path / "gold.jsonl"
    path.write_text(text)
    with pytest.raises(ValueError) as raised:
        load(path)
    assert str(raised.value).startswith(f"{path}{message}")
