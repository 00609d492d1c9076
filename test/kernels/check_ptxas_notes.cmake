# CTest kernels_ptxas_notes: compiles each wgmma kernel source of src/kernels/ once more, as the build does,
# with ptxas's report on, and fails on any of its wgmma notes (cmake/ZyfaPtxasNotes.cmake). C7517 ("warpgroup.wait
# is injected ... to allow use of registers defined by GMMA") waits for all products in flight before an access to
# registers ptxas cannot prove free: in session 23 it moved the wait for S above the epilogue meant to overlap it.
#   cmake -DNVCC=<nvcc> -DGENCODE=<flags> -DSOURCE_DIR=<repo> -DSOURCES=<a;b> -DWORK=<dir> -P check_ptxas_notes.cmake
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/ZyfaPtxasNotes.cmake)
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
  set(noted FALSE)
  zyfa_check_wgmma_notes(${name} "${text}" noted)
  if(noted)
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
