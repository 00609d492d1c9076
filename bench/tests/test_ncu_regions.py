# bench/ncu_regions.py on a small SASS page in the shape ncu writes, with the per-reason columns.
import pytest

import ncu_regions

PAGE = '''"Kernel: zyfa_fp8_wgmma_d128_attention"
"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)","Instructions Executed","stall_wait","stall_short_sb","stall_selected","stall_wait (Not Issued)"
"0x7f0000001000","SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R3+URZ], R4 ;","100","90","10","10","0","0","10"
"0x7f0000001010","FMNMX R1, R2, R3, !PT ;","300","200","100","200","0","100","200"
"0x7f0000001020","SHFL.BFLY PT, R1, R2, 0x1, 0x1f ;","500","450","100","0","400","100","0"
"0x7f0000001030","FFMA R1, R2, R3, R4 ;","100","10","1,000","0","0","100","0"
'''


def test_regions_sum_their_rows_relative_to_the_first_address():
    lines = ncu_regions.summarize(PAGE.splitlines(), [("wait", 0x0, 0x10), ("max", 0x10, 0x30),
                                                      ("tail", 0x30, 0x40)])
    assert lines[2] == "| wait | 10.0% | 10 | 10 | wait 100% |"
    # 800 samples over 200 instructions; reasons 200 wait, 400 short_sb, 200 selected of 800
    assert lines[3] == "| max | 80.0% | 200 | 4 | short_sb 50%, wait 25%, selected 25% |"
    assert lines[4] == "| tail | 10.0% | 1000 | 0.1 | selected 100% |"


def test_blocks_divide_the_executed_instructions():
    lines = ncu_regions.summarize(PAGE.splitlines(), [("max", 0x10, 0x30)], blocks=50)
    assert "warp-instructions per block" in lines[0]
    assert lines[2].startswith("| max | 80.0% | 4 | 4 |")


def test_the_not_issued_twins_are_not_counted_as_reasons():
    lines = ncu_regions.summarize(PAGE.splitlines(), [("all", 0x0, 0x40)])
    assert "wait 23%" in lines[2]  # 210 of the 910 reason samples; with the twin it would be 420


def test_bad_regions_and_pages_are_errors():
    with pytest.raises(ValueError):
        ncu_regions.parse_region("x:0x20:0x10")
    assert ncu_regions.parse_region("a:b:0x10:0x20") == ("a:b", 0x10, 0x20)
    with pytest.raises(ValueError):
        ncu_regions.summarize(['"Source","Other"', '"NOP ;","1"'], [("x", 0, 1)])
