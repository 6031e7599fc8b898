#ifndef PARLEY_PLUGIN_INTERNAL_H
#define PARLEY_PLUGIN_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "parley_plugin.h"

/* Returns 1 allowed, 0 denied, -1 unknown or expired. */
int cache_lookup(const char *username, const char *client_id, int access, const char *topic, time_t now);
void cache_store(const char *username, const char *client_id, int access, const char *topic, bool allowed, time_t expires);
void cache_clear_matching(const char *username, const char *client_id, const char *topic);
void cache_evict(time_t now);
/* Drops a client's entries except READ (its subscriptions' deliveries). */
void cache_clear_decisions(const char *username, const char *client_id);
/* The READ entries across a graceful restart (plugin_opt_grants_file): written at the stop (0,
   or -1), read at the start and the file removed (the number kept, or -1: unreadable). */
int cache_save_reads(const char *path, time_t now);
int cache_load_reads(const char *path, time_t now, time_t latest);

/* The topics of the MQTT contract (Topic in ParleyCore names them; a test checks these
   against it). */
#define TOPIC_ROOM_PREFIX "chat-room/"
#define TOPIC_CHAT_IN_PREFIX "chat-in/"
#define TOPIC_NOTIFICATIONS_PREFIX "messenger-notifications/"
#define TOPIC_PRESENCE_PREFIX "user/"
#define TOPIC_PRESENCE_SUFFIX "/online"

/* The server's control topics: BrokerControl.topic and IngestProgress.topic in ParleyCore. */
#define CONTROL_TOPIC "$CONTROL/parley-auth/v1"
#define INGEST_PROGRESS_TOPIC "$CONTROL/parley-ingest/v1"

/* Names (names.c): whether a topic is one of the contract's (no wildcards, at most 256 bytes);
   whether a user name is a user id; the mark naming `client`'s connection, into `mark`. */
bool plausible_topic(const char *topic);
bool plausible_username(const char *username);
struct mosquitto;
void gone_mark(const struct mosquitto *client, char *mark, size_t size);

/* A cache kind besides MQTT's access values (1 read, 2 write, 4 subscribe). */
#define MARK_GONE 7          /* the client's connection ended (its will must not post) */

/* Applies a control command of the server's (control.c): MOSQ_ERR_SUCCESS, or the error. */
int control_apply(const void *payload, uint32_t length);

/* Revoked sessions, kept in `path` (NULL: in memory only) for `seconds` after each revocation. */
int revocations_open(const char *path, long seconds, time_t now);
void revocations_add(long long session, time_t now);
bool revocations_contains(long long session, time_t now);
void revocations_close(void);

/* Takes one of a client's `per_second` ACL look-ups of this second; false when spent. */
bool budget_take(const char *username, const char *client_id, time_t now, long per_second);
void budget_clear(void);

/* Presence (presence.c): the contract's payload for `username` (its length, or -1); a user's
   publish rebuilt in that shape, or refused; whether a topic is user/{id}/online. */
int presence_payload(const char *username, bool online, char *payload, size_t size);
struct mosquitto_evt_message;
int restamp_presence(struct mosquitto_evt_message *ed, const char *username);
bool is_presence_topic(const char *topic);
/* Publishes the user's retained offline presence (their connection ended). */
void presence_publish_offline(const char *username);

/* Calls `each` for every string of the array `name` in a flat JSON object (json.c); the
   integer `name` (0 when absent); whether `name` is true. Parley writes them without spaces. */
void json_each_string(const char *json, const char *name, void (*each)(const char *, void *), void *context);
long json_number(const char *json, const char *name);
bool json_true(const char *json, const char *name);

/* The hash of the plugin's tables (cache.c, budget.c). */
unsigned long text_hash(const char *text);

/* Asks the broker-auth endpoint; returns 1 allowed, 0 denied, -1 no answer. The answer's
   body goes to `reply` (NUL-terminated, cut at `reply_size`). */
int endpoint_acl(const char *url, long timeout_ms, const char *username, const char *client_id, const char *topic, int access,
                 char *reply, size_t reply_size);
void endpoint_cleanup(void);

/* The user properties the plugin stamps on chat-in (ParleyCore's SenderStamp names them). */
#define STAMP_USER "parley-user"
#define STAMP_SIGNATURE "parley-user-signature"

/* The ingest's subscriptions since the broker started (ingest.c): a server's SUBSCRIBE to one
   of them is noted; whether chat-in on `topic` reaches an ingest with room in its backlog
   (false: it may still wait for one, within `ingest_wait_seconds` of `ingest_start`, or the
   ingest is `ingest_backlog` behind); a chat-in passed on to it; the ingest's progress report
   (a JSON object of at most 1 KiB). */
extern long ingest_wait_seconds;
extern long ingest_backlog;
void ingest_start(time_t now);
void ingest_note_subscription(const char *filter);
bool ingest_takes(const char *topic, time_t now);
void ingest_passed(const char *topic);
void ingest_progress(const void *payload, size_t length);

/* The stamp's signature (stamp.c): lower-case hex and its NUL into `hex`; 0, or -1 on failure. */
#define STAMP_SIGNATURE_HEX 65
int stamp_signature(const unsigned char *key, size_t key_len, const char *user, const char *topic, const void *payload,
                    size_t payload_len, char hex[STAMP_SIGNATURE_HEX]);
/* Stamps a chat-in with its sender and that signature under `key`; MOSQ_ERR_ACL_DENIED when the
   client set either property itself. */
int stamp_chat_in(struct mosquitto_evt_message *ed, const char *username, const unsigned char *key, size_t key_len);

#endif
