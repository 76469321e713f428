# The timing library's public headers stay apart from the benchmark engine's:
# run by ctest (public_headers, label unit) as
#   cmake -DINCLUDE_DIR=<include> -DGENERATED_INCLUDE_DIR=<build/include>
#         -DCXX=<compiler> [-DVULKAN=ON [-DVULKAN_INCLUDE_DIR=<dir>]] -DWORK_DIR=<dir>
#         -P tests/public_headers.cmake
# Every header directly in INCLUDE_DIR/latlab/ (what a program links to time
# its own GPU work: the core contract, one header per GPU API, the profiler)
# and in latlab/core/ (the rig seam every backend implements, part of the core)
#  1. includes only standard headers (<name>, no dot), the GPU APIs' headers
#     (<vulkan/...>, <EGL/...>, <GL/...>, <GLES...>, <KHR/...>, <cuda...>,
#     <cupti...>) and other headers directly in latlab/ or latlab/core/
#     ("latlab/x.hpp", "latlab/core/x.hpp"): never latlab/bench/ (the
#     benchmark engine and the backends' rigs), never a third-party library;
#  2. compiles on its own: a translation unit including only it, with
#     -std=c++20 -fsyntax-only and the project's warnings as errors. Headers
#     that need Vulkan's headers are compiled where VULKAN is on (its headers in
#     VULKAN_INCLUDE_DIR, or where the compiler finds them by itself).
# Fails with every offending header and line.
cmake_minimum_required(VERSION 3.25)
foreach(var INCLUDE_DIR GENERATED_INCLUDE_DIR CXX WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "public_headers.cmake: -D${var}=... is required")
  endif()
endforeach()

file(GLOB headers RELATIVE ${INCLUDE_DIR}/latlab ${INCLUDE_DIR}/latlab/*.hpp
     ${INCLUDE_DIR}/latlab/core/*.hpp ${INCLUDE_DIR}/latlab/detail/*.hpp)
list(SORT headers)
if(NOT headers)
  message(FATAL_ERROR "no headers in ${INCLUDE_DIR}/latlab")
endif()

set(only_top "a timing header includes latlab headers from latlab/, latlab/core/ and latlab/detail/ only, never latlab/bench/")
set(only_std "only standard and GPU API headers: the timing library links the GPU API and threads")
set(failures)
set(needs_vulkan)  # headers including <vulkan/...> directly
set(top_includes)  # "header>included" pairs among top-level headers
foreach(h IN LISTS headers)
  file(STRINGS ${INCLUDE_DIR}/latlab/${h} lines REGEX "^[ \t]*#[ \t]*include")
  foreach(line IN LISTS lines)
    if(line MATCHES "#[ \t]*include[ \t]*\"([^\"]*)\"")
      set(inc ${CMAKE_MATCH_1})
      if(inc MATCHES "^latlab/((core/|detail/)?[^/]+\\.hpp)$")
        if(EXISTS ${INCLUDE_DIR}/latlab/${CMAKE_MATCH_1} OR
           EXISTS ${GENERATED_INCLUDE_DIR}/latlab/${CMAKE_MATCH_1})
          list(APPEND top_includes "${h}>${CMAKE_MATCH_1}")
        else()
          list(APPEND failures "latlab/${h}: ${line} (no such timing header)")
        endif()
      else()
        list(APPEND failures "latlab/${h}: ${line} (${only_top})")
      endif()
    elseif(line MATCHES "#[ \t]*include[ \t]*<([^>]*)>")
      set(inc ${CMAKE_MATCH_1})
      if(inc MATCHES "^vulkan/")
        list(APPEND needs_vulkan ${h})
      elseif(inc MATCHES "^[a-z_0-9]+$" OR inc MATCHES "^(EGL|GL|GLES[0-9]*|KHR)/" OR
             inc MATCHES "^(cuda|cupti)[a-zA-Z_0-9]*\\.h$")
        # standard C++ header, or a GPU API's own header
      else()
        list(APPEND failures "latlab/${h}: ${line} (${only_std})")
      endif()
    else()
      list(APPEND failures "latlab/${h}: ${line} (unrecognised include)")
    endif()
  endforeach()
endforeach()

# Headers that need Vulkan's headers through another top-level header.
set(changed TRUE)
while(changed)
  set(changed FALSE)
  foreach(pair IN LISTS top_includes)
    string(REPLACE ">" ";" pair "${pair}")
    list(GET pair 0 from)
    list(GET pair 1 to)
    if(to IN_LIST needs_vulkan AND NOT from IN_LIST needs_vulkan)
      list(APPEND needs_vulkan ${from})
      set(changed TRUE)
    endif()
  endforeach()
endwhile()

# Each header on its own.
file(MAKE_DIRECTORY ${WORK_DIR})
set(flags -std=c++20 -fsyntax-only -Wall -Wextra -Wpedantic -Wshadow -Wconversion
  -Wno-sign-conversion -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual -Werror
  -I${INCLUDE_DIR} -I${GENERATED_INCLUDE_DIR})
if(VULKAN_INCLUDE_DIR)
  list(APPEND flags -isystem ${VULKAN_INCLUDE_DIR})
endif()
set(compiled 0)
set(skipped)
foreach(h IN LISTS headers)
  if(h IN_LIST needs_vulkan AND NOT VULKAN)
    list(APPEND skipped ${h})
    continue()
  endif()
  string(REPLACE ".hpp" "" stem ${h})
  string(REPLACE "/" "_" stem ${stem})
  set(tu ${WORK_DIR}/${stem}_alone.cpp)
  file(WRITE ${tu} "#include \"latlab/${h}\"\n")
  execute_process(COMMAND ${CXX} ${flags} ${tu} RESULT_VARIABLE rc OUTPUT_VARIABLE out
    ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    list(APPEND failures "latlab/${h} does not compile on its own:\n${out}")
  endif()
  math(EXPR compiled "${compiled} + 1")
endforeach()

list(LENGTH headers n)
if(failures)
  list(JOIN failures "\n" text)
  message(FATAL_ERROR "public headers: ${text}")
endif()
message(STATUS "public headers: ${n} in latlab/ and latlab/core/, each includes only standard, "
               "GPU API and timing headers; ${compiled} compiled on their own")
if(skipped)
  list(JOIN skipped ", " skipped)
  message(STATUS "not compiled (this build has no Vulkan): ${skipped}")
endif()
