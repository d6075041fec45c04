"""Pipeline options from outside Python: a deployment's TOML file and ``--option name=value`` assignments.

The file has one table per section of ``PipelineOptions`` (bare knob names at the top level are accepted too)::

    [documents]
    years = 10
    sources = ["D1", "D2"]

    [answer]
    mode = "clinician"

An assignment names a knob by its bare name; its value is read as the knob's type (``years=5``, ``hyde=true``,
``sources=D1,D3``, ``matryoshka_dim=none``). Assignments apply over the file, the file over the tuned defaults.
Unknown knobs and bad values stop with one line naming them (``OptionsError``), never a traceback.
"""

from __future__ import annotations

import difflib
import tomllib
import typing
from pathlib import Path
from typing import Any, Iterable

from pydantic import ValidationError

from cpqa.options import PipelineOptions

_NONE = {"none", "null", ""}


class OptionsError(ValueError):
    """An options file or assignment that cannot be used; the message says which and why."""


def knob_names() -> list[str]:
    return sorted(PipelineOptions().flat())


def _unknown(name: str) -> OptionsError:
    close = difflib.get_close_matches(name, knob_names(), n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    return OptionsError(f"unknown pipeline option {name!r}{hint}; `cpqa options` lists them")


def _annotation(name: str) -> Any:
    section = PipelineOptions.model_fields[PipelineOptions.section_of(name)].annotation
    return section.model_fields[name].annotation  # type: ignore[union-attr]


def parse_value(name: str, text: str) -> Any:
    """``text`` as the value of knob ``name``: None for an optional knob's ``none``, a tuple from a comma list;
    the rest is left to the section's validation (``"5"`` -> 5, ``"true"`` -> True)."""
    annotation = _annotation(name)
    args = typing.get_args(annotation)
    if type(None) in args and text.strip().lower() in _NONE:
        return None
    if typing.get_origin(annotation) is tuple or any(typing.get_origin(a) is tuple for a in args):
        return tuple(part.strip() for part in text.split(",") if part.strip())
    return text.strip()


def parse_assignments(assignments: Iterable[str]) -> dict[str, Any]:
    """``["years=5", "mode=clinician"]`` -> ``{"years": "5", "mode": "clinician"}`` (typed by ``parse_value``)."""
    knobs: dict[str, Any] = {}
    for assignment in assignments:
        name, sep, value = assignment.partition("=")
        name = name.strip()
        if not sep or not name:
            raise OptionsError(f"--option takes name=value, not {assignment!r}")
        try:
            PipelineOptions.section_of(name)
        except ValueError:
            raise _unknown(name) from None
        knobs[name] = parse_value(name, value)
    return knobs


def read_options_file(path: Path | str) -> dict[str, Any]:
    """The knobs a TOML options file sets, by bare name."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise OptionsError(f"options file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise OptionsError(f"options file {path} cannot be read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise OptionsError(f"options file {path} is not valid TOML: {exc}") from None
    knobs: dict[str, Any] = {}
    for key, value in data.items():
        if key in PipelineOptions.model_fields:
            if not isinstance(value, dict):
                raise OptionsError(f"options file {path}: [{key}] must be a table of knobs")
            items: Iterable[tuple[str, Any]] = value.items()
        else:
            items = [(key, value)]
        for name, knob in items:
            try:
                section = PipelineOptions.section_of(name)
            except ValueError:
                raise _unknown(name) from None
            if key in PipelineOptions.model_fields and section != key:
                raise OptionsError(f"options file {path}: {name!r} belongs in [{section}], not [{key}]")
            knobs[name] = tuple(knob) if isinstance(knob, list) else knob
    return knobs


def load_options(
    path: Path | str | None = None, assignments: Iterable[str] = (), base: PipelineOptions | None = None
) -> PipelineOptions:
    """``base`` (default: the tuned defaults) with the file's knobs, then the assignments, applied and validated."""
    knobs = read_options_file(path) if path is not None else {}
    knobs.update(parse_assignments(assignments))
    data = (base or PipelineOptions()).model_dump()
    for name, value in knobs.items():  # None is a value here (``matryoshka_dim=none``), not "keep"
        data[PipelineOptions.section_of(name)][name] = value
    try:
        return PipelineOptions.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}" for error in exc.errors(include_url=False)
        )
        raise OptionsError(f"invalid pipeline options: {problems}") from None
