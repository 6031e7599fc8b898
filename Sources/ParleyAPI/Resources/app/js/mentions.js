import { h, clear, fullName } from './dom.js';

// @mentions in the composer: typing `@` and part of a member's name offers the members
// whose names match; choosing one writes `@First Last`. A message mentions whoever's
// `@First Last` it still holds when sent.
export class Mentions {
  constructor(conversation) {
    this.conversation = conversation;
    this.members = new Map();
    this.list = h('ul', { class: 'mention-suggestions', 'aria-label': 'People to mention', hidden: true });
  }

  /// The room's members (a two-party room's peer without a request).
  async load() {
    const { room, chat } = this.conversation;
    if (room.type === 'twoparty') {
      if (room.peer) this.members.set(room.peer.id, room.peer);
      return;
    }
    let cursor = null;
    for (let pages = 0; pages < 10; pages += 1) {
      const page = await chat.api.get(`/v1/rooms/${room.id}/members?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      for (const member of page.members) {
        chat.users.set(member.user.id, member.user);
        if (member.user.id !== chat.me.id) this.members.set(member.user.id, member.user);
      }
      cursor = page.nextCursor;
      if (!cursor) break;
    }
  }

  /// Offers the members matching the word after the last `@` before the caret.
  suggest(input) {
    const before = input.value.slice(0, input.selectionStart);
    const match = /(?:^|\s)@([^\s@]{0,30})$/.exec(before);
    clear(this.list);
    this.list.hidden = true;
    if (!match) return;
    const typed = match[1].toLowerCase();
    const found = [...this.members.values()].filter((user) => fullName(user).toLowerCase().includes(typed)).slice(0, 6);
    for (const user of found) {
      this.list.append(h('li', {}, h('button', { type: 'button', class: 'mention', onclick: () => {
        const start = before.length - match[1].length - 1;
        input.value = `${input.value.slice(0, start)}@${fullName(user)} ${input.value.slice(input.selectionStart)}`;
        this.list.hidden = true;
        input.focus();
      } }, fullName(user))));
    }
    this.list.hidden = found.length === 0;
  }

  /// The ids of the members whose `@First Last` the content holds.
  in(content) {
    return [...this.members.values()].filter((user) => content.includes(`@${fullName(user)}`)).map((user) => user.id).slice(0, 50);
  }
}
