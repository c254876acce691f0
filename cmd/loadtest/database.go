package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// What the database did for the turns, for docs/scaling.md's capacity
// model: WAL bytes, rows written and commits from PostgreSQL's own
// counters, the tables' growth, and, when PostgreSQL runs on this machine,
// the CPU time of its processes.

// dbSnapshot is the scratch database's counters at one moment.
type dbSnapshot struct {
	wal                        int64 // bytes of WAL written so far, cluster-wide
	inserted, updated, deleted int64
	commits                    int64
	tableBytes                 int64 // the turn's tables with their indexes and TOAST
	postgresCPU                time.Duration
	postgresCPUKnown           bool
}

// turnTables are the tables a chat turn writes.
var turnTables = []string{"conversations", "messages", "tool_calls", "tasks", "task_counters", "token_usage", "idempotency_keys", "chat_ids"}

// takeDBSnapshot reads the counters. PostgreSQL's statistics reach
// pg_stat_database up to a second after a transaction ends, so it waits
// that long first.
func takeDBSnapshot(ctx context.Context, dbURL string) (dbSnapshot, error) {
	time.Sleep(1500 * time.Millisecond)
	var s dbSnapshot
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return s, err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SELECT pg_stat_clear_snapshot()`); err != nil {
		return s, err
	}
	err = conn.QueryRow(ctx, `
		SELECT (pg_current_wal_lsn() - '0/0')::bigint, d.tup_inserted, d.tup_updated, d.tup_deleted, d.xact_commit,
		       (SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
		        WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace AND c.relname = ANY($1))
		FROM pg_stat_database d WHERE d.datname = current_database()`, turnTables).
		Scan(&s.wal, &s.inserted, &s.updated, &s.deleted, &s.commits, &s.tableBytes)
	if err != nil {
		return s, err
	}
	s.postgresCPU, s.postgresCPUKnown = processCPU("postgres")
	return s, nil
}

// dbUse is what the database did between two snapshots, per turn.
type dbUse struct {
	walBytes, rowsWritten, commits, tableBytes float64
	postgresCPU                                time.Duration // zero when unknown
}

func (a dbSnapshot) perTurn(b dbSnapshot, turns int) dbUse {
	n := float64(max(turns, 1))
	u := dbUse{
		walBytes:    float64(b.wal-a.wal) / n,
		rowsWritten: float64((b.inserted-a.inserted)+(b.updated-a.updated)+(b.deleted-a.deleted)) / n,
		commits:     float64(b.commits-a.commits) / n,
		tableBytes:  float64(b.tableBytes-a.tableBytes) / n,
	}
	if a.postgresCPUKnown && b.postgresCPUKnown {
		u.postgresCPU = (b.postgresCPU - a.postgresCPU) / time.Duration(max(turns, 1))
	}
	return u
}

// report prints the rows of the load table that describe the database.
func (u dbUse) report(w io.Writer) {
	fmt.Fprintf(w, "| database per turn: WAL / rows written / commits | %.0f bytes / %.1f / %.1f | |\n", u.walBytes, u.rowsWritten, u.commits)
	fmt.Fprintf(w, "| database growth per turn (tables and indexes) | %.0f bytes | |\n", u.tableBytes)
	if u.postgresCPU > 0 {
		fmt.Fprintf(w, "| PostgreSQL CPU per turn (all its processes on this machine) | %.3f ms | |\n", float64(u.postgresCPU.Microseconds())/1000)
	}
}

// processCPU sums the user and system CPU time of the processes named
// name, from /proc; false where /proc is missing or none runs here.
func processCPU(name string) (time.Duration, bool) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks int64
	found := false
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid … utime stime: comm may hold spaces, so
		// fields are counted from the closing parenthesis.
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open || s[open+1:end] != name {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 13 {
			continue
		}
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += utime + stime
		found = true
	}
	const clockTicks = 100 // USER_HZ on Linux
	return time.Duration(ticks) * time.Second / clockTicks, found
}
