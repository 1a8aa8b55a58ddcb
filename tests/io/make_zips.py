"""Writes the zip archives tests/io/zip_test.cc reads, with Python's zipfile (the writer behind
zarr's ZipStore and bio2zarr's zip output).

usage: make_zips.py STORE_DIR OUT_DIR   -- the store zipped every way, and the damaged copies
       make_zips.py --odd OUT_DIR       -- small archives with odd names, methods and layouts
"""
import os
import random
import sys
import warnings
import zipfile


def store_files(store):
    out = []
    for root, dirs, files in os.walk(store):
        dirs.sort()
        for f in sorted(files):
            path = os.path.join(root, f)
            out.append((os.path.relpath(path, store).replace(os.sep, "/"), path))
    return out


def write(path, files, method_of, force_zip64=False, comment=b"", dirs=()):
    with zipfile.ZipFile(path, "w", allowZip64=True) as zf:
        for d in dirs:
            zf.writestr(zipfile.ZipInfo(d + "/"), b"")
        for i, (key, src) in enumerate(files):
            info = zipfile.ZipInfo.from_file(src, key)
            info.compress_type = method_of(i)
            with open(src, "rb") as f, zf.open(info, "w", force_zip64=force_zip64) as w:
                w.write(f.read())
        zf.comment = comment


def data_offset(path, key):
    """Where the entry's data begins: after its local header, name and extra field."""
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(key)
    with open(path, "rb") as f:
        f.seek(info.header_offset)
        head = f.read(30)
    name_len = int.from_bytes(head[26:28], "little")
    extra_len = int.from_bytes(head[28:30], "little")
    return info.header_offset + 30 + name_len + extra_len, info.compress_size


def flip(src, dst, key):
    """A copy of `src` with one byte in the middle of `key`'s data inverted."""
    offset, size = data_offset(src, key)
    data = bytearray(open(src, "rb").read())
    data[offset + size // 2] ^= 0xFF
    open(dst, "wb").write(bytes(data))


def zip_store(store, out):
    files = store_files(store)
    stored = lambda i: zipfile.ZIP_STORED
    deflated = lambda i: zipfile.ZIP_DEFLATED
    write(os.path.join(out, "stored.zip"), files, stored)
    write(os.path.join(out, "deflated.zip"), files, deflated)
    # Explicit directory entries, and an end record behind a comment of nearly 64 KiB.
    dirs = sorted({k.rsplit("/", 1)[0] for k, _ in files if "/" in k})
    write(os.path.join(out, "mixed.zip"), files,
          lambda i: zipfile.ZIP_STORED if i % 2 else zipfile.ZIP_DEFLATED,
          comment=b"a comment " * 6500, dirs=dirs)
    # A comment holding end record signatures: the real record is the one the comment ends.
    write(os.path.join(out, "comment_trap.zip"), files, stored,
          comment=b"PK\x05\x06 not the end record " * 2000)
    write(os.path.join(out, "zip64_forced.zip"), files,
          lambda i: zipfile.ZIP_STORED if i % 2 else zipfile.ZIP_DEFLATED, force_zip64=True)
    # Every size and offset past these limits goes to ZIP64 fields, and the end records are the
    # ZIP64 ones: what a store of more than 65 535 chunks or 4 GiB gets.
    limit, count = zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT
    zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = 64, 4
    try:
        write(os.path.join(out, "zip64_all.zip"), files,
              lambda i: zipfile.ZIP_STORED if i % 2 else zipfile.ZIP_DEFLATED)
    finally:
        zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = limit, count
    # The largest entry, damaged: stored (only its CRC-32 can tell) and deflated.
    biggest = max(files, key=lambda kf: os.path.getsize(kf[1]))[0]
    flip(os.path.join(out, "stored.zip"), os.path.join(out, "flip_stored.zip"), biggest)
    flip(os.path.join(out, "deflated.zip"), os.path.join(out, "flip_deflated.zip"), biggest)
    open(os.path.join(out, "flipped_key"), "w").write(biggest)
    # A big archive whose entries the open must not read: 48 MiB before the store.
    rng = random.Random(7)
    with zipfile.ZipFile(os.path.join(out, "big.zip"), "w") as zf:
        for i in range(3):
            zf.writestr("filler/%d" % i, rng.randbytes(16 << 20), zipfile.ZIP_STORED)
        for key, src in files:
            zf.write(src, key, zipfile.ZIP_STORED)


def zip_odd(out):
    def raw(path, entries):
        with zipfile.ZipFile(os.path.join(out, path), "w") as zf:
            for name, data, method in entries:
                zf.writestr(zipfile.ZipInfo(name), data, method)

    warnings.simplefilter("ignore")  # the duplicate name is meant
    s, d = zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED
    raw("dups.zip", [("a", b"first", s), ("b", b"bee", d), ("a", b"second, longer", d)])
    raw("badnames.zip", [("../evil", b"x", s), ("/abs", b"x", s), ("x//y", b"x", s),
                         ("./dot", b"x", s), ("ok/fine", b"fine", s), ("empty/", b"", s)])
    raw("conflict.zip", [("a", b"file", s), ("a/b", b"under", s)])
    raw("bzip2.zip", [("plain", b"plain bytes", s), ("squeezed", b"b" * 1000, zipfile.ZIP_BZIP2)])
    raw("empty_entries.zip", [("zero_stored", b"", s), ("zero_deflated", b"", d)])
    raw("none.zip", [])
    open(os.path.join(out, "empty.zip"), "wb").close()
    open(os.path.join(out, "garbage.zip"), "wb").write(random.Random(1).randbytes(100000))


if __name__ == "__main__":
    if sys.argv[1] == "--odd":
        zip_odd(sys.argv[2])
    else:
        zip_store(sys.argv[1], sys.argv[2])
