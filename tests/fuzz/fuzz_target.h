/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_target.h -- what every fuzz target defines (the libFuzzer entry
 * points). With --enable-fuzzing, libFuzzer's main drives them; without,
 * fuzz_replay.c runs them over their corpus (tests/fuzz/corpus/<name>)
 * as a make check test, so the corpus stays valid and the code compiles.
 */

#ifndef FUZZ_TARGET_H
#define FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>

/* LLVMFuzzerTestOneInput -- run one input; always returns 0 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* LLVMFuzzerInitialize -- once, before the first input */
int LLVMFuzzerInitialize(int *argc, char ***argv);

#endif /* FUZZ_TARGET_H */
