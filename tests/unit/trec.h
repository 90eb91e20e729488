/* The members of a record as record_new writes them that every reader
 * consults and expects (run/record.h, record_view_edited), for tests that
 * write records by hand: a chat attempt whose checks passed. JSON text, to
 * follow the key and the verdict after a comma. */
#ifndef NEEDLE_TEST_TREC_H
#define NEEDLE_TEST_TREC_H

#define TREC_CHAT "\"kind\":\"chat\"," TREC_CHECKS
/* The same, but "kind". */
#define TREC_CHECKS                                                                                \
	"\"transport\":{\"ok\":true,\"failures\":[],\"messages\":[]},"           \
	"\"audit\":{\"ok\":true,\"enabled\":true,\"local_prompt_tokens\":5,"                       \
	"\"server_prompt_tokens\":5,\"usage_delta\":0,\"tolerance\":0},"                           \
	"\"grade\":{\"ok\":true,\"reasons\":[]},\"http_status\":200,"                              \
	"\"timing\":{\"first_byte_ms\":1,\"ttft_ms\":2,\"ttfc_ms\":2,\"e2e_ms\":3,"                \
	"\"tpot_ms\":null},\"usage\":null"

#endif
