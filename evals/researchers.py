"""Author disambiguation measured on gold (``python -m evals researchers``).

The gold file's papers are imported into a fresh temporary SQLite catalogue through the product's
own path (``ingest.sources.generic`` → ``Importer`` → ``ResearcherResolver``); every gold mention's
researcher is then compared with its gold person. The gold fields (``person``, ``person_src``,
``acl_id``, ``orcid_attr``) are read only here, for scoring and fitting, never by the importer.

Figures: pairwise and B-cubed precision/recall/F1 over all gold mentions and over the mentions of
names (as written) that several gold persons share, and predicted vs gold cluster counts.
Baselines need no catalogue: one researcher per exact name string; the same, split into connected
components of papers sharing a co-author name string.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np
from scipy.cluster.hierarchy import DisjointSet, fcluster, linkage
from scipy.spatial.distance import squareform
from sqlalchemy import select

from catalog.db import make_engine, migrate
from catalog.models import Authorship, Paper
from catalog.names import display_name
from ingest.importer import Importer, evidence_of
from ingest.records import PaperRecord
from ingest.sources import generic
from people.evidence import FEATURES, Profile, affiliation_overlap, affiliation_words
from people.name_counts import coauthor_groups, pair_namesakes
from people.names import ParsedName, names_compatible, parse_name
from people.resolver import Candidate, ResearcherResolver, Rule
from people.weights import BIAS, JOIN_AT, MERGE_AT, RARE_NAME_BELOW, WEIGHTS

RESOLVERS = ("evidence", "old", "exact-name", "coauthor-components", "ceiling")
# Not in "all": it embeds every title and abstract with the bundled model (a minute or two a file).
ORACLES = ("ceiling-topic",)
Mention = tuple[str, int]  # (paper id, author position)
FOLDS = 5


@dataclass(frozen=True, slots=True)
class Gold:
    persons: dict[Mention, str]  # gold mention → person
    names: dict[Mention, str]  # every mention → the name as written
    coauthors: dict[Mention, frozenset[str]]  # every mention → the other names on its paper
    blocks: dict[Mention, str]  # gold mention → its loose name key (folds for cross-validation)

    @property
    def ambiguous(self) -> set[Mention]:
        """Gold mentions of a name (as written) that several gold persons share."""
        people: dict[str, set[str]] = defaultdict(set)
        for m, person in self.persons.items():
            people[self.names[m]].add(person)
        return {m for m in self.persons if len(people[self.names[m]]) > 1}


def load(path: Path) -> Gold:
    persons: dict[Mention, str] = {}
    names: dict[Mention, str] = {}
    coauthors: dict[Mention, frozenset[str]] = {}
    blocks: dict[Mention, str] = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            paper = json.loads(line)
            written = [display_name(a["name"] if isinstance(a, dict) else a) for a in paper["authors"]]
            for i, author in enumerate(paper["authors"]):
                m = (paper["paper_id"], i)
                names[m] = written[i]
                coauthors[m] = frozenset(written[:i] + written[i + 1 :])
                if isinstance(author, dict) and author.get("person"):
                    persons[m] = author["person"]
                    parsed = parse_name(written[i])
                    blocks[m] = parsed.block if parsed else written[i]
    return Gold(persons, names, coauthors, blocks)


# -- metrics ---------------------------------------------------------------------------------------


def scores(
    predicted: Mapping[Mention, Hashable], gold: Mapping[Mention, str], over: Iterable[Mention]
) -> dict:
    """Pairwise and B-cubed precision/recall/F1 of ``predicted`` clusters over the mentions ``over``."""
    mentions = [m for m in over if m in gold]
    pred = {m: predicted.get(m, ("alone", m)) for m in mentions}  # an unresolved mention is alone
    both = Counter((pred[m], gold[m]) for m in mentions)
    sizes_pred = Counter(pred.values())
    sizes_gold = Counter(gold[m] for m in mentions)

    def pairs(n: int) -> int:
        return n * (n - 1) // 2

    tp = sum(pairs(n) for n in both.values())
    p_pairs, g_pairs = sum(map(pairs, sizes_pred.values())), sum(map(pairs, sizes_gold.values()))
    b_p = sum(both[pred[m], gold[m]] / sizes_pred[pred[m]] for m in mentions) / max(len(mentions), 1)
    b_r = sum(both[pred[m], gold[m]] / sizes_gold[gold[m]] for m in mentions) / max(len(mentions), 1)
    pw_p = tp / p_pairs if p_pairs else 1.0
    pw_r = tp / g_pairs if g_pairs else 1.0
    return {
        "mentions": len(mentions),
        "pairwise": _prf(pw_p, pw_r),
        "bcubed": _prf(b_p, b_r),
        "clusters_predicted": len(sizes_pred),
        "clusters_gold": len(sizes_gold),
    }


def _prf(p: float, r: float) -> dict[str, float]:
    return {"p": round(p, 4), "r": round(r, 4), "f1": round(2 * p * r / (p + r) if p + r else 0.0, 4)}


def report(predicted: Mapping[Mention, Hashable], gold: Gold) -> dict:
    return {
        "all": scores(predicted, gold.persons, gold.persons),
        "ambiguous_names": scores(predicted, gold.persons, gold.ambiguous),
    }


# -- predictions -----------------------------------------------------------------------------------


def exact_name(gold: Gold) -> dict[Mention, Hashable]:
    return dict(gold.names)


def coauthor_components(gold: Gold) -> dict[Mention, Hashable]:
    """Mentions of one exact name, joined when their papers share a co-author name string."""
    by_name: dict[str, list[Mention]] = defaultdict(list)
    for m, name in gold.names.items():
        by_name[name].append(m)
    predicted: dict[Mention, Hashable] = {}
    for name, mentions in by_name.items():
        groups = coauthor_groups([gold.coauthors[m] for m in mentions])
        predicted.update({m: (name, group) for m, group in zip(mentions, groups, strict=True)})
    return predicted


def ceiling(path: Path, gold: Gold) -> dict[Mention, Hashable]:
    """Not a resolver, an upper bound read off the gold: each person's mentions joined wherever the
    evidence the resolver sees links two of them (a shared co-author, a printed affiliation word, a
    co-author's co-author anywhere in the file, or a rare compatible name) and never two persons.
    Recall beyond it needs joining papers of one person that share none of these."""
    neighbours: dict[str, set[str]] = defaultdict(set)  # co-author key → the keys it wrote with
    seen: list[tuple[Mention, ParsedName, frozenset[str], frozenset[str]]] = []
    for record in generic.read(path):
        if not isinstance(record, PaperRecord):
            continue
        names = [parse_name(a) for a in record.authors]
        keys = frozenset(n.coauthor_key for n in names if n)
        for key in keys:
            neighbours[key] |= keys
        for i, (written, person) in enumerate(zip(record.authors, names, strict=True)):
            if person is not None and (record.arxiv_id, i) in gold.persons:
                printed = record.affiliations.get(written, ())
                words = frozenset(w for raw in printed for w in affiliation_words(raw))
                seen.append(((record.arxiv_id, i), person, keys - {person.coauthor_key}, words))
    by_person: dict[str, list[int]] = defaultdict(list)
    for i, (m, *_rest) in enumerate(seen):
        by_person[gold.persons[m]].append(i)
    linked = DisjointSet(range(len(seen)))

    def reach(i: int) -> set[str]:
        _m, person, coauthors, _words = seen[i]
        return set(coauthors).union(*(neighbours[k] for k in coauthors)) - {person.coauthor_key}

    for members in by_person.values():
        reached = {i: reach(i) for i in members}
        for a, b in combinations(members, 2):
            (_, pa, ca, wa), (_, pb, cb, wb) = seen[a], seen[b]
            rare = (
                pa.surname == pb.surname
                and names_compatible(pa, pb)
                and pair_namesakes(pa, pb) < RARE_NAME_BELOW
            )
            if (
                not ca.isdisjoint(cb)
                or affiliation_overlap(wa, wb)
                or not reached[a].isdisjoint(reached[b])
                or rare
            ):
                linked.merge(a, b)
    return {m: ("ceiling", linked[i]) for i, (m, *_rest) in enumerate(seen)}


# Cosine distances at which ``ceiling_topic`` tries joining the ceiling's pieces (0: join nothing).
TOPIC_DISTANCES = tuple(round(0.05 * i, 2) for i in range(0, 17))

Embed = Callable[[Sequence[str]], Sequence[Sequence[float]]]


def ceiling_topic(path: Path, gold: Gold, embed: Embed) -> tuple[dict[Mention, Hashable], dict]:
    """The ceiling's pieces joined by what their papers are about, with every threshold tried and the
    best kept (another oracle: the threshold is chosen by the gold). Within each loose name key, the
    pieces are clustered by average linkage over the cosine distance of the centroids of their papers'
    title + abstract embeddings (the bundled embedder). It answers whether topic could bridge papers
    of one person that no linking evidence joins: if no threshold beats the ceiling, it cannot."""
    pieces: dict[Hashable, list[Mention]] = defaultdict(list)
    for m, piece in ceiling(path, gold).items():
        pieces[piece].append(m)
    texts = {
        r.arxiv_id: f"{r.title}. {r.abstract or ''}" for r in generic.read(path) if isinstance(r, PaperRecord)
    }
    ids = sorted({m[0] for m in gold.persons})
    vectors = dict(zip(ids, np.asarray(embed([texts[i] for i in ids]), dtype=float), strict=True))
    by_block: dict[str, list[list[Mention]]] = defaultdict(list)
    for mentions in pieces.values():  # a piece of swapped spellings is filed under its first
        by_block[gold.blocks[mentions[0]]].append(mentions)
    curve, best = [], None
    for distance in TOPIC_DISTANCES:
        predicted: dict[Mention, Hashable] = {}
        for block, groups in by_block.items():
            labels = _topic_clusters([np.mean([vectors[m[0]] for m in g], axis=0) for g in groups], distance)
            for group, label in zip(groups, labels, strict=True):
                predicted.update(dict.fromkeys(group, (block, label)))
        figures = report(predicted, gold)
        curve.append(
            {"distance": distance} | {k: figures[k]["bcubed"]["f1"] for k in ("all", "ambiguous_names")}
        )
        if (
            best is None
            or figures["ambiguous_names"]["bcubed"]["f1"] > best[1]["ambiguous_names"]["bcubed"]["f1"]
        ):
            best = (predicted, figures, distance)
    assert best is not None
    return best[0], {"best_distance": best[2], "curve": curve}


def _topic_clusters(centroids: list[np.ndarray], distance: float) -> list[int]:
    if len(centroids) == 1 or distance <= 0:
        return list(range(len(centroids)))
    unit = np.array([c / (np.linalg.norm(c) or 1.0) for c in centroids])
    condensed = squareform(np.clip(1.0 - unit @ unit.T, 0.0, 2.0), checks=False)
    return [int(x) for x in fcluster(linkage(condensed, method="average"), distance, criterion="distance")]


def imported(path: Path, resolver: ResearcherResolver, batch_size: int = 1000) -> dict[Mention, Hashable]:
    """Import the file into a fresh temporary SQLite catalogue; each mention's researcher id."""
    with tempfile.TemporaryDirectory(prefix="wovepaper-researchers-") as tmp:
        engine = make_engine(f"sqlite:///{tmp}/catalogue.sqlite3")
        migrate(engine)
        Importer(engine, source="generic", batch_size=batch_size, resolver=resolver).run(generic.read(path))
        with engine.connect() as conn:
            rows = conn.execute(
                select(Paper.arxiv_id, Authorship.position, Authorship.researcher_id).join(
                    Authorship, Authorship.paper_id == Paper.id
                )
            ).all()
        engine.dispose()
    return {(pid, pos): rid if rid is not None else ("alone", pid, pos) for pid, pos, rid in rows}


def run(
    path: Path, resolver: str, weights: Sequence[float] = WEIGHTS, bias: float = BIAS, orders: int = 0
) -> dict:
    """The figures of one resolver on the file, in its order; with ``orders`` N, also the mean and
    range of the B-cubed F1s over N shuffled import orders (an incremental resolver depends on the
    order papers arrive in)."""
    gold = load(path)
    started = time.perf_counter()
    oracle: dict = {}
    if resolver == "ceiling-topic":
        from retrieval.embedder import make_embedder
        from settings import get_settings

        predicted, oracle = ceiling_topic(path, gold, make_embedder(get_settings()).embed)
    else:
        predicted = _predict(path, gold, resolver, weights, bias)
    seconds = time.perf_counter() - started
    figures = (
        {"file": path.name, "resolver": resolver}
        | report(predicted, gold)
        | oracle
        | {"seconds": round(seconds, 2)}
    )
    if orders and resolver in ("evidence", "old"):
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        runs = []
        with tempfile.TemporaryDirectory(prefix="wovepaper-orders-") as tmp:
            for seed in range(orders):
                random.Random(seed).shuffle(lines)
                shuffled = Path(tmp) / path.name
                shuffled.write_text("\n".join(lines) + "\n", encoding="utf-8")
                runs.append(report(_predict(shuffled, gold, resolver, weights, bias), gold))
        figures["shuffled_orders"] = {
            over: {
                "orders": orders,
                "bcubed_f1_mean": round(float(np.mean([r[over]["bcubed"]["f1"] for r in runs])), 4),
                "bcubed_f1_min": min(r[over]["bcubed"]["f1"] for r in runs),
                "bcubed_f1_max": max(r[over]["bcubed"]["f1"] for r in runs),
            }
            for over in ("all", "ambiguous_names")
        }
    return figures


def _predict(
    path: Path, gold: Gold, resolver: str, weights: Sequence[float], bias: float
) -> dict[Mention, Hashable]:
    if resolver == "exact-name":
        return exact_name(gold)
    if resolver == "coauthor-components":
        return coauthor_components(gold)
    if resolver == "ceiling":
        return ceiling(path, gold)
    return imported(path, ResearcherResolver(rule=Rule(resolver), weights=weights, bias=bias))


# -- fitting the model -----------------------------------------------------------------------------


def examples(path: Path, gold: Gold) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Every gold mention against the candidates the resolver offers it, the candidates built from
    the gold decisions before it (teacher forcing): features, labels (same person?) and the block of
    the mention (for folds). Mentions without gold are decided by the current model, as at import."""
    resolver = ResearcherResolver()
    rows: list[tuple[float, ...]] = []
    labels: list[int] = []
    blocks: list[str] = []
    of_person: dict[str, set[int]] = defaultdict(set)
    current: list[str | None] = []
    paper_id = ""

    def decide(position: int, candidates: Sequence[Candidate]) -> Profile | None:
        person = current[position]
        if person is None:  # as at import, without merges (they would fold gold researchers)
            return resolver._best(position, candidates, merge=False)
        for c in candidates:
            rows.append(c.features)
            labels.append(int(id(c.profile) in of_person[person]))
            blocks.append(gold.blocks[paper_id, position])
        return next((c.profile for c in candidates if id(c.profile) in of_person[person]), None)

    resolver.decide = decide
    resolver.prune = False
    resolver.rare_names = False
    for record in generic.read(path):
        if not isinstance(record, PaperRecord):
            continue
        paper_id = record.arxiv_id
        current = [gold.persons.get((paper_id, i)) for i in range(len(record.authors))]
        names = [parse_name(a) for a in record.authors]
        chosen = resolver.resolve_paper(
            record.authors, names, evidence_of(record, names), record.affiliations
        )
        for person, profile in zip(current, chosen, strict=True):
            if person is not None and profile is not None:
                of_person[person].add(id(profile))
    return np.array(rows, dtype=float), np.array(labels, dtype=float), blocks


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 50) -> tuple[float, list[float]]:
    """L2-regularised logistic regression by Newton's method (the bias is not penalised)."""
    a = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(a.shape[1])
    penalty = np.eye(a.shape[1]) * l2
    penalty[0, 0] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(a @ w, -30, 30)))
        gradient = a.T @ (p - y) + penalty @ w
        hessian = (a * (p * (1 - p))[:, None]).T @ a + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return float(w[0]), [float(v) for v in w[1:]]


