import { Live } from './live.js';
import { Conversation } from './conversation.js';
import { filesOf } from './message-view.js';
import { startDirectChat, startGroup } from './people.js';
import { privacyDialog, quietHoursDialog } from './settings.js';
import { searchDialog } from './search.js';
import { h, clear, fullName, shortTime, notify } from './dom.js';

// The signed-in screen: the room list (newest activity first, unread counts, live) and the
// open conversation. Holds the rooms and the names of the users it has met.
export class Chat {
  constructor(api, root) {
    this.api = api;
    this.root = root;
    this.rooms = new Map();
    this.users = new Map();
    this.lookups = new Map();
    this.blocked = new Set();
    this.conversation = null;
    this.live = new Live(api, {
      onEvent: (topic, envelope) => this.receive(envelope),
      onState: (connected) => {
        if (!connected) this.offlineSince ??= new Date();
        this.showConnection(connected);
      },
      onReconnect: () => this.resynchronise(),
    });
  }

  get me() { return this.api.user; }

  async start() {
    this.users.set(this.me.id, this.me);
    this.render();
    await this.loadRooms();
    this.takeLive(false);
    this.loadBlocks().catch(() => {});
  }

  /// One tab of a browser holds the broker connection (the session has one MQTT client id,
  /// and two connections with it would take it from each other in turn). Another tab offers
  /// to take it over, as a lock other tabs can steal; without it, that tab sends over REST.
  takeLive(steal) {
    if (!navigator.locks) {
      this.live.start();
      return;
    }
    navigator.locks.request('parley-live', steal ? { steal: true } : { ifAvailable: true }, async (lock) => {
      if (!lock) {
        this.showElsewhere(true);
        return;
      }
      this.showElsewhere(false);
      if (steal) await this.resynchronise();
      this.live.start();
      await new Promise((resolve) => { this.releaseLive = resolve; });
    }).catch(() => {
      // Taken by another tab.
      this.live.stop();
      this.showElsewhere(true);
    });
  }

  showElsewhere(elsewhere) {
    this.elsewhere.hidden = !elsewhere;
    if (elsewhere) {
      this.connection.textContent = 'In another tab';
      this.connection.className = 'connection offline';
    }
  }

