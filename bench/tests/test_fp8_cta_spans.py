# bench/fp8_cta_spans.py on small span files in the shape the zyfa command writes (diag-fp8-trace-jn).
import pytest

import fp8_cta_spans

WRAP = 1 << 32

# Two CTAs of three consumers; the nanosecond and clock counters wrap between the stamps.
SPANS = f"""cta,role,end_ns,end_clock
0,0,{WRAP - 500},100
0,1,{WRAP - 300},300
0,2,{WRAP - 400},200
1,0,1500,9000
1,2,1000,8000
"""
TRACE = f"""job,slot,role,p0,p1,p2,p3,p4,p5,p6,p7
0,1,0,0,{WRAP - 1000},{WRAP - 900},{WRAP - 800},{WRAP - 700},{WRAP - 600},{WRAP - 550},40
0,1,3,{WRAP - 2000},{WRAP - 1500},{WRAP - 100},0,0,0,0,0
"""


def test_tail_and_spread_across_the_wrap():
    s = fp8_cta_spans.summarize(fp8_cta_spans.read_spans(SPANS.splitlines()))
    assert s["ctas"] == 2
    # The last exit is CTA 1's at 1500: CTA 0's last (2^32 - 300) is 1800 ns before it.
    assert sorted(s["idle"]) == [0, 1800]
    assert sorted(s["spread"]) == [200, 500]
    assert s["cta0_cycles"] is None


def test_cta0_cycles_from_first_stamp_to_last_exit():
    stamps = fp8_cta_spans.read_trace_stamps(TRACE.splitlines())
    assert 40 not in stamps and 0 not in stamps  # p7 is a block count; 0 is no stamp
    s = fp8_cta_spans.summarize(fp8_cta_spans.read_spans(SPANS.splitlines()), stamps)
    # First stamp: the producer's 2^32 - 2000; last exit clock: 300, past the wrap.
    assert s["cta0_cycles"] == 2300


def test_no_spans_is_an_error():
    with pytest.raises(ValueError):
        fp8_cta_spans.summarize([])


def test_clock_from_each_ctas_own_exits():
    # CTA 0: 2000 ns and 3600 cycles apart (1.8 GHz) across both wraps; CTA 1: 3000 ns, 6000 cycles (2.0 GHz),
    # its clock far from CTA 0's (SMs' clocks are not aligned); CTA 2's exits are too close to count.
    spans = f"""cta,role,end_ns,end_clock
0,0,{WRAP - 1000},{WRAP - 1800}
0,1,1000,1800
1,0,5000,7000000
1,1,8000,7006000
2,0,8100,50
2,1,8200,900
"""
    s = fp8_cta_spans.summarize(fp8_cta_spans.read_spans(spans.splitlines()))
    assert s["ghz"] == pytest.approx(1.9)  # the median of 1.8 and 2.0
    assert s["cta0_idle"] == 7200  # CTA 2's 8200 less CTA 0's 1000


def test_no_clock_where_exits_are_too_close():
    s = fp8_cta_spans.summarize(fp8_cta_spans.read_spans(SPANS.splitlines()))
    assert s["ghz"] is None
