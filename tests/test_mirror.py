"""The E-utilities mirror over the local store, and the client against it over HTTP: round trips equal
to the store, NCBI's response shapes (Bio.Entrez validates them), GET and POST, concurrency, caching,
nothing cached from a bad response, and ``cpqa mirror serve``."""

from __future__ import annotations

import io
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
from cpqa.sources.mirror import MirrorServer
from cpqa.sources.ncbi.client import EutilsClient, NCBIError
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
    values = dict(cpqa_eutils_url=url, cpqa_eutils_rate=0, cpqa_http_timeout=5.0, cpqa_http_retries=2,
                  cpqa_http_backoff=0.01, cpqa_http_backoff_max=0.2)
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
    assert zero.count == 0 and zero.pmids == [] and zero.warnings == ["OutputMessage: No items found."]
    bad = client.search("cancer AND (")
    assert bad.count == 0 and bad.warnings[0] == "PhraseNotFound: cancer AND ("


def test_get_and_post_agree(mirror, sample_store):
    pmids = ",".join(sample_store.search(TERM, retmax=4).pmids)
    for endpoint, params in (("esearch.fcgi", {"db": "pubmed", "term": TERM, "retmax": "4"}),
                             ("efetch.fcgi", {"db": "pubmed", "id": pmids})):
        got = httpx.get(mirror.url + endpoint, params=params)
        posted = httpx.post(mirror.url + endpoint, data=params)
        assert got.status_code == posted.status_code == 200
        assert got.content == posted.content


@pytest.mark.parametrize("endpoint,params,message", [
    ("efetch.fcgi", {"db": "pubmed"}, "Empty id list"),
    ("efetch.fcgi", {"db": "pubmed", "id": "12,abc"}, "not a PMID"),
    ("efetch.fcgi", {"db": "protein", "id": "1"}, "not served"),
    ("esearch.fcgi", {"db": "pubmed"}, "Empty term"),
    ("esearch.fcgi", {"db": "pubmed", "term": "x", "retmax": "-1"}, "retmax"),
    ("esearch.fcgi", {"db": "pubmed", "term": "x", "mindate": "last year"}, "mindate"),
])
def test_bad_requests_get_ncbi_error_documents(mirror, endpoint, params, message):
    reply = httpx.get(mirror.url + endpoint, params=params)
    assert reply.status_code == 400 and b"<ERROR>" in reply.content and message.encode() in reply.content
    assert httpx.get(mirror.url + "einfo.fcgi").status_code == 404


def test_concurrent_requests_get_the_sequential_answers(mirror, sample_store):
    terms = ["cancer", "breast cancer", "tamoxifen", "lung AND smoking", "leukemia", "p53", "melanoma", "glioma"]

    def ask(term: str) -> tuple[bytes, bytes]:
        ids = httpx.get(mirror.url + "esearch.fcgi", params={"term": term, "retmax": 10}, timeout=30)
        found = Entrez.read(io.BytesIO(ids.content))["IdList"]
        fetched = httpx.post(mirror.url + "efetch.fcgi", data={"db": "pubmed", "id": ",".join(found) or "1"},
                             timeout=30)
        return ids.content, fetched.content

    sequential = [ask(t) for t in terms]
    with ThreadPoolExecutor(16) as pool:
        parallel = list(pool.map(ask, terms * 2))
    assert parallel == sequential * 2


def test_cli_serves_the_store_in_cpqa_home(sample_home, tmp_path):
    cpqa = shutil.which("cpqa") or str(Path(sys.executable).with_name("cpqa"))
    env = {**os.environ, "CPQA_HOME": str(sample_home)}
    proc = subprocess.Popen([cpqa, "mirror", "serve", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        url = line.split(" on ", 1)[1].split()[0]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/")
        result = entrez(url + "esearch.fcgi", db="pubmed", term="cancer", retmax=3)
        assert int(result["Count"]) > 3 and len(result["IdList"]) == 3
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    empty = subprocess.run([cpqa, "mirror", "serve", "--port", "0"], capture_output=True, text=True,
                           env={**os.environ, "CPQA_HOME": str(tmp_path / "nothing")}, timeout=60)
    assert empty.returncode == 2 and "no local store" in empty.stderr
