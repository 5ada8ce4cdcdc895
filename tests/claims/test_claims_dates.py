"""Pre-registration that can be checked: each claim's commit in the register against its runs."""
import pytest

from polyattn.analysis.stats import binomial_interval
from polyattn.claims import REGISTER
from polyattn.claims.dates import first_observable, registered_at


@pytest.mark.parametrize("cid", sorted(REGISTER))
def test_a_claim_is_registered_before_its_comparisons_could_be_seen_or_says_otherwise(cid):
    claim = REGISTER[cid]
    when = registered_at(cid)
    if when is None:
        pytest.skip("no git history here, or the claim is not committed yet")
    seen = first_observable(claim)
    if seen is not None and seen < when:
        assert claim.registered_after, (
            f"claim {cid!r} was registered at {when} but its first comparison could be seen at {seen}; "
            f"give it a registered_after note that says so")


def test_the_exact_binomial_interval():
    lo, hi = binomial_interval(0, 5)
    assert lo == 0 and hi == pytest.approx(0.5218, abs=1e-4)
    lo, hi = binomial_interval(5, 5)
    assert hi == 1 and lo == pytest.approx(0.4782, abs=1e-4)
    lo, hi = binomial_interval(2, 10)
    assert lo == pytest.approx(0.0252, abs=1e-4) and hi == pytest.approx(0.5561, abs=1e-4)
    with pytest.raises(ValueError, match="0 <= k <= n"):
        binomial_interval(6, 5)
