"""fetch_url through real turns against a real local HTTP server: HTML as Markdown, redirect chains,
huge pages, binaries, slow servers, private addresses (checked on every hop and on the resolved
address), gzip bombs, permissions per domain, and the sandbox's network switch."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentls.agent.scripted import ScriptedServer, call, text, tools
from agentls.agent.sandbox.detect import detect
from agentls.agent.sandbox.policy import SandboxConfig
from agentls.agent.tools.fetch import make_fetch_tool
from agentls.agent.tools.registry import BUILTIN_TOOLS
from agentls.agent.web.address import why_private
from agentls.agent.web.fetch import FetchLimits

from .conftest import AgentFactory
from .helpers import AnsweringHost, Updates, check, tool_msgs
from .webserver import Exchange, WebServer, gzip_bomb, html, page, redirect

LOOPBACK = ("127.0.0.1/32",)  # the tests' explicit allow: the test server, and nothing else private

ARTICLE = html("<h1>Release notes</h1><p>Version <b>2.0</b> adds <a href='/docs'>docs</a>.</p>"
               "<ul><li>faster</li><li>smaller</li></ul><pre>pip install thing</pre>", title="Thing 2.0")


@pytest.fixture
async def web() -> AsyncIterator[WebServer]:
    server = await WebServer().start()
    yield server
    await server.stop()


def _tools(**limits: Any) -> list[Any]:
    chosen = {"allow_networks": LOOPBACK, "timeout": 5.0, **limits}
    return [t for t in BUILTIN_TOOLS if t.name != "fetch_url"] + [make_fetch_tool(FetchLimits(**chosen))]


async def _fetch(make_agent: AgentFactory, srv: ScriptedServer, *args: dict[str, Any], approval: str = "yolo",
                 limits: dict[str, Any] | None = None, **kw: Any) -> list[dict[str, Any]]:
    """One turn whose model calls fetch_url once per ``args``; the tool messages it got back."""
    for a in args:
        srv.push(tools(call("fetch_url", a)))
    srv.push(text("read"))
    kw.setdefault("sandbox", SandboxConfig(network=True))  # the sandbox's own switch: its test below
    agent = make_agent(approval=approval, tools=_tools(**(limits or {})), **kw)
    return tool_msgs(check(await agent.run_conversation("read the page")))


async def test_an_html_page_reaches_the_model_as_markdown(
        make_agent: AgentFactory, srv: ScriptedServer, web: WebServer, updates: Updates) -> None:
    web.routes["/notes"] = page(ARTICLE)
    [msg] = await _fetch(make_agent, srv, {"url": web.url("/notes")})
    out = msg["content"]
    assert "error" not in out.splitlines()[0]
    assert f"URL: {web.url('/notes')}" in out and "Title: Thing 2.0" in out
    assert "# Release notes" in out and "**2.0**" in out and "[docs](/docs)" in out
    assert "- faster" in out and "pip install thing" in out
    assert "never shown" not in out and "color: red" not in out  # scripts and styles are not text
    assert web.seen[0].headers["host"] == f"127.0.0.1:{web.port}"
    assert web.seen[0].headers["user-agent"].startswith("agentls/")
    card = next(u for u in updates.of("tool_call") if u["title"].startswith("Fetch"))
    assert card["kind"] == "fetch"


async def test_a_redirect_chain_is_followed_and_named(
        make_agent: AgentFactory, srv: ScriptedServer, web: WebServer) -> None:
    web.routes.update({"/a": redirect("/b", 301), "/b": redirect(web.url("/c"), 307), "/c": redirect("d", 308),
                       "/d": page(ARTICLE)})
    [msg] = await _fetch(make_agent, srv, {"url": web.url("/a")})
    assert f"URL: {web.url('/d')}" in msg["content"]
    assert f"Redirected from: {web.url('/a')} (3 redirects)" in msg["content"]
    assert "# Release notes" in msg["content"]
    assert [e.path for e in web.seen] == ["/a", "/b", "/c", "/d"]


async def test_a_redirect_loop_stops_at_the_limit(make_agent: AgentFactory, srv: ScriptedServer,
                                                  web: WebServer) -> None:
    web.routes.update({"/ping": redirect("/pong"), "/pong": redirect("/ping")})
    [msg] = await _fetch(make_agent, srv, {"url": web.url("/ping")}, limits={"max_redirects": 4})
    assert msg["content"].startswith("error: too many redirects (more than 4)")
    assert len(web.seen) == 5


async def test_a_huge_page_is_read_only_up_to_the_limit(make_agent: AgentFactory, srv: ScriptedServer,
                                                        web: WebServer) -> None:
    async def huge(ex: Exchange) -> None:  # 64 MB announced, sent in 64 KB pieces while the client reads
        await ex.stream(200, 1024, b"<p>" + b"word " * 13106 + b"</p>", headers={"Content-Type": "text/html"})

    web.routes["/huge"] = huge
    [msg] = await _fetch(make_agent, srv, {"url": web.url("/huge"), "max_length": 1000},
                         limits={"max_bytes": 300_000})
    out = msg["content"]
    assert "[the page is larger than 300,000 bytes; only that much was read]" in out
    assert "call fetch_url again with start_index=1000 to read on" in out
    await asyncio.sleep(0.2)
    assert web.seen[0].sent < 20_000_000  # the client hung up long before the end


async def test_reading_on_with_start_index(make_agent: AgentFactory, srv: ScriptedServer, web: WebServer) -> None:
    web.routes["/t"] = page(b"".join(b"%05d\n" % i for i in range(2000)), "text/plain")
    first, second, past = await _fetch(make_agent, srv, {"url": web.url("/t"), "max_length": 600},
                                       {"url": web.url("/t"), "start_index": 11_400},
                                       {"url": web.url("/t"), "start_index": 99_999})
    assert "00000\n" in first["content"] and "00100\n" not in first["content"]
    assert "showing characters 0-600 of 12,000" in first["content"]
    assert "01999" in second["content"] and "the end of the text" in second["content"]
    assert "past the end: the text has 12,000 characters" in past["content"]


@pytest.mark.parametrize("content_type", ["image/png", "application/octet-stream", "application/pdf"])
async def test_a_binary_is_not_downloaded_or_shown(make_agent: AgentFactory, srv: ScriptedServer, web: WebServer,
                                                   content_type: str) -> None:
    web.routes["/file"] = page(b"\x89PNG\r\n\x1a\n\x00\x00" * 1000, content_type)
    [msg] = await _fetch(make_agent, srv, {"url": web.url("/file")})
    assert msg["content"].startswith(f"URL: {web.url('/file')}")
    assert f"error: this is binary content ({content_type}, 0 bytes); fetch_url shows text only" in msg["content"]
    assert msg["meta"]["error"] is True


async def test_binary_bytes_claiming_to_be_text_are_still_binary(
        make_agent: AgentFactory, srv: ScriptedServer, web: WebServer) -> None:
    web.routes["/liar"] = page(b"GIF89a\x00\x01\x00\x00" * 50, "text/plain")
    [msg] = await _fetch(make_agent, srv, {"url": web.url("/liar")})
    assert "error: this is binary content (text/plain, 500 bytes)" in msg["content"]
    assert "GIF89a" not in msg["content"]


async def test_a_slow_server_is_given_up_on_and_the_turn_goes_on(
        make_agent: AgentFactory, srv: ScriptedServer, web: WebServer) -> None:
    release = asyncio.Event()

    async def slow(ex: Exchange) -> None:
        ex.writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n<p>start")
        await ex.writer.drain()
        await release.wait()  # never sends the rest

    web.routes["/slow"] = slow
    try:
        [msg] = await _fetch(make_agent, srv, {"url": web.url("/slow")}, limits={"timeout": 0.5})
    finally:
        release.set()
    assert msg["content"] == "error: the fetch took longer than 0.5 s and was stopped"


async def test_an_error_status_is_an_error_with_the_page(make_agent: AgentFactory, srv: ScriptedServer,
                                                         web: WebServer) -> None:
    [msg] = await _fetch(make_agent, srv, {"url": web.url("/missing")})
    assert msg["content"].startswith("error: the server answered 404 Not Found")
    assert "# Not here" in msg["content"]


async def test_a_gzip_bomb_expands_only_to_the_limit(make_agent: AgentFactory, srv: ScriptedServer,
                                                     web: WebServer) -> None:
    web.routes["/bomb"] = gzip_bomb(200_000_000)
    [msg] = await _fetch(make_agent, srv, {"url": web.url("/bomb"), "max_length": 10},
                         limits={"max_bytes": 100_000})
    assert "aaaaaaaaaa" in msg["content"]
    assert "showing characters 0-10 of 100,000" in msg["content"]
    assert "larger than 100,000 bytes" in msg["content"]


@pytest.fixture
async def second_loopback() -> AsyncIterator[WebServer]:
    """A server on 127.0.0.2: loopback too, but outside the tests' allow (127.0.0.1/32)."""
    server = WebServer(host="127.0.0.2")
    try:
        await server.start()
    except OSError:
        pytest.skip("127.0.0.2 cannot be bound here")
    yield server
    await server.stop()


