# bench/trace_summary.py on a small trace in the shape the trace builds write.
import pytest

import trace_summary

TRACE = """consumer,block,start,turn,issued,scores,softmax,done
0,1,1000,1040,2100,2130,3400,3490
0,0,0,30,1000,1010,2000,2050
0,2,2100,2140,3200,3230,4500,4590
1,0,500,600,1500,1550,2600,2700
1,1,2800,2810,3900,3950,5000,5100
"""


def test_reads_points_and_sorts_blocks():
    points, blocks = trace_summary.read_blocks(TRACE.splitlines())
    assert points == ["start", "turn", "issued", "scores", "softmax", "done"]
    assert [b for b, _ in blocks[0]] == [0, 1, 2]
    assert blocks[1][1][1][0] == 2800


def test_stages_gap_and_period():
    points, blocks = trace_summary.read_blocks(TRACE.splitlines())
    s = trace_summary.summarize(points, blocks, skip=0)
    assert s[0]["turn"] == [30, 40, 40]
    assert s[0]["issued"] == [970, 1060, 1060]
    assert s[0]["softmax"] == [990, 1270, 1270]
    assert s[0]["gap"] == [1000 - 2050, 2100 - 3490]
    assert s[0]["period"] == [1000, 1100]
    assert s[1]["done"] == [100, 100]


def test_skip_and_too_few_blocks():
    points, blocks = trace_summary.read_blocks(TRACE.splitlines())
    s = trace_summary.summarize(points, blocks, skip=1)
    assert 0 in s and 1 not in s  # consumer 1 keeps one block: no period


def test_table_has_a_row_per_stage():
    points, blocks = trace_summary.read_blocks(TRACE.splitlines())
    lines = trace_summary.table(trace_summary.summarize(points, blocks, skip=0))
    assert len(lines) == 2 + 2 * 7
    assert lines[2].startswith("| 0 | turn | 40 |")


def test_not_a_trace():
    with pytest.raises(ValueError):
        trace_summary.read_blocks(["a,b,c", "1,2,3"])


def test_reads_tile_rows_too():
    tiles = """consumer,tile,start,q_ready,first_turn
0,0,0,900,1000
0,1,5000,5100,5300
"""
    points, rows = trace_summary.read_blocks(tiles.splitlines())
    assert points == ["start", "q_ready", "first_turn"]
    s = trace_summary.summarize(points, rows, skip=0)
    assert s[0]["q_ready"] == [900, 100]
    assert s[0]["gap"] == [5000 - 1000]
