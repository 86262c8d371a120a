"""The MCP server: the SDK's low-level server in front of runtime sessions, its stdio
and streamable HTTP transports, and what those check (Host/Origin, idle sockets)."""
