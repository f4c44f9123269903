"""`turnstream inspect`: a small read-only web page over what the worker wrote to Redis, one session at a time."""
