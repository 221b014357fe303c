"""arXiv identifiers: the one place that parses and normalises them.

New style (April 2007 on): ``YYMM.NNNN`` until 1412, ``YYMM.NNNNN`` from 1501, optional ``vN``.
Old style (1991-08 to 2007-03): ``archive(.SC)?/YYMMNNN``; the subject class is not part of the
identity, so ``math.GT/0309136`` is canonically ``math/0309136``.
Inputs may carry an ``arXiv:`` prefix or be an arxiv.org ``abs``/``pdf`` URL; outputs never do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Archives that have issued old-style identifiers (arXiv's own list, including retired ones).
OLD_ARCHIVES = frozenset(
    {
        "acc-phys",
        "adap-org",
        "alg-geom",
        "ao-sci",
        "astro-ph",
        "atom-ph",
        "bayes-an",
        "chao-dyn",
        "chem-ph",
        "cmp-lg",
        "comp-gas",
        "cond-mat",
        "cs",
        "dg-ga",
        "funct-an",
        "gr-qc",
        "hep-ex",
        "hep-lat",
        "hep-ph",
        "hep-th",
        "math",
        "math-ph",
        "mtrl-th",
        "nlin",
        "nucl-ex",
        "nucl-th",
        "patt-sol",
        "physics",
        "plasm-ph",
        "q-alg",
        "q-bio",
        "quant-ph",
        "solv-int",
        "supr-con",
    }
)

# ASCII digits only (``\d`` alone also matches ``٤`` or ``４``); a version has at most 9 digits, so it
# fits every integer column.
_NEW = re.compile(r"(?P<yymm>\d{4})\.(?P<number>\d{4,5})(?:v(?P<version>\d{1,9}))?", re.ASCII)
_OLD = re.compile(
    r"(?P<archive>[a-z]+(?:-[a-z]+)?)(?:\.(?P<subject>[A-Za-z]{2}(?:-[A-Za-z]{2})?|[a-z-]+))?"
    r"/(?P<yymm>\d{4})(?P<number>\d{3})(?:v(?P<version>\d{1,9}))?",
    re.ASCII,
)
_URL = re.compile(
    r"^(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/(?P<rest>.+?)(?:\.pdf)?/?$", re.I
)
MAX_LENGTH = 64


class InvalidArxivId(ValueError):
    """A string that is not an arXiv identifier; the message says why."""

    def __init__(self, raw: str, reason: str) -> None:
        shown = raw if len(raw) <= MAX_LENGTH else raw[:MAX_LENGTH] + "…"
        super().__init__(f"not an arXiv id: {shown!r} ({reason})")
        self.raw = raw
        self.reason = reason


@dataclass(frozen=True, slots=True)
class ArxivId:
    """A parsed identifier. ``archive`` is set only for old-style ids."""

    yymm: str
    number: str
    archive: str | None = None
    version: int | None = None

    @property
    def canonical(self) -> str:
        """The id without version and subject class: ``2401.01234``, ``math/0309136``."""
        if self.archive:
            return f"{self.archive}/{self.yymm}{self.number}"
        return f"{self.yymm}.{self.number}"

    @property
    def versioned(self) -> str:
        return self.canonical if self.version is None else f"{self.canonical}v{self.version}"

    @property
    def is_old_style(self) -> bool:
        return self.archive is not None

    def with_version(self, version: int | None) -> ArxivId:
        return ArxivId(self.yymm, self.number, self.archive, version)

    def __str__(self) -> str:
        return self.versioned


def parse(raw: str) -> ArxivId:
    """Parse any accepted spelling; raise :class:`InvalidArxivId` with the reason otherwise."""
    if not isinstance(raw, str):
        raise InvalidArxivId(repr(raw), "not a string")
    text = raw.strip()
    if not text:
        raise InvalidArxivId(raw, "empty")
    if len(text) > MAX_LENGTH * 2:
        raise InvalidArxivId(raw, "too long")
    if url := _URL.match(text):
        text = url["rest"]
    if text[:6].lower() == "arxiv:":
        text = text[6:]
    if m := _NEW.fullmatch(text):
        return _new_style(raw, m["yymm"], m["number"], m["version"])
    if m := _OLD.fullmatch(text):
        return _old_style(raw, m["archive"], m["yymm"], m["number"], m["version"])
    if "/" in text:
        raise InvalidArxivId(raw, "old-style ids look like archive/YYMMNNN, e.g. hep-th/9901001")
    raise InvalidArxivId(raw, "new-style ids look like YYMM.NNNNN with an optional vN, e.g. 2401.01234v2")


def canonical(raw: str) -> str:
    """Shorthand for ``parse(raw).canonical``."""
    return parse(raw).canonical


def is_valid(raw: str) -> bool:
    try:
        parse(raw)
    except InvalidArxivId:
        return False
    return True


def _version(raw: str, version: str | None) -> int | None:
    if version is None:
        return None
    number = int(version)
    if number < 1:
        raise InvalidArxivId(raw, "versions start at v1")
    return number


def _month(raw: str, yymm: str) -> tuple[int, int]:
    year, month = int(yymm[:2]), int(yymm[2:])
    if not 1 <= month <= 12:
        raise InvalidArxivId(raw, f"month {month:02d} does not exist")
    return year, month


def _new_style(raw: str, yymm: str, number: str, version: str | None) -> ArxivId:
    _month(raw, yymm)
    if yymm < "0704":
        raise InvalidArxivId(raw, "new-style ids begin in April 2007 (0704)")
    if len(number) == 4 and yymm > "1412":
        raise InvalidArxivId(raw, "ids from 2015 on have five digits after the dot")
    if len(number) == 5 and yymm < "1501":
        raise InvalidArxivId(raw, "ids before 2015 have four digits after the dot")
    if int(number) == 0:
        raise InvalidArxivId(raw, "sequence numbers start at 1")
    return ArxivId(yymm, number, None, _version(raw, version))


def _old_style(raw: str, archive: str, yymm: str, number: str, version: str | None) -> ArxivId:
    archive = archive.lower()
    if archive not in OLD_ARCHIVES:
        raise InvalidArxivId(raw, f"unknown archive {archive!r}")
    year, month = _month(raw, yymm)
    if not (year >= 91 or year <= 7):
        raise InvalidArxivId(raw, "old-style ids run from 1991 to 2007")
    if (year == 91 and month < 8) or (year == 7 and month > 3):
        raise InvalidArxivId(raw, "old-style ids run from 9108 to 0703")
    if int(number) == 0:
        raise InvalidArxivId(raw, "sequence numbers start at 001")
    return ArxivId(yymm, number, archive, _version(raw, version))
