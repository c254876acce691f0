package chat_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent"
	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// using is round r reporting the usage of in and out tokens.
func using(in, out int, r round) round {
	return func(ctx context.Context, onText func(string)) (agent.Response, error) {
		resp, err := r(ctx, onText)
		resp.Usage = agent.Usage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out}
		return resp, err
	}
}

// A turn's tokens count whether it completed, failed before it produced
// anything, or could not store its reply; and they count towards the
// budget, which then refuses the next turn.
func TestEveryTurnCountsItsTokens(t *testing.T) {
	t.Parallel()
	user := storetest.UserID(t)
	ctx := context.Background()
	run := func(env engineEnv, message string) error {
		_, err := env.engine.Run(ctx, chat.Request{UserID: user, Message: message}, nil)
		return err
	}

	completed := mustEngine(t, script(using(100, 10, say("Hello."))))
	if err := run(completed, "Hi"); err != nil {
		t.Fatal(err)
	}
	failed := mustEngine(t, script(using(7, 3, failWith(agent.ErrModelServer))))
	if err := run(failed, "Hi again"); !errors.Is(err, agent.ErrModelServer) {
		t.Fatalf("err = %v, want the model's failure", err)
	}
	unstored := mustEngineWith(t, script(using(20, 2, calls("", `c1 add_task {"title":"Water the plants"}`)), using(30, 3, say("Added it."))),
		func(inner tasks.TurnStore) tasks.TurnStore { return &failFinishOnce{TurnStore: inner} }, nil)
	if err := run(unstored, "Add a task to water the plants"); !errors.Is(err, tasks.ErrUnavailable) {
		t.Fatalf("err = %v, want the failed final write", err)
	}

	today := time.Now().UTC()
	days, err := completed.engine.Usage(ctx, user, today.AddDate(0, 0, -1), today)
	if err != nil {
		t.Fatal(err)
	}
	want := tasks.DailyUsage{Usage: tasks.Usage{InputTokens: 157, OutputTokens: 18}, Turns: 3}
	if len(days) != 2 || days[0].Turns != 0 || days[1].Usage != want.Usage || days[1].Turns != want.Turns {
		t.Fatalf("usage = %+v, want yesterday empty and today %+v", days, want)
	}

	budgeted := mustEngineWith(t, script(say("Hello.")), nil, func(c *chat.Config) { c.DailyTokenBudget = 175 })
	var be *tasks.BudgetError
	if err := run(budgeted, "One more"); !errors.As(err, &be) || be.Used != 175 || be.Budget != 175 {
		t.Fatalf("err = %v, want a BudgetError of 175 used of 175", err)
	}
}
