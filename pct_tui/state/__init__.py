"""What the console keeps between frames, each piece independent of the others: the
config draft, plans, the approval queue, the config file watcher, its own work rows."""
