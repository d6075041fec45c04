"""PubMed Boolean syntax: the parser, and its semantics on a small hand-made store."""

from __future__ import annotations

import pytest

from cpqa.sources.boolean import BooleanQueryError, BoolOp, DateRange, Term, parse, quote_term, validate
from cpqa.sources.store import Store
from cpqa.sources.text_index import ENGINES
from cpqa.types import AbstractSection, Article, MeshHeading, MeshQualifier


def _article(pmid, title, abstract, mesh, pt, date=None, keywords=()):
    return Article(
        pmid=pmid,
        title=title,
        abstract_sections=[AbstractSection(text=abstract)],
        mesh=[
            MeshHeading(descriptor=d, major=m, qualifiers=[MeshQualifier(name=q, major=True) for q in qs])
            for d, m, qs in mesh
        ],
        publication_types=list(pt),
        pub_date=date,
        year=int(date[:4]) if date else None,
        keywords=list(keywords),
    )


DOCS = [
    _article(
        "1",
        "Breast cancer chemotherapy outcomes",
        "Adjuvant chemotherapy improved survival.",
        [("Breast Neoplasms", True, ()), ("Humans", False, ()), ("Female", False, ())],
        ["Journal Article", "Randomized Controlled Trial"],
        "2015-03",
    ),
    _article(
        "2",
        "Lung cancer screening",
        "Low-dose CT screening reduces mortality.",
        [("Lung Neoplasms", False, ("diagnosis",)), ("Humans", False, ())],
        ["Review"],
        "2018",
    ),
    _article(
        "3",
        "Breast reconstruction after mastectomy",
        "Patient satisfaction with cancer surgery.",
        [("Mammaplasty", True, ()), ("Breast Neoplasms", False, ()), ("Humans", False, ())],
        ["Journal Article"],
        "2020-11-02",
        keywords=["quality of life"],
    ),
    _article(
        "4",
        "Cancer-related fatigue in survivors",
        "Exercise reduces fatigue. Fatigue is common.",
        [("Fatigue", True, ()), ("Neoplasms", False, ()), ("Humans", False, ())],
        ["Systematic Review", "Review"],
        "2022",
    ),
    _article(
        "5",
        "Mouse models of carcinogenesis",
        "Carcinogens induce tumours in mice.",
        [("Carcinogenesis", False, ()), ("Mice", False, ()), ("Animals", False, ())],
        ["Journal Article"],
    ),
    _article(
        "6",
        "Sleep quality in shift workers",
        "Shift work causes fatigue and poor sleep.",
        [("Sleep", True, ()), ("Humans", False, ())],
        ["Journal Article"],
        "2021",
    ),
]


@pytest.fixture(scope="module", params=ENGINES)
def store(tmp_path_factory, request):
    """The same semantics from both search engines."""
    with Store(tmp_path_factory.mktemp("boolean") / "store.sqlite", engine=request.param) as s:
        s.upsert([(a, None) for a in DOCS])
        yield s


def hits(store, query, **kw) -> set[str]:
    result = store.search(query, retmax=100, **kw)
    assert result.count == len(result.pmids)
    return set(result.pmids)


# ------------------------------------------------------------------ parser
def test_left_to_right_precedence_ast():
    assert parse("a OR b AND c") == BoolOp(
        "AND", BoolOp("OR", Term("a", position=0), Term("b", position=5)), Term("c", position=11)
    )
    assert validate("a NOT b OR c") == '(("a"[all] NOT "b"[all]) OR "c"[all])'
    assert validate("a OR (b AND c)") == '("a"[all] OR ("b"[all] AND "c"[all]))'


def test_tags_phrases_truncation_and_dates():
    assert parse("breast cancer[tiab]") == Term("breast cancer", "tiab", False, 0)
    assert parse('"lung canc"*[ti]') == Term("lung canc", "ti", True, 0)
    assert parse("chemo*") == Term("chemo", "all", True, 0)
    assert parse("2015:2024[dp]") == DateRange("2015", "2024", 0)
    assert parse("2020/1/5[pdat]") == DateRange("2020/01/05", "2020/01/05", 0)
    assert validate('"2015"[Date - Publication] : "2024"[Date - Publication]') == "2015:2024[dp]"
    assert validate("cancer 2020[dp]") == '("cancer"[all] AND 2020[dp])'
    assert validate("x[Title/Abstract] y[MeSH Terms] z[Publication Type] w[tw] v[All Fields] u[majr]") == (
        '("x"[tiab] AND "y"[mh] AND "z"[pt] AND "w"[tw] AND "v"[all] AND "u"[majr])'
    )


