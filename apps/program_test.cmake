# ctest driver for the programs in apps/ (cmake -P): runs one CASE and checks its
# exit code and output. Variables: CASE, WORK (scratch folder), DETECT
# (mimo_gpu_detect_file), GENERATE (mimo_gpu_channel_file), SIMULATE, PLOT, PYTHON,
# OFDM_FILE (mimo_gpu_ofdm_file), DATA (tests/data).
cmake_minimum_required(VERSION 3.18)

set(dir ${WORK}/${CASE})
file(REMOVE_RECURSE ${dir})
file(MAKE_DIRECTORY ${dir})

# expect(RC REGEX cmd args...): runs the command; fails unless its exit code is RC
# and its stdout+stderr match REGEX.
function(expect rc regex)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE got OUTPUT_VARIABLE out ERROR_VARIABLE err)
    string(REPLACE ";" " " shown "${ARGN}")
    message("$ ${shown}\n${out}${err}exit code ${got}")
    if(NOT "${got}" STREQUAL "${rc}")
        message(FATAL_ERROR "expected exit code ${rc}, got ${got}")
    endif()
    if(NOT "${out}${err}" MATCHES "${regex}")
        message(FATAL_ERROR "output does not match '${regex}'")
    endif()
endfunction()

# generate(NAME PROBLEMS args...): a simulated recording NAME.H/.y/.bits in ${dir}.
function(generate name problems)
    expect(0 "wrote" ${GENERATE} --H ${dir}/${name}.H --y ${dir}/${name}.y --bits ${dir}/${name}.bits
           --problems ${problems} ${ARGN})
endfunction()

function(expect_file_size path bytes)
    file(SIZE ${path} size)
    if(NOT size EQUAL bytes)
        message(FATAL_ERROR "${path}: ${size} bytes, expected ${bytes}")
    endif()
endfunction()

set(shape --nr 2 --nt 2 --modulation qpsk)

if(CASE STREQUAL "ofdm_record_and_decode")
    # A recording made by the transmitter and channel, decoded from the file as live.
    expect(0 "live: 3 frames found, 3 CRC ok, 0 bit errors" ${OFDM_FILE} --record ${dir}/rec --frames 3
           --nt 2 --format ci16 --backend cpu)
    expect(0 "3 frames found, 3 CRC ok.*3 of 3 blocks decoded, 0 bit errors" ${OFDM_FILE} --decode ${dir}/rec
           --expect ${dir}/rec.bits --bits-out ${dir}/decoded.bits --backend cpu)
    expect_file_size(${dir}/decoded.bits 10296) # 3 blocks of A = 3432
    expect(0 "4 frames found, 4 CRC ok.*against.*4 of 4 blocks decoded, 0 bit errors" ${OFDM_FILE}
           --decode ${DATA}/ofdm_2x2_lte1.4_epa_25db.sigmf-meta --expect ${DATA}/ofdm_2x2_lte1.4_epa_25db.bits
           --backend cpu)
    return()
