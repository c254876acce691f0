// Package web is taskchat's chat page: plain HTML, CSS and JavaScript
// (ES modules, no build step, no third-party code), embedded in the binary
// so that nothing is installed or built at run time, and served from here
// (Page: content types, versioned asset URLs, caching, the
// Content-Security-Policy); internal/http routes GET / and /app/ to it.
//
// The page is one more client of the API. It keeps the token in the
// browser's localStorage (every tab is signed in), streams turns over
// fetch, and renders every text from a person or a model with textContent
// or Text nodes, never as HTML (a reply's Markdown is built node by node,
// see markdown.js); the server sends a
// Content-Security-Policy that allows no inline script or style and no
// other origin.
package web

import "embed"

// Files holds the page: index.html and the assets it loads.
//
//go:embed index.html app.css app.js api.js markdown.js thread.js tools.js icon.svg
var Files embed.FS

// Index is the name of the page itself in Files; every other file is an
// asset the page loads from /app/.
const Index = "index.html"
