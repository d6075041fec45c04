"""The local store: PubMed / PMC ingestion, idempotent upserts, merging, raw XML, threads, CLI."""

from __future__ import annotations

import gzip
import io
import json
import threading

import pytest
from Bio import Entrez
from typer.testing import CliRunner

from cpqa.sources.ncbi.jats import iter_pmc_records, parse_pmc_xml, render_pmc_article_set
from cpqa.sources.ncbi.pubmed_xml import article_to_pubmed_xml, iter_pubmed_records, render_pubmed_article_set
from cpqa.sources.store import Store
from cpqa.sources.text_index import ENGINES
from cpqa.types import AbstractSection, Article, MeshHeading
from ingestion.pmc import ingest_pmc_files
from ingestion.pubmed import ingest_pubmed_files
from tests.conftest import shared


@pytest.fixture(params=ENGINES)
def store(tmp_path, request):
    with Store(tmp_path / "store.sqlite", engine=request.param) as s:
        yield s


def _pubmed_twin(pmid: str, title: str) -> tuple[Article, bytes]:
    """A PubMed-side record (with MeSH) for a PMID that also has a PMC full text in ../shared."""
    article = Article(
        pmid=pmid,
        title=title,
        journal="Ann Oncol",
        pub_date="2013-03",
        year=2013,
        abstract_sections=[AbstractSection(label="BACKGROUND", text="Stage at diagnosis varies.")],
        mesh=[MeshHeading(descriptor="Neoplasm Staging", major=True)],
        publication_types=["Journal Article"],
    )
    return article, article_to_pubmed_xml(article)


def test_sample_home_fixture_holds_the_sample(sample_settings):
    with Store(sample_settings.store_path) as s:
        assert s.count() == 4170 and len(s.pmids()) == 4170
        a = s.get("23402")
        assert a.title.startswith("Glucose 6-phosphate dehydrogenase variants")
        assert s.search("cancer[tiab]").count > 1000


@pytest.mark.slow
def test_ingest_sample_twice_changes_nothing(store):
    path = shared("corpus", "pubmed_sample.xml.gz")
    first = ingest_pubmed_files(store, [path])
    assert (first.added, first.updated, first.skipped) == (4170, 0, [])
    second = ingest_pubmed_files(store, [path])
    assert (second.added, second.updated, second.unchanged, second.skipped) == (0, 0, 4170, [])
    assert store.count() == 4170 and sum(1 for _ in store.iter_articles(batch_size=999)) == 4170


def test_upsert_updates_changed_records_and_reindexes(store):
    records = list(iter_pubmed_records(shared("eutils", "pubmed-29768149.xml")))
    assert store.upsert(records).added == 1
    assert store.search("budesonide formoterol[ti]").pmids == ["29768149"]
    article, raw = records[0]
    changed = raw.replace(b"Inhaled Combined Budesonide-Formoterol", b"Inhaled Tiotropium")
    summary = store.upsert(
        [(article.model_copy(update={"title": "Inhaled Tiotropium as Needed in Mild Asthma."}), changed)]
    )
    assert (summary.added, summary.updated, summary.unchanged) == (0, 1, 0)
    assert store.search("budesonide formoterol[ti]").count == 0  # the old index entry is gone
    assert store.search("tiotropium[ti]").pmids == ["29768149"]
    assert store.raw_xml(["29768149"])["29768149"] == changed
    assert store.upsert([(article, None)]).unchanged == 1  # a record without XML never replaces one with XML


def test_a_record_s_change_time_moves_only_when_its_text_does(store, monkeypatch):
    """Derived indexes re-read what changed since they were built (``last_update``, ``updated_since``): a record read
    again under a new cleaning version with the same text keeps its time; a revised abstract moves it."""
    article = Article(pmid="7", title="Tamoxifen and recurrence", abstract_sections=[AbstractSection(text="Fewer.")])
    store.upsert([(article, None)])
    first = store.last_update()
    monkeypatch.setattr("cpqa.sources.store.CLEANING", "clean-next")
    assert store.upsert([(article, None)]).updated == 1  # the digest changed, the text did not
    assert store.last_update() == first and store.updated_since(first) == set()
    revised = article.model_copy(update={"abstract_sections": [AbstractSection(text="Fewer recurrences.")]})
    store.upsert([(revised, None)])
    assert store.last_update() > first and store.updated_since(first) == {"7"}


def test_duplicates_within_a_batch_and_missing_pmid(store):
    records = list(iter_pubmed_records(shared("eutils", "biopython_Tests_Entrez", "pubmed1.xml")))
    summary = store.upsert(records + records + [(Article(title="no id"), None)])
    assert (summary.added, summary.unchanged) == (2, 2)
    assert summary.skipped == [("no id", "no PMID")]
    assert store.count() == 2


