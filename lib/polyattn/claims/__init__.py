"""The claim register, the one rule that turns comparisons into a claim's verdict, and the
dates that show each claim was registered before the runs it reads."""
from .register import REGISTER, claim
from .spec import Arm, Comparison, RegisteredClaim

__all__ = ["Arm", "Comparison", "REGISTER", "RegisteredClaim", "claim"]
