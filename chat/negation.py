"""Negation agreement, for :mod:`chat.claims`: a claim that a passage's sentence otherwise states is
not stated when it denies what the sentence says, or says what the sentence denies. "does not need"
against "needs"; "neither … nor" as one negation; a negative-prefixed predicate ("were unaware") as
"were not aware", and a negative prefix as a denial of its stem where the other side writes the stem
("unscaled" against "without scaling"); "without" as a condition, not a denial of all the sentence says.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from chat.names import names
from chat.numbers import values as _values
from retrieval.evidence import term_list, terms

# A word broken at a line's end ("out- perform"), not a suspended hyphen ("single- or multi-doc").
_BROKEN = re.compile(r"(?<![\w-])([A-Za-z]+)- (?!(?:and|or|to|nor|as|vs|but)\s)([a-z]+)")


def unbroken(text: str) -> str:
    """``text`` with the words broken at a line's end whole again."""
    return _BROKEN.sub(r"\1\2", text)


_NEGATION = re.compile(
    # "no more than three", "not only": a bound and an addition, not negations; "No Retrieval" (a
    # capital after a capital, as a figure's legend or a table's row names a baseline) is a label
    # ("not much", "not many": a small amount, as "little" and "few" say)
    r"\b(?:not|no)\b(?!\s+(?:more|less|fewer|greater|larger|smaller|higher|lower)\s+than\b|\s+only\b"
    r"|(?<=not)\s+(?:much|many)\b"
    r"|(?-i:(?<=No)\s+[A-Z]))"
    # ("except that X" says X: "… except that Table 4 reports 87.5%", a clause, not an exclusion)
    r"|\b(?:never|neither|nor|without|except(?!\s+that\b)|apart from|cannot|fails? to|failed to|none"
    r"|unable|(?:falls?|fell|falling) short)\b|n't\b"
    # a predicate denied by its prefix: "independent of" is "does not depend on"; "the absence of" a
    # thing is "no" thing
    r"|\b(?:independent|irrespective|regardless)\s+of\b|\b(?:absence|lack)\s+of\b|\b(?:lacks|lacking)\b"
    # groups found alike differ in nothing: "stays were similar in the two groups" is "no difference
    # in stays between the groups" (not any likeness: "similar for mild preeclampsia", "similar to")
    r"|\b(?:similar|comparable|alike)\s+(?:in|between|across|among)\s+(?:the\s+)?"
    r"(?:two|both|three|all|groups?|arms?|cohorts?)\b"
    # a contrast ("unlike methods that …", "contrasts previous works that …"): see _CONTRAST
    r"|\b(?:unlike|in contrast (?:to|with)|contrasts?(?: with)?|as opposed to|different from)\b"
    # what is left to future work is not done ("we leave X to future work")
    r"|\b(?:leave|leaves|left)\b(?=[^.;]{0,150}?\b(?:to|for) future (?:work|research)\b)"
    # a negative-prefixed predicate: "were unaware", "is non-trivial", "remains largely unexplored"
    # (not "under", "until", "unless", "unique", "unit", "union", "universal", "uniform", "unify")
    r"|\b(?:is|are|was|were|be|been|being|remains?|remained)\s+(?:[a-z]+ly\s+)?"
    r"(?:un(?!der|til|less|i(?:t|on|que|vers|form|fi|fy|son))|non-?)[a-z]{3,}",
    re.IGNORECASE,
)
# Verbs that say little of what is denied: "without using ground truth labels" denies the labels, not
# every use ("it only uses the questions").
LIGHT_VERBS = frozenset(
    term_list("use uses used using make made take taken get got have has had do does did")
)