@pytest.mark.parametrize(
    "query, position, message",
    [
        ("", 0, "empty query"),
        ("cancer AND", 10, "expected a term after AND"),
        ("AND cancer", 0, "needs a term before it"),
        ("(cancer OR lung", 0, "missing ')'"),
        ("cancer) OR lung", 6, "unbalanced ')'"),
        ('cancer AND "lung', 11, "unterminated quoted phrase"),
        ("cancer[foo]", 6, "unknown field tag"),
        ("cancer[tiab", 6, "unterminated field tag"),
        ("(a OR b)[tiab]", 8, "must follow a term"),
        ("ca*ncer", 2, "only allowed at the end"),
        ("abc[dp]", 0, "invalid date"),
        ("2015/13[dp]", 0, "invalid date"),
        ("a OR OR b", 5, "expected a term after OR"),
        ("a ()", 3, "empty parentheses"),
        ("[tiab]", 0, "field tag without a term"),
    ],
)
def test_errors_name_the_position(query, position, message):
    with pytest.raises(BooleanQueryError) as info:
        parse(query)
    assert info.value.position == position
    assert message in str(info.value) and f"position {position}" in str(info.value)


@pytest.mark.parametrize(
    "query",
    [
        "a OR b AND c",
        'breast cancer[tiab] NOT "x y"*[mh] 2015:2020[dp]',
        "(a OR (b NOT c)) d e[majr]",
        "lung OR breast cancer",
        "x[ot] y[ab] z[ti] w[pt]",
    ],
)
def test_canonical_form_parses_to_the_same_query(query):
    canonical = validate(query)
    assert validate(canonical) == canonical


def test_word_runs_are_one_unit():
    # As on PubMed, adjacent words form one term: "lung OR breast cancer" = lung OR (breast AND cancer).
    assert validate("lung OR breast cancer") == '("lung"[all] OR ("breast"[all] AND "cancer"[all]))'


def test_limits_are_errors_not_crashes():
    with pytest.raises(BooleanQueryError, match="nested too deeply") as info:
        parse("(" * 40 + "a" + ")" * 40)
    assert info.value.position == 24
    alternating = "a" + "".join(f" {'AND' if i % 2 else 'OR'} x{i}" for i in range(40))
    with pytest.raises(BooleanQueryError, match="nested too deeply"):
        parse(alternating)
    with pytest.raises(BooleanQueryError, match="too long"):
        parse(" OR ".join(f"t{i}" for i in range(1500)))


def test_quote_term_makes_one_safe_phrase():
    assert quote_term('breast "cancer" (HER2+) [tiab] risk*') == '"breast cancer HER2+ tiab risk"'
    assert parse(quote_term("a) OR (b")) == Term("a OR b", "all", False, 0)
    with pytest.raises(BooleanQueryError):
        quote_term('"()"')


# ------------------------------------------------------------------ semantics on the store
def test_and_or_not(store):
    assert hits(store, "breast AND chemotherapy") == {"1"}
    assert hits(store, "lung OR fatigue") == {"2", "4", "6"}
    assert hits(store, "cancer NOT breast") == {"2", "4"}
    assert hits(store, "breast cancer") == {"1", "3"}  # untagged words are ANDed
    assert hits(store, "breast cancer chemotherapy") == {"1"}


def test_precedence_is_left_to_right(store):
    assert hits(store, "lung OR breast AND chemotherapy") == {"1"}
    assert hits(store, "lung OR (breast AND chemotherapy)") == {"1", "2"}
    assert hits(store, "cancer NOT breast OR mouse") == {"2", "4", "5"}
    assert hits(store, "mouse OR cancer NOT breast") == {"2", "4", "5"}


def test_phrases_and_truncation(store):
    assert hits(store, '"breast cancer"') == {"1"}
    assert hits(store, "carcino*") == {"5"}
    assert hits(store, "chemo*[ti]") == {"1"}
    assert hits(store, '"lung canc"*') == {"2"}
    assert hits(store, '"quality of life"') == {"3"}  # author keywords are searched too


def test_field_tags(store):
    assert hits(store, "screening[ti]") == {"2"}
    assert hits(store, "survival[ab]") == {"1"}
    assert hits(store, "survival[ti]") == set()
    assert hits(store, "fatigue[tiab]") == {"4", "6"}
    assert hits(store, "mammaplasty[tiab]") == set()
    assert hits(store, "mammaplasty") == {"3"}  # untagged terms search MeSH too
    assert hits(store, "fatigue[tw]") == hits(store, "fatigue[all]") == {"4", "6"}


def test_mesh_and_major_topic(store):
    assert hits(store, '"breast neoplasms"[mh]') == {"1", "3"}
    assert hits(store, "Breast Neoplasms[MeSH Terms]") == {"1", "3"}
    assert hits(store, '"breast neoplasms"[majr]') == {"1"}
    assert hits(store, "neoplasms[mh]") == {"1", "2", "3", "4"}
    assert hits(store, "neoplasms[majr]") == {"1", "2"}  # Lung Neoplasms is major through its qualifier
    assert hits(store, "humans[mh] AND female[mh]") == {"1"}
    assert hits(store, '"humans female"[mh]') == set()  # a phrase never spans two descriptors
    assert hits(store, "animals[mh]") == {"5"}


