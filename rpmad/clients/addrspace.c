// SPDX-License-Identifier: BSD-3-Clause
/*
 * addrspace.c -- reading, writing and checking a client's memory through
 * the descriptors of its /proc/self/mem and /proc/self/maps (addrspace.h)
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/memfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "clients/addrspace.h"
#include "fs/fstype.h"
#include "proc_maps.h"

struct addrspace {
	int mem_fd;
	int maps_fd;
	unsigned refs;
	struct as_hook *hooks; /* what serves it, the newest first */
};

static uint64_t
page_size(void)
{
	static uint64_t size;
	if (size == 0)
		size = (uint64_t)sysconf(_SC_PAGESIZE);
	return size;
}

/*
 * Whether fd is the procfs file `name` (mem or maps) of some process,
 * opened with `mode`: a client hands over its own, and anything else
 * would only confuse rpmad (it could reach no more than the client can).
 */
static int
check_proc_file(int fd, const char *name, int mode, char *err, size_t errlen)
{
	struct statfs sfs;
	if (fstatfs(fd, &sfs) || sfs.f_type != PROC_SUPER_MAGIC) {
		(void) snprintf(err, errlen, "the descriptor given as the "
				"process's %s is not a file of /proc", name);
		return -EINVAL;
	}
	char link[64], target[256];
	(void) snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = '\0';
	const char *base = strrchr(target, '/');
	if (base == NULL || strcmp(base + 1, name)) {
		(void) snprintf(err, errlen, "the descriptor given as the "
				"process's %s is %s", name,
				n > 0 ? target : "unnamed");
		return -EINVAL;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_ACCMODE) != mode) {
		(void) snprintf(err, errlen, "the process's %s was not opened "
				"%s", name, mode == O_RDWR ? "for reading and "
				"writing" : "for reading");
		return -EINVAL;
	}
	return 0;
}

int
addrspace_new(int mem_fd, int maps_fd, struct addrspace **out, char *err,
		size_t errlen)
{
	int ret = check_proc_file(mem_fd, "mem", O_RDWR, err, errlen);
	if (ret == 0)
		ret = check_proc_file(maps_fd, "maps", O_RDONLY, err, errlen);
	struct addrspace *as = NULL;
	if (ret == 0 && (as = calloc(1, sizeof(*as))) == NULL) {
		(void) snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
	}
	if (ret) {
		(void) close(mem_fd);
		(void) close(maps_fd);
		return ret;
	}
	as->mem_fd = mem_fd;
	as->maps_fd = maps_fd;
	as->refs = 1;
	*out = as;
	return 0;
}

struct addrspace *
addrspace_get(struct addrspace *as)
{
	as->refs++;
	return as;
}

void
addrspace_put(struct addrspace *as)
{
	if (as == NULL || --as->refs > 0)
		return;
	for (struct as_hook *h = as->hooks, *next; h; h = next) {
		next = h->next; /* h is gone after its release */
		h->ops->release(h);
	}
	(void) close(as->mem_fd);
	(void) close(as->maps_fd);
	free(as);
}

/* Mappings of the kernel's own ([vdso], [vvar], ...): never reachable. */
static bool
special_mapping(const struct maps_entry *e)
{
	return e->path[0] == '[' && strcmp(e->path, "[heap]") &&
		strncmp(e->path, "[stack", 6) && strncmp(e->path, "[anon:", 6);
}

/*
 * The device of the kernel's internal shmem mount: memfds, SysV shared
 * memory and shared anonymous memory, which no mountinfo shows.
 */
static dev_t
shmem_dev(void)
{
	static dev_t dev = (dev_t)-1;
	if (dev == (dev_t)-1) {
		int fd = memfd_create("rpmad-shmem-dev", MFD_CLOEXEC);
		struct stat st;
		if (fd >= 0 && fstat(fd, &st) == 0)
			dev = st.st_dev;
		if (fd >= 0)
			(void) close(fd);
	}
	return dev;
}

/*
 * Whether dev is one of the kernel's internal hugetlbfs mounts (one per
 * huge page size): MAP_HUGETLB memory and memfds of MFD_HUGETLB, which no
 * mountinfo shows. Huge pages are memory: nothing to wait on.
 */
static bool
hugetlb_dev(dev_t dev)
{
	static dev_t devs[8];
	static int ndevs = -1;
	if (ndevs < 0) {
		ndevs = 0;
		/* 64 KiB to 16 GiB: every huge page size Linux has */
		for (int shift = 16; shift <= 34 && ndevs < 8; shift++) {
			int fd = memfd_create("rpmad-hugetlb-dev", MFD_CLOEXEC |
					MFD_HUGETLB |
					((unsigned)shift << MFD_HUGE_SHIFT));
			struct stat st;
			if (fd >= 0 && fstat(fd, &st) == 0)
				devs[ndevs++] = st.st_dev;
			if (fd >= 0)
				(void) close(fd);
		}
	}
	for (int i = 0; i < ndevs; i++)
		if (devs[i] == dev)
			return true;
	return false;
}

