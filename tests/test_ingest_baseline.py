"""``cpqa ingest pubmed --from-dir``: NCBI's baseline and update files in order, deletions applied, resumable, and
stopped at the first file that fails (so no update is applied out of order). Real records from the shared sample."""

from __future__ import annotations

import gzip
import json

import pytest
from typer.testing import CliRunner

from cpqa.sources.ncbi.pubmed_xml import iter_pubmed_records
from cpqa.sources.store import Store
from ingestion.cli import ingest_app
from ingestion.pubmed import baseline_files
from conftest import shared

HEAD = b'<?xml version="1.0" ?>\n<PubmedArticleSet>\n'


@pytest.fixture(scope="module")
def records() -> list[tuple[str, bytes]]:
    found = []
    for article, raw in iter_pubmed_records(shared("corpus", "pubmed_sample.xml.gz")):
        found.append((article.pmid, raw))
        if len(found) == 30:
            return found


def write(path, raws: list[bytes], deleted: list[str] = ()) -> None:
    body = b"\n".join(raws)
    if deleted:
        body += (
            b"<DeleteCitation>"
            + b"".join(b"<PMID Version='1'>%s</PMID>" % p.encode() for p in deleted)
            + b"</DeleteCitation>"
        )
    path.write_bytes(gzip.compress(HEAD + body + b"\n</PubmedArticleSet>\n"))


def ingest(home, folder) -> tuple[int, dict]:
    result = CliRunner().invoke(
        ingest_app, ["pubmed", "--from-dir", str(folder), "--json"], env={"CPQA_HOME": str(home)}
    )
    return result.exit_code, json.loads(result.stdout[result.stdout.index("{") :])


def test_a_baseline_folder_is_loaded_in_order_and_resumes(tmp_path, records):
    folder, home = tmp_path / "baseline", tmp_path / "home"
    folder.mkdir()
    raws = [raw for _, raw in records]
    pmids = [pmid for pmid, _ in records]
    changed = raws[3].replace(b"<ArticleTitle>", b"<ArticleTitle>Revised: ", 1)
    write(folder / "pubmed25n0001.xml.gz", raws[:10])
    write(folder / "pubmed25n0002.xml.gz", raws[10:20] + [changed], deleted=[pmids[0], pmids[12]])
    write(folder / "pubmed25n0010.xml.gz", raws[20:30])
    assert [p.name for p in baseline_files(folder)] == [
        "pubmed25n0001.xml.gz",
        "pubmed25n0002.xml.gz",
        "pubmed25n0010.xml.gz",
    ]
    code, first = ingest(home, folder)
    assert code == 0 and (first["added"], first["updated"], first["deleted"]) == (30, 1, 2)
    assert first["store_records"] == 28 and first["files_already_done"] == 0
    with Store(home / "store.sqlite") as store:
        assert store.get(pmids[0]) is None and store.get(pmids[12]) is None
        assert store.get(pmids[3]).title.startswith("Revised: ")
    code, again = ingest(home, folder)  # nothing is read twice
    assert code == 0 and again["files_already_done"] == 3 and again["added"] == again["updated"] == 0
    write(folder / "pubmed25n0011.xml.gz", [raws[0]])  # the next daily update: only it is read
    code, update = ingest(home, folder)
    assert code == 0 and update["files_already_done"] == 3 and update["added"] == 1


def test_the_first_failing_file_stops_the_run_and_the_next_run_resumes_there(tmp_path, records):
    folder, home = tmp_path / "baseline", tmp_path / "home"
    folder.mkdir()
    raws = [raw for _, raw in records]
    write(folder / "pubmed25n0001.xml.gz", raws[:10])
    whole = gzip.compress(HEAD + b"\n".join(raws[10:20]) + b"\n</PubmedArticleSet>\n")
    (folder / "pubmed25n0002.xml.gz").write_bytes(whole[: len(whole) // 2])  # a download cut short
    write(folder / "pubmed25n0003.xml.gz", raws[20:30])
    code, cut = ingest(home, folder)
    assert code == 1 and cut["files_skipped"] == [str(folder / "pubmed25n0002.xml.gz")]
    assert cut["files_waiting"] == ["pubmed25n0003.xml.gz"]  # not applied before the file it follows
    with Store(home / "store.sqlite") as store:
        assert store.get(records[25][0]) is None
    (folder / "pubmed25n0002.xml.gz").write_bytes(whole)  # downloaded again
    code, resumed = ingest(home, folder)
    assert code == 0 and resumed["files_already_done"] == 1 and resumed["store_records"] == 30


def test_from_dir_and_files_are_one_or_the_other(tmp_path):
    runner = CliRunner()
    both = runner.invoke(ingest_app, ["pubmed", "x.xml", "--from-dir", str(tmp_path)], env={"CPQA_HOME": str(tmp_path)})
    neither = runner.invoke(ingest_app, ["pubmed"], env={"CPQA_HOME": str(tmp_path)})
    missing = runner.invoke(
        ingest_app, ["pubmed", "--from-dir", str(tmp_path / "nope")], env={"CPQA_HOME": str(tmp_path)}
    )
    assert both.exit_code == neither.exit_code == missing.exit_code == 2
    assert "not a folder" in missing.output
