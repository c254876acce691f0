// api.js is how the page talks to taskchat: the session kept in the browser,
// the API's routes, problem answers turned into plain words, and a chat
// turn streamed as Server-Sent Events over fetch (EventSource can neither
// POST nor send the Authorization header).
// Nothing here touches the page.

// tokenKey is where the token is kept, in localStorage: every tab of the
// browser on this origin is signed in with it, and it stays until signing
// out or its expiry (see docs/clients.md for what that trades).
export const tokenKey = "taskchat.token";

// ApiError is a request that failed: status is the HTTP status (0 when the
// server could not be reached or the stream was cut), problem the RFC 9457
// body when there was one, retryAfter the seconds of Retry-After.
export class ApiError extends Error {
  constructor(status, problem, retryAfter = 0) {
    super((problem && problem.detail) || `HTTP ${status}`);
    this.name = "ApiError";
    this.status = status;
    this.problem = problem || null;
    this.retryAfter = retryAfter;
  }

  get code() {
    return (this.problem && this.problem.code) || "";
  }
}

// claimsOf decodes a JWT's payload, without verifying it: the page only
// needs the user's name (sub) for display and for the API's paths; the
// server verifies the token on every request.
export function claimsOf(token) {
  const parts = token.split(".");
  if (parts.length !== 3) return null;
  try {
    const b64 = parts[1].replace(/-/g, "+").replace(/_/g, "/");
    const bin = atob(b64 + "===".slice((b64.length + 3) % 4));
    const claims = JSON.parse(new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0))));
    return claims && typeof claims === "object" ? claims : null;
  } catch {
    return null;
  }
}

// sessionFrom checks that a token names a user and has not expired, and
// returns the session it makes, or throws an Error saying what is wrong.
export function sessionFrom(token) {
  const claims = claimsOf(token);
  if (!claims || typeof claims.sub !== "string" || claims.sub === "") {
    throw new Error("That is not a taskchat token: paste the whole token, three parts separated by dots.");
  }
  if (typeof claims.exp === "number" && claims.exp * 1000 <= Date.now()) {
    throw new Error("That token has expired. Get a new one.");
  }
  return { token, user: claims.sub };
}

// loadSession returns the browser's session, or null when there is none
// (or its token expired).
export function loadSession() {
  const token = localStorage.getItem(tokenKey);
  if (!token) return null;
  try {
    return sessionFrom(token);
  } catch {
    localStorage.removeItem(tokenKey);
    return null;
  }
}

export function saveSession(session) {
  if (localStorage.getItem(tokenKey) !== session.token) localStorage.setItem(tokenKey, session.token);
}

export function clearSession() {
  localStorage.removeItem(tokenKey);
}

// devLoginEnabled reports whether the server signs people in by name
// (DEV_LOGIN): the page it serves says so in a meta element, so that
// loading the page asks nothing that fails.
export function devLoginEnabled() {
  const meta = document.querySelector('meta[name="taskchat-dev-login"]');
  return !!meta && meta.content === "on";
}

// devSignIn gets a development token for name.
export async function devSignIn(name) {
  const resp = await send("/auth/dev/token", {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify({ user_id: name }),
  });
  const body = await resp.json();
  return sessionFrom(body.token);
}

// send is fetch that turns every failure into an ApiError.
async function send(url, init) {
  let resp;
  try {
    resp = await fetch(url, { cache: "no-store", credentials: "omit", ...init });
  } catch (err) {
    if (err.name === "AbortError") throw err;
    throw new ApiError(0, null);
  }
  if (!resp.ok) throw await problemOf(resp);
  return resp;
}

async function problemOf(resp) {
  let problem = null;
  if ((resp.headers.get("Content-Type") || "").includes("json")) {
    try {
      problem = await resp.json();
    } catch {
      problem = null;
    }
  }
  const wait = parseInt(resp.headers.get("Retry-After") || "", 10);
  return new ApiError(resp.status, problem, Number.isFinite(wait) && wait > 0 ? wait : 0);
}

// Client calls the API as one user. onUnauthorized runs when the server
// refuses the token, so the page can ask to sign in again.
export class Client {
  constructor(session, onUnauthorized) {
    this.session = session;
    this.onUnauthorized = onUnauthorized;
  }

