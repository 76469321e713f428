# GLSL -> SPIR-V at build time with glslc; the words are emitted as a C
# initializer list (-mfmt=num) and #included into the binary, so latlab needs
# no shader files at run time.
find_program(GLSLC_EXECUTABLE glslc REQUIRED)

# latlab_shaders(TARGET OUTDIR SOURCES...): compiles each shader to
# OUTDIR/<file>.spv.inc and makes TARGET depend on them.
function(latlab_shaders target outdir)
  # glslc does not create OUTDIR, and only Ninja makes output folders itself.
  file(MAKE_DIRECTORY ${outdir})
  set(outputs)
  foreach(src ${ARGN})
    get_filename_component(name ${src} NAME)
    set(out ${outdir}/${name}.spv.inc)
    add_custom_command(OUTPUT ${out}
      COMMAND ${GLSLC_EXECUTABLE} --target-env=vulkan1.1 -O -mfmt=num -o ${out} ${src}
      DEPENDS ${src}
      COMMENT "glslc ${name}" VERBATIM)
    list(APPEND outputs ${out})
  endforeach()
  add_custom_target(${target}_spirv DEPENDS ${outputs})
  add_dependencies(${target} ${target}_spirv)
  target_include_directories(${target} PRIVATE ${outdir})
endfunction()
