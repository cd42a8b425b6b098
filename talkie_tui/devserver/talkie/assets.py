"""Binary assets generated in code: the brand logo (PNG) and the sample offer PDFs."""

from __future__ import annotations

import struct
import unicodedata
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from talkie_tui.devserver.talkie import demo_data

ACCENT = "#0b7a75"

Rgba = tuple[int, int, int, int]


def png(width: int, height: int, pixel: Callable[[int, int], Rgba]) -> bytes:
    """Encode an RGBA image given as a pixel function into a PNG file."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    raw = bytearray()
    for y in range(height):
        raw.append(0)  # filter type "None" for every scanline
        for x in range(width):
            raw.extend(pixel(x, y))
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(bytes(raw), 9))
        + chunk(b"IEND", b"")
    )


def _hex_rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


@cache
def logo_png(size: int = 64) -> bytes:
    """The brand logo: a white speech bubble on an accent-coloured rounded square."""
    red, green, blue = _hex_rgb(ACCENT)
    radius = size * 0.22
    centre_x, centre_y = size / 2, size * 0.45
    half_w, half_h = size * 0.32, size * 0.22

    def inside_rounded_square(x: float, y: float) -> bool:
        nearest_x = min(max(x, radius), size - radius)
        nearest_y = min(max(y, radius), size - radius)
        return (x - nearest_x) ** 2 + (y - nearest_y) ** 2 <= radius**2

    def inside_bubble(x: float, y: float) -> bool:
        ellipse = ((x - centre_x) / half_w) ** 2 + ((y - centre_y) / half_h) ** 2 <= 1
        # the tail: a small triangle below the bubble's lower-left quarter
        tail_top, tail_bottom = centre_y + half_h * 0.6, size * 0.8
        tail = (
            tail_top <= y <= tail_bottom and size * 0.3 <= x <= size * 0.3 + (tail_bottom - y) * 0.8
        )
        return ellipse or tail

    def pixel(x: int, y: int) -> Rgba:
        px, py = x + 0.5, y + 0.5
        if not inside_rounded_square(px, py):
            return (0, 0, 0, 0)
        if inside_bubble(px, py):
            return (255, 255, 255, 255)
        return (red, green, blue, 255)

    return png(size, size, pixel)


def _pdf_text(value: str) -> str:
    # The built-in Helvetica font only knows Latin-1; fold diacritics and escape string syntax.
    folded = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode("ascii")
    return folded.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf_document(title: str, lines: list[str]) -> bytes:
    """A small valid one-page PDF showing a title and some lines of text."""
    commands = [f"BT /F1 20 Tf 56 780 Td ({_pdf_text(title)}) Tj ET"]
    for index, line in enumerate(lines):
        commands.append(f"BT /F1 12 Tf 56 {740 - 20 * index} Td ({_pdf_text(line)}) Tj ET")
    stream = "\n".join(commands).encode("ascii")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref_at = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref_at}\n%%EOF\n"
    ).encode()
    return bytes(out)


@dataclass(frozen=True)
class SampleFile:
    """A downloadable file referenced by demo cards."""

    name: str
    mime: str
    data: bytes

    @property
    def size(self) -> int:
        """Length in bytes."""
        return len(self.data)

    @property
    def url(self) -> str:
        """The same-origin path it is served at."""
        return f"/api/files/{self.name}"


@cache
def sample_files() -> dict[str, SampleFile]:
    """Every file the demo can link to, by name."""
    files = {}
    for offer in demo_data.OFFERS:
        company = demo_data.company(offer.company_id)
        lines = [
            f"Customer: {company.name}, {company.city}",
            f"Amount: {demo_data.format_czk(offer.amount_czk, czech=False)}",
            f"Valid until: {offer.valid_until}",
            "",
            *(f"- {line}" for line in offer.lines),
        ]
        data = pdf_document(f"Offer {offer.number}", lines)
        files[offer.file_name] = SampleFile(offer.file_name, "application/pdf", data)
    price_list = "item,price_czk\nCRM licence (user/month),490\nOnboarding workshop,18000\n"
    files["Cenik-2026.csv"] = SampleFile("Cenik-2026.csv", "text/csv", price_list.encode())
    return files
