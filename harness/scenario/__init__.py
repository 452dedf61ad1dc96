"""Scenarios: strict files, their plan, and the engine that runs them."""
