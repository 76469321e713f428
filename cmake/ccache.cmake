# Compiles through ccache when it is installed. CI builds a fresh clone in
# another folder, so paths under the source tree are hashed relative to it
# (base_dir) and the build folder is not hashed: a clone reuses what an
# earlier build of the same sources compiled. A launcher given on the command
# line wins. The cache is bounded to about two CI runs' objects (one is
# about 7 GiB): the machines' disks also hold the clones and their builds.
find_program(LATLAB_CCACHE ccache)
if(LATLAB_CCACHE)
  set(latlab_ccache_launcher ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}
      CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=12G ${LATLAB_CCACHE})
  foreach(lang C CXX CUDA)
    if(NOT DEFINED CMAKE_${lang}_COMPILER_LAUNCHER)
      set(CMAKE_${lang}_COMPILER_LAUNCHER ${latlab_ccache_launcher})
    endif()
  endforeach()
endif()