def test_pmc_ingest_sets_ids_type_and_full_text(store):
    paths = [shared("corpus", "pmc", name) for name in ("PMC2775679.xml", "mds526.nxml")]
    summary = ingest_pmc_files(store, paths)
    assert summary.added == 2
    a = store.get("19920987")
    assert a.pmcid == "PMC2775679" and a.article_type == "review-article" and a.has_full_text
    assert store.get_by_pmcid("PMC3574550").pmid == "23149571"
    assert store.get_by_pmcid("3574550").pmid == "23149571"
    raw = store.raw_pmc_xml(["PMC2775679"])["PMC2775679"]
    assert parse_pmc_xml(render_pmc_article_set([raw]))[0].pmid == "19920987"
    assert store.search("poisson random field[ti]").pmids == ["19920987"]
    assert ingest_pmc_files(store, paths).unchanged == 2


def test_pmc_merges_into_the_pubmed_row(store):
    store.upsert([_pubmed_twin("23149571", "Socio-demographic inequalities in stage of cancer diagnosis")])
    summary = ingest_pmc_files(store, [shared("corpus", "pmc", "mds526.nxml")])
    assert (summary.added, summary.updated) == (0, 1)
    assert store.count() == 1
    a = store.get("23149571")
    assert a.pmcid == "PMC3574550" and a.has_full_text and a.article_type == "research-article"
    assert [h.descriptor for h in a.mesh] == ["Neoplasm Staging"]  # PubMed metadata kept
    assert a.abstract_sections[0].label == "BACKGROUND"
    assert b"<PubmedArticle>" in store.raw_xml(["23149571"])["23149571"]
    assert "23149571" in store.search('"neoplasm staging"[majr]').pmids


def test_pubmed_after_pmc_merges_too(store):
    ingest_pmc_files(store, [shared("corpus", "pmc", "mds526.nxml")])
    summary = store.upsert([_pubmed_twin("23149571", "Socio-demographic inequalities")])
    assert (summary.added, summary.updated, store.count()) == (0, 1, 1)
    a = store.get("23149571")
    assert a.has_full_text and a.mesh and a.title == "Socio-demographic inequalities"


def test_pmc_article_without_pmid_is_kept_by_pmcid(store):
    _, raw = next(iter_pmc_records(shared("corpus", "pmc", "PMC2900587.xml")))
    bare = raw.replace(b'<article-id pub-id-type="pmid">19468791</article-id>', b"")
    summary = store.upsert(iter_pmc_records(bare))
    assert summary.added == 1 and store.count() == 1 and store.pmids() == []
    assert store.get_by_pmcid("PMC2900587").has_full_text
    assert store.search("pancreatic").count == 0  # search returns PMIDs only
    ingest_pmc_files(store, [shared("corpus", "pmc", "PMC2900587.xml")])  # now with its PMID: same row
    assert store.count() == 1 and store.search("pancreatic adenocarcinoma[ti]").pmids == ["19468791"]


def test_raw_xml_renders_to_a_valid_efetch_answer(sample_settings):
    with Store(sample_settings.store_path) as s:
        pmids = s.search("cancer", retmax=50).pmids
        raw = s.raw_xml(pmids)
    assert set(raw) == set(pmids)
    parsed = Entrez.read(io.BytesIO(render_pubmed_article_set([raw[p] for p in pmids])), validate=True)
    assert [str(a["MedlineCitation"]["PMID"]) for a in parsed["PubmedArticle"]] == pmids


def test_raw_xml_for_records_without_xml(store):
    store.upsert([(Article(pmid="777", title="Chunk only", year=2020), None)])
    xml = store.raw_xml(["777", "888"])
    assert list(xml) == ["777"] and b"<ArticleTitle>Chunk only</ArticleTitle>" in xml["777"]


def test_threads_share_one_store(store):
    store.upsert(iter_pubmed_records(shared("eutils", "pubmed-29768149.xml")))
    records = []
    for name in ("pubmed1.xml", "pubmed2.xml", "pubmed4.xml", "pubmed5.xml"):
        records += list(iter_pubmed_records(shared("eutils", "biopython_Tests_Entrez", name)))
    errors: list[BaseException] = []

    def reader():
        try:
            for _ in range(30):
                assert store.search("asthma").pmids == ["29768149"]
                assert store.get("29768149").doi == "10.1056/NEJMoa1715274"
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def writer(chunk):
        try:
            store.upsert(chunk)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(4)]
    threads += [threading.Thread(target=writer, args=([r],)) for r in records]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and store.count() == 1 + len(records)
    assert len(store._idle) <= 8  # connections are pooled, not one per (short-lived) thread


