"""chatconform: property-based conformance suite for LLM chat-history code."""
