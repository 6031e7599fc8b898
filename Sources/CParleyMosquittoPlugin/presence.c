/* Presence on user/{id}/online: the payload the broker publishes for a user, and the check
   and rebuild of a user's own presence publish (the contract's shape only). */
#include <mosquitto.h>
#include <mosquitto_broker.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "plugin_internal.h"

/* The contract's presence payload for `username`, stamped now; its length, or -1. */
int presence_payload(const char *username, bool online, char *payload, size_t size)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm utc;
    gmtime_r(&tv.tv_sec, &utc);
    char stamp[40];
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
    int len = snprintf(
        payload, size,
        "{\"type\":\"online-user-message\",\"data\":{\"lastActivity\":\"%s.%03ldZ\",\"online\":%s},"
        "\"hash\":\"%s-%s-%ld%03ld\"}",
        stamp, (long)(tv.tv_usec / 1000), online ? "true" : "false", online ? "online" : "offline", username,
        (long)tv.tv_sec, (long)(tv.tv_usec / 1000));
    return len < 0 || (size_t)len >= size ? -1 : len;
}

/* A client's presence publish is only a claim, online or not: subscribers get the contract's
   shape built here, whatever else the payload held. Anything but a small UTF-8 JSON object
   with one `"online": true|false` is refused. */
int restamp_presence(struct mosquitto_evt_message *ed, const char *username)
{
    if (ed->payloadlen < 2 || ed->payloadlen > 1024) return MOSQ_ERR_ACL_DENIED;
    char text[1025];
    memcpy(text, ed->payload, ed->payloadlen);
    text[ed->payloadlen] = '\0';
    if (strlen(text) != ed->payloadlen || mosquitto_validate_utf8(text, (int)ed->payloadlen) != MOSQ_ERR_SUCCESS) {
        return MOSQ_ERR_ACL_DENIED;
    }
    const char *first = strstr(text, "\"online\"");
    if (strstr(text, "\"online-user-message\"") == NULL) return MOSQ_ERR_ACL_DENIED;
    if (text[0] != '{' || text[ed->payloadlen - 1] != '}' || first == NULL || strstr(first + 1, "\"online\"") != NULL) {
        return MOSQ_ERR_ACL_DENIED;
    }
    const char *value = first + strlen("\"online\"");
    while (*value == ' ' || *value == '\t' || *value == '\n' || *value == '\r') value++;
    if (*value++ != ':') return MOSQ_ERR_ACL_DENIED;
    while (*value == ' ' || *value == '\t' || *value == '\n' || *value == '\r') value++;
    bool online;
    if (strncmp(value, "true", 4) == 0) {
        online = true;
    } else if (strncmp(value, "false", 5) == 0) {
        online = false;
    } else {
        return MOSQ_ERR_ACL_DENIED;
    }
    char payload[256];
    int len = presence_payload(username, online, payload, sizeof payload);
    if (len < 0) return MOSQ_ERR_ACL_DENIED;
    /* The broker frees the payload it handed us once it sees a new one. */
    void *copy = mosquitto_calloc(1, (size_t)len + 1);
    if (copy == NULL) return MOSQ_ERR_NOMEM;
    memcpy(copy, payload, (size_t)len);
    ed->payload = copy;
    ed->payloadlen = (uint32_t)len;
    return MOSQ_ERR_SUCCESS;
}

bool is_presence_topic(const char *topic)
{
    size_t len = strlen(topic), prefix = strlen(TOPIC_PRESENCE_PREFIX), suffix = strlen(TOPIC_PRESENCE_SUFFIX);
    return len > prefix + suffix && strncmp(topic, TOPIC_PRESENCE_PREFIX, prefix) == 0 &&
           strcmp(topic + len - suffix, TOPIC_PRESENCE_SUFFIX) == 0;
}

void presence_publish_offline(const char *username)
{
    char topic[64], payload[256];
    snprintf(topic, sizeof topic, TOPIC_PRESENCE_PREFIX "%s" TOPIC_PRESENCE_SUFFIX, username);
    int len = presence_payload(username, false, payload, sizeof payload);
    if (len >= 0) mosquitto_broker_publish_copy(NULL, topic, len, payload, 1, true, NULL);
}
