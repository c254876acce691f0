// app.js is the page's behaviour: signing in and out, the conversation
// list, the open thread and its turns, and the task panel.
//
// A turn runs on the server, not in the page: leaving or reloading the
// page does not end it, and Stop asks the server to. The open conversation
// shows its running turn live wherever it was sent from: the page asks for
// it when the conversation opens, then every few seconds while the tab is
// visible and shows no turn (see look).
//
// A tool call that waits for the person's approval shows Approve and Deny
// under its summary, in the reply of its turn, from the turn's stream or,
// when the thread is loaded, from the approvals the server lists; the
// decision continues the turn, whose new reply replaces the one that asked.

import {
  ApiError, Client, clearSession, devLoginEnabled, devSignIn, explain, loadSession, retryable, saveSession, sessionFrom, tokenKey,
} from "./api.js";
import { Reply, describeChange, el, storedReply, summaryItem, userItem } from "./thread.js";
import { changes } from "./tools.js";

const $ = (id) => document.getElementById(id);

// lookEvery is how often, in ms, a visible tab that shows no turn asks
// whether one runs in its conversation; asking costs one small request.
const lookEvery = 2000;

// state is everything the page knows; the server keeps the rest.
const state = {
  session: null,
  client: null,
  conversationId: null, // the open conversation; null for a new chat
  view: 0, // changes whenever another thread is shown
  titles: new Map(), // conversation id → title
  cursor: null, // next_cursor of the conversation list
  listGen: 0,
  taskGen: 0,
  filter: "all",
  turn: null, // the turn the thread shows running, sent here or followed: { controller, conversationId, stopping, ... }
  look: null, // the AbortController of a look for a turn (see look) while one is asked
  seen: newSeen(), // what the open thread shows of the conversation
  loadGen: 0, // counts the reloads of the thread, so that only the last one shows
  pending: null, // a failed send that Retry sends again: { message, key, conversationId, turnId, nodes }
  deleting: null, // the conversation the confirmation dialog is about
  offers: new Map(), // approval id → the call waiting in the thread: { approval, reply, offer, deciding }
};

wire();
const saved = loadSession();
if (saved) enter(saved);
else showSignIn();

function wire() {
  $("dev-form").addEventListener("submit", onDevSignIn);
  $("token-form").addEventListener("submit", onTokenSignIn);
  $("sign-out").addEventListener("click", () => signOut(""));
  $("new-chat").addEventListener("click", () => {
    newChat();
    showView("messages");
  });
  $("more-conversations").addEventListener("click", () => loadConversations(state.listGen));
  $("composer").addEventListener("submit", onSend);
  $("message").addEventListener("keydown", onMessageKey);
  $("stop").addEventListener("click", stopTurn);
  $("retry").addEventListener("click", retry);
  $("dismiss-error").addEventListener("click", hideError);
  $("confirm-cancel").addEventListener("click", () => $("confirm-delete").close());
  $("confirm-ok").addEventListener("click", deleteConfirmed);
  for (const radio of document.querySelectorAll("input[name=task-filter]")) {
    radio.addEventListener("change", () => {
      state.filter = radio.value;
      loadTasks();
    });
  }
  for (const button of document.querySelectorAll(".suggestion")) {
    button.addEventListener("click", () => {
      $("message").value = button.textContent;
      $("message").focus();
    });
  }
  $("show-conversations").addEventListener("click", () => toggleView("conversations"));
  $("show-tasks").addEventListener("click", () => toggleView("tasks"));
  document.addEventListener("visibilitychange", () => look());
  setInterval(() => look(), lookEvery);
  window.addEventListener("storage", onStorage);
  window.addEventListener("hashchange", () => {
    const id = conversationInHash();
    if (state.session && id && id !== state.conversationId) openConversation(id);
  });
}

// Signing in and out.

function showSignIn(message) {
  for (const id of ["app", "who", "views", "dev-form", "token-details"]) $(id).hidden = true;
  $("signin").hidden = false;
  $("signin-error").textContent = message || "";
  const dev = devLoginEnabled();
  $("dev-form").hidden = !dev;
  const details = $("token-details");
  details.hidden = false;
  details.open = !dev;
  details.classList.toggle("plain", !dev);
  (dev ? $("user-name") : $("token")).focus();
}

