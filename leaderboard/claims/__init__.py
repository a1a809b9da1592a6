"""A paper's claims (leaderboard/papers/<slug>.yaml) joined with stored runs -> a verdict each.

model: the claims file's schema; load, validate: reading it; statistics, judge: a criterion's interval; claim_judge,
evaluate: verdicts against the store; reference: the verdict lock's file; overview, markers, cost: what pages show.
"""
# ruff: noqa: F401 - the package's names, where `from leaderboard.claims import X` finds them

from leaderboard.claims.cells import claim_groups, group_cells, paper_cells
from leaderboard.claims.claim_judge import ClaimValues, claim_values
from leaderboard.claims.evaluate import NO_HARM, evaluate_paper
from leaderboard.claims.judge import CellStat, Judged, abs_correlation, paired_gaps, seeds_holding
from leaderboard.claims.load import check_all, load_paper, uncontrolled
from leaderboard.claims.markers import Marker, paper_markers
from leaderboard.claims.model import (
                                      CPU_SCALES,
                                      FIDELITIES,
                                      INTERVALS,
                                      KINDS,
                                      MIN_TRACKING_SETTINGS,
                                      ORDERING_KEYS,
                                      RATE_AXES,
                                      SCALES,
                                      TRACKING_KEYS,
                                      CellGroup,
                                      Claim,
                                      Paper,
)
from leaderboard.claims.overview import PaperOverview, count_verdicts, overview, paper_overview
from leaderboard.claims.switched import credited_switches, switched_claims
from leaderboard.claims.verdict import HOLDS, PENDING, VERDICTS, Evidence, Verdict, claims_only
from leaderboard.queries import looks_like_hub_id
