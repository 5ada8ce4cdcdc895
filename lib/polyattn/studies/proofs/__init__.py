"""Chapter 02 (``chapters/02_proofs``): the theorems checked numerically, their assumptions and sharp
constants."""
