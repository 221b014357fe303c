"""The MCP endpoint through the SDK's own client over streamable HTTP, against the app served by
uvicorn on loopback: every tool, the paper resource and the review prompt, with their markdown and
structured content; bad arguments are tool errors (never a 5xx); two app processes answer one
client's calls alternately; the limit, the host allow-list and cookies."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from settings import PROJECT_ROOT
from tests.integration.browse_catalogue import served
from tests.integration.mcp_peers import INDEXED, McpSite, free_port, mcp_site, with_env
from tests.integration.scripted_llm import ScriptedLLM

TOOLS = {
    "search_papers",
    "get_paper",
    "read_paper_pages",
    "get_researcher",
    "get_institution",
    "ask",
    "request_full_text",
}
WRITES = {"ask", "request_full_text"}  # the tools that change something (need a token)
CHAT_LIMIT = 3  # questions per person per hour in these tests


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedLLM]:
    scripted = ScriptedLLM().start()
    try:
        yield scripted
    finally:
        scripted.stop()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, model: ScriptedLLM) -> Iterator[McpSite]:
    env = {
        "WOVEPAPER_LIMIT_MCP": "1000/60",
        "WOVEPAPER_LLM_BASE_URL": model.base_url,
        "WOVEPAPER_LIMIT_CHAT_REQUESTS": f"{CHAT_LIMIT}/3600",
    }
    with mcp_site(tmp_path_factory.mktemp("mcp"), env) as s:
        yield s


def call(site: McpSite, name: str, arguments: dict[str, Any], token: str | None = None) -> CallToolResult:
    """One tool call by the SDK's client (with ``Authorization: Bearer <token>`` when given)."""

    async def go() -> CallToolResult:
        headers = {"authorization": f"Bearer {token}"} if token else {}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(site.endpoint, http_client=http)) as client,
        ):
            return await client.call_tool(name, arguments)

    return anyio.run(go)


def text_of(result: CallToolResult) -> str:
    assert len(result.content) == 1 and isinstance(result.content[0], TextContent), result.content
    return result.content[0].text


def test_the_client_lists_the_tools_with_their_schemas(site: McpSite) -> None:
    async def go() -> Any:
        async with Client(site.endpoint) as client:
            return await client.list_tools(), client.server_info, client.instructions

    tools, info, instructions = anyio.run(go)
    assert {t.name for t in tools.tools} == TOOLS
    assert info is not None and info.name == "wovepaper"
    assert instructions and "read_paper_pages" in instructions
    for tool in tools.tools:
        assert tool.description, tool.name
        assert tool.output_schema, tool.name
        assert tool.annotations is not None, tool.name
        # Every tool only reads, except ask (it keeps the conversation) and request_full_text.
        assert tool.annotations.read_only_hint == (tool.name not in WRITES), tool.name
    search = next(t for t in tools.tools if t.name == "search_papers")
    assert search.input_schema["required"] == ["query"]


def test_search_papers(site: McpSite) -> None:
    result = call(site, "search_papers", {"query": "adaptive moment estimation stochastic optimization"})
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data is not None and data["total"] >= 1
    first = data["items"][0]
    assert first["arxiv_id"] == INDEXED
    assert first["url"].startswith(site.base + "/papers/1412.6980-")
    markdown = text_of(result)
    assert markdown.startswith("# ")
    assert first["url"] in markdown and "Canonical page:" in markdown


def test_get_paper_has_the_page_and_the_full_text_outline(site: McpSite) -> None:
    result = call(site, "get_paper", {"arxiv_id": "1412.6980v9"})
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data is not None
    assert data["paper"]["arxiv_id"] == INDEXED and data["paper"]["title"].startswith("Adam")
    assert data["full_text"]["status"] == "done" and data["full_text"]["pages"] == 15
    assert data["sections"] and all(s["page"] >= 1 for s in data["sections"])
    markdown = text_of(result)
    assert markdown.startswith("# Adam")
    assert f"<{data['paper']['url']}>" in markdown
    assert "## Full text" in markdown and "read_paper_pages" in markdown


