"""Pure rules and strategies over message lists: no Kafka, no Redis."""
