package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// printer writes a reply as it streams, made safe for a terminal, and
// knows whether its last line is open, so that what follows a reply
// starts on a line of its own. Its methods may be called from the turn's
// goroutine and the one that reads the keyboard.
type printer struct {
	mu   sync.Mutex
	w    io.Writer
	col0 bool // nothing written on the current line yet
	// cr is a carriage return that ended the last chunk, held back: a CRLF
	// split between two chunks is a line feed, which Text sees only whole.
	cr bool
}

// text writes text from the server, its lines kept.
func (p *printer) text(s string) {
	if s == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cr {
		s, p.cr = "\r"+s, false
	}
	if strings.HasSuffix(s, "\r") {
		s, p.cr = s[:len(s)-1], true
	}
	s = Text(s)
	io.WriteString(p.w, s)
	if s != "" {
		p.col0 = strings.HasSuffix(s, "\n")
	}
}

// flushCR writes a held carriage return that no line feed followed, as
// Text shows a lone one.
func (p *printer) flushCR() {
	if p.cr {
		io.WriteString(p.w, `\x0d`)
		p.col0, p.cr = false, false
	}
}

// line writes a line of the client's own, after ending the open one.
func (p *printer) line(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flushCR()
	if !p.col0 {
		io.WriteString(p.w, "\n")
	}
	io.WriteString(p.w, s+"\n")
	p.col0 = true
}

// prompt writes a prompt, which leaves the line open for the answer.
func (p *printer) prompt(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flushCR()
	if !p.col0 {
		io.WriteString(p.w, "\n")
	}
	io.WriteString(p.w, s)
	// The person's answer, echoed by the terminal, ends the line.
	p.col0 = true
}

// endLine ends the open line, if any.
func (p *printer) endLine() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flushCR()
	if !p.col0 {
		io.WriteString(p.w, "\n")
		p.col0 = true
	}
}

// maxToolLine bounds a tool call's line: it is shown briefly.
const maxToolLine = 100

// toolLine is a tool call in brief: `→ add_task {"title":"Buy milk"}`.
func toolLine(tool string, arguments json.RawMessage) string {
	var args bytes.Buffer
	if json.Compact(&args, arguments) != nil || args.String() == "{}" {
		args.Reset()
	}
	return brief("→ " + tool + " " + args.String())
}

// toolError is a call that failed, with what the tool said.
func toolError(tool string, result json.RawMessage) string {
	var said struct {
		Error string `json:"error"`
	}
	msg := string(result)
	if json.Unmarshal(result, &said) == nil && said.Error != "" {
		msg = said.Error
	}
	return brief("✗ " + tool + ": " + msg)
}

// brief is s on one line, safe, cut to maxToolLine characters.
func brief(s string) string {
	s = Line(strings.TrimSpace(s))
	if utf8.RuneCountInString(s) <= maxToolLine {
		return s
	}
	r := []rune(s)
	return string(r[:maxToolLine-1]) + "…"
}
