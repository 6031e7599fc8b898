/* The names the plugin takes from clients before asking Parley anything: topics a client may
   ever use, user names, and the mark that names one connection. */
#include <mosquitto.h>
#include <string.h>

#include "plugin_internal.h"

/* Topics a client may ever use (BrokerACL in ParleyCore decides the rest): anything else is
   denied here, without a network call. */
bool plausible_topic(const char *topic)
{
    static const char *prefixes[] = {
        TOPIC_ROOM_PREFIX, TOPIC_CHAT_IN_PREFIX, TOPIC_NOTIFICATIONS_PREFIX, TOPIC_PRESENCE_PREFIX};
    if (strlen(topic) > 256 || strpbrk(topic, "+#") != NULL) return false;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        if (strncmp(topic, prefixes[i], strlen(prefixes[i])) == 0) return true;
    }
    return false;
}

/* User names are user ids: digits only. */
bool plausible_username(const char *username)
{
    size_t len = strlen(username);
    return len > 0 && len <= 19 && strspn(username, "0123456789") == len;
}

/* The "gone" mark names the connection (its context), not only the client id: when a client
   takes over its session (a reconnect before the broker noticed the old connection end, or a
   kept session restored after a broker restart), the old context's DISCONNECT comes after the
   new connection's login, and a mark by client id would refuse the new connection's every
   publish (0x87) for a minute. The chaos run found that. */
void gone_mark(const struct mosquitto *client, char *mark, size_t size)
{
    snprintf(mark, size, "*%p", (const void *)client);
}
