/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * th_peer.h -- a peer of this host for tests that use the library outside
 * the API tests' fixtures (api_helpers.h): operating rpmad, its tenants
 */

#ifndef TH_PEER_H
#define TH_PEER_H

#include <librpma.h>

/*
 * th_local_peer -- a new peer on the device of 127.0.0.1, or NULL (the
 * call that failed and its error on stderr): a child of the test reports
 * it as it must, a test asserts on it
 */
struct rpma_peer *th_local_peer(void);

#endif /* TH_PEER_H */
