"""One vocabulary beneath everything: scripts and stop words, and the recall tokenizer."""
