"""``cpqa eval pairs``: the embedder x reranker matrix (Hits@5, MRR@5, index time, query latency), and the
pair sets it runs on: BioASQ gold snippets (``--from-bioasq``) or Claude-written questions (``--generate``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from cpqa.cli.common import fail, print_json


def _names(value: Optional[str], default: tuple[str, ...]) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()] if value else list(default)


def pairs(
    pairs_file: Optional[str] = typer.Option(
        None, "--pairs", help="pair JSONL, or 'bioasq' / 'synthetic' for the sets built into the data home"
    ),
    embedders: Optional[str] = typer.Option(
        None,
        "--embedders",
        help="comma-separated; 'none' = BM25 only, "
        "'minilm' = the bundled MiniLM (default: BM25, MiniLM and the paper's four)",
    ),
    rerankers: Optional[str] = typer.Option(
        None,
        "--rerankers",
        help="comma-separated; 'none', 'fusion' (BM25 + dense), "
        "or cross-encoder ids (default: none, fusion and the paper's two)",
    ),
    top_k: int = typer.Option(20, "--top-k", min=5, help="candidates the first stage passes to the reranker"),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="first N queries (and only their passages)"),
    from_bioasq: Optional[Path] = typer.Option(
        None,
        "--from-bioasq",
        help="build pairs from BioASQ golden files in this folder (e.g. ../shared/data/mirage/rawdata/bioasq)",
    ),
    dev_questions: Optional[Path] = typer.Option(
        None, "--dev-questions", help="JSONL of question ids to keep (with --from-bioasq)"
    ),
    generate: Optional[int] = typer.Option(None, "--generate", min=1, help="write N synthetic pairs with Claude"),
    from_store: bool = typer.Option(
        False, "--from-store", help="take the passages for --generate from the store (SEOS)"
    ),
    out: Optional[Path] = typer.Option(None, "--out", help="where built pairs go (default: the data home)"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Build query-passage pairs, or evaluate every embedder x reranker on them."""
    from cpqa.config import get_settings
    from cpqa.evaluation.evaluations.pairs import (
        DEFAULT_EMBEDDERS,
        DEFAULT_RERANKERS,
        PairSet,
        load_pairs,
        matrix_path,
        pairs_dir,
        run_matrix,
        save_pairs,
    )

    settings = get_settings()
    home_pairs = pairs_dir(settings)
    modes = [bool(pairs_file), from_bioasq is not None, generate is not None]
    if sum(modes) != 1:
        fail("give exactly one of --pairs FILE, --from-bioasq DIR or --generate N --from-store")

    if from_bioasq is not None:
        from cpqa.evaluation.data.pair_sources import bioasq_pairs

        if dev_questions is None:
            fail("--from-bioasq needs --dev-questions FILE (e.g. ../shared/data/bioasq/dev_questions.jsonl)")
        try:
            built = bioasq_pairs(from_bioasq, dev_questions)
        except (OSError, ValueError, KeyError) as exc:
            fail(str(exc))
        path = out or home_pairs / "bioasq.jsonl"
        save_pairs(built, path)
        summary = {
            "path": str(path),
            "pairs": len(built),
            "queries": len({p.query_id for p in built}),
            "passages": len({p.passage_id for p in built}),
        }
        if as_json:
            print_json(summary, settings)
        else:
            typer.echo(f"wrote {summary['pairs']} pairs ({summary['queries']} questions) to {path}")
        return

    if generate is not None:
        from cpqa.evaluation.data.pair_sources import generate_pairs
        from cpqa.models.providers import load_llm

        if not from_store:
            fail("--generate needs --from-store (passages come from the local store)")
        llm = load_llm(settings)
        if not llm.available:
            fail(f"--generate needs a language model: {llm.unconfigured}")
        path = out or home_pairs / "synthetic.jsonl"
        existing = load_pairs(path) if path.exists() else []
        try:
            made, report = generate_pairs(settings, generate, llm, existing=existing)
        except (OSError, ValueError) as exc:
            fail(settings.redact(str(exc)))
        save_pairs([*existing, *made], path)
        report.path = str(path)
        if as_json:
            print_json(report.model_dump(), settings)
        else:
            typer.echo(
                f"wrote {report.written} new pairs to {path} "
                f"({report.duplicates} duplicates, {report.rejected} rejected)"
            )
        return

    assert pairs_file  # exactly one of the three sources was given, and the other two returned above
    path = home_pairs / f"{pairs_file}.jsonl" if pairs_file in ("bioasq", "synthetic") else Path(pairs_file)
    try:
        pair_set = PairSet(load_pairs(path)).limit(limit)
    except (OSError, ValueError) as exc:
        hint = (
            " (build it with `cpqa eval pairs --from-bioasq DIR --dev-questions FILE`)"
            if pairs_file == "bioasq"
            else ""
        )
        fail(f"{exc}{hint}")
    cells = run_matrix(
        pair_set,
        settings,
        _names(embedders, DEFAULT_EMBEDDERS),
        _names(rerankers, DEFAULT_RERANKERS),
        top_k=top_k,
        progress=None if as_json else lambda m: typer.echo(f"  {m}", err=True),
    )
    payload = {
        "pairs": str(path),
        "queries": len(pair_set.queries),
        "passages": len(pair_set.passages),
        "top_k": top_k,
        "cells": [c.model_dump() for c in cells],
    }
    saved = matrix_path(settings, path)
    saved.parent.mkdir(parents=True, exist_ok=True)
    saved.write_text(json.dumps(payload, indent=1), encoding="utf-8")
    payload["saved"] = str(saved)
    if as_json:
        print_json(payload, settings)
        return
    typer.echo(f"{'embedder':<48} {'reranker':<34} {'Hits@5':>7} {'MRR@5':>7} {'index s':>8} {'ms/q':>7}")
    for c in cells:
        if c.available:
            typer.echo(
                f"{c.embedder:<48} {c.reranker:<34} {c.hits_at_5:>7.3f} {c.mrr_at_5:>7.3f} "
                f"{c.index_s:>8.1f} {c.query_ms:>7.1f}"
            )
        else:
            typer.echo(f"{c.embedder:<48} {c.reranker:<34} unavailable: {c.reason[:80]}")
