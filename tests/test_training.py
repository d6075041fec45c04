"""Training data and training (``cpqa.evaluation.training``): the builders keep to the splits and write the compact
format, ``fit`` trains a few steps on the CPU and ships an int8 ONNX that ranks as the float model does, and the
fit modules import nothing of CPQA's dependencies (they run on a GPU machine without them)."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
import tarfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import shared

REPO = Path(__file__).resolve().parents[1]


def _rows(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _ids(row: dict) -> list[str]:
    return [i for k, v in row.items() if k != "s" for i in (v if isinstance(v, list) else [v]) if isinstance(i, str)]


def _check_folder(folder: Path, examples_name: str, guard) -> tuple[dict, list[dict], dict[str, str]]:
    manifest = json.loads((folder / "manifest.json").read_text())
    texts = {row["id"]: row["text"] for row in _rows(folder / "texts.jsonl.gz")}
    examples = _rows(folder / examples_name)
    assert manifest["examples"] == len(examples) and manifest["texts"] == len(texts)
    assert manifest["per_source"] == dict(Counter(e["s"] for e in examples))
    used = {i for e in examples for i in _ids(e)}
    assert used == set(texts), "every id has its text, and only used texts are written"
    train = set(guard.train_ids)
    for ident in used:
        kind, _, rest = ident.partition(":")
        if kind == "q":
            assert rest in train and rest not in guard.held_out_ids
        elif kind == "pq":
            assert rest not in guard.pubmedqa_excluded
        elif kind in {"d", "t", "ab", "s"}:
            assert rest.split(":", 1)[0] not in guard.forbidden_records
    return manifest, examples, texts


def test_the_index_embeds_title_and_abstract_as_one_text():
    from cpqa.models.encoders import MINILM
    from cpqa.types import AbstractSection, Article
    from ingestion.index_build import article_text

    expected = {"A study of tamoxifen.": "A study of tamoxifen. RESULTS: It works.", "": "RESULTS: It works."}
    for title, text in expected.items():
        article = Article(pmid="1", title=title, abstract_sections=[AbstractSection(label="RESULTS", text="It works.")])
        assert article.title_and_abstract == article_text(article, MINILM) == text


def test_the_guard_keeps_held_out_questions_and_records_out():
    shared("bioasq", "dev_questions.jsonl")
    from cpqa.evaluation.data.splits import BIOASQ_SPLITS, load_splits
    from cpqa.evaluation.training.common import build_guard

    guard = build_guard()
    splits = load_splits(BIOASQ_SPLITS)
    assert set(guard.train_ids) <= splits["train"] and len(guard.train_ids) > 1000
    assert guard.train_ids == sorted(guard.train_ids)  # one order whatever the hash seed: the draws repeat
    assert not set(guard.train_ids) & guard.held_out_ids
    cancer = next(iter(splits["cancer"]))
    with pytest.raises(AssertionError):
        guard.check_question(cancer, guard.questions[cancer]["question"])
    with pytest.raises(AssertionError):  # a train id worded as a held-out question is refused too
        guard.check_question("not-an-id", guard.questions[cancer]["question"].upper())
    for pmid in guard.questions[cancer]["gold_pmids"]:
        with pytest.raises(AssertionError):
            guard.check_record(pmid)
    assert guard.counts["bioasq_12b_only_records"] > 0 and len(guard.pubmedqa_excluded) >= 109


@pytest.mark.slow
def test_encoder_data_on_the_sample_home(indexed_home, tmp_path):
    from cpqa.evaluation.training.common import build_guard
    from cpqa.evaluation.training.encoder_data import EncoderDataOptions, build_encoder_data

    options = EncoderDataOptions(limit=3, title_pairs=20)
    manifest = build_encoder_data(indexed_home, tmp_path / "enc", options, passages_path=tmp_path / "p.sqlite")
    _, examples, texts = _check_folder(tmp_path / "enc", "triples.jsonl.gz", build_guard())
    sources = manifest["sources"]
    assert sources["title-abstract"]["triples"] == 20 and sources["pubmedqa"]["questions"] == 3
    assert manifest["per_source"]["pubmedqa"] == 3 and manifest["checks"]["examples_checked"] == len(examples)
    for e in examples:
        assert set(e) == {"a", "p", "n", "s"} and e["p"] not in e["n"] and e["a"] != e["p"]
    pubmedqa = next(e for e in examples if e["s"] == "pubmedqa")
    assert pubmedqa["a"].removeprefix("pq:") == pubmedqa["p"].removeprefix("d:")  # a question -> its own record
    title = next(e for e in examples if e["s"] == "title-abstract")
    assert texts[title["a"]] not in texts[title["p"]]  # the abstract alone: the title is not given away
    if "skipped" not in sources["medquad"]:
        assert manifest["per_source"]["medquad"] == 3


def test_skipped_negatives_are_taken_past_the_best_non_gold_records(indexed_home, tmp_path):
    from cpqa.evaluation.training.encoder_data import EncoderDataOptions, build_encoder_data

    def first_negatives(skip: int) -> dict[str, list[str]]:
        options = EncoderDataOptions(limit=3, title_pairs=0, medquad=False, skip=skip)
        out = tmp_path / f"skip{skip}"
        build_encoder_data(indexed_home, out, options, passages_path=tmp_path / "p.sqlite")
        found: dict[str, list[str]] = {}
        for e in _rows(out / "triples.jsonl.gz"):
            found.setdefault(e["a"], e["n"])  # an anchor's first triple: its negatives in mined order
        return found

    plain, skipped = first_negatives(0), first_negatives(2)
    compared = [a for a in plain if len(plain[a]) == 5 and a in skipped]
    assert compared
    for anchor in compared:
        assert skipped[anchor][:3] == plain[anchor][2:]


@pytest.mark.slow
def test_chooser_data_on_the_sample_home(indexed_home, tmp_path):
    from cpqa.evaluation.training.chooser_data import ChooserDataOptions, build_chooser_data
    from cpqa.evaluation.training.common import build_guard

    options = ChooserDataOptions(limit=2)
    manifest = build_chooser_data(indexed_home, tmp_path / "ch", options, passages_path=tmp_path / "p.sqlite")
    _, examples, texts = _check_folder(tmp_path / "ch", "pairs.jsonl.gz", build_guard())
    assert manifest["sources"]["bioasq"]["questions"] == 2
    assert {e["y"] for e in examples} == {0, 1} and manifest["labels"]["1"] > 0
    snippets = [e for e in examples if e["s"] == "bioasq:snippet"]
    assert snippets and all(e["y"] == 1 and len(texts[e["c"]].split()) >= 4 for e in snippets)
    assert len({(e["q"], e["c"]) for e in examples}) == len(examples)
    if "skipped" not in manifest["sources"]["medquad"]:
        own = [e for e in examples if e["s"] == "medquad:own"]
        assert len(own) == 2 and all(e["y"] == 1 for e in own)
        assert all(e["y"] == 0 for e in examples if e["s"].startswith("medquad:same"))


def test_fit_imports_none_of_cpqa_dependencies():
    code = (
        "import json, sys; import cpqa.evaluation.training.fit as fit; fit.parser(); "
        "print(json.dumps(sorted(sys.modules)))"
    )
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, check=True).stdout)
    forbidden = [m for m in loaded if m.split(".")[0] in {"pydantic", "typer", "llama_index", "faiss", "bm25s"}]
    assert not forbidden
    ours = [m for m in loaded if m.startswith("cpqa")]
    allowed = {
        "cpqa",
        "cpqa.fronts",
        "cpqa.evaluation",
        "cpqa.evaluation.training",
        "cpqa.models",
        "cpqa.models.onnx_runtime",
    }
    # the product's exporter and the lazy front of ``import cpqa``: the standard library and numpy only
    assert all(m in allowed or ".training.fit" in m for m in ours), ours


TOPICS = [
    ("What are the side effects of tamoxifen?", "Tamoxifen causes hot flashes and raises the risk of blood clots."),
    ("How is melanoma staged?", "Melanoma is staged by tumour thickness, ulceration and spread to lymph nodes."),
    ("Does aspirin prevent colorectal cancer?", "Daily aspirin lowered the incidence of colorectal cancer by a fifth."),
    ("What causes cervical cancer?", "Persistent high-risk human papillomavirus infection causes cervical cancer."),
    ("Is radon linked to lung cancer?", "Residential radon exposure increases lung cancer risk in never smokers."),
    ("What is a PSA test?", "The PSA test measures prostate-specific antigen in the blood to screen for cancer."),
]


def _tiny(folder: Path, kind: str) -> None:
    from cpqa.evaluation.training.common import TextTable, write_dataset

    table, rows = TextTable(), []
    for i, (question, answer) in enumerate(TOPICS * 2):
        q, a = table.add(f"x:q{i}", question), table.add(f"x:a{i % len(TOPICS)}", answer)
        other = table.add(f"x:a{(i + 1) % len(TOPICS)}", TOPICS[(i + 1) % len(TOPICS)][1])
        if kind == "encoder":
            rows.append({"a": q, "p": a, "n": [other], "s": "tiny"})
        else:
            rows += [{"q": q, "c": a, "y": 1, "s": "tiny"}, {"q": q, "c": other, "y": 0, "s": "tiny"}]
    write_dataset(folder, kind, table, "triples.jsonl.gz" if kind == "encoder" else "pairs.jsonl.gz", rows, {})


def _fit(kind: str, tmp_path: Path, *more: str) -> tuple[dict, Path]:
    from cpqa.evaluation.training.fit import main

    _tiny(tmp_path / "data", kind)
    out = tmp_path / "out"
    argv = [kind, "--data", str(tmp_path / "data"), "--out", str(out), "--device", "cpu"]
    argv += ["--batch-size", "4", "--max-length", "64", "--log-every", "1", "--bundle", str(tmp_path / "bundle")]
    argv += ["--sources"]  # every source (the encoder's default leaves out all but BioASQ, PubMedQA and titles)
    manifest = main([*argv, *more])
    assert manifest is not None
    log = json.loads((out / "training_log.json").read_text())
    assert log and log[-1]["step"] == manifest["training"]["steps"] >= 2 and np.isfinite(log[-1]["loss"])
    assert not manifest["training"]["stopped_by_budget"] and manifest["training"]["steps"] == len(log)
    shipped = out / "onnx"
    assert (shipped / "model-int8.onnx").stat().st_size <= 25 * 1024 * 1024
    about = json.loads((shipped / "cpqa_model.json").read_text())
    assert about["head"] == ("hidden" if kind == "encoder" else "logits") and about["opset"] == 17
    parts = b"".join(p.read_bytes() for p in sorted((tmp_path / "bundle").glob(f"{kind}.tgz.*")))
    with tarfile.open(fileobj=io.BytesIO(parts)) as tar:
        assert f"{kind}/onnx/model-int8.onnx" in tar.getnames()
    return manifest, out


def test_fit_trains_the_encoder_on_its_sources_and_says_when_the_data_has_none(tmp_path):
    from cpqa.evaluation.training.fit import main

    _tiny(tmp_path / "data", "encoder")  # source "tiny": not one the encoder trains on by default
    argv = ["encoder", "--data", str(tmp_path / "data"), "--out", str(tmp_path / "out"), "--device", "cpu"]
    with pytest.raises(SystemExit, match=r"no training examples of the sources \['bioasq'.*\['tiny'\]"):
        main(argv)


@pytest.mark.slow
def test_fit_encoder_ships_an_int8_graph_that_ranks_as_the_float_model(tmp_path):
    from cpqa.evaluation.training.fit_models import bundled_base, half
    from cpqa.models.onnx_runtime import onnx_forward
    from cpqa.models.encoders import _pooling
    from cpqa.models.tokenization import WordPieces
    from sentence_transformers import SentenceTransformer

    base = tmp_path / "base-fp16"
    half(Path(bundled_base() or ""), base)  # a carried fp16 base is upcast on load
    manifest, out = _fit("encoder", tmp_path, "--base", str(base))
    assert manifest["int8_vs_float"]["cosine_mean"] > 0.97
    questions, answers = [q for q, _ in TOPICS], [a for _, a in TOPICS]
    reference = SentenceTransformer(str(out / "model"), device="cpu")
    float_rank = np.argsort(-(reference.encode(questions) @ reference.encode(answers).T), axis=1)[:, 0]
    shipped = out / "onnx"
    assert _pooling(str(shipped)) == ("mean", True)  # the product pools it as trained
    pieces, forward = WordPieces(str(shipped), 256), onnx_forward(shipped / "model-int8.onnx")

    def vectors(texts):
        enc = pieces.encode(texts)
        width = max(len(ids) for ids in enc["input_ids"])
        batch = {k: np.array([row + [0] * (width - len(row)) for row in v]) for k, v in enc.items()}
        hidden, mask = forward(batch), batch["attention_mask"][..., None]
        mean = (hidden * mask).sum(1) / mask.sum(1)
        return mean / np.linalg.norm(mean, axis=1, keepdims=True)

    int8_rank = np.argsort(-(vectors(questions) @ vectors(answers).T), axis=1)[:, 0]
    assert (int8_rank == float_rank).all()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["chooser", "reranker"])
def test_fit_cross_encoders_ship_an_int8_graph_that_ranks_as_the_float_model(tmp_path, kind):
    from cpqa.evaluation.training.fit_export import OnnxModel
    from sentence_transformers.cross_encoder import CrossEncoder
    from transformers import AutoTokenizer

    manifest, out = _fit(kind, tmp_path, "--epochs", "10", "--lr", "5e-5")  # enough to tell pairs apart
    quantised = manifest["int8_vs_float"]  # on the training examples: the tiny set holds none out
    assert quantised["spearman"] > 0.9 and quantised["check"]["auc"] > 0.8
    reference = CrossEncoder(str(out / "model"), device="cpu")
    int8 = OnnxModel(out / "onnx" / "model-int8.onnx", AutoTokenizer.from_pretrained(out / "onnx"), 64)
    for question, _ in TOPICS[:3]:
        pairs = [(question, answer) for _, answer in TOPICS]
        assert np.argmax(reference.predict(pairs)) == np.argmax(int8.scores(pairs))


def test_the_reranker_reads_128_tokens_and_trains_all_its_pairs_twice_on_a_cpu():
    from cpqa.evaluation.training.fit import DEFAULTS, parser

    args = parser().parse_args(["reranker", "--data", "d", "--out", "o"])
    assert args.max_length == 128 and args.command == "reranker"
    assert parser().parse_args(["chooser", "--data", "d", "--out", "o"]).max_length == 256
    batch, epochs, examples, budget = DEFAULTS[("reranker", "cpu")]
    assert epochs == 2 and examples >= 17_438 and budget <= 60  # every pair of the train split, within the hour


@pytest.mark.slow
def test_reranker_data_on_the_sample_home(indexed_home, tmp_path):
    from cpqa.evaluation.training.common import build_guard
    from cpqa.evaluation.training.reranker_data import RerankerDataOptions, build_reranker_data
    from cpqa.sources.store import Store

    options = RerankerDataOptions(limit=3, hard=2, hard_pool=5, easy=1)
    manifest = build_reranker_data(indexed_home, tmp_path / "rr", options, passages_path=tmp_path / "p.sqlite")
    guard = build_guard()
    _, examples, texts = _check_folder(tmp_path / "rr", "pairs.jsonl.gz", guard)
    assert manifest["sources"]["bioasq"]["questions"] == 3 and manifest["kind"] == "reranker"
    assert manifest["per_source"].get("bioasq:retrieved", 0) <= 3 * 3  # at most hard + easy negatives a question
    with Store(indexed_home / "store.sqlite") as store:
        for e in examples:
            qid, pmid = e["q"].removeprefix("q:"), e["c"].removeprefix("d:")
            assert (pmid in guard.questions[qid]["gold_pmids"]) == bool(e["y"])
            assert texts[e["c"]] == store.get_many([pmid])[pmid].title_and_abstract


def test_fewer_layers_are_kept_and_saved(tmp_path):
    from cpqa.evaluation.training.fit_export import save_float
    from cpqa.evaluation.training.fit_models import bundled_base, load_model
    from sentence_transformers.cross_encoder import CrossEncoder

    model, tokenizer = load_model("chooser", bundled_base() or "", 2)
    assert len(model.base_model.encoder.layer) == 2 and model.config.num_labels == 1
    save_float(model, tokenizer, tmp_path / "model", "logits", 64)
    assert CrossEncoder(str(tmp_path / "model"), device="cpu").model.config.num_hidden_layers == 2


@pytest.mark.slow
def test_exact_labelled_chooser_data_names_an_exact_answer_or_is_a_negative(indexed_home, tmp_path):
    from cpqa.evaluation.data.bioasq_gold import bioasq_gold
    from cpqa.evaluation.data.shared import SHARED_DATA
    from cpqa.evaluation.evaluations.answers import names_exact_answer
    from cpqa.evaluation.training.chooser_data import ChooserDataOptions, build_chooser_data
    from cpqa.evaluation.training.common import build_guard

    options = ChooserDataOptions(limit=2, label="exact", medquad=False)
    manifest = build_chooser_data(indexed_home, tmp_path / "ex", options, passages_path=tmp_path / "p.sqlite")
    _, examples, texts = _check_folder(tmp_path / "ex", "pairs.jsonl.gz", build_guard())
    raw, questions = SHARED_DATA / "mirage" / "rawdata" / "bioasq", SHARED_DATA / "bioasq" / "dev_questions.jsonl"
    golds = {f"q:{g.id}": g for g in bioasq_gold(raw, questions)}
    assert manifest["sources"]["bioasq"]["questions"] == 2 and examples
    for e in examples:  # every label is BioASQ's exact answer, read again
        gold = golds[e["q"]]
        assert gold.exact and e["y"] == int(names_exact_answer(texts[e["c"]], gold.exact)), e
        assert e["s"].startswith("bioasq:exact-") == bool(e["y"])
