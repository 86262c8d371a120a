"""pct-tui: the Textual console of the Pi Codex Toolkit runtime.

A thin assembly: the app embeds a `Runtime`, serves MCP over streamable HTTP on loopback
from a worker, attaches itself as the runtime's UI port (approvals as modal screens), and
installs the screens as modes. Screen logic lives in `screens/`, runtime bookkeeping in
`console.py`, draft semantics in `drafts.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import ClassVar

from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.worker import Worker

from pct_runtime.cli import CliError
from pct_runtime.cli_commands.args.sandbox_args import add_sandbox_arguments
from pct_runtime.cli_commands.host_checks import load_host_model
from pct_runtime.cli_commands.sandbox_opts import SandboxStartError, startup_sandbox
from pct_runtime.config.paths import agent_dir as default_agent_dir
from pct_runtime.config.paths import config_path
from pct_runtime.config.reload import not_regular_message
from pct_runtime.config.typos import unknown_key_warnings
from pct_runtime.host.system.sandbox import SandboxSettings
from pct_runtime.host.ui import NotifyLevel
from pct_runtime.output.terminal_text import visible
from pct_runtime.version import VersionAction
from pct_tui.commands import PctCommands
from pct_tui.console import Console, default_clock
from pct_tui.facade import RuntimeFacade
from pct_tui.fanout import summary
from pct_tui.remote import LiveBackend, RegistryBackend, RemoteRuntimes
from pct_tui.screens.approval import ChoiceScreen, ConfirmScreen, WatchScreen
from pct_tui.screens.base import PctScreen
from pct_tui.screens.config import ConfigScreen
from pct_tui.screens.events import EventsScreen
from pct_tui.screens.help import HelpScreen
from pct_tui.screens.history.screen import HistoryScreen
from pct_tui.screens.quit_guard import QuitScreen
from pct_tui.screens.rules import RulesScreen
from pct_tui.screens.sessions import SessionsScreen
from pct_tui.screens.status import StatusScreen
from pct_tui.serving import AttachInfo, EmbeddedServing, build_runtime, preload
from pct_tui.state.approvals import Answer, ApprovalQueue, ApprovalRequest, ConsoleUI
from pct_tui.state.watcher import watch_config

#: Header cells that are not its title: the icon on the left, the same room kept right.
HEADER_MARGIN = 16


class PctApp(App[None]):
    """The console.

    `agent_dir` defaults to `PI_CODING_AGENT_DIR` or `~/.pi/agent`. `serve=False` skips the
    HTTP endpoint (screenshots, tests that need no network); `attach_info` then shows the
    given attach text. `watch=False` skips the config watcher. `clock` formats event times.
    `monitor=True` is `pct-tui --monitor`: no MCP endpoint, no saving, no acting. `live`
    is where other runtimes are found (the agent dir's registry by default);
    `discover=False` looks for none.
    """

    TITLE = "Pi Codex Toolkit"
    CSS_PATH = "app.tcss"
    #: `-narrow` below 100 columns: the screens' .tcss stack or shrink their side panes.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]  # noqa: RUF012 (App declares it without ClassVar)
    #: `-short` below 32 rows: dialogs drop their hint and keep their buttons on screen.
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]  # noqa: RUF012 (as above)
    COMMANDS = App.COMMANDS | {PctCommands}
    #: The app's modes; each screen is built with the facade (see `__init__`).
    SCREENS_BY_MODE: ClassVar[dict[str, type[PctScreen]]] = {
        "status": StatusScreen,
        "config": ConfigScreen,
        "rules": RulesScreen,
        "sessions": SessionsScreen,
        "events": EventsScreen,
        "history": HistoryScreen,
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1", "show_mode('status')", "Status", show=False, id="show-status"),
        Binding("2", "show_mode('config')", "Config", show=False, id="show-config"),
        Binding("3", "show_mode('rules')", "Rules", show=False, id="show-rules"),
        Binding("4", "show_mode('sessions')", "Sessions", show=False, id="show-sessions"),
        Binding("5", "show_mode('events')", "Events", show=False, id="show-events"),
        Binding("6", "show_mode('history')", "History", show=False, id="show-history"),
        Binding("ctrl+r", "reload", "Reload", id="reload"),
        Binding("question_mark", "help", "Help", id="help"),
        Binding("q", "quit", "Quit", id="quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, id="quit-ctrl-c"),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True, id="quit-ctrl"),
    ]

    def __init__(
        self,
        path: Path | None = None,
        *,
        agent_dir: Path | None = None,
        serve: bool = True,
        port: int = 0,
        watch: bool = True,
        attach_info: AttachInfo | None = None,
        clock: Callable[[], str] = default_clock,
        model: str | None = None,
        cwd: Path | None = None,
        sandbox: SandboxSettings | None = None,
        monitor: bool = False,
        live: LiveBackend | None = None,
        discover: bool = True,
    ) -> None:
        super().__init__()
        serve = serve and not monitor
        if agent_dir is None and path is not None:
            agent_dir = Path(path).parent.parent
        self.runtime = build_runtime(agent_dir=agent_dir, model=model, cwd=cwd, sandbox=sandbox)
        # The header always names the sandbox, so full access is never invisible.
        self._where = (
            "monitor (read-only)" if monitor else f"sandbox: {self.runtime.sandbox.label()}"
        )
        self.title = f"{self.TITLE} · {self._where}"
        self.config_path = self.runtime.config_path
        self.serving = EmbeddedServing(self.runtime, port=port) if serve else None
        self.watch_disk = watch
        self.console_state = Console(self, self.runtime, clock)
        self.console_state.read_only = monitor
        #: The screens' one door onto the runtime.
        self.facade = RuntimeFacade(self.console_state, attach_info)
        self.discover = discover
        self.approvals = ApprovalQueue(self._show_request, self._hide_request, self._count)
        self.ui = ConsoleUI(
            self.approvals,
            self._notify_from_runtime,
            self._record_approval,
            who=self.facade.own.who_asks,
        )
        self.remotes = RemoteRuntimes(
            live if live is not None else RegistryBackend(self.runtime.agent_dir),
            role="monitor" if monitor else "console",
            changed=self._remotes_changed,
            log=self.console_state.log_event,
            ask=self.ui.ask,
            approvals=self.approvals,
            notify=lambda text: self.notify(text, severity="error", timeout=10),
        )
        self.facade.remotes = self.remotes
        self._remotes_pending = False
        for mode, screen in self.SCREENS_BY_MODE.items():
            self.add_mode(mode, partial(screen, self.facade))
        self._request_screens: dict[int, Screen[bool] | Screen[str | None] | Screen[None]] = {}
        self._detach_ui: Callable[[], None] | None = None
        self._http_worker: Worker[None] | None = None
        self._watch_stop = asyncio.Event()
        self._shut_down = False

    @property
    def attach_info(self) -> AttachInfo | None:
        return self.facade.attach_info

    @attach_info.setter
    def attach_info(self, value: AttachInfo | None) -> None:
        self.facade.attach_info = value

    @property
    def serve_error(self) -> str | None:
        return self.facade.serve_error

    @serve_error.setter
    def serve_error(self, value: str | None) -> None:
        self.facade.serve_error = value

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Textual's own palette entries but Keys and Screenshot: the Keys panel covers the
        footer and Help lists every key; a screenshot lands in the working directory unseen."""
        for command in super().get_system_commands(screen):
            if command.title not in ("Keys", "Screenshot"):
                yield command

    # -- lifecycle -----------------------------------------------------------------------
    async def on_mount(self) -> None:
        await self.switch_mode("status")
        # Draw the first frame before the heavy start (MCP, uvicorn, Pi's files).
        self.call_after_refresh(
            self.run_worker, self._boot(), name="boot", group="runtime", exit_on_error=False
        )

    async def _boot(self) -> None:
        # Import the serving stack in a thread so the event loop keeps drawing.
        await asyncio.to_thread(preload, self.serving is not None)
        try:
            if self.serving is not None:
                self.attach_info = await self.serving.start()
            else:
                await self.runtime.start()
        except Exception as exc:
            self.serve_error = f"{type(exc).__name__}: {exc}"
            await self.runtime.start()
        self.console_state.reset_draft()
        self.console_state.ready = True
        self.console_state.attach()
        self._detach_ui = self.runtime.attach_ui(self.ui)
        self.console_state.log_event("runtime", f"started config={self.runtime.config_path}")
        if self.attach_info is not None and self.serving is not None:
            self.console_state.log_event("runtime", f"serving url={self.attach_info.url}")
        self.console_state.status_changed.publish(None)
        if self.serving is not None and self.serving.http is not None:
            self._http_worker = self.run_worker(
                self.serving.serve(), name="mcp-http", group="mcp", exit_on_error=False
            )
        if self.discover:
            self.run_worker(
                self.remotes.run(os.getpid()), name="runtimes", group="watch", exit_on_error=False
            )
        if self.watch_disk:
            self.run_worker(
                watch_config(
                    self.runtime.config_path, self.console_state.check_disk, stop=self._watch_stop
                ),
                name="config-watcher",
                group="watch",
                exit_on_error=False,
            )

    async def shutdown(self) -> None:
        """Answer pending approvals No, stop serving, end every session (reaping its work)."""
        if self._shut_down:
            return
        self._shut_down = True
        self.ui.enabled = False
        # Other runtimes' questions go back to their next route, never answered No here.
        with contextlib.suppress(Exception):
            await self.remotes.aclose()
        self.approvals.cancel_all()
        self._watch_stop.set()
        if self._detach_ui is not None:
            self._detach_ui()
        if self.serving is not None:
            # Let uvicorn finish its own graceful shutdown (lifespan included) before the
            # worker is cancelled, so nothing is left to complain on the terminal.
            self.serving.stop()
            if self._http_worker is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self._http_worker.wait(), 6.0)
        with contextlib.suppress(Exception):
            if self.serving is not None:
                await self.serving.aclose()
            else:
                await self.runtime.aclose()
        await self.facade.journal.aclose()
        self.console_state.detach()

    async def action_quit(self) -> None:
        """`q`, `ctrl+c`, `ctrl+q` and the palette's Quit: an unsaved draft is asked about."""
        if self.unsaved_draft() is not None:
            self.run_worker(self._guarded_quit(), group="quit-guard", exclusive=True)
            return
        await self.shutdown()
        self.exit()

    def unsaved_draft(self) -> str | None:
        """What would be lost by quitting now, or None."""
        state = self.console_state
        if not state.ready or state.read_only:  # a monitor saves nothing, so loses nothing
            return None
        open_page = any(
            getattr(screen, "has_pending_edits", lambda: False)() for screen in self.screen_stack
        )
        if open_page:
            return "A rule page or the deferred list has edits not yet taken into the draft."
        if not state.draft.dirty:
            return None
        return "The configuration draft (Config, Rules or the deferred list) is not saved."

    async def _guarded_quit(self) -> None:
        what = self.unsaved_draft()
        if what is None or isinstance(self.screen, QuitScreen):
            return
        answer = await self.push_screen_wait(QuitScreen(what))
        if answer == "cancel":
            return
        if answer == "save":
            for screen in self.screen_stack:  # take an open page's edits into the draft first
                take = getattr(screen, "take_pending_edits", None)
                if take is not None and not take():
                    self.notify("Not quitting: the open page has an error.", severity="error")
                    return
            outcome = await self.facade.save()
            if not outcome.ok:
                self.notify(f"Not quitting: {outcome.message}", severity="error", timeout=10)
                self.console_state.status_changed.publish(None)
                return
        await self.shutdown()
        self.exit()

    async def on_unmount(self) -> None:
        await self.shutdown()

    # -- navigation ----------------------------------------------------------------------
    async def on_pct_screen_mode_requested(self, message: PctScreen.ModeRequested) -> None:
        await self.action_show_mode(message.mode)

    async def on_pct_screen_reload_requested(self, _: PctScreen.ReloadRequested) -> None:
        await self.action_reload()

    async def action_show_mode(self, mode: str) -> None:
        if self.current_mode != mode:
            if self.current_mode == "rules":
                self.console_state.draft.leave_rules()
            await self.switch_mode(mode)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(monitor=self.console_state.read_only))

    async def action_reload(self) -> None:
        message, others = await self.facade.reload()
        read = self.runtime.store.current()
        self.notify(message, severity="error" if read.error else "information")
        if others:
            self.notify(
                summary(others),
                severity="information" if all(r.ok for r in others) else "error",
                timeout=15,
            )
        for warning in unknown_key_warnings(read.raw) if read.error is None else ():
            self.notify(f"Warning: {warning}", severity="warning")
        draft = self.console_state.draft
        if draft.dirty and draft.base_revision != read.revision:
            self.notify(
                "Your unsaved draft was kept. Save will refuse it (the file changed since the "
                "draft began); Cancel in Config starts again from the reloaded settings.",
                severity="warning",
            )
        self.console_state.status_changed.publish(None)

    # -- approvals -----------------------------------------------------------------------
    def _show_request(self, request: ApprovalRequest) -> None:
        def answered(value: Answer) -> None:
            self._request_screens.pop(id(request), None)
            self.approvals.answer(request, value)

        screen: Screen[bool] | Screen[str | None] | Screen[None]
        if request.read_only:  # --monitor: who asks and what, no answer keys
            screen = WatchScreen(
                request.title,
                request.message,
                pending=len(self.approvals),
                who=request.who,
                diffs=request.diffs,
                options=request.options,
            )
        elif request.kind == "confirm":
            screen = ConfirmScreen(
                request.title,
                request.message,
                pending=len(self.approvals),
                who=request.who,
                diffs=request.diffs,
            )
        else:
            # A pick says who asks, as a confirm does.
            who = f"Asked by {request.who}" if request.who else ""
            note = "\n".join(part for part in (request.message, who) if part)
            screen = ChoiceScreen(request.title, request.options, note=note)
        self._request_screens[id(request)] = screen
        self.push_screen(screen, callback=answered)

    def _record_approval(self, request: ApprovalRequest, phase: str) -> None:
        files = ""
        if request.diffs:
            files = " files=" + ",".join(d.path for d in request.diffs)
        who = request.who
        self.console_state.log_event(
            "approval", f"{phase}: {request.title}{f' ({who})' if who else ''}{files}"
        )

    def _hide_request(self, request: ApprovalRequest) -> None:
        screen = self._request_screens.pop(id(request), None)
        if screen is not None and screen.is_attached:
            with contextlib.suppress(Exception):
                screen.dismiss(None)

    def _remotes_changed(self) -> None:
        """Another runtime reported: redraw once on the next turn, however many came."""
        if self._remotes_pending:
            return
        self._remotes_pending = True

        def fire() -> None:
            self._remotes_pending = False
            self.console_state.work_changed.publish(None)
            self.console_state.status_changed.publish(None)

        self.call_next(fire)

    def _count(self, pending: int) -> None:
        # Short: the header also names the sandbox and must fit 80 columns.
        self.sub_title = f"{pending} waiting" if pending else ""
        self._fit_title()
        for screen in self.screen_stack:  # the open question says "1 of N" as N grows
            if isinstance(screen, ConfirmScreen | WatchScreen):
                screen.set_pending(pending)

    def on_resize(self) -> None:
        self._fit_title()

    def _fit_title(self) -> None:
        """The product name goes first when the header is too narrow for the sandbox and the
        waiting count: those two must stay readable."""
        full = f"{self.TITLE} · {self._where}"
        shown = f"{full} — {self.sub_title}" if self.sub_title else full
        self.title = full if len(shown) <= self.size.width - HEADER_MARGIN else self._where

    def _notify_from_runtime(self, message: str, level: NotifyLevel) -> None:
        severity = {"info": "information", "warning": "warning", "error": "error"}[level]
        self.notify(message, severity=severity)  # type: ignore[arg-type]

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every toast is plain text: messages name files (`app/[slug]/page.tsx` lost its
        `[slug]`), commands and other runtimes' replies, none of them written as markup."""
        del markup  # screens pass True by default
        shown = visible(message, lines=True)
        super().notify(shown, title=title, severity=severity, timeout=timeout, markup=False)


