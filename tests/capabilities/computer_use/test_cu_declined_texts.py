"""A declined Computer Use access question says who declined, as far as pct can tell: an
MCP client that answered by itself (`codex exec` declines in ~2 ms) is not "the user".
The code stays `approval-declined`; the route and answer travel in the details."""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_types as types
import pytest
from cu_helpers import CuTree, FakeUI

from pct_runtime.capabilities.base import ToolError
from pct_runtime.host.ui import NotifyLevel, UIPort
from pct_runtime.runtime.ui import RoutedUI
from pct_runtime.serve.mcp.elicitation import _FormUI

TEXTEDIT = "com.apple.TextEdit"
LATER = (
    "Nothing was done. Ask the user to open the pct console (pct-tui) to answer it, or to set "
    "Computer Use approval to Always, then retry."
)


class FormClient(_FormUI):
    """An MCP client's elicitation: declines after `delay` seconds."""

    def __init__(self, delay: float, action: str = "decline") -> None:
        self.delay = delay
        self.action = action
        self.client_name = "codex-mcp-client"

    @property
    def available(self) -> bool:
        return True

    async def _send(self, message: str, schema: Any) -> types.ElicitResult:
        await asyncio.sleep(self.delay)
        return types.ElicitResult(action=self.action)  # type: ignore[arg-type]


class Console(FakeUI):
    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        return None


async def declined(cu_tree: CuTree, make_client: Any, ui: UIPort) -> ToolError:
    cu_tree.scenario(elicit={"click": [{"app": TEXTEDIT}]})
    with pytest.raises(ToolError) as caught:
        await make_client().invoke("click", {"app": TEXTEDIT, "element_index": 1}, ui=ui)
    assert caught.value.code == "approval-declined"
    return caught.value


async def test_a_client_declining_by_itself_is_not_the_user(
    cu_tree: CuTree, make_client: Any
) -> None:
    ui = RoutedUI(lambda: None, FormClient(0.0))
    error = await declined(cu_tree, make_client, ui)
    ms = error.details["approval"]["elapsed_ms"]  # type: ignore[index]
    assert error.message == (
        "The MCP client (codex-mcp-client) declined the request for Computer Use access to "
        f"{TEXTEDIT} by itself in {ms} ms; no person was asked. {LATER}"
    )
    assert "by the user" not in error.message
    approval = error.details["approval"]
    assert isinstance(approval, dict)
    assert (approval["route"], approval["action"], approval["automatic"]) == (
        "elicitation",
        "decline",
        True,
    )


async def test_a_slow_decline_may_be_the_clients_user(cu_tree: CuTree, make_client: Any) -> None:
    ui = RoutedUI(lambda: None, FormClient(0.3))
    error = await declined(cu_tree, make_client, ui)
    assert error.message == (
        "The MCP client (codex-mcp-client) or its user declined the request for Computer Use "
        f"access to {TEXTEDIT}. Nothing was done; do not retry without asking the user."
    )


async def test_a_no_in_the_console_is_the_users(cu_tree: CuTree, make_client: Any) -> None:
    console = Console(answers=[False])
    ui = RoutedUI(lambda: console, FormClient(0.0))
    error = await declined(cu_tree, make_client, ui)
    assert error.message == (
        f"The user declined Computer Use access to {TEXTEDIT} in the pct console. Nothing was "
        "done; do not retry without asking the user."
    )


async def test_an_unrouted_port_says_only_not_approved(cu_tree: CuTree, make_client: Any) -> None:
    error = await declined(cu_tree, make_client, FakeUI(answers=[False]))
    assert error.message == (
        f"Computer Use access to {TEXTEDIT} was not approved. Nothing was done; do not retry "
        "without asking the user."
    )


async def test_no_one_to_ask_says_how_someone_can_be(cu_tree: CuTree, make_client: Any) -> None:
    cu_tree.scenario(elicit={"click": [{"app": TEXTEDIT}]})
    with pytest.raises(ToolError) as caught:
        await make_client().invoke(
            "click", {"app": TEXTEDIT, "element_index": 1}, ui=RoutedUI(lambda: None, None)
        )
    assert caught.value.code == "approval-unavailable"
    assert caught.value.message == (
        f"Computer Use access to {TEXTEDIT} needs the user's confirmation, but no interactive "
        f"UI is available. {LATER}"
    )
