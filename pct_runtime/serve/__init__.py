"""Serving a runtime: the MCP server (`mcp`), live control's runtime side (`live`) and
client side (`client`); `run` is `pct serve`, which puts the two servers together,
and `token` is the bearer token both check."""
