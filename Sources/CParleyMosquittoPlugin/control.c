#include <mosquitto.h>
#include <mosquitto_broker.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_internal.h"

/* The server's commands on $CONTROL/parley-auth/v1 (BrokerControl in ParleyCore). */

static void kick(const char *client_id, void *context)
{
    (void)context;
    mosquitto_kick_client_by_clientid(client_id, false);
}
static void invalidate(const char *user_and_topic, void *context)
{
    (void)context;
    const char *space = strchr(user_and_topic, ' ');
    if (space == NULL || space - user_and_topic >= 32) return;
    char user[32];
    memcpy(user, user_and_topic, (size_t)(space - user_and_topic)); /* < 32, checked above */
    user[space - user_and_topic] = '\0';
    /* "*": every user's decisions on the topic (a user's changed privacy). */
    cache_clear_matching(strcmp(user, "*") == 0 ? NULL : user, NULL, space + 1);
}
static void revoke(const char *session, void *context)
{
    (void)context;
    revocations_add(strtoll(session, NULL, 10), time(NULL));
}

int control_apply(const void *payload, uint32_t length)
{
    if (length == 0 || length > 65536) return MOSQ_ERR_INVAL;
    char *json = malloc(length + 1);
    if (json == NULL) return MOSQ_ERR_NOMEM;
    memcpy(json, payload, length);
    json[length] = '\0';
    /* {"invalidate":[...] ("<user or *> <topic, + for any one level>"),"revokeSessions":[...],"kickClients":[...]}: in this order, so
       a kicked client that reconnects at once meets a fresh cache and a refused token. */
    json_each_string(json, "invalidate", invalidate, NULL);
    json_each_string(json, "revokeSessions", revoke, NULL);
    json_each_string(json, "kickClients", kick, NULL);
    free(json);
    return MOSQ_ERR_SUCCESS;
}
