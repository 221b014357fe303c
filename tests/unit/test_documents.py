"""The API's documents against the catalogue types they are built from: a field the catalogue gains
reaches the JSON documents, or is named here as deliberately left out."""

from __future__ import annotations

import dataclasses

import pytest

from app import documents as doc
from catalog import institutions, papers, researchers
from retrieval import search

# (document, catalogue type, the catalogue's fields the document leaves out, and why)
BUILT_FROM = [
    (doc.PaperItem, papers.PaperSummary, set()),
    (doc.Author, papers.AuthorRef, set()),
    # the activity date is the listing's sort key; the citation source and row time are bookkeeping
    (doc.Paper, papers.PaperDetail, {"activity_on", "citation_source", "modified_at"}),
    (doc.PaperAuthor, papers.PaperAuthor, set()),
    (doc.Affiliation, papers.AffiliationRef, {"institution_name"}),  # the link carries it
    (doc.Version, papers.VersionInfo, {"number"}),  # named ``version``
    (doc.Namesake, researchers.Namesake, set()),
    (doc.ResearcherItem, researchers.Namesake, set()),
    (doc.Coauthor, researchers.NetworkNode, {"shared"}),  # named ``shared_papers``
    (doc.InstitutionRef, researchers.InstitutionRef, set()),
    (doc.Positions, researchers.Positions, {"counted", "total"}),  # named ``papers_…``
    (doc.Researcher, researchers.ResearcherProfile, {"name_key"}),  # an internal matching key
    (doc.InstitutionItem, institutions.InstitutionSummary, set()),
    (doc.InstitutionItem, researchers.InstitutionRef, set()),
    # links are free-form enrichment; status and OpenAlex id are bookkeeping
    (doc.Institution, institutions.InstitutionDetail, {"links", "status", "openalex_id"}),
    (doc.SearchSnippet, search.Snippet, {"chunk_id"}),  # the item's chunks name it
    (doc.SearchChunkHit, search.ChunkHit, {"text"}),  # the snippet carries the best one's text
]


@pytest.mark.parametrize(
    ("document", "source", "left_out"), BUILT_FROM, ids=lambda t: getattr(t, "__name__", "")
)
def test_a_document_carries_its_catalogue_fields(document: type, source: type, left_out: set[str]) -> None:
    carried = {f.name for f in dataclasses.fields(document)}
    catalogue = {f.name for f in dataclasses.fields(source)}
    assert catalogue - carried == left_out


def test_carry_takes_the_catalogue_values_and_the_added_ones() -> None:
    ref = researchers.InstitutionRef(7, "CERN", "01ggx4157", "Switzerland")
    assert doc.carry(doc.InstitutionRef, ref, url="https://x/i/7") == doc.InstitutionRef(
        7, "CERN", "01ggx4157", "Switzerland", "https://x/i/7"
    )
    with pytest.raises(TypeError):  # what the catalogue lacks and nobody added is an error, not a gap
        doc.carry(doc.InstitutionRef, ref)
