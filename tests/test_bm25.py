"""Plain BM25 over title + abstract: the index built from the store, saved and reopened, ranking a small
hand-built store where the order is known; and the paired bootstrap the evaluation reports."""

from __future__ import annotations

import pytest

from cpqa.documents.bm25 import Bm25Index, Bm25Retriever
from cpqa.evaluation.stats.significance import paired_bootstrap
from cpqa.types import AbstractSection, Article

RECORDS = {
    "1": ("Tamoxifen and breast cancer recurrence", "Tamoxifen lowered recurrence of breast cancer."),
    "2": ("Breast cancer screening", "Mammography screening of women."),
    "3": ("Tomato yield", "Drip irrigation raised tomato yield."),
    "4": ("Recurrence after surgery", "Local recurrence was rare after breast surgery."),
}


@pytest.fixture
def store(settings):
    from cpqa.sources.store import Store

    with Store(settings.store_path) as s:
        s.upsert(
            [
                (Article(pmid=p, title=t, abstract_sections=[AbstractSection(text=a)]), None)
                for p, (t, a) in RECORDS.items()
            ]
        )
        yield s


def test_ranks_by_bm25_and_reopens_the_saved_index(store, settings):
    directory = settings.index_dir / "bm25"
    index = Bm25Index.open(store, directory)
    hits = index.search("Does tamoxifen reduce breast cancer recurrence?", 10)
    assert [p for p, _ in hits][:2] == ["1", "4"] and "3" not in {p for p, _ in hits}
    assert all(a[1] >= b[1] for a, b in zip(hits, hits[1:]))
    assert Bm25Index.open(store, directory).search("tamoxifen", 10) == index.search("tamoxifen", 10)
    assert index.search("the of and", 10) == []  # stopwords only: nothing to match
    store.upsert([(Article(pmid="5", title="Tamoxifen", abstract_sections=[AbstractSection(text="tamoxifen")]), None)])
    assert "5" in {p for p, _ in Bm25Index.open(store, directory).search("tamoxifen", 10)}  # stale: rebuilt


def test_retriever_returns_pmid_nodes_with_provenance(store, settings):
    retriever = Bm25Retriever(store, settings.index_dir / "bm25")
    nodes = retriever.retrieve("tamoxifen recurrence")
    assert nodes[0].node.metadata == {"pmid": "1", "path": "BM25", "rank": 1} and nodes[0].score > 0


def test_paired_bootstrap():
    a, b = [1.0, 1.0, 0.5, 1.0, 0.0] * 20, [0.0, 1.0, 0.5, 0.5, 0.0] * 20
    result = paired_bootstrap(a, b, "recall@20")
    assert result.difference == pytest.approx(0.3) and result.ci_low > 0 and result.p_value < 0.01
    assert (result.wins, result.losses, result.n) == (40, 0, 100)
    same = paired_bootstrap(a, a)
    assert same.difference == 0 and same.p_value == 1.0
    with pytest.raises(ValueError):
        paired_bootstrap([1.0], [1.0, 0.0])
