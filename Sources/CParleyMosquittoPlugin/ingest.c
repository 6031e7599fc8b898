/* Whether chat-in has an ingest to reach yet. mosquitto 2.0.11 does not persist shared
   subscriptions: after a restart the ingest's kept session comes back (with what was queued for
   it) but without `$share/parley-ingest/...` until the ingest reconnects and subscribes again,
   up to its reconnect back-off (5 s) later. A chat-in published meanwhile would be
   acknowledged to its sender (PUBACK 0x10, no subscribers) and dropped. */
#include <mosquitto.h>
#include <mosquitto_broker.h>
#include <string.h>

#include "plugin_internal.h"

/* Topic.ingestSubscriptions in ParleyCore: one for chat-in/{roomUid}, one for
   chat-in/{roomUid}/{userId}. */
#define INGEST_ROOM_FILTER "$share/parley-ingest/" TOPIC_CHAT_IN_PREFIX "+"
#define INGEST_SENDER_FILTER "$share/parley-ingest/" TOPIC_CHAT_IN_PREFIX "+/+"

long ingest_wait_seconds = 10;
static time_t started;
static bool room_form_subscribed;
static bool sender_form_subscribed;
static bool told;

void ingest_start(time_t now)
{
    started = now;
    room_form_subscribed = sender_form_subscribed = told = false;
}

void ingest_note_subscription(const char *filter)
{
    if (strcmp(filter, INGEST_ROOM_FILTER) == 0) room_form_subscribed = true;
    if (strcmp(filter, INGEST_SENDER_FILTER) == 0) sender_form_subscribed = true;
}

bool ingest_takes(const char *topic, time_t now)
{
    const char *rest = topic + strlen(TOPIC_CHAT_IN_PREFIX);
    bool subscribed = strchr(rest, '/') == NULL ? room_form_subscribed : sender_form_subscribed;
    /* Past the wait, as without this plugin: a broker started with no ingest at all must not
       keep every sender reconnecting. */
    if (subscribed || now - started >= ingest_wait_seconds) return true;
    if (!told) {
        told = true;
        mosquitto_log_printf(MOSQ_LOG_NOTICE, "parley: chat-in waits for the ingest to subscribe again; its senders "
                                              "are disconnected unacknowledged and send it again");
    }
    return false;
}
