"""``POST /api/chat`` end to end over real HTTP: the app served by uvicorn on a real corpus (three
PDFs ingested by the product's own pipeline), the model a scripted OpenAI-compatible server reached
through the real ``openai`` client. What the issue asks of the stream: evidence before any token,
checked citations, the fixed answer without a model call, the evidence answer when the model is
down or slow, limits, conversations that only their owner sees, cancellation on disconnect."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from app.main import create_app
from chat.pipeline import ECHO, NO_EVIDENCE, NOT_NAMED, RETRY, UNAVAILABLE, WORDLESS
from prompts import template
from settings import Settings
from tests.integration.browse_catalogue import served
from tests.integration.chat_corpus import HIDDEN_ID, HIDDEN_ORDER, ChatCorpus, build, environment
from tests.integration.scripted_llm import ScriptedLLM, user_prompt
from tests.integration.signin_peers import api_token

QUESTION = "How does the Transformer use multi-head attention instead of recurrence?"
NONSENSE = "zqxv blorfic frumious wabberjack quolm?"
TOKENS_PER_DAY = 6000


@pytest.fixture(scope="session")
def chat_corpus(tmp_path_factory: pytest.TempPathFactory) -> ChatCorpus:
    return build(tmp_path_factory.mktemp("chat-corpus"))


@dataclass
class Served:
    base: str
    model: ScriptedLLM
    settings: Settings
    signin_link: str  # the one-time local sign-in link (path and query)

    def token(self, name: str = "tester", scopes: set[str] | None = None) -> str:
        """A new person with an API token (each test its own, so limits do not interfere)."""
        return api_token(self.settings.database_url, name=name, scopes=scopes)


@pytest.fixture(scope="module")
def app(chat_corpus: ChatCorpus) -> Iterator[Served]:
    model = ScriptedLLM().start()
    env = {
        **chat_corpus.env,
        "WOVEPAPER_LLM_BASE_URL": model.base_url,
        "WOVEPAPER_LLM_FIRST_TOKEN_TIMEOUT_SECONDS": "2",
        "WOVEPAPER_LIMIT_CHAT_REQUESTS": "6/3600",
        # Per person (each test asks as its own): above what any other test's person spends.
        "WOVEPAPER_LIMIT_CHAT_TOKENS_PER_DAY": str(TOKENS_PER_DAY),
        "WOVEPAPER_LIMIT_API": "100000/60",
        # Pings well inside the first-token timeout, so a slow machine still sees one before it.
        "WOVEPAPER_CHAT_PING_SECONDS": "0.25",
    }
    with environment(env) as settings:
        for section in ("core", "database", "search", "embedding", "chroma", "worker", "chunks", "parser"):
            getattr(settings, section)
        for section in ("llm", "chat", "limits", "auth", "redis", "server", "pages"):
            getattr(settings, section)
    application = create_app(settings)
    try:
        with served(settings, app=application) as base:
            link = urlsplit(application.state.auth.local_link_url)
            yield Served(base, model, settings, f"{link.path}?{link.query}")
    finally:
        model.stop()


def events(response: httpx.Response) -> list[tuple[str, Any]]:
    """The SSE events of a response (comments kept as ("ping", None))."""
    found: list[tuple[str, Any]] = []
    kind = "message"
    for line in response.iter_lines():
        if line.startswith(":"):
            found.append(("ping", None))
        elif line.startswith("event:"):
            kind = line.split(":", 1)[1].strip()
        elif line.startswith("data:"):
            found.append((kind, json.loads(line.split(":", 1)[1])))
            kind = "message"
    return found


def ask(app: Served, token: str, question: str = QUESTION, **body: Any) -> list[tuple[str, Any]]:
    with (
        httpx.Client(base_url=app.base, timeout=30) as client,
        client.stream(
            "POST",
            "/api/chat",
            json={"question": question, **body},
            headers={"Authorization": f"Bearer {token}"},
        ) as response,
    ):
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["x-accel-buffering"] == "no"
        return events(response)


def only(found: list[tuple[str, Any]], kind: str) -> list[Any]:
    return [data for k, data in found if k == kind]


def test_evidence_first_then_tokens_with_only_given_keys_as_numbers(app: Served) -> None:
    app.model.script(
        ["The Transformer relies entirely on attention", " [S", "1] and drops recurrence [S", "99].", " [3]"]
    )
    found = [e for e in ask(app, app.token()) if e[0] != "ping"]
    kinds = [k for k, _ in found]
    assert kinds[0] == "evidence" and kinds[-1] == "done"
    assert kinds.index("evidence") < kinds.index("token") < kinds.index("citations")
    evidence = found[0][1]
    keys = {p["key"] for p in evidence["passages"]}
    assert "S1" in keys and all(p["arxiv_id"] == "1706.03762" for p in evidence["passages"][:1])
    assert evidence["passages"][0]["pdf_url"].split("#page=")[1].isdigit()
    text = "".join(d["text"] for d in only(found, "token"))
    assert "[1]" in text and "S99" not in text and "[S" not in text and "[3]" not in text
    citations = only(found, "citations")[0]
    assert [r["key"] for r in citations["references"]][:1] == ["S1"]
    assert all(r["key"] in keys for r in citations["references"])
    assert citations["references"][0]["pdf_url"].startswith(evidence["passages"][0]["pdf_url"].split("#")[0])
    done = only(found, "done")[0]
    assert done["message_id"] and done["notice"] is None
    # What the model was given: keyed passages as untrusted data, the question, the system rules.
    sent = app.model.requests[-1].messages
    assert sent[0]["role"] == "system" and "untrusted" in sent[0]["content"]
    assert "[S1]" in user_prompt(sent) and QUESTION in user_prompt(sent)


def test_no_evidence_gives_the_fixed_answer_without_calling_the_model(app: Served) -> None:
    app.model.script()
    found = ask(app, app.token(), NONSENSE)
    assert only(found, "evidence")[0]["passages"] == []
    assert only(found, "token") == []
    assert only(found, "done")[0]["notice"] == NO_EVIDENCE
    assert app.model.requests == []


def test_a_name_no_evidence_writes_gives_the_evidence_and_no_draft(app: Served) -> None:
    """The question's other words find pages; the model it asks about is in none of them, so the
    model is not asked (it would answer about the pages' own subject)."""
    app.model.script()
    found = ask(app, app.token(), QUESTION.replace("the Transformer", "the Transformer-XL"))
    assert only(found, "evidence")[0]["passages"]
    assert only(found, "token") == []
    assert only(found, "done")[0]["notice"] == NOT_NAMED.format(name="Transformer-XL")
    assert app.model.requests == []


@pytest.mark.parametrize("failure", ["error", "slow"])
def test_a_failing_model_gives_the_evidence_with_a_notice(app: Served, failure: str) -> None:
    app.model.script(["Too late."])
    if failure == "error":
        app.model.status = 500
    else:
        app.model.first_delay = 3.0  # over the 2 s first-token timeout
    try:
        started = time.monotonic()
        found = ask(app, app.token())
    finally:
        app.model.status, app.model.first_delay = 200, 0.0
    assert only(found, "evidence")[0]["passages"]
    assert only(found, "error") == []
    assert only(found, "done")[0]["notice"] == UNAVAILABLE
    assert time.monotonic() - started < 10


def test_json_and_markdown_answers(app: Served) -> None:
    token = app.token()
    app.model.script(["Attention replaces recurrence [S1]."], ["Attention replaces recurrence [S1]."])
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=app.base, timeout=30) as client:
        answer = client.post(
            "/api/chat", json={"question": QUESTION}, headers={**headers, "Accept": "application/json"}
        )
        assert answer.status_code == 200
        body = answer.json()
        assert body["answer"].startswith("Attention replaces recurrence [1]")
        assert body["references"][0]["n"] == 1 and body["passages"]
        assert body["unsupported"] is False
        markdown = client.post(
            "/api/chat", json={"question": QUESTION}, headers={**headers, "Accept": "text/markdown"}
        )
        assert markdown.headers["content-type"] == "text/markdown; charset=utf-8"  # one charset, as pages
        assert "## References" in markdown.text and "#page=" in markdown.text


