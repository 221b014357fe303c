"""``python -m evals …``: retrieval measurements that print JSON (evals are not tests).

- ``retrieval --beir DIR [--split NAME] [--mode bm25|dense|hybrid]``: nDCG@10, recall@100, MRR@10 on a
  BEIR-layout dataset (the index is cached; a second run takes seconds);
- ``qa-retrieval --file X.jsonl``: paper hit@1, hit@5 and page hit@5 of questions about ingested papers;
- ``check-questions --file X.jsonl``: every evidence quote is on its page of the PDF (exit 1 if not);
- ``qa --file X.jsonl [--base-url URL]``: the whole chat pipeline with the configured model: citation
  validity, gold paper/page cited, abstention, answer containment, evidence and first-token latency;
- ``researchers --file X.jsonl [--resolver NAME] [--fit] [--orders N]``: author disambiguation against
  gold persons (pairwise and B-cubed P/R/F1, all mentions and ambiguous names); ``--fit`` fits the
  resolver's model and prints grouped cross-validated figures; ``--orders N`` adds the spread over N
  shuffled import orders; ``--resolver ceiling`` is the oracle upper bound of linking evidence, and
  ``--resolver ceiling-topic`` the same with its pieces also joined by topic at the best threshold.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from evals import beir, qa, researchers
from retrieval.lexical import Bm25Params
from retrieval.search import MODES, Mode, rank_config
from settings import Settings, get_settings

_Command = TypeVar("_Command", bound=Callable[..., Any])


def bm25_params(settings: Settings) -> Bm25Params:
    return Bm25Params(k1=settings.search.lexical_k1, b=settings.search.lexical_b)


# -- what several commands take ------------------------------------------------------------------


def _gold_file(help: str) -> Callable[[_Command], _Command]:
    """``--file``: the JSON-lines file a command measures against."""
    path = click.Path(exists=True, dir_okay=False, path_type=Path)
    return click.option("--file", "path", required=True, type=path, help=help)


def _beir_dataset(help: str) -> Callable[[_Command], _Command]:
    path = click.Path(exists=True, file_okay=False, path_type=Path)
    return click.option("--beir", "root", required=True, type=path, help=help)


_CACHE = click.option(
    "--cache",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where built indexes are cached (default: <data_dir>/evals).",
)


@contextmanager
def _input_errors(*errors: type[Exception]) -> Iterator[None]:
    """A malformed input file or dataset ends the command as a bad option does: its message, no
    traceback, exit status 1."""
    try:
        yield
    except errors as exc:
        raise click.ClickException(str(exc)) from exc


@click.group()
def cli() -> None:
    """Measure retrieval quality (prints JSON on stdout; progress goes to stderr)."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")


@cli.command("retrieval")
@_beir_dataset("A dataset folder in BEIR layout (corpus.jsonl, queries.jsonl, qrels/<split>.tsv).")
@click.option("--split", default="test", show_default=True, help="Which qrels/<split>.tsv to score.")
@click.option("--mode", type=click.Choice(MODES), default="hybrid", show_default=True)
@_CACHE
def retrieval_command(root: Path, split: str, mode: str, cache: Path | None) -> None:
    """nDCG@10, recall@100 and MRR@10 of one search mode on a BEIR dataset."""
    from retrieval.embedder import make_embedder

    settings = get_settings()
    with _input_errors(beir.DatasetError):
        dataset = beir.load(root, split)
    report = beir.run_retrieval(
        dataset,
        mode=mode,  # type: ignore[arg-type]
        cache_root=cache or settings.core.data_dir / "evals",
        embedder=make_embedder(settings),
        params=bm25_params(settings),
        config=rank_config(settings.search),
    )
    out = report.to_json()
    out["split"] = split
    click.echo(json.dumps(out, indent=2))


