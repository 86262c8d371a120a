"""The six Computer Use tools: one atomic, sequential group with strict argument checks.

Every schema object is `additionalProperties: false`, so a misspelt key is refused. The runtime
validates arguments itself and returns its own texts; the schema only describes the same
rules. App targets are a display name, a full `.app` bundle path or an unambiguous bundle
identifier; PIDs, window ids and bare executable paths are refused before anything runs.
"""

from __future__ import annotations

import inspect
import math
import os
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from pct_runtime.capabilities.base import (
    CallContext,
    SimpleTool,
    Tool,
    ToolError,
    ToolResult,
    ToolSpec,
)
from pct_runtime.capabilities.computer_use.templates import ComputerUseMethod
from pct_runtime.host.ui import UIPort
from pct_runtime.jsontypes import JSONMapping, JSONObject

COMPUTER_USE_TOOL_NAMES: tuple[str, ...] = (
    "computer_use_list_apps",
    "computer_use_get_app_state",
    "computer_use_click",
    "computer_use_type_text",
    "computer_use_press_key",
    "computer_use_scroll",
)
INACTIVE_TEXT = "Computer Use is not active for the current session."

_APP_DESCRIPTION = (
    "App display name, full .app bundle path, or unambiguous bundle identifier. PIDs, window "
    "ids and bare executable paths are unsupported; prefer an identifier returned by "
    "computer_use_list_apps."
)
_APP: JSONObject = {"type": "string", "minLength": 1, "description": _APP_DESCRIPTION}
_ELEMENT: JSONObject = {
    "type": "integer",
    "description": "Element index from the latest computer_use_get_app_state result.",
}
_COORD: JSONObject = {
    "type": "number",
    "description": "Screen coordinate inside the resolved app; give x and y together.",
}
MOUSE_BUTTONS = ("left", "right", "middle", "l", "r", "m")
DIRECTIONS = ("up", "down", "left", "right", "u", "d", "l", "r")


def _object(properties: JSONObject, required: tuple[str, ...] = ()) -> JSONObject:
    schema: JSONObject = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = list(required)
    return schema


SCHEMAS: dict[str, JSONObject] = {
    "list_apps": _object({}),
    "get_app_state": _object(
        {
            "app": _APP,
            "disableDiff": {
                "type": "boolean",
                "description": "Return the full accessibility tree instead of a diff.",
            },
        },
        ("app",),
    ),
    "click": _object(
        {
            "app": _APP,
            "element_index": _ELEMENT,
            "x": _COORD,
            "y": _COORD,
            "mouse_button": {"type": "string", "enum": list(MOUSE_BUTTONS)},
            "click_count": {"type": "integer", "minimum": 1},
        },
        ("app",),
    ),
    "type_text": _object(
        {
            "app": _APP,
            "text": {
                "type": "string",
                "minLength": 1,
                "description": "Text to type into the focused control of the app.",
            },
        },
        ("app", "text"),
    ),
    "press_key": _object(
        {
            "app": _APP,
            "key": {
                "type": "string",
                "minLength": 1,
                "description": "xdotool-style key or combination, e.g. Return or cmd+shift+t.",
            },
        },
        ("app", "key"),
    ),
    "scroll": _object(
        {
            "app": _APP,
            "element_index": _ELEMENT,
            "x": _COORD,
            "y": _COORD,
            "direction": {"type": "string", "enum": list(DIRECTIONS)},
            "pages": {"type": "number", "exclusiveMinimum": 0},
        },
        ("app", "direction"),
    ),
}

_SPEC_TEXT: dict[str, tuple[str, str, str]] = {
    "list_apps": (
        "computer_use_list_apps",
        "Computer Use: List Apps",
        "List the macOS apps Computer Use can control. Use it when the target app is unknown "
        "or did not resolve, then pass a returned identifier as `app`.",
    ),
    "get_app_state": (
        "computer_use_get_app_state",
        "Computer Use: Get App State",
        "Read one macOS app's accessibility tree (with element indexes) and a screenshot. Call "
        "it before acting and again after any action whose outcome is unknown.",
    ),
    "click": (
        "computer_use_click",
        "Computer Use: Click",
        "Click in one macOS app: an element_index from the latest app state, or x and y "
        "together as a fallback position inside the resolved app.",
    ),
    "type_text": (
        "computer_use_type_text",
        "Computer Use: Type Text",
        "Type text into the focused control of one macOS app.",
    ),
    "press_key": (
        "computer_use_press_key",
        "Computer Use: Press Key",
        "Press a key or key combination (xdotool-style) in one macOS app.",
    ),
    "scroll": (
        "computer_use_scroll",
        "Computer Use: Scroll",
        "Scroll one macOS app at an element_index or at x and y, by `pages` (default 1).",
    ),
}


