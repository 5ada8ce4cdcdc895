"""Chapter 01 (``chapters/01_activations``): the activations side by side, their formulas, declared
properties and behaviour on random scores."""
