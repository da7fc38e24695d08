"""Write tests/golden/pdcsv.txt: columns of time values as pandas' to_csv writes them.

    python gen_pdcsv.py > pdcsv.txt

A line is "KIND UNIT SCALE V1,V2,...<TAB>T1|T2|..." : KIND m (durations) or M
(time stamps), the values as stored int64 of numpy unit UNIT times SCALE
(NaT for NaT), and the text pandas writes for each in one column (empty for
NaT).  Extend COLUMNS and regenerate; test_pdcsv.c reads the file.
"""
import numpy as np
import pandas as pd

D, H, S = 86400, 3600, 1
NS = 10**9
COLUMNS = [
    ("m", "ns", 1, [D * NS, -D * NS, 0, "NaT"]),
    ("m", "ns", 1, [H * NS, -1, 3 * D * NS + 1500]),
    ("m", "ns", 1, [H * NS, -1000, 10**6]),
    ("m", "ns", 1, [H * NS, -NS, 5 * NS + 123000]),
    ("m", "ns", 1, [-D * NS, H * NS, -D * NS - 1]),
    ("m", "s", 1, [3600, -1, 2 * D]),
    ("m", "ms", 1, [3600001, -1]),
    ("m", "s", 1, [D, 2 * D]),
    ("m", "h", 1, [1, 24, -25]),
    ("m", "D", 1, [1, -3, 10**6]),
    ("m", "m", 15, [1, 4 * 24]),
    ("m", "us", 10, [1, 100000]),
    ("m", "ns", 1, [2**62, -(2**62)]),
    ("M", "ns", 1, [0, D * NS]),
    ("M", "ns", 1, [0, H * NS, "NaT"]),
    ("M", "ns", 1, [0, 1000]),
    ("M", "ns", 1, [0, 10**6]),
    ("M", "ns", 1, [0, 1, -1]),
    ("M", "s", 1, [-30662668800, -59045068800, -62170156800]),
    ("M", "s", 1, [-30662668799, 378432000001]),
    ("M", "s", 1, [378432000000]),
    ("M", "h", 6, [1, 4, -4]),
    ("M", "D", 1, [19723, -1, 0]),
    ("M", "ms", 1, [1, 1000, -1]),
    ("M", "us", 1, [1, -1001]),
    ("M", "W", 1, [1, -2]),
]


def main():
    for kind, unit, scale, vals in COLUMNS:
        t = "timedelta64" if kind == "m" else "datetime64"
        ints = [np.iinfo(np.int64).min if v == "NaT" else v for v in vals]
        arr = (np.array(ints, dtype=np.int64) * scale).view(f"{t}[{unit}]")
        arr[np.array(ints) == np.iinfo(np.int64).min] = np.array("NaT", dtype=f"{t}[{unit}]")
        text = pd.DataFrame({"x": arr, "y": 0}).to_csv(index=False).splitlines()[1:]
        texts = [line.rsplit(",", 1)[0] for line in text]
        print(f"{kind} {unit} {scale} {','.join(str(v) for v in vals)}\t{'|'.join(texts)}")


if __name__ == "__main__":
    main()
