# cmake -P: compiles GRC_FILE with GRCC into OUT, then runs the generated flowgraph
# with PYTHON and checks that it reports no bit error at high SNR.
cmake_minimum_required(VERSION 3.18)

include(${CMAKE_CURRENT_LIST_DIR}/grcc_helpers.cmake)
compile_grc(${GRC_FILE} ${OUT})
get_filename_component(name ${GRC_FILE} NAME_WE)

execute_process(COMMAND ${PYTHON} ${OUT}/${name}.py --snr-db 40 --problems 500
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
message("${name}.py: exit code ${rc}\n${out}${err}")
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the generated flowgraph failed")
endif()
if(NOT out MATCHES "mimo_gpu_loopback: 0 errors in 8000 bits, BER 0")
    message(FATAL_ERROR "the generated flowgraph did not report 0 errors in 8000 bits")
endif()
