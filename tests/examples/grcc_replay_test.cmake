# cmake -P: compiles the replay example (GRC_FILE, a Qt GUI flowgraph) with GRCC
# into OUT and runs it headless (QT_QPA_PLATFORM=offscreen, set by the test) on
# RECORDING, once, closing when it has played; every transport block of the
# recording must pass its CRC (EXPECT: the link monitor's summary).
cmake_minimum_required(VERSION 3.18)

include(${CMAKE_CURRENT_LIST_DIR}/grcc_helpers.cmake)
compile_grc(${GRC_FILE} ${OUT})
get_filename_component(name ${GRC_FILE} NAME_WE)
get_filename_component(dir ${GRC_FILE} DIRECTORY)
same_as_committed(${OUT}/${name}.py ${dir}/${name}.py)
execute_process(COMMAND ${PYTHON} ${OUT}/${name}.py --recording ${RECORDING} --repeat 0 --exit-when-done 1
                        --backend ${BACKEND}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
message("${name}.py: exit code ${rc}\n${out}${err}")
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the replay flowgraph failed or did not close")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
    message(FATAL_ERROR "the replay flowgraph did not report '${EXPECT}'")
endif()
