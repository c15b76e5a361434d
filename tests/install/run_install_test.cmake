# Installs fibersync from BUILD_DIR into a scratch prefix, then configures,
# builds and runs a consumer project that only does find_package(fibersync).
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix"
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/install/consumer" -B "${WORK_DIR}/build"
                        -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer configure failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}/build" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer build failed (${rc})")
endif()
execute_process(COMMAND "${WORK_DIR}/build/consumer" RESULT_VARIABLE rc OUTPUT_VARIABLE out)
# With the native scheduler built (EXPECT_NATIVE), the consumer must have
# found fibersync::sched and run 4 uthreads on it: 20000 more increments.
if(EXPECT_NATIVE)
  set(_want "native: yes\nconsumer: 60000")
else()
  set(_want "consumer: 40000")
endif()
if(NOT rc EQUAL 0 OR NOT out MATCHES "${_want}")
  message(FATAL_ERROR "consumer run failed (${rc}), expected '${_want}': ${out}")
endif()
message(STATUS "${out}")
if(EXISTS "${WORK_DIR}/build/argobots_consumer")
  execute_process(COMMAND "${WORK_DIR}/build/argobots_consumer" RESULT_VARIABLE rc OUTPUT_VARIABLE out)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "argobots consumer: 20000")
    message(FATAL_ERROR "argobots consumer run failed (${rc}): ${out}")
  endif()
  message(STATUS "${out}")
elseif(WITH_ARGOBOTS)
  message(FATAL_ERROR "fibersync was built with Argobots but the installed package has no fibersync::argobots")
endif()
