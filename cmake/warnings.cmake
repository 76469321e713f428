# One interface target carries the project's warning flags; every latlab
# target links it so the flags stay in one place.
add_library(latlab_warnings INTERFACE)
target_compile_options(latlab_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
    -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual -Wimplicit-fallthrough>)
if(LATLAB_WERROR)
  target_compile_options(latlab_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()

# latlab_library(NAME DIR [LINK ...]): a static library from every .cpp in DIR.
# Globbing keeps each folder's files its own business (one job per file).
function(latlab_library name dir)
  cmake_parse_arguments(ARG "" "" "LINK" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${dir}/*.cpp)
  add_library(${name} STATIC ${sources})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/include PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${ARG_LINK} PRIVATE latlab_warnings)
endfunction()
