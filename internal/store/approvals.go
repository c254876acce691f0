package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/taskchat/taskchat/internal/tasks"
)

// The approvals of a chat turn's calls that wait for their person, which
// Turns keeps with the turns (tasks.ApprovalStore).

// TaskTitle returns the title of the user's task number id, for an
// approval's summary; "" when there is none.
func (s *Turns) TaskTitle(ctx context.Context, userID string, id int64) (string, error) {
	var title string
	err := s.pool.QueryRow(ctx, stmt.ApprovalTaskTitle, userID, id).Scan(&title)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return title, translate(err)
}

// RequestApproval records a call that waits, with its placeholder result,
// in one statement; see tasks.ApprovalStore.
func (s *Turns) RequestApproval(ctx context.Context, r tasks.ApprovalRequest) (tasks.Approval, error) {
	rec := r.Record
	a := tasks.Approval{ConversationID: rec.ConversationID, TurnID: rec.TurnID, CallID: rec.CallID, Seq: rec.Seq, Round: rec.Round,
		Tool: rec.Tool, Arguments: rec.Arguments, Summary: r.Summary, Title: r.Title, State: tasks.ApprovalPending}
	placeholder := tasks.AwaitingJSON(a, r)
	err := s.pool.QueryRow(ctx, stmt.RequestApproval, r.UserID, rec.ConversationID, rec.ClaimToken,
		auditName(rec.CallID, "call"), rec.Tool, jsonOr(rec.Arguments, "{}"), rec.Round, rec.Seq, rec.TurnID,
		r.Summary, r.TTL, placeholder, r.Title).Scan(&a.ID, &a.CreatedAt, &a.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return tasks.Approval{}, tasks.ErrTurnEnded
	}
	if err != nil {
		return tasks.Approval{}, translate(err)
	}
	return a, nil
}

// DecideApproval decides an approval in one transaction: it locks its
// turn's approvals, decides this one if it is live, and returns those that
// still wait; see tasks.ApprovalStore. Under d.TurnRate, it first takes
// a token from the user's bucket of turns, which a refused decision gives
// back with the rest of its transaction.
func (s *Turns) DecideApproval(ctx context.Context, d tasks.Decision) (tasks.Decided, error) {
	var out tasks.Decided
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if d.TurnRate.Limited() {
			if _, err := tx.Exec(ctx, stmt.TakeRateToken, d.UserID, tasks.BucketTurns, d.TurnRate.PerMinute, d.TurnRate.Burst); err != nil {
				return err
			}
		}
		turn, err := queryApprovals(ctx, tx, stmt.LockTurnApprovals, d.UserID, d.ApprovalID)
		if err != nil {
			return err
		}
		want := tasks.ApprovalDenied
		if d.Approved {
			want = tasks.ApprovalApproved
		}
		found := false
		for _, a := range turn {
			if a.State == tasks.ApprovalApproved || a.State == tasks.ApprovalDenied || a.ID == d.ApprovalID {
				out.Latest = max(out.Latest, a.ID)
			}
			if a.ID != d.ApprovalID {
				if a.State == tasks.ApprovalPending {
					out.Waiting = append(out.Waiting, a)
				}
				continue
			}
			found, out.Approval = true, a
		}
		switch {
		case !found:
			return tasks.NotFound("approval", d.ApprovalID)
		case out.Approval.State == want:
			out.Again = true
			return nil
		case out.Approval.State != tasks.ApprovalPending:
			return &tasks.ApprovalClosedError{ID: d.ApprovalID, State: out.Approval.State}
		}
		if err := tx.QueryRow(ctx, stmt.DecideApproval, d.UserID, d.ApprovalID, want, nullable(d.Reason)).Scan(&out.Approval.DecidedAt); err != nil {
			return err
		}
		out.Approval.State, out.Approval.Reason = want, d.Reason
		return nil
	})
	if err != nil {
		var closed *tasks.ApprovalClosedError
		if errors.Is(err, tasks.ErrNotFound) || errors.As(err, &closed) {
			return tasks.Decided{}, err
		}
		if re := rateError(err, d.TurnRate); re != nil {
			return tasks.Decided{}, re
		}
		return tasks.Decided{}, translate(err)
	}
	return out, nil
}

// ListApprovals returns a page of the user's live approvals, newest first.
func (s *Turns) ListApprovals(ctx context.Context, userID string, before int64, limit int) ([]tasks.Approval, error) {
	return queryApprovals(ctx, s.pool, stmt.ListApprovals, userID, before, limit)
}

// GetApproval returns one of the user's approvals; ErrNotFound when the
// user has none such.
func (s *Turns) GetApproval(ctx context.Context, userID string, id int64) (tasks.Approval, error) {
	list, err := queryApprovals(ctx, s.pool, stmt.GetApproval, userID, id)
	if err != nil {
		return tasks.Approval{}, err
	}
	if len(list) == 0 {
		return tasks.Approval{}, tasks.NotFound("approval", id)
	}
	return list[0], nil
}

// TurnApprovals returns every approval of the user's turn, in order.
func (s *Turns) TurnApprovals(ctx context.Context, userID string, turnID int64) ([]tasks.Approval, error) {
	return queryApprovals(ctx, s.pool, stmt.TurnApprovals, userID, turnID)
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// queryApprovals runs a statement that returns approvals' columns.
func queryApprovals(ctx context.Context, q querier, sql string, args ...any) ([]tasks.Approval, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, translate(err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (tasks.Approval, error) {
		var a tasks.Approval
		err := row.Scan(&a.ID, &a.ConversationID, &a.TurnID, &a.CallID, &a.Seq, &a.Round, &a.Tool, &a.Arguments, &a.Summary, &a.Title,
			&a.State, &a.Reason, &a.DecidedAt, &a.CreatedAt, &a.ExpiresAt)
		if a.DecidedAt.Equal(time.Unix(0, 0)) {
			a.DecidedAt = time.Time{}
		}
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("read approvals: %w", translate(err))
	}
	return list, nil
}
