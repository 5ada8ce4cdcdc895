"""Chapter 05 (``chapters/05_lra``): the Long Range Arena tasks with padding masks."""
