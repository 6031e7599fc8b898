import { h, clear, notify } from './dom.js';
import { filesOf, renderMessage, signedFile, withFile } from './message-view.js';
import { membersDialog } from './people.js';
import { roomSettingsDialog } from './settings.js';
import { toggleBlock } from './moderation.js';
import { Mentions } from './mentions.js';
import { Typing } from './typing.js';

const PAGE = 50;

// One open room: its history (scrolling back loads older pages), live messages, sending over
// MQTT with a pending state until the stored message comes back (REST when the broker does
// not take it), typing, read markers, files, edits, deletions and reactions.
export class Conversation {
  constructor(chat, room) {
    this.chat = chat;
    this.api = chat.api;
    this.room = room;
    this.messages = new Map();
    this.pending = new Map();
    /// How far each member received and read the room (`GET .../receipts`, then events):
    /// the marks under one's own messages. Null until read, or in a room above the limit.
    this.marks = null;
    this.hasOlder = true;
    this.loadingOlder = false;
    this.build();
    this.onVisibility = () => this.markRead();
    document.addEventListener('visibilitychange', this.onVisibility);
  }

  close() {
    this.typingView.stop();
    document.removeEventListener('visibilitychange', this.onVisibility);
  }

  get canWrite() { return this.room.myRole !== 'reader'; }

