// SPDX-License-Identifier: BSD-3-Clause
/*
 * mem_allocator.c -- run by it_memory under another allocator
 * (LD_PRELOAD=libjemalloc.so.2): register, deregister and free blocks of
 * several sizes, then calloc must give zeros. Exit status 0 when it did.
 *
 * usage: mem_allocator ADDRESS  (rpmad from $RPMAD_SOCKET)
 */

#include <librpma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main(int argc, char *argv[])
{
	if (argc != 2)
		return 2;
	struct ibv_context *dev = NULL;
	struct rpma_peer *peer = NULL;
	if (rpma_utils_get_ibv_context(argv[1], RPMA_UTIL_IBV_CONTEXT_LOCAL,
			&dev) || rpma_peer_new(dev, &peer))
		return 3;
	static const size_t sizes[] = { 100 * 1000, 1 << 20, 4 << 20 };
	for (int round = 0; round < 20; round++) {
		for (size_t s = 0; s < 3; s++) {
			unsigned char *p = malloc(sizes[s]);
			if (p == NULL)
				return 4;
			memset(p, 0xaa, sizes[s]);
			struct rpma_mr_local *mr = NULL;
			if (rpma_mr_reg(peer, p, sizes[s],
					RPMA_MR_USAGE_WRITE_DST, &mr) ||
					rpma_mr_dereg(&mr))
				return 5;
			free(p);
			unsigned char *q = calloc(1, sizes[s]);
			if (q == NULL)
				return 6;
			for (size_t i = 0; i < sizes[s]; i++) {
				if (q[i]) {
					(void) fprintf(stderr, "mem_allocator: "
							"round %d, %zu bytes: "
							"calloc'ed byte %zu "
							"is %#x\n", round,
							sizes[s], i, q[i]);
					return 1;
				}
			}
			free(q);
		}
	}
	return rpma_peer_delete(&peer) ? 7 : 0;
}
