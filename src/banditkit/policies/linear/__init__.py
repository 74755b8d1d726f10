"""Linear regret policies: OFUL and linear Thompson sampling (``index``, ``oful``,
``thompson``) with their engines (``lockstep``, ``kernel``), and the batched and
replicable linear eliminations.
"""
