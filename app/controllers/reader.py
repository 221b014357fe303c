"""The page reader: ``/papers/<arxiv-id>/pages/<n>`` (HTML or markdown, ``?quote=`` highlights a
cited sentence) and ``/papers/<arxiv-id>/pages/<n>.png`` (the page drawn by PyMuPDF in the parser's
sandbox, cached). Old-style ids have their own pair of addresses (``/papers/hep-th/9901001/pages/3``),
served by the same handler.

Drawing runs through ``services.page_gate`` (bounded, the excess shed with a 503), never on the
event loop; the PNG carries ``Cache-Control: public`` and an ETag naming the file's hash, the page
and the zoom, so a browser asks once."""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, FromQuery

from app.asgi import PAGE_OPT
from app.negotiation import MD_SUFFIX_FLAG
from app.rendering import AppPages, PageAnswer, Redirect, Rendered, View
from app.services import AppServices, Services
from app.views.papers import ident_in
from app.views.reader import page_number, paper_of, reader_view
from indexing.contract import PageUnavailable

PNG = ".png"
IMAGE_MAX_AGE = 86_400  # a day; the ETag (hash of the file) revalidates after that


async def _serve(
    request: Request[Any, Any, Any],
    pages: AppPages,
    services: Services,
    ident: str,
    raw: str,
    quote: str | None,
) -> PageAnswer:
    if raw.endswith(PNG):
        if request.scope.get("state", {}).get(MD_SUFFIX_FLAG):
            raise NotFoundException(detail="there is no markdown variant of a page image")
        return await _image(request, services, ident, raw[: -len(PNG)])
    path = request.scope["path"]

    def build() -> View | Redirect:
        with services.sessions() as db:
            return reader_view(db, services.page_reader, ident, raw, quote or "", path)

    return await pages.serve_with(request, build, services.page_gate.run)


async def _image(request: Request[Any, Any, Any], services: Services, ident: str, raw: str) -> PageAnswer:
    number = page_number(raw)

    def draw() -> Rendered:
        with services.sessions() as db:
            paper = paper_of(db, ident)
        stored, reader = paper.stored_path, services.page_reader
        if stored is None or reader is None or paper.sha256 is None:
            raise NotFoundException(detail="This archive does not hold this paper's PDF.")
        if paper.pages and number > paper.pages:
            raise NotFoundException(detail=f"The PDF has {paper.pages} pages; there is no page {number}.")
        etag = f'"{paper.sha256[:32]}-{number}-{reader.zoom:g}"'
        headers = (("cache-control", f"public, max-age={IMAGE_MAX_AGE}"), ("etag", etag))
        if etag in request.headers.get("if-none-match", ""):
            return Rendered(304, b"", "image/png", headers)
        try:
            png = reader.image(stored, paper.sha256, number)
        except PageUnavailable as exc:
            raise NotFoundException(detail=f"This page cannot be shown here: {exc.reason}.") from exc
        return Rendered(200, png, "image/png", headers)

    rendered = await services.page_gate.run(draw)
    return rendered.asgi()


@get(
    ["/papers/{ident:str}/pages/{n:str}", "/papers/{archive:str}/{number:str}/pages/{n:str}"],
    include_in_schema=False,
    opt={PAGE_OPT: True},
)
async def reader_page(
    request: Request[Any, Any, Any],
    pages: AppPages,
    services: AppServices,
    n: FromPath[str],
    quote: FromQuery[str | None] = None,
) -> PageAnswer:
    return await _serve(request, pages, services, ident_in(request.path_params), n, quote)


ROUTE_HANDLERS = [reader_page]
