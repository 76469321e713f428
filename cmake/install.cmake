# `cmake --install`: headers, static libraries, the latlab CLI and a CMake
# package, so that users write
#   find_package(latlab CONFIG REQUIRED COMPONENTS vulkan profiler)
#   target_link_libraries(app PRIVATE latlab::vulkan latlab::profiler)
# Each built latlab_<c> library is exported as latlab::<c>; latlab::latlab
# links them all. The timing library (core, profiler and one GPU API:
# vulkan, opengl or cuda) links that API and threads, nothing else; the
# benchmark engine (vulkan_rig, engine), the report and the CLI are
# components of their own, and the package's config finds only the
# dependencies of the components asked for (latlabConfig.cmake.in).
include(CMakePackageConfigHelpers)

# Component|the latlab components it links (its link interface)|the
# packages its link interface needs. The config's find_dependency calls
# follow this table: a new component or dependency is one line here.
set(LATLAB_COMPONENT_TABLE
  "core||Threads"
  "sim|core|"
  "vulkan|core|Vulkan"
  "vulkan_rig|vulkan|"
  "opengl|core|OpenGL"
  "cuda|core|CUDAToolkit"
  "profiler|core|"
  "engine|core,sim,profiler,vulkan,vulkan_rig,cuda,opengl|fmt"
  "report|engine|nlohmann_json,fmt")

set(LATLAB_COMPONENTS)
set(LATLAB_COMPONENT_DEPS)  # "component:use1,use2:pkg1,pkg2" of each built component
foreach(row IN LISTS LATLAB_COMPONENT_TABLE)
  string(REPLACE "|" ";" fields "${row};")
  list(GET fields 0 component)
  list(GET fields 1 uses)
  list(GET fields 2 packages)
  if(NOT TARGET latlab_${component})
    continue()
  endif()
  set_target_properties(latlab_${component} PROPERTIES EXPORT_NAME ${component})
  add_library(latlab::${component} ALIAS latlab_${component})
  list(APPEND LATLAB_COMPONENTS ${component})
  set(built_uses)
  string(REPLACE "," ";" uses "${uses}")
  foreach(u IN LISTS uses)
    if(TARGET latlab_${u})
      list(APPEND built_uses ${u})
    endif()
  endforeach()
  string(REPLACE ";" "," built_uses "${built_uses}")
  list(APPEND LATLAB_COMPONENT_DEPS "${component}:${built_uses}:${packages}")
endforeach()
list(TRANSFORM LATLAB_COMPONENTS PREPEND latlab_ OUTPUT_VARIABLE latlab_libraries)

# latlab::latlab: everything this build made (the CLI's name is taken).
add_library(latlab_all INTERFACE)
set_target_properties(latlab_all PROPERTIES EXPORT_NAME latlab)
target_link_libraries(latlab_all INTERFACE ${latlab_libraries})
add_library(latlab::latlab ALIAS latlab_all)

install(TARGETS ${latlab_libraries} latlab_all EXPORT latlab_targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET latlab)
  install(TARGETS latlab RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/latlab ${LATLAB_GENERATED_INCLUDE_DIR}/latlab
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")

set(LATLAB_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/latlab)
install(EXPORT latlab_targets NAMESPACE latlab:: FILE latlabTargets.cmake
  DESTINATION ${LATLAB_CMAKE_DIR})
configure_package_config_file(cmake/latlabConfig.cmake.in
  ${PROJECT_BINARY_DIR}/latlabConfig.cmake INSTALL_DESTINATION ${LATLAB_CMAKE_DIR})
# 0.x: a new minor version may break the API, so only 0.1.* satisfies 0.1.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/latlabConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/latlabConfig.cmake ${PROJECT_BINARY_DIR}/latlabConfigVersion.cmake
  DESTINATION ${LATLAB_CMAKE_DIR})