async function onDevSignIn(event) {
  event.preventDefault();
  const name = $("user-name").value.trim();
  if (!name) {
    $("signin-error").textContent = "Enter a user name.";
    return;
  }
  await signingIn(event.submitter, () => devSignIn(name));
}

async function onTokenSignIn(event) {
  event.preventDefault();
  await signingIn(event.submitter, async () => {
    const session = sessionFrom($("token").value.trim());
    // Ask the server now, so that a token it refuses is said at once.
    await new Client(session, () => {}).json("/tasks?limit=1");
    return session;
  });
}

async function signingIn(button, getSession) {
  $("signin-error").textContent = "";
  if (button) button.disabled = true;
  try {
    const session = await getSession();
    $("token").value = "";
    enter(session);
  } catch (err) {
    $("signin-error").textContent = signInTrouble(err);
  } finally {
    if (button) button.disabled = false;
  }
}

function signInTrouble(err) {
  if (!(err instanceof ApiError)) return err.message;
  if (err.status === 401) return "The server did not accept this token: it may have expired, or been signed with another secret.";
  if (err.status === 400 && err.problem) return err.problem.detail;
  return explain(err);
}

function enter(session) {
  saveSession(session);
  state.session = session;
  state.client = new Client(session, () => signOut("Your sign-in is no longer valid. Sign in again."));
  $("signin").hidden = true;
  for (const id of ["app", "who", "views"]) $(id).hidden = false;
  $("who-name").textContent = session.user;
  showView("messages");
  resetConversations();
  loadTasks();
  adoptTimeZone();
  const id = conversationInHash();
  if (id) openConversation(id);
  else newChat();
}

// onStorage follows the session of the browser's other tabs: signing out
// in one signs out all, and signing in as someone else in one makes every
// tab theirs.
function onStorage(event) {
  if (event.storageArea !== localStorage || (event.key !== tokenKey && event.key !== null)) return;
  const session = loadSession();
  if (state.session && session && session.user === state.session.user) {
    state.session.token = session.token; // a fresh token for the same user
    return;
  }
  if (state.session) signOut(session ? "" : "You signed out in another tab.");
  if (session) enter(session);
}

function signOut(message) {
  if (!state.session) return;
  leave();
  clearSession();
  Object.assign(state, { session: null, client: null, conversationId: null, cursor: null, pending: null, seen: newSeen() });
  state.offers.clear();
  state.view++;
  state.listGen++;
  state.taskGen++;
  state.titles.clear();
  for (const id of ["conversation-list", "thread", "task-list"]) $(id).replaceChildren();
  delete $("app").dataset.timeZone;
  $("task-count").textContent = "";
  hideError();
  setBusy(false);
  setHash(null);
  showSignIn(message);
}

// The conversation list.

function resetConversations() {
  state.cursor = null;
  $("conversation-list").replaceChildren();
  return loadConversations(++state.listGen);
}

async function loadConversations(gen) {
  const more = $("more-conversations");
  more.disabled = true;
  try {
    const page = await state.client.conversations(state.cursor);
    if (gen !== state.listGen) return;
    for (const c of page.conversations) {
      state.titles.set(c.id, c.title);
      $("conversation-list").append(conversationItem(c));
    }
    state.cursor = page.next_cursor;
    more.hidden = !state.cursor;
    $("conversations-empty").hidden = $("conversation-list").children.length > 0;
    $("conversations-error").textContent = "";
    if (state.conversationId) $("thread-title").textContent = state.titles.get(state.conversationId) || "Chat";
  } catch (err) {
    if (gen === state.listGen) $("conversations-error").textContent = `Your conversations could not be loaded. ${explain(err)}`;
  } finally {
    more.disabled = false;
  }
}

