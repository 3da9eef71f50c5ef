# One stream, three files: a profile (vmp-simvm's, with code compactions,
# blame and machine frames; or INPUT), and the same records replayed through
# the writer with every lazy option off and on (vmp-replay).  The report,
# the folded stacks (with ranges and tiers) and the pprof profile of the two
# replays must be byte-identical, and the folded stacks of the recording
# too: keeping functions, symbols and code maps back (spec.md R-ID-2,
# R-RES-6, R-CODE-3) changes no sample's frames.
# Invoked as: cmake -DVMP=... -DREPLAY=... -DWORK_DIR=... (-DSIMVM=... | -DINPUT=...)
#             [-DREENCODE=vmp-reencode]
#             -P replay_lazy.cmake
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/orig ${WORK_DIR}/full ${WORK_DIR}/lazy)
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${ARGV} failed (${rc}): ${out}${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
endfunction()
if(INPUT)
  run(${CMAKE_COMMAND} -E copy ${INPUT} ${WORK_DIR}/orig/p.vmp)
else()
  run(${SIMVM} --seed 7 --samples 20000 --compactions 40 --zone-size 32768 --stacks 400
      --blame -o ${WORK_DIR}/orig/p.vmp)
endif()
run(${REPLAY} ${WORK_DIR}/orig/p.vmp ${WORK_DIR}/full/p.vmp)
run(${REPLAY} ${WORK_DIR}/orig/p.vmp ${WORK_DIR}/lazy/p.vmp --lazy)
run(${VMP} validate ${WORK_DIR}/lazy/p.vmp)
# the writer's own encoders (hot path and all) give the bytes of the
# registry's generic encoder, record by record, CODE_MAP included
if(REENCODE)
  run(${REENCODE} ${WORK_DIR}/orig/p.vmp ${WORK_DIR}/full/p.vmp ${WORK_DIR}/lazy/p.vmp)
  if(NOT run_out MATCHES "CODE_MAP +[1-9]")
    message(FATAL_ERROR "vmp-reencode compared no CODE_MAP: ${run_out}")
  endif()
endif()
foreach(kind orig full lazy)
  set(d ${WORK_DIR}/${kind})
  file(SIZE ${d}/p.vmp size_${kind})
  foreach(cmd "report;p.vmp;-o;report.txt" "flame;--ranges;--tiers;p.vmp;-o;folded.txt"
              "pprof;p.vmp;-o;p.pb.gz")
    execute_process(COMMAND ${VMP} ${cmd} WORKING_DIRECTORY ${d} RESULT_VARIABLE rc
                    ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "vmp ${cmd} in ${d} failed: ${err}")
    endif()
  endforeach()
endforeach()
# the recording itself: its folded stacks (its report and pprof carry its
# wall-clock start, which a replay with its replayed clock has not)
foreach(pair "lazy;report.txt" "lazy;folded.txt" "lazy;p.pb.gz" "orig;folded.txt")
  list(GET pair 0 kind)
  list(GET pair 1 out)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK_DIR}/full/${out}
                          ${WORK_DIR}/${kind}/${out} RESULT_VARIABLE diff)
  if(NOT diff EQUAL 0)
    # the first lines that differ, so that a failure on a machine whose
    # recording is gone still says what resolved differently
    set(lines "")
    if(out MATCHES "[.]txt$")
      execute_process(COMMAND diff ${WORK_DIR}/full/${out} ${WORK_DIR}/${kind}/${out}
                      OUTPUT_VARIABLE lines ERROR_QUIET)
      string(SUBSTRING "${lines}" 0 3000 lines)
    endif()
    message(FATAL_ERROR "${out} differs between the full replay and ${kind}: "
                        "${WORK_DIR}/full/${out} ${WORK_DIR}/${kind}/${out}\n${lines}")
  endif()
endforeach()
# filter and merge pass the CODE_MAP records on (merge renumbering them)
file(MAKE_DIRECTORY ${WORK_DIR}/filtered ${WORK_DIR}/merged)
run(${VMP} filter ${WORK_DIR}/lazy/p.vmp -o ${WORK_DIR}/filtered/p.vmp)
run(${VMP} merge ${WORK_DIR}/lazy/p.vmp -o ${WORK_DIR}/merged/p.vmp)
foreach(kind filtered merged)
  run(${VMP} validate ${WORK_DIR}/${kind}/p.vmp)
  run(${VMP} flame --ranges --tiers ${WORK_DIR}/${kind}/p.vmp -o ${WORK_DIR}/${kind}/folded.txt)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK_DIR}/full/folded.txt
                          ${WORK_DIR}/${kind}/folded.txt RESULT_VARIABLE diff)
  if(NOT diff EQUAL 0)
    message(FATAL_ERROR "folded.txt differs between the full replay and the lazy one ${kind}: "
                        "${WORK_DIR}/full/folded.txt ${WORK_DIR}/${kind}/folded.txt")
  endif()
endforeach()
run(${VMP} decode ${WORK_DIR}/lazy/p.vmp)
string(REGEX MATCHALL "CODE_MAP" maps "${run_out}")
string(REGEX MATCHALL "CODE_OBJECT" objects "${run_out}")
list(LENGTH maps n_maps)
list(LENGTH objects n_objects)
message(STATUS "same report, folded stacks and pprof; file bytes: recorded ${size_orig}, "
               "full replay ${size_full}, lazy replay ${size_lazy}; "
               "${n_maps} CODE_MAP records for ${n_objects} code objects")
