// thread.js renders a conversation's messages. Every text from a person or
// a model goes into the page through textContent or a Text node, never as
// HTML: a person's message as they typed it, a model's reply as the
// Markdown subset of markdown.js, built node by node.

import { render } from "./markdown.js";
import { chip, finished, running, waits } from "./tools.js";

// el makes an element with a class and, optionally, its text.
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// The notes under a reply that did not finish: one the page saw stopped,
// one cut short by a failure, and one read back from the conversation,
// which does not say which of the two it was.
const cutNote = "Interrupted: this reply was cut short before it finished. What it did is saved.";
const stoppedNote = "Interrupted: this reply was stopped. What it did before is saved.";
const storedNote = "Interrupted: this reply stopped before it finished. What it did is saved.";

// userItem is one message of the person.
export function userItem(content) {
  const li = el("li", "msg user");
  li.append(el("span", "visually-hidden", "You: "), el("div", "text", content));
  return li;
}

// summaryItem marks where a conversation was compacted: the messages above
// it are summarised for the model, and the summary opens from it, as text.
export function summaryItem(summary) {
  const li = el("li", "compacted");
  const details = el("details");
  details.append(el("summary", "", "Earlier messages summarised"), el("div", "text", summary.text));
  li.append(details);
  return li;
}

// Reply is one answer of the assistant: the tool calls it made, its text,
// the calls that wait for the person's approval and, when it did not
// finish, a note saying so. A streamed reply is built event by event; a
// stored one all at once.
export class Reply {
  constructor() {
    this.li = el("li", "msg assistant");
    this.tools = el("ul", "tools");
    this.tools.hidden = true;
    this.text = el("div", "text");
    this.approvals = el("div", "approvals");
    this.note = el("p", "note");
    this.note.hidden = true;
    this.calls = new Map();
    this.raw = ""; // the reply's Markdown, as it has arrived
    this.drawing = 0; // the timer of a draw to come, or 0
    this.li.append(el("span", "visually-hidden", "taskchat: "), this.tools, this.text, this.approvals, this.note);
  }

  // waiting shows that the assistant is working, until something arrives.
  waiting() {
    this.typing = el("span", "typing");
    this.typing.setAttribute("aria-label", "taskchat is answering");
    this.typing.append(el("span"), el("span"), el("span"));
    this.text.append(this.typing);
  }

  arrived() {
    if (this.typing) {
      this.typing.remove();
      this.typing = null;
    }
  }

  // call shows a tool call that has started.
  call(id, tool, args) {
    this.arrived();
    const row = el("li", "tool running");
    const what = el("span", "tool-what", running(tool, args));
    row.append(el("span", "tool-name", tool), what);
    this.tools.append(row);
    this.tools.hidden = false;
    this.calls.set(id, { row, what, tool, args });
  }

  // result shows what a tool call did.
  result(id, tool, result, isError) {
    if (!this.calls.has(id)) this.call(id, tool, {});
    const c = this.calls.get(id);
    c.row.className = isError ? "tool error" : waits(result) ? "tool waiting" : "tool ok";
    c.what.textContent = chip(c.tool, c.args, result, isError);
  }

  // record shows a finished call, unless it is shown already.
  record(call) {
    if (this.calls.has(call.id) && !this.calls.get(call.id).row.classList.contains("running")) return;
    if (!this.calls.has(call.id)) this.call(call.id, call.tool, call.arguments);
    this.result(call.id, call.tool, call.result, call.is_error);
  }

  append(text) {
    this.arrived();
    this.raw += text;
    // Deltas that arrive together are drawn once; a long reply is drawn
    // at most a few times a second, since each draw renders it whole.
    if (!this.drawing) this.drawing = setTimeout(() => this.draw(), this.raw.length > 20000 ? 250 : 0);
  }

  // show replaces the reply's text with text, at once.
  show(text) {
    this.raw = text;
    this.draw();
  }

  draw() {
    clearTimeout(this.drawing);
    this.drawing = 0;
    this.text.replaceChildren(render(this.raw));
  }

  // finish shows the turn's result as the server stored it.
  finish(response) {
    this.arrived();
    for (const call of response.tool_calls || []) this.record(call);
    this.show(response.response);
    if (response.stopped) this.interrupt(stoppedNote);
    else if (response.interrupted) this.interrupt(cutNote);
  }

  interrupt(why) {
    this.arrived();
    this.li.classList.add("interrupted");
    this.note.textContent = why;
    this.note.hidden = false;
  }

  // offer shows a call that waits for the person under the reply (see
  // Offer); decide(approved) is called with their decision.
  offer(approval, decide) {
    this.arrived();
    const offer = new Offer(approval, decide);
    this.approvals.append(offer.node);
    return offer;
  }

  // empty reports whether nothing of the reply has arrived.
  empty() {
    return this.calls.size === 0 && this.raw === "";
  }
}

// Offer is a call that waits for the person: the summary the server wrote
// of it, under which Approve and Deny decide it. The group is named by the
// summary, so a screen reader says what a button decides.
export class Offer {
  constructor(approval, decide) {
    this.node = el("div", "approval");
    this.node.setAttribute("role", "group");
    const summary = el("p", "approval-summary", approval.summary);
    summary.id = `approval-${approval.id}`;
    this.node.setAttribute("aria-labelledby", summary.id);
    this.approve = button("Approve", "primary", () => decide(true));
    this.deny = button("Deny", "", () => decide(false));
    this.label = el("p", "approval-label", "Waiting for your approval:");
    this.actions = el("div", "approval-actions");
    this.actions.append(this.approve, this.deny);
    this.node.append(this.label, summary, this.actions);
  }

  set disabled(disabled) {
    this.approve.disabled = disabled;
    this.deny.disabled = disabled;
  }

  // settle takes the buttons away, saying why: the call waits no more.
  settle(why) {
    this.label.remove();
    this.node.classList.add("settled");
    this.actions.replaceWith(el("p", "approval-status", why));
  }
}

function button(text, className, onClick) {
  const b = el("button", className, text);
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}

// storedReply is a stored answer of the assistant.
export function storedReply(m) {
  const reply = new Reply();
  for (const call of m.tool_calls || []) reply.record(call);
  reply.show(m.content);
  if (m.interrupted) reply.interrupt(storedNote);
  return reply;
}

// describeChange is a tool call told as a sentence, for the list of
// changes under an error, where no reply tells them.
export function describeChange(call) {
  return finished(call.tool, call.arguments, call.result, call.is_error);
}
