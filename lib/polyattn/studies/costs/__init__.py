"""Chapter 08 (``chapters/08_costs``): the attention variants' time, memory and training costs."""
