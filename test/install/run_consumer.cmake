# Installs the build into a scratch prefix, then configures, builds and runs test/install/consumer.
# Run: cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DLIBDIR=lib -DEXPECTED_VERSION=x.y.z -P this.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed: ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} --component Unspecified)
set(ENV{PKG_CONFIG_PATH} "${prefix}/${LIBDIR}/pkgconfig")
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/consumer -B ${WORK_DIR}/build -DCMAKE_PREFIX_PATH=${prefix}
    -DZYFA_EXPECTED_VERSION=${EXPECTED_VERSION})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
# No LD_LIBRARY_PATH: a CMake build tree finds the installed library through the link's runtime path.
run(${WORK_DIR}/build/consumer_cmake)
run(${WORK_DIR}/build/consumer_cpp)
run(${WORK_DIR}/build/consumer_pkgconfig)
