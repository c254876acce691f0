// Drives taskchat's POST /api/{user_id}/chat/ui with the Vercel AI SDK's
// own client code, as useChat does: DefaultChatTransport sends the chat's
// messages and parses the UI message stream (validating every chunk), and
// readUIMessageStream assembles the assistant message from it. It holds
// the messages as useChat's state would, and:
//
//   1. sends a first message under a chat id it made up (a new conversation),
//   2. sends a second one with the same chat id, which refers to the first,
//   3. regenerates the second reply, as useChat's regenerate() does,
//   4. sends a message as another user's path, which the server refuses.
//
// It prints one JSON object: the assistant message of each request, the
// messages the client ends with, and the refusal's text, which
// internal/http's TestUIChatWithTheAISDK checks (and the database).
//
//   node clients/ui-chat.mjs http://localhost:8080/api/alice/chat/ui "$TOKEN" my-chat-id
import { DefaultChatTransport, readUIMessageStream, generateId } from 'ai';

const [api, token, chatId] = process.argv.slice(2);
if (!api || !token || !chatId) {
  console.error('usage: node ui-chat.mjs <url of /api/{user_id}/chat/ui> <bearer token> <chat id>');
  process.exit(2);
}

const transport = new DefaultChatTransport({ api, headers: { Authorization: `Bearer ${token}` } });
let messages = [];

// request sends the chat as useChat's makeRequest does and returns the
// assistant message the stream assembles, with any error chunk's text.
async function request(transport, trigger, messageId) {
  const stream = await transport.sendMessages({
    chatId, messages, trigger, messageId, abortSignal: new AbortController().signal,
  });
  const errors = [];
  let message;
  for await (const snapshot of readUIMessageStream({ stream, onError: (e) => errors.push(e.message) })) {
    message = snapshot;
  }
  return { message, errors };
}

async function send(text) {
  messages = [...messages, { id: generateId(), role: 'user', parts: [{ type: 'text', text }] }];
  const reply = await request(transport, 'submit-message', undefined);
  messages = [...messages, reply.message];
  return reply;
}

// regenerate drops the last assistant message and asks for it again, as
// useChat's regenerate() does.
async function regenerate() {
  const last = messages.at(-1);
  messages = messages.slice(0, -1);
  const reply = await request(transport, 'regenerate-message', last.id);
  messages = [...messages, reply.message];
  return reply;
}

const first = await send('Add a task to buy milk');
const second = await send('Mark it as complete');
const regenerated = await regenerate();

// Another user's path: the transport throws with the problem body.
let refused = null;
try {
  const elsewhere = new DefaultChatTransport({
    api: api.replace(/\/api\/[^/]+\/chat\/ui$/, '/api/someone-else/chat/ui'),
    headers: { Authorization: `Bearer ${token}` },
  });
  await request(elsewhere, 'submit-message', undefined);
} catch (e) {
  refused = e.message;
}

console.log(JSON.stringify({ first, second, regenerated, messages, refused }));
