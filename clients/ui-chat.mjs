// Drives taskchat's POST /api/{user_id}/chat/ui with the Vercel AI SDK's
// own client code, as useChat does: useChat is AbstractChat (from `ai`)
// with React state, so this runs AbstractChat with plain state, over
// DefaultChatTransport, which sends the chat's messages and parses the UI
// message stream (validating every chunk). The chat's sendMessage() and
// regenerate() decide what is sent, as in a browser:
//
//   1. sends a first message under a chat id it made up (a new conversation),
//   2. sends a second one with the same chat id, which refers to the first,
//   3. regenerates the second reply, as a Retry button's regenerate() does,
//   4. sends a message as another user's path, which the server refuses.
//
// It prints one JSON object: the assistant message of each request, the
// messages the client ends with, and the refusal's text, which
// internal/http's TestUIChatWithTheAISDK checks (and the database).
//
//   node clients/ui-chat.mjs http://localhost:8080/api/alice/chat/ui "$TOKEN" my-chat-id
import { AbstractChat, DefaultChatTransport } from 'ai';

const [api, token, chatId] = process.argv.slice(2);
if (!api || !token || !chatId) {
  console.error('usage: node ui-chat.mjs <url of /api/{user_id}/chat/ui> <bearer token> <chat id>');
  process.exit(2);
}

// plainState is a ChatState without a UI framework: what @ai-sdk/react's
// state does, minus the re-rendering.
function plainState() {
  return {
    status: 'ready',
    error: undefined,
    messages: [],
    pushMessage(m) { this.messages = [...this.messages, m]; },
    popMessage() { this.messages = this.messages.slice(0, -1); },
    replaceMessage(i, m) { this.messages = [...this.messages.slice(0, i), m, ...this.messages.slice(i + 1)]; },
    snapshot: (thing) => structuredClone(thing),
  };
}

// newChat is useChat({ id: chatId, transport }) for the chats at api.
function newChat(api, errors) {
  return new AbstractChat({
    id: chatId,
    state: plainState(),
    transport: new DefaultChatTransport({ api, headers: { Authorization: `Bearer ${token}` } }),
    onError: (e) => errors.push(e.message),
  });
}

// reply runs one request of chat and returns the assistant message it
// ends with and the errors it reported.
async function reply(chat, errors, request) {
  errors.length = 0;
  await request();
  return { message: chat.lastMessage, errors: [...errors] };
}

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
