/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fdreserve.h -- descriptors rpmad holds back for administrators
 *
 * When rpmad reaches its descriptor limit (RLIMIT_NOFILE), accept() on the
 * control socket fails and nobody gets in, root's rpmactl included. rpmad
 * therefore holds a few spare descriptors (of /dev/null) from the start:
 * when accept fails for want of descriptors, it lets two of them go,
 * accepts one waiting client with them, keeps it only if it is an
 * administrator (root or admin_groups; the second spare is for what its
 * session opens, /proc/PID/...) and takes back whatever is free again.
 */

#ifndef RPMAD_FDRESERVE_H
#define RPMAD_FDRESERVE_H

/* Spares held: room for several administrators' sessions at once. */
#define FDRESERVE_SPARES 16

/* fdreserve_fill -- open spares up to FDRESERVE_SPARES (as many as fit) */
void fdreserve_fill(void);

/* fdreserve_release -- close up to `n` spares; how many were closed */
unsigned fdreserve_release(unsigned n);

/* fdreserve_held -- how many spares are held now */
unsigned fdreserve_held(void);

/* fdreserve_fini -- close them all (at exit) */
void fdreserve_fini(void);

#endif /* RPMAD_FDRESERVE_H */
