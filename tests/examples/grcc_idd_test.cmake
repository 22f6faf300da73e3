# cmake -P: compiles the iterative-receiver example (GRC_FILE) with GRCC into OUT,
# checks it against the committed .py, and runs it twice: at 12 dB every block
# decodes in one pass; at 5 dB one pass fails blocks that three passes recover
# (the printed CRC failures fall, the passes a block rise above 1).
cmake_minimum_required(VERSION 3.18)

include(${CMAKE_CURRENT_LIST_DIR}/grcc_helpers.cmake)
compile_grc(${GRC_FILE} ${OUT})
get_filename_component(name ${GRC_FILE} NAME_WE)
get_filename_component(dir ${GRC_FILE} DIRECTORY)
same_as_committed(${OUT}/${name}.py ${dir}/${name}.py)

function(run_example snr outer blocks result)
    execute_process(COMMAND ${PYTHON} ${OUT}/${name}.py --snr-db ${snr} --outer ${outer}
                            --blocks ${blocks}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
    message("${name}.py --snr-db ${snr} --outer ${outer}: exit code ${rc}\n${out}${err}")
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "the generated flowgraph failed")
    endif()
    set(${result} "${out}" PARENT_SCOPE)
endfunction()

run_example(12 3 20 clean)
if(NOT clean MATCHES "idd_loopback: 20 blocks, 0 CRC failures, 0 block errors, 1.00 passes a block")
    message(FATAL_ERROR "at 12 dB every block must decode in one pass")
endif()
run_example(5 1 40 one)
run_example(5 3 40 three)
string(REGEX MATCH "([0-9]+) CRC failures" _ "${one}")
set(fail_one ${CMAKE_MATCH_1})
string(REGEX MATCH "([0-9]+) CRC failures" _ "${three}")
set(fail_three ${CMAKE_MATCH_1})
if(NOT fail_three LESS fail_one OR NOT three MATCHES "passes a block" OR three MATCHES "1.00 passes")
    message(FATAL_ERROR "3 passes must fail fewer blocks than 1 (${fail_three} vs ${fail_one}) "
                        "and take more than one pass a block")
endif()
