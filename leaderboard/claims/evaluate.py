"""A paper's claims joined with stored runs: a verdict each, decided together.

Every claim is decided by an interval (claims/judge.py, claims/statistics.py): the 95 % interval of the quantity it
is about, from its per-seed values (t by default, `interval: bootstrap` per claim), against its margin. Reproduced:
the interval lies on the claimed side; not reproduced: on the other side; underpowered: it straddles the margin (the
card names the seeds that would decide it at 80 % power and their CPU cost). The paper's claims are adjusted together
for the family-wise error (Holm); controls and checks keep their own level. A claim whose quantity has no seed noise
says why in `deterministic:` (its interval is the value).

Then, in this order:
* a positive control is judged against its own null first: one whose null also passes cannot show the effect;
* a claim gated by a positive control that failed is inconclusive (its world could not have shown the effect);
* a claim that also holds on its negative control is uninformative: it cannot tell the effect from its absence;
* a claim that still holds with a credited method switched off (claims/switched.py) is uninformative: the paper's
  mechanism is not what makes it hold;
* a no-harm claim reads "no-harm holds" or "no-harm fails", never counted among the effects.

Verdicts: reproduced, not reproduced, partially, underpowered, uninformative, inconclusive, no-harm holds / fails,
not run, insufficient seeds. Each states the scale it was measured at (paper-scale | cpu-full | cpu-reduced) and, in
words, how our setting differs from the paper's.
"""

from __future__ import annotations

from dataclasses import replace

from bench.registry import Registry
from bench.store import Store
from leaderboard.claims.claim_judge import ClaimJudge
from leaderboard.claims.model import Paper
from leaderboard.claims.statistics import holm, holm_level
from leaderboard.claims.stored import PaperRuns
from leaderboard.claims.switched import switched_claims
from leaderboard.claims.verdict import HOLDS, PENDING, Verdict

NO_HARM = {"reproduced": "no-harm holds", "partially": "no-harm holds", "not reproduced": "no-harm fails"}


def evaluate_paper(paper: Paper, store: Store, registry: Registry, seeds: int | None = None) -> list[Verdict]:
    """A verdict per control, claim and check (in that order), decided as the module docstring says."""
    empty = store.is_empty()  # a fresh checkout: every claim is "not run" (the lock shows), nothing to query
    runs = PaperRuns(store, registry)
    if not empty:
        runs.read_paper(paper, seeds)  # one query for the paper, not one per claim, control and switch
    judges = [ClaimJudge(claim, store, registry, seeds or claim.seeds, paper.slug, empty, runs)
              for claim in paper.claims]
    verdicts = _holm([j.verdict() for j in judges], judges)
    verdicts = [replace(v, detail=f"sanity check, cannot fail by construction ({v.claim.why}); {v.detail}")
                if v.claim.role == "check" else v for v in verdicts]
    verdicts = [_against_control(v, store, registry, seeds, empty, runs)
                if v.claim.control and v.claim.role == "control" else v for v in verdicts]
    gate = {gated: v for v in verdicts if v.claim.role == "control" for gated in v.claim.gates}
    verdicts = [_gated(v, gate[v.claim.id]) if v.claim.id in gate else v for v in verdicts]
    verdicts = [_against_control(v, store, registry, seeds, empty, runs)
                if v.claim.control and v.claim.role != "control" else v for v in verdicts]
    verdicts = [_switched_off(v, paper, store, registry, seeds, runs) if v.claim.role == "claim" else v
                for v in verdicts]
    return [_as_no_harm(v) if v.claim.no_harm else v for v in verdicts]


def _holm(verdicts: list[Verdict], judges: list[ClaimJudge]) -> list[Verdict]:
    """The paper's claims re-decided at their Holm-adjusted p-values (controls and checks keep their own level)."""
    family = [i for i, v in enumerate(verdicts) if v.claim.role == "claim" and v.judged is not None]
    pvalues = [verdicts[i].judged.decision.p for i in family]
    adjusted = holm(pvalues)
    out = list(verdicts)
    for k, i in enumerate(family):
        out[i] = judges[i].settled(verdicts[i].judged, adjusted[k], len(family), holm_level(pvalues, k))
    return out


