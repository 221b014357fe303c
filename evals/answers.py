"""Answer quality of the whole chat pipeline (``python -m evals qa --file X.jsonl``).

Each line is ``{"question", "arxiv_id", "pages", "answer"}``; ``arxiv_id: null`` marks a question the
papers do not answer. Every question runs through :class:`chat.pipeline.Chat` exactly as the API
runs it (retrieval over the configured corpus, the configured model, the citation checks), nothing
saved. Figures:

- ``citation_validity``: rendered citations ``[n]`` that resolve to a passage given for that answer,
  over all rendered citations (the code guarantees 1.0; anything else is a bug);
- ``evidence_gold_paper`` / ``evidence_gold_page``: answerable questions whose evidence passages
  include the gold paper / one of its gold pages (retrieval's share, before the model);
- ``cites_gold_paper`` / ``cites_gold_page``: answerable questions whose references include the gold
  paper / one of its gold pages;
- ``abstention``: unanswerable questions answered with the fixed no-evidence answer or a refusal;
  ``false_abstention``: answerable questions answered that way;
- ``answer_containment``: answerable questions whose normalised answer contains the normalised gold
  answer;
- ``quote_hit@1`` / ``quote_hit@3``: answerable questions whose first / first three key quotes hold
  the normalised gold answer (as whole words) or most of the gold evidence ``quote`` (at least
  ``QUOTE_SHARE`` of its words, in order, within one key quote) — found without the model;
- ``evidence_ms`` / ``first_token_ms``: p50 and p99 from the start of the turn;
- ``llm_unavailable``: answers that fell back to the evidence because the model did not answer.
"""

from __future__ import annotations

import asyncio
import difflib
import re
import statistics
import sys
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog import arxiv_ids
from chat.citations import declines
from chat.llm import LLM, ModelChoice
from chat.pipeline import NO_EVIDENCE, NOT_NAMED, UNAVAILABLE, Chat, Outcome, Turn
from chat.runtime import LocalLLM
from evals import jsonl
from retrieval.evidence import EvidenceSource
from retrieval.search import SearchService
from settings import Settings

_CITE = re.compile(r"\[(\d+)\]")


class AnswersFileError(ValueError):
    """A line of the questions file is malformed; the message names the line."""


@dataclass(frozen=True, slots=True)
class GoldQuestion:
    question: str
    arxiv_id: str | None
    pages: tuple[int, ...]
    answer: str
    quote: str = ""


def _gold_question(record: Any, _number: int) -> GoldQuestion:
    question = str(record["question"]).strip()
    raw = record.get("arxiv_id")
    paper = arxiv_ids.canonical(str(raw)) if raw else None
    pages = tuple(int(p) for p in record.get("pages") or ())
    answer = str(record.get("answer") or "")
    quote = str(record.get("quote") or "")
    if not question:
        raise jsonl.Rejected("the question is empty")
    return GoldQuestion(question, paper, pages, answer, quote)


def load(path: Path) -> list[GoldQuestion]:
    expected = "{question, arxiv_id, pages, answer}"
    return jsonl.load(path, _gold_question, expected=expected, error=AnswersFileError, noun="questions")


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    text = _CITE.sub(" ", text)
    return " ".join(re.sub(r"[^\w%.]+", " ", text).replace(". ", " ").split()).strip(" .")


QUOTE_SHARE = 0.5


def holds(text: str, q: GoldQuestion) -> bool:
    """Whether ``text`` holds the gold answer (whole words) or most of the gold quote's words in order."""
    found = f" {normalise(text)} "
    if q.answer and f" {normalise(q.answer)} " in found:
        return True
    if not q.quote:
        return False
    gold, words = normalise(q.quote).split(), normalise(text).split()
    if not gold:
        return False
    matcher = difflib.SequenceMatcher(None, gold, words, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / len(gold) >= QUOTE_SHARE


def quote_hit(q: GoldQuestion, outcome: Outcome, k: int) -> bool:
    return any(holds(quote.text, q) for quote in outcome.quotes[:k])


def abstained(outcome: Outcome) -> bool:
    if outcome.notice == NO_EVIDENCE or (outcome.notice or "").startswith(NOT_NAMED.partition("{")[0]):
        return True
    return bool(outcome.answer) and declines(outcome.answer) and not outcome.references


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return round(values[0] * 1000, 1)
    return round(statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] * 1000, 1)


