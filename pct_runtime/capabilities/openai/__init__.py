"""Pieces shared by the OpenAI-backed capabilities (web search, image, remote compaction).

Official endpoints are fixed constants here; nothing in this package ever sends a request
to a configured URL. Tests reach local fake servers only through an explicit httpx
transport handed to the executor (the test seam), never by changing these constants.
"""
