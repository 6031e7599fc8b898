import { h, shortTime, searchField } from './dom.js';
import { dialog } from './people.js';

/// Message search across the rooms the user reads now; a result opens its room at the message.
export function searchDialog(chat) {
  const results = h('ol', { class: 'search-results', 'aria-label': 'Messages found' });
  let element;
  const input = searchField({ 'aria-label': 'Search messages', placeholder: 'Words to find', maxlength: '200' }, results,
    async (query) => {
      const page = await chat.api.get(`/v1/search/messages?q=${encodeURIComponent(query)}&limit=20`);
      for (const result of page.results) {
        const room = chat.rooms.get(result.room.id);
        results.append(h('li', {}, h('button', { type: 'button', class: 'search-result', onclick: async () => {
          element.close();
          await chat.open(result.room.id, { seq: result.message.seq });
        } },
        h('span', { class: 'meta' }, room ? chat.roomName(room) : result.room.name ?? 'Room', ' · ',
          chat.userName(result.message.sentById), ' · ', shortTime(result.message.createdAt)),
        h('span', { class: 'excerpt' }, highlighted(result.highlight)))));
      }
      if (!results.firstChild) results.append(h('li', { class: 'none' }, 'No messages found'));
    });
  element = dialog('Search messages', input, results);
  input.focus();
}

/// The server's highlight (escaped text with <mark>…</mark> around matches) as nodes: the
/// text is unescaped into text nodes and only <mark> becomes an element, so nothing in it
/// is ever parsed as HTML.
export function highlighted(highlight) {
  const nodes = [];
  let marked = false;
  for (const part of highlight.split(/(<mark>|<\/mark>)/)) {
    if (part === '<mark>') marked = true;
    else if (part === '</mark>') marked = false;
    else if (part) nodes.push(marked ? h('mark', {}, unescape(part)) : unescape(part));
  }
  return nodes;
}

function unescape(text) {
  return text.replace(/&(amp|lt|gt|quot|#39|#x27);/g, (entity, name) =>
    ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#x27': "'" })[name]);
}
