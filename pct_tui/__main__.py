"""`python -m pct_tui` runs the console (same as `pct-tui`)."""

from pct_tui.app import main

main()
