"""Chapter 06 (``chapters/06_physics``): PINNsFormer on the convection, reaction and wave problems."""