def test_read_paper_pages_gives_text_with_page_numbers(site: McpSite) -> None:
    result = call(site, "read_paper_pages", {"arxiv_id": INDEXED, "first_page": 2, "last_page": 3})
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data is not None and data["passages"]
    assert all(p["page_end"] >= 2 and p["page_start"] <= 3 for p in data["passages"])
    assert data["pages_indexed"] == 15 and data["next_page"] == 4
    markdown = text_of(result)
    assert "## [p. 2]" in markdown and data["url"] in markdown
    # The passages do not repeat the sentences chunks share (the overlap is removed).
    texts = [p["text"] for p in data["passages"]]
    for before, after in itertools.pairwise(texts):
        assert after[:80] not in before


def test_read_paper_pages_is_capped(site: McpSite) -> None:
    result = call(site, "read_paper_pages", {"arxiv_id": INDEXED, "first_page": 1, "last_page": 15})
    data = result.structured_content
    assert data is not None and data["truncated"]
    assert sum(len(p["text"]) for p in data["passages"]) <= site.settings.mcp.mcp_max_page_chars
    assert data["next_page"] is not None and f"first_page={data['next_page']}" in text_of(result)


def test_get_researcher_and_institution(site: McpSite) -> None:
    result = call(site, "get_researcher", {"researcher_id": site.facts.enriched_researcher})
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data is not None and data["name"] == "Diederik P. Kingma"
    assert data["h_index"] == site.facts.h_index
    assert text_of(result).startswith("# Diederik P. Kingma") and data["url"] in text_of(result)

    first, second = site.facts.namesakes  # the same view: the comparison in both parts of the answer
    result = call(site, "get_researcher", {"researcher_id": first})
    data = result.structured_content
    assert data is not None and [n["id"] for n in data["same_name"]] == [second]
    assert data["same_name"][0]["categories"] == ["q-bio.GN"] and "## Others with this name" in text_of(
        result
    )

    result = call(site, "get_institution", {"institution": f"ror:{site.facts.toronto_ror}"})
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data is not None and data["id"] == site.facts.toronto
    assert data["name"] == "University of Toronto" and data["url"] in text_of(result)


@pytest.mark.parametrize(
    ("name", "arguments", "says"),
    [
        ("get_paper", {"arxiv_id": "not-an-id"}, "not-an-id"),
        ("get_paper", {"arxiv_id": "2412.99999"}, "not in this archive"),
        ("get_paper", {}, "arxiv_id"),
        ("search_papers", {"query": ""}, "query"),
        ("search_papers", {"query": "x", "size": 500}, "size"),
        ("search_papers", {"query": "x", "date_from": "yesterday"}, "date_from"),
        ("read_paper_pages", {"arxiv_id": INDEXED, "first_page": 5, "last_page": 2}, "before"),
        ("read_paper_pages", {"arxiv_id": INDEXED, "first_page": 99}, "past the end"),
        ("read_paper_pages", {"arxiv_id": "1706.03762"}, "not indexed"),
        ("get_researcher", {"researcher_id": 2_000_000_000}, "no researcher"),
        ("get_researcher", {"researcher_id": "abc"}, "researcher_id"),
        ("get_institution", {"institution": "Nowhere University of Nothing"}, "No institution"),
    ],
)
def test_bad_arguments_are_tool_errors(
    site: McpSite, name: str, arguments: dict[str, Any], says: str
) -> None:
    result = call(site, name, arguments)
    assert result.is_error
    assert says.lower() in text_of(result).lower()


def test_the_paper_resource_and_the_review_prompt(site: McpSite) -> None:
    async def go() -> Any:
        async with Client(site.endpoint) as client:
            templates = await client.list_resource_templates()
            resource = await client.read_resource(f"paper://{INDEXED}")
            prompts = await client.list_prompts()
            prompt = await client.get_prompt("review_paper_claims", {"arxiv_id": INDEXED})
            return templates, resource, prompts, prompt

    templates, resource, prompts, prompt = anyio.run(go)
    assert [t.uri_template for t in templates.resource_templates] == ["paper://{arxiv_id}"]
    contents = resource.contents[0]
    assert contents.mime_type == "text/markdown" and contents.text.startswith("# Adam")
    assert [p.name for p in prompts.prompts] == ["review_paper_claims"]
    assert prompts.prompts[0].title == "Review this paper's claims with citations"
    text = prompt.messages[0].content.text
    assert "read_paper_pages" in text and "page" in text and INDEXED in text


