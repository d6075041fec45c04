"""The reliability table of docs/results.md ("Reliability, safety, security (issue 9)"): every fault on every
outside call, the service-level outages, bad inputs, personal details and load, measured in throw-away worlds built
from a source store."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from cpqa.evaluation.evaluations.reliability import (
    CaseResult,
    Topic,
    World,
    fault_order,
    run_fault,
    run_plain,
    run_refused,
)
from cpqa.evaluation.data.reliability_inputs import InputResult, PHIResult, run_bad_inputs, run_phi
from cpqa.evaluation.evaluations.reliability_load import LOAD_TOPIC_SIZE, LoadResult, run_load
from cpqa.testing.routes import CALLS, FAULTS


OUTAGES = {
    ("ncbi", "refused"): "E-utilities refused (esearch, efetch PubMed and PMC)",
    ("claude", "refused"): "Anthropic refused (rewrite and answer calls)",
    ("vector_index", "missing"): "vector index missing (E1)",
    ("none", "none"): "no fault (after the faults above)",
}


class ReliabilityReport(BaseModel):
    faults: list[CaseResult]  # per outside call x fault
    outages: list[CaseResult]  # whole services refused, vector index missing, and a fault-free baseline
    bad_inputs: list[InputResult]
    phi: PHIResult
    load: LoadResult | None

    @property
    def summary(self) -> dict:
        survived = sum(c.survived for c in self.faults + self.outages)
        return {
            "faults_injected": len(self.faults) + len(self.outages),
            "faults_survived": survived,
            "bad_inputs_tried": len(self.bad_inputs),
            "bad_inputs_handled": sum(i.handled for i in self.bad_inputs),
            "phi_kinds_removed": len(self.phi.kinds_removed),
            "phi_values_leaked": sum(map(len, self.phi.leaked.values())),
            "load_held": bool(
                self.load
                and not self.load.deadlock
                and not self.load.errors
                and self.load.answered == self.load.questions
                and self.load.peak_departures_per_s <= self.load.rate_limit_per_s
                and self.load.peak_tolerant <= self.load.rate_limit_per_s
                and self.load.integrity_ok
                and not self.load.duplicate_rows
            ),
        }

    def markdown(self) -> str:
        cell = {(c.call, c.fault): ("survived" if c.survived else "FAILED") for c in self.faults}
        lines = ["| outside call | " + " | ".join(FAULTS) + " |", "|---" * (len(FAULTS) + 1) + "|"]
        lines += [f"| {call} | " + " | ".join(cell.get((call, f), "-") for f in FAULTS) + " |" for call in CALLS]
        lines += ["", "| outage | answered | recorded in trace | nothing cached | survived |", "|---|---|---|---|---|"]
        lines += [
            f"| {OUTAGES.get((c.call, c.fault), f'{c.call} {c.fault}')} | {c.answered} | {c.recorded} | "
            f"{c.cached_nothing} | {c.survived} |"
            for c in self.outages
        ]
        lines += ["", "| bad input | outcome | handled |", "|---|---|---|"]
        lines += [f"| {i.name} | {i.outcome[:70]} | {i.handled} |" for i in self.bad_inputs]
        lines += [
            "",
            f"Personal details removed ({len(self.phi.kinds_removed)} kinds): "
            f"{', '.join(self.phi.kinds_removed)}; values leaked to E-utilities, Anthropic, trace, answer or "
            f"logs: {sum(map(len, self.phi.leaked.values()))}.",
        ]
        if self.load:
            ld = self.load
            lines += [
                "",
                f"Load: {ld.questions} questions, {ld.concurrency} threads sharing one pipeline: "
                f"{ld.answered} answered in {ld.seconds:.1f} s, deadlock {ld.deadlock}; {ld.ncbi_requests} "
                f"E-utilities requests at {ld.mean_requests_per_s:g}/s, peak {ld.peak_requests_per_s} in any 1 s, "
                f"{ld.peak_tolerant} in any 0.8 s, {ld.peak_departures_per_s} let go by the limiter in any 1 s "
                f"(limit {ld.rate_limit_per_s:g}/s); store {ld.store_rows} rows, "
                f"{ld.duplicate_rows} duplicates, "
                f"integrity {'ok' if ld.integrity_ok else 'FAILED'}.",
            ]
        return "\n".join(lines)


def run_all(source_store: Path, workdir: Path, *, load: bool = True, rate: float = 10.0) -> ReliabilityReport:
    topic = Topic(source_store)
    with World(topic, workdir / "faults") as world:
        outages = [run_refused(world, "ncbi")]
        faults = [run_fault(world, call, fault) for call, fault in fault_order()]
        outages += [run_refused(world, "claude"), run_plain(world)]
        phi = run_phi(world)
    with World(topic, workdir / "plain", claude=False, index=False) as world:
        outages.append(run_plain(world, "vector_index"))
        bad = run_bad_inputs(world)
    result = None
    if load:
        with World(Topic(source_store, size=LOAD_TOPIC_SIZE), workdir / "load", rate=rate) as world:
            result = run_load(world)
    return ReliabilityReport(faults=faults, outages=outages, bad_inputs=bad, phi=phi, load=result)