@cli.command("similarity-floor")
@_beir_dataset("A dataset folder in BEIR layout; its document vectors are cached as `retrieval` caches them.")
@click.option("--split", default="train", show_default=True, help="qrels/<split>.tsv: the real queries.")
@_CACHE
def floor_command(root: Path, split: str, cache: Path | None) -> None:
    """Cosine similarities of nonsense, unrelated and real queries to a corpus, per candidate floor."""
    from evals import floor
    from retrieval.embedder import make_embedder

    settings = get_settings()
    with _input_errors(beir.DatasetError):
        dataset = beir.load(root, split)
    embedder = make_embedder(settings)
    cache_root = cache or settings.core.data_dir / "evals"
    index = beir.BeirIndex(dataset, cache_root, embedder, bm25_params(settings))
    ids, vectors = index.document_vectors()
    report = floor.calibrate(embedder, vectors, ids, index.query_vectors(), dataset.qrels)
    click.echo(json.dumps({"dataset": dataset.name, "split": split} | report, indent=2))


@cli.command("qa-retrieval")
@_gold_file('JSON lines {"question", "arxiv_id", "pages"} about papers in the ingested corpus.')
@click.option("--mode", type=click.Choice(MODES), default="hybrid", show_default=True)
@click.option("-v", "--verbose", is_flag=True, help="Print each question's outcome to stderr.")
@click.option(
    "--build",
    is_flag=True,
    help="Build (and cache) the corpus here: the 35 demo PDFs among abstracts, instead of the ingested one.",
)
@click.option(
    "--distractors",
    default=20_000,
    show_default=True,
    type=click.IntRange(0, 20_000),
    help="With --build: how many abstracts of arxiv/listings-20k.jsonl.gz to index beside the PDFs.",
)
def qa_command(path: Path, mode: str, verbose: bool, build: bool, distractors: int) -> None:
    """Paper hit@1/@5, page hit@1/@3/@5 and page MRR against the ingested (or a built) corpus."""
    from evals import pages
    from retrieval.embedder import make_embedder

    with _input_errors(qa.QaFileError):
        questions = qa.load(path)
    settings = get_settings()
    chosen: Mode = mode  # type: ignore[assignment] # click.Choice(MODES) checked it
    config = rank_config(settings.search)
    extra: dict[str, object] = {"mode": mode}
    if build:
        index = pages.open_index(
            settings.core.data_dir / "evals",
            make_embedder(settings),
            bm25_params(settings),
            settings.chunks,
            distractors=distractors,
        )
        try:
            report = qa.run_built(questions, index, mode=chosen, config=config)
            passages = qa.run_passages(questions, index, mode=chosen, config=config)
        finally:
            index.close()
        extra |= {
            "corpus": f"35 PDFs + {distractors} abstracts",
            "chunks": len(index.corpus.chunks),
            "embedded_now": index.texts_embedded,
            "embed_seconds": round(index.embed_seconds, 1),
            "passages": passages.to_json(),  # pages ranked by retrieval.passages.rank_passages
        }
    else:
        with _input_errors(qa.QaFileError):
            report = qa.run(questions, settings=settings, mode=chosen, config=config)
    if verbose:
        for outcome in report.outcomes:
            print(json.dumps(outcome), file=sys.stderr)
    click.echo(json.dumps(extra | report.to_json()))


@cli.command("check-questions")
@_gold_file('JSON lines {"question", "arxiv_id", "pages", "answer", "quote"}.')
@click.option(
    "--pdfs",
    "pdf_dir",
    default=Path("../shared/data/pdfs/arxiv"),
    show_default=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Folder of <arxiv_id>.pdf files.",
)
def check_questions_command(path: Path, pdf_dir: Path) -> None:
    """Find every answerable question's quote on one of its pages (the project's PDF extraction)."""
    from evals import quotes

    with _input_errors(qa.QaFileError):
        questions = qa.load(path)
    checked, problems = quotes.check(questions, pdf_dir)
    for p in problems:
        print(f"{path}:{p.line}: {p.reason} ({p.question})", file=sys.stderr)
    unanswerable = sum(q.arxiv_id is None for q in questions)
    papers = len({q.arxiv_id for q in questions if q.arxiv_id})
    summary = {"answerable": checked, "unanswerable": unanswerable, "papers": papers}
    click.echo(json.dumps(summary | {"problems": len(problems)}))
    if problems:
        raise SystemExit(1)


