"""PubMed Boolean query syntax -> AST (the offline twin of what esearch accepts).

Operators AND, OR, NOT (upper case, as PubMed requires) bind strictly left to right with equal
precedence, so ``a OR b AND c`` means ``(a OR b) AND c``; adjacent terms without an operator are ANDed.
A run of bare words is one unit, as on PubMed: followed by a tag it is one phrase in that field
(``breast cancer[tiab]``); untagged, its words are ANDed over all fields (``lung OR breast cancer`` is
``lung OR (breast AND cancer)``). ``*`` truncates the end of a term or phrase. ``[dp]`` takes a year or
date, or a range ``2015:2024[dp]``. Positions in errors are 0-based character offsets into the query;
deep nesting and very long queries are errors too, never crashes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

# Field tag (lower case, as written between brackets) -> canonical field.
FIELD_TAGS = {
    "tiab": "tiab",
    "title/abstract": "tiab",
    "ti": "ti",
    "title": "ti",
    "ab": "ab",
    "abstract": "ab",
    "mh": "mh",
    "mesh": "mh",
    "mesh terms": "mh",
    "mh:noexp": "mh",
    "mesh terms:noexp": "mh",
    "majr": "majr",
    "mesh major topic": "majr",
    "majr:noexp": "majr",
    "mesh major topic:noexp": "majr",
    "pt": "pt",
    "publication type": "pt",
    "dp": "dp",
    "pdat": "dp",
    "date - publication": "dp",
    "publication date": "dp",
    "tw": "tw",
    "text word": "tw",
    "text words": "tw",
    "ot": "ot",
    "other term": "ot",
    "keyword": "ot",
    "all": "all",
    "all fields": "all",
}
OPERATORS = ("AND", "OR", "NOT")
MAX_TOKENS = 2000
MAX_DEPTH = 24  # FTS5's own expression parser overflows not far beyond this
_DATE = re.compile(r"(\d{4})(?:[/-](\d{1,2})(?:[/-](\d{1,2}))?)?")
_SPECIAL = set('()[]"')
_UNSAFE = re.compile(r'["\[\]()*]')


class BooleanQueryError(ValueError):
    """A malformed query; ``position`` is the 0-based character offset of the problem."""

    def __init__(self, message: str, position: int, query: str = ""):
        self.position = position
        self.query = query
        super().__init__(f"{message} at position {position}")


@dataclass(frozen=True)
class Term:
    text: str  # words as written (phrase text for quoted or tagged runs), without the '*'
    field: str = "all"
    prefix: bool = False  # truncated with '*'
    position: int = 0


@dataclass(frozen=True)
class DateRange:
    start: str  # "YYYY", "YYYY/MM" or "YYYY/MM/DD"
    end: str
    position: int = 0


@dataclass(frozen=True)
class BoolOp:
    op: str  # "AND" | "OR" | "NOT"
    left: "Node"
    right: "Node"


Node = Union[Term, DateRange, BoolOp]


@dataclass(frozen=True)
class _Token:
    kind: str  # "word", "phrase", "tag", "op", "(", ")"
    value: str
    pos: int
    prefix: bool = False


def _tokenize(query: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(query)
    while i < n:
        ch = query[i]
        if ch.isspace():
            i += 1
        elif ch in "()":
            tokens.append(_Token(ch, ch, i))
            i += 1
        elif ch == '"':
            end = query.find('"', i + 1)
            if end < 0:
                raise BooleanQueryError("unterminated quoted phrase", i, query)
            prefix = end + 1 < n and query[end + 1] == "*"
            tokens.append(_Token("phrase", query[i + 1 : end], i, prefix))
            i = end + 2 if prefix else end + 1
        elif ch == "[":
            end = query.find("]", i + 1)
            if end < 0:
                raise BooleanQueryError("unterminated field tag", i, query)
            tag = " ".join(query[i + 1 : end].lower().split())
            if tag not in FIELD_TAGS:
                raise BooleanQueryError(f"unknown field tag [{query[i + 1 : end]}]", i, query)
            tokens.append(_Token("tag", FIELD_TAGS[tag], i))
            i = end + 1
        elif ch == "]":
            raise BooleanQueryError("']' without '['", i, query)
        else:
            start = i
            while i < n and not query[i].isspace() and query[i] not in _SPECIAL:
                i += 1
            word = query[start:i]
            if word in OPERATORS:
                tokens.append(_Token("op", word, start))
            else:
                prefix = word.endswith("*")
                word = word.rstrip("*") if prefix else word
                if "*" in word:
                    raise BooleanQueryError(
                        "truncation '*' is only allowed at the end of a term", start + word.index("*"), query
                    )
                tokens.append(_Token("word", word, start, prefix))
    return tokens


class _Parser:
    def __init__(self, query: str):
        self.query = query
        self.tokens = _tokenize(query)
        self.i = 0
        self.depth = 0  # parentheses plus changes of operator along a chain: the AST's nesting
        if len(self.tokens) > MAX_TOKENS:
            raise self.error(f"query too long (more than {MAX_TOKENS} words and operators)", self.tokens[MAX_TOKENS])

    def peek(self) -> _Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def error(self, message: str, token: _Token | None = None) -> BooleanQueryError:
        pos = token.pos if token is not None else len(self.query)
        return BooleanQueryError(message, pos, self.query)

    def parse(self) -> Node:
        if not self.tokens:
            raise self.error("empty query")
        node = self.expression()
        token = self.peek()
        if token is not None:
            raise self.error("unbalanced ')'" if token.kind == ")" else f"unexpected {token.value!r}", token)
        return node

    def expression(self) -> Node:
        base, last_op = self.depth, None
        node = self.operand()
        while (token := self.peek()) is not None and token.kind != ")":
            op = token.value if token.kind == "op" else "AND"  # adjacent terms: implicit AND
            if last_op is not None and op != last_op:
                self.deeper(token)
            last_op = op
            if token.kind == "op":
                self.i += 1
                nxt = self.peek()
                if nxt is None or nxt.kind in ("op", ")"):
                    raise self.error(f"expected a term after {token.value}", nxt)
            node = BoolOp(op, node, self.operand())
        self.depth = base
        return node

    def deeper(self, token: _Token) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(
                f"query nested too deeply (more than {MAX_DEPTH} levels of parentheses or operator changes)", token
            )

    def operand(self) -> Node:
        token = self.peek()
        if token is None:
            raise self.error("expected a term")
        if token.kind == "(":
            self.i += 1
            if (nxt := self.peek()) is not None and nxt.kind == ")":
                raise self.error("empty parentheses", nxt)
            self.deeper(token)
            node = self.expression()
            self.depth -= 1
            close = self.peek()
            if close is None or close.kind != ")":
                raise self.error("missing ')' for '('", token)
            self.i += 1
            if (after := self.peek()) is not None and after.kind == "tag":
                raise self.error("a field tag must follow a term, not a parenthesised group", after)
            return node
        if token.kind == "op":
            raise self.error(f"{token.value} needs a term before it", token)
        if token.kind == "tag":
            raise self.error("field tag without a term", token)
        if token.kind == ")":
            raise self.error("unbalanced ')'", token)
        return self.term_group()

    def term_group(self) -> Node:
        first = self.tokens[self.i]
        if first.kind == "phrase":
            self.i += 1
            group = [first]
        else:
            group = []
            while (t := self.peek()) is not None and t.kind == "word":
                group.append(t)
                self.i += 1
        tag = self.peek()
        if tag is not None and tag.kind == "tag":
            self.i += 1
            if tag.value == "dp":  # "cancer 2020[dp]": the date is the last word only
                date = self.date(group[-1:])
                return self.words(group[:-1], date) if len(group) > 1 else date
            return self.phrase(group, tag.value)
        if first.kind == "phrase":
            return self.phrase(group, "all")
        return self.words(group)

    def words(self, group: list[_Token], last: Node | None = None) -> Node:
        """Bare words over all fields, ANDed left to right (punctuation-only words are dropped)."""
        nodes: list[Node] = [Term(w.value, "all", w.prefix, w.pos) for w in group if any(c.isalnum() for c in w.value)]
        if last is not None:
            nodes.append(last)
        if not nodes:
            raise self.error("term has no searchable characters", group[0])
        node = nodes[0]
        for other in nodes[1:]:
            node = BoolOp("AND", node, other)
        return node

    def phrase(self, group: list[_Token], field: str) -> Term:
        for w in group[:-1]:
            if w.prefix:
                raise self.error("truncation '*' is only allowed at the end of a phrase", w)
        text = " ".join(" ".join(w.value for w in group).split())
        if not any(c.isalnum() for c in text):
            raise self.error("term has no searchable characters", group[0])
        return Term(text, field, group[-1].prefix, group[0].pos)

    def date(self, group: list[_Token]) -> DateRange:
        """``2015[dp]``, ``2015:2024[dp]``, ``2015/01/01:2020/06[dp]`` and ``"2015"[dp] : "2024"[dp]``."""
        value = " ".join(w.value for w in group)
        start, sep, end = value.partition(":")
        if not sep and (colon := self.peek()) is not None and colon.kind == "word" and colon.value == ":":
            self.i += 1
            upper = [t for t in self.tokens[self.i : self.i + 2]]
            if (
                len(upper) < 2
                or upper[0].kind not in ("word", "phrase")
                or upper[1].kind != "tag"
                or upper[1].value != "dp"
            ):
                raise self.error("expected a date with [dp] after ':'", colon)
            self.i += 2
            end = upper[0].value
        elif not sep:
            end = start
        first = self.check_date(start.strip(), group[0].pos, self.query)
        last = self.check_date(end.strip(), group[0].pos, self.query)
        low, high = sorted((first, last))
        return DateRange(low, high, group[0].pos)

    @staticmethod
    def check_date(value: str, position: int, query: str) -> str:
        match = _DATE.fullmatch(value)
        if (
            not match
            or (match.group(2) and not 1 <= int(match.group(2)) <= 12)
            or (match.group(3) and not 1 <= int(match.group(3)) <= 31)
        ):
            raise BooleanQueryError(
                f"invalid date {value!r} (use YYYY, YYYY/MM, YYYY/MM/DD or a range A:B)", position, query
            )
        return "/".join(p if i == 0 else f"{int(p):02d}" for i, p in enumerate(match.groups()) if p)


def parse(query: str) -> Node:
    """The query's AST; raises ``BooleanQueryError`` with the position of the first problem."""
    return _Parser(query).parse()


