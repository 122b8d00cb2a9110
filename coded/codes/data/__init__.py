"""Precomputed generator matrices (JSON), written by scripts/search_generators.py."""