function conversationItem(c) {
  const li = el("li", "conversation");
  li.dataset.id = String(c.id);
  const open = el("button", "conversation-open");
  open.type = "button";
  const time = el("time", "conversation-time", when(c.updated_at));
  time.dateTime = c.updated_at;
  time.id = `conversation-time-${c.id}`;
  open.append(el("span", "conversation-title", c.title), time);
  // The button is named by the title alone; the time describes it.
  open.setAttribute("aria-labelledby", `conversation-title-${c.id}`);
  open.setAttribute("aria-describedby", time.id);
  open.firstChild.id = `conversation-title-${c.id}`;
  if (c.id === state.conversationId) open.setAttribute("aria-current", "true");
  open.addEventListener("click", () => {
    openConversation(c.id);
    showView("messages");
  });
  const del = el("button", "conversation-delete", "×");
  del.type = "button";
  del.title = "Delete";
  del.setAttribute("aria-label", `Delete “${c.title}”`);
  del.addEventListener("click", () => confirmDelete(c));
  li.append(open, del);
  return li;
}

function markCurrent() {
  for (const li of $("conversation-list").children) {
    const open = li.querySelector(".conversation-open");
    if (Number(li.dataset.id) === state.conversationId) open.setAttribute("aria-current", "true");
    else open.removeAttribute("aria-current");
  }
}

function confirmDelete(c) {
  state.deleting = c;
  $("confirm-title").textContent = c.title;
  $("confirm-delete").showModal();
  $("confirm-cancel").focus();
}

async function deleteConfirmed() {
  const c = state.deleting;
  $("confirm-delete").close();
  if (!c) return;
  try {
    await state.client.deleteConversation(c.id);
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 404)) {
      $("conversations-error").textContent = `The conversation could not be deleted. ${explain(err)}`;
      return;
    }
  }
  if (state.conversationId === c.id) newChat();
  resetConversations();
}

// The thread.

function newChat() {
  leave();
  state.view++;
  state.conversationId = null;
  state.pending = null;
  state.seen = newSeen();
  hideError();
  $("thread").replaceChildren();
  state.offers.clear();
  $("welcome").hidden = false;
  $("thread-title").textContent = "New chat";
  setHash(null);
  markCurrent();
  $("message").focus();
}

async function openConversation(id) {
  leave();
  const view = ++state.view;
  state.conversationId = id;
  state.pending = null;
  state.seen = newSeen();
  hideError();
  setHash(id);
  markCurrent();
  $("welcome").hidden = true;
  $("thread-title").textContent = state.titles.get(id) || "Chat";
  const thread = $("thread");
  thread.replaceChildren();
  state.offers.clear();
  thread.setAttribute("aria-busy", "true");
  try {
    const [messages, approvals, summary] = await Promise.all([state.client.messages(id), waitingIn(id), summaryOf(id)]);
    if (view !== state.view) return;
    showMessages(messages, approvals, summary);
    scrollDown(true);
    look(true);
  } catch (err) {
    if (view !== state.view) return;
    if (err instanceof ApiError && err.status === 404) {
      newChat();
      resetConversations();
    }
    showError(`This conversation could not be opened. ${explain(err)}`, false);
  } finally {
    if (view === state.view) thread.removeAttribute("aria-busy");
  }
}

function onMessageKey(event) {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    $("composer").requestSubmit();
  } else if (event.key === "Escape" && state.turn) {
    stopTurn();
  }
}

function onSend(event) {
  event.preventDefault();
  const message = $("message").value.trim();
  if (!message || state.turn || !state.session) return;
  // The same message sent again after a failure is a retry: same key.
  const p = state.pending;
  const again = p && p.message === message && p.conversationId === state.conversationId;
  if (again) p.nodes.forEach((n) => n.remove());
  $("message").value = "";
  runTurn({ message, conversationId: state.conversationId, key: again ? p.key : newKey() });
}

function retry() {
  const p = state.pending;
  if (!p || state.turn) return;
  p.nodes.forEach((n) => n.remove());
  runTurn(p);
}

// stopTurn stops the thread's running turn on the server, wherever it
// runs; its stream then ends with the reply marked stopped, and Send is
// offered again. A turn whose conversation is not known yet is stopped
// once its start event names it.
function stopTurn() {
  const turn = state.turn;
  if (!turn || turn.stopping) return;
  turn.stopping = true;
  if (turn.conversationId !== null) askStop(turn);
}

async function askStop(turn) {
  try {
    await state.client.stop(turn.conversationId);
  } catch (err) {
    if (state.turn !== turn) return;
    turn.stopping = false;
    showError(`The reply could not be stopped. ${explain(err)}`, false);
  }
}

