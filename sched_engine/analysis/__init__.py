"""Analyses over runs: paired comparison of two policies, capacity planning.

These read only the result frames and the runner; they add no engine.
"""
