"""Names checked for what they say (the name side of :mod:`chat.claims`).

A name of the claim (a method, dataset or model: capitalised words, acronyms, names with digits such
as "GPT-3") must be named where the passage says this: not swapped for a kindred name there
("English-to-French" for "English-to-German"), not for the one other name a sentence that otherwise
says the same thing gives, not for another kind the passage contrasts ("soft targets" for "hard
targets"), and not said of another topic ("AdaMax" where the passage speaks of Adam).
"""

from __future__ import annotations

import re
from itertools import pairwise

from chat.names import compounds as _compounds
from chat.names import fold as _fold
from chat.names import holds_compound as _holds_compound
from chat.names import holds_name as _holds_name
from chat.names import names as _names
from chat.names import plain as _plain
from chat.number_binding import unabbreviated
from chat.numbers import Value, is_year
from chat.numbers import same as _same
from chat.numbers import values as _values
from chat.sentences import split
from retrieval.evidence import term_list, terms

SWAP_SHARE = 0.6  # a sentence holding this much of a claim's words says the same thing (but a name)


def entities(
    claim: str, window: str, passage: str, share: float, title: str = "", lead: str = ""
) -> str | None:
    """A name of the claim missing where the passage says this: swapped for a kindred name there
    ("English-to-French" for "English-to-German"), or — in a sentence that otherwise says what the
    claim says (``share`` of its words) — for the one other name there; or in the passage (its title
    and the ``lead`` cut from before it) nowhere."""
    topic = _topic(window, passage, lead)  # the title runs into the first sentence: not read for this
    passage = f"{title} {lead} {passage}"
    window_names = _names(window, anywhere=True)
    every = _names(claim, anywhere=True)
    # (a sentence's first word is a name when it is written as one: "Phi-3-mini QLoRA is …")
    claim_names = [n for n in every if not _plain(n) or n in _names(claim)]
    first_only = set(claim_names) - set(_names(claim))
    extra = [
        m
        for m in window_names
        if not _plain(m) and not any(_holds_name(n, m) or _holds_name(m, n) for n in every)
    ]
    # Capitalised words joined into one name ("English-to-German", "Fusion-in-Decoder"): one part
    # swapped while another is kept is a kindred name ("English-to-Japanese").
    for compound in _compounds(claim):
        if _holds_compound(passage, compound) or _listed_short(passage, compound, claim):
            continue
        parts = set(_parts(compound))
        kin = [
            m
            for m in _compounds(window)
            if len(parts & set(_parts(m))) not in (0, len(parts))
            or (set(_parts(m)) == parts and _parts(m) != _parts(compound))  # "English-to-German"
        ]
        if kin:
            return f"the passage says {kin[0]} here, not {compound}"
    for name in every:
        if topic and _kindred_by_prefix(topic, name) and not _holds_name(claim, topic):
            return f"the passage says this of {topic}, not {name}"
    for name in claim_names:
        if _holds_name(window, name) or _listed_short(window, name, claim):
            continue
        parts = set(_parts(name))
        kin = [
            m
            for m in window_names
            if _fold(m) != _fold(name)
            and parts & set(_parts(m))
            and not any(_fold(m) == _fold(n) for n in every)  # the claim names it too
            # (a sentence's first word: the passage's "PaSa" here, its "PaSa-7B" elsewhere)
            and not (name in first_only and set(_parts(m)) < parts and _stands_alone(passage, name))
        ]
        if kin:
            return f"the passage says {kin[0]} here, not {name}"
        if _joined_from(name, claim, window, passage) or name in first_only:
            continue  # (a sentence's first word is held only against kindred names)
        if not _plain(name) and len(extra) == 1 and share >= SWAP_SHARE:  # one name in its place
            return f"the passage says {extra[0]} here, not {name}"
        if (
            not _plain(name)
            and not _holds_name(passage, name)
            and not _abbreviates(passage, name)
            and not _plural_of_named(passage, name)
            and not (not title and _authors_own(name, claim, window))  # the paper unknown: its own name
        ):
            return f"{name} is not named in the passage"
        if (  # a capitalised word, where the sentence names another thing the claim does not
            _plain(name)
            and extra
            and _unheard(name, passage)
            and not re.search(
                rf"\b{re.escape(name)}-[A-Z]|[A-Za-z]-{re.escape(name)}\b", claim
            )  # "Newton-Raphson"
            and not (not title and (_authors_own(name, claim, window) or _ours(name, claim, window)))
        ):
            return f"{name} is not named in the passage"
    return None


