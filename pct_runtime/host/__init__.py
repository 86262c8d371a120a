"""The host world the runtime runs in: Pi's (`pi`: models, credentials, tool registry,
names, sessions), the operating system's (`system`: processes, the lifeline, socket
peers, folders, the sandbox), and the runtime's two ports onto them (`events`, `ui`)."""