elseif(CASE STREQUAL "ofdm_bad_recordings")
    expect(0 "live" ${OFDM_FILE} --record ${dir}/rec --frames 2 --backend cpu)
    expect(1 "the recording .* has 2 channels, the receiver needs 4" ${OFDM_FILE} --decode ${dir}/rec --nr 4)
    file(READ ${dir}/rec.sigmf-data data HEX)
    string(SUBSTRING "${data}" 0 2002 cut) # 1001 bytes
    file(WRITE ${dir}/cut.sigmf-data "")
    execute_process(COMMAND head -c 1001 ${dir}/rec.sigmf-data OUTPUT_FILE ${dir}/cut.sigmf-data)
    file(COPY_FILE ${dir}/rec.sigmf-meta ${dir}/cut.sigmf-meta)
    expect(1 "cut.sigmf-data is truncated: 1001 bytes" ${OFDM_FILE} --decode ${dir}/cut)
    expect(1 "no meta file .*nothing.sigmf-meta" ${OFDM_FILE} --decode ${dir}/nothing)
    file(WRITE ${dir}/bad.sigmf-meta "{\"global\": {\"core:datatype\": \"cf32_le\"")
    file(COPY_FILE ${dir}/rec.sigmf-data ${dir}/bad.sigmf-data)
    expect(1 "bad.sigmf-meta: malformed JSON: .* at byte" ${OFDM_FILE} --decode ${dir}/bad)
    file(READ ${dir}/rec.sigmf-meta meta)
    string(REPLACE "\"mimo_gpu:fft_size\": 128" "\"mimo_gpu:fft_size\": 64" meta "${meta}")
    file(WRITE ${dir}/fft.sigmf-meta "${meta}")
    file(COPY_FILE ${dir}/rec.sigmf-data ${dir}/fft.sigmf-data)
    expect(1 "do not fit an FFT of 64" ${OFDM_FILE} --decode ${dir}/fft)
    # Noise alone: no preamble, nothing decoded, exit code 1.
    expect(0 "live: 0 frames found" ${OFDM_FILE} --record ${dir}/noise --frames 2 --snr -40 --backend cpu)
    expect(1 "no frame found in .*nothing decoded" ${OFDM_FILE} --decode ${dir}/noise --backend cpu)
    expect(2 "give exactly one of --record BASE and --decode PATH" ${OFDM_FILE})
    # Outputs that are inputs are refused, and a failed run leaves --bits-out as it was (issue 23).
    file(SIZE ${dir}/rec.sigmf-data data_size)
    expect(1 "--bits-out '${dir}/rec.sigmf-data' is the same file as the recording's data file .*would destroy the input"
           ${OFDM_FILE} --decode ${dir}/rec --bits-out ${dir}/rec.sigmf-data --backend cpu)
    expect(1 "the recording's meta file .*would destroy the input" ${OFDM_FILE} --decode ${dir}/rec --bits-out ${dir}/rec.sigmf-meta)
    expect_file_size(${dir}/rec.sigmf-data ${data_size})
    file(WRITE ${dir}/kept.bits "previous")
    expect(1 "no frame found" ${OFDM_FILE} --decode ${dir}/noise --bits-out ${dir}/kept.bits --backend cpu)
    expect_file_size(${dir}/kept.bits 8)
    # A FIFO as meta or data file is refused at once (it would block forever).
    execute_process(COMMAND mkfifo ${dir}/pipe.sigmf-meta)
    file(COPY_FILE ${dir}/rec.sigmf-data ${dir}/pipe.sigmf-data)
    expect(1 "pipe.sigmf-meta is not a regular file" ${OFDM_FILE} --decode ${dir}/pipe)
    # --expect: a file that is not whole blocks, and one with fewer blocks than decoded.
    execute_process(COMMAND head -c 5000 ${dir}/rec.bits OUTPUT_FILE ${dir}/cut.bits)
    expect(1 "expected-bits file .* not a whole number of 3432-byte items"
           ${OFDM_FILE} --decode ${dir}/rec --expect ${dir}/cut.bits --backend cpu)
    execute_process(COMMAND head -c 3432 ${dir}/rec.bits OUTPUT_FILE ${dir}/one.bits)
    expect(1 "2 blocks decoded but the file holds 1" ${OFDM_FILE} --decode ${dir}/rec --expect ${dir}/one.bits
           --backend cpu)
    # A sample rate that is no rate.
    file(READ ${dir}/rec.sigmf-meta meta)
    string(REGEX REPLACE "\"core:sample_rate\": [0-9.e+]+" "\"core:sample_rate\": 1e-300" meta "${meta}")
    file(WRITE ${dir}/slow.sigmf-meta "${meta}")
    file(COPY_FILE ${dir}/rec.sigmf-data ${dir}/slow.sigmf-data)
    expect(1 "core:sample_rate must be finite and at least 1 Hz, got 1e-300" ${OFDM_FILE} --decode ${dir}/slow)
    return()
endif()

if(CASE STREQUAL "help")
    expect(0 "complex64.*float32.*positive means bit 0" ${DETECT} --help)
elseif(CASE STREQUAL "bad_option")
    expect(2 "unknown option --frobnicate" ${DETECT} --frobnicate)
    expect(2 "--nr NR is required" ${DETECT} --nt 2)
    generate(rec 10 ${shape})
    expect(2 "invalid|unknown|modulation" ${DETECT} --nr 2 --nt 2 --modulation 8psk --snr 10
           --H ${dir}/rec.H --y ${dir}/rec.y --out ${dir}/llr)
    expect(2 "exactly one of --noise-var" ${DETECT} ${shape} --H ${dir}/rec.H --y ${dir}/rec.y --out ${dir}/llr)
    expect(2 "passes.*1\\.\\.nt" ${DETECT} ${shape} --detector nway:3 --snr 10 --H ${dir}/rec.H --y ${dir}/rec.y
           --out ${dir}/llr)
    expect(2 "unknown detector 'sphere' \\(registered: [a-z_]+(, [a-z_]+)+\\)" ${DETECT} ${shape} --detector sphere
           --snr 10 --H ${dir}/rec.H --y ${dir}/rec.y --out ${dir}/llr)
    expect(2 "detector 'ml' has no parameter 'passes'" ${DETECT} ${shape} --detector ml:passes=2
           --snr 10 --H ${dir}/rec.H --y ${dir}/rec.y --out ${dir}/llr)
    expect(2 "noise variance N0 must be finite and > 0" ${DETECT} ${shape} --noise-var 1e-50
           --H ${dir}/rec.H --y ${dir}/rec.y --out ${dir}/llr)
elseif(CASE STREQUAL "missing")
    expect(1 "cannot open H file '${dir}/nothing.H': no such file" ${DETECT} ${shape} --snr 10
           --H ${dir}/nothing.H --y ${dir}/nothing.y --out ${dir}/llr)
