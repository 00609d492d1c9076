# zyfa_check_wgmma_notes(NAME TEXT FAILED_VAR): fails (SEND_ERROR, and FAILED_VAR set TRUE in the caller) when
# ptxas's report TEXT has any wgmma note (C75xx): serialized products (C7511, C7514, C7520) or a wait or arrive
# it injected before registers it cannot prove free (C7517, C7519). ptxas builds such a kernel anyway, and it
# runs and passes every test, only slower; the notes are informational, so a build prints them and goes on.
# Used by the CTests asmgen_ptxas_report (the emitted FP8 kernels) and kernels_ptxas_notes (the BF16 kernel).
# A wgmma note's code in ptxas's report; build_code_objects.cmake warns on it too.
set(ZYFA_WGMMA_NOTE_REGEX "\\(C75[0-9][0-9]\\)")
function(zyfa_check_wgmma_notes name text failed_var)
  string(REGEX MATCHALL "[^\n]*${ZYFA_WGMMA_NOTE_REGEX}[^\n]*" notes "${text}")
  if(notes)
    list(JOIN notes "\n" joined)
    message(SEND_ERROR "${name}: ptxas's wgmma notes:\n${joined}")
    set(${failed_var} TRUE PARENT_SCOPE)
  endif()
endfunction()
