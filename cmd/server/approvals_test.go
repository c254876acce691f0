package main

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestConfigOfApprovals(t *testing.T) {
	t.Parallel()
	base := map[string]string{"DATABASE_URL": "postgres://x@localhost/db", "JWT_SECRET": secret}
	with := func(tools, ttl string) func(string) string {
		return func(k string) string {
			switch k {
			case "APPROVAL_TOOLS":
				return tools
			case "APPROVAL_TTL":
				return ttl
			}
			return base[k]
		}
	}
	cfg, err := loadConfig(with("", ""))
	if err != nil || cfg.ApprovalTools != nil || cfg.ApprovalTTL != 24*time.Hour {
		t.Fatalf("default: tools %q, ttl %s, %v; want none and 24h", cfg.ApprovalTools, cfg.ApprovalTTL, err)
	}
	cfg, err = loadConfig(with(" delete_task, update_task,,delete_task ", "90m"))
	if err != nil || !reflect.DeepEqual(cfg.ApprovalTools, []string{"delete_task", "update_task"}) || cfg.ApprovalTTL != 90*time.Minute {
		t.Fatalf("tools %q, ttl %s, %v", cfg.ApprovalTools, cfg.ApprovalTTL, err)
	}
	if _, err := loadConfig(with("delete_tasks", "")); err == nil || !strings.Contains(err.Error(), `"delete_tasks" is none of them`) {
		t.Fatalf("an unknown tool: %v", err)
	}
	if _, err := loadConfig(with("delete_task", "-1h")); err == nil || !strings.Contains(err.Error(), "APPROVAL_TTL") {
		t.Fatalf("a negative TTL: %v", err)
	}
}
