/*
 * Parley's mosquitto plugin (plugin API v5).
 *
 * - BASIC_AUTH: the server's identity by its password; a user by the signed MQTT token of
 *   ParleyCore (no network call), which must name this user and this client id.
 * - ACL_CHECK: the server may do anything; SUBSCRIBE and WRITE are asked of the broker-auth
 *   endpoint and cached, with what an allowed answer `implies` (a room's subscription implies
 *   writing its input); READ (every delivery) is answered from that cache only.
 * - $CONTROL/parley-auth/v1 (server only), a JSON object of string arrays:
 *   `invalidate` ("<userId> <topic>": drop that user's decisions for the topic, so
 *   deliveries of a lost room stop at once), `revokeSessions` (their tokens are refused from
 *   then on) and `kickClients` (disconnect them).
 * - MESSAGE on user/{id}/online: rebuilt in the contract's shape from the claim `online`.
 * - MESSAGE on chat-in/...: stamps the MQTT 5 user property `parley-user` with the
 *   publisher's user id and `parley-user-signature` with its HMAC under `stamp_key` (stamp.c;
 *   a client-supplied one of either gets the message dropped), so the ingest knows who wrote
 *   without trusting the payload, and a broker without this plugin cannot pass a client's own
 *   stamp off as one. With `stamp_sender false` it stamps nothing (as a broker without this
 *   plugin): Parley then reads the sender from the topic `chat-in/{roomUid}/{userId}`, which
 *   the ACL lets only that user write.
 * - And until the ingest has subscribed since the broker started, or while it is
 *   `ingest_backlog` chat-in behind (what it settled it reports on $CONTROL/parley-ingest/v1,
 *   server only), a user's chat-in is refused (ingest.c): PUBACK 0x87 for MQTT 5, the
 *   connection closed unacknowledged for MQTT 3.1.1; its client sends it again, instead of the
 *   broker acknowledging it to no subscriber, or dropping it past the ingest's queue.
 * - DISCONNECT: publishes the user's retained offline presence.
 *
 * Options (plugin_opt_*): token_key (base64, required), server_username, server_password,
 * acl_url (required), timeout_ms (500), cache_seconds (300), revocations_file (none: kept in
 * memory only, forgotten by a restart), revocation_seconds (86400: at least the MQTT token
 * lifetime), lookups_per_second (50: ACL questions one client may send Parley per second),
 * stamp_sender (true), stamp_key (base64 of 32+ bytes, required while stamp_sender is true),
 * ingest_wait_seconds (10: how long after its start the broker holds chat-in for the ingest),
 * ingest_backlog (8000: chat-in passed to the ingest and not reported settled, past which
 * chat-in is refused; 0: no bound), grants_file (none: the subscriptions' answers are asked
 * again after a restart; see read_access).
 */
#include <curl/curl.h>
#include <mosquitto.h>
#include <mosquitto_broker.h>
#include <mosquitto_plugin.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_internal.h"

/* Presence publishes allowed per client: one per this many seconds. */
#define PRESENCE_INTERVAL 10
/* A cache "access" kind of its own: when the client last published presence. */
#define PRESENCE_STAMP 64
/* How long a subscription's answer authorises its deliveries, unless invalidated: as long as
   a persistent session lasts (deploy/mosquitto: one day). */
#define SUBSCRIPTION_SECONDS 86400

static mosquitto_plugin_id_t *plugin_id;
static unsigned char token_key[128];
static size_t token_key_len;
static char *server_username;
static char *server_password;
static char *acl_url;
static long timeout_ms = 500;
static long cache_seconds = 300;
static char *revocations_file;
static char *grants_file;
/* At least the MQTT token lifetime (mqtt.tokenLifetime, 12 h by default). */
static long revocation_seconds = 86400;
static long lookups_per_second = 50;
static bool stamp_sender = true;
static unsigned char stamp_key[128];
static size_t stamp_key_len;

/* mosquitto 2.0.11's headers lack MOSQUITTO_PLUGIN_DECLARE_VERSION. */
int mosquitto_plugin_version(int supported_version_count, const int *supported_versions)
{
    for (int i = 0; i < supported_version_count; i++) {
        if (supported_versions[i] == 5) return 5;
    }
    return -1;
}

static bool is_server(const char *username)
{
    return username != NULL && server_username != NULL && strcmp(username, server_username) == 0;
}

