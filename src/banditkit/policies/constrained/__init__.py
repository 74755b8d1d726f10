"""Policies under cost constraints: DEBORA, DEBORA-S, DEBORA-H, the optimistic
baselines, OPLB and the safe LP.
"""