def negated(text: str, wanted: set[str], elsewhere: str = "") -> bool:
    """An odd number of negations that govern the claim's words (within a few words of one; only the
    words after it for "without"), "neither … nor" counted once,
    leaving out a condition the passage states ``elsewhere`` than the sentence held against ("without
    fine-tuning" against "… without additional fine-tuning" a sentence before)."""
    words = text.split()
    stated = (
        [set(terms(" ".join(w.split()[:4]))) for w in _NEGATION.split(elsewhere)[1:]] if elsewhere else []
    )
    count = 0
    for match in _NEGATION.finditer(text):
        cue = match.group().lower()
        if cue == "nor" and re.search(r"\bneither\b", text[: match.start()], re.IGNORECASE):
            continue  # "neither A nor B" is one negation
        at = len(text[: match.start()].split())
        near = terms(" ".join(words[max(0, at - 2) : at + 6]))
        governed = _governed(text, match.end())
        if cue == "without" or cue.split()[-1] == "of" or cue.startswith("lack"):
            # a condition negates only what follows it ("improvements without introducing
            # parameters" does not deny the improvements; "independent of age", "the absence of a
            # plan" likewise), and not when it repeats one stated before
            near = set() if any(governed <= said for said in stated) else governed
        elif cue in ("except", "apart from") or _CONTRAST.fullmatch(cue):
            # "trained identically except batch size": only what it sets apart, and only the words
            # the rest of the sentence does not say too ("task specific, as opposed to dataset
            # specific" denies "dataset"); a contrast denies the sentence's subject a predicate said of
            # what it is contrasted with ("contrasts earlier works that aim to …"), not a name
            # ("Unlike BERT, ELMo …")
            phrase = re.split(r"[,;:.!?()]", text[match.end() :])[0]
            rest = terms(text[: match.start()] + " " + text[match.end() + len(phrase) :])
            if cue not in ("except", "apart from"):
                relative = re.search(r"\b(?:that|which|who)\b", phrase)
                phrase = phrase[relative.end() :] if relative else ""
            # an exception of a name only ("Apart from PubMedQA, …") is a condition, not a negation
            near = terms(phrase) - rest - terms(" ".join(names(phrase, anywhere=True)))
        count += bool((near - LIGHT_VERBS) & wanted)
    return count % 2 == 1


def conditions_only(text: str) -> bool:
    """Every negation of ``text`` is a "without" condition ("the model without retrieval scores …")."""
    cues = [m.group().lower() for m in _NEGATION.finditer(text)]
    return bool(cues) and all(c == "without" for c in cues)


_WITH = re.compile(r"\bwith\s+([\w-]+(?:\s+[\w-]+){0,2})", re.IGNORECASE)
_PRONOUNS = frozenset(["it", "them", "this", "that", "these", "those", "one"])


def paired(text: str) -> set[str]:
    """The words of a "without" that ``text`` also states held ("45.7% without self-attention or
    46.2% with it"): the two sides of one comparison, either of which a claim may state."""
    out: set[str] = set()
    for m in _NEGATION.finditer(text):
        if m.group().lower() != "without":
            continue
        governed = _governed(text, m.end())
        for w in _WITH.finditer(text):
            said = w.group(1)
            if said.split()[0].lower() in _PRONOUNS or terms(said) & governed:
                out |= governed
    return out


def denied(text: str) -> set[str]:
    """The words a negation of ``text`` governs: the first few after each cue ("cannot be applied
    to variable …" denies "applied", "variable")."""
    return {t for m in _NEGATION.finditer(text) for t in _governed(text, m.end())}


def _governed(text: str, end: int) -> set[str]:
    """The words a negation ending at ``end`` governs: up to three, within its clause."""
    return terms(" ".join(re.split(r"[,;:.!?(]", text[end:])[0].split()[:3]))  # "(PPO)" names, is not denied


_CONTRAST = re.compile(r"unlike|in contrast (?:to|with)|contrasts?(?: with)?|as opposed to|different from")


