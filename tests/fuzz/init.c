/*
 * init — the start-up every fuzz target shares: libFuzzer calls
 * LLVMFuzzerInitialize before the first input, and driver.c does the same.
 * It points cJSON at mem's allocator (json_init), as needle's main does.
 */
#include "base/json.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	json_init();
	return 0;
}
