import { h, clear, fullName, notify, searchField } from './dom.js';

const ROLES = ['reader', 'writer', 'admin'];

/// A modal dialog closed by Escape or its Close button; removed from the page when closed.
export function dialog(title, ...content) {
  const element = h('dialog', { 'aria-label': title },
    h('header', {}, h('h2', {}, title),
      h('button', { type: 'button', class: 'close', 'aria-label': 'Close', onclick: () => element.close() }, '×')),
    ...content);
  element.addEventListener('close', () => element.remove());
  document.body.append(element);
  element.showModal();
  return element;
}

/// A search box over the user directory; `choose` gets the user picked.
function userSearch(chat, choose, label = 'Find people') {
  const results = h('ul', { class: 'people', 'aria-label': 'People found' });
  const input = searchField({ 'aria-label': label, placeholder: 'Name or e-mail' }, results, async (query) => {
    const page = await chat.api.get(`/v1/users?q=${encodeURIComponent(query)}&limit=20`);
    for (const user of page.users.filter((user) => user.id !== chat.me.id)) {
      chat.users.set(user.id, user);
      results.append(h('li', {}, h('button', { type: 'button', class: 'person', onclick: () => choose(user) },
        fullName(user), user.email ? h('small', {}, ` ${user.email}`) : '')));
    }
    if (!results.firstChild) results.append(h('li', { class: 'none' }, 'Nobody found'));
  });
  return { element: h('div', { class: 'user-search' }, input, results), input };
}

export function startDirectChat(chat) {
  let element;
  const search = userSearch(chat, async (user) => {
    try {
      const room = await chat.api.send('PUT', `/v1/rooms/direct/${user.id}`);
      chat.keepRoom(room);
      element.close();
      await chat.open(room.id);
    } catch (error) {
      notify(error.message);
    }
  });
  element = dialog('New chat', search.element);
  search.input.focus();
}

export function startGroup(chat) {
  const chosen = new Map();
  const list = h('ul', { class: 'chosen', 'aria-label': 'Members' });
  const name = h('input', { name: 'name', required: true, maxlength: '200', 'aria-label': 'Group name', placeholder: 'Group name' });
  const error = h('p', { class: 'form-error', role: 'alert' });
  const renderChosen = () => {
    clear(list);
    for (const user of chosen.values()) {
      list.append(h('li', {}, fullName(user), ' ',
        h('button', { type: 'button', 'aria-label': `Remove ${fullName(user)}`, onclick: () => { chosen.delete(user.id); renderChosen(); } }, '×')));
    }
  };
  const search = userSearch(chat, (user) => { chosen.set(user.id, user); renderChosen(); }, 'Add people');
  let element;
  const form = h('form', { onsubmit: async (event) => {
    event.preventDefault();
    if (chosen.size < 2) {
      error.textContent = 'A group needs at least two other people.';
      return;
    }
    try {
      const members = [...chosen.keys()].map((userId) => ({ userId, role: 'writer' }));
      const room = await chat.api.send('POST', '/v1/rooms', { name: name.value.trim(), members });
      chat.keepRoom(room);
      element.close();
      await chat.open(room.id);
    } catch (failure) {
      error.textContent = failure.message;
    }
  } }, name, search.element, list, error, h('button', { type: 'submit' }, 'Create group'));
  element = dialog('New group', form);
  name.focus();
}

/// A multiparty room's members with their roles; an admin changes roles, adds and removes.
export async function membersDialog(chat, room) {
  const admin = room.myRole === 'admin';
  const list = h('ul', { class: 'members', 'aria-label': 'Members' });
  const load = async () => {
    clear(list);
    let cursor = null;
    do {
      const page = await chat.api.get(`/v1/rooms/${room.id}/members?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      for (const member of page.members) list.append(memberItem(member));
      cursor = page.nextCursor;
    } while (cursor);
  };
  const memberItem = (member) => {
    chat.users.set(member.user.id, member.user);
    const self = member.user.id === chat.me.id;
    const direct = member.via.length === 0 || member.via.includes('direct');
    const role = admin && !self && direct
      ? h('select', { 'aria-label': `Role of ${fullName(member.user)}`, onchange: async (event) => {
        try {
          await chat.api.send('PUT', `/v1/rooms/${room.id}/members/${member.user.id}`, { role: event.target.value });
        } catch (error) {
          notify(error.message);
          await load();
        }
      } }, ROLES.map((name) => h('option', { value: name, selected: name === member.role }, name)))
      : h('span', { class: 'role' }, member.role);
    const remove = admin && !self && direct && h('button', { type: 'button', 'aria-label': `Remove ${fullName(member.user)}`,
      onclick: async () => {
        try {
          await chat.api.send('DELETE', `/v1/rooms/${room.id}/members/${member.user.id}`);
          await load();
        } catch (error) {
          notify(error.message);
        }
      } }, 'Remove');
    return h('li', {}, h('span', { class: 'member-name' }, fullName(member.user), self ? ' (you)' : ''), role, remove);
  };
  const add = admin && userSearch(chat, async (user) => {
    try {
      const answer = await chat.api.send('PUT', `/v1/rooms/${room.id}/members/${user.id}`, { role: 'writer' });
      // 202: someone who left, or a stranger under the invite policy, joins on accepting.
      if (answer && answer.invitation) notify(`${fullName(user)} is invited and joins on accepting.`);
      await load();
    } catch (error) {
      notify(error.message);
    }
  }, 'Add a member');
  dialog('Members', list, add ? h('h3', {}, 'Add a member') : '', add ? add.element : '');
  try {
    await load();
  } catch (error) {
    notify(error.message);
  }
}
