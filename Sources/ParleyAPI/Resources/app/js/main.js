import { Api } from './api.js';
import { Chat } from './chat.js';
import { h, clear, notify } from './dom.js';

// The page: the sign-in form until there is a session, then the chat.
const api = new Api();
const root = document.getElementById('app');
let chat = null;

api.onSession((session) => {
  if (!session && chat) {
    chat.stop();
    chat = null;
    showSignIn();
  }
});

function showSignIn() {
  let registering = false;
  const error = h('p', { class: 'form-error', role: 'alert' });
  const names = h('div', { class: 'names', hidden: true },
    field('First name', 'firstName', 'text', 'given-name'), field('Last name', 'lastName', 'text', 'family-name'));
  const submit = h('button', { type: 'submit' }, 'Sign in');
  const toggle = h('button', { type: 'button', class: 'link', onclick: () => {
    registering = !registering;
    names.hidden = !registering;
    for (const input of names.querySelectorAll('input')) input.required = registering;
    submit.textContent = registering ? 'Create account' : 'Sign in';
    toggle.textContent = registering ? 'I have an account' : 'Create an account';
    form.querySelector('[name=password]').autocomplete = registering ? 'new-password' : 'current-password';
  } }, 'Create an account');
  const form = h('form', { class: 'sign-in', onsubmit: async (event) => {
    event.preventDefault();
    const data = Object.fromEntries(new FormData(form));
    submit.disabled = true;
    error.textContent = '';
    try {
      if (registering) await api.register(data);
      else await api.login(data.email, data.password);
      start();
    } catch (failure) {
      error.textContent = failure.message;
    } finally {
      submit.disabled = false;
    }
  } },
  h('h1', {}, 'Parley'),
  names,
  field('E-mail', 'email', 'email', 'username'),
  field('Password', 'password', 'password', 'current-password'),
  error, submit, toggle);
  clear(root).append(form);
  form.querySelector('input[name=email]').focus();
}

function field(label, name, type, autocomplete) {
  return h('label', {}, label, h('input', { name, type, autocomplete, required: name === 'email' || name === 'password' }));
}

function start() {
  chat = new Chat(api, root);
  chat.start().catch((error) => notify(error.message));
}

if (api.session) start();
else showSignIn();
