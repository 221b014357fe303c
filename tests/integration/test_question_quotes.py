"""``python -m evals check-questions``: each evidence quote is found on its page of the real PDF,
and a quote on the wrong page, a missing PDF or an unanswerable question with a quote is reported."""

from __future__ import annotations

import json
from pathlib import Path

from evals import qa, quotes
from settings import SHARED_DATA

PDFS = SHARED_DATA / "pdfs" / "arxiv"
ADAM = "1412.6980"
DEFAULTS = "Good default settings for the tested machine learning problems are α = 0.001"


def _questions(tmp_path: Path, records: list[dict[str, object]]) -> list[qa.Question]:
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return qa.load(path)


def test_quotes_are_found_on_their_pages_and_misplaced_ones_reported(tmp_path: Path) -> None:
    def ask(pages: list[int], quote: str | None = DEFAULTS, paper: str | None = ADAM) -> dict[str, object]:
        answer = None if paper is None else "0.001"
        return {
            "question": "Adam's defaults?",
            "arxiv_id": paper,
            "pages": pages,
            "answer": answer,
            "quote": quote,
        }

    questions = _questions(
        tmp_path,
        [
            ask([2]),
            ask([3, 2]),
            {**ask([2]), "quote": "  GOOD default   settings\nfor the tested"},  # case and spaces forgiven
            ask([5]),
            ask([1], quote="a sentence that is in no paper"),
            {**ask([1]), "arxiv_id": "2412.99999"},
            {
                "question": "What does Gemini use?",
                "arxiv_id": None,
                "pages": [],
                "answer": None,
                "quote": "x",
            },
            {
                "question": "What does Gemini use?",
                "arxiv_id": None,
                "pages": [],
                "answer": None,
                "quote": None,
            },
        ],
    )
    checked, problems = quotes.check(questions, PDFS)
    assert checked == 6
    assert [p.line for p in problems] == [4, 5, 6, 7]
    assert "it is on page(s) [2]" in problems[0].reason
    assert "it is on no page" in problems[1].reason
    assert "2412.99999.pdf" in problems[2].reason
    assert "unanswerable" in problems[3].reason


def test_the_committed_question_set_loads_with_its_unanswerable_questions() -> None:
    questions = qa.load(Path(__file__).resolve().parents[2] / "evals/questions/pdf-pages.jsonl")
    answerable = [q for q in questions if q.arxiv_id]
    assert len(answerable) >= 100 and len(questions) - len(answerable) >= 20
    assert all(q.pages and q.answer and q.quote for q in answerable)
    assert all((PDFS / f"{q.arxiv_id}.pdf").exists() for q in answerable)
