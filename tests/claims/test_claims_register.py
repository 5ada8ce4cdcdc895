"""The claim register: every comparison names arms that its grid really trains."""
import dataclasses

import pytest

from polyattn.claims import REGISTER, Arm, Comparison, RegisteredClaim, claim
from polyattn.experiments import GRIDS


def _configs(grid):
    return [dataclasses.asdict(c) for c in GRIDS[grid]("book")]


@pytest.mark.parametrize("cid", sorted(REGISTER))
def test_every_arm_of_every_comparison_is_a_set_of_runs_its_grid_trains(cid):
    for comp in REGISTER[cid].comparisons:
        for arm in (comp.candidate, comp.baseline):
            assert arm.grid in GRIDS, f"{cid}/{comp.id}: unknown grid {arm.grid}"
            hits = [c for c in _configs(arm.grid) if arm.matches(c)]
            keys = {(tuple(str(c[f]) for f in comp.pool_over), c["seed"]) for c in hits}
            cells = {k[0] for k in keys}
            assert len(hits) == len(keys) >= 3 * len(cells), f"{cid}/{comp.id}: arm {arm} picks {len(hits)} runs"


@pytest.mark.parametrize("cid", sorted(REGISTER))
def test_the_two_arms_of_a_comparison_are_different_runs(cid):
    for comp in REGISTER[cid].comparisons:
        a = {(c["seed"], c["experiment"]) for c in _configs(comp.candidate.grid) if comp.candidate.matches(c)}
        b = {(c["seed"], c["experiment"]) for c in _configs(comp.baseline.grid) if comp.baseline.matches(c)}
        if comp.candidate.grid == comp.baseline.grid:
            pick = [c for c in _configs(comp.candidate.grid)
                    if comp.candidate.matches(c) and comp.baseline.matches(c)]
            assert not pick, f"{cid}/{comp.id}: an arm's runs are also the other arm's"
        assert a and b


def test_a_bad_expectation_or_margin_is_refused_in_one_line():
    arm = Arm("vit_table1", {"activation": "softmax"})
    with pytest.raises(ValueError, match="expect must be one of"):
        Comparison("x", "x", arm, arm, "matches")
    comp = Comparison("x", "x", arm, arm, "equivalent")
    with pytest.raises(ValueError, match="margin must be positive"):
        RegisteredClaim("c", "c", "s", "04_vit", (comp,), margin=0)
    with pytest.raises(ValueError, match="repeated comparison ids"):
        RegisteredClaim("c", "c", "s", "04_vit", (comp, comp), margin=1)
    with pytest.raises(ValueError, match="unknown claim 'nope'"):
        claim("nope")


@pytest.mark.parametrize("cid", sorted(REGISTER))
def test_the_chapter_of_a_claim_declares_every_grid_the_claim_reads(cid):
    """A chapter re-executes when the records it declares change; a claim it delivers must not
    read a grid it does not declare, or new records would leave the page stale."""
    from pathlib import Path

    from polyattn.book.notebooks import declared_results, read_notebook

    claim = REGISTER[cid]
    nb = read_notebook(Path(__file__).resolve().parents[2] / "chapters" / f"{claim.chapter}.md")
    missing = set(claim.grids) - set(declared_results(nb))
    assert not missing, f"{claim.chapter} delivers {cid} but does not declare {sorted(missing)} in its metadata"