def _as_no_harm(verdict: Verdict) -> Verdict:
    return replace(verdict, verdict=NO_HARM.get(verdict.verdict, verdict.verdict))


def _switched_off(verdict: Verdict, paper: Paper, store: Store, registry: Registry, seeds: int | None,
                  runs: PaperRuns | None = None) -> Verdict:
    """A claim that holds is judged again with each credited method switched off: if it still holds under any
    switch, the paper's mechanism is not what makes it hold, and it is uninformative."""
    variants = switched_claims(verdict.claim, paper, registry)
    if not variants or verdict.verdict not in HOLDS:
        return verdict
    results = [(switch, ClaimJudge(c, store, registry, seeds or verdict.claim.seeds, runs=runs).verdict())
               for switch, c in variants]
    if any(v.verdict in PENDING for _, v in results):
        missing = ", ".join(s.label() for s, v in results if v.verdict in PENDING)
        return replace(verdict, switched="not run", detail=f"switched off not run yet ({missing}): "
                                                            f"`bench reproduce --controls` runs it; {verdict.detail}")
    held = [(s, v) for s, v in results if v.verdict in HOLDS]
    if held:
        s, v = held[0]
        return replace(verdict, verdict="uninformative", switched="holds",
                       detail=f"the claim still holds with the method switched off ({s.label()}: {v.ours_text}; "
                              f"{v.detail.split('; measured at')[0]}): the paper's mechanism is not what makes it "
                              f"hold; the claim's own criterion gave {verdict.verdict}: {verdict.detail}")
    shown = "; ".join(f"{s.label()}: {v.verdict}" for s, v in results)
    return replace(verdict, switched="fails", detail=f"switched off, it fails as it must ({shown}); {verdict.detail}")


def _against_control(verdict: Verdict, store: Store, registry: Registry, seeds: int | None,
                     empty: bool = False, runs: PaperRuns | None = None) -> Verdict:
    """The claim's verdict in the light of its negative control: a claim that also holds where it must not is
    uninformative; the detail says how the control came out either way."""
    claim = verdict.claim
    control = ClaimJudge(claim.negative_control(), store, registry, seeds or claim.seeds, empty=empty,
                         runs=runs).verdict()
    cells = ", ".join(g.label() for g in claim.control)
    if control.verdict in PENDING:
        note = f"negative control ({cells}) not run yet: `bench reproduce --controls` runs it"
        return replace(verdict, detail=f"{note}; {verdict.detail}", control="not run")
    criterion = control.detail.split("measured at")[0].rstrip("; ")
    shown = control.ours_text if claim.kind in ("bound", "ordering") else f"{cells}: {control.ours_text}"  # labelled
    measured = f"{shown}: {criterion}" if criterion else shown
    if control.verdict in HOLDS and verdict.verdict in HOLDS:
        return replace(verdict, verdict="uninformative", control="passes",
                       detail=f"the claim also holds on its negative control ({claim.control_why}), where it must "
                              f"not ({measured}): it cannot tell the effect from its absence; the claim's own "
                              f"criterion gave {verdict.verdict}: {verdict.detail}")
    outcome = "passes" if control.verdict in HOLDS else "fails"
    note = ("negative control fails as it must" if outcome == "fails" else "negative control also passes") + \
        f" ({measured})"
    return replace(verdict, detail=f"{note}; {verdict.detail}", control=outcome)


def _gated(verdict: Verdict, control: Verdict) -> Verdict:
    """The claim's verdict in the light of its world's positive control."""
    if control.verdict in ("not reproduced", "partially", "uninformative", "underpowered") and \
            verdict.verdict not in PENDING:
        why = control.detail.split("; measured at")[0]
        return replace(verdict, verdict="inconclusive",
                       detail=f"positive control {control.claim.id} failed ({why}): this world cannot show the "
                              f"effect; the claim's own criterion gave {verdict.verdict}: {verdict.detail}")
    if control.verdict in PENDING and verdict.verdict not in PENDING:
        return replace(verdict, detail=f"positive control {control.claim.id} not run yet; {verdict.detail}")
    return verdict
