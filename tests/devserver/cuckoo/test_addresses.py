"""Which webhook addresses the hub accepts: mapped IPv6 forms are judged as the IPv4 address
they carry; link-local and metadata addresses never; development mode opens loopback and
private networks, nothing else."""

from __future__ import annotations

import ipaddress

import pytest

from talkie_tui.devserver.cuckoo.addresses import address_problem, url_problem

NEVER = [
    "169.254.169.254",  # the cloud metadata address
    "::ffff:169.254.169.254",  # the same, IPv4-mapped
    "::ffff:a9fe:a9fe",  # the same, written in hex
    "64:ff9b::a9fe:a9fe",  # the same, through NAT64
    "2002:a9fe:a9fe::1",  # the same, through 6to4
    "fd00:ec2::254",  # the IPv6 metadata address
    "100.100.100.200",  # another cloud's metadata address
    "169.254.1.1",
    "fe80::1",
    "::ffff:224.0.0.1",
    "224.0.0.1",
    "ff02::1",
    "::ffff:0.0.0.0",
    "0.0.0.0",
    "::",
    "100.64.0.1",
    "::ffff:100.64.0.1",
    "240.0.0.1",
    "255.255.255.255",
    "192.0.2.1",
]
DEV_ONLY = ["127.0.0.1", "::1", "::ffff:127.0.0.1", "10.1.2.3", "::ffff:10.1.2.3", "172.16.0.1"]
DEV_ONLY += ["192.168.1.10", "fd12:3456::1"]
PUBLIC = ["93.184.216.34", "::ffff:93.184.216.34", "2606:4700::1111", "8.8.8.8"]


@pytest.mark.parametrize("dev", [False, True])
@pytest.mark.parametrize("address", NEVER)
def test_never(address: str, dev: bool) -> None:
    assert address_problem(ipaddress.ip_address(address), dev) is not None


@pytest.mark.parametrize("address", DEV_ONLY)
def test_in_development_mode_only(address: str) -> None:
    assert address_problem(ipaddress.ip_address(address), True) is None
    assert address_problem(ipaddress.ip_address(address), False) is not None


@pytest.mark.parametrize("dev", [False, True])
@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses(address: str, dev: bool) -> None:
    assert address_problem(ipaddress.ip_address(address), dev) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://[::ffff:169.254.169.254]/hook",
        "http://[::ffff:224.0.0.1]/",
        "http://[::ffff:0.0.0.0]/",
        "http://[::1",  # not a URL at all
        "http://example.com:99999/",  # no such port
    ],
)
def test_urls_refused_in_development_mode(url: str) -> None:
    assert url_problem(url, True) is not None


def test_a_public_host_name_passes_the_form_check() -> None:
    assert url_problem("https://hooks.example.com/cuckoo", False) is None
