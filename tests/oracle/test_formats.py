"""Random round trip of the duration text (src/duration.c) against oracles.

For every unit and format, thousands of random stored values (any int64, the
extremes, small values, NaT) with random scale factors are written to a
temporary golden file ("UNIT SCALE VALUE<TAB>EXPECTED") and checked by the C
unit test binary (`test_duration FORMAT FILE`), which compares zf_fmt_value
and zf_fmt_len.  Expected text comes from:

  pandas   str(pandas.Timedelta) (time of day from pandas, and the whole text
           whenever pandas holds the value; days beyond int64 seconds are
           floor-divided in Python, fractions finer than pandas by Decimal)
  numpy    str(numpy.timedelta64(v, "<S><unit>")) when v*S fits in int64,
           else the exact product with numpy's unit word
  seconds  Python Decimal
  raw      str(v)
  iso      not text: the C output (`test_duration --dump iso FILE`) is parsed
           back exactly and by isodate and pandas, and must equal the duration.

The binary is $ZF_BUILD_DIR/test_duration (default /work/main/build).
"""
import datetime
import decimal
import os
import random
import re
import subprocess

import isodate
import numpy as np
import pandas as pd
import pytest

BIN = os.path.join(os.environ.get("ZF_BUILD_DIR", "/work/main/build"), "test_duration")
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
NAT = INT64_MIN
E18 = 10**18
AS = {
    "W": 604800 * E18, "D": 86400 * E18, "h": 3600 * E18, "m": 60 * E18,
    "s": E18, "ms": 10**15, "us": 10**12, "ns": 10**9, "ps": 10**6,
    "fs": 10**3, "as": 1,
}
UNITS = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "\u03bcs", "ns", "ps", "fs",
         "as", "generic"]
PER_UNIT = 2500
D = decimal.Decimal
CTX = decimal.Context(prec=120)


def canon(unit):
    return "us" if unit == "\u03bcs" else unit


def fits64(x):
    return INT64_MIN < x <= INT64_MAX


def random_value(rng):
    kind = rng.randrange(10)
    if kind == 0:
        return rng.choice([INT64_MAX - rng.randrange(3), INT64_MIN + 1 + rng.randrange(3), NAT, 0])
    if kind in (1, 2):
        return rng.randrange(-100000, 100001)
    if kind == 3:
        return rng.choice([-1, 1]) * rng.randrange(10**rng.randrange(1, 19))
    if kind == 4:
        return rng.choice([-1, 1]) * 10**rng.randrange(19) * rng.randrange(1, 10)
    return rng.randrange(INT64_MIN + 1, INT64_MAX + 1)


def random_scale(rng):
    kind = rng.randrange(6)
    if kind < 3:
        return 1
    if kind == 3:
        return rng.randrange(2, 1001)
    return rng.choice([2147483647, rng.randrange(1, 2**31)])


def cases(seed):
    rng = random.Random(seed)
    return [(unit, random_scale(rng), random_value(rng))
            for unit in UNITS for _ in range(PER_UNIT)]


def numpy_word(u):
    return str(np.timedelta64(2) if u == "generic" else np.timedelta64(2, u)).split(" ", 1)[1]


def numpy_text(unit, scale, v):
    u, n = canon(unit), v * scale
    if not fits64(n):
        return f"{n} {numpy_word(u)}"
    if u == "generic":
        return str(np.timedelta64(n))
    return str(np.timedelta64(v, f"{scale}{unit}" if scale > 1 else unit))


def decimal_fraction(frac):
    """Pandas fraction digits (6, 9, ..., 18) of an attosecond fraction, by Decimal."""
    if frac == 0:
        return ""
    x = CTX.divide(D(frac), D(E18))
    for digits in (6, 9, 12, 15, 18):
        q = x.quantize(D(10) ** -digits, context=CTX)
        if q == x:
            return format(q, "f")[1:]
    raise AssertionError(frac)


def pandas_text(u, n):
    if u == "generic":
        return str(n)
    if u in ("Y", "M"):
        return numpy_text(u, 1, n) if fits64(n) else f"{n} {numpy_word(u)}"
    a = n * AS[u]
    ns, rest = divmod(a, 10**9)
    if rest == 0 and fits64(ns):
        return str(pd.Timedelta(ns, "ns"))
    sec, frac = divmod(a, E18)
    if fits64(sec):
        head = str(pd.Timedelta(np.timedelta64(sec, "s")))
    else:
        days, sod = divmod(sec, 86400)
        tod = str(pd.Timedelta(np.timedelta64(sod, "s"))).split(" ")[2]
        head = f"{days} days{' +' if a < 0 else ' '}{tod}"
    return head + decimal_fraction(frac)


