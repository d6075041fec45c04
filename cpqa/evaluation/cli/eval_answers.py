"""``cpqa eval support`` (the answer's support threshold, set on BioASQ dev data) and ``cpqa eval answers``
(quote precision, snippet hit@5, abstention and removed sentences of the answerer against BioASQ gold snippets)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from cpqa.cli.common import OPTION, emit, fail, pipeline_options

RAW_HELP = "folder of BioASQ golden files (e.g. ../shared/data/mirage/rawdata/bioasq)"
DEV_HELP = "dev question ids (JSONL with id; e.g. ../shared/data/bioasq/dev_questions.jsonl)"


def _gold(raw: Path, questions: Path) -> list:
    """The BioASQ dev questions with gold snippets, or a one-line error."""
    from cpqa.evaluation.data.bioasq_gold import bioasq_gold

    try:
        return bioasq_gold(raw, questions)
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc))


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
    from cpqa.evaluation.evaluations.support import calibrate, support_pairs
    from cpqa.models.encoders import EmbeddingCache, load_encoder

    settings = get_settings()
    gold = _gold(raw, questions)
    gold = random.Random(13).sample(gold, min(limit or len(gold), len(gold)))
    encoder, choice = load_encoder("passage_retriever", settings)
    checker = SupportChecker(EmbeddingCache(encoder))
    result = calibrate(support_pairs(gold, checker))
    result["encoder"] = choice.model
    emit(result, save, json_out, settings)
    if not json_out:
        chosen, held = result["chosen"], result["held_out"]
        typer.echo(
            f"threshold {chosen['threshold']}: tuning balanced accuracy {chosen['balanced_accuracy']}, "
            f"held out {held['balanced_accuracy']} (supported kept {held['supported_kept']}, "
            f"unsupported removed {held['unsupported_removed']})"
        )


def answers(
    questions: Path = typer.Option(
        ...,
        "--questions",
        help="BioASQ dev questions (JSONL with id and question; e.g. ../shared/data/bioasq/dev_cancer_questions.jsonl)",
    ),
    raw: Path = typer.Option(Path("../shared/data/mirage/rawdata/bioasq"), "--raw", help=RAW_HELP),
    answers_file: list[Path] = typer.Option(
        [],
        "--answers",
        help="also score answers another build wrote with "
        "`cpqa ask --questions FILE --json` on the same FILE (NAME=PATH)",
    ),
    naive: bool = typer.Option(True, "--naive/--no-naive", help="score the naive baseline too"),
    without_prior: bool = typer.Option(
        False,
        "--without-prior",
        help="also run the pipeline without the patient-mode prior (preclinical_demotion 0), to measure it",
    ),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="first N questions with gold snippets"),
    option: Optional[list[str]] = OPTION,
    blind: Optional[Path] = typer.Option(
        None,
        "--blind",
        help="also write every system's first sentences of the exact-answer questions here, shuffled with the system "
        "hidden, for a judge (then `cpqa eval blind DIR`)",
    ),
    save: Optional[Path] = typer.Option(None, "--save", help="also write the JSON result here"),
    json_out: bool = typer.Option(False, "--json", help="print the JSON result"),
) -> None:
    """Quote precision, snippet hit@5, abstention and removed sentences against BioASQ gold snippets; --option sets
    any pipeline option for the pipeline's run (a variant of the product, e.g. --option chooser=false)."""
    import statistics

    from cpqa.config import get_settings
    from cpqa.evaluation.evaluations.answers import read_answers, run_naive, run_pipeline, summarise
    from cpqa.sources.jsonl import read_question_texts
    from cpqa.pipeline import Pipeline

    settings = get_settings()
    gold = _gold(raw, questions)
    gold = gold[:limit] if limit else gold
    asked = read_question_texts(questions)
    given: dict[str, Path] = {}
    for item in answers_file:
        name, _, where = str(item).partition("=")
        if not where:
            fail(f"--answers takes NAME=PATH, got {item}")
        given[name] = Path(where)
    result: dict = {"questions_file": str(questions), "questions": len(gold), "profile": None, "systems": {}}
    result["options"] = option or []
    scored: dict[str, list[dict]] = {}
    with Pipeline(settings, pipeline_options(settings, None, option)) as pipeline:
        result["profile"] = pipeline.profile
        result["answerer"] = pipeline.answerer.choice.model
        scored["pipeline"], seconds = run_pipeline(pipeline, gold)
        if without_prior:
            scored["pipeline_without_prior"] = run_pipeline(pipeline, gold, preclinical_demotion=0)[0]
        if naive:
            scored["naive_baseline"] = run_naive(pipeline, gold)
        for name, path in given.items():
            try:
                scored[name] = read_answers(path, gold, asked, pipeline)
            except (OSError, ValueError) as exc:
                fail(str(exc))
    result["systems"] = {name: summarise(rows) for name, rows in scored.items()}
    result["systems"]["pipeline"]["seconds_p50"] = round(statistics.median(seconds), 2)
    if blind:
        from cpqa.evaluation.evaluations.blind import write_items

        result["blind_items"] = write_items(blind, scored)
    emit(result, save, json_out, settings)
    if not json_out:
        for name, row in result["systems"].items():
            typer.echo(
                f"{name}: quote precision {row['quote_precision']}, snippet hit@5 {row['snippet_hit_at_5']}, "
                f"abstention {row['abstention_rate']}, removed {row['unsupported_removed']}; first sentence "
                f"addresses the question {row['first_sentence_addresses']}, says it does not answer directly "
                f"{row['says_not_direct']}, topic as answer {row['topic_as_answer']}"
            )


