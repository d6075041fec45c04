"""The store's two search engines: converting between them, tantivy's consistency with the SQLite rows across a
crash and across processes, and the ingest command's --engine. Search semantics on both engines are pinned in
``test_boolean`` and ``test_store`` (their store fixtures run once per engine)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from cpqa.sources.ncbi.pubmed_xml import iter_pubmed_records
from cpqa.sources.store import Store
from tests.conftest import shared

QUERIES = ["asthma", "budesonide formoterol[ti]", "humans[mh] AND 2018[dp]", "asthm*", "asthma NOT child*"]


def _records():
    records = list(iter_pubmed_records(shared("eutils", "pubmed-29768149.xml")))
    for name in ("pubmed1.xml", "pubmed2.xml", "pubmed4.xml"):
        records += list(iter_pubmed_records(shared("eutils", "biopython_Tests_Entrez", name)))
    return records


def _answers(store: Store) -> dict[str, tuple[int, list[str]]]:
    return {q: (r.count, sorted(r.pmids)) for q in QUERIES for r in [store.search(q, retmax=50)]}


def test_a_store_converts_between_engines_and_keeps_its_answers(tmp_path):
    path = tmp_path / "store.sqlite"
    with Store(path) as store:
        assert store.engine == "fts5"
        store.upsert(_records())
        before = _answers(store)
    assert before["asthma"][0] >= 1
    with Store(path, engine="tantivy") as store:
        assert store.engine == "tantivy" and _answers(store) == before
    with Store(path) as store:  # left out, the engine is the store's own
        assert store.engine == "tantivy" and _answers(store) == before
    with sqlite3.connect(path) as conn:  # converting emptied the FTS5 postings
        assert conn.execute("SELECT count(*) FROM articles_fts WHERE articles_fts MATCH 'asthma'").fetchone()[0] == 0
    with Store(path, engine="fts5") as store:
        assert _answers(store) == before
    with pytest.raises(ValueError, match="unknown search engine 'lucene'"):
        Store(path, engine="lucene")


def test_tantivy_rebuilds_after_a_crash_between_the_two_commits(tmp_path, monkeypatch):
    path = tmp_path / "store.sqlite"
    records = _records()
    with Store(path, engine="tantivy") as store:
        store.upsert(records[1:])

        def crash(conn):  # the rows commit in SQLite, then the process dies before tantivy commits
            raise OSError("power cut")

        monkeypatch.setattr(store._text, "committed", crash)
        with pytest.raises(OSError):
            store.upsert(records[:1])
    monkeypatch.undo()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'tantivy_pending'").fetchone() == ("1",)
    with Store(path) as store:  # the flag is still set: the index is rebuilt from the stored records
        assert store.search("asthma").pmids == ["29768149"]
        assert store.count() == len(records)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'tantivy_pending'").fetchone() == ("0",)


def test_a_store_opened_while_another_writes_does_not_rebuild(tmp_path):
    """``tantivy_pending`` is set while a writer works; a second store opened then (the mirror starting during an
    ingest) sees the writer's lock and leaves the index alone."""
    import tantivy

    from cpqa.sources.tantivy_index import _schema

    path = tmp_path / "store.sqlite"
    with Store(path, engine="tantivy") as store:
        store.upsert(_records())
    held = tantivy.Index(_schema(), str(tmp_path / "store.tantivy")).writer(heap_size=15_000_000, num_threads=1)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'tantivy_pending'")
    with Store(path) as reader:
        assert reader.search("asthma").count == 1
    held.wait_merging_threads()


def test_tantivy_rebuilds_when_its_folder_is_gone(tmp_path):
    import shutil

    path = tmp_path / "store.sqlite"
    with Store(path, engine="tantivy") as store:
        store.upsert(_records())
        before = _answers(store)
    shutil.rmtree(tmp_path / "store.tantivy")
    with Store(path) as store:
        assert _answers(store) == before


def test_a_reader_in_another_process_sees_what_the_writer_committed(tmp_path):
    path = tmp_path / "store.sqlite"
    records = _records()
    reader = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\nfrom cpqa.sources.store import Store\n"
            f"s = Store({str(path)!r}, engine='tantivy')\n"
            "for line in sys.stdin:\n"
            "    print(s.search('asthma').count, flush=True)\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:

        def ask() -> int:
            reader.stdin.write("?\n")
            reader.stdin.flush()
            return int(reader.stdout.readline())

        assert ask() == 0
        with Store(path) as writer:
            writer.upsert(records)
        assert ask() == 1  # the generation moved on: the reader reloaded
        with Store(path) as writer:
            writer.delete(["29768149"])
        assert ask() == 0
    finally:
        reader.stdin.close()
        reader.wait(timeout=30)


def test_a_second_writer_on_one_tantivy_index_is_told_to_wait(tmp_path):
    import tantivy

    from cpqa.sources.tantivy_index import _schema

    path = tmp_path / "store.sqlite"
    records = _records()
    with Store(path, engine="tantivy") as store:
        store.upsert(records[:1])  # an upsert lets go of tantivy's writer lock when it ends
        held = tantivy.Index(_schema(), str(tmp_path / "store.tantivy")).writer(heap_size=15_000_000, num_threads=1)
        with pytest.raises(RuntimeError, match="being written by another process"):
            store.upsert(records[1:])
        assert store.count() == 1  # the refused batch was rolled back in SQLite too
        held.wait_merging_threads()  # the other writer is done
        assert store.upsert(records[1:]).added == len(records) - 1 and store.search("asthma").count == 1


def test_tantivy_scores_exactly_the_records_asked_for(tmp_path):
    with Store(tmp_path / "store.sqlite", engine="tantivy") as store:
        store.upsert(_records())
        found = store.search("asthma OR smoking OR humans[mh]", retmax=20).pmids
        scores = store.score("asthma OR smoking", found + ["0"])
        assert scores and set(scores) <= set(found) and all(v > 0 for v in scores.values())
        assert store.score("2019[dp]", found) == {} and store.score("asthma", []) == {}


def test_ingest_engine_option(tmp_path, monkeypatch):
    from ingestion.cli import ingest_app

    monkeypatch.setenv("CPQA_HOME", str(tmp_path))
    runner = CliRunner()
    source = str(shared("eutils", "pubmed-29768149.xml"))
    result = runner.invoke(ingest_app, ["pubmed", source, "--engine", "tantivy", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["search_engine"] == "tantivy"
    again = runner.invoke(ingest_app, ["pubmed", source, "--json"])
    assert json.loads(again.output)["search_engine"] == "tantivy"  # the store keeps its engine
    bad = runner.invoke(ingest_app, ["pubmed", source, "--engine", "lucene"])
    assert bad.exit_code != 0 and "unknown search engine" in bad.output
