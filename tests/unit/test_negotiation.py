"""Which representation a request gets, and markdown that renders as exactly the text it holds."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from app.asgi import strip_markdown_suffix
from app.negotiation import accept_qualities, choose, wants_markdown
from app.rendering import markdown_path, md_code, md_escape


@pytest.mark.parametrize(
    ("accept", "markdown"),
    [
        ("text/markdown", True),
        ("text/markdown, text/html", True),  # a tie goes to markdown
        ("text/html, text/markdown", True),
        ("text/html;q=0.9, text/markdown", True),
        ("text/html, text/markdown;q=0.9", False),
        ("text/markdown;q=0.5, application/xhtml+xml", False),  # xhtml counts as HTML
        ("application/xhtml+xml;q=0.4, text/markdown;q=0.5", True),
        ("text/markdown;q=0", False),  # q=0 means "not acceptable"
        ("text/markdown;q=0.001", True),
        ("*/*", False),  # wildcards say nothing about which one is preferred
        ("text/*", False),
        ("*/*;q=1, text/markdown;q=0.1", True),
        ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", False),  # a browser
        ("application/json", False),
        ("", False),
        ("text/markdown;q=abc", False),  # malformed q: the range is ignored
        ("text/markdown;q=2", False),  # out of range
        ("TEXT/MARKDOWN", True),
        ("text/markdown; charset=utf-8; q=0.8, text/html; q=0.7", True),
    ],
)
def test_accept_rule(accept: str, markdown: bool) -> None:
    assert wants_markdown("GET", accept) is markdown


def test_only_get_and_head_negotiate() -> None:
    assert wants_markdown("HEAD", "text/markdown")
    assert not wants_markdown("POST", "text/markdown")
    assert not wants_markdown("GET", None)


def test_suffix_wins_over_accept() -> None:
    assert choose("GET", "text/html", suffix=True) == "markdown"
    assert choose("GET", "text/html", suffix=False) == "html"


def test_accept_qualities_keeps_the_best_of_repeats() -> None:
    assert accept_qualities("text/html;q=0.2, text/html;q=0.7") == {"text/html": 0.7}


@pytest.mark.parametrize(
    ("path", "stripped"),
    [
        ("/papers/2401.01234-x.md", "/papers/2401.01234-x"),
        ("/index.md", "/"),
        ("/researchers.md", "/researchers"),
        ("/papers/2401.01234", None),
        ("/static/readme.md", None),
        ("/api/papers.md", None),
        ("/.md", None),
    ],
)
def test_markdown_suffix(path: str, stripped: str | None) -> None:
    assert strip_markdown_suffix(path) == stripped


@pytest.mark.parametrize(
    ("path", "md"),
    [
        ("/", "/index.md"),
        ("/papers?page=2", "/papers.md?page=2"),
        ("/researchers/7-a-b", "/researchers/7-a-b.md"),
    ],
)
def test_markdown_path(path: str, md: str) -> None:
    assert markdown_path(path) == md


HOSTILE = [
    '<script>alert("x")</script>',
    "<img src=x onerror=alert(1)>",
    "[click](javascript:alert(1))",
    "![tracker](https://evil.example/p.png)",
    "# not a heading",
    "1. not a list",
    "- not a list",
    "> not a quote",
    "**not bold** and _not em_ and `not code`",
    "a | b | c",
    "<https://autolink.example>",
    "text with \\ backslash \\* and trailing \\",
    "===",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_escaped_text_renders_as_the_same_plain_text(text: str) -> None:
    html = MarkdownIt("commonmark").render(md_escape(text))
    # One paragraph of text, no element built from the input, and the text itself survives.
    assert html.startswith("<p>") and html.endswith("</p>\n")
    for tag in (
        "<script",
        "<img",
        "<a ",
        "<h1",
        "<ol",
        "<ul",
        "<blockquote",
        "<strong",
        "<em",
        "<code",
        "<hr",
    ):
        assert tag not in html
    unescaped = (
        html[3:-5].replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    )
    assert unescaped == " ".join(text.split())


def test_escaping_keeps_ordinary_scientific_text_readable() -> None:
    assert md_escape("arXiv:1412.6980 and x_i in 2024-01-02") == "arXiv:1412.6980 and x_i in 2024-01-02"


def test_code_span_holds_backticks() -> None:
    html = MarkdownIt("commonmark").render(md_code("a `tick` b"))
    assert html == "<p><code>a `tick` b</code></p>\n"
