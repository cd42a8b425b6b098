"""Hub ids (`prefix_` + 26 lowercase Crockford base32 chars of a UUIDv7) and credentials
(`ses_tok_`, `mgt_tok_`, `bnd_sec_` + 32 random bytes in the same alphabet, kept as SHA-256)."""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import time

ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
PREFIXES = frozenset({"usr", "ses", "agt", "bnd", "cnv", "msg", "evt", "tok", "med", "key", "sch"})
SESSION_TOKEN = "ses_tok_"  # noqa: S105 - a prefix, not a secret
API_KEY = "mgt_tok_"
BINDING_SECRET = "bnd_sec_"  # noqa: S105 - a prefix, not a secret
_ID = re.compile(r"([a-z]{3})_([0-9a-hjkmnp-tv-z]{26})")


# Every pair of characters, by the 10 bits they encode: half as many steps per id.
_PAIRS = [first + second for first in ALPHABET for second in ALPHABET]


def _base32(value: int, length: int) -> str:
    """The low `length` * 5 bits of `value`, most significant first."""
    pairs, odd = divmod(length, 2)
    chunks = []
    for _ in range(pairs):
        chunks.append(_PAIRS[value & 1023])
        value >>= 10
    if odd:
        chunks.append(ALPHABET[value & 31])
    return "".join(reversed(chunks))


_last_stamp = 0
_stamp_lock = threading.Lock()


def uuid7() -> int:
    """A UUIDv7 as a 128-bit integer: 48 bits of Unix milliseconds, 12 bits of the
    millisecond's fraction, then randomness. Each is greater than the one before (RFC 9562's
    method 3), so two messages made in one millisecond still sort in the order they were made:
    clients place messages by id."""
    global _last_stamp
    nanos = time.time_ns()
    stamp = (nanos // 1_000_000) << 12 | (nanos % 1_000_000) * 4096 // 1_000_000
    with _stamp_lock:
        stamp = max(stamp, _last_stamp + 1)
        _last_stamp = stamp
    millis, fraction = stamp >> 12, stamp & 0xFFF
    rand_b = secrets.randbits(62)
    return (millis << 80) | (0x7 << 76) | (fraction << 64) | (0b10 << 62) | rand_b


def new_id(prefix: str) -> str:
    """A new id such as `msg_01jd…` (26 chars encode the 128 bits)."""
    assert prefix in PREFIXES, prefix
    return f"{prefix}_{_base32(uuid7(), 26)}"


def is_id(value: object, prefix: str) -> bool:
    """Whether `value` is a well-formed id with this prefix."""
    if not isinstance(value, str):
        return False
    match = _ID.fullmatch(value)
    return match is not None and match.group(1) == prefix


def new_secret(prefix: str) -> str:
    """A credential: the prefix and 256 random bits (shown once; store `secret_hash` of it)."""
    return prefix + _base32(int.from_bytes(secrets.token_bytes(32), "big"), 52)


def secret_hash(secret: str) -> str:
    """The stored form of a credential: SHA-256 hex."""
    return hashlib.sha256(secret.encode()).hexdigest()
