import { h, clear } from './dom.js';

// Typing in a room: the user's own notices over MQTT, at most one every three seconds (the
// server allows ten in ten), and a line naming who else is typing, each for six seconds
// after their last notice.
export class Typing {
  constructor(conversation) {
    this.conversation = conversation;
    this.typers = new Map();
    this.sentAt = null;
    this.line = h('p', { class: 'typing', 'aria-live': 'polite' });
    this.timer = setInterval(() => this.render(), 1000);
  }

  stop() { clearInterval(this.timer); }

  /// The user started (`true`) or stopped typing.
  send(creating) {
    const now = Date.now();
    if (creating && this.sentAt && now - this.sentAt < 3000) return;
    if (!creating && !this.sentAt) return;
    this.sentAt = creating ? now : null;
    const { chat, room } = this.conversation;
    const envelope = {
      type: 'creating-message-info', data: { chatRoomId: room.id, creating, time: new Date().toISOString() },
      hash: crypto.randomUUID(),
    };
    chat.live.publish(room, envelope).catch(() => {});
  }

  /// Another member's notice; a message of theirs ends their typing too (`creating: false`).
  received(data) {
    if (data.creating) this.typers.set(data.userId, Date.now());
    else this.typers.delete(data.userId);
    this.render();
  }

  render() {
    const now = Date.now();
    for (const [user, at] of this.typers) if (now - at > 6000) this.typers.delete(user);
    clear(this.line);
    const users = [...this.typers.keys()];
    if (users.length === 0) return;
    users.forEach((user, index) => {
      if (index > 0) this.line.append(', ');
      this.line.append(this.conversation.chat.userName(user));
    });
    this.line.append(users.length === 1 ? ' is typing…' : ' are typing…');
  }
}
