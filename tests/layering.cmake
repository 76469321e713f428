# DESIGN.md's layering, checked (issue 25): dependencies point one way,
#   apps -> report -> engine -> latency, capture -> profiler -> backends -> core
# Run by ctest (layering, label compile) as
#   cmake -DSOURCE_DIR=<repo> -P tests/layering.cmake
# For each layer, the #include lines of its sources that reach a layer above
# it (or, for core, a GPU API's header) are listed, and the check fails.
# A backend may include its own rig's header under latlab/bench/ (the rig's
# API: vulkan_rig, gl_rig, cuda_rig, sim, sim_timestamp_slots), never an
# engine header; the rig headers themselves include only top-level latlab/
# headers.
cmake_minimum_required(VERSION 3.25)
if(NOT DEFINED SOURCE_DIR)
  message(FATAL_ERROR "layering.cmake: -DSOURCE_DIR=... is required")
endif()

set(rig_headers "vulkan_rig|gl_rig|cuda_rig|sim|sim_timestamp_slots")
set(engine_headers "latlab/bench/(latency_|run_|load_|performance_|present_markers|present_probe|frame_markers|schedule|signal_|tick_mapper|clock_cross|clock_study|device_factory|backend)")
set(above_backends "profiler/|latency/|engine/|capture/|report/|latlab/profiler|${engine_headers}")
# layer folder (or header glob)        forbidden include pattern
set(rules
  "src/core|backends/|profiler/|latency/|engine/|capture/|report/|latlab/bench/|vulkan/|cuda|cupti|EGL/|GL/|GLES"
  "src/backends|${above_backends}"
  "src/profiler|latency/|engine/|capture/|report/|latlab/bench/"
  "src/latency|engine/|capture/|report/"
  "src/capture|latency/|engine/|report/|${engine_headers}"
  "src/engine|report/|capture/"
  "src/report|apps/")

set(found "")
foreach(rule IN LISTS rules)
  string(FIND "${rule}" "|" bar)
  string(SUBSTRING "${rule}" 0 ${bar} folder)
  math(EXPR from "${bar} + 1")
  string(SUBSTRING "${rule}" ${from} -1 forbidden)
  file(GLOB_RECURSE sources "${SOURCE_DIR}/${folder}/*.cpp" "${SOURCE_DIR}/${folder}/*.hpp"
       "${SOURCE_DIR}/${folder}/*.h")
  foreach(src IN LISTS sources)
    file(STRINGS "${src}" lines REGEX "^[ \t]*#[ \t]*include")
    foreach(line IN LISTS lines)
      if(line MATCHES "#[ \t]*include[ \t]*[<\"](${forbidden})")
        file(RELATIVE_PATH rel "${SOURCE_DIR}" "${src}")
        string(APPEND found "  ${rel} (${folder}): ${line}\n")
      endif()
    endforeach()
  endforeach()
endforeach()

# The rigs' public headers: top-level latlab/ headers and the standard and GPU
# headers only, as a backend may include them.
file(GLOB rigs "${SOURCE_DIR}/include/latlab/bench/*.hpp")
foreach(header IN LISTS rigs)
  get_filename_component(name "${header}" NAME_WE)
  if(NOT name MATCHES "^(${rig_headers})$")
    continue()
  endif()
  file(STRINGS "${header}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS lines)
    if(line MATCHES "\"latlab/bench/" AND NOT line MATCHES "\"latlab/bench/(${rig_headers})\\.hpp\"")
      file(RELATIVE_PATH rel "${SOURCE_DIR}" "${header}")
      string(APPEND found "  ${rel} (a rig header): ${line}\n")
    endif()
  endforeach()
endforeach()

if(found)
  message(FATAL_ERROR "includes against the layering (docs/architecture.md):\n${found}")
endif()
message(STATUS "layering: every include points down")
