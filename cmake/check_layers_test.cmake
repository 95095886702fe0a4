cmake_minimum_required(VERSION 3.25)
# Shows that cmake/check_layers.cmake catches what it is there to catch: a copy of the sources
# passes as it is, and fails, naming the file and the include, after each of the back-includes
# below is added to it. Run by the ctest entry include_layers_selftest:
#   cmake -DSOURCE_DIR=<repo> -DWORK_DIR=<scratch dir> -P cmake/check_layers_test.cmake
set(check ${SOURCE_DIR}/cmake/check_layers.cmake)
set(copy ${WORK_DIR}/layers_copy)

function(fresh_copy)
  file(REMOVE_RECURSE ${copy})
  file(MAKE_DIRECTORY ${copy})
  foreach(dir core symbolize pmu report views cmd)
    file(COPY ${SOURCE_DIR}/${dir} DESTINATION ${copy} FILES_MATCHING PATTERN "*.h" PATTERN "*.cpp")
  endforeach()
endfunction()

function(run_check out_result out_text)
  execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${copy} -P ${check}
                  RESULT_VARIABLE result OUTPUT_VARIABLE text ERROR_VARIABLE text)
  set(${out_result} ${result} PARENT_SCOPE)
  set(${out_text} "${text}" PARENT_SCOPE)
endfunction()

fresh_copy()
run_check(result text)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "the unchanged sources fail the layer check:\n${text}")
endif()

# file | line added | what the check must say
set(cases
  "core/model/profile.h|#include \"core/analysis/report_table.h\"|core/model/profile.h: includes core/analysis/report_table.h, but core/model may include only core/base, core/model"
  "core/base/error.h|#include \"core/model/profile.h\"|core/base/error.h: includes core/model/profile.h, but core/base may include only core/base"
  "core/analysis/call_tree.cpp|#include \"core/perfdata/perf_data_reader.h\"|core/analysis/call_tree.cpp: includes core/perfdata/perf_data_reader.h"
  "core/format/chunk.h|#include \"core/perfdata/perf_record_parser.h\"|core/format/chunk.h: includes core/perfdata/perf_record_parser.h"
  "core/perfdata/perf_data_reader.cpp|#include \"core/source/profile_source.h\"|core/perfdata/perf_data_reader.cpp: includes core/source/profile_source.h"
  "core/metrics/recorded_metrics.h|#include \"core/analysis/derived_metrics.h\"|core/metrics/recorded_metrics.h: includes core/analysis/derived_metrics.h"
  "report/topdown_report.h|#include \"pmu/perf_event.h\"|report/topdown_report.h: includes pmu/perf_event.h"
  "report/stackcollapse_folded.h|#include \"core/perfdata/text_profile.h\"|report/stackcollapse_folded.h: includes core/perfdata/text_profile.h"
  "symbolize/symbolizer.h|#include \"report/text_report.h\"|symbolize/symbolizer.h: includes report/text_report.h"
  "report/text_report.h|#include \"cmd/cli_support.h\"|report/text_report.h: includes cmd/cli_support.h"
  "cmd/main.cpp|#include \"core/profile.h\"|cmd/main.cpp: includes core/profile.h, which is in no sub-folder of core/"
  "core/stray.h|#pragma once|core/stray.h: core/ holds no sources of its own"
  "core/extra/stray.h|#pragma once|core/extra: not a layer of core/"
  "core/model/profile.h|#include <core/analysis/report_table.h>|core/model/profile.h: includes core/analysis/report_table.h, but core/model"
  "core/analysis/call_tree.cpp|#include \"../perfdata/perf_data_reader.h\"|core/analysis/call_tree.cpp: includes \"../perfdata/perf_data_reader.h\": include tprof's headers by their path"
  "core/model/profile.h|#include \"core/model/../format/chunk.h\"|core/model/profile.h: includes \"core/model/../format/chunk.h\": include tprof's headers by their path"
  "report/text_report.cpp|#include \"call_tree.h\"|report/text_report.cpp: includes \"call_tree.h\": include tprof's headers by their path"
  "core/model/extra.hpp|#include \"core/analysis/call_tree.h\"|core/model/extra.hpp: includes core/analysis/call_tree.h"
  "symbolize/symbolizer.cpp|#include \"core/format/symbol_section.h\"|symbolize/symbolizer.cpp: includes core/format/symbol_section.h, but symbolize may include only core/base, core/model, symbolize"
  "views/opened_profile.h|#include <CLI/CLI.hpp>|views/opened_profile.h: includes CLI/CLI.hpp, which views may not include"
  "views/opened_profile.cpp|#include \"cmd/cli_support.h\"|views/opened_profile.cpp: includes cmd/cli_support.h, but views may include only")
foreach(case IN LISTS cases)
  string(REPLACE "|" ";" fields "${case}")
  list(GET fields 0 file)
  list(GET fields 1 line)
  list(GET fields 2 expected)
  fresh_copy()
  get_filename_component(parent ${copy}/${file} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  file(APPEND ${copy}/${file} "\n${line}\n")
  run_check(result text)
  if(result EQUAL 0)
    message(FATAL_ERROR "the layer check passed with '${line}' added to ${file}")
  endif()
  string(FIND "${text}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "with '${line}' in ${file} the layer check failed, but did not say "
                        "'${expected}':\n${text}")
  endif()
endforeach()
list(LENGTH cases count)
file(REMOVE_RECURSE ${copy})
message(STATUS "layer check: the sources pass; each of ${count} back-includes is caught")
