"""bench.serve_gc's reduction of a worker's record (pure plumbing: no server)."""

from bench.serve_gc import summarise


def test_only_the_collections_inside_the_window_count_by_generation():
    record = {"collections": [[9.0, 2, 0.5, 0], [10.0, 0, 0.001, 3], [11.0, 2, 0.0125, 7], [12.0, 1, 0.002, 0],
                              [13.0, 2, 0.1, 0]],
              "tracked": 1200, "frozen": 150000, "full_at_exit_s": 0.004, "threshold": [700, 10, 10]}
    out = summarise(record, 10.0, 12.0)
    assert (out["collections"], out["full_ms"], round(out["cpu_ms"][2], 1), out["tracked"], out["frozen"],
            out["full_at_exit_ms"]) == ({0: 1, 1: 1, 2: 1}, [12.5], 12.5, 1200, 150000, 4.0)
