"""HTTP requests written by hand on a TCP socket: a declared length that never arrives, or a
chunked body that never ends, which no HTTP client library will send."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

CHUNK = 64 * 1024


def _open(url: str) -> socket.socket:
    parts = urlsplit(url)
    assert parts.hostname == "127.0.0.1" and parts.port is not None
    return socket.create_connection((parts.hostname, parts.port), timeout=10)


def _status(sock: socket.socket) -> tuple[int, bytes]:
    """The status of the answer and the whole of it (headers and a Content-Length body)."""
    answer = b""
    while b"\r\n\r\n" not in answer:
        data = sock.recv(65536)
        if not data:
            break
        answer += data
    head, _, body = answer.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        data = sock.recv(65536)
        if not data:
            break
        body += data
    return int(head.split(b" ", 2)[1]), body


def _head(url: str, method: str, path: str, headers: dict[str, str]) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {urlsplit(url).netloc}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def declared_but_not_sent(
    url: str, method: str, path: str, length: int, headers: dict[str, str]
) -> tuple[int, bytes]:
    """Declare `length` bytes, send one chunk of them, and read the answer."""
    with _open(url) as sock:
        head = {**headers, "Content-Length": str(length), "Content-Type": "application/json"}
        sock.sendall(_head(url, method, path, head) + b"[" + b" " * (CHUNK - 1))
        return _status(sock)


def chunked_without_end(
    url: str, method: str, path: str, total: int, headers: dict[str, str]
) -> tuple[int, bytes]:
    """Send `total` bytes as chunks and never the last chunk, then read the answer."""
    with _open(url) as sock:
        head = {**headers, "Transfer-Encoding": "chunked", "Content-Type": "application/json"}
        sock.sendall(_head(url, method, path, head))
        sent = 0
        try:
            while sent < total:
                sock.sendall(f"{CHUNK:x}\r\n".encode() + b" " * CHUNK + b"\r\n")
                sent += CHUNK
        except OSError:
            pass  # the server answered and closed while this was still sending
        return _status(sock)
