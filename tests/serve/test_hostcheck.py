"""Host/Origin parsing of the DNS-rebinding check (the real server is in tests/e2e)."""

from __future__ import annotations

import pytest

from pct_runtime.serve.mcp.hostcheck import HostCheck, is_local_address, split_host


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("127.0.0.1:8765", "127.0.0.1"),
        ("LocalHost:1", "localhost"),
        ("[::1]:8765", "::1"),
        ("[fd00::2]", "fd00::2"),
        ("example.org", "example.org"),
        ("::1", None),
        ("[::1", None),
        ("[::1]x", None),
        ("host:port", None),
        (":80", None),
    ],
)
def test_split_host(header: str, name: str | None) -> None:
    assert split_host(header) == name


def test_local_addresses_are_asked_of_the_kernel() -> None:
    assert is_local_address("127.0.0.1")
    assert not is_local_address("0.0.0.0")
    assert not is_local_address("203.0.113.9")  # TEST-NET-3: never assigned here
    assert not is_local_address("not-an-address")


def _app(bound: str) -> HostCheck:
    async def inner(scope: object, receive: object, send: object) -> None:  # pragma: no cover
        raise AssertionError("never called")

    return HostCheck(inner, bound)


def test_a_specific_bind_serves_its_own_name_and_loopback_only() -> None:
    check = _app("192.0.2.77")
    assert check.host_ok("192.0.2.77:80")
    assert check.host_ok("localhost:80")
    assert not check.host_ok("127.0.0.1.example:80")
    assert not check.host_ok(None)
    assert check.origin_ok(None)
    assert check.origin_ok("http://192.0.2.77:80")
    assert not check.origin_ok("http://evil.example")
    assert not check.origin_ok("file://localhost")