def _post(base: str, body: dict[str, Any], **headers: str) -> httpx.Response:
    """One raw JSON-RPC POST, as an MCP client sends it in stateless mode."""
    return httpx.post(
        f"{base}/mcp",
        json=body,
        headers={"accept": "application/json, text/event-stream", **headers},
        timeout=30,
    )


TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


def test_only_the_public_host_is_served(site: McpSite) -> None:
    assert _post(site.base, TOOLS_LIST).status_code == 200
    refused = _post(site.base, TOOLS_LIST, host="evil.example")
    assert 400 <= refused.status_code < 500
    cross_site = _post(site.base, TOOLS_LIST, origin="https://evil.example")
    assert 400 <= cross_site.status_code < 500


def test_cookies_are_not_passed_on_and_no_session_is_made(site: McpSite) -> None:
    answer = _post(site.base, TOOLS_LIST, cookie="wovepaper_session=forged")
    assert answer.status_code == 200
    assert "set-cookie" not in answer.headers
    assert {t["name"] for t in answer.json()["result"]["tools"]} == TOOLS


def test_tool_calls_are_limited_per_client(site: McpSite) -> None:
    port = free_port()
    limited = with_env(
        site.settings, {"WOVEPAPER_LIMIT_MCP": "2/60", "WOVEPAPER_PUBLIC_URL": f"http://127.0.0.1:{port}"}
    )
    with served(limited, port) as base:
        other = McpSite(base, limited, site.facts)
        for _ in range(2):
            assert not call(other, "get_paper", {"arxiv_id": INDEXED}).is_error
        refused = call(other, "get_paper", {"arxiv_id": INDEXED})
        assert refused.is_error and "try again in" in text_of(refused)


def _process(settings_env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "app.main:create_app", "--factory", "--host", "127.0.0.1",
         "--port", str(port), "--log-level", "warning"],
        cwd=PROJECT_ROOT,
        env={**os.environ, **settings_env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip


def test_two_processes_answer_one_clients_calls_alternately(site: McpSite) -> None:
    """Stateless: the client's calls go to two app processes in turn (a transport that alternates
    between them), with nothing shared but the catalogue, the index and the public address."""
    ports = [free_port(), free_port()]
    public = f"http://127.0.0.1:{ports[0]}"
    env = {
        "WOVEPAPER_DATABASE_URL": site.settings.database_url,
        "WOVEPAPER_DATA_DIR": str(site.settings.core.data_dir),
        "WOVEPAPER_ENVIRONMENT": "test",
        "WOVEPAPER_WORKER_EMBEDDED": "false",
        # Both answer to one public address (a load balancer's); the Host header says so.
        "WOVEPAPER_PUBLIC_URL": public,
        "WOVEPAPER_CHROMA_HOST": site.settings.chroma.chroma_host,
        "WOVEPAPER_CHROMA_PORT": str(site.settings.chroma.chroma_port),
        "WOVEPAPER_LOCAL_LLM_ENABLED": "false",
    }
    processes = [_process(env, port) for port in ports]
    seen: list[int] = []

    class Alternate(httpx2.AsyncBaseTransport):  # the SDK's client speaks httpx2
        def __init__(self) -> None:
            self.inner = httpx2.AsyncHTTPTransport()

        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            port = ports[len(seen) % 2]
            seen.append(port)
            request.url = request.url.copy_with(port=port)
            return await self.inner.handle_async_request(request)

    try:
        for port in ports:
            _wait(f"http://127.0.0.1:{port}/healthz", processes)

        async def go() -> list[CallToolResult]:
            async with (
                httpx2.AsyncClient(transport=Alternate(), timeout=30) as http,
                Client(streamable_http_client(f"{public}/mcp", http_client=http)) as client,
            ):
                return [
                    await client.call_tool("get_paper", {"arxiv_id": INDEXED}),
                    await client.call_tool("search_papers", {"query": "adam optimizer"}),
                    await client.call_tool("read_paper_pages", {"arxiv_id": INDEXED, "first_page": 1}),
                    await client.call_tool("get_researcher", {"researcher_id": site.facts.plain_researcher}),
                ]

        results = anyio.run(go)
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=20)
    assert all(not r.is_error for r in results), [text_of(r) for r in results if r.is_error]
    # The handshake and the four calls, each process answering every other one.
    assert len(seen) >= 5 and seen.count(ports[0]) >= 2 and seen.count(ports[1]) >= 2