static int on_basic_auth(int event, void *event_data, void *userdata)
{
    (void)event;
    (void)userdata;
    struct mosquitto_evt_basic_auth *ed = event_data;
    const char *client_id = mosquitto_client_id(ed->client);
    if (ed->username == NULL || ed->password == NULL || client_id == NULL) return MOSQ_ERR_AUTH;
    if (is_server(ed->username)) {
        size_t a = strlen(ed->password), b = server_password ? strlen(server_password) : 0;
        unsigned char diff = (unsigned char)(a != b);
        for (size_t i = 0; i < a && i < b; i++) diff |= (unsigned char)(ed->password[i] ^ server_password[i]);
        return diff == 0 && server_password != NULL ? MOSQ_ERR_SUCCESS : MOSQ_ERR_AUTH;
    }
    parley_token token;
    if (parley_token_verify(ed->password, token_key, token_key_len, time(NULL), &token) != PARLEY_TOKEN_OK) {
        return MOSQ_ERR_AUTH;
    }
    char user[32];
    snprintf(user, sizeof user, "%lld", token.user_id);
    if (strcmp(user, ed->username) != 0 || strcmp(token.client_id, client_id) != 0 || revocations_contains(token.session_id, time(NULL))) {
        return MOSQ_ERR_AUTH;
    }
    /* A new connection of this client id may write (its predecessor's will may not): the
       "gone" mark names the old connection alone (gone_mark). A new connection may reuse a
       freed one's address: whatever was marked under it is not this connection's. */
    char mark[32];
    gone_mark(ed->client, mark, sizeof mark);
    cache_clear_matching(ed->username, client_id, mark);
    return MOSQ_ERR_SUCCESS;
}

/* Who asked, and until when what they were told holds. */
struct asker {
    const char *username;
    const char *client_id;
    time_t expires;
};

/* One of the endpoint's `implies`, "<acc> <topic>": kept as an answer of its own. Which
   permissions an answer implies is Parley's rule (BrokerACL.implied), not the plugin's. */
static void keep_implied(const char *grant, void *context)
{
    const struct asker *asker = context;
    if (*grant < '0' || *grant > '9') return;
    char *rest = NULL;
    long access = strtol(grant, &rest, 10);
    if (*rest != ' ' || !plausible_topic(rest + 1)) return;
    if (access != MOSQ_ACL_READ && access != MOSQ_ACL_WRITE && access != MOSQ_ACL_SUBSCRIBE) return;
    cache_store(asker->username, asker->client_id, (int)access, rest + 1, true, asker->expires);
}

/* Asks the endpoint (1 allowed, 0 denied, -1 no answer); an allowed answer's implied
   permissions are kept for `cache_seconds`, as asked ones are. */
static int ask(const char *username, const char *client_id, const char *topic, int access, time_t now)
{
    char reply[1024];
    int answer = endpoint_acl(acl_url, timeout_ms, username, client_id, topic, access, reply, sizeof reply);
    if (answer == 1) {
        struct asker asker = {username, client_id, now + cache_seconds};
        json_each_string(reply, "implies", keep_implied, &asker);
    }
    return answer;
}

/* Deliveries follow the authorised subscription: its SUBSCRIBE's answer is kept, so a
   delivery costs no network call. A session the broker restored from its persistence (a
   restart) has its subscriptions and queued messages but none of those answers: they are
   asked for once here, rather than dropping what the session held until its client
   subscribes again. Not budgeted: a client can only cause as many as it holds subscriptions,
   each of which passed the budget. With `grants_file` a graceful stop keeps the answers for
   the next start: asked again, every restored subscription's first delivery held the broker's
   thread for a question, and under load one unanswered in time dropped that delivery. */
static int read_access(const char *username, const char *client_id, const char *topic, time_t now)
{
    int answer = cache_lookup(username, client_id, MOSQ_ACL_READ, topic, now);
    if (answer < 0) {
        answer = ask(username, client_id, topic, MOSQ_ACL_READ, now);
        if (answer < 0) return MOSQ_ERR_ACL_DENIED; /* no answer: fail closed, do not keep */
        cache_store(username, client_id, MOSQ_ACL_READ, topic, answer == 1, now + (answer == 1 ? SUBSCRIPTION_SECONDS : cache_seconds));
    }
    return answer == 1 ? MOSQ_ERR_SUCCESS : MOSQ_ERR_ACL_DENIED;
}

