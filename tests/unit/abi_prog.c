// SPDX-License-Identifier: BSD-3-Clause
/*
 * abi_prog.c -- a program built twice (test_abi.c runs both): as is, and
 * with -DRPMA_API_0_12. It takes the address of every function its API
 * level declares, so that each is a reference the loader must resolve,
 * and prints what two functions whose texts 1.x changed say, and which
 * symbol versions the library tells rpmad this process runs (api_seen.c,
 * built into this program).
 */

#include <stdio.h>

#include "api_seen.h"
#include "librpma.h"

#define F(name) (void (*)(void))name

static void (*const functions[])(void) = {
	F(rpma_conn_apply_remote_peer_cfg), F(rpma_conn_cfg_delete),
	F(rpma_conn_cfg_get_cq_size), F(rpma_conn_cfg_get_rcq_size),
	F(rpma_conn_cfg_get_rq_size), F(rpma_conn_cfg_get_sq_size),
	F(rpma_conn_cfg_get_timeout), F(rpma_conn_cfg_new),
	F(rpma_conn_cfg_set_cq_size), F(rpma_conn_cfg_set_rcq_size),
	F(rpma_conn_cfg_set_rq_size), F(rpma_conn_cfg_set_sq_size),
	F(rpma_conn_cfg_set_timeout), F(rpma_conn_delete),
	F(rpma_conn_disconnect), F(rpma_conn_get_cq),
	F(rpma_conn_get_event_fd), F(rpma_conn_get_private_data),
	F(rpma_conn_get_qp_num), F(rpma_conn_get_rcq),
	F(rpma_conn_next_event), F(rpma_conn_req_connect),
	F(rpma_conn_req_delete), F(rpma_conn_req_get_private_data),
	F(rpma_conn_req_new), F(rpma_conn_req_recv), F(rpma_cq_get_fd),
	F(rpma_cq_get_wc), F(rpma_cq_wait), F(rpma_ep_get_fd),
	F(rpma_ep_listen), F(rpma_ep_next_conn_req), F(rpma_ep_shutdown),
	F(rpma_err_2str), F(rpma_flush), F(rpma_log_get_threshold),
	F(rpma_log_set_function), F(rpma_log_set_threshold),
	F(rpma_mr_advise), F(rpma_mr_dereg), F(rpma_mr_get_descriptor),
	F(rpma_mr_get_descriptor_size), F(rpma_mr_get_ptr),
	F(rpma_mr_get_size), F(rpma_mr_reg), F(rpma_mr_remote_delete),
	F(rpma_mr_remote_from_descriptor), F(rpma_mr_remote_get_flush_type),
	F(rpma_mr_remote_get_size), F(rpma_peer_cfg_delete),
	F(rpma_peer_cfg_from_descriptor), F(rpma_peer_cfg_get_descriptor),
	F(rpma_peer_cfg_get_descriptor_size),
	F(rpma_peer_cfg_get_direct_write_to_pmem), F(rpma_peer_cfg_new),
	F(rpma_peer_cfg_set_direct_write_to_pmem), F(rpma_peer_delete),
	F(rpma_peer_new), F(rpma_read), F(rpma_recv), F(rpma_send),
	F(rpma_send_with_imm), F(rpma_utils_conn_event_2str),
	F(rpma_utils_get_ibv_context), F(rpma_utils_ibv_context_is_odp_capable),
	F(rpma_write), F(rpma_write_atomic), F(rpma_write_with_imm),
#ifndef RPMA_API_0_12
	F(rpma_atomic_write), F(rpma_conn_cfg_get_compl_channel),
	F(rpma_conn_cfg_get_srq), F(rpma_conn_cfg_set_compl_channel),
	F(rpma_conn_cfg_set_srq), F(rpma_conn_get_compl_fd),
	F(rpma_conn_wait), F(rpma_srq_cfg_delete),
	F(rpma_srq_cfg_get_rcq_size), F(rpma_srq_cfg_get_rq_size),
	F(rpma_srq_cfg_new), F(rpma_srq_cfg_set_rcq_size),
	F(rpma_srq_cfg_set_rq_size), F(rpma_srq_delete), F(rpma_srq_get_rcq),
	F(rpma_srq_new), F(rpma_srq_recv),
#endif
};

int
main(void)
{
	size_t n = 0;
	for (size_t i = 0; i < sizeof(functions) / sizeof(functions[0]); i++)
		n += functions[i] != NULL;
	/* RPMA_E_AGAIN and the event 4 (1.x's RPMA_CONN_UNREACHABLE) */
	char api[32];
	api_seen(api, sizeof(api));
	printf("%zu|%s|%s|%s\n", n, rpma_err_2str(-100007),
			rpma_utils_conn_event_2str((enum rpma_conn_event)4),
			api);
	return 0;
}
