# python-runtime: what every Python program needs before its own code runs,
# granted implicitly by python-sb (src/runtime.c) on top of the rule file.
#
# Format: one grant per line, `ro PATH` (read) or `rw PATH` (read and write),
# then an optional `# why`.  Paths that do not exist here are skipped; symlinks
# are granted under both spellings (the link and its canonical target).
# The interpreter itself, its symlink chain, its standard library and its
# site directories are derived from the interpreter path (src/runtime.c), not
# listed here.  Keep this list short: each line is readable by every
# sandboxed program.

# The dynamic loader and shared libraries (multiarch and lib64 layouts).
ro /etc/ld.so.cache			# ld.so's index of libraries
ro /lib64				# ld-linux on x86_64 (a symlink into the multiarch dir)
ro /usr/lib64
ro /usr/lib/x86_64-linux-gnu		# libc, libssl, libsqlite3, gconv, ...
ro /usr/lib/aarch64-linux-gnu
ro /usr/lib/i386-linux-gnu

# Locale and time: CPython calls setlocale() at start; time uses the zone.
ro /usr/lib/locale			# locale-archive, C.utf8
ro /usr/share/locale/locale.alias
ro /etc/localtime			# a symlink into zoneinfo
ro /usr/share/zoneinfo

# TLS: OpenSSL's configuration and the system CA stores (reference §2.4).
ro /usr/lib/ssl				# openssl.cnf; certs -> /etc/ssl/certs
ro /etc/ssl
ro /etc/pki
ro /etc/ca-certificates
ro /usr/share/ca-certificates
ro /usr/share/pki

# Devices with no data of their own.
rw /dev/null
ro /dev/zero
ro /dev/full
ro /dev/random
ro /dev/urandom
rw /dev/tty				# input(), getpass() on the controlling terminal

# os.cpu_count() (sysconf reads the online CPU list); the allocator's view
# of memory overcommit (mimalloc in CPython 3.13).
ro /sys/devices/system/cpu/online
ro /sys/devices/system/cpu/possible
ro /proc/sys/vm/overcommit_memory

# The user database: site.py and os.path.expanduser() look the user up when
# HOME is not in the (filtered) environment.  World-readable, no password
# hashes (those live in /etc/shadow, never granted).
ro /etc/nsswitch.conf
ro /etc/passwd
ro /etc/group