def seconds_text(u, n):
    if u == "generic":
        return str(n)
    if u in ("Y", "M"):
        d = CTX.multiply(D(n), D({"Y": 31556952, "M": 2629746}[u]))
    else:
        d = CTX.divide(CTX.multiply(D(n), D(AS[u])), D(E18))
    text = format(d, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def expected(fmt, unit, scale, v):
    if v == NAT:
        return "NaT"
    if fmt == "raw":
        return str(v)
    if fmt == "numpy":
        return numpy_text(unit, scale, v)
    fn = {"pandas": pandas_text, "seconds": seconds_text}[fmt]
    return fn(canon(unit), v * scale)


def run_binary(args):
    if not os.path.exists(BIN):
        pytest.skip(f"{BIN} not built (set ZF_BUILD_DIR)")
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60)


def write_cases(path, rows):
    with open(path, "w", encoding="utf-8") as fp:
        fp.writelines(f"{u} {s} {v}\t{e}\n" for u, s, v, e in rows)


@pytest.mark.parametrize("fmt", ["pandas", "numpy", "seconds", "raw"])
def test_text_formats(fmt, tmp_path):
    rows = [(u, s, v, expected(fmt, u, s, v)) for u, s, v in cases(sum(map(ord, fmt)))]
    path = tmp_path / f"{fmt}.txt"
    write_cases(path, rows)
    res = run_binary([fmt, str(path)])
    assert res.returncode == 0, res.stdout + res.stderr[-4000:]


ISO_RE = re.compile(r"^(-)?P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)D)?"
                    r"(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:\.(\d*[1-9]))?S)?)?$")


def iso_exact(text):
    """(sign, months, attoseconds) of a canonical ISO duration; asserts canonical form."""
    m = ISO_RE.match(text)
    assert m, text
    neg, y, mo, d, h, mi, s, f = m.groups()
    for comp in (y, mo, d, h, mi):
        assert comp is None or (comp != "0" and not comp.startswith("0")), text
    assert not text.endswith("T") and text not in ("P", "-P"), text
    assert h is None or int(h) < 24, text
    assert mi is None or int(mi) < 60, text
    assert s is None or int(s) < 60, text
    assert s is None or s == "0" or not s.startswith("0"), text
    assert not (s == "0" and f is None) or text == "PT0S", text
    months = int(y or 0) * 12 + int(mo or 0)
    att = ((int(d or 0) * 24 + int(h or 0)) * 60 + int(mi or 0)) * 60 + int(s or 0)
    att = att * E18 + (int(f.ljust(18, "0")) if f else 0)
    sign = -1 if neg else 1
    assert sign == 1 or months or att, text
    return sign * months, sign * att


def check_iso(text, unit, scale, v):
    if v == NAT:
        assert text == "NaT"
        return
    u, n = canon(unit), v * scale
    if u == "generic":
        assert text == str(n)
        return
    months, att = iso_exact(text)
    if u in ("Y", "M"):
        assert (months, att) == (n * (12 if u == "Y" else 1), 0), text
        if abs(months) < 10**27:  # isodate holds years in a 28-digit Decimal
            got = isodate.parse_duration(text)
            if months:
                assert got.years * 12 + got.months == months, text
        return
    a = n * AS[u]
    assert months == 0 and att == a, (text, a)
    us, rest = divmod(a, 10**12)
    if abs(us) < 999999999 * 86400 * 10**6:
        got = isodate.parse_duration(text)
        want = datetime.timedelta(microseconds=us)
        if rest == 0:
            assert got == want, text
        else:  # isodate goes through float seconds: within a microsecond
            assert abs(got - want) <= datetime.timedelta(microseconds=1), text
    ns, rest = divmod(a, 10**9)
    if rest == 0 and fits64(ns):
        assert pd.Timedelta(text).value == ns, text


def test_iso(tmp_path):
    rows = [(u, s, v, "-") for u, s, v in cases(4242)]
    path = tmp_path / "iso.txt"
    write_cases(path, rows)
    res = run_binary(["--dump", "iso", str(path)])
    assert res.returncode == 0, res.stderr[-4000:]
    out = res.stdout.split("\n")
    assert len(out) == len(rows) + 1 and out[-1] == ""
    for (u, s, v, _), text in zip(rows, out):
        check_iso(text, u, s, v)
