/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_pdata.h -- how much private data a connection request or its answer
 * may carry, as both sides agree on it: what struct rpma_conn_private_data
 * can say (its len is a uint8_t). A transport may carry less (the RDMA CM:
 * 56 bytes with a request, 196 with an accept); rpmad says so when asked
 * for more.
 */

#ifndef RPMAD_COMMON_CONN_PDATA_H
#define RPMAD_COMMON_CONN_PDATA_H

#define CONN_PDATA_MAX 255

#endif /* RPMAD_COMMON_CONN_PDATA_H */
