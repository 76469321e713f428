# Builds one compile-fail target and judges the compiler's answer:
#   cmake -DBUILD_DIR=... -DTARGET=... [-DCONFIG=...] [-DEXPECT=re1@@re2...] -P check.cmake
# Without EXPECT the target must compile (the control). With EXPECT it must
# fail, and the output must match every regex in EXPECT: an unrelated error
# (a missing header, a typo) does not pass.
string(REPLACE "@@" ";" EXPECT "${EXPECT}")
set(config_args "")
if(CONFIG)
  set(config_args --config ${CONFIG})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET} ${config_args}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT EXPECT)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${TARGET} must compile and did not:\n${out}")
  endif()
  message(STATUS "${TARGET} compiled, as it must")
  return()
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "${TARGET} compiled; it must be rejected")
endif()
foreach(re IN LISTS EXPECT)
  if(NOT out MATCHES "${re}")
    message(FATAL_ERROR "${TARGET} was rejected, but not for the expected reason: no match "
                        "for '${re}' in:\n${out}")
  endif()
endforeach()
message(STATUS "${TARGET} was rejected for the expected reason")
