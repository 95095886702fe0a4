cmake_minimum_required(VERSION 3.25)
# Fails when a source file includes a header of a part of tprof that sits above it, or beside it
# where siblings must stay apart. Run by the ctest entry include_layers:
#   cmake -DSOURCE_DIR=<repo> -P cmake/check_layers.cmake
# The order is cmake/layers.cmake's. Project headers are included by their path from the
# repository root ("core/model/profile.h"), quoted or in angle brackets; relative paths would slip
# past the check and are refused. test/, bench/ and the fuzzers may include anything.
include(${CMAKE_CURRENT_LIST_DIR}/layers.cmake)

if(NOT IS_DIRECTORY "${SOURCE_DIR}/core")
  message(FATAL_ERROR "check_layers: SOURCE_DIR (${SOURCE_DIR}) holds no core/")
endif()
set(violations "")
set(extensions h hpp hh inc ipp cpp cc cxx c)
# core/ itself holds only its layers' folders: a file there, or a folder that is no layer, would
# belong to no layer.
file(GLOB entries RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/core/*)
foreach(entry IN LISTS entries)
  if(IS_DIRECTORY ${SOURCE_DIR}/${entry})
    if(NOT entry IN_LIST parts)
      string(APPEND violations "${entry}: not a layer of core/ (add it to cmake/layers.cmake)\n")
    endif()
  elseif(entry MATCHES "\\.([A-Za-z0-9]+)$" AND CMAKE_MATCH_1 IN_LIST extensions)
    string(APPEND violations "${entry}: core/ holds no sources of its own; put it in a sub-folder\n")
  endif()
endforeach()
set(globs "")
foreach(extension IN LISTS extensions)
  list(APPEND globs "*.${extension}")
endforeach()
set(checked 0)
foreach(part IN LISTS parts)
  list(TRANSFORM globs PREPEND ${SOURCE_DIR}/${part}/ OUTPUT_VARIABLE patterns)
  file(GLOB_RECURSE sources RELATIVE ${SOURCE_DIR} ${patterns})
  string(REPLACE "/" "_" var ${part})
  foreach(file IN LISTS sources)
    math(EXPR checked "${checked} + 1")
    file(STRINGS ${SOURCE_DIR}/${file} includes REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]+)[\">].*" "\\1" header
             "${line}")
      string(REGEX MATCH "^[ \t]*#[ \t]*include[ \t]*\"" quoted "${line}")
      if((quoted AND NOT header MATCHES "/") OR header MATCHES "(^|/)\\.\\.?/")
        string(APPEND violations
               "${file}: includes \"${header}\": include tprof's headers by their path from the "
               "repository root\n")
        continue()
      endif()
      set(target "")
      foreach(candidate IN LISTS parts)
        string(FIND "${header}" "${candidate}/" at)
        if(at EQUAL 0)
          set(target ${candidate})
        endif()
      endforeach()
      if(target STREQUAL "")
        string(FIND "${header}" "core/" at)
        if(at EQUAL 0)
          string(APPEND violations "${file}: includes ${header}, which is in no sub-folder of core/\n")
        endif()
        continue()  # generated/ and third-party headers
      endif()
      if(NOT target IN_LIST allowed_${var})
        string(REPLACE ";" ", " allowed "${allowed_${var}}")
        string(APPEND violations
               "${file}: includes ${header}, but ${part} may include only ${allowed}\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(checked EQUAL 0)
  message(FATAL_ERROR "check_layers: no sources found under ${SOURCE_DIR}")
endif()
if(violations)
  # NOTICE prints the lines as they are; FATAL_ERROR would rewrap them.
  message(NOTICE "${violations}")
  message(FATAL_ERROR "include layers broken: the includes above point up (order: "
                      "cmake/layers.cmake)")
endif()
message(STATUS "include layers: all ${checked} sources include only downwards")
