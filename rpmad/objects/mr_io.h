/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mr_io.h -- reading and writing the bytes of a registration
 *
 * Every byte rpmad moves into or out of a client's registered memory goes
 * through here: through rpmad's mapping for memory passed by descriptor
 * (the application's files, the library's memfd), through the client's own
 * address space for its private memory (addrspace.h). Addresses are the
 * client's; the caller has checked that the range lies inside the
 * registration (mr_contains) and that the usage allows the access.
 *
 * Pages the client no longer has (it unmapped the memory, or cut its file
 * short, while registered) do not fail the access: writes into them are
 * dropped and reads return zeros, as an RDMA NIC writes into and reads the
 * pinned pages the application no longer maps. The first such access of a
 * registration is logged; mr->lost_bytes counts them all.
 *
 * Once a persist has covered a page-cache segment, writes of at least
 * MR_IO_FD_WRITE_MIN into it go through its write descriptor (mr.h), not
 * rpmad's mapping. A persist (msync) writes the file's pages back and
 * write-protects them in every mapping that has them: stores through
 * rpmad's mapping then fault on every page, and each page's write
 * protection is a TLB flush that interrupts rpmad's threads on every CPU
 * they ran on, the loop's included. pwrite dirties the same pages of the
 * page cache without mapping them in rpmad (rpma-bench's persister rows,
 * benchmarks.md). It costs more where nothing is write-protected: a system call
 * and the file system's write path for every piece, and a copy through
 * rpmad's buffer instead of recv straight into the mapping (4 KiB writes
 * went at a third of the speed, 1 MiB writes 15-20% slower): so smaller
 * writes, atomic stores among them, and files never persisted stay on
 * the mapping. Reads too: they map pages read-only, which write-back
 * leaves alone. Writes through the descriptor stop at the file's end
 * (past it the client cut the file short, and pwrite would grow it
 * again); one racing with the cut may leave the file as long as its end.
 */

#ifndef RPMAD_MR_IO_H
#define RPMAD_MR_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/transport.h"

/* the smallest write into a persisted page-cache segment that pwrite
 * takes (16 KiB) */
#define MR_IO_FD_WRITE_MIN (16u << 10)

/*
 * mr_io_read, mr_io_write_part, mr_io_store64, mr_io_copy, mr_io_direct,
 * mr_io_direct_write, mr_io_in_process: the transports' too, in
 * transport/transport.h
 */

/* mr_io_write -- buf into the client's [addr, addr + len) */
void mr_io_write(struct mr *mr, uint64_t addr, const void *buf, size_t len);

/*
 * mr_io_note_persist -- a persist of [addr, addr + len) starts: the
 * page-cache segments it covers take large writes through their write
 * descriptors from now on
 */
void mr_io_note_persist(struct mr *mr, uint64_t addr, uint64_t len);

#endif /* RPMAD_MR_IO_H */
