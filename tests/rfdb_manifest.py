# tests/rfdb_manifest.py: a database manifest's checksums made right after a
# test changed its bytes on purpose (docs/DATABASE.md: the body's CRC-32C at
# bytes 24-28, the header's over bytes 0-60 at 60-64). Imported by the
# Python parts of tests/run_db_*.sh (sys.path: this folder).
import struct


def crc32c(b):
    c = 0xffffffff
    for x in b:
        c ^= x
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    return c ^ 0xffffffff


def seal(m):
    """m (a bytearray): its body's and its header's checksums set again."""
    m[24:28] = struct.pack('<I', crc32c(m[64:]))
    m[60:64] = struct.pack('<I', crc32c(m[:60]))
