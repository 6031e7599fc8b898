import mqtt from '../vendor/mqtt.js';

// The broker connection over WebSocket: the user's notification topic always, and the topic
// of each room the client shows. Reconnects by itself; a refused login renews the session
// (the broker password is a token that expires with it) and tries again.
export class Live {
  constructor(api, { onEvent, onState, onReconnect }) {
    this.api = api;
    this.onEvent = onEvent;
    this.onState = onState;
    this.onReconnect = onReconnect;
    this.rooms = new Set();
    this.connectedOnce = false;
    this.unsubscribe = api.onSession((session) => {
      if (session && this.client) Object.assign(this.client.options, credentials(session.mqtt));
    });
  }

  start() {
    const broker = this.api.mqtt;
    const url = `${broker.tls ? 'wss' : 'ws'}://${broker.host}:${broker.websocketPort}/mqtt`;
    this.client = mqtt.connect(url, {
      protocolVersion: 5,
      clean: true,
      keepalive: 30,
      reconnectPeriod: 2000,
      connectTimeout: 10_000,
      resubscribe: false,
      ...credentials(broker),
    });
    this.client.on('connect', () => {
      const topics = [`messenger-notifications/${this.api.user.id}`, ...[...this.rooms].map(roomTopic)];
      this.client.subscribe(topics, { qos: 1 });
      this.onState(true);
      if (this.connectedOnce) this.onReconnect();
      this.connectedOnce = true;
    });
    this.client.on('close', () => this.onState(false));
    this.client.on('error', (error) => {
      // 134 bad user name or password, 135 not authorised: an expired token.
      if (error?.code === 134 || error?.code === 135 || error?.code === 4 || error?.code === 5) {
        // A failed renewal (the network) is tried again at the next reconnect; an ended
        // session ends the connection too.
        this.api.renew().catch(() => { if (!this.api.session) this.stop(); });
      }
    });
    this.client.on('message', (topic, payload) => {
      let envelope;
      try {
        envelope = JSON.parse(new TextDecoder().decode(payload));
      } catch {
        return;
      }
      if (envelope && typeof envelope.type === 'string') this.onEvent(topic, envelope);
    });
  }

  stop() {
    this.client?.end(true);
    this.client = null;
  }

  /// Stops for good: the session's changes are no longer followed either.
  close() {
    this.stop();
    this.unsubscribe();
  }

  get connected() { return Boolean(this.client?.connected); }

  watch(room) {
    this.rooms.add(room.uid);
    if (this.connected) this.client.subscribe(roomTopic(room.uid), { qos: 1 });
  }

  /// Publishes client input on the room's chat-in topic that names its sender
  /// (`chat-in/{roomUid}/{userId}`: the broker's ACL lets only that user write it, so it works
  /// with Parley's broker plugin and without); resolves on the broker's PUBACK.
  /// A PUBACK saying no subscriber took it (0x10: no ingest runs) is a failure: nobody will
  /// store it.
  publish(room, envelope) {
    return new Promise((resolve, reject) => {
      if (!this.connected) {
        reject(new Error('not connected'));
        return;
      }
      this.client.publish(`chat-in/${room.uid}/${this.api.user.id}`, JSON.stringify(envelope), { qos: 1 }, (error, packet) => {
        const reason = packet?.reasonCode ?? 0;
        if (error || reason >= 0x80 || reason === 0x10) reject(error ?? new Error(`not taken (${reason})`));
        else resolve();
      });
    });
  }
}

function roomTopic(uid) { return `chat-room/${uid}`; }

function credentials(broker) {
  return { clientId: broker.clientId, username: broker.username, password: broker.password };
}
