"""Apply Patch: the Codex patch language, a containment-checked executor and the tool.

Modules: `grammar.lark` (the language, for grammar-capable clients), `parser` (exact
rejection texts), `matcher` (tiers, linear cost), `textfile` (BOM/EOL/final-newline
fidelity), `executor` (preflight → stage → commit; `prepare_patch`, `commit_prepared`,
`apply_patch_text`) and `tool` (`create_apply_patch_tool`). This file imports nothing so
`pct apply-patch` starts fast.
"""
