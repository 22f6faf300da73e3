# include()d by the grcc tests.

# compile_grc(GRC OUT): grcc compiles GRC into the folder OUT (emptied first);
# fails unless it wrote OUT/<name>.py.
function(compile_grc grc out)
    file(REMOVE_RECURSE ${out})
    file(MAKE_DIRECTORY ${out})
    execute_process(COMMAND ${GRCC} -o ${out} ${grc} RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE err)
    message("grcc ${grc}: exit code ${rc}\n${text}${err}")
    get_filename_component(name ${grc} NAME_WE)
    if(NOT rc EQUAL 0 OR NOT EXISTS ${out}/${name}.py)
        message(FATAL_ERROR "grcc failed on ${grc}")
    endif()
endfunction()

# same_as_committed(GENERATED COMMITTED) fails unless grcc's fresh output equals
# the committed example .py, up to the order of the self.connect(...) lines
# (grcc writes them in no fixed order).
function(same_as_committed generated committed)
    execute_process(COMMAND ${PYTHON} -c
"import sys
a, b = [open(p).read().splitlines() for p in sys.argv[1:3]]
key = lambda L: ([l for l in L if 'self.connect(' not in l], sorted(l for l in L if 'self.connect(' in l))
sys.exit(0 if key(a) == key(b) else 1)" ${generated} ${committed} RESULT_VARIABLE same)
    if(NOT same EQUAL 0)
        message(FATAL_ERROR "${committed} is not grcc's output for its .grc: regenerate it "
                            "(grcc -o examples examples/<name>.grc)")
    endif()
endfunction()
