# What `cmake --install` puts where (GNUInstallDirs), and the CPack DEB that packs exactly that.
# scripts/package.sh configures with -DCMAKE_INSTALL_PREFIX=/usr and runs cpack; docs/INSTALL.md
# lists the files, the Depends and the lintian result. Why CPack and not debian/: docs/DECISIONS.md.

set(ASBX_PKG ${CMAKE_SOURCE_DIR}/packaging)
set(ASBX_DOCDIR ${CMAKE_INSTALL_DATADIR}/doc/agent-sandbox)

install(TARGETS agent-sandbox sandbox-run agent-sandbox-unsafe RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# sandbox-run finds it here by default (ASBX_CREDTABLE_INSTALLED; credtable/credtable.h).
install(FILES credtable/credtable.toml DESTINATION ${CMAKE_INSTALL_DATADIR}/agent-sandbox)

# The caller library, importable as `agent_sandbox` by Debian's python3 (docs/PYTHON.md); built by
# the asbx-python target (CMakeLists.txt) with the launcher's own exit-code table.
install(DIRECTORY ${CMAKE_BINARY_DIR}/python/agent_sandbox DESTINATION lib/python3/dist-packages
        FILES_MATCHING PATTERN "*.py" PATTERN "py.typed" PATTERN "__pycache__" EXCLUDE)
# The owner's everyday commands cdx / cld (docs/LIFECYCLE.md): shipped, not on PATH unless linked.
foreach(shim cdx cld)
  install(PROGRAMS ${ASBX_PKG}/shims/agent-shim DESTINATION ${CMAKE_INSTALL_DATADIR}/agent-sandbox/shims RENAME ${shim})
endforeach()

# systemd user units (the gc timer); systemd reads <prefix>/lib/systemd/user for /usr and /usr/local.
# gVisor: one wrapper per runsc platform, which podman runs as the session's OCI runtime
# (docs/ISOLATION.md); the tests' seats use the build tree's copies (runsc_dir).
set(RUNSC /usr/bin/runsc)
set(FLAGS "--network=host --oci-seccomp")
foreach(PLATFORM ptrace kvm)
  configure_file(${ASBX_PKG}/runsc/runsc-wrapper.in ${CMAKE_BINARY_DIR}/libexec/agent-sandbox/runsc-${PLATFORM}
                 @ONLY FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  install(PROGRAMS ${CMAKE_BINARY_DIR}/libexec/agent-sandbox/runsc-${PLATFORM}
          DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/agent-sandbox)
endforeach()
# The compat shim every gVisor session preloads (packaging/runsc/gvisor-compat.cc): it runs inside the
# agent's programs, so it is never instrumented and needs nothing but libc.
add_library(gvisor-compat SHARED ${ASBX_PKG}/runsc/gvisor-compat.cc)
set_target_properties(gvisor-compat PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/libexec/agent-sandbox)
target_compile_options(gvisor-compat PRIVATE -fno-sanitize=all -fno-exceptions -fno-stack-protector)
target_link_options(gvisor-compat PRIVATE -fno-sanitize=all -Wl,--as-needed -Wl,-z,relro,-z,now)
configure_file(${ASBX_PKG}/runsc/gvisor-ld.so.preload ${CMAKE_BINARY_DIR}/libexec/agent-sandbox/gvisor-ld.so.preload COPYONLY)
install(TARGETS gvisor-compat LIBRARY DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/agent-sandbox)
install(FILES ${ASBX_PKG}/runsc/gvisor-ld.so.preload DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/agent-sandbox)
# A rootful seat's gVisor service (not enabled by the package): its containers.conf, the socket and
# service units, and a containers.conf.d drop-in naming the wrappers for every other podman (a
# conffile). docs/ISOLATION.md "A seat installed from the package".
set(ASBX_RUNSC_DIR ${CMAKE_INSTALL_FULL_LIBEXECDIR}/agent-sandbox)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/scripts/containers-runsc.conf)
file(READ scripts/containers-runsc.conf ASBX_RUNSC_CONF)
string(REPLACE "/usr/libexec/agent-sandbox" "${ASBX_RUNSC_DIR}" ASBX_RUNSC_CONF "${ASBX_RUNSC_CONF}")
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/runsc/containers-runsc.conf CONTENT "${ASBX_RUNSC_CONF}" @ONLY)
configure_file(${ASBX_PKG}/runsc/runtimes.conf.in ${CMAKE_BINARY_DIR}/runsc/50-agent-sandbox-runsc.conf @ONLY)
configure_file(scripts/systemd/agent-sandbox-runsc.service.in ${CMAKE_BINARY_DIR}/systemd/agent-sandbox-runsc.service @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/runsc/containers-runsc.conf DESTINATION ${CMAKE_INSTALL_DATADIR}/agent-sandbox)
install(FILES ${CMAKE_BINARY_DIR}/runsc/50-agent-sandbox-runsc.conf
        DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/containers/containers.conf.d)
