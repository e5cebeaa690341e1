"""HPACK (RFC 7541) for minislurm's small HTTP/2 gRPC client.

A complete decoder (static table, dynamic table with size updates and
eviction, Huffman strings) and the few encoder pieces a client needs: header
fields as literals without indexing, never Huffman-coded, so the encoder keeps
no state. Names and values are ``str`` holding one character per octet
(latin-1), so table sizes count octets as the RFC does.

Kept import-light for the commands (see minislurm.wire.h2grpc); imports none of
ctld, nodeagent or cli.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

# RFC 7541 Appendix A; index 1 is STATIC_TABLE[0].
STATIC_TABLE: tuple[tuple[str, str], ...] = (
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
)
_STATIC_LEN = len(STATIC_TABLE)
ENTRY_OVERHEAD = 32  # RFC 7541 section 4.1

# Huffman codes keyed by code | 1 << bit_length (the marker bit keeps codes of
# different lengths apart); built on first use, as most blocks have none.
_huffman_decode_table: dict[int, int] = {}


class Decoder:
    """Decodes the header blocks of one HTTP/2 connection, in order.

    Args:
        max_table_size: the SETTINGS_HEADER_TABLE_SIZE this side advertised:
            the most the peer's dynamic table size updates may ask for.
    """

    def __init__(self, max_table_size: int = 4096) -> None:
        self.max_table_size = max_table_size
        self.table_limit = max_table_size
        self.table_size = 0
        self._entries: list[tuple[str, str]] = []  # newest last

    @property
    def entries(self) -> list[tuple[str, str]]:
        """The dynamic table, newest entry first (as indexed from 62 on)."""
        return self._entries[::-1]

    def decode(self, block: bytes) -> list[tuple[str, str]]:
        """Decode one complete header block (HEADERS plus its CONTINUATIONs).

        Args:
            block: the concatenated header block fragments.

        Returns:
            The header fields, in order, as ``(name, value)``.

        Raises:
            ValueError: the block is malformed (an HTTP/2 COMPRESSION_ERROR).
        """
        headers: list[tuple[str, str]] = []
        pos, end = 0, len(block)
        try:
            while pos < end:
                first = block[pos]
                if first & 0x80:  # indexed header field
                    index, pos = decode_int(block, pos, 7)
                    headers.append(self._lookup(index))
                elif first & 0x40:  # literal with incremental indexing
                    name, value, pos = self._literal(block, pos, 6)
                    self._add(name, value)
                    headers.append((name, value))
                elif first & 0x20:  # dynamic table size update
                    if headers:
                        raise ValueError("HPACK table size update after a header field")
                    size, pos = decode_int(block, pos, 5)
                    self._resize(size)
                else:  # literal without indexing (0000) or never indexed (0001)
                    name, value, pos = self._literal(block, pos, 4)
                    headers.append((name, value))
        except IndexError:
            raise ValueError("HPACK header block is truncated") from None
        return headers

    def _lookup(self, index: int) -> tuple[str, str]:
        if 0 < index <= _STATIC_LEN:
            return STATIC_TABLE[index - 1]
        dynamic = index - _STATIC_LEN
        if index == 0 or dynamic > len(self._entries):
            raise ValueError(f"HPACK index {index} is not in the table")
        return self._entries[-dynamic]

    def _literal(self, block: bytes, pos: int, prefix: int) -> tuple[str, str, int]:
        index, pos = decode_int(block, pos, prefix)
        if index:
            name = self._lookup(index)[0]
        else:
            name, pos = _decode_string(block, pos)
        value, pos = _decode_string(block, pos)
        return name, value, pos

    def _add(self, name: str, value: str) -> None:
        size = len(name) + len(value) + ENTRY_OVERHEAD
        self._evict(self.table_limit - size)
        if size <= self.table_limit:
            self._entries.append((name, value))
            self.table_size += size

    def _resize(self, size: int) -> None:
        if size > self.max_table_size:
            raise ValueError(
                f"HPACK table size update to {size} exceeds the {self.max_table_size} allowed"
            )
        self.table_limit = size
        self._evict(size)

    def _evict(self, room: int) -> None:
        """Drop the oldest entries until the table holds at most ``room`` octets."""
        entries = self._entries
        drop = 0
        while self.table_size > max(room, 0) and drop < len(entries):
            name, value = entries[drop]
            self.table_size -= len(name) + len(value) + ENTRY_OVERHEAD
            drop += 1
        del entries[:drop]


def decode_int(data: bytes, pos: int, prefix: int) -> tuple[int, int]:
    """Decode an HPACK integer with a ``prefix``-bit prefix (RFC 7541 5.1).

    Args:
        data: the buffer.
        pos: offset of the octet holding the prefix.
        prefix: prefix size in bits (1..8).

    Returns:
        ``(value, offset after it)``.

    Raises:
        ValueError: the integer is longer than any sane header needs.
        IndexError: the buffer ends inside the integer.
    """
    mask = (1 << prefix) - 1
    value = data[pos] & mask
    pos += 1
    if value < mask:
        return value, pos
    shift = 0
    while True:
        octet = data[pos]
        pos += 1
        value += (octet & 0x7F) << shift
        if not octet & 0x80:
            return value, pos
        shift += 7
        if shift > 28:
            raise ValueError("HPACK integer is too large")


def encode_int(value: int, prefix: int, flags: int = 0) -> bytes:
    """Encode an HPACK integer with a ``prefix``-bit prefix (RFC 7541 5.1).

    Args:
        value: a non-negative integer.
        prefix: prefix size in bits (1..8).
        flags: the bits of the first octet above the prefix.

    Returns:
        The encoded octets.
    """
    mask = (1 << prefix) - 1
    if value < mask:
        return bytes((flags | value,))
    out = bytearray((flags | mask,))
    value -= mask
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_literal(name: str, value: str, name_index: int = 0) -> bytes:
    """Encode a literal header field without indexing, without Huffman coding.

    Args:
        name: the header name (ignored when ``name_index`` is given).
        value: the header value; characters must be latin-1 octets.
        name_index: a static or dynamic table index for the name, or 0.

    Returns:
        The encoded representation (RFC 7541 6.2.2).
    """
    if name_index:
        out = encode_int(name_index, 4)
    else:
        raw_name = name.encode("latin-1")
        out = b"\x00" + encode_int(len(raw_name), 7) + raw_name
    raw = value.encode("latin-1")
    return out + encode_int(len(raw), 7) + raw


def encode_indexed(index: int) -> bytes:
    """Encode an indexed header field (RFC 7541 6.1), e.g. 3 for ``:method: POST``."""
    return encode_int(index, 7, 0x80)


def _decode_string(data: bytes, pos: int) -> tuple[str, int]:
    huffman = data[pos] & 0x80
    length, pos = decode_int(data, pos, 7)
    end = pos + length
    if end > len(data):
        raise ValueError("HPACK string literal runs past the header block")
    raw = data[pos:end]
    if huffman:
        raw = huffman_decode(raw)
    return raw.decode("latin-1"), end


def huffman_decode(data: bytes) -> bytes:
    """Decode an HPACK Huffman-coded string (RFC 7541 5.2).

    Args:
        data: the coded octets.

    Returns:
        The decoded octets.

    Raises:
        ValueError: EOS inside the string, or padding longer than 7 bits or
            not all ones.
    """
    table = _huffman_decode_table or _build_huffman_table()
    out = bytearray()
    code = 1  # marker bit, then the bits read so far
    for octet in data:
        for shift in (7, 6, 5, 4, 3, 2, 1, 0):
            code = (code << 1) | ((octet >> shift) & 1)
            symbol = table.get(code)
            if symbol is not None:
                if symbol == 256:
                    raise ValueError("HPACK Huffman string contains EOS")
                out.append(symbol)
                code = 1
    bits = code.bit_length() - 1
    if bits > 7 or code != (1 << (bits + 1)) - 1:
        raise ValueError("HPACK Huffman string has invalid padding")
    return bytes(out)


def huffman_encode(data: bytes) -> bytes:
    """Huffman-code ``data`` (RFC 7541 5.2), padding with the EOS prefix.

    Args:
        data: the octets to code.

    Returns:
        The coded octets (tests and test servers use this; the client's
        encoder sends plain literals).
    """
    from minislurm.wire.hpack_huffman import CODES

    acc, bits = 0, 0
    for octet in data:
        code, length = CODES[octet]
        acc = (acc << length) | code
        bits += length
    pad = -bits % 8
    acc = (acc << pad) | ((1 << pad) - 1)
    return acc.to_bytes((bits + pad) // 8, "big")


def _build_huffman_table() -> dict[int, int]:
    from minislurm.wire.hpack_huffman import CODES

    _huffman_decode_table.update(_keyed(CODES))
    return _huffman_decode_table


def _keyed(codes: Iterable[tuple[int, int]]) -> Iterable[tuple[int, int]]:
    for symbol, (code, length) in enumerate(codes):
        yield code | (1 << length), symbol