def _stands_alone(text: str, name: str) -> bool:
    """``text`` writes ``name`` as a name of its own ("BLEU-1", not inside "Q-BLEU-1")."""
    return bool(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.IGNORECASE))


def _ours(name: str, claim: str, window: str) -> bool:
    """The claim's name for what the sentence calls the authors' own ("the base Transformer" for
    "our base models"): a word beside the name stands after "our" there."""
    beside = re.search(rf"(\w+)\s+{re.escape(name)}\b(?:['’]s)?\s*(\w*)", claim)
    words = {t for w in (beside.groups() if beside else ()) for t in term_list(w)}
    owned = {
        t
        for m in re.finditer(r"\bour\s+(\w+)(?:\s+(\w+))?", window, re.I)
        for w in m.groups()
        if w
        for t in term_list(w)
    }
    return bool(words & owned)


def _unheard(name: str, passage: str) -> bool:
    """A capitalised word ("Landsat") the passage writes in no form: not the word, its stem or the
    start of a word (a plural, "Bayes" for "Bayesian")."""
    folded = name.lower()
    stems = set(term_list(folded))
    return (
        folded not in passage.lower()
        and not stems & terms(passage)
        and not any(w.lower().startswith(folded[:5]) for w in re.findall(r"[A-Za-z]{5,}", passage))
        and folded not in _REFERENCES
        and not _demonym_of(name, passage)
    )


def _demonym_of(name: str, passage: str) -> bool:
    """A people's or language's adjective ("Swedish", "Chinese") whose place the passage names
    ("Sweden", "China"): they share all but the place's last two letters, four at least."""
    if not re.fullmatch(r"[A-Z][a-z]{3,}(?:ish|ese|ian|an|i)", name):
        return False
    for place in set(re.findall(r"\b[A-Z][a-z]{3,}\b", passage)):
        a, b = place.lower(), name.lower()
        shared = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        if shared >= max(4, len(place) - 2):
            return True
    return False


# References and dates are no names a passage must state
_REFERENCES = frozenset(
    re.findall(
        r"\w+",
        "figure table section appendix equation chapter fig tab eq january february march april may june"
        " july august september october november december monday tuesday wednesday thursday friday"
        " saturday sunday",
    )
)


def _plural_of_named(passage: str, name: str) -> bool:
    """A plural of a name the passage writes ("ViTs" and "ResNets" where it says "ViT models")."""
    plural = len(name) > 2 and name.endswith("s") and not name.endswith("ss")
    return plural and _holds_name(passage, name[:-1])


_FIRST_PERSON = re.compile(r"\b(?:we|our|us)\b", re.IGNORECASE)


def _authors_own(name: str, claim: str, window: str) -> bool:
    """A claim that calls the authors' own system by its name ("PaLM's largest model", "FlashAttention's
    backward pass") where the sentence it rests on says "our largest model", or makes it the subject
    of what the sentence says "we" do ("ZeRO runs an all-gather" for "We perform an all-gather"): the
    paper's name for what the passage speaks of in the first person, not a name swapped in. So is a
    name the claim gives as its source ("According to PaLM's related-work section", "the SubjQA
    paper says"). Read only where the paper's title is not given: with it, the own name is written."""
    named = re.escape(name)
    if re.search(rf"\baccording to {named}\b|\bthe {named} (?:paper|authors|study|article)\b", claim, re.I):
        return True
    possessive = re.search(rf"(?<![\w-]){named}['’]s\b", claim)
    subject = re.search(rf"(?:^|,\s+){named}\s+[a-z]+", claim) and re.search(r"\b[Ww]e\b", window)
    return bool(possessive and _FIRST_PERSON.search(window)) or bool(subject)


# Words before a noun that do not say which kind of it ("each class", "we mask", "four tasks").
_NOT_KINDS = frozenset(
    term_list("we our they their its each every per all any both some other one two three four five six")
    + term_list("seven eight nine ten were was are is been be has have had also only")
    # a degree ("more extractive" against "highly extractive") is not a kind: polarity judges it
    + term_list("more less most least highly very quite rather slightly much far fully")
)
# Verbs that follow a subject ("Evaluations use", "perturbations used"): a subject and its verb, not
# a kind of thing named by its modifier.
_NOT_HEADS = frozenset(
    term_list("use uses used make makes made show shows shown give gives given take takes taken")
    + term_list("reach reaches reached report reports reported yield yields yielded require requires")
)


