"""The Faust app, topics, the sessions Table, Kafka admin, the memory journal topic, erasure and metrics."""
