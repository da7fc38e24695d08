"""The oracle checks itself against pandas and numpy (no daemon needed)."""

import random

import numpy as np
import pandas as pd
import pytest

import oracle
from oracle import NAT, pandas_text

INT64_MAX = 2**63 - 1


def test_self_test_agrees_with_pandas():
    assert oracle.self_test(n_random=5000) > 5000


@pytest.mark.parametrize("unit", ["W", "D", "h", "m", "s", "ms", "us", "ns"])
def test_unit_against_pandas(unit):
    rng = random.Random(unit)
    lim = INT64_MAX // oracle.NS_PER[unit]
    for v in [0, 1, -1, 2, -2, lim, -lim] + [rng.randint(-lim, lim) for _ in range(2000)]:
        want = str(pd.Timedelta(v * oracle.NS_PER[unit], unit="ns"))
        assert pandas_text(v, unit) == want, (v, unit)


@pytest.mark.parametrize("unit,scale", [("us", 10), ("D", 7), ("m", 15), ("ms", 250), ("s", 3600)])
def test_scale_against_pandas(unit, scale):
    rng = random.Random(f"{scale}{unit}")
    lim = INT64_MAX // (oracle.NS_PER[unit] * scale)
    for v in [0, 1, -1, lim, -lim] + [rng.randint(-lim, lim) for _ in range(2000)]:
        want = str(pd.Timedelta(v * scale * oracle.NS_PER[unit], unit="ns"))
        assert pandas_text(v, unit, scale) == want, (v, unit, scale)


@pytest.mark.parametrize("v,unit,scale,want", [
    (-5357488147419103232, "ps", 1, "-63 days +23:48:31.852580896768"),
    (31536000000000000, "ns", 1, "365 days 00:00:00"),
    (3153600000000, "us", 10, "365 days 00:00:00"),
    (NAT, "ns", 1, "NaT"),
    (NAT, "generic", 1, "NaT"),
    (-1, "ns", 1, "-1 days +23:59:59.999999999"),
    (-1, "us", 1, "-1 days +23:59:59.999999"),
    (-1, "s", 1, "-1 days +23:59:59"),
    (-1, "D", 1, "-1 days +00:00:00"),
    (1500, "ms", 1, "0 days 00:00:01.500000"),
    (1, "ps", 1, "0 days 00:00:00.000000000001"),
    (1000, "ps", 1, "0 days 00:00:00.000000001"),
    (10**6, "ps", 1, "0 days 00:00:00.000001"),
    (1, "fs", 1, "0 days 00:00:00.000000000000001"),
    (1, "as", 1, "0 days 00:00:00.000000000000000001"),
    (-1, "as", 1, "-1 days +23:59:59.999999999999999999"),
    (INT64_MAX, "s", 1, "106751991167300 days 15:30:07"),
    (-INT64_MAX, "s", 1, "-106751991167301 days +08:29:53"),
    (INT64_MAX, "s", 2147483647, "229248155316466578233607 days 23:08:49"),
    (3, "Y", 1, "3 years"),
    (-14, "M", 1, "-14 months"),
    (2, "Y", 3, "6 years"),
    (12345, "generic", 1, "12345"),
])
def test_hand_values(v, unit, scale, want):
    assert pandas_text(v, unit, scale) == want


def test_big_values_by_integer_arithmetic():
    # INT64_MAX * 2147483647 s, recomputed another way.
    total = INT64_MAX * 2147483647
    days, rem = divmod(total, 86400)
    assert pandas_text(INT64_MAX, "s", 2147483647) == (
        f"{days} days {rem // 3600:02d}:{rem % 3600 // 60:02d}:{rem % 60:02d}")


def test_expected_txt_and_csv_layout():
    a = np.array([[1, NAT], [-1, 0]], dtype="i8").view("m8[s]")
    assert oracle.expected_txt(a) == (b"0 days 00:00:01\nNaT\n"
                                      b"-1 days +23:59:59\n0 days 00:00:00\n")
    assert oracle.expected_csv(a, "x", ["t", None]) == (
        b"t,dim_1,x\n0,0,0 days 00:00:01\n0,1,NaT\n1,0,-1 days +23:59:59\n1,1,0 days 00:00:00\n")
    z = np.array(5, dtype="i8").view("m8[D]")
    assert oracle.expected_txt(z) == b"5 days 00:00:00\n"
    assert oracle.expected_csv(z, "z", None) == b"z\n5 days 00:00:00\n"
    e = np.zeros((2, 0), dtype="m8[ns]")
    assert oracle.expected_txt(e) == b""
    assert oracle.expected_csv(e, "e", None) == b"dim_0,dim_1,e\n"
    be = np.array([1, 2], dtype=">m8[ns]")
    assert oracle.expected_txt(be) == b"0 days 00:00:00.000000001\n0 days 00:00:00.000000002\n"


def test_root_name():
    assert oracle.root_name("/x/timedelta64[ns].zarr") == "timedelta64[ns]"
    assert oracle.root_name("/x/plain/") == "plain"
    assert oracle.root_name("/x/a.zarr.zarr") == "a.zarr"
