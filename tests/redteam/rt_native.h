/* rt_native.so: the red-team attacks in native code, called from the attack
 * programs through ctypes (tests/redteam/attacks/rtlib.py declares the same
 * signatures).  Each prints what it obtained on standard output and returns 0. */
#ifndef RT_NATIVE_H
#define RT_NATIVE_H

#define RT_API __attribute__((visibility("default")))

/* rt_native.c: kernel interfaces and processes */
RT_API int rt_io_uring_read(const char *path);
RT_API int rt_x32_read(const char *path);
RT_API int rt_int80_read(const char *path);
RT_API int rt_openat2(const char *dir, const char *rel, unsigned long long resolve);
RT_API int rt_open_by_handle(const char *mount_path, const char *handle_hex, int handle_type);
RT_API int rt_seccomp_nested(const char *path, int via_prctl);
RT_API int rt_personality(void);
RT_API int rt_userfaultfd(void);
RT_API int rt_exec_memfd(const char *src, const char *marker, int via_proc);
RT_API int rt_vfork_exec(const char *prog, const char *marker);
RT_API int rt_clone_ns(const char *marker, int use_clone3);
RT_API int rt_unshare(void);
RT_API int rt_poke_sibling(const char *marker, int how);
RT_API int rt_peek(int pid, unsigned long addr, unsigned long len, int how);
RT_API int rt_fsetown_signal(int pid, int sig);
RT_API int rt_fork_bomb(int max, int hold_ms);
RT_API int rt_fork_many(int n);
RT_API int rt_clone_parent_linger(int delay_ms);

/* rt_native_race.c: a second thread rewrites what the call points to */
RT_API int rt_race_open(const char *allowed, const char *secret, const char *allowed_text, double seconds);
RT_API int rt_race_move(const char *allowed, const char *secret, const char *dst, const char *allowed_text,
			double seconds, int how);
RT_API int rt_race_symlink(const char *link, const char *tmp, const char *target_a, const char *target_b,
			   const char *path, const char *allowed_text, double seconds);
RT_API int rt_race_chdir(const char *allowed_dir, const char *secret_dir, const char *name,
			 const char *allowed_text, double seconds);
RT_API int rt_race_opath(const char *allowed_dir, const char *secret_dir, const char *name,
			 const char *allowed_text, double seconds);
RT_API int rt_race_mprotect(const char *secret, double seconds);
RT_API int rt_race_exec(const char *allowed, const char *forbidden, const char *marker, double seconds);
RT_API int rt_race_connect(const char *ip, int allowed_port, int canary_port, double seconds);

/* rt_native_net.c: loopback and private network namespaces only */
RT_API int rt_tfo(const char *ip, int port, int nonblock);
RT_API int rt_sendmmsg(int allowed_port, int canary_port);
RT_API int rt_scm_probe(int max_fd);
RT_API int rt_nl_newaddr(const char *ifname, const char *addr, int how);
RT_API int rt_sock_diag(int how);
RT_API int rt_packet_sniff(int ms);
RT_API int rt_raw_inject(int port, const char *text, int how);
RT_API int rt_ifdown(const char *ifname);

#endif
