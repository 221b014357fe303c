"""Full text on request: the URL a paper's PDF is fetched from, the policy for the configured base,
and the sentence each failed download becomes (what the person who asked reads)."""

from __future__ import annotations

import pytest
from saq.job import Job

from indexing.contract import SAQ_FUNCTION
from indexing.pipeline import FetchDeferred, PermanentFailure, fetch_failure
from indexing.queue import exact_retry
from indexing.runner import RetryLater
from ingest.fetch import NotPdf, pdf_policy, pdf_url
from ingest.http import ARXIV_HOSTS, HttpError, Refused, TooLarge, UrlPolicy

URL = "https://arxiv.org/pdf/2401.00001"


def test_the_pdf_url_follows_the_configured_base() -> None:
    assert pdf_url("2401.00001") == URL
    assert (
        pdf_url("hep-th/9901001", 2, "http://127.0.0.1:8123/pdf")
        == "http://127.0.0.1:8123/pdf/hep-th/9901001v2"
    )
    assert (
        pdf_url("2401.00001", None, "https://mirror.example/pdf/") == "https://mirror.example/pdf/2401.00001"
    )


def test_a_loopback_base_is_allowed_only_its_own_origin() -> None:
    policy = pdf_policy("http://127.0.0.1:8123/pdf/")
    assert policy.check("http://127.0.0.1:8123/pdf/2401.00001").port == 8123
    for elsewhere in (
        "http://127.0.0.1:8124/pdf/2401.00001",  # another port
        "https://arxiv.org/pdf/2401.00001",  # another host
        "file:///etc/passwd",
        "http://169.254.169.254/latest/meta-data/",
    ):
        with pytest.raises(Refused):
            policy.check(elsewhere)


def test_a_public_base_adds_its_host_to_arxivs_and_keeps_the_rules() -> None:
    policy = pdf_policy("https://mirror.example/pdf/")
    assert policy.hosts == ARXIV_HOSTS | {"mirror.example"}
    assert (policy.schemes, policy.ports, policy.allow_private) == (
        frozenset({"https"}),
        frozenset({443}),
        False,
    )
    assert pdf_policy("https://arxiv.org/pdf/") == UrlPolicy()


@pytest.mark.parametrize(
    ("error", "kind", "lead"),
    [
        (HttpError(URL, "HTTP 404", status=404), PermanentFailure, "arXiv has no PDF for this paper ("),
        (HttpError(URL, "HTTP 410", status=410), PermanentFailure, "arXiv has no PDF for this paper ("),
        (HttpError(URL, "HTTP 403", status=403), PermanentFailure, "arXiv refused the download ("),
        (
            NotPdf(URL, "the response is not a PDF (text/html)", status=200),
            PermanentFailure,
            "the file is not a PDF (",
        ),
        (
            TooLarge(URL, "more than the 20,000-byte limit", status=200),
            PermanentFailure,
            "the PDF is too large (",
        ),
        (
            Refused(URL, "host 'evil.example' is not an arXiv host"),
            PermanentFailure,
            "the PDF's address is not allowed (",
        ),
        (HttpError(URL, "ConnectError", retryable=True), FetchDeferred, "arXiv could not be reached ("),
        (
            HttpError("arxiv.org", "cannot resolve arxiv.org", retryable=True),
            FetchDeferred,
            "arXiv could not be reached (",
        ),
        (
            HttpError(URL, "HTTP 503", status=503, retryable=True),
            FetchDeferred,
            "arXiv could not be reached (",
        ),
        (
            HttpError(URL, "HTTP 429", status=429, retryable=True, retry_after=30),
            FetchDeferred,
            "arXiv could not be reached (it asked us to wait: ",
        ),
    ],
)
def test_each_failed_download_reads_as_a_person_understands_it(
    error: HttpError, kind: type, lead: str
) -> None:
    found = fetch_failure(error)
    assert isinstance(found, kind)
    assert found.reason.startswith(lead) and found.reason.endswith(")"), found.reason
    assert error.reason in found.reason  # the detail stays, for whoever looks into it
    if isinstance(found, FetchDeferred):
        assert found.retry_after == error.retry_after


def test_on_saq_a_retry_waits_at_least_what_the_server_asked() -> None:
    """SAQ's own backoff has full jitter (it may come back at once); a ``Retry-After`` is not a
    suggestion. Other retries keep SAQ's backoff."""
    asked = Job(SAQ_FUNCTION, retry_delay=0.2, retry_backoff=300.0, attempts=1)
    exact_retry(asked, RetryLater("arXiv could not be reached (it asked us to wait)", 30.0, exact=True))
    assert {asked.next_retry_delay() for _ in range(50)} == {30.0}
    other = Job(SAQ_FUNCTION, retry_delay=0.2, retry_backoff=300.0, attempts=1)
    exact_retry(other, RetryLater("the embedding endpoint is down", 30.0))
    exact_retry(other, ValueError("a bug"))
    assert (other.retry_delay, other.retry_backoff) == (0.2, 300.0)
