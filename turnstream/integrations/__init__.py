"""Adapters that put turnstream's compacted context under agent frameworks (LangChain, LangGraph, OpenAI Agents SDK)."""