  async request(method, path, { body, headers = {}, signal } = {}) {
    const init = {
      method,
      signal,
      headers: { Authorization: `Bearer ${this.session.token}`, Accept: "application/json", ...headers },
    };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    try {
      return await send(`/api/${encodeURIComponent(this.session.user)}${path}`, init);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) this.onUnauthorized(err);
      throw err;
    }
  }

  async json(path) {
    return (await this.request("GET", path)).json();
  }

  // conversations returns a page of conversations, newest first.
  conversations(cursor) {
    const q = new URLSearchParams({ limit: "20" });
    if (cursor) q.set("cursor", cursor);
    return this.json(`/conversations?${q}`);
  }

  // messages returns every message of a conversation, oldest first,
  // following next_cursor when the server pages them.
  async messages(id) {
    const all = [];
    let cursor = null;
    for (let pages = 0; pages < 1000; pages++) {
      const q = cursor ? `?${new URLSearchParams({ cursor })}` : "";
      const page = await this.json(`/conversations/${id}/messages${q}`);
      all.push(...page.messages);
      cursor = page.next_cursor;
      if (!cursor) break;
    }
    return all.sort((a, b) => a.id - b.id);
  }

  // conversation returns a conversation with its summary (null until it
  // was compacted).
  conversation(id) {
    return this.json(`/conversations/${id}`);
  }

  async deleteConversation(id) {
    await this.request("DELETE", `/conversations/${id}`);
  }

  // tasks returns every task of the listing (status all, pending or
  // completed), in number order, following next_cursor until it is null:
  // the panel shows the list whole. It asks for the largest page the
  // server gives (1000), so that a long list takes few requests.
  async tasks(status) {
    const all = [];
    const q = new URLSearchParams({ status, limit: "1000" });
    for (;;) {
      const page = await this.json(`/tasks?${q}`);
      all.push(...page.tasks);
      const cursor = page.next_cursor;
      if (!cursor || cursor === q.get("cursor")) break;
      q.set("cursor", cursor);
    }
    return all;
  }

  // settings are the user's settings: {time_zone, updated_at}, updated_at
  // null until they were set.
  settings() {
    return this.json("/settings");
  }

  // setTimeZone sets the user's time zone, an IANA name.
  async setTimeZone(timeZone) {
    return (await this.request("PUT", "/settings", { body: { time_zone: timeZone } })).json();
  }

  // chat runs one turn as a stream, calling onEvent(name, data) for each
  // event. It resolves after the done event and throws an ApiError for an
  // error answer, an error event, or a stream cut before its end; aborting
  // signal throws an AbortError (the turn goes on on the server: only stop
  // ends it).
  async chat({ conversationId, message, key, signal }, onEvent) {
    const body = { message };
    if (conversationId) body.conversation_id = conversationId;
    const resp = await this.request("POST", "/chat", {
      body,
      signal,
      headers: { Accept: "text/event-stream", "Idempotency-Key": key },
    });
    await readTurn(resp, signal, onEvent);
  }

  // follow streams the turn that runs in a conversation, wherever it runs,
  // from its start: onOpen() when there is one, then onEvent(name, data)
  // for each event, as chat does. It resolves false at once when no turn
  // runs, true after the done event, and throws as chat does.
  async follow(conversationId, { signal, onOpen }, onEvent) {
    const resp = await this.request("GET", `/conversations/${conversationId}/stream`, {
      signal,
      headers: { Accept: "text/event-stream" },
    });
    if (resp.status === 204) return false;
    if (signal && signal.aborted) throw abortError();
    onOpen();
    await readTurn(resp, signal, onEvent);
    return true;
  }

  // approvals returns the calls that wait for the person, newest first,
  // following next_cursor until it is null.
  async approvals() {
    const all = [];
    const q = new URLSearchParams({ limit: "100" });
    for (;;) {
      const page = await this.json(`/approvals?${q}`);
      all.push(...page.approvals);
      const cursor = page.next_cursor;
      if (!cursor || cursor === q.get("cursor")) break;
      q.set("cursor", cursor);
    }
    return all;
  }

  // decide approves or declines a call that waits. While other calls of
  // its turn still wait, it resolves with the server's 202 answer
  // ({ approval, waiting }) and calls nothing. Once none waits, the turn
  // continues: onOpen() when its stream opens, then onEvent(name, data)
  // for each event, as chat does; it then resolves null. It throws as chat
  // does; a decision the server can no longer take is an ApiError 409 with
  // the code approval_closed.
  async decide(id, approved, { signal, onOpen }, onEvent) {
    const resp = await this.request("POST", `/approvals/${id}`, {
      body: { approved },
      signal,
      headers: { Accept: "text/event-stream" },
    });
    if (resp.status === 202) return resp.json();
    onOpen();
    await readTurn(resp, signal, onEvent);
    return null;
  }

  // stop stops the conversation's running turn on the server; its stream
  // then ends with a done event saying so. It resolves with the server's
  // answer, or null when no turn was running.
  async stop(conversationId) {
    const resp = await this.request("POST", `/conversations/${conversationId}/stop`);
    return resp.status === 204 ? null : resp.json();
  }
}

