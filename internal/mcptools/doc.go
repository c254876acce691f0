// Package mcptools exposes the task service as MCP tools (official go-sdk):
// to the chat's language model in process (NewServer), and to outside MCP
// clients over Streamable HTTP (NewRemoteServer, NewHTTPHandler). A server
// is built for exactly one user: the user is bound when the server is
// constructed and is never a tool argument, so a confused or manipulated
// model or client cannot act for anybody else.
package mcptools