class ComputerUseInvoker(Protocol):
    """What a tool needs from the client (satisfied by `ComputerUseClient`)."""

    def invoke(
        self, method: ComputerUseMethod, args: JSONMapping, *, ui: UIPort | None = None
    ) -> Awaitable[ToolResult]: ...


ClientProvider = Callable[
    [CallContext], "ComputerUseInvoker | Awaitable[ComputerUseInvoker | None] | None"
]

# --------------------------------------------------------------------- validation

_PID = re.compile(r"^\s*(?:pid\s*[:=#]?\s*)?\d+\s*$", re.IGNORECASE)
_WINDOW = re.compile(
    r"^\s*(?:window|window[_ -]?id|wid|cgwindowid)\s*[:=#]?\s*(?:0x[0-9a-f]+|\d+)\s*$",
    re.IGNORECASE,
)


def _bad(tool: str, text: str) -> ToolError:
    return ToolError("invalid-arguments", f"{tool}: {text}")


def check_app_target(tool: str, value: object) -> str:
    """A trimmed display name, `.app` bundle path or bundle identifier; else a clear refusal."""
    if not isinstance(value, str) or not value.strip():
        raise _bad(tool, "`app` must be a non-empty string.")
    app = value.strip()
    if _PID.match(app):
        raise _bad(
            tool,
            f"`app` {app!r} looks like a PID, which is not a supported target. Use the app's "
            "display name, .app bundle path or bundle identifier (see computer_use_list_apps).",
        )
    if _WINDOW.match(app):
        raise _bad(
            tool,
            f"`app` {app!r} looks like a window id, which is not a supported target. Use the "
            "app's display name, .app bundle path or bundle identifier (see "
            "computer_use_list_apps).",
        )
    if app.startswith(("/", "~", "./", "../")):
        bundle = os.path.expanduser(app).rstrip("/")
        if not os.path.isabs(bundle):
            raise _bad(
                tool,
                f"`app` {app!r} is a relative path; give the full .app bundle path, the display "
                "name or the bundle identifier (see computer_use_list_apps).",
            )
        if not bundle.lower().endswith(".app") or ".app/" in bundle.lower():
            raise _bad(
                tool,
                f"`app` {app!r} is not a .app bundle path; bare executable paths are not "
                "supported. Pass the enclosing .app bundle path, the display name or the bundle "
                "identifier (see computer_use_list_apps).",
            )
        return bundle
    return app


