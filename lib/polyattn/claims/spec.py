"""What a registered claim is: its statement, where it comes from, and the comparisons that test it.

A :class:`Comparison` names two arms of stored runs (grid, and the config fields that pick
each arm), the metric, and what the claim expects of the candidate against the baseline:

``"equivalent"``
    the candidate matches the baseline within ``margin`` (shown by TOST at ``alpha``);
``"worse"`` / ``"better"``
    the candidate differs from the baseline in that direction (paired test, Holm within the
    claim's family).

A comparison may carry a :class:`Gate`: the floor its baseline arm must clear (the level a model
without attention reaches on that task, computed by :mod:`polyattn.claims.floors`); a baseline
that does not clear it makes the comparison uninformative, and an arm split across it is read as
counts.  A check names what it *validates* (comparison ids, or ``tier:<name>``; none: every
primary of the claim).

Each comparison has a *role*: ``primary`` (what the claim's statement is about), ``check`` (a
control or condition that must hold for the design to test the claim; a contradicted check makes
the claim "not testable as designed", never "not supported") or ``description`` (shown beside
the claim, from a tier not designed to decide it or a neighbouring question; never judged). A comparison answers one question
and belongs to one claim; another claim may *cite* it (``cited_from``), reading its result from
the claim that owns it.

A :class:`RegisteredClaim` holds its comparisons, the margin and alpha they share, its logic
(``all``: every primary part must hold; ``any``: one is enough), the tier designed to decide it
(the other tiers are description), and where it comes from. The Holm family of a claim is its
own informative primary comparisons.  The date a claim's margin and rule were fixed is its
``registered`` field, which the tests check against the repository history
(:mod:`polyattn.claims.dates`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Mapping, Optional

from .rule import FORMS

EXPECTATIONS = ("equivalent", "worse", "better")
ROLES = ("primary", "check", "description")
#: How a metric is compared: as it is, or as log10 (errors spanning orders of magnitude; the
#: margin is then a log10 factor).
TRANSFORMS = ("identity", "log10")


@dataclass(frozen=True)
class Arm:
    """One arm of a comparison: the runs of ``grid`` whose config has these field values."""

    grid: str
    fields: Mapping[str, object]

    def matches(self, config: Mapping) -> bool:
        return all(config.get(k) == v for k, v in self.fields.items())


@dataclass(frozen=True)
class Gate:
    """The floor a comparison's baseline must clear for the comparison to say anything: ``name`` in
    words ("the count-based trigram"), ``level`` in the metric's display unit (a value from
    :mod:`polyattn.claims.floors`), ``band`` how far beyond it a seed must be.  A seed *learned*
    when it is better than ``level`` by more than ``band`` (below it, for a metric where lower is
    better).  ``within_of``: optionally, (field, value, tolerance): the baseline must also be
    within ``tolerance`` of its own arm's result with ``field`` set to ``value`` (the length
    sweep's baseline within 0.15 bits/char of its T = 64 result); ``within_name`` names that
    reference in words ("T = 64")."""

    name: str
    level: float
    band: float = 0.0
    within_of: Optional[tuple] = None
    within_name: str = ""

    def __post_init__(self):
        if not self.name.strip():
            raise ValueError("a gate needs the floor's name in words, e.g. 'the count-based bigram'")
        if self.band < 0:
            raise ValueError(f"gate {self.name!r}: the band must be non-negative, got {self.band}")
        if self.within_of is not None and len(self.within_of) != 3:
            raise ValueError(f"gate {self.name!r}: within_of reads (field, value, tolerance), got {self.within_of!r}")


@dataclass(frozen=True)
class Comparison:
    """Candidate against baseline, paired by seed, on one metric."""

    id: str
    label: str  # in words, for tables ("x³/√N − softmax, unclipped")
    candidate: Arm
    baseline: Arm
    expect: str  # one of EXPECTATIONS
    metric: str = "test_acc"
    tier: str = "main"  # which tier of evidence this comparison belongs to
    transform: str = "identity"
    #: config fields whose cells are pooled: pairs are formed within each cell, and the estimate
    #: removes each cell's mean (fixed effects; ``n - cells`` degrees of freedom)
    pool_over: tuple = ()
    #: this comparison's chance level, when it differs from the claim's (tasks of one benchmark)
    chance: Optional[float] = None
    #: this comparison's chance band and margin, when its metric differs from the claim's
    chance_band: Optional[float] = None
    margin: Optional[float] = None
    #: a level at which the baseline has nothing for the candidate to improve on (no attention sink
    #: to mitigate): a baseline within the chance band of it makes the comparison uninformative
    baseline_null: Optional[float] = None
    #: "primary" (the claim is about it), "check" (a validity check of the design) or "description"
    role: str = "primary"
    #: "claim_id:comparison_id" of the comparison this one cites, when another claim owns the runs'
    #: question (its result, with that claim's Holm correction, is read from there)
    cited_from: Optional[str] = None
    #: the floor the baseline must clear (None: the claim's gate, if any)
    gate: Optional[Gate] = None
    #: for a check: the comparisons it validates (their ids, or "tier:<name>"); empty: every primary
    validates: tuple = ()
    #: for a description: the id of the comparison it is shown beside in the claim's summary
    shown_with: Optional[str] = None

    def __post_init__(self):
        if self.validates and self.role != "check":
            raise ValueError(f"comparison {self.id!r}: only a check validates other comparisons")
        if isinstance(self.validates, str):
            raise ValueError(f"comparison {self.id!r}: validates is a tuple of ids, e.g. ('reaction',)")
        if self.expect not in EXPECTATIONS:
            raise ValueError(f"comparison {self.id!r}: expect must be one of {EXPECTATIONS}, got {self.expect!r}")
        if self.transform not in TRANSFORMS:
            raise ValueError(f"comparison {self.id!r}: transform must be one of {TRANSFORMS}, got {self.transform!r}")
        if self.margin is not None and not self.margin > 0:
            raise ValueError(f"comparison {self.id!r}: the margin must be positive, got {self.margin}")
        if self.role not in ROLES:
            raise ValueError(f"comparison {self.id!r}: role must be one of {ROLES}, got {self.role!r}")
        if self.cited_from is not None and self.cited_from.count(":") != 1:
            raise ValueError(f"comparison {self.id!r}: cited_from must read 'claim_id:comparison_id', "
                             f"got {self.cited_from!r}")


def vs(grid: str, candidate: dict, baseline: dict, cid: str, label: str, expect: str, *,
       baseline_grid: Optional[str] = None, **kw) -> Comparison:
    """A comparison of the runs of ``grid`` matching ``candidate`` against those matching
    ``baseline`` (in ``baseline_grid`` when given); ``kw`` sets the other fields."""
    return Comparison(cid, label, Arm(grid, candidate), Arm(baseline_grid or grid, baseline), expect, **kw)


@dataclass(frozen=True)
class Claim:
    """What every claim carries, whether comparisons of runs decide it (:class:`RegisteredClaim`) or a
    measurement (:class:`MeasuredClaim`): its id, statement, source and chapter, and where the book
    shows it.  The answer table, the verdict table and the forest plot's groups are read from these
    fields (:mod:`polyattn.claims.register`), never kept as lists of their own."""

    id: str
    statement: str  # the claim in words (Markdown with maths)
    source: str  # paper section or reviewer
    chapter: str  # "NN_name"
    #: the answer table's short name (at most 42 characters: one line of the table); None: not in it
    headline: Optional[str] = field(default=None, kw_only=True)
    #: the claim's place in the answer table, in the order a reader asks (needs a headline)
    answer_row: Optional[int] = field(default=None, kw_only=True)
    #: the claim's place in the intro's verdict table; None: not in it
    verdict_row: Optional[int] = field(default=None, kw_only=True)
    #: the short name of its experiment for the forest plot's groups ("ViT", "MQAR"); None: its chapter's
    topic: Optional[str] = field(default=None, kw_only=True)

    def __post_init__(self):
        if (self.headline is None) != (self.answer_row is None):
            raise ValueError(f"claim {self.id!r}: a claim in the answer table needs both a headline and an "
                             f"answer_row (got headline {self.headline!r}, answer_row {self.answer_row!r})")
        if self.headline is not None and len(self.headline) > 42:
            raise ValueError(f"claim {self.id!r}: the headline {self.headline!r} is longer than 42 characters; "
                             "shorten it so that its row fits on one line")


@dataclass(frozen=True)
class RegisteredClaim(Claim):
    comparisons: tuple
    margin: float  # in the metric's display units (points of accuracy, bits/char, ...)
    alpha: float = 0.05
    #: "all": every primary part must hold (one contradicting part fails the claim); "any": one is enough
    logic: str = "all"
    #: the tier designed to decide the claim (the others are shown as description); None: every tier
    deciding_tier: Optional[str] = None
    #: said when the margin or rule was fixed after some of its runs were seen
    registered_after: Optional[str] = None
    #: the chance level of the task in the metric's display unit (majority-class rate of the test
    #: data, the unigram model's bits/char, ...); a run within ``chance_band`` of it, or worse,
    #: did not learn
    chance: Optional[float] = None
    chance_band: float = 2.0
    #: said when the chance level or band was written down after some of the runs it judges
    chance_registered_after: Optional[str] = None
    #: the data, model and scale, in words, for every table and sentence that states the verdict
    scale: str = ""
    #: the commit that first fixed this margin in a chapter or analysis module, for claims whose
    #: margin predates the register (the registration date is then that commit's)
    margin_commit: Optional[str] = None
    notes: tuple = field(default_factory=tuple)
    #: the day the claim was registered (ISO date): the day of the commit that first wrote its id into
    #: the register, or of its ``margin_commit`` (checked against the history by :mod:`polyattn.claims.dates`)
    registered: Optional[str] = None
    #: the floor every comparison's baseline must clear (a comparison's own gate overrides it)
    gate: Optional[Gate] = None
    #: said when the deciding tier was chosen after some of its data were seen
    deciding_tier_after: Optional[str] = None
    #: said when the gates were written down after some of the runs they judge
    gate_registered_after: Optional[str] = None

    def __post_init__(self):
        super().__post_init__()
        if self.registered is not None:
            try:
                date.fromisoformat(self.registered)
            except (TypeError, ValueError):
                raise ValueError(f"claim {self.id!r}: registered must be an ISO date such as '2026-12-01', "
                                 f"got {self.registered!r}") from None
        ids = [c.id for c in self.comparisons]
        if len(set(ids)) != len(ids):
            raise ValueError(f"claim {self.id!r} has repeated comparison ids")
        if not self.margin > 0:
            raise ValueError(f"claim {self.id!r}: the margin must be positive, got {self.margin}")
        if self.logic not in ("all", "any"):
            raise ValueError(f"claim {self.id!r}: logic must be 'all' or 'any', got {self.logic!r}")
        if not any(c.role == "primary" for c in self.comparisons):
            raise ValueError(f"claim {self.id!r} has no primary comparison: name what the claim is about")
        tiers = {c.tier for c in self.comparisons}
        for c in self.comparisons:
            for v in c.validates:
                if v.startswith("tier:") and v[5:] not in tiers or not v.startswith("tier:") and v not in ids:
                    raise ValueError(f"claim {self.id!r}: check {c.id!r} validates {v!r}, which names no comparison "
                                     f"or tier of the claim (ids {ids}, tiers {sorted(tiers)})")
            if c.shown_with is not None and c.shown_with not in ids:
                raise ValueError(f"claim {self.id!r}: {c.id!r} is shown with {c.shown_with!r}, not a comparison of it")

    #: a claim decided by comparisons of stored runs is never machine-dependent
    machine_dependent = False

    @property
    def primary(self) -> tuple:
        return tuple(c for c in self.comparisons if c.role == "primary")

    @property
    def checks(self) -> tuple:
        return tuple(c for c in self.comparisons if c.role == "check")

    @property
    def descriptions(self) -> tuple:
        return tuple(c for c in self.comparisons if c.role == "description")

    @property
    def grids(self) -> tuple:
        return tuple(sorted({a.grid for c in self.comparisons for a in (c.candidate, c.baseline)}))


@dataclass(frozen=True)
class Finding:
    """What a measured claim's measurement gives: the form its rule decides (one of
    :data:`polyattn.claims.rule.FORMS`), one sentence with the key numbers (Markdown with maths),
    and the numbers themselves, for tables and for readers who recompute them."""

    form: str
    summary: str
    numbers: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self):

        if self.form not in FORMS:
            raise ValueError(f"unknown verdict form {self.form!r}; choose one of {', '.join(FORMS)}")
        if not isinstance(self.summary, str) or not self.summary.strip():
            raise ValueError(f"a finding needs a non-empty sentence, got {self.summary!r}")


@dataclass(frozen=True)
class MeasuredClaim(Claim):
    """A claim decided by a measurement rather than by paired comparisons of runs: a theorem checked
    numerically, probes read from stored runs, a cost.  ``measure`` names the library function
    (``"module:function"`` under :mod:`polyattn`) that reads the records or computes, and returns a
    :class:`Finding`; ``rule`` says in words how its numbers decide the form (thresholds fixed in
    that module), so a reader can recompute the row with their own script."""

    measure: str
    rule: str
    #: measured on the machine that builds the book (timings): never written into the README
    machine_dependent: bool = False
    #: said when the rule was fixed after its numbers were seen
    registered_after: Optional[str] = None
    scale: str = ""
    notes: tuple = field(default_factory=tuple)

    def __post_init__(self):
        super().__post_init__()
        if self.measure.count(":") != 1:
            raise ValueError(f"claim {self.id!r}: measure must read 'module:function', got {self.measure!r}")

    def evaluate(self, root=None) -> Finding:
        """Run the measure function (``root``: the results directory, None for the repository's)."""
        import importlib

        module, name = self.measure.split(":")
        fn = getattr(importlib.import_module(f"polyattn.{module}"), name)
        finding = fn(root=root)
        if not isinstance(finding, Finding):
            raise TypeError(f"claim {self.id!r}: {self.measure} returned {type(finding).__name__}, not a Finding")
        return finding
