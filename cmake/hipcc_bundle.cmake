# cmake -DHIPCC=hipcc -DARCHS=gfx908,gfx90a,... -DIN=kernels.cu -DOUT=file.hipfb -P hipcc_bundle.cmake:
# the sentinel kernels as a clang offload bundle with a code object per AMD GPU. Once in a CI run
# (not reproduced since), hipcc wrote a lone code object instead of the bundle: the output is
# checked, and hipcc run again (three times at most) rather than a wrong file embedded.
string(REPLACE "," ";" archs "${ARCHS}")
set(args --genco)
foreach(a ${archs})
  list(APPEND args --offload-arch=${a})
endforeach()
foreach(try 1 2 3)
  file(REMOVE "${OUT}")
  execute_process(COMMAND ${HIPCC} ${args} -x hip -o ${OUT} ${IN} RESULT_VARIABLE rc)
  if(rc EQUAL 0 AND EXISTS "${OUT}")
    file(READ "${OUT}" magic LIMIT 24 HEX) # "__CLANG_OFFLOAD_BUNDLE__"
    if(magic STREQUAL "5f5f434c414e475f4f46464c4f41445f42554e444c455f5f")
      return()
    endif()
    message(WARNING "hipcc wrote no offload bundle (try ${try} of 3)")
  else()
    message(WARNING "hipcc failed (${rc}; try ${try} of 3)")
  endif()
endforeach()
file(REMOVE "${OUT}")
message(FATAL_ERROR "hipcc did not make an offload bundle of ${IN} for ${ARCHS}")