def _number(tool: str, name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _bad(tool, f"`{name}` must be a finite number.")
    return value


def _integer(tool: str, name: str, value: object, minimum: int | None = None) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(tool, f"`{name}` must be an integer.")
    if minimum is not None and value < minimum:
        raise _bad(tool, f"`{name}` must be at least {minimum}.")
    return value


def _text(tool: str, name: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise _bad(tool, f"`{name}` must be a non-empty string.")
    return value


def _choice(tool: str, name: str, value: object, options: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in options:
        raise _bad(tool, f"`{name}` must be one of: {', '.join(options)}.")
    return value


def _position(tool: str, args: JSONMapping, out: JSONObject) -> None:
    if "element_index" in args:
        out["element_index"] = _integer(tool, "element_index", args["element_index"], 0)
    has_x, has_y = "x" in args, "y" in args
    if has_x != has_y:
        raise _bad(tool, "give `x` and `y` together, or neither.")
    if has_x:
        out["x"] = _number(tool, "x", args["x"])
        out["y"] = _number(tool, "y", args["y"])


def _check_shape(tool: str, method: ComputerUseMethod, args: JSONMapping) -> None:
    """An object with only the schema's names, and every required one."""
    if not isinstance(args, Mapping):
        raise _bad(tool, "arguments must be a JSON object.")
    allowed = set(SCHEMAS[method]["properties"])
    unknown = sorted(set(args) - allowed)
    if unknown:
        names = ", ".join(f"`{name}`" for name in unknown)
        accepted = ", ".join(f"`{name}`" for name in sorted(allowed)) or "none"
        raise _bad(tool, f"unknown argument {names}; accepted arguments: {accepted}.")
    for name in SCHEMAS[method].get("required", []):
        if name not in args:
            raise _bad(tool, f"`{name}` is required.")


def _state_fields(tool: str, args: JSONMapping, out: JSONObject) -> None:
    if "disableDiff" in args:
        if not isinstance(args["disableDiff"], bool):
            raise _bad(tool, "`disableDiff` must be true or false.")
        out["disableDiff"] = args["disableDiff"]


def _click_fields(tool: str, args: JSONMapping, out: JSONObject) -> None:
    _position(tool, args, out)
    if "element_index" not in out and "x" not in out:
        raise _bad(tool, "give `element_index` from the latest app state, or `x` and `y`.")
    if "mouse_button" in args:
        out["mouse_button"] = _choice(tool, "mouse_button", args["mouse_button"], MOUSE_BUTTONS)
    if "click_count" in args:
        out["click_count"] = _integer(tool, "click_count", args["click_count"], 1)


def _type_fields(tool: str, args: JSONMapping, out: JSONObject) -> None:
    out["text"] = _text(tool, "text", args["text"])


def _key_fields(tool: str, args: JSONMapping, out: JSONObject) -> None:
    out["key"] = _text(tool, "key", args["key"])


def _scroll_fields(tool: str, args: JSONMapping, out: JSONObject) -> None:
    _position(tool, args, out)
    out["direction"] = _choice(tool, "direction", args["direction"], DIRECTIONS)
    if "pages" in args:
        pages = _number(tool, "pages", args["pages"])
        if pages <= 0:
            raise _bad(tool, "`pages` must be greater than 0.")
        out["pages"] = pages


#: Each app method's own fields, checked after its `app` target (in the schema's order).
_FIELDS: dict[str, Callable[[str, JSONMapping, JSONObject], None]] = {
    "get_app_state": _state_fields,
    "click": _click_fields,
    "type_text": _type_fields,
    "press_key": _key_fields,
    "scroll": _scroll_fields,
}


def validate_arguments(method: ComputerUseMethod, args: JSONMapping) -> JSONObject:
    """Check `args` against the tool's schema rules; returns only the validated fields."""
    tool = _SPEC_TEXT[method][0]
    _check_shape(tool, method, args)
    out: JSONObject = {}
    if method == "list_apps":
        return out
    out["app"] = check_app_target(tool, args["app"])
    _FIELDS[method](tool, args, out)
    return out


# --------------------------------------------------------------------- tools


@dataclass(frozen=True)
class ComputerUseTool(SimpleTool):
    """One of the six tools; `Tool` protocol of `capabilities.base`."""

    method: ComputerUseMethod
    client_provider: ClientProvider
    _spec: ToolSpec

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def __call__(self, args: JSONMapping, ctx: CallContext) -> ToolResult:
        provided = self.client_provider(ctx)
        client = await provided if inspect.isawaitable(provided) else provided
        if client is None:
            raise ToolError("computer-use-inactive", INACTIVE_TEXT)
        validated = validate_arguments(self.method, args)
        return await client.invoke(self.method, validated, ui=ctx.ui)


METHODS: tuple[ComputerUseMethod, ...] = (
    "list_apps",
    "get_app_state",
    "click",
    "type_text",
    "press_key",
    "scroll",
)


def tool_spec(method: ComputerUseMethod) -> ToolSpec:
    name, label, description = _SPEC_TEXT[method]
    return ToolSpec(
        name=name,
        label=label,
        description=description,
        input_schema=SCHEMAS[method],
        sequential=True,
    )


def create_computer_use_tools(client_provider: ClientProvider) -> list[Tool]:
    """The atomic group, in the spec's order. `client_provider(ctx)` returns (or resolves
    to) the session's client when Computer Use is active for it, else None (the call then
    fails with the spec's inactive text and nothing starts)."""
    return [ComputerUseTool(method, client_provider, tool_spec(method)) for method in METHODS]
