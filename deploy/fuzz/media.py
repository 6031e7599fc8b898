"""Media files for the fuzzers, made in memory and the same every run: a valid PNG, a
decompression bomb, truncated JPEGs, a broken MP4 and a PNG/ZIP/HTML polyglot."""
import base64
import io
import struct
import zipfile
import zlib

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# A 16x16 baseline JPEG (ffmpeg's testsrc, quality 8): SOI, APP0, COM, DQT, DHT, SOF0 at byte
# 224, SOS at 243, then the entropy-coded data.
JPEG_16 = base64.b64decode(
    "/9j/4AAQSkZJRgABAgAAAQABAAD//gAQTGF2YzU5LjM3LjEwMAD/2wBDAAgQEBMQExYWFhYWFhoYGhsbGxoaGhobGxsdHR0iIiId"
    "HR0bGx0dICAiIiUmJSMjIiMmJigoKDAwLi44ODpFRVP/xABzAAEBAAAAAAAAAAAAAAAAAAAFBgEBAAMBAAAAAAAAAAAAAAAABgID"
    "AQQQAAICAQMEAwEBAAAAAAAAAAIBAxESAAQFMSIhE1IyYUEUEQACAQIGAQMFAQAAAAAAAAACAQMRBDEAEyEFEkFhFCKBJJJCUrH/"
    "wAARCAAQABADARIAAhIAAxIA/9oADAMBAAIRAxEAPwCZ9MnHcbCQGQSSAMjKMiTo8SFJrFqhPu/W/LWqGYYN5x+3X+iIMI44m7Eq"
    "wEBt9yq8OmlPG2FrOfeWIJW67SCjH8SqP6relfXJzjuXmjuNEbKSRrymWG+9FE9lVZ2KZ3A3gmh+yGEYGluOubKQq/0VENfAqixd"
    "ee7A+M924xK6G70miBNIVA6Nprv2VSSeFG0sq77eDw25CSIAGJEPsAAFWDxRYpY91ETHyll10Jy8U/IzSRDBKNVTQEd/X+UvjoZx"
    "t5czqks0stcdQ2b27eSba+mUllxVvBDqx30U7FbiCHatcaSl/njN8EITnfnJ2J2nt/brufWLWTUnUEXT5+dvXM+JljmK8CaQLY7r"
    "R+EhJEGkq4ExZVW+Cpn/2Q==")
JPEG_SOF0 = 224


def _chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _png(width, height, idat):
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit grayscale
    return PNG_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")


def png(width, height):
    """A small grayscale gradient: a real image the media worker makes thumbnails of."""
    rows = b"".join(b"\x00" + bytes((x * 7 + y * 3) % 256 for x in range(width)) for y in range(height))
    return _png(width, height, zlib.compress(rows))


def bomb_png(side=20000):
    """side x side pixels of zeros (400 MB decoded at 20,000), about 390 KB compressed."""
    compressor = zlib.compressobj(9)
    rows = (b"\x00" * (side + 1)) * 100
    parts = [compressor.compress(rows) for _ in range(side // 100)]
    parts.append(compressor.compress((b"\x00" * (side + 1)) * (side % 100)))
    parts.append(compressor.flush())
    return _png(side, side, b"".join(parts))


def jpeg_truncated():
    """The JPEG cut in the middle of its entropy-coded data (no EOI)."""
    return JPEG_16[: (len(JPEG_16) + JPEG_SOF0) // 2]


def jpeg_huge_truncated(side=30000):
    """The JPEG's frame header claiming side x side pixels, cut right after the scan header."""
    data = bytearray(JPEG_16)
    assert data[JPEG_SOF0:JPEG_SOF0 + 2] == b"\xff\xc0"
    struct.pack_into(">HH", data, JPEG_SOF0 + 5, side, side)  # SOF0: length(2) precision(1) height width
    return bytes(data[: JPEG_SOF0 + 40])


def mp4_truncated():
    """An MP4's ftyp box, then a moov box claiming 1 GiB and 4 KiB of patterned garbage."""
    ftyp = struct.pack(">I", 24) + b"ftypisom" + struct.pack(">I", 512) + b"isommp41"
    moov = struct.pack(">I", 1 << 30) + b"moov" + bytes((n * 37) % 256 for n in range(4096))
    return ftyp + moov


def polyglot():
    """A valid PNG followed by a ZIP holding index.html and an HTML document: whatever reads
    the bytes from the front sees an image, from the back an archive, a sniffer a page."""
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr(zipfile.ZipInfo("index.html", date_time=(2020, 1, 1, 0, 0, 0)),
                   "<script>alert(document.domain)</script>")
    html = b"<html><body><script>alert(document.cookie)</script></body></html>"
    return png(8, 8) + archive.getvalue() + html
