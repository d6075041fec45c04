"""``cpqa eval support`` (the answer's support threshold, set on BioASQ dev data) and ``cpqa eval answers``
(quote precision, snippet hit@5, abstention and removed sentences of the answerer against BioASQ gold snippets)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from cpqa.cli.common import emit, fail

RAW_HELP = "folder of BioASQ golden files (e.g. ../shared/data/mirage/rawdata/bioasq)"
DEV_HELP = "dev question ids (JSONL with id; e.g. ../shared/data/bioasq/dev_questions.jsonl)"


def support(
    raw: Path = typer.Option(..., "--raw", help=RAW_HELP),
    questions: Path = typer.Option(..., "--questions", help=DEV_HELP),
    limit: Optional[int] = typer.Option(600, "--limit", min=2, help="questions used (seeded sample)"),
    save: Optional[Path] = typer.Option(None, "--save", help="also write the JSON result here"),
    json_out: bool = typer.Option(False, "--json", help="print the JSON result"),
) -> None:
    """Set the support threshold: ideal-answer sentences against their own and a similar question's snippets."""
    import random

    from cpqa.answer.verify import SupportChecker
    from cpqa.config import get_settings
    from cpqa.evaluation.bioasq_gold import bioasq_gold
    from cpqa.evaluation.support import calibrate, support_pairs
    from cpqa.models.encoders import EmbeddingCache, load_encoder

    settings = get_settings()
    try:
        gold = bioasq_gold(raw, questions)
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    gold = random.Random(13).sample(gold, min(limit or len(gold), len(gold)))
    encoder, choice = load_encoder("passage_retriever", settings)
    checker = SupportChecker(EmbeddingCache(encoder))
    result = calibrate(support_pairs(gold, checker))
    result["encoder"] = choice.model
    emit(result, save, json_out, settings)
    if not json_out:
        chosen, held = result["chosen"], result["held_out"]
        typer.echo(f"threshold {chosen['threshold']}: tuning balanced accuracy {chosen['balanced_accuracy']}, "
                   f"held out {held['balanced_accuracy']} (supported kept {held['supported_kept']}, "
                   f"unsupported removed {held['unsupported_removed']})")
