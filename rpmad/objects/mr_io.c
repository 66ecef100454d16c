// SPDX-License-Identifier: BSD-3-Clause
/*
 * mr_io.c -- the bytes of a registration, piece by piece: rpmad's mapping
 * for mapped segments, the client's address space for the others
 * (mr_io.h)
 */

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clients/addrspace.h"
#include "core/guard.h"
#include "log/log.h"
#include "objects/mr.h"
#include "objects/mr_io.h"

/* what a copy through rpmad's hands takes at a time */
#define BOUNCE_SIZE (64u << 10)

static uint64_t
page_size(void)
{
	static uint64_t size;
	if (size == 0)
		size = (uint64_t)sysconf(_SC_PAGESIZE);
	return size;
}

/* The segment holding span offset `off`. */
static const struct mr_segment *
segment_at(const struct mr *mr, uint64_t off)
{
	for (unsigned i = 0; i < mr->nsegs; i++) {
		const struct mr_segment *s = &mr->segs[i];
		if (off >= s->span_offset && off - s->span_offset < s->length)
			return s;
	}
	return NULL;
}

/* Whether a write of len bytes into the segment goes through its file. */
static bool
writes_through_fd(const struct mr_segment *s, uint64_t len)
{
	return s->write_fd >= 0 && s->persisted && len >= MR_IO_FD_WRITE_MIN;
}

/*
 * Writes len bytes at seg_off of the segment through its write
 * descriptor, up to the file's end. Returns the bytes lost.
 */
static size_t
fd_write(const struct mr_segment *s, uint64_t seg_off, const uint8_t *buf,
		size_t len)
{
	struct stat st;
	if (fstat(s->write_fd, &st))
		return len;
	uint64_t pos = s->offset + seg_off, size = (uint64_t)st.st_size;
	size_t fits = pos >= size ? 0 : size - pos < len ? (size_t)(size - pos) :
		len;
	size_t done = 0;
	while (done < fits) {
		ssize_t n = pwrite(s->write_fd, buf + done, fits - done,
				(off_t)(pos + done));
		if (n > 0)
			done += (size_t)n;
		else if (n == 0 || errno != EINTR)
			break;	/* no space, or an I/O error: as a page the
				 * mapping could not store into */
	}
	return len - done;
}

/* Counts bytes of pages the client no longer has; the first is told. */
static void
note_lost(struct mr *mr, uint64_t addr, size_t lost)
{
	if (lost == 0)
		return;
	if (mr->lost_bytes == 0)
		log_info("registration %08x: the client's memory at 0x%llx is "
				"gone (unmapped, or its file cut short) while "
				"registered: writes into it are dropped and "
				"reads return zeros", mr->lkey,
				(unsigned long long)addr);
	mr->lost_bytes += lost;
}

/*
 * A guarded copy of len bytes between rpmad's mapping (`mapped`) and a
 * buffer; when a page is lost, page by page: reads of it give zeros,
 * writes into it are dropped. Returns the bytes lost.
 */
static size_t
mapped_copy(uint8_t *mapped, uint64_t addr, uint8_t *buf, size_t len,
		bool into_mapped)
{
	if (into_mapped ? guarded_memcpy(mapped, buf, len) == 0 :
			guarded_memcpy(buf, mapped, len) == 0)
		return 0;
	size_t lost = 0;
	for (size_t done = 0; done < len; ) {
		size_t rest = (size_t)(page_size() - ((addr + done) &
				(page_size() - 1)));
		size_t n = rest < len - done ? rest : len - done;
		int ret = into_mapped ?
			guarded_memcpy(mapped + done, buf + done, n) :
			guarded_memcpy(buf + done, mapped + done, n);
		if (ret) {
			if (!into_mapped)
				memset(buf + done, 0, n);
			lost += n;
		}
		done += n;
	}
	return lost;
}

/*
 * Moves len bytes between the registration and buf, piece by piece; into
 * it, as part of a write of op_len bytes.
 */
