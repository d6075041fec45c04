"""The E-utilities mirror over the local store, and the client against it over HTTP: round trips equal
to the store, NCBI's response shapes (Bio.Entrez validates them), GET and POST, concurrency, caching,
nothing cached from a bad response, and ``cpqa mirror serve``."""

from __future__ import annotations

import io
import re
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from Bio import Entrez

from cpqa.config import get_settings
from cpqa.sources.mirror_server import MirrorServer
from cpqa.sources.ncbi.client import EutilsClient, NCBIError, error_document
from cpqa.sources.ncbi.jats import iter_pmc_records
from cpqa.sources.store import Store
from cpqa.testing.faulty_server import Fault, FaultyServer
from conftest import shared

TERM = "breast cancer AND tamoxifen"


@pytest.fixture(scope="module")
def mirror(sample_settings):
    with MirrorServer(sample_settings.store_path) as server:
        yield server


@pytest.fixture(scope="module")
def sample_store(sample_settings):
    with Store(sample_settings.store_path) as store:
        yield store


def client_settings(url: str, **overrides):
    values = dict(
        cpqa_eutils_url=url,
        cpqa_eutils_rate=0,
        cpqa_http_timeout=5.0,
        cpqa_http_retries=2,
        cpqa_http_backoff=0.01,
        cpqa_http_backoff_max=0.2,
    )
    values.update(overrides)
    return get_settings(**values)


@pytest.fixture
def local(settings):
    """The client's own (empty) store, in the test's fresh home."""
    with Store(settings.store_path) as store:
        yield store


def entrez(url: str, **params) -> dict:
    reply = httpx.get(url, params=params, timeout=10)
    assert reply.status_code == 200, reply.text[:300]
    return Entrez.read(io.BytesIO(reply.content), validate=True)


def test_search_round_trip_equals_the_store(mirror, sample_store, local):
    client = EutilsClient(client_settings(mirror.url), local)
    for kwargs in ({}, {"retmax": 7, "retstart": 3}, {"mindate": "2000", "maxdate": "2012/12/31"}):
        got = client.search(TERM, **kwargs)
        want = sample_store.search(TERM, **kwargs)
        assert got.pmids == want.pmids and got.count == want.count
        assert got.query_translation == want.query_translation
    assert got.count > 0 and client.requests_made == 3


def test_fetch_round_trip_equals_the_store_and_is_cached(mirror, sample_store, local):
    pmids = sample_store.search(TERM, retmax=30).pmids
    client = EutilsClient(client_settings(mirror.url), local)
    fetched = client.fetch_pubmed(pmids + ["1"])  # PMID 1 is not in the sample: absent, not an error
    assert list(fetched) == pmids
    want = sample_store.get_many(pmids)
    for pmid in pmids:
        assert fetched[pmid].model_dump() == want[pmid].model_dump()
        assert local.get(pmid).model_dump() == want[pmid].model_dump()
    assert client.requests_made == 1
    again = client.fetch_pubmed(reversed(pmids))
    assert list(again) == pmids[::-1] and client.requests_made == 1  # served by the local store


def test_efetch_is_batched_by_200_over_post(mirror, sample_store, local):
    pmids = sample_store.pmids()[:450]
    with FaultyServer(upstream=mirror.url) as proxy:
        client = EutilsClient(client_settings(proxy.url), local)
        assert len(client.fetch_pubmed(pmids)) == 450
        sizes = [len(r.params["id"][0].split(",")) for r in proxy.requests]
        assert sizes == [200, 200, 50] and {r.method for r in proxy.requests} == {"POST"}
        assert proxy.requests[0].params["tool"] == ["cpqa"]


def test_a_bad_response_caches_nothing(mirror, sample_store, local):
    pmids = sample_store.search(TERM, retmax=3).pmids
    good = httpx.post(mirror.url + "efetch.fcgi", data={"db": "pubmed", "id": ",".join(pmids)}).content
    cut = good[: good.rindex(b"<PubmedArticle>") + 40]  # two whole records, then a broken one
    with FaultyServer(upstream=mirror.url) as proxy:
        client = EutilsClient(client_settings(proxy.url), local)
        proxy.script(*[Fault.malformed(cut) for _ in range(3)])
        with pytest.raises(NCBIError, match="malformed XML"):
            client.fetch_pubmed(pmids)
        assert local.count() == 0
        proxy.script(Fault.status_code(503), Fault.truncated(good), Fault.status_code(503))
        with pytest.raises(NCBIError, match="after 3 attempts"):
            client.fetch_pubmed(pmids)
        assert local.count() == 0
        assert list(client.fetch_pubmed(pmids)) == pmids  # the upstream answers again
        assert local.count() == 3


