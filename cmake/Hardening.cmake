# The hardening Debian builds its own nginx and modules with
# (dpkg-buildflags, hardening=+all): stack protector, fortified libc calls,
# format checks, read-only relocations bound at load. The packages ship what
# this tree builds, so the flags live here rather than in debian/rules.
add_compile_options(-fstack-protector-strong -Wformat -Werror=format-security
                    $<$<NOT:$<CONFIG:Debug>>:-D_FORTIFY_SOURCE=2>)
add_link_options(-Wl,-z,relro -Wl,-z,now)