@cli.command("qa")
@_gold_file('JSON lines {"question", "arxiv_id" (null: unanswerable), "pages", "answer"}.')
@click.option(
    "--base-url",
    default=None,
    help="An OpenAI-compatible server (default: WOVEPAPER_LLM_BASE_URL; none: evidence answers only).",
)
@click.option(
    "--no-llm",
    is_flag=True,
    help="Evidence and key quotes only; without it and without a base URL the embedded model answers "
    "(built and started as `make run` does, which can take minutes the first time).",
)
@click.option("-v", "--verbose", is_flag=True, help="Print each question's answer to stderr.")
def answers_command(path: Path, base_url: str | None, no_llm: bool, verbose: bool) -> None:
    """Answer quality and latency of the chat pipeline against the configured (ingested) corpus."""
    from chat.llm import make_llm
    from evals import answers

    with _input_errors(answers.AnswersFileError):
        questions = answers.load(path)
    settings = get_settings()
    url = None if no_llm else base_url or settings.llm.llm_base_url
    llm = make_llm(settings.llm, url) if url else None
    embedded = not no_llm and llm is None and settings.local_llm_enabled
    with _input_errors(qa.QaFileError):
        service, store = qa.open_service(settings, rank_config(settings.search))
    try:
        figures, details = answers.run(
            questions, settings=settings, search=service, llm=llm, embedded=embedded
        )
    finally:
        store.close()
    if verbose:
        for record in details:
            print(json.dumps(record, ensure_ascii=False), file=sys.stderr)
    figures["model"] = (
        settings.llm.llm_model if llm else settings.local_llm.local_llm_model if embedded else None
    )
    click.echo(json.dumps(figures, indent=2))


@cli.command("claims")
@_gold_file('JSON lines {"id", "passage", "claim", "supported", "kind"} (evals/claims/README.md).')
@click.option(
    "--checker",
    type=click.Choice(["claims", "citations"]),
    default="claims",
    show_default=True,
    help="claims: the product's claim checker; citations: the chat's earlier check (before/after).",
)
@click.option("--no-embedder", is_flag=True, help="Without the bundled embedder (rules and words only).")
@click.option("-v", "--verbose", is_flag=True, help="Print each claim's verdict to stderr.")
def claims_command(path: Path, checker: str, no_embedder: bool, verbose: bool) -> None:
    """Claim checking: flag recall over unsupported claims, false flags over supported ones."""
    from evals import claims
    from retrieval.embedder import make_embedder

    with _input_errors(claims.ClaimsFileError):
        found = claims.load(path)
    embedder = None if no_embedder else make_embedder(get_settings())
    check = claims.product_checker(embedder) if checker == "claims" else claims.citations_checker(embedder)
    figures, details = claims.run(found, check)
    if verbose:
        for record in details:
            print(json.dumps(record, ensure_ascii=False), file=sys.stderr)
    click.echo(json.dumps(figures))


@cli.command("researchers")
@_gold_file("Gold papers, one JSON object per line (../shared/data/researchers/README.md).")
@click.option(
    "--resolver",
    type=click.Choice(["all", *researchers.RESOLVERS, *researchers.ORACLES]),
    default="evidence",
    show_default=True,
    help="evidence: the product's; old: the previous rule; exact-name, coauthor-components: baselines;"
    " ceiling: the oracle bound of linking evidence; ceiling-topic: its pieces also joined by topic"
    " (embeds every abstract); all: every one but ceiling-topic.",
)
@click.option(
    "--fit", is_flag=True, help="Fit the model on this file; print weights and cross-validated figures."
)
@click.option(
    "--orders",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Also import the file in N shuffled orders and print the mean and range of B-cubed F1.",
)
def researchers_command(path: Path, resolver: str, fit: bool, orders: int) -> None:
    """Who is who: how well author strings resolve to the gold persons."""
    if fit:
        click.echo(json.dumps(researchers.fit(path), indent=2))
        return
    chosen = researchers.RESOLVERS if resolver == "all" else (resolver,)
    for name in chosen:
        click.echo(json.dumps(researchers.run(path, name, orders=orders)))


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
