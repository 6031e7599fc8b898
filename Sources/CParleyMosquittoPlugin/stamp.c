/* The signature on the sender the plugin stamps on chat-in (ParleyCore's SenderStamp): lower-case
   hex of HMAC-SHA256(key, "v1" NUL user NUL topic NUL SHA-256(payload)). */
#include <mosquitto.h>
#include <mosquitto_broker.h>
#include <mqtt_protocol.h>
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

/* Stamps a chat-in with its sender and the signature (stamp.c); a client's own stamp is refused. */
int stamp_chat_in(struct mosquitto_evt_message *ed, const char *username, const unsigned char *key, size_t key_len)
{
    char *name = NULL;
    const mosquitto_property *p = mosquitto_property_read_string_pair(
        ed->properties, MQTT_PROP_USER_PROPERTY, &name, NULL, false);
    while (p != NULL) {
        bool forged = name != NULL && (strcmp(name, STAMP_USER) == 0 || strcmp(name, STAMP_SIGNATURE) == 0);
        free(name);
        name = NULL;
        if (forged) return MOSQ_ERR_ACL_DENIED;
        p = mosquitto_property_read_string_pair(p, MQTT_PROP_USER_PROPERTY, &name, NULL, true);
    }
    free(name);
    char signature[STAMP_SIGNATURE_HEX];
    if (stamp_signature(key, key_len, username, ed->topic, ed->payload, ed->payloadlen, signature) != 0) {
        return MOSQ_ERR_NOMEM;
    }
    int added = mosquitto_property_add_string_pair(&ed->properties, MQTT_PROP_USER_PROPERTY, STAMP_USER, username);
    if (added != MOSQ_ERR_SUCCESS) return added;
    return mosquitto_property_add_string_pair(&ed->properties, MQTT_PROP_USER_PROPERTY, STAMP_SIGNATURE, signature);
}
