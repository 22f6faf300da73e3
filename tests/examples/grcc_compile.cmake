# cmake -P: compiles each GRC file of GRC_FILES (;-separated) with GRCC into OUT,
# without running it (the USRP examples need a radio). Exit code 77 (skipped)
# when GNU Radio's UHD blocks are not installed: gr-uhd is needed by these
# examples only, never to build the module.
cmake_minimum_required(VERSION 3.18)
include(${CMAKE_CURRENT_LIST_DIR}/grcc_helpers.cmake)

if(NOT EXISTS ${UHD_BLOCK})
    message("skipped: ${UHD_BLOCK} not found (gr-uhd's GRC blocks are not installed)")
    cmake_language(EXIT 77)
endif()
foreach(grc ${GRC_FILES})
    get_filename_component(name ${grc} NAME_WE)
    compile_grc(${grc} ${OUT}/${name})
    # the generated flowgraph must at least be valid Python that names our blocks
    file(READ ${OUT}/${name}/${name}.py text)
    if(NOT text MATCHES "mimo_gpu\\.ofdm_(rx|tx)\\(")
        message(FATAL_ERROR "${name}.py does not make the OFDM block")
    endif()
    execute_process(COMMAND ${PYTHON} -c "import ast,sys; ast.parse(open(sys.argv[1]).read())" ${OUT}/${name}/${name}.py
                    RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${name}.py is not valid Python")
    endif()
    get_filename_component(dir ${grc} DIRECTORY)
    same_as_committed(${OUT}/${name}/${name}.py ${dir}/${name}.py)
endforeach()