static int on_acl_check(int event, void *event_data, void *userdata)
{
    (void)event;
    (void)userdata;
    struct mosquitto_evt_acl_check *ed = event_data;
    const char *username = mosquitto_client_username(ed->client);
    const char *client_id = mosquitto_client_id(ed->client);
    if (is_server(username)) {
        if (ed->access == MOSQ_ACL_SUBSCRIBE && ed->topic != NULL) ingest_note_subscription(ed->topic);
        return MOSQ_ERR_SUCCESS;
    }
    if (username == NULL || client_id == NULL || ed->topic == NULL) return MOSQ_ERR_ACL_DENIED;
    if (ed->access == MOSQ_ACL_UNSUBSCRIBE) return MOSQ_ERR_SUCCESS;

    time_t now = time(NULL);
    /* A will is published after its client is gone, without passing the MESSAGE event that
       stamps the publisher: a gone client may not write at all. (Marked for writes only: a
       READ comes with every delivery.) */
    if (ed->access == MOSQ_ACL_WRITE) {
        char mark[32];
        gone_mark(ed->client, mark, sizeof mark);
        if (cache_lookup(username, client_id, MARK_GONE, mark, now) == 1) return MOSQ_ERR_ACL_DENIED;
    }
    if (!plausible_topic(ed->topic)) return MOSQ_ERR_ACL_DENIED;
    if (ed->access == MOSQ_ACL_READ) return read_access(username, client_id, ed->topic, now);
    int cached = cache_lookup(username, client_id, ed->access, ed->topic, now);
    int answer = cached;
    if (cached < 0) {
        if (!budget_take(username, client_id, now, lookups_per_second)) return MOSQ_ERR_ACL_DENIED;
        answer = ask(username, client_id, ed->topic, ed->access, now);
        if (answer < 0) return MOSQ_ERR_ACL_DENIED; /* no answer: fail closed, do not cache */
        cache_store(username, client_id, ed->access, ed->topic, answer == 1, now + cache_seconds);
    }
    if (answer == 1 && ed->access == MOSQ_ACL_WRITE && strncmp(ed->topic, TOPIC_PRESENCE_PREFIX, strlen(TOPIC_PRESENCE_PREFIX)) == 0) {
        /* Presence: at most one publish per interval and client. */
        /* Per connection, as the gone mark: a reconnecting client's old connection may end
           (and clear its stamps) after the new one published. */
        char stamp[32];
        gone_mark(ed->client, stamp, sizeof stamp);
        if (cache_lookup(username, client_id, PRESENCE_STAMP, stamp, now) == 1) return MOSQ_ERR_ACL_DENIED;
        cache_store(username, client_id, PRESENCE_STAMP, stamp, true, now + PRESENCE_INTERVAL);
    }
    if (cached >= 0) return cached ? MOSQ_ERR_SUCCESS : MOSQ_ERR_ACL_DENIED;
    if (ed->access == MOSQ_ACL_SUBSCRIBE && answer == 1) {
        /* The subscription authorises its deliveries until invalidated, across reconnects. */
        cache_store(username, client_id, MOSQ_ACL_READ, ed->topic, true, now + SUBSCRIPTION_SECONDS);
    }
    return answer == 1 ? MOSQ_ERR_SUCCESS : MOSQ_ERR_ACL_DENIED;
}

static int on_control(int event, void *event_data, void *userdata)
{
    (void)event;
    (void)userdata;
    struct mosquitto_evt_control *ed = event_data;
    if (!is_server(mosquitto_client_username(ed->client))) return MOSQ_ERR_ACL_DENIED;
    return control_apply(ed->payload, ed->payloadlen);
}

/* The ingest's progress (ingest.c). Always a success: any other answer would end the ingest's
   connection. */
static int on_ingest_progress(int event, void *event_data, void *userdata)
{
    (void)event;
    (void)userdata;
    struct mosquitto_evt_control *ed = event_data;
    if (is_server(mosquitto_client_username(ed->client))) ingest_progress(ed->payload, ed->payloadlen);
    return MOSQ_ERR_SUCCESS;
}

