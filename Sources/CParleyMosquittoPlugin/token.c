/* The MQTT password token of ParleyCore's MQTTToken, verified without a network call. */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parley_plugin.h"

static int base64_value(int c, bool url)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (url ? c == '-' : c == '+') return 62;
    if (url ? c == '_' : c == '/') return 63;
    return -1;
}

static long base64_decode(const char *in, size_t len, unsigned char *out, size_t cap, bool url)
{
    size_t o = 0;
    unsigned int buffer = 0;
    int bits = 0;
    for (size_t i = 0; i < len; i++) {
        if (!url && in[i] == '=') break;
        int v = base64_value((unsigned char)in[i], url);
        if (v < 0) return -1;
        buffer = (buffer << 6) | (unsigned int)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o >= cap) return -1;
            out[o++] = (unsigned char)((buffer >> bits) & 0xFF);
        }
    }
    /* Canonical encodings only: left-over bits must be zero (one token, one spelling). */
    if (bits > 0 && (buffer & ((1u << bits) - 1)) != 0) return -1;
    return (long)o;
}

long parley_base64url_decode(const char *in, size_t in_len, unsigned char *out, size_t out_cap)
{
    return base64_decode(in, in_len, out, out_cap, true);
}

long parley_base64_decode(const char *in, unsigned char *out, size_t out_cap)
{
    return base64_decode(in, strlen(in), out, out_cap, false);
}

int parley_token_verify(const char *token, const unsigned char *key, size_t key_len, time_t now, parley_token *out)
{
    if (token == NULL || strlen(token) > 512 || strncmp(token, "v1.", 3) != 0) return PARLEY_TOKEN_MALFORMED;
    const char *payload = token + 3;
    const char *dot = strchr(payload, '.');
    if (dot == NULL || strchr(dot + 1, '.') != NULL) return PARLEY_TOKEN_MALFORMED;

    unsigned char signature[64];
    long signature_len = parley_base64url_decode(dot + 1, strlen(dot + 1), signature, sizeof signature);
    if (signature_len < 0) return PARLEY_TOKEN_MALFORMED;

    unsigned char expected[EVP_MAX_MD_SIZE];
    unsigned int expected_len = 0;
    size_t signed_len = (size_t)(dot - token);
    if (HMAC(EVP_sha256(), key, (int)key_len, (const unsigned char *)token, signed_len, expected, &expected_len) == NULL) {
        return PARLEY_TOKEN_BAD_SIGNATURE;
    }
    if ((unsigned int)signature_len != expected_len || CRYPTO_memcmp(signature, expected, expected_len) != 0) {
        return PARLEY_TOKEN_BAD_SIGNATURE;
    }

    char text[256];
    long text_len = parley_base64url_decode(payload, (size_t)(dot - payload), (unsigned char *)text, sizeof text - 1);
    if (text_len < 0) return PARLEY_TOKEN_MALFORMED;
    text[text_len] = '\0';

    /* user:client:session:expiry; the client id has no ':' (Parley issues base64url ids). */
    char *fields[4];
    char *cursor = text;
    for (int i = 0; i < 4; i++) {
        fields[i] = cursor;
        char *colon = strchr(cursor, ':');
        if (i < 3) {
            if (colon == NULL) return PARLEY_TOKEN_MALFORMED;
            *colon = '\0';
            cursor = colon + 1;
        } else if (colon != NULL) {
            return PARLEY_TOKEN_MALFORMED;
        }
    }
    char *end = NULL;
    out->user_id = strtoll(fields[0], &end, 10);
    if (*fields[0] == '\0' || *end != '\0') return PARLEY_TOKEN_MALFORMED;
    size_t client_len = strlen(fields[1]);
    if (client_len == 0 || client_len > 64) return PARLEY_TOKEN_MALFORMED;
    memcpy(out->client_id, fields[1], client_len + 1);
    out->session_id = strtoll(fields[2], &end, 10);
    if (*fields[2] == '\0' || *end != '\0') return PARLEY_TOKEN_MALFORMED;
    out->expires_at = strtoll(fields[3], &end, 10);
    if (*fields[3] == '\0' || *end != '\0') return PARLEY_TOKEN_MALFORMED;
    if ((long long)now >= out->expires_at) return PARLEY_TOKEN_EXPIRED;
    return PARLEY_TOKEN_OK;
}