# A word broken at a line's end ("Predic- tive"), not a suspended hyphen ("single- or multi-doc").
_LINE_BREAK = re.compile(r"([a-z])- (?!(?:and|or|to|nor|as|vs|but)\b)([a-z]+)\b")


_SUBJECTS = frozenset(["it", "they", "we", "he", "she", "which", "who"])


def _pairs(text: str) -> dict[tuple[str, str], str]:
    """Two content words side by side ("soft targets", "CPU memory") as stems, with their text."""
    out = {}
    text = _LINE_BREAK.sub(r"\1\2", text)
    for part in re.split(r"[^\w\s'’-]+", text):
        words = part.split()
        for i, (a, b) in enumerate(pairwise(words)):
            if i and words[i - 1].lower() in _SUBJECTS:
                continue  # "it requires models": a verb and its object, not a kind of model
            first, second = [*map(unabbreviated, term_list(a))], [*map(unabbreviated, term_list(b))]
            if len(first) == 1 and len(second) == 1 and first[0].isalpha() and second[0].isalpha():
                out[(first[0], second[0])] = f"{a} {b}"
    return out


def _gives_any(text: str, numbers: list[Value]) -> bool:
    """Whether prose (not a table's run of numbers) gives one of ``numbers`` (a measure: not a year,
    nor a model's size)."""
    found = _values(text)[1]
    measured = [a for a in numbers if not is_year(a) and a.unit in ("", "%", "x")]
    return len(found) <= 4 and any(_same(a, b) for a in measured for b in found)


def modifier_swapped(claim: str, window: str, passage: str) -> str | None:
    """The claim's "hard targets" where the sentence it rests on says "soft targets" (and not
    "hard targets"), when the passage speaks of both: the other of two kinds it contrasts."""
    theirs = _pairs(window)
    mine = {unabbreviated(t) for t in terms(claim)}
    said = _pairs(passage)
    here = {unabbreviated(t) for t in terms(window)}
    numbers = _values(claim)[1]
    for (modifier, head), text in _pairs(claim).items():
        if modifier in here or (modifier, head) not in said or modifier in _NOT_KINDS or head in _NOT_HEADS:
            continue
        # … unless the sentence that says the claim's kind gives its number ("30 692 artificial bugs")
        if any((modifier, head) in _pairs(s.text) and _gives_any(s.text, numbers) for s in split(passage)):
            continue
        # A name the sentence puts on other heads too ("GPU SRAM … GPU HBM") says where or whose, not
        # which kind ("data parallelism … data center" is a kind).
        other = [
            t
            for (m, h), t in theirs.items()
            if h == head
            and m not in mine
            and m not in _NOT_KINDS
            and not (t[:1].isupper() and any(m == n and g != h for n, g in theirs))
        ]
        if other:
            return f"the passage says {other[0]!r} here, not {text!r}"
    return None


def _topic(window: str, passage: str, lead: str = "") -> str | None:
    """What the sentence a claim rests on is about when it names nothing itself: the first name of
    the nearest sentence before it that names one ("AdaMax, a variant of Adam …. Good default
    settings … are α = 0.002" is said of AdaMax), in the passage or the ``lead`` before it."""
    if _names(window, anywhere=True):
        return None
    at = passage.find(window)
    before = [s.text for s in split(f"{lead} {passage[: max(at, 0)]}".strip())]
    for text in reversed(before):
        named = [n for n in _names(text, anywhere=True) if n.lower() not in _NOT_TOPICS]
        if named:
            return named[0]
    return None


# Words that open a sentence or a caption without being what it is about.
_NOT_TOPICS = frozenset(["algorithm", "table", "figure", "fig", "section", "appendix", "equation"])


def _kindred_by_prefix(one: str, other: str) -> bool:
    """Two different names, one written at the start of the other ("AdaMax" and "Adam", "AdamW" and
    "Adam"), neither held in the other as a name ("BERTBASE" holds "BERT")."""
    a, b = _fold(one), _fold(other)
    return (
        a != b
        and (a.startswith(b) or b.startswith(a))
        and not _holds_name(one, other)
        and not _holds_name(other, one)
    )


