import { h, notify } from './dom.js';
import { dialog } from './people.js';

/// Reports a message to the administrators, with a reason and an optional comment.
export function reportDialog(chat, room, message) {
  const reason = h('select', { name: 'reason', 'aria-label': 'Reason' },
    [['spam', 'Spam'], ['abuse', 'Abuse or harassment'], ['illegal', 'Illegal content'], ['other', 'Something else']]
      .map(([value, label]) => h('option', { value }, label)));
  const comment = h('textarea', { name: 'comment', maxlength: '1000', rows: '3', 'aria-label': 'Comment (optional)' });
  let element;
  const form = h('form', { onsubmit: async (event) => {
    event.preventDefault();
    try {
      const body = { reason: reason.value };
      if (comment.value.trim()) body.comment = comment.value.trim();
      await chat.api.send('POST', `/v1/rooms/${room.id}/messages/${message.id}/reports`, body);
      element.close();
      notify('Reported. Thank you.', 'info');
    } catch (error) {
      notify(error.message);
    }
  } }, h('label', {}, 'Why ', reason), h('label', {}, 'Comment ', comment), h('button', { type: 'submit' }, 'Report'));
  element = dialog('Report message', form);
}

/// Blocks or unblocks a direct chat's peer: a blocked user can no longer message the user.
export async function toggleBlock(chat, user, button) {
  const blocked = chat.blocked.has(user.id);
  if (!blocked && !window.confirm(`Block ${user.firstName}? They will not be able to message you.`)) return;
  try {
    await chat.api.send(blocked ? 'DELETE' : 'PUT', `/v1/me/blocks/${user.id}`);
    if (blocked) chat.blocked.delete(user.id);
    else chat.blocked.add(user.id);
    button.textContent = blocked ? 'Block' : 'Unblock';
  } catch (error) {
    notify(error.message);
  }
}