def _wait(url: str, processes: list[subprocess.Popen[bytes]]) -> None:
    for _ in range(240):
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        for process in processes:
            if process.poll() is not None:
                detail = process.stderr.read().decode() if process.stderr else ""
                raise AssertionError(f"an app process exited: {detail[-2000:]}")
        anyio.run(anyio.sleep, 0.25)
    raise AssertionError(f"{url} did not answer")


# -- the developers page: every MCP example shown there runs -----------------------------------

_TOOL_ROW = re.compile(r"^\| `(?P<name>[a-z_]+)` \| (?P<what>.+?) \| `(?P<example>\{.*\})` \|$", re.M)


def _developers(site: McpSite) -> str:
    answer = httpx.get(f"{site.base}/developers.md", timeout=30)
    assert answer.status_code == 200
    return answer.text


def _block(markdown: str, language: str) -> str:
    found = re.findall(rf"^```{language}\n(.*?)^```$", markdown, flags=re.M | re.S)
    assert len(found) == 1, f"one {language} block on the developers page"
    return str(found[0])


def test_the_developers_page_lists_every_tool_and_its_examples_run(site: McpSite) -> None:
    markdown = _developers(site)
    rows = [m.groupdict() for m in _TOOL_ROW.finditer(markdown)]

    async def tools() -> set[str]:
        async with Client(site.endpoint) as client:
            return {t.name for t in (await client.list_tools()).tools}

    assert {r["name"] for r in rows} == anyio.run(tools) == TOOLS
    for row in rows:
        scopes = {"ask": {"chat"}, "request_full_text": {"fulltext"}}.get(row["name"])
        token = site.token(scopes) if scopes else None
        result = call(site, row["name"], json.loads(row["example"]), token)
        assert not result.is_error, (row["name"], text_of(result))
        assert result.structured_content, row["name"]
        assert site.base in text_of(result), "canonical URLs are absolute"


def test_the_developers_page_client_configuration_connects(site: McpSite) -> None:
    config = json.loads(_block(_developers(site), "json"))
    server = config["mcpServers"]["wovepaper"]
    assert server["type"] == "http" and server["url"] == site.endpoint

    async def go() -> set[str]:
        async with Client(server["url"]) as client:
            return {t.name for t in (await client.list_tools()).tools}

    assert anyio.run(go) == TOOLS


def test_the_developers_page_python_example_runs(site: McpSite) -> None:
    code = _block(_developers(site), "python")
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.startswith("# Results for “adaptive moment estimation”")
    assert "Adam" in ran.stdout


def test_the_developers_page_curl_example_runs(site: McpSite) -> None:
    command = _block(_developers(site), "sh").strip()
    assert command.startswith(f"curl -s {site.endpoint} ")
    ran = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=60, check=False)
    assert ran.returncode == 0, ran.stderr
    answer = json.loads(ran.stdout)
    assert answer["result"]["structuredContent"]["paper"]["arxiv_id"] == INDEXED
    assert answer["result"]["content"][0]["text"].startswith("# Adam")


# -- ask: the chat pipeline, for token holders ---------------------------------------------------

ASK = {"question": "How does Adam correct the bias of its moment estimates?", "papers": [INDEXED]}
ASK_CALL = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "ask", "arguments": ASK}}


def test_ask_without_a_token_is_401_with_the_sdks_header(site: McpSite) -> None:
    answer = _post(site.base, ASK_CALL)
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"].startswith('Bearer error="invalid_token"')
    assert answer.json()["error"] == "invalid_token"
    # The other tools stay open to anonymous callers.
    assert _post(site.base, TOOLS_LIST).status_code == 200


