"""Hostile input to the signed-in and state-changing surfaces, over real HTTP (SQLite and PostgreSQL),
against the app served on loopback with two people signed in through a real OpenID provider
(:mod:`tests.integration.signed_in_site`). :mod:`test_hostile_http` covers GET/HEAD anonymously.

- **Every unsafe route** (POST, PATCH, PUT, DELETE; read from the app's own route table, so a new
  route is covered without touching this file) gets deeply nested JSON bodies, ids beyond 64 bits
  in its path and in its body, anonymously, with a session (and its CSRF token) and with a bearer
  token with every scope: never a 5xx, always a clear 4xx, and from ``/mcp`` a JSON-RPC error.
- **Schemathesis signed in**: the whole OpenAPI with two people's tokens (every scope) as Web Fuzzing
  Commons peers, so its ``object_level_authorization`` check replays one person's reads as the other;
  all phases, every check, every warning shown and failing the run; real ids (both people's
  conversations, papers, institutions) drawn half the time for the path parameters.
- **MCP through its tools' input schemas**: arguments drawn from the schemas ``tools/list`` gives,
  mixed with off-schema values; every answer a JSON-RPC result or error, never a 5xx.
- **A state machine of two people**: conversations, tokens and follows created, renamed, deleted,
  revoked, followed and unfollowed, each person also reaching for the other's; no 5xx, the other's
  things are 404, and what one creates is what one reads back.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from tests.integration.browse_catalogue import ServedCatalogue
from tests.integration.signed_in_site import Person, SignedInSite, signed_in_site

pytestmark = pytest.mark.slow

UNSAFE = ("POST", "PATCH", "PUT", "DELETE")
DEPTH = 100_000  # far beyond any recursive parser's limit (Python's is 1,000)
STATE_MACHINE_EXAMPLES = 16  # runs of up to 15 steps, the same ones every time (derandomized)
HUGE_IDS = ("99999999999999999999", "18446744073709551616", "9223372036854775808")


@pytest.fixture(scope="module")
def site(
    served_catalogue: ServedCatalogue, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SignedInSite]:
    # Searches in processes, as served by default: the fuzz runs the path a deployment runs.
    env = {"WOVEPAPER_SEARCH_PROCESSES": "true"}
    with signed_in_site(served_catalogue, tmp_path_factory.mktemp("signed-in"), env) as s:
        yield s


# -- nested bodies and huge ids to every unsafe route ---------------------------------------------


def unsafe_routes(site: SignedInSite) -> list[tuple[str, str]]:
    """(method, path template) for every unsafe method the app routes; a mounted ASGI app (``/mcp``)
    is offered every unsafe method."""
    found = []
    for route in site.app.routes:
        methods = getattr(route, "methods", None) or set(UNSAFE)
        found += [(m, route.path_format) for m in UNSAFE if m in methods]
    return sorted(set(found))


def nested(opening: bytes, middle: bytes, closing: bytes) -> bytes:
    return opening * DEPTH + middle + closing * DEPTH


NESTED_BODIES = {
    "arrays": nested(b"[", b"", b"]"),
    "objects": nested(b'{"a":', b"1", b"}"),
    "a nested field": b'{"question": "q", "title": "t", "papers": ' + nested(b"[", b"", b"]") + b"}",
    "a nested JSON-RPC call": b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": '
    b'"ask", "arguments": ' + nested(b'{"a":', b"1", b"}") + b"}}",
}


def huge_id_bodies() -> dict[str, bytes]:
    bodies = {}
    for raw in HUGE_IDS:
        number = int(raw)
        bodies[f"conversation_id {raw}"] = json.dumps({"question": "q", "conversation_id": number}).encode()
        bodies[f"ids {raw} in a JSON-RPC call"] = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": number,
                "method": "tools/call",
                "params": {
                    "name": "ask",
                    "arguments": {"question": "q", "conversation_id": number, "researcher_id": number},
                },
            }
        ).encode()
    return bodies


def credentials(site: SignedInSite, person: Person, kind: str) -> tuple[httpx.Client, dict[str, str]]:
    """A client and the headers that sign a request in as ``kind``."""
    if kind == "session":
        site.resign(person)
        return person.browser.client, person.session_headers
    headers = person.bearer if kind == "bearer" else {}
    return httpx.Client(base_url=site.base, timeout=60, follow_redirects=False), headers


MCP_ACCEPT = "application/json, text/event-stream"


def assert_clear_refusal(method: str, path: str, what: str, answer: httpx.Response) -> None:
    where = f"{method} {path} with {what}"
    assert answer.status_code < 500, (where, answer.status_code, answer.text[:300])
    if path == "/mcp":
        assert_json_rpc_refusal(where, answer)
        return
    if path == "/signout" and answer.status_code == 303:
        return  # signing out reads no body: it signs out (and the next request signs in again)
    assert 400 <= answer.status_code < 500, (where, answer.status_code, answer.text[:300])
    if answer.headers.get("content-type", "").startswith("application/json"):
        assert answer.json().get("detail"), (where, answer.text[:300])


def assert_json_rpc_refusal(where: str, answer: httpx.Response) -> None:
    """A JSON-RPC error (any status), or a tool's error result (200, ``isError``), or MCP's
    authorization answer for a call that needs a token (401/403 with ``WWW-Authenticate``)."""
    if answer.status_code in (401, 403) and "www-authenticate" in answer.headers:
        return
    message = answer.json()
    assert message.get("jsonrpc") == "2.0", (where, message)
    if answer.status_code == 200:
        assert message.get("error") or message.get("result", {}).get("isError") is True, (where, message)
    else:
        assert 400 <= answer.status_code < 500, (where, answer.status_code, message)
        assert set(message["error"]) >= {"code", "message"}, (where, message)


@pytest.mark.parametrize("kind", ["anonymous", "session", "bearer"])
def test_every_unsafe_route_refuses_nested_bodies_and_huge_ids_clearly(site: SignedInSite, kind: str) -> None:
    routes = unsafe_routes(site)
    # The route table is what is exercised: the known unsafe routes are all in it.
    assert {("POST", "/api/chat"), ("PATCH", "/api/chat/conversations/{ref}"), ("POST", "/mcp")} <= set(
        routes
    )
    assert {
        ("POST", "/account/tokens/{token_id}/revoke"),
        ("POST", "/researchers/{researcher_id}/follow"),
    } <= set(routes)
    bodies = {**NESTED_BODIES, **huge_id_bodies()}
    checked = 0
    statuses: dict[str, set[int]] = {}
    for method, template in routes:
        for raw_id in HUGE_IDS:
            path = template
            for name in (
                "token_id",
                "identity_id",
                "researcher_id",
                "ref",
                "provider",
                "arxiv_id",
                "archive",
                "number",
            ):
                path = path.replace("{" + name + "}", raw_id)
            assert "{" not in path, f"a path parameter this test does not fill: {template}"
            for what, body in bodies.items():
                client, headers = credentials(site, site.alice, kind)
                try:
                    answer = client.request(
                        method,
                        path,
                        content=body,
                        headers={
                            **headers,
                            "Content-Type": "application/json",
                            "Accept": MCP_ACCEPT if path == "/mcp" else "application/json",
                        },
                    )
                finally:
                    if kind != "session":
                        client.close()
                assert_clear_refusal(method, path, f"{what} ({kind})", answer)
                statuses.setdefault(f"{method} {template}", set()).add(answer.status_code)
                checked += 1
            if "{" not in template:
                break  # a path without an id: one round of bodies is enough
    assert checked >= len(routes) * len(bodies)
    # Signed in, the requests got past the sign-in check to the body and the id.
    signed = {
        "POST /api/chat",
        "PATCH /api/chat/conversations/{ref}",
        "POST /account/tokens/{token_id}/revoke",
    }
    if kind == "anonymous":
        assert all(statuses[r] <= {401, 415} for r in signed), statuses
    elif kind == "session":
        assert all(not statuses[r] & {401, 403} for r in signed), statuses
    else:  # a token opens the chat API, not the account's pages
        assert not (statuses["POST /api/chat"] | statuses["PATCH /api/chat/conversations/{ref}"]) & {401, 403}


# -- schemathesis, signed in as two people ----------------------------------------------------------

SCHEMATHESIS_EXAMPLES = 20
SCHEMATHESIS_SEED = 20261203


def schemathesis_signed_in(site: SignedInSite, work: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Schemathesis over the whole schema as Alice and Bob (bearer tokens with every scope), the two
    as peers whose objects must stay private to each other; returns the run and its HAR file."""
    people = [
        {"name": p.name, "fixedHeaders": [{"name": "Authorization", "value": f"Bearer {p.token}"}]}
        for p in (site.alice, site.bob)
    ]
    (work / "auth.json").write_text(json.dumps({"auth": people}))
    # Real ids for the paths, drawn half the time (the other half schemathesis makes its own):
    # conversations of both people (so object_level_authorization has owned objects to replay as
    # the other), papers and institutions of the catalogue.
    conversations = [
        str(ask(site, p, "How are sparse transformers trained?")) for p in (site.alice, site.bob)
    ]
    toronto = site.facts.toronto
    # Every warning is shown and fails the run.
    (work / "schemathesis.toml").write_text(
        f"""
[warnings]
fail-on = true

[dictionaries.conversations]
values = {json.dumps(conversations)}
[dictionaries.archives]
values = ["astro-ph", "quant-ph"]
[dictionaries.numbers]
values = ["0601001", "0201082"]
[dictionaries.institutions]
values = ["{toronto}", "ror:{site.facts.toronto_ror}"]

[[operations]]
include-path = "/api/chat/conversations/{{ref}}"
parameters = {{ "path.ref" = {{ dictionary = "conversations", probability = 0.5 }} }}
[[operations]]
include-path-regex = "^/api/(papers|ingest/status)/[{{]archive[}}]/[{{]number[}}](/fulltext)?$"
[operations.parameters]
"path.archive" = {{ dictionary = "archives", probability = 0.5 }}
"path.number" = {{ dictionary = "numbers", probability = 0.5 }}
[[operations]]
include-path-regex = "^/api/institutions/[{{]ident[}}]"
parameters = {{ "path.ident" = {{ dictionary = "institutions", probability = 0.5 }} }}

# A question over the length limit is a 413 (the rule of the chat API, documented in the schema):
# schemathesis's default list of refusals has no 413.
[checks.negative_data_rejection]
expected-statuses = [400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428, 429, "5xx"]

# The papers a question is about are arXiv ids in any accepted spelling (URLs, old style, arXiv:
# prefix), checked by catalog.arxiv_ids (month 01-12, lengths): a JSON Schema pattern cannot state
# that, so a schema-valid string may still be a 400 "Not an arXiv id" there, and only there.
[[operations]]
include-name = "POST /api/chat"
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", 400, 401, 403, 404, 409, 429, "5xx"]

[auth.wfc]
path = "{work / "auth.json"}"
peers = ["{site.alice.name}", "{site.bob.name}"]
"""
    )
    har = work / "run.har"
    command = [
        sys.executable,
        "-m",
        "schemathesis.cli",
        "--config-file",
        str(work / "schemathesis.toml"),
        "run",
        f"{site.base}/openapi.json",
        "--phases=examples,coverage,fuzzing,stateful",
        "--checks=all",
        f"--max-examples={SCHEMATHESIS_EXAMPLES}",
        f"--seed={SCHEMATHESIS_SEED}",
        "--generation-database=none",
        "--workers=1",
        "--no-color",
        "--request-timeout=30",
        "--report=har",
        f"--report-har-path={har}",
    ]
    run = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=900, check=False)
    (work / "stdout.txt").write_text(run.stdout)
    return run, har


