#!/usr/bin/env python3
"""Compares two folders written by scripts/golden.sh: every HDF5 file dataset by dataset and
attribute by attribute (exactly, NaN equal to NaN), every CSV file line by line (rows of parallel curves in any order), exit codes,
and the JSON summaries on stdout without their timings and memory. Prints each difference and
exits 1 if there is any. Needs h5py and numpy."""
import json
import math
import os
import sys

import h5py
import numpy as np

VOLATILE = {"elapsed_s", "peak_memory_mb"}


def same_value(a, b):
    if isinstance(a, bytes):
        a = a.decode()
    if isinstance(b, bytes):
        b = b.decode()
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype.kind != b.dtype.kind:
            return False
        if a.dtype.kind in "fc":
            return bool(np.array_equal(a, b, equal_nan=True))
        return bool(np.array_equal(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def h5_items(path):
    out = {}
    with h5py.File(path, "r") as f:
        def attrs(name, obj):
            for k, v in obj.attrs.items():
                out[f"{name}@{k}"] = v[()] if hasattr(v, "shape") and v.shape == () else v
        attrs("/", f)

        def visit(name, obj):
            attrs(name, obj)
            if isinstance(obj, h5py.Dataset):
                out[name] = obj[()]
        f.visititems(visit)
    return out


def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in VOLATILE}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x


def main(old, new):
    bad = 0
    names = sorted(set(os.listdir(old)) | set(os.listdir(new)))
    for n in names:
        a, b = os.path.join(old, n), os.path.join(new, n)
        if os.path.isdir(a) or os.path.isdir(b):
            continue
        if not (os.path.exists(a) and os.path.exists(b)):
            print(f"{n}: only in {'old' if os.path.exists(a) else 'new'}")
            bad += 1
            continue
        if n.endswith(".h5"):
            x, y = h5_items(a), h5_items(b)
            for k in sorted(set(x) | set(y)):
                if k.endswith("@model"):
                    continue
                if k not in x or k not in y:
                    print(f"{n}: {k} only in {'old' if k in x else 'new'}")
                    bad += 1
                elif not same_value(x[k], y[k]):
                    print(f"{n}: {k} differs")
                    bad += 1
        elif n.endswith(".stdout"):
            ta, tb = open(a).read(), open(b).read()
            try:
                ja, jb = strip(json.loads(ta)), strip(json.loads(tb))
                if ja != jb:
                    print(f"{n}: JSON differs")
                    bad += 1
            except json.JSONDecodeError:
                pass  # text output carries timings; the files and exit codes are compared
        elif n.endswith(".stderr") or n.endswith(".png") or n.endswith(".svg"):
            continue
        elif n.endswith(".csv"):
            # Rows of curves computed in parallel arrive in any order (docs/results-format.md).
            la, lb = open(a).read().splitlines(), open(b).read().splitlines()
            if la[:1] != lb[:1] or sorted(la[1:]) != sorted(lb[1:]):
                print(f"{n}: differs")
                bad += 1
        else:
            if open(a, "rb").read() != open(b, "rb").read():
                print(f"{n}: differs")
                bad += 1
    print(f"{len(names)} files compared, {bad} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