elseif(CASE STREQUAL "truncated")
    generate(rec 10 ${shape})
    # 2x2 H items are 32 bytes: 33 bytes is one item and one byte over.
    file(WRITE ${dir}/short.H "0123456789abcdef0123456789abcdef!")
    expect(1 "H file '${dir}/short.H' has 33 bytes, not a whole number of 32-byte items \\(1 items and 1 bytes over\\)"
           ${DETECT} ${shape} --snr 10 --H ${dir}/short.H --y ${dir}/rec.y --out ${dir}/llr)
    # A 2x2 recording read as 3x3 (72-byte H items): 320 bytes.
    expect(1 "H file '${dir}/rec.H' has 320 bytes, not a whole number of 72-byte items"
           ${DETECT} --nr 3 --nt 3 --modulation qpsk --snr 10 --H ${dir}/rec.H --y ${dir}/rec.y --out ${dir}/llr)
elseif(CASE STREQUAL "mismatch")
    generate(a 10 ${shape})
    generate(b 12 ${shape})
    expect(1 "item counts differ: H file '${dir}/a.H' \\(320 bytes, 10 items of 32 bytes\\) but y file '${dir}/b.y' \\(192 bytes, 12 items of 16 bytes\\)"
           ${DETECT} ${shape} --snr 10 --H ${dir}/a.H --y ${dir}/b.y --out ${dir}/llr)
elseif(CASE STREQUAL "bits_mismatch")
    generate(a 10 ${shape})
    generate(b 12 ${shape})
    expect(1 "item counts differ: .*bits file '${dir}/b.bits'"
           ${DETECT} ${shape} --snr 10 --H ${dir}/a.H --y ${dir}/a.y --bits ${dir}/b.bits --out ${dir}/llr)
elseif(CASE STREQUAL "unwritable")
    generate(rec 10 ${shape})
    expect(1 "cannot write LLR output file '${dir}/no/such/folder/llr'"
           ${DETECT} ${shape} --snr 10 --H ${dir}/rec.H --y ${dir}/rec.y --out ${dir}/no/such/folder/llr)
elseif(CASE STREQUAL "out_is_input")
    # --out naming an input (directly or through a link) is refused before anything is written.
    generate(rec 10 ${shape})
    expect(1 "LLR output file '${dir}/rec.H' is the same file as the H file"
           ${DETECT} ${shape} --snr 10 --H ${dir}/rec.H --y ${dir}/rec.y --out ${dir}/rec.H)
    expect_file_size(${dir}/rec.H 320)
    file(CREATE_LINK ${dir}/rec.y ${dir}/link.y SYMBOLIC)
    expect(1 "is the same file as the y file"
           ${DETECT} ${shape} --snr 10 --H ${dir}/rec.H --y ${dir}/rec.y --out ${dir}/link.y)
    expect_file_size(${dir}/rec.y 160)
elseif(CASE STREQUAL "fifo")
    # A FIFO as input is refused at once (opening it would wait for a writer forever).
    generate(rec 10 ${shape})
    execute_process(COMMAND mkfifo ${dir}/fifo.H RESULT_VARIABLE made)
    if(NOT made EQUAL 0)
        message(FATAL_ERROR "mkfifo failed")
    endif()
    expect(1 "cannot read H file '${dir}/fifo.H': not a regular file"
           ${DETECT} ${shape} --snr 10 --H ${dir}/fifo.H --y ${dir}/rec.y --out ${dir}/llr)
elseif(CASE STREQUAL "special_outputs")
    # --out a FIFO or a device: written in place, never renamed over (issue 23).
    generate(rec 10 ${shape})
    expect(0 "" ${DETECT} ${shape} --snr 10 --H ${dir}/rec.H --y ${dir}/rec.y --out /dev/null)
    execute_process(COMMAND test -c /dev/null RESULT_VARIABLE still_device)
    if(NOT still_device EQUAL 0)
        message(FATAL_ERROR "/dev/null is no longer a character device")
    endif()
    execute_process(COMMAND mkfifo ${dir}/llr.fifo)
    # The reader (cat) and the writer run at once; cat's copy must hold every LLR.
    string(REPLACE ";" " " shape_text "${shape}")
    execute_process(COMMAND sh -c "cat '${dir}/llr.fifo' > '${dir}/through_fifo.f32' & '${DETECT}' ${shape_text} --snr 10 --H '${dir}/rec.H' --y '${dir}/rec.y' --out '${dir}/llr.fifo' && wait $!"
                    RESULT_VARIABLE code)
    if(NOT code EQUAL 0)
        message(FATAL_ERROR "writing to a FIFO: exit code ${code}")
    endif()
    expect_file_size(${dir}/through_fifo.f32 160) # 10 problems x 4 LLRs x 4 bytes
    execute_process(COMMAND test -p ${dir}/llr.fifo RESULT_VARIABLE still_fifo)
    if(NOT still_fifo EQUAL 0)
        message(FATAL_ERROR "the FIFO was replaced")
    endif()