/*
 * Whether rpmad's pread/pwrite may fault in pages of this file mapping:
 * not from a file system that can make rpmad's one thread wait (FUSE,
 * network, cluster), nor from one rpmad cannot tell (a FUSE mount detached
 * with umount -l is in no mountinfo). 0, or -EOPNOTSUPP with the reason.
 */
static int
check_file_mapping(const struct maps_entry *e, pid_t pid, char *err,
		size_t errlen)
{
	dev_t dev = makedev(e->dev_major, e->dev_minor);
	if (e->inode == 0 || dev == shmem_dev() || hugetlb_dev(dev))
		return 0;
	struct fstype fs;
	int ret = fstype_of_dev(e->dev_major, e->dev_minor, pid, &fs);
	if (ret == 0 && fs.verdict == FSTYPE_LOCAL)
		return 0;
	(void) snprintf(err, errlen, "0x%llx maps %.64s on %.40s, a file "
			"system that %s", (unsigned long long)e->start,
			e->path[0] ? e->path : "a file",
			fs.type[0] ? fs.type : "?",
			fs.verdict == FSTYPE_MAY_BLOCK ? "can make rpmad wait "
			"(its server or network)" : "rpmad cannot tell, so it "
			"could be one that makes rpmad wait");
	return -EOPNOTSUPP;
}

int
addrspace_check(struct addrspace *as, pid_t pid, uint64_t addr, uint64_t len,
		bool write, char *err, size_t errlen)
{
	uint64_t start = addr & ~(page_size() - 1);
	uint64_t end = addr + len;
	struct maps_entry *e = NULL;
	int n = maps_query(as->maps_fd, (uintptr_t)start, (uintptr_t)end, &e);
	if (n < 0) {
		int ret = -errno;
		(void) snprintf(err, errlen, "cannot read the process's maps: "
				"%s", strerror(errno));
		return ret;
	}
	int ret = 0;
	uint64_t cursor = start;
	for (int i = 0; i < n && ret == 0 && cursor < end; i++) {
		if (e[i].start > cursor) {
			(void) snprintf(err, errlen, "0x%llx is not mapped",
					(unsigned long long)cursor);
			ret = -EFAULT;
		} else if (special_mapping(&e[i])) {
			(void) snprintf(err, errlen, "0x%llx is %s, a mapping "
					"of the kernel's",
					(unsigned long long)cursor, e[i].path);
			ret = -EFAULT;
		} else if (!e[i].read || (write && !e[i].write)) {
			(void) snprintf(err, errlen, "the memory at 0x%llx "
					"cannot be %s", (unsigned long long)
					cursor, e[i].read ? "written" : "read");
			ret = -EFAULT;
		} else {
			ret = check_file_mapping(&e[i], pid, err, errlen);
		}
		cursor = e[i].end;
	}
	if (ret == 0 && cursor < end) {
		(void) snprintf(err, errlen, "0x%llx is not mapped",
				(unsigned long long)cursor);
		ret = -EFAULT;
	}
	free(e);
	return ret;
}

/* How far from addr to the next page boundary, at most len. */
static size_t
rest_of_page(uint64_t addr, size_t len)
{
	size_t rest = (size_t)(page_size() - (addr & (page_size() - 1)));
	return rest < len ? rest : len;
}

int
addrspace_mem_fd(const struct addrspace *as)
{
	return as->mem_fd;
}

size_t
addrspace_read(struct addrspace *as, uint64_t addr, void *buf, size_t len)
{
	return addrspace_pread(as->mem_fd, addr, buf, len);
}

size_t
addrspace_write(struct addrspace *as, uint64_t addr, const void *buf,
		size_t len)
{
	return addrspace_pwrite(as->mem_fd, addr, buf, len);
}

size_t
addrspace_pread(int mem_fd, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0, lost = 0;
	while (done < len) {
		ssize_t n = pread(mem_fd, (char *)buf + done, len - done,
				(off_t)(addr + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		/* the page at addr + done is gone (or the whole process is) */
		size_t gap = rest_of_page(addr + done, len - done);
		memset((char *)buf + done, 0, gap);
		done += gap;
		lost += gap;
	}
	return lost;
}

size_t
addrspace_pwrite(int mem_fd, uint64_t addr, const void *buf, size_t len)
{
	size_t done = 0, lost = 0;
	while (done < len) {
		ssize_t n = pwrite(mem_fd, (const char *)buf + done,
				len - done, (off_t)(addr + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		size_t gap = rest_of_page(addr + done, len - done);
		done += gap;
		lost += gap;
	}
	return lost;
}

void
addrspace_hook_add(struct addrspace *as, struct as_hook *h)
{
	h->next = as->hooks;
	as->hooks = h;
}

struct as_hook *
addrspace_hook_find(const struct addrspace *as, const struct as_hook_ops *ops)
{
	struct as_hook *h = as->hooks;
	while (h && h->ops != ops)
		h = h->next;
	return h;
}
