// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_abi.c -- librpma.so.0's identity: exactly native librpma's functions
 * under native librpma's symbol versions (0.12.0's 68 as LIBRPMA_0.12,
 * 1.x's 84 as LIBRPMA_1.0, the default), nothing else; where 1.x changed a
 * function, each version behaves as its native library did; and what the
 * header binds a program to, with and without RPMA_API_0_12.
 *
 * The lists are native librpma's, written out here (not read from
 * librpmaclient.map) so that a mistake in the map fails this test.
 */

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "librpma.h"
#include "th_suite.h"

/*
 * librpma's functions (0.12.0's src/librpma.map, 1.3's): those of both
 * 0.12.0 and 1.0-1.3, 0.12.0's one that 1.x dropped, what 1.x added
 */
static const char *const both[] = {
	"rpma_conn_apply_remote_peer_cfg",
	"rpma_conn_cfg_delete",
	"rpma_conn_cfg_get_cq_size",
	"rpma_conn_cfg_get_rcq_size",
	"rpma_conn_cfg_get_rq_size",
	"rpma_conn_cfg_get_sq_size",
	"rpma_conn_cfg_get_timeout",
	"rpma_conn_cfg_new",
	"rpma_conn_cfg_set_cq_size",
	"rpma_conn_cfg_set_rcq_size",
	"rpma_conn_cfg_set_rq_size",
	"rpma_conn_cfg_set_sq_size",
	"rpma_conn_cfg_set_timeout",
	"rpma_conn_delete",
	"rpma_conn_disconnect",
	"rpma_conn_get_cq",
	"rpma_conn_get_event_fd",
	"rpma_conn_get_private_data",
	"rpma_conn_get_qp_num",
	"rpma_conn_get_rcq",
	"rpma_conn_next_event",
	"rpma_conn_req_connect",
	"rpma_conn_req_delete",
	"rpma_conn_req_get_private_data",
	"rpma_conn_req_new",
	"rpma_conn_req_recv",
	"rpma_cq_get_fd",
	"rpma_cq_get_wc",
	"rpma_cq_wait",
	"rpma_ep_get_fd",
	"rpma_ep_listen",
	"rpma_ep_next_conn_req",
	"rpma_ep_shutdown",
	"rpma_err_2str",
	"rpma_flush",
	"rpma_log_get_threshold",
	"rpma_log_set_function",
	"rpma_log_set_threshold",
	"rpma_mr_advise",
	"rpma_mr_dereg",
	"rpma_mr_get_descriptor",
	"rpma_mr_get_descriptor_size",
	"rpma_mr_get_ptr",
	"rpma_mr_get_size",
	"rpma_mr_reg",
	"rpma_mr_remote_delete",
	"rpma_mr_remote_from_descriptor",
	"rpma_mr_remote_get_flush_type",
	"rpma_mr_remote_get_size",
	"rpma_peer_cfg_delete",
	"rpma_peer_cfg_from_descriptor",
	"rpma_peer_cfg_get_descriptor",
	"rpma_peer_cfg_get_descriptor_size",
	"rpma_peer_cfg_get_direct_write_to_pmem",
	"rpma_peer_cfg_new",
	"rpma_peer_cfg_set_direct_write_to_pmem",
	"rpma_peer_delete",
	"rpma_peer_new",
	"rpma_read",
	"rpma_recv",
	"rpma_send",
	"rpma_send_with_imm",
	"rpma_utils_conn_event_2str",
	"rpma_utils_get_ibv_context",
	"rpma_utils_ibv_context_is_odp_capable",
	"rpma_write",
	"rpma_write_with_imm",
};
static const char *const only_0_12[] = { "rpma_write_atomic" };
static const char *const only_1[] = {
	"rpma_atomic_write",
	"rpma_conn_cfg_get_compl_channel",
	"rpma_conn_cfg_get_srq",
	"rpma_conn_cfg_set_compl_channel",
	"rpma_conn_cfg_set_srq",
	"rpma_conn_get_compl_fd",
	"rpma_conn_wait",
	"rpma_srq_cfg_delete",
	"rpma_srq_cfg_get_rcq_size",
	"rpma_srq_cfg_get_rq_size",
	"rpma_srq_cfg_new",
	"rpma_srq_cfg_set_rcq_size",
	"rpma_srq_cfg_set_rq_size",
	"rpma_srq_delete",
	"rpma_srq_get_rcq",
	"rpma_srq_new",
	"rpma_srq_recv",
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct export {
	char name[64];
	char version[32];
	int is_default;		/* name@@version: a new link takes it */
};

/* The defined global symbols of the ELF file at path, with versions. */
static size_t
read_exports(const char *path, struct export *out, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	const uint8_t *f = mmap(NULL, (size_t)st.st_size, PROT_READ,
			MAP_PRIVATE, fd, 0);
	ck_assert_ptr_ne(f, MAP_FAILED);
	(void) close(fd);

	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f;
	ck_assert(memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0);
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(f + eh->e_shoff);
	const Elf64_Shdr *dynsym = NULL, *versym = NULL, *verdef = NULL;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type == SHT_DYNSYM)
			dynsym = &sh[i];
		else if (sh[i].sh_type == SHT_GNU_versym)
			versym = &sh[i];
		else if (sh[i].sh_type == SHT_GNU_verdef)
			verdef = &sh[i];
	}
	ck_assert(dynsym && versym && verdef);
	const char *dynstr = (const char *)(f + sh[dynsym->sh_link].sh_offset);

	/* version index -> name */
	const char *vnames[16] = { 0 };
	const uint8_t *vd = f + verdef->sh_offset;
	for (;;) {
		const Elf64_Verdef *d = (const Elf64_Verdef *)vd;
		const Elf64_Verdaux *aux = (const Elf64_Verdaux *)(vd +
				d->vd_aux);
		if (d->vd_ndx < 16)
			vnames[d->vd_ndx] = dynstr + aux->vda_name;
		if (d->vd_next == 0)
			break;
		vd += d->vd_next;
	}

	const Elf64_Sym *sym = (const Elf64_Sym *)(f + dynsym->sh_offset);
	const Elf64_Half *vs = (const Elf64_Half *)(f + versym->sh_offset);
	size_t nsym = dynsym->sh_size / sizeof(Elf64_Sym), n = 0;
	for (size_t i = 1; i < nsym; i++) {
		if (sym[i].st_shndx == SHN_UNDEF)
			continue;
		unsigned bind = ELF64_ST_BIND(sym[i].st_info);
		if (bind != STB_GLOBAL && bind != STB_WEAK)
			continue;
		unsigned ndx = vs[i] & 0x7fff;
		ck_assert_uint_lt(ndx, 16);
		const char *name = dynstr + sym[i].st_name;
		const char *ver = vnames[ndx] ? vnames[ndx] : "";
		/* the symbol naming a version node itself */
		if (sym[i].st_shndx == SHN_ABS && strcmp(name, ver) == 0)
			continue;
		ck_assert_uint_lt(n, max);
		ck_assert_uint_lt(strlen(name), sizeof(out[n].name));
		strcpy(out[n].name, name);
		snprintf(out[n].version, sizeof(out[n].version), "%s", ver);
		out[n].is_default = !(vs[i] & 0x8000);
		n++;
	}
	(void) munmap((void *)f, (size_t)st.st_size);
	return n;
}

