# One interface target carries the project's warning flags; every latlab
# target links it so the flags stay in one place.
add_library(latlab_warnings INTERFACE)
target_compile_options(latlab_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
    -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual -Wimplicit-fallthrough>)
if(LATLAB_WERROR)
  target_compile_options(latlab_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()

# latlab_library(NAME DIR [SOURCES ...] [LINK ...]): a static library from
# every .cpp in DIR (or, with DIR "", from SOURCES: a folder split in two).
# Globbing keeps each folder's files its own business (one job per file).
# latlab_warnings stays a build-time detail: it never reaches the export.
function(latlab_library name dir)
  cmake_parse_arguments(ARG "" "" "SOURCES;LINK" ${ARGN})
  set(sources ${ARG_SOURCES})
  if(dir)
    file(GLOB sources CONFIGURE_DEPENDS ${dir}/*.cpp)
  endif()
  add_library(${name} STATIC ${sources})
  latlab_public_includes(${name})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${ARG_LINK} PRIVATE $<BUILD_INTERFACE:latlab_warnings>)
endfunction()

# latlab_public_includes(NAME): the public headers (source and generated) in
# the build tree, include/ once installed; C++20 travels to users with them.
function(latlab_public_includes name)
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${LATLAB_GENERATED_INCLUDE_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${name} PUBLIC cxx_std_20)
endfunction()
