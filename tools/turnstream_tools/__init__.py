"""turnstream's tools, a distribution of their own (turnstream-tools): the benchmark suite with its scripts and
history, the demo, and the sample conversations they replay."""