static const char *
library_path(void)
{
	static Dl_info info;
	ck_assert(dladdr((void *)rpma_err_2str, &info) != 0);
	return info.dli_fname;
}

static int
listed(const char *const *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], name) == 0)
			return 1;
	return 0;
}

/* whether name is a function of native librpma 0.12.0, or of 1.x */
static int
native(const char *name, bool v1)
{
	return listed(both, N(both), name) ||
			(v1 ? listed(only_1, N(only_1), name) :
			      listed(only_0_12, N(only_0_12), name));
}

START_TEST(test_soname_and_exports)
{
	const char *path = library_path();
	ck_assert_msg(strstr(path, "librpma.so.0") != NULL,
			"the API comes from %s, not librpma.so.0", path);

	static struct export ex[512];
	size_t n = read_exports(path, ex, N(ex));
	size_t n012 = 0, n1 = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(ex[i].version, "LIBRPMA_0.12") == 0) {
			ck_assert_msg(native(ex[i].name, false),
					"%s@LIBRPMA_0.12 is not 0.12.0's",
					ex[i].name);
			/* a new link takes 1.x's, or 0.12's only one */
			ck_assert_int_eq(ex[i].is_default,
					!native(ex[i].name, true));
			n012++;
		} else if (strcmp(ex[i].version, "LIBRPMA_1.0") == 0) {
			ck_assert_msg(native(ex[i].name, true),
					"%s@LIBRPMA_1.0 is not 1.x's",
					ex[i].name);
			ck_assert(ex[i].is_default);
			n1++;
		} else {
			ck_abort_msg("%s@%s: exported, not native librpma's",
					ex[i].name, ex[i].version);
		}
	}
	ck_assert_uint_eq(n012, N(both) + N(only_0_12));
	ck_assert_uint_eq(n1, N(both) + N(only_1));
	/* as many as the libraries had */
	ck_assert_uint_eq(N(both) + N(only_0_12), 68);
	ck_assert_uint_eq(N(both) + N(only_1), 84);
}
END_TEST

