#!/usr/bin/env python3
"""Writes Zarr v2 consolidated metadata (STORE/.zmetadata) for a store that has none.

  zmetadata.py STORE [OUT]     OUT defaults to STORE/.zmetadata

The JSON that zarr.consolidate_metadata writes, built by hand (zarr is not needed):
{"zarr_consolidated_format": 1, "metadata": {KEY: the parsed JSON of KEY}} for every .zgroup,
.zattrs and .zarray under STORE, KEY relative to STORE ("call_DP/.zarray", ".zgroup").
"""
import json
import os
import sys


def consolidate(store):
    metadata = {}
    for dirpath, dirnames, files in os.walk(store):
        dirnames.sort()
        for name in sorted(files):
            if name not in (".zgroup", ".zattrs", ".zarray"):
                continue
            path = os.path.join(dirpath, name)
            key = os.path.relpath(path, store).replace(os.sep, "/")
            with open(path, encoding="utf-8") as f:
                metadata[key] = json.load(f)
    return {"zarr_consolidated_format": 1, "metadata": metadata}


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write(__doc__)
        return 2
    store = argv[1]
    out = argv[2] if len(argv) == 3 else os.path.join(store, ".zmetadata")
    doc = consolidate(store)
    if ".zgroup" not in doc["metadata"]:
        sys.stderr.write(f"{store}: no .zgroup, not a Zarr v2 group\n")
        return 1
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=4, sort_keys=True)
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
