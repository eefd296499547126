# tpch/queries/embed_queries.cmake: turns the query texts (schema.logic and
# q01.logic .. q22.logic) into a C source at build time, so that `redfox tpch
# run` carries its queries and works from any directory.
# Usage: cmake -DDIR=tpch/queries -DOUT=tpch_queries_data.c -P embed_queries.cmake
file(GLOB files RELATIVE "${DIR}" "${DIR}/*.logic")
list(SORT files)
set(decls "")
set(table "")
set(i 0)
foreach(f ${files})
  file(READ "${DIR}/${f}" hex HEX)
  string(LENGTH "${hex}" nhex)
  math(EXPR nbytes "${nhex} / 2")
  # 16 bytes to a line keeps the generated file readable in a diff
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
  string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n" body "${body}")
  string(APPEND decls "static const char text${i}[] = {\n${body}0};\n")
  string(APPEND table "    {\"${f}\", \"tpch/queries/${f}\", text${i}, ${nbytes}},\n")
  math(EXPR i "${i} + 1")
endforeach()
file(WRITE "${OUT}.tmp"
  "/* Generated from the .logic files of tpch/queries by embed_queries.cmake: do not edit. */\n"
  "#include \"rf_tpch_queries.h\"\n\n"
  "${decls}\n"
  "const rf_tpch_source rf_tpch_sources[] = {\n${table}};\n"
  "const int32_t rf_tpch_nsources = ${i};\n")
# only touch the output when it changes, to spare rebuilds
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