def score(questions: list[GoldQuestion], outcomes: list[Outcome]) -> dict[str, Any]:
    rendered = valid = 0
    answerable = [(q, o) for q, o in zip(questions, outcomes, strict=True) if q.arxiv_id]
    unanswerable = [(q, o) for q, o in zip(questions, outcomes, strict=True) if not q.arxiv_id]
    for outcome in outcomes:
        given = {p.key for p in outcome.passages}
        by_n = {r["n"]: r["key"] for r in outcome.references}
        for n in _CITE.findall(outcome.answer):
            rendered += 1
            valid += by_n.get(int(n)) in given
    gold_paper = sum(any(r["arxiv_id"] == q.arxiv_id for r in o.references) for q, o in answerable)
    gold_page = sum(
        any(r["arxiv_id"] == q.arxiv_id and set(r["pages"]) & set(q.pages) for r in o.references)
        for q, o in answerable
    )
    evidence_paper = sum(any(p.arxiv_id == q.arxiv_id for p in o.passages) for q, o in answerable)
    evidence_page = sum(
        any(p.arxiv_id == q.arxiv_id and set(p.pages) & set(q.pages) for p in o.passages)
        for q, o in answerable
    )
    contained = sum(bool(q.answer) and normalise(q.answer) in normalise(o.answer) for q, o in answerable)
    quote_hits = {k: sum(quote_hit(q, o, k) for q, o in answerable) for k in (1, 3)}

    def share(count: int, total: int) -> float | None:
        return round(count / total, 4) if total else None

    evidence = [o.evidence_seconds for o in outcomes if o.evidence_seconds is not None]
    first = [o.first_token_seconds for o in outcomes if o.first_token_seconds is not None]
    return {
        "questions": len(questions),
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "citations_rendered": rendered,
        "citation_validity": share(valid, rendered) if rendered else 1.0,
        "evidence_gold_paper": share(evidence_paper, len(answerable)),
        "evidence_gold_page": share(evidence_page, len(answerable)),
        "cites_gold_paper": share(gold_paper, len(answerable)),
        "cites_gold_page": share(gold_page, len(answerable)),
        "abstention": share(sum(abstained(o) for _, o in unanswerable), len(unanswerable)),
        "false_abstention": share(sum(abstained(o) for _, o in answerable), len(answerable)),
        "answer_containment": share(contained, len(answerable)),
        "quote_hit@1": share(quote_hits[1], len(answerable)),
        "quote_hit@3": share(quote_hits[3], len(answerable)),
        "not_stated": share(
            sum(any(f["kind"] == "not_stated" for f in o.flags) for o in outcomes), len(outcomes)
        ),
        "unsupported": share(sum(o.unsupported and bool(o.answer) for o in outcomes), len(outcomes)),
        "llm_unavailable": sum(o.notice == UNAVAILABLE for o in outcomes),
        "evidence_ms": {"p50": _percentile(evidence, 50), "p99": _percentile(evidence, 99)},
        "first_token_ms": {"p50": _percentile(first, 50), "p99": _percentile(first, 99)},
    }


READY_WAIT = 3600.0  # seconds the embedded model may take to build, download and start


async def _ready(local: LocalLLM) -> None:
    """Wait until the embedded model answers, saying on stderr what it is doing meanwhile."""
    deadline = time.monotonic() + READY_WAIT
    shown = ""
    while (status := local.status()).state != "ready":
        if time.monotonic() > deadline:
            raise RuntimeError(f"the embedded model was not ready within {READY_WAIT:g} s: {status.detail}")
        if status.detail != shown:
            shown = status.detail
            print(f"chat model: {status.state} — {status.detail}", file=sys.stderr)
        await asyncio.sleep(1.0)


async def _answer_all(chat: Chat, questions: list[GoldQuestion], local: LocalLLM | None) -> list[Outcome]:
    if local is not None:
        await local.start()
    try:
        if local is not None:
            await _ready(local)
        outcomes = []
        for q in questions:
            outcome = Outcome()
            async for _event in chat.answer(Turn(None, q.question), outcome):
                pass
            outcomes.append(outcome)
        return outcomes
    finally:
        await chat.models.close()
        if local is not None:
            await local.stop()


def run(
    questions: list[GoldQuestion],
    *,
    settings: Settings,
    search: SearchService,
    llm: LLM | None,
    embedded: bool = False,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The figures, and one record per question (for ``--verbose``). ``llm`` answers when given;
    else, with ``embedded``, the app's embedded model (built and started as the app would)."""
    from catalog.db import make_engine

    engine = make_engine(settings.database_url)
    local = LocalLLM(settings.local_llm, settings.local_llm_dir) if embedded and llm is None else None
    dense = search.ranker.dense
    try:
        chat = Chat(
            settings,
            engine,
            EvidenceSource(search),
            ModelChoice(settings, llm, local),
            dense.embedder if dense is not None else None,
        )
        outcomes = asyncio.run(_answer_all(chat, questions, local))
    finally:
        engine.dispose()
    details = [
        {
            "question": q.question,
            "gold": [q.arxiv_id, list(q.pages), q.answer],
            "answer": o.answer or o.notice,
            "prompt": o.prompt,  # the passages as the model read them, and the question
            "reply": o.reply,  # the model's own words, before citations are checked
            "quotes": [quote.text for quote in o.quotes],
            "quote_hit@3": bool(q.arxiv_id) and quote_hit(q, o, 3),
            "references": [[r["arxiv_id"], r["pages"]] for r in o.references],
            "passages": [[p.arxiv_id, list(p.pages)] for p in o.passages],
            "flags": o.flags,
            "abstained": abstained(o),
            "first_token_s": o.first_token_seconds,
        }
        for q, o in zip(questions, outcomes, strict=True)
    ]
    return score(questions, outcomes), details
