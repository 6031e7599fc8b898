// REST, same origin, with the session's access token renewed before it expires.

const STORE = 'parley.session';

/// A problem+json answer (or a network failure: status 0).
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || (status ? `HTTP ${status}` : 'The server could not be reached.'));
    this.status = status;
    this.code = problem?.code;
  }
}

/// What a login answers, kept across reloads: the tokens, the user and the broker's address.
function stored() {
  try {
    return JSON.parse(localStorage.getItem(STORE));
  } catch {
    return null;
  }
}

export class Api {
  constructor() {
    this.session = stored();
    this.refreshing = null;
    this.listeners = new Set();
    // Another tab renewed or ended the session: take its tokens rather than renew again.
    window.addEventListener('storage', (event) => {
      if (event.key !== STORE) return;
      this.session = stored();
      for (const listener of this.listeners) listener(this.session);
    });
  }

  get user() { return this.session?.user; }
  get mqtt() { return this.session?.mqtt; }

  /// Called with the new session after every login or renewal, and with null at the end;
  /// returns what stops the calls.
  onSession(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  keep(login) {
    this.session = login && { ...login, expiresAt: Date.now() + login.expiresIn * 1000 };
    if (this.session) localStorage.setItem(STORE, JSON.stringify(this.session));
    else localStorage.removeItem(STORE);
    for (const listener of this.listeners) listener(this.session);
  }

  async register(fields) {
    await this.send('POST', '/v1/auth/register', fields, { anonymous: true });
    return this.login(fields.email, fields.password);
  }

  async login(email, password) {
    const device = { platform: 'web', name: navigator.userAgent.slice(0, 200) };
    this.keep(await this.send('POST', '/v1/auth/login', { email, password, device }, { anonymous: true }));
  }

  async logout() {
    try {
      await this.send('POST', '/v1/auth/logout');
    } finally {
      this.keep(null);
    }
  }

  /// New tokens (and a new broker password) from the refresh token. One renewal at a time
  /// across the browser's tabs: a refresh token presented twice ends the whole session, so a
  /// tab that waited takes what the other stored instead of renewing again.
  renew() {
    const used = this.session?.refreshToken;
    const renewal = async () => {
      const latest = stored();
      if (latest && latest.refreshToken !== used) {
        this.keep(latest);
        return;
      }
      try {
        this.keep(await this.send('POST', '/v1/auth/refresh', { refreshToken: used }, { anonymous: true }));
      } catch (error) {
        if (error.status === 401 || error.status === 403) this.keep(null);
        throw error;
      }
    };
    this.refreshing ??= (navigator.locks ? navigator.locks.request('parley-renew', renewal) : renewal())
      .finally(() => { this.refreshing = null; });
    return this.refreshing;
  }

  /// Renews first when the access token is about to expire.
  async fresh() {
    if (!this.session) throw new ApiError(401, { detail: 'Not signed in.' });
    if (this.session.expiresAt - Date.now() < 60_000) await this.renew();
  }

  get(path) { return this.send('GET', path); }

  /// One request; JSON in and out. A 401 renews the session once and tries again.
  async send(method, path, body, { anonymous = false, retried = false } = {}) {
    if (!anonymous) await this.fresh();
    const headers = {};
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (!anonymous) headers.Authorization = `Bearer ${this.session.accessToken}`;
    let response;
    try {
      response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch {
      throw new ApiError(0);
    }
    if (response.status === 401 && !anonymous && !retried) {
      await this.renew();
      return this.send(method, path, body, { retried: true });
    }
    const json = parsed(await response.text());
    if (!response.ok) throw new ApiError(response.status, json);
    return json;
  }

  /// Uploads a file as a raw body, reporting progress (0…1); answers the stored File. A 401
  /// (the token expired during a long upload) renews the session and sends it once more.
  async upload(file, onProgress, retried = false) {
    await this.fresh();
    try {
      return await this.uploadOnce(file, onProgress);
    } catch (error) {
      if (error.status !== 401 || retried) throw error;
      await this.renew();
      return this.upload(file, onProgress, true);
    }
  }

  uploadOnce(file, onProgress) {
    return new Promise((resolve, reject) => {
      const request = new XMLHttpRequest();
      request.open('POST', `/v1/files?name=${encodeURIComponent(file.name)}`);
      request.setRequestHeader('Authorization', `Bearer ${this.session.accessToken}`);
      request.setRequestHeader('Content-Type', file.type || 'application/octet-stream');
      request.upload.onprogress = (event) => event.lengthComputable && onProgress(event.loaded / event.total);
      request.onload = () => {
        const json = parsed(request.responseText);
        if (request.status === 201) resolve(json);
        else reject(new ApiError(request.status, json));
      };
      request.onerror = () => reject(new ApiError(0));
      request.send(file);
    });
  }
}

/// An answer's JSON; null for an empty body or one that is not JSON (a proxy's error page).
function parsed(text) {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}
