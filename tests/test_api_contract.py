"""The API schema's question pattern says exactly what the screen refuses (no server: the pattern against
``check_question`` itself, as JSON-schema validators read it)."""

from __future__ import annotations

import re

import pytest

# Each side of the rule: what the screen's NFKC makes a letter of (TM, XII, math bold, a ligature) and what it does
# not (a fraction, a superscript digit, a halfwidth sound mark that is a letter only before NFKC), in several scripts.
ACCEPTED = ["a", "é", "你好", "Ω?", "™", "Ⅻ", "𝐇𝐞𝐥𝐥𝐨", "ﬁ", "𠀀", "1 a", "  ß  ", "مرحبا"]
REFUSED = ["0", "½", "²", "???!!!", "٣", "ﾞ", "\u0301", "1\u0301", "   ", "😀", "\u200b"]


def _screen_accepts(text: str) -> bool:
    from cpqa.safety.screening import InvalidQuestion, check_question

    try:
        check_question(text)
    except InvalidQuestion:
        return False
    return True


def _characters() -> list[str]:
    """Every character the screen and Unicode's letters disagree on, Latin-1 whole, and every 97th code point."""
    from cpqa.serving.contract import bears_letter

    points = [p for p in range(0x110000) if not 0xD800 <= p <= 0xDFFF]
    odd = [chr(p) for p in points if bears_letter(chr(p)) != chr(p).isalpha()]
    assert len(odd) > 500  # the rule is not letters alone: NFKC adds and removes some
    return odd + [chr(p) for p in range(0x100)] + [chr(p) for p in points[::97]]


def test_the_question_pattern_matches_exactly_what_the_screen_accepts():
    from cpqa.serving.contract import bears_letter, question_pattern

    pattern = re.compile(question_pattern())
    for text in ACCEPTED + REFUSED:
        assert bool(pattern.search(text)) == _screen_accepts(text) == (text in ACCEPTED), repr(text)
    for char in _characters():
        assert bool(pattern.search(char)) == bears_letter(char) == _screen_accepts(char), hex(ord(char))
    for point in range(0x110000):  # the pattern is the rule, character by character
        if not 0xD800 <= point <= 0xDFFF:
            assert bool(pattern.search(chr(point))) == bears_letter(chr(point)), hex(point)


def test_json_schema_validators_read_the_pattern_alike():
    """jsonschema (Python's re) and jsonschema-rs (the engine schemathesis checks with, ECMA-262) agree with the
    screen on each side of the rule."""
    import jsonschema

    from cpqa.serving.contract import question_pattern

    schema = {"type": "string", "pattern": question_pattern()}
    validators = [jsonschema.Draft202012Validator(schema).is_valid]
    try:
        import jsonschema_rs
    except ImportError:  # a dev install has it (schemathesis); a lean one checks with jsonschema alone
        pass
    else:
        validators.append(jsonschema_rs.validator_for(schema).is_valid)
    for is_valid in validators:
        assert [t for t in ACCEPTED + REFUSED if is_valid(t)] == ACCEPTED


@pytest.mark.parametrize("request_model", ["AskRequest", "SearchRequest"])
def test_the_request_schemas_carry_the_pattern(request_model):
    from cpqa.serving import api
    from cpqa.serving.contract import question_pattern

    question = getattr(api, request_model).model_json_schema()["properties"]["question"]
    assert question["pattern"] == question_pattern() and "letter" in question["description"]
