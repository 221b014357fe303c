"""The architecture's boundaries (ARCHITECTURE.md), checked by walking every module's imports —
function-level (lazy) imports included, ``if TYPE_CHECKING:`` blocks too."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from settings import PROJECT_ROOT

PACKAGES = (
    "accounts",
    "app",
    "catalog",
    "chat",
    "coordination",
    "evals",
    "indexing",
    "ingest",
    "people",
    "prompts",
    "retrieval",
)
# Each third-party library lives in one place: module prefixes allowed to import it.
OWNERS = {
    "fitz": ("ingest.pdf.extract",),
    "pymupdf": ("ingest.pdf.extract",),
    "pymupdf4llm": ("ingest.pdf.extract",),
    "chromadb": ("retrieval.store",),
    "llama_index": ("retrieval.store", "retrieval.search", "retrieval.dense"),
    "authlib": ("app.auth.oauth",),
    "joserfc": ("app.auth.id_tokens",),
    "saq": ("indexing.queue",),
    "redis": ("coordination.redis",),
    "openai": ("chat.llm", "retrieval.embedder"),
    "mcp": ("app.mcp",),
    "onnxruntime": ("retrieval.embedder", "retrieval.quantize"),
    "onnx": ("retrieval.quantize",),
    "tiktoken": ("retrieval.tokens",),
    "tokenizers": ("retrieval.embedder",),
    "bm25s": ("retrieval.lexical",),
    "Stemmer": ("retrieval.lexical",),
    "pytrec_eval": ("evals",),
    "rapidfuzz": ("ingest.enrich",),
    "nameparser": ("people.names",),
    "scipy": ("people.name_counts", "evals"),
    "feedgen": ("app.feeds",),
    "alembic": ("catalog",),
    "defusedxml": ("ingest.sources.arxiv_api", "ingest.sources.oai_pmh"),  # untrusted XML
    # Outbound HTTP; the store only names httpx's errors for a Chroma server that went away.
    "httpx": ("ingest.http", "retrieval.store"),
    "httpcore": ("ingest.http",),
}
# Which of our packages each package may import (besides itself and ``settings``).
MAY_IMPORT = {
    "prompts": set(),
    "catalog": set(),
    "coordination": set(),
    "accounts": {"catalog"},
    "retrieval": {"catalog"},
    "people": {"catalog"},  # who-is-who: names, evidence, the resolver and its catalogue writes
    "ingest": {"catalog", "coordination", "people", "retrieval"},
    "indexing": {"catalog", "coordination", "ingest", "people", "retrieval"},
    "chat": {"catalog", "coordination", "prompts", "retrieval", "accounts"},
    "evals": {"catalog", "chat", "indexing", "ingest", "people", "prompts", "retrieval"},
    "app": {"accounts", "catalog", "chat", "coordination", "indexing", "people", "prompts", "retrieval"},
}
# Migrations backfill the keys the code of today makes: the researchers' blocks are who-is-who's
# (``people.names.block_of``). Alembic loads them by path and no module imports them, so the
# catalogue itself never imports ``people``.
MIGRATIONS = "catalog.migrations"
MIGRATIONS_MAY_IMPORT = {"people.names"}
# The web app reaches the indexing machinery only through its contract, and builds it in the
# composition root through its wiring.
APP_INDEXING = {"indexing.contract": None, "indexing.wiring": ("app.services",)}
# Chat reads retrieval through its one interface (evidence), the embedder the composition root hands
# it and the token counter; never the ranker's parts, the stores or search.
CHAT_RETRIEVAL = {"retrieval.evidence", "retrieval.embedder", "retrieval.tokens"}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PROJECT_ROOT).with_suffix("")
    return ".".join(p for p in rel.parts if p != "__init__")


def _scan() -> dict[str, set[str]]:
    """Every module of ours → the names it imports (``from a import b`` gives ``a.b`` when that is a
    module of ours, else ``a``)."""
    paths = {
        _module_name(path): path
        for package in PACKAGES
        if (PROJECT_ROOT / package).is_dir()
        for path in (PROJECT_ROOT / package).rglob("*.py")
    }
    paths["settings"] = PROJECT_ROOT / "settings.py"
    found: dict[str, set[str]] = {}
    for name, path in paths.items():
        imports: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                imports |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                assert not node.level, f"{name}: relative import of {node.module}"
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    imports.add(full if full in paths else node.module)
        found[name] = imports
    return found


MODULES = _scan()


def _top(name: str) -> str:
    return name.split(".", 1)[0]


def _ours(name: str) -> bool:
    return _top(name) in PACKAGES or name == "settings"


def _with_parents(name: str) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:n]) for n in range(1, len(parts) + 1)}


def _graph() -> dict[str, set[str]]:
    """Edges between our modules. Importing ``a.b.c`` also runs ``a`` and ``a.b`` — except the
    importer's own parent packages, which Python has already started importing by then."""
    graph: dict[str, set[str]] = {}
    for module, imports in MODULES.items():
        targets: set[str] = set()
        for imported in imports:
            if _ours(imported):
                targets |= _with_parents(imported) & MODULES.keys()
        graph[module] = targets - _with_parents(module)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_cycles() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_there_is_no_import_cycle() -> None:
    assert _cycles(_graph()) == []


