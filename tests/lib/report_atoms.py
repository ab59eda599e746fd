#!/usr/bin/env python3
# Atoms for kstats report's tests, bench and README picture, and the checks
# that read the page back (tests/sh/test_report.sh).
#   gen DIR --days N [--keys K] [--metrics M] [--seed S] [--gap D]... [--start DAY]
#       one atoms-<id>.pb per UTC day, encoded here on the wire (not by
#       kstats): per metric K keys, 4-6 occupied buckets per atom, a reset
#       on the first day, anomalies on the third, no file on a --gap day.
#   expect FILE...   the cells protoc --decode finds: "Metric key day bucket\tcount"
#   dom FILE         the cells of a page saved by chromium --dump-dom, same form
#   (KEYS_SUMMED=1: both summed over each metric's keys)
#   colours PNG      how many distinct colours a screenshot has
import datetime
import html
import math
import os
import random
import re
import struct
import subprocess
import sys
import zlib

PROTO_DIR = os.path.normpath(os.path.join(os.path.dirname(__file__), "../../proto"))

# atom id, message, key fields (number, kind), bucket field number.
METRICS = [
    (100003, "CompactionDuration", [], 1),
    (100002, "DirectReclaimLatency", [(1, "enum:process_state")], 2),
    (100001, "KswapdLatency", [(1, "uint:node_id")], 2),
    (100004, "CmaAllocationLatency", [(1, "str:pool_name"), (4, "uint:pool_id")], 3),
    (100005, "DmabufRequestSizes", [(1, "str:exporter_name"), (4, "uint:exporter_id")], 3),
    (100006, "SuspendResumeLatency", [(1, "enum:phase")], 2),
]


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def field(num, wire, payload):
    tag = varint(num << 3 | wire)
    if wire == 0:
        return tag + varint(payload)
    return tag + varint(len(payload)) + payload


def payload(keys, bucket_field, k, buckets):
    out = b""
    for num, kind in keys:
        if kind.startswith("str:"):
            # Key 1's name is HTML: the page must escape it.
            out += field(num, 2, ("<b>pool&%d" if k == 1 else "pool%d").__mod__(k).encode())
        elif kind.startswith("enum:"):
            out += field(num, 0, k + 1)  # enum values 1.. (0 is "unspecified")
        else:
            out += field(num, 0, k)
    for c in buckets:
        out += field(bucket_field, 0, c)
    return out


