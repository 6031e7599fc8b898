/* The signature on the sender the plugin stamps on chat-in (ParleyCore's SenderStamp): lower-case
   hex of HMAC-SHA256(key, "v1" NUL user NUL topic NUL SHA-256(payload)). */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_internal.h"

int stamp_signature(const unsigned char *key, size_t key_len, const char *user, const char *topic, const void *payload,
                    size_t payload_len, char hex[STAMP_SIGNATURE_HEX])
{
    size_t user_len = strlen(user), topic_len = strlen(topic);
    size_t len = 3 + user_len + 1 + topic_len + 1 + SHA256_DIGEST_LENGTH;
    unsigned char *message = malloc(len);
    if (message == NULL) return -1;
    unsigned char *p = message;
    memcpy(p, "v1", 3); /* with its NUL */
    p += 3;
    memcpy(p, user, user_len + 1);
    p += user_len + 1;
    memcpy(p, topic, topic_len + 1);
    p += topic_len + 1;
    SHA256(payload_len > 0 ? payload : (const void *)"", payload_len, p);
    unsigned char code[EVP_MAX_MD_SIZE];
    unsigned int code_len = 0;
    unsigned char *signed_ = HMAC(EVP_sha256(), key, (int)key_len, message, len, code, &code_len);
    free(message);
    if (signed_ == NULL || code_len != SHA256_DIGEST_LENGTH) return -1;
    static const char digits[] = "0123456789abcdef";
    for (unsigned int i = 0; i < code_len; i++) {
        hex[2 * i] = digits[code[i] >> 4];
        hex[2 * i + 1] = digits[code[i] & 0x0f];
    }
    hex[2 * code_len] = '\0';
    return 0;
}
