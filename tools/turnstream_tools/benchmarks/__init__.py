"""`turnstream bench`: every speed figure is a ratio to a yardstick measured side by side in the same run."""
