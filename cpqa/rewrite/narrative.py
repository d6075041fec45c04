"""The parts of a question that tell the asker's story rather than ask: "what does stage 3 bowel cancer mean? they
told my dad its in the lymph nodes". Their conditions, treatments and names still say what the question is about;
their other words ("told", "dad", "watch and wait") are not things an answer must name, nor a search must find.

By grammar, not by topic: a clause (a sentence's part between commas or semicolons) is told when a personal
pronoun, a possessive or a family word opens it ("my grandad is 78 ...", "they told ...", "Mum has just been
diagnosed ...") and it does not ask (no question mark ends it, no question word opens it: "should i get tested").
Scientific context ("Histone acetyltransferases transfer acetyl groups ... What is the purpose of this transfer?")
names what is asked about, so it is not told. When nothing would be left asked, the whole text is asked.
"""

from __future__ import annotations

import re
from functools import lru_cache

from cpqa.words import names_rare_word

# Words that open a clause telling the asker's story: English's personal pronouns and possessives, and the words
# for family (closed classes of English, not of medicine).
_FAMILY = frozenset(
    "mum mom mother dad father parent son daughter child kid baby husband hubby wife partner brother sister grandad "
    "grandpa grandfather grandma grandmother granny nan aunt uncle friend boyfriend girlfriend".split()
)
_TELLING = _FAMILY | frozenset(
    "i i'm im i've ive i'd my me we we're our us he he's his him she she's her they they're their them".split()
)
# A sentence ends at . ? or ! before a space or the end, not after an initial or a short title ("H. pylori", "Dr.").
_SENTENCE = re.compile(r".+?(?:(?<!\b[A-Za-z])(?<!\b(?:dr|mr|ms|vs|st))(?<!\b(?:mrs|etc))[.?!]+(?=\s|$)|$)", re.S)
# Words that open a question even where no question mark closes it ("how rare is it").
_ASKING = frozenset(
    "what what's whats how how's why when where which who whose whom is are can could does do did will would should "
    "has have was were may might shall".split()
)
_CLAUSE = re.compile(r"[^,;]+(?:[,;]|$)")
_FIRST_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


@lru_cache(maxsize=256)
def narrative_spans(question: str) -> tuple[tuple[int, int], ...]:
    """Character spans of ``question`` that tell rather than ask (see the module docstring); none when every part
    would be told (then the question is its story). Kept: the rewrite and the page chooser both ask."""
    told: list[tuple[int, int]] = []
    kept = False
    for sentence in _SENTENCE.finditer(question):
        for m in _CLAUSE.finditer(sentence[0]):
            if not m[0].strip():
                continue
            first = _FIRST_WORD.search(m[0])
            if first and first[0].lower() in _TELLING and not _asks(m[0]):
                told.append((sentence.start() + m.start(), sentence.start() + m.end()))
            else:
                kept = True
    return tuple(told) if kept else ()


def _asks(text: str) -> bool:
    first = _FIRST_WORD.search(text)
    return text.rstrip().endswith("?") or bool(first and first[0].lower() in _ASKING)


def story_word(word: str, question: str) -> bool:
    """Whether ``word`` is only the asker's story: every time ``question`` uses it is in a told span
    (``narrative_spans``), never written as a name ("AML"), and it is a family word, an age or a word general English
    uses ("told", "grandad", "40s"; not "neuroblastoma")."""
    spans = narrative_spans(question)
    found = _uses(word, question)
    if not spans or not found or any(not any(a <= m.start() < b for a, b in spans) for m in found):
        return False
    if written_as_name(word, " ".join(question[a:b] for a, b in spans)):
        return False
    return _family_word(word) or any(ch.isdigit() for ch in word) or not names_rare_word(word)


def _family_word(word: str) -> bool:
    word = word.lower().removesuffix("'s")
    return word in _FAMILY or word.removesuffix("s") in _FAMILY


def written_as_name(word: str, text: str) -> bool:
    """Whether ``word`` is written in ``text`` as a name: in capitals ("AML", "HER2", "R-CHOP"), or capitalised where
    a sentence does not start ("Keytruda"); not an age or a span of time ("40s")."""
    for m in _uses(word, text):
        written = m[0]
        if sum(ch.isupper() for ch in written) > 1:
            return True
        before = text[: m.start()].rstrip()
        if written[:1].isupper() and before and before[-1] not in ".?!":
            return True
    return False


def _uses(word: str, text: str) -> list[re.Match]:
    """Where ``text`` uses ``word`` as a whole word, in any case."""
    return list(re.finditer(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, re.IGNORECASE))


__all__ = ["narrative_spans", "story_word", "written_as_name"]
