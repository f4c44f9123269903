"""Strategies that digest the span the compactor drops."""
