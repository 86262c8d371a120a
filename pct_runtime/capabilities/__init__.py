"""One package per capability: its tool definitions and its executor.

A capability never decides whether it is active; the decision layer tells it.
"""