static void
transfer(struct mr *mr, uint64_t addr, uint8_t *buf, size_t len,
		bool into_mr, uint64_t op_len)
{
	uint64_t off = addr - mr->span_start;
	size_t lost = 0;
	while (len > 0) {
		const struct mr_segment *s = segment_at(mr, off);
		if (s == NULL)
			break;	/* the caller checked the range: never here */
		uint64_t in_seg = s->span_offset + s->length - off;
		size_t n = in_seg < len ? (size_t)in_seg : len;
		uint64_t at = mr->span_start + off;
		if (s->kind == MR_SEG_PROCESS)
			lost += into_mr ? addrspace_write(mr->as, at, buf, n) :
				addrspace_read(mr->as, at, buf, n);
		else if (into_mr && writes_through_fd(s, op_len))
			lost += fd_write(s, off - s->span_offset, buf, n);
		else
			lost += mapped_copy(mr->base + off, at, buf, n,
					into_mr);
		off += n;
		buf += n;
		len -= n;
	}
	note_lost(mr, addr, lost);
}

void
mr_io_read(struct mr *mr, uint64_t addr, void *buf, size_t len)
{
	transfer(mr, addr, buf, len, false, 0);
}

void
mr_io_write(struct mr *mr, uint64_t addr, const void *buf, size_t len)
{
	transfer(mr, addr, (uint8_t *)buf, len, true, len);
}

void
mr_io_write_part(struct mr *mr, uint64_t addr, const void *buf, size_t len,
		uint64_t op_len)
{
	transfer(mr, addr, (uint8_t *)buf, len, true, op_len);
}

void
mr_io_store64(struct mr *mr, uint64_t addr, uint64_t value)
{
	uint8_t *p = mr_io_direct_write(mr, addr, 8, 8);
	if (p != NULL) {
		if (guarded_store64((uint64_t *)p, value))
			note_lost(mr, addr, 8);
		return;
	}
	/* an aligned 8-byte write of the kernel's into the client's page */
	mr_io_write(mr, addr, &value, 8);
}

void
mr_io_copy(struct mr *dst, uint64_t daddr, struct mr *src, uint64_t saddr,
		size_t len, uint64_t op_len)
{
	uint8_t *d = mr_io_direct_write(dst, daddr, len, op_len);
	uint8_t *s = mr_io_direct(src, saddr, len);
	if (d && s && guarded_memcpy(d, s, len) == 0)
		return;
	/*
	 * Through rpmad's own buffer: a lost page on either side then costs
	 * only its own bytes, and nothing is ever stored unguarded into a
	 * mapping of a client's.
	 */
	static uint8_t bounce[BOUNCE_SIZE];
	for (size_t done = 0; done < len; ) {
		size_t n = len - done < BOUNCE_SIZE ? len - done : BOUNCE_SIZE;
		mr_io_read(src, saddr + done, bounce, n);
		mr_io_write_part(dst, daddr + done, bounce, n, op_len);
		done += n;
	}
}

/* rpmad's mapping of the range, unless a segment of it is not mapped or
 * takes a write of op_len bytes (0: a read) through its write descriptor */
static void *
direct(const struct mr *mr, uint64_t addr, uint64_t len, uint64_t op_len)
{
	if (mr->base == NULL || len == 0)
		return NULL;
	uint64_t off = addr - mr->span_start, end = off + len;
	while (off < end) {
		const struct mr_segment *s = segment_at(mr, off);
		if (s == NULL || s->kind == MR_SEG_PROCESS ||
				(op_len && writes_through_fd(s, op_len)))
			return NULL;
		off = s->span_offset + s->length;
	}
	return mr->base + (addr - mr->span_start);
}

void *
mr_io_direct(const struct mr *mr, uint64_t addr, uint64_t len)
{
	return direct(mr, addr, len, 0);
}

void *
mr_io_direct_write(const struct mr *mr, uint64_t addr, uint64_t len,
		uint64_t op_len)
{
	return direct(mr, addr, len, op_len);
}

bool
mr_io_in_process(const struct mr *mr, uint64_t addr, uint64_t len)
{
	if (mr->as == NULL || len == 0)
		return false;
	uint64_t from = addr - mr->span_start, to = from + len;
	for (unsigned i = 0; i < mr->nsegs; i++) {
		const struct mr_segment *s = &mr->segs[i];
		if (s->kind == MR_SEG_PROCESS && s->span_offset < to &&
				from < s->span_offset + s->length)
			return true;
	}
	return false;
}

void
mr_io_note_persist(struct mr *mr, uint64_t addr, uint64_t len)
{
	uint64_t from = addr - mr->span_start, to = from + len;
	for (unsigned i = 0; i < mr->nsegs; i++) {
		struct mr_segment *s = &mr->segs[i];
		if (s->page_cache && s->span_offset < to &&
				from < s->span_offset + s->length)
			s->persisted = true;
	}
}