def test_an_answer_citing_nothing_is_marked_unsupported(app: Served) -> None:
    app.model.script(["Bananas are yellow and grow in warm countries near the equator."])
    found = ask(app, app.token())
    citations = only(found, "citations")[0]
    assert citations["unsupported"] is True and citations["references"] == []
    assert any(f["kind"] == "sentence" for f in citations["flags"])


def test_conversations_belong_to_their_owner(app: Served) -> None:
    alice, bob = app.token("alice"), app.token("bob")
    app.model.script(["Attention [S1]."], ["It is used in parallel [S1]."])
    first = ask(app, alice)
    conversation_id = only(first, "done")[0]["conversation_id"]
    follow_up = ask(
        app, alice, "And why is it faster?", conversation_id=conversation_id, papers=["1706.03762v5"]
    )
    assert only(follow_up, "done")[0]["conversation_id"] == conversation_id
    as_alice = {"Authorization": f"Bearer {alice}"}
    as_bob = {"Authorization": f"Bearer {bob}"}
    with httpx.Client(base_url=app.base, timeout=30) as client:
        listed = client.get("/api/chat/conversations", headers=as_alice).json()
        assert [c["id"] for c in listed] == [conversation_id] and listed[0]["messages"] == 4
        shown = client.get(f"/api/chat/conversations/{conversation_id}", headers=as_alice).json()
        assert [m["role"] for m in shown["messages"]] == ["user", "assistant", "user", "assistant"]
        assert shown["messages"][1]["references"][0]["key"] == "S1"
        # Reopened, it keeps the scope its last question had (canonical id, with the title to show).
        assert [p["arxiv_id"] for p in shown["scope"]] == ["1706.03762"]
        assert shown["scope"][0]["title"].startswith("Attention Is All You Need")
        for method, path in [
            ("GET", f"/api/chat/conversations/{conversation_id}"),
            ("GET", f"/api/chat/conversations/{conversation_id}.md"),
            ("PATCH", f"/api/chat/conversations/{conversation_id}"),
            ("DELETE", f"/api/chat/conversations/{conversation_id}"),
        ]:
            answer = client.request(
                method, path, headers=as_bob, json={"title": "mine"} if method == "PATCH" else None
            )
            assert answer.status_code == 404, (method, path)
        assert client.get("/api/chat/conversations", headers=as_bob).json() == []
        stolen = client.post(
            "/api/chat",
            json={"question": QUESTION, "conversation_id": conversation_id},
            headers={**as_bob, "Accept": "application/json"},
        )
        assert stolen.status_code == 404
        renamed = client.patch(
            f"/api/chat/conversations/{conversation_id}", headers=as_alice, json={"title": "Attention"}
        )
        assert renamed.json()["title"] == "Attention"
        exported = client.get(f"/api/chat/conversations/{conversation_id}.md", headers=as_alice)
        assert exported.text.startswith("# Attention") and "**Question:**" in exported.text
        assert exported.headers["content-type"] == "text/markdown; charset=utf-8"
        assert (
            client.delete(f"/api/chat/conversations/{conversation_id}", headers=as_alice).status_code == 204
        )
        assert client.get(f"/api/chat/conversations/{conversation_id}", headers=as_alice).status_code == 404


