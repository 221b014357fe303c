"""The scaled-out topology of compose.yaml as processes on loopback, through the real proxy.

One cluster for the module: a fresh database on the machine's PostgreSQL, a private ``redis-server``
with the append-only file compose.yaml configures (so the test may stop, kill and wipe it without
touching the machine's shared Redis), ``chroma run``, Debian's nginx serving deploy/nginx.conf in
front of two ``python -m app serve`` processes on different ports, one ``python -m indexing worker``,
an OpenAI-compatible embedding endpoint, an OpenID provider (oidc-provider-mock) and the scripted
OpenAI-compatible model server the chat tests use. Every request below goes through nginx; its access
log says which replica answered.

Not here: the arXiv pace between two workers. A worker's only arXiv traffic is PDF downloads, which
the URL policy pins to https on arXiv's public hosts (resolved before the request's slot is taken),
so offline no such request is ever made; test_pacing.py holds the pace between processes through
Redis on the production path of the arXiv importer.
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client
from sqlalchemy import create_engine, select, text

from catalog.db import make_engine
from catalog.models import FullText, Paper
from coordination.redis import Redis
from tests.conftest import POSTGRES_ADMIN_URL, running_chroma
from tests.integration.cluster_peers import Nginx, RedisServer, Service, wait_until
from tests.integration.indexing_peers import (
    EmbeddingServer,
    embedding_env,
    embedding_server,
    free_port,
    import_papers,
    paper_text,
    text_pdf,
    write_pdfs,
)
from tests.integration.scripted_llm import ScriptedLLM, scripted_llm
from tests.integration.signin_peers import Browser, api_token, oidc_mock

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]

API_LIMIT = 30
QUEUE = "cluster"
LEASE = 4  # seconds: a dead worker's job is taken over after this, lost jobs re-enqueued after 2×


@dataclass
class Cluster:
    work: Path
    env: dict[str, str]
    database_url: str
    redis: RedisServer
    nginx: Nginx
    apps: list[Service]
    app_ports: list[int]
    worker: Service
    embeddings: EmbeddingServer
    model: ScriptedLLM

    @property
    def url(self) -> str:
        return self.nginx.url

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30)

    def start_app(self, n: int) -> None:
        self.apps[n].start()
        wait_until(
            lambda: _ok(f"http://127.0.0.1:{self.app_ports[n]}/healthz"),
            120,
            f"app {n}",
            self.apps[n].process,
        )

    def enqueue_pdfs(self, ids: list[str]) -> None:
        """Import the papers' metadata and queue their PDFs, as an operator would: ``python -m
        indexing pdfs`` only enqueues when Redis carries the queue."""
        engine = make_engine(self.database_url)
        try:
            import_papers(engine, ids)
        finally:
            engine.dispose()
        folder = self.work / f"pdfs-{uuid.uuid4().hex[:6]}"
        write_pdfs(
            folder, {f"{i}v1.pdf": text_pdf([paper_text(i, 14), paper_text(i + "-b", 8)]) for i in ids}
        )
        command = Service(f"enqueue-{folder.name}", ["indexing", "pdfs", str(folder)], self.env, self.work)
        command.start()
        assert command.process is not None
        assert command.process.wait(timeout=120) == 0, command.tail()

    def statuses(self, ids: list[str]) -> dict[str, str]:
        """Each paper's full-text status, from the catalogue (polling the API would spend the
        client's request allowance that the limit test counts)."""
        return {i: status for i, (status, _attempts) in self.full_texts(ids).items()}

    def full_texts(self, ids: list[str]) -> dict[str, tuple[str, int]]:
        engine = make_engine(self.database_url)
        try:
            with engine.connect() as conn:
                rows = conn.execute(
                    select(Paper.arxiv_id, FullText.status, FullText.attempts)
                    .join(FullText, FullText.paper_id == Paper.id)
                    .where(Paper.arxiv_id.in_(ids))
                ).all()
        finally:
            engine.dispose()
        return {row.arxiv_id: (row.status, row.attempts) for row in rows}

    def wait_done(self, ids: list[str], timeout: float = 120) -> None:
        def done() -> bool:
            return set(self.statuses(ids).values()) == {"done"}

        try:
            wait_until(done, timeout, "the queued papers")
        except AssertionError:
            raise AssertionError(f"{self.statuses(ids)}\nworker log:\n{self.worker.tail()}") from None

    def token(self, name: str = "reader") -> str:
        """A new person with a chat API token (each its own limits and streams)."""
        return api_token(self.database_url, name=name, scopes={"chat", "read"}, label="cluster")

    def clear_limits(self) -> None:
        client = Redis.from_url(self.redis.url)
        for key in client.scan_iter(match=f"{QUEUE}:limits:*"):
            client.delete(key)
        client.close()


