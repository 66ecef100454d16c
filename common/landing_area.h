/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * landing_area.h -- layout of a client's landing area: where a thread of the
 * client's own lands what remote peers write into its private memory, and
 * takes what they read of it.
 *
 * A NIC writes a registration's pages without the application's CPU. rpmad
 * cannot map a process's private pages, and reaching them through
 * /proc/PID/mem costs two microseconds of page-table walking per 4 KiB
 * page. A thread the library starts in the application (librpmaclient
 * landing.c) copies with pread/pwrite of this area's memfd instead: the
 * kernel copies into and out of the application's memory with its own page
 * tables, at the cost of a copy, and a page that is gone or protected makes
 * the call fail with EFAULT instead of a signal.
 *
 * rpmad creates the area (a sealed memfd) and hands it to the client that
 * asks (LandingOpen). It holds a header, LANDING_SLOTS slots of one batch
 * each, and the data: the payloads of the writes, and room for what reads
 * take, in LANDING_CHUNK pieces rpmad hands out. Each slot goes
 *
 *     FREE -> POSTED (rpmad) -> TAKEN (client) -> DONE (client)
 *                            -> REVOKED (rpmad: not taken in time, done
 *                               by rpmad's own thread instead)
 *
 * POSTED -> TAKEN and POSTED -> REVOKED are compare-and-swaps: a batch is
 * done by one of the two, once. rpmad keeps its own copy of everything it
 * posts and reads only a slot's state and its jobs' `lost` flags back;
 * every one of those is hostile (a client may write anything there, and
 * harm only its own memory by it).
 */

#ifndef RPMAD_COMMON_LANDING_AREA_H
#define RPMAD_COMMON_LANDING_AREA_H

#include <stdatomic.h>
#include <stdint.h>

#define LANDING_MAGIC		UINT64_C(0x31444e414c444d52) /* "RMDLAND1" */
#define LANDING_VERSION		1u

#define LANDING_SLOTS		64u	/* batches in flight at most */
#define LANDING_SLOT_JOBS	64u	/* reads and writes of one batch */
#define LANDING_CHUNK		(64u << 10)
#define LANDING_CHUNKS		64u	/* 4 MiB of data */
#define LANDING_DATA_SIZE	(LANDING_CHUNK * LANDING_CHUNKS)

enum landing_slot_state {
	LANDING_FREE = 0,
	LANDING_POSTED,
	LANDING_TAKEN,
	LANDING_DONE,
	LANDING_REVOKED,
};

enum landing_job_kind {
	LANDING_WRITE = 1,	/* data -> the client's addr */
	LANDING_READ = 2,	/* the client's addr -> data */
};

struct landing_job {
	uint8_t kind;
	uint8_t lost;		/* client: some bytes could not be moved */
	uint16_t reserved;
	uint32_t len;
	uint64_t addr;		/* in the client's address space */
	uint64_t data_off;	/* of the bytes, from the area's start */
};

struct landing_slot {
	_Atomic uint32_t state;
	uint32_t njobs;
	/* the batch's stream: nothing after a lost job (stream_halt.h) */
	uint64_t stream;
	struct landing_job jobs[LANDING_SLOT_JOBS];
};

struct landing_header {
	uint64_t magic;
	uint32_t version;
	uint32_t nslots;
	uint32_t slot_jobs;
	uint32_t reserved;
	uint64_t slots_offset;
	uint64_t data_offset;
	uint64_t data_size;
	uint64_t area_size;

	/*
	 * rpmad: slots posted, free-running (slot = posted % nslots): the
	 * word the client's thread sleeps on (a futex)
	 */
	_Alignas(64) _Atomic uint32_t posted;
	/* client: "I sleep on `posted`: wake me after posting" */
	_Atomic uint32_t client_sleeps;

	/* rpmad: "I am asleep; write the eventfd after a batch is done" */
	_Alignas(64) _Atomic uint32_t need_wakeup;
};

/* The descriptors a LandingOpen answer passes, in this order. */
enum landing_fd {
	LANDING_FD_AREA,	/* this area (a sealed memfd) */
	LANDING_FD_DONE,	/* the eventfd rpmad sleeps on */
	LANDING_FD_MAX
};

/* Where the parts of an area lie; both sides compute the same. */
static inline uint64_t
landing_slots_offset(void)
{
	return (sizeof(struct landing_header) + 4095) & ~UINT64_C(4095);
}

static inline uint64_t
landing_data_offset(void)
{
	uint64_t end = landing_slots_offset() +
		(uint64_t)LANDING_SLOTS * sizeof(struct landing_slot);
	return (end + 4095) & ~UINT64_C(4095);
}

static inline uint64_t
landing_area_size(void)
{
	return landing_data_offset() + LANDING_DATA_SIZE;
}

#endif /* RPMAD_COMMON_LANDING_AREA_H */