// leave stops showing the thread's running turn and asking for one; the
// turn goes on on the server, and shows again when its conversation opens.
function leave() {
  if (state.look) state.look.abort();
  state.look = null;
  if (state.turn) {
    state.turn.controller.abort();
    state.turn = null;
    setBusy(false);
  }
}

async function runTurn(req) {
  hideError();
  if (state.look) state.look.abort();
  state.look = null;
  const view = state.view;
  const here = () => view === state.view;
  $("welcome").hidden = true;
  const asked = userItem(req.message);
  const reply = new Reply();
  reply.waiting();
  $("thread").append(asked, reply.li);
  scrollDown(true);
  const turn = { controller: new AbortController(), conversationId: req.conversationId, stopping: false };
  state.turn = turn;
  setBusy(true);
  let turnId = 0;
  try {
    await state.client.chat({ ...req, signal: turn.controller.signal }, (name, data) => {
      if (name === "start") {
        turnId = data.turn_id;
        turn.conversationId = data.conversation_id;
        if (here() && state.conversationId === null) started(data.conversation_id);
        if (here()) superseded();
        if (turn.stopping) askStop(turn);
      } else {
        // The server said how the turn ended: a look must not show it again.
        if ((name === "done" || name === "error") && here()) state.seen.doneTurn = turnId;
        show(reply, name, data);
      }
      if (here()) scrollDown(false);
    });
    if (here()) state.pending = null;
  } catch (err) {
    // Aborted, the page left the turn (it goes on on the server).
    if (here() && err.name !== "AbortError") failed(err, { ...req, turnId }, asked, reply);
  } finally {
    if (state.turn === turn) {
      state.turn = null;
      setBusy(false);
    }
    if (state.session) {
      loadTasks();
      resetConversations();
    }
  }
}

// show adds an event of a turn's stream to its reply.
function show(reply, name, data) {
  if (name === "delta") reply.append(data.text);
  else if (name === "tool_call") reply.call(data.id, data.tool, data.arguments);
  else if (name === "tool_result") {
    reply.result(data.id, data.tool, data.result, data.is_error);
    // The panel shows a change as the tool makes it, not once the turn ends.
    if (!data.is_error && changes(data.result) && state.session) loadTasks();
  }
  else if (name === "approval_required") offer(reply, data);
  else if (name === "done") {
    reply.finish(data);
    for (const a of data.approvals || []) offer(reply, a);
  }
}

// started is a new conversation's first event: it is open from now on.
function started(id) {
  state.conversationId = id;
  state.seen.ready = true;
  setHash(id);
  resetConversations();
}

function failed(err, req, asked, reply) {
  for (const call of (err.problem && err.problem.tool_calls) || []) reply.record(call);
  if (reply.empty()) reply.li.remove();
  else reply.interrupt("Interrupted: this reply stopped because of the error below.");
  state.pending = retryable(err) ? { ...retryOf(req, err), nodes: [asked, reply.li] } : null;
  showError(err, retryable(err));
}

// retryOf is what Retry sends after err. Where the failed turn had started a
// conversation and the server says it changed nothing (a problem with no
// tool_calls), the retry continues that conversation under a new key, so
// it does not open a second one; in any other case — changes were made, or
// nothing was heard — it is the same request with the same key, which the
// server answers without doing anything twice.
function retryOf(req, err) {
  const changedNothing = err instanceof ApiError && err.problem && !(err.problem.tool_calls || []).length;
  if (req.conversationId === null && state.conversationId !== null && changedNothing) {
    return { ...req, conversationId: state.conversationId, key: newKey() };
  }
  return req;
}

function setBusy(busy) {
  const stopHadFocus = document.activeElement === $("stop");
  $("send").hidden = busy;
  $("stop").hidden = !busy;
  if (stopHadFocus && !busy) $("message").focus();
  syncOffers();
}

function showError(err, canRetry) {
  $("chat-error-text").textContent = typeof err === "string" ? err : explain(err);
  const changes = $("chat-error-changes");
  changes.replaceChildren();
  const calls = (err instanceof ApiError && err.problem && err.problem.tool_calls) || [];
  if (calls.length > 0) {
    changes.append(el("li", "changes-intro", "Before that, these changes were made and saved:"));
    for (const call of calls) changes.append(el("li", call.is_error ? "tool error" : "tool ok", describeChange(call)));
  }
  const button = $("retry");
  button.hidden = !canRetry;
  button.disabled = false;
  if (canRetry && err.status === 429 && err.retryAfter > 0) {
    // Retrying before the wait is over would only be refused again.
    button.disabled = true;
    setTimeout(() => {
      button.disabled = false;
    }, err.retryAfter * 1000);
  }
  $("chat-error").hidden = false;
}

