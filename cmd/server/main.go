package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	// The zone database, so every IANA zone a user picks works whatever the
	// machine or image has (tasks.LoadZone).
	_ "time/tzdata"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	// Ctrl-C is runIn's to read: chat stops a reply with it.
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	if err := runIn(ctx, os.Args[1:], os.Getenv, console{os.Stdin, interrupts}, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", programName(), err)
		os.Exit(1)
	}
}