def test_ingest_cli_reports_summary(tmp_path, monkeypatch):
    from ingestion.cli import ingest_app

    monkeypatch.setenv("CPQA_HOME", str(tmp_path / "home"))
    runner = CliRunner()
    pubmed = shared("eutils", "biopython_Tests_Entrez", "pubmed4.xml")
    result = runner.invoke(ingest_app, ["pubmed", str(pubmed), str(tmp_path / "missing.xml"), "--json"])
    assert result.exit_code == 1, result.output  # a file was not loaded: the records of the others still were
    payload = json.loads(result.stdout)
    assert payload["added"] == 1 and payload["skipped_reasons"] == [[str(tmp_path / "missing.xml"), "file not found"]]
    assert payload["files_skipped"] == [str(tmp_path / "missing.xml")] and "1 of 2 file(s) not loaded" in result.stderr
    result = runner.invoke(ingest_app, ["pmc", str(shared("corpus", "pmc", "PMC2775679.xml"))])
    assert result.exit_code == 0 and "added 1" in result.output
    esearch = shared("eutils", "biopython_Tests_Entrez", "esearch1.xml")
    result = runner.invoke(ingest_app, ["pubmed", str(esearch), "--json"])
    assert result.exit_code == 1
    assert "unexpected root element <eSearchResult>" in json.loads(result.stdout)["skipped_reasons"][0][1]


@pytest.mark.parametrize(
    "content", [b"", b"<PubmedArticleSet><PubmedArticle>", b"not xml at all"], ids=["empty", "truncated", "junk"]
)
def test_ingest_exits_non_zero_when_a_file_is_skipped(tmp_path, monkeypatch, content):
    from ingestion.cli import ingest_app

    monkeypatch.setenv("CPQA_HOME", str(tmp_path / "home"))
    bad = tmp_path / "bad.xml"
    bad.write_bytes(content)
    result = CliRunner().invoke(ingest_app, ["pubmed", str(bad)])
    assert result.exit_code == 1 and "skipped" in result.stdout and "not loaded" in result.stderr


def test_update_file_deletions(store, tmp_path):
    ingest_pubmed_files(store, [shared("eutils", "biopython_Tests_Entrez", "pubmed1.xml")])
    ingest_pmc_files(store, [shared("corpus", "pmc", "mds526.nxml")])
    update = tmp_path / "pubmed25n1300.xml.gz"
    _, raw = next(iter_pubmed_records(shared("eutils", "pubmed-29768149.xml")))
    update.write_bytes(
        gzip.compress(
            b"<PubmedArticleSet>" + raw + b"<DeleteCitation><PMID Version='1'>9997</PMID>"
            b"<PMID Version='1'>23149571</PMID><PMID Version='1'>1</PMID></DeleteCitation>"
            b"</PubmedArticleSet>"
        )
    )
    summary = ingest_pubmed_files(store, [update])
    assert (summary.added, summary.deleted) == (1, 2)
    assert store.get("9997") is None and store.get_by_pmcid("PMC3574550") is None
    assert sorted(store.pmids()) == ["12091962", "29768149"]
    assert store.search("chromatium").count == 0 and store.search("asthma").pmids == ["29768149"]


def test_closed_store_says_so(tmp_path):
    s = Store(tmp_path / "store.sqlite")
    s.close()
    with pytest.raises(RuntimeError, match="closed"):
        s.count()


def test_fts_index_rebuilds_when_its_version_changes(tmp_path):
    path = tmp_path / "store.sqlite"
    with Store(path) as s:
        s.upsert(iter_pubmed_records(shared("eutils", "pubmed-29768149.xml")))
        before = s.search("asthma").pmids
        with s._transaction() as conn:
            conn.execute("INSERT INTO articles_fts(articles_fts) VALUES('delete-all')")
            conn.execute("UPDATE meta SET value = 'old' WHERE key = 'fts_version'")
        assert s.search("asthma").count == 0
    with Store(path) as s:
        assert s.search("asthma").pmids == before == ["29768149"]


def test_a_damaged_store_gives_one_line_naming_the_file_and_the_fix(tmp_path):
    import os
    import subprocess
    import sys

    (tmp_path / "store.sqlite").write_bytes(os.urandom(50_000))
    env = {**os.environ, "CPQA_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    for command in (["ask", "tamoxifen side effects"], ["ingest", "pubmed", str(tmp_path / "none.xml")]):
        done = subprocess.run(
            [sys.executable, "-m", "cpqa.cli", *command], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
        line = done.stderr.strip().splitlines()[-1]
        assert str(tmp_path / "store.sqlite") in line and "is damaged" in line and "cpqa ingest pubmed" in line
