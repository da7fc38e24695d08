"""oracle.py - the independent reference for what zarrfs must show.

Pure Python (integers only) for the text of a value; zarr-python for reading a
store.  Nothing here shares code with the C implementation.

    pandas_text(v, unit, scale)   text of one stored int64 value
    expected_txt(arr, ...)        bytes of NAME.txt for a numpy array
    expected_csv(arr, name, dims) bytes of NAME.csv
    read_array(store, path)       (values, unit, scale, dim_names) via zarr-python
    daemon_cmd(...)               the one way to launch the daemon (valgrind aware)
    self_test()                   cross-check pandas_text against pandas itself

As a command (used by the bats suite):
    python oracle.py txt STORE [ARRAY_PATH]
    python oracle.py csv STORE [ARRAY_PATH] [--name NAME]
    python oracle.py value V UNIT [SCALE]
    python oracle.py selftest
"""

from __future__ import annotations

import os
import sys

NAT = -(2**63)
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

# Length of each unit in attoseconds (the finest unit, so everything is exact).
AS_PER = {
    "W": 7 * 86400 * 10**18,
    "D": 86400 * 10**18,
    "h": 3600 * 10**18,
    "m": 60 * 10**18,
    "s": 10**18,
    "ms": 10**15,
    "us": 10**12,
    "\u03bcs": 10**12,
    "ns": 10**9,
    "ps": 10**6,
    "fs": 10**3,
    "as": 1,
}
SECOND = 10**18
DAY = 86400 * SECOND
NS_PER = {u: n // 10**9 for u, n in AS_PER.items() if n % 10**9 == 0}


def pandas_text(v: int, unit: str, scale: int = 1) -> str:
    """str(pandas.Timedelta(v * scale * unit)), computed exactly.

    Y and M print like numpy ("3 years", "14 months"), generic prints the bare
    integer product, NaT (v == -2**63) prints "NaT"."""
    v = int(v)
    scale = int(scale)
    if v == NAT:
        return "NaT"
    if unit == "Y":
        return f"{v * scale} years"
    if unit == "M":
        return f"{v * scale} months"
    if unit == "generic":
        return str(v * scale)
    total = v * scale * AS_PER[unit]  # attoseconds, exact
    days, rem = divmod(total, DAY)  # floor division: rem >= 0
    secs, sub = divmod(rem, SECOND)
    hh, secs = divmod(secs, 3600)
    mm, ss = divmod(secs, 60)
    sep = " +" if total < 0 else " "
    if sub == 0:
        frac = ""
    elif sub % 10**12 == 0:
        frac = f".{sub // 10**12:06d}"
    elif sub % 10**9 == 0:
        frac = f".{sub // 10**9:09d}"
    elif sub % 10**6 == 0:
        frac = f".{sub // 10**6:012d}"
    elif sub % 10**3 == 0:
        frac = f".{sub // 10**3:015d}"
    else:
        frac = f".{sub:018d}"
    return f"{days} days{sep}{hh:02d}:{mm:02d}:{ss:02d}{frac}"


def unit_scale(dtype) -> tuple[str, int]:
    """(unit, scale) of a numpy timedelta64 dtype."""
    import numpy as np

    dtype = np.dtype(dtype)
    if dtype.kind != "m":
        raise ValueError(f"not a timedelta64 dtype: {dtype}")
    unit, scale = np.datetime_data(dtype)
    if unit == "\u03bcs":
        unit = "us"
    return unit, int(scale)


def _ints(arr):
    """The stored int64 values of arr, flattened in C order, as Python ints."""
    import numpy as np

    a = np.asarray(arr)
    if a.dtype.kind == "m":
        if not a.dtype.isnative:
            a = a.astype(a.dtype.newbyteorder("="))
        a = a.view("i8")
    return [int(x) for x in a.ravel(order="C")]


def _unit_of(arr, unit, scale):
    if unit is None:
        unit, s = unit_scale(arr.dtype)
        if scale is None:
            scale = s
    return unit, (1 if scale is None else scale)


def expected_lines(arr, unit=None, scale=None) -> list[str]:
    unit, scale = _unit_of(arr, unit, scale)
    return [pandas_text(v, unit, scale) for v in _ints(arr)]


def expected_txt(arr, unit=None, scale=None) -> bytes:
    """NAME.txt: one value per line in C order, each line ending in \\n."""
    return "".join(s + "\n" for s in expected_lines(arr, unit, scale)).encode()


def dim_header(ndim: int, dim_names) -> list[str]:
    names = list(dim_names) if dim_names is not None else [None] * ndim
    if len(names) != ndim:
        names = [None] * ndim
    return [n if n is not None else f"dim_{k}" for k, n in enumerate(names)]


def expected_csv(arr, name: str, dim_names=None, unit=None, scale=None) -> bytes:
    """NAME.csv: header "D0,...,NAME", then "i0,...,value" per element in C order."""
    import numpy as np

    a = np.asarray(arr)
    lines = expected_lines(a, unit, scale)
    out = [",".join(dim_header(a.ndim, dim_names) + [name])]
    if a.ndim == 0:
        out.append(lines[0])
    else:
        for idx, text in zip(np.ndindex(*a.shape), lines):
            out.append(",".join([str(i) for i in idx] + [text]))
    return "".join(s + "\n" for s in out).encode()


def read_array(store: str, path: str | None = None):
    """Read an array with zarr-python: (values, unit, scale, dim_names).

    values is the logical array (C order) as numpy timedelta64."""
    import zarr

    a = zarr.open_array(store=str(store), path=path or "", mode="r")
    values = a[...]
    unit, scale = unit_scale(a.dtype)
    if a.metadata.zarr_format == 3:
        dims = a.metadata.dimension_names
    else:
        dims = a.attrs.get("_ARRAY_DIMENSIONS")
    return values, unit, scale, (list(dims) if dims is not None else None)


# The xarray and pandas whose to_dataframe().to_csv() NAME.csv follows
# (README "What the mount shows"); scripts/deps installs exactly these.
# pandas 3 writes "0 days 00:00:00.000000" where pandas 2.2 wrote
# "0 days 00:00:00", so another version is another oracle.
CSV_VERSIONS = {"xarray": "2026.9.0", "pandas": "3.1.1"}


def check_csv_versions() -> None:
    """Fail unless the venv has the xarray and pandas the CSV follows."""
    import pandas
    import pytest
    import xarray

    got = {"xarray": xarray.__version__, "pandas": pandas.__version__}
    if got != CSV_VERSIONS:
        pytest.fail(f"the labelled CSV follows {CSV_VERSIONS}; this venv has {got} "
                    "(scripts/deps pins them)", pytrace=False)


def root_name(store: str) -> str:
    """File base name of a store whose root is an array."""
    base = os.path.basename(os.path.normpath(str(store)))
    return base[: -len(".zarr")] if base.endswith(".zarr") and len(base) > 5 else base


# Views besides NAME.txt / NAME.csv that zarrfs may show for an array (the
# contract requires only those two; zarrfs also has NAME.info).
EXTRA_VIEWS = tuple(os.environ.get("ZF_EXTRA_VIEWS", "info").split())


def strip_extra_views(entries) -> set[str]:
    """entries minus NAME.EXT for EXT in EXTRA_VIEWS when NAME.txt is there too."""
    entries = set(entries)
    out = set()
    for e in entries:
        base, dot, ext = e.rpartition(".")
        if dot and ext in EXTRA_VIEWS and base + ".txt" in entries:
            continue
        out.add(e)
    return out


# ---------------------------------------------------------------------------
# Launching the daemon: the single place that knows about valgrind.

def valgrind_on() -> bool:
    return os.environ.get("ZF_VALGRIND", "") not in ("", "0")


def daemon_cmd(binary: str, args: list[str], workdir: str) -> list[str]:
    """argv that runs the daemon with args (under valgrind if ZF_VALGRIND=1)."""
    if valgrind_on():
        return [
            "valgrind", "--error-exitcode=99", "--leak-check=full",
            "--errors-for-leak-kinds=definite", "--trace-children=no",
            f"--log-file={os.path.join(workdir, 'valgrind.log')}",
            binary, *args,
        ]
    return [binary, *args]


SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                     "runtime error:", "WARNING: ThreadSanitizer")