def safety(
    phrasings: list[Path] = typer.Option(
        [],
        "--phrasings",
        help="phrasing set JSON (urgent, as a list or per category; dosing, interaction, decision, ordinary; "
        "languages; e.g. tests/data/triage_phrasings_heldout.json); repeatable",
    ),
    cross_validate: bool = typer.Option(
        False, "--cross-validate", help="also measure the meaning screen's methods on the triage tool's own phrasings"
    ),
    referral_paths: bool = typer.Option(
        False,
        "--referral-paths",
        help="also ask every referral phrasing through the pipeline (the data home's), as asked and with no evidence "
        "reachable, and report the referral by answer path",
    ),
    save: Optional[Path] = typer.Option(None, "--save", help="also write the JSON result here"),
    json_out: bool = typer.Option(False, "--json", help="print the JSON result"),
) -> None:
    """Triage per category (rules; rules and meaning by each method), the referrals, and other languages offline,
    on phrasing sets; with --referral-paths, the referral on every answer path."""
    from cpqa.config import get_settings
    from cpqa.evaluation.evaluations.triage import cross_validate as validate
    from cpqa.evaluation.evaluations.triage import has_english_phrasings, language_scores, screen_with, triage_scores
    from cpqa.models.encoders import load_encoder
    from cpqa.options import SafetyOptions
    from cpqa.safety.meaning import MeaningTriage

    if not phrasings and not cross_validate:
        fail("give --phrasings FILE (repeatable) or --cross-validate")
    settings = get_settings()
    encoder, choice = load_encoder("sentence_embedder", settings)
    meaning = MeaningTriage(encoder)
    screens = {"rules": screen_with()}
    for method in ("prototypes", "classifier", "either"):
        screens[f"rules_and_{method}"] = screen_with(meaning, SafetyOptions(triage_method=method))
    result: dict = {"encoder": choice.model, "default_method": SafetyOptions().triage_method, "sets": {}}
    for path in phrasings:
        try:
            scores: dict = {}
            if has_english_phrasings(path):
                scores = {name: triage_scores(path, screen) for name, screen in screens.items()}
            shipped = screens[f"rules_and_{SafetyOptions().triage_method}"]
            scores["languages_offline"] = language_scores(path, shipped)
            if referral_paths:
                scores["referral_paths"] = _referral_paths(settings, path)
        except (OSError, ValueError, KeyError) as exc:
            fail(f"{path}: {exc}")
        result["sets"][path.name] = scores
    if cross_validate:
        result["cross_validation"] = validate(encoder)
    emit(result, save, json_out, settings)
    if not json_out:
        for name, scores in result["sets"].items():
            for screen, score in scores.items():
                if screen not in ("languages_offline", "referral_paths"):
                    urgent, referral = score["urgent"], score["referrals"]["any"]
                    typer.echo(
                        f"{name} {screen}: urgent recall {urgent['recall']} precision {urgent['precision']}, "
                        f"referrals recall {referral['recall']} precision {referral['precision']}"
                    )


def _referral_paths(settings, path: Path) -> dict:
    """``referral_paths`` over the data home's pipeline (offline unless a model is configured)."""
    from cpqa.cli.ask import require_records
    from cpqa.evaluation.evaluations.referral_paths import referral_paths
    from cpqa.pipeline import Pipeline

    require_records(settings)
    with Pipeline(settings) as pipeline:
        return referral_paths(pipeline, path)


def blind(
    folder: Path = typer.Argument(
        ..., help="the folder `cpqa eval answers --blind` wrote, with the judge's labels.jsonl"
    ),
    save: Optional[Path] = typer.Option(None, "--save", help="also write the JSON result here"),
    json_out: bool = typer.Option(False, "--json", help="print the JSON result"),
) -> None:
    """Each system's first sentences naming an exact answer as a blind judge read them, beside the ruler."""
    from cpqa.config import get_settings
    from cpqa.evaluation.evaluations.blind import judged

    try:
        result = judged(folder)
    except (OSError, ValueError) as exc:
        fail(str(exc))
    emit(result, save, json_out, get_settings())
    if not json_out:
        for name, row in result.items():
            typer.echo(
                f"{name}: {row['items']} items, judged to name an exact answer {row['judged_names_exact']}, ruler "
                f"{row['ruler_names_exact']} (recall {row['ruler_recall']}, precision {row['ruler_precision']})"
            )
