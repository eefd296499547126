# tpch/gen/embed_dists.cmake: turns dists.dss into a C array at build time,
# so the generator carries its distributions and needs no file at run time.
# Usage: cmake -DIN=dists.dss -DOUT=tpch_dists_data.c -P embed_dists.cmake
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" nhex)
math(EXPR nbytes "${nhex} / 2")
# 16 bytes to a line keeps the generated file readable in a diff
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n" body "${body}")
file(WRITE "${OUT}.tmp"
  "/* Generated from tpch/gen/dists.dss by embed_dists.cmake: do not edit. */\n"
  "#include <stddef.h>\n"
  "extern const unsigned char rf_tpch_dists_dss[];\n"
  "extern const size_t rf_tpch_dists_dss_len;\n"
  "const unsigned char rf_tpch_dists_dss[] = {\n${body}0};\n"
  "const size_t rf_tpch_dists_dss_len = ${nbytes};\n")
# only touch the output when it changes, to spare rebuilds
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