def main() -> None:
    """`pct-tui [--port N] [--model PROVIDER/ID] [--monitor]`."""
    parser = argparse.ArgumentParser(
        prog="pct-tui",
        description="The Pi Codex Toolkit console: status, config, rules, sessions, approvals. "
        "Serves MCP over streamable HTTP on 127.0.0.1 for agents to attach, and shows every "
        "other pct runtime of the agent dir (an agent's `pct serve`): its sessions, jobs, "
        "cells and events; stop and end them and answer their approvals here.",
    )
    parser.add_argument(
        "--monitor",
        action="store_true",
        help="read-only: watch every runtime of the agent dir without serving MCP, saving "
        "the configuration, stopping work or answering approvals",
    )
    parser.add_argument("--port", type=int, default=0, help="HTTP port (default: any free port)")
    parser.add_argument("--model", metavar="PROVIDER/ID", help="default model of new sessions")
    parser.add_argument("--version", action=VersionAction, command="pct-tui")
    add_sandbox_arguments(parser)
    args = parser.parse_args()
    refused = not_regular_message(config_path())
    if refused is not None:  # before drawing: a FIFO would otherwise be read on boot
        print(f"pct-tui: {refused}", file=sys.stderr)
        raise SystemExit(1)
    check_model_arg(args.model)
    check_port_arg(args.port, serve=not args.monitor)
    try:
        sandbox, warning = startup_sandbox(args.sandbox, args.sandbox_network, config_path())
    except SandboxStartError as exc:
        print(f"pct-tui: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    if warning:
        print(warning, file=sys.stderr)
    PctApp(port=args.port, model=args.model, sandbox=sandbox, monitor=args.monitor).run()


def check_port_arg(port: int, *, serve: bool) -> None:
    """Refuse a `--port` that cannot be bound as `pct serve --http` does (one line, exit 1)
    before drawing: a console whose endpoint failed would look like a working one."""
    if not serve or port == 0:
        return
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        probe.bind(("127.0.0.1", port))
    except (OSError, OverflowError) as exc:
        print(f"pct-tui: cannot serve: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    finally:
        probe.close()


def check_model_arg(model: str | None) -> None:
    """Refuse an unknown `--model` as `pct serve` does (stderr, exit 2) before drawing:
    a console running with every capability off would look like a working one."""
    if model is None:
        return
    try:
        load_host_model(default_agent_dir(), model, Path.cwd())
    except CliError as exc:
        print(f"pct-tui: {exc}", file=sys.stderr)
        sys.exit(exc.code)


if __name__ == "__main__":  # pragma: no cover
    main()
