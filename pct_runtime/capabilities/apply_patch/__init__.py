"""Apply Patch: the Codex patch language, a containment-checked executor and the tool.

Modules: `grammar.lark` (the language, for grammar-capable clients), `parser` (exact
rejection texts), `matcher` (tiers, linear cost), `source` (one buffer per file;
BOM/EOL/final-newline fidelity), `pathlimits` (NAME_MAX/PATH_MAX preflight), `staging`
(staging names, dead writers' leftovers), `walk` (the containment walk of every path,
no-follow source reads), `executor` (preflight → stage → commit;
`prepare_patch`, `commit_prepared`, `apply_patch_text`) and `tool`
(`create_apply_patch_tool`). This file imports nothing so
`pct apply-patch` starts fast.
"""
