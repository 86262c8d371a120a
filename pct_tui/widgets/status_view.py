"""The `/pct status` text with colours that carry meaning.

The words are exactly the plain status text's (`pct_runtime.status`); colour adds the
meaning at a glance: active green, deferred blue, unavailable amber, off grey, errors red.
"""

from __future__ import annotations

from rich.text import Text

EFFECTIVE_STYLES = {
    "active": "bold green",
    "deferred": "bold dodger_blue1",
    "unavailable": "bold dark_orange",
    "off": "grey50",
    "native": "grey50",
}


def status_text(text: str) -> Text:
    out = Text()
    for line in text.split("\n"):
        if line.startswith(("Config error:", "Apply error:")):
            out.append(line + "\n", style="bold red")
        elif not line.startswith(" ") and line.endswith(":"):
            out.append(line + "\n", style="bold")
        elif line.startswith("  effective: ") or line.startswith("  effective backend: "):
            key, _, value = line.partition(": ")
            out.append(key + ": ")
            first = value.split("+")[0]
            out.append(value + "\n", style=EFFECTIVE_STYLES.get(first, "bold green"))
        elif line.startswith("  reason: ") and line != "  reason: ":
            key, _, value = line.partition(": ")
            out.append(key + ": ")
            out.append(value + "\n", style="dark_orange")
        elif line.startswith("  ") and ": " not in line:
            out.append(line + "\n", style="italic grey50")
        elif line.startswith("  configured: "):
            key, _, value = line.partition(": ")
            out.append(key + ": ")
            out.append(value + "\n", style="bold" if value == "on" else "grey50")
        else:
            out.append(line + "\n")
    out.rstrip()
    return out
