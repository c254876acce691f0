package store

import (
	"bufio"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"regexp"
	"sort"
	"strings"
)

// sqlFiles hold every statement the store sends, one file per table as the
// Go files go, each statement headed by a line "-- name: Name" and read by
// that name: a reader looking for the SQL of stmt.FinishTurn greps for
// "name: FinishTurn".
//
//go:embed sql/*.sql
var sqlFiles embed.FS

// statements are the store's statements by name, one field each. The
// fields are filled from sqlFiles when the package loads (stmt), and the
// two must match exactly: a field no file names, a statement no field
// holds, or a name given twice stops the package from loading, so no
// server starts and no test runs with a statement missing or misnamed.
// TestEveryStatementPrepares has PostgreSQL parse each one against the
// migrated schema.
//
// A statement is one text: where a caller needs a variant (a page with or
// without a status, a recovery under a claim or under none), each variant
// is a statement of its own, because the planner plans each apart.
type statements struct {
	// sql/tasks.sql
	CreateTask, CompleteTask, DeleteTask, UpdateTask                               string
	ListTasks, ListTasksWithStatus, ListTasksMatching, ListTasksWithStatusMatching string
	ListTasksOfPriority, ListTasksByDue, ListTasksByDueOpen                        string
	TurnHoldsConversation                                                          string
	// sql/settings.sql
	UserTimeZone, SaveSettings, ShowSettings string
	// sql/tool_calls.sql
	RecordMCPCall string
	// sql/conversations.sql
	ListConversations, ListConversationsAfter, ConversationExists string
	MessagesPageEnd, MessagesPage, MessagesPageToolCalls          string
	DeleteConversation, ShowConversation                          string
	// sql/summaries.sql
	HistorySummary, ClaimToCompact, CompactionPageEnd, SaveSummary string
	// sql/chat_ids.sql
	ChatConversation string
	// sql/idempotency.sql
	BeginIdempotent, LockCutShortKey, CompleteIdempotent, ForgetIdempotent string
	// sql/usage.sql
	CheckTokenBudget, RecordUsage, DailyUsage string
	// sql/turns.sql
	CommitLazily, PlanFromIndexes                                                    string
	StartConversation, ClaimConversation, AddUserMessage                             string
	HistoryWindow, HistoryMessages, HistoryToolCalls                                 string
	FinishTurn, AbandonTurn, TurnCalls                                               string
	LockConversationToRecover, RecoverConversationUnheld, RecoverConversationClaimed string
	// sql/reopen.sql
	ReopenClaim, ReopenTurn, EarlierCalls string
	// sql/limits.sql
	TakeRateToken, OpenStream, CloseStream, RenewStreams string
	// sql/runs.sql
	CheckRunningTurns, AppendRunEvents, LatestRun, WatchRun, ReadRun, ReadRunEvents, RequestStop, StopsRequested string
	// sql/approvals.sql
	ApprovalTaskTitle, RequestApproval, LockTurnApprovals, DecideApproval string
	ListApprovals, GetApproval, TurnApprovals                             string
	// sql/retention.sql
	DeleteOldConversations, DeleteOldDetachedCalls, DeleteExpiredKeys, DeleteOldRuns, DeleteOldUsage string
	DeleteOldStreamLeases                                                                            string
}

// stmt holds every statement, from sqlFiles. It is written once, as the
// package loads, and only read after.
var stmt = mustLoadStatements(sqlFiles)

func mustLoadStatements(files fs.FS) statements {
	var s statements
	if err := loadStatements(files, &s); err != nil {
		panic("store: " + err.Error())
	}
	return s
}

// loadStatements fills every field of *into with the statement of its name
// in the .sql files of files' sql directory.
func loadStatements(files fs.FS, into any) error {
	texts, err := readStatements(files)
	if err != nil {
		return err
	}
	v := reflect.ValueOf(into).Elem()
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		text, ok := texts[name]
		if !ok {
			return fmt.Errorf("no statement is named %s (want a line \"-- name: %s\" in sql/*.sql)", name, name)
		}
		v.Field(i).SetString(text)
		delete(texts, name)
	}
	if len(texts) > 0 {
		names := make([]string, 0, len(texts))
		for name := range texts {
			names = append(names, name)
		}
		sort.Strings(names)
		return fmt.Errorf("statements %s are in sql/*.sql but not in the statements struct", strings.Join(names, ", "))
	}
	return nil
}

// nameLine is the line that starts a statement.
var nameLine = regexp.MustCompile(`^-- name: ([A-Z][A-Za-z0-9]*)\s*$`)

// readStatements reads every statement of the .sql files in files' sql
// directory, by name. A statement's text is the lines after its name line
// up to the next one, without the lines that are only a comment (they are
// for its readers, not for PostgreSQL, which would be sent them on every
// execution that is not prepared). Before a file's first name line there
// may be comments only.
func readStatements(files fs.FS) (map[string]string, error) {
	paths, err := fs.Glob(files, "sql/*.sql")
	if err != nil || len(paths) == 0 {
		return nil, fmt.Errorf("no sql/*.sql files: %v", err)
	}
	texts := map[string]string{}
	where := map[string]string{}
	for _, p := range paths {
		b, err := fs.ReadFile(files, p)
		if err != nil {
			return nil, err
		}
		name, lines := "", []string(nil)
		flush := func() error {
			text := strings.TrimSpace(strings.Join(lines, "\n"))
			switch {
			case name == "":
				return nil
			case text == "":
				return fmt.Errorf("%s: statement %s is empty", p, name)
			case where[name] != "":
				return fmt.Errorf("%s: statement %s is named in %s already", p, name, where[name])
			}
			texts[name], where[name] = text, path.Base(p)
			return nil
		}
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			trimmed := strings.TrimSpace(line)
			if m := nameLine.FindStringSubmatch(line); m != nil {
				if err := flush(); err != nil {
					return nil, err
				}
				name, lines = m[1], nil
				continue
			}
			switch {
			case strings.HasPrefix(trimmed, "-- name:"):
				return nil, fmt.Errorf("%s:%d: %q is not a name line (\"-- name: Name\", the name a Go identifier)", p, n, line)
			case strings.HasPrefix(trimmed, "--"):
				continue
			case name == "" && trimmed != "":
				return nil, fmt.Errorf("%s:%d: SQL before the file's first \"-- name:\" line", p, n)
			}
			lines = append(lines, line)
		}
		if err := flush(); err != nil {
			return nil, err
		}
	}
	return texts, nil
}
