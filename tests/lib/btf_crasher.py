#!/usr/bin/env python3
# Usage: btf_crasher.py SRC DST [loop]: DST is the BPF object SRC with the
# first member of the first anonymous struct in .BTF pointing at a type id
# past the last type.  libbpf 1.1's parse crashes on it (a libFuzzer run
# found it); the loader must lose that object only (doc/loader.md).  With
# "loop", that member is the first typedef and the typedef names itself:
# libbpf 1.1's parse never ends (skip_mods_and_typedefs has no bound).
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
loop = sys.argv[3:] == ['loop']
type_id, typedef, member = 0, None, None
while t < base + hdr_len + type_off + type_len:
    name_off, info = struct.unpack_from('<II', b, t)
    kind, vlen = (info >> 24) & 0x1f, info & 0xffff
    type_id += 1
    if kind == 8 and not typedef:
        typedef = (type_id, t + 8)
    if kind == 4 and not name_off and vlen and not member:
        member = t + 16
    t += 12 + per_member.get(kind, 0) * vlen + fixed.get(kind, 0)
if loop:
    struct.pack_into('<I', b, member, typedef[0])
    struct.pack_into('<I', b, typedef[1], typedef[0])
else:
    struct.pack_into('<I', b, member, struct.unpack_from('<I', b, member)[0] + 0x100000)
open(sys.argv[2], 'wb').write(b)
