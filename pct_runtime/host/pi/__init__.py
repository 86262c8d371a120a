"""Pi's world as the runtime reads it: the model registry and catalog, credentials and
OAuth, the official endpoints, the tool registry, tool names and the session kind."""
