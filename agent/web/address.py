"""Which addresses ``fetch_url`` may connect to, checked on the address it actually connects to.

A name is resolved here, every address it resolves to is checked, and the connection goes to one of
those checked addresses (the name still sent as ``Host`` and TLS SNI), so a name that resolves to a
public address for the check and to ``127.0.0.1`` for the connection (DNS rebinding) gets nowhere.
Every redirect hop goes through the same check.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass

import anyio

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class AddressRefused(Exception):
    """The address is not one ``fetch_url`` may connect to; the message says why, for the model."""


def _embedded_v4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, Teredo, NAT64), which is where it really goes."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def why_private(ip: IPAddress) -> str | None:
    """Why ``ip`` is not a public unicast address (loopback, private, link-local...), or None."""
    if isinstance(ip, ipaddress.IPv6Address):
        inner = _embedded_v4(ip)
        if inner is not None:
            found = why_private(inner)
            return f"{found} ({inner} inside an IPv6 address)" if found else None
    for flag, name in (("is_loopback", "a loopback address"), ("is_unspecified", "the unspecified address"),
                       ("is_link_local", "a link-local address"), ("is_multicast", "a multicast address"),
                       ("is_private", "a private network address"), ("is_reserved", "a reserved address")):
        if getattr(ip, flag):
            return name
    if not ip.is_global:
        return "not a public address"
    return None


@dataclass(frozen=True)
class Target:
    host: str  # as in the URL (a name or an address literal)
    port: int
    address: IPAddress  # where the connection goes


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(entries: tuple[str, ...] | list[str]) -> tuple[Network, ...]:
    """CIDR networks (``10.0.0.0/8``, ``127.0.0.1``); raises ValueError naming a bad entry."""
    out: list[Network] = []
    for entry in entries:
        try:
            out.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ValueError(f"{entry!r} is not an IP network (write it like 10.0.0.0/8 or 127.0.0.1)") from None
    return tuple(out)


def _allowed(address: IPAddress, allowed: tuple[Network, ...]) -> bool:
    return any(address.version == net.version and address in net for net in allowed)


async def resolve(host: str, port: int, *, allowed: tuple[Network, ...] = ()) -> Target:
    """The checked address to connect to for ``host``: every address the name resolves to must be public
    or inside one of the ``allowed`` networks. Raises AddressRefused."""
    literal = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        addresses: list[IPAddress] = [ipaddress.ip_address(literal)]
        named = False
    except ValueError:
        addresses, named = [], True
    if named:
        try:
            infos = await anyio.getaddrinfo(literal, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise AddressRefused(f"the name {host!r} could not be resolved ({exc})") from None
        for info in infos:
            text = str(info[4][0]).split("%", 1)[0]  # drop an IPv6 zone
            try:
                found = ipaddress.ip_address(text)
            except ValueError:
                continue
            if found not in addresses:
                addresses.append(found)
        if not addresses:
            raise AddressRefused(f"the name {host!r} resolved to no address")
    for address in addresses:  # every one: the connection must not be able to land on a refused one
        reason = None if _allowed(address, allowed) else why_private(address)
        if reason:
            via = f" ({host} resolves to {address})" if named else ""
            raise AddressRefused(f"{address} is {reason}{via}; fetch_url only reads public web addresses")
    return Target(host=literal, port=port, address=addresses[0])
