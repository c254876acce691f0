// markdown.js renders the Markdown a model writes as DOM nodes. It builds
// every node with createElement and Text nodes, never from HTML, so a
// reply that holds markup shows it as text; HTML is not part of the
// subset. Nothing here reads or changes the page: render returns nodes.
//
// The subset, which is what models write in a chat:
//   - paragraphs, whose line breaks are kept;
//   - fenced code blocks (``` or ~~~; one left open runs to the end, as
//     while it streams), shown as written;
//   - headings (# to ######), shown as a bold line;
//   - bullet lists (-, *, +) and ordered lists (1. or 1)), nested by
//     indentation; an item that starts with [ ] or [x] is a task-list
//     item with a checkbox that cannot be changed;
//   - block quotes (>) and thematic breaks (---, ***, ___);
//   - inline: `code`, *emphasis* and _emphasis_, **strong** and __strong__,
//     ~~strikethrough~~, backslash escapes, and links: [text](url),
//     <url> and bare http(s) URLs.
// A link is a link only when its URL is http, https or mailto; any other
// (javascript:, data:, a relative path) shows as the text it was written
// as. Links open in a new tab with rel="noopener noreferrer". Tables,
// images, reference links, setext headings, footnotes and raw HTML are
// not in the subset: they show as the text they were written as.

// render returns the nodes of source, as a DocumentFragment.
export function render(source) {
  const lines = source.replace(/\r\n?/g, "\n").split("\n").map(expandTabs);
  const fragment = document.createDocumentFragment();
  fragment.append(...blocks(lines));
  return fragment;
}

function node(tag, className, children) {
  const n = document.createElement(tag);
  if (className) n.className = className;
  if (children) n.append(...children);
  return n;
}

// expandTabs turns a line's leading tabs into spaces (a tab stop is 4),
// so that indentation is counted in one unit.
function expandTabs(line) {
  const m = /^[ \t]+/.exec(line);
  if (!m || !m[0].includes("\t")) return line;
  let width = 0;
  for (const c of m[0]) width = c === "\t" ? width + 4 - (width % 4) : width + 1;
  return " ".repeat(width) + line.slice(m[0].length);
}

// The lines that start a block.
const fenceOpen = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const heading = /^ {0,3}(#{1,6})(?:[ ]+(.*?))?(?:[ ]+#+)?[ ]*$/;
const rule = /^ {0,3}([-*_])(?:[ ]*\1){2,}[ ]*$/;
const quote = /^ {0,3}> ?/;
const listItem = /^( *)([-*+]|[0-9]{1,9}[.)])(?:( +)(.*))?$/;

const blank = (line) => line.trim() === "";
const indentOf = (line) => line.length - line.trimStart().length;

// blocks renders lines as block nodes.
function blocks(lines) {
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (blank(line)) {
      i++;
    } else if (isFence(line)) {
      i = fence(lines, i, out);
    } else if (heading.test(line)) {
      const text = heading.exec(line)[2] || "";
      out.push(node("p", "md-heading", [node("strong", "", inline(text))]));
      i++;
    } else if (rule.test(line)) {
      out.push(node("hr"));
      i++;
    } else if (quote.test(line)) {
      const inner = [];
      for (; i < lines.length && quote.test(lines[i]); i++) inner.push(lines[i].replace(quote, ""));
      out.push(node("blockquote", "", blocks(inner)));
    } else if (listItem.test(line) && indentOf(line) <= 3) {
      i = list(lines, i, out);
    } else {
      i = paragraph(lines, i, out);
    }
  }
  return out;
}

function isFence(line) {
  const m = fenceOpen.exec(line);
  // A backtick fence's info string holds no backtick (that is inline code).
  return !!m && !(m[2][0] === "`" && m[3].includes("`"));
}