// readTurn reads a turn's event stream to its done or error event.
async function readTurn(resp, signal, onEvent) {
  let ended = false;
  let failure = null;
  try {
    await readEvents(resp.body, (name, data) => {
      if (name === "error") {
        failure = new ApiError(codeStatus[data.code] || 500, { ...data, detail: data.message });
        ended = true;
      } else if (name === "done") {
        ended = true;
      }
      onEvent(name, data);
    });
  } catch (err) {
    if (err.name === "AbortError" || (signal && signal.aborted)) throw abortError();
    if (!ended) throw new ApiError(0, null);
  }
  if (failure) throw failure;
  if (!ended) throw new ApiError(0, null);
}

// codeStatus maps an error event's code to the status a JSON turn would
// have answered with, so both are explained alike.
const codeStatus = { llm_unavailable: 502, unavailable: 503, internal: 500, not_found: 404 };

function abortError() {
  return new DOMException("The stream was left.", "AbortError");
}

// readEvents parses a text/event-stream body, calling onEvent(name, data)
// with each event's JSON data; comments (": ping") are skipped.
export async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let name = "";
  let data = [];
  const dispatch = () => {
    if (data.length > 0) onEvent(name || "message", JSON.parse(data.join("\n")));
    name = "";
    data = [];
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n")) >= 0) {
      let line = buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
      if (line.endsWith("\r")) line = line.slice(0, -1);
      if (line === "") {
        dispatch();
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let val = colon < 0 ? "" : line.slice(colon + 1);
      if (val.startsWith(" ")) val = val.slice(1);
      if (field === "event") name = val;
      else if (field === "data") data.push(val);
    }
  }
}

// explain says what went wrong in plain words.
export function explain(err) {
  if (!(err instanceof ApiError)) return "Something went wrong in this page. Reload it and try again.";
  const detail = err.problem && err.problem.detail;
  switch (err.status) {
    case 0:
      return "The connection to taskchat was lost. Your message may have been saved; retry to be sure, nothing will be done twice.";
    case 401:
      return "Your sign-in is no longer valid. Sign in again.";
    case 403:
      return "This token belongs to another user.";
    case 404:
      return "This conversation no longer exists.";
    case 409:
      return err.code === "request_in_progress"
        ? "This message is still being answered. Wait a moment, then retry."
        : "This conversation is still answering your previous message. Wait a moment, then retry.";
    case 429: {
      const wait = err.retryAfter || 1;
      if (err.code === "token_budget_exceeded") {
        const hours = Math.round(wait / 3600);
        const when = hours >= 1 ? `in about ${hours} hour${hours === 1 ? "" : "s"}` : "within the hour";
        return `You have used today's token budget; it renews at midnight UTC, ${when}. Your message was not saved.`;
      }
      return `You are sending messages too fast. Wait ${wait} second${wait === 1 ? "" : "s"}, then retry.`;
    }
    case 502:
      return "The model is unavailable, your message was saved. Retry in a moment.";
    case 503:
      return "taskchat is unavailable right now. Your message may have been saved; retry shortly.";
    case 500:
      return "Something went wrong on taskchat's side. Retry in a moment.";
    default:
      return detail || `The request failed (HTTP ${err.status}).`;
  }
}

// retryable reports whether sending the same message again may succeed.
export function retryable(err) {
  return err instanceof ApiError && [0, 409, 429, 500, 502, 503].includes(err.status);
}
