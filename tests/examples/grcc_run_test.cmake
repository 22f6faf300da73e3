# cmake -P: compiles an example (GRC_FILE) with GRCC into OUT, checks that the
# committed .py is grcc's output, runs it with ARGS (a ;-list; a Qt GUI example
# headless, with QT_QPA_PLATFORM=offscreen set by the test, and an argument that
# closes it when its stream ends) and requires EXPECT in what it prints.
cmake_minimum_required(VERSION 3.18)

include(${CMAKE_CURRENT_LIST_DIR}/grcc_helpers.cmake)
compile_grc(${GRC_FILE} ${OUT})
get_filename_component(name ${GRC_FILE} NAME_WE)
get_filename_component(dir ${GRC_FILE} DIRECTORY)
same_as_committed(${OUT}/${name}.py ${dir}/${name}.py)
execute_process(COMMAND ${PYTHON} ${OUT}/${name}.py ${ARGS}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 200)
message("${name}.py: exit code ${rc}\n${out}${err}")
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the flowgraph failed or did not end")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
    message(FATAL_ERROR "the flowgraph did not report '${EXPECT}'")
endif()