def test_prompts_import_only_the_standard_library() -> None:
    for module, imports in MODULES.items():
        if _top(module) == "prompts":
            foreign = {i for i in imports if _top(i) not in sys.stdlib_module_names and _top(i) != "prompts"}
            assert not foreign, f"{module} imports {foreign}"


def test_packages_import_only_what_their_layer_allows() -> None:
    for module, imports in MODULES.items():
        package = _top(module)
        if package not in MAY_IMPORT:
            continue
        allowed = MAY_IMPORT[package] | {package, "settings"}
        bad = {i for i in imports if _ours(i) and _top(i) not in allowed}
        if module.startswith(f"{MIGRATIONS}."):
            bad -= MIGRATIONS_MAY_IMPORT
        assert not bad, f"{module} imports {bad}; {package} may import only {sorted(allowed)}"


def test_no_module_imports_a_migration() -> None:
    importers = {m for m, imports in MODULES.items() for i in imports if i.startswith(MIGRATIONS)}
    assert not {m for m in importers if not m.startswith(f"{MIGRATIONS}.")}


def test_app_uses_indexing_only_through_its_contract_and_wiring() -> None:
    for module, imports in MODULES.items():
        if _top(module) != "app":
            continue
        for imported in (i for i in imports if _top(i) == "indexing"):
            assert imported in APP_INDEXING, f"{module} imports {imported}: use indexing.contract"
            where = APP_INDEXING[imported]
            assert where is None or module in where, f"{imported} is used in {where} only, not {module}"


def test_chat_uses_retrieval_only_through_its_interface() -> None:
    for module, imports in MODULES.items():
        if _top(module) == "chat":
            bad = {i for i in imports if _top(i) == "retrieval"} - CHAT_RETRIEVAL
            assert not bad, f"{module} imports {bad}: chat may use only {sorted(CHAT_RETRIEVAL)}"


def test_each_third_party_library_lives_in_one_place() -> None:
    for module, imports in MODULES.items():
        for imported in imports:
            owners = OWNERS.get(_top(imported))
            if owners and not module.startswith(owners):
                raise AssertionError(f"{module} imports {imported}; only {owners} may")


def test_there_is_no_utils_module() -> None:
    assert not [p for p in PROJECT_ROOT.glob("*/**/utils.py") if ".venv" not in p.parts]
    assert Path(PROJECT_ROOT / "utils.py").exists() is False


def _controllers(imports: set[str]) -> set[str]:
    return {i for i in imports if i == "app.controllers" or i.startswith("app.controllers.")}


def test_no_controller_imports_another() -> None:
    """Shared logic lives outside ``app/controllers/`` (views, documents, parameters, chat turns):
    a controller imports no other controller."""
    for module, imports in MODULES.items():
        if module.startswith("app.controllers."):
            bad = _controllers(imports) - {module}
            assert not bad, f"{module} imports {sorted(bad)}: move what they share out of app/controllers/"


def test_mcp_calls_what_the_controllers_call_not_the_controllers() -> None:
    bad = _controllers(MODULES["app.mcp"])
    assert not bad, f"app.mcp imports {sorted(bad)}: the tools use app's views and documents"


LONGEST = 800  # lines: a longer module owns more than one thing (settings and migrations aside)


def test_no_module_is_longer_than_it_can_be_read() -> None:
    long = {}
    for package in PACKAGES:
        for path in (PROJECT_ROOT / package).rglob("*.py"):
            if "migrations" not in path.parts and len(path.read_text().splitlines()) > LONGEST:
                long[_module_name(path)] = len(path.read_text().splitlines())
    assert not long, f"split by what each part owns: {long}"
