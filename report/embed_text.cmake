# Turns a text file into a C++ header holding it as a raw string literal, so that a template
# such as report/flamegraph.html.in stays a readable file of its own in the sources.
# cmake -DINPUT=file -DOUTPUT=header.h -DSYMBOL=kName -P embed_text.cmake
file(READ "${INPUT}" text)
string(FIND "${text}" ")tprof_embed\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw string delimiter )tprof_embed\"")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by report/embed_text.cmake; do not edit.\n"
  "#pragma once\n#include <string_view>\nnamespace tprof {\n"
  "inline constexpr std::string_view ${SYMBOL} = R\"tprof_embed(${text})tprof_embed\";\n"
  "}  // namespace tprof\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
