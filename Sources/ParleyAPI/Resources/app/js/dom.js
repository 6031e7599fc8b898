// Building DOM by construction: text goes in as text nodes, never as HTML, so nothing a user
// wrote can become markup.

export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else if (name === 'dataset') Object.assign(element.dataset, value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

export function append(element, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

export function clear(element) {
  while (element.firstChild) element.firstChild.remove();
  return element;
}

/// "Ada Lovelace" from a User.
export function fullName(user) {
  return user ? `${user.firstName} ${user.lastName}`.trim() : 'Someone';
}

export function shortTime(iso) {
  if (!iso) return '';
  const date = new Date(iso);
  const today = new Date();
  return date.toDateString() === today.toDateString()
    ? date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
    : date.toLocaleDateString([], { month: 'short', day: 'numeric' });
}

/// A short notice at the top of the screen (an error or a state), read out by screen readers.
export function notify(text, kind = 'error') {
  let bar = document.getElementById('notice');
  if (!bar) {
    bar = h('div', { id: 'notice', role: 'status' });
    document.body.prepend(bar);
  }
  bar.className = kind;
  bar.textContent = text;
  clearTimeout(notify.timer);
  if (text) notify.timer = setTimeout(() => { bar.textContent = ''; bar.className = ''; }, 6000);
}

/// A search field: a moment after typing stops, `results` is emptied and, for two characters
/// or more, `find(query)` fills it; a failure is shown as a notice.
export function searchField(attributes, results, find) {
  const input = h('input', { type: 'search', autocomplete: 'off', ...attributes });
  let timer = null;
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const query = input.value.trim();
      clear(results);
      if (query.length < 2) return;
      try {
        await find(query);
      } catch (error) {
        notify(error.message);
      }
    }, 250);
  });
  return input;
}