async def test_a_redirect_to_a_private_address_is_refused_before_connecting(
        make_agent: AgentFactory, srv: ScriptedServer, web: WebServer, second_loopback: WebServer) -> None:
    second_loopback.routes["/admin"] = page(b"<p>internal secrets</p>")
    web.routes.update({"/go": redirect("/hop"), "/hop": redirect(second_loopback.url("/admin")),
                       "/meta": redirect("http://169.254.169.254/latest/meta-data/"),
                       "/ten": redirect("http://10.0.0.1/"), "/v6": redirect("http://[::ffff:127.0.0.1]:1/")})
    out = [m["content"] for m in await _fetch(
        make_agent, srv, *({"url": web.url(p)} for p in ("/go", "/meta", "/ten", "/v6")))]
    assert out[0] == (f"error: refused: 127.0.0.2 is a loopback address; fetch_url only reads public web addresses "
                      f"(reached by a redirect from {web.url('/hop')})")
    assert out[1].startswith("error: refused: 169.254.169.254 is a link-local address")
    assert out[2].startswith("error: refused: 10.0.0.1 is a private network address")
    assert out[3].startswith("error: refused: ::ffff:7f00:1 is a loopback address (127.0.0.1 inside an IPv6 address)")
    assert second_loopback.seen == []  # never connected to


