"""Benchmarks: speed, strength and load, each with its own command (``tilehouse bench ...``).

Never part of the test run: figures are printed, not asserted.
"""
