"""`turnstream demo`: sample conversations through Kafka, compacted contexts out of Redis, and a report."""
