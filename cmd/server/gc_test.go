package main

import (
	"maps"
	"runtime/metrics"
	"strings"
	"testing"
)

func TestConfigOfGCHeadroom(t *testing.T) {
	t.Parallel()
	base := map[string]string{"DATABASE_URL": "postgres://x@localhost/db", "JWT_SECRET": secret}
	for _, c := range []struct {
		vars map[string]string
		want uint64
	}{
		{nil, 32 << 20},
		{map[string]string{"GC_HEADROOM_MB": " 256 "}, 256 << 20},
		{map[string]string{"GC_HEADROOM_MB": "0"}, 0},
		{map[string]string{"GOGC": "200"}, 0},
		{map[string]string{"GOGC": "off"}, 0},
	} {
		vars := maps.Clone(base)
		maps.Copy(vars, c.vars)
		cfg, err := loadConfig(env(vars))
		if err != nil || cfg.GCHeadroom != c.want {
			t.Errorf("%v: %d bytes of headroom, %v; want %d", c.vars, cfg.GCHeadroom, err, c.want)
		}
	}
	for _, bad := range []string{"-1", "lots", "1.5", "32MiB", "1048577"} {
		_, err := loadConfig(env(map[string]string{"DATABASE_URL": "postgres://x@localhost/db", "JWT_SECRET": secret, "GC_HEADROOM_MB": bad}))
		if err == nil || !strings.Contains(err.Error(), `GC_HEADROOM_MB must be an integer from 0 to 1048576, got "`+bad+`"`) {
			t.Errorf("GC_HEADROOM_MB=%s: %v", bad, err)
		}
	}
	_, err := loadConfig(env(map[string]string{"DATABASE_URL": "postgres://x@localhost/db", "JWT_SECRET": secret, "GC_HEADROOM_MB": "64", "GOGC": "100"}))
	if err == nil || !strings.Contains(err.Error(), "set GOGC or GC_HEADROOM_MB, not both") {
		t.Errorf("GOGC and GC_HEADROOM_MB both set: %v", err)
	}
}

func gogc() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// While the server runs, the collector waits for its headroom, which no
// test process's live heap comes near at 1 GiB; GOGC is the test's own
// again once it stops. It runs alone, not in parallel: GOGC is the
// process's, and every other test's server tunes it too while it runs.
func TestRunTunesTheCollector(t *testing.T) {
	before := gogc()
	base, stop, _ := mustRun(t, map[string]string{"GC_HEADROOM_MB": "1024"})
	waitHealthy(t, base)
	if got := gogc(); got <= 100 {
		t.Errorf("GOGC while serving with 1 GiB of headroom = %d, want more than 100", got)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if got := gogc(); got != before {
		t.Errorf("GOGC after the server stopped = %d, want the %d it was", got, before)
	}
}