def test_long_questions_413_and_limits_429(app: Served) -> None:
    token = app.token()
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    limit = app.settings.chat.chat_max_question_chars
    with httpx.Client(base_url=app.base, timeout=30) as client:
        too_long = client.post("/api/chat", json={"question": "why " * limit}, headers=headers)
        assert too_long.status_code == 413 and str(limit) in too_long.text
        assert client.post("/api/chat", json={"question": "  "}, headers=headers).status_code == 400
        no_scope = app.token(scopes={"read"})
        refused = client.post(
            "/api/chat", json={"question": QUESTION}, headers={"Authorization": f"Bearer {no_scope}"}
        )
        assert refused.status_code == 403
        statuses = [
            client.post("/api/chat", json={"question": NONSENSE}, headers=headers).status_code
            for _ in range(7)
        ]
    assert statuses[:6] == [200] * 6 and statuses[6] == 429


def test_a_spent_daily_token_budget_answers_429_with_retry_after(app: Served) -> None:
    """Tokens (prompt + answer) are charged when an answer ends; once a person's day's budget is
    spent the next question is refused before any retrieval, with the wait in ``Retry-After``."""
    token = app.token()
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    statuses = []
    with httpx.Client(base_url=app.base, timeout=30) as client:
        for _ in range(10):
            app.model.script(["Multi-head attention replaces recurrence [S1]."])
            response = client.post("/api/chat", json={"question": QUESTION}, headers=headers)
            statuses.append(response.status_code)
            if response.status_code != 200:
                break
    assert statuses[0] == 200 and statuses[-1] == 429, statuses
    assert 2 <= len(statuses) <= 9, statuses  # each answer costs well over a tenth of the budget
    assert "tokens per day" in response.json()["detail"]
    assert 1 <= int(response.headers["retry-after"]) <= 24 * 3600