def fold_of(block: str) -> int:
    return zlib.crc32(block.encode()) % FOLDS


def fit(path: Path) -> dict:
    """Fit the model on the file, and report grouped cross-validated figures: five folds by loose
    name key; each fold's mentions are resolved by a model fitted on the other folds' names."""
    gold = load(path)
    x, y, blocks = examples(path, gold)
    bias, weights = fit_logistic(x, y)
    folds = np.array([fold_of(b) for b in blocks])
    pooled: dict[Mention, Hashable] = {}
    for k in range(FOLDS):
        fold_bias, fold_weights = fit_logistic(x[folds != k], y[folds != k])
        predicted = imported(path, ResearcherResolver(weights=fold_weights, bias=fold_bias))
        for m in gold.persons:
            if fold_of(gold.blocks[m]) == k:
                pooled[m] = (k, predicted[m])
    return {
        "file": path.name,
        "examples": len(y),
        "positives": int(y.sum()),
        "features": list(FEATURES),
        "bias": round(bias, 3),
        "weights": [round(w, 3) for w in weights],
        "join_at": JOIN_AT,
        "merge_at": MERGE_AT,
        "cross_validated": report(pooled, gold),
        "in_sample": report(imported(path, ResearcherResolver(weights=weights, bias=bias)), gold),
    }
