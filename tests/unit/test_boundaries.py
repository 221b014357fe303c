"""The architecture's boundaries, checked by walking every module's imports."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from settings import PROJECT_ROOT

PACKAGES = ("app", "catalog", "coordination", "ingest", "prompts", "retrieval", "evals")
# Each third-party library lives in one place: module prefixes allowed to import it.
OWNERS = {
    "fitz": ("ingest.pdf",),
    "pymupdf": ("ingest.pdf",),
    "pymupdf4llm": ("ingest.pdf",),
    "chromadb": ("retrieval.store",),
    "llama_index": ("retrieval.store", "retrieval.search", "retrieval.dense"),
    "authlib": ("app.auth",),
    "saq": ("ingest.queue",),
    "redis": ("coordination.redis",),
    "openai": ("retrieval.llm", "retrieval.embedder"),
    "onnxruntime": ("retrieval.embedder",),
    "tokenizers": ("retrieval.embedder",),
    "bm25s": ("retrieval.lexical",),
    "Stemmer": ("retrieval.lexical",),
    "pytrec_eval": ("evals",),
    "rapidfuzz": ("ingest.enrich",),
    "feedgen": ("app.controllers.agents", "app.agents"),
    "alembic": ("catalog",),
    "defusedxml": ("ingest.sources.arxiv_api", "ingest.sources.oai_pmh"),  # untrusted XML
}


def _modules() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in (PROJECT_ROOT / package).rglob("*.py"):
            rel = path.relative_to(PROJECT_ROOT).with_suffix("")
            name = ".".join(p for p in rel.parts if p != "__init__")
            imports: set[str] = set()
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    imports |= {a.name for a in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    imports.add(node.module)
            found[name] = imports
    return found


MODULES = _modules()


def _top(name: str) -> str:
    return name.split(".", 1)[0]


def test_prompts_import_only_the_standard_library() -> None:
    for module, imports in MODULES.items():
        if _top(module) == "prompts":
            foreign = {i for i in imports if _top(i) not in sys.stdlib_module_names and _top(i) != "prompts"}
            assert not foreign, f"{module} imports {foreign}"


def test_layers_point_one_way() -> None:
    forbidden = {
        "retrieval": {"app", "ingest"},
        "ingest": {"app"},
        "catalog": {"app", "ingest", "retrieval"},
        "evals": {"app"},
    }
    for module, imports in MODULES.items():
        bad = {i for i in imports if _top(i) in forbidden.get(_top(module), set())}
        assert not bad, f"{module} imports {bad}"


def test_app_uses_only_the_ingest_contract() -> None:
    for module, imports in MODULES.items():
        if _top(module) == "app":
            bad = {i for i in imports if _top(i) == "ingest" and not i.startswith("ingest.contract")}
            assert not bad, f"{module} imports {bad}: app and worker talk through the queue contract"


def test_each_third_party_library_lives_in_one_place() -> None:
    for module, imports in MODULES.items():
        for imported in imports:
            owners = OWNERS.get(_top(imported))
            if owners and not module.startswith(owners):
                raise AssertionError(f"{module} imports {imported}; only {owners} may")


def test_there_is_no_utils_module() -> None:
    assert not [p for p in PROJECT_ROOT.glob("*/**/utils.py") if ".venv" not in p.parts]
    assert Path(PROJECT_ROOT / "utils.py").exists() is False
