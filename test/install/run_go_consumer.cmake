# The Go binding as a consumer outside this repository gets it: installs the build into a scratch prefix,
# copies bindings/go where ../../include does not reach (as `go mod vendor` would), and builds and runs a
# few of its tests with -tags zyfa_pkgconfig, so the header and the library come from the installed zyfa.pc.
# Run: cmake -DBUILD_DIR=... -DGO_SOURCE_DIR=... -DWORK_DIR=... -DLIBDIR=lib -DGO=<go> -P this.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  WORKING_DIRECTORY ${WORK_DIR}/copy/zyfa)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed: ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}${err}")
endfunction()
file(MAKE_DIRECTORY ${WORK_DIR}/copy)
file(COPY ${GO_SOURCE_DIR}/ DESTINATION ${WORK_DIR}/copy/zyfa)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} --component Unspecified)
set(ENV{PKG_CONFIG_PATH} "${prefix}/${LIBDIR}/pkgconfig")
set(ENV{LD_LIBRARY_PATH} "${prefix}/${LIBDIR}")
unset(ENV{CGO_LDFLAGS})  # nothing may come from the build tree
unset(ENV{CGO_CFLAGS})
run(${GO} vet -tags zyfa_pkgconfig ./...)
run(${GO} test -tags zyfa_pkgconfig -count=1 -v -run "TestLoadedLibraryMatchesHeader|TestBF16GQAWithPartialTileMatchesFP64" .)