function hideError() {
  $("chat-error").hidden = true;
}

function scrollDown(always) {
  const box = $("thread-scroll");
  if (always || box.scrollHeight - box.scrollTop - box.clientHeight < 120) box.scrollTop = box.scrollHeight;
}

// Turns that run elsewhere: sent before a reload, from another tab or
// another device.

// newSeen is what a thread shows before its messages are loaded: ready once
// they are, lastId the last message's id, userLast whether that is the
// person's (a turn may be answering it), doneTurn the last turn whose end
// the thread shows, rechecked whether the load was checked once against a
// turn that ended meanwhile, gone whether the conversation was deleted.
function newSeen() {
  return { ready: false, lastId: 0, userLast: false, doneTurn: 0, rechecked: false, gone: false };
}

// showMessages shows the conversation's stored messages, oldest first, and
// the calls among them that wait for the person (approvals, the
// conversation's): each in the reply that made it. A call of a turn that
// still runs is not stored yet: its turn's stream shows it (see look).
function showMessages(messages, approvals, summary) {
  const replies = new Map(); // approval id → the reply whose call waits for it
  const items = messages.map((m) => {
    if (m.role === "user") return userItem(m.content);
    const reply = storedReply(m);
    for (const call of m.tool_calls || []) if (call.approval_id) replies.set(call.approval_id, reply);
    return reply.li;
  });
  if (summary) items.splice(messages.filter((m) => m.id <= summary.through_message_id).length, 0, summaryItem(summary));
  $("thread").replaceChildren(...items);
  state.offers.clear();
  for (const a of approvals) if (replies.has(a.id)) offer(replies.get(a.id), a);
  const last = messages.at(-1);
  Object.assign(state.seen, { ready: true, lastId: last ? last.id : 0, userLast: !!last && last.role === "user" });
}

// look asks whether a turn runs in the open conversation and, when one
// does, shows its reply live from the turn's stream, which starts at the
// turn's start: the text is never shown twice. It asks when the
// conversation opens (always) and every lookEvery while the tab is
// visible and the thread shows no turn. While the thread shows calls
// waiting for approval, a look that finds no turn also asks whether they
// still wait (see recheckOffers).
async function look(always = false) {
  const seen = state.seen;
  if (!state.session || state.conversationId === null || !seen.ready || seen.gone) return;
  if (state.turn || state.look || (!always && document.visibilityState !== "visible")) return;
  const view = state.view;
  const watch = {
    controller: new AbortController(), conversationId: state.conversationId, stopping: false,
    opened: false, turnId: 0, reply: null, ended: false, skipped: false,
  };
  state.look = watch.controller;
  let failure = null;
  try {
    await state.client.follow(watch.conversationId, {
      signal: watch.controller.signal,
      onOpen: () => {
        watch.opened = true;
      },
    }, (name, data) => {
      if (name === "start") join(watch, view, data.turn_id);
      else if (watch.reply) show(watch.reply, name, data);
      if (name === "done" || name === "error") watch.ended = true;
      if (view === state.view) scrollDown(false);
    });
  } catch (err) {
    failure = err;
  } finally {
    if (state.look === watch.controller) state.look = null;
    if (state.turn === watch) {
      state.turn = null;
      setBusy(false);
    }
  }
  if (view === state.view && !watch.skipped) looked(watch, failure);
}

