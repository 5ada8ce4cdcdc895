"""Chapter 04 (``chapters/04_vit``): vision transformers with each activation, the paper's Tables 1 and
2 and Figure 1 at CPU scale, the converged tier and the marked garment."""
