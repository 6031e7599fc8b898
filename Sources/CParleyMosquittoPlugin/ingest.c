/* Whether chat-in has an ingest to reach yet, and room in its backlog.

   Reach: mosquitto 2.0.11 does not persist shared subscriptions: after a restart the ingest's
   kept session comes back (with what was queued for it) but without `$share/parley-ingest/...`
   until the ingest reconnects and subscribes again, up to its reconnect back-off (5 s) later.
   A chat-in published meanwhile would be acknowledged to its sender (PUBACK 0x10, no
   subscribers) and dropped.

   Backlog: behind the ingest's window of unacknowledged deliveries the broker queues at most
   `max_queued_messages` for it and drops the rest, although each was acknowledged to its
   sender. So the plugin counts the chat-in it passed to the ingest, the ingest reports what
   it settled ($CONTROL/parley-ingest/v1, IngestProgress in ParleyCore), and past
   `ingest_backlog` outstanding a chat-in is refused, as above (plugin.c: 0x87 for MQTT 5,
   the connection closed without a PUBACK for 3.1.1). An ingest that
   reports itself idle has nothing the broker holds for it: the count restarts from zero, which
   also mends what a lost report or a message dropped elsewhere left in it. */
#include <mosquitto.h>
#include <mosquitto_broker.h>
#include <string.h>

#include "plugin_internal.h"

/* Topic.ingestSubscriptions in ParleyCore: one for chat-in/{roomUid}, one for
   chat-in/{roomUid}/{userId}. */
#define INGEST_ROOM_FILTER "$share/parley-ingest/" TOPIC_CHAT_IN_PREFIX "+"
#define INGEST_SENDER_FILTER "$share/parley-ingest/" TOPIC_CHAT_IN_PREFIX "+/+"

long ingest_wait_seconds = 10;
long ingest_backlog = 8000;
static time_t started;
/* Chat-in passed to a subscribed ingest and not yet reported settled. */
static long outstanding;
static bool refusing;
static bool room_form_subscribed;
static bool sender_form_subscribed;
static bool told;

void ingest_start(time_t now)
{
    started = now;
    room_form_subscribed = sender_form_subscribed = told = refusing = false;
    outstanding = 0;
}

void ingest_note_subscription(const char *filter)
{
    if (strcmp(filter, INGEST_ROOM_FILTER) == 0) room_form_subscribed = true;
    if (strcmp(filter, INGEST_SENDER_FILTER) == 0) sender_form_subscribed = true;
}

static bool subscribed_for(const char *topic)
{
    const char *rest = topic + strlen(TOPIC_CHAT_IN_PREFIX);
    return strchr(rest, '/') == NULL ? room_form_subscribed : sender_form_subscribed;
}

bool ingest_takes(const char *topic, time_t now)
{
    bool subscribed = subscribed_for(topic);
    /* Past the wait, as without this plugin: a broker started with no ingest at all must not
       keep every sender reconnecting. */
    if (!subscribed && now - started < ingest_wait_seconds) {
        if (!told) {
            told = true;
            mosquitto_log_printf(MOSQ_LOG_NOTICE, "parley: chat-in waits for the ingest to subscribe again; it is "
                                                  "refused meanwhile and its senders send it again");
        }
        return false;
    }
    if (subscribed && ingest_backlog > 0 && outstanding >= ingest_backlog) {
        if (!refusing) {
            refusing = true;
            mosquitto_log_printf(MOSQ_LOG_WARNING, "parley: the ingest is %ld chat-in behind; chat-in is refused "
                                                   "(its senders send it again) until it catches up", outstanding);
        }
        return false;
    }
    return true;
}

void ingest_passed(const char *topic)
{
    if (subscribed_for(topic)) outstanding++;
}

void ingest_progress(const void *payload, size_t length)
{
    if (length == 0 || length > 1024) return;
    char json[1025];
    memcpy(json, payload, length);
    json[length] = '\0';
    long settled = json_number(json, "settled");
    if (settled > 0) outstanding = settled < outstanding ? outstanding - settled : 0;
    if (json_true(json, "idle")) outstanding = 0;
    if (refusing && outstanding < ingest_backlog) {
        refusing = false;
        mosquitto_log_printf(MOSQ_LOG_NOTICE, "parley: the ingest caught up; chat-in is taken again");
    }
}
