// Command server runs taskchat: the HTTP chat service (serve, the
// default), the same on this machine with nothing to configure (dev), and
// two helper subcommands (token, healthcheck). All configuration comes from
// the environment, read and checked once, every problem named by its
// variable; see docs/configuration.md.
package main