def test_a_third_concurrent_answer_is_refused(app: Served) -> None:
    token = app.token()
    headers = {"Authorization": f"Bearer {token}"}
    app.model.script(["Slow [S1]."] * 2)
    app.model.first_delay = 1.5
    try:
        with (
            httpx.Client(base_url=app.base, timeout=30) as client,
            client.stream("POST", "/api/chat", json={"question": QUESTION}, headers=headers) as one,
            client.stream("POST", "/api/chat", json={"question": QUESTION}, headers=headers) as two,
        ):
            assert one.status_code == two.status_code == 200
            third = httpx.post(
                f"{app.base}/api/chat",
                json={"question": QUESTION},
                headers={**headers, "Accept": "application/json"},
            )
            assert third.status_code == 429 and int(third.headers["retry-after"]) >= 1
    finally:
        app.model.first_delay = 0.0


def test_disconnecting_cancels_the_model_stream_and_keeps_the_partial_answer(app: Served) -> None:
    token = app.token()
    app.model.script(["word "] * 200)
    app.model.delta_delay = 0.05
    try:
        with (
            httpx.Client(base_url=app.base, timeout=30) as client,
            client.stream(
                "POST", "/api/chat", json={"question": QUESTION}, headers={"Authorization": f"Bearer {token}"}
            ) as response,
        ):
            conversation_id = None
            event = ""
            for line in response.iter_lines():
                event = line[6:].strip() if line.startswith("event:") else event
                if line.startswith("data:") and "conversation_id" in line and conversation_id is None:
                    conversation_id = json.loads(line[5:])["conversation_id"]
                if line.startswith("data:") and event == "token":
                    break
        left = time.monotonic()
        record = app.model.requests[-1]
        deadline = left + 6
        while record.disconnected_at is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert record.disconnected_at is not None, "the model kept generating after the client left"
        # The whole answer takes 10 s; its stream is closed well before (a deadline, not a stopwatch).
        assert record.disconnected_at - left < 3.0
        assert record.sent < 200
    finally:
        app.model.delta_delay = 0.0
    time.sleep(0.3)
    with httpx.Client(base_url=app.base, timeout=30) as client:
        shown = client.get(
            f"/api/chat/conversations/{conversation_id}", headers={"Authorization": f"Bearer {token}"}
        ).json()
    assert [m["role"] for m in shown["messages"]] == ["user", "assistant"]
    assert shown["messages"][1]["text"].startswith("word")