def test_schemathesis_signed_in_finds_no_server_error_nor_cross_access(
    site: SignedInSite, tmp_path: Path
) -> None:
    run, har = schemathesis_signed_in(site, tmp_path)
    summary = run.stdout[-8000:]
    assert run.returncode == 0, summary
    assert re.search(r"\d+ generated, \d+ passed", summary), summary
    entries = json.loads(har.read_text())["log"]["entries"]
    counts = Counter(e["request"]["method"] for e in entries)
    statuses = Counter((e["request"]["method"], e["response"]["status"] // 100) for e in entries)
    print(f"schemathesis signed in ({site.backend}): requests per method {dict(sorted(counts.items()))}")
    print(f"  by status class {dict(sorted(statuses.items()))}")
    assert not [e for e in entries if e["response"]["status"] >= 500]
    # Signed in, the chat API's operations answered with success, not only refusals.
    assert (
        statuses[("POST", 2)] and statuses[("GET", 2)] and statuses[("PATCH", 4)] and statuses[("DELETE", 4)]
    )


# -- what one renames is what one reads back --------------------------------------------------------


def ask(site: SignedInSite, person: Person, question: str) -> int:
    """A new conversation of ``person`` (the finished answer as JSON); its id."""
    with httpx.Client(base_url=site.base, timeout=120) as client:
        answer = client.post(
            "/api/chat", json={"question": question}, headers={**person.bearer, "Accept": "application/json"}
        )
    assert answer.status_code == 200, answer.text[:300]
    conversation_id: int = answer.json()["conversation_id"]
    return conversation_id


def test_a_title_cleaned_to_nothing_is_refused_and_a_rename_answers_what_is_kept(site: SignedInSite) -> None:
    """Found by schemathesis signed in: a title of invisible characters only was kept as the old
    title while the answer named an empty one; and a title the answer names is the one stored."""
    conversation = ask(site, site.alice, "How are sparse transformers trained?")
    with httpx.Client(base_url=site.base, timeout=60, headers=site.alice.bearer) as client:
        path = f"/api/chat/conversations/{conversation}"
        for invisible in ("\u200b", "\u202e\u2066 \u200b", " \t"):
            refused = client.patch(path, json={"title": invisible})
            assert refused.status_code == 400, (invisible, refused.text)
        renamed = client.patch(path, json={"title": " Sparse\u202e  training \u200b"})
        assert renamed.status_code == 200 and renamed.json()["title"] == "Sparse training"
        assert client.get(path).json()["title"] == "Sparse training"
        listed = {c["id"]: c["title"] for c in client.get("/api/chat/conversations").json()}
        assert listed[conversation] == "Sparse training"


# -- a state machine of two people ----------------------------------------------------------------

WORDS = ("sparse", "attention", "yeast", "gene", "detector", "calibration", "adam", "optimiser", "range")
QUESTIONS = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
PLAIN_TITLES = st.lists(
    st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=9), min_size=1, max_size=5
)
HOSTILE_TITLES = st.text(
    alphabet=st.characters(categories=["L", "N", "Zs", "Cf", "Cc", "P", "S"]), min_size=1, max_size=30
)


class TwoPeople(RuleBasedStateMachine):
    """Alice and Bob each create, rename, delete and list conversations (bearer tokens), make and
    revoke API tokens and follow and unfollow researchers (sessions with their CSRF tokens), and
    reach for the other's conversations and tokens. A model of what each has is checked against
    what the server answers after every step."""

    site: SignedInSite  # set by the test
    ran: ClassVar[Counter[str]] = Counter()  # steps taken, by rule: the test checks each rule was reached

    conversations = Bundle("conversations")
    tokens = Bundle("tokens")

    def __init__(self) -> None:
        """Earlier tests in this module made things too: the model starts from the server's state."""
        super().__init__()
        self.titles: dict[str, dict[int, str]] = {}
        self.token_names: dict[str, dict[int, str]] = {}
        self.follows: dict[str, set[int]] = {}
        for person in self.people:
            self.site.resign(person)
            listed = self.client(person).get("/api/chat/conversations")
            assert listed.status_code == 200, listed.text[:300]
            self.titles[person.name] = {c["id"]: c["title"] for c in listed.json()}
            exported = self.export(person)
            self.follows[person.name] = {f["researcher_id"] for f in exported["follows"]}
            self.token_names[person.name] = {}
        self.base_tokens = {p.name: len(self.export(p)["api_tokens"]) for p in self.people}

    # One conversation and one token of each person from the start, so every rule can be drawn.

    @initialize(target=conversations)
    def alices_conversation(self) -> tuple[Person, int]:
        return self.asked(0, "sparse attention")

    @initialize(target=conversations)
    def bobs_conversation(self) -> tuple[Person, int]:
        return self.asked(1, "yeast gene")

    @initialize(target=tokens)
    def alices_token(self) -> tuple[Person, int, str]:
        return self.made_token(0, "laptop")

    @initialize(target=tokens)
    def bobs_token(self) -> tuple[Person, int, str]:
        return self.made_token(1, "agent")

    @property
    def people(self) -> tuple[Person, Person]:
        return (self.site.alice, self.site.bob)

    def other(self, person: Person) -> Person:
        return self.site.bob if person is self.site.alice else self.site.alice

    def client(self, person: Person) -> httpx.Client:
        return httpx.Client(base_url=self.site.base, timeout=120, headers=person.bearer)

    def export(self, person: Person) -> dict[str, Any]:
        answer = person.browser.client.get("/account/export")
        assert answer.status_code == 200, answer.text[:300]
        data: dict[str, Any] = answer.json()
        return data

    # conversations

    @rule(target=conversations, who=st.integers(0, 1), question=QUESTIONS)
    def ask(self, who: int, question: str) -> tuple[Person, int]:
        return self.asked(who, question)

    def asked(self, who: int, question: str) -> tuple[Person, int]:
        self.ran["ask"] += 1
        person = self.people[who]
        conversation = ask(self.site, person, question)
        assert conversation not in self.titles[person.name], "a new conversation reused an id"
        assert conversation not in self.titles[self.other(person).name]
        self.titles[person.name][conversation] = question
        with self.client(self.other(person)) as client:  # the other never reaches it, however asked
            path = f"/api/chat/conversations/{conversation}"
            assert client.get(path).status_code == 404
            assert client.patch(path, json={"title": "taken"}).status_code == 404
            assert (
                client.post(
                    "/api/chat", json={"question": question, "conversation_id": conversation}
                ).status_code
                == 404
            )
        return person, conversation

    @rule(owned=conversations, words=PLAIN_TITLES)
    def rename(self, owned: tuple[Person, int], words: list[str]) -> None:
        self.ran["rename"] += 1
        person, conversation = owned
        title = " ".join(words)
        with self.client(person) as client:
            answer = client.patch(f"/api/chat/conversations/{conversation}", json={"title": f"  {title} "})
        if conversation not in self.titles[person.name]:  # deleted before
            assert answer.status_code == 404, answer.text[:300]
            return
        assert answer.status_code == 200 and answer.json()["title"] == title, answer.text[:300]
        self.titles[person.name][conversation] = title

    @rule(owned=conversations, title=HOSTILE_TITLES)
    def rename_with_anything(self, owned: tuple[Person, int], title: str) -> None:
        self.ran["rename_with_anything"] += 1
        person, conversation = owned
        with self.client(person) as client:
            answer = client.patch(f"/api/chat/conversations/{conversation}", json={"title": title})
        assert answer.status_code < 500, answer.text[:300]
        if conversation not in self.titles[person.name]:
            assert answer.status_code == 404, answer.text[:300]
        elif answer.status_code == 200:
            self.titles[person.name][conversation] = answer.json()["title"]  # read back below
        else:
            assert answer.status_code == 400, (title, answer.text[:300])

    @rule(owned=consumes(conversations))
    def delete(self, owned: tuple[Person, int]) -> None:
        self.ran["delete"] += 1
        person, conversation = owned
        with self.client(person) as client:
            answer = client.delete(f"/api/chat/conversations/{conversation}")
            expected = 204 if self.titles[person.name].pop(conversation, None) is not None else 404
            assert answer.status_code == expected, answer.text[:300]
            assert client.get(f"/api/chat/conversations/{conversation}").status_code == 404

    @rule(owned=conversations, method=st.sampled_from(["GET", "PATCH", "DELETE", "GET.md"]))
    def reach_for_the_others_conversation(self, owned: tuple[Person, int], method: str) -> None:
        self.ran["reach_for_the_others_conversation"] += 1
        person, conversation = owned
        path = f"/api/chat/conversations/{conversation}" + (".md" if method == "GET.md" else "")
        with self.client(self.other(person)) as client:
            answer = client.request(
                method.removesuffix(".md"), path, json={"title": "taken"} if method == "PATCH" else None
            )
        assert answer.status_code == 404, (method, path, answer.status_code, answer.text[:300])
        assert "taken" not in answer.text

    # tokens

    @rule(target=tokens, who=st.integers(0, 1), name=st.sampled_from(["laptop", "agent", "ci"]))
    def new_token(self, who: int, name: str) -> tuple[Person, int, str]:
        return self.made_token(who, name)

    def made_token(self, who: int, name: str) -> tuple[Person, int, str]:
        self.ran["new_token"] += 1
        person = self.people[who]
        secret, token_id = person.new_token(name, {"read"})
        self.token_names[person.name][token_id] = name
        with httpx.Client(base_url=self.site.base, timeout=60) as client:
            whoami = client.get("/api/account", headers={"Authorization": f"Bearer {secret}"})
        assert whoami.status_code == 200 and whoami.json()["person_id"] == person.person_id, whoami.text
        assert whoami.json()["scopes"] == ["read"]
        return person, token_id, secret

    @rule(made=consumes(tokens))
    def revoke(self, made: tuple[Person, int, str]) -> None:
        self.ran["revoke"] += 1
        person, token_id, secret = made
        answer = person.post_form(f"/account/tokens/{token_id}/revoke", {})
        assert answer.status_code == 303, answer.text[:300]
        del self.token_names[person.name][token_id]
        with httpx.Client(base_url=self.site.base, timeout=60) as client:
            assert (
                client.get("/api/account", headers={"Authorization": f"Bearer {secret}"}).status_code == 401
            )

    @rule(made=tokens)
    def revoke_the_others_token(self, made: tuple[Person, int, str]) -> None:
        self.ran["revoke_the_others_token"] += 1
        person, token_id, secret = made
        answer = self.other(person).post_form(f"/account/tokens/{token_id}/revoke", {})
        assert answer.status_code == 404, answer.text[:300]
        with httpx.Client(base_url=self.site.base, timeout=60) as client:
            still = client.get("/api/account", headers={"Authorization": f"Bearer {secret}"})
        assert still.status_code == 200 and still.json()["person_id"] == person.person_id

    # follows

    @rule(who=st.integers(0, 1), which=st.integers(0, 2), follow=st.booleans())
    def follow_or_unfollow(self, who: int, which: int, follow: bool) -> None:
        self.ran["follow_or_unfollow"] += 1
        person = self.people[who]
        researcher = self.site.researchers[which]
        answer = person.browser.client.post(
            f"/researchers/{researcher}/{'follow' if follow else 'unfollow'}",
            headers={**person.session_headers, "Accept": "application/json"},
        )
        assert answer.status_code == 200, answer.text[:300]
        assert answer.json() == {"researcher_id": researcher, "following": follow}
        (self.follows[person.name].add if follow else self.follows[person.name].discard)(researcher)

    # what each reads back

    @invariant()
    def each_reads_back_what_they_made(self) -> None:
        for person in self.people:
            with self.client(person) as client:
                listed = client.get("/api/chat/conversations")
                assert listed.status_code == 200
                assert {c["id"]: c["title"] for c in listed.json()} == self.titles[person.name]
            exported = self.export(person)
            assert {f["researcher_id"] for f in exported["follows"]} == self.follows[person.name]
            names = sorted(t["name"] for t in exported["api_tokens"][self.base_tokens[person.name] :])
            assert names == sorted(self.token_names[person.name].values()), exported["api_tokens"]


def test_two_people_change_their_things_and_never_reach_the_others(site: SignedInSite) -> None:
    TwoPeople.site = site
    TwoPeople.ran = Counter()
    run_state_machine_as_test(
        TwoPeople,
        settings=settings(
            max_examples=STATE_MACHINE_EXAMPLES,
            stateful_step_count=15,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
    assert set(TwoPeople.ran) == {
        "ask",
        "rename",
        "rename_with_anything",
        "delete",
        "reach_for_the_others_conversation",
        "new_token",
        "revoke",
        "revoke_the_others_token",
        "follow_or_unfollow",
    }, TwoPeople.ran
    print(f"state machine ({site.backend}): steps by rule {dict(TwoPeople.ran)}")


# -- MCP through its tools' input schemas ---------------------------------------------------------

MCP_EXAMPLES = 180  # seven tools now (request_full_text): enough calls reach each
HOSTILE_VALUES: st.SearchStrategy[Any] = st.sampled_from(
    [
        10**20,
        2**63,
        2**31,
        0,
        -1,
        1.5,
        True,
        None,
        "",
        " ",
        "\x00",
        "\u202e\u2066",
        "9" * 80,
        [[[]]],
        {"a": 1},
    ]
)
NESTED_VALUES = st.recursive(
    st.none() | st.integers() | st.text(max_size=5), lambda inner: st.lists(inner, max_size=3)
)


def mcp_post(site: SignedInSite, message: Any, person: Person | None) -> httpx.Response:
    headers = {"Accept": MCP_ACCEPT, "Content-Type": "application/json", **(person.bearer if person else {})}
    with httpx.Client(base_url=site.base, timeout=120) as client:
        return client.post("/mcp", content=json.dumps(message).encode(), headers=headers)


def listed_tools(site: SignedInSite) -> list[dict[str, Any]]:
    answer = mcp_post(site, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, None)
    assert answer.status_code == 200, answer.text[:300]
    tools: list[dict[str, Any]] = answer.json()["result"]["tools"]
    return tools


def from_schema(schema: dict[str, Any], real: st.SearchStrategy[Any] | None = None) -> st.SearchStrategy[Any]:
    """Values a JSON Schema (the subset pydantic writes for the tools) allows; ``real``: values from
    the catalogue mixed in, so calls get past "not found" too."""
    if "anyOf" in schema:
        found = st.one_of([from_schema(s, real) for s in schema["anyOf"]])
    elif "enum" in schema:
        found = st.sampled_from(schema["enum"])
    else:
        kind = schema.get("type")
        if kind == "null":
            found = st.none()
        elif kind == "boolean":
            found = st.booleans()
        elif kind == "integer":
            found = st.integers(schema.get("minimum"), schema.get("maximum"))
        elif kind == "number":
            found = st.floats(schema.get("minimum"), schema.get("maximum"), allow_nan=False)
        elif kind == "string" and schema.get("format") == "date":
            found = st.dates().map(str)
        elif kind == "string" and "pattern" in schema:
            longest = schema.get("maxLength", 60)
            found = st.from_regex(schema["pattern"], fullmatch=True).filter(lambda s: len(s) <= longest)
        elif kind == "string":
            found = st.text(
                min_size=schema.get("minLength", 0), max_size=min(schema.get("maxLength", 60), 60)
            )
        elif kind == "array":
            items = from_schema(schema.get("items", {}), real)
            found = st.lists(items, max_size=min(schema.get("maxItems", 5), 5))
        elif kind == "object":
            found = arguments(schema)
        else:
            found = NESTED_VALUES
    return found if real is None else st.one_of(real, found)


def arguments(schema: dict[str, Any], facts: dict[str, list[Any]] | None = None) -> st.SearchStrategy[Any]:
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    real = facts or {}

    def value(name: str) -> st.SearchStrategy[Any]:
        allowed = from_schema(properties[name], st.sampled_from(real[name]) if name in real else None)
        return st.one_of(allowed, allowed, allowed, HOSTILE_VALUES, NESTED_VALUES)  # mostly in schema

    return st.fixed_dictionaries(
        {name: value(name) for name in properties if name in required},
        optional={
            **{name: value(name) for name in properties if name not in required},
            "unexpected": HOSTILE_VALUES,
        },
    )


def assert_json_rpc_answer(message: Any, answer: httpx.Response) -> None:
    where = json.dumps(message)[:300]
    assert answer.status_code < 500, (where, answer.status_code, answer.text[:300])
    if answer.status_code in (401, 403):  # ask or request_full_text without a token with its scope
        assert "www-authenticate" in answer.headers, where
        assert message["params"]["name"] in ("ask", "request_full_text"), where
        return
    reply = answer.json()
    assert reply.get("jsonrpc") == "2.0", (where, reply)
    if "error" in reply:
        assert isinstance(reply["error"]["code"], int) and reply["error"]["message"], (where, reply)
        # JSON-RPC 2.0: the request's id, or null when the request itself was not valid.
        assert reply.get("id") in (message["id"], None), (where, reply)
        return
    assert reply.get("id") == message["id"], (where, reply)
    result = reply["result"]
    if message["method"] == "tools/call":
        assert isinstance(result["content"], list), (where, reply)
        if result.get("isError"):
            assert result["content"][0]["text"], (where, reply)


def test_mcp_tools_fuzzed_through_their_input_schemas(site: SignedInSite) -> None:
    tools = listed_tools(site)
    assert {t["name"] for t in tools} >= {"search_papers", "get_paper", "get_researcher", "ask"}
    facts: dict[str, list[Any]] = {
        "arxiv_id": ["1412.6980", "1706.03762", "2401.00001", "astro-ph/0601001"],
        "researcher_id": list(site.researchers),
        "institution": ["University of Toronto", "ror:03dbr7087"],
        "query": ["sparse attention", "yeast"],
        "question": ["How are sparse transformers trained?"],
    }
    calls = st.one_of(
        [
            st.builds(
                lambda name, args: {"name": name, "arguments": args},
                st.just(tool["name"]),
                arguments(tool["inputSchema"], facts),
            )
            for tool in tools
        ]
    )
    odd_params = st.one_of(
        st.builds(
            lambda args: {"name": "no_such_tool", "arguments": args},
            st.dictionaries(st.text(max_size=5), HOSTILE_VALUES),
        ),
        st.builds(
            lambda name, args: {"name": name, "arguments": args},
            st.sampled_from([t["name"] for t in tools]),
            NESTED_VALUES,
        ),
        NESTED_VALUES,
    )
    outcomes: Counter[str] = Counter()

    @settings(
        max_examples=MCP_EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(
        params=st.one_of(calls, calls, calls, odd_params),
        method=st.sampled_from(
            ["tools/call", "tools/call", "tools/call", "tools/list", "resources/read", "nope"]
        ),
        signed_in=st.booleans(),
        message_id=st.one_of(st.integers(1, 2**53), st.text(max_size=8)),
    )
    def exercise(params: Any, method: str, signed_in: bool, message_id: int | str) -> None:
        message = {"jsonrpc": "2.0", "id": message_id, "method": method, "params": params}
        answer = mcp_post(site, message, site.alice if signed_in else None)
        assert_json_rpc_answer(message, answer)
        reply = answer.json() if answer.status_code == 200 else {}
        outcomes[
            "error"
            if "error" in reply
            else "tool error"
            if reply.get("result", {}).get("isError")
            else "result"
            if reply
            else str(answer.status_code)
        ] += 1

    exercise()
    print(f"MCP fuzz ({site.backend}): {dict(outcomes)}")
    # Not only refusals: many calls got an answer.
    assert outcomes["result"] >= MCP_EXAMPLES // 10 and outcomes["tool error"] and outcomes["error"], outcomes
