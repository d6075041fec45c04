"""What a running process waits for a background build to make: looked for again once a minute, kept once found."""

from __future__ import annotations

from cpqa import looked_for
from cpqa.looked_for import LookedFor


def test_something_missing_is_looked_for_again_only_after_the_interval_and_kept_once_found(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(looked_for.time, "monotonic", lambda: now[0])
    built: list[str] = []
    calls = []

    def find():
        calls.append(now[0])
        return built[0] if built else None

    waiting = LookedFor(find, every=60.0)
    assert waiting.get() is None and waiting.get() is None and len(calls) == 1  # not asked again at once
    built.append("index")  # setup's background build finishes
    now[0] += 59.0
    assert waiting.get() is None and len(calls) == 1
    now[0] += 2.0
    assert waiting.get() == "index" and len(calls) == 2
    now[0] += 600.0
    assert waiting.get() == "index" and len(calls) == 2  # found: kept, never looked for again


def test_a_pipeline_s_patient_vectors_are_found_once_built_without_a_restart(tmp_path, monkeypatch):
    """``open_patient_vectors`` before ``cpqa ingest medquad`` has built the sentence vectors gives a lookup that
    finds them once they exist (the answer embedded patient sentences live until the process was restarted)."""
    from cpqa.config import get_settings
    from cpqa.passages import patient_vectors

    settings = get_settings(cpqa_home=tmp_path)
    opened: list[object] = []

    class Search:  # a PatientSearch's store is all the lookup reads
        store = object()

    class Cache:
        class encoder:
            name = "an encoder"

    monkeypatch.setattr(
        patient_vectors.PatientSentenceVectors, "open", classmethod(lambda cls, *args: opened[0] if opened else None)
    )
    lookup = patient_vectors.open_patient_vectors(settings, Search(), Cache(), 100)  # type: ignore[arg-type]
    assert lookup is not None and lookup.get() is None
    opened.append("vectors")
    monkeypatch.setattr(looked_for.time, "monotonic", lambda: 10**9)  # a minute and more later
    assert lookup.get() == "vectors"
    assert patient_vectors.open_patient_vectors(settings, None, Cache(), 100) is None  # type: ignore[arg-type]
