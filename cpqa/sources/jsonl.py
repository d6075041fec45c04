"""Reading evaluation inputs: JSONL files of typed records, where a bad line is an error naming its file and line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, TypeVar

from pydantic import BaseModel, Field

M = TypeVar("M", bound=BaseModel)


def read_records(
    path: Path | str,
    model: type[M],
    what: str,
    limit: int | None = None,
    prepare: Callable[[dict[str, Any], int], dict[str, Any]] | None = None,
) -> list[M]:
    """The first ``limit`` records of ``model`` in ``path`` (blank lines skipped); ``prepare`` may normalise each raw
    item (given its line number) before validation. ``what`` names a record in error messages."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{what} file not found: {path}")
    records: list[M] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                records.append(model.model_validate(prepare(item, number) if prepare else item))
            except (ValueError, AttributeError, TypeError) as exc:  # JSON and validation errors are ValueErrors
                raise ValueError(f"{path.name} line {number}: not a {what} ({exc.__class__.__name__})") from None
            if limit is not None and len(records) >= limit:
                break
    if not records:
        raise ValueError(f"{path.name}: no {what} records")
    return records


class _QuestionText(BaseModel):
    question: str = Field(min_length=1)


def read_question_texts(path: Path | str, limit: int | None = None) -> list[str]:
    """The question texts (``question`` or ``Question`` field) of a JSONL file, or of every ``.jsonl`` file in a
    folder, ``limit`` per file; other fields are ignored."""
    path = Path(path)
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    if not files:
        raise FileNotFoundError(f"no .jsonl question files in {path}")

    def prepare(item: dict[str, Any], number: int) -> dict[str, Any]:
        return {"question": str(item.get("question") or item.get("Question") or "").strip()}

    return [q.question for file in files for q in read_records(file, _QuestionText, "question", limit, prepare)]