  build() {
    const room = this.room;
    this.list = h('ol', { class: 'messages', role: 'log', 'aria-label': 'Messages', tabindex: '0' });
    this.list.addEventListener('scroll', () => {
      if (this.list.scrollTop < 80) this.loadOlder();
      this.markRead();
    });
    this.typingView = new Typing(this);
    this.input = h('textarea', {
      name: 'message', rows: '1', placeholder: this.canWrite ? 'Write a message' : 'Only writers may send here',
      'aria-label': 'Message', maxlength: '20000', disabled: !this.canWrite,
    });
    this.input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey) {
        event.preventDefault();
        this.submit();
      }
    });
    this.mentions = new Mentions(this);
    this.input.addEventListener('input', () => {
      this.typingView.send(this.input.value.length > 0);
      this.mentions.suggest(this.input);
    });
    this.fileInput = h('input', { type: 'file', class: 'visually-hidden', id: `file-${room.id}`, tabindex: '-1',
      onchange: () => this.attach(this.fileInput.files[0]) });
    this.progress = h('progress', { max: '1', value: '0', hidden: true, 'aria-label': 'Upload' });
    const composer = h('form', { class: 'composer', onsubmit: (event) => { event.preventDefault(); this.submit(); } },
      h('button', { type: 'button', class: 'attach', disabled: !this.canWrite, 'aria-label': 'Attach a file',
        onclick: () => this.fileInput.click() }, '📎'),
      this.fileInput, this.input, this.progress,
      h('button', { type: 'submit', class: 'send', disabled: !this.canWrite }, 'Send'));
    const header = h('header', { class: 'room-header' },
      h('button', { type: 'button', class: 'back', 'aria-label': 'Back to rooms', onclick: () => this.chat.closeConversation() }, '←'),
      h('h2', {}, this.chat.roomName(room)),
      room.type === 'multiparty' && h('button', { type: 'button', onclick: () => membersDialog(this.chat, room) }, 'Members'),
      room.type === 'twoparty' && room.peer && h('button', { type: 'button', onclick: (event) =>
        toggleBlock(this.chat, room.peer, event.target) }, this.chat.blocked.has(room.peer.id) ? 'Unblock' : 'Block'),
      h('button', { type: 'button', onclick: () => roomSettingsDialog(this.chat, room) }, 'Notifications'));
    this.replyLine = h('p', { class: 'replying', hidden: true, 'aria-live': 'polite' });
    this.element = h('div', { class: 'conversation-body' }, header, this.list, this.typingView.line, this.replyLine,
      this.mentions.list, composer);
  }

  /// The newest page; with `seq`, older pages too until that message is shown, then it.
  async load(seq) {
    this.mentions.load().catch(() => {});
    const page = await this.api.get(`/v1/rooms/${this.room.id}/messages?limit=${PAGE}`);
    this.hasOlder = page.messages.length === PAGE;
    for (const message of page.messages) this.place(message);
    this.scrollToEnd();
    if (page.messages.length) this.chat.acknowledge(this.room, page.messages.at(-1).seq);
    this.loadMarks().catch(() => {});
    if (seq) {
      for (let pages = 0; pages < 20 && !this.messages.has(seq) && this.hasOlder; pages += 1) await this.loadOlder();
      const element = this.list.querySelector(`li[data-seq="${seq}"]`);
      if (element) {
        element.scrollIntoView({ block: 'center' });
        element.classList.add('found');
      }
    } else {
      this.markRead();
    }
    this.input.focus();
  }

  /// Every member's receipts, when the room carries them (its messages' `receipts` are not null).
  async loadMarks() {
    if ([...this.messages.values()].some((message) => message.receipts === null)) return;
    const page = await this.api.get(`/v1/rooms/${this.room.id}/receipts?limit=200`);
    this.marks = new Map(page.receipts.map((each) => [each.userId, { delivered: each.deliveredSeq, read: each.readSeq }]));
    this.renderMine();
  }

  /// A member received or read more (`receipt-changed`, `read-message-notification`).
  receiptChanged(userID, { delivered, read }) {
    if (!this.marks) return;
    const old = this.marks.get(userID) ?? { delivered: 0, read: 0 };
    this.marks.set(userID, {
      delivered: Math.max(old.delivered, delivered ?? 0),
      read: read === null || read === undefined ? old.read : Math.max(old.read ?? 0, read),
    });
    this.renderMine();
  }

  /// Sent, delivered (to every other member) or read (by all, or by some in a group) of one's
  /// own stored message; nothing where the room carries no receipts.
  receiptOf(message) {
    if (message.seq === undefined || message.receipts === null) return null;
    let others = 0; let delivered = 0; let read = 0;
    if (this.marks) {
      for (const [userID, mark] of this.marks) {
        if (userID === this.chat.me.id) continue;
        others += 1;
        if (mark.delivered >= message.seq) delivered += 1;
        if ((mark.read ?? 0) >= message.seq) read += 1;
      }
    } else if (message.receipts) {
      // Only the counts: "read by all" needs the members' marks.
      ({ delivered, read } = message.receipts);
      others = Infinity;
    }
    if (others > 0 && read === others) return { state: 'read', label: '✓✓ Read' };
    if (read > 0) return { state: 'read-some', label: `✓✓ Read by ${read}` };
    if (delivered > 0 && (delivered === others || others === Infinity)) return { state: 'delivered', label: '✓✓ Delivered' };
    return { state: 'sent', label: '✓ Sent' };
  }

  renderMine() {
    for (const message of this.messages.values()) {
      if (message.sentById === this.chat.me.id) this.place(message);
    }
  }

  /// The next message sent answers `message`, until cancelled.
  replyTo(message) {
    this.replying = message;
    this.replyLine.hidden = !message;
    if (!message) return;
    this.replyLine.replaceChildren('Replying to ', this.chat.userName(message.sentById), ': ',
      (message.content || message.file?.name || '').slice(0, 80), ' ',
      h('button', { type: 'button', 'aria-label': 'Cancel the reply', onclick: () => this.replyTo(null) }, '×'));
    this.input.focus();
  }

  async loadOlder() {
    const first = this.firstSeq();
    if (!this.hasOlder || this.loadingOlder || first === null || first <= 1) return;
    this.loadingOlder = true;
    try {
      const page = await this.api.get(`/v1/rooms/${this.room.id}/messages?before=${first}&limit=${PAGE}`);
      const height = this.list.scrollHeight;
      for (const message of page.messages) this.place(message);
      this.list.scrollTop += this.list.scrollHeight - height;
      this.hasOlder = page.messages.length === PAGE;
    } catch (error) {
      notify(error.message);
    } finally {
      this.loadingOlder = false;
    }
  }

  /// After a reconnect: everything after the newest message shown, and the shown messages
  /// edited, deleted or reacted to since the connection was lost (`since`, a little before).
  async repairGap(since) {
    let after = this.lastSeq() ?? 0;
    for (let pages = 0; pages < 20; pages += 1) {
      const page = await this.api.get(`/v1/rooms/${this.room.id}/messages?after=${after}&limit=200`);
      for (const message of page.messages) this.receive(message);
      if (!page.hasMore || page.messages.length === 0) break;
      after = page.messages.at(-1).seq;
    }
    if (since) {
      const from = new Date(since.getTime() - 5000).toISOString();
      let cursor = null;
      for (let pages = 0; pages < 20; pages += 1) {
        const query = cursor ? `cursor=${encodeURIComponent(cursor)}` : `changedSince=${encodeURIComponent(from)}`;
        const page = await this.api.get(`/v1/rooms/${this.room.id}/messages?${query}&limit=200`);
        for (const message of page.messages) this.replace(message);
        cursor = page.nextCursor;
        if (!cursor) break;
      }
    }
    this.markRead();
  }

  firstSeq() {
    const first = this.list.querySelector('li.message[data-seq]');
    return first ? Number(first.dataset.seq) : null;
  }

  lastSeq() {
    const seqs = [...this.messages.keys()];
    return seqs.length ? Math.max(...seqs) : null;
  }

  isReading() {
    return document.visibilityState === 'visible'
      && this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight < 40;
  }

  /// A stored message from the broker or a page: shown once, in seq order.
  receive(message) {
    const atEnd = this.isReading();
    const mine = this.pending.get(message.uid);
    if (message.sentById === this.chat.me.id) {
      mine?.remove();
      this.pending.delete(message.uid);
      // A send shown as failed that was stored after all (the REST try failed, MQTT's did not).
      for (const failed of this.list.querySelectorAll('li.failed')) if (failed.dataset.uid === message.uid) failed.remove();
    }
    this.typingView.received({ userId: message.sentById, creating: false });
    this.place(message);
    if (atEnd || mine) this.scrollToEnd();
    this.markRead();
  }

  place(message) {
    const existing = this.messages.get(message.seq);
    // A file from the room topic comes with unsigned links: keep the signed ones this reader
    // has (an edit), else ask for them.
    for (const file of filesOf(message).filter((each) => !signedFile(each))) {
      const signed = existing && filesOf(existing).find((each) => each.id === file.id && signedFile(each));
      if (signed) message = withFile(message, signed);
      else this.signFile(message.seq, file.id);
    }
    const element = this.render(message);
    this.messages.set(message.seq, message);
    if (existing) {
      const shown = this.list.querySelector(`li[data-seq="${message.seq}"]`);
      // A message found by search stays marked as it changes.
      if (shown?.classList.contains('found')) element.classList.add('found');
      shown?.replaceWith(element);
      return;
    }
    const after = [...this.list.querySelectorAll('li.message[data-seq]')].find((li) => Number(li.dataset.seq) > message.seq);
    if (after) after.before(element);
    else {
      const firstPending = this.list.querySelector('li.pending');
      if (firstPending) firstPending.before(element);
      else this.list.append(element);
    }
  }

  replace(message) {
    if (this.messages.has(message.seq)) this.place(message);
  }

  /// The file object with links signed for this reader; nothing when they may not read it now.
  async signFile(seq, fileID) {
    try {
      const file = await this.api.get(`/v1/files/${fileID}`);
      const message = this.messages.get(seq);
      if (message && !message.deletedAt && filesOf(message).some((each) => each.id === fileID)) {
        this.place(withFile(message, file));
      }
    } catch {
      // Deleted meanwhile, or no longer readable: the file's name stays.
    }
  }

  deleted(data) {
    const message = this.messages.get(data.seq);
    if (message) this.place({ ...message, content: '', file: undefined, deletedAt: data.deletedAt, deletedById: data.deletedById });
  }

  reacted(data) {
    const message = [...this.messages.values()].find((candidate) => candidate.id === data.messageId);
    if (!message) return;
    const reactions = message.reactions.filter((reaction) => reaction.key !== data.key);
    const old = message.reactions.find((reaction) => reaction.key === data.key);
    const me = data.userId === this.chat.me.id ? data.added : Boolean(old?.me);
    if (data.count > 0) {
      const reaction = { key: data.key, count: data.count, me };
      const index = message.reactions.findIndex((candidate) => candidate.key === data.key);
      if (index >= 0) reactions.splice(index, 0, reaction);
      else reactions.push(reaction);
    }
    this.place({ ...message, reactions });
  }

  render(message) { return renderMessage(this, message); }

  scrollToEnd() { this.list.scrollTop = this.list.scrollHeight; }

  /// Moves the read marker to the newest message while the user sees it.
  async markRead() {
    const last = this.lastSeq();
    if (last === null || !this.isReading() || last <= (this.room.lastReadSeq ?? 0) || this.marking) return;
    this.marking = true;
    try {
      const marker = await this.api.send('POST', `/v1/rooms/${this.room.id}/read`, { seq: last });
      this.room.lastReadSeq = marker.seq;
      this.room.unreadCount = Math.max(0, this.room.lastSeq - marker.seq);
      if (this.room.unreadCount === 0) this.room.unreadMentionCount = 0;
      this.chat.renderRooms();
    } catch {
      // The next scroll or message tries again.
    } finally {
      this.marking = false;
    }
  }

  submit() {
    const content = this.input.value.trim();
    if (!content || !this.canWrite) return;
    this.input.value = '';
    this.typingView.send(false);
    this.send({ content });
  }

  async attach(file) {
    if (!file) return;
    this.fileInput.value = '';
    this.progress.hidden = false;
    this.progress.value = 0;
    try {
      const stored = await this.api.upload(file, (fraction) => { this.progress.value = fraction; });
      await this.send({ content: '', fileId: stored.id, file: stored });
    } catch (error) {
      notify(error.message);
    } finally {
      this.progress.hidden = true;
    }
  }

  /// Over MQTT first: the message shows as pending until the stored one comes back on the
  /// room's topic. When the broker is away, or nothing came back in time, the REST send
  /// stores it (the same uid makes a second store of it impossible).
  async send({ content, fileId, file }) {
    const uid = crypto.randomUUID();
    const answered = this.replying;
    this.replyTo(null);
    const replyTo = answered ? { id: answered.id, seq: answered.seq, excerpt: answered.content.slice(0, 80), deleted: false } : null;
    const draft = { uid, content, file, replyTo, sentById: this.chat.me.id, createdAt: new Date().toISOString(), pending: true, reactions: [] };
    const element = this.render(draft);
    element.draft = draft;
    this.pending.set(uid, element);
    this.list.append(element);
    this.scrollToEnd();
    const data = { chatRoomId: this.room.id, content, uid };
    if (fileId) data.fileId = fileId;
    if (answered) data.replyToId = answered.id;
    const mentioned = this.mentions.in(content);
    if (mentioned.length) data.mentions = mentioned;
    element.dataset.body = JSON.stringify(data);
    // Started before the PUBACK: a connection lost meanwhile leaves no acknowledgement to wait for.
    setTimeout(() => this.sendOverREST(uid, data), 5000);
    try {
      await this.chat.live.publish(this.room, { type: 'new-message-notification', data, hash: uid });
    } catch {
      await this.sendOverREST(uid, data);
    }
  }

  /// The same message through REST (`data` as published, without `chatRoomId`), unless it
  /// was stored meanwhile or is already being sent this way.
  async sendOverREST(uid, { chatRoomId, ...body }) {
    if (!this.pending.has(uid) || this.overREST?.has(uid)) return;
    this.overREST ??= new Set();
    this.overREST.add(uid);
    try {
      const message = await this.api.send('POST', `/v1/rooms/${this.room.id}/messages`, body);
      this.receive(message);
    } catch (error) {
      this.failed(uid, error.message);
    } finally {
      this.overREST.delete(uid);
    }
  }

  /// A refusal of chat-in. `unavailable` asks to send again: the REST send does it now.
  rejected(data) {
    if (!data.uid || !this.pending.has(data.uid)) {
      notify(data.reason);
      return;
    }
    if (data.code === 'unavailable') {
      this.sendOverREST(data.uid, JSON.parse(this.pending.get(data.uid).dataset.body ?? '{}'));
    } else {
      this.failed(data.uid, data.reason);
    }
  }

  /// Shows a send as not sent, with the reason; its draft stays, to send again or discard.
  failed(uid, reason) {
    const element = this.pending.get(uid);
    if (!element) return;
    this.pending.delete(uid);
    const draft = { ...element.draft, pending: false, failed: reason };
    const shown = this.render(draft);
    shown.draft = draft;
    shown.dataset.body = element.dataset.body ?? '';
    element.replaceWith(shown);
  }

  /// Sends a failed message again, with its uid: if it was stored after all, it is not again.
  retry(uid) {
    const element = [...this.list.querySelectorAll('li.failed')].find((candidate) => candidate.dataset.uid === uid);
    if (!element?.dataset.body) return;
    const pending = this.render({ ...element.draft, pending: true, failed: undefined });
    pending.draft = element.draft;
    pending.dataset.body = element.dataset.body;
    element.replaceWith(pending);
    this.pending.set(uid, pending);
    this.sendOverREST(uid, JSON.parse(element.dataset.body));
  }

  discard(uid) {
    for (const element of this.list.querySelectorAll('li.failed')) if (element.dataset.uid === uid) element.remove();
  }

  typing(data) { this.typingView.received(data); }

  async react(message, key, add) {
    try {
      await this.api.send(add ? 'PUT' : 'DELETE', `/v1/rooms/${this.room.id}/messages/${message.id}/reactions/${encodeURIComponent(key)}`);
    } catch (error) {
      notify(error.message);
    }
  }

  async edit(message) {
    const content = window.prompt('Edit the message', message.content);
    if (content === null || content.trim() === message.content) return;
    try {
      this.replace(await this.api.send('PATCH', `/v1/rooms/${this.room.id}/messages/${message.id}`, { content: content.trim() }));
    } catch (error) {
      notify(error.message);
    }
  }

  async remove(message) {
    if (!window.confirm('Delete this message for everyone?')) return;
    try {
      await this.api.send('DELETE', `/v1/rooms/${this.room.id}/messages/${message.id}`);
    } catch (error) {
      notify(error.message);
    }
  }
}
