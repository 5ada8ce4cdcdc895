"""The claim register, the one rule that turns comparisons into a claim's verdict, the measured
claims and their measure functions, and the dates that show each claim was registered before the
runs it reads."""
from .register import MEASURED, REGISTER, any_claim, claim
from .spec import Arm, Comparison, Finding, MeasuredClaim, RegisteredClaim

__all__ = ["Arm", "Comparison", "Finding", "MEASURED", "MeasuredClaim", "REGISTER", "RegisteredClaim", "any_claim",
           "claim"]
