"""Papers from anywhere, not only arXiv: one JSON object per line,

``{"paper_id", "title", "year", "venue_or_categories", "abstract", "doi",
  "authors": [{"name", "affiliation"} | "name", …]}``

``venue_or_categories`` is either arXiv categories ("cs.CL cs.LG") or a venue's name, which is kept as
the paper's journal reference. The paper id is kept as given (it must not look like an arXiv id of
another paper: prefix it, e.g. ``acl:P19-1001``); the year becomes the first version's date. Other
keys are ignored (the researcher gold files carry their answers in them: ``person`` …)."""

from __future__ import annotations

import datetime as dt

from catalog.text import clean_text
from ingest.records import BadRecord, PaperRecord, Version, is_category
from ingest.sources import jsonl_reader


def parse(value: dict[str, object]) -> PaperRecord:
    paper_id = value.get("paper_id")
    if not isinstance(paper_id, str) or not paper_id.strip() or len(paper_id) > 64:
        raise BadRecord("paper_id must be text of at most 64 characters")
    title = value.get("title")
    if not isinstance(title, str) or not clean_text(title):
        raise BadRecord("missing title")
    abstract = value.get("abstract")
    if abstract is not None and not isinstance(abstract, str):
        raise BadRecord("abstract is not text")
    names: list[str] = []
    affiliations: dict[str, tuple[str, ...]] = {}
    authors = value.get("authors")
    if not isinstance(authors, list):
        raise BadRecord("authors must be a list")
    for author in authors:
        entry = author if isinstance(author, dict) else {"name": author}
        written = entry.get("name")
        name = clean_text(written) if isinstance(written, str) else ""
        if not name:
            raise BadRecord("an author without a name")
        names.append(name)
        printed = entry.get("affiliation")
        if isinstance(printed, str) and clean_text(printed):
            affiliations[name] = (*affiliations.get(name, ()), clean_text(printed))
    where = value.get("venue_or_categories")
    where = clean_text(where) if isinstance(where, str) else ""
    categories = tuple(where.split()) if where and all(is_category(w) for w in where.split()) else ()
    year = value.get("year")
    versions = (Version(1, dt.datetime(year, 1, 1, tzinfo=dt.UTC)),) if isinstance(year, int) else ()
    doi = value.get("doi")
    return PaperRecord(
        arxiv_id=paper_id.strip(),
        title=clean_text(title),
        abstract=clean_text(abstract or ""),
        authors=tuple(names),
        categories=categories,
        versions=versions,
        doi=doi if isinstance(doi, str) and doi else None,
        journal_ref=None if categories or not where else where,
        affiliations=affiliations,
    )


read = jsonl_reader(parse)
