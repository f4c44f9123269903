"""The LLM's client side: the openai client, its calls and the LLM strategies (they load openai).

The prompts and the parsing of replies are pure and stay in compaction (compaction/strategies/prompts.py);
nothing here is imported unless an LLM is configured or asked for (`compact --llm`).
"""