# ---------------------------------------------------------------------------

def self_test(n_random: int = 20000, seed: int = 12345) -> int:
    """Compare pandas_text with str(pandas.Timedelta) wherever pandas can hold
    the value; raise AssertionError on the first difference.  Returns the
    number of comparisons made."""
    import random

    import numpy as np
    import pandas as pd

    checks = 0

    def check(v, unit, scale=1):
        nonlocal checks
        ns = v * scale * NS_PER[unit]
        if not (-(2**63) < ns <= INT64_MAX):
            return
        want = str(pd.Timedelta(ns, unit="ns"))
        got = pandas_text(v, unit, scale)
        assert got == want, f"{v} x {scale}{unit}: oracle {got!r}, pandas {want!r}"
        checks += 1
        if scale == 1 and unit in ("s", "ms", "us", "ns"):
            # pandas' own non-nanosecond resolutions must agree as well.
            want2 = str(pd.Timedelta(np.timedelta64(v, unit)))
            assert got == want2, f"{v} {unit}: oracle {got!r}, pandas {want2!r}"

    rng = random.Random(seed)
    special = [0, 1, -1, 999, -999, 1000, -1000, 10**6, -(10**6), 10**9 - 1,
               10**9, -(10**9), 86400 * 10**9, -86400 * 10**9,
               86400 * 10**9 - 1, -86400 * 10**9 + 1, INT64_MAX, INT64_MIN + 1]
    for v in special:
        check(v, "ns")
    for _ in range(n_random):
        kind = rng.randrange(4)
        if kind == 0:
            v = rng.randint(INT64_MIN + 1, INT64_MAX)
        elif kind == 1:
            v = rng.randint(-(10**13), 10**13)
        elif kind == 2:
            v = rng.randint(-10**6, 10**6) * rng.choice([1, 1000, 10**6, 10**9, 60 * 10**9])
        else:
            v = rng.randint(-(10**15), 10**15) // 1000 * 1000 + rng.choice([0, 1, 999])
        check(v, "ns")
    for unit in ("W", "D", "h", "m", "s", "ms", "us"):
        lim = INT64_MAX // NS_PER[unit]
        for v in [0, 1, -1, lim, -lim] + [rng.randint(-lim, lim) for _ in range(500)]:
            check(v, unit)
        for scale in (7, 10, 15, 250):
            lim_s = INT64_MAX // (NS_PER[unit] * scale)
            for v in [lim_s, -lim_s] + [rng.randint(-lim_s, lim_s) for _ in range(200)]:
                check(v, unit, scale)
    # Units pandas cannot hold, against values worked out by hand.
    hand = {
        (-5357488147419103232, "ps", 1): "-63 days +23:48:31.852580896768",
        (1, "ps", 1): "0 days 00:00:00.000000000001",
        (-1, "fs", 1): "-1 days +23:59:59.999999999999999",
        (1, "as", 1): "0 days 00:00:00.000000000000000001",
        (1000, "ps", 1): "0 days 00:00:00.000000001",
        (10**6, "fs", 1): "0 days 00:00:00.000000001",
        (1, "s", 2147483647): "24855 days 03:14:07",
        (INT64_MAX, "W", 1): f"{INT64_MAX * 7} days 00:00:00",
        (3, "Y", 1): "3 years",
        (7, "M", 2): "14 months",
        (-5, "generic", 1): "-5",
        (NAT, "ns", 1): "NaT",
        (NAT, "Y", 1): "NaT",
    }
    for (v, unit, scale), want in hand.items():
        got = pandas_text(v, unit, scale)
        assert got == want, f"{v} x {scale}{unit}: oracle {got!r}, by hand {want!r}"
        checks += 1
    for v in (3, 1, -14, 0):
        for u in ("Y", "M"):
            assert pandas_text(v, u) == str(np.timedelta64(v, u)), (v, u)
            checks += 1
    return checks


def _main(argv: list[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="oracle.py")
    sub = p.add_subparsers(dest="cmd", required=True)
    for c in ("txt", "csv"):
        sp = sub.add_parser(c)
        sp.add_argument("store")
        sp.add_argument("path", nargs="?", default=None)
        sp.add_argument("--name", default=None)
    sp = sub.add_parser("value")
    sp.add_argument("v", type=int)
    sp.add_argument("unit")
    sp.add_argument("scale", nargs="?", type=int, default=1)
    sub.add_parser("selftest")
    ns = p.parse_args(argv)

    out = sys.stdout.buffer
    if ns.cmd == "selftest":
        print(f"oracle self-test: {self_test()} comparisons agree")
        return 0
    if ns.cmd == "value":
        out.write((pandas_text(ns.v, ns.unit, ns.scale) + "\n").encode())
        return 0
    values, unit, scale, dims = read_array(ns.store, ns.path)
    if ns.cmd == "txt":
        out.write(expected_txt(values, unit, scale))
    else:
        name = ns.name or (os.path.basename(ns.path.rstrip("/")) if ns.path else root_name(ns.store))
        out.write(expected_csv(values, name, dims, unit, scale))
    return 0


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")
    sys.exit(_main(sys.argv[1:]))
