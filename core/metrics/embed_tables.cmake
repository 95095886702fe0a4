# Turns the metric table files (core/metrics/tables/*.json, in the order given) into a C++ header
# holding each as a raw string literal, so that the tables stay data files in the sources and a
# new CPU is a file, not code.
# cmake -DINPUTS="a.json|b.json" -DOUTPUT=header.h -P embed_tables.cmake
string(REPLACE "|" ";" inputs "${INPUTS}")
set(body "")
foreach(input IN LISTS inputs)
  file(READ "${input}" text)
  string(FIND "${text}" ")tprof_embed\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${input} contains the raw string delimiter )tprof_embed\"")
  endif()
  get_filename_component(name "${input}" NAME)
  string(APPEND body "    {\"${name}\", R\"tprof_embed(${text})tprof_embed\"},\n")
endforeach()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from core/metrics/tables by core/metrics/embed_tables.cmake; do not edit.\n"
  "#pragma once\n#include <string_view>\nnamespace tprof {\n"
  "struct EmbeddedMetricTable {\n  std::string_view name;\n  std::string_view text;\n};\n"
  "inline constexpr EmbeddedMetricTable kEmbeddedMetricTables[] = {\n${body}};\n"
  "}  // namespace tprof\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
