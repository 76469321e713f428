# DESIGN.md's layering, checked: dependencies point one way,
#   apps -> report -> engine (src/bench), capture -> profiler -> backends -> core
# Run by ctest (layering, label compile) as
#   cmake -DSOURCE_DIR=<repo> -P tests/layering.cmake
# Every file of include/latlab/ and src/ (but apps/) belongs to a layer, and
# each layer says which layers it may include (an allow-list, below). Each
# #include is put in the layer of what it names; one that its file's layer may
# not include, or that names no layer's header, is listed and the check fails.
cmake_minimum_required(VERSION 3.25)
if(NOT DEFINED SOURCE_DIR)
  message(FATAL_ERROR "layering.cmake: -DSOURCE_DIR=... is required")
endif()

# The backends' rigs: the benchmark API of each backend (latency device,
# workloads) under latlab/bench/, which its backend implements.
set(rig_headers "vulkan_rig|gl_rig|cuda_rig|sim|sim_timestamp_slots")
# One header per GPU API: the timing library's backends.
set(api_headers "vulkan|cuda|opengl|cupti")

# What each layer may include, besides the standard library, third-party
# headers and headers beside the file (no folder in the name):
#   core      include/latlab/*.hpp (but the API and profiler headers), src/core/
#   seam      include/latlab/core/: the rig seam (LatencyDevice, PresentPath,
#             ReferencePath, PollTarget, MissingCapability, and profile's
#             ProfileRig and QueuesProfileRig), part of the core:
#             every backend implements it, so it may include only the core
#   gpu       a GPU or window system API's header (<vulkan/...>, <EGL/...>,
#             <GL/...>, <cuda...>, <X11/...>, <xcb/...>): never in core or seam
#   backends  include/latlab/{vulkan,cuda,opengl,cupti}.hpp, src/backends/
#   rigs      include/latlab/bench/{vulkan_rig,gl_rig,cuda_rig,sim,
#             sim_timestamp_slots}.hpp
#   profiler  include/latlab/profiler*.hpp, include/latlab/detail/profiler*.hpp,
#             src/profiler/
#   bench     the rest of include/latlab/bench/: the benchmark engine's API
#   engine    src/bench/: the benchmark engine
#   capture, report: src/<layer>/ (capture is the benchmark engine's other
#             half: its session returns a type of the engine's API,
#             latlab/bench/capture_session.hpp)
set(may_include_core "core|seam")
set(may_include_seam "core|seam")
set(may_include_backends "core|seam|gpu|backends|rigs")
set(may_include_rigs "core|seam|gpu|backends|rigs")
set(may_include_profiler "core|seam|gpu|backends|profiler")
set(may_include_bench "core|seam|gpu|backends|rigs|profiler|bench")
set(may_include_capture "core|seam|gpu|backends|rigs|profiler|bench|capture")
set(may_include_engine "core|seam|gpu|backends|rigs|profiler|bench|engine")
set(may_include_report "core|seam|gpu|backends|rigs|profiler|bench|engine|capture|report")
# The command line (apps/): options, a plan, one library call, reporters.
# Only public headers (latlab/...) and the reporters' one header
# (report/reporters/reporters.hpp): no private header of src/, no GPU or
# window system header, no JSON library, no sockets or processes of its own
# (those are the capture session's): "apps" below.
set(may_include_apps "core|seam|rigs|profiler|bench|report")
set(apps_report_header "report/reporters/reporters.hpp")

# The layer of a latlab header "latlab/<path>".
function(public_layer path out)
  if(path MATCHES "^core/[^/]+$")
    set(layer seam)
  elseif(path MATCHES "^bench/(${rig_headers})\\.hpp$")
    set(layer rigs)
  elseif(path MATCHES "^bench/[^/]+$")
    set(layer bench)
  elseif(path MATCHES "^(${api_headers})\\.hpp$")
    set(layer backends)
  elseif(path MATCHES "^(detail/)?profiler[a-z_]*\\.hpp$")
    set(layer profiler)
  elseif(path MATCHES "^[^/]+$")
    set(layer core)
  else()
    set(layer unknown)
  endif()
  set(${out} ${layer} PARENT_SCOPE)
endfunction()