def _joined_from(name: str, claim: str, window: str, passage: str) -> bool:
    """Whether the claim joins a second statement that another sentence of the passage makes of
    ``name``: that sentence names it, states a number of the claim that the window does not, and
    is about the same subject (it names every name of the claim the window names): "the Selector
    reaches an F1 of 85% and a precision of 95%" from two sentences apart."""
    mine = _values(claim)[1]
    in_window = _values(window)[1]
    elsewhere = [m for m in mine if not any(_same(v, m) for v in in_window)]
    subject = [n for n in _names(claim, anywhere=True) if n != name and _holds_name(window, n)]
    return bool(elsewhere) and any(
        _holds_name(s.text, name)
        and all(_holds_name(s.text, n) for n in subject)
        and any(_same(v, m) for v in _values(s.text)[1] for m in elsewhere)
        for s in split(passage)
        if s.text not in window
    )


def _abbreviates(passage: str, name: str) -> bool:
    """``name`` begins with the initials of words the passage names ("NQ-trained": "Natural
    Questions"), or joins the heads of words it writes ("ResNet": "residual nets")."""
    humps = re.fullmatch(r"(?:[A-Z][a-z]{2,}){2,}", name)
    if humps:  # "ResNet": "residual nets"
        parts = re.findall(r"[A-Z][a-z]+", name)
        return re.search(r"\b" + r"\w*[\s-]+".join(p.lower() for p in parts), passage.lower()) is not None
    letters = re.match(r"[A-Z]{2,}(?![a-z])", name)
    if not letters:
        return False
    runs = re.findall(r"[A-Z][\w'’]*(?:[\s-]+[A-Z][\w'’]*)+", passage)
    if any(letters.group() in "".join(w[0] for w in re.split(r"[\s-]+", run)) for run in runs):
        return True
    # … or of words in lower case, whole: "ICU" for "intensive care unit"
    initials = "".join(w[0] for w in re.findall(r"[A-Za-z]+", passage)).lower()
    return len(letters.group()) >= 3 and letters.group().lower() in initials and name.isupper()


def _listed_short(text: str, name: str, claim: str) -> bool:
    """``name`` (as the claim writes it whole) stated as a list states it, its shared prefix given
    once ("ViT-B/32, B/16 … and H/14" states "ViT-H/14"): the text names another of that prefix and
    the rest stands alone."""
    whole = re.search(rf"{re.escape(name)}[\w/.+-]*(?<![.])", claim)
    prefix, dash, rest = (whole.group() if whole else name).partition("-")
    if not dash or not rest or not re.search(r"[\d/]", rest):
        return False
    alone = re.search(rf"(?<![\w/-]){re.escape(rest)}(?![\w/])", text)
    return bool(alone) and re.search(rf"(?<![\w-]){re.escape(prefix)}-\w", text) is not None


def _parts(name: str) -> list[str]:
    return [
        p for p in re.split(r"[\s\-–_/]+|(?<=[a-zA-Z])(?=\d)", name.lower()) if p and p not in ("to", "of")
    ]


_EXCEPT = re.compile(
    r"\b(?:except(?:\s+for)?|but\s+not|other\s+than|apart\s+from)\s+([^,;:.()]+)", re.IGNORECASE
)


def exception_swapped(claim: str, passage: str) -> str | None:
    """ "every dataset except MSR-VTT" against "all datasets except for MSVD": the passage's sentence
    that says most of the claim sets apart another name than the claim does."""
    mine = _EXCEPT.search(claim)
    if mine is None:
        return None
    excepted = _names(mine.group(1), anywhere=True)
    if not excepted:
        return None
    said = terms(claim[: mine.start()])
    held = [(len(said & terms(s.text)), m.group(1)) for s in split(passage) if (m := _EXCEPT.search(s.text))]
    if not held:
        return None
    overlap, set_apart = max(held)
    theirs = _names(set_apart, anywhere=True)
    if overlap < 2 or not theirs or any(_fold(n) == _fold(t) for n in excepted for t in theirs):
        return None
    return f"the passage sets apart {theirs[0]}, not {excepted[0]}"