  async loadBlocks() {
    let cursor = null;
    for (let pages = 0; pages < 20; pages += 1) {
      const page = await this.api.get(`/v1/me/blocks?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      for (const user of page.users) this.blocked.add(user.id);
      cursor = page.nextCursor;
      if (!cursor) break;
    }
  }

  stop() {
    this.releaseLive?.();
    this.live.close();
    this.conversation?.close();
  }

  render() {
    this.roomList = h('ul', { class: 'rooms', 'aria-label': 'Rooms' });
    this.connection = h('span', { class: 'connection offline', role: 'status' }, 'Connecting…');
    this.pane = h('section', { class: 'conversation', 'aria-label': 'Conversation' },
      h('p', { class: 'empty' }, 'Choose a room, or start a chat.'));
    const sidebar = h('aside', { class: 'sidebar' },
      h('header', {},
        h('strong', { class: 'me' }, fullName(this.me)), this.connection,
        h('nav', { class: 'actions', 'aria-label': 'Account' },
          h('button', { type: 'button', onclick: () => startDirectChat(this) }, 'New chat'),
          h('button', { type: 'button', onclick: () => startGroup(this) }, 'New group'),
          h('button', { type: 'button', onclick: () => searchDialog(this) }, 'Search'),
          h('button', { type: 'button', onclick: () => quietHoursDialog(this) }, 'Quiet hours'),
          h('button', { type: 'button', onclick: () => privacyDialog(this) }, 'Privacy'),
          h('button', { type: 'button', onclick: () => this.api.logout() }, 'Sign out'))),
      this.roomList);
    this.elsewhere = h('p', { class: 'elsewhere', role: 'status', hidden: true },
      'Parley is open in another tab: this one gets no live updates. ',
      h('button', { type: 'button', onclick: () => this.takeLive(true) }, 'Use here'));
    sidebar.insertBefore(this.elsewhere, this.roomList);
    this.shell = h('div', { class: 'chat' }, sidebar, this.pane);
    clear(this.root).append(this.shell);
  }

  showConnection(connected) {
    this.connection.textContent = connected ? 'Online' : 'Reconnecting…';
    this.connection.className = `connection ${connected ? 'online' : 'offline'}`;
  }

  async loadRooms() {
    let cursor = null;
    const seen = new Set();
    do {
      const page = await this.api.get(`/v1/rooms?limit=100&messages=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      for (const room of page.rooms) {
        seen.add(room.id);
        this.keepRoom(room);
      }
      cursor = page.nextCursor;
    } while (cursor);
    for (const id of this.rooms.keys()) if (!seen.has(id)) this.rooms.delete(id);
    this.renderRooms();
  }

  keepRoom(room) {
    const known = this.rooms.get(room.id);
    room.preview = room.latestMessages?.at(-1) ?? known?.preview ?? null;
    if (room.peer) this.users.set(room.peer.id, room.peer);
    this.rooms.set(room.id, Object.assign(known ?? {}, room));
    return this.rooms.get(room.id);
  }

  roomName(room) {
    return room.type === 'twoparty' ? fullName(room.peer) : room.name || 'Group';
  }

  renderRooms() {
    const rooms = [...this.rooms.values()].sort((a, b) =>
      (b.lastMessageAt ?? b.createdAt).localeCompare(a.lastMessageAt ?? a.createdAt));
    clear(this.roomList);
    for (const room of rooms) {
      const open = this.conversation?.room.id === room.id;
      const preview = room.preview ? previewText(room.preview) : 'No messages yet';
      this.roomList.append(h('li', {},
        h('button', {
          type: 'button', class: `room${open ? ' open' : ''}`, 'aria-current': open ? 'true' : undefined,
          dataset: { roomId: room.id }, onclick: () => this.open(room.id),
        },
        h('span', { class: 'room-name' }, this.roomName(room)),
        h('span', { class: 'room-time' }, shortTime(room.lastMessageAt)),
        h('span', { class: 'room-preview' }, preview),
        room.unreadCount > 0 && h('span', {
          class: `unread${room.unreadMentionCount > 0 ? ' mentioned' : ''}`,
          'aria-label': `${room.unreadCount} unread${room.unreadMentionCount > 0 ? `, ${room.unreadMentionCount} mentioning you` : ''}`,
        }, `${room.unreadMentionCount > 0 ? '@ ' : ''}${room.unreadCount}`))));
    }
  }

  /// Opens a room, at its newest messages or (`seq`) at one message.
  async open(roomID, { seq } = {}) {
    const room = this.rooms.get(roomID) ?? this.keepRoom(await this.api.get(`/v1/rooms/${roomID}`));
    this.conversation?.close();
    this.live.watch(room);
    this.conversation = new Conversation(this, room);
    clear(this.pane).append(this.conversation.element);
    this.shell.classList.add('showing-room');
    this.renderRooms();
    await this.conversation.load(seq);
  }

  closeConversation() {
    this.conversation?.close();
    this.conversation = null;
    this.shell.classList.remove('showing-room');
    clear(this.pane).append(h('p', { class: 'empty' }, 'Choose a room, or start a chat.'));
    this.renderRooms();
  }

  /// An event from the broker: a room's topic or the user's notification topic.
  receive(envelope) {
    const data = envelope.data ?? {};
    const roomID = data.chatRoomId;
    const open = this.conversation && this.conversation.room.id === roomID ? this.conversation : null;
    switch (envelope.type) {
      case 'new-message-notification': {
        const room = this.rooms.get(roomID);
        if (!room) {
          this.loadRooms().catch(() => {});
          return;
        }
        if (data.seq > room.lastSeq) {
          room.lastSeq = data.seq;
          room.lastMessageAt = data.createdAt;
          room.preview = data;
          if (data.sentById !== this.me.id && !(open && open.isReading())) {
            room.unreadCount += 1;
            if ((data.mentions ?? []).includes(this.me.id)) room.unreadMentionCount += 1;
          }
          this.renderRooms();
        }
        open?.receive(data);
        if (data.sentById !== this.me.id) this.acknowledge(room, data.seq);
        break;
      }
      case 'room-summary': {
        // A busy room's window ended: its newest message, and this user's counts as the room
        // list has them (they replace what was counted here).
        const room = this.rooms.get(roomID);
        if (!room) {
          this.loadRooms().catch(() => {});
          return;
        }
        if (data.seq >= room.lastSeq) {
          room.lastSeq = data.seq;
          if (data.message) {
            room.lastMessageAt = data.message.createdAt;
            room.preview = data.message;
          }
          if (!(open && open.isReading())) {
            room.unreadCount = data.unreadCount;
            room.unreadMentionCount = data.unreadMentionCount;
          }
          this.renderRooms();
        }
        if (data.message && data.message.sentById !== this.me.id) this.acknowledge(room, data.seq);
        break;
      }
      case 'receipt-changed':
        open?.receiptChanged(data.userId, { delivered: data.deliveredSeq, read: data.readSeq });
        break;
      case 'message-edited':
        open?.replace(data.message);
        break;
      case 'message-deleted':
        open?.deleted(data);
        break;
      case 'reaction-changed':
        open?.reacted(data);
        break;
      case 'creating-message-info':
        if (data.userId !== this.me.id) open?.typing(data);
        break;
      case 'read-message-notification': {
        open?.receiptChanged(data.userId, { delivered: data.seq, read: data.seq });
        const room = this.rooms.get(roomID);
        if (room && data.userId === this.me.id && data.seq >= (room.lastReadSeq ?? 0)) {
          room.lastReadSeq = data.seq;
          room.unreadCount = Math.max(0, room.lastSeq - data.seq);
          if (room.unreadCount === 0) room.unreadMentionCount = 0;
          this.renderRooms();
        }
        break;
      }
      case 'notification-cleared': {
        // Read on another device: this one's unread count follows.
        const room = this.rooms.get(data.chatRoomId);
        if (room && data.readSeq >= (room.lastReadSeq ?? 0)) {
          room.lastReadSeq = data.readSeq;
          room.unreadCount = Math.max(0, room.lastSeq - data.readSeq);
          if (room.unreadCount === 0) room.unreadMentionCount = 0;
          this.renderRooms();
        }
        break;
      }
      case 'message-rejected':
        if (open) open.rejected(data);
        else if (data.reason) notify(data.reason);
        break;
      case 'chatroom-change-notification':
        this.loadRooms().then(() => {
          if (this.conversation && !this.rooms.has(this.conversation.room.id)) this.closeConversation();
        }).catch(() => {});
        break;
      default:
        break;
    }
  }

  /// Tells the room's members this device received it up to `seq` (a delivery receipt): over
  /// chat-in while connected, else over REST; each seq once.
  acknowledge(room, seq) {
    if (!seq || seq <= (room.acknowledgedSeq ?? 0)) return;
    room.acknowledgedSeq = seq;
    const envelope = { type: 'delivered-message-notification', data: { chatRoomId: room.id, seq }, hash: `d-${room.id}-${seq}` };
    this.live.publish(room, envelope)
      .catch(() => this.api.send('POST', `/v1/rooms/${room.id}/delivered`, { seq }))
      .catch(() => {});
  }

  /// After a reconnect: what changed while the client was away.
  async resynchronise() {
    const since = this.offlineSince;
    this.offlineSince = null;
    try {
      await this.loadRooms();
      await this.conversation?.repairGap(since);
    } catch (error) {
      notify(error.message);
    }
  }

  /// A user's name as an element that fills itself in once the user is known.
  userName(id) {
    const element = h('span', { class: 'user-name', dataset: { userId: id } }, this.users.has(id) ? fullName(this.users.get(id)) : '…');
    if (!this.users.has(id) && id != null) this.lookUp(id);
    return element;
  }

  lookUp(id) {
    if (this.lookups.has(id)) return this.lookups.get(id);
    const lookup = this.api.get(`/v1/users/${id}`).then((user) => {
      this.users.set(id, user);
      for (const element of this.root.querySelectorAll(`.user-name[data-user-id="${id}"]`)) {
        element.textContent = fullName(user);
      }
      return user;
    }).catch(() => null);
    this.lookups.set(id, lookup);
    return lookup;
  }
}

function previewText(message) {
  if (message.deletedAt) return 'Message deleted';
  if (message.content) return message.content.slice(0, 80);
  const files = filesOf(message);
  if (files.length > 1) return `📎 ${files.length} files`;
  return files.length ? `📎 ${files[0].name}` : '';
}
