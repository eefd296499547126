# skeletons/cuda/embed_cuh.cmake: turns the CUDA skeleton headers into C
# arrays at build time, so that the code generator carries them and needs no
# file at run time. Each FILE becomes `const char rf_gpu_src_<name>[]`
# (NUL-terminated), <name> being the file name without its extension.
# Usage: cmake "-DFILES=a.cuh;b.cuh" -DOUT=rf_gpu_skel_data.c -P embed_cuh.cmake
set(body "/* Generated from the skeletons/cuda headers by embed_cuh.cmake: do not edit. */\n")
foreach(f ${FILES})
  get_filename_component(name ${f} NAME_WE)
  file(READ "${f}" hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
  string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n" hex "${hex}")
  string(APPEND body "extern const char rf_gpu_src_${name}[];\nconst char rf_gpu_src_${name}[] = {\n${hex}0};\n")
endforeach()
file(WRITE "${OUT}.tmp" "${body}")
# only touch the output when it changes, to spare rebuilds
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