static int on_message(int event, void *event_data, void *userdata)
{
    (void)event;
    (void)userdata;
    struct mosquitto_evt_message *ed = event_data;
    if (ed->topic == NULL) return MOSQ_ERR_SUCCESS;
    const char *username = mosquitto_client_username(ed->client);
    if (is_server(username)) return MOSQ_ERR_SUCCESS;
    if (username == NULL) return MOSQ_ERR_ACL_DENIED;
    /* The ACL already let this client write this topic: it is the user's own presence. */
    if (is_presence_topic(ed->topic)) return restamp_presence(ed, username);
    if (strncmp(ed->topic, TOPIC_CHAT_IN_PREFIX, strlen(TOPIC_CHAT_IN_PREFIX)) != 0) return MOSQ_ERR_SUCCESS;
    /* Not taken now: MQTT 5 has a negative PUBACK (0x87, the one a plugin can give), and its
       client keeps its connection and sends again (or over REST). MQTT 3.1.1 has none, and a
       PUBACK would say "taken": any error but ACL_DENIED ends the connection without one, and
       the client's library sends it again after reconnecting. Ending v5 connections too made
       a storm under overload: each reconnect costs the broker's thread ACL look-ups. */
    if (!ingest_takes(ed->topic, time(NULL))) {
        return mosquitto_client_protocol_version(ed->client) == 5 ? MOSQ_ERR_ACL_DENIED : MOSQ_ERR_NOT_SUPPORTED;
    }
    int rc = stamp_sender ? stamp_chat_in(ed, username, stamp_key, stamp_key_len) : MOSQ_ERR_SUCCESS;
    if (rc == MOSQ_ERR_SUCCESS) ingest_passed(ed->topic);
    return rc;
}

static int on_disconnect(int event, void *event_data, void *userdata)
{
    (void)event;
    (void)userdata;
    struct mosquitto_evt_disconnect *ed = event_data;
    const char *username = mosquitto_client_username(ed->client);
    const char *client_id = mosquitto_client_id(ed->client);
    if (username == NULL || client_id == NULL || is_server(username) || !plausible_username(username)) {
        return MOSQ_ERR_SUCCESS;
    }
    /* A failed CONNECT also ends here, but without a client id: only authenticated
       connections have a presence to end. */
    time_t now = time(NULL);
    /* Its decisions end with its connection, except READ: a persistent session keeps its
       subscriptions. Its will may not post. */
    cache_clear_decisions(username, client_id);
    char mark[32];
    gone_mark(ed->client, mark, sizeof mark);
    cache_store(username, client_id, MARK_GONE, mark, true, now + 60);
    presence_publish_offline(username);
    return MOSQ_ERR_SUCCESS;
}