# The layer an #include line reaches: a layer's name, "free" (standard,
# third-party, or beside the file) or "unknown".
function(include_layer line out)
  set(layer unknown)
  if(line MATCHES "#[ \t]*include[ \t]*[\"<]latlab/([^\">]+)[\">]")
    public_layer("${CMAKE_MATCH_1}" layer)
  elseif(line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
    set(inc "${CMAKE_MATCH_1}")
    if(inc MATCHES "^bench/")
      set(layer engine)
    elseif(inc MATCHES "^(core|backends|profiler|capture|report)/")
      set(layer ${CMAKE_MATCH_1})
    elseif(NOT inc MATCHES "/")
      set(layer free)
    endif()
  elseif(line MATCHES "#[ \t]*include[ \t]*<([^>]+)>")
    set(inc "${CMAKE_MATCH_1}")
    if(inc MATCHES "^(vulkan|vk_video|EGL|GL|GLES[0-9]*|KHR|X11|xcb)/" OR
       inc MATCHES "^(cuda|cupti|nvml|nvrtc)[A-Za-z_0-9]*\\.h$")
      set(layer gpu)
    elseif(inc MATCHES "^(nlohmann/|sys/socket\\.h|sys/wait\\.h|spawn\\.h)")
      set(layer engine_only)  # the JSON library, sockets, child processes
    else()
      set(layer free)
    endif()
  endif()
  set(${out} ${layer} PARENT_SCOPE)
endfunction()

set(files "")
file(GLOB_RECURSE public RELATIVE "${SOURCE_DIR}/include/latlab" "${SOURCE_DIR}/include/latlab/*.hpp")
foreach(path IN LISTS public)
  public_layer("${path}" layer)
  list(APPEND files "include/latlab/${path}|${layer}")
endforeach()
foreach(dir_layer core:core backends:backends profiler:profiler bench:engine capture:capture
                  report:report)
  string(REPLACE ":" ";" dir_layer "${dir_layer}")
  list(GET dir_layer 0 dir)
  list(GET dir_layer 1 layer)
  file(GLOB_RECURSE sources RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/src/${dir}/*.cpp"
       "${SOURCE_DIR}/src/${dir}/*.hpp" "${SOURCE_DIR}/src/${dir}/*.h")
  foreach(path IN LISTS sources)
    list(APPEND files "${path}|${layer}")
  endforeach()
endforeach()
file(GLOB_RECURSE sources RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/apps/*.cpp" "${SOURCE_DIR}/apps/*.hpp")
foreach(path IN LISTS sources)
  list(APPEND files "${path}|apps")
endforeach()

set(found "")
set(checked 0)
foreach(entry IN LISTS files)
  string(REPLACE "|" ";" entry "${entry}")
  list(GET entry 0 path)
  list(GET entry 1 layer)
  if(NOT DEFINED may_include_${layer})
    string(APPEND found "  ${path}: in no layer\n")
    continue()
  endif()
  math(EXPR checked "${checked} + 1")
  file(STRINGS "${SOURCE_DIR}/${path}" lines REGEX "^[ \t]*#[ \t]*include")
  foreach(line IN LISTS lines)
    include_layer("${line}" reached)
    if(reached STREQUAL "free" OR (reached STREQUAL "engine_only" AND NOT layer STREQUAL "apps"))
      continue()
    endif()
    if(layer STREQUAL "apps" AND line MATCHES "#[ \t]*include[ \t]*\"((core|backends|profiler|capture|report|bench)/[^\"]+)\"" AND
       NOT CMAKE_MATCH_1 STREQUAL apps_report_header)
      string(APPEND found "  ${path} (apps: latlab/... and ${apps_report_header} only): ${line}\n")
    elseif(reached STREQUAL "unknown")
      string(APPEND found "  ${path} (${layer}): ${line} (no layer's header)\n")
    elseif(NOT reached MATCHES "^(${may_include_${layer}})$")
      string(APPEND found "  ${path} (${layer}, may include ${may_include_${layer}}): "
                          "${line} (${reached})\n")
    endif()
  endforeach()
endforeach()

if(found)
  message(FATAL_ERROR "includes against the layering (docs/architecture.md):\n${found}")
endif()
message(STATUS "layering: every include of ${checked} files points down")