def negation_differs(
    claim: str, wanted: set[str], passage: str, best_sentence: str, sentences: Sequence[str]
) -> bool:
    """Whether the claim's negation disagrees with the sentence it rests on. A claim of two statements
    joined by a semicolon ("X is not done; Y is left implicit") holds each against the passage's
    sentence that says most of it; a claim of one, against ``best_sentence``, the sentence of the
    window that says most of it. A label the passage writes "No Retrieval" is no negation in the
    claim either ("with no retrieval")."""
    for label in {m.group() for m in _NO_LABEL.finditer(passage)}:
        claim = re.sub(rf"\b{re.escape(label)}\b", label, claim, flags=re.IGNORECASE)
    parts = [p for p in claim.split(";") if len(terms(p) & wanted) >= 3]
    if len(parts) > 1:
        for part in parts:
            mine = terms(part) & wanted
            said = max(sentences, key=lambda t: len(mine & terms(t)))
            part_negated = negated(part, mine, passage.replace(said, " "))
            if part_negated != negated(said, mine) and not (
                part_negated and _denied_too(part, mine, sentences, said)
            ):
                return True
        return False
    wanted = wanted | {t for m in _UN.finditer(claim) for t in terms(m.group(1))}
    bare = terms(claim) | terms(passage)
    claim, passage, best_sentence = (_unprefixed(t, bare) for t in (claim, passage, best_sentence))
    sentences = [_unprefixed(s, bare) for s in sentences]
    elsewhere = passage.replace(best_sentence, " ")
    claim_negated = negated(claim, wanted, elsewhere)
    held = _clause_held(best_sentence, wanted)
    if claim_negated == negated(held, wanted) or paired(best_sentence) & wanted:
        return False  # agreed, or the sentence states the thing both with and without
    if conditions_only(claim) and _tabular(best_sentence):
        return False  # a table gives "without retrieval" as "-" or "Pretraining only", in no words
    # A negated claim may rest on another sentence, when that one denies what the claim denies
    # ("… improves perplexity for fixed length sequences. However, these scalars cannot be applied
    # to variable sequence lengths"; "trained on 9M, 30M and 90M subsets … with no added
    # regularization" against a sentence of the subsets and "We do not perform additional
    # regularization" after it).
    if not claim_negated and _affirmed_too(claim, wanted, sentences, best_sentence):
        return False
    return not (claim_negated and _denied_too(claim, wanted, sentences, best_sentence))


_NO_LABEL = re.compile(r"(?<![\w-])No\s+[A-Z][\w-]*")  # a baseline named in a legend or a row
# A participle or an "-able" word with a negative prefix denies its stem: "unscaled" is "without
# scaling", "unsupervised" "without supervision" (not "under", "until", "unless", "uni-").
_UN = re.compile(r"\bun(?!i|der|til|less)([a-z]{3,}(?:ed|able|ible))\b", re.IGNORECASE)


def _unprefixed(text: str, bare: set[str]) -> str:
    """``text`` with its negative prefixes as negations, where the claim or the passage also writes
    the stem without one (in ``bare``): "unchanged at 20.8" against a table is no denial."""

    def spelt(m: re.Match[str]) -> str:
        return f"not {m.group(1)}" if terms(m.group(1)) & bare else m.group()

    return _UN.sub(spelt, unbroken(text))  # "unsuper- vised" is one word


# A clause put before the sentence's own ("As packets are not received at once, we filtered …"): its
# negation is of what it says, not of the main clause.
_FRONTED = re.compile(r"(?:As|Since|Because|While|Although|Though|Whereas|If|When)\s[^,;()]{8,}?,\s")


def _clause_held(sentence: str, wanted: set[str]) -> str:
    """The sentence, or of its fronted clause and its main clause (or of the clauses a semicolon
    joins: "RMSProp lacks a bias-correction term; … not correcting the bias leads to …") the one that
    says most of the claim's words."""
    fronted = _FRONTED.match(sentence)
    parts = [sentence[: fronted.end()], sentence[fronted.end() :]] if fronted else sentence.split(";")
    said = sorted((len(terms(part) & wanted), part) for part in parts)
    if len(said) < 2 or said[-1][0] == said[-2][0]:
        return sentence
    return said[-1][1]


def _tabular(text: str) -> bool:
    """Text that reads as a table, read or not: six numbers within sixteen words somewhere in it."""
    starts = [v.start for v in _values(text)[1]]
    return any(b - a < 16 for a, b in zip(starts, starts[5:], strict=False))


def _affirmed_too(claim: str, wanted: set[str], sentences: Sequence[str], held: str) -> bool:
    """Whether a sentence other than ``held`` that states one of the claim's numbers says the
    claim's words with no negation ("2 = the output is unambiguously toxic" beside "0 = … not at all
    toxic")."""
    mine = {v.value for v in _values(claim)[1] if v.unit != "word"}
    return bool(mine) and any(
        not negated(text, wanted)
        and mine & {v.value for v in _values(text)[1]}
        and len(terms(text) & wanted) >= 3
        for text in sentences
        if text != held
    )


def _denied_too(claim: str, wanted: set[str], sentences: Sequence[str], held: str) -> bool:
    """Whether a sentence other than ``held`` denies what the claim denies, of the claim's words."""
    mine = denied(claim) & wanted
    return any(
        negated(text, wanted) and mine & denied(text) and len(terms(text) & wanted) >= 3
        for text in sentences
        if text != held
    )