int mosquitto_plugin_init(mosquitto_plugin_id_t *identifier, void **userdata, struct mosquitto_opt *options, int count)
{
    (void)userdata;
    plugin_id = identifier;
    for (int i = 0; i < count; i++) {
        const char *k = options[i].key, *v = options[i].value;
        if (strcmp(k, "token_key") == 0) {
            long len = parley_base64_decode(v, token_key, sizeof token_key);
            token_key_len = len > 0 ? (size_t)len : 0;
        } else if (strcmp(k, "server_username") == 0) {
            server_username = strdup(v);
        } else if (strcmp(k, "server_password") == 0) {
            server_password = strdup(v);
        } else if (strcmp(k, "acl_url") == 0) {
            acl_url = strdup(v);
        } else if (strcmp(k, "timeout_ms") == 0) {
            timeout_ms = strtol(v, NULL, 10);
        } else if (strcmp(k, "cache_seconds") == 0) {
            cache_seconds = strtol(v, NULL, 10);
        } else if (strcmp(k, "revocations_file") == 0) {
            revocations_file = strdup(v);
        } else if (strcmp(k, "grants_file") == 0) {
            grants_file = strdup(v);
        } else if (strcmp(k, "revocation_seconds") == 0) {
            revocation_seconds = strtol(v, NULL, 10);
        } else if (strcmp(k, "lookups_per_second") == 0) {
            lookups_per_second = strtol(v, NULL, 10);
        } else if (strcmp(k, "stamp_sender") == 0) {
            stamp_sender = strcmp(v, "false") != 0;
        } else if (strcmp(k, "stamp_key") == 0) {
            long len = parley_base64_decode(v, stamp_key, sizeof stamp_key);
            stamp_key_len = len > 0 ? (size_t)len : 0;
        } else if (strcmp(k, "ingest_wait_seconds") == 0) {
            ingest_wait_seconds = strtol(v, NULL, 10);
        } else if (strcmp(k, "ingest_backlog") == 0) {
            ingest_backlog = strtol(v, NULL, 10);
        }
    }
    if (token_key_len < 32 || acl_url == NULL || timeout_ms <= 0 || cache_seconds <= 0 || revocation_seconds <= 0 ||
        lookups_per_second <= 0 || ingest_wait_seconds < 0 || ingest_backlog < 0) {
        mosquitto_log_printf(
            MOSQ_LOG_ERR, "parley: plugin_opt_token_key (32+ bytes) and plugin_opt_acl_url are required; "
                          "plugin_opt_timeout_ms, plugin_opt_cache_seconds, plugin_opt_revocation_seconds and "
                          "plugin_opt_lookups_per_second must be positive, plugin_opt_ingest_wait_seconds and "
                          "plugin_opt_ingest_backlog not negative");
        return MOSQ_ERR_INVAL;
    }
    if (stamp_sender && stamp_key_len < 32) {
        mosquitto_log_printf(MOSQ_LOG_ERR, "parley: plugin_opt_stamp_key (base64 of 32+ bytes, PARLEY_MQTT_STAMP_KEY) is "
                                           "required unless plugin_opt_stamp_sender is false");
        return MOSQ_ERR_INVAL;
    }
    ingest_start(time(NULL));
    if (grants_file != NULL) {
        int kept = cache_load_reads(grants_file, time(NULL), time(NULL) + SUBSCRIPTION_SECONDS);
        if (kept < 0) mosquitto_log_printf(MOSQ_LOG_WARNING, "parley: plugin_opt_grants_file %s cannot be read", grants_file);
        if (kept > 0) mosquitto_log_printf(MOSQ_LOG_NOTICE, "parley: %d subscription answers kept across the restart", kept);
    }
    if (revocations_open(revocations_file, revocation_seconds, time(NULL)) != 0) {
        mosquitto_log_printf(MOSQ_LOG_ERR, "parley: plugin_opt_revocations_file %s cannot be written", revocations_file);
        return MOSQ_ERR_INVAL;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    mosquitto_callback_register(plugin_id, MOSQ_EVT_BASIC_AUTH, on_basic_auth, NULL, NULL);
    mosquitto_callback_register(plugin_id, MOSQ_EVT_ACL_CHECK, on_acl_check, NULL, NULL);
    mosquitto_callback_register(plugin_id, MOSQ_EVT_CONTROL, on_control, CONTROL_TOPIC, NULL);
    mosquitto_callback_register(plugin_id, MOSQ_EVT_CONTROL, on_ingest_progress, INGEST_PROGRESS_TOPIC, NULL);
    mosquitto_callback_register(plugin_id, MOSQ_EVT_DISCONNECT, on_disconnect, NULL, NULL);
    mosquitto_callback_register(plugin_id, MOSQ_EVT_MESSAGE, on_message, NULL, NULL);
    return MOSQ_ERR_SUCCESS;
}

int mosquitto_plugin_cleanup(void *userdata, struct mosquitto_opt *options, int count)
{
    (void)userdata;
    (void)options;
    (void)count;
    mosquitto_callback_unregister(plugin_id, MOSQ_EVT_BASIC_AUTH, on_basic_auth, NULL);
    mosquitto_callback_unregister(plugin_id, MOSQ_EVT_ACL_CHECK, on_acl_check, NULL);
    mosquitto_callback_unregister(plugin_id, MOSQ_EVT_CONTROL, on_control, CONTROL_TOPIC);
    mosquitto_callback_unregister(plugin_id, MOSQ_EVT_CONTROL, on_ingest_progress, INGEST_PROGRESS_TOPIC);
    mosquitto_callback_unregister(plugin_id, MOSQ_EVT_DISCONNECT, on_disconnect, NULL);
    mosquitto_callback_unregister(plugin_id, MOSQ_EVT_MESSAGE, on_message, NULL);
    endpoint_cleanup();
    if (grants_file != NULL && cache_save_reads(grants_file, time(NULL)) != 0) {
        mosquitto_log_printf(MOSQ_LOG_WARNING, "parley: plugin_opt_grants_file %s cannot be written", grants_file);
    }
    cache_clear_matching(NULL, NULL, NULL);
    budget_clear();
    revocations_close();
    free(revocations_file);
    free(grants_file);
    revocations_file = grants_file = NULL;
    curl_global_cleanup();
    free(server_username);
    free(server_password);
    free(acl_url);
    server_username = server_password = acl_url = NULL;
    return MOSQ_ERR_SUCCESS;
}
