"""Batched elimination for K arms (Esfandiari et al. 2021) and its replicable
versions (Esfandiari et al. 2023, Algorithms 1 and 2).
"""
