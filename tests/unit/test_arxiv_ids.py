from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalog import arxiv_ids
from catalog.arxiv_ids import InvalidArxivId, parse


@pytest.mark.parametrize(
    ("raw", "canonical", "version"),
    [
        ("2401.01234", "2401.01234", None),
        ("2401.01234v2", "2401.01234", 2),
        ("0704.0001", "0704.0001", None),
        ("1412.6980v9", "1412.6980", 9),
        ("arXiv:1706.03762v7", "1706.03762", 7),
        ("  1706.03762 ", "1706.03762", None),
        ("https://arxiv.org/abs/2005.11401v4", "2005.11401", 4),
        ("https://arxiv.org/pdf/2005.11401v4.pdf", "2005.11401", 4),
        ("hep-th/9901001", "hep-th/9901001", None),
        ("math.GT/0309136", "math/0309136", None),
        ("math.GT/0309136v2", "math/0309136", 2),
        ("astro-ph/9901001", "astro-ph/9901001", None),
        ("cond-mat.mtrl-sci/0501001", "cond-mat/0501001", None),
        ("quant-ph/0201082v1", "quant-ph/0201082", 1),
    ],
)
def test_parses_and_normalises(raw: str, canonical: str, version: int | None) -> None:
    parsed = parse(raw)
    assert parsed.canonical == canonical
    assert parsed.version == version


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("", "empty"),
        ("abc", "new-style ids look like"),
        ("0000.0000", "month 00"),
        ("0703.1234", "begin in April 2007"),
        ("1501.1234", "five digits"),
        ("1412.12345", "four digits"),
        ("2413.00001", "month 13"),
        ("2401.00000", "start at 1"),
        ("2401.01234v0", "start at v1"),
        ("foo-bar/9901001", "unknown archive"),
        ("hep-th/0801001", "1991 to 2007"),
        ("hep-th/9101001", "9108 to 0703"),
        ("hep-th/990100", "old-style ids look like"),
        ("2401.01234; DROP TABLE papers", "new-style"),
        ("x" * 500, "too long"),
    ],
)
def test_rejects_with_a_clear_reason(raw: str, reason: str) -> None:
    with pytest.raises(InvalidArxivId) as err:
        parse(raw)
    assert reason in str(err.value)
    assert "not an arXiv id" in str(err.value)


new_style = st.builds(
    lambda yy, mm, n, v: (f"{yy:02d}{mm:02d}", n, v),
    st.integers(7, 99),
    st.integers(1, 12),
    st.integers(1, 99999),
    st.none() | st.integers(1, 99),
).filter(lambda t: t[0] >= "0704")
old_style = st.tuples(
    st.sampled_from(sorted(arxiv_ids.OLD_ARCHIVES)),
    st.sampled_from(["", ".GT", ".AI", ".mtrl-sci"]),
    st.sampled_from([f"{y:02d}{m:02d}" for y in [*range(92, 100), *range(0, 7)] for m in range(1, 13)]),
    st.integers(1, 999),
    st.none() | st.integers(1, 30),
)


@given(new_style)
def test_new_style_round_trips(parts: tuple[str, int, int | None]) -> None:
    yymm, number, version = parts
    digits = 4 if yymm <= "1412" else 5
    if number >= 10**digits:
        number = number % (10**digits) or 1
    raw = f"{yymm}.{number:0{digits}d}" + (f"v{version}" if version else "")
    parsed = parse(raw)
    assert parsed.versioned == raw
    assert parse(parsed.canonical) == parsed.with_version(None)
    assert parse(f"arXiv:{raw}") == parsed
    assert parse(f"https://arxiv.org/abs/{raw}") == parsed


@given(old_style)
def test_old_style_canonical_drops_subject_class(parts: tuple[str, str, str, int, int | None]) -> None:
    archive, subject, yymm, number, version = parts
    raw = f"{archive}{subject}/{yymm}{number:03d}" + (f"v{version}" if version else "")
    parsed = parse(raw)
    assert parsed.canonical == f"{archive}/{yymm}{number:03d}"
    assert parsed.version == version
    assert parse(parsed.canonical).canonical == parsed.canonical


@given(st.text(max_size=80))
def test_any_text_parses_or_fails_cleanly(raw: str) -> None:
    try:
        parsed = parse(raw)
    except InvalidArxivId as exc:
        assert exc.reason
    else:
        assert parse(parsed.versioned) == parsed
