# Golden output of `vmp report` for a small fixed simulated-VM run.
# Invoked as: cmake -DSIMVM=... -DVMP=... -DGOLDEN_DIR=... -DWORK_DIR=... -P golden_report.cmake
# Set -DUPDATE=1 to rewrite the golden files.
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${SIMVM} --seed 11 --samples 600 --compactions 3 --zone-size 32768
                        -o golden.vmp
                WORKING_DIRECTORY ${WORK_DIR} RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "vmp-simvm failed: ${rc}")
endif()
foreach(case "text;--top;12" "csv;--format;csv" "json;--format;json;--top;5;--min-percent;1")
  list(GET case 0 name)
  list(SUBLIST case 1 -1 args)
  execute_process(COMMAND ${VMP} report ${args} golden.vmp
                  WORKING_DIRECTORY ${WORK_DIR} RESULT_VARIABLE rc
                  OUTPUT_FILE ${WORK_DIR}/report.${name})
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "vmp report ${args} failed: ${rc}")
  endif()
  if(UPDATE)
    configure_file(${WORK_DIR}/report.${name} ${GOLDEN_DIR}/report-seed11.${name} COPYONLY)
  else()
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK_DIR}/report.${name}
                            ${GOLDEN_DIR}/report-seed11.${name} RESULT_VARIABLE diff)
    if(NOT diff EQUAL 0)
      message(FATAL_ERROR "vmp report ${args}: output differs from ${GOLDEN_DIR}/report-seed11.${name} (see ${WORK_DIR}/report.${name})")
    endif()
  endif()
endforeach()
