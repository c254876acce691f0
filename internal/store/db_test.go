package store_test

import (
	"context"
	neturl "net/url"
	"testing"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

func TestOpenPlansPreparedStatementsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// mode is the connection's plan_cache_mode, and "sent" when it came
	// from the client (a startup parameter a pooler may refuse).
	mode := func(url string, s store.Settings) string {
		t.Helper()
		pool, err := store.Open(ctx, url, s)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		var m, source string
		if err := pool.QueryRow(ctx, "SELECT setting, source FROM pg_settings WHERE name = 'plan_cache_mode'").Scan(&m, &source); err != nil {
			t.Fatal(err)
		}
		if source == "client" {
			m += " sent"
		}
		return m
	}
	url := storetest.URL(t)
	if got := mode(url, store.Settings{}); got != "force_generic_plan sent" {
		t.Errorf("by default, plan_cache_mode = %q, want force_generic_plan sent", got)
	}
	if got := mode(url, store.Settings{PlanCacheMode: "force_custom_plan"}); got != "force_custom_plan sent" {
		t.Errorf("chosen, plan_cache_mode = %q, want force_custom_plan sent", got)
	}
	if got := mode(url, store.Settings{PlanCacheMode: store.PlanCacheServer}); got != "auto" {
		t.Errorf("left to the server, plan_cache_mode = %q, want the server's auto, not sent", got)
	}
	auto, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	q := auto.Query()
	q.Set("plan_cache_mode", "auto")
	auto.RawQuery = q.Encode()
	if got := mode(auto.String(), store.Settings{PlanCacheMode: "force_generic_plan"}); got != "auto sent" {
		t.Errorf("with plan_cache_mode=auto in the URL, plan_cache_mode = %q, want auto sent", got)
	}
	if got := mode(url, store.Settings{NoPreparedStatements: true, PlanCacheMode: "force_generic_plan"}); got != "auto" {
		t.Errorf("without prepared statements (a pooler may refuse the parameter), plan_cache_mode = %q, want the server's auto", got)
	}
}