async def test_without_an_allow_loopback_is_refused(make_agent: AgentFactory, srv: ScriptedServer,
                                                    web: WebServer) -> None:
    web.routes["/notes"] = page(ARTICLE)
    out = [m["content"] for m in await _fetch(make_agent, srv, {"url": web.url("/notes")},
                                              {"url": f"http://localhost:{web.port}/notes"},
                                              {"url": f"http://0.0.0.0:{web.port}/notes"},
                                              limits={"allow_networks": ()})]
    assert out[0].startswith("error: refused: 127.0.0.1 is a loopback address")
    assert "localhost resolves to" in out[1]
    assert out[2].startswith("error: refused: 0.0.0.0 is the unspecified address")
    assert web.seen == []


@pytest.mark.parametrize("url, why", [
    ("file:///etc/passwd", "only http and https URLs can be fetched, not file"),
    ("ftp://example.com/x", "only http and https URLs can be fetched, not ftp"),
    ("example.com/page", "only http and https URLs can be fetched"),
    ("http://user:secret@127.0.0.1:9/", "URLs with a user name or password are not fetched"),
    ("http://", "no host"),
])
async def test_urls_that_are_not_fetched(make_agent: AgentFactory, srv: ScriptedServer, url: str, why: str) -> None:
    [msg] = await _fetch(make_agent, srv, {"url": url})
    assert msg["content"].startswith("error: ") and why in msg["content"], msg["content"]


async def test_ask_mode_asks_once_per_domain_and_remembers_always(
        make_agent: AgentFactory, srv: ScriptedServer, web: WebServer, workspace: Any, updates: Updates) -> None:
    web.routes["/notes"] = page(ARTICLE)
    web.routes["/hop"] = redirect(f"http://localhost:{web.port}/notes")
    host = AnsweringHost(workspace, updates, answers=["allow_always", "reject_once"])
    out = await _fetch(make_agent, srv, {"url": web.url("/notes")}, {"url": web.url("/notes")},
                       {"url": web.url("/hop")}, approval="ask", host=host,
                       limits={"allow_networks": ("127.0.0.0/8", "::1/128")})
    assert [r.title for r in host.asked] == ["Fetch from 127.0.0.1", "Fetch from localhost"]
    assert host.asked[0].kind == "fetch" and host.asked[0].raw_input["host"] == "127.0.0.1"
    assert "# Release notes" in out[0]["content"] and "# Release notes" in out[1]["content"]
    assert out[2]["content"] == "error: the user rejected this fetch"


