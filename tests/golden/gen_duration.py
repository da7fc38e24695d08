#!/usr/bin/env python3
"""Generate tests/golden/duration_{pandas,iso,numpy,seconds,raw}.txt.

One case per line: "UNIT SCALE VALUE<TAB>EXPECTED".  A stored int64 VALUE with
scale factor SCALE denotes VALUE*SCALE units, exactly; VALUE == INT64_MIN is
NaT and expects "NaT".

Expected text comes from independent oracles wherever they can hold the value:
  pandas   str(pandas.Timedelta) at ns, us, ms or s resolution (numpy str for
           Y and M, the bare integer for generic)
  numpy    str(numpy.timedelta64(v, "<S><unit>")) when v*S fits in int64
  seconds  Python Decimal arithmetic (numpy's conversion for Y and M)
  iso      the reference text, checked by parsing it back with isodate and
           pandas.Timedelta wherever they can hold the value
  raw      str(v)
and otherwise from the exact pure-integer reference formatter below, which is
asserted equal to every oracle on every case both can produce.

Run: /tmp/venv/bin/python tests/golden/gen_duration.py [OUTDIR]
"""
import collections
import datetime
import decimal
import os
import random
import sys

import isodate
import numpy as np
import pandas as pd

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
NAT = INT64_MIN
E18 = 10**18
DAY_AS = 86400 * E18

# attoseconds per unit (W..as); Y and M in seconds as numpy converts them
AS = {
    "W": 604800 * E18, "D": 86400 * E18, "h": 3600 * E18, "m": 60 * E18,
    "s": E18, "ms": 10**15, "us": 10**12, "ns": 10**9, "ps": 10**6,
    "fs": 10**3, "as": 1,
}
CAL_S = {"Y": 31556952, "M": 2629746}
WORD = {
    "Y": "years", "M": "months", "W": "weeks", "D": "days", "h": "hours",
    "m": "minutes", "s": "seconds", "ms": "milliseconds", "us": "microseconds",
    "ns": "nanoseconds", "ps": "picoseconds", "fs": "femtoseconds",
    "as": "attoseconds", "generic": "generic time units",
}
UNITS = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as", "generic"]
FORMATS = ["pandas", "iso", "numpy", "seconds", "raw"]
MU_S = "\u03bcs"


def canon(unit):
    return "us" if unit == MU_S else unit


def fits64(x):
    return INT64_MIN < x <= INT64_MAX  # INT64_MIN itself is NaT in numpy/pandas


# ---- exact reference formatter (pure Python integers) ---------------------

