"""Pure decisions: official routes, capability decisions, execution routes, projection and sync."""
