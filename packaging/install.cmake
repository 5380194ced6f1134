# Install rules and the Debian package (cpack -G DEB, run in the build folder).
#
# An installed kaja finds what it needs relative to its own binary (core/paths.cpp), never
# in the source tree:
#   bin/kaja
#   share/kaja/marketplace/{abilities,personas}   the shipped marketplace
#   libexec/kaja/{bun,bunx}                       the bun kaja runs npm abilities with
#   share/man/man1/kaja.1.gz                      made from the --help text (kaja help --man)
#   share/bash-completion/completions/kaja, share/zsh/vendor-completions/_kaja,
#   share/fish/vendor_completions.d/kaja.fish     made by kaja completion SHELL
#   share/doc/kaja/{README.md,copyright,changelog.Debian.gz}
# No test helper or benchmark is installed.
include(GNUInstallDirs)

set(KAJA_GENERATED ${CMAKE_BINARY_DIR}/generated)
set(KAJA_MAINTAINER "kaja maintainers <kaja@users.noreply.github.com>"
    CACHE STRING "the Maintainer field of the Debian package and its changelog")

# The man page and the completion scripts come from the kaja just built, so they say what it
# says. gzip -n leaves the time out, so the same kaja gives the same bytes.
add_custom_command(
  OUTPUT ${KAJA_GENERATED}/kaja.1.gz
  COMMAND ${CMAKE_COMMAND} -E make_directory ${KAJA_GENERATED}
  COMMAND sh -c "set -e; \"$1\" help --man > \"$2.tmp\"; gzip -9n < \"$2.tmp\" > \"$2\"; rm -f \"$2.tmp\""
          kaja-man $<TARGET_FILE:kaja> ${KAJA_GENERATED}/kaja.1.gz
  DEPENDS kaja
  COMMENT "Writing the man page kaja(1) from kaja's --help text"
  VERBATIM)
set(KAJA_COMPLETIONS)
foreach(shell bash zsh fish)
  add_custom_command(
    OUTPUT ${KAJA_GENERATED}/completion.${shell}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${KAJA_GENERATED}
    COMMAND sh -c "set -e; \"$1\" completion \"$2\" > \"$3.tmp\"; mv \"$3.tmp\" \"$3\""
            kaja-completion $<TARGET_FILE:kaja> ${shell} ${KAJA_GENERATED}/completion.${shell}
    DEPENDS kaja
    COMMENT "Writing kaja's ${shell} completion"
    VERBATIM)
  list(APPEND KAJA_COMPLETIONS ${KAJA_GENERATED}/completion.${shell})
endforeach()
configure_file(${CMAKE_SOURCE_DIR}/packaging/changelog.in ${KAJA_GENERATED}/changelog @ONLY)
add_custom_command(
  OUTPUT ${KAJA_GENERATED}/changelog.Debian.gz
  COMMAND sh -c "gzip -9n < \"$1\" > \"$2\"" kaja-changelog ${KAJA_GENERATED}/changelog
          ${KAJA_GENERATED}/changelog.Debian.gz
  DEPENDS ${KAJA_GENERATED}/changelog
  VERBATIM)
add_custom_target(kaja_docs ALL
  DEPENDS ${KAJA_GENERATED}/kaja.1.gz ${KAJA_COMPLETIONS} ${KAJA_GENERATED}/changelog.Debian.gz)

# Before anything is copied: a prefix that cannot be written gets one sentence, not a
# failure halfway through.
install(CODE [[
  set(kaja_root "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
  set(kaja_probe "${kaja_root}")
  while(NOT EXISTS "${kaja_probe}")
    get_filename_component(kaja_probe "${kaja_probe}" DIRECTORY)
  endwhile()
  execute_process(COMMAND test -w "${kaja_probe}" -a -x "${kaja_probe}"
                  RESULT_VARIABLE kaja_not_writable)
  if(kaja_not_writable)
    # NOTICE prints the sentence as it is, on stderr, where FATAL_ERROR would wrap it.
    message(NOTICE "kaja: error: cannot install kaja into ${kaja_root}: ${kaja_probe} is not "
            "writable by this user; install as root, or choose a prefix you own with "
            "cmake --install BUILD --prefix ~/.local.")
    message(FATAL_ERROR "nothing was installed")
  endif()
]])

install(TARGETS kaja RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/marketplace/abilities ${CMAKE_SOURCE_DIR}/marketplace/personas
        DESTINATION ${CMAKE_INSTALL_DATADIR}/kaja/marketplace
        FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
        DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                              WORLD_READ WORLD_EXECUTE)

# kaja's own bun (pinned by marketplace/runtime/package-lock.json, installed by .ci/setup),
# for machines with neither bunx nor npx on PATH. bunx is bun under another name.
set(KAJA_BUN ${CMAKE_SOURCE_DIR}/marketplace/runtime/node_modules/.bin/bun)
option(KAJA_INSTALL_BUN "install the bun kaja manages (marketplace/runtime) into libexec/kaja"
       ON)
if(KAJA_INSTALL_BUN AND EXISTS ${KAJA_BUN})
  file(REAL_PATH ${KAJA_BUN} KAJA_BUN_REAL)
  install(PROGRAMS ${KAJA_BUN_REAL} DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/kaja RENAME bun)
  install(CODE "file(CREATE_LINK bun
    \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBEXECDIR}/kaja/bunx\" SYMBOLIC)")
elseif(KAJA_INSTALL_BUN)
  message(STATUS "kaja: no bun in marketplace/runtime (run .ci/setup); installing without it")
endif()

install(FILES ${KAJA_GENERATED}/kaja.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${KAJA_GENERATED}/completion.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME kaja)
install(FILES ${KAJA_GENERATED}/completion.zsh
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions RENAME _kaja)
install(FILES ${KAJA_GENERATED}/completion.fish
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d RENAME kaja.fish)
install(FILES ${CMAKE_SOURCE_DIR}/packaging/lintian-overrides
        DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME kaja)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/packaging/copyright
              ${KAJA_GENERATED}/changelog.Debian.gz
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

# --- the Debian package -------------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kaja)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${KAJA_MAINTAINER})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES TRUE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${KAJA_MAINTAINER})
# The libraries kaja links are found by dpkg-shlibdeps; what it runs is recommended.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# kaja opens these when it first needs them (core/util/lazy_library.h), so dpkg-shlibdeps,
# which reads the binary's links, cannot find them: they are named here, at the versions
# Debian 12 ships.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libcurl4 (>= 7.88), libssl3 (>= 3.0), libarchive13 (>= 3.6)")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "bubblewrap, nodejs, npm")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "docker.io, chromium")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "MCP server manager that runs agents' tools behind a policy")
# CPack puts the summary first and indents the rest.
set(CPACK_PACKAGE_DESCRIPTION
    "kaja manages the Model Context Protocol servers an agent may use: it picks how
to run each one on this machine (bunx, npx, uvx, pipx, docker, a command or a
remote URL), and stands between the model and those servers. Every tool call
passes a tool filter, approval, read-only folders, a backup before a file
changes, an output guard and an audit log. kaja serve offers a persona's
tools to any MCP client; kaja sandbox serve hosts confined servers for cloud
users.")
include(CPack)
