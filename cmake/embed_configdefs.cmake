# Writes OUT: a C++ source holding each data/configdefs/*.tsv as a string, so
# the binary knows the real ConfigDefs' keys without reading files at run time.
# Run as: cmake -DSRC=<data/configdefs> -DOUT=<file.cpp> -P embed_configdefs.cmake
set(names consumer producer worker connector clickhouse_sink)
set(body "// Generated from data/configdefs/*.tsv by cmake/embed_configdefs.cmake: do not edit.\n")
string(APPEND body "#include \"models/pipeline/real_keys.h\"\n\nnamespace pipesim::pipeline {\n\n")
string(APPEND body "std::string_view configdef_tsv(std::string_view name) {\n")
foreach(name IN LISTS names)
  file(READ "${SRC}/${name}.tsv" text)
  string(APPEND body "  if (name == \"${name}\") return R\"pipesim_tsv(${text})pipesim_tsv\";\n")
endforeach()
string(APPEND body "  return {};\n}\n\n}  // namespace pipesim::pipeline\n")
include(${CMAKE_CURRENT_LIST_DIR}/write_if_changed.cmake)
write_if_changed("${OUT}" "${body}")