install(FILES ${CMAKE_BINARY_DIR}/systemd/agent-sandbox-runsc.service scripts/systemd/agent-sandbox-runsc.socket
        DESTINATION /lib/systemd/system)
configure_file(scripts/systemd/agent-sandbox-gc.service.in ${CMAKE_BINARY_DIR}/systemd/agent-sandbox-gc.service @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/systemd/agent-sandbox-gc.service scripts/systemd/agent-sandbox-gc.timer
        DESTINATION lib/systemd/user)

# Bash completion: one script, looked up by command name.
foreach(cmd agent-sandbox sandbox-run agent-sandbox-unsafe)
  install(FILES ${ASBX_PKG}/completion/agent-sandbox.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
          RENAME ${cmd})
endforeach()

# Man pages and the Debian changelog, compressed as Debian policy wants (gzip -9n: no name, no time).
set(ASBX_GZ_OUTPUTS)
function(asbx_gzip src dst)
  add_custom_command(OUTPUT ${dst} COMMAND sh -c "gzip -9n -c '${src}' >'${dst}'" DEPENDS ${src} VERBATIM)
  set(ASBX_GZ_OUTPUTS ${ASBX_GZ_OUTPUTS} ${dst} PARENT_SCOPE)
endfunction()
foreach(page agent-sandbox.1 sandbox-run.1 agent-sandbox-unsafe.1 seat.toml.5)
  string(REGEX MATCH "[0-9]$" section ${page})
  configure_file(${ASBX_PKG}/man/${page} ${CMAKE_BINARY_DIR}/man/${page} @ONLY)
  asbx_gzip(${CMAKE_BINARY_DIR}/man/${page} ${CMAKE_BINARY_DIR}/man/${page}.gz)
  install(FILES ${CMAKE_BINARY_DIR}/man/${page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
endforeach()
asbx_gzip(${ASBX_PKG}/changelog ${CMAKE_BINARY_DIR}/changelog.Debian.gz)
add_custom_target(asbx-docs ALL DEPENDS ${ASBX_GZ_OUTPUTS})
install(FILES ${CMAKE_BINARY_DIR}/changelog.Debian.gz ${ASBX_PKG}/copyright DESTINATION ${ASBX_DOCDIR})

# ---- the .deb ------------------------------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME agent-sandbox)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "agent-sandbox maintainers <maintainers@users.noreply.a-seed-ffbe4701.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION [=[agent-sandbox starts an AI coding agent (codex, claude, cursor-agent) in
a fresh rootless podman container with a locked-down plan: no network unless
asked, a read-only image, limits that are enforced or explicitly waived,
credentials copied in without ever reaching argv, environment or logs. The
container is removed when the agent ends and the agent's exit code passes
through. It runs on the local seat or dispatches over ssh to seat hosts.
.
This package holds the caller side (agent-sandbox), the seat side
(sandbox-run), the human-only escape hatch (agent-sandbox-unsafe), the
credential table, the gc timer as a systemd user unit, man pages, bash
completion, the Python caller library (import agent_sandbox), and the
gVisor wrappers with the podman service a rootful seat runs them through.]=])
# The first changelog entry's version; test_package.py checks the .deb carries the same.
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# dpkg-shlibdeps adds libssh-4, libcpp-httplib0.11, libtomlplusplus3, libstdc++6, libgcc-s1, libc6;
# nlohmann-json and CLI11 are header-only, doctest is the unit tests' only.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "podman, uidmap, slirp4netns, systemd")
# python3: for the caller library only (agent_sandbox); git: agent-sandbox git runs /usr/bin/git.
# A seat host needs neither, so not Depends.
# runsc: gVisor, for seats whose sessions run under a second kernel (docs/ISOLATION.md).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "dbus-user-session, fuse-overlayfs, openssh-server, python3, git, runsc")
set(CPACK_STRIP_FILES ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
    WORLD_READ WORLD_EXECUTE)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${ASBX_PKG}/runsc/conffiles ${ASBX_PKG}/runsc/prerm ${ASBX_PKG}/runsc/postrm)
include(CPack)
