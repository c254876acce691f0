package chat_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/taskchat/taskchat/internal/agent/offline"
	"github.com/taskchat/taskchat/internal/chat"
	"github.com/taskchat/taskchat/internal/store/storetest"
	"github.com/taskchat/taskchat/internal/tasks"
)

// The model is told the user's date, time and zone, from the setting the
// turn reads as it starts, for a new conversation, a continued one and a
// regenerated reply alike; a user without one is told UTC.
func TestTheModelIsToldTheUsersDateTimeAndZone(t *testing.T) {
	t.Parallel()
	model := &recorder{Model: offline.New()}
	env := mustEngine(t, model)
	ctx := context.Background()
	user, other := storetest.UserID(t), storetest.UserID(t)
	if _, err := env.tasks.SaveSettings(ctx, user, tasks.Settings{TimeZone: "Asia/Kolkata"}); err != nil {
		t.Fatal(err)
	}
	kolkata, _ := time.LoadLocation("Asia/Kolkata")

	check := func(who string, want *time.Location, zone string) {
		t.Helper()
		reqs := model.requests()
		if len(reqs) == 0 {
			t.Fatal("the model was not called")
		}
		for _, req := range reqs {
			now := time.Now().In(want)
			if req.Now.Location().String() != want.String() || now.Sub(req.Now) > time.Minute || req.Now.After(now) {
				t.Errorf("%s's turn: the model's Now is %s, want about %s", who, req.Now, now)
			}
			if date := req.Now.Format("Monday, 2 January 2006"); !strings.Contains(req.System, "Today is "+date+"; it is "+req.Now.Format("15:04")+" in the person's time zone, "+zone+".") {
				t.Errorf("%s's turn: the system prompt does not give the date, time and zone %s:\n%s", who, zone, req.System)
			}
		}
	}
	out, err := env.engine.Run(ctx, chat.Request{UserID: user, Message: "Add a task to buy milk"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	check("a new conversation", kolkata, "Asia/Kolkata, UTC+05:30")
	if _, err := env.engine.Run(ctx, chat.Request{UserID: user, ConversationID: out.ConversationID, Message: "what's on my list?"}, nil); err != nil {
		t.Fatal(err)
	}
	check("a continued conversation", kolkata, "Asia/Kolkata, UTC+05:30")
	if _, err := env.engine.Run(ctx, chat.Request{UserID: user, ConversationID: out.ConversationID, Message: "what's on my list?", Regenerate: true}, nil); err != nil {
		t.Fatal(err)
	}
	check("a regenerated reply", kolkata, "Asia/Kolkata, UTC+05:30")
	if _, err := env.engine.Run(ctx, chat.Request{UserID: other, Message: "Add a task to call mom"}, nil); err != nil {
		t.Fatal(err)
	}
	check("a user with no zone", time.UTC, "UTC")
}
