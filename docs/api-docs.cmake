# The API reference page: docs/openapi.yaml linted and rendered by Redocly's
# CLI (tools/build-docs.sh, the npm packages docs/package-lock.json pins)
# into <build>/docs/index.html, part of the default build. The run command
# serves it at /docs/, tools/package.sh ships it in libnginx-mod-http-mr.
# Not in a sanitizer build: nothing in it is C++. Included from the top
# CMakeLists.txt, so <build>/docs holds the page alone (nginx serves that
# folder).
set(MR_API_DOCS_HTML ${CMAKE_BINARY_DIR}/docs/index.html CACHE INTERNAL "the built API reference page")
find_program(MR_NPM npm)
if(MR_SANITIZE)
  set(MR_API_DOCS OFF CACHE INTERNAL "")
elseif(MR_NPM)
  set(MR_API_DOCS ON CACHE INTERNAL "")
  add_custom_command(OUTPUT ${MR_API_DOCS_HTML}
    COMMAND ${PROJECT_SOURCE_DIR}/tools/build-docs.sh ${CMAKE_BINARY_DIR}/docs
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/openapi.yaml ${CMAKE_CURRENT_LIST_DIR}/package.json
            ${CMAKE_CURRENT_LIST_DIR}/package-lock.json ${CMAKE_CURRENT_LIST_DIR}/redocly.yaml
            ${CMAKE_CURRENT_LIST_DIR}/reference-template.hbs ${PROJECT_SOURCE_DIR}/tools/build-docs.sh
    COMMENT "Rendering the API reference page from docs/openapi.yaml"
    VERBATIM)
  add_custom_target(api_docs ALL DEPENDS ${MR_API_DOCS_HTML})
else()
  set(MR_API_DOCS OFF CACHE INTERNAL "")
  message(WARNING "npm not found: the API reference page (docs/index.html) is not built, and "
                  "tools/package.sh will refuse to package; tools/deps.sh installs npm")
endif()
