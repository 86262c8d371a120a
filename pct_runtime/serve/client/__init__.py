"""Live control, the client's side: the console's connection to a running runtime and
the command line's one-shot requests (`pct reload`, `pct status --live`)."""
