"""The host world the runtime models: agent dir, models, credentials, tools, sessions, UI."""
