"""Recall of the patient search (``cpqa.documents.patient_search``): does a MedQuAD question find its own section?

Each answered question of the chosen pages (by default the cancer.gov pages of the ``eval`` split, never tuned on)
is asked of the whole patient store; its gold is the section it was written for. Reported per question kind and
overall: recall@1 and @3 of BM25 alone, dense alone and their fusion (the product's ``search``), plus how many gold
sections share their exact text with another section (a page repeated across PDQ summaries), where @1 cannot tell
them apart. ``python -m cpqa.evaluation.evaluations.patient_recall`` over the data home ``cpqa ingest medquad``
filled; prints JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter, defaultdict

from cpqa.config import Settings, get_settings
from cpqa.documents.patient_search import PatientSearch, patient_index_dir
from cpqa.evaluation.data.splits import MEDQUAD_SPLITS, load_splits
from cpqa.sources.patient_store import PatientStore

CUTS = (1, 3)
PATHS = ("bm25", "dense", "fused")


def patient_recall(
    settings: Settings, split: str = "eval", collection: str = "1_CancerGov_QA", rrf_k: int | None = None
) -> dict:
    """Recall@1/@3 per kind and path (see the module docstring)."""
    from cpqa.models.encoders import load_encoder

    pages = load_splits(MEDQUAD_SPLITS)[split]
    encoder, choice = load_encoder("sentence_embedder", settings)
    with PatientStore(settings.patient_store_path) as store:
        search = PatientSearch(store, patient_index_dir(settings), encoder)
        search.rrf_k = rrf_k or search.rrf_k
        sections = list(store.iter_sections())
        texts = Counter(s.text for s in sections)
        questions = [s for s in sections if s.collection == collection and s.page in pages and s.question]
        hits: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
        start = time.perf_counter()
        for section in questions:
            rankings = search.rankings(section.question)
            fused = [key for key, _, _ in search.fuse(rankings)]
            for path, ranking in [*rankings.items(), ("fused", fused)]:
                for cut in CUTS:
                    found = section.key in ranking[:cut]
                    hits[section.kind][f"{path}@{cut}"].append(found)
                    hits["all"][f"{path}@{cut}"].append(found)
        seconds = time.perf_counter() - start
    table = {
        kind: {"questions": len(values[f"bm25@{CUTS[0]}"]), **{m: round(sum(v) / len(v), 3) for m, v in values.items()}}
        for kind, values in sorted(hits.items(), key=lambda item: (item[0] != "all", item[0]))
    }
    return {
        "split": split,
        "collection": collection,
        "store_sections": len(sections),
        "questions": len(questions),
        "gold_text_repeated": sum(texts[s.text] > 1 for s in questions),
        "encoder": choice.model,
        "runtime": choice.runtime,
        "rrf_k": search.rrf_k,
        "weights": search.weights,
        "ms_per_question": round(1000 * seconds / max(len(questions), 1), 1),
        "recall": table,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="eval", choices=["eval", "tuning", "train"])
    parser.add_argument("--collection", default="1_CancerGov_QA")
    parser.add_argument("--rrf-k", type=int, default=None)
    args = parser.parse_args()
    print(json.dumps(patient_recall(get_settings(), args.split, args.collection, args.rrf_k), indent=1))


if __name__ == "__main__":
    main()
