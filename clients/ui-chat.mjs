// Drives taskchat's POST /api/{user_id}/chat/ui with the Vercel AI SDK's
// own client code, as useChat does: useChat is AbstractChat (from `ai`)
// with React state, so this runs AbstractChat with plain state, over
// DefaultChatTransport, which sends the chat's messages and parses the UI
// message stream (validating every chunk). The chat's sendMessage(),
// regenerate(), resumeStream() and stop() decide what is sent, as in a
// browser. The transport's fetch is the global one, only watched: each
// request's method, URL and status are noted.
//
//   node clients/ui-chat.mjs <api> <token> <chat id> [mode] [api of another replica]
//
// <api> is the URL of /api/{user_id}/chat/ui. The mode says what to do:
//
// conversation (the default) prints one JSON object, which internal/http's
// TestUIChatWithTheAISDK checks (and the database): the assistant message
// of each request, the messages the client ends with, and the refusal's
// text, after it
//   1. sends a first message under the chat id (a new conversation),
//   2. sends a second one with the same chat id, which refers to the first,
//   3. regenerates the second reply, as a Retry button's regenerate() does,
//   4. sends a message as another user's path, which the server refuses.
//
// The other modes print one JSON line per step, as it happens, for
// internal/http's chat_ui_resume_test.go to act on ({"step": …}):
//
// resume: a page that reloads in the middle of a reply. A chat sends a
//   message on <api>; once its reply has run a tool it prints "left" and
//   stop()s, which only drops its connection. Then a new chat object with
//   the same id, as the reloaded page's useChat({ resume: true }) makes,
//   calls resumeStream() on the other replica's api, and the first chat,
//   as a tab whose connection dropped, calls it too, on its own; once both
//   replayed replies have reached the tool it prints "following", and
//   when both streams have ended, "resumed".
// stop: a Stop button. As resume, but the first chat stays connected;
//   once the follower on the other replica shows the tool's result it
//   prints "following", waits for a line on stdin (the test has looked),
//   calls taskchat's stop route there for the
//   conversation in the reply's metadata (stopTurn, what README shows),
//   and, when both streams have ended, prints "ended".
// resume-only: a new chat object calls resumeStream() on <api> and prints
//   "resumed" when it is done.
//
// approval: a call that waits for its person (APPROVAL_TOOLS=delete_task).
//   A chat set up as useChat is for approvals (sendAutomaticallyWhen:
//   lastAssistantMessageIsCompleteWithApprovalResponses) sends "Add a task
//   to buy milk", then "Delete task 1", whose reply's delete_task part asks
//   for approval; addToolApprovalResponse() answers it (approved unless a
//   sixth argument says "deny"), and the chat sends by itself. It prints
//   {asked, answered, messages, errors, requests}: the reply that asked,
//   the reply the answer continued, and the chat's messages.
import { AbstractChat, DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';

const [api, token, chatId, mode = 'conversation', otherApi] = process.argv.slice(2);
const modes = ['conversation', 'resume', 'stop', 'resume-only', 'approval'];
if (!api || !token || !chatId || !modes.includes(mode) || ((mode === 'resume' || mode === 'stop') && !otherApi)) {
  console.error(`usage: node ui-chat.mjs <url of /api/{user_id}/chat/ui> <bearer token> <chat id> [${modes.join('|')}] [url of /api/{user_id}/chat/ui on another replica]`);
  process.exit(2);
}

// plainState is a ChatState without a UI framework: what @ai-sdk/react's
// state does, minus the re-rendering; changed() runs where it re-renders.
function plainState(changed) {
  return {
    status: 'ready',
    error: undefined,
    messages: [],
    pushMessage(m) { this.messages = [...this.messages, m]; changed(); },
    popMessage() { this.messages = this.messages.slice(0, -1); changed(); },
    replaceMessage(i, m) { this.messages = [...this.messages.slice(0, i), m, ...this.messages.slice(i + 1)]; changed(); },
    snapshot: (thing) => structuredClone(thing),
  };
}

// watchedFetch is fetch noting each request's method, URL and status in
// requests.
function watchedFetch(requests) {
  return async (url, init = {}) => {
    const response = await fetch(url, init);
    requests.push({ method: init.method ?? 'GET', url: String(url), status: response.status });
    return response;
  };
}

// changes tells the waiters of each chat (until) that its messages changed.
const changes = new WeakMap();

// newChat is useChat({ id: chatId, transport }) for the chats at api: a new
// chat object, holding no messages, as a page that was just loaded makes.
function newChat(api, errors, requests = [], options = {}) {
  const changed = new EventTarget();
  const chat = new AbstractChat({
    ...options,
    id: chatId,
    state: plainState(() => changed.dispatchEvent(new Event('change'))),
    transport: new DefaultChatTransport({ api, headers: { Authorization: `Bearer ${token}` }, fetch: watchedFetch(requests) }),
    onError: (e) => errors.push(e.message),
  });
  changes.set(chat, changed);
  return chat;
}

// until resolves once holds(chat) is true, looking each time chat's
// messages change, and rejects if request ends first.
function until(chat, request, holds, what) {
  return new Promise((resolve, reject) => {
    const changed = changes.get(chat);
    const check = () => {
      if (holds(chat)) {
        changed.removeEventListener('change', check);
        resolve();
      }
    };
    changed.addEventListener('change', check);
    check();
    request.then(() => {
      check();
      reject(new Error(`the request ended (status ${chat.status}, ${chat.error}) before ${what}: ${JSON.stringify(chat.messages)}`));
    }, reject);
  });
}

// ranATool: the chat's last message is a reply that has a tool's result.
const ranATool = (chat) => chat.lastMessage?.role === 'assistant' &&
  chat.lastMessage.parts.some((p) => p.type === 'dynamic-tool' && p.state === 'output-available');

// stopTurn is what a Stop button calls: taskchat's stop route for the
// conversation of the reply (its metadata names it), which stops the turn
// on whichever replica runs it. The reply's stream then ends by itself,
// its metadata saying stopped. (chat.stop() would only drop the
// connection: the turn would go on.)
async function stopTurn(api, message) {
  const conversationId = message.metadata.conversation_id;
  const url = api.replace(/\/chat\/ui$/, `/conversations/${conversationId}/stop`);
  const response = await fetch(url, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
  return { url, status: response.status, body: response.status === 202 ? await response.json() : null };
}

// report prints one step of a mode as a JSON line.
const report = (step) => console.log(JSON.stringify(step));

// ended is what a chat ends with.
const ended = (chat, errors, requests) => ({
  message: chat.lastMessage, messages: chat.messages, status: chat.status, errors: [...errors], requests,
});

// reply runs one request of chat and returns the assistant message it
// ends with and the errors it reported.
async function reply(chat, errors, request) {
  errors.length = 0;
  await request();
  return { message: chat.lastMessage, errors: [...errors] };
}

async function conversation() {
  const errors = [];
  const chat = newChat(api, errors);
  const first = await reply(chat, errors, () => chat.sendMessage({ text: 'Add a task to buy milk' }));
  const second = await reply(chat, errors, () => chat.sendMessage({ text: 'Mark it as complete' }));
  const regenerated = await reply(chat, errors, () => chat.regenerate());

  // Another user's path: the chat reports the problem body as its error.
  const elsewhereErrors = [];
  const elsewhere = newChat(api.replace(/\/api\/[^/]+\/chat\/ui$/, '/api/someone-else/chat/ui'), elsewhereErrors);
  await elsewhere.sendMessage({ text: 'Add a task to buy milk' });
  const refused = elsewhere.status === 'error' ? elsewhere.error.message : null;

  console.log(JSON.stringify({ first, second, regenerated, messages: chat.messages, refused }));
}

// send starts a chat on api that sends a message, and waits until its
// reply has run a tool.
async function send() {
  const errors = [];
  const requests = [];
  const chat = newChat(api, errors, requests);
  const sending = chat.sendMessage({ text: 'Add a task to buy milk' });
  await until(chat, sending, ranATool, 'the reply ran a tool');
  return { chat, errors, requests, sending };
}

// follow makes chat resume its stream, and waits until the replayed
// reply has the tool's result (a chat that held the reply so far holds it
// anew: the replay begins it again).
async function follow({ chat, errors, requests }) {
  const resuming = chat.resumeStream();
  await until(chat, resuming, (c) => c.status === 'streaming' && ranATool(c), 'the resumed reply showed the tool');
  return { chat, errors, requests, resuming };
}

// fresh is a new chat object on otherApi, as a reloaded page makes.
function fresh() {
  const errors = [];
  const requests = [];
  return { chat: newChat(otherApi, errors, requests), errors, requests };
}

async function resume() {
  const sender = await send();
  report({ step: 'left', message: sender.chat.lastMessage });
  await sender.chat.stop(); // the page goes away, or the network
  await sender.sending;
  const [follower, again] = await Promise.all([follow(fresh()), follow(sender)]);
  report({ step: 'following', message: follower.chat.lastMessage, sender: again.chat.lastMessage });
  await Promise.all([follower.resuming, again.resuming]);
  report({ step: 'resumed', ...ended(follower.chat, follower.errors, follower.requests),
    sender: ended(sender.chat, sender.errors, sender.requests) });
}

// proceed waits for the test to say go on, a line on stdin: what the test
// checks after a step must not race with what the script does next.
function proceed() {
  return new Promise((resolve) => {
    process.stdin.once('data', () => {
      process.stdin.destroy(); // nothing more comes, and it must not keep the script alive
      resolve();
    });
  });
}

async function stop() {
  const sender = await send();
  const follower = await follow(fresh());
  report({ step: 'following', message: follower.chat.lastMessage });
  await proceed();
  const stopped = await stopTurn(otherApi, follower.chat.lastMessage);
  await Promise.all([sender.sending, follower.resuming]);
  report({ step: 'ended', stop: stopped, sender: ended(sender.chat, sender.errors, sender.requests),
    follower: ended(follower.chat, follower.errors, follower.requests) });
}

async function resumeOnly() {
  const errors = [];
  const requests = [];
  const chat = newChat(api, errors, requests);
  await chat.resumeStream();
  report({ step: 'resumed', ...ended(chat, errors, requests) });
}

// approval answers a call that waits, as a page's Approve button does.
async function approval() {
  const errors = [];
  const requests = [];
  const chat = newChat(api, errors, requests, { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
  await chat.sendMessage({ text: 'Add a task to buy milk' });
  await chat.sendMessage({ text: 'Delete task 1' });
  const asked = structuredClone(chat.lastMessage);
  const part = asked.parts.find((p) => p.type === 'dynamic-tool' && p.state === 'approval-requested');
  if (!part) {
    console.log(JSON.stringify({ asked, errors, requests }));
    return;
  }
  const approved = process.argv[7] !== 'deny';
  const sent = requests.length;
  await chat.addToolApprovalResponse({ id: part.approval.id, approved, reason: approved ? undefined : 'not yet' });
  // The automatic send runs on its own: wait for its request to end.
  while (requests.length === sent || chat.status === 'submitted' || chat.status === 'streaming') {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  console.log(JSON.stringify({ asked, answered: chat.lastMessage, messages: chat.messages, errors, requests }));
}

await { conversation, resume, stop, 'resume-only': resumeOnly, approval }[mode]();
