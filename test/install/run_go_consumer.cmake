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
  set(out "${out}" PARENT_SCOPE)
endfunction()
file(MAKE_DIRECTORY ${WORK_DIR}/copy)
file(COPY ${GO_SOURCE_DIR}/ DESTINATION ${WORK_DIR}/copy/zyfa)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} --component Unspecified)
# LIBDIR, not PATH: pkg-config then searches the scratch prefix alone, never a zyfa installed on the system.
set(ENV{PKG_CONFIG_LIBDIR} "${prefix}/${LIBDIR}/pkgconfig")
unset(ENV{PKG_CONFIG_PATH})
set(ENV{LD_LIBRARY_PATH} "${prefix}/${LIBDIR}")
unset(ENV{CGO_LDFLAGS})  # nothing may come from the build tree
unset(ENV{CGO_CFLAGS})
# Without the tag the copy has no header: the test below passes only through pkg-config.
execute_process(COMMAND ${GO} vet . WORKING_DIRECTORY ${WORK_DIR}/copy/zyfa RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(rc EQUAL 0)
  message(FATAL_ERROR "the copied package built without -tags zyfa_pkgconfig: it found a header outside the install")
endif()
run(${GO} vet -tags zyfa_pkgconfig ./...)
set(tests TestLoadedLibraryMatchesHeader TestBF16GQAWithPartialTileMatchesFP64)
list(JOIN tests "|" pattern)
run(${GO} test -tags zyfa_pkgconfig -count=1 -v -run "^(${pattern})$" .)
foreach(t IN LISTS tests)  # a pattern that matched nothing would pass with "no tests to run"
  if(NOT out MATCHES "--- PASS: ${t} ")
    message(FATAL_ERROR "${t} did not pass in the copied package:\n${out}")
  endif()
endforeach()
