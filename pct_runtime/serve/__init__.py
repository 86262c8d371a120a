"""Serving the runtime over MCP: the low-level server, transports, token and live control."""
