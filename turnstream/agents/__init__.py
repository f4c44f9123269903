"""Faust agents: thin adapters from the topics to the pure compaction rules and to Redis."""
