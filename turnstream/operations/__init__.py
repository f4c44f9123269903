"""Operations outside the worker's stream: erasure of a user or a session, and notes written as memories."""
