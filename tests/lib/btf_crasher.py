#!/usr/bin/env python3
# Usage: btf_crasher.py SRC DST: DST is the BPF object SRC with the first
# member of the first anonymous struct in .BTF pointing at a type id past
# the last type.  libbpf 1.1's parse crashes on it (a libFuzzer run found
# it); the loader must lose that object only (doc/loader.md).
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
shoff, = struct.unpack_from('<Q', b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3a)
def sh(i):
    return struct.unpack_from('<IIQQQQIIQQ', b, shoff + i * shentsize)
names = sh(shstrndx)[4]
base = [sh(i)[4] for i in range(shnum)
        if b[names + sh(i)[0]:].split(b'\0', 1)[0] == b'.BTF'][0]
hdr_len, type_off, type_len = struct.unpack_from('<III', b, base + 4)
t = base + hdr_len + type_off
per_member = {4: 12, 5: 12, 6: 8, 13: 8, 15: 12, 19: 12}
fixed = {1: 4, 3: 12, 14: 4, 17: 4}
while t < base + hdr_len + type_off + type_len:
    name_off, info = struct.unpack_from('<II', b, t)
    kind, vlen = (info >> 24) & 0x1f, info & 0xffff
    if kind == 4 and not name_off and vlen:
        struct.pack_into('<I', b, t + 16, struct.unpack_from('<I', b, t + 16)[0] + 0x100000)
        break
    t += 12 + per_member.get(kind, 0) * vlen + fixed.get(kind, 0)
open(sys.argv[2], 'wb').write(b)
