"""schema.org JSON-LD for every page: the site (Organization, WebSite with a SearchAction), the
breadcrumb trail, and the thing the page is about (ScholarlyArticle, Person, Organization).

Builders return plain dicts; templates serialise them with Jinja's ``tojson``, which escapes ``<``,
``>`` and ``&`` so no title or name can close the ``<script>`` element.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.site import Site
from catalog.institutions import InstitutionDetail
from catalog.papers import PaperDetail
from catalog.researchers import ResearcherProfile

JsonLd = dict[str, Any]


def graph(site: Site, crumbs: Sequence[tuple[str, str]], nodes: Sequence[JsonLd]) -> JsonLd:
    """One ``@graph`` with the site's nodes, the breadcrumbs (when deeper than home) and ``nodes``."""
    parts: list[JsonLd] = [organization_of_site(site), website(site)]
    if len(crumbs) > 1:
        parts.append(breadcrumb_list(site, crumbs))
    parts.extend(nodes)
    return {"@context": "https://schema.org", "@graph": parts}


def organization_of_site(site: Site) -> JsonLd:
    node: JsonLd = {
        "@type": "Organization",
        "@id": site.url("/#organization"),
        "name": site.name,
        "url": site.url("/"),
        "description": site.description,
    }
    if site.contact_email:
        node["email"] = site.contact_email
        node["contactPoint"] = [
            {"@type": "ContactPoint", "contactType": "customer support", "email": site.contact_email,
             "url": site.url("/contact")}
        ]  # fmt: skip
    return node


def website(site: Site) -> JsonLd:
    return {
        "@type": "WebSite",
        "@id": site.url("/#website"),
        "name": site.name,
        "url": site.url("/"),
        "description": site.description,
        "inLanguage": "en",
        "publisher": {"@id": site.url("/#organization")},
        "potentialAction": {
            "@type": "SearchAction",
            "target": {"@type": "EntryPoint", "urlTemplate": site.url("/search?q={search_term_string}")},
            "query-input": "required name=search_term_string",
        },
    }


def breadcrumb_list(site: Site, crumbs: Sequence[tuple[str, str]]) -> JsonLd:
    return {
        "@type": "BreadcrumbList",
        "itemListElement": [
            {"@type": "ListItem", "position": i, "name": name, "item": site.url(path)}
            for i, (name, path) in enumerate(crumbs, start=1)
        ],
    }


def _main_entity(site: Site, path: str, kind: str, fragment: str) -> JsonLd:
    """The node a page is about: its type, an ``@id`` other nodes can point to, and the page's URL."""
    url = site.url(path)
    return {"@type": kind, "@id": f"{url}#{fragment}", "url": url, "mainEntityOfPage": url}


def scholarly_article(site: Site, paper: PaperDetail) -> JsonLd:
    node: JsonLd = {
        **_main_entity(site, paper.path, "ScholarlyArticle", "article"),
        "headline": paper.title[:110],
        "name": paper.title,
        "abstract": paper.abstract,
        "identifier": {"@type": "PropertyValue", "propertyID": "arXiv", "value": paper.arxiv_id},
        "sameAs": [paper.abs_url],
        "author": [
            {"@type": "Person", "name": a.name, **({"url": site.url(a.path)} if a.path else {})}
            for a in paper.authors
        ],
        "about": paper.categories,
        "isAccessibleForFree": True,
    }
    if paper.published_on:
        node["datePublished"] = paper.published_on.isoformat()
    if paper.updated_on or paper.activity_on:
        node["dateModified"] = (paper.updated_on or paper.activity_on).isoformat()  # type: ignore[union-attr]
    if paper.doi:
        node["sameAs"].append(f"https://doi.org/{paper.doi}")
    if paper.citation_count is not None:
        node["citationCount"] = paper.citation_count  # not in schema.org's core; harmless for readers
    if paper.license:
        node["license"] = paper.license
    return node


def person(site: Site, profile: ResearcherProfile) -> JsonLd:
    same_as = []
    if profile.orcid:
        same_as.append(f"https://orcid.org/{profile.orcid}")
    if profile.openalex_id:
        same_as.append(f"https://openalex.org/{profile.openalex_id}")
    if profile.semantic_scholar_id:
        same_as.append(f"https://www.semanticscholar.org/author/{profile.semantic_scholar_id}")
    node: JsonLd = {
        **_main_entity(site, profile.path, "Person", "person"),
        "name": profile.name,
        "description": f"{profile.name}: {profile.papers} papers in this archive.",
    }
    if same_as:
        node["sameAs"] = same_as
    if profile.name_variants:
        node["alternateName"] = profile.name_variants
    if profile.institutions:
        node["affiliation"] = [
            {"@type": "Organization", "name": i.name, "url": site.url(i.path)} for i in profile.institutions
        ]
    return node


def organization(site: Site, institution: InstitutionDetail) -> JsonLd:
    node: JsonLd = {
        **_main_entity(site, institution.path, "Organization", "organization"),
        "name": institution.name,
    }
    if institution.aliases or institution.acronyms:
        node["alternateName"] = [*institution.acronyms, *institution.aliases]
    same_as = [u for u in (institution.ror_url, institution.website) if u]
    if same_as:
        node["sameAs"] = same_as
    if institution.location:
        node["address"] = {
            "@type": "PostalAddress",
            **({"addressLocality": institution.city} if institution.city else {}),
            **({"addressCountry": institution.country_code} if institution.country_code else {}),
        }
    if institution.established:
        node["foundingDate"] = str(institution.established)
    return node