def test_pmc_round_trip(settings, local, tmp_path):
    from ingestion.pmc import ingest_pmc_files

    files = sorted(shared("corpus", "pmc").iterdir())
    store_path = tmp_path / "pmc.sqlite"
    with Store(store_path) as source:
        ingest_pmc_files(source, files)
    parsed = {a.pmcid: a for f in files for a, _ in iter_pmc_records(f) if a.pmcid}
    assert len(parsed) >= 3
    with MirrorServer(store_path) as server:
        client = EutilsClient(client_settings(server.url), local)
        ids = sorted(parsed)
        fetched = client.fetch_pmc([i.lower() for i in ids] + ["PMC1"])
        assert sorted(fetched) == ids
        for pmcid in ids:
            assert fetched[pmcid].model_dump() == parsed[pmcid].model_dump()
            assert fetched[pmcid].has_full_text
        assert client.requests_made == 1
        assert client.fetch_pmc([ids[0][3:]]) == {ids[0]: parsed[ids[0]]} and client.requests_made == 1
        record = entrez(server.url + "efetch.fcgi", db="pmc", id=ids[0])
        assert len(record) == 1


def test_responses_validate_with_bio_entrez(mirror, sample_store):
    result = entrez(mirror.url + "esearch.fcgi", db="pubmed", term=TERM, retmax=5)
    want = sample_store.search(TERM, retmax=5)
    assert result["IdList"] == want.pmids and int(result["Count"]) == want.count
    assert result["RetMax"] == str(len(want.pmids)) and result["RetStart"] == "0"
    assert result["QueryTranslation"] == want.query_translation

    zero = entrez(mirror.url + "esearch.fcgi", db="pubmed", term="zzqqxxnotaword")
    assert zero["Count"] == "0" and zero["IdList"] == []
    assert zero["ErrorList"]["PhraseNotFound"] == ["zzqqxxnotaword"]
    assert zero["WarningList"]["OutputMessage"] == ["No items found."]

    bad = entrez(mirror.url + "esearch.fcgi", db="pubmed", term='(cancer AND "')
    assert bad["Count"] == "0" and bad["ErrorList"]["PhraseNotFound"] == ['(cancer AND "']
    assert any(m.startswith("Invalid query") for m in bad["WarningList"]["OutputMessage"])

    articles = entrez(mirror.url + "efetch.fcgi", db="pubmed", id=",".join(want.pmids), retmode="xml")
    got = [str(a["MedlineCitation"]["PMID"]) for a in articles["PubmedArticle"]]
    assert got == want.pmids


def test_zero_hits_and_bad_terms_reach_the_client_as_ncbi_warnings(mirror, local):
    client = EutilsClient(client_settings(mirror.url), local)
    zero = client.search("zzqqxxnotaword")
    assert zero.count == 0 and zero.pmids == []
    assert zero.warnings == ["PhraseNotFound: zzqqxxnotaword", "OutputMessage: No items found."]
    bad = client.search("cancer AND (")
    assert bad.count == 0 and bad.warnings[0] == "PhraseNotFound: cancer AND ("


def test_get_and_post_agree(mirror, sample_store):
    pmids = ",".join(sample_store.search(TERM, retmax=4).pmids)
    for endpoint, params in (
        ("esearch.fcgi", {"db": "pubmed", "term": TERM, "retmax": "4"}),
        ("efetch.fcgi", {"db": "pubmed", "id": pmids}),
    ):
        got = httpx.get(mirror.url + endpoint, params=params)
        posted = httpx.post(mirror.url + endpoint, data=params)
        assert got.status_code == posted.status_code == 200
        assert got.content == posted.content


def test_zero_hits_name_each_phrase_that_matches_nothing_as_ncbi_does(mirror, sample_store):
    recorded = Entrez.read(open(shared("eutils", "biopython_Tests_Entrez", "esearch8.xml"), "rb"))
    ours = entrez(mirror.url + "esearch.fcgi", db="pubmed", term="abcXYZ")
    assert ours["ErrorList"] == recorded["ErrorList"] and ours["WarningList"] == recorded["WarningList"]
    assert ours["Count"] == recorded["Count"] == "0" and ours["IdList"] == recorded["IdList"] == []
    # a phrase that exists is not listed, and a combination that matches nothing lists nobody
    mixed = entrez(mirror.url + "esearch.fcgi", db="pubmed", term="cancer AND abcXYZ")
    assert mixed["ErrorList"]["PhraseNotFound"] == ["abcXYZ"]
    assert sample_store.search("breast[ti]").count and sample_store.search("pancreatic[ti]").count
    disjoint = entrez(mirror.url + "esearch.fcgi", db="pubmed", term="breast[ti] AND pancreatic[ti]")
    assert disjoint["Count"] == "0" and "ErrorList" not in disjoint
    assert disjoint["WarningList"]["OutputMessage"] == ["No items found."]


