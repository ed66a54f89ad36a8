# write_if_changed(FILE TEXT): writes TEXT to FILE only when it differs from
# what FILE holds, so that an unchanged generated source rebuilds nothing.
function(write_if_changed file text)
  set(old "")
  if(EXISTS "${file}")
    file(READ "${file}" old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE "${file}" "${text}")
  endif()
endfunction()
