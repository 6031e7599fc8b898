import { h, notify } from './dom.js';
import { dialog } from './people.js';

/// A room's notification level, mute, and whether it rings through quiet hours.
export async function roomSettingsDialog(chat, room) {
  let settings;
  try {
    settings = await chat.api.get(`/v1/rooms/${room.id}/notifications`);
  } catch (error) {
    notify(error.message);
    return;
  }
  const level = h('select', { name: 'level' },
    [['all', 'Every message'], ['mentions', 'Only mentions'], ['none', 'Nothing']].map(([value, label]) =>
      h('option', { value, selected: settings.level === value }, label)));
  const muted = h('input', { type: 'checkbox', name: 'muted', checked: settings.muted });
  const override = h('input', { type: 'checkbox', name: 'overrideQuietHours', checked: settings.overrideQuietHours });
  let element;
  const form = h('form', { onsubmit: async (event) => {
    event.preventDefault();
    try {
      await chat.api.send('PUT', `/v1/rooms/${room.id}/notifications`, {
        level: level.value, muted: muted.checked, mutedUntil: null, overrideQuietHours: override.checked,
      });
      element.close();
    } catch (error) {
      notify(error.message);
    }
  } },
  h('label', {}, 'Push notifications ', level),
  h('label', { class: 'check' }, muted, ' Muted'),
  h('label', { class: 'check' }, override, ' Ring during quiet hours'),
  h('button', { type: 'submit' }, 'Save'));
  element = dialog('Notifications', form);
}

/// The user's quiet hours (no pushes between start and end, in their time zone).
export async function quietHoursDialog(chat) {
  let current;
  try {
    current = await chat.api.get('/v1/me/quiet-hours');
  } catch (error) {
    notify(error.message);
    return;
  }
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const start = h('input', { type: 'time', name: 'start', required: true, value: current.start ?? '22:00' });
  const end = h('input', { type: 'time', name: 'end', required: true, value: current.end ?? '07:00' });
  let element;
  const form = h('form', { onsubmit: async (event) => {
    event.preventDefault();
    try {
      await chat.api.send('PUT', '/v1/me/quiet-hours', { start: start.value, end: end.value, timeZone: current.timeZone ?? zone });
      element.close();
    } catch (error) {
      notify(error.message);
    }
  } },
  h('p', {}, current.enabled ? `On, ${current.start}–${current.end} (${current.timeZone})` : 'Off'),
  h('label', {}, 'From ', start), h('label', {}, 'Until ', end),
  h('p', { class: 'hint' }, `Time zone: ${current.timeZone ?? zone}`),
  h('button', { type: 'submit' }, 'Save'),
  current.enabled && h('button', { type: 'button', onclick: async () => {
    try {
      await chat.api.send('DELETE', '/v1/me/quiet-hours');
      element.close();
    } catch (error) {
      notify(error.message);
    }
  } }, 'Turn off'));
  element = dialog('Quiet hours', form);
}

/// What others see of the user: their read state, their typing, and who follows their presence.
export async function privacyDialog(chat) {
  let current;
  try {
    current = await chat.api.get('/v1/me/privacy');
  } catch (error) {
    notify(error.message);
    return;
  }
  const choice = (name, options) => h('select', { name },
    options.map(([value, label]) => h('option', { value, selected: current[name] === value }, label)));
  const readReceipts = choice('readReceipts', [['everyone', 'Everyone in the room'], ['nobody', 'Nobody']]);
  const typing = choice('typing', [['on', 'Shown'], ['off', 'Not shown']]);
  const presence = choice('presence', [['everyone', 'Everyone'], ['room-mates', 'People I share a room with'], ['nobody', 'Nobody']]);
  let element;
  const form = h('form', { onsubmit: async (event) => {
    event.preventDefault();
    try {
      await chat.api.send('PATCH', '/v1/me/privacy', {
        readReceipts: readReceipts.value, typing: typing.value, presence: presence.value,
      });
      element.close();
    } catch (error) {
      notify(error.message);
    }
  } },
  h('label', {}, 'Who sees that I read ', readReceipts),
  h('label', {}, 'My typing ', typing),
  h('label', {}, 'Who sees when I am online ', presence),
  h('button', { type: 'submit' }, 'Save'));
  element = dialog('Privacy', form);
}