def chain(node: BoolOp) -> list[Node]:
    """The operands of the left-to-right chain of ``node.op`` that ``node`` ends: ``a OR b OR c`` ->
    [a, b, c] (``a NOT b NOT c`` -> [a, b, c], meaning a without b and without c)."""
    items: list[Node] = []
    current: Node = node
    while isinstance(current, BoolOp) and current.op == node.op:
        items.append(current.right)
        current = current.left
    items.append(current)
    return items[::-1]


def to_query(node: Node) -> str:
    """The canonical form of an AST: every chain of one operator parenthesised, every term tagged."""
    if isinstance(node, Term):
        return f'"{node.text}"{"*" if node.prefix else ""}[{node.field}]'
    if isinstance(node, DateRange):
        return f"{node.start}[dp]" if node.start == node.end else f"{node.start}:{node.end}[dp]"
    return "(" + f" {node.op} ".join(to_query(item) for item in chain(node)) + ")"


def parse_date(value: str) -> str:
    """A ``YYYY[/MM[/DD]]`` date (``-`` separators too) normalised to ``YYYY/MM/DD`` precision as given;
    raises ``BooleanQueryError`` otherwise (for esearch's mindate / maxdate)."""
    return _Parser.check_date(value.strip(), 0, value)


def validate(query: str) -> str:
    """The query's canonical form if it parses; raises ``BooleanQueryError`` otherwise."""
    return to_query(parse(query))


def quote_term(text: str) -> str:
    """User text as one safe quoted phrase: quotes, brackets, parentheses and '*' are removed."""
    cleaned = " ".join(_UNSAFE.sub(" ", text).split())
    if not any(c.isalnum() for c in cleaned):
        raise BooleanQueryError("term has no searchable characters", 0, text)
    return f'"{cleaned}"'