def test_hidden_instructions_in_a_pdf_never_reach_the_model(app: Served) -> None:
    app.model.script(["The mean heat flow was 83 milliwatts per square metre [S1]."])
    found = ask(
        app, app.token(), "What was the mean tidal heat flow in the Quenby archipelago?", papers=[HIDDEN_ID]
    )
    passages = only(found, "evidence")[0]["passages"]
    assert passages and {p["arxiv_id"] for p in passages} == {HIDDEN_ID}
    assert all("MARMALADE" not in p["quote"] for p in passages)
    prompt = "\n".join(m["content"] for m in app.model.requests[-1].messages)
    assert "heat flow" in prompt and "MARMALADE" not in prompt and HIDDEN_ORDER not in prompt
    citations = only(found, "citations")[0]
    assert citations["references"][0]["arxiv_id"] == HIDDEN_ID
    assert not [f for f in citations["flags"] if f["kind"] == "number"]


def test_a_signed_in_session_asks_with_the_csrf_header(app: Served) -> None:
    app.model.script(["Attention replaces recurrence [S1]."])
    with httpx.Client(base_url=app.base, timeout=30) as browser:
        assert browser.post("/api/chat", json={"question": QUESTION}).status_code == 401
        assert browser.get(app.signin_link).status_code in (302, 303)
        account = browser.get("/account").text
        marker = 'name="csrf_token" value="'
        start = account.index(marker) + len(marker)
        csrf = account[start : account.index('"', start)]
        assert browser.post("/api/chat", json={"question": QUESTION}).status_code == 403
        answer = browser.post(
            "/api/chat",
            json={"question": QUESTION},
            headers={"X-CSRF-Token": csrf, "Accept": "application/json"},
        )
        assert answer.status_code == 200 and answer.json()["references"]
        listed = browser.get("/api/chat/conversations").json()
        assert [c["id"] for c in listed] == [answer.json()["conversation_id"]]


def test_an_idle_stream_is_kept_alive_with_comment_pings(app: Served) -> None:
    app.model.script(["Attention replaces recurrence [S1]."])
    app.model.first_delay = 1.0  # a second under the 2 s first-token timeout, four ping intervals
    try:
        found = ask(app, app.token())
    finally:
        app.model.first_delay = 0.0
    kinds = [k for k, _ in found]
    assert "ping" in kinds[kinds.index("evidence") : kinds.index("token")]
    assert only(found, "done")[0]["notice"] is None


def test_a_follow_up_is_condensed_with_the_conversation_before_retrieval(app: Served) -> None:
    token = app.token()
    app.model.script(["Multi-head attention replaces recurrence [S1]."])
    first = ask(app, token)
    conversation_id = only(first, "done")[0]["conversation_id"]
    first_prompt = user_prompt(app.model.requests[-1].messages)

    def cite_first_given(messages: list[dict[str, str]]) -> list[str]:
        key = re.search(r"^\[(S\d+)\]", user_prompt(messages), re.MULTILINE)
        return [f"It uses 8 heads [{key[1] if key else 'S1'}]."]

    app.model.script(
        ["How many attention heads does the Transformer base model use?"],  # the condensed question
        cite_first_given,
    )
    follow_up = ask(app, token, "And how many heads?", conversation_id=conversation_id)
    condense, answer = app.model.requests
    # The first exchange word for word before the follow-up (a server's prompt cache reuses it), and
    # the follow-up's passages keyed after the first's, so an earlier key never names a new passage.
    assert answer.messages[1:3] == [
        {"role": "user", "content": first_prompt},
        {"role": "assistant", "content": "Multi-head attention replaces recurrence [S1]."},
    ]
    earlier = {p["key"] for p in only(first, "evidence")[0]["passages"]}
    later = {p["key"] for p in only(follow_up, "evidence")[0]["passages"]}
    assert later and not earlier & later
    assert "Follow-up question: And how many heads?" in user_prompt(condense.messages)
    assert QUESTION in user_prompt(condense.messages)  # the conversation so far
    assert "Question: How many attention heads does the Transformer base model use?" in user_prompt(
        answer.messages
    )
    assert only(follow_up, "evidence")[0]["question"] == "And how many heads?"
    assert only(follow_up, "citations")[0]["references"]