def test_publication_types(store):
    assert hits(store, "review[pt]") == {"2", "4"}
    assert hits(store, '"systematic review"[pt]') == {"4"}
    assert hits(store, "randomized controlled trial[Publication Type]") == {"1"}
    assert hits(store, "cancer NOT review[pt]") == {"1", "3"}


def test_dates(store):
    assert hits(store, "2015[dp]") == {"1"}
    assert hits(store, "2015:2018[dp]") == {"1", "2"}
    assert hits(store, "2020/11[dp]") == {"3"}
    assert hits(store, "2020/12:2030[dp]") == {"4", "6"}
    assert hits(store, "cancer AND 2016:2030[dp]") == {"2", "3", "4"}
    assert hits(store, "cancer NOT 2016:2030[dp]") == {"1"}
    assert hits(store, "mouse OR 2022[dp]") == {"4", "5"}
    assert hits(store, "cancer", mindate="2019") == {"3", "4"}
    assert hits(store, "cancer", mindate="2015/01/01", maxdate="2018/12/31") == {"1", "2"}


def test_long_chains_and_mixed_dates(store):
    assert hits(store, " OR ".join(["nothing"] * 300 + ["fatigue"])) == {"4", "6"}
    assert hits(store, " OR ".join(f"{y}[dp]" for y in range(1990, 2016))) == {"1"}
    nested = "(" * 20 + "cancer AND 2016:2030[dp]" + ")" * 20 + " NOT lung NOT 2022[dp]"
    assert hits(store, nested) == {"3"}
    assert hits(store, "cancer NOT breast NOT lung") == {"4"}


def test_date_filter_path_agrees_with_set_operations(store):
    # "text AND dates" is answered by filtering FTS hits; adding a NOT forces the general set-operation path.
    fast = store.search("cancer AND 2015:2030[dp]", retmax=10)
    general = store.search("cancer AND 2015:2030[dp] NOT nonexistentword", retmax=10)
    assert fast.pmids == general.pmids and set(fast.pmids) == {"1", "2", "3", "4"}
    assert fast.count == general.count == 4
    assert (
        store.search("cancer", mindate="2016", retmax=10).pmids
        == store.search("cancer NOT nonexistentword", mindate="2016", retmax=10).pmids
    )


def test_bad_date_limits_are_query_errors(store):
    with pytest.raises(BooleanQueryError, match="invalid date"):
        store.search("cancer", mindate="2015/13")
    assert hits(store, "cancer", mindate="2019-01-01") == {"3", "4"}


def test_random_input_never_crashes(store):
    import random

    rng = random.Random(7)
    pieces = [
        "a",
        "cancer",
        "(",
        ")",
        "[",
        "]",
        '"',
        "*",
        ":",
        "AND",
        "OR",
        "NOT",
        "[tiab]",
        "[dp]",
        "2015",
        "2015:2020",
        "[mh]",
        "'",
        ";",
        "{",
        "}",
        "^",
        "-",
        "NEAR",
        " ",
        " ",
        " ",
    ]
    outcomes = {"ok": 0, "error": 0}
    for _ in range(500):
        query = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 20)))
        try:
            store.search(query)
            outcomes["ok"] += 1
        except BooleanQueryError as exc:  # anything else fails the test
            assert 0 <= exc.position <= len(query)
            outcomes["error"] += 1
    assert outcomes["ok"] > 25 and outcomes["error"] > 100


def test_bm25_ranking_count_and_paging(store):
    result = store.search("fatigue", retmax=10)
    assert result.pmids == ["4", "6"] and result.count == 2  # title + twice in abstract beats once
    page = store.search("humans[mh]", retmax=2, retstart=1)
    assert page.count == 5 and len(page.pmids) == 2
    everything = store.search("humans[mh]", retmax=10).pmids
    assert page.pmids == everything[1:3]
    dated = store.search("2015:2030[dp]", retmax=10).pmids  # no text to rank: newest first
    assert dated == ["4", "6", "3", "2", "1"]


def test_user_text_never_reaches_sql(store):
    for query in [
        "'; DROP TABLE articles; --",
        "title:breast",
        "NEAR(breast cancer)",
        "{title}: x",
        "breast^2",
        "a - b",
        "x' OR '1'='1",
    ]:
        store.search(query)  # words, not syntax: no exception, no damage
    assert store.count() == len(DOCS)
    assert hits(store, "NEAR(breast cancer)") == set()  # "near" is a word here, as on PubMed
    with pytest.raises(BooleanQueryError):
        store.search("breast AND (cancer")
