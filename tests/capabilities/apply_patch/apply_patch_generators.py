"""Hypothesis generators shared by the property and differential apply_patch tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

FILE_PATHS = ["a", "b.txt", "d/c", "d/e.txt", "d/f/g"]
LINK_PATHS = {"ln": "OUTSIDE", "d/lnf": "OUTSIDE/secret", "lnin": "a", "d/up": ".."}
PATCH_PATHS = [
    *FILE_PATHS,
    "ln/secret",
    "ln/new",
    "ln/sub/x",
    "d/lnf",
    "lnin",
    "d/up/a",
    "d/up/escape",
    "new1",
    "d/new2",
    "d/f",
    "../escape",
    "/pct-absolute-path/abs",  # absolute: always refused, exists on no machine
]
WORDS = ["alpha", "beta", "gamma", "", "  beta", "beta  ", "delta\u2014x", "\u00e9t\u00e9"]


@dataclass
class FileSpec:
    lines: list[str]
    crlf: bool
    final_newline: bool
    bom: bool
    binary: bool

    def encode(self) -> bytes:
        if self.binary:
            return b"\xff\xfe\x00binary"
        eol = "\r\n" if self.crlf else "\n"
        body = eol.join(self.lines) + (eol if self.final_newline and self.lines else "")
        return (("\ufeff" if self.bom else "") + body).encode()


file_specs = st.builds(
    FileSpec,
    lines=st.lists(st.sampled_from(WORDS), max_size=6),
    crlf=st.booleans(),
    final_newline=st.booleans(),
    bom=st.booleans(),
    binary=st.sampled_from([False, False, False, True]),
)


def build_tree(base: Path, files: dict[str, FileSpec], links: list[str]) -> tuple[Path, Path]:
    root, outside = base / "root", base / "outside"
    root.mkdir()
    (outside / "sub").mkdir(parents=True)
    (outside / "secret").write_text("do not touch\n")
    for rel, spec in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(spec.encode())
    for rel in links:
        target = LINK_PATHS[rel].replace("OUTSIDE", str(outside))
        link = root / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)
    return root, outside


# --- apply, then the inverse -------------------------------------------------------------


@st.composite
def tree_and_patch(draw: st.DrawFn) -> tuple[dict[str, FileSpec], str, str]:
    """A tree of unique-line files plus a valid patch over it and its inverse."""
    files: dict[str, FileSpec] = {}
    for n, rel in enumerate(draw(st.lists(st.sampled_from(FILE_PATHS), unique=True, min_size=1))):
        count = draw(st.integers(3, 12))
        files[rel] = FileSpec(
            lines=[f"{n}-{i} {draw(st.sampled_from(WORDS))}" for i in range(count)],
            crlf=draw(st.booleans()),
            final_newline=draw(st.booleans()),
            bom=draw(st.booleans()),
            binary=False,
        )
    forward = ["*** Begin Patch"]
    inverse = ["*** Begin Patch"]
    fresh = iter(range(1000))
    free_names = iter(["new1", "d/new2", "x/y/z"])
    for rel, spec in files.items():
        action = draw(st.sampled_from(["update", "move", "delete", "keep"]))
        if action == "keep":
            continue
        if action == "delete":
            if spec.crlf or spec.bom or not spec.final_newline:
                continue  # Add File writes LF with a final newline: only that shape inverts
            forward.append(f"*** Delete File: {rel}")
            inverse.append(f"*** Add File: {rel}")
            inverse += ["+" + line for line in spec.lines]
            continue
        chunks_fwd: list[str] = []
        chunks_inv: list[str] = []
        i = draw(st.integers(0, 1))
        while i < len(spec.lines):
            removed = draw(st.integers(0, 2))
            added = [f"new {next(fresh)}" for _ in range(draw(st.integers(0, 2)))]
            if removed == 0 and not added:
                removed = 1
            context_before = spec.lines[max(0, i - 2) : i]
            old = spec.lines[i : i + removed]
            context_after = spec.lines[i + removed : i + removed + 1]
            if not context_before and not old and not context_after:
                break
            fwd = ["@@", *(" " + c for c in context_before), *("-" + o for o in old)]
            fwd += ["+" + a for a in added] + [" " + c for c in context_after]
            inv = ["@@", *(" " + c for c in context_before), *("-" + a for a in added)]
            inv += ["+" + o for o in old] + [" " + c for c in context_after]
            chunks_fwd += fwd
            chunks_inv += inv
            i += removed + len(context_after) + 2 + draw(st.integers(0, 3))
        if not chunks_fwd:
            continue
        if action == "move":
            target = next(free_names, None)
            if target is None or target in files:
                continue
            forward += [f"*** Update File: {rel}", f"*** Move to: {target}", *chunks_fwd]
            inverse += [f"*** Update File: {target}", f"*** Move to: {rel}", *chunks_inv]
        else:
            forward += [f"*** Update File: {rel}", *chunks_fwd]
            inverse += [f"*** Update File: {rel}", *chunks_inv]
    forward.append("*** End Patch")
    inverse.append("*** End Patch")
    return files, "\n".join(forward) + "\n", "\n".join(inverse) + "\n"