def test_a_reply_reciting_the_system_prompt_is_stopped(app: Served) -> None:
    rules = template("system")
    app.model.script([rules[i : i + 12] for i in range(0, len(rules), 12)])
    app.model.delta_delay = 0.02
    try:
        found = ask(app, app.token())
    finally:
        app.model.delta_delay = 0.0
    streamed = "".join(d["text"] for d in only(found, "token"))
    assert len(streamed) < 120 and "never reveal" not in streamed
    done = only(found, "done")[0]
    assert done["notice"] == ECHO
    time.sleep(0.2)
    record = app.model.requests[-1]
    assert record.disconnected_at is not None and record.sent < len(rules) // 12


def test_a_reply_without_words_is_asked_again_and_never_shown(app: Served) -> None:
    app.model.script(["[15]", " 128"], ["Attention replaces recurrence", " [S1]."])
    found = ask(app, app.token())
    streamed = "".join(d["text"] for d in only(found, "token"))
    assert "128" not in streamed and streamed.startswith("Attention replaces recurrence")
    retry = app.model.requests[-1].messages
    assert retry[-2] == {"role": "assistant", "content": "[15] 128"}
    assert retry[-1] == {"role": "user", "content": RETRY}
    citations = only(found, "citations")[0]
    assert citations["answer"].startswith("Attention replaces recurrence") and citations["references"]
    assert only(found, "done")[0]["notice"] is None


def test_two_replies_without_words_give_a_notice_and_no_answer(app: Served) -> None:
    app.model.script(["[1] 128"], ["[S1]"])
    found = ask(app, app.token())
    assert not "".join(d["text"] for d in only(found, "token"))
    assert only(found, "citations")[0]["answer"] == ""
    assert only(found, "done")[0]["notice"] == WORDLESS
    assert only(found, "evidence")[0]["quotes"]  # the key quotes stand instead


def test_ids_beyond_the_columns_and_bodies_nested_too_deeply_get_a_clear_4xx(app: Served) -> None:
    """Round three of hardening: a 20-digit id, a non-ASCII digit and a body nested 100,000 deep
    are the client's mistakes (400/404), never a 5xx."""
    headers = {"Authorization": f"Bearer {app.token()}", "Accept": "application/json"}
    deep = b'{"question": "x", "papers": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with httpx.Client(base_url=app.base, timeout=30, headers=headers) as client:
        huge = client.post("/api/chat", json={"question": QUESTION, "conversation_id": 99999999999999999999})
        assert huge.status_code == 400 and "conversation_id" in huge.json()["detail"]
        assert client.post("/api/chat", json={"question": QUESTION, "conversation_id": 0}).status_code == 400
        assert client.get("/api/chat/conversations/\u0661").status_code == 404  # Arabic-Indic one
        assert client.get("/api/chat/conversations/99999999999999999999").status_code == 404
        nested = client.post("/api/chat", content=deep, headers={"Content-Type": "application/json"})
        assert nested.status_code == 400, nested.text
        patched = client.patch(
            "/api/chat/conversations/1",
            content=deep.replace(b'"question"', b'"title"'),
            headers={"Content-Type": "application/json"},
        )
        assert 400 <= patched.status_code < 500, patched.text
        mcp = httpx.post(
            f"{app.base}/mcp",
            content=b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": '
            + b"[" * 100_000
            + b"]" * 100_000
            + b"}",
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
        )
        assert mcp.status_code < 500, mcp.text


def test_json_endpoints_take_json_only(app: Served) -> None:
    headers = {"Authorization": f"Bearer {app.token()}", "Accept": "application/json"}
    body = json.dumps({"question": QUESTION})
    with httpx.Client(base_url=app.base, timeout=30, headers=headers) as client:
        for kind in ("text/plain", "application/x-www-form-urlencoded", ""):
            sent = client.post("/api/chat", content=body, headers={"Content-Type": kind} if kind else {})
            assert sent.status_code == 415, (kind, sent.status_code)
        renamed = client.patch(
            "/api/chat/conversations/1",
            content=json.dumps({"title": "x"}),
            headers={"Content-Type": "text/plain"},
        )
        assert renamed.status_code == 415
