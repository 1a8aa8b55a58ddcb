#!/usr/bin/python3
"""Checks the coverage tracks of one fragments folder of a mount against the real tools.

usage: coverage_check.py [--cpm] FOLDER...

- coverage.bedgraph: byte for byte what `bedtools genomecov -bg -i BED -g SIZES` writes for the
  folder's own fragments.bed without its zero-length fragments (SIZES: each chromosome's largest
  end); insertions.bedgraph the same for the cut sites [start, start+1) and [end-1, end).
  bedtools allocates a counter per base up to a chromosome's size (the corpus has ends near
  2.1e9: 16 GB and 90 s; the atac store's real chromosome lengths took 86 s), so each run of
  fragments that overlap or touch is given to bedtools as a chromosome of its own, moved to
  start at 0, and its lines moved back after: a pile-up does not depend on where it lies, and
  runs apart share no line (zero depth between them is not written).
- coverage.bw / insertions.bw: pyBigWig's intervals() are the bedGraph lines; every chromosome of
  chromosomes.txt is in the header, sized at least to its largest end and at least 1; zoom levels.
- with --cpm, FOLDER/scale=cpm/ too: the same intervals, values the float32 nearest depth * 1e6 / lines.
Prints 'ok' and exits 0, or prints what differs and exits 1.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import pyBigWig


def fail(msg):
    print(msg)
    sys.exit(1)


def read(path):
    with open(path, "rb") as f:
        return f.read()


_truth = {}  # bedtools' output by its input: the corpus' stores share their fragments


def genomecov(intervals, order, tmp):
    key = repr((order, sorted(intervals.items())))
    if key not in _truth:
        _truth[key] = pieces_genomecov(intervals, order, tmp)
    return _truth[key]


def pieces_genomecov(intervals, order, tmp):
    """bedtools genomecov -bg of `intervals` ({chrom: [(b, e)]}), piece by piece: each run of
    intervals that overlap or touch is a chromosome of its own for bedtools, moved to start at 0."""
    pieces = []  # (chrom, shift, [(b, e)])
    for c in order:
        iv = sorted(intervals.get(c, ()))
        for b, e in iv:
            if pieces and pieces[-1][0] == c and b <= pieces[-1][3]:
                pieces[-1][2].append((b, e))
                pieces[-1][3] = max(pieces[-1][3], e)
            else:
                pieces.append([c, b, [(b, e)], e])
    if not pieces:
        return b""
    bed = os.path.join(tmp, "in.bed")
    sizes = os.path.join(tmp, "sizes")
    with open(bed, "w") as out, open(sizes, "w") as g:
        for k, (c, s, iv, end) in enumerate(pieces):
            g.write("p%d\t%d\n" % (k, end - s))
            for b, e in iv:
                out.write("p%d\t%d\t%d\n" % (k, b - s, e - s))
    run = subprocess.run(["bedtools", "genomecov", "-bg", "-i", bed, "-g", sizes],
                         capture_output=True, check=True)
    lines = []
    for line in run.stdout.decode().splitlines():
        p, b, e, d = line.split("\t")
        c, s = pieces[int(p[1:])][:2]
        lines.append("%s\t%d\t%d\t%s\n" % (c, int(b) + s, int(e) + s, d))
    return "".join(lines).encode()


def parse_bedgraph(text):
    out = []
    for line in text.decode().splitlines():
        c, b, e, v = line.split("\t")
        out.append((c, int(b), int(e), v))
    return out


def check_bigwig(path, lines, chroms, max_end, scale):
    bw = pyBigWig.open(path)
    if bw is None or not bw.isBigWig():
        fail(path + ": pyBigWig cannot open it as a bigWig")
    header = bw.chroms()
    if list(header.keys()) != chroms and sorted(header.keys()) != sorted(chroms):
        fail("%s: header chromosomes %s, expected %s" % (path, list(header), chroms))
    for c in chroms:
        if header[c] < max(1, max_end.get(c, 0)):
            fail("%s: %s sized %d below its largest end %d" % (path, c, header[c], max_end[c]))
    got = []
    for c in chroms:
        iv = bw.intervals(c)
        for b, e, v in iv or ():
            got.append((c, b, e, v))
    want = [(c, b, e, np.float32(v)) for c, b, e, v in lines]
    if len(got) != len(want):
        fail("%s: %d intervals, bedGraph has %d lines" % (path, len(got), len(want)))
    for g, w in zip(got, want):
        if g[:3] != w[:3] or np.float32(g[3]) != w[3]:
            fail("%s: interval %s, bedGraph line %s" % (path, g, w))
    if lines and bw.header()["nLevels"] < 1:
        fail(path + ": no zoom levels")
    bw.close()


def main():
    args = sys.argv[1:]
    cpm = "--cpm" in args
    for folder in args:
        if folder != "--cpm":
            check(folder, os.path.join(folder, "scale=cpm") if cpm else None)
    print("ok")


def check(folder, cpm):
    chroms = read(os.path.join(folder, "chromosomes.txt")).decode().splitlines()
    fragments = 0
    cov, ins, max_end = {}, {}, {}
    with open(os.path.join(folder, "fragments.bed")) as f:
        for line in f:
            fragments += 1
            c, b, e = line.split("\t")[:3]
            b, e = int(b), int(e)
            max_end[c] = max(max_end.get(c, 0), e)
            if e <= b:
                continue  # zero-length: covers nothing, no cut sites
            cov.setdefault(c, []).append((b, e))
            ins.setdefault(c, []).extend([(b, b + 1), (e - 1, e)])
    with tempfile.TemporaryDirectory() as tmp:
        for name, intervals in (("coverage", cov), ("insertions", ins)):
            want = genomecov(intervals, chroms, tmp)
            path = os.path.join(folder, name + ".bedgraph")
            size = os.path.getsize(path)  # counted before any text is rendered
            got = read(path)
            if len(got) != size:
                fail("%s: %d bytes read, its size says %d" % (path, len(got), size))
            if got != want:
                fail("%s/%s.bedgraph differs from bedtools genomecov (%d vs %d bytes)" %
                     (folder, name, len(got), len(want)))
            lines = parse_bedgraph(got)
            check_bigwig(os.path.join(folder, name + ".bw"), lines, chroms, max_end, None)
            if cpm is None:
                continue
            scaled = parse_bedgraph(read(os.path.join(cpm, name + ".bedgraph")))
            if [x[:3] for x in scaled] != [x[:3] for x in lines]:
                fail("%s/%s.bedgraph: not the raw track's intervals" % (cpm, name))
            for (c, b, e, v), (_, _, _, d) in zip(scaled, lines):
                expect = np.float32(int(d) * 1e6 / fragments)
                if np.float32(v) != expect:
                    fail("%s/%s.bedgraph: %s %d %s is not %r" % (cpm, name, c, b, v, expect))
            check_bigwig(os.path.join(cpm, name + ".bw"), scaled, chroms, max_end, True)


if __name__ == "__main__":
    main()
