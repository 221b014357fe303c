"""Check a question file against the PDFs: every answerable question's ``quote`` must be on one of
its ``pages``, as the project's own PDF parser extracts them (``python -m evals check-questions``).

Text is compared after Unicode NFKC folding (ligatures, full-width digits), case folding and
collapsing whitespace, so a quote copied from the extracted text across a line break still matches;
nothing else is forgiven.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path

from evals.qa import Question
from ingest.pdf import PdfLimits, PdfRejected, parse_pdf


def normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@dataclass(frozen=True, slots=True)
class Problem:
    line: int  # 1-based position among the questions
    question: str
    reason: str


def check(questions: list[Question], pdf_dir: Path) -> tuple[int, list[Problem]]:
    """(answerable questions checked, problems). A problem is a quote missing from its pages (the
    pages where it does occur are named), a missing quote or answer, or a PDF that is absent or
    does not parse; unanswerable questions must carry no answer and no quote."""
    pages_of: dict[str, list[str] | str] = {}  # arxiv id -> normalised page texts, or why not
    problems: list[Problem] = []
    checked = 0
    for line, q in enumerate(questions, start=1):

        def problem(reason: str, line: int = line, q: Question = q) -> None:
            problems.append(Problem(line, q.question, reason))

        if q.arxiv_id is None:
            if q.answer or q.quote:
                problem("an unanswerable question (arxiv_id null) has an answer or a quote")
            continue
        checked += 1
        if not q.quote or not q.answer or not q.pages:
            problem("an answerable question needs pages, an answer and a quote")
            continue
        if q.arxiv_id not in pages_of:
            pdf = pdf_dir / f"{q.arxiv_id}.pdf"
            try:
                pages_of[q.arxiv_id] = [normalise(p.text) for p in parse_pdf(pdf, PdfLimits()).pages]
            except (OSError, PdfRejected) as exc:
                pages_of[q.arxiv_id] = f"{pdf}: {exc}"
        pages = pages_of[q.arxiv_id]
        if isinstance(pages, str):
            problem(pages)
            continue
        quote = normalise(q.quote)
        if any(0 < n <= len(pages) and quote in pages[n - 1] for n in q.pages):
            continue
        elsewhere = [n for n, text in enumerate(pages, start=1) if quote in text]
        where = f"it is on page(s) {elsewhere}" if elsewhere else "it is on no page"
        problem(f"the quote is not on page(s) {list(q.pages)} of {q.arxiv_id}: {where}")
    return checked, problems