def _ok(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    work = tmp_path_factory.mktemp("cluster")
    name = f"wovepaper_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    database_url = POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    (work / "chroma").mkdir()
    redis = RedisServer(work / "redis")
    services: list[Service] = []
    try:
        redis.start()
        with (
            running_chroma(work / "chroma") as ((chroma_host, chroma_port), _chroma),
            embedding_server() as embeddings,
            oidc_mock() as issuer,
            scripted_llm() as model,
        ):
            ports = [free_port(), free_port()]
            nginx = Nginx(work / "nginx", (f"127.0.0.1:{ports[0]}", f"127.0.0.1:{ports[1]}"))
            env = {
                "WOVEPAPER_ENVIRONMENT": "test",
                "WOVEPAPER_DATA_DIR": str(work / "data"),  # shared, as the compose volume is
                "WOVEPAPER_DATABASE_URL": database_url,
                "WOVEPAPER_REDIS_URL": redis.url,
                "WOVEPAPER_WORKER_QUEUE": QUEUE,
                "WOVEPAPER_CHROMA_HOST": chroma_host,
                "WOVEPAPER_CHROMA_PORT": str(chroma_port),
                "WOVEPAPER_WORKER_EMBEDDED": "false",
                "WOVEPAPER_WORKER_LEASE_SECONDS": str(LEASE),
                "WOVEPAPER_WORKER_RETRY_DELAY_SECONDS": "0.5",
                "WOVEPAPER_LEXICAL_SYNC_SECONDS": "1",
                "WOVEPAPER_PUBLIC_URL": nginx.url,
                "WOVEPAPER_SECRET_KEY": uuid.uuid4().hex + uuid.uuid4().hex,
                "WOVEPAPER_TRUSTED_PROXIES": '["127.0.0.1"]',
                "WOVEPAPER_LIMIT_API": f"{API_LIMIT}/300",
                "WOVEPAPER_OIDC_ISSUER": issuer,
                "WOVEPAPER_OIDC_CLIENT_ID": "wovepaper-cluster",
                "WOVEPAPER_OIDC_CLIENT_SECRET": "cluster-secret",
                "WOVEPAPER_LLM_BASE_URL": model.base_url,
                "WOVEPAPER_LLM_CONCURRENCY": "4",
                "WOVEPAPER_CHAT_PING_SECONDS": "1",
                **embedding_env(embeddings),
            }
            migrate = Service("migrate", ["catalog", "upgrade"], env, work)
            migrate.start()
            assert migrate.process is not None and migrate.process.wait(timeout=120) == 0, migrate.tail()
            apps = [
                Service(f"app-{n}", ["app", "serve"], {**env, "WOVEPAPER_PORT": str(port)}, work)
                for n, port in enumerate(ports)
            ]
            worker = Service("worker", ["indexing", "worker"], env, work)
            services = [*apps, worker]
            cluster = Cluster(work, env, database_url, redis, nginx, apps, ports, worker, embeddings, model)
            try:  # whatever started is stopped, even when a later start fails (nginx missing)
                for n in range(2):
                    cluster.start_app(n)
                worker.start()
                nginx.start()
                yield cluster
            finally:
                nginx.stop()
                for service in services:
                    service.stop()
    finally:
        redis.stop()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def _ports(upstreams: list[str]) -> set[int]:
    return {int(u.rsplit(":", 1)[1]) for field in upstreams for u in field.split(", ") if ":" in u}


# -- through the proxy -------------------------------------------------------------------------


def test_papers_queued_by_one_process_are_indexed_by_the_worker_and_found_through_the_proxy(
    cluster: Cluster,
) -> None:
    ids = ["2406.00001", "2406.00002", "2406.00003"]
    before = len(cluster.nginx.upstreams())
    cluster.enqueue_pdfs(ids)
    cluster.wait_done(ids)
    wanted = ids[1]
    with cluster.client() as client:
        status = client.get(f"/api/ingest/status/{wanted}")
        assert status.status_code == 200 and status.json()["status"] == "done", status.text[:300]

        def found() -> bool:  # the lexical index follows the catalogue within a sync or two
            answer = client.get("/api/search", params={"q": f"paper {wanted}", "size": 5})
            assert answer.status_code == 200, answer.text[:300]
            return wanted in [item["arxiv_id"] for item in answer.json()["items"]]

        wait_until(found, 30, "the indexed paper in search results")
        for _ in range(4):
            assert client.get("/search", params={"q": wanted}).status_code == 200
    # Both replicas served these requests (round robin), reading the same stores.
    assert _ports(cluster.nginx.upstreams()[before:]) == set(cluster.app_ports)


def test_signing_in_through_the_proxy_works_on_both_replicas(cluster: Cluster) -> None:
    before = len(cluster.nginx.upstreams())
    alice = Browser(cluster.url)
    try:
        done = alice.sign_in("oidc", "alice")  # start and callback may reach different replicas
        assert done.status_code == 303, done.text[:300]
        for _ in range(4):
            me = alice.client.get("/api/account")
            assert me.status_code == 200 and me.json()["name"] == "alice"
    finally:
        alice.close()
    assert _ports(cluster.nginx.upstreams()[before:]) == set(cluster.app_ports)


def test_rate_limits_hold_across_both_replicas_and_forged_forwarding_buys_nothing(cluster: Cluster) -> None:
    cluster.clear_limits()
    before = len(cluster.nginx.upstreams())
    total = 3 * API_LIMIT
    barrier = threading.Barrier(total)

    def one(n: int) -> httpx.Response:
        with httpx.Client(base_url=cluster.url, timeout=60) as client:
            barrier.wait()
            # Every other request forges a different client address: nginx replaces the header.
            forged = {"X-Forwarded-For": f"203.0.113.{n % 250}"} if n % 2 else {}
            return client.get("/api/papers", params={"size": 1}, headers=forged)

    with ThreadPoolExecutor(max_workers=total) as pool:
        answers = list(pool.map(one, range(total)))
    statuses = [a.status_code for a in answers]
    assert set(statuses) <= {200, 429}, statuses
    assert statuses.count(200) == API_LIMIT
    assert all(int(a.headers["retry-after"]) >= 1 for a in answers if a.status_code == 429)
    assert _ports(cluster.nginx.upstreams()[before:]) == set(cluster.app_ports)
    cluster.clear_limits()


def test_a_redis_restart_keeps_sessions_and_jobs(cluster: Cluster) -> None:
    """Redis stopped cleanly and started again (compose's append-only file): while it is down the
    public pages answer and a signed-in request gets 503; afterwards the same person is still
    signed in and the worker, which stayed up, indexes what is queued next."""
    alice = Browser(cluster.url)
    try:
        assert alice.sign_in("oidc", "alice").status_code == 303
        cluster.redis.stop()
        with cluster.client() as client:
            for _ in range(4):
                assert client.get("/papers").status_code == 200
                assert client.get("/api/papers", params={"size": 1}).status_code == 200
        down = alice.client.get("/api/account")
        assert down.status_code == 503 and down.headers["retry-after"], down.text[:300]
        cluster.redis.start()
        answers = [alice.client.get("/api/account") for _ in range(6)]
        assert [a.status_code for a in answers] == [200] * 6, [(a.status_code, a.text[:200]) for a in answers]
    finally:
        alice.close()
    assert cluster.worker.running, cluster.worker.tail()
    ids = ["2406.00011", "2406.00012"]
    cluster.enqueue_pdfs(ids)
    cluster.wait_done(ids)


def test_jobs_a_wiped_redis_lost_are_run_again(cluster: Cluster) -> None:
    """Redis lost everything (no persistence, a lost disk) with jobs queued: the worker finds them
    unfinished in the catalogue and enqueues them again; sessions are gone (people sign in again)."""
    alice = Browser(cluster.url)
    try:
        assert alice.sign_in("oidc", "alice").status_code == 303
        cluster.worker.stop()  # the jobs stay queued in Redis
        ids = ["2406.00021", "2406.00022", "2406.00023"]
        cluster.enqueue_pdfs(ids)
        assert set(cluster.statuses(ids).values()) == {"queued"}
        cluster.redis.kill()
        cluster.redis.wipe()
        cluster.redis.start()
        cluster.worker.start()
        cluster.wait_done(ids, timeout=90)
        assert alice.client.get("/api/account").status_code == 401
        assert alice.sign_in("oidc", "alice").status_code == 303
        assert alice.client.get("/api/account").status_code == 200
    finally:
        alice.close()


def test_a_killed_workers_jobs_finish(cluster: Cluster) -> None:
    ids = [f"2406.{n:05d}" for n in range(31, 37)]
    cluster.embeddings.delay = 0.5  # each paper takes a while: the kill lands mid-job
    try:
        cluster.enqueue_pdfs(ids)
        wait_until(lambda: "running" in cluster.statuses(ids).values(), 60, "a running job")
        cluster.worker.kill()
        interrupted = [i for i, status in cluster.statuses(ids).items() if status == "running"]
        assert interrupted
        cluster.worker.start()
        cluster.wait_done(ids, timeout=120)
        # The interrupted paper was taken over (its lease lapsed) and run again, to the end once.
        attempts = {i: n for i, (_status, n) in cluster.full_texts(ids).items()}
        assert all(attempts[i] >= 2 for i in interrupted), attempts
    finally:
        cluster.embeddings.delay = 0.0


# -- chat and MCP through the proxy ------------------------------------------------------------

QUESTION = "What does paper 2406.00002 study with careful experiments?"


@dataclass
class Stream:
    """One chat answer read through the proxy: each event with the moment it arrived."""

    tag: str
    events: list[tuple[str, float]]
    done: bool = False
    broken: str = ""

    def arrivals(self, kind: str) -> list[float]:
        return [at for k, at in self.events if k == kind]


def read_stream(cluster: Cluster, token: str, tag: str, on_token: threading.Event | None = None) -> Stream:
    stream = Stream(tag, [])
    try:
        with (
            httpx.Client(base_url=cluster.url, timeout=60) as client,
            client.stream(
                "POST",
                "/api/chat",
                params={"t": tag},  # names the request in the proxy's access log
                json={"question": QUESTION},
                headers={"Authorization": f"Bearer {token}"},
            ) as response,
        ):
            assert response.status_code == 200, response.read()[:300]
            assert response.headers["content-type"].startswith("text/event-stream")
            assert response.headers.get("content-encoding", "identity") == "identity"  # never gzipped
            kind = "message"
            for line in response.iter_lines():
                if line.startswith("event:"):
                    kind = line.split(":", 1)[1].strip()
                elif line.startswith("data:"):
                    stream.events.append((kind, time.monotonic()))
                    stream.done = stream.done or kind == "done"
                    if kind == "token" and on_token is not None:
                        on_token.set()
                    kind = "message"
    except httpx.HTTPError as error:
        stream.broken = f"{type(error).__name__}: {error}"
    return stream


def test_a_chat_answer_arrives_through_the_proxy_as_it_is_written(cluster: Cluster) -> None:
    words = [f"word{n} " for n in range(10)]
    cluster.model.script(words)
    cluster.model.delta_delay = 0.3
    try:
        stream = read_stream(cluster, cluster.token(), "incremental")
    finally:
        cluster.model.delta_delay = 0.0
    assert stream.done and not stream.broken, stream
    kinds = [k for k, _ in stream.events]
    assert kinds[0] == "evidence" and "token" in kinds, kinds
    tokens = stream.arrivals("token")
    # Written over 2.7 s: arriving over nearly as long, the evidence well before the first word. A
    # buffering proxy would hand everything over at the end, in one go.
    assert tokens[-1] - tokens[0] >= 2.0, tokens
    assert tokens[0] - stream.arrivals("evidence")[0] < 1.5
    assert stream.arrivals("done")[0] - tokens[0] >= 2.0


def test_mcp_answers_on_both_replicas_through_the_proxy(cluster: Cluster) -> None:
    before = len(cluster.nginx.access_log.read_text().splitlines())

    async def go() -> tuple[set[str], list[bool], list[str]]:
        async with Client(cluster.url + "/mcp") as client:
            tools = await client.list_tools()
            found: list[str] = []
            errors: list[bool] = []
            for _ in range(3):
                result = await client.call_tool("search_papers", {"query": "paper 2406.00002"})
                errors.append(result.is_error)
                data = result.structured_content or {}
                found.extend(item["arxiv_id"] for item in data.get("items", []))
            return {t.name for t in tools.tools}, errors, found

    names, errors, found = anyio.run(go)
    assert "search_papers" in names and not any(errors)
    assert "2406.00002" in found
    lines = [line for line in cluster.nginx.access_log.read_text().splitlines()[before:] if " /mcp" in line]
    assert _ports(re.findall(r" upstream=(\S+)", "\n".join(lines))) == set(cluster.app_ports), lines


def test_one_app_dying_fails_only_its_own_requests(cluster: Cluster) -> None:
    """Requests keep coming while one replica is SIGKILLed: a request fails only if that replica
    already had it; every request after that is answered by the other replica; the restarted
    replica takes its share again."""
    victim = cluster.apps[0]
    victim_port = cluster.app_ports[0]
    results: list[tuple[str, int]] = []
    lock = threading.Lock()
    stop = threading.Event()

    def load(worker_n: int) -> None:
        with httpx.Client(base_url=cluster.url, timeout=30) as client:
            n = 0
            while not stop.is_set():
                tag = f"{worker_n}-{n}"
                n += 1
                try:
                    status = client.get("/papers", params={"page": 1, "t": tag}).status_code
                except httpx.HTTPError:
                    status = 0
                with lock:
                    results.append((tag, status))

    before = len(cluster.nginx.upstreams())
    threads = [threading.Thread(target=load, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    time.sleep(1.5)
    victim.kill()
    killed_at = len(results)
    time.sleep(3.0)
    stop.set()
    for thread in threads:
        thread.join()
    after_kill = results[killed_at + 12 :]  # past those already under way at the kill
    assert after_kill and all(status == 200 for _, status in after_kill), after_kill
    failed = {tag for tag, status in results if status != 200}
    log = cluster.nginx.access_log.read_text().splitlines()[before:]
    for line in log:
        tag = re.search(r"[?&]t=([\d-]+)", line)
        if tag and tag.group(1) in failed:
            assert re.search(rf" upstream=127\.0\.0\.1:{victim_port} ", line), line  # only the victim's own
    cluster.start_app(0)

    def back_in_rotation() -> bool:
        mark = len(cluster.nginx.upstreams())
        with cluster.client() as client:
            for _ in range(4):
                assert client.get("/healthz").status_code == 200
        return victim_port in _ports(cluster.nginx.upstreams()[mark:])

    wait_until(back_in_rotation, 30, "the restarted replica back in rotation")


def test_an_app_dying_mid_stream_fails_only_its_own_streams(cluster: Cluster) -> None:
    """Four answers streaming, two on each replica; one replica is SIGKILLed after every stream
    has its first words: its streams break, the other replica's finish whole."""
    words = [f"word{n} " for n in range(20)]  # words: a reply without any is held back and asked again
    cluster.model.default = words
    cluster.model.delta_delay = 0.25
    tokens = [cluster.token(f"reader{n}") for n in range(4)]
    started = [threading.Event() for _ in tokens]
    streams: list[Stream] = []
    before = len(cluster.nginx.access_log.read_text().splitlines())
    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            futures = [
                pool.submit(read_stream, cluster, token, f"s{n}", started[n])
                for n, token in enumerate(tokens)
            ]
            for event in started:
                assert event.wait(30), "a stream never got its first words"
            cluster.apps[0].kill()
            streams = [f.result(timeout=60) for f in futures]
    finally:
        cluster.model.delta_delay = 0.0
        cluster.model.default = ("I cannot tell.",)
    upstream_of: dict[str, int] = {}

    def all_logged() -> bool:
        """nginx writes a request's line once it has finished it, which on a loaded machine may be
        a moment after the client has read the last of the answer."""
        for line in cluster.nginx.access_log.read_text().splitlines()[before:]:
            tag, upstream = re.search(r"[?&]t=(s\d)", line), re.search(r" upstream=(\S+)", line)
            if tag and upstream:
                upstream_of[tag.group(1)] = int(upstream.group(1).rsplit(":", 1)[1])
        return all(s.tag in upstream_of for s in streams)

    wait_until(all_logged, 10, "the proxy's access log lines of the four streams")
    victim, survivor = cluster.app_ports
    on_victim = [s for s in streams if upstream_of[s.tag] == victim]
    on_survivor = [s for s in streams if upstream_of[s.tag] == survivor]
    assert on_victim and on_survivor, upstream_of
    for stream in on_victim:
        assert not stream.done, stream  # cut off: no done event, the client knows it is incomplete
    for stream in on_survivor:
        assert stream.done and not stream.broken, stream
        assert len(stream.arrivals("token")) >= 1
    cluster.start_app(0)
