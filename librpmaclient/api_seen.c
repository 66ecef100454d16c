// SPDX-License-Identifier: BSD-3-Clause
/*
 * api_seen.c -- which of librpma's symbol versions this process runs: what
 * the loaded objects' version needs ask of librpma.so.0 (LIBRPMA_0.12,
 * LIBRPMA_1.0), or "unversioned" for an object that names the library
 * without versions (linked against librpmaclient.so.1 of old). Told to
 * rpmad at hello, for rpmactl clients.
 */

#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "api_seen.h"

struct seen {
	bool v0_12, v1_0, unversioned;
};

static bool
names_us(const char *file)
{
	return strcmp(file, "librpma.so.0") == 0 ||
		strcmp(file, "librpmaclient.so.1") == 0;
}

/*
 * The loader relocates the dynamic section's addresses in place on most
 * machines, not on all: an address below the object's base is still
 * relative to it.
 */
static uintptr_t
dyn_addr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
	return v < info->dlpi_addr ? info->dlpi_addr + v : v;
}

static int
look_at(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void) size;
	struct seen *seen = arg;
	const ElfW(Dyn) *dyn = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr +
					info->dlpi_phdr[i].p_vaddr);
	if (dyn == NULL)
		return 0;

	const char *strtab = NULL;
	const ElfW(Verneed) *vn = NULL;
	for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_STRTAB)
			strtab = (const char *)dyn_addr(info, d->d_un.d_ptr);
		else if (d->d_tag == DT_VERNEED)
			vn = (const ElfW(Verneed) *)dyn_addr(info,
					d->d_un.d_ptr);
	}
	if (strtab == NULL)
		return 0;

	bool needs_us = false, versioned = false;
	for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_NEEDED && names_us(strtab + d->d_un.d_val))
			needs_us = true;
	for (; vn != NULL; vn = vn->vn_next ? (const ElfW(Verneed) *)
			((const char *)vn + vn->vn_next) : NULL) {
		if (!names_us(strtab + vn->vn_file))
			continue;
		const ElfW(Vernaux) *a = (const ElfW(Vernaux) *)
				((const char *)vn + vn->vn_aux);
		for (unsigned i = 0; i < vn->vn_cnt; i++) {
			const char *name = strtab + a->vna_name;
			if (strcmp(name, "LIBRPMA_0.12") == 0)
				seen->v0_12 = versioned = true;
			else if (strcmp(name, "LIBRPMA_1.0") == 0)
				seen->v1_0 = versioned = true;
			if (a->vna_next == 0)
				break;
			a = (const ElfW(Vernaux) *)((const char *)a +
					a->vna_next);
		}
	}
	if (needs_us && !versioned)
		seen->unversioned = true;
	return 0;
}

void
api_seen(char *buf, size_t len)
{
	struct seen seen = { 0 };
	(void) dl_iterate_phdr(look_at, &seen);
	bool versioned = seen.v0_12 || seen.v1_0;
	(void) snprintf(buf, len, "%s%s%s%s%s",
			seen.v0_12 ? "0.12" : "",
			seen.v0_12 && seen.v1_0 ? "+" : "",
			seen.v1_0 ? "1.0" : "",
			seen.unversioned && versioned ? "+" : "",
			seen.unversioned ? "unversioned" : "");
	/* dlopen'ed: found by name (dlsym), the default version, 1.0 */
	if (buf[0] == '\0')
		(void) snprintf(buf, len, "dlopen");
}