elseif(CASE STREQUAL "no_half_output")
    # With --policy stop, an all-zero (singular) H in the second batch: the run fails naming
    # the batch's place in the files, and leaves neither a new LLR file nor a changed old one.
    generate(rec 10 ${shape})
    execute_process(COMMAND head -c 160 ${dir}/rec.H OUTPUT_FILE ${dir}/good.H)
    execute_process(COMMAND head -c 160 /dev/zero OUTPUT_FILE ${dir}/zero.H)
    execute_process(COMMAND cat ${dir}/good.H ${dir}/zero.H OUTPUT_FILE ${dir}/bad.H)
    expect(1 "in the batch of H items 5\\.\\.9 \\(y items 5\\.\\.9\\): .*problem 0 of the batch has a rank-deficient.*no LLR file was written"
           ${DETECT} ${shape} --snr 10 --batch 5 --policy stop --H ${dir}/bad.H --y ${dir}/rec.y --out ${dir}/new.f32)
    if(EXISTS ${dir}/new.f32)
        message(FATAL_ERROR "a failed run left ${dir}/new.f32")
    endif()
    file(WRITE ${dir}/old.f32 "previous results")
    expect(1 "singular" ${DETECT} ${shape} --snr 10 --batch 5 --policy stop --H ${dir}/bad.H --y ${dir}/rec.y
           --out ${dir}/old.f32)
    file(READ ${dir}/old.f32 old)
    if(NOT old STREQUAL "previous results")
        message(FATAL_ERROR "a failed run changed ${dir}/old.f32")
    endif()
    file(GLOB leftovers ${dir}/*.partial-*)
    if(leftovers)
        message(FATAL_ERROR "temporary files left: ${leftovers}")
    endif()
elseif(CASE STREQUAL "erasures")
    # The default policy erases bad problems and goes on: 10 problems, H items 5..9 all
    # zero and a NaN in y item 2 (S = 1), in batches of 4; every LLR is written, those of
    # the bad problems 0, and the count and places in the files are printed.
    generate(rec 10 ${shape} --snr 30)
    execute_process(COMMAND head -c 160 ${dir}/rec.H OUTPUT_FILE ${dir}/good.H)
    execute_process(COMMAND head -c 160 /dev/zero OUTPUT_FILE ${dir}/zero.H)
    execute_process(COMMAND cat ${dir}/good.H ${dir}/zero.H OUTPUT_FILE ${dir}/bad.H)
    execute_process(COMMAND head -c 32 ${dir}/rec.y OUTPUT_FILE ${dir}/y0)
    execute_process(COMMAND tail -c +41 ${dir}/rec.y OUTPUT_FILE ${dir}/y1)
    file(WRITE ${dir}/nan "")
    execute_process(COMMAND printf "\\000\\000\\300\\177\\000\\000\\000\\000" OUTPUT_FILE ${dir}/nan)
    execute_process(COMMAND cat ${dir}/y0 ${dir}/nan ${dir}/y1 OUTPUT_FILE ${dir}/bad.y)
    expect_file_size(${dir}/bad.y 160)
    expect(0 "problems: 10.*erased: 6 problem\\(s\\).*y item 2 \\(H item 2\\): non_finite_input.*y item 5 \\(H item 5\\): singular_channel.*y item 9 \\(H item 9\\): singular_channel"
           ${DETECT} ${shape} --detector ml --snr 30 --batch 4 --H ${dir}/bad.H --y ${dir}/bad.y --out ${dir}/llr.f32)
    expect_file_size(${dir}/llr.f32 160)
elseif(CASE STREQUAL "large_batch_small_file")
    # Buffers follow what the files hold: a --batch of 16 M problems of 8x8 1024-QAM
    # (about 9 GB of buffers) on a 10-problem recording.
    set(shape8 --nr 8 --nt 8 --modulation 1024qam)
    generate(rec 10 ${shape8} --snr 60)
    expect(0 "problems: 10.*bit errors: 0 of 800 "
           ${DETECT} ${shape8} --detector nway:1 --snr 60 --batch 16000000 --H ${dir}/rec.H
           --y ${dir}/rec.y --bits ${dir}/rec.bits --out ${dir}/llr.f32)
elseif(CASE STREQUAL "roundtrip_nway")
    # 4x4 16-QAM at 40 dB: N = 4 decides every bit right. 1001 problems with
    # batches of 100: the last batch is short.
    set(shape4 --nr 4 --nt 4 --modulation 16qam)
    generate(rec 1001 ${shape4} --snr 40 --seed 7)
    expect(0 "problems: 1001.*bit errors: 0 of 16016 "
           ${DETECT} ${shape4} --detector nway:4 --snr 40 --batch 100 --H ${dir}/rec.H --y ${dir}/rec.y
           --bits ${dir}/rec.bits --out ${dir}/llr.f32)
    expect_file_size(${dir}/llr.f32 64064) # 1001 * 16 LLRs * 4 bytes
    # N = 1 at 10 dB makes errors: the BER check is not vacuous.
    generate(noisy 1000 ${shape4} --snr 10 --seed 7)
    expect(0 "bit errors: [1-9][0-9]* of 16000 "
           ${DETECT} ${shape4} --detector nway:1 --snr 10 --H ${dir}/noisy.H --y ${dir}/noisy.y
           --bits ${dir}/noisy.bits --out ${dir}/noisy.f32)
elseif(CASE STREQUAL "roundtrip_ml")
    set(shape3 --nr 3 --nt 2 --modulation 16qam)
    generate(rec 500 ${shape3} --snr 40 --seed 3)
    expect(0 "detector ml.*bit errors: 0 of 4000 "
           ${DETECT} ${shape3} --detector ml --noise-var 1e-4 --batch 64 --H ${dir}/rec.H --y ${dir}/rec.y
           --bits ${dir}/rec.bits --out ${dir}/llr.f32)
    expect_file_size(${dir}/llr.f32 16000) # 500 * 8 LLRs * 4 bytes
elseif(CASE STREQUAL "roundtrip_mtt_shared_channels")
    # MTT from a recording; then S = 5 vectors per H item: 100 channels of y but 500 H items.
    set(shape2 --nr 2 --nt 2 --modulation 16qam)
    generate(rec 500 ${shape2} --snr 40 --seed 5)
    expect(0 "detector mtt.*S = 1.*bit errors: 0 of 4000 "
           ${DETECT} ${shape2} --detector mtt --noise-var 1e-4 --batch 64 --H ${dir}/rec.H --y ${dir}/rec.y
           --bits ${dir}/rec.bits --out ${dir}/llr.f32)
    expect(1 "item counts differ"
           ${DETECT} ${shape2} --detector mtt --noise-var 1e-4 --symbols-per-channel 5 --H ${dir}/rec.H
           --y ${dir}/rec.y --out ${dir}/llr3.f32)
elseif(CASE STREQUAL "roundtrip_mmse_shared_channels")
    # Massive MIMO from a recording with channel reuse: 32x8 16-QAM, S = 4 problems per
    # H item (100 H items, 400 y items), soft MMSE at 30 dB makes no error (nor does CG
    # with nt = 8 iterations, which solves the system); batches of 50 problems end
    # mid-channel, so they are rounded down to whole channels.
    set(shape32 --nr 32 --nt 8 --modulation 16qam)
    generate(rec 400 ${shape32} --snr 30 --seed 4 --symbols-per-channel 4)
    expect_file_size(${dir}/rec.H 204800) # 100 channels * 256 entries * 8 bytes
    expect_file_size(${dir}/rec.y 102400) # 400 * 32 * 8 bytes
    expect(0 "problems: 400.*bit errors: 0 of 12800 "
           ${DETECT} ${shape32} --detector mmse --snr 30 --symbols-per-channel 4 --batch 50
           --H ${dir}/rec.H --y ${dir}/rec.y --bits ${dir}/rec.bits --out ${dir}/llr.f32)
    expect(0 "problems: 400.*bit errors: 0 of 12800 "
           ${DETECT} ${shape32} --detector mmse_cg:8 --snr 30 --symbols-per-channel 4
           --H ${dir}/rec.H --y ${dir}/rec.y --bits ${dir}/rec.bits --out ${dir}/llr_cg.f32)
    expect(2 "--problems 401 is not a whole number of channels of --symbols-per-channel 4"
           ${GENERATE} ${shape32} --symbols-per-channel 4 --problems 401
           --H ${dir}/x.H --y ${dir}/x.y --bits ${dir}/x.bits)
elseif(CASE STREQUAL "simulate_help")
    expect(0 "mimo_channel.*--snr A:B:STEP" ${SIMULATE} --help)
elseif(CASE STREQUAL "simulate_bad_option")
    expect(2 "unknown option --snrr" ${SIMULATE} --snrr 3)
    expect(2 "--snr: expected START:STOP:STEP" ${SIMULATE} --snr 1:2)
    expect(2 "SNR 400.* outside single precision" ${SIMULATE} --snr 400:400:1)
    expect(2 "invalid|modulation" ${SIMULATE} --modulation 8psk)
elseif(CASE STREQUAL "idd")
    # K-best 16 with 1 and 2 outer iterations beside its one-shot self, 4x4 16-QAM:
    # one outer iteration is the one-shot receiver, block for block.
    execute_process(COMMAND ${IDD} --blocks 20 --batch 10 --snr 6 --outer 1,2
                            --one-shot kbest:16 --backend cpu
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    message("${out}${err}exit code ${rc}")
    string(REGEX MATCH "x1 BLER ([0-9.]+)" x1 "${out}")
    set(x1 ${CMAKE_MATCH_1})
    string(REGEX MATCH "one-shot BLER ([0-9.]+)" one "${out}")
    set(one ${CMAKE_MATCH_1})
    if(NOT rc EQUAL 0 OR "${x1}" STREQUAL "" OR NOT "${x1}" STREQUAL "${one}"
       OR NOT out MATCHES "kbest:16 x2 BLER [0-9.]+")
        message(FATAL_ERROR "one outer iteration (${x1}) is not the one-shot receiver (${one})")
    endif()
    expect(2 "detector 'nway' takes no a-priori LLRs" ${IDD} --detectors nway --blocks 2)
    expect(2 "is not a multiple of nt \\* Qm" ${IDD} --G 2050 --modulation qpsk --blocks 2)
elseif(CASE STREQUAL "simulate_bad_detectors")
    expect(2 "parameter 'passes' of detector 'nway' must be" ${SIMULATE} --detectors nway:1,nway:9)
    expect(2 "passes must be 1..nt" ${SIMULATE} --detectors nway:5)
    expect(2 "unknown detector 'sphere' \\(registered: [a-z_]+(, [a-z_]+)+\\)" ${SIMULATE} --detectors nway,sphere)
    expect(2 "candidate vectors, more than" ${SIMULATE} --modulation 256qam --detectors ml)
    expect(2 "detector 'mtt' does not take 256qam" ${SIMULATE} --modulation 256qam --detectors mtt)
elseif(CASE STREQUAL "simulate_massive_bad_detectors")
    # Small-MIMO families refuse a massive shape, naming the families that take it.
    expect(2 "detector 'nway' takes nr <= 8.*got nr=32, nt=8; the families that take 32x8 16qam: mmse, mmse_cg"
           ${SIMULATE} --nr 32 --nt 8 --detectors mmse,nway)
    expect(2 "--symbols-per-channel: 0 is outside" ${SIMULATE} --nr 32 --nt 8 --symbols-per-channel 0)
    expect(2 "parameter 'iterations' of detector 'mmse_cg' must be" ${SIMULATE} --nr 32 --nt 8
           --detectors mmse_cg:0)
elseif(CASE STREQUAL "simulate_massive")
    # Massive MIMO with channel reuse: 32x8 16-QAM, S = 4, no --detectors (the defaults for a
    # shape no small-MIMO family takes: mmse and mmse_cg:3). Uncoded: 1001 problems are
    # rounded up to 1004 (251 channels); at 30 dB mmse makes no error and mmse_cg:3 (not
    # converged: an error floor) fewer than 1 in 1000, at -10 dB both make errors.
    set(massive --nr 32 --nt 8 --modulation 16qam --symbols-per-channel 4 --max-batch 100)
    # (stdout, the table, comes before stderr in what expect() matches)
    expect(0 "30\\.00 +0\\.0000e\\+00 .*detectors mmse mmse_cg:3.*rounded up to whole channels of S = 4"
           ${SIMULATE} ${massive} --snr -10:30:40 --problems 1001 --json ${dir}/massive.json)
    file(READ ${dir}/massive.json json)
    string(JSON S GET "${json}" config symbols_per_channel)
    string(JSON problems GET "${json}" config problems_per_point)
    string(JSON detectors LENGTH "${json}" points 0 detectors)
    string(JSON first GET "${json}" points 0 detectors 0 name)
    string(JSON second GET "${json}" points 0 detectors 1 name)
    string(JSON low GET "${json}" points 0 detectors 1 errors)
    string(JSON high GET "${json}" points 1 detectors 1 errors)
    string(JSON bits GET "${json}" points 1 detectors 1 bits)
    if(NOT S EQUAL 4 OR NOT problems EQUAL 1004 OR NOT detectors EQUAL 2 OR NOT first STREQUAL "mmse"
       OR NOT second STREQUAL "mmse_cg:3" OR low EQUAL 0 OR high GREATER 32 OR NOT bits EQUAL 32128)
        message(FATAL_ERROR "unexpected JSON: S ${S}, ${problems} problems, ${detectors} detectors "
                            "(${first}, ${second}), ${low} errors at -10 dB, ${high} at 30 dB, ${bits} bits")
    endif()
    # Coded: nt = 8 > 4 layers, so every stream carries its own transport blocks (NL = 1):
    # A = 200 -> G = 448 (112 16-QAM symbols a block); 8 blocks side by side fill 112
    # vectors = 28 channels. --blocks 12 is rounded up to 16. At -16 dB blocks are lost,
    # at 10 dB none.
    expect(0 "Coded BER and BLER.*S = 4 problems per channel.*A = 200 -> G = 448 coded bits.*one block per stream.*10\\.00 +mmse +0\\.0000e\\+00 +0\\.0000e\\+00 +16 +0 .*--blocks 12 rounded up so that the blocks fill groups of NT = 8 blocks side by side and whole channels of S = 4 problems"
           ${SIMULATE} ${massive} --snr -16:10:26 --coded --tb-size 200 --code-rate 0.5 --blocks 12
           --detectors mmse,mmse_cg:2 --iterations 4 --json ${dir}/coded.json)
    file(READ ${dir}/coded.json json)
    string(JSON NL GET "${json}" coded NL)
    string(JSON blocks GET "${json}" coded blocks_per_point)
    string(JSON problems GET "${json}" config problems_per_point)
    foreach(d 0 1)
        string(JSON name GET "${json}" coded points 0 detectors ${d} name)
        string(JSON low GET "${json}" coded points 0 detectors ${d} block_errors)
        string(JSON high GET "${json}" coded points 1 detectors ${d} block_errors)
        string(JSON decoded GET "${json}" coded points 1 detectors ${d} blocks)
        if(low EQUAL 0 OR NOT high EQUAL 0 OR NOT decoded EQUAL 16)
            message(FATAL_ERROR "${name}: ${low} block errors at -16 dB (expected > 0), ${high} at 10 dB "
                                "(expected 0), ${decoded} blocks (expected 16)")
        endif()
    endforeach()
    if(NOT NL EQUAL 1 OR NOT blocks EQUAL 16 OR NOT problems EQUAL 224)
        message(FATAL_ERROR "unexpected coded JSON: NL ${NL}, ${blocks} blocks, ${problems} problems")
    endif()
elseif(CASE STREQUAL "simulate_run_and_plot")
    # 2x2 QPSK, every default detector (N-way N = 1, 2, MTT, OT, FSD, SFSD, K-best 16, ML), a noisy and a
    # clean point; 999 problems is no multiple of any batch. At 40 dB no detector may make an error.
    expect(0 "40\\.00 +0\\.0000e\\+00 +0\\.0000e\\+00 +0\\.0000e\\+00 +0\\.0000e\\+00 +0\\.0000e\\+00"
           ${SIMULATE} --nr 2 --nt 2 --modulation qpsk --snr 0:40:40 --problems 999 --max-batch 100
           --json ${dir}/ber.json)
    file(READ ${dir}/ber.json json)
    string(JSON nt GET "${json}" config nt)
    string(JSON points LENGTH "${json}" points)
    string(JSON detectors LENGTH "${json}" points 0 detectors)
    string(JSON bits GET "${json}" points 1 detectors 7 bits)
    string(JSON name GET "${json}" points 1 detectors 7 name)
    if(NOT nt EQUAL 2 OR NOT points EQUAL 2 OR NOT detectors EQUAL 8 OR NOT bits EQUAL 3996 OR NOT name STREQUAL "ml")
        message(FATAL_ERROR "unexpected JSON: nt ${nt}, ${points} points, ${detectors} detectors, ${bits} bits, ${name}")
    endif()
    separate_arguments(python UNIX_COMMAND "${PYTHON}")
    expect(0 "wrote" ${python} ${PLOT} ${dir}/ber.json -o ${dir}/ber.png)
    file(SIZE ${dir}/ber.png png_size)
    if(png_size LESS 1000)
        message(FATAL_ERROR "ber.png is only ${png_size} bytes")
    endif()
elseif(CASE STREQUAL "simulate_coded_bad_option")
    expect(2 "--code-rate must be between 0 and 1" ${SIMULATE} --coded --code-rate 1)
    expect(2 "--code-rate must be between 0 and 1" ${SIMULATE} --coded --code-rate -0.5)
    expect(2 "--algorithm must be max-log-map or log-map" ${SIMULATE} --coded --algorithm viterbi)
    expect(2 "--iterations: 0 is outside 1..32" ${SIMULATE} --coded --iterations 0)
    expect(2 "--tb-size: 0 is outside" ${SIMULATE} --coded --tb-size 0)
elseif(CASE STREQUAL "simulate_idd")
    # --coded --idd: each detector in an idd_receiver. 4x4 16-QAM, A = 400 -> G = 848
    # (53 vectors): at 2 dB blocks are lost, at 12 dB none (each in one pass).
    expect(0 "BER before decoding .*first pass.*Coded BER and BLER.*up to 3 detector-decoder passes.*12\\.00 +mmse +0\\.0000e\\+00 +0\\.0000e\\+00 +10 +0 +0 +0 +1\\.00"
           ${SIMULATE} --nr 4 --nt 4 --modulation 16qam --snr 2:12:10 --coded --tb-size 400
           --code-rate 0.5 --blocks 10 --detectors mmse,kbest:8 --idd 3 --backend cpu
           --json ${dir}/idd.json)
    file(READ ${dir}/idd.json json)
    string(JSON outer GET "${json}" coded idd_outer_iterations)
    string(JSON low GET "${json}" coded points 0 detectors 0 block_errors)
    string(JSON passes GET "${json}" coded points 0 detectors 0 mean_iterations)
    if(NOT outer EQUAL 3 OR low EQUAL 0 OR NOT passes GREATER 1)
        message(FATAL_ERROR "unexpected JSON: idd_outer_iterations ${outer}, ${low} block errors "
                            "at 2 dB, ${passes} passes a block there")
    endif()
    # nt = 8 > 4: the iterative receiver sends a block over all 8 streams (NL = 4).
    expect(0 "A = 200 -> G = 448 coded bits.*up to 2 detector-decoder passes.*20\\.00 +mmse +0\\.0000e\\+00 +0\\.0000e\\+00 +8 +0 "
           ${SIMULATE} --nr 8 --nt 8 --modulation qpsk --snr 20 --coded --tb-size 200
           --code-rate 0.5 --blocks 8 --detectors mmse --idd 2 --backend cpu)
    expect(2 "--idd: detector nway:1 takes no a-priori LLRs; families that do: .*mmse"
           ${SIMULATE} --coded --idd 2 --detectors nway:1,mmse)
    expect(2 "--idd: 0 is outside 1..16" ${SIMULATE} --coded --idd 0 --detectors mmse)
    expect(2 "--idd decodes max-log-MAP" ${SIMULATE} --coded --idd 2 --detectors mmse
           --algorithm log-map)
elseif(CASE STREQUAL "simulate_ldpc")
    # --coded --code ldpc: NR transport blocks (nr_tb_encoder / nr_tb_decoder). 2x2
    # 16-QAM, A = 1000 (CRC16, BG2) -> G = 2048: at 4 dB every block is lost, at 12 dB
    # none; the JSON names the code; bad combinations are refused.
    expect(0 "NR LDPC: A = 1000 -> G = 2048 coded bits.*BG2.*offset-min-sum, up to 10 iterations.*4\\.00 +mmse +[0-9.e+-]+ +1\\.0000e\\+00 +20 +20 +20 +0 .*12\\.00 +mmse +0\\.0000e\\+00 +0\\.0000e\\+00 +20 +0 +0 +0 .*LDPC decoder backend: cpu"
           ${SIMULATE} --nr 2 --nt 2 --modulation 16qam --snr 4:12:8 --coded --code ldpc
           --tb-size 1000 --blocks 20 --detectors mmse,kbest:8 --backend cpu --json ${dir}/ldpc.json)
    file(READ ${dir}/ldpc.json json)
    string(JSON code GET "${json}" coded code)
    if(NOT code STREQUAL "ldpc")
        message(FATAL_ERROR "unexpected JSON: code ${code}")
    endif()
    expect(2 "--code must be turbo or ldpc, got 'polar'" ${SIMULATE} --coded --code polar)
    # The iterative receiver with LDPC: 4x4 16-QAM MMSE-PIC, at 12 dB no block lost.
    expect(0 "NR LDPC: A = 400 -> G = 848.*up to 3 detector-decoder passes.*12\\.00 +mmse +0\\.0000e\\+00 +0\\.0000e\\+00 +10 +0 +0 +0 "
           ${SIMULATE} --nr 4 --nt 4 --modulation 16qam --snr 12 --coded --code ldpc
           --tb-size 400 --code-rate 0.5 --blocks 10 --detectors mmse --idd 3 --backend cpu)
    expect(2 "LDPC decoder algorithm must be" ${SIMULATE} --coded --code ldpc
           --algorithm max-log-map)
elseif(CASE STREQUAL "simulate_coded_run_and_plot")
    # The coded link, 2x2 QPSK, N = 1, 2 and ML, transport blocks of A = 200 bits
    # at rate 1/2: G = round(224 / 0.5) = 448 bits (112 MIMO vectors). At -6 dB
    # every detector loses blocks; at 20 dB none may.
    expect(0 "Coded BER and BLER.*A = 200 -> G = 448 coded bits.*20\\.00 +nway:1 +0\\.0000e\\+00 +0\\.0000e\\+00 +30 +0 "
           ${SIMULATE} --nr 2 --nt 2 --modulation qpsk --snr -6:20:26 --coded --tb-size 200 --code-rate 0.5
           --detectors nway:1,mtt,ml
           --blocks 30 --iterations 4 --max-batch 100 --json ${dir}/coded.json)
    file(READ ${dir}/coded.json json)
    string(JSON G GET "${json}" coded G)
    string(JSON points LENGTH "${json}" coded points)
    string(JSON detectors LENGTH "${json}" coded points 0 detectors)
    string(JSON problems GET "${json}" config problems_per_point)
    string(JSON raw_bits GET "${json}" points 0 detectors 0 bits)
    if(NOT G EQUAL 448 OR NOT points EQUAL 2 OR NOT detectors EQUAL 3 OR NOT problems EQUAL 3360
       OR NOT raw_bits EQUAL 13440)
        message(FATAL_ERROR "unexpected JSON: G ${G}, ${points} points, ${detectors} detectors, "
                            "${problems} problems, ${raw_bits} coded bits")
    endif()
    foreach(d 0 1 2)
        string(JSON name GET "${json}" coded points 0 detectors ${d} name)
        string(JSON low GET "${json}" coded points 0 detectors ${d} block_errors)
        string(JSON high GET "${json}" coded points 1 detectors ${d} block_errors)
        string(JSON blocks GET "${json}" coded points 1 detectors ${d} blocks)
        if(low EQUAL 0 OR NOT high EQUAL 0 OR NOT blocks EQUAL 30)
            message(FATAL_ERROR "${name}: ${low} block errors at -6 dB (expected > 0), ${high} at 20 dB "
                                "(expected 0), ${blocks} blocks (expected 30)")
        endif()
    endforeach()
    separate_arguments(python UNIX_COMMAND "${PYTHON}")
    expect(0 "wrote.*reaches BLER 0\\.1" ${python} ${PLOT} ${dir}/coded.json -o ${dir}/coded.png)
    file(SIZE ${dir}/coded.png png_size)
    if(png_size LESS 1000)
        message(FATAL_ERROR "coded.png is only ${png_size} bytes")
    endif()
else()
    message(FATAL_ERROR "unknown CASE '${CASE}'")
endif()