// looked is what the page does after a look: after a turn's stream it
// shows what the turn changed; after none, it checks the thread's load
// once against a turn that ended between the load and the look.
function looked(watch, failure) {
  const seen = state.seen;
  if (failure && failure.name === "AbortError") return; // a turn of this tab began
  if (!watch.opened) {
    if (failure && failure.status === 404) seen.gone = true;
    else if (!failure && seen.userLast && !seen.rechecked) {
      seen.rechecked = true;
      reloadThread(state.view, watch.conversationId);
    } else if (!failure && state.offers.size > 0) {
      recheckOffers(state.view, watch.conversationId);
    }
    return;
  }
  if (watch.ended) seen.doneTurn = Math.max(seen.doneTurn, watch.turnId);
  // A done event brought the stored reply, which the thread shows now;
  // after an error, or a stream cut short, the thread shows what was stored.
  if (!watch.ended || failure) reloadThread(state.view, watch.conversationId);
  if (failure && failure.status !== 0) showError(failure, false);
  loadTasks();
  resetConversations();
}

// join places the reply of a followed turn, from what the thread shows:
// in place of the reply whose calls wait when the turn is their
// continuation (decided elsewhere), nowhere when its reply is there
// already (the turn ended since the thread was loaded, or ran in this
// tab), after the thread's last message when that is the turn's, and
// otherwise after the thread is loaded again (the turn began after the
// load: its message is not shown yet). From then on the thread shows the
// turn running.
function join(watch, view, turnId) {
  const seen = state.seen;
  watch.turnId = turnId;
  const asked = view === state.view ? askedIn(turnId) : null;
  if (!asked && (view !== state.view || turnId <= seen.doneTurn || seen.lastId > turnId)) {
    skip(watch);
    return;
  }
  state.look = null;
  state.turn = watch;
  setBusy(true);
  if (state.pending && state.pending.turnId === turnId) {
    // This tab lost the turn's stream, not the turn: it goes on here.
    hideError();
    state.pending = null;
  }
  if (asked) {
    watch.reply = continued(asked);
    return;
  }
  watch.reply = new Reply();
  watch.reply.waiting();
  if (seen.lastId === turnId && seen.userLast) $("thread").append(watch.reply.li);
  else reloadThread(view, watch.conversationId, watch);
}

// skip stops following a turn the thread shows already.
function skip(watch) {
  watch.skipped = true;
  watch.controller.abort();
}

// reloadThread shows the conversation's messages as stored now, unless a
// turn of this tab shows in the thread; with watch, the followed turn's
// reply goes after them, unless they hold it already.
async function reloadThread(view, id, watch) {
  const gen = ++state.loadGen;
  let loaded = null;
  try {
    loaded = await Promise.all([state.client.messages(id), waitingIn(id), summaryOf(id)]);
  } catch {
    // The thread stays as it is; the next look tries again.
  }
  if (view !== state.view || gen !== state.loadGen || (state.turn && state.turn !== watch)) return;
  if (loaded) showMessages(...loaded);
  if (watch && state.seen.lastId > watch.turnId) skip(watch);
  else if (watch) $("thread").append(watch.reply.li);
  scrollDown(false);
}

// summaryOf returns the conversation's summary, or null: a thread shows
// without its mark rather than not at all.
async function summaryOf(id) {
  try {
    return (await state.client.conversation(id)).summary;
  } catch {
    return null;
  }
}

// Calls that wait for the person's approval.

// waitingIn returns the approvals that wait in a conversation.
async function waitingIn(conversationId) {
  return (await state.client.approvals()).filter((a) => a.conversation_id === conversationId);
}

// offer shows Approve and Deny for an approval of the open conversation
// under reply, once.
function offer(reply, approval) {
  if (state.offers.has(approval.id) || approval.conversation_id !== state.conversationId) return;
  const entry = { approval, reply, offer: null, deciding: false };
  entry.offer = reply.offer(approval, (approved) => decide(entry, approved));
  state.offers.set(approval.id, entry);
  syncOffers();
}

// syncOffers disables the buttons while a turn runs in the thread (its
// calls and reply are not stored yet) and while a decision is on its way.
function syncOffers() {
  for (const entry of state.offers.values()) entry.offer.disabled = !!state.turn || entry.deciding;
}

// settle takes an approval's buttons away, saying why.
function settle(entry, why) {
  entry.offer.settle(why);
  state.offers.delete(entry.approval.id);
}

// superseded settles what waits in the thread: a new message of the
// person's supersedes it on the server.
function superseded() {
  for (const entry of [...state.offers.values()]) settle(entry, "Not run: your next message came before a decision.");
}

