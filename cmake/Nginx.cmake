# Headers and module glue for C++ dynamic modules of Debian's packaged nginx.
#
# nginx-dev ships the sources without objs/, so configure runs once on a copy
# with the packaged flags (conf_flags, which include --with-compat): the
# resulting ngx_auto_config.h gives the binary signature the packaged
# /usr/sbin/nginx expects from load_module.

set(NGINX_SRC_DIR "/usr/share/nginx/src" CACHE PATH "nginx sources from nginx-dev")
set(NGINX_BUILD_DIR "${CMAKE_BINARY_DIR}/nginx-src")

if(NOT EXISTS "${NGINX_BUILD_DIR}/objs/ngx_auto_config.h")
  if(NOT EXISTS "${NGINX_SRC_DIR}/configure")
    message(FATAL_ERROR "nginx sources not found in ${NGINX_SRC_DIR}: apt-get install nginx-dev")
  endif()
  message(STATUS "Configuring nginx headers in ${NGINX_BUILD_DIR} (once)")
  file(REMOVE_RECURSE "${NGINX_BUILD_DIR}")
  file(COPY "${NGINX_SRC_DIR}/" DESTINATION "${NGINX_BUILD_DIR}")
  execute_process(
    COMMAND bash -c "source ./conf_flags && ./configure \"\${NGX_CONF_FLAGS[@]}\""
    WORKING_DIRECTORY "${NGINX_BUILD_DIR}"
    OUTPUT_FILE "${NGINX_BUILD_DIR}/configure.log"
    ERROR_FILE "${NGINX_BUILD_DIR}/configure.log"
    RESULT_VARIABLE nginx_configure_rc)
  if(NOT nginx_configure_rc EQUAL 0)
    message(FATAL_ERROR "nginx configure failed: see ${NGINX_BUILD_DIR}/configure.log")
  endif()
endif()

# Every C++ object, not only a module's own sources: the static libraries a
# module links (keys, ledger, common, config) would otherwise bring
# STB_GNU_UNIQUE symbols (function-local statics of inline templates), and
# the dynamic loader never unloads an object that defined one, so an old
# module file stayed mapped in the master after every reload.
add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fno-gnu-unique>)

add_library(nginx_headers INTERFACE)
target_include_directories(nginx_headers SYSTEM INTERFACE
  "${NGINX_BUILD_DIR}/src/core"
  "${NGINX_BUILD_DIR}/src/event"
  "${NGINX_BUILD_DIR}/src/event/modules"
  "${NGINX_BUILD_DIR}/src/os/unix"
  "${NGINX_BUILD_DIR}/src/http"
  "${NGINX_BUILD_DIR}/src/http/modules"
  "${NGINX_BUILD_DIR}/src/http/v2"
  "${NGINX_BUILD_DIR}/objs")

# mr_add_nginx_module(<module symbol> SOURCES ... [LIBS ...] [FIRST <module symbol>...])
# Builds <module symbol>.so as a dynamic module. The glue nginx dlsym()s
# (ngx_modules, ngx_module_names, ngx_module_order) is generated as C.
# FIRST names more modules in the same file, defined in its sources or
# LIBS, listed before the main one: nginx runs their init_process and
# exit_process first.
# Hidden visibility, -Bsymbolic and -fno-gnu-unique let a rebuilt .so
# installed under a new name serve after `nginx -s reload` instead of
# binding to the copy already mapped.
function(mr_add_nginx_module name)
  cmake_parse_arguments(M "" "" "SOURCES;LIBS;FIRST" ${ARGN})
  set(glue "${CMAKE_CURRENT_BINARY_DIR}/${name}_modules.c")
  set(externs "")
  set(pointers "")
  set(names "")
  foreach(m ${M_FIRST} ${name})
    string(APPEND externs "extern ngx_module_t ${m};\n")
    string(APPEND pointers "&${m}, ")
    string(APPEND names "\"${m}\", ")
  endforeach()
  file(WRITE "${glue}.tmp"
"#include <ngx_config.h>
#include <ngx_core.h>
${externs}__attribute__((visibility(\"default\"))) ngx_module_t *ngx_modules[] = { ${pointers}NULL };
__attribute__((visibility(\"default\"))) char *ngx_module_names[] = { ${names}NULL };
__attribute__((visibility(\"default\"))) char *ngx_module_order[] = { NULL };
")
  file(COPY_FILE "${glue}.tmp" "${glue}" ONLY_IF_DIFFERENT)
  add_library(${name} MODULE ${M_SOURCES} "${glue}")
  set_target_properties(${name} PROPERTIES PREFIX ""
    LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/nginx-modules")
  target_link_options(${name} PRIVATE -Wl,-Bsymbolic)
  target_link_libraries(${name} PRIVATE nginx_headers ${M_LIBS})
  set_property(GLOBAL APPEND PROPERTY MR_NGINX_MODULES ${name})
endfunction()
