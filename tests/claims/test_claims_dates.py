"""Pre-registration that can be checked: each claim's commit in the register against its runs."""
import pytest
from support.ci import skip_unless_ci

from polyattn.analysis.stats import binomial_interval
from polyattn.claims import REGISTER
from polyattn.claims.dates import first_observable, registered_at, registered_day


@pytest.mark.parametrize("cid", sorted(REGISTER))
def test_a_claim_is_registered_before_its_comparisons_could_be_seen_or_says_otherwise(cid):
    claim = REGISTER[cid]
    when = registered_at(cid)
    if when is None:
        skip_unless_ci("no git history here, or the claim is not committed yet")
    seen = first_observable(claim)
    if seen is not None and seen < when:
        assert claim.registered_after, (
            f"claim {cid!r} was registered at {when} but its first comparison could be seen at {seen}; "
            f"give it a registered_after note that says so")


@pytest.mark.parametrize("cid", sorted(REGISTER))
def test_every_claim_carries_its_registration_day(cid):
    from datetime import date

    assert REGISTER[cid].registered, f"claim {cid!r} has no registered date"
    assert date.fromisoformat(REGISTER[cid].registered) >= date(2026, 11, 1)


@pytest.mark.committed
def test_every_claims_registration_day_is_the_one_its_history_gives():
    """The day written in each claim is the day of the commit that first wrote its id into the
    register (or fixed its margin): a claim not yet committed is checked once it is."""
    days = {cid: registered_day(cid) for cid in REGISTER}
    if all(d is None for d in days.values()):
        skip_unless_ci("no git history here")
    wrong = {cid: (c.registered, days[cid]) for cid, c in REGISTER.items()
             if days[cid] is not None and c.registered != days[cid]}
    assert not wrong, f"registered (written, from history): {wrong}"


def test_a_registration_day_that_is_no_iso_date_is_refused():
    from polyattn.claims import Arm, Comparison, RegisteredClaim

    arm = Arm("vit_table1", {"activation": "softmax"})
    comp = Comparison("x", "x", arm, arm, "equivalent")
    with pytest.raises(ValueError, match="registered must be an ISO date"):
        RegisteredClaim("c", "c", "s", "04_vit", (comp,), margin=1, registered="3 December")
    assert RegisteredClaim("c", "c", "s", "04_vit", (comp,), margin=1, registered="2026-12-03").registered == "2026-12-03"


def test_the_exact_binomial_interval():
    lo, hi = binomial_interval(0, 5)
    assert lo == 0 and hi == pytest.approx(0.5218, abs=1e-4)
    lo, hi = binomial_interval(5, 5)
    assert hi == 1 and lo == pytest.approx(0.4782, abs=1e-4)
    lo, hi = binomial_interval(2, 10)
    assert lo == pytest.approx(0.0252, abs=1e-4) and hi == pytest.approx(0.5561, abs=1e-4)
    with pytest.raises(ValueError, match="0 <= k <= n"):
        binomial_interval(6, 5)