async def test_a_client_that_cannot_ask_gets_no_fetch_in_ask_mode(
        make_agent: AgentFactory, srv: ScriptedServer, web: WebServer) -> None:
    web.routes["/notes"] = page(ARTICLE)
    [msg] = await _fetch(make_agent, srv, {"url": web.url("/notes")}, approval="auto-edit")
    assert msg["content"].startswith("error: this fetch needs the user's approval")
    assert web.seen == []


async def test_the_sandbox_network_switch_refuses_fetches(
        make_agent: AgentFactory, srv: ScriptedServer, web: WebServer) -> None:
    """With the command sandbox in force and its network off, fetch_url is refused like curl would be;
    with the network on, or no sandbox, it fetches."""
    web.routes["/notes"] = page(ARTICLE)
    found = await detect()
    confined = found.mechanism is not None and found.network_confined
    strict = (await _fetch(make_agent, srv, {"url": web.url("/notes")},
                           sandbox=SandboxConfig(mode="strict", network=False)))[0]["content"]
    assert strict.startswith("error: the network is off for this session")
    assert "sandbox_network = \"on\"" in strict
    auto = (await _fetch(make_agent, srv, {"url": web.url("/notes")}, sandbox=SandboxConfig()))[0]["content"]
    assert auto.startswith("error: the network is off") == confined, (auto, found)
    for config in (SandboxConfig(mode="off"), SandboxConfig(mode="strict", network=True)):
        fetched = (await _fetch(make_agent, srv, {"url": web.url("/notes")}, sandbox=config))[0]["content"]
        assert "# Release notes" in fetched, config


@pytest.mark.parametrize("address, private", [
    ("8.8.8.8", False), ("2001:4860:4860::8888", False), ("127.0.0.1", True), ("::1", True), ("10.1.2.3", True),
    ("172.16.0.1", True), ("192.168.1.1", True), ("169.254.169.254", True), ("100.64.0.1", True),
    ("0.0.0.0", True), ("224.0.0.1", True), ("fe80::1", True), ("fd00::1", True), ("::ffff:10.0.0.1", True),
    ("2002:7f00:1::", True), ("64:ff9b::a00:1", True), ("2606:4700::1111", False), ("255.255.255.255", True),
])
def test_which_addresses_are_private(address: str, private: bool) -> None:
    import ipaddress

    assert (why_private(ipaddress.ip_address(address)) is not None) is private


HOSTILE_PAGES = {  # each: a page that killed or stalled the conversion, and text that must still come through
    "200,000 nested divs": ("<div>" * 200_000 + "deep text" + "</div>" * 200_000, "deep text"),
    "200,000 unclosed <b>": ("<b>" * 200_000 + "bold end", "bold end"),
    "300 nested divs": ("<div>" * 300 + "shallow-ish" + "</div>" * 300, "shallow-ish"),
    "300,000 paragraphs": ("<p>wide</p>" * 300_000, "wide"),
    "300,000 attributes": ("<div " + " ".join(f"a{i}='v'" for i in range(300_000)) + ">attr text</div>", "attr text"),
    "1,500,000 '</'": ("<p>junk ahead</p>" + "</" * 1_500_000, "junk ahead"),
    "1,000,000 '<!'": ("<p>bangs</p>" + "<!" * 1_000_000, "bangs"),
    "1,000,000 entities": ("<p>amps</p>" + "&amp;" * 1_000_000, "amps"),
}


@pytest.mark.parametrize("name", list(HOSTILE_PAGES))
async def test_a_hostile_page_comes_as_text_with_a_note_never_a_traceback(
        name: str, make_agent: AgentFactory, srv: ScriptedServer, web: WebServer) -> None:
    body, expected = HOSTILE_PAGES[name]
    web.routes["/p"] = page(body.encode())
    [msg] = await _fetch(make_agent, srv, {"url": web.url("/p")}, limits={"timeout": 30.0, "max_bytes": 5_000_000})
    out = msg["content"]
    assert "Traceback" not in out and "RecursionError" not in out and "failed unexpectedly" not in out
    assert "shown as" in out and "plain text" in out or "tags removed" in out, out[:500]
    assert expected in out
