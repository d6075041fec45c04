"""``cpqa eval chunking``: the chunking / passage-retrieval benchmark (docs/architecture.md, "Chunking")."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from cpqa.cli.common import emit, fail, require_extra


def chunking(
    bench: Optional[Path] = typer.Option(
        None, "--bench", help="benchmark JSONL (default ../shared/data/bench/chunking_dev.jsonl)"
    ),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="only the first N documents"),
    only: Optional[list[str]] = typer.Option(None, "--splitter", help="run only this splitter (repeatable)"),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
    target_words: Optional[int] = typer.Option(
        None, "--target-words", help="SEOS chunk target (default: the embedder's)"
    ),
    overlap_words: Optional[int] = typer.Option(None, "--overlap-words", help="SEOS overlap (default: the embedder's)"),
    cutoff_sd: Optional[float] = typer.Option(
        None,
        "--cutoff-sd",
        help="SEOS boundary cut-off, mean + N sd of the valley depths (default: the shipped setting)",
    ),
    save: Optional[Path] = typer.Option(
        None,
        "--save",
        help="also write the JSON result here (default without "
        "--limit: $CPQA_HOME/eval/chunking.json, which notebook 03 reads)",
    ),
    cross_validate: bool = typer.Option(
        False,
        "--cross-validate",
        help="choose SEOS's settings on one half of the "
        "documents and report SEOS and every rival on the other, both ways",
    ),
    seed: int = typer.Option(0, "--seed", help="the split into halves (--cross-validate)"),
) -> None:
    """Chunking benchmark: SEOS against LlamaIndex and NLTK splitters, Hits@5 / MRR@5 per retriever."""
    require_extra("eval", "nltk")  # TextTiling and Pk / WindowDiff
    from cpqa.config import get_settings
    from cpqa.models.encoders import EmbeddingCache, load_encoder
    from cpqa.evaluation.evaluations.chunking import default_bench_path, fusion_reranker, load_bench, run_benchmark
    from cpqa.evaluation.evaluations.chunking_cv import cross_validate as run_cross_validation
    from cpqa.evaluation.evaluations.splitters import benchmark_splitters, rival_splitters
    from cpqa.passages.rerank import load_reranker

    settings = get_settings()
    path = bench or default_bench_path()
    try:
        docs = load_bench(path, limit)
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    sentence_encoder, sentence_choice = load_encoder("sentence_embedder", settings)
    passage_encoder, passage_choice = load_encoder("passage_retriever", settings)
    passage_cache = EmbeddingCache(passage_encoder)
    postprocessor, rerank_choice = load_reranker(settings, top_n=None, cache=passage_cache)
    window = passage_encoder.max_tokens  # SEOS chunks fit the window of the encoder that embeds them
    if cross_validate:
        if only or target_words or overlap_words or cutoff_sd is not None:
            fail(
                "--cross-validate chooses SEOS's sizes itself and runs every rival: drop --splitter, "
                "--target-words, --overlap-words and --cutoff-sd"
            )
        result = run_cross_validation(
            docs,
            sentence_encoder,
            rival_splitters(sentence_encoder),
            passage_cache,
            fusion_reranker(postprocessor),
            window_tokens=window,
            seed=seed,
            progress=None if as_json else typer.echo,
        )
        payload = {
            "bench": str(path),
            "models": {c.component: c.model for c in (sentence_choice, passage_choice, rerank_choice)},
            **result.as_json(),
        }
        emit(payload, save or (settings.eval_dir / "chunking_cv.json" if limit is None else None), as_json, settings)
        return
    seos_options = {"cutoff_sd": cutoff_sd} if cutoff_sd is not None else {}
    splitters = benchmark_splitters(
        sentence_encoder,
        passage_encoder,
        target_words=target_words,
        overlap_words=overlap_words,
        window_tokens=window,
        **seos_options,
    )
    unknown = sorted(set(only or ()) - set(splitters))
    if unknown:
        fail(f"unknown splitter(s) {', '.join(unknown)}; choose from {', '.join(splitters)}")
    splitters = {name: s for name, s in splitters.items() if not only or name in only}
    report = run_benchmark(
        docs,
        splitters,
        passage_cache,
        fusion_reranker(postprocessor),
        bench=str(path),
        models={c.component: c.model for c in (sentence_choice, passage_choice, rerank_choice)},
        progress=None if as_json else typer.echo,
    )
    payload = report.as_json()
    emit(payload, save or (settings.eval_dir / "chunking.json" if limit is None else None), as_json, settings)
