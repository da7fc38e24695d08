#!/usr/bin/env python3
"""Generate tests/golden/datetime_{pandas,iso,numpy,seconds,raw}.txt.

One case per line: "UNIT SCALE VALUE<TAB>EXPECTED".  A stored int64 VALUE with
scale factor SCALE denotes the instant VALUE*SCALE units after 1970-01-01T00,
proleptic Gregorian; VALUE == INT64_MIN is NaT and expects "NaT".

Expected text comes from independent oracles wherever they can hold the value:
  pandas   str(pandas.Timestamp(numpy.datetime64(v*S, unit))) where pandas
           holds the value exactly (units W..ns; ps/fs/as when the fraction is
           whole ns: pandas cuts finer digits)
  iso      pandas.Timestamp(...).isoformat(), as above
  numpy    str(numpy.datetime64(v*S, unit)) where numpy does not wrap
  seconds  the reference below (integers), cross-checked with numpy's
           (datetime64 - epoch) / timedelta64(1, unit) where it holds it
  raw      str(v)
and otherwise from the exact reference formatter below (dates from Python's
datetime.date.fromordinal, shifted by whole 400-year cycles), which is
asserted equal to every oracle on every case both produce.

Run: /work/main/.venv/bin/python tests/golden/gen_datetime.py [OUTDIR]
"""
import datetime
import os
import random
import sys
import warnings

import numpy as np
import pandas as pd

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
NAT = INT64_MIN
E18 = 10**18
CYCLE_DAYS = 146097  # days in 400 Gregorian years
ORD_1970 = datetime.date(1970, 1, 1).toordinal()

AS = {  # attoseconds per unit, W..as
    "W": 604800 * E18, "D": 86400 * E18, "h": 3600 * E18, "m": 60 * E18,
    "s": E18, "ms": 10**15, "us": 10**12, "ns": 10**9, "ps": 10**6,
    "fs": 10**3, "as": 1,
}
EXP = {"ms": 3, "us": 6, "ns": 9, "ps": 12, "fs": 15, "as": 18}
UNITS = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as", "generic"]
FORMATS = ["pandas", "iso", "numpy", "seconds", "raw"]


# ---- the exact reference (pure Python integers) ---------------------------

def civil(days):
    """(year, month, day) `days` after 1970-01-01, any integer."""
    ordinal = ORD_1970 + days
    shift = 0
    if ordinal < 1 or ordinal > 3000000:
        k = (ordinal - 1) // CYCLE_DAYS  # whole cycles to move into 0001..0400
        ordinal -= k * CYCLE_DAYS
        shift = 400 * k
    d = datetime.date.fromordinal(ordinal)
    return d.year + shift, d.month, d.day


def days_of(y, m, d):
    k = (y - 1) // 400  # move year y into 1..400
    return datetime.date(y - 400 * k, m, d).toordinal() - ORD_1970 + k * CYCLE_DAYS


def instant(unit, n):
    """(year, month, day, second of day, attoseconds, days) of n units."""
    if unit == "Y":
        y, mo = 1970 + n, 1
        return y, mo, 1, 0, 0, days_of(y, 1, 1)
    if unit == "M":
        y, mo = 1970 + n // 12, n % 12 + 1
        return y, mo, 1, 0, 0, days_of(y, mo, 1)
    a = n * AS[unit]
    sec, frac = divmod(a, E18)
    days, sod = divmod(sec, 86400)
    y, mo, d = civil(days)
    return y, mo, d, sod, frac, days


def year_text(y):
    return "%04d" % y  # numpy's "%04" NPY_INT64_FMT: "-001", "0053"


def pandas_digits(frac):
    if frac == 0:
        return 0
    for d in (6, 9, 12, 15):
        if frac % 10 ** (18 - d) == 0:
            return d
    return 18


