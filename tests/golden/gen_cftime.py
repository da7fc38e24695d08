#!/usr/bin/env python3
"""Generate tests/golden/cftime.txt: CF time stamps as xarray decodes them with cftime.

One case per line, tab-separated:
  CALENDAR  UNITS  COUNT  US  STR  ISO  SECONDS
COUNT is "f:REPR" (a float64 count) or "i:N" (an integer count, which xarray
hands to cftime as float64(N), its astype(float)).  US is the microseconds
after the reference date that cftime.num2date computes (its cast_to_int:
long double scaling, round half to even, cftime issue 187's floor/ceil),
STR and ISO are str() and isoformat() of the cftime object it returns, and
SECONDS is US / 10^6 as an exact decimal without trailing zeros (zarrfs's
`seconds` text).  US is "!" where cftime raises (a reference date it does not
read or that is not a date of the calendar, a unit it does not know, a count
beyond int64 microseconds); the rest of such a line is "!".

Every expected value comes from cftime itself (the reference of
tests/unit/test_cftime.c); only SECONDS is computed here, from US.

Run: PYTHON tests/golden/gen_cftime.py [OUT]   (PYTHON: a venv with cftime and numpy)
"""
import fractions
import math
import random
import sys
import warnings

import cftime
import numpy as np
from cftime import _cftime as cft

CALENDARS = ["standard", "gregorian", "proleptic_gregorian", "julian", "noleap", "365_day",
             "all_leap", "366_day", "360_day"]
REFS = ["0001-01-01", "1-1-1", "2000-01-01", "1970-01-01 00:00:00", "1582-10-04",
        "1582-10-15 12:00", "1582-10-10", "1850-01-01 00:00:00", "-0100-03-01", "0000-01-01",
        "-0001-12-31 23:59:59", "9999-12-31 23:59:59.999999", "10000-01-01", "12345-06-07 08:09",
        "2000-01-01T06:30:15.5", "2000-02-30", "2000-02-29", "1900-02-29", "2100-02-29 00:00",
        "2000-01-01 00:00:00+05:30", "2000-01-01T00:00:00Z", "2000-01-01 00:00 -0130",
        "2000-1-1 1:2:3.123456789", "2000-01-01T06", "2000-01-01 00:00:00 UTC",
        "2000-01-01 24:00", "2000-13-01", "2000-01", "1000-02-29", "0004-02-29 12:00:00.000001",
        "-4713-11-24 12:00:00", "1600-01-01 00:00:00.000000", "2262-04-11 23:47:16.854775"]
UNITS = ["days", "hours", "minutes", "seconds", "milliseconds", "microseconds", "day", "d",
         "hrs", "h", "Secs", "msec", "s", "months", "common_years", "nanoseconds", "weeks"]
SEED = 187


def seconds_text(us):
    f = fractions.Fraction(us, 10**6)
    sign = "-" if f < 0 else ""
    f = abs(f)
    whole = f.numerator // f.denominator
    frac = f - whole
    if frac == 0:
        return f"{sign}{whole}"
    digits = f"{int(frac * 10**6):06d}".rstrip("0")
    return f"{sign}{whole}.{digits}"


def counts(rng, unit):
    ints = [0, 1, -1, 2, 7, 30, 59, 60, 365, 366, 1461, -1461, 36524, 146097, -146097,
            10**6, -10**6, 2**53 + 1, 2**53 + 3, -(2**53) - 5, 2**62, -(2**62), 2**63 - 1,
            -(2**63) + 1, 106751991, -106751991, 3 * 10**12, 9 * 10**15]
    ints += [rng.randint(-1000, 1000) for _ in range(4)]
    ints += [rng.randint(-10**6, 10**6) for _ in range(4)]
    ints += [rng.randint(-10**9, 10**9) for _ in range(3)]
    floats = [0.5, -0.5, 1 / 3, 2 / 3, -1 / 3, 0.1, 1e-7, 1e-6, 5e-7, 1.5e-6, 2.5e-6, 1.000001,
              2.999999, 1.0000005, 0.0000015, 36524.25, -36524.75, 1e-300, 1.06751991e8,
              9.2e18, 9.2233720368547e18, -9.2233720368547e18, 1.7e308, 59.999999999,
              60.0000000001, 1234567.891011]
    for _ in range(10):
        k = rng.randint(-100000, 100000)
        floats += [k + 1e-6, k - 1e-6, k + rng.random(), k * 0.01, k / 7]
    return [("i", n) for n in ints] + [("f", x) for x in floats]


def case(cal, units, kind, n):
    x = float(n)
    unit = units.split()[0].lower()
    arr = np.array([x], dtype=np.float64)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            d = cftime.num2date(arr, units, calendar=cal)[0]
            factor = cft.UNIT_CONVERSION_FACTORS[unit]
            us = int(cft.cast_to_int(cft.scale_times(cft.upcast_times(arr), factor), units=unit)[0])
    except (ValueError, OverflowError, TypeError, KeyError):
        return None
    return us, str(d), d.isoformat()


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/golden/cftime.txt"
    rng = random.Random(SEED)
    lines = []
    for cal in CALENDARS:
        for ref in REFS:
            for unit in UNITS[:4] + rng.sample(UNITS[4:], 5):
                units = f"{unit} since {ref}"
                probe = case(cal, units, "i", 0)
                cs = counts(rng, unit) if probe else [("i", 0)]
                full = unit in ("days", "seconds") and ref in REFS[:3] and cal in CALENDARS[2:5]
                if probe and not full:  # the full set of counts for a few units and dates
                    cs = rng.sample(cs, 4 if unit in ("days", "hours", "seconds") else 2)
                for kind, n in cs:
                    got = case(cal, units, kind, n)
                    count = f"i:{n}" if kind == "i" else f"f:{float(n)!r}"
                    if got is None:
                        lines.append(f"{cal}\t{units}\t{count}\t!\t!\t!\t!")
                    else:
                        us, s, iso = got
                        lines.append(f"{cal}\t{units}\t{count}\t{us}\t{s}\t{iso}\t{seconds_text(us)}")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{out}: {len(lines)} cases")


if __name__ == "__main__":
    main()