// decide sends the person's decision. While other calls of the turn wait,
// only this one's buttons go; once none waits, the turn continues, shown
// as a turn sent here is, and its reply replaces the one that asked.
async function decide(entry, approved) {
  if (entry.deciding || state.turn || !state.offers.has(entry.approval.id)) return;
  hideError();
  if (state.look) state.look.abort();
  state.look = null;
  const view = state.view;
  const here = () => view === state.view;
  const turn = { controller: new AbortController(), conversationId: entry.approval.conversation_id, stopping: false };
  entry.deciding = true;
  state.turn = turn;
  setBusy(true);
  let reply = null;
  let turnId = 0;
  try {
    const waiting = await state.client.decide(entry.approval.id, approved, {
      signal: turn.controller.signal,
      onOpen: () => {
        reply = continued(entry.reply);
      },
    }, (name, data) => {
      if (name === "start") {
        turnId = data.turn_id;
        if (turn.stopping) askStop(turn);
      } else {
        if ((name === "done" || name === "error") && here()) state.seen.doneTurn = turnId;
        show(reply, name, data);
      }
      if (here()) scrollDown(false);
    });
    if (waiting && here()) {
      settle(entry, approved ? "Approved: it runs once you have decided the rest." : "Denied: the assistant hears of it once you have decided the rest.");
    }
  } catch (err) {
    if (here() && err.name !== "AbortError") undecided(entry, reply, err);
  } finally {
    entry.deciding = false;
    if (state.turn === turn) {
      state.turn = null;
      setBusy(false);
    } else {
      syncOffers();
    }
    // A decision made with the keyboard takes its button away: the focus
    // goes back to the message box rather than to the page's top.
    if (here() && document.activeElement === document.body) $("message").focus();
    if (state.session && reply) {
      loadTasks();
      resetConversations();
    }
  }
}

// askedIn returns the reply in which calls of the turn turnId wait, if the
// thread shows one.
function askedIn(turnId) {
  for (const entry of state.offers.values()) if (entry.approval.turn_id === turnId) return entry.reply;
  return null;
}

// recheckOffers loads the thread again when a call it shows waiting waits
// no more: it was decided elsewhere (another tab, another device), after
// its turn's continuation ran, or it expired.
async function recheckOffers(view, id) {
  let waiting;
  try {
    waiting = new Set((await waitingIn(id)).map((a) => a.id));
  } catch {
    return; // the next look asks again
  }
  if (view !== state.view || state.turn) return;
  if ([...state.offers.keys()].some((shown) => !waiting.has(shown))) {
    reloadThread(view, id);
    loadTasks(); // an approved call changed them
  }
}

// continued is the reply of a continued turn, in the place of the reply
// that asked, whose approvals are all decided now.
function continued(asked) {
  for (const entry of [...state.offers.values()]) if (entry.reply === asked) state.offers.delete(entry.approval.id);
  const reply = new Reply();
  reply.waiting();
  if (asked.li.isConnected) asked.li.replaceWith(reply.li);
  else $("thread").append(reply.li);
  return reply;
}

// undecided shows why a decision failed: an approval the server can no
// longer decide (decided elsewhere, superseded or expired) loses its
// buttons; any other failure before the turn continued leaves them, to try
// again. Once the turn continued, the decision is taken: the reply is
// marked as cut short, and the thread then shows what the server stored.
function undecided(entry, reply, err) {
  const closed = err instanceof ApiError && (err.code === "approval_closed" || err.status === 404);
  if (reply) {
    for (const call of (err.problem && err.problem.tool_calls) || []) reply.record(call);
    reply.interrupt("Interrupted: this reply stopped because of the error below.");
    showError(err instanceof ApiError && err.status === 0
      ? "The connection to taskchat was lost. Your decision is saved; the thread shows what was stored."
      : err, false);
    reloadThread(state.view, entry.approval.conversation_id);
  } else if (closed) {
    settle(entry, err.problem && err.problem.detail ? err.problem.detail : explain(err));
  } else {
    showError(`Your decision could not be sent. ${explain(err)}`, false);
  }
}

// The task panel.