def test_the_pubmed_window_of_9999_records_is_kept_with_ncbi_messages(mirror, local):
    whole = entrez(mirror.url + "esearch.fcgi", db="pubmed", term="cancer", retmax=10000)
    assert whole["WarningList"]["OutputMessage"] == ["Restrictions achieved. start and count adjusted to 0, 9999"]
    tail = entrez(mirror.url + "esearch.fcgi", db="pubmed", term="cancer", retstart=9990, retmax=10)
    assert tail["WarningList"]["OutputMessage"][0] == "Restrictions achieved. start and count adjusted to 9990, 9"
    reply = httpx.get(mirror.url + "esearch.fcgi", params={"db": "pubmed", "term": "cancer", "retstart": 9999})
    assert reply.status_code == 200
    with pytest.raises(RuntimeError, match="'retstart' cannot be larger than 9998"):
        Entrez.read(io.BytesIO(reply.content))
    client = EutilsClient(client_settings(mirror.url), local)
    with pytest.raises(NCBIError, match="cannot be larger than 9998"):
        client.search("cancer", retstart=9999)
    assert client.requests_made == 1  # a parameter error is not retried, although NCBI calls it a backend failure


@pytest.mark.parametrize(
    "endpoint,params,message",
    [
        ("esearch.fcgi", {"db": "nothing", "term": "x"}, "Invalid db name specified: nothing"),
        ("esearch.fcgi", {"db": "pubmed"}, "Empty term and query_key - nothing todo"),
        ("esearch.fcgi", {"db": "pubmed", "term": "x", "retmax": "-1"}, "retmax must be a non-negative integer"),
        ("esearch.fcgi", {"db": "pubmed", "term": "x", "retmax": "\u00b2"}, "retmax must be a non-negative integer"),
        ("esearch.fcgi", {"db": "pubmed", "term": "x", "mindate": "last year"}, "mindate must be"),
        ("esearch.fcgi", {"db": "pubmed", "term": "breast\x00cancer"}, "Invalid character in parameter 'term'"),
    ],
)
def test_esearch_errors_are_ncbi_error_documents_that_bio_entrez_raises(mirror, endpoint, params, message):
    for reply in (httpx.get(mirror.url + endpoint, params=params), httpx.post(mirror.url + endpoint, data=params)):
        assert reply.status_code == 200 and reply.content.startswith(
            b'<?xml version="1.0" encoding="UTF-8" ?>\n<!DOCTYPE eSearchResult PUBLIC'
        )
        with pytest.raises(RuntimeError, match=re.escape(message)):  # NCBI's behaviour, not a ValueError
            Entrez.read(io.BytesIO(reply.content))


@pytest.mark.parametrize(
    "params,message",
    [
        ({"db": "pubmed"}, "Empty id list - nothing todo"),
        ({"db": "pubmed", "id": "12,abc"}, "not a PMID"),
        ({"db": "protein", "id": "1"}, "Invalid db name specified: protein"),
        ({"db": "pubmed", "id": "1\x00"}, "Invalid character"),
    ],
)
def test_efetch_errors_are_ncbi_error_documents(mirror, local, params, message):
    reply = httpx.post(mirror.url + "efetch.fcgi", data=params)
    assert reply.status_code == 200 and b"<!DOCTYPE eFetchResult PUBLIC" in reply.content
    assert error_document(reply.content).startswith(message)
    assert httpx.get(mirror.url + "einfo.fcgi").status_code == 404


def test_concurrent_requests_get_the_sequential_answers(mirror, sample_store):
    terms = ["cancer", "breast cancer", "tamoxifen", "lung AND smoking", "leukemia", "p53", "melanoma", "glioma"]

    def ask(term: str) -> tuple[bytes, bytes]:
        ids = httpx.get(mirror.url + "esearch.fcgi", params={"term": term, "retmax": 10}, timeout=30)
        found = Entrez.read(io.BytesIO(ids.content))["IdList"]
        fetched = httpx.post(
            mirror.url + "efetch.fcgi", data={"db": "pubmed", "id": ",".join(found) or "1"}, timeout=30
        )
        return ids.content, fetched.content

    sequential = [ask(t) for t in terms]
    with ThreadPoolExecutor(16) as pool:
        parallel = list(pool.map(ask, terms * 2))
    assert parallel == sequential * 2


def test_cli_serves_the_store_in_cpqa_home(sample_home, tmp_path):
    cpqa = shutil.which("cpqa") or str(Path(sys.executable).with_name("cpqa"))
    env = {**os.environ, "CPQA_HOME": str(sample_home)}
    proc = subprocess.Popen(
        [cpqa, "mirror", "serve", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        line = proc.stdout.readline()
        url = line.split(" on ", 1)[1].split()[0]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/")
        result = entrez(url + "esearch.fcgi", db="pubmed", term="cancer", retmax=3)
        assert int(result["Count"]) > 3 and len(result["IdList"]) == 3
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    empty = subprocess.run(
        [cpqa, "mirror", "serve", "--port", "0"],
        capture_output=True,
        text=True,
        env={**os.environ, "CPQA_HOME": str(tmp_path / "nothing")},
        timeout=60,
    )
    assert empty.returncode == 2 and "no local store" in empty.stderr