def frac_text(frac, digits):
    """'.ddd' of an attosecond fraction with the given digit count, or ''."""
    if digits == 0:
        return ""
    return "." + str(frac // 10 ** (18 - digits)).zfill(digits)


def pandas_digits(frac):
    if frac == 0:
        return 0
    for d in (6, 9, 12, 15):
        if frac % 10 ** (18 - d) == 0:
            return d
    return 18


def ref_pandas_as(a):
    days, rem = divmod(a, DAY_AS)  # floor days, non-negative remainder
    sec, frac = divmod(rem, E18)
    hh, r = divmod(sec, 3600)
    mm, ss = divmod(r, 60)
    sep = " +" if a < 0 else " "
    return f"{days} days{sep}{hh:02d}:{mm:02d}:{ss:02d}" + frac_text(frac, pandas_digits(frac))


def trimmed(frac):
    return ("." + str(frac).zfill(18).rstrip("0")) if frac else ""


def ref_iso_as(a):
    if a == 0:
        return "PT0S"
    days, rem = divmod(abs(a), DAY_AS)
    sec, frac = divmod(rem, E18)
    h, r = divmod(sec, 3600)
    m, s = divmod(r, 60)
    out = ("-" if a < 0 else "") + "P" + (f"{days}D" if days else "")
    if rem:
        out += "T" + (f"{h}H" if h else "") + (f"{m}M" if m else "")
        if s or frac:
            out += f"{s}{trimmed(frac)}S"
    return out


def ref_iso_ym(n, unit):
    if n == 0:
        return "PT0S"
    y, mo = (abs(n), 0) if unit == "Y" else divmod(abs(n), 12)
    return ("-" if n < 0 else "") + "P" + (f"{y}Y" if y else "") + (f"{mo}M" if mo else "")


def ref_seconds_as(a):
    sec, frac = divmod(abs(a), E18)
    return ("-" if a < 0 else "") + str(sec) + trimmed(frac)


def reference(fmt, unit, scale, v):
    """Exact expected text, from integers only."""
    if v == NAT:
        return "NaT"
    if fmt == "raw":
        return str(v)
    u, n = canon(unit), v * scale
    if fmt == "numpy":
        return f"{n} {WORD[u]}"
    if u == "generic":
        return str(n)
    if u in CAL_S:
        return {"pandas": f"{n} {WORD[u]}", "iso": ref_iso_ym(n, u),
                "seconds": str(n * CAL_S[u])}[fmt]
    a = n * AS[u]
    return {"pandas": ref_pandas_as, "iso": ref_iso_as, "seconds": ref_seconds_as}[fmt](a)


# ---- independent oracles ---------------------------------------------------

def pandas_oracle(u, n):
    """str(pandas.Timedelta) of n units at the finest resolution that holds it."""
    if u == "generic":
        return str(n)
    if u in CAL_S:
        return numpy_str(n, u) if fits64(n) else None
    a = n * AS[u]
    for res in ("ns", "us", "ms", "s"):
        q, r = divmod(a, AS[res])
        if r == 0 and fits64(q):
            return str(pd.Timedelta(np.timedelta64(q, res)))
    return None


def numpy_str(n, u):
    return str(np.timedelta64(n) if u == "generic" else np.timedelta64(n, u))


def numpy_oracle(unit, scale, v):
    u, n = canon(unit), v * scale
    if not fits64(n):
        return None
    if u == "generic":
        got = str(np.timedelta64(n))
    else:
        got = str(np.timedelta64(v, f"{scale}{unit}" if scale > 1 else unit))
        assert got == numpy_str(n, u), (unit, scale, v, got)
    return got


def seconds_oracle(u, n):
    if u == "generic":
        return str(n)
    if u in CAL_S and fits64(n * CAL_S[u]):
        return str(int(np.timedelta64(n, u).astype("m8[s]").astype(np.int64)))
    with decimal.localcontext() as ctx:
        ctx.prec = 100
        if u in CAL_S:
            d = decimal.Decimal(n) * CAL_S[u]
        else:
            d = decimal.Decimal(n) * decimal.Decimal(AS[u]) / decimal.Decimal(E18)
        text = format(d, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def check_iso(text, u, n):
    """Parse an ISO text back with isodate and pandas; count the checks made."""
    checks = 0
    if u in CAL_S:
        months = n * (12 if u == "Y" else 1)
        if abs(months) >= 10**27:  # isodate keeps years in a 28-digit Decimal
            return 0
        got = isodate.parse_duration(text)
        if n == 0:
            assert got == datetime.timedelta(0), text
        else:
            assert got.years * 12 + got.months == months and got.tdelta == datetime.timedelta(0), text
        return 1
    a = n * AS[u]
    us, r = divmod(a, 10**12)
    if r == 0 and abs(us) < 86400 * 10**6 * 999999999:
        assert isodate.parse_duration(text) == datetime.timedelta(microseconds=us), text
        checks += 1
    ns, r = divmod(a, 10**9)
    if r == 0 and fits64(ns):
        assert pd.Timedelta(text).value == ns, text
        checks += 1
    return checks


def expected(fmt, unit, scale, v, stats):
    """Oracle text where one holds the value (asserted equal to the reference)."""
    ref = reference(fmt, unit, scale, v)
    if v == NAT or fmt == "raw":
        return ref
    u, n = canon(unit), v * scale
    if fmt == "iso":
        if u != "generic":
            stats["iso parsed back"] += check_iso(ref, u, n) > 0
        return ref
    oracle = {"pandas": lambda: pandas_oracle(u, n),
              "numpy": lambda: numpy_oracle(unit, scale, v),
              "seconds": lambda: seconds_oracle(u, n)}[fmt]()
    if oracle is None:
        stats[f"{fmt} reference only"] += 1
        return ref
    assert oracle == ref, (fmt, unit, scale, v, oracle, ref)
    stats[f"{fmt} oracle"] += 1
    return oracle


# ---- cases -----------------------------------------------------------------

BASE = [0, 1, -1, 59, -61, 1000, -1500, 86400, -86400, 123456789, 2**53 + 1,
        -(10**15), INT64_MAX, INT64_MIN + 1, NAT]
# per scale factor: values, the last ones overflowing int64 once scaled
FEW = {2: [-(2**62), 2**62 - 1, 2**62],  # v*S == INT64_MIN, INT64_MAX - 1, 2^63
       7: [0, -1, 13, 10**15 + 3, INT64_MAX, INT64_MIN + 1, NAT],
       10: [1, -1000, INT64_MAX // 10 + 1],
       1000: [-1, 86401, INT64_MIN // 1000 - 1],
       2147483647: [1, -3, INT64_MAX, INT64_MIN + 1]}

S, NS = E18, 10**9
# interesting durations in attoseconds, used in every unit that holds them
TARGETS = [
    93784 * S + 5 * NS, S + S // 2, 14 * 86400 * S, 86400 * S - NS, -NS, -(10**12),
    -(10**15), -S, -86400 * S, -(10**6), -(10**3), -1, 10**6, 10**3, 1, NS,
    S + 10**12, S + NS, S + 10**6, S + 10**3, S + 1, -(S + 10**6), -(S + 1),
    INT64_MAX * NS, (INT64_MIN + 1) * NS, (INT64_MAX + 1) * NS, (INT64_MIN - 1) * NS,
    INT64_MAX * 10**12, (INT64_MIN + 1) * 10**12, 106752 * 86400 * S,
    -106752 * 86400 * S, 43200 * S, 3600 * S, 60 * S, 7 * 86400 * S + 3661 * S,
]
# the pandas (int64 ns) range boundaries, in coarser resolutions, and just past
for _k in (10**12, 10**15, S, 60 * S, 86400 * S):
    _b = INT64_MAX * NS // _k * _k
    TARGETS += [_b, _b + _k, -_b, -_b - _k]


def unit_values(u, rng):
    vals = list(BASE)
    if u in AS:
        for a in TARGETS:
            q, r = divmod(a, AS[u])
            if r == 0 and fits64(q) and q not in vals:
                vals.append(q)
    for _ in range(3):
        vals.append(rng.randrange(INT64_MIN + 1, INT64_MAX + 1))
        vals.append(rng.randrange(-10**6, 10**6))
    return vals


def cases():
    rng = random.Random(20240611)
    out = []
    for unit in UNITS:
        out += [(unit, 1, v) for v in unit_values(unit, rng)]
        for scale, vals in FEW.items():
            out += [(unit, scale, v) for v in vals]
            out.append((unit, scale, rng.randrange(INT64_MIN + 1, INT64_MAX + 1)))
    out += [(MU_S, 1, v) for v in (0, 1, -1, 1500000, INT64_MAX, NAT)]
    out += [(MU_S, 7, v) for v in (3, -3)]
    return out


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    stats = collections.Counter()
    all_cases = cases()
    for fmt in FORMATS:
        lines = [f"{u} {s} {v}\t{expected(fmt, u, s, v, stats)}\n" for u, s, v in all_cases]
        with open(os.path.join(outdir, f"duration_{fmt}.txt"), "w", encoding="utf-8") as fp:
            fp.writelines(lines)
        print(f"duration_{fmt}.txt: {len(lines)} cases")
    for key in sorted(stats):
        print(f"  {key}: {stats[key]}")


if __name__ == "__main__":
    main()
