# SPDX-License-Identifier: MIT
#
# report_by.cmake - `vmp report --by module|thread|state|unit` and the blame
# section (spec.md §5.12 key 8) seen from the command line: every csv table
# sums to the samples of the json report, the blame matrix's total row sums
# to the samples not in generated code, the JIT units to those in it, and a
# file without blame has no blame section.
#
# usage: cmake -DSIMVM=... -DVMP=... -DWORK_DIR=... -P report_by.cmake

file(MAKE_DIRECTORY ${WORK_DIR})
set(with ${WORK_DIR}/blame.vmp)
set(without ${WORK_DIR}/noblame.vmp)
execute_process(COMMAND ${SIMVM} --blame --seed 21 --samples 3000 -o ${with}
                RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "vmp-simvm --blame failed: ${rc}")
endif()
execute_process(COMMAND ${SIMVM} --seed 21 --samples 3000 -o ${without}
                RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "vmp-simvm failed: ${rc}")
endif()

function(run_report out_var)
  execute_process(COMMAND ${VMP} report ${ARGN}
                  OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "vmp report ${ARGN} failed (${rc}): ${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

run_report(json --format json ${with})
string(JSON samples GET "${json}" samples)
string(JSON generated GET "${json}" generated)
string(JSON blame_total GET "${json}" blame samples)
math(EXPR not_generated "${samples} - ${generated}")
if(NOT blame_total EQUAL not_generated)
  message(FATAL_ERROR "json blame.samples ${blame_total} != samples - generated ${not_generated}")
endif()
# the JIT units hold exactly the samples in generated code
string(JSON unit_total GET "${json}" jit_units samples)
if(NOT unit_total EQUAL generated)
  message(FATAL_ERROR "json jit_units.samples ${unit_total} != generated ${generated}")
endif()

# csv: one row per key, summing to every sample; the header names the key
foreach(by module thread state unit)
  run_report(csv --by ${by} --format csv ${with})
  string(REPLACE "\n" ";" lines "${csv}")
  list(GET lines 0 head)
  if(NOT head STREQUAL "${by},samples")
    message(FATAL_ERROR "--by ${by}: csv header '${head}'")
  endif()
  list(REMOVE_AT lines 0)
  set(sum 0)
  set(rows 0)
  foreach(l IN LISTS lines)
    if(l STREQUAL "")
      continue()
    endif()
    if(NOT l MATCHES ",([0-9]+)$")
      message(FATAL_ERROR "--by ${by}: bad csv row '${l}'")
    endif()
    math(EXPR sum "${sum} + ${CMAKE_MATCH_1}")
    math(EXPR rows "${rows} + 1")
  endforeach()
  if(NOT sum EQUAL samples)
    message(FATAL_ERROR "--by ${by}: csv sums to ${sum}, not ${samples}")
  endif()
  if(rows LESS 2)
    message(FATAL_ERROR "--by ${by}: ${rows} rows")
  endif()
  # --top 1: one entry and the others, in text and json
  run_report(text --by ${by} --top 1 ${with})
  if(NOT text MATCHES "samples by ${by} \\(${samples} samples\\)")
    message(FATAL_ERROR "--by ${by}: text heading missing:\n${text}")
  endif()
  if(NOT text MATCHES "\\.\\.\\.others\\.\\.\\.")
    message(FATAL_ERROR "--by ${by} --top 1: no '...others...' line:\n${text}")
  endif()
  run_report(j --by ${by} --top 1 --format json ${with})
  string(JSON n LENGTH "${j}" entries)
  string(JSON first GET "${j}" entries 0 samples)
  string(JSON rest GET "${j}" others samples)
  math(EXPR both "${first} + ${rest}")
  if(NOT n EQUAL 1 OR NOT both EQUAL samples)
    message(FATAL_ERROR "--by ${by} --top 1 json: ${n} entries, ${both} samples")
  endif()
endforeach()

run_report(mod --by module --format csv ${with})
foreach(key "/opt/simvm/lib/simvm" "\\[generated code: machine code zone\\]" "\\[unknown\\]")
  if(NOT mod MATCHES "(^|\n)${key},[0-9]+\n")
    message(FATAL_ERROR "--by module: no row ${key}:\n${mod}")
  endif()
endforeach()

# text: the blame section with its total row; none without blame
run_report(text ${with})
if(NOT text MATCHES "time blamed on JIT units \\(samples not in generated code, by the JIT unit last exited; ${not_generated} samples")
  message(FATAL_ERROR "no blame section:\n${text}")
endif()
if(NOT text MATCHES "\n +100\\.00% +${not_generated} [0-9 ]+ total\n")
  message(FATAL_ERROR "blame section without its total row:\n${text}")
endif()
if(NOT text MATCHES "\\[no blame\\]")
  message(FATAL_ERROR "blame section without '[no blame]':\n${text}")
endif()
run_report(plain ${without})
if(plain MATCHES "blamed")
  message(FATAL_ERROR "a file without blame has a blame section")
endif()

execute_process(COMMAND ${VMP} report --by nothing ${with}
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "--by nothing: exit ${rc}, not 2")
endif()
