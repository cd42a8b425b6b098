"""Finding out what a server speaks: an address refused by the rules is not tried as another
protocol, whose rules are the same."""

from __future__ import annotations

import pytest

from talkie_tui import backends
from talkie_tui.core.errors import AddressRefused


@pytest.mark.parametrize("address", ["http://example.com", "http://10.0.0.7:8080"])
async def test_plain_http_off_this_computer_is_refused_once(address: str) -> None:
    with pytest.raises(AddressRefused) as refused:
        await backends.connect(address)
    assert "Minara" not in refused.value.message  # one reason, not the same one twice
    assert "https" in refused.value.message
