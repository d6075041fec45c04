"""Compile a Boolean AST (``cpqa.sources.boolean``) into SQL over the store's FTS5 index.

User text never becomes SQL: FTS5 expressions are bound as parameters and every term inside them
is a quoted FTS5 string (quotes doubled), so FTS5 operators in user text are just words. Subtrees made
only of text terms become one FTS5 MATCH expression (fully parenthesised, because FTS5's own
precedence differs from PubMed's left-to-right rule); date ranges become ``dp_key`` range scans
combined with INTERSECT / UNION / EXCEPT."""

from __future__ import annotations

from dataclasses import dataclass, field

from cpqa.sources.boolean import BoolOp, DateRange, Node, Term, chain, parse_date

FTS_COLUMNS = ("title", "abstract", "keywords", "mesh", "majr", "pt")
BM25_WEIGHTS = (4.0, 1.0, 1.0, 2.0, 1.0, 0.5)  # in FTS_COLUMNS order
# Canonical field -> FTS5 columns searched.
FIELD_COLUMNS = {
    "all": ("title", "abstract", "keywords", "mesh", "pt"),
    "tw": ("title", "abstract", "keywords", "mesh", "pt"),
    "tiab": ("title", "abstract", "keywords"),
    "ti": ("title",),
    "ab": ("abstract",),
    "ot": ("keywords",),
    "mh": ("mesh",),
    "majr": ("majr",),
    "pt": ("pt",),
}
# A token between list entries (MeSH descriptors, publication types) so a phrase cannot span two.
SEPARATOR = "xsepx"
_SET_OP = {"AND": "INTERSECT", "OR": "UNION", "NOT": "EXCEPT"}


@dataclass
class CompiledQuery:
    """SQL selecting the matching article ids (``hits``) and an FTS5 expression for BM25 ranking."""

    hits_sql: str
    params: list = field(default_factory=list)
    rank_match: str | None = None  # OR of every non-negated text term; None when there is none
    # Fast path: the query is one FTS5 expression, ANDed with publication-date ranges (dp_key bounds).
    fts_match: str | None = None
    date_ranges: list[tuple[str, str]] = field(default_factory=list)


def date_key(value: str, upper: bool = False) -> str:
    """``YYYY[/MM[/DD]]`` or ``YYYY[-MM[-DD]]`` -> sortable ``YYYYMMDD``; missing parts 00 (or 99 as an upper bound)."""
    parts = value.replace("-", "/").split("/")
    fill = "99" if upper else "00"
    month = f"{int(parts[1]):02d}" if len(parts) > 1 and parts[1] else fill
    day = f"{int(parts[2]):02d}" if len(parts) > 2 and parts[2] else fill
    return f"{parts[0]}{month}{day}"


def fts_term(term: Term) -> str:
    """One FTS5 phrase with its column filter; the text is always a quoted FTS5 string."""
    quoted = '"' + term.text.replace('"', '""') + '"'
    columns = FIELD_COLUMNS[term.field]
    return "{" + " ".join(columns) + "} : " + quoted + (" *" if term.prefix else "")


def _text_only(node: Node) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, DateRange):
            return False
        if isinstance(current, BoolOp):
            stack += [current.left, current.right]
    return True


def to_fts(node: Node) -> str:
    """A date-free subtree as one FTS5 expression; chains stay flat so FTS5's parser stack stays shallow."""
    if isinstance(node, Term):
        return fts_term(node)
    if isinstance(node, DateRange):
        raise ValueError("date ranges are not FTS5 expressions")
    parts = [to_fts(item) for item in chain(node)]
    if node.op == "NOT":  # a NOT b NOT c == a NOT (b OR c)
        rest = parts[1] if len(parts) == 2 else "(" + " OR ".join(parts[1:]) + ")"
        return f"({parts[0]} NOT {rest})"
    return "(" + f" {node.op} ".join(parts) + ")"


def positive_terms(node: Node, negated_too: bool = False) -> list[Term]:
    """Text terms that count for ranking: every one not on the right of a NOT (``negated_too``: every one)."""
    found: list[Term] = []
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        current, negated = stack.pop()
        if isinstance(current, Term):
            if negated_too or not negated:
                found.append(current)
        elif isinstance(current, BoolOp):
            stack += [(current.right, negated or current.op == "NOT"), (current.left, negated)]
    return found


def _set_sql(node: Node, ctes: list[str], params: list) -> str:
    """Add a CTE per set operation (a flat WITH list, so SQLite's parser never nests deeply) and return
    the name of the one holding ``node``'s article ids. Parameters are appended in CTE order."""
    if _text_only(node):
        params.append(to_fts(node))
        sql = "SELECT rowid FROM articles_fts WHERE articles_fts MATCH ?"
    elif isinstance(node, DateRange):
        params += [date_key(node.start), date_key(node.end, upper=True)]
        sql = "SELECT id FROM articles WHERE dp_key BETWEEN ? AND ? AND pmid IS NOT NULL"
    else:
        assert isinstance(node, BoolOp)
        items = chain(node)
        head, rest = (items[:1], items[1:]) if node.op == "NOT" else ([], items)
        # Text operands of one chain go to FTS5 as one expression (ORed when they are subtracted).
        text = [i for i in rest if _text_only(i)]
        names = [_set_sql(m, ctes, params) for m in head + [i for i in rest if not _text_only(i)]]
        if text:
            joiner = " OR " if node.op == "NOT" else f" {node.op} "
            params.append(joiner.join(to_fts(t) for t in text))
            names.append(f"s{len(ctes)}")
            ctes.append(f"{names[-1]}(id) AS (SELECT rowid FROM articles_fts WHERE articles_fts MATCH ?)")
        sql = f" {_SET_OP[node.op]} ".join(f"SELECT id FROM {name}" for name in names)
    name = f"s{len(ctes)}"
    ctes.append(f"{name}(id) AS ({sql})")
    return name


def restrict_dates(node: Node, mindate: str | None, maxdate: str | None) -> Node:
    """``node`` ANDed with esearch's ``mindate``..``maxdate`` (publication date), when either is given."""
    if not (mindate or maxdate):
        return node
    low = parse_date(mindate) if mindate else "0000"
    return BoolOp("AND", node, DateRange(low, parse_date(maxdate) if maxdate else "9999"))


def rank_match(node: Node) -> str | None:
    """The FTS5 expression ranking ``node``'s hits: an OR of every text term not on the right of a NOT."""
    terms = positive_terms(node)
    return " OR ".join(fts_term(t) for t in terms) if terms else None


def compile_query(node: Node) -> CompiledQuery:
    """SQL for ``node`` (dates restricted beforehand with ``restrict_dates``)."""
    params: list = []
    ctes: list[str] = []
    root = _set_sql(node, ctes, params)
    hits_sql = f"WITH {', '.join(ctes)} SELECT id FROM {root}"
    compiled = CompiledQuery(hits_sql, params, rank_match(node))
    members = chain(node) if isinstance(node, BoolOp) and node.op == "AND" else [node]
    text = [m for m in members if _text_only(m)]
    ranges = [m for m in members if isinstance(m, DateRange)]
    if text and len(text) + len(ranges) == len(members):  # "text AND dates": filter FTS hits by date
        compiled.fts_match = " AND ".join(to_fts(t) for t in text)
        compiled.date_ranges = [(date_key(r.start), date_key(r.end, upper=True)) for r in ranges]
    return compiled
