"""TensorBoard event files as a training program writes them, in pure Python (no TensorFlow,
no protobuf library): what TensorBoard's own reader reads.

An event file is a sequence of TFRecords: the length of the record as a little-endian
uint64, the masked CRC-32C of those 8 bytes (uint32), the record (an `Event` protocol buffer)
and the masked CRC-32C of the record. Its first record is the file's version
(`file_version: "brain.Event:2"`); each later one a `Summary` of scalars at a step:

    Event   {double wall_time = 1; int64 step = 2; string file_version = 3;
             Summary summary = 5;}
    Summary {repeated Value value = 1;}
    Value   {string tag = 1; float simple_value = 2;}

(tensorboard/compat/proto/event.proto and summary.proto). A `simple_value` is what
`tf.summary.scalar` of TF1 and PyTorch's `SummaryWriter.add_scalar` write; TensorBoard reads
it as a scalar.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

FILE_VERSION = "brain.Event:2"
_MASK_DELTA = 0xA282EAD8


def _table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1  # Castagnoli, reflected
        table.append(c)
    return table


_TABLE = _table()


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data: bytes) -> int:
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # a negative int64 as protobuf writes it: ten bytes
    out = bytearray()
    while True:
        low = n & 0x7F
        n >>= 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _bytes(field: int, data: bytes) -> bytes:
    return _key(field, 2) + _varint(len(data)) + data


def _value(tag: str, value: float) -> bytes:
    return _bytes(1, tag.encode()) + _key(2, 5) + struct.pack("<f", value)


def event(wall_time: float, step: int = 0, *, file_version: str = "",
          scalars: Iterable[tuple[str, float]] = ()) -> bytes:
    """One `Event` message."""
    out = _key(1, 1) + struct.pack("<d", wall_time)
    if step:
        out += _key(2, 0) + _varint(step)
    if file_version:
        out += _bytes(3, file_version.encode())
    values = b"".join(_bytes(1, _value(tag, v)) for tag, v in scalars)
    if values:
        out += _bytes(5, values)
    return out


def record(data: bytes) -> bytes:
    """`data` framed as a TFRecord."""
    length = struct.pack("<Q", len(data))
    return (length + struct.pack("<I", masked_crc(length)) + data
            + struct.pack("<I", masked_crc(data)))


def file_start(wall_time: float) -> bytes:
    """The first record of an event file."""
    return record(event(wall_time, file_version=FILE_VERSION))


def scalars_record(wall_time: float, step: int, scalars: Iterable[tuple[str, float]]) -> bytes:
    """A record of scalar summaries at `step`."""
    return record(event(wall_time, step, scalars=scalars))