async function loadTasks() {
  const gen = ++state.taskGen;
  const filter = state.filter;
  try {
    const tasks = await state.client.tasks(filter);
    if (gen !== state.taskGen) return;
    $("task-list").replaceChildren(...tasks.map(taskItem));
    const done = tasks.filter((t) => t.completed).length;
    $("task-count").textContent = filter === "all" && tasks.length > 0 ? `${done} of ${tasks.length} done` : "";
    const empty = $("tasks-empty");
    empty.hidden = tasks.length > 0;
    empty.textContent = { all: "No tasks yet. Ask the assistant to add one.", pending: "Nothing pending.", completed: "Nothing completed yet." }[filter];
    $("tasks-error").textContent = "";
  } catch (err) {
    if (gen === state.taskGen) $("tasks-error").textContent = `Your tasks could not be loaded. ${explain(err)}`;
  }
}

function taskItem(t) {
  const li = el("li", ["task", t.completed ? "done" : "", t.overdue ? "overdue" : ""].filter(Boolean).join(" "));
  li.dataset.id = String(t.id);
  const mark = el("span", "task-mark");
  mark.setAttribute("aria-hidden", "true");
  const body = el("span", "task-body");
  body.append(el("span", "task-title", t.title));
  if (t.description) body.append(el("span", "task-description", t.description));
  const meta = [];
  if (t.due) meta.push(el("span", "task-due", (t.overdue ? "overdue: " : "due ") + dueText(t.due)));
  if (t.priority) meta.push(el("span", `task-priority ${t.priority}`, `${t.priority} priority`));
  if (meta.length > 0) {
    const line = el("span", "task-meta");
    line.append(...meta);
    body.append(line);
  }
  li.append(mark, el("span", "task-id", `#${t.id}`), body, el("span", "visually-hidden", t.completed ? ", done" : ", pending"));
  return li;
}

// dueText is a due date as a person reads it: "Fri, Dec 4", and the time
// when it has one ("Fri, Dec 4, 17:00"), in this browser's time zone. A
// day is read as a calendar day, never as midnight UTC.
function dueText(due) {
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(due);
  if (day) {
    const date = new Date(Number(day[1]), Number(day[2]) - 1, Number(day[3]));
    return date.toLocaleDateString(undefined, { weekday: "short", month: "short", day: "numeric" });
  }
  const at = new Date(due);
  if (Number.isNaN(at.getTime())) return due;
  // In the user's time zone, the one the assistant reads and writes dates
  // in, once the page knows it; this browser's until then.
  const timeZone = $("app").dataset.timeZone || undefined;
  try {
    return at.toLocaleString(undefined, { weekday: "short", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZone });
  } catch {
    return at.toLocaleString(undefined, { weekday: "short", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
  }
}

// adoptTimeZone gives the user this browser's time zone when they have
// none set yet, so that "tomorrow" and "at 5" mean theirs; a zone they
// set stays. #app's data-time-zone then names the user's zone.
async function adoptTimeZone() {
  const client = state.client;
  try {
    let { time_zone: zone, updated_at: set } = await client.settings();
    const browser = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (set === null && browser && client === state.client) zone = (await client.setTimeZone(browser)).time_zone;
    if (client === state.client && $("app").dataset.timeZone !== zone) {
      $("app").dataset.timeZone = zone;
      loadTasks(); // due times in it
    }
  } catch {
    // The assistant reads dates in UTC until a zone is set: no reason to
    // bother the person with it.
  }
}

// Views on a phone-sized screen, where one panel shows at a time.

function showView(view) {
  $("app").dataset.view = view;
  $("show-conversations").setAttribute("aria-pressed", String(view === "conversations"));
  $("show-tasks").setAttribute("aria-pressed", String(view === "tasks"));
}

function toggleView(view) {
  showView($("app").dataset.view === view ? "messages" : view);
}

// Small things.

function conversationInHash() {
  const m = /^#c=([1-9][0-9]{0,15})$/.exec(location.hash);
  return m ? Number(m[1]) : null;
}

function setHash(id) {
  history.replaceState(null, "", id ? `#c=${id}` : location.pathname + location.search);
}

// newKey is a fresh Idempotency-Key; crypto.randomUUID exists only on
// https and localhost, so other origins get one from getRandomValues.
function newKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const dateFormat = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric" });

function when(iso) {
  const d = new Date(iso);
  return d.toDateString() === new Date().toDateString() ? timeFormat.format(d) : dateFormat.format(d);
}