def test_ask_with_a_token_without_the_chat_scope_is_403(site: McpSite) -> None:
    answer = _post(site.base, ASK_CALL, authorization=f"Bearer {site.token({'read'})}")
    assert answer.status_code == 403
    assert 'error="insufficient_scope"' in answer.headers["www-authenticate"]


def test_a_session_cookie_is_not_a_token_on_mcp(site: McpSite) -> None:
    assert site.signin_link is not None
    with httpx.Client(timeout=30) as browser:
        signed_in = browser.get(site.signin_link, follow_redirects=True)
        assert signed_in.status_code == 200 and browser.cookies, "the local link signs in"
        assert browser.get(f"{site.base}/api/account").status_code == 200, "the session works elsewhere"
        answer = browser.post(
            f"{site.base}/mcp", json=ASK_CALL, headers={"accept": "application/json, text/event-stream"}
        )
        assert answer.status_code == 401
        assert "set-cookie" not in answer.headers


def test_ask_answers_with_checked_references(site: McpSite, model: ScriptedLLM) -> None:
    model.script(["Adam divides each moment estimate by one minus the decay rate to the power t [S1]."])
    result = call(site, "ask", ASK, site.token())
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data is not None and data["message_id"] and data["conversation_id"]
    # The code checks the model's key: the sentence ends cited, with every number a reference
    # (attribution may add the passage that supports the sentence best).
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", data["answer"])}
    assert data["answer"].rstrip(".").endswith("]") and not data["unsupported"]
    assert cited and cited == {r["n"] for r in data["references"]}
    ref = data["references"][0]
    assert ref["n"] == 1 and ref["arxiv_id"] == INDEXED and ref["pages"]
    assert all(p["arxiv_id"] == INDEXED for p in data["passages"])
    markdown = text_of(result)
    assert "## References" in markdown and ref["paper_url"] in markdown
    # An agent gets our page reader at the cited passage, absolute like the paper's address.
    reader = ref["reader_url"]
    assert reader.startswith(("https://", "http://")) and f"/papers/{INDEXED}/pages/" in reader
    assert ref["reader_url"] in markdown
    assert len(model.requests) == 1, "one model call"


def test_ask_counts_against_that_persons_chat_limit(site: McpSite, model: ScriptedLLM) -> None:
    token = site.token()
    model.script(*[["Bias correction [S1]."]] * CHAT_LIMIT)
    for _ in range(CHAT_LIMIT):
        assert not call(site, "ask", ASK, token).is_error
    refused = call(site, "ask", ASK, token)
    assert refused.is_error and "chat limit" in text_of(refused) and "try again in" in text_of(refused)
    assert not call(site, "ask", ASK, site.token()).is_error, "another person has their own limit"


def test_ask_with_a_bad_question_is_a_tool_error(site: McpSite) -> None:
    result = call(site, "ask", {"question": "x" * 5000}, site.token())
    assert result.is_error and "limit" in text_of(result)
    result = call(site, "ask", {"question": "adam", "papers": ["not an id"]}, site.token())
    assert result.is_error and "arXiv id" in text_of(result)


def test_every_address_the_developers_page_links_answers(site: McpSite) -> None:
    """The page's example URLs (``<…>`` links) answer over HTTP; ``/mcp`` is the MCP endpoint,
    which the tests above call with the SDK's client."""
    urls = set(re.findall(r"<(http[^>]+)>", _developers(site)))
    assert f"{site.base}/papers/1706.03762.md" in urls and site.endpoint in urls
    with httpx.Client(timeout=30, follow_redirects=True) as client:
        for url in sorted(urls - {site.endpoint}):
            assert url.startswith(site.base + "/"), url
            assert client.get(url).status_code == 200, url


def test_no_stream_is_opened_by_a_get_and_no_session_ended_by_a_delete(site: McpSite) -> None:
    """A stateless server: GET (the server-to-client stream) and DELETE (ending a session) are 405
    at once, for anyone — no idle connection a limit does not count."""
    for method in ("GET", "DELETE"):
        answer = httpx.request(
            method, site.endpoint, headers={"Accept": "text/event-stream, application/json"}, timeout=5
        )
        assert answer.status_code == 405 and answer.headers["allow"] == "POST"
        assert answer.json()["error"]["code"] == -32000
