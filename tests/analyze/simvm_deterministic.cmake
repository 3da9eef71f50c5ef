# The simulated VM is a function of its arguments: two runs with one seed give
# byte-identical profiles and truths (what makes golden outputs possible), with
# random stacks and with repeating call paths (--stacks).
# Invoked as: cmake -DSIMVM=... -DWORK_DIR=... -P simvm_deterministic.cmake
file(MAKE_DIRECTORY ${WORK_DIR})
foreach(mode random paths)
  if(mode STREQUAL "paths")
    set(extra --stacks 400)
  else()
    set(extra)
  endif()
  foreach(run a b)
    execute_process(COMMAND ${SIMVM} --seed 5 --samples 5000 --compactions 20 --zone-size 32768
                            ${extra} -o det-${mode}-${run}.vmp --truth det-${mode}-${run}.tsv
                    WORKING_DIRECTORY ${WORK_DIR} RESULT_VARIABLE rc ERROR_QUIET)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "vmp-simvm ${extra} failed: ${rc}")
    endif()
  endforeach()
  foreach(ext vmp tsv)
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK_DIR}/det-${mode}-a.${ext}
                            ${WORK_DIR}/det-${mode}-b.${ext} RESULT_VARIABLE diff)
    if(NOT diff EQUAL 0)
      message(FATAL_ERROR "two runs with the same seed differ: det-${mode}-a.${ext} det-${mode}-b.${ext}")
    endif()
  endforeach()
endforeach()
