"""Live control, the runtime's side: the loopback control socket and the registry of
running runtimes, the hub consoles subscribe to, and the wire protocol both sides use."""
