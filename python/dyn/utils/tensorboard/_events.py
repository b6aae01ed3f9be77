"""The event files TensorBoard reads, written without TensorFlow or protobuf.

A file is a sequence of TFRecords: a little-endian uint64 length, the masked CRC-32C of those 8
bytes, the record, and the masked CRC-32C of the record. Each record is a serialized
tensorflow.Event protocol buffer (event.proto, summary.proto, tensor.proto, with the field numbers
below), encoded here field by field.
"""
import struct

# ---- CRC-32C (Castagnoli), as TFRecord frames use it ----

_POLY = 0x82F63B78
_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ _POLY if _c & 1 else _c >> 1
    _TABLE.append(_c)
del _i, _c


def crc32c(data):
    crc = 0xFFFFFFFF
    table = _TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def record(data):
    """One TFRecord frame around data."""
    head = struct.pack("<Q", len(data))
    return head + struct.pack("<I", masked_crc32c(head)) + data + struct.pack("<I", masked_crc32c(data))


# ---- protocol buffer encoding ----

def _varint(n):
    if n < 0:
        n += 1 << 64  # int64 fields: two's complement in ten bytes
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wire):
    return _varint(field << 3 | wire)


def f_varint(field, n):
    return _key(field, 0) + _varint(int(n))


def f_double(field, x):
    return _key(field, 1) + struct.pack("<d", float(x))


def f_float(field, x):
    return _key(field, 5) + struct.pack("<f", float(x))


def f_bytes(field, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    return _key(field, 2) + _varint(len(data)) + data


def f_packed_doubles(field, xs):
    return f_bytes(field, b"".join(struct.pack("<d", float(x)) for x in xs))


# tensorflow.Event: wall_time = 1 (double), step = 2 (int64), file_version = 3, summary = 5
def event(wall_time, step=None, file_version=None, summary=None):
    out = f_double(1, wall_time)
    if step is not None:
        out += f_varint(2, step)
    if file_version is not None:
        out += f_bytes(3, file_version)
    if summary is not None:
        out += f_bytes(5, summary)
    return out


# tensorflow.Summary: value = 1 (repeated Summary.Value)
# Summary.Value: tag = 1, simple_value = 2 (float), histo = 5, tensor = 8, metadata = 9
def summary(*values):
    return b"".join(f_bytes(1, v) for v in values)


def scalar_value(tag, x):
    return f_bytes(1, tag) + f_float(2, x)


def histogram_value(tag, h):
    # HistogramProto: min 1, max 2, num 3, sum 4, sum_squares 5 (doubles); bucket_limit 6 and
    # bucket 7 (packed doubles)
    proto = (f_double(1, h["min"]) + f_double(2, h["max"]) + f_double(3, h["num"]) + f_double(4, h["sum"]) +
             f_double(5, h["sum_squares"]) + f_packed_doubles(6, h["bucket_limit"]) +
             f_packed_doubles(7, h["bucket"]))
    return f_bytes(1, tag) + f_bytes(5, proto)


def text_value(tag, text):
    # SummaryMetadata: plugin_data = 1 (PluginData: plugin_name = 1, content = 2, here
    # TextPluginData(version=0), which serializes to nothing and is left out)
    metadata = f_bytes(1, f_bytes(1, "text"))
    # TensorProto: dtype = 1 (DT_STRING = 7), tensor_shape = 2 (TensorShapeProto: dim = 2,
    # Dim: size = 1), string_val = 8
    tensor = f_varint(1, 7) + f_bytes(2, f_bytes(2, f_varint(1, 1))) + f_bytes(8, text)
    return f_bytes(1, tag + "/text_summary") + f_bytes(9, metadata) + f_bytes(8, tensor)