// fence renders the code block that opens at lines[i]; it ends at a
// closing fence of the same kind, at least as long, or at the end.
function fence(lines, i, out) {
  const [, indent, marks] = fenceOpen.exec(lines[i]);
  const close = new RegExp(`^ {0,3}${marks[0] === "`" ? "`" : "~"}{${marks.length},}[ ]*$`);
  const body = [];
  for (i++; i < lines.length && !close.test(lines[i]); i++) {
    // Lines lose as much indentation as the opening fence had.
    const strip = Math.min(indent.length, indentOf(lines[i]));
    body.push(lines[i].slice(strip));
  }
  const code = node("code");
  code.textContent = body.join("\n");
  out.push(node("pre", "", [code]));
  return i + 1;
}

// startsBlock reports whether a line ends the paragraph before it: GFM's
// rule, where an ordered list interrupts a paragraph only from 1.
function startsBlock(line) {
  if (isFence(line) || heading.test(line) || rule.test(line) || quote.test(line)) return true;
  const m = listItem.exec(line);
  return !!m && indentOf(line) <= 3 && m[4] !== undefined && m[4].trim() !== "" && (/^[-*+]$/.test(m[2]) || /^1[.)]$/.test(m[2]));
}

// paragraph keeps what follows a line's text: a reply that streams in
// shows "Once upon a time, " as it has arrived.
function paragraph(lines, i, out) {
  const text = [lines[i].trimStart()];
  for (i++; i < lines.length && !blank(lines[i]) && !startsBlock(lines[i]); i++) text.push(lines[i].trimStart());
  out.push(node("p", "", inline(text.join("\n"))));
  return i;
}

// list renders the list that starts at lines[i]: its items follow one
// another with markers of the same kind (a bullet, or a number with the
// same delimiter).
function list(lines, i, out) {
  const first = listItem.exec(lines[i]);
  const ordered = /[0-9]/.test(first[2]);
  const kind = (m) => (ordered ? m[2].slice(-1) : m[2]);
  const el = node(ordered ? "ol" : "ul");
  if (ordered && parseInt(first[2], 10) !== 1) el.start = parseInt(first[2], 10);
  const base = indentOf(lines[i]);
  while (i < lines.length) {
    const m = listItem.exec(lines[i]);
    if (!m || indentOf(lines[i]) < base || indentOf(lines[i]) > base + 3 || /[0-9]/.test(m[2]) !== ordered || kind(m) !== kind(first)) break;
    i = item(lines, i, m, el);
    // One blank line between items keeps the list going.
    let next = i;
    while (next < lines.length && blank(lines[next])) next++;
    if (next < lines.length && listItem.test(lines[next]) && indentOf(lines[next]) >= base && indentOf(lines[next]) <= base + 3) i = next;
    else break;
  }
  out.push(el);
  return i;
}

// item renders one list item: its first line, then the lines indented
// under it (a nested list, another paragraph) and the lines that simply
// go on with its text.
function item(lines, i, m, parent) {
  const indent = m[1].length;
  const spaces = m[3] ? m[3].length : 1;
  // Content that starts 5 or more spaces after the marker is indented code
  // in CommonMark; here it is text that starts one space in.
  const contentIndent = indent + m[2].length + (spaces > 4 ? 1 : spaces);
  const body = [m[3] && spaces > 4 ? m[3].slice(1) + (m[4] || "") : m[4] || ""];
  for (i++; i < lines.length; i++) {
    const line = lines[i];
    if (blank(line)) {
      let next = i;
      while (next < lines.length && blank(lines[next])) next++;
      if (next < lines.length && indentOf(lines[next]) >= contentIndent) {
        body.push("");
        continue;
      }
      break;
    }
    const lineIndent = indentOf(line);
    const nested = listItem.test(line) && lineIndent > indent;
    const goesOn = !startsBlock(line) && !listItem.test(line) && !blank(body.at(-1));
    if (lineIndent >= contentIndent || nested || goesOn) body.push(line.slice(Math.min(lineIndent, contentIndent)));
    else break;
  }
  const li = node("li");
  const task = /^\[([ xX])\](?: +|$)/.exec(body[0]);
  if (task) {
    const box = node("input", "md-check");
    box.type = "checkbox";
    box.checked = task[1] !== " ";
    box.disabled = true;
    li.className = "md-task";
    body[0] = body[0].slice(task[0].length);
    li.append(box);
  }
  li.append(...blocks(body));
  parent.append(li);
  return i;
}

