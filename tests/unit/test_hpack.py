"""HPACK decoding against RFC 7541 Appendix C, plus the decoder's error cases."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minislurm.wire import hpack
from minislurm.wire.hpack_huffman import CODES, EOS


def unhex(text: str) -> bytes:
    return bytes.fromhex("".join(text.split()))


# ---------------------------------------------------------------- C.1 integers


@pytest.mark.parametrize(
    ("value", "prefix", "encoded"),
    [(10, 5, "0a"), (1337, 5, "1f9a0a"), (42, 8, "2a")],
)
def test_integers_encode_and_decode_as_in_rfc_c1(value: int, prefix: int, encoded: str) -> None:
    assert hpack.encode_int(value, prefix) == unhex(encoded)
    assert hpack.decode_int(unhex(encoded), 0, prefix) == (value, len(unhex(encoded)))


# ---------------------------------------------------------------- C.2 single fields


@pytest.mark.parametrize(
    ("block", "header", "table"),
    [
        pytest.param(
            "400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572",
            ("custom-key", "custom-header"),
            [("custom-key", "custom-header")],
            id="C.2.1",
        ),
        pytest.param(
            "040c 2f73 616d 706c 652f 7061 7468", (":path", "/sample/path"), [], id="C.2.2"
        ),
        pytest.param(
            "1008 7061 7373 776f 7264 0673 6563 7265 74", ("password", "secret"), [], id="C.2.3"
        ),
        pytest.param("82", (":method", "GET"), [], id="C.2.4"),
    ],
)
def test_single_header_field_representations_decode_as_in_rfc_c2(
    block: str, header: tuple[str, str], table: list[tuple[str, str]]
) -> None:
    decoder = hpack.Decoder()
    assert decoder.decode(unhex(block)) == [header]
    assert decoder.entries == table
    assert decoder.table_size == sum(len(n) + len(v) + 32 for n, v in table)


# ---------------------------------------------------------------- C.3 / C.4 requests

REQUESTS = [
    [(":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "www.example.com")],
    [
        (":method", "GET"),
        (":scheme", "http"),
        (":path", "/"),
        (":authority", "www.example.com"),
        ("cache-control", "no-cache"),
    ],
    [
        (":method", "GET"),
        (":scheme", "https"),
        (":path", "/index.html"),
        (":authority", "www.example.com"),
        ("custom-key", "custom-value"),
    ],
]
REQUEST_TABLES = [
    ([(":authority", "www.example.com")], 57),
    ([("cache-control", "no-cache"), (":authority", "www.example.com")], 110),
    (
        [
            ("custom-key", "custom-value"),
            ("cache-control", "no-cache"),
            (":authority", "www.example.com"),
        ],
        164,
    ),
]
PLAIN_REQUESTS = [
    "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
    "8286 84be 5808 6e6f 2d63 6163 6865",
    "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
]
HUFFMAN_REQUESTS = [
    "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
    "8286 84be 5886 a8eb 1064 9cbf",
    "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
]


@pytest.mark.parametrize(
    "blocks", [PLAIN_REQUESTS, HUFFMAN_REQUESTS], ids=["C.3 plain", "C.4 huffman"]
)
def test_request_sequences_decode_with_a_shared_dynamic_table(blocks: list[str]) -> None:
    decoder = hpack.Decoder()
    for block, expected, (table, size) in zip(blocks, REQUESTS, REQUEST_TABLES, strict=True):
        assert decoder.decode(unhex(block)) == expected
        assert decoder.entries == table
        assert decoder.table_size == size


# ---------------------------------------------------------------- C.5 / C.6 responses

DATE1, DATE2 = "Mon, 21 Oct 2013 20:13:21 GMT", "Mon, 21 Oct 2013 20:13:22 GMT"
LOCATION = "https://www.example.com"
COOKIE = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"
RESPONSES = [
    [(":status", "302"), ("cache-control", "private"), ("date", DATE1), ("location", LOCATION)],
    [(":status", "307"), ("cache-control", "private"), ("date", DATE1), ("location", LOCATION)],
    [
        (":status", "200"),
        ("cache-control", "private"),
        ("date", DATE2),
        ("location", LOCATION),
        ("content-encoding", "gzip"),
        ("set-cookie", COOKIE),
    ],
]
RESPONSE_TABLES = [
    (
        [("location", LOCATION), ("date", DATE1), ("cache-control", "private"), (":status", "302")],
        222,
    ),
    (
        [(":status", "307"), ("location", LOCATION), ("date", DATE1), ("cache-control", "private")],
        222,
    ),
    ([("set-cookie", COOKIE), ("content-encoding", "gzip"), ("date", DATE2)], 215),
]
PLAIN_RESPONSES = [
    """4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133
       2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70
       6c65 2e63 6f6d""",
    "4803 3330 37c1 c0bf",
    """88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d
       54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049
       5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e
       3d31""",
]
HUFFMAN_RESPONSES = [
    """4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
       2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3""",
    "4883 640e ffc1 c0bf",
    """88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab
       77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f
       9587 3160 65c0 03ed 4ee5 b106 3d50 07""",
]


@pytest.mark.parametrize(
    "blocks", [PLAIN_RESPONSES, HUFFMAN_RESPONSES], ids=["C.5 plain", "C.6 huffman"]
)
def test_response_sequences_evict_from_a_256_octet_table(blocks: list[str]) -> None:
    decoder = hpack.Decoder(max_table_size=256)
    for block, expected, (table, size) in zip(blocks, RESPONSES, RESPONSE_TABLES, strict=True):
        assert decoder.decode(unhex(block)) == expected
        assert decoder.entries == table
        assert decoder.table_size == size


# ---------------------------------------------------------------- table size updates


def test_size_update_evicts_oldest_entries_and_bounds_later_additions() -> None:
    decoder = hpack.Decoder()
    for block in PLAIN_REQUESTS:
        decoder.decode(unhex(block))
    # Size update to 110 (001 11111 + 79) drops the oldest entry (:authority, 57 octets).
    assert decoder.decode(hpack.encode_int(110, 5, 0x20)) == []
    assert decoder.entries == [("custom-key", "custom-value"), ("cache-control", "no-cache")]
    assert decoder.table_size == 107
    # Then an entry larger than the whole table empties it and is not added.
    decoder.decode(b"\x40" + b"\x05bignm" + hpack.encode_int(80, 7) + b"v" * 80)
    assert decoder.entries == []
    assert decoder.table_size == 0


def test_size_update_to_zero_clears_the_table() -> None:
    decoder = hpack.Decoder()
    decoder.decode(unhex(PLAIN_REQUESTS[0]))
    assert decoder.decode(b"\x20\x82") == [(":method", "GET")]
    assert decoder.entries == []
    assert decoder.table_size == 0


def test_size_update_above_the_advertised_maximum_is_rejected() -> None:
    with pytest.raises(ValueError, match="exceeds"):
        hpack.Decoder(max_table_size=100).decode(hpack.encode_int(101, 5, 0x20))


def test_size_update_after_a_header_field_is_rejected() -> None:
    with pytest.raises(ValueError, match="after a header field"):
        hpack.Decoder().decode(b"\x82\x20")


# ---------------------------------------------------------------- malformed blocks


@pytest.mark.parametrize(
    ("block", "message"),
    [
        (b"\x80", "index 0"),
        (b"\xbe", "index 62"),  # nothing in the dynamic table yet
        (b"\x04\x0c/sample", "runs past"),
        (b"\x04", "truncated"),
        (b"\x1f\xff\xff\xff\xff\xff\x01", "too large"),
    ],
)
def test_malformed_blocks_raise_value_error(block: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        hpack.Decoder().decode(block)


def test_huffman_padding_longer_than_seven_bits_is_rejected() -> None:
    with pytest.raises(ValueError, match="padding"):
        hpack.huffman_decode(hpack.huffman_encode(b"a") + b"\xff")


def test_huffman_padding_that_is_not_all_ones_is_rejected() -> None:
    # "0" is 00000 (5 bits): one octet needs 3 bits of padding, which must be 111.
    assert hpack.huffman_decode(b"\x07") == b"0"
    with pytest.raises(ValueError, match="padding"):
        hpack.huffman_decode(b"\x06")


def test_huffman_eos_inside_a_string_is_rejected() -> None:
    eos_code, eos_bits = CODES[EOS]
    data = (eos_code << 2 | 0b11).to_bytes((eos_bits + 2) // 8, "big")
    with pytest.raises(ValueError, match="EOS"):
        hpack.huffman_decode(data)


# ---------------------------------------------------------------- the Huffman table


def test_huffman_table_is_the_complete_canonical_code_of_appendix_b() -> None:
    assert len(CODES) == 257
    assert sum(2 ** (30 - bits) for _, bits in CODES) == 2**30  # Kraft equality: complete
    order = sorted(range(257), key=lambda s: (CODES[s][1], s))
    code = 0
    for previous, symbol in itertools.pairwise(order):
        code = (code + 1) << (CODES[symbol][1] - CODES[previous][1])
        assert CODES[symbol][0] == code, f"symbol {symbol}"
    assert CODES[ord("0")] == (0x0, 5)
    assert CODES[ord("a")] == (0x3, 5)
    assert CODES[EOS] == (0x3FFFFFFF, 30)


@given(st.binary(max_size=200))
def test_huffman_decoding_inverts_encoding(data: bytes) -> None:
    assert hpack.huffman_decode(hpack.huffman_encode(data)) == data


def test_literal_without_indexing_round_trips_and_leaves_the_table_alone() -> None:
    decoder = hpack.Decoder()
    block = hpack.encode_literal("x-trace", "abc") + hpack.encode_literal(":path", "/a/b", 4)
    assert decoder.decode(block) == [("x-trace", "abc"), (":path", "/a/b")]
    assert decoder.entries == []
