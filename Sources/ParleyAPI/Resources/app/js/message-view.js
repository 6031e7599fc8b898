import { h, shortTime } from './dom.js';
import { reportDialog } from './moderation.js';

// How a message looks: its author and time, text, files (an image's thumbnail, a video's
// player), reply quote, reactions and the actions its reader may take; a system message is a
// notice of the room, with neither author nor actions.

const REACTION = '👍';

/// Every file of a message in order (a message from before attachments has its one `file`).
export function filesOf(message) {
  if (message.attachments?.length) return message.attachments;
  return message.file ? [message.file] : [];
}

/// The message with `file` in place of the attachment of its id.
export function withFile(message, file) {
  const swap = (each) => (each.id === file.id ? file : each);
  return { ...message, file: message.file && swap(message.file), attachments: (message.attachments ?? []).map(swap) };
}

export function renderMessage(view, message) {
  if (message.type === 'system') {
    return h('li', { class: 'message notice', role: 'note', dataset: { seq: message.seq, uid: message.uid } },
      h('p', { class: 'text' }, message.deletedAt ? 'Notice removed' : message.content),
      h('time', { datetime: message.createdAt }, shortTime(message.createdAt)));
  }
  const mine = message.sentById === view.chat.me.id;
  const body = h('div', { class: 'body' });
  // In a group, a blocked user's messages stay out of sight (the API still delivers them).
  const hidden = !mine && view.room.type === 'multiparty' && view.chat.blocked.has(message.sentById);
  if (message.deletedAt) body.append(h('em', {}, 'Message deleted'));
  else if (hidden) body.append(h('em', {}, 'A message from someone you blocked'));
  else {
    if (message.replyTo) {
      body.append(h('blockquote', {}, message.replyTo.deleted ? 'A deleted message' : message.replyTo.excerpt));
    }
    if (message.content) body.append(h('p', { class: 'text' }, message.content));
    const files = filesOf(message);
    if (files.length) body.append(h('div', { class: 'attachments' }, ...files.map((file) => renderFile(view, file))));
  }
  const actions = h('div', { class: 'message-actions' });
  if (message.failed) {
    actions.append(
      h('button', { type: 'button', class: 'retry', onclick: () => view.retry(message.uid) }, 'Send again'),
      h('button', { type: 'button', class: 'discard', onclick: () => view.discard(message.uid) }, 'Discard'));
  } else if (!message.deletedAt && !message.pending && !hidden) {
    for (const reaction of message.reactions ?? []) {
      actions.append(h('button', {
        type: 'button', class: `reaction${reaction.me ? ' mine' : ''}`, 'aria-pressed': String(reaction.me),
        'aria-label': `${reaction.key} ${reaction.count}`, onclick: () => view.react(message, reaction.key, !reaction.me),
      }, `${reaction.key} ${reaction.count}`));
    }
    if (view.canWrite && !(message.reactions ?? []).some((reaction) => reaction.key === REACTION)) {
      actions.append(h('button', { type: 'button', class: 'reaction add', 'aria-label': `React with ${REACTION}`,
        onclick: () => view.react(message, REACTION, true) }, REACTION));
    }
    if (view.canWrite) {
      actions.append(h('button', { type: 'button', class: 'reply', onclick: () => view.replyTo(message) }, 'Reply'));
    }
    if (!mine) {
      actions.append(h('button', { type: 'button', class: 'report', onclick: () => reportDialog(view.chat, view.room, message) }, 'Report'));
    }
    if (mine && view.canWrite) {
      actions.append(
        h('button', { type: 'button', class: 'edit', onclick: () => view.edit(message) }, 'Edit'),
        h('button', { type: 'button', class: 'delete', onclick: () => view.remove(message) }, 'Delete'));
    } else if (view.room.myRole === 'admin') {
      actions.append(h('button', { type: 'button', class: 'delete', onclick: () => view.remove(message) }, 'Delete'));
    }
  }
  const receipt = mine && !message.pending && !message.failed && !message.deletedAt ? view.receiptOf?.(message) : null;
  return h('li', {
    class: `message${mine ? ' mine' : ''}${message.pending ? ' pending' : ''}${message.failed ? ' failed' : ''}${(message.mentions ?? []).includes(view.chat.me.id) ? ' mentions-me' : ''}`,
    dataset: message.seq === undefined ? { uid: message.uid } : { seq: message.seq, uid: message.uid },
  },
  h('div', { class: 'meta' }, view.chat.userName(message.sentById), ' ',
    h('time', { datetime: message.createdAt }, shortTime(message.createdAt)),
    message.editedAt && !message.deletedAt ? ' · edited' : '',
    message.pending ? ' · sending…' : '', message.failed ? ` · not sent: ${message.failed}` : '',
    receipt && h('span', { class: `receipt ${receipt.state}`, dataset: { receipt: receipt.state } }, ` · ${receipt.label}`)),
  body, actions);
}

/// Whether a file object's links are signed for this reader (REST answers are; the room
/// topic's, one payload for every member, are not: the conversation asks for signed ones).
export function signedFile(file) {
  return [file.protected ? file.url : null, file.thumbnails?.small, file.thumbnails?.large]
    .every((link) => !link || link.includes('signature='));
}

function renderFile(view, file) {
  if (!signedFile(file)) return h('span', { class: 'file', dataset: { fileId: file.id } }, `📎 ${file.name}`);
  if (file.mimeType.startsWith('image/')) {
    const source = file.thumbnails?.large ?? file.thumbnails?.small ?? file.url;
    if (!file.thumbnails?.large) awaitThumbnail(view, file.id);
    return h('a', { href: file.url, target: '_blank', rel: 'noopener' },
      h('img', { class: 'thumbnail', src: source, alt: file.name, width: file.width, height: file.height,
        dataset: { fileId: file.id } }));
  }
  if (file.mimeType.startsWith('video/')) {
    return h('video', { controls: true, preload: 'metadata', src: file.url, poster: file.thumbnails?.large ?? undefined,
      'aria-label': file.name });
  }
  if (file.mimeType.startsWith('audio/')) return h('audio', { controls: true, src: file.url, 'aria-label': file.name });
  return h('a', { href: file.url, download: file.name }, `📎 ${file.name}`);
}

/// Thumbnails are made after the upload: the original shows until they are there.
async function awaitThumbnail(view, fileID) {
  view.awaiting ??= new Set();
  if (view.awaiting.has(fileID)) return;
  view.awaiting.add(fileID);
  for (let attempt = 0; attempt < 20; attempt += 1) {
    await new Promise((resolve) => { setTimeout(resolve, 1000); });
    try {
      const file = await view.api.get(`/v1/files/${fileID}`);
      if (file.thumbnails?.large) {
        for (const image of view.list.querySelectorAll(`img[data-file-id="${fileID}"]`)) image.src = file.thumbnails.large;
        for (const [seq, message] of view.messages) {
          if (filesOf(message).some((each) => each.id === fileID)) view.messages.set(seq, withFile(message, file));
        }
        break;
      }
    } catch {
      break;
    }
  }
  view.awaiting.delete(fileID);
}