// Inline Markdown.

const punctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
const delimiters = ["**", "__", "~~", "*", "_"];
const safeProtocols = new Set(["http:", "https:", "mailto:"]);

// inline renders text as inline nodes; within a link, noLinks keeps it
// from making another.
function inline(text, noLinks = false) {
  const out = [];
  let buf = "";
  const flush = () => {
    if (buf) out.push(document.createTextNode(buf));
    buf = "";
  };
  // closedAfter[d] is a position after which no closer of d is found:
  // searching again from any later opener would find none either, so a
  // text full of unmatched delimiters is still read once.
  const closedAfter = {};
  const emit = (nodes, end) => {
    flush();
    out.push(...nodes);
    return end;
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    let found = null;
    if (c === "\\" && i + 1 < text.length && punctuation.includes(text[i + 1])) {
      buf += text[i + 1];
      i += 2;
      continue;
    }
    if (c === "`") found = codeSpan(text, i, closedAfter);
    else if (c === "*" || c === "_" || c === "~") found = emphasis(text, i, closedAfter, noLinks);
    else if (c === "[" && !noLinks) found = link(text, i, closedAfter);
    else if (c === "<" && !noLinks) found = angleLink(text, i);
    else if ((c === "h" || c === "H") && !noLinks) found = bareLink(text, i);
    if (found) {
      i = emit(found.nodes, found.end);
    } else if (c === "`" || c === "*" || c === "_" || c === "~") {
      // A run of delimiters that opens nothing is text, whole.
      let end = i;
      while (end < text.length && text[end] === c) end++;
      buf += text.slice(i, end);
      i = end;
    } else {
      buf += c;
      i++;
    }
  }
  flush();
  return out;
}

// codeSpan is `code`: a run of backticks, up to a run as long.
function codeSpan(text, i, closedAfter) {
  let n = 0;
  while (text[i + n] === "`") n++;
  const ticks = "`".repeat(n);
  const key = `code${n}`;
  if (closedAfter[key] !== undefined && i >= closedAfter[key]) return null;
  for (let from = i + n; ; ) {
    const j = text.indexOf(ticks, from);
    if (j < 0) {
      closedAfter[key] = i;
      return null;
    }
    let end = j + n;
    if (text[end] === "`") {
      while (text[end] === "`") end++;
      from = end;
      continue;
    }
    let body = text.slice(i + n, j).replace(/\n/g, " ");
    if (body.length > 2 && body.startsWith(" ") && body.endsWith(" ") && body.trim() !== "") body = body.slice(1, -1);
    const code = node("code");
    code.textContent = body;
    return { nodes: [code], end };
  }
}

const wordChar = (c) => c !== undefined && /[\p{L}\p{N}]/u.test(c);
const space = (c) => c === undefined || /\s/.test(c);

// emphasis is **strong**, __strong__, ~~struck~~, *emphasis* or _emphasis_.
// An opener is followed by a non-space and a closer preceded by one;
// underscores work only at a word's edges, so snake_case stays as it is.
function emphasis(text, i, closedAfter, noLinks) {
  for (const d of delimiters) {
    if (!text.startsWith(d, i)) continue;
    const single = d.length === 1;
    if (single && text[i + 1] === d) continue; // part of a longer run
    if (d === "~~" && text[i + 2] === "~") return null;
    const after = text[i + d.length];
    if (space(after)) continue;
    if (d[0] === "_" && wordChar(text[i - 1])) continue;
    let j = closer(text, i + d.length + 1, d, closedAfter);
    if (j < 0) continue;
    // ***both*** is strong around emphasis: the closer is a run's end.
    if (!single) while (text[j + d.length] === d[0]) j++;
    const tag = d === "~~" ? "del" : single ? "em" : "strong";
    return { nodes: [node(tag, "", inline(text.slice(i + d.length, j), noLinks))], end: j + d.length };
  }
  return null;
}

