"""The JSON API's documents (``app/documents.py``) are the catalogue's types plus their addresses:
every field the catalogue gives is published under its own name, or renamed, or held back for a
stated reason here. A field added to a catalogue type fails this test until it is placed, so the
API, MCP and the pages cannot silently drift apart."""

from __future__ import annotations

import dataclasses

import pytest

from app import documents
from catalog import institutions, papers, researchers
from retrieval import search

# The addresses the API adds to what the catalogue holds (absolute URLs, from the types' ``path``).
ADDRESSES = {"url", "markdown_url", "attribution_url", "institution_url"}

# (catalogue type, API type, {catalogue field: API field}, {catalogue field: why it is not published},
#  {API-only field beyond the addresses: where it comes from})
SOURCES: list[tuple[type, type, dict[str, str], dict[str, str], dict[str, str]]] = [
    (
        papers.PaperDetail,
        documents.Paper,
        {},
        {
            "activity_on": "the listing order's date; the paper's own dates are published",
            "citation_source": 'shown on the paper page only ("via …")',
            "modified_at": "the catalogue row's own clock (feeds, ETags), not the paper's",
        },
        {"full_text": "the full-text state, from catalog.indexing"},
    ),
    (papers.PaperSummary, documents.PaperItem, {}, {}, {}),
    (papers.PaperAuthor, documents.PaperAuthor, {}, {}, {}),
    (
        papers.AffiliationRef,
        documents.Affiliation,
        {},
        {"institution_name": "only used to build institution_url"},
        {},
    ),
    (papers.VersionInfo, documents.Version, {"number": "version"}, {}, {}),
    (researchers.Namesake, documents.ResearcherItem, {}, {}, {}),
    (researchers.NetworkNode, documents.Coauthor, {"shared": "shared_papers"}, {}, {}),
    (researchers.InstitutionRef, documents.InstitutionRef, {}, {}, {}),
    (
        researchers.Positions,
        documents.Positions,
        {"counted": "papers_counted", "total": "papers_total"},
        {},
        {"note": "one sentence saying what was counted"},
    ),
    (
        researchers.ResearcherProfile,
        documents.Researcher,
        {},
        {"name_key": "the resolver's internal folding of the name"},
        {
            "same_name_more": "catalog.researchers.SameName.more",
            "coauthors": "catalog.researchers.coauthor_network",
        },
    ),
    (
        institutions.InstitutionDetail,
        documents.Institution,
        {},
        {
            "links": "ROR's raw link records; website is published",
            "status": "ROR's record status (active, inactive, withdrawn), used when resolving names",
            "openalex_id": "an enrichment key, not a public identifier of ours",
        },
        {"researchers": "catalog.institutions.institution_researchers"},
    ),
    (institutions.InstitutionSummary, documents.InstitutionItem, {}, {}, {}),
    (papers.AuthorRef, documents.Author, {}, {}, {}),
    (search.Snippet, documents.SearchSnippet, {}, {"chunk_id": "the item's chunk hits name the chunks"}, {}),
    (
        search.ChunkHit,
        documents.SearchChunkHit,
        {},
        {"text": "the item's snippet carries the best passage"},
        {},
    ),
]


def _names(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


@pytest.mark.parametrize(
    ("source", "document", "renamed", "withheld", "added"),
    SOURCES,
    ids=[f"{s.__name__}-{d.__name__}" for s, d, *_ in SOURCES],
)
def test_every_catalogue_field_is_published_renamed_or_withheld(
    source: type, document: type, renamed: dict[str, str], withheld: dict[str, str], added: dict[str, str]
) -> None:
    catalogue, published = _names(source), _names(document)
    unplaced = catalogue - published - renamed.keys() - withheld.keys()
    assert not unplaced, f"{source.__name__} fields neither published nor withheld: {sorted(unplaced)}"
    assert set(renamed.values()) <= published
    assert not (withheld.keys() & published), "a withheld field is published after all"
    unexplained = published - catalogue - set(renamed.values()) - ADDRESSES - added.keys()
    assert not unexplained, f"{document.__name__} fields with no catalogue source: {sorted(unexplained)}"


def test_every_api_document_type_is_accounted_for() -> None:
    """A new document type that mirrors a catalogue type joins SOURCES (the lists, search and
    full-text types are the API's own shapes)."""
    own = {
        "PaperList", "ResearcherList", "InstitutionList", "FullTextState",
        "SearchAuthor", "SearchItem", "SearchFacet", "SearchAnswer",
    }  # fmt: skip
    types = {
        name
        for name, value in vars(documents).items()
        if dataclasses.is_dataclass(value) and getattr(value, "__module__", None) == documents.__name__
    }
    mirrored = {d.__name__ for _, d, *_ in SOURCES}
    assert types - own - mirrored == set()


def test_carry_takes_the_catalogue_fields_and_the_added_ones() -> None:
    """``documents.carry`` builds every mirrored document: shared fields from the catalogue value,
    the rest from what the caller adds; a field neither gives is an error, never a silent gap."""
    ref = researchers.InstitutionRef(7, "CERN", "01ggx4157", "Switzerland")
    carried = documents.carry(documents.InstitutionRef, ref, url="https://x.test/i/7")
    assert carried == documents.InstitutionRef(7, "CERN", "01ggx4157", "Switzerland", "https://x.test/i/7")
    with pytest.raises(TypeError):
        documents.carry(documents.InstitutionRef, ref)


def test_carry_takes_each_field_from_the_first_source_that_has_it() -> None:
    @dataclasses.dataclass
    class Named:
        name: str

    ref = researchers.InstitutionRef(7, "CERN", "01ggx4157", "Switzerland")
    carried = documents.carry(
        documents.InstitutionRef, Named("Conseil européen"), ref, url="https://x.test/i/7"
    )
    assert carried == documents.InstitutionRef(
        7, "Conseil européen", "01ggx4157", "Switzerland", "https://x.test/i/7"
    )
