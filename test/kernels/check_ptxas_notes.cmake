# CTest kernels_ptxas_notes: compiles each wgmma kernel source of src/kernels/ once more, as the build does,
# with ptxas's report on, and fails on any of its wgmma notes (C75xx). ptxas builds such a kernel anyway, and it
# runs and passes every test, only slower: C7511/C7514 serialize every wgmma, and C7517 ("warpgroup.wait is
# injected ... to allow use of registers defined by GMMA") waits for all products in flight before an access to
# registers it cannot prove free, which in session 23 moved the wait for S above the epilogue it was meant to
# overlap. The notes are informational, so a normal build prints them and goes on; this test is what stops them.
#   cmake -DNVCC=<nvcc> -DGENCODE=<flags> -DSOURCE_DIR=<repo> -DSOURCES=<a;b> -DWORK=<dir> -P check_ptxas_notes.cmake
cmake_minimum_required(VERSION 3.25)
file(MAKE_DIRECTORY ${WORK})
separate_arguments(gencode UNIX_COMMAND "${GENCODE}")
set(failed FALSE)
foreach(source IN LISTS SOURCES)
  get_filename_component(name ${source} NAME_WE)
  execute_process(
    COMMAND ${NVCC} -std=c++17 -O3 -DNDEBUG ${gencode} --expt-relaxed-constexpr -Xptxas=-v,-warn-spills
            -I${SOURCE_DIR}/include -I${SOURCE_DIR}/src -cubin -o ${WORK}/${name}.cubin ${source}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(text "${out}${err}")
  file(WRITE ${WORK}/${name}.ptxas.txt "${text}")
  if(NOT rc EQUAL 0)
    message(SEND_ERROR "${name}: nvcc failed (${rc}):\n${text}")
    set(failed TRUE)
    continue()
  endif()
  string(REGEX MATCHALL "[^\n]*\\(C75[0-9][0-9]\\)[^\n]*" notes "${text}")
  if(notes)
    list(JOIN notes "\n" joined)
    message(SEND_ERROR "${name}: ptxas's wgmma notes:\n${joined}")
    set(failed TRUE)
    continue()
  endif()
  string(REGEX MATCHALL "Compiling entry function '[^']*'" entries "${text}")
  list(LENGTH entries n)
  if(n EQUAL 0)
    message(SEND_ERROR "${name}: the report shows no entry function compiled:\n${text}")
    set(failed TRUE)
    continue()
  endif()
  message(STATUS "${name}: ${n} entry functions, no wgmma notes (report: ${WORK}/${name}.ptxas.txt)")
endforeach()
if(failed)
  message(FATAL_ERROR "kernels_ptxas_notes failed")
endif()