/* each listed function resolves in its version, the others do not */
START_TEST(test_dlvsym)
{
	void *h = dlopen(library_path(), RTLD_NOW | RTLD_NOLOAD);
	ck_assert_ptr_nonnull(h);
	const char *const *lists[] = { both, only_0_12, only_1 };
	const size_t lens[] = { N(both), N(only_0_12), N(only_1) };
	for (size_t l = 0; l < N(lists); l++) {
		for (size_t i = 0; i < lens[l]; i++) {
			const char *f = lists[l][i];
			ck_assert_msg((dlvsym(h, f, "LIBRPMA_0.12") != NULL) ==
							native(f, false),
					"%s@LIBRPMA_0.12", f);
			ck_assert_msg((dlvsym(h, f, "LIBRPMA_1.0") != NULL) ==
							native(f, true),
					"%s@LIBRPMA_1.0", f);
		}
	}
	(void) dlclose(h);
}
END_TEST

typedef const char *err_2str_fn(int);
typedef const char *event_2str_fn(enum rpma_conn_event);

/* the texts 1.x added: 0.12's version keeps 0.12's */
START_TEST(test_changed_texts)
{
	err_2str_fn *e012 = (err_2str_fn *)dlvsym(RTLD_DEFAULT,
			"rpma_err_2str", "LIBRPMA_0.12");
	err_2str_fn *e1 = (err_2str_fn *)dlvsym(RTLD_DEFAULT,
			"rpma_err_2str", "LIBRPMA_1.0");
	ck_assert(e012 && e1);
	ck_assert_str_eq(e012(RPMA_E_AGAIN), "Unknown error");
	ck_assert_str_eq(e1(RPMA_E_AGAIN), "Temporary error, try again");
	ck_assert_str_eq(e012(RPMA_E_SHARED_CHANNEL), "Unknown error");
	ck_assert_str_eq(e1(RPMA_E_SHARED_CHANNEL),
			"Completion channel is shared");
	ck_assert_str_eq(e012(RPMA_E_NOT_SHARED_CHNL), "Unknown error");
	ck_assert_str_eq(e1(RPMA_E_NOT_SHARED_CHNL),
			"Completion channel is not shared");
	/* what did not change is the same text */
	const int same[] = { 0, RPMA_E_UNKNOWN, RPMA_E_NOSUPP,
		RPMA_E_PROVIDER, RPMA_E_NOMEM, RPMA_E_INVAL,
		RPMA_E_NO_COMPLETION, RPMA_E_NO_EVENT, 1, -100010 };
	for (size_t i = 0; i < N(same); i++)
		ck_assert_str_eq(e012(same[i]), e1(same[i]));

	event_2str_fn *v012 = (event_2str_fn *)dlvsym(RTLD_DEFAULT,
			"rpma_utils_conn_event_2str", "LIBRPMA_0.12");
	event_2str_fn *v1 = (event_2str_fn *)dlvsym(RTLD_DEFAULT,
			"rpma_utils_conn_event_2str", "LIBRPMA_1.0");
	ck_assert(v012 && v1);
	ck_assert_str_eq(v012(RPMA_CONN_UNREACHABLE),
			"Unsupported connection event");
	ck_assert_str_eq(v1(RPMA_CONN_UNREACHABLE), "Connection unreachable");
	for (int ev = RPMA_CONN_UNDEFINED; ev <= RPMA_CONN_REJECTED; ev++)
		ck_assert_str_eq(v012((enum rpma_conn_event)ev),
				v1((enum rpma_conn_event)ev));
}
END_TEST

/* The program's output line. */
static void
run_prog(const char *prog, char *out, size_t len)
{
	FILE *p = popen(prog, "r");
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(fgets(out, (int)len, p));
	ck_assert_int_eq(pclose(p), 0);
	out[strcspn(out, "\n")] = '\0';
}

/*
 * The last field is the versions the program's version needs name
 * (api_seen.c, what rpmad is told at hello)
 */
START_TEST(test_header_binds)
{
	char out[256];
	/* by default: 1.x's 84 functions and 0.12's rpma_write_atomic */
	run_prog("tests/unit/abi_prog", out, sizeof(out));
	ck_assert_str_eq(out, "85|Temporary error, try again|"
			"Connection unreachable|0.12+1.0");
	/* RPMA_API_0_12: 0.12.0's 68, nothing of 1.x */
	run_prog("tests/unit/abi_prog_0_12", out, sizeof(out));
	ck_assert_str_eq(out, "68|Unknown error|Unsupported connection "
			"event|0.12");
}
END_TEST

int
main(void)
{
	const TTest *const tc_abi[] = { test_soname_and_exports, test_dlvsym,
		test_changed_texts, test_header_binds, NULL };
	const struct th_tcase tcases[] = {
		{ "abi", .tests = tc_abi },
	};
	return check_run(th_suite("abi", tcases, TH_N(tcases)), CK_NORMAL);
}
