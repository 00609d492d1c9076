# bench/ncu_stalls.py on a small SASS page in the shape ncu writes (a preamble line, then a header row).
import pytest

import ncu_stalls

PAGE = '''"Kernel: zyfa_fp8_wgmma_d128_attention"
"# Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)"
"0x100","QGMMA.64x128x32.F32.E4M3.E4M3 R92, gdesc[UR24], R92, !UP0 ;","10","2"
"0x110","SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R3+URZ], R4 ;","1,200","1,100"
"0x120","@!P0 BRA 0x110 ;","300","250"
"0x130","FFMA R1, R2, R3, R4 ;","490","100"
'''


def test_reads_the_rows_and_their_samples():
    sass = ncu_stalls.read_sass(PAGE.splitlines())
    assert [s for _, _, s in sass] == [10, 1200, 300, 490]
    assert sass[1][0] == "0x110"


def test_opcode_drops_the_predicate():
    assert ncu_stalls.opcode("@!P0 BRA 0x110 ;") == "BRA"
    assert ncu_stalls.opcode("FFMA R1, R2, R3, R4 ;") == "FFMA"


def test_summary_ranks_the_waits_with_the_instruction_before():
    lines = ncu_stalls.summarize(ncu_stalls.read_sass(PAGE.splitlines()), top=2)
    assert lines[0] == "4 instructions, 2000 stall samples"
    assert "60.0%  SYNCS.PHASECHK.TRANS64.TRYWAIT" in "\n".join(lines)
    top = [l for l in lines if "0x110" in l and "[QGMMA" in l]
    assert top, lines


def test_a_page_without_samples_is_an_error():
    with pytest.raises(ValueError):
        ncu_stalls.read_sass(['"# Address","Source"', '"0x0","NOP ;"'])
