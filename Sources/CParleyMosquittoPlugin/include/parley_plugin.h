#ifndef PARLEY_PLUGIN_H
#define PARLEY_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Token verification, shared with the tests (Tests/Vectors/mqtt-token.json). */
typedef struct {
    long long user_id;
    char client_id[65];
    long long session_id;
    long long expires_at;
} parley_token;

enum parley_token_result {
    PARLEY_TOKEN_OK = 0,
    PARLEY_TOKEN_MALFORMED = 1,
    PARLEY_TOKEN_BAD_SIGNATURE = 2,
    PARLEY_TOKEN_EXPIRED = 3
};

/* Verifies `v1.<payload>.<signature>` with the HMAC-SHA256 key; fills `out` on success. */
int parley_token_verify(const char *token, const unsigned char *key, size_t key_len, time_t now, parley_token *out);

/* Decodes base64url without padding; returns the length or -1. */
long parley_base64url_decode(const char *in, size_t in_len, unsigned char *out, size_t out_cap);

/* Decodes standard base64 (the key option); returns the length or -1. */
long parley_base64_decode(const char *in, unsigned char *out, size_t out_cap);

#endif
