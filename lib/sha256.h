/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_SIZE 32

/* SHA-256 (FIPS 180-4) of len bytes, all at once: what API keys are stored as. Pure. */
void sha256(const void *data, size_t len, uint8_t ret[SHA256_DIGEST_SIZE]);
