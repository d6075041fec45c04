"""``cpqa bench structure``'s counting: rooms, climbs back up to an earlier stage, returns to a room, and the
import arrows between packages."""

from __future__ import annotations

from cpqa.evaluation.benchmarks.structure import arrows, module_of, path_summary


def test_a_path_counts_its_rooms_climbs_and_returns_once_per_distinct_step():
    steps = [
        ("cpqa.pipeline", "cpqa.safety.screening"),
        ("cpqa.pipeline", "cpqa.rewrite.rewriter"),
        ("cpqa.pipeline", "cpqa.answer.answerer"),
        ("cpqa.answer.answerer", "cpqa.safety.screening"),  # climbs back up, and returns to a room
        ("cpqa.answer.answerer", "cpqa.safety.screening"),  # the same step again (a loop): counted once
        ("cpqa.answer.answerer", "cpqa.words"),  # a corridor, not a room
    ]
    summary = path_summary(steps)
    assert summary["rooms_entered"] == 4
    assert summary["steps"] == 4
    assert summary["climbs_back_up"] == 1
    assert summary["returns_to_a_room"] == 1
    assert summary["entries_per_room"]["cpqa.safety.screening"] == 2


def test_only_the_product_s_modules_are_rooms_and_no_stage_imports_a_later_one():
    import cpqa.pipeline

    assert module_of(cpqa.pipeline.__file__) == "cpqa.pipeline"
    assert module_of(__file__) is None
    drawn = arrows()
    assert drawn["modules"] > 100 and "answer -> passages" in drawn["arrows"]
    assert drawn["upward_arrows"] == {}