def ref_pandas(unit, n, sep=" "):
    y, mo, d, sod, frac, _ = instant(unit, n)
    t = "%s-%02d-%02d%s%02d:%02d:%02d" % (year_text(y), mo, d, sep, sod // 3600,
                                           sod // 60 % 60, sod % 60)
    fd = pandas_digits(frac)
    if fd:
        t += "." + str(frac // 10 ** (18 - fd)).zfill(fd)
    return t


def ref_numpy(unit, n):
    y, mo, d, sod, frac, _ = instant(unit, n)
    t = year_text(y)
    if unit == "Y":
        return t
    t += "-%02d" % mo
    if unit == "M":
        return t
    t += "-%02d" % d
    if unit in ("W", "D"):
        return t
    t += "T%02d" % (sod // 3600)
    if unit == "h":
        return t
    t += ":%02d" % (sod // 60 % 60)
    if unit == "m":
        return t
    t += ":%02d" % (sod % 60)
    if unit in EXP:
        e = EXP[unit]
        t += "." + str(frac // 10 ** (18 - e)).zfill(e)
    return t


def ref_seconds(unit, n):
    y, mo, d, sod, frac, days = instant(unit, n)
    total = (days * 86400 + sod) * E18 + frac  # attoseconds, exact
    sign = "-" if total < 0 else ""
    s, f = divmod(abs(total), E18)
    if not f:
        return sign + str(s)
    return sign + str(s) + "." + str(f).zfill(18).rstrip("0")


def reference(fmt, unit, scale, v):
    if v == NAT:
        return "NaT"
    if fmt == "raw":
        return str(v)
    n = v * scale
    if unit == "generic":
        return str(n)
    return {"pandas": lambda: ref_pandas(unit, n), "iso": lambda: ref_pandas(unit, n, "T"),
            "numpy": lambda: ref_numpy(unit, n), "seconds": lambda: ref_seconds(unit, n)}[fmt]()


# ---- the oracles -----------------------------------------------------------

def numpy_ok(unit, n):
    if not INT64_MIN < n <= INT64_MAX:
        return False
    if unit in ("Y", "M"):
        return abs(n) < 2**62  # 1970 + n, n // 12: no wrap
    if unit in ("W", "D"):  # numpy's days_to_yearsdays wraps near 2^63 days
        return abs(n) * 7 < 2**55
    return True


def oracle(fmt, unit, scale, v):
    """The independent text, or None where no oracle holds the value."""
    if v == NAT or fmt == "raw":
        return None
    n = v * scale
    if unit == "generic" or not numpy_ok(unit, n):
        return None
    x = np.datetime64(n, unit)
    if fmt == "numpy":
        return str(x)
    if fmt == "seconds":
        if unit in ("Y", "M"):
            return None
        return None if unit in EXP and EXP[unit] > 9 else _np_seconds(x, unit)
    if unit in ("ps", "fs", "as") and (n * AS[unit]) % 10**9:
        return None  # pandas cuts below ns
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = pd.Timestamp(x)
    except (OverflowError, ValueError, pd.errors.OutOfBoundsDatetime):
        return None
    return str(t) if fmt == "pandas" else t.isoformat()


def _np_seconds(x, unit):
    """seconds since the epoch via numpy integers (units W..ns)."""
    k = int(x.astype("int64"))
    num, den = k * AS[unit], E18
    sign = "-" if num < 0 else ""
    s, f = divmod(abs(num), den)
    return sign + str(s) + ("." + str(f).zfill(18).rstrip("0") if f else "")


# ---- the cases -------------------------------------------------------------

def cases():
    rnd = random.Random(20261203)
    out = []
    scales = [1, 7, 1000, 2147483647]
    special = [0, 1, -1, 2, -2, 59, 60, 3599, 86399, 86400, -86400, 12345, -100000,
               INT64_MAX, INT64_MIN + 1, INT64_MAX - 1, INT64_MIN + 2, NAT]
    # calendar edges in days: year 0, negative years, leap days, 1677/2262, 9999/10000
    dates = [(0, 1, 1), (0, 2, 29), (0, 12, 31), (-1, 12, 31), (-1, 1, 1), (-4, 2, 29),
             (-100, 3, 1), (-401, 2, 28), (1, 1, 1), (4, 2, 29), (100, 2, 28), (100, 3, 1),
             (400, 2, 29), (1582, 10, 4), (1582, 10, 15), (1600, 2, 29), (1677, 9, 21),
             (1677, 9, 22), (1700, 2, 28), (1700, 3, 1), (1900, 2, 28), (1900, 3, 1),
             (1969, 12, 31), (1970, 1, 1), (2000, 2, 29), (2000, 3, 1), (2024, 2, 29),
             (2100, 2, 28), (2100, 3, 1), (2262, 4, 11), (2262, 4, 12), (9999, 12, 31),
             (10000, 1, 1), (99999, 12, 31), (-99999, 1, 1)]
    day_values = [days_of(*d) for d in dates]
    for unit in UNITS:
        for scale in scales:
            vals = list(special)
            if unit in AS:
                per_day = 86400 * E18 // AS[unit] if AS[unit] <= 86400 * E18 else None
                for dv in day_values:
                    if per_day:
                        for off in (0, 1, -1, per_day // 2 + 1):
                            x = dv * per_day + off
                            if x % scale == 0 and INT64_MIN < x // scale <= INT64_MAX:
                                vals.append(x // scale)
                    elif unit == "W" and dv % 7 == 0:
                        vals.append(dv // 7 // scale if (dv // 7) % scale == 0 else 0)
                # the ns range edges, in this unit
                for ns in (INT64_MIN + 1, INT64_MAX, -(2**62), 2**62):
                    a = ns * 10**9
                    if a % (AS[unit] * scale) == 0:
                        vals.append(a // (AS[unit] * scale))
            if unit in ("Y", "M"):
                vals += [-1970, -1969, 8030, 8029, -1971, 98029, -101969, 23999, -23641]
            for _ in range(12):
                vals.append(rnd.randrange(-10**6, 10**6))
                vals.append(rnd.randrange(INT64_MIN + 1, INT64_MAX))
                vals.append(rnd.randrange(-2**40, 2**40))
            seen = set()
            for v in vals:
                if v not in seen and INT64_MIN <= v <= INT64_MAX:
                    seen.add(v)
                    out.append((unit, scale, v))
    return out


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    cs = cases()
    checked = 0
    for fmt in FORMATS:
        lines = []
        for unit, scale, v in cs:
            want = reference(fmt, unit, scale, v)
            o = oracle(fmt, unit, scale, v)
            if o is not None:
                assert o == want, (fmt, unit, scale, v, o, want)
                checked += 1
            lines.append("%s %d %d\t%s\n" % (unit, scale, v, want))
        with open(os.path.join(outdir, "datetime_%s.txt" % fmt), "w") as f:
            f.writelines(lines)
    print("%d cases x %d formats; %d checked against numpy/pandas" % (len(cs), len(FORMATS),
                                                                     checked))


if __name__ == "__main__":
    main()
