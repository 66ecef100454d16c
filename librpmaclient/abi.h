/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * abi.h -- which of native librpma's symbol versions a call came through,
 * for the few functions whose behaviour 1.x changed (abi_v0_12.c)
 */

#ifndef RPMACLIENT_ABI_H
#define RPMACLIENT_ABI_H

enum rpma_abi {
	RPMA_ABI_0_12,	/* LIBRPMA_0.12: librpma 0.12.0 */
	RPMA_ABI_1,	/* LIBRPMA_1.0: librpma 1.0-1.3 */
};

#endif /* RPMACLIENT_ABI_H */