// closer finds where d closes, from from on, or -1.
function closer(text, from, d, closedAfter) {
  if (closedAfter[d] !== undefined && from >= closedAfter[d]) return -1;
  for (let j = text.indexOf(d, from); j >= 0; j = text.indexOf(d, j + 1)) {
    if (space(text[j - 1])) continue;
    if (d.length === 1 && (text[j - 1] === d || text[j + 1] === d)) continue;
    if (d[0] === "_" && wordChar(text[j + d.length])) continue;
    return j;
  }
  closedAfter[d] = from;
  return -1;
}

// link is [text](url), when the URL is one a link may have.
function link(text, i, closedAfter) {
  if (closedAfter["]"] !== undefined && i >= closedAfter["]"]) return null;
  if (text.indexOf("]", i) < 0) {
    closedAfter["]"] = i;
    return null;
  }
  let depth = 0;
  let close = -1;
  // A link's text is short: the search stops at 1000 characters, so a
  // text full of [ is still read in linear time.
  for (let j = i + 1; j < text.length && j < i + 1000; j++) {
    if (text[j] === "\\") j++;
    else if (text[j] === "[") depth++;
    else if (text[j] === "]" && depth-- === 0) {
      close = j;
      break;
    }
  }
  if (close < 0 || text[close + 1] !== "(") return null;
  const target = /^\(\s*(<[^<>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:"[^"\n]*"|'[^'\n]*'))?\s*\)/.exec(text.slice(close + 1, close + 2050));
  if (!target) return null;
  const href = safeURL(target[1].replace(/^<(.*)>$/, "$1"));
  const end = close + 1 + target[0].length;
  if (!href || close === i + 1) return { nodes: [document.createTextNode(text.slice(i, end))], end };
  return { nodes: [anchor(href, inline(text.slice(i + 1, close), true))], end };
}

// angleLink is <https://…> or <mailto:…>.
function angleLink(text, i) {
  const m = /^<((?:https?|mailto):[^\s<>]+)>/i.exec(text.slice(i, i + 2050));
  const href = m && safeURL(m[1]);
  return href ? { nodes: [anchor(href, [document.createTextNode(m[1])])], end: i + m[0].length } : null;
}

// bareLink is an http(s) URL in the text, without what usually ends the
// sentence around it: trailing punctuation, and a ) it did not open.
function bareLink(text, i) {
  if (i > 0 && !/[\s(*_~"']/.test(text[i - 1])) return null;
  const m = /^https?:\/\/[^\s<>"]+/i.exec(text.slice(i, i + 2050));
  if (!m) return null;
  let url = m[0];
  for (;;) {
    const last = url.at(-1);
    if (".,:;!?*_~'".includes(last)) url = url.slice(0, -1);
    else if (last === ")" && url.split("(").length < url.split(")").length) url = url.slice(0, -1);
    else break;
  }
  const href = safeURL(url);
  return href ? { nodes: [anchor(href, [document.createTextNode(url)])], end: i + url.length } : null;
}

// safeURL returns url's absolute form when it is http, https or mailto,
// and null for any other scheme, or for none (a relative URL).
function safeURL(url) {
  if (!/^[a-z][a-z0-9+.-]*:/i.test(url)) return null;
  try {
    const u = new URL(url);
    return safeProtocols.has(u.protocol) ? u.href : null;
  } catch {
    return null;
  }
}

// anchor is a link that opens in a new tab, which gets no handle on the
// page (noopener) and no Referer (noreferrer).
function anchor(href, children) {
  const a = node("a", "", children);
  a.href = href;
  a.target = "_blank";
  a.rel = "noopener noreferrer";
  return a;
}