def gen(args):
    out, opts = args[0], {"--days": "7", "--keys": "2", "--metrics": "6", "--seed": "1",
                          "--start": "2026-11-01"}
    gaps = set()
    i = 1
    while i < len(args):
        if args[i] == "--gap":
            gaps.add(int(args[i + 1]))
        else:
            opts[args[i]] = args[i + 1]
        i += 2
    rnd = random.Random(int(opts["--seed"]))
    start = datetime.date.fromisoformat(opts["--start"])
    epoch_day = (start - datetime.date(1970, 1, 1)).days
    os.makedirs(out, exist_ok=True)
    for d in range(int(opts["--days"])):
        if d in gaps:
            continue
        end_s = (epoch_day + d) * 86400 + 3 * 3600 + rnd.randrange(3600)
        recs = b""
        for atom_id, _, keys, bf in METRICS[: int(opts["--metrics"])]:
            for k in range(int(opts["--keys"]) if keys else 1):
                centre = 4 + (k * 3 + d // 5) % 12 + (atom_id % 3)
                buckets = [0] * 32
                for b in range(centre - 2, centre + rnd.randrange(2, 4)):
                    buckets[b] = int(rnd.lognormvariate(3, 1.5)) + 1
                atom = (field(1, 0, atom_id) + field(2, 0, d + 1) +
                        field(3, 2, b"00000000-0000-4000-8000-000000000001") +
                        field(4, 0, (end_s - 86400) * 10**9) + field(5, 0, end_s * 10**9) +
                        field(6, 0, 10**9) + field(7, 0, 10**9 + 86400 * 10**9))
                if d == 0:
                    atom += field(8, 0, 1)
                if d == 2:
                    atom += field(9, 0, 1)
                atom += field(atom_id, 2, payload(keys, bf, k, buckets))
                recs += field(1, 2, atom)
        with open(os.path.join(out, "atoms-%010d.pb" % (d + 1)), "wb") as f:
            f.write(recs)


def camel(name):
    return "".join(p.capitalize() for p in name.split("_"))


def expect(files):
    data = b"".join(open(f, "rb").read() for f in files)
    text = subprocess.run(["protoc", "-I", PROTO_DIR, "--decode=kernelstats.AtomList",
                           "kernelstats_atoms.proto"], input=data, stdout=subprocess.PIPE,
                          check=True).stdout.decode()
    cells = {}
    for atom in re.findall(r"^atom \{\n(.*?)^\}", text, re.S | re.M):
        end = int(re.search(r"window_end_realtime_ns: (\d+)", atom).group(1))
        day = datetime.datetime.fromtimestamp(end // 10**9 // 86400 * 86400,
                                              datetime.timezone.utc).strftime("%Y-%m-%d")
        m = re.search(r"^  (\w+) \{\n(.*?)^  \}", atom, re.S | re.M)
        metric, body = camel(m.group(1)), m.group(2)
        keys, buckets = [], []
        for name, value in re.findall(r"^    (\w+): (.*)$", body, re.M):
            if "_log2_buckets_" in name:
                buckets.append(int(value))
            else:
                keys.append("%s=%s" % (name, value.strip('"')))
        for b, c in enumerate(buckets):
            if c:
                k = (metric, " ".join(sorted(keys)), day, b)
                cells[k] = cells.get(k, 0) + c
    return cells


UNITS = {"µs": 1, "ms": 1e3, "s": 1e6, "B": 1, "KiB": 1024, "MiB": 1024**2,
         "GiB": 1024**3, "TiB": 1024**4, "": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
TITLE = re.compile(r"^(\w+)((?: \S+=\S+)*| \(other keys\)) (\d{4}-\d\d-\d\d) \[([\d.e+]+)(\D*), [^)]+\): "
                   r"(\d+) events$")


def dom(path):
    page = open(path, encoding="utf-8").read()
    cells, bad = {}, []
    for title in re.findall(r'<rect [^>]*class="c\d"[^>]*><title>(.*?)</title>', page):
        m = TITLE.match(html.unescape(title))
        if not m:
            bad.append(title)
            continue
        v = float(m.group(4)) * UNITS[m.group(5)]
        b = 0 if v == 0 else round(math.log2(v))
        k = (m.group(1), " ".join(sorted(m.group(2).split())), m.group(3), b)
        if k in cells:
            bad.append("twice: " + title)
        cells[k] = int(m.group(6))
    for t in bad:
        print("unparsed cell title: " + t, file=sys.stderr)
    return cells


def png_colours(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert depth == 8 and ctype in (2, 6), "unexpected PNG type"
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    prev, colours = bytearray(stride), set()
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        colours.update(bytes(line[i:i + 3]) for i in range(0, stride, bpp))
        prev = line
    return len(colours)


def show(cells):
    if os.environ.get("KEYS_SUMMED"):  # the sum over a metric's keys
        summed = {}
        for k, c in cells.items():
            summed[(k[0], "", k[2], k[3])] = summed.get((k[0], "", k[2], k[3]), 0) + c
        cells = summed
    for k in sorted(cells):
        print("%s %s %s %d\t%d" % (k[0], k[1] or "-", k[2], k[3], cells[k]))


if __name__ == "__main__":
    cmd, rest = sys.argv[1], sys.argv[2:]
    if cmd == "gen":
        gen(rest)
    elif cmd == "expect":
        show(expect(rest))
    elif cmd == "dom":
        show(dom(rest[0]))
    elif cmd == "colours":
        print(png_colours(rest[0]))
    else:
        sys.exit("usage: report_atoms.py gen|expect|dom|colours ...")
