package store_test

import (
	"context"
	neturl "net/url"
	"testing"

	"github.com/taskchat/taskchat/internal/store"
	"github.com/taskchat/taskchat/internal/store/storetest"
)

func TestOpenPlansPreparedStatementsOnce(t *testing.T) {
	ctx := context.Background()
	mode := func(url string, opts ...store.Option) string {
		t.Helper()
		pool, err := store.Open(ctx, url, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		var m string
		if err := pool.QueryRow(ctx, "SHOW plan_cache_mode").Scan(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	url := storetest.URL(t)
	if got := mode(url); got != "force_generic_plan" {
		t.Errorf("by default, plan_cache_mode = %q, want force_generic_plan", got)
	}
	auto, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	q := auto.Query()
	q.Set("plan_cache_mode", "auto")
	auto.RawQuery = q.Encode()
	if got := mode(auto.String()); got != "auto" {
		t.Errorf("with plan_cache_mode=auto in the URL, plan_cache_mode = %q, want auto", got)
	}
	if got := mode(url, store.WithoutPreparedStatements()); got != "auto" {
		t.Errorf("without prepared statements (a pooler may refuse the parameter), plan_cache_mode = %q, want the server's auto", got)
	}
}
